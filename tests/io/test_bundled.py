"""Bundled data inside the package: bundled_dir through importlib.resources, the model-name resolver,
and the descriptions ``capacitysim list`` prints."""

from __future__ import annotations

import math
import os
from importlib import resources
from pathlib import Path

import pytest

from capacitysim.errors import InputError
from capacitysim.io import bundled
from capacitysim.io.files import PROJECT_ROOT, bundled_dir, package_data_dir

PACKAGE_DATA = Path(str(resources.files("capacitysim").joinpath("data")))


@pytest.fixture(autouse=True)
def _no_override(monkeypatch):
    """Run against the package's own folders unless a test sets an override."""
    for name in ("STORMS", "MODELS"):
        monkeypatch.delenv(f"CAPACITYSIM_{name}", raising=False)


# --- bundled_dir ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["storms", "models"])
def test_bundled_dir_is_the_package_data_folder(name):
    folder = bundled_dir(name)
    assert folder == package_data_dir() / name == PACKAGE_DATA / name
    assert folder.is_dir() and not folder.is_symlink()
    import capacitysim

    assert Path(capacitysim.__file__).parent / "data" / name == folder


def test_bundled_dir_environment_override(monkeypatch, tmp_path):
    monkeypatch.setenv("CAPACITYSIM_MODELS", str(tmp_path))
    assert bundled_dir("models") == tmp_path
    assert bundled_dir("storms") == PACKAGE_DATA / "storms"


def test_benchmarks_stay_in_the_source_checkout():
    """benchmarks/ is no package data: still the checkout's folder (bench run, the reference cases)."""
    assert bundled_dir("benchmarks") == PROJECT_ROOT / "benchmarks"
    assert (bundled_dir("benchmarks") / "baseline.json").is_file()


def test_the_bundled_files_are_in_the_package():
    for rel in ("storms/binghamton-1yr-24h.toml", "storms/distributions/type_ii_24h.csv", "models/synthetic-50.inp",
                "models/synthetic-500.inp", "models/sites/new-building.toml", "models/plants/sample-wwtp.csv",
                "models/projects/oak-street-sump-and-manholes.toml", "models/sweeps/connection-small.toml",
                "models/sweeps/sites/scs-tank.toml"):
        assert (PACKAGE_DATA / rel).is_file(), rel


def test_storm_distributions_are_the_hydrology_tables():
    """storms/distributions is the package's distributions folder (one copy of the tables)."""
    for f in (PACKAGE_DATA / "distributions").glob("*.csv"):
        assert (PACKAGE_DATA / "storms" / "distributions" / f.name).read_bytes() == f.read_bytes()


# --- model_path --------------------------------------------------------------------------------


def test_model_names():
    assert bundled.model_names() == ["synthetic-50", "synthetic-500"]


@pytest.mark.parametrize("name", ["synthetic-50", "synthetic-50.inp"])
def test_a_bundled_name_resolves_to_the_package_file(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no such file here
    p = bundled.model_path(name)
    assert p == PACKAGE_DATA / "models" / "synthetic-50.inp" and p.is_absolute() and p.is_file()


def test_an_existing_file_is_returned_unchanged(tmp_path, monkeypatch):
    model = tmp_path / "mine.inp"
    model.write_text("[TITLE]\n")
    assert bundled.model_path(str(model)) == model
    assert bundled.model_path(model) == model
    monkeypatch.chdir(tmp_path)
    assert bundled.model_path("mine.inp") == Path("mine.inp")  # relative, as given


def test_a_file_of_that_name_in_the_folder_wins_over_the_bundled_model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "synthetic-50.inp").write_text("[TITLE]\nmine\n")
    assert bundled.model_path("synthetic-50.inp") == Path("synthetic-50.inp")
    assert bundled.model_path("synthetic-50") == PACKAGE_DATA / "models" / "synthetic-50.inp"


def test_a_path_with_a_folder_is_never_replaced_by_a_bundled_model(tmp_path):
    missing = tmp_path / "city" / "synthetic-50.inp"
    with pytest.raises(InputError) as err:
        bundled.model_path(missing)
    msg = str(err.value)
    assert msg.startswith("--model ") and "synthetic-50.inp" in msg and "no such file" in msg
    assert "bundled models: synthetic-50, synthetic-500" in msg


def test_an_unknown_name_lists_the_bundled_models():
    with pytest.raises(InputError, match=r"^--model 'synthetic-5000': no such file, and no bundled model by that name "
                                         r"\(bundled models: synthetic-50, synthetic-500\)$"):
        bundled.model_path("synthetic-5000")


def test_a_folder_is_refused(tmp_path):
    with pytest.raises(InputError, match="is a folder or not a regular file"):
        bundled.model_path(tmp_path)


@pytest.mark.parametrize("value", ["", "   ", None, 50, ["synthetic-50"]])
def test_no_path_is_refused(value):
    with pytest.raises(InputError, match=r"^--model must be a SWMM .inp file path or the name of a bundled model; got .* "
                                         r"\(bundled models: synthetic-50, synthetic-500\)$"):
        bundled.model_path(value)


def test_the_field_is_named(tmp_path):
    with pytest.raises(InputError, match=r"^model \(in sweep\.toml\) 'nope':"):
        bundled.model_path("nope", option="model (in sweep.toml)")


