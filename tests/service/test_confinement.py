"""A submitted model cannot read or write outside its job, through real HTTP (issue 23, critical 1 and 2).

The attacks of the issue and their class: a write aimed anywhere by every spelling the engine reads
(``[FILE]``, a quoted header, a header hidden past the engine's line buffer, SAVE HOTSTART, OUTFLOWS); a read of
a server path (``/etc/passwd``) answered exactly as a read of a missing one; another user's upload named by a
relative path; server paths in results; a dismissed job's engine processes; a model too large to run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest

from support import problem_ok, wait_final

pytestmark = [pytest.mark.server]

MODELS = Path(__file__).resolve().parents[1] / "data" / "models"
ASYNC = {"Prefer": "respond-async"}
SYNTHETIC_50 = Path(__file__).resolve().parents[2] / "models" / "synthetic-50.inp"


def _upload(c, name: str, data: bytes) -> str:
    r = c.post("/uploads", params={"filename": name}, content=data)
    assert r.status_code == 201, r.text
    return r.json()["id"]


def _model_with(lines: str) -> bytes:
    """synthetic-50 with ``lines`` put before its [JUNCTIONS] section."""
    text = SYNTHETIC_50.read_bytes().decode("latin-1")
    return text.replace("[JUNCTIONS]", lines + "\n\n[JUNCTIONS]", 1).encode("latin-1")


def _server_paths(server) -> list[str]:
    import capacitysim

    return [str(server.data.resolve()), str(Path(capacitysim.__file__).resolve().parent.parent), "/tmp/"]


def _run(c, inputs: dict) -> dict:
    r = c.post("/processes/capacity-demonstration/execution", json={"inputs": inputs}, headers=ASYNC)
    assert r.status_code == 201, r.text
    return wait_final(c, r.json()["jobID"])


@pytest.mark.parametrize("spelling", [
    '[FILE]\nSAVE OUTFLOWS "{p}"',
    '[TITLE]\n"[FILES]"\nSAVE OUTFLOWS "{p}"',
    ";" + "x" * 1022 + '[FILES]\nSAVEX HOTSTARTS "{p}"',
], ids=["FILE", "quoted-header", "long-line"])
def test_a_model_writes_only_in_its_run_folder(server, tmp_path, spelling):
    victim = tmp_path / "site-packages-like"
    victim.mkdir()
    target = victim / "planted.pth"
    with server.client("engineer") as c:
        model = _upload(c, "attack.inp", _model_with(spelling.replace("{p}", str(target))))
        st = _run(c, {"model": model, "storm": "binghamton-1yr-24h", "connections": [{"node": "MH0003", "gpd": 5000}]})
        assert st["status"] == "successful", st
        assert not target.exists() and not list(victim.iterdir())
        doc = c.get(f"/jobs/{st['jobID']}/results").text
        report = c.get(f"/jobs/{st['jobID']}/report").text
    for text in (doc, report, json.dumps(st)):
        for p in _server_paths(server):
            assert p not in text, p
    # the file the model asked for went into a run folder of the job's own (removed with it), never beside the
    # documents the service serves
    assert not list(server.data.rglob("planted.pth"))


def test_reading_a_server_path_is_refused_alike_whether_it_exists_or_not(server):
    answers = []
    with server.client("engineer") as c:
        for path in ("/etc/passwd", "/etc/no-such-file-capacitysim", "../" * 3 + "etc/passwd", "rain.dat"):
            model = _upload(c, "reader.inp", _model_with(f'[TIMESERIES]\nTS_EVIL FILE "{path}"'))
            r = c.post("/processes/capacity-demonstration/execution", headers=ASYNC, json={"inputs": {
                "model": model, "connections": [{"node": "MH0003", "gpd": 5000}]}})
            body = problem_ok(r, 400)
            assert body["field"] == "inputs.model"
            answers.append(json.dumps({k: v for k, v in body.items() if k != "value"}).replace(json.dumps(path)[1:-1], "P"))
    assert len(set(answers)) == 1, answers
    assert "uploaded with" in answers[0]


def test_another_users_upload_cannot_be_named_by_a_path(server):
    with server.client("engineer2") as other:
        secret = _upload(other, "secret.dat", b"0:00 1.0\n1:00 2.0\n")
    sha = secret.removeprefix("upload:")
    with server.client("engineer") as c:
        for path in (f"../{sha}/secret.dat", str(server.data / "uploads" / sha / "secret.dat"), "secret.dat"):
            model = _upload(c, "peek.inp", _model_with(f'[TIMESERIES]\nTS_PEEK FILE "{path}"'))
            r = c.post("/processes/capacity-demonstration/execution", headers=ASYNC, json={"inputs": {
                "model": model, "connections": [{"node": "MH0003", "gpd": 5000}]}})
            problem_ok(r, 400)
        # nor as a companion by its hash
        r = c.post("/processes/capacity-demonstration/execution", headers=ASYNC, json={"inputs": {
            "model": model, "model_files": [secret], "connections": [{"node": "MH0003", "gpd": 5000}]}})
        assert problem_ok(r, 400)["field"].startswith("inputs.model_files")


def test_a_model_with_its_uploaded_files_runs_as_the_cli_runs_it(server, tmp_path):
    """The CLI behaviour for a user's own files is kept: the external-files model, its rain file beside it."""
    src = MODELS / "external files"
    text = (src / "external-files.inp").read_bytes().decode("latin-1").replace('"rain data/rain.dat"', "rain.dat")
    rain = (src / "rain data" / "rain.dat").read_bytes()
    local = tmp_path / "m"
    local.mkdir()
    (local / "external-files.inp").write_bytes(text.encode("latin-1"))
    (local / "rain.dat").write_bytes(rain)
    from support import cli_json

    cli = json.loads(cli_json("capacity", "--model", str(local / "external-files.inp"), "--connect", "J1=5000"))
    with server.client("engineer") as c:
        model, rain_id = _upload(c, "external-files.inp", text.encode("latin-1")), _upload(c, "rain.dat", rain)
        r = c.post("/processes/capacity-demonstration/execution", headers=ASYNC, json={"inputs": {
            "model": model, "connections": [{"node": "J1", "gpd": 5000}]}})
        assert "rain.dat" in problem_ok(r, 400)["detail"]  # not uploaded with it: refused
        st = _run(c, {"model": model, "model_files": [rain_id], "connections": [{"node": "J1", "gpd": 5000}]})
        assert st["status"] == "successful", st
        doc = c.get(f"/jobs/{st['jobID']}/results").json()
    assert doc["verdict"] == cli["verdict"]
    assert [(k["criterion"], k["element"], k["after"]) for k in doc["checks"]] == \
        [(k["criterion"], k["element"], k["after"]) for k in cli["checks"]]


