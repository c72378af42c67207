"""Runoff by the curve number method: TR-55 Table 2-1, Tables 2-2a..c, Figures 2-3/2-4, properties."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capacitysim.errors import InputError
from capacitysim.hydrology import (
    composite_cn,
    cover_types,
    curve_number,
    impervious_cn,
    initial_abstraction_in,
    runoff_depth,
)
from capacitysim.hydrology import runoff as runoff_module
from capacitysim.hydrology import tables

DATA = Path(__file__).resolve().parents[1] / "data"


def _read(name):
    with open(DATA / name) as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


# --- TR-55 Table 2-1 -----------------------------------------------------------------------
TABLE_2_1 = _read("tr55_table_2_1.csv")
#: The one cell where the transcribed table differs from the equation by more than rounding:
#: (P 7.0 in, CN 50) printed 1.68, the equation gives 1.667 (see tests/data/tr55_table_2_1.csv).
TABLE_2_1_KNOWN_DEVIATIONS = {(7.0, 50.0): 0.015}


def test_table_2_1_has_every_cell():
    assert len(TABLE_2_1) == 22 * 13


@pytest.mark.parametrize("row", TABLE_2_1, ids=lambda r: f"P{r['precip_in']}-CN{r['cn']}")
def test_table_2_1_cell(row):
    """Each cell of TR-55 Table 2-1 (printed to 0.01 in) within half a unit of the last digit."""
    p, cn, published = float(row["precip_in"]), float(row["cn"]), float(row["runoff_in"])
    tol = TABLE_2_1_KNOWN_DEVIATIONS.get((p, cn), 0.005 + 1e-9)
    assert runoff_depth(p, cn) == pytest.approx(published, abs=tol)


def test_table_2_1_in_one_vectorized_call():
    p = np.array([float(r["precip_in"]) for r in TABLE_2_1])
    cn = np.array([float(r["cn"]) for r in TABLE_2_1])
    q = np.array([float(r["runoff_in"]) for r in TABLE_2_1])
    got = runoff_depth(p, cn)
    assert got.shape == p.shape
    assert np.count_nonzero(np.abs(got - q) > 0.005 + 1e-9) == len(TABLE_2_1_KNOWN_DEVIATIONS)


def test_table_4_1_initial_abstraction():
    """TR-55 Table 4-1: Ia = 200/CN - 2 [in] (e.g. CN 75 -> 0.667, CN 40 -> 3.000, CN 98 -> 0.041)."""
    assert initial_abstraction_in(75) == pytest.approx(0.667, abs=5e-4)
    assert initial_abstraction_in(40) == pytest.approx(3.000, abs=5e-4)
    assert initial_abstraction_in(98) == pytest.approx(0.041, abs=5e-4)


# --- closed-form checks and edge cases --------------------------------------------------------
def test_hand_calculation():
    # CN 80: S = 2.5 in, Ia = 0.5 in; P = 3 in: Q = 2.5^2 / (2.5 + 2.5) = 1.25 in.
    assert runoff_depth(3.0, 80) == pytest.approx(1.25, rel=1e-12)


def test_cn_100_returns_all_rain_and_zero_rain_gives_zero():
    assert runoff_depth(2.1, 100) == pytest.approx(2.1, rel=1e-12)
    assert runoff_depth(0.0, 100) == 0.0
    assert runoff_depth(0.0, 60) == 0.0


def test_scalars_in_scalars_out_and_broadcasting():
    assert isinstance(runoff_depth(2.0, 80), float)
    out = runoff_depth(np.array([[1.0], [2.0], [3.0]]), np.array([60, 80, 98]))
    assert out.shape == (3, 3)


def test_ia_ratio_005():
    # Ia = 0.05 S: CN 80, S 2.5, Ia 0.125; P 3: Q = 2.875^2 / (2.875 + 2.5).
    assert runoff_depth(3.0, 80, ia_ratio=0.05) == pytest.approx(2.875**2 / 5.375, rel=1e-12)


@pytest.mark.skipif(runoff_module._kernel is None, reason="numba not available")
def test_numba_and_numpy_kernels_are_bit_identical():
    rng = np.random.default_rng(7)
    p = rng.uniform(0, 15, 100_000)
    cn = rng.uniform(30, 100, 100_000)
    a = runoff_depth(p, cn, kernel="numba")
    b = runoff_depth(p, cn, kernel="numpy")
    assert np.array_equal(a, b)


# --- properties ------------------------------------------------------------------------------
precip = st.floats(0.0, 40.0, allow_nan=False)
cns = st.floats(1.0, 100.0, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(precip, cns)
def test_runoff_between_zero_and_precip(p, cn):
    q = runoff_depth(p, cn)
    assert 0.0 <= q <= p * (1 + 1e-12)


@settings(max_examples=300, deadline=None)
@given(precip, precip, cns)
def test_monotone_in_precip(p1, p2, cn):
    lo, hi = sorted((p1, p2))
    assert runoff_depth(lo, cn) <= runoff_depth(hi, cn) + 1e-12


@settings(max_examples=300, deadline=None)
@given(precip, cns, cns)
def test_monotone_in_cn(p, c1, c2):
    lo, hi = sorted((c1, c2))
    assert runoff_depth(p, lo) <= runoff_depth(p, hi) + 1e-12


@settings(max_examples=300, deadline=None)
@given(cns, st.floats(0.0, 1.0))
def test_zero_at_or_below_initial_abstraction(cn, frac):
    ia = initial_abstraction_in(cn)
    assert runoff_depth(frac * ia, cn) == 0.0


# --- bad input -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "p, cn, ia, field",
    [
        (2.0, 0.0, 0.2, "cn"),
        (2.0, 100.5, 0.2, "cn"),
        (2.0, -5.0, 0.2, "cn"),
        (-0.1, 80.0, 0.2, "precip_in"),
        (float("nan"), 80.0, 0.2, "precip_in"),
        (2.0, float("nan"), 0.2, "cn"),
        (float("inf"), 80.0, 0.2, "precip_in"),
        (2.0, 80.0, -0.1, "ia_ratio"),
        ("two", 80.0, 0.2, "precip_in"),
    ],
)
@pytest.mark.parametrize("kernel", ["auto", "numpy"])
def test_bad_input_names_the_field(p, cn, ia, field, kernel):
    with pytest.raises(InputError, match=field):
        runoff_depth(p, cn, ia, kernel=kernel)


def test_bad_element_of_an_array_is_located():
    with pytest.raises(InputError, match=r"cn must be in \(0, 100\], got 120.0 at index \(2,\)"):
        runoff_depth(2.0, np.array([70.0, 80.0, 120.0]))


# --- curve numbers: Tables 2-2a..c and Table 174-19.3 ----------------------------------------------
def test_table_2_2a_urban_rows_follow_figure_2_3():
    """TR-55 computed the urban-district CNs of Table 2-2a with Figure 2-3: impervious CN 98 and
    pervious CN of open space in good condition. Each printed CN is within 1 of the equation
    (the table rounds; the largest difference is 0.6, residential 1/3 acre on soil D)."""
    data = tables.curve_number_table()
    diffs = []
    for (table, cover), row in data.items():
        if table != "TR-55 2-2a" or row["impervious_pct"] is None:
            continue
        for g in "ABCD":
            pervious = data[("TR-55 2-2a", "open_space_good")][g]
            diffs.append(impervious_cn(pervious, row["impervious_pct"]) - row[g])
    diffs = np.abs(diffs)
    assert len(diffs) == 8 * 4
    assert diffs.max() < 0.65
    assert diffs.mean() < 0.35


def test_cn_tables_agree_with_an_independent_transcription():
    """Our Tables 2-2a and 2-2c (transcribed from the BJC regulation text and TR-55) equal the
    iemiscdata transcription cell by cell (tests/data/tr55_table_2_2_iemiscdata.csv)."""
    theirs = {}
    for r in _read("tr55_table_2_2_iemiscdata.csv"):
        theirs.setdefault(r["table"], []).append(tuple(r[f"cn_{g}"] for g in "abcd"))
    ours = {}
    for (table, cover), row in tables.curve_number_table().items():
        if table.startswith("TR-55 "):
            ours.setdefault(table.removeprefix("TR-55 "), []).append(
                tuple("" if np.isnan(row[g]) else str(int(row[g])) for g in "ABCD")
            )
    for t in ("2-2a", "2-2b", "2-2c", "2-2d"):
        assert sorted(ours[t]) == sorted(theirs[t]), t


def test_bjc_table_174_19_3_equals_tr55_rows():
    data = tables.curve_number_table()
    bjc = [c for (t, c) in data if t == "BJC 174-19.3"]
    assert len(bjc) == 30  # 16 urban rows + 14 other agricultural rows in the regulation
    for cover in bjc:
        assert curve_number(cover, list("ABCD"), table="BJC 174-19.3").tolist() == curve_number(
            cover, list("ABCD")
        ).tolist()


@pytest.mark.parametrize(
    "cover, soil, table, expected",
    [
        ("open_space_poor", "A", "BJC 174-19.3", 68),
        ("impervious", "D", "BJC 174-19.3", 98),
        ("residential_1_4_acre", "B", "BJC 174-19.3", 75),
        ("woods_good", "C", "TR-55", 70),
        ("row_crops_sr_good", "B", "TR-55", 78),
        ("meadow", "D", "TR-55", 78),
        ("commercial", "c", "TR-55", 94),
    ],
)
def test_curve_number_cells(cover, soil, table, expected):
    assert curve_number(cover, soil, table=table) == expected


def test_curve_number_vectorized_over_cells():
    covers = np.array(["impervious", "woods_good", "impervious"] * 1000)
    soils = np.array(["A", "B", "C"] * 1000)
    out = curve_number(covers, soils)
    assert out.shape == (3000,)
    assert out[:3].tolist() == [98.0, 55.0, 98.0]


def test_curve_number_bad_input():
    with pytest.raises(InputError, match="cover 'lawn' is not in TR-55"):
        curve_number("lawn", "B")
    with pytest.raises(InputError, match="soil_group must be one of A, B, C, D; got 'E'"):
        curve_number("impervious", "E")
    with pytest.raises(InputError, match="table must be one of"):
        curve_number("impervious", "B", table="TR-20")
    with pytest.raises(InputError, match="no curve number for soil group A"):
        curve_number("herbaceous_fair", "A")
    # Farm covers are not in the BJC table.
    with pytest.raises(InputError, match="not in BJC 174-19.3"):
        curve_number("row_crops_sr_good", "B", table="BJC 174-19.3")
    assert "woods_good" in cover_types("BJC 174-19.3")


# --- composite and impervious CNs -------------------------------------------------------------
def test_composite_cn_area_weighted():
    assert composite_cn([98, 61], [1.0, 3.0]) == pytest.approx((98 + 3 * 61) / 4)
    rows = composite_cn(np.array([[98, 61], [70, 70]]), np.array([[1.0, 1.0], [2.0, 5.0]]))
    assert rows.tolist() == pytest.approx([79.5, 70.0])


def test_composite_cn_bad_input():
    with pytest.raises(InputError, match="area must be in"):
        composite_cn([80, 70], [1.0, -1.0])
    with pytest.raises(InputError, match="sum to zero"):
        composite_cn([80, 70], [0.0, 0.0])


def test_figure_2_3_connected_impervious():
    # CNp 61, 38 % impervious: 61 + 0.38 (98 - 61) = 75.06 (Table 2-2a prints 75 for 1/4-acre lots, soil B).
    assert impervious_cn(61, 38) == pytest.approx(75.06)


def test_figure_2_4_unconnected_and_the_30_percent_rule():
    # 20 % impervious, half unconnected: 61 + 0.2 * 37 * (1 - 0.25) = 66.55.
    assert impervious_cn(61, 20, 0.5) == pytest.approx(66.55)
    # At 30 % or more, unconnected impervious area is treated as connected (Figure 2-3).
    assert impervious_cn(61, 30, 0.5) == pytest.approx(impervious_cn(61, 30, 0.0))
    assert impervious_cn(61, 29.999, 1.0) < impervious_cn(61, 29.999, 0.0)


def test_impervious_cn_bad_input():
    with pytest.raises(InputError, match="impervious_pct must be in \\[0, 100\\] %"):
        impervious_cn(61, 120)
    with pytest.raises(InputError, match="unconnected_fraction"):
        impervious_cn(61, 20, 1.5)


def test_pure_numpy_fallback_when_numba_is_disabled():
    """CAPACITYSIM_NO_NUMBA=1 selects the numpy kernel at import; results are identical."""
    import os
    import subprocess
    import sys

    code = (
        "import numpy as np; from capacitysim.hydrology import runoff as r;"
        "assert r._kernel is None;"
        "print(repr(r.runoff_depth(np.array([3.0, 1.0, 6.0]), np.array([80.0, 98.0, 75.0])).tolist()))"
    )
    env = dict(os.environ, CAPACITYSIM_NO_NUMBA="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    expected = runoff_depth(np.array([3.0, 1.0, 6.0]), np.array([80.0, 98.0, 75.0])).tolist()
    assert eval(out) == expected


@settings(max_examples=300, deadline=None)
@given(st.floats(30.0, 98.0), st.floats(0.0, 100.0), st.floats(0.0, 100.0), st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_impervious_cn_properties(cnp, i1, i2, r1, r2):
    """Figures 2-3/2-4: CNc lies between CNp and 98, never falls as impervious area grows (the
    30 % rule makes it jump up, not down), and never rises with the unconnected share."""
    (ilo, ihi), (rlo, rhi) = sorted((i1, i2)), sorted((r1, r2))
    c = impervious_cn(cnp, ilo, rlo)
    assert cnp - 1e-9 <= c <= 98.0 + 1e-9
    assert c <= impervious_cn(cnp, ihi, rlo) + 1e-9
    assert impervious_cn(cnp, ilo, rhi) <= c + 1e-9


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(1.0, 100.0), st.one_of(st.just(0.0), st.floats(1e-6, 1e4))), min_size=1, max_size=8).filter(lambda r: sum(a for _, a in r) > 0))
def test_composite_cn_lies_within_its_parts(rows):
    cn = np.array([c for c, _ in rows])
    area = np.array([a for _, a in rows])
    got = composite_cn(cn, area)
    assert cn[area > 0].min() - 1e-9 <= got <= cn[area > 0].max() + 1e-9


def test_bjc_table_174_19_3_cell_by_cell_against_the_regulation_text(shared_dir):
    """Every number of Table 174-19.3 in the regulation text (its 8 impervious percentages and 120
    curve numbers, in reading order) equals our BJC rows in file order."""
    import re

    lines = (shared_dir / "regulations" / "binghamton-jc-ii-offset-program.txt").read_text().splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("Table 174-19.3: Curve Numbers for Use in Runoff"))
    end = next(i for i, ln in enumerate(lines) if ln.startswith("NOTES:") and i > start)
    printed = [float(ln) for ln in lines[start:end] if re.fullmatch(r"\s*\d{1,3}\s*", ln)]
    ours = []
    for (table, _cover), row in tables.curve_number_table().items():
        if table == "BJC 174-19.3":
            ours += ([row["impervious_pct"]] if row["impervious_pct"] is not None else []) + [row[g] for g in "ABCD"]
    assert len(printed) == 30 * 4 + 8
    assert ours == printed
