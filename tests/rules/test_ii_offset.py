"""I/I offset quantification and connection rules, checked cell by cell against the program text.

Hand calculations state their arithmetic; tolerances are stated where a float is compared.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capacitysim.errors import InputError, RefusedError
from capacitysim.rules import ii_offset as r

REG = "regulations/binghamton-jc-ii-offset-program.txt"

# Table 174-19.1 as printed: (surface, severity) -> gpm.
TABLE_1 = {
    ("paved", "heavy"): 1.1,
    ("paved", "moderate"): 0.65,
    ("paved", "minor"): 0.27,
    ("unpaved", "heavy"): 4.6,
    ("unpaved", "moderate"): 2.3,
    ("unpaved", "minor"): 1.1,
}


@pytest.mark.parametrize(("surface", "severity"), list(TABLE_1))
def test_table_174_19_1_cell_by_cell(surface, severity):
    gpm = TABLE_1[(surface, severity)]
    # one manhole: gpm x 60 min x 24 h
    assert r.manhole_joint_leak_gpd(surface, severity) == pytest.approx(gpm * 60 * 24, rel=1e-12)
    assert r.manhole_joint_leak_gpd(surface, severity, 3) == pytest.approx(3 * gpm * 1440, rel=1e-12)


def test_table_174_19_1_matches_regulation_text(shared_dir):
    """Independent reading of the regulation file: the 'Heavy/Moderate/Minor - x gpm' lines, paved then unpaved."""
    text = (shared_dir / REG).read_text()
    start = text.index("Table 174-19.1")
    end = text.index("Table 174-19-2")
    found = re.findall(r"(Heavy|Moderate|Minor) - ([0-9.]+) gpm", text[start:end])
    assert len(found) == 6
    expected = [(sev.capitalize(), gpm) for (_, sev), gpm in TABLE_1.items()]
    assert [(s, float(v)) for s, v in found] == expected
    assert r.TABLE_174_19_1_GPM == TABLE_1


def test_sump_pump_table_174_19_2(shared_dir):
    text = (shared_dir / REG).read_text()
    assert "Sump pumps\n|\n5 gpm(1)" in text
    assert "Based on 5 gpm over a twenty-four-hour-per-day period" in text
    assert r.sump_pump_gpd() == 7200.0  # 5 x 1440
    assert r.sump_pump_gpd(4) == 28800.0
    assert "2.1 inches" in text and r.PROGRAM_STORM_DEPTH_IN == 2.1


def test_tr55_inflow_hand_calculation_cn98_one_acre():
    # S = 1000/98 - 10 = 0.2040816 in; Ia = 0.0408163 in; P - Ia = 2.0591837 in
    # Q = 2.0591837^2 / (2.0591837 + 0.2040816) = 4.2402374 / 2.2632653 = 1.8735044 in
    s = 1000 / 98 - 10
    q = (2.1 - 0.2 * s) ** 2 / (2.1 - 0.2 * s + s)
    assert q == pytest.approx(1.8735044, abs=1e-7)
    # 1 ac x 43,560 ft2 x 1.8735044/12 ft x 7.480519 gal/ft3 = 50,873.7 gal
    assert r.tr55_inflow_gpd(1.0, 98) == pytest.approx(43560 * q / 12 * 7.480519, rel=1e-6)
    assert r.tr55_inflow_gpd(1.0, 98) == pytest.approx(50873.7, abs=0.1)


def test_tr55_inflow_uses_table_174_19_3_cells():
    # Table 174-19.3: impervious 98 all groups; commercial B 92; open space good C 74; woods fair D 79
    assert r.program_cn("impervious", "A") == 98
    assert r.program_cn("commercial", "B") == 92
    assert r.program_cn("open_space_good", "C") == 74
    assert r.program_cn("woods_fair", "D") == 79
    assert r.program_cn("residential_1_4_acre", "B") == 75
    # CN 74 with 2.1 in: S = 3.5135, Ia = 0.7027 -> Q = 1.3973^2/4.9108 = 0.39757 in
    s = 1000 / 74 - 10
    q = (2.1 - 0.2 * s) ** 2 / (2.1 - 0.2 * s + s)
    assert r.tr55_inflow_gpd(2.0, r.program_cn("open_space_good", "C")) == pytest.approx(2 * 3630 * q * 1728 / 231, rel=1e-9)


def test_tr55_below_initial_abstraction_gives_zero():
    # CN 39 (open space good, A): Ia = 0.2 (1000/39 - 10) = 3.128 in > 2.1 in -> no runoff
    assert r.tr55_inflow_gpd(5.0, r.program_cn("open_space_good", "A")) == 0.0


@settings(max_examples=60, deadline=None)
@given(st.floats(0.0, 50.0), st.floats(0.0, 50.0), st.floats(40.0, 98.0), st.floats(40.0, 98.0))
def test_tr55_inflow_linear_in_area_monotone_in_cn(a1, a2, cn1, cn2):
    g = r.tr55_inflow_gpd
    assert g(a1 + a2, cn1) == pytest.approx(g(a1, cn1) + g(a2, cn1), rel=1e-9, abs=1e-9)
    lo, hi = sorted((cn1, cn2))
    assert g(a1, lo) <= g(a1, hi) + 1e-9


@pytest.mark.parametrize(
    ("water", "redirected", "qualifies"),
    [(True, False, True), (True, True, False), (False, False, False), (False, True, False)],
)
def test_separation_qualifies_only_to_receiving_water(water, redirected, qualifies):
    gpd = r.separation_gpd(1.0, 98, water, redirected)
    assert bool(r.separation_qualifies(water, redirected)) is qualifies
    assert gpd == (pytest.approx(50873.67, abs=0.01) if qualifies else 0.0)  # 1 ac at CN 98, by hand


def test_case_by_case_requires_pe_and_justification():
    assert r.case_by_case_gpd(gpd=5200, justification="metering", engineer="A, PE") == 5200
    assert r.case_by_case_gpd(gpm=3.6, justification="metering", engineer="A, PE") == pytest.approx(3.6 * 1440)
    with pytest.raises(InputError, match="justification"):
        r.case_by_case_gpd(gpd=10, justification=" ", engineer="A, PE")
    with pytest.raises(InputError, match="PE"):
        r.case_by_case_gpd(gpd=10, justification="x", engineer="")
    with pytest.raises(InputError, match="once"):
        r.case_by_case_gpd(gpd=10, gpm=1, justification="x", engineer="A")
    with pytest.raises(InputError, match="gpd"):
        r.case_by_case_gpd(gpd=-1, justification="x", engineer="A")


def test_vectorised_equals_scalar():
    surfaces = np.array(["paved", "unpaved", "paved"])
    sev = np.array(["minor", "heavy", "moderate"])
    out = r.manhole_joint_leak_gpd(surfaces, sev, [1, 2, 3])
    assert isinstance(out, np.ndarray) and out.shape == (3,)
    np.testing.assert_allclose(out, [r.manhole_joint_leak_gpd(s, v, n) for s, v, n in zip(surfaces, sev, [1, 2, 3])])
    assert isinstance(r.sump_pump_gpd(2), float)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"surface": "gravel", "severity": "heavy"}, "surface"),
        ({"surface": "paved", "severity": "severe"}, "severity"),
        ({"surface": "paved", "severity": "heavy", "count": -1}, "count"),
    ],
)
def test_bad_manhole_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        r.manhole_joint_leak_gpd(**kwargs)


# --- connections -------------------------------------------------------------------------------


@pytest.mark.parametrize(("p", "pf"), [(0.0, 4.5), (1.0, 19 / 5), (4.0, 20 / 6), (100.0, 2.0)])
def test_harmon_peaking_factor_hand_values(p, pf):
    assert r.harmon_peaking_factor(p) == pytest.approx(pf, rel=1e-12)


@settings(max_examples=80, deadline=None)
@given(st.floats(0.0, 1e4), st.floats(0.0, 1e4))
def test_harmon_monotone_decreasing_and_equivalent_form(p1, p2):
    lo, hi = sorted((p1, p2))
    assert r.harmon_peaking_factor(lo) >= r.harmon_peaking_factor(hi)
    # PF = 1 + 14 / (4 + sqrt(P)) (the same formula rearranged)
    assert r.harmon_peaking_factor(p1) == pytest.approx(1 + 14 / (4 + math.sqrt(p1)), rel=1e-12)
    assert 1.0 < r.harmon_peaking_factor(p1) <= 4.5


def test_peak_sewage_flow_default_harmon_on_population_equivalent():
    # 1,000 gpd / 100 gpcd = 10 persons = 0.01 thousand; PF = 18.1/4.1 = 4.41463
    assert r.peak_sewage_flow_gpd(1000.0) == pytest.approx(1000 * 18.1 / 4.1, rel=1e-12)
    assert r.peak_sewage_flow_gpd(1000.0, peaking_factor=2.5) == 2500.0
    assert r.peak_sewage_flow_gpd(1000.0, population_thousands=4.0) == pytest.approx(1000 * 20 / 6)
    with pytest.raises(InputError, match="peaking_factor"):
        r.peak_sewage_flow_gpd(1000.0, peaking_factor=0.5)


def test_average_design_flow():
    assert r.average_design_flow_gpd([24, 40], [110, 35]) == 24 * 110 + 40 * 35
    assert r.average_design_flow_gpd(3, 110) == 330


def test_threshold_is_more_than_2500_gpd(shared_dir):
    text = (shared_dir / REG).read_text()
    assert "adding greater than 2,500 gallons per day" in text
    assert "by more than 2,500 gallons per day" in text
    assert r.offset_required(2500.0) is False
    assert r.offset_required(np.nextafter(2500.0, 3000.0)) is True
    assert r.credits_required_gpd(2500.0) == 0.0
    assert r.credits_required_gpd(2600.0) == 2600.0  # one-to-one (section F)
    assert r.credits_required_gpd(2600.0, offset_ratio=4) == 10400.0
    np.testing.assert_array_equal(r.credits_required_gpd([100, 2500, 3000]), [0, 0, 3000])
    with pytest.raises(RefusedError, match="offset_ratio"):  # below one to one (section F): refused
        r.credits_required_gpd(3000.0, offset_ratio=0)


# --- whole items and projects -------------------------------------------------------------------


def test_quantify_items_total_and_cites_tables():
    items = [
        {"type": "manhole_joint_leak", "surface": "paved", "severity": "heavy", "count": 3},
        {"type": "sump_pump", "count": 4},
        {"type": "roof_drain", "area_ac": 12000 / 43560, "cover": "impervious", "soil": "C"},
        {"type": "separation", "area_ac": 1.0, "cover": "impervious", "soil": "C", "receiving_water": "Susquehanna River"},
        {"type": "separation", "area_ac": 1.0, "cover": "impervious", "soil": "C", "receiving_water": "",
         "redirected_to_combined": True},
        {"type": "pipe_segment", "gpd": 5200, "justification": "metering"},
    ]
    out = r.quantify_items(items, engineer="A. Example, PE")
    gpd = [row["gpd"] for row in out["items"]]
    # TR-55 items by hand (CN 98, Q = 1.8735044 in; see test_tr55_inflow_hand_calculation_cn98_one_acre):
    # 12,000 ft2 -> 14,014.79 gal; 1 ac -> 50,873.67 gal
    expected = [3 * 1.1 * 1440, 4 * 7200, 14014.79, 50873.67, 0.0, 5200]
    np.testing.assert_allclose(gpd, expected, rtol=0, atol=0.01)
    assert out["total_gpd"] == pytest.approx(sum(expected), abs=0.03)  # the non-qualifying item is not counted
    assert [row["qualifies"] for row in out["items"]] == [True, True, True, True, False, True]
    assert "Table 174-19.1" in out["items"][0]["basis"] and "Table 174-19.2" in out["items"][1]["basis"]
    assert "Table 174-19.3" in out["items"][2]["basis"] and "B(1)" in out["items"][4]["note"]


@pytest.mark.parametrize(
    ("item", "match"),
    [
        ({"type": "manhole"}, "type"),
        ({"type": "lateral", "gpd": 100}, "justification"),
        ({"type": "roof_drain", "area_ac": 1.0}, "cover and soil"),
        ({"type": "roof_drain", "area_ac": -1.0, "cover": "impervious", "soil": "C"}, "area_ac"),
        ({"type": "roof_drain", "area_ac": 1.0, "cover": "lawn", "soil": "C"}, "cover"),
        ({"type": "roof_drain", "area_ac": 1.0, "cover": "impervious", "soil": "E"}, "soil"),
    ],
)
def test_quantify_item_bad_input(item, match):
    with pytest.raises(InputError, match=match):
        r.quantify_item(item, engineer="A, PE")


def test_case_by_case_item_needs_engineer():
    with pytest.raises(InputError, match="PE"):
        r.quantify_item({"type": "defective_cover", "gpd": 100, "justification": "dye test"}, engineer="")
