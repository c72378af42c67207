"""Maker-checker in the bank behind the service, through real HTTP (the session server of conftest.py):

* an administrator who recorded a deposit gets 409 on its sign-off; another administrator signs it off
  (program policy signoff_separation);
* a second withdrawal citing the same capacity job gets 409 naming the first application, until that
  withdrawal is rejected (program policy evidence_single_use);
* a municipal user not bound to the holder gets 403 naming the entity; bound, they get through (program
  policy service_user_binding); ``/bank/bindings`` is the administrator's.

Each test runs scenarios of its own flows (two jobs of one scenario give the same document).
"""

from __future__ import annotations

import pytest
from bank_support import (
    ASYNC,
    BASIN,
    MUNICIPAL,
    another,
    balances,
    demo_bindings,
    deposit_body,
    developer,
    journal,
    new_project_id,
    quantified,
)
from support import problem_ok, wait_final

pytestmark = [pytest.mark.server]

CHECKER = "Cal Checker"  # a second administrator of the service (and of its bank)
UNBOUND = "Mo Unbound"  # a municipal user bound to no entity at first


@pytest.fixture(autouse=True)
def _bound(server):
    demo_bindings(server)


def _jobs(server, c, gpd: int, node: str = "MH0003"):
    cap = c.post("/processes/capacity-demonstration/execution", headers=ASYNC, json={"inputs": {
        "model": "synthetic-50", "storm": "binghamton-1yr-24h", "connections": [{"node": node, "gpd": gpd}]}}).json()["jobID"]
    spd = c.post("/processes/spdes-check/execution", headers=ASYNC, json={"inputs": {
        "plant": "sample-wwtp", "flows": server.flows, "added_gpd": [gpd]}}).json()["jobID"]
    cap, spd = wait_final(c, cap), wait_final(c, spd)
    assert cap["verdict"] == "pass" and spd["status"] == "successful", (cap, spd)
    return cap["jobID"], spd["jobID"]


def _withdrawal(app, cap, spd, gpd=3000, owner=MUNICIPAL, node="MH0003"):
    return {"basin": BASIN, "owner": owner, "peak_flow_gpd": gpd, "application": app, "node": node,
            "capacity_job": cap, "spdes_job": spd, "application_approval": f"H2-{app}"}


def test_an_administrator_who_recorded_a_deposit_cannot_sign_it_off_another_does(server):
    another(server, "administrator2", CHECKER, "administrator")
    admin = server.names["administrator"]
    with server.client("administrator") as adm, server.client("administrator2") as chk, \
            server.client("reviewer") as rev:
        pid = new_project_id("MC")
        job, _ = quantified(server, adm, pid)
        before = balances(rev)
        r = adm.post("/bank/deposits", json=deposit_body(pid, job, 2100))
        assert r.status_code == 201, r.text
        txn = r.json()["deposit"]["txn"]
        assert r.json()["deposit"]["recorded_by"] == admin
        for decision in ({"decision": "approve"}, {"decision": "reject", "note": "my own mistake"}):
            body = problem_ok(adm.post(f"/bank/deposits/{txn}/sign-off", json=decision), 409)
            assert f"'{admin}' recorded deposit {pid} (txn {txn})" in body["detail"], body
            assert "signoff_separation" in body["detail"] and CHECKER in body["detail"]
        assert rev.get(f"/bank/deposits/{txn}").json()["signoff_status"] == "pending" and balances(rev) == before
        r = chk.post(f"/bank/deposits/{txn}/sign-off", json={"decision": "approve", "note": "certificate checked"})
        assert r.status_code == 200, r.text
        d = r.json()["deposit"]
        assert d["signoff_status"] == "signed-off" and d["decided_by"] == CHECKER and d["recorded_by"] == admin
        assert balances(rev)[(BASIN, MUNICIPAL)] == before[(BASIN, MUNICIPAL)] + 2100
        acts = journal(adm)
        assert (admin, "sign-off", txn, "refused") in acts and (CHECKER, "sign-off", txn, "ok") in acts


