"""The engine wrapper: real SWMM runs in child processes, results against the report and pyswmm."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from capacitysim.errors import EngineError
from capacitysim.network.engine import (
    EngineInputError,
    CFS_PER_FLOW_UNIT,
    link_series,
    node_series,
    parse_outfall_volumes,
    prepare_inp_text,
    read_results,
    run_inp,
    unit_factors,
)
from capacitysim.units import GPD_PER_CFS, GPM_PER_CFS, METERS_PER_FOOT

HARTFORD = Path(__file__).resolve().parents[2].parent / "shared" / "models" / "hartfordville" / "Hartfordville_1.inp"

_PYSWMM_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from pyswmm import Simulation, Nodes, Links
    inp, rpt, out = sys.argv[1:4]
    res = {"nodes": {}, "links": {}}
    with Simulation(inp, rpt, out) as sim:
        for _ in sim:
            pass
        for n in Nodes(sim):
            s = n.statistics
            res["nodes"][n.nodeid] = [s["max_depth"], s["flooding_volume"], s["surcharge_duration"]]
        for l in Links(sim):
            if l.is_conduit():
                res["links"][l.linkid] = l.conduit_statistics["peak_flow"]
    print(json.dumps(res))
    """
)


@pytest.fixture(scope="module")
def hartford_run(tmp_path_factory):
    if not HARTFORD.is_file():
        pytest.skip("../shared is absent")
    wd = tmp_path_factory.mktemp("hartford")
    before = sorted(p.name for p in HARTFORD.parent.iterdir())
    run = run_inp(HARTFORD, wd)
    assert sorted(p.name for p in HARTFORD.parent.iterdir()) == before, "the run wrote next to the input"
    return run


@pytest.mark.swmm
def test_hartfordville_matches_report(shared_dir, hartford_run):
    ds = read_results(hartford_run)
    assert ds.sizes == {"node": 55, "link": 56, "outfall": 7}
    # values printed in the engine's own report (Hartfordville_1.rpt, Link Flow / Node Surcharge /
    # Outfall Loading summaries), to the report's printed precision
    rpt = hartford_run.rpt.read_text()
    assert "C1                   CONDUIT     41.67     0  00:01     11.45    3.39    1.00" in rpt
    assert ds.peak_flow_cfs.sel(link="C1").item() == pytest.approx(41.67, abs=0.005)
    assert ds.max_q_over_qfull.sel(link="C1").item() == pytest.approx(3.39, abs=0.005)
    assert ds.max_d_over_d.sel(link="C11").item() == pytest.approx(0.09, abs=0.005)
    assert ds.max_surcharge_ft.sel(node="J1").item() == pytest.approx(6.800, abs=5e-4)
    assert ds.surcharge_hr.sel(node="J1").item() == pytest.approx(95.66, abs=0.005)
    assert ds.flooding_hr.sel(node="J1").item() == pytest.approx(0.16, abs=0.005)
    assert ds.max_hgl_ft.sel(node="J1").item() == pytest.approx(9.76, abs=0.005)
    vols = parse_outfall_volumes(hartford_run.rpt)
    assert vols["WESTRIVER_TP"] == 38.436 and vols["CSO9"] == 8.086
    # the engine's unrounded volumes (mass-balance inflow of each outfall) agree with the report's 38.436 and
    # 8.086 MG within 0.02 % (the report sums the outfall's flow per routing step: 38.4385 vs 38.436, 8.0869 vs 8.086 MG)
    gal = ds.volume_cf.sel(outfall=["WESTRIVER_TP", "CSO9"]).values * 7.480519
    assert gal == pytest.approx([38.436e6, 8.086e6], rel=2e-4)
    assert ds.volume_cf.sel(outfall="WESTRIVER_TP").item() != pytest.approx(38.436e6 / 7.480519, rel=1e-9)  # not the print
    assert abs(ds.attrs["flow_routing_continuity_error_pct"] - 0.013) < 5e-4
    assert abs(ds.attrs["runoff_continuity_error_pct"] - (-0.048)) < 5e-4


