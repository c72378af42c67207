"""Treatment capacity of a plant: its flow record against its SPDES flow limit.

For a plant that discharges within the NYC watershed the check is 15 RCNY § 18-37(b): a new sewer
connection or extension is prohibited after a SPDES flow parameter violation in the prior twelve
months, or when the added flow will cause one. For any other plant (Binghamton's plants discharge to
the Susquehanna) § 18-37(b) does not apply and the check is the permitted-flow headroom under the
plant's own SPDES permit (named policy ``permitted_flow_headroom``); either way the result says whether
treatment capacity is shown (``treatment_capacity_shown``, the credit bank's section H(1) evidence).

Composes the readers (:mod:`capacitysim.io.plant_flows`) and the pure rule (:mod:`capacitysim.rules.spdes`)
into one result document (:meth:`SpdesCheck.to_dict`, with its :class:`~capacitysim.rules.verdict.Check`
records, the § 18-37(c)(1)-(3), (e), (j)(2) conditions, the named policies, the warnings and the
submittal identification); the report is :mod:`capacitysim.report.spdes`. Also holds the generator of
the bundled sample record (``models/plants/``).

The as-of date (the end of "the prior twelve months") is ``--as-of`` when given, else the application
date, else today (policy ``as_of_default``); a record ending more than
:data:`~capacitysim.rules.spdes.RECORD_MAX_AGE_DAYS` (45) days before it is warned about, or refused
with ``strict_record_age`` (policy ``record_max_age_days``).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path, PurePath

import numpy as np
import pandas as pd

from capacitysim.errors import InputError, RefusedError
from capacitysim.io.files import bundled_dir, path_exists
from capacitysim.io.plant_flows import (
    MAX_PLAUSIBLE_MGD,
    DmrRecord,
    FlowRecord,
    PlantFile,
    file_sha256,
    read_echo_dmr,
    read_flow_csv,
    read_plant_file,
)
from capacitysim.io.submittal import Submittal
from capacitysim.rules import spdes as rule
from capacitysim.rules.verdict import Check, verdict_from_checks
from capacitysim.units import GPD_PER_MGD

#: What each basis means, for the outputs.
BASIS_TEXT = {
    "month": "calendar-month average of the daily flows (the DMR monthly average)",
    "30day": "30-day rolling average of the daily flows, one period ending on each day",
    "12month": "12-month rolling average: the mean of a month's average and the eleven before it",
}

_WINDOW_BODY = (
    "when its end date falls after the date exactly 12 months before the as-of date and on or before "
    "the as-of date; a period ending exactly 12 months before does not count, one ending a day later does, and a "
    "period still running on the as-of date does not count. A month-end as-of date maps to the month end 12 months "
    "earlier (leap years)."
)
WINDOW_TEXT = "A period counts toward 'the prior twelve months' (15 RCNY § 18-37(b)) " + _WINDOW_BODY
#: The look-back of a non-watershed plant's headroom (no § 18-37(b) there: named policy).
WINDOW_TEXT_PERMIT = (
    f"A period counts toward the twelve-month look-back of the headroom (policy {rule.POLICY_PERMITTED_FLOW_HEADROOM}) "
    + _WINDOW_BODY
)
INCOMPLETE_TEXT = (
    "A period with missing days is averaged over the days present and flagged incomplete; missing days are "
    "never filled."
)
ADDED_TEXT = (
    "The added flow is the average daily flow of the new connection(s) [gpd]; added to every day, it raises "
    "each period's average by the same amount on every basis."
)
HEADROOM_TEXT = (
    "Headroom = limit - (highest period average in the look-back window + committed flow + added flow), in gpd; "
    "negative means the limit is exceeded by that much."
)
COMMITTED_TEXT = (
    "The committed flow is the average daily flow the credit bank has committed to the plant (approved or reserved "
    "connections not yet connected, and recorded applications, of every basin registered as draining to it), not "
    "yet in its record; it is part of the baseline: added to every day with the added flow on top, it lowers the "
    "headroom before the added flow by the same amount. The record's own violations are not changed by it."
)
VIOLATION_TEXT = (
    "A violation is a period average above the limit; a period exactly at the limit is not a violation. "
    "(The copy of chapter 18 used does not define 'SPDES flow parameter violation'; this is capacitysim's reading.)"
)
#: A non-watershed plant: the permit's limit exceeded (the word of § 18-37(b) is not used).
EXCEEDANCE_TEXT = (
    "The permit's flow limit is exceeded when a period average on the permit's basis is above it; a period exactly "
    "at the limit does not exceed it."
)
#: How the as-of date was set.
AS_OF_BASES = ("today", "application date", "given")

#: Median record flow over limit (or limit over median) beyond which the two are in different units.
LIMIT_RATIO_LIMIT = 100.0
#: Largest added flow, and largest permitted flow of the phosphorus table [gpd]: the flow of the
#: largest plausible plant (MAX_PLAUSIBLE_MGD, 1,000 MGD); more is a unit error, and 1e308 gpd
#: summed overflows.
MAX_FLOW_GPD = MAX_PLAUSIBLE_MGD * GPD_PER_MGD

SAMPLE_NAME = "sample-wwtp"
SAMPLE_SEED = 20240917
SAMPLE_LIMIT_MGD = 0.50


@dataclass
class SpdesCheck:
    """A complete treatment-capacity check: inputs, the record's periods, the verdict.

    ``watershed`` True: 15 RCNY § 18-37(b) (prohibited or not). False: the permitted-flow headroom
    under the plant's SPDES permit (§ 18-37(b) does not apply; ``connection_prohibited`` is False).
    """

    source: str
    source_kind: str  # "daily" or "dmr"
    basis: str
    limit_mgd: float
    added_items_gpd: list[float]
    verdict: rule.SpdesVerdict
    periods: rule.PeriodAverages
    monthly: rule.PeriodAverages
    gaps: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    window_days_present: int = 0
    window_days: int = 0
    #: The plant discharges within the NYC watershed (§ 18-37(b) applies).
    watershed: bool = True
    #: How the as-of date was set (:data:`AS_OF_BASES`).
    as_of_basis: str = "given"
    #: What a reviewer must see before relying on the result (a stale record...).
    warnings: list[str] = field(default_factory=list)
    submittal: Submittal | None = None
    #: SHA-256 of the record file (hex), None when the record was not read from a file.
    source_sha256: str | None = None
    #: The last day of the record with data (a DMR: the last month end with a value).
    record_end: str = ""
    plant: PlantFile | None = None
    #: Where the limit came from: ``--limit-mgd``, ``plant file`` or ``DMR``.
    limit_source: str = "--limit-mgd"
    #: The credit bank's commitments to the plant (:func:`capacitysim.workflows.committed.committed_record`),
    #: None when checked without them; their total is ``verdict.committed_gpd``.
    committed: dict | None = None

    def __post_init__(self):
        if self.submittal is None:
            self.submittal = Submittal()

    # -- derived ---------------------------------------------------------------------------
    @property
    def connection_prohibited(self) -> bool:
        """Prohibited under § 18-37(b): a watershed plant only."""
        return bool(self.watershed and self.verdict.connection_prohibited)

    @property
    def treatment_capacity_shown(self) -> bool:
        """:func:`capacitysim.rules.spdes.treatment_capacity_shown` of this check."""
        return rule.treatment_capacity_shown(self.verdict, self.watershed)

    @property
    def status(self) -> str:
        """``pass`` or ``fail`` (:func:`~capacitysim.rules.verdict.verdict_from_checks` of :meth:`checks`)."""
        return verdict_from_checks(self.checks())

    @property
    def record_age_days(self) -> int | None:
        """Days from the record's last day with data to the as-of date [days]."""
        return rule.record_age_days(self.record_end, self.verdict.as_of) if self.record_end else None

    @property
    def spdes_permit(self) -> str | None:
        return self.submittal.spdes_permit if self.submittal else None

    def permit_citation(self) -> str:
        """The plant's SPDES permit, as a non-watershed check cites it."""
        permit = f"SPDES permit {self.spdes_permit}" if self.spdes_permit else "the plant's SPDES permit (number not given)"
        return f"{permit} flow limit {self.limit_mgd:g} MGD, {self.basis} basis"

    def rule_text(self) -> str:
        """What the check applies (the ``rule`` of the JSON)."""
        if self.watershed:
            return rule.CITATION_18_37_B
        return f"permitted flow headroom: {self.permit_citation()}"

    def conditions(self) -> list[dict]:
        """The § 18-37(c)(1)-(3), (e), (j)(2) conditions (watershed plants; none for others)."""
        return [dict(c) for c in rule.CONDITIONS] if self.watershed else []

    def policies(self) -> list[dict]:
        """The named program policies this result rests on (``status`` "program interpretation — confirm with DEP")."""
        out = [rule.policy(rule.POLICY_AS_OF, self.as_of_basis),
               rule.policy(rule.POLICY_RECORD_MAX_AGE, rule.RECORD_MAX_AGE_DAYS)]
        if self.watershed:
            out.append(rule.policy(rule.POLICY_FLOW_VIOLATION))
        else:
            out.append(rule.policy(rule.POLICY_PERMITTED_FLOW_HEADROOM))
        return out

    def definitions(self) -> dict:
        if self.watershed:
            out = {"violation": VIOLATION_TEXT, "incomplete": INCOMPLETE_TEXT, "added_flow": ADDED_TEXT}
        else:
            out = {"exceedance": EXCEEDANCE_TEXT, "incomplete": INCOMPLETE_TEXT, "added_flow": ADDED_TEXT}
        if self.committed is not None:
            out["committed_flow"] = COMMITTED_TEXT
        return out

    def window_text(self) -> str:
        return WINDOW_TEXT if self.watershed else WINDOW_TEXT_PERMIT

    def reasons(self) -> list[str]:
        """Why the check fails: the § 18-37(b) grounds (watershed), or the negative headroom."""
        v = self.verdict
        if self.watershed:
            return v.reasons
        if self.treatment_capacity_shown:
            return []
        plus = " plus the committed and the added flow" if v.committed_gpd else " plus the added flow"
        return [(f"{self.permit_citation()}: the highest {self.basis} average in the prior twelve months{plus} "
                 f"exceeds the limit by {-v.headroom_gpd:,.0f} gpd")]

    # -- output ---------------------------------------------------------------------------
    @staticmethod
    def _label(basis: str, start, end) -> str:
        if basis == "month":
            return str(np.datetime64(end, "M"))
        return f"{start} to {end}"

    def _period(self, p: rule.PeriodAverages, i: int, added_gpd: float = 0.0) -> dict:
        avg = float(p.average_mgd[i])
        return {
            "label": self._label(p.basis, p.start[i], p.end[i]),
            "start": str(p.start[i]),
            "end": str(p.end[i]),
            "average_mgd": avg,
            "projected_average_mgd": avg + added_gpd / GPD_PER_MGD,
            "days_present": int(p.days_present[i]),
            "days_expected": int(p.days_expected[i]),
            "complete": bool(p.complete[i]),
        }

    def checks(self) -> list[Check]:
        """The checks as :class:`~capacitysim.rules.verdict.Check` records.

        Watershed plant: the two tests of § 18-37(b), no violation in the prior twelve months (the
        record) and none caused by the added flow (the record plus the added flow). Other plant: the
        permitted-flow headroom before and after the added flow, >= 0 gpd, citing the SPDES permit.
        """
        v = self.verdict
        plant = f"plant ({self.source_kind} record)"
        if not self.watershed:
            cite = (f"{self.permit_citation()}; twelve-month look-back: {rule.PROGRAM_INTERPRETATION} "
                    f"(policy {rule.POLICY_PERMITTED_FLOW_HEADROOM})")
            req = f"{v.limit_mgd:g} MGD - highest {self.basis} average in the prior twelve months"
            if v.committed_gpd:
                req += f" - {v.committed_gpd:,.0f} gpd committed"
            before_ok = not (v.violation_in_prior_12_months or v.committed_exceeded)
            return [
                Check("permitted-flow headroom before the added flow >= 0", plant, None, v.headroom_before_gpd, 0.0,
                      "gpd", before_ok, cite, "plant", f"{req} >= 0 gpd", f"{v.headroom_before_gpd:,.0f} gpd"),
                Check("permitted-flow headroom after the added flow >= 0", plant, v.headroom_before_gpd, v.headroom_gpd,
                      0.0, "gpd", self.treatment_capacity_shown, cite, "plant",
                      f"{req} - {v.added_gpd:,.0f} gpd >= 0 gpd", f"{v.headroom_gpd:,.0f} gpd"),
            ]
        cite = rule.CITATION_18_37_B
        return [
            Check("no SPDES flow parameter violation in the prior twelve months", plant, None, v.worst_average_mgd,
                  v.limit_mgd, "MGD", not v.violation_in_prior_12_months, cite, "plant",
                  f"every {self.basis} average <= {v.limit_mgd:g} MGD", f"highest {v.worst_average_mgd:.4f} MGD"),
            Check("the added flow causes no SPDES flow parameter violation", plant, v.worst_average_mgd, v.worst_projected_mgd,
                  v.limit_mgd, "MGD", not v.projected_violation, cite, "plant",
                  f"every {self.basis} average" + (f" + {v.committed_gpd:,.0f} gpd committed" if v.committed_gpd else "")
                  + f" + {v.added_gpd:,.0f} gpd <= {v.limit_mgd:g} MGD",
                  "highest with the " + ("committed and the " if v.committed_gpd else "")
                  + f"added flow {v.worst_projected_mgd:.4f} MGD"),
        ]

    def to_dict(self) -> dict:
        """The result document (``--json``; the report's input): the verdict, its checks and every number,
        the conditions, the policies, the warnings and the submittal identification."""
        v = self.verdict
        w = v.window
        viol = rule.exceeds(w.average_mgd, v.limit_mgd, 0.0)
        proj = rule.exceeds(w.average_mgd, v.limit_mgd, v.on_top_gpd)
        all_viol = rule.exceeds(self.periods.average_mgd, v.limit_mgd, 0.0)
        checks = self.checks()
        plant = self.plant
        from capacitysim.rules.document import envelope

        doc = {
            "kind": "spdes-check",
            "rule": self.rule_text(),
            "verdict": verdict_from_checks(checks),
            "watershed": bool(self.watershed),
            "treatment_capacity_shown": bool(self.treatment_capacity_shown),
            "checks": [c.to_dict() for c in checks],
            "conditions": self.conditions(),
            "warnings": list(self.warnings),
            "policies": self.policies(),
            "submittal": self.submittal.to_dict(),
            "plant": {
                "name": self.submittal.plant or (plant.name if plant else None),
                "spdes_permit": self.spdes_permit,
                "discharges_within_watershed": bool(self.watershed),
                "receiving_water": plant.receiving_water if plant else None,
                "file": {"name": PurePath(plant.source).name, "sha256": plant.sha256} if plant else None,
            },
            "source": self.source,
            "source_file": {"name": PurePath(self.source).name if self.source else None, "sha256": self.source_sha256},
            "source_sha256": self.source_sha256,
            "source_kind": self.source_kind,
            "record_end": self.record_end or None,
            "record_age_days": self.record_age_days,
            "basis": self.basis,
            "basis_definition": BASIS_TEXT[self.basis],
            "limit_mgd": v.limit_mgd,
            "limit_gpd": v.limit_mgd * GPD_PER_MGD,
            "limit_source": self.limit_source,
            "as_of": str(v.as_of),
            "as_of_basis": self.as_of_basis,
            "lookback_window": {
                "start_exclusive": str(v.window_start_exclusive),
                "end_inclusive": str(v.as_of),
                "definition": self.window_text(),
                "periods": len(w),
                "incomplete_periods": v.n_incomplete,
                "days_with_data": self.window_days_present,
                "days": self.window_days,
            },
            "added_gpd": v.added_gpd,
            "added_gpd_items": list(self.added_items_gpd),
            "committed_gpd": v.committed_gpd,
            "committed": self.committed,
            "violation_in_prior_12_months": v.violation_in_prior_12_months,
            "projected_violation": v.projected_violation,
            "connection_prohibited": self.connection_prohibited,
            "grounds": list(v.grounds) if self.watershed else [],
            "reasons": self.reasons(),
            "headroom_gpd": v.headroom_gpd,
            "headroom_before_gpd": v.headroom_before_gpd,
            "headroom_definition": HEADROOM_TEXT,
            "worst_period": self._period(w, v.worst_index, v.on_top_gpd),
            "worst_average_mgd": v.worst_average_mgd,
            "worst_projected_average_mgd": v.worst_projected_mgd,
            "violations": [self._period(w, int(i)) for i in np.flatnonzero(viol)],
            "projected_violations": [self._period(w, int(i), v.on_top_gpd) for i in np.flatnonzero(proj)],
            "violations_in_record": int(all_viol.sum()),
            "gaps": list(self.gaps),
            "notes": list(self.notes),
            "definitions": self.definitions(),
        }
        doc.update(self.report_keys(doc))  # what the report reads besides (issue 27, item 3): after the keys above
        return envelope(doc, "spdes-check", inputs=_inputs(self))  # the envelope; verdict, checks, policies above

    def report_keys(self, doc: dict) -> dict:
        """The keys the HTML report reads that the keys of ``doc`` (the document so far) do not hold (issue 27,
        item 3: the report renders from the document alone):

        ``verdict_line``, ``permit_citation``
            The verdict and the permit as the outputs word them (:meth:`verdict_line`, :meth:`permit_citation`).
        ``summary_rows``
            The report's summary table, ``[label, value]`` (:meth:`summary_rows` without the file rows).
        ``monthly_averages``
            Every month of the record (the figure's bars): ``start``, ``end`` (YYYY-MM-DD, both inclusive),
            ``average_mgd`` (None: no data), ``days_present``, ``days_expected``, ``complete``.
        ``period_averages``
            The same for the periods of the permit's basis over the whole record (the figure's line, the look-back
            window's table); None on the monthly basis (they are ``monthly_averages``).
        """
        return {"verdict_line": self.verdict_line(), "permit_citation": self.permit_citation(),
                "summary_rows": [list(r) for r in self.summary_rows(files=False, doc=doc)],
                "monthly_averages": _period_series(self.monthly),
                "period_averages": None if self.basis == "month" else _period_series(self.periods)}

    def verdict_line(self) -> str:
        v = self.verdict
        added = f" after the added flow of {v.added_gpd:,.0f} gpd" if v.added_gpd else ""
        if v.committed_gpd:
            added = f" after {v.committed_gpd:,.0f} gpd committed" + (f" and the added flow of {v.added_gpd:,.0f} gpd"
                                                                      if v.added_gpd else "")
        if not self.watershed:
            if self.treatment_capacity_shown:
                return (f"TREATMENT CAPACITY SHOWN as of {v.as_of}: permitted-flow headroom {v.headroom_gpd:,.0f} gpd{added} "
                        f"({self.permit_citation()})")
            return (f"NO TREATMENT CAPACITY SHOWN as of {v.as_of}: permitted-flow headroom {v.headroom_gpd:,.0f} gpd{added} "
                    f"({self.permit_citation()})")
        if not v.connection_prohibited:
            return (
                f"NOT PROHIBITED by 15 RCNY § 18-37(b) as of {v.as_of}: no {self.basis} period in the prior twelve "
                f"months exceeded {v.limit_mgd:g} MGD" + (f", nor would with {v.committed_gpd:,.0f} gpd committed and "
                                                          f"{v.added_gpd:,.0f} gpd added" if v.committed_gpd else
                                                          f", nor would with {v.added_gpd:,.0f} gpd added" if v.added_gpd else "")
            )
        return f"PROHIBITED as of {v.as_of}: " + "; ".join(v.reasons)

    def record_label(self) -> str:
        """The record file as the outputs name it: its name and SHA-256, never a machine path."""
        return _file_label(self.source, self.source_sha256)

    def summary_rows(self, files: bool = True, doc: dict | None = None) -> list[tuple[str, str]]:
        """(label, value) rows of the result for the table and the report, after the submittal's rows
        (:meth:`~capacitysim.io.submittal.Submittal.rows`: the plant's name and permit); ``files`` False leaves
        out the rows naming the plant file and the record (the report names them with
        :func:`capacitysim.report.html.file_label`); ``doc`` is the document when already made."""
        d = self.to_dict() if doc is None else doc
        v = self.verdict
        w = d["worst_period"]
        lw = d["lookback_window"]
        plant = d["plant"]
        rows = []  # the plant's name and permit are the submittal's (shown by the submittal block)
        if self.watershed:
            rows.append(("discharges within the NYC watershed", "yes: 15 RCNY § 18-37(b) applies"))
        else:
            rows.append(("discharges within the NYC watershed",
                         "no: permitted-flow headroom under the plant's SPDES permit"))
        if plant["receiving_water"]:
            rows.append(("receiving water", plant["receiving_water"]))
        if files and self.plant is not None:
            rows.append(("plant file", _file_label(self.plant.source, self.plant.sha256)))
        if files:
            rows.append(("record", f"{self.record_label()} ({self.source_kind})"))
        age = self.record_age_days
        rows += [
            ("record ends", f"{self.record_end}" + ("" if age is None else f", {age} day(s) before the as-of date" if age >= 0
                                                      else f", {-age} day(s) after the as-of date (later data not used)")),
            ("basis", f"{self.basis}: {BASIS_TEXT[self.basis]}"),
            ("limit", f"{v.limit_mgd:g} MGD ({v.limit_mgd * GPD_PER_MGD:,.0f} gpd; from {self.limit_source})"),
            ("as of", f"{v.as_of} ({self.as_of_basis})"),
            ("look-back window", f"periods ending after {lw['start_exclusive']} through {lw['end_inclusive']}: "
             f"{lw['periods']} period(s), {lw['incomplete_periods']} incomplete"),
            ("data in window", f"{lw['days_with_data']} of {lw['days']} days"),
            ("added flow", f"{v.added_gpd:,.0f} gpd" + (f" ({' + '.join(f'{a:,.0f}' for a in self.added_items_gpd)})" if len(self.added_items_gpd) > 1 else "")),
            *self.committed_rows(files),
            ("worst period", f"{w['label']}: {v.worst_average_mgd:.4f} MGD" + ("" if w["complete"] else f" (incomplete: {w['days_present']} of {w['days_expected']} days)")),
        ]
        if self.watershed:
            rows += [
                ("violation in prior 12 months", f"{'yes' if v.violation_in_prior_12_months else 'no'} ({v.n_violations} period(s))"),
                ("projected violation", f"{'yes' if v.projected_violation else 'no'} ({v.n_projected_violations} period(s) with the added flow)"),
                ("headroom", f"{v.headroom_gpd:,.0f} gpd after the added flow ({v.headroom_before_gpd:,.0f} gpd before"
                             + (", with the committed flow)" if self.committed is not None else ")")),
                ("connection prohibited", ("yes: " + ", ".join(v.grounds)) if v.connection_prohibited else "no"),
            ]
        else:
            rows += [
                ("limit exceeded in prior 12 months", f"{'yes' if v.violation_in_prior_12_months else 'no'} ({v.n_violations} period(s))"),
                ("exceeded with the added flow", f"{'yes' if v.projected_violation else 'no'} ({v.n_projected_violations} period(s))"),
                ("permitted-flow headroom", f"{v.headroom_gpd:,.0f} gpd after the added flow ({v.headroom_before_gpd:,.0f} gpd "
                                            "before" + (", with the committed flow)" if self.committed is not None else ")")),
            ]
        rows.append(("treatment capacity shown", "yes" if self.treatment_capacity_shown else "no"))
        return rows


    def committed_rows(self, files: bool = True) -> list[tuple[str, str]]:
        """The committed-flow rows of :meth:`summary_rows` (none when checked without ``--committed``);
        ``files`` False names the bank by its file name only (the report)."""
        c = self.committed
        if c is None:
            return []
        bank = str(c["bank"]) if files else PurePath(str(c["bank"])).name
        rows = [("committed flow", f"{self.verdict.committed_gpd:,.0f} gpd average ({len(c['flows'])} commitment(s) of "
                                   f"{len(c.get('basins') or [])} basin(s)), part of the baseline"),
                ("credit bank", f"{bank}, journal head {c['bank_head']}, as of {c['as_of']}"
                                + (f"; {c['excluded']} left out (the applicant's own)" if c.get("excluded") else ""))]
        for f in c["flows"]:
            rows.append((f"  committed {f['application']}", f"{f['average_gpd']:,.0f} gpd average, "
                         f"{'-' if f['peak_gpd'] is None else format(f['peak_gpd'], ',.0f')} gpd peak; {f['status']}; "
                         f"basin {f.get('basin') or '-'}"))
        return rows


