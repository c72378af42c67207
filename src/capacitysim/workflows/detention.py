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

import html
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from capacitysim import hydraulics
from capacitysim.checks import MAX_BATCH_VALUES, MAX_TIME_STEPS, check_steps
from capacitysim.errors import InputError, RefusedError
from capacitysim.hydraulics.orifice import DEFAULT_DISCHARGE_COEFFICIENT
from capacitysim.hydraulics.storage import StageStorage
from capacitysim.hydraulics.weir import FRANCIS_COEFFICIENT
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
#: Steps of the fixed bisection first used for the orifice (48 in / 2^24 < 3e-6 in); still the
#: precision :func:`size_orifice` reaches when given ``steps=BISECTION_STEPS`` explicitly.
BISECTION_STEPS = 24
#: Default precision of the orifice search [in]: the returned diameter meets the release rate and one
#: this much larger does not. 1e-4 in is 1/600 of the 1/16-in step orifices are fabricated to.
ORIFICE_TOLERANCE_IN = 1.0e-4
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


def outflow_table(table: StageStorage, diameter_in, invert_ft, cd, losses_cfs=None, weir_length_ft=None,
                  weir_coefficient=FRANCIS_COEFFICIENT):
    """Outflow columns (n, 4, K) of n designs: orifice, overflow weir at the top, infiltration, recycling [cfs].

    Losses (infiltration, recycling) are (n, 2) constant rates drawn whenever water is stored,
    ramped over the first table segment so the outflow is continuous at an empty pool. The weir
    coefficient defaults to the Francis value (Brater & King ch. 5); :func:`design_site` passes the
    rule set's ``weir_coefficient``.
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


def _route_max(tables, diam, inv, cd, losses, weir, shapes, dt_s, scale, weir_coefficient=FRANCIS_COEFFICIENT):
    """Route every design through every hydrograph shape; max over shapes per design."""
    n = tables.top_ft.shape[0]
    n_shapes = shapes.shape[0]
    out = outflow_table(tables, diam, inv, cd, losses, weir, weir_coefficient)
    rows_t = np.repeat(np.arange(n), n_shapes)
    rows_i = np.tile(np.arange(n_shapes), n)
    pk = hydraulics.route_peaks(shapes, dt_s, tables.depth_ft, tables.storage_cf, out, rows_t, rows_i,
                                np.repeat(np.broadcast_to(np.asarray(scale, float), (n,)), n_shapes))
    sewer = pk.peak_outflow_cfs[:, 0] + pk.peak_outflow_cfs[:, 1]
    sewer = sewer.reshape(n, n_shapes)
    stage = pk.max_stage_ft.reshape(n, n_shapes)
    stor = pk.max_storage_cf.reshape(n, n_shapes)
    crit = np.argmax(stage, axis=1)
    return sewer.max(axis=1), stage.max(axis=1), stor.max(axis=1), crit


def _sub_tables(tables: StageStorage, idx) -> StageStorage:
    return StageStorage(tables.depth_ft[idx], tables.area_sf[idx], tables.storage_cf[idx], tables.top_ft[idx], tables.footprint_sf[idx])


class _RowRouter:
    """Routes any subset of n designs, each through its own hydrograph rows, and keeps the max over a
    design's rows (peak release to the sewer, max stage, max storage, the row of the max stage)."""

    def __init__(self, tables, inv, cd, losses, weir, weir_coefficient, shapes, dt_s, row_design, row_shape, row_scale):
        n = tables.top_ft.shape[0]
        rd = np.asarray(row_design, dtype=np.int64).reshape(-1)
        order = np.argsort(rd, kind="stable")
        self.row_shape = np.asarray(row_shape, dtype=np.int64).reshape(-1)[order]
        self.row_scale = np.broadcast_to(np.asarray(row_scale, dtype=float), rd.shape)[order]
        self.counts = np.bincount(rd, minlength=n)
        if self.counts.size != n or np.any(self.counts == 0):
            raise InputError(f"every one of the {n} designs needs at least one hydrograph row (row_design in [0, {n}))")
        self.starts = np.concatenate([[0], np.cumsum(self.counts)[:-1]])
        self.tables, self.inv, self.cd, self.losses, self.weir = tables, inv, cd, losses, weir
        self.weir_coefficient, self.shapes, self.dt_s = weir_coefficient, shapes, dt_s

    def __call__(self, ids, diam, want_row=False):
        cnt = self.counts[ids]
        offs = np.concatenate([[0], np.cumsum(cnt)[:-1]])
        rows = np.repeat(self.starts[ids] - offs, cnt) + np.arange(cnt.sum())
        sub = _sub_tables(self.tables, ids)
        out = outflow_table(sub, diam, self.inv[ids], self.cd[ids], None if self.losses is None else self.losses[ids],
                            None if self.weir is None else self.weir[ids], self.weir_coefficient)
        # route only the columns that carry flow (orifice always; overflow and losses when present)
        keep = [c for c in range(out.shape[1]) if c == 0 or np.any(out[:, c])]
        pk = hydraulics.route_peaks(self.shapes, self.dt_s, sub.depth_ft, sub.storage_cf, out[:, keep],
                                    np.repeat(np.arange(ids.size), cnt), self.row_shape[rows], self.row_scale[rows])
        sewer_pk = sum(pk.peak_outflow_cfs[:, j] for j, c in enumerate(keep) if c in SEWER_COLUMNS)
        q = np.maximum.reduceat(sewer_pk, offs)
        s = np.maximum.reduceat(pk.max_stage_ft, offs)
        v = np.maximum.reduceat(pk.max_storage_cf, offs)
        if not want_row:
            return q, s, v
        pos = np.where(pk.max_stage_ft == np.repeat(s, cnt), np.arange(rows.size), rows.size)
        first = np.minimum.reduceat(pos, offs)
        return q, s, v, self.row_shape[rows[first]]


