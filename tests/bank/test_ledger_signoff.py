"""The bank administrator's sign-off (capacitysim.bank.ledger_signoff): who may, what it does, what awaits it."""

from __future__ import annotations

import pytest

from capacitysim.errors import InputError, RefusedError
from tests.bank.test_ledger import (  # the ledger's shared test helpers
    B,
    JC,
    TESTER,
    CHECKER,
    NODE,
    checked,
    q,
    led,
    bal,
)

#: entries are recorded on their own days (program policy no_backdating): tests/conftest.py bank_calendar
pytestmark = pytest.mark.usefixtures("bank_calendar")


def test_a_deposit_takes_effect_at_the_sign_off_of_another_administrator(led):
    out = led.deposit(B, JC, 1000, "P9", quantification=q(led, "P9", 1000))
    (pend,) = [p for p in led.pending() if p["ref"] == "P9"]
    assert (pend["kind"], pend["amount_gpd"], pend["recorded_by"]) == ("deposit", 1000, TESTER)
    assert bal(led) == 10000
    with pytest.raises(RefusedError, match="cannot sign it off"):
        led.sign_off(out["txn"])  # the tester recorded it (program policy signoff_separation)
    done = checked(led, out["txn"])
    assert (done["status"], done["signed_off_by"], done["deposited_gpd"]) == ("signed-off", CHECKER, 1000)
    assert bal(led) == 11000 and led.pending() == []
    with pytest.raises(RefusedError, match="is signed-off, not awaiting sign-off"):
        checked(led, out["txn"])


def test_a_withdrawal_waits_for_its_section_h_references_and_a_rejection_returns_its_credits(led):
    out = led.withdraw(B, JC, 3000, "A-1", node=NODE)
    (pend,) = led.pending()
    assert len(pend["missing"]) == 3 and bal(led) == 7000
    with pytest.raises(RefusedError, match="cannot be signed off without the capacity demonstration"):
        checked(led, out["txn"])
    assert checked(led, out["txn"], reject="no H(2) approval")["status"] == "rejected"
    assert bal(led) == 10000 and led.withdrawal("A-1")["status"] == "returned"


def test_a_transaction_id_is_checked_before_anything_else(led):
    with pytest.raises(InputError, match="8 to 32 hexadecimal digits"):
        led.sign_off("zz")
    with pytest.raises(InputError, match="no deposit, withdrawal or transfer was recorded"):
        led.sign_off("deadbeef")
