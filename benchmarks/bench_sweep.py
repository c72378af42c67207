"""Scenario sweeps (issue 7): SWMM scaling over workers, per-scenario overhead, memory of a big vectorized sweep.

1. ``models/sweeps/connection-small.toml``: 45 SWMM scenarios (+ 1 run before) on the bundled 50-node
   network, on the sweep's default cluster (``capacitysim.workflows.sweep.local_cluster``: a
   ``LocalCluster(processes=True, threads_per_worker=1)``) of 1 and of 2 workers started
   beforehand (cluster start-up excluded; the sweep is submitted with ``scheduler=ADDRESS``, the same
   path as ``--scheduler``). Target: speed-up >= 1.8x on 2 cores (measure on an idle machine).
2. Per-scenario overhead: the same 46 edited ``.inp`` files run by the bare engine
   (``swmm.toolkit.solver.swmm_run`` in one fresh process each, as the wrapper does) against the sweep
   run in this process (``workers=0``: scenario edits, child process, results, verdict, Zarr write).
3. Peak memory (max RSS of a child process) of ``models/sweeps/runoff-detention-1000.toml``
   (1,000 TR-55 runoff + detention designs, orifices sized by bisection, blocks of 100) against the
   same sweep on 4,000 designs: flat memory means the two peaks are about equal.

Run: ``.venv/bin/python benchmarks/bench_sweep.py`` (prints the figures as JSON), or
``.venv/bin/python -m pytest benchmarks/bench_sweep.py -o python_files='bench_*.py' --benchmark-only``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SWMM_SWEEP = ROOT / "models" / "sweeps" / "connection-small.toml"
BIG_SWEEP = ROOT / "models" / "sweeps" / "runoff-detention-1000.toml"

_BARE = ("import sys, time; from swmm.toolkit import solver; t = time.perf_counter(); "
         "solver.swmm_run(sys.argv[1], sys.argv[2], sys.argv[3])")


def swmm_sweep_seconds(n_workers: int, folder: Path) -> float:
    """Wall time of the 45-scenario sweep on a pre-started LocalCluster of ``n_workers``."""
    from distributed import Client

    from capacitysim.io.sweep_files import load_sweep
    from capacitysim.workflows.sweep import local_cluster, run_sweep

    os.environ["OMP_NUM_THREADS"] = "1"
    spec = load_sweep(SWMM_SWEEP)
    with local_cluster(n_workers) as cluster, Client(cluster) as client:  # the sweep's default cluster
        client.wait_for_workers(n_workers)
        out = folder / f"w{n_workers}.zarr"
        t0 = time.perf_counter()
        run = run_sweep(spec, out, scheduler=cluster.scheduler_address)
        dt = time.perf_counter() - t0
    assert run.computed == spec.n_scenarios and run.failed == 0, run.to_dict()
    return dt


def overhead_per_scenario(folder: Path) -> dict:
    """Bare engine on the 46 edited inputs vs the whole sweep in this process."""
    from capacitysim.io.sweep_files import load_sweep
    from capacitysim.network.inp_text import prepare_inp_text
    from capacitysim.network.scenario import write_scenario
    from capacitysim.workflows.sweep import baseline_key, make_bundle, run_sweep, scenario_edits
    from capacitysim.workflows.sweep.network_tasks import _local_model

    spec = load_sweep(SWMM_SWEEP)
    bundle = make_bundle(spec)
    model = _local_model(bundle)
    inputs, seen = [], set()
    for i in range(spec.n_scenarios):
        params = spec.scenario(i)
        before, after = scenario_edits(bundle, model, params)
        if baseline_key(params) not in seen:
            seen.add(baseline_key(params))
            inputs.append(before)
        inputs.append(after)
    paths = []
    for k, edits in enumerate(inputs):
        p = folder / "bare" / f"s{k}.inp"
        write_scenario(model, edits, p)
        p.write_text(prepare_inp_text(p.read_text(), p.parent))  # THREADS 1, as the wrapper runs it
        paths.append(p)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    t0 = time.perf_counter()
    for p in paths:
        subprocess.run([sys.executable, "-c", _BARE, str(p), str(p.with_suffix(".rpt")), str(p.with_suffix(".out"))],
                       check=True, env=env, stdout=subprocess.DEVNULL, cwd=p.parent)  # scratch files there
    bare = time.perf_counter() - t0
    t0 = time.perf_counter()
    run = run_sweep(spec, folder / "inline.zarr", workers=0)
    swept = time.perf_counter() - t0
    n = len(paths)
    return {"runs": n, "bare_engine_s": bare, "sweep_in_process_s": swept, "bare_per_run_s": bare / n,
            "sweep_per_run_s": swept / n, "overhead_per_run_s": (swept - bare) / n, "overhead_pct": 100 * (swept / bare - 1),
            "computed": run.computed}


_MEM = r"""
import json, resource, sys, time
from capacitysim.io.sweep_files import load_sweep
from capacitysim.workflows.sweep import run_sweep
spec = load_sweep(sys.argv[1])
if len(sys.argv) > 3:
    spec.grid["height_ft"] = [3.0 + 0.25 * k for k in range(int(sys.argv[3]))]
t0 = time.perf_counter()
run = run_sweep(spec, sys.argv[2], workers=0)
print(json.dumps({"scenarios": spec.n_scenarios, "seconds": time.perf_counter() - t0, "failed": run.failed,
                  "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def peak_memory(folder: Path, heights: int | None = None) -> dict:
    """Max RSS [MB] of a fresh process running the runoff+detention sweep (1,000 designs, or 200 x heights)."""
    args = [sys.executable, "-c", _MEM, str(BIG_SWEEP), str(folder / f"big{heights}.zarr")]
    if heights:
        args.append(str(heights))
    out = subprocess.run(args, check=True, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    return json.loads(out.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------------- pytest-benchmark


def test_swmm_sweep_1_worker(benchmark, tmp_path):
    benchmark.extra_info["seconds"] = benchmark.pedantic(swmm_sweep_seconds, args=(1, tmp_path), rounds=1, iterations=1)


def test_swmm_sweep_2_workers(benchmark, tmp_path):
    benchmark.extra_info["seconds"] = benchmark.pedantic(swmm_sweep_seconds, args=(2, tmp_path), rounds=1, iterations=1)


def test_overhead_per_scenario(benchmark, tmp_path):
    benchmark.extra_info.update(benchmark.pedantic(overhead_per_scenario, args=(tmp_path,), rounds=1, iterations=1))


def test_peak_memory_1000_designs(benchmark, tmp_path):
    benchmark.extra_info.update(benchmark.pedantic(peak_memory, args=(tmp_path,), rounds=1, iterations=1))


if __name__ == "__main__":
    which = set(sys.argv[1:]) or {"scaling", "overhead", "memory"}
    res: dict = {"cpus": os.cpu_count(), "load_before": os.getloadavg()}
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        if "memory" in which:
            res["memory_1000"] = peak_memory(t)
            res["memory_4000"] = peak_memory(t, 20)
        if "overhead" in which:
            res["overhead"] = overhead_per_scenario(t)
        if "scaling" in which:
            t1 = swmm_sweep_seconds(1, t)
            t2 = swmm_sweep_seconds(2, t)
            res["swmm_45_scenarios"] = {"one_worker_s": t1, "two_workers_s": t2, "speedup": t1 / t2}
    res["load_after"] = os.getloadavg()
    print(json.dumps(res, indent=2))
