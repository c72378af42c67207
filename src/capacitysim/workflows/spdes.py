"""Treatment capacity under 15 RCNY § 18-37(b): a plant's flow record checked against its SPDES flow limit.

Composes the reader (:mod:`capacitysim.io.plant_flows`) and the pure rule (:mod:`capacitysim.rules.spdes`)
into one result document (:meth:`SpdesCheck.to_dict`, with its :class:`~capacitysim.rules.verdict.Check`
records); the report is :mod:`capacitysim.report.spdes`. Also holds the generator of the bundled sample record (``models/plants/``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from capacitysim.errors import InputError
from capacitysim.io.plant_flows import MAX_PLAUSIBLE_MGD, DmrRecord, FlowRecord, read_echo_dmr, read_flow_csv
from capacitysim.io.files import bundled_dir, path_exists
from capacitysim.rules import spdes as rule
from capacitysim.rules.verdict import Check
from capacitysim.units import GPD_PER_MGD

#: What each basis means, for the outputs.
BASIS_TEXT = {
    "month": "calendar-month average of the daily flows (the DMR monthly average)",
    "30day": "30-day rolling average of the daily flows, one period ending on each day",
    "12month": "12-month rolling average: the mean of a month's average and the eleven before it",
}

WINDOW_TEXT = (
    "A period counts toward 'the prior twelve months' (15 RCNY § 18-37(b)) when its end date falls after "
    "the date exactly 12 months before the as-of date and on or before the as-of date; a period ending "
    "exactly 12 months before does not count, one ending a day later does, and a period still running on "
    "the as-of date does not count. A month-end as-of date maps to the month end 12 months earlier (leap years)."
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
    "Headroom = limit - (highest period average in the look-back window + added flow), in gpd; negative "
    "means the limit is exceeded by that much."
)
VIOLATION_TEXT = (
    "A violation is a period average above the limit; a period exactly at the limit is not a violation. "
    "(The copy of chapter 18 used does not define 'SPDES flow parameter violation'; this is capacitysim's reading.)"
)

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
    """A complete § 18-37(b) check: inputs, the record's periods, the verdict."""

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
        """The two tests of § 18-37(b) as :class:`~capacitysim.rules.verdict.Check` records: no violation in the
        prior twelve months (the record), and none caused by the added flow (the record plus the added flow)."""
        v = self.verdict
        cite = "15 RCNY § 18-37(b)"
        plant = f"plant ({self.source_kind} record)"
        return [
            Check("no SPDES flow parameter violation in the prior twelve months", plant, None, v.worst_average_mgd,
                  v.limit_mgd, "MGD", not v.violation_in_prior_12_months, cite, "plant",
                  f"every {self.basis} average <= {v.limit_mgd:g} MGD", f"highest {v.worst_average_mgd:.4f} MGD"),
            Check("the added flow causes no SPDES flow parameter violation", plant, v.worst_average_mgd, v.worst_projected_mgd,
                  v.limit_mgd, "MGD", not v.projected_violation, cite, "plant",
                  f"every {self.basis} average + {v.added_gpd:,.0f} gpd <= {v.limit_mgd:g} MGD",
                  f"highest with the added flow {v.worst_projected_mgd:.4f} MGD"),
        ]

    def to_dict(self) -> dict:
        """The result document (``--json``; the report's input): the verdict, its checks and every number."""
        v = self.verdict
        w = v.window
        viol = rule.exceeds(w.average_mgd, v.limit_mgd, 0.0)
        proj = rule.exceeds(w.average_mgd, v.limit_mgd, v.added_gpd)
        all_viol = rule.exceeds(self.periods.average_mgd, v.limit_mgd, 0.0)
        return {
            "kind": "spdes-check",
            "rule": "15 RCNY § 18-37(b)",
            "verdict": "fail" if v.connection_prohibited else "pass",
            "checks": [c.to_dict() for c in self.checks()],
            "source": self.source,
            "source_kind": self.source_kind,
            "basis": self.basis,
            "basis_definition": BASIS_TEXT[self.basis],
            "limit_mgd": v.limit_mgd,
            "limit_gpd": v.limit_mgd * GPD_PER_MGD,
            "as_of": str(v.as_of),
            "lookback_window": {
                "start_exclusive": str(v.window_start_exclusive),
                "end_inclusive": str(v.as_of),
                "definition": WINDOW_TEXT,
                "periods": len(w),
                "incomplete_periods": v.n_incomplete,
                "days_with_data": self.window_days_present,
                "days": self.window_days,
            },
            "added_gpd": v.added_gpd,
            "added_gpd_items": list(self.added_items_gpd),
            "violation_in_prior_12_months": v.violation_in_prior_12_months,
            "projected_violation": v.projected_violation,
            "connection_prohibited": v.connection_prohibited,
            "grounds": list(v.grounds),
            "reasons": v.reasons,
            "headroom_gpd": v.headroom_gpd,
            "headroom_before_gpd": v.headroom_before_gpd,
            "headroom_definition": HEADROOM_TEXT,
            "worst_period": self._period(w, v.worst_index, v.added_gpd),
            "worst_average_mgd": v.worst_average_mgd,
            "worst_projected_average_mgd": v.worst_projected_mgd,
            "violations": [self._period(w, int(i)) for i in np.flatnonzero(viol)],
            "projected_violations": [self._period(w, int(i), v.added_gpd) for i in np.flatnonzero(proj)],
            "violations_in_record": int(all_viol.sum()),
            "gaps": list(self.gaps),
            "notes": list(self.notes),
            "definitions": {"violation": VIOLATION_TEXT, "incomplete": INCOMPLETE_TEXT, "added_flow": ADDED_TEXT},
        }

    def verdict_line(self) -> str:
        v = self.verdict
        if not v.connection_prohibited:
            return (
                f"NOT PROHIBITED by 15 RCNY § 18-37(b) as of {v.as_of}: no {self.basis} period in the prior twelve "
                f"months exceeded {v.limit_mgd:g} MGD" + (f", nor would with {v.added_gpd:,.0f} gpd added" if v.added_gpd else "")
            )
        return f"PROHIBITED as of {v.as_of}: " + "; ".join(v.reasons)

    def summary_rows(self) -> list[tuple[str, str]]:
        d = self.to_dict()
        v = self.verdict
        w = d["worst_period"]
        lw = d["lookback_window"]
        rows = [
            ("record", f"{self.source} ({self.source_kind})"),
            ("basis", f"{self.basis}: {BASIS_TEXT[self.basis]}"),
            ("limit", f"{v.limit_mgd:g} MGD ({v.limit_mgd * GPD_PER_MGD:,.0f} gpd)"),
            ("as of", str(v.as_of)),
            ("look-back window", f"periods ending after {lw['start_exclusive']} through {lw['end_inclusive']}: "
             f"{lw['periods']} period(s), {lw['incomplete_periods']} incomplete"),
            ("data in window", f"{lw['days_with_data']} of {lw['days']} days"),
            ("added flow", f"{v.added_gpd:,.0f} gpd" + (f" ({' + '.join(f'{a:,.0f}' for a in self.added_items_gpd)})" if len(self.added_items_gpd) > 1 else "")),
            ("worst period", f"{w['label']}: {v.worst_average_mgd:.4f} MGD" + ("" if w["complete"] else f" (incomplete: {w['days_present']} of {w['days_expected']} days)")),
            ("violation in prior 12 months", f"{'yes' if v.violation_in_prior_12_months else 'no'} ({v.n_violations} period(s))"),
            ("projected violation", f"{'yes' if v.projected_violation else 'no'} ({v.n_projected_violations} period(s) with the added flow)"),
            ("headroom", f"{v.headroom_gpd:,.0f} gpd after the added flow ({v.headroom_before_gpd:,.0f} gpd before)"),
            ("connection prohibited", ("yes: " + ", ".join(v.grounds)) if v.connection_prohibited else "no"),
        ]
        return rows


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


