"""Deposits, withdrawals, transfers and condemnations (capacitysim.bank.ledger_transactions) on a real SQLite file."""

from __future__ import annotations

import sqlite3

import pytest

from capacitysim.errors import InputError, RefusedError
from tests.bank.test_ledger import (  # the ledger's shared test helpers
    B,
    B2,
    JC,
    BG,
    DEV,
    DEV2,
    TESTER,
    CHECKER,
    NODE,
    checked,
    q,
    tr,
    evidence,
    led,
    bal,
)

#: entries are recorded on their own days (program policy no_backdating): tests/conftest.py bank_calendar
pytestmark = pytest.mark.usefixtures("bank_calendar")


def test_deposit_books_whole_gpd_rounded_down_once(led):
    p2 = q(led, "P2", 388.8)
    out = led.deposit(B, JC, 388.8, "P2", quantification=p2)  # one minor paved manhole: 0.27 gpm x 1440
    assert out["booked_gpd"] == 388 and out["status"] == "pending sign-off" and bal(led) == 10000  # not yet counted
    with pytest.raises(RefusedError, match="already awaiting"):
        led.deposit(B, JC, 388.8, "P2", quantification=p2)
    checked(led, out["txn"])
    assert bal(led) == 10388
    with pytest.raises(RefusedError, match="already certified"):
        led.deposit(B, JC, 388.8, "P2", quantification=p2)
    # float noise from gpm x 1440 does not lose a gallon: 2.2 gpm x 1440 = 3168.0000000000005
    assert led.deposit(B, JC, 2.2 * 1440, "P3", quantification=q(led, "P3", 2.2 * 1440))["booked_gpd"] == 3168


def test_deposit_goes_to_a_municipal_user(led):
    with pytest.raises(RefusedError, match="municipal user"):
        led.deposit(B, DEV, 500, "P9", quantification=q(led, "P9", 500))
    with pytest.raises(InputError, match="gpd"):
        led.deposit(B, JC, -5, "P9", quantification=q(led, "P9", 500))
    with pytest.raises(InputError, match="unknown basin"):
        led.deposit("Nowhere", JC, 5, "P9", quantification=q(led, "P9", 500))


def test_identified_project_then_certified(led):
    led.add_project("P5", B, JC, priority=1, estimated_gpd=2000, description="Main St sumps")
    with pytest.raises(RefusedError, match="another basin or jurisdiction"):
        led.deposit(B, BG, 2000, "P5", quantification=q(led, "P5", 2000))
    out = led.deposit(B, JC, 1800, "P5", quantification=q(led, "P5", 1800), certified_on="2024-06-01")
    assert {x["ref"]: x for x in led.projects()}["P5"]["status"] == "identified"  # certified only at the sign-off
    checked(led, out["txn"])
    p = {x["ref"]: x for x in led.projects()}["P5"]
    assert p["status"] == "certified" and p["certified_gpd"] == 1800
    with pytest.raises(sqlite3.IntegrityError, match="certified project"):
        led.conn.execute("UPDATE projects SET certified_gpd = 99999 WHERE ref='P5'")


def test_withdrawal_at_or_under_threshold_refused(led):
    for gpd in (100, 2500):
        with pytest.raises(RefusedError, match="no offset is required"):
            led.withdraw(B, JC, gpd, f"A-{gpd}", node=NODE)
    assert bal(led) == 10000
    out = led.withdraw(B, JC, 2500.2, "A-over", node=NODE)
    assert out["amount_gpd"] == 2501 and bal(led) == 10000 - 2501  # requirement rounded up


