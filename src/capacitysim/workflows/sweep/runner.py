"""Running a sweep: the store written as scenarios finish, in this process or on a dask.distributed cluster.

Tasks run on a ``dask.distributed`` cluster: by default a ``LocalCluster(processes=True,
threads_per_worker=1)`` with one worker per core (:func:`local_cluster`), or an existing scheduler
(``scheduler=ADDRESS``) that receives the same tasks unchanged. The network (SWMM sweeps) or the
payload and the spec (vectorized sweeps) are shipped to the workers **once**
(``client.scatter(..., broadcast=True)``). Results are written by the driver as scenarios finish,
with at most :data:`IN_FLIGHT_PER_WORKER` tasks per worker in flight, so memory stays flat; a
sweep killed at any moment resumes (``resume=True``) by recomputing exactly the scenarios whose
status is missing (:mod:`capacitysim.io.sweep_store`). A scenario that raises is stored as failed
with its message and the sweep goes on; tasks of a worker that dies are rescheduled by the dask
scheduler (its ``allowed-failures``).

References
----------
.. [1] Dask Development Team (2016). Dask: Library for dynamic task scheduling; dask.distributed
   (``Client.scatter``, ``as_completed``, ``LocalCluster``).
"""

from __future__ import annotations

import json

import os
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from capacitysim.errors import InputError
from capacitysim.io.sweep_files import SweepSpec, sweep_inputs
from capacitysim.io.sweep_store import (
    DONE,
    FAILED,
    MISSING,
    StoreWriter,
    create_store,
    failed_record,
    missing_indices,
    result_variables,
)
from capacitysim.rules.verdict import VERDICT_CODE
from capacitysim.workflows.sweep.network_tasks import (
    NetworkBundle,
    baseline_key,
    make_bundle,
    run_after_task,
    run_baseline_task,
    run_scenario_task,
)
from capacitysim.workflows.sweep.plan import (
    SCHEDULER_CONNECT_TIMEOUT_S,
    check_scheduler_address,
    check_store_path,
    check_sweep_size,
)
from capacitysim.workflows.sweep.vector_tasks import (
    _vector_block,
    block_task,
    make_payload,
)

#: Tasks kept in flight per worker (bounded so memory stays flat on huge sweeps).
IN_FLIGHT_PER_WORKER = 3


@dataclass
class SweepRun:
    """What a run of :func:`run_sweep` did."""

    path: str
    n_scenarios: int
    computed: int = 0
    failed: int = 0
    skipped: int = 0  # already in the store (resume)
    seconds: float = 0.0
    workers: int = 0
    scheduler: str = ""
    failures: list = field(default_factory=list)
    #: verdicts of the whole store after the run (:func:`sweep_outcome`; resumed scenarios included)
    outcome: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """The run as a JSON-ready document (``capacitysim sweep run --json``), with the envelope of every document
        (:func:`capacitysim.rules.document.envelope`: the engine when the sweep ran SWMM, the sweep's files)."""
        from capacitysim.workflows.document import envelope, file_input, swmm_engine

        kind, inputs = _store_meta(self.path)
        return envelope({"out": self.path, "scenarios": self.n_scenarios, "computed": self.computed, "failed": self.failed,
                         "skipped": self.skipped, "seconds": self.seconds, "workers": self.workers,
                         "scheduler": self.scheduler, "failures": self.failures[:20], "outcome": dict(self.outcome)},
                        "sweep-run", engine=swmm_engine() if kind == "swmm" else None,
                        inputs=[file_input("sweep" if i == 0 else "input", p) for i, p in enumerate(inputs)])


def _store_meta(path) -> tuple[str | None, list]:
    """The sweep kind and input files a store records (None, [] when it cannot be read)."""
    import zarr

    try:
        attrs = zarr.open_group(str(path), mode="r").attrs
        kind = json.loads(attrs["sweep"]).get("kind") if "sweep" in attrs else None
        inputs = json.loads(attrs["inputs"]) if isinstance(attrs.get("inputs"), str) else list(attrs.get("inputs", []))
        return kind, inputs
    except Exception:  # noqa: BLE001 - a store that cannot be read: the document says nothing of its inputs
        return None, []


