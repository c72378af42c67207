"""The FastAPI application of ``capacitysim serve`` (OGC API - Processes, part 1, with users and the bank).

``create_app(data_dir)`` builds the app; the store, the dask runner and the bank live under ``data_dir``:

* ``service.sqlite``: users (token hashes), web sessions (their ids' hashes), jobs, uploads, the journal
  (:mod:`capacitysim.service.store`), mode 0600;
* ``bank.sqlite``: the flow credit bank (:class:`capacitysim.bank.Ledger`), made mode 0600 when the service opens it;
* ``documents/<id>/``: each job's ``result-<attempt>.json`` (the CLI's ``--json`` text, server paths cut to names),
  ``report-<attempt>.html``; ``jobs/<id>/``: the job's own folder, where its engine runs write;
* ``uploads/<sha256>/<name>``: uploaded files, named in inputs as ``"upload:<sha256>"`` by their uploader only;
* ``secret``: the key of the web pages' CSRF tokens (32 random bytes, mode 0600).

Errors are JSON problem documents (RFC 7807: ``type``, ``title``, ``status``, ``detail``; for a bad input
also ``field``, ``value`` and ``allowed``): 400 bad input, 401 no or unknown credentials, 403 the role may not,
404 no such process/job/application, 409 refused by a rule or by the job's state, 413 a body past
``max_body_bytes``, 429 too many failed authentications from the address or too many of the user's jobs
queued or running. A 500 says only "internal error, reference <id>"; the traceback is logged under that
reference (logger ``capacitysim.service``), never sent.

Security
--------
Every answer carries ``X-Content-Type-Options: nosniff``, ``Cache-Control: no-store``, ``Referrer-Policy:
no-referrer`` and, unless the route sets its own, ``Content-Security-Policy: default-src 'none';
frame-ancestors 'none'`` and ``X-Frame-Options: DENY`` (:class:`Guard`). A job's HTML report (which holds
user-given names) is served with :data:`REPORT_CSP`: a sandbox without scripts, its figures as ``data:``
images and inline SVG. Links (``links`` arrays, ``Location``) are built from the configured base URL
(``serve --base-url``), never from the request's ``Host``. The OpenAPI document (``/openapi.json``) needs a
token like every other route; there is no ``/docs`` page (Swagger UI would run a CDN's scripts in the
service's origin, where the web session's cookie is).

The limits one user could otherwise use to starve the others are the named policies of :class:`Limits`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import logging
import os
import re
import secrets
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import anyio.to_thread
from fastapi import Body, Depends, FastAPI, Header, Request, Security
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse, Response
from fastapi.security import HTTPBearer
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException as StarletteHTTPException

from capacitysim.errors import STATUS_OF_KIND, CapacitysimError, InputError, report_of
from capacitysim.files import atomic_write_bytes
from capacitysim.service import auth
from capacitysim.service.db import PRIVATE_MODE, private_file
from capacitysim.service.jobs import cancel_job
from capacitysim.service.problems import DOCUMENTED, PROBLEM, ApiError, problem  # noqa: F401
from capacitysim.service.processes import ServiceInputError, catalogue, prepare, versions
from capacitysim.service.store import ActiveJobsLimit, Store
from capacitysim.version import __version__

#: Largest upload accepted by default [bytes] (a 10,000-node SWMM model is a few MB): :attr:`Limits.max_upload_bytes`.
MAX_UPLOAD_BYTES = 50 * 1024 * 1024
#: Longest a synchronous execution waits by default before answering with the job (201) [s]: :attr:`Limits.sync_wait_s`.
SYNC_WAIT_S = 600.0
#: The Content-Security-Policy of a job's HTML report: a sandbox (an opaque origin, no scripts, no forms), no
#: fetch of any kind; its CSS is inline and its figures are ``data:`` PNGs or inline SVG (capacitysim.report).
REPORT_CSP = ("sandbox; default-src 'none'; script-src 'none'; style-src 'unsafe-inline'; img-src data:; "
              "frame-ancestors 'none'")
#: The Content-Security-Policy of every answer that does not set its own (JSON: nothing to load, never framed).
DEFAULT_CSP = "default-src 'none'; frame-ancestors 'none'"
#: Headers of every answer (:class:`Guard`); a route's own value of a header wins.
SECURITY_HEADERS = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store", "Referrer-Policy": "no-referrer",
                    "X-Frame-Options": "DENY", "Content-Security-Policy": DEFAULT_CSP}
#: Retry-After of a submission refused by ``max_active_jobs_per_user`` [s] (a hint: jobs end when they end).
JOBS_RETRY_AFTER_S = 10
#: Submissions checked and recorded at once (each in a thread: validation, the store, the runner); the others wait
#: for one without holding a thread, so a burst of submissions never fills the thread pool other requests need.
SUBMISSION_THREADS = 4
#: The header of a synchronous execution answered 201 (as an asynchronous one): ``refused; max_sync_waits=N`` when
#: that many executions wait already, ``timeout; sync_wait_s=S`` when its job did not end within the wait.
SYNC_HEADER = "Capacitysim-Sync-Wait"
#: How often a synchronous execution looks at its job: the first look after the shortest, then doubling to the
#: longest [s] (each look is one read of the store, in the thread pool, never on the event loop).
SYNC_POLL_S = (0.05, 0.5)
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
log = logging.getLogger("capacitysim.service")


@dataclass(frozen=True)
class Limits:
    """The service's limits: named policies, so that one user (or one address) cannot starve the rest.

    Each is a ``capacitysim serve --limit NAME=VALUE`` option; the defaults are the attributes' values.

    Attributes
    ----------
    max_body_bytes : int
        Largest request body of every route but ``/uploads`` [bytes] (default 1 MiB: an execute request's
        inputs are at most a few hundred items of at most 500 characters). Past it: 413, read no further.
    max_upload_bytes : int
        Largest body of ``POST /uploads`` [bytes] (default 50 MiB).
    max_active_jobs_per_user : int
        Jobs of one user ``accepted`` or ``running`` at once (default 4); a submission past it is 429 naming
        the count and the limit.
    max_sync_waits : int
        Synchronous executions waiting for their job at once in this server (default 4). Past it a
        synchronous execution is answered as an asynchronous one (201, the job's status, ``Location``). The
        waits are asynchronous: they hold neither the event loop nor a thread of the pool.
    sync_wait_s : float
        Longest a synchronous execution waits for its job before answering 201 with its status [s] (default 600).
    session_idle_s : float
        A web session ends after this long without a request [s] (default 1800: 30 minutes).
    session_absolute_s : float
        A web session ends this long after its sign-in, used or not [s] (default 43200: 12 hours).
    auth_failures_max : int
        Failed authentications (a wrong, malformed or revoked token or session cookie, a failed sign-in) of one
        client address in ``auth_failures_window_s`` (default 10); at that many the address is answered 429
        with ``Retry-After``, whatever it sends, until the oldest failure leaves the window. Counted in each
        server process's memory.
    auth_failures_window_s : float
        The window of ``auth_failures_max`` [s] (default 300: 5 minutes).
    """

    max_body_bytes: int = 1024 * 1024
    max_upload_bytes: int = MAX_UPLOAD_BYTES
    max_active_jobs_per_user: int = 4
    max_sync_waits: int = 4
    sync_wait_s: float = SYNC_WAIT_S
    session_idle_s: float = 1800.0
    session_absolute_s: float = 43200.0
    auth_failures_max: int = 10
    auth_failures_window_s: float = 300.0

    def __post_init__(self):
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            whole = f.type in (int, "int")
            ok = (isinstance(v, int) and not isinstance(v, bool) and v >= 1) if whole else \
                (isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < float("inf"))
            if not ok:
                raise InputError(f"--limit {f.name}: {v!r} is not allowed; allowed: "
                                 + ("a whole number, 1 or more" if whole else "a positive number of seconds"))

    @classmethod
    def parse(cls, items) -> "Limits":
        """Limits from ``NAME=VALUE`` texts (``serve --limit``); the others keep their defaults.

        Raises
        ------
        InputError
            An unknown name, or a value that is not allowed (naming ``--limit``, the value and what is allowed).
        """
        names = {f.name: f for f in dataclasses.fields(cls)}
        values = {}
        for item in items or ():
            name, sep, text = str(item).partition("=")
            name = name.strip()
            if not sep or name not in names:
                raise InputError(f"--limit: {str(item)[:80]!r} is not allowed; allowed: NAME=VALUE with NAME one of "
                                 f"{', '.join(names)}")
            whole = names[name].type in (int, "int")
            try:
                values[name] = int(text) if whole else float(text)
            except ValueError:
                raise InputError(f"--limit {name}: {text[:40]!r} is not allowed; allowed: "
                                 + ("a whole number, 1 or more" if whole else "a positive number of seconds")) from None
        return cls(**values)

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def normal_base_url(url: str, option: str = "--base-url") -> str:
    """A base URL for links: ``http(s)://HOST[:PORT][/PREFIX]``, without a trailing slash.

    Raises
    ------
    InputError
        Not an http or https URL with a host, or with a query, a fragment or user information.
    """
    text = str(url).strip()
    try:
        parts = urlsplit(text)
        _ = parts.port
    except ValueError:
        parts = None
    if (parts is None or parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment
            or "@" in parts.netloc or not text.isascii()):
        raise InputError(f"{option}: {text[:100]!r} is not allowed; allowed: http://HOST[:PORT][/PREFIX] or "
                         "https://HOST[:PORT][/PREFIX] (the address clients reach the service at)")
    return text.rstrip("/")


class Service:
    """What the app's handlers share: the store, the runner, the bank file, the CSRF key, the limits.

    Parameters
    ----------
    data_dir : path
        The data folder (created when missing).
    scheduler, workers
        The dask runner's (``serve --scheduler``, ``--workers``).
    start_runner : bool
        Start the runner with the app.
    store : Store, optional
        Default the SQLite file ``<data>/service.sqlite``.
    limits : Limits, optional
        The service's limits (default :class:`Limits`).
    base_url : str, optional
        Where clients reach the service: the base of every link (default ``http://127.0.0.1:8000``).
    """

    def __init__(self, data_dir, *, scheduler=None, workers=None, start_runner: bool = True, store=None,
                 limits: Limits | None = None, base_url: str | None = None):
        from capacitysim.service.runner import Runner

        self.data_dir = Path(data_dir).resolve()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.store = store if store is not None else Store(self.data_dir / "service.sqlite")
        self.bank_path = self.data_dir / "bank.sqlite"
        if self.bank_path.is_file():
            private_file(self.bank_path)
        self.secret = load_secret(self.data_dir)
        self.runner = Runner(self.store, self.data_dir, scheduler=scheduler, workers=workers)
        self.start_runner = start_runner
        self.limits = limits or Limits()
        self.base_url = normal_base_url(base_url or "http://127.0.0.1:8000")
        self.throttle = auth.Throttle(self.limits.auth_failures_max, self.limits.auth_failures_window_s)
        #: Synchronous executions waiting now (policy ``max_sync_waits``; changed on the event loop only).
        self.sync_waiting = 0
        self._hide = None

    def hide(self, text: str) -> str:
        """A message with no server path in it: a job's document (``DATA/documents/<id>/result-1.json``, the bank's
        evidence) named ``job <id> (result-1.json)``, every other path cut to its name
        (:class:`capacitysim.service.tasks.PathRedactor`), as a job's own messages are."""
        if self._hide is None:
            from capacitysim.service.tasks import PathRedactor

            docs = re.escape(str(self.data_dir / "documents"))
            self._hide = (re.compile(docs + r"/([0-9a-f]{32})/([A-Za-z0-9._-]+)"), PathRedactor(self.data_dir / "jobs" / "-"))
        jobs, redact = self._hide
        return redact(jobs.sub(lambda m: f"job {m.group(1)} ({m.group(2)})", text))

    def save_upload(self, user, filename: str, data: bytes) -> dict:
        """Store an uploaded file as ``user``'s (``POST /uploads`` and the pages' upload form): under
        ``uploads/<sha256>/<safe name>``, written atomically; returns the upload's record as ``POST /uploads``
        answers it. Empty bytes are a :class:`ServiceInputError`. The caller has checked the role."""
        if not data:
            raise ServiceInputError("body", "", "the file's bytes (not empty)", "empty")
        name = _SAFE_NAME.sub("_", Path(filename).name)[:100].strip("._") or "upload"
        sha = hashlib.sha256(bytes(data)).hexdigest()
        path = self.data_dir / "uploads" / sha / name
        atomic_write_bytes(path, bytes(data))
        rec = self.store.add_upload(sha, name, len(data), str(path), user)
        return {"id": f"upload:{sha}", "sha256": sha, "filename": rec["filename"], "size_bytes": rec["size_bytes"]}

    def uploads_of(self, user):
        """``uploads(sha256) -> Path | None`` of one user (for :func:`capacitysim.service.processes.prepare`):
        only that user's own uploads; another user's upload of a hash is answered as no upload."""
        owner = user["id"]

        def uploads(sha: str):
            up = self.store.upload(sha, owner)
            return None if up is None else Path(up["path"])

        return uploads

    def ledger(self, user=None):
        from capacitysim.bank import Ledger

        if not self.bank_path.is_file():
            raise ApiError(404, "No bank", "this service has no credit bank yet (the first `capacitysim users add NAME "
                                           "--role administrator` creates it)")
        private_file(self.bank_path)  # made by the CLI, perhaps since the server started
        return Ledger(self.bank_path, actor=None if user is None else user["name"])

    # --- failed authentications (policy auth_failures_max per auth_failures_window_s) ------------------
    def check_throttle(self, request) -> None:
        """Refuse (429, ``Retry-After``) a client address with too many failed authentications in the window."""
        address = auth.client_address(request)
        retry = self.throttle.retry_after(address)
        if retry is not None:
            lim = self.limits
            raise ApiError(429, "Too many failed authentications",
                           f"{lim.auth_failures_max} failed authentications from {address} in {lim.auth_failures_window_s:g} s "
                           f"(service policy auth_failures_max): try again in {retry} s",
                           headers={"Retry-After": str(retry)}, policy="auth_failures_max",
                           limit=lim.auth_failures_max, retry_after_s=retry)

    def failed(self, request, action: str, via: str, reason: str) -> None:
        """Journal a failed authentication (``action``, outcome ``unauthorized``, the client's address, how and
        why) and count it against the address."""
        address = auth.client_address(request)
        self.throttle.fail(address)
        self.store.journal(action, auth.ANONYMOUS, request.url.path[:200],
                           {"client": address, "via": via, "reason": reason}, outcome="unauthorized")


def load_secret(data_dir: Path) -> bytes:
    """The server's CSRF key (``<data>/secret``, 32 random bytes, created once, mode 0600 from its creation).

    Created with ``O_EXCL``: servers starting at once on one data folder all read the one that was made first.
    """
    p = Path(data_dir) / "secret"
    if not p.is_file():
        try:
            fd = os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, PRIVATE_MODE)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "wb") as fh:
                fh.write(secrets.token_bytes(32))
                fh.flush()
                os.fsync(fh.fileno())
    if p.stat().st_mode & 0o777 != PRIVATE_MODE:
        os.chmod(p, PRIVATE_MODE)
    for _ in range(100):  # another server's write of it, under way
        data = p.read_bytes()
        if len(data) == 32:
            return data
        time.sleep(0.01)
    raise CapacitysimError(f"{p} is not a 32-byte key: remove it and start the server again (a new key is made; web "
                           "sessions' forms must be reloaded)")


