"""Several ``capacitysim serve`` processes on one PostgreSQL store (a private PostgreSQL server, real dask, real
HTTP on 127.0.0.1): both serve jobs, each job ends once; a kill -9 of one server mid-job while the other lives:
the other takes the job after the killed server's lease has run out and it ends successful; a revoked token gets
401 from every server."""

from __future__ import annotations

import datetime as _dt
import subprocess
import time

import pytest
from pg_server import postgres  # noqa: F401 - the session's PostgreSQL server (a fixture)
from support import CLI, Server, add_user, cli_json, free_port, problem_ok, wait_final

from capacitysim.io.files import bundled_dir

pytestmark = [pytest.mark.server, pytest.mark.postgres]

psycopg = pytest.importorskip("psycopg", reason="the PostgreSQL store needs psycopg 3 (pip install 'capacitysim[service]')")

#: The servers' lease (service policy job_lease_s) in these tests [s]: short, so a killed server's job is taken
#: soon; heartbeats every third of it.
LEASE_S = 5
CREDITS = {"project": "oak-street-sump-and-manholes"}
#: A demonstration long enough to be killed while it runs (a 240 h dry-weather spin-up), as in test_restart.
SLOW = {"model": "synthetic-50", "storm": "binghamton-1yr-24h", "connections": [{"node": "MH0003", "gpd": 5000}],
        "spinup_hr": 240}


@pytest.fixture()
def shared(postgres, tmp_path, monkeypatch):  # noqa: F811
    """A new PostgreSQL database for the store (``CAPACITYSIM_DATABASE_URL``), a data folder, users."""
    url = postgres.new_database()
    monkeypatch.setenv("CAPACITYSIM_DATABASE_URL", url)
    monkeypatch.setenv("CAPACITYSIM_LEASE_S", str(LEASE_S))
    data = tmp_path / "data"
    tokens = {"administrator": add_user(data, "Ada Lee", "administrator"),
              "engineer": add_user(data, "Eve Ng", "engineer"),
              "reviewer": add_user(data, "Rey Ortiz", "reviewer")}
    servers: list[Server] = []
    yield url, data, tokens, servers
    for s in servers:
        s.stop()


def _start(data, tokens, servers) -> Server:
    srv = Server(data, free_port(), workers=1, tokens=tokens).start()
    servers.append(srv)
    return srv


def _rows(url: str, sql: str, args=()):
    with psycopg.connect(url) as c:
        return c.execute(sql, args).fetchall()


def _journal(srv: Server) -> list[dict]:
    with srv.client("administrator") as c:
        return c.get("/journal", params={"limit": 10000}).json()["journal"]


