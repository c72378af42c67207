"""Published reference tables shipped with capacitysim (package data, read once and cached).

Every table file in ``capacitysim/data`` starts with ``#`` lines naming its source; this module only
parses them. The tables are read-only constants of the method, not user input.
"""

from __future__ import annotations

import csv
import io
from functools import lru_cache
from importlib import resources

import numpy as np

DISTRIBUTIONS = ("I", "IA", "II", "III")


def _read_csv(relpath: str) -> list[dict[str, str]]:
    text = resources.files("capacitysim").joinpath("data", *relpath.split("/")).read_text()
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    return list(csv.DictReader(io.StringIO("\n".join(lines))))


@lru_cache(maxsize=None)
def rainfall_distribution(distribution: str) -> tuple[np.ndarray, np.ndarray]:
    """Hours [h] and cumulative fraction [-] of an NRCS 24-hour distribution (NEH 630 ch. 4)."""
    rows = _read_csv(f"distributions/type_{distribution.lower()}_24h.csv")
    hours = np.array([float(r["hour"]) for r in rows])
    frac = np.array([float(r["cumulative_fraction"]) for r in rows])
    hours.setflags(write=False)
    frac.setflags(write=False)
    return hours, frac


@lru_cache(maxsize=None)
def unit_peak_coefficients() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """TR-55 Table F-1: per rainfall type, (Ia/P values, array of [C0, C1, C2] rows)."""
    out: dict[str, list] = {}
    for r in _read_csv("tr55_table_f1.csv"):
        out.setdefault(r["rainfall_type"], []).append(
            (float(r["ia_over_p"]), float(r["c0"]), float(r["c1"]), float(r["c2"]))
        )
    result = {}
    for k, rows in out.items():
        arr = np.array(sorted(rows))
        result[k] = (arr[:, 0], arr[:, 1:])
    return result


@lru_cache(maxsize=None)
def storage_coefficients() -> dict[str, np.ndarray]:
    """TR-55 Table F-2: per rainfall type, [C0, C1, C2, C3] of Vs/Vr against qo/qi."""
    out = {}
    for r in _read_csv("tr55_table_f2.csv"):
        coefs = np.array([float(r[c]) for c in ("c0", "c1", "c2", "c3")])
        for t in r["rainfall_types"].split("|"):
            out[t] = coefs
    return out


@lru_cache(maxsize=None)
def pond_swamp_factor() -> tuple[np.ndarray, np.ndarray]:
    """TR-55 Table 4-2: pond and swamp percent of the area [%] and factor Fp [-]."""
    rows = _read_csv("tr55_table_4_2.csv")
    return (np.array([float(r["pond_swamp_percent"]) for r in rows]), np.array([float(r["fp"]) for r in rows]))


@lru_cache(maxsize=None)
def dimensionless_unit_hydrograph() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """NEH 630 ch. 16 Table 16-1: t/Tp, q/qp and the mass curve fraction."""
    rows = _read_csv("neh630_table_16_1.csv")
    cols = [np.array([float(r[c]) for r in rows]) for c in ("t_over_tp", "q_over_qp", "mass_fraction")]
    return cols[0], cols[1], cols[2]


@lru_cache(maxsize=None)
def curve_number_table() -> dict[tuple[str, str], dict[str, object]]:
    """Curve numbers keyed by (table, cover): TR-55 Tables 2-2a..c and BJC Table 174-19.3."""
    out = {}
    for r in _read_csv("curve_numbers.csv"):
        out[(r["table"], r["cover"])] = {
            "A": float(r["cn_a"]) if r["cn_a"] else np.nan,
            "B": float(r["cn_b"]) if r["cn_b"] else np.nan,
            "C": float(r["cn_c"]) if r["cn_c"] else np.nan,
            "D": float(r["cn_d"]) if r["cn_d"] else np.nan,
            "impervious_pct": float(r["impervious_pct"]) if r["impervious_pct"] else None,
            "description": r["description"],
        }
    return out
