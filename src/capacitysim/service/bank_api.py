"""``/bank/...``: the flow credit bank (:class:`capacitysim.bank.Ledger`) behind the service.

A withdrawal cites the ids of two of the service's jobs, a successful ``capacity-demonstration`` and a
successful ``spdes-check``, instead of file paths: the service checks each job's scenario against the
withdrawal (the demonstration connected at least the withdrawal's peak flow at its node; the SPDES check
added at least that flow) and gives the ledger the job's ``result.json``, which the ledger reads and
fingerprints itself (:func:`capacitysim.bank.refs.resolve_ref`: verdict, node, flow, dates, SHA-256), so
the evidence is the job's record, not a file someone can edit.

A deposit (credit bank section B: the credits of a remediation project certified complete, into the
subaccount of the municipal user with jurisdiction) cites a successful ``credits-quantification`` job of
the project: the service checks that the job quantified the same project (its ``[project] id``, and its
``municipal_user`` when the file names one) and at least the deposited flow (its ``total_gpd``), and that
the job's ``result.json`` still has the SHA-256 recorded when the job ended. A transfer (sections B, C, G)
cites its document (bill of sale, memorandum of gift or grant, written notice).

Deposits, withdrawals and transfers are recorded *pending* and take effect only when the bank
administrator signs them off (definitions, BANK ADMINISTRATOR: "review and sign off on all approved
applications for flow credit creation, bank deposits, withdrawals and transfers"):
``POST /bank/withdrawals/{application}/sign-off``, ``POST /bank/deposits/{txn}/sign-off`` and
``POST /bank/transfers/{transfer}/sign-off``, each ``{"decision": "approve" | "reject", "note"}``. Each
record is addressed by the ledger's own id of it: a withdrawal by its application, a transfer by its
``transfer-N``, a deposit by its sign-off transaction id (a project rejected once may be deposited again,
so the project is not a deposit's id). Only an administrator signs off (403 otherwise); the ledger also
requires that person to be a registered bank administrator, and one who did not record the transaction
(program policy ``signoff_separation``: an administrator who recorded a deposit gets 409 on its sign-off;
another administrator signs it off). Every action, refusal and forbidden attempt goes to the service's
journal with the user, and every change to the bank's own journal with the person.

No capacity promised twice (issue 24)
-------------------------------------
In a basin with a registered model of record, the ledger also refuses (409) a withdrawal at a node that does not
drain to the basin's outlet, a demonstration on another model, and evidence that leaves out a commitment made
since it was run, at the request and again at the sign-off, naming each commitment missing. The service's jobs
include the commitments by themselves (:mod:`capacitysim.service.tasks`); the register's routes (models,
commitments, connections, expiries, the register) are :mod:`capacitysim.service.register_api`.

Maker-checker (the project's security issue)
--------------------------------------------
* A capacity job or SPDES job is the evidence of one application (program policy ``evidence_single_use``):
  a second withdrawal citing the same job (or a job whose result document is byte-identical: the ledger
  compares SHA-256) is refused with 409 naming the application that cites it, until that withdrawal is
  rejected or returned.
* A service user acts only for the bank entities they are bound to (program policy
  ``service_user_binding``): an engineer or municipal user records a withdrawal (the paying holder), a
  deposit (the receiving municipal user) or a transfer (the paying holder) only for an entity the bank
  administrator bound them to (``POST /bank/bindings``, ``capacitysim bank bind-user``); otherwise 403
  with a JSON problem naming the entity. Administrators act for every entity. ``GET``, ``POST`` and
  ``DELETE /bank/bindings`` are the administrator's.
* Reads are the public record (program policy ``bank_reads = public-record``): every role that reads the
  bank reads every balance and record, bound or not.

Service policies (where the issue and the program are silent)
-------------------------------------------------------------
``bank_roles`` (the ``deposit`` and ``transfer`` permissions of :data:`capacitysim.service.auth.PERMISSIONS`)
    Who records what through the service: a deposit by an engineer (the project's engineer of record), a
    municipal user or an administrator; a transfer by a municipal user (section B: "a municipal user
    may ... transfer flow credits") or an administrator; reviewers read only. Service users are not bank
    entities: the transfer's cited document is the holder's consent, which the administrator checks at
    the sign-off (section G).
``deposit_evidence = quantification-job``
    A deposit through the service cites the ``credits-quantification`` job of its project (the CLI's
    ``bank deposit`` takes a certificate reference alone).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from fastapi import Body, Depends, Query

from capacitysim.bank.refs import quantification_facts
from capacitysim.errors import InputError, RefusedError
from capacitysim.service.problems import ApiError
from capacitysim.service.processes import MAX_GPD, ServiceInputError, check_value

#: Service policy ``bank_roles``: the roles that may record each kind of bank transaction through the service
#: (withdrawals follow the ``withdraw`` permission of :mod:`capacitysim.service.auth`; signing off is the
#: administrator's ``sign-off`` permission).
#: The sign-off states of a deposit or transfer (the ledger's ``signoffs.status``).
SIGNOFF_STATES = ("pending", "signed-off", "rejected")
#: How a deposit cites its quantification job in the ledger's documents (``service job <id>``).
_JOB_DOC = re.compile(r"^service job ([0-9a-f]{32})$")
_TXN = re.compile(r"^[0-9a-f]{32}$")

WITHDRAWAL_SCHEMA = {
    "type": "object",
    "required": ["basin", "owner", "peak_flow_gpd", "application", "node", "capacity_job", "spdes_job"],
    "additionalProperties": False,
    "properties": {
        "basin": {"type": "string", "minLength": 1, "maxLength": 200},
        "owner": {"type": "string", "minLength": 1, "maxLength": 200},
        "principal": {"type": "string", "minLength": 1, "maxLength": 200},
        "peak_flow_gpd": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_GPD},
        "average_gpd": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_GPD,
                        "description": "The connection's average daily flow [gpd], its commitment at the plant (default "
                                       "the peak: program policy commitment_average)."},
        "application": {"type": "string", "minLength": 1, "maxLength": 200},
        "node": {"type": "string", "minLength": 1, "maxLength": 100},
        "capacity_job": {"type": "string", "minLength": 32, "maxLength": 32},
        "spdes_job": {"type": "string", "minLength": 32, "maxLength": 32},
        "application_approval": {"type": "string", "minLength": 1, "maxLength": 200},
        "description": {"type": "string", "maxLength": 2000},
        "reason": {"type": "string", "maxLength": 2000},
    },
}
_TEXT = {"type": "string", "minLength": 1, "maxLength": 200}
DEPOSIT_SCHEMA = {
    "type": "object",
    "required": ["basin", "owner", "gpd", "project", "quantification_job"],
    "additionalProperties": False,
    "properties": {
        "basin": _TEXT | {"description": "The I/I remediation basin where the credits were generated (section A)."},
        "owner": _TEXT | {"description": "The municipal user with jurisdiction over the project site (section B)."},
        "gpd": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_GPD,
                "description": "Certified I/I removed [gpd] (booked rounded down to whole gpd; at most the cited "
                               "quantification's total_gpd)."},
        "project": _TEXT | {"description": "The project id (the [project] id of the quantified project file)."},
        "quantification_job": {"type": "string", "minLength": 32, "maxLength": 32,
                               "description": "The id of a successful credits-quantification job of the project."},
        "certificate": _TEXT | {"description": "The certification (Appendix A) reference."},
        "property": {"type": "string", "enum": ["public", "private"],
                     "description": "Public sewage collection system or private property (annual report parts A, B)."},
        "certified_on": {"type": "string", "format": "date", "description": "Date certified complete (default today)."},
        "description": {"type": "string", "maxLength": 2000},
        "reason": {"type": "string", "maxLength": 2000},
    },
}
TRANSFER_SCHEMA = {
    "type": "object",
    "required": ["basin", "from_owner", "to_owner", "gpd", "document"],
    "additionalProperties": False,
    "properties": {
        "basin": _TEXT | {"description": "The basin of the credits (section A)."},
        "from_owner": _TEXT | {"description": "The holder whose subaccount pays."},
        "to_owner": _TEXT | {"description": "The receiving holder (a registered entity; its subaccount is opened if needed)."},
        "gpd": {"type": "integer", "minimum": 1, "maximum": MAX_GPD, "description": "Credits transferred [whole gpd]."},
        "document": _TEXT | {"description": "Bill of sale, memorandum of gift or grant, written notice (sections B, G)."},
        "to_basin": _TEXT | {"description": "Another basin: only with a Board approval (section A)."},
        "board_approval": _TEXT | {"description": "The Board's approval of a transfer across basins."},
        "reason": {"type": "string", "maxLength": 2000},
    },
}
BINDING_SCHEMA = {
    "type": "object",
    "required": ["user", "entity"],
    "additionalProperties": False,
    "properties": {
        "user": _TEXT | {"description": "The service user's name (an engineer or a municipal user)."},
        "entity": _TEXT | {"description": "The bank entity (credit holder) the user acts for."},
        "document": _TEXT | {"description": "The entity's letter naming the user (recorded)."},
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


#: The processes a withdrawal cites, by the field that cites each (``WITHDRAWAL_SCHEMA``).
CITED_PROCESSES = {"capacity_job": "capacity-demonstration", "spdes_job": "spdes-check"}


def _age_days(finished: str | None, today) -> int | None:
    """Whole days from a job's ``finished_at`` (ISO 8601, UTC) to ``today`` (None when the job has not ended)."""
    import datetime as _dt

    return (today - _dt.date.fromisoformat(finished[:10])).days if finished else None


