"""Detention design for a NYC Site Connection Proposal (15 RCNY § 31-03): release rate, required
volume, orifice sizing by routing, volume credits.

One engine, :func:`design_batch`, designs n variants of a site at once; :func:`design_site` is that
engine with n = 1 plus each step written out with its citation, the drain-down routing and the SWMM
cross-check (:mod:`capacitysim.workflows.detention_check`); a detention sweep calls the same engine.

Steps (each reported with its citation):

1. Allowable Flow Q = C_dp i A of the whole site (drainage-plan C, rule-set intensity).
2. Stormwater Release Rate, § 31-03(a)(1); prorated for alterations, § 31-03(a)(2).
3. Credits: infiltration of an open-bottom system only with soil borings at the system and an
   in-situ permeability test (§ 31-03(a)(3), PC Eq. 11-3 outflow); recycling only when independent
   and the routed total discharge never exceeds the release rate (§ 31-03(a)(4)).
4. Required volume by the modified rational method with the rule set's 10-year curve.
5. Design hydrographs (modified rational family over durations, or the SCS hydrograph of the
   hydrology core) routed through the system's stage-storage-discharge table (Modified Puls).
6. :func:`~capacitysim.hydraulics.sizing.size_orifice_rows`: the largest orifice whose routed peak
   release <= the release rate, and the smallest that does not overtop, over all designs at once.
7. SWMM check of the chosen design (storage node + orifice + outfall + [INFLOWS]/[TIMESERIES]).

The result carries the conditions the inputs cannot show and the owner's § 31-04(a)(8) obligations
(records ``{"text", "citation"}``; the triennial inspection and certification a dated record with its
due dates when the approval date is known, :func:`triennial_condition`), the submittal identification,
the SHA-256 of every file read, and the verdict qualified by the unverified rule-set values the design
used (:attr:`DetentionResult.verdict_qualified`).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from capacitysim import hydraulics
from capacitysim.checks import MAX_BATCH_VALUES, MAX_TIME_STEPS, check_steps
from capacitysim.errors import RefusedError
from capacitysim.hydraulics.sizing import ORIFICE_TOLERANCE_IN, outflow_table, route_max_rows, size_orifice_rows
from capacitysim.hydraulics.storage import StageStorage, system_table
from capacitysim.hydraulics.weir import FRANCIS_COEFFICIENT
from capacitysim.hydrology.rational import rational_hydrograph_shapes
from capacitysim.io.site_files import RuleSet, Site
from capacitysim.io.submittal import Submittal, approval_date
from capacitysim.rules import nyc_stormwater as nyc
from capacitysim.rules.verdict import Check
from capacitysim.workflows.detention_check import SWMM_TOLERANCE, swmm_check
from capacitysim.units import ACRES_PER_SQMI, GPD_PER_CFS, MINUTES_PER_HOUR, SECONDS_PER_MINUTE, SQFT_PER_ACRE

#: Points of the stage tables of a design.
FINAL_POINTS = 161
#: Time added after the last hydrograph ends when routing for the report (drain-down) [h].
REPORT_TAIL_HR = 12.0


# ----------------------------------------------------------------------------------------------
# the rules a site must meet before any sizing (refusals) and what only a reviewer can confirm
# ----------------------------------------------------------------------------------------------
def site_refusals(site: Site) -> None:
    """Refuse a site the rule does not cover or whose credits it does not allow.

    Called by :func:`design_batch`, so ``capacitysim detention`` and a detention sweep refuse alike.

    Raises
    ------
    RefusedError
        A receiving sewer other than a combined one (§ 31-03 sets the release rate for combined
        sewers); an alteration of a kind § 31-03(a) does not cover (it applies to alterations "for any
        horizontal building enlargement or any proposed increase in impervious surfaces"); new points
        of discharge of an alteration (§ 31-03(a)(2)); a phased or subdivided development without a
        master plan (named policy :data:`~capacitysim.rules.nyc_stormwater.MASTER_PLAN_POLICY`: the
        rule text read has no such section, the 2012 Statement of Basis and Purpose says it); an
        infiltration credit without an in-situ permeability test or without soil borings at the system
        (§ 31-03(a)(3)); a recycling credit of a system that is not independent (§ 31-03(a)(4)).

    References
    ----------
    15 RCNY § 31-03(a), (a)(2)-(4); DEP final rule of January 4, 2012, Statement of Basis and Purpose.
    """
    if site.receiving_sewer is not None and site.receiving_sewer != "combined":
        raise RefusedError(
            f"15 RCNY § 31-03 sets the Stormwater Release Rate for connections to combined sewers; the site file gives "
            f"receiving_sewer = {site.receiving_sewer!r} (this command implements the combined-sewer standard only)"
        )
    if site.kind == "alteration" and site.alteration_type is not None and site.alteration_type not in nyc.ALTERATION_TYPES:
        raise RefusedError(
            f"15 RCNY § 31-03(a) applies to alterations 'for any horizontal building enlargement or any proposed increase in "
            f"impervious surfaces'; the site file gives alteration_type = {site.alteration_type!r} "
            f"(allowed: {', '.join(nyc.ALTERATION_TYPES)})"
        )
    if site.kind == "alteration" and site.new_points_of_discharge:
        raise RefusedError(
            f"15 RCNY § 31-03(a)(2): no new points of discharge are permitted for alterations; the site file proposes "
            f"new_points_of_discharge = {site.new_points_of_discharge}"
        )
    if (site.phased or site.subdivision) and not site.master_plan:
        what = " and ".join(w for w, on in (("phased = true", site.phased), ("subdivision = true", site.subdivision)) if on)
        raise RefusedError(
            f"a development with multiple construction phases or subdivision of lots is reviewed only as a master/phased plan "
            f"site connection proposal; the site file gives {what} without master_plan = \"<plan reference>\" "
            f"({nyc.MASTER_PLAN_CITATION})"
        )
    inf = site.infiltration
    if inf is not None:
        if inf.permeability_test != "in-situ":
            raise RefusedError(
                f"infiltration credit refused: 15 RCNY § 31-03(a)(3) requires a permeability test performed in situ "
                f"(the final rule deleted laboratory tests); the site file gives {inf.permeability_test!r}"
            )
        if not inf.borings_at_system_location:
            raise RefusedError("infiltration credit refused: 15 RCNY § 31-03(a)(3) requires soil borings taken at the location of the proposed system")
    if site.recycling is not None and not site.recycling.independent:
        raise RefusedError("recycling credit refused: 15 RCNY § 31-03(a)(4) requires the recycling system to be independent")


# ----------------------------------------------------------------------------------------------
# the one detention design engine: n designs (variants of one site) at once
# ----------------------------------------------------------------------------------------------
#: The checks of a design that can fail, in the order a failure is reported: key -> (criterion, element).
DESIGN_CHECKS = {
    "release": ("peak release within the Stormwater Release Rate (15 RCNY § 31-03(a))", "orifice"),
    "overtop": ("no overtopping of the detention system", "storage system"),
    "both": ("an orifice both within the release rate and without overtopping", "orifice"),
    "volume": ("storage provided holds the required volume (15 RCNY § 31-03)", "storage system"),
    "duration": ("critical storm duration bracketed by the routed durations", "design storms"),
}
#: Per-design values of :class:`DetentionBatch` (arrays of shape (n,)), with their units in the names.
DESIGN_VALUES = (
    "site_area_sf", "altered_area_sf", "drainage_plan_c", "allowable_flow_cfs", "site_release_rate_cfs", "release_rate_cfs",
    "tributary_area_sf", "weighted_c", "developed_peak_cfs", "infiltration_credit_cfs", "recycling_credit_cfs",
    "required_volume_no_credit_cf", "required_volume_cf", "critical_duration_min", "critical_duration_no_credit_min",
    "eq_11_5_duration_min",
    "storage_provided_cf", "system_height_ft", "orifice_invert_ft", "discharge_coefficient", "tc_min",
    "orifice_diameter_in", "release_limit_in", "spill_limit_in", "peak_inflow_cfs", "peak_outflow_cfs",
    "max_depth_ft", "max_storage_cf",
)
#: System dimensions a variant may change (the keys of the site file's [system] tables).
SYSTEM_VARIANT_KEYS = ("length_ft", "width_ft", "height_ft", "porosity", "roof_area_sf", "max_depth_in", "bottom_length_ft",
                       "bottom_width_ft", "side_slope_h_per_v", "depth_ft")
#: Relative slack of the release-rate and overtopping comparisons (round-off of the routing).
RATE_SLACK = 1e-6
STAGE_SLACK = 1e-9


@dataclass
class DetentionBatch:
    """The design of n variants of one site (the one engine behind ``detention`` and detention sweeps).

    ``values[name]`` holds the arrays of :data:`DESIGN_VALUES`; ``failed_check`` the key of
    :data:`DESIGN_CHECKS` of each design's first failed check ("" when it passes or is not valid);
    ``problems`` the reviewer-readable failures of each design, first one first. The routing inputs
    (tables, hydrograph shapes and rows, losses) are kept so one design can be routed again in full.
    """

    n: int
    values: dict
    valid: np.ndarray
    feasible: np.ndarray
    passed: np.ndarray
    failed_check: np.ndarray
    problems: list
    table: StageStorage
    shapes: np.ndarray
    shape_labels: list
    row_design: np.ndarray
    row_shape: np.ndarray
    row_scale: np.ndarray
    critical_shape: np.ndarray
    losses_cfs: np.ndarray
    weir_length_ft: np.ndarray | None
    weir_coefficient: float
    dt_min: float
    hydrograph: str
    given_orifice: bool

    def message(self, i: int) -> str:
        """The first problem of design ``i`` ("" when it passes)."""
        return self.problems[i][0] if self.problems[i] else ""

    def critical_inflow_cfs(self, i: int) -> np.ndarray:
        """The design hydrograph of design ``i`` that gives its highest stage [cfs] (at ``dt_min``)."""
        rows = np.flatnonzero(self.row_design == i)
        row = rows[np.flatnonzero(self.row_shape[rows] == self.critical_shape[i])[0]]
        return self.shapes[self.critical_shape[i]] * self.row_scale[row]


def _rational_rows(durs, tc_min, t_crit, a_idf, b_idf, dt_min, scale):
    """Modified rational hydrograph rows of n designs: the rule set's durations (one set of shapes
    per distinct Tc) plus each design's own critical duration (HEC-22 ch. 8)."""
    n = tc_min.size
    crit = np.round(t_crit, 3)
    t_end = max(float(np.maximum(np.maximum(durs.max(), crit.max()), tc_min.max()) + tc_min.max()), 0.0)
    with np.errstate(over="ignore"):
        n_steps = t_end / dt_min + 2.0  # may overflow to inf: refused
    n_t = check_steps(n_steps, "the design hydrographs",
                      f"tc_min up to {tc_min.max():g} min, longest storm duration {max(durs.max(), crit.max()):g} min, dt_min = {dt_min:g} min")
    check_steps((durs.size * np.unique(tc_min).size + n) * n_t, "the design hydrographs",
                f"{durs.size} durations x {np.unique(tc_min).size} Tc + {n} critical durations, x {n_t:,} steps",
                limit=MAX_BATCH_VALUES, unit="values", hint="fewer durations or variants per block, or a longer time step")
    t = np.arange(0.0, t_end + dt_min, dt_min)
    shapes, labels, td_of = [], [], []
    rows_design, rows_shape = [], []
    for tc in np.unique(tc_min):
        base = len(shapes)
        _, sh, td = rational_hydrograph_shapes(durs, float(tc), a_idf, b_idf, dt_min)
        for row, d in zip(sh, td):
            full = np.zeros(t.size)
            full[: row.size] = row
            shapes.append(full)
            labels.append(f"rational t_d = {d:g} min")
            td_of.append(float(d))
        for i in np.flatnonzero(tc_min == tc):
            rows_design += [i] * len(durs)
            rows_shape += list(range(base, base + len(durs)))
    for i in range(n):
        if t_crit[i] > 0:
            td = max(float(crit[i]), float(tc_min[i]))
            p = a_idf / (td + b_idf)
            shapes.append(np.interp(t, [0.0, tc_min[i], td, td + tc_min[i]], [0.0, p, p, 0.0], right=0.0))
            labels.append(f"rational t_d = {td:g} min")
            td_of.append(td)
            rows_design.append(i)
            rows_shape.append(len(shapes) - 1)
    rows_design, rows_shape = np.asarray(rows_design), np.asarray(rows_shape)
    return np.stack(shapes), labels, np.asarray(td_of), rows_design, rows_shape, scale[rows_design]