def test_two_servers_on_one_postgresql_store_both_serve_jobs(shared):
    url, data, tokens, servers = shared
    a, b = _start(data, tokens, servers), _start(data, tokens, servers)
    assert (data / "service.sqlite").exists() is False  # the store is PostgreSQL, not the default file
    jobs = []
    for i in range(6):
        with (a if i % 2 == 0 else b).client("engineer") as c:
            r = c.post("/processes/credits-quantification/execution", json={"inputs": CREDITS},
                       headers={"Prefer": "respond-async"})
            assert r.status_code == 201, r.text
            jobs.append(r.json()["jobID"])
    expected = cli_json("credits", "quantify", str(bundled_dir("models") / "projects" / f"{CREDITS['project']}.toml"))
    for i, job in enumerate(jobs):
        with (b if i % 2 == 0 else a).client("engineer") as c:  # each server reads the other's jobs
            st = wait_final(c, job)
            assert st["status"] == "successful" and st["attempts"] == 1, st
            assert c.get(f"/jobs/{job}/results").content == expected
    ran_on = {r[0]: r[1] for r in _rows(url, "SELECT id, server_id FROM jobs")}
    live = {r[0] for r in _rows(url, "SELECT id FROM servers WHERE stopped_at IS NULL")}
    assert len(live) == 2 and {ran_on[j] for j in jobs} == live  # both servers ran jobs
    ends = [(r["action"], r["target"]) for r in _journal(a) if r["action"].startswith("job-")]
    assert sorted(ends) == sorted(("job-successful", j) for j in jobs)  # each job ended once, nothing re-queued

    # a revoked user's token is refused by every server sharing the store (401); the journal names the act
    with a.client("reviewer") as c:
        assert c.get("/jobs").status_code == 200
    r = subprocess.run([*CLI, "users", "revoke", "Rey Ortiz", "--data", str(data)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    for srv in (a, b):
        with srv.client("reviewer") as c:
            problem_ok(c.get("/jobs"), 401)
    assert ("revoke-user", "Rey Ortiz") in [(x["action"], x["target"]) for x in _journal(b)]
    listed = subprocess.run([*CLI, "users", "list", "--data", str(data)], capture_output=True, text=True).stdout
    assert "Rey Ortiz" in listed and "(revoked)" in listed.split("Rey Ortiz")[1].splitlines()[0]


def _wait_running(c, job_id: str, timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    while c.get(f"/jobs/{job_id}").json()["status"] == "accepted":
        assert time.monotonic() < deadline, f"job {job_id} never started"
        time.sleep(0.1)


def _epoch(iso: str) -> float:
    return _dt.datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=_dt.timezone.utc).timestamp()


def test_kill9_of_one_server_the_other_takes_its_job_after_the_lease(shared):
    url, data, tokens, servers = shared
    a = _start(data, tokens, servers)
    with a.client("engineer") as c:
        first = c.post("/processes/capacity-demonstration/execution", json={"inputs": SLOW},
                       headers={"Prefer": "respond-async"}).json()["jobID"]
        _wait_running(c, first)
    b = _start(data, tokens, servers)  # its start-up recovery, then its sweeps, while a's job runs
    with b.client("engineer") as c:
        st = wait_final(c, first)
        assert st["status"] == "successful" and st["attempts"] == 1, st  # a live server's job is left alone
        expected = c.get(f"/jobs/{first}/results").content
    with a.client("engineer") as c:
        job = c.post("/processes/capacity-demonstration/execution", json={"inputs": SLOW},
                     headers={"Prefer": "respond-async"}).json()["jobID"]
        _wait_running(c, job)
    a_id = _rows(url, "SELECT server_id FROM jobs WHERE id = %s", (job,))[0][0]
    a.kill9()
    with b.client("engineer") as c:
        st = wait_final(c, job)
        assert st["status"] == "successful" and st["attempts"] == 2, st
        assert c.get(f"/jobs/{job}/results").content == expected  # the same inputs give the same document
    b_id = _rows(url, "SELECT server_id FROM jobs WHERE id = %s", (job,))[0][0]
    assert b_id != a_id
    requeued = [r for r in _journal(b) if (r["action"], r["target"]) == ("job-requeued", job)]
    assert len(requeued) == 1 and (requeued[0]["detail"]["from_server"], requeued[0]["detail"]["by_server"]) == (a_id, b_id)
    (a_lease_until,) = _rows(url, "SELECT lease_until FROM servers WHERE id = %s", (a_id,))[0]
    assert _epoch(requeued[0]["at"]) >= a_lease_until  # taken only once the killed server's lease had run out
    assert [r for r in _journal(b) if r["action"] == "job-successful" and r["target"] == job][0]["detail"]["attempt"] == 2


def test_bad_database_url_exits_2_naming_the_option(tmp_path):
    r = subprocess.run([*CLI, "serve", "--data", str(tmp_path), "--database", "mysql://u:pw@h/db"], capture_output=True,
                       text=True)
    assert r.returncode == 2 and "--database" in r.stderr and "mysql://u:***@h/db" in r.stderr and "pw@" not in r.stderr
    assert "postgresql://USER" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([*CLI, "users", "list", "--data", str(tmp_path), "--database", f"postgresql://u@127.0.0.1:{free_port()}/db"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "--database: cannot connect to" in r.stderr and "Traceback" not in r.stderr