def withdrawal_evidence(svc, lg, w: dict, today=None) -> list[dict]:
    """What a withdrawal's cited jobs show, for the administrator's queue: one row per cited job (capacity, SPDES).

    Each: ``field`` (``capacity_job``, ``spdes_job``), ``job`` (its id, or None when no job of the service has the
    cited document), ``status``, ``verdict``, ``finished`` (date), ``age_days``, ``flows`` (``[(node, gpd)]`` of a
    capacity demonstration's connections; ``[(None, gpd)]`` of a SPDES check's added flows), ``model`` or ``plant``
    (the input as given: a bundled name or ``upload:<sha256>``), ``model_of_record`` (True or False when the basin has
    a registered model of record: whether the job ran on it; None otherwise), ``covers`` (True, or the refusal of
    :func:`check_job_scenario`, the request's own check, read again) and ``included`` (the commitments the cited
    document included, as the ledger read them).
    """
    import datetime as _dt

    today = today or _dt.datetime.now(_dt.UTC).date()
    try:
        record = next((m["sha256"] for m in lg.models(w["basin"]) if m["current"]), None)
    except InputError:
        record = None
    out, jobs = [], jobs_citing_in(svc.store, w)
    for field, job_id in jobs.items():
        job = svc.store.job(job_id) if job_id else None
        row = {"field": field, "job": job_id, "included": w.get(f"{field.split('_')[0]}_included")}
        if job is None:
            out.append(row | {"status": "not a job of this service", "verdict": None, "finished": None, "age_days": None,
                              "flows": [], "model": None, "plant": None, "model_of_record": None,
                              "covers": "no job of this service has the cited document"})
            continue
        inputs = job["inputs"] or {}
        if field == "capacity_job":
            flows = [(c.get("node"), float(c.get("gpd", 0))) for c in inputs.get("connections", [])]
        else:
            flows = [(None, float(g)) for g in inputs.get("added_gpd", [])]
        try:
            check_job_scenario(job, CITED_PROCESSES[field], field, w["peak_flow_gpd"], w["node"])
            covers = True
        except (RefusedError, ServiceInputError) as exc:
            covers = str(exc)
        sha = (job.get("input_sha256") or {}).get("model")
        row |= {"status": job["status"], "verdict": job["verdict"], "finished": (job["finished_at"] or "")[:10] or None,
                "age_days": _age_days(job["finished_at"], today), "flows": flows, "model": inputs.get("model"),
                "plant": inputs.get("plant"), "covers": covers,
                "model_of_record": None if record is None or field != "capacity_job" else sha == record}
        out.append(row)
    return out


