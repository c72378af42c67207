"""Reading I/I remediation project files and design flow tables (TOML), with clear errors.

A project file (``models/projects/*.toml``)::

    [project]
    id = "JC-2024-07"            # required
    name = "Oak Street manholes"  # required
    basin = "Johnson City CSO 4"  # optional, for the bank
    municipal_user = "Village of Johnson City"
    engineer = "A. Engineer, PE"  # required: quantification is prepared by a NYS licensed PE
    pe_license = "NY 012345"      # required: the PE's NYS license, six digits (a fictitious example)
    description = "..."

    [[item]]
    type = "manhole_joint_leak"   # see capacitysim.rules.ii_offset.ITEM_TYPES
    surface = "paved"
    severity = "heavy"
    count = 3

Areas of TR-55 items are given as ``area_sqft`` or ``area_ac`` (one of them). A TR-55 item may give
its time of concentration ``tc_hr`` [hr] (0.1 to 10 hr; default 0.1 hr, the TR-55 minimum), used for the
peak-rate alternative of the inflow credit (program policy ``inflow_credit_basis``, see
:func:`capacitysim.rules.ii_offset.tr55_inflow_peak_rate_gpd`).

"The quantification of infiltration and inflow shall be prepared by a professional engineer, licensed in the
State of New York" (BJC quantification guidelines; Table 174-19.1 note 2): ``engineer`` (non-blank) and
``pe_license`` (six digits, "NY 012345", "PE 012345" or "012345"; not all zeros) are required, checked by
:func:`capacitysim.rules.ii_offset.certify_project` after the items, and the project gains
``pe_license_number``, the six digits.
"""

from __future__ import annotations

import datetime as _dt
import os
from importlib import resources
from pathlib import Path

from capacitysim.errors import DataFileError, InputError
from capacitysim.io.files import (
    check_keys,
    key_text,
    quoted,
    read_toml,
    require_bool,
    require_number,
    require_table,
    require_text,
)
from capacitysim.rules.ii_offset import (
    CASE_BY_CASE_TYPES,
    ITEM_TYPES,
    MAX_FLOW_GPD,
    MAX_ITEM_AREA_AC,
    MAX_INFLOW_TC_HR,
    MAX_ITEM_COUNT,
    MIN_INFLOW_TC_HR,
    TR55_ITEM_TYPES,
    certify_project,
)
from capacitysim.units import GPD_PER_GPM, SQFT_PER_ACRE

_PROJECT_REQUIRED = {"id", "name", "engineer"}
_PROJECT_OPTIONAL = {"basin", "municipal_user", "pe_license", "description", "certified_on", "prepared_on"}
#: [project] keys that hold dates (a TOML date or text such as "2024-05-01").
_PROJECT_DATES = {"certified_on", "prepared_on"}
_COMMON = {"type", "location", "description"}
_CASE = {"gpd", "gpm", "justification"}
_ITEM_KEYS = {
    "manhole_joint_leak": ({"surface", "severity", "count"} | _CASE, set()),
    "sump_pump": ({"count"}, {"count"}),
    "separation": ({"area_sqft", "area_ac", "cover", "soil", "tc_hr", "receiving_water", "redirected_to_combined"},
                   {"cover", "soil"}),
    **{k: ({"area_sqft", "area_ac", "cover", "soil", "tc_hr"}, {"cover", "soil"}) for k in TR55_ITEM_TYPES if k != "separation"},
    **{k: (_CASE | {"analysis"}, {"justification"}) for k in CASE_BY_CASE_TYPES if k != "manhole_joint_leak"},
}
#: The kind of document a metered item cites (``analysis``: :mod:`capacitysim.workflows.metered_credit`).
METERED_KIND = "metered-credit"
#: Item keys that hold text (names from the tables, places, reasons).
_ITEM_TEXT = ("surface", "severity", "cover", "soil", "location", "description", "justification", "receiving_water")
#: Upper bound of each numeric item key [its unit]: see capacitysim.rules.ii_offset.
_ITEM_MAX = {"count": MAX_ITEM_COUNT, "gpd": MAX_FLOW_GPD, "gpm": MAX_FLOW_GPD / GPD_PER_GPM,
             "area_ac": MAX_ITEM_AREA_AC, "area_sqft": MAX_ITEM_AREA_AC * SQFT_PER_ACRE}


