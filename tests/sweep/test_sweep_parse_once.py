"""Each input file of a sweep is parsed once: the model (and the engine's check of it), the site and
the rule set that ``load_sweep`` read to validate the grid are the ones ``run_sweep`` uses; what is
kept never travels to the workers and a changed spec reads its own files."""

from __future__ import annotations

import collections
import dataclasses
import pickle

import pytest

from capacitysim.io import site_files
from capacitysim.io.sweep_files import load_sweep
from capacitysim.network import engine
from capacitysim.network import model as network_model
from capacitysim.workflows.sweep import run_sweep

from .conftest import ROOT, TINY

SITE = ROOT / "models" / "sites" / "new-building.toml"


@pytest.fixture
def calls(monkeypatch):
    """Counts of the calls of the model, site and rule-set readers (and of the engine's check)."""
    counts = collections.Counter()
    for mod, name in ((network_model, "load_model"), (engine, "probe_inp"), (site_files, "load_site"),
                      (site_files, "load_rule_set")):
        real = getattr(mod, name)

        def counted(*args, _real=real, _name=name, **kwargs):
            counts[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(mod, name, counted)
    return counts


@pytest.mark.swmm
def test_swmm_sweep_loads_and_probes_its_model_once(calls, write_sweep, tmp_path):
    p = write_sweep(f'model = "{TINY}"\n[grid]\nconnect_node = ["MH0005"]\nconnect_gpd = [0, 1000]\n')
    spec = load_sweep(p)
    assert calls == {"load_model": 1, "probe_inp": 1}
    run = run_sweep(spec, tmp_path / "r.zarr", workers=0, max_scenarios=1)
    assert run.computed == 1
    assert calls == {"load_model": 1, "probe_inp": 1}


def test_detention_sweep_reads_its_site_and_rules_once(calls, write_sweep, tmp_path):
    p = write_sweep(f'site = "{SITE}"\n[grid]\nlength_ft = [20.0, 40.0]\n')
    spec = load_sweep(p)
    read = dict(calls)
    assert read["load_site"] == 1
    run = run_sweep(spec, tmp_path / "r.zarr", workers=0)
    assert run.computed == 2 and dict(calls) == read


def test_what_load_sweep_parsed_stays_in_its_process(write_sweep):
    spec = load_sweep(write_sweep(f'site = "{SITE}"\n[grid]\nlength_ft = [20.0, 40.0]\n'))
    site, _ = spec.site_and_rules()
    shipped = pickle.loads(pickle.dumps(spec))  # what a worker receives
    assert shipped == spec and shipped._parsed == {}
    assert spec.site_and_rules()[0] is site  # the driver keeps it
    other = dataclasses.replace(spec, rules=spec.rules)
    assert other._parsed == {}  # a changed spec reads its own files