def balances_reserved(lg) -> list[dict]:
    """Every subaccount's balance (:meth:`capacitysim.bank.Ledger.balances`) with what requests awaiting sign-off hold.

    The ledger takes a pending withdrawal's or transfer's credits out at once (program policy ``pending_reserve``),
    so ``balance_gpd`` is what is available. Added: ``pending_withdrawals_gpd`` (reserved by withdrawals awaiting
    sign-off), ``pending_transfers_out_gpd`` (transfers from it awaiting sign-off), ``available_gpd`` (the balance)
    and ``held_gpd`` (available plus what pending requests reserve: what the holder keeps if they are all rejected).
    """
    pend: dict = {}
    for w in lg.withdrawals():
        if w["signoff_status"] == "pending":
            key = (w["basin"], w["owner"])
            pend[key] = pend.get(key, 0) + (w["amount_gpd"] or 0)
    out = []
    for b in lg.balances():
        wd = pend.get((b["basin"], b["owner"]), 0)
        out.append(b | {"pending_withdrawals_gpd": wd, "pending_transfers_out_gpd": max(b["pending_out_gpd"] - wd, 0),
                        "available_gpd": b["balance_gpd"], "held_gpd": b["balance_gpd"] + b["pending_out_gpd"]})
    return out


def citable_jobs(svc, u, limit: int = 100) -> dict:
    """The user's own jobs a withdrawal may cite, newest first, by field (``capacity_job``, ``spdes_job``): successful,
    passing, and not already the evidence of an application (program policy ``evidence_single_use``). Each:
    ``id``, ``finished``, ``verdict`` and ``flows`` (a capacity demonstration's ``node=gpd`` connections or a SPDES
    check's added gpd, as text)."""
    rows = svc.store.jobs(owner_id=u["id"], status="successful", limit=limit)
    out: dict = {f: [] for f in CITED_PROCESSES}
    with svc.ledger() as lg:
        for field, process in CITED_PROCESSES.items():
            for j in rows:
                if j["process"] != process or j["verdict"] != "pass":
                    continue
                if j.get("result_sha256") and any(x["holds"] for x in lg.evidence_use(j["result_sha256"])):
                    continue
                inputs = j["inputs"] or {}
                flows = (", ".join(f"{c.get('node')}={float(c.get('gpd', 0)):,.0f}" for c in inputs.get("connections", []))
                         if field == "capacity_job" else
                         ", ".join(f"{float(g):,.0f}" for g in inputs.get("added_gpd", [])))
                out[field].append({"id": j["id"], "finished": (j["finished_at"] or "")[:16].replace("T", " "),
                                   "verdict": j["verdict"], "flows": flows, "model": inputs.get("model") or inputs.get("plant")})
    return out


def _cited_job_stands(svc, job_id: str | None, what: str) -> None:
    """Refuse a sign-off whose cited job is not (or no longer) a successful job of the service."""
    job = svc.store.job(job_id) if job_id else None
    if job is None or job["status"] != "successful":
        state = job["status"] if job else "not a job of this service"
        raise RefusedError(f"{what} {job_id or '(none)'} is {state}; not signed off")


