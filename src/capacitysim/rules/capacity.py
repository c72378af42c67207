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
from dataclasses import asdict, dataclass, replace

import numpy as np

from capacitysim.checks import check_range
from capacitysim.errors import DataFileError, InputError
from capacitysim.rules.verdict import Check, verdict_from_checks
from capacitysim.xarray_setup import xr

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
    #: a spin-up may drain at most this share of what the run routes from the model's initial state [%]
    initial_state_max_pct: float = 10.0
    #: a change past a limit counts only beyond this many times the element's step-refinement noise (the
    #: safety factor Fs of Roache's grid convergence index for two grids); 0: no noise floor
    noise_factor: float = 3.0

    def __post_init__(self):
        for k, v in asdict(self).items():
            check_range(f"criteria.{k}", v, 0.0)

    @classmethod
    def from_dict(cls, d: dict, where: str = "criteria") -> Criteria:
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


#: The routing continuity's inflow terms (``capacitysim.network.engine.read_results`` attributes) [ft3].
ROUTING_INFLOWS = ("routing_dwInflow_cf", "routing_wwInflow_cf", "routing_gwInflow_cf", "routing_iiInflow_cf",
                   "routing_exInflow_cf")


def initial_state_pct(ds: xr.Dataset) -> float:
    """The share of a run's water that its initial state holds [%]: initial stored volume over that volume plus
    every inflow of the routing continuity (dry weather, wet weather, groundwater, RDII, external), whole run.

    A model whose event is its initial state (a full basin released by a gate, ponded water) routes mostly
    that volume; a network that starts from empty pipes or a wet well's start level holds a few percent at
    most. Source: the engine's Flow Routing Continuity table (EPA SWMM 5.2 Reference Manual Vol. II, 3.5;
    ``massbal.c``). NaN when the run has no such table.
    """
    v0, total = _routed_cf(ds)
    return v0 / total * 100.0 if total > 0 else math.nan


def _routed_cf(ds: xr.Dataset) -> tuple[float, float]:
    """A run's initial stored volume and all the water it routes (that volume plus :data:`ROUTING_INFLOWS`) [ft3]."""
    v0 = float(ds.attrs.get("routing_initStorage_cf", math.nan))
    return v0, v0 + sum(float(ds.attrs.get(k, 0.0)) for k in ROUTING_INFLOWS)


def spinup_drained_pct(ds: xr.Dataset, stored_at_start_cf: float) -> float:
    """The share of a run's water that a spin-up drained from the model's initial state [%].

    ``(V0 - V1) / (V0 + inflows)``: ``V0`` the initial stored volume of the run (the model's initial state at
    the moved start), ``V1`` the volume stored when the model's own period begins (the first reported value
    of the engine's system VOLUME_STORED), the inflows those of :func:`initial_state_pct`. Near zero or
    negative when the spin-up fills empty pipes or holds the initial state (a closed gate); large when the
    model's event is its initial state and the spin-up released it before the period judged.
    """
    v0, total = _routed_cf(ds)
    return (v0 - float(stored_at_start_cf)) / total * 100.0 if total > 0 else math.nan


def node_top_ft(ds: xr.Dataset) -> tuple[np.ndarray, np.ndarray]:
    """The top of every node [ft above its invert] and whether it is a sealed junction.

    The rim (full depth), or rim + surcharge depth for a sealed junction (SWMM surcharge depth > 0):
    the depth the freeboard criterion measures from.
    """
    ntype = ds.node_type.values
    rim = ds.rim_depth_ft.values
    sur = ds.surcharge_limit_ft.values if "surcharge_limit_ft" in ds else np.zeros_like(rim)
    sealed = (ntype == "JUNCTION") & (sur > 0)
    return np.where(sealed, rim + sur, rim), sealed


#: Slack on the peak-inflow comparison [cfs]: a peak equal to its limit up to rounding passes.
PEAK_SLACK_CFS = 1e-9
#: A margin smaller than this is no margin (:func:`margin_ratios` gives 0 or +inf) [unit of the criterion].
RATIO_TINY = 1e-12

