"""Every answer of the service carries the security headers (through real HTTP on 127.0.0.1): ``nosniff``,
``no-store``, no referrer, never framed; a job's HTML report is sandboxed (no script, nothing fetched)."""

from __future__ import annotations

import contextlib
import re

import httpx
import pytest
from support import problem_ok, wait_final

from capacitysim.service.app import DEFAULT_CSP, REPORT_CSP

pytestmark = [pytest.mark.server]


def _secured(r, csp: str | None = DEFAULT_CSP) -> None:
    h = r.headers
    where = (r.request.method, str(r.request.url), r.status_code)
    assert h["x-content-type-options"] == "nosniff", where
    assert h["cache-control"] == "no-store", where
    assert h["referrer-policy"] == "no-referrer", where
    assert h["x-frame-options"] == "DENY", where
    if csp is not None:
        assert h["content-security-policy"] == csp, where
    assert "server" not in h, where  # uvicorn's Server header is off


@contextlib.contextmanager
def _web(server, role):
    with httpx.Client(base_url=server.url, timeout=120) as c:
        page = c.get("/ui/login")
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
        assert c.post("/ui/login", data={"csrf": csrf, "token": server.tokens[role]}).status_code == 303
        yield c


def test_every_api_answer_carries_the_security_headers(server):
    with server.client("engineer") as c:
        r = c.post("/processes/credits-quantification/execution", headers={"Prefer": "respond-async"},
                   json={"inputs": {"project": "oak-street-sump-and-manholes"}})
        _secured(r)
        job = wait_final(c, r.json()["jobID"])
        for path in ("/", "/processes", "/whoami", f"/jobs/{job['jobID']}", f"/jobs/{job['jobID']}/results",
                     "/openapi.json", "/bank/balances"):
            r = c.get(path)
            assert r.status_code == 200, (path, r.text[:200])
            _secured(r)
        r = c.get("/jobs/" + "0" * 32)
        problem_ok(r, 404)
        _secured(r)
        _secured(c.get("/journal"))  # 403 for an engineer
    _secured(server.client(None).get("/whoami"))  # 401, no credentials
    r = server.client("engineer").post("/processes/credits-quantification/execution", content=b"x" * (2 << 20),
                                       headers={"Content-Type": "application/json"})
    assert r.status_code == 413
    _secured(r)


def test_the_report_is_sandboxed_and_every_page_is_secured(server):
    with server.client("engineer") as c:
        r = c.post("/processes/capacity-demonstration/execution", headers={"Prefer": "respond-async"}, json={
            "inputs": {"model": "synthetic-50", "storm": "binghamton-1yr-24h",
                       "connections": [{"node": "MH0003", "gpd": 2000}]}})
        job = wait_final(c, r.json()["jobID"])["jobID"]
        rep = c.get(f"/jobs/{job}/report")
        assert rep.status_code == 200 and rep.headers["content-type"].startswith("text/html")
        _secured(rep, REPORT_CSP)
        assert REPORT_CSP.startswith("sandbox;") and "script-src 'none'" in REPORT_CSP and "img-src data:" in REPORT_CSP
    with _web(server, "engineer") as w:
        for path in ("/ui", "/ui/processes", "/ui/processes/capacity-demonstration", "/ui/bank", f"/ui/jobs/{job}", f"/jobs/{job}/report"):
            r = w.get(path)
            assert r.status_code == 200, path
            _secured(r, None)
            assert "frame-ancestors 'none'" in r.headers["content-security-policy"]
        _secured(w.get(f"/jobs/{job}/report"), REPORT_CSP)  # through the session's cookie too
    with httpx.Client(base_url=server.url, timeout=60) as anon:
        _secured(anon.get("/ui/login"), None)
        _secured(anon.get("/ui", follow_redirects=False), None)  # the redirect to the sign-in page
