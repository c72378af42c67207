"""Reports of the sewer flow credit bank: the annual municipal user report (A-D), balances, journal.

Each table is a list of rows (dicts with the same keys): :func:`annual_report` builds the document;
:mod:`capacitysim.report.bank` writes it as one CSV per table and one self-contained HTML file. The report prints the journal's head hash (:meth:`capacitysim.bank.Ledger.head`) to be kept outside
the bank, for ``capacitysim bank verify --expect-head``.

References
----------
Binghamton-Johnson City I/I Offset Program, records section: municipal users submit at least
annually A (prioritized list of identified/available I/I remediation projects), B (projects completed,
work performed and estimated I/I removed, with the certification letter), C (applications for new or
modified connections and sewer extensions), D (connections and extensions completed since
January 1, 2013); records kept at least three years.
"""

from __future__ import annotations

import json
from pathlib import Path

from capacitysim.bank import Ledger
from capacitysim.errors import InputError
from capacitysim.rules.ii_offset import PROGRAM_EFFECTIVE_DATE

#: Titles of the annual report parts (records section A-D) and of the other tables.
TITLES = {
    "a_available_projects": "A. Prioritized list of identified/available I/I remediation projects",
    "b_completed_projects": "B. I/I remediation projects completed, with estimated I/I removed",
    "c_applications": "C. Applications for new or modified sewer connections and sewer extensions (pending)",
    "d_connections_completed": f"D. New or modified sewer connections and extensions completed since {PROGRAM_EFFECTIVE_DATE:%B %-d, %Y}",
    "balances": "Flow credit balances by basin and subaccount",
    "journal": "Journal (append-only record of every bank transaction)",
}

#: Columns of every table, so an empty table still writes its header.
COLUMNS = {
    "a_available_projects": ["priority", "project", "basin", "jurisdiction", "description", "estimated_gpd"],
    "b_completed_projects": ["project", "basin", "jurisdiction", "description", "certified_on", "ii_removed_gpd",
                             "certification_letter"],
    "c_applications": ["application", "basin", "principal_municipal_user", "credit_holder", "description", "peak_flow_gpd",
                       "credits_reserved_gpd", "status", "capacity_ref", "capacity_sha256", "spdes_ref", "spdes_sha256",
                       "note_issued_on", "co_due_on"],
    "d_connections_completed": ["application", "basin", "principal_municipal_user", "credit_holder", "description",
                                "peak_flow_gpd", "credits_used_gpd", "note_issued_on", "co_issued_on"],
    "balances": ["basin", "owner", "municipal", "balance_gpd", "reserved_gpd"],
    "journal": ["seq", "txn", "at", "actor", "action", "basin", "owner", "delta_gpd", "balance_after", "ref", "reason",
                "documents", "detail"],
}


def annual_report(ledger: Ledger, municipal_user: str | None = None, year: int | None = None) -> dict:
    """The tables of the annual municipal user report, plus balances and the journal.

    Parameters
    ----------
    ledger : Ledger
    municipal_user : str, optional
        Restrict A-D to one municipal user (jurisdiction of projects, principal municipal user of
        applications); default all.
    year : int, optional
        Restrict B (projects completed) and the journal to one calendar year; D stays cumulative as
        the records section words it ("completed since January 1, 2013"), up to the end of that
        year; A, C and balances are as of now.
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
    a = [{"priority": p["priority"], "project": p["ref"], "basin": p["basin"], "jurisdiction": p["jurisdiction"],
          "description": p["description"], "estimated_gpd": p["estimated_gpd"]}
         for p in projects if p["status"] == "identified" and mine(p["jurisdiction"])]
    a.sort(key=lambda r: (r["priority"] is None, r["priority"] or 0, r["project"]))
    b = [{"project": p["ref"], "basin": p["basin"], "jurisdiction": p["jurisdiction"], "description": p["description"],
          "certified_on": p["certified_on"], "ii_removed_gpd": p["certified_gpd"], "certification_letter": p["certificate"] or ""}
         for p in projects if p["status"] == "certified" and mine(p["jurisdiction"]) and in_year(p["certified_on"])]
    c = [{"application": w["application"], "basin": w["basin"], "principal_municipal_user": w["principal"],
          "credit_holder": w["owner"], "description": w["description"], "peak_flow_gpd": w["peak_flow_gpd"],
          "credits_reserved_gpd": w["amount_gpd"], "status": w["status"], "capacity_ref": w["capacity_ref"] or "",
          "capacity_sha256": w["capacity_sha256"] or "", "spdes_ref": w["spdes_ref"] or "", "spdes_sha256": w["spdes_sha256"] or "", "note_issued_on": w["note_issued_on"] or "", "co_due_on": w["co_due_on"] or ""}
         for w in withdrawals if w["status"] in ("pending", "approved") and mine(w["principal"])]
    d = [{"application": w["application"], "basin": w["basin"], "principal_municipal_user": w["principal"],
          "credit_holder": w["owner"], "description": w["description"], "peak_flow_gpd": w["peak_flow_gpd"],
          "credits_used_gpd": w["amount_gpd"], "note_issued_on": w["note_issued_on"], "co_issued_on": w["co_issued_on"]}
         for w in withdrawals if w["status"] == "completed" and mine(w["principal"])
         and w["co_issued_on"] >= PROGRAM_EFFECTIVE_DATE.isoformat() and by_end_of_year(w["co_issued_on"])]
    journal = [flat_journal_row(r) for r in ledger.journal() if in_year(r["at"])]
    return {
        "municipal_user": municipal_user,
        "year": year,
        "verify": ledger.verify(),
        "head": ledger.head(),
        "tables": {
            "a_available_projects": a,
            "b_completed_projects": b,
            "c_applications": c,
            "d_connections_completed": d,
            "balances": ledger.balances(),
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
