"""Support of tests/service: a real capacitysim server on 127.0.0.1 (uvicorn in a subprocess, a real dask cluster, real SQLite), and
httpx clients for each role of the demo data folder (capacitysim.service.demo).

A client may connect from another loopback address (``Server.client(role, source="127.0.0.7")``): the server
throttles failed authentications per client address (policy ``auth_failures_max``), so a test that sends bad
credentials on purpose uses an address of its own and never locks out the others (127.0.0.1)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

#: Start the CLI with its serve/users modules imported (they are registered in COMMANDS by the maintainer).
CLI = [sys.executable, "-c", "import capacitysim.cli.serve, capacitysim.cli.users; from capacitysim.cli import main; main()"]
#: How long to wait for a starting server to answer (a readiness wait, not a measured threshold) [s].
START_WAIT_S = 120
#: The options of a test server unless a test gives its own: tests queue many jobs of one user at once (200 in
#: test_load, 6 at once across two servers in test_postgres_service), past the service's default policy
#: max_active_jobs_per_user = 4, which test_limits_jobs.py tests on servers of its own.
TEST_ARGS = ("--limit", "max_active_jobs_per_user=1000")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    data: Path
    port: int
    workers: int = 1
    proc: subprocess.Popen | None = None
    tokens: dict = field(default_factory=dict)
    names: dict = field(default_factory=dict)
    flows: str = ""
    #: More options of ``capacitysim serve`` (``--limit NAME=VALUE``, ``--base-url``); by default :data:`TEST_ARGS`.
    #: A test of the limits themselves passes its own (``args=[]``: the service's defaults).
    args: list = field(default_factory=lambda: list(TEST_ARGS))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "Server":
        log = open(self.data / "server.log", "ab")
        self.proc = subprocess.Popen([*CLI, "serve", "--data", str(self.data), "--port", str(self.port),
                                      "--workers", str(self.workers), *self.args], stdout=log, stderr=log,
                                     start_new_session=True)
        deadline = time.monotonic() + START_WAIT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited {self.proc.returncode}: {(self.data / 'server.log').read_text()[-2000:]}")
            try:
                if httpx.get(self.url + "/processes", timeout=2).status_code == 401:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        raise RuntimeError("server did not start")

    def kill9(self) -> None:
        """SIGKILL the server's whole process group (uvicorn, the dask scheduler and workers)."""
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if self.proc is not None:
            try:  # the dask workers of the group, if any outlived the server
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def client(self, role: str | None, *, source: str | None = None, **kw) -> "httpx.Client":
        """An httpx client with the role's bearer token (none for ``role=None``), from the loopback address
        ``source`` when given."""
        headers = {"Authorization": f"Bearer {self.tokens[role]}"} if role else {}
        headers.update(kw.pop("headers", {}))
        if source is not None:
            kw["transport"] = httpx.HTTPTransport(local_address=source)
        return httpx.Client(base_url=self.url, headers=headers, timeout=kw.pop("timeout", 300), **kw)

    def log_text(self) -> str:
        """What the server wrote on stdout and stderr (uvicorn's access log among it)."""
        return (self.data / "server.log").read_text(errors="replace")


def seeded(data: Path, *, register_model: bool = False) -> dict:
    """The demo's data folder (``capacitysim.service.demo.seed``), by default without the basin's model of record:
    the shared server's jobs on ``synthetic-50`` then include no commitments, and its many withdrawals at MH0003
    (which does not drain to the demo's outlet) stand; test_capacity_register_http.py registers a model of its own."""
    from capacitysim.service.demo import seed

    return seed(data, register_model=register_model)


def add_user(data: Path, name: str, role: str) -> str:
    r = subprocess.run([*CLI, "users", "add", name, "--role", role, "--data", str(data)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def wait_final(client, job_id: str, timeout_s: float = 300) -> dict:
    """Poll a job until it is final (a wait, not a measured threshold)."""
    deadline = time.monotonic() + timeout_s
    while True:
        r = client.get(f"/jobs/{job_id}")
        assert r.status_code == 200, r.text
        st = r.json()
        if st["status"] in ("successful", "failed", "dismissed") or time.monotonic() > deadline:
            return st
        time.sleep(0.2)


def cli_json(*args: str) -> bytes:
    """The stdout of ``capacitysim ARGS --json`` (exit 0 or 1: a verdict), as the service serves it: every absolute
    server path cut to its name (``capacitysim.service.tasks.PathRedactor``; the CLI shows a user their own paths)."""
    from capacitysim.service.tasks import PathRedactor

    r = subprocess.run([sys.executable, "-m", "capacitysim", *args, "--json"], capture_output=True)
    assert r.returncode in (0, 1), r.stderr.decode()
    return PathRedactor(Path(tempfile.gettempdir()) / "jobs" / "x")(r.stdout.decode("utf-8")).encode("utf-8")


def problem_ok(r, status: int) -> dict:
    """A JSON problem document with the status."""
    assert r.status_code == status, (r.status_code, r.text)
    assert r.headers["content-type"].startswith("application/problem+json"), r.headers
    body = r.json()
    assert body["status"] == status and body["detail"]
    return body




@contextlib.contextmanager
def seeded_server(data: Path, *, workers: int = 2):
    """A server of its own on 127.0.0.1, seeded with the demo (:func:`seeded`) in ``data``: for a test whose requests
    must not move the credits of the session's shared server (tests/service/conftest.py)."""
    out = seeded(data)
    srv = Server(data, free_port(), workers=workers, tokens=dict(out["tokens"]), names=out["names"], flows=out["flows"])
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()
