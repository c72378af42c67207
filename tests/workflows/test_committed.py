"""Committed flows of the credit bank as the baseline (issue 24, cumulative evidence): real SWMM runs on the
bundled 50-node model, SPDES hand cases, and the CLI's one-line errors.

The commitments documents here are built by hand in the form of :meth:`capacitysim.bank.Ledger.commitments`
(the bank's own end-to-end tests create them from a bank).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from capacitysim.errors import InputError
from capacitysim.network.basins import find_basins
from capacitysim.network.engine import node_series
from capacitysim.network.model import load_model
from capacitysim.network.scenario import Connection, Storm
from capacitysim.rules import spdes as rule
from capacitysim.units import CFS_PER_FLOW_UNIT, GPD_PER_CFS
from capacitysim.workflows import committed as cm
from capacitysim.workflows import demonstration as demo
from capacitysim.workflows.spdes import run_check

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "models" / "synthetic-50.inp"
DRY = Storm(depth_in=(0.0,), dt_min=6.0, name="no rain")


def block(flows, **extra) -> dict:
    """A commitments document as :meth:`capacitysim.bank.Ledger.commitments` returns it."""
    flows = [{"application": a, "basin": "B1", "node": n, "average_gpd": float(g), "peak_gpd": 4.0 * float(g),
              "status": "approved", "average_basis": "recorded"} for a, n, g in flows]
    doc = {"bank": "/banks/bank.sqlite", "bank_head": "ab" * 32, "as_of": "2025-01-15", "scope": {"model_sha256": None},
           "basins": ["B1"], "excluded": None, "flows": flows, "total_gpd": sum(f["average_gpd"] for f in flows),
           "total_peak_gpd": sum(f["peak_gpd"] for f in flows), "policies": []}
    return doc | extra


@pytest.fixture(scope="module")
def model():
    return load_model(SMALL)


@pytest.fixture(scope="module")
def plant_nodes(model):
    """Manholes draining directly to the plant's basin outlet (dry-weather flow reaches the plant whole)."""
    plant = next(b for b in find_basins(model) if b.kind == "plant")
    return [n for n in plant.local if n.startswith("MH") and n != "MH0001"]


# --------------------------------------------------------------------------- the conversion


def test_connections_from_commitments_and_unplaced(model):
    """Each placeable flow is a volume-true 'pattern' Connection at the model's spelling of its node; a flow with
    no node, a node not in the model or no flow is listed as unplaced and warned about, never dropped."""
    b = cm.check_commitments(block([("APP-1", "mh0040", 3000), ("APP-2", None, 1500), ("APP-3", "NOPE", 700),
                                    ("APP-4", "MH0030", 0)]))
    conns, unplaced, warnings = cm.committed_connections(b, model)
    assert conns == [Connection("MH0040", 3000.0, "pattern", label="committed APP-1", commitment="APP-1")]
    assert [(u["application"], u["reason"]) for u in unplaced] == [
        ("APP-2", "the bank records no node for it"), ("APP-3", "node NOPE is not a node of synthetic-50.inp"),
        ("APP-4", "no average flow")]
    assert len(warnings) == 1 and "3 committed flow(s)" in warnings[0] and "2,200 gpd" in warnings[0]
    rec = cm.committed_record(b, unplaced)
    assert rec["total_gpd"] == 5200.0 and rec["placed_gpd"] == 3000.0 and len(rec["flows"]) == 4


@pytest.mark.parametrize("bad, message", [
    ("not a dict", "expected the commitments document"),
    ({"flows": []}, "has no bank, bank_head, as_of, total_gpd"),
    (block([("A", "MH0040", 100)]) | {"total_gpd": 99.0}, "is not the sum"),
    (block([("A", "MH0040", 100)]) | {"flows": [{"application": "A"}]}, "flows[0] must have"),
    (block([("A", "MH0040", -1)]) | {"total_gpd": -1.0}, "flows[0].average_gpd must be a number of gpd >= 0"),
])
def test_check_commitments_refuses_a_malformed_document(bad, message):
    with pytest.raises(InputError, match=None) as e:
        cm.check_commitments(bad)
    assert message in str(e.value)


def test_plant_keys_permit_then_name():
    from capacitysim.io.submittal import Submittal

    assert cm.plant_keys(Submittal(plant="Sample WWTP", spdes_permit="NY0012345")) == ["NY0012345", "Sample WWTP"]
    assert cm.plant_keys(Submittal(plant="Sample WWTP")) == ["Sample WWTP"]
    with pytest.raises(InputError, match="--committed: the plant's commitments are found by"):
        cm.plant_keys(Submittal())


