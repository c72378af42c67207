"""Reference cases of the rules: NYC release rate (15 RCNY 31-03), SPDES look-back and phosphorus
(15 RCNY 18-37(b), 18-36(a)(8)), and the BJC I/I offset program's quantification tables."""

from __future__ import annotations

import numpy as np

from capacitysim.benchmarking import reference_case
from capacitysim.rules import ii_offset, nyc_stormwater, spdes


@reference_case(
    "nyc.release_rate.boundaries",
    expected={"q_0.20": 0.20, "q_0.25": 0.25, "q_1.00": 0.25, "q_2.50": 0.25, "q_3.00": 0.30, "alteration_half": 0.15},
    tolerance={"q_0.20": 1e-12, "q_0.25": 1e-12, "q_1.00": 1e-12, "q_2.50": 1e-12, "q_3.00": 1e-12, "alteration_half": 1e-12},
    source="15 RCNY 31-03(a)(1): max(0.25 cfs, 10 % of Allowable Flow), the Allowable Flow itself below 0.25 cfs; 31-03(a)(2) proration",
)
def _nyc():
    q = nyc_stormwater.release_rate_cfs(np.array([0.20, 0.25, 1.0, 2.5, 3.0]))
    return {
        "q_0.20": q[0], "q_0.25": q[1], "q_1.00": q[2], "q_2.50": q[3], "q_3.00": q[4],
        "alteration_half": nyc_stormwater.alteration_release_rate_cfs(3.0, 5_000.0, 10_000.0),
    }


@reference_case(
    "spdes.phosphorus.boundaries",
    expected={"at_50000": 1.0, "above_50000": 0.5, "below_500000": 0.5, "at_500000": 0.2},
    tolerance={"at_50000": 0.0, "above_50000": 0.0, "below_500000": 0.0, "at_500000": 0.0},
    source="15 RCNY 18-36(a)(8): 1 mg/l to 50,000 gpd; 0.5 mg/l above 50,000 and below 500,000; 0.2 mg/l at 500,000 or more",
)
def _phosphorus():
    f = spdes.phosphorus_limit_mg_l
    return {
        "at_50000": f(50_000.0), "above_50000": f(np.nextafter(50_000.0, np.inf)),
        "below_500000": f(np.nextafter(500_000.0, 0.0)), "at_500000": f(500_000.0),
    }


@reference_case(
    "spdes.lookback.window_edges",
    expected={"violation_12_months_before_counts": 0.0, "violation_11_months_before_counts": 1.0, "headroom_gpd": 10_000.0},
    tolerance={"violation_12_months_before_counts": 0.0, "violation_11_months_before_counts": 0.0, "headroom_gpd": 1e-6},
    source="15 RCNY 18-37(b) 'prior twelve months': a month ending exactly 12 months before the as-of date is outside, the next is inside",
)
def _lookback():
    ends = np.arange(np.datetime64("2023-01"), np.datetime64("2025-01")) + 1
    ends = ends.astype("datetime64[D]") - 1  # month ends, Jan 2023 .. Dec 2024
    base = np.full(ends.size, 0.40)
    as_of = np.datetime64("2024-12-31")
    early = base.copy()
    early[ends == np.datetime64("2023-12-31")] = 0.60  # exactly 12 months before: outside
    late = base.copy()
    late[ends == np.datetime64("2024-01-31")] = 0.60  # 11 months before: inside
    v_early = spdes.check_connection(spdes.monthly_periods_from_values(ends, early), 0.5, as_of)
    v_late = spdes.check_connection(spdes.monthly_periods_from_values(ends, late), 0.5, as_of, added_gpd=0.0)
    v_added = spdes.check_connection(spdes.monthly_periods_from_values(ends, base), 0.5, as_of, added_gpd=90_000.0)
    return {
        "violation_12_months_before_counts": float(v_early.violation_in_prior_12_months),
        "violation_11_months_before_counts": float(v_late.violation_in_prior_12_months),
        "headroom_gpd": v_added.headroom_gpd,
    }


@reference_case(
    "bjc.quantification.tables",
    expected={"sump_pump_gpd": 7_200.0, "paved_heavy_gpd": 1_584.0, "unpaved_minor_gpd": 1_584.0, "roof_1ac_gpd": 50_873.7},
    tolerance={"sump_pump_gpd": 1e-9, "paved_heavy_gpd": 1e-9, "unpaved_minor_gpd": 1e-9, "roof_1ac_gpd": 1.0},
    source="BJC Tables 174-19.1 (ASCE MOP 92 gpm x 1,440), 174-19.2 (5 gpm sump pump; TR-55 2.1 in Type II) and 174-19.3 (CN 98)",
)
def _bjc():
    return {
        "sump_pump_gpd": ii_offset.sump_pump_gpd(1),
        "paved_heavy_gpd": ii_offset.manhole_joint_leak_gpd("paved", "heavy"),
        "unpaved_minor_gpd": ii_offset.manhole_joint_leak_gpd("unpaved", "minor"),
        # 1 ac of roof (CN 98): Q = 1.8735 in x 3,630 ft3/ac-in x 7.48052 gal/ft3 = 50,873 gal
        "roof_1ac_gpd": ii_offset.tr55_inflow_gpd(1.0, 98),
    }
