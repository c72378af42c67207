"""Helpers of the bank tests of tests/service: a project file uploaded under a new id, its quantification job,
balances, a second holder registered in the bank (the service has no route that registers entities), service
users bound to the bank entities they act for (program policy service_user_binding), and more users (a second
administrator: nobody signs off what they recorded, program policy signoff_separation)."""

from __future__ import annotations

import re
import uuid

from support import add_user, wait_final

from capacitysim.io.files import bundled_dir
from capacitysim.service.demo import BASIN, DEMO_USERS, MUNICIPAL

ASYNC = {"Prefer": "respond-async"}
#: The bundled example project every test project is made from (its items quantify to about 80,500 gpd).
OAK_STREET = bundled_dir("models") / "projects" / "oak-street-sump-and-manholes.toml"
#: The holder that receives transfers in the tests (registered in the bank by :func:`developer`).
DEVELOPER = "Oak Street Developer LLC"


def new_project_id(prefix: str = "JC-T") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def project_upload(client, project_id: str, municipal_user: str = MUNICIPAL) -> str:
    """Upload the Oak Street example under ``project_id`` (and ``municipal_user``); returns ``upload:<sha256>``."""
    text = OAK_STREET.read_text(encoding="utf-8")
    text = re.sub(r'(?m)^id = ".*"$', f'id = "{project_id}"', text, count=1)
    text = re.sub(r'(?m)^municipal_user = ".*"$', f'municipal_user = "{municipal_user}"', text, count=1)
    r = client.post("/uploads", params={"filename": f"{project_id}.toml"}, content=text.encode())
    assert r.status_code == 201, r.text
    return r.json()["id"]


def quantified(server, client, project_id: str, municipal_user: str = MUNICIPAL) -> tuple[str, float]:
    """A successful credits-quantification job of a new project: (job id, its total_gpd)."""
    ref = project_upload(client, project_id, municipal_user)
    r = client.post("/processes/credits-quantification/execution", headers=ASYNC, json={"inputs": {"project": ref}})
    assert r.status_code == 201, r.text
    job = wait_final(client, r.json()["jobID"])
    assert job["status"] == "successful", job
    doc = client.get(f"/jobs/{job['jobID']}/results").json()
    assert doc["project"]["id"] == project_id
    return job["jobID"], doc["total_gpd"]


def deposit_body(project_id: str, job_id: str, gpd: float, **extra) -> dict:
    return {"basin": BASIN, "owner": MUNICIPAL, "gpd": gpd, "project": project_id, "quantification_job": job_id,
            "certificate": f"Appendix A {project_id}", **extra}


def balances(client) -> dict:
    r = client.get("/bank/balances")
    assert r.status_code == 200, r.text
    return {(b["basin"], b["owner"]): b["balance_gpd"] for b in r.json()["balances"]}


def developer(server) -> str:
    """Register :data:`DEVELOPER` in the server's bank (once), as the demo's administrator, through the ledger."""
    from capacitysim.bank import Ledger

    with Ledger(server.data / "bank.sqlite", actor=DEMO_USERS["administrator"]) as lg:
        if DEVELOPER not in {e["name"] for e in lg.entities()}:
            lg.add_entity(DEVELOPER, reason="test: a developer buying credits")
    return DEVELOPER


def journal(admin_client) -> set:
    rows = admin_client.get("/journal", params={"limit": 10000}).json()["journal"]
    return {(x["user_name"], x["action"], x["target"], x["outcome"]) for x in rows}


def details(admin_client, action: str, target: str) -> list[dict]:
    rows = admin_client.get("/journal", params={"limit": 10000}).json()["journal"]
    return [x["detail"] for x in rows if x["action"] == action and x["target"] == target]



def bind(server, name: str, entity: str = MUNICIPAL) -> None:
    """Bind the service user ``name`` to ``entity`` in the server's bank (once), as the demo's administrator."""
    from capacitysim.bank import Ledger
    from capacitysim.service.store import Store

    store = Store(server.data / "service.sqlite")
    try:
        role = store.user_by_name(name)["role"]
    finally:
        store.close()
    with Ledger(server.data / "bank.sqlite", actor=DEMO_USERS["administrator"]) as lg:
        if not lg.acts_for(name, entity):
            lg.bind_user(name, entity, role=role, reason="test: the user acts for the entity")


def demo_bindings(server) -> None:
    """The demo's engineer and municipal user act for the demo's municipal user (bound once)."""
    for role in ("engineer", "municipal"):
        bind(server, server.names[role])


def another(server, key: str, name: str, role: str) -> str:
    """A further user of the session server (added once, under ``server.tokens[key]``), with the demo's recent
    flow record (``server.flows``) among their uploads; returns their name."""
    if key not in server.tokens:
        server.tokens[key] = add_user(server.data, name, role)
        server.names[key] = name
        _give_flows(server, name)
    return name


def _give_flows(server, name: str) -> None:
    """The demo's flow record (``server.flows``, ``upload:<sha256>``) as an upload of ``name`` too, the same bytes."""
    from capacitysim.service.demo import add_upload
    from capacitysim.service.store import Store

    sha = server.flows.removeprefix("upload:")
    path = next(p for p in sorted((server.data / "uploads" / sha).iterdir()) if p.is_file())
    store = Store(server.data / "service.sqlite")
    try:
        add_upload(store, server.data, path.name, path.read_text(), store.user_by_name(name))
    finally:
        store.close()