def test_scenario_edits_put_commitments_in_the_after_run_before_the_applicant(model):
    """Program policy committed_baseline = cumulative: the BEFORE run is the model of record."""
    from capacitysim.network.scenario import Spinup

    c = Connection("MH0030", 2000.0, "pattern", label="committed A", commitment="A")
    a = Connection("MH0040", 5000.0)
    before, after = demo.scenario_edits(model, DRY, [a], committed=[c])
    moved = Storm(depth_in=(0.0,), dt_min=6.0, name="no rain", start_hr=6.0)
    assert before == [Spinup(6.0), moved]
    assert after == [Spinup(6.0), moved, c, a]


# --------------------------------------------------------------------------- real runs


@pytest.fixture(scope="module")
def runs(tmp_path_factory, plant_nodes):
    """Two demonstrations of one applicant connection in dry weather: without, and with commitments (one at the
    applicant's own node, one at another manhole, one with no node)."""
    n_app, n_other = plant_nodes[0], plant_nodes[1]
    applicant = [Connection(n_app, 1000.0)]
    committed = block([("APP-1", n_app, 40_000), ("APP-2", n_other, 25_000), ("APP-3", None, 500)])
    tmp = tmp_path_factory.mktemp("committed")
    calls = []
    real = demo.run_inp
    from capacitysim.workflows import judgement  # the noise runs (the run before with finer steps) start there

    def counting_run_inp(*args, **kwargs):  # the real engine run, counted
        calls.append(kwargs.get("name"))
        return real(*args, **kwargs)

    demo.run_inp = judgement.run_inp = counting_run_inp
    try:
        without = demo.run_demonstration(SMALL, connections=applicant, storm=DRY, work_dir=tmp / "without")
        n_without = len(calls)
        with_ = demo.run_demonstration(SMALL, connections=applicant, storm=DRY, work_dir=tmp / "with", committed=committed)
    finally:
        demo.run_inp = judgement.run_inp = real
    yield {"without": without, "with": with_, "calls": (n_without, len(calls) - n_without), "nodes": (n_app, n_other),
           "work": tmp / "with", "model": load_model(SMALL)}
    without.close()
    with_.close()


def test_commitment_raises_the_after_run_by_its_volume(runs):
    """(a) The commitments are in the AFTER run only (policy committed_baseline = cumulative): the BEFORE runs with
    and without them are the same model of record; in the AFTER run the lateral inflow volume at each committed
    node rises by the intended volume (0.5 %), the plant's dry-weather daily average by the committed flow (1 %),
    and the pipe leaving the node carries more."""
    w, wo = runs["with"], runs["without"]
    n_app, n_other = runs["nodes"]
    cf = CFS_PER_FLOW_UNIT[runs["model"].flow_units]
    intended = {}
    for c in w.scenario["committed_connections"]:
        intended[c["node"]] = intended.get(c["node"], 0.0) + c["intended_report_volume_model"] * cf
    assert set(intended) == {n_app, n_other}
    for node, vol in intended.items():
        assert float(w.before.lateral_volume_cf.sel(node=node)) == pytest.approx(
            float(wo.before.lateral_volume_cf.sel(node=node)), rel=1e-9), node
        got = float(w.after.lateral_volume_cf.sel(node=node) - wo.after.lateral_volume_cf.sel(node=node))
        assert got == pytest.approx(vol, rel=0.005), node
    qa_with = node_series(w.runs["after"], "PLANT", "total_inflow")
    qa_without = node_series(wo.runs["after"], "PLANT", "total_inflow")
    day = (qa_with.elapsed_hr > 12.0) & (qa_with.elapsed_hr <= 36.0)  # one full day after 12 h of spin-up
    added_gpd = float((qa_with - qa_without).where(day, drop=True).mean()) * GPD_PER_CFS
    assert added_gpd == pytest.approx(65_000.0, rel=0.01)
    model = runs["model"]
    down = [lid for lid, _, frm, _, _ in model.links() if frm == n_other]
    assert down and all(float(w.after.peak_flow_cfs.sel(link=l)) > float(wo.after.peak_flow_cfs.sel(link=l)) for l in down)


