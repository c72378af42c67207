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

import secrets
from typing import NamedTuple

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse

from capacitysim.service import auth

COOKIE = "capacitysim_session"
LOGIN_CSRF_COOKIE = "capacitysim_login_csrf"
#: The Content-Security-Policy of the pages: nothing but this origin, inline CSS, never framed, forms only here.
PAGE_CSP = "default-src 'self'; style-src 'unsafe-inline'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"


class Web(NamedTuple):
    """What the page modules (:mod:`~capacitysim.service.web_jobs`, :mod:`~capacitysim.service.web_bank`,
    :mod:`~capacitysim.service.web_forms`) add their routes with: the app and the service, and the helpers every
    page shares (render a template, the request's session, the redirect to sign-in, the CSRF check of a form, a
    POST handler run in the thread pool, and both for a signed-in user's form: ``signed_post``)."""

    app: object
    svc: object
    ApiError: type
    render: object
    page: object
    session: object
    to_login: object
    checked_form: object
    threaded: object
    signed_post: object


class Signed(NamedTuple):
    """A signed-in request: the user and the session (the CSRF token of its forms is :attr:`csrf`)."""

    user: dict
    session: dict
    csrf: str


def install(app, svc, ApiError) -> None:
    """Add the ``/ui`` pages to ``app``: sign-in and the jobs list here, the rest from the page modules."""
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

    def signed_post(handler):
        """A page's form POST of a signed-in user: the form read on the event loop, then in the thread pool the
        session (none: to the sign-in page) and the form's CSRF token checked before ``handler(request, form, who)``
        does anything."""

        def checked(request: Request, form):
            who = session(request)
            if who is None:
                return to_login(request)
            checked_form(request, who, form)
            return handler(request, form, who)

        checked.__name__ = handler.__name__
        checked.__doc__ = handler.__doc__
        return threaded(checked)

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
    @signed_post
    def logout(request: Request, form, who):
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

    from capacitysim.service import web_bank, web_forms, web_jobs, web_map

    w = Web(app, svc, ApiError, render, page, session, to_login, checked_form, threaded, signed_post)
    web_forms.install(w)
    web_jobs.install(w)
    web_bank.install(w)
    web_map.install(w)