def _scs_rows(trib_ac, cn, tc_min, depth_in, distribution, dt_min):
    """One SCS unit-hydrograph row per design (NEH 630 ch. 16 through the hydrology core)."""
    from capacitysim import hydrology

    n = trib_ac.size
    flows = [None] * n
    keys = np.stack([depth_in, tc_min])
    for key in np.unique(keys, axis=1).T:
        rows = np.flatnonzero((depth_in == key[0]) & (tc_min == key[1]))
        rain = hydrology.design_storm(float(key[0]), str(distribution), dt_min)
        hyd = hydrology.unit_hydrograph_runoff(trib_ac[rows] / ACRES_PER_SQMI, cn[rows], tc_min[rows] / MINUTES_PER_HOUR, rain)
        v = np.atleast_2d(hyd.values)
        for j, r in enumerate(rows):
            flows[r] = np.concatenate([[0.0], v[j]])
    shapes = np.zeros((n, max(len(f) for f in flows)))
    for r, f in enumerate(flows):
        shapes[r, : len(f)] = f
    labels = [f"SCS {d:g} in Type {distribution} 24-h" for d in depth_in]
    return shapes, labels, np.arange(n), np.arange(n), np.ones(n)


def design_batch(site: Site, rules: RuleSet, variants: dict | None = None, n: int | None = None) -> DetentionBatch:
    """Design n variants of a NYC site at once: release rate, credits, required volume, design
    hydrographs, stage-storage tables and the routed orifice (sized, or a given one).

    The one detention design engine: ``capacitysim detention`` is this function with n = 1 (plus the
    narrative steps, the drain-down routing and the SWMM check of :func:`design_site`) and a detention
    sweep calls it once per block, so both give the same numbers, refusals and verdicts.

    Parameters
    ----------
    site : Site
        The site file (its surfaces, system, credits and design choices).
    rules : RuleSet
        The rule set (intensity, IDF curve, runoff coefficients, routing step...).
    variants : dict of str to array_like (n,), optional
        Per-design values replacing the site's: ``site_area_sf`` and ``altered_area_sf`` [ft2] (the
        tributary surfaces are scaled with them), ``drainage_plan_c``, ``weighted_c`` [-], the system
        dimensions of :data:`SYSTEM_VARIANT_KEYS`, ``orifice_invert_ft`` [ft], ``discharge_coefficient``
        [-], ``tc_min`` [min], ``cn`` [-] and ``storm_depth_in`` [in] (SCS hydrographs), and
        ``orifice_diameter_in`` [in] to route a given orifice instead of sizing one.
    n : int, optional
        Number of designs (default: the length of the variants, else 1).

    Returns
    -------
    DetentionBatch

    Raises
    ------
    RefusedError
        The site is refused by :func:`site_refusals` (the same refusal for every variant).

    References
    ----------
    15 RCNY § 31-03(a)(1)-(4) (release rate, proration, infiltration and recycling credits);
    NYC Plumbing Code § 1114.3.1 Eq. 11-1 to 11-5; modified rational method, HEC-22 (2009) ch. 8;
    Modified Puls routing, Chow, Maidment & Mays (1988) § 8.2.
    """
    site_refusals(site)
    variants = dict(variants or {})
    if n is None:
        n = len(next(iter(variants.values()))) if variants else 1

    def get(key, default):
        return np.broadcast_to(np.asarray(variants[key] if key in variants else default, float), (n,)).copy()

    k_rat = float(rules.value("rational_cfs_per_acre_in_hr"))
    i_design = float(rules.value("design_intensity_in_hr"))
    a_idf, b_idf = float(rules.value("idf_10yr", "a")), float(rules.value("idf_10yr", "b_min"))
    weir_c = float(rules.value("weir_coefficient")) if "weir_coefficient" in rules.data else FRANCIS_COEFFICIENT
    cd = get("discharge_coefficient", site.system.get("discharge_coefficient", rules.value("orifice_discharge_coefficient")))

    # 1-2: Allowable Flow and release rate (prorated for alterations)
    site_area = get("site_area_sf", site.site_area_sf)
    c_dp = get("drainage_plan_c", site.drainage_plan_c)
    q_allow = np.asarray(nyc.allowable_flow_cfs(site_area / SQFT_PER_ACRE, c_dp, i_design, k_rat), float) * np.ones(n)
    rr_site = np.asarray(nyc.release_rate_cfs(q_allow), float) * np.ones(n)
    valid = np.ones(n, bool)
    problems: list[list[str]] = [[] for _ in range(n)]
    if site.kind == "alteration":
        altered = get("altered_area_sf", site.altered_area_sf)
        bad = altered > site_area
        valid &= ~bad
        for i in np.flatnonzero(bad):
            problems[i].append(f"altered_area_sf {altered[i]:,.0f} exceeds site_area_sf {site_area[i]:,.0f}")
        rr = np.asarray(nyc.alteration_release_rate_cfs(q_allow, np.minimum(altered, site_area), site_area), float) * np.ones(n)
        ratio = altered / site.altered_area_sf if "altered_area_sf" in variants else 1.0
    else:
        altered = np.full(n, np.nan)
        rr = rr_site
        ratio = site_area / site.site_area_sf if "site_area_sf" in variants else 1.0
    trib_sf = site.tributary_area_sf * np.ones(n) * ratio
    trib_ac = trib_sf / SQFT_PER_ACRE
    names = list(site.surfaces_sf)
    c_table = rules.runoff_coefficients()
    cw0 = float(nyc.weighted_runoff_coefficient([site.surfaces_sf[m] for m in names], [c_table[m] for m in names]))
    cw = get("weighted_c", cw0)
    q_dev = np.asarray(nyc.rational_flow_cfs(cw, i_design, trib_ac, k_rat), float) * np.ones(n)

    system = dict(site.system)
    for key in SYSTEM_VARIANT_KEYS:
        if key in system or key in variants:
            system[key] = get(key, system.get(key))
    table = system_table(system, FINAL_POINTS)
    capacity = table.capacity_cf * np.ones(n)

    # 3: credits (the evidence was checked by site_refusals)
    q_inf = np.zeros(n)
    if site.infiltration is not None:
        q_inf = np.asarray(nyc.infiltration_outflow_cfs(table.footprint_sf, site.infiltration.infiltration_rate_in_hr), float) * np.ones(n)
    q_rec = np.full(n, 0.0 if site.recycling is None else site.recycling.demand_gpd / GPD_PER_CFS)

    # 4: required volume (modified rational, the rule set's 10-year curve)
    v_req0, t_crit0 = nyc.modified_rational_volume_cf(cw, trib_ac, rr, a_idf, b_idf, k_rat)
    v_req, t_crit = nyc.modified_rational_volume_cf(cw, trib_ac, rr + q_inf + q_rec, a_idf, b_idf, k_rat)
    v_req0, t_crit0 = np.asarray(v_req0, float) * np.ones(n), np.asarray(t_crit0, float) * np.ones(n)
    v_req, t_crit = np.asarray(v_req, float) * np.ones(n), np.asarray(t_crit, float) * np.ones(n)
    t_eq115 = np.asarray(nyc.eq_11_5_duration_min(cw, trib_sf, rr), float) * np.ones(n)

    # 5: design hydrographs
    dt_min = float(site.design.get("dt_min", rules.value("routing", "dt_min")))
    dt_s = dt_min * SECONDS_PER_MINUTE
    tc_min = get("tc_min", site.design.get("tc_min", rules.value("rational_hydrograph", "tc_min")))
    hydrograph = site.design.get("hydrograph", "rational")
    if hydrograph == "scs":
        depth = get("storm_depth_in", float(rules.value("design_storm_10yr_24h", "depth_in")))
        distribution = str(rules.value("design_storm_10yr_24h", "distribution"))
        shapes, labels, row_design, row_shape, row_scale = _scs_rows(trib_ac, get("cn", site.design.get("cn")), tc_min, depth,
                                                                     distribution, dt_min)
        shape_td = np.full(len(labels), np.nan)
    else:
        durs = np.asarray(rules.value("rational_hydrograph", "durations_min"), float)
        shapes, labels, shape_td, row_design, row_shape, row_scale = _rational_rows(
            durs, tc_min, t_crit, a_idf, b_idf, dt_min, k_rat * cw * trib_ac)
    order = np.argsort(row_design, kind="stable")
    row_design, row_shape, row_scale = row_design[order], row_shape[order], np.asarray(row_scale, float)[order]
    # the report routes the critical hydrograph with a drain-down tail: bound the whole series before sizing
    tail_steps = REPORT_TAIL_HR * MINUTES_PER_HOUR / dt_min
    check_steps(shapes.shape[1] + tail_steps, "the routed hydrograph with its drain-down tail",
                f"{shapes.shape[1]:,} hydrograph steps + {REPORT_TAIL_HR:g} h at dt_min = {dt_min:g} min; "
                f"tc_min up to {tc_min.max():g} min", limit=MAX_TIME_STEPS, hint="a longer dt_min or a shorter tc_min")

    # 6: the orifice, sized (or given) by routing every design hydrograph
    inv = get("orifice_invert_ft", site.system["orifice_invert_ft"])
    weir = site.system.get("overflow_weir_length_ft")
    weir = None if weir is None else np.full(n, float(weir))
    losses = np.stack([q_inf, q_rec], axis=1)
    failed = np.full(n, "", "<U8")
    given = "orifice_diameter_in" in variants
    if given:
        diam = get("orifice_diameter_in", 0.0)
        q, s, v, crit = route_max_rows(table, diam, inv, cd, losses, weir, shapes, dt_s, row_design, row_shape, row_scale, weir_c)
        over_rate = q > rr * (1 + RATE_SLACK)
        feasible = ~over_rate & (s <= table.top_ft * (1 + STAGE_SLACK))
        rel_lim = np.full(n, np.nan)
        spl_lim = np.full(n, np.nan)
        for i in np.flatnonzero(~feasible):
            failed[i] = "release" if over_rate[i] else "overtop"
            problems[i].append(f"release {q[i]:.4g} cfs > rate {rr[i]:.4g} cfs" if over_rate[i]
                               else f"overtops: max depth {s[i]:.2f} ft > {table.top_ft[i]:.2f} ft")
    else:
        sz = size_orifice_rows(table, rr, shapes, dt_s, row_design, row_shape, row_scale, inv, cd, losses, weir,
                               weir_coefficient=weir_c)
        feasible, diam = sz.feasible, sz.diameter_in
        rel_lim, spl_lim = sz.release_limit_in, sz.spill_limit_in
        q, s, v, crit = sz.peak_outflow_cfs, sz.max_depth_ft, sz.max_storage_cf, sz.critical_row
        for i in np.flatnonzero(~feasible):
            # the order of size_orifice_rows' reasons: overtops with any orifice, none within the rate, not both
            failed[i] = "overtop" if np.isinf(spl_lim[i]) else ("release" if rel_lim[i] <= 0 else "both")
            problems[i].append("infeasible: " + sz.reasons[i])
            if site.recycling is not None:
                problems[i].append("recycling credit refused (15 RCNY § 31-03(a)(4)): with it the total discharge cannot be "
                                   "kept within the release rate without overtopping")
    short = capacity < v_req * (1 - STAGE_SLACK)
    for i in np.flatnonzero(short):
        failed[i] = failed[i] or "volume"
        problems[i].append(f"storage provided {capacity[i]:,.0f} ft3 is less than the required volume {v_req[i]:,.0f} ft3")
    longest = np.zeros(n, bool)
    if hydrograph != "scs":
        td_max = np.zeros(n)
        np.maximum.at(td_max, row_design, shape_td[row_shape])
        longest = shape_td[crit] >= td_max
        for i in np.flatnonzero(longest):
            failed[i] = failed[i] or "duration"
            problems[i].append(f"the highest stage comes from the longest design storm routed ({labels[crit[i]]}): add longer "
                               "durations to rational_hydrograph.durations_min; a longer storm may overtop")
    failed[~valid] = ""
    passed = valid & feasible & ~short & ~longest
    peak_in = np.array([float((shapes[crit[i]] * row_scale[np.flatnonzero((row_design == i) & (row_shape == crit[i]))[0]]).max())
                        for i in range(n)]) if n else np.zeros(0)
    values = {
        "site_area_sf": site_area, "altered_area_sf": altered, "drainage_plan_c": c_dp, "allowable_flow_cfs": q_allow,
        "site_release_rate_cfs": rr_site, "release_rate_cfs": rr, "tributary_area_sf": trib_sf, "weighted_c": cw,
        "developed_peak_cfs": q_dev, "infiltration_credit_cfs": q_inf, "recycling_credit_cfs": q_rec,
        "required_volume_no_credit_cf": v_req0, "required_volume_cf": v_req, "critical_duration_min": t_crit,
        "critical_duration_no_credit_min": t_crit0,
        "eq_11_5_duration_min": t_eq115, "storage_provided_cf": capacity, "system_height_ft": table.top_ft * np.ones(n),
        "orifice_invert_ft": inv, "discharge_coefficient": cd, "tc_min": tc_min,
        "orifice_diameter_in": np.asarray(diam, float), "release_limit_in": np.asarray(rel_lim, float),
        "spill_limit_in": np.asarray(spl_lim, float), "peak_inflow_cfs": peak_in, "peak_outflow_cfs": np.asarray(q, float),
        "max_depth_ft": np.asarray(s, float), "max_storage_cf": np.asarray(v, float),
    }
    return DetentionBatch(n, values, valid, np.asarray(feasible, bool), passed, failed, problems, table, shapes, labels,
                          row_design, row_shape, row_scale, np.asarray(crit, int), losses, weir, weir_c, dt_min, hydrograph, given)


