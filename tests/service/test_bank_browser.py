"""The bank's pages in Chromium (Playwright), issue 28 item 5: an engineer requests a withdrawal through the form citing
their own jobs; the administrator sees its evidence in the queue, approves it through the confirmation page and sees the
outcome and the balances. Screenshots of the queue and the balances go to the test's ``tmp_path``.

Skipped when the ``playwright`` package or ``/usr/bin/chromium`` is absent (``.ci/run`` installs both).
"""

from __future__ import annotations

import uuid

import pytest

from bank_support import ASYNC, demo_bindings
from browser_support import browser, sign_in  # noqa: F401 - browser is a fixture
from support import wait_final

from capacitysim.service.demo import BASIN, MUNICIPAL

pytestmark = [pytest.mark.server, pytest.mark.browser]

#: A screenshot of a rendered table is larger than this [bytes] (an empty page is a few kB).
MIN_SCREENSHOT_BYTES = 8_000


def test_an_engineer_requests_and_the_administrator_confirms_in_the_browser(browser, server, tmp_path):
    demo_bindings(server)
    gpd, app = 3721, f"BRW-<i>{uuid.uuid4().hex[:6]}</i>"
    with server.client("engineer") as eng:  # the evidence: a passing demonstration and a SPDES check of this flow
        cap = eng.post("/processes/capacity-demonstration/execution", headers=ASYNC, json={"inputs": {
            "model": "synthetic-50", "storm": "binghamton-1yr-24h", "connections": [{"node": "MH0003", "gpd": gpd}]}})
        spd = eng.post("/processes/spdes-check/execution", headers=ASYNC, json={"inputs": {
            "plant": "sample-wwtp", "flows": server.flows, "added_gpd": [gpd]}})
        cap, spd = wait_final(eng, cap.json()["jobID"]), wait_final(eng, spd.json()["jobID"])
        assert cap["verdict"] == "pass" and spd["status"] == "successful", (cap, spd)
    page = sign_in(browser, server, "engineer")
    page.goto(f"{server.url}/ui/bank")
    page.click("#new-withdrawal")
    page.wait_for_url(f"{server.url}/ui/bank/withdrawals/new")
    page.fill("#w-application", app)
    page.select_option("#w-basin", BASIN)
    page.select_option("#w-owner", MUNICIPAL)
    page.fill("#w-node", "MH0003")
    page.fill("#w-peak_flow_gpd", "abc")
    page.select_option("#w-capacity_job", cap["jobID"])
    page.select_option("#w-spdes_job", spd["jobID"])
    page.fill("#w-application_approval", "H2-browser")
    page.click("#request-withdrawal")
    # refused: the field's label, the values kept
    assert "Peak flow [gpd]: got" in page.inner_text("p.error")
    assert page.input_value("#w-application") == app and page.input_value("#w-capacity_job") == cap["jobID"]
    page.fill("#w-peak_flow_gpd", "3,000")
    page.click("#request-withdrawal")
    page.wait_for_url(f"{server.url}/ui/bank?withdrawal=*")
    assert "awaiting the administrator" in page.inner_text("#result") and app in page.inner_text("#result")
    page.context.close()

    page = sign_in(browser, server, "administrator")
    page.goto(f"{server.url}/ui/bank")
    row = page.locator("#queue tr.pending-withdrawal", has_text=app)
    assert row.count() == 1 and page.locator("#queue tr.pending-withdrawal").count() >= 1
    assert row.locator("li.ev").count() == 2 and row.locator(".covers.pass").count() == 2
    assert "MH0003=3,721 gpd" in row.inner_text() and row.locator("i").count() == 0  # the name's markup is text
    balances = page.locator("#balances tr.balance")
    assert balances.count() >= 1 and page.locator("#balances th").count() == 7
    holder = page.locator("#balances tr.balance", has_text=MUNICIPAL)
    reserved_before = int(holder.locator("td.reserved").inner_text().replace(",", ""))
    assert reserved_before >= 3000
    shots = {"queue": tmp_path / "queue.png", "balances": tmp_path / "balances.png"}
    page.locator("#queue").screenshot(path=str(shots["queue"]))
    page.locator("#balances").screenshot(path=str(shots["balances"]))
    for name, shot in shots.items():
        assert shot.stat().st_size > MIN_SCREENSHOT_BYTES, (name, shot.stat().st_size)
    row.locator("input[name=note]").fill("evidence checked")
    row.locator("button[value=approve]").click()
    page.wait_for_url(f"{server.url}/ui/bank/confirm")
    assert page.locator("#confirm").count() == 1 and page.locator("#own").count() == 0
    assert page.input_value("#note") == "evidence checked" and "3,000" in page.inner_text("#amount")
    assert page.locator("#decision li.ev").count() == 2
    page.screenshot(path=str(tmp_path / "confirm.png"), full_page=True)
    page.click("#confirm")
    page.wait_for_url(f"{server.url}/ui/bank?withdrawal=*")
    result = page.inner_text("#result")
    assert app in result and "approved by" in result, result
    holder = page.locator("#balances tr.balance", has_text=MUNICIPAL)
    assert int(holder.locator("td.reserved").inner_text().replace(",", "")) == reserved_before - 3000
    assert page.locator("#queue tr.pending-withdrawal", has_text=app).count() == 0
    page.screenshot(path=str(tmp_path / "after.png"), full_page=True)
    assert (tmp_path / "after.png").stat().st_size > MIN_SCREENSHOT_BYTES
    assert str(server.data) not in page.content()
    page.context.close()
