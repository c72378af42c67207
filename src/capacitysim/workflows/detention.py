"""Detention design for a NYC Site Connection Proposal (15 RCNY § 31-03): release rate, required
volume, orifice sizing by routing, volume credits, a SWMM check and the HTML report.

Steps (each reported with its citation):

1. Allowable Flow Q = C_dp i A of the whole site (drainage-plan C, rule-set intensity).
2. Stormwater Release Rate, § 31-03(a)(1); prorated for alterations, § 31-03(a)(2).
3. Credits: infiltration of an open-bottom system only with soil borings at the system and an
   in-situ permeability test (§ 31-03(a)(3), PC Eq. 11-3 outflow); recycling only when independent
   and the routed total discharge never exceeds the release rate (§ 31-03(a)(4)).
4. Required volume by the modified rational method with the rule set's 10-year curve.
5. Design hydrographs (modified rational family over durations, or the SCS hydrograph of the
   hydrology core) routed through the system's stage-storage-discharge table (Modified Puls).
6. :func:`size_orifice`: the largest orifice whose routed peak release <= the release rate, and the
   smallest that does not overtop, solved separately by bisection over all designs at once.
7. SWMM check of the chosen design (storage node + orifice + outfall + [INFLOWS]/[TIMESERIES]).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from capacitysim import hydraulics
from capacitysim.errors import InputError, RefusedError
from capacitysim.hydraulics.storage import StageStorage
from capacitysim.io.site_files import RuleSet, Site
from capacitysim.rules import nyc_stormwater as nyc
from capacitysim.units import (
    ACRES_PER_SQMI,
    GPD_PER_CFS,
    INCHES_PER_FOOT,
    MINUTES_PER_HOUR,
    SECONDS_PER_HOUR,
    SECONDS_PER_MINUTE,
    SQFT_PER_ACRE,
)

#: Columns of the outflow tables: orifice and overflow weir go to the sewer; infiltration and
#: recycling leave the system without reaching it.
OUTFLOW_COLUMNS = ("orifice", "overflow", "infiltration", "recycling")
SEWER_COLUMNS = (0, 1)
#: Upper bound of the orifice search [in] besides the geometric one (height above the invert).
MAX_ORIFICE_IN = 48.0
#: Bisection iterations: the diameter is bracketed to MAX/2^N (48 in / 2^24 < 3e-6 in).
BISECTION_STEPS = 24
#: Points of the stage tables used for sizing and for the final design.
SIZING_POINTS = 41
FINAL_POINTS = 161
#: SWMM and our routing must agree within this relative difference (issue 4).
SWMM_TOLERANCE = 0.02
#: Time added after the last hydrograph ends when routing for the report (drain-down) [h].
REPORT_TAIL_HR = 12.0


# ----------------------------------------------------------------------------------------------
# batched sizing (pure numpy + the numba routing kernel)
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SizingResult:
    """Orifice sizing of n designs (arrays of shape (n,)).

    ``diameter_in`` is the largest orifice meeting the release rate when ``feasible``, else NaN;
    ``release_limit_in`` and ``spill_limit_in`` are the two constraints solved separately (the
    largest diameter within the release rate; the smallest that does not overtop, inf when none).
    """

    diameter_in: np.ndarray
    feasible: np.ndarray
    release_limit_in: np.ndarray
    spill_limit_in: np.ndarray
    peak_outflow_cfs: np.ndarray
    max_depth_ft: np.ndarray
    max_storage_cf: np.ndarray
    critical_row: np.ndarray
    release_binding: np.ndarray
    reasons: list[str]


def outflow_table(table: StageStorage, diameter_in, invert_ft, cd, losses_cfs=None, weir_length_ft=None, weir_coefficient=3.33):
    """Outflow columns (n, 4, K) of n designs: orifice, overflow weir at the top, infiltration, recycling [cfs].

    Losses (infiltration, recycling) are (n, 2) constant rates drawn whenever water is stored,
    ramped over the first table segment so the outflow is continuous at an empty pool.
    """
    d = table.depth_ft
    n, k = d.shape
    out = np.zeros((n, 4, k))
    dia = np.broadcast_to(np.asarray(diameter_in, dtype=float), (n,))
    inv = np.broadcast_to(np.asarray(invert_ft, dtype=float), (n,))
    cdv = np.broadcast_to(np.asarray(cd, dtype=float), (n,))
    out[:, 0, :] = hydraulics.orifice_flow_cfs(d, dia[:, None], inv[:, None], cdv[:, None])
    if weir_length_ft is not None:
        wl = np.broadcast_to(np.asarray(weir_length_ft, dtype=float), (n,))
        out[:, 1, :] = hydraulics.rectangular_weir_flow_cfs(d - table.top_ft[:, None], wl[:, None], weir_coefficient)
    if losses_cfs is not None:
        losses = np.broadcast_to(np.asarray(losses_cfs, dtype=float), (n, 2))
        ramp = np.clip(d / d[:, 1:2], 0.0, 1.0)
        out[:, 2, :] = losses[:, 0:1] * ramp
        out[:, 3, :] = losses[:, 1:2] * ramp
    return out


def _route_max(tables, diam, inv, cd, losses, weir, shapes, dt_s, scale):
    """Route every design through every hydrograph shape; max over shapes per design."""
    n = tables.top_ft.shape[0]
    n_shapes = shapes.shape[0]
    out = outflow_table(tables, diam, inv, cd, losses, weir)
    rows_t = np.repeat(np.arange(n), n_shapes)
    rows_i = np.tile(np.arange(n_shapes), n)
    pk = hydraulics.route_peaks(shapes, dt_s, tables.depth_ft, tables.storage_cf, out, rows_t, rows_i, np.repeat(scale, n_shapes))
    sewer = pk.peak_outflow_cfs[:, 0] + pk.peak_outflow_cfs[:, 1]
    sewer = sewer.reshape(n, n_shapes)
    stage = pk.max_stage_ft.reshape(n, n_shapes)
    stor = pk.max_storage_cf.reshape(n, n_shapes)
    crit = np.argmax(stage, axis=1)
    return sewer.max(axis=1), stage.max(axis=1), stor.max(axis=1), crit


def size_orifice(tables: StageStorage, release_cfs, shapes, dt_s, scale=1.0, invert_ft=0.0, cd=0.61,
                 losses_cfs=None, weir_length_ft=None, steps=BISECTION_STEPS) -> SizingResult:
    """Find, for n designs at once, the largest orifice keeping the routed peak release at or below
    the release rate without overtopping the storage.

    The two constraints are solved separately by bisection on the diameter: the peak release grows
    with the diameter (upper bound ``release_limit_in``) and the maximum stage falls with it (lower
    bound ``spill_limit_in``). A design is feasible when spill_limit <= release_limit; the chosen
    orifice is then the release limit (the largest allowed: the least storage used and the least
    clogging-prone opening).

    Parameters
    ----------
    tables : StageStorage
        Stage-storage tables of the n designs.
    release_cfs : array_like (n,)
        Release rate of each design [cfs].
    shapes : array_like (S, T)
        Design hydrograph shapes at step ``dt_s``; design i routes ``scale[i] * shapes[s]`` for each s.
    scale : array_like (n,), default 1
        Multiplier of the shapes for each design (e.g. C A of the design for unit rational shapes).
    invert_ft, cd : array_like (n,)
        Orifice invert above the bottom [ft] and discharge coefficient [-].
    losses_cfs : array_like (n, 2), optional
        Credited infiltration and recycling withdrawals [cfs].
    weir_length_ft : array_like (n,), optional
        Overflow weir at the top (its flow counts as release to the sewer).

    Returns
    -------
    SizingResult

    References
    ----------
    15 RCNY § 31-03(a)(1)-(2) (release rate); routing: Chow, Maidment & Mays (1988) § 8.2.
    """
    n = tables.top_ft.shape[0]
    rr = np.broadcast_to(np.asarray(release_cfs, dtype=float), (n,)).copy()
    scale = np.broadcast_to(np.asarray(scale, dtype=float), (n,)).copy()
    inv = np.broadcast_to(np.asarray(invert_ft, dtype=float), (n,)).copy()
    cdv = np.broadcast_to(np.asarray(cd, dtype=float), (n,)).copy()
    shapes = np.atleast_2d(np.asarray(shapes, dtype=float))
    if np.any(inv >= tables.top_ft):
        raise InputError("orifice_invert_ft must be below the top of the system")
    d_geo = np.minimum((tables.top_ft - inv) * INCHES_PER_FOOT, MAX_ORIFICE_IN)
    losses = None if losses_cfs is None else np.broadcast_to(np.asarray(losses_cfs, float), (n, 2))
    weir = None if weir_length_ft is None else np.broadcast_to(np.asarray(weir_length_ft, float), (n,))

    def stack(x):
        return None if x is None else np.concatenate([x, x])

    tab2 = hydraulics.stack_tables([tables, tables])
    args2 = (stack(inv), stack(cdv), stack(losses), stack(weir))

    # Bracket: release bisection lo = feasible (small), hi = infeasible (large);
    # spill bisection lo = overtops (small), hi = fits (large).
    q_top, s_top, _, _ = _route_max(tables, d_geo, inv, cdv, losses, weir, shapes, dt_s, scale)
    rel_lo, rel_hi = np.zeros(n), d_geo.copy()
    release_not_binding = q_top <= rr
    spl_lo, spl_hi = np.zeros(n), d_geo.copy()
    spill_everywhere = s_top > tables.top_ft
    for _ in range(steps):
        mid_r = 0.5 * (rel_lo + rel_hi)
        mid_s = 0.5 * (spl_lo + spl_hi)
        q, s, _, _ = _route_max(tab2, np.concatenate([mid_r, mid_s]), *args2[:2], args2[2], args2[3], shapes, dt_s, stack(scale))
        ok_r = q[:n] <= rr
        rel_lo = np.where(ok_r, mid_r, rel_lo)
        rel_hi = np.where(ok_r, rel_hi, mid_r)
        fits = s[n:] <= tables.top_ft
        spl_hi = np.where(fits, mid_s, spl_hi)
        spl_lo = np.where(fits, spl_lo, mid_s)
    release_limit = np.where(release_not_binding, d_geo, rel_lo)
    spill_limit = np.where(spill_everywhere, np.inf, np.where(spl_lo == 0, 0.0, spl_hi))
    # d = 0 may already fit (the storage holds the whole storm)
    feasible = (~spill_everywhere) & (spill_limit <= release_limit) & (release_limit > 0)
    q_fin, s_fin, v_fin, crit = _route_max(tables, release_limit, inv, cdv, losses, weir, shapes, dt_s, scale)
    feasible &= s_fin <= tables.top_ft * (1 + 1e-9)
    reasons = []
    for i in range(n):
        if feasible[i]:
            reasons.append("")
        elif spill_everywhere[i]:
            reasons.append(
                f"the system overtops even with the largest orifice that fits ({d_geo[i]:.2f} in): "
                f"max depth {s_top[i]:.2f} ft > {tables.top_ft[i]:.2f} ft; the storage is too small for the design storm"
            )
        elif release_limit[i] <= 0:
            reasons.append(f"no orifice meets the release rate {rr[i]:.4g} cfs (losses alone exceed it?)")
        else:
            reasons.append(
                f"no orifice does both: the largest meeting the release rate {rr[i]:.4g} cfs is {release_limit[i]:.3f} in "
                f"and overtops the system (max depth {s_fin[i]:.2f} ft > {tables.top_ft[i]:.2f} ft, "
                f"about {v_fin[i] - tables.capacity_cf[i]:,.0f} ft3 over capacity); the smallest that does not "
                f"overtop is {spill_limit[i]:.3f} in, which releases more than the rate"
            )
    return SizingResult(
        diameter_in=np.where(feasible, release_limit, np.nan),
        feasible=feasible,
        release_limit_in=release_limit,
        spill_limit_in=spill_limit,
        peak_outflow_cfs=q_fin,
        max_depth_ft=s_fin,
        max_storage_cf=v_fin,
        critical_row=crit,
        release_binding=~release_not_binding,
        reasons=reasons,
    )


# ----------------------------------------------------------------------------------------------
# design hydrographs
# ----------------------------------------------------------------------------------------------
def rational_hydrograph_shapes(durations_min, tc_min, a, b, dt_min, tail_min=0.0):
    """Unit modified rational hydrographs [cfs per (C x acre)] for several storm durations.

    Each is a trapezoid rising over Tc to i(t_d) = a/(t_d + b), level to t_d, falling to 0 at t_d + Tc
    (volume i(t_d) t_d, the modified rational inflow volume). Multiply by k C A [ac].

    References
    ----------
    HEC-22 (2009) ch. 8 (modified rational method hydrographs).
    """
    td = np.maximum(np.asarray(durations_min, dtype=float), tc_min)
    t_end = td.max() + tc_min + tail_min
    t = np.arange(0.0, t_end + dt_min, dt_min)
    peak = a / (td + b)
    shapes = np.stack([np.interp(t, [0.0, tc_min, d, d + tc_min], [0.0, p, p, 0.0], right=0.0) for d, p in zip(td, peak)])
    return t, shapes, td


# ----------------------------------------------------------------------------------------------
# one site
# ----------------------------------------------------------------------------------------------
@dataclass
class DetentionResult:
    """Everything the JSON output and the report need."""

    site: Site
    rules: RuleSet
    numbers: dict
    steps: list[dict] = field(default_factory=list)
    series: dict = field(default_factory=dict)
    status: str = "pass"
    problems: list[str] = field(default_factory=list)
    swmm_inp_text: str = ""

    def as_json(self) -> dict:
        out = {"site": self.site.name, "site_file": self.site.path, "rule_set": self.rules.name, "status": self.status,
               "problems": self.problems}
        out.update(self.numbers)
        out["unverified_rule_values"] = self.rules.unverified()
        return out


def system_table(system: dict, points: int) -> StageStorage:
    """The stage-storage table of a site's system."""
    t = system["type"]
    if t == "blue_roof":
        return hydraulics.blue_roof_table(system["roof_area_sf"], system["max_depth_in"] / INCHES_PER_FOOT, points)
    if t == "tank":
        return hydraulics.prism_table(system["length_ft"], system["width_ft"], system["height_ft"], 1.0, points)
    if t == "chamber":
        return hydraulics.prism_table(system["length_ft"], system["width_ft"], system["height_ft"], system["porosity"], points)
    return hydraulics.pond_table(system["bottom_length_ft"], system["bottom_width_ft"], system["side_slope_h_per_v"], system["depth_ft"], points)


