"""No capacity promised twice, through real HTTP (issue 24): the session server of conftest.py (uvicorn, dask, SWMM,
SQLite), a basin of its own registered through ``POST /bank/models`` (register_support.py).

* Only an administrator registers a model of record (403 for the other roles).
* Two applications demonstrated at the same time, each passing alone (6,000 gpd at MH0010 and at MH0011 of
  synthetic-50 under its own rainfall), sent as CONCURRENT withdrawal requests: exactly one is reserved (201), the
  other is refused (409) naming the commitment its evidence leaves out; demonstrated again with the first committed,
  it fails (measured: with 6,000 + 6,000 gpd the CSO volume at CSO1 is 4,340 cf against the tolerance's 4,310 cf;
  with 6,000 + 2,600 gpd, the third application below, it passes).
* A withdrawal reserved on evidence that predates a later commitment is not signed off (409 naming it) until it is
  demonstrated again; an administrator does not sign off what they recorded (program policy signoff_separation).
* A capacity or SPDES job on the registered model (plant) records the commitments by itself, byte for byte what
  ``capacitysim capacity|spdes check --committed BANK --application APP --json`` records; a job on a model the bank
  has not registered says ``committed: null`` and why (its inputs-checked stage).
* Connect (a municipal user bound to the principal, or an administrator), expire, the commitments and the register.
* The register job (the register workflow as the ``capacity-register`` process) computes the remaining headroom
  with the commitments in place; ``GET /bank/register`` shows its figures, current, then stale once a commitment
  is added.

Every refusal is a JSON problem document, without a traceback or a server path.
"""

from __future__ import annotations

import json
import threading
from types import SimpleNamespace

import pytest
from bank_support import ASYNC, MUNICIPAL, another, demo_bindings, journal
from register_support import OUTLET, registered_basin
from support import cli_json, problem_ok, wait_final

CHECKER = "Cal Checker"  # a second administrator (shared with test_bank_makerchecker.py)
UNBOUND = "Una Unbound"  # a municipal user bound to no entity
#: Each application's flow [gpd]: passes alone at MH0010 or MH0011, fails with the other committed (the CSO volume at
#: CSO1 past its tolerance, committed flows being in the after run: program policy committed_baseline = cumulative).
GPD = 6000
#: A small third application [gpd] (above the 2,500 gpd without offset): passes with one of them committed.
SMALL_GPD = 2600


def problem(r, status: int, server) -> dict:
    body = problem_ok(r, status)
    assert "Traceback" not in r.text and str(server.data) not in r.text, r.text
    return body


@pytest.fixture(scope="module")
def race(server):
    demo_bindings(server)
    another(server, "administrator2", CHECKER, "administrator")
    another(server, "municipal3", UNBOUND, "municipal")
    reg = registered_basin(server, "Race")
    with server.client("engineer") as eng, server.client("administrator") as adm:
        model, plant = reg.upload(eng), reg.upload(eng, "plant")
        assert (reg.upload(adm), reg.upload(adm, "plant")) == (model, plant)  # the administrator's own records too
    return SimpleNamespace(reg=reg, model=model, plant=plant, winner=None)


def jobs(server, client, race, node: str, gpd: float, application: str) -> dict:
    """A capacity demonstration and a SPDES check of the application (each naming it), run to the end."""
    ids = {}
    cap_inputs = {"model": race.model, "connections": [{"node": node, "gpd": gpd}], "application": application}
    spd_inputs = {"plant": race.plant, "flows": server.flows, "added_gpd": [gpd], "application": application}
    for key, process, inputs in (("cap", "capacity-demonstration", cap_inputs), ("spd", "spdes-check", spd_inputs)):
        r = client.post(f"/processes/{process}/execution", headers=ASYNC, json={"inputs": inputs})
        assert r.status_code == 201, r.text
        ids[key] = r.json()["jobID"]
    out = {}
    for key, job_id in ids.items():
        job = wait_final(client, job_id)
        assert job["status"] == "successful", job
        out[key] = job
        out[f"{key}_doc"] = client.get(f"/jobs/{job_id}/results").json()
    return out


