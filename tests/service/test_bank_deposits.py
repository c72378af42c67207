"""Deposits and transfers through the service (credit bank sections B, C, G; the BANK ADMINISTRATOR's sign-off):
a deposit cites the credits-quantification job of its project; both wait for the administrator's sign-off.

The demo's engineer and municipal user are bound to the demo's municipal user (program policy
service_user_binding); the administrator signs off what others recorded (program policy signoff_separation)."""

from __future__ import annotations

import math

import pytest
from bank_support import (
    ASYNC,
    BASIN,
    MUNICIPAL,
    balances,
    bind,
    demo_bindings,
    deposit_body,
    details,
    developer,
    journal,
    new_project_id,
    quantified,
)
from support import problem_ok, wait_final

pytestmark = [pytest.mark.server]


@pytest.fixture(autouse=True)
def _bound(server):
    demo_bindings(server)


def test_deposit_takes_effect_only_when_the_administrator_signs_it_off(server):
    with server.client("engineer") as eng, server.client("administrator") as adm, server.client("reviewer") as rev:
        pid = new_project_id()
        job, _ = quantified(server, eng, pid)
        before = balances(rev)
        r = eng.post("/bank/deposits", json=deposit_body(pid, job, 8000.7, description="Oak St <b>phase 2</b>"))
        assert r.status_code == 201, r.text
        d = r.json()["deposit"]
        txn = d["txn"]
        assert d["signoff_status"] == "pending" and d["quantification_job"] == job and d["project"] == pid
        assert d["gpd"] == 8000 and d["stated_gpd"] == 8000.7  # booked rounded down (never credit more than certified)
        assert d["recorded_by"] == server.names["engineer"] and d["owner"] == MUNICIPAL and d["basin"] == BASIN
        # pending: the balance does not count it (program policy pending_reserve)
        assert balances(rev) == before
        assert txn in [p["txn"] for p in rev.get("/bank/pending").json()["pending"] if p["kind"] == "deposit"]
        assert txn in [x["txn"] for x in rev.get("/bank/deposits", params={"status": "pending"}).json()["deposits"]]
        assert rev.get(f"/bank/deposits/{txn}").json()["project"] == pid
        # a project is deposited once while its deposit waits
        body = problem_ok(eng.post("/bank/deposits", json=deposit_body(pid, job, 100)), 409)
        assert "already awaiting" in body["detail"]

        r = adm.post(f"/bank/deposits/{txn}/sign-off", json={"decision": "approve", "note": "certificate checked"})
        assert r.status_code == 200, r.text
        out = r.json()
        assert out["deposit"]["signoff_status"] == "signed-off"
        assert out["deposit"]["decided_by"] == server.names["administrator"]
        assert out["ledger"]["deposited_gpd"] == 8000
        after = balances(rev)
        assert after[(BASIN, MUNICIPAL)] == before[(BASIN, MUNICIPAL)] + 8000
        assert {k: v for k, v in after.items() if k != (BASIN, MUNICIPAL)} == \
               {k: v for k, v in before.items() if k != (BASIN, MUNICIPAL)}
        # signed off once
        problem_ok(adm.post(f"/bank/deposits/{txn}/sign-off", json={"decision": "approve"}), 409)
        problem_ok(adm.post(f"/bank/deposits/{txn}/sign-off", json={"decision": "reject", "note": "late"}), 409)
        assert balances(rev) == after
        assert txn in [x["txn"] for x in rev.get("/bank/deposits", params={"status": "signed-off"}).json()["deposits"]]
        # the certified project cannot be deposited again
        problem_ok(eng.post("/bank/deposits", json=deposit_body(pid, job, 100)), 409)
        acts = journal(adm)
        assert (server.names["engineer"], "deposit", txn, "ok") in acts
        assert (server.names["administrator"], "sign-off", txn, "ok") in acts
        assert {"kind": "deposit", "decision": "approve", "note": "certificate checked", "quantification_job": job} in \
               details(adm, "sign-off", txn)


