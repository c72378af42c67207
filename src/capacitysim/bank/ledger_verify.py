"""Verification of the credit bank: the journal's hash chain, its head, and the audit of every record.

:meth:`Verification.head` gives the head of the hash chain to keep outside the bank;
:meth:`Verification.verify` audits the file: SQLite integrity, the type of every value it computes
with, the chain (each row's :func:`~capacitysim.bank.ledger_core.journal_hash`, linked to the one before,
optionally leading to a head kept outside), running balances, lots, the records against their journal
rows and sign-offs, bindings, dates, the capacity register and the SHA-256 of every cited file. What it
cannot detect (a consistent rewrite of the whole chain) is said in :mod:`capacitysim.bank.ledger`.
"""

from __future__ import annotations

import re
import sqlite3

from capacitysim.bank import commitments as _commit
from capacitysim.bank import refs as _refs
from capacitysim.bank.ledger_core import GENESIS_HASH, _json_or_raw, journal_hash
from capacitysim.errors import InputError


class Verification:
    """The head of the journal's hash chain and the audit of the whole bank.

    A part of :class:`capacitysim.bank.ledger.Ledger`, which composes it with the other parts: it works in
    the ledger's connection and transactions (:class:`capacitysim.bank.ledger_core.LedgerCore`) and calls
    the other parts' methods through ``self``; it holds no state of its own.
    """

    def head(self) -> dict:
        """The head of the journal's hash chain: keep it outside the bank to detect a rewrite later.

        Returns
        -------
        dict
            ``head`` (SHA-256 hex of the last journal row; the chain's anchor when the journal is
            empty), ``rows`` (journal rows), ``last_seq`` and ``last_at`` (UTC time of the last row).
            ``verify(expect_head=head)`` fails if the journal up to that row is ever rewritten.
        """
        c = self.conn
        last = c.execute("SELECT seq, hash, at FROM journal ORDER BY seq DESC LIMIT 1").fetchone()
        rows = c.execute("SELECT count(*) FROM journal").fetchone()[0]
        if last is None:
            anchor = c.execute("SELECT value FROM meta WHERE key='journal_anchor'").fetchone()
            return {"head": anchor[0] if anchor else GENESIS_HASH, "rows": 0, "last_seq": None, "last_at": None}
        return {"head": last["hash"], "rows": rows, "last_seq": last["seq"], "last_at": last["at"]}

    def verify(self, *, check_files: bool = True, expect_head: str | None = None) -> dict:
        """Audit the ledger; ``ok`` is False with a list of ``problems`` when anything is off.

        Checks: SQLite integrity and foreign keys; that every stored value has its column's type (a
        row edited with the ``sqlite3`` shell may hold text or NULL in a number column: it is named,
        never a crash); the journal's hash chain (every row's SHA-256, each row linked to the one
        before, the first to the recorded anchor, the last to the recorded head); per subaccount,
        each row's ``balance_after`` equals the running sum of its deltas and the sum equals the
        balance, never negative; each subaccount's lots sum to its balance and each lot to its moves;
        credits deposited = held + withdrawn + in transit (transfers awaiting sign-off); every
        certified project has its deposit row of the certified amount, every withdrawal its
        ``withdraw`` row (once) and, when returned or defaulted, its return row (once), every transfer
        its out row and, once signed off, its in row (or, rejected, its ``transfer-reject`` row), every
        condemnation its out and in rows (records older than a purge are exempt); every deposit,
        withdrawal and transfer made since sign-off became required has its sign-off record, decided
        by a registered administrator when decided; every binding of a service user has its
        ``bind-user`` (and, closed, ``unbind-user``) journal row and was made by a registered
        administrator; and, with ``check_files``, that every report file a withdrawal cites still has the
        SHA-256 recorded.

        Without ``expect_head`` these checks cannot detect a *consistent* rewrite (history edited
        and the whole chain recomputed by someone with write access); see the module docstring.

        Parameters
        ----------
        check_files : bool, default True
            Re-hash the report files withdrawals cite.
        expect_head : str, optional
            A head hash kept outside the bank (:meth:`head`, printed in the annual report). The
            check fails unless it is the hash of a row of the current chain with every row up to it
            intact; the problem names the first row where the chain no longer leads to it, or says
            it is not in the chain.

        Returns
        -------
        dict
            ``ok``, ``problems``, ``deposited_gpd``, ``held_gpd``, ``withdrawn_gpd``, ``in_transit_gpd``, ``journal_rows``,
            ``journal_head``, ``refs`` and, with ``expect_head``, ``expected_head``
            (``{"hash", "found", "seq"}``).

        Raises
        ------
        InputError
            ``expect_head`` is not 64 hexadecimal digits.
        """
        expect = _head_hash("expect_head", expect_head) if expect_head is not None else None
        c = self.conn
        out = {"ok": False, "problems": [], "deposited_gpd": 0, "held_gpd": 0, "withdrawn_gpd": 0, "in_transit_gpd": 0,
               "journal_rows": 0,
               "journal_head": GENESIS_HASH, "refs": []}
        if expect is not None:
            out["expected_head"] = {"hash": expect, "found": False, "seq": None}
        problems = out["problems"]
        try:
            self._verify(c, out, check_files, expect)
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise  # another writer: BankBusyError through the CLI
            problems.append(f"the bank's schema was changed outside capacitysim (SQLite says: {exc})")
        except sqlite3.DatabaseError as exc:
            problems.append(f"the bank file is damaged (SQLite says: {exc})")
        except (TypeError, ValueError, KeyError, IndexError, OverflowError, RecursionError) as exc:
            # the type audit names altered values first; this is the net under whatever it did not foresee
            problems.append(f"the records hold values capacitysim never writes and could not all be checked "
                            f"({type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''})")
        out["ok"] = not problems
        return out

    def _verify(self, c, out: dict, check_files: bool, expect: str | None) -> None:
        problems = out["problems"]
        if c.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
            problems.append("sqlite integrity_check failed")
        try:
            if c.execute("PRAGMA foreign_key_check").fetchone() is not None:
                problems.append("foreign key violations")
        except sqlite3.OperationalError as exc:  # e.g. a referenced table recreated without its key
            problems.append(f"foreign keys cannot be checked: the schema was changed outside capacitysim (SQLite says: {exc})")
        bad_rows = _type_audit(c, problems)
        meta = {r["key"]: r["value"] for r in c.execute("SELECT key, value FROM meta")}
        anchor = meta.get("journal_anchor", GENESIS_HASH)
        purged_before = meta.get("purged_before", "")
        purged_before = purged_before if isinstance(purged_before, str) else ""
        prev = anchor
        # a purge's carry-forward rows stand for movements older than every surviving row: they open the books
        running: dict = {}
        for r in c.execute("SELECT seq, subaccount_id, delta_gpd FROM journal WHERE action='carry-forward'"):
            if r["seq"] not in bad_rows["journal"] and r["subaccount_id"] is not None:
                running[r["subaccount_id"]] = running.get(r["subaccount_id"], 0) + r["delta_gpd"]
        by_ref: dict[tuple, list[int]] = {}
        rows = 0
        broken_at = None  # first row where the chain from the anchor breaks
        expect_seq, broken_before_expect = None, None
        for r in c.execute("SELECT * FROM journal ORDER BY seq"):
            rows += 1
            seq = r["seq"]
            intact = True
            if r["prev_hash"] != prev:
                intact = False
                problems.append(f"journal row {seq}: not linked to the row before it (a row was removed, inserted or reordered)")
            if journal_hash(r) != r["hash"]:
                intact = False
                problems.append(f"journal row {seq}: content does not match its hash (the row was altered)")
            if not intact and broken_at is None:
                broken_at = seq
            if expect is not None and expect_seq is None and r["hash"] == expect:
                expect_seq, broken_before_expect = seq, broken_at
            prev = r["hash"]
            if seq in bad_rows["journal"]:
                continue  # named by the type audit; its numbers cannot be summed
            if r["subaccount_id"] is not None and r["action"] != "carry-forward":
                total = running.get(r["subaccount_id"], 0) + r["delta_gpd"]
                running[r["subaccount_id"]] = total
                if r["balance_after"] != total:
                    problems.append(f"journal row {seq}: balance_after {r['balance_after']} but the movements sum to {total}")
            if r["ref"] is not None and r["delta_gpd"]:
                by_ref.setdefault((r["action"], r["ref"]), []).append(r["delta_gpd"])
        out["journal_rows"] = rows
        out["journal_head"] = meta.get("journal_head", GENESIS_HASH)
        if prev != out["journal_head"]:
            problems.append("the journal does not end at the recorded head (rows were removed from its end)")
        if expect is not None:
            problems += _expected_head_problems(expect, expect_seq, broken_before_expect, broken_at, anchor, purged_before,
                                                rows, prev, out["expected_head"])
        for r in c.execute("SELECT id, balance_gpd FROM subaccounts"):
            if r["id"] in bad_rows["subaccounts"]:
                continue
            total = running.get(r["id"], 0)
            if r["balance_gpd"] != total:
                problems.append(f"subaccount {r['id']}: balance {r['balance_gpd']} but journal sums to {total}")
            if r["balance_gpd"] < 0:
                problems.append(f"subaccount {r['id']}: negative balance")
        deposits = c.execute("SELECT coalesce(sum(certified_gpd),0) FROM projects WHERE status='certified'").fetchone()[0]
        held = c.execute("SELECT coalesce(sum(balance_gpd),0) FROM subaccounts").fetchone()[0]
        withdrawn = c.execute("SELECT coalesce(sum(amount_gpd),0) FROM withdrawals "
                              "WHERE status IN ('pending','approved','completed')").fetchone()[0]
        transit = c.execute("SELECT coalesce(sum(t.amount_gpd), 0) FROM transfers t JOIN signoffs s ON s.kind='transfer' "
                            "AND s.ref = 'transfer-' || t.id WHERE s.status='pending'").fetchone()[0]
        out.update(deposited_gpd=deposits, held_gpd=held, withdrawn_gpd=withdrawn, in_transit_gpd=transit)
        if deposits != held + withdrawn + transit:
            problems.append(f"credits deposited {deposits} != held {held} + withdrawn {withdrawn}"
                            + (f" + in transit {transit}" if transit else ""))
        problems += _lot_problems(c, bad_rows)
        problems += self._cross_check(c, by_ref, purged_before, bad_rows, meta.get("signoff_required_since"))
        problems += _date_problems(c)
        problems += _dating_problems(c)
        if c.execute("SELECT 1 FROM sqlite_master WHERE name='system_models'").fetchone() is not None:
            problems += _commit.register_problems(c, purged_before)
        if check_files:
            for w in c.execute("SELECT id, application, capacity_ref, capacity_sha256, spdes_ref, spdes_sha256 FROM withdrawals"):
                if w["id"] in bad_rows["withdrawals"]:
                    continue
                for kind in ("capacity", "spdes"):
                    if w[f"{kind}_sha256"] is not None:
                        status = _refs.check_ref(w[f"{kind}_ref"], w[f"{kind}_sha256"])
                        out["refs"].append({"application": w["application"], "kind": kind, "ref": w[f"{kind}_ref"],
                                            "status": status})
                        if status != "ok":
                            problems.append(f"application {w['application']}: {kind} reference {w[f'{kind}_ref']} is {status} "
                                            "since it was recorded")
            for what, ref, digest, owner in _program_documents(c):
                if ref.startswith("service job "):  # the service's job store keeps and re-hashes its results
                    continue
                status = _refs.check_ref(ref, digest)
                out["refs"].append({"record": owner, "kind": what, "ref": ref, "status": status})
                if status != "ok":
                    problems.append(f"{owner}: {what} {ref} is {status} since it was recorded")

    @staticmethod
    def _cross_check(c, by_ref: dict, purged_before: str, bad_rows: dict | None = None, since=None) -> list[str]:
        """Every record that moved credits has exactly its journal rows, of its amounts, and its sign-off record."""
        problems = []
        bad_rows = bad_rows or {}
        since = since if isinstance(since, str) else None
        signoffs = {}
        for r in c.execute("SELECT * FROM signoffs ORDER BY id"):
            if r["id"] not in bad_rows.get("signoffs", ()):
                signoffs[(r["kind"], r["ref"])] = r
        admins = {r[0] for r in c.execute("SELECT name FROM administrators")}
        for (kind, ref), s in signoffs.items():
            if s["status"] in ("signed-off", "rejected") and s["decided_by"] not in admins:
                problems.append(f"{kind} {ref}: {s['status']} by {s['decided_by']!r}, who is not a registered bank administrator")
        if since is not None:
            for r in c.execute("SELECT ref FROM journal WHERE action='deposit' AND delta_gpd > 0 AND at >= ?", (since,)):
                s = signoffs.get(("deposit", r[0]))
                if s is None or s["status"] != "signed-off":
                    problems.append(f"project {r[0]}: deposited without the administrator's sign-off")
            for w in c.execute("SELECT application, status, note_issued_on FROM withdrawals WHERE requested_at >= ?", (since,)):
                s = signoffs.get(("withdrawal", w["application"]))
                if s is None:
                    problems.append(f"application {w['application']}: no sign-off record")
                elif w["note_issued_on"] is not None and s["status"] != "signed-off":
                    problems.append(f"application {w['application']}: flow credit note issued without the administrator's "
                                    "sign-off")
            for t in c.execute("SELECT id FROM transfers WHERE created_at >= ?", (since,)):
                if ("transfer", f"transfer-{t['id']}") not in signoffs:
                    problems.append(f"transfer-{t['id']}: no sign-off record")

        def expect(action, ref, amounts, what):
            got = by_ref.get((action, ref), [])
            if sorted(got) != sorted(amounts):
                problems.append(f"{what}: journal '{action}' rows {got} but the record says {amounts}")

        deposited = {ref for (action, ref) in by_ref if action == "deposit"}
        for p in c.execute("SELECT id, ref, certified_gpd, created_at FROM projects WHERE status='certified'"):
            if p["id"] in bad_rows.get("projects", ()):
                continue
            if p["ref"] in deposited or p["created_at"] >= purged_before:
                expect("deposit", p["ref"], [p["certified_gpd"]], f"project {p['ref']}")
        known = {r[0] for r in c.execute("SELECT ref FROM projects WHERE status='certified'")}
        for ref in deposited - known:
            problems.append(f"journal deposit of {ref!r} has no certified project")
        for w in c.execute("SELECT id, application, amount_gpd, status, requested_at, closed_at FROM withdrawals"):
            if w["id"] in bad_rows.get("withdrawals", ()):
                continue
            if w["requested_at"] >= purged_before:
                expect("withdraw", w["application"], [-w["amount_gpd"]], f"application {w['application']}")
            back = {"returned": "return", "defaulted": "default"}.get(w["status"])
            for action in ("return", "default"):
                if action == back and w["closed_at"] is not None and w["closed_at"] < purged_before:
                    continue
                expect(action, w["application"], [w["amount_gpd"]] if action == back else [], f"application {w['application']}")
            if back is not None and w["closed_at"] is None:
                problems.append(f"application {w['application']}: {w['status']} without a closing time")
        apps = {r[0] for r in c.execute("SELECT application FROM withdrawals")}
        for (action, ref) in by_ref:
            if action in ("withdraw", "return", "default") and ref not in apps:
                problems.append(f"journal '{action}' of {ref!r} has no withdrawal record")
        for table, name in (("transfers", "transfer"), ("condemnations", "condemnation")):
            short = "transfer" if name == "transfer" else "condemn"
            for t in c.execute(f"SELECT id, amount_gpd, created_at FROM {table}"):
                if t["id"] in bad_rows.get(table, ()):
                    continue
                if t["created_at"] >= purged_before:
                    ref = f"{name}-{t['id']}"
                    status = signoffs[("transfer", ref)]["status"] if ("transfer", ref) in signoffs else None
                    expect(f"{short}-out", ref, [-t["amount_gpd"]], ref)
                    arrived = name == "condemnation" or status in (None, "signed-off")
                    expect(f"{short}-in", ref, [t["amount_gpd"]] if arrived else [], ref)
                    if name == "transfer":
                        expect("transfer-reject", ref, [t["amount_gpd"]] if status == "rejected" else [], ref)
        problems += _binding_problems(c, purged_before, admins, bad_rows.get("bindings", ()))
        return problems


