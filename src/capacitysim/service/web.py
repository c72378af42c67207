"""Server-rendered web pages under ``/ui``: sign in, submit a demonstration, watch it, read the verdict and
report; the administrator's queue of deposits, withdrawals and transfers awaiting sign-off; the capacity register
(``/ui/bank/register``: per plant and per registered model, the committed flows).

Signing in on ``/ui/login`` with the bearer token makes a server-side session (:meth:`Store.create_session
<capacitysim.service.store.Store.create_session>`): a new random id, in an ``HttpOnly``, ``SameSite=Strict``
cookie (``Secure`` when the base URL is https), of which the store keeps only the SHA-256. The token never goes
into the cookie. A session ends at sign-out (a POST with the CSRF token), after ``session_idle_s`` without a
request or ``session_absolute_s`` after the sign-in (service policies of :class:`capacitysim.service.app.Limits`),
or when its user is revoked. A sign-in ends the session the browser had.

The API accepts the session's cookie for reading only (GET: the job page's links to the result and the report):
every change through a page is a form POST to ``/ui/...`` carrying the session's CSRF token (HMAC of the
session's key under the server's secret), checked before anything is done; the sign-in form uses a
double-submit token. A failed sign-in, or a cookie of no session, is journaled with the client's address and
counted by the throttle of failed authentications (policy ``auth_failures_max``: 429 past it). Every value
shown is escaped (Jinja2 autoescape). The pages call the same functions as the API (validation, jobs, the bank).
"""

from __future__ import annotations

import json
import re
import secrets
from pathlib import Path
from typing import NamedTuple

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse

from capacitysim.errors import CapacitysimError, InputError
from capacitysim.service import auth
from capacitysim.service.processes import ServiceInputError, bundled, prepare, versions
from capacitysim.service.store import ActiveJobsLimit
from capacitysim.service.tasks import read_progress

COOKIE = "capacitysim_session"
LOGIN_CSRF_COOKIE = "capacitysim_login_csrf"
#: Seconds between automatic reloads of a job page while the job runs.
REFRESH_S = 2
#: Checks listed on a job page (failed ones first); the rest are in the result document.
MAX_CHECKS_SHOWN = 50
#: What the bank page's sign-off form decides: a withdrawal (field ``application``), a deposit (field ``id``: its
#: txn) or a transfer (field ``id``: ``transfer-N``).
SIGN_OFF_KINDS = ("withdrawal", "deposit", "transfer")
#: A job's id (32 hex digits): anything else is no job, before the store is asked.
JOB_ID = re.compile(r"[0-9a-f]{32}")
#: The Content-Security-Policy of the pages: nothing but this origin, inline CSS, never framed, forms only here.
PAGE_CSP = "default-src 'self'; style-src 'unsafe-inline'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"


class Signed(NamedTuple):
    """A signed-in request: the user and the session (the CSRF token of its forms is :attr:`csrf`)."""

    user: dict
    session: dict
    csrf: str


