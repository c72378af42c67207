"""Sizing 10,000 NYC detention site variants in one batched call (size_orifice).

Run: .venv/bin/python -m pytest benchmarks/bench_detention.py --benchmark-only -q

Figures (2 shared cores, load average about 3.5, back to back): 12.6-15.6 s with the fixed 24-step
bisection over all designs and full-length routing (commit f7a7130); 3.2-3.4 s with the safeguarded
regula falsi over unconverged designs and the exact early stop of peak routing (about 4x).
"""

import numpy as np

from capacitysim.hydraulics import prism_table
from capacitysim.rules import nyc_stormwater as nyc
from capacitysim.units import SQFT_PER_ACRE
from capacitysim.hydraulics.sizing import size_orifice
from capacitysim.hydrology.rational import rational_hydrograph_shapes

N = 10_000


def _variants(n=N, seed=0):
    rng = np.random.default_rng(seed)
    area_sf = rng.uniform(10_000, 80_000, n)
    c_dp = rng.uniform(0.4, 0.7, n)
    cw = rng.uniform(0.6, 0.95, n)
    rr = np.asarray(nyc.release_rate_cfs(nyc.allowable_flow_cfs(area_sf / SQFT_PER_ACRE, c_dp, 5.95)))
    v_req, _ = nyc.modified_rational_volume_cf(cw, area_sf / SQFT_PER_ACRE, rr, 211.7016, 15.0)
    height = rng.uniform(3.0, 6.0, n)
    footprint = 1.3 * v_req / height  # 30 % margin on the modified rational volume
    table = prism_table(np.sqrt(footprint), np.sqrt(footprint), height)
    return table, rr, cw * area_sf / SQFT_PER_ACRE


def test_size_10000_sites(benchmark):
    table, rr, scale = _variants()
    _, shapes, _ = rational_hydrograph_shapes([10.0, 20.0, 30.0, 45.0, 60.0, 90.0, 120.0], 5.0, 211.7016, 15.0, 1.0)
    size_orifice(prism_table(10.0, 10.0, 3.0), 0.25, shapes, 60.0, 0.3)  # compile the kernel
    res = benchmark.pedantic(size_orifice, args=(table, rr, shapes, 60.0, scale), rounds=1, iterations=1)
    assert res.diameter_in.shape == (N,)
    assert res.feasible.mean() > 0.9
    ok = res.feasible
    assert np.all(res.peak_outflow_cfs[ok] <= rr[ok] * (1 + 1e-9))
