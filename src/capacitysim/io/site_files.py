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
    alteration_type = "horizontal_enlargement"  # alterations: or "impervious_increase" (§ 31-03(a))
    phased = false               # optional: built in multiple construction phases
    subdivision = false          # optional: on subdivided lots
    # master_plan = "MP-2024-001"  required when phased or subdivision is true: the reference of the
    #                              master/phased plan site connection proposal (else refused, exit 3)

    [submittal]                  # optional: who submits what (shown on the report and in the JSON)
    project_number = "SCP-2024-0123"
    applicant = "Example Owner LLC"
    engineer = "A. Engineer, P.E."
    engineer_license = "012345"
    site_address = "120 Example Street, Brooklyn"   # default: [site] address
    bbl = "3-00123-0045"
    # approved_on = 2024-03-15   # optional: date DEP approved the system (not after today); the
    #                            # triennial certifications of § 31-04(a)(8) are due from it

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
and what is allowed. A value the rule itself refuses (an ``alteration_type`` other than the two kinds
of § 31-03(a), a phased or subdivided development without ``master_plan``) is read as given and
refused by :func:`capacitysim.workflows.detention.site_refusals` (exit 3), for ``detention`` and
detention sweeps alike.

Every file read is identified by its SHA-256 (``Site.sha256``, ``RuleSet.sha256``): reports name
files by their name and digest, never by a path of the machine that ran them.
"""

from __future__ import annotations

import copy
import datetime
import hashlib
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from capacitysim.errors import DataFileError, InputError
from capacitysim.io.files import (
    check_keys,
    key_text,
    path_exists,
    quoted,
    read_toml,
    require_bool,
    require_number,
    require_table,
    require_text,
)
from capacitysim.io.submittal import APPROVAL_FIELD, Submittal, approval_date, submittal_from_table

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

# --- bounds of site and rule-set values ----------------------------------------------------------
# Each bound sits far above anything real: past it a value is a typing or unit error, and the
# arithmetic downstream (areas times depths, durations over time steps) overflows or runs away.

#: Largest site, altered or surface area [ft2]: 10^8 ft2 is about 2,300 acres, more than any
#: development site; a larger value is a unit error.
MAX_AREA_SF = 1.0e8
#: Longest plan dimension of a detention system or overflow weir [ft]: 10,000 ft is nearly two miles.
MAX_SYSTEM_LENGTH_FT = 1.0e4
#: Tallest detention system, deepest pond, highest orifice invert [ft].
MAX_SYSTEM_HEIGHT_FT = 100.0
#: Flattest pond side slope [ft horizontal per ft vertical]: 100:1 is a flat floor, not a side slope.
MAX_SIDE_SLOPE_H_PER_V = 100.0
#: Largest soil infiltration rate [in/h]: 1,000 in/h (over an inch a second... about 1.4 ft a minute)
#: is far beyond rates measured in place in soils; a larger value is a unit error.
MAX_INFILTRATION_IN_HR = 1000.0
#: Largest recycling demand of a site [gpd]: 10 MGD is the flow of a town, not of a building's reuse.
MAX_RECYCLING_GPD = 1.0e7
#: Largest design rainfall intensity [in/h]: the greatest 1-minute rainfall on record (1.23 in at
#: Unionville, Maryland, 1956) is 74 in/h; a larger value is a unit error (mm/h).
MAX_INTENSITY_IN_HR = 100.0
#: Largest units factor of the rational method [cfs per (ac in/h)]: 1.0 by convention, 1.0083 exactly;
#: a factor far from 1 is a wrong unit.
MAX_RATIONAL_FACTOR = 2.0
#: Longest storm duration, time of concentration or IDF offset [min]: the 10-year curve and the
#: routed design storms span hours; a week (10,080 min) is beyond any.
MAX_DURATION_MIN = 10_080.0
#: Most storm durations a rule set may list (each is routed at every trial orifice): ten times the
#: bundled list.
MAX_DURATIONS = 100
#: Longest routing time step [min]: design hydrographs rise over a Tc of minutes, which a step of
#: more than an hour cannot resolve.
MAX_DT_MIN = 60.0
#: Deepest chain of rule sets extending one another (a chain this long is a loop in all but name).
MAX_EXTENDS_DEPTH = 8
#: Keys every rule-set table may carry besides its values.
_META_KEYS = {"source", "verified", "note", "unit"}
#: Top-level keys of a rule set that are not tables.
_RULE_SCALARS = {"name", "title", "regulation", "extends"}
#: Rule-set tables a user override may add keys to (new surface types); others take only their own keys.
_OPEN_TABLES = {"runoff_coefficients"}
#: Tables every rule set must hold (after ``extends``): what :func:`capacitysim.workflows.detention.design_site` reads.
_RULE_TABLES = ("design_intensity_in_hr", "rational_cfs_per_acre_in_hr", "runoff_coefficients", "idf_10yr",
                "orifice_discharge_coefficient", "rational_hydrograph", "routing")


def read_toml_sha256(path: str | os.PathLike) -> tuple[dict, str]:
    """Read a TOML file and the SHA-256 of the very bytes parsed.

    Returns
    -------
    data : dict
    sha256 : str
        64 lowercase hex digits.

    Raises
    ------
    DataFileError
        As :func:`capacitysim.io.files.read_toml` (which words every failure), or the file changed
        between a failed and a repeated read.
    """
    p = Path(path)
    try:
        raw = p.read_bytes()
        return tomllib.loads(raw.decode("utf-8")), hashlib.sha256(raw).hexdigest()
    except (OSError, ValueError, RecursionError):  # UnicodeDecodeError and TOMLDecodeError are ValueErrors
        read_toml(p)  # raises the one-line DataFileError naming the problem
    raise DataFileError(f"{p}: the file changed while it was read; run again")


# ----------------------------------------------------------------------------------------------
# rule sets
# ----------------------------------------------------------------------------------------------
@dataclass
class RuleSet:
    """A rule set: the guidance numbers with their sources (see ``data/rules/nyc-2012.toml``).

    ``sources`` lists every file read to build it (the file itself, then each it extends): all are
    inputs of a run, which an output must never overwrite. ``sha256`` gives the SHA-256 of each, in
    the same order (:meth:`files`).
    """

    name: str
    data: dict
    path: str
    overridden: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    sha256: list[str] = field(default_factory=list)

    def value(self, section: str, key: str = "value"):
        tab = self.data.get(section)
        if not isinstance(tab, dict) or key not in tab:
            raise DataFileError(f"rule set {self.name} ({self.path}): missing [{section}] {key}")
        return tab[key]

    def entries(self) -> list[dict]:
        """Each parameter table as a row: name, value(s), source, verified, note, overridden."""
        rows = []
        for sec, tab in self.data.items():
            if not isinstance(tab, dict):
                continue
            vals = {k: v for k, v in tab.items() if k not in _META_KEYS}
            rows.append(
                {
                    "name": sec,
                    "values": vals,
                    "unit": tab.get("unit", ""),
                    "source": tab.get("source", ""),
                    "verified": tab.get("verified", False) is True,
                    "note": tab.get("note", ""),
                    "overridden": sec in self.overridden,
                }
            )
        return rows

    def runoff_coefficients(self) -> dict[str, float]:
        """Runoff coefficient C of each surface type [-]."""
        tab = self.data["runoff_coefficients"]
        return {k: v for k, v in tab.items() if k not in _META_KEYS}

    def unverified(self) -> list[str]:
        """Names of the tables whose ``verified`` flag is not true (in the rule set's order).

        A user rule set (``extends = "nyc-2012"``) that gives a table ``verified = true`` (with its
        ``source``) takes it off this list; an override without the flag puts it on (see :func:`load_rule_set`).
        """
        return [e["name"] for e in self.entries() if not e["verified"]]

    def files(self) -> list[dict]:
        """Each file read, as a report names it: ``{"file": name, "sha256": hex}`` (no folder: never a
        path of the machine that ran it), the rule set's own file first."""
        return [{"file": Path(s).name, "sha256": h} for s, h in zip(self.sources, self.sha256)]


def _bundled_rule_path(name: str) -> Path:
    return RULES_DIR / f"{name}.toml"


def _resolve_rule_path(ref) -> Path:
    if not isinstance(ref, (str, os.PathLike)):
        raise DataFileError(f"rule set {quoted(ref)}: give a bundled name or a file path (a string)")
    p = Path(ref)
    if path_exists(p):
        return p
    bundled = _bundled_rule_path(str(ref))
    if "/" not in str(ref) and path_exists(bundled):
        return bundled
    known = sorted(f.stem for f in RULES_DIR.glob("*.toml"))
    raise DataFileError(f"rule set {str(ref)!r}: no such file and no bundled rule set by that name (bundled: {', '.join(known)})")


def load_rule_set(ref: str | os.PathLike = "nyc-2012", *, _chain: tuple[str, ...] = ()) -> RuleSet:
    """Load a bundled rule set by name, or a user TOML; ``extends = "nyc-2012"`` overrides tables of it.

    An overriding table replaces the keys it gives (only keys the base table has, except new surface
    types in ``runoff_coefficients``); its ``source`` should say where the new value comes from
    (absent, it reads "user override in NAME", the file's name) and its ``verified`` flag is kept as written (absent,
    false: the base's flag does not vouch for the new value). A rule
    set may extend one that extends another, at most :data:`MAX_EXTENDS_DEPTH` deep; a loop is refused.
    Every value is checked (:func:`_check_rule_values`); ``verified`` must be a TOML boolean.
    """
    p = _resolve_rule_path(ref)
    key = os.path.realpath(p)
    if key in _chain:
        names = " -> ".join([*_chain[_chain.index(key):], key])
        raise DataFileError(f"{p}: extends loops back to a rule set already being read ({names}); allowed: a chain ending in a rule set without extends")
    if len(_chain) >= MAX_EXTENDS_DEPTH:
        raise DataFileError(f"{p}: rule sets extend one another more than {MAX_EXTENDS_DEPTH} deep; allowed: at most {MAX_EXTENDS_DEPTH}")
    data, digest = read_toml_sha256(p)
    overridden: list[str] = []
    sources = [str(p)]
    digests = [digest]
    base_name = data.pop("extends", None)
    for sec, tab in data.items():
        if not isinstance(tab, dict) and sec not in _RULE_SCALARS:
            raise DataFileError(f"{p}: {key_text(sec)} must be a table [{key_text(sec)}] (keys that are not tables: {', '.join(sorted(_RULE_SCALARS))})")
        if sec in _RULE_SCALARS:
            require_text(str(p), sec, tab)
    if base_name is not None:
        if not isinstance(base_name, str) or not base_name.strip():
            raise DataFileError(f"{p}: extends must name another rule set (a bundled name or a file); got {quoted(base_name)}")
        base = load_rule_set(base_name, _chain=(*_chain, key))
        sources += base.sources
        digests += base.sha256
        merged = copy.deepcopy(base.data)
        for sec, tab in data.items():
            if isinstance(tab, dict):
                if not isinstance(merged.get(sec), dict):
                    allowed = ", ".join(k for k, v in merged.items() if isinstance(v, dict))
                    raise DataFileError(f"{p}: unknown table [{key_text(sec)}] (allowed: {allowed})")
                unknown = sorted(set(tab) - set(merged[sec]) - _META_KEYS) if sec not in _OPEN_TABLES else []
                if unknown:
                    allowed = ", ".join(sorted(set(merged[sec]) | _META_KEYS))
                    raise DataFileError(f"{p} [{sec}]: unknown key(s) {', '.join(map(key_text, unknown))} (allowed: {allowed})")
                merged[sec].update(tab)
                if "source" not in tab:
                    merged[sec]["source"] = f"user override in {p.name}"
                # an overridden value is verified only when the override says so: the base's flag
                # spoke of the base's value
                merged[sec]["verified"] = tab.get("verified", False)
                overridden.append(sec)
            else:
                merged[sec] = tab
        merged["name"] = data.get("name", f"{base.name}+{p.stem}")
        data = merged
    if "name" not in data:
        raise DataFileError(f"{p}: rule set is missing name")
    for sec in _RULE_TABLES:
        if sec not in data:
            raise DataFileError(f"{p}: rule set is missing [{sec}]")
    rs = RuleSet(str(data["name"]), data, str(p), overridden, sources, digests)
    _check_rule_values(rs)
    return rs


def _num(where: str, key: str, value, low=None, high=None, low_inclusive=True) -> float:
    """A finite number within the bounds (see :func:`capacitysim.io.files.require_number`)."""
    return require_number(where, key, value, low, high, low_inclusive=low_inclusive)


def _check_rule_values(rs: RuleSet) -> None:
    """Check every value a rule set gives: numbers in range, texts as text, ``verified`` a boolean."""
    from capacitysim.hydraulics.weir import MAX_RECTANGULAR_WEIR_COEFFICIENT
    from capacitysim.hydrology._inputs import MAX_PRECIP_IN

    w = f"rule set {rs.name} ({rs.path})"
    for sec, tab in rs.data.items():
        if not isinstance(tab, dict):
            continue
        if "verified" in tab:
            require_bool(w, f"[{key_text(sec)}] verified", tab["verified"])
        for meta in ("source", "note", "unit"):
            if meta in tab:
                require_text(w, f"[{key_text(sec)}] {meta}", tab[meta])
    _num(w, "design_intensity_in_hr", rs.value("design_intensity_in_hr"), 0.0, MAX_INTENSITY_IN_HR, low_inclusive=False)
    _num(w, "rational_cfs_per_acre_in_hr", rs.value("rational_cfs_per_acre_in_hr"), 0.0, MAX_RATIONAL_FACTOR, low_inclusive=False)
    _num(w, "orifice_discharge_coefficient", rs.value("orifice_discharge_coefficient"), 0.0, 1.0, low_inclusive=False)
    a = _num(w, "idf_10yr.a", rs.value("idf_10yr", "a"), 0.0, low_inclusive=False)
    b = _num(w, "idf_10yr.b_min", rs.value("idf_10yr", "b_min"), 0.0, MAX_DURATION_MIN, low_inclusive=False)
    if a / b > MAX_INTENSITY_IN_HR:  # i = a / (t + b) is largest at t = 0
        raise DataFileError(f"{w}: idf_10yr gives {a / b:g} in/h at t = 0 (a / b_min); allowed: at most {MAX_INTENSITY_IN_HR:g} in/h")
    coefficients = rs.runoff_coefficients()
    if not coefficients:
        raise DataFileError(f"{w}: [runoff_coefficients] must give at least one surface type")
    for k, v in coefficients.items():
        _num(w, f"runoff_coefficients.{key_text(k)}", v, 0.0, 1.0)
    if "weir_coefficient" in rs.data:
        _num(w, "weir_coefficient", rs.value("weir_coefficient"), 0.0, MAX_RECTANGULAR_WEIR_COEFFICIENT, low_inclusive=False)
    _num(w, "rational_hydrograph.tc_min", rs.value("rational_hydrograph", "tc_min"), 0.0, MAX_DURATION_MIN, low_inclusive=False)
    durations = rs.value("rational_hydrograph", "durations_min")
    if not isinstance(durations, list) or not 0 < len(durations) <= MAX_DURATIONS:
        raise DataFileError(f"{w}: rational_hydrograph.durations_min must list 1 to {MAX_DURATIONS} durations [min]; got {quoted(durations)}")
    for i, d in enumerate(durations):
        _num(w, f"rational_hydrograph.durations_min[{i}]", d, 0.0, MAX_DURATION_MIN, low_inclusive=False)
    _num(w, "routing.dt_min", rs.value("routing", "dt_min"), 0.0, MAX_DT_MIN, low_inclusive=False)
    if "design_storm_10yr_24h" in rs.data:
        _num(w, "design_storm_10yr_24h.depth_in", rs.value("design_storm_10yr_24h", "depth_in"), 0.0, MAX_PRECIP_IN, low_inclusive=False)
        dist = rs.value("design_storm_10yr_24h", "distribution")
        if dist not in ("I", "IA", "II", "III"):
            raise DataFileError(f"{w}: design_storm_10yr_24h.distribution must be one of I, IA, II, III; got {quoted(dist)}")


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
    #: The kind of alteration as the site file states it ("horizontal_enlargement" or
    #: "impervious_increase", § 31-03(a)); None when not stated (a condition to confirm). Any other
    #: text is refused by the rule (:func:`capacitysim.workflows.detention.site_refusals`).
    alteration_type: str | None = None
    #: A development built in multiple construction phases ([site] phased).
    phased: bool = False
    #: A development on subdivided lots ([site] subdivision).
    subdivision: bool = False
    #: Reference of the master/phased plan site connection proposal of a phased or subdivided development.
    master_plan: str | None = None
    #: SHA-256 of the site file's bytes.
    sha256: str = ""
    #: Submittal identification: the site file's [submittal] table ([site] address as its site address
    #: when the table gives none).
    submittal: Submittal = field(default_factory=Submittal)
    #: Date DEP approved the detention system ([submittal] approved_on), None for a design before
    #: approval; the triennial certifications of 15 RCNY § 31-04(a)(8) fall due from it.
    approved_on: datetime.date | None = None

    @property
    def tributary_area_sf(self) -> float:
        return float(sum(self.surfaces_sf.values()))


def load_site(path: str | os.PathLike, rules: RuleSet) -> Site:
    """Read and validate a site file against a rule set (surface names come from its C table).

    Every table must be a table, every number a finite number within its bound (the ``MAX_*``
    constants of this module), every flag a TOML boolean and every name a string; anything else is
    a :class:`~capacitysim.errors.DataFileError` naming the file, the key and the value.
    """
    from capacitysim.hydrology._inputs import MAX_TC_HR
    from capacitysim.units import MINUTES_PER_HOUR

    p = Path(path)
    data, digest = read_toml_sha256(p)
    where = str(p)
    check_keys(data, where, {"site", "surfaces", "system"}, {"infiltration", "recycling", "design", "submittal"})

    s = data["site"]
    w = f"{where} [site]"
    check_keys(s, w, {"kind", "site_area_sf", "drainage_plan_c"},
               {"name", "altered_area_sf", "address", "block_lot", "borough", "receiving_sewer", "new_points_of_discharge",
                "alteration_type", "phased", "subdivision", "master_plan"})
    for key in ("name", "address", "block_lot", "borough"):
        if key in s:
            require_text(w, key, s[key])
    sewer = s.get("receiving_sewer")
    if sewer is not None and sewer not in RECEIVING_SEWERS:
        raise DataFileError(f"{w}: receiving_sewer must be one of {', '.join(RECEIVING_SEWERS)}; got {quoted(sewer)}")
    new_points = s.get("new_points_of_discharge")
    if new_points is not None and (isinstance(new_points, bool) or not isinstance(new_points, int) or new_points < 0):
        raise DataFileError(f"{w}: new_points_of_discharge must be a whole number >= 0; got {quoted(new_points)}")
    kind = s["kind"]
    if kind not in ("new", "alteration"):
        raise DataFileError(f"{w}: kind must be one of new, alteration; got {quoted(kind)}")
    site_area = _area(w, "site_area_sf", s["site_area_sf"])
    c_dp = _num(w, "drainage_plan_c", s["drainage_plan_c"], 0.0, 1.0, low_inclusive=False)
    altered = None
    if kind == "alteration":
        if "altered_area_sf" not in s:
            raise DataFileError(f"{w}: an alteration needs altered_area_sf (15 RCNY § 31-03(a)(2) prorates by it)")
        altered = _area(w, "altered_area_sf", s["altered_area_sf"])
        if altered > site_area:
            raise DataFileError(f"{w}: altered_area_sf must not exceed site_area_sf; got {altered:g} > {site_area:g}")
    elif "altered_area_sf" in s:
        raise DataFileError(f"{w}: altered_area_sf is only for kind = \"alteration\"")
    alteration_type = None
    if "alteration_type" in s:
        if kind != "alteration":
            raise DataFileError(f"{w}: alteration_type is only for kind = \"alteration\"; got kind = {quoted(kind)}")
        # any text is read: a kind § 31-03(a) does not cover is refused by the rule (exit 3), not here
        alteration_type = require_text(w, "alteration_type", s["alteration_type"], empty=False).strip()
    phased = require_bool(w, "phased", s.get("phased", False))
    subdivision = require_bool(w, "subdivision", s.get("subdivision", False))
    master_plan = None
    if "master_plan" in s:
        master_plan = require_text(w, "master_plan", s["master_plan"], empty=False).strip()
        if not (phased or subdivision):
            raise DataFileError(f"{w}: master_plan is only for a phased or subdivided development (phased = true or "
                                f"subdivision = true); got master_plan = {quoted(master_plan)} with neither")
    submittal = submittal_from_table(data.get("submittal"), where, extra=(APPROVAL_FIELD,))
    approved_on = None
    if isinstance(data.get("submittal"), dict):
        try:
            approved_on = approval_date(data["submittal"].get(APPROVAL_FIELD))
        except InputError as exc:
            raise DataFileError(f"{where} [submittal]: {exc}") from None
    if submittal.site_address is None and "address" in s:
        try:
            submittal = submittal.merged(site_address=s["address"])
        except InputError as exc:
            raise DataFileError(f"{w}: address: {exc}") from None

    w = f"{where} [surfaces]"
    surf = require_table(data["surfaces"], w)
    allowed = rules.runoff_coefficients()
    if not surf:
        raise DataFileError(f"{w}: give at least one surface area [ft2] (allowed: {', '.join(map(key_text, allowed))})")
    surfaces = {}
    for k, v in surf.items():
        if k not in allowed:
            raise DataFileError(f"{w}: unknown surface type {k!r} (allowed: {', '.join(map(key_text, allowed))})")
        a = _num(w, k, v, high=MAX_AREA_SF)
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
        wr = f"{where} [recycling]"
        r = data["recycling"]
        check_keys(r, wr, {"demand_gpd", "independent"}, {"use"})
        recycling = Recycling(_num(wr, "demand_gpd", r["demand_gpd"], 0.0, MAX_RECYCLING_GPD, low_inclusive=False),
                              require_bool(wr, "independent", r["independent"]), require_text(wr, "use", r.get("use", "")))

    wd = f"{where} [design]"
    design = dict(require_table(data.get("design", {}), wd))
    check_keys(design, wd, set(), {"hydrograph", "cn", "tc_min", "dt_min"})
    hyd = design.get("hydrograph", "rational")
    if hyd not in ("rational", "scs"):
        raise DataFileError(f"{wd}: hydrograph must be one of rational, scs; got {quoted(hyd)}")
    design["hydrograph"] = hyd
    if hyd == "scs":
        if "cn" not in design:
            raise DataFileError(f"{wd}: an scs hydrograph needs cn (curve number of the tributary area)")
        design["cn"] = _num(wd, "cn", design["cn"], 0.0, 100.0, low_inclusive=False)
    elif "cn" in design:
        design["cn"] = _num(wd, "cn", design["cn"], 0.0, 100.0, low_inclusive=False)
    if "tc_min" in design:  # the SCS unit hydrograph takes Tc up to MAX_TC_HR; the rational shapes up to a week
        design["tc_min"] = _num(wd, "tc_min", design["tc_min"], 0.0, min(MAX_DURATION_MIN, MAX_TC_HR * MINUTES_PER_HOUR),
                                low_inclusive=False)
    if "dt_min" in design:
        design["dt_min"] = _num(wd, "dt_min", design["dt_min"], 0.0, MAX_DT_MIN, low_inclusive=False)

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
        alteration_type=alteration_type,
        phased=phased,
        subdivision=subdivision,
        master_plan=master_plan,
        sha256=digest,
        submittal=submittal,
        approved_on=approved_on,
    )