def _enact(lg, txn: str, decision: str, note: str) -> dict:
    """The ledger's act of an administrator's decision: the sign-off, or the rejection with its reason (required)."""
    if decision == "approve":
        return lg.sign_off(txn, reason=note)
    if not note.strip():
        raise ServiceInputError("body.note", note, "the reason for the rejection (required)", "empty")
    return lg.reject(txn, reason=note)


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
            _cited_job_stands(svc, job_id, f"application {application!r}: the cited {field}")
        try:
            out = _enact(lg, w["signoff_txn"], body["decision"], note)
        except Exception as exc:
            svc.store.journal("sign-off", u, application, {"decision": body["decision"], "error": str(exc)},
                              outcome="refused")
            raise
        w = lg.withdrawal(application)
    svc.store.journal("sign-off", u, application, {"decision": body["decision"], "note": note, **cited})
    return {"withdrawal": w | cited, "ledger": _jsonable(out)}


def check_quantification(job: dict, project: str, owner: str, gpd: float, basin: str | None = None) -> dict:
    """The quantification a service deposit cites: a successful ``credits-quantification`` job of ``project``.

    The service checks the job (its process, that it succeeded, that its result document still has the
    SHA-256 recorded when it ended); what the document must say (the PE and licence, the project,
    municipal user and basin, a total at least ``gpd``) is the bank's rule,
    :func:`capacitysim.bank.refs.quantification_facts`, as for a file cited through the CLI.

    Returns
    -------
    dict
        ``{"ref": "service job <id>", "sha256", "document"}``, to give to ``Ledger.deposit(quantification=)``.

    Raises
    ------
    ServiceInputError
        The job is of another process.
    RefusedError
        The job has not succeeded, its document changed, or it does not cover the deposit.
    """
    field = "quantification_job"
    if job["process"] != "credits-quantification":
        raise ServiceInputError(field, job["id"], "the id of a credits-quantification job",
                                f"job {job['id']} is a {job['process']} job")
    if job["status"] != "successful":
        raise RefusedError(f"{field}: job {job['id']} is {job['status']}; the bank cites only successful jobs")
    data = Path(job["result_path"]).read_bytes()
    if hashlib.sha256(data).hexdigest() != job["result_sha256"]:
        raise RefusedError(f"{field}: the result document of job {job['id']} changed since the job ended (SHA-256 "
                           f"{job['result_sha256'][:12]}... recorded); it is not evidence")
    doc = json.loads(data)
    quantification_facts(field, f"job {job['id']}", doc, project=project, owner=owner, basin=basin, gpd=gpd)
    return {"ref": f"service job {job['id']}", "sha256": job["result_sha256"], "document": doc}


def note_response(note: dict, format: str):
    """A flow credit note as an HTTP response: HTML shown inline, or a PDF download, named by
    :func:`capacitysim.workflows.note.note_stem` (letters, digits, ``.-_`` only)."""
    from fastapi.responses import Response

    from capacitysim.report.note import note_html, note_pdf
    from capacitysim.workflows.note import note_stem

    name = f"{note_stem(note['application'])}.{format}"
    if format == "pdf":
        return Response(note_pdf(note), media_type="application/pdf",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})
    return Response(note_html(note), media_type="text/html; charset=utf-8",
                    headers={"Content-Disposition": f'inline; filename="{name}"'})


def _quantification_job(documents) -> str | None:
    for d in documents if isinstance(documents, list) else []:
        m = _JOB_DOC.match(str(d))
        if m:
            return m.group(1)
    return None


def ledger_deposits(lg) -> list[dict]:
    """Every deposit recorded in the ledger, oldest first, with its sign-off (from the ledger's journal).

    Each: ``txn`` (the deposit's id), ``project``, ``basin``, ``owner``, ``gpd`` (booked, whole gpd),
    ``stated_gpd``, ``certified_on``, ``certificate``, ``description``, ``documents``,
    ``quantification_job`` (the service job cited, or None), ``recorded_by``, ``recorded_at``,
    ``signoff_status`` (``pending``, ``signed-off``, ``rejected``), ``decided_by``, ``decided_at``, ``note``.
    """
    rows = lg.journal()
    pending = {p["txn"] for p in lg.pending() if p["kind"] == "deposit"}
    decided = {}
    for r in rows:
        d = r["detail"] if isinstance(r["detail"], dict) else {}
        if r["action"] in ("sign-off", "reject") and d.get("kind") == "deposit":
            decided[d.get("txn")] = r
    out = []
    for r in rows:
        if r["action"] != "record-deposit":
            continue
        d = r["detail"] if isinstance(r["detail"], dict) else {}
        dec = decided.get(r["txn"])
        status = "pending" if r["txn"] in pending else (
            "signed-off" if dec is not None and dec["action"] == "sign-off" else "rejected" if dec is not None else "unknown")
        out.append({"txn": r["txn"], "project": r["ref"], "basin": r["basin"], "owner": d.get("owner"),
                    "gpd": d.get("booked_gpd"), "stated_gpd": d.get("stated_gpd"), "certified_on": d.get("certified_on"),
                    "certificate": d.get("certificate"), "description": d.get("description", ""),
                    "documents": d.get("documents", []), "quantification_job": _quantification_job(d.get("documents")),
                    "recorded_by": r["actor"], "recorded_at": r["at"], "signoff_status": status,
                    "decided_by": dec["actor"] if dec else None, "decided_at": dec["at"] if dec else None,
                    "note": dec["reason"] if dec else None})
    return out


