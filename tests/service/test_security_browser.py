"""The second wall around a job's HTML report, in Debian's Chromium (Playwright): a report file that holds a
script (planted straight into the job's folder, as if a report had been made to carry one) is served sandboxed,
so the administrator who opens it signed in runs nothing: the script's requests never reach the server and the
pending transfer it would approve stays pending. The same page served without the report's policy (a control)
does approve a transfer: the script is a real attack. And the policy keeps what real reports embed (inline CSS,
``data:`` PNGs, inline SVG with its own style).

Skipped when the ``playwright`` package or ``/usr/bin/chromium`` is absent (``.ci/run`` installs both).
"""

from __future__ import annotations

import base64
import re
import time
import uuid
import zlib

import pytest
from browser_support import browser, sign_in  # noqa: F401 - browser is a fixture
from support import wait_final

from capacitysim.service.app import REPORT_CSP
from capacitysim.service.demo import BASIN, MUNICIPAL

pytestmark = [pytest.mark.server, pytest.mark.browser]

#: How long a page is given for its script to act (a wait, not a measured threshold) [s].
SCRIPT_WAIT_S = 3.0

#: The planted report: a script that reads the bank page for the session's CSRF token and approves a transfer,
#: signalling through the page's title and a marked request; an inline handler and an SVG onload as well.
ATTACK = """<!doctype html><html><head><meta charset="utf-8"><title>Capacity report</title></head><body>
<h1>Capacity demonstration</h1><p>Verdict: PASS</p>
<img src="data:," onerror="document.title='HANDLER-RAN'; fetch('/whoami?planted=MARK-handler')">
<svg onload="fetch('/whoami?planted=MARK-svg')"></svg>
<script>
document.title = "PLANTED-RAN";
(async () => {
  await fetch("/whoami?planted=MARK");
  const page = await (await fetch("/ui/bank", {credentials: "include"})).text();
  const csrf = page.match(/name="csrf" value="([^"]+)"/)[1];
  const body = new URLSearchParams({csrf: csrf, kind: "transfer", id: "TRANSFER", decision: "approve", note: "planted"});
  const r = await fetch("/ui/bank/sign-off", {method: "POST", body: body, credentials: "include", redirect: "manual"});
  document.title = "PLANTED-DONE " + r.status;
})();
</script></body></html>
"""


def _png(rgb=(200, 30, 30), size=4) -> str:
    """A small PNG, as a base64 ``data:`` URI (what capacitysim.report.html embeds)."""
    def chunk(kind, data):
        return (len(data).to_bytes(4, "big") + kind + data
                + zlib.crc32(kind + data).to_bytes(4, "big"))
    raw = b"".join(b"\x00" + bytes(rgb) * size for _ in range(size))
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", size.to_bytes(4, "big") * 2 + b"\x08\x02\x00\x00\x00")
           + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    return "data:image/png;base64," + base64.b64encode(png).decode()


#: What reports embed (capacitysim.report: a <style> of the page, data: PNG figures; the headroom report's inline
#: SVG with its own <style>, clip paths by url(#id) and inline style attributes).
BENIGN = f"""<!doctype html><html><head><meta charset="utf-8"><title>benign</title>
<style>h1 {{ color: rgb(10, 20, 30); }}</style></head><body><h1>Report</h1>
<figure><img id="fig" alt="figure" src="{_png()}"></figure>
<svg width="40" height="40" style="max-width:100%"><style>.bar {{ fill: rgb(40, 50, 60); }}</style>
<defs><clipPath id="c1"><rect width="20" height="20"/></clipPath></defs>
<rect id="bar" class="bar" width="40" height="40" clip-path="url(#c1)"/></svg>
<p id="styled" style="color: rgb(70, 80, 90)">text</p></body></html>
"""


def _pending_transfer(server, mun, gpd: int) -> str:
    from bank_support import developer

    r = mun.post("/bank/transfers", json={"basin": BASIN, "from_owner": MUNICIPAL, "to_owner": developer(server),
                                          "gpd": gpd, "document": f"bill of sale {uuid.uuid4().hex[:6]}"})
    assert r.status_code == 201, r.text
    return r.json()["transfer"]["transfer"]


def _report_file(server, job_id: str):
    """The file the service serves as the job's report (the store's record of it)."""
    from pathlib import Path

    from capacitysim.service.store import Store

    store = Store(server.data / "service.sqlite")
    try:
        path = store.job(job_id)["report_path"]
    finally:
        store.close()
    assert path, job_id
    return Path(path)


