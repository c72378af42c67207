"""Uploads belong to their uploader (real HTTP on 127.0.0.1): another user can neither use nor learn of an upload
by its hash (the same 400 "no upload" as for a hash never uploaded), and uploading the same bytes makes a record
of one's own."""

from __future__ import annotations

import hashlib
import uuid

import pytest

from support import problem_ok

from capacitysim.io.bundled import model_path

pytestmark = [pytest.mark.server]

CAP = {"storm": "binghamton-1yr-24h", "connections": [{"node": "MH0003", "gpd": 5000}]}


def _without_hash(body: dict, sha: str) -> dict:
    return {k: (v.replace(sha, "<sha>").replace(sha[:12], "<sha>") if isinstance(v, str) else v) for k, v in body.items()}


def test_another_users_upload_is_no_upload_of_yours(server):
    # bytes of this test alone (a comment line makes the bundled model unique), so no one else uploaded them
    data = model_path("synthetic-50").read_bytes() + f"\n;; test {uuid.uuid4().hex}\n".encode()
    sha = hashlib.sha256(data).hexdigest()
    never = hashlib.sha256(b"never uploaded " + uuid.uuid4().bytes).hexdigest()
    with server.client("engineer") as eng, server.client("engineer2") as eng2, server.client("administrator") as adm:
        mine = eng.post("/uploads", params={"filename": "private.inp"}, content=data)
        assert mine.status_code == 201 and mine.json()["sha256"] == sha
        r = eng.post("/processes/capacity-demonstration/execution", json={"inputs": CAP | {"model": f"upload:{sha}"}})
        assert r.status_code == 200, r.text  # the uploader uses it
        # another engineer, even an administrator: the same answer as for a hash nobody uploaded
        for c in (eng2, adm):
            theirs = problem_ok(c.post("/processes/capacity-demonstration/execution",
                                       json={"inputs": CAP | {"model": f"upload:{sha}"}}), 400)
            nobody = problem_ok(c.post("/processes/capacity-demonstration/execution",
                                       json={"inputs": CAP | {"model": f"upload:{never}"}}), 400)
            assert theirs["field"] == "inputs.model" and "no upload" in theirs["detail"]
            assert _without_hash(theirs, sha) == _without_hash(nobody, never)
        # the same bytes uploaded by another user: a record of their own (their file name), and then theirs to use
        again = eng2.post("/uploads", params={"filename": "mine too.inp"}, content=data)
        assert again.status_code == 201
        assert again.json() == {"id": f"upload:{sha}", "sha256": sha, "filename": "mine_too.inp", "size_bytes": len(data)}
        assert eng.post("/uploads", params={"filename": "private.inp"}, content=data).json()["filename"] == "private.inp"
        r = eng2.post("/processes/capacity-demonstration/execution", json={"inputs": CAP | {"model": f"upload:{sha}"}})
        assert r.status_code == 200, r.text
        rows = adm.get("/journal", params={"limit": 2000}).json()["journal"]
        uploaders = {x["user_name"] for x in rows if x["action"] == "upload" and x["target"] == sha}
        assert uploaders == {server.names["engineer"], "Second Engineer"}


def test_the_web_form_resolves_only_ones_own_uploads(server):
    """The web page's submission goes through the same per-user resolution (prepare with the user's uploads)."""
    import re

    import httpx

    data = f"date,flow_mgd\n2024-01-01,0.5\n;{uuid.uuid4().hex}\n".encode()
    with server.client("engineer") as eng:
        sha = eng.post("/uploads", params={"filename": "x.inp"}, content=data).json()["sha256"]
    with httpx.Client(base_url=server.url, timeout=60, follow_redirects=False) as w:
        page = w.get("/ui/login")
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
        w.post("/ui/login", data={"csrf": csrf, "token": server.tokens["engineer2"]})
        csrf = re.search(r'name="csrf" value="([^"]+)"', w.get("/ui/processes/capacity-demonstration").text).group(1)
        r = w.post("/ui/submit", data={"csrf": csrf, "model": f"upload:{sha}", "storm": "",
                                       "connections": "MH0003=5000"})
        assert r.status_code == 400 and "no upload" in r.text