def _period_series(p: rule.PeriodAverages) -> dict:
    """The periods ``p`` as a document stores them: one list per field (averages as recorded, None without data)."""
    from capacitysim.workflows.document import series_values

    return {"start": [str(x) for x in p.start], "end": [str(x) for x in p.end],
            "average_mgd": series_values(p.average_mgd, None), "days_present": [int(x) for x in p.days_present],
            "days_expected": [int(x) for x in p.days_expected], "complete": [bool(x) for x in p.complete]}


def _inputs(result) -> list[dict]:
    """The envelope's ``inputs`` of a SPDES check: the plant's flow record, as the document records it."""
    if not result.source:
        return []
    return [{"role": "flow record", "file": PurePath(result.source).name, "sha256": result.source_sha256}]


def _file_label(path, sha256: str | None) -> str:
    """A file named by its name and SHA-256 (the form of :func:`capacitysim.report.html.file_label`)."""
    name = PurePath(str(path)).name if path else "-"
    return f"{name} (SHA-256 {sha256})" if sha256 else name


# --------------------------------------------------------------------------------------------
# composition
# --------------------------------------------------------------------------------------------


def _check_limit(limit_mgd: float, median_mgd: float) -> None:
    if not np.isfinite(limit_mgd) or limit_mgd <= 0:
        raise InputError(f"--limit-mgd must be > 0 MGD; got {limit_mgd:g}")
    if limit_mgd > MAX_PLAUSIBLE_MGD:
        raise InputError(
            f"--limit-mgd {limit_mgd:,.6g} MGD is more than {MAX_PLAUSIBLE_MGD:,.0f} MGD: a limit in gpd? "
            f"({limit_mgd:,.6g} gpd = {limit_mgd / GPD_PER_MGD:g} MGD)"
        )
    if median_mgd > 0 and (median_mgd / limit_mgd > LIMIT_RATIO_LIMIT or limit_mgd / median_mgd > LIMIT_RATIO_LIMIT):
        raise InputError(
            f"--limit-mgd {limit_mgd:g} MGD and the record's median flow of {median_mgd:.6g} MGD differ by more than "
            f"{LIMIT_RATIO_LIMIT:g} times: is one of them in gpd, or the record of another plant?"
        )


