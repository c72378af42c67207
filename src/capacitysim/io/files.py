"""Reading TOML inputs with clear errors, writing outputs atomically, finding bundled data."""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import tempfile
import tomllib
from pathlib import Path

from capacitysim.errors import DataFileError, InputError

#: Characters of a value quoted in an error message at most (a whole table or a long text is cut).
_MAX_QUOTED_CHARS = 60

#: The project root of a source checkout (``parents[3]`` of this file). Only folders that are not
#: package data (``benchmarks``) are looked up here; in an installed wheel it points nowhere useful.
PROJECT_ROOT = Path(__file__).resolve().parents[3]

#: Bundled data folders shipped inside the package (``capacitysim/data/<name>``); the top-level
#: ``storms/`` and ``models/`` of a checkout are symbolic links to them (one copy of each file).
PACKAGE_DATA_DIRS = ("storms", "models")


def package_data_dir() -> Path:
    """The package's ``data`` folder as a file-system path, found with :mod:`importlib.resources`.

    Works from a source checkout, an editable install and an installed wheel alike.

    Returns
    -------
    Path
        ``.../capacitysim/data``.

    Raises
    ------
    DataFileError
        capacitysim is imported from somewhere that is not a folder (a zip archive): the bundled
        storms and models must be files the SWMM engine and the readers can open.
    """
    from importlib import resources

    root = resources.files("capacitysim").joinpath("data")
    if not isinstance(root, Path):
        raise DataFileError(
            f"capacitysim's bundled data is not on the file system ({root}); install capacitysim as a "
            "normal package (pip install), not as a zip archive"
        )
    return root


def bundled_dir(name: str) -> Path:
    """A bundled data folder: ``$CAPACITYSIM_<NAME>`` when set, else the package's own.

    Parameters
    ----------
    name : str
        ``storms`` or ``models`` (package data, :data:`PACKAGE_DATA_DIRS`, resolved through
        :mod:`importlib.resources` so an installed wheel finds them), or ``benchmarks`` (not
        package data: the folder of the source checkout, :data:`PROJECT_ROOT`).

    Returns
    -------
    Path
        The folder (not checked to exist for the environment override and ``benchmarks``).
    """
    env = os.environ.get(f"CAPACITYSIM_{name.upper()}")
    if env:
        return Path(env)
    if name in PACKAGE_DATA_DIRS:
        return package_data_dir() / name
    return PROJECT_ROOT / name


def path_exists(path: str | os.PathLike) -> bool:
    """Whether ``path`` exists; False (not an error) for a name the system cannot look up (too long, a NUL)."""
    try:
        return Path(path).exists()
    except (OSError, ValueError):
        return False


def read_toml(path: str | os.PathLike) -> dict:
    """Read a TOML file; any file that cannot be read as TOML raises DataFileError naming it.

    Parameters
    ----------
    path : str or os.PathLike
        The file.

    Returns
    -------
    dict
        The document.

    Raises
    ------
    DataFileError
        Missing, a folder, unreadable, not UTF-8 (TOML is UTF-8 by definition), not valid TOML,
        nested too deeply for the parser, or holding an integer too long to convert.
    """
    p = Path(path)
    try:
        with p.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise DataFileError(f"{p}: file not found") from None
    except IsADirectoryError:
        raise DataFileError(f"{p}: is a folder, expected a TOML file") from None
    except tomllib.TOMLDecodeError as exc:
        raise DataFileError(f"{p}: not valid TOML ({exc})") from None
    except UnicodeDecodeError as exc:
        raise DataFileError(
            f"{p}: not valid TOML: not UTF-8 text (byte {exc.object[exc.start:exc.start + 1]!r} at offset "
            f"{exc.start}); save the file as UTF-8"
        ) from None
    except RecursionError:
        raise DataFileError(f"{p}: not valid TOML: arrays or tables nested too deeply") from None
    except OSError as exc:
        raise DataFileError(f"{p}: cannot be read ({exc.strerror or exc})") from None
    except ValueError as exc:  # e.g. an integer longer than Python converts, a NUL in the path
        raise DataFileError(f"{p}: not valid TOML ({exc})") from None


def quoted(value) -> str:
    """``repr(value)`` cut to a length fit for a one-line message."""
    text = repr(value)
    return text if len(text) <= _MAX_QUOTED_CHARS else text[: _MAX_QUOTED_CHARS - 3] + "..."


def key_text(key) -> str:
    """A key as it would be written in TOML: bare when it can be (``roof``), else quoted (``"a b"``),
    so a key holding a line break or quotes still gives a one-line message."""
    text = str(key)
    if text and all(c.isascii() and (c.isalnum() or c in "-_") for c in text):
        return text
    return json.dumps(text)