def sweep_outcome(path: str | os.PathLike) -> dict:
    """Verdicts of every scenario of a store (what ``capacitysim sweep run`` exits on).

    Keys: ``scenarios``; ``pass``, ``fail``, ``untrusted`` (verdicts of the done scenarios);
    ``errored`` (status failed: the scenario raised, no verdict); ``missing`` (not computed yet);
    ``no_verdict`` (done, nothing judged: runoff sweeps); ``not_passed`` = fail + untrusted + errored
    + missing, the count a sweep exits 1 on when it is not 0.
    """
    import zarr

    g = zarr.open_group(str(path), mode="r")
    status = np.asarray(g["status"][:])
    verdict = np.asarray(g["verdict"][:])
    done = status == DONE
    out = {"scenarios": int(status.size),
           "pass": int((done & (verdict == VERDICT_CODE["pass"])).sum()),
           "fail": int((done & (verdict == VERDICT_CODE["fail"])).sum()),
           "untrusted": int((done & (verdict == VERDICT_CODE["untrusted"])).sum()),
           "errored": int((status == FAILED).sum()), "missing": int((status == MISSING).sum()),
           "no_verdict": int((done & (verdict == -1)).sum())}
    out["not_passed"] = out["fail"] + out["untrusted"] + out["errored"] + out["missing"]
    return out


def outcome_line(outcome: dict) -> str:
    """One line: ``3 of 12 scenarios failed (2 fail, 1 untrusted)`` (errored, missing too when any),
    or ``all 12 scenarios passed`` (``all 12 scenarios done (no verdicts)`` for runoff sweeps)."""
    n = outcome["scenarios"]
    if not outcome["not_passed"]:
        judged = n - outcome["no_verdict"]
        if judged == n:
            return f"all {n:,} scenarios passed"
        return f"all {n:,} scenarios done (no verdicts)" if judged == 0 else f"all {judged:,} judged scenarios of {n:,} passed"
    parts = [f"{outcome[k]:,} {k}" for k in ("fail", "untrusted", "errored", "missing") if outcome[k]]
    return f"{outcome['not_passed']:,} of {n:,} scenarios failed ({', '.join(parts)})"


