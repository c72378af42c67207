"""The service's API through real HTTP on 127.0.0.1: processes, jobs, results equal to the CLI's, inputs, roles."""

from __future__ import annotations

import hashlib
import json

import pytest

from capacitysim.io.bundled import model_path

from support import cli_json, problem_ok, wait_final

pytestmark = [pytest.mark.server]

CAP = {"model": "synthetic-50", "storm": "binghamton-1yr-24h", "connections": [{"node": "MH0003", "gpd": 5000}]}
ASYNC = {"Prefer": "respond-async"}


#: The loopback address this module's wrong tokens come from (failed authentications are counted per address).
SOURCE = "127.0.0.2"


def test_every_request_needs_a_valid_token(server):
    for path in ("/processes", "/jobs", "/bank/balances", "/", "/journal", "/openapi.json"):
        body = problem_ok(server.client(None).get(path), 401)
        assert "Bearer" in body["detail"]
    r = server.client(None, source=SOURCE, headers={"Authorization": "Bearer cs1.0000000000000000.nope"}).get("/processes")
    problem_ok(r, 401)
    # a real key id with a wrong secret is refused too
    key = server.tokens["engineer"].split(".")[1]
    problem_ok(server.client(None, source=SOURCE, headers={"Authorization": f"Bearer cs1.{key}.wrong"}).get("/jobs"), 401)


def test_processes_list_and_describe(server):
    with server.client("reviewer") as c:
        ids = [p["id"] for p in c.get("/processes").json()["processes"]]
        assert ids == ["capacity-demonstration", "detention-design", "spdes-check", "headroom",
                       "credits-quantification", "metered-credit", "capacity-register", "sweep"]
        d = c.get("/processes/capacity-demonstration").json()
        schema = d["inputsSchema"]
        assert schema["required"] == ["model"] and "synthetic-50" in schema["properties"]["model"]["x-bundled"]
        assert schema["properties"]["connections"]["items"]["required"] == ["node", "gpd"]
        assert d["outputs"]["result"]["schema"]["type"] == "object"
        body = problem_ok(c.get("/processes/no-such"), 404)
        assert "capacity-demonstration" in body["detail"]


def test_sync_capacity_result_is_the_cli_document(server):
    with server.client("engineer") as c:
        r = c.post("/processes/capacity-demonstration/execution", json={"inputs": CAP})
        assert r.status_code == 200, r.text
        cli = cli_json("capacity", "--model", "synthetic-50", "--storm", "binghamton-1yr-24h", "--connect", "MH0003=5000")
        assert r.content == cli  # byte for byte: same keys, same values, same verdict
        assert r.json()["verdict"] == "pass"
        job = c.get(r.headers["Location"]).json()
        assert job["status"] == "successful" and job["verdict"] == "pass" and job["progress"] == 100
        # the record names the versions and the SHA-256 of every input file
        assert job["input_sha256"]["model"] == hashlib.sha256(model_path("synthetic-50").read_bytes()).hexdigest()
        assert set(job["versions"]) >= {"capacitysim", "engine", "rule_sets"}
        assert job["versions"]["engine"]["swmm-toolkit"] and job["versions"]["engine"]["swmm"].startswith("5.2.")
        rep = c.get(f"{r.headers['Location']}/report")
        assert rep.status_code == 200 and rep.headers["content-type"].startswith("text/html")
        assert "MH0003" in rep.text


def test_async_failing_demonstration(server):
    with server.client("engineer") as c:
        inputs = CAP | {"connections": [{"node": "MH0020", "gpd": 5000}]}
        r = c.post("/processes/capacity-demonstration/execution", json={"inputs": inputs}, headers=ASYNC)
        assert r.status_code == 201, r.text
        loc = r.headers["Location"]
        assert loc == f"{server.url}/jobs/{r.json()['jobID']}" and r.json()["status"] in ("accepted", "running")
        st = wait_final(c, r.json()["jobID"])
        assert st["status"] == "successful" and st["verdict"] == "fail"  # the job ran; the demonstration failed
        res = c.get(f"{loc}/results")
        cli = cli_json("capacity", "--model", "synthetic-50", "--storm", "binghamton-1yr-24h", "--connect", "MH0020=5000")
        assert res.content == cli and res.json()["failed_checks"] > 0


