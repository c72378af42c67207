"""Measured I/I in a capacity demonstration (issue 29, item 5): the fitted RTK sets of a metered-credit analysis
take the place of the RDII of the nodes its sub-basin drains to, in the runs the engine makes.

The engine is checked against closed forms: a set whose responses end within the run puts R x rain x area into the
network (SWMM Reference Manual Vol. I, sec. 10: the RTK volume), so with ``period=change`` the routing continuity's
RDII inflow falls by (sum R pre - sum R post) x 2.1 in x the sewer area; with an initial abstraction the volume is
that of the package's own RTK convolution (``rtk_response_gpd``, itself within 0.004 % of SWMM).
"""

from __future__ import annotations

import hashlib
import json
import re

import numpy as np
import pytest

from capacitysim.errors import InputError
from capacitysim.hydrology.rtk_fit import RTKSet, rtk_response_gpd
from capacitysim.network.model import load_model
from capacitysim.network.scenario import MeasuredRdii, write_scenario
from capacitysim.io.bundled import model_path
from capacitysim.units import GPD_PER_CFS, SECONDS_PER_HOUR, SQFT_PER_ACRE
from capacitysim.workflows.demonstration import run_demonstration
from capacitysim.workflows.measured_ii import measured_ii_edits, parse_measured_ii

#: Short responses (base T (1 + K) <= 9 h): over within the runs of synthetic-50 under the 24-h design storm.
PRE = [(0.02, 1.0, 2.0), (0.03, 2.0, 2.0), (0.04, 3.0, 2.0)]
POST = [(0.01, 1.0, 2.0), (0.01, 2.0, 2.0), (0.015, 3.0, 2.0)]
AREA_AC = 40.0
DESIGN_IN = 2.1
#: Tolerance of the engine against the closed forms [%] (measured 0.004 % in both tests: SWMM sums the RDII over
#: its WET_STEP intervals).
TOL_PCT = 0.05


def _rtk(rows, ia=None) -> dict:
    out = {}
    for i, (R, T, K) in enumerate(rows, 1):
        out |= {f"R{i}": R, f"T{i}": T, f"K{i}": K}
        if ia:
            out |= {f"Dmax{i}": ia[i - 1][0], f"Drec{i}": ia[i - 1][1], f"Do{i}": ia[i - 1][2]}
    return out


def _doc(tmp_path, pre=PRE, post=POST, name="credit.json", ia=None, **over):
    doc = {"kind": "metered-credit", "area_ac": AREA_AC,
           "credit": {"claimed_gpd": 12_000.0, "pre_rtk": _rtk(pre, ia), "post_rtk": _rtk(post)},
           "pe": {"name": "A. Example, PE", "license": "012345"}, "periods": {}, "warnings": []} | over
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return p


@pytest.mark.swmm  # load_model opens the model with the engine first
def test_the_scenario_carries_the_sets_and_comments_out_the_nodes_own_rdii(tmp_path):
    model = load_model(model_path("synthetic-50"))
    edit = MeasuredRdii(("mh0003", "MH0004"), AREA_AC, tuple(RTKSet.of(PRE).rows()), source="credit.json", period="pre")
    rec = write_scenario(model, [edit], tmp_path / "s.inp")
    text = (tmp_path / "s.inp").read_text()
    assert "CAPSIM_MEASURED_1 RG1" in text  # the gauge of the nodes' own unit hydrographs
    assert "CAPSIM_MEASURED_1 ALL SHORT 0.02 1 2 0 0 0" in text
    assert "CAPSIM_MEASURED_1 ALL LONG 0.04 3 2 0 0 0" in text
    assert "MH0003 CAPSIM_MEASURED_1 20" in text and "MH0004 CAPSIM_MEASURED_1 20" in text  # 40 ac split evenly
    assert ";MH0003     UH_AVERAGE" in text  # the node's own line, commented out, not deleted
    m = rec["measured_ii"][0]
    assert m["nodes"] == ["MH0003", "MH0004"] and m["gauge"] == "RG1"
    assert [r["node"] for r in m["replaced_rdii"]] == ["MH0003", "MH0004"]


@pytest.mark.swmm  # load_model opens the model with the engine first
def test_an_si_model_gets_hectares_and_millimetres(tmp_path):
    """SWMM 5.2 User's Manual, Appendix D: in an SI model [RDII] sewer areas are in hectares and [HYDROGRAPHS]
    initial abstraction depths in mm (Drecov in mm/day)."""
    from capacitysim.units import ACRES_PER_HECTARE, MILLIMETERS_PER_INCH

    text = model_path("synthetic-50").read_text().replace("FLOW_UNITS           CFS", "FLOW_UNITS           CMS")
    (tmp_path / "si.inp").write_text(text)
    model = load_model(tmp_path / "si.inp")
    assert model.is_si
    rows = tuple((*r, 0.5, 0.1, 0.2) for r in PRE)  # Dmax 0.5 in, Drecov 0.1 in/day, Dinit 0.2 in
    write_scenario(model, [MeasuredRdii(("MH0003",), AREA_AC, rows)], tmp_path / "s.inp")
    lines = (tmp_path / "s.inp").read_text().splitlines()
    rdii = next(ln for ln in lines if ln.startswith("MH0003 CAPSIM_MEASURED_1"))
    assert float(rdii.split()[2]) == pytest.approx(AREA_AC / ACRES_PER_HECTARE, rel=1e-9)  # 16.19 ha
    short = next(ln for ln in lines if ln.startswith("CAPSIM_MEASURED_1 ALL SHORT")).split()
    assert [float(x) for x in short[3:]] == pytest.approx([0.02, 1.0, 2.0, 0.5 * MILLIMETERS_PER_INCH,
                                                           0.1 * MILLIMETERS_PER_INCH, 0.2 * MILLIMETERS_PER_INCH])


