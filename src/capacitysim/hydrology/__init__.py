"""Hydrology: the vectorized TR-55 / SCS core (pure numpy and xarray; no files, SWMM or CLI).

Every function broadcasts: scalars in give scalars out, arrays give arrays.
"""

import importlib

#: public name -> the module that defines it (imported on first use, PEP 562: the unit hydrograph's
#: numba kernel and scipy cost about 1.5 s to import, which a storm file or a capacity run never needs)
_WHERE = {
    "graphical_peak_discharge": "peak", "pond_swamp_adjustment": "peak", "unit_peak_discharge_csm_in": "peak",
    "cumulative_fraction": "rainfall", "design_storm": "rainfall",
    "composite_cn": "runoff", "cover_types": "runoff", "curve_number": "runoff", "impervious_cn": "runoff",
    "initial_abstraction_in": "runoff", "potential_retention_in": "runoff", "runoff_depth": "runoff",
    "detention_storage_ratio": "storage",
    "channel_flow_time": "travel_time", "sheet_flow_time": "travel_time", "shallow_flow_time": "travel_time",
    "time_of_concentration": "travel_time",
    "unit_hydrograph_mass_fraction": "unit_hydrograph", "unit_hydrograph_runoff": "unit_hydrograph",
}


def __getattr__(name):
    if name in _WHERE:
        value = getattr(importlib.import_module(f"capacitysim.hydrology.{_WHERE[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'capacitysim.hydrology' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_WHERE))


__all__ = [
    "channel_flow_time",
    "composite_cn",
    "cover_types",
    "cumulative_fraction",
    "curve_number",
    "design_storm",
    "detention_storage_ratio",
    "graphical_peak_discharge",
    "impervious_cn",
    "initial_abstraction_in",
    "pond_swamp_adjustment",
    "potential_retention_in",
    "runoff_depth",
    "sheet_flow_time",
    "shallow_flow_time",
    "time_of_concentration",
    "unit_hydrograph_mass_fraction",
    "unit_hydrograph_runoff",
    "unit_peak_discharge_csm_in",
]
