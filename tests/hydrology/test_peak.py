"""Graphical peak discharge, TR-55 Chapter 4 (Example 4-1, Table 4-2, Table F-1)."""

from __future__ import annotations

import numpy as np
import pytest

from capacitysim.errors import CapacitysimWarning, InputError
from capacitysim.hydrology import (
    design_storm,
    graphical_peak_discharge,
    pond_swamp_adjustment,
    runoff_depth,
    unit_hydrograph_runoff,
    unit_peak_discharge_csm_in,
)
from capacitysim.hydrology import tables


def test_example_4_1_heavenly_acres():
    """TR-55 Example 4-1: 250 ac (0.39 mi2), CN 75, Tc 1.53 h, 6.0 in Type II: Ia/P 0.11,
    Q 3.28 in, qu about 269 csm/in, qp 344-345 cfs (read from Exhibit 4-II; 1 % tolerance)."""
    assert runoff_depth(6.0, 75) == pytest.approx(3.28, abs=0.005)
    assert unit_peak_discharge_csm_in(1.53, 0.11) == pytest.approx(269, rel=0.01)
    assert graphical_peak_discharge(0.39, 75, 6.0, 1.53) == pytest.approx(345, rel=0.01)


def test_unit_peak_equals_table_f1_row_on_its_ia_p():
    ratios, coefs = tables.unit_peak_coefficients()["II"]
    for r, (c0, c1, c2) in zip(ratios, coefs):
        x = np.log10(2.0)
        assert unit_peak_discharge_csm_in(2.0, r) == pytest.approx(10 ** (c0 + c1 * x + c2 * x * x), rel=1e-12)


def test_type_iii_ia_p_050_coefficient_is_the_checked_one():
    """Table F-1 Type III Ia/P 0.50: C2 = -0.09525 (four independent transcriptions agree; one copy
    repeats the 0.45 row's -0.11508)."""
    ratios, coefs = tables.unit_peak_coefficients()["III"]
    assert coefs[ratios == 0.5][0].tolist() == [2.17772, -0.36803, -0.09525]


def test_table_4_2_pond_swamp():
    assert pond_swamp_adjustment([0, 0.2, 1.0, 3.0, 5.0]).tolist() == [1.0, 0.97, 0.87, 0.75, 0.72]
    assert graphical_peak_discharge(1, 80, 5, 1, pond_swamp_pct=1.0) == pytest.approx(
        0.87 * graphical_peak_discharge(1, 80, 5, 1), rel=1e-12
    )
    with pytest.raises(InputError, match="pond_swamp_pct must be in \\[0, 5\\] %"):
        graphical_peak_discharge(1, 80, 5, 1, pond_swamp_pct=6)


def test_peak_is_linear_in_area_and_vectorized():
    qp = graphical_peak_discharge(np.array([0.1, 0.2, 0.4]), 80, 4.0, 1.0)
    np.testing.assert_allclose(qp / qp[0], [1, 2, 4], rtol=1e-12)


def test_peak_decreases_with_tc():
    qp = graphical_peak_discharge(1.0, 80, 4.0, np.array([0.2, 0.5, 1, 2, 5, 9]))
    assert np.all(np.diff(qp) < 0)


def test_limits_are_clamped_with_warnings():
    with pytest.warns(CapacitysimWarning, match="Tc outside"):
        low = graphical_peak_discharge(1.0, 80, 4.0, 0.05)
    assert low == pytest.approx(graphical_peak_discharge(1.0, 80, 4.0, 0.1))
    with pytest.warns(CapacitysimWarning, match="Ia/P outside"):
        graphical_peak_discharge(1.0, 98, 10.0, 1.0)


def test_no_runoff_no_peak():
    assert graphical_peak_discharge(1.0, 60, 1.0, 1.0) == 0.0
    assert graphical_peak_discharge(1.0, 60, 0.0, 1.0) == 0.0


def test_cross_check_against_unit_hydrograph():
    """Two independent NRCS methods on the same watershed: the graphical method (regressions on
    TR-20 runs, Table F-1) and our unit hydrograph convolution agree within 10 % for Type II."""
    for area_ac, cn, tc, p in [(250, 75, 1.53, 6.0), (40, 83, 0.46, 2.1), (640, 70, 3.0, 5.0)]:
        storm = design_storm(p, "II", dt_min=6)
        uh_peak = float(unit_hydrograph_runoff(area_ac / 640, cn, tc, storm).max())
        graphical = graphical_peak_discharge(area_ac / 640, cn, p, tc)
        assert uh_peak == pytest.approx(graphical, rel=0.10), (area_ac, cn, tc, p)
