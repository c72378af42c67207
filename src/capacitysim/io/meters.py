"""Flow-meter and rain-gauge records: logger exports read onto a regular UTC grid, with a quality report.

A sub-basin's I/I is measured from a flow meter (flow, often depth and velocity) and a rain gauge
logged every few minutes (issue 29, item 1). This module reads those records as the loggers export
them and hands the decomposition and the RTK fitting plain numpy arrays:

* **Files**: CSV with a header line, separated by comma, semicolon or tab; metadata lines above the
  table (ADS, Hach FlowWorks and ISCO exports carry site, export and channel lines) are passed over
  and the header row is found; a units row under the header (``,in,ft/s,MGD``) is read for units.
  Timestamps: ISO 8601 with or without a UTC offset, ``MM/DD/YYYY HH:MM[:SS]`` with optional AM/PM
  (two- or four-digit year), ``YYYY/MM/DD HH:MM[:SS]``, ``DD.MM.YYYY HH:MM[:SS]``, in one column or
  in separate Date and Time columns, or in separate Year, Month, Day[, Hour, Minute, Second] columns (SSOAP-style
  exports). A file written newest first is read in reverse (and said so).
* **Units**: flow in gpd, MGD, gpm, cfs or L/s (:data:`capacitysim.checks.FLOW_UNITS_GPD`), rain in
  in or mm, depth in in, ft, mm, cm or m, velocity in ft/s or m/s; from the argument, the column's
  name (``flow_mgd``, ``Flow (MGD)``) or the units row. A flow or rain column whose unit is found
  nowhere is an error: a unit is never guessed (a depth or velocity column found by name without a
  unit is not read, and the reading notes say so).
* **Time**: naive wall-clock timestamps are localized in ``tz`` (an IANA name) with daylight saving
  time handled: in the repeated hour of November the first occurrence of a wall time is daylight
  time and a wall time that goes back is standard time (order decides); a wall time in the missing
  hour of March cannot exist, so its value is reported (``nonexistent_local``), not placed. Times
  with an offset are converted. Output times are UTC; ``time_local`` is the wall clock in ``tz``.
* **Grid**: the logging step is the mode of the differences (or ``step_min``); the grid's phase is
  the most common one; a time within :data:`GRID_JITTER_FRACTION` of a step of the grid is moved to
  it (counted), any other time is *off the grid* (reported with its value, not placed); a missing
  step is NaN (a gap); of duplicate times the first in the file is kept and the others reported.

Nothing is dropped silently: blank or no-data cells are NaN and counted with their lines; every value
not placed on the grid is listed in ``quality["reading"]`` with its line and value; flat lines,
spikes, negative flows and clock drift are *flags* in the report (:func:`quality_report`), the
values stay in the record. Every threshold is a module constant, a program choice (not a published
value), with what it guards against.

Errors are :class:`~capacitysim.errors.DataFileError` naming the file, the line (the file's own
numbering, 1-based), the column, the value and what is allowed.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pandas as pd

from capacitysim.checks import FLOW_UNITS_GPD, MAX_TIME_STEPS
from capacitysim.errors import DataFileError, InputError
from capacitysim.io.plant_flows import file_sha256
from capacitysim.units import INCHES_PER_FOOT, METERS_PER_FOOT, MILLIMETERS_PER_INCH, SECONDS_PER_HOUR

# --------------------------------------------------------------------------------------------
# Policies (program choices, not published values)
# --------------------------------------------------------------------------------------------

#: Flat line: the same value (exactly) for more than this many hours [h]. Program choice: a meter's
#: flow varies within a few hours (the diurnal pattern); a value held for 6 h is a stuck sensor, a
#: logger repeating its last reading, or a surcharged or dry pipe, which the analyst must see. Zero
#: runs are flagged too, with their value (a true zero flow is rare in a sanitary sewer).
FLAT_LINE_HOURS = 6.0

#: Spike rule (a Hampel filter): a value more than this many scaled median absolute deviations from
#: the median of its neighbourhood [-]. Program choice: 6 (about six standard deviations of normal
#: noise) leaves the rising limb and peak of a storm response alone and catches single-sample
#: glitches (a dropout to zero, a value typed or transmitted wrong).
SPIKE_MAD_MULTIPLE = 6.0

#: The neighbourhood of the spike rule: this many hours each side of the value (at least
#: :data:`SPIKE_MIN_HALF_WINDOW_STEPS` steps) [h]. Program choice: short enough that the diurnal
#: pattern is nearly linear across it.
SPIKE_HALF_WINDOW_HOURS = 1.0
#: Fewest steps each side of the value in the spike rule's neighbourhood [-] (program choice).
SPIKE_MIN_HALF_WINDOW_STEPS = 2

#: The spike rule's scale is at least this fraction of the record's median |flow| [-]. Program
#: choice: in a neighbourhood where the meter repeats one value (MAD = 0) any change would otherwise
#: be a spike; with 0.05 and :data:`SPIKE_MAD_MULTIPLE` a spike stands at least 30 % of the median
#: flow off its neighbours.
SPIKE_SCALE_FLOOR_FRACTION = 0.05

#: Consistency constant of the MAD for normally distributed noise (1 / Phi^-1(3/4)) [-].
MAD_TO_SIGMA = 1.4826

#: A rain intensity above this is flagged as implausible [in/h]. Program choice: above the largest
#: hourly totals recorded in the northeastern U.S.; guards against a gauge read in the wrong unit
#: (mm as in) or tip counts read as depth.
RAIN_MAX_IN_PER_HOUR = 6.0

#: Wet events for the clock-drift check: rain separated by at least this many dry hours is two
#: events [h]. Program choice (the inter-event time used in RDII practice is 6 to 24 h).
EVENT_DRY_HOURS = 6.0
#: A wet event takes part in the clock-drift check when its rain is at least this deep [in]. Program
#: choice: smaller events barely move a sanitary meter, and their lag is noise.
EVENT_MIN_RAIN_IN = 0.25
#: The lags tried between rain and the flow's rise, each way [h]. Program choice: a sub-basin's
#: response peaks within hours; a clock wrong by more than this is beyond this check.
DRIFT_MAX_LAG_HOURS = 12.0
#: A month whose lag moves from the first month's by more than this many logging steps is flagged
#: as clock drift [-]. Program choice: one step is the resolution of the lag; two steps of movement
#: is a clock that was reset or drifts.
DRIFT_TOLERANCE_STEPS = 2

#: A time within this fraction of a step of the grid is moved onto it (and counted) [-]. Program
#: choice: loggers and SCADA exports stamp a few seconds late; 2 % is 18 s at 15 min.
GRID_JITTER_FRACTION = 0.02

#: Lines searched for the header row [-].
HEADER_SEARCH_LINES = 60

#: Cells read as "no value" (NaN, counted and listed) rather than refused as text (lower case).
NO_DATA_TOKENS = frozenset({"", "nan", "na", "n/a", "#n/a", "null", "none", "-", "--", "---", "missing",
                            "nodata", "no data"})

#: Rain units -> inches per unit.
RAIN_UNITS_IN = {"in": 1.0, "mm": 1.0 / MILLIMETERS_PER_INCH}
#: Depth units -> inches per unit.
DEPTH_UNITS_IN = {"in": 1.0, "ft": INCHES_PER_FOOT, "mm": 1.0 / MILLIMETERS_PER_INCH,
                  "cm": 10.0 / MILLIMETERS_PER_INCH, "m": 1000.0 / MILLIMETERS_PER_INCH}
#: Velocity units -> ft/s per unit.
VELOCITY_UNITS_FPS = {"ft/s": 1.0, "m/s": 1.0 / METERS_PER_FOOT}

_UNIT_ALIASES = {
    "flow": {"gpd": "gpd", "gal/d": "gpd", "mgd": "mgd", "mgal/d": "mgd", "gpm": "gpm", "gal/min": "gpm",
             "cfs": "cfs", "ft3/s": "cfs", "cf/s": "cfs", "l/s": "l/s", "lps": "l/s", "l_s": "l/s"},
    "rain": {"in": "in", "inch": "in", "inches": "in", "mm": "mm"},
    "depth": {"in": "in", "inch": "in", "inches": "in", "ft": "ft", "feet": "ft", "mm": "mm", "cm": "cm", "m": "m"},
    "velocity": {"fps": "ft/s", "ft/s": "ft/s", "ft/sec": "ft/s", "m/s": "m/s", "mps": "m/s", "m/sec": "m/s"},
}
_UNITS_TEXT = {"flow": "gpd, MGD, gpm, cfs or L/s", "rain": "in or mm", "depth": "in, ft, mm, cm or m",
               "velocity": "ft/s or m/s"}
_UNIT_LABEL = {"gpd": "gpd", "mgd": "MGD", "gpm": "gpm", "cfs": "cfs", "l/s": "L/s"}

_TIME_FORMATS = (
    "ISO8601",
    "%m/%d/%Y %H:%M:%S", "%m/%d/%Y %H:%M", "%m/%d/%Y %I:%M:%S %p", "%m/%d/%Y %I:%M %p",
    "%m/%d/%y %H:%M:%S", "%m/%d/%y %H:%M", "%m/%d/%y %I:%M:%S %p", "%m/%d/%y %I:%M %p",
    "%Y/%m/%d %H:%M:%S", "%Y/%m/%d %H:%M", "%d.%m.%Y %H:%M:%S", "%d.%m.%Y %H:%M",
    "%m-%d-%Y %H:%M:%S", "%m-%d-%Y %H:%M",
)
_TIME_FORMATS_TEXT = ("ISO 8601 (2024-01-05T13:15:00, with or without an offset), MM/DD/YYYY HH:MM[:SS] "
                      "[AM/PM], YYYY/MM/DD HH:MM[:SS] or DD.MM.YYYY HH:MM[:SS]")
_OFFSET = re.compile(r"(?:Z|[+-]\d{2}:?\d{2})$", re.IGNORECASE)
_NUMBER = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")
_THOUSANDS = re.compile(r"^[-+]?\d{1,3}(?:,\d{3})+(?:\.\d*)?$")
_DECIMAL_COMMA = re.compile(r"^[-+]?\d+,\d+$")

#: Lines named in one error message at most.
_MAX_LINES_SHOWN = 5


# --------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------


class Source(NamedTuple):
    """Where a record came from: the file's name and the SHA-256 of its bytes (hex)."""

    file: str
    sha256: str


