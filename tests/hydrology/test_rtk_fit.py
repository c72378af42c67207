"""RTK fitting to metered RDII and the design-storm credit (issue 29, items 3 and 4).

Tolerances (set from measurements on these generators, with margin; see each test):
- against SWMM 5.2 (``swmm``): event volume and peak within 0.1 %, every value within 0.1 % of the
  peak (measured 0.004 %, the same with and without initial abstraction);
- parameter recovery from 12 four-day events of 15-min data, 5 % multiplicative + 1 %-of-peak
  additive noise, a 6-h gap in about half the events: R within 10 %, T1 and T2 within 15 %, K1 and
  K2 within 25 %, T3 within 25 %, K3 within 30 % and the slow response's base T3 (1 + K3) within
  10 % (measured worst over seeds 0-5: R 7.2 %, T1 4.2 %, T2 5.6 %, T3 20.5 %, K1 3.5 %, K2 9.7 %,
  K3 21.9 %: T3 and K3 trade off at a nearly fixed base);
- interval coverage: the 90 % interval covers the true credit in at least the binomial 1 % lower
  quantile of Binomial(trials, 0.9) trials (40 trials: >= 31).
"""

from __future__ import annotations

import datetime

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from capacitysim.errors import InputError
from capacitysim.hydrology.rdii import initial_abstraction_excess, rtk_hydrograph_cfs
from capacitysim.hydrology.rtk_fit import (
    CREDIT_BASIS,
    CREDIT_BASIS_ALTERNATIVE,
    CREDIT_CLAIM,
    MIN_QUALIFYING_EVENTS,
    RdiiEvent,
    RTKSet,
    credit_interval,
    design_storm_ii_gpd,
    enough_events,
    fit_rtk,
    rain_normalised,
    rtk_response_gpd,
)
from capacitysim.units import CUBIC_FEET_PER_ACRE_INCH, GALLONS_PER_CUBIC_FOOT, GPD_PER_CFS

AREA = 150.0
DT = 0.25
TRUE = RTKSet(R=(0.015, 0.025, 0.03), T=(0.75, 4.0, 16.0), K=(2.0, 3.0, 3.5))
TRUE_IA = RTKSet(R=(0.02, 0.03, 0.04), T=(0.75, 4.0, 14.0), K=(2.0, 3.0, 4.0),
                 ia=((0.3, 0.2, 0.0), (0.5, 0.1, 0.2), (1.0, 0.05, 0.0)))
GAL_PER_AC_IN = CUBIC_FEET_PER_ACRE_INCH * GALLONS_PER_CUBIC_FOOT
# recovery tolerances [relative]: the slow response's T3 and K3 trade off against each other
# (its base T3 (1 + K3) is what the data fix), hence their wider bands and the base check
TOL = {"R1": 0.10, "R2": 0.10, "R3": 0.10, "T1": 0.15, "T2": 0.15, "T3": 0.25, "K1": 0.25, "K2": 0.25, "K3": 0.30}
TOL_BASE3 = 0.10


def _storm(rng):
    dur = rng.uniform(3, 24)
    depth = float(np.exp(rng.normal(np.log(0.9), 0.5)))
    w = rng.gamma(1.5, 1, int(round(dur / DT)))
    return depth * w / w.sum()


def _noisy(rng, q, gaps=True):
    obs = q * (1 + 0.05 * rng.standard_normal(q.size)) + 0.01 * q.max() * rng.standard_normal(q.size)
    if gaps and rng.random() < 0.5:
        g = int(rng.integers(0, q.size - 24))
        obs[g:g + 24] = np.nan  # a 6-h gap
    return obs