@pytest.mark.swmm
def test_the_engine_removes_the_measured_change_in_closed_form(tmp_path):
    """period=change: the pre set before, the post set after; nothing else differs between the runs."""
    doc = _doc(tmp_path)
    d = run_demonstration("synthetic-50", storm="binghamton-1yr-24h", work_dir=tmp_path / "w",
                          measured_ii=[f"analysis={doc},nodes=MH0003;MH0004,period=change"])
    expected_cf = AREA_AC * SQFT_PER_ACRE * (sum(r[0] for r in PRE) - sum(r[0] for r in POST)) * DESIGN_IN / 12.0
    got_cf = d.before.attrs["routing_iiInflow_cf"] - d.after.attrs["routing_iiInflow_cf"]
    assert got_cf == pytest.approx(expected_cf, rel=TOL_PCT / 100)
    assert d.verdict == "pass"
    out = d.to_dict()
    m = out["scenario"]["measured_ii"][0]
    assert m["sha256"] == hashlib.sha256(doc.read_bytes()).hexdigest()
    assert (m["before"], m["after"], m["pe"]["license"]) == ("pre", "post", "012345")
    assert {"role": "measured I/I analysis", "file": "credit.json", "sha256": m["sha256"]} in out["inputs"]
    d.close()


@pytest.mark.swmm
def test_an_initial_abstraction_keeps_the_rain_the_convolution_keeps(tmp_path):
    """With Dmax > 0 the pre set loses the first rain; the engine's RDII volume is the package's convolution's."""
    ia = [(0.3, 0.0, 0.0)] * 3
    doc = _doc(tmp_path, ia=ia)
    d = run_demonstration("synthetic-50", storm="binghamton-1yr-24h", work_dir=tmp_path / "w",
                          measured_ii=[{"analysis": doc, "nodes": ["MH0003"], "period": "change"}])
    from capacitysim.hydrology.rainfall import design_storm_depths

    _, depth = design_storm_depths(DESIGN_IN, "II", 6.0, 24.0)
    rain_t = np.arange(len(depth)) * 0.1
    t = np.arange(0.0, 60.0, 0.01)
    vol = {k: float(np.trapezoid(rtk_response_gpd(RTKSet.of([(*r, *x) for r, x in zip(rows, ias)]), AREA_AC, rain_t,
                                                  depth, t), t)) / GPD_PER_CFS * SECONDS_PER_HOUR  # gpd x hr -> cf
           for k, rows, ias in (("pre", PRE, ia), ("post", POST, [(0, 0, 0)] * 3))}
    got_cf = d.before.attrs["routing_iiInflow_cf"] - d.after.attrs["routing_iiInflow_cf"]
    assert got_cf == pytest.approx(vol["pre"] - vol["post"], rel=TOL_PCT / 100)
    # and less than without the abstraction: the first 0.3 in of the pre storm never reached the sewer
    assert got_cf < AREA_AC * SQFT_PER_ACRE * (sum(r[0] for r in PRE) - sum(r[0] for r in POST)) * DESIGN_IN / 12.0
    d.close()


