"""Storm specs ``DIST:DEPTH[:24h]`` (issue 28, item 4): the grammar, its refusals, and the error of a reference
that is nothing (``10-year``). Pure: no SWMM."""

from __future__ import annotations

import json

import numpy as np
import pytest

from capacitysim.errors import DataFileError, InputError
from capacitysim.io.storms import (MM_PER_IN, SPEC_GRAMMAR, SPEC_SOURCE, StormSpecError, load_storm,
                                   looks_like_storm_spec, parse_storm_spec)


@pytest.mark.parametrize("ref", ["type2:3.2in", "TYPE2:3.2in", "II:3.2in", "ii:3.2 in", "NRCS-II:3.2in:24h",
                                 "nrcs-type-ii:3.2in:24 hr", "Type II:3.2in", "2:3.2in", "II:3.2\""])
def test_type_ii_spellings_are_one_storm(ref):
    spec = load_storm(ref)
    assert (spec.distribution, spec.depth_in, spec.duration_hr, spec.dt_min) == ("II", 3.2, 24.0, 6.0)
    assert spec.name == "NRCS Type II 24-hour, 3.2 in"
    assert spec.source == SPEC_SOURCE and spec.path == "" and spec.return_period_yr is None


@pytest.mark.parametrize("ref, dist", [("type1:2in", "I"), ("1a:2in", "IA"), ("Type IA:2in", "IA"), ("NRCS-III:2in", "III"),
                                       ("type3:2in", "III"), ("i:2in", "I")])
def test_every_distribution(ref, dist):
    spec = load_storm(ref)
    assert spec.distribution == dist and spec.name == f"NRCS Type {dist} 24-hour, 2 in"
    assert float(spec.hyetograph().sum()) == pytest.approx(2.0)


def test_spec_hyetograph_equals_a_storm_file_with_the_same_fields(tmp_path):
    p = tmp_path / "same.toml"
    p.write_text('name = "same"\ndepth_in = 3.2\ndistribution = "II"\nduration_hr = 24.0\ndt_min = 6.0\n'
                 f'source = "{SPEC_SOURCE}"\n')
    from_file, from_spec = load_storm(p).hyetograph(), load_storm("type2:3.2in").hyetograph()
    np.testing.assert_array_equal(from_spec.values, from_file.values)
    for name in from_file.coords:
        np.testing.assert_array_equal(from_spec[name].values, from_file[name].values)
    assert from_spec.dims == from_file.dims and from_spec.shape == from_file.shape


def test_mm_are_converted_to_inches():
    spec = load_storm("type2:80mm")
    assert spec.depth_in == 80 / MM_PER_IN and spec.name == "NRCS Type II 24-hour, 80 mm (3.15 in)"
    np.testing.assert_array_equal(spec.hyetograph().values, parse_storm_spec("II:3.1496062992125984in").hyetograph().values)
    assert load_storm("II:25.4mm").depth_in == 1.0


@pytest.mark.parametrize("ref, problem", [
    ("type4:3in", "unknown distribution 'type4' (allowed: I, IA, II, III)"),
    ("IV:3in", "unknown distribution 'IV'"),
    ("type2:3.2in:6h", "duration '6h': only 24h is allowed"),
    ("type2:3.2in:12hr", "only 24h is allowed"),
    ("type2:3.2in:soon", "duration 'soon' is not a number of hours"),
    ("type2:-1in", "depth must be > 0 and <= 200 in"),
    ("type2:0in", "depth must be > 0"),
    ("type2:300in", "depth must be > 0 and <= 200 in (5080 mm)"),
    ("type2:3.2", "depth '3.2' needs its unit, in or mm"),
    ("type2:3.2cm", "needs its unit, in or mm (got 'cm')"),
    ("type2:lots", "depth 'lots' is not a number with a unit"),
    ("type2:", "expected two or three parts"),
    ("type2:3in:24h:x", "expected two or three parts"),
])
def test_refusals_name_the_part_and_the_grammar(ref, problem):
    with pytest.raises(StormSpecError) as err:
        load_storm(ref)
    assert problem in err.value.problem
    assert isinstance(err.value, InputError) and SPEC_GRAMMAR in str(err.value) and repr(ref) in str(err.value)


def test_ten_year_says_what_a_storm_is():
    with pytest.raises(DataFileError) as err:
        load_storm("10-year")
    msg = str(err.value)
    assert "storm '10-year': no such file, no bundled storm by that name, and not a storm spec" in msg
    assert "binghamton-1yr-24h" in msg and "storm TOML file" in msg and SPEC_GRAMMAR in msg
    assert "type2:<depth>in" in msg and "NOAA Atlas 14" in msg