#: Minimum distance of a search point from the ends of its bracket, as a fraction of the bracket.
SEARCH_MARGIN = 1.0 / 16.0


def _search(ok_d, ok_f, bad_d, bad_f, measure, limit, tol, max_iter, power=2.0):
    """Safeguarded regula falsi (Illinois) on x = d^power for many designs at once.

    Keeps, per design, a diameter known to satisfy ``measure(d) <= limit`` (ok) and one known to
    violate it (bad), and shrinks the bracket until |ok - bad| <= tol. The flow through an orifice
    is nearly proportional to its area (and the max storage falls about linearly with it), so the
    secant in d^2 converges in a few steps; a bisection
    step is taken whenever the bracket has not halved over the last two steps, so convergence is
    never slower than bisection's, and every point keeps :data:`SEARCH_MARGIN` of the bracket from
    its ends. ``measure(active, d)`` evaluates the entries ``active`` at diameters ``d``. Returns the
    ok diameters (the boundary on the safe side) and the bad ones.
    """
    ok_d, ok_f, bad_d, bad_f = (np.array(a, dtype=float) for a in (ok_d, ok_f, bad_d, bad_f))
    side = np.zeros(ok_d.size, dtype=np.int8)
    width = np.abs(bad_d - ok_d)
    w_prev = np.full(ok_d.size, np.inf)
    w_prev2 = np.full(ok_d.size, np.inf)
    power = np.broadcast_to(np.asarray(power, dtype=float), ok_d.shape)
    active = np.flatnonzero(width > tol)
    for _ in range(max_iter):
        if active.size == 0:
            break
        a, fa, b, fb = ok_d[active], ok_f[active], bad_d[active], bad_f[active]
        pw = power[active]
        xa, xb = a**pw, b**pw
        with np.errstate(divide="ignore", invalid="ignore"):
            x = xa - fa * (xb - xa) / (fb - fa)
            d = np.clip(x, 0.0, None) ** (1.0 / pw)
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        bisect = ~np.isfinite(d) | (d <= lo) | (d >= hi) | (width[active] > 0.5 * w_prev2[active])
        d = np.where(bisect, 0.5 * (a + b), d)
        # keep a minimum distance from both ends: when the guess is right it lands across the root
        # and the bracket collapses to that distance; when the function is flat it still shrinks
        margin = (hi - lo) * SEARCH_MARGIN
        d = np.clip(d, lo + margin, hi - margin)
        f = measure(active, d) - limit[active]
        good = f <= 0
        # Illinois: halve the stale end's value when the same end moves twice in a row
        bad_f[active] = np.where(~good, f, np.where(side[active] == 1, 0.5 * fb, fb))
        ok_f[active] = np.where(good, f, np.where(side[active] == -1, 0.5 * fa, fa))
        ok_d[active] = np.where(good, d, a)
        bad_d[active] = np.where(good, b, d)
        side[active] = np.where(good, 1, -1)
        w_prev2[active] = w_prev[active]
        w_prev[active] = width[active]
        width[active] = np.abs(bad_d[active] - ok_d[active])
        active = active[width[active] > tol]
    return ok_d, bad_d


