"""The user guide (docs/) documents every key every input-file parser accepts, and the defaults it states are
the code's.

The keys are not listed here: each parser is asked. A valid bundled example gets one unknown key in a table,
the parser refuses it, and its message names every key it allows ("allowed: a, b, c"). A key added to a
parser without a line in the guide fails this test; so does a default changed in the code but not in the guide.
"""

from __future__ import annotations

import copy
import dataclasses
import re
import tomllib
from pathlib import Path

import pytest

from capacitysim.errors import DataFileError
from capacitysim.io.files import package_data_dir

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
DATA = package_data_dir()
MODELS = DATA / "models"
UNKNOWN = "zz_not_a_key"


def page(name: str) -> str:
    return (DOCS / "reference" / name).read_text(encoding="utf-8")


def toml_text(data: dict) -> str:
    """A TOML document of ``data`` (top-level values, tables, arrays of tables, one level of nesting)."""

    def value(v) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return repr(v)

    lines = [f"{k} = {value(v)}" for k, v in data.items() if not isinstance(v, (dict, list)) or
             (isinstance(v, list) and not (v and isinstance(v[0], dict)))]
    for k, v in data.items():
        if isinstance(v, dict):
            lines.append(f"[{k}]")
            lines += [f"{kk} = {value(vv)}" for kk, vv in v.items()]
        elif isinstance(v, list) and v and isinstance(v[0], dict):
            for row in v:
                lines.append(f"[[{k}]]")
                lines += [f"{kk} = {value(vv)}" for kk, vv in row.items()]
    return "\n".join(lines) + "\n"


def allowed_keys(exc: BaseException) -> set[str]:
    """The keys a parser's refusal names after ``allowed:``."""
    m = re.search(r"allowed: ([^)]*)\)", str(exc))
    assert m, f"the refusal does not name the allowed keys: {exc}"
    return {k.strip() for k in m.group(1).split(",") if k.strip()}


def probe(read, path: Path, data: dict, where: tuple, tmp_path: Path) -> set[str]:
    """Add an unknown key at ``where`` (a path of table names; () is the top level) and return the keys the
    parser then says it allows."""
    doc = copy.deepcopy(data)
    target = doc
    for k in where:
        target = target[k]
    target[UNKNOWN] = 1
    bad = tmp_path / path.name
    bad.write_text(toml_text(doc), encoding="utf-8")
    with pytest.raises(DataFileError) as info:
        read(bad)
    keys = allowed_keys(info.value)
    assert UNKNOWN not in keys
    return keys


def undocumented(keys, text: str) -> list[str]:
    """The keys the page names neither as `key` nor, for a table, as `[key]`."""
    return sorted(k for k in keys if f"`{k}`" not in text and f"`[{k}]`" not in text and f"`[[{k}]]`" not in text)


# ------------------------------------------------------------------------------------------------
# site TOML, with each system type and every optional table
# ------------------------------------------------------------------------------------------------
SYSTEMS = {
    "tank": {"type": "tank", "bottom": "open", "length_ft": 40.0, "width_ft": 30.0, "height_ft": 4.0},
    "chamber": {"type": "chamber", "bottom": "open", "length_ft": 40.0, "width_ft": 30.0, "height_ft": 4.0,
                "porosity": 0.4},
    "pond": {"type": "pond", "bottom": "open", "bottom_length_ft": 40.0, "bottom_width_ft": 30.0,
             "side_slope_h_per_v": 3.0, "depth_ft": 4.0},
    "blue_roof": {"type": "blue_roof", "roof_area_sf": 14000.0, "max_depth_in": 3.0},
}
INFILTRATION = {"soil_borings": ["B-1"], "borings_at_system_location": True, "permeability_test": "in-situ",
                "infiltration_rate_in_hr": 1.5}


def _site_example() -> tuple[Path, dict]:
    path = MODELS / "sites" / "new-building.toml"
    return path, tomllib.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("system", sorted(SYSTEMS))
