"""Capacity demonstrations with real SWMM runs on the bundled 50-node model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from capacitysim.errors import InputError
from capacitysim.hydrology import design_storm, unit_hydrograph_runoff
from capacitysim.hydrology.rdii import rtk_hydrograph_cfs
from capacitysim.network.basins import find_basins
from capacitysim.network.engine import node_series
from capacitysim.network.model import load_model
from capacitysim.network.scenario import Connection, InjectedInflow, Remediation, SourceRemoval, Storm
from capacitysim.units import ACRES_PER_SQMI, GPD_PER_CFS, SECONDS_PER_HOUR
from capacitysim.rules.capacity import Criteria
from capacitysim.report.capacity import write_report
from capacitysim.workflows.demonstration import parse_connection, parse_remediation, run_demonstration

pytestmark = [pytest.mark.swmm]

SMALL = Path(__file__).resolve().parents[2] / "models" / "synthetic-50.inp"
DRY = Storm(depth_in=(0.0,), dt_min=6.0, name="no rain")


@pytest.fixture(scope="module")
def model():
    return load_model(SMALL)


@pytest.fixture(scope="module")
def plant_local_node(model):
    basins = find_basins(model)
    plant = next(b for b in basins if b.kind == "plant")
    return next(n for n in plant.local if n.startswith("MH") and n != "MH0001")


def test_dry_weather_connection_raises_plant_average_by_its_flow(tmp_path, plant_local_node):
    """In dry weather, X gpd at a manhole raises the plant's daily average inflow by X (within 1 %)."""
    x_gpd = 80_000.0
    d = run_demonstration(SMALL, connections=[Connection(plant_local_node, x_gpd)], storm=DRY, work_dir=tmp_path)
    qb = node_series(d.runs["before"], "PLANT", "total_inflow")
    qa = node_series(d.runs["after"], "PLANT", "total_inflow")
    day = (qb.elapsed_hr > 12.0) & (qb.elapsed_hr <= 36.0)  # one full day after 12 h of spin-up
    added_gpd = float((qa - qb).where(day, drop=True).mean()) * GPD_PER_CFS
    assert added_gpd == pytest.approx(x_gpd, rel=0.01)
    assert d.verdict in ("pass", "fail")  # trusted: dry-weather continuity is small
    assert abs(d.to_dict()["after"]["continuity_error_pct"]) <= 1.0


def test_tr55_hydrograph_injected_keeps_its_volume(tmp_path, model, plant_local_node):
    """A TR-55 unit-hydrograph runoff injected as [INFLOWS] leaves the system with its volume (1 %)."""
    storm = design_storm(2.1, "II", 6.0)
    q = unit_hydrograph_runoff(10.0 / ACRES_PER_SQMI, 85.0, 0.5, storm)
    t = np.concatenate([[0.0], q.time_hr.values])
    f = np.concatenate([[0.0], q.values])
    volume_cf = float(np.trapezoid(f, t * SECONDS_PER_HOUR))
    inj = InjectedInflow(plant_local_node, tuple(t), tuple(f), "site")
    d = run_demonstration(SMALL, storm=DRY, extra_edits=[inj], work_dir=tmp_path)
    out_b = float(d.before.volume_cf.sum() + d.before.flooding_volume_cf.sum())
    out_a = float(d.after.volume_cf.sum() + d.after.flooding_volume_cf.sum())
    assert d.scenario["inflows"][0]["volume_cf"] == pytest.approx(volume_cf, rel=1e-9)
    assert out_a - out_b == pytest.approx(volume_cf, rel=0.01)


def test_offsetting_remediation_passes_and_big_connection_fails(tmp_path, model):
    basins = find_basins(model)
    cso = next(b for b in basins if b.kind == "cso")
    node = next(n for n in cso.local if n != cso.outlet)
    ok = run_demonstration(SMALL, connections=[f"{node}=50000"], remediations=[f"basin={cso.outlet},gpd=150000"],
                           work_dir=tmp_path / "ok")
    assert ok.verdict == "pass"
    doc = ok.to_dict()
    outlet = next(c for c in doc["checks"] if c["criterion"].startswith("peak inflow"))
    assert outlet["element"] == cso.outlet and outlet["after"] <= outlet["before"] * 1.01
    # without the remediation the CSO grows: the same connection alone fails
    alone = run_demonstration(SMALL, connections=[f"{node}=50000"], work_dir=tmp_path / "alone")
    assert alone.verdict == "fail"
    failed = [c for c in alone.checks if c.passed is False]
    assert failed and all(c.after > c.before for c in failed if c.before is not None)
    html = write_report(ok, tmp_path / "r.html").read_text()
    assert "data:image/png;base64" in html and "PASS" in html and "http://" not in html.replace("http://www.w3.org", "")
    assert html.count("<img") == 5  # network plan map, connection, basin outlet, plant hydrographs + HGL profile