@dataclass
class MeterRecord:
    """A flow-meter record on a regular UTC grid.

    Attributes
    ----------
    time_utc : numpy.ndarray of datetime64[s]
        Grid times [UTC], regular: ``time_utc[i] = time_utc[0] + i * step_s``.
    time_local : numpy.ndarray of datetime64[s]
        The same instants as naive wall-clock times in ``tz`` (for diurnal patterns; a wall time
        repeats in the fall-back hour, an hour is skipped in spring).
    step_s : int
        The logging step [s].
    flow_gpd : numpy.ndarray of float64
        Flow [gpd]; NaN in gaps (missing steps, blank or no-data cells). Flagged values (spikes,
        flat lines, negatives) are kept as read.
    depth_in : numpy.ndarray of float64 or None
        Depth [in], NaN where missing; None when the file has no depth column.
    velocity_fps : numpy.ndarray of float64 or None
        Velocity [ft/s], NaN where missing; None when the file has no velocity column.
    source : Source
        ``(file, sha256)``: the file's name and the SHA-256 of its bytes.
    tz : str
        The time zone of ``time_local``: the IANA name given, ``UTC``, or a fixed offset
        (``UTC-05:00``) read from the file when no name was given.
    quality : dict
        :func:`quality_report` of this record alone (JSON-ready), with ``reading`` (what the reader
        did: header, units, step, duplicates, values off the grid, daylight-saving times).
    """

    time_utc: np.ndarray
    time_local: np.ndarray
    step_s: int
    flow_gpd: np.ndarray
    depth_in: np.ndarray | None = None
    velocity_fps: np.ndarray | None = None
    source: Source = Source("", "")
    tz: str = "UTC"
    quality: dict = field(default_factory=dict)


@dataclass
class RainRecord:
    """A rain-gauge record on a regular UTC grid.

    Attributes
    ----------
    time_utc, time_local : numpy.ndarray of datetime64[s]
        As :class:`MeterRecord`. ``rain_in[i]`` is the depth logged at ``time_utc[i]``: the depth over
        the step ending there (the loggers' convention for interval totals).
    step_s : int
        The logging step [s].
    rain_in : numpy.ndarray of float64
        Rain depth per step [in]; 0 where the gauge reported 0, NaN where it reported nothing.
    source : Source
    tz : str
    quality : dict
        :func:`quality_report` of the rain alone (``reading``, gaps, negatives, flat lines of a
        non-zero value, implausible intensities).
    """

    time_utc: np.ndarray
    time_local: np.ndarray
    step_s: int
    rain_in: np.ndarray
    source: Source = Source("", "")
    tz: str = "UTC"
    quality: dict = field(default_factory=dict)


# --------------------------------------------------------------------------------------------
# Text table
# --------------------------------------------------------------------------------------------


def _lines(numbers) -> str:
    nums = [int(n) for n in numbers]
    shown = ", ".join(str(n) for n in nums[:_MAX_LINES_SHOWN])
    more = f" and {len(nums) - _MAX_LINES_SHOWN} more" if len(nums) > _MAX_LINES_SHOWN else ""
    return f"line{'s' if len(nums) > 1 else ''} {shown}{more}"


def _tokens(name: str) -> list[str]:
    return re.findall(r"[a-z]+|\d+", name.lower())


def _split(line: str, delim: str) -> list[str]:
    return [c.strip() for c in next(csv.reader([line], delimiter=delim))] if line.strip() else []


def _is_number(text: str) -> bool:
    t = text.strip()
    return bool(_NUMBER.match(t) or _THOUSANDS.match(t) or _DECIMAL_COMMA.match(t))


def _looks_like_time(text: str) -> bool:
    t = text.strip()
    return bool(re.match(r"^\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}", t) or re.match(r"^\d{1,2}:\d{2}", t))


def _is_time_name(name: str) -> bool:
    toks = set(_tokens(name))
    return bool(toks & {"date", "time", "timestamp", "datetime", "dttm", "dt", "stamp"})


#: The parts of a timestamp written in columns of their own, in the order they are composed.
_PARTS = ("year", "month", "day", "hour", "minute", "second")
_PART_ALIASES = {"yr": "year", "yyyy": "year", "mo": "month", "mm": "month", "dd": "day", "hr": "hour", "hh": "hour",
                 "min": "minute", "mn": "minute", "sec": "second", "ss": "second"}


def _part_columns(columns: list[str]) -> dict[str, int] | None:
    """Columns that each hold one part of the timestamp (``Month, Day, Year, Hour, Minute``): part -> column; None
    unless year, month and day are all there."""
    found: dict[str, int] = {}
    for i, name in enumerate(columns):
        key = name.strip().lower()
        key = _PART_ALIASES.get(key, key)
        if key in _PARTS and key not in found:
            found[key] = i
    return {p: found[p] for p in _PARTS if p in found} if {"year", "month", "day"} <= set(found) else None


def _composed(row: list[str], parts: dict[str, int]) -> str:
    """The ISO text of a row's timestamp from its part columns; the parts as written when one is not a whole
    number (the parser then refuses it naming the row)."""
    vals = {}
    for part, i in parts.items():
        text = row[i].strip()
        if not re.fullmatch(r"\d{1,4}(?:\.0+)?", text):
            return " ".join(row[j] for j in parts.values())
        vals[part] = int(float(text))
    return (f"{vals['year']:04d}-{vals['month']:02d}-{vals['day']:02d} {vals.get('hour', 0):02d}:"
            f"{vals.get('minute', 0):02d}:{vals.get('second', 0):02d}")


@dataclass
class _Table:
    where: str
    header_line: int
    delimiter: str
    columns: list[str]
    units_row: list[str] | None
    rows: list[list[str]]
    lines: np.ndarray  # 1-based file line of each row
    notes: list[str]
    parts: dict | None = None  # the timestamp written in part columns (year, month, day...): part -> column


