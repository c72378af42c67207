"""One capacity-engine run on the 500-node model against the bare engine on the same .inp.

The wrapper (`capacitysim.network.engine.run_inp` + `read_results`: copy, child process, statistics
while the project is open, report parsing, xarray) must cost at most 5 % over
`swmm.toolkit.solver.swmm_run` on the same file (both on one thread, OMP_NUM_THREADS=1).

Run: .venv/bin/python -m pytest benchmarks/bench_network.py -q --benchmark-only \
        --benchmark-columns=min,median,stddev,rounds
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from capacitysim.network.engine import prepare_inp_text, read_results, run_inp

MODEL = Path(__file__).resolve().parents[1] / "models" / "synthetic-500.inp"
_BARE = "import sys; from swmm.toolkit import solver; solver.swmm_run(sys.argv[1], sys.argv[2], sys.argv[3])"


def _bare(inp: Path, wd: Path) -> None:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    subprocess.run([sys.executable, "-c", _BARE, str(inp), str(wd / "b.rpt"), str(wd / "b.out")], check=True,
                   env=env, stdout=subprocess.DEVNULL)


def test_bare_engine_500(benchmark, tmp_path):
    inp = tmp_path / "bare.inp"
    inp.write_text(prepare_inp_text(MODEL.read_text(), MODEL.parent))  # same THREADS 1 copy
    benchmark.pedantic(_bare, args=(inp, tmp_path), rounds=3, iterations=1)


def test_capacity_engine_500(benchmark, tmp_path):
    def once():
        return read_results(run_inp(MODEL, tmp_path / "w"))

    ds = benchmark.pedantic(once, rounds=3, iterations=1)
    assert ds.sizes["node"] == 500


def test_overhead_interleaved(benchmark, tmp_path):
    """Bare and wrapped runs alternated (the machine is shared), overhead of the medians <= 5 %."""
    import statistics
    import time

    inp = tmp_path / "bare.inp"
    inp.write_text(prepare_inp_text(MODEL.read_text(), MODEL.parent))
    bare, wrapped = [], []

    def pair():
        t0 = time.perf_counter()
        _bare(inp, tmp_path)
        t1 = time.perf_counter()
        read_results(run_inp(MODEL, tmp_path / "w"))
        t2 = time.perf_counter()
        bare.append(t1 - t0)
        wrapped.append(t2 - t1)

    benchmark.pedantic(pair, rounds=5, iterations=1)
    ratio = statistics.median(wrapped) / statistics.median(bare)
    benchmark.extra_info.update({"bare_median_s": statistics.median(bare), "wrapped_median_s": statistics.median(wrapped),
                                 "overhead_pct": 100 * (ratio - 1)})
    print(f"\nbare {statistics.median(bare):.2f} s, capacity engine {statistics.median(wrapped):.2f} s, overhead {100 * (ratio - 1):+.1f} %")
    assert ratio <= 1.05