def _area(where: str, key: str, value) -> float:
    """A site area [ft2] in (0, MAX_AREA_SF]."""
    v = _num(where, key, value, 0.0, low_inclusive=False)
    if v > MAX_AREA_SF:
        raise DataFileError(f"{where}: {key} must be <= {MAX_AREA_SF:,.0f} ft2 (about 2,300 acres; a unit error?); got {v:g}")
    return v


#: Upper bound of each size of a system [unit of the key].
_SYSTEM_MAX = {
    "length_ft": MAX_SYSTEM_LENGTH_FT, "width_ft": MAX_SYSTEM_LENGTH_FT, "bottom_length_ft": MAX_SYSTEM_LENGTH_FT,
    "bottom_width_ft": MAX_SYSTEM_LENGTH_FT, "height_ft": MAX_SYSTEM_HEIGHT_FT, "depth_ft": MAX_SYSTEM_HEIGHT_FT,
    "max_depth_in": MAX_SYSTEM_HEIGHT_FT * 12.0, "roof_area_sf": MAX_AREA_SF, "porosity": 1.0,
    "side_slope_h_per_v": MAX_SIDE_SLOPE_H_PER_V,
}


def _load_system(sysd: dict, w: str) -> dict:
    require_table(sysd, w)
    t = sysd.get("type")
    if t not in SYSTEM_TYPES:
        raise DataFileError(f"{w}: type must be one of {', '.join(SYSTEM_TYPES)}; got {quoted(t)}")
    required, optional = _SYSTEM_KEYS[t]
    check_keys(sysd, w, required | {"type"}, optional | _SYSTEM_COMMON)
    out = {"type": t}
    for k in sorted(required):
        low_incl = k == "side_slope_h_per_v"
        out[k] = _num(w, k, sysd[k], 0.0, _SYSTEM_MAX[k], low_inclusive=low_incl)
    bottom = sysd.get("bottom", "closed")
    if bottom not in ("closed", "open"):
        raise DataFileError(f"{w}: bottom must be one of closed, open; got {quoted(bottom)}")
    out["bottom"] = bottom
    out["orifice_invert_ft"] = _num(w, "orifice_invert_ft", sysd.get("orifice_invert_ft", 0.0), 0.0, MAX_SYSTEM_HEIGHT_FT)
    if "discharge_coefficient" in sysd:
        out["discharge_coefficient"] = _num(w, "discharge_coefficient", sysd["discharge_coefficient"], 0.0, 1.0, low_inclusive=False)
    if "overflow_weir_length_ft" in sysd:
        out["overflow_weir_length_ft"] = _num(w, "overflow_weir_length_ft", sysd["overflow_weir_length_ft"], 0.0,
                                              MAX_SYSTEM_LENGTH_FT, low_inclusive=False)
    return out


def _load_infiltration(inf: dict, w: str, system: dict) -> Infiltration:
    require_table(inf, w)
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
        raise DataFileError(f"{w}: soil_borings must list the boring IDs (at least one); got {quoted(borings)}")
    at_system = require_bool(w, "borings_at_system_location", inf["borings_at_system_location"])
    test = inf["permeability_test"]
    if test not in ("in-situ", "laboratory"):
        raise DataFileError(f"{w}: permeability_test must be one of in-situ, laboratory; got {quoted(test)}")
    rate = _num(w, "infiltration_rate_in_hr", inf["infiltration_rate_in_hr"], 0.0, MAX_INFILTRATION_IN_HR, low_inclusive=False)
    return Infiltration(tuple(borings), at_system, test, rate, require_text(w, "report", inf.get("report", "")))