def _read_table(path, time_column) -> tuple[_Table, str]:
    p = Path(path)
    where = str(p)
    if not p.exists():
        raise DataFileError(f"{where}: file not found")
    if p.is_dir():
        raise DataFileError(f"{where}: is a folder, expected a CSV file or a logger export")
    data = p.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    lines = text.splitlines()
    if not any(line.strip() for line in lines):
        raise DataFileError(f"{where}: empty file, expected a header line and timestamped rows")
    wanted = None
    if time_column is not None:
        wanted = {c.strip().lower() for c in ([time_column] if isinstance(time_column, str) else time_column)}

    def data_like(i: int, delim: str, n: int) -> bool:
        # the next non-blank line (after at most one units row) splits into n fields
        seen = 0
        for j in range(i + 1, min(len(lines), i + 4)):
            if not lines[j].strip():
                continue
            cells = _split(lines[j], delim)
            while len(cells) > n and cells[-1] == "":
                cells.pop()
            if len(cells) != n:
                return False
            if any(_is_number(c) for c in cells) or _looks_like_time(cells[0]):
                return True
            seen += 1
            if seen > 1:
                return False
        return False

    header = None
    for i, line in enumerate(lines[:HEADER_SEARCH_LINES]):
        if not line.strip():
            continue
        best = None
        for delim in (",", ";", "\t"):
            cells = _split(line, delim)
            while cells and cells[-1] == "":
                cells.pop()
            if len(cells) < 2 or any(c == "" for c in cells[:1]):
                continue
            if any(_is_number(c) or _looks_like_time(c) for c in cells):
                continue
            names = {c.lower() for c in cells}
            if wanted is not None:
                if not wanted <= names:
                    continue
            elif not any(_is_time_name(c) for c in cells) and _part_columns(cells) is None:
                continue
            if not data_like(i, delim, len(cells)):
                continue
            if best is None or len(cells) > len(best[1]):
                best = (delim, cells)
        if best is not None:
            header = (i, *best)
            break
    if header is None:
        shown = " | ".join(line.strip()[:60] for line in lines[:3] if line.strip())
        if wanted is not None:
            raise DataFileError(
                f"{where}: no header row with the column(s) {', '.join(map(repr, sorted(wanted)))} in the first "
                f"{HEADER_SEARCH_LINES} lines (the file starts: {shown!r})"
            )
        raise DataFileError(
            f"{where}: no timestamp column: no header row naming a date or time column (Timestamp, Date/Time, "
            f"Date and Time...) above timestamped rows in the first {HEADER_SEARCH_LINES} lines (the file starts: "
            f"{shown!r}); give time_column= if the column has another name"
        )
    h, delim, columns = header
    if len(set(c.lower() for c in columns)) != len(columns):
        raise DataFileError(f"{where}: line {h + 1}: the header names a column twice ({', '.join(map(repr, columns))})")
    n = len(columns)
    units_row = None
    rows: list[list[str]] = []
    nums: list[int] = []
    notes: list[str] = []
    if h > 0:
        notes.append(f"{h} line(s) above the header passed over (metadata)")
    body = lines[h + 1:]
    reader = csv.reader(io.StringIO("\n".join(body)), delimiter=delim)
    for k, cells in enumerate(reader):
        lineno = h + 2 + k
        cells = [c.strip() for c in cells]
        if not any(cells):
            continue
        while len(cells) > n and cells[-1] == "":
            cells.pop()
        if len(cells) != n:
            raise DataFileError(
                f"{where}: line {lineno}: {len(cells)} field(s) separated by {_delim_name(delim)}, the header on line "
                f"{h + 1} has {n} ({', '.join(map(repr, columns))}); got {delim.join(cells)[:80]!r}"
            )
        if not rows and units_row is None and _is_units_row(cells):
            units_row = cells
            continue
        rows.append(cells)
        nums.append(lineno)
    if not rows:
        raise DataFileError(f"{where}: no data rows under the header on line {h + 1}")
    return _Table(where, h + 1, delim, columns, units_row, rows, np.asarray(nums), notes), file_sha256(p)


def _is_units_row(cells: list[str]) -> bool:
    """A row under the header with no number, no timestamp and at least one unit (``,in,ft/s,MGD``)."""
    if any(_is_number(c) for c in cells) or _looks_like_time(cells[0]):
        return False
    return any(c and any(_unit_in(c, kind) for kind in _UNIT_ALIASES) for c in cells)


def _delim_name(d: str) -> str:
    return {",": "commas", ";": "semicolons", "\t": "tabs"}[d]


def _find(table: _Table, given, kind: str, argname: str) -> int | None:
    cols = table.columns
    low = [c.lower() for c in cols]
    if given is not None:
        g = given.strip().lower()
        if g not in low:
            raise DataFileError(
                f"{table.where}: no column {given!r} for {kind} (columns: {', '.join(map(repr, cols))}); "
                f"name the column with {argname}="
            )
        return low.index(g)
    return None


def _candidates(columns: list[str], kind: str, exclude: set[int]) -> list[int]:
    out = []
    for i, name in enumerate(columns):
        if i in exclude:
            continue
        toks = _tokens(name)
        t = set(toks)
        if kind == "flow":
            if t & {"total", "totalizer", "totaliser", "volume", "cumulative"}:
                continue
            hit = bool(t & {"flow", "discharge", "q", "qfinal", "qcontinuity", "qcalc"}) or (
                len(toks) <= 2 and bool(t & {"mgd", "gpd", "gpm", "cfs", "lps"}) and not (t & {"rain", "depth"}))
        elif kind == "rain":
            hit = bool(t & {"rain", "rainfall", "precip", "precipitation", "prcp", "ppt"})
        elif kind == "depth":
            hit = bool(t & {"depth", "level", "lvl", "stage", "dfinal", "d"})
        else:
            hit = bool(t & {"velocity", "vel", "v", "vfinal", "speed"})
        if hit:
            out.append(i)
    return out


def _pick(table: _Table, given, kind: str, argname: str, exclude: set[int], required: bool) -> int | None:
    i = _find(table, given, kind, argname)
    if i is not None:
        return i
    cands = _candidates(table.columns, kind, exclude)
    cols = ", ".join(map(repr, table.columns))
    if len(cands) > 1:
        raise DataFileError(
            f"{table.where}: columns {', '.join(repr(table.columns[i]) for i in cands)} all look like {kind}: "
            f"choose one with {argname}= (columns: {cols})"
        )
    if not cands:
        if required:
            raise DataFileError(f"{table.where}: no {kind} column found by name (columns: {cols}); name it with {argname}=")
        return None
    return cands[0]


def _time_columns(table: _Table, time_column) -> list[int]:
    cols = table.columns
    if time_column is not None:
        names = [time_column] if isinstance(time_column, str) else list(time_column)
        if not 1 <= len(names) <= 2:
            raise InputError(f"time_column: one column name or (date column, time column); got {time_column!r}")
        return [_find(table, n, "time", "time_column") for n in names]
    kinds = []
    for i, name in enumerate(cols):
        t = set(_tokens(name))
        both = bool(t & {"timestamp", "datetime", "dttm", "stamp"}) or ({"date", "time"} <= t)
        kinds.append("both" if both else "date" if "date" in t else "time" if t & {"time", "dt"} else "")
    both = [i for i, k in enumerate(kinds) if k == "both"]
    dates = [i for i, k in enumerate(kinds) if k == "date"]
    times = [i for i, k in enumerate(kinds) if k == "time"]
    if len(both) == 1:
        return both
    if len(both) > 1:
        raise DataFileError(
            f"{table.where}: columns {', '.join(repr(cols[i]) for i in both)} all look like timestamps: choose one "
            f"with time_column= (columns: {', '.join(map(repr, cols))})"
        )
    if len(dates) == 1 and len(times) == 1:
        return [dates[0], times[0]]
    if len(dates) + len(times) == 1:
        return dates + times
    parts = _part_columns(cols)
    if parts is not None and not dates and not times:
        table.parts = parts
        return list(parts.values())
    raise DataFileError(
        f"{table.where}: no timestamp column recognised (columns: {', '.join(map(repr, cols))}); give time_column= "
        "(one column, or a date column and a time column)"
    )


# --------------------------------------------------------------------------------------------
# Units and numbers
# --------------------------------------------------------------------------------------------