def withdrawal(race, application: str, node: str, gpd: float, j: dict) -> dict:
    return {"basin": race.reg.basin, "owner": MUNICIPAL, "peak_flow_gpd": gpd, "application": application, "node": node,
            "capacity_job": j["cap"]["jobID"], "spdes_job": j["spd"]["jobID"], "application_approval": f"H2-{application}"}


def committed_apps(doc: dict) -> list[str]:
    return [f["application"] for f in doc["committed"]["flows"]]


@pytest.mark.server
def test_only_an_administrator_registers_a_model_of_record(server, race):
    reg = race.reg
    model = reg.answer["model"]
    assert model["basin"] == reg.basin and model["version"] == 1 and model["model_sha256"] == reg.sha256
    assert model["outlet"] == OUTLET and model["plant"] == reg.plant and reg.answer["note"] is None
    assert model["model"] == reg.model_name  # the file's name: never where the server keeps it
    for role in ("engineer", "municipal", "reviewer"):
        with server.client(role) as c:
            body = problem(c.post("/bank/models", json={"basin": reg.basin, "model": race.model, "outlet": OUTLET}), 403,
                           server)
            assert "may not register models of record" in body["detail"] and "administrator" in body["detail"]
    with server.client("administrator") as adm, server.client("reviewer") as rev:
        assert (server.names["engineer"], "register models of record", reg.basin, "forbidden") in journal(adm)
        rows = rev.get("/bank/models", params={"basin": reg.basin}).json()["models"]
        assert [(m["version"], m["current"], m["sha256"], m["path"]) for m in rows] == [(1, True, reg.sha256, reg.model_name)]
        # hostile or wrong input: a JSON problem naming the field, the value and what is allowed
        mine = reg.upload(adm)
        with server.client("engineer") as eng:
            theirs = eng.post("/uploads", params={"filename": "theirs.inp"}, content=f";; {reg.tag}\n".encode()).json()["id"]
        body = problem(adm.post("/bank/models", json={"basin": reg.basin, "model": theirs}), 400, server)
        assert body["field"] == "body.model"  # another user's upload is no upload of the administrator's
        junk = adm.post("/uploads", params={"filename": "junk.inp"}, content=b"[JUNCTIONS]\nJ1 x y\n").json()["id"]
        problem(adm.post("/bank/models", json={"basin": reg.basin, "model": junk, "outlet": "J1"}), 400, server)
        body = problem(adm.post("/bank/models", json={"basin": reg.basin, "model": mine, "colour": "red"}), 400, server)
        assert body["field"] == "body.colour"
        body = problem(adm.post("/bank/models", json={"basin": reg.basin, "model": mine, "includes": ["x" * 201]}), 400,
                       server)
        assert body["field"] == "body.includes[0]"
        body = problem(adm.post("/bank/models", json={"basin": reg.basin, "model": mine, "outlet": "NO-SUCH-NODE"}), 400,
                       server)
        assert "NO-SUCH-NODE" in body["detail"] and "not a node" in body["detail"]
        body = problem(adm.post("/bank/models", json={"basin": f"no basin {reg.tag}", "model": mine}), 400, server)
        assert "unknown basin" in body["detail"]
        body = problem(adm.post("/bank/models", json={"basin": reg.basin, "model": mine, "includes": ["NO-SUCH-APP"]}),
                       400, server)
        assert "unknown application 'NO-SUCH-APP'" in body["detail"]
        assert len(rev.get("/bank/models", params={"basin": reg.basin}).json()["models"]) == 1  # nothing registered


