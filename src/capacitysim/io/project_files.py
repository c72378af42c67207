"""Reading I/I remediation project files and design flow tables (TOML), with clear errors.

A project file (``models/projects/*.toml``)::

    [project]
    id = "JC-2024-07"            # required
    name = "Oak Street manholes"  # required
    basin = "Johnson City CSO 4"  # optional, for the bank
    municipal_user = "Village of Johnson City"
    engineer = "A. Engineer, PE"  # required: quantification is prepared by a NYS licensed PE
    pe_license = "NY 000000"
    description = "..."

    [[item]]
    type = "manhole_joint_leak"   # see capacitysim.rules.ii_offset.ITEM_TYPES
    surface = "paved"
    severity = "heavy"
    count = 3

Areas of TR-55 items are given as ``area_sqft`` or ``area_ac`` (one of them).
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from capacitysim.errors import DataFileError
from capacitysim.io.files import check_keys, read_toml
from capacitysim.rules.ii_offset import CASE_BY_CASE_TYPES, ITEM_TYPES, TR55_ITEM_TYPES
from capacitysim.units import SQFT_PER_ACRE

_PROJECT_REQUIRED = {"id", "name", "engineer"}
_PROJECT_OPTIONAL = {"basin", "municipal_user", "pe_license", "description", "certified_on", "prepared_on"}
_COMMON = {"type", "location", "description"}
_CASE = {"gpd", "gpm", "justification"}
_ITEM_KEYS = {
    "manhole_joint_leak": ({"surface", "severity", "count"} | _CASE, set()),
    "sump_pump": ({"count"}, {"count"}),
    "separation": ({"area_sqft", "area_ac", "cover", "soil", "receiving_water", "redirected_to_combined"}, {"cover", "soil"}),
    **{k: ({"area_sqft", "area_ac", "cover", "soil"}, {"cover", "soil"}) for k in TR55_ITEM_TYPES if k != "separation"},
    **{k: (_CASE, {"justification"}) for k in CASE_BY_CASE_TYPES if k != "manhole_joint_leak"},
}


def _number(where: str, key: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DataFileError(f"{where}: {key} must be a number, got {value!r}")
    return float(value)


def read_project(path: str | os.PathLike) -> dict:
    """Read and validate a project file: ``{"project": {...}, "items": [...], "path": str}``.

    TR-55 item areas are normalised to ``area_ac``; every number is checked to be a number.
    """
    p = Path(path)
    data = read_toml(p)
    where = str(p)
    check_keys(data, where, {"project", "item"}, set())
    proj = data["project"]
    if not isinstance(proj, dict):
        raise DataFileError(f"{where}: [project] must be a table")
    check_keys(proj, f"{where} [project]", _PROJECT_REQUIRED, _PROJECT_OPTIONAL)
    items = data["item"]
    if not isinstance(items, list) or not items:
        raise DataFileError(f"{where}: give at least one [[item]]")
    out = []
    for i, raw in enumerate(items):
        w = f"{where} item[{i}]"
        if not isinstance(raw, dict):
            raise DataFileError(f"{w}: must be a table")
        kind = raw.get("type")
        if kind not in ITEM_TYPES:
            raise DataFileError(f"{w}: type must be one of {', '.join(ITEM_TYPES)}; got {kind!r}")
        allowed, required = _ITEM_KEYS[kind]
        check_keys(raw, w, required | {"type"}, (allowed | _COMMON) - required - {"type"})
        item = dict(raw)
        for key in ("count", "gpd", "gpm"):
            if key in item:
                item[key] = _number(w, key, item[key])
        if kind in TR55_ITEM_TYPES:
            if ("area_sqft" in item) == ("area_ac" in item):
                raise DataFileError(f"{w}: give the drained area once, as area_sqft or area_ac")
            if "area_sqft" in item:
                item["area_ac"] = _number(w, "area_sqft", item.pop("area_sqft")) / SQFT_PER_ACRE
            else:
                item["area_ac"] = _number(w, "area_ac", item["area_ac"])
        if kind == "separation" and "redirected_to_combined" in item and not isinstance(item["redirected_to_combined"], bool):
            raise DataFileError(f"{w}: redirected_to_combined must be true or false")
        out.append(item)
    return {"project": dict(proj), "items": out, "path": str(p)}


def read_design_flows(path: str | os.PathLike | None = None) -> dict:
    """The design flow table: ``{"meta": {...}, "uses": {name: {gpd_per_unit, unit, source, verified, ...}}}``.

    ``path=None`` reads the bundled ``capacitysim/data/design_flows.toml``; a user's copy overrides it.
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
    uses = data["uses"]
    if not isinstance(uses, dict) or not uses:
        raise DataFileError(f"{where}: [uses] must hold at least one use")
    for name, row in uses.items():
        w = f"{where} uses.{name}"
        if not isinstance(row, dict):
            raise DataFileError(f"{w}: must be a table")
        check_keys(row, w, {"gpd_per_unit", "unit", "source"}, {"description", "verified"})
        value = _number(w, "gpd_per_unit", row["gpd_per_unit"])
        if value < 0:
            raise DataFileError(f"{w}: gpd_per_unit must be >= 0, got {value:g}")
        row["gpd_per_unit"] = value
        row.setdefault("verified", False)
        row.setdefault("description", name)
    return {"meta": data.get("meta", {}), "uses": uses, "path": where}
