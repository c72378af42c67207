"""The credit bank ledger on a real SQLite file: rules of the program, guards in SQL, records.

Since issue 14 deposits, withdrawals and transfers take effect at the bank administrator's sign-off:
the helpers ``dep``/``tr`` sign off at once, and ``approve`` cites the section H documents (JSON files
written by ``evidence``) and signs off. The tester records; a second registered administrator, the
checker, signs off and rejects (program policy signoff_separation: nobody signs off what they recorded).
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capacitysim.bank import Ledger
from capacitysim.errors import InputError, RefusedError
from tests.bank_support import quantification

#: entries are recorded on their own days (program policy no_backdating): tests/conftest.py bank_calendar
pytestmark = pytest.mark.usefixtures("bank_calendar")

B, B2 = "JC CSO 4", "BG CSO 12"
JC, BG, DEV, DEV2 = "Village of Johnson City", "City of Binghamton", "Acme Development", "Other LLC"
TESTER = "Terry Tester"  # the person acting, registered as bank administrator
CHECKER = "Cora Checker"  # a second bank administrator: signs off and rejects what the tester records
NODE = "MH-1"


def make(path, **kw) -> Ledger:
    led = Ledger(path, create=True, actor=TESTER, administrator=TESTER, **kw)
    led.add_administrator(CHECKER)
    led.add_entity(JC, municipal=True)
    led.add_entity(BG, municipal=True)
    led.add_entity(DEV)
    led.add_entity(DEV2)
    led.add_basin(B, outlet="CSO4")
    led.add_basin(B2)
    return led


def checked(led, txn, *, reject: str | None = None, **kw) -> dict:
    """The checker signs off (or, with ``reject``, rejects) what the tester recorded."""
    before, led.actor = led.actor, CHECKER
    try:
        return led.reject(txn, reason=reject) if reject is not None else led.sign_off(txn, **kw)
    finally:
        led.actor = before


def q(led, project, gpd) -> str:
    """A PE's quantification of ``project`` (``gpd``) beside the bank file, for a deposit to cite."""
    return quantification(led.path.parent, project, gpd)


def dep(led, basin, owner, gpd, project, **kw) -> dict:
    """Deposit (citing a quantification of ``gpd`` unless ``quantification`` is given) and sign off (the deposit
    takes effect)."""
    kw.setdefault("quantification", q(led, project, gpd))
    out = led.deposit(basin, owner, gpd, project, **kw)
    checked(led, out["txn"], on=kw.get("certified_on"))
    return out


def tr(led, *args, **kw) -> dict:
    """Transfer and sign off."""
    out = led.transfer(*args, **kw)
    checked(led, out["txn"])
    return out


def evidence(folder, *, node=NODE, gpd=3000.0, as_of="2024-05-01", added=None) -> tuple[str, str]:
    """A passing capacity demonstration (connecting ``gpd`` at ``node``) and a SPDES check (``added`` gpd, as of ``as_of``)."""
    import uuid

    k = uuid.uuid4().hex[:8]  # each pair is a document of its own (program policy evidence_single_use)
    cap = {"kind": "capacity-demonstration", "verdict": "pass", "run": k,
           "scenario": {"connections": [{"node": node, "flow_gpd": gpd}]},
           "external_files": [{"verb": "MODEL", "path": "/models/m.inp", "sha256": "ab" * 32}]}
    spd = {"kind": "spdes-check", "verdict": "pass", "as_of": as_of, "added_gpd": gpd if added is None else added,
           "connection_prohibited": False, "run": k}
    (folder / f"cap-{k}.json").write_text(json.dumps(cap))
    (folder / f"spdes-{k}.json").write_text(json.dumps(spd))
    return str(folder / f"cap-{k}.json"), str(folder / f"spdes-{k}.json")


def approve(led, basin, owner, gpd, app, *, on, ratio=1.0, **kw) -> dict:
    """A withdrawal citing its section H(1) documents and H(2) approval, signed off on ``on``."""
    cap, spd = evidence(led.path.parent, gpd=gpd, as_of=on)
    out = led.withdraw(basin, owner, gpd, app, node=NODE, capacity_ref=cap, spdes_ref=spd, application_approval=f"H2-{app}",
                       offset_ratio=ratio, on=on, **kw)
    checked(led, out["txn"], on=on)
    return led.withdrawal(app)


