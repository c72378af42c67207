"""Issue 13 item 5: the offset a new or modified connection needs, as a pure rule (``connection_offset``).

The published cases the CLI tests check (``tests/cli/test_bank_cli.py``, ``tests/rules/test_hardening.py``) are
checked here on the rule itself, with the hand arithmetic; the CLI's ``--json`` is ``to_dict()`` of the result.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capacitysim.errors import InputError, RefusedError
from capacitysim.rules import ii_offset as r

REG = "regulations/binghamton-jc-ii-offset-program.txt"

# The bundled table's two rows the published case uses (design_flows.toml, NYSDEC 2014 Table B-3 style).
BUNDLED = {
    "residence_bedroom": {"gpd_per_unit": 110.0, "unit": "bedroom", "source": "NYSDEC 2014 Table B-3", "verified": False},
    "restaurant_seat": {"gpd_per_unit": 35.0, "unit": "seat", "source": "NYSDEC 2014 Table B-3", "verified": False},
}
# A municipal user's own table (the CLI test's --flows file), one verified row, one not.
MINE = {
    "apartment": {"gpd_per_unit": 200.0, "unit": "unit", "source": "Village table 3", "verified": True},
    "shop": {"gpd_per_unit": 12.5, "unit": "m2", "source": "x"},  # no "verified": not verified
}

# The keys before issue 14 first, in their order (the bank and other callers read them); issue 14's after.
JSON_KEYS = ["uses", "average_gpd", "peaking_factor", "peaking_basis", "peak_flow_gpd", "threshold_gpd",
             "offset_required", "offset_ratio", "credits_required_gpd", "design_flow_table", "unverified_values",
             "threshold_basis", "threshold_flow_gpd", "offset_required_on_average", "offset_required_on_peak", "policies"]
USE_KEYS = ["use", "count", "unit", "gpd_per_unit", "average_gpd", "source", "verified"]


def test_published_case_harmon_on_population_equivalent():
    res = r.connection_offset({"residence_bedroom": 24, "restaurant_seat": 40}, BUNDLED, design_flow_table="bundled")
    # 24 x 110 + 40 x 35 = 2,640 + 1,400 = 4,040 gpd
    assert [u.average_gpd for u in res.uses] == [2640.0, 1400.0]
    assert res.average_gpd == 4040.0
    # Harmon: P = 4,040 / 100 gpcd = 40.4 persons = 0.0404 thousand; sqrt = 0.2009975;
    # PF = 18.2009975 / 4.2009975 = 4.332542; peak = 4,040 x 4.332542 = 17,503.47 gpd
    assert res.peaking_factor == pytest.approx(4.332542, abs=1e-6)
    assert res.peaking_basis == r.PEAKING_BASIS_HARMON
    assert res.peak_flow_gpd == pytest.approx(17503.47, abs=0.01)
    # more than 2,500 gpd: one-to-one offset (section F)
    assert res.offset_required is True and res.offset_ratio == 1.0
    assert res.credits_required_gpd == res.peak_flow_gpd
    assert res.threshold_gpd == 2500.0 and res.design_flow_table == "bundled"
    assert res.unverified_values == ("residence_bedroom", "restaurant_seat")


def test_published_case_fixed_peaking_factor_below_threshold():
    res = r.connection_offset({"apartment": 5}, MINE, peaking_factor=2)
    # 5 x 200 = 1,000 gpd; x 2 = 2,000 gpd, not more than 2,500: no offset
    assert res.average_gpd == 1000.0 and res.peaking_factor == 2.0 and res.peaking_basis == r.PEAKING_BASIS_GIVEN
    assert res.peak_flow_gpd == 2000.0 and res.offset_required is False and res.credits_required_gpd == 0.0
    assert res.unverified_values == ()


def test_population_given_for_harmon():
    """5 x 200 + 3 x 12.5 = 1,037.5 gpd average; P = 40 persons = 0.04 thousand, sqrt = 0.2;
    PF = 18.2 / 4.2 = 4.333333; peak = 1,037.5 x 4.333333 = 4,495.833 gpd.

    Issue 14: on the average (the default threshold_basis) 1,037.5 <= 2,500 gpd needs no offset; on
    the peak 4,495.8 > 2,500 does, and the credits are the peak, one to one (section F)."""
    res = r.connection_offset({"apartment": 5, "shop": 3}, MINE, population_persons=40)
    assert res.average_gpd == 1037.5
    assert res.peaking_factor == pytest.approx(18.2 / 4.2, rel=1e-12)
    assert res.peak_flow_gpd == pytest.approx(1037.5 * 18.2 / 4.2, rel=1e-12)
    assert res.threshold_basis == "average" and res.threshold_flow_gpd == 1037.5
    assert res.offset_required is False and res.credits_required_gpd == 0.0
    assert res.offset_required_on_average is False and res.offset_required_on_peak is True
    assert res.unverified_values == ("shop",)
    peak = r.connection_offset({"apartment": 5, "shop": 3}, MINE, population_persons=40, threshold_basis="peak")
    assert peak.offset_required is True and peak.credits_required_gpd == peak.peak_flow_gpd


@pytest.mark.parametrize("ratio", [1.0, 2.0, 4.0, r.MAX_OFFSET_RATIO])
def test_offset_ratio_scales_credits(ratio):
    res = r.connection_offset({"residence_bedroom": 30}, BUNDLED, offset_ratio=ratio)
    assert res.offset_ratio == ratio
    assert res.credits_required_gpd == pytest.approx(res.peak_flow_gpd * ratio, rel=1e-12)


# --- the threshold: "greater than 2,500 gallons per day" (definitions) ----------------------------


def test_exactly_2500_gpd_needs_no_offset(shared_dir):
    text = (shared_dir / REG).read_text()
    assert "adding greater than 2,500 gallons per day" in text
    # 12.5 units x 200 gpd x PF 1 = 2,500 gpd exactly (all three exact in binary)
    for ratio in (1.0, 4.0):
        res = r.connection_offset({"apartment": 12.5}, MINE, peaking_factor=1, offset_ratio=ratio)
        assert res.peak_flow_gpd == 2500.0 == r.OFFSET_THRESHOLD_GPD
        assert res.offset_required is False and res.credits_required_gpd == 0.0


def test_just_above_2500_gpd_needs_the_whole_flow_offset():
    above = float(np.nextafter(r.OFFSET_THRESHOLD_GPD, math.inf))  # the next float above 2,500
    table = {"connection": {"gpd_per_unit": above, "unit": "connection", "source": "test"}}
    res = r.connection_offset({"connection": 1}, table, peaking_factor=1)
    assert res.peak_flow_gpd == above
    assert res.offset_required is True
    assert res.credits_required_gpd == above  # the whole peak flow, not the part above 2,500 (section F)
    res = r.connection_offset({"apartment": 12.6}, MINE, peaking_factor=1, offset_ratio=4)
    assert res.offset_required is True and res.credits_required_gpd == pytest.approx(4 * 12.6 * 200, rel=1e-12)


def test_threshold_can_be_given():
    """5 x 200 = 1,000 gpd average, x PF 2 = 2,000 gpd peak, against a threshold of 1,000 gpd: on the
    peak 2,000 > 1,000 needs the 2,000 gpd; on the average 1,000 is not more than 1,000. A threshold
    other than the definitions' 2,500 gpd is flagged as a policy; at 2,500 neither needs an offset."""
    res = r.connection_offset({"apartment": 5}, MINE, peaking_factor=2, threshold_gpd=1000.0, threshold_basis="peak")
    assert res.threshold_gpd == 1000.0 and res.offset_required is True and res.credits_required_gpd == 2000.0
    avg = r.connection_offset({"apartment": 5}, MINE, peaking_factor=2, threshold_gpd=1000.0)
    assert avg.offset_required is False and avg.credits_required_gpd == 0.0
    for one in (res, avg):
        policy = {p["name"]: p for p in one.policies}["threshold_gpd"]
        assert policy["value"] == 1000.0 and policy["text"].startswith(r.POLICY_FLAG)
        assert policy["alternative"]["value"] == 2500.0 and policy["alternative"]["offset_required"] is False
        assert policy["alternative"]["credits_required_gpd"] == 0.0
    assert {p["name"]: p for p in res.policies}["threshold_gpd"]["alternative"]["changes_outcome"] is True


