"""The provenance of credits (capacitysim.bank.ledger_lots): lots taken oldest first, restored, mirrored."""

from __future__ import annotations

import pytest

from capacitysim.errors import RefusedError
from tests.bank.test_ledger import B, JC, DEV, NODE, dep, tr, led  # the ledger's shared test helpers

#: entries are recorded on their own days (program policy no_backdating): tests/conftest.py bank_calendar
pytestmark = pytest.mark.usefixtures("bank_calendar")


def test_condemnation_capped_by_the_holders_lots_of_the_project(led):
    """FIFO by certification date: P1 (2024-01-02, 10,000 gpd) leaves first, then P2 (2024-06-01, 5,000).
    A transfer of 12,000 gpd gives the developer 10,000 of P1 and 2,000 of P2, so at most 2,000 gpd of
    P2 can be condemned from it (the schema-2 ledger capped at P2's 5,000 certified, whoever held them)."""
    dep(led, B, JC, 5000, "P2", certified_on="2024-06-01")
    out = tr(led, B, JC, DEV, 12000, document="bill of sale")
    assert [(x["project"], x["gpd"]) for x in out["lots_taken"]] == [("P1", 10000), ("P2", 2000)]
    with pytest.raises(RefusedError, match="eligible 2,000 gpd, asked 2,001 gpd"):
        led.condemn(B, DEV, JC, 2001, project="P2", document="res 1")
    led.condemn(B, DEV, JC, 1500, project="P2", document="res 1")
    with pytest.raises(RefusedError, match="eligible 500 gpd"):
        led.condemn(B, DEV, JC, 501, project="P2", document="res 2")
    led.condemn(B, DEV, JC, 500, project="P2", document="res 2")


def test_credits_leave_the_oldest_lot_first_and_a_return_puts_them_back_where_they_were(led):
    dep(led, B, JC, 5000, "P2", certified_on="2024-02-01")  # P1 (10,000 gpd) was certified on 2024-01-02
    out = led.withdraw(B, JC, 11000, "A-1", node=NODE)
    assert [(x["project"], x["gpd"]) for x in out["lots_taken"]] == [("P1", 10000), ("P2", 1000)]
    assert [(x["project"], x["gpd"]) for x in led.lots(B, JC)] == [("P2", 4000)]
    led.return_credits("A-1", reason="withdrawn")
    assert [(x["project"], x["gpd"]) for x in led.lots(B, JC)] == [("P1", 10000), ("P2", 5000)]


def test_a_transfer_gives_the_receiver_lots_of_the_same_origin(led):
    tr(led, B, JC, DEV, 1500, document="bill of sale 1")
    (lot,) = led.lots(B, DEV)
    assert (lot["project"], lot["jurisdiction"], lot["gpd"], lot["origin"]) == ("P1", JC, 1500, "project")
    assert lot["source_lot"] == led.lots(B, JC)[0]["lot"]
