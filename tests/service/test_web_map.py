"""The network maps of the web pages through real HTTP (capacitysim.service.web_map): the model map of a bundled
model and of an upload (another user's upload is a 404, journaled), the result map of a capacity job (another
engineer's job answered as the job page answers it), the headers, and the script."""

from __future__ import annotations

import contextlib
import re
import xml.etree.ElementTree as ET

import pytest

from support import problem_ok, wait_final

from capacitysim.io.bundled import model_path

pytestmark = [pytest.mark.server]

SVG = "{http://www.w3.org/2000/svg}"
ASYNC = {"Prefer": "respond-async"}
EVIL = '<script>"x'


@contextlib.contextmanager
def sign_in(server, role):
    """A client signed in on the web pages as ``role`` (the sign-in form with its CSRF token, as test_web.py)."""
    import httpx

    with httpx.Client(base_url=server.url, timeout=300, follow_redirects=False) as c:
        page = c.get("/ui/login")
        assert page.status_code == 200
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
        r = c.post("/ui/login", data={"csrf": csrf, "token": server.tokens[role]})
        assert r.status_code == 303 and r.headers["location"] == "/ui", r.text
        yield c


def _svg(r) -> ET.Element:
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("image/svg+xml")
    assert r.headers["x-content-type-options"] == "nosniff"
    csp = r.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "style-src 'unsafe-inline'" in csp and "script-src" not in csp
    assert "no-store" in r.headers["cache-control"]
    root = ET.fromstring(r.content)
    assert root.tag == f"{SVG}svg"
    return root


def _nodes(root) -> set[str]:
    return {c.get("data-node") for c in root.iter(f"{SVG}circle") if c.get("data-node") is not None}


def test_the_model_map_of_a_bundled_model(server):
    import httpx

    with httpx.Client(base_url=server.url, timeout=60, follow_redirects=False) as anon:
        r = anon.get("/ui/maps/model", params={"model": "synthetic-50"})
        assert r.status_code in (303, 401) and "<svg" not in r.text
        if r.status_code == 303:
            assert r.headers["location"] == "/ui/login"
    with sign_in(server, "engineer") as c:
        root = _svg(c.get("/ui/maps/model", params={"model": "synthetic-50"}))
        nodes = _nodes(root)
        assert len(nodes) == 50 and {"MH0003", "PLANT", "CSO1", "PS1_WW"} <= nodes
        assert len([p for p in root.iter(f"{SVG}polyline") if p.get("data-link")]) == 49
        problem_ok(c.get("/ui/maps/model", params={"model": "no-such-model"}), 404)
        problem_ok(c.get("/ui/maps/model", params={"model": "../../etc/passwd"}), 404)
        problem_ok(c.get("/ui/maps/model"), 404)


def test_an_upload_is_mapped_for_its_owner_only(server):
    text = model_path("synthetic-50").read_bytes().decode("latin-1").replace("MH0047", EVIL)
    data = text.encode("latin-1")
    with server.client("engineer") as api:
        r = api.post("/uploads", params={"filename": "evil names.inp"}, content=data)
        assert r.status_code == 201, r.text
        ref = r.json()["id"]
    with sign_in(server, "engineer") as c:
        r = c.get("/ui/maps/model", params={"model": ref})
        root = _svg(r)
        assert EVIL in _nodes(root) and "MH0047" not in _nodes(root)
        assert b"<script>" not in r.content and b"&lt;script&gt;&quot;x" in r.content
    with sign_in(server, "engineer2") as c2:
        r = c2.get("/ui/maps/model", params={"model": ref})
        body = problem_ok(r, 404)
        assert b"MH0003" not in r.content and b"<svg" not in r.content and "upload" in body["detail"]
        # an upload of a hash nobody has is the same answer
        problem_ok(c2.get("/ui/maps/model", params={"model": "upload:" + "0" * 64}), 404)
    with server.client("administrator") as admin:
        rows = admin.get("/journal", params={"limit": 500}).json()["journal"]
    assert any(row["action"] == "read uploads" and row["outcome"] == "forbidden" and row["target"] == ref
               for row in rows), [r for r in rows if r["outcome"] == "forbidden"][:5]


def test_the_result_map_of_a_capacity_job(server):
    inputs = {"model": "synthetic-50", "storm": "binghamton-1yr-24h", "connections": [{"node": "MH0020", "gpd": 5000}]}
    with server.client("engineer") as api:
        r = api.post("/processes/capacity-demonstration/execution", json={"inputs": inputs}, headers=ASYNC)
        assert r.status_code == 201, r.text
        job = r.json()["jobID"]
        st = wait_final(api, job)
        assert st["status"] == "successful" and st["verdict"] == "fail", st
        doc = api.get(f"/jobs/{job}/results").json()
    failed = {c["element"] for c in doc["checks"] if c.get("passed") is False}
    with sign_in(server, "engineer") as c:
        root = _svg(c.get(f"/ui/jobs/{job}/map.svg"))
        assert root.get("data-map") == "result"
        assert _nodes(root) == set(doc["geometry"]["nodes"])
        marks = [g for g in root.iter(f"{SVG}g") if g.get("class") in ("marks", "under")]
        ringed = {(e.get("cx"), e.get("cy")) for g in marks for e in g.iter(f"{SVG}circle") if e.get("class") == "fail"}
        haloed = {e.get("points") for g in marks for e in g.iter(f"{SVG}polyline") if e.get("class") == "halo"}
        node_xy = {e.get("data-node"): (e.get("cx"), e.get("cy")) for e in root.iter(f"{SVG}circle") if e.get("data-node")}
        link_pts = {e.get("data-link"): e.get("points") for e in root.iter(f"{SVG}polyline") if e.get("data-link")}
        drawn = {n for n in failed if n in node_xy or n in link_pts}
        assert drawn, failed
        for el in drawn:
            assert node_xy.get(el) in ringed or link_pts.get(el) in haloed, el
        assert [p.get("data-connection") for p in root.iter(f"{SVG}polygon") if p.get("data-connection")] == ["MH0020"]
        problem_ok(c.get(f"/ui/jobs/{'0' * 32}/map.svg"), 404)
        problem_ok(c.get("/ui/jobs/not-a-job/map.svg"), 404)
    with sign_in(server, "engineer2") as c2:
        page = c2.get(f"/ui/jobs/{job}")
        r = c2.get(f"/ui/jobs/{job}/map.svg")
        assert r.status_code == page.status_code and r.status_code in (403, 404)
        assert b"<svg" not in r.content and b"MH0020" not in r.content


def test_the_script(server):
    import httpx

    with httpx.Client(base_url=server.url, timeout=60) as c:  # no sign-in: the script holds no data
        r = c.get("/ui/assets/map.js")
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/javascript")
        assert "max-age" in r.headers["cache-control"] and r.headers["x-content-type-options"] == "nosniff"
        js = r.text
        assert "DOMParser" in js and "image/svg+xml" in js and "importNode" in js and "innerHTML" not in js
        assert 'credentials: "same-origin"' in js and "encodeURIComponent" in js
        assert c.get("/ui/assets/map.js", headers={"If-None-Match": r.headers["etag"]}).status_code == 304