#: The outlet checks (peak inflow, CSO volume): reported for every judged outlet, passed or not, and a value
#: that is not a number fails them (they must *show* the value within the limit).
OUTLET_KEYS = ("peak", "cso")
#: Criteria on ratios, whose infinite values are no values (never failed).
FINITE_ONLY = ("dD", "fm", "pump")
#: The criteria :func:`capacity_limits` returns, by key: (criterion, the result variable it compares).
LIMIT_KINDS = {
    "flood": ("no new or increased flooding", "flooding_volume_cf"),
    "freeboard": ("no new surcharge within the freeboard of the rim (or a sealed junction's surcharge limit)", "max_depth_ft"),
    "storage": ("storage max depth <= its share of full depth", "max_depth_ft / rim_depth_ft"),
    "dD": ("max d/D (gravity sewers)", "max_d_over_d"),
    "fm": ("force main max q/Qfull (capacity)", "max_q_over_qfull"),
    "pump": ("pump time off its curve", "pump_off_curve_pct"),
    "peak": ("peak inflow at the basin outlet or the plant", "max_inflow_cfs"),
    "cso": ("CSO volume", "volume_cf"),
}


@dataclass(frozen=True)
class Limits:
    """The limits of one criterion: the elements it judges, their value before, the value past which they fail.

    An element fails when its value after the change exceeds ``limit + slack`` (strictly): the one
    statement of every capacity rule, used by :func:`judge` (pass or fail), by the headroom search
    (the share of the margin a change uses) and by the stop rule of a run whose failure is certain
    (the same limits as engine statistics).

    Attributes
    ----------
    key : str
        One of :data:`LIMIT_KINDS`.
    ids : numpy.ndarray of str
        The judged elements (nodes, links, outlets or CSO outfalls).
    index : numpy.ndarray of int or None
        Their positions along the dataset's ``node`` or ``link`` dimension (None for ``peak`` and
        ``cso``, selected by id).
    before : numpy.ndarray of float
        Their value in the run before, in the unit of the variable (:data:`LIMIT_KINDS`).
    limit : numpy.ndarray of float
        The limit shown in a check (NaN: an element without the quantity, never failed).
    slack : float
        Added to ``limit`` in the comparison (:data:`PEAK_SLACK_CFS` for ``peak``, else 0).
    """

    key: str
    ids: np.ndarray
    index: np.ndarray | None
    before: np.ndarray
    limit: np.ndarray
    slack: float = 0.0

    def values(self, ds: xr.Dataset) -> np.ndarray:
        """The judged quantity of these elements in a result dataset (the run after, or before)."""
        if self.key == "flood":
            return ds.flooding_volume_cf.values[self.index]
        if self.key == "freeboard":
            return ds.max_depth_ft.values[self.index]
        if self.key == "storage":
            return ds.max_depth_ft.values[self.index] / ds.rim_depth_ft.values[self.index]
        if self.key == "dD":
            return ds.max_d_over_d.values[self.index]
        if self.key == "fm":
            return ds.max_q_over_qfull.values[self.index]
        if self.key == "pump":
            return ds.pump_off_curve_pct.values[self.index]
        if self.key == "peak":
            return np.array([float(ds.max_inflow_cfs.sel(node=o)) for o in self.ids], float)
        return np.array([float(ds.volume_cf.sel(outfall=o)) for o in self.ids], float)

    def failed(self, after_values: np.ndarray) -> np.ndarray:
        """Boolean mask: the elements whose value after exceeds ``limit + slack``.

        Values that are not numbers: the peak and CSO checks are reported for every judged outlet
        and must be *shown* within their limit, so NaN (an outlet the results lack) fails them
        (:data:`OUTLET_KEYS`); an element criterion skips an element without the quantity (NaN), and
        an infinite depth or flooded volume is an exceedance, while an infinite ratio (d/D,
        q/Qfull, a pump's share of time: no full-flow reference) is no value (:data:`FINITE_ONLY`).
        """
        a = np.asarray(after_values, float)
        lim = self.limit + self.slack
        with np.errstate(invalid="ignore"):
            if self.key in OUTLET_KEYS:
                return ~(a <= lim)
            over = a > lim
            return over & np.isfinite(a) if self.key in FINITE_ONLY else over

    def measured(self, after_values: np.ndarray) -> np.ndarray:
        """Boolean mask: the elements whose margin ratio is defined (:func:`margin_ratios`)."""
        a = np.asarray(after_values, float)
        ok = ~np.isnan(a) & np.isfinite(self.before) & np.isfinite(self.limit)
        return ok & np.isfinite(a) if self.key in FINITE_ONLY else ok