@pytest.mark.swmm
def test_hartfordville_matches_plain_pyswmm(shared_dir, hartford_run, tmp_path):
    """An independent run with pyswmm's step loop (its own process) gives the same statistics."""
    inp = tmp_path / "h.inp"
    inp.write_text(HARTFORD.read_text())
    proc = subprocess.run([sys.executable, "-c", _PYSWMM_SCRIPT, str(inp), str(tmp_path / "h.rpt"), str(tmp_path / "h.out")],
                          capture_output=True, text=True, check=True, cwd=tmp_path)  # its scratch files there
    ref = json.loads(proc.stdout.strip().splitlines()[-1])
    ds = read_results(hartford_run)
    for nid, (max_depth, flood, surch) in ref["nodes"].items():
        assert ds.max_depth_ft.sel(node=nid).item() == pytest.approx(max_depth, rel=1e-3, abs=1e-4), nid
        assert ds.flooding_volume_cf.sel(node=nid).item() == pytest.approx(flood, rel=1e-3, abs=1e-3), nid
        assert ds.surcharge_hr.sel(node=nid).item() == pytest.approx(surch, rel=1e-3, abs=1e-3), nid
    for lid, peak in ref["links"].items():
        assert ds.peak_flow_cfs.sel(link=lid).item() == pytest.approx(abs(peak), rel=1e-3, abs=1e-4), lid


@pytest.mark.swmm
def test_series_agree_with_statistics(shared_dir, hartford_run):
    ds = read_results(hartford_run)
    q = link_series(hartford_run, "C1", "flow")
    assert q.attrs["units"] == "cfs" and q.sizes["time"] == 4 * 24 * 12  # 4 days of 5-min steps
    # reporting-step series never exceed the routing-step maximum, and come close to it
    assert np.abs(q).max().item() <= ds.peak_flow_cfs.sel(link="C1").item() * (1 + 1e-6)
    d = node_series(hartford_run, "J1", "depth")
    assert d.max().item() <= ds.max_depth_ft.sel(node="J1").item() + 1e-4
    assert d.max().item() >= 0.95 * ds.max_depth_ft.sel(node="J1").item()
    h = node_series(hartford_run, "J1", "hgl")
    np.testing.assert_allclose(h - d, ds.invert_elev_ft.sel(node="J1").item(), atol=1e-4)


@pytest.mark.swmm
def test_unknown_series_variable_and_element(shared_dir, hartford_run):
    from capacitysim.errors import InputError

    with pytest.raises(InputError, match="flux"):
        node_series(hartford_run, "J1", "flux")
    with pytest.raises(InputError, match="NOPE"):
        link_series(hartford_run, "NOPE")


MINI = """\
[OPTIONS]
FLOW_UNITS {units}
FLOW_ROUTING DYNWAVE
START_DATE 01/01/2024
START_TIME 00:00:00
END_DATE 01/01/2024
END_TIME 06:00:00
REPORT_STEP 00:15:00
ROUTING_STEP 0:00:10
THREADS 4

[JUNCTIONS]
J1 100 10 0 0 0
J2 99 10 0 0 0

[OUTFALLS]
O1 98 FREE NO

[CONDUITS]
C1 J1 J2 400 0.013 0 0 0 0
C2 J2 O1 400 0.013 0 0 0 0

[XSECTIONS]
C1 CIRCULAR {diam} 0 0 0 1
C2 CIRCULAR {diam} 0 0 0 1

[INFLOWS]
J1 FLOW "" FLOW 1.0 1.0 {q}
"""


@pytest.mark.swmm
def test_flow_units_converted(tmp_path):
    """The same pipe carrying 1 cfs, written in CFS, GPM, MGD and CMS, reads back as 1 cfs."""
    peaks = {}
    for units, q, diam in [("CFS", 1.0, 1.5), ("GPM", GPM_PER_CFS, 1.5), ("MGD", GPD_PER_CFS / 1e6, 1.5),
                           ("CMS", METERS_PER_FOOT**3, 1.5 * METERS_PER_FOOT)]:
        inp = tmp_path / f"m_{units}.inp"
        inp.write_text(MINI.format(units=units, q=q, diam=diam))
        ds = read_results(run_inp(inp, tmp_path / units))
        peaks[units] = ds.peak_flow_cfs.sel(link="C2").item()
        assert ds.attrs["flow_units"] == units
        assert ds.full_depth_ft.sel(link="C2").item() == pytest.approx(1.5, rel=1e-9)
    for units, peak in peaks.items():
        assert peak == pytest.approx(1.0, rel=2e-3), units
    assert CFS_PER_FLOW_UNIT["MGD"] * 1.0 == pytest.approx(1.547229, rel=1e-6)
    assert unit_factors("LPS")["flow"] == pytest.approx(1 / 28.316846592, rel=1e-9)


