"""The other processes give the CLI's documents: detention design, headroom, a sweep; the catalogue's validation."""

from __future__ import annotations

import json

import pytest

from capacitysim.io.files import bundled_dir
from capacitysim.service.processes import ServiceInputError, check_value

from support import cli_json, wait_final

ASYNC = {"Prefer": "respond-async"}


def _result(c, process, inputs):
    r = c.post(f"/processes/{process}/execution", json={"inputs": inputs}, headers=ASYNC)
    assert r.status_code == 201, r.text
    st = wait_final(c, r.json()["jobID"])
    assert st["status"] == "successful", st
    return st, c.get(f"/jobs/{st['jobID']}/results")


@pytest.mark.server
def test_detention_design_is_the_cli_document(server):
    site = bundled_dir("models") / "sites" / "new-building.toml"
    with server.client("engineer") as c:
        st, res = _result(c, "detention-design", {"site": "new-building"})
        assert res.content == cli_json("detention", str(site))
        assert c.get(f"/jobs/{st['jobID']}/report").status_code == 200


def _without(doc: dict, *keys) -> dict:
    return {k: v for k, v in doc.items() if k not in keys}


@pytest.mark.server
def test_headroom_is_the_cli_document(server):
    with server.client("engineer") as c:
        st, res = _result(c, "headroom", {"model": "synthetic-50", "storms": ["binghamton-1yr-24h"], "nodes": ["MH0003"]})
        cli = json.loads(cli_json("headroom", "--model", "synthetic-50", "--storm", "binghamton-1yr-24h", "--nodes",
                                  "MH0003", "--workers", "0", "--no-progress"))
        doc = res.json()
        assert list(doc) == list(cli)  # the same keys, in the same order
        # the same figures; only the run time differs
        assert _without(doc, "seconds") == _without(cli, "seconds")


@pytest.mark.server
def test_a_headroom_screening_is_the_cli_document_and_claims_no_figure(server):
    inputs = {"model": "synthetic-50", "storms": ["binghamton-1yr-24h"], "nodes": ["MH0003", "MH0010"]}
    with server.client("engineer") as c:
        st, res = _result(c, "headroom", {**inputs, "screen_only": True})
        cli = json.loads(cli_json("headroom", "--model", "synthetic-50", "--storm", "binghamton-1yr-24h", "--nodes",
                                  "MH0003,MH0010", "--screen-only", "--workers", "0", "--no-progress"))
        doc = res.json()
        assert _without(doc, "seconds") == _without(cli, "seconds")
        assert doc["screen_only"] is True and doc["nodes_screened"] == 2 and doc["runs_total"] == 1
        assert [n["max_connection_gpd"] for n in doc["nodes"]] == [None, None]
        for bad in ("yes", 1, None, ["true"]):  # a boolean, nothing else
            r = c.post("/processes/headroom/execution", json={"inputs": {**inputs, "screen_only": bad}}, headers=ASYNC)
            assert r.status_code == 400 and "screen_only" in r.text, (bad, r.status_code, r.text)


@pytest.mark.server
def test_sweep_is_the_cli_document(server, tmp_path):
    sweep = bundled_dir("models") / "sweeps" / "detention-family.toml"
    with server.client("engineer") as c:
        st, res = _result(c, "sweep", {"sweep": "detention-family"})
        cli = json.loads(cli_json("sweep", "run", str(sweep), "--out", str(tmp_path / "family.zarr"), "--workers", "0",
                                  "--no-progress"))
        doc = res.json()
        assert list(doc) == list(cli)
        # the store is in the job's folder (the CLI's is where --out says); the run time differs
        assert doc["out"].endswith("family.zarr") is False and doc["out"].endswith("sweep.zarr")
        assert _without(doc, "out", "seconds") == _without(cli, "out", "seconds")


