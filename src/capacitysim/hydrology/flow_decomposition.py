"""Decomposition of a metered sewer flow into base wastewater flow, groundwater infiltration and RDII.

Issue 29, item 2: the flow-meter record is split, as EPA's SSOAP toolbox does it [1]_ [2]_, into

* the **base wastewater flow** (BWF, the sanitary flow): the weekday and weekend diurnal patterns averaged
  over dry days, less the groundwater infiltration;
* the **groundwater infiltration** (GWI): a fraction (a named policy) of the dry days' minimum flows;
* the **rainfall-derived infiltration and inflow** (RDII): what is left, observed - BWF - GWI.

Dry days are chosen by a rain threshold over the day and its N antecedent days (a named policy) and a
flow-coverage test; the PE can add or remove days, and every day carries the reason it is in or out.
:func:`wet_events` then cuts the RDII into rain events (a minimum inter-event time and a minimum depth, named
policies) with the window an RTK fit would use.

Pure array math: numpy and xarray, no pandas, no files (the hydrology layer). Times are naive local
wall-clock ``datetime64`` (``MeterRecord.time_local`` and ``RainRecord.time_local`` of
:mod:`capacitysim.io.meters`), at a regular step but for the daylight-saving changes: where the wall clock
skips an hour (spring) or repeats one (fall), a step of ``step_s`` +/- 3600 s between 00:00 and 05:00 is
accepted, the day has 23 or 25 hours of steps (its coverage is counted on them), and the repeated hour's two
values both count in the patterns; any other irregular step is refused. Days are local calendar days: the
sanitary flow follows the wall clock. Rain times mark the end of their interval by default (the loggers'
and the reader's convention, ``rain_label="end"``); ``rain_label="start"`` reads the other convention.

Policies
--------
The values a PE may choose differently are module constants, and :data:`POLICIES` carries each one's text,
alternatives and citation in the shape :meth:`capacitysim.rules.policy.Policy.from_record` reads (hydrology
sits below rules, so the registration into the catalogue is done above this module):

=========================== ============================ ===========================
policy                      constant                     value
=========================== ============================ ===========================
``dry_day_rain_in``         :data:`DRY_DAY_RAIN_IN`      0.10 in per day
``dry_day_antecedent_days`` :data:`DRY_ANTECEDENT_DAYS`  3 days
``dry_day_min_coverage``    :data:`DRY_DAY_MIN_COVERAGE` 0.90 of the day's steps
``gwi_min_flow_ratio``      :data:`GWI_MIN_FLOW_RATIO`   0.85 of the dry-day minimum
``event_min_rain_in``       :data:`EVENT_MIN_RAIN_IN`    0.50 in
``event_inter_event_hr``    :data:`EVENT_INTER_EVENT_HR` 6 hr
``event_tail_hr``           :data:`EVENT_TAIL_HR`        72 hr
=========================== ============================ ===========================

References
----------
.. [1] Vallabhaneni, S., Chan, C.C., Burgess, E.H. (2007). Computer Tools for Sanitary Sewer System Capacity
   Analysis and Planning, EPA/600/R-07/111, U.S. EPA ORD (the SSOAP toolbox's technical document): the RDII
   analysis decomposes the metered flow into base wastewater flow (BWF), groundwater infiltration (GWI) and
   RDII; the dry-weather flow (DWF = BWF + GWI) is estimated from dry days, with separate weekday and weekend
   diurnal patterns, and GWI from the minimum flows of dry days; RDII is the wet-weather flow less the DWF.
.. [2] Vallabhaneni, S. et al. (2008). Sanitary Sewer Overflow Analysis and Planning (SSOAP) Toolbox user's
   manual, EPA/600/R-08/049, U.S. EPA ORD (number and title as issue 29 cites them; not checked):
   the RDII Analysis Tool's dry-day selection (rain under a threshold over the day and a number of
   preceding days, the values the user's), the DWF pattern (average flow by time of day of the weekday and
   of the weekend dry days) and the GWI entered as a fraction of the minimum dry-day flow (the user's).
.. [3] Rossman, L.A. (2022). Storm Water Management Model User's Manual Version 5.2, EPA/600/R-22/030,
   Statistical Analysis: events are separated by a minimum inter-event time (the "event separation time",
   default 6 hours).
.. [4] Innovyze RDII Analyst, "Decomposing the corrected flow data" (swmm5.org, 2017): a dry day is one whose
   rain over the last user-defined number of days is under a threshold; DWF, GWI and RDII components (a
   descendant of SSOAP, the same method).

The numbers above (0.10 in, 3 days, 0.85...) are not in [1]_ or [2]_, which leave them to the user: they
are the program's choices, named as policies so a document states them and a PE can set others. The
descriptions of [1]_ and [2]_ above are of the method, not quotations: their page text was not at hand when
this module was written (no section or page is cited), and [4]_ is the public description of the same
method that was read; check the wording against the documents before a report quotes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from capacitysim.errors import InputError
from capacitysim.units import HOURS_PER_DAY, SECONDS_PER_DAY, SECONDS_PER_HOUR
from capacitysim.xarray_setup import xr

# --- named policies (values; texts and citations in POLICIES) ----------------------------------------
#: Largest rain on a day [in] for it and the :data:`DRY_ANTECEDENT_DAYS` days after it to stay dry
#: (policy ``dry_day_rain_in``; SSOAP's threshold, the user's [2]_).
DRY_DAY_RAIN_IN = 0.10
#: Number of days before a day whose rain also must not exceed :data:`DRY_DAY_RAIN_IN` (policy
#: ``dry_day_antecedent_days``; SSOAP's "number of preceding days", the user's [2]_) [day].
DRY_ANTECEDENT_DAYS = 3
#: Smallest fraction of a day's flow steps with a value for it to be a dry day (policy
#: ``dry_day_min_coverage``) [-].
DRY_DAY_MIN_COVERAGE = 0.90
#: GWI as a fraction of the mean of the dry days' minimum flows (policy ``gwi_min_flow_ratio``; the SSOAP
#: GWI entered as a fraction of the minimum dry-day flow [2]_) [-].
GWI_MIN_FLOW_RATIO = 0.85
#: Smallest rain event depth [in] kept by :func:`wet_events` (policy ``event_min_rain_in``).
EVENT_MIN_RAIN_IN = 0.50
#: Minimum inter-event time [hr]: rain separated by a dry spell at least this long starts a new event
#: (policy ``event_inter_event_hr``; SWMM's event separation time, default 6 hr [3]_).
EVENT_INTER_EVENT_HR = 6.0
#: Hours after an event's last rain that its fitting window runs, unless the next event starts sooner
#: (policy ``event_tail_hr``) [hr].
EVENT_TAIL_HR = 72.0

WEEKDAY = "weekday"
WEEKEND = "weekend"
#: The day types of a pattern, in the order of :func:`diurnal_patterns`'s ``day_type`` dimension.
DAY_TYPES = (WEEKDAY, WEEKEND)

_SSOAP_TECH = "Vallabhaneni, Chan, Burgess (2007), EPA/600/R-07/111 (SSOAP technical document)"
_SSOAP_MANUAL = "Vallabhaneni et al. (2008), EPA/600/R-08/049 (SSOAP toolbox user's manual), RDII Analysis Tool"

#: The policies of this module, each in the record shape ``Policy.from_record`` reads (``name``, ``value``,
#: ``text``, ``alternative`` (a list of ``{"value", "text"}``), ``citation``).
POLICIES: dict[str, dict] = {
    "dry_day_rain_in": {
        "name": "dry_day_rain_in", "value": DRY_DAY_RAIN_IN,
        "text": ("a day is dry when neither it nor any of its dry_day_antecedent_days preceding days had more than "
                 "0.10 in of rain (and its flow is recorded, dry_day_min_coverage); SSOAP leaves the threshold to the "
                 "user: program choice, the PE may set another or add and remove days by name"),
        "alternative": [{"value": 0.0, "text": "no measurable rain at all on the day and the antecedent days"},
                        {"value": 0.25, "text": "0.25 in per day (a wetter climate, fewer days lost)"}],
        "citation": f"{_SSOAP_MANUAL}: dry days by a rainfall threshold over the day and preceding days",
    },
    "dry_day_antecedent_days": {
        "name": "dry_day_antecedent_days", "value": DRY_ANTECEDENT_DAYS,
        "text": ("the days before a day whose rain must also be under dry_day_rain_in for the day to be dry (3: the "
                 "fast RDII responses are over; the slow ones may last longer, and those days count as dry); "
                 "program choice"),
        "alternative": [{"value": 7, "text": "7 days (the slow infiltration response also over; fewer dry days)"},
                        {"value": 1, "text": "the day before only"}],
        "citation": f"{_SSOAP_MANUAL}: the number of preceding days of the dry-day test",
    },
    "dry_day_min_coverage": {
        "name": "dry_day_min_coverage", "value": DRY_DAY_MIN_COVERAGE,
        "text": ("a dry day must have a flow value at 90 % of its steps (a day with longer gaps would bias the mean "
                 "pattern and the minimum); the patterns average each step over the dry days that have it and "
                 "report the count; program choice"),
        "alternative": [{"value": 1.0, "text": "complete days only"}],
        "citation": None,
    },
    "gwi_min_flow_ratio": {
        "name": "gwi_min_flow_ratio", "value": GWI_MIN_FLOW_RATIO,
        "text": ("GWI is 0.85 times the mean of the dry days' minimum flows (the night minimum still holds some "
                 "sanitary flow; 0.8 to 0.9 is the common range); the rest of the dry-day flow is BWF; program choice"),
        "alternative": [{"value": 0.9, "text": "0.9 (a small sewershed whose night sanitary flow is near zero)"},
                        {"value": 0.8, "text": "0.8 (a large sewershed with more night use)"},
                        {"value": 1.0, "text": "the whole minimum flow (an upper bound of GWI)"}],
        "citation": f"{_SSOAP_TECH}; {_SSOAP_MANUAL}: GWI as a fraction of the minimum dry-weather flow",
    },
    "event_min_rain_in": {
        "name": "event_min_rain_in", "value": EVENT_MIN_RAIN_IN,
        "text": ("a rain event of less than 0.50 in gives too little RDII over the meter's noise to fit an RTK "
                 "response, and is not kept as an event (its rain stays in the windows of the events around it); "
                 "program choice"),
        "alternative": [{"value": 0.25, "text": "0.25 in (more events, noisier)"},
                        {"value": 1.0, "text": "1.0 in (the larger events only)"}],
        "citation": None,
    },
    "event_inter_event_hr": {
        "name": "event_inter_event_hr", "value": EVENT_INTER_EVENT_HR,
        "text": "rain separated by 6 hr or more without rain starts a new event (SWMM's default event separation time)",
        "alternative": [{"value": 12.0, "text": "12 hr"}, {"value": 24.0, "text": "24 hr (daily-scale events)"}],
        "citation": "Rossman (2022), SWMM 5.2 User's Manual, EPA/600/R-22/030, Statistical Analysis (event separation time)",
    },
    "event_tail_hr": {
        "name": "event_tail_hr", "value": EVENT_TAIL_HR,
        "text": ("an event's fitting window runs from its first rain to 72 hr after its last rain, or to the next "
                 "event's first rain if sooner (the slow RDII response of the RTK's third triangle); program choice"),
        "alternative": [{"value": 48.0, "text": "48 hr"}, {"value": None, "text": "to the next event's rain"}],
        "citation": None,
    },
}

_S_PER_DAY = int(SECONDS_PER_DAY)
_ONE_DAY = np.timedelta64(1, "D")


# --- inputs ---------------------------------------------------------------------------------------
def _times(name: str, time) -> np.ndarray:
    t = np.asarray(time)
    if t.ndim != 1 or not np.issubdtype(t.dtype, np.datetime64):
        raise InputError(f"{name} must be a 1-D numpy datetime64 array of naive local wall-clock times "
                         f"(got {t.dtype} of shape {t.shape})")
    if np.isnat(t).any():
        raise InputError(f"{name} has {int(np.isnat(t).sum())} missing times (NaT)")
    return t.astype("datetime64[s]")


def _dst_shift(t: np.ndarray, step_s: int) -> np.ndarray:
    """Per step of the record: +1 where the wall clock skips an hour (spring forward), -1 where it repeats
    one (fall back), 0 elsewhere. A daylight-saving change is a step of ``step_s`` +/- 3600 s with both
    wall-clock times before 05:00 (the changes happen between midnight and 04:00 local)."""
    d = np.diff(t).astype("int64")
    if d.size == 0:
        return d
    tod = (t - t.astype("datetime64[D]")).astype("int64")
    night = (tod[:-1] < 5 * SECONDS_PER_HOUR) & (tod[1:] < 5 * SECONDS_PER_HOUR)
    hour = int(SECONDS_PER_HOUR)
    return np.where(night & (d == step_s + hour), 1, np.where(night & (d == step_s - hour), -1, 0))


def _step(name: str, t: np.ndarray, step_s) -> int:
    """The record's step [s]: the one given, checked against the times, or the one the times have.

    The times are local wall clock: a daylight-saving change (:func:`_dst_shift`) is accepted; any other
    irregular step is refused (the record reader gives a regular grid, NaN in the gaps).
    """
    d = np.diff(t).astype("int64")
    if step_s is None:
        if d.size == 0:
            raise InputError(f"{name}: a record of one value has no step; give its step in seconds")
        step_s = int(np.median(d))
    step_s = int(step_s)
    if step_s <= 0:
        raise InputError(f"{name}: the step must be a positive number of seconds (got {step_s})")
    bad = np.flatnonzero((d != step_s) & (_dst_shift(t, step_s) == 0))
    if bad.size:
        i = int(bad[0])
        raise InputError(
            f"{name} is not at a regular step of {step_s} s: {bad.size} irregular steps, the first from {t[i]} to "
            f"{t[i + 1]} ({int(d[i])} s); the record reader gives a regular step with NaN in the gaps (a "
            f"daylight-saving change, one step of {step_s} +/- 3600 s between 00:00 and 05:00 wall clock, is "
            "accepted)")
    return step_s


def _values(name: str, values, n: int) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    if v.shape != (n,):
        raise InputError(f"{name} must have one value per time ({n}), got shape {v.shape}")
    if np.isinf(v).any():
        raise InputError(f"{name} has {int(np.isinf(v).sum())} infinite values")
    return v


def _dates(name: str, dates) -> np.ndarray:
    if dates is None:
        return np.array([], dtype="datetime64[D]")
    try:
        d = np.asarray(dates, dtype="datetime64[D]").ravel()
    except (ValueError, TypeError) as exc:
        raise InputError(f"{name} must be dates (YYYY-MM-DD or datetime64): {exc}") from None
    if np.isnat(d).any():
        raise InputError(f"{name} has a missing date (NaT)")
    return np.unique(d)


def _rain(rain_time, rain_in, rain_step_s, rain_label: str):
    """The rain record as (start of each interval [s], depth [in], step [s])."""
    rt = _times("rain_time", rain_time)
    step = _step("rain_time", rt, rain_step_s)
    r = _values("rain_in", rain_in, rt.size)
    if (r < 0).any():
        raise InputError(f"rain_in has {int((r < 0).sum())} negative depths")
    if rain_label not in ("start", "end"):
        raise InputError(f"rain_label must be 'start' or 'end' (which end of its interval a rain time marks), "
                         f"got {rain_label!r}")
    if rain_label == "end":
        rt = rt - np.timedelta64(step, "s")
    return rt, r, step


def _day_slot(t: np.ndarray, step_s: int):
    """Local date and step of the day (0 .. steps per day - 1) of each time."""
    if _S_PER_DAY % step_s:
        raise InputError(f"the step ({step_s} s) must divide a day (86400 s) for a diurnal pattern")
    day = t.astype("datetime64[D]")
    sec = (t - day).astype("int64")
    return day, sec // step_s


def _is_weekend(day: np.ndarray, holidays: np.ndarray) -> np.ndarray:
    """Saturday, Sunday, or a holiday (1970-01-01, day 0, was a Thursday: Monday is 0)."""
    weekday = (day.astype("int64") + 3) % 7
    return (weekday >= 5) | np.isin(day, holidays)


def _dry_dates(dry) -> np.ndarray:
    if isinstance(dry, DryDays):
        return dry.dates
    return _dates("dry", dry)


# --- dry days -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DryDays:
    """The dry-day selection of a record, with each day's reason (:func:`dry_days`).

    Attributes
    ----------
    day : numpy.ndarray of datetime64[D]
        Every local date of the flow record, in order.
    dry : numpy.ndarray of bool
        Whether each day is dry (after the PE's overrides).
    by_rule : numpy.ndarray of bool
        Whether each day is dry by the rule alone (before the overrides).
    override : numpy.ndarray of str
        ``"include"``, ``"exclude"`` or ``""`` per day.
    reason : tuple of str
        Why each day is in or out.
    rain_day_in : numpy.ndarray
        Rain on the day [in] (NaN where the rain record does not cover it).
    rain_window_max_in : numpy.ndarray
        Largest daily rain over the day and its antecedent days [in] (NaN where any of them is unrecorded).
    coverage : numpy.ndarray
        Fraction of the day's flow steps with a value [-].
    policy : dict
        The values used: ``threshold_in``, ``antecedent_days``, ``min_coverage``.
    """

    day: np.ndarray
    dry: np.ndarray
    by_rule: np.ndarray
    override: np.ndarray
    reason: tuple
    rain_day_in: np.ndarray
    rain_window_max_in: np.ndarray
    coverage: np.ndarray
    policy: dict = field(default_factory=dict)

    @property
    def dates(self) -> np.ndarray:
        """The dry dates (datetime64[D])."""
        return self.day[self.dry]

    def to_dataset(self) -> xr.Dataset:
        """The selection as an :class:`xarray.Dataset` over ``date`` (for the report and the exports)."""
        ds = xr.Dataset(
            {"dry": ("date", self.dry), "dry_by_rule": ("date", self.by_rule),
             "override": ("date", self.override.astype(str)), "reason": ("date", np.array(self.reason, dtype=str)),
             "rain_day_in": ("date", self.rain_day_in), "rain_window_max_in": ("date", self.rain_window_max_in),
             "flow_coverage": ("date", self.coverage)},
            coords={"date": self.day.astype("datetime64[ns]")})
        ds["rain_day_in"].attrs["units"] = "in"
        ds["rain_window_max_in"].attrs["units"] = "in"
        ds.attrs.update({f"policy_{k}": v for k, v in _policy_attrs(self.policy).items()})
        return ds


def _policy_attrs(policy: dict) -> dict:
    return {k: (v if v is not None else "none") for k, v in policy.items()}


def dry_days(rain_time, rain_in, flow_time, flow_gpd, *, threshold_in: float = DRY_DAY_RAIN_IN,
             antecedent_days: int = DRY_ANTECEDENT_DAYS, min_coverage: float = DRY_DAY_MIN_COVERAGE,
             step_s: int | None = None, rain_step_s: int | None = None, rain_label: str = "end",
             include=None, exclude=None) -> DryDays:
    """The dry days of a flow record: little rain on the day and the days before, and the flow recorded.

    A local date of the flow record is dry when the rain on it and on each of its ``antecedent_days``
    preceding days is at most ``threshold_in`` (SSOAP's dry-day test, [2]_ [4]_) and at least ``min_coverage``
    of its flow steps have a value. A day or antecedent day the rain record does not fully cover (outside it,
    or a NaN interval) cannot be shown dry and is out, unless its recorded rain already exceeds the threshold
    (then it is wet). The PE's ``include`` and ``exclude`` override the rule; each day's reason says both.

    Parameters
    ----------
    rain_time : array_like of datetime64
        Local wall-clock time of each rain interval (its end, or its start with ``rain_label="start"``).
    rain_in : array_like of float
        Rain depth of each interval [in] (NaN: not recorded).
    flow_time : array_like of datetime64
        Local wall-clock time of each flow value, at a regular step (daylight-saving changes allowed).
    flow_gpd : array_like of float
        Flow [gpd] (NaN in gaps).
    threshold_in : float
        Policy ``dry_day_rain_in`` [in per day] (:data:`DRY_DAY_RAIN_IN`).
    antecedent_days : int
        Policy ``dry_day_antecedent_days`` [day] (:data:`DRY_ANTECEDENT_DAYS`).
    min_coverage : float
        Policy ``dry_day_min_coverage`` [-] (:data:`DRY_DAY_MIN_COVERAGE`).
    step_s, rain_step_s : int, optional
        Steps of the flow and rain records [s] (taken from the times when not given).
    rain_label : {"end", "start"}
        Which end of its interval each rain time marks (``"end"``: the depth over the step ending there).
    include, exclude : sequence of date, optional
        Days the PE declares dry or not dry, whatever the rule says (dates of the flow record).

    Returns
    -------
    DryDays
        Every day of the record with ``dry``, the rule's verdict, the override and the reason.

    Raises
    ------
    InputError
        Irregular times, a bad policy value, an override date outside the record or in both lists.
    """
    ft = _times("flow_time", flow_time)
    step = _step("flow_time", ft, step_s)
    q = _values("flow_gpd", flow_gpd, ft.size)
    rt, r, rstep = _rain(rain_time, rain_in, rain_step_s, rain_label)
    if not np.isfinite(threshold_in) or threshold_in < 0:
        raise InputError(f"threshold_in (policy dry_day_rain_in) must be a depth >= 0 in, got {threshold_in}")
    if int(antecedent_days) != antecedent_days or antecedent_days < 0:
        raise InputError(f"antecedent_days (policy dry_day_antecedent_days) must be a whole number >= 0, "
                         f"got {antecedent_days}")
    antecedent_days = int(antecedent_days)
    if not 0.0 < min_coverage <= 1.0:
        raise InputError(f"min_coverage (policy dry_day_min_coverage) must be in (0, 1], got {min_coverage}")
    inc, exc = _dates("include", include), _dates("exclude", exclude)
    both = np.intersect1d(inc, exc)
    if both.size:
        raise InputError(f"dates both included and excluded: {', '.join(str(d) for d in both)}")

    fday = ft.astype("datetime64[D]")
    days = np.arange(fday[0], fday[-1] + _ONE_DAY, dtype="datetime64[D]")
    outside = np.setdiff1d(np.concatenate([inc, exc]), days)
    if outside.size:
        raise InputError(f"override dates outside the flow record ({days[0]} to {days[-1]}): "
                         f"{', '.join(str(d) for d in outside)}")
    # steps a full day has: a day, less the hour the wall clock skips or plus the hour it repeats
    idx = (fday - days[0]).astype("int64")
    shift = np.bincount(idx[1:], weights=_dst_shift(ft, step).astype(float), minlength=days.size)
    expected = (_S_PER_DAY - SECONDS_PER_HOUR * shift) / step
    coverage = np.bincount(idx, weights=np.isfinite(q).astype(float), minlength=days.size) / expected

    # daily rain over the days the window reaches; a day is recorded when its intervals cover it, none NaN
    first = days[0] - antecedent_days * _ONE_DAY
    rdays = np.arange(first, days[-1] + _ONE_DAY, dtype="datetime64[D]")
    rday = rt.astype("datetime64[D]")
    keep = (rday >= rdays[0]) & (rday <= rdays[-1])
    ri = (rday[keep] - rdays[0]).astype("int64")
    rk = r[keep]
    total = np.bincount(ri, weights=np.nan_to_num(rk), minlength=rdays.size)
    n_nan = np.bincount(ri, weights=np.isnan(rk).astype(float), minlength=rdays.size)
    day_start = rdays.astype("datetime64[s]")
    rec_start, rec_end = rt[0], rt[-1] + np.timedelta64(rstep, "s")
    covered = (rec_start <= day_start) & (rec_end >= day_start + np.timedelta64(_S_PER_DAY, "s")) & (n_nan == 0)
    daily = np.where(covered, total, np.nan)

    n = days.size
    window_max = np.full(n, np.nan)
    by_rule = np.zeros(n, bool)
    override = np.full(n, "", dtype=object)
    reasons = []
    for i in range(n):
        w = slice(i, i + antecedent_days + 1)   # rdays index of day i is i + antecedent_days
        wt, wc, wd = total[w], covered[w], rdays[w]
        span = f"the day or its {antecedent_days} antecedent days" if antecedent_days else "the day"
        if (wt > threshold_in).any():
            j = int(np.argmax(wt))
            rule = f"wet: {wt[j]:.2f} in of rain on {wd[j]} ({span}; over {threshold_in:.2f} in)"
        elif not wc.all():
            miss = ", ".join(str(d) for d in wd[~wc])
            rule = f"not dry: the rain record does not cover {miss} ({span})"
        elif coverage[i] < min_coverage:
            rule = (f"not dry: flow recorded at {100 * coverage[i]:.0f} % of the day's steps "
                    f"(under {100 * min_coverage:.0f} %)")
        else:
            by_rule[i] = True
            rule = (f"dry: at most {wt.max():.2f} in of rain a day on {span} (threshold {threshold_in:.2f} in); "
                    f"flow recorded at {100 * coverage[i]:.0f} % of the day's steps")
        if wc.all():
            window_max[i] = wt.max()
        if days[i] in inc:
            override[i] = "include"
            reasons.append(f"included by the PE (by the rule, {rule})")
        elif days[i] in exc:
            override[i] = "exclude"
            reasons.append(f"excluded by the PE (by the rule, {rule})")
        else:
            reasons.append(rule)
    dry = np.where(override == "include", True, np.where(override == "exclude", False, by_rule))
    return DryDays(day=days, dry=dry.astype(bool), by_rule=by_rule, override=override.astype(str),
                   reason=tuple(reasons), rain_day_in=daily[antecedent_days:], rain_window_max_in=window_max,
                   coverage=coverage,
                   policy={"dry_day_rain_in": float(threshold_in), "dry_day_antecedent_days": antecedent_days,
                           "dry_day_min_coverage": float(min_coverage)})


# --- diurnal patterns -----------------------------------------------------------------------------
def diurnal_patterns(time_local, flow_gpd, dry, *, step_s: int | None = None, holidays=None) -> xr.Dataset:
    """Weekday and weekend mean dry-day flow by time of day (SSOAP's DWF pattern [1]_ [2]_).

    Each step of the day's mean is taken over the dry days of the day type that have a value at that step;
    NaN values are left out and the count says how many days each mean rests on. Weekend days are Saturday,
    Sunday and the ``holidays``.

    Parameters
    ----------
    time_local : array_like of datetime64
        Local wall-clock times at a regular step that divides a day (daylight-saving changes allowed).
    flow_gpd : array_like of float
        Flow [gpd] (NaN in gaps).
    dry : DryDays or sequence of date
        The dry days (:func:`dry_days`, or the dates).
    step_s : int, optional
        Step of the record [s] (taken from the times when not given).
    holidays : sequence of date, optional
        Dates whose flow follows the weekend pattern.

    Returns
    -------
    xarray.Dataset
        Dimensions ``day_type`` (``weekday``, ``weekend``) and ``step`` (steps of the day); variables
        ``mean_gpd`` [gpd] (NaN where no day has a value), ``count`` (days averaged), ``days`` (dry days of
        each type); coordinate ``time_of_day_s`` [s]; attributes ``step_s`` and ``holidays`` (ISO dates).
    """
    t = _times("time_local", time_local)
    step = _step("time_local", t, step_s)
    q = _values("flow_gpd", flow_gpd, t.size)
    hol = _dates("holidays", holidays)
    day, slot = _day_slot(t, step)
    per_day = _S_PER_DAY // step
    use = np.isin(day, _dry_dates(dry)) & np.isfinite(q)
    weekend = _is_weekend(day, hol).astype("int64")
    k = weekend * per_day + slot
    total = np.bincount(k[use], weights=q[use], minlength=2 * per_day).reshape(2, per_day)
    count = np.bincount(k[use], minlength=2 * per_day).reshape(2, per_day)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    dry_days_of = np.array([np.unique(day[use & (weekend == j)]).size for j in (0, 1)])
    ds = xr.Dataset({"mean_gpd": (("day_type", "step"), mean), "count": (("day_type", "step"), count),
                     "days": ("day_type", dry_days_of)},
                    coords={"day_type": list(DAY_TYPES), "step": np.arange(per_day),
                            "time_of_day_s": ("step", np.arange(per_day) * step)})
    ds["mean_gpd"].attrs["units"] = "gpd"
    ds["time_of_day_s"].attrs["units"] = "s"
    ds.attrs.update({"step_s": step, "holidays": " ".join(str(d) for d in hol),
                     "source": "mean dry-day flow by step of the day, weekday and weekend (SSOAP DWF pattern)"})
    return ds


# --- groundwater infiltration ---------------------------------------------------------------------
@dataclass(frozen=True)
class GwiEstimate:
    """Groundwater infiltration from the dry days' minimum flows (:func:`gwi`).

    Attributes
    ----------
    gwi_gpd : float
        GWI of the record [gpd]: ``ratio`` times the mean of the dry days' minimum flows.
    ratio : float
        Policy ``gwi_min_flow_ratio`` [-].
    day : numpy.ndarray of datetime64[D]
        The dry days used.
    min_flow_gpd : numpy.ndarray
        Each dry day's minimum flow [gpd] (in the night window when one is given).
    period_start, period_end : numpy.ndarray of datetime64[D]
        First and last day of each run of consecutive dry days (``by="period"``; one period otherwise).
    period_gwi_gpd : numpy.ndarray
        GWI of each period [gpd].
    by : str
        ``"record"`` (one GWI) or ``"period"`` (one per run of dry days, interpolated between them).
    """

    gwi_gpd: float
    ratio: float
    day: np.ndarray
    min_flow_gpd: np.ndarray
    period_start: np.ndarray
    period_end: np.ndarray
    period_gwi_gpd: np.ndarray
    by: str = "record"
    night_hr: tuple | None = None

    def series(self, time_local) -> np.ndarray:
        """GWI at each time [gpd]: the record's value, or (``by="period"``) each period's value at its
        middle, linear in time between periods and constant before the first and after the last."""
        t = _times("time_local", time_local)
        if self.by == "record" or self.period_gwi_gpd.size == 1:
            return np.full(t.size, self.gwi_gpd)
        mid = (self.period_start.astype("datetime64[s]").astype("int64")
               + (self.period_end + _ONE_DAY).astype("datetime64[s]").astype("int64")) / 2.0
        return np.interp(t.astype("int64").astype(float), mid, self.period_gwi_gpd)


def gwi(time_local, flow_gpd, dry, *, ratio: float = GWI_MIN_FLOW_RATIO, step_s: int | None = None,
        night_hr: tuple | None = None, by: str = "record") -> GwiEstimate:
    """Groundwater infiltration [gpd] from the minimum flows of the dry days (SSOAP [1]_ [2]_).

    GWI = ``ratio`` x the mean over the dry days of each day's minimum flow. With ``by="period"`` each run of
    consecutive dry days gets its own GWI (the groundwater moving with the season), which
    :meth:`GwiEstimate.series` interpolates in time; the record's GWI stays the mean over all dry days, the
    level the diurnal patterns were averaged at (so ``pattern - gwi_gpd`` is the sanitary flow).

    Parameters
    ----------
    time_local : array_like of datetime64
        Local wall-clock times at a regular step (daylight-saving changes allowed).
    flow_gpd : array_like of float
        Flow [gpd] (NaN in gaps; a day's minimum is over its values).
    dry : DryDays or sequence of date
        The dry days.
    ratio : float
        Policy ``gwi_min_flow_ratio`` [-], in (0, 1] (:data:`GWI_MIN_FLOW_RATIO`).
    step_s : int, optional
        Step of the record [s].
    night_hr : (float, float), optional
        Hours of the day [hr] the minimum is looked for in (``(0, 6)``: midnight to 6 am); the whole day
        when None (a sanitary record's minimum is its night minimum).
    by : {"record", "period"}
        One GWI for the record, or one per run of consecutive dry days.

    Returns
    -------
    GwiEstimate

    Raises
    ------
    InputError
        A ratio outside (0, 1], no dry day with a flow value, a bad night window.
    """
    t = _times("time_local", time_local)
    step = _step("time_local", t, step_s)
    q = _values("flow_gpd", flow_gpd, t.size)
    if not 0.0 < ratio <= 1.0:
        raise InputError(f"ratio (policy gwi_min_flow_ratio) must be in (0, 1], got {ratio}")
    if by not in ("record", "period"):
        raise InputError(f"by must be 'record' or 'period', got {by!r}")
    day, slot = _day_slot(t, step)
    use = np.isin(day, _dry_dates(dry)) & np.isfinite(q)
    if night_hr is not None:
        lo, hi = (float(h) for h in night_hr)
        if not 0.0 <= lo < hi <= HOURS_PER_DAY:
            raise InputError(f"night_hr must be (start, end) hours with 0 <= start < end <= 24, got {night_hr}")
        hour = slot * step / SECONDS_PER_HOUR
        use &= (hour >= lo) & (hour < hi)
    days = np.unique(day[use])
    if days.size == 0:
        raise InputError("no dry day has a flow value (in the night window): GWI cannot be estimated")
    i = np.searchsorted(days, day[use])
    mins = np.full(days.size, np.inf)
    np.minimum.at(mins, i, q[use])
    g = float(ratio * mins.mean())
    if by == "period":
        brk = np.flatnonzero(np.diff(days) != _ONE_DAY) + 1
        runs = np.split(np.arange(days.size), brk)
        p_start = np.array([days[s[0]] for s in runs], dtype="datetime64[D]")
        ends = np.array([days[s[-1]] for s in runs], dtype="datetime64[D]")
        p_gwi = np.array([ratio * mins[s].mean() for s in runs])
    else:
        p_start, ends, p_gwi = days[:1], days[-1:], np.array([g])
    return GwiEstimate(gwi_gpd=g, ratio=float(ratio), day=days, min_flow_gpd=mins, period_start=p_start,
                       period_end=ends, period_gwi_gpd=p_gwi, by=by,
                       night_hr=None if night_hr is None else (float(night_hr[0]), float(night_hr[1])))


# --- decomposition --------------------------------------------------------------------------------
def decompose(time_local, flow_gpd, dry, *, gwi_gpd, patterns: xr.Dataset, step_s: int | None = None,
              holidays=None, time_utc=None) -> xr.Dataset:
    """The record split into BWF, GWI and RDII (SSOAP's flow decomposition [1]_).

    BWF at a time is its day type's (weekday or weekend, :func:`diurnal_patterns`) mean dry-day flow at that
    step of the day less the record's GWI (the sanitary part of the dry-weather flow); GWI is the record's, or
    the period GWI in time (:meth:`GwiEstimate.series`); RDII = observed - BWF - GWI (NaN where the observed
    flow or the pattern is NaN). RDII may be negative where the flow runs under the pattern (noise, a dry
    day below the mean); it is not clipped, so its volume is unbiased.

    Parameters
    ----------
    time_local : array_like of datetime64
        Local wall-clock times at the patterns' step.
    flow_gpd : array_like of float
        Observed flow [gpd] (NaN in gaps).
    dry : DryDays or sequence of date
        The dry days (marked in the output).
    gwi_gpd : float or GwiEstimate
        GWI [gpd], or the estimate of :func:`gwi`.
    patterns : xarray.Dataset
        The weekday and weekend patterns of :func:`diurnal_patterns`, at this record's step.
    step_s : int, optional
        Step of the record [s].
    holidays : sequence of date, optional
        Days on the weekend pattern (default: the patterns' ``holidays`` attribute).
    time_utc : array_like of datetime64, optional
        The same instants in UTC (``MeterRecord.time_utc``), kept as the coordinate ``time_utc`` (the local
        ``time`` repeats in a fall-back hour).

    Returns
    -------
    xarray.Dataset
        Over ``time`` (local wall clock): ``observed_gpd``, ``bwf_gpd``, ``gwi_gpd``, ``rdii_gpd`` [gpd],
        ``dwf_gpd`` (= BWF + GWI) [gpd], ``dry_day`` and ``weekend`` (bool); attributes naming the policies
        and their values (``policy_*``, listed in ``policies``), the GWI of the record, the holidays, the PE's
        overrides and the number of daylight-saving changes (``dst_changes``).
    """
    t = _times("time_local", time_local)
    step = _step("time_local", t, step_s)
    q = _values("flow_gpd", flow_gpd, t.size)
    pstep = int(patterns.attrs.get("step_s", -1))
    if pstep != step:
        raise InputError(f"the patterns are at a step of {pstep} s, the record at {step} s")
    if holidays is None:
        hol = _dates("holidays", str(patterns.attrs.get("holidays", "")).split())
    else:
        hol = _dates("holidays", holidays)
    if isinstance(gwi_gpd, GwiEstimate):
        est = gwi_gpd
        base = est.gwi_gpd
        g = est.series(t)
    else:
        est = None
        base = float(gwi_gpd)
        if not np.isfinite(base) or base < 0:
            raise InputError(f"gwi_gpd must be a flow >= 0 gpd, got {gwi_gpd}")
        g = np.full(t.size, base)
    day, slot = _day_slot(t, step)
    weekend = _is_weekend(day, hol)
    table = patterns["mean_gpd"].sel(day_type=list(DAY_TYPES)).values
    dwf_pattern = table[weekend.astype("int64"), slot]
    bwf = dwf_pattern - base
    rdii = q - bwf - g
    ds = xr.Dataset(
        {"observed_gpd": ("time", q), "bwf_gpd": ("time", bwf), "gwi_gpd": ("time", g),
         "dwf_gpd": ("time", bwf + g), "rdii_gpd": ("time", rdii),
         "dry_day": ("time", np.isin(day, _dry_dates(dry))), "weekend": ("time", weekend)},
        coords={"time": t.astype("datetime64[ns]")})
    if time_utc is not None:
        tu = _times("time_utc", time_utc)
        if tu.size != t.size:
            raise InputError(f"time_utc has {tu.size} times, time_local {t.size}")
        ds = ds.assign_coords(time_utc=("time", tu.astype("datetime64[ns]")))
    for v in ("observed_gpd", "bwf_gpd", "gwi_gpd", "dwf_gpd", "rdii_gpd"):
        ds[v].attrs["units"] = "gpd"
    ds["time"].attrs["description"] = "local wall-clock time (naive), as the record gives it"
    attrs = {"step_s": step, "holidays": " ".join(str(d) for d in hol), "gwi_record_gpd": base,
             "dst_changes": int(np.count_nonzero(_dst_shift(t, step))),
             "gwi_by": est.by if est else "given",
             "method": ("SSOAP flow decomposition: BWF = dry-day diurnal pattern (weekday/weekend) - GWI; "
                        "GWI = gwi_min_flow_ratio x mean dry-day minimum flow; RDII = observed - BWF - GWI"),
             "references": "EPA/600/R-07/111; EPA/600/R-08/049"}
    if est is not None:
        attrs["policy_gwi_min_flow_ratio"] = est.ratio
        attrs["gwi_night_hr"] = "whole day" if est.night_hr is None else f"{est.night_hr[0]}-{est.night_hr[1]}"
    else:
        attrs["policy_gwi_min_flow_ratio"] = "none (GWI given)"
    if isinstance(dry, DryDays):
        attrs.update({f"policy_{k}": v for k, v in _policy_attrs(dry.policy).items()})
        attrs["dry_day_overrides"] = "; ".join(f"{d} {o}" for d, o in zip(dry.day, dry.override) if o) or "none"
    attrs["policies"] = ", ".join(k for k in attrs if k.startswith("policy_"))
    ds.attrs.update(attrs)
    return ds


# --- wet-weather events ---------------------------------------------------------------------------
@dataclass(frozen=True)
class WetEvent:
    """A rain event and the RDII of its window (:func:`wet_events`).

    Attributes
    ----------
    rain_start, rain_end : numpy.datetime64
        Start of the first and end of the last rain interval of the event (local).
    depth_in : float
        Rain of the event [in].
    window_start, window_end : numpy.datetime64
        The window an RTK fit uses: from the first rain to ``tail_hr`` after the last rain, or to the next
        event's first rain if sooner, within the flow record.
    rdii_volume_gal : float
        RDII over the window [gal] (the sum of the recorded steps; see ``coverage``).
    peak_rdii_gpd : float
        Largest RDII of the window [gpd].
    peak_time : numpy.datetime64
        When it occurs.
    coverage : float
        Fraction of the window's steps with an RDII value [-].
    rain_window_in : float
        All the rain in the window [in] (the event's and any smaller rain after it).
    """

    rain_start: np.datetime64
    rain_end: np.datetime64
    depth_in: float
    window_start: np.datetime64
    window_end: np.datetime64
    rdii_volume_gal: float
    peak_rdii_gpd: float
    peak_time: np.datetime64
    coverage: float
    rain_window_in: float

    def to_dict(self) -> dict:
        """The event as plain values (times as ISO strings)."""
        out = {}
        for k, v in self.__dict__.items():
            out[k] = str(v) if isinstance(v, np.datetime64) else float(v)
        return out


def wet_events(time_local, rdii_gpd, rain_time, rain_in, *, min_rain_in: float = EVENT_MIN_RAIN_IN,
               inter_event_hr: float = EVENT_INTER_EVENT_HR, tail_hr: float = EVENT_TAIL_HR,
               step_s: int | None = None, rain_step_s: int | None = None,
               rain_label: str = "end") -> list[WetEvent]:
    """The rain events of a record and their RDII: the events an RTK fit is made on.

    Rain intervals with rain are grouped into one event while the dry spell between them is shorter than
    ``inter_event_hr`` (the minimum inter-event time [3]_); events of less than ``min_rain_in`` are dropped
    (their rain stays in the windows around them). Each event's window runs from its first rain to
    ``tail_hr`` after its last, cut at the next kept event's first rain and at the flow record's ends; events
    whose rain starts outside the flow record are left out.

    Parameters
    ----------
    time_local : array_like of datetime64
        Local wall-clock times of the RDII.
    rdii_gpd : array_like of float
        RDII [gpd] (:func:`decompose`'s ``rdii_gpd``; NaN in gaps).
    rain_time : array_like of datetime64
        Local time of each rain interval (its end, or its start with ``rain_label="start"``).
    rain_in : array_like of float
        Rain of each interval [in] (NaN: not recorded, taken as no rain here).
    min_rain_in : float
        Policy ``event_min_rain_in`` [in] (:data:`EVENT_MIN_RAIN_IN`).
    inter_event_hr : float
        Policy ``event_inter_event_hr`` [hr] (:data:`EVENT_INTER_EVENT_HR`).
    tail_hr : float
        Policy ``event_tail_hr`` [hr] (:data:`EVENT_TAIL_HR`).
    step_s, rain_step_s : int, optional
        Steps of the RDII and rain records [s].
    rain_label : {"end", "start"}
        Which end of its interval each rain time marks (``"end"``: the depth over the step ending there).

    Returns
    -------
    list of WetEvent
        In time order.
    """
    t = _times("time_local", time_local)
    step = _step("time_local", t, step_s)
    x = _values("rdii_gpd", rdii_gpd, t.size)
    rt, r, rstep = _rain(rain_time, rain_in, rain_step_s, rain_label)
    for name, v in (("min_rain_in", min_rain_in), ("inter_event_hr", inter_event_hr), ("tail_hr", tail_hr)):
        if not np.isfinite(v) or v < 0:
            raise InputError(f"{name} (policy event_{name}) must be >= 0, got {v}")
    wet = np.flatnonzero(np.nan_to_num(r) > 0)
    if wet.size == 0:
        return []
    rstep_td = np.timedelta64(rstep, "s")
    gap_s = (rt[wet[1:]] - (rt[wet[:-1]] + rstep_td)).astype("int64")
    brk = np.flatnonzero(gap_s >= inter_event_hr * SECONDS_PER_HOUR) + 1
    groups = [g for g in np.split(wet, brk) if r[g].sum() >= min_rain_in]
    t_end = t[-1] + np.timedelta64(step, "s")
    groups = [g for g in groups if t[0] <= rt[g[0]] < t_end]
    starts = [rt[g[0]] for g in groups]
    tail = np.timedelta64(int(round(tail_hr * SECONDS_PER_HOUR)), "s")
    events = []
    for k, g in enumerate(groups):
        rain_start, rain_end = rt[g[0]], rt[g[-1]] + rstep_td
        w_end = rain_end + tail
        if k + 1 < len(starts):
            w_end = min(w_end, starts[k + 1])
        w_end = min(w_end, t_end)
        sel = (t >= rain_start) & (t < w_end)
        xs, ts = x[sel], t[sel]
        ok = np.isfinite(xs)
        if ok.any():
            j = int(np.nanargmax(xs))
            peak, peak_t = float(xs[j]), ts[j]
            vol = float(xs[ok].sum() * step / SECONDS_PER_DAY)
        else:
            peak, peak_t, vol = float("nan"), np.datetime64("NaT", "s"), float("nan")
        rsel = (rt >= rain_start) & (rt < w_end)
        events.append(WetEvent(rain_start=rain_start, rain_end=rain_end, depth_in=float(r[g].sum()),
                               window_start=rain_start, window_end=w_end, rdii_volume_gal=vol, peak_rdii_gpd=peak,
                               peak_time=peak_t, coverage=float(ok.mean()) if ok.size else 0.0,
                               rain_window_in=float(np.nansum(r[rsel]))))
    return events