def test_withdrawal_reserves_at_once_and_stays_pending_until_signed_off(led):
    cap, spd = evidence(led.path.parent, as_of="2024-05-01")
    w = led.withdraw(B, JC, 3000, "A1", node=NODE, capacity_ref=cap, on="2024-05-01")
    assert w["status"] == "pending" and w["note_issued_on"] is None
    assert bal(led) == 7000 and led.balance(B, JC)["reserved_gpd"] == 3000
    w = led.attach("A1", spdes_ref=spd, application_approval="Village permit 2024-88")
    assert w["status"] == "pending" and w["missing_for_sign_off"] == []  # attaching never approves
    checked(led, w["signoff_txn"], on="2024-05-03")
    w = led.withdrawal("A1")
    assert w["status"] == "approved" and w["note_issued_on"] == "2024-05-03" and w["co_due_on"] == "2025-05-03"
    assert w["signed_off_by"] == CHECKER and w["recorded_by"] == TESTER
    assert bal(led) == 7000  # approval does not take credits twice


def test_withdrawal_ratio_above_one_applies_as_a_flagged_policy(led):
    cap, spd = evidence(led.path.parent, as_of="2024-01-10")
    w = led.withdraw(B, JC, 3000, "A2", node=NODE, capacity_ref=cap, spdes_ref=spd, offset_ratio=2.0, on="2024-01-10")
    assert w["status"] == "pending" and w["amount_gpd"] == 6000 and bal(led) == 4000
    assert any(p["name"] == "offset_ratio" for p in w["policies"])


def test_withdrawal_over_balance_refused_and_nothing_changes(led):
    before = len(led.journal())
    with pytest.raises(RefusedError, match="insufficient credits"):
        led.withdraw(B, JC, 10001, "A3", node=NODE)
    assert bal(led) == 10000 and len(led.journal()) == before
    assert [w for w in led.withdrawals() if w["application"] == "A3"] == []


def test_withdrawal_from_private_holder_names_principal(led):
    tr(led, B, JC, DEV, 5000, document="bill of sale 2024-17 (notarized)")
    with pytest.raises(InputError, match="principal"):
        led.withdraw(B, DEV, 3000, "A4", node=NODE)
    with pytest.raises(RefusedError, match="not a municipal user"):
        led.withdraw(B, DEV, 3000, "A4", principal=DEV2, node=NODE)
    assert led.withdraw(B, DEV, 3000, "A4", principal=JC, node=NODE)["principal"] == JC
    with pytest.raises(RefusedError, match="already has a withdrawal"):
        led.withdraw(B, DEV, 3000, "A4", principal=JC, node=NODE)


def test_transfer_needs_a_document(led):
    for doc in (None, "", "   "):
        with pytest.raises(RefusedError, match="document"):
            led.transfer(B, JC, DEV, 100, document=doc)
    assert bal(led) == 10000
    with pytest.raises(sqlite3.IntegrityError):  # and SQL refuses it too
        led.conn.execute("INSERT INTO transfers(from_id, to_id, amount_gpd, document, cross_basin, created_at) "
                         "VALUES (1, 1, 5, '', 0, 'x')")


def test_transfer_across_basins_needs_board_approval(led):
    with pytest.raises(RefusedError, match="Board approval"):
        led.transfer(B, JC, BG, 100, document="memorandum of grant", to_basin=B2)
    assert bal(led) == 10000
    out = led.transfer(B, JC, BG, 100, document="memorandum of grant", to_basin=B2, board_approval="Board res. 2024-9")
    # reserved at the sender at once, counted at the receiver only once signed off (program policy pending_reserve)
    assert out["from_balance_gpd"] == 9900 and bal(led, B2, BG) == 0
    assert led.balance(B2, BG)["pending_in_gpd"] == 100 and led.verify()["in_transit_gpd"] == 100
    checked(led, out["txn"])
    assert bal(led, B2, BG) == 100 and led.verify()["in_transit_gpd"] == 0


def test_transfer_over_balance_and_bad_amounts(led):
    with pytest.raises(RefusedError, match="insufficient"):
        led.transfer(B, JC, DEV, 10001, document="bill of sale")
    with pytest.raises(RefusedError, match="no subaccount"):
        led.transfer(B, DEV2, DEV, 1, document="bill of sale")
    with pytest.raises(InputError, match="whole"):
        led.transfer(B, JC, DEV, 10.5, document="bill of sale")
    with pytest.raises(InputError, match="> 0"):
        led.transfer(B, JC, DEV, 0, document="bill of sale")
    assert bal(led) == 10000