def _added(added_gpd) -> list[float]:
    """The added flows [gpd]: each, and their sum, in [0, MAX_FLOW_GPD]."""
    items = [float(a) for a in (added_gpd if np.iterable(added_gpd) else [added_gpd])]
    for a in items:
        if not np.isfinite(a) or a < 0 or a > MAX_FLOW_GPD:
            raise InputError(f"--added-gpd must be >= 0 gpd and <= {MAX_FLOW_GPD:,.0f} gpd; got {a:g}")
    if sum(items) > MAX_FLOW_GPD:
        raise InputError(f"--added-gpd values sum to {sum(items):,.0f} gpd; allowed: at most {MAX_FLOW_GPD:,.0f} gpd")
    return items


def _watershed(watershed) -> bool:
    if watershed is None:
        raise InputError(
            "--watershed or --not-watershed is required: does the plant discharge within the NYC watershed? "
            "(15 RCNY § 18-37(b) applies only then); or give a --plant file with watershed = true or false"
        )
    if not isinstance(watershed, (bool, np.bool_)):
        raise InputError(f"watershed must be true or false; got {watershed!r}")
    return bool(watershed)


def _date(value, option: str) -> np.datetime64:
    try:
        ts = pd.Timestamp(str(value))
    except (ValueError, TypeError, OverflowError):
        ts = None
    if ts is None or pd.isna(ts):
        raise InputError(f"{option} must be a date YYYY-MM-DD; got {value!r}")
    return np.datetime64(ts.date(), "D")


