"""Treatment plant flow records: daily CSV files and EPA ECHO DMR downloads (parameter 50050).

Every problem a user can fix is a :class:`~capacitysim.errors.DataFileError` naming the file, the
line (the header is line 1) and the value. Missing days are *reported* as gaps and never filled:
the averages downstream use the days present and flag their periods incomplete.

Units: a daily record is in MGD (the DMR unit of flow) or gpd. A column read in the wrong unit is
caught by magnitude: a plant's median flow above :data:`MAX_PLAUSIBLE_MGD` read as MGD, or below
:data:`MIN_PLAUSIBLE_GPD` read as gpd, and a single value :data:`ROW_RATIO_LIMIT` times away from
the median (a day typed in the other unit) are refused with the line and the fix.

References
----------
.. [1] U.S. EPA, ECHO Effluent Charts, "Download" (``eff_rest_services.download_effluent_chart``):
   one row per DMR value with ``npdes_id``, ``perm_feature_nmbr`` (outfall),
   ``monitoring_location_desc``, ``parameter_code`` (50050 = Flow, in conduit or thru treatment
   plant), ``statistical_base_short_desc`` (``MO AVG``, ``DAILY MX``, ``30DA AVG``, ``ANNL AVG``),
   ``monitoring_period_end_date`` (MM/DD/YYYY), ``dmr_value_nmbr``, ``dmr_unit_desc``,
   ``dmr_value_standard_units`` (MGD for flow), ``limit_value_standard_units``, ``nodi_code`` /
   ``nodi_desc`` (no data indicator).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from capacitysim.errors import DataFileError, InputError
from capacitysim.io.files import (
    check_keys,
    quoted,
    read_toml,
    require_bool,
    require_number,
    require_text,
)
from capacitysim.units import GPD_PER_MGD

#: Parameter code of plant flow on a DMR: "Flow, in conduit or thru treatment plant" [1].
FLOW_PARAMETER_CODE = "50050"

#: A median daily flow above this, read as MGD, is taken for gpd. The largest plant in New York
#: City (Newtown Creek) is permitted for 310 MGD; watershed plants are a few MGD at most.
MAX_PLAUSIBLE_MGD = 1000.0

#: A median daily flow below this, read as gpd, is taken for MGD (1,000 gpd is a few houses: not a
#: treatment plant with a SPDES flow limit).
MIN_PLAUSIBLE_GPD = 1000.0

#: One value this many times above (or below, when > 0) the record's median is a unit mix-up
#: (MGD and gpd differ by 10^6).
ROW_RATIO_LIMIT = 1000.0

UNITS = ("mgd", "gpd")

#: Lines named in one error message at most.
_MAX_LINES_SHOWN = 5


@dataclass(frozen=True)
class Gap:
    """A run of calendar days without a flow value (both ends inclusive)."""

    start: pd.Timestamp
    end: pd.Timestamp

    @property
    def days(self) -> int:
        return int((self.end - self.start).days) + 1

    def __str__(self) -> str:
        if self.days == 1:
            return f"{self.start.date()} (1 day)"
        return f"{self.start.date()} to {self.end.date()} ({self.days} days)"


@dataclass
class FlowRecord:
    """A daily plant flow record as read: the days present, the gaps, and where it came from.

    Attributes
    ----------
    flow_mgd : pandas.Series
        Daily flow [MGD] indexed by date (days present only, sorted, unique).
    gaps : list of Gap
        Calendar days between the first and last date without a value.
    source : str
        The file read.
    units_read : str
        The unit the file's column was in (``mgd`` or ``gpd``).
    notes : list of str
        Facts a reviewer should see (blank values taken as gaps, units converted).
    """

    flow_mgd: pd.Series
    gaps: list[Gap] = field(default_factory=list)
    source: str = ""
    units_read: str = "mgd"
    notes: list[str] = field(default_factory=list)

    @property
    def dates(self) -> np.ndarray:
        """Dates present as ``datetime64[D]``."""
        return self.flow_mgd.index.values.astype("datetime64[D]")

    @property
    def values_mgd(self) -> np.ndarray:
        return self.flow_mgd.to_numpy(dtype=np.float64)

    @property
    def first(self) -> pd.Timestamp:
        return self.flow_mgd.index[0]

    @property
    def last(self) -> pd.Timestamp:
        return self.flow_mgd.index[-1]

    @property
    def missing_days(self) -> int:
        return sum(g.days for g in self.gaps)


@dataclass
class DmrRecord:
    """Monthly flow values of one outfall from an ECHO DMR download.

    Attributes
    ----------
    monthly : pandas.DataFrame
        Columns ``period_end`` (Timestamp, month end), ``average_mgd`` (float, NaN when the DMR has
        no value), ``nodi`` (no data indicator text, "" when a value is reported), ``line`` (the
        file line).
    statistical_base : str
        The statistical base kept (``MO AVG``).
    limit_mgd : float or None
        The permit limit on that base in the newest row that gives one [MGD].
    npdes_id, outfall, location : str
    source : str
    notes : list of str
    """

    monthly: pd.DataFrame
    statistical_base: str
    limit_mgd: float | None
    npdes_id: str = ""
    outfall: str = ""
    location: str = ""
    source: str = ""
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class PlantFile:
    """A treatment plant described by a TOML file (``spdes check --plant FILE``).

    Attributes
    ----------
    name : str
        The plant's name (the submittal's ``plant`` unless ``--plant-name`` overrides it).
    watershed : bool
        The plant discharges within the NYC watershed (15 RCNY § 18-37(b) applies).
    spdes_permit : str or None
        Its SPDES permit number (``NY`` and seven digits, or a general permit), normalized.
    flow_limit_mgd : float or None
        The permit's flow limit [MGD] (the default of ``--limit-mgd``).
    basis : str or None
        The permit's averaging basis (``month``, ``30day``, ``12month``; the default of ``--basis``).
    receiving_water : str or None
        Where the plant discharges (shown; "Susquehanna River").
    source : str
        The file read.
    sha256 : str
        SHA-256 of the file's bytes (hex).
    """

    name: str
    watershed: bool
    spdes_permit: str | None = None
    flow_limit_mgd: float | None = None
    basis: str | None = None
    receiving_water: str | None = None
    source: str = ""
    sha256: str = ""


#: Keys of a plant file: required, then optional.
PLANT_KEYS_REQUIRED = frozenset({"name", "watershed"})
PLANT_KEYS_OPTIONAL = frozenset({"spdes_permit", "flow_limit_mgd", "basis", "receiving_water"})


def file_sha256(path: str | os.PathLike) -> str:
    """SHA-256 of a file's bytes (hex), read in 1 MiB blocks."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_plant_file(path: str | os.PathLike) -> PlantFile:
    """Read a plant file: a TOML document with top-level keys (no tables).

    ::

        name = "Sample WWTP"           # required
        watershed = true               # required: discharges within the NYC watershed?
        spdes_permit = "NY0000000"     # optional: NY and seven digits, or GP-0-15-002
        flow_limit_mgd = 0.5           # optional [MGD], > 0 and <= MAX_PLAUSIBLE_MGD
        basis = "month"                # optional: month, 30day or 12month
        receiving_water = "..."        # optional text

    Parameters
    ----------
    path : path
        The TOML file.

    Returns
    -------
    PlantFile

    Raises
    ------
    DataFileError
        Not TOML, a missing or unknown key, a value of the wrong type or out of range; naming the
        file, the key, the value and what is allowed.
    """
    from capacitysim.io.submittal import MAX_FIELD_CHARS, Submittal
    from capacitysim.rules.spdes import BASES

    where = str(path)
    data = read_toml(path)
    check_keys(data, where, set(PLANT_KEYS_REQUIRED), set(PLANT_KEYS_OPTIONAL))

    def text(key: str) -> str | None:
        if key not in data:
            return None
        v = require_text(where, key, data[key], empty=False).strip()
        if len(v) > MAX_FIELD_CHARS or any(c in v for c in "\r\n\x00"):
            raise DataFileError(f"{where}: {key} must be one line of text (1 to {MAX_FIELD_CHARS} characters); got {quoted(v)}")
        return v

    name = text("name")
    watershed = require_bool(where, "watershed", data["watershed"])
    permit = text("spdes_permit")
    if permit is not None:
        try:
            permit = Submittal(spdes_permit=permit).spdes_permit
        except InputError as exc:
            raise DataFileError(f"{where}: {exc}") from None
    limit = None
    if "flow_limit_mgd" in data:
        limit = require_number(where, "flow_limit_mgd", data["flow_limit_mgd"], 0.0, MAX_PLAUSIBLE_MGD,
                               low_inclusive=False, unit="MGD")
    basis = None
    if "basis" in data:
        basis = require_text(where, "basis", data["basis"])
        if basis not in BASES:
            raise DataFileError(f"{where}: basis must be one of {', '.join(BASES)}; got {quoted(basis)}")
    return PlantFile(name, watershed, permit, limit, basis, text("receiving_water"), where, file_sha256(path))


