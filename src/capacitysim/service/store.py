"""The service's records: users, web sessions, jobs, uploads, the journal and the servers' leases, in one database.

By default the SQLite file ``<data>/service.sqlite``; with ``--database postgresql://...`` a PostgreSQL
database that several server processes share (:mod:`capacitysim.service.db` has both backends). The SQL
here is one text for both (``?`` placeholders, ``ON CONFLICT DO NOTHING``, ``RETURNING``); the backend
supplies the key columns, the journal's triggers, the database clock and the recovery's row lock.

Every change is one transaction, so a server killed at any moment leaves either the old or the new
record, never half of one. The journal is append-only (triggers refuse UPDATE and DELETE): every action
of every user (a submission, a dismissal, a withdrawal, a sign-off, a refusal for lack of role, a user
added or revoked) is one row naming the user and the role.

Web sessions (:meth:`Store.create_session`, :meth:`Store.session`): a sign-in on ``/ui/login`` records a session
under the SHA-256 of its random id (the id is only in the browser's cookie), with its user, the client's address,
when it was created and last seen (the database's clock); it ends at sign-out, after the idle or absolute timeout
(service policies ``session_idle_s``, ``session_absolute_s``) or when its user is revoked.

Uploads belong to their uploader: one record per (uploader, SHA-256); :meth:`Store.upload` answers only the
asking user's record, so nobody uses, or learns of, another user's upload by its hash.

Servers and leases (service policy ``job_lease_s``, :data:`LEASE_S`): a server registers itself at start
(:meth:`Store.register_server`: an id, its host and process id) and renews a lease on the database's clock
(:meth:`Store.heartbeat`); the jobs it accepts carry its id. The restart recovery (:meth:`Store.recover`)
takes only jobs whose server's lease has expired (or that have no server): a job another live server is
running is never re-queued nor failed. A server starting on a host also takes at once the jobs of a
server of the same host whose process is gone (a restart does not wait for its predecessor's lease).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import socket
import uuid
from pathlib import Path

from capacitysim.errors import CapacitysimError, InputError, RefusedError
from capacitysim.service.db import Location, backend, parse_database

#: Version 1: users, uploads, jobs, journal. Version 2: the ``servers`` table and ``jobs.server_id`` (leases).
#: Version 3: the ``sessions`` table (web sign-ins) and uploads per uploader (``UNIQUE (uploaded_by, sha256)``;
#: an older store's upload rows stay their uploader's).
SCHEMA_VERSION = 3
#: The roles of the service (issue 18): who may do what is in :mod:`capacitysim.service.auth`.
ROLES = ("engineer", "administrator", "municipal", "reviewer")
#: The statuses of a job (OGC API - Processes, part 1, statusCode).
STATUSES = ("accepted", "running", "successful", "failed", "dismissed")
FINAL = ("successful", "failed", "dismissed")
#: Service policy ``job_lease_s``: how long a server's lease on its jobs lasts without a heartbeat [s].
#: The runner renews it every third of that; a job whose server missed its heartbeats this long is
#: taken by another server (re-queued, or failed past ``restart_attempts``). Short enough that a
#: killed server's job waits half a minute; long enough that a server stalled a few seconds (a
#: garbage collection, a busy database) keeps its jobs.
LEASE_S = 30.0

#: Uploads (version 3): one record per uploader and SHA-256, so a user names only their own uploads
#: (``uploaded_by`` is the owner); the bytes of one SHA-256 are one file on disk.
_UPLOADS = """CREATE TABLE IF NOT EXISTS {TABLE} (
    id {ID_KEY},
    sha256 TEXT NOT NULL,
    filename TEXT NOT NULL,
    size_bytes BIGINT NOT NULL,
    path TEXT NOT NULL,
    uploaded_by BIGINT NOT NULL REFERENCES users(id),
    uploaded_at TEXT NOT NULL,
    UNIQUE (uploaded_by, sha256)
)"""
_TABLES = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS users (
    id {ID_KEY},
    name TEXT NOT NULL,
    name_key TEXT NOT NULL UNIQUE,
    role TEXT NOT NULL CHECK (role IN ('engineer', 'administrator', 'municipal', 'reviewer')),
    key_id TEXT NOT NULL UNIQUE,
    token_sha256 TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
)""",
    _UPLOADS.replace("{TABLE}", "uploads"),
    """CREATE TABLE IF NOT EXISTS servers (
    id TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid BIGINT NOT NULL,
    started_at TEXT NOT NULL,
    heartbeat_at TEXT NOT NULL,
    lease_until DOUBLE PRECISION NOT NULL,
    stopped_at TEXT
)""",
    """CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    process TEXT NOT NULL,
    owner_id BIGINT NOT NULL REFERENCES users(id),
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
    error TEXT,
    server_id TEXT
)""",
    """CREATE TABLE IF NOT EXISTS sessions (
    id_sha256 TEXT PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users(id),
    client TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    created_s DOUBLE PRECISION NOT NULL,
    last_seen_s DOUBLE PRECISION NOT NULL,
    ended_at TEXT,
    end_reason TEXT
)""",
    """CREATE TABLE IF NOT EXISTS journal (
    seq {SEQ_KEY},
    at TEXT NOT NULL,
    user_id BIGINT REFERENCES users(id),
    user_name TEXT NOT NULL,
    role TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL DEFAULT '',
    outcome TEXT NOT NULL DEFAULT 'ok',
    detail TEXT NOT NULL DEFAULT '{{}}'
)""",
)
#: Columns added after version 1 (a version-1 SQLite store gains them when opened).
_ADDED_COLUMNS = (("jobs", "server_id", "TEXT"),)
_INDEXES = (
    "CREATE INDEX IF NOT EXISTS jobs_owner ON jobs(owner_id, created_at)",
    "CREATE INDEX IF NOT EXISTS jobs_status ON jobs(status)",
    "CREATE INDEX IF NOT EXISTS jobs_server ON jobs(server_id)",
    "CREATE INDEX IF NOT EXISTS sessions_user ON sessions(user_id)",
)
#: Who a change made with the command line is journaled as (``capacitysim users ...`` on the server's host).
OPERATOR_ROLE = "operator"


