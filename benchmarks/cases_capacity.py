"""Cases of what issue 15-17 add: the capacity run's overhead over the bare engine, the engine wrapper
on the public model corpus, the headroom search's SWMM runs per node, and the hook of the service's
job overhead. Each is a ratio (to the bare engine on the same inputs, timed interleaved with it) or a
count, so it compares across machines.

The bare engine is ``swmm.toolkit.solver.swmm_run`` in a fresh interpreter -- the call pyswmm's
``Simulation.execute()`` makes -- on the same input text capacitysim runs (``THREADS 1``, external
files made absolute: :func:`capacitysim.network.inp_text.prepare_inp_text`), with
``OMP_NUM_THREADS=1``. Both sides run child processes, so these ratios are of CPU time (this process
and its finished children, :class:`capacitysim.benchmarking.runner.SystemTimer`).
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from capacitysim.benchmarking import count_case, speed_case
from capacitysim.benchmarking.bare import bare_runs
from capacitysim.benchmarking.registry import Paired, SkipCase

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "models"
#: The public models (pyswmm's and swmmio's test data), next to the project; absent in a bare clone.
PUBLIC_MODELS = ROOT.parent / "shared" / "models" / "public"
#: Overridden by $CAPACITYSIM_PUBLIC_MODELS (a folder searched for *.inp).
PUBLIC_MODELS_ENV = "CAPACITYSIM_PUBLIC_MODELS"

#: The demonstration of `make demo` (synthetic-500: 100,000 gpd at MH0020 offset by 250,000 gpd of RDII
#: removal in the CSO basin of MH0012, Binghamton 1-yr 24-h storm).
DEMO = {"connections": ["MH0020=100000"], "remediations": ["basin=MH0012,gpd=250000"], "storm": "binghamton-1yr-24h"}


@speed_case("capacity.overhead.synthetic_500", basis="cpu", repeats=6, max_samples=10, budget_s=120.0,
            description="capacity demonstration of `make demo` on synthetic-500 (scenario writing, two engine runs, "
                        "results, judging) / the bare engine on its two edited inputs")
def _capacity_overhead():
    from capacitysim.workflows.demonstration import run_demonstration

    os.environ["OMP_NUM_THREADS"] = "1"
    folder = Path(tempfile.mkdtemp(prefix="capacitysim-bench-"))
    run_demonstration(MODELS / "synthetic-500.inp", work_dir=folder / "ref", **DEMO)
    inputs = [folder / "ref" / f"{k}_input.inp" for k in ("before", "after")]

    def case():
        run_demonstration(MODELS / "synthetic-500.inp", **DEMO).close()

    return Paired(case, lambda: bare_runs(inputs, folder), "the bare engine (swmm_run, as pyswmm's execute) on the "
                  "demonstration's two edited inputs at once")


@speed_case("capacity.process.synthetic_500", basis="cpu", repeats=6, max_samples=10, budget_s=150.0,
            description="`capacitysim capacity` as a whole process on `make demo`'s demonstration (the interpreter, "
                        "its imports, the command line, scenario writing, two engine runs, results, judging, the JSON "
                        "document) / the bare engine on its two edited inputs, each in a fresh interpreter")
def _capacity_process():
    env = dict(os.environ, OMP_NUM_THREADS="1")
    folder = Path(tempfile.mkdtemp(prefix="capacitysim-bench-"))
    args = ["--model", str(MODELS / "synthetic-500.inp"), "--storm", DEMO["storm"],
            *itertools.chain.from_iterable(("--connect", c) for c in DEMO["connections"]),
            *itertools.chain.from_iterable(("--remediate", r) for r in DEMO["remediations"]), "--json"]

    def command(work: Path | None = None) -> None:  # without --work-dir the run folder goes when the command ends
        keep = ["--work-dir", str(work)] if work is not None else []
        proc = subprocess.run([sys.executable, "-m", "capacitysim", "capacity", *args, *keep], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if proc.returncode != 0:
            raise RuntimeError(f"capacitysim capacity exited {proc.returncode}: "
                               f"{proc.stderr.decode(errors='replace')[-300:]}")

    command(folder / "ref")
    inputs = [folder / "ref" / f"{k}_input.inp" for k in ("before", "after")]
    return Paired(command, lambda: bare_runs(inputs, folder),
                  "the bare engine (swmm_run, as pyswmm's execute) on the demonstration's two edited inputs at once, "
                  "each in a fresh interpreter")


def public_models() -> list[Path]:
    """The public corpus's .inp files (empty when the folder is absent)."""
    folder = Path(os.environ.get(PUBLIC_MODELS_ENV) or PUBLIC_MODELS)
    return sorted(folder.rglob("*.inp")) if folder.is_dir() else []


@speed_case("corpus.engine_wrapper.public_models", basis="cpu", repeats=6, max_samples=12, budget_s=60.0,
            description="capacitysim's engine run (run_inp + read_results) of every public model the engine accepts "
                        "(pyswmm's and swmmio's test models) / the bare engine on the same prepared inputs")
