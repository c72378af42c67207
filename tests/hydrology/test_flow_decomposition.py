"""Flow decomposition into BWF, GWI and RDII (hydrology/flow_decomposition.py; issue 29, item 2).

The hand-worked record: 14 days at 1 h, Monday 2026-03-02 to Sunday 2026-03-15 (local wall clock).

* sanitary flow S: the weekday pattern WD (minimum 20,000 gpd at 03:00) on Monday to Friday, the weekend
  pattern WE (minimum 25,000 gpd at 05:00) on Saturday and Sunday;
* GWI: a constant 50,000 gpd;
* rain: 0.5 in over 06:00-07:00 and 0.5 in over 07:00-08:00 on Wednesday 03-04 (1.0 in), none else, logged
  at the end of each hour (the loggers' convention); the gauge starts a week before the meter (2026-02-23);
* RDII: a triangle from 03-04 07:00 (0) up to 30,000 gpd at 12:00 and down to 0 at 03-05 06:00 (23 h): its
  volume is 30,000 gpd / 24 h x 23 h / 2 = 14,375 gal.

By hand, with 0.10 in and 3 antecedent days: wet are 03-04 (1.0 in) and the three days after it, 03-05 to
03-07; dry are 03-02, 03-03 and 03-08 to 03-15: 10 days, 7 weekdays (02, 03, 09 to 13) and 3 weekend days
(08, 14, 15). The dry days' minima are 70,000 gpd (weekday) and 75,000 gpd (weekend); their mean is
(7 x 70,000 + 3 x 75,000) / 10 = 71,500 gpd; GWI = 0.85 x 71,500 = 60,775 gpd.
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capacitysim.errors import InputError
from capacitysim.hydrology import flow_decomposition as fd
from capacitysim.hydrology.flow_decomposition import (
    _ONE_DAY,
    DRY_ANTECEDENT_DAYS,
    DRY_DAY_RAIN_IN,
    GWI_MIN_FLOW_RATIO,
    POLICIES,
    decompose,
    diurnal_patterns,
    dry_days,
    gwi,
    wet_events,
)
from capacitysim.rules.policy import Policy

H = 3600
WD = np.array([30, 25, 22, 20, 21, 24, 35, 55, 70, 65, 60, 58,
               60, 55, 50, 48, 50, 58, 65, 62, 55, 48, 40, 34], float) * 1000.0
WE = np.array([35, 30, 28, 27, 26, 25, 28, 35, 45, 60, 72, 70,
               66, 60, 55, 52, 52, 55, 60, 58, 52, 46, 42, 38], float) * 1000.0
G = 50_000.0
START = np.datetime64("2026-03-02T00:00", "s")   # a Monday
N_DAYS = 14


def _d(s: str) -> np.datetime64:
    return np.datetime64(s, "D")


def triangle():
    """The RDII triangle on the hourly times of the record [gpd]."""
    t = START + np.arange(N_DAYS * 24) * np.timedelta64(H, "s")
    h = (t - np.datetime64("2026-03-04T07:00", "s")).astype(int) / H
    return np.where((h >= 0) & (h <= 5), 6000.0 * h, np.where((h > 5) & (h <= 23), 30000.0 * (23 - h) / 18, 0.0))


def record(holiday_days=()):
    """(time, flow) of the hand-worked record; the holiday days follow the weekend pattern."""
    t = START + np.arange(N_DAYS * 24) * np.timedelta64(H, "s")
    day = t.astype("datetime64[D]")
    weekend = ((day.astype(int) + 3) % 7 >= 5) | np.isin(day, np.array(holiday_days, dtype="datetime64[D]"))
    hour = ((t - day).astype(int) // H)
    s = np.where(weekend, WE[hour], WD[hour])
    return t, s + G + triangle()


def rain():
    """(time, depth) of the hand-worked rain, each time the end of its hour."""
    rt = np.datetime64("2026-02-23T01:00", "s") + np.arange((N_DAYS + 7) * 24) * np.timedelta64(H, "s")
    r = np.zeros(rt.size)
    r[rt == np.datetime64("2026-03-04T07:00", "s")] = 0.5
    r[rt == np.datetime64("2026-03-04T08:00", "s")] = 0.5
    return rt, r


DRY_BY_HAND = np.array(["2026-03-02", "2026-03-03", "2026-03-08", "2026-03-09", "2026-03-10", "2026-03-11",
                        "2026-03-12", "2026-03-13", "2026-03-14", "2026-03-15"], dtype="datetime64[D]")


def _all(holidays=None, **dry_kw):
    t, q = record()
    rt, r = rain()
    dry = dry_days(rt, r, t, q, **dry_kw)
    pat = diurnal_patterns(t, q, dry, step_s=H, holidays=holidays)
    est = gwi(t, q, dry, step_s=H)
    ds = decompose(t, q, dry, gwi_gpd=est, patterns=pat, step_s=H)
    return t, q, dry, pat, est, ds


# --- the policies ------------------------------------------------------------------------------------
def test_policies_are_named_with_value_text_and_alternatives():
    assert (DRY_DAY_RAIN_IN, DRY_ANTECEDENT_DAYS, GWI_MIN_FLOW_RATIO) == (0.10, 3, 0.85)
    assert POLICIES["dry_day_rain_in"]["value"] == DRY_DAY_RAIN_IN
    assert POLICIES["dry_day_antecedent_days"]["value"] == DRY_ANTECEDENT_DAYS
    assert POLICIES["gwi_min_flow_ratio"]["value"] == GWI_MIN_FLOW_RATIO
    assert POLICIES["event_min_rain_in"]["value"] == fd.EVENT_MIN_RAIN_IN
    assert POLICIES["event_inter_event_hr"]["value"] == fd.EVENT_INTER_EVENT_HR
    assert POLICIES["event_tail_hr"]["value"] == fd.EVENT_TAIL_HR
    for name, rec in POLICIES.items():
        assert rec["name"] == name and rec["text"] and rec["alternative"]
        assert all({"value", "text"} <= set(a) for a in rec["alternative"])
        # the shape the catalogue reads (rules.policy sits above hydrology; the test may read both)
        p = Policy.from_record(rec, scope="measured I/I credits", where="capacitysim.hydrology.flow_decomposition")
        assert (p.name, p.value, p.alternative) == (name, rec["value"], rec["alternative"][0])


# --- dry days --------------------------------------------------------------------------------------
def test_dry_days_equal_the_hand_selection():
    t, q = record()
    rt, r = rain()
    dry = dry_days(rt, r, t, q)
    np.testing.assert_array_equal(dry.dates, DRY_BY_HAND)
    assert dry.day.size == N_DAYS
    reason = dict(zip(dry.day.astype(str), dry.reason))
    assert reason["2026-03-04"].startswith("wet: 1.00 in of rain on 2026-03-04")
    assert reason["2026-03-07"].startswith("wet: 1.00 in of rain on 2026-03-04")   # 3rd antecedent day
    assert reason["2026-03-08"].startswith("dry:")
    assert dry.rain_day_in[dry.day == _d("2026-03-04")][0] == pytest.approx(1.0)
    assert np.all(dry.coverage == 1.0)


def test_antecedent_days_and_threshold_change_the_selection():
    t, q = record()
    rt, r = rain()
    assert _d("2026-03-07") in dry_days(rt, r, t, q, antecedent_days=2).dates
    assert _d("2026-03-05") not in dry_days(rt, r, t, q, antecedent_days=1).dates
    assert _d("2026-03-06") in dry_days(rt, r, t, q, antecedent_days=1).dates
    # a threshold above the 1.0 in makes every day dry
    assert dry_days(rt, r, t, q, threshold_in=1.0).dates.size == N_DAYS


def test_days_the_rain_record_does_not_cover_are_not_dry():
    t, q = record()
    rt, r = rain()
    keep = rt > START   # the gauge starts with the meter: the first 3 days have unrecorded antecedent days
    dry = dry_days(rt[keep], r[keep], t, q)
    np.testing.assert_array_equal(dry.dates, DRY_BY_HAND[2:])
    first = dry.reason[0]
    assert first.startswith("not dry: the rain record does not cover 2026-02-27, 2026-02-28, 2026-03-01")
    # a NaN rain interval on 03-10 makes it and the next three days (to 03-13) unknown
    r2 = r.copy()
    r2[rt == np.datetime64("2026-03-10T12:00", "s")] = np.nan   # 11:00-12:00 unrecorded
    dry = dry_days(rt, r2, t, q)
    assert set(dry.dates.astype(str)) == {"2026-03-02", "2026-03-03", "2026-03-08", "2026-03-09", "2026-03-14",
                                             "2026-03-15"}


def test_pe_override_includes_and_excludes_with_the_reason():
    t, q = record()
    rt, r = rain()
    dry = dry_days(rt, r, t, q, include=["2026-03-06"], exclude=[np.datetime64("2026-03-09")])
    expected = np.sort(np.concatenate([np.setdiff1d(DRY_BY_HAND, [_d("2026-03-09")]), [_d("2026-03-06")]]))
    np.testing.assert_array_equal(dry.dates, expected)
    i6, i9 = int(np.flatnonzero(dry.day == _d("2026-03-06"))[0]), int(np.flatnonzero(dry.day == _d("2026-03-09"))[0])
    assert dry.override[i6] == "include" and not dry.by_rule[i6]
    assert dry.reason[i6].startswith("included by the PE (by the rule, wet: 1.00 in")
    assert dry.override[i9] == "exclude" and dry.by_rule[i9]
    assert dry.reason[i9].startswith("excluded by the PE (by the rule, dry:")
    with pytest.raises(InputError, match="both included and excluded"):
        dry_days(rt, r, t, q, include=["2026-03-06"], exclude=["2026-03-06"])
    with pytest.raises(InputError, match="outside the flow record"):
        dry_days(rt, r, t, q, include=["2026-04-01"])
    ds = dry.to_dataset()
    assert ds.sizes["date"] == N_DAYS and int(ds["dry"].sum()) == 10
    assert ds.attrs["policy_dry_day_rain_in"] == DRY_DAY_RAIN_IN


def test_gaps_under_the_coverage_make_a_day_not_dry_and_patterns_count_the_rest():
    t, q = record()
    rt, r = rain()
    q = q.copy()
    tue = (t >= np.datetime64("2026-03-10T00:00")) & (t < np.datetime64("2026-03-11T00:00"))
    q[np.flatnonzero(tue)[8:11]] = np.nan            # 3 h missing: 21/24 = 87.5 % < 90 %
    q[t == np.datetime64("2026-03-12T04:00")] = np.nan  # 1 h missing: 23/24 = 95.8 %, still dry
    dry = dry_days(rt, r, t, q)
    assert _d("2026-03-10") not in dry.dates and _d("2026-03-12") in dry.dates
    assert dry.reason[int(np.flatnonzero(dry.day == _d("2026-03-10"))[0])] == (
        "not dry: flow recorded at 88 % of the day's steps (under 90 %)")
    pat = diurnal_patterns(t, q, dry, step_s=H)
    count = pat["count"].sel(day_type="weekday").values
    assert count[4] == 5 and np.all(np.delete(count, 4) == 6)      # 6 weekday dry days, one gap at 04:00
    np.testing.assert_allclose(pat["mean_gpd"].sel(day_type="weekday").values, WD + G, rtol=0, atol=1e-9)
    assert int(pat["days"].sel(day_type="weekday")) == 6
    # with 3 h missing the day is in at a coverage of 0.85 and its missing hours are not averaged
    dry85 = dry_days(rt, r, t, q, min_coverage=0.85)
    pat85 = diurnal_patterns(t, q, dry85, step_s=H)
    assert list(pat85["count"].sel(day_type="weekday").values[8:11]) == [6, 6, 6]
    with pytest.raises(InputError, match="min_coverage"):
        dry_days(rt, r, t, q, min_coverage=0.0)


# --- patterns --------------------------------------------------------------------------------------
def test_patterns_recovered_exactly_on_noise_free_data():
    _, _, _, pat, _, _ = _all()
    np.testing.assert_allclose(pat["mean_gpd"].sel(day_type="weekday").values, WD + G, rtol=0, atol=1e-9)
    np.testing.assert_allclose(pat["mean_gpd"].sel(day_type="weekend").values, WE + G, rtol=0, atol=1e-9)
    assert np.all(pat["count"].sel(day_type="weekday").values == 7)
    assert np.all(pat["count"].sel(day_type="weekend").values == 3)
    assert list(pat["time_of_day_s"].values[:3]) == [0, 3600, 7200]
    assert pat.sizes == {"day_type": 2, "step": 24}


def test_holidays_take_the_weekend_pattern():
    hol = ["2026-03-13"]   # a Friday whose flow follows the weekend pattern
    t, q = record(holiday_days=hol)
    rt, r = rain()
    dry = dry_days(rt, r, t, q)
    pat = diurnal_patterns(t, q, dry, step_s=H, holidays=hol)
    np.testing.assert_allclose(pat["mean_gpd"].sel(day_type="weekday").values, WD + G, atol=1e-9)
    np.testing.assert_allclose(pat["mean_gpd"].sel(day_type="weekend").values, WE + G, atol=1e-9)
    assert np.all(pat["count"].sel(day_type="weekend").values == 4)
    assert pat.attrs["holidays"] == "2026-03-13"
    # without the holiday the weekday mean mixes the two shapes
    mixed = diurnal_patterns(t, q, dry, step_s=H)["mean_gpd"].sel(day_type="weekday").values
    np.testing.assert_allclose(mixed, (6 * WD + WE) / 7 + G, atol=1e-9)
    # decompose reads the holidays from the patterns: RDII is zero on the holiday
    ds = decompose(t, q, dry, gwi_gpd=gwi(t, q, dry), patterns=pat)
    on = ds["time"].values.astype("datetime64[D]") == _d("2026-03-13")
    np.testing.assert_allclose(ds["rdii_gpd"].values[on], 0.0, atol=1e-9)
    assert ds["weekend"].values[on].all()


# --- GWI -------------------------------------------------------------------------------------------
def test_gwi_from_the_night_minimum_matches_the_hand_figure():
    t, q, dry, _, est, _ = _all()
    assert est.gwi_gpd == pytest.approx(60_775.0, abs=1e-9)
    np.testing.assert_array_equal(est.day, DRY_BY_HAND)
    np.testing.assert_allclose(est.min_flow_gpd, [70e3, 70e3, 75e3, 70e3, 70e3, 70e3, 70e3, 70e3, 75e3, 75e3])
    assert gwi(t, q, dry, ratio=1.0).gwi_gpd == pytest.approx(71_500.0)
    # a night window 00:00-06:00 finds the same minima (03:00 and 05:00)
    assert gwi(t, q, dry, night_hr=(0, 6)).gwi_gpd == pytest.approx(60_775.0)
    # a window that misses them: the minimum of 10:00 and 11:00 is 58,000 + G on weekdays, 70,000 + G on weekends
    assert gwi(t, q, dry, night_hr=(10, 12), ratio=1.0).gwi_gpd == pytest.approx((7 * 108e3 + 3 * 120e3) / 10)
    for bad in (0.0, 1.2):
        with pytest.raises(InputError, match="gwi_min_flow_ratio"):
            gwi(t, q, dry, ratio=bad)
    with pytest.raises(InputError, match="no dry day"):
        gwi(t, q, [])


def test_gwi_by_period_is_time_varying_between_runs_of_dry_days():
    t, q = record()
    rt, r = rain()
    q = q + np.where(t >= np.datetime64("2026-03-08T00:00"), 10_000.0, 0.0)   # groundwater up 10,000 gpd
    dry = dry_days(rt, r, t, q)
    est = gwi(t, q, dry, by="period", ratio=1.0)
    np.testing.assert_array_equal(est.period_start, np.array(["2026-03-02", "2026-03-08"], dtype="datetime64[D]"))
    np.testing.assert_array_equal(est.period_end, np.array(["2026-03-03", "2026-03-15"], dtype="datetime64[D]"))
    np.testing.assert_allclose(est.period_gwi_gpd, [70e3, (5 * 80e3 + 3 * 85e3) / 8])
    assert est.gwi_gpd == pytest.approx((2 * 70e3 + 5 * 80e3 + 3 * 85e3) / 10)
    g = est.series(t)
    assert g[0] == pytest.approx(70e3) and g[-1] == pytest.approx(est.period_gwi_gpd[1])
    assert np.all(np.diff(g) >= -1e-9)   # rises between the periods' middles


# --- decomposition ---------------------------------------------------------------------------------
def test_rdii_is_zero_on_dry_days_and_the_triangle_on_the_wet_day():
    t, q, dry, pat, est, ds = _all()
    assert isinstance(ds, xr.Dataset)
    assert set(ds.data_vars) >= {"observed_gpd", "bwf_gpd", "gwi_gpd", "rdii_gpd", "dwf_gpd", "dry_day"}
    np.testing.assert_array_equal(ds["observed_gpd"].values, q)
    np.testing.assert_allclose(ds["gwi_gpd"].values, 60_775.0)
    on_dry = ds["dry_day"].values
    assert on_dry.sum() == 10 * 24
    np.testing.assert_allclose(ds["rdii_gpd"].values[on_dry], 0.0, atol=1e-9)
    np.testing.assert_allclose(ds["rdii_gpd"].values, triangle(), rtol=0, atol=1e-9)
    # the pattern's sanitary part: BWF = pattern - GWI
    day = t.astype("datetime64[D]")
    mon = day == _d("2026-03-02")
    np.testing.assert_allclose(ds["bwf_gpd"].values[mon], WD + G - 60_775.0, atol=1e-9)
    np.testing.assert_allclose((ds["bwf_gpd"] + ds["gwi_gpd"]).values, ds["dwf_gpd"].values)
    # the triangle's volume: 14,375 gal
    assert float(ds["rdii_gpd"].sum()) * H / 86400 == pytest.approx(14_375.0, abs=1e-6)
    assert ds.attrs["policy_gwi_min_flow_ratio"] == GWI_MIN_FLOW_RATIO
    assert ds.attrs["policy_dry_day_rain_in"] == DRY_DAY_RAIN_IN
    assert ds.attrs["policy_dry_day_antecedent_days"] == DRY_ANTECEDENT_DAYS
    assert "policy_gwi_min_flow_ratio" in ds.attrs["policies"]


def test_rdii_is_nan_where_the_flow_is_nan_and_a_given_gwi_is_used():
    t, q = record()
    rt, r = rain()
    q = q.copy()
    q[100] = np.nan
    dry = dry_days(rt, r, t, q)
    pat = diurnal_patterns(t, q, dry)
    ds = decompose(t, q, dry, gwi_gpd=40_000.0, patterns=pat)
    assert np.isnan(ds["rdii_gpd"].values[100]) and np.isfinite(ds["bwf_gpd"].values[100])
    assert np.isnan(ds["rdii_gpd"].values).sum() == 1
    np.testing.assert_allclose(np.delete(ds["rdii_gpd"].values, 100), np.delete(triangle(), 100), atol=1e-9)
    assert ds.attrs["policy_gwi_min_flow_ratio"] == "none (GWI given)"
    with pytest.raises(InputError, match="step"):
        decompose(t[::2], q[::2], dry, gwi_gpd=40_000.0, patterns=pat)


def test_local_wall_clock_days_without_time_zones():
    # the record crosses the US spring-forward date (2026-03-08) on one offset: every day has 24 steps,
    # grouped by the wall-clock date as given (no time-zone conversion), 23:00 stays on its own day
    _, _, dry, pat, _, ds = _all()
    assert _d("2026-03-08") in dry.dates
    day = ds["time"].values.astype("datetime64[D]")
    assert np.all(np.bincount((day - day[0]).astype(int)) == 24)
    sun = day == _d("2026-03-08")
    np.testing.assert_allclose(ds["bwf_gpd"].values[sun], WE + G - 60_775.0, atol=1e-9)


def _wall_clock(utc_start: str, hours: int, change_utc: str, offset_before_h: int, offset_after_h: int):
    """(UTC, local wall clock) hourly times of a zone whose offset changes at ``change_utc``."""
    utc = np.datetime64(utc_start, "s") + np.arange(hours) * np.timedelta64(H, "s")
    off = np.where(utc < np.datetime64(change_utc, "s"), offset_before_h, offset_after_h)
    return utc, utc + off * np.timedelta64(H, "s")


@pytest.mark.parametrize("change, before, after, hours_that_day", [
    ("2026-11-01T06:00", -4, -5, 25),   # New York, fall back: 01:00 twice
    ("2026-03-08T07:00", -5, -4, 23),   # New York, spring forward: no 02:00
])
def test_daylight_saving_changes_of_the_wall_clock_are_accepted(change, before, after, hours_that_day):
    day0 = np.datetime64(change, "D") - 3 * _ONE_DAY
    utc, local = _wall_clock(str(day0) + "T05:00", 7 * 24, change, before, after)
    hour = (local - local.astype("datetime64[D]")).astype(int) // H
    q = WD[hour] + G   # the sanitary flow follows the wall clock (every day on the weekday pattern here)
    rt, r = local + np.timedelta64(H, "s"), np.zeros(local.size)
    dry = dry_days(rt, r, local, q, antecedent_days=0, rain_step_s=H)
    change_day = np.datetime64(change, "D")
    i = int(np.flatnonzero(dry.day == change_day)[0])
    assert int((local.astype("datetime64[D]") == change_day).sum()) == hours_that_day
    assert dry.coverage[i] == 1.0 and dry.dry[i]
    every = np.unique(local.astype("datetime64[D]"))
    pat = diurnal_patterns(local, q, every, step_s=H)
    assert np.nanmax(np.abs(pat["mean_gpd"].sel(day_type="weekday").values - (WD + G))) < 1e-9
    ds = decompose(local, q, every, gwi_gpd=gwi(local, q, every), patterns=pat, step_s=H,
                   holidays=every[(every.astype(int) + 3) % 7 >= 5], time_utc=utc)
    np.testing.assert_allclose(ds["rdii_gpd"].values, 0.0, atol=1e-9)
    assert ds.attrs["dst_changes"] == 1
    np.testing.assert_array_equal(ds["time_utc"].values, utc.astype("datetime64[ns]"))


def test_irregular_steps_other_than_a_daylight_saving_change_are_refused():
    # an hour missing at noon is not a daylight-saving change (the reader gives gaps as NaN rows)
    t = np.array(["2026-05-01T10:00", "2026-05-01T11:00", "2026-05-01T13:00"], dtype="datetime64[s]")
    with pytest.raises(InputError, match="regular step of 3600 s.*irregular.*daylight-saving"):
        gwi(t, np.ones(3), ["2026-05-01"], step_s=H)
    # two values at one wall time in the afternoon
    t = np.array(["2026-05-01T14:00", "2026-05-01T15:00", "2026-05-01T15:00"], dtype="datetime64[s]")
    with pytest.raises(InputError, match="irregular"):
        diurnal_patterns(t, np.ones(3), [], step_s=H)
    with pytest.raises(InputError, match="datetime64"):
        gwi(np.arange(3), np.ones(3), [])


# --- events ----------------------------------------------------------------------------------------
def test_the_wet_event_of_the_hand_record():
    t, _, _, _, _, ds = _all()
    rt, r = rain()
    ev = wet_events(t, ds["rdii_gpd"].values, rt, r)
    assert len(ev) == 1
    e = ev[0]
    assert e.rain_start == np.datetime64("2026-03-04T06:00") and e.rain_end == np.datetime64("2026-03-04T08:00")
    assert e.depth_in == pytest.approx(1.0)
    assert e.window_start == e.rain_start and e.window_end == np.datetime64("2026-03-07T08:00")
    assert e.rdii_volume_gal == pytest.approx(14_375.0, abs=1e-6)
    assert e.peak_rdii_gpd == pytest.approx(30_000.0) and e.peak_time == np.datetime64("2026-03-04T12:00")
    assert e.coverage == 1.0 and e.rain_window_in == pytest.approx(1.0)
    assert e.to_dict()["rain_start"] == "2026-03-04T06:00:00"


def test_events_split_by_the_inter_event_time_and_the_minimum_depth():
    t = np.datetime64("2026-05-01T00:00", "s") + np.arange(5 * 24) * np.timedelta64(H, "s")
    x = np.zeros(t.size)
    rt = t + np.timedelta64(H, "s")   # each rain time the end of its hour
    r = np.zeros(t.size)
    r[[0, 4]] = 0.3    # 00:00-01:00 and 04:00-05:00: a dry spell of 3 h (01:00 to 04:00) -> one event of 0.6 in
    r[12] = 0.4        # 12:00-13:00: 7 h after 05:00 -> a new event, 0.4 in
    ev = wet_events(t, x, rt, r)
    assert [e.depth_in for e in ev] == [pytest.approx(0.6)]
    assert ev[0].window_end == t[0] + np.timedelta64(5 + 72, "h")
    assert ev[0].rain_window_in == pytest.approx(1.0)   # the smaller rain stays in the window
    ev = wet_events(t, x, rt, r, min_rain_in=0.25)
    assert [e.depth_in for e in ev] == [pytest.approx(0.6), pytest.approx(0.4)]
    assert ev[0].window_end == np.datetime64("2026-05-01T12:00")   # cut at the next event's rain
    assert ev[1].window_end == np.datetime64("2026-05-01T13:00") + np.timedelta64(72, "h")
    ev = wet_events(t, x, rt, r, min_rain_in=0.25, tail_hr=200.0)
    assert ev[1].window_end == t[-1] + np.timedelta64(1, "h")       # cut at the record's end
    ev = wet_events(t, x, rt, r, inter_event_hr=8.0)
    assert [e.depth_in for e in ev] == [pytest.approx(1.0)]
    ev = wet_events(t, x, rt, r, inter_event_hr=3.0, min_rain_in=0.0)   # a 3 h spell now separates
    assert [e.depth_in for e in ev] == [pytest.approx(0.3), pytest.approx(0.3), pytest.approx(0.4)]
    # rain times marking the start of their interval: the same events
    ev = wet_events(t, x, t, r, rain_label="start")
    assert ev[0].rain_start == t[0] and ev[0].rain_end == t[0] + np.timedelta64(5, "h")
    # the same times read as ends: the first event's rain starts at 23:00 the day before the flow record (left
    # out) and the second has 0.4 in (under 0.5 in)
    assert wet_events(t, x, t, r) == []
    assert [e.rain_start for e in wet_events(t, x, t, r, min_rain_in=0.0)] == [np.datetime64("2026-05-01T11:00")]
    assert wet_events(t, x, rt, np.zeros(t.size)) == []


# --- property --------------------------------------------------------------------------------------
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(c=st.floats(min_value=0.0, max_value=1e5), seed=st.integers(0, 2**16), ratio=st.floats(0.5, 1.0))
def test_a_constant_added_to_the_flow_goes_to_gwi_and_bwf_and_leaves_rdii(c, seed, ratio):
    rng = np.random.default_rng(seed)
    t, q = record()
    q = q * (1 + 0.05 * rng.standard_normal(q.size))     # noise: dry days differ, RDII not zero
    rt, r = rain()

    def run(flow):
        dry = dry_days(rt, r, t, flow)
        est = gwi(t, flow, dry, ratio=ratio)
        return est, decompose(t, flow, dry, gwi_gpd=est, patterns=diurnal_patterns(t, flow, dry))

    est0, d0 = run(q)
    est1, d1 = run(q + c)
    assert est1.gwi_gpd - est0.gwi_gpd == pytest.approx(ratio * c, rel=1e-9, abs=1e-6)
    np.testing.assert_allclose((d1["bwf_gpd"] + d1["gwi_gpd"] - d0["bwf_gpd"] - d0["gwi_gpd"]).values, c,
                               rtol=1e-9, atol=1e-6)
    np.testing.assert_allclose(d1["bwf_gpd"].values - d0["bwf_gpd"].values, (1 - ratio) * c, rtol=1e-9, atol=1e-6)
    np.testing.assert_allclose(d1["rdii_gpd"].values, d0["rdii_gpd"].values, rtol=0, atol=1e-6)
    # on dry days the RDII averages to zero at each step of the day (the pattern is their mean)
    dry = d0["dry_day"].values
    wk = d0["weekend"].values
    steps = (t - t.astype("datetime64[D]")).astype(int) // H
    for w in (False, True):
        sel = dry & (wk == w)
        sums = np.bincount(steps[sel], weights=d0["rdii_gpd"].values[sel], minlength=24)
        np.testing.assert_allclose(sums, 0.0, atol=1e-6 * q.max())