def ledger_transfers(lg) -> list[dict]:
    """Every transfer (:meth:`capacitysim.bank.Ledger.transfers`) with its sign-off transaction id ``txn``."""
    txn = {r["ref"]: r["txn"] for r in lg.journal() if r["action"] == "transfer-out"}
    return [t | {"txn": txn.get(t["transfer"])} for t in lg.transfers()]


def _record(lg, kind: str, ident: str) -> dict:
    """The deposit (by txn) or transfer (by ``transfer-N``) ``ident``; 404 when there is none."""
    ident = str(ident).strip().lower()
    if kind == "deposit":
        rows = [d for d in ledger_deposits(lg) if d["txn"] == ident] if _TXN.match(ident) else []
        allowed = "the txn (32 hexadecimal digits) printed when the deposit was recorded"
    else:
        rows = [t for t in ledger_transfers(lg) if t["transfer"] == ident]
        allowed = "a transfer id transfer-N"
    if not rows:
        raise ApiError(404, "Not found", f"no {kind} {ident[:80]!r} in the bank; allowed: {allowed} (GET /bank/{kind}s)")
    return rows[0]


def decide_pending(svc, u, kind: str, ident: str, body) -> dict:
    """The administrator's decision on a pending deposit (by txn) or transfer (by ``transfer-N``).

    The API's ``POST /bank/deposits/{txn}/sign-off`` and ``POST /bank/transfers/{transfer}/sign-off`` and
    the bank page's forms. A deposit recorded through the service is signed off only while the quantification
    job it cites is still a successful job of the service; one recorded with ``capacitysim bank deposit`` (no
    job: its certificate reference is the evidence) is decided on the ledger's own record. A rejection needs a
    note (the reason, in the bank's journal).
    """
    check_value("body", body, SIGN_OFF_SCHEMA)
    note = body.get("note", "")
    decision = body["decision"]
    detail = {"kind": kind, "decision": decision, "note": note}
    try:
        with svc.ledger(u) as lg:
            rec = _record(lg, kind, ident)
            ident = rec["txn"] if kind == "deposit" else rec["transfer"]
            if rec["signoff_status"] != "pending":
                raise RefusedError(f"{kind} {ident} is {rec['signoff_status']}, not awaiting sign-off")
            if kind == "deposit" and decision == "approve":
                job_id = rec["quantification_job"]
                if job_id:  # recorded through the service: its evidence must still stand
                    _cited_job_stands(svc, job_id, f"deposit {ident}: the cited quantification job")
                    detail["quantification_job"] = job_id
                else:  # recorded with `capacitysim bank deposit`: its certificate is the evidence the ledger holds
                    detail["evidence"] = "recorded outside the service (the ledger's certificate reference)"
            out = _enact(lg, rec["txn"], decision, note)
            rec = _record(lg, kind, ident)
            balances = lg.balances()
    except ApiError:
        raise
    except Exception as exc:
        svc.store.journal("sign-off", u, str(ident)[:100], detail | {"error": str(exc)}, outcome="refused")
        raise
    svc.store.journal("sign-off", u, ident, detail)
    return {kind: rec, "ledger": _jsonable(out), "balances": balances}


def citing(svc, job: dict) -> list[str]:
    """The bank records citing a job as evidence, named (``application APP-1``, ``deposit of project P``):
    withdrawals whose capacity or SPDES document is the job's result, and deposits (pending or signed off)
    citing it as their project's quantification.

    For the dismissal of :func:`capacitysim.service.app.create_app`: a cited job is not dismissed (409).
    """
    if not job.get("result_path") or not svc.bank_path.is_file():
        return []
    with svc.ledger() as lg:
        out = [f"application {w['application']}" for w in lg.withdrawals()
               if job["result_path"] in (w.get("capacity_ref"), w.get("spdes_ref"))]
        out += [f"deposit of project {d['project']}" for d in ledger_deposits(lg)
                if d["quantification_job"] == job["id"] and d["signoff_status"] in ("pending", "signed-off")]
    return out


