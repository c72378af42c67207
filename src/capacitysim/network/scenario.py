"""Scenario edits of a SWMM model: new connections, I/I remediation, the design storm, the spin-up.

Each edit is a small frozen dataclass; :func:`write_scenario` applies a list of them to the text of
the model line by line (only the lines an edit touches change, every other byte is kept: any 8-bit
encoding, comments, layout) and writes the edited ``.inp`` into a work folder (never next to the
input). Names are matched as SWMM matches them, ignoring case. (A full parse and save through
swmmio took about 158 ms per scenario and refused valid files: optional fields, integer baselines,
non-UTF-8 bytes.)

Flows are given in gpd and converted to the model's FLOW_UNITS with
:data:`capacitysim.units.GPD_PER_CFS` and :data:`capacitysim.units.CFS_PER_FLOW_UNIT`. The model's
dates and times are read by :mod:`capacitysim.network.model`; the RDII, sump pump and roof leader
hydrographs are computed by :mod:`capacitysim.hydrology.rdii`.

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
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from capacitysim.errors import InputError
from capacitysim.hydrology.rdii import ROOF_CN, ROOF_TC_HR, inflow_sources_cfs, rtk_peak_cfs
from capacitysim.network.inp_text import prepare_inp_text
from capacitysim.network.model import (
    SwmmInp,
    engine_hours,
    engine_token_spans,
    event_windows,
    finite_number,
    model_number,
    parse_clock_hr,
    report_start_hr,
    rtk_params,
    series_file,
    series_file_instants,
    series_instants,
    sim_end,
    sim_start,
)
from capacitysim.hydrology._inputs import MAX_AREA_MI2
from capacitysim.rules.ii_offset import SUMP_PUMP_GPM
from capacitysim.units import (
    ACRES_PER_HECTARE,
    ACRES_PER_SQMI,
    CFS_PER_FLOW_UNIT,
    GPD_PER_CFS,
    MILLIMETERS_PER_INCH,
    MINUTES_PER_HOUR,
    SECONDS_PER_HOUR,
    US_FLOW_UNITS,
)

#: Name prefix of the time series and patterns capacitysim adds to a model.
PREFIX = "CAPSIM_"
#: Largest connection or remediation accepted [gpd]: 1,000 MGD, over three times the average flow of
#: New York City's largest plant (Newtown Creek, 310 MGD design); anything larger is a typing error.
MAX_FLOW_GPD = 1.0e9


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
    #: The credit bank application whose committed flow this is (None: a connection of the scenario itself).
    commitment: str | None = None

    def __post_init__(self):
        if not (isinstance(self.flow_gpd, (int, float)) and math.isfinite(self.flow_gpd) and 0 < self.flow_gpd <= MAX_FLOW_GPD):
            raise InputError(f"connection at {self.node}: flow must be a number of gpd in (0, {MAX_FLOW_GPD:.0e}]; "
                             f"got {self.flow_gpd!r}")
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
        if self.gpd is not None and not (math.isfinite(self.gpd) and 0 < self.gpd <= MAX_FLOW_GPD):
            raise InputError(f"remediation gpd must be a number in (0, {MAX_FLOW_GPD:.0e}]; got {self.gpd!r}")
        if not self.nodes:
            raise InputError("remediation: the sewershed has no nodes")


@dataclass(frozen=True)
class MeasuredRdii:
    """A sub-basin's measured I/I: a fitted RTK set (issue 29) in place of the model's RDII at ``nodes`` [1]_ [2]_.

    Written as a unit hydrograph of the model (``[HYDROGRAPHS]``: the gauge line and one ``ALL`` months line per
    response, ``R T K Dmax Drecov Dinit``) and ``[RDII]`` lines giving it ``area_ac`` [ac] of sewer area, split
    evenly over ``nodes`` (hectares in an SI model); the nodes' own ``[RDII]`` lines are commented out (the
    measured set is the sub-basin's whole RDII: the meter saw all of it). ``rows`` are the (R [-], T [hr], K [-],
    Dmax [in], Drecov [in/day], Dinit [in]) of the short, medium and long responses, as
    :meth:`capacitysim.hydrology.rtk_fit.RTKSet.rows` gives them. ``gauge`` names the rain gauge that drives it
    (default: the gauge of the nodes' own unit hydrographs, else the model's only gauge). ``source`` and ``period``
    say where the set comes from (the analysis document, ``pre`` or ``post``), for the record.
    """

    nodes: tuple[str, ...]
    area_ac: float
    rows: tuple[tuple[float, ...], ...]
    gauge: str | None = None
    source: str = ""
    period: str = ""

    def __post_init__(self):
        if not self.nodes:
            raise InputError("measured I/I: no nodes given (the nodes the metered sub-basin drains to)")
        top = MAX_AREA_MI2 * ACRES_PER_SQMI
        if not (isinstance(self.area_ac, (int, float)) and math.isfinite(self.area_ac) and 0 < self.area_ac <= top):
            raise InputError(f"measured I/I: the sewer area must be a number in (0, {top:,.0f}] ac; got {self.area_ac!r}")
        rows = tuple(tuple(float(x) for x in r) for r in self.rows)
        if len(rows) != 3 or any(len(r) != 6 or not all(math.isfinite(x) and x >= 0 for x in r) for r in rows):
            raise InputError("measured I/I: three (R, T, K, Dmax, Drecov, Dinit) rows of finite values >= 0 needed; "
                             f"got {self.rows!r}")
        if any(r[1] <= 0 for r in rows) or sum(r[0] for r in rows) > 1.0:
            # the RTK volume is R x rain x area [2]_: more than the rain that fell cannot enter the sewer
            raise InputError(f"measured I/I: each T must be > 0 h and R1 + R2 + R3 at most 1 (no more RDII than rain); "
                             f"got R {[r[0] for r in rows]}, T {[r[1] for r in rows]}")
        object.__setattr__(self, "rows", rows)


@dataclass(frozen=True)
class Storm:
    """A design storm as a rain gauge time series: incremental depths [in] every ``dt_min``."""

    depth_in: tuple[float, ...]
    dt_min: float
    name: str = "design storm"
    start_hr: float = 0.0

    @classmethod
    def from_spec(cls, spec, start_hr: float = 0.0) -> "Storm":
        """From :class:`capacitysim.io.storms.StormSpec` (its NRCS hyetograph, NEH 630 ch. 4)."""
        from capacitysim.hydrology.rainfall import design_storm_depths

        _, depths = design_storm_depths(spec.depth_in, spec.distribution, spec.dt_min, spec.duration_hr)
        return cls(tuple(float(v) for v in depths), float(spec.dt_min), spec.name, start_hr)


@dataclass(frozen=True)
class InflowSources:
    """Inflow sources that exist in the system today: sump pumps and roof leaders at ``nodes``.

    Written into a model (by :func:`write_scenario`) as [INFLOWS] time series, split evenly over
    ``nodes``:

    * **sump pumps**: ``sump_pumps`` x ``sump_pump_gpm`` (5 gpm each, Table 174-19.2:
      :data:`capacitysim.rules.ii_offset.SUMP_PUMP_GPM`) as a
      constant flow from the start of the rainfall to the end of the simulation: a sump pump runs
      while the groundwater around the foundation is high, i.e. during and for days after the storm
      (Table 174-19.2 note 1 credits the 5 gpm "over a twenty-four-hour-per-day period");
    * **roof leaders**: the runoff of ``roof_area_sqft`` [ft^2] of roof by the TR-55 core
      (:func:`capacitysim.hydrology.unit_hydrograph_runoff`, CN 98 of Table 174-19.3, Tc 0.1 hr, the
      TR-55 minimum: :data:`capacitysim.hydrology.rdii.ROOF_CN`, :data:`~capacitysim.hydrology.rdii.ROOF_TC_HR`)
      under the rainfall of the run (the design storm among the edits, else the
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


#: Default spin-up [hr]: dry-weather simulation PREPENDED to the model's own period (the start is
#: moved earlier; the model's period is simulated and reported whole). A model starts with empty
#: pipes and wet wells; in the bundled 500-node model the plant inflow overshoots the DWF at 0.5 h
#: and settles to within 2 % of it by 3-4 h.
DEFAULT_SPINUP_HR = 6.0


def initial_state(model: SwmmInp) -> list[str]:
    """What of its own initial state a model sets: initial depths, initial flows, a hotstart file [1]_."""
    found = []

    def positive(tok):
        return (finite_number(tok) or 0.0) > 0

    n = sum(1 for sec in ("JUNCTIONS", "STORAGE") for r in model.rows(sec) if len(r.tokens) > 3 and positive(r.tokens[3]))
    if n:
        found.append(f"{n} node(s) with an initial depth")
    n = sum(1 for r in model.rows("CONDUITS") if len(r.tokens) > 7 and positive(r.tokens[7]))
    if n:
        found.append(f"{n} conduit(s) with an initial flow")
    if any(len(r.tokens) >= 2 and r.tokens[0].upper() == "USE" and r.tokens[1].upper() == "HOTSTART" for r in model.rows("FILES")):
        found.append("a hotstart file")
    return found


def default_spinup_hr(model: SwmmInp) -> tuple[float, str]:
    """The spin-up a demonstration uses when none is given, and the policy that chose it.

    Program policy (not a rule of any regulation): :data:`DEFAULT_SPINUP_HR` prepended, so the
    filling of initially empty pipes stays out of the statistics; 0 for a model that starts from
    a hotstart file (a whole saved state its author chose, which a spin-up would replace).
    Initial depths of single nodes (a wet well's start level) do not make a network full, so
    they do not change the default; they are named in the policy text.
    """
    state = initial_state(model)
    if "a hotstart file" in state:
        return 0.0, "no spin-up: the model starts from its hotstart file"
    extra = f"; the model's own initial state ({', '.join(state)}) applies at the moved start" if state else ""
    return DEFAULT_SPINUP_HR, f"{DEFAULT_SPINUP_HR:g} h spin-up prepended (the model starts from empty pipes{extra})"


@dataclass(frozen=True)
class Spinup:
    """Prepend ``hours`` of simulation before the model's own start [1]_.

    START_DATE/TIME move ``hours`` earlier; REPORT_START becomes the model's own start (or its own
    REPORT_START when later), so the engine's statistics (max depth, flooding, surcharge, peak
    flows, lateral volumes) cover exactly the model's period and exclude the filling of the
    initially empty network. Time series values SWMM counts from the start (those before a
    series' first date) are given dates, and control rules on the elapsed SIMULATION TIME are
    moved by ``hours``, so both act at the instants the model put them. Outfall totals and
    continuity cover the whole run.
    """

    hours: float

    def __post_init__(self):
        if not (isinstance(self.hours, (int, float)) and not isinstance(self.hours, bool)
                and math.isfinite(self.hours) and self.hours >= 0):
            raise InputError(f"spinup_hr must be a number of hours >= 0; got {self.hours!r}")


@dataclass(frozen=True)
class ReportNodes:
    """Nodes whose time series the run must save in its ``.out`` (added to ``[REPORT] NODES``) [1]_.

    SWMM saves series only for what ``[REPORT]`` names (nothing when the section is absent); the
    statistics cover every element whatever it says. Adding names changes no result.
    """

    nodes: tuple[str, ...]


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


def model_rainfall(model: SwmmInp, gauge: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The rainfall of a gauge as (start of each interval [hr from the simulation start], depth [in]).

    Reads the gauge's [TIMESERIES] (INTENSITY, VOLUME or CUMULATIVE) at the instants the engine gives its
    values (:func:`capacitysim.network.model.series_instants`: dated and undated rows, an undated row
    carrying the last date given, several pairs per line, a series read from its ``FILE``) [1]_. Rain gauges
    reading a rainfall file (``FILE`` source), and a series file that cannot be read, give empty arrays.
    """
    gauges = {r.tokens[0].upper(): r.tokens for r in model.rows("RAINGAGES")}
    if not gauges:
        return np.zeros(0), np.zeros(0)
    toks = gauges.get(gauge.upper()) if gauge else next(iter(gauges.values()))
    if toks is None:
        raise InputError(f"rain gauge {gauge!r} is not defined")
    fmt, interval_hr = toks[1].upper(), parse_clock_hr(toks[2])
    if len(toks) < 6 or toks[4].upper() != "TIMESERIES":
        return np.zeros(0), np.zeros(0)
    start = sim_start(model)
    try:
        points = series_instants(model, toks[5], start)
    except InputError:
        if series_file(model, toks[5]) is None:
            raise
        return np.zeros(0), np.zeros(0)
    for p in points:
        if not math.isfinite(p.value):
            raise InputError(f"rainfall series {toks[5]} at line {p.line}: {p.value!r} is not a finite number")
    t = np.asarray([(p.when - start).total_seconds() / SECONDS_PER_HOUR for p in points], float)
    v = np.asarray([p.value for p in points], float)
    if fmt == "INTENSITY":
        depth = v * interval_hr
    elif fmt == "CUMULATIVE":
        depth = np.diff(np.concatenate([[0.0], v]))
    else:
        depth = v
    if model.is_si:
        depth = depth / MILLIMETERS_PER_INCH
    return t, depth


def rdii_peak_cfs(model: SwmmInp, nodes, rain_t_hr: np.ndarray, rain_in: np.ndarray) -> float:
    """Peak RDII rate [cfs] of a sewershed: the RTK hydrographs of its [RDII] areas under a rainfall.

    Reads the sewershed's [RDII] sewer areas (acres; hectares in SI models) and the responses of
    their [HYDROGRAPHS] in the month of the simulation start [1]_, and sums their hydrographs with
    :func:`capacitysim.hydrology.rdii.rtk_peak_cfs`: each response r of a unit hydrograph is a
    triangle with time to peak T_r, recession K_r T_r and volume R_r x rainfall x sewer area [2]_;
    the flows of the sewershed's nodes add. Initial abstraction (Dmax) is ignored, which overstates
    RDII slightly, so a gpd of removed I/I maps to a smaller (more conservative) fraction.
    """
    if len(rain_in) == 0:
        raise InputError("the model's rainfall is not a [TIMESERIES] capacitysim can read; give --storm or a fraction")
    nodes = set(nodes)
    month = sim_start(model).month
    si = model.flow_units not in US_FLOW_UNITS
    area_by_uh: dict[str, float] = {}
    for r in model.rows("RDII"):
        if model.canon_node(r.tokens[0]) in nodes and len(r.tokens) >= 3:
            area = model_number(r.tokens[2], f"[RDII] sewer area at {r.tokens[0]}")
            if si:  # hectares -> acres
                area *= ACRES_PER_HECTARE
            area_by_uh[r.tokens[1].upper()] = area_by_uh.get(r.tokens[1].upper(), 0.0) + area
    responses = [(rtk_params(model, uh, month), area_ac) for uh, area_ac in area_by_uh.items()]
    return rtk_peak_cfs(responses, rain_t_hr, rain_in)


def run_end_hr(model: SwmmInp, storm: "Storm | None" = None, spinup_hr: float = 0.0) -> float:
    """End of the simulation [hr from its (possibly moved) start], as :func:`write_scenario` sets it.

    ``spinup_hr`` hours are prepended (:class:`Spinup`); a ``storm`` (its ``start_hr`` counted from
    the moved start) extends the end to :data:`STORM_TAIL_HR` after the storm.
    """
    end = (sim_end(model) - sim_start(model)).total_seconds() / SECONDS_PER_HOUR + spinup_hr
    if storm is not None:
        end = max(end, storm.start_hr + len(storm.depth_in) * storm.dt_min / MINUTES_PER_HOUR + STORM_TAIL_HR)
    return end


#: Hours the simulation runs past the end of a design storm (write_scenario extends END_DATE/TIME).
STORM_TAIL_HR = 24.0
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
        :func:`capacitysim.hydrology.rdii.inflow_sources_cfs` of the edit's sources: the sump pumps
        ``N x gpm / GPM_PER_CFS`` [cfs] from the first interval with rain (after a one-minute ramp)
        to ``end_hr``; the roof runoff by the SCS unit hydrograph on TR-55 CN excess (NEH 630
        ch. 16; TR-55 ch. 2, eq. 2-1 to 2-4). ``record`` names the nodes and basin and holds the
        volumes [ft^3]: of the series as written and, for the roof, TR-55's Q(P, CN) x area
        (Table 174-19.2 [3]_).
    """
    t = np.asarray(rain_t_hr, float)
    if t.size == 0 or not np.nansum(np.asarray(rain_in, float)) > 0:
        raise InputError("sump pumps / roof leaders: the run has no rainfall capacitysim can read "
                         "(the model's gauge is not a [TIMESERIES]); give --storm")
    times, flow, hyd = inflow_sources_cfs(src.sump_pumps, src.sump_pump_gpm, src.roof_area_sqft, src.roof_cn,
                                          src.roof_tc_hr, rain_t_hr, rain_in, end_hr)
    return times, flow, {"nodes": list(src.nodes), "basin": src.basin, **hyd}


# --------------------------------------------------------------------------- line-level editing


def _q(tok: str) -> str:
    """A token as SWMM reads it: quoted when empty or holding spaces."""
    tok = str(tok)
    return f'"{tok}"' if (tok == "" or any(c.isspace() for c in tok)) and not tok.startswith('"') else tok


def _num_text(v: float) -> str:
    return f"{float(v):.10g}"


class _Editor:
    """Edits of a model's text by line: replace, comment out, append to a section (created when absent).

    Lines not touched are kept byte for byte (latin-1 text); appended lines go after the last data
    line of their section, so the file keeps its layout and comments.
    """

    def __init__(self, model: SwmmInp):
        self.model = model
        self.replaced: dict[int, str] = {}
        self.added: dict[str, list[str]] = {}

    def set(self, line_no: int, text: str) -> None:
        self.replaced[line_no] = text

    def comment_out(self, line_no: int, why: str) -> None:
        self.replaced[line_no] = f";{self.model.lines[line_no - 1]}  ; capacitysim: {why}"

    def add(self, section: str, text: str) -> None:
        self.added.setdefault(section, []).append(text)

    def set_option(self, name: str, value: str) -> None:
        for r in self.model.rows("OPTIONS"):
            if r.tokens[0].upper() == name:
                self.set(r.line, f"{name:<21}{value}")
                return
        self.add("OPTIONS", f"{name:<21}{value}")

    def render(self) -> str:
        lines = self.model.lines
        ends: dict[str, int] = {}
        headers = sorted((ln, sec) for sec, ln in self.model.section_lines.items())
        for k, (ln, sec) in enumerate(headers):
            nxt = headers[k + 1][0] if k + 1 < len(headers) else len(lines) + 1
            last = ln
            for j in range(ln + 1, nxt):
                if lines[j - 1].strip():
                    last = j
            ends.setdefault(sec, last)
        after: dict[int, list[str]] = {}
        tail: list[str] = []
        for sec, rows in self.added.items():
            if sec in ends:
                after.setdefault(ends[sec], []).extend(rows)
            else:
                tail.extend(["", f"[{sec}]"] + rows)
        out = []
        for i, line in enumerate(lines, start=1):
            out.append(self.replaced.get(i, line))
            out.extend(after.get(i, []))
        out.extend(tail)
        nl = self.model.newline
        return nl.join(out) + nl


def _hours_text(hours: float) -> str:
    """Decimal hours as written into a time series: ``repr`` (the shortest text that reads back as the same
    double), never rounded to whole seconds."""
    return repr(float(hours))


def _date_leading_pairs(ed: "_Editor", model: SwmmInp, model_start: _dt.datetime) -> tuple[dict[str, int], list[str]]:
    """Give a date to every inline time series value the engine counts from the simulation start.

    SWMM reads the pairs of a series before its first date as hours from the simulation start, and every pair
    after a date as a time of the last date given (:func:`capacitysim.network.model.series_instants`) [1]_. A
    spin-up moves the start, so only the pairs before each series' first date would move: each gets the model's
    own start date and its time as decimal hours since that date's midnight (START_TIME [hr] + its hours, written
    with :func:`_hours_text`), the instant it had. Only those tokens of the line change (the rest of the line,
    comments and spacing included, stays as written); lines after a series' first date are not touched. A line
    that would then hold more than the engine's ``MAXTOKS`` tokens or ``MAXLINE`` characters is written as
    several lines in the same place (one per dated pair, then the rest of the line as it was).

    Returns
    -------
    (dict, list of str)
        The number of values dated per series (named as first written), and notes for series left as written
        because they could not be read.
    """
    from capacitysim.network.inp_text import ENGINE_MAXLINE, ENGINE_MAXTOKS, engine_upper

    date_tok = model_start.strftime("%m/%d/%Y")
    midnight = _dt.datetime.combine(model_start.date(), _dt.time())
    start_hr = (model_start - midnight).total_seconds() / SECONDS_PER_HOUR
    names: dict[str, str] = {}
    for r in model.rows("TIMESERIES"):
        if r.tokens:
            names.setdefault(engine_upper(r.tokens[0]), r.tokens[0])
    counts: dict[str, int] = {}
    notes: list[str] = []
    for name in names.values():
        if series_file(model, name) is not None:
            continue
        try:
            points = [p for p in series_instants(model, name, model_start) if p.from_start]
        except InputError as exc:
            notes.append(f"time series {name} is left as written (it could not be read as the engine reads it: {exc}); "
                         "values it gives in hours from the start move with the spin-up")
            continue
        by_line: dict[int, list] = {}
        for p in points:
            by_line.setdefault(p.line, []).append(p)
        for line_no, pts in by_line.items():
            line = model.lines[line_no - 1]
            spans = engine_token_spans(line)
            new = {p.time_index: f"{date_tok} {_hours_text(start_hr + p.hours)}" for p in pts}
            text = line
            for k in sorted(new, reverse=True):
                _, a, b = spans[k]
                text = text[:a] + new[k] + text[b:]
            if len(spans) + len(new) > ENGINE_MAXTOKS or len(text) >= ENGINE_MAXLINE - 2:
                text = _split_dated_line(line, spans, new)
            ed.set(line_no, text)
        if points:
            counts[name] = len(points)
    return counts, notes


def _split_dated_line(line: str, spans: list, new: dict[int, str]) -> str:
    """A line whose dated pairs would not fit one engine line, as several lines in its place: one line per
    dated pair, then the rest of the line from the first token that is not one of them (a lone rest token,
    a date or a time without value, joins the last pair's line, where the engine reads it the same)."""
    name = line[spans[0][1]:spans[0][2]]
    out = [f"{name} {new[k]} {line[spans[k + 1][1]:spans[k + 1][2]]}" for k in sorted(new)]
    rest_from = max(new) + 2
    if rest_from < len(spans):
        rest = line[spans[rest_from][1]:spans[-1][2]]
        if len(spans) - rest_from == 1:
            out[-1] += f" {rest}"
        else:
            out.append(f"{name} {rest}")
    tail = line[spans[-1][2]:].strip()
    if tail:  # a comment, or tokens past the engine's MAXTOKS (never read): kept as a comment
        out[-1] += f" {tail}" if tail.startswith(";") else f" ; {tail}"
    return "\n".join(out)


def _abs_stamp(when: _dt.datetime) -> str:
    return when.strftime("%m/%d/%Y %H:%M:%S")


def _timeline(model: SwmmInp, spin: float, storm: "Storm | None") -> dict:
    """The scenario's simulation start, report start and end (datetimes) and the model's own start."""
    start0 = sim_start(model)
    start = start0 - _dt.timedelta(hours=spin)
    report0 = start0 + _dt.timedelta(hours=report_start_hr(model))
    end = start + _dt.timedelta(hours=run_end_hr(model, storm, spin))
    return {"model_start": start0, "start": start, "report_start": max(report0, start0) if spin > 0 else report0, "end": end}


#: The connection shapes ``peaking`` can name.
PATTERN_SHAPES = ("pattern", "constant")


def connection_shape(model: SwmmInp, node: str, peaking) -> tuple[np.ndarray, str]:
    """Hourly factors (24, mean exactly 1) that shape a connection, and the name of their source.

    ``peaking="pattern"``: the HOURLY pattern of the node's own [DWF] (else the HOURLY pattern
    the model's [DWF] lines use most), divided by its mean, so the connection adds its stated
    average flow whatever the model's patterns average (population x per-capita and
    unit-conversion patterns included); MONTHLY, DAILY and WEEKEND factors are not applied.
    Without any HOURLY DWF pattern the connection is constant. A number: a constant flow of
    ``flow x factor`` (the design peak held for the whole run).
    """
    if peaking != "pattern":
        return np.full(24, float(peaking)), f"constant peak (average x peaking factor {float(peaking):g})"
    own, common = _hourly_dwf_patterns(model)
    if node in own:
        name, f = own[node]
        return f / f.mean(), f"HOURLY pattern {name} of the node's [DWF], normalized to mean 1"
    if common is not None:
        name, f = common
        return f / f.mean(), f"HOURLY pattern {name} (the model's most used in [DWF]), normalized to mean 1"
    return np.ones(24), "constant (the model has no HOURLY [DWF] pattern)"


def _hourly_dwf_patterns(model: SwmmInp) -> tuple[dict, tuple | None]:
    """The HOURLY patterns of the model's [DWF] in one pass, kept with the model (a screen asks for every node's:
    scanning every [DWF] row per node took minutes at 10,000 nodes): ``({node: (name, 24 factors)}, (name, factors) of
    the most used, ties to the last name, or None)``; a node's is the first of its rows that names an HOURLY pattern
    (of mean > 0, 24 factors or more)."""
    cached = model.__dict__.get("_hourly_dwf_patterns")
    if cached is not None:
        return cached
    pats = model.patterns()

    def hourly(names):
        for n in names:
            p = pats.get(str(n).upper())
            if p and p[0] == "HOURLY" and len(p[1]) >= 24 and np.mean(p[1][:24]) > 0:
                return str(n), np.asarray(p[1][:24], float)
        return None

    own: dict = {}
    counts: dict[str, int] = {}
    for nd, _, pt, _ in model.dwf_rows():
        h = hourly(pt)
        if h:
            own.setdefault(nd, h)
            counts[h[0]] = counts.get(h[0], 0) + 1
    common = None
    if counts:
        name = max(counts, key=lambda k: (counts[k], k))
        common = (name, hourly([name])[1])
    model.__dict__["_hourly_dwf_patterns"] = out = (own, common)
    return out


def _windows(t0: _dt.datetime, t1: _dt.datetime, events) -> list[tuple[_dt.datetime, _dt.datetime]]:
    """[t0, t1] cut to the event periods (the whole of it without events)."""
    if not events:
        return [(t0, t1)]
    return [(max(t0, a), min(t1, b)) for a, b in events if min(t1, b) > max(t0, a)]


def hourly_volume_factor(factors, t0: _dt.datetime, t1: _dt.datetime) -> float:
    """Integral of an hour-of-day step pattern between two times [pattern x hours]."""
    if t1 <= t0:
        return 0.0
    f = np.asarray(factors, float)
    total_hr = (t1 - t0).total_seconds() / SECONDS_PER_HOUR
    whole_days = math.floor(total_hr / 24.0)
    vol = whole_days * float(f.sum())
    t = t0 + _dt.timedelta(days=whole_days)
    while t < t1:
        nxt = min(t.replace(minute=0, second=0, microsecond=0) + _dt.timedelta(hours=1), t1)
        vol += f[t.hour] * (nxt - t).total_seconds() / SECONDS_PER_HOUR
        t = nxt
    return vol


def write_scenario(model: SwmmInp, edits, out_path: str | Path, *, rain: tuple[np.ndarray, np.ndarray] | None = None) -> dict:
    """Apply ``edits`` to the text of ``model`` line by line and write it to ``out_path``; return a record.

    Only the lines an edit touches change; everything else is kept byte for byte (any 8-bit
    encoding). Names are matched as SWMM matches them (ignoring case). External files the model
    reads are made absolute with respect to the model's folder (the scenario is written
    elsewhere). ``rain`` is the (times [hr from the scenario's start], depths [in]) used to turn a
    remediation's gpd into a fraction and to drive sump pumps and roofs (default: the storm among
    the edits, else the model's own rainfall).
    """
    out_path = Path(out_path)
    if out_path.resolve() == model.path.resolve():
        raise InputError("a scenario is never written over its input model")
    ed = _Editor(model)
    record = _apply(ed, model, list(edits), rain, out_path)
    text = prepare_inp_text(ed.render(), model.path.resolve().parent, None)
    if model.newline != "\n":
        text = text.replace("\n", model.newline)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_path.with_name(f".{out_path.name}.part")  # whole or absent: written, then renamed
    tmp.write_bytes(text.encode("latin-1", errors="replace"))
    os.replace(tmp, out_path)
    return record


def _apply(ed: _Editor, model: SwmmInp, edits: list, rain, out_path: Path) -> dict:
    fu = model.flow_units
    record: dict = {"connections": [], "remediations": [], "storm": None, "inflows": [], "sources": [],
                    "spinup_hr": 0.0, "fixes": [], "notes": []}
    storm = next((e for e in edits if isinstance(e, Storm)), None)
    spin_edit = next((e for e in edits if isinstance(e, Spinup)), None)
    spin = float(spin_edit.hours) if spin_edit else 0.0
    tl = _timeline(model, spin, storm)
    record["spinup_hr"] = spin
    record["simulation"] = {"start": tl["start"].isoformat(), "end": tl["end"].isoformat(),
                            "report_start": tl["report_start"].isoformat(), "spinup_hr": spin,
                            "model_start": tl["model_start"].isoformat()}
    if rain is None:
        if storm is not None:
            rain = (storm.start_hr + np.arange(len(storm.depth_in)) * storm.dt_min / MINUTES_PER_HOUR, np.asarray(storm.depth_in))
        else:
            t, d = model_rainfall(model)
            rain = (t + spin, d)

    def node_of(name, what):
        n = model.find_node(name)
        if n is None:
            raise InputError(f"{what} node {name!r} is not a node of {model.path.name}")
        return n

    def stamp(hours_from_start: float) -> str:
        return _abs_stamp(tl["start"] + _dt.timedelta(seconds=round(hours_from_start * SECONDS_PER_HOUR)))

    # [INFLOWS] FLOW lines per node, edited together and written once
    inflow_rows = {}
    for r in model.rows("INFLOWS"):
        if len(r.tokens) >= 2 and r.tokens[1].upper() == "FLOW":
            inflow_rows[model.canon_node(r.tokens[0])] = r
    inflow_spec: dict[str, dict] = {}

    def spec_of(node):
        if node not in inflow_spec:
            r = inflow_rows.get(node)
            t = (r.tokens if r else [node, "FLOW"]) + [""] * 8
            inflow_spec[node] = {"row": r, "node": t[0], "ts": t[2], "type": t[3] or "FLOW", "mfactor": t[4] or "1.0",
                                 "sfactor": t[5] or "1.0", "baseline": finite_number(t[6]) or 0.0,
                                 "pattern": t[7]}
        return inflow_spec[node]

    ts_rows: list[str] = []
    pat_rows: list[str] = []
    pat_names: dict[tuple, str] = {}

    # --- connections: [INFLOWS] baseline x an HOURLY pattern of mean 1 (volume-true)
    events = None if storm is not None else event_windows(model)  # a storm run comments [EVENTS] out
    if events:
        record["notes"].append(f"the model's [EVENTS] limit the simulation to {len(events)} window(s); injected volumes "
                               "are counted within them")
    by_node: dict[str, list] = {}
    for e in edits:
        if isinstance(e, Connection):
            by_node.setdefault(node_of(e.node, "connection"), []).append(e)
    pats = model.patterns()
    for node, conns in by_node.items():
        spec = spec_of(node)
        base_q = 0.0
        factors_sum = np.zeros(24)
        for e in conns:
            f, shape = connection_shape(model, node, e.peaking)
            q = gpd_to_model_flow(e.flow_gpd, fu)
            base_q += q
            factors_sum += q * f
            report_vol = q * sum(hourly_volume_factor(f, a, b) for a, b in _windows(tl["report_start"], tl["end"], events)) * SECONDS_PER_HOUR
            run_vol = q * sum(hourly_volume_factor(f, a, b) for a, b in _windows(tl["start"], tl["end"], events)) * SECONDS_PER_HOUR
            record["connections"].append({"node": node, "flow_gpd": e.flow_gpd, "peaking": e.peaking if e.peaking == "pattern" else float(e.peaking),
                                          "shape": shape, "model_flow": q, "peak_factor": float(f.max()), "low_factor": float(f.min()),
                                          "label": e.label,
                                          **({"commitment": e.commitment} if e.commitment is not None else {}),
                                          "intended_report_volume_model": report_vol, "intended_run_volume_model": run_vol})
        new_f = factors_sum / base_q  # weighted shape of all connections here (mean = their mean peaking)
        old_b = spec["baseline"]
        if old_b != 0.0:
            old_p = pats.get(spec["pattern"].upper()) if spec["pattern"] else None
            if spec["pattern"] and (old_p is None or old_p[0] != "HOURLY" or len(old_p[1]) < 24):
                raise InputError(f"connection at {node}: the node's [INFLOWS] baseline uses the {old_p[0] if old_p else '?'} "
                                 f"pattern {spec['pattern']}, which cannot be combined with an hourly connection; "
                                 "connect at a neighbouring node")
            old_f = np.asarray(old_p[1][:24], float) if spec["pattern"] else np.ones(24)
            new_f = (old_b * old_f + base_q * new_f) / (old_b + base_q)
            record["notes"].append(f"{node}: the connection is merged with the node's existing [INFLOWS] baseline "
                                   f"({old_b:g} model units) into one baseline and pattern (same flows)")
        key = tuple(np.round(new_f, 12))
        if key not in pat_names:
            pat_names[key] = f"{PREFIX}CONN_{len(pat_names) + 1}"
            name = pat_names[key]
            vals = [_num_text(v) for v in new_f]
            pat_rows.append(f"{name} HOURLY " + " ".join(vals[:6]))
            for k in range(6, 24, 6):
                pat_rows.append(f"{name} " + " ".join(vals[k:k + 6]))
        spec["baseline"] = old_b + base_q
        spec["pattern"] = pat_names[key]

    # --- measured I/I: the sub-basin's [RDII] becomes the fitted RTK set
    measured_nodes = _write_measured(ed, model, [e for e in edits if isinstance(e, MeasuredRdii)], record, node_of)

    # --- RDII remediation: scale the [RDII] sewer areas of the sewershed
    rdii_rows = [r for r in model.rows("RDII") if len(r.tokens) >= 3]
    areas = {r.line: a for r in rdii_rows if (a := finite_number(r.tokens[2])) is not None}
    for e in edits:
        if not isinstance(e, Remediation):
            continue
        nodes = {node_of(n, "remediation") for n in e.nodes}
        if nodes & measured_nodes:
            raise InputError(f"remediation of {e.basin or sorted(nodes)[:3]}: its nodes {sorted(nodes & measured_nodes)[:5]} "
                             "take measured I/I, whose RTK sets already say what the rehabilitation removed (measure "
                             "the change with period=change, the pre set before and the post set after)")
        fraction, peak_cfs = e.fraction, None
        if e.gpd is not None:
            peak_cfs = rdii_peak_cfs(model, nodes, *rain)
            peak_gpd = peak_cfs * GPD_PER_CFS
            if peak_gpd <= 0:
                raise InputError(f"remediation of {e.gpd:g} gpd: the sewershed {e.basin or ''} has no RDII to remove")
            if e.gpd > peak_gpd:
                raise InputError(f"remediation of {e.gpd:,.0f} gpd exceeds the sewershed's peak RDII of {peak_gpd:,.0f} gpd")
            fraction = e.gpd / peak_gpd
        hit = [r for r in rdii_rows if model.canon_node(r.tokens[0]) in nodes and r.line in areas]
        if not hit:
            raise InputError(f"remediation: no [RDII] at the nodes of sewershed {e.basin or sorted(nodes)[:3]}")
        before = sum(areas[r.line] for r in hit)
        for r in hit:
            areas[r.line] *= (1.0 - fraction)
            ed.set(r.line, " ".join([_q(r.tokens[0]), _q(r.tokens[1]), _num_text(areas[r.line])] + [_q(t) for t in r.tokens[3:]]))
        record["remediations"].append({"basin": e.basin, "n_nodes": len(nodes), "nodes": sorted(nodes), "fraction": fraction,
                                       "gpd": e.gpd, "peak_rdii_gpd_before": None if peak_cfs is None else peak_cfs * GPD_PER_CFS,
                                       "sewer_area_before": before, "sewer_area_after": before * (1 - fraction)})
    if any(isinstance(e, SourceRemoval) for e in edits):
        raise InputError("a SourceRemoval is modelled by its sources in the BEFORE model: write "
                         "its .sources there and nothing in the after model (run_demonstration does this)")

    # --- hydrographs injected as [INFLOWS] time series (sources, TR-55 runoff)
    def attach_series(node, name, what):
        spec = spec_of(node)
        if spec["ts"] not in ("", '""'):
            raise InputError(f"{what} at node {node}: the node already has a FLOW [INFLOWS] time series ({spec['ts']}); "
                             "put it at another node")
        spec["ts"], spec["sfactor"] = name, "1.0"

    for e in edits:
        if isinstance(e, InjectedInflow):
            node = node_of(e.node, "inflow")
            name = PREFIX + re.sub(r"\W", "_", f"{e.name}_{node}")
            for t, q in zip(e.time_hr, e.flow_cfs):
                ts_rows.append(f"{name} {stamp(t)} {_num_text(q / CFS_PER_FLOW_UNIT[fu])}")
            attach_series(node, name, f"hydrograph {e.name}")
            t_hr, q_cfs = np.asarray(e.time_hr, float), np.asarray(e.flow_cfs, float)
            r0 = (tl["report_start"] - tl["start"]).total_seconds() / SECONDS_PER_HOUR
            inside = np.union1d(np.clip(t_hr, r0, None), [r0]) if len(t_hr) else t_hr
            record["inflows"].append({"node": node, "series": name,
                                      "volume_cf": float(np.trapezoid(q_cfs, t_hr * SECONDS_PER_HOUR)),
                                      # what the node statistics count: from the report start on
                                      "report_volume_cf": float(np.trapezoid(np.interp(inside, t_hr, q_cfs, left=0.0, right=0.0),
                                                                             inside * SECONDS_PER_HOUR)) if len(t_hr) else 0.0})
    sources = [e for e in edits if isinstance(e, InflowSources)]
    if sources:
        for e in sources:
            for n in e.nodes:
                node_of(n, "sump pump / roof leader")
        _write_sources(sources, model, rain, run_end_hr(model, storm, spin), ts_rows, record, attach_series, stamp,
                       lambda n: node_of(n, "sump pump / roof leader"))

    for node, spec in inflow_spec.items():
        toks = [_q(spec["node"]), "FLOW", _q(spec["ts"] if spec["ts"] not in ('""',) else ""), spec["type"] or "FLOW",
                spec["mfactor"], spec["sfactor"], _num_text(spec["baseline"])]
        if spec["pattern"]:  # an empty pattern is left out (SWMM reads "" as a name)
            toks.append(_q(spec["pattern"]))
        text = " ".join(toks)
        if spec["row"] is not None:
            ed.set(spec["row"].line, text)
        else:
            ed.add("INFLOWS", text)

    # --- the design storm on every gauge
    if storm is not None:
        _write_storm(ed, model, storm, tl, ts_rows, record, stamp)

    # --- spin-up: the start moves earlier; the time series values the engine counts from the start (those before
    # each series' first date) get the model's start date, so they stay where the model put them; reporting starts
    # at the model's start
    if spin > 0:
        ed.set_option("START_DATE", tl["start"].strftime("%m/%d/%Y"))
        ed.set_option("START_TIME", tl["start"].strftime("%H:%M:%S"))
        ed.set_option("REPORT_START_DATE", tl["report_start"].strftime("%m/%d/%Y"))
        ed.set_option("REPORT_START_TIME", tl["report_start"].strftime("%H:%M:%S"))
        dated, unread = _date_leading_pairs(ed, model, tl["model_start"])
        record["notes"].extend(unread)
        dated.update(_date_series_files(ed, model, tl["model_start"], out_path, record))
        if dated:
            names = sorted(dated)
            shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
            record["fixes"].append(
                f"{sum(dated.values())} time series value(s) given before their series' first date ({shown}), which "
                f"SWMM counts from the simulation start, were given the model's start date "
                f"({tl['model_start']:%m/%d/%Y}) and decimal hours since its midnight, so they keep their instants when "
                f"the {spin:g} h spin-up moves the start; values after a series' first date carry that date and are "
                "left as written")
        shifted = _shift_elapsed_time_rules(ed, model, spin)
        if shifted:
            record["fixes"].append(f"{shifted} control rule condition(s) on the elapsed SIMULATION TIME were moved "
                                   f"{spin:g} h later, so they act at the same instants of the model's period when "
                                   "the spin-up moves the start (SIMULATION DATE, CLOCKTIME, MONTH and DAY are "
                                   "instants already)")
    saves_all = any(r.tokens[0].upper() == "NODES" and len(r.tokens) > 1 and r.tokens[1].upper() == "ALL"
                    for r in model.rows("REPORT"))
    for e in edits:
        if isinstance(e, ReportNodes) and not saves_all:  # names after NODES ALL would replace ALL
            names = [_q(n) for n in dict.fromkeys(model.find_node(x) or x for x in e.nodes)]
            for k in range(0, len(names), 10):
                ed.add("REPORT", "NODES " + " ".join(names[k:k + 10]))
    need_end = tl["end"]
    if need_end > sim_end(model):
        ed.set_option("END_DATE", need_end.strftime("%m/%d/%Y"))
        ed.set_option("END_TIME", need_end.strftime("%H:%M:%S"))
    for row in pat_rows:
        ed.add("PATTERNS", row)
    for row in ts_rows:
        ed.add("TIMESERIES", row)
    return record


#: A rule condition on the elapsed simulation time: ``IF|AND|OR SIMULATION TIME <relation> <value>``
#: (SWMM 5.2 User's Manual, Appendix C.3 [CONTROLS]; ``controls.c``: the value in decimal hours or H:M[:S]).
_ELAPSED_RELATIONS = ("=", "<>", "<", "<=", ">", ">=")


def _shift_elapsed_time_rules(ed: _Editor, model: SwmmInp, hours: float) -> int:
    """Move each ``SIMULATION TIME`` condition of [CONTROLS] ``hours`` later; returns how many.

    ``SIMULATION TIME`` is the time elapsed since the simulation start [hr] (``controls.c``, ``ElapsedTime``):
    a spin-up that moves the start earlier would make a rule act ``hours`` sooner in the model's period. The
    value is written as decimal hours (``repr``); the rest of the line stays as written.
    """
    n = 0
    for r in model.rows("CONTROLS"):
        raw = model.lines[r.line - 1]
        spans = engine_token_spans(raw)
        toks = [t.upper() for t, _, _ in spans]
        if (len(toks) == 5 and toks[0] in ("IF", "AND", "OR") and toks[1] == "SIMULATION" and toks[2] == "TIME"
                and toks[3] in _ELAPSED_RELATIONS):
            value = engine_hours(spans[4][0])
            if value is None:
                continue  # the engine refuses it in the run before too
            _, a, b = spans[4]
            ed.set(r.line, raw[:a] + repr(value + hours) + raw[b:].rstrip("\r\n"))
            n += 1
    return n


def _date_series_files(ed: _Editor, model: SwmmInp, start: _dt.datetime, out_path: Path, record: dict) -> dict[str, int]:
    """Time series files the engine reads in hours from the start: a dated copy beside the scenario, the line
    pointed at it.

    A file with no date at all counts every time from the simulation start
    (:func:`capacitysim.network.model.series_file_instants`) [1]_: its copy gives each line the model's start
    date and its time as decimal hours since that midnight (the rest of each line, and every comment or blank
    line, as written). A file with a date anywhere is read as it is: the engine counts its undated lines before
    the first date from the file's last date, not from the start, so the spin-up does not move them (said in a
    note). A file that cannot be read is left as it is (the engine reports it).

    Returns
    -------
    dict
        The number of values dated per series.
    """
    from capacitysim.network.inp_text import engine_lines, engine_upper

    names: dict[str, str] = {}
    for r in model.rows("TIMESERIES"):
        if r.tokens:
            names.setdefault(engine_upper(r.tokens[0]), r.tokens[0])
    date_tok = start.strftime("%m/%d/%Y")
    start_hr = (start - _dt.datetime.combine(start.date(), _dt.time())).total_seconds() / SECONDS_PER_HOUR
    counts: dict[str, int] = {}
    copies: set[str] = set()
    for key, name in names.items():
        path = series_file(model, name)
        if path is None:
            continue
        try:
            points = series_file_instants(path, start)
            lines = engine_lines(path.read_bytes().decode("latin-1"))
        except (OSError, InputError):
            continue
        if not points:
            continue
        if not points[0].from_start:
            if points[0].time_index == 0:  # undated lines before the file's first date
                record["notes"].append(
                    f"time series {name}: its file {path.name} has undated lines before its first date; the engine's "
                    "run counts them from the file's last date, not from the simulation start, so the spin-up does not "
                    "move them (the file is read as it is)")
            continue
        by_line = {p.line: p for p in points}
        out = []
        for i, raw in enumerate(lines, start=1):
            p = by_line.get(i)
            if p is None:
                out.append(raw)
                continue
            m = list(re.finditer(r"[^ \t\n\v\f\r]+", raw.split("\x00", 1)[0]))[p.time_index]
            out.append(f"{raw[:m.start()]}{date_tok} {_hours_text(start_hr + p.hours)}{raw[m.end():]}")
        stem = f"{out_path.stem}.{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}"
        while stem.upper() in copies:
            stem += "_"
        copies.add(stem.upper())
        copy = out_path.with_name(f"{stem}.dat")
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes("".join(out).encode("latin-1"))
        for r in model.rows("TIMESERIES"):
            if len(r.tokens) >= 3 and engine_upper(r.tokens[0]) == key and engine_upper(r.tokens[1]) == "FILE":
                ed.set(r.line, f'{_q(r.tokens[0])} FILE "{copy.resolve()}"')
        record["notes"].append(f"time series {name}: its file {path.name} gives hours from the start; a dated copy "
                               f"({copy.name}: the model's start date and decimal hours on each line) is read instead")
        counts[name] = len(points)
    return counts


def _write_storm(ed: _Editor, model: SwmmInp, storm: "Storm", tl: dict, ts_rows: list, record: dict, stamp) -> None:
    """Every rain gauge reads the design storm; whatever would keep it out of the run is fixed and said."""
    fu = model.flow_units
    name = PREFIX + "STORM"
    gauges = model.rows("RAINGAGES")
    if not gauges:
        raise InputError(f"{model.path.name} has no [RAINGAGES] to carry the design storm (--storm needs a rain gauge "
                         "used by subcatchments or [RDII] unit hydrographs)")
    if not model.rows("SUBCATCHMENTS") and not model.rows("RDII") and not record.get("measured_ii"):
        raise InputError(f"--storm: {model.path.name} has no subcatchments and no [RDII]: no rainfall reaches its network, "
                         "so the design storm cannot be simulated")
    depth = np.asarray(storm.depth_in) * (MILLIMETERS_PER_INCH if model.is_si else 1.0)
    for k, d in enumerate(depth):
        ts_rows.append(f"{name} {stamp(storm.start_hr + k * storm.dt_min / MINUTES_PER_HOUR)} {_num_text(d)}")
    interval = _hhmm(storm.dt_min / MINUTES_PER_HOUR)
    for r in gauges:
        ed.set(r.line, f"{_q(r.tokens[0])} VOLUME {interval} 1.0 TIMESERIES {name}")
    if (model.option("IGNORE_RAINFALL", "NO") or "NO").upper() == "YES":
        ed.set_option("IGNORE_RAINFALL", "NO")
        record["fixes"].append("IGNORE_RAINFALL YES set to NO so the design storm is simulated")
    if (model.option("IGNORE_RDII", "NO") or "NO").upper() == "YES" and model.rows("RDII"):
        record["notes"].append("IGNORE_RDII YES is kept: the model's [RDII] does not respond to the storm")
    for r in model.rows("EVENTS"):
        ed.comment_out(r.line, "[EVENTS] would skip the design storm")
    if model.rows("EVENTS"):
        record["fixes"].append(f"{len(model.rows('EVENTS'))} [EVENTS] window(s) commented out: the whole period is simulated")
    for r in model.rows("FILES"):
        if len(r.tokens) >= 2 and r.tokens[0].upper() == "USE" and r.tokens[1].upper() in ("RAINFALL", "RUNOFF", "RDII"):
            raise InputError(f"--storm: {model.path.name}:{r.line} uses a saved {r.tokens[1].upper()} interface file, "
                             "which would replace the design storm's response; remove the [FILES] USE line or run without --storm")
    wet = parse_clock_hr(model.option("WET_STEP", "0:05:00")) * SECONDS_PER_HOUR
    dt_s = storm.dt_min * 60.0
    if round(dt_s) % max(round(wet), 1) != 0:  # WET_STEP must divide the rain interval (swmm-notes)
        ed.set_option("WET_STEP", _hhmm(dt_s / SECONDS_PER_HOUR) + (":00" if _hhmm(dt_s / SECONDS_PER_HOUR).count(":") == 1 else ""))
        record["fixes"].append(f"WET_STEP set to the storm interval ({storm.dt_min:g} min) so it divides it")
    record["storm"] = {"name": storm.name, "total_in": float(np.sum(storm.depth_in)), "dt_min": storm.dt_min,
                       "start_hr": storm.start_hr, "series": name,
                       "start": (tl["start"] + _dt.timedelta(hours=storm.start_hr)).isoformat()}


def _measured_gauge(model: SwmmInp, e: MeasuredRdii, rdii_at_nodes: list) -> str:
    """The rain gauge driving a measured RTK set: the one asked, else that of the nodes' own unit hydrographs,
    else the model's only gauge."""
    gauges = {r.tokens[0].upper(): r.tokens[0] for r in model.rows("RAINGAGES") if r.tokens}
    listed = ", ".join(sorted(gauges.values())[:10]) or "none"
    if e.gauge is not None:
        if e.gauge.upper() not in gauges:
            raise InputError(f"measured I/I: gauge {e.gauge!r} is not a rain gauge of {model.path.name} (its gauges: {listed})")
        return gauges[e.gauge.upper()]
    uh_gauge = {r.tokens[0].upper(): r.tokens[1] for r in model.rows("HYDROGRAPHS") if len(r.tokens) == 2}
    own = {uh_gauge[r.tokens[1].upper()].upper() for r in rdii_at_nodes if r.tokens[1].upper() in uh_gauge}
    if len(own) == 1 and next(iter(own)) in gauges:
        return gauges[next(iter(own))]
    if len(gauges) == 1:
        return next(iter(gauges.values()))
    if not gauges:
        raise InputError(f"measured I/I: {model.path.name} has no [RAINGAGES]: the measured RTK set needs a rain gauge "
                         "to respond to")
    raise InputError(f"measured I/I at {', '.join(e.nodes[:5])}: {model.path.name} has {len(gauges)} rain gauges and "
                     f"the nodes' own unit hydrographs do not name one; give gauge= (one of {listed})")


def _write_measured(ed: _Editor, model: SwmmInp, measured: list, record: dict, node_of) -> set:
    """Each measured RTK set as a [HYDROGRAPHS] unit hydrograph and the [RDII] lines of its nodes (the nodes' own
    [RDII] lines commented out); returns the nodes that take measured I/I."""
    taken: set = set()
    rdii_rows = [r for r in model.rows("RDII") if len(r.tokens) >= 2]
    for k, e in enumerate(measured):
        nodes = list(dict.fromkeys(node_of(n, "measured I/I") for n in e.nodes))
        if taken & set(nodes):
            raise InputError(f"measured I/I: the nodes {sorted(taken & set(nodes))[:5]} are given two measured RTK sets")
        taken |= set(nodes)
        own = [r for r in rdii_rows if model.canon_node(r.tokens[0]) in set(nodes)]
        gauge = _measured_gauge(model, e, own)
        name = f"{PREFIX}MEASURED_{k + 1}"
        ed.add("HYDROGRAPHS", f"{name} {_q(gauge)}")
        depth = MILLIMETERS_PER_INCH if model.is_si else 1.0  # Dmax, Drecov, Dinit in the model's rain depth unit
        for response, row in zip(("SHORT", "MEDIUM", "LONG"), e.rows):
            values = (*row[:3], *(x * depth for x in row[3:]))
            ed.add("HYDROGRAPHS", f"{name} ALL {response} " + " ".join(_num_text(x) for x in values))
        for r in own:
            ed.comment_out(r.line, f"the sub-basin's RDII is measured ({name})")
        area_each = e.area_ac / len(nodes) / (ACRES_PER_HECTARE if model.is_si else 1.0)
        for n in nodes:
            ed.add("RDII", f"{_q(n)} {name} {_num_text(area_each)}")
        record.setdefault("measured_ii", []).append({"hydrograph": name, "nodes": nodes, "gauge": gauge, "area_ac": e.area_ac,
                                      "rtk": [list(r) for r in e.rows], "source": e.source, "period": e.period,
                                      "replaced_rdii": [{"node": r.tokens[0], "hydrograph": r.tokens[1],
                                                         "area": r.tokens[2] if len(r.tokens) > 2 else None} for r in own]})
    return taken


def _write_sources(sources, model: SwmmInp, rain, end_hr: float, ts_rows: list, record: dict, attach, stamp, node_of) -> None:
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
        for n in dict.fromkeys(node_of(n) for n in e.nodes):
            shares.setdefault(n, [0.0] * len(sources))[k] += 1.0 / len(set(node_of(x) for x in e.nodes))
    groups: dict[tuple, list[str]] = {}
    for n, sh in shares.items():
        groups.setdefault(tuple(sh), []).append(n)
    for g, (sh, group_nodes) in enumerate(groups.items(), start=1):
        times = np.unique(np.round(np.concatenate([series[k][0] for k, w in enumerate(sh) if w > 0]) * SECONDS_PER_HOUR)) / SECONDS_PER_HOUR
        flow = sum(w * np.interp(times, series[k][0], series[k][1], left=0.0, right=0.0) for k, w in enumerate(sh) if w > 0)
        name = f"{PREFIX}SOURCES_{g}"
        for t, q in zip(times, flow):
            ts_rows.append(f"{name} {stamp(t)} {_num_text(float(q) / CFS_PER_FLOW_UNIT[fu])}")
        for n in group_nodes:
            attach(n, name, "sump pumps / roof leaders")