# ----------------------------------------------------------------------------------------------
# one site: the batch with n = 1, the narrative steps, the drain-down routing and the SWMM check
# ----------------------------------------------------------------------------------------------
@dataclass
class DetentionResult:
    """The detention design of one site: the result document of ``capacitysim detention``."""

    site: Site
    rules: RuleSet
    numbers: dict
    steps: list[dict] = field(default_factory=list)
    series: dict = field(default_factory=dict)
    status: str = "pass"
    problems: list[str] = field(default_factory=list)
    swmm_inp_text: str = ""
    #: Compliance checks (:class:`~capacitysim.rules.verdict.Check`), one per requirement.
    checks: list[Check] = field(default_factory=list)
    #: Conditions the reviewer must confirm or the applicant must meet (not computable from the inputs),
    #: then the owner's obligations of 15 RCNY § 31-04(a)(8): records ``{"text": ..., "citation": ...}``,
    #: the triennial certification with the fields of :func:`triennial_condition`.
    conditions: list[dict] = field(default_factory=list)
    #: The submittal identification (default: the site file's [submittal]; the CLI options override it).
    submittal: Submittal | None = None
    #: The rule-set tables the design read (:func:`rule_values_used`).
    rule_values: list[str] = field(default_factory=list)
    #: Date DEP approved the system (the site file's [submittal] approved_on, or --approved-on); None for
    #: a design before approval.
    approved_on: datetime.date | None = None

    def __post_init__(self):
        if self.submittal is None:
            self.submittal = self.site.submittal

    @property
    def verdict(self) -> str:
        """``pass`` or ``fail`` (the same word as :attr:`status`)."""
        return self.status

    @property
    def unverified_values_used(self) -> list[str]:
        """The rule-set tables the design read whose ``verified`` flag is not true (rule-set order)."""
        used = set(self.rule_values)
        return [name for name in self.rules.unverified() if name in used]

    @property
    def verdict_qualified(self) -> str:
        """The verdict as it may be stated: ``"pass"`` only when every rule-set value the design used is
        verified, else ``"pass under unverified values: idf_10yr, ..."`` (``fail`` likewise).

        15 RCNY § 31-03 fixes only 0.25 cfs, 10 % and the proration; the intensity, the 10-year curve and
        the coefficients come from the rule set, and a value its ``verified`` flag does not vouch for
        qualifies the verdict. A user rule set marking a table ``verified = true`` removes it.
        """
        unver = self.unverified_values_used
        return f"{self.status} under unverified values: {', '.join(unver)}" if unver else self.status

    def to_dict(self) -> dict:
        """The ``--json`` document: site, rule set, verdict (and qualified verdict), submittal, files read
        (names and SHA-256), every number, the checks, the approval date (``approved_on``, YYYY-MM-DD or
        None) and the conditions (with citations; dates as YYYY-MM-DD)."""
        out = {"kind": "detention-design", "site": self.site.name, "site_file": self.site.path, "site_sha256": self.site.sha256,
               "rule_set": self.rules.name, "rule_set_files": self.rules.files(), "status": self.status,
               "verdict": self.status, "verdict_qualified": self.verdict_qualified, "problems": self.problems,
               "submittal": self.submittal.to_dict()}
        out.update(self.numbers)
        out["checks"] = [c.to_dict() for c in self.checks]
        out["approved_on"] = None if self.approved_on is None else self.approved_on.isoformat()
        out["conditions"] = [dict(c) for c in self.conditions]
        out["unverified_rule_values"] = self.rules.unverified()
        out["unverified_values_used"] = self.unverified_values_used
        out.update(self.report_keys())  # what the report reads besides (issue 27, item 3): after the keys above
        # the envelope (issue 27, item 3): verdict and checks are above; the policies its texts name
        from capacitysim.rules.document import envelope
        from capacitysim.rules.nyc_stormwater import policies_named

        inputs = [{"role": "site", "file": self.site.path, "sha256": self.site.sha256},
                  *({"role": "rule set", "file": f.get("file"), "sha256": f.get("sha256")} for f in out["rule_set_files"])]
        return envelope(out, "detention-design", inputs=inputs, policies=policies_named(out))

    def report_keys(self) -> dict:
        """The keys the HTML report reads that the numbers above do not hold (issue 27, item 3: the report
        renders from the document alone), each a dict or a list (``design.csv`` of an export lists only the
        document's numbers and words):

        ``site_details``
            What the report's inputs table shows of the site file: development kind, alteration type, phased and
            subdivided, master plan, receiving sewer, new points of discharge, the system's bottom, the surfaces'
            areas [ft2] with the rule set's runoff coefficient C [-], infiltration and recycling (None if none).
        ``steps``
            The calculation, step by step: ``{"step", "formula", "value", "unit", "citation"}``.
        ``rule_set_entries``
            Every table of the rule set: name, values, unit, source, verified, note, overridden.
        ``hydrographs``
            The critical design hydrograph routed, every ``time_step_min`` from 0: ``inflow_cfs``, ``sewer_cfs``
            (release to the sewer), ``losses_cfs`` (infiltration + recycling), ``stage_ft`` (above the bottom),
            to :data:`~capacitysim.workflows.document.SERIES_DIGITS` significant digits, and ``top_ft`` (the
            system's height); None when the design has no series.
        """
        from capacitysim.workflows.document import series_values

        site, s = self.site, self.series
        coefficients = self.rules.runoff_coefficients()
        details = {
            "development_kind": site.kind, "alteration_type": site.alteration_type, "phased": bool(site.phased),
            "subdivision": bool(site.subdivision), "master_plan": site.master_plan, "receiving_sewer": site.receiving_sewer,
            "new_points_of_discharge": site.new_points_of_discharge, "system_bottom": site.system.get("bottom"),
            "surfaces": [{"surface": k, "area_sf": v, "runoff_coefficient": coefficients[k]} for k, v in site.surfaces_sf.items()],
            "infiltration": None if not site.infiltration else {
                "soil_borings": list(site.infiltration.soil_borings),
                "borings_at_system_location": bool(site.infiltration.borings_at_system_location),
                "permeability_test": site.infiltration.permeability_test,
                "infiltration_rate_in_hr": site.infiltration.infiltration_rate_in_hr, "report": site.infiltration.report},
            "recycling": None if not site.recycling else {
                "demand_gpd": site.recycling.demand_gpd, "independent": bool(site.recycling.independent),
                "use": site.recycling.use},
        }
        hydrographs = None
        if s:
            t = np.asarray(s["time_min"], float)
            hydrographs = {"time_step_min": float(t[1] - t[0]) if t.size > 1 else float(self.numbers.get("routing_dt_min", 1.0)),
                           **{k: series_values(s[k]) for k in ("inflow_cfs", "sewer_cfs", "losses_cfs", "stage_ft")},
                           "top_ft": float(s["top_ft"])}
        return {"site_details": details, "steps": [dict(st) for st in self.steps], "rule_set_entries": self.rules.entries(),
                "hydrographs": hydrographs}