def make_events(rng, params, n, window=96.0, ev_sd=0.0, noise=True):
    """``n`` four-day events, each its own storm; ``ev_sd``: event-to-event spread of R (lognormal)."""
    evs = []
    for i in range(n):
        d = _storm(rng)
        rain_t = np.arange(0, window, DT)
        rain = np.zeros(rain_t.size)
        s = int(rng.integers(0, 8))
        rain[s:s + d.size] = d
        t = np.arange(DT, window + DT / 2, DT)
        p = params.scaled(float(np.exp(rng.normal(0, ev_sd)))) if ev_sd else params
        q = rtk_response_gpd(p, AREA, rain_t, rain, t)
        evs.append(RdiiEvent(rain_t, rain, t, _noisy(rng, q) if noise else q, name=f"e{i}"))
    return evs


def _rel_errors(fit: RTKSet, true: RTKSet) -> dict:
    f, t = fit.as_dict(), true.as_dict()
    return {k: f[k] / t[k] - 1 for k in ("R1", "R2", "R3", "T1", "T2", "T3", "K1", "K2", "K3")}


def _assert_recovered(fit: RTKSet, true: RTKSet):
    err = _rel_errors(fit, true)
    bad = {k: round(v, 3) for k, v in err.items() if abs(v) > TOL[k]}
    assert not bad, f"outside the tolerances {TOL}: {bad} (all: { {k: round(v, 3) for k, v in err.items()} })"
    base = fit.T[2] * (1 + fit.K[2]) / (true.T[2] * (1 + true.K[2])) - 1
    assert abs(base) <= TOL_BASE3, f"slow response's base off by {base:.1%}"


# --------------------------------------------------------------------------- the response


def test_response_is_rdii_convolution_on_swmm_clock():
    """Without abstraction the response is rdii.rtk_hydrograph_cfs's sum on the same step, read on
    SWMM's clock: the value at (m) dt is the response to the steps ending by (m - 1) dt."""
    rng = np.random.default_rng(1)
    rain_t = np.arange(0, 24, DT)
    rain = rng.gamma(0.3, 0.05, rain_t.size)
    hyd = rtk_hydrograph_cfs(list(zip(TRUE.R, TRUE.T, TRUE.K)), AREA, rain_t, rain, dt_hr=DT, tail_hr=120)
    t = np.arange(2, hyd.size) * DT
    mine = rtk_response_gpd(TRUE, AREA, rain_t, rain, t)
    np.testing.assert_allclose(mine, hyd[: t.size] * GPD_PER_CFS, rtol=1e-9, atol=1e-9 * hyd.max() * GPD_PER_CFS)
    # times between the steps hold the value of the step that ends after them
    half = rtk_response_gpd(TRUE, AREA, rain_t, rain, t - DT / 2)
    np.testing.assert_allclose(half, mine, rtol=1e-12)


def _apply_ia_reference(depths, dt, dmax, drec, d0):
    """SWMM 5.2 rdii.c applyIA, one step at a time (the reference the run-wise version must equal)."""
    used, out = d0, []
    for d in depths:
        ia = max(dmax - used, 0.0)
        if d > 0:
            net = max(d - ia, 0.0)
            used += d - net
        else:
            used = max(used - dt / 24.0 * drec, 0.0)
            net = 0.0
        out.append(net)
    return np.array(out)


@pytest.mark.parametrize("dmax,drec,d0", [(0.3, 0.2, 0.0), (0.5, 1.0, 0.2), (1.0, 0.05, 1.5), (0.2, 0.0, 0.0)])
def test_initial_abstraction_equals_swmm_step_by_step(dmax, drec, d0):
    rng = np.random.default_rng(4)
    d = np.where(rng.random(2000) < 0.2, rng.gamma(0.5, 0.05, 2000), 0.0)
    np.testing.assert_allclose(initial_abstraction_excess(d, DT, dmax, drec, d0),
                               _apply_ia_reference(d, DT, dmax, drec, d0), atol=1e-14)