def capacity_limits(before: xr.Dataset, c: Criteria, *, static: xr.Dataset | None = None, outlets=(),
                    plant: str | None = None, cso_outfalls=()) -> list[Limits]:
    """The limit of every criterion for every element it judges, from the run before.

    * flooding (every node): ``before + flooding_tol_cf`` [ft3];
    * freeboard (junctions and storage with a rim, not outfalls): the depth past which the node is
      within ``freeboard_ft`` of its top *and* ``depth_tol_ft`` deeper than before,
      ``max(top - freeboard_ft, before + depth_tol_ft)`` [ft]; the top is the rim, or rim +
      surcharge depth for a sealed junction;
    * storage fill (storage with a full depth): ``storage_max_full``, or ``before + d_over_d_tol``
      when the storage was already past it [-];
    * d/D (gravity conduits) and q/Qfull (force mains): ``max_d_over_d`` or
      ``force_main_max_q_over_qfull``, or ``before + d_over_d_tol`` when already past it [-];
    * pumps: ``before + pump_off_curve_tol_pct`` [% of time];
    * peak inflow at each of ``outlets`` and at ``plant`` (when a node of the model):
      ``before * (1 + outlet_peak_tol_pct / 100)`` [cfs];
    * CSO volume at each of ``cso_outfalls``: ``before + max(before * cso_volume_tol_pct / 100,
      cso_volume_tol_cf)`` [ft3].

    Parameters
    ----------
    before : xarray.Dataset
        The run before (``capacitysim.network.engine.read_results``).
    c : Criteria
        The limits (named program policies).
    static : xarray.Dataset, optional
        Where the element types, rims, surcharge limits and link shapes are read (default ``before``;
        they are the model's, the same in both runs).
    outlets, plant, cso_outfalls
        The judged basin outlets, plant and CSO outfalls (:func:`judge`).

    Returns
    -------
    list of Limits
        In the order of the checks of :func:`judge`.

    References
    ----------
    BJC I/I offset program H(1); 15 RCNY § 18-36; the limits are the named policies of
    :class:`Criteria`.
    """
    s = before if static is None else static
    out: list[Limits] = []
    nodes = before.node.values
    ntype = s.node_type.values
    allnodes = np.arange(len(nodes))
    fb = before.flooding_volume_cf.values
    out.append(Limits("flood", nodes, allnodes, fb, fb + c.flooding_tol_cf))
    rim = s.rim_depth_ft.values
    db = before.max_depth_ft.values
    top, _ = node_top_ft(s)
    i = np.flatnonzero((ntype != "OUTFALL") & (top > 0))
    out.append(Limits("freeboard", nodes[i], i, db[i], np.maximum(top[i] - c.freeboard_ft, db[i] + c.depth_tol_ft)))
    i = np.flatnonzero((ntype == "STORAGE") & (rim > 0))
    fill = db[i] / rim[i]
    out.append(Limits("storage", nodes[i], i, fill, np.where(fill <= c.storage_max_full, c.storage_max_full,
                                                               fill + c.d_over_d_tol)))
    links = before.link.values
    shape = s.link_shape.values if "link_shape" in s else np.full(len(links), "", dtype=object)
    force_main = np.array([str(x) == "FORCE_MAIN" for x in shape], dtype=bool)
    with np.errstate(invalid="ignore"):
        for key, var, lim, sel in (("dD", "max_d_over_d", c.max_d_over_d, ~force_main),
                                   ("fm", "max_q_over_qfull", c.force_main_max_q_over_qfull, force_main)):
            i = np.flatnonzero(sel)
            b = before[var].values[i]
            # past the limit before: judged on the tolerance (NaN before: never failed)
            out.append(Limits(key, links[i], i, b, np.where(b <= lim, lim, b + c.d_over_d_tol)))
    if "pump_off_curve_pct" in before:
        pb = before.pump_off_curve_pct.values
        i = np.flatnonzero(np.isfinite(pb)) if len(pb) else np.zeros(0, int)
        out.append(Limits("pump", links[i], i, pb[i], pb[i] + c.pump_off_curve_tol_pct))
    outl = list(dict.fromkeys(outlets))
    # the plant too: paragraph H(1) asks for capacity "in the sewage collection system and treatment plant"
    if plant is not None and plant not in outl and plant in nodes:
        outl.append(plant)
    qb = np.array([float(before.max_inflow_cfs.sel(node=o)) for o in outl], float)
    out.append(Limits("peak", np.array(outl, dtype=object), None, qb, qb * (1 + c.outlet_peak_tol_pct / 100.0),
                      PEAK_SLACK_CFS))
    cso = list(cso_outfalls)
    vb = np.array([float(before.volume_cf.sel(outfall=o)) for o in cso], float)
    out.append(Limits("cso", np.array(cso, dtype=object), None, vb,
                      vb + np.maximum(vb * c.cso_volume_tol_pct / 100.0, c.cso_volume_tol_cf)))
    return out


