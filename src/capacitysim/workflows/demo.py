"""The demo: the Binghamton 1-yr 24-h storm on a sample sewershed, by every method of the core.

The sample sewershed is made up for the demo (a 40-acre residential area in soil group C with a
sheet, shallow and channel flow path) and is not a real place.
"""

from __future__ import annotations

import numpy as np

from capacitysim import hydrology
from capacitysim.io.storms import load_storm
from capacitysim.units import (
    ACRES_PER_SQMI,
    CUBIC_FEET_PER_SQMI_INCH,
    GALLONS_PER_CUBIC_FOOT,
    MINUTES_PER_HOUR,
    SECONDS_PER_HOUR,
)

SAMPLE = {
    "name": "Sample sewershed (made up): 40 ac, 1/4-acre residential on soil C",
    "area_ac": 40.0,
    "cover": ["residential_1_4_acre", "open_space_good", "impervious"],
    "soil": "C",
    "area_split_ac": [30.0, 6.0, 4.0],
    "sheet": dict(n=0.24, length_ft=100.0, p2_in=2.6, slope=0.02),
    "shallow": dict(length_ft=800.0, slope=0.015, paved=True),
    "channel": dict(length_ft=2400.0, n=0.013, area_ft2=3.14, wetted_perimeter_ft=6.28, slope=0.008),
}


def run_demo(storm_ref: str = "binghamton-1yr-24h") -> list[str]:
    """Compute the demo and return the lines to print."""
    spec = load_storm(storm_ref)
    rain = spec.hyetograph()
    cns = hydrology.curve_number(SAMPLE["cover"], SAMPLE["soil"], table="BJC 174-19.3")
    cn = hydrology.composite_cn(cns, SAMPLE["area_split_ac"])
    tc = hydrology.time_of_concentration(
        hydrology.sheet_flow_time(**SAMPLE["sheet"]),
        hydrology.shallow_flow_time(**SAMPLE["shallow"]),
        hydrology.channel_flow_time(**SAMPLE["channel"]),
    )
    am = SAMPLE["area_ac"] / ACRES_PER_SQMI
    q_in = hydrology.runoff_depth(spec.depth_in, cn)
    qp_graphical = hydrology.graphical_peak_discharge(am, cn, spec.depth_in, tc, spec.distribution)
    hyd = hydrology.unit_hydrograph_runoff(am, cn, tc, rain)
    dt_s = hyd.attrs["dt_hr"] * SECONDS_PER_HOUR
    vol_cf = float(hyd.sum()) * dt_s
    vol_expected_cf = q_in * am * CUBIC_FEET_PER_SQMI_INCH
    i = int(np.argmax(hyd.values))
    lines = [
        f"capacitysim demo: {spec.name} storm ({spec.depth_in:g} in, NRCS Type {spec.distribution}, {spec.duration_hr:g} h)",
        f"  depth source: {spec.source}",
        f"  peak 6-min intensity: {float(rain.max()) / (spec.dt_min / MINUTES_PER_HOUR):.2f} in/h at {float(rain['time_hr'][int(np.argmax(rain.values))]):.1f} h",
        "",
        SAMPLE["name"],
        f"  curve numbers (Table 174-19.3): {', '.join(f'{c}={v:g}' for c, v in zip(SAMPLE['cover'], np.atleast_1d(cns)))}",
        f"  composite CN: {cn:.1f}; Tc: {tc:.2f} h (sheet + shallow + channel, TR-55 ch. 3)",
        f"  runoff depth Q: {q_in:.3f} in = {vol_expected_cf * GALLONS_PER_CUBIC_FOOT:,.0f} gal over {SAMPLE['area_ac']:g} ac",
        f"  peak, TR-55 graphical method (ch. 4): {qp_graphical:.2f} cfs",
        f"  peak, SCS unit hydrograph (NEH 630 ch. 16): {float(hyd[i]):.2f} cfs at {float(hyd['time_hr'][i]):.1f} h",
        f"  hydrograph volume: {vol_cf:,.0f} ft3 (runoff depth x area: {vol_expected_cf:,.0f} ft3; "
        f"difference {100 * (vol_cf / vol_expected_cf - 1):+.4f} %)",
    ]
    return lines
