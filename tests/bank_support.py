"""Helpers of the credit bank tests: a PE's quantification a deposit cites.

Import it as ``from tests.bank_support import quantification`` (pytest runs from the project root with
``--import-mode=importlib``, like ``tests.report.report_text``; the name ``bank_support`` alone is
tests/service/bank_support.py).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path


def quantification(folder, project: str, gpd: float, *, owner: str | None = None, basin: str | None = None,
                   engineer: str = "Pat Engineer, PE", licence: str = "012345") -> str:
    """Write a minimal valid quantification document of ``project`` into ``folder``; returns its path (str).

    The credit bank requires every deposit to cite the project's quantification: the JSON of
    ``capacitysim credits quantify PROJECT.toml --json`` (the I/I remediation engineering report of a NYS
    licensed PE; :func:`capacitysim.bank.refs.quantification_facts`). This document stands in for a PE's
    quantification so that tests about other things (balances, sign-off, withdrawals, reports...) can
    deposit; tests about the quantification itself run the real ``credits quantify``.

    It has the shape of ``credits quantify --json``: ``project`` (``id``, ``name``, ``engineer``,
    ``pe_license``, ``pe_license_number`` and, only when given, ``municipal_user`` = ``owner`` and
    ``basin``), ``kind``, ``total_gpd`` = ``gpd`` [gpd] with one qualifying item of that figure (consistent,
    as the bank checks), ``inflow_credit_basis``, ``items`` and ``policies``.
    ``owner`` and ``basin`` are left out by default: the bank checks them only when the document names
    them, so a test depositing for another owner or basin still fails for the reason it tests.

    Parameters
    ----------
    folder : str or Path
        Where to write (created if missing); the file gets a unique name, so several deposits of the
        same project (a refused duplicate, say) can each cite one.
    project : str
        The project id quantified (the deposit's project).
    gpd : float
        The total quantified [gpd]: at least the deposit's gpd.
    owner, basin : str, optional
        The municipal user and basin the document names.
    engineer, licence : str
        The PE's name and six-digit NYS licence number.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    meta = {"id": project, "name": f"Project {project}", "engineer": engineer, "pe_license": f"NY {licence}",
            "pe_license_number": licence}
    if owner is not None:
        meta["municipal_user"] = owner
    if basin is not None:
        meta["basin"] = basin
    doc = {"kind": "ii-quantification", "project": meta, "total_gpd": gpd, "inflow_credit_basis": "volume",
           "total_gpd_on_volume": gpd, "items": [{"type": "case_by_case", "gpd": gpd, "qualifies": True}],
           "policies": []}
    path = folder / f"quantification-{uuid.uuid4().hex[:12]}.json"
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return str(path)


def evidence(folder, gpd: float, as_of: str, node: str = "MH-1") -> tuple[str, str]:
    """Write a passing capacity demonstration connecting ``gpd`` at ``node`` and a SPDES check as of ``as_of``
    adding ``gpd`` (the smallest JSON documents the bank reads, :mod:`capacitysim.bank.refs`), under unique
    names in ``folder``; returns their paths (capacity, SPDES). For tests about the bank's dates and
    records, not about the evidence (those run ``capacity`` and ``spdes check``)."""
    k = uuid.uuid4().hex[:8]
    folder = Path(folder)
    cap, spd = folder / f"cap-{k}.json", folder / f"spdes-{k}.json"
    cap.write_text(json.dumps({"kind": "capacity-demonstration", "verdict": "pass", "run": k,
                               "scenario": {"connections": [{"node": node, "flow_gpd": gpd}]}}))
    spd.write_text(json.dumps({"kind": "spdes-check", "run": k, "as_of": as_of, "added_gpd": gpd,
                               "connection_prohibited": False}))
    return str(cap), str(spd)


def funded_bank(path, gpd: float, certified_on: str, *, administrators=("Ann Admin", "Bob Checker"),
                owner: str = "Village of Johnson City", basin: str = "JC CSO 4", project: str = "P-1"):
    """Create a bank at ``path`` with two administrators, ``owner`` (municipal) and ``basin``, and ``gpd`` of
    ``project`` certified on ``certified_on``: recorded by the first administrator, signed off that day by the
    second (program policy signoff_separation). Returns ``path``."""
    from capacitysim.bank import Ledger

    first, second = administrators
    path = Path(path)
    with Ledger(path, create=True, actor=first, administrator=first) as led:
        led.add_administrator(second)
        led.add_entity(owner, municipal=True)
        led.add_basin(basin)
        txn = led.deposit(basin, owner, gpd, project, quantification=quantification(path.parent, project, gpd),
                          certified_on=certified_on)["txn"]
    with Ledger(path, actor=second) as led:
        led.sign_off(txn, on=certified_on)
    return path