def test_an_administrator_who_recorded_a_withdrawal_cannot_sign_it_off(server):
    another(server, "administrator2", CHECKER, "administrator")
    with server.client("administrator") as adm, server.client("administrator2") as chk:
        cap, spd = _jobs(server, adm, 5410)
        assert adm.post("/bank/withdrawals", json=_withdrawal("MC-ADM-1", cap, spd)).status_code == 201
        body = problem_ok(adm.post("/bank/withdrawals/MC-ADM-1/sign-off", json={"decision": "approve"}), 409)
        assert f"'{server.names['administrator']}' recorded withdrawal MC-ADM-1" in body["detail"]
        r = chk.post("/bank/withdrawals/MC-ADM-1/sign-off", json={"decision": "approve", "note": "checked"})
        assert r.status_code == 200, r.text
        assert r.json()["withdrawal"]["signed_off_by"] == CHECKER


def test_a_second_withdrawal_citing_the_same_capacity_job_is_refused_naming_the_first(server):
    with server.client("engineer") as eng, server.client("administrator") as adm, server.client("reviewer") as rev:
        cap, spd = _jobs(server, eng, 5420)
        r = eng.post("/bank/withdrawals", json=_withdrawal("MC-EV-1", cap, spd))
        assert r.status_code == 201, r.text
        before = balances(rev)
        _, spd2 = _jobs(server, eng, 5430)
        body = problem_ok(eng.post("/bank/withdrawals", json=_withdrawal("MC-EV-2", cap, spd2)), 409)
        assert f"capacity_job: the result of job {cap} is already the evidence of application 'MC-EV-1' (pending)" \
               in body["detail"], body
        assert "application 'MC-EV-2' cannot cite it" in body["detail"] and "evidence_single_use" in body["detail"]
        # a job run again with the same scenario gives the same document: the same evidence
        again, _ = _jobs(server, eng, 5420)
        assert again != cap
        body = problem_ok(eng.post("/bank/withdrawals", json=_withdrawal("MC-EV-2", again, spd2)), 409)
        assert "already the evidence of application 'MC-EV-1'" in body["detail"]
        assert balances(rev) == before  # nothing reserved by the refusals
        assert (server.names["engineer"], "withdraw", "MC-EV-2", "refused") in journal(adm)
        with pytest.raises(KeyError):  # MC-EV-2 was never recorded
            {w["application"]: w for w in rev.get("/bank/withdrawals").json()["withdrawals"]}["MC-EV-2"]
        # rejected, the first withdrawal releases its evidence
        r = adm.post("/bank/withdrawals/MC-EV-1/sign-off", json={"decision": "reject", "note": "wrong applicant"})
        assert r.status_code == 200, r.text
        r = eng.post("/bank/withdrawals", json=_withdrawal("MC-EV-2", cap, spd2))
        assert r.status_code == 201, r.text
        assert r.json()["withdrawal"]["capacity_job"] == cap


