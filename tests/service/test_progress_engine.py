"""A job's SWMM phase reports its simulated time and moves its percentage, and its owner cancels it (issue 28, item 5):
through real HTTP, a capacity demonstration of synthetic-500 (two runs of about 12 s side by side)."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from capacitysim.service.tasks import STAGES, Progress, engine_progress, progress_file

ASYNC = {"Prefer": "respond-async"}
LONG_JOB = {"model": "synthetic-500", "storm": "binghamton-1yr-24h", "connections": [{"node": "MH0003", "gpd": 5000}]}
#: The SWMM phase of a capacity demonstration: from its stage to the next [%].
LO, HI = dict(STAGES["capacity-demonstration"])["swmm-runs"], dict(STAGES["capacity-demonstration"])["judged"]
MESSAGE = re.compile(r"SWMM (before|after): simulated \d+\.\d of \d+\.\d (h|days) \(\d+ %\), "
                     r"(about \d+(\.\d)? (s|min|h) left|time left not yet known)")


def engine_children(job_dir: Path) -> list[int]:
    """The pids of the engine children (``_child.py``) running a run of the job (their files are in its folder)."""
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(a.endswith(b"_child.py") for a in cmd) and any(str(job_dir).encode() in a for a in cmd):
            pids.append(int(d.name))
    return pids


def _run(run: str, elapsed: float, total: float = 2.0, eta=10.0) -> dict:
    return {"run": run, "elapsed_days": elapsed, "total_days": total, "eta_s": eta, "done": False,
            "text": f"simulated {elapsed * 24:.1f} of {total * 24:.1f} h ({100 * elapsed / total:.0f} %), about {eta:.0f} s left"}


def test_the_swmm_phase_moves_the_bar_and_steps_keep_theirs(tmp_path):
    p = Progress(tmp_path, 1, "capacity-demonstration")
    p.stage("started")
    p.stage("inputs-checked")
    p.engine([_run("before", 1.0)])  # not the SWMM phase yet (a probe, a spin-up check): the message only
    assert p.pct == 10
    p.stage("swmm-runs")
    p.engine([_run("before", 0.5), _run("after", 0.5)])
    assert p.pct == 20 + 60 * 0.25 and p.message == ("SWMM before: simulated 12.0 of 48.0 h (25 %), about 10 s left; "
                                                     "SWMM after: simulated 12.0 of 48.0 h (25 %), about 10 s left")
    p.engine([_run("after", 2.0)])
    assert p.pct == 79  # one below the next stage at most
    p.engine([])  # no run: nothing changes
    assert p.pct == 79 and p.message.startswith("SWMM: simulated 48.0 of 48.0 h (100 %)")  # one run: no label
    info = json.loads(progress_file(tmp_path, 1).read_text())
    assert info["progress"] == 79 and [r["run"] for r in info["engine"]] == ["after"]
    p.stage("judged")
    assert json.loads(progress_file(tmp_path, 1).read_text())["engine"] == []
    # a headroom search: its steps move the bar, the runs are named after the step
    h = Progress(tmp_path, 2, "headroom")
    h.stage("started")
    h.stage("inputs-checked")
    h.step(1, 10, "1 of 10 cells, 3 SWMM runs")
    pct = h.pct
    h.engine([_run("scenario", 1.9)])
    assert h.pct == pct and h.message.startswith("1 of 10 cells, 3 SWMM runs; SWMM: simulated 45.6 of 48.0 h (95 %)")


@pytest.mark.server
@pytest.mark.swmm
def test_the_swmm_phase_moves_and_its_owner_cancels_it(server):
    with server.client("engineer") as c, server.client("engineer2") as other:
        r = c.post("/processes/capacity-demonstration/execution", headers=ASYNC, json={"inputs": LONG_JOB})
        assert r.status_code == 201, r.text
        job_id = r.json()["jobID"]
        job_dir = server.data / "jobs" / job_id
        seen: list[tuple[int, str]] = []
        runs_seen: list[dict] = []
        deadline = time.monotonic() + 120  # a wait for the runs to start and report, not a measured threshold
        while time.monotonic() < deadline:
            st = c.get(f"/jobs/{job_id}").json()
            assert st["status"] in ("accepted", "running"), st  # it takes long enough to be watched
            if MESSAGE.search(st["message"] or ""):
                seen.append((st["progress"], st["message"]))
            runs_seen += engine_progress(job_dir)
            inside = {p for p, _ in seen if LO < p < HI}
            if len(inside) >= 2 and runs_seen:
                break
            time.sleep(0.25)
        inside = {p for p, _ in seen if LO < p < HI}
        assert len(inside) >= 2, seen  # the percentage moves within the SWMM phase (it sat at 20 before)
        assert all(LO <= p < HI for p, _ in seen), seen
        assert any("before" in m and "after" in m for _, m in seen), seen  # both runs, side by side
        # what the job page calls: the runs, each with its simulated and wall times
        assert {r["run"] for r in runs_seen} <= {"before", "after"} and runs_seen
        for run in runs_seen:
            assert 0 <= run["elapsed_days"] <= run["total_days"] and 0 <= run["fraction"] <= 1
            assert run["start"] and run["now"] and run["wall_s"] >= 0 and "simulated" in run["text"]
        assert engine_children(job_dir), "the engine children run while the job runs"

        # another engineer can neither see nor cancel it (as GET answers for others' jobs)
        assert other.delete(f"/jobs/{job_id}").status_code == 403
        assert c.get(f"/jobs/{job_id}").json()["status"] == "running"

        # its owner cancels it: dismissed at once, its SWMM children gone within a few seconds
        t0 = time.monotonic()
        r = c.delete(f"/jobs/{job_id}")
        assert r.status_code == 200, r.text
        st = r.json()
        assert st["status"] == "dismissed" and st["message"] == f"dismissed by {server.names['engineer']}", st
        while engine_children(job_dir) and time.monotonic() - t0 < 10:
            time.sleep(0.1)
        gone_s = time.monotonic() - t0
        assert not engine_children(job_dir), "an engine child of the dismissed job still runs"
        assert gone_s < 3.0, gone_s  # STOP_POLL_S = 0.5 s between looks at the stop file, then SIGKILL
        time.sleep(1.5)  # the worker's task ends; nothing changes the dismissed record
        st = c.get(f"/jobs/{job_id}").json()
        assert st["status"] == "dismissed" and st["message"] == f"dismissed by {server.names['engineer']}", st
        # the runs' progress folders are removed with the runs; the stop file says who dismissed it
        deadline = time.monotonic() + 10
        while engine_progress(job_dir) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert engine_progress(job_dir) == []
        assert (job_dir / "stop").read_text() == f"dismissed by {server.names['engineer']}"
        assert not [p for p in engine_children(job_dir) if os.path.exists(f"/proc/{p}")]
