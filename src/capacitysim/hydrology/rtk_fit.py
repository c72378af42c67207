"""RTK unit hydrographs fitted to metered RDII, and the I/I credit they give on the design storm.

Issue 29, items 3 and 4: three RTK triangles with SWMM's initial abstraction are fitted by least
squares to the RDII of all wet-weather events of a metering period at once; the pre- and post-
rehabilitation sets are applied to the program's design storm, and the difference is the I/I
removed [gpd], with a bootstrap interval over events. Pure array math (numpy, scipy): the records
are read by :mod:`capacitysim.io` and decomposed into base flow, GWI and RDII before they come here.

The RTK response is the project's one convolution (:mod:`capacitysim.hydrology.rdii`: the triangle
:func:`~capacitysim.hydrology.rdii.rtk_kernel`, the abstraction
:func:`~capacitysim.hydrology.rdii.initial_abstraction_excess`, the batched sum
:func:`~capacitysim.hydrology.rdii.rtk_convolve_steps`), put on SWMM's clock: the value at a time t is
the response to the rain of the steps that ended by t, held over the step that follows, as SWMM
5.2 computes its RDII inflows and routes them [1]_ [3]_.

References
----------
.. [1] Rossman, L.A. (2016). SWMM Reference Manual Vol. I Hydrology, EPA/600/R-15/162A, sec. 10
   (RDII: the RTK triangular unit hydrographs; initial abstraction Dmax, recovery rate, initial depth).
.. [2] Rossman, L.A. (2022). SWMM 5.2 User's Manual, EPA/600/R-22/030, Appendix D: [HYDROGRAPHS]
   (R, T, K, Dmax, Drecov, Dinit per response), [RDII].
.. [3] USEPA SWMM 5.2, ``src/solver/rdii.c`` (``getRainfall``, ``applyIA``, ``getUnitHydConvol``,
   ``createRdiiFile``: the RDII at a processing time convolves the rain of the intervals before it;
   routing holds each value over one wet step), github.com/USEPA/Stormwater-Management-Model.
.. [4] Binghamton-Johnson City Joint Sewage Board, I/I Offset Program (effective 2013-01-01), section F
   (credits are withdrawn against the peak sewage flow of a connection) and Tables 174-19.1/19.2
   (credits in gpd; the design storm: 2.1 in, 24-hour, NRCS Type II).
.. [5] Vallabhaneni, S. et al. (2007). Computer Tools for Sanitary Sewer System Capacity Analysis and
   Planning (SSOAP toolbox), EPA/600/R-07/111, ch. 4-5 (RDII events, the RTK fit, goodness of fit).
.. [6] Efron, B. and Tibshirani, R.J. (1993). An Introduction to the Bootstrap, ch. 13 (percentile
   intervals).
.. [7] Hesterberg, T.C. (2015). What Teachers Should Know About the Bootstrap: Resampling in the
   Undergraduate Statistics Curriculum. The American Statistician 69(4), 371-386, sec. 5.5 (the
   expanded percentile interval for small samples).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from capacitysim.errors import InputError
from capacitysim.hydrology.rainfall import design_storm_depths
from capacitysim.hydrology.rdii import initial_abstraction_excess, rain_on_uniform_grid, rtk_convolve_steps
from capacitysim.units import CFS_PER_ACRE_INCH_PER_HOUR, GPD_PER_CFS, HOURS_PER_DAY

# --- policies (program choices: register them with the rules; hydrology may not import rules) ---
#: Basis of the credit on the design storm: the PEAK RDII rate [gpd]. The program withdraws credits
#: against the peak sewage flow of a connection (section F [4]_) and its Tables 174-19.1/19.2 state
#: credits as rates in gpd, so the I/I removed is the drop of the design storm's peak RDII rate.
CREDIT_BASIS = "peak"
#: The alternative basis: the design storm's whole RDII volume [gal] spread over one day [gpd]
#: (Table 174-19.2 note 1 reads its sump pump rate "over a twenty-four-hour-per-day period").
CREDIT_BASIS_ALTERNATIVE = "volume"
#: Bases :func:`design_storm_ii_gpd` accepts.
CREDIT_BASES = (CREDIT_BASIS, CREDIT_BASIS_ALTERNATIVE)
#: The credit claimed is the LOWER bound of the interval (the PE may claim the point value instead,
#: and the record says so): a measured credit is not claimed above what the records support.
CREDIT_CLAIM = "lower"
#: The alternative claim: the point value (design-storm I/I of the full-record fits).
CREDIT_CLAIM_ALTERNATIVE = "point"
#: Two-sided level of the credit's interval [-] (its lower bound is then a one-sided 95 % bound).
CREDIT_INTERVAL_LEVEL = 0.90
#: Fewest qualifying events in a period for a credit [-]: nine parameters are fitted to them and
#: the interval resamples them; with fewer than six events a bootstrap has under 462 distinct
#: resamples and one storm dominates the fit.
MIN_QUALIFYING_EVENTS = 6
#: Smallest rain depth of a qualifying event [in]: a quarter of the 2.1-in design storm gives an
#: RDII response well above a meter's noise in a typical sub-basin (SSOAP [5]_ fits events of about
#: 0.5 in and more).
MIN_EVENT_DEPTH_IN = 0.5
#: The largest event of a period must reach this depth [in] (about half the design storm), so the
#: design-storm figure is not an extrapolation from small storms only.
MIN_LARGEST_EVENT_IN = 1.0
#: Smallest share of an event's window with an observed (finite) RDII value for it to qualify [-].
MIN_EVENT_COVERAGE = 0.75
#: The program's design storm (Table 174-19.2 [4]_): 2.1 in, 24 hours, NRCS Type II.
DESIGN_STORM_DEPTH_IN = 2.1
DESIGN_STORM_DISTRIBUTION = "II"

# --- computation settings ------------------------------------------------------------------------
#: Default parameter bounds of the fit: R of each response [-]; T1 [hr]; the ratios T2/T1 and
#: T3/T2 [-] (at least 1.5: the responses stay ordered T1 < T2 < T3 and distinct, so they can be
#: told apart); K of each response [-] (K >= 1: a recession no shorter than the rise).
DEFAULT_BOUNDS = {"R": (0.0, 1.0), "T1": (0.25, 12.0), "T_ratio": (1.5, 30.0), "K": (1.0, 12.0)}
#: Weight of the residual that keeps R1 + R2 + R3 <= 1 (more RDII than rain on the area is not
#: physical): the fit's residuals are relative to each event's RMS flow, so 1e3 x the excess
#: makes a sum above 1 cost more than any misfit.
R_SUM_PENALTY = 1e3
#: Starting (T1 [hr], T2/T1, T3/T2, K) of the full fit; the start with the least cost is kept.
FIT_STARTS = ((0.75, 4.0, 4.0, 2.0), (2.0, 3.0, 3.0, 3.0), (0.5, 8.0, 3.0, 1.5))
#: Default number of bootstrap resamples of :func:`credit_interval`.
N_BOOT = 200
#: Tolerances (ftol, xtol, gtol of scipy's least_squares) of the bootstrap refits, warm-started from
#: the full fit: measured, they move the design-storm I/I by about 0.1 % (against 1e-8), far inside
#: the interval's width, at half the time.
BOOT_TOL = 1e-5
#: Share of the bootstrap refits that may fail before the interval is refused [-].
MAX_FAILED_BOOT = 0.05
#: Tolerance of time comparisons [hr].
_TIME_TOL_HR = 1e-9
#: Relative step of the forward differences in T and K of the fit's Jacobian [-].
_REL_STEP = 1e-6
#: Trust-region solver of scipy's least_squares: "lsmr" (iterative) was measured faster than "exact"
#: (an SVD of the tall Jacobian each iteration) for 30 events: 0.2-0.3 s against 0.4-0.7 s per refit.
TR_SOLVER = "lsmr"
_NAMES = ("R1", "R2", "R3", "T1", "T2", "T3", "K1", "K2", "K3")


@dataclass(frozen=True)
class RTKSet:
    """Three RTK responses (short, medium, long) with optional initial abstraction [2]_.

    ``R`` [-], ``T`` [hr], ``K`` [-] per response; ``ia`` None (no abstraction) or one
    (Dmax [in], Drec [in/day], Do [in]) per response, as a [HYDROGRAPHS] row takes them.
    """

    R: tuple
    T: tuple
    K: tuple
    ia: tuple | None = None

    def __post_init__(self):
        for name in ("R", "T", "K"):
            v = tuple(float(x) for x in getattr(self, name))
            if len(v) != 3 or not all(math.isfinite(x) for x in v):
                raise InputError(f"RTK set: {name} needs three finite values, got {getattr(self, name)!r}")
            object.__setattr__(self, name, v)
        if any(r < 0 for r in self.R) or any(k < 0 for k in self.K) or any(t <= 0 for t in self.T):
            raise InputError(f"RTK set: R >= 0, T > 0 and K >= 0 needed, got R={self.R}, T={self.T}, K={self.K}")
        if self.ia is not None:
            ia = tuple(tuple(float(x) for x in row) for row in self.ia)
            if len(ia) != 3 or any(len(r) != 3 or min(r) < 0 for r in ia):
                raise InputError(f"RTK set: ia needs three (Dmax, Drec, Do) rows of values >= 0, got {self.ia!r}")
            object.__setattr__(self, "ia", None if all(r[0] == 0 for r in ia) else ia)

    @classmethod
    def of(cls, params) -> RTKSet:
        """An RTKSet from itself or from three rows (R, T, K) or (R, T, K, Dmax, Drec, Do)."""
        if isinstance(params, RTKSet):
            return params
        rows = [tuple(r) for r in params]
        if len(rows) != 3 or any(len(r) not in (3, 6) for r in rows) or len({len(r) for r in rows}) != 1:
            raise InputError("RTK set: give three rows (R, T, K) or (R, T, K, Dmax, Drec, Do), one per response")
        ia = tuple(r[3:] for r in rows) if len(rows[0]) == 6 else None
        return cls(R=[r[0] for r in rows], T=[r[1] for r in rows], K=[r[2] for r in rows], ia=ia)

    def rows(self) -> list[tuple]:
        """(R, T, K, Dmax, Drec, Do) per response, as [HYDROGRAPHS] rows take them."""
        ia = self.ia or ((0.0, 0.0, 0.0),) * 3
        return [(self.R[i], self.T[i], self.K[i], *ia[i]) for i in range(3)]

    def scaled(self, c: float) -> RTKSet:
        """The same set with every R multiplied by ``c``."""
        return RTKSet(R=[c * r for r in self.R], T=self.T, K=self.K, ia=self.ia)

    @classmethod
    def from_dict(cls, d: dict, where: str = "RTK set") -> RTKSet:
        """The set :meth:`as_dict` wrote (``R1..R3, T1..T3, K1..K3`` and, with an initial abstraction,
        ``Dmax1, Drec1, Do1`` ... per response); a missing or non-numeric value is refused naming it."""
        if not isinstance(d, dict):
            raise InputError(f"{where}: not an object of R1..R3, T1..T3, K1..K3")

        def num(key):
            v = d.get(key)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise InputError(f"{where}: {key} must be a finite number; got {v!r}")
            return float(v)

        R, T, K = ([num(f"{p}{i}") for i in (1, 2, 3)] for p in "RTK")
        has_ia = any(f"Dmax{i}" in d for i in (1, 2, 3))
        ia = tuple((num(f"Dmax{i}"), num(f"Drec{i}"), num(f"Do{i}")) for i in (1, 2, 3)) if has_ia else None
        return cls(R=R, T=T, K=K, ia=ia)

    def as_dict(self) -> dict:
        d = dict(zip(_NAMES, (*self.R, *self.T, *self.K)))
        for i, row in enumerate(self.ia or ()):
            d.update({f"Dmax{i + 1}": row[0], f"Drec{i + 1}": row[1], f"Do{i + 1}": row[2]})
        return d


@dataclass(frozen=True)
class RdiiEvent:
    """One wet-weather event: its rain and the RDII observed on its window.

    ``rain_t_hr``/``rain_in``: start of each rainfall interval [hr] and its depth [in] (uniform
    intervals; the record may start before the window, so earlier rain still drains into it);
    ``t_hr``/``rdii_gpd``: the observed RDII [gpd] (NaN in gaps) at its times [hr], on the same clock.
    """

    rain_t_hr: np.ndarray
    rain_in: np.ndarray
    t_hr: np.ndarray
    rdii_gpd: np.ndarray
    name: str = ""

    def __post_init__(self):
        for a in ("rain_t_hr", "rain_in", "t_hr", "rdii_gpd"):
            object.__setattr__(self, a, np.asarray(getattr(self, a), float).ravel())
        if self.rain_t_hr.size != self.rain_in.size or self.t_hr.size != self.rdii_gpd.size:
            raise InputError(f"event {self.name!r}: rain times and depths, and RDII times and values, must pair up")
        if self.t_hr.size == 0 or not np.all(np.isfinite(self.rain_in)) or not np.all(np.isfinite(self.t_hr)):
            raise InputError(f"event {self.name!r}: needs RDII times and finite rain depths (fill or flag rain gaps first)")
        if np.any(self.rain_in < 0):
            raise InputError(f"event {self.name!r}: negative rain depth")

    @classmethod
    def of(cls, ev) -> RdiiEvent:
        if isinstance(ev, RdiiEvent):
            return ev
        return cls(ev["rain_t_hr"], ev["rain_in"], ev["t_hr"], ev["rdii_gpd"], str(ev.get("name", "")))

    def rain_depth_in(self) -> float:
        """Rain of the intervals starting inside the RDII window [in] (the event's rain depth)."""
        inside = (self.rain_t_hr >= self.t_hr[0] - _TIME_TOL_HR) & (self.rain_t_hr < self.t_hr[-1])
        return float(self.rain_in[inside].sum())

    def coverage(self) -> float:
        """Share of the window's values that are observed (finite) [-]."""
        return float(np.isfinite(self.rdii_gpd).mean())

    def volume_gal(self) -> float:
        """Observed RDII volume over the window [gal], gaps filled linearly in time."""
        ok = np.isfinite(self.rdii_gpd)
        if ok.sum() < 2:
            return float("nan")
        q = np.interp(self.t_hr, self.t_hr[ok], self.rdii_gpd[ok])
        return float(np.trapezoid(q, self.t_hr) / HOURS_PER_DAY)


# --------------------------------------------------------------------------- the response


def _gpd_per_in_hr(area_ac: float) -> float:
    return float(area_ac) * CFS_PER_ACRE_INCH_PER_HOUR * GPD_PER_CFS


def _step_hr(interval_hr: float, shortest_limb_hr: float) -> float:
    """SWMM's RDII processing step with WET_STEP equal to the rain interval: the interval, divided
    until it is no longer than the shortest rise or recession of the responses (rdii.c
    ``getRainInterval`` takes the minimum; here the step also divides the interval)."""
    n = max(1, math.ceil(interval_hr / min(interval_hr, shortest_limb_hr) - 1e-9))
    return interval_hr / n


class _Prepared:
    """An event on the computation grid: the (excess) rain intensity per response and the grid index
    of each observation (``j``: the observation at t takes the response at step j - 1, j = ceil((t - t0) / dt) - 1,
    so a value holds over (n dt, (n + 1) dt] as SWMM reports it; j = 0 is before the first rain, response 0)."""

    __slots__ = ("intens", "j", "obs", "ok", "n")

    def __init__(self, ev: RdiiEvent, dt: float, ia):
        if np.nansum(ev.rain_in) > 0:
            t0, depths, interval = rain_on_uniform_grid(ev.rain_t_hr, ev.rain_in)
            nsub = int(round(interval / dt))
            if nsub < 1 or abs(nsub * dt - interval) > 1e-6 * interval:
                raise InputError(f"event {ev.name!r}: the rain interval {interval:g} h is not a multiple of the step {dt:g} h")
            steps = np.repeat(depths / nsub, nsub)
        else:
            t0, steps = float(ev.t_hr[0]), np.zeros(1)
        j = np.ceil((ev.t_hr - t0) / dt - 1e-6).astype(np.int64) - 1
        j = np.clip(j, 0, None)
        n = int(max(steps.size, j.max()))
        steps = np.pad(steps, (0, n - steps.size))
        if ia is None:
            self.intens = [steps / dt]
        else:
            self.intens = [initial_abstraction_excess(steps, dt, *row) / dt for row in ia]
        self.j, self.n = j, n
        self.obs = ev.rdii_gpd
        self.ok = np.isfinite(ev.rdii_gpd)


class _Batch:
    """Events stacked for the fit: one intensity matrix per response (events x steps), the flat
    indices of the observed values, and the event of each."""

    def __init__(self, preps: list[_Prepared]):
        self.n_ev = len(preps)
        self.n = max(p.n for p in preps)
        n_resp = len(preps[0].intens)
        self.intens = []
        for k in range(n_resp):
            m = np.zeros((self.n_ev, self.n))
            for i, p in enumerate(preps):
                m[i, : p.n] = p.intens[k]
            self.intens.append(m)
        flat, valid, obs, which, allidx, allvalid = [], [], [], [], [], []
        for i, p in enumerate(preps):
            idx = i * self.n + np.maximum(p.j - 1, 0)
            allidx.append(idx)
            allvalid.append(p.j > 0)
            flat.append(idx[p.ok])
            valid.append((p.j > 0)[p.ok])
            obs.append(p.obs[p.ok])
            which.append(np.full(int(p.ok.sum()), i))
        self.flat, self.valid = np.concatenate(flat), np.concatenate(valid)
        self.obs, self.which = np.concatenate(obs), np.concatenate(which)
        self.allidx, self.allvalid = allidx, allvalid

    def columns(self, T, K, dt) -> list[np.ndarray]:
        """The response per unit R of each response over the whole grid (events x steps) [in/hr]."""
        return [rtk_convolve_steps(self.intens[min(k, len(self.intens) - 1)], T[k], K[k], dt) for k in range(3)]

    def column(self, k, T, K, dt) -> np.ndarray:
        """The response per unit R of response k alone, flattened [in/hr]."""
        return rtk_convolve_steps(self.intens[min(k, len(self.intens) - 1)], T, K, dt).ravel()

    def model_all(self, R, T, K, dt, gpd_per_in_hr) -> list[np.ndarray]:
        cols = self.columns(T, K, dt)
        total = sum(R[k] * c.ravel() for k, c in enumerate(cols))
        return [gpd_per_in_hr * total[idx] * v for idx, v in zip(self.allidx, self.allvalid)]


def rtk_response_gpd(params, area_ac: float, rain_t_hr, rain_in, t_hr) -> np.ndarray:
    """RDII [gpd] of three RTK responses with SWMM's initial abstraction, at the times ``t_hr``.

    Parameters
    ----------
    params : RTKSet or sequence of three (R, T, K) or (R, T, K, Dmax, Drec, Do)
        R [-], T [hr], K [-]; Dmax [in], Drec [in/day], Do [in] per response [2]_.
    area_ac : float
        Sewer area [ac].
    rain_t_hr, rain_in : array_like
        Start of each rainfall interval [hr] and its depth [in] (uniform intervals; missing
        intervals between them are dry).
    t_hr : array_like
        Times of the result [hr], on the clock of ``rain_t_hr``.

    Returns
    -------
    numpy.ndarray
        RDII [gpd] at ``t_hr``: as SWMM 5.2 computes it [3]_, the rain processed in steps of the
        rain interval (divided while longer than a response's rise T or recession K T), each
        response's rain reduced by its initial abstraction (``applyIA``) and convolved with its
        triangle sampled at mid-step (scaled to hold exactly R of the rain); the value over
        (n dt, (n + 1) dt] is the response to the rain of the steps ending by n dt (SWMM's routing
        holds each RDII value over one wet step, and its results at a step's end are the step's).

    References
    ----------
    [1]_, [2]_, [3]_.
    """
    p = RTKSet.of(params)
    if not area_ac > 0:
        raise InputError(f"RTK response: sewer area must be > 0 ac, got {area_ac!r}")
    rain_t_hr = np.asarray(rain_t_hr, float)
    interval = float(np.min(np.diff(np.unique(rain_t_hr)))) if rain_t_hr.size > 1 else 1.0
    limbs = [x for i in range(3) if p.R[i] > 0 for x in (p.T[i], p.T[i] * p.K[i]) if x > 0]
    dt = _step_hr(interval, min(limbs) if limbs else interval)
    ev = RdiiEvent(rain_t_hr, rain_in, t_hr, np.zeros(np.size(t_hr)))
    batch = _Batch([_Prepared(ev, dt, p.ia)])
    return batch.model_all(p.R, p.T, p.K, dt, _gpd_per_in_hr(area_ac))[0]


# --------------------------------------------------------------------------- the fit


@dataclass
class RtkFit:
    """An RTK set fitted to the events of one period.

    ``params``: the set; ``se``: approximate standard error of each of R1..K3 (from the Jacobian at
    the optimum; the residuals of a 15-min record are autocorrelated, so these are optimistic: the
    bootstrap of :func:`credit_interval` is the interval of record); ``events``: per event
    ``name``, ``rain_in``, ``n_obs``, ``nse`` (Nash-Sutcliffe), ``volume_error_pct``,
    ``peak_error_pct`` (fitted minus observed, over the observed values); ``fitted``: the fitted
    RDII [gpd] of each event at its ``t_hr`` (for plots beside ``rdii_gpd``).
    """

    params: RTKSet
    se: dict
    events: list
    fitted: list
    cost: float
    nfev: int
    success: bool
    message: str
    x: np.ndarray = field(repr=False)
    dt_hr: float = 0.0
    n_obs: int = 0

    def table(self) -> list[dict]:
        """The parameter table: name, value, standard error."""
        vals = self.params.as_dict()
        return [{"name": n, "value": vals[n], "se": self.se[n]} for n in _NAMES]


def _bounds_x(bounds: dict | None):
    b = dict(DEFAULT_BOUNDS)
    b.update(bounds or {})
    lo = np.array([b["R"][0]] * 3 + [b["T1"][0], b["T_ratio"][0], b["T_ratio"][0]] + [b["K"][0]] * 3, float)
    hi = np.array([b["R"][1]] * 3 + [b["T1"][1], b["T_ratio"][1], b["T_ratio"][1]] + [b["K"][1]] * 3, float)
    if np.any(lo >= hi) or lo[3] <= 0 or lo[4] <= 1 or np.any(lo[:3] < 0):
        raise InputError(f"RTK fit bounds: need 0 <= R, 0 < T1, ratios > 1 and lower < upper; got {b}")
    return lo, hi


def _rtk_of_x(x):
    T1 = x[3]
    T2 = T1 * x[4]
    return x[:3], (T1, T2, T2 * x[5]), x[6:9]


def _ia_of(ia):
    if ia is None:
        return None
    rows = tuple(tuple(float(v) for v in r) for r in ia)
    if len(rows) == 1:
        rows = rows * 3
    if len(rows) != 3 or any(len(r) != 3 for r in rows):
        raise InputError("RTK fit: ia is None or (Dmax [in], Drec [in/day], Do [in]) for one or all three responses")
    return None if all(r[0] <= 0 for r in rows) else rows


class _Problem:
    def __init__(self, preps, area_ac, dt, lo, hi):
        self.batch = _Batch(preps)
        self.k = _gpd_per_in_hr(area_ac)
        self.dt, self.lo, self.hi = dt, lo, hi
        # each event weighs the same: its residuals are divided by the RMS of its observations and by
        # the square root of its share of the observations (a large storm does not outweigh the rest)
        b = self.batch
        n_e = np.bincount(b.which, minlength=b.n_ev).astype(float)
        ms = np.bincount(b.which, weights=b.obs * b.obs, minlength=b.n_ev) / np.maximum(n_e, 1)
        rms = np.sqrt(ms)
        floor = max(float(np.sqrt(np.mean(b.obs * b.obs))) if b.obs.size else 0.0, 1e-12) * 1e-3
        rms = np.maximum(rms, floor)
        self.w = 1.0 / (rms[b.which] * np.sqrt(n_e[b.which] / n_e[n_e > 0].mean()))
        self._cache = None

    def _cols(self, x):
        if self._cache is None or not np.array_equal(self._cache[0], x):
            R, T, K = _rtk_of_x(x)
            self._cache = (x.copy(), [c.ravel()[self.batch.flat] for c in self.batch.columns(T, K, self.dt)])
        return self._cache[1]

    def residuals(self, x):
        cols = self._cols(x)
        R = x[:3]
        model = self.k * sum(R[k] * cols[k] for k in range(3)) * self.batch.valid
        r = (model - self.batch.obs) * self.w
        return np.append(r, R_SUM_PENALTY * max(0.0, float(np.sum(R)) - 1.0))

    def jacobian(self, x):
        """The Jacobian: exact in R (the response per unit R); in T and K by forward differences of
        each response alone (:data:`_REL_STEP`), carried to T1, T2/T1, T3/T2 by the chain rule."""
        cols = self._cols(x)
        R, T, K = _rtk_of_x(x)
        g = self.k * self.batch.valid * self.w
        J = np.zeros((cols[0].size + 1, 9), order="F")  # column-major: the solver's products on it run 2-3x faster
        dT, dK = [], []
        for k in range(3):
            J[:-1, k] = g * cols[k]
            hT, hK = _REL_STEP * T[k], _REL_STEP * max(K[k], 1.0)
            cT = self.batch.column(k, T[k] + hT, K[k], self.dt)[self.batch.flat]
            cK = self.batch.column(k, T[k], K[k] + hK, self.dt)[self.batch.flat]
            dT.append(g * R[k] * (cT - cols[k]) / hT)
            dK.append(g * R[k] * (cK - cols[k]) / hK)
            J[:-1, 6 + k] = dK[k]
        T1, q2, q3 = x[3], x[4], x[5]
        J[:-1, 3] = dT[0] + q2 * dT[1] + q2 * q3 * dT[2]
        J[:-1, 4] = T1 * dT[1] + T1 * q3 * dT[2]
        J[:-1, 5] = T1 * q2 * dT[2]
        if np.sum(R) > 1.0:
            J[-1, :3] = R_SUM_PENALTY
        return J

    def solve(self, x0, max_nfev=None, **kw):
        from scipy.optimize import least_squares

        x0 = np.clip(np.asarray(x0, float), self.lo, self.hi)
        return least_squares(self.residuals, x0, jac=self.jacobian, bounds=(self.lo, self.hi), method="trf",
                             x_scale="jac", tr_solver=TR_SOLVER, max_nfev=max_nfev, **kw)


def _starts(batch: _Batch, k: float, dt: float, lo, hi):
    """Starting points: R split 40/35/25 of the observed volume over the rain volume, for each of
    :data:`FIT_STARTS`."""
    rain = sum(float(m.sum()) for m in batch.intens[:1]) * dt  # in (over all events)
    obs_vol = float(batch.obs.sum()) / HOURS_PER_DAY * dt  # gpd x hr / 24 ~ gal, per sample spacing dt
    r_tot = float(np.clip(obs_vol / (k / HOURS_PER_DAY * rain) if rain > 0 else 0.05, 0.005, 0.9))
    out = []
    for T1, q2, q3, K in FIT_STARTS:
        out.append(np.clip(np.array([0.4 * r_tot, 0.35 * r_tot, 0.25 * r_tot, T1, q2, q3, K, K, K]), lo, hi))
    return out


def _nse(obs, fit):
    d = obs - obs.mean()
    den = float(np.sum(d * d))
    return float(1.0 - np.sum((obs - fit) ** 2) / den) if den > 0 else float("nan")


def _pct(a, b):
    return float(100.0 * (a - b) / b) if b != 0 else float("nan")


def _fit_dt(events: list[RdiiEvent], lo) -> float:
    intervals = []
    for ev in events:
        t = np.unique(ev.rain_t_hr)
        if t.size > 1:
            intervals.append(float(np.min(np.diff(t))))
    interval = min(intervals) if intervals else 1.0
    return _step_hr(interval, min(lo[3], lo[3] * lo[6]))


def fit_rtk(events, *, area_ac: float, bounds: dict | None = None, ia=None, start=None,
            max_nfev: int | None = None) -> RtkFit:
    """Fit three RTK responses to the RDII of all ``events`` at once by bounded least squares.

    Parameters
    ----------
    events : sequence of RdiiEvent (or mappings with its fields)
        The wet-weather events of one period (observed RDII [gpd], NaN in gaps, excluded).
    area_ac : float
        Sewer area [ac] (the RDII is R x rain x area).
    bounds : dict, optional
        Overrides of :data:`DEFAULT_BOUNDS` (``R``, ``T1``, ``T_ratio``, ``K``: (lower, upper)).
    ia : None or sequence of (Dmax [in], Drec [in/day], Do [in])
        Initial abstraction held fixed in the fit (one row for all responses, or three); Do
        applies at the start of each event's rain record. None: no abstraction.
    start : RTKSet, optional
        Starting set (a warm start); default: the best of the :data:`FIT_STARTS` starts.
    max_nfev : int, optional
        Largest number of residual evaluations of each start.

    Returns
    -------
    RtkFit

    Notes
    -----
    The parameters are R1..R3, T1, T2/T1, T3/T2 and K1..K3, each bounded, so T1 < T2 < T3 holds by
    construction; R1 + R2 + R3 <= 1 is imposed by a penalty residual (:data:`R_SUM_PENALTY`). The
    residuals are the fitted minus the observed RDII over every observed value of every event,
    divided by the RMS of the event's observations and by the square root of the event's share of the
    observations: each event weighs the same (a pooled fit in flow units is ruled by its largest
    storm, and the bootstrap over events then sees far fewer events than it resamples).

    Raises
    ------
    capacitysim.errors.InputError
        No event, no observed value, fewer observations than parameters.
    """
    evs = [RdiiEvent.of(e) for e in events]
    if not evs:
        raise InputError("RTK fit: no event")
    if not area_ac > 0:
        raise InputError(f"RTK fit: sewer area must be > 0 ac, got {area_ac!r}")
    lo, hi = _bounds_x(bounds)
    ia_rows = _ia_of(ia)
    dt = _fit_dt(evs, lo)
    preps = [_Prepared(e, dt, ia_rows) for e in evs]
    prob = _Problem(preps, area_ac, dt, lo, hi)
    if prob.batch.obs.size <= len(_NAMES):
        raise InputError(f"RTK fit: {prob.batch.obs.size} observed values for {len(_NAMES)} parameters")
    if start is not None:
        s = RTKSet.of(start)
        x0s = [np.array([*s.R, s.T[0], s.T[1] / s.T[0], s.T[2] / s.T[1], *s.K])]
    else:
        x0s = _starts(prob.batch, prob.k, dt, lo, hi)
    best = None
    for x0 in x0s:
        res = prob.solve(x0, max_nfev)
        if best is None or res.cost < best.cost:
            best = res
    return _result(prob, evs, best, ia_rows)


def _result(prob: _Problem, evs, res, ia_rows) -> RtkFit:
    x = res.x
    R, T, K = _rtk_of_x(x)
    params = RTKSet(R=R, T=T, K=K, ia=ia_rows)
    # standard errors: s^2 (J'J)^-1 in x, carried to (R, T, K) by the Jacobian G of the map
    J = res.jac[:-1]
    m, p = J.shape
    s2 = 2.0 * res.cost / max(m - p, 1)
    cov_x = s2 * np.linalg.pinv(J.T @ J)
    G = np.eye(9)
    G[4, 3], G[4, 4] = x[4], x[3]
    G[5, 3], G[5, 4], G[5, 5] = x[4] * x[5], x[3] * x[5], x[3] * x[4]
    cov = G @ cov_x @ G.T
    se = dict(zip(_NAMES, np.sqrt(np.clip(np.diag(cov), 0, None)) * 1.0))
    fitted = prob.batch.model_all(R, T, K, prob.dt, prob.k)
    rows = []
    for ev, f in zip(evs, fitted):
        ok = np.isfinite(ev.rdii_gpd)
        o, g = ev.rdii_gpd[ok], f[ok]
        rows.append({"name": ev.name, "rain_in": ev.rain_depth_in(), "n_obs": int(ok.sum()),
                     "nse": _nse(o, g) if o.size else float("nan"),
                     "volume_error_pct": _pct(float(g.sum()), float(o.sum())) if o.size else float("nan"),
                     "peak_error_pct": _pct(float(g.max()), float(o.max())) if o.size else float("nan")})
    return RtkFit(params=params, se=se, events=rows, fitted=fitted, cost=float(res.cost), nfev=int(res.nfev),
                  success=bool(res.success), message=str(res.message), x=x.copy(), dt_hr=prob.dt,
                  n_obs=int(prob.batch.obs.size))


# --------------------------------------------------------------------------- the design storm


def design_storm_ii_gpd(params, area_ac: float, *, depth_in: float = DESIGN_STORM_DEPTH_IN,
                        distribution: str = DESIGN_STORM_DISTRIBUTION, basis: str = CREDIT_BASIS) -> float:
    """I/I [gpd] of an RTK set on the program's design storm, on the credit basis.

    Parameters
    ----------
    params : RTKSet or rows (see :func:`rtk_response_gpd`)
    area_ac : float
        Sewer area [ac].
    depth_in, distribution : float, str
        The design storm (default Table 174-19.2's: 2.1 in, NRCS Type II 24-hour [4]_), as
        :func:`capacitysim.hydrology.rainfall.design_storm_depths` tabulates it (6-min steps).
    basis : {"peak", "volume"}
        ``peak`` (:data:`CREDIT_BASIS`): the peak RDII rate [gpd]; ``volume``
        (:data:`CREDIT_BASIS_ALTERNATIVE`): the storm's whole RDII volume [gal] (to the end of the
        slowest response) over one day [gpd].

    Returns
    -------
    float
        The I/I [gpd].

    References
    ----------
    [1]_, [4]_.
    """
    if basis not in CREDIT_BASES:
        raise InputError(f"design-storm I/I: basis must be one of {CREDIT_BASES}, got {basis!r}")
    p = RTKSet.of(params)
    t_end, depth = design_storm_depths(depth_in, distribution, dt_min=6.0)
    dt_rain = float(t_end[1] - t_end[0])
    t_start = t_end - dt_rain
    tail = max(T * (1 + K) for T, K in zip(p.T, p.K))
    t = np.arange(0.0, float(t_end[-1]) + tail + 2 * dt_rain, dt_rain / 4)
    q = rtk_response_gpd(p, area_ac, t_start, depth, t)
    if basis == "peak":
        return float(q.max())
    # the response is held over each step: the volume is the sum of the values x step
    return float(np.sum(q) * (t[1] - t[0]) / HOURS_PER_DAY)


# --------------------------------------------------------------------------- the credit


@dataclass
class CreditInterval:
    """The I/I removed on the design storm [gpd]: pre-period set minus post-period set.

    ``point_gpd`` from the fits of all events; ``lower_gpd``/``upper_gpd`` the expanded percentile
    bootstrap interval at ``level`` [6]_ [7]_; ``claimed_gpd`` the figure claimed (``claim``: "lower",
    :data:`CREDIT_CLAIM`, or "point"; never below 0); ``samples`` the bootstrap values.
    """

    point_gpd: float
    lower_gpd: float
    upper_gpd: float
    claimed_gpd: float
    claim: str
    level: float
    basis: str
    pre_ii_gpd: float
    post_ii_gpd: float
    n_boot: int
    n_failed: int
    seed: int | None
    pre_fit: RtkFit = field(repr=False)
    post_fit: RtkFit = field(repr=False)
    samples: np.ndarray = field(repr=False)
    seconds: float = 0.0

    def as_dict(self) -> dict:
        keys = ("point_gpd", "lower_gpd", "upper_gpd", "claimed_gpd", "claim", "level", "basis", "pre_ii_gpd",
                "post_ii_gpd", "n_boot", "n_failed", "seed", "seconds")
        return {k: getattr(self, k) for k in keys}


def credit_interval(pre_events, post_events, *, area_ac: float, n_boot: int = N_BOOT, seed: int | None = 0,
                    level: float = CREDIT_INTERVAL_LEVEL, basis: str = CREDIT_BASIS, claim: str = CREDIT_CLAIM,
                    ia=None, bounds: dict | None = None, depth_in: float = DESIGN_STORM_DEPTH_IN,
                    distribution: str = DESIGN_STORM_DISTRIBUTION, start=None) -> CreditInterval:
    """The I/I removed [gpd] = design-storm I/I of the pre set - that of the post set, with a
    bootstrap interval over events.

    Each resample draws the events of each period with replacement (as many as it has), refits both
    sets from the full fits (warm start) and recomputes the difference; the interval is the
    expanded percentile interval of the resamples [6]_ [7]_ (:func:`expanded_alpha`: the percentile
    interval widened for the number of events of the smaller period; with 8 events a 90 % interval
    takes the 2.1 % and 97.9 % points, with 30 events the 4.2 % and 95.8 % points). The credit claimed is the
    lower bound (:data:`CREDIT_CLAIM`) or, if the PE chooses, the point value; a negative figure
    claims 0.

    Parameters
    ----------
    pre_events, post_events : sequences of RdiiEvent
        The events before and after the rehabilitation, of the same sub-basin.
    area_ac : float
        Sewer area [ac].
    n_boot : int
        Number of resamples (:data:`N_BOOT`).
    seed : int or None
        Seed of the resampling (the record of the credit keeps it).
    level : float
        Two-sided level of the interval (:data:`CREDIT_INTERVAL_LEVEL`).
    basis : {"peak", "volume"}
        See :func:`design_storm_ii_gpd`.
    claim : {"lower", "point"}
        The figure claimed.
    ia, bounds, start : see :func:`fit_rtk` (``start`` for both periods' full fits).
    depth_in, distribution : the design storm (see :func:`design_storm_ii_gpd`).

    Returns
    -------
    CreditInterval

    Raises
    ------
    capacitysim.errors.InputError
        A period without events, a level outside (0, 1), an unknown claim, or more than
        :data:`MAX_FAILED_BOOT` of the refits failing.
    """
    import time

    if claim not in (CREDIT_CLAIM, CREDIT_CLAIM_ALTERNATIVE):
        raise InputError(f"credit: claim must be {CREDIT_CLAIM!r} or {CREDIT_CLAIM_ALTERNATIVE!r}, got {claim!r}")
    if not 0 < level < 1:
        raise InputError(f"credit: level must be in (0, 1), got {level!r}")
    if basis not in CREDIT_BASES:
        raise InputError(f"credit: basis must be one of {CREDIT_BASES}, got {basis!r}")
    tic = time.perf_counter()
    periods = []
    for label, events in (("pre", pre_events), ("post", post_events)):
        evs = [RdiiEvent.of(e) for e in events]
        if not evs:
            raise InputError(f"credit: no {label}-rehabilitation event")
        full = fit_rtk(evs, area_ac=area_ac, bounds=bounds, ia=ia, start=start)
        lo, hi = _bounds_x(bounds)
        preps = [_Prepared(e, full.dt_hr, _ia_of(ia)) for e in evs]
        periods.append((evs, full, preps, lo, hi))

    def ii(fit_params):
        return design_storm_ii_gpd(fit_params, area_ac, depth_in=depth_in, distribution=distribution, basis=basis)

    pre_ii, post_ii = ii(periods[0][1].params), ii(periods[1][1].params)
    rng = np.random.default_rng(seed)
    samples, failed = [], 0
    for _ in range(int(n_boot)):
        vals = []
        for evs, full, preps, lo, hi in periods:
            pick = rng.integers(0, len(evs), len(evs))
            prob = _Problem([preps[i] for i in pick], area_ac, full.dt_hr, lo, hi)
            try:
                res = prob.solve(full.x, ftol=BOOT_TOL, xtol=BOOT_TOL, gtol=BOOT_TOL)
            except (ValueError, np.linalg.LinAlgError):
                res = None
            if res is None or res.status <= 0:
                vals = None
                break
            R, T, K = _rtk_of_x(res.x)
            vals.append(ii(RTKSet(R=R, T=T, K=K, ia=full.params.ia)))
        if vals is None:
            failed += 1
            continue
        samples.append(vals[0] - vals[1])
    if n_boot > 0 and failed > MAX_FAILED_BOOT * n_boot:
        raise InputError(f"credit: {failed} of {n_boot} bootstrap refits failed; the events do not support an interval")
    samples = np.asarray(samples)
    point = pre_ii - post_ii
    n_small = min(len(periods[0][0]), len(periods[1][0]))
    if samples.size:
        a = expanded_alpha(level, n_small)
        lower, upper = (float(v) for v in np.quantile(samples, [a / 2, 1 - a / 2]))
    else:
        lower = upper = float("nan")
    claimed = max(lower if claim == CREDIT_CLAIM else point, 0.0)
    return CreditInterval(point_gpd=float(point), lower_gpd=lower, upper_gpd=upper, claimed_gpd=float(claimed),
                          claim=claim, level=float(level), basis=basis, pre_ii_gpd=pre_ii, post_ii_gpd=post_ii,
                          n_boot=int(n_boot), n_failed=failed, seed=seed, pre_fit=periods[0][1],
                          post_fit=periods[1][1], samples=samples, seconds=time.perf_counter() - tic)


def expanded_alpha(level: float, n: int) -> float:
    """Two-sided tail share of Hesterberg's expanded percentile interval [7]_ for ``n`` events.

    The percentile interval of a small sample is too narrow (the bootstrap spread carries a factor
    sqrt((n - 1)/n) and uses normal rather than t quantiles); the expanded interval takes the
    bootstrap quantiles at alpha'/2 and 1 - alpha'/2 with z(1 - alpha'/2) = sqrt(n/(n - 1)) x
    t(1 - alpha/2, n - 1), alpha = 1 - level. ``n`` is the smaller period's number of events.
    """
    from scipy import stats

    alpha = 1.0 - level
    if n < 2:
        return alpha
    z = math.sqrt(n / (n - 1)) * float(stats.t.ppf(1 - alpha / 2, n - 1))
    return float(2 * stats.norm.sf(z))


def rain_normalised(events) -> dict:
    """The rain-normalised check: event RDII volume [gal] against event rain depth [in], by least squares.

    Parameters
    ----------
    events : sequence of RdiiEvent
        The events of one period (call it for the pre and the post period).

    Returns
    -------
    dict
        ``slope_gal_per_in``, ``intercept_gal``, ``r2``, ``n``, and the points ``rain_in``,
        ``volume_gal`` (gaps filled linearly; events with fewer than two values are left out).
        With fewer than two events or one rain depth, slope and r2 are NaN.
    """
    evs = [RdiiEvent.of(e) for e in events]
    x = np.array([e.rain_depth_in() for e in evs])
    y = np.array([e.volume_gal() for e in evs])
    ok = np.isfinite(y)
    x, y = x[ok], y[ok]
    out = {"n": int(x.size), "rain_in": x, "volume_gal": y, "slope_gal_per_in": float("nan"),
           "intercept_gal": float("nan"), "r2": float("nan")}
    if x.size >= 2 and np.ptp(x) > 0:
        slope, intercept = np.polyfit(x, y, 1)
        ss = float(np.sum((y - y.mean()) ** 2))
        resid = y - (slope * x + intercept)
        out.update(slope_gal_per_in=float(slope), intercept_gal=float(intercept),
                   r2=float(1 - np.sum(resid ** 2) / ss) if ss > 0 else float("nan"))
    return out


def enough_events(events, *, min_events: int = MIN_QUALIFYING_EVENTS, min_depth_in: float = MIN_EVENT_DEPTH_IN,
                  min_largest_in: float = MIN_LARGEST_EVENT_IN,
                  min_coverage: float = MIN_EVENT_COVERAGE) -> tuple[bool, str]:
    """Whether a period's events support a credit figure, and why not.

    A qualifying event has at least ``min_depth_in`` of rain in its window and an observed RDII
    over at least ``min_coverage`` of it; a period needs ``min_events`` of them, the largest with at
    least ``min_largest_in`` (:data:`MIN_QUALIFYING_EVENTS`, :data:`MIN_EVENT_DEPTH_IN`,
    :data:`MIN_LARGEST_EVENT_IN`, :data:`MIN_EVENT_COVERAGE`).

    Returns
    -------
    (bool, str)
        True and a summary, or False and the reason (too short: too few events; too dry: no event
        large enough).
    """
    evs = [RdiiEvent.of(e) for e in events]
    depths = [e.rain_depth_in() for e in evs]
    qual = [d for e, d in zip(evs, depths) if d >= min_depth_in and e.coverage() >= min_coverage]
    if len(qual) < min_events:
        return False, (f"too few qualifying events: {len(qual)} of {len(evs)} have >= {min_depth_in:g} in of rain and "
                       f">= {min_coverage:.0%} of the RDII observed; {min_events} are needed (period too short or too dry)")
    if max(qual) < min_largest_in:
        return False, (f"too dry: the largest qualifying event has {max(qual):.2f} in; one of >= {min_largest_in:g} in "
                       f"is needed so the design storm is not extrapolated from small storms")
    return True, f"{len(qual)} qualifying events (>= {min_depth_in:g} in), the largest {max(qual):.2f} in"
