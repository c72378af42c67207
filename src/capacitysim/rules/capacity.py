"""Capacity criteria: judge a run after a change against the run before it, element by element.

The regulations require a demonstration of hydraulic capacity (BJC I/I offset program H(1); 15 RCNY
§ 18-36) and leave the measures to engineering practice. :class:`Criteria` holds those measures as
named policies; :func:`judge` applies each to every element by its type and returns
:class:`~capacitysim.rules.verdict.Check` records; :func:`verdict_of` turns them into a verdict,
``untrusted`` whenever a run's own mass balance is off. Pure functions of two result datasets
(``capacitysim.network.engine.read_results``); no files, no SWMM.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import xarray as xr

from capacitysim.checks import check_range
from capacitysim.errors import DataFileError, InputError
from capacitysim.rules.verdict import Check

#: Citation of the capacity checks.
CAPACITY_CITATION = "BJC I/I offset program H(1); 15 RCNY § 18-36; limits: capacitysim criteria (program policy)"


def _check(d: dict) -> Check:
    return Check(citation=CAPACITY_CITATION, **d)


@dataclass(frozen=True)
class Criteria:
    """Acceptance criteria comparing the run after a change with the run before it.

    The regulations ask for a demonstration of "hydraulic capacity" (BJC I/I offset program H(1);
    15 RCNY § 18-36) without numbers; these are named program policies with defaults a reviewer
    would accept, shown in every result document (``criteria``) so a reviewer can change them.
    Tolerances are in the units their names carry ([ft3], [ft], [%], [-]).
    """

    flooding_tol_cf: float = 1.0
    freeboard_ft: float = 1.0
    depth_tol_ft: float = 0.01
    outlet_peak_tol_pct: float = 1.0
    cso_volume_tol_pct: float = 1.0
    cso_volume_tol_cf: float = 100.0
    max_d_over_d: float = 0.8
    d_over_d_tol: float = 0.005
    continuity_limit_pct: float = 1.0
    #: force mains are pressurized: judged on capacity (max q/Qfull), not on d/D
    force_main_max_q_over_qfull: float = 1.0
    #: storage units: max depth as a fraction of full depth
    storage_max_full: float = 0.9
    #: pumps: time off their curve may rise at most this many percentage points
    pump_off_curve_tol_pct: float = 1.0
    #: injected volumes the engine received must match the intended ones within this [%]
    injected_volume_tol_pct: float = 2.0
    #: the rainfall the engine simulated must match the design storm within this [%]
    rainfall_tol_pct: float = 1.0

    def __post_init__(self):
        for k, v in asdict(self).items():
            check_range(f"criteria.{k}", v, 0.0)

    @classmethod
    def from_dict(cls, d: dict, where: str = "criteria") -> "Criteria":
        """Criteria from a mapping (a criteria TOML file, a sweep's ``[criteria]``, a service request).

        The one place criteria keys and values are validated: an unknown key, a value that is not a
        number, or a negative one raises :class:`~capacitysim.errors.DataFileError` naming ``where``,
        the key and the value.
        """
        if not isinstance(d, dict):
            raise DataFileError(f"{where}: criteria must be a table of numbers; got {type(d).__name__}")
        allowed = set(cls.__dataclass_fields__)
        unknown = sorted(map(str, set(d) - allowed))
        if unknown:
            raise DataFileError(f"{where}: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(sorted(allowed))})")
        bad = next((k for k, v in d.items() if isinstance(v, bool) or not isinstance(v, (int, float))), None)
        if bad is not None:
            raise DataFileError(f"{where}: criteria.{bad} must be a number; got {d[bad]!r}")
        try:
            return cls(**{k: float(v) for k, v in d.items()})
        except InputError as exc:
            raise DataFileError(f"{where}: {exc}") from None

    def to_dict(self) -> dict:
        """The criteria as a plain mapping (the JSON ``criteria`` record)."""
        return asdict(self)


def continuity_error(ds: xr.Dataset) -> float:
    """The larger (in magnitude) of the runoff and flow-routing continuity errors [%], signed."""
    a, b = ds.attrs["runoff_continuity_error_pct"], ds.attrs["flow_routing_continuity_error_pct"]
    if not (math.isfinite(a) and math.isfinite(b)):  # a run whose mass balance is not a number is not trusted
        return math.nan
    return a if abs(a) > abs(b) else b


def judge(before: xr.Dataset, after: xr.Dataset, c: Criteria, *, outlets=(), plant: str | None = None,
          cso_outfalls=()) -> list[Check]:
    """Every criterion applied to every element by its type: a list of checks (failures and the outlet checks).

    * flooding: every node;
    * freeboard to the rim: open (free-surface) junctions and storage; a sealed junction (SWMM
      surcharge depth > 0) is judged against its surcharge limit (rim + surcharge depth) instead;
    * d/D: gravity conduits (not FORCE_MAIN); force mains on capacity, max q/Qfull;
    * storage: max depth as a fraction of full depth; pumps: time off their curve;
    * peak inflow at each outlet in ``outlets`` (the basin outlets of the connections) and at the
      ``plant`` (when given and a node of the model: callers pass it when the change adds flow);
    * CSO volume at each of ``cso_outfalls``; continuity of both runs.

    Elements are named by their ids, so any caller (a demonstration, a sweep, headroom, the service)
    judges the same way from the same two result datasets.

    Returns
    -------
    list of Check
        The failed element checks, then the outlet, CSO and continuity checks (passed or not).

    References
    ----------
    BJC I/I offset program H(1) (capacity "in the sewage collection system and treatment plant");
    the limits are the named policies of :class:`Criteria`.
    """
    checks: list[Check] = []
    nodes = before.node.values
    ntype = after.node_type.values
    fb, fa = before.flooding_volume_cf.values, after.flooding_volume_cf.values
    for i in np.flatnonzero(fa > fb + c.flooding_tol_cf):
        checks.append(_check({"criterion": "no new or increased flooding", "element": str(nodes[i]), "kind": "node",
                       "before": float(fb[i]), "after": float(fa[i]), "limit": float(fb[i] + c.flooding_tol_cf),
                       "unit": "ft3", "passed": False}))
    rim = after.rim_depth_ft.values
    sur = after.surcharge_limit_ft.values if "surcharge_limit_ft" in after else np.zeros_like(rim)
    da, db = after.max_depth_ft.values, before.max_depth_ft.values
    sealed = (ntype == "JUNCTION") & (sur > 0)
    top = np.where(sealed, rim + sur, rim)
    candidate = (ntype != "OUTFALL") & (top > 0) & (top - da < c.freeboard_ft) & (da > db + c.depth_tol_ft)
    for i in np.flatnonzero(candidate):
        what = (f"no new pressure within {c.freeboard_ft:g} ft of the sealed junction's surcharge limit" if sealed[i]
                else f"no new surcharge within {c.freeboard_ft:g} ft of the rim")
        checks.append(_check({"criterion": what, "element": str(nodes[i]), "kind": "node", "before": float(top[i] - db[i]),
                       "after": float(top[i] - da[i]), "limit": c.freeboard_ft, "unit": "ft freeboard", "passed": False}))
    storage = np.flatnonzero((ntype == "STORAGE") & (rim > 0))
    for i in storage:
        fa_, fb_ = da[i] / rim[i], db[i] / rim[i]
        if fa_ > c.storage_max_full and (fb_ <= c.storage_max_full or fa_ > fb_ + c.d_over_d_tol):
            checks.append(_check({"criterion": f"storage max depth <= {c.storage_max_full:g} of full", "element": str(nodes[i]),
                           "kind": "storage", "before": float(fb_), "after": float(fa_), "limit": c.storage_max_full,
                           "unit": "-", "passed": False}))
    links = before.link.values
    shape = after.link_shape.values if "link_shape" in after else np.full(len(links), "", dtype=object)
    force_main = np.array([str(x) == "FORCE_MAIN" for x in shape], dtype=bool)
    ra, rb = after.max_d_over_d.values, before.max_d_over_d.values
    with np.errstate(invalid="ignore"):
        bad = ~force_main & np.isfinite(ra) & (ra > c.max_d_over_d) & ((rb <= c.max_d_over_d) | (ra > rb + c.d_over_d_tol))
    for i in np.flatnonzero(bad):
        checks.append(_check({"criterion": f"max d/D <= {c.max_d_over_d:g} (gravity sewers)", "element": str(links[i]),
                       "kind": "link", "before": float(rb[i]), "after": float(ra[i]), "limit": c.max_d_over_d,
                       "unit": "-", "passed": False}))
    qa, qb = after.max_q_over_qfull.values, before.max_q_over_qfull.values
    lim = c.force_main_max_q_over_qfull
    with np.errstate(invalid="ignore"):
        bad = force_main & np.isfinite(qa) & (qa > lim) & ((qb <= lim) | (qa > qb + c.d_over_d_tol))
    for i in np.flatnonzero(bad):
        checks.append(_check({"criterion": f"force main max q/Qfull <= {lim:g} (capacity)", "element": str(links[i]),
                       "kind": "link", "before": float(qb[i]), "after": float(qa[i]), "limit": lim, "unit": "-", "passed": False}))
    if "pump_off_curve_pct" in after:
        pa, pb = after.pump_off_curve_pct.values, before.pump_off_curve_pct.values
        with np.errstate(invalid="ignore"):
            bad = np.isfinite(pa) & (pa > pb + c.pump_off_curve_tol_pct)
        for i in np.flatnonzero(bad):
            checks.append(_check({"criterion": f"pump time off its curve rises <= {c.pump_off_curve_tol_pct:g} points",
                           "element": str(links[i]), "kind": "pump", "before": float(pb[i]), "after": float(pa[i]),
                           "limit": float(pb[i] + c.pump_off_curve_tol_pct), "unit": "% of time", "passed": False}))
    outlets = list(dict.fromkeys(outlets))
    # the plant too: paragraph H(1) asks for capacity "in the sewage collection system and treatment plant"
    if plant is not None and plant not in outlets and plant in before.node.values:
        outlets.append(plant)
    for o in outlets:
        qb = float(before.max_inflow_cfs.sel(node=o))
        qa = float(after.max_inflow_cfs.sel(node=o))
        limit = qb * (1 + c.outlet_peak_tol_pct / 100.0)
        where = "the plant" if o == plant else "the basin outlet"
        checks.append(_check({"criterion": f"peak inflow at {where} within +{c.outlet_peak_tol_pct:g} %", "element": o,
                       "kind": "node", "before": qb, "after": qa, "limit": limit, "unit": "cfs", "passed": bool(qa <= limit + 1e-9)}))
    for outfall in cso_outfalls:
        vb = float(before.volume_cf.sel(outfall=outfall))
        va = float(after.volume_cf.sel(outfall=outfall))
        limit = vb + max(vb * c.cso_volume_tol_pct / 100.0, c.cso_volume_tol_cf)
        checks.append(_check({"criterion": "CSO volume not increased beyond tolerance", "element": outfall,
                       "kind": "outfall", "before": vb, "after": va, "limit": limit, "unit": "ft3", "passed": bool(va <= limit)}))
    for name, ds in (("before", before), ("after", after)):
        err = continuity_error(ds)
        checks.append(_check({"criterion": f"continuity error within {c.continuity_limit_pct:g} %", "element": f"{name} run",
                       "kind": "run", "before": None, "after": float(err), "limit": c.continuity_limit_pct, "unit": "%",
                       "passed": bool(abs(err) <= c.continuity_limit_pct)}))
    return checks


def verdict_of(before: xr.Dataset, after: xr.Dataset, checks: list[Check], c: Criteria) -> str:
    """``untrusted`` when a run's continuity error exceeds the limit (or is not a number), else ``fail`` on any
    failed check, else ``pass``."""
    if any(not abs(continuity_error(ds)) <= c.continuity_limit_pct for ds in (before, after)):
        return "untrusted"
    return "fail" if any(not ch.passed for ch in checks) else "pass"