class ActiveJobsLimit(RefusedError):
    """A submission past service policy ``max_active_jobs_per_user`` (HTTP 429): ``active`` jobs of the user are
    queued or running, ``limit`` allowed."""

    http_status = 429
    title = "Too many jobs"

    def __init__(self, active: int, limit: int):
        self.active, self.limit = active, limit
        super().__init__(f"you have {active} jobs queued or running; service policy max_active_jobs_per_user allows "
                         f"{limit}: wait for one to end (GET /jobs?status=running) or dismiss one")


def storable(text) -> str:
    """A text any backend stores as given: a NUL byte (refused by PostgreSQL) or a lone surrogate (not UTF-8)
    becomes U+FFFD. For the journal's texts that come from a request (a target named in a path or a form)."""
    text = str(text)
    if text.isascii() and "\x00" not in text:
        return text
    return "".join("\ufffd" if ch == "\x00" or "\ud800" <= ch <= "\udfff" else ch for ch in text)


def now() -> str:
    """The current UTC time, ISO 8601 with microseconds."""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def operator(command: str) -> dict:
    """The journal's actor for a change made on the command line: the command and the operating-system user."""
    import getpass

    try:
        who = getpass.getuser()
    except (KeyError, OSError):
        who = f"uid {os.getuid()}"
    return {"id": None, "name": f"{who} ({command})", "role": OPERATOR_ROLE}


def open_store(database: str | None, data_dir, *, lease_s: float = LEASE_S) -> "Store":
    """The store named by ``--database`` (default: ``<data>/service.sqlite``).

    Raises
    ------
    InputError
        A ``--database`` that is not a PostgreSQL or SQLite URL, or a database that cannot be reached.
    """
    return Store(parse_database(database, data_dir), lease_s=lease_s)


