"""The job pages under ``/ui/jobs``: a job's status, progress, verdict, checks and record
(:func:`install`, called by :func:`capacitysim.service.web.install`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from fastapi import Request
from fastapi.responses import HTMLResponse

from capacitysim.service import auth
from capacitysim.service.tasks import read_progress

#: Seconds between automatic reloads of a job page while the job runs.
REFRESH_S = 2
#: Checks listed on a job page (failed ones first); the rest are in the result document.
MAX_CHECKS_SHOWN = 50
#: A job's id (32 hex digits): anything else is no job, before the store is asked.
JOB_ID = re.compile(r"[0-9a-f]{32}")


def install(w) -> None:
    """Add the job pages to ``w.app`` (``w``: :class:`capacitysim.service.web.Web`)."""
    app, svc, ApiError, page, session, to_login = w.app, w.svc, w.ApiError, w.page, w.session, w.to_login

    @app.get("/ui/jobs/{job_id}", response_class=HTMLResponse, include_in_schema=False)
    def job_page(job_id: str, request: Request):
        who = session(request)
        if who is None:
            return to_login(request)
        user = who.user
        job = svc.store.job(job_id) if JOB_ID.fullmatch(job_id) else None
        if job is None:
            raise ApiError(404, "Not found", f"no job {job_id[:100]!r}")
        if not auth.may_read_job(user, job):
            svc.store.journal("read jobs", user, job_id, outcome="forbidden")
            raise ApiError(403, "Forbidden", "this job belongs to another user")
        checks, more = [], 0
        if job["status"] == "successful":
            doc = json.loads(Path(job["result_path"]).read_text(encoding="utf-8"))
            all_checks = doc.get("checks", []) if isinstance(doc, dict) and isinstance(doc.get("checks"), list) else []
            all_checks = [c for c in all_checks if isinstance(c, dict) and "criterion" in c]
            all_checks.sort(key=lambda c: bool(c.get("passed")))
            checks, more = all_checks[:MAX_CHECKS_SHOWN], max(0, len(all_checks) - MAX_CHECKS_SHOWN)
        final = job["status"] in ("successful", "failed", "dismissed")
        info = read_progress(svc.runner.job_dir(job_id), job["attempts"]) or {}
        stages = [st for st in info.get("stages", []) if isinstance(st, dict)]
        return page("job.html", who, title=f"Job {job_id[:8]}", job=job, checks=checks, more=more, refresh=None if final else REFRESH_S, stages=stages,
                      inputs=json.dumps(job["inputs"], indent=2), hashes=json.dumps(job["input_sha256"], indent=2),
                      versions=json.dumps(job["versions"], indent=2))