def today() -> _dt.date:
    """Today's local date (the default as-of date; a function so tests can pin it)."""
    return _dt.date.today()


def resolve_as_of(as_of=None, application_date=None) -> tuple[np.datetime64, str]:
    """The as-of date of a check and how it was set (policy ``as_of_default``).

    Parameters
    ----------
    as_of : date-like, optional
        An explicit date (``--as-of``): basis ``given``.
    application_date : date-like, optional
        The application date (``--application-date``), used when ``as_of`` is not given.

    Returns
    -------
    (numpy.datetime64, str)
        The date [day] and its basis: ``given``, ``application date`` or ``today`` (:func:`today`).

    Raises
    ------
    InputError
        Both given, or a value that is not a date.
    """
    if as_of is not None and application_date is not None:
        raise InputError(f"give --as-of or --application-date, not both; got --as-of {as_of!r} and --application-date "
                         f"{application_date!r}")
    if as_of is not None:
        return _date(as_of, "--as-of"), "given"
    if application_date is not None:
        return _date(application_date, "--application-date"), "application date"
    return np.datetime64(today(), "D"), "today"


def _record_age(record_end: np.datetime64, a: np.datetime64, as_of_basis: str, strict: bool, warnings: list[str]) -> int:
    """Days from the record's end to the as-of date; past :data:`~capacitysim.rules.spdes.RECORD_MAX_AGE_DAYS`
    a warning, or a refusal (exit 3) with ``strict``."""
    age = rule.record_age_days(record_end, a)
    if rule.record_is_stale(record_end, a):
        msg = (f"the flow record ends {record_end}, {age} days before the as-of date {a} ({as_of_basis}): more than "
               f"{rule.RECORD_MAX_AGE_DAYS} days (policy {rule.POLICY_RECORD_MAX_AGE} = {rule.RECORD_MAX_AGE_DAYS}, "
               f"{rule.PROGRAM_INTERPRETATION}); give a record that reaches closer to the as-of date")
        if strict:
            raise RefusedError(msg + " (refused: --strict-record-age)")
        warnings.append(msg)
    return age


