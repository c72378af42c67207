"""What a dask worker runs for a job: the workflow call of the matching CLI command, and nothing else.

Each ``_run_*`` function reproduces the body of one CLI command (``src/capacitysim/cli/*.py``) with the
request's inputs in place of the options, so a job's results are the document the CLI prints with
``--json``: the same keys and the same verdict. A job never writes outside its folder; the report is
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
import time
import traceback
from pathlib import Path

from capacitysim.errors import CapacitysimError, InputError, report_of
from capacitysim.files import atomic_write_text

#: The stages each process reports, in order: (name, progress [%]). ``failed`` is added after the last stage
#: reached when the workflow raises.
STAGES = {
    "capacity-demonstration": (("started", 0), ("inputs-checked", 10), ("swmm-runs", 20), ("judged", 80),
                               ("report-written", 95)),
    "detention-design": (("started", 0), ("inputs-checked", 10), ("designed", 80), ("report-written", 95)),
    "spdes-check": (("started", 0), ("inputs-checked", 10), ("checked", 80), ("report-written", 95)),
    "headroom": (("started", 0), ("inputs-checked", 10), ("searched", 90), ("report-written", 95)),
    "credits-quantification": (("started", 0), ("inputs-checked", 10), ("quantified", 95)),
    "sweep": (("started", 0), ("inputs-checked", 10), ("swept", 95)),
    "capacity-register": (("started", 0), ("inputs-checked", 10), ("computed", 90), ("report-written", 95)),
}
#: The file a capacity-register job stores its figures in (its attempt's folder): what GET /bank/register reads
#: (:func:`capacitysim.workflows.register.stored_register`) to say whether each figure is current.
REGISTER_STORE = "register.json"
#: Shortest time between two progress writes that are not stages [s] (a headroom cell, a sweep scenario).
PROGRESS_THROTTLE_S = 0.5


def progress_file(job_dir, attempt: int) -> Path:
    return Path(job_dir) / f"progress-{attempt}.json"


def read_progress(job_dir, attempt: int) -> dict | None:
    """The progress file of a job's attempt (``progress``, ``message``, ``stages``), or None when there is none."""
    try:
        info = json.loads(progress_file(job_dir, attempt).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


class Progress:
    """The progress of one job attempt, written to its progress file (atomically).

    ``progress(pct, message)`` reports a step (throttled: at most one write per
    :data:`PROGRESS_THROTTLE_S`); ``progress.stage(name, message)`` reports a stage of :data:`STAGES`
    (always written, and kept in the file's ``stages`` history). The percentage shown never goes back
    and stays below 100 (the server sets 100 when the job ends successful).
    """

    def __init__(self, job_dir, attempt: int, process_id: str):
        self.path = progress_file(job_dir, attempt)
        self.levels = dict(STAGES[process_id])
        self.stages: list[dict] = []
        self.pct = 0
        self.message = ""
        self._last = 0.0

    def __call__(self, pct: float, message: str = "", force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < PROGRESS_THROTTLE_S:
            return
        self._last = now
        self.pct = max(self.pct, max(0, min(99, int(pct))))
        self.message = message
        self._write()

    def stage(self, name: str, message: str = "") -> None:
        """Record reaching stage ``name`` (its progress from :data:`STAGES`; ``failed`` keeps the last one)."""
        pct = self.pct if name == "failed" else self.levels[name]
        self.pct = max(self.pct, pct)
        self.message = message or name.replace("-", " ")
        self.stages.append({"stage": name, "progress": self.pct, "message": self.message[:500],
                            "at": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")})
        self._last = time.monotonic()
        self._write()

    def span(self, start: str, end: str):
        """A step reporter mapping a fraction done in [0, 1] to the progress between stages ``start`` and ``end``."""
        lo, hi = self.levels[start], self.levels[end]

        def report(fraction: float, message: str = "") -> None:
            self(lo + (hi - lo) * max(0.0, min(1.0, fraction)), message)

        return report

    def _write(self) -> None:
        atomic_write_text(self.path, json.dumps({"status": "running", "progress": self.pct, "message": self.message,
                                                 "pid": os.getpid(), "stages": self.stages}))


def _submittal(inputs: dict, base=None):
    from capacitysim.io.submittal import Submittal

    sub = base if base is not None else Submittal()
    return sub.merged(**inputs.get("submittal", {}))


def _peaking(inputs: dict):
    pk = inputs.get("peaking", "pattern")
    return "pattern" if pk == "pattern" else float(pk)


def _criteria(inputs: dict):
    from capacitysim.rules.capacity import Criteria

    return Criteria.from_dict(inputs["criteria"], "inputs.criteria") if "criteria" in inputs else Criteria()


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


def _run_capacity(inputs, files, work, progress, bank=None):
    """``capacitysim capacity --model M --storm S --connect NODE=GPD ... --remediate SPEC ... [--committed BANK
    --application APP] --json`` (``--committed`` by itself when the model is registered: :func:`capacity_committed`)."""
    from capacitysim.io.bundled import model_path as resolve_model
    from capacitysim.report.capacity import write_report
    from capacitysim.workflows.demonstration import parse_connection, run_demonstration

    model = resolve_model(files["model"])
    pk = _peaking(inputs)
    conns = [parse_connection(f"{c['node']}={float(c['gpd'])!r}", pk) for c in inputs.get("connections", [])]
    rems = list(inputs.get("remediations", []))
    criteria, submittal = _criteria(inputs), _submittal(inputs)
    committed, note = capacity_committed(bank, model, inputs.get("application"))
    progress.stage("inputs-checked", f"{len(conns)} connection(s), {len(rems)} remediation(s) on {model.name}; {note}")
    progress.stage("swmm-runs", "SWMM: the before and after scenarios, run side by side")
    d = run_demonstration(model, connections=conns, remediations=rems, storm=files.get("storm"), criteria=criteria,
                          work_dir=None, plant=inputs.get("plant"), spinup_hr=inputs.get("spinup_hr"), submittal=submittal,
                          committed=committed)
    with d:
        progress.stage("judged", f"before and after runs judged: verdict {d.verdict}")
        doc = d.to_dict()
        report = write_report(doc, work / "report.html")
    progress.stage("report-written", "report written")
    return doc, report


def _run_detention(inputs, files, work, progress, bank=None):
    """``capacitysim detention SITE --rule R [--no-swmm] [--approved-on D] --json``."""
    from capacitysim.io.site_files import load_rule_set, load_site
    from capacitysim.io.submittal import approval_date
    from capacitysim.report.detention import write_report
    from capacitysim.workflows.detention import design_site

    approved = approval_date(inputs.get("approved_on"), "approved_on")
    rules = load_rule_set(inputs.get("rule", "nyc-2012"))
    site = load_site(files["site"], rules)
    swmm = inputs.get("swmm", True)
    progress.stage("inputs-checked", f"site and rule set {inputs.get('rule', 'nyc-2012')} read; designing"
                   + (" and checking in SWMM" if swmm else ""))
    result = design_site(site, rules, swmm=swmm, submittal=_submittal(inputs, site.submittal), approved_on=approved)
    progress.stage("designed", f"design done: verdict {result.status}")
    report = write_report(result, work / "report.html")
    progress.stage("report-written", "report written")
    return result.to_dict(), report


def _run_spdes(inputs, files, work, progress, bank=None):
    """``capacitysim spdes check --plant P --flows F --added-gpd G ... [--committed BANK --application APP] --json``
    (``--committed`` by itself when a basin is registered as draining to the plant: :func:`spdes_committed`)."""
    from capacitysim.io.plant_flows import read_plant_file
    from capacitysim.report.spdes import write_report
    from capacitysim.workflows.spdes import plant_submittal, run_check

    plant = read_plant_file(files["plant"]) if "plant" in files else None
    submittal = _submittal(inputs, plant_submittal(plant))
    committed, note = spdes_committed(bank, submittal, plant, inputs.get("application"))
    progress.stage("inputs-checked", f"plant read; checking the flow record; {note}")
    result = run_check(
        flows=files.get("flows"), dmr=files.get("dmr"), limit_mgd=inputs.get("limit_mgd"), basis=inputs.get("basis"),
        as_of=inputs.get("as_of"), application_date=inputs.get("application_date"),
        added_gpd=list(inputs.get("added_gpd", [])), watershed=inputs.get("watershed"), plant=plant,
        strict_record_age=inputs.get("strict_record_age", False), submittal=submittal,
        date_column=inputs.get("date_column", "date"), flow_column=inputs.get("flow_column", "flow_mgd"),
        units=inputs.get("units"), outfall=inputs.get("outfall"), location=inputs.get("location"), committed=committed)
    doc = result.to_dict()
    progress.stage("checked", f"flow record checked: verdict {doc.get('verdict')}")
    report = write_report(result, work / "report.html")
    progress.stage("report-written", "report written")
    return doc, report


def _run_headroom(inputs, files, work, progress, bank=None):
    """``capacitysim headroom --model M --storm S ... --workers 0 --json`` (no --out: nothing streamed)."""
    from capacitysim.io.bundled import model_path as resolve_model
    from capacitysim.report.headroom import write_report
    from capacitysim.workflows.headroom import headroom as run_headroom

    storms = [files[f"storms[{i}]"] for i in range(len(inputs.get("storms", [])))]
    model = resolve_model(files["model"])
    criteria, submittal = _criteria(inputs), _submittal(inputs)
    progress.stage("inputs-checked", f"{model.name}, {len(storms) or 'its own'} storm(s)")
    step = progress.span("inputs-checked", "searched")

    def cb(done, total, runs):
        step(done / max(total, 1), f"{done} of {total} cells, {runs} SWMM runs")

    res = run_headroom(model, storms or None, inputs.get("nodes"), basin=inputs.get("basin"),
                       all_nodes=not inputs.get("nodes") and not inputs.get("basin"), criteria=criteria,
                       remediations=list(inputs.get("remediations", [])), plant=inputs.get("plant"), peaking=_peaking(inputs),
                       spinup_hr=inputs.get("spinup_hr"), tolerance_pct=float(inputs.get("tolerance_pct", 5)),
                       max_gpd=float(inputs.get("max_gpd", 10_000_000)), min_gpd=float(inputs.get("min_gpd", 100)),
                       workers=0, scheduler=None, out=None, resume=False, method=inputs.get("method", "screen"),
                       progress=cb, submittal=submittal, criteria_file=None)
    doc = res.to_dict()
    progress.stage("searched", "headroom searched")
    report = write_report(doc, work / "report.html", res.coordinates, res.link_lines)
    progress.stage("report-written", "report written")
    return doc, report


def _run_credits(inputs, files, work, progress, bank=None):
    """``capacitysim credits quantify PROJECT --inflow-basis B --json``."""
    from capacitysim.io.project_files import read_project
    from capacitysim.rules import ii_offset

    proj = read_project(files["project"])
    meta = proj["project"]
    progress.stage("inputs-checked", f"project {meta.get('id')}: {len(proj['items'])} item(s)")
    doc = ii_offset.quantify_project(meta, proj["items"],
                                     inflow_credit_basis=inputs.get("inflow_basis", ii_offset.DEFAULT_INFLOW_CREDIT_BASIS))
    progress.stage("quantified", f"{doc['total_gpd']:,.0f} gpd of I/I removal quantified")
    return doc, None


def _run_sweep(inputs, files, work, progress, bank=None):
    """``capacitysim sweep run SWEEP --out <job>/sweep.zarr --workers 0 --json``."""
    from capacitysim.io.sweep_files import load_sweep
    from capacitysim.workflows.sweep import check_sweep_size, run_sweep

    spec = load_sweep(files["sweep"])
    check_sweep_size(spec, False, 1)
    progress.stage("inputs-checked", "sweep file read")
    step = progress.span("inputs-checked", "swept")

    def cb(done, failed, total):
        step(done / max(total, 1), f"{done} of {total} scenarios ({failed} failed)")

    run = run_sweep(spec, str(work / "sweep.zarr"), workers=0, scheduler=None, resume=False, progress=cb)
    progress.stage("swept", "every scenario run")
    return run.to_dict(), None


def _run_register(inputs, files, work, progress, bank=None):
    """``capacitysim bank --db BANK register --plant KEY=PLANT,FLOWS ... --storm S ... --nodes N ... --workers 0
    --json --report`` on the service's bank, its figures stored in the job's folder (:data:`REGISTER_STORE`)."""
    from capacitysim.report.register import write_report
    from capacitysim.workflows.register import capacity_register

    if bank is None or not Path(bank).is_file():
        raise InputError("capacity-register: the service has no credit bank yet (the first `capacitysim users add NAME "
                         "--role administrator` creates it)")
    plants = {p["key"]: f"{files[f'plants[{i}].plant']},{files[f'plants[{i}].flows']}"
              for i, p in enumerate(inputs.get("plants", []))}
    storms = [files[f"storms[{i}]"] for i in range(len(inputs.get("storms", [])))]
    progress.stage("inputs-checked", f"{len(plants)} plant record(s), {len(storms) or 'each model’s own'} storm(s)")
    step = progress.span("inputs-checked", "computed")

    def cb(label, done, total, runs):
        step(done / max(total, 1), f"{label}: {done} of {total} nodes, {runs} SWMM runs")

    reg = capacity_register(bank, plants=plants, storms=storms or None, nodes=list(inputs.get("nodes", [])),
                            as_of=inputs.get("as_of"), tolerance_pct=inputs.get("tolerance_pct"),
                            spinup_hr=inputs.get("spinup_hr"), workers=0, refresh=True, cache=work / REGISTER_STORE,
                            progress=cb)
    doc = reg.to_dict()
    progress.stage("computed", f"register computed: {doc['freshness']['text']}")
    report = write_report(doc, work / "report.html")
    progress.stage("report-written", "report written")
    return doc, report


RUNNERS = {"capacity-demonstration": _run_capacity, "detention-design": _run_detention, "spdes-check": _run_spdes,
           "headroom": _run_headroom, "credits-quantification": _run_credits, "sweep": _run_sweep,
           "capacity-register": _run_register}


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
    """The file whose appearance stops a job's SWMM runs within seconds (written when the job is dismissed)."""
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
    import tempfile

    from capacitysim.io.files import dumps_json
    from capacitysim.network.engine import stop_runs_when

    work = Path(job_dir) / f"attempt-{attempt}"
    work.mkdir(parents=True, exist_ok=True)
    scratch = work / "tmp"
    scratch.mkdir(exist_ok=True)
    progress = Progress(job_dir, attempt, process_id)
    progress.stage("started", "started")
    limit_s = float(limits.get("job_s", MAX_JOB_S)) if limits else MAX_JOB_S
    hide = PathRedactor(Path(job_dir), scratch)
    old_tmp = tempfile.tempdir
    tempfile.tempdir = str(scratch)  # the workflow's temporary run folders: inside the job's own folder
    try:
        with stop_runs_when(stop_file(job_dir), time.monotonic() + limit_s,
                            f"stopped: the job passed the longest-job limit of {limit_s:,.0f} s (service policy max_job_s)",
                            max_file_bytes=MAX_ENGINE_FILE_BYTES):
            staged = stage_inputs(process_id, inputs, files, work)
            doc, report = RUNNERS[process_id](inputs, staged, work, progress, bank)
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