#: Types every stored value must have, for the columns :meth:`Ledger.verify` computes with:
#: (table, row key, {column: (SQLite storage classes allowed)}). The schema's CHECKs and NOT NULLs say
#: the same, but a file edited with the sqlite3 shell (``PRAGMA ignore_check_constraints``, or a table
#: recreated without constraints) can hold anything.
_INT, _INT_NULL, _TEXT, _TEXT_NULL = ("integer",), ("integer", "null"), ("text",), ("text", "null")
_NUM, _NUM_NULL = ("integer", "real"), ("integer", "real", "null")
_AUDITED = (
    ("journal", "seq", {"seq": _INT, "prev_hash": _TEXT, "hash": _TEXT, "txn": _TEXT, "at": _TEXT, "actor": _TEXT,
                        "action": _TEXT, "reason": _TEXT, "documents": _TEXT, "basin_id": _INT_NULL,
                        "subaccount_id": _INT_NULL, "delta_gpd": _INT, "balance_after": _INT_NULL, "ref": _TEXT_NULL,
                        "detail": _TEXT}),
    ("subaccounts", "id", {"id": _INT, "basin_id": _INT, "owner_id": _INT, "balance_gpd": _INT}),
    ("projects", "id", {"id": _INT, "ref": _TEXT, "status": _TEXT, "certified_gpd": _INT_NULL, "created_at": _TEXT,
                        "estimated_gpd": _NUM_NULL}),
    ("withdrawals", "id", {"id": _INT, "application": _TEXT, "status": _TEXT, "amount_gpd": _INT, "peak_flow_gpd": _NUM,
                           "requested_at": _TEXT, "closed_at": _TEXT_NULL, "capacity_ref": _TEXT_NULL,
                           "capacity_sha256": _TEXT_NULL, "spdes_ref": _TEXT_NULL, "spdes_sha256": _TEXT_NULL}),
    ("transfers", "id", {"id": _INT, "amount_gpd": _INT, "created_at": _TEXT}),
    ("condemnations", "id", {"id": _INT, "amount_gpd": _INT, "created_at": _TEXT}),
    ("meta", "key", {"key": _TEXT, "value": _TEXT}),
    ("lots", "id", {"id": _INT, "subaccount_id": _INT, "project_id": _INT_NULL, "gpd": _INT}),
    ("lot_moves", "id", {"id": _INT, "lot_id": _INT, "delta_gpd": _INT, "action": _TEXT, "ref": _TEXT}),
    ("signoffs", "id", {"id": _INT, "txn": _TEXT, "kind": _TEXT, "ref": _TEXT, "amount_gpd": _INT, "status": _TEXT,
                        "decided_by": _TEXT_NULL}),
    ("bindings", "id", {"id": _INT, "user_name": _TEXT, "user_key": _TEXT, "entity_id": _INT, "bound_at": _TEXT,
                        "bound_by": _TEXT, "unbound_at": _TEXT_NULL, "unbound_by": _TEXT_NULL}),
)
#: Most altered values named one by one per table (the rest are counted).
_MAX_NAMED = 50


