"""The store's contract on both backends (a real SQLite file, a real PostgreSQL server): job life cycle, the
append-only journal, unique user names, revocation, and the restart recovery with leases (a live server's job
is never taken; an expired lease's job is taken by exactly one server)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import time
from types import SimpleNamespace

import pytest
from pg_server import postgres  # noqa: F401 - the session's PostgreSQL server (a fixture)

from capacitysim.errors import InputError, RefusedError
from capacitysim.service.auth import new_token, user_for_token
from capacitysim.service.db import parse_database, redact
from capacitysim.service.store import SCHEMA_VERSION, Store

#: How long a test waits for a short lease to run out (a wait, not a measured threshold) [s].
WAIT_S = 60


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request, tmp_path):
    """A new, empty store's location on each backend."""
    if request.param == "sqlite":
        return str(tmp_path / "service.sqlite")
    return request.getfixturevalue("postgres").new_database()


@pytest.fixture()
def make():
    """Open a store (closed at the end of the test: a PostgreSQL store holds a connection pool)."""
    opened = []

    def open_(*args, **kw):
        opened.append(Store(*args, **kw))
        return opened[-1]

    yield open_
    for s in opened:
        s.close()


def _prepared(i: int = 0):
    return SimpleNamespace(process="spdes-check", inputs={"i": i}, files={}, sha256={"flows": "0" * 64})


def _user(store, name="Ann Lee", role="engineer"):
    token, key_id, digest = new_token()
    return store.add_user(name, role, key_id, digest), token


def _actions(store, target=None):
    return [(r["action"], r["target"]) for r in reversed(store.journal_rows()) if target in (None, r["target"])]


@pytest.mark.postgres
def test_schema_version_in_meta(location, make):
    store = make(location)
    assert store.read("SELECT value FROM meta WHERE key = 'schema_version'")[0]["value"] == str(SCHEMA_VERSION)
    make(location)  # opening an existing store again changes nothing
    assert len(store.read("SELECT * FROM meta")) == 1


@pytest.mark.postgres
def test_job_life_cycle(location, make):
    store = make(location)
    u, _ = _user(store)
    job = store.create_job(_prepared(), u, {"capacitysim": "x"})
    j = store.job(job)
    assert (j["status"], j["attempts"], j["owner"], j["inputs"]) == ("accepted", 1, "Ann Lee", {"i": 0})
    assert store.set_running(job, 1, 40, "running") and store.job(job)["progress"] == 40
    assert not store.set_running(job, 2, 50, "another attempt")  # not the attempt that holds the job
    assert not store.finish(job, 2, status="successful", message="done")
    assert store.finish(job, 1, status="successful", message="done", verdict="PASS", result_path="/r.json")
    assert not store.finish(job, 1, status="failed", message="twice")  # a final job stays as it ended
    j = store.job(job)
    assert (j["status"], j["progress"], j["verdict"], j["finished_at"] is not None) == ("successful", 100, "PASS", True)
    assert [r["id"] for r in store.jobs(owner_id=u["id"])] == [job] and store.jobs(status="running") == []
    assert store.read("SELECT id FROM jobs WHERE result_path = ?", ("/r.json",))[0]["id"] == job
    other = store.create_job(_prepared(1), u, {})
    assert store.dismiss(other, u)["status"] == "dismissed"
    assert not store.finish(other, 1, status="successful", message="too late")
    assert _actions(store) == [("add-user", "Ann Lee"), ("submit", job), ("job-successful", job), ("submit", other),
                               ("dismiss", other)]


@pytest.mark.postgres
def test_uploads_belong_to_their_uploader(location, make):
    store = make(location)
    u, _ = _user(store)
    v, _ = _user(store, "Bo Chen")
    first = store.add_upload("a" * 64, "flows.csv", 10, "/x/flows.csv", u)
    again = store.add_upload("a" * 64, "other.csv", 10, "/x/other.csv", u)
    assert again["id"] == first["id"] and (again["filename"], again["path"]) == ("other.csv", "/x/other.csv")  # the last name
    assert len(store.read("SELECT * FROM uploads")) == 1  # one record per uploader and hash
    assert store.upload("a" * 64, v["id"]) is None  # another user's upload of the hash is no upload of theirs
    theirs = store.add_upload("a" * 64, "mine.csv", 10, "/x/mine.csv", v)  # the same bytes: a record of their own
    assert (theirs["uploaded_by"], theirs["filename"]) == (v["id"], "mine.csv")
    assert store.upload("a" * 64, u["id"])["filename"] == "other.csv"


