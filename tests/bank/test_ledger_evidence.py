"""The evidence a withdrawal cites (capacitysim.bank.ledger_evidence): one application's, under the policy in force."""

from __future__ import annotations

import pytest

from capacitysim.bank import Ledger
from capacitysim.bank import ledger as ledger_module
from capacitysim.bank.ledger_evidence import _evidence_message
from capacitysim.errors import RefusedError
from tests.bank.test_ledger import B, JC, NODE, evidence, led  # the ledger's shared test helpers

#: entries are recorded on their own days (program policy no_backdating): tests/conftest.py bank_calendar
pytestmark = pytest.mark.usefixtures("bank_calendar")


def test_the_policy_in_force_is_the_ledger_module_s_attribute(monkeypatch):
    """The switch to the alternative is ``capacitysim.bank.ledger.EVIDENCE_SINGLE_USE`` (tests set it), read at each call."""
    assert Ledger._evidence_single_use() == "until-rejected-or-returned"
    monkeypatch.setattr(ledger_module, "EVIDENCE_SINGLE_USE", "never-released")
    assert Ledger._evidence_single_use() == "never-released"


def test_the_refusal_names_both_applications_and_when_the_evidence_is_released():
    holder = {"application": "A-1", "status": "pending"}
    msg = _evidence_message("capacity", "cap.json", "ab" * 32, holder, "A-2", "until-rejected-or-returned")
    assert "already the evidence of application 'A-1' (pending) (it is released if" in msg
    assert "application 'A-2' cannot cite it" in msg and "evidence_single_use = until-rejected-or-returned" in msg
    msg = _evidence_message("spdes", "s.json", "cd" * 32, holder, "A-2", "never-released")
    assert "SPDES/treatment check" in msg and "released if" not in msg and "= never-released" in msg


def test_a_cited_document_is_held_by_its_withdrawal_until_it_is_returned(led):
    cap, spd = evidence(led.path.parent, as_of="2024-01-02")  # the day of the ledger's last row
    led.withdraw(B, JC, 3000, "A-1", node=NODE, capacity_ref=cap, spdes_ref=spd)
    sha = led.withdrawal("A-1")["capacity_sha256"]
    assert led.evidence_use(sha) == [{"application": "A-1", "kind": "capacity", "status": "pending", "holds": True}]
    with pytest.raises(RefusedError, match="already the evidence of application 'A-1'"):
        led.withdraw(B, JC, 3000, "A-2", node=NODE, capacity_ref=cap)
    led.return_credits("A-1", reason="withdrawn")
    assert led.evidence_use(sha)[0]["holds"] is False