def test_initial_abstraction_removes_its_depth_from_the_volume():
    rain_t = np.arange(0, 4, DT)
    rain = np.full(rain_t.size, 0.1)  # 1.6 in in one wet run
    t = np.arange(DT, 200, DT)
    one = RTKSet(R=(0.05, 0.0, 0.0), T=(1.0, 2.0, 3.0), K=(2.0, 2.0, 2.0), ia=((0.5, 0.1, 0.2), (0, 0, 0), (0, 0, 0)))
    q = rtk_response_gpd(one, AREA, rain_t, rain, t)
    vol_gal = q.sum() * DT / 24
    assert vol_gal == pytest.approx(0.05 * (1.6 - 0.3) * AREA * GAL_PER_AC_IN, rel=1e-9)


def test_bad_sets_are_refused():
    with pytest.raises(InputError):
        RTKSet(R=(0.1, 0.1), T=(1, 2, 3), K=(1, 1, 1))
    with pytest.raises(InputError):
        RTKSet(R=(0.1, -0.1, 0.1), T=(1, 2, 3), K=(1, 1, 1))
    with pytest.raises(InputError):
        design_storm_ii_gpd(TRUE, AREA, basis="mean")


# --------------------------------------------------------------------------- against SWMM


def _swmm_model(path, rows, area, rain_t, rain_in, days, report="00:15:00"):
    t0 = datetime.datetime(2020, 1, 1)
    ts = [f"TS1 {(t0 + datetime.timedelta(hours=float(t))):%m/%d/%Y %H:%M} {d:.6f}" for t, d in zip(rain_t, rain_in)]
    end = t0 + datetime.timedelta(days=days)
    hyd = "\n".join(f"UH1 ALL {lab} {' '.join(f'{v:g}' for v in r)}"
                    for lab, r in zip(("SHORT", "MEDIUM", "LONG"), rows))
    path.write_text(f"""[OPTIONS]
FLOW_UNITS CFS
FLOW_ROUTING KINWAVE
START_DATE 01/01/2020
START_TIME 00:00:00
REPORT_START_DATE 01/01/2020
REPORT_START_TIME 00:00:00
END_DATE {end:%m/%d/%Y}
END_TIME 00:00:00
WET_STEP 00:15:00
DRY_STEP 00:15:00
ROUTING_STEP 0:00:30
REPORT_STEP {report}
THREADS 1

[RAINGAGES]
RG1 VOLUME 0:15 1.0 TIMESERIES TS1

[JUNCTIONS]
J1 100 10 0 0 0

[OUTFALLS]
O1 99 FREE NO

[CONDUITS]
C1 J1 O1 400 0.013 0 0 0 0

[XSECTIONS]
C1 CIRCULAR 3 0 0 0 1

[HYDROGRAPHS]
UH1 RG1
{hyd}

[RDII]
J1 UH1 {area}

[REPORT]
NODES J1

[TIMESERIES]
{chr(10).join(ts)}
""")


def _swmm_rdii_gpd(tmp_path, rows, rain_t, rain_in, days, report="00:15:00"):
    from capacitysim.network.engine import node_series, run_inp

    _swmm_model(tmp_path / "m.inp", rows, AREA, rain_t, rain_in, days, report)
    s = node_series(run_inp(tmp_path / "m.inp", tmp_path / "w"), "J1", "lateral_inflow")
    return s["elapsed_hr"].values, s.values * GPD_PER_CFS


@pytest.mark.swmm
@pytest.mark.parametrize("params", [TRUE_IA, RTKSet(R=TRUE_IA.R, T=TRUE_IA.T, K=TRUE_IA.K)], ids=["with-IA", "no-IA"])
def test_response_matches_swmm(tmp_path, params):
    """SWMM 5.2's RDII inflow at a node of a one-pipe model, three storms over three days (5-min
    reports): volume and peak within 0.1 %, every value within 0.1 % of the peak."""
    pytest.importorskip("swmm.toolkit")
    rng = np.random.default_rng(3)
    rain_t = np.arange(0, 72, DT)
    rain = np.zeros(rain_t.size)
    for s0, n, tot in ((2, 24, 1.2), (30, 12, 0.6), (40, 20, 1.5)):
        w = rng.gamma(2, 1, n)
        rain[s0 * 4: s0 * 4 + n] = tot * w / w.sum()
    t, q = _swmm_rdii_gpd(tmp_path, params.rows(), rain_t, rain, days=6, report="00:05:00")
    mine = rtk_response_gpd(params, AREA, rain_t, rain, t)
    assert mine.sum() == pytest.approx(q.sum(), rel=1e-3)
    assert mine.max() == pytest.approx(q.max(), rel=1e-3)
    assert np.max(np.abs(mine - q)) <= 1e-3 * q.max()
    if params.ia is not None:  # the abstraction matters here: without it the volume is much larger
        free = rtk_response_gpd(RTKSet(R=params.R, T=params.T, K=params.K), AREA, rain_t, rain, t)
        assert free.sum() > 1.2 * q.sum()


