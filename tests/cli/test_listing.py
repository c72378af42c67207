"""``capacitysim list storms|models|covers|rule-sets``: one row per bundled item, --json, usage errors."""

from __future__ import annotations

import json

import pytest


@pytest.fixture(autouse=True)
def _no_override(monkeypatch):
    for name in ("STORMS", "MODELS"):
        monkeypatch.delenv(f"CAPACITYSIM_{name}", raising=False)


def test_list_storms(run_cli):
    r = run_cli("list", "storms")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].startswith("Bundled design storms") and set(lines[1]) == {"-"}
    (row,) = lines[2:]
    assert row.startswith("binghamton-1yr-24h")
    assert "2.1 in, 24 h, NRCS Type II, 1-yr, City of Binghamton, NY" in row


def test_list_models(run_cli):
    r = run_cli("list", "models")
    assert r.exit_code == 0, r.output
    rows = r.stdout.splitlines()[2:]
    assert [row.split()[0] for row in rows] == ["synthetic-50", "synthetic-500"]
    assert "50 nodes, 49 links: tests" in rows[0]
    assert "500 nodes, 499 links" in rows[1]


def test_list_covers(run_cli):
    r = run_cli("list", "covers")
    assert r.exit_code == 0, r.output
    rows = r.stdout.splitlines()[2:]
    impervious = [row for row in rows if row.split()[0] == "impervious"]
    assert len(impervious) == 2  # TR-55 and BJC 174-19.3
    assert "[TR-55] CN A/B/C/D 98/98/98/98: Impervious areas" in impervious[0]
    assert "[BJC 174-19.3]" in impervious[1]
    assert any("/-/" in row or "CN A/B/C/D -/" in row for row in rows)  # a dash in the table stays a dash


def test_list_rule_sets(run_cli):
    r = run_cli("list", "rule-sets")
    assert r.exit_code == 0, r.output
    (row,) = r.stdout.splitlines()[2:]
    assert row.startswith("nyc-2012") and "NYC DEP stormwater performance standard" in row


@pytest.mark.parametrize("kind, key, first", [("storms", "name", "binghamton-1yr-24h"), ("models", "name", "synthetic-50"),
                                               ("covers", "cover", "open_space_poor"), ("rule-sets", "name", "nyc-2012")])
def test_list_json(run_cli, kind, key, first):
    r = run_cli("list", kind, "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["kind"] == kind and doc["count"] == len(doc["items"]) > 0
    assert doc["items"][0][key] == first


def test_list_models_json_has_counts_and_files(run_cli):
    from pathlib import Path

    doc = json.loads(run_cli("list", "models", "--json").stdout)
    small = doc["items"][0]
    assert (small["nodes"], small["links"]) == (50, 49) and Path(small["file"]).is_file()


@pytest.mark.parametrize("args", [("list", "bogus"), ("list",), ("list", "models", "storms")])
def test_unknown_or_missing_kind_is_a_usage_error(run_cli, args):
    r = run_cli(*args)
    assert r.exit_code == 2
    assert "Usage: " in r.stderr


def test_unknown_kind_names_the_allowed_ones(run_cli):
    r = run_cli("list", "bogus")
    assert "'bogus' is not one of 'storms', 'models', 'covers', 'rule-sets'" in r.stderr


def test_list_models_of_another_folder(run_cli, tmp_path, monkeypatch):
    (tmp_path / "city.inp").write_text("[TITLE]\nCity\n[JUNCTIONS]\nJ1 1\n[OUTFALLS]\nO1 0 FREE\n[CONDUITS]\nC1 J1 O1 1 0.01\n")
    monkeypatch.setenv("CAPACITYSIM_MODELS", str(tmp_path))
    r = run_cli("list", "models")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[2:] == ["city  2 nodes, 1 links"]


def test_list_models_of_an_empty_folder(run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("CAPACITYSIM_MODELS", str(tmp_path))
    r = run_cli("list", "models", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout) == {"kind": "models", "count": 0, "items": []}
