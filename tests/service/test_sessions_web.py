"""Web sessions are not API tokens (real HTTP on 127.0.0.1, the real SQLite store): the cookie holds a random
session id, never the token; the CSRF token belongs to the session; sign-out ends the session; the idle and
absolute timeouts end it; a revoked user's sessions end; the API takes the cookie for GET only."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import re
import subprocess

import httpx
import pytest
from support import CLI, add_user, problem_ok

from capacitysim.service import auth
from capacitysim.service.app import Limits
from capacitysim.service.store import Store

pytestmark = [pytest.mark.server]

#: The loopback address of this module's clients (a refused cookie counts against its address).
SOURCE = "127.0.0.31"


def _csrf(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)


def _client(server, source: str = SOURCE) -> httpx.Client:
    return httpx.Client(base_url=server.url, timeout=120, follow_redirects=False,
                        transport=httpx.HTTPTransport(local_address=source))


def _sign_in(c: httpx.Client, token: str) -> httpx.Response:
    page = c.get("/ui/login")
    r = c.post("/ui/login", data={"csrf": _csrf(page.text), "token": token})
    assert r.status_code == 303 and r.headers["location"] == "/ui", r.text
    return r


@contextlib.contextmanager
def _store(server):
    store = Store(server.data / "service.sqlite")
    try:
        yield store
    finally:
        store.close()


def _row(server, session_id: str) -> dict:
    with _store(server) as store:
        return dict(store.read("SELECT * FROM sessions WHERE id_sha256 = ?", (auth.session_key(session_id),))[0])


def test_the_cookie_is_a_session_id_never_the_token(server):
    token = server.tokens["engineer"]
    with _client(server) as c:
        r = _sign_in(c, token)
        sid = c.cookies["capacitysim_session"]
        assert auth.SESSION_RE.fullmatch(sid) and token not in r.headers["set-cookie"] and sid not in token
        cookie = r.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie and "path=/" in cookie
        row = _row(server, sid)  # the store has the id's SHA-256, the user, the client's address
        assert row["ended_at"] is None and row["client"] == SOURCE
        with _store(server) as store:
            assert sid not in str([dict(x) for x in store.read("SELECT * FROM sessions")])
            assert store.read("SELECT name FROM users WHERE id = ?", (row["user_id"],))[0]["name"] == server.names["engineer"]
        # the API reads with the cookie (GET), changes nothing with it
        assert c.get("/whoami").json()["name"] == server.names["engineer"]
        problem_ok(c.post("/processes/credits-quantification/execution",
                          json={"inputs": {"project": "oak-street-sump-and-manholes"}}), 401)
    # the token in the cookie (as before sessions) is no session: refused
    with _client(server) as c:
        c.cookies.set("capacitysim_session", token)
        assert c.get("/ui").headers["location"] == "/ui/login"
        problem_ok(c.get("/whoami"), 401)


def test_the_csrf_token_belongs_to_the_session(server):
    with _client(server) as a, _client(server) as b:
        _sign_in(a, server.tokens["engineer"])
        _sign_in(b, server.tokens["engineer"])  # the same user, another session
        csrf_a, csrf_b = _csrf(a.get("/ui").text), _csrf(b.get("/ui").text)
        assert csrf_a != csrf_b
        with _store(server) as store:
            key_id = store.user_by_name(server.names["engineer"])["key_id"]
        assert csrf_a == hmac.new((server.data / "secret").read_bytes(),
                                  f"csrf:{auth.session_key(a.cookies['capacitysim_session'])}".encode(),
                                  hashlib.sha256).hexdigest()
        assert key_id not in csrf_a
        # session A's token is refused with session B's cookie
        form = {"model": "synthetic-50", "storm": "binghamton-1yr-24h", "connections": "MH0003=5000"}
        problem_ok(b.post("/ui/submit", data=form | {"csrf": csrf_a}), 403)
        problem_ok(b.post("/ui/logout", data={"csrf": csrf_a}), 403)
        assert b.get("/ui").status_code == 200  # B still signed in


def test_sign_out_ends_the_session_and_a_new_sign_in_ends_the_old_one(server):
    with _client(server) as c:
        _sign_in(c, server.tokens["reviewer"])
        first = c.cookies["capacitysim_session"]
        _sign_in(c, server.tokens["reviewer"])  # signing in again: a new session, the old one ended
        second = c.cookies["capacitysim_session"]
        assert second != first and _row(server, first)["end_reason"] == "signed in again"
        csrf = _csrf(c.get("/ui").text)
        problem_ok(c.post("/ui/logout", data={}), 403)  # no CSRF token: nothing done
        assert c.get("/ui").status_code == 200
        r = c.post("/ui/logout", data={"csrf": csrf})
        assert r.status_code == 303 and r.headers["location"] == "/ui/login"
        assert 'capacitysim_session=""' in r.headers["set-cookie"] or "max-age=0" in r.headers["set-cookie"].lower()
        assert _row(server, second)["end_reason"] == "sign-out"
    with _client(server) as old:  # the ended session's cookie, replayed
        old.cookies.set("capacitysim_session", second)
        assert old.get("/ui").headers["location"] == "/ui/login"
        problem_ok(old.get("/whoami"), 401)
    with server.client("administrator") as adm:
        rows = adm.get("/journal", params={"limit": 500}).json()["journal"]
        assert any(x["action"] == "sign-out" and x["user_name"] == server.names["reviewer"] for x in rows)


def test_idle_and_absolute_timeouts_end_the_session(server):
    lim = Limits()  # the session test server runs with the default session policies
    with _client(server) as idle, _client(server) as old:
        _sign_in(idle, server.tokens["municipal"])
        _sign_in(old, server.tokens["municipal"])
        assert idle.get("/ui").status_code == 200 and old.get("/ui").status_code == 200
        with _store(server) as store, store.tx() as c:  # as if the policies' time had passed (the database's clock)
            c.execute("UPDATE sessions SET last_seen_s = last_seen_s - ? WHERE id_sha256 = ?",
                      (lim.session_idle_s + 5, auth.session_key(idle.cookies["capacitysim_session"])))
            c.execute("UPDATE sessions SET created_s = created_s - ? WHERE id_sha256 = ?",
                      (lim.session_absolute_s + 5, auth.session_key(old.cookies["capacitysim_session"])))
        sid_idle, sid_old = idle.cookies["capacitysim_session"], old.cookies["capacitysim_session"]
        r = idle.get("/ui")
        assert r.headers["location"] == "/ui/login" and "capacitysim_session" in r.headers.get("set-cookie", "")
        problem_ok(old.get("/whoami"), 401)
        assert _row(server, sid_idle)["end_reason"] == "idle timeout"
        assert _row(server, sid_old)["end_reason"] == "absolute timeout"


def test_a_revoked_users_sessions_end(server):
    token = add_user(server.data, "Session Revokee", "reviewer")
    with _client(server) as c:
        _sign_in(c, token)
        sid = c.cookies["capacitysim_session"]
        assert c.get("/ui").status_code == 200
        r = subprocess.run([*CLI, "users", "revoke", "Session Revokee", "--data", str(server.data)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert c.get("/ui").headers["location"] == "/ui/login"
        problem_ok(c.get("/whoami"), 401)
        assert _row(server, sid)["end_reason"] == "user revoked"
