"""Verification (capacitysim.bank.ledger_verify): the hash chain, its head, and the audit of a tampered file."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from capacitysim.errors import InputError
from tests.bank.test_ledger import B, JC, DEV, NODE, make, dep, tr, led, bal  # the ledger's shared test helpers

#: entries are recorded on their own days (program policy no_backdating): tests/conftest.py bank_calendar
pytestmark = pytest.mark.usefixtures("bank_calendar")


def _drop_guards(led):
    """What a tamperer does first: drop every trigger (the guards only stop honest mistakes)."""
    c = led.conn
    for (name,) in c.execute("SELECT name FROM sqlite_master WHERE type='trigger'").fetchall():
        c.execute(f"DROP TRIGGER {name}")


@pytest.fixture
def busy(tmp_path):
    """A ledger with some history, to be tampered with (so no clean-books check at teardown)."""
    led = make(tmp_path / "tampered.sqlite")
    dep(led, B, JC, 10000, "P1", certified_on="2024-03-01")
    led.withdraw(B, JC, 3000, "A-T1", node=NODE)
    tr(led, B, JC, DEV, 1000, document="bill of sale 9")
    led.withdraw(B, JC, 2600, "A-T2", node=NODE)
    led.return_credits("A-T2", reason="withdrawn")
    assert led.verify()["ok"]
    yield led
    led.close()


def _problems(led):
    v = led.verify()
    assert not v["ok"]
    return " | ".join(v["problems"])


def test_verify_catches_an_edited_journal_reason(busy):
    _drop_guards(busy)
    busy.conn.execute("UPDATE journal SET reason='nothing to see' WHERE action='transfer-out'")
    assert "content does not match its hash" in _problems(busy)


def test_verify_catches_a_deleted_journal_row(busy):
    _drop_guards(busy)
    busy.conn.execute("DELETE FROM journal WHERE action='return'")
    p = _problems(busy)
    assert "not linked to the row before it" in p or "does not end at the recorded head" in p


def test_verify_catches_a_consistently_rehashed_forgery_by_running_balance_and_records(busy):
    """Even a forger who recomputes the chain cannot make a second withdraw row for one application."""
    from capacitysim.bank.ledger import journal_hash

    _drop_guards(busy)
    c = busy.conn
    # spend A-T1 twice: a second 'withdraw' row and the balance lowered to match
    last = c.execute("SELECT * FROM journal ORDER BY seq DESC LIMIT 1").fetchone()
    sub = c.execute("SELECT subaccount_id FROM journal WHERE ref='A-T1'").fetchone()[0]
    c.execute("UPDATE subaccounts SET balance_gpd = balance_gpd - 3000 WHERE id=?", (sub,))
    bal_now = c.execute("SELECT balance_gpd FROM subaccounts WHERE id=?", (sub,)).fetchone()[0]
    row = dict(last) | {"seq": last["seq"] + 1, "action": "withdraw", "ref": "A-T1", "subaccount_id": sub, "delta_gpd": -3000,
                        "balance_after": bal_now, "prev_hash": last["hash"], "detail": "{}", "documents": "[]"}
    row["hash"] = journal_hash(row)
    cols = list(row)
    c.execute(f"INSERT INTO journal({','.join(cols)}) VALUES ({','.join('?' * len(cols))})", [row[k] for k in cols])
    c.execute("UPDATE meta SET value=? WHERE key='journal_head'", (row["hash"],))
    p = _problems(busy)
    assert "application A-T1: journal 'withdraw' rows [-3000, -3000] but the record says [-3000]" in p
    assert "credits deposited 10000 != held" in p


def test_verify_catches_a_changed_withdrawal_amount_and_silent_status_change(busy):
    _drop_guards(busy)
    c = busy.conn
    c.execute("UPDATE withdrawals SET status='returned', closed_at='2024-01-01' WHERE application='A-T1'")
    p = _problems(busy)
    assert "application A-T1: journal 'return' rows [] but the record says [3000]" in p


def test_hash_chain_links_every_row_and_survives_a_purge(tmp_path):
    from capacitysim.bank.ledger import GENESIS_HASH, journal_hash

    clock = {"now": dt.datetime(2015, 1, 1, tzinfo=dt.timezone.utc)}
    led = make(tmp_path / "chain.sqlite", clock=lambda: clock["now"])
    dep(led, B, JC, 9000, "OLD1")
    rows = led.conn.execute("SELECT * FROM journal ORDER BY seq").fetchall()
    assert rows[0]["prev_hash"] == GENESIS_HASH
    assert all(b["prev_hash"] == a["hash"] for a, b in zip(rows, rows[1:]))
    assert all(journal_hash(r) == r["hash"] for r in rows)
    clock["now"] = dt.datetime.now(dt.timezone.utc)
    dep(led, B, JC, 100, "NEW1")
    out = led.purge("2016-01-01", reason="retention")
    kept = led.conn.execute("SELECT * FROM journal ORDER BY seq").fetchall()
    purge_row = [r for r in kept if r["action"] == "purge"][0]
    # the first surviving row links to the last purged row, whose hash the purge row records
    assert kept[0]["prev_hash"] == json.loads(purge_row["detail"])["last_purged_hash"] == rows[-1]["hash"]
    assert out["purged_rows"] == len(rows)
    assert led.verify()["ok"] and bal(led) == 9100
    led.close()


def test_a_head_kept_outside_fails_verify_once_history_is_rewritten(busy):
    kept = busy.head()["head"]
    assert busy.verify(expect_head=kept)["expected_head"] == {"hash": kept, "found": True, "seq": busy.head()["last_seq"]}
    _drop_guards(busy)
    busy.conn.execute("UPDATE journal SET reason='rewritten' WHERE seq=2")
    assert "the chain no longer leads to it" in " | ".join(busy.verify(expect_head=kept)["problems"])
    with pytest.raises(InputError, match="64 hexadecimal digits"):
        busy.verify(expect_head="abc")
