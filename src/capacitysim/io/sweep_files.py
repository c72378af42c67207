"""Sweep files (TOML): a grid of scenarios over a SWMM network, a detention site, or runoff alone.

A SWMM connection sweep::

    name = "How much can MH0005 take?"
    kind = "swmm"                      # swmm (default when `model` is given) | detention | runoff
    model = "../networks/small.inp"    # relative to this file, or a bundled model's name ("synthetic-50")
    storm = "binghamton-1yr-24h"       # optional: a bundled storm or a storm TOML; else the model's own rainfall
    mode = "product"                   # full factorial (default) or "zip" (all lists of one length)
    spinup_hr = 6                      # optional: hours simulated before the model's start (as --spinup-hr)

    [criteria]                         # optional: fields of capacitysim.rules.capacity.Criteria
    outlet_peak_tol_pct = 1.0

    [grid]
    connect_node = ["MH0005", "MH0012"]
    connect_gpd = [0, 25000, 50000, 100000]
    remediation_fraction = [0.0, 0.25]
    storm_depth_in = [2.1, 2.6]

A detention family sweep (``kind = "detention"``, ``site = "../sites/new-building.toml"``, optional
``rules``) varies the site's parameters (``site_area_sf``, ``drainage_plan_c``, the system's
dimensions, ``orifice_diameter_in`` ...); a runoff sweep (``kind = "runoff"``) varies ``area_ac``,
``cn``, ``tc_min`` and ``storm_depth_in`` of one subcatchment under a storm.

Every problem raises :class:`~capacitysim.errors.DataFileError` naming the file, the key, the
value and what is allowed: bytes that are not UTF-8 TOML, values of the wrong type or out of range
(integers too large for a float included), paths the system cannot look up. The number of scenarios
is a Python integer (the product of the list lengths, never an allocated grid) and a grid above
:data:`MAX_SCENARIOS` is refused before anything else is read.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from capacitysim.errors import DataFileError, InputError
from capacitysim.io.files import bundled_dir, check_keys, read_toml
from capacitysim.rules.capacity import Criteria

KINDS = ("swmm", "detention", "runoff")
MODES = ("product", "zip")

#: Parameters of each kind: name -> (type, low, high, low_inclusive, high_inclusive, unit/description).
#: ``str`` parameters are node ids; ``None`` bounds are open.
SWMM_PARAMETERS = {
    "connect_node": (str, None, None, True, True, "node id of the new connection"),
    "connect_gpd": (float, 0.0, None, True, True, "gpd, average daily flow of the connection; 0: none"),
    "peaking_factor": (float, 1.0, None, True, True, "design peak / average of the connection; absent: the node's diurnal pattern"),
    "remediation_fraction": (float, 0.0, 1.0, True, False, "fraction of the RDII removed in the connection's basin"),
    "storm_depth_in": (float, 0.0, None, False, True, "in, total depth of the design storm"),
}
DETENTION_PARAMETERS = {
    "site_area_sf": (float, 0.0, None, False, True, "ft2; the surfaces are scaled with it"),
    "altered_area_sf": (float, 0.0, None, False, True, "ft2, alterations; the surfaces are scaled with it"),
    "drainage_plan_c": (float, 0.0, 1.0, False, True, "runoff coefficient of the drainage plan"),
    "weighted_c": (float, 0.0, 1.0, False, True, "runoff coefficient of the tributary area; overrides the surfaces"),
    "length_ft": (float, 0.0, None, False, True, "ft, tank or chamber length"),
    "width_ft": (float, 0.0, None, False, True, "ft, tank or chamber width"),
    "height_ft": (float, 0.0, None, False, True, "ft, tank or chamber height"),
    "porosity": (float, 0.0, 1.0, False, True, "chamber void fraction"),
    "roof_area_sf": (float, 0.0, None, False, True, "ft2, blue roof area"),
    "max_depth_in": (float, 0.0, None, False, True, "in, blue roof ponding depth"),
    "bottom_length_ft": (float, 0.0, None, False, True, "ft, pond bottom length"),
    "bottom_width_ft": (float, 0.0, None, False, True, "ft, pond bottom width"),
    "side_slope_h_per_v": (float, 0.0, None, True, True, "pond side slope H:V"),
    "depth_ft": (float, 0.0, None, False, True, "ft, pond depth"),
    "orifice_diameter_in": (float, 0.0, None, False, True, "in; absent from the grid: the orifice is sized"),
    "orifice_invert_ft": (float, 0.0, None, True, True, "ft above the system bottom"),
    "discharge_coefficient": (float, 0.0, 1.0, False, True, "orifice Cd"),
    "cn": (float, 0.0, 100.0, False, True, "curve number of scs hydrographs"),
    "tc_min": (float, 0.0, None, False, True, "min, time of concentration"),
    "storm_depth_in": (float, 0.0, None, False, True, "in, 10-yr 24-h storm depth of scs hydrographs"),
}
RUNOFF_PARAMETERS = {
    "area_ac": (float, 0.0, None, False, True, "ac, drainage area"),
    "cn": (float, 0.0, 100.0, False, True, "curve number"),
    "tc_min": (float, 0.0, None, False, True, "min, time of concentration"),
    "storm_depth_in": (float, 0.0, None, False, True, "in, total storm depth"),
}
PARAMETERS = {"swmm": SWMM_PARAMETERS, "detention": DETENTION_PARAMETERS, "runoff": RUNOFF_PARAMETERS}
#: System keys of each system type that a grid may vary (site_files._SYSTEM_KEYS).
SYSTEM_GRID_KEYS = {
    "tank": {"length_ft", "width_ft", "height_ft"},
    "chamber": {"length_ft", "width_ft", "height_ft", "porosity"},
    "blue_roof": {"roof_area_sf", "max_depth_in"},
    "pond": {"bottom_length_ft", "bottom_width_ft", "side_slope_h_per_v", "depth_ft"},
}
#: Defaults of the runoff sweep's fixed values when the grid leaves them out.
RUNOFF_DEFAULTS = {"area_ac": 10.0, "cn": 80.0, "tc_min": 30.0}
#: Bytes a scenario takes in the results store, uncompressed: status and verdict (int8), the
#: fixed-width texts (message of 240 and failed check of 2 x 120 characters, 4 bytes each) and about
#: 15 float64 results. :func:`capacitysim.io.sweep_store.open_results` loads a store whole.
STORE_BYTES_PER_SCENARIO = 2_048
#: Hard limit of a grid (scenarios), whatever the options (``--yes-large`` does not lift it): the
#: store of 2,000,000 scenarios holds about 4 GB uncompressed, which reading it back loads in memory.
MAX_SCENARIOS = 2_000_000
#: Largest ``chunk_size`` (designs computed at once in a block of a vectorized sweep; a block's
#: hydrographs and stage-storage tables grow with it).
MAX_CHUNK_SIZE = 10_000
#: Largest sweep file read [bytes] (a grid of the hard limit's size fits in a few hundred kB).
MAX_SWEEP_FILE_BYTES = 16 * 2**20
#: Bytes per gigabyte, and the step to the next unit (TB, PB), for the store size in messages.
BYTES_PER_GB = 1e9
STORE_UNIT_STEP = 1000.0

_TOP_KEYS = {"grid"}
_TOP_OPTIONAL = {"name", "kind", "model", "storm", "mode", "criteria", "site", "rules", "chunk_size", "plant",
                 "outlets", "timeout_s", "distribution", "description", "spinup_hr"}


@dataclass
class SweepSpec:
    """A validated sweep file."""

    name: str
    kind: str
    mode: str
    grid: dict[str, list]  # parameter -> values, in file order
    path: str
    model: Path | None = None
    storm: object | None = None  # capacitysim.io.storms.StormSpec
    criteria: dict = field(default_factory=dict)
    site: Path | None = None
    rules: str = "nyc-2012"
    chunk_size: int = 250
    plant: str | None = None
    outlets: list[str] | None = None
    timeout_s: float | None = None
    distribution: str = "II"
    spinup_hr: float | None = None  # swmm sweeps: hours prepended (None: the capacity demonstration's default policy)
    model_nodes: int | None = None  # swmm sweeps: nodes of the model (the run-time estimate)
    #: what :func:`load_sweep` parsed (the model; the rule set and the site), keyed by the file it came
    #: from, so a run parses each input file once (:meth:`network_model`, :meth:`site_and_rules`).
    #: Never compared, shown, copied (:func:`dataclasses.replace`) or pickled (workers get the
    #: sweep's bundle or payload).
    _parsed: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_parsed"] = {}
        return state

    def network_model(self):
        """The sweep's model, parsed and opened by the engine
        (:func:`capacitysim.network.model.load_model`) once: the one :func:`load_sweep` read to check
        the grid's nodes, else read now and kept."""
        key = ("model", str(self.model))
        if key not in self._parsed:
            from capacitysim.network.model import load_model

            self._parsed[key] = load_model(self.model)
        return self._parsed[key]

    def site_and_rules(self) -> tuple:
        """(site, rule set) of a detention sweep (:func:`capacitysim.io.site_files.load_site`,
        :func:`~capacitysim.io.site_files.load_rule_set`) read once: the ones :func:`load_sweep` read
        to check the grid's keys, else read now and kept."""
        key = self._site_key()
        if key not in self._parsed:
            from capacitysim.io.site_files import load_rule_set, load_site

            rules = load_rule_set(self.rules)
            self._parsed[key] = (load_site(self.site, rules), rules)
        return self._parsed[key]

    def _site_key(self) -> tuple:
        return ("site", str(self.site), str(self.rules))

    @property
    def dims(self) -> list[str]:
        """The result's dimensions: one per swept parameter (product) or ``scenario`` (zip)."""
        return list(self.grid) if self.mode == "product" else ["scenario"]

    @property
    def shape(self) -> tuple[int, ...]:
        """Lengths of the result's dimensions (Python integers)."""
        if self.mode == "product":
            return tuple(len(v) for v in self.grid.values())
        return (len(next(iter(self.grid.values()))),)

    @property
    def n_scenarios(self) -> int:
        """Number of scenarios: the product of :attr:`shape` in Python integers (never overflows)."""
        return grid_size(self.mode, self.grid)

    def scenario(self, i: int) -> dict:
        """Parameters of flat scenario ``i`` (C order over the grid's dimensions)."""
        if self.mode == "zip":
            return {k: v[i] for k, v in self.grid.items()}
        idx = np.unravel_index(i, self.shape)
        return {k: v[j] for (k, v), j in zip(self.grid.items(), idx)}

    def columns(self, start: int = 0, stop: int | None = None) -> dict[str, np.ndarray]:
        """Parameter columns of flat scenarios ``start:stop`` (vectorized sweeps)."""
        stop = self.n_scenarios if stop is None else stop
        flat = np.arange(start, stop)
        if self.mode == "zip":
            return {k: np.asarray(v)[flat] for k, v in self.grid.items()}
        idx = np.unravel_index(flat, self.shape)
        return {k: np.asarray(v)[j] for (k, v), j in zip(self.grid.items(), idx)}


