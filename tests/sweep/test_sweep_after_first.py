"""A scenario's run after starts without waiting for its run before (issue 30: the sweep on 2 workers had one
worker idle for the baseline's whole time), and its verdict is the one the scenario run whole gives.

The run after needs only the spin-up the run before keeps, known beforehand except where program policy
``initial_state`` moves it to 0; the verdict then runs it again with the run before's spin-up.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from capacitysim.io.bundled import model_path
from capacitysim.io.sweep_store import DONE
from capacitysim.io.sweep_files import load_sweep
from capacitysim.workflows.sweep.network_tasks import (
    expected_spinup_hr,
    make_bundle,
    run_after_task,
    run_baseline_task,
    run_scenario_task,
)

pytestmark = [pytest.mark.swmm]

MODELS = Path(__file__).resolve().parents[1] / "data" / "models"


def _spec(tmp_path: Path, model: Path, node: str, gpd: float, storm: str | None):
    (tmp_path / model.name).write_bytes(model.read_bytes())
    p = tmp_path / "s.toml"
    p.write_text(f'name = "one"\nkind = "swmm"\nmodel = "{model.name}"\n' + (f'storm = "{storm}"\n' if storm else "")
                 + f'\n[grid]\nconnect_node = ["{node}"]\nconnect_gpd = [{gpd}]\n', encoding="utf-8")
    return load_sweep(p)


def _same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        va, vb = np.asarray(a[k]), np.asarray(b[k])
        if va.dtype.kind == "f":
            assert np.array_equal(va, vb, equal_nan=True), k
        else:
            assert np.array_equal(va, vb), k


@pytest.mark.parametrize("model, node, gpd, storm, spin", [
    (model_path("synthetic-50"), "MH0017", 60000, "binghamton-1yr-24h", 6.0),  # a failure: the noise measure used
    (MODELS / "initial-state-event.inp", "J2", 5000, None, 0.0),  # the run before keeps no spin-up
])
def test_a_run_after_made_first_gives_the_verdict_of_the_scenario_run_whole(tmp_path, model, node, gpd, storm, spin):
    spec = _spec(tmp_path, model, node, gpd, storm)
    bundle = make_bundle(spec)
    params = spec.scenario(0)
    before = run_baseline_task(bundle, params, spec.criteria)
    assert before["spinup_hr"] == spin
    ran = run_after_task(bundle, params)
    assert ran["spinup_hr"] == expected_spinup_hr(bundle) == 6.0  # made before the run before was known
    first = run_scenario_task(bundle, 0, params, before, spec.criteria, ran)[1]
    whole = run_scenario_task(bundle, 0, params, before, spec.criteria)[1]
    _same(first, whole)
    assert first["status"] == DONE


def test_a_run_after_that_raised_is_a_failed_scenario_naming_why(tmp_path):
    spec = _spec(tmp_path, model_path("synthetic-50"), "MH0017", 1000, "binghamton-1yr-24h")
    bundle = make_bundle(spec)
    params = dict(spec.scenario(0), connect_node="NOT_A_NODE")
    ran = run_after_task(bundle, params)
    assert isinstance(ran["error"], Exception)
    rec = run_scenario_task(bundle, 0, params, {"spinup_hr": 6.0}, spec.criteria, ran)[1]
    assert rec["verdict"] == -1 and "NOT_A_NODE" in rec["message"], rec
