"""What the envelope of a workflow's document needs from the layers below rules (issue 27, item 3): the SWMM
engine's record and the SHA-256 of input files. The envelope itself is
:func:`capacitysim.rules.document.envelope`."""

from __future__ import annotations

import functools
from pathlib import Path

from capacitysim.rules.document import envelope  # noqa: F401 - the one envelope, importable from here too


@functools.lru_cache(maxsize=1)
def _engine() -> tuple:
    from importlib import metadata

    def ver(dist):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    try:
        from swmm.toolkit import solver

        v = int(solver.swmm_get_version())
        version = f"{v // 10000}.{v // 1000 % 10}.{v % 1000}"
    except Exception:  # noqa: BLE001 - no engine installed: the record says so
        version = None
    return (("name", "SWMM"), ("version", version), ("swmm-toolkit", ver("swmm-toolkit")), ("pyswmm", ver("pyswmm")))


def swmm_engine() -> dict:
    """The envelope's ``engine`` for a workflow that ran SWMM: name, version (``5.2.4``, from
    ``swmm_get_version()``), and the versions of swmm-toolkit and pyswmm."""
    return dict(_engine())


def file_input(role: str, path, sha256: str | None = None) -> dict:
    """One entry of the envelope's ``inputs``: ``{"role", "file", "sha256"}``; the SHA-256 is read from the
    file when not given (None when the file is not there)."""
    if path is None:
        return {"role": role, "file": None, "sha256": sha256}
    if sha256 is None and Path(path).is_file():
        from capacitysim.bank.refs import sha256_file

        sha256 = sha256_file(path)
    return {"role": role, "file": str(path), "sha256": sha256}


#: Significant digits of a series a document stores for its report's figures (issue 27, item 3): far finer than
#: a figure draws, and a tenth of the bytes of a float's full repr.
SERIES_DIGITS = 6


def series_values(values, digits: int | None = SERIES_DIGITS) -> list:
    """A numeric series as a document stores it: a list of floats rounded to ``digits`` significant digits (None:
    as they are, for values a report compares with a limit), a non-finite value (a period without data) as None
    (JSON has no NaN)."""
    import math

    import numpy as np

    out = []
    for x in np.asarray(values, dtype=float).tolist():
        out.append(None if not math.isfinite(x) else x if digits is None else float(f"{x:.{digits}g}"))
    return out
