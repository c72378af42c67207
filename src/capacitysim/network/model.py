"""Load and validate a SWMM 5 ``.inp`` file; the network as a directed graph; the model's dates and
times and its RDII unit hydrographs.

The reader keeps every data line with its line number, so each problem found names the element,
the section and the line. It is deliberately small and fast (no swmmio import, no quadratic
``model.network``: ../shared/reference/swmm-notes.md); scenario edits are made line by line on the
text (:mod:`capacitysim.network.scenario`).

References
----------
.. [1] Rossman, L.A. (2022). Storm Water Management Model User's Manual Version 5.2,
   EPA/600/R-22/030, Appendix D (the sections of the input file and their fields: ``[OPTIONS]``
   START_DATE/TIME, END_DATE/TIME, REPORT_START_DATE/TIME; ``[EVENTS]``; ``[HYDROGRAPHS]``;
   ``[TIMESERIES]``: dates, times as decimal hours or hours:minutes, several pairs per line, ``FILE``).
.. [2] US EPA, SWMM 5.2.4 source code, https://github.com/USEPA/Stormwater-Management-Model:
   ``src/solver/table.c`` (``table_readTimeseries``, ``table_parseFileLine``, ``table_getFirstEntry``,
   ``table_validate``), ``datetime.c`` (``datetime_strToDate``, ``datetime_strToTime``), ``input.c``
   (``input_readData``: every series' last date starts at the simulation start; ``getTokens``, ``getDouble``).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import re
import warnings
import weakref
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx
import numpy as np

from capacitysim.errors import CapacitysimWarning, DataFileError, InputError, ModelError
from capacitysim.network.inp_text import (
    ENGINE_MAXTOKS,
    engine_lines,
    engine_tokens,
    engine_upper,
    may_be_header,
    resolve_model_path,
    section_of,
)
from capacitysim.units import MINUTES_PER_HOUR, SECONDS_PER_HOUR, US_FLOW_UNITS

#: Every section SWMM 5.2 reads [1]_ (map and tag sections included: the engine skips them).
KNOWN_SECTIONS = frozenset(
    """TITLE OPTIONS REPORT FILES RAINGAGES EVAPORATION TEMPERATURE ADJUSTMENTS SUBCATCHMENTS SUBAREAS
    INFILTRATION LID_CONTROLS LID_USAGE AQUIFERS GROUNDWATER GWF SNOWPACKS JUNCTIONS OUTFALLS DIVIDERS
    STORAGE CONDUITS PUMPS ORIFICES WEIRS OUTLETS XSECTIONS TRANSECTS STREETS INLETS INLET_USAGE LOSSES
    CONTROLS POLLUTANTS LANDUSES COVERAGES LOADINGS BUILDUP WASHOFF TREATMENT INFLOWS DWF RDII HYDROGRAPHS
    CURVES TIMESERIES PATTERNS MAP POLYGONS COORDINATES VERTICES LABELS SYMBOLS BACKDROP TAGS PROFILES
    EVENTS""".split()
)
#: SWMM's flow units [1]_.
FLOW_UNITS = ("CFS", "GPM", "MGD", "CMS", "LPS", "MLD")
NODE_SECTIONS = ("JUNCTIONS", "OUTFALLS", "DIVIDERS", "STORAGE")
LINK_SECTIONS = ("CONDUITS", "PUMPS", "ORIFICES", "WEIRS", "OUTLETS")
#: Link kinds that need a [XSECTIONS] line [1]_ (pumps and outlets have none).
XSECTION_LINKS = ("CONDUITS", "ORIFICES", "WEIRS")
#: Shapes whose first geometry value is not a positive depth (given by a curve or a transect).
_NO_GEOM1 = {"DUMMY", "CUSTOM", "IRREGULAR", "STREET", "FORCE_MAIN"}

_TOKEN = re.compile(r'"[^"]*"|\S+')


#: SWMM pattern types and their number of factors [1]_.
PATTERN_LENGTHS = {"MONTHLY": 12, "DAILY": 7, "HOURLY": 24, "WEEKEND": 24}


def read_model_text(path: str | os.PathLike) -> str:
    """The text of a ``.inp`` decoded byte for byte (latin-1), so any 8-bit encoding round-trips.

    SWMM reads bytes and compares names byte for byte (ignoring ASCII case); decoding as latin-1
    maps every byte to one character, so ``text.encode("latin-1")`` gives the file back unchanged,
    whether it was written in UTF-8, cp1252 or anything else.
    """
    p = Path(path)
    try:
        return p.read_bytes().decode("latin-1")
    except FileNotFoundError:
        raise DataFileError(f"{p}: SWMM input file not found") from None
    except IsADirectoryError:
        raise DataFileError(f"{p}: is a folder, expected a SWMM .inp file") from None
    except PermissionError:
        raise DataFileError(f"{p}: cannot be read (permission denied)") from None


def display_name(name: str) -> str:
    """A name read byte for byte (latin-1) as a person reads it: UTF-8 when its bytes are UTF-8, else cp1252."""
    try:
        raw = name.encode("latin-1")
    except UnicodeEncodeError:
        return name
    for enc in ("utf-8", "cp1252"):
        try:
            return raw.decode(enc)
        except UnicodeDecodeError:
            continue
    return name


def name_variants(name: str) -> list[str]:
    """Ways a user-typed name may appear in a latin-1-decoded model: as typed, UTF-8 and cp1252 bytes."""
    out = [name]
    for enc in ("utf-8", "cp1252"):
        try:
            v = name.encode(enc).decode("latin-1")
        except UnicodeError:
            continue
        if v not in out:
            out.append(v)
    return out


@dataclass
class Row:
    """One data line of a section: its 1-based line number and its tokens (quotes removed)."""

    line: int
    tokens: list[str]


@dataclass
class SwmmInp:
    """A parsed ``.inp``: rows by section (upper-case names), in file order, and the raw lines.

    Names are case-insensitive as in SWMM (``j3`` and ``J3`` are one node); :meth:`node_ids` and
    :meth:`links` give every name in the spelling of the line that defines it, and
    :meth:`find_node` maps any spelling (or the UTF-8/cp1252 form of a typed name) to it.
    """

    path: Path
    sections: dict[str, list[Row]] = field(default_factory=dict)
    section_lines: dict[str, int] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    newline: str = "\n"
    #: engine's view of the network (from :func:`probe_model`): node id -> type, and links
    engine_nodes: dict[str, str] | None = None
    engine_links: list[tuple[str, str, str, str]] | None = None
    #: problems :func:`validate` sees in a file the engine accepted (warnings, not refusals)
    lint: list[str] = field(default_factory=list)

    def rows(self, section: str) -> list[Row]:
        return self.sections.get(section, [])

    def option(self, name: str, default: str | None = None) -> str | None:
        for r in self.rows("OPTIONS"):
            if r.tokens and r.tokens[0].upper() == name.upper() and len(r.tokens) > 1:
                return r.tokens[1]
        return default

    @property
    def flow_units(self) -> str:
        """FLOW_UNITS as the engine reads it: the keyword the value begins with (CFS when none)."""
        value = (self.option("FLOW_UNITS", "CFS") or "CFS").upper()
        return next((u for u in FLOW_UNITS if value.startswith(u)), "CFS")

    @property
    def is_si(self) -> bool:
        return self.flow_units not in US_FLOW_UNITS

    def _canon(self) -> dict[str, str]:
        c = self.__dict__.get("_canon_nodes")
        if c is None:
            c = {}
            for sec in NODE_SECTIONS:
                for r in self.rows(sec):
                    c.setdefault(r.tokens[0].upper(), r.tokens[0])
            self.__dict__["_canon_nodes"] = c
        return c

    def canon_node(self, name: str) -> str:
        """The defining spelling of a node name found in the model text (case-insensitive); the name itself if unknown."""
        return self._canon().get(str(name).upper(), name)

    def find_node(self, name: str) -> str | None:
        """The node a user means by ``name`` (case-insensitive; UTF-8/cp1252 forms tried), or None."""
        c = self._canon()
        for v in name_variants(str(name)):
            if v.upper() in c:
                return c[v.upper()]
        return None

    def node_ids(self) -> dict[str, tuple[str, int]]:
        """Node id -> (section, line), in the spelling of the defining line."""
        out = {}
        seen = set()
        for sec in NODE_SECTIONS:
            for r in self.rows(sec):
                if r.tokens[0].upper() not in seen:
                    seen.add(r.tokens[0].upper())
                    out[r.tokens[0]] = (sec, r.line)
        return out

    def node_ids_of(self, section: str) -> list[str]:
        """Ids of the nodes defined in one node section (e.g. ``OUTFALLS``)."""
        return [n for n, (sec, _) in self.node_ids().items() if sec == section]

    def links(self) -> list[tuple[str, str, str, str, int]]:
        """(link id, kind section, from node, to node, line) for every link (node names canonical)."""
        return [(r.tokens[0], sec, self.canon_node(r.tokens[1]), self.canon_node(r.tokens[2]), r.line)
                for sec in LINK_SECTIONS for r in self.rows(sec) if len(r.tokens) >= 3]

    def xsection_shapes(self) -> dict[str, str]:
        """Link id (upper case) -> cross-section shape (upper case) from [XSECTIONS]."""
        return {r.tokens[0].upper(): r.tokens[1].upper() for r in self.rows("XSECTIONS") if len(r.tokens) >= 2}

    def patterns(self) -> dict[str, tuple[str, list[float]]]:
        """Time patterns: name (upper case) -> (type, factors) from [PATTERNS] [1]_.

        The first line of a pattern names its type; continuation lines repeat the name.
        """
        out: dict[str, tuple[str, list[float]]] = {}
        for r in self.rows("PATTERNS"):
            name = r.tokens[0].upper()
            rest = r.tokens[1:]
            if name not in out:
                if not rest:
                    continue
                kind = rest[0].upper()
                if kind not in PATTERN_LENGTHS:
                    continue
                out[name] = (kind, [])
                rest = rest[1:]
            for t in rest:
                v = _num(t)
                if v is not None:
                    out[name][1].append(v)
        return out

    def dwf_rows(self) -> list[tuple[str, float, list[str], Row]]:
        """FLOW rows of [DWF]: (node, baseline [model flow units], pattern names, row).

        Read once per model (as the node names are): a scenario with many connections asks for them
        once per connection (:func:`capacitysim.network.scenario.connection_shape`).
        """
        rows = self.__dict__.get("_dwf_rows")
        if rows is None:
            rows = []
            for r in self.rows("DWF"):
                if len(r.tokens) >= 3 and r.tokens[1].upper() == "FLOW":
                    v = _num(r.tokens[2])
                    if v is None:
                        continue
                    pats = tuple(t for t in r.tokens[3:] if t.strip())
                    rows.append((self.canon_node(r.tokens[0]), v, pats, r))
            self.__dict__["_dwf_rows"] = rows
        return [(n, v, list(pats), r) for n, v, pats, r in rows]

    def dwf_baseline(self) -> dict[str, float]:
        """Dry-weather FLOW baseline per node [model flow units] from [DWF] (patterns not applied)."""
        out: dict[str, float] = {}
        for node, v, _, _ in self.dwf_rows():
            out[node] = v  # SWMM keeps the last FLOW line of a node
        return out

    def pattern_mean(self, names) -> float:
        """Long-run mean of the product of DWF time patterns [-] (SWMM 5 [1]_, sec. 3.3.10).

        SWMM multiplies the baseline by the MONTHLY, DAILY and HOURLY factors, the WEEKEND factors
        replacing the HOURLY ones on Saturday and Sunday. Over whole weeks and a year that averages
        to mean(monthly) x sum over the days of daily[d] x mean(hourly or weekend)[d] / 7.
        Undefined or unnamed patterns count as 1.
        """
        pats = self.patterns()
        by_type: dict[str, list[float]] = {}
        for n in names:
            p = pats.get(str(n).upper())
            if p and p[1]:
                by_type[p[0]] = p[1]
        monthly = float(np.mean(by_type["MONTHLY"])) if "MONTHLY" in by_type else 1.0
        daily = list(by_type.get("DAILY", [1.0] * 7))[:7]
        daily += [1.0] * (7 - len(daily))
        hourly = float(np.mean(by_type["HOURLY"])) if "HOURLY" in by_type else 1.0
        weekend = float(np.mean(by_type["WEEKEND"])) if "WEEKEND" in by_type else hourly
        # SWMM's DAILY pattern starts on Sunday: index 0 and 6 are the weekend days
        week = sum(d * (weekend if k in (0, 6) else hourly) for k, d in enumerate(daily)) / 7.0
        return monthly * week

    def dwf_mean(self) -> dict[str, float]:
        """Mean dry-weather flow per node [model flow units]: baseline x the mean of its patterns.

        A model that gives DWF as a population and per-capita/unit-conversion patterns gets its
        flow, not its population (see :meth:`pattern_mean`).
        """
        out: dict[str, float] = {}
        for node, v, pats, _ in self.dwf_rows():
            out[node] = v * self.pattern_mean(pats)
        return out


def parse_inp(path: str | os.PathLike) -> SwmmInp:
    """Read a ``.inp`` into sections of numbered rows (no checks beyond readable text).

    Any encoding is read (bytes decoded as latin-1, see :func:`read_model_text`); quoted tokens
    keep their spaces (quotes removed; ``""`` gives an empty token, as SWMM reads it).
    """
    p = Path(path)
    text = read_model_text(p)
    model = SwmmInp(p)
    model.newline = "\r\n" if "\r\n" in text[:100000] else "\n"
    # the lines as the engine reads them (fgets of MAXLINE: a longer line is several), split at LF only
    model.lines = [raw.rstrip("\r\n") for raw in engine_lines(text)]
    section = None
    for i, line in enumerate(model.lines, start=1):
        first = engine_tokens(line)[:1] if may_be_header(line) else None
        if first and first[0].startswith("["):
            # the engine's section matching: the first keyword that is a prefix, ASCII case ignored ([FILE] is
            # [FILES], [JUNC] is [JUNCTIONS], "[FILES]" in quotes too); an unknown header keeps its own name
            section = section_of(first[0]) or first[0].strip("[]").upper()
            model.sections.setdefault(section, [])
            model.section_lines.setdefault(section, i)
            continue
        if section in ("TITLE",):
            continue
        toks = split_tokens(line.split("\x00", 1)[0])  # the engine's C strings end at a NUL byte
        if not toks:
            continue
        if section is None:
            raise ModelError(f"{p.name}:{i}: data before the first [SECTION] header: {line.strip()[:60]!r}")
        model.sections[section].append(Row(i, toks))
    return model


def split_tokens(line: str) -> list[str]:
    """The tokens of one data line: comment (``;``) removed, double quotes removed from quoted tokens."""
    body = line.split(";", 1)[0] if '"' not in line else _strip_comment(line)
    return [t[1:-1] if len(t) >= 2 and t.startswith('"') and t.endswith('"') else t for t in _TOKEN.findall(body)]


def _strip_comment(line: str) -> str:
    inq = False
    for k, ch in enumerate(line):
        if ch == '"':
            inq = not inq
        elif ch == ";" and not inq:
            return line[:k]
    return line


def finite_number(tok: str) -> float | None:
    """A token as a finite float, or None when it is not one."""
    v = _num(tok)
    return v if v is not None and math.isfinite(v) else None


def _num(tok: str) -> float | None:
    try:
        return float(tok)
    except ValueError:
        return None


def model_number(tok: str, what: str) -> float:
    """A number of the model's text; an InputError naming ``what`` when it is not one (or not finite)."""
    try:
        v = float(tok)
    except (TypeError, ValueError):
        raise InputError(f"{what}: {tok!r} is not a number") from None
    if not math.isfinite(v):
        raise InputError(f"{what}: {tok!r} is not a finite number")
    return v