def _type_audit(c, problems: list) -> dict[str, set]:
    """Name every stored value whose type is not its column's; returns the row keys of such rows per table.

    One scan per table finds the rows; the first :data:`_MAX_NAMED` are named column by column.
    """
    bad: dict[str, set] = {}
    for table, key, columns in _AUDITED:
        allowed = {col: ", ".join(f"'{k}'" for k in kinds) for col, kinds in columns.items()}
        where = " OR ".join(f"typeof({col}) NOT IN ({kinds})" for col, kinds in allowed.items())
        bad[table] = {r[0] for r in c.execute(f"SELECT {key} FROM {table} WHERE {where}")}
        if not bad[table]:
            continue
        cols = ", ".join(f"typeof({col}), substr(quote({col}), 1, 41)" for col in columns)
        named = 0
        for r in c.execute(f"SELECT {key}, {cols} FROM {table} WHERE {where} ORDER BY {key} LIMIT {_MAX_NAMED}"):
            for i, (col, kinds) in enumerate(columns.items()):
                t, q = r[1 + 2 * i], str(r[2 + 2 * i])
                if t in kinds:
                    continue
                what = "journal row" if table == "journal" else f"{table} {key}"
                shown = q if len(q) <= 40 else q[:37] + "..."
                expected = " or ".join(k if k != "null" else "NULL" for k in kinds)
                problems.append(f"{what} {_show_key(r[0])}: {col} holds {t} {shown} where {expected} is expected "
                                "(edited outside capacitysim)")
            named += 1
        if len(bad[table]) > named:
            problems.append(f"{table}: {len(bad[table]) - named} more row(s) hold values of the wrong type")
    return bad


