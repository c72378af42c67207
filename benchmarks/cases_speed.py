"""Speed cases of the hot paths beyond the hydrology core: batched detention routing and sizing,
one SWMM run, ledger writes, a sweep. Each is reported as a ratio to the reference kernel (np.sort),
timed interleaved with it; single-threaded work (the child engine process included) is judged on CPU
time, work that waits on the disk or runs threads on wall time."""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path

import numpy as np

from capacitysim.benchmarking import speed_case

MODELS = Path(__file__).resolve().parents[1] / "models"


@speed_case("hydraulics.size_orifice.1e3", description="size_orifice: 1,000 NYC site variants, 7 storm durations, batched routing", basis="cpu")
def _sizing():
    from capacitysim.hydraulics import prism_table
    from capacitysim.hydraulics.sizing import size_orifice
    from capacitysim.hydrology.rational import rational_hydrograph_shapes
    from capacitysim.rules import nyc_stormwater as nyc
    from capacitysim.units import SQFT_PER_ACRE

    rng = np.random.default_rng(0)
    n = 1_000
    area_sf = rng.uniform(10_000, 80_000, n)
    rr = np.asarray(nyc.release_rate_cfs(nyc.allowable_flow_cfs(area_sf / SQFT_PER_ACRE, 0.6, 5.95)))
    cw = rng.uniform(0.6, 0.95, n)
    v_req, _ = nyc.modified_rational_volume_cf(cw, area_sf / SQFT_PER_ACRE, rr, 211.7016, 15.0)
    height = rng.uniform(3.0, 6.0, n)
    side = np.sqrt(1.3 * v_req / height)
    table = prism_table(side, side, height)
    _, shapes, _ = rational_hydrograph_shapes([10.0, 20.0, 30.0, 45.0, 60.0, 90.0, 120.0], 5.0, 211.7016, 15.0, 1.0)
    scale = cw * area_sf / SQFT_PER_ACRE
    return lambda: size_orifice(table, rr, shapes, 60.0, scale)


@speed_case("network.swmm_run.synthetic_50", description="one SWMM run of models/synthetic-50.inp in a child process, results read", basis="cpu",
            repeats=6, budget_s=30.0)
def _swmm_run():
    from capacitysim.network.engine import read_results, run_inp

    work = tempfile.mkdtemp(prefix="capacitysim-bench-")
    counter = itertools.count()

    def one():
        run = run_inp(MODELS / "synthetic-50.inp", Path(work) / f"r{next(counter)}")
        return read_results(run)

    return one


@speed_case("bank.withdrawals.100", description="100 withdrawals (one transaction each, WAL, synchronous=FULL) on a fresh ledger", basis="wall")
def _ledger():
    from capacitysim.bank.ledger import Ledger

    folder = Path(tempfile.mkdtemp(prefix="capacitysim-bench-"))
    counter = itertools.count()

    def one():
        k = next(counter)
        led = Ledger(folder / f"bank{k}.sqlite", actor="Bench Administrator Smith", create=True,
                     administrator="Bench Administrator Smith")
        try:
            led.add_administrator("Cora Checker Smith")
            led.add_entity("City", municipal=True)
            led.add_basin("North")
            led.open_subaccount("North", "City")
            dep = led.deposit("North", "City", 10_000_000, "P-1", certified_on="2025-01-01")
            led.actor = "Cora Checker Smith"  # the administrator's sign-off (section H), not the recorder's
            led.sign_off(dep["txn"])
            led.actor = "Bench Administrator Smith"
            for i in range(100):
                led.withdraw("North", "City", 5_000, f"A-{i}", node="MH1")
        finally:
            led.close()

    return one


@speed_case("sweep.detention_family.432", description="sweep run of models/sweeps/detention-family.toml (432 designs, in-process, Zarr store)", basis="wall",
            repeats=6)
def _sweep():
    from capacitysim.io.sweep_files import load_sweep
    from capacitysim.workflows.sweep import run_sweep

    spec = load_sweep(MODELS / "sweeps" / "detention-family.toml")
    folder = Path(tempfile.mkdtemp(prefix="capacitysim-bench-"))
    counter = itertools.count()
    return lambda: run_sweep(spec, folder / f"s{next(counter)}.zarr", workers=0)
