"""``capacitysim users add``: a token printed once, stored only as its SHA-256; administrators in the bank."""

from __future__ import annotations

import hashlib
import sqlite3
import stat
import subprocess

from support import CLI

from capacitysim.bank import Ledger
from capacitysim.service.auth import user_for_token
from capacitysim.service.store import Store


def users(*args):
    return subprocess.run([*CLI, "users", *args], capture_output=True, text=True)


def test_token_is_printed_once_and_stored_only_as_a_hash(tmp_path):
    r = users("add", "Jane Q. Smith", "--role", "engineer", "--data", str(tmp_path))
    assert r.returncode == 0, r.stderr
    token = r.stdout.strip()
    assert token.startswith("cs1.") and len(token.split(".")) == 3
    raw = (tmp_path / "service.sqlite").read_bytes()
    secret = token.split(".")[2]
    assert secret.encode() not in raw and token.encode() not in raw
    rows = sqlite3.connect(tmp_path / "service.sqlite").execute("SELECT name, role, token_sha256 FROM users").fetchall()
    assert rows == [("Jane Q. Smith", "engineer", hashlib.sha256(secret.encode()).hexdigest())]
    store = Store(tmp_path / "service.sqlite")
    assert user_for_token(store, token)["name"] == "Jane Q. Smith"
    assert user_for_token(store, token[:-1] + ("A" if token[-1] != "A" else "B")) is None
    assert user_for_token(store, None) is None and user_for_token(store, "x" * 500) is None
    # the same name twice is refused (exit 3); a login name is not a person's name (exit 2); roles are four
    assert users("add", "jane q. smith", "--role", "reviewer", "--data", str(tmp_path)).returncode == 3
    assert users("add", "root", "--role", "engineer", "--data", str(tmp_path)).returncode == 2
    assert users("add", "Joe Bloggs", "--role", "superuser", "--data", str(tmp_path)).returncode == 2
    listed = users("list", "--data", str(tmp_path), "--json")
    assert listed.returncode == 0 and "Jane Q. Smith" in listed.stdout and token not in listed.stdout


def test_administrators_are_registered_in_the_bank(tmp_path):
    assert users("add", "Ada Lee", "--role", "administrator", "--data", str(tmp_path)).returncode == 0
    assert users("add", "Bo Chen", "--role", "administrator", "--data", str(tmp_path)).returncode == 0
    for name in ("bank.sqlite", "service.sqlite"):  # the bank and the store: owner only
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600, name
    with Ledger(tmp_path / "bank.sqlite") as lg:
        admins = lg.administrators()
        assert [a["name"] for a in admins] == ["Ada Lee", "Bo Chen"]
        assert admins[1]["registered_by"] == "Ada Lee"
        assert lg.verify()["ok"]


def test_revoke_refuses_the_token_and_is_journaled(tmp_path):
    token = users("add", "Jane Q. Smith", "--role", "reviewer", "--data", str(tmp_path)).stdout.strip()
    store = Store(tmp_path / "service.sqlite")
    assert user_for_token(store, token)["name"] == "Jane Q. Smith"
    r = users("revoke", "jane q. smith", "--data", str(tmp_path))
    assert r.returncode == 0 and "revoked" in r.stderr, r.stderr
    assert user_for_token(store, token) is None  # the app answers 401 for it
    row = [x for x in store.journal_rows() if x["action"] == "revoke-user"][0]
    assert row["target"] == "Jane Q. Smith" and row["role"] == "operator" and "capacitysim users revoke" in row["user_name"]
    again = users("revoke", "Jane Q. Smith", "--data", str(tmp_path))
    assert again.returncode == 3 and "revoked already" in again.stderr
    unknown = users("revoke", "Nobody Here", "--data", str(tmp_path))
    assert unknown.returncode == 2 and "NAME: no user named 'Nobody Here'" in unknown.stderr
    listed = users("list", "--data", str(tmp_path))
    assert "Jane Q. Smith" in listed.stdout and "(revoked)" in listed.stdout
    bad = users("revoke", "Jane Q. Smith", "--data", str(tmp_path), "--database", "oracle://x/y")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--database" in bad.stderr