def _committed_block(committed: dict | None) -> dict | None:
    """The ``committed`` record of the document (validated), or None."""
    if committed is None:
        return None
    from capacitysim.workflows.committed import check_commitments, committed_record

    return committed_record(check_commitments(committed))


def _committed_gpd(block: dict | None) -> float:
    """The committed average flow [gpd] of a ``committed`` record (0 without one)."""
    return 0.0 if block is None else float(block["total_gpd"])


def _verdict(periods, limit_mgd, a, items, record_end, age, as_of_basis, committed_gpd=0.0) -> rule.SpdesVerdict:
    try:
        return rule.check_connection(periods, limit_mgd, a, items or 0.0, committed_gpd)
    except InputError as exc:
        if age > 0:
            raise InputError(
                f"{exc}; the record ends {record_end}, {age} days before the as-of date ({as_of_basis}): check as of a "
                "date the record covers with --as-of, or give a current record"
            ) from None
        raise


def check_daily(record: FlowRecord, limit_mgd: float, basis: str = "month", as_of=None, added_gpd=(), *,
                watershed: bool, application_date=None, strict_record_age: bool = False,
                submittal: Submittal | None = None, source_sha256: str | None = None,
                plant: PlantFile | None = None, limit_source: str = "--limit-mgd",
                committed: dict | None = None) -> SpdesCheck:
    """Check a daily record (as read by :func:`read_flow_csv`).

    Parameters
    ----------
    record : FlowRecord
    limit_mgd : float
        The permit's flow limit [MGD].
    basis : {"month", "30day", "12month"}
    as_of, application_date : date-like, optional
        The as-of date (:func:`resolve_as_of`; default today).
    added_gpd : float or sequence of float
        Added average daily flow(s) [gpd].
    watershed : bool
        The plant discharges within the NYC watershed (15 RCNY § 18-37(b)); else the permitted-flow headroom.
    strict_record_age : bool
        Refuse (:class:`~capacitysim.errors.RefusedError`, exit 3) a record ending more than 45 days
        before the as-of date; default a warning (policy ``record_max_age_days``).
    submittal, source_sha256, plant, limit_source
        Carried into the result document.
    committed : dict, optional
        The credit bank's commitments to the plant
        (:func:`capacitysim.workflows.committed.spdes_commitments`): their ``total_gpd`` is part of
        the baseline (:func:`capacitysim.rules.spdes.check_connection` ``committed_gpd``).
    """
    ws = _watershed(watershed)
    if basis not in rule.BASES:
        raise InputError(f"basis must be one of {', '.join(rule.BASES)}; got {basis!r}")
    _check_limit(limit_mgd, float(record.flow_mgd.median()))
    items = _added(added_gpd)
    a, as_of_basis = resolve_as_of(as_of, application_date)
    end = np.datetime64(record.last.date(), "D")
    warnings: list[str] = []
    age = _record_age(end, a, as_of_basis, strict_record_age, warnings)
    periods = rule.period_averages(record.dates, record.values_mgd, basis)
    monthly = periods if basis == "month" else rule.monthly_averages(record.dates, record.values_mgd)
    block = _committed_block(committed)
    verdict = _verdict(periods, limit_mgd, a, items, end, age, as_of_basis, _committed_gpd(block))
    lo = pd.Timestamp(verdict.window_start_exclusive) + pd.Timedelta(days=1)
    hi = pd.Timestamp(verdict.as_of)
    idx = record.flow_mgd.index
    present = int(((idx >= lo) & (idx <= hi)).sum())
    gaps = [str(g) for g in record.gaps]
    notes = list(record.notes)
    if hi > record.last:
        notes.append(f"the as-of date {hi.date()} is after the record's last day {record.last.date()}")
    n_window = int((hi - lo).days) + 1
    if present < n_window:
        notes.append(
            f"the record has flows on {present} of the {n_window} days of the look-back window "
            f"({lo.date()} to {hi.date()}); periods with missing days are averaged over the days present and flagged, months without any day are left out"
        )
    return SpdesCheck(record.source, "daily", basis, float(limit_mgd), items, verdict, periods, monthly, gaps, notes,
                      present, n_window, watershed=ws, as_of_basis=as_of_basis, warnings=warnings, submittal=submittal,
                      source_sha256=source_sha256, record_end=str(end), plant=plant, limit_source=limit_source,
                      committed=block)