# --- refusals: same messages the CLI prints ---------------------------------------------------------


@pytest.mark.parametrize(
    ("counts", "kwargs", "match"),
    [
        ({"castle": 1}, {"field": "--use", "design_flow_table": "flows.toml"},
         r"^--use 'castle' is not in flows\.toml \(known: residence_bedroom, restaurant_seat\)$"),
        ({"residence_bedroom": 1e308}, {}, "average design flow is not a finite number"),
        ({"residence_bedroom": -1}, {}, r"units must be in \[0, inf\)"),
        ({"residence_bedroom": 30}, {"offset_ratio": math.nan}, r"^offset_ratio must be a finite number in \[1, 10\]"),
        ({"residence_bedroom": 30}, {"offset_ratio": 11}, r"^offset_ratio must be in \[1, 10\].*got 11$"),
        ({"residence_bedroom": 30}, {"threshold_basis": "mean"},
         r"^threshold_basis must be one of average, peak .*got 'mean'$"),
        ({"residence_bedroom": 30}, {"peaking_factor": 0.5}, r"peaking_factor must be in \[1, inf\)"),
        ({"residence_bedroom": 30}, {"population_persons": -5}, r"population_thousands must be in \[0, inf\), got -0\.005"),
        ({"residence_bedroom": 30}, {"peaking_factor": 1e308}, "peak sewage flow is not a finite number"),
    ],
)
def test_refusals(counts, kwargs, match):
    with pytest.raises(InputError, match=match):
        r.connection_offset(counts, BUNDLED, **kwargs)


