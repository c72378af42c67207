"""SCS runoff curve number method: runoff depth, composite and impervious curve numbers.

The runoff core is a fused kernel (numba): one pass over the inputs that computes the runoff and
counts invalid cells, no temporaries; inputs broadcast like numpy's. A pure-numpy implementation of the same arithmetic,
in the same order, gives bit-identical results and serves when numba is absent or disabled with
``CAPACITYSIM_NO_NUMBA=1``.

References
----------
.. [1] USDA SCS (1986), Urban Hydrology for Small Watersheds, Technical Release 55 (TR-55),
   2nd ed., Chapter 2, equations 2-1 to 2-4, Tables 2-1 and 2-2a to 2-2c, Figures 2-3 and 2-4.
.. [2] USDA NRCS (2004), National Engineering Handbook Part 630, Chapter 10, Estimation of Direct
   Runoff from Storm Rainfall.
"""

from __future__ import annotations

import os

import numpy as np

from capacitysim.checks import check_finite_result, check_range, scalar_or_array
from capacitysim.errors import InputError
from capacitysim.hydrology import tables
from capacitysim.hydrology._inputs import MAX_PRECIP_IN, broadcast_shape

#: Curve number of impervious area in TR-55 Figures 2-3 and 2-4 and Table 2-2a [-].
IMPERVIOUS_CN = 98.0
#: TR-55 eq. 2-4: S = 1000/CN - 10 [in].
S_NUMERATOR_IN = 1000.0
S_OFFSET_IN = 10.0
#: TR-55 eq. 2-2: Ia = 0.2 S.
DEFAULT_IA_RATIO = 0.2
#: TR-55 Figure 2-4 applies only while total impervious area is under 30 percent [%].
UNCONNECTED_IMPERVIOUS_LIMIT_PCT = 30.0
#: TR-55 Figure 2-4: the unconnected share R reduces the impervious increment by 0.5 R.
UNCONNECTED_REDUCTION = 0.5
PERCENT = 100.0

_USE_NUMBA = os.environ.get("CAPACITYSIM_NO_NUMBA", "") not in ("1", "true", "yes")