def _binding_problems(c, purged_before: str, admins: set, bad: set | tuple = ()) -> list[str]:
    """Every binding has its ``bind-user`` journal row (and, closed, its ``unbind-user`` row), made by a
    registered administrator; every such journal row has its binding (rows older than a purge are exempt)."""
    problems = []
    rows = {r["id"]: r for r in c.execute("SELECT * FROM bindings") if r["id"] not in bad}
    logged: dict[tuple, int] = {}
    for r in c.execute("SELECT action, ref FROM journal WHERE action IN ('bind-user', 'unbind-user')"):
        logged[(r["action"], r["ref"])] = logged.get((r["action"], r["ref"]), 0) + 1
    for bid, b in rows.items():
        ref = f"binding-{bid}"
        for action, at in (("bind-user", b["bound_at"]), ("unbind-user", b["unbound_at"])):
            if at is not None and at >= purged_before and logged.get((action, ref), 0) != 1:
                problems.append(f"{ref} ({b['user_name']}): {logged.get((action, ref), 0)} '{action}' journal rows, "
                                "1 expected")
        for who in (b["bound_by"], b["unbound_by"]):
            if who is not None and who not in admins:
                problems.append(f"{ref} ({b['user_name']}): changed by {who!r}, who is not a registered bank administrator")
    for (action, ref), _n in logged.items():
        m = re.fullmatch(r"binding-(\d+)", str(ref))
        if m is None or (int(m.group(1)) not in rows and int(m.group(1)) not in bad):
            problems.append(f"journal '{action}' of {ref!r} has no binding record")
        elif action == "unbind-user" and int(m.group(1)) in rows and rows[int(m.group(1))]["unbound_at"] is None:
            problems.append(f"journal 'unbind-user' of {ref!r} but the binding is open")
    return problems


