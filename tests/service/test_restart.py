"""kill -9 of the server mid-job: after a restart the job ends (re-run: successful; past the policy: failed with
the reason), never stuck ``running``."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

import support
from support import Server, cli_json, free_port, seeded, wait_final

from capacitysim.io.files import bundled_dir

from capacitysim.service.runner import RESTART_ATTEMPTS

#: A demonstration long enough to be killed while it runs (a 240 h dry-weather spin-up: ~10 SWMM-seconds).
SLOW = {"model": "synthetic-50", "storm": "binghamton-1yr-24h", "connections": [{"node": "MH0003", "gpd": 5000}],
        "spinup_hr": 240}


def _wait_running(c, job_id: str, timeout_s: float = 120) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        st = c.get(f"/jobs/{job_id}").json()
        if st["status"] != "accepted":
            return st
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} never started")


@pytest.mark.server
def test_kill9_mid_job_then_restart(tmp_path):
    out = seeded(tmp_path)
    srv = Server(tmp_path, free_port(), workers=1, tokens=out["tokens"]).start()
    try:
        with srv.client("engineer") as c:
            job = c.post("/processes/capacity-demonstration/execution", json={"inputs": SLOW},
                         headers={"Prefer": "respond-async"}).json()["jobID"]
            assert _wait_running(c, job)["status"] == "running"
        srv.kill9()
        srv.port = free_port()
        srv.start()
        with srv.client("engineer") as c:
            st = c.get(f"/jobs/{job}").json()
            assert st["status"] in ("accepted", "running") and st["attempts"] == 2, st  # re-queued, not stuck
            st = wait_final(c, job)
            assert st["status"] == "successful" and st["attempts"] == 2, st
            cli = cli_json("capacity", "--model", "synthetic-50", "--storm", "binghamton-1yr-24h", "--connect",
                           "MH0003=5000", "--spinup-hr", "240")
            assert c.get(f"/jobs/{job}/results").content == cli

            # killed on every attempt: past the policy the job is failed, with the reason
            job2 = c.post("/processes/capacity-demonstration/execution", json={"inputs": SLOW},
                          headers={"Prefer": "respond-async"}).json()["jobID"]
            _wait_running(c, job2)
        for attempt in range(2, RESTART_ATTEMPTS + 2):
            srv.kill9()
            srv.port = free_port()
            srv.start()
            with srv.client("engineer") as c:
                if attempt <= RESTART_ATTEMPTS:
                    assert c.get(f"/jobs/{job2}").json()["attempts"] == attempt
                    _wait_running(c, job2)
        with srv.client("administrator") as c:
            st = c.get(f"/jobs/{job2}").json()
            assert st["status"] == "failed" and st["error"]["type"] == "restart", st
            assert "server stopped" in st["message"] and f"restart_attempts = {RESTART_ATTEMPTS}" in st["message"]
            acts = [(x["action"], x["target"]) for x in c.get("/journal").json()["journal"]]
            assert ("job-requeued", job) in acts and ("job-failed", job2) in acts
    finally:
        srv.stop()


@pytest.mark.dask
@pytest.mark.server
def test_jobs_on_an_existing_dask_scheduler(tmp_path):
    """``serve --scheduler ADDR``: jobs run on a dask.distributed cluster the service did not start."""
    dask = str(Path(sys.executable).with_name("dask"))
    port = free_port()
    addr = f"tcp://127.0.0.1:{port}"
    log = open(tmp_path / "cluster.log", "wb")
    procs = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                              stdout=log, stderr=log, start_new_session=True)]
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        procs.append(subprocess.Popen([dask, "worker", addr, "--nthreads", "1", "--nworkers", "1", "--no-dashboard"],
                                      stdout=log, stderr=log, start_new_session=True))
        out = seeded(tmp_path / "data")
        srv = Server(tmp_path / "data", free_port(), tokens=out["tokens"])
        cmd = [*support.CLI, "serve", "--data", str(srv.data), "--port", str(srv.port), "--scheduler", addr]
        srv.proc = subprocess.Popen(cmd, stdout=log, stderr=log, start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(srv.url + "/processes", timeout=2).status_code == 401:
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
        try:
            with srv.client("engineer") as c:
                r = c.post("/processes/credits-quantification/execution",
                           json={"inputs": {"project": "oak-street-sump-and-manholes"}})
                assert r.status_code == 200, r.text
                project = bundled_dir("models") / "projects" / "oak-street-sump-and-manholes.toml"
                assert r.content == cli_json("credits", "quantify", str(project))
                job = c.get(r.headers["Location"]).json()
                assert job["status"] == "successful" and job["versions"]["capacitysim"]
        finally:
            srv.stop()
    finally:
        for p in procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
