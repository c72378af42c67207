"""Measured credits end to end (issue 29): meter and gauge records written as files, read, decomposed, fitted and
turned into a credit whose interval covers the I/I removed that made the records."""

from __future__ import annotations

import json

import pytest

from tests.metered_records import AREA_AC, POST, PRE, TZ
from tests.metered_records import records as _records

from capacitysim.hydrology.rtk_fit import design_storm_ii_gpd
from capacitysim.workflows.metered_credit import metered_credit


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