def _number(where: str, key: str, value, high: float | None = None, *, whole: bool = False) -> float:
    """A finite number >= 0 (and <= ``high``), a whole number for counts; else a DataFileError."""
    return require_number(where, key, value, 0.0, high, whole=whole)


def read_metered_document(path, where: str) -> tuple[dict, str]:
    """A metered-credit document (``capacitysim credits meter --json``, issue 29) and the SHA-256 of its bytes.

    ``where`` names it in the messages (``project.toml item 2: analysis 'credit.json'``). A file that cannot be
    read, is not JSON or is a document of another kind is refused (:class:`DataFileError`).
    """
    import hashlib
    import json

    try:
        data = Path(path).read_bytes()
        doc = json.loads(data)
    except OSError as exc:
        raise DataFileError(f"{where}: cannot be read ({exc.strerror or exc})") from None
    except (ValueError, RecursionError):  # RecursionError: brackets nested past the parser's depth
        raise DataFileError(f"{where} is not JSON (capacitysim credits meter --json writes it)") from None
    if not isinstance(doc, dict) or doc.get("kind") != METERED_KIND:
        raise DataFileError(f"{where} is not a {METERED_KIND} document (kind "
                            f"{quoted(doc.get('kind') if isinstance(doc, dict) else None)})")
    return doc, hashlib.sha256(data).hexdigest()


def _metered(where: str, project_path: Path, item: dict) -> dict:
    """A case-by-case item measured by flow metering: ``analysis`` names a metered-credit document (``capacitysim
    credits meter --json``, the bare name of a file beside the project file); its credit claimed is the item's gpd, and the item
    records the document's name and SHA-256, the interval and the PE who prepared it. The item gives no gpd or gpm
    of its own (one figure per item)."""
    ref = require_text(where, "analysis", item["analysis"])
    if "gpd" in item or "gpm" in item:
        raise DataFileError(f"{where}: a metered item takes its gpd from its analysis ({ref}); give gpd, gpm or "
                            "analysis, one of them")
    if "/" in ref or "\\" in ref or ref in (".", "..") or ":" in ref:
        raise DataFileError(f"{where}: analysis {ref!r}: the bare name of a file beside the project file (no folder: "
                            "a project never reads elsewhere, in the service least of all)")
    path = project_path.parent / ref
    doc, sha = read_metered_document(path, f"{where}: analysis {ref!r}")
    credit, pe = doc.get("credit"), doc.get("pe") or {}
    if not isinstance(credit, dict) or not isinstance(credit.get("claimed_gpd"), (int, float)):
        raise DataFileError(f"{where}: analysis {ref!r} gives no credit ({'; '.join(doc.get('warnings') or [])})")
    if not pe.get("name") or not pe.get("license"):
        raise DataFileError(f"{where}: analysis {ref!r} names no PE (Table 174-19.1 note 2: prepared by a NYS "
                            "licensed professional engineer; capacitysim credits meter --pe-name --pe-license)")
    gpd = _number(where, "analysis credit", credit["claimed_gpd"], _ITEM_MAX["gpd"])
    summary = (f"{path.name} (SHA-256 {sha[:12]}...): {credit.get('claim')} bound of the "
               f"{float(credit.get('level', 0)):.0%} interval {credit.get('lower_gpd', 0):,.0f} to "
               f"{credit.get('upper_gpd', 0):,.0f} gpd on the {credit.get('basis')} basis, by {pe['name']} "
               f"(NYS PE {pe['license']})")
    return {"gpd": gpd, "justification": item.get("justification") or f"metered: {summary}",
            "analysis": {"file": path.name, "sha256": sha, "claimed_gpd": gpd,
                         **{k: credit.get(k) for k in ("point_gpd", "lower_gpd", "upper_gpd", "level", "basis",
                                                       "claim")}, "pe": {"name": pe["name"], "license": pe["license"]}}}


