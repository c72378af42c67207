"""``/bank/...``: the flow credit bank (:class:`capacitysim.bank.Ledger`) behind the service.

A withdrawal cites the ids of two of the service's jobs, a successful ``capacity-demonstration`` and a
successful ``spdes-check``, instead of file paths: the service checks each job's scenario against the
withdrawal (the demonstration connected at least the withdrawal's peak flow at its node; the SPDES check
added at least that flow) and gives the ledger the job's ``result.json``, which the ledger reads and
fingerprints itself (:func:`capacitysim.bank.refs.resolve_ref`: verdict, node, flow, dates, SHA-256), so
the evidence is the job's record, not a file someone can edit. Only an administrator signs off
(``POST /bank/withdrawals/{application}/sign-off``); the ledger also requires that person to be a
registered bank administrator. Every action goes to the service's journal and the bank's.
"""

from __future__ import annotations

from typing import Any

from fastapi import Body, Depends

from capacitysim.errors import InputError, RefusedError
from capacitysim.service.problems import ApiError
from capacitysim.service.processes import MAX_GPD, ServiceInputError, check_value

WITHDRAWAL_SCHEMA = {
    "type": "object",
    "required": ["basin", "owner", "peak_flow_gpd", "application", "node", "capacity_job", "spdes_job"],
    "additionalProperties": False,
    "properties": {
        "basin": {"type": "string", "minLength": 1, "maxLength": 200},
        "owner": {"type": "string", "minLength": 1, "maxLength": 200},
        "principal": {"type": "string", "minLength": 1, "maxLength": 200},
        "peak_flow_gpd": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_GPD},
        "application": {"type": "string", "minLength": 1, "maxLength": 200},
        "node": {"type": "string", "minLength": 1, "maxLength": 100},
        "capacity_job": {"type": "string", "minLength": 32, "maxLength": 32},
        "spdes_job": {"type": "string", "minLength": 32, "maxLength": 32},
        "application_approval": {"type": "string", "minLength": 1, "maxLength": 200},
        "description": {"type": "string", "maxLength": 2000},
        "reason": {"type": "string", "maxLength": 2000},
    },
}
SIGN_OFF_SCHEMA = {
    "type": "object", "required": ["decision"], "additionalProperties": False,
    "properties": {"decision": {"type": "string", "enum": ["approve", "reject"]},
                   "note": {"type": "string", "maxLength": 2000}},
}


def check_job_scenario(job: dict, process: str, field: str, peak_gpd: float, node: str | None) -> None:
    """Refuse a cited job that is not a successful run of ``process`` covering the withdrawal.

    A capacity demonstration must connect at least ``peak_gpd`` at ``node`` (its inputs' connections);
    a SPDES check must have added at least ``peak_gpd`` (the sum of its ``added_gpd``).

    Raises
    ------
    ServiceInputError
        The job is of another process.
    RefusedError
        The job has not succeeded, or its scenario does not cover the withdrawal.
    """
    if job["process"] != process:
        raise ServiceInputError(field, job["id"], f"the id of a {process} job", f"job {job['id']} is a {job['process']} job")
    if job["status"] != "successful":
        raise RefusedError(f"{field}: job {job['id']} is {job['status']}; the bank cites only successful jobs")
    inputs = job["inputs"]
    if job["verdict"] != "pass":
        raise RefusedError(f"{field}: job {job['id']} has the verdict {job['verdict']!r}; it does not demonstrate "
                           "adequate capacity (credit bank section H(1)): the bank cites only jobs that pass")
    if process == "capacity-demonstration":
        at_node = sum(float(c["gpd"]) for c in inputs.get("connections", []) if c["node"] == node)
        if at_node < peak_gpd:
            raise RefusedError(f"{field}: job {job['id']} connected {at_node:,.0f} gpd at node {node!r}; the withdrawal's "
                               f"peak flow is {peak_gpd:,.0f} gpd there (credit bank section H(1))")
    else:
        added = sum(float(g) for g in inputs.get("added_gpd", []))
        if added < peak_gpd:
            raise RefusedError(f"{field}: job {job['id']} added {added:,.0f} gpd to the plant; the withdrawal's peak flow "
                               f"is {peak_gpd:,.0f} gpd (credit bank section H(1))")


def jobs_citing_in(store, w: dict) -> dict:
    """The service jobs whose result documents a withdrawal cites (``capacity_job``, ``spdes_job``; None if none)."""
    out = {}
    for kind in ("capacity", "spdes"):
        ref = w.get(f"{kind}_ref")
        rows = store.read("SELECT id FROM jobs WHERE result_path = ?", (ref,)) if ref else []
        out[f"{kind}_job"] = rows[0]["id"] if rows else None
    return out


