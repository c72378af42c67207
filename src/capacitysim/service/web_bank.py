"""The bank's pages: the administrator's queue of deposits, withdrawals and transfers awaiting sign-off (each
withdrawal with its cited jobs' evidence inline), the balances with what pending requests reserve, the flow credit
notes (``/ui/bank``), an engineer's withdrawal request (``/ui/bank/withdrawals/new``), the confirmation of a sign-off
(``/ui/bank/confirm``) and the capacity register (``/ui/bank/register``) (:func:`install`, called by
:func:`capacitysim.service.web.install`).

The request form and the sign-off call the functions the JSON API calls (:func:`capacitysim.service.bank_api.
request_withdrawal`, :func:`~capacitysim.service.bank_api.decide`): one validation. After a request or a decision the
bank page shows its outcome read again from the ledger (``?withdrawal=APP``, ``?deposit=TXN``, ``?transfer=ID``),
never text carried in the address."""

from __future__ import annotations

import re
from urllib.parse import quote

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse

from capacitysim.errors import CapacitysimError, InputError
from capacitysim.service import auth
from capacitysim.service.processes import ServiceInputError, bundled, prepare, versions
from capacitysim.service.store import ActiveJobsLimit

#: What the bank page's sign-off form decides: a withdrawal (field ``application``), a deposit (field ``id``: its
#: txn) or a transfer (field ``id``: ``transfer-N``).
SIGN_OFF_KINDS = ("withdrawal", "deposit", "transfer")
#: The withdrawal request form's fields (those of ``bank_api.WITHDRAWAL_SCHEMA`` a person fills in) and their labels,
#: which the form's errors name instead of ``body.<field>``.
WITHDRAWAL_LABELS = {"application": "Application", "basin": "Basin", "owner": "Owner (the subaccount that pays)",
                     "node": "Node (the manhole connected)", "peak_flow_gpd": "Peak flow [gpd]",
                     "average_gpd": "Average daily flow [gpd]", "capacity_job": "Capacity demonstration (job)",
                     "spdes_job": "SPDES check (job)", "application_approval": "Application approval (section H(2))",
                     "principal": "Principal", "description": "Description"}
_NUMBERS = ("peak_flow_gpd", "average_gpd")
_FIELD_AT = re.compile(r"^(?:body\.)?([a-z_]+): ")


def labelled(message: str) -> tuple[str, str | None]:
    """An error of the withdrawal request with its leading field name (``body.peak_flow_gpd: ...``,
    ``capacity_job: ...``) replaced by the form's label; returns ``(message, field)`` (field None if none)."""
    m = _FIELD_AT.match(message)
    if m is None or m.group(1) not in WITHDRAWAL_LABELS:
        return message, None
    return f"{WITHDRAWAL_LABELS[m.group(1)]}: {message[m.end():]}", m.group(1)


def withdrawal_body(values: dict) -> dict:
    """The request form's values (text) as the body of ``POST /bank/withdrawals``: empty fields left out (a
    required one is then named missing), the flows read as numbers (thousands separators allowed).

    Raises
    ------
    ServiceInputError
        A flow that is not a number, naming ``body.<field>``.
    """
    body: dict = {}
    for k, v in values.items():
        if not v:
            continue
        if k in _NUMBERS:
            try:
                body[k] = float(v.replace(",", ""))
            except ValueError:
                raise ServiceInputError(f"body.{k}", v, "a number of gpd greater than 0") from None
            if body[k] != body[k] or body[k] in (float("inf"), float("-inf")):
                raise ServiceInputError(f"body.{k}", v, "a number of gpd greater than 0")
        else:
            body[k] = v
    return body


def error_status(exc) -> int:
    """The HTTP status of an error of a bank action shown on a page: an ApiError's own, else that of
    :func:`capacitysim.errors.report_of` (a bad input 400, a refusal 409)."""
    from capacitysim.errors import report_of

    return getattr(exc, "status", None) or report_of(exc)["http_status"]