def _runoff_numpy(precip_in, cn, ia_ratio):
    """Pure-numpy runoff kernel: the same operations, in the same order, as the fused kernel.

    Invalid inputs (CN outside (0, 100], precipitation outside [0, MAX_PRECIP_IN], negative Ia
    ratio, NaN) give NaN.
    """
    p = np.asarray(precip_in, dtype=np.float64)
    c = np.asarray(cn, dtype=np.float64)
    r = np.asarray(ia_ratio, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        s = S_NUMERATOR_IN / c - S_OFFSET_IN
        ia = r * s
        pe = p - ia
        q = np.where(pe > 0.0, pe * pe / (pe + s), 0.0)
        bad = ~((c > 0.0) & (c <= PERCENT) & (p >= 0.0) & (p <= MAX_PRECIP_IN) & (r >= 0.0))
    return np.where(bad, np.nan, q)


_kernel = None
if _USE_NUMBA:
    try:
        import numba

        # One pass over the inputs, branch-free so LLVM vectorizes it; error_model="numpy" drops
        # Python's division-by-zero checks (invalid cells are flagged, not raised). Counts the
        # invalid cells (CN outside (0, 100], P outside [0, MAX_PRECIP_IN], NaN) as it goes, so
        # validation costs no second pass.
        @numba.njit(cache=True, nogil=True, error_model="numpy")
        def _kernel(p, c, r, out):  # pragma: no cover - compiled
            bad = 0
            scalar_r = r.size == 1
            for i in range(p.size):
                pi = p[i]
                ci = c[i]
                ri = r[0] if scalar_r else r[i]
                s = S_NUMERATOR_IN / ci - S_OFFSET_IN
                ia = ri * s
                pe = pi - ia
                q = pe * pe / (pe + s)
                q = q if pe > 0.0 else 0.0
                ok = (ci > 0.0) & (ci <= PERCENT) & (pi >= 0.0) & (pi <= MAX_PRECIP_IN)
                out[i] = q if ok else np.nan
                bad += 0 if ok else 1
            return bad

    except ImportError:  # numba missing: the numpy kernel serves
        _kernel = None


def _flat(a: np.ndarray, shape) -> np.ndarray:
    """A contiguous 1-D view of ``a`` broadcast to ``shape`` (no copy when it already fits)."""
    return np.ascontiguousarray(np.broadcast_to(a, shape)).reshape(-1)


def _explain_bad_runoff_input(precip_in, cn, ia_ratio) -> None:
    """Raise the InputError that names the first invalid input."""
    check_range("precip_in", precip_in, 0.0, MAX_PRECIP_IN, unit="in")
    check_range("cn", cn, 0.0, PERCENT, low_inclusive=False)
    check_range("ia_ratio", ia_ratio, 0.0)
    raise InputError("runoff_depth: inputs are not finite numbers")  # inf caught above; defensive


def runoff_depth(precip_in, cn, ia_ratio=DEFAULT_IA_RATIO, *, kernel: str = "auto"):
    r"""Direct runoff depth by the SCS curve number method.

    .. math::

        S = \frac{1000}{CN} - 10, \quad I_a = \lambda S, \quad
        Q = \frac{(P - I_a)^2}{(P - I_a) + S} \text{ for } P > I_a, \text{ else } 0

    Parameters
    ----------
    precip_in : array_like
        Rainfall depth P [in], in [0, 200] (:data:`~capacitysim.hydrology._inputs.MAX_PRECIP_IN`:
        beyond any storm ever measured; larger is a unit error and overflows).
    cn : array_like
        Runoff curve number CN [-], in (0, 100].
    ia_ratio : array_like, default 0.2
        Initial abstraction ratio :math:`\lambda = I_a / S` [-], >= 0 (TR-55 uses 0.2).
    kernel : {"auto", "numba", "numpy"}
        Implementation; both give bit-identical results.

    Returns
    -------
    float or numpy.ndarray
        Runoff depth Q [in], broadcast over the inputs; a float for scalar inputs.

    Raises
    ------
    InputError
        For CN outside (0, 100], depth outside [0, 200] in, negative Ia ratio, NaN or text,
        and for input shapes that do not broadcast together.

    References
    ----------
    TR-55 (1986), Chapter 2, equations 2-1 to 2-4 and Table 2-1; NEH 630 Chapter 10, eq. 10-9
    to 10-12.
    """
    if kernel not in ("auto", "numba", "numpy"):
        raise InputError(f"kernel must be one of auto, numba, numpy; got {kernel!r}")
    if kernel == "numba" and _kernel is None:
        raise InputError("kernel 'numba' requested but numba is not available")
    try:
        p = np.asarray(precip_in, dtype=np.float64)
        c = np.asarray(cn, dtype=np.float64)
        r = np.asarray(ia_ratio, dtype=np.float64)
    except (TypeError, ValueError):
        _explain_bad_runoff_input(precip_in, cn, ia_ratio)
    if not np.all(r >= 0.0) or not np.all(np.isfinite(r)):
        check_range("ia_ratio", r, 0.0)
    shape = broadcast_shape(precip_in=p, cn=c, ia_ratio=r)
    if kernel == "numpy" or _kernel is None:
        q = _runoff_numpy(p, c, r)
        if np.isnan(q).any():
            _explain_bad_runoff_input(p, c, r)
        return scalar_or_array(q)
    out = np.empty(shape, dtype=np.float64)
    r_flat = r.reshape(-1) if r.size == 1 else _flat(r, shape)
    if _kernel(_flat(p, shape), _flat(c, shape), r_flat, out.reshape(-1)):
        _explain_bad_runoff_input(p, c, r)
    return scalar_or_array(out)


def potential_retention_in(cn):
    """Potential maximum retention S [in] after runoff begins, S = 1000/CN - 10.

    Parameters
    ----------
    cn : array_like
        Curve number [-], in (0, 100].

    Returns
    -------
    float or numpy.ndarray
        S [in].

    Raises
    ------
    InputError
        For CN outside (0, 100], and for a CN so close to 0 that S overflows (CN below about 1e-305).

    References
    ----------
    TR-55 (1986), Chapter 2, eq. 2-4.
    """
    cn = check_range("cn", cn, 0.0, PERCENT, low_inclusive=False)
    with np.errstate(over="ignore", divide="ignore"):
        s = S_NUMERATOR_IN / cn - S_OFFSET_IN
    check_finite_result("S = 1000/CN - 10", s, f"cn = {_describe(cn)}")
    return scalar_or_array(s)


def initial_abstraction_in(cn, ia_ratio=DEFAULT_IA_RATIO):
    """Initial abstraction Ia [in] = 0.2 (1000/CN - 10) (TR-55 Table 4-1 tabulates it).

    Parameters
    ----------
    cn : array_like
        Curve number [-], in (0, 100].
    ia_ratio : array_like, default 0.2
        Ia / S [-], >= 0.

    Returns
    -------
    float or numpy.ndarray
        Ia [in].

    References
    ----------
    TR-55 (1986), Chapter 2, eq. 2-2; Chapter 4, Table 4-1.
    """
    ia_ratio = check_range("ia_ratio", ia_ratio, 0.0)
    with np.errstate(over="ignore", invalid="ignore"):
        ia = ia_ratio * np.asarray(potential_retention_in(cn))
    check_finite_result("Ia = ia_ratio x S", ia, f"ia_ratio = {_describe(ia_ratio)}, cn = {_describe(cn)}")
    return scalar_or_array(ia)


def _describe(value) -> str:
    """A value for a message: the number for a scalar, the shape for an array."""
    arr = np.asarray(value)
    return f"{arr.item():g}" if arr.size == 1 else f"an array of shape {arr.shape}"


def composite_cn(cn, area, axis=-1):
    """Area-weighted composite curve number.

    Parameters
    ----------
    cn : array_like
        Curve numbers of the sub-areas [-], in (0, 100].
    area : array_like
        Sub-areas in any one unit [e.g. ac], >= 0, broadcastable to ``cn``, not all zero.
    axis : int, default -1
        The axis of sub-areas to sum over.

    Returns
    -------
    float or numpy.ndarray
        Composite CN [-].

    References
    ----------
    TR-55 (1986), Chapter 2, "Composite curve numbers" and Worksheet 2 (area-weighted CN).
    """
    cn = check_range("cn", cn, 0.0, PERCENT, low_inclusive=False)
    area = check_range("area", area, 0.0)
    broadcast_shape(cn=cn, area=area)
    cn, area = np.broadcast_arrays(cn, area)
    total = area.sum(axis=axis)
    if np.any(total <= 0.0):
        raise InputError("area must not sum to zero over the sub-areas (got a total of 0)")
    return scalar_or_array((cn * area).sum(axis=axis) / total)


def impervious_cn(pervious_cn, impervious_pct, unconnected_fraction=0.0):
    r"""Composite CN of an area with impervious cover (TR-55 Figures 2-3 and 2-4).

    Connected impervious area (Figure 2-3):

    .. math:: CN_c = CN_p + \frac{P_{imp}}{100} (98 - CN_p)

    With unconnected impervious area and total impervious area under 30 % (Figure 2-4):

    .. math:: CN_c = CN_p + \frac{P_{imp}}{100} (98 - CN_p) (1 - 0.5 R)

    where R is the unconnected share of the impervious area. At 30 % impervious or more the
    unconnected share is ignored (Figure 2-3 is used), as TR-55 directs.

    Parameters
    ----------
    pervious_cn : array_like
        CN of the pervious part [-], in (0, 100].
    impervious_pct : array_like
        Total impervious area, percent of the area [%], in [0, 100].
    unconnected_fraction : array_like, default 0
        R, unconnected impervious area / total impervious area [-], in [0, 1].

    Returns
    -------
    float or numpy.ndarray
        Composite CN [-].

    References
    ----------
    TR-55 (1986), Chapter 2, "Connected impervious areas" (Figure 2-3) and "Unconnected
    impervious areas" (Figure 2-4).
    """
    cnp = check_range("pervious_cn", pervious_cn, 0.0, PERCENT, low_inclusive=False)
    pimp = check_range("impervious_pct", impervious_pct, 0.0, PERCENT, unit="%")
    r = check_range("unconnected_fraction", unconnected_fraction, 0.0, 1.0)
    broadcast_shape(pervious_cn=cnp, impervious_pct=pimp, unconnected_fraction=r)
    reduction = np.where(pimp < UNCONNECTED_IMPERVIOUS_LIMIT_PCT, 1.0 - UNCONNECTED_REDUCTION * r, 1.0)
    return scalar_or_array(cnp + (pimp / PERCENT) * (IMPERVIOUS_CN - cnp) * reduction)


CN_TABLES = {
    "TR-55": ("TR-55 2-2a", "TR-55 2-2b", "TR-55 2-2c", "TR-55 2-2d"),
    "BJC 174-19.3": ("BJC 174-19.3",),
}
SOIL_GROUPS = ("A", "B", "C", "D")


def cover_types(table: str = "TR-55") -> list[str]:
    """The cover keys :func:`curve_number` knows for a table family.

    Parameters
    ----------
    table : {"TR-55", "BJC 174-19.3"}
        Table family.

    Returns
    -------
    list of str
        Sorted cover keys.

    References
    ----------
    TR-55 (1986), Tables 2-2a to 2-2d; BJC I/I Offset Program, Table 174-19.3.
    """
    if table not in CN_TABLES:
        raise InputError(f"table must be one of {', '.join(CN_TABLES)}; got {table!r}")
    keys = tables.curve_number_table()
    return sorted({cover for (t, cover) in keys if t in CN_TABLES[table]})


def _lookup_cn(cover: str, soil: str, table: str) -> float:
    data = tables.curve_number_table()
    soil_key = str(soil).strip().upper()
    if soil_key not in SOIL_GROUPS:
        raise InputError(f"soil_group must be one of A, B, C, D; got {soil!r}")
    for t in CN_TABLES[table]:
        row = data.get((t, cover))
        if row is not None:
            value = row[soil_key]
            if np.isnan(value):
                raise InputError(f"cover {cover!r} has no curve number for soil group {soil_key} in {t}")
            return value
    raise InputError(
        f"cover {cover!r} is not in {table} (allowed: {', '.join(cover_types(table))})"
    )


def curve_number(cover, soil_group, table: str = "TR-55"):
    """Runoff curve number of a cover type and hydrologic soil group, by table lookup.

    Parameters
    ----------
    cover : str or array_like of str
        Cover key, e.g. ``"open_space_good"``, ``"impervious"``, ``"residential_1_4_acre"``,
        ``"woods_fair"`` (see :func:`cover_types`).
    soil_group : str or array_like of str
        Hydrologic soil group, ``"A"`` to ``"D"``.
    table : {"TR-55", "BJC 174-19.3"}
        ``"TR-55"``: TR-55 Tables 2-2a (urban), 2-2b (cultivated agricultural) and 2-2c (other
        agricultural). ``"BJC 174-19.3"``: the Binghamton-Johnson City I/I offset program's
        Table 174-19.3, which the program requires for inflow credits.

    Returns
    -------
    float or numpy.ndarray
        CN [-] (antecedent runoff condition II, Ia = 0.2 S), broadcast over the inputs.

    References
    ----------
    TR-55 (1986), Chapter 2, Tables 2-2a, 2-2b, 2-2c; Binghamton-Johnson City Joint Sewage
    Treatment Plant, I/I Offset Program, Table 174-19.3.
    """
    if table not in CN_TABLES:
        raise InputError(f"table must be one of {', '.join(CN_TABLES)}; got {table!r}")
    broadcast_shape(cover=np.asarray(cover, dtype=str), soil_group=np.asarray(soil_group, dtype=str))
    cover_arr, soil_arr = np.broadcast_arrays(np.asarray(cover, dtype=str), np.asarray(soil_group, dtype=str))
    # Look up each distinct (cover, soil) pair once; no Python loop over cells.
    pairs = np.char.add(np.char.add(cover_arr.reshape(-1), "\x1f"), soil_arr.reshape(-1))
    unique, inverse = np.unique(pairs, return_inverse=True)
    values = np.array([_lookup_cn(*u.split("\x1f"), table) for u in unique], dtype=np.float64)
    out = values[inverse].reshape(cover_arr.shape)
    return scalar_or_array(out)