@pytest.mark.server
def test_concurrent_withdrawals_of_two_applications_that_fail_together_one_is_refused(server, race):
    apps = {f"RACE-A-{race.reg.tag}": "MH0010", f"RACE-B-{race.reg.tag}": "MH0011"}
    with server.client("engineer") as eng:
        done = {app: jobs(server, eng, race, node, GPD, app) for app, node in apps.items()}
    for app, j in done.items():  # each passes alone; the evidence records the (empty) commitments of the basin
        assert j["cap"]["verdict"] == "pass" and j["spd_doc"]["verdict"] == "pass", (app, j["cap"])
        assert j["cap_doc"]["committed"]["scope"] == {"model_sha256": race.reg.sha256}
        assert j["cap_doc"]["committed"]["flows"] == [] and j["cap_doc"]["committed"]["excluded"] == app
        assert j["spd_doc"]["committed"]["basins"] == [race.reg.basin] and j["spd_doc"]["committed_gpd"] == 0.0
    answers: dict[str, object] = {}
    start = threading.Barrier(len(apps))

    def request(app: str) -> None:
        with server.client("engineer") as c:
            start.wait()
            answers[app] = c.post("/bank/withdrawals", json=withdrawal(race, app, apps[app], GPD, done[app]))

    threads = [threading.Thread(target=request, args=(app,)) for app in apps]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    statuses = sorted(r.status_code for r in answers.values())
    assert statuses == [201, 409], {a: (r.status_code, r.text) for a, r in answers.items()}
    winner = next(a for a, r in answers.items() if r.status_code == 201)
    loser = next(a for a in apps if a != winner)
    body = problem(answers[loser], 409, server)
    assert (f"leaves out 1 commitment(s) made so far: {winner} ({GPD:,} gpd at {apps[winner]}, reserved)"
            in body["detail"]), body
    assert "capacity is not promised twice" in body["detail"]
    assert f"job {done[loser]['cap']['jobID']}" in body["detail"]  # the job, not the server's path of its document
    with server.client("reviewer") as rev:
        flows = rev.get("/bank/commitments", params={"model": race.reg.sha256}).json()["flows"]
        assert [(f["application"], f["node"], f["status"]) for f in flows] == [(winner, apps[winner], "reserved")]
    # demonstrated again with the winner committed, the loser fails: the two are never both approved
    with server.client("engineer") as eng:
        again = jobs(server, eng, race, apps[loser], GPD, loser)
        assert committed_apps(again["cap_doc"]) == [winner] and again["cap"]["verdict"] == "fail", again["cap"]
        body = problem(eng.post("/bank/withdrawals", json=withdrawal(race, loser, apps[loser], GPD, again)), 409, server)
        assert "verdict 'fail'" in body["detail"]
    race.winner, race.winner_node = winner, apps[winner]


@pytest.mark.server
def test_a_sign_off_is_refused_until_the_application_is_demonstrated_again(server, race):
    assert race.winner, "needs the race of the test before"
    small, node = f"RACE-C-{race.reg.tag}", "MH0011"
    with server.client("administrator") as adm, server.client("administrator2") as chk, \
            server.client("engineer") as eng:
        j = jobs(server, adm, race, node, SMALL_GPD, small)  # with the winner committed: passes
        assert committed_apps(j["cap_doc"]) == [race.winner] and j["cap"]["verdict"] == "pass", j["cap"]
        assert j["spd_doc"]["committed_gpd"] == GPD and j["spd_doc"]["verdict"] == "pass"
        r = adm.post("/bank/withdrawals", json=withdrawal(race, small, node, SMALL_GPD, j))
        assert r.status_code == 201, r.text
        # the winner's evidence predates the small application's reservation: not signed off
        body = problem(adm.post(f"/bank/withdrawals/{race.winner}/sign-off", json={"decision": "approve"}), 409, server)
        assert (f"leaves out 1 commitment(s) made since it was run: {small} ({SMALL_GPD:,} gpd at {node}, reserved)"
                in body["detail"]), body
        # nobody signs off what they recorded (program policy signoff_separation): the administrator recorded it
        body = problem(adm.post(f"/bank/withdrawals/{small}/sign-off", json={"decision": "approve"}), 409, server)
        assert f"'{server.names['administrator']}' recorded withdrawal {small}" in body["detail"]
        r = chk.post(f"/bank/withdrawals/{small}/sign-off", json={"decision": "approve", "note": "includes the winner"})
        assert r.status_code == 200 and r.json()["withdrawal"]["status"] == "approved", r.text
        # the winner is demonstrated again with the small one committed, as a new application
        r = adm.post(f"/bank/withdrawals/{race.winner}/sign-off",
                     json={"decision": "reject", "note": "demonstrate again with the commitments made since"})
        assert r.status_code == 200, r.text
        again = f"{race.winner}-2"
        j = jobs(server, eng, race, race.winner_node, GPD, again)
        assert committed_apps(j["cap_doc"]) == [small] and j["cap"]["verdict"] == "pass", j["cap"]
        r = eng.post("/bank/withdrawals", json=withdrawal(race, again, race.winner_node, GPD, j))
        assert r.status_code == 201, r.text
        r = adm.post(f"/bank/withdrawals/{again}/sign-off", json={"decision": "approve", "note": "re-demonstrated"})
        assert r.status_code == 200 and r.json()["withdrawal"]["status"] == "approved", r.text
        assert r.json()["withdrawal"]["capacity_included"] == [small]
    race.approved = {again: race.winner_node, small: node}