def test_a_name_without_a_return_period_gets_no_return_period_hint():
    with pytest.raises(DataFileError) as err:
        load_storm("big-storm")
    assert SPEC_GRAMMAR in str(err.value) and "NOAA Atlas 14" not in str(err.value)


def test_paths_are_not_specs(tmp_path):
    assert looks_like_storm_spec("type2:3.2in") and not looks_like_storm_spec("binghamton-1yr-24h")
    assert not looks_like_storm_spec(r"C:\storms\x.toml") and not looks_like_storm_spec("a/b:c") \
        and not looks_like_storm_spec("x:y.toml") and not looks_like_storm_spec(tmp_path)
    with pytest.raises(DataFileError, match="no such file"):  # a missing path is a missing file, not a bad spec
        load_storm(str(tmp_path / "type2:3in.toml"))


def test_a_file_named_like_a_spec_is_the_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "II:9in").write_text('depth_in = 1.5\ndistribution = "III"\nsource = "a file"\n')
    assert load_storm("II:9in").depth_in == 1.5


def test_named_storm_keeps_its_source():
    spec = load_storm("binghamton-1yr-24h")
    assert spec.source.startswith("Binghamton-Johnson City") and "Table 174-19.2" in spec.source


# --- the processes' storm inputs (the CLI and the Python API go through this validator) -------------------------


def test_headroom_takes_a_set_of_storms_with_specs():
    from capacitysim.processes import get

    v = get("headroom").check_values({"model": "synthetic-50", "storms": ("type2:3.2in", "binghamton-1yr-24h", "IA:50mm")},
                                     source="cli")
    first, bundled_name, mm = v["storms"]
    assert first == load_storm("type2:3.2in") and bundled_name == "binghamton-1yr-24h" and mm.distribution == "IA"


def test_capacity_storm_input_refuses_a_bad_spec_naming_the_field():
    from capacitysim.processes import get
    from capacitysim.processes.base import FieldInputError

    proc = get("capacity-demonstration")
    assert proc.check_values({"model": "synthetic-50", "storm": "NRCS-III:2in:24h"}, source="api")["storm"] \
        == load_storm("type3:2in")
    with pytest.raises(FieldInputError) as err:
        proc.check_values({"model": "synthetic-50", "storm": "type2:3.2in:6h"}, source="cli")
    assert err.value.field == "--storm" and "only 24h is allowed" in str(err.value)
    assert "binghamton-1yr-24h" in err.value.allowed and "type2:3.2in" in err.value.allowed


def test_headroom_workflow_labels_spec_storms():
    from capacitysim.workflows.headroom import storm_list

    (label, _, rec), (label2, _, _) = storm_list([load_storm("type2:3.2in"), "binghamton-1yr-24h"])
    assert label == "NRCS Type II 24-hour, 3.2 in" and rec["depth_in"] == 3.2 and rec["file"] is None
    assert label2 == "binghamton-1yr-24h"


def test_sweep_file_storm_spec(tmp_path):
    from capacitysim.io.sweep_files import load_sweep

    p = tmp_path / "s.toml"
    p.write_text('kind = "runoff"\nstorm = "type3:4in"\n[grid]\ncn = [70, 85]\ntc_min = [15]\n')
    spec = load_sweep(p)
    assert spec.storm == load_storm("type3:4in")


# --- the command line -------------------------------------------------------------------------------------------


def test_cli_storm_shows_a_spec(run_cli):
    r = run_cli("storm", "type2:3.2in", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["name"] == "NRCS Type II 24-hour, 3.2 in" and doc["depth_in"] == 3.2 and doc["source"] == SPEC_SOURCE


def test_cli_storm_ten_year_is_a_usage_error(run_cli):
    r = run_cli("storm", "10-year")
    assert r.exit_code == 2 and "type2:<depth>in" in r.stderr and "binghamton-1yr-24h" in r.stderr


def test_cli_list_storms_shows_the_grammar(run_cli):
    r = run_cli("list", "storms")
    assert r.exit_code == 0 and "type2:3.2in" in r.stdout.splitlines()[0] and SPEC_GRAMMAR in r.stderr
    doc = json.loads(run_cli("list", "storms", "--json").stdout)
    assert doc["spec"]["grammar"] == SPEC_GRAMMAR and doc["items"][0]["name"] == "binghamton-1yr-24h"


def test_headroom_workflow_takes_spec_text():
    """The workflow itself (not only the processes' validator) reads a spec given as text."""
    from capacitysim.workflows.headroom import storm_list

    ((label, storm, rec),) = storm_list(["type2:3.2in"])
    assert label == "type2:3.2in" and rec["name"] == "NRCS Type II 24-hour, 3.2 in" and rec["file"] is None
