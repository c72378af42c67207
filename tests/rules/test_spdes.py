"""15 RCNY § 18-37(b) flow checks and § 18-36(a)(8) phosphorus limits: boundaries as the rule words them,
hand calculations on the three averaging bases, leap years, the added flow, and cross-checks with pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capacitysim.errors import InputError
from capacitysim.rules import spdes

D = np.datetime64


def days(start: str, end: str) -> np.ndarray:
    return np.arange(D(start), D(end) + 1)


def record(start: str, end: str, base: float = 0.40, months: dict | None = None):
    """Constant daily flow ``base`` [MGD] with some whole months set to other constants."""
    d = days(start, end)
    q = np.full(d.size, base)
    for month, value in (months or {}).items():
        q[d.astype("datetime64[M]") == D(month)] = value
    return d, q


# ---------------------------------------------------------------------------------------------
# phosphorus: § 18-36(a)(8), "≤ 50,000 | 1.0", "> 50,000 and < 500,000 | 0.5", "≥ 500,000 | 0.2"
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "flow_gpd, limit",
    [
        (1.0, 1.0),
        (50_000.0, 1.0),  # "≤ 50,000": the boundary itself is 1.0
        (np.nextafter(50_000.0, np.inf), 0.5),  # just above: "> 50,000"
        (50_001.0, 0.5),
        (499_999.0, 0.5),
        (np.nextafter(500_000.0, 0.0), 0.5),  # just below: "< 500,000"
        (500_000.0, 0.2),  # "≥ 500,000": the boundary itself is 0.2
        (2_000_000.0, 0.2),
    ],
)
def test_phosphorus_limit_boundaries_as_written(flow_gpd, limit):
    assert spdes.phosphorus_limit_mg_l(flow_gpd) == limit
    assert isinstance(spdes.phosphorus_limit_mg_l(flow_gpd), float)


def test_phosphorus_vectorized_and_bands():
    out = spdes.phosphorus_limit_mg_l(np.array([[50_000.0, 50_000.5], [500_000.0, 10.0]]))
    np.testing.assert_array_equal(out, [[1.0, 0.5], [0.2, 1.0]])
    assert spdes.phosphorus_band(50_000) == "≤ 50,000 gpd"
    assert spdes.phosphorus_band(50_000.5) == "> 50,000 and < 500,000 gpd"
    assert spdes.phosphorus_band(500_000) == "≥ 500,000 gpd"


@pytest.mark.parametrize("bad", [0.0, -1.0, np.nan, np.inf, "lots"])
def test_phosphorus_refuses_bad_flow(bad):
    with pytest.raises(InputError, match="permitted_flow_gpd"):
        spdes.phosphorus_limit_mg_l(bad)


# ---------------------------------------------------------------------------------------------
# the look-back window: "in the prior twelve months"
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "date, expected",
    [
        ("2024-06-15", "2023-06-15"),
        ("2024-06-30", "2023-06-30"),
        ("2024-02-29", "2023-02-28"),  # leap day, month end -> month end
        ("2025-02-28", "2024-02-29"),  # month end -> the leap month's end
        ("2024-02-28", "2023-02-28"),  # not a month end in 2024: same day
        ("2024-03-31", "2023-03-31"),
        ("2024-12-31", "2023-12-31"),
    ],
)
def test_months_before_twelve(date, expected):
    assert spdes.months_before(D(date)) == D(expected)


def test_months_before_one_month_clamps_and_keeps_month_ends():
    assert spdes.months_before(D("2024-03-30"), 1) == D("2024-02-29")  # day 30 clamped to leap Feb
    assert spdes.months_before(D("2023-03-30"), 1) == D("2023-02-28")
    assert spdes.months_before(D("2024-04-30"), 1) == D("2024-03-31")  # month end -> month end
    assert spdes.months_before(D("2024-05-15"), 0) == D("2024-05-15")


def test_in_lookback_both_boundaries():
    as_of = D("2024-05-15")
    ends = np.array(["2023-05-14", "2023-05-15", "2023-05-16", "2024-05-15", "2024-05-16"], dtype="datetime64[D]")
    # exactly 12 months before: out; a day inside: in; the as-of date: in; the day after: out.
    np.testing.assert_array_equal(spdes.in_lookback(ends, as_of), [False, False, True, True, False])


def test_month_end_as_of_sees_exactly_twelve_monthly_periods_every_month_1996_2032():
    months = np.arange(D("1995-01", "M"), D("2033-12", "M") + 1)
    ends = (months + 1).astype("datetime64[D]") - 1
    for as_of in ends[24:-24]:
        inside = ends[spdes.in_lookback(ends, as_of)]
        assert inside.size == 12, as_of
        assert inside[-1] == as_of


def test_violation_exactly_twelve_months_before_does_not_count_one_day_inside_does():
    d, q = record("2023-01-01", "2024-06-30", months={"2023-06": 0.55})
    periods = spdes.period_averages(d, q, "month")
    # June 2023 ends 2023-06-30. As of 2024-06-30 that is exactly 12 months before: outside.
    out = spdes.check_connection(periods, 0.50, "2024-06-30")
    assert not out.violation_in_prior_12_months and not out.connection_prohibited
    assert str(out.window.end[0]) == "2023-07-31" and len(out.window) == 12
    # As of 2024-06-29 the window starts after 2023-06-29: June 2023 ends a day inside it.
    inside = spdes.check_connection(periods, 0.50, "2024-06-29")
    assert inside.violation_in_prior_12_months and inside.connection_prohibited
    assert inside.grounds == (spdes.GROUND_PRIOR_VIOLATION,)
    assert str(inside.window.end[inside.worst_index]) == "2023-06-30"
    assert inside.worst_average_mgd == pytest.approx(0.55, abs=1e-12)


def test_thirty_day_period_boundaries():
    # One high day, 2023-06-10: 30-day periods ending 2023-06-10 .. 2023-07-09 contain it.
    d = days("2023-01-01", "2024-12-31")
    q = np.full(d.size, 0.40)
    q[d == D("2023-06-10")] = 0.40 + 30 * 0.11  # lifts each window holding it by 0.11 -> 0.51
    periods = spdes.period_averages(d, q, "30day")
    assert str(periods.end[0]) == "2023-01-30"  # the first full window ends on day 30
    viol = spdes.violations(periods, 0.50)
    assert str(viol.end[0]) == "2023-06-10" and str(viol.end[-1]) == "2023-07-09" and len(viol) == 30
    # The last violating period ends 2023-07-09: as of 2024-07-09 it is exactly 12 months before.
    assert not spdes.check_connection(periods, 0.50, "2024-07-09").violation_in_prior_12_months
    assert spdes.check_connection(periods, 0.50, "2024-07-08").violation_in_prior_12_months


def test_periods_running_on_the_as_of_date_do_not_count():
    d, q = record("2023-01-01", "2024-06-30", months={"2024-06": 0.9})
    periods = spdes.period_averages(d, q, "month")
    out = spdes.check_connection(periods, 0.5, "2024-06-29")  # June 2024 ends after the as-of date
    assert not out.violation_in_prior_12_months
    assert str(out.window.end[-1]) == "2024-05-31"


def test_no_period_in_window_is_an_error():
    d, q = record("2023-01-01", "2023-03-31")
    with pytest.raises(InputError, match="look-back window"):
        spdes.check_connection(spdes.period_averages(d, q), 0.5, "2025-01-01")


# ---------------------------------------------------------------------------------------------
# at the limit / just above; the added flow
# ---------------------------------------------------------------------------------------------


def test_month_exactly_at_the_limit_is_not_a_violation_just_above_is():
    d, q = record("2024-01-01", "2024-12-31", base=0.30, months={"2024-05": 0.50})
    periods = spdes.period_averages(d, q)
    at = spdes.check_connection(periods, 0.50, "2024-12-31")
    assert not at.violation_in_prior_12_months and at.headroom_gpd == pytest.approx(0.0, abs=1e-6)
    # One May day higher by 31 x 100 gpd: the May average is 100 gpd above the limit.
    q2 = q.copy()
    q2[d == D("2024-05-17")] += 31 * 100 / 1e6
    above = spdes.check_connection(spdes.period_averages(d, q2), 0.50, "2024-12-31")
    assert above.violation_in_prior_12_months and above.n_violations == 1
    assert above.headroom_gpd == pytest.approx(-100.0, abs=1e-6)


def test_floating_point_average_equal_to_the_limit_is_not_a_violation():
    # 0.1 summed 31 times and divided by 31 is not exactly 0.1 in floating point.
    d = days("2024-01-01", "2024-01-31")
    q = np.full(d.size, 0.1)
    avg = spdes.monthly_averages(d, q).average_mgd[0]
    assert not spdes.exceeds(avg, 0.1)
    assert spdes.exceeds(avg, 0.1, added_gpd=1.0)  # 1 gpd on 0.1 MGD is well above the tolerance


def test_added_flow_that_tips_exactly_one_month_over():
    # 2024 months at 0.40 MGD, except March 0.47 and October 0.45; limit 0.50: headroom 30,000 gpd.
    d, q = record("2024-01-01", "2024-12-31", base=0.40, months={"2024-03": 0.47, "2024-10": 0.45})
    periods = spdes.period_averages(d, q)
    room = spdes.check_connection(periods, 0.50, "2024-12-31")
    assert room.headroom_before_gpd == pytest.approx(30_000.0, abs=1e-6)
    exact = spdes.check_connection(periods, 0.50, "2024-12-31", 30_000.0)
    assert not exact.projected_violation and not exact.connection_prohibited
    assert exact.headroom_gpd == pytest.approx(0.0, abs=1e-6)
    tip = spdes.check_connection(periods, 0.50, "2024-12-31", 30_001.0)
    assert tip.projected_violation and tip.connection_prohibited
    assert tip.n_projected_violations == 1 and tip.grounds == (spdes.GROUND_ADDED_FLOW,)
    assert str(tip.window.end[tip.worst_index]) == "2024-03-31"
    assert tip.headroom_gpd == pytest.approx(-1.0, abs=1e-6)
    assert tip.worst_projected_mgd == pytest.approx(0.500001, abs=1e-12)
    # Pending connections are summed: 20,000 + 10,001 = 30,001 gpd.
    both = spdes.check_connection(periods, 0.50, "2024-12-31", [20_000.0, 10_001.0])
    assert both.added_gpd == 30_001.0 and both.n_projected_violations == 1
    # 50,001 gpd tips October (0.45) too.
    assert spdes.check_connection(periods, 0.50, "2024-12-31", 50_001.0).n_projected_violations == 2


def test_both_grounds_when_the_record_already_violates_and_flow_is_added():
    d, q = record("2024-01-01", "2024-12-31", months={"2024-04": 0.6})
    out = spdes.check_connection(spdes.period_averages(d, q), 0.5, "2024-12-31", 1000.0)
    assert out.grounds == (spdes.GROUND_PRIOR_VIOLATION, spdes.GROUND_ADDED_FLOW)
    assert len(out.reasons) == 2 and all("18-37(b)" in r for r in out.reasons)


@pytest.mark.parametrize("basis", spdes.BASES)
def test_added_flow_raises_every_period_average_by_itself(basis):
    rng = np.random.default_rng(7)
    d = days("2022-01-01", "2024-12-31")
    q = rng.uniform(0.2, 0.6, d.size)
    p = spdes.period_averages(d, q, basis)
    p_added = spdes.period_averages(d, q + 25_000 / 1e6, basis)
    np.testing.assert_allclose(p_added.average_mgd - p.average_mgd, 0.025, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    flows=st.lists(st.floats(0.05, 2.0), min_size=400, max_size=400),
    added=st.lists(st.floats(0.0, 500_000.0), min_size=2, max_size=2),
    basis=st.sampled_from(spdes.BASES),
)
def test_headroom_and_projection_are_consistent_and_monotone(flows, added, basis):
    d = np.arange(D("2023-01-01"), D("2023-01-01") + 400)
    p = spdes.period_averages(d, np.array(flows), basis)
    lo, hi = sorted(added)
    a = spdes.check_connection(p, 1.0, d[-1], lo)
    b = spdes.check_connection(p, 1.0, d[-1], hi)
    assert b.headroom_gpd <= a.headroom_gpd
    assert a.headroom_gpd == pytest.approx(a.headroom_before_gpd - lo)
    assert (not a.projected_violation) or b.projected_violation
    assert b.n_projected_violations >= a.n_projected_violations
    # a projected violation is negative headroom (beyond the equality tolerance) and nothing else
    for v in (a, b):
        assert v.projected_violation == (v.headroom_gpd < -spdes.EQUALITY_RTOL * 1e6)


# ---------------------------------------------------------------------------------------------
# the three bases against hand calculations; leap years; incomplete periods
# ---------------------------------------------------------------------------------------------


def stepped_2023():
    """2023, month m (1..12) at 0.30 + 0.01 m MGD every day."""
    d = days("2023-01-01", "2023-12-31")
    m = (d.astype("datetime64[M]") - D("2023-01", "M")).astype(int) + 1
    return d, 0.30 + 0.01 * m


def test_three_bases_on_one_record_by_hand():
    d, q = stepped_2023()
    month = spdes.period_averages(d, q, "month")
    np.testing.assert_allclose(month.average_mgd, 0.30 + 0.01 * np.arange(1, 13), atol=1e-12)
    assert month.complete.all() and list(month.days_present[:3]) == [31, 28, 31]

    thirty = spdes.period_averages(d, q, "30day")
    at = {str(e): a for e, a in zip(thirty.end, thirty.average_mgd)}
    # window 17 Jan .. 15 Feb: 15 days at 0.31 and 15 at 0.32
    assert at["2023-02-15"] == pytest.approx((15 * 0.31 + 15 * 0.32) / 30, abs=1e-12)
    # window 31 Jan .. 1 Mar: 1 day at 0.31, 28 at 0.32, 1 at 0.33 = 9.6 / 30 = 0.32
    assert at["2023-03-01"] == pytest.approx(0.32, abs=1e-12)
    assert len(thirty) == 365 - 29

    twelve = spdes.period_averages(d, q, "12month")
    assert len(twelve) == 1 and str(twelve.start[0]) == "2023-01-01" and str(twelve.end[0]) == "2023-12-31"
    # the mean of the twelve monthly averages (0.31 .. 0.42) = 0.365 ...
    assert twelve.average_mgd[0] == pytest.approx(0.365, abs=1e-12)
    # ... not the day-weighted annual mean, which differs (months have different lengths)
    assert q.mean() != pytest.approx(0.365, abs=1e-6)
    assert twelve.complete[0] and twelve.days_present[0] == 365


def test_leap_february_averages_over_29_days():
    d, q = record("2024-01-01", "2024-12-31", base=0.40)
    q[d == D("2024-02-29")] = 0.69
    feb = spdes.period_averages(d, q, "month").select(np.arange(12) == 1)
    assert feb.days_expected[0] == 29 and feb.complete[0]
    assert feb.average_mgd[0] == pytest.approx((28 * 0.40 + 0.69) / 29, abs=1e-12)  # 0.41
    thirty = spdes.period_averages(d, q, "30day")
    i = int(np.flatnonzero(thirty.end == D("2024-03-01"))[0])
    assert str(thirty.start[i]) == "2024-02-01"  # 29 February days + 1 March day
    assert thirty.average_mgd[i] == pytest.approx((29 * 0.40 + 0.69) / 30, abs=1e-12)  # 28 Feb + 1 Mar days at 0.40


def test_leap_year_as_of_dates_see_twelve_months():
    d, q = record("2023-01-01", "2025-03-31", months={"2024-02": 0.6})
    p = spdes.period_averages(d, q)
    on_leap_day = spdes.check_connection(p, 0.5, "2024-02-29")
    assert len(on_leap_day.window) == 12 and on_leap_day.violation_in_prior_12_months
    a_year_later = spdes.check_connection(p, 0.5, "2025-02-28")  # Feb 2024 ended exactly 12 months before
    assert len(a_year_later.window) == 12 and not a_year_later.violation_in_prior_12_months
    assert str(a_year_later.window_start_exclusive) == "2024-02-29"
    day_before = spdes.check_connection(p, 0.5, "2025-02-27")  # 12 months before is 2024-02-27: inside
    assert day_before.violation_in_prior_12_months


def test_incomplete_month_is_averaged_over_days_present_and_flagged():
    d, q = record("2024-01-01", "2024-12-31", base=0.40)
    q[(d >= D("2024-06-01")) & (d <= D("2024-06-10"))] = 0.70
    keep = ~((d >= D("2024-06-21")) & (d <= D("2024-06-30")))  # ten days missing at the end of June
    p = spdes.period_averages(d[keep], q[keep])
    june = p.select(p.end == D("2024-06-30"))
    assert june.days_present[0] == 20 and june.days_expected[0] == 30 and not june.complete[0]
    assert june.average_mgd[0] == pytest.approx((10 * 0.70 + 10 * 0.40) / 20, abs=1e-12)  # 0.55, not filled
    out = spdes.check_connection(p, 0.5, "2024-12-31")
    assert out.violation_in_prior_12_months and out.n_incomplete == 1


def test_month_without_any_day_is_nan_and_skipped():
    d, q = record("2024-01-01", "2024-12-31")
    keep = d.astype("datetime64[M]") != D("2024-07", "M")
    p = spdes.period_averages(d[keep], q[keep])
    assert len(p) == 12 and np.isnan(p.average_mgd[6]) and p.days_present[6] == 0
    out = spdes.check_connection(p, 0.5, "2024-12-31")
    assert len(out.window) == 11
    twelve = spdes.period_averages(d[keep], q[keep], "12month")
    assert twelve.average_mgd[0] == pytest.approx(0.40) and not twelve.complete[0]


def test_cross_check_with_pandas_on_a_random_record_with_gaps():
    rng = np.random.default_rng(3)
    d = days("2021-03-05", "2024-11-20")
    q = rng.gamma(9.0, 0.05, d.size)
    keep = rng.random(d.size) > 0.05
    d, q = d[keep], q[keep]
    s = pd.Series(q, index=pd.DatetimeIndex(d.astype("datetime64[ns]")))
    month = spdes.period_averages(d, q, "month")
    ref = s.resample("MS").mean()
    np.testing.assert_allclose(month.average_mgd, ref.to_numpy(), rtol=1e-12)
    thirty = spdes.period_averages(d, q, "30day")
    ref30 = s.rolling("30D").mean()  # window (t - 30 days, t] over the days present
    got = pd.Series(thirty.average_mgd, index=pd.DatetimeIndex(thirty.end.astype("datetime64[ns]")))
    common = got.index.intersection(ref30.index)
    assert common.size > 1000
    np.testing.assert_allclose(got[common].to_numpy(), ref30[common].to_numpy(), rtol=1e-9)
    twelve = spdes.period_averages(d, q, "12month")
    ref12 = ref.rolling(12).mean().dropna()
    np.testing.assert_allclose(twelve.average_mgd, ref12.to_numpy(), rtol=1e-12)


def test_monthly_periods_from_dmr_values():
    p = spdes.monthly_periods_from_values(
        np.array(["2024-01-31", "2024-02-29", "2024-04-30"], dtype="datetime64[D]"), [0.4, 0.45, 0.52]
    )
    assert len(p) == 4 and np.isnan(p.average_mgd[2]) and p.days_expected[1] == 29
    assert spdes.violations(p, 0.5).end.tolist() == [D("2024-04-30")]
    with pytest.raises(InputError, match="not the last day of a month"):
        spdes.monthly_periods_from_values(np.array(["2024-01-30"], dtype="datetime64[D]"), [0.4])


# ---------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------


def test_bad_records_are_refused_with_the_index():
    d = np.array(["2024-01-01", "2024-01-03", "2024-01-02"], dtype="datetime64[D]")
    with pytest.raises(InputError, match="index 2 is out of order"):
        spdes.period_averages(d, [0.4, 0.4, 0.4])
    d = np.array(["2024-01-01", "2024-01-02", "2024-01-02"], dtype="datetime64[D]")
    with pytest.raises(InputError, match="duplicate"):
        spdes.period_averages(d, [0.4, 0.4, 0.4])
    d = days("2024-01-01", "2024-01-03")
    with pytest.raises(InputError, match="NaN"):
        spdes.period_averages(d, [0.4, np.nan, 0.4])
    with pytest.raises(InputError, match="flow_mgd must be in"):
        spdes.period_averages(d, [0.4, -0.1, 0.4])
    with pytest.raises(InputError, match="basis must be one of"):
        spdes.period_averages(d, [0.4, 0.4, 0.4], "weekly")
    with pytest.raises(InputError, match="30day"):
        spdes.period_averages(d, [0.4, 0.4, 0.4], "30day")
    with pytest.raises(InputError, match="12month"):
        spdes.period_averages(d, [0.4, 0.4, 0.4], "12month")
    p = spdes.period_averages(*record("2024-01-01", "2024-12-31"))
    with pytest.raises(InputError, match="limit_mgd"):
        spdes.check_connection(p, 0.0, "2024-12-31")
    with pytest.raises(InputError, match="added_gpd"):
        spdes.check_connection(p, 0.5, "2024-12-31", -5.0)
    with pytest.raises(InputError, match="as_of"):
        spdes.check_connection(p, 0.5, "not a date")