def test_untrusted_when_continuity_exceeds_limit(tmp_path, plant_local_node):
    """The same runs judged with a stricter continuity limit than their errors are 'untrusted', never 'pass'."""
    d = run_demonstration(SMALL, connections=[Connection(plant_local_node, 1000.0)], work_dir=tmp_path,
                          criteria=Criteria(continuity_limit_pct=0.01))
    errs = [abs(d.to_dict()[k]["continuity_error_pct"]) for k in ("before", "after")]
    assert max(errs) > 0.01
    assert d.verdict == "untrusted"


def test_json_document_keys(tmp_path, plant_local_node):
    d = run_demonstration(SMALL, connections=[Connection(plant_local_node, 20_000.0)], work_dir=tmp_path)
    doc = d.to_dict()
    assert doc["verdict"] in ("pass", "fail", "untrusted")
    for k in ("before", "after"):
        assert isinstance(doc[k]["continuity_error_pct"], float)
    link = doc["links"][0]
    assert {"id", "peak_flow_cfs_before", "peak_flow_cfs_after", "max_q_over_qfull_before", "max_q_over_qfull_after"} <= set(link)
    node = doc["nodes"][0]
    assert {"id", "flooding_volume_cf_before", "flooding_volume_cf_after", "max_surcharge_ft_before", "max_surcharge_ft_after"} <= set(node)
    assert len(doc["nodes"]) == 50 and len(doc["links"]) == len(d.before.link)
    # the connection only adds flow: no link downstream carries less at its peak by more than noise
    peaks = {l["id"]: (l["peak_flow_cfs_before"], l["peak_flow_cfs_after"]) for l in doc["links"]}
    assert peaks["P0001"][1] >= peaks["P0001"][0] - 1e-3


def test_rtk_peak_and_gpd_remediation_fraction(tmp_path, model):
    """gpd removed -> fraction of the sewershed's RTK peak RDII; the written sewer areas scale by it."""
    basins = find_basins(model)
    ps = next(b for b in basins if b.kind == "pump_station")
    rem = Remediation(tuple(ps.tributary), gpd=20_000.0, basin=ps.outlet)
    from capacitysim.network.scenario import model_rainfall, rdii_peak_cfs, write_scenario

    t, d = model_rainfall(model)
    assert d.sum() == pytest.approx(2.1, rel=1e-3)
    peak = rdii_peak_cfs(model, ps.tributary, t, d)
    rec = write_scenario(model, [rem], tmp_path / "s.inp")
    r = rec["remediations"][0]
    assert r["fraction"] == pytest.approx(20_000.0 / (peak * GPD_PER_CFS), rel=1e-9)
    assert r["sewer_area_after"] == pytest.approx(r["sewer_area_before"] * (1 - r["fraction"]), rel=1e-9)
    # RTK volume = sum(R) x rain x area
    q = rtk_hydrograph_cfs([(0.02, 1.0, 2.0), (0.01, 5.0, 3.0)], 10.0, t, d)
    assert q.sum() * 0.05 == pytest.approx(0.03 * 2.1 * 10.0 * 43560 / 12 / 3600, rel=1e-6)
    with pytest.raises(InputError, match="exceeds"):
        write_scenario(model, [Remediation(tuple(ps.tributary), gpd=1e8)], tmp_path / "x.inp")


def test_bad_specs(model):
    basins = find_basins(model)
    for spec in ("MH0002", "MH0002=abc", "MH0002=-100", "MH0002=0"):
        with pytest.raises(InputError):
            parse_connection(spec)
    assert parse_connection("MH0002=40x250").flow_gpd == 10_000.0
    for spec in ("basin=NOPE,fraction=0.2", "basin=PLANT", "basin=PLANT,fraction=1.5", "nodes=X1,fraction=0.1",
                 "basin=PLANT,gpd=-5", "zone=PLANT,fraction=0.1", "basin=PLANT,fraction=0.2,gpd=100"):
        with pytest.raises(InputError):
            parse_remediation(spec, basins, model)
    assert parse_remediation("nodes=MH0002;MH0003,fraction=25%", basins, model).fraction == 0.25
    with pytest.raises(InputError, match="nothing to demonstrate"):
        run_demonstration(SMALL)


