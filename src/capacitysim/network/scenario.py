"""Scenario edits of a SWMM model (with swmmio): new connections, I/I remediation, the design storm.

Each edit is a small frozen dataclass; :func:`write_scenario` applies a list of them to a copy of
the model and writes the edited ``.inp`` into a work folder (never next to the input).

Flows are given in gpd and converted to the model's FLOW_UNITS with
:data:`capacitysim.units.GPD_PER_CFS` and :data:`capacitysim.network.engine.CFS_PER_FLOW_UNIT`.

References
----------
.. [1] Rossman, L.A. (2022). SWMM 5.2 User's Manual, EPA/600/R-22/030, Appendix D: [DWF] (average
   value times time patterns), [INFLOWS] (baseline + scale factor x time series), [RDII] (sewer area
   times the RTK unit hydrograph), [HYDROGRAPHS] (R, T, K per response), [RAINGAGES].
.. [2] Rossman, L.A. (2016). SWMM Reference Manual Vol. I Hydrology, EPA/600/R-15/162A, sec. 10
   (RDII: the RTK triangular unit hydrographs, peak at T, recession K T, volume R x rainfall x area).
.. [3] Binghamton-Johnson City Joint Sewage Board, I/I Offset Program (effective 2013-01-01), sewer
   flow credit bank paragraphs E (flow credits in gallons per day) and F (credits equal to the
   estimated peak sewage flow rate increase, one-to-one); Table 174-19.2 (printed "Table 174-19-2",
   Inflow Guidelines: sump pumps 5 gpm; roof drains by TR-55, 1-year 24-hour Type II storm, 2.1 in);
   Table 174-19.3 (curve numbers). The program text numbers its tables but not its sections, so
   paragraphs are cited by section name and letter.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from capacitysim.errors import InputError
from capacitysim.network.engine import CFS_PER_FLOW_UNIT
from capacitysim.network.model import SwmmInp
from capacitysim.units import (
    CFS_PER_ACRE_INCH_PER_HOUR,
    GPD_PER_CFS,
    MILLIMETERS_PER_INCH,
    MINUTES_PER_HOUR,
    INCHES_PER_FOOT,
    SECONDS_PER_HOUR,
    SQFT_PER_ACRE,
    METERS_PER_FOOT,
)

#: Name prefix of the time series and patterns capacitysim adds to a model.
PREFIX = "CAPSIM_"


# --------------------------------------------------------------------------- edits


@dataclass(frozen=True)
class Connection:
    """A new or modified sewer connection at a node.

    ``flow_gpd`` is the average daily flow [gpd]. ``peaking="pattern"`` adds it to the node's
    [DWF] with the node's own time patterns (or the model's most used ones), so the model's
    diurnal curve peaks it; a number adds ``flow_gpd x factor`` as a constant [INFLOWS] baseline
    (the design peak held for the whole run, the conservative reading of credit bank paragraph F [3]_).
    """

    node: str
    flow_gpd: float
    peaking: str | float = "pattern"
    label: str = ""

    def __post_init__(self):
        if not (isinstance(self.flow_gpd, (int, float)) and math.isfinite(self.flow_gpd) and self.flow_gpd > 0):
            raise InputError(f"connection at {self.node}: flow must be a number of gpd > 0; got {self.flow_gpd!r}")
        if self.peaking != "pattern":
            pf = self.peaking
            if not (isinstance(pf, (int, float)) and math.isfinite(pf) and pf >= 1):
                raise InputError(f"connection at {self.node}: peaking must be 'pattern' or a factor >= 1; got {pf!r}")

    @classmethod
    def from_program(cls, node: str, units: float, gpd_per_unit: float, peaking: str | float = "pattern",
                     label: str = "") -> "Connection":
        """A connection from a building program: ``units`` x design flow per unit [gpd/unit]."""
        if not (units > 0 and gpd_per_unit > 0):
            raise InputError(f"building program at {node}: units and gpd per unit must be > 0; got {units!r} x {gpd_per_unit!r}")
        return cls(node, float(units) * float(gpd_per_unit), peaking, label or f"{units:g} units x {gpd_per_unit:g} gpd")


@dataclass(frozen=True)
class Remediation:
    """I/I remediation in a sewershed: reduce the RDII of ``nodes`` by a fraction or by a rate.

    Exactly one of ``fraction`` (0-1 of the RDII, applied to the [RDII] sewer areas) and
    ``gpd`` (removed I/I [gpd], converted to a fraction of the sewershed's peak RDII rate under
    the run's rainfall by :func:`rdii_peak_cfs`, the RTK hydrograph without initial abstraction)
    is given. ``basin`` names the basin outlet the nodes came from (for the record).
    """

    nodes: tuple[str, ...]
    fraction: float | None = None
    gpd: float | None = None
    basin: str = ""

    def __post_init__(self):
        if (self.fraction is None) == (self.gpd is None):
            raise InputError("remediation: give exactly one of fraction= and gpd=")
        if self.fraction is not None and not (0 < self.fraction <= 1):
            raise InputError(f"remediation fraction must be in (0, 1]; got {self.fraction!r}")
        if self.gpd is not None and not (math.isfinite(self.gpd) and self.gpd > 0):
            raise InputError(f"remediation gpd must be a number > 0; got {self.gpd!r}")
        if not self.nodes:
            raise InputError("remediation: the sewershed has no nodes")


@dataclass(frozen=True)
class Storm:
    """A design storm as a rain gauge time series: incremental depths [in] every ``dt_min``."""

    depth_in: tuple[float, ...]
    dt_min: float
    name: str = "design storm"
    start_hr: float = 0.0

    @classmethod
    def from_spec(cls, spec, start_hr: float = 0.0) -> "Storm":
        """From :class:`capacitysim.io.storms.StormSpec`."""
        h = spec.hyetograph()
        return cls(tuple(float(v) for v in h.values), float(spec.dt_min), spec.name, start_hr)


#: Table 174-19.2 (Inflow Guidelines), sump pumps: 5 gpm each (Goulds ST51 at 20 ft of head) [gpm].
SUMP_PUMP_GPM = 5.0
#: Table 174-19.3, "Paved parking lots, roofs, driveways, etc.": CN 98 in every soil group [-].
ROOF_CN = 98.0
#: TR-55 (1986) ch. 3, "Limitations": the minimum time of concentration used is 0.1 hr [hr].
ROOF_TC_HR = 0.1


@dataclass(frozen=True)
class InflowSources:
    """Inflow sources that exist in the system today: sump pumps and roof leaders at ``nodes``.

    Written into a model (by :func:`write_scenario`) as [INFLOWS] time series, split evenly over
    ``nodes``:

    * **sump pumps**: ``sump_pumps`` x ``sump_pump_gpm`` (5 gpm each, Table 174-19.2) as a
      constant flow from the start of the rainfall to the end of the simulation: a sump pump runs
      while the groundwater around the foundation is high, i.e. during and for days after the storm
      (Table 174-19.2 note 1 credits the 5 gpm "over a twenty-four-hour-per-day period");
    * **roof leaders**: the runoff of ``roof_area_sqft`` [ft^2] of roof by the TR-55 core
      (:func:`capacitysim.hydrology.unit_hydrograph_runoff`, CN 98 of Table 174-19.3, Tc 0.1 hr, the
      TR-55 minimum) under the rainfall of the run (the design storm among the edits, else the
      model's own gauge), as Table 174-19.2 prescribes for roof drains.
    """

    nodes: tuple[str, ...]
    sump_pumps: float = 0.0
    roof_area_sqft: float = 0.0
    sump_pump_gpm: float = SUMP_PUMP_GPM
    roof_cn: float = ROOF_CN
    roof_tc_hr: float = ROOF_TC_HR
    basin: str = ""

    def __post_init__(self):
        if not self.nodes:
            raise InputError("sump pump / roof leader sources: no nodes given")
        for name in ("sump_pumps", "roof_area_sqft", "sump_pump_gpm"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise InputError(f"{name} must be a number >= 0; got {v!r}")
        if self.sump_pumps != int(self.sump_pumps):
            raise InputError(f"sump_pumps must be a whole number; got {self.sump_pumps!r}")
        if not (self.sump_pumps > 0 or self.roof_area_sqft > 0):
            raise InputError("sump pump / roof leader sources: give sump_pumps > 0 and/or a roof area > 0")
        if not (0 < self.roof_cn <= 100):
            raise InputError(f"roof_cn must be in (0, 100]; got {self.roof_cn!r}")
        if not (math.isfinite(self.roof_tc_hr) and self.roof_tc_hr > 0):
            raise InputError(f"roof_tc_hr must be > 0 hr; got {self.roof_tc_hr!r}")


@dataclass(frozen=True)
class SourceRemoval:
    """I/I remediation by disconnecting sump pumps and/or roof leaders (Table 174-19.2 inflow items).

    The capacity demonstration models the removal as a difference between the runs: the BEFORE
    model gets :attr:`sources` (the sources as they discharge today) and the AFTER model does not.
    The model itself is taken NOT to contain them already: if its calibrated RDII includes them,
    BEFORE counts them twice and AFTER keeps them once, so the after-minus-before differences are
    still the removal, and absolute levels after the change are overstated (conservative for the
    d/D and freeboard criteria).
    """

    nodes: tuple[str, ...]
    sump_pumps: float = 0.0
    roof_area_sqft: float = 0.0
    basin: str = ""

    def __post_init__(self):
        self.sources  # validate now

    @property
    def sources(self) -> InflowSources:
        """The edit that puts the removed sources into the BEFORE model."""
        return InflowSources(tuple(self.nodes), float(self.sump_pumps), float(self.roof_area_sqft), basin=self.basin)


#: Default spin-up [hr]: the dry-weather period before the design storm that the statistics
#: exclude (REPORT_START). A model starts with empty pipes and wet wells; in the bundled 500-node
#: model the plant inflow overshoots the DWF at 0.5 h and settles to within 2 % of it by 3-4 h.
DEFAULT_SPINUP_HR = 6.0


@dataclass(frozen=True)
class ReportStart:
    """Start of the reporting period [hr after the simulation start] (REPORT_START_DATE/TIME).

    The engine's statistics (max depth, flooding, surcharge, peak flows) ignore everything before
    it, which keeps the filling of the initially empty network (spin-up) out of the verdict [1]_.
    Outfall totals (Outfall Loading Summary) and continuity still cover the whole run.
    """

    hours: float

    def __post_init__(self):
        if not (isinstance(self.hours, (int, float)) and math.isfinite(self.hours) and self.hours >= 0):
            raise InputError(f"report start / spin-up must be a number of hours >= 0; got {self.hours!r}")


def report_start_hr(model: SwmmInp) -> float:
    """The model's REPORT_START_DATE/TIME [hr after the simulation start] (0 when absent)."""
    d = model.option("REPORT_START_DATE")
    if d is None:
        return 0.0
    rs = _dt.datetime.combine(_parse_date(d), _dt.time()) + _dt.timedelta(hours=_parse_clock(model.option("REPORT_START_TIME", "0:00")))
    return max((rs - sim_start(model)).total_seconds() / SECONDS_PER_HOUR, 0.0)


@dataclass(frozen=True)
class InjectedInflow:
    """A hydrograph [cfs] at a node as [INFLOWS] (e.g. TR-55 runoff of a site to a combined sewer)."""

    node: str
    time_hr: tuple[float, ...]
    flow_cfs: tuple[float, ...]
    name: str = "hydrograph"


# --------------------------------------------------------------------------- helpers


def gpd_to_model_flow(flow_gpd: float, flow_units: str) -> float:
    """gpd -> the model's flow unit (gpd / GPD_PER_CFS / cfs-per-unit)."""
    return flow_gpd / GPD_PER_CFS / CFS_PER_FLOW_UNIT[flow_units.upper()]


def _hhmm(hours: float) -> str:
    total_s = int(round(hours * SECONDS_PER_HOUR))
    h, rem = divmod(total_s, int(SECONDS_PER_HOUR))
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if s else f"{h}:{m:02d}"


def _parse_clock(tok: str) -> float:
    """'H:MM[:SS]' or decimal hours -> hours."""
    if ":" in tok:
        parts = [float(p) for p in tok.split(":")]
        while len(parts) < 3:
            parts.append(0.0)
        return parts[0] + parts[1] / MINUTES_PER_HOUR + parts[2] / SECONDS_PER_HOUR
    return float(tok)


def _parse_date(tok: str) -> _dt.date:
    for fmt in ("%m/%d/%Y", "%m-%d-%Y", "%Y-%m-%d"):
        try:
            return _dt.datetime.strptime(tok, fmt).date()
        except ValueError:
            continue
    raise InputError(f"date {tok!r} is not in MM/DD/YYYY form")


def sim_start(model: SwmmInp) -> _dt.datetime:
    d = _parse_date(model.option("START_DATE", "01/01/2000"))
    return _dt.datetime.combine(d, _dt.time()) + _dt.timedelta(hours=_parse_clock(model.option("START_TIME", "0:00")))


def sim_end(model: SwmmInp) -> _dt.datetime:
    d = _parse_date(model.option("END_DATE", model.option("START_DATE", "01/01/2000")))
    return _dt.datetime.combine(d, _dt.time()) + _dt.timedelta(hours=_parse_clock(model.option("END_TIME", "0:00")))


def model_rainfall(model: SwmmInp, gauge: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The rainfall of a gauge as (start of each interval [hr from the simulation start], depth [in]).

    Reads the gauge's [TIMESERIES] (INTENSITY, VOLUME or CUMULATIVE; times as clock hours or with
    dates). Rainfall files (``FILE``) are not read: (empty arrays).
    """
    gauges = {r.tokens[0]: r.tokens for r in model.rows("RAINGAGES")}
    if not gauges:
        return np.zeros(0), np.zeros(0)
    toks = gauges.get(gauge) if gauge else next(iter(gauges.values()))
    if toks is None:
        raise InputError(f"rain gauge {gauge!r} is not defined")
    fmt, interval_hr = toks[1].upper(), _parse_clock(toks[2])
    if len(toks) < 6 or toks[4].upper() != "TIMESERIES":
        return np.zeros(0), np.zeros(0)
    ts = toks[5]
    start = sim_start(model)
    times, vals = [], []
    for r in model.rows("TIMESERIES"):
        if r.tokens[0] != ts:
            continue
        t = r.tokens[1:]
        if len(t) == 3:
            when = _dt.datetime.combine(_parse_date(t[0]), _dt.time()) + _dt.timedelta(hours=_parse_clock(t[1]))
            times.append((when - start).total_seconds() / SECONDS_PER_HOUR)
            vals.append(float(t[2]))
        elif len(t) == 2:
            times.append(_parse_clock(t[0]))
            vals.append(float(t[1]))
    t = np.asarray(times, float)
    v = np.asarray(vals, float)
    if fmt == "INTENSITY":
        depth = v * interval_hr
    elif fmt == "CUMULATIVE":
        depth = np.diff(np.concatenate([[0.0], v]))
    else:
        depth = v
    if model.flow_units not in ("CFS", "GPM", "MGD"):
        depth = depth / MILLIMETERS_PER_INCH
    return t, depth


def _rtk_params(model: SwmmInp, hydrograph: str, month: int) -> list[tuple[float, float, float]]:
    months = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
    rows = [r.tokens for r in model.rows("HYDROGRAPHS") if r.tokens[0] == hydrograph and len(r.tokens) >= 6]
    chosen = [t for t in rows if t[1].upper() == months[month - 1]] or [t for t in rows if t[1].upper() == "ALL"]
    return [(float(t[3]), float(t[4]), float(t[5])) for t in chosen]


def rdii_peak_cfs(model: SwmmInp, nodes, rain_t_hr: np.ndarray, rain_in: np.ndarray) -> float:
    """Peak RDII rate [cfs] of a sewershed: the RTK hydrographs of its [RDII] areas under a rainfall.

    Each response r of a unit hydrograph is a triangle with time to peak T_r, recession K_r T_r
    and volume R_r x rainfall x sewer area [2]_; the flows of the sewershed's nodes add. Initial
    abstraction (Dmax) is ignored, which overstates RDII slightly, so a gpd of removed I/I maps to a
    smaller (more conservative) fraction. Sewer areas in acres (hectares for SI models).
    """
    if len(rain_in) == 0:
        raise InputError("the model's rainfall is not a [TIMESERIES] capacitysim can read; give --storm or a fraction")
    nodes = set(nodes)
    month = sim_start(model).month
    si = model.flow_units not in ("CFS", "GPM", "MGD")
    area_by_uh: dict[str, float] = {}
    for r in model.rows("RDII"):
        if r.tokens[0] in nodes:
            area = float(r.tokens[2])
            if si:  # hectares -> acres
                area *= 1.0e4 / (METERS_PER_FOOT**2 * SQFT_PER_ACRE)
            area_by_uh[r.tokens[1]] = area_by_uh.get(r.tokens[1], 0.0) + area
    if not area_by_uh:
        return 0.0
    total = None
    for uh, area in area_by_uh.items():
        q = rtk_hydrograph_cfs(_rtk_params(model, uh, month), area, rain_t_hr, rain_in)
        total = q if total is None else total + q
    return float(total.max())


def rtk_hydrograph_cfs(rtk, area_ac: float, rain_t_hr, rain_in, dt_hr: float = 0.05, tail_hr: float = 200.0) -> np.ndarray:
    """RDII [cfs] of ``area_ac`` acres under a rainfall, by the RTK triangular unit hydrographs [2]_.

    Parameters
    ----------
    rtk : list of (R [-], T [hr], K [-])
        One triple per response (short, medium, long).
    area_ac : float
        Sewershed area [ac].
    rain_t_hr, rain_in : array_like
        Start of each rainfall interval [hr] and its depth [in] (uniform intervals).
    dt_hr : float
        Computation step [hr] (the rainfall interval when smaller).

    Returns
    -------
    numpy.ndarray
        Flow [cfs] on a uniform grid of ``dt_hr`` from time 0; its volume is
        sum(R) x rainfall x area (1 ac-in/hr = :data:`~capacitysim.units.CFS_PER_ACRE_INCH_PER_HOUR` cfs).
    """
    rain_t_hr = np.asarray(rain_t_hr, float)
    rain_in = np.asarray(rain_in, float)
    interval = float(np.min(np.diff(rain_t_hr))) if len(rain_t_hr) > 1 else 1.0
    dt = min(dt_hr, interval)
    grid = np.arange(0.0, float(rain_t_hr[-1]) + interval + tail_hr, dt)
    intensity = np.zeros_like(grid)
    for t0, d in zip(rain_t_hr, rain_in):
        mask = (grid >= t0 - 1e-9) & (grid < t0 + interval - 1e-9)
        if mask.any():
            intensity[mask] += d / (mask.sum() * dt)
    total = np.zeros_like(grid)
    for R, T, K in rtk:
        if R <= 0 or T <= 0:
            continue
        tb = T * (1.0 + K)
        tt = np.arange(0.0, tb + dt, dt) + dt / 2
        u = np.where(tt <= T, tt / T, np.clip((tb - tt) / (tb - T), 0, None))
        u = u / (u.sum() * dt)  # unit area [1/hr]
        total += R * area_ac * np.convolve(intensity, u * dt)[: len(grid)]
    return total * CFS_PER_ACRE_INCH_PER_HOUR


def run_end_hr(model: SwmmInp, storm: "Storm | None" = None) -> float:
    """End of the simulation [hr from its start], after :func:`write_scenario` extends it for ``storm``."""
    end = (sim_end(model) - sim_start(model)).total_seconds() / SECONDS_PER_HOUR
    if storm is not None:
        end = max(end, storm.start_hr + len(storm.depth_in) * storm.dt_min / MINUTES_PER_HOUR + STORM_TAIL_HR)
    return end


#: Hours the simulation runs past the end of a design storm (write_scenario extends END_DATE/TIME).
STORM_TAIL_HR = 24.0
#: Sump pumps are switched on over this ramp at the start of the rain [hr] (a time series
#: interpolates linearly; one minute makes the step explicit and costs 0.5 min of flow).
SUMP_RAMP_HR = 1.0 / MINUTES_PER_HOUR


def _uniform_rain(rain_t_hr, rain_in) -> tuple[float, np.ndarray, float]:
    """(start of the first interval [hr], depths on a uniform grid [in], the interval [hr])."""
    t = np.asarray(rain_t_hr, float)
    d = np.asarray(rain_in, float)
    if t.size == 0 or not np.nansum(d) > 0:
        raise InputError("sump pumps / roof leaders: the run has no rainfall capacitysim can read "
                         "(the model's gauge is not a [TIMESERIES]); give --storm")
    order = np.argsort(t)
    t, d = t[order], d[order]
    interval = float(np.min(np.diff(t))) if t.size > 1 else 1.0
    k = np.rint((t - t[0]) / interval).astype(int)
    grid = np.zeros(int(k.max()) + 1)
    np.add.at(grid, k, d)
    return float(t[0]), grid, interval


def source_hydrograph_cfs(src: InflowSources, rain_t_hr, rain_in, end_hr: float) -> tuple[np.ndarray, np.ndarray, dict]:
    """Total flow [cfs] of sump pumps and roof leaders over time [hr from the simulation start].

    Parameters
    ----------
    src : InflowSources
    rain_t_hr, rain_in : array_like
        Start of each rainfall interval [hr from the simulation start] and its depth [in].
    end_hr : float
        End of the simulation [hr]; the sump pumps run until then.

    Returns
    -------
    (time_hr, flow_cfs, record)
        The series is piecewise linear (as SWMM interpolates a [TIMESERIES]): the sump pumps
        ``N x gpm / GPM_PER_CFS`` [cfs] from the first interval with rain (after a one-minute ramp)
        to ``end_hr``; the roof runoff by the SCS unit hydrograph on TR-55 CN excess
        (NEH 630 ch. 16; TR-55 ch. 2, eq. 2-1 to 2-4), each step's mean flow placed at the middle
        of the step. ``record`` holds the volumes [ft^3]: of the series as written and, for the
        roof, TR-55's Q(P, CN) x area (Table 174-19.2).
    """
    from capacitysim.units import GPM_PER_CFS, SQFT_PER_SQMI

    t0, grid, dt = _uniform_rain(rain_t_hr, rain_in)
    rec = {"nodes": list(src.nodes), "basin": src.basin, "sump_pumps": src.sump_pumps, "sump_pump_gpm": src.sump_pump_gpm,
           "roof_area_sqft": src.roof_area_sqft, "roof_cn": src.roof_cn, "roof_tc_hr": src.roof_tc_hr}
    pieces = []
    if src.sump_pumps > 0:
        wet = np.flatnonzero(grid > 0)
        on = t0 + float(wet[0]) * dt if wet.size else 0.0
        if on + SUMP_RAMP_HR >= end_hr:
            raise InputError(f"sump pumps: the rain starts at {on:g} h, at or after the end of the simulation ({end_hr:g} h)")
        q = src.sump_pumps * src.sump_pump_gpm / GPM_PER_CFS
        pieces.append((np.array([on, on + SUMP_RAMP_HR, end_hr]), np.array([0.0, q, q])))
        rec.update({"sump_flow_cfs": q, "sump_on_hr": on, "sump_off_hr": end_hr,
                    "sump_volume_cf": q * (end_hr - on - SUMP_RAMP_HR / 2) * SECONDS_PER_HOUR})
    if src.roof_area_sqft > 0:
        import xarray as xr

        from capacitysim.hydrology import runoff_depth, unit_hydrograph_runoff

        storm = xr.DataArray(grid, dims="time_hr", coords={"time_hr": dt * np.arange(1, grid.size + 1)}, name="precip_in")
        hyd = unit_hydrograph_runoff(src.roof_area_sqft / SQFT_PER_SQMI, src.roof_cn, src.roof_tc_hr, storm)
        mid = t0 + hyd.time_hr.values - dt / 2
        t = np.concatenate([[mid[0] - dt / 2], mid, [mid[-1] + dt / 2]])
        f = np.concatenate([[0.0], hyd.values, [0.0]])
        if t[-1] > end_hr:
            raise InputError(f"roof leaders: the runoff lasts until {t[-1]:.1f} h, after the end of the simulation ({end_hr:g} h)")
        pieces.append((t, f))
        q_in = float(runoff_depth(float(grid.sum()), src.roof_cn))
        rec.update({"roof_peak_cfs": float(hyd.max()), "roof_volume_cf": float(np.trapezoid(f, t * SECONDS_PER_HOUR)),
                    "roof_tr55_runoff_in": q_in, "roof_tr55_volume_cf": q_in * src.roof_area_sqft / INCHES_PER_FOOT})
    times = np.unique(np.concatenate([p[0] for p in pieces]))
    flow = sum(np.interp(times, pt, pf, left=0.0, right=0.0) for pt, pf in pieces)
    rec["volume_cf"] = float(np.trapezoid(flow, times * SECONDS_PER_HOUR))
    return times, flow, rec


def _add_series_inflow(inflows, node: str, series: str, sfactor: float = 1.0, what: str = "inflow"):
    """Attach a FLOW time series to a node's [INFLOWS] (a new row, or an existing baseline-only one)."""
    import pandas as pd

    mask = (inflows.index == node) & (inflows["Constituent"].astype(str).str.upper() == "FLOW")
    if mask.any():
        i = np.flatnonzero(mask)[0]
        ts = str(inflows.iloc[i]["Time Series"]).strip().strip('"')
        if ts not in ("", "nan", "None"):
            raise InputError(f"{what} at node {node}: the node already has a FLOW [INFLOWS] time series ({ts}); "
                             "put it at another node")
        inflows.iloc[i, inflows.columns.get_loc("Time Series")] = series
        inflows.iloc[i, inflows.columns.get_loc("Sfactor")] = sfactor
        return inflows
    row = {"Constituent": "FLOW", "Time Series": series, "Type": "FLOW", "Mfactor": 1.0, "Sfactor": sfactor, "Baseline": 0.0}
    return pd.concat([inflows, pd.DataFrame([row], index=pd.Index([node], name=inflows.index.name))])


# --------------------------------------------------------------------------- writing


def _most_used_patterns(dwf) -> list[str]:
    pats = []
    for _, row in dwf.iterrows():
        p = [str(v) for v in row.iloc[2:].tolist() if isinstance(v, str) and v.strip() and v != "nan"]
        if p:
            pats.append(tuple(p))
    if not pats:
        return []
    return list(max(set(pats), key=pats.count))


def _with_columns(df, columns, index_name):
    """swmmio gives an empty frame without columns for a section the model lacks."""
    import pandas as pd

    if all(c in df.columns for c in columns):
        return df
    if len(df):
        raise InputError(f"unexpected layout of a model section (columns {list(df.columns)})")
    return pd.DataFrame(columns=columns, index=pd.Index([], name=index_name))


def write_scenario(model: SwmmInp, edits, out_path: str | Path, *, rain: tuple[np.ndarray, np.ndarray] | None = None) -> dict:
    """Apply ``edits`` to a copy of ``model`` and write it to ``out_path``; return a record of what was done.

    ``rain`` is the (times [hr], depths [in]) used to turn a remediation's gpd into a fraction
    (default: the storm among the edits, else the model's own rainfall).
    """
    import pandas as pd
    import swmmio

    out_path = Path(out_path)
    if out_path.resolve() == model.path.resolve():
        raise InputError("a scenario is never written over its input model")
    with warnings.catch_warnings():  # swmmio warns about every absent section
        warnings.simplefilter("ignore", UserWarning)
        m = swmmio.Model(str(model.path))
        return _apply(m, model, edits, out_path, rain)


def _apply(m, model: SwmmInp, edits, out_path: Path, rain) -> dict:
    import pandas as pd

    fu = model.flow_units
    nodes = set(model.node_ids())
    record: dict = {"connections": [], "remediations": [], "storm": None, "inflows": [], "sources": [],
                    "report_start_hr": None}
    storm = next((e for e in edits if isinstance(e, Storm)), None)
    if rain is None:
        if storm is not None:
            rain = (storm.start_hr + np.arange(len(storm.depth_in)) * storm.dt_min / MINUTES_PER_HOUR, np.asarray(storm.depth_in))
        else:
            rain = model_rainfall(model)
    ts_rows: list[tuple[str, str, str, float]] = []

    dwf = _with_columns(m.inp.dwf.copy(), ["Parameter", "AverageValue", "TimePatterns"], "Node")
    inflows = _with_columns(m.inp.inflows.copy(), ["Constituent", "Time Series", "Type", "Mfactor", "Sfactor", "Baseline"], "Node")
    rdii = _with_columns(m.inp.rdii.copy(), ["UnitHydrograph", "SewerArea"], "Node")
    for e in edits:
        if isinstance(e, Connection):
            if e.node not in nodes:
                raise InputError(f"connection node {e.node!r} is not a node of {model.path.name}")
            q = gpd_to_model_flow(e.flow_gpd, fu)
            if e.peaking == "pattern":
                mask = (dwf.index == e.node) & (dwf["Parameter"].astype(str).str.upper() == "FLOW")
                if mask.any():
                    i = np.flatnonzero(mask)[0]
                    dwf.iloc[i, dwf.columns.get_loc("AverageValue")] = float(dwf.iloc[i]["AverageValue"]) + q
                    pats = [str(v) for v in dwf.iloc[i, 2:].tolist() if isinstance(v, str) and v.strip()]
                else:
                    pats = _most_used_patterns(dwf)
                    row = {c: "" for c in dwf.columns}
                    row.update({"Parameter": "FLOW", "AverageValue": q})
                    for c, p in zip(dwf.columns[2:], pats):
                        row[c] = f'"{p}"' if not p.startswith('"') else p
                    dwf = pd.concat([dwf, pd.DataFrame([row], index=pd.Index([e.node], name=dwf.index.name))])
                record["connections"].append({"node": e.node, "flow_gpd": e.flow_gpd, "peaking": "pattern",
                                              "patterns": pats, "model_flow": q, "label": e.label})
            else:
                qp = q * float(e.peaking)
                mask = (inflows.index == e.node) & (inflows["Constituent"].astype(str).str.upper() == "FLOW")
                if mask.any():
                    i = np.flatnonzero(mask)[0]
                    base = float(inflows.iloc[i]["Baseline"]) if str(inflows.iloc[i]["Baseline"]).strip() not in ("", "nan") else 0.0
                    inflows.iloc[i, inflows.columns.get_loc("Baseline")] = base + qp
                else:
                    row = {"Constituent": "FLOW", "Time Series": '""', "Type": "FLOW", "Mfactor": 1.0,
                           "Sfactor": 1.0, "Baseline": qp}
                    inflows = pd.concat([inflows, pd.DataFrame([row], index=pd.Index([e.node], name=inflows.index.name))])
                record["connections"].append({"node": e.node, "flow_gpd": e.flow_gpd, "peaking": float(e.peaking),
                                              "model_flow": qp, "label": e.label})
        elif isinstance(e, Remediation):
            unknown = [n for n in e.nodes if n not in nodes]
            if unknown:
                raise InputError(f"remediation node {unknown[0]!r} is not a node of {model.path.name}")
            fraction = e.fraction
            peak_cfs = None
            if e.gpd is not None:
                peak_cfs = rdii_peak_cfs(model, e.nodes, *rain)
                peak_gpd = peak_cfs * GPD_PER_CFS
                if peak_gpd <= 0:
                    raise InputError(f"remediation of {e.gpd:g} gpd: the sewershed {e.basin or ''} has no RDII to remove")
                if e.gpd > peak_gpd:
                    raise InputError(f"remediation of {e.gpd:,.0f} gpd exceeds the sewershed's peak RDII of {peak_gpd:,.0f} gpd")
                fraction = e.gpd / peak_gpd
            mask = rdii.index.isin(list(e.nodes))
            if not mask.any():
                raise InputError(f"remediation: no [RDII] at the nodes of sewershed {e.basin or list(e.nodes)[:3]}")
            before = rdii.loc[mask, "SewerArea"].astype(float).sum()
            rdii.loc[mask, "SewerArea"] = rdii.loc[mask, "SewerArea"].astype(float) * (1.0 - fraction)
            record["remediations"].append({"basin": e.basin, "n_nodes": len(e.nodes), "fraction": fraction,
                                           "gpd": e.gpd, "peak_rdii_gpd_before": None if peak_cfs is None else peak_cfs * GPD_PER_CFS,
                                           "sewer_area_before": before, "sewer_area_after": before * (1 - fraction)})
        elif isinstance(e, SourceRemoval):
            raise InputError("a SourceRemoval is modelled by its sources in the BEFORE model: write "
                             "its .sources there and nothing in the after model (run_demonstration does this)")
        elif isinstance(e, InflowSources):
            unknown = [n for n in e.nodes if n not in nodes]
            if unknown:
                raise InputError(f"sump pump / roof leader node {unknown[0]!r} is not a node of {model.path.name}")
        elif isinstance(e, InjectedInflow):
            if e.node not in nodes:
                raise InputError(f"inflow node {e.node!r} is not a node of {model.path.name}")
            name = PREFIX + re.sub(r"\W", "_", f"{e.name}_{e.node}")
            for t, q in zip(e.time_hr, e.flow_cfs):
                ts_rows.append((name, "", _hhmm(t), q / CFS_PER_FLOW_UNIT[fu]))
            inflows = _add_series_inflow(inflows, e.node, name, what=f"hydrograph {e.name}")
            record["inflows"].append({"node": e.node, "series": name, "volume_cf": float(np.trapezoid(e.flow_cfs, np.asarray(e.time_hr) * SECONDS_PER_HOUR))})
    sources = [e for e in edits if isinstance(e, InflowSources)]
    if sources:
        inflows = _write_sources(sources, model, rain, run_end_hr(model, storm), inflows, ts_rows, record)
    m.inp.dwf = dwf
    m.inp.inflows = inflows
    m.inp.rdii = rdii
    if storm is not None:
        name = PREFIX + "STORM"
        depth = np.asarray(storm.depth_in) * (MILLIMETERS_PER_INCH if fu not in ("CFS", "GPM", "MGD") else 1.0)
        for k, d in enumerate(depth):
            ts_rows.append((name, "", _hhmm(storm.start_hr + k * storm.dt_min / MINUTES_PER_HOUR), float(d)))
        rg = m.inp.raingages.copy()
        if rg.empty:
            raise InputError(f"{model.path.name} has no [RAINGAGES] to carry the design storm")
        rg["RainType"] = "VOLUME"
        rg["TimeIntrvl"] = _hhmm(storm.dt_min / MINUTES_PER_HOUR)
        rg["SnowCatch"] = 1.0
        rg["DataSource"] = "TIMESERIES"
        rg["DataSourceName"] = name
        m.inp.raingages = rg
        opts = m.inp.options.copy()
        wet = _parse_clock(str(opts.loc["WET_STEP", "Value"])) * SECONDS_PER_HOUR if "WET_STEP" in opts.index else 300.0
        dt_s = storm.dt_min * 60.0
        if round(dt_s) % max(round(wet), 1) != 0:  # WET_STEP must divide the rain interval (swmm-notes)
            opts.loc["WET_STEP", "Value"] = _hhmm(dt_s / SECONDS_PER_HOUR) + (":00" if _hhmm(dt_s / SECONDS_PER_HOUR).count(":") == 1 else "")
        need_end = sim_start(model) + _dt.timedelta(hours=storm.start_hr + len(depth) * storm.dt_min / MINUTES_PER_HOUR + STORM_TAIL_HR)
        if sim_end(model) < need_end:
            opts.loc["END_DATE", "Value"] = need_end.strftime("%m/%d/%Y")
            opts.loc["END_TIME", "Value"] = need_end.strftime("%H:%M:%S")
        m.inp.options = opts
        record["storm"] = {"name": storm.name, "total_in": float(np.sum(storm.depth_in)), "dt_min": storm.dt_min,
                           "start_hr": storm.start_hr, "series": name}
    rs = next((e for e in edits if isinstance(e, ReportStart)), None)
    if rs is not None:
        end_hr = run_end_hr(model, storm)
        if rs.hours >= end_hr:
            raise InputError(f"report start {rs.hours:g} h is not before the end of the simulation ({end_hr:g} h)")
        when = sim_start(model) + _dt.timedelta(hours=rs.hours)
        opts = m.inp.options.copy()
        opts.loc["REPORT_START_DATE", "Value"] = when.strftime("%m/%d/%Y")
        opts.loc["REPORT_START_TIME", "Value"] = when.strftime("%H:%M:%S")
        m.inp.options = opts
        record["report_start_hr"] = rs.hours
    if ts_rows:
        ts = _with_columns(m.inp.timeseries.copy(), ["Date", "Time", "Value"], "Name")
        add = pd.DataFrame([{"Date": None, "Time": t, "Value": v} for _, _, t, v in ts_rows],
                           index=pd.Index([n for n, _, _, _ in ts_rows], name=ts.index.name))
        for c in ts.columns:
            if c not in add.columns:
                add[c] = None
        m.inp.timeseries = pd.concat([ts, add[ts.columns]])
    out_path.parent.mkdir(parents=True, exist_ok=True)
    m.inp.save(str(out_path))
    return record


def _write_sources(sources, model: SwmmInp, rain, end_hr: float, inflows, ts_rows: list, record: dict):
    """Sump pumps and roof leaders as [INFLOWS]: one series per edit, shared by its nodes.

    Each node's inflow is the sum over the edits naming it of (the edit's total flow) / (number of
    its nodes); nodes with the same shares get one combined [TIMESERIES] (exact: the series are
    piecewise linear and SWMM interpolates linearly).
    """
    fu = model.flow_units
    series = []
    for e in sources:
        t, q, rec = source_hydrograph_cfs(e, *rain, end_hr)
        series.append((t, q))
        record["sources"].append(rec)
    shares: dict[str, list[float]] = {}
    for k, e in enumerate(sources):
        for n in dict.fromkeys(e.nodes):
            shares.setdefault(n, [0.0] * len(sources))[k] += 1.0 / len(e.nodes)
    groups: dict[tuple, list[str]] = {}
    for n, sh in shares.items():
        groups.setdefault(tuple(sh), []).append(n)
    for g, (sh, group_nodes) in enumerate(groups.items(), start=1):
        times = np.unique(np.round(np.concatenate([series[k][0] for k, w in enumerate(sh) if w > 0]) * SECONDS_PER_HOUR)) / SECONDS_PER_HOUR
        flow = sum(w * np.interp(times, series[k][0], series[k][1], left=0.0, right=0.0) for k, w in enumerate(sh) if w > 0)
        name = f"{PREFIX}SOURCES_{g}"
        for t, q in zip(times, flow):
            ts_rows.append((name, "", _hhmm(t), float(q) / CFS_PER_FLOW_UNIT[fu]))
        for n in group_nodes:
            inflows = _add_series_inflow(inflows, n, name, what="sump pumps / roof leaders")
    return inflows
