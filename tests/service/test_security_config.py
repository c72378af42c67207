"""How ``capacitysim serve`` is set up (real HTTP on 127.0.0.1): uvicorn's access log on; the OpenAPI document
behind a token and no /docs page; links and Location headers from the base URL (``--base-url``), never from a
forged Host header; the store, the bank and the secret mode 0600; bad ``--limit`` and ``--base-url`` values
refused naming the option."""

from __future__ import annotations

import re
import stat
import subprocess
import uuid

import httpx
import pytest
from support import CLI, Server, free_port, problem_ok, seeded, wait_final

pytestmark = [pytest.mark.server]

FORGED = {"Host": "evil.example", "X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "https",
          "Forwarded": "host=evil.example;proto=https"}


def _hrefs(obj) -> list[str]:
    """Every ``href`` of a document, however deep."""
    if isinstance(obj, dict):
        own = [obj["href"]] if isinstance(obj.get("href"), str) else []
        return own + [h for v in obj.values() for h in _hrefs(v)]
    if isinstance(obj, list):
        return [h for v in obj for h in _hrefs(v)]
    return []


def test_the_access_log_names_each_request(server):
    mark = uuid.uuid4().hex
    with server.client("reviewer") as c:
        assert c.get("/whoami", params={"mark": mark}).status_code == 200
    problem_ok(server.client(None).get("/jobs", params={"mark": mark}), 401)
    log = server.log_text()
    assert re.search(rf'127\.0\.0\.1:\d+ - "GET /whoami\?mark={mark} HTTP/1\.1" 200', log)
    assert re.search(rf'"GET /jobs\?mark={mark} HTTP/1\.1" 401', log)
    assert server.tokens["reviewer"] not in log  # the access log has no credentials


def test_the_openapi_document_needs_a_token_and_there_is_no_docs_page(server):
    problem_ok(server.client(None).get("/openapi.json"), 401)
    with server.client("reviewer") as c:
        doc = c.get("/openapi.json").json()
        assert doc["components"]["securitySchemes"]["bearer"] == {
            "type": "http", "scheme": "bearer", "description": doc["components"]["securitySchemes"]["bearer"]["description"]}
        for path in ("/docs", "/redoc", "/docs/oauth2-redirect"):
            problem_ok(c.get(path), 404)


def test_links_and_locations_never_come_from_the_host_header(server):
    with server.client("engineer", headers=FORGED) as c:
        docs = [c.get(p).json() for p in ("/", "/processes", "/processes/spdes-check", "/jobs")]
        r = c.post("/processes/credits-quantification/execution", headers={"Prefer": "respond-async"},
                   json={"inputs": {"project": "oak-street-sump-and-manholes"}})
        assert r.status_code == 201 and r.headers["location"].startswith(f"{server.url}/jobs/")
        job = wait_final(c, r.json()["jobID"])
        docs += [r.json(), job, c.get(f"/jobs/{job['jobID']}").json()]
        hrefs = [h for d in docs for h in _hrefs(d)]
        assert len(hrefs) > 20 and all(h.startswith(server.url + "/") for h in hrefs), hrefs
        r = c.post("/processes/credits-quantification/execution", json={"inputs": {"project": "oak-street-sump-and-manholes"}})
        assert r.status_code == 200 and r.headers["location"].startswith(f"{server.url}/jobs/")
        # no redirect is built from the request either: a trailing slash is no route (404), not a redirect
        r = c.get("/processes/", follow_redirects=False)
        assert r.status_code == 404 and "location" not in r.headers
        assert "evil.example" not in c.get("/processes").text


def test_the_store_the_bank_and_the_secret_are_private(server):
    files = ["service.sqlite", "bank.sqlite", "secret"]
    files += [f.name for f in server.data.glob("*.sqlite-*")]
    for name in files:
        mode = stat.S_IMODE((server.data / name).stat().st_mode)
        assert mode == 0o600, (name, oct(mode))


@pytest.fixture(scope="module")
def based(tmp_path_factory):
    """A server whose clients reach it at another address (a reverse proxy's, with https and a prefix)."""
    data = tmp_path_factory.mktemp("based")
    out = seeded(data)
    srv = Server(data, free_port(), workers=1, tokens=out["tokens"],
                 args=["--base-url", "https://capacity.example.test/cs/"]).start()
    yield srv
    srv.stop()


def test_links_follow_base_url_and_the_session_cookie_is_secure(based):
    base = "https://capacity.example.test/cs"
    with based.client("engineer", headers=FORGED) as c:
        docs = [c.get(p).json() for p in ("/", "/processes", "/processes/headroom")]
        r = c.post("/processes/credits-quantification/execution", headers={"Prefer": "respond-async"},
                   json={"inputs": {"project": "oak-street-sump-and-manholes"}})
        assert r.headers["location"] == f"{base}/jobs/{r.json()['jobID']}"
        hrefs = [h for d in [*docs, r.json()] for h in _hrefs(d)]
        assert hrefs and all(h.startswith(base + "/") for h in hrefs), hrefs
    with httpx.Client(base_url=based.url, timeout=60) as w:
        page = w.get("/ui/login")
        assert "secure" in page.headers["set-cookie"].lower()
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
        # httpx keeps a Secure cookie from a plain-http server: sent by hand, as a browser behind the https proxy would
        r = w.post("/ui/login", data={"csrf": csrf, "token": based.tokens["engineer"]},
                   headers={"Cookie": f"capacitysim_login_csrf={csrf}"}, follow_redirects=False)
        assert r.status_code == 303
        assert "secure" in r.headers["set-cookie"].lower() and "httponly" in r.headers["set-cookie"].lower()


@pytest.mark.parametrize(("args", "named"), [
    (["--limit", "max_sync_waits=0"], "--limit max_sync_waits: 0 is not allowed; allowed: a whole number"),
    (["--limit", "max_jobs=3"], "--limit: 'max_jobs=3' is not allowed; allowed: NAME=VALUE with NAME one of"),
    (["--limit", "session_idle_s=soon"], "--limit session_idle_s: 'soon' is not allowed"),
    (["--limit", "sync_wait_s=inf"], "--limit sync_wait_s: inf is not allowed; allowed: a positive number of seconds"),
    (["--base-url", "ftp://capacity.example"], "--base-url: 'ftp://capacity.example' is not allowed"),
    (["--base-url", "https://u:p@capacity.example/"], "--base-url:"),
    (["--base-url", "http://capacity.example/?x=1"], "--base-url:"),
])
def test_bad_policies_and_base_urls_are_refused_naming_the_option(tmp_path, args, named):
    r = subprocess.run([*CLI, "serve", "--data", str(tmp_path), "--port", str(free_port()), *args],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and named in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