# --------------------------------------------------------------------------- sump pumps and roof leaders


def _tr55_runoff_in(p_in, cn):
    """TR-55 eq. 2-1 to 2-4 by hand: S = 1000/CN - 10, Ia = 0.2 S, Q = (P - Ia)^2 / (P - Ia + S)."""
    s = 1000.0 / cn - 10.0
    return (p_in - 0.2 * s) ** 2 / (p_in - 0.2 * s + s)


def _integral_cf(series):
    return float(series.sum()) * series.attrs["report_step_s"]


def test_disconnected_roofs_and_sump_pumps_leave_the_system(tmp_path, model):
    """Roof leaders (2 ac of roof, CN 98) and 12 sump pumps (5 gpm) disconnected: the BEFORE run carries them,
    the AFTER run does not, and the volume leaving the system drops by the TR-55 roof runoff plus the sump
    pumps' 5 gpm from the start of the rain to the end of the run (1 %)."""
    basins = find_basins(model)
    plant = next(b for b in basins if b.kind == "plant")
    roof_nodes = [n for n in plant.local if n.startswith("MH")][:2]
    sump_node = [n for n in plant.local if n.startswith("MH")][2]
    d = run_demonstration(SMALL, storm="binghamton-1yr-24h", work_dir=tmp_path,
                          remediations=[f"nodes={';'.join(roof_nodes)},roof_ac=2", f"nodes={sump_node},sump_pumps=12"])
    roof, sump = d.scenario["removed_sources"]
    roof_cf = _tr55_runoff_in(2.1, 98.0) * 2.0 * 43560.0 / 12.0  # 1.8735 in over 2 ac = 13,601.6 ft3
    assert roof["roof_tr55_volume_cf"] == pytest.approx(roof_cf, rel=1e-9)
    assert roof["roof_volume_cf"] == pytest.approx(roof_cf, rel=1e-6)  # the hydrograph written keeps it
    # sump pumps: on when the storm starts (after the 6 h spin-up), off at the end (storm 24 h + 24 h)
    assert (sump["sump_on_hr"], sump["sump_off_hr"]) == (6.0, 54.0)
    q_sump = 12 * 5.0 / 448.831169  # gpm -> cfs
    assert sump["sump_flow_cfs"] == pytest.approx(q_sump, rel=1e-6)
    sump_cf = q_sump * (48.0 - 0.5 / 60.0) * 3600.0  # the one-minute ramp costs half a minute
    # the volume leaving the system (outfalls + flooding) drops by both
    out_b = float(d.before.volume_cf.sum() + d.before.flooding_volume_cf.sum())
    out_a = float(d.after.volume_cf.sum() + d.after.flooding_volume_cf.sum())
    assert out_b - out_a == pytest.approx(roof_cf + sump_cf, rel=0.01)
    # and each source enters where it was said to
    lat = {k: {n: node_series(d.runs[k], n, "lateral_inflow") for n in [*roof_nodes, sump_node]} for k in ("before", "after")}
    assert _integral_cf(lat["before"][sump_node] - lat["after"][sump_node]) == pytest.approx(sump_cf, rel=0.01)
    roof_in = sum(_integral_cf(lat["before"][n] - lat["after"][n]) for n in roof_nodes)
    assert roof_in == pytest.approx(roof_cf, rel=0.02)  # 5-min samples of a 0.1-h-Tc hydrograph
    assert "CAPSIM_SOURCES" in (tmp_path / "before_input.inp").read_text()
    assert "CAPSIM_SOURCES" not in (tmp_path / "after_input.inp").read_text()
    assert d.verdict == "pass"  # removing inflow raises nothing


def test_source_removal_specs(model):
    basins = find_basins(model)
    r = parse_remediation("nodes=MH0002;MH0003,sump_pumps=12", basins, model)
    assert isinstance(r, SourceRemoval) and r.sump_pumps == 12 and r.nodes == ("MH0002", "MH0003")
    assert parse_remediation("basin=PLANT,roof_sqft=20_000", basins, model).roof_area_sqft == 20_000.0
    assert parse_remediation("nodes=MH0002,roof_ac=0.5", basins, model).roof_area_sqft == 0.5 * 43560.0
    for spec, msg in (("nodes=MH0002,sump_pumps=-3", "sump_pumps must be a number >= 0"),
                      ("nodes=MH0002,sump_pumps=2.5", "whole number"),
                      ("nodes=MH0002,roof_sqft=lots", "must be numbers"),
                      ("nodes=MH0002,roof_sqft=0", "give sump_pumps > 0 and/or a roof area > 0"),
                      ("nodes=MH0002,sump_pumps=3,fraction=0.2", "separate --remediate"),
                      ("nodes=MH0002,roof_sqft=10,roof_ac=1", "roof area once")):
        with pytest.raises(InputError, match=msg):
            parse_remediation(spec, basins, model)


