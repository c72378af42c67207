"""Orifice sizing of many detention designs at once: outflow tables, routing rows, the orifice search.

The one detention sizing engine: :func:`capacitysim.workflows.detention.design_batch` (and through it
``capacitysim detention`` and detention sweeps) sizes every design with :func:`size_orifice_rows`.
Pure numpy and the numba routing kernel; no files, no SWMM.

References
----------
15 RCNY § 31-03(a)(1)-(2) (release rate); Modified Puls routing, Chow, Maidment & Mays (1988) § 8.2;
orifice and weir equations, Brater & King (1996) ch. 4-5.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from capacitysim.errors import InputError
from capacitysim.hydraulics.orifice import DEFAULT_DISCHARGE_COEFFICIENT, orifice_diameter_for_flow_in, orifice_flow_cfs
from capacitysim.hydraulics.routing import route_peaks
from capacitysim.hydraulics.storage import StageStorage
from capacitysim.hydraulics.weir import FRANCIS_COEFFICIENT, rectangular_weir_flow_cfs
from capacitysim.units import INCHES_PER_FOOT

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
    coefficient defaults to the Francis value (Brater & King ch. 5); :func:`capacitysim.workflows.detention.design_batch`
    passes the rule set's ``weir_coefficient``.
    """
    d = table.depth_ft
    n, k = d.shape
    out = np.zeros((n, 4, k))
    dia = np.broadcast_to(np.asarray(diameter_in, dtype=float), (n,))
    inv = np.broadcast_to(np.asarray(invert_ft, dtype=float), (n,))
    cdv = np.broadcast_to(np.asarray(cd, dtype=float), (n,))
    out[:, 0, :] = orifice_flow_cfs(d, dia[:, None], inv[:, None], cdv[:, None])
    if weir_length_ft is not None:
        wl = np.broadcast_to(np.asarray(weir_length_ft, dtype=float), (n,))
        out[:, 1, :] = rectangular_weir_flow_cfs(d - table.top_ft[:, None], wl[:, None], weir_coefficient)
    if losses_cfs is not None:
        losses = np.broadcast_to(np.asarray(losses_cfs, dtype=float), (n, 2))
        ramp = np.clip(d / d[:, 1:2], 0.0, 1.0)
        out[:, 2, :] = losses[:, 0:1] * ramp
        out[:, 3, :] = losses[:, 1:2] * ramp
    return out


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
        pk = route_peaks(self.shapes, self.dt_s, sub.depth_ft, sub.storage_cf, out[:, keep],
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


def route_max_rows(tables: StageStorage, diameter_in, invert_ft, cd, losses_cfs, weir_length_ft, shapes, dt_s, row_design,
                   row_shape, row_scale, weir_coefficient=FRANCIS_COEFFICIENT):
    """Route n designs with a given orifice, each through its own hydrograph rows; the max over a design's rows.

    Row i routes ``row_scale[i] * shapes[row_shape[i]]`` through design ``row_design[i]``. The one
    routing path of the sizing search (:func:`size_orifice_rows`), of a sweep's given orifices and
    of the tests.

    Parameters
    ----------
    tables : StageStorage
        Stage-storage tables of the n designs.
    diameter_in, invert_ft, cd : array_like (n,)
        Orifice diameter [in], invert above the bottom [ft] and discharge coefficient [-].
    losses_cfs : array_like (n, 2) or None
        Credited infiltration and recycling withdrawals [cfs].
    weir_length_ft : array_like (n,) or None
        Overflow weir at the top [ft].
    shapes : array_like (S, T)
        Hydrograph shapes at step ``dt_s`` [s].
    row_design, row_shape, row_scale : array_like (R,)
        Design, shape and multiplier of each routed row.
    weir_coefficient : float
        Coefficient of the overflow weir [ft^0.5/s].

    Returns
    -------
    peak_sewer_cfs, max_stage_ft, max_storage_cf : ndarray (n,)
        Peak release to the sewer (orifice + overflow) [cfs], maximum stage [ft], maximum storage [ft3].
    critical_shape : ndarray (n,)
        Index of the shape of the row with the highest stage.

    References
    ----------
    Modified Puls (level-pool) routing, Chow, Maidment & Mays (1988) § 8.2.
    """
    n = tables.top_ft.shape[0]
    as_n = lambda v: np.broadcast_to(np.asarray(v, dtype=float), (n,)).copy()  # noqa: E731
    losses = None if losses_cfs is None else np.broadcast_to(np.asarray(losses_cfs, float), (n, 2)).copy()
    weir = None if weir_length_ft is None else as_n(weir_length_ft)
    router = _RowRouter(tables, as_n(invert_ft), as_n(cd), losses, weir, weir_coefficient,
                        np.atleast_2d(np.asarray(shapes, dtype=float)), dt_s, row_design, row_shape, row_scale)
    return router(np.arange(n), as_n(diameter_in), want_row=True)


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
    d_est = np.minimum(np.asarray(orifice_diameter_for_flow_in(rr, tables.top_ft - inv, cdv), float) * np.ones(n),
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
    peak is certain (:func:`capacitysim.route_peaks`).

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
