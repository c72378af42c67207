"""Every process reports named stages (capacitysim.service.tasks.STAGES): after a job ends, its progress file keeps
the stages reached, in order, and the job page lists them; a failed job shows the last stage it reached."""

from __future__ import annotations

import json

import pytest
from support import wait_final

from capacitysim.service.tasks import STAGES, Progress, progress_file, read_progress

ASYNC = {"Prefer": "respond-async"}

JOBS = {
    "capacity-demonstration": {"model": "synthetic-50", "storm": "binghamton-1yr-24h",
                               "connections": [{"node": "MH0003", "gpd": 5000}]},
    "detention-design": {"site": "new-building"},
    "spdes-check": {"plant": "sample-wwtp", "flows": None, "added_gpd": [5000]},  # flows: the server's recent record
    "credits-quantification": {"project": "oak-street-sump-and-manholes"},
    "headroom": {"model": "synthetic-50", "storms": ["binghamton-1yr-24h"], "nodes": ["MH0003"]},
    "sweep": {"sweep": "detention-family"},
}


def _run(server, c, process, inputs) -> dict:
    r = c.post(f"/processes/{process}/execution", headers=ASYNC, json={"inputs": inputs})
    assert r.status_code == 201, r.text
    return wait_final(c, r.json()["jobID"])


def _stages(server, job) -> list[dict]:
    info = read_progress(server.data / "jobs" / job["jobID"], job["attempts"])
    assert info is not None, job
    return info["stages"]


def test_the_stages_of_each_process():
    # the table the jobs follow: each process starts, checks its inputs and climbs towards 100 (set at the end)
    for process, stages in STAGES.items():
        names = [n for n, _ in stages]
        levels = [p for _, p in stages]
        assert names[:2] == ["started", "inputs-checked"], process
        assert levels == sorted(levels) and len(set(names)) == len(names) and 0 <= levels[0] and levels[-1] < 100
    assert [n for n, _ in STAGES["capacity-demonstration"]] == ["started", "inputs-checked", "swmm-runs", "judged",
                                                                "report-written"]


@pytest.mark.server
@pytest.mark.parametrize("process", list(JOBS))
def test_a_job_reaches_every_stage_of_its_process(server, process):
    inputs = dict(JOBS[process])
    if process == "spdes-check":
        inputs["flows"] = server.flows
    with server.client("engineer") as c:
        job = _run(server, c, process, inputs)
        assert job["status"] == "successful", job
        assert job["progress"] == 100
        stages = _stages(server, job)
        assert [s["stage"] for s in stages] == [n for n, _ in STAGES[process]]
        assert [s["progress"] for s in stages] == [p for _, p in STAGES[process]]
        assert [s["at"] for s in stages] == sorted(s["at"] for s in stages)
        # GET /jobs/{id} carries the same stages (its statusInfo plus "stages")
        assert c.get(f"/jobs/{job['jobID']}").json()["stages"] == stages
        if process in ("capacity-demonstration", "spdes-check"):
            verdict_stage = {"capacity-demonstration": "judged", "spdes-check": "checked"}[process]
            msg = next(s["message"] for s in stages if s["stage"] == verdict_stage)
            assert msg.endswith(f"verdict {job['verdict']}"), (msg, job["verdict"])
        if process == "credits-quantification":
            doc = c.get(f"/jobs/{job['jobID']}/results").json()
            assert stages[-1]["message"] == f"{doc['total_gpd']:,.0f} gpd of I/I removal quantified"
    # the job page lists the stages reached (through HTTP, the engineer's web session)
    from test_web import sign_in

    with sign_in(server, "engineer") as w:
        page = w.get(f"/ui/jobs/{job['jobID']}").text
        for name, _ in STAGES[process]:
            assert f'class="stage-{name}"' in page, name


@pytest.mark.server
def test_a_failed_job_shows_how_far_it_went(server):
    with server.client("engineer") as c:
        # the flow record ends years before as_of: the check refuses after its inputs were read
        job = _run(server, c, "spdes-check", {"plant": "sample-wwtp", "flows": "sample-wwtp", "as_of": "2030-01-01",
                                              "added_gpd": [5000]})
        assert job["status"] == "failed"
        stages = _stages(server, job)
        assert [s["stage"] for s in stages] == ["started", "inputs-checked", "failed"]
        assert stages[-1]["message"] == job["message"] and stages[-1]["progress"] == 10
        # a site file that does not parse fails before its inputs are checked
        up = c.post("/uploads", params={"filename": "site.toml"}, content=b"[site]\nname = 1\n").json()["id"]
        job = _run(server, c, "detention-design", {"site": up})
        assert job["status"] == "failed"
        assert [s["stage"] for s in _stages(server, job)] == ["started", "failed"]


def test_progress_never_goes_back_and_keeps_its_history(tmp_path):
    p = Progress(tmp_path, 1, "headroom")
    p.stage("started")
    p.stage("inputs-checked", "one node")
    p(5, "a late step", force=True)  # below the stage reached: the bar does not go back
    info = json.loads(progress_file(tmp_path, 1).read_text())
    assert info["progress"] == 10 and info["message"] == "a late step"
    p.span("inputs-checked", "searched")(0.5, "half the cells")
    p(250, "too far", force=True)
    assert read_progress(tmp_path, 1)["progress"] == 99  # 100 is the server's, when the job ends successful
    p.stage("failed", "boom")
    info = read_progress(tmp_path, 1)
    assert [s["stage"] for s in info["stages"]] == ["started", "inputs-checked", "failed"]
    assert info["stages"][-1]["progress"] == 99
    with pytest.raises(KeyError):
        p.stage("report-written-twice")
    assert read_progress(tmp_path, 2) is None