def test_source_removal_needs_readable_rain(tmp_path, model):
    """Without rainfall (a dry storm) there is no storm to run the roofs under, nor a rain start for the pumps."""
    with pytest.raises(InputError, match="no rainfall"):
        run_demonstration(SMALL, storm=DRY, remediations=["nodes=MH0002,roof_ac=1"], work_dir=tmp_path)


# --------------------------------------------------------------------------- spin-up


def test_spinup_excluded_from_statistics(tmp_path, plant_local_node):
    """The empty network filling at the start (the pump station's wet well overshoots) is in the statistics
    when reporting starts at 0 h and out of them with the default 6 h spin-up."""
    conn = [Connection(plant_local_node, 1000.0)]
    with_spin = run_demonstration(SMALL, connections=conn, storm=DRY, work_dir=tmp_path / "a")
    no_spin = run_demonstration(SMALL, connections=conn, storm=DRY, work_dir=tmp_path / "b", spinup_hr=0.0)
    assert with_spin.scenario["report_start_hr"] == 6.0 and with_spin.scenario["storm"]["start_hr"] == 6.0
    assert no_spin.scenario["report_start_hr"] == 0.0
    ww = next(n for n in with_spin.before.node.values if str(n).endswith("_WW"))
    # the whole-run series (no spin-up run) peaks in the first hours, above anything after 6 h
    depth = node_series(no_spin.runs["before"], ww, "depth")
    early, late = depth.where(depth.elapsed_hr <= 6.0, drop=True), depth.where(depth.elapsed_hr > 6.0, drop=True)
    assert float(early.max()) > float(late.max()) + 0.05
    assert float(no_spin.before.max_depth_ft.sel(node=ww)) >= float(early.max())
    # with the spin-up the statistic is the max after 6 h (routing steps >= reporting steps, close to them)
    stat = float(with_spin.before.max_depth_ft.sel(node=ww))
    assert float(late.max()) - 1e-6 <= stat <= float(late.max()) + 0.02
    s = node_series(with_spin.runs["before"], ww, "depth")
    assert float(s.elapsed_hr[0]) == pytest.approx(6.0)  # the .out starts at REPORT_START too (first sample at it)


def test_scenario_edits_split_between_the_runs(model):
    """The one builder of the two runs' edits: the spin-up (prepended) and the storm at the model's start in
    both, disconnected sources in BEFORE only, connections and RDII remediation in AFTER only."""
    from capacitysim.network.scenario import Spinup
    from capacitysim.workflows.demonstration import scenario_edits

    storm = Storm(depth_in=(0.1, 0.2), dt_min=30.0)
    conn = Connection("MH0040", 5000.0)
    rem = Remediation(("MH0040",), fraction=0.2)
    sources = SourceRemoval(("MH0040",), sump_pumps=3)
    before, after = scenario_edits(model, storm, [conn], [rem, sources])
    moved = Storm(depth_in=(0.1, 0.2), dt_min=30.0, start_hr=6.0)  # the model's start, 6 h after the moved start
    assert before == [Spinup(6.0), moved, sources.sources]
    assert after == [Spinup(6.0), moved, conn, rem]
    # a storm offset within the model's period keeps its offset
    late = Storm(depth_in=(0.1,), dt_min=30.0, start_hr=3.0)
    assert scenario_edits(model, late, [conn])[1] == [Spinup(6.0), Storm(depth_in=(0.1,), dt_min=30.0, start_hr=9.0), conn]
    # no spin-up: nothing prepended, the storm at the model's start
    assert scenario_edits(model, storm, [conn], spinup_hr=0.0) == ([storm], [storm, conn])
    # the model's own rainfall is never moved: only the spin-up
    assert scenario_edits(model, None, [conn], spinup_hr=12.0) == ([Spinup(12.0)], [Spinup(12.0), conn])
    with pytest.raises(InputError, match="spinup_hr"):
        scenario_edits(model, storm, [conn], spinup_hr=-1.0)