def check_dmr(dmr: DmrRecord, limit_mgd: float | None = None, basis: str = "month", as_of=None, added_gpd=(), *,
              watershed: bool, application_date=None, strict_record_age: bool = False,
              submittal: Submittal | None = None, source_sha256: str | None = None,
              plant: PlantFile | None = None, limit_source: str | None = None,
              committed: dict | None = None) -> SpdesCheck:
    """Check monthly DMR values (``MO AVG``); ``limit_mgd`` defaults to the DMR's own limit.

    The other parameters are those of :func:`check_daily`; the record ends at the last month end with a value.
    """
    ws = _watershed(watershed)
    if basis not in ("month", "12month"):
        raise InputError(
            f"basis {basis!r} needs daily flows; a DMR's monthly averages support the month and 12month bases"
        )
    if limit_mgd is None:
        if dmr.limit_mgd is None:
            raise InputError(f"{dmr.source}: the DMR gives no limit for {dmr.statistical_base}; give --limit-mgd")
        limit_mgd = dmr.limit_mgd
        limit_source = "DMR"
    ok = dmr.monthly["average_mgd"].notna()
    if not ok.any():
        raise InputError(f"{dmr.source}: no monthly flow value reported")
    _check_limit(limit_mgd, float(dmr.monthly.loc[ok, "average_mgd"].median()))
    items = _added(added_gpd)
    ends = dmr.monthly.loc[ok, "period_end"].to_numpy().astype("datetime64[D]")
    monthly = rule.monthly_periods_from_values(ends, dmr.monthly.loc[ok, "average_mgd"].to_numpy())
    periods = monthly if basis == "month" else rule.rolling_12month_averages(monthly)
    a, as_of_basis = resolve_as_of(as_of, application_date)
    end = ends.max()
    warnings: list[str] = []
    age = _record_age(end, a, as_of_basis, strict_record_age, warnings)
    block = _committed_block(committed)
    verdict = _verdict(periods, limit_mgd, a, items, end, age, as_of_basis, _committed_gpd(block))
    in_w = rule.in_lookback(monthly.end, verdict.as_of)
    notes = list(dmr.notes)
    if dmr.limit_mgd is not None and not np.isclose(dmr.limit_mgd, limit_mgd):
        notes.append(f"the DMR's own limit is {dmr.limit_mgd:g} MGD; checked against {limit_mgd:g} MGD as given")
    permit = submittal.spdes_permit if submittal is not None else None
    if permit and dmr.npdes_id and dmr.npdes_id.upper().replace(" ", "") != permit:
        warnings.append(f"the DMR is for permit {dmr.npdes_id}, the submittal names SPDES permit {permit}: "
                        "the record of another plant?")
    missing = [str(np.datetime64(e, "M")) for e, have in zip(monthly.end, monthly.days_present > 0) if not have]
    gaps = [f"{m} (no DMR value)" for m in missing]
    lo = pd.Timestamp(verdict.window_start_exclusive) + pd.Timedelta(days=1)
    hi = pd.Timestamp(verdict.as_of)
    return SpdesCheck(dmr.source, "dmr", basis, float(limit_mgd), items, verdict, periods, monthly, gaps, notes,
                      int(monthly.days_present[in_w].sum()), int((hi - lo).days) + 1, watershed=ws,
                      as_of_basis=as_of_basis, warnings=warnings, submittal=submittal, source_sha256=source_sha256,
                      record_end=str(end), plant=plant, limit_source=limit_source or "--limit-mgd", committed=block)