def install(app, svc, user, require) -> None:
    """Add the ``/bank`` routes to ``app``."""
    from capacitysim.service import auth

    def job_for(field: str, job_id: str, u):
        return cited_job(svc, field, job_id, u)

    def jobs_citing(w: dict) -> dict:
        return jobs_citing_in(svc.store, w)

    @app.get("/bank/balances", summary="Balances of every subaccount (with what pending requests reserve)")
    def balances(u=Depends(user)):
        require(u, "bank-read", "read the bank")
        with svc.ledger() as lg:
            return {"balances": balances_reserved(lg)}

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

    @app.get("/bank/withdrawals/{application}/note", summary="The flow credit note of a signed-off withdrawal (HTML or PDF)")
    def withdrawal_note(application: str, format: str = Query("html", pattern="^(html|pdf)$"), u=Depends(user)):
        """The note the administrator's sign-off issued (workflows.note, report.note: the CLI's ``bank note``),
        rendered from the public record: the same bytes every time."""
        from capacitysim.workflows.note import flow_credit_note

        require(u, "bank-read", "read the bank")
        with svc.ledger() as lg:
            try:
                note = flow_credit_note(lg, application)
            except InputError as exc:  # unknown application
                raise ApiError(404, "Not found", str(exc)) from None
        return note_response(note, format)

    @app.post("/bank/withdrawals", status_code=201, summary="Request a withdrawal citing a capacity and a SPDES job")
    def withdraw(body: Any = Body(None, examples=[{"basin": "Johnson City CSO 4", "owner": "Village of Johnson City",
                                                   "peak_flow_gpd": 4000, "application": "APP-1", "node": "MH0003",
                                                   "capacity_job": "0" * 32, "spdes_job": "0" * 32,
                                                   "application_approval": "H2-1"}]), u=Depends(user)):
        require(u, "withdraw", "request withdrawals")
        return request_withdrawal(svc, u, body)

    @app.post("/bank/withdrawals/{application}/sign-off", summary="The bank administrator approves or rejects")
    def sign_off(application: str, body: Any = Body(None, examples=[{"decision": "approve", "note": "checked"}]),
                 u=Depends(user)):
        require(u, "sign-off", "sign off withdrawals", application)
        return decide(svc, u, application, body)

    # --- deposits and transfers ---------------------------------------------------------------------
    def may_record(u, kind: str, target: str = "") -> None:
        if not auth.can(u, kind):
            roles = [r for r in auth.ROLES if kind in auth.PERMISSIONS[r]]
            svc.store.journal(f"record {kind}s", u, target, {"roles": roles}, outcome="forbidden")
            raise ApiError(403, "Forbidden", f"the role {u['role']!r} may not record {kind}s (service policy bank_roles: "
                                             f"{', '.join(roles)})")

    def status_filter(status):
        if status is not None and status not in SIGNOFF_STATES:
            raise ServiceInputError("status", status, "one of " + ", ".join(SIGNOFF_STATES))

    def read_routes(kind: str, rows_of, list_summary: str, one_summary: str) -> None:
        """``GET /bank/{kind}s`` (``?status=``) and ``GET /bank/{kind}s/{ident}``: the ledger's records of a kind."""
        plural = f"{kind}s"

        @app.get(f"/bank/{plural}", summary=list_summary, operation_id=f"list_{plural}")
        def listing(status: str | None = None, u=Depends(user)):
            require(u, "bank-read", "read the bank")
            status_filter(status)
            with svc.ledger() as lg:
                rows = rows_of(lg)
            return {plural: [d for d in rows if status is None or d["signoff_status"] == status]}

        @app.get(f"/bank/{plural}/{{ident}}", summary=one_summary, operation_id=f"get_{kind}")
        def one(ident: str, u=Depends(user)):
            require(u, "bank-read", "read the bank")
            with svc.ledger() as lg:
                return _record(lg, kind, ident)

    read_routes("deposit", ledger_deposits, "Deposits (with the quantification job each cites and its sign-off)",
                "One deposit, by its transaction id")
    read_routes("transfer", ledger_transfers, "Transfers between holders (with their sign-off)", "One transfer (transfer-N)")


    @app.post("/bank/deposits", status_code=201,
              summary="Record a deposit of a certified project's credits citing its quantification job (pending sign-off)")
    def deposit(body: Any = Body(None, examples=[{"basin": "Johnson City CSO 4", "owner": "Village of Johnson City", "gpd": 8000,
                                                  "project": "JC-2025-01", "quantification_job": "0" * 32,
                                                  "certificate": "Appendix A letter 2025-01"}]), u=Depends(user)):
        target = str(body.get("project", ""))[:100] if isinstance(body, dict) else ""
        may_record(u, "deposit", target)
        check_value("body", body, DEPOSIT_SCHEMA)
        require_bound(svc, u, body["owner"], "deposit", target)
        job = job_for("quantification_job", body["quantification_job"], u)
        try:
            # the ledger strips the names it is given: the check reads them the same way
            quant = check_quantification(job, str(body["project"]).strip(), str(body["owner"]).strip(), body["gpd"],
                                         str(body["basin"]).strip())
            with svc.ledger(u) as lg:
                out = lg.deposit(body["basin"], body["owner"], body["gpd"], body["project"], quantification=quant,
                                 property=body.get("property"),
                                 certified_on=body.get("certified_on"), certificate=body.get("certificate"),
                                 description=body.get("description", ""),
                                 reason=body.get("reason") or f"recorded through the service by {u['name']}",
                                 documents=[f"service job {job['id']}", f"result.json sha256 {job['result_sha256']}"])
                rec = _record(lg, "deposit", out["txn"])
        except Exception as exc:
            svc.store.journal("deposit", u, target, {"quantification_job": job["id"], "error": str(exc)}, outcome="refused")
            raise
        svc.store.journal("deposit", u, out["txn"], {"project": body["project"], "quantification_job": job["id"],
                                                     "gpd": out["booked_gpd"]})
        return {"deposit": rec, "ledger": _jsonable(out)}

    @app.post("/bank/deposits/{txn}/sign-off", summary="The bank administrator approves or rejects a deposit")
    def deposit_sign_off(txn: str, body: Any = Body(None, examples=[{"decision": "approve", "note": "certificate checked"}]),
                         u=Depends(user)):
        require(u, "sign-off", "sign off deposits", txn[:100])
        return decide_pending(svc, u, "deposit", txn, body)


    @app.post("/bank/transfers", status_code=201,
              summary="Record a transfer of credits between holders, citing its document (pending sign-off)")
    def transfer(body: Any = Body(None, examples=[{"basin": "Johnson City CSO 4", "from_owner": "Village of Johnson City",
                                                   "to_owner": "Oak Street Developer LLC", "gpd": 2000,
                                                   "document": "bill of sale 2025-03"}]), u=Depends(user)):
        target = f"{body.get('from_owner', '')} -> {body.get('to_owner', '')}"[:200] if isinstance(body, dict) else ""
        may_record(u, "transfer", target)
        check_value("body", body, TRANSFER_SCHEMA)
        require_bound(svc, u, body["from_owner"], "transfer", target)
        try:
            with svc.ledger(u) as lg:
                out = lg.transfer(body["basin"], body["from_owner"], body["to_owner"], body["gpd"],
                                  document=body["document"], to_basin=body.get("to_basin"),
                                  board_approval=body.get("board_approval"),
                                  reason=body.get("reason") or f"recorded through the service by {u['name']}")
                rec = _record(lg, "transfer", out["transfer"])
        except Exception as exc:
            svc.store.journal("transfer", u, target, {"error": str(exc)}, outcome="refused")
            raise
        svc.store.journal("transfer", u, out["transfer"], {"from": body["from_owner"], "to": body["to_owner"],
                                                           "gpd": body["gpd"], "document": body["document"]})
        return {"transfer": rec, "ledger": _jsonable(out)}

    @app.post("/bank/transfers/{transfer}/sign-off", summary="The bank administrator approves or rejects a transfer")
    def transfer_sign_off(transfer: str, body: Any = Body(None, examples=[{"decision": "approve",
                                                                           "note": "bill of sale checked"}]),
                          u=Depends(user)):
        require(u, "sign-off", "sign off transfers", transfer[:100])
        return decide_pending(svc, u, "transfer", transfer, body)

    # --- service users bound to bank entities (program policy service_user_binding) ------------------
    @app.get("/bank/bindings", summary="The service users bound to bank entities (administrator)")
    def list_bindings(user_name: str | None = Query(None, alias="user", max_length=200),
                      entity: str | None = Query(None, max_length=200), closed: bool = False, u=Depends(user)):
        require(u, "sign-off", "read the bank's user bindings")
        with svc.ledger() as lg:
            rows = lg.bindings(user=user_name, entity=entity, closed=closed)
        from capacitysim.bank import policies

        return {"bindings": rows, "policies": policies("service_user_binding", "bank_reads")}

    @app.post("/bank/bindings", status_code=201, summary="Bind a service user to a bank entity they act for (administrator)")
    def bind(body: Any = Body(None, examples=[{"user": "Mia Municipal", "entity": "Village of Johnson City",
                                               "document": "Village letter 2026-3"}]), u=Depends(user)):
        target = f"{body.get('user', '')} -> {body.get('entity', '')}"[:200] if isinstance(body, dict) else ""
        require(u, "sign-off", "bind users to bank entities", target)
        check_value("body", body, BINDING_SCHEMA)
        who = svc.store.user_by_name(body["user"])
        if who is None:
            raise ServiceInputError("body.user", body["user"], "the name of a user of the service (GET /users)",
                                    "no such user")
        if who["revoked_at"] is not None:
            raise RefusedError(f"user {who['name']!r} was revoked at {who['revoked_at']}; a revoked user is not bound")
        try:
            with svc.ledger(u) as lg:
                out = lg.bind_user(who["name"], body["entity"], role=who["role"], document=body.get("document"),
                                   reason=body.get("reason") or f"bound through the service by {u['name']}")
        except Exception as exc:
            svc.store.journal("bind-user", u, target, {"error": str(exc)}, outcome="refused")
            raise
        svc.store.journal("bind-user", u, f"{out['user']} -> {out['entity']}", {"role": out["role"],
                                                                                 "binding": out["binding"]})
        return {"binding": _jsonable(out)}

    @app.delete("/bank/bindings", summary="Close a service user's binding to a bank entity (administrator)")
    def unbind(user_name: str = Query(..., alias="user", min_length=1, max_length=200),
               entity: str = Query(..., min_length=1, max_length=200), reason: str = Query("", max_length=2000),
               u=Depends(user)):
        target = f"{user_name} -> {entity}"[:200]
        require(u, "sign-off", "unbind users from bank entities", target)
        try:
            with svc.ledger(u) as lg:
                out = lg.unbind_user(user_name, entity, reason=reason or f"unbound through the service by {u['name']}")
        except InputError as exc:
            svc.store.journal("unbind-user", u, target, {"error": str(exc)}, outcome="refused")
            raise ApiError(404, "Not found", str(exc)) from None
        except Exception as exc:
            svc.store.journal("unbind-user", u, target, {"error": str(exc)}, outcome="refused")
            raise
        svc.store.journal("unbind-user", u, f"{out['user']} -> {out['entity']}", {"binding": out["binding"]})
        return {"binding": _jsonable(out)}

    # --- the capacity register: models of record, commitments, connections, expiries (issue 24) -------
    from capacitysim.service import register_api

    register_api.install(app, svc, user, require, require_bound)


