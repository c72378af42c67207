"""The job pages under ``/ui/jobs``: a job's status, its progress while it runs (the SWMM runs' simulated time and
the time left) with a cancel button, the verdict, the checks and margins with their units, the map of the result,
the downloads, and the record of what it ran on (:func:`install`, called by :func:`capacitysim.service.web.install`).

Numbers are formatted as the reports format them (:func:`capacitysim.report.format.number`: the decimals of their
unit, thousands separators); the inputs and the record are tables, a file is named by the name it was uploaded or
bundled under (never a server path).
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from capacitysim.processes.base import UPLOAD_REF
from capacitysim.service import auth
from capacitysim.service.jobs import cancel_job
from capacitysim.service.tasks import read_progress

#: Seconds between automatic reloads of a job page while the job runs.
REFRESH_S = 2
#: Checks listed on a job page (failed ones first); the rest are in the result document and the CSV.
MAX_CHECKS_SHOWN = 50
#: A job's id (32 hex digits): anything else is no job, before the store is asked.
JOB_ID = re.compile(r"[0-9a-f]{32}")
#: The columns of a job's checks CSV (``/ui/jobs/{id}/checks.csv``), in the result document's own key names.
CHECK_COLUMNS = ("result", "criterion", "element", "kind", "before", "after", "limit", "unit", "citation")
#: What a job page says after an action of its own (``?notice=CODE``): any other code shows nothing, so a link
#: cannot make the service say what its author writes.
NOTICES = {"cancelled": "The job is cancelled: its SWMM runs are stopped.", "ended": "The job had already ended."}


def csv_cell(value):
    """A value as a CSV cell a spreadsheet shows as text: text that a spreadsheet would read as a formula
    (beginning ``=``, ``+``, ``@``, a tab, a carriage return, or ``-`` followed by something that is not a number)
    is prefixed with ``'`` (OWASP, "CSV Injection"); numbers and a lone ``-`` are written as they are."""
    if not isinstance(value, str) or not value:
        return value
    first = value[0]
    if first in "=+@\t\r" or (first == "-" and len(value) > 1 and not re.fullmatch(r"-[0-9.,eE+-]+", value)):
        return "'" + value
    return value


def input_rows(inputs: dict, names: dict) -> list[tuple[str, str]]:
    """A job's inputs as ``(label, text)`` rows: a list one item per line, a connection ``NODE = 5,000 gpd``, an
    upload by its file name (``names``: sha256 -> name), an object as compact JSON."""
    from capacitysim.report.format import number
    from capacitysim.service.web_forms import label_of

    def text(v) -> str:
        if isinstance(v, str):
            m = UPLOAD_REF.match(v)
            return f"{names.get(m.group(1), 'an upload')} (upload {m.group(1)[:8]})" if m else v
        if isinstance(v, bool):
            return "yes" if v else "no"
        if isinstance(v, (int, float)):
            return number(v)
        if isinstance(v, dict) and set(v) == {"node", "gpd"}:
            return f"{v['node']} = {number(v['gpd'], 'gpd')} gpd"
        return json.dumps(v, sort_keys=True)

    return [(label_of(k), "\n".join(text(x) for x in v) if isinstance(v, list) else text(v)) for k, v in inputs.items()]