def install(w) -> None:
    """Add the bank's pages to ``w.app`` (``w``: :class:`capacitysim.service.web.Web`)."""
    app, svc, ApiError, page, session, to_login = w.app, w.svc, w.ApiError, w.page, w.session, w.to_login
    signed_post, lim = w.signed_post, w.svc.limits

    def bank_page(who, error=None, status=200, shown=None):
        """The bank page: the queues (each pending withdrawal with its evidence), the decided records, the balances
        with what pending requests reserve, and ``shown`` (``(kind, id)``) the outcome of a request or decision."""
        from capacitysim.service.bank_api import (
            balances_reserved,
            jobs_citing_in,
            ledger_deposits,
            ledger_transfers,
            withdrawal_evidence,
        )

        with svc.ledger() as lg:
            rows = [w | jobs_citing_in(svc.store, w) for w in lg.withdrawals()]
            for w in rows:
                if w["signoff_status"] == "pending":
                    w["evidence"] = withdrawal_evidence(svc, lg, w)
            deposits, transfers = ledger_deposits(lg), ledger_transfers(lg)
            balances = balances_reserved(lg)
            result = outcome(lg, *shown) if shown else None
        pending = [w for w in rows if w["signoff_status"] == "pending"]
        decided = [w for w in rows if w["signoff_status"] != "pending"]
        return page("bank.html", who, status, title="Flow credit bank",
                    pending=pending, decided=decided, balances=balances, can_sign=auth.can(who.user, "sign-off"), error=error,
                    can_request=auth.can(who.user, "withdraw"), result=result,
                    pending_deposits=[d for d in deposits if d["signoff_status"] == "pending"],
                    decided_deposits=[d for d in deposits if d["signoff_status"] != "pending"],
                    pending_transfers=[t for t in transfers if t["signoff_status"] == "pending"],
                    decided_transfers=[t for t in transfers if t["signoff_status"] != "pending"])

    def outcome(lg, kind: str, ident: str) -> dict | None:
        """What the ledger holds now of the record ``ident`` of ``kind`` (a withdrawal, deposit or transfer) and the
        balance of its subaccount, for the notice after a request or decision; None when there is no such record."""
        from capacitysim.service.bank_api import _record, balances_reserved

        try:
            rec = lg.withdrawal(ident) if kind == "withdrawal" else _record(lg, kind, ident)
        except (CapacitysimError, ApiError):
            return None
        if kind == "withdrawal":
            out = {"id": rec["application"], "gpd": rec["amount_gpd"], "owner": rec["owner"],
                   "by": rec["signed_off_by"] or rec["recorded_by"], "at": rec["signed_off_at"]}
        elif kind == "deposit":
            out = {"id": rec["project"], "gpd": rec["gpd"], "owner": rec["owner"], "by": rec["decided_by"] or rec["recorded_by"],
                   "at": rec["decided_at"]}
        else:
            out = {"id": rec["transfer"], "gpd": rec["gpd"], "owner": rec["from"], "by": rec["signed_off_by"],
                   "at": rec["signed_off_at"]}
        bal = next((b for b in balances_reserved(lg) if (b["basin"], b["owner"]) == (rec["basin"], out["owner"])), None)
        return out | {"kind": kind, "status": rec["signoff_status"], "basin": rec["basin"], "balance": bal}

    def shown_of(request: Request):
        """The record whose outcome the bank page shows: ``?withdrawal=``, ``?deposit=`` or ``?transfer=``."""
        for kind in SIGN_OFF_KINDS:
            ident = request.query_params.get(kind)
            if ident:
                return kind, ident[:200]
        return None

    @app.get("/ui/bank", response_class=HTMLResponse, include_in_schema=False)
    def bank(request: Request):
        who = session(request)
        if who is None:
            return to_login(request)
        return bank_page(who, shown=shown_of(request))

    def withdraw_form(who, values=None, error=None, status=200, field=None):
        """The withdrawal request form: the basins, the holders the user acts for, and the user's own jobs that may
        be cited (:func:`capacitysim.service.bank_api.citable_jobs`); ``values`` kept after an error."""
        from capacitysim.service.bank_api import citable_jobs

        with svc.ledger() as lg:
            bal = lg.balances()
            owners = (sorted({b["owner"] for b in bal}) if who.user["role"] == "administrator"
                      else lg.bound_entities(who.user["name"]))
        values = values or {k: "" for k in WITHDRAWAL_LABELS}
        return page("withdraw.html", who, status, title="Request a withdrawal of flow credits", values=values,
                    labels=WITHDRAWAL_LABELS, basins=sorted({b["basin"] for b in bal}), owners=owners,
                    jobs=citable_jobs(svc, who.user), error=error, field=field)

    @app.get("/ui/bank/withdrawals/new", response_class=HTMLResponse, include_in_schema=False)
    def new_withdrawal(request: Request):
        who = session(request)
        if who is None:
            return to_login(request)
        if not auth.can(who.user, "withdraw"):
            return bank_page(who, f"The role {who.user['role']!r} does not request withdrawals.", 403)
        return withdraw_form(who)

    @app.post("/ui/bank/withdrawals", include_in_schema=False)
    @signed_post
    def request_withdrawal(request: Request, form, who):
        """Request a withdrawal (``POST /bank/withdrawals``'s function): errors on the form, with the field's label."""
        from capacitysim.service.bank_api import request_withdrawal as record

        user = who.user
        values = {k: str(form.get(k, "")).strip()[:2000] for k in WITHDRAWAL_LABELS}
        if not auth.can(user, "withdraw"):
            svc.store.journal("request withdrawals", user, values["application"][:200], {"permission": "withdraw"},
                              outcome="forbidden")
            return bank_page(who, f"The role {user['role']!r} does not request withdrawals.", 403)
        try:
            out = record(svc, user, withdrawal_body(values))
        except (CapacitysimError, ApiError) as exc:
            message, field = labelled(svc.hide(str(getattr(exc, "detail", exc))))
            return withdraw_form(who, values, message, error_status(exc), field)
        return RedirectResponse(f"/ui/bank?withdrawal={quote(out['withdrawal']['application'], safe='')}#result",
                                status_code=303)

    @app.post("/ui/bank/confirm", include_in_schema=False)
    @signed_post
    def confirm(request: Request, form, who):
        """What a sign-off will decide, shown before it is done: the record, its evidence, the decision and the note,
        with the final button (a POST to ``/ui/bank/sign-off``). Nothing is changed here."""
        from capacitysim.service.bank_api import _record, balances_reserved, withdrawal_evidence

        kind = str(form.get("kind", "withdrawal"))
        if kind not in SIGN_OFF_KINDS:
            return bank_page(who, f"kind: got {kind[:40]!r}; allowed: one of {', '.join(SIGN_OFF_KINDS)}", 400)
        ident = str(form.get("application" if kind == "withdrawal" else "id", ""))[:200]
        decision = str(form.get("decision", ""))
        if not auth.can(who.user, "sign-off"):
            svc.store.journal(f"sign off {kind}s", who.user, ident, outcome="forbidden")
            return bank_page(who, "Only an administrator signs off.", 403)
        if decision not in ("approve", "reject"):
            return bank_page(who, f"decision: got {decision[:40]!r}; allowed: approve or reject", 400)
        try:
            with svc.ledger() as lg:
                if kind == "withdrawal":
                    rec = lg.withdrawal(ident)
                    evidence = withdrawal_evidence(svc, lg, rec)
                else:
                    rec, evidence = _record(lg, kind, ident), None
                owner = rec["from"] if kind == "transfer" else rec["owner"]
                bal = next((b for b in balances_reserved(lg) if (b["basin"], b["owner"]) == (rec["basin"], owner)), None)
        except (CapacitysimError, ApiError) as exc:
            return bank_page(who, svc.hide(str(getattr(exc, "detail", exc))), 404)
        if rec["signoff_status"] != "pending":
            return bank_page(who, f"{kind} {ident!r} is {rec['signoff_status']}, not awaiting sign-off", 409)
        recorder = rec.get("recorded_by")
        own = isinstance(recorder, str) and recorder.casefold() == who.user["name"].casefold()
        return page("confirm.html", who, title=f"Confirm: {decision} {kind} {ident}", kind=kind, ident=ident, rec=rec,
                    decision=decision, note=str(form.get("note", ""))[:2000], evidence_rows=evidence, balance=bal,
                    own=own)

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
    @signed_post
    def compute_register(request: Request, form, who):
        """Submit a ``capacity-register`` job (the same validation and store as ``POST /processes/.../execution``)."""
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
    @signed_post
    def sign_off(request: Request, form, who):
        from capacitysim.service.bank_api import decide, decide_pending

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
            return bank_page(who, svc.hide(str(getattr(exc, "detail", exc))), code)
        return RedirectResponse(f"/ui/bank?{kind}={quote(ident, safe='')}#result", status_code=303)