# --------------------------------------------------------------------------- dates and times of the model

#: Date forms read in a model besides the engine's own (:func:`engine_date`: M/D/Y, M-D-Y, Jan-01-2020) [1]_.
DATE_FORMATS = ("%m/%d/%Y", "%m-%d-%Y", "%Y-%m-%d")
#: The START_DATE capacitysim assumes when a model gives none (a program choice).
DEFAULT_START_DATE = "01/01/2000"
#: Clock time of a date given without its time option (midnight).
MIDNIGHT = "0:00"


def parse_clock_hr(tok: str) -> float:
    """A clock time or duration of the model, ``H:MM[:SS]`` or decimal hours -> [hr]."""
    if ":" in tok:
        parts = [model_number(p, f"time {tok!r}") for p in tok.split(":")]
        while len(parts) < 3:
            parts.append(0.0)
        return parts[0] + parts[1] / MINUTES_PER_HOUR + parts[2] / SECONDS_PER_HOUR
    return model_number(tok, "time")


def parse_date(tok: str) -> _dt.date:
    """A date of the model: the engine's forms (:func:`engine_date`, month names included), else one of
    :data:`DATE_FORMATS`; an InputError when it is none of them."""
    d = engine_date(tok)
    if d is not None:
        return d
    for fmt in DATE_FORMATS:
        try:
            return _dt.datetime.strptime(tok, fmt).date()
        except ValueError:
            continue
    raise InputError(f"date {tok!r} is not in MM/DD/YYYY form")


