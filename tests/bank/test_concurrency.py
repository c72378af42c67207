"""Real processes on one bank file: concurrent withdrawals never overdraw; SIGKILL leaves it consistent."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from capacitysim.bank import Ledger
from tests.bank_support import quantification

WORKER = Path(__file__).with_name("bank_worker.py")
B, JC, DEV = "JC CSO 4", "Village of Johnson City", "Acme Development"

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")


ADMINISTRATOR = "Ada Lee"  # bank_worker.ADMINISTRATOR
CHECKER = "Cora Checker"  # bank_worker.CHECKER: signs off what ADMINISTRATOR records (program policy signoff_separation)


def _bank(path, deposit_gpd):
    led = Ledger(path, create=True, actor=ADMINISTRATOR, administrator=ADMINISTRATOR)
    led.add_administrator(CHECKER)
    led.add_entity(JC, municipal=True)
    led.add_entity(DEV)
    led.add_basin(B)
    txn = led.deposit(B, JC, deposit_gpd, "P-SEED",
                      quantification=quantification(Path(path).parent, "P-SEED", deposit_gpd))["txn"]
    led.close()
    with Ledger(path, actor=CHECKER) as checker:
        checker.sign_off(txn)


def _spawn(*args):
    return subprocess.Popen([sys.executable, str(WORKER), *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_many_processes_withdrawing_at_once_never_overdraw(tmp_path):
    db, go = tmp_path / "bank.sqlite", tmp_path / "go"
    deposit = 60_000  # about 20 withdrawals of 2,501-3,500 gpd; 6 x 12 = 72 are attempted
    _bank(db, deposit)
    procs = [_spawn("withdraw", db, f"W{k}", 12, k, go) for k in range(6)]
    time.sleep(0.3)
    go.touch()  # release them together
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        results.append(json.loads(out))
    ok = {app: gpd for r in results for app, gpd in r["ok"].items()}
    refused = [gpd for r in results for gpd in r["refused"]]
    assert len(ok) + len(refused) == 72 and refused, "the demand must exceed the deposit"
    with Ledger(db) as led:
        balance = led.balance(B, JC)["balance_gpd"]
        assert balance == deposit - sum(ok.values()) >= 0
        # every refusal was for lack of credits: the balance only falls, so it ends below each refused amount
        assert balance < min(refused)
        rows = [w for w in led.withdrawals()]
        assert {w["application"]: w["amount_gpd"] for w in rows} == ok
        withdraw_rows = [j for j in led.journal() if j["action"] == "withdraw"]
        assert len(withdraw_rows) == len(ok)
        assert sum(j["delta_gpd"] for j in led.journal() if j["owner"] == JC) == balance
        assert len({j["actor"] for j in withdraw_rows}) > 1  # each process names its own person
        assert all(j["actor"].startswith("Worker ") for j in withdraw_rows)
        # every withdrawal is pending the administrator's sign-off, its credits reserved (program policy pending_reserve)
        assert {p["ref"] for p in led.pending()} == set(ok)
        assert sum(x["gpd"] for x in led.lots()) == balance  # the lots hold exactly the balance
        v = led.verify()
        assert v["ok"], v


def test_sigkill_inside_a_transaction_rolls_back(tmp_path):
    db = tmp_path / "bank.sqlite"
    _bank(db, 10_000)
    with Ledger(db) as led:
        journal_before = len(led.journal())
    p = _spawn("hold", db)
    assert p.stdout.readline().strip() == "inside"  # the balance change and its journal row are written, uncommitted
    os.kill(p.pid, signal.SIGKILL)
    p.wait(timeout=30)
    assert p.returncode == -signal.SIGKILL
    with Ledger(db, timeout_s=10, actor=ADMINISTRATOR) as led:
        assert led.balance(B, JC)["balance_gpd"] == 10_000
        assert len(led.journal()) == journal_before
        assert led.verify()["ok"]
        led.withdraw(B, JC, 3000, "after-crash", node="MH-1")  # the write lock died with the process
        assert led.balance(B, JC)["balance_gpd"] == 7000


def test_sigkill_mid_batch_leaves_the_books_consistent(tmp_path):
    db = tmp_path / "bank.sqlite"
    _bank(db, 1_000_000)
    with Ledger(db) as led:
        seeded = len(led.journal())  # the seed deposit and its sign-off are not the worker's
    p = _spawn("batch", db, "K")
    done = []
    while len(done) < 25:
        line = p.stdout.readline()
        assert line, p.stderr.read()
        done.append(line.strip())
    os.kill(p.pid, signal.SIGKILL)
    p.wait(timeout=30)
    # the worker went on between our last read and the kill: what it reported meanwhile is still in the pipe
    done += [line.strip() for line in p.stdout.read().splitlines() if line.strip()]
    with Ledger(db, timeout_s=10) as led:
        v = led.verify()
        assert v["ok"], v
        journal = led.journal()[seeded:]
        committed = [j for j in journal if j["action"] in ("withdraw", "transfer-out", "sign-off", "return")]
        # every operation the worker reported is committed; at most the one in flight when killed is extra
        assert len(done) <= len(committed) <= len(done) + 1
        held = led.balance(B, JC)["balance_gpd"] + led.balance(B, DEV)["balance_gpd"]
        reserved = sum(w["amount_gpd"] for w in led.withdrawals() if w["status"] == "pending")
        in_transit = sum(p["amount_gpd"] for p in led.pending() if p["kind"] == "transfer")  # killed before its sign-off
        assert held + reserved + in_transit == 1_000_000 and v["in_transit_gpd"] == in_transit
        assert led.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
