"""SPDES flow-limit checks for new sewer connections and the watershed phosphorus limits (15 RCNY ch. 18).

Pure functions over a daily flow record (``dates`` as ``datetime64[D]``, ``flow_mgd`` as floats): the
period averages a permit's flow parameter is judged on, the periods that exceeded the limit, the check
of 15 RCNY § 18-37(b) as of a date, with or without added flow, and the phosphorus limit of
§ 18-36(a)(8).

The rule
--------
15 RCNY § 18-37(b) reads:

    "A new sewer connection or sewer extension to a sewer system is prohibited where the wastewater
    treatment plant to which the sewer system has been connected and which discharges within the
    watershed has had a SPDES flow parameter violation in the prior twelve months, or where the
    additional flow from the new sewer connection or sewer extension will cause or can be expected
    to cause such wastewater treatment plant to have a SPDES flow parameter violation as defined
    herein."

The prohibition reaches only a plant "which discharges within the watershed". For a plant that
discharges elsewhere (Binghamton's plants, to the Susquehanna) § 18-37(b) does not apply; the
treatment capacity shown for it is the permitted-flow headroom under the plant's own SPDES permit
(:func:`treatment_capacity_shown`, named policy :data:`POLICY_PERMITTED_FLOW_HEADROOM`).

The copy of chapter 18 in ``../shared/regulations`` does not carry a definition of "SPDES flow
parameter violation". capacitysim takes it as the permit's flow limit [MGD] exceeded on the permit's
own averaging basis (a setting of the permit, see :data:`BASES`).

Definitions used here (state them in any submission)
---------------------------------------------------
period average
    The arithmetic mean of the daily flows present in the period [MGD]. A period with missing days
    is averaged over the days present and flagged ``complete = False``; nothing is filled in.
violation
    A period whose average *exceeds* the limit: ``average > limit``. A period exactly at the limit
    is not a violation. Averages of equal floats can differ from the exact value by a few units in
    the last place, so differences within :data:`EQUALITY_RTOL` of the limit count as equal.
prior twelve months (the look-back window)
    A period counts when its **end date** falls in ``(as_of - 12 months, as_of]``: after the date
    exactly twelve calendar months before the as-of date, up to and including the as-of date. A
    period ending exactly twelve months before is outside; one ending a day later is inside; a
    period still running on the as-of date (ending after it) is not yet a period and does not
    count. "12 months before" keeps the day of the month (clamped to the month's length), and a
    month-end as-of date maps to the month end (28 or 29 Feb), so an as-of date at a month end
    always sees exactly twelve calendar-month periods, leap years included
    (:func:`months_before`).
added flow
    The average daily flow of the new connection or extension [gpd] (or the sum of pending ones).
    Added to every day, it adds exactly its own value to the average of any set of days, so on every
    basis (calendar month, 30-day, 12-month of monthly averages) each period's average rises by the
    added flow converted to MGD.
headroom
    ``limit - (worst period average in the look-back window + added flow)`` [gpd]: what is left under
    the limit in the worst period after the added flow; negative means the added flow (or the record
    alone) exceeds the limit by that much.

References
----------
.. [1] 15 RCNY § 18-37(b), New York City Department of Environmental Protection, Rules and
   Regulations for the Protection from Contamination, Degradation and Pollution of the New York
   City Water Supply and Its Sources (amended City Record 10/30/2019).
.. [2] 15 RCNY § 18-36(a)(8), same rules: the table of total phosphorus limits by SPDES permitted
   total flow.
.. [3] NYSDEC SPDES permits, definitions of the flow averaging bases: the monthly average (the
   average of the daily values in a calendar month, reported on the DMR), the 30-day average, and
   the 12-month rolling average (the current monthly average and the previous eleven monthly
   averages, averaged). Not in ``../shared``; cited from NYSDEC permit practice.
.. [4] 15 RCNY § 18-37(c)(1)-(3), (e) and (j)(2), same rules: the notice, permit and statement
   conditions of a sewer connection, the five-year expiry of an approval, and the letter of flow
   acceptance (:data:`CONDITIONS`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from capacitysim.checks import (
    as_float_array,
    check_choice,
    check_range,
    scalar_or_array,
)
from capacitysim.errors import InputError
from capacitysim.rules.nyc_stormwater import PROGRAM_INTERPRETATION
from capacitysim.units import GPD_PER_MGD

#: Averaging bases of a permit's flow parameter: calendar-month average (the DMR monthly average,
#: the default), 30-day rolling average, 12-month rolling average of monthly averages [3].
BASES = ("month", "30day", "12month")

#: Days in the rolling window of the ``30day`` basis [3].
ROLLING_WINDOW_DAYS = 30

#: Calendar months in the rolling window of the ``12month`` basis [3].
ROLLING_WINDOW_MONTHS = 12

#: The look-back of § 18-37(b): "in the prior twelve months" [1].
LOOKBACK_MONTHS = 12

#: Relative tolerance under which an average and the limit count as equal (1e-9: 0.0005 gpd on a
#: 0.5 MGD limit; floating-point means of equal values can miss the value by a few ulps).
EQUALITY_RTOL = 1e-9

#: 15 RCNY § 18-36(a)(8) [2]: "SPDES Permitted Total Flow (Gallons/day) | Total Phosphorus Limit (mg/l)"
#: "≤ 50,000 | 1.0", "> 50,000 and < 500,000 | 0.5", "≥ 500,000 | 0.2".
PHOSPHORUS_FLOW_BREAK_LOW_GPD = 50_000.0
PHOSPHORUS_FLOW_BREAK_HIGH_GPD = 500_000.0
PHOSPHORUS_LIMIT_SMALL_MG_L = 1.0
PHOSPHORUS_LIMIT_MEDIUM_MG_L = 0.5
PHOSPHORUS_LIMIT_LARGE_MG_L = 0.2

GROUND_PRIOR_VIOLATION = "prior violation"
GROUND_ADDED_FLOW = "added flow"

_RULE_TEXT_PRIOR = (
    "15 RCNY § 18-37(b): the plant has had a SPDES flow parameter violation in the prior twelve months"
)
_RULE_TEXT_ADDED = (
    "15 RCNY § 18-37(b): the additional flow will cause or can be expected to cause a SPDES flow "
    "parameter violation"
)


# --------------------------------------------------------------------------------------------
# phosphorus
# --------------------------------------------------------------------------------------------


def phosphorus_limit_mg_l(permitted_flow_gpd):
    """Total phosphorus limit of a watershed wastewater treatment plant [mg/l].

    15 RCNY § 18-36(a)(8): "Wastewater treatment plants with either surface or subsurface
    discharges within the watershed shall provide phosphorus removal using the best treatment
    technology so that the wastewater treatment plant is designed to be operated and maintained to
    meet the following requirements:

    ==========================================  =================================
    SPDES Permitted Total Flow (Gallons/day)    Total Phosphorus Limit (mg/l)
    ==========================================  =================================
    ≤ 50,000                                    1.0
    > 50,000 and < 500,000                      0.5
    ≥ 500,000                                   0.2
    ==========================================  ================================="

    The boundaries are as written: exactly 50,000 gpd is 1.0 mg/l; exactly 500,000 gpd is 0.2 mg/l.

    Parameters
    ----------
    permitted_flow_gpd : float or array_like
        SPDES permitted total flow [gpd], > 0.

    Returns
    -------
    float or ndarray
        Total phosphorus limit [mg/l]; scalars in give a float out.

    References
    ----------
    .. [1] 15 RCNY § 18-36(a)(8).
    """
    q = check_range("permitted_flow_gpd", permitted_flow_gpd, 0.0, None, low_inclusive=False, unit="gpd")
    out = np.where(
        q <= PHOSPHORUS_FLOW_BREAK_LOW_GPD,
        PHOSPHORUS_LIMIT_SMALL_MG_L,
        np.where(q < PHOSPHORUS_FLOW_BREAK_HIGH_GPD, PHOSPHORUS_LIMIT_MEDIUM_MG_L, PHOSPHORUS_LIMIT_LARGE_MG_L),
    )
    return scalar_or_array(out)


def phosphorus_band(permitted_flow_gpd: float) -> str:
    """The row of the § 18-36(a)(8) table a permitted flow falls in, as the rule words it."""
    q = float(check_range("permitted_flow_gpd", permitted_flow_gpd, 0.0, None, low_inclusive=False, unit="gpd"))
    if q <= PHOSPHORUS_FLOW_BREAK_LOW_GPD:
        return "≤ 50,000 gpd"
    if q < PHOSPHORUS_FLOW_BREAK_HIGH_GPD:
        return "> 50,000 and < 500,000 gpd"
    return "≥ 500,000 gpd"


# --------------------------------------------------------------------------------------------
# dates
# --------------------------------------------------------------------------------------------


def _as_days(name: str, value) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype="datetime64[D]")
    except (TypeError, ValueError):
        raise InputError(f"{name} must be dates (YYYY-MM-DD), got {value!r}") from None
    if np.isnat(arr).any():
        idx = int(np.flatnonzero(np.isnat(arr).reshape(-1))[0])
        raise InputError(f"{name} must not hold missing dates (NaT at index {idx})")
    return arr


def _month_start(month: np.ndarray) -> np.ndarray:
    return month.astype("datetime64[D]")


def _month_end(month: np.ndarray) -> np.ndarray:
    return (month + 1).astype("datetime64[D]") - np.timedelta64(1, "D")


def _days_in_month(month: np.ndarray) -> np.ndarray:
    return ((month + 1).astype("datetime64[D]") - month.astype("datetime64[D]")).astype(np.int64)


def months_before(date, months: int = LOOKBACK_MONTHS):
    """The date ``months`` calendar months before ``date``.

    The day of the month is kept and clamped to the target month's length (30 Mar 2024 minus one
    month is 29 Feb 2024); a date that is the last day of its month maps to the last day of the
    target month, so 28 Feb 2025 minus 12 months
    is 29 Feb 2024 and 29 Feb 2024 minus 12 months is 28 Feb 2023. This is the convention that
    makes a month-end as-of date see exactly twelve calendar-month periods in the look-back window
    of 15 RCNY § 18-37(b) ("in the prior twelve months").

    Parameters
    ----------
    date : datetime64[D] or array_like of dates
    months : int
        Calendar months to go back (>= 0).

    Returns
    -------
    numpy.datetime64 or ndarray of datetime64[D]
    """
    if int(months) != months or months < 0:
        raise InputError(f"months must be a whole number >= 0, got {months!r}")
    d = _as_days("date", date)
    m = d.astype("datetime64[M]")
    day = (d - _month_start(m)).astype(np.int64) + 1
    is_end = d == _month_end(m)
    tm = m - np.timedelta64(int(months), "M")
    clamped = _month_start(tm) + (np.minimum(day, _days_in_month(tm)) - 1).astype("timedelta64[D]")
    out = np.where(is_end, _month_end(tm), clamped)
    return out[()] if out.ndim == 0 else out


def in_lookback(period_end, as_of, months: int = LOOKBACK_MONTHS):
    """Whether each period end falls in the look-back window ``(as_of - months, as_of]``.

    15 RCNY § 18-37(b): "has had a SPDES flow parameter violation in the prior twelve months". A
    period counts when it *ended* after the date exactly twelve months before ``as_of`` and on or
    before ``as_of`` (see :func:`months_before` for month ends and leap years).
    """
    end = _as_days("period_end", period_end)
    a = _as_days("as_of", as_of)
    start_excl = months_before(a, months)
    return (end > start_excl) & (end <= a)


# --------------------------------------------------------------------------------------------
# period averages
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PeriodAverages:
    """The periods of a flow record on one averaging basis, oldest first.

    Attributes
    ----------
    basis : str
        One of :data:`BASES`.
    start, end : ndarray of datetime64[D]
        First and last day of each period (both inclusive).
    average_mgd : ndarray of float
        Average of the daily flows present in the period [MGD] (12-month basis: the mean of the
        monthly averages present).
    days_present, days_expected : ndarray of int
        Days with a flow value in the period, and calendar days in it.
    complete : ndarray of bool
        ``days_present == days_expected`` (12-month basis: all twelve months present and complete).
    """

    basis: str
    start: np.ndarray
    end: np.ndarray
    average_mgd: np.ndarray
    days_present: np.ndarray
    days_expected: np.ndarray
    complete: np.ndarray = field(repr=False)

    def __len__(self) -> int:
        return int(self.end.size)

    def select(self, mask: np.ndarray) -> PeriodAverages:
        """The periods where ``mask`` is true."""
        return PeriodAverages(
            self.basis,
            self.start[mask],
            self.end[mask],
            self.average_mgd[mask],
            self.days_present[mask],
            self.days_expected[mask],
            self.complete[mask],
        )


def validate_record(dates, flow_mgd) -> tuple[np.ndarray, np.ndarray]:
    """Check a daily record: dates strictly increasing (sorted, no duplicates), flows finite and >= 0.

    Missing days are allowed (they are gaps, reported by the averages as incomplete periods); a
    missing flow must be left out of the record, not given as NaN.

    Returns
    -------
    (dates as datetime64[D], flow_mgd as float64)
    """
    d = _as_days("dates", dates).reshape(-1)
    q = as_float_array("flow_mgd", flow_mgd).reshape(-1)
    if d.size != q.size:
        raise InputError(f"dates and flow_mgd must have the same length, got {d.size} and {q.size}")
    if d.size == 0:
        raise InputError("the flow record is empty: no dates")
    check_range("flow_mgd", q, 0.0, None, unit="MGD")
    step = np.diff(d).astype(np.int64)
    if (step <= 0).any():
        i = int(np.flatnonzero(step <= 0)[0]) + 1
        what = "duplicate" if step[i - 1] == 0 else "out of order"
        raise InputError(
            f"dates must be strictly increasing (one value a day, sorted): {d[i]} at index {i} is {what} "
            f"after {d[i - 1]} at index {i - 1}"
        )
    return d, q


def monthly_averages(dates, flow_mgd) -> PeriodAverages:
    """Calendar-month averages [MGD] of a daily record: the DMR monthly average [3].

    Every month from the record's first to its last is a period; a month with some days missing is
    averaged over the days present and flagged incomplete; a month with no day at all has
    ``average_mgd`` NaN and ``days_present`` 0.
    """
    d, q = validate_record(dates, flow_mgd)
    m = d.astype("datetime64[M]")
    months = np.arange(m[0], m[-1] + 1)
    idx = (m - m[0]).astype(np.int64)
    sums = np.bincount(idx, weights=q, minlength=months.size)
    counts = np.bincount(idx, minlength=months.size).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        avg = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    expected = _days_in_month(months)
    return PeriodAverages("month", _month_start(months), _month_end(months), avg, counts, expected, counts == expected)


def rolling_30day_averages(dates, flow_mgd, window_days: int = ROLLING_WINDOW_DAYS) -> PeriodAverages:
    """30-day rolling averages [MGD]: one period ending on each calendar day [3].

    The period ending on day ``t`` covers ``t - 29 .. t``. The first period ends on the record's
    first day + 29 (a full window of calendar days inside the record); the last on its last day.
    Days missing from a window make it incomplete; a window with no day at all is left out.
    """
    d, q = validate_record(dates, flow_mgd)
    n_days = int((d[-1] - d[0]).astype(np.int64)) + 1
    if n_days < window_days:
        raise InputError(
            f"the record spans {n_days} days, fewer than the {window_days}-day window of the 30day basis"
        )
    pos = (d - d[0]).astype(np.int64)
    flow = np.zeros(n_days)
    have = np.zeros(n_days, dtype=np.int64)
    flow[pos] = q
    have[pos] = 1
    csum = np.concatenate(([0.0], np.cumsum(flow)))
    ccount = np.concatenate(([0], np.cumsum(have)))
    ends = np.arange(window_days - 1, n_days)
    sums = csum[ends + 1] - csum[ends + 1 - window_days]
    counts = ccount[ends + 1] - ccount[ends + 1 - window_days]
    keep = counts > 0
    ends, sums, counts = ends[keep], sums[keep], counts[keep]
    end_dates = d[0] + ends.astype("timedelta64[D]")
    return PeriodAverages(
        "30day",
        end_dates - np.timedelta64(window_days - 1, "D"),
        end_dates,
        sums / counts,
        counts,
        np.full(counts.size, window_days, dtype=np.int64),
        counts == window_days,
    )


def rolling_12month_averages(monthly: PeriodAverages, window_months: int = ROLLING_WINDOW_MONTHS) -> PeriodAverages:
    """12-month rolling averages [MGD]: the mean of a month's average and the eleven before it [3].

    Takes calendar-month periods (from :func:`monthly_averages` or a DMR's monthly averages). The
    first period ends with the record's twelfth month. Months without data are left out of the
    mean and make the period incomplete; a window with no month at all is left out.
    """
    if monthly.basis != "month":
        raise InputError(f"rolling_12month_averages needs calendar-month periods, got basis {monthly.basis!r}")
    months = monthly.end.astype("datetime64[M]")
    if months.size and (np.diff(months).astype(np.int64) != 1).any():
        raise InputError("monthly periods must be consecutive calendar months (leave missing months as NaN)")
    n = months.size
    if n < window_months:
        raise InputError(f"the record spans {n} months, fewer than the {window_months} months of the 12month basis")
    avg = monthly.average_mgd
    have = ~np.isnan(avg)
    csum = np.concatenate(([0.0], np.cumsum(np.where(have, avg, 0.0))))
    cnt = np.concatenate(([0], np.cumsum(have.astype(np.int64))))
    cc = np.concatenate(([0], np.cumsum(monthly.complete.astype(np.int64))))
    dp = np.concatenate(([0], np.cumsum(monthly.days_present)))
    de = np.concatenate(([0], np.cumsum(monthly.days_expected)))
    last = np.arange(window_months - 1, n)
    first = last + 1 - window_months
    counts = cnt[last + 1] - cnt[first]
    keep = counts > 0
    last, first, counts = last[keep], first[keep], counts[keep]
    sums = csum[last + 1] - csum[first]
    n_complete = cc[last + 1] - cc[first]
    return PeriodAverages(
        "12month",
        monthly.start[first],
        monthly.end[last],
        sums / counts,
        dp[last + 1] - dp[first],
        de[last + 1] - de[first],
        n_complete == window_months,
    )


def period_averages(dates, flow_mgd, basis: str = "month") -> PeriodAverages:
    """The periods of a daily record on a permit's averaging basis (one of :data:`BASES`)."""
    check_choice("basis", basis, BASES)
    if basis == "month":
        return monthly_averages(dates, flow_mgd)
    if basis == "30day":
        return rolling_30day_averages(dates, flow_mgd)
    return rolling_12month_averages(monthly_averages(dates, flow_mgd))


def monthly_periods_from_values(period_end, average_mgd) -> PeriodAverages:
    """Calendar-month periods from reported monthly averages (a DMR's ``MO AVG`` values) [MGD].

    ``period_end`` are the monitoring period end dates (the last day of each month). Months between
    the first and last without a value become NaN periods (``days_present`` 0); months with a value
    are taken as reported (``days_present`` = the month's days: the DMR does not say how many days
    its average used).
    """
    end = _as_days("period_end", period_end).reshape(-1)
    avg = as_float_array("average_mgd", average_mgd).reshape(-1)
    if end.size != avg.size or end.size == 0:
        raise InputError(f"period_end and average_mgd must be non-empty and of one length, got {end.size} and {avg.size}")
    check_range("average_mgd", avg, 0.0, None, unit="MGD")
    m = end.astype("datetime64[M]")
    not_end = end != _month_end(m)
    if not_end.any():
        i = int(np.flatnonzero(not_end)[0])
        raise InputError(f"period_end {end[i]} at index {i} is not the last day of a month (monthly averages end on month ends)")
    step = np.diff(m).astype(np.int64)
    if (step <= 0).any():
        i = int(np.flatnonzero(step <= 0)[0]) + 1
        raise InputError(f"monthly periods must be sorted and unique: {end[i]} at index {i} follows {end[i - 1]}")
    months = np.arange(m[0], m[-1] + 1)
    idx = (m - m[0]).astype(np.int64)
    out = np.full(months.size, np.nan)
    out[idx] = avg
    expected = _days_in_month(months)
    present = np.zeros(months.size, dtype=np.int64)
    present[idx] = expected[idx]
    return PeriodAverages("month", _month_start(months), _month_end(months), out, present, expected, present == expected)


# --------------------------------------------------------------------------------------------
# violations and the check
# --------------------------------------------------------------------------------------------


def _limit_and_added(limit_mgd, added_gpd) -> tuple[float, float]:
    limit = float(check_range("limit_mgd", limit_mgd, 0.0, None, low_inclusive=False, unit="MGD"))
    added = check_range("added_gpd", added_gpd, 0.0, None, unit="gpd")
    return limit, float(np.sum(added))


def exceeds(average_mgd, limit_mgd, added_gpd=0.0):
    """Whether ``average + added`` exceeds the limit (strictly; equal within :data:`EQUALITY_RTOL` is not).

    NaN averages (periods without data) never exceed.
    """
    limit, added = _limit_and_added(limit_mgd, added_gpd)
    avg = np.asarray(average_mgd, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        out = (avg + added / GPD_PER_MGD) > limit * (1.0 + EQUALITY_RTOL)
    return out


def violations(periods: PeriodAverages, limit_mgd, added_gpd=0.0) -> PeriodAverages:
    """Every period whose average (plus ``added_gpd``) exceeded the limit.

    A SPDES flow parameter violation, as capacitysim reads 15 RCNY § 18-37(b): the period average on
    the permit's basis above the flow limit; a period exactly at the limit is not a violation.

    Parameters
    ----------
    periods : PeriodAverages
    limit_mgd : float
        The permit's flow limit [MGD], > 0.
    added_gpd : float or array_like
        Added average daily flow [gpd] (summed when several); 0 for the record as it is.
    """
    return periods.select(exceeds(periods.average_mgd, limit_mgd, added_gpd))


@dataclass(frozen=True)
class SpdesVerdict:
    """The answer of 15 RCNY § 18-37(b) for one as-of date, limit and added flow.

    Attributes
    ----------
    as_of, window_start_exclusive : numpy.datetime64
        The look-back window is ``(window_start_exclusive, as_of]`` (period end dates).
    violation_in_prior_12_months : bool
        A period of the window exceeded the limit with the record as it is.
    projected_violation : bool
        A period of the window would have exceeded the limit with the committed and the added flow on top.
    connection_prohibited : bool
        Either of the two.
    grounds : tuple of str
        :data:`GROUND_PRIOR_VIOLATION` and/or :data:`GROUND_ADDED_FLOW`.
    added_gpd : float
        Total added flow [gpd].
    committed_gpd : float
        Flow already committed to the plant and not yet in its record [gpd] (the credit bank's
        commitments, issue 24): part of the baseline the added flow is judged on top of.
    worst_index : int
        Index (into ``window``) of the period with the highest average.
    worst_average_mgd, worst_projected_mgd : float
        That period's recorded average, and with the committed and the added flow [MGD].
    headroom_before_gpd, headroom_gpd : float
        Limit minus the worst average and the committed flow, before and after the added flow [gpd].
    window : PeriodAverages
        The periods that count (end date in the window).
    n_violations, n_projected_violations, n_incomplete : int
        Periods of the window exceeding the limit (record; with committed and added flow) and with missing days.
    committed_exceeded : bool
        A period of the window would have exceeded the limit with the committed flow alone on top
        (the headroom before the added flow is negative).
    """

    as_of: np.datetime64
    window_start_exclusive: np.datetime64
    limit_mgd: float
    added_gpd: float
    violation_in_prior_12_months: bool
    projected_violation: bool
    connection_prohibited: bool
    grounds: tuple
    worst_index: int
    worst_average_mgd: float
    worst_projected_mgd: float
    headroom_before_gpd: float
    headroom_gpd: float
    window: PeriodAverages = field(repr=False)
    n_violations: int
    n_projected_violations: int
    n_incomplete: int
    committed_gpd: float = 0.0
    committed_exceeded: bool = False

    @property
    def on_top_gpd(self) -> float:
        """The flow on top of the record in the projection: committed + added [gpd]."""
        return self.committed_gpd + self.added_gpd

    @property
    def reasons(self) -> list[str]:
        """The rule text behind each ground."""
        text = {GROUND_PRIOR_VIOLATION: _RULE_TEXT_PRIOR, GROUND_ADDED_FLOW: _RULE_TEXT_ADDED}
        return [text[g] for g in self.grounds]


def check_connection(periods: PeriodAverages, limit_mgd, as_of, added_gpd=0.0, committed_gpd=0.0) -> SpdesVerdict:
    """Apply 15 RCNY § 18-37(b) to a plant's periods as of a date.

    "A new sewer connection or sewer extension to a sewer system is prohibited where the wastewater
    treatment plant ... has had a SPDES flow parameter violation in the prior twelve months, or
    where the additional flow from the new sewer connection or sewer extension will cause or can be
    expected to cause such wastewater treatment plant to have a SPDES flow parameter violation".

    The periods that count are those ending in ``(as_of - 12 months, as_of]`` (:func:`in_lookback`).
    Ground 1 (prior violation): one of them exceeded the limit. Ground 2 (added flow): one of them
    would have exceeded it with the added average daily flow on top of its average (the record of
    the last twelve months as the expectation of the next). Headroom =
    limit - (max period average in the window + committed flow + added flow), in gpd.

    Flow already committed to the plant (approved connections not yet in its record, issue 24) is
    part of the baseline: ground 2 is judged with the committed AND the added flow on top of each
    period; ground 1 (the record) is not changed by it.

    Parameters
    ----------
    periods : PeriodAverages
        From :func:`period_averages` (or :func:`monthly_periods_from_values`).
    limit_mgd : float
        The permit's flow limit [MGD] on the basis of ``periods``.
    as_of : date
        The date of the check (datetime64[D] or ``"YYYY-MM-DD"``).
    added_gpd : float or array_like
        Average daily flow of the new connection(s) [gpd], >= 0; several values are summed
        (pending connections).
    committed_gpd : float
        Average daily flow already committed to the plant and not in its record [gpd], >= 0
        (the credit bank's commitments); default 0.

    Raises
    ------
    InputError
        When no period with data ends in the window.
    """
    limit, added = _limit_and_added(limit_mgd, added_gpd)
    committed = float(check_range("committed_gpd", committed_gpd, 0.0, None, unit="gpd"))
    a = _as_days("as_of", as_of).reshape(())[()]
    start_excl = months_before(a, LOOKBACK_MONTHS)
    mask = in_lookback(periods.end, a) & ~np.isnan(periods.average_mgd)
    window = periods.select(mask)
    if len(window) == 0:
        raise InputError(
            f"as_of {a}: no {periods.basis} period with data ends in the look-back window "
            f"({start_excl}, {a}]; the record's periods end {periods.end[0] if len(periods) else '-'} "
            f"to {periods.end[-1] if len(periods) else '-'}"
        )
    rec = exceeds(window.average_mgd, limit, 0.0)
    proj = exceeds(window.average_mgd, limit, committed + added)
    worst = int(np.argmax(window.average_mgd))
    worst_avg = float(window.average_mgd[worst])
    prior, projected = bool(rec.any()), bool(proj.any())
    grounds = tuple(g for g, on in ((GROUND_PRIOR_VIOLATION, prior),
                                    (GROUND_ADDED_FLOW, projected and committed + added > 0)) if on)
    headroom_before = (limit - worst_avg) * GPD_PER_MGD - committed
    return SpdesVerdict(
        as_of=a,
        window_start_exclusive=start_excl,
        limit_mgd=limit,
        added_gpd=added,
        violation_in_prior_12_months=prior,
        projected_violation=projected,
        connection_prohibited=prior or projected,
        grounds=grounds,
        worst_index=worst,
        worst_average_mgd=worst_avg,
        worst_projected_mgd=worst_avg + (committed + added) / GPD_PER_MGD,
        headroom_before_gpd=headroom_before,
        headroom_gpd=headroom_before - added,
        window=window,
        n_violations=int(rec.sum()),
        n_projected_violations=int(proj.sum()),
        n_incomplete=int((~window.complete).sum()),
        committed_gpd=committed,
        committed_exceeded=bool(committed > 0 and exceeds(window.average_mgd, limit, committed).any()),
    )


# --------------------------------------------------------------------------------------------
# watershed applicability, treatment capacity, conditions, named policies
# --------------------------------------------------------------------------------------------

#: The citation of the prohibition (watershed plants only).
CITATION_18_37_B = "15 RCNY § 18-37(b)"

#: The conditions of 15 RCNY § 18-37 that go with a new sewer connection (or sewer extension) to a
#: watershed plant [4], one record per condition: ``text`` paraphrases the rule, ``citation`` names
#: the paragraph, ``applies_when`` says to which connection it applies (the inputs of the check do
#: not say which kind of connection it is; the reviewer confirms). The rule reads:
#:
#: (c)(1) "The owner of any individual residence that will be served by a new sewer connection ...
#: shall notify the Department 48 hours prior to the installation ... and provide an opportunity to
#: the Department to observe the work. If specifically requested by the Department, the owner shall
#: submit ... all plans or designs".
#: (c)(2) the owner of a structure other than an individual residence, on a sewer system "subject to
#: a qualifying municipal sewer use law", shall "(i) provide to the Department, at least 48 hours
#: prior to the installation ..., a written permit from the superintendent of the sewer system
#: authorizing such connection; and (ii) notify the Department 48 hours prior ...".
#: (c)(3) the plans of such a connection to a sewer system "for a treatment facility with a SPDES
#: permit, which is not subject to a qualifying municipal sewer use law" require DEP review and
#: approval, with 48 hours' notice as a condition of approval; the application must include "(i) A
#: written statement from the owner or operator of the treatment facility certifying that the new
#: sewer connection ... will not require a modification of the treatment facility's SPDES permit,
#: and (ii) Plans and specifications for the sewer connection."
#: (e) an approval under (c)(3) "expires and is null and void unless construction is completed within
#: five (5) years of the date of issuance".
#: (j)(2) an application for a sewer system or sewer extension includes a "Letter of flow acceptance
#: from the owner of the receiving wastewater treatment plant, when available".
CONDITIONS = (
    {"text": "Notify DEP 48 hours before installing the sewer connection (or its alteration or modification) and "
             "give DEP an opportunity to observe the work; submit the plans or designs if DEP specifically requests them.",
     "citation": "15 RCNY § 18-37(c)(1)",
     "applies_when": "the connection serves an individual residence"},
    {"text": "At least 48 hours before installation, give DEP a written permit from the superintendent of the sewer "
             "system authorizing the connection; notify DEP 48 hours before installation and give it an opportunity "
             "to observe the work.",
     "citation": "15 RCNY § 18-37(c)(2)(i)-(ii)",
     "applies_when": "the connection serves a structure other than an individual residence and the sewer system is "
                     "subject to a qualifying municipal sewer use law"},
    {"text": "The plans need DEP review and approval; the application includes a written statement from the owner or "
             "operator of the treatment plant certifying that the connection will not require a modification of the "
             "plant's SPDES permit, and the plans and specifications of the connection; as a condition of approval, "
             "notify DEP 48 hours before installation and give it an opportunity to observe the work.",
     "citation": "15 RCNY § 18-37(c)(3)(i)-(ii)",
     "applies_when": "the connection serves a structure other than an individual residence and the sewer system "
                     "(of a plant with a SPDES permit) is not subject to a qualifying municipal sewer use law"},
    {"text": "A DEP approval of a new or altered sewer system, a sewer extension (reviewed under § 18-37(d)) or a sewer "
             "connection (under § 18-37(c)(3)) expires and is null and void unless construction is completed within "
             "five (5) years of the date of issuance; after it expires the plans may be resubmitted for a new approval.",
     "citation": "15 RCNY § 18-37(e)",
     "applies_when": "DEP approves a new or altered sewer system or a sewer extension (§ 18-37(d)), or the connection "
                     "under § 18-37(c)(3)"},
    {"text": "The application includes a letter of flow acceptance from the owner of the receiving wastewater "
             "treatment plant, when available.",
     "citation": "15 RCNY § 18-37(j)(2)",
     "applies_when": "the application is for a sewer system or sewer extension"},
)

#: Named policy: the flow record must end no more than this many days before the as-of date [days].
#: § 18-37(b) looks at "the prior twelve months" but says nothing of how current the record must be;
#: 45 days is the program's figure (issue 14, item 10), not the rule's.
RECORD_MAX_AGE_DAYS = 45
POLICY_RECORD_MAX_AGE = "record_max_age_days"
#: Named policy: the as-of date of the check is today, or the application date when given.
POLICY_AS_OF = "as_of_default"
#: Named policy: a non-watershed plant shows treatment capacity when its permitted-flow headroom after
#: the added flow is >= 0, judged on the permit's basis over the same twelve-month look-back.
POLICY_PERMITTED_FLOW_HEADROOM = "permitted_flow_headroom"
#: Named policy: a "SPDES flow parameter violation" is a period average above the permit's flow limit.
POLICY_FLOW_VIOLATION = "flow_parameter_violation"

_POLICY_TEXT = {
    POLICY_RECORD_MAX_AGE: (
        f"The flow record must end no more than {RECORD_MAX_AGE_DAYS} days before the as-of date; an older record is "
        "warned about (refused with --strict-record-age). The rule does not say how current the record must be."
    ),
    POLICY_AS_OF: (
        "The as-of date of the check (the end of 'the prior twelve months') is today, or the application date when given; "
        "an explicit --as-of overrides both. The rule does not name the date."
    ),
    POLICY_PERMITTED_FLOW_HEADROOM: (
        "For a plant that does not discharge within the NYC watershed, treatment capacity is shown when the "
        "permit's flow limit minus (the highest period average on the permit's basis ending in the twelve months "
        "before the as-of date + the flow committed to the plant, when the credit bank's commitments are given, + the "
        "added flow) is >= 0 gpd."
    ),
    POLICY_FLOW_VIOLATION: (
        "A SPDES flow parameter violation is a period average on the permit's own basis above the permit's flow "
        "limit; a period exactly at the limit is not a violation. The copy of chapter 18 used does not define it."
    ),
}


def policy(name: str, value=None) -> dict:
    """A named program policy as the result documents show it: ``name``, ``value``, ``text`` and
    ``status`` (:data:`PROGRAM_INTERPRETATION`: never presented as the rule)."""
    if name not in _POLICY_TEXT:
        raise InputError(f"policy must be one of {', '.join(_POLICY_TEXT)}; got {name!r}")
    return {"name": name, "value": value, "text": _POLICY_TEXT[name], "status": PROGRAM_INTERPRETATION}


def record_age_days(record_end, as_of) -> int:
    """Days from the last day of the record with data to the as-of date [days] (negative: the record
    runs past the as-of date)."""
    end = _as_days("record_end", record_end).reshape(())[()]
    a = _as_days("as_of", as_of).reshape(())[()]
    return int((a - end).astype(np.int64))


def record_is_stale(record_end, as_of, max_age_days: int = RECORD_MAX_AGE_DAYS) -> bool:
    """Whether the record ends more than ``max_age_days`` before the as-of date (policy
    :data:`POLICY_RECORD_MAX_AGE`); exactly ``max_age_days`` is not stale."""
    return record_age_days(record_end, as_of) > max_age_days


def treatment_capacity_shown(verdict: SpdesVerdict, watershed: bool) -> bool:
    """Whether the check shows treatment capacity for the added flow (credit bank section H(1) evidence).

    Parameters
    ----------
    verdict : SpdesVerdict
        From :func:`check_connection`.
    watershed : bool
        The plant discharges within the NYC watershed.

    Returns
    -------
    bool
        Watershed plant: the connection is not prohibited under 15 RCNY § 18-37(b) (neither ground).
        Other plant (§ 18-37(b) does not apply): the permitted-flow headroom after the added flow is
        >= 0 gpd, ``limit - (highest period average in the look-back window + committed + added) >= 0`` (named
        policy :data:`POLICY_PERMITTED_FLOW_HEADROOM`); an average within :data:`EQUALITY_RTOL` of the
        limit counts as at the limit, as for a violation.
    """
    if not isinstance(watershed, (bool, np.bool_)):
        raise InputError(f"watershed must be true or false; got {watershed!r}")
    if watershed:
        return not verdict.connection_prohibited
    return not verdict.projected_violation
