"""Units and names of exported quantities: the name suffix of a quantity gives its unit.

capacitysim names every quantity with its unit (``peak_flow_cfs``, ``flooding_volume_cf``,
``balance_gpd``; design.md, Conventions). This module reads that convention back, once, for every
face that shows a quantity to a person or another program:

* :func:`split_key` -> the quantity without its unit, the unit and the run qualifier
  (``peak_flow_cfs_before`` -> ``("peak_flow", "cfs", "before")``);
* :func:`column_name` -> the header of a CSV column or a GeoJSON property
  (``peak_flow_before [cfs]``);
* :func:`human_label` -> the label of a report (``peak flow before [cfs]``, ``balance [gpd]``);
* :func:`cf_attrs` -> the CF attributes of a NetCDF variable (``units`` in UDUNITS-2 spelling,
  ``long_name``).

References
----------
.. [1] Eaton, B. et al. (2020). NetCDF Climate and Forecast (CF) Metadata Conventions, version 1.8,
   section 3.1 (``units``: a string the UDUNITS-2 package recognises; ``"1"`` for a dimensionless
   quantity) and section 3.2 (``long_name``).
.. [2] Unidata. UDUNITS-2 units database (``gallon`` is the U.S. liquid gallon, ``acre`` the U.S.
   survey acre, ``h`` the hour, ``percent`` 0.01).
"""

from __future__ import annotations

#: Unit suffix of a name -> (the unit a person reads, the UDUNITS-2 unit of CF ``units`` [1]_ [2]_).
#: Two-word suffixes (``in_hr``) are matched before one-word ones.
UNIT_SUFFIXES: dict[str, tuple[str, str]] = {
    "in_hr": ("in/h", "in h-1"),
    "mg_l": ("mg/l", "mg l-1"),
    "cfs": ("cfs", "ft3 s-1"),
    "cf": ("ft3", "ft3"),
    "ft": ("ft", "ft"),
    "in": ("in", "in"),
    "hr": ("h", "h"),
    "min": ("min", "min"),
    "gpd": ("gpd", "gallon day-1"),
    "gpm": ("gpm", "gallon min-1"),
    "mgd": ("MGD", "1e6 gallon day-1"),
    "ac": ("ac", "acre"),
    "mi2": ("mi2", "mile2"),
    "sqft": ("ft2", "ft2"),
    "sf": ("ft2", "ft2"),
    "ft2": ("ft2", "ft2"),
    "pct": ("%", "percent"),
}

#: Dimensionless quantities (CF ``units = "1"``) and how a person writes them.
DIMENSIONLESS: dict[str, str] = {
    "max_q_over_qfull": "max q/Qfull",
    "max_d_over_d": "max d/D",
    "q_over_qfull": "q/Qfull",
    "d_over_d": "d/D",
    "weighted_c": "weighted C",
}

#: Words of names a person writes otherwise (abbreviations in capitals, symbols).
_WORDS = {"hgl": "HGL", "cso": "CSO", "rdii": "RDII", "dwf": "DWF", "swmm": "SWMM", "spdes": "SPDES", "sha256": "SHA-256",
          "bbl": "BBL", "ii": "I/I", "tc": "Tc", "cn": "CN", "idf": "IDF", "dmr": "DMR", "co": "CO", "wwtp": "WWTP", "tol": "tolerance", "c": "C"}

#: Quantities whose name without its unit says too little: (name, unit suffix) -> the name to show.
_DURATIONS = {("surcharge", "hr"): "surcharge_time", ("flooding", "hr"): "flooding_time"}

#: Run qualifiers a name may end with (``_before``, ``_after``, ``_change``: after minus before).
QUALIFIERS = ("before", "after", "change")

#: Long names (CF ``long_name`` [1]_) of the result variables of a SWMM run
#: (:func:`capacitysim.network.engine.read_results`); other variables get their human label.
LONG_NAMES: dict[str, str] = {
    "node_type": "SWMM node type",
    "invert_elev_ft": "node invert elevation",
    "rim_depth_ft": "depth from invert to rim (full depth of the node)",
    "crown_depth_ft": "depth from invert to the highest crown of the conduits joining the node",
    "max_depth_ft": "maximum water depth above the invert",
    "max_hgl_ft": "maximum hydraulic grade line elevation",
    "freeboard_ft": "rim depth minus maximum water depth",
    "max_surcharge_ft": "maximum height of water above the crown",
    "surcharge_hr": "time surcharged",
    "flooding_volume_cf": "volume flooded",
    "flooding_hr": "time flooded",
    "max_inflow_cfs": "maximum total inflow",
    "surcharge_limit_ft": "surcharge depth allowed above the rim (SWMM Ysur)",
    "lateral_volume_cf": "total lateral inflow volume",
    "link_type": "SWMM link type",
    "from_node": "upstream (inlet) node",
    "to_node": "downstream (outlet) node",
    "peak_flow_cfs": "maximum absolute flow",
    "full_flow_cfs": "full-flow capacity (Manning, engine)",
    "max_q_over_qfull": "maximum flow over full-flow capacity",
    "full_depth_ft": "full depth of the conduit",
    "link_max_depth_ft": "maximum flow depth in the link",
    "max_d_over_d": "maximum flow depth over full depth",
    "link_shape": "cross-section shape",
    "pump_off_curve_pct": "share of time the pump ran off its curve",
    "pump_max_flow_cfs": "maximum pump flow",
    "volume_cf": "total outfall inflow volume",
    "inflow_cfs": "inflow to the detention system",
    "sewer_cfs": "release to the sewer",
    "stage_ft": "water depth above the bottom of the system",
    "storage_cf": "volume stored",
    "losses_cfs": "infiltration and recycling outflow",
    "top_ft": "top of the system above its bottom",
    "max_connection_gpd": "largest average connection that passes",
    "passing_gpd": "largest connection run that passed",
    "failing_gpd": "smallest connection run that failed",
    "x": "map x coordinate ([COORDINATES])",
    "y": "map y coordinate ([COORDINATES])",
}


