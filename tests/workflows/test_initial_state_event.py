"""An event that comes from the initial state survives the spin-up (issue 26, class 7).

``tests/data/models/initial-state-event.inp``: a basin ``TANK`` starts 10 ft deep (100,000 ft3) and drains through an
open orifice; the network has 0.12 cfs of DWF. A 6 h spin-up prepended to the model's period (the default for a
model starting from empty pipes) drains the basin before the period judged: measured, the peak flow of ``C1``
fell from 7.33 cfs to 2.55 cfs. The engine says so: the initial stored volume (routing continuity) less the volume
stored when the model's period begins (system VOLUME_STORED) is 94,784 ft3, 75 % of the water the run routes.
Program policy ``initial_state = kept``: beyond ``initial_state_max_pct`` (10 %) the default is no spin-up (the
model's own start, as with a hotstart file), and an explicit spin-up makes the verdict ``untrusted`` with the
reason. ``initial-state-rule.inp`` holds the basin behind a rule on the elapsed ``SIMULATION TIME`` (open at hour
1): the spin-up moves the rule with the start, so the basin is still full when the period begins and the spin-up
stays (drained -0.07 %).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from capacitysim.network.model import parse_inp
from capacitysim.workflows.demonstration import run_demonstration

pytestmark = [pytest.mark.swmm]

MODELS = Path(__file__).resolve().parents[1] / "data" / "models"
EVENT = MODELS / "initial-state-event.inp"
RULE = MODELS / "initial-state-rule.inp"


def _peak(d, link="C1"):
    return float(d.before.peak_flow_cfs.sel(link=link))


def test_the_default_keeps_an_initial_state_that_carries_the_event(tmp_path):
    with run_demonstration(EVENT, connections=["J2=5000"], spinup_hr=0.0, parallel=False) as plain:
        expected = _peak(plain)
    assert expected > 7.0  # the basin's release
    with run_demonstration(EVENT, connections=["J2=5000"], parallel=False, work_dir=tmp_path / "w") as d:
        doc = d.to_dict()
        assert _peak(d) == pytest.approx(expected, rel=1e-9)
    sim = doc["simulation"]
    assert sim["spinup_hr"] == 0.0 and "initial_state = kept" in sim["spinup_policy"], sim
    assert sim["initial_state"]["share_pct"] > 50.0 and sim["initial_state"]["stored_cf"] == pytest.approx(1e5, rel=1e-6)
    assert "drained 9" in sim["spinup_policy"]  # the first run's measure, named
    assert doc["verdict"] != "untrusted", doc["untrusted_reasons"]


def test_an_explicit_spinup_that_drains_the_event_is_untrusted():
    with run_demonstration(EVENT, connections=["J2=5000"], spinup_hr=6.0, parallel=False) as d:
        assert _peak(d) < 3.0  # the event was drained in the spin-up
        assert d.verdict == "untrusted"
        assert any("drained 94," in r and "--spinup-hr 0" in r for r in d.untrusted_reasons), d.untrusted_reasons


def test_a_network_from_empty_pipes_keeps_its_spinup():
    """The measure is no excuse to drop the spin-up: the bundled-style model holds ~0 % at its start."""
    with run_demonstration(MODELS / "population-dwf.inp", connections=["J2=5000"], parallel=False) as d:
        sim = d.to_dict()["simulation"]
    assert sim["spinup_hr"] == 6.0 and sim["initial_state"]["share_pct"] < 1.0


def test_a_rule_on_the_elapsed_time_moves_with_the_spinup(tmp_path):
    """The rule opens the basin at hour 1 of the model's period, spin-up or not: the event is kept and so is the
    spin-up (the engine shows nothing drained)."""
    with run_demonstration(RULE, connections=["J2=5000"], spinup_hr=0.0, parallel=False) as plain:
        expected = _peak(plain)
    with run_demonstration(RULE, connections=["J2=5000"], parallel=False, work_dir=tmp_path / "w") as d:
        doc = d.to_dict()
        assert _peak(d) == pytest.approx(expected, rel=0.01)
        rules = [r.tokens for r in parse_inp(tmp_path / "w" / "before_input.inp").rows("CONTROLS")]
    assert ["IF", "SIMULATION", "TIME", ">", "7.0"] in rules
    sim = doc["simulation"]
    assert sim["spinup_hr"] == 6.0 and sim["initial_state"]["drained_pct"] < 1.0
    assert any("SIMULATION TIME were moved 6 h later" in f for f in doc["fixes"])
    assert doc["verdict"] == "pass"
