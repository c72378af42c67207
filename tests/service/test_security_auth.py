"""Failed authentications over real HTTP on 127.0.0.1: journaled with the client's address and throttled per
address (policy auth_failures_max per auth_failures_window_s: 429 with Retry-After); a credential of any bad
shape (NUL byte, non-ASCII, overlong, malformed header, bad cookie) is a 401, never a 500, on SQLite and on
PostgreSQL; a 500 says only "internal error, reference <id>" and the server's log has the traceback.

Each test sends its bad credentials from a loopback address of its own (127.0.0.4x), so the throttle it provokes
never reaches the other tests' clients (127.0.0.1)."""

from __future__ import annotations

import re
import socket

import httpx
import pytest
from pg_server import postgres  # noqa: F401 - the session's PostgreSQL server (a fixture)
from support import Server, add_user, free_port, problem_ok

from capacitysim.service.app import Limits

DEFAULTS = Limits()


def _client(server, source: str, **kw) -> httpx.Client:
    return httpx.Client(base_url=server.url, timeout=60, follow_redirects=False,
                        transport=httpx.HTTPTransport(local_address=source), **kw)


def _journal(server) -> list[dict]:
    with server.client("administrator") as adm:
        return adm.get("/journal", params={"limit": 10000}).json()["journal"]


def _login_csrf(c) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', c.get("/ui/login").text).group(1)


@pytest.mark.server
def test_failed_api_authentications_are_journaled_and_throttled_per_address(server):
    source = "127.0.0.41"
    key = server.tokens["engineer"].split(".")[1]
    with _client(server, source) as c:
        for i in range(DEFAULTS.auth_failures_max):
            wrong = f"cs1.{key}.{'A' * 42}{i % 10}"  # the right shape, a wrong secret
            problem_ok(c.get("/whoami", headers={"Authorization": f"Bearer {wrong}"}), 401)
        r = c.get("/whoami", headers={"Authorization": "Bearer cs1.nope"})
        body = problem_ok(r, 429)
        retry = int(r.headers["retry-after"])
        assert 0 < retry <= DEFAULTS.auth_failures_window_s and body["policy"] == "auth_failures_max"
        assert body["limit"] == DEFAULTS.auth_failures_max and source in body["detail"]
        # the address is refused whatever it sends, the right token too, until the window passes
        problem_ok(c.get("/whoami", headers={"Authorization": f"Bearer {server.tokens['engineer']}"}), 429)
        problem_ok(c.get("/ui"), 429)
    with server.client("engineer") as other:  # another address is not affected
        assert other.get("/whoami").status_code == 200
    rows = [x for x in _journal(server) if x["action"] == "authenticate" and x["detail"].get("client") == source]
    assert len(rows) == DEFAULTS.auth_failures_max  # each failure once; the refused (429) requests are not failures
    assert {(x["outcome"], x["role"], x["detail"]["via"], x["detail"]["reason"]) for x in rows} == \
        {("unauthorized", "anonymous", "bearer", "unknown")}


@pytest.mark.server
def test_failed_sign_ins_are_journaled_and_throttled(server):
    source = "127.0.0.42"
    with _client(server, source) as c:
        for i in range(DEFAULTS.auth_failures_max):
            r = c.post("/ui/login", data={"csrf": _login_csrf(c), "token": f"not a token {i}"})
            assert r.status_code == 401 and "not valid" in r.text
        r = c.post("/ui/login", data={"csrf": _login_csrf(c), "token": server.tokens["engineer"]})
        problem_ok(r, 429)
        assert int(r.headers["retry-after"]) > 0
    rows = [x for x in _journal(server) if x["action"] == "sign-in" and x["detail"].get("client") == source]
    assert len(rows) == DEFAULTS.auth_failures_max and {x["detail"]["reason"] for x in rows} == {"malformed"}


