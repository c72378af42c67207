"""The FastAPI application of ``capacitysim serve`` (OGC API - Processes, part 1, with users and the bank).

``create_app(data_dir)`` builds the app; the store, the dask runner and the bank live under ``data_dir``:

* ``service.sqlite``: users (token hashes), jobs, uploads, the journal (:mod:`capacitysim.service.store`);
* ``bank.sqlite``: the flow credit bank (:class:`capacitysim.bank.Ledger`);
* ``jobs/<id>/``: each job's ``result-<attempt>.json`` (the CLI's ``--json`` text, byte for byte), ``report-<attempt>.html``;
* ``uploads/<sha256>/<name>``: uploaded files, named in inputs as ``"upload:<sha256>"``;
* ``secret``: the key of the web pages' CSRF tokens.

Errors are JSON problem documents (RFC 7807: ``type``, ``title``, ``status``, ``detail``; for a bad input
also ``field``, ``value`` and ``allowed``): 400 bad input, 401 no or unknown token, 403 the role may not,
404 no such process/job/application, 409 refused by a rule or by the job's state.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
from pathlib import Path
from typing import Any

from fastapi import Body, Depends, FastAPI, Header, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from capacitysim.errors import CapacitysimError, InputError, RefusedError
from capacitysim.files import atomic_write_bytes
from capacitysim.service import auth
from capacitysim.service.problems import PROBLEM, ApiError, problem  # noqa: F401
from capacitysim.service.processes import ServiceInputError, catalogue, prepare, versions
from capacitysim.service.store import Store
from capacitysim.version import __version__

#: Largest upload accepted [bytes] (a 10,000-node SWMM model is a few MB).
MAX_UPLOAD_BYTES = 50 * 1024 * 1024
#: Longest a synchronous execution waits before answering with the job (201) [s].
SYNC_WAIT_S = 600.0
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


class Service:
    """What the app's handlers share: the store, the runner, the bank file, the CSRF key."""

    def __init__(self, data_dir, *, scheduler=None, workers=None, start_runner: bool = True, store=None):
        from capacitysim.service.runner import Runner

        self.data_dir = Path(data_dir).resolve()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.store = store if store is not None else Store(self.data_dir / "service.sqlite")
        self.bank_path = self.data_dir / "bank.sqlite"
        self.secret = load_secret(self.data_dir)
        self.runner = Runner(self.store, self.data_dir, scheduler=scheduler, workers=workers)
        self.start_runner = start_runner

    def upload_path(self, sha: str):
        up = self.store.upload(sha)
        return None if up is None else Path(up["path"])

    def ledger(self, user=None):
        from capacitysim.bank import Ledger

        if not self.bank_path.is_file():
            raise ApiError(404, "No bank", "this service has no credit bank yet (the first `capacitysim users add NAME "
                                           "--role administrator` creates it)")
        return Ledger(self.bank_path, actor=None if user is None else user["name"])


def load_secret(data_dir: Path) -> bytes:
    """The server's CSRF key (``<data>/secret``, 32 random bytes, created once, mode 0600)."""
    p = Path(data_dir) / "secret"
    if not p.is_file():
        atomic_write_bytes(p, secrets.token_bytes(32))
        os.chmod(p, 0o600)
    return p.read_bytes()


