"""The bank behind the service: withdrawals cite successful capacity and SPDES jobs; only an administrator signs off.

The demo's engineer and municipal user are bound to the demo's municipal user (program policy
service_user_binding). Each test runs scenarios of its own flows: a job's result is the evidence of one
application, and two jobs of the same scenario give the same document (program policy evidence_single_use).
"""

from __future__ import annotations

import pytest
from bank_support import bind, demo_bindings
from support import problem_ok, wait_final

from capacitysim.service.demo import BASIN, MUNICIPAL

pytestmark = [pytest.mark.server]

ASYNC = {"Prefer": "respond-async"}


@pytest.fixture(autouse=True)
def _bound(server):
    demo_bindings(server)


def _jobs(server, c, node="MH0003", gpd=5000, added=5000):
    cap = c.post("/processes/capacity-demonstration/execution", headers=ASYNC, json={"inputs": {
        "model": "synthetic-50", "storm": "binghamton-1yr-24h", "connections": [{"node": node, "gpd": gpd}]}}).json()["jobID"]
    spd = c.post("/processes/spdes-check/execution", headers=ASYNC, json={"inputs": {
        "plant": "sample-wwtp", "flows": server.flows, "added_gpd": [added]}}).json()["jobID"]
    return wait_final(c, cap), wait_final(c, spd)


def _withdrawal(app, cap, spd, gpd=4000, node="MH0003"):
    return {"basin": BASIN, "owner": MUNICIPAL, "peak_flow_gpd": gpd, "application": app, "node": node,
            "capacity_job": cap, "spdes_job": spd, "application_approval": f"H2-{app}"}


