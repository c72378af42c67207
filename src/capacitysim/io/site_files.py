"""Site files (TOML) for NYC detention design, and the rule sets (``nyc-2012``) they are checked under.

A site file::

    [site]
    name = "120 Example Street"
    kind = "new"                 # "new" (new development) or "alteration"
    site_area_sf = 20000         # total site area [ft2]
    altered_area_sf = 6000       # alterations only [ft2]
    drainage_plan_c = 0.60       # runoff coefficient of the receiving sewer's drainage plan
    receiving_sewer = "combined" # optional: combined, storm or sanitary (§ 31-03 is for combined)
    new_points_of_discharge = 0  # optional: alterations may add none (§ 31-03(a)(2))

    [surfaces]                   # area tributary to the system by surface type [ft2]; must sum to
    roof = 14000                 # site_area_sf (new) or altered_area_sf (alteration)
    asphalt = 4000
    grass = 2000

    [system]
    type = "tank"                # blue_roof, tank, chamber, pond
    bottom = "closed"            # closed or open (tank, chamber, pond)
    length_ft = 40.0             # tank / chamber: length, width, height (+ porosity for chambers)
    width_ft = 30.0
    height_ft = 4.0
    orifice_invert_ft = 0.0      # orifice invert above the system bottom

    [infiltration]               # optional, open-bottom systems only (15 RCNY § 31-03(a)(3))
    soil_borings = ["B-1", "B-2"]
    borings_at_system_location = true
    permeability_test = "in-situ"
    infiltration_rate_in_hr = 1.5

    [recycling]                  # optional (15 RCNY § 31-03(a)(4))
    demand_gpd = 2000
    independent = true

Every problem raises :class:`~capacitysim.errors.DataFileError` naming the file, the key, the value
and what is allowed.
"""

from __future__ import annotations

import copy
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from capacitysim.errors import DataFileError
from capacitysim.io.files import check_keys, read_toml

RULES_DIR = Path(__file__).resolve().parents[1] / "data" / "rules"
#: Tolerance on the sum of surface areas [ft2]: the larger of 1 ft2 and 0.1 % of the total.
AREA_SUM_TOLERANCE_SF = 1.0
AREA_SUM_TOLERANCE_REL = 1e-3

SYSTEM_TYPES = ("blue_roof", "tank", "chamber", "pond")
#: Kinds of receiving sewer a site file may name ([site] receiving_sewer).
RECEIVING_SEWERS = ("combined", "storm", "sanitary")
_SYSTEM_KEYS = {
    "blue_roof": ({"roof_area_sf", "max_depth_in"}, set()),
    "tank": ({"length_ft", "width_ft", "height_ft"}, {"bottom"}),
    "chamber": ({"length_ft", "width_ft", "height_ft", "porosity"}, {"bottom"}),
    "pond": ({"bottom_length_ft", "bottom_width_ft", "side_slope_h_per_v", "depth_ft"}, {"bottom"}),
}
_SYSTEM_COMMON = {"type", "orifice_invert_ft", "discharge_coefficient", "overflow_weir_length_ft"}
_INFILTRATION_REQUIRED = {"soil_borings", "borings_at_system_location", "permeability_test", "infiltration_rate_in_hr"}


# ----------------------------------------------------------------------------------------------
# rule sets
# ----------------------------------------------------------------------------------------------
@dataclass
class RuleSet:
    """A rule set: the guidance numbers with their sources (see ``data/rules/nyc-2012.toml``)."""

    name: str
    data: dict
    path: str
    overridden: list[str] = field(default_factory=list)

    def value(self, section: str, key: str = "value"):
        try:
            return self.data[section][key]
        except KeyError:
            raise DataFileError(f"rule set {self.name} ({self.path}): missing [{section}] {key}") from None

    def entries(self) -> list[dict]:
        """Each parameter table as a row: name, value(s), source, verified, note, overridden."""
        rows = []
        for sec, tab in self.data.items():
            if not isinstance(tab, dict):
                continue
            vals = {k: v for k, v in tab.items() if k not in {"source", "verified", "note", "unit"}}
            rows.append(
                {
                    "name": sec,
                    "values": vals,
                    "unit": tab.get("unit", ""),
                    "source": tab.get("source", ""),
                    "verified": bool(tab.get("verified", False)),
                    "note": tab.get("note", ""),
                    "overridden": sec in self.overridden,
                }
            )
        return rows

    def runoff_coefficients(self) -> dict[str, float]:
        """Runoff coefficient C of each surface type [-]."""
        tab = self.data["runoff_coefficients"]
        return {k: v for k, v in tab.items() if k not in {"source", "verified", "note", "unit"}}

    def unverified(self) -> list[str]:
        return [e["name"] for e in self.entries() if not e["verified"]]