def test_a_rejected_deposit_leaves_the_balance(server):
    with server.client("municipal") as mun, server.client("administrator") as adm, server.client("engineer") as eng:
        pid = new_project_id()
        job, _ = quantified(server, eng, pid)  # the municipal user cites the engineer's job (municipal reads all)
        before = balances(mun)
        r = mun.post("/bank/deposits", json=deposit_body(pid, job, 5000))
        assert r.status_code == 201, r.text
        txn = r.json()["deposit"]["txn"]
        assert r.json()["deposit"]["recorded_by"] == server.names["municipal"]
        # a rejection needs its reason
        body = problem_ok(adm.post(f"/bank/deposits/{txn}/sign-off", json={"decision": "reject"}), 400)
        assert body["field"] == "body.note"
        r = adm.post(f"/bank/deposits/{txn}/sign-off", json={"decision": "reject", "note": "no certificate of completion"})
        assert r.status_code == 200, r.text
        d = r.json()["deposit"]
        assert d["signoff_status"] == "rejected" and d["note"] == "no certificate of completion"
        assert balances(mun) == before
        assert txn in [x["txn"] for x in mun.get("/bank/deposits", params={"status": "rejected"}).json()["deposits"]]
        problem_ok(adm.post(f"/bank/deposits/{txn}/sign-off", json={"decision": "approve"}), 409)
        assert balances(mun) == before
        # a rejected project may be deposited again (a new deposit with its own id), and then signed off
        r = mun.post("/bank/deposits", json=deposit_body(pid, job, 5000))
        assert r.status_code == 201, r.text
        txn2 = r.json()["deposit"]["txn"]
        assert txn2 != txn
        assert adm.post(f"/bank/deposits/{txn2}/sign-off", json={"decision": "approve"}).status_code == 200
        assert balances(mun)[(BASIN, MUNICIPAL)] == before[(BASIN, MUNICIPAL)] + 5000
        assert (server.names["administrator"], "sign-off", txn, "ok") in journal(adm)


def test_the_quantification_job_must_cover_the_deposit(server):
    with server.client("engineer") as eng, server.client("administrator") as adm, server.client("reviewer") as rev:
        pid = new_project_id()
        job, total = quantified(server, eng, pid)
        before = balances(rev)
        # more than the job quantified: refused before the ledger records anything
        over = math.floor(total) + 1
        body = problem_ok(eng.post("/bank/deposits", json=deposit_body(pid, job, over)), 409)
        assert f"job {job} quantified {total:,.2f} gpd" in body["detail"] and "section B" in body["detail"]
        # the quantification of another project, or for another municipal user
        body = problem_ok(eng.post("/bank/deposits", json=deposit_body(new_project_id(), job, 1000)), 409)
        assert f"quantified project {pid!r}" in body["detail"]
        other = new_project_id()
        job_b, _ = quantified(server, eng, other, municipal_user="City of Binghamton")
        body = problem_ok(eng.post("/bank/deposits", json=deposit_body(other, job_b, 1000)), 409)
        assert "'City of Binghamton'" in body["detail"]
        # into another I/I remediation basin than the project's (section A)
        body = problem_ok(eng.post("/bank/deposits", json=deposit_body(pid, job, 1000) | {"basin": "Binghamton CSO 9"}), 409)
        assert "section A" in body["detail"] and "'Binghamton CSO 9'" in body["detail"]
        # a job of another process; no such job
        cap = eng.post("/processes/capacity-demonstration/execution", headers=ASYNC, json={"inputs": {
            "model": "synthetic-50", "storm": "binghamton-1yr-24h", "connections": [{"node": "MH0003", "gpd": 5000}]}})
        body = problem_ok(eng.post("/bank/deposits", json=deposit_body(pid, cap.json()["jobID"], 1000)), 400)
        assert body["field"] == "quantification_job" and "credits-quantification" in body["detail"]
        body = problem_ok(eng.post("/bank/deposits", json=deposit_body(pid, "0" * 32, 1000)), 400)
        assert body["field"] == "quantification_job"
        # a failed quantification is no evidence
        bad = eng.post("/uploads", params={"filename": "bad.toml"}, content=b'[project]\nid = "X"\n')
        r = eng.post("/processes/credits-quantification/execution", headers=ASYNC,
                     json={"inputs": {"project": bad.json()["id"]}})
        failed = wait_final(eng, r.json()["jobID"])
        assert failed["status"] == "failed"
        body = problem_ok(eng.post("/bank/deposits", json=deposit_body(pid, failed["jobID"], 1000)), 409)
        assert "is failed" in body["detail"]
        # nothing was recorded by any of these
        assert balances(rev) == before
        assert pid not in [d["project"] for d in rev.get("/bank/deposits").json()["deposits"]]
        assert (server.names["engineer"], "deposit", pid, "refused") in journal(adm)
        # exactly the quantified figure is accepted
        r = eng.post("/bank/deposits", json=deposit_body(pid, job, total))
        assert r.status_code == 201, r.text
        assert r.json()["deposit"]["gpd"] == math.floor(total)


