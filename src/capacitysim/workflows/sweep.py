"""Scenario sweeps on dask: many SWMM capacity runs, or thousands of vectorized detention/runoff designs.

How a sweep runs
----------------
* **SWMM sweeps** (``kind = "swmm"``): one task per scenario, each a real SWMM run through
  :func:`capacitysim.network.engine.run_inp` (itself a fresh child process with ``THREADS 1`` and
  ``OMP_NUM_THREADS=1``, so the engine's global state, its OpenMP threads and the file descriptor
  that ``[RDII]`` runs leak all die with the child: ../shared/reference/swmm-notes.md). A run
  *before* (the model under the scenario's storm after the 6 h spin-up, no connection, no remediation: the edits of
  :func:`capacitysim.workflows.demonstration.scenario_edits`, as ``capacitysim capacity``) is one task per
  distinct storm depth; every scenario task depends on its baseline and computes the verdict
  after vs before. Tasks run on a ``dask.distributed`` cluster: by default a
  ``LocalCluster(processes=True, threads_per_worker=1)`` with one worker per core, or an existing
  scheduler (``scheduler=ADDRESS``) that receives the same tasks unchanged.
* The network (the ``.inp`` text, its basins and the storm) is shipped to the workers **once**
  (``client.scatter(..., broadcast=True)``); each worker writes it to its own temporary folder the
  first time a task needs it and keeps the parsed model for the following tasks.
* **Detention and runoff sweeps** are numpy-vectorized: the flat scenario index is a
  :func:`dask.array.arange` chunked by ``chunk_size``, and each block is computed in one call
  (stage-storage tables, release rates and the orifice bisection for all designs of the block at
  once, through the numba routing kernel) -- one task per block, never one per scenario.
* **Before anything runs** (:func:`run_sweep`): a sweep above :data:`LARGE_SWMM_SCENARIOS` (SWMM) or
  :data:`LARGE_VECTOR_SCENARIOS` (vectorized) scenarios is refused unless ``yes_large``
  (``--yes-large``), with its size and an estimated run time (:func:`run_seconds_estimate`); above
  :data:`capacitysim.io.sweep_files.MAX_SCENARIOS` it is refused whatever the options (memory of
  the store). The store's path is never an input, a symbolic link or a file
  (:func:`check_store_path`), and a ``scheduler`` must answer (:func:`check_scheduler_address`)
  before the store is created.

Results
-------
A Zarr store holding a flat ``scenario`` dimension (C order over the grid) and the grid's values;
:func:`open_results` returns an :class:`xarray.Dataset` with one dimension per swept parameter
(``product``) or ``scenario`` (``zip``). Results are written by the driver as scenarios finish
(with at most a few tasks per worker in flight, so memory stays flat); ``status`` (0 missing,
1 done, 2 failed) is written last, so a sweep killed at any moment resumes
(``resume=True``) by recomputing exactly the scenarios whose status is 0; until then a missing
scenario has no verdict (never "fail": :func:`open_results`, :func:`summarize`). A scenario that raises
(a SWMM error, a bad combination such as remediation in a basin without RDII) is stored with
status 2 and its message; the sweep goes on. Tasks of a worker that dies are rescheduled by the
dask scheduler (its ``allowed-failures``). SWMM and detention stores also hold, per scenario, the
criterion and element of its first failed check (``failed_criterion``, ``failed_element``; "" when
none failed), which :func:`summarize` names as the check that governs a capacity.

References
----------
.. [1] Dask Development Team (2016). Dask: Library for dynamic task scheduling; dask.distributed
   (``Client.scatter``, ``as_completed``, ``LocalCluster``).
.. [2] Binghamton-Johnson City Sewer Use Rules ch. 174, I/I Offset Program (capacity
   demonstration; I/I remediation basins); 15 RCNY § 31-03 (NYC release rate, detention).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import shutil
import tempfile
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from capacitysim.errors import DataFileError, InputError
from capacitysim.io.sweep_files import MAX_SCENARIOS, SweepSpec, check_grid_size
from capacitysim.rules.verdict import VERDICT_CODE, VERDICT_NAME
from capacitysim.units import (
    ACRES_PER_SQMI,
    GPD_PER_CFS,
    INCHES_PER_FOOT,
    MINUTES_PER_HOUR,
    SECONDS_PER_DAY,
    SECONDS_PER_HOUR,
    SECONDS_PER_MINUTE,
    SQFT_PER_ACRE,
)

#: Status codes of a scenario in the store.
MISSING, DONE, FAILED = 0, 1, 2
#: Verdict codes: -1 none (failed or missing), 0 fail, 1 pass, 2 untrusted (continuity error).
VERDICTS = VERDICT_NAME  # the one coding of capacitysim.rules.verdict (pass = 1, fail = 0, untrusted = 2)
#: Characters kept of a failure or verdict message.
MESSAGE_CHARS = 240
#: Characters kept of the governing check's criterion and element (``failed_criterion``, ``failed_element``).
CHECK_CHARS = 120
#: Tasks kept in flight per worker (bounded so memory stays flat on huge sweeps).
IN_FLIGHT_PER_WORKER = 3

#: Run-time estimate of a SWMM run [s] = overhead + per node x nodes. Measured (one core, the
#: bundled storms, 6 h spin-up): tiny.inp (14 nodes) 0.40 s, synthetic-50 1.22 s, synthetic-500
#: 10.2 s per run; a model with a longer simulation or a finer routing step takes longer.
SWMM_RUN_OVERHEAD_S = 0.2
SWMM_SECONDS_PER_NODE = 0.02
#: Run-time estimate of a vectorized design [s per scenario, one core]. Measured: the bundled
#: detention-family (432 designs) 0.8 ms and runoff-detention-1000 (SCS hydrographs) 1.6 ms per
#: design; 10,000 runoff rows 0.05 ms per row.
DETENTION_SECONDS_PER_ROW = 2e-3
RUNOFF_SECONDS_PER_ROW = 1e-4
#: Sweeps larger than this need ``yes_large`` (``--yes-large``): about 2 h of SWMM runs of a 50-node
#: model on one core (14 h of a 500-node one) ...
LARGE_SWMM_SCENARIOS = 5_000
#: ... and about 17 min of vectorized detention designs on one core.
LARGE_VECTOR_SCENARIOS = 500_000
#: Address schemes of a dask scheduler a sweep connects to (``--scheduler``).
SCHEDULER_SCHEMES = ("tcp", "tls", "ws", "wss")
#: Seconds to open a TCP connection to the scheduler's host and port before anything else (fail fast).
SCHEDULER_PROBE_TIMEOUT_S = 5.0
#: Seconds for the dask handshake with a scheduler that accepted the connection.
SCHEDULER_CONNECT_TIMEOUT_S = 20.0
#: Seconds per year, for run-time estimates.
SECONDS_PER_YEAR = 365.25 * SECONDS_PER_DAY


# ==============================================================================================
# before a sweep runs: its size, its output, its scheduler
# ==============================================================================================
def run_seconds_estimate(spec: SweepSpec) -> tuple[float, str]:
    """Estimated run time of the whole sweep on one core [s], and how it was estimated.

    SWMM sweeps: (scenarios + one run before per storm depth) x (:data:`SWMM_RUN_OVERHEAD_S` +
    :data:`SWMM_SECONDS_PER_NODE` x the model's nodes); vectorized sweeps: scenarios x a
    measured time per design (:data:`DETENTION_SECONDS_PER_ROW`, :data:`RUNOFF_SECONDS_PER_ROW`).
    """
    n = spec.n_scenarios
    if spec.kind == "swmm":
        nodes = spec.model_nodes
        if nodes is None:
            from capacitysim.network.model import load_model

            nodes = len(load_model(spec.model).node_ids())
        per_run = SWMM_RUN_OVERHEAD_S + SWMM_SECONDS_PER_NODE * nodes
        depths = spec.grid.get("storm_depth_in", [None])
        runs = n + len(set(depths))
        return runs * per_run, f"{runs:,} SWMM runs of ~{per_run:.2g} s each ({nodes:,}-node model)"
    per_row = DETENTION_SECONDS_PER_ROW if spec.kind == "detention" else RUNOFF_SECONDS_PER_ROW
    return n * per_row, f"{n:,} {spec.kind} designs of ~{per_row * 1e3:.2g} ms each"


def duration_text(seconds: float) -> str:
    """A duration in words: ``40 s``, ``12 min``, ``3.5 h``, ``14 days``, ``3.2 years``."""
    if seconds < SECONDS_PER_MINUTE:
        return f"{seconds:.0f} s"
    if seconds < SECONDS_PER_HOUR:
        return f"{seconds / SECONDS_PER_MINUTE:.0f} min"
    if seconds < SECONDS_PER_DAY:
        return f"{seconds / SECONDS_PER_HOUR:.1f} h"
    if seconds < SECONDS_PER_YEAR:
        return f"{seconds / SECONDS_PER_DAY:,.1f} days"
    return f"{seconds / SECONDS_PER_YEAR:,.1f} years"


def large_limit(spec: SweepSpec) -> int:
    """Scenarios a sweep of this kind may have without ``yes_large``."""
    return LARGE_SWMM_SCENARIOS if spec.kind == "swmm" else LARGE_VECTOR_SCENARIOS


def check_sweep_size(spec: SweepSpec, yes_large: bool = False, workers: int | None = None) -> None:
    """Refuse a sweep above :func:`large_limit` unless ``yes_large``, and any sweep above
    :data:`~capacitysim.io.sweep_files.MAX_SCENARIOS` (the hard limit).

    Parameters
    ----------
    spec : SweepSpec
    yes_large : bool
        The user confirmed a large sweep (``--yes-large``).
    workers : int, optional
        Local worker processes, for the time estimate (None: the run-time on one core only).

    Raises
    ------
    capacitysim.errors.InputError
        Naming the number of scenarios, the limit and the estimated run time.
    """
    check_grid_size(spec, spec.path)
    n = spec.n_scenarios
    limit = large_limit(spec)
    if n <= limit or yes_large:
        return
    seconds, how = run_seconds_estimate(spec)
    par = f", about {duration_text(seconds / workers)} on {workers} workers" if workers and workers > 1 else ""
    raise InputError(
        f"{spec.path}: {n:,} scenarios exceed the limit of {limit:,} for {spec.kind} sweeps: {how} = about "
        f"{duration_text(seconds)} on one core{par}; add --yes-large to run it anyway (up to the hard limit of "
        f"{MAX_SCENARIOS:,}), or sweep fewer values")


def sweep_inputs(spec: SweepSpec) -> list[str]:
    """The files a sweep reads (the sweep file, its model or site, its storm file), resolved."""
    paths = [spec.path, spec.model, spec.site, getattr(spec.storm, "path", None)]
    return [os.path.realpath(p) for p in paths if p]


def check_store_path(out: str | os.PathLike, inputs) -> None:
    """Refuse a results store (``--out``) that would destroy or sit on an input.

    Refused: a symbolic link (never followed: the store is written and, when created, replaced);
    an existing file (a store is a folder; the file would be an input, a report, anything else);
    the path of an input (the sweep file, the model, the site, the storm), after resolving
    symlinks and ``..``; a folder that holds an input.

    Raises
    ------
    capacitysim.errors.InputError
        ``--out PATH: ...`` naming the input.
    """
    p = Path(out)
    if p.is_symlink():
        raise InputError(f"--out {p}: is a symbolic link; give a plain folder path for the results store (outputs never follow links)")
    target = Path(os.path.realpath(p))
    for inp in inputs:
        src = Path(os.path.realpath(inp))
        if target == src:
            raise InputError(f"--out {p}: is an input of this sweep ({inp}); it would be overwritten; choose a new .zarr path")
        if target in src.parents:
            raise InputError(f"--out {p}: holds the input {inp}; the results store must be a folder of its own (a new .zarr path)")
    if p.exists() and not p.is_dir():
        raise InputError(f"--out {p}: is a file, not a results store (a folder); choose a new .zarr path")


def check_scheduler_address(address: str) -> str:
    """Validate a dask scheduler address and check that its host and port accept a connection.

    Fails fast: the scheme must be one of :data:`SCHEDULER_SCHEMES`, the address ``HOST:PORT``,
    and a TCP connection must open within :data:`SCHEDULER_PROBE_TIMEOUT_S`.

    Returns
    -------
    str
        The address as given.

    Raises
    ------
    capacitysim.errors.InputError
        ``--scheduler ADDRESS: ...`` saying what is wrong and what is allowed.
    """
    import socket

    from distributed.comm import parse_address, parse_host_port

    allowed = ", ".join(f"{s}://HOST:PORT" for s in SCHEDULER_SCHEMES)
    try:
        scheme, loc = parse_address(str(address))
    except (ValueError, TypeError) as exc:
        raise InputError(f"--scheduler {address!r}: not a scheduler address ({exc}); give {allowed}") from None
    if scheme not in SCHEDULER_SCHEMES:
        raise InputError(f"--scheduler {address!r}: unknown scheme {scheme!r}; give {allowed}")
    try:
        host, port = parse_host_port(loc)
    except (ValueError, TypeError) as exc:
        raise InputError(f"--scheduler {address!r}: not HOST:PORT ({exc}); give {allowed}") from None
    if not host or not isinstance(port, int) or not 0 < port < 65536:
        raise InputError(f"--scheduler {address!r}: needs a host and a port in 1..65535; give {allowed}")
    try:
        with socket.create_connection((host, port), timeout=SCHEDULER_PROBE_TIMEOUT_S):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise InputError(f"--scheduler {address}: cannot reach {host}:{port} within {SCHEDULER_PROBE_TIMEOUT_S:g} s "
                         f"({reason}); is a dask scheduler running there?") from None
    return address


# ==============================================================================================
# the network shipped to the workers
# ==============================================================================================
@dataclass(frozen=True)
class NetworkBundle:
    """Everything a worker needs to run scenarios of one network: sent once per worker."""

    name: str
    inp_text: str
    sha: str
    plant: str
    basins: tuple  # capacitysim.network.basins.Basin, plant first
    cso_outfalls: tuple[str, ...]
    storm: object | None  # capacitysim.io.storms.StormSpec of the sweep, or None (the model's rainfall)
    timeout_s: float | None = None
    spinup_hr: float | None = None  # None: the capacity demonstration's default policy

    @property
    def outlets(self) -> tuple[str, ...]:
        return tuple(b.outlet for b in self.basins)


def make_bundle(spec: SweepSpec) -> NetworkBundle:
    """Read the sweep's model once in the driver: text, plant, basins, CSO outfalls, storm."""
    from capacitysim.network.basins import find_basins
    from capacitysim.network.model import load_model

    from capacitysim.network.engine import prepare_inp_text
    from capacitysim.network.model import read_model_text
    from capacitysim.workflows.demonstration import choose_plant

    model = load_model(spec.model)
    plant, _ = choose_plant(model, spec.plant)
    basins = find_basins(model, spec.outlets, plant)
    outfalls = set(model.node_ids_of("OUTFALLS"))
    # the text byte for byte (latin-1), with the files it reads made absolute: workers write it elsewhere
    text = prepare_inp_text(read_model_text(spec.model), Path(spec.model).resolve().parent, None)
    return NetworkBundle(
        name=Path(spec.model).name, inp_text=text, sha=hashlib.sha256(text.encode("latin-1")).hexdigest()[:16],
        plant=plant or "", basins=tuple(basins), cso_outfalls=tuple(sorted(outfalls - {plant})),
        storm=spec.storm, timeout_s=spec.timeout_s, spinup_hr=spec.spinup_hr,
    )


_MODELS: dict[str, object] = {}  # per process: sha -> parsed SwmmInp written to a local file


def _local_model(bundle: NetworkBundle):
    """The bundle's model as a file in this process's temporary folder (written once per process)."""
    from capacitysim.network.model import parse_inp

    m = _MODELS.get(bundle.sha)
    if m is None or not Path(m.path).is_file():
        import atexit

        folder = Path(tempfile.mkdtemp(prefix=f"capacitysim-sweep-{bundle.sha}-"))
        atexit.register(shutil.rmtree, folder, True)  # removed when the worker process exits
        path = folder / bundle.name
        path.write_bytes(bundle.inp_text.encode("latin-1"))
        m = parse_inp(path)
        _MODELS[bundle.sha] = m
    return m


# ==============================================================================================
# one SWMM scenario (the same functions run in the sweep and one by one)
# ==============================================================================================
def _criteria(criteria: dict | None):
    from capacitysim.rules.capacity import Criteria

    return Criteria.from_dict(criteria or {})


def scenario_storm(bundle: NetworkBundle, model, params: dict):
    """The design storm of a scenario (a :class:`~capacitysim.network.scenario.Storm`), or None.

    With a sweep storm: that storm file with its ``depth_in`` replaced by ``storm_depth_in``
    (``capacitysim capacity --storm`` with a copy of the file of that depth gives the same hyetograph,
    bit for bit). Without one, ``storm_depth_in`` scales the model's own rainfall (an even-interval
    [TIMESERIES]), which is then run as a design storm (moved after the spin-up like any other);
    with neither, None (the model's rainfall, untouched).
    """
    from capacitysim.network.scenario import Storm, model_rainfall

    depth = params.get("storm_depth_in")
    if bundle.storm is not None:
        spec = bundle.storm
        if depth is not None:
            spec = dataclasses.replace(spec, depth_in=float(depth), name=f"{spec.name} at {float(depth):g} in")
        return Storm.from_spec(spec)
    if depth is None:
        return None
    t, d = model_rainfall(model)
    if d.size == 0 or d.sum() <= 0:
        raise InputError("storm_depth_in: the model's rainfall is not a [TIMESERIES] that can be scaled; give storm = ...")
    steps = np.diff(t)
    if steps.size and np.ptp(steps) > 1e-6:
        raise InputError("storm_depth_in: the model's rainfall has uneven intervals; give storm = ...")
    dt_min = float(steps[0] * MINUTES_PER_HOUR) if steps.size else 60.0
    d = d * (float(depth) / d.sum())
    return Storm(tuple(float(v) for v in d), dt_min, f"model rainfall scaled to {depth:g} in", float(t[0]))


def scenario_edits(bundle: NetworkBundle, model, params: dict) -> tuple[list, list]:
    """(edits before, edits after) of a scenario: exactly what ``capacitysim capacity`` runs.

    The scenario's storm (:func:`scenario_storm`), connection (``connect_node``, ``connect_gpd``,
    ``peaking_factor`` or the node's diurnal pattern, as ``--connect NODE=GPD --peaking``) and
    remediation of ``remediation_fraction`` of the RDII in the connection node's I/I remediation
    basin (its tributary nodes, as ``--remediate basin=OUTLET,fraction=F``) go through
    :func:`capacitysim.workflows.demonstration.scenario_edits`, the capacity demonstration's own
    function: the same spin-up (default 6 h; storm moved, REPORT_START) and the same split of the
    edits between the two runs.
    """
    from capacitysim.network.basins import basin_of
    from capacitysim.network.scenario import Remediation
    from capacitysim.workflows.demonstration import scenario_edits as demonstration_edits

    conns = _connections(params)
    rems = []
    frac = float(params.get("remediation_fraction", 0.0) or 0.0)
    if frac > 0:
        node = params.get("connect_node")
        if node is None:
            raise InputError("remediation_fraction needs connect_node (its basin is remediated)")
        b = basin_of(node, list(bundle.basins))
        rems.append(Remediation(tuple(b.tributary), fraction=frac, basin=b.outlet))
    return demonstration_edits(model, scenario_storm(bundle, model, params), conns, rems, spinup_hr=bundle.spinup_hr)


def _connections(params: dict) -> list:
    """The scenario's connection (none when ``connect_gpd`` is 0 or absent)."""
    from capacitysim.network.scenario import Connection

    node = params.get("connect_node")
    gpd = float(params.get("connect_gpd", 0.0) or 0.0)
    if node is None or gpd <= 0:
        return []
    pf = params.get("peaking_factor")
    return [Connection(node, gpd, "pattern" if pf is None else float(pf))]


def run_network(bundle: NetworkBundle, edits: list, work_root: str | None = None):
    """Run the bundle's model with ``edits`` in SWMM (a child process); the results Dataset."""
    from capacitysim.network.engine import read_results, run_inp
    from capacitysim.network.scenario import write_scenario

    model = _local_model(bundle)
    tmp = tempfile.mkdtemp(prefix="capsim-scn-", dir=work_root)
    try:
        inp = Path(tmp) / "src" / "scenario.inp"
        if edits:
            write_scenario(model, edits, inp)
        else:
            inp.parent.mkdir(parents=True)
            shutil.copyfile(model.path, inp)
        run = run_inp(inp, Path(tmp) / "run", timeout_s=bundle.timeout_s)
        return read_results(run)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def baseline_key(params: dict) -> str:
    """Scenarios with the same key share their 'before' run (same storm)."""
    return json.dumps({k: v for k, v in params.items() if k == "storm_depth_in"}, sort_keys=True)


def swmm_verdict(bundle: NetworkBundle, params: dict, before, after, criteria: dict | None = None) -> tuple[str, str]:
    """Verdict after vs before with the capacity demonstration's own rules
    (:func:`capacitysim.rules.capacity.judge` and ``verdict_of``): ("pass" | "fail" |
    "untrusted", the failed checks)."""
    verdict, failed = _swmm_judgement(bundle, params, before, after, criteria)
    return verdict, _reason(failed)


def _reason(failed: list) -> str:
    return "; ".join(f"{ch.criterion} at {ch.element}: {_num(ch.before)} -> {_num(ch.after)} {ch.unit}"
                     for ch in failed[:3]) + (f" (+{len(failed) - 3} more)" if len(failed) > 3 else "")


def _swmm_judgement(bundle: NetworkBundle, params: dict, before, after, criteria: dict | None) -> tuple[str, list]:
    """(verdict, the failed checks in :func:`~capacitysim.rules.capacity.judge`'s order)."""
    from capacitysim.rules.capacity import judge, verdict_of
    from capacitysim.workflows.demonstration import judged_elements

    c = _criteria(criteria)
    checks = judge(before, after, c, **judged_elements(list(bundle.basins), _connections(params)))
    return verdict_of(before, after, checks, c), [ch for ch in checks if ch.passed is False]


def _num(x) -> str:
    return "-" if x is None else f"{x:,.4g}"


def _cso_volume(bundle: NetworkBundle, ds) -> float:
    vol = ds.volume_cf.sel(outfall=[o for o in bundle.cso_outfalls if o in ds.outfall.values]).values
    return float(np.nansum(vol))


def summarize_swmm(bundle: NetworkBundle, params: dict, before, after, criteria: dict | None = None) -> dict:
    """Per-scenario summary record (scalars and per-outlet/per-outfall vectors) of one SWMM scenario;
    ``failed_criterion`` and ``failed_element`` are those of its first failed check ("" when none)."""
    verdict, failed = _swmm_judgement(bundle, params, before, after, criteria)
    reason = _reason(failed)
    first_criterion, first_element = (failed[0].criterion, failed[0].element) if failed else ("", "")
    qq = after.max_q_over_qfull.values
    outf = sorted({bundle.plant, *bundle.cso_outfalls} - {""})

    def plant_peak(ds):  # no plant (no outfall receives dry-weather flow): not a number
        return float(ds.max_inflow_cfs.sel(node=bundle.plant)) if bundle.plant else math.nan
    return {
        "status": DONE,
        "verdict": VERDICT_CODE[verdict],
        "message": reason[:MESSAGE_CHARS],
        "failed_criterion": str(first_criterion)[:CHECK_CHARS],
        "failed_element": str(first_element)[:CHECK_CHARS],
        "plant_peak_inflow_cfs": plant_peak(after),
        "max_q_over_qfull": float(np.nanmax(qq)) if np.isfinite(qq).any() else math.nan,
        "flooding_volume_cf": float(np.nansum(after.flooding_volume_cf.values)),
        "cso_volume_cf": _cso_volume(bundle, after),
        "runoff_continuity_error_pct": float(after.attrs["runoff_continuity_error_pct"]),
        "flow_routing_continuity_error_pct": float(after.attrs["flow_routing_continuity_error_pct"]),
        "plant_peak_inflow_before_cfs": plant_peak(before),
        "cso_volume_before_cf": _cso_volume(bundle, before),
        "outlet_peak_inflow_cfs": after.max_inflow_cfs.sel(node=list(bundle.outlets)).values.astype(float),
        "outfall_volume_cf": np.array([float(after.volume_cf.sel(outfall=o)) if o in after.outfall.values else math.nan for o in outf]),
    }


def run_baseline_task(bundle: NetworkBundle, params: dict):
    """Dask task: the 'before' run of a storm (its exception fails the dependent scenarios).

    Only the storm parameters are used (:func:`baseline_key`): a scenario's own bad connection or
    remediation never fails the baseline other scenarios share."""
    storm_only = json.loads(baseline_key(params))
    before, _ = scenario_edits(bundle, _local_model(bundle), storm_only)
    return run_network(bundle, before)


def run_scenario_task(bundle: NetworkBundle, index: int, params: dict, before, criteria: dict | None) -> tuple[int, dict]:
    """Dask task: one scenario; a scenario that raises returns a failed record (the sweep goes on)."""
    try:
        _, edits = scenario_edits(bundle, _local_model(bundle), params)
        after = run_network(bundle, edits)
        return index, summarize_swmm(bundle, params, before, after, criteria)
    except Exception as exc:  # noqa: BLE001 - recorded, never lost: the sweep goes on
        return index, failed_record(exc)


def failed_record(exc: BaseException | str) -> dict:
    msg = exc if isinstance(exc, str) else f"{type(exc).__name__}: {exc}"
    return {"status": FAILED, "verdict": -1, "message": str(msg)[:MESSAGE_CHARS]}


def run_one(spec: SweepSpec, index: int, bundle: NetworkBundle | None = None) -> dict:
    """Scenario ``index`` of a sweep, run on its own in this process (no dask): the reference."""
    if spec.kind != "swmm":
        cols = spec.columns(index, index + 1)
        rec = _vector_block(make_payload(spec), cols)
        return {k: (v[0] if np.ndim(v) else v) for k, v in rec.items()}
    bundle = bundle or make_bundle(spec)
    params = spec.scenario(index)
    try:
        before = run_baseline_task(bundle, params)
    except Exception as exc:  # noqa: BLE001
        return failed_record(exc)
    return run_scenario_task(bundle, index, params, before, spec.criteria)[1]


# ==============================================================================================
# vectorized sweeps: detention family and runoff
# ==============================================================================================
@dataclass(frozen=True)
class VectorPayload:
    """What a block of a detention or runoff sweep needs (sent once)."""

    kind: str
    site: object | None = None  # capacitysim.io.site_files.Site
    rules: object | None = None  # RuleSet
    storm_distribution: str = "II"
    storm_depth_in: float | None = None
    storm_dt_min: float | None = None


def make_payload(spec: SweepSpec) -> VectorPayload:
    if spec.kind == "detention":
        from capacitysim.io.site_files import load_rule_set, load_site

        from capacitysim.workflows.detention import site_refusals

        rules = load_rule_set(spec.rules)
        site = load_site(spec.site, rules)
        site_refusals(site)  # refused before any scenario, as `capacitysim detention` refuses it
        return VectorPayload("detention", site, rules)
    st = spec.storm
    return VectorPayload("runoff", storm_distribution=st.distribution, storm_depth_in=float(st.depth_in), storm_dt_min=float(st.dt_min))


DETENTION_VARS = ("allowable_flow_cfs", "release_rate_cfs", "weighted_c", "required_volume_cf", "storage_provided_cf",
                  "system_height_ft", "orifice_diameter_in", "release_limit_in", "spill_limit_in", "peak_inflow_cfs",
                  "peak_outflow_cfs", "max_depth_ft", "max_storage_cf")
RUNOFF_VARS = ("runoff_depth_in", "runoff_volume_cf", "peak_flow_cfs", "time_to_peak_hr")
def _vector_block(payload: VectorPayload, cols: dict[str, np.ndarray]) -> dict:
    if payload.kind == "detention":
        return detention_block(payload, cols)
    return runoff_block(payload, cols)


def runoff_block(payload: VectorPayload, cols: dict[str, np.ndarray]) -> dict:
    """Runoff of n subcatchments at once: TR-55 depth and the SCS unit hydrograph peak.

    References
    ----------
    TR-55 (1986) ch. 2 eq. 2-3; NEH 630 ch. 16 (unit hydrograph) through
    :func:`capacitysim.hydrology.unit_hydrograph_runoff`.
    """
    from capacitysim import hydrology
    from capacitysim.io.sweep_files import RUNOFF_DEFAULTS

    n = len(next(iter(cols.values())))
    get = lambda k, d: np.broadcast_to(np.asarray(cols.get(k, d), float), (n,))  # noqa: E731
    area, cn, tc = get("area_ac", RUNOFF_DEFAULTS["area_ac"]), get("cn", RUNOFF_DEFAULTS["cn"]), get("tc_min", RUNOFF_DEFAULTS["tc_min"])
    depth = get("storm_depth_in", payload.storm_depth_in)
    q_in = np.asarray(hydrology.runoff_depth(depth, cn), float) * np.ones(n)
    peak = np.empty(n)
    tpk = np.empty(n)
    for d in np.unique(depth):
        rows = np.flatnonzero(depth == d)
        storm = hydrology.design_storm(float(d), payload.storm_distribution, payload.storm_dt_min)
        hyd = hydrology.unit_hydrograph_runoff(area[rows] / ACRES_PER_SQMI, cn[rows], tc[rows] / MINUTES_PER_HOUR, storm)
        v = np.atleast_2d(hyd.values)
        peak[rows] = v.max(axis=1)
        tpk[rows] = hyd["time_hr"].values[np.argmax(v, axis=1)]
    return {"status": np.full(n, DONE, np.int8), "verdict": np.full(n, -1, np.int8), "message": np.full(n, "", f"<U{MESSAGE_CHARS}"),
            "runoff_depth_in": q_in, "runoff_volume_cf": q_in / INCHES_PER_FOOT * area * SQFT_PER_ACRE,
            "peak_flow_cfs": peak, "time_to_peak_hr": tpk}


def detention_block(payload: VectorPayload, cols: dict[str, np.ndarray]) -> dict:
    """n variants of a NYC site at once, by the one detention engine
    (:func:`capacitysim.workflows.detention.design_batch`, which ``capacitysim detention`` runs with
    n = 1): the same numbers, refusals and verdict; the SWMM cross-check is the one-site command's.
    Verdict "pass" when the orifice keeps the release rate without overtopping, the storage holds the
    required volume and the critical storm duration is bracketed by the routed ones.
    """
    from capacitysim.workflows.detention import DESIGN_CHECKS, design_batch

    n = len(next(iter(cols.values())))
    b = design_batch(payload.site, payload.rules, cols, n)
    message = np.array([b.message(i)[:MESSAGE_CHARS] for i in range(n)], dtype=f"<U{MESSAGE_CHARS}")
    crit = np.full(n, "", f"<U{CHECK_CHARS}")
    elem = np.full(n, "", f"<U{CHECK_CHARS}")
    for key, (criterion, element) in DESIGN_CHECKS.items():
        crit[b.failed_check == key] = criterion
        elem[b.failed_check == key] = element
    v = b.values
    out = {"status": np.where(b.valid, DONE, FAILED).astype(np.int8),
           "verdict": np.where(b.valid, b.passed.astype(np.int8), VERDICT_CODE[""]).astype(np.int8),
           "message": message, "failed_criterion": crit, "failed_element": elem,
           **{k: v[k] for k in DETENTION_VARS if k in v},
           "spill_limit_in": np.where(np.isinf(v["spill_limit_in"]), np.nan, v["spill_limit_in"])}
    for k in DETENTION_VARS:
        out[k] = np.where(b.valid, np.asarray(out[k], float), np.nan)
    return out


def block_task(payload, spec: SweepSpec, block: np.ndarray) -> tuple[int, int, dict]:
    """Dask task: one block of a vectorized sweep (flat indices ``block``, contiguous)."""
    start, stop = int(block[0]), int(block[-1]) + 1
    try:
        rec = _vector_block(payload, spec.columns(start, stop))
    except Exception as exc:  # noqa: BLE001
        rec = failed_record(exc)
    return start, stop, rec


# ==============================================================================================
# the store
# ==============================================================================================
def result_variables(spec: SweepSpec, bundle: NetworkBundle | None) -> dict[str, tuple]:
    """Variables of the store: name -> (extra dims, extra sizes, dtype, units/description)."""
    base = {"status": ((), (), "int8", "0 missing, 1 done, 2 failed"),
            "verdict": ((), (), "int8", "-1 none, 0 fail, 1 pass, 2 untrusted"),
            "message": ((), (), f"<U{MESSAGE_CHARS}", "failure message or the verdict's reasons")}
    if spec.kind in ("swmm", "detention"):
        base["failed_criterion"] = ((), (), f"<U{CHECK_CHARS}", "criterion of the first failed check ('' when none)")
        base["failed_element"] = ((), (), f"<U{CHECK_CHARS}", "element (node, link, outfall, run, orifice...) of the first failed check")
    if spec.kind == "swmm":
        n_out = len(bundle.outlets)
        outf = sorted({bundle.plant, *bundle.cso_outfalls} - {""})
        for k, u in (("plant_peak_inflow_cfs", "cfs"), ("max_q_over_qfull", "-"), ("flooding_volume_cf", "ft3"), ("cso_volume_cf", "ft3"),
                     ("runoff_continuity_error_pct", "%"), ("flow_routing_continuity_error_pct", "%"),
                     ("plant_peak_inflow_before_cfs", "cfs"), ("cso_volume_before_cf", "ft3")):
            base[k] = ((), (), "float64", u)
        base["outlet_peak_inflow_cfs"] = (("outlet",), (n_out,), "float64", "cfs, peak inflow at each basin outlet")
        base["outfall_volume_cf"] = (("outfall",), (len(outf),), "float64", "ft3, volume at each outfall")
    else:
        for k in DETENTION_VARS if spec.kind == "detention" else RUNOFF_VARS:
            if k not in spec.grid:  # a swept input (orifice_diameter_in, weighted_c) is a dimension, not a result
                base[k] = ((), (), "float64", "")
    return base


def _sweep_attrs(spec: SweepSpec) -> dict:
    meta = {"kind": spec.kind, "mode": spec.mode, "grid": [[k, v] for k, v in spec.grid.items()],
            "name": spec.name, "criteria": spec.criteria}
    if spec.kind == "swmm":
        # the runs' spin-up, prepended: a store written otherwise (older capacitysim) is another sweep, never resumed
        meta["spinup_hr"] = "default" if spec.spinup_hr is None else spec.spinup_hr
        meta["spinup"] = "prepended"
    return {"sweep": json.dumps(meta),
            "dims": json.dumps(spec.dims), "verdicts": json.dumps(VERDICTS)}


def create_store(path: str | os.PathLike, spec: SweepSpec, bundle: NetworkBundle | None, chunk: int) -> None:
    """Create the Zarr store (metadata and grid values only; scenarios stay unwritten = missing)."""
    import dask.array as da
    import xarray as xr

    n = spec.n_scenarios
    chunk = max(1, min(chunk, n))
    data_vars = {}
    encoding = {}
    for name, (dims, sizes, dtype, desc) in result_variables(spec, bundle).items():
        shape = (n, *sizes)
        fill = np.nan if dtype == "float64" else (-1 if name == "verdict" else 0)
        arr = da.full(shape, fill if not dtype.startswith("<U") else "", dtype=dtype, chunks=(chunk, *sizes))
        data_vars[name] = (("scenario", *dims), arr, {"description": desc})
        encoding[name] = {"chunks": (chunk, *sizes)}
    coords = {}
    if spec.mode == "product":
        for k, v in spec.grid.items():
            coords[k] = (k, np.asarray(v))
    else:
        for k, v in spec.grid.items():
            coords[f"param_{k}"] = ("scenario", np.asarray(v))
    if spec.kind == "swmm":
        coords["outlet"] = ("outlet", np.asarray(bundle.outlets))
        coords["outfall"] = ("outfall", np.asarray(sorted({bundle.plant, *bundle.cso_outfalls} - {""})))
    ds = xr.Dataset(data_vars, coords=coords, attrs=_sweep_attrs(spec))
    ds.attrs["inputs"] = json.dumps(sweep_inputs(spec))  # what `summarize --report` must never overwrite
    if spec.kind == "swmm":
        ds.attrs.update(plant=bundle.plant, model=bundle.name, cso_outfalls=json.dumps(list(bundle.cso_outfalls)))
    ds.to_zarr(str(path), mode="w", compute=False, encoding=encoding, zarr_format=2, consolidated=False)


def missing_indices(path: str | os.PathLike, spec: SweepSpec) -> np.ndarray:
    """Flat indices of the scenarios still missing in an existing store (checks it is this sweep)."""
    import zarr

    try:
        g = zarr.open_group(str(path), mode="r")
        stored = json.loads(g.attrs.get("sweep", "{}"))
    except Exception as exc:  # noqa: BLE001 - a folder that is no Zarr store, an unreadable attribute
        raise DataFileError(f"--out {path}: not a sweep results store ({type(exc).__name__}); "
                            "--resume continues a store that `sweep run` wrote") from None
    want = json.loads(_sweep_attrs(spec)["sweep"])
    if stored != want:
        raise DataFileError(f"{path}: holds another sweep (grid, kind or criteria differ); use a new --out or remove it")
    if "status" not in g:
        raise DataFileError(f"--out {path}: not a sweep results store (no status array)")
    status = g["status"][:]
    return np.flatnonzero(status == MISSING)


class _Writer:
    """Writes finished scenarios into the store (status last: a half-written scenario stays missing)."""

    def __init__(self, path, names):
        import zarr

        self.g = zarr.open_group(str(path), mode="r+")
        # a store of an older capacitysim may lack a variable (failed_criterion): it is left out
        self.arrays = {k: self.g[k] for k in names if k in self.g}
        names = [k for k in names if k in self.arrays]
        self.order = [k for k in names if k != "status"] + ["status"]

    def write(self, sl: slice, rec: dict) -> None:
        n = sl.stop - sl.start
        for k in self.order:
            if k in rec:
                arr = self.arrays[k]
                self.arrays[k][sl] = np.broadcast_to(np.asarray(rec[k], dtype=arr.dtype), (n, *arr.shape[1:]))


# ==============================================================================================
# running a sweep
# ==============================================================================================
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

    def as_json(self) -> dict:
        return {"out": self.path, "scenarios": self.n_scenarios, "computed": self.computed, "failed": self.failed,
                "skipped": self.skipped, "seconds": self.seconds, "workers": self.workers, "scheduler": self.scheduler,
                "failures": self.failures[:20], "outcome": dict(self.outcome)}


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
        Run a sweep above :func:`large_limit` (``--yes-large``); the hard limit stays.

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
    bundle = make_bundle(spec) if spec.kind == "swmm" else None
    # the inputs are read once, here, before the store: a site the rules refuse refuses the sweep
    payload = make_payload(spec) if spec.kind != "swmm" else None
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
            create_store(out, spec, bundle, chunk)
        writer = _Writer(out, list(result_variables(spec, bundle)))

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
                    baselines[key] = run_baseline_task(bundle, params)
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
                base_futs[key] = client.submit(run_baseline_task, shipped, params, pure=False, key=f"baseline-{len(base_futs)}-{bundle.sha}")
            f = client.submit(run_scenario_task, shipped, i, params, base_futs[key], spec.criteria, pure=False)
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


# ==============================================================================================
# reading results
# ==============================================================================================
def open_results(path: str | os.PathLike):
    """The sweep's results as an xarray.Dataset with one dimension per swept parameter (product
    grids) or ``scenario`` (zip), ``verdict`` as text ("pass", "fail", "untrusted", "" when failed
    or missing) and ``status`` as text ("done", "failed", "missing")."""
    import xarray as xr

    p = Path(path)
    if not p.exists():
        raise DataFileError(f"{p}: no sweep results here")
    try:
        flat = xr.open_zarr(str(p), consolidated=False).load()
    except Exception as exc:  # noqa: BLE001
        raise DataFileError(f"{p}: not a sweep results store ({exc})") from None
    if "sweep" not in flat.attrs:
        raise DataFileError(f"{p}: not a sweep results store (no sweep attributes)")
    try:
        meta = json.loads(flat.attrs["sweep"])
        meta["grid"] = dict(meta["grid"])  # file order (the flat index is C order over it)
        codes = {int(k): v for k, v in json.loads(flat.attrs["verdicts"]).items()}
        status = np.asarray(flat.status.values).astype(int)
        verdict = np.asarray(flat.verdict.values).astype(int)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise DataFileError(f"{p}: not a sweep results store (its attributes do not parse: {type(exc).__name__}: {exc})") from None
    if not np.isin(status, (MISSING, DONE, FAILED)).all():
        raise DataFileError(f"{p}: status holds codes other than {MISSING} (missing), {DONE} (done), {FAILED} (failed)")
    # a verdict exists only for a done scenario: a missing one's chunk may read the store's fill
    # value (0, "fail") where it was never written; missing is not fail
    verdict = np.where(status == DONE, verdict, -1)
    flat["verdict"] = ("scenario", np.array([codes.get(int(c), "") for c in verdict], dtype=object))
    flat["status"] = ("scenario", np.array([("missing", "done", "failed")[int(s)] for s in status], dtype=object))
    for name in ("message", "failed_criterion", "failed_element"):
        if name in flat:
            flat[name] = flat[name].astype(object).where(status != MISSING, "")
    if meta["mode"] == "zip":
        return flat.rename({f"param_{k}": k for k in meta["grid"]}).set_coords(list(meta["grid"]))
    dims = list(meta["grid"])
    shape = tuple(len(v) for v in meta["grid"].values())
    out = {}
    for name, var in flat.data_vars.items():
        rest = var.dims[1:]
        out[name] = (dims + list(rest), var.values.reshape(shape + var.shape[1:]), var.attrs)
    coords = {k: flat[k].values for k in dims}
    for extra in ("outlet", "outfall"):
        if extra in flat.coords:
            coords[extra] = flat[extra].values
    return xr.Dataset(out, coords=coords, attrs=flat.attrs)


# ==============================================================================================
# summary and report
# ==============================================================================================
def summarize(ds) -> dict:
    """Counts of the sweep and, for connection sweeps, the largest connection that passes.

    Only computed scenarios are summarized: a missing one (an interrupted sweep) has no verdict
    (:func:`open_results`), is counted in ``missing`` and is never a failing value. ``complete``
    is False while any scenario is missing; ``computed`` = done + failed.

    ``largest_passing``: for each ``connect_node`` (and each combination of the other swept
    parameters), one row (:func:`_largest_passing`): the largest swept ``connect_gpd`` whose verdict
    is "pass" (``largest_passing_gpd``, None when none passes); ``lower_bound`` (True when no larger
    swept flow fails, so the capacity is only known to be *at least* that flow: "≥ 100,000 gpd");
    ``smallest_failing_gpd`` (the smallest swept flow above it that fails: with
    ``largest_passing_gpd`` the bracket of the capacity); ``governing_check`` (that failing
    scenario's first failed check: ``criterion``, ``element``, ``message``); ``monotone`` (no
    smaller swept flow fails), ``undecided`` and ``missing``. Sweeps over ``orifice_diameter_in`` give the
    same rows in ``largest_passing_orifice`` (``largest_passing_orifice_diameter_in``,
    ``smallest_failing_orifice_diameter_in``). :func:`bound_text` prints a row's bound.
    """
    meta = json.loads(ds.attrs["sweep"])
    grid = dict(meta["grid"])
    status = np.asarray(ds.status.values, dtype=object).ravel()
    verdict = np.asarray(ds.verdict.values, dtype=object).ravel()
    out = {"name": meta["name"], "kind": meta["kind"], "mode": meta["mode"], "dims": list(ds.verdict.dims),
           "grid": grid, "scenarios": int(status.size),
           "done": int((status == "done").sum()), "failed": int((status == "failed").sum()),
           "missing": int((status == "missing").sum()),
           "pass": int(((verdict == "pass") & (status == "done")).sum()),
           "fail": int(((verdict == "fail") & (status == "done")).sum()),
           "untrusted": int(((verdict == "untrusted") & (status == "done")).sum())}
    out["computed"] = out["done"] + out["failed"]
    out["complete"] = out["missing"] == 0
    msgs = np.asarray(ds.message.values, dtype=object).ravel()
    out["failures"] = sorted({str(m) for m, s in zip(msgs, status) if s == "failed"})[:10]
    if meta["mode"] == "product" and "connect_node" in grid and "connect_gpd" in grid:
        out["largest_passing"] = _largest_passing(ds, "connect_gpd", "connect_node")
    elif meta["mode"] == "product" and "orifice_diameter_in" in grid:
        out["largest_passing_orifice"] = _largest_passing(ds, "orifice_diameter_in", None)
    if meta["kind"] == "detention" and "orifice_diameter_in" in ds:
        d = np.asarray(ds.orifice_diameter_in.values, float)
        out["orifice_diameter_in_range"] = [float(np.nanmin(d)), float(np.nanmax(d))] if np.isfinite(d).any() else None
    return out


def _value_key(value_dim: str, which: str) -> str:
    """``largest_passing_gpd`` / ``smallest_failing_gpd`` for connect_gpd, else ``{which}_{value_dim}``."""
    return f"{which}_gpd" if value_dim == "connect_gpd" else f"{which}_{value_dim}"


def _largest_passing(ds, value_dim: str, first: str | None) -> list[dict]:
    """For each combination of the other swept parameters, one row (keys: those parameters, then):

    ``largest_passing_<value>``
        The largest swept ``value_dim`` whose verdict is "pass" (None when none does).
    ``lower_bound``
        True when a value passes and no larger swept value fails (the top of the grid passes, or
        every larger value is undecided): the grid does not bracket the capacity, which is only
        known to be at least that value ("≥ 100,000 gpd"). False otherwise.
    ``smallest_failing_<value>``
        The smallest swept value above the largest passing one (the smallest of all when none
        passes) whose verdict is "fail"; None when none fails. With the largest passing value it
        brackets the capacity.
    ``governing_check``
        The check that governs the capacity: of that failing scenario, ``criterion`` and
        ``element`` of its first failed check (None when the store does not record them) and its
        ``message``; None when no larger value fails.
    ``monotone``
        No smaller swept value fails (one that is missing, errored or untrusted is no failure).
    ``undecided``
        How many scenarios of the row are failed (errored), missing or untrusted.
    ``missing``
        How many scenarios of the row are not computed yet (an interrupted sweep): never a failing
        value, never the failing end of a bracket.
    """
    others = [d for d in ds.verdict.dims if d not in (first, value_dim)]
    lead = [first] if first else []
    dims = (*lead, *others, value_dim)
    v = np.asarray(ds.verdict.transpose(*dims).values, dtype=object)
    st = np.asarray(ds.status.transpose(*dims).values, dtype=object)
    v = np.where(st == "done", v, "")  # only computed scenarios have a verdict
    crit = np.asarray(ds.failed_criterion.transpose(*dims).values, dtype=object) if "failed_criterion" in ds else None
    elem = np.asarray(ds.failed_element.transpose(*dims).values, dtype=object) if "failed_element" in ds else None
    msg = np.asarray(ds.message.transpose(*dims).values, dtype=object)
    vals = np.asarray(ds[value_dim].values, float)
    order = np.argsort(vals, kind="stable")
    svals = vals[order]
    key, fail_key = _value_key(value_dim, "largest_passing"), _value_key(value_dim, "smallest_failing")
    rows = []
    for idx in np.ndindex(*v.shape[:-1]):
        line = v[idx][order]
        ok = line == "pass"
        best = float(svals[ok].max()) if ok.any() else None
        above = np.ones(line.size, bool) if best is None else svals > best
        fails = np.flatnonzero(above & (line == "fail"))
        row = {}
        for d, j in zip(lead + others, idx):
            val = ds[d].values[j]
            row[d] = val.item() if hasattr(val, "item") else val
        row[key] = best
        row["lower_bound"] = bool(best is not None and fails.size == 0)
        row[fail_key] = float(svals[fails[0]]) if fails.size else None
        gov = None
        if fails.size:
            j = order[fails[0]]
            gov = {"criterion": (str(crit[idx][j]) or None) if crit is not None else None,
                   "element": (str(elem[idx][j]) or None) if elem is not None else None,
                   "message": str(msg[idx][j])}
        row["governing_check"] = gov
        row["monotone"] = bool(best is None or not (line[: int(np.flatnonzero(svals == best)[0]) + 1] == "fail").any())
        row["undecided"] = int(np.isin(line, ["", "untrusted"]).sum())
        row["missing"] = int((st[idx] == "missing").sum())
        rows.append(row)
    return rows


def missing_note(summary: dict) -> str:
    """One line on the scenarios an interrupted sweep has not computed (``summary`` of :func:`summarize`)."""
    return (f"{summary['missing']:,} of {summary['scenarios']:,} scenarios are missing (not computed: an interrupted "
            f"sweep; `sweep run --resume` computes them): this summary covers the {summary['computed']:,} computed, "
            "and a missing scenario is neither a pass nor a fail")


def _fmt_value(value: float, value_dim: str) -> str:
    if value_dim == "connect_gpd":
        return f"{value:,.0f} gpd"
    if value_dim == "orifice_diameter_in":
        return f"{value:g} in"
    return f"{value:g}"


def bound_text(row: dict, value_dim: str = "connect_gpd") -> str:
    """A row of :func:`_largest_passing` in words: ``≥ 150,000 gpd`` (a lower bound: no larger swept
    value fails), ``100,000 gpd (150,000 gpd fails)`` (the bracket), ``none passes (50,000 gpd fails)``."""
    best = row[_value_key(value_dim, "largest_passing")]
    fail = row[_value_key(value_dim, "smallest_failing")]
    if best is None:
        return "none passes" + (f" ({_fmt_value(fail, value_dim)} fails)" if fail is not None else "")
    if row["lower_bound"]:
        return f"≥ {_fmt_value(best, value_dim)}"
    return f"{_fmt_value(best, value_dim)} ({_fmt_value(fail, value_dim)} fails)"


def governing_text(row: dict) -> str:
    """The governing check of a row: ``criterion at element``, the scenario's message when the store
    does not record the check, "" when none."""
    g = row.get("governing_check")
    if not g:
        return ""
    if g["criterion"]:
        return f"{g['criterion']} at {g['element']}" if g["element"] else g["criterion"]
    return g["message"]


def verdict_map_axes(ds, x: str | None = None, y: str | None = None) -> tuple[str, str]:
    """The two swept parameters of the verdict map (default: the first two with several values)."""
    dims = [d for d in ds.verdict.dims if ds.sizes[d] > 1 and d != "scenario"]
    swept = [d for d in ds.verdict.dims if d != "scenario"]
    if (x is not None or y is not None) and not swept:
        raise InputError("--x/--y: a zip sweep (mode = \"zip\") has no grid to map; the verdict map is for product grids")
    for name, val in (("x", x), ("y", y)):
        if val is not None and val not in swept:
            raise InputError(f"--{name} {val!r} is not a swept parameter (swept: {', '.join(swept)})")
    if x is not None and x == y:
        raise InputError(f"--x and --y both name {x!r}; give two different swept parameters (swept: {', '.join(swept)})")
    if x is None:
        x = next((d for d in ("connect_gpd", "orifice_diameter_in") if d in dims), dims[0] if dims else None)
    if y is None:
        y = next((d for d in dims if d != x), None)
    if x is None or y is None:
        raise InputError("a verdict map needs two swept parameters with several values each (product grids)")
    return x, y


def write_summary_report(ds, path, x: str | None = None, y: str | None = None) -> Path:
    """HTML report: counts, largest passing connections, and the verdict map over two parameters
    (share of the scenarios over the other swept parameters that pass)."""
    from capacitysim.report.html import HtmlReport, new_figure

    s = summarize(ds)
    if x is not None or y is not None:
        verdict_map_axes(ds, x, y)  # a parameter the user named must exist
    rep = HtmlReport(f"Scenario sweep: {s['name']}", f"{s['kind']} sweep, {s['scenarios']:,} scenarios ({s['mode']})")
    rep.key_values([("done", s["done"]), ("failed", s["failed"]), ("missing", s["missing"]), ("pass", s["pass"]),
                    ("fail", s["fail"]), ("untrusted (continuity error)", s["untrusted"])])
    if s["missing"]:
        rep.paragraph(missing_note(s), "fail")
    rep.table(["parameter", "values"], [[k, ", ".join(map(str, v))] for k, v in s["grid"].items()])
    for field_name, title, value_dim in (("largest_passing", "Largest connection that passes", "connect_gpd"),
                                         ("largest_passing_orifice", "Largest orifice that passes", "orifice_diameter_in")):
        if s.get(field_name):
            rep.heading(title)
            rep.paragraph("≥: the largest swept value passes (or every larger one is undecided), so the capacity is at "
                          "least that value; the grid does not bracket it. Otherwise the smallest larger value that fails "
                          "is shown with the check that governs it (its first failed check).")
            derived = {_value_key(value_dim, "largest_passing"), _value_key(value_dim, "smallest_failing"), "lower_bound",
                       "governing_check", "monotone", "undecided", "missing"}
            keys = [k for k in s[field_name][0] if k not in derived]
            rep.table(keys + ["largest passing", "governing check", "no smaller value fails"],
                      [[r[k] for k in keys] + [bound_text(r, value_dim), governing_text(r) or "-", "yes" if r["monotone"] else "NO"]
                       for r in s[field_name]])
    if s["failures"]:
        rep.heading("Failed scenarios")
        for m in s["failures"]:
            rep.paragraph(m, "fail")
    if s["mode"] == "product":
        try:
            xd, yd = verdict_map_axes(ds, x, y)
        except InputError as exc:
            rep.paragraph(str(exc))
        else:
            v = ds.verdict.transpose(yd, xd, ...)
            vals = np.asarray(v.values, dtype=object)
            decided = np.isin(vals, ["pass", "fail"])
            passing = (vals == "pass").reshape(vals.shape[0], vals.shape[1], -1)
            dec = decided.reshape(passing.shape)
            with np.errstate(invalid="ignore"):
                share = passing.sum(-1) / dec.sum(-1)
            fig, ax = new_figure(7.0, 4.0)
            im = ax.imshow(share, origin="lower", aspect="auto", cmap="RdYlGn", vmin=0, vmax=1)
            ax.set_xticks(range(ds.sizes[xd]), [f"{t:g}" if isinstance(t, float) else str(t) for t in ds[xd].values.tolist()], rotation=45)
            ax.set_yticks(range(ds.sizes[yd]), [f"{t:g}" if isinstance(t, float) else str(t) for t in ds[yd].values.tolist()])
            ax.set_xlabel(xd)
            ax.set_ylabel(yd)
            fig.colorbar(im, ax=ax, label="share passing")
            rest = [d for d in ds.verdict.dims if d not in (xd, yd)]
            rep.figure(fig, f"Verdict map over {xd} and {yd}" + (f" (share of scenarios over {', '.join(rest)} that pass; "
                                                                   "blank: none decided)" if rest else " (green: pass, red: fail)"))
    rep.citation("Verdict criteria (capacitysim.workflows.demonstration.Criteria): " + (json.dumps(_criteria_dict(json.loads(ds.attrs['sweep']).get('criteria', {})))
                                         if s["kind"] == "swmm" else "15 RCNY § 31-03 release rate, no overtopping, required volume provided"))
    return rep.write(path)


def _criteria_dict(criteria: dict) -> dict:
    from dataclasses import asdict

    return asdict(_criteria(criteria))
