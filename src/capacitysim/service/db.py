"""Where the service's store lives, and the two databases it runs on: SQLite (default) and PostgreSQL.

``--database`` (or ``CAPACITYSIM_DATABASE_URL``) names the store:

* nothing: the SQLite file ``<data>/service.sqlite`` (one host; the default, as before);
* ``sqlite:///PATH``: a SQLite file elsewhere (three slashes and a relative path, four for an absolute one);
* ``postgresql://USER[:PASSWORD]@HOST[:PORT]/DBNAME[?PARAMS]`` (or ``postgres://``): a PostgreSQL database,
  through psycopg 3 and a connection pool, where several server processes (on one host or several)
  share one store.

The SQL of the store is one text (:mod:`capacitysim.service.store`); a backend here supplies what the two
databases spell differently: the parameter placeholder (``?``, translated to psycopg's ``%s``), key columns
(``INTEGER PRIMARY KEY`` / ``GENERATED ... AS IDENTITY``), the journal's append-only triggers (SQLite
``RAISE(ABORT)`` / a PL/pgSQL function), the database clock in seconds (the leases), the row lock of the
restart recovery (SQLite's single writer, ``BEGIN IMMEDIATE``; PostgreSQL ``FOR UPDATE SKIP LOCKED``) and
which exception is a unique-key violation. Every change is one transaction on both.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from capacitysim.errors import InputError
from capacitysim.units import SECONDS_PER_DAY

#: The command-line option (and environment variable) naming the store.
DATABASE_OPTION = "--database"
DATABASE_ENV = "CAPACITYSIM_DATABASE_URL"
#: What ``--database`` allows (the text of an InputError).
ALLOWED = ("postgresql://USER[:PASSWORD]@HOST[:PORT]/DBNAME (PostgreSQL through psycopg 3), or sqlite:///PATH; "
           "default: the SQLite file <data>/service.sqlite")
#: Connections of one server process to PostgreSQL at most (the pool's size): the request threads and the
#: runner take turns on them.
PG_POOL_MAX = 10
#: The file of the default store, under the data folder.
SQLITE_NAME = "service.sqlite"
#: Mode of the files that hold users' token hashes, sessions and the bank (owner read and write only).
PRIVATE_MODE = 0o600
#: The side files SQLite keeps beside a database (WAL, its shared memory, a rollback journal).
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
#: Why a PostgreSQL URL does not parse (its text is not repeated: it may hold the password).
_ENCODE = "is not a valid URL (a password holding / ? # @ or : must be percent-encoded)"
#: A ``password=`` parameter of a URL's query or of a libpq conninfo string.
_PASSWORD_PARAM = re.compile(r"(?i)\b(password=)[^&\s]*")


@dataclass(frozen=True)
class Location:
    """A parsed ``--database``: ``kind`` is ``sqlite`` (``target`` a path) or ``postgresql`` (a URL)."""

    kind: str
    target: str

    @property
    def display(self) -> str:
        """The location without a password (for messages and logs)."""
        return redact(self.target) if self.kind == "postgresql" else self.target


def redact(url: str) -> str:
    """A database URL safe to show in messages and logs: every password hidden.

    The password before the ``@`` and any ``password=`` parameter become ``***``; a URL that does not
    parse, or whose ``@`` falls outside the host part (a password holding an unencoded ``/``), shows only
    its scheme.
    """
    text = _PASSWORD_PARAM.sub(r"\1***", url)
    m = _SCHEME.match(url)
    hidden = f"{m.group(1)}://<not shown: not a valid URL>" if m else "<not shown: not a valid URL>"
    try:
        parts = urlsplit(text)
        _ = parts.port
    except ValueError:
        return hidden
    if "@" in parts.path or "@" in parts.query or "@" in parts.fragment:
        return hidden
    if "@" in parts.netloc:
        userinfo, host = parts.netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        text = urlunsplit(parts._replace(netloc=f"{user}:***@{host}" if ":" in userinfo else f"{user}@{host}"))
    return text


def parse_database(database: str | None, data_dir) -> Location:
    """The store named by ``--database`` (None or empty: ``<data>/service.sqlite``).

    Raises
    ------
    InputError
        Naming ``--database``, the value (password hidden) and what is allowed.
    """
    if database is None or not str(database).strip():
        return Location("sqlite", str(Path(data_dir) / SQLITE_NAME))
    value = str(database).strip()

    def bad(why: str):
        return InputError(f"{DATABASE_OPTION}: {redact(value)!r} {why}; allowed: {ALLOWED}")

    m = _SCHEME.match(value)
    if m is None:
        raise bad("is not a database URL")
    scheme = m.group(1).lower()
    if scheme in ("postgresql", "postgres"):
        try:
            parts = urlsplit(value)
            _ = parts.port  # a port that is not a number in [0, 65535] raises ValueError
        except ValueError:
            raise bad(_ENCODE) from None
        if "@" in parts.path or "@" in parts.query:
            raise bad(_ENCODE)
        if not parts.hostname and "host=" not in parts.query:
            raise bad("names no host")
        if not parts.path.strip("/"):
            raise bad("names no database (…/DBNAME)")
        return Location("postgresql", value)
    if scheme == "sqlite":
        path = value[len("sqlite://"):]
        if not path.startswith("/") or len(path) < 2:
            raise bad("names no file (sqlite:///relative/path or sqlite:////absolute/path)")
        return Location("sqlite", path[1:])
    raise bad(f"has the scheme {scheme!r}, not postgresql or sqlite")


def private_file(path) -> None:
    """Make a SQLite database and its side files (``-wal``, ``-shm``, ``-journal``) mode 0600 (:data:`PRIVATE_MODE`).

    A missing file is created empty first (an empty file is an empty SQLite database), so SQLite, which gives its
    side files the mode of the database, never makes them readable by others either. Files already private are
    left alone; a file of another owner is left as it is (``chmod`` would be refused).
    """
    p = Path(path)
    if not p.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.close(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, PRIVATE_MODE))
        except FileExistsError:  # another process created it meanwhile
            pass
    for f in (p, *(p.with_name(p.name + side) for side in SQLITE_SIDE_FILES)):
        try:
            if f.stat().st_mode & 0o777 != PRIVATE_MODE:
                os.chmod(f, PRIVATE_MODE)
        except (FileNotFoundError, PermissionError):
            pass


# --- SQLite ----------------------------------------------------------------------------------------------
class SQLiteBackend:
    """One SQLite file: WAL, foreign keys, a connection per operation, ``BEGIN IMMEDIATE`` transactions; the file
    and its side files mode 0600 (:func:`private_file`).

    Parameters
    ----------
    path : path
        The file (its folder is created).
    timeout_s : float
        How long a writer waits for another's lock [s].
    """

    kind = "sqlite"
    #: Key columns and the lock of the recovery's SELECT (SQLite has one writer at a time: none needed).
    ID_KEY = "INTEGER PRIMARY KEY"
    SEQ_KEY = "INTEGER PRIMARY KEY AUTOINCREMENT"
    FOR_UPDATE = ""
    #: The row lock of a read that a later write of the same transaction depends on (none: one writer at a time).
    ROW_LOCK = ""
    #: The database clock, Unix time [s]: SQLite's ``julianday('now')`` [d] less the Julian day of the Unix epoch
    #: (1970-01-01T00:00Z is Julian day 2440587.5: SQLite, "Date And Time Functions", sqlite.org/lang_datefunc.html),
    #: times the seconds of a day (millisecond resolution).
    UNIX_EPOCH_JULIAN_DAY = 2440587.5
    NOW_S = f"((julianday('now') - {UNIX_EPOCH_JULIAN_DAY!r}) * {SECONDS_PER_DAY!r})"
    TRIGGERS = (
        "CREATE TRIGGER IF NOT EXISTS journal_no_update BEFORE UPDATE ON journal "
        "BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END",
        "CREATE TRIGGER IF NOT EXISTS journal_no_delete BEFORE DELETE ON journal "
        "BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END",
    )
    integrity_errors = (sqlite3.IntegrityError,)

    def __init__(self, path, *, timeout_s: float = 30.0):
        self.path = Path(path)
        self.timeout_s = timeout_s
        self.path.parent.mkdir(parents=True, exist_ok=True)
        private_file(self.path)
        with self.connect() as c:
            c.execute("PRAGMA journal_mode = WAL")
        private_file(self.path)  # the WAL's files, now that they exist

    @property
    def display(self) -> str:
        return str(self.path)

    @contextlib.contextmanager
    def connect(self):
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
    def tx(self):
        """One transaction (write lock first); rolled back on any error.

        The threads of one process take turns on a lock first (first come, first served): SQLite's own busy
        handler backs off by sleeping up to 100 ms a try, which under many concurrent writers gives a waiter
        seconds of delay while others pass; other processes (``capacitysim users add``) still wait on
        SQLite's lock (``busy_timeout``).
        """
        with self.connect() as c, _writer_lock(self.path):
            c.execute("BEGIN IMMEDIATE")
            try:
                yield c
            except BaseException:
                if c.in_transaction:
                    c.execute("ROLLBACK")
                raise
            else:
                c.execute("COMMIT")

    def read(self, sql: str, args=()) -> list:
        with self.connect() as c:
            return c.execute(sql, args).fetchall()

    @contextlib.contextmanager
    def schema_lock(self):
        with self.tx() as c:
            yield c

    def columns(self, c, table: str) -> set[str]:
        return {r["name"] for r in c.execute(f"PRAGMA table_info({table})").fetchall()}

    def beat_tx(self):
        """The lease heartbeat's transaction: an ordinary one (one host, no pool to wait for)."""
        return self.tx()

    def close(self) -> None:
        pass