def date_time(date_tok: str, clock_tok: str) -> _dt.datetime:
    """A date and a clock time of the model as one datetime."""
    return _dt.datetime.combine(parse_date(date_tok), _dt.time()) + _dt.timedelta(hours=parse_clock_hr(clock_tok))


def sim_start(model: SwmmInp) -> _dt.datetime:
    """The simulation start, ``START_DATE`` and ``START_TIME`` of ``[OPTIONS]`` [1]_."""
    return date_time(model.option("START_DATE", DEFAULT_START_DATE), model.option("START_TIME", MIDNIGHT))


def sim_end(model: SwmmInp) -> _dt.datetime:
    """The simulation end, ``END_DATE`` (default: the start date) and ``END_TIME`` [1]_."""
    return date_time(model.option("END_DATE", model.option("START_DATE", DEFAULT_START_DATE)),
                     model.option("END_TIME", MIDNIGHT))


#: SWMM 5.2's default routing and reporting steps [s] when ``[OPTIONS]`` gives none [1]_.
DEFAULT_ROUTING_STEP_S = 20.0
DEFAULT_REPORT_STEP_S = 900.0


def simulation_size(model: SwmmInp, extra_hr: float = 0.0) -> dict:
    """How much work one run of a model is, estimated before running it: steps x elements.

    ``steps`` = (simulated period + ``extra_hr`` of spin-up) / ``ROUTING_STEP`` (a variable step only shortens
    steps, so this is a lower bound of the steps the engine takes), ``report_steps`` the same over
    ``REPORT_STEP`` (each writes every element to the results file), ``elements`` = nodes + links +
    subcatchments, ``work`` = the larger count of steps x elements (the engine's time is close to proportional to
    it: about 5e-7 s per step and element for the dynamic wave of the bundled models). The options are read as the
    engine reads them (:func:`capacitysim.network.inp_text.engine_options`).

    Returns
    -------
    dict
        ``steps``, ``elements``, ``work``, ``period_hr``, ``routing_step_s``.

    Raises
    ------
    InputError
        A date, time or step that is not one (named as the model gives it).
    """
    from capacitysim.network.inp_text import engine_options

    opts = engine_options("\n".join(model.lines))  # as the engine reads them: prefixes, the last one wins
    start_date = opts.get("START_DATE", DEFAULT_START_DATE)
    start = date_time(start_date, opts.get("START_TIME", MIDNIGHT))
    end = date_time(opts.get("END_DATE", start_date), opts.get("END_TIME", MIDNIGHT))
    period_hr = (end - start).total_seconds() / SECONDS_PER_HOUR + max(float(extra_hr), 0.0)

    def seconds(key: str, default: float) -> float:
        tok = opts.get(key)
        v = default if tok is None else parse_clock_hr(tok) * SECONDS_PER_HOUR if ":" in tok else model_number(tok, key)
        if not v > 0:
            raise InputError(f"{key} {tok!r} must be a time > 0")
        return v

    step_s = seconds("ROUTING_STEP", DEFAULT_ROUTING_STEP_S)
    report_s = seconds("REPORT_STEP", DEFAULT_REPORT_STEP_S)
    elements = sum(len(model.rows(s)) for s in (*NODE_SECTIONS, *LINK_SECTIONS, "SUBCATCHMENTS"))
    steps = max(period_hr, 0.0) * SECONDS_PER_HOUR / step_s
    report_steps = max(period_hr, 0.0) * SECONDS_PER_HOUR / report_s
    return {"steps": steps, "report_steps": report_steps, "elements": elements,
            "work": max(steps, report_steps) * max(elements, 1), "period_hr": period_hr, "routing_step_s": step_s,
            "report_step_s": report_s}