def split_key(key: str) -> tuple[str, str | None, str | None]:
    """A name -> (quantity without unit, unit suffix or None, run qualifier or None).

    ``peak_flow_cfs_before`` -> ``("peak_flow", "cfs", "before")``; ``max_q_over_qfull_after`` ->
    ``("max_q_over_qfull", None, "after")``; ``balance_gpd`` -> ``("balance", "gpd", None)``.
    """
    base, qual = key, None
    for q in QUALIFIERS:
        if key.endswith("_" + q):
            base, qual = key[: -len(q) - 1], q
            break
    for suffix in sorted(UNIT_SUFFIXES, key=len, reverse=True):
        if base == suffix:
            return "", suffix, qual
        if base.endswith("_" + suffix):
            stem = base[: -len(suffix) - 1]
            return _DURATIONS.get((stem, suffix), stem), suffix, qual
    return base, None, qual


def unit_of(key: str) -> str | None:
    """The unit a person reads of a name (``"cfs"``, ``"ft3"``, ``"-"`` when dimensionless), None when unknown."""
    base, suffix, _ = split_key(key)
    if suffix is not None:
        return UNIT_SUFFIXES[suffix][0]
    return "-" if base in DIMENSIONLESS else None


def column_name(key: str) -> str:
    """The header of an exported column: the name with its unit moved into brackets.

    ``peak_flow_cfs_before`` -> ``peak_flow_before [cfs]``; ``max_q_over_qfull_after`` ->
    ``max_q_over_qfull_after [-]``; a name without a unit is kept (``id``, ``node_type``).
    """
    base, suffix, qual = split_key(key)
    if suffix is None and base not in DIMENSIONLESS:
        return key
    unit = UNIT_SUFFIXES[suffix][0] if suffix else "-"
    name = "_".join(p for p in (base or "value", qual) if p)
    return f"{name} [{unit}]"


def _words(base: str) -> str:
    if base in DIMENSIONLESS:
        return DIMENSIONLESS[base]
    for k in ("q_over_qfull", "d_over_d"):  # symbols inside a longer name (d_over_d_tol: d/D tolerance)
        base = base.replace(k, DIMENSIONLESS[k])
    return " ".join(_WORDS.get(w, w) for w in base.split("_") if w)


def human_label(key: str) -> str:
    """The label of a name in a report: words, the qualifier, the unit in brackets.

    ``balance_gpd`` -> ``balance [gpd]``; ``peak_flow_cfs_after`` -> ``peak flow after [cfs]``;
    ``max_hgl_ft`` -> ``max HGL [ft]``; ``max_d_over_d_before`` -> ``max d/D before``.
    """
    base, suffix, qual = split_key(key)
    words = _words(base) if base else "flow" if suffix in ("gpd", "gpm", "mgd", "cfs") else "value"
    text = " ".join(p for p in (words, qual) if p)
    return f"{text} [{UNIT_SUFFIXES[suffix][0]}]" if suffix else text


def cf_attrs(key: str) -> dict[str, str]:
    """CF attributes of a variable [1]_: ``units`` (UDUNITS-2, ``"1"`` when dimensionless) and ``long_name``.

    A name whose unit is unknown gets a ``long_name`` only (CF: ``units`` may be omitted for
    quantities without units, such as names and types).
    """
    base, suffix, qual = split_key(key)
    stem = key if qual is None else key[: -len(qual) - 1]
    long_name = LONG_NAMES.get(stem) or human_label(stem).split(" [")[0]
    if qual:
        long_name = f"{long_name}, {qual}"
    out = {"long_name": long_name}
    if suffix is not None:
        out["units"] = UNIT_SUFFIXES[suffix][1]
    elif base in DIMENSIONLESS:
        out["units"] = "1"
    return out
