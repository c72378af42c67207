"""The service's records in one SQLite file (``<data>/service.sqlite``): users, jobs, uploads, the journal.

WAL mode, foreign keys, and every change in one transaction (``BEGIN IMMEDIATE``), so a server killed at
any moment leaves either the old or the new record, never half of one. The journal is append-only (a
trigger refuses UPDATE and DELETE): every action of every user (a submission, a dismissal, a withdrawal,
a sign-off, a refusal for lack of role) is one row naming the user and the role.

Several service processes may share one store only through a database server; SQLite serves one host
(the WAL needs shared memory): see :mod:`capacitysim.service` for what a PostgreSQL store would need.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import sqlite3
import threading
import uuid
from pathlib import Path

SCHEMA_VERSION = 1
#: The roles of the service (issue 18): who may do what is in :mod:`capacitysim.service.auth`.
ROLES = ("engineer", "administrator", "municipal", "reviewer")
#: The statuses of a job (OGC API - Processes, part 1, statusCode).
STATUSES = ("accepted", "running", "successful", "failed", "dismissed")
FINAL = ("successful", "failed", "dismissed")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS users (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL UNIQUE,
    role TEXT NOT NULL CHECK (role IN ('engineer', 'administrator', 'municipal', 'reviewer')),
    key_id TEXT NOT NULL UNIQUE,
    token_sha256 TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
CREATE TABLE IF NOT EXISTS uploads (
    sha256 TEXT PRIMARY KEY,
    filename TEXT NOT NULL,
    size_bytes INTEGER NOT NULL,
    path TEXT NOT NULL,
    uploaded_by INTEGER NOT NULL REFERENCES users(id),
    uploaded_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    process TEXT NOT NULL,
    owner_id INTEGER NOT NULL REFERENCES users(id),
    status TEXT NOT NULL CHECK (status IN ('accepted', 'running', 'successful', 'failed', 'dismissed')),
    progress INTEGER NOT NULL DEFAULT 0,
    message TEXT NOT NULL DEFAULT '',
    inputs TEXT NOT NULL,
    files TEXT NOT NULL,
    input_sha256 TEXT NOT NULL,
    versions TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL,
    started_at TEXT,
    finished_at TEXT,
    updated_at TEXT NOT NULL,
    verdict TEXT,
    result_path TEXT,
    result_sha256 TEXT,
    report_path TEXT,
    error TEXT
);
CREATE INDEX IF NOT EXISTS jobs_owner ON jobs(owner_id, created_at);
CREATE INDEX IF NOT EXISTS jobs_status ON jobs(status);
CREATE TABLE IF NOT EXISTS journal (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    user_id INTEGER REFERENCES users(id),
    user_name TEXT NOT NULL,
    role TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL DEFAULT '',
    outcome TEXT NOT NULL DEFAULT 'ok',
    detail TEXT NOT NULL DEFAULT '{}'
);
CREATE TRIGGER IF NOT EXISTS journal_no_update BEFORE UPDATE ON journal
    BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;
CREATE TRIGGER IF NOT EXISTS journal_no_delete BEFORE DELETE ON journal
    BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;
"""