def _step(steps, title, formula, value, unit, cite):
    steps.append({"step": title, "formula": formula, "value": value, "unit": unit, "citation": cite})


def _condition(text: str, citation: str) -> dict:
    """One condition record of the result (``conditions`` of the JSON)."""
    return {"text": text, "citation": citation}


#: The ``kind`` of the dated condition record of :func:`triennial_condition`.
TRIENNIAL_KIND = "triennial certification"


def triennial_condition(approved_on: datetime.date | None, source: str | None = None) -> dict:
    """The owner's triennial inspection and certification as a dated condition record.

    15 RCNY § 31-04(a)(8), third and fourth sentences: "Three years after the date of approval of a
    retention or detention system and every three years thereafter the operation of the system shall
    be inspected by a licensed professional engineer, a registered architect or a licensed master
    plumber. Such architect, engineer or master plumber shall submit certification to DEP that the
    system is free of debris and sediments, that its orifice is unobstructed and flowing and that the
    system is otherwise operating in compliance with this rule."

    Parameters
    ----------
    approved_on : datetime.date or None
        Date DEP approved the system [date]; None for a design before approval.
    source : str, optional
        Where the date comes from (``the site file's [submittal] approved_on``, ``--approved-on``).

    Returns
    -------
    dict
        ``text`` (with the due dates when known), ``citation``, ``kind`` (:data:`TRIENNIAL_KIND`),
        ``approved_on`` (YYYY-MM-DD or None), ``due_on`` (the first
        :data:`~capacitysim.rules.nyc_stormwater.TRIENNIAL_DUE_DATES_LISTED` due dates, YYYY-MM-DD, by
        :func:`~capacitysim.rules.nyc_stormwater.triennial_certifications`; None without an approval
        date), ``certifier`` (:data:`~capacitysim.rules.nyc_stormwater.TRIENNIAL_CERTIFIERS`) and
        ``due_on_basis`` (how the dates were counted, or why there are none; the named policy
        :data:`~capacitysim.rules.nyc_stormwater.LEAP_DAY_POLICY` when the approval is on February 29).

    References
    ----------
    15 RCNY § 31-04(a)(8).
    """
    base = nyc.MAINTENANCE_OBLIGATIONS[2]["text"]
    record = {"text": base, "citation": nyc.TRIENNIAL_CITATION, "kind": TRIENNIAL_KIND, "approved_on": None,
              "due_on": None, "certifier": list(nyc.TRIENNIAL_CERTIFIERS)}
    years = nyc.TRIENNIAL_INTERVAL_YEARS
    if approved_on is None:
        record["text"] = (f"{base} Due {years} years after the approval date and every {years} years thereafter "
                          "(no approval date given: the due dates are not known yet).")
        record["due_on_basis"] = (f"no approval date: the site file's [submittal] gives no approved_on and --approved-on "
                                  f"was not given (a design before approval); due {years} years after the approval date")
        return record
    due = [d.isoformat() for d in nyc.triennial_certifications(approved_on)]
    record["approved_on"] = approved_on.isoformat()
    record["due_on"] = due
    record["text"] = (f"{base} Approved {approved_on.isoformat()}: due {', '.join(due)}, and every {years} years "
                      "thereafter.")
    basis = (f"approval date {approved_on.isoformat()}" + (f" from {source}" if source else "") +
             f" plus {years} years, then every {years} years, each counted from the approval date; the first "
             f"{len(due)} listed")
    if (approved_on.month, approved_on.day) == (2, 29):
        basis += f"; {nyc.LEAP_DAY_CITATION}"
    record["due_on_basis"] = basis
    return record


