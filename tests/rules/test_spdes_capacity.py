"""Treatment capacity (issue 14 items 9 and 10): § 18-37(b) for watershed plants only, the permitted-flow headroom
for others, the § 18-37(c)(1)-(3), (e), (j)(2) conditions against the regulation text, the named policies, the
as-of date (today by default) and the 45-day record age."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from capacitysim.errors import InputError, RefusedError
from capacitysim.io.plant_flows import FlowRecord
from capacitysim.rules import spdes
from capacitysim.workflows import spdes as wf


def monthly(values: dict, start="2024-01-01", end="2024-12-31", base=0.40):
    """Daily flows at ``base`` MGD, whole months at other flows: each month's average is its value by hand."""
    days = pd.date_range(start, end, freq="D")
    q = np.array([values.get(d.strftime("%Y-%m"), base) for d in days])
    return days.values.astype("datetime64[D]"), q


def verdict(values: dict, limit=0.5, added=0.0, as_of="2024-12-31"):
    d, q = monthly(values)
    return spdes.check_connection(spdes.period_averages(d, q, "month"), limit, as_of, added)


# --- treatment capacity shown ------------------------------------------------------------------------


def test_watershed_plant_capacity_is_not_prohibited():
    """§ 18-37(b): June 2024 at 0.52 MGD > 0.50 MGD is a violation in the prior twelve months: prohibited,
    so no treatment capacity for a watershed plant; with June at 0.50 MGD exactly (not a violation) and no added flow,
    not prohibited."""
    v = verdict({"2024-06": 0.52})
    assert v.connection_prohibited and not spdes.treatment_capacity_shown(v, True)
    v = verdict({"2024-06": 0.50})
    assert not v.connection_prohibited and spdes.treatment_capacity_shown(v, True)


@pytest.mark.parametrize("added, headroom, shown", [(0.0, 40_000.0, True), (39_999.0, 1.0, True), (40_000.0, 0.0, True),
                                                    (40_001.0, -1.0, False)])
def test_non_watershed_capacity_is_headroom_after_the_added_flow(added, headroom, shown):
    """Permit limit 0.50 MGD, highest monthly average in the prior twelve months 0.46 MGD (July 2024):
    headroom = (0.50 - 0.46) x 1,000,000 - added = 40,000 - added [gpd]; shown when >= 0."""
    v = verdict({"2024-07": 0.46}, added=added)
    assert v.headroom_gpd == pytest.approx(headroom, abs=1e-6)
    assert spdes.treatment_capacity_shown(v, False) is shown


def test_non_watershed_record_over_its_limit_shows_no_capacity():
    """July at 0.52 MGD: headroom before any added flow = -20,000 gpd."""
    v = verdict({"2024-07": 0.52})
    assert v.headroom_gpd == pytest.approx(-20_000.0, abs=1e-6)
    assert not spdes.treatment_capacity_shown(v, False)


def test_watershed_must_be_a_boolean():
    with pytest.raises(InputError, match="watershed must be true or false"):
        spdes.treatment_capacity_shown(verdict({}), "yes")


# --- conditions and policies ---------------------------------------------------------------------------


def test_conditions_cite_c1_c2_c3_e_j2():
    cites = [c["citation"] for c in spdes.CONDITIONS]
    assert cites == ["15 RCNY § 18-37(c)(1)", "15 RCNY § 18-37(c)(2)(i)-(ii)", "15 RCNY § 18-37(c)(3)(i)-(ii)",
                     "15 RCNY § 18-37(e)", "15 RCNY § 18-37(j)(2)"]
    assert all(set(c) == {"text", "citation", "applies_when"} and c["text"] for c in spdes.CONDITIONS)


@pytest.mark.parametrize("phrase", [
    "shall notify the Department 48 hours prior to the installation",                      # (c)(1), (c)(2)(ii)
    "a written permit from the superintendent of the sewer system authorizing such connection",  # (c)(2)(i)
    "will not require a modification of the treatment facility's SPDES permit",            # (c)(3)(i)
    "unless construction is completed within five (5) years of the date of issuance",      # (e)
    "Letter of flow acceptance from the owner of the receiving wastewater treatment plant, when available",  # (j)(2)
    "and which discharges within the watershed has had a SPDES flow parameter violation",   # (b): watershed only
])
def test_conditions_rest_on_the_regulation_text(shared_dir, phrase):
    text = (shared_dir / "regulations" / "nyc-dep-watershed-rules-15rcny-ch18.txt").read_text(encoding="utf-8")
    assert phrase in text