def install(w) -> None:
    """Add the job pages to ``w.app`` (``w``: :class:`capacitysim.service.web.Web`)."""
    app, svc, ApiError, page, session, to_login = w.app, w.svc, w.ApiError, w.page, w.session, w.to_login
    threaded, checked_form = w.threaded, w.checked_form

    def readable(request: Request, job_id: str):
        """``(signed-in request, job)``, or ``(None, None)`` when not signed in; 404 / 403 as the API answers."""
        who = session(request)
        if who is None:
            return None, None
        job = svc.store.job(job_id) if JOB_ID.fullmatch(job_id) else None
        if job is None:
            raise ApiError(404, "Not found", f"no job {job_id[:100]!r}")
        if not auth.may_read_job(who.user, job):
            svc.store.journal("read jobs", who.user, job_id, outcome="forbidden")
            raise ApiError(403, "Forbidden", "this job belongs to another user")
        return who, job

    def result_of(job) -> dict:
        if job["status"] != "successful" or not job.get("result_path"):
            return {}
        doc = json.loads(Path(job["result_path"]).read_text(encoding="utf-8"))
        return doc if isinstance(doc, dict) else {}

    def checks_of(doc: dict) -> list[dict]:
        rows = doc.get("checks") if isinstance(doc.get("checks"), list) else []
        rows = [c for c in rows if isinstance(c, dict) and "criterion" in c]
        return sorted(rows, key=lambda c: bool(c.get("passed")))  # failed first

    @app.get("/ui/jobs/{job_id}", response_class=HTMLResponse, include_in_schema=False)
    def job_page(job_id: str, request: Request, notice: str = ""):
        who, job = readable(request, job_id)
        if who is None:
            return to_login(request)
        doc = result_of(job)
        checks = checks_of(doc)
        final = job["status"] in ("successful", "failed", "dismissed")
        info = read_progress(svc.runner.job_dir(job_id), job["attempts"]) or {}
        stages = [st for st in info.get("stages", []) if isinstance(st, dict)]
        runs = [r for r in info.get("engine", []) or [] if isinstance(r, dict)] if not final else []
        names = {}
        for v in json.dumps(job["inputs"]).split('"'):
            m = UPLOAD_REF.match(v)
            if m:
                up = svc.store.upload(m.group(1), job["owner_id"])
                names[m.group(1)] = up["filename"] if up else "an upload"
        may_cancel = not final and auth.may_dismiss_job(who.user, job)
        return page("job.html", who, title=f"Job {job_id[:8]}", job=job, doc=doc, checks=checks[:MAX_CHECKS_SHOWN],
                    more=max(0, len(checks) - MAX_CHECKS_SHOWN), refresh=None if final else REFRESH_S, stages=stages,
                    runs=runs, may_cancel=may_cancel, notice=NOTICES.get(notice),
                    inputs=input_rows(job["inputs"], names),
                    hashes=sorted((job["input_sha256"] or {}).items()), versions=job["versions"] or {},
                    has_map=job["process"] == "capacity-demonstration" and bool(doc.get("geometry")))

    @app.get("/ui/jobs/{job_id}/checks.csv", include_in_schema=False)
    def checks_csv(job_id: str, request: Request):
        """Every check of a successful job as CSV (the columns of :data:`CHECK_COLUMNS`)."""
        who, job = readable(request, job_id)
        if who is None:
            return to_login(request)
        out = io.StringIO()
        wr = csv.writer(out, lineterminator="\n")
        wr.writerow(CHECK_COLUMNS)
        for c in checks_of(result_of(job)):
            wr.writerow([csv_cell(v) for v in (c.get("result", "pass" if c.get("passed") else "fail"),
                                               *(c.get(k, "") for k in CHECK_COLUMNS[1:]))])
        return Response(out.getvalue(), media_type="text/csv; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="checks-{job_id[:8]}.csv"'})

    @app.post("/ui/jobs/{job_id}/cancel", include_in_schema=False)
    @threaded
    def cancel(request: Request, form):
        """The cancel button: the job's owner (or an administrator) stops it, as ``DELETE /jobs/{id}`` does."""
        job_id = request.path_params["job_id"]
        who, job = readable(request, job_id)
        if who is None:
            return to_login(request)
        checked_form(request, who, form)
        if job["status"] in ("successful", "failed", "dismissed"):
            return RedirectResponse(f"/ui/jobs/{job_id}?notice=ended", status_code=303)
        cancel_job(svc, who.user, job_id)  # the rule of DELETE /jobs/{id}: who may, what the bank cites
        return RedirectResponse(f"/ui/jobs/{job_id}?notice=cancelled", status_code=303)