def test_deposit_roles_and_errors(server):
    with server.client("engineer") as eng, server.client("engineer2") as eng2, server.client("reviewer") as rev, \
            server.client("municipal") as mun, server.client("administrator") as adm:
        pid = new_project_id()
        job, _ = quantified(server, eng, pid)
        body = deposit_body(pid, job, 1000)
        problem_ok(server.client(None).post("/bank/deposits", json=body), 401)
        problem_ok(server.client(None).get("/bank/deposits"), 401)
        problem_ok(server.client(None).post(f"/bank/deposits/{'a' * 32}/sign-off", json={"decision": "approve"}), 401)
        # a reviewer records nothing; another engineer (bound to the municipal user too) cannot cite this engineer's job
        problem_ok(rev.post("/bank/deposits", json=body), 403)
        bind(server, "Second Engineer")
        body403 = problem_ok(eng2.post("/bank/deposits", json=body), 403)
        assert "another user" in body403["detail"]
        # bad bodies: named field, value and what is allowed
        for bad, field in ((body | {"gpd": -5}, "body.gpd"), (body | {"gpd": "many"}, "body.gpd"),
                           (body | {"extra": 1}, "body.extra"), ({k: v for k, v in body.items() if k != "project"},
                                                                 "body.project"),
                           (body | {"certified_on": "2024-13-01"}, "body.certified_on"), ([1, 2], "body")):
            b = problem_ok(eng.post("/bank/deposits", json=bad), 400)
            assert b["field"] == field, b
        # a basin other than the project's is refused before the ledger is asked (section A)
        b = problem_ok(eng.post("/bank/deposits", json=body | {"basin": "No Such Basin"}), 409)
        assert "section A" in b["detail"]
        problem_ok(rev.get("/bank/deposits", params={"status": "maybe"}), 400)
        r = eng.post("/bank/deposits", json=body)
        assert r.status_code == 201, r.text
        txn = r.json()["deposit"]["txn"]
        # only an administrator signs off; the others read
        for c in (eng, rev, mun):
            problem_ok(c.post(f"/bank/deposits/{txn}/sign-off", json={"decision": "approve"}), 403)
            assert c.get(f"/bank/deposits/{txn}").status_code == 200
        problem_ok(adm.post(f"/bank/deposits/{txn}/sign-off", json={"decision": "maybe"}), 400)
        problem_ok(adm.post(f"/bank/deposits/{txn}/sign-off", json={"decision": "approve", "colour": "red"}), 400)
        problem_ok(adm.post(f"/bank/deposits/{'f' * 32}/sign-off", json={"decision": "approve"}), 404)
        problem_ok(adm.post("/bank/deposits/nope/sign-off", json={"decision": "approve"}), 404)
        problem_ok(rev.get(f"/bank/deposits/{'f' * 32}"), 404)
        # a deposit's txn is not a transfer's id, nor the reverse
        problem_ok(adm.post(f"/bank/transfers/{txn}/sign-off", json={"decision": "approve"}), 404)
        acts = journal(adm)
        assert (server.names["reviewer"], "record deposits", pid, "forbidden") in acts
        assert (server.names["reviewer"], "sign off deposits", txn, "forbidden") in acts
        assert (server.names["municipal"], "sign off deposits", txn, "forbidden") in acts
        assert ("Second Engineer", "cite job", job, "forbidden") in acts
        assert adm.post(f"/bank/deposits/{txn}/sign-off", json={"decision": "approve"}).status_code == 200