@pytest.mark.server
def test_a_job_on_the_registered_model_records_what_the_cli_records(server, race, tmp_path):
    assert getattr(race, "approved", None), "needs the tests before"
    app = f"RACE-D-{race.reg.tag}"
    with server.client("engineer") as eng:
        j = jobs(server, eng, race, "MH0020", 1000, app)
        cap_bytes = eng.get(f"/jobs/{j['cap']['jobID']}/results").content
        spd_bytes = eng.get(f"/jobs/{j['spd']['jobID']}/results").content
        stage = eng.get(f"/jobs/{j['cap']['jobID']}").json()["stages"][1]
        assert f"committed: 2 flow(s) of the bank, {GPD + SMALL_GPD:,} gpd average" in stage["message"], stage
        assert f"{app} left out (inputs.application)" in stage["message"]
    cap, spd = json.loads(cap_bytes), json.loads(spd_bytes)
    assert sorted(committed_apps(cap)) == sorted(race.approved) and cap["committed"]["bank"] == "bank.sqlite"
    assert cap["committed"]["excluded"] == app and cap["committed"]["total_gpd"] == GPD + SMALL_GPD
    assert spd["committed_gpd"] == GPD + SMALL_GPD and sorted(committed_apps(spd)) == sorted(race.approved)
    # the CLI on the same files (the model of record, the plant file, the flow record) and the same bank
    model = server.data / "models" / race.reg.sha256 / race.reg.model_name
    plant = tmp_path / race.reg.plant_name
    plant.write_bytes(race.reg.plant_bytes)
    flows = next((server.data / "uploads" / server.flows.removeprefix("upload:")).iterdir())
    bank = str(server.data / "bank.sqlite")
    cli_cap = cli_json("capacity", "--model", str(model), "--connect", "MH0020=1000", "--committed", bank,
                       "--application", app)
    cli_spd = cli_json("spdes", "check", "--plant", str(plant), "--flows", str(flows), "--added-gpd", "1000",
                       "--committed", bank, "--application", app)
    assert json.loads(cap_bytes) == json.loads(cli_cap) and json.loads(spd_bytes) == json.loads(cli_spd)
    assert cap_bytes == cli_cap and spd_bytes == cli_spd
    # a model the bank has not registered: no commitments, and the job says why
    with server.client("engineer") as eng:
        r = eng.post("/processes/capacity-demonstration/execution", json={"inputs": {
            "model": "synthetic-50", "connections": [{"node": "MH0020", "gpd": 1000}], "application": app}})
        assert r.status_code == 200 and r.json()["committed"] is None, r.text
        message = eng.get(r.headers["Location"].removeprefix(server.url)).json()["stages"][1]["message"]
        assert "committed: null: the model synthetic-50.inp" in message and "is not the registered model" in message
        assert f"inputs.application {app!r} has nothing to leave out" in message