def size_orifice_rows(tables: StageStorage, release_cfs, shapes, dt_s, row_design, row_shape, row_scale, invert_ft=0.0,
                      cd=DEFAULT_DISCHARGE_COEFFICIENT, losses_cfs=None, weir_length_ft=None, steps=None,
                      weir_coefficient=FRANCIS_COEFFICIENT) -> SizingResult:
    """:func:`size_orifice` with each design routed through its own hydrograph rows.

    Row i routes ``row_scale[i] * shapes[row_shape[i]]`` through design ``row_design[i]`` (so each
    design may carry its own critical duration or its own SCS hydrograph); a design's peak is the max
    over its rows. ``critical_row`` is the shape index of the row with the highest stage.
    """
    n = tables.top_ft.shape[0]
    rr = np.broadcast_to(np.asarray(release_cfs, dtype=float), (n,)).copy()
    inv = np.broadcast_to(np.asarray(invert_ft, dtype=float), (n,)).copy()
    cdv = np.broadcast_to(np.asarray(cd, dtype=float), (n,)).copy()
    shapes = np.atleast_2d(np.asarray(shapes, dtype=float))
    if np.any(inv >= tables.top_ft):
        raise InputError("orifice_invert_ft must be below the top of the system")
    d_geo = np.minimum((tables.top_ft - inv) * INCHES_PER_FOOT, MAX_ORIFICE_IN)
    losses = None if losses_cfs is None else np.broadcast_to(np.asarray(losses_cfs, float), (n, 2)).copy()
    weir = None if weir_length_ft is None else np.broadcast_to(np.asarray(weir_length_ft, float), (n,)).copy()
    router = _RowRouter(tables, inv, cdv, losses, weir, weir_coefficient, shapes, dt_s, row_design, row_shape, row_scale)
    tol = ORIFICE_TOLERANCE_IN if steps is None else MAX_ORIFICE_IN / 2.0**steps
    max_iter = 4 * int(np.ceil(np.log2(MAX_ORIFICE_IN / tol))) + 8  # bisection every other step at worst
    every = np.arange(n)

    # both ends of the search and a first estimate for every design in one routing call: no orifice,
    # the orifice passing the rate under the full height (Brater & King ch. 4), the largest that fits
    d_est = np.minimum(np.asarray(hydraulics.orifice_diameter_for_flow_in(rr, tables.top_ft - inv, cdv), float) * np.ones(n),
                       0.5 * d_geo)
    q3, s3, _ = router(np.concatenate([every, every, every]), np.concatenate([np.zeros(n), d_est, d_geo]))
    q0, s0, q_est, s_est, q_top, s_top = q3[:n], s3[:n], q3[n:2 * n], s3[n:2 * n], q3[2 * n:], s3[2 * n:]
    release_not_binding = q_top <= rr
    none_passes = q0 > rr  # an overflow or losses alone exceed the rate
    spill_everywhere = s_top > tables.top_ft
    fits_without = s0 <= tables.top_ft

    # the two constraints, solved separately; both searches share each routing call
    rel_ids = np.flatnonzero(~release_not_binding & ~none_passes)
    spl_ids = np.flatnonzero(~spill_everywhere & ~fits_without)
    n_rel = rel_ids.size
    both = np.concatenate([rel_ids, spl_ids])

    def measure(active, d):
        q, s, _ = router(both[active], d)
        return np.where(active < n_rel, q, s)

    limit = np.concatenate([rr[rel_ids], tables.top_ft[spl_ids]])
    # brackets: the estimate replaces the end on its side
    r_est_ok = q_est[rel_ids] <= rr[rel_ids]
    s_est_ok = s_est[spl_ids] <= tables.top_ft[spl_ids]
    ok0 = np.concatenate([np.where(r_est_ok, d_est[rel_ids], 0.0), np.where(s_est_ok, d_est[spl_ids], d_geo[spl_ids])])
    okf = np.concatenate([np.where(r_est_ok, q_est[rel_ids], q0[rel_ids]) - rr[rel_ids],
                          np.where(s_est_ok, s_est[spl_ids], s_top[spl_ids]) - limit[n_rel:]])
    bad0 = np.concatenate([np.where(r_est_ok, d_geo[rel_ids], d_est[rel_ids]), np.where(s_est_ok, 0.0, d_est[spl_ids])])
    badf = np.concatenate([np.where(r_est_ok, q_top[rel_ids], q_est[rel_ids]) - rr[rel_ids],
                           np.where(s_est_ok, s0[spl_ids], s_est[spl_ids]) - limit[n_rel:]])

    ok_d, _ = _search(ok0, okf, bad0, badf, measure, limit, tol, max_iter)

    release_limit = np.where(release_not_binding, d_geo, 0.0)
    release_limit[rel_ids] = ok_d[:n_rel]
    spill_limit = np.where(spill_everywhere, np.inf, 0.0)
    spill_limit[spl_ids] = ok_d[n_rel:]
    feasible = (~spill_everywhere) & (spill_limit <= release_limit) & (release_limit > 0)
    q_fin, s_fin, v_fin, crit = router(every, release_limit, want_row=True)
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
            reasons.append(f"no orifice meets the release rate {rr[i]:.4g} cfs: with no orifice at all the routed release "
                           f"(overflow) is {q0[i]:.4g} cfs")
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