def test_a_municipal_user_acts_only_for_the_entities_they_are_bound_to(server):
    another(server, "municipal2", UNBOUND, "municipal")
    dev = developer(server)
    with server.client("municipal2") as mun2, server.client("administrator") as adm, \
            server.client("reviewer") as rev, server.client("engineer") as eng:
        # reads are the public record (program policy bank_reads): bound or not
        assert mun2.get("/bank/balances").status_code == 200 and mun2.get("/bank/pending").status_code == 200
        transfer = {"basin": BASIN, "from_owner": MUNICIPAL, "to_owner": dev, "gpd": 250, "document": "bill of sale MC"}
        before = balances(rev)
        body = problem_ok(mun2.post("/bank/transfers", json=transfer), 403)
        assert body["entity"] == MUNICIPAL and body["user"] == UNBOUND and body["bound_to"] == []
        assert f"'{UNBOUND}' (municipal) is not bound to '{MUNICIPAL}'" in body["detail"]
        assert "service_user_binding" in body["detail"]
        pid = new_project_id("MC")
        job, _ = quantified(server, eng, pid)
        body = problem_ok(mun2.post("/bank/deposits", json=deposit_body(pid, job, 1000)), 403)
        assert body["entity"] == MUNICIPAL
        body = problem_ok(mun2.post("/bank/withdrawals", json=_withdrawal("MC-MUN-1", "a" * 32, "b" * 32)), 403)
        assert body["entity"] == MUNICIPAL
        assert balances(rev) == before
        assert (UNBOUND, "record transfers", f"{MUNICIPAL} -> {dev}", "forbidden") in journal(adm)
        # the bindings are the administrator's
        for c in (mun2, rev, eng):
            problem_ok(c.get("/bank/bindings"), 403)
            problem_ok(c.post("/bank/bindings", json={"user": UNBOUND, "entity": MUNICIPAL}), 403)
            problem_ok(c.delete("/bank/bindings", params={"user": UNBOUND, "entity": MUNICIPAL}), 403)
        b = problem_ok(adm.post("/bank/bindings", json={"user": "Nobody Known", "entity": MUNICIPAL}), 400)
        assert b["field"] == "body.user"
        problem_ok(adm.post("/bank/bindings", json={"user": UNBOUND, "entity": "Nowhere LLC"}), 400)
        problem_ok(adm.post("/bank/bindings", json={"user": UNBOUND, "entity": dev}), 409)  # a municipal user: municipal entities
        problem_ok(adm.post("/bank/bindings", json={"user": server.names["reviewer"], "entity": MUNICIPAL}), 409)
        problem_ok(adm.post("/bank/bindings", json={"user": UNBOUND, "entity": MUNICIPAL, "colour": "red"}), 400)
        r = adm.post("/bank/bindings", json={"user": UNBOUND.lower(), "entity": MUNICIPAL, "document": "Village letter MC"})
        assert r.status_code == 201, r.text
        assert (r.json()["binding"]["user"], r.json()["binding"]["role"]) == (UNBOUND, "municipal")
        problem_ok(adm.post("/bank/bindings", json={"user": UNBOUND, "entity": MUNICIPAL}), 409)  # bound already
        rows = adm.get("/bank/bindings", params={"user": UNBOUND}).json()["bindings"]
        assert [(x["user"], x["entity"], x["bound_by"]) for x in rows] == [(UNBOUND, MUNICIPAL, server.names["administrator"])]
        # bound: the transfer goes through
        r = mun2.post("/bank/transfers", json=transfer)
        assert r.status_code == 201, r.text
        assert r.json()["transfer"]["signoff_status"] == "pending"
        # unbound again: refused again; the closed binding is kept
        r = adm.delete("/bank/bindings", params={"user": UNBOUND, "entity": MUNICIPAL, "reason": "left the Village"})
        assert r.status_code == 200 and r.json()["binding"]["unbound_by"] == server.names["administrator"]
        problem_ok(adm.delete("/bank/bindings", params={"user": UNBOUND, "entity": MUNICIPAL}), 404)
        problem_ok(mun2.post("/bank/transfers", json=transfer), 403)
        closed = adm.get("/bank/bindings", params={"user": UNBOUND, "closed": "true"}).json()["bindings"]
        assert len(closed) == 1 and closed[0]["unbound_at"]
        acts = journal(adm)
        admin = server.names["administrator"]
        assert (admin, "bind-user", f"{UNBOUND} -> {MUNICIPAL}", "ok") in acts
        assert (admin, "unbind-user", f"{UNBOUND} -> {MUNICIPAL}", "ok") in acts


def test_an_engineer_withdraws_only_for_a_holder_that_named_them(server):
    another(server, "engineer3", "Ed Unnamed", "engineer")
    with server.client("engineer3") as eng3, server.client("administrator") as adm:
        cap, spd = _jobs(server, eng3, 5440)
        body = problem_ok(eng3.post("/bank/withdrawals", json=_withdrawal("MC-ENG-1", cap, spd)), 403)
        assert body["entity"] == MUNICIPAL and "'Ed Unnamed' (engineer) is not bound" in body["detail"]
        assert adm.post("/bank/bindings", json={"user": "Ed Unnamed", "entity": MUNICIPAL}).status_code == 201
        r = eng3.post("/bank/withdrawals", json=_withdrawal("MC-ENG-1", cap, spd))
        assert r.status_code == 201, r.text
        assert r.json()["withdrawal"]["recorded_by"] == "Ed Unnamed"