@pytest.mark.server
def test_connect_expire_commitments_and_the_register(server, race):
    assert getattr(race, "approved", None), "needs the tests before"
    (again, node), (small, small_node) = race.approved.items()
    sha = race.reg.sha256
    with server.client("engineer") as eng, server.client("municipal3") as unbound, \
            server.client("municipal") as mun, server.client("administrator") as adm, server.client("reviewer") as rev:
        body = problem(eng.post(f"/bank/applications/{again}/connect", json={}), 403, server)
        assert "may not record connections" in body["detail"]
        body = problem(unbound.post(f"/bank/applications/{again}/connect", json={}), 403, server)
        assert body["entity"] == MUNICIPAL and body["user"] == UNBOUND and body["bound_to"] == []
        problem(mun.post("/bank/applications/NO-SUCH-APP/connect", json={}), 404, server)
        body = problem(mun.post(f"/bank/applications/{again}/connect", json={"on": "2999-01-01"}), 400, server)
        assert "on" in body["detail"]
        r = mun.post(f"/bank/applications/{again}/connect", json={"document": "inspection 17"})
        assert r.status_code == 200 and r.json()["application"]["connected_on"], r.text
        body = problem(mun.post(f"/bank/applications/{again}/connect", json={}), 409, server)
        assert "was connected on" in body["detail"]
        assert (server.names["municipal"], "connect", again, "ok") in journal(adm)
        # connected, it stays committed until a model version containing it is registered
        flows = {f["application"]: f["status"] for f in rev.get("/bank/commitments", params={"model": sha}).json()["flows"]}
        assert flows == {again: "connected", small: "approved"}
        reg = rev.get("/bank/register").json()
        mine = next(m for m in reg["models"] if m["model_sha256"] == sha)
        assert mine["path"] == race.reg.model_name and mine["total_gpd"] == GPD + SMALL_GPD
        plant = next(p for p in reg["plants"] if p["plant"] == race.reg.plant)
        assert plant["committed_gpd"] == GPD + SMALL_GPD and sorted(plant["flows"]) == sorted(race.approved)
        assert str(server.data) not in json.dumps(reg)
        # a newer version containing the connected flow releases it
        r = adm.post("/bank/models", json={"basin": race.reg.basin, "model": race.reg.upload(adm), "includes": [again]})
        assert r.status_code == 201 and r.json()["model"]["version"] == 2, r.text
        got = rev.get("/bank/commitments", params={"model": sha}).json()
        assert [f["application"] for f in got["flows"]] == [small] and got["total_gpd"] == SMALL_GPD
        got = rev.get("/bank/commitments", params={"plant": race.reg.plant.upper()}).json()
        assert got["total_gpd"] == SMALL_GPD and got["bank"] == "bank.sqlite"
        # expiry: the administrator's; nothing here is five years old
        problem(mun.post("/bank/expire", json={}), 403, server)
        r = adm.post("/bank/expire", json={"reason": "yearly review"})
        assert r.status_code == 200 and r.json()["expired"] == [], r.text
        assert r.json()["policies"][0]["name"] == "approval_expiry_years"
        body = problem(adm.post("/bank/expire", json={"as_of": "2999-01-01"}), 400, server)
        assert "as_of" in body["detail"]
        body = problem(adm.post("/bank/expire", json={"as_of": "01/02/2026"}), 400, server)
        assert body["field"] == "body.as_of"
        # hostile queries of the commitments
        for params, field in (({"model": "zz"}, "model"), ({}, "model"), ({"model": sha, "plant": "x"}, "model"),
                              ({"plant": f"no plant {race.reg.tag}"}, "plant"), ({"model": "0" * 64}, "model"),
                              ({"model": sha, "as_of": "tomorrow"}, "as_of")):
            body = problem(rev.get("/bank/commitments", params=params), 400, server)
            assert body["field"] == field, (params, body)


