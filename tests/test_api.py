"""The public Python API: one function per workflow, returning the document the CLI prints with --json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import capacitysim
import capacitysim.workflows
from capacitysim.cli import cli

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "models" / "sites" / "new-building.toml"


def _cli_json(*args):
    r = CliRunner().invoke(cli, [*args, "--json"])
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout)


def test_the_api_is_listed_and_documented():
    names = set(capacitysim.__all__)
    assert {"capacity_demonstration", "design_detention", "spdes_check", "connection_credits", "run_sweep", "open_sweep"} <= names
    assert names <= set(dir(capacitysim))
    for name in names:
        fn = getattr(capacitysim, name)
        assert "Returns" in fn.__doc__ and "Parameters" in fn.__doc__, name
    assert {"run_demonstration", "design_site", "design_batch", "run_check", "run_sweep"} <= set(dir(capacitysim.workflows))
    with pytest.raises(AttributeError):
        capacitysim.no_such_function  # noqa: B018


def test_design_detention_is_the_cli_document():
    api = capacitysim.design_detention(SITE, swmm=False).to_dict()
    doc = _cli_json("detention", str(SITE), "--no-swmm")
    assert api == doc
    assert doc["kind"] == "detention-design" and doc["verdict"] in ("pass", "fail")
    assert all({"criterion", "element", "before", "after", "limit", "unit", "passed", "citation"} <= set(c) for c in doc["checks"])


def test_design_detention_variants_is_the_same_engine():
    one = capacitysim.design_detention(SITE, swmm=False)
    h = one.site.system["height_ft"]
    many = capacitysim.design_detention_variants(SITE, {"height_ft": [h, 2 * h]})
    assert many.n == 2
    assert many.values["orifice_diameter_in"][0] == one.numbers["orifice_diameter_in"]
    assert many.values["storage_provided_cf"][1] == pytest.approx(2 * many.values["storage_provided_cf"][0], rel=1e-9)


def test_connection_credits_is_the_cli_document():
    api = capacitysim.connection_credits({"residence_bedroom": 6}).to_dict()
    doc = _cli_json("credits", "connection", "--use", "residence_bedroom=6")
    assert api == doc


def test_spdes_check_is_the_cli_document():
    api = capacitysim.spdes_check(flows="sample-wwtp", watershed=True, limit_mgd=0.5, as_of="2024-12-31", added_gpd=[20000]).to_dict()
    doc = _cli_json("spdes", "check", "--flows", "sample-wwtp", "--watershed", "--limit-mgd", "0.5", "--as-of", "2024-12-31",
                    "--added-gpd", "20000")
    assert api == doc
    assert doc["kind"] == "spdes-check" and doc["verdict"] == ("fail" if doc["connection_prohibited"] else "pass")
    assert [c["passed"] for c in doc["checks"]] == [not doc["violation_in_prior_12_months"], not doc["projected_violation"]]


@pytest.mark.swmm
def test_capacity_demonstration_by_bundled_name_is_the_cli_document():
    with capacitysim.capacity_demonstration("synthetic-50", ["MH0017=60000"], storm="binghamton-1yr-24h") as d:
        api = d.to_dict()
    doc = _cli_json("capacity", "--model", "synthetic-50", "--storm", "binghamton-1yr-24h", "--connect", "MH0017=60000")
    assert doc["kind"] == "capacity-demonstration"
    for key in ("verdict", "checks", "failed_checks", "injections", "nodes", "links", "hydrographs", "profile"):
        assert api[key] == doc[key], key
    assert Path(doc["model"]).name == "synthetic-50.inp"
