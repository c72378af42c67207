"""A continuous measure of a capacity run: how much of each criterion's margin a change uses.

:func:`capacitysim.rules.capacity.judge` answers pass or fail per element; a search for the largest
connection needs to know *how far* from failing a run is. :func:`margin_ratios` applies the same
criteria to the same two result datasets and returns, for every judged element and criterion, the
share of the margin the change used::

    r = (after - before) / (L - before)

where ``L`` is the value beyond which :func:`~capacitysim.rules.capacity.judge` fails the element
(its limit, or ``before`` + the criterion's tolerance when the element already was beyond the
limit). ``r > 1`` is a failure of that element (up to the strict/non-strict edge), ``r`` near 0 an
element the change does not reach. The keys name the criterion and the element (``"peak|PLANT"``,
``"dD|P0012"``, ...: :data:`KINDS`); :func:`check_key` gives the key of a :class:`Check`, so the
failed check that governs a run is the one with the largest ratio.

Pure functions of two datasets (``capacitysim.network.engine.read_results``) and the criteria; the
rules of :func:`~capacitysim.rules.capacity.judge` are restated here line by line (the proposed home
of this function is ``rules/capacity.py``, beside ``judge``).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from capacitysim.rules.capacity import Criteria
from capacitysim.rules.verdict import Check

#: Kinds of keys: criterion of :func:`~capacitysim.rules.capacity.judge` they stand for.
KINDS = {
    "flood": "no new or increased flooding",
    "freeboard": "no new surcharge within the freeboard of the rim (or the sealed junction's surcharge limit)",
    "storage": "storage max depth <= max fill",
    "dD": "max d/D (gravity sewers)",
    "fm": "force main max q/Qfull",
    "pump": "pump time off its curve",
    "peak": "peak inflow at the basin outlet or the plant",
    "cso": "CSO volume",
}

_TINY = 1e-12


def _ratio(after, before, limit):
    """(after - before) / (limit - before), element-wise; limit == before gives +-inf or 0."""
    after, before, limit = (np.asarray(x, float) for x in (after, before, limit))
    den = limit - before
    num = after - before
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(np.abs(den) > _TINY, num / np.where(np.abs(den) > _TINY, den, 1.0),
                     np.where(num > _TINY, np.inf, 0.0))
    return r


def margin_ratios(before: xr.Dataset, after: xr.Dataset, c: Criteria, *, outlets=(), plant: str | None = None,
                  cso_outfalls=()) -> dict[str, float]:
    """Share of the margin used, per judged element and criterion (``{key: r}``; ``r > 1`` fails).

    The same elements and limits as :func:`capacitysim.rules.capacity.judge` with the same
    ``outlets``, ``plant`` and ``cso_outfalls`` (the continuity checks are verdict conditions, not
    capacity: left out). Non-finite values (a link without d/D) are left out.
    """
    out: dict[str, float] = {}

    def put(kind, ids, r):
        for i, v in zip(ids, np.atleast_1d(np.asarray(r, float))):
            if np.isfinite(v) or v == np.inf:
                out[f"{kind}|{i}"] = float(v)

    nodes = before.node.values
    ntype = after.node_type.values
    fb, fa = before.flooding_volume_cf.values, after.flooding_volume_cf.values
    put("flood", nodes, _ratio(fa, fb, fb + c.flooding_tol_cf))
    rim = after.rim_depth_ft.values
    sur = after.surcharge_limit_ft.values if "surcharge_limit_ft" in after else np.zeros_like(rim)
    da, db = after.max_depth_ft.values, before.max_depth_ft.values
    sealed = (ntype == "JUNCTION") & (sur > 0)
    top = np.where(sealed, rim + sur, rim)
    # judge: fails when top - da < freeboard and da > db + depth_tol, i.e. da > max(top - freeboard, db + tol)
    sel = (ntype != "OUTFALL") & (top > 0)
    lim = np.maximum(top - c.freeboard_ft, db + c.depth_tol_ft)
    put("freeboard", nodes[sel], _ratio(da[sel], db[sel], lim[sel]))
    st = (ntype == "STORAGE") & (rim > 0)
    if st.any():
        fa_, fb_ = da[st] / rim[st], db[st] / rim[st]
        lim = np.where(fb_ <= c.storage_max_full, c.storage_max_full, fb_ + c.d_over_d_tol)
        put("storage", nodes[st], _ratio(fa_, fb_, lim))
    links = before.link.values
    shape = after.link_shape.values if "link_shape" in after else np.full(len(links), "", dtype=object)
    force_main = np.array([str(x) == "FORCE_MAIN" for x in shape], dtype=bool)
    ra, rb = after.max_d_over_d.values, before.max_d_over_d.values
    ok = ~force_main & np.isfinite(ra) & np.isfinite(rb)
    lim = np.where(rb <= c.max_d_over_d, c.max_d_over_d, rb + c.d_over_d_tol)
    put("dD", links[ok], _ratio(ra[ok], rb[ok], lim[ok]))
    qa, qb = after.max_q_over_qfull.values, before.max_q_over_qfull.values
    lq = c.force_main_max_q_over_qfull
    ok = force_main & np.isfinite(qa) & np.isfinite(qb)
    lim = np.where(qb <= lq, lq, qb + c.d_over_d_tol)
    put("fm", links[ok], _ratio(qa[ok], qb[ok], lim[ok]))
    if "pump_off_curve_pct" in after:
        pa, pb = after.pump_off_curve_pct.values, before.pump_off_curve_pct.values
        ok = np.isfinite(pa) & np.isfinite(pb)
        put("pump", links[ok], _ratio(pa[ok], pb[ok], pb[ok] + c.pump_off_curve_tol_pct))
    outl = list(dict.fromkeys(outlets))
    if plant is not None and plant not in outl and plant in before.node.values:
        outl.append(plant)
    for o in outl:
        qb_ = float(before.max_inflow_cfs.sel(node=o))
        qa_ = float(after.max_inflow_cfs.sel(node=o))
        put("peak", [o], _ratio(qa_, qb_, qb_ * (1 + c.outlet_peak_tol_pct / 100.0) + 1e-9))
    for o in cso_outfalls:
        vb = float(before.volume_cf.sel(outfall=o))
        va = float(after.volume_cf.sel(outfall=o))
        put("cso", [o], _ratio(va, vb, vb + max(vb * c.cso_volume_tol_pct / 100.0, c.cso_volume_tol_cf)))
    return out


def check_key(ch: Check) -> str | None:
    """The :func:`margin_ratios` key of a check of :func:`~capacitysim.rules.capacity.judge` (None: a run check)."""
    crit = ch.criterion
    if crit.startswith("no new or increased flooding"):
        kind = "flood"
    elif crit.startswith(("no new surcharge", "no new pressure")):
        kind = "freeboard"
    elif crit.startswith("storage max depth"):
        kind = "storage"
    elif crit.startswith("max d/D"):
        kind = "dD"
    elif crit.startswith("force main"):
        kind = "fm"
    elif crit.startswith("pump time off"):
        kind = "pump"
    elif crit.startswith("peak inflow"):
        kind = "peak"
    elif crit.startswith("CSO volume"):
        kind = "cso"
    else:
        return None
    return f"{kind}|{ch.element}"


def top_ratios(ratios: dict[str, float], k: int) -> dict[str, float]:
    """The ``k`` largest ratios (the elements nearest to failing)."""
    return dict(sorted(ratios.items(), key=lambda kv: -kv[1])[:k])