def margin_ratios(before: xr.Dataset, after: xr.Dataset, c: Criteria, *, outlets=(), plant: str | None = None,
                  cso_outfalls=()) -> dict[str, float]:
    """Share of its margin a change uses, per judged element and criterion: ``{"key|element": r}``.

    ``r = (after - before) / (limit + slack - before)`` with the limits of :func:`capacity_limits`
    (those of :func:`judge`): ``r > 1`` exactly when judge fails the element, ``r`` near 0 for an
    element the change does not reach; a limit equal to the value before gives ``+inf`` for any
    rise. Elements without the quantity (NaN) are left out; the continuity checks are conditions of
    the verdict, not capacity, and have no ratio.
    """
    out: dict[str, float] = {}
    for lim in capacity_limits(before, c, static=after, outlets=outlets, plant=plant, cso_outfalls=cso_outfalls):
        a, b = lim.values(after), lim.before
        den, num = lim.limit + lim.slack - b, a - b
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(np.abs(den) > RATIO_TINY, num / np.where(np.abs(den) > RATIO_TINY, den, 1.0),
                         np.where(num > RATIO_TINY, np.inf, 0.0))
            r = np.where(lim.measured(a), r, np.nan)
        for ident, v in zip(lim.ids, r):
            if np.isfinite(v) or v == np.inf:
                out[f"{lim.key}|{ident}"] = float(v)
    return out