@pytest.mark.parametrize("value, schema, field", [
    (1.5, {"type": "integer"}, "x"),
    (True, {"type": "number"}, "x"),
    (float("nan"), {"type": "number"}, "x"),
    ("2024-02-30", {"type": "string", "format": "date"}, "x"),
    ([1, "a"], {"type": "array", "items": {"type": "number"}}, "x[1]"),
    ({"a": 1}, {"type": "object", "properties": {}, "additionalProperties": False}, "x.a"),
    ({}, {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"]}, "x.b"),
    ("z", {"oneOf": [{"type": "string", "enum": ["pattern"]}, {"type": "number"}]}, "x"),
])
def test_validation_names_the_field(value, schema, field):
    with pytest.raises(ServiceInputError) as e:
        check_value("x", value, schema)
    assert e.value.field == field and e.value.allowed


def test_validation_accepts_valid_values():
    assert check_value("x", 2, {"type": "number", "exclusiveMinimum": 0}) == 2
    assert check_value("x", "pattern", {"oneOf": [{"type": "string", "enum": ["pattern"]}, {"type": "number"}]})
    assert check_value("x", "2024-02-29", {"type": "string", "format": "date"})


# --- storm specs in the service (issue 28, item 4) -------------------------------------------------------------


def test_a_storm_spec_is_checked_in_the_server_and_names_no_file():
    from capacitysim.io.storms import load_storm
    from capacitysim.processes import get
    from capacitysim.service.processes import prepare
    from capacitysim.service.tasks import job_inputs

    p = prepare("headroom", {"inputs": {"model": "synthetic-50", "storms": ["binghamton-1yr-24h", "type2:3.2in"],
                                        "nodes": ["MH0003"]}}, lambda sha: None)
    assert "storms[0]" in p.files and "storms[1]" not in p.files  # the spec is no file: nothing to hash or stage
    values = job_inputs(get("headroom"), p.inputs, p.files)
    assert values["storms"] == [p.files["storms[0]"], "type2:3.2in"]
    typed = get("headroom").validate(values, source="service")
    assert typed["storms"][1] == load_storm("type2:3.2in")
    with pytest.raises(ServiceInputError) as err:
        prepare("capacity-demonstration", {"inputs": {"model": "synthetic-50", "storm": "type2:3.2in:6h",
                                                      "connections": [{"node": "MH0003", "gpd": 3000}]}}, lambda sha: None)
    assert err.value.field == "inputs.storm" and "only 24h is allowed" in str(err.value)
    with pytest.raises(ServiceInputError) as err:  # a path is never read as a spec or a file
        prepare("capacity-demonstration", {"inputs": {"model": "synthetic-50", "storm": "/etc/passwd",
                                                      "connections": [{"node": "MH0003", "gpd": 3000}]}}, lambda sha: None)
    assert err.value.field == "inputs.storm"


@pytest.mark.server
def test_a_capacity_job_runs_a_storm_spec(server):
    with server.client("engineer") as c:
        st, res = _result(c, "capacity-demonstration", {"model": "synthetic-50", "storm": "type2:3.2in",
                                                        "connections": [{"node": "MH0003", "gpd": 3000}]})
        doc = res.json()
        assert doc["storm"] == "NRCS Type II 24-hour, 3.2 in" and doc["storm_record"]["depth_in"] == 3.2


def _metered_doc() -> bytes:
    rtk = {"R1": 0.02, "R2": 0.03, "R3": 0.04, "T1": 1.0, "T2": 2.0, "T3": 3.0, "K1": 2.0, "K2": 2.0, "K3": 2.0}
    return json.dumps({"kind": "metered-credit", "area_ac": 40.0, "pe": {"name": "A. Example, PE", "license": "012345"},
                       "credit": {"claimed_gpd": 9000.0, "pre_rtk": rtk, "post_rtk": rtk | {"R3": 0.01}}}).encode()


def test_measured_ii_names_only_uploads_and_nodes_of_the_model():
    """issue 29, item 5: the analysis of a measured I/I item is an upload (never a path, never a bundled name), and
    its nodes are the model's, checked before any job exists."""
    from capacitysim.service.processes import prepare

    base = {"model": "synthetic-50", "connections": [{"node": "MH0003", "gpd": 3000}]}
    for analysis in ("/etc/passwd", "../credit.json", "synthetic-50", "upload:" + "0" * 64):
        with pytest.raises(ServiceInputError) as err:
            prepare("capacity-demonstration", {"inputs": base | {"measured_ii": [{"analysis": analysis, "nodes": ["MH0003"]}]}},
                    lambda sha: None)
        assert err.value.field == "inputs.measured_ii[0].analysis"
    with pytest.raises(ServiceInputError) as err:
        prepare("capacity-demonstration", {"inputs": base | {"measured_ii": [{"analysis": "upload:" + "a" * 64,
                                                                              "nodes": ["MH0003", "MH9999"]}]}},
                lambda sha: __file__)
    assert err.value.field == "inputs.measured_ii[0].nodes[1]" and "a node of the model" in str(err.value)
    with pytest.raises(ServiceInputError) as err:
        prepare("capacity-demonstration", {"inputs": base | {"measured_ii": [{"analysis": "upload:" + "a" * 64,
                                                                              "nodes": ["MH0003"], "period": "later"}]}},
                lambda sha: __file__)
    assert err.value.field == "inputs.measured_ii[0].period"
    for gauge in ("RG1\n[FILES]\nUSE RAINFALL /etc/passwd", "RG9", "MH0003"):  # text, another gauge, a node
        with pytest.raises(ServiceInputError) as err:
            prepare("capacity-demonstration", {"inputs": base | {"measured_ii": [{"analysis": "upload:" + "a" * 64,
                                                                                  "nodes": ["MH0003"], "gauge": gauge}]}},
                    lambda sha: __file__)
        assert err.value.field == "inputs.measured_ii[0].gauge" and "a rain gauge of the model (1 rain gauge: RG1)" \
            in str(err.value), gauge


def test_model_elements_are_read_by_the_engines_section_rule(tmp_path):
    """A gauge or node is a first token of a row of its section, the header abbreviated as the engine allows
    (``[RAINGAGE]``, ``[JUNCTION]``); comments, and rows of other sections, name nothing."""
    from capacitysim.service.processes import _element_ids, _node_ids

    inp = tmp_path / "m.inp"
    inp.write_text("[RAINGAGE]\n;RGX comment\nRG1 INTENSITY 0:15 1.0 TIMESERIES TS1\n[JUNCTION]\nJ1 0 5\n"
                   "[TIMESERIES]\nTS1 0:00 0.1\n[OUTFALL]\nO1 0 FREE\n", encoding="utf-8")
    assert _element_ids(inp, ("RAINGAGES",)) == {"RG1"}
    assert _node_ids(inp) == {"J1", "O1"}


@pytest.mark.server
def test_a_capacity_job_runs_measured_ii_from_an_upload(server):
    with server.client("engineer") as c:
        r = c.post("/uploads", params={"filename": "credit.json"}, content=_metered_doc())
        assert r.status_code == 201, r.text
        ref = r.json()["id"]
        st, res = _result(c, "capacity-demonstration", {
            "model": "synthetic-50", "storm": "binghamton-1yr-24h",
            "measured_ii": [{"analysis": ref, "nodes": ["MH0003", "MH0004"], "period": "change"}]})
        doc = res.json()
        m = doc["scenario"]["measured_ii"][0]
        assert m["sha256"] == ref.split(":")[1] and (m["before"], m["after"]) == ("pre", "post")
        assert doc["before"]["rdii_inflow_cf"] > doc["after"]["rdii_inflow_cf"]
        assert c.get(f"/ui/jobs/{st['jobID']}").status_code in (200, 303)
    with server.client("engineer2") as other:  # another user's upload is no input of theirs
        r = other.post("/processes/capacity-demonstration/execution", headers=ASYNC, json={"inputs": {
            "model": "synthetic-50", "connections": [{"node": "MH0003", "gpd": 3000}],
            "measured_ii": [{"analysis": ref, "nodes": ["MH0003"]}]}})
        assert r.status_code == 400 and "measured_ii[0].analysis" in r.text
