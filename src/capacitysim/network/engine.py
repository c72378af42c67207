"""Run SWMM in a child process and read its results as xarray, in U.S. customary units.

Two public steps:

* :func:`run_inp` copies a ``.inp`` into a work folder (never writing next to the input), forces
  ``THREADS 1`` (:func:`capacitysim.network.inp_text.prepare_inp_text`), and runs the engine in a fresh child process (``_child.py``; SWMM keeps global
  state, so two simulations in one process corrupt each other and threads are unsafe) with
  ``OMP_NUM_THREADS=1``, the engine's console output sent to ``/dev/null`` at the file-descriptor
  level, and the scratch files of ``[RDII]`` runs kept inside the work folder.
* :func:`read_results` returns an :class:`xarray.Dataset` of per-node, per-link and per-outfall
  statistics; :func:`node_series` and :func:`link_series` return time series.

Units
-----
Results are converted from the model's ``FLOW_UNITS`` to: flow [cfs], depth and elevation [ft],
volume [ft^3] (``_cf``), time [hr]. A model in GPM or MGD keeps feet; a model in CMS, LPS or MLD is
in metres and is converted with :data:`capacitysim.units.METERS_PER_FOOT` (exact); flow factors are
:data:`capacitysim.units.CFS_PER_FLOW_UNIT`.

Sources of each value
---------------------
* Max depth, max HGL, flooding volume and hours, surcharge hours, peak flow and max depth of
  links: the engine's routing-step statistics (``node_get_stats``, ``link_get_stats``), the same
  numbers as the report's Node Depth, Node Flooding, Node Surcharge and Link Flow summaries.
* Max q/Qfull and max d/D: the peak flow and max depth divided by the link's full-flow capacity and
  full depth from ``swmm_getValue(swmm_LINK_FULLFLOW / FULLDEPTH)`` (pyswmm exposes neither), which
  reproduces the report's Max/Full Flow and Max/Full Depth columns.
* Outfall volume: the engine's whole-run total inflow volume of each outfall
  (``swmm_getNodeTotalInflow``, from the flow-routing mass balance). The report's Outfall Loading
  Summary prints its own total (flow summed per routing step; 0.007-0.011 % apart on Hartfordville) to
  0.001 10^6 gal = 134 ft^3, a 1.5 % rounding of a 0.031 MG CSO; the ``.out`` file holds only
  reporting-step flows. Like the report's total, it covers the whole run, spin-up included.
* Continuity errors: ``swmm_getMassBalErr`` (the report's Runoff Quantity and Flow Routing
  Continuity, percent).
* Time series: the binary ``.out`` file (reporting step).

References
----------
.. [1] Rossman, L.A. (2022). Storm Water Management Model User's Manual Version 5.2, EPA/600/R-22/030,
   Section 8 (Status Report: Node Depth, Node Surcharge, Node Flooding, Outfall Loading and Link
   Flow summaries) and Appendix D (input format, ``[OPTIONS]`` THREADS).
.. [2] ../shared/reference/swmm-notes.md (engine global state, OpenMP threads, fd-level output).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from capacitysim.errors import CapacitysimError, EngineError, InputError
from capacitysim.network.inp_text import prepare_inp_text, quoted_tokens, section_lines
from capacitysim.units import (
    CFS_PER_FLOW_UNIT,
    CUBIC_FEET_PER_CUBIC_METER,
    GALLONS_PER_CUBIC_FOOT,
    GALLONS_PER_MILLION_GALLONS,
    LITERS_PER_CUBIC_METER,
    METERS_PER_FOOT,
    MILLIMETERS_PER_INCH,
    SECONDS_PER_HOUR,
    US_FLOW_UNITS,
)
from capacitysim.xarray_setup import xr

_CHILD = Path(__file__).with_name("_child.py")
#: SWMM's FLOW_TOL [cfs]: an external inflow smaller than this at a routing step is set to zero (EPA SWMM 5.2
#: ``routing.c``, ``addExternalInflows``: ``if ( fabs(q) < FLOW_TOL ) q = 0.0``; ``FLOW_TOL`` 0.00001 in
#: ``consts.h``): about 6.5 gpd, the smallest connection the engine represents.
ENGINE_FLOW_TOL_CFS = 1e-5


def unit_factors(flow_units: str) -> dict[str, float]:
    """Factors from a model's units to cfs, ft and ft^3.

    Parameters
    ----------
    flow_units : str
        The model's ``FLOW_UNITS`` (CFS, GPM, MGD: U.S. units, lengths in ft; CMS, LPS, MLD: SI,
        lengths in m) [1]_.

    Returns
    -------
    dict
        ``flow`` [cfs per model flow unit], ``length`` [ft per model length unit], ``volume``
        [ft^3 per model volume unit], ``report_volume`` [ft^3 per report volume unit: 10^6 gal
        or 10^6 litres].
    """
    fu = str(flow_units).upper()
    if fu not in CFS_PER_FLOW_UNIT:
        raise InputError(f"FLOW_UNITS must be one of {', '.join(CFS_PER_FLOW_UNIT)}; got {flow_units!r}")
    if fu in US_FLOW_UNITS:
        return {"flow": CFS_PER_FLOW_UNIT[fu], "length": 1.0, "volume": 1.0,
                "report_volume": GALLONS_PER_MILLION_GALLONS / GALLONS_PER_CUBIC_FOOT}
    return {"flow": CFS_PER_FLOW_UNIT[fu], "length": 1.0 / METERS_PER_FOOT, "volume": CUBIC_FEET_PER_CUBIC_METER,
            "report_volume": GALLONS_PER_MILLION_GALLONS / LITERS_PER_CUBIC_METER * CUBIC_FEET_PER_CUBIC_METER}


@dataclass(frozen=True)
class RunFiles:
    """The files of one finished SWMM run, all inside its work folder."""

    inp: Path
    rpt: Path
    out: Path
    stats: Path | None = None

    @property
    def work_dir(self) -> Path:
        return self.inp.parent


# --------------------------------------------------------------------------- the run


def run_inp(inp_path: str | os.PathLike, work_dir: str | os.PathLike, *, name: str | None = None,
            timeout_s: float | None = None, origin: str | os.PathLike | None = None,
            stop_rule: dict | None = None, progress_path: str | os.PathLike | None = None,
            progress_every_s: float = 1.0) -> RunFiles:
    """Run SWMM on a copy of ``inp_path`` inside ``work_dir`` in a fresh child process.

    Parameters
    ----------
    inp_path : path
        The SWMM 5 input file; it is only read.
    work_dir : path
        Folder for the copy, the report (``.rpt``), the binary results (``.out``) and the
        statistics gathered while the project was open (``.stats.json``). Created when missing.
    name : str, optional
        Stem of the files in ``work_dir`` (default: the input's stem).
    timeout_s : float, optional
        Kill the engine after this many seconds of wall time.
    origin : path, optional
        The user's model when ``inp_path`` is a scenario written from it: engine input errors then
        name the line of ``origin`` holding the same element.
    stop_rule : dict, optional
        Stop the run early once a statistic that never decreases during a run exceeds a threshold
        (``_child._run_until``: thresholds in the model's units, ``not_before_days``,
        ``every_steps``); the routing steps up to the stop are those of the complete run, and the
        statistics file then holds ``stopped`` (what stopped it, when). Without it the run is
        complete, as always.
    progress_path : path, optional
        The engine child reports the simulated time there while it runs (JSON replaced atomically at most
        once per ``progress_every_s`` of wall time: ``run``, ``elapsed_days``, ``total_days``, ``start``,
        ``now``, ``wall_s``, ``eta_s``, ``done``, ``writes``; ``_child._Reporter``), stepping with
        ``swmm_step``, whose results are those of the plain run bit for bit. The file's folder becomes
        writable to the engine child (its confinement): give it a folder of its own. The file is the
        caller's (left in place). Default: no progress unless the process runs inside
        :func:`stop_runs_when` with a ``progress_dir`` (a service job); otherwise the run is the one
        stride of ``_child.py``, untouched.
    progress_every_s : float
        Shortest wall time between two progress writes [s].

    Returns
    -------
    RunFiles

    Raises
    ------
    capacitysim.errors.DataFileError
        The input file does not exist.
    capacitysim.errors.EngineError
        The engine stopped with an error; the message holds the engine's first error line from
        the report (e.g. ``ERROR 209: undefined object ...``) and the line of the input it names.
        :class:`EngineInputError` (exit code 2) for input and file errors (SWMM 200-399).
    """
    from capacitysim.errors import DataFileError

    src = Path(inp_path)
    if not src.is_file():
        raise DataFileError(f"{src}: SWMM input file not found")
    wd = Path(work_dir).resolve()
    wd.mkdir(parents=True, exist_ok=True)
    stem = name or src.stem
    inp = wd / f"{stem}.inp"
    if inp.resolve() == src.resolve():
        raise InputError(f"work_dir {wd} is the input's own folder; runs never write next to the input")
    text = src.read_bytes().decode("latin-1")
    _write_run_copy(inp, text, src.resolve().parent, wd)
    rpt, out, stats = wd / f"{stem}.rpt", wd / f"{stem}.out", wd / f"{stem}.stats.json"
    for p in (rpt, out, stats):
        p.unlink(missing_ok=True)
    stop_path = None
    if stop_rule is not None:
        stop_path = wd / f"{stem}.stop.json"
        stop_path.write_text(json.dumps(stop_rule), encoding="utf-8")
    run_copy(RunFiles(inp, rpt, out, stats), timeout_s=timeout_s, source=src, origin=Path(origin) if origin else None,
             stop_path=stop_path, progress_path=Path(progress_path) if progress_path else None,
             progress_every_s=progress_every_s)
    return RunFiles(inp, rpt, out, stats)


class ScenarioRejectedError(EngineError):
    """The engine rejected a scenario capacitysim wrote (the after run of a demonstration), not the user's model.

    The before run is the user's model (with the spin-up) and ran; what failed is capacitysim's own edit,
    so the error says so, names the edits the scenario holds and quotes the engine: exit code 1 (a
    failure of the tool, nothing in the user's file to fix), never exit 2 with "SWMM failed" alone.

    Attributes
    ----------
    run : str
        The run whose scenario was rejected (``"after"``).
    edits : list of str
        The scenario's edits, in words.
    engine_error : str
        The engine's message (code, text, the line it rejected).
    """

    exit_code = 1

    def __init__(self, model_name: str, run: str, edits, engine_error: str, run_files=()):
        self.run, self.edits, self.engine_error = run, list(edits), engine_error
        super().__init__(f"{model_name}: SWMM rejected the {run} scenario capacitysim wrote from your model (your model "
                         f"itself runs: this is capacitysim's failure, not an input error): the scenario's edits "
                         f"({'; '.join(self.edits) or 'none'}) were not accepted by the engine: {engine_error}; "
                         "please report it with the model", run_files=run_files)


def scenario_rejected(exc: EngineError, model_name: str, run: str, edits) -> EngineError:
    """``exc`` as a :class:`ScenarioRejectedError` when the engine rejected the run's input or crashed on it
    (``exc.rejected``); any other engine error (a time limit, a stopped run) is returned unchanged."""
    if not getattr(exc, "rejected", False) or isinstance(exc, ScenarioRejectedError):
        return exc
    text = CapacitysimError.__str__(exc)  # as raised: the run's files are named while they exist (class 8)
    _, sep, detail = text.partition(": SWMM failed: ")
    return ScenarioRejectedError(model_name, run, edits, detail if sep else text, run_files=exc.run_files)


class EngineInputError(EngineError, InputError):
    """The engine rejected the input file (SWMM errors 200-399: input and file errors).

    A problem the user can fix in the model: an :class:`~capacitysim.errors.InputError` (exit code 2,
    HTTP 400), and still an :class:`EngineError` for callers that catch those.
    """

    exit_code = InputError.exit_code
    http_status = InputError.http_status
    title = InputError.title
    kind = InputError.kind


_ENGINE_LINE = re.compile(r"at line (\d+) of (input file|\[\w+\] section)")


def _engine_error(run: RunFiles, errors: list[str], source: Path | None, origin: Path | None = None) -> EngineError:
    """One-line error from the engine's ERROR lines; input errors name the line of the user's file.

    SWMM 5.2 writes e.g. ``ERROR 209: undefined object X at line 28 of [INFLOWS] section: <text>``
    with the line of the copy it read. The copy differs from ``source`` at most by one inserted
    ``THREADS 1`` line (:func:`prepare_inp_text`), so the line maps back by comparing texts; when
    ``source`` is a scenario written from ``origin`` (the user's model), the line of ``origin`` with
    the same tokens is named instead.
    """
    first = errors[0]
    mentions: list[tuple[str, str, str]] = []  # the run's files the message names, while they exist
    m = _ENGINE_LINE.search(first)
    if m:
        n = int(m.group(1))
        section = "" if m.group(2) == "input file" else f" ({m.group(2)})"
        copy_lines = run.inp.read_bytes().decode("latin-1").splitlines()
        text = copy_lines[n - 1].strip() if 0 < n <= len(copy_lines) else None
        src_n = None
        if source is not None and text is not None:
            src_lines = source.read_bytes().decode("latin-1").splitlines()
            src_n = next((k for k in (n, n - 1) if 0 < k <= len(src_lines) and src_lines[k - 1].strip() == text), None)
        if src_n is not None and origin is not None and text:
            # a scenario file written from the user's model: the same element line, by its tokens
            toks = text.split(";", 1)[0].split()
            orig = origin.read_bytes().decode("latin-1").splitlines()
            hit = next((k for k, l in enumerate(orig, 1) if l.split(";", 1)[0].split() == toks), None)
            source, src_n = (origin, hit) if hit else (source, src_n)
        if src_n:
            where = f"at {source.name}:{src_n}{section}"
        else:
            where = f"at line {n} of the run's copy {run.inp}{section}"
            mentions.append((where, f"at line {n} of the engine's copy of the model (removed with the run's "
                                    f"temporary folder){section}", str(run.inp)))
        first = first[: m.start()] + where + first[m.end():]
        if text and " ".join(text.split()) not in first:
            first += f": {text[:60]}"
    more = ""
    if len(errors) > 1:
        more = f" (and {len(errors) - 1} more engine error(s) in {run.rpt})"
        mentions.append((more, f" (and {len(errors) - 1} more engine error(s): correct this one and run again to see "
                               "the next)", str(run.rpt)))
    code = re.match(r"ERROR\s+(\d+)", first)
    cls = EngineInputError if code and 200 <= int(code.group(1)) < 400 else EngineError
    return cls(f"{(origin or source or run.inp).name}: SWMM failed: {first}{more}", run_files=mentions)


def run_copy(run: RunFiles, *, timeout_s: float | None = None, source: Path | None = None,
             origin: Path | None = None, stop_path: Path | None = None, progress_path: Path | None = None,
             progress_every_s: float = 1.0) -> None:
    """Run the engine on ``run.inp`` (already prepared) in a child process; raise EngineError on failure
    (``progress_path``, ``progress_every_s``: :func:`run_inp`)."""
    # the engine creates its [RDII] scratch file with mkstemp("swmmXXXXXX"), a path relative to the
    # current directory (not TMPDIR), and unlinks it only at the end of the run: cwd=work_dir keeps
    # it (and any left by a killed run) in the run's own folder; TMPDIR too, for anything else (_child)
    cmd = [sys.executable, "-I", str(_CHILD), str(run.inp), str(run.rpt), str(run.out), str(run.stats)]
    if stop_path is not None:
        cmd.append(str(stop_path))
    proc = _child(cmd, run, timeout_s, progress_path, progress_every_s)
    engine_errors = report_errors(run.rpt)
    if engine_errors:
        exc = _engine_error(run, engine_errors, source, origin)
        exc.rejected = True  # the engine refused the input (scenario_rejected tells ours from the user's)
        raise exc
    if proc.returncode == -getattr(signal, "SIGXFSZ", 25):
        raise EngineError(f"{run.inp.name}: SWMM stopped: a file of the run passed the largest size allowed "
                          f"({_STOP.get('max_file_bytes') or 0:,} bytes; service policy max_engine_file_bytes)")
    if proc.returncode != 0 or not (run.stats and run.stats.exists()):
        detail = " ".join(proc.stderr.decode(errors="replace").split())[-300:]
        exc = EngineError(f"{run.inp.name}: SWMM failed: {detail or f'exit code {proc.returncode}'}")
        exc.rejected = True  # it crashed on this input
        raise exc


#: Engine child processes running now (so a signal to the parent can stop them).
_LIVE: set[subprocess.Popen] = set()
_LIVE_LOCK = threading.Lock()


def terminate_children(grace_s: float = 2.0) -> int:
    """Stop every engine child process this process started and that still runs; the number stopped.

    SIGTERM first, SIGKILL after ``grace_s`` seconds. Called when the parent is interrupted
    (Ctrl-C, SIGTERM), so no SWMM run outlives the command that started it.
    """
    with _LIVE_LOCK:
        procs = [p for p in _LIVE if p.poll() is None]
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    return len(procs)


def _write_run_copy(inp: Path, text: str, source_dir: Path, wd: Path) -> None:
    """The run's copy of a model (:func:`prepare_inp_text`): writes redirected into ``wd``, and the files the
    engine opens ``r+b`` (``[FILES] USE`` RAINFALL, RUNOFF, HOTSTART) copied into ``wd`` so that nothing outside it
    is ever opened for writing."""
    from capacitysim.errors import DataFileError

    copies: list = []
    prepared = prepare_inp_text(text, source_dir, wd, copies)
    for source, copy in copies:
        try:
            shutil.copyfile(source, copy)
        except OSError as exc:
            raise DataFileError(f"{Path(source).name}: the model's [FILES] USE file cannot be read "
                                f"({exc.strerror or type(exc).__name__})") from None
    inp.write_bytes(prepared.encode("latin-1"))


def confinement_for(run: RunFiles, extra_write_dirs=()):
    """What the engine child may touch (:class:`~capacitysim.network.sandbox.Confinement`): write only in the
    run's folder (and ``extra_write_dirs``: the folder of its progress file); read the Python installation, the
    run's folder and exactly the files the run's copy names for reading
    (:func:`~capacitysim.network.inp_text.file_references`, absolute in the copy)."""
    from capacitysim.network.inp_text import file_references
    from capacitysim.network.sandbox import Confinement, default_read_paths

    wd = str(Path(run.work_dir).resolve())
    reads = [ref.name for ref in file_references(run.inp.read_bytes().decode("latin-1"))
             if ref.access in ("read", "read-write") and os.path.isabs(ref.name)]
    extra = tuple(str(Path(d).resolve()) for d in extra_write_dirs)
    return Confinement(write_dirs=(wd, *extra), read_paths=tuple(dict.fromkeys((*default_read_paths(), wd, *reads))))


#: Process-wide stop conditions of engine runs (set by a service job around its workflow): a file whose
#: appearance stops every engine child of this process (a dismissed job), and a monotonic deadline [s]; and the
#: folder where each engine child reports its progress (``<progress_dir>/<run>/progress.json``).
_STOP = {"file": None, "deadline": None, "why": "", "max_file_bytes": None, "progress_dir": None}
#: Environment variables of the engine child's progress (``_child.ENV_PROGRESS``, ``_child.ENV_PROGRESS_S``).
ENV_PROGRESS, ENV_PROGRESS_S = "CAPACITYSIM_ENGINE_PROGRESS", "CAPACITYSIM_ENGINE_PROGRESS_S"
#: The name of a run's progress file inside its own folder of ``progress_dir``.
PROGRESS_FILE = "progress.json"
#: Environment variable carrying the largest file an engine child may write [bytes] (``RLIMIT_FSIZE``).
ENV_MAX_FILE_BYTES = "CAPACITYSIM_ENGINE_MAX_FILE_BYTES"


@contextlib.contextmanager
def stop_runs_when(stop_file: str | os.PathLike | None = None, deadline_s: float | None = None, why: str = "",
                   max_file_bytes: int | None = None, progress_dir: str | os.PathLike | None = None):
    """Within the block, every engine child this process starts is killed within :data:`STOP_POLL_S` once
    ``stop_file`` exists (an :class:`EngineError` saying the text the file holds, e.g. ``dismissed by Alice``, or
    ``the job was dismissed``) or ``time.monotonic()`` passes ``deadline_s`` (an :class:`EngineError` saying
    ``why``), and may write no file larger than ``max_file_bytes`` (the operating system's ``RLIMIT_FSIZE``: the
    run is stopped when its results file would pass it). With ``progress_dir``, every run reports its progress
    (:func:`run_inp` ``progress_path``) to ``<progress_dir>/<stem>-<random>/progress.json``, a folder of its own
    made before the run and removed when the run ends, however it ends.

    A service job wraps its workflow in it: dismissing the job (which writes the stop file) or passing the
    longest-job limit ends its SWMM runs within seconds, wherever its worker runs (the job folder is shared).
    """
    old = dict(_STOP)
    _STOP.update(file=None if stop_file is None else str(stop_file), deadline=deadline_s, why=why,
                 max_file_bytes=max_file_bytes, progress_dir=None if progress_dir is None else str(progress_dir))
    try:
        yield
    finally:
        _STOP.clear()
        _STOP.update(old)


#: How often a running engine child is checked against :func:`stop_runs_when` [s].
STOP_POLL_S = 0.5


def _stop_reason() -> str | None:
    f, deadline = _STOP.get("file"), _STOP.get("deadline")
    if f and os.path.exists(f):
        try:
            said = " ".join(Path(f).read_text(encoding="utf-8", errors="replace").split())[:200]
        except OSError:
            said = ""
        return f"stopped: {said or 'the job was dismissed'}"
    if deadline is not None and time.monotonic() > deadline:
        return _STOP.get("why") or "stopped: the time limit was reached"
    return None


def _child(cmd, run: RunFiles, timeout_s, progress_path: Path | None = None, progress_every_s: float = 1.0):
    from capacitysim.network.sandbox import ENV_FILE

    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = "1"
    env["TMPDIR"] = str(run.work_dir)
    for k in (ENV_PROGRESS, ENV_PROGRESS_S):
        env.pop(k, None)  # progress only when asked for here
    reason = _stop_reason()
    if reason:
        raise EngineError(f"{run.inp.name}: SWMM not started: {reason}")
    own_folder = None  # a run folder of the job's progress_dir: removed when the run ends
    if progress_path is None and _STOP.get("progress_dir"):
        import secrets

        own_folder = Path(_STOP["progress_dir"]) / f"{run.inp.stem}-{secrets.token_hex(4)}"
        own_folder.mkdir(parents=True)
        progress_path = own_folder / PROGRESS_FILE
    if progress_path is not None:
        progress_path = Path(progress_path).resolve()
        progress_path.parent.mkdir(parents=True, exist_ok=True)
        env[ENV_PROGRESS] = str(progress_path)
        env[ENV_PROGRESS_S] = repr(float(progress_every_s))
    wall = Path(run.work_dir) / f"{run.inp.stem}.sandbox.json"
    wall.write_text(confinement_for(run, () if progress_path is None else (progress_path.parent,)).to_json(),
                    encoding="utf-8")
    env[ENV_FILE] = str(wall)
    if _STOP.get("max_file_bytes"):
        env[ENV_MAX_FILE_BYTES] = str(int(_STOP["max_file_bytes"]))
    try:
        return _watch(cmd, run, timeout_s, env)
    finally:
        if own_folder is not None:
            shutil.rmtree(own_folder, ignore_errors=True)


def _watch(cmd, run: RunFiles, timeout_s, env):
    """Start the engine child and wait for it, killing it past ``timeout_s`` or once :func:`_stop_reason` says so."""
    proc = subprocess.Popen(cmd, cwd=run.work_dir, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    with _LIVE_LOCK:
        _LIVE.add(proc)
    try:
        started = time.monotonic()
        while True:
            try:
                _, err = proc.communicate(timeout=STOP_POLL_S if timeout_s is None
                                          else max(0.01, min(STOP_POLL_S, timeout_s - (time.monotonic() - started))))
                break
            except subprocess.TimeoutExpired:
                if timeout_s is not None and time.monotonic() - started >= timeout_s:
                    proc.kill()
                    proc.communicate()
                    raise EngineError(f"{run.inp.name}: SWMM did not finish within {timeout_s:g} s") from None
                reason = _stop_reason()
                if reason:
                    proc.kill()
                    proc.communicate()
                    raise EngineError(f"{run.inp.name}: SWMM {reason}") from None
    finally:
        with _LIVE_LOCK:
            _LIVE.discard(proc)
        if proc.poll() is None:  # interrupted while waiting: never leave the engine running
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(cmd, proc.returncode, None, err)


def probe_inp(inp_path: str | os.PathLike, *, timeout_s: float | None = 300.0) -> dict:
    """Open a model in the engine (it reads and checks the whole input) and return its network.

    The engine is the judge of validity: a file SWMM opens is a model capacitysim runs. Runs in a
    child process in a temporary folder (removed after), on a copy prepared by
    :func:`prepare_inp_text`.

    Returns
    -------
    dict
        ``flow_units``; ``nodes`` {``id``, ``type``}; ``links`` {``id``, ``type``, ``from``,
        ``to``}; ``n_subcatchments``, ``n_gauges``; ``start``, ``end``, ``report_start`` (ISO).

    Raises
    ------
    EngineInputError
        The engine rejected the file: its error code, message and the line of the user's file.
    """
    import tempfile

    from capacitysim.errors import DataFileError

    src = Path(inp_path)
    if not src.is_file():
        raise DataFileError(f"{src}: SWMM input file not found")
    with tempfile.TemporaryDirectory(prefix="capacitysim-probe-") as tmp:
        wd = Path(tmp)
        inp = wd / "probe.inp"
        _write_run_copy(inp, src.read_bytes().decode("latin-1"), src.resolve().parent, wd)
        run = RunFiles(inp, wd / "probe.rpt", wd / "probe.out", wd / "probe.json")
        cmd = [sys.executable, "-I", str(_CHILD), "--probe", str(run.inp), str(run.rpt), str(run.out), str(run.stats)]
        proc = _child(cmd, run, timeout_s)
        errors = report_errors(run.rpt)
        if errors:
            raise _engine_error(run, errors, src, None)
        if proc.returncode != 0 or not run.stats.exists():
            detail = " ".join(proc.stderr.decode(errors="replace").split())[-300:]
            raise EngineError(f"{src.name}: SWMM could not open the model: {detail or f'exit code {proc.returncode}'}")
        return _ids_to_latin1(json.loads(run.stats.read_text(encoding="utf-8")))


def report_errors(rpt: Path) -> list[str]:
    """The engine's ``ERROR nnn:`` lines in a report (each joined with its continuation line)."""
    if not rpt.exists():
        return []
    lines = rpt.read_text(encoding="utf-8", errors="replace").splitlines()
    errors = []
    for i, line in enumerate(lines):
        s = line.strip()
        if s.startswith("ERROR"):
            nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if nxt and not nxt.startswith(("ERROR", "WARNING", "*")):
                s = f"{s} {nxt}"
            errors.append(" ".join(s.split()))
    return errors


# --------------------------------------------------------------------------- reading results


def engine_name(name: str) -> str:
    """An id as the engine returned it -> the same bytes as a latin-1 string (as the model text is read).

    swmm-toolkit decodes the engine's C strings as UTF-8 (undecodable bytes as surrogates); the
    model text is read byte for byte as latin-1 (:func:`capacitysim.network.model.read_model_text`).
    Re-encoding gives one spelling for both, whatever the file's encoding.
    """
    return name.encode("utf-8", "surrogateescape").decode("latin-1")


def _ids_to_latin1(doc: dict) -> dict:
    for part, keys in (("nodes", ("id",)), ("links", ("id", "from", "to"))):
        for k in keys:
            if part in doc and k in doc[part]:
                doc[part][k] = [engine_name(v) for v in doc[part][k]]
    for part in ("pump_stats", "storage_stats"):
        if part in doc:
            doc[part] = {engine_name(k): v for k, v in doc[part].items()}
    return doc


def _load_stats(run: RunFiles) -> dict:
    path = run.stats or run.out.with_suffix(".stats.json")
    try:
        return _ids_to_latin1(json.loads(Path(path).read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise EngineError(f"{path}: statistics of the run are missing (was the run finished?)") from None


def parse_outfall_volumes(rpt: Path) -> dict[str, float]:
    """Outfall Total Volume from the report's Outfall Loading Summary [10^6 gal or 10^6 L, as printed]."""
    text = Path(rpt).read_text(encoding="utf-8", errors="replace").splitlines()
    vols: dict[str, float] = {}
    try:
        start = next(i for i, l in enumerate(text) if l.strip() == "Outfall Loading Summary")
    except StopIteration:
        return vols
    dashes = 0
    for line in text[start + 1:]:
        s = line.strip()
        if s.startswith("---"):
            dashes += 1
            if dashes == 3:
                break
            continue
        if dashes == 2 and s:
            toks = s.split()
            try:
                vols[toks[0]] = float(toks[4])
            except (IndexError, ValueError):
                continue
    return vols


def xsection_shapes(inp: Path) -> dict[str, str]:
    """Link id (upper case) -> cross-section shape (upper case) from a run's ``[XSECTIONS]`` (empty if unreadable)."""
    out: dict[str, str] = {}
    try:
        text = Path(inp).read_bytes().decode("latin-1")
    except OSError:
        return out
    for section, line in section_lines(text):
        if section == "XSECTIONS":
            toks = [t.strip('"') for t in quoted_tokens(line)]
            if len(toks) >= 2:
                out[toks[0].upper()] = toks[1].upper()
    return out


def read_results(run: RunFiles) -> xr.Dataset:
    """Per-node, per-link and per-outfall statistics of a finished run, in cfs, ft, ft^3 and hr.

    Returns
    -------
    xarray.Dataset
        Dimensions ``node``, ``link``, ``outfall``. Node variables: ``node_type``,
        ``invert_elev_ft``, ``rim_depth_ft`` (invert to rim), ``crown_depth_ft`` (invert to the
        highest crown of the conduits it joins), ``max_depth_ft``, ``max_hgl_ft`` (invert + max
        depth), ``freeboard_ft`` (rim depth - max depth), ``max_surcharge_ft`` (max height above
        crown, 0 when never surcharged), ``surcharge_hr``, ``flooding_volume_cf``, ``flooding_hr``,
        ``max_inflow_cfs``. Link variables: ``link_type``, ``from_node``, ``to_node``,
        ``length_ft`` (when known), ``peak_flow_cfs`` (max \\|q\\|), ``full_flow_cfs``,
        ``max_q_over_qfull``, ``full_depth_ft``, ``max_depth_ft``, ``max_d_over_d``. Outfall
        variable: ``volume_cf``. Attributes: ``flow_units`` (the model's),
        ``runoff_continuity_error_pct``, ``flow_routing_continuity_error_pct``.
    """
    st = _load_stats(run)
    f = unit_factors(st["flow_units"])
    N, NS, L, LS = st["nodes"], st["node_stats"], st["links"], st["link_stats"]
    n_ids, l_ids = N["id"], L["id"]
    invert = np.asarray(N["invert_elev"], float) * f["length"]
    rim = np.asarray(N["full_depth"], float) * f["length"]
    max_depth = np.asarray(NS["max_depth"], float) * f["length"]
    full_flow = np.array([np.nan if v is None else v for v in L["full_flow"]], float) * f["flow"]
    full_depth = np.array([np.nan if v is None else v for v in L["full_depth"]], float) * f["length"]
    peak = np.abs(np.asarray(LS["max_flow"], float)) * f["flow"]
    l_max_depth = np.asarray(LS["max_depth"], float) * f["length"]
    is_conduit = np.array([t == "CONDUIT" for t in L["type"]], dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        q_ratio = np.where(is_conduit & (full_flow > 0), peak / full_flow, np.nan)
        d_ratio = np.where(is_conduit & (full_depth > 0), l_max_depth / full_depth, np.nan)

    # crown: highest conduit crown above each node's invert (SWMM's node crown elevation)
    index = {n: i for i, n in enumerate(n_ids)}
    crown = np.zeros(len(n_ids))
    for k in np.flatnonzero(is_conduit):
        for node, off in ((L["from"][k], L["offset1"][k]), (L["to"][k], L["offset2"][k])):
            i = index[node]
            crown[i] = max(crown[i], off * f["length"] + full_depth[k])
    # the engine stores offsets as depths above the node invert, whatever LINK_OFFSETS says
    surch = np.where(crown > 0, np.maximum(max_depth - crown, 0.0), 0.0)

    outfalls = [n for n, t in zip(n_ids, N["type"]) if t == "OUTFALL"]
    if "total_inflow_volume" in NS:  # exact (engine mass balance) where the report prints 3 decimals of 10^6 gal
        tiv = dict(zip(n_ids, NS["total_inflow_volume"]))
        outfall_cf = np.array([tiv[o] for o in outfalls], float) * f["volume"]
    else:
        vols = parse_outfall_volumes(run.rpt)
        outfall_cf = np.array([vols.get(o, np.nan) for o in outfalls], float) * f["report_volume"]
    shapes = xsection_shapes(run.inp)
    pump_off = np.full(len(l_ids), np.nan)
    pump_max = np.full(len(l_ids), np.nan)
    for k, lid in enumerate(l_ids):
        ps = st.get("pump_stats", {}).get(lid)
        if ps:
            periods = ps["total_periods"] or 0
            pump_off[k] = 100.0 * (ps["off_curve_low"] + ps["off_curve_high"]) / periods if periods else 0.0
            pump_max[k] = ps["max_flow"] * f["flow"]
    rt = st.get("routing_totals", {})
    ro = st.get("runoff_totals", {})
    dates = st.get("dates", {})
    # routing totals are volumes in the model's units (ft^3 or m^3, measured: a CMS model's totals
    # are m^3); runoff totals are depths over the catchment (in or mm)
    totals = {f"routing_{k}_cf": float(v) * f["volume"] for k, v in rt.items() if k != "pctError"}
    rain_in = ro.get("rainfall")
    if rain_in is not None and st["flow_units"] not in US_FLOW_UNITS:
        rain_in = rain_in / MILLIMETERS_PER_INCH
    ds = xr.Dataset(
        {
            "node_type": ("node", np.asarray(N["type"], dtype=object)),
            "invert_elev_ft": ("node", invert),
            "rim_depth_ft": ("node", rim),
            "crown_depth_ft": ("node", crown),
            "max_depth_ft": ("node", max_depth),
            "max_hgl_ft": ("node", invert + max_depth),
            "freeboard_ft": ("node", rim - max_depth),
            "max_surcharge_ft": ("node", surch),
            "surcharge_hr": ("node", np.asarray(NS["time_surcharged"], float)),
            "flooding_volume_cf": ("node", np.asarray(NS["vol_flooded"], float) * f["volume"]),
            "flooding_hr": ("node", np.asarray(NS["time_flooded"], float)),
            "max_inflow_cfs": ("node", np.asarray(NS["max_inflow"], float) * f["flow"]),
            "surcharge_limit_ft": ("node", np.asarray(N.get("surcharge_depth", [0.0] * len(n_ids)), float) * f["length"]),
            "lateral_volume_cf": ("node", np.asarray(NS.get("total_lateral_volume", [np.nan] * len(n_ids)), float) * f["volume"]),
            "link_type": ("link", np.asarray(L["type"], dtype=object)),
            "from_node": ("link", np.asarray(L["from"], dtype=object)),
            "to_node": ("link", np.asarray(L["to"], dtype=object)),
            "peak_flow_cfs": ("link", peak),
            "full_flow_cfs": ("link", full_flow),
            "max_q_over_qfull": ("link", q_ratio),
            "full_depth_ft": ("link", full_depth),
            "link_max_depth_ft": ("link", l_max_depth),
            "max_d_over_d": ("link", d_ratio),
            "link_shape": ("link", np.asarray([shapes.get(str(l).upper(), "") for l in l_ids], dtype=object)),
            "pump_off_curve_pct": ("link", pump_off),
            "pump_max_flow_cfs": ("link", pump_max),
            "volume_cf": ("outfall", outfall_cf),
        },
        coords={"node": np.asarray(n_ids, dtype=object), "link": np.asarray(l_ids, dtype=object),
                "outfall": np.asarray(outfalls, dtype=object)},
        attrs={
            "flow_units": st["flow_units"],
            "runoff_continuity_error_pct": float(st["runoff_continuity_error_pct"]),
            "flow_routing_continuity_error_pct": float(st["flow_routing_continuity_error_pct"]),
            "units": "flow cfs, depth/elevation ft, volume ft^3, time hr (converted from the model's FLOW_UNITS)",
            "rainfall_simulated_in": float("nan") if rain_in is None or not st.get("n_subcatchments") else float(rain_in),
            "n_subcatchments": int(st.get("n_subcatchments") or 0),
            "routing": int(bool(st.get("routing", True))),
            "simulation_start": dates.get("start_date", ""),
            "simulation_end": dates.get("end_date", ""),
            "report_start": dates.get("report_date", ""),
            **totals,
        },
    )
    return ds


# --------------------------------------------------------------------------- time series

_NODE_VARS = {"depth": ("INVERT_DEPTH", "length", "ft"), "head": ("HYDRAULIC_HEAD", "length", "ft"),
              "hgl": ("HYDRAULIC_HEAD", "length", "ft"), "volume": ("PONDED_VOLUME", "volume", "ft^3"),
              "lateral_inflow": ("LATERAL_INFLOW", "flow", "cfs"), "total_inflow": ("TOTAL_INFLOW", "flow", "cfs"),
              "flooding": ("FLOODING_LOSSES", "flow", "cfs")}
_LINK_VARS = {"flow": ("FLOW_RATE", "flow", "cfs"), "depth": ("FLOW_DEPTH", "length", "ft"),
              "velocity": ("FLOW_VELOCITY", "length", "ft/s"), "volume": ("FLOW_VOLUME", "volume", "ft^3"),
              "capacity": ("CAPACITY", None, "fraction full")}
_SYSTEM_VARS = {"rainfall": ("RAINFALL", None, "model rainfall units"), "dwf": ("DRY_WEATHER_INFLOW", "flow", "cfs"),
                "rdii": ("RDII_INFLOW", "flow", "cfs"), "outfall_flows": ("OUTFALL_FLOWS", "flow", "cfs"),
                "total_lateral_inflow": ("TOTAL_LATERAL_INFLOW", "flow", "cfs"), "runoff": ("RUNOFF_FLOW", "flow", "cfs"),
                "volume_stored": ("VOLUME_STORED", "volume", "ft3")}


def out_element_names(out: Path) -> dict[str, list[str]]:
    """Names of the elements a binary ``.out`` file holds, read from its bytes (latin-1, any encoding).

    SWMM 5 output format [1]_ (Appendix, binary output file): seven 4-byte integers (magic number,
    version, flow units, numbers of subcatchments, nodes, links, pollutants), then each name as a
    4-byte length and its bytes. The toolkit's reader decodes names as UTF-8 and fails on others.
    """
    import struct

    with open(out, "rb") as fh:
        head = fh.read(28)
        _, _, _, n_sub, n_node, n_link, n_poll = struct.unpack("<7i", head)
        names: dict[str, list[str]] = {"subcatch": [], "node": [], "link": [], "pollutant": []}
        for kind, n in (("subcatch", n_sub), ("node", n_node), ("link", n_link), ("pollutant", n_poll)):
            for _ in range(n):
                (length,) = struct.unpack("<i", fh.read(4))
                names[kind].append(fh.read(length).decode("latin-1"))
    return names


def _series(run: RunFiles, kind: str, elem_id: str | None, var: str) -> xr.DataArray:
    from swmm.toolkit import output as O
    from swmm.toolkit import shared_enum as E

    table = {"node": _NODE_VARS, "link": _LINK_VARS, "system": _SYSTEM_VARS}[kind]
    if var not in table:
        raise InputError(f"{kind} series variable must be one of {', '.join(table)}; got {var!r}")
    attr_name, dim, unit = table[var]
    h = O.init()
    O.open(h, str(run.out))
    try:
        units = O.get_units(h)
        flow_units = E.FlowUnits(units[1]).name
        n_periods = O.get_times(h, E.Time.NUM_PERIODS)
        step_s = O.get_times(h, E.Time.REPORT_STEP)
        start = O.get_start_date(h)
        if kind == "system":
            vals = O.get_system_series(h, getattr(E.SystemAttribute, attr_name), 0, n_periods)
        else:
            etype = E.ElementType.NODE if kind == "node" else E.ElementType.LINK
            names = {n: i for i, n in enumerate(out_element_names(run.out)[kind])}
            if elem_id not in names:
                raise InputError(f"{kind} {elem_id!r} is not in the model's results (its [REPORT] section does not save it)")
            idx = names[elem_id]
            getter = O.get_node_series if kind == "node" else O.get_link_series
            attr = (E.NodeAttribute if kind == "node" else E.LinkAttribute)[attr_name]
            vals = getter(h, idx, attr, 0, n_periods)
    finally:
        O.close(h)
    factor = unit_factors(flow_units)[dim] if dim else 1.0
    vals = np.asarray(vals, float) * factor
    # the .out holds the end of each reporting period, starting one step after the start date
    t0 = _dt.datetime(1899, 12, 30) + _dt.timedelta(days=start)
    times = np.array([np.datetime64(t0 + _dt.timedelta(seconds=step_s * (i + 1)), "s") for i in range(len(vals))])
    elapsed_hr = (np.arange(len(vals)) + 1) * step_s / SECONDS_PER_HOUR + _report_offset_hr(run, t0)
    name = f"{var}_{unit.replace('^', '').replace('/', '_per_').replace(' ', '_')}"
    return xr.DataArray(vals, dims="time", coords={"time": times, "elapsed_hr": ("time", elapsed_hr)},
                        name=name, attrs={"units": unit, "element": elem_id or "system", "kind": kind,
                                          "report_step_s": step_s, "model_flow_units": flow_units})


def _report_offset_hr(run: RunFiles, out_start: _dt.datetime) -> float:
    """Hours from the simulation start (as the engine read it, in the run's statistics) to the .out's start date.

    The .out starts one reporting step before REPORT_START, so ``elapsed_hr`` counts from the
    simulation start whatever the reporting period (0 when the statistics cannot be read).
    """
    try:
        start = _dt.datetime.fromisoformat(_load_stats(run)["dates"]["start_date"])
    except (EngineError, KeyError, ValueError):  # a run without its statistics: count from the .out's own start
        return 0.0
    return round((out_start - start).total_seconds()) / SECONDS_PER_HOUR


def node_series(run: RunFiles, node_id: str, var: str = "total_inflow") -> xr.DataArray:
    """A node's time series at the reporting step (``elapsed_hr``: hours from the simulation start): ``total_inflow``/``lateral_inflow``/``flooding`` [cfs],
    ``depth``/``head`` (``hgl``) [ft], ``volume`` [ft^3]."""
    return _series(run, "node", node_id, var)


def link_series(run: RunFiles, link_id: str, var: str = "flow") -> xr.DataArray:
    """A link's time series at the reporting step: ``flow`` [cfs], ``depth`` [ft], ``velocity`` [ft/s],
    ``volume`` [ft^3], ``capacity`` [fraction full]."""
    return _series(run, "link", link_id, var)


def system_series(run: RunFiles, var: str = "outfall_flows") -> xr.DataArray:
    """A system time series: ``rainfall``, ``dwf``, ``rdii``, ``runoff``, ``total_lateral_inflow``, ``outfall_flows``."""
    return _series(run, "system", None, var)
