"""Loading, validating and graph/basin building on real and deliberately broken models."""

from __future__ import annotations

from pathlib import Path

import pytest

from capacitysim.errors import DataFileError, InputError, ModelError
from capacitysim.network.basins import basin_of, find_basins, find_plant
from capacitysim.network.model import load_model, network_graph, parse_inp, validate

MODELS = Path(__file__).resolve().parents[2] / "models"
SMALL = MODELS / "synthetic-50.inp"


def _lines(path):
    return path.read_text().splitlines()


def _broken(tmp_path, old, new, name="broken.inp"):
    text = SMALL.read_text()
    assert old in text, old
    p = tmp_path / name
    p.write_text(text.replace(old, new, 1))
    return p


@pytest.mark.swmm
def test_bundled_models_are_valid_and_sized():
    for name, n in (("synthetic-50.inp", 50), ("synthetic-500.inp", 500)):
        m = load_model(MODELS / name)
        assert len(m.node_ids()) == n
        g = network_graph(m)
        assert g.number_of_nodes() == n and g.number_of_edges() == len(m.links())


@pytest.mark.swmm
def test_hartfordville_valid(shared_dir):
    m = load_model(shared_dir / "models" / "hartfordville" / "Hartfordville_1.inp")
    assert validate(m) == []
    assert len(m.node_ids()) == 55 and len(m.links()) == 56


@pytest.mark.swmm
def test_dangling_node_named_with_line(tmp_path):
    p = _broken(tmp_path, "P0001      MH0001     PLANT", "P0001      MH0001     NOWHERE")
    line = next(i for i, l in enumerate(_lines(p), 1) if l.startswith("P0001 "))
    with pytest.raises(ModelError, match=rf"broken.inp:{line}: conduit P0001: to node NOWHERE is not defined"):
        load_model(p)


@pytest.mark.swmm
def test_missing_cross_section(tmp_path):
    text = SMALL.read_text()
    xs_line = next(l for l in text.splitlines() if l.startswith("P0007 ") and "CIRCULAR" in l)
    p = tmp_path / "noxs.inp"
    p.write_text(text.replace(xs_line + "\n", ""))
    line = next(i for i, l in enumerate(_lines(p), 1) if l.startswith("P0007 "))
    with pytest.raises(ModelError, match=rf"noxs.inp:{line}: conduit P0007 has no cross section"):
        load_model(p)


@pytest.mark.swmm
def test_non_positive_geometry(tmp_path):
    text = SMALL.read_text()
    xs_line = next(l for l in text.splitlines() if l.startswith("P0003 ") and "CIRCULAR" in l)
    p = tmp_path / "geom.inp"
    p.write_text(text.replace(xs_line, "P0003      CIRCULAR 0 0 0 0 1"))
    with pytest.raises(ModelError, match=r"cross section of P0003: CIRCULAR depth \(Geom1\) '0' must be a number > 0"):
        load_model(p)
    cond = next(l for l in text.splitlines() if l.startswith("P0005 ") and "MH0005" in l)
    toks = cond.split()
    toks[3] = "-10"
    p2 = tmp_path / "len.inp"
    p2.write_text(text.replace(cond, " ".join(toks)))
    with pytest.raises(ModelError, match=r"conduit P0005: length '-10' must be a number > 0"):
        load_model(p2)


@pytest.mark.swmm
def test_unknown_section_and_garbage(tmp_path):
    # the engine matches a header by its keyword as a prefix ([PUMP): [PUMPZ] is [PUMPS], read as the engine reads it
    p = _broken(tmp_path, "[PUMPS]", "[PUMPZ]")
    m = load_model(p)
    assert not any("unknown section" in w for w in m.lint) and m.rows("PUMPS") == parse_inp(SMALL).rows("PUMPS")
    # a header that no keyword starts is refused by the engine (it stops reading there)
    with pytest.raises(ModelError, match=r"ERROR 205: invalid keyword at pmpz.inp:\d+: \[PMPZ\]"):
        load_model(_broken(tmp_path, "[PUMPS]", "[PMPZ]", "pmpz.inp"))
    bad = tmp_path / "garbage.inp"
    bad.write_text("this is not a model\n[JUNCTIONS]\n")
    with pytest.raises(ModelError, match=r"garbage.inp:1: data before the first"):
        load_model(bad)
    with pytest.raises(DataFileError, match="not found"):
        load_model(tmp_path / "missing.inp")


