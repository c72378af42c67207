"""What a dask worker runs for a job: the job's process (:mod:`capacitysim.processes`), and nothing else.

A job's inputs go through the process's own validator (``source="service"``, the staged files in place of their
names), its ``run``, its document and its report: what the CLI command runs, so a job's results are the document
the CLI prints with ``--json``: the same keys and the same verdict. A job never writes outside its folder; the report is
written there and returned with the document.

Progress goes to ``progress-<attempt>.json`` in the job folder (written atomically): the server polls it
(the worker has no other channel back while it runs). A remote ``--scheduler`` cluster therefore needs the
data folder on a file system its workers share with the server, at the same path.

Every process reports named stages (:data:`STAGES`): ``started``, ``inputs-checked`` once the request's
files are read and its values parsed, the workflow's own steps, ``report-written``. The file keeps the
history of the stages reached (``stages``: name, progress, message, UTC time) after the job ends, so the
job page shows how far a job went, and a job that failed shows the last stage it reached and ``failed``.
A headroom or sweep job also reports each cell or scenario between its stages (throttled). The workflows
are called as the CLI calls them: a capacity demonstration's before and after SWMM runs are one call of
:func:`capacitysim.workflows.demonstration.run_demonstration` (run side by side, with no progress callback),
so they are one stage (``swmm-runs``, from 20 % to 80 %), not two.

SWMM progress (issue 28, item 5): every SWMM run of a job reports its simulated time while it runs, each run to
its own file ``engine-progress/<run>/progress.json`` in the job folder (:func:`capacitysim.network.engine.stop_runs_when`
``progress_dir``; removed when the run ends). A watcher thread of the job's task (:class:`EngineWatch`) reads
them (:func:`engine_progress`) about once a second and reports them through :meth:`Progress.engine`: the message
says ``SWMM: simulated 12.5 of 30.0 h (42 %), about 20 s left`` (one clause per running run) and, after a stage
of :data:`SWMM_STAGES` (a capacity demonstration's ``swmm-runs``), the percentage moves towards the next stage by
the runs' simulated fraction (a headroom search's or a sweep's steps move theirs). The progress file also holds the runs
(``engine``: the list :func:`engine_progress` returns) while they run.

Committed flows (issue 24, "no capacity promised twice"): the service is the shared record, so a
``capacity-demonstration`` job on the current registered model of a basin of the service's bank, and a
``spdes-check`` job of a plant a basin of the bank is registered as draining to, include the bank's
commitments by themselves (:func:`capacity_committed`, :func:`spdes_committed`), as ``capacitysim capacity
--committed BANK`` and ``capacitysim spdes check --committed BANK`` do: the same functions
(:mod:`capacitysim.workflows.committed`), the same result document. There is no input to leave them out; the
input ``application`` names the applicant's own application, left out (``--application``). A job on a model
or plant the bank has not registered runs without them (``committed: null``, as the CLI without
``--committed``) and its ``inputs-checked`` stage says why. The commitments are read when the job runs.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import threading
import time
import traceback
from pathlib import Path

from capacitysim.errors import CapacitysimError, InputError, report_of
from capacitysim.files import atomic_write_text
from capacitysim.processes import get as get_process
from capacitysim.processes import registry
from capacitysim.processes.register import REGISTER_STORE  # noqa: F401 - where GET /bank/register reads

#: The stages each process reports, in order: (name, progress [%]) (each process's ``stages``). ``failed`` is added
#: after the last stage reached when the workflow raises.
STAGES = {pid: p.stages for pid, p in registry().items()}
#: Shortest time between two progress writes that are not stages [s] (a headroom cell, a sweep scenario).
PROGRESS_THROTTLE_S = 0.5
#: The folder of a job where its SWMM runs report their progress, one sub-folder per run.
ENGINE_PROGRESS_DIR = "engine-progress"
#: How often the job's task reads its SWMM runs' progress [s] (each run writes at most once a second).
ENGINE_POLL_S = 1.0
#: The stages that begin a SWMM phase: runs side by side whose simulated fraction is the fraction of the span done
#: (a capacity demonstration's before and after runs). Elsewhere SWMM runs are a search's or a sweep's many short
#: runs, whose steps (cells, scenarios) move the percentage; their runs are only named in the message.
SWMM_STAGES = frozenset({"swmm-runs"})


def progress_file(job_dir, attempt: int) -> Path:
    return Path(job_dir) / f"progress-{attempt}.json"


def read_progress(job_dir, attempt: int) -> dict | None:
    """The progress file of a job's attempt (``progress``, ``message``, ``stages``), or None when there is none."""
    try:
        info = json.loads(progress_file(job_dir, attempt).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def engine_progress_dir(job_dir) -> Path:
    """The folder where a job's SWMM runs report their progress (``<job>/engine-progress``)."""
    return Path(job_dir) / ENGINE_PROGRESS_DIR


def _hours_text(days: float, total_days: float) -> str:
    return f"{days:.1f} of {total_days:.1f} days" if total_days > 4 else f"{days * 24:.1f} of {total_days * 24:.1f} h"


def _left_text(eta_s) -> str:
    if eta_s is None:
        return "time left not yet known"
    if eta_s < 90:
        return f"about {eta_s:.0f} s left"
    if eta_s < 5400:
        return f"about {eta_s / 60:.0f} min left"
    return f"about {eta_s / 3600:.1f} h left"


def engine_progress(job_dir) -> list[dict]:
    """The SWMM runs of a job running now, as their engine children last reported them (for the job page).

    Parameters
    ----------
    job_dir : path
        The job's folder (``Runner.job_dir(job_id)``).

    Returns
    -------
    list of dict
        One per run, sorted by ``run`` then ``id``; empty when no SWMM run of the job runs (between runs, after the
        job). Keys: ``id`` (the run's folder name, unique), ``run`` (the scenario's stem: ``before``, ``after``,
        ``scenario``), ``elapsed_days`` and ``total_days`` (simulated [days]), ``fraction`` (elapsed / total, in
        [0, 1]), ``start`` and ``now`` (ISO simulated date-times), ``wall_s`` (wall time of the run so far [s]),
        ``eta_s`` (estimated wall time left [s], None before the first routing step), ``done`` (the run reached
        its end; the file is removed moments later) and ``text`` (``simulated 12.5 of 30.0 h (42 %), about 20 s
        left``). A file being replaced or removed while read is skipped.
    """
    folder = engine_progress_dir(job_dir)
    runs = []
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    for d in entries:
        try:
            info = json.loads((d / "progress.json").read_text(encoding="utf-8"))
            elapsed, total = float(info["elapsed_days"]), float(info["total_days"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        fraction = max(0.0, min(1.0, elapsed / total)) if total > 0 else 0.0
        eta = info.get("eta_s")
        runs.append({"id": d.name, "run": str(info.get("run", d.name)), "elapsed_days": elapsed, "total_days": total,
                     "fraction": fraction, "start": info.get("start"), "now": info.get("now"),
                     "wall_s": info.get("wall_s"), "eta_s": None if eta is None else float(eta),
                     "done": bool(info.get("done")),
                     "text": f"simulated {_hours_text(elapsed, total)} ({100 * fraction:.0f} %), "
                             f"{_left_text(None if eta is None else float(eta))}"})
    return sorted(runs, key=lambda r: (r["run"], r["id"]))


def engine_message(runs: list[dict]) -> str:
    """The SWMM runs in words: ``SWMM: simulated ... left`` for one run, ``SWMM before: ...; SWMM after: ...``
    for several."""
    if len(runs) == 1:
        return f"SWMM: {runs[0]['text']}"
    return "; ".join(f"SWMM {r['run']}: {r['text']}" for r in runs)


class Progress:
    """The progress of one job attempt, written to its progress file (atomically).

    ``progress(pct, message)`` reports a step (throttled: at most one write per
    :data:`PROGRESS_THROTTLE_S`); ``progress.stage(name, message)`` reports a stage of :data:`STAGES`
    (always written, and kept in the file's ``stages`` history); ``progress.engine(runs)`` reports the SWMM
    runs running (from the job's watcher thread: the methods hold a lock). The percentage shown never goes
    back and stays below 100 (the server sets 100 when the job ends successful).
    """

    def __init__(self, job_dir, attempt: int, process_id: str):
        self.path = progress_file(job_dir, attempt)
        self.levels = dict(STAGES[process_id])
        self.order = [n for n, _ in STAGES[process_id]]
        #: Text the service adds to a stage's message (the commitments a job includes, at ``inputs-checked``).
        self.notes: dict[str, str] = {}
        self.stages: list[dict] = []
        self.pct = 0
        self.message = ""
        self._last = 0.0
        self._lock = threading.RLock()
        self._step_message = None  # the workflow's last step since the last stage (None: no step)
        self._runs: list[dict] = []  # the SWMM runs shown (Progress.engine)

    def __call__(self, pct: float, message: str = "", force: bool = False) -> None:
        with self._lock:
            now = time.monotonic()
            if not force and now - self._last < PROGRESS_THROTTLE_S:
                return
            self._last = now
            self.pct = max(self.pct, max(0, min(99, int(pct))))
            self.message = message
            self._write()

    def stage(self, name: str, message: str = "") -> None:
        """Record reaching stage ``name`` (its progress from :data:`STAGES`; ``failed`` keeps the last one)."""
        with self._lock:
            pct = self.pct if name == "failed" else self.levels[name]
            self.pct = max(self.pct, pct)
            self.message = (message or name.replace("-", " ")) + (f"; {self.notes[name]}" if name in self.notes else "")
            self.stages.append({"stage": name, "progress": self.pct, "message": self.message[:500],
                                "at": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")})
            self._last = time.monotonic()
            self._step_message = None
            self._runs = []
            self._write()

    def engine(self, runs: list[dict]) -> None:
        """Show the SWMM runs running now (:func:`engine_progress`; nothing when there are none).

        The message becomes :func:`engine_message` (after the workflow's last step message, when it reported
        steps since the last stage). After a stage of :data:`SWMM_STAGES` the percentage moves towards the next
        stage by the runs' simulated fraction (their elapsed days over their total days), one below the next
        stage at most; elsewhere (a headroom search, a sweep: their steps move it) the percentage stays.
        """
        runs = [r for r in runs if not r.get("done")]
        if not runs:
            return
        with self._lock:
            text = engine_message(runs)
            reached = [s["stage"] for s in self.stages if s["stage"] in self.levels]
            start = reached[-1] if reached else self.order[0]
            if self._step_message is not None:
                self.message = f"{self._step_message}; {text}" if self._step_message else text
            else:
                i = self.order.index(start)
                if start in SWMM_STAGES and i + 1 < len(self.order):
                    lo, hi = self.levels[start], self.levels[self.order[i + 1]]
                    fraction = sum(r["elapsed_days"] for r in runs) / max(sum(r["total_days"] for r in runs), 1e-12)
                    pct = lo + (hi - lo) * max(0.0, min(1.0, fraction))
                    self.pct = max(self.pct, min(99, hi - 1, int(pct)))
                self.message = text
            self._runs = runs
            self._last = time.monotonic()
            self._write()

    def span(self, start: str, end: str):
        """A step reporter mapping a fraction done in [0, 1] to the progress between stages ``start`` and ``end``."""
        lo, hi = self.levels[start], self.levels[end]

        def report(fraction: float, message: str = "") -> None:
            self(lo + (hi - lo) * max(0.0, min(1.0, fraction)), message)

        return report

    def step(self, done: int, total: int, message: str = "", **counts) -> None:
        """A step of the workflow between the last stage reached and the next (a headroom cell, a sweep scenario)."""
        with self._lock:
            self._step_message = message
            self._runs = []
            reached = [s["stage"] for s in self.stages if s["stage"] in self.levels]
            start = reached[-1] if reached else self.order[0]
            nxt = self.order[min(self.order.index(start) + 1, len(self.order) - 1)]
            self.span(start, nxt)(done / max(total, 1), message)

    def _write(self) -> None:
        atomic_write_text(self.path, json.dumps({"status": "running", "progress": self.pct, "message": self.message,
                                                 "pid": os.getpid(), "stages": self.stages, "engine": self._runs}))


class EngineWatch:
    """A thread of the job's task showing its SWMM runs' progress (:func:`engine_progress`) through
    :meth:`Progress.engine` every :data:`ENGINE_POLL_S` seconds, from ``start()`` to ``stop()``."""

    def __init__(self, progress: Progress, job_dir, every_s: float = ENGINE_POLL_S):
        self.progress, self.job_dir, self.every_s = progress, Path(job_dir), every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="capacitysim-engine-progress", daemon=True)

    def start(self) -> "EngineWatch":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            try:
                self.progress.engine(engine_progress(self.job_dir))
            except Exception:  # noqa: BLE001 - progress is never worth a failed job (a full disk: the next look)
                pass


def stage_inputs(process_id: str, inputs: dict, files: dict, work: Path) -> dict:
    """The job's input files copied into ``<work>/input/`` (its own folder, the only place a run reads from): the
    files uploaded with the model or sweep file under their uploaded names, the model as
    :func:`~capacitysim.service.processes.confined_model` rewrites it (it reads only those names; checked again
    here, so a job never depends on the check at submission alone); an uploaded sweep file (a bundled one names
    the package's files). Returns ``files`` with the staged paths."""
    import shutil

    from capacitysim.files import atomic_write_bytes
    from capacitysim.service.processes import COMPANIONS, check_sweep_files, confined_model

    key = COMPANIONS.get(process_id)
    if key is None:
        return files
    folder = work / "input"
    folder.mkdir(parents=True, exist_ok=True)
    staged = dict(files)
    names: dict[str, Path] = {}
    for k, v in files.items():
        if k.startswith(f"{key}["):
            dst = folder / Path(v).name
            shutil.copyfile(v, dst)
            names[dst.name] = dst
            staged[k] = str(dst)
    for name, path in list(names.items()):
        if path.suffix.lower() == ".inp":
            text, _ = confined_model(path, set(names), f"inputs.{key} ({name})")
            atomic_write_bytes(path, text.encode("latin-1"))
    if "model" in files:
        text, _ = confined_model(Path(files["model"]), set(names), "inputs.model")
        dst = folder / Path(files["model"]).name
        if dst.name in names:
            dst = folder / f"model-{dst.name}"
        atomic_write_bytes(dst, text.encode("latin-1"))
        staged["model"] = str(dst)
    if "sweep" in files and str(inputs.get("sweep", "")).startswith("upload:"):  # a bundled sweep is the package's own
        dst = folder / Path(files["sweep"]).name
        shutil.copyfile(files["sweep"], dst)
        check_sweep_files(dst, names)
        staged["sweep"] = str(dst)
    return staged


def _current_models(bank) -> list[dict] | None:
    """Every registered model version of the service's bank (:meth:`capacitysim.bank.Ledger.models`), or None when
    the service has no bank."""
    from capacitysim.bank import Ledger

    if bank is None or not Path(bank).is_file():
        return None
    with Ledger(bank) as lg:
        return lg.models()


def _flows_note(block: dict) -> str:
    return (f"committed: {len(block['flows'])} flow(s) of the bank, {block['total_gpd']:,.0f} gpd average "
            f"(basins {', '.join(block.get('basins') or []) or '-'}; bank head {str(block['bank_head'])[:12]}..., as of "
            f"{block['as_of']})" + (f"; {block['excluded']} left out (inputs.application)" if block.get("excluded") else ""))


def _ignored(application) -> str:
    return f"; inputs.application {application!r} has nothing to leave out" if application else ""


def capacity_committed(bank, model, application: str | None = None) -> tuple[dict | None, str]:
    """The commitments a capacity job includes by itself, and a sentence saying which or why none.

    When ``model`` (the file the job runs) is the current registered model of a basin of the service's bank
    (same SHA-256), the commitments of every basin registered with it:
    :func:`capacitysim.workflows.committed.capacity_commitments` (``capacitysim capacity --committed BANK
    --application APP``). Otherwise ``(None, why)``: the result then says ``committed: null``.
    """
    from capacitysim.workflows.committed import capacity_commitments, model_sha256

    models = _current_models(bank)
    if models is None:
        return None, "committed: null (the service has no credit bank)" + _ignored(application)
    sha = model_sha256(model)
    current = [m for m in models if m["current"]]
    if any(m["sha256"] == sha for m in current):
        block = capacity_commitments(bank, model, application=application)
        return block, _flows_note(block)
    older = [m for m in models if m["sha256"] == sha]
    if older:
        m = older[-1]
        newest = next((c for c in current if c["basin"] == m["basin"]), None)
        why = (f"it is version {m['version']} of basin {m['basin']}'s model of record, superseded by version "
               f"{newest['version'] if newest else '?'}: a demonstration cited for a withdrawal runs the current one")
    else:
        names = "; ".join(f"basin {c['basin']}: {Path(c['path']).name} (SHA-256 {c['sha256'][:12]}..., version "
                          f"{c['version']})" for c in current) or "none"
        why = f"it is not the registered model of any basin of the service's bank (registered: {names})"
    return None, f"committed: null: the model {Path(model).name} (SHA-256 {sha[:12]}...) {why}" + _ignored(application)


def spdes_committed(bank, submittal, plant, application: str | None = None) -> tuple[dict | None, str]:
    """The commitments a SPDES check job includes by itself, and a sentence saying which or why none.

    When a basin of the service's bank is registered (its current model) as draining to the plant, by its SPDES
    permit number or name (:func:`capacitysim.workflows.committed.plant_keys`), the commitments of every such
    basin: :func:`capacitysim.workflows.committed.spdes_commitments` (``capacitysim spdes check --committed BANK
    --application APP``). Otherwise ``(None, why)``: the result then says ``committed: null``.
    """
    from capacitysim.errors import InputError
    from capacitysim.workflows.committed import plant_keys, spdes_commitments

    models = _current_models(bank)
    if models is None:
        return None, "committed: null (the service has no credit bank)" + _ignored(application)
    try:
        keys = plant_keys(submittal, plant)
    except InputError:
        return None, ("committed: null: the check names no plant (neither a SPDES permit number nor a plant name: "
                      "inputs.plant or inputs.submittal)" + _ignored(application))
    registered = {str(m["plant"]).strip().casefold() for m in models if m["current"] and m["plant"]}
    if registered & {k.casefold() for k in keys}:
        block = spdes_commitments(bank, keys, application=application)
        return block, _flows_note(block)
    known = sorted({str(m["plant"]) for m in models if m["current"] and m["plant"]})
    return None, (f"committed: null: no basin of the service's bank is registered as draining to plant "
                  f"{' / '.join(keys)} (registered plants: {', '.join(known) or 'none'})" + _ignored(application))


def job_inputs(proc, inputs: dict, files: dict) -> dict:
    """A job's inputs as its process's validator takes them: each file named by the staged file's path."""
    values = dict(inputs)
    for key in list(values):
        if key == proc.companion_input:
            values.pop(key)  # staged beside the model or sweep file, which names them
        elif key in proc.item_files:
            values[key] = [item | {part: files[f"{key}[{i}].{part}"] for part, _ in proc.item_files[key]}
                           for i, item in enumerate(values[key])]
        elif key in files:
            values[key] = files[key]
        elif isinstance(values[key], list) and any(f"{key}[{i}]" in files for i in range(len(values[key]))):
            values[key] = [files.get(f"{key}[{i}]", v) for i, v in enumerate(values[key])]  # a storm spec stays text
    return values


#: How the service includes its own bank's commitments in a job (:attr:`Process.shared_commitments`).
SHARED_COMMITMENTS = {"model": lambda bank, x: capacity_committed(bank, x.model, x.application),
                      "plant": lambda bank, x: spdes_committed(bank, x.submittal, x.plant, x.application)}


def run_process(process_id: str, inputs: dict, files: dict, work: Path, progress, bank=None):
    """The job's process run on its inputs: validated (``source="service"``), the service's bank's commitments
    included (:data:`SHARED_COMMITMENTS`), in the job's worker (``workers = 0``: service policies headroom_workers
    and sweep_workers); returns ``(document, report path or None)``."""
    proc = get_process(process_id)
    typed = proc.validate(job_inputs(proc, inputs, files), source="service")
    names = {i.name for i in proc.inputs}
    if proc.shared_commitments:
        typed["committed"], progress.notes["inputs-checked"] = SHARED_COMMITMENTS[proc.shared_commitments](bank, typed)
    if "workers" in names:
        typed["workers"] = 0
    if "bank" in names:
        typed["bank"] = bank
    result = proc.run(typed, progress=progress, work_dir=work if proc.writes_work_dir else None)
    try:
        doc = proc.document(result)
        report = proc.report(result, work / "report.html", doc=doc) if proc.has_report else None
    finally:
        if hasattr(result, "close"):
            result.close()  # a demonstration's temporary run folder
    if report:
        progress.stage("report-written", "report written")
    return doc, report


#: Service policy ``max_job_s``: the longest a job may run [s]; its SWMM runs are then stopped and the job fails
#: with the reason (a headroom search of a utility-size model is the longest legitimate job).
MAX_JOB_S = 6 * 3600.0


#: Service policy ``max_engine_file_bytes``: the largest file one SWMM run of a job may write [bytes] (its results
#: file: a 10,000-node model over 54 h at a 5-minute report step writes about 0.5 GB).
MAX_ENGINE_FILE_BYTES = 4 * 1024**3


def internal_error(exc: BaseException, where: str) -> dict:
    """The job record of a failure that is the service's, not the user's: ``internal error, reference <id>`` for
    whoever reads the job; the exception and its traceback go to the ``capacitysim.service`` log under that
    reference (as the HTTP 500s do), never into what a user sees."""
    import logging
    import secrets

    ref = secrets.token_hex(6)
    logging.getLogger("capacitysim.service").error("internal error %s (%s): %s", ref, where,
                                                   "".join(traceback.format_exception(exc)))
    return {"type": "internal", "message": f"internal error, reference {ref}"}


def stop_file(job_dir) -> Path:
    """The file whose appearance stops a job's SWMM runs within seconds (written when the job is dismissed; it
    holds who dismissed it, ``dismissed by NAME``, which the stopped runs' error repeats)."""
    return Path(job_dir) / "stop"


class PathRedactor:
    """Replaces every absolute server path in a text by its last component (a file's name, a folder's name).

    What an engineer sees of a job (its document, report and messages) never shows where the server keeps
    anything: the data folder, the job's folder, the temporary folders, the installation. Paths under these
    roots are cut to their base name (``model.inp``, ``rain.dat``), which is the name the user gave.
    """

    def __init__(self, *folders: Path):
        import site
        import sys
        import tempfile

        roots = {str(Path(f).resolve()) for f in folders} | {str(Path(f).absolute()) for f in folders}
        roots |= {str(Path(f).resolve().parent.parent) for f in folders[:1]}  # the data folder (jobs/<id>/..)
        roots |= {str(Path(f).absolute().parent.parent) for f in folders[:1]}  # as named, through a symbolic link
        roots |= {tempfile.gettempdir(), sys.prefix, sys.base_prefix, sys.exec_prefix,
                  str(Path(__file__).resolve().parents[2]), str(Path.cwd()), str(Path.home()), "/tmp"}
        roots |= set(getattr(site, "getsitepackages", lambda: [])())
        ordered = sorted((r.rstrip("/") for r in roots if r and r != "/"), key=len, reverse=True)
        import re

        self._re = re.compile("(?:" + "|".join(re.escape(r) for r in ordered) + r")(?:/[^\s\"'<>,;:()\[\]{}|]*)?")

    def __call__(self, text: str) -> str:
        return self._re.sub(lambda m: (m.group(0).rstrip("/").rsplit("/", 1)[-1] or "(server folder)"), text)


def run_job(process_id: str, inputs: dict, files: dict, job_dir: str, attempt: int, limits: dict | None = None,
            bank: str | None = None) -> dict:
    """Run one job attempt (on a dask worker).

    ``bank`` is the service's credit bank (``DATA/bank.sqlite``): a capacity demonstration or SPDES check reads
    its commitments from it when the job runs (:func:`capacity_committed`, :func:`spdes_committed`).

    Returns
    -------
    dict
        ``{"document": dict, "report_html": str | None}`` when the workflow returned, or
        ``{"error": {"type": "input" | "refused" | "error" | "internal", "message": str}}`` when it raised.
        The workflow's own verdict (pass, fail, untrusted) is in the document: a demonstration that
        fails is a successful job.
    """
    import shutil
    import tempfile

    from capacitysim.io.files import dumps_json
    from capacitysim.network.engine import stop_runs_when

    work = Path(job_dir) / f"attempt-{attempt}"
    work.mkdir(parents=True, exist_ok=True)
    scratch = work / "tmp"
    scratch.mkdir(exist_ok=True)
    progress = Progress(job_dir, attempt, process_id)
    progress.stage("started", "started")
    runs_dir = engine_progress_dir(job_dir)
    shutil.rmtree(runs_dir, ignore_errors=True)  # the runs of an attempt whose worker was killed
    runs_dir.mkdir()
    limit_s = float(limits.get("job_s", MAX_JOB_S)) if limits else MAX_JOB_S
    hide = PathRedactor(Path(job_dir), scratch)
    old_tmp = tempfile.tempdir
    tempfile.tempdir = str(scratch)  # the workflow's temporary run folders: inside the job's own folder
    try:
        with stop_runs_when(stop_file(job_dir), time.monotonic() + limit_s,
                            f"stopped: the job passed the longest-job limit of {limit_s:,.0f} s (service policy max_job_s)",
                            max_file_bytes=MAX_ENGINE_FILE_BYTES, progress_dir=runs_dir):
            staged = stage_inputs(process_id, inputs, files, work)
            watch = EngineWatch(progress, job_dir).start()
            try:
                doc, report = run_process(process_id, inputs, staged, work, progress, bank)
            finally:
                watch.stop()
        text = hide(dumps_json(doc))  # the CLI's --json text (a non-finite number is an InputError, as there)
        html = hide(Path(report).read_text(encoding="utf-8")) if report else None
    except CapacitysimError as exc:
        err = {"type": report_of(exc)["kind"], "message": str(exc)}  # the one mapping (capacitysim.errors)
    except Exception as exc:  # noqa: BLE001 - a job records why it failed; the server stays up
        err = internal_error(exc, f"job {Path(job_dir).name} attempt {attempt}")
    else:
        return {"document_json": text, "report_html": html}
    finally:
        tempfile.tempdir = old_tmp
    err["message"] = hide(err["message"])
    try:
        progress.stage("failed", err["message"])
    except OSError:  # the job folder is gone: the error is still returned
        pass
    return {"error": err}
