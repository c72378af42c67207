"""Speed of the hydrology core (issue 2).

Compared against (a) the peer, the PyPI package ``tr55`` (WikiWatershed), which computes the same
TR-55 runoff one cell at a time in Python, and (b) the memory floor: ``np.add(a, b, out=c)`` over
the same two input arrays (reading two arrays and writing one is the least any runoff kernel must
do). Run: ``make bench`` or ``.venv/bin/python -m pytest benchmarks -o python_files='bench_*.py'
--benchmark-only -k hydrology``; the per-cell figures and ratios print with
``.venv/bin/python benchmarks/bench_hydrology.py``.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from capacitysim.hydrology import design_storm, runoff_depth, unit_hydrograph_runoff

N_CELLS = 1_000_000
N_PEER = 20_000
N_SUBCATCHMENTS = 10_000


def _cells(n, seed=1):
    rng = np.random.default_rng(seed)
    return rng.uniform(0.0, 8.0, n), rng.uniform(40.0, 98.0, n)


@pytest.fixture(scope="module")
def cells():
    p, cn = _cells(N_CELLS)
    runoff_depth(p[:10], cn[:10])  # compile / load the cached kernel outside the timing
    return p, cn


def test_runoff_depth_fused_1e6(benchmark, cells):
    p, cn = cells
    benchmark(runoff_depth, p, cn)


def test_runoff_depth_numpy_fallback_1e6(benchmark, cells):
    p, cn = cells
    benchmark(runoff_depth, p, cn, kernel="numpy")


def test_memory_floor_np_add_1e6(benchmark, cells):
    p, cn = cells
    out = np.empty_like(p)
    benchmark(np.add, p, cn, out=out)


def _peer_runoff(p, cn_soil_lu):
    from tr55.model import runoff_nrcs

    soil, lu = cn_soil_lu
    return [runoff_nrcs(pi, 0.0, soil, lu) for pi in p]


def test_peer_tr55_package_2e4(benchmark, cells):
    pytest.importorskip("tr55")
    p, _ = cells
    benchmark(_peer_runoff, p[:N_PEER], ("b", "developed_med"))


def test_unit_hydrograph_10000_subcatchments(benchmark):
    rng = np.random.default_rng(3)
    storm = design_storm(2.1, "II", dt_min=6.0)
    area = rng.uniform(0.001, 0.5, N_SUBCATCHMENTS)
    cn = rng.uniform(40, 98, N_SUBCATCHMENTS)
    tc = rng.uniform(0.1, 10.0, N_SUBCATCHMENTS)
    unit_hydrograph_runoff(area[:5], cn[:5], tc[:5], storm)
    benchmark(unit_hydrograph_runoff, area, cn, tc, storm)


def _best(fn, repeat=15):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), float(np.median(times))


def main():  # pragma: no cover - a report, not a test
    p, cn = _cells(N_CELLS)
    out = np.empty_like(p)
    runoff_depth(p[:10], cn[:10])
    fused = _best(lambda: runoff_depth(p, cn))
    numpy_ = _best(lambda: runoff_depth(p, cn, kernel="numpy"))
    floor = _best(lambda: np.add(p, cn, out=out))
    peer = _best(lambda: _peer_runoff(p[:N_PEER], ("b", "developed_med")), repeat=3)
    per = lambda t, n=N_CELLS: t / n * 1e9  # noqa: E731
    print(f"runoff_depth, {N_CELLS:,} cells (best / median of 15, ns per cell)")
    print(f"  fused kernel (numba) : {per(fused[0]):7.2f} / {per(fused[1]):7.2f}")
    print(f"  numpy fallback       : {per(numpy_[0]):7.2f} / {per(numpy_[1]):7.2f}")
    print(f"  floor np.add         : {per(floor[0]):7.2f} / {per(floor[1]):7.2f}")
    print(f"  peer tr55 (per cell) : {per(peer[0], N_PEER):7.1f} / {per(peer[1], N_PEER):7.1f}")
    print(f"  fused vs peer : {per(peer[0], N_PEER) / per(fused[0]):,.0f}x faster (goal >= 300x)")
    print(f"  fused vs floor: {per(fused[0]) / per(floor[0]):.2f}x the floor (goal <= 3x)")
    rng = np.random.default_rng(3)
    storm = design_storm(2.1, "II", dt_min=6.0)
    args = (rng.uniform(0.001, 0.5, N_SUBCATCHMENTS), rng.uniform(40, 98, N_SUBCATCHMENTS), rng.uniform(0.1, 10.0, N_SUBCATCHMENTS))
    uh = _best(lambda: unit_hydrograph_runoff(*args, storm), repeat=5)
    print(f"unit_hydrograph_runoff, {N_SUBCATCHMENTS:,} subcatchments, 24 h at 6 min: {uh[0]:.3f} s best, {uh[1]:.3f} s median (goal < 1 s)")


if __name__ == "__main__":  # pragma: no cover
    main()
