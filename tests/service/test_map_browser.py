"""The network maps in Chromium: the model map's SVG renders when opened by itself (with its own CSP), and the map
script (/ui/assets/map.js) loads a map into a signed-in page under the pages' CSP, picks a node into a textarea and
reloads for another model. The script's markup is built in the page through the DevTools protocol (no inline
script: the CSP forbids it); the submit form's own test belongs to that form."""

from __future__ import annotations

import pytest

from browser_support import browser, sign_in  # noqa: F401 - `browser` is a fixture

pytestmark = [pytest.mark.server, pytest.mark.browser]


def test_the_model_map_renders(browser, server, tmp_path):  # noqa: F811
    page = sign_in(browser, server, "engineer")
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    r = page.goto(f"{server.url}/ui/maps/model?model=synthetic-50")
    assert r.status == 200 and r.headers["content-type"].startswith("image/svg+xml")
    svg = page.locator("svg")
    box = svg.bounding_box()
    assert box and box["width"] > 300 and box["height"] > 100
    assert page.locator("circle[data-node]").count() == 50
    # the circles are drawn where the map is (not all at one point)
    xs = {round(page.locator(f"circle[data-node='{n}']").bounding_box()["x"]) for n in ("MH0001", "MH0010", "PLANT")}
    assert len(xs) == 3
    shot = tmp_path / "model-map.png"
    page.screenshot(path=str(shot))  # a document that is an SVG has no full-page screenshot in Playwright
    assert shot.stat().st_size > 10_000
    assert not errors, errors
    page.context.close()


def test_the_script_picks_nodes_under_the_page_csp(browser, server, tmp_path):  # noqa: F811
    page = sign_in(browser, server, "engineer")
    problems = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    assert page.url.endswith("/ui")  # a page with the pages' CSP (script-src 'self' by default-src)
    page.evaluate("""() => {
        const sel = document.createElement("select"); sel.id = "map-model";
        for (const v of ["synthetic-50", "synthetic-500"]) {
            const o = document.createElement("option"); o.value = v; o.textContent = v; sel.append(o);
        }
        const ta = document.createElement("textarea"); ta.id = "map-connections"; ta.value = "MH0010=100";
        const div = document.createElement("div"); div.className = "network-map";
        div.dataset.src = "/ui/maps/model?model=synthetic-50";
        div.dataset.target = "#map-connections"; div.dataset.modelSelect = "#map-model";
        document.body.append(sel, ta, div);
    }""")
    page.add_script_tag(url="/ui/assets/map.js")  # same origin: allowed by the CSP
    page.wait_for_selector("div.network-map svg circle[data-node='MH0003']")
    assert page.locator("div.network-map circle[data-node]").count() == 50
    # the node already listed in the textarea is marked
    assert "sel" in page.locator("circle[data-node='MH0010']").get_attribute("class").split()
    page.locator("circle[data-node='MH0003']").click()
    assert page.input_value("#map-connections") == "MH0010=100\nMH0003="
    assert page.evaluate("() => document.activeElement.id") == "map-connections"
    assert page.evaluate("() => { const t = document.activeElement; return [t.selectionStart, t.value.length]; }") \
        == [len("MH0010=100\nMH0003="), len("MH0010=100\nMH0003=")]
    assert "sel" in page.locator("circle[data-node='MH0003']").get_attribute("class").split()
    page.screenshot(path=str(tmp_path / "picked.png"), full_page=True)
    # another model from the select reloads the map
    page.select_option("#map-model", "synthetic-500")
    page.wait_for_function("() => document.querySelectorAll('div.network-map circle[data-node]').length > 400")
    assert page.locator("div.network-map svg").count() == 1
    assert not problems, problems
    page.context.close()