def report_start_hr(model: SwmmInp) -> float:
    """The model's REPORT_START_DATE/TIME [hr after the simulation start] (0 when absent) [1]_."""
    d = model.option("REPORT_START_DATE")
    if d is None:
        return 0.0
    rs = date_time(d, model.option("REPORT_START_TIME", MIDNIGHT))
    return max((rs - sim_start(model)).total_seconds() / SECONDS_PER_HOUR, 0.0)


def event_windows(model: SwmmInp) -> list[tuple[_dt.datetime, _dt.datetime]]:
    """The model's [EVENTS] periods (start, end), the only times SWMM simulates when there are any [1]_.

    Lines whose dates or times cannot be read are skipped.
    """
    out = []
    for r in model.rows("EVENTS"):
        t = r.tokens
        if len(t) >= 4:
            try:
                a = date_time(t[0], t[1])
                b = date_time(t[2], t[3])
            except (InputError, ValueError):
                continue
            out.append((a, b))
    return out


# --------------------------------------------------------------------------- time series as the engine reads them

#: C's ``isspace`` in the "C" locale (``sscanf``'s ``%d`` and ``%s`` skip or stop at these) [2]_.
_C_SPACE = " \t\n\v\f\r"
_C_INT = re.compile(r"[+-]?[0-9]+")
_C_DECIMAL = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?)",
                        re.I)
_C_HEX = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?")
#: The engine's tokens of a data line with their places (input.c ``getTokens``, as
#: :func:`capacitysim.network.inp_text.engine_tokens` reads them).
_ENGINE_TOKEN = re.compile(r'"([^"\n]*)"?|([^ \t\r\n]+)')


def engine_double(tok: str) -> float | None:
    """A token as the engine's ``getDouble`` reads a number (``strtod`` of the whole token), or None.

    C's ``strtod``: decimal and hexadecimal forms, ``inf``/``infinity``/``nan``; the empty token (``""``)
    is 0 [2]_ (input.c ``getDouble``). Python's own ``float`` differs (it accepts ``1_0`` and spaces).
    """
    if tok == "":
        return 0.0
    if _C_DECIMAL.fullmatch(tok):
        return float("nan") if tok.lstrip("+-").lower().startswith("nan") else float(tok)
    if _C_HEX.fullmatch(tok):
        return float.fromhex(tok)
    return None


def _scan_int(s: str, i: int) -> tuple[int | None, int]:
    """``sscanf``'s ``%d`` at ``s[i:]``: (value or None, position after it)."""
    j = i
    while j < len(s) and s[j] in _C_SPACE:
        j += 1
    m = _C_INT.match(s, j)
    return (int(m.group()), m.end()) if m else (None, i)


def _scan_date(s: str, month_name: bool) -> tuple[int, int | str, int, int]:
    """``sscanf(s, "%d%c%d%c%d")`` (``month_name``: ``"%3s%c%d%c%d"``): (items read, month, day, year);
    what was not read is 0."""
    i = 0
    if month_name:
        while i < len(s) and s[i] in _C_SPACE:
            i += 1
        j = i
        while j < len(s) and j - i < 3 and s[j] not in _C_SPACE:
            j += 1
        month: int | str | None = s[i:j] if j > i else None
        i = j
    else:
        month, i = _scan_int(s, 0)
    if month is None:
        return 0, 0, 0, 0
    n, numbers = 1, []
    for kind in "cdcd":
        if kind == "c":  # any one character
            if i >= len(s):
                break
            i += 1
        else:
            v, i2 = _scan_int(s, i)
            if v is None:
                break
            numbers.append(v)
            i = i2
        n += 1
    numbers += [0, 0]
    return n, month, numbers[0], numbers[1]


def engine_date(tok: str) -> _dt.date | None:
    """A token as the engine reads a date, or None when it is not one.

    SWMM's ``datetime_strToDate`` with its input date format (M/D/Y): a token holding ``-`` or ``/`` read as
    ``month sep day sep year`` with numbers, else as a three-letter month name (``Jan-01-2020``,
    ``jun/1/2024``); the separators are any single character; the year is taken as written
    (``1/1/20`` is the year 20) and must be 1-9999, the day one of the month. ``2020-01-01`` is not a date
    for the engine (its month would be 2020) [2]_ (datetime.c ``datetime_strToDate``,
    ``datetime_encodeDate``, ``datetime_findMonth``).

    Parameters
    ----------
    tok : str
        One token of the model (quotes removed).

    Returns
    -------
    datetime.date or None
    """
    if "-" not in tok and "/" not in tok:
        return None
    n, month, day, year = _scan_date(tok, month_name=False)
    if n < 3:
        n, month, day, year = _scan_date(tok, month_name=True)
        if n < 3:
            return None
        month = MONTHS.index(month.upper()) + 1 if str(month).upper() in MONTHS else 0
    if not (1 <= year <= 9999 and isinstance(month, int) and 1 <= month <= 12):
        return None
    try:
        return _dt.date(year, month, day)
    except ValueError:
        return None


