"""Run benchmark cases: reference values with pass/fail, counts, and speed as ratios measured so that
a busy machine cannot pass its noise off as a regression.

How a speed case is measured
----------------------------
Its figure is a *ratio*: the case's time divided by the time of a reference timed in the same
process, interleaved with it (reference, case, case, reference, ... : ABBA order, so a drift in the
machine's speed falls on both). The reference is a fixed kernel (:data:`REFERENCE_KERNEL_N` float64
values sorted by ``np.sort``) or, for overhead cases, the bare work the case wraps (a raw engine run
of the same model). A slower or busier machine slows both, so the ratio compares across runs and
machines where seconds do not. Each sample is one ratio; samples are taken until the 95 % interval
of their median (:func:`~capacitysim.benchmarking.stats.median_interval`) is within
``target_rel`` (default :data:`TARGET_REL`) of the median, or the case's time budget is spent, or
``max_samples`` are taken -- never fewer than ``min_samples``. Every sample is stored (wall and CPU
time of both calls, the 1-minute load average), not only the median, so ``bench compare`` can
apply a rank test to the two runs' samples.

CPU time is ``time.process_time()`` plus the CPU time of finished child processes
(``RUSAGE_CHILDREN``); a case whose basis is ``"cpu"`` (one thread at a time) is judged on it, as a
busy machine delays such work but does not make it use more CPU.

The clock is a :class:`Timer` (tests pass a test double with seeded noise).
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import platform
import resource
import time
from collections.abc import Callable
from typing import Protocol

import numpy as np

from capacitysim.benchmarking.registry import (
    CountCase,
    Paired,
    ReferenceCase,
    SkipCase,
    SpeedCase,
)
from capacitysim.benchmarking.stats import load_regime, median_interval, robust_spread
from capacitysim.version import __version__

#: The fixed reference kernel: sorting 10^6 float64 values (seeded), a CPU-bound numpy call on one
#: thread that every machine runs the same way.
REFERENCE_KERNEL_N = 1_000_000
REFERENCE_KERNEL_SEED = 20261129
REFERENCE_KERNEL_DESCRIPTION = f"np.sort of {REFERENCE_KERNEL_N:,} float64 (seeded)"
#: Minimum time of one timing sample [s]: fast calls are looped to at least this long.
MIN_SAMPLE_S = 0.1
#: The reference is looped to about the case's sample time, but not longer than this [s].
MAX_REFERENCE_SAMPLE_S = 0.5
#: A warm-up call this long [s] (longer than any kernel compilation) is not repeated to calibrate the loop.
SLOW_CALL_S = 5.0
#: Stopping rule: the 95 % interval of the median ratio within +/- this fraction of it [-].
TARGET_REL = 0.015
#: Confidence of that interval.
STOP_CONFIDENCE = 0.95
#: Document schema (1: a median ratio per speed case; 2: every sample, CPU and wall, load average, counts).
SCHEMA = 2


class Timer(Protocol):
    """The clock of a measurement: wall time, CPU time (this process and its finished children) [s]
    and the 1-minute load average."""

    def wall(self) -> float: ...

    def cpu(self) -> float: ...

    def load(self) -> float: ...


class SystemTimer:
    """The real clock: ``time.perf_counter``, ``time.process_time`` + ``RUSAGE_CHILDREN``, ``os.getloadavg``."""

    def wall(self) -> float:
        return time.perf_counter()

    def cpu(self) -> float:
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return time.process_time() + r.ru_utime + r.ru_stime

    def load(self) -> float:
        return os.getloadavg()[0]


#: glibc's mallopt parameters (malloc.h): allocations up to M_MMAP_THRESHOLD come from the heap, and freed heap
#: memory above M_TRIM_THRESHOLD is given back to the system.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
#: Allocations served from the heap (and kept for reuse) while speed cases run [bytes], the first glibc accepts:
#: 1 GiB (the unit hydrograph case's arrays are 80 MB), else 32 MiB (older glibc's ceiling on 64-bit builds).
KEEP_FREED_BYTES = (2**30, 32 * 2**20)


def keep_freed_memory() -> str:
    """Make freed memory reused by later allocations of this process (glibc ``mallopt``), and say what was set.

    By default glibc maps every array of 128 KiB or more afresh (``mmap``) and unmaps it when freed, so each call
    of a numpy kernel pays the kernel's page faults on its output and temporaries: on the 2-core development
    machine 40 % of the pure-numpy runoff kernel's time on 10^6 cells (20 ms against 12 ms with memory reused),
    and a cost that varies with the machine's memory state from one process to the next (issue 30: the ratio of
    ``hydrology.runoff_depth.1e6`` moved 11 % between two quiet runs). A speed case times its work, not the
    operating system's page faults. Elsewhere than glibc nothing is changed and the text says so.
    """
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        kept = next((n for n in KEEP_FREED_BYTES if libc.mallopt(_M_MMAP_THRESHOLD, n) == 1), None)
        ok = kept is not None and libc.mallopt(_M_TRIM_THRESHOLD, 2**31 - 1) == 1
    except (OSError, AttributeError):
        ok = False
    if not ok:
        return "system default (no glibc mallopt): each large array is mapped and unmapped by the system"
    return (f"glibc heap kept for reuse (mallopt M_MMAP_THRESHOLD {kept // 2**20:,} MiB, M_TRIM_THRESHOLD "
            "2 GiB): a kernel's arrays do not pay page faults on every call")


def _reference_kernel() -> Callable[[], object]:
    data = np.random.default_rng(REFERENCE_KERNEL_SEED).random(REFERENCE_KERNEL_N)
    return lambda: np.sort(data)


def _timed(fn, number: int, timer: Timer) -> tuple[float, float]:
    """(wall, cpu) per call [s] of ``number`` calls of ``fn``."""
    w0, c0 = timer.wall(), timer.cpu()
    for _ in range(number):
        fn()
    w1, c1 = timer.wall(), timer.cpu()
    return (w1 - w0) / number, (c1 - c0) / number


def measure(case_fn, reference_fn, *, basis: str = "cpu", min_samples: int = 8, max_samples: int = 40,
            budget_s: float = 20.0, target_rel: float = TARGET_REL, timer: Timer | None = None) -> dict:
    """Time ``case_fn`` against ``reference_fn`` interleaved (ABBA) until the ratio is known well enough.

    Parameters
    ----------
    case_fn, reference_fn : callable
        Zero-argument calls; each is called once first (warm-up: compiled kernels, caches).
    basis : "cpu" or "wall"
        The time the ratio is taken of.
    min_samples, max_samples : int
        Bounds on the number of samples (one sample: one timed loop of each call).
    budget_s : float
        Stop after this much wall time once ``min_samples`` are taken [s].
    target_rel : float
        Stop when the 95 % interval of the median ratio lies within ``exp(+/- log(1 + target_rel))``
        of the median [-].
    timer : Timer, optional
        The clock (default :class:`SystemTimer`).

    Returns
    -------
    dict
        ``ratio`` (median of the samples' ratios on the basis), ``ratio_ci`` (its 95 % interval; null
        with fewer than 6 samples),
        ``spread_rel`` (robust relative spread of the ratios), ``samples`` (per sample: ``ratio``,
        ``ratio_wall``, ``ratio_cpu``, ``case_wall_s``, ``case_cpu_s``, ``ref_wall_s``,
        ``ref_cpu_s``, ``load1``), ``median_s`` and ``cpu_median_s`` (of the case, per call),
        ``number`` and ``ref_number`` (calls per sample), ``stop`` (why sampling stopped).
    """
    timer = timer or SystemTimer()
    start = timer.wall()
    # warm-up (compiled kernels, caches, imports), timed: a call of SLOW_CALL_S or more needs no second call
    # to know it runs once per sample (a SWMM case saves a run); a faster one is timed again, warm
    case_once, _ = _timed(case_fn, 1, timer)
    if case_once < SLOW_CALL_S:
        case_once, _ = _timed(case_fn, 1, timer)
    ref_once, _ = _timed(reference_fn, 1, timer)
    if ref_once < SLOW_CALL_S:
        ref_once, _ = _timed(reference_fn, 1, timer)
    number = max(1, math.ceil(MIN_SAMPLE_S / max(case_once, 1e-9)))
    ref_target = max(MIN_SAMPLE_S, min(case_once * number, MAX_REFERENCE_SAMPLE_S))
    ref_number = max(1, math.ceil(ref_target / max(ref_once, 1e-9)))
    keys = ("ratio", "ratio_wall", "ratio_cpu", "case_wall_s", "case_cpu_s", "ref_wall_s", "ref_cpu_s", "load1")
    s: dict[str, list[float]] = {k: [] for k in keys}
    stop = ""
    target = math.log1p(target_rel)
    while True:
        i = len(s["ratio"])
        if i % 2 == 0:  # ABBA: reference first on even samples, case first on odd ones
            ref_w, ref_c = _timed(reference_fn, ref_number, timer)
            case_w, case_c = _timed(case_fn, number, timer)
        else:
            case_w, case_c = _timed(case_fn, number, timer)
            ref_w, ref_c = _timed(reference_fn, ref_number, timer)
        rw = case_w / ref_w if ref_w > 0 else math.inf
        rc = case_c / ref_c if ref_c > 0 else math.inf
        for k, v in zip(keys, (rc if basis == "cpu" else rw, rw, rc, case_w, case_c, ref_w, ref_c, timer.load())):
            s[k].append(float(v))
        n = i + 1
        if n < min_samples:
            continue
        logs = np.log(s["ratio"])
        ci = median_interval(logs, STOP_CONFIDENCE)
        half = max(ci.estimate - ci.low, ci.high - ci.estimate)
        if half <= target:
            stop = f"95 % interval of the median ratio within +/-{100 * target_rel:g} % after {n} samples"
            break
        if n >= max_samples:
            stop = f"{max_samples} samples taken (interval +/-{100 * math.expm1(half):.1f} %, target {100 * target_rel:g} %)"
            break
        if timer.wall() - start >= budget_s:
            stop = (f"time budget {budget_s:g} s spent after {n} samples (interval +/-{100 * math.expm1(half):.1f} %, "
                    f"target {100 * target_rel:g} %)")
            break
    logs = np.log(s["ratio"])
    ci = median_interval(logs, STOP_CONFIDENCE)
    return {
        "basis": basis,
        "ratio": float(math.exp(ci.estimate)),
        # null when the samples are too few for a 95 % interval of the median (fewer than 6)
        "ratio_ci": [float(math.exp(ci.low)), float(math.exp(ci.high))] if math.isfinite(ci.high - ci.low) else None,
        "ratio_ci_confidence": STOP_CONFIDENCE,
        "spread_rel": robust_spread(logs),
        "median_s": float(np.median(s["case_wall_s"])),
        "cpu_median_s": float(np.median(s["case_cpu_s"])),
        "ref_median_s": float(np.median(s["ref_wall_s"])),
        "number": number,
        "ref_number": ref_number,
        "n_samples": len(s["ratio"]),
        "stop": stop,
        "elapsed_s": float(timer.wall() - start),
        "samples": s,
    }


def environment(timer: Timer | None = None) -> dict:
    """What the run ran on: versions, machine, cores and the load average, so runs can be told apart."""
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
        "cpu_count": os.cpu_count(),
        "numpy": version("numpy"),
        "numba": version("numba"),
        "swmm-toolkit": version("swmm-toolkit"),
        "pyswmm": version("pyswmm"),
        "timestamp": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "loadavg_start": list(os.getloadavg()),
    }


def _speed(case: SpeedCase, kernel, repeats: int | None, budget_s: float | None, timer: Timer) -> dict:
    made = case.setup()
    if isinstance(made, Paired):
        case_fn, ref_fn, ref_what = made.case, made.reference, made.reference_description
    else:
        if kernel["fn"] is None:
            kernel["fn"] = _reference_kernel()
        case_fn, ref_fn, ref_what = made, kernel["fn"], REFERENCE_KERNEL_DESCRIPTION
    lo = max(repeats or case.min_samples, 3)
    try:
        timing = measure(case_fn, ref_fn, basis=case.basis, min_samples=lo, max_samples=max(lo, case.max_samples),
                         budget_s=case.budget_s if budget_s is None else budget_s, timer=timer)
    finally:
        if isinstance(made, Paired) and made.close is not None:
            made.close()
    return {"version": case.version, "description": case.description, "reference": ref_what, **timing,
            "load_regime": load_regime(timing["samples"]["load1"], os.cpu_count())}


def run_cases(
    reference: dict[str, ReferenceCase],
    speed: dict[str, SpeedCase],
    progress: bool = False,
    repeats: int | None = None,
    *,
    counts: dict[str, CountCase] | None = None,
    budget_s: float | None = None,
    timer: Timer | None = None,
) -> dict:
    """Evaluate reference and count cases and time speed cases; return the results document.

    ``repeats`` overrides every speed case's minimum number of samples, ``budget_s`` its time
    budget. A case whose setup raises :class:`~capacitysim.benchmarking.registry.SkipCase` is
    recorded as ``{"skipped": reason}``; a reference case that raises is a failed case (its error
    recorded); an exception in a speed or count case propagates (a crash of the run, exit 2).
    """
    from tqdm import tqdm

    timer = timer or SystemTimer()
    counts = counts or {}
    doc = {"schema": SCHEMA, "environment": environment(), "reference": {}, "count": {}, "speed": {}}
    if speed:
        doc["environment"]["allocator"] = keep_freed_memory()
    items = ([("reference", c) for c in reference.values()] + [("count", c) for c in counts.values()]
             + [("speed", c) for c in speed.values()])
    bar = tqdm(items, disable=not progress, unit="case", desc="benchmarks")
    kernel = {"fn": None}
    for kind, case in bar:
        bar.set_postfix_str(case.name)
        try:
            if kind == "reference":
                try:
                    doc["reference"][case.name] = case.evaluate()
                except SkipCase:
                    raise
                except Exception as exc:  # noqa: BLE001 - a broken case is a failed case, and the run goes on
                    doc["reference"][case.name] = {"version": case.version, "source": case.source, "passed": False,
                                                   "error": f"{type(exc).__name__}: {exc}"}
            elif kind == "count":
                doc["count"][case.name] = case.evaluate()
            else:
                doc["speed"][case.name] = _speed(case, kernel, repeats, budget_s, timer)
        except SkipCase as why:
            doc[kind][case.name] = {"version": case.version, "description": getattr(case, "description", ""),
                                    "skipped": str(why)}
    doc["environment"]["loadavg_end"] = list(os.getloadavg())
    loads = [v for c in doc["speed"].values() for v in c.get("samples", {}).get("load1", [])]
    doc["environment"]["load_regime"] = load_regime(loads, os.cpu_count())
    return doc
