"""A separate process acting on the credit bank, for the concurrency and crash tests (and the benchmark).

Usage: python bank_worker.py MODE DB [ARGS...]
  withdraw DB PREFIX N SEED GO_FILE  - try N withdrawals of 2,501-3,500 gpd from (basin B, JC); print JSON
  hold DB                            - open a transaction, move credits, print "inside", sleep (to be killed)
  batch DB PREFIX                    - endless withdraw/return/transfer+sign-off cycle, one line per committed operation

The journal names a person (issue 14): each worker acts as "Worker <letters of its process id>" (so the
concurrency test can tell writers apart); the batch worker records as the bank administrator registered
by the test (``ADMINISTRATOR``) and signs its transfers off as the second one (``CHECKER``: nobody signs off
what they recorded, program policy signoff_separation).
"""

from __future__ import annotations

import json
import os
import random
import sys
import time

from capacitysim.bank import Ledger
from capacitysim.errors import RefusedError

B, JC, DEV = "JC CSO 4", "Village of Johnson City", "Acme Development"
NODE = "MH-1"
ADMINISTRATOR = "Ada Lee"
CHECKER = "Cora Checker"


def worker_name(pid: int) -> str:
    """A person-like name unique to a process: 'Worker' and the process id spelt in letters (1234 -> 'Bcde')."""
    letters = "".join(chr(ord("a") + int(d)) for d in str(pid))
    return f"Worker {letters.capitalize()}"


def main(argv):
    mode, db = argv[0], argv[1]
    led = Ledger(db, actor=ADMINISTRATOR if mode == "batch" else worker_name(os.getpid()), timeout_s=120)
    if mode == "withdraw":
        prefix, n, seed, go = argv[2], int(argv[3]), int(argv[4]), argv[5]
        rng = random.Random(seed)
        while not os.path.exists(go):
            time.sleep(0.005)
        ok, refused = {}, []
        t0 = time.time()
        for i in range(n):
            amount = rng.randint(2501, 3500)
            app = f"{prefix}-{i}"
            try:
                led.withdraw(B, JC, amount, app, node=NODE)
                ok[app] = amount
            except RefusedError:
                refused.append(amount)
        print(json.dumps({"ok": ok, "refused": refused, "t0": t0, "t1": time.time()}), flush=True)
    elif mode == "hold":
        with led._tx() as c:
            sub = c.execute("SELECT id FROM subaccounts ORDER BY id LIMIT 1").fetchone()[0]
            led._move(c, sub, -100, "withdraw", reason="never committed")
            print("inside", flush=True)
            time.sleep(120)
    elif mode == "batch":
        prefix = argv[2]
        checker = Ledger(db, actor=CHECKER, timeout_s=120)
        i = 0
        while True:
            app = f"{prefix}-{i}"
            led.withdraw(B, JC, 2600, app, node=NODE)
            print(f"withdraw {app}", flush=True)
            txn = led.transfer(B, JC, DEV, 7, document="bill of sale")["txn"]
            print("transfer", flush=True)
            checker.sign_off(txn)
            print("sign-off", flush=True)
            led.return_credits(app, reason="cycle")
            print(f"return {app}", flush=True)
            i += 1
    led.close()


if __name__ == "__main__":
    main(sys.argv[1:])