def default_workers() -> int:
    """One single-threaded worker process per core."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def _client(workers: int | None, scheduler: str | None):
    """A dask.distributed Client: to ``scheduler``, or to a new LocalCluster of single-threaded processes."""
    from distributed import Client

    if scheduler:
        check_scheduler_address(scheduler)
        try:
            return Client(scheduler, timeout=f"{SCHEDULER_CONNECT_TIMEOUT_S:g}s"), None
        except Exception as exc:  # noqa: BLE001 - whatever the handshake raised, the address is the problem
            raise InputError(f"--scheduler {scheduler}: no dask scheduler answered within {SCHEDULER_CONNECT_TIMEOUT_S:g} s "
                             f"({type(exc).__name__}: {str(exc)[:200]})") from None
    cluster = local_cluster(workers or default_workers())
    return Client(cluster), cluster


#: dask settings of the sweep's own LocalCluster. With one single-threaded worker per core, every
#: bit of CPU the scheduler, the nannies and the workers spend on their own housekeeping is taken
#: from the SWMM runs. Measured idle (2 workers, 10 s, this machine): the driver process (scheduler +
#: nannies) used 4.7 % of a core and each worker 3.4 %; with these settings 1.0 % and 0.4 %. None
#: changes what is computed. The statistical profiler samples every worker thread every 10 ms (only
#: the dashboard shows it); the tick only detects a blocked event loop; the nanny's memory monitor
#: and the system monitor poll psutil (SWMM scenario tasks hold a few MB).
LOCAL_CLUSTER_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "500ms",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
}


def local_cluster(n_workers: int):
    """The default cluster of a sweep: ``n_workers`` single-threaded worker processes on 127.0.0.1,
    no dashboard, housekeeping slowed down (:data:`LOCAL_CLUSTER_CONFIG`; the settings are read
    when the scheduler, nannies and workers start, so they stay scoped to this cluster)."""
    import dask
    from distributed import LocalCluster

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    with dask.config.set(LOCAL_CLUSTER_CONFIG):
        return LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                            dashboard_address=None, host="127.0.0.1", silence_logs=40)


def run_sweep(spec: SweepSpec, out: str | os.PathLike, *, workers: int | None = None, scheduler: str | None = None,
              resume: bool = False, progress=None, max_scenarios: int | None = None, yes_large: bool = False) -> SweepRun:
    """Run a sweep into a Zarr store, writing scenarios as they finish.

    Before anything is written: the sweep's size is checked (:func:`check_sweep_size`), the store's
    path (:func:`check_store_path`: never an input, a link or a file) and the cluster or scheduler
    is reached, so a refused or unreachable run leaves no store behind.

    Parameters
    ----------
    spec : SweepSpec
    out : path
        The Zarr store; refused when it exists unless ``resume``.
    workers : int, optional
        Worker processes of the LocalCluster (default: one per core); ``0`` runs everything in
        this process without dask.distributed (small sweeps, tests).
    scheduler : str, optional
        Address of an existing dask.distributed scheduler (``tcp://host:8786``); the same tasks
        are submitted there. Checked first (:func:`check_scheduler_address`).
    resume : bool
        Continue an existing store: only scenarios with status 0 are computed.
    progress : callable(done: int, failed: int, total: int), optional
        Called after each finished scenario or block (the CLI's progress bar).
    max_scenarios : int, optional
        Stop after this many new scenarios (for tests of interrupted sweeps).
    yes_large : bool
        Run a sweep above :func:`~capacitysim.workflows.sweep.plan.large_limit` (``--yes-large``); the hard limit stays.

    Raises
    ------
    capacitysim.errors.InputError
        A sweep too large, an ``out`` that is an input, a link or a file (or exists without
        ``resume``, or holds another sweep), an unreachable scheduler.
    """
    out = Path(out)
    t0 = time.perf_counter()
    check_sweep_size(spec, yes_large, None if scheduler else (workers if workers is not None else default_workers()))
    check_store_path(out, sweep_inputs(spec))
    exists = out.exists()
    if exists and not resume:
        raise InputError(f"--out {out} exists; add --resume to continue it, or choose a new path")
    # the inputs load_sweep parsed are reused (never parsed again), here, before the store: a site
    # the rules refuse refuses the sweep
    bundle = make_bundle(spec) if spec.kind == "swmm" else None
    payload = make_payload(spec) if spec.kind != "swmm" else None
    network = bundle.store_network() if bundle is not None else None
    chunk = 64 if spec.kind == "swmm" else spec.chunk_size
    todo = missing_indices(out, spec) if exists else np.arange(spec.n_scenarios)
    run = SweepRun(str(out), spec.n_scenarios, skipped=spec.n_scenarios - todo.size)
    if max_scenarios is not None:
        todo = todo[:max_scenarios]
    total = int(todo.size)
    if total and progress is not None:
        progress(0, 0, total)  # the bar starts with the sweep, so its rate and time left are true
    client = cluster = None
    if total and not (workers == 0 and not scheduler):
        client, cluster = _client(workers, scheduler)  # reached before the store is written
    try:
        if not exists:
            create_store(out, spec, network, chunk)
        writer = StoreWriter(out, list(result_variables(spec, network)))

        def record(sl: slice, rec: dict):
            writer.write(sl, rec)
            st = np.atleast_1d(rec["status"])
            n = sl.stop - sl.start
            st = np.broadcast_to(st, (n,))
            run.computed += n
            nf = int((st == FAILED).sum())
            run.failed += nf
            if nf and len(run.failures) < 20:
                msg = np.broadcast_to(np.atleast_1d(rec["message"]), (n,))
                run.failures += [{"scenario": sl.start + int(j), "message": str(msg[j])} for j in np.flatnonzero(st == FAILED)[:5]]
            if progress is not None:
                progress(run.computed, run.failed, total)

        if total and client is None:
            run.workers, run.scheduler = 0, "in-process"
            _run_inline(spec, bundle, payload, todo, chunk, record)
        elif total:
            run.workers = len(client.scheduler_info()["workers"])
            run.scheduler = client.scheduler.address
            _run_distributed(client, spec, bundle, payload, todo, record, max(run.workers, 1))
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
    run.outcome = sweep_outcome(out)
    run.seconds = time.perf_counter() - t0
    return run


def _blocks(todo: np.ndarray, chunk: int, n_total: int) -> list[np.ndarray]:
    """Missing indices grouped by the chunks of the flat scenario index (a dask array chunked by
    ``chunk``), each group split at gaps so every block is contiguous."""
    import dask.array as da

    if todo.size == 0:
        return []
    bounds = np.cumsum((0,) + da.arange(n_total, chunks=chunk).chunks[0])
    cuts = np.searchsorted(todo, bounds)  # todo is sorted: each chunk's indices without scanning them all
    out = []
    for a, b in zip(cuts[:-1], cuts[1:]):
        sel = todo[a:b]
        if sel.size:
            out.extend(np.split(sel, np.flatnonzero(np.diff(sel) != 1) + 1))
    return out


def _run_inline(spec, bundle, payload, todo, chunk, record):
    if spec.kind == "swmm":
        baselines: dict = {}
        for i in todo:
            params = spec.scenario(int(i))
            key = baseline_key(params)
            if key not in baselines:
                try:
                    baselines[key] = run_baseline_task(bundle, params, spec.criteria)
                except Exception as exc:  # noqa: BLE001
                    baselines[key] = exc
            before = baselines[key]
            if isinstance(before, Exception):
                rec = failed_record(before)
            else:
                rec = run_scenario_task(bundle, int(i), params, before, spec.criteria)[1]
            record(slice(int(i), int(i) + 1), rec)
    else:
        for blk in _blocks(todo, chunk, spec.n_scenarios):
            start, stop, rec = block_task(payload, spec, blk)
            record(slice(start, stop), rec)


def _run_distributed(client, spec, bundle, payload, todo, record, n_workers):
    from distributed import as_completed

    window = IN_FLIGHT_PER_WORKER * n_workers
    if spec.kind == "swmm":
        shipped = client.scatter(bundle, broadcast=True, hash=False)
        base_futs: dict = {}
        meta: dict = {}
        pending = deque(int(i) for i in todo)

        def submit_next():
            i = pending.popleft()
            params = spec.scenario(i)
            key = baseline_key(params)
            if key not in base_futs:
                base_futs[key] = client.submit(run_baseline_task, shipped, params, spec.criteria, pure=False, key=f"baseline-{len(base_futs)}-{bundle.sha}")
            ran = client.submit(run_after_task, shipped, params, pure=False)  # beside the baseline, not after it
            f = client.submit(run_scenario_task, shipped, i, params, base_futs[key], spec.criteria, ran, pure=False)
            meta[f.key] = i
            return f

        ac = as_completed([submit_next() for _ in range(min(window, len(pending)))])
        for fut in ac:
            i = meta.pop(fut.key)
            if fut.status == "finished":
                rec = fut.result()[1]
            else:  # the baseline failed, or the worker died too often (KilledWorker)
                rec = failed_record(fut.exception())
            record(slice(i, i + 1), rec)
            fut.release()
            if pending:
                ac.add(submit_next())
    else:
        shipped = client.scatter(payload, broadcast=True, hash=False)
        spec_f = client.scatter(spec, broadcast=True, hash=False)
        blocks = deque(_blocks(todo, spec.chunk_size, spec.n_scenarios))
        meta: dict = {}

        def submit_next():
            blk = blocks.popleft()
            f = client.submit(block_task, shipped, spec_f, blk, pure=False)
            meta[f.key] = blk
            return f

        ac = as_completed([submit_next() for _ in range(min(window, len(blocks)))])
        for fut in ac:
            blk = meta.pop(fut.key)
            if fut.status == "finished":
                start, stop, rec = fut.result()
            else:
                start, stop, rec = int(blk[0]), int(blk[-1]) + 1, failed_record(fut.exception())
            record(slice(start, stop), rec)
            fut.release()
            if blocks:
                ac.add(submit_next())


def run_one(spec: SweepSpec, index: int, bundle: NetworkBundle | None = None) -> dict:
    """Scenario ``index`` of a sweep, run on its own in this process (no dask): the reference."""
    if spec.kind != "swmm":
        cols = spec.columns(index, index + 1)
        rec = _vector_block(make_payload(spec), cols)
        return {k: (v[0] if np.ndim(v) else v) for k, v in rec.items()}
    bundle = bundle or make_bundle(spec)
    params = spec.scenario(index)
    try:
        before = run_baseline_task(bundle, params, spec.criteria)
    except Exception as exc:  # noqa: BLE001
        return failed_record(exc)
    return run_scenario_task(bundle, index, params, before, spec.criteria)[1]