def _type_name(value) -> str:
    """The TOML name of a parsed value's type, for messages."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, (_dt.date, _dt.time)):
        return "a date or time"
    return type(value).__name__


def require_table(value, where: str) -> dict:
    """``value`` if it is a TOML table, else a DataFileError naming ``where`` and what it is."""
    if not isinstance(value, dict):
        raise DataFileError(f"{where}: must be a table ([section] or {{ key = value }}); got {_type_name(value)}, {quoted(value)}")
    return value


def require_text(where: str, key: str, value, *, empty: bool = True) -> str:
    """A TOML string value, else a DataFileError (``empty=False`` refuses blank text too)."""
    if not isinstance(value, str) or (not empty and not value.strip()):
        what = "a string" if empty else "a non-empty string"
        raise DataFileError(f"{where}: {key} must be {what}; got {quoted(value)}")
    return value


def require_bool(where: str, key: str, value) -> bool:
    """A TOML boolean (``true``/``false``); text such as ``"no"`` is refused, never read as true."""
    if not isinstance(value, bool):
        raise DataFileError(f"{where}: {key} must be true or false (a TOML boolean, no quotes); got {quoted(value)}")
    return value


def require_number(where: str, key: str, value, low=None, high=None, *, low_inclusive: bool = True,
                   high_inclusive: bool = True, unit: str = "", whole: bool = False) -> float:
    """A finite TOML number within the bounds, as a float, else a DataFileError naming the key.

    Booleans, text, arrays and integers too large for a float are refused; ``whole`` refuses
    fractions (a count).
    """
    u = f" {unit}" if unit else ""
    kind = "a whole number" if whole else "a number"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DataFileError(f"{where}: {key} must be {kind}{u}; got {quoted(value)}")
    try:
        v = float(value)
    except OverflowError:
        raise DataFileError(f"{where}: {key} must be {kind}{u} of a usable size; got {quoted(value)}") from None
    if not math.isfinite(v):
        raise DataFileError(f"{where}: {key} must be a finite number{u}; got {v!r}")
    if whole and v != math.floor(v):
        raise DataFileError(f"{where}: {key} must be a whole number{u} (a count); got {v:g}")
    if low is not None and (v < low or (v == low and not low_inclusive)):
        raise DataFileError(f"{where}: {key} must be {'>=' if low_inclusive else '>'} {low:g}{u}; got {v:g}")
    if high is not None and (v > high or (v == high and not high_inclusive)):
        raise DataFileError(f"{where}: {key} must be {'<=' if high_inclusive else '<'} {high:g}{u}; got {v:g}")
    return v


def check_keys(data: dict, where: str, required: set[str], optional: set[str]) -> None:
    """Refuse a value that is not a table, and missing and unknown keys, naming them and what is allowed."""
    require_table(data, where)
    missing = sorted(required - data.keys())
    if missing:
        raise DataFileError(f"{where}: missing key(s) {', '.join(missing)}")
    unknown = sorted(data.keys() - required - optional)
    if unknown:
        allowed = ", ".join(sorted(required | optional))
        raise DataFileError(f"{where}: unknown key(s) {', '.join(map(key_text, unknown))} (allowed: {allowed})")


def dumps_json(obj) -> str:
    """JSON with stable key order; NaN and infinity refused (use None for missing values).

    JSON has no inf or NaN (``Infinity`` is not JSON), so a non-finite number anywhere in ``obj`` is
    an :class:`~capacitysim.errors.InputError` naming where it is: the inputs drove a result out
    of range, and a document a reader cannot parse is never printed.
    """
    try:
        return json.dumps(obj, indent=2, sort_keys=False, allow_nan=False, default=_json_default)
    except ValueError:
        where = non_finite_path(obj)
        if where is None:
            raise
        path, value = where
        raise InputError(
            f"result {path or '(top level)'} = {value!r} is not a finite number: the inputs are outside the "
            "range the method can compute"
        ) from None


def non_finite_path(obj, path: str = ""):
    """(path, value) of the first non-finite float (inf, NaN) in a JSON-like object, or None.

    Walks dicts, lists, tuples, numpy arrays and scalars; the path reads ``key.sub[3]``.
    """
    import numpy as np

    if isinstance(obj, np.ndarray):
        obj = obj.tolist()
    elif isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float):
        return None if math.isfinite(obj) else (path, obj)
    if isinstance(obj, dict):
        for k, v in obj.items():
            found = non_finite_path(v, f"{path}.{k}" if path else str(k))
            if found:
                return found
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            found = non_finite_path(v, f"{path}[{i}]")
            if found:
                return found
    return None


def _json_default(o):
    import numpy as np

    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")
