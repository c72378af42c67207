"""A bounded load test on 127.0.0.1: 200 submissions from 20 clients; none lost, every job final.

The figures (submission latency p50/p99, jobs per minute) are printed (``pytest -s``) for the closing note;
no wall-clock threshold is asserted.
"""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest

from support import wait_final

pytestmark = [pytest.mark.server]

N_JOBS = 200
N_CLIENTS = 20
INPUTS = {"inputs": {"project": "oak-street-sump-and-manholes"}}


def test_200_submissions_from_20_clients(server):
    ids: list[str] = []
    latencies_s: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()

    def client(k: int) -> None:
        with server.client("engineer" if k % 2 else "administrator") as c:
            for _ in range(N_JOBS // N_CLIENTS):
                t0 = time.perf_counter()
                r = c.post("/processes/credits-quantification/execution", json=INPUTS, headers={"Prefer": "respond-async"})
                dt = time.perf_counter() - t0
                with lock:
                    if r.status_code == 201:
                        ids.append(r.json()["jobID"])
                        latencies_s.append(dt)
                    else:
                        errors.append(f"{r.status_code} {r.text[:200]}")

    start = time.perf_counter()
    threads = [threading.Thread(target=client, args=(k,)) for k in range(N_CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(ids) == N_JOBS and len(set(ids)) == N_JOBS
    with server.client("administrator") as c:
        finals = [wait_final(c, j, timeout_s=900) for j in ids]
        elapsed_s = time.perf_counter() - start
        statuses = {s["status"] for s in finals}
        assert statuses == {"successful"}, [s for s in finals if s["status"] != "successful"][:3]
        listed = {j["jobID"] for j in c.get("/jobs", params={"status": "successful"}).json()["jobs"]}
        assert set(ids) <= listed  # none lost from the store either
        # every job gave the same document (a deterministic process)
        digests = {s["result_sha256"] for s in finals}
        assert len(digests) == 1
    lat = np.array(latencies_s) * 1000.0
    figures = {"jobs": N_JOBS, "clients": N_CLIENTS, "workers": server.workers,
               "submission_latency_ms_p50": round(float(np.percentile(lat, 50)), 1),
               "submission_latency_ms_p99": round(float(np.percentile(lat, 99)), 1),
               "wall_s": round(elapsed_s, 1), "jobs_per_min": round(N_JOBS / elapsed_s * 60.0, 1)}
    print("\nLOAD", json.dumps(figures))
