"""The process forms and the job page in Debian's Chromium (issue 28, item 5): upload a model with its file, pick a
connection node on the map, watch the SWMM progress move, cancel, download the exports; screenshots checked for
the map and the tables (their pixels, not only their markup)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from browser_support import browser, sign_in  # noqa: F401 - the browser fixture

pytestmark = [pytest.mark.server, pytest.mark.browser]

#: Longest a page waits for a job to end [ms] (a wait, not a measured threshold).
JOB_WAIT_MS = 240_000
MODELS = Path(__file__).resolve().parents[1] / "data" / "models" / "external files"


def _colours(png: bytes) -> int:
    """Distinct colours in a screenshot (a blank or one-colour box has 1 or 2)."""
    from PIL import Image

    img = Image.open(io.BytesIO(png)).convert("RGB")
    img.thumbnail((200, 200))
    return len(img.getcolors(maxcolors=1 << 16) or range(1 << 16))


def test_pick_a_node_on_the_map_run_and_read_the_job(browser, server, tmp_path):  # noqa: F811
    page = sign_in(browser, server, "engineer")
    page.click("#nav-new")
    page.click("#process-capacity-demonstration")
    page.select_option("#model", "synthetic-50")
    page.wait_for_selector("#map svg [data-node='MH0003']")
    assert page.locator("#map svg circle[data-node]").count() >= 50
    page.click("#map svg [data-node='MH0003']")
    assert page.input_value("#connections") == "MH0003="
    page.fill("#connections", "MH0003=5000")
    page.fill("#storm", "type2:2.1in")
    form_png = page.locator("#map").screenshot(path=str(tmp_path / "form-map.png"))
    assert _colours(form_png) > 3, "the model's map is drawn"
    page.click("#run")
    page.wait_for_url(re.compile(r".*/ui/jobs/[0-9a-f]{32}$"))
    page.wait_for_selector("#verdict", timeout=JOB_WAIT_MS)
    assert page.inner_text("#verdict") == "PASS"
    page.wait_for_selector("#map svg")
    assert page.locator("#map svg [data-link]").count() > 0
    map_png = page.locator("#map").screenshot(path=str(tmp_path / "job-map.png"))
    assert _colours(map_png) > 3, "the result map is drawn"
    checks_png = page.locator("#checks").screenshot(path=str(tmp_path / "checks.png"))
    assert _colours(checks_png) > 2 and page.locator("#checks tbody tr").count() >= 3
    assert page.locator("#inputs tr").count() >= 3 and "MH0003 = 5,000 gpd" in page.inner_text("#inputs")
    page.screenshot(path=str(tmp_path / "job.png"), full_page=True)
    with page.expect_download() as dl:
        page.click("#checks-csv")
    assert dl.value.suggested_filename.endswith(".csv")
    assert Path(dl.value.path()).read_text().startswith("result,criterion")
    page.context.close()


def test_upload_a_model_with_its_file_from_the_form(browser, server, tmp_path):  # noqa: F811
    (tmp_path / "m").mkdir()
    inp, rain = tmp_path / "m" / "external-files.inp", tmp_path / "m" / "rain.dat"
    inp.write_bytes((MODELS / "external-files.inp").read_bytes().replace(b'"rain data/rain.dat"', b"rain.dat"))
    rain.write_bytes((MODELS / "rain data" / "rain.dat").read_bytes())
    page = sign_in(browser, server, "engineer")
    page.goto(f"{server.url}/ui/processes/capacity-demonstration")
    page.set_input_files("#files", [str(inp), str(rain)])
    page.click("#upload")
    page.wait_for_url(re.compile(r".*uploaded=.*"))
    chosen = page.eval_on_selector("#model", "s => s.options[s.selectedIndex].text")
    assert chosen.startswith("external-files.inp")
    assert page.locator("input[name=model_files]:checked").count() == 1
    page.wait_for_selector("#map svg")  # this model has no [COORDINATES]: the map says so
    assert "no coordinates" in page.inner_text("#map").lower() or page.locator("#map svg text").count() >= 1
    page.fill("#connections", "J1=5000")
    page.click("#run")
    page.wait_for_url(re.compile(r".*/ui/jobs/[0-9a-f]{32}$"))
    page.wait_for_selector("#verdict", timeout=JOB_WAIT_MS)
    assert "external-files.inp (upload" in page.inner_text("#inputs")
    page.context.close()


def test_progress_moves_and_the_owner_cancels(browser, server, tmp_path):  # noqa: F811
    page = sign_in(browser, server, "engineer")
    page.goto(f"{server.url}/ui/processes/capacity-demonstration")
    page.select_option("#model", "synthetic-500")
    page.fill("#connections", "MH0003=5000")
    page.click("#run")
    page.wait_for_url(re.compile(r".*/ui/jobs/[0-9a-f]{32}$"))
    seen = set()
    for _ in range(120):  # the page reloads itself every 2 s while the job runs
        page.wait_for_load_state()
        msg = page.inner_text("#message") if page.locator("#message").count() else ""
        pct = re.findall(r"simulated [\d.]+ of [\d.]+ h \((\d+) %\)", msg)
        seen.update(pct)
        if len(seen) >= 2:
            break
        page.wait_for_timeout(700)
    assert len(seen) >= 2, f"the SWMM progress did not move: {seen}"
    page.screenshot(path=str(tmp_path / "running.png"))
    assert page.locator("#engine-runs tr.engine-run").count() >= 1 or page.locator("#progress").count() == 1
    page.click("#cancel")
    page.wait_for_selector("#notice")
    page.wait_for_function("document.querySelector('#status').textContent === 'dismissed'", timeout=60_000)
    assert page.locator("#cancel").count() == 0
    page.context.close()