def _bundled(ref: str, suffix: str) -> Path:
    p = Path(ref)
    if path_exists(p):
        return p
    candidate = bundled_dir("models") / "plants" / (p.name if p.suffix == suffix else f"{p.name}{suffix}")
    if path_exists(candidate):
        return candidate
    return p  # the reader reports "file not found" with the path as given


def resolve_flows_path(ref: str) -> Path:
    """A flow CSV path, or the name of a bundled record in ``models/plants/`` (``sample-wwtp``)."""
    return _bundled(ref, ".csv")


def resolve_plant_path(ref: str) -> Path:
    """A plant TOML path, or the name of a bundled plant file in ``models/plants/`` (``sample-wwtp``)."""
    return _bundled(ref, ".toml")


def plant_submittal(plant: PlantFile | None) -> Submittal:
    """The submittal fields a plant file gives (``plant`` and ``spdes_permit``), the base the options override."""
    if plant is None:
        return Submittal()
    return Submittal(plant=plant.name, spdes_permit=plant.spdes_permit)


def run_check(
    *,
    flows: str | None = None,
    dmr: str | None = None,
    limit_mgd: float | None = None,
    basis: str | None = None,
    as_of=None,
    application_date=None,
    added_gpd=(),
    watershed: bool | None = None,
    plant: str | PlantFile | None = None,
    strict_record_age: bool = False,
    submittal: Submittal | None = None,
    date_column: str = "date",
    flow_column: str = "flow_mgd",
    units: str | None = None,
    outfall: str | None = None,
    location: str | None = None,
    committed: dict | None = None,
) -> SpdesCheck:
    """Read a record (daily CSV or ECHO DMR) and check it (the report is :func:`capacitysim.report.spdes.write_report`).

    Parameters
    ----------
    flows, dmr : str, optional
        The record: a daily CSV (or a bundled name) or an ECHO DMR download; exactly one.
    limit_mgd : float, optional
        The permit's flow limit [MGD]; default the plant file's ``flow_limit_mgd``, then (DMR) the DMR's own.
    basis : {"month", "30day", "12month"}, optional
        Default the plant file's ``basis``, else ``month``.
    as_of, application_date : date-like, optional
        The as-of date (:func:`resolve_as_of`): given, else the application date, else today.
    added_gpd : sequence of float
        Average daily flow of the new connection(s) [gpd].
    watershed : bool, optional
        The plant discharges within the NYC watershed; required unless the plant file says it (and
        must agree with it).
    plant : path or PlantFile, optional
        The plant file (:func:`capacitysim.io.plant_flows.read_plant_file`) or a bundled plant name.
    strict_record_age : bool
        Refuse a record ending more than 45 days before the as-of date (exit 3); default: warn.
    submittal : Submittal, optional
        The submittal identification; its fields override the plant file's name and permit.
    committed : dict, optional
        The credit bank's commitments to this plant
        (:func:`capacitysim.workflows.committed.spdes_commitments`, keyed by
        :func:`capacitysim.workflows.committed.plant_keys`): their average flow (``committed_gpd``)
        is part of the baseline, so the headroom before the added flow is limit - highest average -
        committed, and the added flow is judged on top of both. The document records the block as
        ``committed`` (null without it).

    Returns
    -------
    SpdesCheck

    Raises
    ------
    InputError
        Bad input (exit 2): no record or two, no limit, ``watershed`` missing or contradicting the plant file...
    RefusedError
        A record ending more than 45 days before the as-of date with ``strict_record_age`` (exit 3).
    """
    if (flows is None) == (dmr is None):
        raise InputError("give the plant's flow record once: --flows (daily CSV) or --dmr (ECHO DMR download)")
    pf = plant if isinstance(plant, PlantFile) or plant is None else read_plant_file(resolve_plant_path(plant))
    notes: list[str] = []
    if pf is not None:
        if watershed is not None and bool(watershed) != pf.watershed:
            raise InputError(
                f"--{'' if watershed else 'not-'}watershed contradicts the plant file {PurePath(pf.source).name}: "
                f"watershed = {str(pf.watershed).lower()}; allowed: the same answer, or leave the option out"
            )
        watershed = pf.watershed
    ws = _watershed(watershed)
    source_of_limit = "--limit-mgd"
    if pf is not None and pf.flow_limit_mgd is not None:
        if limit_mgd is None:
            limit_mgd, source_of_limit = pf.flow_limit_mgd, "plant file"
        elif not np.isclose(float(limit_mgd), pf.flow_limit_mgd):
            notes.append(f"the plant file's flow limit is {pf.flow_limit_mgd:g} MGD; checked against {float(limit_mgd):g} "
                         "MGD as given (--limit-mgd)")
    if basis is None:
        basis = pf.basis if pf is not None and pf.basis else "month"
    elif pf is not None and pf.basis and pf.basis != basis:
        notes.append(f"the plant file's basis is {pf.basis}; checked on the {basis} basis as given (--basis)")
    sub = plant_submittal(pf).merged(**(submittal.to_dict() if submittal is not None else {}))
    common = {"watershed": ws, "application_date": application_date, "strict_record_age": strict_record_age,
              "submittal": sub, "plant": pf, "committed": committed}
    if flows is not None:
        if limit_mgd is None:
            raise InputError("--limit-mgd is required with --flows (the permit's flow limit in MGD), "
                             "or flow_limit_mgd in the --plant file")
        path = resolve_flows_path(flows)
        rec = read_flow_csv(path, date_column=date_column, flow_column=flow_column, units=units)
        result = check_daily(rec, limit_mgd, basis, as_of, added_gpd, source_sha256=file_sha256(path),
                             limit_source=source_of_limit, **common)
    else:
        rec = read_echo_dmr(dmr, outfall=outfall, location=location)
        result = check_dmr(rec, limit_mgd, basis, as_of, added_gpd, source_sha256=file_sha256(dmr),
                           limit_source=None if limit_mgd is None else source_of_limit, **common)
    result.notes.extend(notes)
    return result