def decide(svc, u, application: str, body) -> dict:
    """The administrator's decision on a pending withdrawal (the API's sign-off and the bank page's form).

    Refused when the withdrawal is not pending or a cited job is no longer a successful job of the service.
    """
    check_value("body", body, SIGN_OFF_SCHEMA)
    note = body.get("note", "")
    with svc.ledger(u) as lg:
        try:
            w = lg.withdrawal(application)
        except InputError as exc:
            raise ApiError(404, "Not found", str(exc)) from None
        if w["signoff_status"] != "pending":
            raise RefusedError(f"application {application!r} is {w['signoff_status']}, not awaiting sign-off")
        cited = jobs_citing_in(svc.store, w)
        for field, job_id in cited.items():
            job = svc.store.job(job_id) if job_id else None
            if job is None or job["status"] != "successful":
                raise RefusedError(f"application {application!r}: the cited {field} "
                                   f"{job_id or '(not a service job)'} is {job and job['status']}; not signed off")
        try:
            if body["decision"] == "approve":
                out = lg.sign_off(w["signoff_txn"], reason=note)
            else:
                if not note.strip():
                    raise ServiceInputError("body.note", note, "the reason for the rejection (required)", "empty")
                out = lg.reject(w["signoff_txn"], reason=note)
        except Exception as exc:
            svc.store.journal("sign-off", u, application, {"decision": body["decision"], "error": str(exc)},
                              outcome="refused")
            raise
        w = lg.withdrawal(application)
    svc.store.journal("sign-off", u, application, {"decision": body["decision"], "note": note, **cited})
    return {"withdrawal": w | cited, "ledger": _jsonable(out)}


def install(app, svc, user, require) -> None:
    """Add the ``/bank`` routes to ``app``."""
    from capacitysim.service import auth

    def job_for(field: str, job_id: str, u):
        job = svc.store.job(job_id)
        if job is None:
            raise ServiceInputError(field, job_id, "the id of one of the service's jobs", "no such job")
        if not auth.may_read_job(u, job):
            raise ApiError(403, "Forbidden", f"{field}: job {job_id} belongs to another user")
        return job

    def jobs_citing(w: dict) -> dict:
        return jobs_citing_in(svc.store, w)

    @app.get("/bank/balances", summary="Balances of every subaccount")
    def balances(u=Depends(user)):
        require(u, "bank-read", "read the bank")
        with svc.ledger() as lg:
            return {"balances": lg.balances()}

    @app.get("/bank/withdrawals", summary="Withdrawals (with the job ids they cite)")
    def withdrawals(status: str | None = None, u=Depends(user)):
        require(u, "bank-read", "read the bank")
        with svc.ledger() as lg:
            rows = [w | jobs_citing(w) for w in lg.withdrawals()]
        if status is not None:
            rows = [w for w in rows if w["signoff_status"] == status]
        return {"withdrawals": rows}

    @app.get("/bank/pending", summary="Transactions awaiting the administrator's sign-off")
    def pending(u=Depends(user)):
        require(u, "bank-read", "read the bank")
        with svc.ledger() as lg:
            return {"pending": lg.pending()}

    @app.get("/bank/withdrawals/{application}", summary="One withdrawal")
    def withdrawal(application: str, u=Depends(user)):
        require(u, "bank-read", "read the bank")
        with svc.ledger() as lg:
            try:
                w = lg.withdrawal(application)
            except InputError as exc:  # the ledger: unknown application
                raise ApiError(404, "Not found", str(exc)) from None
        return w | jobs_citing(w)

    @app.post("/bank/withdrawals", status_code=201, summary="Request a withdrawal citing a capacity and a SPDES job")
    def withdraw(body: Any = Body(None, examples=[{"basin": "CSO 4", "owner": "Village of Johnson City",
                                                   "peak_flow_gpd": 4000, "application": "APP-1", "node": "MH0003",
                                                   "capacity_job": "0" * 32, "spdes_job": "0" * 32,
                                                   "application_approval": "H2-1"}]), u=Depends(user)):
        require(u, "withdraw", "request withdrawals")
        check_value("body", body, WITHDRAWAL_SCHEMA)
        cap = job_for("capacity_job", body["capacity_job"], u)
        spd = job_for("spdes_job", body["spdes_job"], u)
        try:
            check_job_scenario(cap, "capacity-demonstration", "capacity_job", body["peak_flow_gpd"], body["node"])
            check_job_scenario(spd, "spdes-check", "spdes_job", body["peak_flow_gpd"], None)
        except RefusedError as exc:
            svc.store.journal("withdraw", u, body["application"], {"error": str(exc)}, outcome="refused")
            raise
        with svc.ledger(u) as lg:
            try:
                out = lg.withdraw(body["basin"], body["owner"], body["peak_flow_gpd"], body["application"],
                                  node=body["node"], capacity_ref=cap["result_path"], spdes_ref=spd["result_path"],
                                  application_approval=body.get("application_approval"), principal=body.get("principal"),
                                  description=body.get("description", ""),
                                  reason=body.get("reason") or f"requested through the service by {u['name']}",
                                  documents=[f"service job {cap['id']}", f"service job {spd['id']}"])
            except Exception as exc:
                svc.store.journal("withdraw", u, body["application"], {"error": str(exc)}, outcome="refused")
                raise
            w = lg.withdrawal(body["application"])
        svc.store.journal("withdraw", u, body["application"], {"capacity_job": cap["id"], "spdes_job": spd["id"],
                                                               "amount_gpd": w["amount_gpd"]})
        return {"withdrawal": w | jobs_citing(w), "ledger": _jsonable(out)}

    @app.post("/bank/withdrawals/{application}/sign-off", summary="The bank administrator approves or rejects")
    def sign_off(application: str, body: Any = Body(None, examples=[{"decision": "approve", "note": "checked"}]),
                 u=Depends(user)):
        require(u, "sign-off", "sign off withdrawals", application)
        return decide(svc, u, application, body)


def _jsonable(obj):
    import json

    return json.loads(json.dumps(obj, default=str))