def test_transfer_moves_credits_between_holders_after_sign_off(server):
    dev = developer(server)
    with server.client("municipal") as mun, server.client("administrator") as adm, server.client("reviewer") as rev, \
            server.client("engineer") as eng:
        before = balances(rev)
        body = {"basin": BASIN, "from_owner": MUNICIPAL, "to_owner": dev, "gpd": 1500,
                "document": "bill of sale <2025-03>, notarized"}
        r = mun.post("/bank/transfers", json=body)
        assert r.status_code == 201, r.text
        t = r.json()["transfer"]
        ref = t["transfer"]
        assert t["signoff_status"] == "pending" and t["gpd"] == 1500 and t["from"] == MUNICIPAL and t["to"] == dev
        assert t["txn"] and ref.startswith("transfer-")
        # recorded: the sender's credits are reserved at once, the receiver counts them only once signed off
        mid = balances(rev)
        assert mid[(BASIN, MUNICIPAL)] == before[(BASIN, MUNICIPAL)] - 1500
        assert mid.get((BASIN, dev), 0) == before.get((BASIN, dev), 0)
        assert ref in [x["transfer"] for x in rev.get("/bank/transfers", params={"status": "pending"}).json()["transfers"]]
        for c in (mun, eng, rev):
            problem_ok(c.post(f"/bank/transfers/{ref}/sign-off", json={"decision": "approve"}), 403)
        r = adm.post(f"/bank/transfers/{ref}/sign-off", json={"decision": "approve", "note": "bill of sale checked"})
        assert r.status_code == 200, r.text
        assert r.json()["transfer"]["signoff_status"] == "signed-off"
        assert r.json()["transfer"]["signed_off_by"] == server.names["administrator"]
        after = balances(rev)
        assert after[(BASIN, dev)] == before.get((BASIN, dev), 0) + 1500
        assert after[(BASIN, MUNICIPAL)] == before[(BASIN, MUNICIPAL)] - 1500
        problem_ok(adm.post(f"/bank/transfers/{ref}/sign-off", json={"decision": "approve"}), 409)
        assert rev.get(f"/bank/transfers/{ref}").json()["signoff_status"] == "signed-off"
        acts = journal(adm)
        assert (server.names["municipal"], "transfer", ref, "ok") in acts
        assert (server.names["administrator"], "sign-off", ref, "ok") in acts
        assert (server.names["municipal"], "sign off transfers", ref, "forbidden") in acts


def test_rejected_transfer_returns_the_credits_and_transfer_errors(server):
    dev = developer(server)
    with server.client("municipal") as mun, server.client("administrator") as adm, server.client("reviewer") as rev, \
            server.client("engineer") as eng:
        before = balances(rev)
        body = {"basin": BASIN, "from_owner": MUNICIPAL, "to_owner": dev, "gpd": 700, "document": "memorandum of gift"}
        problem_ok(server.client(None).post("/bank/transfers", json=body), 401)
        # an engineer and a reviewer do not transfer credits (service policy bank_roles)
        problem_ok(eng.post("/bank/transfers", json=body), 403)
        problem_ok(rev.post("/bank/transfers", json=body), 403)
        for bad, field in ((body | {"gpd": 2.5}, "body.gpd"), (body | {"gpd": 0}, "body.gpd"),
                           ({k: v for k, v in body.items() if k != "document"}, "body.document")):
            assert problem_ok(mun.post("/bank/transfers", json=bad), 400)["field"] == field
        problem_ok(mun.post("/bank/transfers", json=body | {"to_owner": "Nobody Registered"}), 400)
        problem_ok(mun.post("/bank/transfers", json=body | {"to_owner": MUNICIPAL}), 400)
        # more than the holder has; across basins without the Board (section A)
        b = problem_ok(mun.post("/bank/transfers", json=body | {"gpd": 10 ** 8}), 409)
        assert "insufficient credits" in b["detail"]
        b = problem_ok(mun.post("/bank/transfers", json=body | {"to_basin": "CSO 9"}), 409)
        assert "Board" in b["detail"]
        assert balances(rev) == before
        r = mun.post("/bank/transfers", json=body)
        assert r.status_code == 201, r.text
        ref = r.json()["transfer"]["transfer"]
        assert balances(rev)[(BASIN, MUNICIPAL)] == before[(BASIN, MUNICIPAL)] - 700
        problem_ok(adm.post(f"/bank/transfers/{ref}/sign-off", json={"decision": "reject", "note": "  "}), 400)
        problem_ok(adm.post("/bank/transfers/transfer-999999/sign-off", json={"decision": "approve"}), 404)
        problem_ok(rev.get("/bank/transfers/transfer-999999"), 404)
        r = adm.post(f"/bank/transfers/{ref}/sign-off", json={"decision": "reject", "note": "the bill of sale is unsigned"})
        assert r.status_code == 200, r.text
        assert r.json()["transfer"]["signoff_status"] == "rejected"
        assert balances(rev) == before
        assert ref in [x["transfer"] for x in rev.get("/bank/transfers", params={"status": "rejected"}).json()["transfers"]]
        assert (server.names["engineer"], "record transfers", f"{MUNICIPAL} -> {dev}", "forbidden") in journal(adm)



