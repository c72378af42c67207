"""Level-pool routing: linear reservoir (exact exponential), mass balance, batching, storage tables."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capacitysim.errors import InputError
from capacitysim.hydraulics import (
    blue_roof_table,
    orifice_flow_cfs,
    pond_table,
    prism_table,
    route,
    route_peaks,
)


def _linear_reservoir(k_per_s, area_sf=1000.0, top_ft=50.0, n=201):
    depth = np.linspace(0, top_ft, n)
    storage = area_sf * depth
    outflow = k_per_s * storage  # O = k S, linear in stage: the table is exact
    return depth, storage, outflow


def test_linear_reservoir_constant_inflow_matches_exponential():
    # O = k S with constant inflow I from empty: S(t) = (I/k)(1 - exp(-k t)), O(t) = I (1 - exp(-k t))
    k, inflow, dt = 1.0 / 1800.0, 2.0, 10.0
    depth, storage, outflow = _linear_reservoir(k)
    t = np.arange(0, 4 * 3600 + dt, dt)
    res = route(np.full(t.size, inflow), dt, depth, storage, outflow)
    exact_o = inflow * (1 - np.exp(-k * t))
    exact_s = inflow / k * (1 - np.exp(-k * t))
    # trapezoidal rule: error O((k dt)^2 / 12) relative
    assert np.max(np.abs(res.outflow_cfs[0, 0] - exact_o)) <= 1e-5 * inflow
    assert np.max(np.abs(res.storage_cf[0] - exact_s)) <= 1e-5 * inflow / k
    assert res.stage_ft[0, -1] == pytest.approx(exact_s[-1] / 1000.0, rel=1e-5)


def test_linear_reservoir_matches_the_exact_trapezoid_recursion():
    # The scheme itself: S_{n+1} (1 + k dt/2) = S_n (1 - k dt/2) + I dt, for a coarse step too.
    k, inflow, dt = 1.0 / 600.0, 1.5, 120.0
    depth, storage, outflow = _linear_reservoir(k)
    res = route(np.full(50, inflow), dt, depth, storage, outflow)
    s = 0.0
    for n in range(1, 50):
        s = (s * (1 - k * dt / 2) + inflow * dt) / (1 + k * dt / 2)
        assert res.storage_cf[0, n] == pytest.approx(s, rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(0.0, 5.0), min_size=3, max_size=80),
    st.floats(5.0, 120.0),
    st.floats(100.0, 5000.0),
    st.floats(0.5, 8.0),
    st.floats(1.0, 12.0),
)
def test_mass_balance(inflow, dt, area, height, diameter):
    inflow = np.array(inflow + [0.0])
    table = prism_table(area / 10.0, 10.0, height)
    q = orifice_flow_cfs(table.depth_ft, diameter)
    res = route(inflow, dt, table.depth_ft, table.storage_cf, q)
    vin = np.trapezoid(inflow) * dt
    vout = np.trapezoid(res.outflow_cfs[0, 0]) * dt
    assert res.clamped_cf[0] == 0.0
    assert vin == pytest.approx(vout + res.storage_cf[0, -1] - res.storage_cf[0, 0], rel=1e-9, abs=1e-6)


def test_batched_equals_one_at_a_time_and_peaks_agree():
    tables = prism_table([20.0, 30.0, 40.0], [10.0, 10.0, 15.0], [3.0, 4.0, 2.0])
    q = orifice_flow_cfs(tables.depth_ft, np.array([3.0, 5.0, 7.0])[:, None])
    t = np.arange(0, 200)
    inflow = np.stack([np.interp(t, [0, 20, 60, 80], [0, p, p, 0]) for p in (1.0, 2.0, 3.0)])
    batch = route(inflow, 60.0, tables.depth_ft, tables.storage_cf, q)
    peaks = route_peaks(inflow, 60.0, tables.depth_ft, tables.storage_cf, q)
    for i in range(3):
        one = route(inflow[i], 60.0, tables.depth_ft[i], tables.storage_cf[i], q[i])
        np.testing.assert_allclose(batch.stage_ft[i], one.stage_ft[0], rtol=0, atol=0)
        assert peaks.max_stage_ft[i] == pytest.approx(one.stage_ft[0].max())
        assert peaks.peak_outflow_cfs[i, 0] == pytest.approx(one.outflow_cfs[0, 0].max())
    # one table serving several storms
    shared = route(inflow, 60.0, tables.depth_ft, tables.storage_cf, q, table_of_row=[0, 0, 0])
    assert np.all(np.diff(shared.stage_ft.max(axis=1)) > 0)  # bigger storm, higher stage


def test_storage_tables_hand_volumes():
    tank = prism_table(40.0, 30.0, 4.0, porosity=1.0)
    assert tank.capacity_cf[0] == pytest.approx(4800.0)
    stone = prism_table(40.0, 30.0, 4.0, porosity=0.4)
    assert stone.capacity_cf[0] == pytest.approx(1920.0)
    roof = blue_roof_table(10000.0, 0.25)
    assert roof.capacity_cf[0] == pytest.approx(2500.0)
    # pond 20 x 10 bottom, 3:1 sides, 2 ft deep: prismoidal volume
    # V = L W h + z h^2 (L + W) + 4/3 z^2 h^3 = 400 + 3*4*30 + 4/3*9*8 = 856 ft3
    pond = pond_table(20.0, 10.0, 3.0, 2.0, points=401)
    assert pond.capacity_cf[0] == pytest.approx(856.0, rel=1e-5)
    # table extends above the top with vertical walls
    assert tank.depth_ft[0, -1] == pytest.approx(8.0)


def test_routing_rejects_bad_tables():
    with pytest.raises(InputError, match="strictly increasing"):
        route([0, 1, 0], 60, [[0, 1, 1]], [[0, 1, 2]], [[0, 1, 2]])
    with pytest.raises(InputError, match="inflow_cfs"):
        route([0, -1, 0], 60, [[0, 1, 2]], [[0, 1, 2]], [[0, 1, 2]])


def test_inflow_scale_and_shared_shape_equal_explicit_rows():
    tables = prism_table([20.0, 30.0], [10.0, 10.0], [3.0, 4.0])
    q = orifice_flow_cfs(tables.depth_ft, 4.0)
    shape = np.interp(np.arange(150), [0, 20, 60, 80], [0, 1, 1, 0])
    a = route(np.stack([2 * shape, 3 * shape]), 60.0, tables.depth_ft, tables.storage_cf, q)
    b = route(shape, 60.0, tables.depth_ft, tables.storage_cf, q, table_of_row=[0, 1], inflow_of_row=[0, 0], inflow_scale=[2.0, 3.0])
    np.testing.assert_allclose(a.stage_ft, b.stage_ft, rtol=1e-14)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(0.0, 5.0), min_size=3, max_size=120),
    st.floats(10.0, 120.0),
    st.floats(200.0, 5000.0),
    st.floats(0.5, 4.0),
    st.floats(0.5, 12.0),
)
def test_peaks_with_early_stop_equal_full_routing(inflow, dt, area, height, diameter):
    # route_peaks stops a case once storage + inflow still to come <= the max storage; the peaks
    # must be exactly those of the full series (multi-peaked random inflows included).
    inflow = np.array(inflow + [0.0] * 30)
    table = prism_table(area / 10.0, 10.0, height)
    q = orifice_flow_cfs(table.depth_ft, diameter)
    full = route(inflow, dt, table.depth_ft, table.storage_cf, q)
    fast = route_peaks(inflow, dt, table.depth_ft, table.storage_cf, q)
    slow = route_peaks(inflow, dt, table.depth_ft, table.storage_cf, q, stop_at_peak=False)
    assert fast.max_stage_ft[0] == full.stage_ft[0].max() == slow.max_stage_ft[0]
    assert fast.peak_outflow_cfs[0, 0] == full.outflow_cfs[0, 0].max()
    assert fast.max_storage_cf[0] == full.storage_cf[0].max()
