"""What a dask worker runs for a job: the workflow call of the matching CLI command, and nothing else.

Each ``_run_*`` function reproduces the body of one CLI command (``src/capacitysim/cli/*.py``) with the
request's inputs in place of the options, so a job's results are the document the CLI prints with
``--json``: the same keys and the same verdict. A job never writes outside its folder; the report is
written there and returned with the document.

Progress goes to ``progress-<attempt>.json`` in the job folder (written atomically): the server polls it
(the worker has no other channel back while it runs). A remote ``--scheduler`` cluster therefore needs the
data folder on a file system its workers share with the server, at the same path.
"""

from __future__ import annotations

import json
import os
import time
import traceback
from pathlib import Path

from capacitysim.errors import CapacitysimError, InputError, RefusedError
from capacitysim.files import atomic_write_text


def progress_file(job_dir, attempt: int) -> Path:
    return Path(job_dir) / f"progress-{attempt}.json"


def _progress_writer(job_dir, attempt: int):
    path = progress_file(job_dir, attempt)
    state = {"last": 0.0}

    def write(pct: float, message: str = "", force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - state["last"] < 0.5:
            return
        state["last"] = now
        atomic_write_text(path, json.dumps({"status": "running", "progress": max(0, min(99, int(pct))),
                                            "message": message, "pid": os.getpid()}))

    return write


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


def _run_capacity(inputs, files, work, progress):
    """``capacitysim capacity --model M --storm S --connect NODE=GPD ... --remediate SPEC ... --json``."""
    from capacitysim.io.bundled import model_path as resolve_model
    from capacitysim.report.capacity import write_report
    from capacitysim.workflows.demonstration import parse_connection, run_demonstration

    model = resolve_model(files["model"])
    pk = _peaking(inputs)
    conns = [parse_connection(f"{c['node']}={float(c['gpd'])!r}", pk) for c in inputs.get("connections", [])]
    d = run_demonstration(model, connections=conns, remediations=list(inputs.get("remediations", [])),
                          storm=files.get("storm"), criteria=_criteria(inputs), work_dir=None, plant=inputs.get("plant"),
                          spinup_hr=inputs.get("spinup_hr"), submittal=_submittal(inputs))
    with d:
        doc = d.to_dict()
        report = write_report(doc, work / "report.html")
    return doc, report


def _run_detention(inputs, files, work, progress):
    """``capacitysim detention SITE --rule R [--no-swmm] --json``."""
    from capacitysim.io.site_files import load_rule_set, load_site
    from capacitysim.report.detention import write_report
    from capacitysim.workflows.detention import design_site

    rules = load_rule_set(inputs.get("rule", "nyc-2012"))
    site = load_site(files["site"], rules)
    result = design_site(site, rules, swmm=inputs.get("swmm", True), submittal=_submittal(inputs, site.submittal))
    report = write_report(result, work / "report.html")
    return result.to_dict(), report


def _run_spdes(inputs, files, work, progress):
    """``capacitysim spdes check --plant P --flows F --added-gpd G ... --json``."""
    from capacitysim.io.plant_flows import read_plant_file
    from capacitysim.report.spdes import write_report
    from capacitysim.workflows.spdes import plant_submittal, run_check

    plant = read_plant_file(files["plant"]) if "plant" in files else None
    result = run_check(
        flows=files.get("flows"), dmr=files.get("dmr"), limit_mgd=inputs.get("limit_mgd"), basis=inputs.get("basis"),
        as_of=inputs.get("as_of"), application_date=inputs.get("application_date"),
        added_gpd=list(inputs.get("added_gpd", [])), watershed=inputs.get("watershed"), plant=plant,
        strict_record_age=inputs.get("strict_record_age", False), submittal=_submittal(inputs, plant_submittal(plant)),
        date_column=inputs.get("date_column", "date"), flow_column=inputs.get("flow_column", "flow_mgd"),
        units=inputs.get("units"), outfall=inputs.get("outfall"), location=inputs.get("location"))
    report = write_report(result, work / "report.html")
    return result.to_dict(), report


def _run_headroom(inputs, files, work, progress):
    """``capacitysim headroom --model M --storm S ... --workers 0 --json`` (no --out: nothing streamed)."""
    from capacitysim.io.bundled import model_path as resolve_model
    from capacitysim.report.headroom import write_report
    from capacitysim.workflows.headroom import headroom as run_headroom

    storms = [files[f"storms[{i}]"] for i in range(len(inputs.get("storms", [])))]

    def cb(done, total, runs):
        progress(100.0 * done / max(total, 1), f"{done} of {total} cells, {runs} SWMM runs")

    res = run_headroom(resolve_model(files["model"]), storms or None, inputs.get("nodes"), basin=inputs.get("basin"),
                       all_nodes=not inputs.get("nodes") and not inputs.get("basin"), criteria=_criteria(inputs),
                       remediations=list(inputs.get("remediations", [])), plant=inputs.get("plant"), peaking=_peaking(inputs),
                       spinup_hr=inputs.get("spinup_hr"), tolerance_pct=float(inputs.get("tolerance_pct", 5)),
                       max_gpd=float(inputs.get("max_gpd", 10_000_000)), min_gpd=float(inputs.get("min_gpd", 100)),
                       workers=0, scheduler=None, out=None, resume=False, method=inputs.get("method", "screen"),
                       progress=cb, submittal=_submittal(inputs), criteria_file=None)
    doc = res.to_dict()
    report = write_report(doc, work / "report.html", res.coordinates, res.link_lines)
    return doc, report


def _run_credits(inputs, files, work, progress):
    """``capacitysim credits quantify PROJECT --inflow-basis B --json``."""
    from capacitysim.io.project_files import read_project
    from capacitysim.rules import ii_offset

    proj = read_project(files["project"])
    meta = proj["project"]
    result = ii_offset.quantify_items(proj["items"], engineer=meta.get("engineer", ""),
                                      inflow_credit_basis=inputs.get("inflow_basis", ii_offset.DEFAULT_INFLOW_CREDIT_BASIS))
    return {"project": meta, "storm": ii_offset.program_storm(), **result}, None


def _run_sweep(inputs, files, work, progress):
    """``capacitysim sweep run SWEEP --out <job>/sweep.zarr --workers 0 --json``."""
    from capacitysim.io.sweep_files import load_sweep
    from capacitysim.workflows.sweep import check_sweep_size, run_sweep

    spec = load_sweep(files["sweep"])
    check_sweep_size(spec, False, 1)

    def cb(done, failed, total):
        progress(100.0 * done / max(total, 1), f"{done} of {total} scenarios ({failed} failed)")

    run = run_sweep(spec, str(work / "sweep.zarr"), workers=0, scheduler=None, resume=False, progress=cb)
    return run.to_dict(), None


RUNNERS = {"capacity-demonstration": _run_capacity, "detention-design": _run_detention, "spdes-check": _run_spdes,
           "headroom": _run_headroom, "credits-quantification": _run_credits, "sweep": _run_sweep}


def run_job(process_id: str, inputs: dict, files: dict, job_dir: str, attempt: int) -> dict:
    """Run one job attempt (on a dask worker).

    Returns
    -------
    dict
        ``{"document": dict, "report_html": str | None}`` when the workflow returned, or
        ``{"error": {"type": "input" | "refused" | "error" | "internal", "message": str}}`` when it raised.
        The workflow's own verdict (pass, fail, untrusted) is in the document: a demonstration that
        fails is a successful job.
    """
    from capacitysim.io.files import dumps_json

    work = Path(job_dir) / f"attempt-{attempt}"
    work.mkdir(parents=True, exist_ok=True)
    progress = _progress_writer(job_dir, attempt)
    progress(0, "started", force=True)
    try:
        doc, report = RUNNERS[process_id](inputs, files, work, progress)
        text = dumps_json(doc)  # the CLI's --json text (a non-finite number is an InputError, as there)
        html = Path(report).read_text(encoding="utf-8") if report else None
    except InputError as exc:
        return {"error": {"type": "input", "message": str(exc)}}
    except RefusedError as exc:
        return {"error": {"type": "refused", "message": str(exc)}}
    except CapacitysimError as exc:
        return {"error": {"type": "error", "message": str(exc)}}
    except Exception as exc:  # noqa: BLE001 - a job records why it failed; the server stays up
        tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return {"error": {"type": "internal", "message": tb[:2000]}}
    return {"document_json": text, "report_html": html}