_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def _writer_lock(path: Path) -> threading.Lock:
    """The in-process write lock of one database file."""
    key = str(Path(path).resolve())
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(key, threading.Lock())


# --- PostgreSQL ------------------------------------------------------------------------------------------
class _PgConnection:
    """A psycopg connection that takes the store's ``?`` placeholders (``%`` escaped, ``?`` -> ``%s``)."""

    def __init__(self, conn):
        self.conn = conn

    def execute(self, sql: str, args=()):
        args = tuple(args)
        if not args:  # psycopg reads no placeholder (and no %) in a statement without parameters
            return self.conn.execute(sql)
        return self.conn.execute(to_pyformat(sql), args)


def to_pyformat(sql: str) -> str:
    """The store's SQL (``?`` placeholders; none inside its string literals) in psycopg's ``%s`` style."""
    return sql.replace("%", "%%").replace("?", "%s")


class PostgresBackend:
    """A PostgreSQL database through psycopg 3: a pool of at most :data:`PG_POOL_MAX` connections,
    ``READ COMMITTED`` transactions (the store's updates re-check their conditions on the row they change),
    ``FOR UPDATE SKIP LOCKED`` in the restart recovery.

    Parameters
    ----------
    url : str
        A ``postgresql://`` URL (libpq connection URI).
    timeout_s : float
        How long to wait for a connection (to connect, or for a free one of the pool) [s].
    """

    kind = "postgresql"
    ID_KEY = "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"
    SEQ_KEY = "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
    FOR_UPDATE = " FOR UPDATE OF j SKIP LOCKED"
    ROW_LOCK = " FOR UPDATE"
    #: The database clock (of the statement's execution, not the transaction's start), Unix time [s].
    NOW_S = "EXTRACT(EPOCH FROM clock_timestamp())::double precision"
    TRIGGERS = (
        "CREATE OR REPLACE FUNCTION capacitysim_journal_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN RAISE EXCEPTION 'the journal is append-only (% refused)', TG_OP; END $$",
        "CREATE OR REPLACE TRIGGER journal_no_update BEFORE UPDATE OR DELETE ON journal "
        "FOR EACH ROW EXECUTE FUNCTION capacitysim_journal_append_only()",
        "CREATE OR REPLACE TRIGGER journal_no_truncate BEFORE TRUNCATE ON journal "
        "FOR EACH STATEMENT EXECUTE FUNCTION capacitysim_journal_append_only()",
    )
    #: A constant key of ``pg_advisory_xact_lock``: servers starting at once create the schema one at a time.
    SCHEMA_LOCK_KEY = 0x63617061  # 'capa'

    def __init__(self, url: str, *, timeout_s: float = 30.0):
        try:
            import psycopg
            from psycopg.rows import dict_row
            from psycopg_pool import ConnectionPool
        except ImportError as exc:
            raise InputError(f"{DATABASE_OPTION}: {redact(url)!r} needs psycopg 3 and its pool ({exc.name} is "
                             "missing): pip install 'capacitysim[service]'") from None
        self.url = url
        self.timeout_s = timeout_s
        self.integrity_errors = (psycopg.errors.IntegrityError,)
        kwargs = {"autocommit": True, "row_factory": dict_row, "connect_timeout": max(1, int(timeout_s))}
        try:  # connect once first: a wrong host, database or password is reported with the server's reason
            psycopg.connect(url, **kwargs).close()
        except psycopg.Error as exc:
            lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
            reason = lines[0].removeprefix("connection failed: ")[:300] if lines else type(exc).__name__
            raise InputError(f"{DATABASE_OPTION}: cannot connect to {redact(url)!r} ({reason}); allowed: a reachable "
                             f"PostgreSQL database, {ALLOWED}") from None
        self.pool = ConnectionPool(url, min_size=1, max_size=PG_POOL_MAX, kwargs=kwargs, timeout=timeout_s,
                                   check=ConnectionPool.check_connection, name="capacitysim-store", open=True)
        self._connect = lambda: psycopg.connect(url, **kwargs)
        self._beat = None
        self._beat_lock = threading.Lock()

    @property
    def display(self) -> str:
        return redact(self.url)

    @contextlib.contextmanager
    def tx(self):
        with self.pool.connection() as conn, conn.transaction():
            yield _PgConnection(conn)

    def read(self, sql: str, args=()) -> list:
        with self.pool.connection() as conn:
            return _PgConnection(conn).execute(sql, args).fetchall()

    @contextlib.contextmanager
    def beat_tx(self):
        """One transaction on the lease heartbeat's own connection, outside the pool: requests holding every
        pooled connection never delay a lease renewal past the lease (policy ``job_lease_s``)."""
        with self._beat_lock:
            if self._beat is None or self._beat.closed:
                self._beat = self._connect()
            try:
                with self._beat.transaction():
                    yield _PgConnection(self._beat)
            except Exception:
                if self._beat.broken:  # a connection lost: a new one at the next beat
                    self._beat.close()
                    self._beat = None
                raise

    @contextlib.contextmanager
    def schema_lock(self):
        with self.tx() as c:
            c.execute(f"SELECT pg_advisory_xact_lock({self.SCHEMA_LOCK_KEY})")
            yield c

    def columns(self, c, table: str) -> set[str]:
        rows = c.execute("SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema()"
                         " AND table_name = ?", (table,)).fetchall()
        return {r["column_name"] for r in rows}

    def close(self) -> None:
        with self._beat_lock:
            if self._beat is not None:
                self._beat.close()
                self._beat = None
        self.pool.close()


def backend(location: Location, *, timeout_s: float = 30.0):
    """The backend of a parsed location."""
    if location.kind == "postgresql":
        return PostgresBackend(location.target, timeout_s=timeout_s)
    return SQLiteBackend(location.target, timeout_s=timeout_s)