def _step(steps, title, formula, value, unit, cite):
    steps.append({"step": title, "formula": formula, "value": value, "unit": unit, "citation": cite})


def design_site(site: Site, rules: RuleSet, *, swmm: bool = True, work_dir: str | Path | None = None) -> DetentionResult:
    """Run the whole detention design of one site: rule, volume, sizing, routing, SWMM check."""
    steps: list[dict] = []
    k = float(rules.value("rational_cfs_per_acre_in_hr"))
    i_design = float(rules.value("design_intensity_in_hr"))
    a_idf, b_idf = float(rules.value("idf_10yr", "a")), float(rules.value("idf_10yr", "b_min"))
    cd = float(site.system.get("discharge_coefficient", rules.value("orifice_discharge_coefficient")))
    c_table = rules.runoff_coefficients()

    # 1-2: Allowable Flow and release rate
    site_ac = site.site_area_sf / SQFT_PER_ACRE
    q_allow = float(nyc.allowable_flow_cfs(site_ac, site.drainage_plan_c, i_design, k))
    _step(steps, "Allowable Flow of the site", f"Q = C_dp i A = {site.drainage_plan_c:g} x {i_design:g} in/h x {site_ac:.4f} ac",
          q_allow, "cfs", "15 RCNY § 31-02 (Allowable Flow), § 31-03(a)(1); PC § 1114.3.1 Eq. 11-1 (rule set: design_intensity_in_hr)")
    rr_site = float(nyc.release_rate_cfs(q_allow))
    _step(steps, "Stormwater Release Rate of the site", "max(0.25, 0.10 Q), or Q when Q < 0.25 cfs", rr_site, "cfs",
          "15 RCNY § 31-03(a)(1)")
    if site.kind == "alteration":
        rr = float(nyc.alteration_release_rate_cfs(q_allow, site.altered_area_sf, site.site_area_sf))
        _step(steps, "Release rate of the altered area",
              f"{rr_site:.4g} cfs x {site.altered_area_sf:,.0f} / {site.site_area_sf:,.0f} ft2", rr, "cfs",
              "15 RCNY § 31-03(a)(2) (no new points of discharge permitted)")
    else:
        rr = rr_site

    # tributary runoff
    names = list(site.surfaces_sf)
    cw = float(nyc.weighted_runoff_coefficient([site.surfaces_sf[n] for n in names], [c_table[n] for n in names]))
    trib_sf = site.tributary_area_sf
    trib_ac = trib_sf / SQFT_PER_ACRE
    _step(steps, "Weighted runoff coefficient of the tributary area",
          " + ".join(f"{site.surfaces_sf[n]:,.0f} x {c_table[n]:g}" for n in names) + f" over {trib_sf:,.0f} ft2",
          cw, "-", "PC § 1114.3.1 Eq. 11-2 and its C list (rule set: runoff_coefficients)")
    q_dev = float(nyc.rational_flow_cfs(cw, i_design, trib_ac, k))
    _step(steps, "Developed peak runoff of the tributary area", f"Q = Cw i A = {cw:.3f} x {i_design:g} x {trib_ac:.4f}",
          q_dev, "cfs", "PC § 1114.3.1 Eq. 11-1")

    table = system_table(site.system, FINAL_POINTS)
    capacity = float(table.capacity_cf[0])
    footprint = float(table.footprint_sf[0])

    # 3: credits
    q_inf = 0.0
    if site.infiltration is not None:
        inf = site.infiltration
        if inf.permeability_test != "in-situ":
            raise RefusedError(
                f"infiltration credit refused: 15 RCNY § 31-03(a)(3) requires a permeability test performed in situ "
                f"(the final rule deleted laboratory tests); the site file gives {inf.permeability_test!r}"
            )
        if not inf.borings_at_system_location:
            raise RefusedError("infiltration credit refused: 15 RCNY § 31-03(a)(3) requires soil borings taken at the location of the proposed system")
        q_inf = float(nyc.infiltration_outflow_cfs(footprint, inf.infiltration_rate_in_hr))
        _step(steps, "Infiltration outflow credited (open bottom)",
              f"Qinf = FA x i_soil / 43,200 = {footprint:,.0f} x {inf.infiltration_rate_in_hr:g} / 43,200 "
              f"(borings {', '.join(inf.soil_borings)}; in-situ test)", q_inf, "cfs",
              "15 RCNY § 31-03(a)(3); PC § 1114.3.1.1 Eq. 11-3")
    q_rec = 0.0
    if site.recycling is not None:
        if not site.recycling.independent:
            raise RefusedError("recycling credit refused: 15 RCNY § 31-03(a)(4) requires the recycling system to be independent")
        q_rec = site.recycling.demand_gpd / GPD_PER_CFS
        _step(steps, "Recycling withdrawal credited", f"{site.recycling.demand_gpd:,.0f} gpd / {GPD_PER_CFS:,.0f}", q_rec, "cfs",
              "15 RCNY § 31-03(a)(4): credited only if total discharge never exceeds the release rate (checked by routing below)")

    # 4: required volume (modified rational, 10-year curve)
    v_req0, t0 = nyc.modified_rational_volume_cf(cw, trib_ac, rr, a_idf, b_idf, k)
    v_req, t_crit = nyc.modified_rational_volume_cf(cw, trib_ac, rr + q_inf + q_rec, a_idf, b_idf, k)
    t_eq115 = float(nyc.eq_11_5_duration_min(cw, trib_sf, rr))
    _step(steps, "Critical duration, PC Eq. 11-5", f"tV = 0.27 (Cw A / Q_DRR)^0.5 - 15 = 0.27 ({cw:.3f} x {trib_sf:,.0f} / {rr:.4g})^0.5 - 15",
          t_eq115, "min", "PC § 1114.3.1.1 Eq. 11-5 (10-year storm)")
    _step(steps, "Required volume without credits", f"V = 60 (sqrt(k Cw A a) - sqrt(b Q))^2, a = {a_idf:g}, b = {b_idf:g}, t* = {float(t0):.1f} min",
          float(v_req0), "ft3", "Modified rational method, HEC-22 ch. 8, with the rule set's idf_10yr (UNVERIFIED, derived from Eq. 11-5); PC Eq. 11-6 not available")
    if q_inf or q_rec:
        _step(steps, "Required volume with credits", f"same with outflow {rr:.4g} + {q_inf:.4g} + {q_rec:.4g} cfs, t* = {float(t_crit):.1f} min",
              float(v_req), "ft3", "15 RCNY § 31-03(a)(3)-(4) volume reductions")
    _step(steps, "Storage provided by the system", f"{site.system['type']} stage-storage table to the top ({float(table.top_ft[0]):.3f} ft)",
          capacity, "ft3", "HEC-22 § 8.3 (average-end-area)")

    # 5: hydrographs
    dt_min = float(site.design.get("dt_min", rules.value("routing", "dt_min")))
    dt_s = dt_min * SECONDS_PER_MINUTE
    if site.design["hydrograph"] == "scs":
        from capacitysim import hydrology

        storm = rules.data["design_storm_10yr_24h"]
        tc_min = float(site.design.get("tc_min", rules.value("rational_hydrograph", "tc_min")))
        rain = hydrology.design_storm(float(storm["depth_in"]), str(storm["distribution"]), dt_min)
        hyd = hydrology.unit_hydrograph_runoff(trib_ac / ACRES_PER_SQMI, site.design["cn"], tc_min / MINUTES_PER_HOUR, rain)
        flow = np.concatenate([[0.0], hyd.values])
        t_min = np.concatenate([[0.0], hyd["time_hr"].values * MINUTES_PER_HOUR])
        shapes = flow[None, :]
        scale = 1.0
        labels = [f"SCS {storm['depth_in']:g} in Type {storm['distribution']} 24-h"]
        hyd_cite = "NEH 630 ch. 16 unit hydrograph of the hydrology core; rule set design_storm_10yr_24h (UNVERIFIED)"
    else:
        tc_min = float(site.design.get("tc_min", rules.value("rational_hydrograph", "tc_min")))
        durs = sorted(set(float(x) for x in rules.value("rational_hydrograph", "durations_min")) | ({round(float(t_crit), 3)} if t_crit > 0 else set()))
        t_min, shapes, td = rational_hydrograph_shapes(durs, tc_min, a_idf, b_idf, dt_min)
        scale = k * cw * trib_ac
        labels = [f"rational t_d = {d:g} min" for d in td]
        hyd_cite = "Modified rational hydrographs, HEC-22 ch. 8; Tc and durations from the rule set (UNVERIFIED modelling choices)"

    # 6: sizing
    inv = site.system["orifice_invert_ft"]
    weir = site.system.get("overflow_weir_length_ft")
    losses = np.array([[q_inf, q_rec]])
    sz = size_orifice(table, rr, shapes, dt_s, scale, inv, cd, losses, None if weir is None else [weir])
    feasible = bool(sz.feasible[0])
    problems = []
    if not feasible:
        problems.append("infeasible: " + sz.reasons[0])
        if site.recycling is not None:
            problems.append("recycling credit refused (15 RCNY § 31-03(a)(4)): with it the total discharge cannot be kept within the release rate without overtopping")
    if capacity < float(v_req) * (1 - 1e-9):
        problems.append(f"storage provided {capacity:,.0f} ft3 is less than the required volume {float(v_req):,.0f} ft3")
    d_in = float(sz.diameter_in[0]) if feasible else float(sz.release_limit_in[0])
    _step(steps, "Orifice: largest diameter with routed peak release <= release rate", f"bisection over routed designs ({len(labels)} hydrographs)",
          float(sz.release_limit_in[0]), "in", "15 RCNY § 31-03(a)(1)-(2); Modified Puls routing, Chow et al. (1988) § 8.2; " + hyd_cite)
    _step(steps, "Orifice: smallest diameter that does not overtop", "bisection on the max routed stage <= system top",
          float(sz.spill_limit_in[0]), "in", "storage must hold the routed design storm")

    # full routing of the critical hydrograph for the report and the SWMM check
    crit = int(sz.critical_row[0])
    tail = int(round(REPORT_TAIL_HR * MINUTES_PER_HOUR / dt_min))
    inflow = np.concatenate([shapes[crit] * scale, np.zeros(tail)])
    t_full = np.arange(inflow.size) * dt_min
    out_cols = outflow_table(table, d_in, inv, cd, losses, None if weir is None else [weir])
    res = hydraulics.route(inflow, dt_s, table.depth_ft, table.storage_cf, out_cols)
    sewer = res.outflow_cfs[0, 0] + res.outflow_cfs[0, 1]
    # trim the drained tail
    wet = np.flatnonzero((res.storage_cf[0] > 1e-3 * max(capacity, 1.0)) | (inflow > 0))
    end = min(inflow.size, (wet[-1] + 2) if wet.size else inflow.size)
    peak_out = float(sewer.max())
    max_depth = float(res.stage_ft[0].max())
    if sewer.max() > rr * (1 + 1e-6) and feasible:
        problems.append(f"routed release {peak_out:.4g} cfs exceeds the release rate {rr:.4g} cfs")

    numbers = {
        "kind": site.kind,
        "site_area_sf": site.site_area_sf,
        "altered_area_sf": site.altered_area_sf,
        "drainage_plan_c": site.drainage_plan_c,
        "design_intensity_in_hr": i_design,
        "allowable_flow_cfs": q_allow,
        "site_release_rate_cfs": rr_site,
        "release_rate_cfs": rr,
        "tributary_area_sf": trib_sf,
        "weighted_c": cw,
        "developed_peak_cfs": q_dev,
        "infiltration_credit_cfs": q_inf,
        "recycling_credit_cfs": q_rec,
        "required_volume_no_credit_cf": float(v_req0),
        "required_volume_cf": float(v_req),
        "critical_duration_min": float(t_crit),
        "eq_11_5_duration_min": t_eq115,
        "storage_provided_cf": capacity,
        "system_type": site.system["type"],
        "system_height_ft": float(table.top_ft[0]),
        "orifice_invert_ft": inv,
        "discharge_coefficient": cd,
        "feasible": feasible,
        "orifice_diameter_in": float(sz.diameter_in[0]) if feasible else None,
        "release_limit_diameter_in": float(sz.release_limit_in[0]),
        "spill_limit_diameter_in": float(sz.spill_limit_in[0]) if np.isfinite(sz.spill_limit_in[0]) else None,
        "design_hydrograph": labels[crit],
        "peak_inflow_cfs": float(inflow.max()),
        "peak_outflow_cfs": peak_out,
        "max_depth_ft": max_depth,
        "max_storage_cf": float(res.storage_cf[0].max()),
        "routing_dt_min": dt_min,
        "routing_mass_balance_error_cf": float(
            np.trapezoid(inflow) * dt_s - np.trapezoid(res.outflow_cfs[0].sum(axis=0)) * dt_s - res.storage_cf[0, -1]
        ),
        "swmm_peak_outflow_cfs": None,
        "swmm_max_depth_ft": None,
        "swmm_agreement": None,
    }
    result = DetentionResult(site, rules, numbers, steps, problems=problems)
    result.series = {
        "time_min": t_full[:end], "inflow_cfs": inflow[:end], "sewer_cfs": sewer[:end], "stage_ft": res.stage_ft[0, :end],
        "storage_cf": res.storage_cf[0, :end], "losses_cfs": (res.outflow_cfs[0, 2] + res.outflow_cfs[0, 3])[:end],
        "top_ft": float(table.top_ft[0]),
    }

    # 7: SWMM
    if swmm:
        check = swmm_check(result, table, out_cols, work_dir)
        numbers.update(check)
        if not check["swmm_agreement"]:
            problems.append(
                f"SWMM check: peak outflow {check['swmm_peak_outflow_cfs']:.4g} vs {peak_out:.4g} cfs, max depth "
                f"{check['swmm_max_depth_ft']:.4g} vs {max_depth:.4g} ft differ by more than {SWMM_TOLERANCE:.0%}"
            )
    result.status = "pass" if not problems else "fail"
    return result


