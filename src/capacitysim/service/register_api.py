"""``/bank/models``, ``/bank/commitments``, ``/bank/register``, connections and expiries: the capacity register
(issue 24, "no capacity promised twice") behind the service.

The bank (:class:`capacitysim.bank.Ledger`) keeps the capacity allocation register: the model of record of each
basin, and every flow approved or reserved and not yet in that model as a *commitment* at its node and plant.
These routes are the ledger's own acts and reads, as the CLI's ``capacitysim bank register-model``, ``models``,
``commitments``, ``connect``, ``expire`` and ``register`` are:

``GET /bank/models`` (``?basin=``)
    Every registered model version (bank readers).
``POST /bank/models``
    An administrator registers a basin's model of record (a new version) from their own upload: ``{"basin",
    "model": "upload:<sha256>", "model_files", "outlet", "plant", "includes", "on", "reason"}``. The bank
    requires a registered bank administrator too. What is registered is **the model as the service runs it**:
    the text :func:`capacitysim.service.processes.confined_model` makes of the upload (the model may read only
    the files uploaded with it), written to ``DATA/models/<sha256>/`` with those files. For most models that
    text is the upload byte for byte; when it is not (a model naming its files by path, a file with CRLF line
    ends), the answer says so (``model_sha256`` and ``upload_sha256`` differ). A capacity job on the same
    upload then runs that very text, so its result records the registered SHA-256.
``GET /bank/commitments?model=<sha256>`` or ``?plant=<key>`` (``&as_of=``)
    The committed flows of the basins on a registered model, or draining to a plant (bank readers).
``POST /bank/applications/{application}/connect``
    ``{"on", "reason", "document"}``: the flow of an approved application is in the sewer. An administrator,
    or a municipal user bound to the application's principal (the municipal user whose sewer receives the
    connection; program policy ``service_user_binding``).
``POST /bank/expire``
    ``{"as_of", "reason"}``: an administrator releases every approval not connected within program policy
    ``approval_expiry_years`` (15 RCNY § 18-37(e)).
``GET /bank/register`` (``?as_of=``)
    The register: per registered model and per plant, the committed flows and totals
    (:meth:`capacitysim.bank.Ledger.register`), and the remaining headroom of the newest ``capacity-register`` job
    (the register workflow, :mod:`capacitysim.workflows.register`, run as a job: ``POST
    /processes/capacity-register/execution``), each figure current or stale against the bank now.

Every answer shows file names, never where the server keeps them (:meth:`capacitysim.service.app.Service.hide`).
The bank's refusals are 409 and its input errors 400 (the app's handlers of :class:`~capacitysim.errors.RefusedError`
and :class:`~capacitysim.errors.InputError`, as for every bank route); each act and refusal goes to the service's
journal and each change to the bank's.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

from fastapi import Body, Depends, Query

from capacitysim.errors import InputError
from capacitysim.service.problems import ApiError
from capacitysim.service.processes import (
    MAX_COMPANIONS,
    MAX_ITEMS,
    MAX_TEXT_CHARS,
    ServiceInputError,
    check_value,
)

_TEXT = {"type": "string", "minLength": 1, "maxLength": 200}
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
#: The folder of the data folder where registered models are kept, by the SHA-256 of the text registered.
MODELS_DIR = "models"

MODEL_SCHEMA = {
    "type": "object",
    "required": ["basin", "model"],
    "additionalProperties": False,
    "properties": {
        "basin": _TEXT | {"description": "A basin of the bank (`capacitysim bank add-basin`)."},
        "model": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT_CHARS,
                  "description": "The model of record: \"upload:<sha256>\" of the administrator's own upload (POST "
                                 "/uploads), or a bundled model's name."},
        "model_files": {"type": "array", "maxItems": MAX_COMPANIONS,
                        "items": {"type": "string", "maxLength": MAX_TEXT_CHARS},
                        "description": "Files uploaded with the model (\"upload:<sha256>\"), named by it by their bare "
                                       "names, as a capacity job's inputs.model_files."},
        "outlet": {"type": "string", "minLength": 1, "maxLength": 100,
                   "description": "The basin's outlet node in the model (credit bank section A is checked against it); "
                                  "required for a basin's first model, default the previous version's."},
        "plant": _TEXT | {"description": "The plant the basin drains to: its SPDES permit number or name, as a SPDES "
                                         "check names it (default the previous version's)."},
        "includes": {"type": "array", "maxItems": MAX_ITEMS, "items": _TEXT,
                     "description": "Connected applications this version contains: their commitments are released "
                                    "(program policy connected_until_registered)."},
        "on": {"type": "string", "format": "date", "description": "Date registered (default today)."},
        "reason": {"type": "string", "maxLength": 2000},
    },
}
CONNECT_SCHEMA = {
    "type": "object", "additionalProperties": False,
    "properties": {"on": {"type": "string", "format": "date", "description": "Date connected (default today)."},
                   "document": _TEXT | {"description": "The document showing the connection (inspection, permit)."},
                   "reason": {"type": "string", "maxLength": 2000}},
}
EXPIRE_SCHEMA = {
    "type": "object", "additionalProperties": False,
    "properties": {"as_of": {"type": "string", "format": "date", "description": "Date of the expiry (default today)."},
                   "reason": {"type": "string", "maxLength": 2000}},
}
_DATE = {"type": "string", "format": "date"}


def public(svc, doc):
    """``doc`` with every server path in it cut to its name (:meth:`capacitysim.service.app.Service.hide`, through
    its JSON text)."""
    return json.loads(svc.hide(json.dumps(doc, default=str)))


def _date(field: str, value) -> str | None:
    if value is not None:
        check_value(field, value, _DATE)
    return value


def model_of_record(svc, u, body: dict) -> dict:
    """The model an administrator registers, as the service runs it, written to ``DATA/models/<sha256>/``.

    Returns ``{"path", "sha256", "upload_sha256", "name"}`` (``sha256``: of the text registered).

    Raises
    ------
    ServiceInputError
        Not the user's own upload (nor a bundled model), a model that reads a file not uploaded with it, or
        two files of one name.
    """
    from capacitysim.files import atomic_write_bytes
    from capacitysim.service.processes import confined_model, resolve_file, sha256_file

    uploads = svc.uploads_of(u)
    source = resolve_file("body.model", body["model"], "model", uploads)
    companions: dict[str, Path] = {}
    for i, ref in enumerate(body.get("model_files", [])):
        path = resolve_file(f"body.model_files[{i}]", ref, None, uploads)
        if path.name in companions:
            raise ServiceInputError(f"body.model_files[{i}]", ref, "files of distinct names (the model names them by "
                                    "name)", f"a second file named {path.name!r}")
        companions[path.name] = path
    text, _ = confined_model(source, set(companions), "body.model")
    data = text.encode("latin-1")
    sha = hashlib.sha256(data).hexdigest()
    folder = svc.data_dir / MODELS_DIR / sha
    name = source.name if source.suffix.lower() == ".inp" else f"{source.stem or 'model'}.inp"
    if name in companions:
        name = f"model-{name}"
    dest = folder / name
    if not dest.is_file() or sha256_file(dest) != sha:
        atomic_write_bytes(dest, data)
    for cname, cpath in companions.items():
        target = folder / cname
        if not target.is_file() or sha256_file(target) != sha256_file(cpath):
            shutil.copyfile(cpath, target)
    return {"path": dest, "sha256": sha, "upload_sha256": sha256_file(source), "name": name}


def register_document(svc, as_of=None) -> dict:
    """The capacity register of the service's bank (``GET /bank/register`` and the register page), paths cut to
    names: per registered model and per plant, the committed flows and totals as the bank has them now
    (:meth:`capacitysim.bank.Ledger.register`), and ``computed``: the figures of the newest successful
    ``capacity-register`` job (:func:`computed_register`), or None."""
    with svc.ledger() as lg:
        reg = lg.register(as_of=as_of)
    reg["computed"] = computed_register(svc)
    return public(svc, reg)


def computed_register(svc) -> dict | None:
    """The figures of the newest successful ``capacity-register`` job, each marked current or stale against the bank
    now (:func:`capacitysim.workflows.register.stored_register` on the store the job wrote in its folder), or None
    when no such job has run.

    Returns ``{"job", "finished", "document"}`` (the models' geometry left out: the job's report has the maps), or
    ``{"job", "finished", "error"}`` when its store cannot be read.
    """
    from capacitysim.service.tasks import REGISTER_STORE
    from capacitysim.workflows.register import stored_register

    rows = svc.store.read("SELECT id FROM jobs WHERE process = ? AND status = 'successful' ORDER BY finished_at DESC "
                          "LIMIT 1", ("capacity-register",))
    job = svc.store.job(rows[0]["id"]) if rows else None
    if job is None:
        return None
    out = {"job": job["id"], "finished": job["finished_at"]}
    store = svc.runner.job_dir(job["id"]) / f"attempt-{job['attempts']}" / REGISTER_STORE
    try:
        doc = stored_register(svc.bank_path, cache=store).to_dict()
    except InputError as exc:
        return out | {"error": str(exc)}
    for m in doc.get("models", []):
        m.pop("geometry", None)
    return out | {"document": doc}


def install(app, svc, user, require, require_bound) -> None:
    """Add the capacity register's ``/bank`` routes to ``app`` (``require_bound``: the bank routes' check of program
    policy service_user_binding, :func:`capacitysim.service.bank_api.require_bound`)."""
    from capacitysim.bank import policies

    def view(doc):
        return public(svc, doc)

    @app.get("/bank/models", summary="Every registered model of record (basin, version, SHA-256, outlet, plant)")
    def models(basin: str | None = Query(None, min_length=1, max_length=200), u=Depends(user)):
        require(u, "bank-read", "read the bank")
        with svc.ledger() as lg:
            try:
                rows = lg.models(basin)
            except InputError as exc:
                raise ServiceInputError("basin", basin, "a basin of the bank", str(exc)) from None
        return view({"models": rows, "policies": policies("section_a_unregistered", "connected_until_registered")})

    @app.post("/bank/models", status_code=201,
              summary="Register a basin's model of record from the administrator's upload (administrator)")
    def register_model(body: Any = Body(None, examples=[{"basin": "Johnson City CSO 4", "model": "upload:" + "0" * 64,
                                                        "outlet": "MH0004", "plant": "Sample WWTP (made up)"}]),
                       u=Depends(user)):
        target = str(body.get("basin", ""))[:200] if isinstance(body, dict) else ""
        require(u, "register-model", "register models of record", target)
        check_value("body", body, MODEL_SCHEMA)
        try:
            rec = model_of_record(svc, u, body)
            with svc.ledger(u) as lg:
                out = lg.register_model(
                    body["basin"], rec["path"], outlet=body.get("outlet"), plant=body.get("plant"),
                    includes=body.get("includes", ()), on=body.get("on"),
                    reason=body.get("reason") or f"registered through the service by {u['name']}",
                    documents=[f"service upload {rec['upload_sha256']}"])
        except Exception as exc:
            svc.store.journal("register-model", u, target, {"model": body["model"], "error": str(exc)}, outcome="refused")
            raise
        svc.store.journal("register-model", u, f"{out['basin']} v{out['version']}",
                          {"model_sha256": out["model_sha256"], "upload_sha256": rec["upload_sha256"],
                           "outlet": out["outlet"], "plant": out["plant"], "includes": out["includes"]})
        note = (None if rec["sha256"] == rec["upload_sha256"] else
                "the model of record is the text the service runs (its files named by their bare names, lines as the "
                "engine reads them), not the upload byte for byte: capacity jobs on the upload run this text")
        return view({"model": out, "upload_sha256": rec["upload_sha256"], "note": note})

    @app.get("/bank/commitments",
             summary="The committed flows on a registered model (?model=<sha256>) or at a plant (?plant=<key>)")
    def commitments(model: str | None = Query(None, max_length=64), plant: str | None = Query(None, min_length=1,
                                                                                              max_length=200),
                    as_of: str | None = Query(None, max_length=10), u=Depends(user)):
        require(u, "bank-read", "read the bank")
        if (model is None) == (plant is None):
            raise ServiceInputError("model", model, "exactly one of ?model=<sha256> (a registered model's SHA-256, GET "
                                    "/bank/models) and ?plant=<key> (a plant's SPDES permit number or name)",
                                    "neither given" if model is None else "both given")
        if model is not None and not _SHA256.match(model.lower()):
            raise ServiceInputError("model", model, "the SHA-256 of a registered model (64 hexadecimal digits; GET "
                                    "/bank/models)")
        _date("as_of", as_of)
        with svc.ledger() as lg:
            try:
                out = lg.commitments(model_sha256=model.lower() if model else None, plant=plant, as_of=as_of)
            except InputError as exc:
                field, value = ("model", model) if model is not None else ("plant", plant)
                raise ServiceInputError(field, value, "a registered model's SHA-256 or a registered plant (GET "
                                        "/bank/models)", str(exc).removeprefix("--committed: ")) from None
        return view(out)

    @app.post("/bank/applications/{application}/connect",
              summary="Record that an approved application's flow is connected (administrator, or a municipal user "
                      "bound to its principal)")
    def connect(application: str, body: Any = Body(None, examples=[{"on": "2026-03-01", "document": "inspection 17"}]),
                u=Depends(user)):
        target = application[:200]
        require(u, "connect", "record connections", target)
        body = {} if body is None else body
        check_value("body", body, CONNECT_SCHEMA)
        with svc.ledger() as lg:
            principal = None
            for read in (lg.application, lg.withdrawal):
                try:
                    principal = read(application)["principal"]
                    break
                except InputError:
                    continue
        if principal is None:
            raise ApiError(404, "Not found", f"no application {target!r} in the bank (GET /bank/withdrawals)")
        require_bound(svc, u, principal, "connection", target)
        docs = [body["document"]] if body.get("document") else []
        try:
            with svc.ledger(u) as lg:
                out = lg.connect(application, body.get("on"), documents=docs,
                                 reason=body.get("reason") or f"recorded through the service by {u['name']}")
        except Exception as exc:
            svc.store.journal("connect", u, target, {"error": str(exc)}, outcome="refused")
            raise
        svc.store.journal("connect", u, target, {"connected_on": out.get("connected_on"), "principal": principal})
        return view({"application": out})

    @app.post("/bank/expire", summary="Release every approval not connected within the expiry period (administrator)")
    def expire(body: Any = Body(None, examples=[{"reason": "yearly review"}]), u=Depends(user)):
        require(u, "expire", "expire approvals")
        body = {} if body is None else body
        check_value("body", body, EXPIRE_SCHEMA)
        try:
            with svc.ledger(u) as lg:
                out = lg.expire(body.get("as_of"), reason=body.get("reason", ""))
        except Exception as exc:
            svc.store.journal("expire", u, "", {"error": str(exc)}, outcome="refused")
            raise
        svc.store.journal("expire", u, "", {"expired": [x["application"] for x in out], "as_of": body.get("as_of")})
        return view({"expired": out, "policies": policies("approval_expiry_years")})

    @app.get("/bank/register", summary="The capacity register: per model and plant, the committed flows and headroom")
    def register(as_of: str | None = Query(None, max_length=10), u=Depends(user)):
        require(u, "bank-read", "read the bank")
        return register_document(svc, _date("as_of", as_of))