@pytest.mark.swmm
def test_a_connection_on_the_measured_subbasin_is_judged_with_the_post_set(tmp_path, run_cli):
    doc = _doc(tmp_path)
    r = run_cli("capacity", "--model", "synthetic-50", "--storm", "binghamton-1yr-24h", "--connect", "MH0003=3000",
                "--measured-ii", f"analysis={doc},nodes=MH0003", "--spinup-hr", "0", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    m = out["scenario"]["measured_ii"][0]
    assert (m["period"], m["before"], m["after"]) == ("post", "post", "post")
    conn = [i for i in out["injections"] if i["what"] == "connection"]
    assert conn and all(i["passed"] for i in conn)  # the measured set is in both runs: the connection is checked


@pytest.mark.parametrize("spec, words", [
    ("analysis=credit.json", "nodes"),
    ("analysis=credit.json,nodes=MH0003,period=later", "period='later'; allowed: post, pre, change"),
    ("analysis=credit.json,nodes=MH0003,colour=red", "each key once"),
    ("analysis=credit.json,nodes=MH0003,nodes=MH0004", "each key once"),
    ("nodes=MH0003", "an analysis document"),
])
def test_a_bad_spec_is_refused_saying_what_is_allowed(spec, words):
    with pytest.raises(InputError, match="measured_ii"):
        parse_measured_ii(spec)
    with pytest.raises(InputError) as exc:
        parse_measured_ii(spec)
    assert words in str(exc.value)


@pytest.mark.parametrize("over, words", [
    ({"kind": "capacity-demonstration"}, "is not a metered-credit document"),
    ({"credit": None, "warnings": ["post period: 3 qualifying events"]}, "gives no fitted RTK sets"),
    ({"area_ac": -3}, "gives no sewer area"),
    ({"credit": {"pre_rtk": {"R1": 0.1}, "post_rtk": {}}}, "credit.pre_rtk: R2 must be a finite number"),
    ({"area_ac": 1e12}, r"sewer area must be a number in \(0, 6,400,000\] ac"),
    ({"credit": {"pre_rtk": _rtk([(0.9, 1, 2), (0.2, 2, 2), (0.1, 3, 2)]), "post_rtk": _rtk(POST)}},
     r"R1 \+ R2 \+ R3 at most 1"),
])
def test_a_document_that_cannot_give_sets_is_refused_naming_it(tmp_path, over, words):
    doc = _doc(tmp_path, **over)
    with pytest.raises(InputError, match=words):
        measured_ii_edits(parse_measured_ii(f"analysis={doc},nodes=MH0003"))


def test_a_document_nested_past_the_parser_is_not_json(tmp_path):
    """An uploaded analysis of 100,000 nested brackets: refused as not JSON, never a RecursionError."""
    p = tmp_path / "deep.json"
    p.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InputError, match="is not JSON"):
        measured_ii_edits(parse_measured_ii(f"analysis={p},nodes=MH0003"))


@pytest.mark.swmm
def test_the_model_decides_nodes_and_gauges(tmp_path):
    doc = _doc(tmp_path)
    model = load_model(model_path("synthetic-50"))
    for spec, words in ((f"analysis={doc},nodes=MH9999", "node 'MH9999' is not a node"),
                        (f"analysis={doc},nodes=MH0003,gauge=RG7", "gauge 'RG7' is not a rain gauge of synthetic-50.inp "
                                                                   "(its gauges: RG1)")):
        before, _, _ = measured_ii_edits(parse_measured_ii(spec))
        with pytest.raises(InputError, match=re.escape(words)):
            write_scenario(model, [before], tmp_path / "s.inp")
    assert not (tmp_path / "s.inp").exists()  # nothing half-written


@pytest.mark.parametrize("extra, words", [
    (["--remediate", "nodes=MH0003,fraction=0.2"], "take measured I/I"),
    (["--measured-ii", "analysis={doc},nodes=MH0003;MH0009"], "given two measured RTK sets"),
    (["--measured-ii", "analysis=/no/such/credit.json,nodes=MH0009"], "cannot be read"),
])
@pytest.mark.swmm
def test_the_cli_refuses_conflicts_with_exit_2(tmp_path, run_cli, extra, words):
    doc = _doc(tmp_path)
    r = run_cli("capacity", "--model", "synthetic-50", "--connect", "MH0005=3000",
                "--measured-ii", f"analysis={doc},nodes=MH0003", *[e.format(doc=doc) for e in extra])
    assert r.exit_code == 2, r.output
    assert words in r.output and "Traceback" not in r.output


@pytest.mark.swmm
def test_a_fail_searches_its_next_step_with_the_measured_sets(tmp_path, run_cli):
    """The next step's headroom search runs the demonstration's own scenario, measured sets included: a set ten
    times wetter than the model's own leaves the node less room than the model does."""
    from capacitysim.workflows.headroom import headroom

    wet = [(10 * r, t, k) for r, t, k in POST]
    doc = _doc(tmp_path, post=wet)
    r = run_cli("capacity", "--model", "synthetic-50", "--storm", "binghamton-1yr-24h", "--connect", "MH0003=5MGD",
                "--measured-ii", f"analysis={doc},nodes=MH0003", "--spinup-hr", "0", "--json")
    out = json.loads(r.output)
    assert (r.exit_code, out["verdict"]) == (1, "fail")
    (step,) = out["next_steps"]["connections"]
    measured = step["largest_passing_gpd"]
    plain = headroom("synthetic-50", "binghamton-1yr-24h", ["MH0003"], workers=0, spinup_hr=0,
                     max_gpd=5e6).to_dict()["nodes"][0]["max_connection_gpd"]
    assert measured is not None and 0 < measured < plain
    res = headroom("synthetic-50", "binghamton-1yr-24h", ["MH0003"], workers=0, spinup_hr=0, max_gpd=5e6,
                   measured_ii=[f"analysis={doc},nodes=MH0003"]).to_dict()
    assert res["nodes"][0]["max_connection_gpd"] == pytest.approx(measured, rel=0.1)  # both within the 5 % bracket
    assert res["measured_ii"][0]["sha256"] == hashlib.sha256(doc.read_bytes()).hexdigest()