def create_app(data_dir, *, scheduler: str | None = None, workers: int | None = None, start_runner: bool = True,
               store: Store | None = None) -> FastAPI:
    """The ASGI application serving ``data_dir``.

    Parameters
    ----------
    data_dir : path
        The service's data folder (created when missing).
    scheduler : str, optional
        A ``dask.distributed`` scheduler address; default a local cluster.
    workers : int, optional
        Worker processes of the local cluster (default one per core).
    start_runner : bool
        Start the dask runner with the app (tests of the pages alone may skip it).
    store : capacitysim.service.store.Store, optional
        The store (``capacitysim serve --database`` builds it); default the SQLite file ``<data>/service.sqlite``.
    """
    svc = Service(data_dir, scheduler=scheduler, workers=workers, start_runner=start_runner, store=store)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        if svc.start_runner:
            from starlette.concurrency import run_in_threadpool

            await run_in_threadpool(svc.runner.start)
        try:
            yield
        finally:
            if svc.start_runner:
                svc.runner.stop()

    app = FastAPI(title="capacitysim", version=__version__, lifespan=lifespan,
                  description="Hydraulic simulation service for capacity demonstrations (OGC API - Processes, part 1), "
                              "with users, roles and the flow credit bank's sign-off. Every request needs "
                              "`Authorization: Bearer TOKEN` (`capacitysim users add`).")
    app.state.svc = svc

    # --- errors: every 4xx/5xx a JSON problem document ----------------------------------------------
    @app.exception_handler(ApiError)
    async def _api_error(request, exc: ApiError):
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        return problem(exc.status, exc.title, exc.detail, headers, **exc.extra)

    @app.exception_handler(ServiceInputError)
    async def _input(request, exc: ServiceInputError):
        return problem(400, "Bad input", str(exc), **exc.to_dict())

    @app.exception_handler(InputError)
    async def _input2(request, exc: InputError):
        return problem(400, "Bad input", str(exc))

    @app.exception_handler(RefusedError)
    async def _refused(request, exc: RefusedError):
        return problem(409, "Refused", str(exc))

    @app.exception_handler(CapacitysimError)
    async def _other(request, exc: CapacitysimError):
        return problem(503, "Unavailable", str(exc))

    @app.exception_handler(RequestValidationError)
    async def _validation(request, exc: RequestValidationError):
        errs = exc.errors()
        first = errs[0] if errs else {}
        loc = ".".join(str(x) for x in first.get("loc", ()) if x != "body") or "body"
        return problem(400, "Bad input", f"{loc}: {first.get('msg', 'invalid')}", field=loc,
                       value=None, allowed=first.get("msg", ""))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request, exc: StarletteHTTPException):
        title = {404: "Not found", 405: "Method not allowed"}.get(exc.status_code, "Error")
        return problem(exc.status_code, title, str(exc.detail), getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def _crash(request, exc: Exception):
        return problem(500, "Server error", f"{type(exc).__name__}: {exc}"[:500])

    # --- authentication ------------------------------------------------------------------------------
    def user(request: Request, authorization: str | None = Header(None, description="Bearer TOKEN")):
        token = None
        if authorization:
            scheme, _, value = authorization.partition(" ")
            if scheme.lower() == "bearer":
                token = value.strip()
        if token is None and request.method in ("GET", "HEAD"):
            token = request.cookies.get(COOKIE)  # the web pages' session, for reading only (capacitysim.service.web)
        u = auth.user_for_token(svc.store, token)
        if u is None:
            raise ApiError(401, "Unauthorized", "a valid `Authorization: Bearer TOKEN` header is required (tokens are "
                                                "made by `capacitysim users add NAME --role ROLE --data DIR`)")
        return u

    def require(u, permission: str, what: str, target: str = ""):
        if not auth.can(u, permission):
            svc.store.journal(what, u, target, {"permission": permission}, outcome="forbidden")
            raise ApiError(403, "Forbidden", f"the role {u['role']!r} may not {what} (needs {permission!r}; roles: "
                                             f"{', '.join(r for r, p in auth.PERMISSIONS.items() if permission in p)})")

    def base_url(request: Request) -> str:
        return str(request.base_url).rstrip("/")

    # --- landing, conformance --------------------------------------------------------------------------
    @app.get("/", summary="Landing page (OGC API - Common)")
    def landing(request: Request, u=Depends(user)):
        b = base_url(request)
        return {"title": "capacitysim", "description": "Capacity demonstrations as a service", "version": __version__,
                "links": [{"href": f"{b}/openapi.json", "rel": "service-desc", "type": "application/vnd.oai.openapi+json;version=3.0"},
                          {"href": f"{b}/conformance", "rel": "http://www.opengis.net/def/rel/ogc/1.0/conformance"},
                          {"href": f"{b}/processes", "rel": "http://www.opengis.net/def/rel/ogc/1.0/processes"},
                          {"href": f"{b}/jobs", "rel": "http://www.opengis.net/def/rel/ogc/1.0/job-list"},
                          {"href": f"{b}/ui", "rel": "alternate", "type": "text/html", "title": "web pages"}]}

    @app.get("/conformance", summary="Conformance classes")
    def conformance(u=Depends(user)):
        return {"conformsTo": ["http://www.opengis.net/spec/ogcapi-processes-1/1.0/conf/core",
                               "http://www.opengis.net/spec/ogcapi-processes-1/1.0/conf/json",
                               "http://www.opengis.net/spec/ogcapi-processes-1/1.0/conf/job-list",
                               "http://www.opengis.net/spec/ogcapi-processes-1/1.0/conf/dismiss"]}

    @app.get("/whoami", summary="The user of the token")
    def whoami(u=Depends(user)):
        return {"name": u["name"], "role": u["role"], "permissions": sorted(auth.PERMISSIONS[u["role"]])}

    # --- processes ---------------------------------------------------------------------------------
    @app.get("/processes", summary="The processes (OGC API - Processes)")
    def processes(request: Request, u=Depends(user)):
        b = base_url(request)
        return {"processes": [p.summary(b) for p in catalogue().values()],
                "links": [{"href": f"{b}/processes", "rel": "self", "type": "application/json"}]}

    def get_process(process_id: str):
        procs = catalogue()
        if process_id not in procs:
            raise ApiError(404, "Not found", f"no process {process_id!r}; processes: {', '.join(procs)}",
                           type_="http://www.opengis.net/def/exceptions/ogcapi-processes-1/1.0/no-such-process")
        return procs[process_id]

    @app.get("/processes/{process_id}", summary="A process: its inputs and outputs (JSON Schema)")
    def process(process_id: str, request: Request, u=Depends(user)):
        return get_process(process_id).describe(base_url(request))

    @app.post("/processes/{process_id}/execution", status_code=200,
              summary="Execute a process: `Prefer: respond-async` answers 201 and a Location; else waits for the result",
              responses={201: {"description": "job created (asynchronous)"}, 400: {"description": "bad input"}})
    def execute(process_id: str, request: Request, body: Any = Body(None, examples=[{"inputs": {
            "model": "synthetic-50", "storm": "binghamton-1yr-24h", "connections": [{"node": "MH0003", "gpd": 5000}]}}]),
            prefer: str | None = Header(None), u=Depends(user)):
        proc = get_process(process_id)
        require(u, "submit", "submit jobs", process_id)
        prepared = prepare(proc.id, body, svc.upload_path)
        job_id = svc.store.create_job(prepared, u, versions(proc.id))
        svc.runner.submit(job_id)
        location = f"/jobs/{job_id}"
        if prefer and "respond-async" in prefer.lower():
            return JSONResponse(job_status(svc.store.job(job_id), base_url(request)), status_code=201,
                                headers={"Location": location, "Preference-Applied": "respond-async"})
        job = svc.runner.wait(job_id, SYNC_WAIT_S)
        if job["status"] == "successful":
            return Response(Path(job["result_path"]).read_bytes(), media_type="application/json",
                            headers={"Location": location})
        if job["status"] == "failed":
            err = job["error"] or {}
            status = {"input": 400, "refused": 409}.get(err.get("type"), 500)
            return problem(status, "Job failed", job["message"], {"Location": location}, job=job_id,
                           error_type=err.get("type"))
        return JSONResponse(job_status(job, base_url(request)), status_code=201, headers={"Location": location})

    # --- jobs --------------------------------------------------------------------------------------
    def get_job(job_id: str, u, what: str = "read jobs"):
        job = svc.store.job(job_id) if re.fullmatch(r"[0-9a-f]{32}", job_id) else None
        if job is None:
            raise ApiError(404, "Not found", f"no job {job_id!r}",
                           type_="http://www.opengis.net/def/exceptions/ogcapi-processes-1/1.0/no-such-job")
        if not auth.may_read_job(u, job):
            svc.store.journal(what, u, job_id, outcome="forbidden")
            raise ApiError(403, "Forbidden", f"job {job_id} belongs to another user; an {u['role']} sees only their own jobs")
        return job

    @app.get("/jobs", summary="Jobs (an engineer's own; every job for the other roles)")
    def jobs(request: Request, status: str | None = None, u=Depends(user)):
        from capacitysim.service.store import STATUSES

        if status is not None and status not in STATUSES:
            raise ServiceInputError("status", status, "one of " + ", ".join(STATUSES))
        rows = svc.store.jobs(owner_id=None if auth.can(u, "read-all") else u["id"], status=status)
        b = base_url(request)
        return {"jobs": [job_status(j, b) for j in rows], "links": [{"href": f"{b}/jobs", "rel": "self"}]}

    @app.get("/jobs/{job_id}", summary="A job's status and progress")
    def job(job_id: str, request: Request, u=Depends(user)):
        from capacitysim.service.tasks import read_progress

        j = get_job(job_id, u)
        info = read_progress(svc.runner.job_dir(j["id"]), j["attempts"]) or {}
        return job_status(j, base_url(request)) | {"stages": info.get("stages", [])}

    @app.get("/jobs/{job_id}/results", summary="The job's result: the JSON document the CLI prints with --json")
    def results(job_id: str, u=Depends(user)):
        j = get_job(job_id, u)
        if j["status"] != "successful":
            if j["status"] == "failed":
                return problem(404, "Job failed", j["message"], job=job_id, status_of_job="failed", error=j["error"])
            raise ApiError(404, "Result not ready", f"job {job_id} is {j['status']}: no result",
                           type_="http://www.opengis.net/def/exceptions/ogcapi-processes-1/1.0/result-not-ready")
        svc.store.journal("read-results", u, job_id, {"result_sha256": j["result_sha256"]})
        return Response(Path(j["result_path"]).read_bytes(), media_type="application/json")

    @app.get("/jobs/{job_id}/report", summary="The job's HTML report", response_class=Response)
    def report(job_id: str, u=Depends(user)):
        j = get_job(job_id, u)
        if j["status"] != "successful" or not j["report_path"]:
            raise ApiError(404, "No report", f"job {job_id} ({j['process']}, {j['status']}) has no report")
        svc.store.journal("read-report", u, job_id)
        return FileResponse(j["report_path"], media_type="text/html; charset=utf-8")

    @app.delete("/jobs/{job_id}", summary="Dismiss a job (cancel it when it has not ended)")
    def dismiss(job_id: str, request: Request, u=Depends(user)):
        j = get_job(job_id, u, "dismiss jobs")
        if not auth.may_dismiss_job(u, j):
            svc.store.journal("dismiss", u, job_id, outcome="forbidden")
            raise ApiError(403, "Forbidden", f"the role {u['role']!r} may not dismiss this job")
        if j["status"] == "dismissed":
            return job_status(j, base_url(request))
        cited = cited_by_bank(j)
        if cited:
            svc.store.journal("dismiss", u, job_id, {"cited_by": cited}, outcome="refused")
            raise ApiError(409, "Refused", f"job {job_id} is cited by the bank ({', '.join(cited)}); its result is "
                                           "evidence and stays")
        svc.runner.cancel(job_id)
        return job_status(svc.store.dismiss(job_id, u), base_url(request))

    def cited_by_bank(j) -> list[str]:
        from capacitysim.service.bank_api import citing

        return citing(svc, j)

    # --- uploads -----------------------------------------------------------------------------------
    @app.post("/uploads", status_code=201, summary="Upload a file (the raw request body); name it with ?filename=",
              openapi_extra={"requestBody": {"content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}}})
    async def upload(request: Request, filename: str = "upload", u=Depends(user)):
        from starlette.concurrency import run_in_threadpool

        require(u, "upload", "upload files")
        data = bytearray()
        async for chunk in request.stream():
            data += chunk
            if len(data) > MAX_UPLOAD_BYTES:
                raise ServiceInputError("body", f"{len(data)} bytes or more", f"at most {MAX_UPLOAD_BYTES} bytes",
                                        "too large")
        if not data:
            raise ServiceInputError("body", "", "the file's bytes (not empty)", "empty")
        name = _SAFE_NAME.sub("_", Path(filename).name)[:100].strip("._") or "upload"
        sha = hashlib.sha256(bytes(data)).hexdigest()
        path = svc.data_dir / "uploads" / sha / name
        existing = svc.store.upload(sha)
        if existing is None:
            await run_in_threadpool(atomic_write_bytes, path, bytes(data))
            existing = await run_in_threadpool(svc.store.add_upload, sha, name, len(data), str(path), u)
        return {"id": f"upload:{sha}", "sha256": sha, "filename": existing["filename"], "size_bytes": existing["size_bytes"]}

    # --- the bank ------------------------------------------------------------------------------------
    from capacitysim.service import bank_api

    bank_api.install(app, svc, user, require)

    # --- journal -----------------------------------------------------------------------------------
    @app.get("/journal", summary="The service's journal (administrator, reviewer)")
    def journal(limit: int = 200, u=Depends(user)):
        require(u, "journal", "read the journal")
        if not 1 <= limit <= 10000:
            raise ServiceInputError("limit", limit, "a whole number in [1, 10000]")
        return {"journal": svc.store.journal_rows(limit=limit)}

    @app.get("/users", summary="The users (administrator)")
    def users(u=Depends(user)):
        require(u, "users", "list users")
        return {"users": svc.store.users()}

    from capacitysim.service import web

    web.install(app, svc, ApiError)
    return app


COOKIE = "capacitysim_session"


def job_status(job: dict, base: str = "") -> dict:
    """A job's status document (OGC statusInfo) with capacitysim's record of what it ran on."""
    links = [{"href": f"{base}/jobs/{job['id']}", "rel": "self", "type": "application/json"}]
    if job["status"] == "successful":
        links.append({"href": f"{base}/jobs/{job['id']}/results", "rel": "http://www.opengis.net/def/rel/ogc/1.0/results",
                      "type": "application/json"})
        if job.get("report_path"):
            links.append({"href": f"{base}/jobs/{job['id']}/report", "rel": "alternate", "type": "text/html",
                          "title": "HTML report"})
    return {"jobID": job["id"], "processID": job["process"], "type": "process", "status": job["status"],
            "progress": job["progress"], "message": job["message"], "created": job["created_at"],
            "started": job["started_at"], "finished": job["finished_at"], "updated": job["updated_at"],
            "owner": job["owner"], "attempts": job["attempts"], "verdict": job["verdict"], "error": job["error"],
            "inputs": job["inputs"], "input_sha256": job["input_sha256"], "result_sha256": job["result_sha256"],
            "versions": job["versions"], "links": links}
