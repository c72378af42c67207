"""The web pages through real HTTP (no browser): sign-in with CSRF, submit, escaping, the sign-off queue."""

from __future__ import annotations

import contextlib
import re

import pytest

from support import problem_ok, wait_final

from capacitysim.service.demo import BASIN, MUNICIPAL

pytestmark = [pytest.mark.server]


def _csrf(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)


@contextlib.contextmanager
def sign_in(server, role):
    import httpx

    with httpx.Client(base_url=server.url, timeout=300, follow_redirects=False) as c:
        page = c.get("/ui/login")
        assert page.status_code == 200
        r = c.post("/ui/login", data={"csrf": _csrf(page.text), "token": server.tokens[role]})
        assert r.status_code == 303 and r.headers["location"] == "/ui", r.text
        yield c


def test_sign_in_needs_the_form_token_and_a_valid_bearer_token(server):
    import httpx

    # from an address of its own: a failed sign-in counts against the address (policy auth_failures_max)
    with httpx.Client(base_url=server.url, timeout=60, transport=httpx.HTTPTransport(local_address="127.0.0.3")) as c:
        assert c.get("/ui", follow_redirects=False).headers["location"] == "/ui/login"
        page = c.get("/ui/login")
        problem_ok(c.post("/ui/login", data={"csrf": "forged", "token": server.tokens["engineer"]}), 403)
        r = c.post("/ui/login", data={"csrf": _csrf(page.text), "token": "cs1.0.bad"})
        assert r.status_code == 401 and "not valid" in r.text


def test_submit_watch_and_read_the_verdict(server):
    with sign_in(server, "engineer") as c:
        assert c.get("/ui/submit").headers["location"] == "/ui/processes/capacity-demonstration"  # the old address
        form = c.get("/ui/processes/capacity-demonstration")
        assert "synthetic-50" in form.text and "binghamton-1yr-24h" in form.text
        csrf = _csrf(form.text)
        # a form without the CSRF token does nothing
        problem_ok(c.post("/ui/submit", data={"model": "synthetic-50", "connections": "MH0003=5000"}), 403)
        # a bad line is shown back, escaped
        r = c.post("/ui/submit", data={"csrf": csrf, "model": "synthetic-50", "storm": "binghamton-1yr-24h",
                                       "connections": "<script>alert(1)</script>=5"})
        assert r.status_code == 400
        assert "<script>alert(1)</script>" not in r.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in r.text
        r = c.post("/ui/submit", data={"csrf": csrf, "model": "synthetic-50", "storm": "binghamton-1yr-24h",
                                       "connections": "MH0003=5000"})
        assert r.status_code == 303, r.text
        job = r.headers["location"].rsplit("/", 1)[1]
        page = c.get(f"/ui/jobs/{job}")
        assert page.status_code == 200 and ("accepted" in page.text or "running" in page.text or "successful" in page.text)
        # the API answers the session cookie for reading (the results, the report) ...
        st = wait_final(c, job)
        assert st["status"] == "successful"
        page = c.get(f"/ui/jobs/{job}")
        assert 'id="verdict" class="pass">PASS' in page.text and f"/jobs/{job}/report" in page.text
        assert c.get(f"/jobs/{job}/report").status_code == 200
        # ... never for a change: a POST to the API needs the bearer header
        problem_ok(c.post("/processes/credits-quantification/execution",
                          json={"inputs": {"project": "oak-street-sump-and-manholes"}}), 401)
        problem_ok(c.delete(f"/jobs/{job}"), 401)
        home = c.get("/ui")
        assert job[:8] in home.text


def test_reviewer_cannot_submit_from_the_page(server):
    with sign_in(server, "reviewer") as c:
        form = c.get("/ui/processes/capacity-demonstration")
        assert form.status_code == 200 and 'id="process-form"' not in form.text and "does not submit" in form.text
        csrf = _csrf(c.get("/ui").text)
        r = c.post("/ui/processes/capacity-demonstration", data={"csrf": csrf, "model": "synthetic-50",
                                                                 "connections": "MH0003=5000"})
        assert r.status_code == 403 and "does not submit" in r.text
        r = c.post("/ui/submit", data={"csrf": csrf, "model": "synthetic-50", "connections": "MH0003=5000"})
        assert r.status_code == 403


