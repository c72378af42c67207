"""A private PostgreSQL server for the tests of the service's PostgreSQL store (real PostgreSQL, no mocks).

``initdb`` into a fresh folder and ``pg_ctl start`` on a free 127.0.0.1 port, its unix socket in that folder;
every test gets a database of its own (:func:`new_database`). The binaries are found on PATH, then under
``/usr/lib/postgresql/*/bin`` (Debian's ``postgresql`` package); the tests skip, saying so, only when there are
none at all. PostgreSQL refuses to run as root: as root the server runs as ``postgres`` (Debian creates it) or
else ``nobody``, through ``runuser`` (or ``setpriv``), in a folder that user owns.

Import the fixtures into a test module (``from pg_server import postgres, pg_url  # noqa: F401``).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

#: The database superuser the tests connect as (initdb ``-U``; trust authentication on 127.0.0.1 only).
SUPERUSER = "capacitysim"


def _find(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.access(os.path.join(d, name), os.X_OK):
            return os.path.join(d, name)
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_user() -> tuple[list[str], str | None]:
    """The command prefix that runs PostgreSQL unprivileged, and that user (None: already unprivileged)."""
    if os.geteuid() != 0:
        return [], None
    for user in ("postgres", "nobody"):
        try:
            pwd.getpwnam(user)
        except KeyError:
            continue
        if shutil.which("runuser"):
            return ["runuser", "-u", user, "--"], user
        if shutil.which("setpriv"):
            pw = pwd.getpwnam(user)
            return ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--init-groups"], user
    pytest.skip("running as root and neither runuser nor setpriv nor a postgres/nobody user exists: PostgreSQL "
                "refuses to run as root")


class PostgresServer:
    """One private PostgreSQL cluster (``initdb`` + ``pg_ctl``) on 127.0.0.1."""

    def __init__(self):
        initdb, pg_ctl = _find("initdb"), _find("pg_ctl")
        if initdb is None or pg_ctl is None:
            pytest.skip("no PostgreSQL binaries (initdb, pg_ctl) on PATH or under /usr/lib/postgresql/*/bin: "
                        "install Debian's postgresql package to run the PostgreSQL store tests")
        self.pg_ctl = pg_ctl
        self.prefix, user = _as_user()
        # not under pytest's tmp folder: its parent is mode 0700 for root, which the postgres user cannot enter
        self.root = Path(tempfile.mkdtemp(prefix="capacitysim-pg-"))
        self.pgdata = self.root / "data"
        self.socket_dir = self.root / "sock"
        self.socket_dir.mkdir()
        self.log = self.root / "server.log"
        if user is not None:
            pw = pwd.getpwnam(user)
            for p in (self.root, self.socket_dir):
                os.chown(p, pw.pw_uid, pw.pw_gid)
        self.port = _free_port()
        self._run([initdb, "-D", str(self.pgdata), "-U", SUPERUSER, "--auth=trust", "--encoding=UTF8",
                   "--no-locale", "--no-sync"])
        opts = (f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories={self.socket_dir} "
                "-c fsync=off -c max_connections=200")
        self._run([pg_ctl, "-D", str(self.pgdata), "-l", str(self.log), "-o", opts, "-w", "-t", "120", "start"])

    def _run(self, cmd: list[str]) -> None:
        r = subprocess.run([*self.prefix, *cmd], capture_output=True, text=True)
        if r.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.is_file() else ""
            raise RuntimeError(f"{' '.join(cmd[:1])} failed ({r.returncode}): {r.stderr[-2000:]}\n{log}")

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{dbname}"

    def new_database(self) -> str:
        """A new empty database; returns its URL."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:16]
        with psycopg.connect(self.url(), autocommit=True) as c:
            c.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        try:
            self._run([self.pg_ctl, "-D", str(self.pgdata), "-m", "immediate", "-w", "stop"])
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres():
    """The session's private PostgreSQL server."""
    pytest.importorskip("psycopg", reason="the PostgreSQL store needs psycopg 3 (pip install 'capacitysim[service]')")
    srv = PostgresServer()
    yield srv
    srv.stop()


@pytest.fixture()
def pg_url(postgres) -> str:
    """The URL of a new, empty database on the session's PostgreSQL server."""
    return postgres.new_database()
