"""One judgement (issue 27, item 2): ``capacity``, a sweep scenario and headroom's run of one connection give
the same verdict for the same change, because all three call ``workflows.judgement.judge_change``.

The cases are chosen where a condition of trust decides, which the sweep skipped before (it judged the element
checks and continuity only, so a scenario could pass where ``capacity`` said untrusted):

* the rain: ``rdii-only.inp`` with ``[ADJUSTMENTS] RAINFALL`` 1.5 in every month: the RDII rain gauge delivers
  1.5 x the design storm (3.15 in, not 2.1 in), so the storm check fails and the runs are untrusted;
* the injected volume: 3 gpd at J1 of ``rdii-only.inp`` (below SWMM's FLOW_TOL of 1e-5 cfs at its lowest hour)
  is dropped by the engine: untrusted;
* a plain pass on the same model (3,000 gpd) so the test can tell "the same verdict" from "always untrusted".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from capacitysim.io.storms import load_storm
from capacitysim.network.model import load_model
from capacitysim.network.scenario import Storm
from capacitysim.rules.capacity import Criteria
from capacitysim.workflows.demonstration import run_demonstration
from capacitysim.workflows.headroom.tasks import before_task, make_network, point_task
from capacitysim.io.sweep_files import load_sweep
from capacitysim.workflows.sweep import run_one

pytestmark = pytest.mark.swmm

MODELS = Path(__file__).resolve().parents[1] / "data" / "models"
RDII_ONLY = MODELS / "rdii-only.inp"
STORM = "binghamton-1yr-24h"
RAIN_x15 = "[ADJUSTMENTS]\nRAINFALL" + " 1.5" * 12 + "\n"


def _model(tmp_path: Path, case: str) -> Path:
    text = RDII_ONLY.read_text()
    if case == "rain":
        text = text.rstrip() + "\n\n" + RAIN_x15
    p = tmp_path / f"{case}.inp"
    p.write_text(text)
    return p


def _sweep(tmp_path: Path, model: Path, node: str, gpd: float, storm: str | None = STORM):
    p = tmp_path / f"{model.stem}-sweep.toml"
    storm_line = f'storm = "{storm}"\n' if storm else ""
    p.write_text(f'name = "one scenario"\nkind = "swmm"\nmodel = "{model.name}"\n{storm_line}\n'
                 f'[grid]\nconnect_node = ["{node}"]\nconnect_gpd = [{gpd}]\n')
    if model.parent != tmp_path:
        (tmp_path / model.name).write_bytes(model.read_bytes())
    return load_sweep(p)


def _headroom(model: Path, node: str, gpd: float, storm: str | None = STORM) -> tuple[dict, dict]:
    net = make_network(load_model(model), model, criteria=Criteria())
    storm = Storm.from_spec(load_storm(storm)) if storm else None
    before = before_task(net, storm)
    return point_task(net, storm, before, node, gpd), before


@pytest.mark.parametrize("case,node,gpd,expected,why", [
    ("rain", "J1", 3000, "untrusted", "rain gauge RG1 delivered"),
    ("plain", "J1", 3, "untrusted", "connection at J1: the engine received 0.0 ft3"),
    ("plain", "J1", 3000, "pass", None),
])
def test_capacity_sweep_and_headroom_give_one_verdict(tmp_path, case, node, gpd, expected, why):
    model = _model(tmp_path, case)
    with run_demonstration(model, connections=[f"{node}={gpd}"], storm=STORM, parallel=False) as d:
        capacity = d.verdict
        reasons = list(d.untrusted_reasons)
    rec = run_one(_sweep(tmp_path, model, node, gpd), 0)
    from capacitysim.rules.verdict import VERDICT_NAME

    sweep = VERDICT_NAME[int(rec["verdict"])]
    point, _ = _headroom(model, node, gpd)
    assert (capacity, sweep, point["verdict"]) == (expected, expected, expected), (reasons, rec["message"], point)
    if why is not None:  # the same reason, not only the same word
        assert any(why in r for r in reasons), reasons
        assert why in rec["message"], rec["message"]
        assert any(why in r for r in point["untrusted_reasons"]), point["untrusted_reasons"]


def test_the_initial_state_policy_is_one(tmp_path):
    """``initial-state-event.inp`` holds its event in its initial state: with the default spin-up, ``capacity`` runs
    it again from its own start (program policy ``initial_state = kept``); the sweep's and headroom's shared run
    before do the same, so the three judge the same runs (before: the sweep and headroom drained the event in the
    6 h spin-up and judged a dry model)."""
    model = MODELS / "initial-state-event.inp"
    with run_demonstration(model, connections=["J2=5000"], parallel=False) as d:
        capacity = d.verdict
        peak = float(d.after.max_inflow_cfs.sel(node="J2"))
        assert d.scenario["simulation"]["spinup_hr"] == 0.0
    rec = run_one(_sweep(tmp_path, model, "J2", 5000, storm=None), 0)
    from capacitysim.rules.verdict import VERDICT_NAME

    point, before = _headroom(model, "J2", 5000, storm=None)
    assert before["spinup_hr"] == 0.0 and "initial_state = kept" in before["spinup_policy"]
    from capacitysim.workflows.sweep.network_tasks import make_bundle, run_baseline_task

    spec = _sweep(tmp_path, model, "J2", 5000, storm=None)
    assert run_baseline_task(make_bundle(spec), spec.scenario(0), spec.criteria)["spinup_hr"] == 0.0
    assert (VERDICT_NAME[int(rec["verdict"])], point["verdict"]) == (capacity, capacity), (rec["message"], point)
    assert peak > 7.0  # the event's release reached the judged runs


def test_a_failure_beyond_the_noise_is_one_failure(tmp_path):
    """60,000 gpd at MH0017 of synthetic-50 fails (issue 28's example); the three paths fail it on the same check."""
    from capacitysim.io.bundled import model_path

    model = tmp_path / "synthetic-50.inp"
    model.write_bytes(model_path("synthetic-50").read_bytes())
    with run_demonstration(model, connections=["MH0017=60000"], storm=STORM, parallel=False) as d:
        capacity = d.verdict
        first = next(ch for ch in d.checks if ch.passed is False)
    rec = run_one(_sweep(tmp_path, model, "MH0017", 60000), 0)
    from capacitysim.rules.verdict import VERDICT_NAME

    point, _ = _headroom(model, "MH0017", 60000)
    assert (capacity, VERDICT_NAME[int(rec["verdict"])], point["verdict"]) == ("fail", "fail", "fail"), (rec, point)
    assert (rec["failed_criterion"], rec["failed_element"]) == (first.criterion, first.element)
    assert point["failed"] >= 1 and point["governing"]["criterion"] in {ch.criterion for ch in d.checks if ch.passed is False}


def test_a_run_stopped_early_claims_no_failure_the_full_judgement_distrusts(tmp_path):
    """headroom's screen stops a failing run early (policy FAIL_WHEN_CERTAIN); a storm whose rain the model does not
    deliver (1.5 x) makes every run untrusted, so the cell is untrusted, not zero (the review of issue 27 found it
    zero: the stopped run was judged on the element checks alone)."""
    from capacitysim.workflows.headroom import headroom

    model = _model(tmp_path, "rain")
    res = headroom(model, [STORM], ["J1"], workers=0, min_gpd=300000, max_gpd=3000000)
    (cell,) = res.to_dict()["nodes"]
    assert cell["status"] == "untrusted" and "rain gauge RG1 delivered" in cell["message"], cell