def engine_hours(tok: str) -> float | None:
    """A time token as the engine reads it [hr], or None when it is not one.

    Decimal hours when the whole token is a number (C ``strtod``), else ``H[:M[:S]]`` read by
    ``sscanf("%d:%d:%d")`` (whole numbers, each >= 0, hours may exceed 24; what follows the last number read
    is ignored) [2]_ (table.c ``table_readTimeseries``, datetime.c ``datetime_strToTime``,
    ``datetime_encodeTime``).
    """
    v = engine_double(tok)
    if v is not None:
        return v
    hr, i = _scan_int(tok, 0)
    if hr is None:
        return None
    parts = [hr]
    while len(parts) < 3 and i < len(tok) and tok[i] == ":":
        v2, i2 = _scan_int(tok, i + 1)
        if v2 is None:
            break
        parts.append(v2)
        i = i2
    parts += [0] * (3 - len(parts))
    if min(parts) < 0:
        return None
    return (parts[0] * SECONDS_PER_HOUR + parts[1] * 60 + parts[2]) / SECONDS_PER_HOUR


def engine_token_spans(line: str) -> list[tuple[str, int, int]]:
    """(token, start, end) of each token the engine reads in one engine line, ``line[start:end]`` its text
    as written (quotes included); at most ``MAXTOKS`` (input.c ``getTokens``) [2]_."""
    s = line.split("\x00", 1)[0].split(";", 1)[0]
    out = []
    for m in _ENGINE_TOKEN.finditer(s):
        out.append((m.group(1) if m.group(2) is None else m.group(2), m.start(), m.end()))
        if len(out) == ENGINE_MAXTOKS:
            break
    return out


@dataclass(frozen=True)
class SeriesValue:
    """One value of a SWMM time series and the instant the engine gives it.

    Attributes
    ----------
    when : datetime.datetime
        The instant [date and time, to the microsecond].
    value : float
        The value [the units of what reads the series].
    hours : float
        The time as written, after the date in force [hr] (decimal hours or ``H:MM[:SS]`` read as hours).
    from_start : bool
        True when the instant is counted from the simulation start (no date given before it in the series),
        so that moving START_DATE/TIME moves it; False when it carries a date.
    line : int
        1-based line of the ``.inp`` (inline rows) or of the external file (``file``).
    time_index : int
        Index of the time token among the engine's tokens of that line (the series name is token 0 of an
        inline row; in a file, 0 or 1).
    file : pathlib.Path or None
        The external file of a ``FILE`` series.
    """

    when: _dt.datetime
    value: float
    hours: float
    from_start: bool
    line: int
    time_index: int
    file: Path | None = None


def series_file(model: SwmmInp, name: str) -> Path | None:
    """The external file a time series reads (``name FILE path``, relative to the model's folder), or None.

    The engine reads a series from its file whenever one of its lines names one (the last such line) [2]_.
    """
    path = None
    for _, toks in _series_rows(model, name):
        if len(toks) >= 3 and engine_upper(toks[1]) == "FILE":
            path = resolve_model_path(toks[2], model.path.resolve().parent)
    return path


#: The rows of each model's series, by name (:func:`_series_rows`): one pass over ``[TIMESERIES]`` per model.
_SERIES_ROWS: dict[int, tuple] = {}


def _series_rows(model: SwmmInp, name: str) -> list[tuple[Row, list[str]]]:
    """(row, the engine's tokens) of every ``[TIMESERIES]`` row of the series ``name`` (ASCII case ignored)."""
    rows = model.rows("TIMESERIES")
    hit = _SERIES_ROWS.get(id(model))
    if hit is None or hit[0]() is not model or hit[1] is not rows or hit[2] != len(rows):
        groups: dict[str, list] = {}
        for r in rows:
            toks = engine_tokens_of(model, r)
            if toks:
                groups.setdefault(engine_upper(toks[0]), []).append((r, toks))
        hit = (weakref.ref(model), rows, len(rows), groups)
        if id(model) not in _SERIES_ROWS:
            weakref.finalize(model, _SERIES_ROWS.pop, id(model), None)
        _SERIES_ROWS[id(model)] = hit
    return hit[3].get(engine_upper(name), [])


def engine_tokens_of(model: SwmmInp, row: Row) -> list[str]:
    """The tokens the engine reads in a row of the model (at most ``MAXTOKS``; quotes removed)."""
    return [t for t, _, _ in engine_token_spans(model.lines[row.line - 1])]


def series_instants(model: SwmmInp, name: str, start: _dt.datetime | None = None) -> list[SeriesValue]:
    """Every value of the time series ``name`` at the instant the engine gives it, in the engine's order.

    The engine's reading of ``[TIMESERIES]`` [1]_ [2]_ (SWMM 5.2 User's Manual, Appendix D ``[TIMESERIES]``;
    table.c ``table_readTimeseries``, input.c ``input_readData``):

    * rows ``name [date] time value [date] time value ...``, several pairs per line, at most ``MAXTOKS`` tokens
      a line (the rest of a longer line is not read);
    * each series keeps a *last date*, first the simulation start (``StartDate + StartTime``, a date and a
      time); a token that is a date (:func:`engine_date`) makes its midnight the last date (a date at the end
      of a line too); the time (:func:`engine_hours`, decimal hours or ``H:MM[:SS]``) counts from the last date.
      So pairs before a series' first date are hours from the simulation start, and an undated pair after a
      dated one is a time of that date's day;
    * a series with a ``FILE`` line is read from that file (:func:`series_file_instants`).

    Parameters
    ----------
    model : SwmmInp
    name : str
        The series (ASCII case ignored, as the engine matches names).
    start : datetime.datetime, optional
        The simulation start the series is read against (default: the model's START_DATE/TIME,
        :func:`sim_start`).

    Returns
    -------
    list of SeriesValue
        Empty for a series the model does not define.

    Raises
    ------
    InputError
        A line the engine refuses (fewer than three tokens, a time or value that is not one), naming it;
        an external file that cannot be read (:class:`~capacitysim.errors.DataFileError`).
    """
    start = sim_start(model) if start is None else start
    path = series_file(model, name)
    if path is not None:
        return series_file_instants(path, start)
    out: list[SeriesValue] = []
    last, dated = start, False
    for r, toks in _series_rows(model, name):
        if len(toks) < 3:
            raise InputError(f"{model.path.name}:{r.line}: time series {name} needs a time and a value")
        k, state, h, ti = 1, 1, 0.0, 0
        while k < len(toks):
            if state == 1:  # a date?
                d = engine_date(toks[k])
                if d is not None:
                    last, dated = _dt.datetime.combine(d, _dt.time()), True
                    k += 1
                state = 2
            elif state == 2:  # the time
                h = _series_hours(toks[k], f"{model.path.name}:{r.line}: time series {name}")
                ti, k, state = k, k + 1, 3
            else:  # the value
                v = engine_double(toks[k])
                if v is None:
                    raise InputError(f"{model.path.name}:{r.line}: time series {name}: value {toks[k]!r} is not a number")
                out.append(SeriesValue(last + _dt.timedelta(hours=h), v, h, not dated, r.line, ti))
                k, state = k + 1, 1
    return out


