"""Migrating a schema-2 bank (written by the capacitysim of commit 7277bcb, before issue 14) to schema 3, and
on to schema 4 (service users bound to entities, single use of cited evidence) in the same transaction; and a
schema-3 bank to schema 4.

``data/bank-schema2.sqlite`` and its history are described in ``data/make_bank_schema2.py``. Balances
before the migration (schema 2): Binghamton 3,000; Dev LLC 3,500 (3,000 reserved by A-2024-1);
Other LLC 1,000; Johnson City 10,900 (2,600 reserved by the pending A-2024-2). Journal head
8d4f05ff...be15 (17 rows, the 2019 rows purged).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from capacitysim.bank import Ledger
from capacitysim.errors import InputError, RefusedError
from tests.bank_support import quantification

DATA = Path(__file__).with_name("data") / "bank-schema2.sqlite"
HEAD_BEFORE = "8d4f05ff6e1fb7ce271cf99a4b5ea5c62dc2965a7807be79f205014bf513be15"
B = "Susquehanna North"
JC, BG, DEV, OTH = "Village of Johnson City", "City of Binghamton", "Dev LLC", "Other LLC"
ADMIN = "Maria Lopez"
CHECKER = "Cora Checker"  # a second administrator: signs off what ADMIN records (program policy signoff_separation)


@pytest.fixture
def v2(tmp_path) -> Path:
    path = tmp_path / "bank.sqlite"
    shutil.copyfile(DATA, path)
    return path


def _schema_version(path) -> str:
    c = sqlite3.connect(str(path))
    try:
        return c.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0]
    finally:
        c.close()


def test_a_schema_2_bank_is_not_opened_until_migrated(v2):
    with pytest.raises(InputError, match="schema version 2.*bank --db .* migrate --actor NAME --administrator NAME"):
        Ledger(v2)
    with pytest.raises(InputError, match="first bank administrator"):
        Ledger(v2, actor=ADMIN, migrate=True)
    with pytest.raises(InputError, match="single word"):
        Ledger(v2, actor="jclerk", migrate=True, administrator=ADMIN)
    assert _schema_version(v2) == "2"


def test_migration_rebuilds_lots_from_the_journal_and_keeps_the_books(v2):
    """Lots by replaying the journal with FIFO (carry-forward rows first: they stand for the purged 2019
    history, whose projects the journal no longer shows, so they are of unknown origin):

    * Johnson City: carry-forward 9,000 (unknown); JC-2024-2 +6,000; transfer to Dev 2,000 from the
      unknown lot (oldest first) -> 7,000; A-2024-2 -2,600 -> 4,400; A-2024-3 -2,700 then returned;
      condemnation +500 (see Dev) -> unknown 4,400 + JC-2024-2 6,000 + BG-2024-1 500 = 10,900;
    * Other LLC: carry-forward 1,000 (unknown);
    * Binghamton: BG-2024-1 +8,000, -5,000 to Dev -> 3,000;
    * Dev LLC: BG-2024-1 5,000 + unknown 2,000; A-2024-1 -3,000 takes unknown 2,000 + BG 1,000;
      the 2024 condemnation of 500 "under JC-2024-2" finds no JC-2024-2 lot at Dev (the schema-2 bug)
      and takes BG-2024-1 500 -> BG-2024-1 3,500.
    Unknown origin: 4,400 + 1,000 = 5,400 gpd; lots 18,400 = balances 3,000 + 3,500 + 1,000 + 10,900."""
    led = Ledger(v2, actor=ADMIN, migrate=True, administrator=ADMIN)
    assert _schema_version(v2) == "6"
    lots = {(x["owner"], x["project"]): x["gpd"] for x in led.lots()}
    assert lots == {(JC, None): 4400, (JC, "JC-2024-2"): 6000, (JC, "BG-2024-1"): 500, (OTH, None): 1000,
                    (BG, "BG-2024-1"): 3000, (DEV, "BG-2024-1"): 3500}
    assert {r["owner"]: r["balance_gpd"] for r in led.balances()} == {BG: 3000, DEV: 3500, OTH: 1000, JC: 10900}
    row = led.journal()[-1]
    assert row["action"] == "migrate" and row["actor"] == ADMIN
    assert (row["detail"]["from"], row["detail"]["to"]) == (2, 6) and row["detail"]["withdrawals_sharing_evidence"] == 0
    assert row["detail"] | {} == row["detail"] and row["detail"]["unknown_origin_gpd"] == 5400
    assert row["detail"]["lots_gpd"] == 18400 and row["detail"]["subaccounts_adjusted"] == 0
    assert [a["name"] for a in led.administrators()] == [ADMIN]
    v = led.verify(check_files=False)
    assert v["ok"], v
    # the old rows, their login-name actors and their hashes are kept: the pre-migration head still verifies
    v = led.verify(check_files=False, expect_head=HEAD_BEFORE)
    assert v["ok"] and v["expected_head"]["found"]
    assert {r["actor"] for r in led.journal()[:-2]} == {"jclerk"}
    led.close()
    # migrating again is a no-op
    led = Ledger(v2, actor=ADMIN, migrate=True, administrator=ADMIN)
    assert [r["action"] for r in led.journal()].count("migrate") == 1
    led.close()


def test_after_migration_condemnation_refuses_unknown_and_other_jurisdictions_lots(v2):
    """Section D: Dev LLC now holds only BG-2024-1 credits (Binghamton's), Other LLC only credits of
    unknown origin: Johnson City can condemn neither; Binghamton can condemn Dev's."""
    led = Ledger(v2, actor=ADMIN, migrate=True, administrator=ADMIN)
    with pytest.raises(RefusedError, match=r"lot \d+: 3,500 gpd from project BG-2024-1 \(jurisdiction City of Binghamton\)"):
        led.condemn(B, DEV, JC, 100, document="Village resolution 2025-1")
    with pytest.raises(RefusedError, match="of unknown origin .*cannot be condemned.*eligible 0 gpd"):
        led.condemn(B, OTH, JC, 100, document="Village resolution 2025-2")
    assert led.condemn(B, DEV, BG, 100, document="City resolution 2025-1")["from_balance_gpd"] == 3400
    assert led.verify(check_files=False)["ok"]
    led.close()


def test_after_migration_withdrawals_need_sign_off_and_old_ones_are_marked(v2, tmp_path):
    """The schema-2 approved withdrawal A-2024-1 (approved on run ids) stays approved, marked as made
    before sign-off existed; the pending A-2024-2 now needs the section H documents, the H(2) approval and
    the administrator's sign-off; its return puts 2,600 gpd back into Johnson City's unknown-origin lot
    it came from (4,400 + 2,600 = 7,000)."""
    led = Ledger(v2, actor=ADMIN, migrate=True, administrator=ADMIN)
    a1 = led.withdrawal("A-2024-1")
    assert (a1["status"], a1["signoff_status"], a1["node"]) == ("approved", "none (schema 2)", "MH-12")
    pend = led.pending()
    assert [(p["ref"], p["amount_gpd"], p["recorded_by"]) for p in pend] == [("A-2024-2", 2600, "jclerk")]
    assert len(pend[0]["missing"]) == 3
    with pytest.raises(RefusedError, match="cannot be signed off without"):
        led.sign_off(pend[0]["txn"])
    led.return_credits("A-2024-2", reason="applicant did not pursue")
    assert {(x["project"], x["gpd"]) for x in led.lots(B, JC)} == {(None, 7000), ("JC-2024-2", 6000), ("BG-2024-1", 500)}
    # new deposits and transfers are pending until signed off, by an administrator who did not record them
    out = led.deposit(B, JC, 1000, "JC-2025-1", quantification=quantification(tmp_path, "JC-2025-1", 1000))
    assert led.balance(B, JC)["balance_gpd"] == 13500 and led.balance(B, JC)["pending_in_gpd"] == 1000
    with pytest.raises(RefusedError, match="'Maria Lopez' recorded deposit JC-2025-1 .* no other administrator"):
        led.sign_off(out["txn"])
    led.add_administrator(CHECKER)
    with Ledger(v2, actor=CHECKER) as checker:
        checker.sign_off(out["txn"])
    assert led.balance(B, JC)["balance_gpd"] == 14500
    assert led.verify(check_files=False)["ok"]
    led.close()


def test_a_failed_migration_changes_nothing(v2, monkeypatch):
    """The migration is one transaction: a failure in its middle (here, while rebuilding the lots) rolls
    every step back, the new tables and columns included."""
    before = hashlib.sha256(v2.read_bytes()).hexdigest()

    def boom(self, c):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(Ledger, "_replay_lots", boom)
    with pytest.raises(RuntimeError, match="disk on fire"):
        Ledger(v2, actor=ADMIN, migrate=True, administrator=ADMIN)
    c = sqlite3.connect(str(v2))
    tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    cols = {r[1] for r in c.execute("PRAGMA table_info(withdrawals)")}
    c.close()
    assert _schema_version(v2) == "2" and "lots" not in tables and "node" not in cols
    assert hashlib.sha256(v2.read_bytes()).hexdigest() == before


def test_migrate_through_the_cli(v2, run_cli):
    res = run_cli("bank", "--db", str(v2), "balance")
    assert res.exit_code == 2 and "migrate" in res.stderr
    res = run_cli("bank", "--db", str(v2), "migrate", "--actor", ADMIN, "--administrator", ADMIN, "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["schema_version"] == 6 and out["unknown_origin_gpd"] == 5400 and out["pending_sign_off"] == 1
    assert out["verify"] is True
    res = run_cli("bank", "--db", str(v2), "verify", "--json")
    v = json.loads(res.stdout)
    # A-2024-1 cites run ids, as schema 2 allowed: kept as recorded, reported as such, nothing to re-hash
    assert res.exit_code == 0 and {r["status"] for r in v["refs"]} <= {"run id"}
    res = run_cli("bank", "--db", str(v2), "balance", "--basin", B, "--owner", DEV, "--lots")
    assert res.exit_code == 0 and "from project BG-2024-1 (jurisdiction City of Binghamton" in res.stdout


def _as_schema_5(path) -> None:
    """Turn a new (schema-6) bank into the schema-5 bank an older capacitysim wrote: without MIGRATION_6."""
    c = sqlite3.connect(str(path))
    c.executescript("""
        DROP TRIGGER withdrawals_parties_once; DROP TRIGGER projects_quantification_once;
        DROP TRIGGER certification_letters_no_delete; DROP TRIGGER certification_letters_no_update;
        DROP TRIGGER annual_reports_no_delete; DROP TRIGGER annual_reports_no_update;
        DROP TABLE certification_letters; DROP TABLE annual_reports;
        ALTER TABLE withdrawals DROP COLUMN applicant; ALTER TABLE withdrawals DROP COLUMN affected_owner;
        ALTER TABLE projects DROP COLUMN property; ALTER TABLE projects DROP COLUMN quantification_ref;
        ALTER TABLE projects DROP COLUMN quantification_sha256; ALTER TABLE projects DROP COLUMN quantified_gpd;
        ALTER TABLE projects DROP COLUMN pe_name; ALTER TABLE projects DROP COLUMN pe_license;
        UPDATE meta SET value = '5' WHERE key = 'schema_version';
    """)
    c.close()


def _as_schema_4(path) -> None:
    """Turn a new (schema-6) bank into the schema-4 bank an older capacitysim wrote: without MIGRATION_5 and 6."""
    _as_schema_5(path)
    c = sqlite3.connect(str(path))
    c.executescript("""
        DROP TRIGGER withdrawals_commitment_once; DROP TRIGGER applications_commitment_once;
        DROP TRIGGER system_models_no_delete; DROP TRIGGER system_models_no_update; DROP TABLE system_models;
        ALTER TABLE withdrawals DROP COLUMN average_gpd; ALTER TABLE withdrawals DROP COLUMN connected_on;
        ALTER TABLE withdrawals DROP COLUMN expired_on; ALTER TABLE withdrawals DROP COLUMN capacity_committed;
        ALTER TABLE withdrawals DROP COLUMN spdes_committed; ALTER TABLE applications DROP COLUMN average_gpd;
        ALTER TABLE applications DROP COLUMN connected_on; ALTER TABLE applications DROP COLUMN expired_on;
        ALTER TABLE applications DROP COLUMN approved_on;
        UPDATE meta SET value = '4' WHERE key = 'schema_version';
    """)
    c.close()


def _as_schema_3(path) -> None:
    """Turn a new (schema-6) bank into the schema-3 bank an older capacitysim wrote: without MIGRATION_4 and 5."""
    _as_schema_4(path)
    c = sqlite3.connect(str(path))
    c.executescript("""
        DROP TRIGGER bindings_by_administrator; DROP TRIGGER bindings_close_only; DROP TRIGGER bindings_no_delete;
        DROP TRIGGER withdrawals_evidence_once; DROP TRIGGER withdrawals_evidence_once_attach;
        DROP INDEX withdrawals_capacity_sha256; DROP INDEX withdrawals_spdes_sha256; DROP TABLE bindings;
        UPDATE meta SET value = '3' WHERE key = 'schema_version';
    """)
    c.close()


def test_a_schema_3_bank_is_migrated_to_4_by_an_administrator(tmp_path, run_cli):
    """A schema-3 bank is refused until migrated; the migration to 4 is by a registered administrator, one
    ``migrate`` journal row, the old head still verifies; then bindings and the single use of evidence apply."""
    path = tmp_path / "bank.sqlite"
    with Ledger(path, create=True, actor=ADMIN, administrator=ADMIN) as led:
        led.add_entity(JC, municipal=True)
        head = led.head()["head"]
    _as_schema_3(path)
    with pytest.raises(InputError, match="schema version 3.*bank --db .* migrate --actor NAME"):
        Ledger(path)
    res = run_cli("bank", "--db", str(path), "balance")
    assert res.exit_code == 2 and "migrate" in res.stderr
    with pytest.raises(RefusedError, match="'Jo Clerk' is not a registered bank administrator"):
        Ledger(path, actor="Jo Clerk", migrate=True)
    assert _schema_version(path) == "3"
    res = run_cli("bank", "--db", str(path), "migrate", "--actor", ADMIN, "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["schema_version"] == 6 and _schema_version(path) == "6"
    with Ledger(path, actor=ADMIN) as led:
        row = led.journal()[-1]
        assert row["action"] == "migrate" and row["actor"] == ADMIN and (row["detail"]["from"], row["detail"]["to"]) == (3, 6)
        v = led.verify(expect_head=head)
        assert v["ok"] and v["expected_head"]["found"], v
        assert led.bind_user("Mia Municipal", JC, role="municipal")["entity"] == JC
        assert led.acts_for("Mia Municipal", JC)
    # migrating again is a no-op
    with Ledger(path, actor=ADMIN, migrate=True) as led:
        assert [r["action"] for r in led.journal()].count("migrate") == 1


def test_a_schema_4_bank_is_migrated_to_5_keeping_its_records(tmp_path, run_cli):
    """A schema-4 bank (before the capacity register) is refused until migrated; the migration adds the registered
    models and the committed-flow columns in one ``migrate`` row; the old head still verifies; a withdrawal recorded
    before it is a commitment with its peak as its average (program policy commitment_average)."""
    path = tmp_path / "bank.sqlite"
    with Ledger(path, create=True, actor=ADMIN, administrator=ADMIN) as led:
        led.add_entity(JC, municipal=True)
        led.add_basin("CSO1", outlet="MH0004")
        led.record_application("APP-1", JC, 2000, basin="CSO1", node="MH0010")
        head = led.head()["head"]
    _as_schema_4(path)
    with pytest.raises(InputError, match="schema version 4.*migrate --actor NAME"):
        Ledger(path)
    res = run_cli("bank", "--db", str(path), "migrate", "--actor", ADMIN, "--json")
    assert res.exit_code == 0, res.output
    assert _schema_version(path) == "6"
    with Ledger(path, actor=ADMIN) as led:
        row = led.journal()[-1]
        assert row["action"] == "migrate" and (row["detail"]["from"], row["detail"]["to"]) == (4, 6)
        assert led.verify(expect_head=head)["ok"]
        app = led.application("APP-1")
        assert app["average_gpd"] is None and app["connected_on"] is None and led.models() == []