def read_project(path: str | os.PathLike) -> dict:
    """Read and validate a project file: ``{"project": {...}, "items": [...], "path": str}``.

    TR-55 item areas are normalised to ``area_ac``; every number is checked to be a finite number
    >= 0 within its bound (counts whole numbers), every name a string, every flag a boolean. Then the
    engineer and the NYS PE license (:func:`~capacitysim.rules.ii_offset.certify_project`): the project
    gains ``pe_license_number``, the license's six digits. The file's keys and items are checked first, so
    a file with a bad item and no license is refused for the item.
    """
    p = Path(path)
    data = read_toml(p)
    where = str(p)
    check_keys(data, where, {"project", "item"}, set())
    proj = require_table(data["project"], f"{where} [project]")
    wp = f"{where} [project]"
    check_keys(proj, wp, _PROJECT_REQUIRED, _PROJECT_OPTIONAL)
    for key, value in proj.items():
        if key in _PROJECT_DATES:
            if not isinstance(value, (str, _dt.date)):
                raise DataFileError(f"{wp}: {key} must be a date (2024-05-01); got {quoted(value)}")
        else:
            require_text(wp, key, value, empty=key not in ("id", "name"))
    items = data["item"]
    if not isinstance(items, list) or not items:
        raise DataFileError(f"{where}: give at least one [[item]]")
    out = []
    for i, raw in enumerate(items):
        w = f"{where} item[{i}]"
        require_table(raw, w)
        kind = raw.get("type")
        if not isinstance(kind, str) or kind not in ITEM_TYPES:
            raise DataFileError(f"{w}: type must be one of {', '.join(ITEM_TYPES)}; got {quoted(kind)}")
        allowed, required = _ITEM_KEYS[kind]
        if "analysis" in raw:  # a metered item: its justification is written from its analysis when not given
            required = required - {"justification"}
        check_keys(raw, w, required | {"type"}, (allowed | _COMMON) - required - {"type"})
        item = dict(raw)
        for key in _ITEM_TEXT:
            if key in item:
                require_text(w, key, item[key])
        for key in ("count", "gpd", "gpm"):
            if key in item:
                item[key] = _number(w, key, item[key], _ITEM_MAX[key], whole=key == "count")
        if kind in TR55_ITEM_TYPES:
            if ("area_sqft" in item) == ("area_ac" in item):
                raise DataFileError(f"{w}: give the drained area once, as area_sqft or area_ac")
            if "area_sqft" in item:
                item["area_ac"] = _number(w, "area_sqft", item.pop("area_sqft"), _ITEM_MAX["area_sqft"]) / SQFT_PER_ACRE
            else:
                item["area_ac"] = _number(w, "area_ac", item["area_ac"], _ITEM_MAX["area_ac"])
            if "tc_hr" in item:
                item["tc_hr"] = require_number(w, "tc_hr", item["tc_hr"], MIN_INFLOW_TC_HR, MAX_INFLOW_TC_HR, unit="hr")
        if "analysis" in item:
            item.update(_metered(w, p, item))
        if kind == "separation" and "redirected_to_combined" in item:
            require_bool(w, "redirected_to_combined", item["redirected_to_combined"])
        out.append(item)
    try:
        project = certify_project(proj, where=f"{wp}: ")
    except InputError as exc:  # a file's refusal is a DataFileError, naming the file
        raise DataFileError(str(exc)) from None
    return {"project": project, "items": out, "path": str(p)}


def read_design_flows(path: str | os.PathLike | None = None) -> dict:
    """The design flow table: ``{"meta": {...}, "uses": {name: {gpd_per_unit, unit, source, verified, ...}}}``.

    ``path=None`` reads the bundled ``capacitysim/data/design_flows.toml``; a user's copy overrides it.
    ``verified`` must be a TOML boolean (``"no"`` is refused, never counted as verified).
    """
    if path is None:
        ref = resources.files("capacitysim").joinpath("data", "design_flows.toml")
        with resources.as_file(ref) as real:
            data = read_toml(real)
        where = "design_flows.toml (bundled)"
    else:
        data = read_toml(path)
        where = str(path)
    check_keys(data, where, {"uses"}, {"meta"})
    meta = require_table(data.get("meta", {}), f"{where} [meta]")
    uses = require_table(data["uses"], f"{where} [uses]")
    if not uses:
        raise DataFileError(f"{where}: [uses] must hold at least one use")
    for name, row in uses.items():
        w = f"{where} uses.{key_text(name)}"
        check_keys(row, w, {"gpd_per_unit", "unit", "source"}, {"description", "verified"})
        row["gpd_per_unit"] = _number(w, "gpd_per_unit", row["gpd_per_unit"], MAX_FLOW_GPD)
        for key in ("unit", "source", "description"):
            if key in row:
                require_text(w, key, row[key])
        row["verified"] = require_bool(w, "verified", row.get("verified", False))
        row.setdefault("description", name)
    return {"meta": meta, "uses": uses, "path": where}
