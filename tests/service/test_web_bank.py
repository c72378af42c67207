"""The bank's web pages through real HTTP (no browser), issue 28 item 5: an engineer requests a withdrawal citing their
own jobs through the form (errors name the field's label, keep the values, 400; no CSRF token, 403; a reviewer may
not, journaled); the administrator sees each cited job's evidence in the queue, confirms before deciding, sees the
outcome and the balances' reserved figure change; the requester cannot decide their own request.

Each test runs scenarios of its own flows (a job's result is the evidence of one application: program policy
evidence_single_use, by the document's SHA-256)."""

from __future__ import annotations

import contextlib
import html
import re
import uuid
from urllib.parse import quote

import pytest
from bank_support import ASYNC, another, demo_bindings, journal
from support import problem_ok, wait_final

from capacitysim.service.demo import BASIN, MUNICIPAL

pytestmark = [pytest.mark.server]

CHECKER = "Cal Checker"  # the second administrator of test_bank_makerchecker.py (added once per server)


def _csrf(text: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', text).group(1)


@contextlib.contextmanager
def sign_in(server, role):
    """An httpx client signed in on the pages as ``role`` (the sign-in form with its CSRF token)."""
    import httpx

    with httpx.Client(base_url=server.url, timeout=300, follow_redirects=False) as c:
        page = c.get("/ui/login")
        r = c.post("/ui/login", data={"csrf": _csrf(page.text), "token": server.tokens[role]})
        assert r.status_code == 303 and r.headers["location"] == "/ui", r.text
        yield c


def jobs(server, client, gpd: int, node: str = "MH0003") -> tuple[str, str]:
    """A passing capacity demonstration connecting ``gpd`` at ``node`` and a successful SPDES check adding it."""
    cap = client.post("/processes/capacity-demonstration/execution", headers=ASYNC, json={"inputs": {
        "model": "synthetic-50", "storm": "binghamton-1yr-24h", "connections": [{"node": node, "gpd": gpd}]}}).json()["jobID"]
    spd = client.post("/processes/spdes-check/execution", headers=ASYNC, json={"inputs": {
        "plant": "sample-wwtp", "flows": server.flows, "added_gpd": [gpd]}}).json()["jobID"]
    cap, spd = wait_final(client, cap), wait_final(client, spd)
    assert cap["verdict"] == "pass" and spd["status"] == "successful", (cap, spd)
    return cap["jobID"], spd["jobID"]


def form(app: str, cap: str, spd: str, csrf: str, gpd="3,000", **extra) -> dict:
    return {"csrf": csrf, "application": app, "basin": BASIN, "owner": MUNICIPAL, "node": "MH0003", "peak_flow_gpd": gpd,
            "capacity_job": cap, "spdes_job": spd, "application_approval": f"H2-{app}", **extra}


def reserve(server) -> dict:
    """The demo holder's figures of ``GET /bank/balances`` (the JSON the page's table is made of), read as the reviewer."""
    with server.client("reviewer") as rev:
        rows = rev.get("/bank/balances").json()["balances"]
    return next(b for b in rows if (b["basin"], b["owner"]) == (BASIN, MUNICIPAL))


def balance_cells(text: str) -> tuple[str, str]:
    """The demo holder's available and reserved cells of the page's balances table."""
    m = re.search(rf'<tr class="balance"><td>{re.escape(BASIN)}</td><td>{re.escape(MUNICIPAL)}</td>'
                  r'<td class="available">([^<]*)</td>\s*<td class="reserved">([^<]*)</td>', text)
    assert m, text[text.index('id="balances"'):][:1500]
    return m.group(1), m.group(2)


def test_an_engineer_requests_a_withdrawal_and_the_administrator_confirms_it(server):
    demo_bindings(server)
    app = f"WB-<b>{uuid.uuid4().hex[:6]}</b>"
    with server.client("engineer") as eng:
        cap, spd = jobs(server, eng, 3717)
    with sign_in(server, "engineer") as c:
        assert 'id="new-withdrawal"' in c.get("/ui/bank").text
        page = c.get("/ui/bank/withdrawals/new")
        assert page.status_code == 200 and "Peak flow [gpd]" in page.text
        assert f'<option value="{cap}"' in page.text and f'<option value="{spd}"' in page.text and "MH0003=3,717" in page.text
        csrf = _csrf(page.text)
        # no CSRF token: nothing is done
        problem_ok(c.post("/ui/bank/withdrawals", data=form(app, cap, spd, "")), 403)
        # a bad flow: 400, named by its label, the values kept (escaped)
        r = c.post("/ui/bank/withdrawals", data=form(app, cap, spd, csrf, gpd="lots"))
        assert r.status_code == 400 and 'Peak flow [gpd]: got "lots"' in html.unescape(r.text), r.text
        assert "body.peak_flow_gpd" not in r.text and 'aria-invalid="true"' in r.text
        assert f'value="{html.escape(app)}"' in r.text and "<b>" not in r.text.split('id="withdraw-form"')[1]
        assert f'<option value="{cap}" selected' in r.text
        r = c.post("/ui/bank/withdrawals", data=form("", cap, spd, csrf))
        assert r.status_code == 400 and "Application: missing (required)" in r.text
        # more than the demonstration connected: the API's own refusal (409), named by the label
        r = c.post("/ui/bank/withdrawals", data=form(app, cap, spd, csrf, gpd="9000"))
        assert r.status_code == 409 and "Capacity demonstration (job): job" in r.text and "3,717 gpd" in r.text
        before = reserve(server)
        r = c.post("/ui/bank/withdrawals", data=form(app, cap, spd, csrf))
        assert r.status_code == 303, r.text
        assert r.headers["location"] == f"/ui/bank?withdrawal={quote(app, safe='')}#result"
        done = c.get(r.headers["location"])
        notice = done.text[done.text.index('id="result"'):].split("</p>")[0]
        assert html.escape(app) in notice and "awaiting the administrator" in notice and "3,000 gpd" in notice
        # the cited jobs are no longer offered
        assert f'<option value="{cap}"' not in c.get("/ui/bank/withdrawals/new").text
    mid = reserve(server)
    assert mid["pending_withdrawals_gpd"] == before["pending_withdrawals_gpd"] + 3000
    assert mid["available_gpd"] == before["available_gpd"] - 3000 and mid["held_gpd"] == before["held_gpd"]
    with sign_in(server, "reviewer") as c:
        page = c.get("/ui/bank")
        assert 'id="new-withdrawal"' not in page.text
        assert c.get("/ui/bank/withdrawals/new").status_code == 403
        r = c.post("/ui/bank/withdrawals", data=form("WB-REV", cap, spd, _csrf(page.text)))
        assert r.status_code == 403 and "does not request withdrawals" in r.text
        r = c.post("/ui/bank/confirm", data={"csrf": _csrf(page.text), "application": app, "decision": "approve"})
        assert r.status_code == 403
    with sign_in(server, "administrator") as c:
        page = c.get("/ui/bank")
        row = page.text[page.text.index(html.escape(app)):].split("</tr>")[0]
        # the evidence, inline: verdicts, ages, flows, coverage
        assert f"/ui/jobs/{cap}" in row and f"/ui/jobs/{spd}" in row and row.count("PASS") == 2 and "today" in row
        assert "MH0003=3,717 gpd" in row and "3,717 gpd" in row.split("SPDES check")[1]
        assert row.count("covers the request") == 2 and "3,000" in row and "3000.0" not in row
        assert balance_cells(page.text) == (f"{mid['available_gpd']:,}", f"{mid['pending_withdrawals_gpd']:,}")
        csrf = _csrf(page.text)
        problem_ok(c.post("/ui/bank/confirm", data={"application": app, "decision": "approve"}), 403)
        r = c.post("/ui/bank/confirm", data={"csrf": csrf, "kind": "withdrawal", "application": app, "decision": "approve",
                                             "note": "evidence <i>seen</i>"})
        assert r.status_code == 200 and 'id="confirm"' in r.text and 'action="/ui/bank/sign-off"' in r.text
        assert html.escape(app) in r.text and "3,000" in r.text and BASIN in r.text and f"/ui/jobs/{cap}" in r.text
        assert 'value="evidence &lt;i&gt;seen&lt;/i&gt;"' in r.text and 'id="own"' not in r.text
        with server.client("reviewer") as rev:  # nothing decided yet
            rows = rev.get("/bank/withdrawals").json()["withdrawals"]
            assert next(w for w in rows if w["application"] == app)["signoff_status"] == "pending"
        r = c.post("/ui/bank/sign-off", data={"csrf": csrf, "kind": "withdrawal", "application": app,
                                              "decision": "approve", "note": "evidence <i>seen</i>"})
        assert r.status_code == 303 and r.headers["location"] == f"/ui/bank?withdrawal={quote(app, safe='')}#result"
        done = c.get(r.headers["location"]).text
        after = reserve(server)
        notice = done[done.index('id="result"'):].split("</p>")[0]
        assert f"approved by {server.names['administrator']}" in notice and f"{after['available_gpd']:,} gpd" in notice
        assert after["pending_withdrawals_gpd"] == mid["pending_withdrawals_gpd"] - 3000
        assert after["available_gpd"] == mid["available_gpd"] and after["held_gpd"] == mid["held_gpd"] - 3000
        assert balance_cells(done) == (f"{after['available_gpd']:,}", f"{after['pending_withdrawals_gpd']:,}")
        assert html.escape(app) not in done[done.index('id="queue"'):done.index('id="deposit-queue"')]
        # an address cannot make the page say anything: an unknown record shows no notice
        assert 'id="result"' not in c.get("/ui/bank", params={"withdrawal": "<script>x</script>"}).text
        acts = journal(c)
    assert (server.names["reviewer"], "request withdrawals", "WB-REV", "forbidden") in acts
    assert (server.names["administrator"], "sign-off", app, "ok") in acts


def test_the_requester_cannot_decide_their_own_request(server):
    another(server, "administrator2", CHECKER, "administrator")
    app = f"WB-OWN-{uuid.uuid4().hex[:6]}"
    with server.client("administrator") as adm:
        cap, spd = jobs(server, adm, 3719)
    with sign_in(server, "administrator") as c:
        csrf = _csrf(c.get("/ui/bank/withdrawals/new").text)
        r = c.post("/ui/bank/withdrawals", data=form(app, cap, spd, csrf, gpd="2,600"))
        assert r.status_code == 303, r.text
        r = c.post("/ui/bank/confirm", data={"csrf": csrf, "application": app, "decision": "approve"})
        assert r.status_code == 200 and 'id="own"' in r.text and "signoff_separation" in r.text
        assert 'id="confirm"' not in r.text
        # the ledger refuses it whatever the page offers, and the page says why
        r = c.post("/ui/bank/sign-off", data={"csrf": csrf, "application": app, "decision": "approve"})
        assert r.status_code == 409 and "signoff_separation" in r.text and CHECKER in r.text
        assert "/bank.sqlite" not in r.text and str(server.data) not in r.text
    with sign_in(server, "administrator2") as c:
        csrf = _csrf(c.get("/ui/bank").text)
        r = c.post("/ui/bank/confirm", data={"csrf": csrf, "application": app, "decision": "reject"})
        assert r.status_code == 200 and 'id="confirm"' in r.text and "required" in r.text
        r = c.post("/ui/bank/sign-off", data={"csrf": csrf, "application": app, "decision": "reject"})
        assert r.status_code == 400 and "the reason for the rejection" in r.text
        before = reserve(server)
        r = c.post("/ui/bank/sign-off", data={"csrf": csrf, "application": app, "decision": "reject", "note": "own request"})
        assert r.status_code == 303, r.text
        done = c.get(r.headers["location"]).text
        assert f"rejected by {CHECKER}" in done[done.index('id="result"'):].split("</p>")[0]
        after = reserve(server)
        assert after["pending_withdrawals_gpd"] == before["pending_withdrawals_gpd"] - 2600
        assert after["available_gpd"] == before["available_gpd"] + 2600