def sweep_inputs(spec: SweepSpec) -> list[str]:
    """The files a sweep reads (the sweep file, its model or site, its storm file), resolved."""
    paths = [spec.path, spec.model, spec.site, getattr(spec.storm, "path", None)]
    return [os.path.realpath(p) for p in paths if p]


def grid_size(mode: str, grid: dict[str, list]) -> int:
    """Scenarios of a grid: the product of the list lengths (``product``) or their common length
    (``zip``), as a Python integer (no overflow, nothing allocated)."""
    if not grid:
        return 0
    lengths = [len(v) for v in grid.values()]
    return math.prod(lengths) if mode == "product" else lengths[0]


def store_size_text(n_scenarios: int) -> str:
    """Approximate size of the results store of ``n_scenarios``, uncompressed: ``about 4.1 GB``, ``about 9.7 TB``."""
    size = n_scenarios * STORE_BYTES_PER_SCENARIO / BYTES_PER_GB
    for unit in ("GB", "TB", "PB"):
        if size < STORE_UNIT_STEP or unit == "PB":
            break
        size /= STORE_UNIT_STEP
    return f"about {size:,.1f} {unit}" if size < STORE_UNIT_STEP else f"more than {STORE_UNIT_STEP:,.0f} PB"


def _short(value, limit: int = 80) -> str:
    """``repr`` of a value cut to ``limit`` characters (a message stays one readable line)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _guarded(where: str, what: str, fn, *args):
    """``fn(*args)``; an error of the system or of a reader below (a path too long, bytes that are
    not text, nesting too deep) becomes a :class:`DataFileError` naming ``what``."""
    try:
        return fn(*args)
    except InputError:
        raise
    except (OSError, ValueError, OverflowError, RecursionError) as exc:
        raise DataFileError(f"{where}: {what}: {type(exc).__name__}: {str(exc)[:200]}") from None


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except (OSError, ValueError):  # a name too long, a null byte: not a file of ours
        return False


def _refuse_special(where: str, label: str, path: Path) -> None:
    """Refuse a path that exists but is no regular file (a folder, ``/dev/zero``, a FIFO): reading
    it would fail, block or never end."""
    try:
        special = path.exists() and not path.is_file()
    except (OSError, ValueError):
        return  # not a path the system can look up: the reader's own "not found" follows
    if special:
        raise DataFileError(f"{where}: {label} is not a regular file (a folder, a device or a pipe)")


def _resolve(base: Path, ref, key: str, where: str, folder: str, suffix: str) -> Path:
    if not isinstance(ref, str) or not ref.strip():
        raise DataFileError(f"{where}: {key} must be a file path; got {_short(ref)}")
    p = Path(ref)
    cands = [p] if p.is_absolute() else [base / p, bundled_dir("models") / folder / p,
                                          bundled_dir("models") / folder / f"{ref}{suffix}"]
    for c in cands:
        if _is_file(c):
            return c.resolve()
    raise DataFileError(f"{where}: {key} = {_short(ref)} not found (looked in {', '.join(str(c)[:200] for c in cands)})")


def _check_value(where: str, key: str, value, spec) -> object:
    typ, lo, hi, lo_inc, hi_inc, what = spec
    if typ is str:
        if not isinstance(value, str) or not value.strip():
            raise DataFileError(f"{where}: {key} values must be non-empty strings ({what}); got {_short(value)}")
        return value
    try:
        v = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan
    except OverflowError:  # an integer beyond float range
        v = math.nan
    if not math.isfinite(v):
        raise DataFileError(f"{where}: {key} values must be finite numbers ({what}); got {_short(value)}")
    bad = (lo is not None and (v < lo if lo_inc else v <= lo)) or (hi is not None and (v > hi if hi_inc else v >= hi))
    if bad:
        interval = f"{'[' if lo_inc else '('}{'-inf' if lo is None else f'{lo:g}'}, {'inf' if hi is None else f'{hi:g}'}{']' if hi_inc and hi is not None else ')'}"
        raise DataFileError(f"{where}: {key} = {_short(value)} is outside {interval} ({what})")
    return v


def load_sweep(path: str | os.PathLike) -> SweepSpec:
    """Read and validate a sweep file.

    Parameters
    ----------
    path : path-like
        The sweep TOML.

    Returns
    -------
    SweepSpec
        The validated sweep; its grid holds the values as written (nothing is expanded).

    Raises
    ------
    capacitysim.errors.DataFileError
        Bytes that are not UTF-8 TOML, missing or unknown keys, an unknown kind or mode, a
        parameter that the kind does not sweep, an empty or non-list grid entry, values of the
        wrong type or out of range, zip lists of unequal length, duplicate values, more than
        :data:`MAX_SCENARIOS` scenarios, a missing model/site/storm file.
    """
    p = Path(path)
    where = str(p)
    _refuse_special(where, "the sweep file", p)
    if _is_file(p) and p.stat().st_size > MAX_SWEEP_FILE_BYTES:
        raise DataFileError(f"{where}: {p.stat().st_size:,} bytes; a sweep file is at most {MAX_SWEEP_FILE_BYTES:,} bytes")
    data = _guarded(where, "not a readable TOML sweep file", read_toml, p)
    check_keys(data, where, _TOP_KEYS, _TOP_OPTIONAL)
    base = p.resolve().parent
    kind = data.get("kind", "detention" if "site" in data else "runoff" if "model" not in data and "site" not in data else "swmm")
    if not isinstance(kind, str) or kind not in KINDS:
        raise DataFileError(f"{where}: kind must be one of {', '.join(KINDS)}; got {_short(kind)}")
    mode = data.get("mode", "product")
    if not isinstance(mode, str) or mode not in MODES:
        raise DataFileError(f"{where}: mode must be one of {', '.join(MODES)}; got {_short(mode)}")
    spec = SweepSpec(name=str(data.get("name", p.stem)), kind=kind, mode=mode, grid={}, path=str(p))

    if kind == "swmm":
        if "model" not in data:
            raise DataFileError(f"{where}: a swmm sweep needs model = \"path/to/network.inp\"")
        spec.model = _resolve(base, data["model"], "model", where, "", ".inp")
        for k in ("site", "rules"):
            if k in data:
                raise DataFileError(f"{where}: {k} is only for kind = \"detention\"")
    elif kind == "detention":
        if "site" not in data:
            raise DataFileError(f"{where}: a detention sweep needs site = \"path/to/site.toml\"")
        spec.site = _resolve(base, data["site"], "site", where, "sites", ".toml")
        rules = data.get("rules", "nyc-2012")
        if not isinstance(rules, str) or not rules.strip():
            raise DataFileError(f"{where}: rules must be a bundled rule set name or a rule set file; got {_short(rules)}")
        _refuse_special(where, f"rules = {_short(rules)}", Path(rules))
        spec.rules = rules
        if "model" in data:
            raise DataFileError(f"{where}: model is only for kind = \"swmm\"")
    else:
        for k in ("model", "site"):
            if k in data:
                raise DataFileError(f"{where}: {k} is not used by kind = \"runoff\"")
    if "storm" in data:
        if kind == "detention":
            raise DataFileError(f"{where}: storm is not used by detention sweeps (the rule set's design storm is; sweep storm_depth_in)")
        from capacitysim.io.storms import load_storm

        ref = data["storm"]
        if not isinstance(ref, str) or not ref.strip():
            raise DataFileError(f"{where}: storm must be a bundled storm name or a storm file; got {_short(ref)}")
        local = base / ref
        for cand in (local, Path(ref)):
            _refuse_special(where, f"storm = {_short(ref)}", cand)
        spec.storm = _guarded(where, f"storm = {_short(ref)}", load_storm, local if _is_file(local) else ref)
    elif kind == "runoff":
        from capacitysim.io.storms import load_storm

        spec.storm = load_storm("binghamton-1yr-24h")
    if "chunk_size" in data:
        c = data["chunk_size"]
        if isinstance(c, bool) or not isinstance(c, int) or c < 1:
            raise DataFileError(f"{where}: chunk_size must be an integer >= 1; got {_short(c)}")
        if c > MAX_CHUNK_SIZE:
            raise DataFileError(f"{where}: chunk_size = {_short(c)} exceeds {MAX_CHUNK_SIZE:,} (designs computed at once in one block)")
        spec.chunk_size = c
    if "spinup_hr" in data:
        if kind != "swmm":
            raise DataFileError(f"{where}: spinup_hr is only for kind = \"swmm\"")
        spec.spinup_hr = _check_value(where, "spinup_hr", data["spinup_hr"], (float, 0.0, None, True, True, "hr of simulation prepended"))
    if "timeout_s" in data:
        spec.timeout_s = _check_value(where, "timeout_s", data["timeout_s"], (float, 0.0, None, False, True, "s per SWMM run"))
    for k in ("plant",):
        if k in data:
            spec.plant = _check_value(where, k, data[k], (str, None, None, True, True, "outfall id"))
    if "outlets" in data:
        o = data["outlets"]
        if not isinstance(o, list) or not o or not all(isinstance(x, str) and x for x in o):
            raise DataFileError(f"{where}: outlets must be a list of node ids; got {_short(o)}")
        spec.outlets = o
    crit = data.get("criteria", {})
    if not isinstance(crit, dict):
        raise DataFileError(f"{where}: [criteria] must be a table")
    if crit and kind != "swmm":
        raise DataFileError(f"{where} [criteria]: criteria are for swmm sweeps (detention sweeps follow the rule set)")
    Criteria.from_dict(crit, f"{where} [criteria]")  # the one validator of criteria keys and values
    spec.criteria = {k: float(v) for k, v in crit.items()}

    grid = data["grid"]
    w = f"{where} [grid]"
    if not isinstance(grid, dict) or not grid:
        raise DataFileError(f"{w}: give at least one parameter with a list of values")
    allowed = PARAMETERS[kind]
    for key, values in grid.items():
        if key not in allowed:
            raise DataFileError(f"{w}: {key!r} is not a parameter of {kind} sweeps (allowed: {', '.join(allowed)})")
        if not isinstance(values, list) or not values:
            raise DataFileError(f"{w}: {key} must be a non-empty list of values; got {_short(values)}")
        checked = [_check_value(w, key, v, allowed[key]) for v in values]
        if mode == "product":
            dup = next((v for v, n in Counter(checked).items() if n > 1), None)
            if dup is not None:
                raise DataFileError(f"{w}: {key} lists {dup!r} twice (a full factorial grid needs distinct values)")
        spec.grid[key] = checked
    if mode == "zip":
        lengths = {k: len(v) for k, v in spec.grid.items()}
        if len(set(lengths.values())) > 1:
            raise DataFileError(f"{w}: mode = \"zip\" needs lists of one length; got "
                                + ", ".join(f"{k}: {n}" for k, n in lengths.items()))
    check_grid_size(spec, w)
    if kind == "swmm":
        if "connect_node" not in spec.grid and any(k in spec.grid for k in ("connect_gpd", "remediation_fraction", "peaking_factor")):
            raise DataFileError(f"{w}: connect_gpd, peaking_factor and remediation_fraction need connect_node (the node and its basin)")
        _check_nodes(spec, w)
    if kind == "detention":
        _check_site_keys(spec, w)
    return spec


def check_grid_size(spec: SweepSpec, where: str) -> None:
    """Refuse a grid of more than :data:`MAX_SCENARIOS` scenarios (the hard limit, memory of the store).

    Raises
    ------
    capacitysim.errors.DataFileError
        Naming the number of scenarios (a Python integer: ``64 ** 12`` is not 0), the limit and
        the size the results store would have.
    """
    n = spec.n_scenarios
    if n > MAX_SCENARIOS:
        lengths = " x ".join(str(k) for k in spec.shape) if spec.mode == "product" else f"{n} (zip)"
        raise DataFileError(
            f"{where}: {lengths} = {n:,} scenarios exceed the hard limit of {MAX_SCENARIOS:,} (the results store would "
            f"hold {store_size_text(n)}, read back whole into memory; --yes-large does not lift this limit): "
            "sweep fewer values or split the sweep into several files")


def _check_nodes(spec: SweepSpec, w: str) -> None:
    model = _guarded(spec.path, f"model {spec.model}", spec.network_model)  # kept: the run reuses it
    nodes = model.node_ids()
    spec.model_nodes = len(nodes)
    for n in spec.grid.get("connect_node", []):
        if n not in nodes:
            raise DataFileError(f"{w}: connect_node {_short(n)} is not a node of {spec.model.name}")
    for key, val in (("plant", spec.plant),):
        if val is not None and val not in nodes:
            raise DataFileError(f"{spec.path}: {key} {_short(val)} is not a node of {spec.model.name}")
    for o in spec.outlets or []:
        if o not in nodes:
            raise DataFileError(f"{spec.path}: outlet {_short(o)} is not a node of {spec.model.name}")


def _check_site_keys(spec: SweepSpec, w: str) -> None:
    from capacitysim.io.site_files import load_rule_set, load_site

    rules = _guarded(spec.path, f"rules = {_short(spec.rules)}", load_rule_set, spec.rules)
    site = _guarded(spec.path, f"site {spec.site}", load_site, spec.site, rules)
    spec._parsed[spec._site_key()] = (site, rules)  # kept: the run reuses them
    stype = site.system["type"]
    other = set().union(*SYSTEM_GRID_KEYS.values()) - SYSTEM_GRID_KEYS[stype]
    for k in spec.grid:
        if k in other:
            raise DataFileError(f"{w}: {k} is not a dimension of the site's {stype} system "
                                f"(a {stype} sweeps {', '.join(sorted(SYSTEM_GRID_KEYS[stype]))})")
    if "altered_area_sf" in spec.grid and site.kind != "alteration":
        raise DataFileError(f"{w}: altered_area_sf is only for alteration sites; {spec.site.name} is kind = {site.kind!r}")
    scs_keys = {"cn", "storm_depth_in"} & set(spec.grid)
    if scs_keys and site.design.get("hydrograph") != "scs":
        raise DataFileError(f"{w}: {', '.join(sorted(scs_keys))} need a site with [design] hydrograph = \"scs\"")