def test_offset_ratio_below_one_is_refused_by_the_rules():
    """Section F: credits 'equal to the estimated peak sewage flow rate increase', a one-to-one offset
    ratio; 0.5 would offset half the flow added: a refusal by the rules (RefusedError, exit 3), not bad input."""
    with pytest.raises(RefusedError, match=r"^offset_ratio 0\.5 is below the one-to-one offset ratio of section F"):
        r.connection_offset({"residence_bedroom": 30}, BUNDLED, offset_ratio=0.5)


def test_unknown_use_default_field_name():
    with pytest.raises(InputError, match=r"^use 'castle' is not in design flow table"):
        r.connection_offset({"castle": 1}, BUNDLED)


# --- the typed result -------------------------------------------------------------------------------


def test_result_is_frozen_and_to_dict_has_the_cli_keys_in_order():
    res = r.connection_offset({"residence_bedroom": 24, "restaurant_seat": 40}, BUNDLED)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.peak_flow_gpd = 0.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.uses[0].count = 0.0
    d = res.to_dict()
    # the document's own keys in order, then the envelope's (issue 27, item 3: it only adds keys after them)
    from capacitysim.rules.document import ENVELOPE_KEYS

    assert list(d)[:len(JSON_KEYS)] == JSON_KEYS and set(list(d)[len(JSON_KEYS):]) <= set(ENVELOPE_KEYS)
    assert all(list(u) == USE_KEYS for u in d["uses"])
    assert isinstance(d["uses"], list) and isinstance(d["unverified_values"], list)
    assert d["uses"][0] == {"use": "residence_bedroom", "count": 24.0, "unit": "bedroom", "gpd_per_unit": 110.0,
                            "average_gpd": 2640.0, "source": "NYSDEC 2014 Table B-3", "verified": False}
    json.dumps(d, allow_nan=False)  # plain JSON types only


