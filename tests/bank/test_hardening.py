"""Issue 12 on the credit bank: no input clobbered, no verdict spoofed, no traceback, tamper evidence.

Real SQLite files and the real CLI (click's CliRunner); a tamperer uses the sqlite3 module as they
would use the sqlite3 shell.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import random
import sqlite3
from pathlib import Path

import pytest

from capacitysim.bank import Ledger
from capacitysim.bank.ledger import journal_hash
from capacitysim.errors import InputError
from tests.bank_support import quantification

B, JC, DEV = "JC CSO 4", "Village of Johnson City", "Acme Development"
CLERK = "Cal Clerk"  # the person acting, registered as bank administrator at init
CHECKER = "Cora Checker"  # a second administrator: signs off what the clerk records (program policy signoff_separation)


def sign_off_all(run):
    """The checker signs off every deposit and transfer awaiting it (withdrawals stay pending)."""
    for p in json.loads(run("pending", "--json").stdout)["pending"]:
        if p["kind"] != "withdrawal":
            res = run("sign-off", p["txn"], "--actor", CHECKER)
            assert res.exit_code == 0, res.output


@pytest.fixture
def bank(tmp_path, run_cli):
    """A bank with some history, driven through the CLI; ``bank.db`` is its file."""
    db = tmp_path / "bank.sqlite"

    def run(*args):
        return run_cli("bank", "--db", str(db), "--actor", CLERK, *args)

    for args in (("init", "--administrator", CLERK), ("add-administrator", CHECKER), ("add-entity", JC, "--municipal"),
                 ("add-entity", DEV),
                 ("add-basin", B), ("deposit", "--basin", B, "--owner", JC, "--gpd", "9000", "--project", "P1",
                                    "--quantification", quantification(tmp_path, "P1", 9000)),
                 ("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A1", "--node", "MH0001"),
                 ("transfer", "--basin", B, "--from", JC, "--to", DEV, "--gpd", "1000", "--document", "bill 1")):
        res = run(*args)
        assert res.exit_code == 0, res.output
        if args[0] in ("deposit", "transfer"):
            sign_off_all(run)
    run.db = db
    run.tmp = tmp_path
    return run


def one_line_error(res, code, word=""):
    assert res.exit_code == code, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and word in lines[0], res.stderr
    assert "Traceback" not in res.output


def digest(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def drop_guards(c):
    for (name,) in c.execute("SELECT name FROM sqlite_master WHERE type='trigger'").fetchall():
        c.execute(f"DROP TRIGGER {name}")


# --- 1. an output never replaces the bank file -----------------------------------------------------------


@pytest.mark.parametrize("target", ["bank.sqlite", "bank.sqlite-wal", "bank.sqlite-shm", "bank.sqlite-journal",
                                    "sub/../bank.sqlite", "link.csv", "folder"])
def test_journal_csv_refuses_the_bank_its_side_files_links_and_folders(bank, target):
    (bank.tmp / "sub").mkdir()
    (bank.tmp / "folder").mkdir()
    (bank.tmp / "elsewhere.csv").write_text("keep me\n")
    (bank.tmp / "link.csv").symlink_to(bank.tmp / "elsewhere.csv")
    before = digest(bank.db)
    res = bank("journal", "--csv", str(bank.tmp / target))
    one_line_error(res, 2, "--csv")
    assert digest(bank.db) == before and (bank.tmp / "elsewhere.csv").read_text() == "keep me\n"
    assert bank("verify").exit_code == 0


def test_journal_csv_refuses_a_relative_path_and_a_hard_link_to_the_bank(bank, monkeypatch):
    monkeypatch.chdir(bank.tmp)
    one_line_error(bank("journal", "--csv", "bank.sqlite"), 2, "--csv")
    os.link(bank.db, bank.tmp / "alias.csv")
    one_line_error(bank("journal", "--csv", "alias.csv"), 2, "hard link")
    assert bank("verify").exit_code == 0


def test_report_refuses_to_write_over_the_bank(tmp_path, run_cli):
    out = tmp_path / "rep"
    out.mkdir()
    db = out / "journal.csv"  # a bank file that happens to carry the name of a report table

    def run(*args):
        return run_cli("bank", "--db", str(db), "--actor", CLERK, *args)

    assert run("init", "--administrator", CLERK).exit_code == 0
    assert run("add-entity", JC, "--municipal").exit_code == 0
    before = digest(db)
    one_line_error(run("report", "--out", str(out)), 2, "--out")
    assert digest(db) == before and run("verify").exit_code == 0
    # a report file that is a symlink, or an --out that is one, is refused too
    other = tmp_path / "other"
    other.mkdir()
    (other / "report.html").symlink_to(tmp_path / "victim.txt")
    one_line_error(run("report", "--out", str(other)), 2, "symbolic link")
    (tmp_path / "linkdir").symlink_to(other)
    one_line_error(run("report", "--out", str(tmp_path / "linkdir")), 2, "symbolic link")
    assert not (tmp_path / "victim.txt").exists()
    assert run("report", "--out", str(tmp_path / "fine")).exit_code == 0


def _capacity_doc(node="MH0001", flow=5000.0, **extra) -> dict:
    """The keys of `capacitysim capacity --json` the bank reads (a real run is in tests/cli/test_bank_cli.py)."""
    return {"kind": "capacity-demonstration", "verdict": "pass", "model": "/models/m.inp",
            "scenario": {"connections": [{"node": node, "flow_gpd": flow}]},
            "external_files": [{"verb": "MODEL", "path": "/models/m.inp", "sha256": "ab" * 32}], **extra}


def test_outputs_never_replace_a_report_file_a_withdrawal_cites(bank):
    rep = bank.tmp / "rep"
    rep.mkdir()
    cited = rep / "journal.csv"  # evidence that happens to sit where a report table would go
    cited.write_text(json.dumps(_capacity_doc()))
    assert bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A2", "--node", "MH0001",
                "--capacity-ref", str(cited)).exit_code == 0
    before = digest(cited)
    one_line_error(bank("journal", "--csv", str(cited)), 2, "--csv")
    one_line_error(bank("report", "--out", str(rep)), 2, "--out")
    assert digest(cited) == before and bank("verify").exit_code == 0


def test_the_model_sha256_is_read_from_external_files_or_model(tmp_path):
    from capacitysim.bank.refs import resolve_ref

    p = tmp_path / "cap.json"
    p.write_text(json.dumps(_capacity_doc()))
    out = resolve_ref("capacity", str(p), gpd=4000, node="MH0001")
    assert out["model_sha256"] == "ab" * 32 and out["model"] == "/models/m.inp"
    assert out["connection"] == {"node": "MH0001", "flow_gpd": 5000.0}
    p.write_text(json.dumps(_capacity_doc(external_files=[], model={"path": "m.inp", "sha256": "cd" * 32})))
    assert resolve_ref("capacity", str(p), gpd=4000)["model_sha256"] == "cd" * 32
    p.write_text(json.dumps(_capacity_doc(external_files=[{"verb": "MODEL", "sha256": "not a hash"}])))
    with pytest.raises(InputError, match="64 lowercase hex"):
        resolve_ref("capacity", str(p), gpd=4000)


# --- 3. tamper evidence: the head kept outside the bank ------------------------------------------------


def _rows(db):
    c = sqlite3.connect(str(db))
    c.row_factory = sqlite3.Row
    rows = c.execute("SELECT * FROM journal ORDER BY seq").fetchall()
    c.close()
    return rows


def test_head_prints_the_hash_row_count_and_time_of_the_last_row(bank):
    res = bank("head", "--json")
    assert res.exit_code == 0, res.output
    h = json.loads(res.stdout)
    rows = _rows(bank.db)
    assert h == {"head": rows[-1]["hash"], "rows": len(rows), "last_seq": rows[-1]["seq"], "last_at": rows[-1]["at"]}
    text = bank("head").stdout
    assert rows[-1]["hash"] in text and f"{len(rows)}" in text and rows[-1]["at"] in text


def _rewrite_consistently(db, seq, reason):
    """What someone with write access does: drop the triggers, edit history, recompute every hash after it."""
    c = sqlite3.connect(str(db), isolation_level=None)
    c.row_factory = sqlite3.Row
    drop_guards(c)
    c.execute("UPDATE journal SET reason=? WHERE seq=?", (reason, seq))
    prev = None
    for r in c.execute("SELECT * FROM journal ORDER BY seq").fetchall():
        row = dict(r)
        if prev is not None:
            row["prev_hash"] = prev
        row["hash"] = journal_hash(row)
        c.execute("UPDATE journal SET prev_hash=?, hash=? WHERE seq=?", (row["prev_hash"], row["hash"], row["seq"]))
        prev = row["hash"]
    c.execute("UPDATE meta SET value=? WHERE key='journal_head'", (prev,))
    c.close()


def test_verify_expect_head_detects_a_consistent_rewrite_that_plain_verify_cannot(bank):
    anchor = json.loads(bank("head", "--json").stdout)["head"]
    assert bank("deposit", "--basin", B, "--owner", JC, "--gpd", "500", "--project", "P2",
                "--quantification", quantification(bank.tmp, "P2", 500)).exit_code == 0
    sign_off_all(bank)
    assert bank("verify", "--expect-head", anchor).exit_code == 0
    assert bank("verify", "--expect-head", anchor.upper(), "--json").exit_code == 0
    current = json.loads(bank("head", "--json").stdout)["head"]
    res = bank("verify", "--expect-head", current, "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["expected_head"]["found"]
    _rewrite_consistently(bank.db, 3, "history rewritten")
    assert bank("verify").exit_code == 0  # the limitation the docs state: a consistent rewrite passes without an anchor
    res = bank("verify", "--expect-head", anchor, "--json")
    assert res.exit_code == 1
    v = json.loads(res.stdout)
    assert v["expected_head"] == {"hash": anchor, "found": False, "seq": None}
    assert any("is not the hash of any row of the journal chain" in p for p in v["problems"])
    assert "NOT FOUND" in bank("verify", "--expect-head", anchor).stdout


def test_verify_expect_head_names_the_first_row_where_the_chain_no_longer_leads_to_it(bank):
    rows = _rows(bank.db)
    anchor = rows[-1]["hash"]
    c = sqlite3.connect(str(bank.db), isolation_level=None)
    c.row_factory = sqlite3.Row
    drop_guards(c)
    # row 2 edited and its own hash recomputed; the rows after it, up to the anchor, left as they were
    c.execute("UPDATE journal SET reason='edited' WHERE seq=2")
    r2 = c.execute("SELECT * FROM journal WHERE seq=2").fetchone()
    c.execute("UPDATE journal SET hash=? WHERE seq=2", (journal_hash(r2),))
    c.close()
    res = bank("verify", "--expect-head", anchor, "--json")
    assert res.exit_code == 1
    v = json.loads(res.stdout)
    assert v["expected_head"]["found"] and v["expected_head"]["seq"] == rows[-1]["seq"]
    assert any("the chain no longer leads to it: it breaks at journal row 3" in p for p in v["problems"]), v["problems"]


@pytest.mark.parametrize("value", ["abc", "0" * 63, "g" * 64, "0" * 65])
def test_expect_head_must_be_a_sha256(bank, value):
    one_line_error(bank("verify", "--expect-head", value), 2, "64 hexadecimal digits")


def test_annual_report_prints_the_head_to_keep(bank):
    out = bank.tmp / "rep"
    res = bank("report", "--out", str(out), "--json")
    assert res.exit_code == 0, res.output
    head = json.loads(bank("head", "--json").stdout)
    assert json.loads(res.stdout)["head"] == head
    html = (out / "report.html").read_text()
    assert head["head"] in html and head["last_at"] in html and f"--expect-head {head['head']}" in html


def test_help_says_what_verify_cannot_detect_without_an_anchor(run_cli):
    text = " ".join(run_cli("bank", "verify", "--help").stdout.split())
    assert "consistent rewrite" in text and "--expect-head" in text
    import capacitysim.bank.ledger as ledger_module

    assert "cannot** detect a *consistent* rewrite" in ledger_module.__doc__


# --- 4. actor from the environment; CSV formula injection -------------------------------------------------


@pytest.mark.parametrize("value", ["evil\n     9 2024-01-01 forged", "Zero\u200bWidth Name", "Jane " + "x" * 501, "   ",
                                   "root", "jsmith", "Bank Administrator", "J. Smith 2"])
def test_capacitysim_actor_is_validated_like_the_actor_option(bank, run_cli, monkeypatch, value):
    monkeypatch.setenv("CAPACITYSIM_ACTOR", value)
    before = digest(bank.db)
    res = run_cli("bank", "--db", str(bank.db), "add-entity", "Someone")
    one_line_error(res, 2, "CAPACITYSIM_ACTOR")
    assert digest(bank.db) == before
    with pytest.raises(InputError, match="CAPACITYSIM_ACTOR"):
        Ledger(bank.db)


def test_capacitysim_actor_when_valid_is_recorded(bank, run_cli, monkeypatch):
    monkeypatch.setenv("CAPACITYSIM_ACTOR", "Jane Clerk")
    assert run_cli("bank", "--db", str(bank.db), "add-entity", "Someone").exit_code == 0
    assert _rows(bank.db)[-1]["actor"] == "Jane Clerk"


def test_csv_exports_neutralise_spreadsheet_formulas(bank):
    assert bank("add-entity", "--reason", "+cmd|' /C calc'!A0", "--", "@SUM(A1)").exit_code == 0
    assert bank("add-entity", "--reason", "\tleading tab", "--", "-5").exit_code == 0
    assert bank("transfer", "--basin", B, "--from", JC, "--to", "@SUM(A1)", "--gpd", "10", "--reason", "-2+3",
                "--document", '=HYPERLINK("http://x","y")').exit_code == 0
    assert bank("deposit", "--basin", B, "--owner", JC, "--gpd", "400", "--project", "=1+1", "--reason", "-1.5e3",
                "--quantification", quantification(bank.tmp, "=1+1", 400)).exit_code == 0
    sign_off_all(bank)
    path = bank.tmp / "journal.csv"
    assert bank("journal", "--csv", str(path)).exit_code == 0
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    cells = [cell for r in rows for cell in r.values()]
    assert not [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r")]
    dashed = {c for c in cells if c.startswith("-")}
    assert dashed == {"-3000", "-1000", "-10", "-1.5e3"}  # numbers stay numbers
    for forged in ("'+cmd|", "'\tleading tab", "'-2+3", "'=HYPERLINK(", "'@SUM(A1)", "'=1+1"):
        assert any(c.startswith(forged) for c in cells), forged
    # the annual report's CSV tables too
    assert bank("report", "--out", str(bank.tmp / "rep")).exit_code == 0
    with (bank.tmp / "rep" / "b_completed_projects.csv").open(newline="") as fh:
        assert "'=1+1" in [r["project"] for r in csv.DictReader(fh)]
    with (bank.tmp / "rep" / "balances.csv").open(newline="") as fh:
        assert "'@SUM(A1)" in [r["owner"] for r in csv.DictReader(fh)]


def test_csv_cell_keeps_numbers():
    from capacitysim.report.bank import csv_cell, rows_to_csv

    assert [csv_cell(v) for v in (-5, -1.5, "-5", "-1.5e3", "+7", "5", None)] == [-5, -1.5, "-5", "-1.5e3", "+7", "5", ""]
    assert [csv_cell(v) for v in ("-", "-x", "=1", "@a", "\r1", "- 5", "-5e")] == ["'-", "'-x", "'=1", "'@a", "'\r1", "'- 5",
                                                                                    "'-5e"]
    assert rows_to_csv([{"a": "=1", "b": -2}], ["a", "b"]) == "a,b\n'=1,-2\n"


# --- 5. no traceback: tampered values, foreign files, random bytes -------------------------------------------


def _unconstrained(db):
    """Recreate the journal and subaccounts without constraints (sqlite3 shell: CREATE TABLE AS, DROP, RENAME)."""
    c = sqlite3.connect(str(db), isolation_level=None)
    drop_guards(c)
    c.execute("PRAGMA foreign_keys = OFF")
    for t in ("journal", "subaccounts"):
        c.execute(f"CREATE TABLE {t}_x AS SELECT * FROM {t}")
        c.execute(f"DROP TABLE {t}")
        c.execute(f"ALTER TABLE {t}_x RENAME TO {t}")
    return c


@pytest.mark.parametrize(("sql", "word"), [
    ("UPDATE journal SET delta_gpd = 'lots' WHERE action = 'deposit'", "delta_gpd holds text 'lots'"),
    ("UPDATE journal SET delta_gpd = NULL WHERE action = 'withdraw'", "delta_gpd holds null NULL"),
    ("UPDATE journal SET detail = X'00FF' WHERE action = 'transfer-in'", "detail holds blob X'00FF'"),
    ("UPDATE journal SET at = NULL WHERE action = 'init'", "at holds null NULL"),
    ("UPDATE journal SET balance_after = 'x' WHERE action = 'deposit'", "balance_after holds text 'x'"),
    ("UPDATE subaccounts SET balance_gpd = 'a lot'", "balance_gpd holds text 'a lot'"),
    ("UPDATE journal SET documents = 'not json' WHERE action = 'transfer-out'", "content does not match its hash"),
])
def test_verify_names_a_row_edited_to_a_wrong_type_instead_of_crashing(bank, sql, word):
    c = _unconstrained(bank.db)
    c.execute(sql)
    c.close()
    res = bank("verify", "--json")
    assert res.exit_code == 1, res.output
    problems = json.loads(res.stdout)["problems"]
    assert any(word in p for p in problems), problems
    assert any(p.startswith(("journal row", "subaccounts id")) for p in problems), problems
    # the other commands read the same file without a traceback either
    for args in (("journal",), ("journal", "--json"), ("balance",), ("head",), ("report", "--out", str(bank.tmp / "r")),
                 ("journal", "--csv", str(bank.tmp / "j.csv"))):
        res = bank(*args)
        assert res.exit_code in (0, 1, 2), res.output
        assert res.exit_code == 0 or len(res.stderr.strip().splitlines()) == 1, res.stderr


def test_init_refuses_a_foreign_sqlite_file_and_leaves_it_untouched(tmp_path, run_cli):
    db = tmp_path / "accounts.db"
    c = sqlite3.connect(str(db))
    c.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    c.execute("CREATE TABLE meta (key TEXT, value TEXT)")  # a common table name is not a bank
    c.execute("INSERT INTO customers(name) VALUES ('Ann')")
    c.commit()
    c.close()
    before = digest(db)
    for args in (("init", "--administrator", CLERK), ("balance",), ("verify",), ("head",)):
        res = run_cli("bank", "--db", str(db), "--actor", CLERK, *args)
        one_line_error(res, 2, "not a capacitysim credit bank")
    assert digest(db) == before
    assert sorted(os.listdir(tmp_path)) == ["accounts.db"]  # no -wal/-shm left behind: never switched to WAL


@pytest.mark.parametrize("kind", ["random", "sqlite-header", "tiny", "text"])
@pytest.mark.parametrize("command", [("init", "--administrator", CLERK), ("verify",), ("balance",), ("journal",), ("head",),
                                     ("report", "--out", "R")])
def test_bank_commands_on_a_file_that_is_not_sqlite_exit_2_with_one_line(tmp_path, run_cli, kind, command):
    rng = random.Random(12)
    data = {"random": bytes(rng.randrange(256) for _ in range(8192)),
            "sqlite-header": b"SQLite format 3\x00" + bytes(rng.randrange(256) for _ in range(8192)),
            "tiny": b"\x00\x01",
            "text": b"seq,txn,at\n1,2,3\n" * 200}[kind]
    db = tmp_path / "bank.sqlite"
    db.write_bytes(data)
    command = tuple(str(tmp_path / a) if a == "R" else a for a in command)
    res = run_cli("bank", "--db", str(db), "--actor", CLERK, *command)
    one_line_error(res, 2)
    assert db.read_bytes() == data


def test_a_damaged_bank_is_one_line_and_verify_says_so(bank, run_cli):
    data = bank.db.read_bytes()
    assert len(data) > 8192
    damaged = bytearray(data)
    damaged[4096:8192] = bytes(random.Random(3).randrange(256) for _ in range(4096))  # page 2 overwritten
    bank.db.write_bytes(bytes(damaged))
    for args in (("verify",), ("balance",), ("journal",), ("head",), ("add-entity", "X")):
        res = bank(*args)
        assert res.exit_code in (1, 2), res.output
        assert "Traceback" not in res.output
        if res.stderr.strip():
            assert len(res.stderr.strip().splitlines()) == 1, res.stderr


def test_a_new_bank_file_is_private_to_its_owner(tmp_path):
    """The ledger names people and holds the evidence's hashes: 0600 from its creation (issue 23), its WAL too."""
    import os
    import stat

    from capacitysim.bank import Ledger

    path = tmp_path / "new" / "bank.sqlite"
    with Ledger(path, create=True, administrator="Ann B. Administrator", actor="Ann B. Administrator"):
        pass
    for f in path.parent.iterdir():
        assert stat.S_IMODE(os.stat(f).st_mode) == 0o600, f