def _series_hours(tok: str, where: str) -> float:
    h = engine_hours(tok)
    if h is None or not math.isfinite(h):
        raise InputError(f"{where}: time {tok!r} is not a time")
    return h


def series_file_instants(path: str | os.PathLike, start: _dt.datetime) -> list[SeriesValue]:
    """Every value of a time series file (``name FILE path``) at the instant the engine's run gives it.

    The engine's reading of a time series file [1]_ [2]_ (table.c ``table_parseFileLine``,
    ``table_getFirstEntry``, ``table_validate``, SWMM 5.2.4): one value a line, ``date time value`` or
    ``time value``; blank lines and lines whose first token starts with ``;`` are skipped; a line of three or
    more tokens must begin with a date (a fourth token is ignored), and a line the engine cannot read stops
    the reading (ERROR 363, also a comment after the value). An undated line carries the last date read. The
    last date is not reset when the file is read again: the engine reads the file whole when it checks it
    (from the simulation start: a date out of order there is ERROR 173) and again from its top for the run,
    so in the run the undated lines before the file's first date count from the midnight of the file's
    **last** date, whatever the simulation start; only a file with no date at all counts from the start
    (measured with SWMM 5.2.4: lines ``7.6 5`` then ``01/02/2020 20:00 0`` put the 5 at 01/02/2020 07:36 for
    starts of 01/01/2020 06:00, 00:00 and 12/31/2019 20:00).

    Parameters
    ----------
    path : path
        The file (absolute, as :func:`series_file` gives it).
    start : datetime.datetime
        The simulation start.

    Returns
    -------
    list of SeriesValue
        ``from_start`` is True for every value of a file with no date, False for every value of a file with one.

    Raises
    ------
    DataFileError
        The file cannot be read.
    InputError
        A line the engine would stop at (named with its number).
    """
    p = Path(path)
    try:
        text = p.read_bytes().decode("latin-1")
    except OSError as exc:
        raise DataFileError(f"{p}: time series file cannot be read ({exc.strerror or type(exc).__name__})") from None
    rows = []
    for i, raw in enumerate(engine_lines(text), start=1):
        s = raw.split("\x00", 1)[0]
        first = re.search(r"[^ \t\r\n]+", s)
        if first is None or first.group().startswith(";"):
            continue
        toks = re.findall(f"[^{re.escape(_C_SPACE)}]+", s)[:3]
        where = f"{p.name}:{i}"
        if len(toks) == 3:
            d = engine_date(toks[0])
            if d is None:
                raise InputError(f"{where}: a line of three values must begin with a date (the engine stops reading "
                                 f"here); got {toks[0]!r}")
        elif len(toks) == 2:
            d = None
        else:
            raise InputError(f"{where}: a time and a value expected (the engine stops reading here)")
        ti = len(toks) - 2
        h = _series_hours(toks[ti], where)
        v = engine_double(toks[ti + 1])
        if v is None:
            raise InputError(f"{where}: value {toks[ti + 1]!r} is not a number (the engine stops reading here)")
        rows.append((i, d, h, v, ti))
    dates = [d for _, d, _, _, _ in rows if d is not None]
    last = _dt.datetime.combine(dates[-1], _dt.time()) if dates else start
    out = []
    for i, d, h, v, ti in rows:
        if d is not None:
            last = _dt.datetime.combine(d, _dt.time())
        out.append(SeriesValue(last + _dt.timedelta(hours=h), v, h, not dates, i, ti, p))
    return out


# --------------------------------------------------------------------------- RDII unit hydrographs

#: Month names of [HYDROGRAPHS] lines, January first [1]_.
MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")


def rtk_params(model: SwmmInp, hydrograph: str, month: int) -> list[tuple[float, float, float]]:
    """The (R [-], T [hr], K [-]) of each response of a [HYDROGRAPHS] unit hydrograph in a month [1]_.

    A [HYDROGRAPHS] data line reads ``name month response R T K [Dmax Drecov Dinit]``; the lines of
    ``month`` (1-12) are used, else those given for ``ALL`` months (as SWMM does). Empty when the
    unit hydrograph has no such lines.
    """
    rows = [r.tokens for r in model.rows("HYDROGRAPHS") if r.tokens[0].upper() == hydrograph.upper() and len(r.tokens) >= 6]
    chosen = [t for t in rows if t[1].upper() == MONTHS[month - 1]] or [t for t in rows if t[1].upper() == "ALL"]
    return [tuple(model_number(x, f"[HYDROGRAPHS] {hydrograph} R/T/K") for x in t[3:6]) for t in chosen]