def _unit_in(text: str, kind: str) -> str | None:
    low = text.lower().replace(" ", "")
    # longest aliases first so 'mgal/d' is not read as 'gal/d', 'ft/s' not as 'ft'
    for alias in sorted(_UNIT_ALIASES[kind], key=len, reverse=True):
        if re.search(r"(?<![a-z0-9])" + re.escape(alias) + r"(?![a-z0-9])", low):
            return _UNIT_ALIASES[kind][alias]
    return None


def _unit_quiet(table: _Table, col: int, kind: str) -> str | None:
    row = table.units_row[col] if table.units_row else ""
    return _unit_in(table.columns[col], kind) or (_unit_in(row, kind) if row else None)


def _units(table: _Table, col: int, kind: str, given: str | None, notes: list[str]) -> tuple[str, str]:
    name = table.columns[col]
    from_name = _unit_in(name, kind)
    from_row = _unit_in(table.units_row[col], kind) if table.units_row and table.units_row[col] else None
    if given is not None:
        u = _UNIT_ALIASES[kind].get(given.strip().lower().replace(" ", ""))
        if u is None:
            raise InputError(f"units: {given!r} is not a {kind} unit; allowed: {_UNITS_TEXT[kind]}")
        for found, where in ((from_name, "its name"), (from_row, "the units row")):
            if found is not None and found != u:
                notes.append(f"column {name!r} read in {u} as given, although {where} says {found}")
        return u, "argument"
    if from_name is not None and from_row is not None and from_name != from_row:
        raise DataFileError(
            f"{table.where}: column {name!r}: its name says {from_name} but the units row (line {table.header_line + 1}) "
            f"says {table.units_row[col]!r}; give the units"
        )
    if from_name is not None:
        return from_name, "column name"
    if from_row is not None:
        return from_row, f"units row (line {table.header_line + 1})"
    row = f"; the units row says {table.units_row[col]!r}" if table.units_row and table.units_row[col] else ""
    raise DataFileError(
        f"{table.where}: no unit for the {kind} column {name!r}: neither its name nor a units row under the header "
        f"gives one{row}; give the units ({_UNITS_TEXT[kind]}), e.g. units='MGD', or name the column "
        f"{kind}_<unit>; a unit is never guessed"
    )


def _numbers(table: _Table, col: int, kind: str) -> tuple[np.ndarray, list[int]]:
    """The column as float64: no-data cells NaN (their lines returned); text refused with its line."""
    out = np.empty(len(table.rows), dtype=np.float64)
    blank_lines: list[int] = []
    bad: list[int] = []
    for k, row in enumerate(table.rows):
        cell = row[col]
        if cell.lower() in NO_DATA_TOKENS:
            out[k] = np.nan
            blank_lines.append(int(table.lines[k]))
            continue
        t = cell.replace(" ", "")
        if table.delimiter == "," and _THOUSANDS.match(t):
            t = t.replace(",", "")
        elif table.delimiter != "," and _DECIMAL_COMMA.match(t):
            t = t.replace(",", ".")
        try:
            v = float(t) if _NUMBER.match(t) else None
        except ValueError:
            v = None
        if v is None or not np.isfinite(v):
            bad.append(k)
            continue
        out[k] = v
    if bad:
        k = bad[0]
        raise DataFileError(
            f"{table.where}: {_lines(table.lines[bad])}: column {table.columns[col]!r} ({kind}) is not a number: got "
            f"{table.rows[k][col]!r} (blank or {', '.join(sorted(t for t in NO_DATA_TOKENS if t)[:4])}... are read as missing)"
        )
    return out, blank_lines


# --------------------------------------------------------------------------------------------
# Timestamps, time zones, grid
# --------------------------------------------------------------------------------------------


