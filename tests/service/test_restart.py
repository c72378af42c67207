"""kill -9 of the server mid-job: after a restart the job ends (re-run: successful; past the policy: failed with
the reason), never stuck ``running``."""

from __future__ import annotations

import time

from support import Server, cli_json, free_port, seeded, wait_final

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