def _bundled_rule_path(name: str) -> Path:
    return RULES_DIR / f"{name}.toml"


def load_rule_set(ref: str | os.PathLike = "nyc-2012") -> RuleSet:
    """Load a bundled rule set by name, or a user TOML; ``extends = "nyc-2012"`` overrides tables of it.

    An overriding table replaces the keys it gives; its ``source`` should say where the new value comes
    from (absent, it reads "user override in FILE") and its ``verified`` flag is kept as written.
    """
    p = Path(ref)
    if not p.exists():
        bundled = _bundled_rule_path(str(ref))
        if not bundled.exists():
            known = sorted(f.stem for f in RULES_DIR.glob("*.toml"))
            raise DataFileError(f"rule set {str(ref)!r}: no such file and no bundled rule set by that name (bundled: {', '.join(known)})")
        p = bundled
    data = read_toml(p)
    overridden: list[str] = []
    base_name = data.pop("extends", None)
    if base_name is not None:
        if not isinstance(base_name, str) or base_name == str(ref):
            raise DataFileError(f"{p}: extends must name another rule set; got {base_name!r}")
        base = load_rule_set(base_name)
        merged = copy.deepcopy(base.data)
        for sec, tab in data.items():
            if isinstance(tab, dict):
                if sec not in merged:
                    allowed = ", ".join(k for k, v in merged.items() if isinstance(v, dict))
                    raise DataFileError(f"{p}: unknown table [{sec}] (allowed: {allowed})")
                merged[sec].update(tab)
                if "source" not in tab:
                    merged[sec]["source"] = f"user override in {p}"
                    merged[sec]["verified"] = bool(tab.get("verified", False))
                overridden.append(sec)
            else:
                merged[sec] = tab
        merged["name"] = data.get("name", f"{base.name}+{p.stem}")
        data = merged
    for key in ("name", "design_intensity_in_hr", "runoff_coefficients", "idf_10yr", "orifice_discharge_coefficient"):
        if key not in data:
            raise DataFileError(f"{p}: rule set is missing [{key}]")
    rs = RuleSet(str(data["name"]), data, str(p), overridden)
    _check_rule_values(rs)
    return rs


def _num(where: str, key: str, value, low=None, high=None, low_inclusive=True) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise DataFileError(f"{where}: {key} must be a number; got {value!r}")
    v = float(value)
    if low is not None and (v < low or (v == low and not low_inclusive)):
        raise DataFileError(f"{where}: {key} must be {'>=' if low_inclusive else '>'} {low:g}; got {v:g}")
    if high is not None and v > high:
        raise DataFileError(f"{where}: {key} must be <= {high:g}; got {v:g}")
    return v


def _check_rule_values(rs: RuleSet) -> None:
    w = f"rule set {rs.name} ({rs.path})"
    _num(w, "design_intensity_in_hr", rs.value("design_intensity_in_hr"), 0.0, low_inclusive=False)
    _num(w, "orifice_discharge_coefficient", rs.value("orifice_discharge_coefficient"), 0.0, 1.0, low_inclusive=False)
    _num(w, "idf_10yr.a", rs.value("idf_10yr", "a"), 0.0, low_inclusive=False)
    _num(w, "idf_10yr.b_min", rs.value("idf_10yr", "b_min"), 0.0, low_inclusive=False)
    for k, v in rs.runoff_coefficients().items():
        _num(w, f"runoff_coefficients.{k}", v, 0.0, 1.0)


# ----------------------------------------------------------------------------------------------
# site files
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Infiltration:
    soil_borings: tuple[str, ...]
    borings_at_system_location: bool
    permeability_test: str
    infiltration_rate_in_hr: float
    report: str = ""


@dataclass(frozen=True)
class Recycling:
    demand_gpd: float
    independent: bool
    use: str = ""