def check_daily(record: FlowRecord, limit_mgd: float, basis: str = "month", as_of=None, added_gpd=()) -> SpdesCheck:
    """Check a daily record (as read by :func:`read_flow_csv`); ``as_of`` defaults to its last date."""
    if basis not in rule.BASES:
        raise InputError(f"basis must be one of {', '.join(rule.BASES)}; got {basis!r}")
    _check_limit(limit_mgd, float(record.flow_mgd.median()))
    items = _added(added_gpd)
    a = _as_of(as_of, record.last)
    periods = rule.period_averages(record.dates, record.values_mgd, basis)
    monthly = periods if basis == "month" else rule.monthly_averages(record.dates, record.values_mgd)
    verdict = rule.check_connection(periods, limit_mgd, a, items or 0.0)
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
                      present, n_window)


def check_dmr(dmr: DmrRecord, limit_mgd: float | None = None, basis: str = "month", as_of=None, added_gpd=()) -> SpdesCheck:
    """Check monthly DMR values (``MO AVG``); ``limit_mgd`` defaults to the DMR's own limit."""
    if basis not in ("month", "12month"):
        raise InputError(
            f"basis {basis!r} needs daily flows; a DMR's monthly averages support the month and 12month bases"
        )
    if limit_mgd is None:
        if dmr.limit_mgd is None:
            raise InputError(f"{dmr.source}: the DMR gives no limit for {dmr.statistical_base}; give --limit-mgd")
        limit_mgd = dmr.limit_mgd
    ok = dmr.monthly["average_mgd"].notna()
    if not ok.any():
        raise InputError(f"{dmr.source}: no monthly flow value reported")
    _check_limit(limit_mgd, float(dmr.monthly.loc[ok, "average_mgd"].median()))
    items = _added(added_gpd)
    ends = dmr.monthly.loc[ok, "period_end"].to_numpy().astype("datetime64[D]")
    monthly = rule.monthly_periods_from_values(ends, dmr.monthly.loc[ok, "average_mgd"].to_numpy())
    periods = monthly if basis == "month" else rule.rolling_12month_averages(monthly)
    a = _as_of(as_of, dmr.monthly["period_end"].max())
    verdict = rule.check_connection(periods, limit_mgd, a, items or 0.0)
    in_w = rule.in_lookback(monthly.end, verdict.as_of)
    notes = list(dmr.notes)
    if dmr.limit_mgd is not None and not np.isclose(dmr.limit_mgd, limit_mgd):
        notes.append(f"the DMR's own limit is {dmr.limit_mgd:g} MGD; checked against {limit_mgd:g} MGD as given")
    missing = [str(np.datetime64(e, "M")) for e, have in zip(monthly.end, monthly.days_present > 0) if not have]
    gaps = [f"{m} (no DMR value)" for m in missing]
    lo = pd.Timestamp(verdict.window_start_exclusive) + pd.Timedelta(days=1)
    hi = pd.Timestamp(verdict.as_of)
    return SpdesCheck(dmr.source, "dmr", basis, float(limit_mgd), items, verdict, periods, monthly, gaps, notes,
                      int(monthly.days_present[in_w].sum()), int((hi - lo).days) + 1)


