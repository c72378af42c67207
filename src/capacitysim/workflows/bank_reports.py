"""Reports of the sewer flow credit bank: the annual municipal user report (A-D), balances, journal.

Each table is a list of rows (dicts with the same keys): :func:`annual_report` builds the document;
:mod:`capacitysim.report.bank` writes it as one CSV per table and one self-contained HTML file. The report prints the journal's head hash (:meth:`capacitysim.bank.Ledger.head`) to be kept outside
the bank, for ``capacitysim bank verify --expect-head``.

References
----------
Binghamton-Johnson City I/I Offset Program, records section: municipal users submit at least
annually A (prioritized list of identified/available I/I remediation projects), B (projects completed,
work performed and estimated I/I removed, with the certification letter), C ("List of applications for
proposed new or modified sewer connections and sewer extensions": every application, with or without
credits, whatever its status, so also those of 2,500 gpd or less, which need no offset, and those
returned or defaulted), D ("List of new or modified sewer connections and sewer extensions completed
since January 1, 2013": every one, not only those that used credits); records kept at least three
years. The report also lists the lots (provenance of credits), what awaits the bank administrator's
sign-off, and the program policies in force (each a program interpretation to confirm with the bank
administrator, never the rule).
"""

from __future__ import annotations

import json

from capacitysim.bank import Ledger
from capacitysim.errors import InputError
from capacitysim.rules.ii_offset import PROGRAM_EFFECTIVE_DATE

#: Titles of the annual report parts (records section A-D) and of the other tables.
TITLES = {
    "a_available_projects": ("A. Prioritized list of identified/available I/I remediation projects, in the public "
                             "sewage collection systems, then on private property"),
    "b_completed_projects": ("B. I/I remediation projects completed, public sewage collection systems, then private "
                             "property, with estimated I/I removed, the PE's quantification and the certification letter"),
    "c_applications": ("C. Applications for new or modified sewer connections and sewer extensions (all, with or "
                       "without credits, whatever their status)"),
    "d_connections_completed": f"D. New or modified sewer connections and extensions completed since {PROGRAM_EFFECTIVE_DATE:%B %-d, %Y}",
    "submissions": ("Each municipal user's records: submissions to the bank administrator ('on at least an annual "
                    "basis') and the next due date (program policy annual_report_due)"),
    "balances": "Flow credit balances by basin and subaccount",
    "lots": "Lots: credits by originating project and its jurisdiction (provenance, credit bank section D)",
    "pending_sign_off": "Deposits, withdrawals and transfers awaiting the bank administrator's sign-off",
    "policies": "Program policies in force (program interpretation — confirm with the bank administrator)",
    "journal": "Journal (append-only record of every bank transaction)",
}

#: Columns of every table, so an empty table still writes its header.
COLUMNS = {
    "a_available_projects": ["property", "priority", "project", "basin", "jurisdiction", "description", "estimated_gpd"],
    "b_completed_projects": ["property", "project", "basin", "jurisdiction", "description", "certified_on", "ii_removed_gpd",
                             "quantified_gpd", "engineer", "pe_license", "quantification_sha256", "certification_letter",
                             "letter_sha256", "letter_on", "flag"],
    "c_applications": ["application", "type", "basin", "principal_municipal_user", "credit_holder", "description",
                       "peak_flow_gpd", "offset_required", "credits_reserved_gpd", "status", "received_on",
                       "application_approval", "capacity_ref", "capacity_sha256", "spdes_ref", "spdes_sha256", "spdes_as_of",
                       "sign_off", "signed_off_by", "signed_off_at", "note_issued_on", "co_due_on", "closed_at"],
    "d_connections_completed": ["application", "type", "basin", "principal_municipal_user", "credit_holder", "description",
                                "peak_flow_gpd", "credits_used_gpd", "note_issued_on", "co_issued_on"],
    "submissions": ["municipal_user", "period", "due_on", "submitted_on", "late", "document", "sha256", "next_due_on",
                    "status"],
    "balances": ["basin", "owner", "municipal", "balance_gpd", "reserved_gpd", "pending_in_gpd", "pending_out_gpd"],
    "lots": ["lot", "basin", "owner", "gpd", "project", "project_basin", "jurisdiction", "deposited_on", "source_lot",
             "origin", "note"],
    "pending_sign_off": ["txn", "kind", "ref", "amount_gpd", "basin", "owner", "recorded_by", "recorded_at", "missing"],
    "policies": ["name", "value", "text", "alternative"],
    "journal": ["seq", "txn", "at", "actor", "action", "basin", "owner", "delta_gpd", "balance_after", "ref", "reason",
                "documents", "detail"],
}


