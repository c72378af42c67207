"""How every report prints a number, a yes/no, a date and a label: one table, one function each.

A quantity is known by its unit (the suffix of its name, ``peak_flow_cfs``, or the bracket of a
column header, ``peak flow [cfs]``), and each unit has one number of decimals (:data:`DECIMALS`), so a
flow reads ``4.889`` in every table of every report. Booleans read ``yes``/``no``, dates and times
without microseconds, names of fields as words with their unit (``balance [gpd]``, not ``balance_gpd``:
:func:`label`, from :func:`capacitysim.io.export.quantities.human_label`).

:func:`cell` is what :class:`capacitysim.report.html.HtmlReport` applies to every table cell, so a
report that passes raw values gets this formatting without doing anything.
"""

from __future__ import annotations

import datetime as _dt
import math
import re

import numpy as np

from capacitysim.io.export.quantities import UNIT_SUFFIXES, human_label, unit_of

#: Decimals printed per unit (the unit a person reads, :data:`capacitysim.io.export.quantities.UNIT_SUFFIXES`).
#: Flows to 0.0001 cfs (a small site's release rate, 10 % of 2.975 cfs = 0.2975 cfs, keeps its last
#: digit), depths and elevations to 0.001 ft, volumes and daily flows whole, ratios (q/Qfull, d/D, runoff
#: coefficients) to 0.001, plant flows to 0.0001 MGD (100 gpd), percentages to 0.01 %. Seconds (run times of
#: benchmarks, from 0.1 ms to minutes) are not here: a unit not in the table prints three significant figures.
DECIMALS: dict[str, int] = {
    "cfs": 4,
    "ft": 3,
    "ft3": 0,
    "in": 3,
    "h": 2,
    "min": 1,
    "gpd": 0,
    "gpm": 1,
    "MGD": 4,
    "ac": 3,
    "mi2": 4,
    "ft2": 0,
    "%": 2,
    "-": 3,
    "in/h": 2,
    "mg/l": 2,
}
#: Other spellings of units met in column headers and check records -> the unit of :data:`DECIMALS`.
ALIASES = {"hr": "h", "cf": "ft3", "ft^3": "ft3", "ft^2": "ft2", "sf": "ft2", "mgd": "MGD", "pct": "%", "percent": "%",
           "1": "-", "": None, "ratio": "-", "gal/day": "gpd", "gallons per day": "gpd"}

_BRACKET = re.compile(r"\[([^\[\]]+)\]\s*$")
#: An ISO date-time with seconds and a fraction (and maybe a zone): the fraction is dropped.
_ISO = re.compile(r"\b(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(?:\.\d+)?((?:Z|[+-]\d{2}:?\d{2})?)\b")


def canonical_unit(unit: str | None) -> str | None:
    """A unit as :data:`DECIMALS` spells it (``hr`` -> ``h``, ``ft^3`` -> ``ft3``), None when unknown."""
    if unit is None:
        return None
    u = str(unit).strip()
    if u in DECIMALS:
        return u
    if u in ALIASES:
        return ALIASES[u]
    if u.lower() in UNIT_SUFFIXES:
        return UNIT_SUFFIXES[u.lower()][0]
    return None


def unit_of_header(header: str) -> str | None:
    """The unit in a column header's trailing brackets (``peak flow after [cfs]`` -> ``cfs``)."""
    m = _BRACKET.search(str(header))
    return canonical_unit(m.group(1)) if m else None


def label(key: str) -> str:
    """A field name as a report prints it: ``balance_gpd`` -> ``balance [gpd]``, ``max_hgl_ft_after`` ->
    ``max HGL after [ft]`` (:func:`capacitysim.io.export.quantities.human_label`)."""
    return human_label(str(key))


def date_text(value) -> str:
    """A date or date-time without microseconds (seconds kept only when not zero; the zone kept)."""
    if isinstance(value, np.datetime64):
        value = value.astype("datetime64[s]").item()
    if isinstance(value, _dt.datetime):
        fmt = "%Y-%m-%d %H:%M:%S" if value.second else "%Y-%m-%d %H:%M"
        zone = value.strftime(" %Z") if value.tzinfo is not None and value.utcoffset() is not None else ""
        return value.strftime(fmt) + zone.replace(" UTC", " UTC")
    if isinstance(value, _dt.date):
        return value.isoformat()
    return clean_text(str(value))


def clean_text(text: str) -> str:
    """Text as a report prints it: ``True``/``False`` -> ``yes``/``no``, ISO date-times without their fraction
    of a second and without the ``T``."""
    if text in ("True", "False"):
        return "yes" if text == "True" else "no"

    def iso(m: re.Match) -> str:
        clock = m.group(2)
        if clock.endswith(":00") and clock.count(":") == 2:
            clock = clock[:-3]
        zone = m.group(3)
        return f"{m.group(1)} {clock}" + ((" UTC" if zone in ("Z", "+00:00", "+0000") else f" {zone}") if zone else "")

    return _ISO.sub(iso, text)


def number(value, unit: str | None = None, *, key: str | None = None) -> str:
    """A number with the decimals of its unit (:data:`DECIMALS`) and thousands separators.

    Parameters
    ----------
    value : int or float
    unit : str, optional
        The unit (``cfs``, ``ft``, ``-``...; aliases accepted). Default: the unit of ``key``.
    key : str, optional
        The field name (``peak_flow_cfs``), when the unit is not given.

    Returns
    -------
    str
        ``-`` for None and not-a-number; integers without decimals; a number of unknown unit to three
        significant figures (whole numbers of 1,000 and more without decimals).
    """
    if value is None:
        return "-"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,d}"
    x = float(value)
    if math.isnan(x):
        return "-"
    if math.isinf(x):
        return "infinite" if x > 0 else "-infinite"
    u = canonical_unit(unit) if unit is not None else (canonical_unit(unit_of(key)) if key else None)
    if u is not None and u in DECIMALS:
        d = DECIMALS[u]
        text = f"{x:,.{d}f}"
        return "0" if d == 0 and text in ("-0",) else ("0." + "0" * d if text == "-0." + "0" * d else text)
    ax = abs(x)
    if ax >= 1000:
        return f"{x:,.0f}"
    if ax >= 10:
        return f"{x:.1f}"
    return f"{x:.3g}"


def cell(value, unit: str | None = None, *, key: str | None = None) -> str:
    """Any value of a table as text: numbers by :func:`number`, booleans yes/no, dates by :func:`date_text`,
    None ``-``, text by :func:`clean_text`."""
    if value is None:
        return "-"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return number(value, unit, key=key)
    if isinstance(value, (_dt.date, np.datetime64)):
        return date_text(value)
    return clean_text(str(value))


def quantity(value, key: str) -> str:
    """A value with its unit, for prose: ``quantity(4.8889, "peak_flow_cfs")`` -> ``4.889 cfs``."""
    u = unit_of(key)
    text = number(value, key=key)
    return text if u in (None, "-") or text == "-" else f"{text} {u}"
