"""The bank's pages: the administrator's queue of deposits, withdrawals and transfers awaiting sign-off, the
balances, the flow credit notes (``/ui/bank``), and the capacity register (``/ui/bank/register``)
(:func:`install`, called by :func:`capacitysim.service.web.install`)."""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse

from capacitysim.errors import CapacitysimError, InputError
from capacitysim.service import auth
from capacitysim.service.processes import ServiceInputError, bundled, prepare, versions
from capacitysim.service.store import ActiveJobsLimit

#: What the bank page's sign-off form decides: a withdrawal (field ``application``), a deposit (field ``id``: its
#: txn) or a transfer (field ``id``: ``transfer-N``).
SIGN_OFF_KINDS = ("withdrawal", "deposit", "transfer")


def install(w) -> None:
    """Add the bank's pages to ``w.app`` (``w``: :class:`capacitysim.service.web.Web`)."""
    app, svc, ApiError, page, session, to_login = w.app, w.svc, w.ApiError, w.page, w.session, w.to_login
    threaded, checked_form, lim = w.threaded, w.checked_form, w.svc.limits

    def bank_page(who, error=None, status=200):
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

    def register_page(who, error=None, status=200):
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