@pytest.mark.swmm
def test_recovery_from_swmm_records(tmp_path):
    """Twelve storms 4 days apart run through SWMM (15-min reports), noise and gaps added, cut into
    events (each with the 4 days of rain before it): the fit recovers the set within TOL."""
    pytest.importorskip("swmm.toolkit")
    rng = np.random.default_rng(11)
    days = 50
    rain_t = np.arange(0, days * 24, DT)
    rain = np.zeros(rain_t.size)
    starts = []
    for k in range(12):
        s = 24 + 96 * k
        d = _storm(rng)
        rain[int(s / DT): int(s / DT) + d.size] = d
        starts.append(s)
    t, q = _swmm_rdii_gpd(tmp_path, TRUE.rows(), rain_t, rain, days=days)
    obs = q * (1 + 0.05 * rng.standard_normal(q.size)) + 0.01 * q.max() * rng.standard_normal(q.size)
    evs = []
    for k, s in enumerate(starts):
        win = (t > s) & (t <= s + 96)
        o = obs[win].copy()
        if k % 2:
            o[100:124] = np.nan
        lb = (rain_t >= s - 96) & (rain_t < s + 96)
        evs.append(RdiiEvent(rain_t[lb], rain[lb], t[win], o, name=f"s{k}"))
    fit = fit_rtk(evs, area_ac=AREA)
    _assert_recovered(fit.params, TRUE)
    nse = [e["nse"] for e in fit.events]
    assert np.median(nse) > 0.9 and min(nse) > 0.7  # the smallest storms sit nearer the additive noise


# --------------------------------------------------------------------------- the fit


@pytest.mark.parametrize("seed", [0, 3])
def test_recovery_own_convolution(seed):
    rng = np.random.default_rng(seed)
    fit = fit_rtk(make_events(rng, TRUE, 12), area_ac=AREA)
    assert fit.success
    _assert_recovered(fit.params, TRUE)
    assert set(fit.se) == {"R1", "R2", "R3", "T1", "T2", "T3", "K1", "K2", "K3"}
    assert all(np.isfinite(v) and v >= 0 for v in fit.se.values())
    # the true values lie within a few standard errors of the fitted R's and T1 (they are the best determined)
    true = TRUE.as_dict()
    for k in ("R1", "R2", "R3", "T1"):
        assert abs(fit.params.as_dict()[k] - true[k]) < 6 * fit.se[k] + 0.02 * true[k]
    assert len(fit.events) == 12 and len(fit.fitted) == 12
    for ev, row in zip(fit.events, fit.fitted):
        assert row.shape == (384,)
    assert min(e["nse"] for e in fit.events) > 0.9
    assert max(abs(e["volume_error_pct"]) for e in fit.events) < 10
    assert all(r["name"] in true for r in fit.table())


def test_recovery_with_fixed_initial_abstraction():
    rng = np.random.default_rng(2)
    evs = make_events(rng, TRUE_IA, 12)
    fit = fit_rtk(evs, area_ac=AREA, ia=TRUE_IA.ia)
    _assert_recovered(fit.params, TRUE_IA)
    assert fit.params.ia == TRUE_IA.ia