def test_commitments_and_applicant_judged_together_against_the_model_of_record(runs):
    """Each committed flow is checked as a connection is (with the applicant's at the same node), and in the
    whole-run External Inflow; the document's connections are the applicant's only; the change at the applicant's
    node is its own flow plus the commitment there."""
    w, wo = runs["with"], runs["without"]
    n_app, n_other = runs["nodes"]
    rows = {(i["what"], i["element"]): i for i in w.injections}
    base = {(i["what"], i["element"]): i for i in wo.injections}
    committed_at_app = sum(c["intended_report_volume_model"] for c in w.scenario["committed_connections"]
                           if c["node"] == n_app) * CFS_PER_FLOW_UNIT[runs["model"].flow_units]
    assert rows[("connection", n_app)]["intended_cf"] == pytest.approx(
        base[("connection", n_app)]["intended_cf"] + committed_at_app)
    assert ("connection", n_other) in rows and ("external inflows (all)", "system") in rows
    assert all(i["passed"] for i in w.injections)
    assert w.verdict in ("pass", "fail") and not w.untrusted_reasons
    doc = w.to_dict()
    assert [c["flow_gpd"] for c in doc["scenario"]["connections"]] == [1000.0]
    assert doc["committed"]["baseline"] == "cumulative"
    assert any(p["name"] == "committed_baseline" for p in doc["committed"]["policies"])


def test_commitments_add_no_engine_run(runs):
    """(b) Three commitments, still exactly two engine runs for the demonstration (and two run folders); a third,
    the runs before with finer routing steps, only when a check failed and its noise is measured (issue 26, 5)."""
    from capacitysim.network.refine import STEP_RATIOS

    noise = runs["with"].noise is not None
    assert runs["calls"] == (2 + len(STEP_RATIOS) * (runs["without"].noise is not None), 2 + len(STEP_RATIOS) * noise)
    assert sorted(p.name for p in runs["work"].iterdir() if p.is_dir()) == ["after", "before"] + (["refined"] if noise else [])


def test_committed_block_of_the_document(runs):
    """(c) The JSON's committed block: the bank, its head, the date, every flow, totals, unplaced; null without."""
    doc = json.loads(json.dumps(runs["with"].to_dict()))
    c = doc["committed"]
    assert {"bank", "bank_head", "as_of", "flows", "total_gpd", "total_peak_gpd", "excluded", "unplaced",
            "placed_gpd"} <= set(c)
    assert c["bank_head"] == "ab" * 32 and c["as_of"] == "2025-01-15"
    assert [f["application"] for f in c["flows"]] == ["APP-1", "APP-2", "APP-3"]
    assert c["total_gpd"] == 65_500.0 and c["placed_gpd"] == 65_000.0 and c["total_peak_gpd"] == 262_000.0
    assert [u["application"] for u in c["unplaced"]] == ["APP-3"]
    assert any("APP-3" in w for w in doc["warnings"])
    assert json.loads(json.dumps(runs["without"].to_dict()))["committed"] is None


def test_report_shows_the_committed_flows(runs, tmp_path):
    from capacitysim.report.capacity import write_report

    html = write_report(runs["with"].to_dict(), tmp_path / "r.html").read_text()
    assert "Committed flows" in html and "APP-2" in html and "/banks/" not in html
    assert "Committed flows" not in write_report(runs["without"].to_dict(), tmp_path / "r0.html").read_text()


def test_changed_model_makes_the_commitments_untrusted(tmp_path, plant_nodes):
    """Commitments read for a registered model whose SHA-256 is not the model run's: untrusted, not silently mixed."""
    b = block([("APP-1", plant_nodes[1], 2000)], scope={"model_sha256": "0" * 64})
    with demo.run_demonstration(SMALL, connections=[Connection(plant_nodes[0], 1000.0)], storm=DRY, work_dir=tmp_path,
                                committed=b) as d:
        assert d.verdict == "untrusted"
        assert any("SHA-256" in r for r in d.untrusted_reasons)


# --------------------------------------------------------------------------- SPDES


def _record(tmp_path, mgd: float) -> Path:
    days = pd.date_range("2024-01-01", "2024-12-31", freq="D")
    path = tmp_path / "flows.csv"
    pd.DataFrame({"date": days.strftime("%Y-%m-%d"), "flow_mgd": np.full(days.size, mgd)}).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("watershed", [True, False])