def test_the_bank_names_what_cites_a_job(server):
    """``bank_api.citing`` (for the dismissal of a cited job): a pending or signed-off deposit cites its
    quantification; a rejected one no longer does."""
    from capacitysim.service.app import Service
    from capacitysim.service.bank_api import citing

    svc = Service(server.data, start_runner=False)  # the server's own store and bank, read from this process
    with server.client("engineer") as eng, server.client("administrator") as adm:
        pid, other = new_project_id(), new_project_id()
        job, _ = quantified(server, eng, pid)
        job_b, _ = quantified(server, eng, other)
        assert citing(svc, svc.store.job(job)) == []
        txn = eng.post("/bank/deposits", json=deposit_body(pid, job, 900)).json()["deposit"]["txn"]
        txn_b = eng.post("/bank/deposits", json=deposit_body(other, job_b, 900)).json()["deposit"]["txn"]
        assert citing(svc, svc.store.job(job)) == [f"deposit of project {pid}"]
        assert adm.post(f"/bank/deposits/{txn}/sign-off", json={"decision": "approve"}).status_code == 200
        assert adm.post(f"/bank/deposits/{txn_b}/sign-off", json={"decision": "reject", "note": "no"}).status_code == 200
        assert citing(svc, svc.store.job(job)) == [f"deposit of project {pid}"]
        assert citing(svc, svc.store.job(job_b)) == []


def test_a_cited_quantification_is_not_dismissed(server):
    """The quantification a deposit cites is evidence: DELETE /jobs/{id} is refused (409) and names the deposit."""
    with server.client("engineer") as eng:
        pid = new_project_id()
        job, _ = quantified(server, eng, pid)
        assert eng.post("/bank/deposits", json=deposit_body(pid, job, 500)).status_code == 201
        assert "deposit of project" in problem_ok(eng.delete(f"/jobs/{job}"), 409)["detail"]
        assert eng.get(f"/jobs/{job}").json()["status"] == "successful"


def test_a_deposit_recorded_with_the_cli_is_signed_off_through_the_service(server):
    """`capacitysim bank deposit` records a deposit citing the PE's quantification file and no service job: the
    administrator decides it from the queue like any other (the ledger's record is the evidence); a clerk at the
    counter recorded it, so the administrator may sign it off (program policy signoff_separation)."""
    from capacitysim.bank import Ledger
    from tests.bank_support import quantification

    pid = new_project_id("JC-CLI")
    q = quantification(server.data / "counter", pid, 1234.0, owner=MUNICIPAL, basin=BASIN)
    with Ledger(server.data / "bank.sqlite", actor="Cal Clerk") as lg:
        txn = lg.deposit(BASIN, MUNICIPAL, 1234.0, pid, quantification=q, certificate="letter 2026-11",
                         reason="recorded at the counter")["txn"]
    with server.client("administrator") as adm, server.client("reviewer") as rev:
        before = balances(rev)
        d = rev.get(f"/bank/deposits/{txn}").json()
        assert d["signoff_status"] == "pending" and not d["quantification_job"]
        r = adm.post(f"/bank/deposits/{txn}/sign-off", json={"decision": "approve", "note": "certificate checked"})
        assert r.status_code == 200, r.text
        assert balances(rev)[(BASIN, MUNICIPAL)] == before[(BASIN, MUNICIPAL)] + 1234
