"""A new bank's schema and its first administrator (capacitysim.bank.ledger_migration); migrations of older banks: test_migration.py."""

from __future__ import annotations

import pytest

from capacitysim.bank import Ledger
from capacitysim.bank.ledger_migration import _split_sql
from capacitysim.bank.schema import SCHEMA_VERSION
from capacitysim.errors import InputError, RefusedError
from tests.bank.test_ledger import TESTER  # the ledger's shared test helpers

#: entries are recorded on their own days (program policy no_backdating): tests/conftest.py bank_calendar
pytestmark = pytest.mark.usefixtures("bank_calendar")


def test_the_schema_splits_into_statements_keeping_a_trigger_whole():
    script = """-- a comment
CREATE TABLE t(x INTEGER);

CREATE TRIGGER t_guard BEFORE DELETE ON t BEGIN
    SELECT RAISE(ABORT, 'no; never');
    SELECT 1;
END;
"""
    stmts = _split_sql(script)
    assert len(stmts) == 2 and stmts[1].startswith("CREATE TRIGGER") and stmts[1].endswith("END;")


def test_a_new_bank_has_the_current_schema_and_its_first_administrator(tmp_path):
    path = tmp_path / "new.sqlite"
    with pytest.raises(InputError, match="a new bank needs its first bank administrator"):
        Ledger(path, create=True, actor=TESTER)
    led = Ledger(path, create=True, actor=TESTER, administrator=TESTER)
    assert led.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    assert [r["action"] for r in led.journal()] == ["init", "add-administrator"]
    led.close()
    with pytest.raises(RefusedError, match="already has its bank administrator"):
        Ledger(path, create=True, actor=TESTER, administrator="Other Person")
    Ledger(path, migrate=True, actor=TESTER).close()  # the current schema: nothing to migrate
    assert len(Ledger(path).journal()) == 2
