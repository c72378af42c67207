"""Browser tests (Playwright on Debian's Chromium): submit a demonstration, sign off a withdrawal and a deposit.

Skipped when the ``playwright`` package or ``/usr/bin/chromium`` is absent (``.ci/run`` installs both).
"""

from __future__ import annotations

import re

import pytest

from browser_support import browser, sign_in  # noqa: F401 - browser is a fixture

from capacitysim.service.demo import BASIN, MUNICIPAL

pytestmark = [pytest.mark.server, pytest.mark.browser]

#: Longest a page waits for a job to end [ms] (a wait, not a measured threshold).
JOB_WAIT_MS = 240_000


def test_engineer_submits_a_demonstration_and_reads_the_verdict(browser, server):
    page = sign_in(browser, server, "engineer")
    page.click("#nav-new")
    page.click("#process-capacity-demonstration")
    page.select_option("#model", "synthetic-50")
    page.fill("#storm", "binghamton-1yr-24h")
    page.fill("#connections", "MH0003=5000")
    page.click("#run")
    page.wait_for_url(re.compile(r".*/ui/jobs/[0-9a-f]{32}$"))
    # the page reloads itself while the job runs; the verdict appears when it ends
    page.wait_for_selector("#verdict", timeout=JOB_WAIT_MS)
    assert page.inner_text("#verdict") == "PASS"
    assert page.inner_text("#status") == "successful"
    page.click("#report")
    page.wait_for_load_state()
    assert "MH0003" in page.content()
    page.context.close()


def test_administrator_signs_off_a_withdrawal(browser, server):
    # flows of this test alone: a job's result is the evidence of one application (policy evidence_single_use)
    with server.client("engineer") as eng:
        cap = eng.post("/processes/capacity-demonstration/execution", json={"inputs": {
            "model": "synthetic-50", "storm": "binghamton-1yr-24h", "connections": [{"node": "MH0003", "gpd": 5200}]}})
        spd = eng.post("/processes/spdes-check/execution", json={"inputs": {
            "plant": "sample-wwtp", "flows": server.flows, "added_gpd": [5200]}})
        r = eng.post("/bank/withdrawals", json={
            "basin": BASIN, "owner": MUNICIPAL, "peak_flow_gpd": 2600, "application": "BROWSER-1", "node": "MH0003",
            "capacity_job": cap.headers["Location"].rsplit("/", 1)[1],
            "spdes_job": spd.headers["Location"].rsplit("/", 1)[1], "application_approval": "H2-browser"})
        assert r.status_code == 201, r.text
    page = sign_in(browser, server, "administrator")
    page.click("nav >> text=Bank")
    page.wait_for_url(f"{server.url}/ui/bank")  # a click does not wait for the page it opens (count() does not wait)
    row = page.locator("#queue tr", has_text="BROWSER-1")
    assert row.count() == 1
    row.locator("input[name=note]").fill("demonstration and SPDES check reviewed")
    row.locator("button[value=approve]").click()
    page.wait_for_selector("#confirm")  # a confirmation page says what will be decided, then the result is shown
    page.click("#confirm")
    page.wait_for_url(re.compile(r".*/ui/bank\?.*"))
    assert "approved" in page.inner_text("#result")
    assert page.locator("#queue tr", has_text="BROWSER-1").count() == 0
    assert "signed-off (approved)" in page.locator("#decided tr", has_text="BROWSER-1").inner_text()
    # the flow credit note the sign-off issued, from the bank page: HTML in the browser, PDF downloaded
    page.locator("#decided tr", has_text="BROWSER-1").locator("text=HTML").click()
    page.wait_for_url(f"{server.url}/ui/bank/notes/BROWSER-1")
    assert "Section G: no monetary value" in page.content() and "2,600" in page.content()
    page.go_back()
    with page.expect_download() as dl:
        page.locator("#decided tr", has_text="BROWSER-1").locator("text=PDF").click()
    assert dl.value.suggested_filename == "flow-credit-note-BROWSER-1.pdf"
    assert open(dl.value.path(), "rb").read(5) == b"%PDF-"
    page.context.close()
    with server.client("reviewer") as rev:
        w = rev.get("/bank/withdrawals/BROWSER-1").json()
        assert w["status"] == "approved" and w["signed_off_by"] == server.names["administrator"]


def test_administrator_approves_a_pending_deposit(browser, server):
    from bank_support import balances, deposit_body, new_project_id, quantified

    pid = new_project_id("BROWSER")
    with server.client("engineer") as eng:
        job, _ = quantified(server, eng, pid)
        r = eng.post("/bank/deposits", json=deposit_body(pid, job, 1200))
        assert r.status_code == 201, r.text
        txn = r.json()["deposit"]["txn"]
        before = balances(eng)
    page = sign_in(browser, server, "administrator")
    page.click("nav >> text=Bank")
    page.wait_for_url(f"{server.url}/ui/bank")
    row = page.locator("#deposit-queue tr", has_text=pid)
    assert row.count() == 1
    row.locator("input[name=note]").fill("certificate of completion seen")
    row.locator("button[value=approve]").click()
    page.wait_for_selector("#confirm")  # a confirmation page says what will be decided, then the result is shown
    page.click("#confirm")
    page.wait_for_url(re.compile(r".*/ui/bank\?.*"))
    assert "approved" in page.inner_text("#result")
    assert page.locator("#deposit-queue tr", has_text=pid).count() == 0
    assert "signed-off" in page.locator("#decided-other tr", has_text=pid).inner_text()
    page.context.close()
    with server.client("reviewer") as rev:
        d = rev.get(f"/bank/deposits/{txn}").json()
        assert d["signoff_status"] == "signed-off" and d["decided_by"] == server.names["administrator"]
        assert d["note"] == "certificate of completion seen"
        assert balances(rev)[(BASIN, MUNICIPAL)] == before[(BASIN, MUNICIPAL)] + 1200
