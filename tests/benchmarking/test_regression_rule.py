"""Issue 17: the regression rule of ``bench compare`` on a test double of the clock (seeded noise).

No test here depends on this machine's speed: every timing is a fake clock advanced by fake calls
(:mod:`.timer_double`). The noise is that measured on the 2-core development machine (5 % per
sample's ratio); a loaded machine is the 30 % spread measured there under load, with the case's time
inflated by 25 %.

* A 10 % slowdown is a regression in at least 99 of 100 seeded trials.
* Pure noise is a regression in at most 1 of 100 (the rule's 99 % interval bounds it at 0.5 %);
  it is "no regression" in most trials (never "inconclusive" more than 1 time in 5).
* A loaded machine is "inconclusive", never "regression".
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from scipy import stats

from capacitysim.benchmarking.compare import (
    CONFIDENCE,
    DEFAULT_THRESHOLD,
    EXIT_INCONCLUSIVE,
    compare,
    judge_speed,
)
from capacitysim.benchmarking.runner import measure
from capacitysim.benchmarking.stats import (
    mann_whitney_null_cdf,
    median_interval,
    robust_spread,
    shift_interval,
)

from .timer_double import LOADED_NOISE, FakeClock, fake_doc

TRIALS = 100
#: Fake calls of 0.1 s: 40 samples per run within the 20 s budget (the runner's default maximum).
FAST = {"case_s": 0.1, "ref_s": 0.1}


def _outcomes(**current) -> Counter:
    out = Counter()
    for seed in range(TRIALS):
        base = fake_doc(1_000 + seed, **FAST)
        cur = fake_doc(50_000 + seed, **FAST, **current)
        out[compare(base, cur).outcome] += 1
    return out


def test_a_10_percent_slowdown_is_a_regression():
    out = _outcomes(slowdown=1.10)
    assert out["regression"] >= 99, out


def test_pure_noise_of_the_measured_size_is_rarely_a_false_alarm():
    out = _outcomes()
    assert out["regression"] <= 1, out
    assert out["ok"] >= 80, out  # the tool decides on a quiet machine


def test_a_loaded_machine_is_inconclusive_not_a_regression():
    out = _outcomes(noise=LOADED_NOISE, inflation=1.25, load=3.8)
    assert out["regression"] == 0, out
    assert out["inconclusive"] >= 95, out


def test_a_loaded_machine_says_how_noisy_and_suggests_repeats():
    base = fake_doc(1, **FAST, load=3.8)  # the same regime: the noise rule decides
    cur = fake_doc(2, **FAST, noise=LOADED_NOISE, inflation=1.25, load=3.8)
    res = compare(base, cur)
    (f,) = res.findings
    assert res.outcome == "inconclusive" and res.exit_code == EXIT_INCONCLUSIVE == 4
    assert "too noisy to decide" in f.message and "--repeats" in f.message
    assert "1-min load 3.8-3.8 on 2 cores" in f.message
    assert f.detail["spread_rel_current"] > 2 * f.detail["spread_rel_baseline"]


def test_runs_of_different_load_regimes_are_never_a_regression():
    """Issue 30: a baseline stored at load 4.8 on 2 cores and a run on a quiet machine (load 0.3), no code change,
    measured +130 % on hydrology.runoff_depth.1e6: with that shift and the measured noise, 100 of 100 seeded
    comparisons across regimes are inconclusive, and the same shift within one regime is a regression in all."""
    across, within = Counter(), Counter()
    for seed in range(TRIALS):
        base = fake_doc(1_000 + seed, **FAST, load=4.8)
        across[compare(base, fake_doc(50_000 + seed, **FAST, inflation=2.3, load=0.3)).outcome] += 1
        within[compare(base, fake_doc(50_000 + seed, **FAST, inflation=2.3, load=4.8)).outcome] += 1
    assert across == {"inconclusive": TRIALS}, across
    assert within == {"regression": TRIALS}, within
    f = compare(fake_doc(1, **FAST, load=4.8), fake_doc(2, **FAST, inflation=2.3, load=0.3)).findings[0]
    assert "different load regimes" in f.message and "oversubscribed (1-min load 4.8 on 2 cores)" in f.message
    assert "quiet (1-min load 0.3 on 2 cores)" in f.message and "+130" in f.message
    assert [r["regime"] for r in f.detail["load_regimes"]] == ["oversubscribed", "quiet"]


@pytest.mark.parametrize("bad", [{"regime": "quiet", "load1_median": "x", "cores": 2}, {"regime": "calm"}, "quiet",
                                 {"regime": "quiet", "load1_median": 0.1, "cores": True}])
def test_a_recorded_regime_that_does_not_hold_is_computed_again_from_the_samples(bad):
    base = fake_doc(1, **FAST, load=4.8)
    base["speed"]["fake.case"]["load_regime"] = bad
    f = compare(base, fake_doc(2, **FAST, load=0.3)).findings[0]
    assert f.outcome == "inconclusive" and f.detail["load_regimes"][0]["regime"] == "oversubscribed"


def test_a_regression_names_the_case_the_change_and_its_interval():
    res = compare(fake_doc(1, **FAST), fake_doc(2, **FAST, slowdown=1.5))
    (f,) = res.findings
    assert res.exit_code == 1 and f.name == "fake.case" and f.outcome == "regression"
    est, (lo, hi) = f.detail["change_pct"], f.detail["interval_pct"]
    assert 40 < lo < est < hi < 60  # the true change is +50 %
    assert f"{est:+.1f} %" in f.message and f"{lo:+.1f} % to {hi:+.1f} %" in f.message and "99 % interval" in f.message


def test_a_large_speedup_is_no_regression():
    res = compare(fake_doc(1, **FAST), fake_doc(2, **FAST, slowdown=0.7))
    assert res.outcome == "ok" and res.findings[0].message.startswith("faster")


# ------------------------------------------------------------------------------------------------
# the runner on the fake clock: interleaving, stopping rule, what is stored
# ------------------------------------------------------------------------------------------------
def test_interleaving_cancels_a_drift_that_hits_both_calls():
    """The machine slows down 3x during the run (a load arriving): the ratio does not move."""
    clock = FakeClock(7)
    state = {"calls": 0}

    def drifting(true_s):
        def fn():
            state["calls"] += 1
            factor = 1.0 + 2.0 * min(1.0, clock.t_wall / 10.0)  # 1x at t=0, 3x from t=10 s on
            clock.t_cpu += true_s * factor
            clock.t_wall += true_s * factor
        return fn

    e = measure(drifting(0.2), drifting(0.1), timer=clock, min_samples=30, max_samples=30)
    r = np.array(e["samples"]["ratio"])
    assert e["n_samples"] == 30 and np.all(np.abs(r / 2.0 - 1.0) < 0.15)
    assert abs(e["ratio"] / 2.0 - 1.0) < 0.02


def test_sampling_stops_when_the_interval_is_narrow_or_the_budget_is_spent():
    clock = FakeClock(4)
    precise = measure(clock.call(0.2, 0.002), clock.call(0.1, 0.002), timer=clock, min_samples=8)
    assert precise["n_samples"] == 8 and "within +/-1.5 %" in precise["stop"]
    lo, hi = precise["ratio_ci"]
    assert lo <= precise["ratio"] <= hi and abs(precise["ratio"] - 2.0) < 0.01
    clock = FakeClock(5)
    noisy = measure(clock.call(1.0, 0.2), clock.call(1.0, 0.2), timer=clock, min_samples=6, budget_s=15.0)
    assert 6 <= noisy["n_samples"] < 40 and noisy["stop"].startswith("time budget 15 s spent")
    assert noisy["elapsed_s"] >= 15.0


def test_every_sample_is_stored_with_cpu_wall_and_load():
    clock = FakeClock(9, load=2.5)
    e = measure(clock.call(0.1, 0.01, wall_factor=1.5), clock.call(0.1, 0.01), timer=clock, basis="cpu",
                min_samples=6, max_samples=6)
    s = e["samples"]
    assert set(s) == {"ratio", "ratio_wall", "ratio_cpu", "case_wall_s", "case_cpu_s", "ref_wall_s", "ref_cpu_s", "load1"}
    assert all(len(v) == 6 for v in s.values()) and s["load1"] == [2.5] * 6
    assert s["ratio"] == s["ratio_cpu"]  # the basis
    np.testing.assert_allclose(np.array(s["ratio_wall"]) / np.array(s["ratio_cpu"]), 1.5, rtol=1e-12)
    np.testing.assert_allclose(s["ratio_cpu"], np.array(s["case_cpu_s"]) / np.array(s["ref_cpu_s"]), rtol=1e-12)


# ------------------------------------------------------------------------------------------------
# the statistics, against scipy and against their definitions
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("m, n", [(5, 5), (4, 9), (12, 10), (30, 25)])
def test_mann_whitney_null_distribution_matches_scipy_exact(m, n):
    cdf = mann_whitney_null_cdf(m, n)
    assert cdf.size == m * n + 1 and cdf[-1] == pytest.approx(1.0)
    rng = np.random.default_rng(m * 100 + n)
    for _ in range(5):
        x, y = rng.normal(size=m), rng.normal(size=n) + 0.3
        u = int(np.sum(y[None, :] > x[:, None]))
        p = stats.mannwhitneyu(y, x, alternative="less", method="exact").pvalue  # P(U_y <= u)
        assert cdf[u] == pytest.approx(p, rel=1e-9)


def test_shift_interval_covers_the_true_shift_at_its_confidence():
    rng = np.random.default_rng(11)
    misses = 0
    for _ in range(400):
        x, y = rng.normal(0, 0.05, 15), rng.normal(0.1, 0.05, 17)
        ci = shift_interval(x, y, 0.9)
        misses += not (ci.low <= 0.1 <= ci.high)
    assert misses <= 0.1 * 400 + 3 * math.sqrt(400 * 0.1 * 0.9)  # coverage >= 90 % (within 3 sd)
    ci = shift_interval([0.0, 1.0, 2.0], [10.0, 11.0, 12.0], 0.99)
    assert ci.estimate == 10.0 and ci.low == -math.inf  # 3 vs 3 values cannot give a 99 % interval


def test_median_interval_is_the_order_statistic_interval():
    x = np.arange(1.0, 21.0)  # n = 20: k = 6 at 95 % (P(B <= 5) = 0.0207)
    ci = median_interval(np.log(x), 0.95)
    assert math.exp(ci.low) == pytest.approx(6.0) and math.exp(ci.high) == pytest.approx(15.0)
    assert stats.binom.cdf(5, 20, 0.5) <= 0.025 < stats.binom.cdf(6, 20, 0.5)
    assert median_interval([0.0] * 5, 0.95).high == math.inf  # 5 values: no 95 % interval


def test_robust_spread_is_the_standard_deviation_for_normal_logs():
    rng = np.random.default_rng(3)
    assert robust_spread(rng.normal(0, 0.05, 20_000)) == pytest.approx(0.05, rel=0.03)
    assert robust_spread(np.r_[rng.normal(0, 0.05, 95), [3.0] * 5]) < 0.08  # outliers barely move it


def test_the_rule_in_numbers():
    """Each branch of the rule on hand-made samples (no clock at all)."""
    base = {"samples": {"ratio": list(np.exp(np.linspace(-0.03, 0.03, 21)))}, "basis": "cpu"}

    def cur(shift, spread=0.03):
        return {"samples": {"ratio": list(np.exp(shift + np.linspace(-spread, spread, 21)))}, "basis": "cpu"}

    assert judge_speed("c", base, cur(0.0)).outcome == "ok"
    assert judge_speed("c", base, cur(math.log(1.2))).outcome == "regression"
    assert judge_speed("c", base, cur(math.log(1.045))).outcome == "inconclusive"  # straddles the threshold
    noisy = judge_speed("c", base, cur(math.log(1.2), spread=0.6))
    assert noisy.outcome == "inconclusive" and "too noisy" in noisy.message
    assert DEFAULT_THRESHOLD == 0.05 and CONFIDENCE == 0.99
