"""Issue 12: hydraulics refuse nonsense coefficients and runaway table or series sizes before allocating."""

from __future__ import annotations

import numpy as np
import pytest

import capacitysim.hydraulics.storage as storage
import capacitysim.hydraulics.weir as weir
from capacitysim.errors import InputError
from capacitysim.hydraulics import prism_table, rectangular_weir_flow_cfs, route
from capacitysim.units import GRAVITY_FT_S2


def test_weir_coefficient_bounded_by_the_ideal_weir():
    """Cw = (2/3) Cd sqrt(2 g) with Cd <= 1: 5.35 ft^0.5/s; a negative or larger coefficient is refused."""
    assert weir.MAX_RECTANGULAR_WEIR_COEFFICIENT == pytest.approx(2 / 3 * np.sqrt(2 * GRAVITY_FT_S2))
    assert rectangular_weir_flow_cfs(1.0, 1.0, weir.MAX_RECTANGULAR_WEIR_COEFFICIENT) == pytest.approx(5.348, abs=1e-3)
    for bad in (-3.33, 0.0, 33.3):
        with pytest.raises(InputError, match=r"coefficient must be in \(0, 5.3"):
            rectangular_weir_flow_cfs(1.0, 1.0, bad)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(points=1e12), r"points must be in \[3, 10000\]"),
        (dict(points=10.5), "points must be a whole number"),
        (dict(extension=1e9), r"extension must be in \[0, 10\]"),
        (dict(points=2), r"points must be in \[3, 10000\]"),
    ],
)
def test_stage_storage_table_size_bounded(kwargs, match):
    with pytest.raises(InputError, match=match):
        prism_table(40.0, 30.0, 4.0, **kwargs)


def test_many_designs_times_points_bounded():
    n = 50_001  # x 10,000 points x (1 + 10): 5.5 x 10^9 values, 44 GB per array
    with pytest.raises(InputError, match=r"the stage-storage tables would need [\d,]+ values"):
        prism_table(np.full(n, 40.0), 30.0, np.full(n, 4.0), points=10_000, extension=10.0)
    assert storage.MAX_TABLE_POINTS == 10_000 and storage.MAX_EXTENSION == 10.0


def test_full_routed_series_bounded_before_allocating():
    table = prism_table(40.0, 30.0, 4.0)
    out = np.zeros((1, 1, table.depth_ft.shape[1]))
    out[0, 0] = np.linspace(0.0, 5.0, table.depth_ft.shape[1])
    inflow = np.ones((1, 100_000))
    rows = np.zeros(200, dtype=np.int64)  # 200 cases of one hydrograph x 3 series x 10^5 times = 6 x 10^7 values
    with pytest.raises(InputError, match=r"the routed series would need 60,000,000 values"):
        route(inflow, 60.0, table.depth_ft, table.storage_cf, out, table_of_row=rows, inflow_of_row=rows)
    res = route(inflow[:, :1000], 60.0, table.depth_ft, table.storage_cf, out)
    assert res.stage_ft.shape == (1, 1000)