def validate(model: SwmmInp) -> list[str]:
    """Problems that would stop the engine or make its results meaningless, each naming the line.

    Checks: unknown sections; missing [OPTIONS]/node/link sections; duplicate node or link ids;
    links whose end nodes are not defined (dangling references); conduits, orifices and weirs
    without a [XSECTIONS] line, and cross sections of unknown links; non-numeric or non-positive
    geometry (conduit length and roughness, cross-section depth, junction depth < 0); [DWF],
    [INFLOWS] and [RDII] lines at unknown nodes; negative DWF baselines; [RDII] with an undefined
    unit hydrograph or a negative sewer area; subcatchments draining to nothing defined.
    """
    name = model.path.name
    problems: list[str] = []

    def bad(line: int, msg: str) -> None:
        problems.append(f"{name}:{line}: {msg}")

    for sec, line in model.section_lines.items():
        if sec not in KNOWN_SECTIONS:
            bad(line, f"unknown section [{sec}] (SWMM 5.2 sections: {', '.join(sorted(KNOWN_SECTIONS)[:6])}, ...)")
    nodes: dict[str, tuple[str, int]] = {}
    for sec in NODE_SECTIONS:
        for r in model.rows(sec):
            nid = r.tokens[0].upper()
            if nid in nodes:
                bad(r.line, f"node {r.tokens[0]} defined again (first in [{nodes[nid][0]}] line {nodes[nid][1]})")
            else:
                nodes[nid] = (sec, r.line)
            if sec == "JUNCTIONS":
                if len(r.tokens) < 3:
                    bad(r.line, f"junction {r.tokens[0]}: expected at least name, invert elevation and max depth")
                    continue
                if _num(r.tokens[1]) is None:
                    bad(r.line, f"junction {r.tokens[0]}: invert elevation {r.tokens[1]!r} is not a number")
                d = _num(r.tokens[2])
                if d is None or d < 0:
                    bad(r.line, f"junction {r.tokens[0]}: max depth {r.tokens[2]!r} must be a number >= 0 ft")
    if not nodes:
        problems.append(f"{name}: no nodes ([JUNCTIONS], [OUTFALLS], [STORAGE] or [DIVIDERS] are empty or missing)")
    links: dict[str, tuple[str, int]] = {}
    for lid, sec, n1, n2, line in model.links():
        if lid.upper() in links:
            bad(line, f"link {lid} defined again (first in [{links[lid.upper()][0]}] line {links[lid.upper()][1]})")
        links[lid.upper()] = (sec, line)
        kind = sec[:-1].lower()
        for end, nid in (("from", n1), ("to", n2)):
            if nid.upper() not in nodes:
                bad(line, f"{kind} {lid}: {end} node {nid} is not defined in {', '.join('[' + s + ']' for s in NODE_SECTIONS)}")
    for sec in LINK_SECTIONS:
        for r in model.rows(sec):
            if len(r.tokens) < 3:
                bad(r.line, f"{sec[:-1].lower()} {r.tokens[0]}: expected name, from node and to node")
    shapes = model.xsection_shapes()
    for r in model.rows("CONDUITS"):
        lid = r.tokens[0]
        if len(r.tokens) < 5:
            bad(r.line, f"conduit {lid}: expected name, from node, to node, length and roughness")
            continue
        length, n = _num(r.tokens[3]), _num(r.tokens[4])
        if length is None or length <= 0:
            bad(r.line, f"conduit {lid}: length {r.tokens[3]!r} must be a number > 0")
        if n is None or n < 0 or (n == 0 and shapes.get(lid.upper()) not in ("IRREGULAR", "STREET")):
            bad(r.line, f"conduit {lid}: roughness {r.tokens[4]!r} must be a number > 0")
    xs: dict[str, int] = {}
    for r in model.rows("XSECTIONS"):
        lid = r.tokens[0]
        xs[lid.upper()] = r.line
        if lid.upper() not in links:
            bad(r.line, f"cross section of link {lid}, which is not defined")
        if len(r.tokens) < 3:
            bad(r.line, f"cross section of {lid}: expected link, shape and geometry")
            continue
        shape = r.tokens[1].upper()
        if shape in _NO_GEOM1:
            continue
        g1 = _num(r.tokens[2])
        if g1 is None or g1 <= 0:
            bad(r.line, f"cross section of {lid}: {shape} depth (Geom1) {r.tokens[2]!r} must be a number > 0")
    for sec in XSECTION_LINKS:
        for r in model.rows(sec):
            if r.tokens[0].upper() not in xs:
                bad(r.line, f"{sec[:-1].lower()} {r.tokens[0]} has no cross section in [XSECTIONS]")
    for sec in ("DWF", "INFLOWS", "RDII"):
        for r in model.rows(sec):
            if r.tokens[0].upper() not in nodes:
                bad(r.line, f"[{sec}] refers to node {r.tokens[0]}, which is not defined")
    for r in model.rows("DWF"):
        if len(r.tokens) >= 3 and (_num(r.tokens[2]) is None or _num(r.tokens[2]) < 0):
            bad(r.line, f"[DWF] at {r.tokens[0]}: baseline {r.tokens[2]!r} must be a number >= 0")
    hydrographs = {r.tokens[0].upper() for r in model.rows("HYDROGRAPHS")}
    for r in model.rows("RDII"):
        if len(r.tokens) < 3:
            bad(r.line, f"[RDII] at {r.tokens[0]}: expected node, unit hydrograph and sewer area")
            continue
        if r.tokens[1].upper() not in hydrographs:
            bad(r.line, f"[RDII] at {r.tokens[0]}: unit hydrograph {r.tokens[1]} is not defined in [HYDROGRAPHS]")
        a = _num(r.tokens[2])
        if a is None or a < 0:
            bad(r.line, f"[RDII] at {r.tokens[0]}: sewer area {r.tokens[2]!r} must be a number >= 0")
    subcatch = {r.tokens[0].upper() for r in model.rows("SUBCATCHMENTS")}
    for r in model.rows("SUBCATCHMENTS"):
        if len(r.tokens) >= 3 and r.tokens[2].upper() not in nodes and r.tokens[2].upper() not in subcatch:
            bad(r.line, f"subcatchment {r.tokens[0]}: outlet {r.tokens[2]} is neither a node nor a subcatchment")
    return problems


#: Sections whose data lines hold no numbers to check (free text, or names only).
_TEXT_SECTIONS = {"TITLE", "TAGS", "LABELS", "MAP", "BACKDROP", "CONTROLS", "PROFILES"}


def nonfinite_numbers(model: SwmmInp) -> list[str]:
    """Numbers that are not finite (``nan``, ``inf``, ``1e999``), each with file, line and element.

    SWMM 5.2 reads them with ``strtod`` and checks few of them; :func:`load_model` lets the engine
    judge each model that holds some (:func:`_engine_on_nonfinite`).
    """
    out = []
    for sec, rows in model.sections.items():
        if sec in _TEXT_SECTIONS:
            continue
        for r in rows:
            for k, tok in enumerate(r.tokens[1:], start=2):
                try:
                    v = float(tok)
                except ValueError:
                    continue
                if not math.isfinite(v):
                    out.append(f"{model.path.name}:{r.line}: [{sec}] {r.tokens[0]}: field {k} is {tok!r}, not a finite number")
    return out


