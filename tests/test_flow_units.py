"""Flows as users write them (issue 28, item 3): a bare number is gpd; MGD, gpm, cfs and L/s are converted by the
exact factors of capacitysim.units; anything else is refused naming the field, the text and the units allowed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from capacitysim.checks import FLOW_UNITS_GPD, flow_gpd
from capacitysim.errors import InputError
from capacitysim.workflows.demonstration import parse_connection


@pytest.mark.parametrize("text,gpd,unit", [
    ("35000", 35_000.0, "gpd"), ("35,000", 35_000.0, "gpd"), ("35_000 gpd", 35_000.0, "gpd"),
    ("0.05MGD", 50_000.0, "MGD"), ("0.05 mgd", 50_000.0, "MGD"),
    ("35gpm", 50_400.0, "gpm"),                      # 35 gal/min x 1,440 min/day
    ("1 cfs", 646_316.883, "cfs"),                   # 7.48052 gal/ft3 x 86,400 s/day
    ("1 L/s", 22_824.465, "L/s"), ("1lps", 22_824.465, "L/s"),  # 86,400 L/day / 3.785411784 L/gal
    ("1e4", 10_000.0, "gpd"), (".5MGD", 500_000.0, "MGD"),
])
def test_hand_conversions(text, gpd, unit):
    got, read = flow_gpd(text, "--connect")
    assert got == pytest.approx(gpd, rel=1e-6) and read == unit


@pytest.mark.parametrize("text", ["35 furlongs", "abc", "35 gpm 2", "", "1..2", "gpm"])
def test_what_is_not_a_flow_is_refused_by_name(text):
    with pytest.raises(InputError) as e:
        flow_gpd(text, "--connect 'X=...'")
    assert "--connect 'X=...'" in str(e.value) and "allowed: gpd (a bare number), MGD, gpm, cfs or L/s" in str(e.value)


@given(st.floats(min_value=1e-3, max_value=1e6, allow_nan=False), st.sampled_from(sorted(FLOW_UNITS_GPD)))
def test_any_unit_reads_as_its_factor(x, unit):
    got, _ = flow_gpd(f"{x!r}{unit}", "f")
    assert got == pytest.approx(x * FLOW_UNITS_GPD[unit], rel=1e-12)


def test_a_connection_says_how_a_unit_was_read():
    c = parse_connection("MH0017=35gpm")
    assert c.flow_gpd == pytest.approx(50_400.0) and c.label == "35gpm = 50,400 gpd"
    assert parse_connection("MH0017=10000").label == ""  # a bare number is gpd, as always
    with pytest.raises(InputError, match="flow must be > 0 gpd; got -5"):
        parse_connection("MH0017=-5")