@pytest.mark.swmm
def test_engine_error_text_and_no_write_next_to_input(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    bad = src / "bad.inp"
    bad.write_text(MINI.format(units="CFS", q=1.0, diam=1.5).replace("C2 J2 O1", "C2 J2 NOWHERE"))
    with pytest.raises(EngineError, match=r"ERROR 2\d\d.*NOWHERE"):
        run_inp(bad, tmp_path / "work")
    assert [p.name for p in src.iterdir()] == ["bad.inp"]


@pytest.mark.swmm
def test_engine_input_error_names_the_line_of_the_users_file(tmp_path):
    """An input error only the engine sees (an undefined time series) is one line naming the object and the
    line of the user's file, exit code 2, although the run's copy has an extra THREADS line above it."""
    text = MINI.format(units="CFS", q=1.0, diam=1.5).replace("THREADS 4\n", "").replace('J1 FLOW "" FLOW', "J1 FLOW GHOST_TS FLOW")
    bad = tmp_path / "ts.inp"
    bad.write_text(text)
    line = next(i for i, l in enumerate(text.splitlines(), 1) if "GHOST_TS" in l)
    with pytest.raises(EngineInputError) as e:
        run_inp(bad, tmp_path / "work")
    msg = str(e.value)
    assert e.value.exit_code == 2 and isinstance(e.value, EngineError)
    assert f"undefined object GHOST_TS at ts.inp:{line}" in msg and "J1 FLOW GHOST_TS" in msg and "\n" not in msg
    copy_line = next(i for i, l in enumerate((tmp_path / "work" / "ts.inp").read_text().splitlines(), 1) if "GHOST_TS" in l)
    assert copy_line == line + 1  # the copy's line number was mapped back


def test_threads_forced_to_one(tmp_path):
    text = prepare_inp_text(MINI.format(units="CFS", q=1.0, diam=1.5), tmp_path)
    assert "THREADS              1" in text and "THREADS 4" not in text
    no_threads = MINI.replace("THREADS 4\n", "")
    text = prepare_inp_text(no_threads.format(units="CFS", q=1.0, diam=1.5), tmp_path)
    opts = text.split("[JUNCTIONS]")[0]
    assert "THREADS              1" in opts
    ts = "[TIMESERIES]\nTS1 FILE rain.dat\n"
    assert f'"{(tmp_path / "rain.dat").resolve()}"' in prepare_inp_text(ts, tmp_path)


@pytest.mark.swmm
def test_same_engine_work_as_swmm_run(tmp_path):
    """The child (open, start, one stride over the run, statistics, end) leaves the same .out byte for byte,
    and the same report but for its time stamps, as `swmm.toolkit.solver.swmm_run` on the same copy: the
    wrapper adds no engine work and changes no time step."""
    model = Path(__file__).resolve().parents[2] / "models" / "synthetic-50.inp"
    run = run_inp(model, tmp_path / "w")
    bare = tmp_path / "bare"
    bare.mkdir()
    script = "import sys; from swmm.toolkit import solver; solver.swmm_run(*sys.argv[1:4])"
    subprocess.run([sys.executable, "-c", script, str(run.inp), str(bare / "b.rpt"), str(bare / "b.out")], check=True,
                   stdout=subprocess.DEVNULL, env={**__import__("os").environ, "OMP_NUM_THREADS": "1"}, cwd=bare)
    assert run.out.read_bytes() == (bare / "b.out").read_bytes()

    def body(p):
        return [l for l in p.read_text().splitlines() if not l.strip().startswith(("Analysis begun", "Analysis ended", "Total elapsed"))]

    assert body(run.rpt) == body(bare / "b.rpt")
    st = json.loads(run.stats.read_text())
    assert 0 < st["engine_cpu_s"] <= st["child_cpu_s"]


@pytest.mark.swmm
def test_scratch_file_of_a_killed_run_stays_in_its_work_folder(tmp_path, monkeypatch):
    """SWMM makes its [RDII] scratch file with mkstemp("swmmXXXXXX") relative to the current directory and
    deletes it only at the end of the run: a run killed midway (here by the timeout, 2 s into an 8 s run)
    leaves it behind. It must be in the run's own work folder, never in the caller's current directory."""
    from capacitysim.errors import EngineError

    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    model = Path(__file__).resolve().parents[2] / "models" / "synthetic-500.inp"
    with pytest.raises(EngineError, match="did not finish within 2 s"):
        run_inp(model, tmp_path / "w", timeout_s=2.0)
    assert [p.name for p in cwd.iterdir()] == []
    left = [p.name for p in (tmp_path / "w").iterdir() if p.name.startswith("swmm")]
    assert len(left) == 1 and len(left[0]) == len("swmmXXXXXX"), left