def _lines(index) -> str:
    idx = list(index)
    shown = ", ".join(str(int(i) + 2) for i in idx[:_MAX_LINES_SHOWN])
    more = f" and {len(idx) - _MAX_LINES_SHOWN} more" if len(idx) > _MAX_LINES_SHOWN else ""
    return f"line{'s' if len(idx) > 1 else ''} {shown}{more}"


def _read_text_table(path: str | os.PathLike) -> pd.DataFrame:
    p = Path(path)
    if not p.exists():
        raise DataFileError(f"{p}: file not found")
    if p.is_dir():
        raise DataFileError(f"{p}: is a folder, expected a CSV file")
    try:
        df = pd.read_csv(p, dtype=str, keep_default_na=False, skip_blank_lines=False, encoding="utf-8-sig")
    except pd.errors.EmptyDataError:
        raise DataFileError(f"{p}: empty file, expected a header line and daily rows") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise DataFileError(f"{p}: not a readable CSV file ({str(exc).strip().splitlines()[0]})") from None
    df.columns = [str(c).strip() for c in df.columns]
    # Blank lines (every cell empty) are dropped; the index keeps the file's numbering.
    blank = (df.apply(lambda col: col.str.strip()) == "").all(axis=1)
    return df[~blank]


def _parse_dates(raw: pd.Series, where: str, column: str, date_format: str | None) -> pd.Series:
    text = raw.str.strip()
    if date_format:
        parsed = pd.to_datetime(text, format=date_format, errors="coerce")
    else:
        parsed = pd.to_datetime(text, format="ISO8601", errors="coerce")
        retry = parsed.isna() & (text != "")
        if retry.any():
            parsed[retry] = pd.to_datetime(text[retry], format="%m/%d/%Y", errors="coerce")
    bad = parsed.isna()
    if bad.any():
        first = bad[bad].index[0]
        hint = f" (format {date_format!r})" if date_format else " (YYYY-MM-DD or MM/DD/YYYY)"
        raise DataFileError(
            f"{where}: {_lines(bad[bad].index)}: column {column!r} is not a date{hint}: got {raw[first]!r}"
        )
    timed = parsed != parsed.dt.normalize()
    if timed.any():
        first = timed[timed].index[0]
        raise DataFileError(
            f"{where}: {_lines(timed[timed].index)}: {raw[first]!r} has a time of day; a daily record "
            "has one value a day (aggregate sub-daily readings to daily averages first)"
        )
    return parsed


