"""What capacitysim ships as package data, and resolving the name of a bundled model.

The design storms and the example models live in the package (``capacitysim/data/storms``,
``capacitysim/data/models``; the top-level ``storms/`` and ``models/`` of a source checkout are links
to them), so an installed wheel has them too. :func:`capacitysim.io.files.bundled_dir` finds them
(``$CAPACITYSIM_STORMS`` / ``$CAPACITYSIM_MODELS`` override the folders).

:func:`model_path` turns ``--model synthetic-50`` into the bundled file; the ``list_*`` functions
describe what is bundled, one dict per item (``capacitysim list``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from capacitysim.errors import DataFileError, InputError
from capacitysim.io.files import bundled_dir, package_data_dir, path_exists, quoted, read_toml

#: Suffix of a SWMM input file (the bundled models are ``<name>.inp``).
MODEL_SUFFIX = ".inp"
#: SWMM sections whose rows are nodes and links (counted for :func:`list_models`).
NODE_SECTIONS = ("JUNCTIONS", "OUTFALLS", "DIVIDERS", "STORAGE")
LINK_SECTIONS = ("CONDUITS", "PUMPS", "ORIFICES", "WEIRS", "OUTLETS")
_SECTION = re.compile(r"^\s*\[([^\]]+)\]")
#: Characters of a path quoted in an error message at most (longer ones keep their end: the file name).
_MAX_QUOTED_PATH = 200


def _is_file(path: Path) -> bool:
    """Whether ``path`` is a regular file; False for a name the system cannot look up."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def _quoted_path(text: str) -> str:
    """``repr`` of a path for a one-line message; a long one is cut at the front, keeping the file name."""
    return repr(text) if len(text) <= _MAX_QUOTED_PATH else repr("..." + text[-(_MAX_QUOTED_PATH - 3):])


def model_names() -> list[str]:
    """The names of the bundled models (``synthetic-50``, ``synthetic-500``), sorted.

    Returns
    -------
    list of str
        The stems of the ``*.inp`` files in ``bundled_dir("models")``; empty when the folder is missing.
    """
    folder = bundled_dir("models")
    return sorted(p.stem for p in folder.glob(f"*{MODEL_SUFFIX}") if _is_file(p)) if folder.is_dir() else []


def model_path(name_or_path: str | os.PathLike, *, option: str = "--model") -> Path:
    """A SWMM model file: the path itself when it is an existing file, else the bundled model of that name.

    Parameters
    ----------
    name_or_path : str or os.PathLike
        A path to an ``.inp`` file (returned as given, ``Path(name_or_path)``, when it is an existing
        regular file), or the bare name of a bundled model with or without ``.inp``
        (``synthetic-50``, ``synthetic-500.inp``), looked up in ``bundled_dir("models")``. A value
        with a folder in it (``city/synthetic-50.inp``) is a path only: when it does not exist it is
        an error, never silently replaced by a bundled model.
    option : str, default "--model"
        The field named in the error message (a CLI option or a file key).

    Returns
    -------
    Path
        The file: the given path unchanged, or the absolute path of the bundled model.

    Raises
    ------
    InputError
        The value is empty, not a path, a folder or other non-file, or neither an existing file
        nor the name of a bundled model; the message names ``option``, the value and the bundled
        names.
    """
    names = model_names()
    bundled = f"bundled models: {', '.join(names) if names else 'none'}"
    text = os.fspath(name_or_path) if isinstance(name_or_path, (str, os.PathLike)) else None
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{option} must be a SWMM .inp file path or the name of a bundled model; "
                         f"got {quoted(name_or_path)} ({bundled})")
    p = Path(text)
    if _is_file(p):
        return p
    if p.name == text and p.name not in ("", ".", ".."):  # a bare name: try the bundled models
        stem = p.name[: -len(MODEL_SUFFIX)] if p.name.lower().endswith(MODEL_SUFFIX) else p.name
        if stem in names:
            return bundled_dir("models") / f"{stem}{MODEL_SUFFIX}"
    if path_exists(p):
        raise InputError(f"{option} {_quoted_path(text)}: is a folder or not a regular file; give a SWMM .inp file "
                         f"or the name of a bundled model ({bundled})")
    raise InputError(f"{option} {_quoted_path(text)}: no such file, and no bundled model by that name ({bundled})")


# --- descriptions of what is bundled (capacitysim list) -------------------------------------------


def _readme_rows(readme: Path) -> dict[str, dict[str, str]]:
    """The rows of the Markdown tables of a README, keyed by their first cell without backticks.

    Each row maps the (lower-case) column headers to its cells; a missing or unreadable README gives
    no rows (descriptions are optional).
    """
    try:
        lines = readme.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return {}
    rows: dict[str, dict[str, str]] = {}
    header: list[str] | None = None
    for line in lines:
        s = line.strip()
        if not s.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in s.strip("|").split("|")]
        if header is None:
            header = [c.lower() for c in cells]
        elif not all(set(c) <= set("-: ") for c in cells):
            rows[cells[0].strip("`")] = dict(zip(header, cells))
    return rows


