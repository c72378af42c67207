"""A connection more likely a slip of units than a building is warned about (issue 28, item 3): 50,000,000 gpd at
MH0017 of synthetic-50 is 72 x the system's dry-weather flow, 57 x the full capacity of the pipe leaving the node
and 50 x the plausible size of one building; 10,000 gpd raises none of these. The verdict still judges the flow."""

from __future__ import annotations

import pytest

from capacitysim.workflows.demonstration import PLAUSIBLE_CONNECTION_GPD, run_demonstration

pytestmark = pytest.mark.swmm


def _warnings(gpd: str) -> list[str]:
    with run_demonstration("synthetic-50", connections=[f"MH0017={gpd}"], storm="binghamton-1yr-24h", parallel=False) as d:
        return [w for w in d.warnings if w.startswith("the connection at MH0017")]


def test_an_implausible_connection_is_warned_about_three_ways():
    w = _warnings("50000000")
    assert len(w) == 3, w
    assert "more than the whole system's dry-weather flow" in w[0] and " x): check its unit" in w[0]
    assert "full-flow capacity of the pipe P0017" in w[1]
    assert f"{PLAUSIBLE_CONNECTION_GPD:,.0f} gpd" in w[2]


def test_a_building_sized_connection_raises_none():
    assert _warnings("10000") == []


def test_the_command_says_how_each_flow_was_read(run_cli):
    r = run_cli("capacity", "--model", "synthetic-50", "--storm", "binghamton-1yr-24h", "--connect", "MH0017=35gpm",
                "--connect", "MH0020=1000")
    assert "connection MH0017 [gpd]        50,400 average daily flow (35gpm = 50,400 gpd)" in r.stdout, r.stdout
    assert "connection MH0020 [gpd]        1,000 average daily flow (given in gpd)" in r.stdout