def _infer_units(flow_column: str, units: str | None) -> str:
    if units is not None:
        u = units.strip().lower()
        if u not in UNITS:
            raise DataFileError(f"units must be one of {', '.join(UNITS)}; got {units!r}")
        return u
    name = flow_column.lower()
    return "gpd" if name.endswith("gpd") else "mgd"


def check_magnitude(values: np.ndarray, units: str, where: str, column: str, index=None) -> None:
    """Refuse a column whose magnitude says it is in the other unit (MGD vs gpd), naming lines.

    Raises
    ------
    DataFileError
        The median is implausible for the unit, or single values are :data:`ROW_RATIO_LIMIT` times
        off the median.
    """
    vals = np.asarray(values, dtype=np.float64)
    if vals.size == 0:
        return
    med = float(np.median(vals))
    if units == "mgd" and med > MAX_PLAUSIBLE_MGD:
        raise DataFileError(
            f"{where}: column {column!r} read as MGD has a median of {med:,.6g} MGD, more than "
            f"{MAX_PLAUSIBLE_MGD:,.0f} MGD (the largest NYC plant is permitted for 310 MGD): the values "
            "look like gallons per day; give the units as gpd (--units gpd) or name the column *_gpd"
        )
    if units == "gpd" and med < MIN_PLAUSIBLE_GPD:
        raise DataFileError(
            f"{where}: column {column!r} read as gpd has a median of {med:,.6g} gpd, less than "
            f"{MIN_PLAUSIBLE_GPD:,.0f} gpd: the values look like MGD; give the units as mgd (--units mgd)"
        )
    if med <= 0:
        return
    ratio_high = vals > med * ROW_RATIO_LIMIT
    ratio_low = (vals > 0) & (vals < med / ROW_RATIO_LIMIT)
    off = ratio_high | ratio_low
    if off.any():
        pos = np.flatnonzero(off)
        lines = _lines(np.asarray(index)[pos]) if index is not None else f"rows {', '.join(map(str, pos[:5]))}"
        v = vals[pos[0]]
        raise DataFileError(
            f"{where}: {lines}: column {column!r} value {v:,.6g} is {v / med:,.3g} times the record's median "
            f"of {med:,.6g} {units.upper() if units == 'mgd' else units}: a value in the other unit "
            "(MGD vs gpd differ by 1,000,000)? Correct those rows"
        )