def _as_of(as_of, default) -> np.datetime64:
    if as_of is None:
        return np.datetime64(pd.Timestamp(default).date(), "D")
    try:
        return np.datetime64(pd.Timestamp(str(as_of)).date(), "D")
    except (ValueError, TypeError):
        raise InputError(f"--as-of must be a date YYYY-MM-DD; got {as_of!r}") from None


def resolve_flows_path(ref: str) -> Path:
    """A flow CSV path, or the name of a bundled record in ``models/plants/`` (``sample-wwtp``)."""
    p = Path(ref)
    if path_exists(p):
        return p
    candidate = bundled_dir("models") / "plants" / (p.name if p.suffix == ".csv" else f"{p.name}.csv")
    if path_exists(candidate):
        return candidate
    return p  # the reader reports "file not found" with the path as given


def run_check(
    *,
    flows: str | None = None,
    dmr: str | None = None,
    limit_mgd: float | None = None,
    basis: str = "month",
    as_of=None,
    added_gpd=(),
    date_column: str = "date",
    flow_column: str = "flow_mgd",
    units: str | None = None,
    outfall: str | None = None,
    location: str | None = None,
) -> SpdesCheck:
    """Read a record (daily CSV or ECHO DMR) and check it (the report is :func:`capacitysim.report.spdes.write_report`)."""
    if (flows is None) == (dmr is None):
        raise InputError("give the plant's flow record once: --flows (daily CSV) or --dmr (ECHO DMR download)")
    if flows is not None:
        if limit_mgd is None:
            raise InputError("--limit-mgd is required with --flows (the permit's flow limit in MGD)")
        rec = read_flow_csv(resolve_flows_path(flows), date_column=date_column, flow_column=flow_column, units=units)
        result = check_daily(rec, limit_mgd, basis, as_of, added_gpd)
    else:
        result = check_dmr(read_echo_dmr(dmr, outfall=outfall, location=location), limit_mgd, basis, as_of, added_gpd)
    return result


def phosphorus(permitted_gpd: float) -> dict:
    """The § 18-36(a)(8) phosphorus limit of a permitted flow [gpd], with the table row it falls in.

    The permitted flow must be in (0, MAX_FLOW_GPD] (a larger figure is a unit error).
    """
    q = float(permitted_gpd)
    if q > MAX_FLOW_GPD:
        raise InputError(f"--permitted-gpd must be <= {MAX_FLOW_GPD:,.0f} gpd (1,000 MGD; a unit error?); got {q:g}")
    return {
        "rule": "15 RCNY § 18-36(a)(8)",
        "permitted_flow_gpd": float(permitted_gpd),
        "band": rule.phosphorus_band(permitted_gpd),
        "total_phosphorus_limit_mg_l": rule.phosphorus_limit_mg_l(permitted_gpd),
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