def test_site_file_keys_are_documented(system, tmp_path):
    from capacitysim.io.site_files import load_rule_set, load_site

    rules = load_rule_set("nyc-2012")
    path, data = _site_example()
    data["system"] = dict(SYSTEMS[system])
    if system != "blue_roof":
        data["infiltration"] = dict(INFILTRATION)
    data["recycling"] = {"demand_gpd": 1000.0, "independent": True}
    data["design"] = {"hydrograph": "rational"}
    data.setdefault("submittal", {})["applicant"] = "Example Owner LLC"
    read = lambda p: load_site(p, rules)  # noqa: E731
    load_site_ok = tmp_path / "ok.toml"
    load_site_ok.write_text(toml_text(data), encoding="utf-8")
    load_site(load_site_ok, rules)  # the probe starts from a valid file

    text = page("site.md")
    tables = ["site", "system", "recycling", "design", "submittal"] + (["infiltration"] if system != "blue_roof" else [])
    for where in [(), *((t,) for t in tables)]:
        keys = probe(read, path, data, where, tmp_path)
        assert not undocumented(keys, text), f"site TOML {where or 'top level'}: not in docs/reference/site.md"


def test_site_surface_types_and_coefficients_are_documented():
    from capacitysim.io.site_files import load_rule_set

    text = page("site.md")
    for surface, c in load_rule_set("nyc-2012").runoff_coefficients().items():
        assert re.search(rf"\| `{surface}` \| {c:.2f} \|", text), f"surface {surface} (C = {c}) not in site.md"


# ------------------------------------------------------------------------------------------------
# rule-set TOML
# ------------------------------------------------------------------------------------------------
def test_rule_set_keys_and_values_are_documented(tmp_path):
    from capacitysim.io.site_files import _META_KEYS, _RULE_SCALARS, load_rule_set

    text = page("rules.md")
    base = load_rule_set("nyc-2012")
    assert not undocumented(_RULE_SCALARS | _META_KEYS, text)
    # a top-level value that is not a table: the refusal names the keys that may be values
    bad = tmp_path / "bad.toml"
    bad.write_text(f'extends = "nyc-2012"\n{UNKNOWN} = 1\n', encoding="utf-8")
    with pytest.raises(DataFileError, match="keys that are not tables") as info:
        load_rule_set(bad)
    scalars = set(re.search(r"keys that are not tables: ([^)]*)\)", str(info.value)).group(1).split(", "))
    assert not undocumented(scalars, text)
    # an unknown table: the refusal names every table a rule set has
    bad.write_text(f'extends = "nyc-2012"\n[{UNKNOWN}]\nvalue = 1\n', encoding="utf-8")
    with pytest.raises(DataFileError) as info:
        load_rule_set(bad)
    tables = allowed_keys(info.value)
    assert tables == {k for k, v in base.data.items() if isinstance(v, dict)}
    for table in tables:
        assert f"`[{table}]`" in text, f"rule-set table [{table}] not in rules.md"
        if table == "runoff_coefficients":
            continue  # open table: its keys are the surface types (site.md)
        bad.write_text(f'extends = "nyc-2012"\n[{table}]\n{UNKNOWN} = 1\n', encoding="utf-8")
        with pytest.raises(DataFileError) as info:
            load_rule_set(bad)
        assert not undocumented(allowed_keys(info.value) - _META_KEYS, text), f"keys of [{table}] not in rules.md"
    # the bundled values the page states
    for table, key in [("design_intensity_in_hr", "value"), ("rational_cfs_per_acre_in_hr", "value"),
                       ("idf_10yr", "a"), ("idf_10yr", "b_min"), ("orifice_discharge_coefficient", "value"),
                       ("weir_coefficient", "value"), ("design_storm_10yr_24h", "depth_in"),
                       ("rational_hydrograph", "tc_min"), ("routing", "dt_min")]:
        row = re.search(rf"^\| `\[{table}\]`[^|]*\| `{key}` \|[^|]*\| ([^|]*) \|", text, re.M)
        assert row, f"[{table}] {key} has no row in rules.md"
        assert float(row.group(1)) == pytest.approx(base.value(table, key)), f"[{table}] {key}"