def _gaps(index: pd.DatetimeIndex) -> list[Gap]:
    full = pd.date_range(index[0], index[-1], freq="D")
    missing = full.difference(index)
    if missing.empty:
        return []
    out: list[Gap] = []
    start = prev = missing[0]
    for day in missing[1:]:
        if (day - prev).days != 1:
            out.append(Gap(start, prev))
            start = day
        prev = day
    out.append(Gap(start, prev))
    return out


def read_flow_csv(
    path: str | os.PathLike,
    *,
    date_column: str = "date",
    flow_column: str = "flow_mgd",
    units: str | None = None,
    date_format: str | None = None,
) -> FlowRecord:
    """Read a daily plant flow record from CSV (default columns ``date,flow_mgd``).

    Parameters
    ----------
    path : path
        The CSV file (header line, then one row a day).
    date_column, flow_column : str
        Column names to use when the file uses others (``Date``, ``Effluent Flow (MGD)``...).
    units : {"mgd", "gpd"} or None
        Unit of the flow column; None infers gpd from a column name ending in ``gpd``, else MGD.
    date_format : str or None
        A strptime format for the dates; default ISO ``YYYY-MM-DD`` (or ``MM/DD/YYYY``).

    Returns
    -------
    FlowRecord
        Flows in MGD; a blank flow cell is a gap (reported in ``gaps`` and ``notes``), never filled.

    Raises
    ------
    DataFileError
        Missing columns, dates that do not parse, dates out of order or repeated, text or negative
        numbers in the flow column, a unit mix-up by magnitude; each names the file lines.
    """
    where = str(path)
    df = _read_text_table(path)
    missing_cols = [c for c in (date_column, flow_column) if c not in df.columns]
    if missing_cols:
        raise DataFileError(
            f"{where}: no column {', '.join(map(repr, missing_cols))} (columns: {', '.join(map(repr, df.columns))}); "
            "name the columns with --date-column / --flow-column"
        )
    if df.empty:
        raise DataFileError(f"{where}: no data rows under the header")
    u = _infer_units(flow_column, units)
    dates = _parse_dates(df[date_column], where, date_column, date_format)

    # Order and uniqueness, on every row (blank flows included), in file order.
    dup = dates.duplicated(keep=False)
    if dup.any():
        first_day = dates[dup].iloc[0]
        same = dates[dates == first_day].index
        raise DataFileError(
            f"{where}: {_lines(same)}: date {first_day.date()} appears {len(same)} times "
            f"({int(dates.duplicated().sum())} duplicate dates in all); keep one value a day"
        )
    back = dates.diff().dt.days < 0
    if back.any():
        i = back[back].index[0]
        pos = dates.index.get_loc(i)
        prev = dates.index[pos - 1]
        raise DataFileError(
            f"{where}: line {i + 2}: date {dates[i].date()} comes after {dates[prev].date()} on line {prev + 2}: "
            "dates must be in increasing order (sort the file)"
        )

    text = df[flow_column].str.strip()
    blank = text == ""
    nums = pd.to_numeric(text.where(~blank), errors="coerce")
    bad = nums.isna() & ~blank
    if bad.any():
        i = bad[bad].index[0]
        raise DataFileError(
            f"{where}: {_lines(bad[bad].index)}: column {flow_column!r} is not a number: got {df.at[i, flow_column]!r}"
        )
    nonfinite = ~np.isfinite(nums.fillna(0.0))
    if nonfinite.any():
        i = nonfinite[nonfinite].index[0]
        raise DataFileError(f"{where}: {_lines(nonfinite[nonfinite].index)}: column {flow_column!r} is not finite: got {df.at[i, flow_column]!r}")
    neg = nums < 0
    if neg.any():
        i = neg[neg].index[0]
        raise DataFileError(
            f"{where}: {_lines(neg[neg].index)}: column {flow_column!r} is negative ({df.at[i, flow_column]}); flows are >= 0"
        )
    present = ~blank
    if not present.any():
        raise DataFileError(f"{where}: column {flow_column!r} has no values")
    check_magnitude(nums[present].to_numpy(), u, where, flow_column, index=nums[present].index)

    flow = nums[present].to_numpy(dtype=np.float64)
    if u == "gpd":
        flow = flow / GPD_PER_MGD
    series = pd.Series(flow, index=pd.DatetimeIndex(dates[present].to_numpy(), name="date"), name="flow_mgd")
    notes = []
    if u == "gpd":
        notes.append(f"column {flow_column!r} read in gpd and converted to MGD")
    if blank.any():
        notes.append(f"{int(blank.sum())} blank flow value(s) ({_lines(blank[blank].index)}) taken as missing days")
    gaps = _gaps(series.index)
    if gaps:
        notes.append(
            f"{sum(g.days for g in gaps)} day(s) missing in {len(gaps)} gap(s) between {series.index[0].date()} "
            f"and {series.index[-1].date()}; not filled"
        )
    return FlowRecord(series, gaps, where, u, notes)