def test_spdes_committed_lowers_the_headroom_by_exactly_its_flow(tmp_path, watershed):
    """(d) Issue 24's case: 20,000 gpd of headroom (0.48 of 0.50 MGD); a 12,000 gpd application passes alone, and
    with another 12,000 gpd committed the headroom is -4,000 gpd: prohibited (watershed) / not shown."""
    flows = str(_record(tmp_path, 0.48))
    common = {"flows": flows, "limit_mgd": 0.5, "as_of": "2024-12-31", "added_gpd": [12_000.0], "watershed": watershed}
    alone = run_check(**common).to_dict()
    both = run_check(**common, committed=block([("APP-1", "MH0040", 12_000)])).to_dict()
    assert alone["committed_gpd"] == 0.0 and alone["committed"] is None
    assert both["committed_gpd"] == 12_000.0 and both["committed"]["bank_head"] == "ab" * 32
    assert alone["headroom_before_gpd"] == pytest.approx(20_000.0, abs=1e-6)
    assert alone["headroom_before_gpd"] - both["headroom_before_gpd"] == pytest.approx(12_000.0, abs=1e-6)
    assert alone["headroom_gpd"] - both["headroom_gpd"] == pytest.approx(12_000.0, abs=1e-6)
    assert both["headroom_gpd"] == pytest.approx(-4_000.0, abs=1e-6)
    assert alone["verdict"] == "pass" and both["verdict"] == "fail"
    assert both["projected_violation"] and not both["violation_in_prior_12_months"]
    if watershed:
        assert both["connection_prohibited"] and both["grounds"] == [rule.GROUND_ADDED_FLOW]
    else:
        assert [c["result"] for c in both["checks"]] == ["pass", "fail"]  # 8,000 gpd left before the added flow
    assert both["worst_projected_average_mgd"] == pytest.approx(0.504)


def test_spdes_committed_alone_over_the_limit():
    """The committed flow alone past the limit: the headroom before the added flow is negative (a non-watershed
    plant's first check fails), the record's own violations unchanged."""
    d = np.arange(np.datetime64("2024-01-01"), np.datetime64("2025-01-01"))
    periods = rule.period_averages(d, np.full(d.size, 0.48), "month")
    v = rule.check_connection(periods, 0.5, "2024-12-31", 0.0, committed_gpd=25_000.0)
    assert v.headroom_before_gpd == pytest.approx(-5_000.0, abs=1e-6) and v.committed_exceeded
    assert not v.violation_in_prior_12_months and v.projected_violation
    with pytest.raises(InputError, match="committed_gpd"):
        rule.check_connection(periods, 0.5, "2024-12-31", 0.0, committed_gpd=-1.0)


# --------------------------------------------------------------------------- CLI


def test_cli_unknown_bank_exit_2(run_cli, tmp_path):
    """(e) A bank path that does not exist, or a file that is no bank: exit 2, one line naming --committed."""
    missing = tmp_path / "nope.sqlite"
    r = run_cli("capacity", "--model", str(SMALL), "--connect", "MH0040=1000", "--committed", str(missing))
    assert r.exit_code == 2 and "--committed" in r.stderr and "nope.sqlite" in r.stderr and "no such file" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database\n" * 100)
    r = run_cli("capacity", "--model", str(SMALL), "--connect", "MH0040=1000", "--committed", str(junk))
    assert r.exit_code == 2 and r.stderr.startswith("error: --committed") and len(r.stderr.strip().splitlines()) == 1
    r = run_cli("spdes", "check", "--plant", "sample-wwtp", "--flows", "sample-wwtp", "--as-of", "2024-12-31",
                "--added-gpd", "1000", "--committed", str(missing))
    assert r.exit_code == 2 and "--committed" in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("cmd", [["capacity", "--model", str(SMALL), "--connect", "MH0040=1000"],
                                 ["spdes", "check", "--plant", "sample-wwtp", "--flows", "sample-wwtp", "--as-of",
                                  "2024-12-31"]])
def test_cli_application_needs_committed(run_cli, cmd):
    r = run_cli(*cmd, "--application", "APP-1")
    assert r.exit_code == 2 and '--application: got "APP-1"' in r.stderr and "--committed" in r.stderr


def test_a_connection_labelled_committed_is_still_the_applicant_s():
    """Only Connection.commitment marks a bank commitment: a user's label cannot move a connection out of the
    applicant's list the bank reads."""
    rec = {"connections": [{"node": "A", "label": "committed APP-9"}, {"node": "B", "label": "x", "commitment": "APP-1"}]}
    demo.split_committed(rec)
    assert [r["node"] for r in rec["connections"]] == ["A"] and [r["node"] for r in rec["committed_connections"]] == ["B"]