@pytest.fixture
def led(tmp_path):
    ledger = make(tmp_path / "bank.sqlite")
    dep(ledger, B, JC, 10000, "P1", certified_on="2024-01-02", certificate="cert-P1.pdf")
    yield ledger
    assert ledger.verify()["ok"], ledger.verify()
    ledger.close()


def bal(led, basin=B, owner=JC):
    return led.balance(basin, owner)["balance_gpd"]


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


# --- deposits -----------------------------------------------------------------------------------


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


# --- withdrawals --------------------------------------------------------------------------------


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


def test_return_of_reserved_credits(led):
    led.withdraw(B, JC, 4000, "A5", node=NODE)
    led.return_credits("A5", reason="application withdrawn by the applicant")
    assert bal(led) == 10000 and led.withdrawal("A5")["status"] == "returned"
    assert led.withdrawal("A5")["signoff_status"] == "cancelled" and led.pending() == []
    assert [(x["project"], x["gpd"]) for x in led.lots()] == [("P1", 10000)]  # back into the lot they came from
    with pytest.raises(RefusedError, match="returned"):
        led.return_credits("A5", reason="again")


def test_default_one_year_after_note_unless_extended(led):
    approve(led, B, JC, 3000, "A6", on="2024-02-01")
    approve(led, B, JC, 3000, "A7", on="2024-02-01")
    assert led.check_defaults("2025-02-01") == []  # due on 2025-02-01: not yet in default
    with pytest.raises(RefusedError, match="later than"):
        led.extend("A7", "2025-01-15", document="Board letter", granted_on="2025-01-10")
    # granted the day after the due date: refused by the program policy extension_after_due_date (not the rule)
    with pytest.raises(RefusedError, match="program policy extension_after_due_date .*after the due date 2025-02-01"):
        led.extend("A7", "2025-08-01", document="Board letter", granted_on="2025-02-02")
    out = led.extend("A7", "2025-08-01", document="Board letter 2025-01-20", granted_on="2025-02-01")  # on the due date
    assert [p["name"] for p in out["policies"]] == ["extension_after_due_date"]
    out = led.check_defaults("2025-02-02")
    assert [d["application"] for d in out] == ["A6"] and out[0]["policy"] == "default_credits"
    assert led.withdrawal("A6")["status"] == "defaulted" and bal(led) == 10000 - 3000
    with pytest.raises(RefusedError, match="after the due date"):
        led.complete("A7", "2025-09-01")
    led.complete("A7", "2025-07-15")
    assert led.withdrawal("A7")["status"] == "completed"
    assert led.check_defaults() == []  # today: the completed note can no longer default
    with pytest.raises(InputError, match="as_of .* is in the future"):
        led.check_defaults((dt.date.today() + dt.timedelta(days=1)).isoformat())  # a default is final: never ahead of time
    with pytest.raises(RefusedError, match="only an issued flow credit note"):
        led.extend("A7", "2026-01-01", document="x")  # completed, not approved
    assert [e["action"] for e in led.journal() if e["ref"] in ("A6", "A7")].count("default") == 1


# --- transfers and condemnation -------------------------------------------------------------------


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


# --- the SQL guards -----------------------------------------------------------------------------------


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


# --- retention -------------------------------------------------------------------------------------------


def test_purge_refused_for_young_records_and_under_dispute(tmp_path):
    clock = {"now": dt.datetime(2015, 1, 1, tzinfo=dt.timezone.utc)}
    led = make(tmp_path / "old.sqlite", clock=lambda: clock["now"])
    dep(led, B, JC, 9000, "OLD1")
    led.withdraw(B, JC, 3000, "OLD-A", node=NODE)
    clock["now"] = dt.datetime.now(dt.timezone.utc)
    dep(led, B, JC, 500, "NEW1")
    recent = (dt.date.today() - dt.timedelta(days=365)).isoformat()
    with pytest.raises(RefusedError, match="younger than 3 years"):
        led.purge(recent, reason="housekeeping")
    d = led.open_dispute(B, "quantification of OLD1 contested")
    with pytest.raises(RefusedError, match="under dispute"):
        led.purge("2016-01-01", reason="housekeeping")
    assert led.journal()[0]["action"] == "init"
    led.close_dispute(d["dispute"], reason="settled")
    out = led.purge("2016-01-01", reason="housekeeping")
    assert out["purged_rows"] > 0
    rows = led.journal()
    assert all(r["at"] >= "2016" for r in rows)
    assert "carry-forward" in [r["action"] for r in rows]
    assert led.verify()["ok"]  # the journal still sums to the balances
    assert bal(led) == 6500
    led.close()