def _conditions(site: Site) -> list[dict]:
    """What the inputs cannot show: the reviewer confirms it (15 RCNY § 31-03), as records
    ``{"text", "citation"}``; the credits' conditions and the § 31-04(a)(8) obligations follow
    (:func:`_design_checks`, :func:`design_site`)."""
    out = []
    if site.receiving_sewer is None:
        out.append(_condition("The site file does not name the receiving sewer: the Stormwater Release Rate applies to "
                              "connections to combined sewers (confirm on the sewer map of the borough office).",
                              "15 RCNY § 31-03 (stormwater performance standard for connections to combined sewer system)"))
    if site.kind == "alteration" and site.alteration_type is None:
        out.append(_condition("Not stated in the site file (alteration_type): the release rate applies to an alteration "
                              "that is a horizontal building enlargement or a proposed increase in impervious surfaces; "
                              "confirm the alteration is one of these.", nyc.ALTERATION_SCOPE_CITATION))
    if site.kind == "alteration" and site.new_points_of_discharge is None:
        out.append(_condition("Not stated in the site file: the alteration must discharge through the existing connection(s); "
                              "no new points of discharge are permitted.", "15 RCNY § 31-03(a)(2)"))
    if site.master_plan:
        what = " and ".join(w for w, on in (("multiple construction phases", site.phased), ("subdivided lots", site.subdivision)) if on)
        out.append(_condition(f"A development with {what}: this design is part of the master/phased plan site connection "
                              f"proposal {site.master_plan!r}, which DEP reviews and approves as a whole; confirm the plan's "
                              "approval and that this design is the one it shows.", nyc.MASTER_PLAN_CITATION))
    return out