def install(app, svc, ApiError) -> None:
    """Add the ``/ui`` pages to ``app``."""
    from capacitysim.service.pages import environment

    env = environment()
    lim = svc.limits
    secure = svc.base_url.startswith("https://")

    def render(name: str, status: int = 200, **ctx) -> HTMLResponse:
        ctx = {"user": None, "csrf": "", "error": None, "refresh": None, "title": "capacitysim"} | ctx
        return HTMLResponse(env.get_template(name).render(**ctx), status_code=status,
                            headers={"Cache-Control": "no-store", "X-Frame-Options": "DENY",
                                     "Content-Security-Policy": PAGE_CSP})

    def page(name: str, who: Signed, status: int = 200, **ctx) -> HTMLResponse:
        return render(name, status, user=who.user, csrf=who.csrf, **ctx)

    def session(request: Request) -> Signed | None:
        """The request's live session, or None (no cookie, or one of no live session: the page says sign in).

        A cookie that is malformed or names no session is a failed authentication (journaled, counted); one of a
        session that has ended or timed out is not (the session is known).
        """
        svc.check_throttle(request)
        cookie = request.cookies.get(COOKIE)
        if cookie is None:
            return None
        user, sess = auth.check_session(svc.store, cookie, idle_s=lim.session_idle_s, absolute_s=lim.session_absolute_s)
        if user is None:
            if sess in ("malformed", "unknown"):
                svc.failed(request, "authenticate", "session cookie", sess)
            return None
        return Signed(user, sess, auth.csrf_token(svc.secret, sess))

    def to_login(request: Request | None = None) -> RedirectResponse:
        resp = RedirectResponse("/ui/login", status_code=303)
        if request is not None and COOKIE in request.cookies:
            resp.delete_cookie(COOKIE, path="/", secure=secure, httponly=True, samesite="strict")
        return resp

    # The POST handlers read their form on the event loop, then do the rest (the store, the bank: blocking
    # database calls, on PostgreSQL possibly a wait for a pooled connection) in the thread pool (:func:`threaded`).
    def checked_form(request: Request, who: Signed, form):
        if not auth.csrf_ok(svc.secret, who.session, form.get("csrf")):
            svc.store.journal("csrf", who.user, request.url.path, outcome="forbidden")
            raise ApiError(403, "Forbidden", "the form's CSRF token is missing or wrong: reload the page and try again")
        return form

    def login_form(status: int = 200, error: str | None = None) -> HTMLResponse:
        tok = secrets.token_urlsafe(24)
        resp = render("login.html", status, title="Sign in", csrf=tok, error=error)
        resp.set_cookie(LOGIN_CSRF_COOKIE, tok, httponly=True, samesite="strict", path="/ui/login", secure=secure)
        return resp

    @app.get("/ui/login", response_class=HTMLResponse, include_in_schema=False)
    def login_page(request: Request):
        return login_form()

    def threaded(handler):
        """An async endpoint that awaits the request's form, then runs ``handler(request, form)`` in the thread pool."""
        from starlette.concurrency import run_in_threadpool

        async def endpoint(request: Request):
            form = await request.form()
            return await run_in_threadpool(handler, request, form)

        endpoint.__name__ = handler.__name__
        return endpoint

    @app.post("/ui/login", include_in_schema=False)
    @threaded
    def login(request: Request, form):
        svc.check_throttle(request)
        pre = request.cookies.get(LOGIN_CSRF_COOKIE)
        sent = form.get("csrf")
        if not pre or not isinstance(sent, str) or not pre.isascii() or not sent.isascii() \
                or not secrets.compare_digest(pre, sent):
            raise ApiError(403, "Forbidden", "the sign-in form's CSRF token is missing or wrong: reload the page")
        token = form.get("token")
        user, reason = auth.check_token(svc.store, token.strip() if isinstance(token, str) else None)
        if user is None:
            svc.failed(request, "sign-in", "sign-in form", reason)
            return login_form(401, "That token is not valid.")
        old = request.cookies.get(COOKIE)
        if old is not None and auth.SESSION_RE.fullmatch(old):  # a new session for every sign-in (no fixation)
            svc.store.end_session(auth.session_key(old), "signed in again")
        sid = auth.new_session_id()
        svc.store.create_session(auth.session_key(sid), user, auth.client_address(request))
        resp = RedirectResponse("/ui", status_code=303)
        resp.set_cookie(COOKIE, sid, httponly=True, samesite="strict", path="/", secure=secure)
        resp.delete_cookie(LOGIN_CSRF_COOKIE, path="/ui/login")
        return resp

    @app.post("/ui/logout", include_in_schema=False)
    @threaded
    def logout(request: Request, form):
        who = session(request)
        if who is None:
            return to_login(request)
        checked_form(request, who, form)
        svc.store.end_session(who.session["id_sha256"], "sign-out", who.user)
        resp = to_login()
        resp.delete_cookie(COOKIE, path="/", secure=secure, httponly=True, samesite="strict")
        return resp

    @app.get("/ui", response_class=HTMLResponse, include_in_schema=False)
    def home(request: Request):
        who = session(request)
        if who is None:
            return to_login(request)
        rows = svc.store.jobs(owner_id=None if auth.can(who.user, "read-all") else who.user["id"], limit=200)
        return page("jobs.html", who, title="Jobs", jobs=rows)

    def submit_form(who: Signed, form=None, error=None, status=200):
        form = form or {"model": "synthetic-50", "storm": "binghamton-1yr-24h", "connections": "", "remediations": ""}
        return page("submit.html", who, status, title="New capacity demonstration", models=sorted(bundled("model")),
                    storms=sorted(bundled("storm")), form=form, error=error)

    @app.get("/ui/submit", response_class=HTMLResponse, include_in_schema=False)
    def submit_page(request: Request):
        who = session(request)
        if who is None:
            return to_login(request)
        if not auth.can(who.user, "submit"):
            return page("jobs.html", who, 403, title="Jobs", jobs=[],
                        error=f"The role {who.user['role']!r} does not submit jobs.")
        return submit_form(who)

    @app.post("/ui/submit", include_in_schema=False)
    @threaded
    def submit(request: Request, form):
        who = session(request)
        if who is None:
            return to_login(request)
        checked_form(request, who, form)
        user = who.user
        values = {k: str(form.get(k, "")) for k in ("model", "storm", "connections", "remediations")}
        if not auth.can(user, "submit"):
            svc.store.journal("submit jobs", user, "capacity-demonstration", outcome="forbidden")
            return submit_form(who, values, f"The role {user['role']!r} does not submit jobs.", 403)
        try:
            inputs = {"model": values["model"], "connections": _connections(values["connections"]),
                      "remediations": [r.strip() for r in values["remediations"].splitlines() if r.strip()]}
            if values["storm"]:
                inputs["storm"] = values["storm"]
            if not inputs["remediations"]:
                del inputs["remediations"]
            prepared = prepare("capacity-demonstration", {"inputs": inputs}, svc.uploads_of(user))
        except ServiceInputError as exc:
            return submit_form(who, values, str(exc), 400)
        try:
            job_id = svc.store.create_job(prepared, user, versions("capacity-demonstration"),
                                          max_active=lim.max_active_jobs_per_user)
        except ActiveJobsLimit as exc:
            return submit_form(who, values, str(exc), 429)
        svc.runner.submit(job_id)
        return RedirectResponse(f"/ui/jobs/{job_id}", status_code=303)

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

    def bank_page(who: Signed, error=None, status=200):
        from capacitysim.service.bank_api import (
            jobs_citing_in,
            ledger_deposits,
            ledger_transfers,
        )

        with svc.ledger() as lg:
            rows = [w | jobs_citing_in(svc.store, w) for w in lg.withdrawals()]
            deposits, transfers = ledger_deposits(lg), ledger_transfers(lg)
            balances = lg.balances()
        pending = [w for w in rows if w["signoff_status"] == "pending"]
        decided = [w for w in rows if w["signoff_status"] != "pending"]
        return page("bank.html", who, status, title="Flow credit bank",
                    pending=pending, decided=decided, balances=balances, can_sign=auth.can(who.user, "sign-off"), error=error,
                      pending_deposits=[d for d in deposits if d["signoff_status"] == "pending"],
                      decided_deposits=[d for d in deposits if d["signoff_status"] != "pending"],
                      pending_transfers=[t for t in transfers if t["signoff_status"] == "pending"],
                      decided_transfers=[t for t in transfers if t["signoff_status"] != "pending"])

    @app.get("/ui/bank", response_class=HTMLResponse, include_in_schema=False)
    def bank(request: Request):
        who = session(request)
        if who is None:
            return to_login(request)
        return bank_page(who)

    def register_page(who: Signed, error=None, status=200):
        """The capacity register (issue 24): per plant and per registered model, the committed flows read from the bank
        at each request, and the remaining headroom of the newest register job, each figure current or stale
        (:func:`capacitysim.service.register_api.register_document`, as ``GET /bank/register``)."""
        import datetime as _dt

        from capacitysim.report.headroom import governing_text, headroom_text
        from capacitysim.service.register_api import register_document

        reg = register_document(svc)
        doc = (reg.get("computed") or {}).get("document") or {}
        plants = {p["plant"].casefold(): p for p in doc.get("plants", [])}
        models = {m["model_sha256"]: m for m in doc.get("models", [])}
        for p in reg["plants"]:
            p["computed"] = plants.get(p["plant"].casefold())
        for m in reg["models"]:
            m["computed"] = models.get(m["model_sha256"])
            for r in ((m["computed"] or {}).get("headroom") or {}).get("nodes", []):
                r["headroom_text"], r["governing_text"] = headroom_text(r), governing_text(r)
        read_at = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
        return page("register.html", who, status, title="Capacity register", reg=reg, read_at=read_at,
                    computed=reg.get("computed"), can_submit=auth.can(who.user, "submit"),
                    storms=sorted(bundled("storm")), plants=sorted(bundled("plant")), error=error)

    @app.get("/ui/bank/register", response_class=HTMLResponse, include_in_schema=False)
    def register(request: Request):
        who = session(request)
        if who is None:
            return to_login(request)
        if not auth.can(who.user, "bank-read"):
            return page("jobs.html", who, 403, title="Jobs", jobs=[], error="This role does not read the bank.")
        return register_page(who)

    @app.get("/ui/bank/notes/{application}", include_in_schema=False)
    def note_page(request: Request, application: str, format: str = "html"):
        """The flow credit note of a signed-off withdrawal (``GET /bank/withdrawals/{application}/note``, for the
        signed-in reader of the bank), HTML in the browser or a PDF download."""
        from capacitysim.service.bank_api import note_response
        from capacitysim.workflows.note import flow_credit_note

        who = session(request)
        if who is None:
            return to_login(request)
        if not auth.can(who.user, "bank-read") or format not in ("html", "pdf"):
            return page("jobs.html", who, 403 if format in ("html", "pdf") else 400, title="Jobs", jobs=[],
                        error="This role does not read the bank." if format in ("html", "pdf")
                        else "format: html or pdf")
        try:
            with svc.ledger() as lg:
                note = flow_credit_note(lg, application)
        except CapacitysimError as exc:
            return bank_page(who, error=str(exc), status=404 if isinstance(exc, InputError) else 409)
        return note_response(note, format)

    @app.post("/ui/bank/register", include_in_schema=False)
    @threaded
    def compute_register(request: Request, form):
        """Submit a ``capacity-register`` job (the same validation and store as ``POST /processes/.../execution``)."""
        who = session(request)
        if who is None:
            return to_login(request)
        checked_form(request, who, form)
        user = who.user
        if not auth.can(user, "submit"):
            svc.store.journal("submit jobs", user, "capacity-register", outcome="forbidden")
            return register_page(who, f"The role {user['role']!r} does not submit jobs.", 403)
        values = {k: str(form.get(k, "")).strip()[:600] for k in ("storm", "key", "plant", "flows")}
        inputs: dict = {}
        if values["storm"]:
            inputs["storms"] = [values["storm"]]
        if values["key"]:
            inputs["plants"] = [{"key": values["key"], "plant": values["plant"], "flows": values["flows"]}]
        try:
            prepared = prepare("capacity-register", {"inputs": inputs}, svc.uploads_of(user))
            job_id = svc.store.create_job(prepared, user, versions("capacity-register"),
                                          max_active=lim.max_active_jobs_per_user)
        except ServiceInputError as exc:
            return register_page(who, str(exc), 400)
        except ActiveJobsLimit as exc:
            return register_page(who, str(exc), 429)
        svc.runner.submit(job_id)
        return RedirectResponse(f"/ui/jobs/{job_id}", status_code=303)

    @app.post("/ui/bank/sign-off", include_in_schema=False)
    @threaded
    def sign_off(request: Request, form):
        from capacitysim.service.bank_api import decide, decide_pending

        who = session(request)
        if who is None:
            return to_login(request)
        checked_form(request, who, form)
        user = who.user
        kind = str(form.get("kind", "withdrawal"))
        if kind not in SIGN_OFF_KINDS:
            return bank_page(who, f"kind: got {kind[:40]!r}; allowed: one of {', '.join(SIGN_OFF_KINDS)}", 400)
        ident = str(form.get("application" if kind == "withdrawal" else "id", ""))[:200]
        if not auth.can(user, "sign-off"):
            svc.store.journal(f"sign off {kind}s", user, ident, outcome="forbidden")
            return bank_page(who, "Only an administrator signs off.", 403)
        body = {"decision": str(form.get("decision", "")), "note": str(form.get("note", ""))}
        try:
            if kind == "withdrawal":
                decide(svc, user, ident, body)
            else:
                decide_pending(svc, user, kind, ident, body)
        except (CapacitysimError, ApiError) as exc:
            code = 400 if isinstance(exc, ServiceInputError) else getattr(exc, "status", 409)
            return bank_page(who, str(getattr(exc, "detail", exc)), code)
        return RedirectResponse("/ui/bank", status_code=303)


def _connections(text: str) -> list[dict]:
    """``NODE=GPD`` lines -> ``[{"node", "gpd"}]`` (a line that is not NODE=GPD is a ServiceInputError)."""
    out = []
    for i, line in enumerate(t.strip() for t in text.splitlines()):
        if not line:
            continue
        node, sep, gpd = line.partition("=")
        try:
            if not sep:
                raise ValueError
            flow = float(gpd.replace(",", "").strip())
        except ValueError:
            raise ServiceInputError(f"connections line {i + 1}", line, "NODE=GPD (a node and a flow in gpd)") from None
        out.append({"node": node.strip(), "gpd": flow})
    return out