def test_a_name_the_system_cannot_look_up_is_an_input_error():
    with pytest.raises(InputError, match="no such file"):
        bundled.model_path("a\x00b")
    with pytest.raises(InputError, match="no such file"):
        bundled.model_path("x" * 5000)


def test_the_models_folder_override_is_used(tmp_path, monkeypatch):
    (tmp_path / "city.inp").write_text("[TITLE]\ncity\n")
    monkeypatch.setenv("CAPACITYSIM_MODELS", str(tmp_path))
    assert bundled.model_names() == ["city"]
    assert bundled.model_path("city") == tmp_path / "city.inp"
    with pytest.raises(InputError, match=r"bundled models: city\)"):
        bundled.model_path("synthetic-50")


def test_a_missing_models_folder_lists_none(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPACITYSIM_MODELS", str(tmp_path / "absent"))
    with pytest.raises(InputError, match=r"bundled models: none\)"):
        bundled.model_path("synthetic-50")


# --- descriptions -------------------------------------------------------------------------------


def test_list_models_counts_nodes_and_links():
    by_name = {m["name"]: m for m in bundled.list_models()}
    assert set(by_name) == {"synthetic-50", "synthetic-500"}
    small = by_name["synthetic-50"]
    # 47 junctions + 2 outfalls + 1 storage; 47 conduits + 1 pump + 1 weir
    assert (small["nodes"], small["links"]) == (50, 49)
    assert (by_name["synthetic-500"]["nodes"], by_name["synthetic-500"]["links"]) == (500, 499)
    assert small["title"].startswith("Synthetic sanitary network, 50 nodes")
    assert small["description"].startswith("tests")
    assert Path(small["file"]) == PACKAGE_DATA / "models" / "synthetic-50.inp"


def test_list_models_counts_match_the_model_reader():
    from capacitysim.network import model as swmm_model

    assert set(bundled.NODE_SECTIONS) == set(swmm_model.NODE_SECTIONS)
    assert set(bundled.LINK_SECTIONS) == set(swmm_model.LINK_SECTIONS)
    for m in bundled.list_models():
        model = swmm_model.load_model(m["file"], probe=False)
        assert (m["nodes"], m["links"]) == (len(model.node_ids()), len(model.links())), m["name"]


def test_list_models_without_readme_and_with_comments(tmp_path, monkeypatch):
    (tmp_path / "m.inp").write_text(
        "[TITLE]\n;;a comment\nMy model\n\n[junctions]\n;;Name Elev\nJ1 1\n  J2 2 ; trailing\n\n"
        "[OUTFALLS]\nO1 0 FREE\n[CONDUITS]\nC1 J1 J2 1 0.01\nC2 J2 O1 1 0.01\n[ORIFICES]\nR1 J1 O1 SIDE 0 0.6\n"
    )
    monkeypatch.setenv("CAPACITYSIM_MODELS", str(tmp_path))
    (m,) = bundled.list_models()
    assert (m["name"], m["nodes"], m["links"], m["title"], m["description"]) == ("m", 3, 3, "My model", "")


def test_list_storms():
    (s,) = bundled.list_storms()
    assert s["name"] == "binghamton-1yr-24h" and s["depth_in"] == 2.1 and s["distribution"] == "II"
    assert (s["duration_hr"], s["dt_min"], s["return_period_yr"]) == (24.0, 6.0, 1)
    assert s["location"] == "City of Binghamton, NY"


def test_list_covers_gives_the_numbers_curve_number_uses():
    from capacitysim.hydrology import cover_types, curve_number

    covers = bundled.list_covers()
    for family in ("TR-55", "BJC 174-19.3"):
        listed = [c["cover"] for c in covers if c["cn_table"] == family]
        assert len(listed) == len(set(listed))
        assert sorted(listed) == cover_types(family)
    for c in covers:
        for soil, cn in c["cn"].items():
            if cn is None:
                with pytest.raises(InputError):
                    curve_number(c["cover"], soil, table=c["cn_table"])
            else:
                assert curve_number(c["cover"], soil, table=c["cn_table"]) == cn, (c["cover"], soil)
    imp = next(c for c in covers if c["cover"] == "impervious" and c["cn_table"] == "TR-55")
    assert imp["cn"] == {"A": 98.0, "B": 98.0, "C": 98.0, "D": 98.0} and imp["table"] == "TR-55 2-2a"
    assert all(c["description"] for c in covers)
    assert not any(isinstance(v, float) and math.isnan(v) for c in covers for v in c["cn"].values() if v is not None)


def test_list_rule_sets():
    (r,) = bundled.list_rule_sets()
    assert r["name"] == "nyc-2012" and r["title"].startswith("NYC DEP stormwater") and r["extends"] is None
    assert "31-03" in r["regulation"]


def test_readme_rows_of_a_missing_readme(tmp_path):
    assert bundled._readme_rows(tmp_path / "README.md") == {}
    (tmp_path / "README.md").write_bytes(b"\xff\xfe not utf-8")
    assert bundled._readme_rows(tmp_path / "README.md") == {}


def test_package_data_dir_is_a_real_folder():
    assert package_data_dir().is_dir() and os.path.samefile(package_data_dir(), PACKAGE_DATA)