def now() -> str:
    """The current UTC time, ISO 8601 with microseconds."""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Store:
    """The service's SQLite store (one connection per operation: safe from any thread or process).

    Parameters
    ----------
    path : path
        The SQLite file (created with its schema when missing).
    timeout_s : float
        How long a writer waits for another's lock [s].
    """

    def __init__(self, path, *, timeout_s: float = 30.0):
        self.path = Path(path)
        self.timeout_s = timeout_s
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as c:
            c.execute("PRAGMA journal_mode = WAL")
            with self.tx(c):
                for stmt in _split(_SCHEMA):
                    c.execute(stmt)
                c.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))

    @contextlib.contextmanager
    def _connect(self):
        c = sqlite3.connect(str(self.path), timeout=self.timeout_s, isolation_level=None)
        c.row_factory = sqlite3.Row
        c.execute(f"PRAGMA busy_timeout = {int(self.timeout_s * 1000)}")
        c.execute("PRAGMA foreign_keys = ON")
        c.execute("PRAGMA synchronous = FULL")
        try:
            yield c
        finally:
            c.close()

    @contextlib.contextmanager
    def tx(self, c=None):
        """One transaction (write lock first); rolled back on any error.

        The threads of one process take turns on a lock first (first come, first served): SQLite's own busy
        handler backs off by sleeping up to 100 ms a try, which under many concurrent writers gives a waiter
        seconds of delay while others pass; other processes (``capacitysim users add``) still wait on
        SQLite's lock (``busy_timeout``).
        """
        if c is None:
            with self._connect() as conn, self.tx(conn) as inner:
                yield inner
            return
        with _writer_lock(self.path):
            c.execute("BEGIN IMMEDIATE")
            try:
                yield c
            except BaseException:
                if c.in_transaction:
                    c.execute("ROLLBACK")
                raise
            else:
                c.execute("COMMIT")

    def read(self, sql: str, args=()) -> list[sqlite3.Row]:
        with self._connect() as c:
            return c.execute(sql, args).fetchall()

    # --- journal -------------------------------------------------------------------------------------
    @staticmethod
    def log(c, user, action: str, target: str = "", detail: dict | None = None, outcome: str = "ok") -> None:
        """Append one journal row (inside the caller's transaction)."""
        c.execute("INSERT INTO journal(at, user_id, user_name, role, action, target, outcome, detail) VALUES (?,?,?,?,?,?,?,?)",
                  (now(), user["id"] if user else None, user["name"] if user else "(server)",
                   user["role"] if user else "server", action, target, outcome,
                   json.dumps(detail or {}, sort_keys=True, default=str)))

    def journal(self, action: str, user=None, target: str = "", detail: dict | None = None, outcome: str = "ok") -> None:
        with self.tx() as c:
            self.log(c, user, action, target, detail, outcome)

    def journal_rows(self, *, user_id: int | None = None, limit: int = 1000) -> list[dict]:
        sql = "SELECT * FROM journal" + (" WHERE user_id = ?" if user_id is not None else "") + " ORDER BY seq DESC LIMIT ?"
        args = (user_id, limit) if user_id is not None else (limit,)
        return [dict(r) | {"detail": json.loads(r["detail"])} for r in self.read(sql, args)]

    # --- users ---------------------------------------------------------------------------------------
    def add_user(self, name: str, role: str, key_id: str, token_sha256: str, *, by=None) -> dict:
        with self.tx() as c:
            cur = c.execute("INSERT INTO users(name, name_key, role, key_id, token_sha256, created_at) VALUES (?,?,?,?,?,?)",
                            (name, name.casefold(), role, key_id, token_sha256, now()))
            user = {"id": cur.lastrowid, "name": name, "role": role}
            self.log(c, by or user, "add-user", name, {"role": role})
        return user

    def user_by_key(self, key_id: str):
        rows = self.read("SELECT * FROM users WHERE key_id = ? AND revoked_at IS NULL", (key_id,))
        return rows[0] if rows else None

    def user_by_name(self, name: str):
        rows = self.read("SELECT * FROM users WHERE name_key = ?", (name.casefold(),))
        return rows[0] if rows else None

    def users(self) -> list[dict]:
        return [{"id": r["id"], "name": r["name"], "role": r["role"], "created_at": r["created_at"],
                 "revoked_at": r["revoked_at"]} for r in self.read("SELECT * FROM users ORDER BY id")]

    # --- uploads -------------------------------------------------------------------------------------
    def add_upload(self, sha256: str, filename: str, size: int, path: str, user) -> dict:
        with self.tx() as c:
            c.execute("INSERT OR IGNORE INTO uploads(sha256, filename, size_bytes, path, uploaded_by, uploaded_at)"
                      " VALUES (?,?,?,?,?,?)", (sha256, filename, size, path, user["id"], now()))
            self.log(c, user, "upload", sha256, {"filename": filename, "size_bytes": size})
        return self.upload(sha256)

    def upload(self, sha256: str) -> dict | None:
        rows = self.read("SELECT * FROM uploads WHERE sha256 = ?", (sha256,))
        return dict(rows[0]) if rows else None

    # --- jobs ----------------------------------------------------------------------------------------
    def create_job(self, prepared, user, versions: dict) -> str:
        job_id = uuid.uuid4().hex
        t = now()
        with self.tx() as c:
            c.execute("INSERT INTO jobs(id, process, owner_id, status, inputs, files, input_sha256, versions, created_at,"
                      " updated_at, message) VALUES (?,?,?,'accepted',?,?,?,?,?,?,'accepted')",
                      (job_id, prepared.process, user["id"], json.dumps(prepared.inputs, sort_keys=True),
                       json.dumps(prepared.files, sort_keys=True), json.dumps(prepared.sha256, sort_keys=True),
                       json.dumps(versions, sort_keys=True), t, t))
            self.log(c, user, "submit", job_id, {"process": prepared.process, "input_sha256": prepared.sha256})
        return job_id

    def job(self, job_id: str) -> dict | None:
        rows = self.read("SELECT j.*, u.name AS owner FROM jobs j JOIN users u ON u.id = j.owner_id WHERE j.id = ?",
                         (job_id,))
        return _job(rows[0]) if rows else None

    def jobs(self, *, owner_id: int | None = None, status: str | None = None, limit: int = 1000) -> list[dict]:
        where, args = [], []
        if owner_id is not None:
            where.append("j.owner_id = ?")
            args.append(owner_id)
        if status is not None:
            where.append("j.status = ?")
            args.append(status)
        sql = ("SELECT j.*, u.name AS owner FROM jobs j JOIN users u ON u.id = j.owner_id"
               + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY j.created_at DESC LIMIT ?")
        return [_job(r) for r in self.read(sql, (*args, limit))]

    def set_running(self, job_id: str, attempt: int, progress: int, message: str) -> bool:
        """Mark a job running (or update its progress); False when it is no longer that attempt or is final."""
        t = now()
        with self.tx() as c:
            cur = c.execute("UPDATE jobs SET status='running', progress=?, message=?, updated_at=?,"
                            " started_at=COALESCE(started_at, ?) WHERE id=? AND attempts=? AND status IN ('accepted','running')",
                            (progress, message, t, t, job_id, attempt))
            return cur.rowcount == 1

    def finish(self, job_id: str, attempt: int, *, status: str, message: str, verdict=None, result_path=None,
               result_sha256=None, report_path=None, error: dict | None = None) -> bool:
        """Record a job's end; False (nothing changed) when it was dismissed or re-queued meanwhile."""
        t = now()
        with self.tx() as c:
            cur = c.execute(
                "UPDATE jobs SET status=?, progress=?, message=?, verdict=?, result_path=?, result_sha256=?, report_path=?,"
                " error=?, finished_at=?, updated_at=? WHERE id=? AND attempts=? AND status IN ('accepted','running')",
                (status, 100 if status == "successful" else 0, message, verdict, result_path, result_sha256, report_path,
                 json.dumps(error) if error else None, t, t, job_id, attempt))
            if cur.rowcount == 1:
                self.log(c, None, f"job-{status}", job_id, {"attempt": attempt, "verdict": verdict,
                                                            **({"error": error} if error else {})})
            return cur.rowcount == 1

    def dismiss(self, job_id: str, user) -> dict:
        t = now()
        with self.tx() as c:
            c.execute("UPDATE jobs SET status='dismissed', message='dismissed by ' || ?, updated_at=?,"
                      " finished_at=COALESCE(finished_at, ?) WHERE id=?", (user["name"], t, t, job_id))
            self.log(c, user, "dismiss", job_id)
        return self.job(job_id)

    def recover(self, max_attempts: int) -> tuple[list[str], list[str]]:
        """At start-up: every job left ``accepted`` or ``running`` is re-queued (a new attempt) or, past
        ``max_attempts``, marked ``failed`` with the reason. Returns (re-queued ids, failed ids)."""
        requeued, failed = [], []
        t = now()
        with self.tx() as c:
            for r in c.execute("SELECT id, status, attempts FROM jobs WHERE status IN ('accepted','running')").fetchall():
                if r["attempts"] >= max_attempts:
                    msg = (f"the server stopped while this job was {r['status']} ({r['attempts']} attempts; service policy "
                           f"restart_attempts = {max_attempts}: not re-run again)")
                    err = {"type": "restart", "message": msg}
                    c.execute("UPDATE jobs SET status='failed', progress=0, message=?, error=?, finished_at=?, updated_at=?"
                              " WHERE id=?", (msg, json.dumps(err), t, t, r["id"]))
                    self.log(c, None, "job-failed", r["id"], {"error": err})
                    failed.append(r["id"])
                else:
                    msg = f"re-queued after a server restart (attempt {r['attempts'] + 1} of {max_attempts})"
                    c.execute("UPDATE jobs SET status='accepted', progress=0, message=?, attempts=attempts+1, updated_at=?"
                              " WHERE id=?", (msg, t, r["id"]))
                    self.log(c, None, "job-requeued", r["id"], {"was": r["status"], "attempt": r["attempts"] + 1})
                    requeued.append(r["id"])
        return requeued, failed


_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def _writer_lock(path: Path) -> threading.Lock:
    """The in-process write lock of one database file."""
    key = str(Path(path).resolve())
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(key, threading.Lock())


def _job(r) -> dict:
    d = dict(r)
    for k in ("inputs", "files", "input_sha256", "versions", "error"):
        if d.get(k) is not None:
            d[k] = json.loads(d[k])
    return d


def _split(script: str) -> list[str]:
    """The statements of the schema script (triggers kept whole)."""
    out, buf = [], []
    for line in script.strip().splitlines():
        buf.append(line)
        text = "\n".join(buf).strip()
        if text.endswith(";") and (not text.upper().startswith("CREATE TRIGGER") or text.upper().endswith("END;")):
            out.append(text)
            buf = []
    return out