#: Parts A and B list projects "in the municipal users' public sewage collection systems and private property"
#: (records section): public first, then private, then those recorded without saying (older banks).
_PROPERTY_ORDER = {"public": 0, "private": 1}
NOT_STATED = "not stated"


def _part_b_flag(p: dict) -> str:
    """What part B's reader must see about a completed project: the certification letter not furnished
    (records section B: "If not previously furnished, provide completed certification letter"), no PE
    quantification cited (a deposit recorded before schema 6)."""
    flags = []
    if not p["letter_ref"]:
        flags.append("certification letter (Appendix A) not furnished")
    if not p["quantification_sha256"]:
        flags.append("no PE quantification cited (deposited before the bank required it)")
    return "; ".join(flags)


def annual_report(ledger: Ledger, municipal_user: str | None = None, year: int | None = None) -> dict:
    """The tables of the annual municipal user report, plus balances and the journal.

    Parameters
    ----------
    ledger : Ledger
    municipal_user : str, optional
        Restrict A-D to one municipal user (jurisdiction of projects, principal municipal user of
        applications); default all.
    year : int, optional
        Restrict B (projects completed) and the journal to one calendar year; C to the applications
        received that year and those received earlier still open (received, pending or approved);
        D stays cumulative as the records section words it ("completed since January 1, 2013"), up
        to the end of that year; A, balances, lots and what awaits sign-off are as of now.

    Returns
    -------
    dict
        ``municipal_user``, ``year``, ``verify``, ``head``, ``policies`` (every program policy in
        force, :data:`capacitysim.bank.POLICIES`) and ``tables`` (:data:`COLUMNS`).
    """
    if municipal_user is not None:
        known = {e["name"]: e for e in ledger.entities()}
        if municipal_user not in known:
            raise InputError(f"unknown entity {municipal_user!r}")
        if not known[municipal_user]["municipal"]:
            raise InputError(f"{municipal_user!r} is not a municipal user")

    def mine(name):
        return municipal_user is None or name == municipal_user

    def in_year(date_text):
        return year is None or (date_text is not None and str(date_text)[:4] == str(year))

    def by_end_of_year(date_text):
        return year is None or (date_text is not None and str(date_text)[:4] <= str(year))

    projects = ledger.projects()
    withdrawals = ledger.withdrawals()
    a = [{"property": p["property"] or NOT_STATED, "priority": p["priority"], "project": p["ref"], "basin": p["basin"],
          "jurisdiction": p["jurisdiction"], "description": p["description"], "estimated_gpd": p["estimated_gpd"]}
         for p in projects if p["status"] == "identified" and mine(p["jurisdiction"])]
    a.sort(key=lambda r: (_PROPERTY_ORDER.get(r["property"], 2), r["priority"] is None, r["priority"] or 0, r["project"]))
    b = [{"property": p["property"] or NOT_STATED, "project": p["ref"], "basin": p["basin"], "jurisdiction": p["jurisdiction"],
          "description": p["description"], "certified_on": p["certified_on"], "ii_removed_gpd": p["certified_gpd"],
          "quantified_gpd": p["quantified_gpd"], "engineer": p["pe_name"] or "", "pe_license": p["pe_license"] or "",
          "quantification_sha256": p["quantification_sha256"] or "",
          "certification_letter": p["letter_ref"] or p["certificate"] or "", "letter_sha256": p["letter_sha256"] or "",
          "letter_on": p["letter_on"] or "", "flag": _part_b_flag(p)}
         for p in projects if p["status"] == "certified" and mine(p["jurisdiction"]) and in_year(p["certified_on"])]
    b.sort(key=lambda r: (_PROPERTY_ORDER.get(r["property"], 2), str(r["certified_on"]), r["project"]))
    submissions = []
    for u in ledger.annual_reports():
        if not mine(u["municipal_user"]):
            continue
        for x in u["submissions"] or [{}]:
            submissions.append({"municipal_user": u["municipal_user"], "period": x.get("period", ""),
                                "due_on": x.get("due_on", ""), "submitted_on": x.get("submitted_on", "none yet"),
                                "late": x.get("late", ""), "document": x.get("document") or "",
                                "sha256": x.get("sha256") or "", "next_due_on": u["next_due_on"], "status": u["status"]})
    applications = ledger.applications()
    open_statuses = ("received", "pending", "approved")

    def in_c(status, received_on):
        return year is None or (received_on is not None and str(received_on)[:4] == str(year)) or status in open_statuses

    c = [{"application": w["application"], "type": w["type"] or "", "basin": w["basin"],
          "principal_municipal_user": w["principal"], "credit_holder": w["owner"], "description": w["description"],
          "peak_flow_gpd": w["peak_flow_gpd"], "offset_required": True, "credits_reserved_gpd": w["amount_gpd"],
          "status": w["status"], "received_on": w["requested_on"] or "", "application_approval": w["application_approval"] or "",
          "capacity_ref": w["capacity_ref"] or "", "capacity_sha256": w["capacity_sha256"] or "",
          "spdes_ref": w["spdes_ref"] or "", "spdes_sha256": w["spdes_sha256"] or "", "spdes_as_of": w["spdes_as_of"] or "",
          "sign_off": w["signoff_status"], "signed_off_by": w["signed_off_by"] or "", "signed_off_at": w["signed_off_at"] or "",
          "note_issued_on": w["note_issued_on"] or "", "co_due_on": w["co_due_on"] or "", "closed_at": w["closed_at"] or ""}
         for w in withdrawals if mine(w["principal"]) and in_c(w["status"], w["requested_on"])]
    c += [{"application": a["application"], "type": a["type"], "basin": a["basin"] or "",
           "principal_municipal_user": a["principal"], "credit_holder": "", "description": a["description"],
           "peak_flow_gpd": a["peak_flow_gpd"], "offset_required": a["offset_required"], "credits_reserved_gpd": 0,
           "status": a["status"], "received_on": a["received_on"], "application_approval": a["application_approval"] or "",
           "capacity_ref": "", "capacity_sha256": "", "spdes_ref": "", "spdes_sha256": "", "spdes_as_of": "",
           "sign_off": "not needed (no credits)", "signed_off_by": "", "signed_off_at": "", "note_issued_on": "",
           "co_due_on": "", "closed_at": a["closed_at"] or ""}
          for a in applications if mine(a["principal"]) and in_c(a["status"], a["received_on"])]
    c.sort(key=lambda r: (str(r["received_on"]), r["application"]))
    since = PROGRAM_EFFECTIVE_DATE.isoformat()
    d = [{"application": w["application"], "type": w["type"] or "", "basin": w["basin"],
          "principal_municipal_user": w["principal"], "credit_holder": w["owner"], "description": w["description"],
          "peak_flow_gpd": w["peak_flow_gpd"], "credits_used_gpd": w["amount_gpd"], "note_issued_on": w["note_issued_on"],
          "co_issued_on": w["co_issued_on"]}
         for w in withdrawals if w["status"] == "completed" and mine(w["principal"])
         and w["co_issued_on"] >= since and by_end_of_year(w["co_issued_on"])]
    d += [{"application": a["application"], "type": a["type"], "basin": a["basin"] or "",
           "principal_municipal_user": a["principal"], "credit_holder": "", "description": a["description"],
           "peak_flow_gpd": a["peak_flow_gpd"], "credits_used_gpd": 0, "note_issued_on": "", "co_issued_on": a["completed_on"]}
          for a in applications if a["status"] == "completed" and mine(a["principal"])
          and a["completed_on"] >= since and by_end_of_year(a["completed_on"])]
    d.sort(key=lambda r: (str(r["co_issued_on"]), r["application"]))
    pending = [dict(p, missing="; ".join(p.get("missing", []))) for p in ledger.pending()]
    pols = ledger.policies()
    policy_rows = [{"name": p["name"], "value": p["value"], "text": p["text"],
                    "alternative": f"{p['alternative']['value']}: {p['alternative']['text']}" if p.get("alternative") else ""}
                   for p in pols]
    journal = [flat_journal_row(r) for r in ledger.journal() if in_year(r["at"])]
    return {
        "municipal_user": municipal_user,
        "year": year,
        "verify": ledger.verify(),
        "head": ledger.head(),
        "policies": pols,
        "tables": {
            "a_available_projects": a,
            "b_completed_projects": b,
            "c_applications": c,
            "d_connections_completed": d,
            "submissions": submissions,
            "balances": ledger.balances(),
            "lots": ledger.lots(),
            "pending_sign_off": pending,
            "policies": policy_rows,
            "journal": journal,
        },
    }


def flat_journal_row(row: dict) -> dict:
    """A journal row with ``documents`` joined by ``"; "`` and ``detail`` as sorted JSON text (a table cell).

    Tolerates a row edited outside capacitysim (documents or detail not the JSON it writes).
    """
    docs = row["documents"]
    docs = "; ".join(str(d) for d in docs) if isinstance(docs, list) else ("" if docs is None else str(docs))
    try:
        detail = json.dumps(row["detail"], sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        detail = str(row["detail"])
    return dict(row, documents=docs, detail=detail)