# --- a property: any sequence of operations keeps the books -------------------------------------------

ops = st.lists(
    st.tuples(st.sampled_from(["deposit", "deposit-bg", "withdraw", "transfer", "return", "condemn", "sign", "reject"]),
              st.integers(1, 6000), st.sampled_from([JC, BG, DEV, DEV2])),
    min_size=1, max_size=25)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops)
def test_any_sequence_keeps_balances_lots_and_journal_in_step(tmp_path_factory, seq):
    """Deposits by two jurisdictions, transfers and withdrawals left pending or decided in any order,
    returns and condemnations: balances never negative, lots always sum to the balances, verify clean,
    and a holder's credits condemned by Johnson City always came from Johnson City's projects."""
    led = make(tmp_path_factory.mktemp("prop") / "p.sqlite")
    dep(led, B, JC, 5000, "SEED")
    for i, (op, n, who) in enumerate(seq):
        try:
            if op == "deposit":
                led.deposit(B, JC, n, f"P{i}", quantification=q(led, f"P{i}", n))
            elif op == "deposit-bg":
                led.deposit(B, BG, n, f"BGP{i}", quantification=q(led, f"BGP{i}", n))
            elif op == "withdraw":
                led.withdraw(B, who, n + 2500, f"A{i}", principal=JC, node=NODE)
            elif op == "transfer":
                led.transfer(B, JC if who != JC else BG, who, n, document="bill of sale")
            elif op == "return":
                apps = [w["application"] for w in led.withdrawals() if w["status"] == "pending"]
                if apps:
                    led.return_credits(apps[0], reason="withdrawn")
            elif op in ("sign", "reject"):
                pend = [p for p in led.pending() if p["kind"] != "withdrawal"]
                if pend:
                    checked(led, pend[0]["txn"], reject=None if op == "sign" else "no")
            else:
                out = led.condemn(B, who, JC, n, document="resolution")
                assert {x["jurisdiction"] for x in out["lots_taken"]} == {JC}
        except (RefusedError, InputError):
            pass
        assert all(r["balance_gpd"] >= 0 for r in led.balances())
    for r in led.balances():
        assert sum(x["gpd"] for x in led.lots(r["basin"], r["owner"])) == r["balance_gpd"]
    v = led.verify()
    assert v["ok"], v
    led.close()


# --- tampering: someone with the file and the sqlite3 shell ------------------------------------------


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


def test_completion_dates_are_checked(led):
    approve(led, B, JC, 3000, "A-C", on="2024-05-01")
    with pytest.raises(RefusedError, match="co_issued_on 2024-04-30 is before the journal's last row"):
        led.complete("A-C", "2024-04-30")  # program policy no_backdating
    with pytest.raises(InputError, match="before the flow credit note"):
        led.complete("A-C", "2024-04-30", late_reason="a certificate entered late")
    with pytest.raises(InputError, match="future"):
        led.complete("A-C", (dt.date.today() + dt.timedelta(days=2)).isoformat())
    led.complete("A-C", "2024-05-01")


def test_application_ids_differing_only_in_case_or_normal_form_are_one(led):
    led.withdraw(B, JC, 3000, "BG-2024-Caf\u00e9", node=NODE)
    for dup in ("bg-2024-café", "BG-2024-Cafe\u0301"):
        with pytest.raises(RefusedError, match="already has a withdrawal"):
            led.withdraw(B, JC, 3000, dup, node=NODE)
        with pytest.raises(RefusedError, match="already has a withdrawal"):  # nor recorded again without credits
            led.record_application(dup, JC, 2000)
    assert bal(led) == 7000


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
