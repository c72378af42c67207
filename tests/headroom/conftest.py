"""Fixtures of the headroom tests: the 14-node sweep network (one SWMM run about 0.4 s) and its run before."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "sweep" / "data" / "tiny.inp"
STORM = "binghamton-1yr-24h"


@pytest.fixture(scope="session")
def tiny_before():
    """(network, Storm, the run before) of tiny.inp under the Binghamton storm."""
    from capacitysim.io.storms import load_storm
    from capacitysim.network.model import load_model
    from capacitysim.network.scenario import Storm
    from capacitysim.workflows.headroom.tasks import before_task, make_network

    model = load_model(TINY)
    net = make_network(model, TINY)
    storm = Storm.from_spec(load_storm(STORM))
    return net, storm, before_task(net, storm, ("PLANT", "CSO1", "MH0002", "PS1_WW"))
