"""The words of the sewer flow credit bank that a flow credit note and a balance statement carry.

Source: Binghamton-Johnson City Joint Sewage Board, I/I Offset Program (rules and regulations;
``../shared/regulations/binghamton-jc-ii-offset-program.txt``): definitions (BOARD, FLOW CREDIT NOTE,
DEFAULT) and the sewer flow credit bank, sections A, F, G, H and I. Each statement is quoted from the
program, with its citation; where the program is silent, the statement names the program policy the
bank applies (:mod:`capacitysim.bank.ledger`, ``POLICIES``).
"""

from __future__ import annotations

#: Definitions, BOARD or JOINT SEWAGE BOARD.
BOARD = "Binghamton-Johnson City Joint Sewage Board"
#: The program the notes are issued under.
PROGRAM = "Binghamton-Johnson City I/I Offset Program"

#: Credit bank section G, last sentence (quoted).
SECTION_G = ("While in an \"on deposit\" status in the bank, flow credits shall have no monetary value, accrue no "
             "interest, and may not be assigned or pledged as collateral.")
SECTION_G_CITATION = "I/I Offset Program, sewer flow credit bank, section G"

#: Credit bank section I (quoted).
SECTION_I = ("The existence of flow credits \"on deposit\" or posted to the account or subaccount of any entity creates "
             "no \"vested rights\" or entitlement whatsoever to make a new or modified sewer connection until all "
             "requirements and conditions applicable at the proposed new or modified sewer connection site are "
             "satisfied in the judgment and discretion of the governmental entity having jurisdiction thereof.")
SECTION_I_CITATION = "I/I Offset Program, sewer flow credit bank, section I"

#: Definitions, FLOW CREDIT NOTE (quoted).
FLOW_CREDIT_NOTE = ("An agreement between the Board and the applicant that flow credits shall be made available to the "
                    "applicant, developer, or a municipal user under specific terms.")
#: Definitions, DEFAULT (quoted).
DEFAULT = ("If a certificate of occupancy has not been issued within one year from the time of issuance of the flow "
           "credit note or, if later, within the additional time allowed for issuance of the certificate of occupancy "
           "when extended as provided herein.")


def note_terms(*, amount_gpd: int, peak_flow_gpd: float, offset_ratio: float, basin: str, node: str,
               application: str, co_due_on: str, default_policy_text: str) -> list[dict]:
    """The terms of a flow credit note, each ``{"heading", "text", "citation"}``.

    Parameters
    ----------
    amount_gpd : int
        Credits withdrawn [gpd].
    peak_flow_gpd : float
        The connection's estimated peak sewage flow rate increase [gpd].
    offset_ratio : float
        Credits per gpd of peak flow [-] (section F: one to one).
    basin, node, application : str
        Where the credits are used and for what.
    co_due_on : str
        The date the certificate of occupancy falls due (DEFAULT: one year after the note) [YYYY-MM-DD].
    default_policy_text : str
        The text of program policy ``default_credits`` (what default does; the program does not say).

    References
    ----------
    I/I Offset Program: definitions FLOW CREDIT NOTE, DEFAULT; sewer flow credit bank sections A, F, G, H, I.
    """
    return [
        {"heading": "Flow credits made available",
         "text": (f"The Board makes {amount_gpd:,} gpd of flow credits available for application {application}, a new "
                  f"or modified sewer connection at model node {node}: {offset_ratio:g} x its estimated peak sewage "
                  f"flow rate increase of {peak_flow_gpd:,.0f} gpd. {FLOW_CREDIT_NOTE}"),
         "citation": "definitions, FLOW CREDIT NOTE; section F (one-to-one offset of the estimated peak sewage flow rate)"},
        {"heading": "Basin",
         "text": (f"The credits are used only in the I/I remediation basin {basin}, where they were generated "
                  "(\"Flow credits shall only be used in the specific I/I remediation basin in which they were "
                  "generated\")."),
         "citation": "section A"},
        {"heading": "Conditions of use",
         "text": ("Withdrawal and use are subject to the bank administrator's approval on the applicant's demonstration "
                  "of adequate hydraulic and treatment capacity, and to approval of the connection under the new or "
                  "modified sewer connection application program; the evidence is listed above with its SHA-256."),
         "citation": "section H(1) and H(2)"},
        {"heading": "Certificate of occupancy due",
         "text": (f"A certificate of occupancy is due by {co_due_on}, one year from the issuance of this note, or by the "
                  f"later date of an extension granted as the program provides. DEFAULT: \"{DEFAULT}\""),
         "citation": "definitions, DEFAULT"},
        {"heading": "What default does",
         "text": default_policy_text,
         "citation": "program policy default_credits (the program defines DEFAULT but not its consequence)"},
        {"heading": "Section G: no monetary value", "text": SECTION_G, "citation": SECTION_G_CITATION},
        {"heading": "Section I: no vested rights", "text": SECTION_I, "citation": SECTION_I_CITATION},
    ]
