"""The capacity register's web page (issue 24) in Chromium (Playwright): per plant and per registered model, the
committed flows, read from the bank when the page is loaded.

Skipped when the ``playwright`` package or ``/usr/bin/chromium`` is absent (``.ci/run`` installs both).
"""

from __future__ import annotations

import re

import pytest

from browser_support import browser, sign_in  # noqa: F401 - browser is a fixture
from register_support import registered_basin

from capacitysim.service.demo import DEMO_USERS, MUNICIPAL

pytestmark = [pytest.mark.server, pytest.mark.browser]

#: Longest a page waits for the register job to end [ms] (a wait, not a measured threshold).
JOB_WAIT_MS = 240_000


def test_the_register_page_shows_the_committed_flows_of_each_model_and_plant(browser, server):
    from capacitysim.bank import Ledger

    reg = registered_basin(server, "Browser")
    app = f"BR-<i>{reg.tag}</i>"  # shown as text, never as markup
    page = sign_in(browser, server, "reviewer")
    page.click("nav >> text=Capacity register")
    page.wait_for_url(f"{server.url}/ui/bank/register")
    section = page.locator(f"#model-{reg.sha256[:12]}")
    assert reg.model_name in section.locator("h3").inner_text() and reg.basin in section.inner_text()
    assert "Nothing committed on this model." in section.inner_text()
    # an application recorded without credits (2,500 gpd or less) and approved is a commitment at its node
    with Ledger(server.data / "bank.sqlite", actor=DEMO_USERS["administrator"]) as lg:
        lg.record_application(app, MUNICIPAL, 2000, basin=reg.basin, node="MH0010", average_gpd=500,
                              application_approval=f"H2-{reg.tag}", reason="test: a small connection")
    page.reload()  # the page reads the bank at each request
    row = page.locator(f"#model-{reg.sha256[:12]} tr.flow")
    assert row.count() == 1
    cells = [row.locator("td").nth(i).inner_text() for i in range(6)]
    assert cells == [app, reg.basin, "MH0010", "500", "2,000", "approved"], cells
    assert page.locator(f"#model-{reg.sha256[:12]} i").count() == 0  # the name's markup is text
    plant = page.locator("#plants tr.plant", has_text=reg.plant)
    assert plant.count() == 1 and "500" in plant.inner_text() and app in plant.inner_text()
    assert str(server.data) not in page.content()
    assert page.locator("#compute-form").count() == 0  # a reviewer submits no job
    page.context.close()
    # an engineer computes the remaining headroom (a register job) from the page; the figures appear beside the flows
    page = sign_in(browser, server, "engineer")
    page.goto(f"{server.url}/ui/bank/register")
    page.click("#compute")
    page.wait_for_url(re.compile(r".*/ui/jobs/[0-9a-f]{32}$"))
    page.wait_for_selector("#verdict", timeout=JOB_WAIT_MS)
    assert page.inner_text("#status") == "successful"
    page.goto(f"{server.url}/ui/bank/register")
    section = page.locator(f"#model-{reg.sha256[:12]}")
    assert "(current)" in section.locator("p.freshness").inner_text()
    cells = section.locator("table.headroom tr.cell")
    nodes = {cells.nth(i).locator("td").nth(0).inner_text(): cells.nth(i).inner_text() for i in range(cells.count())}
    assert set(nodes) == {"MH0010", "MH0004"} and f"commitment {app}" in nodes["MH0010"], nodes
    page.context.close()