def test_sign_off_queue(server):
    # flows of this test alone: a job's result is the evidence of one application (policy evidence_single_use)
    with server.client("engineer") as eng:
        cap = eng.post("/processes/capacity-demonstration/execution", json={"inputs": {
            "model": "synthetic-50", "storm": "binghamton-1yr-24h", "connections": [{"node": "MH0003", "gpd": 5100}]}})
        spd = eng.post("/processes/spdes-check/execution", json={"inputs": {
            "plant": "sample-wwtp", "flows": server.flows, "added_gpd": [5100]}})
        cap_id, spd_id = (r.headers["Location"].rsplit("/", 1)[1] for r in (cap, spd))
        r = eng.post("/bank/withdrawals", json={
            "basin": BASIN, "owner": MUNICIPAL, "peak_flow_gpd": 3000, "application": "WEB-<i>1</i>", "node": "MH0003",
            "capacity_job": cap_id, "spdes_job": spd_id, "application_approval": "H2-web"})
        assert r.status_code == 201, r.text
    with sign_in(server, "municipal") as c:
        page = c.get("/ui/bank")
        assert "WEB-&lt;i&gt;1&lt;/i&gt;" in page.text and "Only an administrator signs off" in page.text
        r = c.post("/ui/bank/sign-off", data={"csrf": _csrf(page.text), "application": "WEB-<i>1</i>", "decision": "approve"})
        assert r.status_code == 403
    with sign_in(server, "administrator") as c:
        page = c.get("/ui/bank")
        assert "WEB-&lt;i&gt;1&lt;/i&gt;" in page.text and f"/ui/jobs/{cap_id}" in page.text
        problem_ok(c.post("/ui/bank/sign-off", data={"application": "WEB-<i>1</i>", "decision": "approve"}), 403)
        r = c.post("/ui/bank/sign-off", data={"csrf": _csrf(page.text), "application": "WEB-<i>1</i>",
                                              "decision": "approve", "note": "ok"})
        assert r.status_code == 303, r.text
        page = c.get("/ui/bank")
        assert "signed-off (approved)" in page.text