@pytest.mark.postgres
def test_a_users_active_jobs_are_limited_even_when_submitted_at_once(location, make):
    """Policy max_active_jobs_per_user: the count and the insert are one transaction (the user's row locked on
    PostgreSQL), so 8 concurrent submissions against a limit of 3 create exactly 3 jobs."""
    from capacitysim.service.store import ActiveJobsLimit

    stores = [make(location) for _ in range(8)]
    u, _ = _user(stores[0])
    out = []
    barrier = threading.Barrier(len(stores))

    def submit(store, i):
        barrier.wait()
        try:
            out.append(store.create_job(_prepared(i), u, {}, max_active=3))
        except ActiveJobsLimit as exc:
            out.append((exc.active, exc.limit))

    threads = [threading.Thread(target=submit, args=(s, i)) for i, s in enumerate(stores)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(x for x in out if isinstance(x, tuple)) == [(3, 3)] * 5
    assert len(stores[0].jobs(owner_id=u["id"])) == 3
    limited = [r for r in stores[0].journal_rows() if r["outcome"] == "limited"]
    assert len(limited) == 5 and limited[0]["detail"]["policy"] == "max_active_jobs_per_user"
    job = stores[0].jobs(owner_id=u["id"])[0]["id"]  # a job that ends makes room
    stores[0].finish(job, 1, status="successful", message="done")
    assert stores[0].create_job(_prepared(9), u, {}, max_active=3)


@pytest.mark.postgres
def test_web_sessions_time_out_end_and_end_with_their_user(location, make):
    from capacitysim.service.auth import check_session, new_session_id, session_key

    store = make(location)
    u, _ = _user(store)
    sid = new_session_id()
    store.create_session(session_key(sid), u, "127.0.0.9")
    assert sid not in str(store.read("SELECT * FROM sessions"))  # only the id's SHA-256 is stored
    user, sess = check_session(store, sid, idle_s=60, absolute_s=3600)
    assert user["id"] == u["id"] and sess["client"] == "127.0.0.9"
    assert check_session(store, new_session_id(), idle_s=60, absolute_s=3600) == (None, "unknown")
    assert check_session(store, sid + "\x00", idle_s=60, absolute_s=3600) == (None, "malformed")
    assert check_session(store, "é" * 43, idle_s=60, absolute_s=3600) == (None, "malformed")
    # the idle and absolute timeouts, on the database's clock: the session ends, for good
    with store.tx() as c:
        c.execute("UPDATE sessions SET last_seen_s = last_seen_s - 120 WHERE id_sha256 = ?", (session_key(sid),))
    assert check_session(store, sid, idle_s=60, absolute_s=3600) == (None, "idle")
    assert check_session(store, sid, idle_s=3600, absolute_s=3600) == (None, "ended")
    old = new_session_id()
    store.create_session(session_key(old), u, "127.0.0.9")
    with store.tx() as c:
        c.execute("UPDATE sessions SET created_s = created_s - 7200 WHERE id_sha256 = ?", (session_key(old),))
    assert check_session(store, old, idle_s=60, absolute_s=3600) == (None, "absolute")
    # a sign-out ends it; a revoked user's sessions end
    out = new_session_id()
    store.create_session(session_key(out), u, "127.0.0.9")
    assert store.end_session(session_key(out), "sign-out", u) and not store.end_session(session_key(out), "sign-out", u)
    live = new_session_id()
    store.create_session(session_key(live), u, "127.0.0.9")
    assert check_session(store, live, idle_s=60, absolute_s=3600)[0] is not None
    assert store.revoke_user("Ann Lee")["revoked_at"]
    assert check_session(store, live, idle_s=60, absolute_s=3600) == (None, "ended")
    reasons = {r["end_reason"] for r in store.read("SELECT end_reason FROM sessions")}
    assert reasons == {"idle timeout", "absolute timeout", "sign-out", "user revoked"}
    assert [a for a, _ in _actions(store) if a in ("sign-in", "sign-out")] == ["sign-in"] * 3 + ["sign-out", "sign-in"]


@pytest.mark.postgres
def test_a_nul_byte_or_a_lone_surrogate_never_reaches_the_database(location, make):
    """A credential of the wrong shape is refused before any query (PostgreSQL refuses NUL in text: that was a 500);
    a journal target from a request is stored with U+FFFD in place of such characters."""
    from capacitysim.service.auth import check_token

    store = make(location)
    u, token = _user(store)
    for bad in (token + "\x00", token[:-1] + "\x00", "cs1.\x00" + token[4:], token.replace("cs1", "çs1"), token * 10,
                "\ud800" * 20, "cs1." + "\x00" * 16 + "." + "A" * 43, token + "\n"):
        assert check_token(store, bad) == (None, "malformed"), repr(bad)
    assert check_token(store, token)[1] == "ok"
    store.journal("sign off withdrawals", u, "APP\x00-\ud800-1")
    assert store.journal_rows(limit=1)[0]["target"] == "APP\ufffd-\ufffd-1"


@pytest.mark.postgres
def test_journal_is_append_only(location, make):
    store = make(location)
    u, _ = _user(store)
    store.journal("read-report", u, "x")
    before = store.journal_rows()
    for sql in ("UPDATE journal SET action = 'forged'", "DELETE FROM journal"):
        with pytest.raises(Exception, match="append-only"), store.tx() as c:
            c.execute(sql)
    if store.kind == "postgresql":
        with pytest.raises(Exception, match="append-only"), store.tx() as c:
            c.execute("TRUNCATE journal")
    assert store.journal_rows() == before and len(before) == 2


@pytest.mark.postgres
def test_user_names_are_unique_and_revocation_refuses_the_token(location, make):
    store = make(location)
    u, token = _user(store, "Jane Q. Smith")
    with pytest.raises(RefusedError, match="exists already"):
        _user(store, "JANE Q. SMITH", "reviewer")
    assert user_for_token(store, token)["id"] == u["id"]
    out = store.revoke_user("jane q. smith", by={"id": None, "name": "op (test)", "role": "operator"})
    assert out["revoked_at"] and user_for_token(store, token) is None
    assert [r["revoked_at"] for r in store.users()] == [out["revoked_at"]]
    with pytest.raises(RefusedError, match="revoked already"):
        store.revoke_user("Jane Q. Smith")
    with pytest.raises(InputError, match="NAME: no user named 'Nobody'"):
        store.revoke_user("Nobody")
    with pytest.raises(RefusedError):  # a revoked name is not reused
        _user(store, "Jane Q. Smith")
    row = [r for r in store.journal_rows() if r["action"] == "revoke-user"][0]
    assert (row["target"], row["user_name"], row["role"]) == ("Jane Q. Smith", "op (test)", "operator")


@pytest.mark.postgres
def test_concurrent_adds_of_one_name_make_one_user(location, make):
    stores = [make(location) for _ in range(4)]
    results = []

    def add(store):
        try:
            results.append(_user(store, "Bo Chen")[0]["name"])
        except RefusedError as exc:
            results.append(type(exc).__name__)

    threads = [threading.Thread(target=add, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == ["Bo Chen"] + ["RefusedError"] * 3
    assert [r["name"] for r in stores[0].users()] == ["Bo Chen"]


@pytest.mark.postgres
def test_recovery_leaves_a_live_servers_jobs_and_takes_an_expired_lease(location, make):
    a = make(location, lease_s=3600)
    u, _ = _user(a)
    a.register_server()
    job = a.create_job(_prepared(), u, {})
    assert a.set_running(job, 1, 10, "running")
    b = make(location)
    b.register_server()
    assert b.recover(2, startup=True) == ([], []) and b.recover(2) == ([], [])  # a's lease holds
    assert (a.job(job)["status"], a.job(job)["attempts"], a.job(job)["server_id"]) == ("running", 1, a.server_id)
    assert a.recover(2) == ([], [])  # a server never takes its own jobs

    c = make(location, lease_s=0.05)  # a server whose heartbeats stop: its lease runs out
    c.register_server()
    job_c = c.create_job(_prepared(1), u, {})
    c.set_running(job_c, 1, 10, "running")
    deadline = time.monotonic() + WAIT_S
    while next(s for s in b.servers() if s["id"] == c.server_id)["live"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert b.recover(2) == ([job_c], [])
    j = b.job(job_c)
    assert (j["status"], j["attempts"], j["server_id"]) == ("accepted", 2, b.server_id)
    assert c.jobs_moved({job_c: 1}) == [job_c] and a.jobs_moved({job: 1}) == []
    # a job dismissed through another server: its runner learns it at the next beat and stops it
    job_d = a.create_job(_prepared(2), u, {})
    assert a.set_running(job_d, 1, 10, "running")
    b.dismiss(job_d, u)
    assert a.jobs_moved({job: 1, job_d: 1}) == [job_d]
    # the heartbeat renews on its own connection (on PostgreSQL outside the pool)
    assert a.heartbeat() and a.heartbeat()
    assert not c.finish(job_c, 1, status="successful", message="late")  # the old attempt's end is refused
    assert b.finish(job_c, 2, status="successful", message="done")
    detail = [r["detail"] for r in b.journal_rows() if r["action"] == "job-requeued"][0]
    assert (detail["from_server"], detail["by_server"], detail["attempt"]) == (c.server_id, b.server_id, 2)

    # past restart_attempts the job is failed with the reason; a released lease is taken at once
    a.release_server()
    assert b.recover(1) == ([], [job])
    st = b.job(job)
    assert st["status"] == "failed" and st["error"]["type"] == "restart" and "restart_attempts = 1" in st["message"]
    assert _actions(b, job)[-1] == ("job-failed", job)


@pytest.mark.postgres
def test_startup_takes_the_jobs_of_a_dead_process_of_this_host(location, make):
    a = make(location, lease_s=3600)
    u, _ = _user(a)
    a.register_server()
    job = a.create_job(_prepared(), u, {})
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    with a.tx() as c:  # a's record as if it were that (ended) process
        c.execute("UPDATE servers SET pid = ? WHERE id = ?", (int(gone.stdout), a.server_id))
    b = make(location)
    b.register_server()
    assert b.recover(2) == ([], [])  # the periodic sweep goes by the lease alone
    assert b.recover(2, startup=True) == ([job], [])
    assert [r for r in b.servers() if r["id"] == a.server_id][0]["live"] is False
    assert ("server-gone", a.server_id) in _actions(b)


@pytest.mark.postgres
def test_servers_recovering_at_once_take_each_job_once(location, make):
    """Orphaned jobs (no server) and several servers recovering at the same moment: every job is re-queued by
    exactly one of them (PostgreSQL: ``FOR UPDATE SKIP LOCKED``; SQLite: one writer at a time)."""
    first = make(location)
    u, _ = _user(first)
    jobs = {first.create_job(_prepared(i), u, {}) for i in range(30)}
    servers = [make(location) for _ in range(4)]
    for s in servers:
        s.register_server()
    taken: dict[str, list[str]] = {}
    barrier = threading.Barrier(len(servers))

    def sweep(s):
        barrier.wait()
        taken[s.server_id] = s.recover(2)[0]

    threads = [threading.Thread(target=sweep, args=(s,)) for s in servers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    flat = [j for part in taken.values() for j in part]
    assert sorted(flat) == sorted(jobs)  # each exactly once
    for j in jobs:
        rec = first.job(j)
        assert rec["attempts"] == 2 and j in taken[rec["server_id"]]
    assert sum(a == "job-requeued" for a, _ in _actions(first)) == len(jobs)


def test_a_version_1_sqlite_store_is_upgraded(tmp_path, make):
    path = tmp_path / "service.sqlite"
    c = sqlite3.connect(path)
    c.executescript("""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('schema_version', '1');
        CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, name_key TEXT NOT NULL UNIQUE,
            role TEXT NOT NULL, key_id TEXT NOT NULL UNIQUE, token_sha256 TEXT NOT NULL, created_at TEXT NOT NULL,
            revoked_at TEXT);
        CREATE TABLE jobs (id TEXT PRIMARY KEY, process TEXT NOT NULL, owner_id INTEGER NOT NULL REFERENCES users(id),
            status TEXT NOT NULL, progress INTEGER NOT NULL DEFAULT 0, message TEXT NOT NULL DEFAULT '',
            inputs TEXT NOT NULL, files TEXT NOT NULL, input_sha256 TEXT NOT NULL, versions TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 1, created_at TEXT NOT NULL, started_at TEXT, finished_at TEXT,
            updated_at TEXT NOT NULL, verdict TEXT, result_path TEXT, result_sha256 TEXT, report_path TEXT, error TEXT);
        INSERT INTO users VALUES (1, 'Ann Lee', 'ann lee', 'engineer', 'k', 'h', 't', NULL);
        INSERT INTO jobs(id, process, owner_id, status, inputs, files, input_sha256, versions, created_at, updated_at)
            VALUES ('j1', 'spdes-check', 1, 'running', '{}', '{}', '{}', '{}', 't', 't');
    """)
    c.close()
    store = make(path)
    assert store.read("SELECT value FROM meta WHERE key = 'schema_version'")[0]["value"] == str(SCHEMA_VERSION)
    store.register_server()
    assert store.recover(2, startup=True) == (["j1"], [])  # a version-1 job has no server: it is taken
    assert store.job("j1")["server_id"] == store.server_id


@pytest.mark.postgres
def test_a_version_2_store_is_upgraded(location, make):
    """Schema version 3 on a version-2 store (SQLite and PostgreSQL): the ``sessions`` table is made and the uploads
    (one row per SHA-256) become one row per uploader, each its original uploader's."""
    store = make(location)
    u, _ = _user(store)
    v, _ = _user(store, "Bo Chen")
    with store.tx() as c:  # back to version 2's shape
        c.execute("DROP TABLE sessions")
        c.execute("DROP TABLE uploads")
        c.execute("CREATE TABLE uploads (sha256 TEXT PRIMARY KEY, filename TEXT NOT NULL, size_bytes BIGINT NOT NULL,"
                  " path TEXT NOT NULL, uploaded_by BIGINT NOT NULL REFERENCES users(id), uploaded_at TEXT NOT NULL)")
        c.execute("INSERT INTO uploads VALUES (?, 'a.csv', 1, '/a', ?, 't1'), (?, 'b.csv', 2, '/b', ?, 't2')",
                  ("a" * 64, u["id"], "b" * 64, v["id"]))
        c.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    again = make(location)
    assert again.read("SELECT value FROM meta WHERE key = 'schema_version'")[0]["value"] == str(SCHEMA_VERSION) == "3"
    assert again.upload("a" * 64, u["id"])["filename"] == "a.csv" and again.upload("a" * 64, v["id"]) is None
    assert again.upload("b" * 64, v["id"])["path"] == "/b" and again.upload("b" * 64, u["id"]) is None
    assert again.add_upload("a" * 64, "mine.csv", 1, "/a2", v)["filename"] == "mine.csv"
    assert again.read("SELECT COUNT(*) AS n FROM sessions")[0]["n"] == 0


@pytest.mark.parametrize(("value", "why"), [
    ("mysql://u@h/db", "scheme 'mysql'"), ("service.sqlite", "not a database URL"),
    ("postgresql://u@h:99999/db", "not a valid URL"), ("postgresql://u@h:5432/", "names no database"),
    ("postgresql:///db", "names no host"), ("sqlite://", "names no file")])
def test_a_bad_database_url_names_the_option_the_value_and_what_is_allowed(value, why):
    with pytest.raises(InputError) as e:
        parse_database(value, "data")
    msg = str(e.value)
    assert msg.startswith("--database: ") and why in msg and "postgresql://USER" in msg and "sqlite:///" in msg


def test_a_password_is_never_shown():
    assert redact("postgresql://ann:s3cret@db.example:5432/cs") == "postgresql://ann:***@db.example:5432/cs"
    with pytest.raises(InputError) as e:
        parse_database("postgresql://ann:s3cret@db.example:5432/", "data")
    assert "s3cret" not in str(e.value) and "ann:***@" in str(e.value)


@pytest.mark.parametrize("url", [
    "postgresql://ann@db/cs?password=s3cret", "postgresql:///cs?host=db&password=s3cret&sslmode=disable",
    "postgresql://ann:s3/cret@db/cs", "postgresql://ann:123/s3cret@db/cs", "host=db password=s3cret dbname=cs"])
def test_a_password_anywhere_in_the_url_is_never_shown(url):
    # in the query, in a libpq conninfo, or unencoded in a URL that does not parse: neither redact nor any error says it
    assert "s3cret" not in redact(url) and "s3" not in redact(url).replace("s3cret", "")
    try:
        loc = parse_database(url, "data")
    except InputError as e:
        assert "s3" not in str(e)
    else:
        assert "s3cret" not in loc.display


@pytest.mark.postgres
def test_an_unreachable_database_is_an_input_error(postgres):  # noqa: F811
    url = postgres.url("no_such_database")
    with pytest.raises(InputError, match=r"--database: cannot connect to .*no_such_database.*does not exist"):
        Store(url)
