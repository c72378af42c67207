"""Measured credits end to end (issue 29): meter and gauge records written as files, read, decomposed, fitted and
turned into a credit whose interval covers the I/I removed that made the records."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from capacitysim.hydrology.rtk_fit import RTKSet, design_storm_ii_gpd, rtk_response_gpd
from capacitysim.workflows.metered_credit import metered_credit

AREA_AC = 120.0
TZ = "America/New_York"
#: The sub-basin's I/I before and after the rehabilitation (the post set removes 60 % of the fast responses).
PRE = RTKSet(R=(0.020, 0.015, 0.010), T=(1.0, 4.0, 12.0), K=(2.0, 3.0, 4.0))
POST = RTKSet(R=(0.008, 0.006, 0.010), T=(1.0, 4.0, 12.0), K=(2.0, 3.0, 4.0))


def _records(tmp_path, name: str, start: str, rtk: RTKSet, seed: int, days: int = 120):
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


@pytest.mark.slow
def test_the_credit_interval_covers_the_ii_removed(tmp_path):
    pre = _records(tmp_path, "pre", "2025-03-01", PRE, seed=1)
    post = _records(tmp_path, "post", "2026-03-01", POST, seed=2)
    truth = design_storm_ii_gpd(PRE, AREA_AC) - design_storm_ii_gpd(POST, AREA_AC)
    r = metered_credit(*pre, *post, area_ac=AREA_AC, tz=TZ, n_boot=40, seed=3, pe_name="A. Engineer",
                       pe_license="012345")
    c = r.credit
    assert c is not None and c.claim == "lower" and c.claimed_gpd == pytest.approx(max(c.lower_gpd, 0.0))
    assert c.lower_gpd <= truth <= c.upper_gpd, (c.lower_gpd, truth, c.upper_gpd)
    assert c.point_gpd == pytest.approx(truth, rel=0.25)
    doc = json.loads(json.dumps(r.to_dict(), allow_nan=False))
    assert doc["kind"] == "metered-credit" and doc["pe"]["license"] == "012345"
    for name in ("pre", "post"):
        period = doc["periods"][name]
        assert len(period["flow_sha256"]) == 64 and period["gwi_gpd"] > 0
        assert len(period["events"]) >= 8 and period["rtk"]["success"]
        assert period["quality"]["flow"]  # the gap is reported, never dropped silently
    assert {p["name"] for p in doc["policies"]} >= {"metered_credit_basis", "metered_credit_claim",
                                                    "dry_day_rain_in", "gwi_min_flow_ratio"}


def test_a_record_of_one_storm_gives_no_credit_and_says_why(tmp_path):
    pre = _records(tmp_path, "pre", "2025-03-01", PRE, seed=1, days=14)
    post = _records(tmp_path, "post", "2026-03-01", POST, seed=2, days=14)
    r = metered_credit(*pre, *post, area_ac=AREA_AC, tz=TZ, n_boot=10)
    assert r.credit is None or not all(p.enough[0] for p in r.periods.values())
    assert any("period" in w for w in r.warnings) and any("PE" in w for w in r.warnings)
