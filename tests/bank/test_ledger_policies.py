"""The program policies (capacitysim.bank.ledger_policies): one registry, each flagged, each with its alternative."""

from __future__ import annotations

from capacitysim.bank.ledger_policies import (
    ALLOCATION_POLICY,
    EVIDENCE_HELD_BY,
    EVIDENCE_SINGLE_USE,
    PENDING_RESERVE,
    POLICIES,
    POLICY_FLAG,
    policies,
)


def test_every_policy_is_named_by_its_key_flagged_and_has_an_alternative():
    assert {"allocation_policy", "evidence_single_use", "no_backdating", "connected_until_registered"} <= set(POLICIES)
    for key, pol in POLICIES.items():
        assert pol["name"] == key
        assert pol["text"].startswith(POLICY_FLAG + ": "), key
        assert {"value", "text"} <= set(pol["alternative"]), key


def test_the_values_the_ledger_computes_with_are_the_registry_s():
    assert {k: POLICIES[k]["value"] for k in ("allocation_policy", "pending_reserve", "evidence_single_use")} == {
        "allocation_policy": ALLOCATION_POLICY, "pending_reserve": PENDING_RESERVE,
        "evidence_single_use": EVIDENCE_SINGLE_USE}
    assert EVIDENCE_SINGLE_USE in EVIDENCE_HELD_BY and POLICIES["evidence_single_use"]["alternative"]["value"] in EVIDENCE_HELD_BY


def test_policies_are_handed_out_as_copies():
    mine = policies("allocation_policy")
    mine[0]["alternative"]["value"] = "changed"
    assert POLICIES["allocation_policy"]["alternative"]["value"] == "LIFO"
    assert [p["name"] for p in policies()] == list(POLICIES)
