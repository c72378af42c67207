"""Run benchmark cases: reference values with pass/fail, speed as median, spread and a ratio to a
fixed reference kernel timed in the same run (so figures compare across machines)."""

from __future__ import annotations

import datetime as _dt
import platform
import time
from typing import Callable

import numpy as np

from capacitysim.version import __version__
from capacitysim.benchmarking.registry import ReferenceCase, SpeedCase

#: The fixed reference kernel: sorting 10^6 float64 values (seeded), a CPU-bound numpy call that
#: every machine runs the same way. Speed cases are reported as multiples of its median time.
REFERENCE_KERNEL_N = 1_000_000
REFERENCE_KERNEL_SEED = 20261129
#: Minimum wall time of one timing sample [s]: fast calls are looped to at least this long.
MIN_SAMPLE_S = 0.05
#: Spread statistic: half the inter-quartile range, relative to the median.
QUARTILES = (25.0, 75.0)
#: A speed JSON schema version (bump when the document's shape changes).
SCHEMA = 1


def _reference_kernel() -> Callable[[], object]:
    data = np.random.default_rng(REFERENCE_KERNEL_SEED).random(REFERENCE_KERNEL_N)
    return lambda: np.sort(data)


def time_callable(fn: Callable[[], object], repeats: int) -> dict:
    """Median and relative half-IQR of per-call wall time [s] over ``repeats`` samples."""
    fn()  # warm-up: compile, caches
    t0 = time.perf_counter()
    fn()
    once = time.perf_counter() - t0
    number = max(1, int(np.ceil(MIN_SAMPLE_S / max(once, 1e-9))))
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - t0) / number)
    arr = np.array(samples)
    median = float(np.median(arr))
    q1, q3 = np.percentile(arr, QUARTILES)
    return {
        "median_s": median,
        "spread_rel": float((q3 - q1) / 2.0 / median) if median > 0 else 0.0,
        "min_s": float(arr.min()),
        "repeats": repeats,
        "number": number,
    }


def environment() -> dict:
    """What the run ran on: versions and machine, so results can be told apart."""
    import importlib.metadata as md

    def version(pkg):
        try:
            return md.version(pkg)
        except md.PackageNotFoundError:
            return None

    return {
        "capacitysim": __version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "processor": platform.processor(),
        "numpy": version("numpy"),
        "numba": version("numba"),
        "swmm-toolkit": version("swmm-toolkit"),
        "pyswmm": version("pyswmm"),
        "timestamp": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }


def run_cases(
    reference: dict[str, ReferenceCase],
    speed: dict[str, SpeedCase],
    progress: bool = False,
    repeats: int | None = None,
) -> dict:
    """Evaluate reference cases and time speed cases; return the results document."""
    from tqdm import tqdm

    doc = {"schema": SCHEMA, "environment": environment(), "reference": {}, "speed": {}}
    items = [("reference", c) for c in reference.values()] + [("speed", c) for c in speed.values()]
    bar = tqdm(items, disable=not progress, unit="case", desc="benchmarks")
    kernel = None
    for kind, case in bar:
        bar.set_postfix_str(case.name)
        if kind == "reference":
            try:
                doc["reference"][case.name] = case.evaluate()
            except Exception as exc:  # a broken case is a failed case, and the run goes on
                doc["reference"][case.name] = {"version": case.version, "source": case.source, "passed": False, "error": f"{type(exc).__name__}: {exc}"}
            continue
        if kernel is None:
            kernel = time_callable(_reference_kernel(), repeats or 7)
            doc["reference_kernel"] = {"description": f"np.sort of {REFERENCE_KERNEL_N:,} float64 (seeded)", **kernel}
        timing = time_callable(case.setup(), repeats or case.repeats)
        timing["ratio"] = timing["median_s"] / kernel["median_s"]
        timing["description"] = case.description
        doc["speed"][case.name] = timing
    return doc