@dataclass(frozen=True)
class Site:
    """A validated site file."""

    name: str
    kind: str  # "new" | "alteration"
    site_area_sf: float
    altered_area_sf: float | None
    drainage_plan_c: float
    surfaces_sf: dict[str, float]
    system: dict
    infiltration: Infiltration | None
    recycling: Recycling | None
    design: dict
    path: str
    #: "combined", "storm" or "sanitary"; None when the site file does not say (§ 31-03 applies to
    #: connections to combined sewers).
    receiving_sewer: str | None = None
    #: New points of discharge to the sewer proposed; § 31-03(a)(2) permits none for alterations.
    new_points_of_discharge: int | None = None

    @property
    def tributary_area_sf(self) -> float:
        return float(sum(self.surfaces_sf.values()))


def load_site(path: str | os.PathLike, rules: RuleSet) -> Site:
    """Read and validate a site file against a rule set (surface names come from its C table)."""
    p = Path(path)
    data = read_toml(p)
    where = str(p)
    check_keys(data, where, {"site", "surfaces", "system"}, {"infiltration", "recycling", "design"})

    s = data["site"]
    w = f"{where} [site]"
    check_keys(s, w, {"kind", "site_area_sf", "drainage_plan_c"},
               {"name", "altered_area_sf", "address", "block_lot", "borough", "receiving_sewer", "new_points_of_discharge"})
    sewer = s.get("receiving_sewer")
    if sewer is not None and sewer not in RECEIVING_SEWERS:
        raise DataFileError(f"{w}: receiving_sewer must be one of {', '.join(RECEIVING_SEWERS)}; got {sewer!r}")
    new_points = s.get("new_points_of_discharge")
    if new_points is not None and (isinstance(new_points, bool) or not isinstance(new_points, int) or new_points < 0):
        raise DataFileError(f"{w}: new_points_of_discharge must be a whole number >= 0; got {new_points!r}")
    kind = s["kind"]
    if kind not in ("new", "alteration"):
        raise DataFileError(f"{w}: kind must be one of new, alteration; got {kind!r}")
    site_area = _num(w, "site_area_sf", s["site_area_sf"], 0.0, low_inclusive=False)
    c_dp = _num(w, "drainage_plan_c", s["drainage_plan_c"], 0.0, 1.0, low_inclusive=False)
    altered = None
    if kind == "alteration":
        if "altered_area_sf" not in s:
            raise DataFileError(f"{w}: an alteration needs altered_area_sf (15 RCNY § 31-03(a)(2) prorates by it)")
        altered = _num(w, "altered_area_sf", s["altered_area_sf"], 0.0, low_inclusive=False)
        if altered > site_area:
            raise DataFileError(f"{w}: altered_area_sf must not exceed site_area_sf; got {altered:g} > {site_area:g}")
    elif "altered_area_sf" in s:
        raise DataFileError(f"{w}: altered_area_sf is only for kind = \"alteration\"")

    surf = data["surfaces"]
    w = f"{where} [surfaces]"
    allowed = rules.runoff_coefficients()
    if not surf:
        raise DataFileError(f"{w}: give at least one surface area [ft2] (allowed: {', '.join(allowed)})")
    surfaces = {}
    for k, v in surf.items():
        if k not in allowed:
            raise DataFileError(f"{w}: unknown surface type {k!r} (allowed: {', '.join(allowed)})")
        a = _num(w, k, v)
        if a <= 0:
            raise DataFileError(f"{w}: {k} must be > 0 ft2; got {a:g} (leave out surface types the site does not have)")
        surfaces[k] = a
    total = sum(surfaces.values())
    expected = site_area if kind == "new" else altered
    label = "site_area_sf" if kind == "new" else "altered_area_sf"
    tol = max(AREA_SUM_TOLERANCE_SF, AREA_SUM_TOLERANCE_REL * expected)
    if abs(total - expected) > tol:
        raise DataFileError(
            f"{w}: surface areas sum to {total:,.0f} ft2 but {label} is {expected:,.0f} ft2 "
            f"(they must agree within {tol:,.0f} ft2)"
        )

    system = _load_system(data["system"], f"{where} [system]")

    infiltration = None
    if "infiltration" in data:
        infiltration = _load_infiltration(data["infiltration"], f"{where} [infiltration]", system)
    recycling = None
    if "recycling" in data:
        r = data["recycling"]
        wr = f"{where} [recycling]"
        check_keys(r, wr, {"demand_gpd", "independent"}, {"use"})
        if not isinstance(r["independent"], bool):
            raise DataFileError(f"{wr}: independent must be true or false; got {r['independent']!r}")
        recycling = Recycling(_num(wr, "demand_gpd", r["demand_gpd"], 0.0, low_inclusive=False), r["independent"], str(r.get("use", "")))

    design = dict(data.get("design", {}))
    wd = f"{where} [design]"
    check_keys(design, wd, set(), {"hydrograph", "cn", "tc_min", "dt_min"})
    hyd = design.get("hydrograph", "rational")
    if hyd not in ("rational", "scs"):
        raise DataFileError(f"{wd}: hydrograph must be one of rational, scs; got {hyd!r}")
    design["hydrograph"] = hyd
    if hyd == "scs":
        if "cn" not in design:
            raise DataFileError(f"{wd}: an scs hydrograph needs cn (curve number of the tributary area)")
        design["cn"] = _num(wd, "cn", design["cn"], 0.0, 100.0, low_inclusive=False)
    for k in ("tc_min", "dt_min"):
        if k in design:
            design[k] = _num(wd, k, design[k], 0.0, low_inclusive=False)

    return Site(
        name=str(s.get("name", p.stem)),
        kind=kind,
        site_area_sf=site_area,
        altered_area_sf=altered,
        drainage_plan_c=c_dp,
        surfaces_sf=surfaces,
        system=system,
        infiltration=infiltration,
        recycling=recycling,
        design=design,
        path=str(p),
        receiving_sewer=sewer,
        new_points_of_discharge=new_points,
    )