#: The routes whose body is a file (limit ``max_upload_bytes``): the API's upload and the pages' upload form.
UPLOAD_PATHS = ("/uploads", "/ui/uploads")


class _BodyTooLarge(Exception):
    """Raised into the application by :class:`Guard` when a body passes its limit while it is read."""


class Guard:
    """ASGI middleware of every HTTP answer: the security headers (:data:`SECURITY_HEADERS`) and the body limits.

    A body is limited to ``max_upload_bytes`` on ``/uploads`` and ``max_body_bytes`` elsewhere (policies of
    :class:`Limits`): a ``Content-Length`` past the limit is answered 413 before any byte of the body is read; a
    body without one (chunked) is counted while it is read and answered 413 as soon as it passes the limit,
    whatever the route was doing with it.
    """

    def __init__(self, app, limits: Limits):
        self.app, self.limits = app, limits

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        upload = scope["path"] in UPLOAD_PATHS
        limit = self.limits.max_upload_bytes if upload else self.limits.max_body_bytes
        policy = "max_upload_bytes" if upload else "max_body_bytes"

        async def secured(message):
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for k, v in SECURITY_HEADERS.items():
                    headers.setdefault(k, v)
            await send(message)

        async def too_large(seen: str):
            await problem(413, "Request too large", f"the request's body is {seen} bytes; service policy {policy} "
                                                    f"allows at most {limit} bytes", policy=policy,
                          limit=limit)(scope, receive, secured)

        length = dict(scope["headers"]).get(b"content-length")
        if length is not None:
            try:
                n = int(length)
            except ValueError:
                n = -1
            if n > limit:
                return await too_large(str(n))
        got = 0
        exceeded = False
        started = False

        async def counted():
            nonlocal got, exceeded
            message = await receive()
            if message["type"] == "http.request":
                got += len(message.get("body", b""))
                if got > limit:
                    exceeded = True
                    raise _BodyTooLarge()
            return message

        async def answer(message):
            nonlocal started
            if exceeded:
                return  # the route's answer to the cut body is dropped: the 413 below is the answer
            if message["type"] == "http.response.start":
                started = True
            await secured(message)

        try:
            await self.app(scope, counted, answer)
        except Exception:
            if not exceeded:
                raise
        if exceeded and not started:
            await too_large(f"more than {limit}")