def test_condemnation_rules(led):
    tr(led, B, JC, DEV, 3000, document="bill of sale")
    with pytest.raises(RefusedError, match="only a municipal user"):
        led.condemn(B, DEV, DEV2, 100, project="P1", document="res")
    with pytest.raises(RefusedError, match="private entity"):
        led.condemn(B, JC, BG, 100, project="P1", document="res")
    with pytest.raises(RefusedError, match="jurisdiction"):
        led.condemn(B, DEV, BG, 100, project="P1", document="res")  # P1 is Johnson City's
    with pytest.raises(RefusedError, match="document"):
        led.condemn(B, DEV, JC, 100, project="P1", document="")
    with pytest.raises(RefusedError, match="insufficient"):
        led.condemn(B, DEV, JC, 3001, project="P1", document="res")
    out = led.condemn(B, DEV, JC, 1000, project="P1", document="Village resolution 2024-33, public purpose")
    assert out["from_balance_gpd"] == 2000 and out["to_balance_gpd"] == 8000


def test_sql_guards_refuse_backward_status_and_swapped_refs(led):
    cap, _ = evidence(led.path.parent)
    led.withdraw(B, JC, 3000, "A-G", node=NODE, capacity_ref=cap)
    c = led.conn
    for sql in ("UPDATE withdrawals SET amount_gpd = 1",
                "UPDATE withdrawals SET capacity_ref = 'cap-run-2'",
                "UPDATE withdrawals SET node = 'MH-9'",
                "UPDATE withdrawals SET status = 'completed', co_issued_on = '2024-01-01'",
                # approved without the H(2) approval and the administrator's signed-off row
                "UPDATE withdrawals SET status = 'approved', spdes_ref = 's', note_issued_on = '2024-01-01'"):
        with pytest.raises(sqlite3.IntegrityError, match="only moves forward"):
            c.execute(sql)
    led.return_credits("A-G", reason="withdrawn")
    with pytest.raises(sqlite3.IntegrityError, match="only moves forward"):
        c.execute("UPDATE withdrawals SET status = 'pending'")  # a returned note cannot come back to life
    with pytest.raises(sqlite3.IntegrityError, match="cannot be changed"):
        c.execute("UPDATE entities SET municipal = 1")


def test_amounts_are_bounded_and_whole(led):
    with pytest.raises(InputError, match="<= 1,000,000,000 gpd"):
        led.deposit(B, JC, 1e300, "HUGE", quantification=q(led, "HUGE", 1e300))
    with pytest.raises(InputError, match="<= 1,000,000,000 gpd"):
        led.withdraw(B, JC, 2e9, "HUGE-A", node=NODE)
    with pytest.raises(InputError, match="at most 1,000,000,000"):
        led.withdraw(B, JC, 6e8, "HUGE-B", offset_ratio=2, node=NODE)
    # section F: one to one; below is refused by the rule (ii_offset.check_offset_ratio), not bad input
    with pytest.raises(RefusedError, match="below the one-to-one offset ratio of section F"):
        led.withdraw(B, JC, 3000, "LOW", offset_ratio=0.99, node=NODE)
    with pytest.raises(InputError, match="offset_ratio"):
        led.withdraw(B, JC, 3000, "HIGH", offset_ratio=11, node=NODE)
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):  # SQL keeps the balance an INTEGER
        led.conn.execute("UPDATE subaccounts SET balance_gpd = 9223372036854775807 + 1")
    assert bal(led) == 10000


def test_application_ids_differing_only_in_case_or_normal_form_are_one(led):
    led.withdraw(B, JC, 3000, "BG-2024-Caf\u00e9", node=NODE)
    for dup in ("bg-2024-café", "BG-2024-Cafe\u0301"):
        with pytest.raises(RefusedError, match="already has a withdrawal"):
            led.withdraw(B, JC, 3000, dup, node=NODE)
        with pytest.raises(RefusedError, match="already has a withdrawal"):  # nor recorded again without credits
            led.record_application(dup, JC, 2000)
    assert bal(led) == 7000