def _show_key(k) -> str:
    text = repr(k) if not isinstance(k, int) else str(k)
    return text if len(text) <= 40 else text[:37] + "..."


def _head_hash(name: str, value) -> str:
    """A head hash as given by ``bank head``: 64 hexadecimal digits (case ignored)."""
    v = str(value).strip().lower()
    if len(v) != 64 or any(ch not in "0123456789abcdef" for ch in v):
        shown = repr(str(value)[:80])
        raise InputError(f"{name} {shown}: allowed: a SHA-256 of 64 hexadecimal digits, as printed by `capacitysim bank head`")
    return v


def _expected_head_problems(expect, expect_seq, broken_before, broken_at, anchor, purged_before, rows, head, record) -> list[str]:
    """Problems of ``verify(expect_head=...)``; fills ``record`` (``found``, ``seq``)."""
    if expect_seq is not None:
        record.update(found=True, seq=expect_seq)
        if broken_before is not None:
            return [f"expected head {expect} (journal row {expect_seq}): the chain no longer leads to it: it breaks at "
                    f"journal row {broken_before}, so the journal up to that head was rewritten"]
        return []
    if expect == anchor:
        record.update(found=True, seq=0)
        return []  # the head was taken before every surviving row (the genesis, or the last purged row)
    where = f"; the chain first breaks at journal row {broken_at}" if broken_at is not None else ""
    purged = (f" (or it was the head of rows purged before {purged_before}, which can no longer be checked)"
              if purged_before else "")
    return [f"expected head {expect} is not the hash of any row of the journal chain ({rows} rows, head {head}): the journal "
            f"was rewritten before that head, or the hash is from another bank{purged}{where}"]