def _a_job_with_a_report(server) -> str:
    with server.client("engineer") as eng:
        r = eng.post("/processes/capacity-demonstration/execution", headers={"Prefer": "respond-async"}, json={
            "inputs": {"model": "synthetic-50", "storm": "binghamton-1yr-24h",
                       "connections": [{"node": "MH0003", "gpd": 1000}]}})
        assert r.status_code == 201, r.text
        st = wait_final(eng, r.json()["jobID"])
        assert st["status"] == "successful", st
        return st["jobID"]


def test_a_script_planted_in_a_report_does_not_run_for_the_signed_in_administrator(browser, server):
    job = _a_job_with_a_report(server)
    mark, control_mark = f"attack-{uuid.uuid4().hex[:8]}", f"control-{uuid.uuid4().hex[:8]}"
    with server.client("municipal") as mun:
        target, control_target = _pending_transfer(server, mun, 11), _pending_transfer(server, mun, 12)
    _report_file(server, job).write_text(ATTACK.replace("MARK", mark).replace("TRANSFER", target), encoding="utf-8")

    page = sign_in(browser, server, "administrator")
    console, requests = [], []
    page.on("console", lambda m: console.append(m.text))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(f"{server.url}/ui/jobs/{job}")
    page.click("#report")  # the job page's link: the report opens in the signed-in session
    page.wait_for_url(f"{server.url}/jobs/{job}/report")
    assert "Verdict: PASS" in page.content()
    time.sleep(SCRIPT_WAIT_S)
    assert page.title() == "Capacity report"  # neither the script nor the handler ran
    assert [u for u in requests if "planted=" in u or "/ui/bank" in u] == []
    assert any("sandboxed" in t and "allow-scripts" in t for t in console), console  # Chromium says why

    # the control: the same page from the same origin without the report's policy runs, and approves a transfer
    control = ATTACK.replace("MARK", control_mark).replace("TRANSFER", control_target)
    page.route(f"{server.url}/control-page",
               lambda route: route.fulfill(status=200, content_type="text/html; charset=utf-8", body=control))
    page.goto(f"{server.url}/control-page")
    page.wait_for_function("document.title.startsWith('PLANTED-DONE')", timeout=30_000)
    assert page.title() == "PLANTED-DONE 0"  # the sign-off answered (an opaque redirect: 303 to /ui/bank)
    page.context.close()

    log = server.log_text()
    assert f"planted={control_mark}" in log and f"planted={mark}" not in log  # the planted requests never arrived
    with server.client("reviewer") as rev:
        assert rev.get(f"/bank/transfers/{target}").json()["signoff_status"] == "pending"
        assert rev.get(f"/bank/transfers/{control_target}").json()["signoff_status"] == "signed-off"
    with server.client("administrator") as adm:
        rows = adm.get("/journal", params={"limit": 2000}).json()["journal"]
        assert [r for r in rows if r["target"] == target and r["action"].startswith("sign")] == []


def test_the_reports_policy_keeps_what_reports_embed(browser, server):
    job = _a_job_with_a_report(server)
    page = sign_in(browser, server, "engineer")
    console = []
    page.on("console", lambda m: console.append(m.text))
    # a real capacity report: its figures (data: PNGs) load under the policy
    r = page.goto(f"{server.url}/jobs/{job}/report")
    assert r.headers["content-security-policy"] == REPORT_CSP and r.headers["x-frame-options"] == "DENY"
    sizes = page.locator("img").evaluate_all("imgs => imgs.map(i => i.complete && i.naturalWidth)")
    assert len(sizes) >= 3 and all(w > 0 for w in sizes), sizes
    # what else reports hold: a page <style>, inline style attributes, an inline SVG with its <style> and clip path
    _report_file(server, job).write_text(BENIGN, encoding="utf-8")
    page.goto(f"{server.url}/jobs/{job}/report")
    assert page.locator("#fig").evaluate("i => i.naturalWidth") == 4
    assert page.locator("h1").evaluate("e => getComputedStyle(e).color") == "rgb(10, 20, 30)"
    assert page.locator("#bar").evaluate("e => getComputedStyle(e).fill") == "rgb(40, 50, 60)"
    assert page.locator("#styled").evaluate("e => getComputedStyle(e).color") == "rgb(70, 80, 90)"
    assert not [t for t in console if re.search(r"Content Security Policy|Refused", t)], console
    page.context.close()
