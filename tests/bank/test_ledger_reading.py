"""Reading the bank (capacitysim.bank.ledger_reading): balances with what awaits sign-off, records, the journal."""

from __future__ import annotations

import pytest

from capacitysim.bank import Ledger
from capacitysim.bank.ledger import policies
from tests.bank.test_ledger import B, JC, DEV, CHECKER, NODE, q, tr, led  # the ledger's shared test helpers

#: entries are recorded on their own days (program policy no_backdating): tests/conftest.py bank_calendar
pytestmark = pytest.mark.usefixtures("bank_calendar")


def test_a_balance_says_what_is_pending_in_and_out(led):
    led.deposit(B, JC, 1000, "P9", quantification=q(led, "P9", 1000))
    led.withdraw(B, JC, 3000, "A-1", node=NODE)
    b = led.balance(B, JC)
    assert (b["balance_gpd"], b["reserved_gpd"], b["pending_in_gpd"], b["pending_out_gpd"]) == (7000, 3000, 1000, 3000)
    assert b["allocation_policy"] == "FIFO" and "lots" not in b
    assert [x["gpd"] for x in led.balance(B, JC, lots=True)["lots"]] == [7000]
    (row,) = [r for r in led.balances() if r["owner"] == JC]
    assert (row["balance_gpd"], row["pending_in_gpd"]) == (7000, 1000)


def test_the_journal_is_read_by_reference_and_transaction(led):
    rows = led.journal(ref="P1")
    assert [r["action"] for r in rows] == ["record-deposit", "sign-off", "deposit"]
    assert [r["action"] for r in led.journal(txn=rows[-1]["txn"])] == ["sign-off", "deposit"]
    assert rows[-1]["detail"]["booked_gpd"] == 10000 and rows[-1]["owner"] == JC


def test_records_are_read_with_their_sign_off(led):
    tr(led, B, JC, DEV, 500, document="bill of sale 2")
    (t,) = led.transfers()
    assert (t["from"], t["to"], t["gpd"], t["signoff_status"], t["signed_off_by"]) == (JC, DEV, 500, "signed-off", CHECKER)
    (p,) = led.projects()
    assert (p["ref"], p["status"], p["certified_gpd"], p["certificate"]) == ("P1", "certified", 10000, "cert-P1.pdf")
    assert Ledger.policies() == policies()