def _zone(tz: str | None):
    if tz is None:
        return None
    if not isinstance(tz, str) or not tz.strip():
        raise InputError(f"tz: an IANA time zone name (e.g. America/New_York, UTC); got {tz!r}")
    try:
        return ZoneInfo(tz.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise InputError(f"tz: {tz!r} is not an IANA time zone name (e.g. America/New_York, UTC)") from None


def _parse_naive(text: pd.Series) -> tuple[pd.Series, str]:
    probe = text.iloc[: min(len(text), 200)]
    best, best_n = _TIME_FORMATS[0], -1
    for fmt in _TIME_FORMATS:
        n = int(pd.to_datetime(probe, format=fmt, errors="coerce").notna().sum())
        if n > best_n:
            best, best_n = fmt, n
        if n == len(probe):
            break
    parsed = pd.to_datetime(text, format=best, errors="coerce")
    fails = parsed.isna()
    if fails.any():
        for fmt in _TIME_FORMATS:
            if fmt == best or not fails.any():
                continue
            again = pd.to_datetime(text[fails], format=fmt, errors="coerce")
            parsed[fails] = again
            fails = parsed.isna()
    return parsed, best


def _parse_times(table: _Table, tcols: list[int], zone, tz: str | None, reading: dict):
    """File rows -> (UTC seconds int64, keep mask); notes written into ``reading``."""
    where = table.where
    names = [table.columns[i] for i in tcols]
    if table.parts:
        raw = pd.Series([_composed(row, table.parts) for row in table.rows])
    else:
        raw = pd.Series([" ".join(row[i] for i in tcols).strip() for row in table.rows])
    raw = raw.str.replace(r"\s+", " ", regex=True)
    empty = raw == ""
    if empty.any():
        raise DataFileError(
            f"{where}: {_lines(table.lines[empty.to_numpy()])}: no timestamp in column(s) {', '.join(map(repr, names))} "
            "on a row with values"
        )
    has_off = raw.str.contains(_OFFSET)
    if has_off.any() and not has_off.all():
        naive_rows = table.lines[~has_off.to_numpy()]
        raise DataFileError(
            f"{where}: {_lines(naive_rows)}: timestamp {raw[~has_off].iloc[0]!r} has no UTC offset while others have "
            "one; a record uses one convention"
        )
    if has_off.all():
        utc = pd.to_datetime(raw, format="ISO8601", utc=True, errors="coerce")
        bad = utc.isna().to_numpy()
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise DataFileError(
                f"{where}: {_lines(table.lines[bad])}: column(s) {', '.join(map(repr, names))}: {raw[k]!r} is not a "
                f"timestamp; expected {_TIME_FORMATS_TEXT}"
            )
        wall = pd.to_datetime(raw.str.replace(_OFFSET, "", regex=True).str.strip(), format="ISO8601", errors="coerce")
        offsets = sorted({int(s) for s in ((wall - utc.dt.tz_localize(None)).dt.total_seconds())})
        reading["timestamps"] = {"format": "ISO8601 with UTC offset", "offsets_s": offsets}
        if zone is None:
            if len(offsets) > 1:
                raise DataFileError(
                    f"{where}: the timestamps carry several UTC offsets ({', '.join(_offset_text(o) for o in offsets)}), "
                    "daylight saving time: give tz (the IANA zone, e.g. America/New_York) so local times are defined"
                )
            zone = _dt.timezone(_dt.timedelta(seconds=offsets[0]))
            tz = "UTC" if offsets[0] == 0 else "UTC" + _offset_text(offsets[0])
        secs = utc.dt.tz_localize(None).to_numpy().astype("datetime64[s]").astype(np.int64)
        keep = np.ones(len(secs), dtype=bool)
        written = wall.to_numpy().astype("datetime64[s]")
        differ = _to_local(secs.astype("datetime64[s]"), zone) != written
        if differ.any():
            k = int(np.flatnonzero(differ)[0])
            reading["notes"].append(
                f"{int(differ.sum())} timestamp(s) ({_lines(table.lines[differ])}) carry an offset other than {tz}'s at "
                f"that instant (first {raw[k]!r}); converted by their offset, time_local is the wall clock in {tz}"
            )
        return secs, keep, zone, tz
    wall, fmt = _parse_naive(raw)
    bad = wall.isna().to_numpy()
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise DataFileError(
            f"{where}: {_lines(table.lines[bad])}: column(s) {', '.join(map(repr, names))}: {raw[k]!r} is not a "
            f"timestamp; expected {_TIME_FORMATS_TEXT}"
        )
    reading["timestamps"] = {"format": fmt, "offsets_s": None}
    if zone is None:
        raise DataFileError(
            f"{where}: the timestamps ({raw[0]!r}...) have no UTC offset: give tz, the IANA time zone of the logger's "
            "clock (e.g. America/New_York, or UTC); local times are never assumed"
        )
    # newest first? read in reverse so that the repeated hour is resolved by order
    w = wall.to_numpy().astype("datetime64[s]").astype(np.int64)
    if len(w) > 1 and (np.diff(w) < 0).sum() > (np.diff(w) > 0).sum():
        reading["notes"].append("the file lists the newest time first; its rows are read in reverse")
        return None  # caller reverses the table and calls again
    idx = pd.DatetimeIndex(wall.to_numpy())
    first = idx.tz_localize(zone, ambiguous="NaT", nonexistent="NaT")
    dst_all = idx.tz_localize(zone, ambiguous=np.ones(len(idx), dtype=bool), nonexistent="NaT")
    nonexistent = np.asarray(dst_all.isna())
    ambiguous = np.asarray(first.isna()) & ~nonexistent
    is_dst = np.ones(len(idx), dtype=bool)
    n_first = n_second = 0
    if ambiguous.any():
        day = None
        prev = None
        state = True
        for k in np.flatnonzero(ambiguous):
            d = w[k] // 86400
            if d != day:
                day, prev, state = d, None, True
            if prev is not None and w[k] <= prev:
                state = False
            is_dst[k] = state
            prev = w[k]
            n_first += state
            n_second += not state
    loc = idx.tz_localize(zone, ambiguous=is_dst, nonexistent="NaT")
    secs = np.zeros(len(idx), dtype=np.int64)
    ok = ~nonexistent
    secs[ok] = loc[ok].tz_convert("UTC").tz_localize(None).to_numpy().astype("datetime64[s]").astype(np.int64)
    reading["ambiguous_local"] = {
        "rule": "a wall time in the repeated (fall-back) hour is daylight time at its first occurrence and standard "
                "time once the wall clock has gone back (file order decides)",
        "count": int(ambiguous.sum()), "as_daylight": int(n_first), "as_standard": int(n_second),
        "lines": [int(x) for x in table.lines[ambiguous]],
    }
    reading["nonexistent_local"] = [
        {"line": int(table.lines[k]), "time_local": str(raw[k])} for k in np.flatnonzero(nonexistent)
    ]
    return secs, ok, zone, tz


def _offset_text(seconds: int) -> str:
    sign = "+" if seconds >= 0 else "-"
    s = abs(int(seconds))
    return f"{sign}{s // 3600:02d}:{s % 3600 // 60:02d}"


def _iso(sec: int) -> str:
    return str(np.datetime64(int(sec), "s")) + "Z"


def _to_local(t_utc: np.ndarray, zone) -> np.ndarray:
    idx = pd.DatetimeIndex(t_utc.astype("datetime64[s]")).tz_localize("UTC").tz_convert(zone).tz_localize(None)
    return idx.to_numpy().astype("datetime64[s]")


def _grid(where: str, secs: np.ndarray, lines: np.ndarray, values: dict[str, np.ndarray], step_min, reading: dict):
    """Place rows (UTC seconds, file order) on a regular grid; report duplicates and off-grid values."""
    order = np.argsort(secs, kind="stable")
    back = np.flatnonzero(np.diff(secs) < 0)
    if back.size:
        reading["notes"].append(
            f"{back.size} row(s) earlier than the row before them ({_lines(lines[back + 1])}); placed by their time"
        )
    s = secs[order]
    if step_min is not None:
        try:
            step = float(step_min) * 60.0
        except (TypeError, ValueError):
            raise InputError(f"step_min: a logging step in minutes (e.g. 5, 15); got {step_min!r}") from None
        if not np.isfinite(step) or step < 1 or abs(step - round(step)) > 1e-6:
            raise InputError(f"step_min: a logging step of a whole number of seconds, >= 1 s; got {step_min!r} min")
        step_s = int(round(step))
        reading["step_inferred"] = False
    else:
        d = np.diff(np.unique(s))
        if d.size == 0:
            raise DataFileError(f"{where}: one timestamp only: the logging step cannot be inferred; give step_min")
        vals, counts = np.unique(d, return_counts=True)
        step_s = int(vals[np.argmax(counts)])
        reading["step_inferred"] = True
        reading["step_rule"] = "the mode of the differences between successive times"
    reading["step_s"] = step_s
    tol = int(np.floor(GRID_JITTER_FRACTION * step_s))
    rem = s % step_s
    # the grid's phase: the most common remainder
    pv, pc = np.unique(rem, return_counts=True)
    phase = int(pv[np.argmax(pc)])
    off = (s - phase) % step_s
    dist = np.minimum(off, step_s - off)
    on = dist <= tol
    k = np.where(off <= tol, (s - phase - off) // step_s, (s - phase + (step_s - off)) // step_s)
    snapped = on & (dist > 0)
    reading["snapped"] = int(snapped.sum())
    if snapped.any():
        reading["notes"].append(
            f"{int(snapped.sum())} time(s) within {tol} s of the grid moved onto it (GRID_JITTER_FRACTION = "
            f"{GRID_JITTER_FRACTION} of a step)"
        )
    reading["off_grid"] = [
        {"line": int(lines[order][j]), "time_utc": _iso(int(s[j])),
         **{n: _num(v[order][j]) for n, v in values.items()}}
        for j in np.flatnonzero(~on)
    ]
    if not on.any():
        raise DataFileError(f"{where}: no time lies on a regular grid of {step_s} s; give step_min")
    kk = k[on]
    kmin, kmax = int(kk.min()), int(kk.max())
    n = kmax - kmin + 1
    if n > MAX_TIME_STEPS:
        raise DataFileError(
            f"{where}: the record runs from {_iso(int(s[on][0]))} to {_iso(int(s[on][-1]))} at a step of {step_s} s: "
            f"{n:,} steps, more than {MAX_TIME_STEPS:,}; a wrong timestamp (a year typed wrong?) or a step too short"
        )
    pos = np.flatnonzero(on)
    slot = kk - kmin
    # first in file order wins among rows of one slot
    file_pos = order[pos]
    srt = np.lexsort((file_pos, slot))
    slot_s, pos_s = slot[srt], pos[srt]
    firsts = np.ones(slot_s.size, dtype=bool)
    firsts[1:] = slot_s[1:] != slot_s[:-1]
    dups = []
    for j in np.flatnonzero(~firsts):
        kept = pos_s[j - 1] if firsts[j - 1] else pos_s[np.flatnonzero(firsts[:j])[-1]]
        dups.append({"line": int(lines[order][pos_s[j]]), "time_utc": _iso(int(phase + (slot_s[j] + kmin) * step_s)),
                     "kept_line": int(lines[order][kept]),
                     **{n_: _num(v[order][pos_s[j]]) for n_, v in values.items()}})
    reading["duplicates"] = dups
    t0 = phase + kmin * step_s
    time_utc = (t0 + step_s * np.arange(n, dtype=np.int64)).astype("datetime64[s]")
    placed = {}
    for name, v in values.items():
        arr = np.full(n, np.nan)
        arr[slot_s[firsts]] = v[order][pos_s[firsts]]
        placed[name] = arr
    present = np.zeros(n, dtype=bool)
    present[slot_s[firsts]] = True
    reading["rows"] = int(len(secs))
    reading["placed"] = int(firsts.sum())
    reading["missing_steps"] = int((~present).sum())
    return time_utc, step_s, placed


def _num(v) -> float | None:
    v = float(v)
    return None if np.isnan(v) else v


def _transitions(time_utc: np.ndarray, zone) -> list[dict]:
    if time_utc.size < 2 or isinstance(zone, _dt.timezone):
        return []
    idx = pd.DatetimeIndex(time_utc).tz_localize("UTC").tz_convert(zone)
    local = idx.tz_localize(None).to_numpy().astype("datetime64[s]").astype(np.int64)
    off = local - time_utc.astype(np.int64)
    out = []
    for j in np.flatnonzero(np.diff(off) != 0):
        jump = int(off[j + 1] - off[j])
        out.append({"time_utc": _iso(int(time_utc[j + 1].astype(np.int64))),
                    "kind": "spring forward (a wall-clock hour is skipped)" if jump > 0
                    else "fall back (a wall-clock hour repeats)", "shift_s": jump})
    return out


# --------------------------------------------------------------------------------------------
# Readers
# --------------------------------------------------------------------------------------------


def _read(path, kind: str, time_column, value_columns: dict, units, tz, step_min):
    zone = _zone(tz)
    tz_name = tz.strip() if isinstance(tz, str) else None
    table, sha = _read_table(path, time_column)
    reading: dict = {"file": table.where, "sha256": sha, "header_line": table.header_line,
                     "delimiter": {",": ",", ";": ";", "\t": "tab"}[table.delimiter],
                     "units_row": table.units_row is not None, "notes": list(table.notes)}
    tcols = _time_columns(table, time_column)
    reading["time_columns"] = [table.columns[i] for i in tcols]
    exclude = set(tcols)
    cols: dict[str, int | None] = {}
    main = "flow" if kind == "flow" else "rain"
    cols[main] = _pick(table, value_columns[main], main, f"{main}_column", exclude, True)
    exclude.add(cols[main])
    for extra in ("depth", "velocity"):
        if extra in value_columns:
            cols[extra] = _pick(table, value_columns[extra], extra, f"{extra}_column", exclude, False)
            if cols[extra] is not None:
                exclude.add(cols[extra])
    reading["columns"] = {k: (table.columns[v] if v is not None else None) for k, v in cols.items()}
    reading["units"] = {}
    reading["blank_values"] = {}
    values: dict[str, np.ndarray] = {}
    factor_of = {"flow": FLOW_UNITS_GPD, "rain": RAIN_UNITS_IN, "depth": DEPTH_UNITS_IN, "velocity": VELOCITY_UNITS_FPS}
    out_name = {"flow": "flow_gpd", "rain": "rain_in", "depth": "depth_in", "velocity": "velocity_fps"}
    for k, c in cols.items():
        if c is None:
            continue
        if k != main and value_columns[k] is None and _unit_quiet(table, c, k) is None:
            reading["notes"].append(
                f"column {table.columns[c]!r} looks like {k} but neither its name nor a units row gives its unit "
                f"({_UNITS_TEXT[k]}): not read, a unit is never guessed (put the unit in the name, e.g. "
                f"'{k.capitalize()} ({'in' if k == 'depth' else 'ft/s'})', or add a units row)"
            )
            reading["columns"][k] = None
            continue
        u, how = _units(table, c, k, units if k == main else None, reading["notes"])
        raw, blank = _numbers(table, c, k)
        values[out_name[k]] = raw * factor_of[k][u] if factor_of[k][u] != 1.0 else raw
        reading["units"][k] = {"unit": _UNIT_LABEL.get(u, u), "from": how}
        reading["blank_values"][k] = {"count": len(blank), "lines": blank}
    parsed = _parse_times(table, tcols, zone, tz_name, reading)
    if parsed is None:  # newest first: reverse the rows and parse again
        table.rows.reverse()
        table.lines = table.lines[::-1].copy()
        values = {k: v[::-1].copy() for k, v in values.items()}
        parsed = _parse_times(table, tcols, zone, tz_name, reading)
    secs, ok, zone, tz_name = parsed
    time_utc, step_s, placed = _grid(table.where, secs[ok], table.lines[ok], {k: v[ok] for k, v in values.items()},
                                     step_min, reading)
    for entry in reading.get("nonexistent_local", []):
        j = int(np.flatnonzero(table.lines == entry["line"])[0])
        entry.update({k: _num(v[j]) for k, v in values.items()})
    time_local = _to_local(time_utc, zone)
    reading["dst_transitions"] = _transitions(time_utc, zone)
    _dst_notes(reading)
    reading["tz"] = tz_name
    return placed, time_utc, time_local, step_s, Source(Path(table.where).name, sha), tz_name, reading


def _dst_notes(reading: dict) -> None:
    amb = reading.get("ambiguous_local")
    for tr in reading["dst_transitions"]:
        if tr["shift_s"] > 0 and not reading.get("nonexistent_local"):
            reading["notes"].append(
                f"daylight saving time begins at {tr['time_utc']}: the local hour skipped has no readings, as expected"
            )
        elif amb is not None and amb["as_standard"] == 0:
            reading["notes"].append(
                f"daylight saving time ends at {tr['time_utc']} but no wall time repeats in the file: a logger kept on "
                "standard time all year? If so give tz as a fixed offset (e.g. Etc/GMT+5); the hour after the change "
                "shows as a gap"
            )
    if reading.get("nonexistent_local"):
        reading["notes"].append(
            f"{len(reading['nonexistent_local'])} reading(s) stamped in the local hour skipped in spring (listed in "
            "nonexistent_local with their values, not placed on the grid): a logger on standard time?"
        )


def read_flow_record(
    path: str | os.PathLike,
    *,
    time_column: str | tuple[str, str] | None = None,
    flow_column: str | None = None,
    units: str | None = None,
    tz: str | None = None,
    step_min: float | None = None,
    depth_column: str | None = None,
    velocity_column: str | None = None,
) -> MeterRecord:
    """Read a flow-meter record (CSV or logger export) onto a regular UTC grid.

    Parameters
    ----------
    path : path
        The file: a header row (metadata lines above it and a units row under it are allowed),
        comma, semicolon or tab separated.
    time_column : str or (str, str) or None
        The timestamp column, or a date column and a time column; None finds them by name
        (``Timestamp``, ``Date/Time``, ``Date`` and ``Time``...).
    flow_column : str or None
        The flow column; None finds it by name (``flow``, ``Q``, ``flow_mgd``, ``MGD``, ``QFINAL``).
    units : str or None
        The flow's unit: gpd, MGD, gpm, cfs or L/s; None reads it from the column's name or the units
        row, and refuses the file when neither gives one.
    tz : str or None
        The IANA time zone of the logger's clock (``America/New_York``). Required when the
        timestamps have no UTC offset; with offsets, times are converted and ``time_local`` is in
        ``tz`` (or in the file's offset when ``tz`` is None and the offset is one).
    step_min : float or None
        The logging step [min]; None infers it (the mode of the differences).
    depth_column, velocity_column : str or None
        Depth and velocity columns; None finds them by name when present (``depth``, ``level``,
        ``DFINAL``; ``velocity``, ``VFINAL``). Their units come from the name or the units row
        (depth in in, ft, mm, cm or m; velocity in ft/s or m/s).

    Returns
    -------
    MeterRecord
        Flow [gpd] (depth [in], velocity [ft/s]) on the grid, NaN in gaps, with ``quality``.

    Raises
    ------
    DataFileError
        No header row with a timestamp column, a timestamp that does not parse (its line), text in
        a value column (its line), no unit for a column, ambiguous columns (listed), a row with the
        wrong number of fields, naive times without ``tz``.
    InputError
        A bad argument (unknown unit, unknown time zone, a step that is not whole seconds).
    """
    cols = {"flow": flow_column, "depth": depth_column, "velocity": velocity_column}
    placed, time_utc, time_local, step_s, source, tz_name, reading = _read(
        path, "flow", time_column, cols, units, tz, step_min)
    rec = MeterRecord(time_utc, time_local, step_s, placed["flow_gpd"], placed.get("depth_in"),
                      placed.get("velocity_fps"), source, tz_name)
    rec.quality = quality_report(rec, reading=reading)
    return rec


def read_rain_record(
    path: str | os.PathLike,
    *,
    time_column: str | tuple[str, str] | None = None,
    rain_column: str | None = None,
    units: str | None = None,
    tz: str | None = None,
    step_min: float | None = None,
) -> RainRecord:
    """Read a rain-gauge record (depth per logging interval) onto a regular UTC grid.

    Parameters
    ----------
    path : path
        The file (as :func:`read_flow_record`).
    time_column : str or (str, str) or None
        As :func:`read_flow_record`.
    rain_column : str or None
        The rain column; None finds it by name (``rain``, ``rainfall``, ``precip``, ``rain_in``).
    units : {"in", "mm"} or None
        The rain's unit; None reads it from the column's name or the units row (refused when
        neither gives one). Millimetres are divided by 25.4.
    tz, step_min
        As :func:`read_flow_record`.

    Returns
    -------
    RainRecord
        Depth per step [in]: 0 where the gauge reported 0, NaN where it reported nothing.

    Raises
    ------
    DataFileError, InputError
        As :func:`read_flow_record`.
    """
    placed, time_utc, time_local, step_s, source, tz_name, reading = _read(
        path, "rain", time_column, {"rain": rain_column}, units, tz, step_min)
    rec = RainRecord(time_utc, time_local, step_s, placed["rain_in"], source, tz_name)
    rec.quality = quality_report(rec, reading=reading)
    return rec


# --------------------------------------------------------------------------------------------
# Quality report
# --------------------------------------------------------------------------------------------


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """Start and end (inclusive) of each run of True."""
    m = np.concatenate(([False], np.asarray(mask, dtype=bool), [False]))
    d = np.diff(m.astype(np.int8))
    return list(zip(np.flatnonzero(d == 1).tolist(), (np.flatnonzero(d == -1) - 1).tolist()))


def _span(rec, a: int, b: int) -> dict:
    t = rec.time_utc.astype(np.int64)
    return {"start_utc": _iso(int(t[a])), "end_utc": _iso(int(t[b])),
            "start_local": str(rec.time_local[a]), "end_local": str(rec.time_local[b]),
            "steps": int(b - a + 1), "hours": (b - a + 1) * rec.step_s / SECONDS_PER_HOUR}


def _gaps(rec, values) -> list[dict]:
    return [_span(rec, a, b) for a, b in _runs(np.isnan(values))]


def _flat_lines(rec, values, hours: float, skip_zero: bool = False) -> list[dict]:
    v = values
    same = np.zeros(v.size, dtype=bool)
    if v.size > 1:
        same[1:] = (v[1:] == v[:-1]) & ~np.isnan(v[1:])
    # a run of equal values: its first element plus the following 'same' ones
    out = []
    for a, b in _runs(same):
        a0 = a - 1
        n = b - a0 + 1
        if n * rec.step_s > hours * SECONDS_PER_HOUR and not (skip_zero and v[a0] == 0):
            out.append({**_span(rec, a0, b), "value": float(v[a0]), "zero": bool(v[a0] == 0)})
    return out


def _spikes(rec, values, multiple: float, half_hours: float, floor_fraction: float) -> list[dict]:
    v = values
    n = v.size
    h = max(SPIKE_MIN_HALF_WINDOW_STEPS, int(round(half_hours * SECONDS_PER_HOUR / rec.step_s)))
    finite = v[np.isfinite(v)]
    if n < 2 * h + 1 or finite.size == 0:
        return []
    pad = np.concatenate((np.full(h, np.nan), v, np.full(h, np.nan)))
    win = np.lib.stride_tricks.sliding_window_view(pad, 2 * h + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        med = np.nanmedian(win, axis=1)
        mad = np.nanmedian(np.abs(win - med[:, None]), axis=1)
    floor = floor_fraction * float(np.median(np.abs(finite)))
    scale = np.maximum(MAD_TO_SIGMA * mad, floor)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.abs(v - med) / scale
    hit = np.isfinite(score) & (score > multiple) & (scale > 0)
    t = rec.time_utc.astype(np.int64)
    return [{"time_utc": _iso(int(t[j])), "time_local": str(rec.time_local[j]), "value": float(v[j]),
             "neighbourhood_median": float(med[j]), "scale": float(scale[j]), "score": float(score[j])}
            for j in np.flatnonzero(hit)]


def _negatives(rec, values) -> list[dict]:
    with np.errstate(invalid="ignore"):
        neg = values < 0
    return [{**_span(rec, a, b), "min_value": float(np.min(values[a:b + 1]))} for a, b in _runs(neg)]


def rain_on_grid(rain: RainRecord, time_utc: np.ndarray, step_s: int) -> np.ndarray:
    """Rain depth per step of another grid [in] (the step ending at each time), NaN where unknown.

    The rain's cumulative depth is taken linear within each of its steps, so a coarser gauge is
    spread evenly and a finer one summed.

    Parameters
    ----------
    rain : RainRecord
    time_utc : numpy.ndarray of datetime64[s]
        The target grid [UTC].
    step_s : int
        The target grid's step [s].
    """
    tr = rain.time_utc.astype(np.int64).astype(np.float64)
    x = np.concatenate(([tr[0] - rain.step_s], tr))
    r = rain.rain_in
    cum = np.concatenate(([0.0], np.cumsum(np.nan_to_num(r, nan=0.0))))
    miss = np.concatenate(([0.0], np.cumsum(np.isnan(r).astype(np.float64))))
    te = time_utc.astype(np.int64).astype(np.float64)
    ts = te - step_s
    depth = np.interp(te, x, cum) - np.interp(ts, x, cum)
    unknown = (np.interp(te, x, miss) - np.interp(ts, x, miss)) > 1e-9
    unknown |= (ts < x[0] - 1e-9) | (te > x[-1] + 1e-9)
    depth[unknown] = np.nan
    return depth


def _clock_drift(flow: MeterRecord, rain: RainRecord, *, dry_hours, min_rain_in, max_lag_hours, tolerance_steps) -> dict:
    step = flow.step_s
    r = rain_on_grid(rain, flow.time_utc, step)
    q = flow.flow_gpd
    day = int(round(86400 / step))
    rise = np.full(q.size, np.nan)
    if q.size > day:
        rise[day:] = q[day:] - q[:-day]  # the flow's rise over the same time the day before (diurnal removed)
    wet = np.nan_to_num(r, nan=0.0) > 0
    dry_steps = max(1, int(round(dry_hours * SECONDS_PER_HOUR / step)))
    lmax = max(1, int(round(max_lag_hours * SECONDS_PER_HOUR / step)))
    idx = np.flatnonzero(wet)
    events = []
    if idx.size:
        starts = [idx[0]]
        ends = []
        for a, b in zip(idx[:-1], idx[1:]):
            if b - a > dry_steps:
                ends.append(a)
                starts.append(b)
        ends.append(idx[-1])
        events = list(zip(starts, ends))
    t = flow.time_utc.astype(np.int64)
    out_events = []
    for a, b in events:
        depth = float(np.nansum(r[a:b + 1]))
        if depth < min_rain_in:
            continue
        lo, hi = a - lmax, b + lmax + 1
        entry = {"start_utc": _iso(int(t[a])), "end_utc": _iso(int(t[b])), "month": str(flow.time_local[a])[:7],
                 "rain_in": depth}
        if lo - lmax < 0 or hi + lmax > q.size:
            out_events.append({**entry, "lag_s": None, "reason": "too near the record's ends for the lags tried"})
            continue
        x = np.nan_to_num(r[lo:hi], nan=0.0)
        best, best_c = None, -np.inf
        for lag in range(-lmax, lmax + 1):
            y = rise[lo + lag:hi + lag]
            ok = np.isfinite(y)
            if ok.sum() < 0.5 * y.size:
                continue
            xs, ys = x[ok], y[ok]
            if xs.std() == 0 or ys.std() == 0:
                continue
            c = float(np.corrcoef(xs, ys)[0, 1])
            if c > best_c:
                best, best_c = lag, c
        if best is None:
            out_events.append({**entry, "lag_s": None, "reason": "flow missing in the event's window"})
            continue
        out_events.append({**entry, "lag_s": int(best * step), "lag_steps": int(best), "correlation": best_c})
    months: dict[str, list[int]] = {}
    for e in out_events:
        if e.get("lag_s") is not None:
            months.setdefault(e["month"], []).append(e["lag_steps"])
    month_rows = []
    ref = None
    for m in sorted(months):
        lag = float(np.median(months[m]))
        if ref is None:
            ref = lag
        drift = lag - ref
        month_rows.append({"month": m, "events": len(months[m]), "lag_s": lag * step, "drift_s": drift * step,
                           "flagged": bool(abs(drift) > tolerance_steps)})
    for e in out_events:
        if e.get("lag_s") is not None and ref is not None:
            e["drift_s"] = (e["lag_steps"] - ref) * step
    flagged = [m for m in month_rows if m["flagged"]]
    return {
        "rule": (f"per wet event (rain >= {min_rain_in} in, events split by {dry_hours} h dry) the lag in "
                 f"[-{max_lag_hours}, +{max_lag_hours}] h maximizing the correlation of the rain with the flow's rise "
                 "(flow minus the flow 24 h before); a month's lag is the median of its events'; drift is a month's "
                 f"lag minus the first month's, flagged beyond {tolerance_steps} step(s) ({tolerance_steps * step} s)"),
        "reference_lag_s": None if ref is None else ref * step,
        "events": out_events,
        "months": month_rows,
        "flagged": flagged,
        "max_abs_drift_s": max((abs(m["drift_s"]) for m in month_rows), default=0.0),
    }


def quality_report(
    flow: MeterRecord | RainRecord,
    rain: RainRecord | None = None,
    *,
    flat_line_hours: float = FLAT_LINE_HOURS,
    spike_mad_multiple: float = SPIKE_MAD_MULTIPLE,
    spike_half_window_hours: float = SPIKE_HALF_WINDOW_HOURS,
    spike_scale_floor_fraction: float = SPIKE_SCALE_FLOOR_FRACTION,
    rain_max_in_per_hour: float = RAIN_MAX_IN_PER_HOUR,
    event_dry_hours: float = EVENT_DRY_HOURS,
    event_min_rain_in: float = EVENT_MIN_RAIN_IN,
    drift_max_lag_hours: float = DRIFT_MAX_LAG_HOURS,
    drift_tolerance_steps: int = DRIFT_TOLERANCE_STEPS,
    reading: dict | None = None,
) -> dict:
    """The quality report of a flow record (and its rain gauge): flags, never deletions.

    Parameters
    ----------
    flow : MeterRecord or RainRecord
        The record (a rain record alone gives the rain's report).
    rain : RainRecord or None
        The rain gauge: adds its report and the clock-drift check.
    flat_line_hours : float
        A value repeated for more than this is a flat line [h] (:data:`FLAT_LINE_HOURS`).
    spike_mad_multiple, spike_half_window_hours, spike_scale_floor_fraction : float
        The spike rule (:data:`SPIKE_MAD_MULTIPLE` [-], :data:`SPIKE_HALF_WINDOW_HOURS` [h],
        :data:`SPIKE_SCALE_FLOOR_FRACTION` [-]).
    rain_max_in_per_hour : float
        Rain intensities above this are flagged [in/h] (:data:`RAIN_MAX_IN_PER_HOUR`).
    event_dry_hours, event_min_rain_in, drift_max_lag_hours : float
        Wet events and lags of the clock-drift check [h], [in], [h].
    drift_tolerance_steps : int
        A month's lag moving by more than this many steps is flagged [-].
    reading : dict or None
        What the reader did (internal; the record's own ``quality["reading"]`` is used otherwise).

    Returns
    -------
    dict
        JSON-ready: ``policies``, ``rules`` (each rule in words with its numbers), ``flow`` (or
        ``rain`` for a rain record alone) with ``reading``, ``samples``, ``missing``, ``gaps``
        (start, end, steps, hours), ``flat_lines`` (with ``value`` and ``zero``), ``spikes`` (time,
        value, neighbourhood median, scale, score), ``negatives``; for rain also ``intense``;
        ``rain`` and ``clock_drift`` when a rain record is given; ``counts`` of every flag.
    """
    policies = dict(flat_line_hours=flat_line_hours, spike_mad_multiple=spike_mad_multiple,
                         spike_half_window_hours=spike_half_window_hours,
                         spike_scale_floor_fraction=spike_scale_floor_fraction,
                         rain_max_in_per_hour=rain_max_in_per_hour, event_dry_hours=event_dry_hours,
                         event_min_rain_in=event_min_rain_in, drift_max_lag_hours=drift_max_lag_hours,
                         drift_tolerance_steps=drift_tolerance_steps, grid_jitter_fraction=GRID_JITTER_FRACTION)
    rules = {
        "gaps": "a step of the grid without a value (a missing row, a blank or no-data cell); NaN in the record",
        "flat_lines": f"the same value (exactly) at every step for more than {flat_line_hours} h, zeros included; "
                      "for rain, non-zero values only",
        "spikes": f"|value - median of the values within {spike_half_window_hours} h each side (at least "
                  f"{SPIKE_MIN_HALF_WINDOW_STEPS} steps)| > {spike_mad_multiple} x max({MAD_TO_SIGMA} x MAD of that "
                  f"neighbourhood, {spike_scale_floor_fraction} x the record's median |flow|) (a Hampel filter)",
        "negatives": "a value below zero (runs listed with their minimum)",
        "intense": f"rain above {rain_max_in_per_hour} in/h",
        "program_choice": "every threshold here is a program choice, not a published value",
    }

    def section(rec, is_rain: bool, rd: dict | None) -> dict:
        values = rec.rain_in if is_rain else rec.flow_gpd
        sec = {"reading": rd if rd is not None else rec.quality.get("reading", {}),
               "source": {"file": rec.source[0], "sha256": rec.source[1]},
               "step_s": int(rec.step_s), "samples": int(values.size),
               "start_utc": _iso(int(rec.time_utc[0].astype(np.int64))) if values.size else None,
               "end_utc": _iso(int(rec.time_utc[-1].astype(np.int64))) if values.size else None,
               "missing": int(np.isnan(values).sum()), "gaps": _gaps(rec, values),
               "flat_lines": _flat_lines(rec, values, flat_line_hours, skip_zero=is_rain),
               "negatives": _negatives(rec, values)}
        if is_rain:
            per_h = values / (rec.step_s / SECONDS_PER_HOUR)
            with np.errstate(invalid="ignore"):
                hot = np.flatnonzero(per_h > rain_max_in_per_hour)
            t = rec.time_utc.astype(np.int64)
            sec["intense"] = [{"time_utc": _iso(int(t[j])), "rain_in": float(values[j]), "in_per_h": float(per_h[j])}
                              for j in hot]
        else:
            sec["spikes"] = _spikes(rec, values, spike_mad_multiple, spike_half_window_hours, spike_scale_floor_fraction)
            if rec.depth_in is not None:
                sec["depth_negatives"] = _negatives(rec, rec.depth_in)
                sec["depth_flat_lines"] = _flat_lines(rec, rec.depth_in, flat_line_hours)
        return sec

    out: dict = {"policies": policies, "rules": rules}
    is_rain = isinstance(flow, RainRecord)
    out["rain" if is_rain else "flow"] = section(flow, is_rain, reading)
    if rain is not None and not is_rain:
        out["rain"] = section(rain, True, None)
        out["clock_drift"] = _clock_drift(flow, rain, dry_hours=event_dry_hours, min_rain_in=event_min_rain_in,
                                          max_lag_hours=drift_max_lag_hours, tolerance_steps=drift_tolerance_steps)
    counts = {}
    for name in ("flow", "rain"):
        if name in out:
            s = out[name]
            counts[name] = {k: len(s[k]) for k in ("gaps", "flat_lines", "spikes", "negatives", "intense") if k in s}
            rd = s["reading"]
            counts[name].update({k: len(rd.get(k, [])) for k in ("duplicates", "off_grid", "nonexistent_local")})
    if "clock_drift" in out:
        counts["clock_drift_months_flagged"] = len(out["clock_drift"]["flagged"])
    out["counts"] = counts
    return out


def flag_mask(record: MeterRecord, kinds=("spikes", "flat_lines", "negatives")) -> np.ndarray:
    """Steps of ``record`` flagged by its quality report (bool per step), for a consumer that masks them.

    Parameters
    ----------
    record : MeterRecord
    kinds : iterable of str
        Which flags: ``spikes``, ``flat_lines``, ``negatives``.
    """
    sec = record.quality["flow"]
    t = record.time_utc.astype(np.int64)
    mask = np.zeros(t.size, dtype=bool)

    def at(iso: str) -> int:
        return int(np.searchsorted(t, np.datetime64(iso.rstrip("Z"), "s").astype(np.int64)))

    for kind in kinds:
        for item in sec.get(kind, []):
            if "time_utc" in item:
                mask[at(item["time_utc"])] = True
            else:
                mask[at(item["start_utc"]):at(item["end_utc"]) + 1] = True
    return mask