def test_all_problems_counted(tmp_path):
    p = _broken(tmp_path, "P0001      MH0001     PLANT", "P0001      MH0001     NOWHERE")
    text = p.read_text().replace("[DWF]\n", "[DWF]\nGHOST FLOW 0.1\n")
    p.write_text(text)
    problems = validate(parse_inp(p))
    assert len(problems) == 2
    assert any("[DWF] refers to node GHOST" in s for s in problems)


@pytest.mark.swmm
def test_basins_of_the_small_model():
    m = load_model(SMALL)
    basins = {b.outlet: b for b in find_basins(m)}
    assert find_plant(m) == "PLANT"
    kinds = {b.kind for b in basins.values()}
    assert {"plant", "pump_station", "cso"} <= kinds
    ps = next(b for b in basins.values() if b.kind == "pump_station")
    cso = next(b for b in basins.values() if b.kind == "cso")
    plant = basins["PLANT"]
    # every junction drains to the plant; local basins partition the nodes
    assert len(plant.tributary) == len(m.node_ids()) - 1  # all but the CSO outfall
    local = [n for b in basins.values() for n in b.local]
    assert sorted(local) == sorted(set(local))
    assert set(local) == set(m.node_ids()) - {"CSO1"}
    # nesting: the pump station lies upstream of the regulator or the plant, and its tributary is inside theirs
    assert set(ps.tributary) <= set(plant.tributary)
    assert cso.overflow_outfall == "CSO1"
    # DWF of a basin = sum of its nodes' mean [DWF] (baseline x the mean of the hourly pattern)
    dwf = m.dwf_mean()
    assert plant.dwf_mean == pytest.approx(sum(dwf.values()), rel=1e-12)
    assert sum(dwf.values()) == pytest.approx(sum(m.dwf_baseline().values()) * m.pattern_mean(["DIURNAL"]), rel=1e-12)
    assert basin_of(ps.local[0], list(basins.values())).outlet == ps.outlet


@pytest.mark.swmm
def test_basin_override(tmp_path):
    m = load_model(SMALL)
    found = find_basins(m, outlets=["MH0002"])
    assert [b.kind for b in found] == ["user"]
    g = network_graph(m)
    import networkx as nx

    assert set(found[0].tributary) == nx.ancestors(g, "MH0002") | {"MH0002"}
    with pytest.raises(InputError, match="NOPE"):
        find_basins(m, outlets=["NOPE"])


_DATED = """[OPTIONS]
START_DATE           03/15/2021
START_TIME           06:30
REPORT_START_DATE    03/15/2021
REPORT_START_TIME    08:00:00
END_DATE             03/16/2021
END_TIME             6.5

[EVENTS]
03/15/2021 07:00 03/15/2021 9:30
03/15/2021 xx:00 03/15/2021 9:30

[HYDROGRAPHS]
UH1 RG1
UH1 ALL SHORT 0.01 1.0 2.0
UH1 MAR SHORT 0.02 0.5 3.0
UH1 MAR LONG  0.03 10  5
"""


def test_dates_times_and_unit_hydrographs_are_read_from_the_model(tmp_path):
    import datetime as dt

    from capacitysim.network.model import (
        event_windows,
        parse_clock_hr,
        parse_date,
        report_start_hr,
        rtk_params,
        sim_end,
        sim_start,
    )

    assert parse_clock_hr("1:30") == 1.5 and parse_clock_hr("0:00:36") == pytest.approx(0.01) and parse_clock_hr("2.25") == 2.25
    assert parse_date("2021-03-15") == parse_date("03-15-2021") == parse_date("03/15/2021") == dt.date(2021, 3, 15)
    with pytest.raises(InputError, match="MM/DD/YYYY"):
        parse_date("15.03.2021")
    with pytest.raises(InputError, match="not a number"):
        parse_clock_hr("1:xx")
    p = tmp_path / "dated.inp"
    p.write_text(_DATED)
    m = parse_inp(p)
    assert sim_start(m) == dt.datetime(2021, 3, 15, 6, 30)
    assert sim_end(m) == dt.datetime(2021, 3, 16, 6, 30)
    assert report_start_hr(m) == pytest.approx(1.5)
    assert event_windows(m) == [(dt.datetime(2021, 3, 15, 7), dt.datetime(2021, 3, 15, 9, 30))]  # the unreadable line is skipped
    assert rtk_params(m, "uh1", 3) == [(0.02, 0.5, 3.0), (0.03, 10.0, 5.0)]  # the month's lines
    assert rtk_params(m, "UH1", 4) == [(0.01, 1.0, 2.0)]  # else ALL
    assert rtk_params(m, "UH2", 3) == []