def _corpus():
    from capacitysim.errors import CapacitysimError
    from capacitysim.network.engine import read_results, run_inp
    from capacitysim.network.inp_text import prepare_inp_text

    models = public_models()
    if not models:
        raise SkipCase(f"the public model corpus is absent (set ${PUBLIC_MODELS_ENV} to a folder of .inp files)")
    folder = Path(tempfile.mkdtemp(prefix="capacitysim-bench-"))
    runnable, prepared = [], []
    for k, m in enumerate(models):
        try:  # a model the engine rejects (one of swmmio's has an undefined link on purpose) is left out
            read_results(run_inp(m, folder / "probe" / f"m{k}"))
        except CapacitysimError:
            continue
        runnable.append(m)
        wd = folder / "bare" / f"m{k}"
        wd.mkdir(parents=True)
        inp = wd / m.name
        inp.write_bytes(prepare_inp_text(m.read_bytes().decode("latin-1"), m.resolve().parent, wd).encode("latin-1"))
        prepared.append(inp)
    if not runnable:
        raise SkipCase("no model of the public corpus runs")
    counter = itertools.count()

    def case():
        i = next(counter)
        for k, m in enumerate(runnable):
            read_results(run_inp(m, folder / "runs" / f"{i}-{k}"))

    def bare():
        for inp in prepared:  # one after the other, as the wrapped runs
            bare_runs([inp], inp.parent)

    return Paired(case, bare, f"the bare engine (swmm_run) on the same {len(prepared)} prepared inputs, one after the other")


#: The headroom search counted: the 7 junctions of synthetic-50's pump-station basin PS1_WW, Binghamton storm,
#: default criteria and tolerance (5 %), in this process.
HEADROOM = {"model": "synthetic-50", "storms": "binghamton-1yr-24h", "basin": "PS1_WW"}


@count_case("headroom.runs.synthetic_50.ps1_ww", tolerance={"runs_per_node": 0.0, "runs_total": 0.0},
            description="SWMM runs of capacitysim headroom (screen method) on the 7 junctions of synthetic-50's basin "
                        "PS1_WW, Binghamton 1-yr 24-h storm, 5 % tolerance: per node (the run before excluded) and in total")
def _headroom_runs():
    from capacitysim.workflows.headroom import headroom

    doc = headroom(HEADROOM["model"], storms=HEADROOM["storms"], basin=HEADROOM["basin"], workers=0).to_dict()
    bad = {k: v for k, v in doc["counts"].items() if k in ("error", "untrusted", "missing") and v}
    if bad:
        raise RuntimeError(f"headroom on synthetic-50 basin PS1_WW: cells not computed: {bad}")
    return {"runs_per_node": doc["runs_per_node"], "runs_total": float(doc["runs_total"])}


#: The service's job: a capacity demonstration on synthetic-50 (5,000 gpd at MH0003, Binghamton storm), the
#: same inputs as the CLI's ``capacity --model synthetic-50 --storm binghamton-1yr-24h --connect MH0003=5000``.
SERVICE_INPUTS = {"model": "synthetic-50", "storm": "binghamton-1yr-24h", "connections": [{"node": "MH0003", "gpd": 5000}]}
#: How long to wait for the server to answer at start-up (a readiness wait, not a threshold) [s].
SERVICE_START_WAIT_S = 120


@speed_case("service.job_overhead", basis="wall", repeats=6, max_samples=10, budget_s=90.0,
            description="a capacity demonstration (synthetic-50, 5,000 gpd at MH0003) as a synchronous job of "
                        "`capacitysim serve` on 127.0.0.1 (HTTP, the job record, the dask worker, the stored "
                        "document) / the same demonstration called in this process")
def _service_job_overhead():
    import atexit
    import signal
    import socket
    import time

    try:
        import httpx

        from capacitysim.service.demo import seed
    except ImportError as exc:  # the service extra is not installed
        raise SkipCase(f"the service extra is not installed ({exc.name})") from None
    from capacitysim.workflows.demonstration import run_demonstration

    data = Path(tempfile.mkdtemp(prefix="capacitysim-bench-service-"))
    token = seed(data)["tokens"]["engineer"]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(data / "server.log", "ab")
    proc = subprocess.Popen([sys.executable, "-m", "capacitysim", "serve", "--data", str(data), "--port", str(port),
                             "--workers", "1"], stdout=log, stderr=log, start_new_session=True)

    def stop():
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)

    atexit.register(stop)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + SERVICE_START_WAIT_S
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"capacitysim serve exited {proc.returncode}: {(data / 'server.log').read_text()[-500:]}")
        try:
            if httpx.get(url + "/processes", timeout=2).status_code == 401:
                break
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            stop()
            raise RuntimeError("capacitysim serve did not answer")
        time.sleep(0.3)
    client = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=600)

    def job():
        r = client.post("/processes/capacity-demonstration/execution", json={"inputs": SERVICE_INPUTS})
        if r.status_code != 200:
            raise RuntimeError(f"service job failed: HTTP {r.status_code} {r.text[:300]}")

    def direct():
        run_demonstration("synthetic-50", storm=SERVICE_INPUTS["storm"], connections=["MH0003=5000"]).close()

    job()  # warm-up: the worker's imports
    return Paired(job, direct, "the same capacity demonstration called in this process (run_demonstration)", stop)
