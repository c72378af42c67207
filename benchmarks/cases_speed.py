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


#: The bundled project whose real quantification (`capacitysim credits quantify`) the bank case deposits, under
#: four project ids: 4 x 80,508 gpd, enough for 100 withdrawals of 3,000 gpd (each above the 2,500 gpd below which
#: a connection needs no offset).
BANK_PROJECT = "oak-street-sump-and-manholes"
BANK_DEPOSITS = 4
BANK_WITHDRAWAL_GPD = 3_000


@speed_case("bank.withdrawals.100", description="4 deposits citing real quantifications, signed off, then 100 "
            "withdrawals (one transaction each, WAL, synchronous=FULL) on a fresh ledger", basis="wall", version=2)
def _ledger():
    import json
    import re

    from capacitysim.api import quantify_credits
    from capacitysim.bank.ledger import Ledger
    from capacitysim.processes.base import bundled

    folder = Path(tempfile.mkdtemp(prefix="capacitysim-bench-"))
    text = bundled("project")[BANK_PROJECT].read_text(encoding="utf-8")
    quants = []
    for k in range(BANK_DEPOSITS):  # the deposit's project id is the quantification's: one document per id
        proj = folder / f"project{k}.toml"
        proj.write_text(re.sub(r'(?m)^id = ".*"$', f'id = "BENCH-{k}"', text), encoding="utf-8")
        doc = quantify_credits(proj)
        quants.append((doc["project"]["id"], doc["project"]["basin"], doc["project"]["municipal_user"],
                       float(doc["total_gpd"]), folder / f"quantification{k}.json"))
        quants[-1][-1].write_text(json.dumps(doc), encoding="utf-8")
    counter = itertools.count()

    def one():
        k = next(counter)
        led = Ledger(folder / f"bank{k}.sqlite", actor="Bench Administrator Smith", create=True,
                     administrator="Bench Administrator Smith")
        try:
            led.add_administrator("Cora Checker Smith")
            basin, owner = quants[0][1], quants[0][2]  # one project file: one basin, one municipal user
            led.add_entity(owner, municipal=True)
            led.add_basin(basin)
            for project, _, _, gpd, path in quants:
                dep = led.deposit(basin, owner, gpd, project, quantification=str(path), certified_on="2025-01-01")
                led.actor = "Cora Checker Smith"  # the administrator's sign-off (section H), not the recorder's
                led.sign_off(dep["txn"])
                led.actor = "Bench Administrator Smith"
            for i in range(100):
                led.withdraw(basin, owner, BANK_WITHDRAWAL_GPD, f"A-{i}", node="MH1")
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
