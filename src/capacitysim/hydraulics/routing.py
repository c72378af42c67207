"""Level-pool routing (storage-indication / Modified Puls) of inflow hydrographs, batched over designs.

For each step the continuity equation integrated by the trapezoidal rule,

    (I1 + I2) / 2 - (O1 + O2) / 2 = (S2 - S1) / dt,

is solved as 2 S2/dt + O2 = I1 + I2 + 2 S1/dt - O1 for the new stage, by linear interpolation of the
storage-indication curve 2S/dt + O in each design's stage-storage-discharge table. Storage and every
outflow column are interpolated at the same stage, so continuity holds exactly for the routed
series (mass balance to rounding) whenever the stage stays inside the table; above the table the
last segment is extended linearly.

Many designs route in one call: ``inflow_cfs`` has one row per routed case and ``table_of_row``
says which table each row uses (a design's table can serve several storms). The loop over time steps
runs inside numba, over all rows.

References
----------
.. [1] Chow, V.T., Maidment, D.R., Mays, L.W. (1988), Applied Hydrology, McGraw-Hill, § 8.2
   (level pool routing, storage-indication method, eq. 8.2.3).
.. [2] USDA NRCS (2014), National Engineering Handbook Part 630, Chapter 17, Flood Routing
   (storage-indication method).
.. [3] FHWA (2009), HEC-22 3rd ed., § 8.5 (storage-indication / Modified Puls routing of detention
   facilities).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from capacitysim.checks import MAX_BATCH_VALUES, check_range, check_steps
from capacitysim.errors import InputError


@dataclass(frozen=True)
class RoutingResult:
    """Routed series of r cases over T times (the inflow's time grid).

    Attributes
    ----------
    stage_ft : ndarray (r, T)
        Depth above the system bottom [ft].
    storage_cf : ndarray (r, T)
        Stored volume [ft^3].
    outflow_cfs : ndarray (r, C, T)
        Each outflow column of the table (e.g. orifice to the sewer, infiltration) [cfs].
    clamped_cf : ndarray (r,)
        Volume lost where the storage-indication value fell below zero (dt too long for the
        outflow near empty; 0 in a sound run) [ft^3].
    """

    stage_ft: np.ndarray
    storage_cf: np.ndarray
    outflow_cfs: np.ndarray
    clamped_cf: np.ndarray


@dataclass(frozen=True)
class RoutingPeaks:
    """Peaks of r routed cases: ``max_stage_ft`` (r,), ``peak_outflow_cfs`` (r, C), ``max_storage_cf`` (r,)."""

    max_stage_ft: np.ndarray
    peak_outflow_cfs: np.ndarray
    max_storage_cf: np.ndarray
    clamped_cf: np.ndarray


@numba.njit(cache=True, nogil=True)
def _route_rows(inflow, dt, depth, storage, outflow, table_of_row, inflow_of_row, inflow_scale, full, stage_out, storage_out, out_out, peaks, clamped,
                remaining=None):
    r_rows = table_of_row.shape[0]
    n_t = inflow.shape[1]
    n_cols = outflow.shape[1]
    k_pts = depth.shape[1]
    si = np.empty(k_pts)
    tot = np.empty(k_pts)
    for r in range(r_rows):
        j_prev = table_of_row[r - 1] if r > 0 else -1
        j = table_of_row[r]
        i_row = inflow_of_row[r]
        scale = inflow_scale[r]
        if j != j_prev:  # consecutive cases of one table share its storage-indication curve
            for k in range(k_pts):
                s = 0.0
                for c in range(n_cols):
                    s += outflow[j, c, k]
                tot[k] = s
                si[k] = 2.0 * storage[j, k] / dt + s
        # initial state: empty
        seg = 0
        frac = 0.0
        s1 = storage[j, 0]
        o1 = tot[0]
        max_stage = depth[j, 0]
        max_s = s1
        for c in range(n_cols):
            peaks[r, 1 + c] = outflow[j, c, 0]
        if full:
            stage_out[r, 0] = depth[j, 0]
            storage_out[r, 0] = s1
            for c in range(n_cols):
                out_out[r, c, 0] = outflow[j, c, 0]
        lost = 0.0
        for n in range(n_t - 1):
            rhs = scale * (inflow[i_row, n] + inflow[i_row, n + 1]) + 2.0 * s1 / dt - o1
            if rhs < si[0]:
                lost += 0.5 * dt * (si[0] - rhs)
                rhs = si[0]
            # move the segment pointer (stage changes slowly: scan from the last segment)
            while seg < k_pts - 2 and rhs > si[seg + 1]:
                seg += 1
            while seg > 0 and rhs < si[seg]:
                seg -= 1
            denom = si[seg + 1] - si[seg]
            frac = (rhs - si[seg]) / denom if denom > 0.0 else 0.0
            stage = depth[j, seg] + frac * (depth[j, seg + 1] - depth[j, seg])
            s2 = storage[j, seg] + frac * (storage[j, seg + 1] - storage[j, seg])
            o2 = 0.0
            for c in range(n_cols):
                oc = outflow[j, c, seg] + frac * (outflow[j, c, seg + 1] - outflow[j, c, seg])
                o2 += oc
                if oc > peaks[r, 1 + c]:
                    peaks[r, 1 + c] = oc
                if full:
                    out_out[r, c, n + 1] = oc
            if full:
                stage_out[r, n + 1] = stage
                storage_out[r, n + 1] = s2
            if stage > max_stage:
                max_stage = stage
            if s2 > max_s:
                max_s = s2
            s1 = s2
            o1 = o2
            # peaks only: stop once the inflow still to come cannot lift the storage above its maximum
            # (S_m <= S_n + remaining inflow volume, outflows >= 0; stage and every outflow column rise
            # with storage, so no peak can change after this)
            if remaining is not None and s2 + scale * remaining[i_row, n + 1] <= max_s:
                break
        peaks[r, 0] = max_stage
        peaks[r, 1 + n_cols] = max_s
        clamped[r] = lost


def _remaining_inflow_volume(inflow, dt):
    """Trapezoidal inflow volume from each time to the end, per inflow row [ft^3 per unit scale]."""
    seg = 0.5 * dt * (inflow[:, 1:] + inflow[:, :-1])
    rem = np.zeros_like(inflow)
    rem[:, :-1] = np.cumsum(seg[:, ::-1], axis=1)[:, ::-1]
    return np.ascontiguousarray(rem)


def _prepare(inflow_cfs, dt_s, depth_ft, storage_cf, outflow_cfs, table_of_row, inflow_of_row=None, inflow_scale=None):
    inflow = check_range("inflow_cfs", inflow_cfs, 0.0, unit="cfs")
    if inflow.ndim == 1:
        inflow = inflow[None, :]
    if inflow.ndim != 2 or inflow.shape[1] < 2:
        raise InputError(f"inflow_cfs must be (cases, times) with at least 2 times; got shape {inflow.shape}")
    dt = float(check_range("dt_s", dt_s, 0.0, low_inclusive=False, unit="s"))
    depth = np.atleast_2d(np.asarray(depth_ft, dtype=float))
    storage = np.atleast_2d(np.asarray(storage_cf, dtype=float))
    out = np.asarray(outflow_cfs, dtype=float)
    if out.ndim == 1:
        out = out[None, None, :]
    elif out.ndim == 2:
        out = out[:, None, :]
    m, k = depth.shape
    if storage.shape != (m, k) or out.shape[0] != m or out.shape[2] != k:
        raise InputError(
            f"tables must agree: depth {depth.shape}, storage {storage.shape}, outflow {out.shape} "
            "(expected (n, K), (n, K), (n, C, K))"
        )
    if k < 2 or np.any(np.diff(depth, axis=1) <= 0) or np.any(np.diff(storage, axis=1) <= 0):
        raise InputError("stage-storage tables must have at least 2 points with depth and storage strictly increasing")
    if np.any(out < 0) or np.any(np.diff(out.sum(axis=1), axis=1) < -1e-12):
        raise InputError("outflow tables must be >= 0 with the total outflow non-decreasing in stage")
    n_in = inflow.shape[0]
    if inflow_of_row is None:
        irows = np.arange(n_in)
    else:
        irows = np.asarray(inflow_of_row, dtype=np.int64).reshape(-1)
        if irows.size == 0 or irows.min() < 0 or irows.max() >= n_in:
            raise InputError(f"inflow_of_row must give an inflow row index in [0, {n_in}) for each routed case")
    r = irows.shape[0]
    if inflow_scale is None:
        scale = np.ones(r)
    else:
        scale = np.broadcast_to(check_range("inflow_scale", inflow_scale, 0.0), (r,)).astype(float)
    if table_of_row is None:
        if m == r:
            rows = np.arange(r)
        elif m == 1:
            rows = np.zeros(r, dtype=np.int64)
        else:
            raise InputError(f"{r} inflow rows and {m} tables: give table_of_row")
    else:
        rows = np.asarray(table_of_row, dtype=np.int64).reshape(-1)
        if rows.shape != (r,) or rows.min() < 0 or rows.max() >= m:
            raise InputError(f"table_of_row must give a table index in [0, {m}) for each of the {r} inflow rows")
    return (np.ascontiguousarray(inflow), dt, np.ascontiguousarray(depth), np.ascontiguousarray(storage),
            np.ascontiguousarray(out), rows, irows, np.ascontiguousarray(scale))


def route(inflow_cfs, dt_s, depth_ft, storage_cf, outflow_cfs, table_of_row=None, inflow_of_row=None, inflow_scale=None) -> RoutingResult:
    """Route inflow hydrographs through level pools; full series.

    Parameters
    ----------
    inflow_cfs : array_like, shape (r, T) or (T,)
        Inflow at uniform times 0, dt, ..., (T-1) dt [cfs], >= 0; each row starts with an empty pool.
    dt_s : float
        Time step [s].
    depth_ft, storage_cf : array_like, shape (n, K)
        Stage-storage tables (strictly increasing), e.g. from :mod:`capacitysim.hydraulics.storage`.
    outflow_cfs : array_like, shape (n, C, K) or (n, K)
        Outflow columns at each table stage [cfs] (orifice, infiltration, ...); their sum must not
        decrease with stage.
    table_of_row : array_like of int, shape (r,), optional
        The table of each routed case; default case i uses table i (or table 0 when n = 1).
    inflow_of_row, inflow_scale : array_like, shape (r,), optional
        Route case i with ``inflow_scale[i] * inflow_cfs[inflow_of_row[i]]`` (one hydrograph shape
        serving many designs without copies); default one case per inflow row, scale 1.

    Returns
    -------
    RoutingResult

    References
    ----------
    Chow, Maidment & Mays (1988) § 8.2; NEH 630 ch. 17; HEC-22 (2009) § 8.5.
    """
    inflow, dt, depth, storage, out, rows, irows, scale = _prepare(
        inflow_cfs, dt_s, depth_ft, storage_cf, outflow_cfs, table_of_row, inflow_of_row, inflow_scale)
    r, t = rows.shape[0], inflow.shape[1]
    c = out.shape[1]
    # the full series of every case and column: bounded before allocating (route_peaks keeps peaks only)
    check_steps(float(r) * (c + 2) * t, "the routed series", f"{r:,} cases x {c + 2} series x {t:,} times",
                limit=MAX_BATCH_VALUES, unit="values", hint="route_peaks, or fewer cases per call")
    stage = np.empty((r, t))
    stor = np.empty((r, t))
    outs = np.empty((r, c, t))
    peaks = np.empty((r, c + 2))
    clamped = np.empty(r)
    _route_rows(inflow, dt, depth, storage, out, rows, irows, scale, True, stage, stor, outs, peaks, clamped)
    return RoutingResult(stage, stor, outs, clamped)


def route_peaks(inflow_cfs, dt_s, depth_ft, storage_cf, outflow_cfs, table_of_row=None, inflow_of_row=None, inflow_scale=None,
                stop_at_peak=True) -> RoutingPeaks:
    """Like :func:`route` but keeps only the peaks (max stage, peak of each outflow column, max storage).

    The memory-light form used when sizing thousands of designs at once.

    With ``stop_at_peak`` (default) a case stops routing once its storage plus all the inflow volume
    still to come is at or below the maximum storage reached: by continuity no later storage, stage or
    (monotone) outflow can exceed the peaks, which are therefore exact, not approximate. It applies
    only when every outflow column is non-decreasing in stage; ``clamped_cf`` then counts only up to
    the stop.
    """
    inflow, dt, depth, storage, out, rows, irows, scale = _prepare(
        inflow_cfs, dt_s, depth_ft, storage_cf, outflow_cfs, table_of_row, inflow_of_row, inflow_scale)
    r = rows.shape[0]
    c = out.shape[1]
    dummy2 = np.empty((1, 1))
    dummy3 = np.empty((1, 1, 1))
    peaks = np.empty((r, c + 2))
    clamped = np.empty(r)
    remaining = None
    if stop_at_peak and not np.any(np.diff(out, axis=2) < -1e-12):
        remaining = _remaining_inflow_volume(inflow, dt)
    _route_rows(inflow, dt, depth, storage, out, rows, irows, scale, False, dummy2, dummy2, dummy3, peaks, clamped, remaining)
    return RoutingPeaks(peaks[:, 0], peaks[:, 1 : 1 + c], peaks[:, 1 + c], clamped)