def test_fit_orders_the_times_and_caps_the_r_sum():
    """Observed RDII of 1.5 x the rain volume: the fit keeps R1 + R2 + R3 <= 1 and T1 < T2 < T3."""
    rng = np.random.default_rng(5)
    big = RTKSet(R=(0.5, 0.5, 0.5), T=(1.0, 4.0, 12.0), K=(2.0, 2.0, 2.0))
    fit = fit_rtk(make_events(rng, big, 6), area_ac=AREA)
    assert sum(fit.params.R) <= 1.0 + 1e-3
    assert fit.params.T[0] < fit.params.T[1] < fit.params.T[2]


def test_fit_refuses_no_events():
    with pytest.raises(InputError):
        fit_rtk([], area_ac=AREA)


# --------------------------------------------------------------------------- the design storm and the credit


def test_design_storm_bases():
    """Volume basis = sum(R) x 2.1 in x area over one day (no abstraction); the peak basis is the
    peak rate, larger for a set whose fast response dominates."""
    vol = design_storm_ii_gpd(TRUE, AREA, basis=CREDIT_BASIS_ALTERNATIVE)
    assert vol == pytest.approx(sum(TRUE.R) * 2.1 * AREA * GAL_PER_AC_IN, rel=1e-6)
    peak = design_storm_ii_gpd(TRUE, AREA)
    assert CREDIT_BASIS == "peak" and peak > vol
    # the peak responds to T, the volume does not
    slow = RTKSet(R=TRUE.R, T=tuple(2 * t for t in TRUE.T), K=TRUE.K)
    assert design_storm_ii_gpd(slow, AREA, basis="volume") == pytest.approx(vol, rel=1e-6)
    assert design_storm_ii_gpd(slow, AREA) < 0.8 * peak
    # the abstraction lowers both
    ia = RTKSet(R=TRUE.R, T=TRUE.T, K=TRUE.K, ia=((0.5, 0.1, 0.0),) * 3)
    assert design_storm_ii_gpd(ia, AREA, basis="volume") == pytest.approx(vol * (2.1 - 0.5) / 2.1, rel=1e-6)


@settings(max_examples=25, deadline=None)
@given(r=st.tuples(*[st.floats(0.001, 0.1)] * 3), t1=st.floats(0.25, 3.0), q=st.tuples(st.floats(1.5, 6), st.floats(1.5, 6)),
       k=st.tuples(*[st.floats(1.0, 6.0)] * 3), c=st.floats(0.05, 5.0), basis=st.sampled_from(["peak", "volume"]))
def test_design_storm_ii_scales_with_r(r, t1, q, k, c, basis):
    """Without abstraction the response is linear in R: c x every R gives c x the design-storm I/I."""
    p = RTKSet(R=r, T=(t1, t1 * q[0], t1 * q[0] * q[1]), K=k)
    a = design_storm_ii_gpd(p, AREA, basis=basis)
    assert design_storm_ii_gpd(p.scaled(c), AREA, basis=basis) == pytest.approx(c * a, rel=1e-9)


def _trial(seed, n_boot, n_events=8, basis="peak"):
    rng = np.random.default_rng(seed)
    pre = make_events(rng, TRUE, n_events, ev_sd=0.1)
    post = make_events(rng, TRUE.scaled(0.6), n_events, ev_sd=0.1)
    c = credit_interval(pre, post, area_ac=AREA, n_boot=n_boot, seed=seed, basis=basis, start=START)
    truth = design_storm_ii_gpd(TRUE, AREA, basis=basis) - design_storm_ii_gpd(TRUE.scaled(0.6), AREA, basis=basis)
    return c, truth


START = RTKSet(R=(0.01, 0.01, 0.01), T=(1.0, 5.0, 20.0), K=(2.0, 2.0, 2.0))