def _date_problems(c) -> list[str]:
    """Dates out of order in the withdrawals (what :meth:`Ledger.withdraw` and :meth:`Ledger.sign_off` refuse):
    a withdrawal dated before the certification of the credits it took, a note issued before its withdrawal,
    a cited SPDES check dated after the note."""
    problems = []
    for w in c.execute("SELECT id, application, requested_on, note_issued_on, spdes_as_of FROM withdrawals"):
        req, note, as_of = w["requested_on"], w["note_issued_on"], w["spdes_as_of"]
        taken = c.execute("SELECT max(l.deposited_on) FROM lot_moves m JOIN lots l ON l.id = m.lot_id"
                          " WHERE m.ref = ? AND m.action = 'withdraw'", (w["application"],)).fetchone()[0]
        if isinstance(req, str) and isinstance(taken, str) and req < taken[:10]:
            problems.append(f"application {w['application']}: withdrawn on {req}, before its credits were certified "
                            f"({taken[:10]})")
        if isinstance(req, str) and isinstance(note, str) and note[:10] < req:
            problems.append(f"application {w['application']}: note issued on {note[:10]}, before its withdrawal ({req})")
        if isinstance(note, str) and isinstance(as_of, str) and as_of > note[:10]:
            problems.append(f"application {w['application']}: its SPDES check is as of {as_of}, after the note of "
                            f"{note[:10]}")
    return problems