def cited_job(svc, field: str, job_id: str, u) -> dict:
    """The service job ``job_id`` cited in ``field``: a ServiceInputError when there is none, 403 (journaled) when it is
    another user's and ``u`` may not read it."""
    from capacitysim.service import auth

    job = svc.store.job(job_id)
    if job is None:
        raise ServiceInputError(field, job_id, "the id of one of the service's jobs", "no such job")
    if not auth.may_read_job(u, job):
        svc.store.journal("cite job", u, job_id, {"field": field}, outcome="forbidden")
        raise ApiError(403, "Forbidden", f"{field}: job {job_id} belongs to another user")
    return job


def request_withdrawal(svc, u, body) -> dict:
    """Record a withdrawal request (pending sign-off) citing a capacity and a SPDES job: ``POST /bank/withdrawals``
    and the bank page's request form (the caller has checked the ``withdraw`` permission).

    The body is checked against :data:`WITHDRAWAL_SCHEMA` (a ServiceInputError naming ``body.<field>``), the user must
    act for the owner (:func:`require_bound`), each cited job must cover the withdrawal (:func:`check_job_scenario`)
    and be the evidence of no other application (:func:`evidence_cited`); the ledger refuses the rest. Every
    refusal is journaled. Returns ``{"withdrawal", "ledger"}``.
    """
    check_value("body", body, WITHDRAWAL_SCHEMA)
    require_bound(svc, u, body["owner"], "withdrawal", body["application"])
    cap = cited_job(svc, "capacity_job", body["capacity_job"], u)
    spd = cited_job(svc, "spdes_job", body["spdes_job"], u)
    try:
        check_job_scenario(cap, "capacity-demonstration", "capacity_job", body["peak_flow_gpd"], body["node"])
        check_job_scenario(spd, "spdes-check", "spdes_job", body["peak_flow_gpd"], None)
        evidence_cited(svc, cap, "capacity_job", body["application"])
        evidence_cited(svc, spd, "spdes_job", body["application"])
    except RefusedError as exc:
        svc.store.journal("withdraw", u, body["application"], {"error": str(exc)}, outcome="refused")
        raise
    with svc.ledger(u) as lg:
        try:
            out = lg.withdraw(body["basin"], body["owner"], body["peak_flow_gpd"], body["application"],
                              node=body["node"], average_gpd=body.get("average_gpd"),
                              capacity_ref=cap["result_path"], spdes_ref=spd["result_path"],
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
    return {"withdrawal": w | jobs_citing_in(svc.store, w), "ledger": _jsonable(out)}


def require_bound(svc, u, entity, kind: str, target: str = "") -> None:
    """Refuse (403, a problem naming the entity) a user recording a ``kind`` for an entity they are not bound to.

    Program policy ``service_user_binding``: administrators act for every entity; an engineer or a municipal
    user only for the entities the bank administrator bound them to. An unknown entity is left to the ledger
    (400).
    """
    if u["role"] == "administrator" or not isinstance(entity, str):
        return
    with svc.ledger() as lg:
        try:
            if lg.acts_for(u["name"], entity):
                return
        except InputError:
            return  # not an entity of the bank: the ledger says so (400)
        bound = lg.bound_entities(u["name"])
    svc.store.journal(f"record {kind}s", u, target, {"entity": entity, "bound_to": bound, "policy": "service_user_binding"},
                      outcome="forbidden")
    raise ApiError(403, "Forbidden", f"{u['name']!r} ({u['role']}) is not bound to {entity!r} and may not record {kind}s "
                                     f"for it; bound to: {', '.join(bound) or 'no entity'} (program policy "
                                     "service_user_binding: the bank administrator binds a user to the entities they act "
                                     "for, `POST /bank/bindings`)",
                   entity=entity, user=u["name"], bound_to=bound, policy="service_user_binding")


def evidence_cited(svc, job: dict, field: str, application: str) -> None:
    """Refuse (409) citing a job whose result is already the evidence of another application (program policy
    ``evidence_single_use``), naming that application and the job."""
    sha = job.get("result_sha256")
    if not sha:
        return
    with svc.ledger() as lg:
        holders = [x for x in lg.evidence_use(sha) if x["holds"]]
    if holders:
        first = holders[0]
        raise RefusedError(f"{field}: the result of job {job['id']} is already the evidence of application "
                           f"{first['application']!r} ({first['status']}); application {application!r} cannot cite it: a "
                           "capacity demonstration or treatment check is the evidence of one application only (program "
                           "policy evidence_single_use: released if that withdrawal is rejected or returned); run the "
                           f"job for application {application!r}")


def _jsonable(obj):
    import json

    return json.loads(json.dumps(obj, default=str))