def size_orifice(tables: StageStorage, release_cfs, shapes, dt_s, scale=1.0, invert_ft=0.0, cd=DEFAULT_DISCHARGE_COEFFICIENT,
                 losses_cfs=None, weir_length_ft=None, steps=None, weir_coefficient=FRANCIS_COEFFICIENT) -> SizingResult:
    """Find, for n designs at once, the largest orifice keeping the routed peak release at or below
    the release rate without overtopping the storage.

    The two constraints are solved separately on the diameter: the peak release grows with the
    diameter (upper bound ``release_limit_in``, the largest diameter whose routed peak release is at
    or below the rate) and the maximum stage falls with it (lower bound ``spill_limit_in``, the
    smallest diameter that does not overtop; 0 when the system holds every design hydrograph with
    no orifice at all). A design is feasible when spill_limit <= release_limit; the chosen orifice is
    then the release limit (the largest allowed: the least storage used and the least
    clogging-prone opening). Each limit is bracketed to :data:`ORIFICE_TOLERANCE_IN` (or
    ``MAX_ORIFICE_IN / 2**steps`` when ``steps`` is given): the returned release limit passes, and a
    diameter that much larger fails.

    The search is a safeguarded regula falsi on the orifice area (:func:`_search`) over the designs
    not yet converged, each routing call covering both constraints; routing stops a case once its
    peak is certain (:func:`capacitysim.hydraulics.route_peaks`).

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
        Orifice invert above the bottom [ft] and discharge coefficient [-] (default
        :data:`capacitysim.hydraulics.DEFAULT_DISCHARGE_COEFFICIENT`).
    losses_cfs : array_like (n, 2), optional
        Credited infiltration and recycling withdrawals [cfs].
    weir_length_ft : array_like (n,), optional
        Overflow weir at the top (its flow counts as release to the sewer).
    steps : int, optional
        Precision of the bracket ``MAX_ORIFICE_IN / 2**steps`` [in]; default :data:`ORIFICE_TOLERANCE_IN`.
    weir_coefficient : float
        Coefficient of the overflow weir [ft^0.5/s].

    Returns
    -------
    SizingResult

    References
    ----------
    15 RCNY § 31-03(a)(1)-(2) (release rate); routing: Chow, Maidment & Mays (1988) § 8.2.
    """
    n = tables.top_ft.shape[0]
    shapes = np.atleast_2d(np.asarray(shapes, dtype=float))
    n_shapes = shapes.shape[0]
    scale = np.broadcast_to(np.asarray(scale, dtype=float), (n,))
    return size_orifice_rows(tables, release_cfs, shapes, dt_s, np.repeat(np.arange(n), n_shapes), np.tile(np.arange(n_shapes), n),
                             np.repeat(scale, n_shapes), invert_ft, cd, losses_cfs, weir_length_ft, steps, weir_coefficient)


