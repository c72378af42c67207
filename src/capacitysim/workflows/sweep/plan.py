"""Before a sweep runs: its size, its output, its scheduler.

A sweep above :data:`LARGE_SWMM_SCENARIOS` (SWMM) or :data:`LARGE_VECTOR_SCENARIOS` (vectorized)
scenarios is refused unless ``yes_large`` (``--yes-large``), with its size and an estimated run
time (:func:`run_seconds_estimate`); above :data:`capacitysim.io.sweep_files.MAX_SCENARIOS` it is
refused whatever the options (memory of the store). The store's path is never an input, a
symbolic link or a file (:func:`check_store_path`), and a ``scheduler`` must answer
(:func:`check_scheduler_address`) before the store is created.
"""

from __future__ import annotations

import os
from pathlib import Path

from capacitysim.errors import InputError
from capacitysim.io.sweep_files import MAX_SCENARIOS, SweepSpec, check_grid_size
from capacitysim.units import SECONDS_PER_DAY, SECONDS_PER_HOUR, SECONDS_PER_MINUTE

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
            nodes = len(spec.network_model().node_ids())  # the model load_sweep read, else read once now
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
