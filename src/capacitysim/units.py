"""Conversion constants: the one home for every unit factor in capacitysim.

Names read ``<FROM>_PER_<TO>`` or ``<TO>_PER_<FROM>`` as written; multiply a value in the unit
after ``PER`` to get the unit before it. Exact definitions are marked so; others cite their source.

References
----------
.. [1] NIST Special Publication 811 (2008), Guide for the Use of the International System of
   Units, Appendix B (U.S. survey and customary units).
.. [2] USDA NRCS (1986), Urban Hydrology for Small Watersheds, TR-55, 2nd ed., Chapter 4 and
   Appendix F (qp = qu Am Q Fp with qu in csm/in).
.. [3] Rossman, L.A. (2022). Storm Water Management Model User's Manual Version 5.2,
   EPA/600/R-22/030, Appendix D (``[OPTIONS]`` FLOW_UNITS: CFS, GPM, MGD, CMS, LPS, MLD) and
   Appendix A.1 (Units of Measurement: with CMS, LPS or MLD every other quantity of the model is
   SI, lengths in m and areas in ha).
"""

# --- time (exact) -------------------------------------------------------------------------
SECONDS_PER_MINUTE = 60.0
MINUTES_PER_HOUR = 60.0
SECONDS_PER_HOUR = 3600.0
HOURS_PER_DAY = 24.0
MINUTES_PER_DAY = 1440.0
SECONDS_PER_DAY = 86400.0

# --- length and area (exact, U.S. customary) ----------------------------------------------
INCHES_PER_FOOT = 12.0
FEET_PER_MILE = 5280.0
SQFT_PER_ACRE = 43560.0
ACRES_PER_SQMI = 640.0
SQFT_PER_SQMI = SQFT_PER_ACRE * ACRES_PER_SQMI  # 27,878,400 ft^2

# --- volume ------------------------------------------------------------------------------
# 1 U.S. gallon = 231 in^3 exactly, so 1 ft^3 = 1728/231 gal = 7.480519... gal [1].
GALLONS_PER_CUBIC_FOOT = 1728.0 / 231.0
CUBIC_FEET_PER_ACRE_INCH = SQFT_PER_ACRE / INCHES_PER_FOOT  # 3,630 ft^3
GALLONS_PER_MILLION_GALLONS = 1.0e6

# --- flow ----------------------------------------------------------------------------------
GPD_PER_CFS = GALLONS_PER_CUBIC_FOOT * SECONDS_PER_DAY  # 646,316.9 gpd per cfs
GPM_PER_CFS = GALLONS_PER_CUBIC_FOOT * SECONDS_PER_MINUTE  # 448.83 gpm per cfs
GPD_PER_GPM = MINUTES_PER_DAY  # 1 gpm for 24 h = 1,440 gpd
GPD_PER_MGD = GALLONS_PER_MILLION_GALLONS
CFS_PER_MGD = GPD_PER_MGD / GPD_PER_CFS  # 1.547229 cfs per MGD

# cfs of 1 inch of runoff per hour from 1 square mile, the unit behind TR-55's csm/in [2]:
# 1 in over 1 mi^2 = 27,878,400 / 12 ft^3 = 2,323,200 ft^3.
CUBIC_FEET_PER_SQMI_INCH = SQFT_PER_SQMI / INCHES_PER_FOOT
# The rational method's Q = C i A: 1 acre-inch/hour = 1.0083 cfs (taken as 1.0 by convention).
CFS_PER_ACRE_INCH_PER_HOUR = CUBIC_FEET_PER_ACRE_INCH / SECONDS_PER_HOUR

# --- gravity ------------------------------------------------------------------------------
GRAVITY_FT_S2 = 32.174  # standard gravity 9.80665 m/s^2 in ft/s^2 [1]

# --- SI bridge (exact) ---------------------------------------------------------------------
METERS_PER_FOOT = 0.3048
MILLIMETERS_PER_INCH = 25.4
LITERS_PER_CUBIC_METER = 1000.0  # the litre is 1 dm^3 (SI definition)
SQUARE_METERS_PER_HECTARE = 1.0e4  # the hectare is 100 m x 100 m
CUBIC_FEET_PER_CUBIC_METER = 1.0 / METERS_PER_FOOT**3  # 35.3147 ft^3 per m^3
ACRES_PER_HECTARE = SQUARE_METERS_PER_HECTARE / (METERS_PER_FOOT**2 * SQFT_PER_ACRE)  # 2.4711 ac per ha

# --- SWMM flow units ------------------------------------------------------------------------
#: The ``FLOW_UNITS`` of a SWMM model -> the factor that multiplies a flow in that unit to give cfs [3]_.
#: The unit names are SWMM's; the factors are the exact conversions above [1]_ (the engine's own
#: rounded factors, e.g. 0.02832 m^3/s per cfs, differ from them by up to 0.012 %).
#: CFS ft^3/s; GPM U.S. gal/min; MGD 10^6 U.S. gal/day; CMS m^3/s; LPS L/s; MLD 10^6 L/day.
CFS_PER_FLOW_UNIT = {
    "CFS": 1.0,
    "GPM": 1.0 / GPM_PER_CFS,
    "MGD": CFS_PER_MGD,
    "CMS": CUBIC_FEET_PER_CUBIC_METER,
    "LPS": CUBIC_FEET_PER_CUBIC_METER / LITERS_PER_CUBIC_METER,
    "MLD": CUBIC_FEET_PER_CUBIC_METER * GALLONS_PER_MILLION_GALLONS / LITERS_PER_CUBIC_METER / SECONDS_PER_DAY,
}
#: The flow units of a model in U.S. customary units (lengths in ft, areas in ac) [3]_; the others
#: (CMS, LPS, MLD) make the whole model SI (lengths in m, areas in ha).
US_FLOW_UNITS = ("CFS", "GPM", "MGD")