# ----------------------------------------------------------------------------------------------
# design hydrographs
# ----------------------------------------------------------------------------------------------
def rational_hydrograph_shapes(durations_min, tc_min, a, b, dt_min, tail_min=0.0):
    """Unit modified rational hydrographs [cfs per (C x acre)] for several storm durations.

    Each is a trapezoid rising over Tc to i(t_d) = a/(t_d + b), level to t_d, falling to 0 at t_d + Tc
    (volume i(t_d) t_d, the modified rational inflow volume). Multiply by k C A [ac].

    Parameters
    ----------
    durations_min : array_like
        Storm durations t_d [min], > 0.
    tc_min : float
        Time of concentration [min], > 0.
    a, b : float
        IDF constants, i = a / (t + b) [in/h x min], [min].
    dt_min : float
        Time step [min], > 0.
    tail_min : float, default 0
        Time of zero inflow added after the longest hydrograph [min].

    Returns
    -------
    t_min, shapes, td : ndarray
        Times [min] (T,), the shapes (S, T) and the durations used (S,).

    Raises
    ------
    InputError
        Before allocating, when the series would be longer than
        :data:`~capacitysim.checks.MAX_TIME_STEPS` steps (longest duration plus Tc over the step: a
        Tc of 1e9 min or a step of 1e-9 min) or hold more than :data:`~capacitysim.checks.MAX_BATCH_VALUES`.

    References
    ----------
    HEC-22 (2009) ch. 8 (modified rational method hydrographs).
    """
    td = np.maximum(np.asarray(durations_min, dtype=float), tc_min)
    t_end = td.max() + tc_min + tail_min
    drivers = f"tc_min = {tc_min:g} min, longest storm duration {td.max():g} min, dt_min = {dt_min:g} min"
    with np.errstate(over="ignore"):
        n_steps = t_end / dt_min + 2.0  # may overflow to inf: refused below
    n_t = check_steps(n_steps, "the design hydrographs", drivers)
    check_steps(td.size * n_t, "the design hydrographs", f"{td.size} durations x {n_t:,} steps; {drivers}",
                limit=MAX_BATCH_VALUES, unit="values", hint="fewer durations or a longer time step")
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
    #: Compliance checks, one row each: check, requirement, value, result ("pass"/"fail"/"n/a"), citation.
    checks: list[dict] = field(default_factory=list)
    #: Conditions the reviewer must confirm or the applicant must meet (not computable from the inputs).
    conditions: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        out = {"site": self.site.name, "site_file": self.site.path, "rule_set": self.rules.name, "status": self.status,
               "problems": self.problems}
        out.update(self.numbers)
        out["checks"] = self.checks
        out["conditions"] = self.conditions
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
    conditions: list[str] = []
    if site.receiving_sewer is not None and site.receiving_sewer != "combined":
        raise RefusedError(
            f"15 RCNY § 31-03 sets the Stormwater Release Rate for connections to combined sewers; the site file gives "
            f"receiving_sewer = {site.receiving_sewer!r} (this command implements the combined-sewer standard only)"
        )
    if site.receiving_sewer is None:
        conditions.append("The site file does not name the receiving sewer: 15 RCNY § 31-03 applies to connections to "
                          "combined sewers (confirm on the sewer map of the borough office).")
    if site.kind == "alteration":
        if site.new_points_of_discharge:
            raise RefusedError(
                f"15 RCNY § 31-03(a)(2): no new points of discharge are permitted for alterations; the site file proposes "
                f"new_points_of_discharge = {site.new_points_of_discharge}"
            )
        if site.new_points_of_discharge is None:
            conditions.append("Not stated in the site file: the alteration must discharge through the existing connection(s); "
                              "no new points of discharge are permitted (15 RCNY § 31-03(a)(2)).")
    k = float(rules.value("rational_cfs_per_acre_in_hr"))
    i_design = float(rules.value("design_intensity_in_hr"))
    a_idf, b_idf = float(rules.value("idf_10yr", "a")), float(rules.value("idf_10yr", "b_min"))
    cd = float(site.system.get("discharge_coefficient", rules.value("orifice_discharge_coefficient")))
    weir_c = float(rules.value("weir_coefficient")) if "weir_coefficient" in rules.data else FRANCIS_COEFFICIENT
    c_table = rules.runoff_coefficients()

    # 1-2: Allowable Flow and release rate
    site_ac = site.site_area_sf / SQFT_PER_ACRE
    q_allow = float(nyc.allowable_flow_cfs(site_ac, site.drainage_plan_c, i_design, k))
    _step(steps, "Allowable Flow of the site", f"Q = C_dp i A = {site.drainage_plan_c:g} x {i_design:g} in/h x {site_ac:.4f} ac",
          q_allow, "cfs", "15 RCNY § 31-02 (Allowable Flow), § 31-03(a)(1); PC § 1114.3.1 Eq. 11-1 (rule set: design_intensity_in_hr)")
    rr_site = float(nyc.release_rate_cfs(q_allow))
    if q_allow < nyc.MIN_RELEASE_RATE_CFS:
        rr_formula = f"Q = {q_allow:.4f} cfs < 0.25 cfs, so the Allowable Flow itself"
    else:
        rr_formula = f"greater of 0.25 cfs and 10 % x {q_allow:.4f} = {nyc.RELEASE_FRACTION_OF_ALLOWABLE * q_allow:.4f} cfs"
    _step(steps, "Stormwater Release Rate of the site", rr_formula, rr_site, "cfs", "15 RCNY § 31-03(a)(1)")
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
    _step(steps, "Critical duration, PC Eq. 11-5 (release rate only, no credits)", f"tV = 0.27 (Cw A / Q_DRR)^0.5 - 15 = 0.27 ({cw:.3f} x {trib_sf:,.0f} / {rr:.4g})^0.5 - 15",
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
    tail_steps = REPORT_TAIL_HR * MINUTES_PER_HOUR / dt_min
    if site.design["hydrograph"] == "scs":
        from capacitysim import hydrology

        storm = {"depth_in": rules.value("design_storm_10yr_24h", "depth_in"),
                 "distribution": rules.value("design_storm_10yr_24h", "distribution")}
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
    # the report routes the critical hydrograph with a drain-down tail: bound the whole series before sizing
    check_steps(shapes.shape[1] + tail_steps, "the routed hydrograph with its drain-down tail",
                f"{shapes.shape[1]:,} hydrograph steps + {REPORT_TAIL_HR:g} h at dt_min = {dt_min:g} min; tc_min = {tc_min:g} min",
                limit=MAX_TIME_STEPS, hint="a longer dt_min or a shorter tc_min")

    # 6: sizing
    inv = site.system["orifice_invert_ft"]
    weir = site.system.get("overflow_weir_length_ft")
    losses = np.array([[q_inf, q_rec]])
    sz = size_orifice(table, rr, shapes, dt_s, scale, inv, cd, losses, None if weir is None else [weir], weir_coefficient=weir_c)
    feasible = bool(sz.feasible[0])
    problems = []
    if not feasible:
        problems.append("infeasible: " + sz.reasons[0])
        if site.recycling is not None:
            problems.append("recycling credit refused (15 RCNY § 31-03(a)(4)): with it the total discharge cannot be kept within the release rate without overtopping")
    if capacity < float(v_req) * (1 - 1e-9):
        problems.append(f"storage provided {capacity:,.0f} ft3 is less than the required volume {float(v_req):,.0f} ft3")
    d_in = float(sz.diameter_in[0]) if feasible else float(sz.release_limit_in[0])
    _step(steps, "Orifice: largest diameter with routed peak release <= release rate",
          f"search on the diameter, each trial routed through {len(labels)} design hydrographs (bracket {ORIFICE_TOLERANCE_IN:g} in)",
          float(sz.release_limit_in[0]), "in", "15 RCNY § 31-03(a)(1)-(2); Modified Puls routing, Chow et al. (1988) § 8.2; " + hyd_cite)
    spill = float(sz.spill_limit_in[0])
    _step(steps, "Orifice: smallest diameter that does not overtop",
          "max routed stage <= system top" + (" (0: the system holds every design hydrograph routed even with no orifice)"
                                              if spill == 0 else ""),
          spill if np.isfinite(spill) else "none (overtops with every orifice)", "in",
          f"storage must hold the routed design storms; feasible when this <= the release limit")

    # full routing of the critical hydrograph for the report and the SWMM check
    crit = int(sz.critical_row[0])
    tail = int(round(REPORT_TAIL_HR * MINUTES_PER_HOUR / dt_min))
    inflow = np.concatenate([shapes[crit] * scale, np.zeros(tail)])
    t_full = np.arange(inflow.size) * dt_min
    out_cols = outflow_table(table, d_in, inv, cd, losses, None if weir is None else [weir], weir_c)
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
    # compliance checks, line by line for the reviewer
    checks: list[dict] = []

    def check(name, requirement, value, ok, cite):
        checks.append({"check": name, "requirement": requirement, "value": value,
                       "result": ok if isinstance(ok, str) else ("pass" if ok else "fail"), "citation": cite})

    rate_cite = "15 RCNY § 31-03(a)(2)" if site.kind == "alteration" else "15 RCNY § 31-03(a)(1)"
    check("Peak release to the sewer", f"<= release rate {rr:.4f} cfs", f"{peak_out:.4f} cfs",
          feasible and peak_out <= rr * (1 + 1e-6), rate_cite)
    check("No overtopping", f"max depth <= system height {float(table.top_ft[0]):.3f} ft", f"{max_depth:.3f} ft",
          max_depth <= float(table.top_ft[0]) * (1 + 1e-9), "routed design storms (Modified Puls)")
    check("Storage provided", f">= required volume {float(v_req):,.0f} ft3 (modified rational, 10-year curve)",
          f"{capacity:,.0f} ft3", capacity >= float(v_req) * (1 - 1e-9), "HEC-22 ch. 8; rule set idf_10yr")
    if site.kind == "alteration":
        npd = site.new_points_of_discharge
        check("New points of discharge", "none permitted for alterations", "not stated" if npd is None else str(npd),
              "confirm" if npd is None else npd == 0, "15 RCNY § 31-03(a)(2)")
    if site.infiltration is not None:
        inf = site.infiltration
        check("Infiltration credit evidence", "open bottom; soil borings at the system location; in-situ permeability test",
              f"open bottom; borings {', '.join(inf.soil_borings)}; {inf.permeability_test} test, {inf.infiltration_rate_in_hr:g} in/h",
              True, "15 RCNY § 31-03(a)(3)")
        conditions.append(
            f"The infiltration credit ({q_inf:.4f} cfs, PC Eq. 11-3 with the measured {inf.infiltration_rate_in_hr:g} in/h and no "
            "safety factor) is a request: it must be shown on the Site Connection Proposal and DEP must be satisfied that the "
            "soil surrounding and below the system has a favorable rate of permeation (15 RCNY § 31-03(a)(3)).")
    if site.recycling is not None:
        check("Recycling credit", "independent system; total discharge to the sewer never above the release rate",
              f"independent; routed peak {peak_out:.4f} cfs with the demand drawn", feasible and peak_out <= rr * (1 + 1e-6),
              "15 RCNY § 31-03(a)(4)")
        conditions.append(
            "Recycling credit: the demand is modelled as a constant withdrawal while water is stored, and 'never above the "
            "release rate at any time' is shown for the design storms routed here only; the recycling system cannot be "
            "modified or disconnected without DEP's express written approval, binding current and future owners "
            "(15 RCNY § 31-03(a)(4)).")
    if site.design["hydrograph"] == "rational":
        longest = crit == len(labels) - 1
        check("Critical storm duration bracketed", "the highest stage comes from a duration shorter than the longest routed",
              labels[crit], not longest, "modelling check (rule set rational_hydrograph.durations_min)")
        if longest:
            problems.append(f"the highest stage comes from the longest design storm routed ({labels[crit]}): add longer "
                            "durations to rational_hydrograph.durations_min; a longer storm may overtop")
    result = DetentionResult(site, rules, numbers, steps, problems=problems, checks=checks, conditions=conditions)
    result.series = {
        "time_min": t_full[:end], "inflow_cfs": inflow[:end], "sewer_cfs": sewer[:end], "stage_ft": res.stage_ft[0, :end],
        "storage_cf": res.storage_cf[0, :end], "losses_cfs": (res.outflow_cfs[0, 2] + res.outflow_cfs[0, 3])[:end],
        "top_ft": float(table.top_ft[0]),
    }

    # 7: SWMM
    if swmm:
        sw = swmm_check(result, table, out_cols, work_dir)
        numbers.update(sw)
        checks.append({"check": "EPA SWMM 5 cross-check", "requirement": f"peak outflow and max depth within {SWMM_TOLERANCE:.0%}",
                       "value": f"{sw['swmm_peak_outflow_difference']:.2%} / {sw['swmm_max_depth_difference']:.2%}",
                       "result": "pass" if sw["swmm_agreement"] else "fail", "citation": "issue 4 (independent engine)"})
        if not sw["swmm_agreement"]:
            problems.append(
                f"SWMM check: peak outflow {sw['swmm_peak_outflow_cfs']:.4g} vs {peak_out:.4g} cfs, max depth "
                f"{sw['swmm_max_depth_ft']:.4g} vs {max_depth:.4g} ft differ by more than {SWMM_TOLERANCE:.0%}"
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


def _sig4(v):
    """A step value to 4 significant figures (the report's default of 3 would print a 0.2975 cfs rate as 0.298)."""
    return format(v, ",.4g") if isinstance(v, float) else v


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
        ("receiving sewer", site.receiving_sewer or "not stated"),
        *([("new points of discharge", "not stated" if site.new_points_of_discharge is None else site.new_points_of_discharge)]
          if site.kind == "alteration" else []),
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

    rep.heading("Compliance checks")
    rep.table(["check", "requirement", "value", "result", "citation"],
              [[c["check"], c["requirement"], c["value"], c["result"].upper(), c["citation"]] for c in result.checks],
              classes=[{"pass": "pass", "fail": "fail"}.get(c["result"], "untrusted") for c in result.checks])
    if result.conditions:
        rep.heading("Conditions for the DEP reviewer")
        rep.raw("<ul>" + "".join(f"<li>{html.escape(m)}</li>" for m in result.conditions) + "</ul>")

    rep.heading("Calculation, step by step")
    rep.table(["step", "formula", "value", "unit", "citation"],
              [[st["step"], st["formula"], _sig4(st["value"]), st["unit"], st["citation"]] for st in result.steps])

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
    rep.raw("<ul>" + "".join(f"<li>{html.escape(m)}</li>" for m in MAINTENANCE_OBLIGATIONS) + "</ul>")
    if site.recycling:
        rep.paragraph("Recycling systems cannot be modified or disconnected without DEP's express written approval; this binds "
                      "current and future owners (15 RCNY § 31-03(a)(4)).")
    return rep.write(path)
