"""Overhead of a service job over the same CLI run (a measurement for the closing note, not a test).

    .venv/bin/python tests/service/measure_overhead.py [N]

Starts a server on 127.0.0.1 (one dask worker), runs one warm-up job, then N times (default 5), alternating:
``python -m capacitysim capacity --model synthetic-50 --storm binghamton-1yr-24h --connect MH0003=5000 --json``
(wall time of the process) and the same demonstration through ``POST /processes/capacity-demonstration/execution``
(synchronous: wall time of the HTTP request, and the job's own record: queued->finished, started->finished).
Prints the medians as JSON; checks every service result equals the CLI's bytes.
"""

from __future__ import annotations

import datetime as _dt
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from support import Server, free_port, seeded  # noqa: E402

ARGS = ["capacity", "--model", "synthetic-50", "--storm", "binghamton-1yr-24h", "--connect", "MH0003=5000", "--json"]
INPUTS = {"model": "synthetic-50", "storm": "binghamton-1yr-24h", "connections": [{"node": "MH0003", "gpd": 5000}]}


def _t(s: str) -> _dt.datetime:
    return _dt.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ")


def main(n: int = 5) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        srv = Server(data, free_port(), workers=1, tokens=seeded(data)["tokens"]).start()
        try:
            with srv.client("engineer") as c:
                c.post("/processes/capacity-demonstration/execution", json={"inputs": INPUTS})  # warm-up
                cli_s, http_s, queued_s, run_s = [], [], [], []
                for _ in range(n):
                    t0 = time.perf_counter()
                    out = subprocess.run([sys.executable, "-m", "capacitysim", *ARGS], capture_output=True).stdout
                    cli_s.append(time.perf_counter() - t0)
                    t0 = time.perf_counter()
                    r = c.post("/processes/capacity-demonstration/execution", json={"inputs": INPUTS})
                    http_s.append(time.perf_counter() - t0)
                    assert r.content == out, "the service's document differs from the CLI's"
                    job = c.get(r.headers["Location"]).json()
                    queued_s.append((_t(job["finished"]) - _t(job["created"])).total_seconds())
                    run_s.append((_t(job["finished"]) - _t(job["started"])).total_seconds())
        finally:
            srv.stop()
    med = {k: round(statistics.median(v), 2) for k, v in
           {"cli_process_s": cli_s, "service_http_s": http_s, "job_created_to_finished_s": queued_s,
            "job_started_to_finished_s": run_s}.items()}
    med["runs"] = n
    med["overhead_http_over_cli_s"] = round(med["service_http_s"] - med["cli_process_s"], 2)
    return med


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]) if len(sys.argv) > 1 else 5), indent=2))