# ------------------------------------------------------------------------------------------------
# project TOML and the design-flow table
# ------------------------------------------------------------------------------------------------
ITEMS = {
    "manhole_joint_leak": {"surface": "paved", "severity": "heavy", "count": 3},
    "sump_pump": {"count": 4},
    "roof_drain": {"area_sqft": 12000, "cover": "impervious", "soil": "C"},
    "catch_basin": {"area_ac": 0.1, "cover": "impervious", "soil": "C"},
    "manhole_cover_drainage": {"area_ac": 0.1, "cover": "impervious", "soil": "C"},
    "cross_connection": {"area_ac": 0.1, "cover": "impervious", "soil": "C"},
    "separation": {"area_ac": 0.35, "cover": "impervious", "soil": "C", "receiving_water": "River"},
    "pipe_segment": {"gpd": 5200, "justification": "metered"},
    "lateral": {"gpd": 100, "justification": "metered"},
    "defective_cover": {"gpm": 1, "justification": "measured"},
}


def test_every_item_type_is_probed():
    from capacitysim.rules.ii_offset import ITEM_TYPES

    assert set(ITEMS) == set(ITEM_TYPES)


@pytest.mark.parametrize("kind", sorted(ITEMS))
def test_project_file_keys_are_documented(kind, tmp_path):
    from capacitysim.io.project_files import read_project

    path = MODELS / "projects" / "oak-street-sump-and-manholes.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    data["item"] = [{"type": kind, **ITEMS[kind]}]
    ok = tmp_path / "ok.toml"
    ok.write_text(toml_text(data), encoding="utf-8")
    read_project(ok)
    text = page("project.md")
    assert f"`{kind}`" in text
    for where in [(), ("project",)]:
        assert not undocumented(probe(read_project, path, data, where, tmp_path), text), f"project TOML {where}"
    doc = copy.deepcopy(data)
    doc["item"][0][UNKNOWN] = 1
    ok.write_text(toml_text(doc), encoding="utf-8")
    with pytest.raises(DataFileError) as info:
        read_project(ok)
    assert not undocumented(allowed_keys(info.value), text), f"item type {kind}"


def test_design_flow_keys_are_documented(tmp_path):
    from capacitysim.io.project_files import read_design_flows

    path = DATA / "design_flows.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    data = {"meta": data["meta"], "uses": {"residence_bedroom": data["uses"]["residence_bedroom"]}}
    text = page("project.md")
    doc = dict(data, **{UNKNOWN: 1})
    row = copy.deepcopy(data)
    row["uses"]["residence_bedroom"][UNKNOWN] = 1
    for d in (doc, row):
        bad = tmp_path / "bad.toml"
        lines = [f"{k} = {v}" for k, v in d.items() if not isinstance(v, dict)]
        lines += ["[meta]"] + [f'{k} = "{v}"' for k, v in d["meta"].items()]
        for name, use in d["uses"].items():
            lines.append(f"[uses.{name}]")
            lines += [f"{k} = {toml_text({k: v}).split(' = ', 1)[1].strip()}" for k, v in use.items()]
        bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
        with pytest.raises(DataFileError) as info:
            read_design_flows(bad)
        assert not undocumented(allowed_keys(info.value), text)


# ------------------------------------------------------------------------------------------------
# storm, criteria, plant, submittal, sweep
# ------------------------------------------------------------------------------------------------
def test_storm_file_keys_and_defaults_are_documented(tmp_path):
    from capacitysim.io.storms import DEFAULT_DT_MIN, MAX_RETURN_PERIOD_YR, load_storm
    from capacitysim.hydrology._inputs import MAX_PRECIP_IN

    path = DATA / "storms" / "binghamton-1yr-24h.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    text = page("storm.md")
    assert not undocumented(probe(load_storm, path, data, (), tmp_path), text)
    assert re.search(rf"\| `dt_min` \| min \| {DEFAULT_DT_MIN:g} \|", text)
    assert re.search(rf"\| `depth_in` \| in \| required \| \(0, {MAX_PRECIP_IN:g}\]", text)
    assert f"(0, {MAX_RETURN_PERIOD_YR:,.0f}]" in text


def test_criteria_keys_and_defaults_are_documented():
    from capacitysim.rules.capacity import Criteria

    text = page("criteria.md")
    with pytest.raises(DataFileError) as info:
        Criteria.from_dict({UNKNOWN: 1.0})
    keys = allowed_keys(info.value)
    assert keys == {f.name for f in dataclasses.fields(Criteria)}
    for f in dataclasses.fields(Criteria):
        row = re.search(rf"^\| `{f.name}` \| [^|]+ \| ([^|]+) \|", text, re.M)
        assert row, f"criteria key {f.name} has no row in criteria.md"
        assert float(row.group(1)) == f.default, f"criteria.md gives {f.name} = {row.group(1)}, the code {f.default}"


