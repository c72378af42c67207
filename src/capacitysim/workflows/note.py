"""The flow credit note of a signed-off withdrawal, as the dict :mod:`capacitysim.report.note` renders.

Definitions, FLOW CREDIT NOTE: "An agreement between the Board and the applicant that flow credits shall
be made available to the applicant, developer, or a municipal user under specific terms." The bank
administrator's sign-off of a withdrawal issues it (:meth:`capacitysim.bank.Ledger.sign_off`); this
module reads the public record of the bank (the withdrawal, its journal rows and the journal head) and
the program's words (:mod:`capacitysim.rules.credit_bank`). Nothing here decides anything: the note
shows what the ledger holds, so the same bank gives the same note (and the same bytes once rendered).
"""

from __future__ import annotations

import re
from pathlib import Path

from capacitysim.bank import Ledger
from capacitysim.bank.ledger import POLICIES
from capacitysim.errors import InputError, RefusedError
from capacitysim.rules import credit_bank
from capacitysim.version import __version__

#: The note's file name stem for an application id: letters, digits, ``.-_`` (anything else becomes ``_``).
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def note_stem(application: str) -> str:
    """A safe file name stem for ``application``'s note (never a path, never hidden), one per application:
    where the id had to change (characters outside ``A-Za-z0-9._-``, or longer than 80), the first 10 hex
    digits of its SHA-256 follow, so ``A/1`` and ``A_1``, ``Ä-1`` and ``Ö-1`` get different files."""
    import hashlib

    stem = _UNSAFE.sub("_", application).strip("._") or "note"
    if stem != application or len(stem) > 80:
        stem = f"{stem[:80]}-{hashlib.sha256(application.encode('utf-8')).hexdigest()[:10]}"
    return f"flow-credit-note-{stem}"


def flow_credit_note(ledger: Ledger, application: str) -> dict:
    """The flow credit note of ``application`` (a withdrawal signed off: approved, completed or defaulted).

    Returns
    -------
    dict
        The fields of :data:`capacitysim.report.note.FIELDS`: the Board, the applicant (recorded on the
        withdrawal, else the credit holder), the credit holder, the principal municipal user, the affected
        owner; the peak [gpd], average [gpd], offset ratio and credits [gpd]; basin and node; the lots the
        credits came from; the evidence with SHA-256 (capacity demonstration, SPDES check, section H(2)
        approval); the dates (issued, certificate of occupancy due, extensions); the terms
        (:func:`capacitysim.rules.credit_bank.note_terms`: section F, A, H, DEFAULT and what default does,
        section G, section I); the sign-off (who, the journal row's hash) and the bank's journal head right
        after the sign-off.

    Raises
    ------
    InputError
        Unknown application.
    RefusedError
        The withdrawal was never signed off (no note was issued).
    """
    w = ledger.withdrawal(application)
    if not w["note_issued_on"]:
        raise RefusedError(f"application {w['application']!r} is {w['status']}: no flow credit note was issued (a note "
                           "is issued when the bank administrator signs off the withdrawal)")
    rows = ledger.journal(ref=w["application"])
    taken = next((r for r in rows if r["action"] == "withdraw"), None)
    signed = next((r for r in rows if r["action"] == "sign-off"
                   and isinstance(r["detail"], dict) and r["detail"].get("kind") == "withdrawal"), None)
    if signed is None:
        raise InputError(f"application {w['application']!r}: the journal holds no sign-off row of its note (a bank "
                         "migrated from schema 2, or purged): the note cannot be reproduced from the record")
    lots = (taken["detail"].get("lots") if taken and isinstance(taken["detail"], dict) else None) or []
    extensions = [{"until": r["detail"].get("new_due_on"), "document": "; ".join(map(str, r["documents"] or [])),
                   "granted_on": r["detail"].get("granted_on")}
                  for r in rows if r["action"] == "extend" and isinstance(r["detail"], dict)]
    evidence = [
        {"kind": "capacity demonstration (section H(1))", "ref": w["capacity_ref"], "sha256": w["capacity_sha256"],
         "as_of": None},
        {"kind": "SPDES / treatment check (section H(1))", "ref": w["spdes_ref"], "sha256": w["spdes_sha256"],
         "as_of": w["spdes_as_of"]},
        {"kind": "connection approval (section H(2))", "ref": w["application_approval"], "sha256": None, "as_of": None},
    ]
    first_due = (signed["detail"].get("co_due_on") if isinstance(signed["detail"], dict) else None) or w["co_due_on"]
    terms = credit_bank.note_terms(amount_gpd=int(w["amount_gpd"]), peak_flow_gpd=float(w["peak_flow_gpd"]),
                                   offset_ratio=float(w["offset_ratio"]), basin=w["basin"], node=w["node"] or "",
                                   application=w["application"], co_due_on=first_due,
                                   default_policy_text=POLICIES["default_credits"]["text"])
    return {
        "title": "Flow credit note", "program": credit_bank.PROGRAM, "board": credit_bank.BOARD,
        "application": w["application"], "type": w["type"],
        "applicant": w.get("applicant") or w["owner"], "holder": w["owner"],
        "principal_municipal_user": w["principal"], "affected_owner": w.get("affected_owner"),
        "basin": w["basin"], "node": w["node"],
        "peak_flow_gpd": float(w["peak_flow_gpd"]), "average_gpd": w["average_gpd"],
        "offset_ratio": float(w["offset_ratio"]), "amount_gpd": int(w["amount_gpd"]),
        "lots": [{"project": x.get("project"), "gpd": int(x.get("gpd") or 0)} for x in lots],
        "evidence": evidence,
        "issued_on": w["note_issued_on"], "co_due_on": first_due, "extensions": extensions,
        "signed_off_by": w["signed_off_by"], "recorded_by": w["recorded_by"], "signoff_txn": w["signoff_txn"],
        "journal_hash": signed["hash"],
        "bank": {"path": Path(str(ledger.path)).name,
                 "head": ledger.journal(txn=signed["txn"])[-1]["hash"]},
        "terms": terms, "capacitysim_version": __version__,
    }