def test_credit_interval_point_bounds_and_claim():
    c, truth = _trial(0, n_boot=30)
    assert c.lower_gpd <= c.point_gpd <= c.upper_gpd
    assert c.claim == CREDIT_CLAIM == "lower" and c.claimed_gpd == pytest.approx(max(c.lower_gpd, 0))
    assert c.point_gpd == pytest.approx(truth, rel=0.3)  # 8 events, R 10 % apart: the difference is about +-10 % (1 sd)
    assert c.n_failed == 0 and c.samples.size == 30
    assert c.pre_ii_gpd - c.post_ii_gpd == pytest.approx(c.point_gpd)
    # the same seed gives the same interval
    again, _ = _trial(0, n_boot=30)
    assert again.lower_gpd == c.lower_gpd and again.upper_gpd == c.upper_gpd


def test_credit_volume_basis_and_point_claim():
    rng = np.random.default_rng(8)
    pre, post = make_events(rng, TRUE, 6), make_events(rng, TRUE.scaled(0.5), 6)
    c = credit_interval(pre, post, area_ac=AREA, n_boot=10, basis="volume", claim="point", start=START)
    assert c.claimed_gpd == c.point_gpd
    truth = 0.5 * sum(TRUE.R) * 2.1 * AREA * GAL_PER_AC_IN
    assert c.point_gpd == pytest.approx(truth, rel=0.05)
    # no I/I removed: the claim is never negative
    rng = np.random.default_rng(9)
    same = credit_interval(make_events(rng, TRUE, 6), make_events(rng, TRUE, 6), area_ac=AREA, n_boot=10, start=START)
    assert same.claimed_gpd >= 0 and same.lower_gpd < 0.05 * same.pre_ii_gpd


def _coverage(trials, n_boot):
    covered = 0
    for s in range(trials):
        c, truth = _trial(100 + s, n_boot=n_boot)
        covered += c.lower_gpd <= truth <= c.upper_gpd
    need = int(stats.binom.ppf(0.01, trials, 0.9))
    return covered, need


def test_interval_coverage_quick():
    covered, need = _coverage(trials=5, n_boot=25)
    assert covered >= need, f"{covered}/5 covered, {need} needed"


@pytest.mark.slow
def test_interval_coverage_40_trials():
    """40 seeded trials (8 events per period, R varying 10 % from event to event, n_boot 60): the
    90 % interval covers the true credit in at least Binomial(40, 0.9)'s 1 % quantile (31)."""
    covered, need = _coverage(trials=40, n_boot=60)
    assert covered >= need, f"{covered}/40 covered, {need} needed"


# --------------------------------------------------------------------------- checks


def test_rain_normalised_regression():
    rng = np.random.default_rng(6)
    evs = make_events(rng, TRUE, 8, window=120.0, noise=False)
    r = rain_normalised(evs)
    assert r["n"] == 8 and r["r2"] > 0.999
    assert r["slope_gal_per_in"] == pytest.approx(sum(TRUE.R) * AREA * GAL_PER_AC_IN, rel=0.02)
    assert abs(r["intercept_gal"]) < 0.02 * r["slope_gal_per_in"]
    post = rain_normalised(make_events(rng, TRUE.scaled(0.6), 8, window=120.0, noise=False))
    assert post["slope_gal_per_in"] == pytest.approx(0.6 * r["slope_gal_per_in"], rel=0.03)


def test_enough_events():
    rng = np.random.default_rng(7)
    three = make_events(rng, TRUE, 3)
    ok, why = enough_events(three)
    assert not ok and "too few" in why and str(MIN_QUALIFYING_EVENTS) in why
    many = make_events(rng, TRUE, 14)
    ok, why = enough_events([e for e in many if e.rain_depth_in() >= 0.5])
    assert ok, why
    # too dry: enough events, none near the design storm
    dry = [RdiiEvent(e.rain_t_hr, e.rain_in * 0.7 / e.rain_in.sum(), e.t_hr, e.rdii_gpd) for e in many]
    ok, why = enough_events(dry)
    assert not ok and "too dry" in why
    # gaps: an event mostly unobserved does not qualify
    holed = [RdiiEvent(e.rain_t_hr, e.rain_in, e.t_hr, np.where(np.arange(e.t_hr.size) < 200, np.nan, e.rdii_gpd))
             for e in many]
    assert not enough_events(holed)[0]
