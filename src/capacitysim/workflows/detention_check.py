"""The SWMM cross-check of a detention design: the same storage, orifice and inflow run in EPA SWMM 5.

The engine is independent of capacitysim's routing (dynamic wave, its own storage and orifice
equations), so agreement within :data:`~capacitysim.workflows.detention.SWMM_TOLERANCE` checks the
design's peak release and maximum depth.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from capacitysim.hydraulics.storage import StageStorage
from capacitysim.units import INCHES_PER_FOOT, MINUTES_PER_HOUR

#: SWMM and capacitysim's routing must agree within this relative difference (peak outflow, max depth).
SWMM_TOLERANCE = 0.02
#: Invert of the storage node and drop to the outfall of the generated model [ft] (any datum: only
#: depths matter; the drop keeps the outfall free).
_BASE_ELEV_FT = 100.0
_OUTFALL_DROP_FT = 10.0


def build_swmm_inp(time_min, inflow_cfs, depth_ft, area_sf, diameter_in, invert_ft, cd, loss_depth_ft=None, loss_cfs=None,
                   routing_step_s: float = 1.0, report_step_min: float = 1.0) -> str:
    """A SWMM 5 input: storage node (tabular depth-area curve) -> circular side orifice -> free outfall,
    with the inflow hydrograph as [INFLOWS] FLOW from a [TIMESERIES]; credited losses (infiltration,
    recycling) leave through an outlet with a tabular depth-discharge rating to a second outfall.

    References
    ----------
    Rossman (2022), SWMM 5.2 User's Manual, Appendix D ([STORAGE], [ORIFICES], [XSECTIONS], [OUTLETS],
    [CURVES], [TIMESERIES], [INFLOWS]).
    """
    total_min = float(time_min[-1])
    end_h, end_m = divmod(int(np.ceil(total_min)), 60)
    end_d, end_h = divmod(end_h, 24)
    max_depth = float(depth_ft[-1])
    lines = [
        "[TITLE]", "capacitysim detention check", "",
        "[OPTIONS]", "FLOW_UNITS CFS", "INFILTRATION HORTON", "FLOW_ROUTING DYNWAVE", "LINK_OFFSETS DEPTH",
        "START_DATE 01/01/2020", "START_TIME 00:00:00", "REPORT_START_DATE 01/01/2020", "REPORT_START_TIME 00:00:00",
        f"END_DATE 01/{1 + end_d:02d}/2020", f"END_TIME {end_h:02d}:{end_m:02d}:00",
        "SWEEP_START 01/01", "SWEEP_END 12/31", "DRY_DAYS 0",
        f"REPORT_STEP 00:{int(report_step_min):02d}:00", "WET_STEP 00:01:00", "DRY_STEP 00:01:00",
        f"ROUTING_STEP {routing_step_s:g}", "ALLOW_PONDING NO", "INERTIAL_DAMPING PARTIAL", "VARIABLE_STEP 0",
        "MIN_SURFAREA 0", "NORMAL_FLOW_LIMITED BOTH", "FORCE_MAIN_EQUATION H-W", "MAX_TRIALS 20",
        "HEAD_TOLERANCE 0.0001", "SYS_FLOW_TOL 5", "LAT_FLOW_TOL 5", "MINIMUM_STEP 0.5", "THREADS 1", "",
        "[STORAGE]", f"TANK {_BASE_ELEV_FT:g} {max_depth:.6f} 0 TABULAR TANK_CURVE 0 0", "",
        "[OUTFALLS]", f"OUT {_BASE_ELEV_FT - _OUTFALL_DROP_FT:g} FREE NO",
    ]
    if loss_cfs is not None:
        lines.append(f"LOSS_OUT {_BASE_ELEV_FT - _OUTFALL_DROP_FT:g} FREE NO")
    lines += ["", "[ORIFICES]", f"ORI TANK OUT SIDE {invert_ft:.6f} {cd:.6f} NO 0", ""]
    if loss_cfs is not None:
        lines += ["[OUTLETS]", "LOSS TANK LOSS_OUT 0 TABULAR/DEPTH LOSS_CURVE NO", ""]
    lines += ["[XSECTIONS]", f"ORI CIRCULAR {diameter_in / INCHES_PER_FOOT:.8f} 0 0 0", "", "[CURVES]"]
    for j, (d, a) in enumerate(zip(depth_ft, area_sf)):
        lines.append(f"TANK_CURVE {'Storage' if j == 0 else ''} {d:.6f} {a:.6f}")
    if loss_cfs is not None:
        for j, (d, q) in enumerate(zip(loss_depth_ft, loss_cfs)):
            lines.append(f"LOSS_CURVE {'Rating' if j == 0 else ''} {d:.6f} {q:.8f}")
    lines += ["", "[TIMESERIES]"]
    for t, q in zip(time_min, inflow_cfs):
        lines.append(f"INFLOW_TS {t / MINUTES_PER_HOUR:.8f} {q:.8f}")
    lines += ["", "[INFLOWS]", "TANK FLOW INFLOW_TS FLOW 1.0 1.0", "", "[REPORT]", "INPUT NO", "CONTROLS NO", "NODES ALL", "LINKS ALL", ""]
    return "\n".join(lines)


def swmm_check(result, table: StageStorage, out_cols, work_dir=None) -> dict:
    """Run the chosen design in SWMM and compare peak orifice outflow and max depth (within 2 %)."""
    from capacitysim.network.engine import read_results, run_inp

    n = result.numbers
    s = result.series
    losses = out_cols[0, 2] + out_cols[0, 3]
    d_in = n["orifice_diameter_in"] if n["orifice_diameter_in"] is not None else n["release_limit_diameter_in"]
    text = build_swmm_inp(
        s["time_min"], s["inflow_cfs"], table.depth_ft[0], table.area_sf[0], d_in, n["orifice_invert_ft"], n["discharge_coefficient"],
        table.depth_ft[0] if losses.max() > 0 else None, losses if losses.max() > 0 else None,
    )
    result.swmm_inp_text = text
    with tempfile.TemporaryDirectory(prefix="capacitysim-detention-") as tmp:
        wd = Path(work_dir) if work_dir is not None else Path(tmp)
        wd.mkdir(parents=True, exist_ok=True)
        src = Path(tmp) / "src"
        src.mkdir()
        inp = src / "detention_check.inp"
        inp.write_text(text, encoding="utf-8")
        run = run_inp(inp, wd / "swmm")
        ds = read_results(run)
    peak = float(ds["peak_flow_cfs"].sel(link="ORI"))
    depth = float(ds["max_depth_ft"].sel(node="TANK"))
    ours_q, ours_d = n["peak_outflow_cfs"], n["max_depth_ft"]
    rel_q = abs(peak - ours_q) / max(ours_q, 1e-12)
    rel_d = abs(depth - ours_d) / max(ours_d, 1e-12)
    return {
        "swmm_peak_outflow_cfs": peak,
        "swmm_max_depth_ft": depth,
        "swmm_peak_outflow_difference": rel_q,
        "swmm_max_depth_difference": rel_d,
        "swmm_agreement": bool(rel_q <= SWMM_TOLERANCE and rel_d <= SWMM_TOLERANCE),
        "swmm_flow_routing_continuity_error_pct": float(ds.attrs["flow_routing_continuity_error_pct"]),
    }
