"""Hydraulics: orifice and weir flow, stage-storage tables, level-pool routing, orifice sizing (pure numpy/numba).

Every function broadcasts over designs; routing runs many designs in one call.
"""

from capacitysim.hydraulics.orifice import (
    DEFAULT_DISCHARGE_COEFFICIENT,
    circular_area_sf,
    orifice_diameter_for_flow_in,
    orifice_flow_cfs,
)
from capacitysim.hydraulics.sizing import SizingResult, outflow_table, route_max_rows, size_orifice, size_orifice_rows
from capacitysim.hydraulics.routing import RoutingPeaks, RoutingResult, route, route_peaks
from capacitysim.hydraulics.storage import (
    StageStorage,
    blue_roof_table,
    pond_table,
    prism_table,
    rowwise_interp,
    stack_tables,
    system_table,
    volume_at_depth_cf,
    volume_from_area_cf,
)
from capacitysim.hydraulics.weir import rectangular_weir_flow_cfs, v_notch_weir_flow_cfs

__all__ = [
    "SizingResult",
    "outflow_table",
    "route_max_rows",
    "size_orifice",
    "size_orifice_rows",
    "system_table",
    "DEFAULT_DISCHARGE_COEFFICIENT",
    "RoutingPeaks",
    "RoutingResult",
    "StageStorage",
    "blue_roof_table",
    "circular_area_sf",
    "orifice_diameter_for_flow_in",
    "orifice_flow_cfs",
    "pond_table",
    "prism_table",
    "rectangular_weir_flow_cfs",
    "route",
    "route_peaks",
    "rowwise_interp",
    "stack_tables",
    "v_notch_weir_flow_cfs",
    "volume_at_depth_cf",
    "volume_from_area_cf",
]