def phosphorus(permitted_gpd: float, watershed: bool = True) -> dict:
    """The § 18-36(a)(8) phosphorus limit of a permitted flow [gpd], with the table row it falls in.

    § 18-36(a)(8) applies to "wastewater treatment plants with either surface or subsurface discharges within the
    watershed": for a plant outside it (``watershed`` False) the result says the rule does not apply and gives
    no limit. The permitted flow must be in (0, MAX_FLOW_GPD] (a larger figure is a unit error).

    Parameters
    ----------
    permitted_gpd : float
        The plant's SPDES permitted flow [gpd].
    watershed : bool
        The plant discharges within the NYC watershed (required by the CLI: ``--watershed`` / ``--not-watershed``).

    References
    ----------
    15 RCNY § 18-36(a)(8).
    """
    q = float(permitted_gpd)
    if q > MAX_FLOW_GPD:
        raise InputError(f"--permitted-gpd must be <= {MAX_FLOW_GPD:,.0f} gpd (1,000 MGD; a unit error?); got {q:g}")
    if not isinstance(watershed, bool):
        raise InputError(f"watershed must be true or false, got {watershed!r}")
    band = rule.phosphorus_band(permitted_gpd)
    limit = rule.phosphorus_limit_mg_l(permitted_gpd) if watershed else None
    return {
        "rule": "15 RCNY § 18-36(a)(8)",
        "permitted_flow_gpd": q,
        "watershed": watershed,
        "applies": watershed,
        "band": band if watershed else None,
        "total_phosphorus_limit_mg_l": limit,
        "why": None if watershed else ("§ 18-36(a)(8) applies to wastewater treatment plants with surface or subsurface "
                                       "discharges within the watershed; this plant discharges outside it: its SPDES "
                                       "permit sets its phosphorus limit"),
    }


# --------------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------
# the bundled sample record
# --------------------------------------------------------------------------------------------


def synthetic_plant_flows(seed: int = SAMPLE_SEED, start: str = "2022-01-01", end: str = "2024-12-31",
                          outage: tuple[str, str] | None = ("2024-08-12", "2024-08-14")) -> pd.DataFrame:
    """A made-up daily record of a small watershed plant: sanitary flow, seasonal I/I, storms, a wet spring.

    Components [MGD]: sanitary base 0.30 (weekends 4 % higher, weekdays 1.5 % lower); groundwater
    infiltration 0.055 + 0.055 cos(2 pi (day of year - 105) / 365.25), highest in mid-April; a wet
    spring (1 Mar to 15 May 2023: infiltration +0.08 and storms on 30 % of days rather than 12 %);
    rainfall-derived inflow of 0.09 MGD per inch of rain, receding by 0.55 a day; lognormal daily
    noise (sigma 0.03). Rain depths are exponential with a 0.5 in mean. The flow of ``outage`` days
    (a meter outage) is left blank. Seeded (numpy PCG64), so the same seed gives the same record.

    Returns
    -------
    pandas.DataFrame
        Columns ``date`` (Timestamp) and ``flow_mgd`` (float, NaN on outage days).
    """
    rng = np.random.default_rng(seed)
    days = pd.date_range(start, end, freq="D")
    n = days.size
    doy = days.day_of_year.to_numpy()
    sanitary = 0.30 * np.where(days.day_of_week.to_numpy() >= 5, 1.04, 0.985)
    gwi = 0.055 + 0.055 * np.cos(2 * np.pi * (doy - 105) / 365.25)
    wet = np.asarray((days >= "2023-03-01") & (days <= "2023-05-15"))
    gwi = gwi + np.where(wet, 0.08, 0.0)
    rate = np.where(wet, 0.30, 0.12)
    rain_in = np.where(rng.random(n) < rate, rng.exponential(0.5, n), 0.0)
    rdii = np.empty(n)
    level = 0.0
    for i in range(n):
        level = level * 0.55 + 0.09 * rain_in[i]
        rdii[i] = level
    flow = (sanitary + gwi + rdii) * rng.lognormal(0.0, 0.03, n)
    out = pd.DataFrame({"date": days, "flow_mgd": flow})
    if outage:
        gap = (days >= outage[0]) & (days <= outage[1])
        out.loc[gap, "flow_mgd"] = np.nan
    return out


def write_sample_record(path: str | Path, seed: int = SAMPLE_SEED) -> Path:
    """Write :func:`synthetic_plant_flows` as the bundled CSV (``date,flow_mgd``, 4 decimals, blank gaps)."""
    from capacitysim.files import atomic_write_text

    df = synthetic_plant_flows(seed)
    text = df.to_csv(index=False, date_format="%Y-%m-%d", float_format="%.4f", na_rep="", lineterminator="\n")
    return atomic_write_text(path, text)


def recent_sample_record(end=None, seed: int = SAMPLE_SEED) -> str:
    """The sample plant's made-up record (``date,flow_mgd``) over the three years ending ``end`` (default
    yesterday): :func:`synthetic_plant_flows` without its outage, so a check as of today finds a record
    that is recent on any date (the bundled ``sample-wwtp`` ends on 2024-12-31).

    Parameters
    ----------
    end : date or str, optional
        The last day of the record (default yesterday, UTC date of the machine).
    """
    end = _dt.date.fromisoformat(str(end)) if end is not None else today() - _dt.timedelta(days=1)
    try:
        start = end.replace(year=end.year - 3) + _dt.timedelta(days=1)
    except ValueError:  # 29 February
        start = end.replace(year=end.year - 3, day=28) + _dt.timedelta(days=1)
    df = synthetic_plant_flows(seed, start=start.isoformat(), end=end.isoformat(), outage=None)
    return df.to_csv(index=False, date_format="%Y-%m-%d", float_format="%.4f", na_rep="", lineterminator="\n")
