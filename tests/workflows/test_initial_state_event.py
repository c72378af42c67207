"""An event that comes from the initial state survives the spin-up (issue 26, class 7).

``tests/data/models/initial-state-event.inp``: a basin ``TANK`` starts 10 ft deep (100,000 ft3) and a rule opens its
orifice at hour 1; the network has 0.12 cfs of DWF. A 6 h spin-up prepended to the model's period (the default
for a model starting from empty pipes) would drain the basin before the period judged: measured, the peak flow of
``C1`` fell from 7.33 cfs to 2.61 cfs. The engine's Flow Routing Continuity says so: the initial stored volume is
79 % of the water the run routes. Program policy ``initial_state = kept``: beyond ``initial_state_max_pct``
(10 %) the default is no spin-up (the model's own start, as with a hotstart file), and an explicit spin-up
makes the verdict ``untrusted`` with the reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from capacitysim.workflows.demonstration import run_demonstration

MODELS = Path(__file__).resolve().parents[1] / "data" / "models"
EVENT = MODELS / "initial-state-event.inp"


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
    assert doc["verdict"] != "untrusted", doc["untrusted_reasons"]


def test_an_explicit_spinup_that_drains_the_event_is_untrusted():
    with run_demonstration(EVENT, connections=["J2=5000"], spinup_hr=6.0, parallel=False) as d:
        assert _peak(d) < 3.0  # the event was drained in the spin-up
        assert d.verdict == "untrusted"
        assert any("initial state holds 100,000 ft3" in r and "--spinup-hr 0" in r for r in d.untrusted_reasons)


def test_a_network_from_empty_pipes_keeps_its_spinup():
    """The measure is no excuse to drop the spin-up: the bundled-style model holds ~0 % at its start."""
    with run_demonstration(MODELS / "population-dwf.inp", connections=["J2=5000"], parallel=False) as d:
        sim = d.to_dict()["simulation"]
    assert sim["spinup_hr"] == 6.0 and sim["initial_state"]["share_pct"] < 1.0
