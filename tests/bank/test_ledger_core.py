"""The ledger's core (capacitysim.bank.ledger_core): the file, the transaction, the journal row, the clock."""

from __future__ import annotations

import datetime as dt
import sqlite3

import pytest

from capacitysim.bank import Ledger
from capacitysim.errors import InputError, RefusedError
from tests.bank.test_ledger import (  # the ledger's shared test helpers
    B,
    JC,
    DEV,
    TESTER,
    CHECKER,
    NODE,
    make,
    checked,
    dep,
    tr,
    led,
    bal,
)

#: entries are recorded on their own days (program policy no_backdating): tests/conftest.py bank_calendar
pytestmark = pytest.mark.usefixtures("bank_calendar")


def test_file_is_wal_with_foreign_keys(led):
    assert led.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert led.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_missing_or_foreign_file_is_input_error(tmp_path):
    with pytest.raises(InputError, match="no credit bank"):
        Ledger(tmp_path / "nope.sqlite")
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(InputError):
        Ledger(junk)


def test_journal_is_append_only_in_sql(led):
    c = led.conn
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        c.execute("UPDATE journal SET delta_gpd = 0")
    with pytest.raises(sqlite3.IntegrityError, match="cannot be deleted"):
        c.execute("DELETE FROM journal")
    led.withdraw(B, JC, 3000, "A-guard", node=NODE)
    tr(led, B, JC, DEV, 10, document="bill of sale")
    for table in ("entities", "basins", "subaccounts", "projects", "withdrawals", "transfers", "administrators", "signoffs",
                  "lots", "lot_moves"):
        with pytest.raises(sqlite3.IntegrityError, match="cannot be deleted"):
            c.execute(f"DELETE FROM {table}")
    with pytest.raises(sqlite3.IntegrityError, match="cannot be changed"):
        c.execute("UPDATE transfers SET amount_gpd = 1")


def test_balance_cannot_go_negative_or_move_without_journal(led):
    c = led.conn
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        c.execute("UPDATE subaccounts SET balance_gpd = -1")
    with pytest.raises(sqlite3.IntegrityError, match="balance_after"):
        c.execute("INSERT INTO journal(txn, at, actor, action, subaccount_id, delta_gpd, balance_after) "
                  "VALUES ('t', 'x', 'me', 'deposit', 1, 5, 99999)")
    with pytest.raises(sqlite3.IntegrityError):
        c.execute("UPDATE subaccounts SET owner_id = 2")


def test_journal_records_who_when_what_why_documents(led):
    out = led.transfer(B, JC, DEV, 250, document="memorandum of gift 7", reason="gift to the developer")
    checked(led, out["txn"], reason="gift to the developer")
    rows = [r for r in led.journal() if r["ref"] == out["transfer"]]
    assert [r["action"] for r in rows] == ["transfer-out", "sign-off", "transfer-in"]
    assert rows[0]["txn"] == out["txn"] and rows[1]["txn"] == rows[2]["txn"] != out["txn"]  # recorded, then signed off
    assert [r["actor"] for r in rows] == [TESTER, CHECKER, CHECKER]  # who recorded, who signed off
    for r in rows:
        assert r["reason"] == "gift to the developer" and r["at"]
    assert rows[0]["documents"] == rows[2]["documents"] == ["memorandum of gift 7"]
    assert rows[1]["detail"]["signed_off_by"] == CHECKER and rows[1]["detail"]["recorded_by"] == TESTER
    assert rows[1]["detail"]["txn"] == out["txn"]
    assert [r["delta_gpd"] for r in rows] == [-250, 0, 250]


def test_a_lock_held_past_the_timeout_is_one_clean_error_and_changes_nothing(tmp_path):
    from capacitysim.bank.ledger import BankBusyError

    path = tmp_path / "locked.sqlite"
    dep(make(path), B, JC, 10000, "P1")
    other = sqlite3.connect(str(path), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another writer holds the write lock
    try:
        led = Ledger(path, actor=TESTER, timeout_s=0.2)
        with pytest.raises(BankBusyError, match="nothing was changed") as info:
            led.withdraw(B, JC, 3000, "A-busy", node=NODE)
        assert "\n" not in str(info.value) and info.value.exit_code == 1
    finally:
        other.execute("ROLLBACK")
        other.close()
    led.withdraw(B, JC, 3000, "A-busy", node=NODE)  # the same call succeeds once the lock is gone
    assert bal(led) == 7000 and led.verify()["ok"]
    led.close()


def test_the_ledger_reads_its_default_clock_from_the_core(tmp_path, bank_calendar):
    """The clock a Ledger without ``clock=`` reads is ``ledger_core.utc_now``, at each row: the bank_calendar
    fixture stands in for the passing days there (2020-01-01, then each date recorded)."""
    led = make(tmp_path / "clock.sqlite")
    assert {r["at"][:10] for r in led.journal()} == {"2020-01-01"}
    dep(led, B, JC, 1000, "P-CLOCK", certified_on="2021-03-04")
    assert led.journal()[-1]["at"][:10] == "2021-03-04" == bank_calendar["now"].date().isoformat()


def test_a_ledger_given_its_own_clock_writes_its_rows_at_that_time(tmp_path):
    fixed = dt.datetime(2022, 5, 6, 7, 8, 9, tzinfo=dt.timezone.utc)
    led = Ledger(tmp_path / "own.sqlite", create=True, actor=TESTER, administrator=TESTER, clock=lambda: fixed)
    assert [r["at"] for r in led.journal()] == ["2022-05-06 07:08:09.000000"] * 2  # init, add-administrator
    led.close()


def test_a_refusal_inside_a_transaction_changes_nothing(led):
    before = led.head()
    with pytest.raises(RefusedError, match="already exists"):
        led.add_entity(JC.upper())
    assert led.head() == before