def _raw(server, request: bytes) -> int:
    """The status of a raw HTTP/1.1 request (bytes a client library would not send)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as s:
        s.sendall(request)
        head = b""
        while b"\r\n" not in head:
            chunk = s.recv(4096)
            if not chunk:
                break
            head += chunk
    return int(head.split(b" ", 2)[1])


#: Bad credentials in headers (each test case from an address of its own: 127.0.0.50 + its index).
BAD_HEADERS = [
    {"Authorization": b"Bearer cs1.0123456789abcdef." + "\u00e9".encode("latin-1") * 43},
    {"Authorization": b"Bearer \xff\xfe\xfd"},
    {"Authorization": "Bearer " + "A" * 8000},
    {"Authorization": "Bearer"},
    {"Authorization": "Basic dXNlcjpwYXNz"},
    {"Authorization": "bearer cs1.a.b c d"},
    {"Cookie": b"capacitysim_session=" + b"\xe9" * 43},
    {"Cookie": "capacitysim_session=" + "A" * 4000},
    {"Cookie": 'capacitysim_session="quoted;value"'},
    {"Cookie": "capacitysim_session=" + "A" * 42 + "%00"},
    {"Cookie": "capacitysim_session"},
]


@pytest.mark.server
@pytest.mark.parametrize("i", range(len(BAD_HEADERS)))
def test_a_bad_credential_is_401_never_500(server, i):
    h = BAD_HEADERS[i]
    with _client(server, f"127.0.0.{50 + i}") as c:
        for path in ("/whoami", "/jobs"):
            r = c.get(path, headers=h)
            problem_ok(r, 401)
            assert r.headers["www-authenticate"] == "Bearer"
        r = c.get("/ui", headers=h)
        assert r.status_code == 303 and r.headers["location"] == "/ui/login", h


@pytest.mark.server
def test_a_bad_sign_in_is_401_and_bytes_no_client_sends_are_never_500(server):
    with _client(server, "127.0.0.45") as c:
        for token in ("cs1.0123456789abcdef.\x00" + "A" * 42, "\x00", server.tokens["engineer"] + "\x00",
                      "çs1." + server.tokens["engineer"][4:], "\ud7ff" * 100, "x" * 100_000):
            r = c.post("/ui/login", data={"csrf": _login_csrf(c), "token": token})
            assert r.status_code == 401 and "not valid" in r.text, (token[:20], r.status_code)
        # the token as a file part of a multipart form, or no token at all
        r = c.post("/ui/login", data={"csrf": _login_csrf(c)}, files={"token": ("t.txt", b"cs1", "text/plain")})
        assert r.status_code == 401
        r = c.post("/ui/login", data={"csrf": _login_csrf(c)})
        assert r.status_code == 401
    # a NUL byte or a raw non-ASCII byte in a header: refused by the HTTP parser before the application (400)
    assert _raw(server, b"GET /whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\x00b\r\n\r\n") == 400
    assert _raw(server, b"GET /ui HTTP/1.1\r\nHost: x\r\nCookie: capacitysim_session=\x00\r\n\r\n") == 400
    with server.client("engineer") as c:  # a NUL in a path is no job (404), never a query of the database
        problem_ok(c.get("/jobs/" + "0" * 31 + "%00"), 404)
        problem_ok(c.get("/jobs/%00/results"), 404)


@pytest.mark.server
def test_a_500_says_only_internal_error_and_a_reference(server):
    from pathlib import Path

    from capacitysim.service.store import Store

    with server.client("engineer") as c:
        r = c.post("/processes/credits-quantification/execution", json={"inputs": {"project": "oak-street-sump-and-manholes"}})
        assert r.status_code == 200, r.text
        job = r.headers["Location"].rsplit("/", 1)[1]
        store = Store(server.data / "service.sqlite")
        try:
            result = Path(store.job(job)["result_path"])
        finally:
            store.close()
        result.unlink()  # the record says successful, the document is gone: the handler fails
        r = c.get(f"/jobs/{job}/results")
        body = problem_ok(r, 500)
        ref = body["reference"]
        assert body["detail"] == f"internal error, reference {ref} (the server's log has the details)"
        assert "Error" not in r.text and str(result.parent) not in r.text and result.name not in r.text
    log = server.log_text()
    assert f"internal error, reference {ref}" in log and "FileNotFoundError" in log.split(ref, 1)[1]


@pytest.fixture()
def pg_served(postgres, tmp_path, monkeypatch):  # noqa: F811
    """A server on a PostgreSQL store (which refuses NUL bytes in text: a NUL that reached it was a 500)."""
    monkeypatch.setenv("CAPACITYSIM_DATABASE_URL", postgres.new_database())
    data = tmp_path / "data"
    tokens = {"administrator": add_user(data, "Ada Lee", "administrator"),
              "engineer": add_user(data, "Eve Ng", "engineer")}
    srv = Server(data, free_port(), workers=1, tokens=tokens).start()
    yield srv
    srv.stop()


@pytest.mark.postgres
def test_bad_credentials_and_nul_bytes_on_postgresql_are_never_500(pg_served):
    srv = pg_served
    with _client(srv, "127.0.0.46") as c:
        for h in ({"Authorization": "Bearer cs1.0123456789abcde\x7f.x"},
                  {"Authorization": b"Bearer cs1.\xe9\xe9.x"}, {"Cookie": b"capacitysim_session=" + b"\xe9" * 43}):
            problem_ok(c.get("/whoami", headers=h), 401)
        for token in ("cs1.0123456789abcdef.\x00" + "A" * 42, "cs1.\x00\x00.x"):
            r = c.post("/ui/login", data={"csrf": _login_csrf(c), "token": token})
            assert r.status_code == 401, r.text
        r = c.post("/ui/login", data={"csrf": _login_csrf(c), "token": srv.tokens["administrator"]})
        assert r.status_code == 303
        assert c.get("/ui/jobs/" + "0" * 31 + "%00").status_code == 404
        csrf = re.search(r'name="csrf" value="([^"]+)"', c.get("/ui").text).group(1)
        r = c.post("/ui/bank/sign-off", data={"csrf": csrf, "kind": "deposit", "id": "\x00" * 32, "decision": "approve"})
        assert r.status_code < 500, r.text
    with srv.client("administrator") as adm:
        problem_ok(adm.get("/jobs/%00" + "0" * 31), 404)
        r = adm.post("/bank/withdrawals/APP%00-1/sign-off", json={"decision": "approve"})
        assert r.status_code < 500, r.text
        assert adm.get("/journal").status_code == 200


def test_the_throttle_forgets_failures_older_than_the_window():
    """auth.Throttle with its own clock: refused at the limit, free again once the oldest failure of the window
    has left it; addresses apart; the memory bounded by max_addresses."""
    from capacitysim.service.auth import Throttle

    now = [1000.0]
    t = Throttle(3, 60.0, max_addresses=5, clock=lambda: now[0])
    for dt in (0, 10, 20):
        now[0] = 1000.0 + dt
        assert t.retry_after("a") is None
        t.fail("a")
    assert t.retry_after("a") == 40 and t.retry_after("b") is None  # until 1000 + 60
    now[0] = 1060.5
    assert t.retry_after("a") is None  # the first failure left the window: 2 remain
    t.fail("a")
    assert t.retry_after("a") == 10  # until 1010 + 60
    for k in range(10):
        t.fail(f"x{k}")
    assert len(t._failures) == 5 and t.retry_after("a") is None  # the oldest addresses forgotten first
