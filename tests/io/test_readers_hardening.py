"""Issue 12: every TOML reader turns a bad file into one DataFileError naming the file, the key and
the value - invalid UTF-8, wrong types, counts with fractions, text where a boolean belongs, loops."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from capacitysim.errors import DataFileError
import capacitysim.io.files as files
from capacitysim.io.files import read_toml
from capacitysim.io.project_files import read_design_flows, read_project
from capacitysim.io.site_files import RULES_DIR, load_rule_set, load_site
from capacitysim.io.storms import load_storm

ROOT = Path(__file__).resolve().parents[2]
PROJECT = (ROOT / "models" / "projects" / "oak-street-sump-and-manholes.toml").read_text()
FLOWS = (ROOT / "src" / "capacitysim" / "data" / "design_flows.toml").read_text()


def _write(tmp_path, text, name="f.toml"):
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return p


def _one_line(exc) -> str:
    msg = str(exc.value)
    assert "\n" not in msg
    return msg


# --- read_toml ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "data, match",
    [
        (b'name = "\xff\xfe"\n', r"not valid TOML: not UTF-8 text \(byte b'\\xff' at offset 8\)"),
        (b"\xef\xbb\xbfname = 1\n\xc3", "not UTF-8"),
        (b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n", "not valid TOML"),
        (b"a = 1" + b"0" * 5000 + b"\n", "not valid TOML"),
        (b"a = = 1\n", "not valid TOML"),
    ],
)
def test_read_toml_bad_bytes(tmp_path, data, match):
    with pytest.raises(DataFileError, match=match) as exc:
        read_toml(_write(tmp_path, data))
    assert "f.toml" in _one_line(exc)


@pytest.mark.parametrize("loader", [read_project, load_storm, load_rule_set, read_design_flows,
                                    lambda p: load_site(p, load_rule_set())])
def test_every_toml_loader_refuses_invalid_utf8(tmp_path, loader):
    p = _write(tmp_path, b'depth_in = 2.0\nsource = "Caf\xe9"\n')
    with pytest.raises(DataFileError, match="not UTF-8"):
        loader(p)


def test_require_helpers():
    require_number, require_bool = files.require_number, files.require_bool
    assert require_number("w", "k", 3) == 3.0
    for bad, match in [(True, "must be a whole number; got True"), ("1", "must be a whole number; got '1'"), (10**400, "usable size"),
                       (math.inf, "finite"), (math.nan, "finite"), (2.5, "whole number")]:
        with pytest.raises(DataFileError, match=match):
            require_number("w", "k", bad, whole=True)
    assert require_bool("w", "k", False) is False
    for bad in ("no", "false", 0, 1, None):
        with pytest.raises(DataFileError, match="k must be true or false"):
            require_bool("w", "k", bad)


# --- project files -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "old, new, match",
    [
        ("count = 4", "count = 2.5", r"item\[2\]: count must be a whole number \(a count\); got 2.5"),
        ("count = 4", "count = 1e12", r"count must be <= 1e\+06"),
        ("count = 4", "count = inf", "count must be a finite number"),
        ("count = 4", 'count = "4"', "count must be a whole number; got '4'"),
        ('type = "sump_pump"', 'type = ["sump_pump"]', r"type must be one of .*; got \['sump_pump'\]"),
        ('cover = "impervious"', 'cover = ["impervious"]', r"cover must be a string; got \['impervious'\]"),
        ('soil = "C"\n\n[[item]]\ntype = "separation"', 'soil = 3\n\n[[item]]\ntype = "separation"', "soil must be a string; got 3"),
        ("area_sqft = 12000", "area_sqft = 1e308", "area_sqft must be <= "),
        ('engineer = "A. Example, PE"', "engineer = 1", "engineer must be a string; got 1"),
        ('id = "JC-2024-07"', 'id = ""', "id must be a non-empty string"),
    ],
)
def test_project_file_types(tmp_path, old, new, match):
    assert old in PROJECT
    with pytest.raises(DataFileError, match=match) as exc:
        read_project(_write(tmp_path, PROJECT.replace(old, new, 1)))
    assert "f.toml" in _one_line(exc)


def test_project_and_items_must_be_tables(tmp_path):
    text = 'item = [1, 2]\n[project]\nid = "X"\nname = "Y"\nengineer = "Z"\n'
    with pytest.raises(DataFileError, match=r"item\[0\]: must be a table"):
        read_project(_write(tmp_path, text))
    text = "project = 1\n" + PROJECT[PROJECT.index("[[item]]"):]
    with pytest.raises(DataFileError, match=r"\[project\]: must be a table \(\[section\] or \{ key = value \}\); got a number, 1"):
        read_project(_write(tmp_path, text))


def test_separation_redirect_flag_is_a_boolean(tmp_path):
    text = PROJECT.replace('receiving_water = "Susquehanna River"', 'receiving_water = "Susquehanna River"\nredirected_to_combined = "no"')
    with pytest.raises(DataFileError, match="redirected_to_combined must be true or false"):
        read_project(_write(tmp_path, text))


# --- design flow tables ------------------------------------------------------------------------------
def _first_row_flag(text: str, new: str) -> str:
    i = text.index("[uses.")
    j = text.index("verified = false", i)
    return text[:j] + new + text[j + len("verified = false"):]


@pytest.mark.parametrize("flag", ['verified = "no"', 'verified = "yes"', "verified = 0", "verified = 1"])
def test_design_flow_verified_must_be_a_boolean(tmp_path, flag):
    """``verified = "no"`` was counted as verified (any non-empty text is truthy)."""
    with pytest.raises(DataFileError, match=r"uses.residence_bedroom: verified must be true or false"):
        read_design_flows(_write(tmp_path, _first_row_flag(FLOWS, flag)))


def test_design_flow_verified_true_and_absent(tmp_path):
    table = read_design_flows(_write(tmp_path, _first_row_flag(FLOWS, "verified = true")))
    assert table["uses"]["residence_bedroom"]["verified"] is True
    assert all(isinstance(u["verified"], bool) for u in table["uses"].values())


def test_credits_connection_refuses_a_textual_verified_flag(run_cli, tmp_path):
    p = _write(tmp_path, _first_row_flag(FLOWS, 'verified = "no"'))
    r = run_cli("credits", "connection", "--use", "residence_bedroom=30", "--flows", str(p), "--json")
    assert r.exit_code == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "verified must be true or false" in r.stderr


@pytest.mark.parametrize("old, new, match", [
    ("gpd_per_unit = 110", "gpd_per_unit = 1e308", "gpd_per_unit must be <= 1e\\+09"),
    ("gpd_per_unit = 110", 'gpd_per_unit = "110"', "gpd_per_unit must be a number"),
    ('unit = "bedroom"', "unit = 3", "unit must be a string; got 3"),
])
def test_design_flow_values(tmp_path, old, new, match):
    assert old in FLOWS
    with pytest.raises(DataFileError, match=match):
        read_design_flows(_write(tmp_path, FLOWS.replace(old, new, 1)))


# --- rule sets ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, match",
    [
        ('extends = "nyc-2012"\n[weir_coefficient]\nvalue = -3.33\n', "weir_coefficient must be > 0; got -3.33"),
        ('extends = "nyc-2012"\n[design_storm_10yr_24h]\ndepth_in = -5.0\n', "design_storm_10yr_24h.depth_in must be > 0; got -5"),
        ('extends = "nyc-2012"\n[design_storm_10yr_24h]\ndistribution = "V"\n', "distribution must be one of I, IA, II, III"),
        ('extends = "nyc-2012"\n[runoff_coefficients]\nverified = "no"\n', r"\[runoff_coefficients\] verified must be true or false"),
        ('extends = "nyc-2012"\n[idf_10yr]\na = 1e6\n', r"idf_10yr gives 66666.7 in/h at t = 0"),
        ('extends = "nyc-2012"\n[design_intensity_in_hr]\nvalue = 1e308\n', "design_intensity_in_hr must be <= 100"),
        ('extends = "nyc-2012"\n[rational_hydrograph]\ndurations_min = []\n', "durations_min must list 1 to 100 durations"),
        ('extends = "nyc-2012"\n[rational_hydrograph]\ntc_min = 1e9\n', "rational_hydrograph.tc_min must be <= 10080"),
        ('extends = "nyc-2012"\n[routing]\ndt_min = 1e308\n', "routing.dt_min must be <= 60"),
        ('extends = "nyc-2012"\n[runoff_coefficients]\nroof = 1.5\n', "runoff_coefficients.roof must be <= 1"),
        ('extends = "nyc-2012"\n[idf_10yr]\nsource = 5\n', r"\[idf_10yr\] source must be a string"),
        ('extends = "nyc-2012"\n[colour]\nvalue = 1\n', r"unknown table \[colour\]"),
        ('extends = "nyc-2012"\nname = 5\n', "name must be a string"),
        ('name = "mine"\n[design_intensity_in_hr]\nvalue = 5.95\n', r"rule set is missing \[rational_cfs_per_acre_in_hr\]"),
        ('extends = 5\n', "extends must name another rule set"),
    ],
)
def test_rule_set_values(tmp_path, text, match):
    with pytest.raises(DataFileError, match=match) as exc:
        load_rule_set(_write(tmp_path, text))
    _one_line(exc)


def test_override_without_its_own_verified_flag_is_unverified(tmp_path):
    """The base's verified = true spoke of the base's value: a changed value is unverified unless it says so."""
    base = load_rule_set("nyc-2012")
    assert "runoff_coefficients" not in base.unverified()
    mine = load_rule_set(_write(tmp_path, 'extends = "nyc-2012"\n[runoff_coefficients]\nroof = 0.9\nsource = "my survey"\n'))
    assert "runoff_coefficients" in mine.unverified()
    mine = load_rule_set(_write(tmp_path, 'extends = "nyc-2012"\n[runoff_coefficients]\nroof = 0.9\nsource = "x"\nverified = true\n', "v.toml"))
    assert "runoff_coefficients" not in mine.unverified()


def test_extends_chain_and_cycles(tmp_path):
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.write_text(f'extends = "{b}"\n')
    b.write_text('extends = "nyc-2012"\n[idf_10yr]\na = 150.0\n')
    rs = load_rule_set(a)
    assert rs.value("idf_10yr", "a") == 150.0
    assert rs.sources == [str(a), str(b), str(RULES_DIR / "nyc-2012.toml")]
    b.write_text(f'extends = "{a}"\n')
    with pytest.raises(DataFileError, match=r"extends loops back .*a.toml -> .*b.toml -> .*a.toml"):
        load_rule_set(a)
    chain = [tmp_path / f"c{i}.toml" for i in range(12)]
    for i, p in enumerate(chain):
        p.write_text(f'extends = "{chain[i + 1]}"\n' if i + 1 < len(chain) else 'extends = "nyc-2012"\n')
    with pytest.raises(DataFileError, match="more than 8 deep"):
        load_rule_set(chain[0])


# --- storms ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, match",
    [
        ('depth_in = 1e308\ndistribution = "II"\nsource = "x"\n', r"depth_in must be in \[0, 200\] in"),
        ('depth_in = 2.0\ndistribution = "II"\nsource = "x"\ndt_min = 1e-9\n', "would need 1,440,000,000,000 time steps"),
        ('depth_in = 2.0\ndistribution = "II"\nsource = "x"\ndt_min = 5e-324\n', "would need infinitely many time steps"),
        ('depth_in = 2.0\ndistribution = ["II"]\nsource = "x"\n', "distribution must be a string"),
        ('depth_in = 2.0\ndistribution = "II"\nsource = 1\n', "source must be a string"),
        ('depth_in = 1' + "0" * 400 + '\ndistribution = "II"\nsource = "x"\n', "usable size"),
        ('depth_in = 2.0\ndistribution = "II"\nsource = "x"\nreturn_period_yr = 1e308\n', "return_period_yr must be > 0 and <= 10,000"),
    ],
)
def test_storm_files(tmp_path, text, match):
    with pytest.raises(DataFileError, match=match) as exc:
        load_storm(_write(tmp_path, text))
    assert "f.toml" in _one_line(exc)


def test_storm_name_too_long_for_the_system_is_not_found():
    with pytest.raises(DataFileError, match="no such file"):
        load_storm("x" * 5000)
