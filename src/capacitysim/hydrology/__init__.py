"""Hydrology: the vectorized TR-55 / SCS core (pure numpy and xarray; no files, SWMM or CLI).

Every function broadcasts: scalars in give scalars out, arrays give arrays.
"""

from capacitysim.hydrology.peak import graphical_peak_discharge, pond_swamp_adjustment, unit_peak_discharge_csm_in
from capacitysim.hydrology.rainfall import cumulative_fraction, design_storm
from capacitysim.hydrology.runoff import (
    composite_cn,
    cover_types,
    curve_number,
    impervious_cn,
    initial_abstraction_in,
    potential_retention_in,
    runoff_depth,
)
from capacitysim.hydrology.storage import detention_storage_ratio
from capacitysim.hydrology.travel_time import (
    channel_flow_time,
    sheet_flow_time,
    shallow_flow_time,
    time_of_concentration,
)
from capacitysim.hydrology.unit_hydrograph import unit_hydrograph_mass_fraction, unit_hydrograph_runoff

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