def test_plant_file_keys_are_documented(tmp_path):
    from capacitysim.io.plant_flows import MAX_PLAUSIBLE_MGD, read_plant_file

    path = MODELS / "plants" / "sample-wwtp.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    text = page("plant.md")
    assert not undocumented(probe(read_plant_file, path, data, (), tmp_path), text)
    assert f"(0, {MAX_PLAUSIBLE_MGD:,.0f}]" in text


def test_flow_csv_and_dmr_columns_are_documented():
    import inspect

    from capacitysim.io.plant_flows import _DMR_REQUIRED, read_flow_csv

    text = page("plant.md")
    sig = inspect.signature(read_flow_csv)
    assert not undocumented([sig.parameters["date_column"].default, sig.parameters["flow_column"].default], text)
    assert not undocumented(_DMR_REQUIRED, text)


def test_submittal_keys_are_documented(tmp_path):
    from capacitysim.io.submittal import load_submittal

    path = tmp_path / "submittal.toml"
    data = {"submittal": {"applicant": "Example Owner LLC"}}
    assert not undocumented(probe(load_submittal, path, data, ("submittal",), tmp_path), page("site.md"))


SWEEPS = {"swmm": "storm-sensitivity.toml", "detention": "detention-family.toml"}


@pytest.mark.parametrize("kind", ["swmm", "detention", "runoff"])
def test_sweep_file_keys_and_parameters_are_documented(kind, tmp_path):
    from capacitysim.io.sweep_files import load_sweep

    text = page("sweep.md")
    if kind == "runoff":
        path, data = tmp_path / "runoff.toml", {"kind": "runoff", "grid": {"cn": [70, 80]}}
    else:
        path = MODELS / "sweeps" / SWEEPS[kind]
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        base = path.parent
        for key in ("model", "site"):  # the probe's copy lives elsewhere: absolute paths
            if key in data:
                data[key] = str((base / data[key]).resolve())
    assert not undocumented(probe(load_sweep, path, data, (), tmp_path), text)
    doc = copy.deepcopy(data)
    doc["grid"][UNKNOWN] = [1.0]
    bad = tmp_path / "grid.toml"
    bad.write_text(toml_text(doc), encoding="utf-8")
    with pytest.raises(DataFileError) as info:
        load_sweep(bad)
    params = allowed_keys(info.value)
    assert params, kind
    assert not undocumented(params, text), f"{kind} sweep parameters"


# ------------------------------------------------------------------------------------------------
# program policies
# ------------------------------------------------------------------------------------------------
def test_every_program_policy_is_documented():
    from capacitysim.bank.ledger import POLICIES
    from capacitysim.rules import ii_offset, nyc_stormwater, spdes

    text = (DOCS / "reference" / "policies.md").read_text(encoding="utf-8")
    for name, pol in POLICIES.items():
        row = re.search(rf"^\| `{name}` \| ([^|]+) \|", text, re.M)
        assert row, f"bank policy {name} not in policies.md"
        assert row.group(1).strip().strip("`") == str(pol["value"]), f"bank policy {name}: value"
    # the named policies: the registry (capacitysim.workflows.policies), not a list kept here by hand
    from capacitysim.workflows.policies import catalogue, markdown

    assert markdown() in text, ("the policy registry of docs/reference/policies.md is not the catalogue's: "
                                "python -m capacitysim.workflows.policies --write docs/reference/policies.md")
    for name in catalogue():
        assert f"`{name}`" in text, f"policy {name} not in policies.md"
    assert spdes.POLICY_AS_OF in catalogue() and nyc_stormwater.MASTER_PLAN_POLICY in catalogue()
    assert f"| {spdes.RECORD_MAX_AGE_DAYS} days" in text
    assert f"| `{ii_offset.DEFAULT_THRESHOLD_BASIS}` |" in text
    assert f"| `{ii_offset.DEFAULT_INFLOW_CREDIT_BASIS}` |" in text