def test_policies_are_named_program_interpretations():
    for name in (spdes.POLICY_RECORD_MAX_AGE, spdes.POLICY_AS_OF, spdes.POLICY_PERMITTED_FLOW_HEADROOM,
                 spdes.POLICY_FLOW_VIOLATION):
        p = spdes.policy(name)
        assert p["name"] == name and p["status"] == "program interpretation — confirm with DEP" and p["text"]
    assert spdes.RECORD_MAX_AGE_DAYS == 45 and spdes.POLICY_RECORD_MAX_AGE == "record_max_age_days"
    with pytest.raises(InputError, match="policy must be one of"):
        spdes.policy("nonsense")


@pytest.mark.parametrize("as_of, age, stale", [("2025-02-14", 45, False), ("2025-02-15", 46, True),
                                               ("2024-12-31", 0, False), ("2024-12-01", -30, False)])
def test_record_age_boundary(as_of, age, stale):
    """Record ending 2024-12-31: 2025-02-14 is 31 (January) + 14 = 45 days later: not stale; a day later, 46: stale."""
    assert spdes.record_age_days("2024-12-31", as_of) == age
    assert spdes.record_is_stale("2024-12-31", as_of) is stale


# --- as-of date (workflow) -------------------------------------------------------------------------------


def test_as_of_defaults_to_today():
    a, basis = wf.resolve_as_of()
    assert a == np.datetime64(dt.date.today(), "D") and basis == "today"
    assert wf.resolve_as_of(application_date="2025-03-01") == (np.datetime64("2025-03-01"), "application date")
    assert wf.resolve_as_of(as_of="2025-03-02") == (np.datetime64("2025-03-02"), "given")
    with pytest.raises(InputError, match="not both"):
        wf.resolve_as_of("2025-03-01", "2025-03-01")
    with pytest.raises(InputError, match="--application-date must be a date YYYY-MM-DD; got 'soon'"):
        wf.resolve_as_of(application_date="soon")


def _record(end: str, days: int = 500) -> FlowRecord:
    idx = pd.date_range(end=end, periods=days, freq="D", name="date")
    return FlowRecord(pd.Series(0.40, index=idx, name="flow_mgd"), source="hand.csv")


@pytest.mark.parametrize("frozen, warned", [(dt.date(2025, 1, 10), False), (dt.date(2025, 2, 14), False),
                                            (dt.date(2025, 2, 15), True)])
def test_frozen_today_and_the_45_day_warning(monkeypatch, frozen, warned):
    """today() frozen: the as-of date follows it; a record ending 2024-12-31 is stale from 2025-02-15 (46 days)."""
    monkeypatch.setattr(wf, "today", lambda: frozen)
    r = wf.check_daily(_record("2024-12-31"), 0.5, watershed=True)
    assert str(r.verdict.as_of) == frozen.isoformat() and r.as_of_basis == "today"
    assert bool(r.warnings) is warned
    assert r.to_dict()["warnings"] == r.warnings
    if warned:
        assert "46 days before the as-of date 2025-02-15" in r.warnings[0]
        with pytest.raises(RefusedError, match="refused: --strict-record-age"):
            wf.check_daily(_record("2024-12-31"), 0.5, watershed=True, strict_record_age=True)
    else:
        wf.check_daily(_record("2024-12-31"), 0.5, watershed=True, strict_record_age=True)


def test_watershed_is_required_by_the_workflow():
    with pytest.raises(InputError, match="--watershed or --not-watershed is required"):
        wf.run_check(flows="sample-wwtp", limit_mgd=0.5, as_of="2024-12-31")


def test_non_watershed_document_has_no_18_37_and_keeps_the_old_keys():
    import json

    r = wf.check_daily(_record("2024-12-31"), 0.5, as_of="2024-12-31", added_gpd=[60_000], watershed=False)
    d = r.to_dict()
    assert "18-37" not in json.dumps(d, ensure_ascii=False)
    assert d["connection_prohibited"] is False and d["treatment_capacity_shown"] is True
    assert d["headroom_gpd"] == pytest.approx(40_000.0, abs=1e-6)  # (0.50 - 0.40) x 1e6 - 60,000
    for key in ("kind", "rule", "verdict", "checks", "added_gpd", "connection_prohibited", "watershed",
                "treatment_capacity_shown", "warnings", "conditions", "submittal", "as_of", "as_of_basis", "policies"):
        assert key in d


def test_the_five_year_expiry_covers_sewer_systems_and_extensions_not_only_c3():
    """15 RCNY § 18-37(e): "Any approval of a new or an alteration or modification of an existing sewer system, sewer
    extension, or sewer connection subject to Department approval pursuant to 15 RCNY § 18-37(c)(3) ... expires";
    sewer systems and extensions are approved under § 18-37(d) (issue 25, item 6)."""
    (e,) = [c for c in spdes.CONDITIONS if c["citation"] == "15 RCNY § 18-37(e)"]
    assert "sewer extension" in e["applies_when"] and "18-37(d)" in e["applies_when"] and "(c)(3)" in e["applies_when"]
    assert "sewer system" in e["text"] and "five (5) years" in e["text"]