@pytest.mark.server
def test_the_register_job_computes_the_remaining_headroom_and_says_when_it_is_stale(server, race):
    from capacitysim.bank import Ledger
    from capacitysim.service.demo import DEMO_USERS

    assert getattr(race, "approved", None), "needs the tests before"
    small = next(a for a in race.approved if a.startswith("RACE-C-"))
    sha = race.reg.sha256
    with server.client("engineer") as eng, server.client("reviewer") as rev:
        r = eng.post("/processes/capacity-register/execution", json={"inputs": {
            "plants": [{"key": race.reg.plant, "plant": race.plant, "flows": server.flows}]}})
        assert r.status_code == 200, r.text
        doc = r.json()
        job = r.headers["Location"].rsplit("/", 1)[1]
        assert doc["kind"] == "capacity-register" and doc["bank"] == "bank.sqlite"
        assert eng.get(f"/jobs/{job}/report").status_code == 200
        reg = rev.get("/bank/register").json()
        assert reg["computed"]["job"] == job
        computed = reg["computed"]["document"]
        model = next(m for m in computed["models"] if m["model_sha256"] == sha)
        assert model["freshness"]["status"] == "current" and "geometry" not in model
        cells = {c["node"]: c for c in model["headroom"]["nodes"]}
        assert set(cells) == {"MH0011", OUTLET}, cells  # the commitment's node and the basin's outlet
        assert cells["MH0011"]["why"] == [f"commitment {small}"] and cells["MH0011"]["status"] in ("ok", "zero")
        plant = next(p for p in computed["plants"] if p["plant"] == race.reg.plant)
        assert plant["freshness"]["status"] == "current" and plant["figures"]["committed_gpd"] == SMALL_GPD
        assert plant["figures"]["remaining_gpd"] == pytest.approx(plant["figures"]["permitted_flow_gpd"]
                                                                 - plant["figures"]["twelve_month_gpd"] - SMALL_GPD)
        # a commitment made since: the figures are stale, naming it, until the register is computed again
        added = f"RACE-E-{race.reg.tag}"
        with Ledger(server.data / "bank.sqlite", actor=DEMO_USERS["administrator"]) as lg:
            lg.record_application(added, MUNICIPAL, 1500, basin=race.reg.basin, node="MH0010",
                                  application_approval=f"H2-{added}", reason="test: a commitment made since")
        computed = rev.get("/bank/register").json()["computed"]["document"]
        model = next(m for m in computed["models"] if m["model_sha256"] == sha)
        assert model["freshness"]["status"] == "stale" and f"added {added}" in model["freshness"]["text"], model
        assert next(p for p in computed["plants"] if p["plant"] == race.reg.plant)["freshness"]["status"] == "stale"
        assert str(server.data) not in json.dumps(computed)


@pytest.mark.swmm
def test_the_demo_registers_its_basins_model_of_record(tmp_path):
    """``make serve``'s data folder: the basin's model of record is the bundled synthetic-50 as the service keeps
    registered models (DATA/models/<sha256>/), with the demo's outlet and the bundled sample plant's name."""
    import hashlib

    from capacitysim.bank import Ledger
    from capacitysim.io.bundled import model_path
    from capacitysim.service import demo

    demo.seed(tmp_path)
    sha = hashlib.sha256(model_path(demo.MODEL).read_bytes()).hexdigest()
    with Ledger(tmp_path / "bank.sqlite") as lg:
        models = lg.models()
        assert [(m["basin"], m["version"], m["current"], m["sha256"], m["outlet"], m["plant"]) for m in models] == [
            (demo.BASIN, 1, True, sha, demo.OUTLET, demo.plant_name())]
        assert models[0]["path"] == str(tmp_path / "models" / sha / "synthetic-50.inp")
        assert lg.commitments(model_sha256=sha)["flows"] == [] and lg.register()["plants"][0]["plant"] == demo.plant_name()