def judge(before: xr.Dataset, after: xr.Dataset, c: Criteria, *, outlets=(), plant: str | None = None,
          cso_outfalls=()) -> list[Check]:
    """Every criterion applied to every element by its type: a list of checks (failures and the outlet checks).

    The limits are those of :func:`capacity_limits` (one statement of each rule):

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
    top, sealed = node_top_ft(after)
    for lim in capacity_limits(before, c, static=after, outlets=outlets, plant=plant, cso_outfalls=cso_outfalls):
        a = lim.values(after)
        bad = lim.failed(a)
        if lim.key in OUTLET_KEYS:
            for k, o in enumerate(lim.ids):
                if lim.key == "peak":
                    where = "the plant" if o == plant else "the basin outlet"
                    d = {"criterion": f"peak inflow at {where} within +{c.outlet_peak_tol_pct:g} %", "kind": "node", "unit": "cfs"}
                else:
                    d = {"criterion": "CSO volume not increased beyond tolerance", "kind": "outfall", "unit": "ft3"}
                checks.append(_check({**d, "element": str(o), "before": float(lim.before[k]), "after": float(a[k]),
                                      "limit": float(lim.limit[k]), "passed": not bool(bad[k])}))
            continue
        for k in np.flatnonzero(bad):
            i = lim.index[k]
            b, v = float(lim.before[k]), float(a[k])
            if lim.key == "flood":
                d = {"criterion": "no new or increased flooding", "kind": "node", "limit": float(lim.limit[k]), "unit": "ft3"}
            elif lim.key == "freeboard":
                what = (f"no new pressure within {c.freeboard_ft:g} ft of the sealed junction's surcharge limit" if sealed[i]
                        else f"no new surcharge within {c.freeboard_ft:g} ft of the rim")
                d = {"criterion": what, "kind": "node", "limit": c.freeboard_ft, "unit": "ft freeboard"}
                b, v = float(top[i] - b), float(top[i] - v)
            elif lim.key == "storage":
                d = {"criterion": f"storage max depth <= {c.storage_max_full:g} of full", "kind": "storage",
                     "limit": c.storage_max_full, "unit": "-"}
            elif lim.key == "dD":
                d = {"criterion": f"max d/D <= {c.max_d_over_d:g} (gravity sewers)", "kind": "link",
                     "limit": c.max_d_over_d, "unit": "-"}
            elif lim.key == "fm":
                d = {"criterion": f"force main max q/Qfull <= {c.force_main_max_q_over_qfull:g} (capacity)", "kind": "link",
                     "limit": c.force_main_max_q_over_qfull, "unit": "-"}
            else:
                d = {"criterion": f"pump time off its curve rises <= {c.pump_off_curve_tol_pct:g} points", "kind": "pump",
                     "limit": float(lim.limit[k]), "unit": "% of time"}
            checks.append(_check({**d, "element": str(lim.ids[k]), "before": b, "after": v, "passed": False}))
    for name, ds in (("before", before), ("after", after)):
        err = continuity_error(ds)
        checks.append(_check({"criterion": f"continuity error within {c.continuity_limit_pct:g} %", "element": f"{name} run",
                       "kind": "run", "before": None, "after": float(err), "limit": c.continuity_limit_pct, "unit": "%",
                       "passed": bool(abs(err) <= c.continuity_limit_pct)}))
    return checks


def verdict_of(before: xr.Dataset, after: xr.Dataset, checks: list[Check], c: Criteria) -> str:
    """``untrusted`` when a run's continuity error exceeds the limit (or is not a number), else the verdict of the
    checks by the one rule of :func:`capacitysim.rules.verdict.verdict_from_checks` (a check the reviewer must
    confirm, ``passed`` None, does not fail the verdict)."""
    untrusted = any(not abs(continuity_error(ds)) <= c.continuity_limit_pct for ds in (before, after))
    return verdict_from_checks(checks, untrusted=untrusted)


#: Named policy of the noise floor (issue 26, class 5): how the model's own numerical uncertainty is measured.
NOISE_POLICY = ("step_refinement: when a check fails, the model before the change is run again with ROUTING_STEP "
                "x 1/2 and x 3/4; an element's noise is noise_factor x the larger |refined - before| of the judged "
                "quantity (Roache 1997, the grid "
                "convergence index with Fs = 3 for two grids, r = 2, p = 1; ASME V&V 20-2009); alternative: none, "
                "the absolute tolerances alone")


def step_noise(before, refined, factor: float):
    """The numerical noise of a quantity: ``factor`` x the largest ``|refined - before|`` over the finer-step runs.

    ``before`` a value or an array, ``refined`` one per finer-step run, same shape [the quantity's unit]. A
    difference that is not a number counts as none (a quantity a run lacks excuses nothing). The one statement
    of :data:`NOISE_POLICY`, for element checks, injected volumes and the reach alike.
    """
    b = np.asarray(before, float)
    with np.errstate(invalid="ignore"):
        dev = [np.abs(np.nan_to_num(np.asarray(r, float) - b, nan=0.0, posinf=0.0, neginf=0.0)) for r in refined]
    return factor * np.max(dev, axis=0)


@dataclass(frozen=True)
class WithinNoise:
    """A change past a limit no larger than the model's own numerical uncertainty there.

    Attributes
    ----------
    check : Check
        The check :func:`judge` gave (failed).
    key : str
        The criterion (:data:`LIMIT_KINDS`).
    change : float
        After minus before, in the unit of the judged variable (:data:`LIMIT_KINDS`).
    noise : float
        ``noise_factor x |refined - before|`` for the same variable and element [same unit].
    """

    check: Check
    key: str
    change: float
    noise: float
    #: False when the change cannot come from the connection (not downstream, no backwater reaches it)
    attributable: bool = True

    def to_dict(self) -> dict:
        return {"criterion": self.check.criterion, "element": self.check.element, "kind": self.check.kind,
                "quantity": LIMIT_KINDS[self.key][1], "change": float(self.change), "noise": float(self.noise),
                "attributable": self.attributable}


def separate_noise(checks: list[Check], before: xr.Dataset, after: xr.Dataset, refined, c: Criteria, *,
                   outlets=(), plant: str | None = None, cso_outfalls=(),
                   attributable=None) -> tuple[list[Check], list[WithinNoise]]:
    """The failed checks of :func:`judge` whose change is within the model's numerical uncertainty, set apart.

    The uncertainty of an element's judged quantity is ``c.noise_factor x max |refined - before|``, ``refined``
    being the run before repeated with finer routing steps (one dataset or several; :data:`NOISE_POLICY`): SWMM's dynamic wave is
    deterministic (two runs of one input are bit-identical), but where the network surcharges, floods or cycles
    pumps its solution moves by more than the absolute tolerances between runs that differ by a few ft3 or by
    the time step. A failed element check whose ``|after - before|`` is not larger than that is not a result
    of the model (Roache, P. J. (1997), Quantification of uncertainty in computational fluid dynamics, Annu.
    Rev. Fluid Mech. 29, 123-160; ASME V&V 20-2009, the numerical uncertainty u_num). Measured on the
    bundled 50- and 500-node models under a 6 in storm: with the factor 3 no connection of 200 gpd or less
    failed, against 11 and 32 failures without it, and 47 of 57 and 47 of 54 failures of 100,000 gpd and
    more were kept.

    ``attributable(check)``, when given, says whether a failed element check is where the change can act
    (downstream of it, or reached by its backwater: :mod:`capacitysim.network.reach`); a failure where it cannot
    is the model's noise whatever its size (issue 26, class 5: "say which changes are attributable to the
    connection ... and report the rest as noise"). Outlet checks are always attributable.

    Returns
    -------
    kept : list of Check
        The checks, without the failed element checks within the noise or not attributable; a failed outlet check (peak, CSO)
        within the noise stays, as a check the reviewer must confirm (``passed`` None, its requirement
        giving the noise).
    within : list of WithinNoise
        The failed checks within the noise (element and outlet checks).
    """
    if not c.noise_factor > 0:
        return list(checks), []
    runs = [refined] if isinstance(refined, xr.Dataset) else list(refined)
    failed = {(ch.element, ch.criterion): ch for ch in checks if ch.passed is False}
    if not failed:
        return list(checks), []
    by_element: dict[tuple[str, str], tuple[str, float, float]] = {}
    for lim in capacity_limits(before, c, static=after, outlets=outlets, plant=plant, cso_outfalls=cso_outfalls):
        a = lim.values(after)
        bad = lim.failed(a)
        if not bad.any():
            continue
        noise = step_noise(lim.before, [lim.values(r) for r in runs], c.noise_factor)
        with np.errstate(invalid="ignore"):
            change = a - lim.before
        for k in np.flatnonzero(bad):
            by_element[(lim.key, str(lim.ids[k]))] = (lim.key, float(change[k]), float(noise[k]))
    kept, within = [], []
    key_of = {"no new or increased flooding": "flood", "CSO volume not increased beyond tolerance": "cso"}
    for ch in checks:
        if ch.passed is not False or ch.kind == "run":
            kept.append(ch)
            continue
        key = key_of.get(ch.criterion) or _key_of(ch)
        hit = by_element.get((key, ch.element)) if key else None
        if hit is None:
            kept.append(ch)
            continue
        beyond = key not in OUTLET_KEYS and attributable is not None and not attributable(ch)
        if not beyond and not (math.isfinite(hit[1]) and abs(hit[1]) <= hit[2]):
            kept.append(ch)
            continue
        within.append(WithinNoise(ch, key, hit[1], hit[2], not beyond))
        if key in OUTLET_KEYS:
            kept.append(replace(ch, passed=None, requirement=(
                f"{ch.criterion}: the change, {hit[1]:+.4g} {LIMIT_KINDS[key][1].split('_')[-1]}, is within the model's "
                f"numerical uncertainty there, {hit[2]:.4g}")))
    return kept, within


def check_key(ch: Check) -> str | None:
    """The :func:`margin_ratios` key of a check of :func:`judge`, ``"kind|element"`` (None: a run check); the one
    reading of a check's words that headroom and sweeps use to find the governing check."""
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


def _key_of(ch: Check) -> str | None:
    """The criterion key of a check :func:`judge` wrote, from its words."""
    text = ch.criterion
    if text.startswith("peak inflow at"):
        return "peak"
    if "surcharge" in text or "pressure within" in text:
        return "freeboard"
    if text.startswith("storage max depth"):
        return "storage"
    if text.startswith("max d/D"):
        return "dD"
    if text.startswith("force main"):
        return "fm"
    if text.startswith("pump time"):
        return "pump"
    return None
