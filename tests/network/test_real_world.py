"""Capacity verdicts on the kinds of models engineers already have (issue 11), one small model per failure class.

The models are in ``tests/data/models`` (see its README): each was made for one class of failure that an
earlier version of capacitysim got wrong on public models, and each test below failed on that version.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

from capacitysim.errors import InputError
from capacitysim.network.basins import find_basins
from capacitysim.network.engine import read_results, run_inp
from capacitysim.network.model import load_model
from capacitysim.units import GALLONS_PER_CUBIC_FOOT
from capacitysim.workflows.demonstration import run_demonstration

MODELS = Path(__file__).resolve().parents[1] / "data" / "models"
STORM = "binghamton-1yr-24h"


def _injection(d, what):
    return next(i for i in d.injections if i["what"] == what)


# --------------------------------------------------------------------------- class 1: the added flow is the stated flow


@pytest.mark.swmm
def test_connection_adds_its_stated_volume_whatever_the_models_patterns(tmp_path):
    """DWF given as 800 people x a per-capita pattern in cfs/person (mean 1.5e-4): the connection still adds
    50,000 gpd on average over the 24 h reporting period, shaped by that pattern divided by its mean."""
    d = run_demonstration(MODELS / "population-dwf.inp", connections=["J2=50000"], work_dir=tmp_path)
    conn = _injection(d, "connection")
    assert conn["intended_cf"] == pytest.approx(50000.0 / GALLONS_PER_CUBIC_FOOT, rel=1e-9)  # one whole day
    assert conn["received_cf"] == pytest.approx(conn["intended_cf"], rel=0.005)
    assert conn["passed"] and _injection(d, "external inflows (all)")["passed"]
    rec = d.scenario["connections"][0]
    assert "PERCAP" in rec["shape"] and "mean 1" in rec["shape"]
    assert rec["peak_factor"] == pytest.approx(1.4684 / np.mean([0.5873, 0.5063, 0.4557, 0.4354, 0.4658, 0.6278, 0.9620, 1.3165,
                                                                1.4684, 1.3975, 1.2861, 1.1949, 1.1342, 1.0734, 1.0329, 1.0127,
                                                                1.0633, 1.1747, 1.2152, 1.2253, 1.1848, 1.0633, 0.8911, 0.7091]),
                                               rel=1e-4)


@pytest.mark.swmm
def test_constant_peaking_adds_average_times_factor(tmp_path):
    from capacitysim.network.scenario import Connection

    d = run_demonstration(MODELS / "population-dwf.inp", connections=[Connection("J2", 50000.0, 2.0)], work_dir=tmp_path)
    conn = _injection(d, "connection")
    assert conn["intended_cf"] == pytest.approx(2 * 50000.0 / GALLONS_PER_CUBIC_FOOT, rel=1e-9)
    assert conn["passed"]


@pytest.mark.swmm
def test_injected_volume_mismatch_makes_the_verdict_untrusted(tmp_path):
    """The self-check can fail: a connection at a node the engine drops flow from (a model that does not route)
    receives nothing, and the verdict says untrusted with the reason."""
    text = (MODELS / "population-dwf.inp").read_text().replace("[OPTIONS]", "[OPTIONS]\nIGNORE_ROUTING       YES", 1)
    p = tmp_path / "noroute.inp"
    p.write_text(text)
    d = run_demonstration(p, connections=["J2=50000"], work_dir=tmp_path / "w")
    assert d.verdict == "untrusted"
    assert not _injection(d, "connection")["passed"]
    assert any("routes no flow" in r for r in d.untrusted_reasons)


@pytest.mark.swmm
def test_basins_report_mean_dwf_with_patterns_applied(run_cli):
    """Class 9: 800 people x 100 gpcd = 80,000 gpd at the plant, not '800' of raw baseline."""
    m = load_model(MODELS / "population-dwf.inp")
    plant = next(b for b in find_basins(m) if b.kind == "plant")
    assert plant.dwf_mean_gpd == pytest.approx(80000.0, rel=2e-4)
    r = run_cli("basins", "--model", str(MODELS / "population-dwf.inp"), "--json")
    doc = json.loads(r.stdout)
    assert doc["basins"][0]["dwf_mean_gpd"] == pytest.approx(80000.0, rel=2e-4)
    r = run_cli("basins", "--model", str(MODELS / "population-dwf.inp"))
    assert "mean DWF [gpd]" in r.stdout and "80,0" in r.stdout


# --------------------------------------------------------------------------- class 2: the event is not cut off


@pytest.mark.swmm
def test_spinup_is_prepended_and_the_models_period_reported_whole(tmp_path):
    """A 2 h model whose inflow hydrograph starts at once: run (not refused), the 6 h spin-up before its start,
    its hydrograph where the model put it, the conduit peaks of a plain run of the untouched file."""
    model = MODELS / "early-event-2h.inp"
    d = run_demonstration(model, connections=["J2=20000"], work_dir=tmp_path / "d")
    sim = d.to_dict()["simulation"]
    assert sim == {"start": "2024-05-31T18:00:00", "end": "2024-06-01T02:00:00", "report_start": "2024-06-01T00:00:00",
                   "spinup_hr": 6.0, "spinup_policy": sim["spinup_policy"], "initial_state": sim["initial_state"]}
    assert "6 h spin-up prepended" in sim["spinup_policy"]
    assert sim["initial_state"]["share_pct"] < sim["initial_state"]["limit_pct"]  # empty pipes: the spin-up stays
    plain = read_results(run_inp(model, tmp_path / "plain"))
    np.testing.assert_allclose(d.before.peak_flow_cfs.sel(link=plain.link.values).values, plain.peak_flow_cfs.values, rtol=0.01)
    assert float(plain.peak_flow_cfs.sel(link="C1")) > 3.0  # the event is in the statistics, not cut off
    assert all(i["passed"] for i in d.injections)


@pytest.mark.swmm
def test_spinup_keeps_a_time_series_file_in_hours_where_the_model_put_it(tmp_path):
    """The same hydrograph read from a file of hours from the start: a dated copy is run, the peaks stay."""
    text = (MODELS / "early-event-2h.inp").read_text()
    text = text.replace("HYD 0:00 0\nHYD 0:15 4\nHYD 0:45 1\nHYD 1:30 0\n", 'HYD FILE "hyd in hours.dat"\n')
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "early.inp").write_text(text)
    (folder / "hyd in hours.dat").write_text("0:00 0\n0:15 4\n0:45 1\n1:30 0\n")
    d = run_demonstration(folder / "early.inp", connections=["J2=20000"], work_dir=tmp_path / "d")
    assert any("dated copy" in n for n in d.scenario["notes"])
    plain = read_results(run_inp(MODELS / "early-event-2h.inp", tmp_path / "plain"))
    np.testing.assert_allclose(d.before.peak_flow_cfs.sel(link=plain.link.values).values, plain.peak_flow_cfs.values, rtol=0.01)
    assert sorted(p.name for p in folder.iterdir()) == ["early.inp", "hyd in hours.dat"]


@pytest.mark.swmm
def test_spinup_option_and_zero(run_cli, tmp_path):
    r = run_cli("capacity", "--model", str(MODELS / "early-event-2h.inp"), "--connect", "J2=20000", "--spinup-hr", "0", "--json")
    doc = json.loads(r.stdout)
    assert doc["simulation"]["start"] == doc["simulation"]["report_start"] == "2024-06-01T00:00:00"
    r = run_cli("capacity", "--model", str(MODELS / "early-event-2h.inp"), "--connect", "J2=20000", "--spinup-hr", "-1")
    assert r.exit_code == 2 and "--spinup-hr: got -1.0" in r.stderr  # the option, its value and what is allowed


@pytest.mark.swmm
def test_spinup_zero_gives_the_plain_runs_peaks_exactly(tmp_path):
    model = MODELS / "population-dwf.inp"
    d = run_demonstration(model, connections=["J2=20000"], work_dir=tmp_path / "d", spinup_hr=0.0)
    plain = read_results(run_inp(model, tmp_path / "plain"))
    np.testing.assert_allclose(d.before.peak_flow_cfs.sel(link=plain.link.values).values, plain.peak_flow_cfs.values, rtol=1e-12)


# --------------------------------------------------------------------------- class 3: the design storm is simulated


@pytest.mark.swmm
@pytest.mark.parametrize("name, fix", [("ignore-rainfall.inp", "IGNORE_RAINFALL"), ("events-window.inp", "[EVENTS]")])
def test_the_design_storm_is_simulated(tmp_path, name, fix):
    d = run_demonstration(MODELS / name, storm=STORM, connections=["J2=10000"], work_dir=tmp_path)
    doc = d.to_dict()
    assert any(fix in f for f in doc["fixes"]), doc["fixes"]
    assert doc["rainfall_simulated_in"] == pytest.approx(2.1, rel=0.005)
    assert not doc["untrusted_reasons"]


@pytest.mark.swmm
def test_storm_that_cannot_reach_the_network_is_refused(run_cli):
    r = run_cli("capacity", "--model", str(MODELS / "early-event-2h.inp"), "--storm", STORM, "--connect", "J2=1000")
    assert r.exit_code == 2 and "RAINGAGES" in r.stderr and len(r.stderr.strip().splitlines()) == 1


# --------------------------------------------------------------------------- class 4: criteria by element type


@pytest.mark.swmm
def test_force_main_and_sealed_junction_judged_by_their_type(tmp_path):
    d = run_demonstration(MODELS / "force-main-sealed.inp", connections=["J1=300000"], work_dir=tmp_path)
    a = d.after
    assert float(a.max_d_over_d.sel(link="C2")) > 0.8  # full: the gravity d/D rule would fail it
    assert float(a.max_depth_ft.sel(node="J2")) > float(a.rim_depth_ft.sel(node="J2")) - 1.0  # above the rim freeboard
    failed = [(c.criterion, c.element) for c in d.checks if c.passed is False]
    assert not any(e == "C2" and "d/D" in c for c, e in failed), failed
    assert not any(e == "J2" and "rim" in c for c, e in failed), failed
    assert str(a.link_shape.sel(link="C2").item()) == "FORCE_MAIN"
    assert float(a.surcharge_limit_ft.sel(node="J2")) == 300.0


@pytest.mark.swmm
def test_force_main_over_capacity_fails_on_capacity(tmp_path):
    """The force main is judged on capacity: pressurized beyond its full-flow capacity and rising, it fails."""
    d = run_demonstration(MODELS / "force-main-sealed.inp", connections=["J1=300000"], work_dir=tmp_path)
    ch = next(c for c in d.checks if c.element == "C2" and "force main" in c.criterion)
    assert ch.passed is False and ch.after > ch.before > 1.0


# --------------------------------------------------------------------------- class 5: valid input is accepted


@pytest.mark.swmm
def test_optional_fields_case_and_8bit_names(tmp_path):
    """[INFLOWS] with three fields, [DWF] with an integer baseline and "" patterns at 'j3' (defined as J3),
    an IRREGULAR conduit with roughness 0, a node named in cp1252 bytes (connected as typed in UTF-8)."""
    model = MODELS / "optional-fields-cp1252.inp"
    d = run_demonstration(model, connections=["straße=20000", "J2=10000", "j3=5000"], work_dir=tmp_path)
    assert {i["element"] for i in d.injections if i["what"] == "connection"} == {"Stra\u00dfe", "J2", "J3"}
    assert all(i["passed"] for i in d.injections), d.injections
    assert d.verdict in ("pass", "fail")
    # every line of the input with the cp1252 byte is in the scenario byte for byte
    src = [l for l in model.read_bytes().splitlines() if b"\xdf" in l and not l.lstrip().startswith(b"RAIN")]
    scen = set((tmp_path / "after_input.inp").read_bytes().splitlines())
    assert src and all(l in scen for l in src)
    doc = d.to_dict()
    assert any(n["id"] == "Straße" for n in doc["nodes"])  # shown as a person reads it


# --------------------------------------------------------------------------- class 6: external files


def _external_model(tmp_path, windows=False):
    folder = tmp_path / "model files"
    shutil.copytree(MODELS / "external files", folder)
    p = folder / "external-files.inp"
    if windows:
        p.write_text(p.read_text().replace('"rain data/rain.dat"', '"rain data\\rain.dat"'))
    return p


@pytest.mark.swmm
@pytest.mark.parametrize("windows", [False, True])
def test_external_files_read_beside_the_model_and_nothing_written_there(tmp_path, windows):
    p = _external_model(tmp_path, windows)
    before = sorted(x.name for x in p.parent.rglob("*"))
    d = run_demonstration(p, connections=["J2=10000"], work_dir=tmp_path / "work")
    assert d.before.attrs["rainfall_simulated_in"] == pytest.approx(1.8, rel=1e-6)  # 0.5 + 1.0 + 0.3 in over 1 h each
    assert sorted(x.name for x in p.parent.rglob("*")) == before  # the SAVE target is not written beside the input
    saved = list((tmp_path / "work").rglob("saved state.hsf"))
    assert len(saved) == 2  # one per run, each in its own folder
    files = {f["kind"]: f for f in d.to_dict()["external_files"]}
    assert files["RAINGAGES"]["sha256"] and files["HOTSTART"]["verb"] == "SAVE"


# --------------------------------------------------------------------------- class 7: work folders


@pytest.mark.swmm
def test_temporary_folders_removed_and_no_dangling_files_cited(run_cli, tmp_path, monkeypatch):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    r = run_cli("capacity", "--model", str(MODELS / "population-dwf.inp"), "--connect", "J2=1000", "--json")
    doc = json.loads(r.stdout)
    assert doc["before"]["report_file"] is None and doc["work_dir"] is None
    assert list(tmp.iterdir()) == []
    monkeypatch.chdir(tmp_path)
    r = run_cli("capacity", "--model", str(MODELS / "population-dwf.inp"), "--connect", "J2=1000", "--work-dir", "runs", "--json")
    doc = json.loads(r.stdout)
    assert Path(doc["before"]["report_file"]).is_file() and Path(doc["after"]["report_file"]).is_file()
    assert Path(doc["work_dir"]) == (tmp_path / "runs").resolve()
    assert list(tmp.iterdir()) == []


@pytest.mark.swmm
def test_a_failed_run_leaves_no_temporary_folder(tmp_path, monkeypatch):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    with pytest.raises(InputError):
        run_demonstration(MODELS / "population-dwf.inp", connections=["J2=1000"], remediations=["nodes=J1,gpd=5"])
    assert [p for p in tmp.iterdir() if p.name.startswith("capacitysim-")] == []


@pytest.mark.swmm
def test_report_of_a_model_without_a_report_section_and_8bit_names(run_cli, tmp_path):
    """SWMM saves no time series without [REPORT]: the runs ask for the nodes the report plots; a cp1252 node
    name is read from the binary output by its bytes."""
    out = tmp_path / "r.html"
    r = run_cli("capacity", "--model", str(MODELS / "optional-fields-cp1252.inp"), "--connect", "straße=20000",
                "--report", str(out))
    assert r.exit_code in (0, 1), r.stderr
    html = out.read_text(encoding="utf-8")
    assert "Total inflow at Straße (the connection)" in html and "Injected volumes" in html
    r = run_cli("capacity", "--model", str(MODELS / "early-event-2h.inp"), "--connect", "J1=20000", "--report", str(out))
    assert r.exit_code in (0, 1), r.stderr
    assert "Total inflow at J1 (the connection)" in out.read_text(encoding="utf-8")


# --------------------------------------------------------------------------- issue 12: nonsense in a model


@pytest.mark.swmm
@pytest.mark.parametrize("old, new, field", [
    ("C1               J1               J2               400 ", "C1               J1               J2               inf ", "[CONDUITS] C1: field 4 is 'inf'"),
    ("C1               J1               J2               400 ", "C1               J1               J2               nan ", "[CONDUITS] C1: field 4 is 'nan'"),
    ("J2               99  ", "J2               NaN ", "[JUNCTIONS] J2: field 2 is 'NaN'"),
    ("J1               FLOW             800 ", "J1               FLOW             1e999 ", "[DWF] J1: field 3 is '1e999'"),
])
def test_numbers_that_are_not_finite_are_refused(run_cli, tmp_path, old, new, field):
    """SWMM runs a model with a NaN length (and a demonstration on it passed): refused, naming line and field."""
    text = (MODELS / "population-dwf.inp").read_text()
    assert old in text
    p = tmp_path / "bad.inp"
    p.write_text(text.replace(old, new, 1))
    r = run_cli("capacity", "--model", str(p), "--connect", "J2=1000")
    assert r.exit_code == 2 and field in r.stderr and "not a finite number" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.swmm
@pytest.mark.parametrize("edit, code", [
    (lambda t: t.replace("FLOW_UNITS           CFS", "FLOW_UNITS           XYZ"), "ERROR 205"),
    (lambda t: t[:t.index("[OPTIONS]")] + t[t.index("[RAINGAGES]"):], "ERROR 191"),
])
def test_files_the_engine_rejects_exit_2_with_its_error(run_cli, tmp_path, edit, code):
    p = tmp_path / "bad.inp"
    p.write_text(edit((MODELS / "population-dwf.inp").read_text()))
    r = run_cli("capacity", "--model", str(p), "--connect", "J2=1000")
    assert r.exit_code == 2 and code in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_continuity_that_is_not_a_number_is_untrusted():
    import xarray as xr

    from capacitysim.rules.capacity import Criteria, verdict_of

    ok = xr.Dataset(attrs={"runoff_continuity_error_pct": 0.1, "flow_routing_continuity_error_pct": 0.2})
    nan = xr.Dataset(attrs={"runoff_continuity_error_pct": float("nan"), "flow_routing_continuity_error_pct": 0.2})
    assert verdict_of(ok, ok, [], Criteria()) == "pass"
    assert verdict_of(ok, nan, [], Criteria()) == "untrusted"


def test_absurd_connection_flow_refused(run_cli):
    r = run_cli("capacity", "--model", str(MODELS / "population-dwf.inp"), "--connect", "J2=1e300")
    assert r.exit_code == 2 and "1e+09" in r.stderr


def test_report_output_never_overwrites_an_input_or_follows_a_link(run_cli, tmp_path):
    model = tmp_path / "m.inp"
    shutil.copy(MODELS / "population-dwf.inp", model)
    before = model.read_bytes()
    r = run_cli("capacity", "--model", str(model), "--connect", "J2=1000", "--report", str(tmp_path / "." / "m.inp"))
    assert r.exit_code == 2 and "input of this command" in r.stderr
    assert model.read_bytes() == before
    link = tmp_path / "r.html"
    link.symlink_to(tmp_path / "elsewhere.html")
    r = run_cli("capacity", "--model", str(model), "--connect", "J2=1000", "--report", str(link))
    assert r.exit_code == 2 and "symbolic link" in r.stderr and not (tmp_path / "elsewhere.html").exists()


@pytest.mark.swmm
def test_a_model_cannot_make_the_engine_write_outside_the_run(tmp_path):
    """[FILES] SAVE with an absolute path elsewhere (and a relative one climbing out): written in the run's folder."""
    outside = tmp_path / "outside"
    outside.mkdir()
    text = (MODELS / "population-dwf.inp").read_text().replace(
        "[RAINGAGES]", f'[FILES]\nSAVE OUTFLOWS "{outside / "stolen.txt"}"\nSAVE HOTSTART "../../climb.hsf"\n\n[RAINGAGES]')
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "m.inp").write_text(text)
    d = run_demonstration(folder / "m.inp", connections=["J2=1000"], work_dir=tmp_path / "w")
    assert list(outside.iterdir()) == [] and not (tmp_path / "climb.hsf").exists() and not (tmp_path.parent / "climb.hsf").exists()
    assert len(list((tmp_path / "w").rglob("stolen.txt"))) == 2 and len(list((tmp_path / "w").rglob("climb.hsf"))) == 2
    assert sorted(f["verb"] for f in d.to_dict()["external_files"]) == ["MODEL", "SAVE", "SAVE"]
