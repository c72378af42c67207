"""One detention engine: a detention sweep gives, design for design, what ``capacitysim detention`` gives.

Every bundled site (and variants of it that the rules refuse) goes through ``design_site`` (n = 1, no
SWMM) and through a sweep block (``detention_block``, the batched engine): the same numbers bit for bit,
the same verdict and first problem, and the same refusal with the same words (exit code 3 from both
commands).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from capacitysim.cli import cli
from capacitysim.errors import RefusedError
from capacitysim.io.site_files import Infiltration, Recycling, load_rule_set, load_site
from capacitysim.workflows.detention import DESIGN_CHECKS, design_site
from capacitysim.workflows.sweep import VectorPayload, detention_block

ROOT = Path(__file__).resolve().parents[2]
SITES = sorted((ROOT / "models" / "sites").glob("*.toml")) + sorted((ROOT / "models" / "sweeps" / "sites").glob("*.toml"))
SAME = ("allowable_flow_cfs", "release_rate_cfs", "weighted_c", "required_volume_cf", "storage_provided_cf", "system_height_ft")


@pytest.fixture(scope="module")
def rules():
    return load_rule_set("nyc-2012")


def _block(site, rules):
    # a one-design block: the site's own orifice invert as the "variant" (the same value)
    cols = {"orifice_invert_ft": np.array([float(site.system["orifice_invert_ft"])])}
    return detention_block(VectorPayload("detention", site, rules), cols)


def test_every_bundled_site_is_found():
    assert len(SITES) >= 4, SITES


@pytest.mark.parametrize("path", SITES, ids=lambda p: p.stem)
def test_sweep_block_equals_design_site(path, rules):
    site = load_site(path, rules)
    one = design_site(site, rules, swmm=False)
    n = one.numbers
    rec = _block(site, rules)
    for k in SAME:
        assert rec[k][0] == n[k], k
    d = n["orifice_diameter_in"]
    assert np.isnan(rec["orifice_diameter_in"][0]) if d is None else rec["orifice_diameter_in"][0] == d
    assert rec["release_limit_in"][0] == n["release_limit_diameter_in"]
    assert rec["max_depth_ft"][0] == pytest.approx(n["max_depth_ft"], rel=1e-9)
    assert rec["verdict"][0] == (1 if one.status == "pass" else 0)
    assert rec["message"][0] == (one.problems[0][: len(rec["message"][0])] if one.problems else "")
    if one.status != "pass":
        assert rec["failed_criterion"][0] in {c for c, _ in DESIGN_CHECKS.values()}


def _refused_variants(rules):
    site = load_site(ROOT / "models" / "sites" / "open-bottom-infiltration.toml", rules)
    inf = site.infiltration
    yield "laboratory permeability test", dataclasses.replace(site, infiltration=dataclasses.replace(inf, permeability_test="laboratory"))
    yield "borings elsewhere", dataclasses.replace(site, infiltration=dataclasses.replace(inf, borings_at_system_location=False))
    yield "recycling not independent", dataclasses.replace(site, recycling=Recycling(demand_gpd=500.0, independent=False))
    yield "separate sewer", dataclasses.replace(site, receiving_sewer="separate")
    alt = load_site(ROOT / "models" / "sites" / "alteration.toml", rules)
    yield "new point of discharge", dataclasses.replace(alt, new_points_of_discharge=1)
    # 15 RCNY § 31-03(a): alterations "for any horizontal building enlargement or any proposed increase in
    # impervious surfaces" only
    yield "alteration of another kind", dataclasses.replace(alt, alteration_type="interior_renovation")
    # named policy MASTER_PLAN_REQUIRED (2012 Statement of Basis and Purpose: phased or subdivided
    # developments are reviewed "as a master/phased plan site connection application proposal")
    new = load_site(ROOT / "models" / "sites" / "new-building.toml", rules)
    yield "phased without master plan", dataclasses.replace(new, phased=True)
    yield "subdivided without master plan", dataclasses.replace(new, subdivision=True)


def test_refusals_are_the_same(rules):
    seen = 0
    for what, site in _refused_variants(rules):
        with pytest.raises(RefusedError) as one:
            design_site(site, rules, swmm=False)
        with pytest.raises(RefusedError) as block:
            _block(site, rules)
        assert str(one.value) == str(block.value), what
        seen += 1
    assert seen == 8
    assert isinstance(Infiltration, type)


def test_refused_site_refuses_the_sweep_command(tmp_path):
    """The class of the issue: a laboratory permeability test is refused by `detention` AND by a sweep
    (before: credited and marked pass by the sweep). Both exit 3 with the same reason; no store is left."""
    text = (ROOT / "models" / "sites" / "open-bottom-infiltration.toml").read_text(encoding="utf-8")
    site = tmp_path / "lab.toml"
    site.write_text(text.replace('permeability_test = "in-situ"', 'permeability_test = "laboratory"'), encoding="utf-8")
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(f'site = "{site}"\n[grid]\nlength_ft = [80.0, 100.0]\n', encoding="utf-8")
    runner = CliRunner()
    a = runner.invoke(cli, ["detention", str(site), "--no-swmm"])
    b = runner.invoke(cli, ["sweep", "run", str(sweep), "--out", str(tmp_path / "out.zarr"), "--workers", "0", "--no-progress"])
    assert a.exit_code == 3 and b.exit_code == 3, (a.output, b.output)
    assert "in situ" in a.output and "in situ" in b.output
    assert not (tmp_path / "out.zarr").exists()


def test_phased_site_without_master_plan_refuses_detention_and_the_sweep(tmp_path):
    """Item 11: a phased development without a master plan reference is refused by `detention` and by a
    detention sweep alike (exit 3, the same words: site_refusals runs in design_batch and before the
    sweep's first block); no store is left."""
    text = (ROOT / "models" / "sites" / "new-building.toml").read_text(encoding="utf-8")
    site = tmp_path / "phased.toml"
    site.write_text(text.replace('receiving_sewer = "combined"\n', 'receiving_sewer = "combined"\nphased = true\n'), encoding="utf-8")
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(f'site = "{site}"\n[grid]\nlength_ft = [30.0, 40.0]\n', encoding="utf-8")
    runner = CliRunner()
    a = runner.invoke(cli, ["detention", str(site), "--no-swmm"])
    b = runner.invoke(cli, ["sweep", "run", str(sweep), "--out", str(tmp_path / "out.zarr"), "--workers", "0", "--no-progress"])
    assert a.exit_code == 3 and b.exit_code == 3, (a.output, b.output)
    for r in (a, b):
        assert "master/phased plan" in r.output and "MASTER_PLAN_REQUIRED" in r.output
    assert a.stderr.strip() == b.stderr.strip()
    assert not (tmp_path / "out.zarr").exists()
    # with the plan's reference both run
    site.write_text(site.read_text(encoding="utf-8").replace("phased = true\n", 'phased = true\nmaster_plan = "MP-1"\n'),
                    encoding="utf-8")
    assert runner.invoke(cli, ["detention", str(site), "--no-swmm"]).exit_code == 0
    b = runner.invoke(cli, ["sweep", "run", str(sweep), "--out", str(tmp_path / "out.zarr"), "--workers", "0", "--no-progress"])
    assert b.exit_code == 0, b.output