def _lot_problems(c, bad_rows: dict) -> list[str]:
    """Each subaccount's lots sum to its balance; each lot's gpd is the sum of its moves, never negative."""
    problems = []
    bad_moves = bad_rows.get("lot_moves", set())
    bad_lots = set(bad_rows.get("lots", set()))
    if bad_moves:
        bad_lots |= {r[0] for r in c.execute("SELECT DISTINCT lot_id FROM lot_moves WHERE typeof(delta_gpd) <> 'integer'"
                                             " OR typeof(lot_id) <> 'integer'")}
    for r in c.execute("SELECT l.id, l.gpd, (SELECT coalesce(sum(m.delta_gpd), 0) FROM lot_moves m WHERE m.lot_id = l.id)"
                       " AS moved FROM lots l"):
        if r["id"] in bad_lots:
            continue
        if r["gpd"] != r["moved"]:
            problems.append(f"lot {r['id']}: {r['gpd']} gpd but its moves sum to {r['moved']}")
        if r["gpd"] < 0:
            problems.append(f"lot {r['id']}: negative")
    if bad_lots or bad_rows.get("subaccounts"):
        return problems
    for r in c.execute("SELECT s.id, s.balance_gpd, (SELECT coalesce(sum(l.gpd), 0) FROM lots l WHERE l.subaccount_id = s.id)"
                       " AS lots FROM subaccounts s"):
        if r["balance_gpd"] != r["lots"]:
            problems.append(f"subaccount {r['id']}: balance {r['balance_gpd']} but its lots hold {r['lots']}")
    return problems


def _program_documents(c) -> list[tuple[str, str, str, str]]:
    """The files the program's records cite with their SHA-256 (schema 6): each project's quantification and
    certification letter, each annual submission's document: ``(what, ref, sha256, whose)``."""
    if c.execute("SELECT 1 FROM sqlite_master WHERE name='certification_letters'").fetchone() is None:
        return []
    out = [("quantification", r["quantification_ref"], r["quantification_sha256"], f"project {r['ref']}")
           for r in c.execute("SELECT ref, quantification_ref, quantification_sha256 FROM projects"
                              " WHERE quantification_sha256 IS NOT NULL")]
    out += [("certification letter", r["lref"], r["sha256"], f"project {r['ref']}")
            for r in c.execute("SELECT p.ref, l.ref AS lref, l.sha256 FROM certification_letters l"
                               " JOIN projects p ON p.id = l.project_id")]
    out += [("annual records", r["document"], r["sha256"], f"{r['name']} {r['period']}")
            for r in c.execute("SELECT e.name, a.period, a.document, a.sha256 FROM annual_reports a"
                               " JOIN entities e ON e.id = a.entity_id WHERE a.sha256 IS NOT NULL")]
    return [x for x in out if isinstance(x[1], str)]


def _dating_problems(c) -> list[str]:
    """Rows out of order (program policy ``no_backdating``): a row recorded (``at``) before the row before it,
    or a row dated (``detail.on``) before the day the row before it was recorded and not marked ``late``.
    Such rows are written only outside capacitysim (or by a capacitysim without the policy)."""
    problems, prev = [], None
    for r in c.execute("SELECT seq, at, action, detail FROM journal ORDER BY seq"):
        if prev is not None and r["at"] < prev["at"]:
            problems.append(f"journal row {r['seq']} ({r['action']}) recorded at {r['at']}, before row {prev['seq']} "
                            f"({prev['at']}): the journal's clock went backwards")
        d = _json_or_raw(r["detail"])
        on = d.get("on") if isinstance(d, dict) else None
        if prev is not None and isinstance(on, str) and not d.get("late") and on < prev["at"][:10]:
            problems.append(f"journal row {r['seq']} ({r['action']}) dated {on}, before row {prev['seq']} was recorded "
                            f"({prev['at'][:10]}), and not recorded as a late entry (program policy no_backdating)")
        prev = r
    return problems