def rule_values_used(site: Site, rules: RuleSet) -> list[str]:
    """The rule-set tables the design of ``site`` reads (what a verdict rests on), in the rule set's order.

    Always the design intensity, the rational units factor, the runoff coefficients and the 10-year
    curve; the orifice coefficient unless the site gives its own; the routing step unless the site
    gives ``dt_min``; the rational hydrographs (or only their Tc) or the SCS design storm; the weir
    coefficient when the site has an overflow weir.
    """
    used = {"design_intensity_in_hr", "rational_cfs_per_acre_in_hr", "runoff_coefficients", "idf_10yr"}
    if "discharge_coefficient" not in site.system:
        used.add("orifice_discharge_coefficient")
    if "dt_min" not in site.design:
        used.add("routing")
    if site.design.get("hydrograph", "rational") == "scs":
        used.add("design_storm_10yr_24h")
        if "tc_min" not in site.design:
            used.add("rational_hydrograph")
    else:
        used.add("rational_hydrograph")
    if site.system.get("overflow_weir_length_ft") is not None and "weir_coefficient" in rules.data:
        used.add("weir_coefficient")
    return [name for name, tab in rules.data.items() if isinstance(tab, dict) and name in used]


def design_site(site: Site, rules: RuleSet, *, swmm: bool = True, work_dir: str | Path | None = None,
                submittal: Submittal | None = None, approved_on: datetime.date | None = None) -> DetentionResult:
    """The whole detention design of one site: :func:`design_batch` with n = 1, each step written out
    with its citation, the critical hydrograph routed with its drain-down, the compliance checks and
    (``swmm``) the check of the design in EPA SWMM.

    Parameters
    ----------
    site : Site
    rules : RuleSet
    swmm : bool, default True
        Run the SWMM cross-check (:func:`capacitysim.workflows.detention_check.swmm_check`).
    work_dir : path, optional
        Folder kept for the SWMM run (default: a temporary folder).
    submittal : Submittal, optional
        The submittal identification (default: the site file's [submittal]).
    approved_on : datetime.date, optional
        Date DEP approved the system [date] (or its text YYYY-MM-DD), replacing the site file's
        [submittal] approved_on (the CLI's ``--approved-on``); checked by
        :func:`capacitysim.io.submittal.approval_date` (not after today).

    Returns
    -------
    DetentionResult
        ``status`` "pass" when every design check passes and SWMM agrees; ``conditions`` ends with the
        owner's obligations of 15 RCNY § 31-04(a)(8) (maintenance and records, deed restriction,
        triennial inspection and certification by a PE, RA or licensed master plumber, the last a
        dated record, :func:`triennial_condition`, with its due dates when the approval date is known).

    Raises
    ------
    RefusedError
        As :func:`site_refusals`.
    InputError
        ``approved_on`` not a date, or after today.

    References
    ----------
    15 RCNY § 31-03, § 31-04(a)(8); NYC Plumbing Code § 1114.3.1; HEC-22 (2009) ch. 8; Chow, Maidment & Mays
    (1988) § 8.2.
    """
    approved_on = approval_date(approved_on, "approved_on")  # before the design: a bad date is refused at once
    b = design_batch(site, rules)
    v = {k: float(a[0]) for k, a in b.values.items()}
    steps: list[dict] = []
    conditions = _conditions(site)
    k = float(rules.value("rational_cfs_per_acre_in_hr"))
    i_design = float(rules.value("design_intensity_in_hr"))
    a_idf, b_idf = float(rules.value("idf_10yr", "a")), float(rules.value("idf_10yr", "b_min"))
    c_table = rules.runoff_coefficients()
    cd, inv = v["discharge_coefficient"], v["orifice_invert_ft"]
    q_allow, rr_site, rr, cw = v["allowable_flow_cfs"], v["site_release_rate_cfs"], v["release_rate_cfs"], v["weighted_c"]
    q_inf, q_rec, v_req, t_crit = v["infiltration_credit_cfs"], v["recycling_credit_cfs"], v["required_volume_cf"], v["critical_duration_min"]
    capacity, top = v["storage_provided_cf"], v["system_height_ft"]

    # 1-2: Allowable Flow and release rate
    site_ac = site.site_area_sf / SQFT_PER_ACRE
    _step(steps, "Allowable Flow of the site", f"Q = C_dp i A = {site.drainage_plan_c:g} x {i_design:g} in/h x {site_ac:.4f} ac",
          q_allow, "cfs", "15 RCNY § 31-02 (Allowable Flow), § 31-03(a)(1); PC § 1114.3.1 Eq. 11-1 (rule set: design_intensity_in_hr)")
    if q_allow < nyc.MIN_RELEASE_RATE_CFS:
        rr_formula = f"Q = {q_allow:.4f} cfs < 0.25 cfs, so the Allowable Flow itself"
    else:
        rr_formula = f"greater of 0.25 cfs and 10 % x {q_allow:.4f} = {nyc.RELEASE_FRACTION_OF_ALLOWABLE * q_allow:.4f} cfs"
    _step(steps, "Stormwater Release Rate of the site", rr_formula, rr_site, "cfs", "15 RCNY § 31-03(a)(1)")
    if site.kind == "alteration":
        _step(steps, "Release rate of the altered area",
              f"{rr_site:.4g} cfs x {site.altered_area_sf:,.0f} / {site.site_area_sf:,.0f} ft2", rr, "cfs",
              "15 RCNY § 31-03(a)(2) (no new points of discharge permitted)")

    # tributary runoff
    names = list(site.surfaces_sf)
    trib_sf = v["tributary_area_sf"]
    trib_ac = trib_sf / SQFT_PER_ACRE
    _step(steps, "Weighted runoff coefficient of the tributary area",
          " + ".join(f"{site.surfaces_sf[n]:,.0f} x {c_table[n]:g}" for n in names) + f" over {trib_sf:,.0f} ft2",
          cw, "-", "PC § 1114.3.1 Eq. 11-2 and its C list (rule set: runoff_coefficients)")
    _step(steps, "Developed peak runoff of the tributary area", f"Q = Cw i A = {cw:.3f} x {i_design:g} x {trib_ac:.4f}",
          v["developed_peak_cfs"], "cfs", "PC § 1114.3.1 Eq. 11-1")

    # 3: credits
    if site.infiltration is not None:
        inf = site.infiltration
        _step(steps, "Infiltration outflow credited (open bottom)",
              f"Qinf = FA x i_soil / 43,200 = {float(b.table.footprint_sf[0]):,.0f} x {inf.infiltration_rate_in_hr:g} / 43,200 "
              f"(borings {', '.join(inf.soil_borings)}; in-situ test)", q_inf, "cfs",
              "15 RCNY § 31-03(a)(3); PC § 1114.3.1.1 Eq. 11-3")
    if site.recycling is not None:
        _step(steps, "Recycling withdrawal credited", f"{site.recycling.demand_gpd:,.0f} gpd / {GPD_PER_CFS:,.0f}", q_rec, "cfs",
              "15 RCNY § 31-03(a)(4): credited only if total discharge never exceeds the release rate (checked by routing below)")

    # 4: required volume (modified rational, 10-year curve)
    _step(steps, "Critical duration, PC Eq. 11-5 (release rate only, no credits)", f"tV = 0.27 (Cw A / Q_DRR)^0.5 - 15 = 0.27 ({cw:.3f} x {trib_sf:,.0f} / {rr:.4g})^0.5 - 15",
          v["eq_11_5_duration_min"], "min", "PC § 1114.3.1.1 Eq. 11-5 (10-year storm)")
    _step(steps, "Required volume without credits", f"V = 60 (sqrt(k Cw A a) - sqrt(b Q))^2, a = {a_idf:g}, b = {b_idf:g}, "
          f"t* = {v['critical_duration_no_credit_min']:.1f} min",
          v["required_volume_no_credit_cf"], "ft3", "Modified rational method, HEC-22 ch. 8, with the rule set's idf_10yr (UNVERIFIED, derived from Eq. 11-5); PC Eq. 11-6 not available")
    if q_inf or q_rec:
        _step(steps, "Required volume with credits", f"same with outflow {rr:.4g} + {q_inf:.4g} + {q_rec:.4g} cfs, t* = {t_crit:.1f} min",
              v_req, "ft3", "15 RCNY § 31-03(a)(3)-(4) volume reductions")
    _step(steps, "Storage provided by the system", f"{site.system['type']} stage-storage table to the top ({top:.3f} ft)",
          capacity, "ft3", "HEC-22 § 8.3 (average-end-area)")

    # 5-6: hydrographs and the orifice
    crit = int(b.critical_shape[0])
    labels = b.shape_labels
    n_routed = int(np.count_nonzero(b.row_design == 0))
    if b.hydrograph == "scs":
        hyd_cite = "NEH 630 ch. 16 unit hydrograph of the hydrology core; rule set design_storm_10yr_24h (UNVERIFIED)"
    else:
        hyd_cite = "Modified rational hydrographs, HEC-22 ch. 8; Tc and durations from the rule set (UNVERIFIED modelling choices)"
    feasible = bool(b.feasible[0])
    problems = list(b.problems[0])
    _step(steps, "Orifice: largest diameter with routed peak release <= release rate",
          f"search on the diameter, each trial routed through {n_routed} design hydrographs (bracket {ORIFICE_TOLERANCE_IN:g} in)",
          v["release_limit_in"], "in", "15 RCNY § 31-03(a)(1)-(2); Modified Puls routing, Chow et al. (1988) § 8.2; " + hyd_cite)
    spill = v["spill_limit_in"]
    _step(steps, "Orifice: smallest diameter that does not overtop",
          "max routed stage <= system top" + (" (0: the system holds every design hydrograph routed even with no orifice)"
                                              if spill == 0 else ""),
          spill if np.isfinite(spill) else "none (overtops with every orifice)", "in",
          "storage must hold the routed design storms; feasible when this <= the release limit")

    # full routing of the critical hydrograph, with its drain-down, for the report and the SWMM check
    d_in = v["orifice_diameter_in"] if feasible else v["release_limit_in"]
    dt_min, dt_s = b.dt_min, b.dt_min * SECONDS_PER_MINUTE
    tail = int(round(REPORT_TAIL_HR * MINUTES_PER_HOUR / dt_min))
    inflow = np.concatenate([b.critical_inflow_cfs(0), np.zeros(tail)])
    t_full = np.arange(inflow.size) * dt_min
    weir = None if b.weir_length_ft is None else b.weir_length_ft[:1]
    out_cols = outflow_table(b.table, d_in, inv, cd, b.losses_cfs[:1], weir, b.weir_coefficient)
    res = hydraulics.route(inflow, dt_s, b.table.depth_ft, b.table.storage_cf, out_cols)
    sewer = res.outflow_cfs[0, 0] + res.outflow_cfs[0, 1]
    wet = np.flatnonzero((res.storage_cf[0] > 1e-3 * max(capacity, 1.0)) | (inflow > 0))
    end = min(inflow.size, (wet[-1] + 2) if wet.size else inflow.size)
    peak_out = float(sewer.max())
    max_depth = float(res.stage_ft[0].max())
    if peak_out > rr * (1 + RATE_SLACK) and feasible:
        problems.append(f"routed release {peak_out:.4g} cfs exceeds the release rate {rr:.4g} cfs")

    numbers = {
        "development": site.kind,
        "site_area_sf": site.site_area_sf,
        "altered_area_sf": site.altered_area_sf,
        "drainage_plan_c": site.drainage_plan_c,
        "design_intensity_in_hr": i_design,
        "allowable_flow_cfs": q_allow,
        "site_release_rate_cfs": rr_site,
        "release_rate_cfs": rr,
        "tributary_area_sf": trib_sf,
        "weighted_c": cw,
        "developed_peak_cfs": v["developed_peak_cfs"],
        "infiltration_credit_cfs": q_inf,
        "recycling_credit_cfs": q_rec,
        "required_volume_no_credit_cf": v["required_volume_no_credit_cf"],
        "required_volume_cf": v_req,
        "critical_duration_min": t_crit,
        "eq_11_5_duration_min": v["eq_11_5_duration_min"],
        "storage_provided_cf": capacity,
        "system_type": site.system["type"],
        "system_height_ft": top,
        "orifice_invert_ft": inv,
        "discharge_coefficient": cd,
        "feasible": feasible,
        "orifice_diameter_in": v["orifice_diameter_in"] if feasible else None,
        "release_limit_diameter_in": v["release_limit_in"],
        "spill_limit_diameter_in": spill if np.isfinite(spill) else None,
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
    checks = _design_checks(site, b, numbers, conditions)
    if approved_on is not None:
        source = "--approved-on"
    else:
        approved_on, source = site.approved_on, "the site file's [submittal] approved_on"
    conditions.extend(dict(ob) for ob in nyc.MAINTENANCE_OBLIGATIONS if ob["citation"] != nyc.TRIENNIAL_CITATION)
    conditions.append(triennial_condition(approved_on, source))
    result = DetentionResult(site, rules, numbers, steps, problems=problems, checks=checks, conditions=conditions,
                             submittal=submittal, rule_values=rule_values_used(site, rules), approved_on=approved_on)
    result.series = {
        "time_min": t_full[:end], "inflow_cfs": inflow[:end], "sewer_cfs": sewer[:end], "stage_ft": res.stage_ft[0, :end],
        "storage_cf": res.storage_cf[0, :end], "losses_cfs": (res.outflow_cfs[0, 2] + res.outflow_cfs[0, 3])[:end],
        "top_ft": top,
    }

    # 7: SWMM
    if swmm:
        sw = swmm_check(result, b.table, out_cols, work_dir)
        numbers.update(sw)
        checks.append(Check("EPA SWMM 5 cross-check", "storage node and orifice", None,
                            max(sw["swmm_peak_outflow_difference"], sw["swmm_max_depth_difference"]), SWMM_TOLERANCE, "-",
                            bool(sw["swmm_agreement"]), "independent engine: EPA SWMM 5.2 (Rossman 2022)", "design",
                            f"peak outflow and max depth within {SWMM_TOLERANCE:.0%}",
                            f"{sw['swmm_peak_outflow_difference']:.2%} / {sw['swmm_max_depth_difference']:.2%}"))
        if not sw["swmm_agreement"]:
            problems.append(
                f"SWMM check: peak outflow {sw['swmm_peak_outflow_cfs']:.4g} vs {peak_out:.4g} cfs, max depth "
                f"{sw['swmm_max_depth_ft']:.4g} vs {max_depth:.4g} ft differ by more than {SWMM_TOLERANCE:.0%}"
            )
    # every failed check fails the design (exit 1), each with a problem line (the engine's problems name
    # them already; this catches a check failing without one)
    if not problems:
        problems.extend(f"check failed: {c.criterion} ({c.value}; {c.requirement}; {c.citation})" for c in checks if c.passed is False)
    result.status = "pass" if not problems else "fail"
    return result


def _design_checks(site: Site, b: DetentionBatch, n: dict, conditions: list[dict]) -> list[Check]:
    """The compliance checks of one design, line by line for the reviewer (15 RCNY § 31-03)."""
    rr, peak_out, max_depth, top = n["release_rate_cfs"], n["peak_outflow_cfs"], n["max_depth_ft"], n["system_height_ft"]
    feasible, capacity, v_req = n["feasible"], n["storage_provided_cf"], n["required_volume_cf"]
    rate_cite = "15 RCNY § 31-03(a)(2)" if site.kind == "alteration" else "15 RCNY § 31-03(a)(1)"
    checks = [
        Check("Peak release to the sewer", "orifice", None, peak_out, rr, "cfs", bool(feasible and peak_out <= rr * (1 + RATE_SLACK)),
              rate_cite, "design", f"<= release rate {rr:.4f} cfs", f"{peak_out:.4f} cfs"),
        Check("No overtopping", "storage system", None, max_depth, top, "ft", bool(max_depth <= top * (1 + STAGE_SLACK)),
              "routed design storms (Modified Puls)", "design", f"max depth <= system height {top:.3f} ft", f"{max_depth:.3f} ft"),
        Check("Storage provided", "storage system", None, capacity, v_req, "ft3", bool(capacity >= v_req * (1 - STAGE_SLACK)),
              "HEC-22 ch. 8; rule set idf_10yr", "design",
              f">= required volume {v_req:,.0f} ft3 (modified rational, 10-year curve)", f"{capacity:,.0f} ft3"),
    ]
    if site.kind == "alteration":
        at = site.alteration_type  # any other value was refused by site_refusals
        checks.append(Check("Alteration covered by the release rate", "site", None, at, None, "",
                            None if at is None else True, nyc.ALTERATION_SCOPE_CITATION, "design",
                            "a horizontal building enlargement or a proposed increase in impervious surfaces",
                            "not stated" if at is None else nyc.ALTERATION_TYPES[at]))
        npd = site.new_points_of_discharge
        checks.append(Check("New points of discharge", "site", None, npd, 0, "points", None if npd is None else npd == 0,
                            "15 RCNY § 31-03(a)(2)", "design", "none permitted for alterations",
                            "not stated" if npd is None else str(npd)))
    if site.phased or site.subdivision:  # without a master plan refused by site_refusals
        checks.append(Check("Master/phased plan", "site", None, site.master_plan, None, "", None, nyc.MASTER_PLAN_CITATION,
                            "design", "the site connection proposal of the master/phased plan, approved by DEP",
                            site.master_plan))
    if site.infiltration is not None:
        inf = site.infiltration
        checks.append(Check("Infiltration credit evidence", "storage system", None, inf.infiltration_rate_in_hr, None, "in/h", True,
                            "15 RCNY § 31-03(a)(3)", "design",
                            "open bottom; soil borings at the system location; in-situ permeability test",
                            f"open bottom; borings {', '.join(inf.soil_borings)}; {inf.permeability_test} test, "
                            f"{inf.infiltration_rate_in_hr:g} in/h"))
        conditions.append(_condition(
            f"The infiltration credit ({n['infiltration_credit_cfs']:.4f} cfs, PC Eq. 11-3 with the measured {inf.infiltration_rate_in_hr:g} in/h and no "
            "safety factor) is a request: it must be shown on the Site Connection Proposal and DEP must be satisfied that the "
            "soil surrounding and below the system has a favorable rate of permeation.", "15 RCNY § 31-03(a)(3)"))
    if site.recycling is not None:
        checks.append(Check("Recycling credit", "storage system", None, peak_out, rr, "cfs",
                            bool(feasible and peak_out <= rr * (1 + RATE_SLACK)), "15 RCNY § 31-03(a)(4)", "design",
                            "independent system; total discharge to the sewer never above the release rate",
                            f"independent; routed peak {peak_out:.4f} cfs with the demand drawn"))
        conditions.append(_condition(
            "Recycling credit: the demand is modelled as a constant withdrawal while water is stored, and 'never above the "
            "release rate at any time' is shown for the design storms routed here only; the recycling system cannot be "
            "modified or disconnected without DEP's express written approval, binding current and future owners.",
            "15 RCNY § 31-03(a)(4)"))
    if b.hydrograph != "scs":
        longest = b.failed_check[0] == "duration" or any("longest design storm" in p for p in b.problems[0])
        checks.append(Check("Critical storm duration bracketed", "design storms", None, n["design_hydrograph"], None, "",
                            not longest, "modelling check (rule set rational_hydrograph.durations_min)", "design",
                            "the highest stage comes from a duration shorter than the longest routed", n["design_hydrograph"]))
    return checks
