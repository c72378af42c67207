"""Meter and gauge records made from known RTK sets (issue 29): the fixtures of the measured-credit tests."""

from __future__ import annotations

import numpy as np
import pandas as pd

from capacitysim.hydrology.rtk_fit import RTKSet, rtk_response_gpd

AREA_AC = 120.0
TZ = "America/New_York"
#: The sub-basin's I/I before and after the rehabilitation (the post set removes 60 % of the fast responses).
PRE = RTKSet(R=(0.020, 0.015, 0.010), T=(1.0, 4.0, 12.0), K=(2.0, 3.0, 4.0))
POST = RTKSet(R=(0.008, 0.006, 0.010), T=(1.0, 4.0, 12.0), K=(2.0, 3.0, 4.0))


def records(tmp_path, name: str, start: str, rtk: RTKSet, seed: int, days: int = 120):
    """A 15-min flow record (gpd, UTC timestamps) and rain record (in) of ``days`` days: a weekday/weekend diurnal
    base flow, 15,000 gpd of GWI, the RDII of ``rtk`` under storms every 6 to 11 days, 2 % noise."""
    rng = np.random.default_rng(seed)
    t = pd.date_range(start, periods=days * 96, freq="15min", tz="UTC")
    local = t.tz_convert(TZ)
    hour = np.asarray(local.hour + local.minute / 60, float)
    shape = 1 + 0.35 * np.sin((hour - 9) / 24 * 2 * np.pi) + 0.15 * np.sin((hour - 7) / 12 * 2 * np.pi)
    base = np.where(np.asarray(local.day_of_week) >= 5, 36_000.0, 40_000.0) * shape
    rain = np.zeros(t.size)
    day = 5.0
    while day < days - 3:
        i = int(day * 96) + int(rng.integers(0, 96))
        depth, hours = rng.uniform(0.5, 2.2), rng.uniform(3, 10)
        n = int(hours * 4)
        rain[i:i + n] += depth / n
        day += rng.uniform(6, 11)
    t_hr = np.arange(t.size) * 0.25
    rdii = rtk_response_gpd(rtk, AREA_AC, t_hr - 0.25, rain, t_hr)  # a depth is over the step ending at its time
    flow = (base + 15_000.0 + rdii) * (1 + 0.02 * rng.standard_normal(t.size))
    flow[int(40 * 96):int(40 * 96) + 30] = np.nan  # a gap
    stamps = t.strftime("%Y-%m-%dT%H:%M:%SZ")
    fp, rp = tmp_path / f"{name}-flow.csv", tmp_path / f"{name}-rain.csv"
    pd.DataFrame({"timestamp": stamps, "flow_gpd": flow}).dropna().to_csv(fp, index=False)
    pd.DataFrame({"timestamp": stamps, "rain_in": rain}).to_csv(rp, index=False)
    return fp, rp