def _load_system(sysd: dict, w: str) -> dict:
    t = sysd.get("type")
    if t not in SYSTEM_TYPES:
        raise DataFileError(f"{w}: type must be one of {', '.join(SYSTEM_TYPES)}; got {t!r}")
    required, optional = _SYSTEM_KEYS[t]
    check_keys(sysd, w, required | {"type"}, optional | _SYSTEM_COMMON)
    out = {"type": t}
    for k in required:
        low_incl = k == "side_slope_h_per_v"
        out[k] = _num(w, k, sysd[k], 0.0, 1.0 if k == "porosity" else None, low_inclusive=low_incl)
    bottom = sysd.get("bottom", "closed")
    if bottom not in ("closed", "open"):
        raise DataFileError(f"{w}: bottom must be one of closed, open; got {bottom!r}")
    out["bottom"] = bottom
    out["orifice_invert_ft"] = _num(w, "orifice_invert_ft", sysd.get("orifice_invert_ft", 0.0), 0.0)
    if "discharge_coefficient" in sysd:
        out["discharge_coefficient"] = _num(w, "discharge_coefficient", sysd["discharge_coefficient"], 0.0, 1.0, low_inclusive=False)
    if "overflow_weir_length_ft" in sysd:
        out["overflow_weir_length_ft"] = _num(w, "overflow_weir_length_ft", sysd["overflow_weir_length_ft"], 0.0, low_inclusive=False)
    return out


def _load_infiltration(inf: dict, w: str, system: dict) -> Infiltration:
    if system["bottom"] != "open":
        raise DataFileError(
            f"{w}: an infiltration credit is only for open-bottom systems (15 RCNY § 31-03(a)(3)); "
            f"[system] bottom is {system['bottom']!r}"
        )
    missing = sorted(_INFILTRATION_REQUIRED - inf.keys())
    if missing:
        raise DataFileError(
            f"{w}: an infiltration credit needs soil borings at the system and an in-situ permeability test "
            f"(15 RCNY § 31-03(a)(3)); missing: {', '.join(missing)}"
        )
    check_keys(inf, w, _INFILTRATION_REQUIRED, {"report"})
    borings = inf["soil_borings"]
    if not isinstance(borings, list) or not borings or not all(isinstance(b, str) and b.strip() for b in borings):
        raise DataFileError(f"{w}: soil_borings must list the boring IDs (at least one); got {borings!r}")
    if not isinstance(inf["borings_at_system_location"], bool):
        raise DataFileError(f"{w}: borings_at_system_location must be true or false")
    test = inf["permeability_test"]
    if test not in ("in-situ", "laboratory"):
        raise DataFileError(f"{w}: permeability_test must be one of in-situ, laboratory; got {test!r}")
    rate = _num(w, "infiltration_rate_in_hr", inf["infiltration_rate_in_hr"], 0.0, low_inclusive=False)
    return Infiltration(tuple(borings), inf["borings_at_system_location"], test, rate, str(inf.get("report", "")))