def test_withdrawal_cites_jobs_and_the_administrator_signs_off(server):
    with server.client("engineer") as eng, server.client("administrator") as adm, server.client("reviewer") as rev, \
            server.client("municipal") as mun, server.client("engineer2") as eng2:
        cap, spd = _jobs(server, eng, gpd=5010, added=5010)
        assert cap["verdict"] == "pass" and spd["status"] == "successful" and spd["verdict"] == "pass", (cap, spd)
        before = {(b["basin"], b["owner"]): b["balance_gpd"] for b in rev.get("/bank/balances").json()["balances"]}
        # the service checks the jobs' scenarios against the withdrawal before the ledger sees it
        body = problem_ok(eng.post("/bank/withdrawals", json=_withdrawal("APP-BIG", cap["jobID"], spd["jobID"], gpd=6000)), 409)
        assert "connected 5,010 gpd at node 'MH0003'" in body["detail"]
        body = problem_ok(eng.post("/bank/withdrawals", json=_withdrawal("APP-NODE", cap["jobID"], spd["jobID"], node="MH0010")), 409)
        assert "MH0010" in body["detail"]
        body = problem_ok(eng.post("/bank/withdrawals", json=_withdrawal("APP-KIND", spd["jobID"], cap["jobID"])), 400)
        assert body["field"] == "capacity_job" and "spdes-check job" in body["detail"]
        problem_ok(eng.post("/bank/withdrawals", json=_withdrawal("APP-NONE", "0" * 32, spd["jobID"])), 400)
        body = problem_ok(eng.post("/bank/withdrawals", json={"basin": BASIN}), 400)
        assert body["field"].startswith("body.")
        # another engineer (bound to the holder too) cannot cite these jobs; a reviewer requests nothing
        bind(server, "Second Engineer")
        body = problem_ok(eng2.post("/bank/withdrawals", json=_withdrawal("APP-X", cap["jobID"], spd["jobID"])), 403)
        assert "belongs to another user" in body["detail"]
        problem_ok(rev.post("/bank/withdrawals", json=_withdrawal("APP-Y", cap["jobID"], spd["jobID"])), 403)

        r = eng.post("/bank/withdrawals", json=_withdrawal("APP-1", cap["jobID"], spd["jobID"]))
        assert r.status_code == 201, r.text
        w = r.json()["withdrawal"]
        assert w["signoff_status"] == "pending" and w["capacity_job"] == cap["jobID"] and w["spdes_job"] == spd["jobID"]
        assert w["amount_gpd"] == 4000 and w["missing_for_sign_off"] == []
        assert "APP-1" in [p["ref"] for p in adm.get("/bank/pending").json()["pending"]]
        # the cited job cannot be dismissed: it is evidence
        problem_ok(eng.delete(f"/jobs/{cap['jobID']}"), 409)
        # only an administrator signs off
        for c in (eng, rev, mun):
            problem_ok(c.post("/bank/withdrawals/APP-1/sign-off", json={"decision": "approve"}), 403)
        problem_ok(adm.post("/bank/withdrawals/APP-1/sign-off", json={"decision": "maybe"}), 400)
        problem_ok(adm.post("/bank/withdrawals/NOPE/sign-off", json={"decision": "approve"}), 404)
        r = adm.post("/bank/withdrawals/APP-1/sign-off", json={"decision": "approve", "note": "checked <b>ok</b>"})
        assert r.status_code == 200, r.text
        w = r.json()["withdrawal"]
        assert w["status"] == "approved" and w["signed_off_by"] == server.names["administrator"]
        problem_ok(adm.post("/bank/withdrawals/APP-1/sign-off", json={"decision": "approve"}), 409)
        after = {(b["basin"], b["owner"]): b["balance_gpd"] for b in rev.get("/bank/balances").json()["balances"]}
        assert after[(BASIN, MUNICIPAL)] == before[(BASIN, MUNICIPAL)] - 4000
        assert rev.get("/bank/withdrawals/APP-1").json()["capacity_job"] == cap["jobID"]
        problem_ok(rev.get("/bank/withdrawals/NOPE"), 404)
        # the note the sign-off issued: any reader of the bank, HTML or PDF, the same bytes each time
        # (definitions, FLOW CREDIT NOTE; sections G and I on it)
        html = rev.get("/bank/withdrawals/APP-1/note")
        assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
        assert "Section G: no monetary value" in html.text and "Section I: no vested rights" in html.text
        assert "4,000" in html.text and server.names["administrator"] in html.text
        pdf = [eng.get("/bank/withdrawals/APP-1/note", params={"format": "pdf"}) for _ in range(2)]
        assert pdf[0].content.startswith(b"%PDF") and pdf[0].content == pdf[1].content
        problem_ok(rev.get("/bank/withdrawals/NOPE/note"), 404)
        problem_ok(rev.get("/bank/withdrawals/APP-1/note", params={"format": "docx"}), 400)
        # the jobs are APP-1's evidence: another application needs jobs of its own (program policy evidence_single_use)
        body = problem_ok(eng.post("/bank/withdrawals", json=_withdrawal("APP-2", cap["jobID"], spd["jobID"], gpd=3000)), 409)
        assert "already the evidence of application 'APP-1'" in body["detail"]
        cap, spd = _jobs(server, eng, gpd=5020, added=5020)
        # a rejection needs a reason and returns the credits
        r = eng.post("/bank/withdrawals", json=_withdrawal("APP-2", cap["jobID"], spd["jobID"], gpd=3000))
        assert r.status_code == 201, r.text
        problem_ok(adm.post("/bank/withdrawals/APP-2/sign-off", json={"decision": "reject"}), 400)
        r = adm.post("/bank/withdrawals/APP-2/sign-off", json={"decision": "reject", "note": "H(2) approval not shown"})
        assert r.status_code == 200 and r.json()["withdrawal"]["signoff_status"] == "rejected"
        assert "no flow credit note was issued" in problem_ok(rev.get("/bank/withdrawals/APP-2/note"), 409)["detail"]
        final = {(b["basin"], b["owner"]): b["balance_gpd"] for b in rev.get("/bank/balances").json()["balances"]}
        assert final == after
        rows = adm.get("/journal").json()["journal"]
        acts = {(x["user_name"], x["action"], x["target"], x["outcome"]) for x in rows}
        assert (server.names["administrator"], "sign-off", "APP-1", "ok") in acts
        assert (server.names["reviewer"], "sign off withdrawals", "APP-1", "forbidden") in acts
        assert (server.names["engineer"], "withdraw", "APP-BIG", "refused") in acts


def test_a_failed_job_is_not_evidence(server):
    with server.client("engineer") as eng:
        cap, _ = _jobs(server, eng, node="MH0020", gpd=5000, added=5030)
        assert cap["verdict"] == "fail"
        spd = eng.post("/processes/spdes-check/execution", headers=ASYNC, json={"inputs": {
            "plant": "sample-wwtp", "flows": server.flows, "added_gpd": [5000]}}).json()["jobID"]
        wait_final(eng, spd)
        # the job succeeded (it ran) but the demonstration failed: the ledger refuses it as evidence
        body = problem_ok(eng.post("/bank/withdrawals", json=_withdrawal("APP-F", cap["jobID"], spd, node="MH0020")), 409)
        assert f"job {cap['jobID']} has the verdict 'fail'" in body["detail"]
        failed = eng.post("/processes/spdes-check/execution", headers=ASYNC, json={"inputs": {
            "plant": "sample-wwtp", "flows": "sample-wwtp", "as_of": "2030-01-01", "added_gpd": [5000]}}).json()["jobID"]
        assert wait_final(eng, failed)["status"] == "failed"
        good, _ = _jobs(server, eng, gpd=5030, added=5030)
        body = problem_ok(eng.post("/bank/withdrawals", json=_withdrawal("APP-G", good["jobID"], failed)), 409)
        assert "is failed" in body["detail"]
