"""Debian's Chromium driven by Playwright, for the browser tests of tests/service: the browser (a module fixture)
and signing in on the web pages. Importing it skips the importing module when the ``playwright`` package or
``/usr/bin/chromium`` is absent (``.ci/run`` installs both)."""

from __future__ import annotations

import os

import pytest

sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = os.environ.get("CAPACITYSIM_CHROMIUM", "/usr/bin/chromium")
if not os.access(CHROMIUM, os.X_OK):
    pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)
#: Headless, and none of Chromium's own network traffic (this machine's network is closed).
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync"]


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


def sign_in(browser, server, role):
    """A new browser context signed in as ``role`` through the sign-in form (``/ui`` leads there first)."""
    page = browser.new_context().new_page()
    page.goto(f"{server.url}/ui")
    assert page.url.endswith("/ui/login")
    page.fill("#token", server.tokens[role])
    page.click("#sign-in")
    page.wait_for_url(f"{server.url}/ui")
    return page
