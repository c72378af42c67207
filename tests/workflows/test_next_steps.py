"""A FAIL says what to do next (issue 28, item 1): the governing checks in plain words (a policy limit or a physical
one), the largest connection that passes at the connection node (a bounded headroom search, confirmed by runs) and
the I/I removal the program asks for to offset it (section F: credits 1:1 against the peak sewage flow)."""

from __future__ import annotations

import json

import pytest

from capacitysim.workflows.next_steps import plain_words

ARGS = ("capacity", "--model", "synthetic-50", "--storm", "binghamton-1yr-24h")


def test_plain_words_name_policy_and_physical_limits():
    pol = plain_words({"criterion": "peak inflow at the basin outlet within +1 %", "element": "PS1_WW", "before": 0.6,
                       "after": 0.7, "limit": 0.606, "unit": "cfs"})
    assert pol["limit_kind"] == "policy" and "not a pipe running full" in pol["text"]
    phys = plain_words({"criterion": "max d/D <= 0.8 (gravity sewers)", "element": "P0012", "before": 0.7,
                        "after": 0.81, "limit": 0.8, "unit": "-"})
    assert phys["limit_kind"] == "physical" and "0.81" in phys["text"]
    assert plain_words({"criterion": "CSO volume not increased beyond tolerance", "element": "CSO1"})["limit_kind"] == "policy"


@pytest.mark.swmm
def test_a_fail_gives_the_largest_passing_connection_confirmed_by_runs(run_cli):
    r = run_cli(*ARGS, "--connect", "MH0017=60000", "--json")
    doc = json.loads(r.stdout)
    ns = doc["next_steps"]
    assert doc["verdict"] == "fail" and ns["governing"] and all(g["limit_kind"] == "policy" for g in ns["governing"])
    (c,) = ns["connections"]
    assert c["node"] == "MH0017" and c["basin"] == "PS1_WW" and c["offset_ratio"] == 1.0
    assert c["ii_removal_gpd"] == pytest.approx(c["flow_gpd"] * doc["scenario"]["connections"][0]["peak_factor"])
    s = c["search"]
    assert s["status"] == "ok" and 0 < c["largest_passing_gpd"] == s["passing_gpd"] < s["failing_gpd"] <= 60000
    assert s["failing_gpd"] / s["passing_gpd"] <= 1.05 + 1e-9  # within the headroom tolerance
    # confirmed: capacity itself passes the passing end and fails the failing end
    for gpd, verdict in ((s["passing_gpd"], "pass"), (s["failing_gpd"], "fail")):
        d = json.loads(run_cli(*ARGS, "--connect", f"MH0017={gpd!r}", "--json", "--no-next-steps").stdout)
        assert d["verdict"] == verdict, (gpd, d["verdict"])
    assert f"--remediate basin=PS1_WW,gpd={c['ii_removal_gpd']:.0f}" in ns["commands"]


@pytest.mark.swmm
def test_opting_out_skips_the_search_and_a_pass_has_none(run_cli):
    doc = json.loads(run_cli(*ARGS, "--connect", "MH0017=60000", "--json", "--no-next-steps").stdout)
    (c,) = doc["next_steps"]["connections"]
    assert c["search"] is None and c["largest_passing_gpd"] is None and c["basin"] == "PS1_WW"
    assert json.loads(run_cli(*ARGS, "--connect", "MH0017=1000", "--json").stdout)["next_steps"] is None