class Store:
    """The service's store (thread-safe: a connection per operation, or one of the pool's on PostgreSQL).

    Parameters
    ----------
    location : path, str or Location
        A SQLite file's path, or a ``--database`` URL (``postgresql://...``, ``sqlite:///...``).
    timeout_s : float
        How long a writer waits for another's lock, or for a connection [s].
    lease_s : float
        Service policy ``job_lease_s``: the length of this server's lease [s] (:data:`LEASE_S`).
    """

    def __init__(self, location, *, timeout_s: float = 30.0, lease_s: float = LEASE_S):
        if not isinstance(location, Location):
            text = str(location)
            location = parse_database(text, None) if "://" in text else Location("sqlite", text)
        if not lease_s > 0:
            raise InputError(f"lease: {lease_s!r} s is not allowed; allowed: a positive number of seconds")
        self.location = location
        self.lease_s = float(lease_s)
        self.db = backend(location, timeout_s=timeout_s)
        self.kind = self.db.kind
        self.path = Path(location.target) if location.kind == "sqlite" else None
        #: The id of the server process using this store (:meth:`register_server`), None for the CLI.
        self.server_id: str | None = None
        try:
            self._create_schema()
        except BaseException:
            self.db.close()
            raise

    def _sql(self, text: str) -> str:
        return text.format(ID_KEY=self.db.ID_KEY, SEQ_KEY=self.db.SEQ_KEY)

    def _create_schema(self) -> None:
        with self.db.schema_lock() as c:
            c.execute(_TABLES[0])
            rows = c.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall()
            found = int(rows[0]["value"]) if rows else None
            if found is not None and found > SCHEMA_VERSION:
                raise CapacitysimError(f"the store {self.where} has schema version {found}; this capacitysim knows "
                                       f"versions up to {SCHEMA_VERSION}: upgrade capacitysim")
            if found == SCHEMA_VERSION:
                return
            for stmt in _TABLES[1:]:
                c.execute(self._sql(stmt))
            for table, column, decl in _ADDED_COLUMNS:
                if column not in self.db.columns(c, table):
                    c.execute(f"ALTER TABLE {table} ADD COLUMN {column} {decl}")
            if "id" not in self.db.columns(c, "uploads"):
                self._upgrade_uploads(c)
            for stmt in (*_INDEXES, *self.db.TRIGGERS):
                c.execute(stmt)
            c.execute("INSERT INTO meta(key, value) VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE SET"
                      " value = excluded.value", (str(SCHEMA_VERSION),))

    def _upgrade_uploads(self, c) -> None:
        """Schema version 3: the uploads of an older store (one row per SHA-256) become one row per uploader and
        SHA-256; each row stays its uploader's (``uploaded_by``)."""
        c.execute(self._sql(_UPLOADS.replace("{TABLE}", "uploads_v3")))
        c.execute("INSERT INTO uploads_v3(sha256, filename, size_bytes, path, uploaded_by, uploaded_at)"
                  " SELECT sha256, filename, size_bytes, path, uploaded_by, uploaded_at FROM uploads ORDER BY uploaded_at")
        c.execute("DROP TABLE uploads")
        c.execute("ALTER TABLE uploads_v3 RENAME TO uploads")

    @property
    def where(self) -> str:
        """The store's location (a file, or a URL without its password)."""
        return self.db.display

    def close(self) -> None:
        self.db.close()

    def tx(self):
        """One transaction (a context manager yielding its connection); rolled back on any error."""
        return self.db.tx()

    def read(self, sql: str, args=()) -> list:
        """The rows of one query (``?`` placeholders; rows indexed by column name)."""
        return self.db.read(sql, args)

    # --- journal -------------------------------------------------------------------------------------
    @staticmethod
    def log(c, user, action: str, target: str = "", detail: dict | None = None, outcome: str = "ok") -> None:
        """Append one journal row (inside the caller's transaction)."""
        c.execute("INSERT INTO journal(at, user_id, user_name, role, action, target, outcome, detail) VALUES (?,?,?,?,?,?,?,?)",
                  (now(), user["id"] if user else None, user["name"] if user else "(server)",
                   user["role"] if user else "server", storable(action), storable(target), outcome,
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
        """Add a user (journaled as ``add-user``, by ``by`` or by the new user).

        Raises
        ------
        RefusedError
            A user of that name (case-insensitive) exists already.
        """
        try:
            with self.tx() as c:
                row = c.execute("INSERT INTO users(name, name_key, role, key_id, token_sha256, created_at)"
                                " VALUES (?,?,?,?,?,?) RETURNING id",
                                (name, name.casefold(), role, key_id, token_sha256, now())).fetchone()
                user = {"id": row["id"], "name": name, "role": role}
                self.log(c, by or user, "add-user", name, {"role": role})
        except self.db.integrity_errors:
            if self.user_by_name(name) is not None:
                raise RefusedError(f"a user named {name!r} exists already in {self.where}") from None
            raise
        return user

    def revoke_user(self, name: str, *, by=None) -> dict:
        """Revoke a user's token (``revoked_at``; journaled as ``revoke-user``): it is refused from now on (401), and
        the user's web sessions end.

        Raises
        ------
        InputError
            No user of that name.
        RefusedError
            The user was revoked already.
        """
        t = now()
        with self.tx() as c:
            rows = c.execute("SELECT id, name, role, revoked_at FROM users WHERE name_key = ?", (name.casefold(),)).fetchall()
            if not rows:
                names = [r["name"] for r in c.execute("SELECT name FROM users ORDER BY id LIMIT 21").fetchall()]
                listed = ", ".join(repr(n) for n in names[:20]) + (", ..." if len(names) > 20 else "")
                raise InputError(f"NAME: no user named {name!r} in {self.where}; users: {listed or '(none)'}")
            u = rows[0]
            if u["revoked_at"] is not None:
                raise RefusedError(f"user {u['name']!r} was revoked already ({u['revoked_at']})")
            c.execute("UPDATE users SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", (t, u["id"]))
            ended = c.execute("UPDATE sessions SET ended_at = ?, end_reason = 'user revoked' WHERE user_id = ?"
                              " AND ended_at IS NULL", (t, u["id"])).rowcount
            self.log(c, by, "revoke-user", u["name"], {"role": u["role"], "user_id": u["id"], "sessions_ended": ended})
        return {"id": u["id"], "name": u["name"], "role": u["role"], "revoked_at": t}

    def user_by_key(self, key_id: str):
        """The user row of a token's key id, revoked or not (:func:`capacitysim.service.auth.user_for_token`
        refuses a revoked one)."""
        rows = self.read("SELECT * FROM users WHERE key_id = ?", (key_id,))
        return rows[0] if rows else None

    def user_by_name(self, name: str):
        rows = self.read("SELECT * FROM users WHERE name_key = ?", (name.casefold(),))
        return rows[0] if rows else None

    def users(self) -> list[dict]:
        return [{"id": r["id"], "name": r["name"], "role": r["role"], "created_at": r["created_at"],
                 "revoked_at": r["revoked_at"]} for r in self.read("SELECT * FROM users ORDER BY id")]

    # --- uploads -------------------------------------------------------------------------------------
    def add_upload(self, sha256: str, filename: str, size: int, path: str, user) -> dict:
        """Record ``user``'s upload of the bytes of ``sha256`` (journaled as ``upload``); returns the user's record.

        Each user has their own record of a SHA-256; the same bytes uploaded again by the same user under another
        name take that name (the last name given is the one a model or sweep names them by; jobs already
        submitted keep the files they resolved). Another user's upload of the same bytes is neither used nor shown.
        """
        with self.tx() as c:
            c.execute("INSERT INTO uploads(sha256, filename, size_bytes, path, uploaded_by, uploaded_at)"
                      " VALUES (?,?,?,?,?,?) ON CONFLICT (uploaded_by, sha256) DO UPDATE SET filename = excluded.filename,"
                      " path = excluded.path, uploaded_at = excluded.uploaded_at",
                      (sha256, filename, size, path, user["id"], now()))
            self.log(c, user, "upload", sha256, {"filename": filename, "size_bytes": size})
        return self.upload(sha256, user["id"])

    def upload(self, sha256: str, owner_id: int) -> dict | None:
        """The upload of ``sha256`` by the user ``owner_id``, or None (never another user's)."""
        rows = self.read("SELECT * FROM uploads WHERE sha256 = ? AND uploaded_by = ?", (sha256, owner_id))
        return dict(rows[0]) if rows else None

    def uploads_by(self, owner_id: int, limit: int = 200) -> list[dict]:
        """The uploads of the user ``owner_id``, newest first (the pages' forms offer them; never another user's)."""
        rows = self.read("SELECT sha256, filename, size_bytes, uploaded_at FROM uploads WHERE uploaded_by = ?"
                         " ORDER BY uploaded_at DESC, sha256 LIMIT ?", (owner_id, int(limit)))
        return [dict(r) for r in rows]

    # --- web sessions --------------------------------------------------------------------------------
    def create_session(self, id_sha256: str, user, client: str) -> None:
        """Record a web session of ``user`` (the SHA-256 of its id; the id itself is never stored), journaled as
        ``sign-in`` with the client's address."""
        with self.tx() as c:
            c.execute(f"INSERT INTO sessions(id_sha256, user_id, client, created_at, created_s, last_seen_s)"
                      f" VALUES (?,?,?,?, {self.db.NOW_S}, {self.db.NOW_S})", (id_sha256, user["id"], client[:100], now()))
            self.log(c, user, "sign-in", "", {"client": client[:100], "session": id_sha256[:12]})

    def session(self, id_sha256: str, *, idle_s: float, absolute_s: float, touch_s: float = 60.0):
        """The user of a live web session: ``(user, session)``, or ``(None, reason)``.

        A session ends (``ended_at``, ``end_reason``) when it has been idle longer than ``idle_s``, is older than
        ``absolute_s`` (both on the database's clock), or its user is revoked. Its ``last_seen_s`` is renewed when
        older than ``touch_s`` (a read, not a write, for most requests).

        Returns
        -------
        tuple
            ``(user row as a dict, session row as a dict)``, or ``(None, reason)`` with reason ``unknown``,
            ``ended``, ``revoked``, ``idle`` or ``absolute``.
        """
        rows = self.read(f"SELECT s.*, {self.db.NOW_S} AS now_s FROM sessions s WHERE s.id_sha256 = ?", (id_sha256,))
        if not rows:
            return None, "unknown"
        sess = dict(rows[0])
        if sess["ended_at"] is not None:
            return None, "ended"
        users = self.read("SELECT * FROM users WHERE id = ?", (sess["user_id"],))
        user = dict(users[0])
        reason = ("revoked" if user["revoked_at"] is not None else
                  "absolute" if sess["now_s"] - sess["created_s"] > absolute_s else
                  "idle" if sess["now_s"] - sess["last_seen_s"] > idle_s else None)
        if reason is not None:
            self.end_session(id_sha256, {"revoked": "user revoked", "absolute": "absolute timeout",
                                         "idle": "idle timeout"}[reason])
            return None, reason
        if sess["now_s"] - sess["last_seen_s"] > touch_s:
            with self.tx() as c:
                c.execute(f"UPDATE sessions SET last_seen_s = {self.db.NOW_S} WHERE id_sha256 = ? AND ended_at IS NULL",
                          (id_sha256,))
        return user, sess

    def end_session(self, id_sha256: str, reason: str, user=None) -> bool:
        """End a web session (``sign-out``, a timeout, a revocation); journaled as ``sign-out`` when ``user`` signs
        out. False when it had ended already."""
        with self.tx() as c:
            cur = c.execute("UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id_sha256 = ? AND ended_at IS NULL",
                            (now(), reason, id_sha256))
            if cur.rowcount == 1 and user is not None:
                self.log(c, user, "sign-out", "", {"session": id_sha256[:12], "reason": reason})
            return cur.rowcount == 1

    # --- jobs ----------------------------------------------------------------------------------------
    def create_job(self, prepared, user, versions: dict, *, max_active: int | None = None) -> str:
        """Record a new job (``accepted``; journaled as ``submit``); returns its id.

        Parameters
        ----------
        prepared : capacitysim.service.processes.Prepared
        user : dict
            The owner.
        versions : dict
            What the job runs on.
        max_active : int, optional
            Service policy ``max_active_jobs_per_user``: refuse when the user has this many jobs ``accepted`` or
            ``running`` already (counted and inserted in one transaction, the user's row locked on PostgreSQL, so
            concurrent submissions never pass the limit together).

        Raises
        ------
        ActiveJobsLimit
            The user has ``max_active`` jobs queued or running (the refusal is journaled, outcome ``limited``).
        """
        job_id = uuid.uuid4().hex
        t = now()
        active = None
        with self.tx() as c:
            if max_active is not None:
                c.execute("SELECT id FROM users WHERE id = ?" + self.db.ROW_LOCK, (user["id"],)).fetchall()
                active = int(c.execute("SELECT COUNT(*) AS n FROM jobs WHERE owner_id = ? AND status IN"
                                       " ('accepted','running')", (user["id"],)).fetchone()["n"])
                if active >= max_active:
                    self.log(c, user, "submit", prepared.process, {"active": active, "limit": max_active,
                                                                   "policy": "max_active_jobs_per_user"},
                             outcome="limited")
            if active is None or active < max_active:
                c.execute("INSERT INTO jobs(id, process, owner_id, status, inputs, files, input_sha256, versions,"
                          " created_at, updated_at, message, server_id) VALUES (?,?,?,'accepted',?,?,?,?,?,?,'accepted',?)",
                          (job_id, prepared.process, user["id"], json.dumps(prepared.inputs, sort_keys=True),
                           json.dumps(prepared.files, sort_keys=True), json.dumps(prepared.sha256, sort_keys=True),
                           json.dumps(versions, sort_keys=True), t, t, self.server_id))
                self.log(c, user, "submit", job_id, {"process": prepared.process, "input_sha256": prepared.sha256})
        if active is not None and active >= max_active:
            raise ActiveJobsLimit(active, max_active)
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

    # --- servers and leases ----------------------------------------------------------------------------
    def register_server(self) -> str:
        """Register this process as a server (an id, its host and pid) with a lease of :attr:`lease_s`; the jobs
        it accepts from now on carry its id. Journaled as ``server-start``."""
        sid = uuid.uuid4().hex
        t = now()
        host, pid = socket.gethostname(), os.getpid()
        with self.tx() as c:
            c.execute(f"INSERT INTO servers(id, host, pid, started_at, heartbeat_at, lease_until)"
                      f" VALUES (?,?,?,?,?, {self.db.NOW_S} + ?)", (sid, host, pid, t, t, self.lease_s))
            self.log(c, None, "server-start", sid, {"host": host, "pid": pid, "lease_s": self.lease_s,
                                                    "store": self.kind})
        self.server_id = sid
        return sid

    def heartbeat(self) -> bool:
        """Renew this server's lease for :attr:`lease_s` from now (the database's clock); False if unregistered."""
        if self.server_id is None:
            return False
        with self.db.beat_tx() as c:
            cur = c.execute(f"UPDATE servers SET heartbeat_at = ?, lease_until = {self.db.NOW_S} + ? WHERE id = ?",
                            (now(), self.lease_s, self.server_id))
            return cur.rowcount == 1

    def release_server(self) -> None:
        """End this server's lease now (a server that stops: its unfinished jobs are recovered at once)."""
        if self.server_id is None:
            return
        with self.tx() as c:
            c.execute("UPDATE servers SET lease_until = 0, stopped_at = ? WHERE id = ?",
                      (now(), self.server_id))
            self.log(c, None, "server-stop", self.server_id)

    def servers(self) -> list[dict]:
        """The registered servers, with ``live`` (lease not expired on the database's clock)."""
        rows = self.read(f"SELECT s.*, CASE WHEN s.lease_until >= {self.db.NOW_S} THEN 1 ELSE 0 END AS live"
                         " FROM servers s ORDER BY s.started_at")
        return [dict(r) | {"live": bool(r["live"])} for r in rows]

    def jobs_moved(self, attempts: dict[str, int]) -> list[str]:
        """Of this server's jobs ``{id: attempt}``, those another server has taken since (a new attempt) or
        dismissed (``DELETE /jobs/{id}`` served by another server): this server stops running them."""
        if not attempts:
            return []
        ids = list(attempts)
        rows = self.read(f"SELECT id, attempts, server_id, status FROM jobs WHERE id IN ({','.join('?' * len(ids))})", ids)
        return [r["id"] for r in rows if r["attempts"] != attempts[r["id"]] or r["status"] == "dismissed"
                or (self.server_id is not None and r["server_id"] != self.server_id)]

    def recover(self, max_attempts: int, *, startup: bool = False) -> tuple[list[str], list[str]]:
        """Take the jobs left ``accepted`` or ``running`` by servers that are gone: each is re-queued for this
        server (a new attempt) or, past ``max_attempts``, marked ``failed`` with the reason.

        A server is gone when its lease has expired (service policy ``job_lease_s``), or has no record; with
        ``startup``, also a server of this host whose process no longer exists (a restarted server does not wait
        for its predecessor's lease). Jobs of live servers, and this server's own, are left alone; on PostgreSQL
        the rows are taken ``FOR UPDATE SKIP LOCKED``, so two servers recovering at once never take the same
        job; SQLite has one writer at a time. Returns (re-queued ids, failed ids).
        """
        requeued, failed = [], []
        t = now()
        me = self.server_id
        with self.tx() as c:
            if startup:
                self._end_dead_local_servers(c, t)
            rows = c.execute(
                "SELECT j.id, j.status, j.attempts, j.server_id, s.host AS host FROM jobs j"
                " LEFT JOIN servers s ON s.id = j.server_id"
                " WHERE j.status IN ('accepted','running')"
                f" AND (j.server_id IS NULL OR s.id IS NULL OR s.lease_until < {self.db.NOW_S})"
                " AND (j.server_id IS NULL OR j.server_id <> ?)"
                " ORDER BY j.created_at" + self.db.FOR_UPDATE, (me or "",)).fetchall()
            for r in rows:
                was = {"was": r["status"], "from_server": r["server_id"], "from_host": r["host"], "by_server": me}
                if r["attempts"] >= max_attempts:
                    msg = (f"the server stopped while this job was {r['status']} ({r['attempts']} attempts; service policy "
                           f"restart_attempts = {max_attempts}: not re-run again)")
                    err = {"type": "restart", "message": msg}
                    cur = c.execute("UPDATE jobs SET status='failed', progress=0, message=?, error=?, finished_at=?,"
                                    " updated_at=? WHERE id=? AND attempts=? AND status IN ('accepted','running')",
                                    (msg, json.dumps(err), t, t, r["id"], r["attempts"]))
                    if cur.rowcount == 1:
                        self.log(c, None, "job-failed", r["id"], {"error": err, **was})
                        failed.append(r["id"])
                else:
                    msg = f"re-queued after a server restart (attempt {r['attempts'] + 1} of {max_attempts})"
                    cur = c.execute("UPDATE jobs SET status='accepted', progress=0, message=?, attempts=attempts+1,"
                                    " updated_at=?, server_id=? WHERE id=? AND attempts=?"
                                    " AND status IN ('accepted','running')", (msg, t, me, r["id"], r["attempts"]))
                    if cur.rowcount == 1:
                        self.log(c, None, "job-requeued", r["id"], {"attempt": r["attempts"] + 1, **was})
                        requeued.append(r["id"])
        return requeued, failed

    def _end_dead_local_servers(self, c, t: str) -> None:
        """End the lease of every server of this host whose process is gone (journaled as ``server-gone``)."""
        host = socket.gethostname()
        rows = c.execute(f"SELECT id, pid FROM servers WHERE host = ? AND stopped_at IS NULL"
                         f" AND lease_until >= {self.db.NOW_S} AND id <> ?", (host, self.server_id or "")).fetchall()
        for r in rows:
            if not _process_exists(int(r["pid"])):
                c.execute("UPDATE servers SET lease_until = 0, stopped_at = ? WHERE id = ?", (t, r["id"]))
                self.log(c, None, "server-gone", r["id"], {"host": host, "pid": r["pid"]})


def _process_exists(pid: int) -> bool:
    """Whether a process of that id exists on this host (another user's counts)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _job(r) -> dict:
    d = dict(r)
    for k in ("inputs", "files", "input_sha256", "versions", "error"):
        if d.get(k) is not None:
            d[k] = json.loads(d[k])
    return d
