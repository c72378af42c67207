"""The body limits over real HTTP on 127.0.0.1 (policies max_body_bytes = 1 MiB, max_upload_bytes = 50 MiB): a
Content-Length past the limit is answered 413 before any byte of the body is read, a chunked body as soon as it
passes the limit, on every route (the API, /uploads, the web forms), always as a JSON problem naming the policy."""

from __future__ import annotations

import json
import socket

import pytest

from support import problem_ok

from capacitysim.service.app import Limits

pytestmark = [pytest.mark.server]

LIM = Limits()


def _head_only(server, path: str, length: int, extra: str = "") -> tuple[int, dict]:
    """Send only the request's head, announcing ``length`` bytes of body, and read the answer (the server must not
    wait for the body: a wait would time out here)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=20) as s:
        s.sendall((f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{extra}"
                   f"Content-Length: {length}\r\n\r\n").encode())
        data = b""
        while b"\r\n\r\n" not in data:
            data += s.recv(65536)
        head, body = data.split(b"\r\n\r\n", 1)
        fields = dict(line.split(b": ", 1) for line in head.split(b"\r\n")[1:])
        while len(body) < int(fields[b"content-length"]):
            body += s.recv(65536)
    return int(head.split(b" ", 2)[1]), json.loads(body)


def _chunks(total: int, size: int = 64 * 1024):
    sent = 0
    while sent < total:
        n = min(size, total - sent)
        sent += n
        yield b" " * n


def test_a_content_length_past_the_limit_is_413_before_the_body_is_read(server):
    auth = f"Authorization: Bearer {server.tokens['engineer']}\r\n"
    status, body = _head_only(server, "/processes/credits-quantification/execution", LIM.max_body_bytes + 1, auth)
    assert status == 413 and body["policy"] == "max_body_bytes" and body["limit"] == LIM.max_body_bytes
    status, body = _head_only(server, "/uploads", LIM.max_upload_bytes + 1, auth)
    assert status == 413 and body["policy"] == "max_upload_bytes" and body["limit"] == LIM.max_upload_bytes
    status, body = _head_only(server, "/ui/login", 10 * LIM.max_body_bytes)  # a form, nobody signed in
    assert status == 413 and body["policy"] == "max_body_bytes"
    status, body = _head_only(server, "/bank/withdrawals", 2**62, auth)  # absurd lengths too
    assert status == 413


def test_a_chunked_body_is_cut_at_the_limit(server):
    with server.client("engineer") as c:
        r = c.post("/processes/credits-quantification/execution", content=_chunks(LIM.max_body_bytes + 1),
                   headers={"Content-Type": "application/json"})
        body = problem_ok(r, 413)
        assert body["policy"] == "max_body_bytes" and str(LIM.max_body_bytes) in body["detail"]
        r = c.post("/uploads", params={"filename": "big.inp"}, content=_chunks(LIM.max_upload_bytes + 1))
        assert problem_ok(r, 413)["policy"] == "max_upload_bytes"
        r = c.post("/ui/bank/sign-off", content=_chunks(LIM.max_body_bytes + 1),
                   headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert problem_ok(r, 413)["policy"] == "max_body_bytes"
        # a body within the limit is read and judged as usual
        small = json.dumps({"inputs": {"project": "oak-street-sump-and-manholes"}, "x": " " * (LIM.max_body_bytes // 2)})
        r = c.post("/processes/credits-quantification/execution", content=small, headers={"Content-Type": "application/json"})
        assert problem_ok(r, 400)["field"] == "x"
        assert c.get("/whoami").status_code == 200  # the server carries on
