"""Issue 12: the detention workflow refuses runaway hydrograph lengths before allocating them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from capacitysim.errors import DataFileError, InputError
from capacitysim.io.site_files import RULES_DIR, load_rule_set, load_site
from capacitysim.hydrology.rational import rational_hydrograph_shapes
from capacitysim.workflows.detention import design_site

ROOT = Path(__file__).resolve().parents[2]
BASE = (ROOT / "models" / "sites" / "new-building.toml").read_text()
DURS = [5.0, 10.0, 15.0, 20.0, 30.0, 45.0, 60.0, 90.0, 120.0]


@pytest.mark.parametrize(
    "tc_min, dt_min, match",
    [
        (5.0, 1e-9, r"would need 125,000,000,002 time steps \(tc_min = 5 min, longest storm duration 120 min, dt_min = 1e-09 min\)"),
        (1e12, 1.0, r"would need [\d,]+ time steps \(tc_min = 1e\+12 min"),
        (5.0, 5e-324, "would need infinitely many time steps"),
    ],
)
def test_rational_shapes_bounded(tc_min, dt_min, match):
    with pytest.raises(InputError, match=match):
        rational_hydrograph_shapes(DURS, tc_min, 211.7016, 15.0, dt_min)


def test_rational_shapes_many_durations_bounded():
    with pytest.raises(InputError, match=r"would need [\d,]+ values \(100 durations x"):
        rational_hydrograph_shapes([10_000.0] * 100, 5.0, 211.7016, 15.0, 0.02)


@pytest.fixture(scope="module")
def rules():
    return load_rule_set("nyc-2012")


@pytest.mark.parametrize(
    "design, match",
    [
        ("[design]\ndt_min = 1e-9\n", "the design hydrographs would need"),
        ('[design]\nhydrograph = "scs"\ncn = 80\ndt_min = 1e-9\n', "the design storm would need"),
        ("[design]\ndt_min = 0.0005\n", r"the routed hydrograph with its drain-down tail would need 1,810,001 time steps"),
    ],
)
def test_design_site_refuses_runaway_time_steps(tmp_path, rules, design, match):
    p = tmp_path / "site.toml"
    p.write_text(BASE + "\n" + design)
    with pytest.raises(InputError, match=match):
        design_site(load_site(p, rules), rules, swmm=False)


def test_site_time_inputs_bounded_at_load(tmp_path, rules):
    for design, match in [("[design]\ntc_min = 1e9\n", "tc_min must be <= 10080"), ("[design]\ndt_min = 1e308\n", "dt_min must be <= 60")]:
        p = tmp_path / "site.toml"
        p.write_text(BASE + "\n" + design)
        with pytest.raises(DataFileError, match=match):
            load_site(p, rules)


def test_scs_design_without_a_design_storm_is_a_data_file_error(tmp_path):
    """A complete user rule set without [design_storm_10yr_24h] raised KeyError for an SCS site."""
    text = (RULES_DIR / "nyc-2012.toml").read_text()
    text = re.sub(r"\[design_storm_10yr_24h\][^\[]*", "", text)
    rp = tmp_path / "no-storm.toml"
    rp.write_text(text)
    mine = load_rule_set(rp)
    p = tmp_path / "site.toml"
    p.write_text(BASE + '\n[design]\nhydrograph = "scs"\ncn = 80\n')
    with pytest.raises(DataFileError, match=r"missing \[design_storm_10yr_24h\] depth_in"):
        design_site(load_site(p, mine), mine, swmm=False)
