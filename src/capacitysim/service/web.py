"""Server-rendered web pages under ``/ui``: sign in, submit a demonstration, watch it, read the verdict and
report; the administrator's queue of deposits, withdrawals and transfers awaiting sign-off.

The session is the bearer token in an ``HttpOnly``, ``SameSite=Strict`` cookie, set by the sign-in form. The
API accepts that cookie for reading only (GET): every change through a page is a form POST to ``/ui/...``
carrying the session's CSRF token (HMAC of the user's key id under the server's secret), checked before
anything is done; the sign-in form uses a double-submit token. Every value shown is escaped (Jinja2
autoescape). The pages call the same functions as the API (validation, jobs, the bank).
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse

from capacitysim.errors import CapacitysimError
from capacitysim.service import auth
from capacitysim.service.processes import ServiceInputError, bundled, prepare, versions
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


def install(app, svc, ApiError) -> None:
    """Add the ``/ui`` pages to ``app``."""
    from capacitysim.service.pages import environment

    env = environment()

    def render(name: str, status: int = 200, **ctx) -> HTMLResponse:
        ctx = {"user": None, "csrf": "", "error": None, "refresh": None, "title": "capacitysim"} | ctx
        return HTMLResponse(env.get_template(name).render(**ctx), status_code=status,
                            headers={"Cache-Control": "no-store", "X-Frame-Options": "DENY",
                                     "Content-Security-Policy": "default-src 'self'; style-src 'unsafe-inline'; "
                                                                "frame-ancestors 'none'"})

    def session(request: Request):
        return auth.user_for_token(svc.store, request.cookies.get(COOKIE))

    def to_login() -> RedirectResponse:
        return RedirectResponse("/ui/login", status_code=303)

    # The POST handlers read their form on the event loop, then do the rest (the store, the bank: blocking
    # database calls, on PostgreSQL possibly a wait for a pooled connection) in the thread pool (:func:`threaded`).
    def checked_form(request: Request, user, form):
        if not auth.csrf_ok(svc.secret, user, form.get("csrf")):
            svc.store.journal("csrf", user, request.url.path, outcome="forbidden")
            raise ApiError(403, "Forbidden", "the form's CSRF token is missing or wrong: reload the page and try again")
        return form

    @app.get("/ui/login", response_class=HTMLResponse, include_in_schema=False)
    def login_page(request: Request):
        tok = secrets.token_urlsafe(24)
        resp = render("login.html", title="Sign in", csrf=tok)
        resp.set_cookie(LOGIN_CSRF_COOKIE, tok, httponly=True, samesite="strict", path="/ui/login",
                        secure=request.url.scheme == "https")
        return resp

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
        pre = request.cookies.get(LOGIN_CSRF_COOKIE)
        if not pre or not secrets.compare_digest(pre, str(form.get("csrf", ""))):
            raise ApiError(403, "Forbidden", "the sign-in form's CSRF token is missing or wrong: reload the page")
        token = str(form.get("token", "")).strip()
        user = auth.user_for_token(svc.store, token)
        if user is None:
            svc.store.journal("sign-in", None, "", {"reason": "unknown token"}, outcome="unauthorized")
            tok = secrets.token_urlsafe(24)
            resp = render("login.html", 401, title="Sign in", csrf=tok, error="That token is not valid.")
            resp.set_cookie(LOGIN_CSRF_COOKIE, tok, httponly=True, samesite="strict", path="/ui/login")
            return resp
        svc.store.journal("sign-in", user)
        resp = RedirectResponse("/ui", status_code=303)
        resp.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/", secure=request.url.scheme == "https")
        resp.delete_cookie(LOGIN_CSRF_COOKIE, path="/ui/login")
        return resp

    @app.post("/ui/logout", include_in_schema=False)
    @threaded
    def logout(request: Request, form):
        user = session(request)
        if user is None:
            return to_login()
        checked_form(request, user, form)
        svc.store.journal("sign-out", user)
        resp = to_login()
        resp.delete_cookie(COOKIE, path="/")
        return resp

    @app.get("/ui", response_class=HTMLResponse, include_in_schema=False)
    def home(request: Request):
        user = session(request)
        if user is None:
            return to_login()
        rows = svc.store.jobs(owner_id=None if auth.can(user, "read-all") else user["id"], limit=200)
        return render("jobs.html", title="Jobs", user=user, csrf=auth.csrf_token(svc.secret, user), jobs=rows)

    def submit_form(user, form=None, error=None, status=200):
        form = form or {"model": "synthetic-50", "storm": "binghamton-1yr-24h", "connections": "", "remediations": ""}
        return render("submit.html", status, title="New capacity demonstration", user=user,
                      csrf=auth.csrf_token(svc.secret, user), models=sorted(bundled("model")),
                      storms=sorted(bundled("storm")), form=form, error=error)

    @app.get("/ui/submit", response_class=HTMLResponse, include_in_schema=False)
    def submit_page(request: Request):
        user = session(request)
        if user is None:
            return to_login()
        if not auth.can(user, "submit"):
            return render("jobs.html", 403, title="Jobs", user=user, csrf=auth.csrf_token(svc.secret, user), jobs=[],
                          error=f"The role {user['role']!r} does not submit jobs.")
        return submit_form(user)

    @app.post("/ui/submit", include_in_schema=False)
    @threaded
    def submit(request: Request, form):
        user = session(request)
        if user is None:
            return to_login()
        checked_form(request, user, form)
        values = {k: str(form.get(k, "")) for k in ("model", "storm", "connections", "remediations")}
        if not auth.can(user, "submit"):
            svc.store.journal("submit jobs", user, "capacity-demonstration", outcome="forbidden")
            return submit_form(user, values, f"The role {user['role']!r} does not submit jobs.", 403)
        try:
            inputs = {"model": values["model"], "connections": _connections(values["connections"]),
                      "remediations": [r.strip() for r in values["remediations"].splitlines() if r.strip()]}
            if values["storm"]:
                inputs["storm"] = values["storm"]
            if not inputs["remediations"]:
                del inputs["remediations"]
            prepared = prepare("capacity-demonstration", {"inputs": inputs}, svc.upload_path)
        except ServiceInputError as exc:
            return submit_form(user, values, str(exc), 400)
        job_id = svc.store.create_job(prepared, user, versions("capacity-demonstration"))
        svc.runner.submit(job_id)
        return RedirectResponse(f"/ui/jobs/{job_id}", status_code=303)

    @app.get("/ui/jobs/{job_id}", response_class=HTMLResponse, include_in_schema=False)
    def job_page(job_id: str, request: Request):
        user = session(request)
        if user is None:
            return to_login()
        job = svc.store.job(job_id) if len(job_id) == 32 else None
        if job is None:
            raise ApiError(404, "Not found", f"no job {job_id!r}")
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
        return render("job.html", title=f"Job {job_id[:8]}", user=user, csrf=auth.csrf_token(svc.secret, user), job=job,
                      checks=checks, more=more, refresh=None if final else REFRESH_S, stages=stages,
                      inputs=json.dumps(job["inputs"], indent=2), hashes=json.dumps(job["input_sha256"], indent=2),
                      versions=json.dumps(job["versions"], indent=2))

    def bank_page(user, error=None, status=200):
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
        return render("bank.html", status, title="Flow credit bank", user=user, csrf=auth.csrf_token(svc.secret, user),
                      pending=pending, decided=decided, balances=balances, can_sign=auth.can(user, "sign-off"), error=error,
                      pending_deposits=[d for d in deposits if d["signoff_status"] == "pending"],
                      decided_deposits=[d for d in deposits if d["signoff_status"] != "pending"],
                      pending_transfers=[t for t in transfers if t["signoff_status"] == "pending"],
                      decided_transfers=[t for t in transfers if t["signoff_status"] != "pending"])

    @app.get("/ui/bank", response_class=HTMLResponse, include_in_schema=False)
    def bank(request: Request):
        user = session(request)
        if user is None:
            return to_login()
        return bank_page(user)

    @app.post("/ui/bank/sign-off", include_in_schema=False)
    @threaded
    def sign_off(request: Request, form):
        from capacitysim.service.bank_api import decide, decide_pending

        user = session(request)
        if user is None:
            return to_login()
        checked_form(request, user, form)
        kind = str(form.get("kind", "withdrawal"))
        if kind not in SIGN_OFF_KINDS:
            return bank_page(user, f"kind: got {kind[:40]!r}; allowed: one of {', '.join(SIGN_OFF_KINDS)}", 400)
        ident = str(form.get("application" if kind == "withdrawal" else "id", ""))[:200]
        if not auth.can(user, "sign-off"):
            svc.store.journal(f"sign off {kind}s", user, ident, outcome="forbidden")
            return bank_page(user, "Only an administrator signs off.", 403)
        body = {"decision": str(form.get("decision", "")), "note": str(form.get("note", ""))}
        try:
            if kind == "withdrawal":
                decide(svc, user, ident, body)
            else:
                decide_pending(svc, user, kind, ident, body)
        except (CapacitysimError, ApiError) as exc:
            code = 400 if isinstance(exc, ServiceInputError) else getattr(exc, "status", 409)
            return bank_page(user, str(getattr(exc, "detail", exc)), code)
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