def test_credits_and_spdes_results_are_the_cli_documents(server):
    from capacitysim.io.files import bundled_dir

    project = bundled_dir("models") / "projects" / "oak-street-sump-and-manholes.toml"
    with server.client("engineer") as c:
        r = c.post("/processes/credits-quantification/execution",
                   json={"inputs": {"project": "oak-street-sump-and-manholes", "inflow_basis": "peak"}})
        assert r.status_code == 200, r.text
        assert r.content == cli_json("credits", "quantify", str(project), "--inflow-basis", "peak")
        flows = c.get("/jobs").json()  # warm: the list works for an engineer
        assert isinstance(flows["jobs"], list)
        r = c.post("/processes/spdes-check/execution", json={"inputs": {
            "plant": "sample-wwtp", "flows": "sample-wwtp", "added_gpd": [5000], "as_of": "2024-12-31"}})
        assert r.status_code == 200, r.text
        cli = cli_json("spdes", "check", "--plant", "sample-wwtp", "--flows", "sample-wwtp", "--added-gpd", "5000",
                       "--as-of", "2024-12-31")
        assert r.content == cli


def test_a_job_the_workflow_refuses_fails_with_the_reason(server):
    with server.client("engineer") as c:
        # the bundled record ends in 2024: a check as of 2026 has no period in its window (the CLI exits 2)
        r = c.post("/processes/spdes-check/execution", json={"inputs": {
            "plant": "sample-wwtp", "flows": "sample-wwtp", "as_of": "2030-01-01"}}, headers=ASYNC)
        st = wait_final(c, r.json()["jobID"])
        assert st["status"] == "failed" and st["error"]["type"] == "input" and "look-back window" in st["message"]
        problem_ok(c.get(f"/jobs/{st['jobID']}/results"), 404)
        # synchronously the same failure is a 400 naming the job
        r = c.post("/processes/spdes-check/execution", json={"inputs": {
            "plant": "sample-wwtp", "flows": "sample-wwtp", "as_of": "2030-01-01"}})
        body = problem_ok(r, 400)
        assert body["job"] and "look-back window" in body["detail"]


def test_bad_inputs_are_400_naming_field_value_and_allowed(server):
    cases = [
        ({"model": "nope"}, "inputs.model", "synthetic-50"),
        ({"model": "synthetic-50", "connections": [{"node": "MH0003", "gpd": -5}]}, "inputs.connections[0].gpd", "number"),
        ({"model": "synthetic-50", "connections": [{"node": "XX99", "gpd": 5}]}, "inputs.connections[0].node", "node of the model"),
        ({"model": "synthetic-50", "connections": [{"node": "MH0003", "gpd": 5, "x": 1}]}, "inputs.connections[0].x", "keys"),
        ({"model": "synthetic-50", "storm": "upload:" + "0" * 64, "connections": [{"node": "MH0003", "gpd": 5}]},
         "inputs.storm", "upload"),
        ({"model": "synthetic-50", "peaking": 0.5, "connections": [{"node": "MH0003", "gpd": 5}]}, "inputs.peaking", "pattern"),
        ({"model": "synthetic-50"}, "inputs.connections", "at least one connection"),
        ({"model": "synthetic-50", "criteria": {"max_d_over_d": "high"}, "connections": [{"node": "MH0003", "gpd": 5}]},
         "inputs.criteria.max_d_over_d", "number"),
        ({"connections": []}, "inputs.model", "missing"),
    ]
    with server.client("engineer") as c:
        for inputs, field, allowed in cases:
            body = problem_ok(c.post("/processes/capacity-demonstration/execution", json={"inputs": inputs}), 400)
            assert body["field"] == field, body
            assert allowed in body["allowed"] or allowed in body["detail"], body
        problem_ok(c.post("/processes/capacity-demonstration/execution", content=b"{not json",
                          headers={"Content-Type": "application/json"}), 400)
        problem_ok(c.post("/processes/capacity-demonstration/execution", json=[1, 2]), 400)
        body = problem_ok(c.post("/processes/spdes-check/execution", json={"inputs": {"plant": "sample-wwtp"}}), 400)
        assert body["field"] == "inputs.flows"
        problem_ok(c.get("/jobs/" + "f" * 32), 404)
        problem_ok(c.get("/jobs/not-an-id"), 404)
        problem_ok(c.get("/jobs", params={"status": "weird"}), 400)