def create_app(data_dir, *, scheduler: str | None = None, workers: int | None = None, start_runner: bool = True,
               store: Store | None = None, limits: Limits | None = None, base_url: str | None = None) -> FastAPI:
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
    limits : Limits, optional
        The service's limits (``serve --limit NAME=VALUE``); default :class:`Limits`.
    base_url : str, optional
        Where clients reach the service (``serve --base-url``): every link and ``Location`` starts with it, never
        with the request's ``Host``. Default ``http://127.0.0.1:8000``.
    """
    svc = Service(data_dir, scheduler=scheduler, workers=workers, start_runner=start_runner, store=store,
                  limits=limits, base_url=base_url)
    lim = svc.limits

    def warm() -> None:
        """What every submission reads, made once before the first request: the catalogue and each process's
        versions (the engine's bindings imported), so no request pays for them while others wait."""
        for process_id in catalogue():
            versions(process_id)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        await run_in_threadpool(warm)
        if svc.start_runner:
            await run_in_threadpool(svc.runner.start)
        try:
            yield
        finally:
            if svc.start_runner:
                svc.runner.stop()

    app = FastAPI(title="capacitysim", version=__version__, lifespan=lifespan, openapi_url=None, docs_url=None,
                  redoc_url=None, redirect_slashes=False, responses=DOCUMENTED,
                  description="Hydraulic simulation service for capacity demonstrations (OGC API - Processes, part 1), "
                              "with users, roles and the flow credit bank's sign-off. Every request needs "
                              "`Authorization: Bearer TOKEN` (`capacitysim users add`); this document too.")
    app.state.svc = svc
    app.add_middleware(Guard, limits=lim)

    # --- errors: every 4xx/5xx a JSON problem document ----------------------------------------------
    @app.exception_handler(ApiError)
    async def _api_error(request, exc: ApiError):
        headers = dict(exc.headers or {})
        if exc.status == 401:
            headers.setdefault("WWW-Authenticate", "Bearer")
        return problem(exc.status, exc.title, exc.detail, headers or None, **exc.extra)

    @app.exception_handler(ServiceInputError)
    async def _input(request, exc: ServiceInputError):
        return problem(400, "Bad input", str(exc), **exc.to_dict())


    @app.exception_handler(ActiveJobsLimit)
    async def _too_many_jobs(request, exc: ActiveJobsLimit):
        return problem(exc.http_status, exc.title, str(exc), {"Retry-After": str(JOBS_RETRY_AFTER_S)},
                       policy="max_active_jobs_per_user", active=exc.active, limit=exc.limit)

    @app.exception_handler(CapacitysimError)
    async def _ours(request, exc: CapacitysimError):
        r = report_of(exc)  # the one mapping of every error (capacitysim.errors): the CLI's exit code, here its status
        return problem(r["http_status"], r["title"], svc.hide(str(exc)))

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
        ref = uuid.uuid4().hex[:12]
        log.error("internal error, reference %s: %s %s", ref, request.method, request.url.path, exc_info=exc)
        return problem(500, "Internal error", f"internal error, reference {ref} (the server's log has the details)",
                       reference=ref)

    # --- authentication ------------------------------------------------------------------------------
    bearer = HTTPBearer(auto_error=False, scheme_name="bearer",
                        description="`Authorization: Bearer TOKEN` (`capacitysim users add NAME --role ROLE`); a GET "
                                    "also takes the web session's cookie")

    def user(request: Request, _declared=Security(bearer)):
        """The user of the request: its bearer token; for a GET or HEAD without one, the web session's cookie.

        A refused credential (malformed, unknown, revoked; a session cookie of no session) is journaled with the
        client's address and counted by the throttle; an address past ``auth_failures_max`` is answered 429.
        """
        svc.check_throttle(request)
        header = request.headers.get("authorization")
        if header is not None:
            scheme, _, value = header.partition(" ")
            u, reason = (auth.check_token(svc.store, value.strip()) if scheme.lower() == "bearer"
                         else (None, "not a Bearer authorization"))
            if u is None:
                svc.failed(request, "authenticate", "bearer", "malformed" if reason == "missing" else reason)
                raise ApiError(401, "Unauthorized", "the bearer token is not valid (tokens are made by `capacitysim "
                                                    "users add NAME --role ROLE --data DIR`)")
            return u
        cookie = request.cookies.get(COOKIE) if request.method in ("GET", "HEAD") else None
        if cookie is not None:  # the web pages' session, for reading only (capacitysim.service.web)
            u, sess = auth.check_session(svc.store, cookie, idle_s=lim.session_idle_s, absolute_s=lim.session_absolute_s)
            if u is not None:
                return u
            if sess in ("malformed", "unknown"):
                svc.failed(request, "authenticate", "session cookie", sess)
            raise ApiError(401, "Unauthorized", f"the web session is not valid ({sess}): sign in again at /ui/login, or "
                                                "send `Authorization: Bearer TOKEN`")
        raise ApiError(401, "Unauthorized", "a valid `Authorization: Bearer TOKEN` header is required (tokens are "
                                            "made by `capacitysim users add NAME --role ROLE --data DIR`)")

    def require(u, permission: str, what: str, target: str = ""):
        if not auth.can(u, permission):
            svc.store.journal(what, u, target, {"permission": permission}, outcome="forbidden")
            raise ApiError(403, "Forbidden", f"the role {u['role']!r} may not {what} (needs {permission!r}; roles: "
                                             f"{', '.join(r for r, p in auth.PERMISSIONS.items() if permission in p)})")

    base = svc.base_url

    # --- the OpenAPI document (behind a token, like everything else) ----------------------------------
    @app.get("/openapi.json", include_in_schema=False)
    def openapi_document(u=Depends(user)):
        return JSONResponse(app.openapi())

    # --- landing, conformance --------------------------------------------------------------------------
    @app.get("/", summary="Landing page (OGC API - Common); a browser without a token goes to the web pages")
    def landing(request: Request, _declared=Security(bearer)):
        if "authorization" not in request.headers and "text/html" in request.headers.get("accept", ""):
            return RedirectResponse("/ui", status_code=303)  # a browser: the pages (sign-in first), not a JSON 401
        user(request)
        return {"title": "capacitysim", "description": "Capacity demonstrations as a service", "version": __version__,
                "links": [{"href": f"{base}/openapi.json", "rel": "service-desc", "type": "application/vnd.oai.openapi+json;version=3.0"},
                          {"href": f"{base}/conformance", "rel": "http://www.opengis.net/def/rel/ogc/1.0/conformance"},
                          {"href": f"{base}/processes", "rel": "http://www.opengis.net/def/rel/ogc/1.0/processes"},
                          {"href": f"{base}/jobs", "rel": "http://www.opengis.net/def/rel/ogc/1.0/job-list"},
                          {"href": f"{base}/ui", "rel": "alternate", "type": "text/html", "title": "web pages"}]}

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
    def processes(u=Depends(user)):
        return {"processes": [p.summary(base) for p in catalogue().values()],
                "links": [{"href": f"{base}/processes", "rel": "self", "type": "application/json"}]}

    def get_process(process_id: str):
        procs = catalogue()
        if process_id not in procs:
            raise ApiError(404, "Not found", f"no process {process_id[:100]!r}; processes: {', '.join(procs)}",
                           type_="http://www.opengis.net/def/exceptions/ogcapi-processes-1/1.0/no-such-process")
        return procs[process_id]

    @app.get("/processes/{process_id}", summary="A process: its inputs and outputs (JSON Schema)")
    def process(process_id: str, u=Depends(user)):
        return get_process(process_id).describe(base)

    submit_limiter = []

    def submissions():
        """The limiter of the submissions' threads (made on the event loop, at the first submission)."""
        if not submit_limiter:
            submit_limiter.append(anyio.CapacityLimiter(SUBMISSION_THREADS))
        return submit_limiter[0]

    def submit_job(process_id: str, body, u) -> str:
        """Check, record and queue a job of ``u`` (in the thread pool: validation and the store block)."""
        require(u, "submit", "submit jobs", process_id)
        prepared = prepare(process_id, body, svc.uploads_of(u))
        job_id = svc.store.create_job(prepared, u, versions(process_id), max_active=lim.max_active_jobs_per_user)
        svc.runner.submit(job_id)
        return job_id

    async def wait_final(job_id: str, timeout_s: float) -> dict:
        """The job's record once it is final, or when ``timeout_s`` has passed: an asynchronous wait (each look at
        the store in the thread pool), so a waiting request holds no thread and never the event loop."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        delay, longest = SYNC_POLL_S
        while True:
            job = await run_in_threadpool(svc.store.job, job_id)
            left = deadline - loop.time()
            if job["status"] in ("successful", "failed", "dismissed") or left <= 0:
                return job
            await asyncio.sleep(min(delay, left))
            delay = min(delay * 2, longest)

    @app.post("/processes/{process_id}/execution", status_code=200,
              summary="Execute a process: `Prefer: respond-async` answers 201 and a Location; else waits for the result",
              responses={201: {"description": "job created (asynchronous; also a synchronous execution past the "
                                              "policy max_sync_waits or sync_wait_s)"}})
    async def execute(process_id: str, body: Any = Body(None, examples=[{"inputs": {
            "model": "synthetic-50", "storm": "binghamton-1yr-24h", "connections": [{"node": "MH0003", "gpd": 5000}]}}]),
            prefer: str | None = Header(None), u=Depends(user)):
        proc = get_process(process_id)
        job_id = await anyio.to_thread.run_sync(submit_job, proc.id, body, u, limiter=submissions())
        location = f"{base}/jobs/{job_id}"
        wants_async = bool(prefer and "respond-async" in prefer.lower())
        if wants_async or svc.sync_waiting >= lim.max_sync_waits:
            headers = {"Location": location}
            if wants_async:
                headers["Preference-Applied"] = "respond-async"
            else:
                headers[SYNC_HEADER] = f"refused; max_sync_waits={lim.max_sync_waits}"
            job = await run_in_threadpool(svc.store.job, job_id)
            return JSONResponse(job_status(job, base), status_code=201, headers=headers)
        svc.sync_waiting += 1
        try:
            job = await wait_final(job_id, lim.sync_wait_s)
        finally:
            svc.sync_waiting -= 1
        if job["status"] == "successful":
            data = await run_in_threadpool(Path(job["result_path"]).read_bytes)
            return Response(data, media_type="application/json", headers={"Location": location})
        if job["status"] == "failed":
            err = job["error"] or {}
            status = STATUS_OF_KIND.get(err.get("type"), 500)
            detail = job["message"] if status < 500 else (f"the job failed inside the service ({err.get('type')}); "
                                                          f"its record: GET {location}")
            return problem(status, "Job failed", detail, {"Location": location}, job=job_id,
                           error_type=err.get("type"))
        return JSONResponse(job_status(job, base), status_code=201,
                            headers={"Location": location, SYNC_HEADER: f"timeout; sync_wait_s={lim.sync_wait_s:g}"})

    # --- jobs --------------------------------------------------------------------------------------
    def get_job(job_id: str, u, what: str = "read jobs"):
        job = svc.store.job(job_id) if re.fullmatch(r"[0-9a-f]{32}", job_id) else None
        if job is None:
            raise ApiError(404, "Not found", f"no job {job_id[:100]!r}",
                           type_="http://www.opengis.net/def/exceptions/ogcapi-processes-1/1.0/no-such-job")
        if not auth.may_read_job(u, job):
            svc.store.journal(what, u, job_id, outcome="forbidden")
            raise ApiError(403, "Forbidden", f"job {job_id} belongs to another user; an {u['role']} sees only their own jobs")
        return job

    @app.get("/jobs", summary="Jobs (an engineer's own; every job for the other roles)")
    def jobs(status: str | None = None, u=Depends(user)):
        from capacitysim.service.store import STATUSES

        if status is not None and status not in STATUSES:
            raise ServiceInputError("status", status, "one of " + ", ".join(STATUSES))
        rows = svc.store.jobs(owner_id=None if auth.can(u, "read-all") else u["id"], status=status)
        return {"jobs": [job_status(j, base) for j in rows], "links": [{"href": f"{base}/jobs", "rel": "self"}]}

    @app.get("/jobs/{job_id}", summary="A job's status and progress")
    def job(job_id: str, u=Depends(user)):
        from capacitysim.service.tasks import read_progress

        j = get_job(job_id, u)
        info = read_progress(svc.runner.job_dir(j["id"]), j["attempts"]) or {}
        return job_status(j, base) | {"stages": info.get("stages", [])}

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

    @app.get("/jobs/{job_id}/report", response_class=Response,
             summary="The job's HTML report (served sandboxed: no script runs, nothing is fetched)")
    def report(job_id: str, u=Depends(user)):
        j = get_job(job_id, u)
        if j["status"] != "successful" or not j["report_path"]:
            raise ApiError(404, "No report", f"job {job_id} ({j['process']}, {j['status']}) has no report")
        svc.store.journal("read-report", u, job_id)
        return FileResponse(j["report_path"], media_type="text/html; charset=utf-8",
                            headers={"Content-Security-Policy": REPORT_CSP, "X-Frame-Options": "DENY",
                                     "Cache-Control": "no-store"})

    @app.delete("/jobs/{job_id}", summary="Dismiss a job (cancel it when it has not ended)")
    def dismiss(job_id: str, u=Depends(user)):
        return job_status(cancel_job(svc, u, job_id), base)

    # --- uploads -----------------------------------------------------------------------------------
    @app.post("/uploads", status_code=201, summary="Upload a file (the raw request body); name it with ?filename=",
              openapi_extra={"requestBody": {"content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}}})
    async def upload(request: Request, filename: str = "upload", u=Depends(user)):
        """The body is read as it comes (:class:`Guard` stops it past ``max_upload_bytes``: 413). The record is the
        user's own: bytes another user sent already make a record of this user's, and the answer is the same as
        for bytes nobody sent (the file is written either way)."""
        await run_in_threadpool(require, u, "upload", "upload files")
        data = bytearray()
        async for chunk in request.stream():
            data += chunk
        return await run_in_threadpool(svc.save_upload, u, filename, bytes(data))

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
