"""A test double of the benchmark clock: fake time advanced by fake calls with seeded noise.

No real time passes and nothing depends on this machine's speed: a fake call of ``true_s`` seconds
advances the fake wall and CPU clocks by ``true_s x exp(N(0, sigma))`` (multiplicative noise, as a
busy machine's is), and by ``x load_factor`` more on the wall clock.
"""

from __future__ import annotations

import math

import numpy as np

from capacitysim.benchmarking.registry import Paired, SpeedCase
from capacitysim.benchmarking.runner import measure

#: The noise of one sample's ratio measured on the 2-core development machine under a load of 1-3.5:
#: robust spread of the CPU ratio of `hydrology.runoff_depth.1e6` and `hydraulics.size_orifice.1e3`
#: 3.4-5.9 % (`capacitysim bench run --only hydrology,size_orifice`), rounded up.
MEASURED_NOISE = 0.05
#: A loaded machine: `hydrology.unit_hydrograph.1e4` at a load of 2.2-3.0 spread 30 % (CPU ratio).
LOADED_NOISE = 0.30


class FakeClock:
    def __init__(self, seed: int, load: float = 0.5):
        self.rng = np.random.default_rng(seed)
        self.t_wall = 0.0
        self.t_cpu = 0.0
        self.load_value = load

    def wall(self) -> float:
        return self.t_wall

    def cpu(self) -> float:
        return self.t_cpu

    def load(self) -> float:
        return self.load_value

    def call(self, true_s: float, sigma: float, wall_factor: float = 1.0):
        """A fake zero-argument call taking ``true_s`` seconds with log-normal noise ``sigma``."""

        def fn():
            dt = true_s * math.exp(self.rng.normal(0.0, sigma)) if sigma > 0 else true_s
            self.t_cpu += dt
            self.t_wall += dt * wall_factor

        return fn


def fake_run(seed: int, *, slowdown: float = 1.0, noise: float = MEASURED_NOISE, inflation: float = 1.0,
             load: float = 0.5, case_s: float = 0.3, ref_s: float = 0.3, **kw) -> dict:
    """One measured speed entry of a fake case: its true ratio is ``slowdown x inflation``; the noise
    of a sample's ratio is ``noise`` (split evenly between the case's and the reference's call)."""
    clock = FakeClock(seed, load)
    per_call = noise / math.sqrt(2.0)
    case = clock.call(case_s * slowdown * inflation, per_call)
    ref = clock.call(ref_s, per_call)
    entry = measure(case, ref, basis="cpu", timer=clock, **kw)
    return {"version": 1, "description": "fake", "reference": "fake reference", **entry}


def fake_doc(seed: int, name: str = "fake.case", **kw) -> dict:
    """A whole results document with one fake speed case."""
    return {"schema": 2, "environment": {"timestamp": f"2026-01-01T00:00:{seed % 60:02d}+00:00", "cpu_count": 2},
            "reference": {}, "count": {}, "speed": {name: fake_run(seed, **kw)}}


def fake_speed_case(clock: FakeClock, name: str = "fake.case", case_s: float = 0.3, ref_s: float = 0.3,
                    sigma: float = MEASURED_NOISE / math.sqrt(2.0)) -> SpeedCase:
    """A registered-style SpeedCase whose setup returns fake calls on ``clock`` (run_cases with timer=clock)."""
    return SpeedCase(name, lambda: Paired(clock.call(case_s, sigma), clock.call(ref_s, sigma), "fake reference"),
                     "fake", min_samples=8)