def test_the_queue_shows_deposits_and_transfers_and_signs_them_off(server):
    from bank_support import (
        balances,
        deposit_body,
        developer,
        new_project_id,
        quantified,
    )

    dev = developer(server)
    pid = new_project_id("WEB")
    with server.client("engineer") as eng, server.client("municipal") as mun:
        job, _ = quantified(server, eng, pid)
        r = eng.post("/bank/deposits", json=deposit_body(pid, job, 2500, certificate="<script>alert('c')</script>"))
        assert r.status_code == 201, r.text
        txn = r.json()["deposit"]["txn"]
        r = mun.post("/bank/transfers", json={"basin": BASIN, "from_owner": MUNICIPAL, "to_owner": dev, "gpd": 300,
                                              "document": "<i>bill of sale</i>"})
        assert r.status_code == 201, r.text
        ref = r.json()["transfer"]["transfer"]
        before = balances(mun)
    with sign_in(server, "municipal") as c:
        page = c.get("/ui/bank")
        # both are shown, every user string escaped; no sign-off form for a municipal user
        assert pid in page.text and ref in page.text
        assert "<script>alert" not in page.text and "&lt;script&gt;alert(&#39;c&#39;)&lt;/script&gt;" in page.text
        assert "&lt;i&gt;bill of sale&lt;/i&gt;" in page.text
        assert f'name="id" value="{txn}"' not in page.text
        r = c.post("/ui/bank/sign-off", data={"csrf": _csrf(page.text), "kind": "deposit", "id": txn, "decision": "approve"})
        assert r.status_code == 403
    with sign_in(server, "administrator") as c:
        page = c.get("/ui/bank")
        queue = page.text[page.text.index('id="deposit-queue"'):page.text.index('id="transfer-queue"')]
        assert pid in queue and f'name="id" value="{txn}"' in queue and f"/ui/jobs/{job}" in queue
        assert f'name="id" value="{ref}"' in page.text[page.text.index('id="transfer-queue"'):]
        # without the session's CSRF token nothing is done
        problem_ok(c.post("/ui/bank/sign-off", data={"kind": "deposit", "id": txn, "decision": "approve"}), 403)
        problem_ok(c.post("/ui/bank/sign-off", data={"csrf": "0" * 64, "kind": "deposit", "id": txn,
                                                     "decision": "approve"}), 403)
        csrf = _csrf(page.text)
        r = c.post("/ui/bank/sign-off", data={"csrf": csrf, "kind": "loan", "id": txn, "decision": "approve"})
        assert r.status_code == 400 and "allowed: one of withdrawal, deposit, transfer" in r.text
        r = c.post("/ui/bank/sign-off", data={"csrf": csrf, "kind": "deposit", "id": "f" * 32, "decision": "approve"})
        assert r.status_code == 404
        r = c.post("/ui/bank/sign-off", data={"csrf": csrf, "kind": "transfer", "id": ref, "decision": "reject"})
        assert r.status_code == 400 and "the reason for the rejection" in r.text
        r = c.post("/ui/bank/sign-off", data={"csrf": csrf, "kind": "deposit", "id": txn, "decision": "approve",
                                              "note": "certificate <b>seen</b>"})
        assert r.status_code == 303, r.text
        r = c.post("/ui/bank/sign-off", data={"csrf": csrf, "kind": "transfer", "id": ref, "decision": "reject",
                                              "note": "unsigned"})
        assert r.status_code == 303, r.text
        page = c.get("/ui/bank").text
        assert f'name="id" value="{txn}"' not in page and f'name="id" value="{ref}"' not in page
        decided = page[page.index('id="decided-other"'):]
        assert pid in decided and "signed-off" in decided and ref in decided and "rejected" in decided
        # the same decision again is refused, shown on the page
        r = c.post("/ui/bank/sign-off", data={"csrf": csrf, "kind": "deposit", "id": txn, "decision": "approve"})
        assert r.status_code == 409 and "not awaiting sign-off" in r.text
    with server.client("reviewer") as rev:
        after = balances(rev)
        assert after[(BASIN, MUNICIPAL)] == before[(BASIN, MUNICIPAL)] + 2500 + 300  # the rejected transfer returned
        assert rev.get(f"/bank/deposits/{txn}").json()["decided_by"] == server.names["administrator"]


def test_the_root_sends_a_browser_to_sign_in_and_an_api_client_a_401(server):
    """``/`` for a browser (Accept: text/html, no token) leads to the sign-in page; for an API client it stays the
    OGC landing page, 401 without a token (issue 28, item 5)."""
    import httpx

    # from an address of its own: the bad token counts against the address (policy auth_failures_max)
    with httpx.Client(base_url=server.url, timeout=60, follow_redirects=False,
                      transport=httpx.HTTPTransport(local_address="127.0.0.4")) as c:
        html = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
        r = c.get("/", headers=html)
        assert r.status_code == 303 and r.headers["location"] == "/ui"
        assert c.get("/ui", headers=html).headers["location"] == "/ui/login"
        problem_ok(c.get("/", headers={"Accept": "application/json"}), 401)
        problem_ok(c.get("/", headers=html | {"Authorization": "Bearer cs1.0.bad"}), 401)  # a token is never redirected
        ok = c.get("/", headers=html | {"Authorization": f"Bearer {server.tokens['engineer']}"})
        assert ok.status_code == 200 and ok.json()["title"] == "capacitysim"
