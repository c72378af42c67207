"""Reading TOML inputs with clear errors, writing outputs atomically, finding bundled data."""

from __future__ import annotations

import json
import os
import tempfile
import tomllib
from pathlib import Path

from capacitysim.errors import DataFileError

#: The project root of an editable install or a source checkout (holds storms/ and models/).
PROJECT_ROOT = Path(__file__).resolve().parents[3]


def bundled_dir(name: str) -> Path:
    """A bundled data folder (``storms``, ``models``): ``$CAPACITYSIM_<NAME>`` or the project's own."""
    env = os.environ.get(f"CAPACITYSIM_{name.upper()}")
    return Path(env) if env else PROJECT_ROOT / name


def read_toml(path: str | os.PathLike) -> dict:
    """Read a TOML file; a missing or malformed file raises DataFileError naming it."""
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


def check_keys(data: dict, where: str, required: set[str], optional: set[str]) -> None:
    """Refuse missing and unknown keys of a TOML table, naming them and what is allowed."""
    missing = sorted(required - data.keys())
    if missing:
        raise DataFileError(f"{where}: missing key(s) {', '.join(missing)}")
    unknown = sorted(data.keys() - required - optional)
    if unknown:
        allowed = ", ".join(sorted(required | optional))
        raise DataFileError(f"{where}: unknown key(s) {', '.join(unknown)} (allowed: {allowed})")


def _umask_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


_CREATE_MODE = _umask_mode()


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write text (UTF-8) to ``path`` atomically: a temporary file in the same folder, then a rename."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write bytes to ``path`` atomically (temporary file in the same folder, then rename)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        os.fchmod(fd, _CREATE_MODE)  # mkstemp makes 0600; give the file the usual umask-based mode
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return p


def dumps_json(obj) -> str:
    """JSON with stable key order and NaN refused (use None for missing values)."""
    return json.dumps(obj, indent=2, sort_keys=False, allow_nan=False, default=_json_default)


def _json_default(o):
    import numpy as np

    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")