def test_a_run_larger_than_the_policy_is_refused_with_its_estimate(server):
    text = SYNTHETIC_50.read_bytes().decode("latin-1")
    text = re.sub(r"(?m)^END_DATE\s+\S+", "END_DATE 12/31/2099", text)
    text = re.sub(r"(?m)^ROUTING_STEP\s+\S+", "ROUTING_STEP 0.5", text)
    with server.client("engineer") as c:
        model = _upload(c, "century.inp", text.encode("latin-1"))
        r = c.post("/processes/capacity-demonstration/execution", headers=ASYNC, json={"inputs": {
            "model": model, "connections": [{"node": "MH0003", "gpd": 5000}]}})
        body = problem_ok(r, 400)
    assert body["field"] == "inputs.model" and "max_simulation_work" in body["allowed"]
    assert re.search(r"estimated at [\d,]+ routing or reporting steps .* x 99 elements", body["detail"]), body["detail"]


def _engine_children(marker: str) -> list[int]:
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "_child.py" in cmd and marker in cmd:
            out.append(int(pid))
    return out


def test_a_dismissed_job_leaves_no_engine_process(server):
    with server.client("engineer") as c:
        r = c.post("/processes/headroom/execution", headers=ASYNC, json={"inputs": {
            "model": "synthetic-50", "storms": ["binghamton-1yr-24h"], "method": "bisection", "tolerance_pct": 1}})
        assert r.status_code == 201, r.text
        job = r.json()["jobID"]
        deadline = time.monotonic() + 120
        while not _engine_children(job) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _engine_children(job), "the job's SWMM runs never started"
        assert c.delete(f"/jobs/{job}").status_code == 200
        t0 = time.monotonic()
        while _engine_children(job) and time.monotonic() - t0 < 10:
            time.sleep(0.1)
        left = _engine_children(job)
        gone_after_s = time.monotonic() - t0
    assert not left and gone_after_s < 5, (left, gone_after_s)
    # and no new run starts for it afterwards
    time.sleep(2)
    assert not _engine_children(job)