# ----------------------------------------------------------------------------------------------
# SWMM check
# ----------------------------------------------------------------------------------------------
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


def swmm_check(result: DetentionResult, table: StageStorage, out_cols, work_dir=None) -> dict:
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


# ----------------------------------------------------------------------------------------------
# HTML report
# ----------------------------------------------------------------------------------------------
MAINTENANCE_OBLIGATIONS = [
    "The detention system (and any replacement) must be properly maintained throughout its useful life, "
    "with maintenance records kept, until replacement as approved by DEP.",
    "The obligation binds current owners, their successors, assigns and other persons in control of the "
    "property, and must be made binding in a deed restriction or other form satisfactory to DEP.",
    "Three years after approval and every three years thereafter, a licensed professional engineer, registered "
    "architect or licensed master plumber must inspect the system and certify to DEP that it is free of debris "
    "and sediments, that its orifice is unobstructed and flowing, and that it otherwise operates in compliance.",
]


def write_report(result: DetentionResult, path) -> Path:
    """Write the self-contained HTML report: inputs, every step with its citation, hydrographs, stage,
    SWMM check, rule-set sources (unverified values flagged) and the § 31-04(a)(8) obligations."""
    from capacitysim.report.html import HtmlReport, new_figure

    site, n, s = result.site, result.numbers, result.series
    rep = HtmlReport(f"Detention design: {site.name}", "Site Connection Proposal, NYC combined sewer area (15 RCNY § 31-03)")
    verdict = "PASS" if result.status == "pass" else "FAIL"
    rep.raw(f'<p class="{result.status}">Result: {verdict}</p>')
    for p in result.problems:
        rep.paragraph(p, "fail")

    rep.heading("Inputs")
    rep.key_values([
        ("site file", site.path), ("development", "new development" if site.kind == "new" else "alteration"),
        ("total site area [ft2]", site.site_area_sf),
        *([("altered area [ft2]", site.altered_area_sf)] if site.altered_area_sf else []),
        ("drainage-plan runoff coefficient", site.drainage_plan_c),
        ("system", f"{site.system['type']} ({site.system['bottom']} bottom)"),
        ("orifice invert above bottom [ft]", n["orifice_invert_ft"]),
        ("rule set", f"{result.rules.name} ({result.rules.path})"),
    ])
    rep.table(["surface", "area [ft2]", "C"], [[k, v, result.rules.runoff_coefficients()[k]] for k, v in site.surfaces_sf.items()])
    if site.infiltration:
        inf = site.infiltration
        rep.key_values([("soil borings", ", ".join(inf.soil_borings)), ("borings at system location", str(inf.borings_at_system_location)),
                        ("permeability test", inf.permeability_test), ("infiltration rate [in/h]", inf.infiltration_rate_in_hr),
                        ("report", inf.report or "-")])
    if site.recycling:
        rep.key_values([("recycling demand [gpd]", site.recycling.demand_gpd), ("independent system", str(site.recycling.independent)),
                        ("use", site.recycling.use or "-")])

    rep.heading("Calculation, step by step")
    rep.table(["step", "formula", "value", "unit", "citation"],
              [[st["step"], st["formula"], st["value"], st["unit"], st["citation"]] for st in result.steps])

    rep.heading("Design summary")
    rep.table(["quantity", "value"], [
        ["release rate [cfs]", n["release_rate_cfs"]],
        ["required volume [ft3]", n["required_volume_cf"]],
        ["storage provided [ft3]", n["storage_provided_cf"]],
        ["orifice diameter [in]", "infeasible" if n["orifice_diameter_in"] is None else f"{n['orifice_diameter_in']:.3f}"],
        ["critical design hydrograph", n["design_hydrograph"]],
        ["peak inflow [cfs]", n["peak_inflow_cfs"]],
        ["peak release to the sewer [cfs]", n["peak_outflow_cfs"]],
        ["max depth [ft] (system height)", f"{n['max_depth_ft']:.3f} ({n['system_height_ft']:.3f})"],
        ["max storage used [ft3]", n["max_storage_cf"]],
        ["routing mass balance error [ft3]", f"{n['routing_mass_balance_error_cf']:.2e}"],
    ])
    rep.citation("The orifice diameter is the largest that keeps the routed peak release at or below the release rate; "
                 "a fabricated orifice must not be larger. Routing: Modified Puls (storage indication), Chow, Maidment & Mays "
                 "(1988) § 8.2; orifice: Q = Cd A (2 g H)^0.5 with H to the centroid (Brater & King ch. 4; HEC-22 § 8.4).")

    t_hr = s["time_min"] / MINUTES_PER_HOUR
    fig, ax = new_figure()
    ax.plot(t_hr, s["inflow_cfs"], label="inflow")
    ax.plot(t_hr, s["sewer_cfs"], label="release to sewer")
    if s["losses_cfs"].max() > 0:
        ax.plot(t_hr, s["losses_cfs"], label="infiltration + recycling")
    ax.axhline(n["release_rate_cfs"], color="k", ls="--", lw=1, label="release rate")
    ax.set_xlabel("time [h]")
    ax.set_ylabel("flow [cfs]")
    ax.legend()
    rep.figure(fig, f"Inflow and outflow hydrographs ({n['design_hydrograph']})")
    fig, ax = new_figure()
    ax.plot(t_hr, s["stage_ft"], label="stage")
    ax.axhline(s["top_ft"], color="r", ls="--", lw=1, label="top of system")
    ax.set_xlabel("time [h]")
    ax.set_ylabel("depth above bottom [ft]")
    ax.legend()
    rep.figure(fig, "Stage over time")

    rep.heading("Check in EPA SWMM")
    if n["swmm_peak_outflow_cfs"] is None:
        rep.paragraph("SWMM check not run.")
    else:
        rep.table(["quantity", "capacitysim", "SWMM 5.2", "difference"], [
            ["peak outflow [cfs]", n["peak_outflow_cfs"], n["swmm_peak_outflow_cfs"], f"{n['swmm_peak_outflow_difference']:.3%}"],
            ["max depth [ft]", n["max_depth_ft"], n["swmm_max_depth_ft"], f"{n['swmm_max_depth_difference']:.3%}"],
        ], classes=["pass" if n["swmm_agreement"] else "fail"] * 2)
        rep.citation(f"Storage node with the same depth-area table, circular side orifice, free outfall, inflow as "
                     f"[INFLOWS]/[TIMESERIES]; dynamic wave, 1 s routing step. Agreement required within {SWMM_TOLERANCE:.0%}.")

    rep.heading("Rule-set values and their sources")
    rows, classes = [], []
    for e in result.rules.entries():
        rows.append([e["name"], ", ".join(f"{k}={v}" for k, v in e["values"].items()), e["source"],
                     "yes" if e["verified"] else "NO", ("overridden; " if e["overridden"] else "") + e["note"]])
        classes.append("" if e["verified"] else "untrusted")
    rep.table(["parameter", "value", "source", "verified", "note"], rows, classes)
    rep.paragraph("Values marked NO were not checked against the primary text (derived, assumed or recalled); the volume "
                  "depends directly on idf_10yr. PC § 1114.3.1.1 Eq. 11-6 could not be read in full and is not used.", "untrusted")

    rep.heading("Maintenance obligations (15 RCNY § 31-04(a)(8))")
    rep.raw("<ul>" + "".join(f"<li>{__import__('html').escape(m)}</li>" for m in MAINTENANCE_OBLIGATIONS) + "</ul>")
    if site.recycling:
        rep.paragraph("Recycling systems cannot be modified or disconnected without DEP's express written approval; this binds "
                      "current and future owners (15 RCNY § 31-03(a)(4)).")
    return rep.write(path)