def load_model(path: str | os.PathLike, *, max_listed: int = 8, probe: bool = True) -> SwmmInp:
    """Parse a ``.inp`` and have the engine open it: the engine is the judge of validity.

    A file SWMM 5.2 opens is accepted as it is, whatever :func:`validate` would say of it (case
    differences, optional fields, encodings); the engine's network (node and link ids, types and
    ends) is kept on the model (``engine_nodes``, ``engine_links``). A file the engine rejects
    raises with the engine's error (code, message, line of the file) and, where :func:`validate`
    finds them, the problems it sees, each with file, line and element.

    Raises
    ------
    capacitysim.errors.DataFileError
        The file is missing.
    capacitysim.errors.ModelError
        The engine rejected the file.
    """
    from capacitysim.errors import EngineError
    from capacitysim.network.engine import probe_inp

    model = parse_inp(path)
    if not probe:
        return model
    bad = nonfinite_numbers(model)
    try:
        info = probe_inp(model.path)
    except EngineError as exc:
        problems = [f"{b} (SWMM reads it)" for b in bad] + validate(model)
        engine = str(exc).split(": ", 1)[-1] if ": SWMM" in str(exc) else str(exc)
        if problems:
            shown = "; ".join(problems[:max_listed])
            more = f" (and {len(problems) - max_listed} more)" if len(problems) > max_listed else ""
            raise ModelError(f"{len(problems)} problem(s) in the model: {shown}{more}; {engine}") from None
        raise ModelError(str(exc)) from None
    model.engine_nodes = dict(zip(info["nodes"]["id"], info["nodes"]["type"]))
    L = info["links"]
    model.engine_links = list(zip(L["id"], L["type"], L["from"], L["to"]))
    model.__dict__["engine_info"] = info
    # what the engine accepted but looks wrong (e.g. a misspelt section it skipped): warnings, never refusals
    model.lint = validate(model)
    if bad:
        model.lint = _engine_on_nonfinite(model, bad, max_listed) + model.lint
    return model


#: What SWMM 5.2.4 (swmm-toolkit 0.15.3) does with ``nan``/``inf`` put in each numeric field of
#: ``tests/data/models/population-dwf.inp`` in turn (measured for issue 26): it reads every one with
#: ``strtod``; it refuses a few on opening (ERROR 211 for a cross section's barrels); it crashes on a
#: few while running (an outfall's invert, a conduit's initial flow, a cross section's depth); most
#: it runs to results that are not numbers (lengths, roughness, offsets, elevations, DWF, patterns,
#: rain); some it ignores or replaces, and its results stay finite (a rain gauge's snow catch
#: factor, a junction's depths, the percent impervious of a subcatchment of 0 area).
NONFINITE_POLICY = ("the engine is the judge: a model whose non-finite numbers SWMM refuses, crashes on or turns "
                    "into results that are not numbers is refused; one it runs to finite results is run, with a warning")


def _engine_on_nonfinite(model: SwmmInp, bad: list[str], max_listed: int) -> list[str]:
    """Run the model once and let the engine decide what its non-finite numbers mean (:data:`NONFINITE_POLICY`).

    The run is made in a temporary folder removed after it (nothing it names survives, so no
    message points into it). Returns the warnings (one per number, with file, line, element and
    field); raises :class:`~capacitysim.errors.ModelError` when the engine fails on the run or its
    statistics (elevations, depths, flows, volumes, continuity) hold a number that is not finite.
    """
    import tempfile

    from capacitysim.errors import EngineError
    from capacitysim.network.engine import run_inp

    listed = "; ".join(bad[:max_listed]) + (f" (and {len(bad) - max_listed} more)" if len(bad) > max_listed else "")
    what = f"{len(bad)} number(s) in the model are not finite: {listed}"
    with tempfile.TemporaryDirectory(prefix="capacitysim-nonfinite-") as tmp:
        try:
            run = run_inp(model.path, tmp, name="nonfinite")
        except EngineError as exc:
            engine = re.sub(r" \(and (\d+) more engine error\(s\) in [^)]*\)", r" (and \1 more engine error(s))", str(exc))
            engine = engine.replace(str(Path(tmp)), "the trial run's folder").replace("nonfinite.inp", model.path.name)
            raise ModelError(f"{what}; SWMM opens the model but fails running it: {engine}") from None
        try:
            doc = json.loads(run.stats.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise ModelError(f"{what}; SWMM opens the model but its run left no statistics") from None
    # the runoff totals are depths over the subcatchments' area: NaN whenever that area is 0, whatever the
    # numbers (runoff that is not a number reaches the nodes' statistics and the runoff continuity error)
    doc["runoff_totals"] = {"pctError": (doc.get("runoff_totals") or {}).get("pctError", 0.0)}
    nonnumbers = [_stat_name(p, doc) for p in _nonfinite_paths(doc)]
    if nonnumbers:
        shown = ", ".join(nonnumbers[:3]) + (f" and {len(nonnumbers) - 3} more" if len(nonnumbers) > 3 else "")
        raise ModelError(f"{what}; SWMM runs the model but its results are not numbers ({shown})")
    out = []
    for b in bad:
        msg = f"{b}; SWMM runs the model and its results are finite (the engine ignores or replaces the value)"
        warnings.warn(msg, CapacitysimWarning, stacklevel=3)
        out.append(msg)
    return out


def _stat_name(path: str, doc: dict) -> str:
    """``node_stats.max_depth[2]`` of a run's statistics as ``max_depth of node J3``."""
    m = re.fullmatch(r"(node_stats|link_stats|nodes|links)\.(\w+)\[(\d+)\]", path)
    if not m:
        return path
    kind = "node" if m.group(1).startswith("node") else "link"
    ids = doc.get(f"{kind}s", {}).get("id", [])
    i = int(m.group(3))
    return f"{m.group(2)} of {kind} {ids[i]}" if i < len(ids) else path


def _nonfinite_paths(doc, path: str = "") -> list[str]:
    """Where a run's statistics document holds a number that is not finite (``node_stats.max_depth[J2]``...)."""
    out: list[str] = []
    if isinstance(doc, float):
        return [] if math.isfinite(doc) else [path]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _nonfinite_paths(v, f"{path}.{k}" if path else str(k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _nonfinite_paths(v, f"{path}[{i}]")
    return out


def network_graph(model: SwmmInp) -> nx.MultiDiGraph:
    """The network as a directed multigraph, edges from each link's from-node to its to-node.

    Built directly from [CONDUITS]/[PUMPS]/[ORIFICES]/[WEIRS]/[OUTLETS] in one pass (swmmio's
    ``model.network`` is quadratic in the number of links). Node attribute ``kind`` is the
    section (``JUNCTIONS``...); edge attributes are ``id``, ``kind`` and ``line``; the edge key is
    the link id.
    """
    g = nx.MultiDiGraph()
    for nid, (sec, line) in model.node_ids().items():
        g.add_node(nid, kind=sec, line=line)
    for lid, sec, n1, n2, line in model.links():
        if n1 in g and n2 in g:
            g.add_edge(n1, n2, key=lid, id=lid, kind=sec, line=line)
    return g


def path_between(g: nx.MultiDiGraph, start: str, end: str) -> list[tuple[str, str, str]]:
    """The links (from, to, link id) along the shortest directed path from ``start`` to ``end``."""
    nodes = nx.shortest_path(g, start, end)
    out = []
    for a, b in zip(nodes[:-1], nodes[1:]):
        key = next(iter(g[a][b]))
        out.append((a, b, key))
    return out