# --------------------------------------------------------------------------------------------
# ECHO DMR downloads
# --------------------------------------------------------------------------------------------

_DMR_REQUIRED = ("parameter_code", "monitoring_period_end_date", "statistical_base_short_desc")


def _norm(s: str) -> str:
    return " ".join(str(s).upper().split())


def read_echo_dmr(
    path: str | os.PathLike,
    *,
    statistical_base: str = "MO AVG",
    outfall: str | None = None,
    location: str | None = None,
) -> DmrRecord:
    """Read the monthly flow values (parameter 50050) of one outfall from an ECHO DMR download [1].

    Parameters
    ----------
    path : path
        The CSV of ECHO's Effluent Charts download (column names in either case).
    statistical_base : str
        The statistical base to keep (``statistical_base_short_desc``), default ``MO AVG`` (the
        monthly average).
    outfall, location : str or None
        ``perm_feature_nmbr`` and ``monitoring_location_desc`` (or ``_code``) to keep when the file
        has several.

    Returns
    -------
    DmrRecord
        One row per monitoring period [MGD]; periods whose DMR has no value keep NaN and the no data
        indicator (a gap, never filled).

    Raises
    ------
    DataFileError
        Missing columns, no 50050 rows, an unknown statistical base, several outfalls or locations
        without a choice, repeated periods, unknown units, text in the value column; naming lines.
    """
    where = str(path)
    df = _read_text_table(path)
    df.columns = [c.lower() for c in df.columns]
    missing_cols = [c for c in _DMR_REQUIRED if c not in df.columns]
    if missing_cols:
        raise DataFileError(
            f"{where}: not an ECHO DMR download: no column {', '.join(missing_cols)} "
            f"(columns: {', '.join(df.columns[:12])}{'...' if len(df.columns) > 12 else ''})"
        )
    if "dmr_value_standard_units" in df.columns:
        value_col, unit_col = "dmr_value_standard_units", None
    elif "dmr_value_nmbr" in df.columns and "dmr_unit_desc" in df.columns:
        value_col, unit_col = "dmr_value_nmbr", "dmr_unit_desc"
    else:
        raise DataFileError(f"{where}: no DMR value column (dmr_value_standard_units, or dmr_value_nmbr with dmr_unit_desc)")

    codes = df["parameter_code"].str.strip().str.zfill(5)
    flow = df[codes == FLOW_PARAMETER_CODE]
    if flow.empty:
        present = sorted(set(codes) - {"00000"})
        raise DataFileError(
            f"{where}: no rows for parameter {FLOW_PARAMETER_CODE} (plant flow); parameters present: {', '.join(present[:10]) or 'none'}"
        )
    base = flow["statistical_base_short_desc"].map(_norm)
    want = _norm(statistical_base)
    rows = flow[base == want]
    if rows.empty:
        raise DataFileError(
            f"{where}: no parameter {FLOW_PARAMETER_CODE} rows with statistical base {statistical_base!r}; "
            f"bases present: {', '.join(sorted(set(base)))}"
        )

    def pick(frame: pd.DataFrame, col: str, choice: str | None, what: str, option: str, alt: str | None = None):
        if col not in frame.columns:
            return frame, ""
        vals = frame[col].str.strip()
        if choice is not None:
            mask = vals.str.upper() == choice.strip().upper()
            if alt and alt in frame.columns:
                mask |= frame[alt].str.strip().str.upper() == choice.strip().upper()
            if not mask.any():
                raise DataFileError(f"{where}: no {what} {choice!r}; {what}s present: {', '.join(sorted(set(vals)))}")
            return frame[mask], choice
        distinct = sorted(set(vals))
        if len(distinct) > 1:
            raise DataFileError(
                f"{where}: flow is reported for several {what}s ({', '.join(distinct)}); choose one with {option}"
            )
        return frame, distinct[0] if distinct else ""

    rows, out_name = pick(rows, "perm_feature_nmbr", outfall, "outfall", "--outfall")
    rows, loc_name = pick(rows, "monitoring_location_desc", location, "monitoring location", "--location", "monitoring_location_code")

    ends = _parse_dates(rows["monitoring_period_end_date"], where, "monitoring_period_end_date", None)
    dup = ends.duplicated(keep=False)
    if dup.any():
        day = ends[dup].iloc[0]
        raise DataFileError(
            f"{where}: {_lines(ends[ends == day].index)}: monitoring period ending {day.date()} is reported more than once "
            "for the same outfall, location and statistical base (a revised DMR? keep one row)"
        )
    not_month_end = ~ends.dt.is_month_end
    if not_month_end.any():
        i = not_month_end[not_month_end].index[0]
        raise DataFileError(
            f"{where}: {_lines(not_month_end[not_month_end].index)}: monitoring period end {ends[i].date()} is not a month end; "
            f"{statistical_base!r} values are expected to be calendar-month periods"
        )
    text = rows[value_col].str.strip()
    blank = text == ""
    nums = pd.to_numeric(text.where(~blank), errors="coerce")
    bad = nums.isna() & ~blank
    if bad.any():
        i = bad[bad].index[0]
        raise DataFileError(f"{where}: {_lines(bad[bad].index)}: {value_col} is not a number: got {rows.at[i, value_col]!r}")
    neg = nums < 0
    if neg.any():
        i = neg[neg].index[0]
        raise DataFileError(f"{where}: {_lines(neg[neg].index)}: {value_col} is negative ({rows.at[i, value_col]}); flows are >= 0")
    notes: list[str] = []
    if unit_col is not None:
        unit = rows[unit_col].str.strip().str.lower().str.replace(" ", "")
        factor = pd.Series(np.nan, index=rows.index)
        factor[unit.isin(["mgd", "mgal/d"])] = 1.0
        factor[unit.isin(["gpd", "gal/d"])] = 1.0 / GPD_PER_MGD
        unknown = factor.isna() & ~blank
        if unknown.any():
            i = unknown[unknown].index[0]
            raise DataFileError(
                f"{where}: {_lines(unknown[unknown].index)}: unit {rows.at[i, unit_col]!r} of flow not known (MGD or gal/d expected)"
            )
        if (factor[~blank] != 1.0).any():
            notes.append("values in gal/d converted to MGD")
        nums = nums * factor
    present = ~blank
    check_magnitude(nums[present].to_numpy(), "mgd", where, value_col, index=nums[present].index)

    nodi = pd.Series("", index=rows.index)
    for col in ("nodi_desc", "nodi_code"):
        if col in rows.columns:
            nodi = nodi.where(nodi != "", rows[col].str.strip())
    monthly = pd.DataFrame(
        {"period_end": ends.dt.normalize(), "average_mgd": nums.astype(float), "nodi": nodi.where(blank, ""), "line": rows.index + 2}
    ).sort_values("period_end", kind="stable").reset_index(drop=True)
    if blank.any():
        notes.append(
            f"{int(blank.sum())} monitoring period(s) without a value ({_lines(blank[blank].index)}"
            f"{'; NODI ' + ', '.join(sorted(set(nodi[blank]) - {''})) if (nodi[blank] != '').any() else ''}); not filled"
        )
    limit = None
    if "limit_value_standard_units" in rows.columns:
        lim = pd.to_numeric(rows["limit_value_standard_units"].str.strip(), errors="coerce")
        ok = lim.notna()
        if ok.any():
            newest = ends[ok].idxmax()
            limit = float(lim[newest])
    npdes = rows["npdes_id"].str.strip().iloc[0] if "npdes_id" in rows.columns else ""
    return DmrRecord(monthly, want, limit, npdes, out_name, loc_name, where, notes)