SWEEP = """name = "two flows"
kind = "swmm"
model = "{model}"
storm = "binghamton-1yr-24h"

[grid]
connect_node = ["MH0003"]
connect_gpd = [0, 5000]
"""


def test_an_uploaded_sweep_names_only_bundled_files_or_files_uploaded_with_it(server):
    with server.client("engineer") as c:
        for model in ("/etc/passwd", "../synthetic-50.inp", str(SYNTHETIC_50), "other.inp"):
            sweep = _upload(c, "s.toml", SWEEP.format(model=model).encode())
            r = c.post("/processes/sweep/execution", headers=ASYNC, json={"inputs": {"sweep": sweep}})
            body = problem_ok(r, 400)
            assert body["field"] == "inputs.sweep (model)" and "neither bundled nor uploaded" in body["detail"]
        # a model uploaded with the sweep is confined as inputs.model is
        evil = _upload(c, "net.inp", _model_with('[TIMESERIES]\nTS_EVIL FILE "/etc/passwd"'))
        sweep = _upload(c, "s.toml", SWEEP.format(model="net.inp").encode())
        r = c.post("/processes/sweep/execution", headers=ASYNC, json={"inputs": {"sweep": sweep, "sweep_files": [evil]}})
        assert "uploaded with" in problem_ok(r, 400)["detail"]
        # a bundled model by name, and an uploaded one by its bare name, run
        for model, files in (("synthetic-50", []), ("net.inp", [_upload(c, "net.inp", SYNTHETIC_50.read_bytes())])):
            sweep = _upload(c, "s.toml", SWEEP.format(model=model).encode())
            r = c.post("/processes/sweep/execution", headers=ASYNC, json={"inputs": {"sweep": sweep, "sweep_files": files}})
            assert r.status_code == 201, r.text
            st = wait_final(c, r.json()["jobID"])
            assert st["status"] == "successful", st


def test_serve_says_what_wall_the_engine_runs_behind_and_warns_as_root(server):
    from capacitysim.network.sandbox import status

    log = server.log_text()
    wall = status()
    if wall.startswith("unavailable"):
        assert "WARNING: no operating-system wall around SWMM runs" in log
    else:
        assert f"SWMM runs behind {wall}" in log
    assert ("WARNING: running as root" in log) == (os.geteuid() == 0)
    with server.client("engineer") as c:
        r = c.post("/processes/credits-quantification/execution", headers=ASYNC,
                   json={"inputs": {"project": "oak-street-sump-and-manholes"}})
        assert r.json()["versions"]["engine_sandbox"] == wall


def test_an_uploaded_sweep_names_only_a_bundled_rule_set(server):
    """A rule set file is looked up from the worker's own folder, not the job's (an attack read the server's
    pyproject.toml so): an uploaded sweep may name only a bundled rule set."""
    with server.client("engineer") as c:
        rules = _upload(c, "pyproject.toml", b'name = "x"\n')
        sweep = _upload(c, "d.toml", b'kind = "detention"\nsite = "alteration"\nrules = "pyproject.toml"\n'
                                     b'[grid]\nheight_ft = [3.0, 4.0]\n')
        r = c.post("/processes/sweep/execution", headers=ASYNC, json={"inputs": {"sweep": sweep, "sweep_files": [rules]}})
        assert problem_ok(r, 400)["field"] == "inputs.sweep (rules)"