@pytest.mark.parametrize(
    "args",
    [
        ["--use", "residence_bedroom=24", "--use", "restaurant_seat=40"],
        ["--use", "residence_bedroom=30", "--offset-ratio", "2", "--population", "250"],
        ["--use", "restaurant_seat=10", "--peaking-factor", "3"],
        ["--use", "residence_bedroom=6", "--threshold-basis", "peak", "--offset-ratio", "1.5"],
    ],
)
def test_cli_json_is_to_dict_of_the_rule_on_the_bundled_table(run_cli, args):
    from capacitysim.io.project_files import read_design_flows

    res = run_cli("credits", "connection", *args, "--json")
    assert res.exit_code == 0, res.output
    table = read_design_flows(None)
    counts = {a.split("=")[0]: float(a.split("=")[1]) for a in args[1::2] if "=" in a}
    opts = dict(zip(args[0::2], args[1::2]))
    rule = r.connection_offset(counts, table["uses"], design_flow_table=table["path"],
                               peaking_factor=float(opts["--peaking-factor"]) if "--peaking-factor" in opts else None,
                               population_persons=float(opts["--population"]) if "--population" in opts else None,
                               offset_ratio=float(opts.get("--offset-ratio", r.DEFAULT_OFFSET_RATIO)),
                               threshold_basis=opts.get("--threshold-basis", r.DEFAULT_THRESHOLD_BASIS))
    assert json.loads(res.stdout) == rule.to_dict()


def test_program_storm_block(shared_dir):
    text = (shared_dir / REG).read_text()
    assert "The 1-year, 24-hour storm event utilizing the Type\nII Standard Rainfall Distribution" in text
    assert r.program_storm() == {"depth_in": 2.1, "distribution": "Type II", "duration_hr": 24, "cn_table": "BJC 174-19.3"}


# --- property: more flow never needs fewer credits ----------------------------------------------------

_counts = st.floats(0.0, 1.0e5, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(_counts, _counts, _counts, st.floats(1.0, 10.0), st.floats(r.MIN_OFFSET_RATIO, r.MAX_OFFSET_RATIO))
def test_credits_monotone_non_decreasing_in_flow_fixed_peaking(c1, c2, other, pf, ratio):
    """With a fixed peaking factor every step (product, sum, threshold, ratio) is monotone, and so is
    correctly rounded float arithmetic: no tolerance."""
    lo, hi = sorted((c1, c2))
    a = r.connection_offset({"residence_bedroom": lo, "restaurant_seat": other}, BUNDLED, peaking_factor=pf, offset_ratio=ratio)
    b = r.connection_offset({"residence_bedroom": hi, "restaurant_seat": other}, BUNDLED, peaking_factor=pf, offset_ratio=ratio)
    assert a.average_gpd <= b.average_gpd and a.peak_flow_gpd <= b.peak_flow_gpd
    assert a.credits_required_gpd <= b.credits_required_gpd
    assert a.offset_required <= b.offset_required


@settings(max_examples=200, deadline=None)
@given(_counts, _counts, st.floats(r.MIN_OFFSET_RATIO, r.MAX_OFFSET_RATIO))
def test_credits_monotone_non_decreasing_in_flow_harmon(c1, c2, ratio):
    """Harmon's factor falls as the flow rises, but q (18 + a sqrt q) / (4 + a sqrt q) rises with q
    (d/dx of x^2 (18 + a x) / (4 + a x) is (144 x + 30 a x^2 + 2 a^2 x^3) / (4 + a x)^2 > 0, x = sqrt q).
    In floats the falling factor may be rounded one unit the other way: tolerance 1e-12 relative."""
    lo, hi = sorted((c1, c2))
    a = r.connection_offset({"residence_bedroom": lo}, BUNDLED, offset_ratio=ratio)
    b = r.connection_offset({"residence_bedroom": hi}, BUNDLED, offset_ratio=ratio)
    assert a.credits_required_gpd <= b.credits_required_gpd * (1 + 1e-12)
    assert a.offset_required <= b.offset_required
    # credits are all or nothing: ratio x peak when the average (threshold_basis default) is above the
    # threshold, else zero
    for res in (a, b):
        expected = res.peak_flow_gpd * ratio if res.average_gpd > r.OFFSET_THRESHOLD_GPD else 0.0
        assert res.credits_required_gpd == pytest.approx(expected, rel=1e-12)