def test_uploads_are_named_by_their_sha256(server):
    data = model_path("synthetic-50").read_bytes()
    with server.client("engineer") as c:
        r = c.post("/uploads", params={"filename": "../../my model.inp"}, content=data)
        assert r.status_code == 201, r.text
        up = r.json()
        assert up["sha256"] == hashlib.sha256(data).hexdigest() and up["filename"] == "my_model.inp"
        r = c.post("/processes/capacity-demonstration/execution",
                   json={"inputs": CAP | {"model": up["id"]}})
        assert r.status_code == 200 and r.json()["verdict"] == "pass"
        assert r.json()["model_sha256"] == up["sha256"]
        problem_ok(c.post("/uploads", content=b""), 400)
    with server.client("reviewer") as c:
        problem_ok(c.post("/uploads", content=b"x"), 403)


def test_roles_jobs_visibility_and_dismissal(server):
    inputs = {"project": "oak-street-sump-and-manholes"}
    with server.client("engineer") as eng, server.client("engineer2") as eng2, server.client("reviewer") as rev, \
            server.client("municipal") as mun, server.client("administrator") as adm:
        r = eng.post("/processes/credits-quantification/execution", json={"inputs": inputs}, headers=ASYNC)
        job = r.json()["jobID"]
        wait_final(eng, job)
        # reviewers and municipal users read every job; another engineer does not see it
        assert rev.get(f"/jobs/{job}").status_code == 200
        assert rev.get(f"/jobs/{job}/results").status_code == 200
        assert mun.get(f"/jobs/{job}").status_code == 200
        problem_ok(eng2.get(f"/jobs/{job}"), 403)
        problem_ok(eng2.get(f"/jobs/{job}/results"), 403)
        assert job not in [j["jobID"] for j in eng2.get("/jobs").json()["jobs"]]
        assert job in [j["jobID"] for j in rev.get("/jobs").json()["jobs"]]
        # reviewers and municipal users submit nothing
        for c in (rev, mun):
            problem_ok(c.post("/processes/credits-quantification/execution", json={"inputs": inputs}), 403)
        # only the owner (or an administrator) dismisses
        problem_ok(rev.delete(f"/jobs/{job}"), 403)
        problem_ok(eng2.delete(f"/jobs/{job}"), 403)
        r = eng.delete(f"/jobs/{job}")
        assert r.status_code == 200 and r.json()["status"] == "dismissed"
        problem_ok(eng.get(f"/jobs/{job}/results"), 404)
        # the journal names who did what, refusals included; only administrators and reviewers read it
        problem_ok(eng.get("/journal"), 403)
        rows = adm.get("/journal", params={"limit": 500}).json()["journal"]
        mine = [(x["user_name"], x["action"], x["outcome"]) for x in rows if x["target"] == job]
        assert (server.names["engineer"], "submit", "ok") in mine
        assert (server.names["engineer"], "dismiss", "ok") in mine
        assert (server.names["reviewer"], "dismiss", "forbidden") in mine
        assert (server.names["reviewer"], "read-results", "ok") in mine
        assert ("Second Engineer", "read jobs", "forbidden") in mine
        problem_ok(adm.get("/journal", params={"limit": 0}), 400)
        assert {u["role"] for u in adm.get("/users").json()["users"]} == {"engineer", "administrator", "municipal", "reviewer"}
        problem_ok(rev.get("/users"), 403)
        assert "token" not in json.dumps(adm.get("/users").json())