def _count_rows(path: Path) -> tuple[dict[str, int], str]:
    """Rows per section of a SWMM file (comments and blank lines left out), and its first title line."""
    counts: dict[str, int] = {}
    title = ""
    section = None
    with path.open("r", encoding="latin-1") as fh:  # any encoding: only brackets and ';' matter here
        for line in fh:
            m = _SECTION.match(line)
            if m:
                section = m.group(1).strip().upper()
                continue
            s = line.strip()
            if not s or s.startswith(";") or section is None:
                continue
            if section == "TITLE":
                title = title or s
            else:
                counts[section] = counts.get(section, 0) + 1
    return counts, title


def list_models() -> list[dict]:
    """The bundled SWMM models, one dict each.

    Returns
    -------
    list of dict
        ``name``, ``file`` (absolute path), ``nodes`` and ``links`` (rows of the
        :data:`NODE_SECTIONS` and :data:`LINK_SECTIONS`), ``title`` (the first line of ``[TITLE]``)
        and ``description`` (the model's row in the folder's README.md, its ``purpose`` column, or
        empty).
    """
    folder = bundled_dir("models")
    readme = _readme_rows(folder / "README.md")
    out = []
    for name in model_names():
        path = folder / f"{name}{MODEL_SUFFIX}"
        try:
            counts, title = _count_rows(path)
        except OSError as exc:
            raise DataFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None
        row = readme.get(path.name, {})
        out.append({
            "name": name,
            "file": str(path),
            "nodes": sum(counts.get(s, 0) for s in NODE_SECTIONS),
            "links": sum(counts.get(s, 0) for s in LINK_SECTIONS),
            "title": title,
            "description": row.get("purpose") or row.get("what") or "",
        })
    return out


def storm_names() -> list[str]:
    """The names of the bundled design storms (``binghamton-1yr-24h``), sorted."""
    folder = bundled_dir("storms")
    return sorted(p.stem for p in folder.glob("*.toml") if _is_file(p)) if folder.is_dir() else []


def list_storms() -> list[dict]:
    """The bundled design storms, each loaded and validated as ``--storm NAME`` would.

    Returns
    -------
    list of dict
        ``name`` (the bundled name), ``title``, ``depth_in``, ``duration_hr``, ``distribution``
        (NRCS type), ``dt_min``, ``return_period_yr`` (or None), ``location``, ``file``.

    Raises
    ------
    DataFileError
        A bundled storm file is malformed (named with its key).
    """
    from capacitysim.io.storms import load_storm

    out = []
    for name in storm_names():
        spec = load_storm(bundled_dir("storms") / f"{name}.toml")
        out.append({
            "name": name,
            "title": spec.name,
            "depth_in": spec.depth_in,
            "duration_hr": spec.duration_hr,
            "distribution": spec.distribution,
            "dt_min": spec.dt_min,
            "return_period_yr": spec.return_period_yr,
            "location": spec.location,
            "file": spec.path,
        })
    return out


def list_covers() -> list[dict]:
    """The cover types of the curve number table (``--cover`` with ``--cn-table``), one dict each.

    A cover key found in several tables of a family is listed once, from the table
    :func:`capacitysim.hydrology.curve_number` reads it from (the first of the family).

    Returns
    -------
    list of dict
        ``cover``, ``cn_table`` (the ``--cn-table`` value), ``table`` (the published table),
        ``cn`` (soil group A-D to CN, None where the table has a dash), ``impervious_pct`` and
        ``description``.
    """
    import math

    from capacitysim.hydrology import tables
    from capacitysim.hydrology.runoff import CN_TABLES

    data = tables.curve_number_table()
    out = []
    for family, members in CN_TABLES.items():
        seen: set[str] = set()
        for member in members:
            for (table, cover), row in data.items():
                if table != member or cover in seen:
                    continue
                seen.add(cover)
                out.append({
                    "cover": cover,
                    "cn_table": family,
                    "table": table,
                    "cn": {g: (None if math.isnan(row[g]) else row[g]) for g in ("A", "B", "C", "D")},
                    "impervious_pct": row["impervious_pct"],
                    "description": row["description"],
                })
    return out


def list_rule_sets() -> list[dict]:
    """The bundled rule sets (``data/rules/*.toml``, ``--rule NAME``), one dict each.

    Returns
    -------
    list of dict
        ``name`` (the bundled name), ``title``, ``regulation``, ``extends`` (or None), ``file``.
    """
    folder = package_data_dir() / "rules"
    out = []
    for path in sorted(folder.glob("*.toml")):
        data = read_toml(path)
        out.append({
            "name": path.stem,
            "title": str(data.get("title", "")),
            "regulation": str(data.get("regulation", "")),
            "extends": data.get("extends"),
            "file": str(path),
        })
    return out
