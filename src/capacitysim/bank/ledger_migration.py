"""Creating a credit bank's schema and migrating an older bank (schemas 2 to 5) to the current one.

:meth:`Migration._init_schema` creates a new bank (the schema-2 tables, then every migration's DDL)
with its first administrator; :meth:`Migration._migrate` moves an older bank forward in one
transaction, rebuilding a schema-2 bank's lots by replaying its journal (:meth:`Migration._replay_lots`)
and keeping every journal row and hash as it was. The DDL itself is :mod:`capacitysim.bank.schema`'s.
"""

from __future__ import annotations

import json
import sqlite3
import uuid

from capacitysim.bank.ledger_core import GENESIS_HASH, _json_or_raw
from capacitysim.bank.ledger_lots import LOT_NOTE_MIGRATED, LOT_NOTE_UNKNOWN
from capacitysim.bank.ledger_policies import ALLOCATION_POLICY
from capacitysim.bank.ledger_values import person_name
from capacitysim.bank.schema import MIGRATION_3, MIGRATION_4, MIGRATION_5, MIGRATION_6, SCHEMA, SCHEMA_VERSION
from capacitysim.errors import InputError, RefusedError


class Migration:
    """A new bank's schema and first administrator; the migration of an older bank.

    A part of :class:`capacitysim.bank.ledger.Ledger`, which composes it with the other parts: it works in
    the ledger's connection and transactions (:class:`capacitysim.bank.ledger_core.LedgerCore`) and calls
    the other parts' methods through ``self``; it holds no state of its own.
    """

    def _init_schema(self, administrator: str | None) -> None:
        """Create a new bank (schema 2 tables, then :data:`MIGRATION_3` and :data:`MIGRATION_4`) with its first administrator;
        on an existing bank, check the version (and that ``administrator``, if given, is registered)."""
        adm = person_name("administrator", administrator) if administrator is not None else None
        with self._tx() as c:
            state = self._inspect(c)
            if state == "empty":
                if adm is None:
                    raise InputError("administrator: a new bank needs its first bank administrator (--administrator "
                                     "\"Given Family\"): only a registered administrator signs off deposits, "
                                     "withdrawals and transfers (definitions, BANK ADMINISTRATOR)")
                for stmt in (_split_sql(SCHEMA) + _split_sql(MIGRATION_3) + _split_sql(MIGRATION_4) + _split_sql(MIGRATION_5)
                             + _split_sql(MIGRATION_6)):
                    c.execute(stmt)
                now = self._now()
                for key, value in (("schema_version", str(SCHEMA_VERSION)), ("created_at", now),
                                   ("journal_anchor", GENESIS_HASH), ("journal_head", GENESIS_HASH),
                                   ("signoff_required_since", now)):
                    c.execute("INSERT INTO meta(key, value) VALUES (?, ?)", (key, value))
                self._log(c, "init", reason="bank created", detail={"schema_version": SCHEMA_VERSION})
                self._register_administrator(c, adm, None, "first bank administrator, registered when the bank was created")
            elif state == str(SCHEMA_VERSION):
                if adm is not None and self._administrator(c, adm) is None:
                    raise RefusedError(f"{self.path} already has its bank administrator(s) "
                                       f"({', '.join(self._administrator_names(c))}); {adm!r} can be registered only by "
                                       "one of them (`bank add-administrator`; program policy administrator_registration)")
            else:
                raise InputError(f"{self.path}: schema version {state}, this capacitysim knows {SCHEMA_VERSION}")

    def _migrate(self, administrator: str | None) -> None:
        """Migrate a schema-2 or schema-3 bank to schema :data:`SCHEMA_VERSION` in one transaction
        (nothing to do on a bank of the current schema).

        From schema 2 (``administrator`` required):

        * :data:`MIGRATION_3` adds the tables, columns and triggers; existing withdrawals get their
          ``requested_on`` (the date of ``requested_at``) and ``node`` (from their journal row, when
          it recorded one);
        * lots are rebuilt by replaying the journal with the allocation policy (FIFO): a deposit row
          makes a lot of its project; withdrawals, transfers and condemnations take from lots, the
          receiving side gets lots of the same origin, returns and defaults put credits back; what the
          journal does not show (a purge's carry-forward, a movement older than the surviving rows)
          becomes a lot of **unknown origin**, which condemnation refuses to take. Each subaccount's
          lots are then made to sum to its balance (any difference is a lot of unknown origin);
        * a withdrawal still *pending* gets a pending sign-off record (it now needs the section H(2)
          approval and the administrator's sign-off); deposits, transfers and withdrawals already
          effective stay so, recorded as made before sign-off existed (no sign-off row);
        * ``administrator`` is registered as the first bank administrator.

        From schema 3 (the actor must be a registered bank administrator; ``administrator`` is not
        used): nothing but :data:`MIGRATION_4`.

        Either way :data:`MIGRATION_4` then adds the ``bindings`` table (program policy
        ``service_user_binding``) and the guards of program policy ``evidence_single_use`` (they apply to
        documents cited from now on: two withdrawals of an older bank citing the same document are kept,
        and only the first may be signed off), and one ``migrate`` journal row (the actor, the counts)
        closes the transaction. The existing journal rows, their actors and hashes are kept: ``verify
        --expect-head`` with a head taken before the migration still passes.
        """
        state = self._inspect(self.conn)
        if state == str(SCHEMA_VERSION):
            return
        if state == "2" and administrator is None:
            raise InputError(f"administrator: migrating a schema-2 bank to schema {SCHEMA_VERSION} registers the first "
                             "bank administrator: give --administrator \"Given Family\"")
        adm = person_name("administrator", administrator) if state == "2" else None
        with self._tx() as c:
            state = self._inspect(c)
            if state == str(SCHEMA_VERSION):
                return
            if state not in ("2", "3", "4", "5"):
                raise InputError(f"{self.path}: schema version {state}; only versions 2 to 5 can be migrated")
            detail = {"from": int(state), "to": SCHEMA_VERSION}
            steps = {"2": "administrator sign-off, credit lots (provenance), applications without credits",
                     "3": "service users bound to entities, single use of cited evidence",
                     "4": "registered system models, committed flows (the capacity register)",
                     "5": "parties of a note, public or private property, the PE's quantification, certification "
                          "letters, annual report submissions"}
            reason = f"schema {state} -> {SCHEMA_VERSION}: " + "; ".join(v for k, v in steps.items() if k >= state)
            if state == "2":
                detail |= self._migrate_2_to_3(c, adm)
            else:
                self._require_administrator(c, "migrates the bank")
            for stmt in ((_split_sql(MIGRATION_4) if state in ("2", "3") else [])
                         + (_split_sql(MIGRATION_5) if state in ("2", "3", "4") else []) + _split_sql(MIGRATION_6)):
                c.execute(stmt)
            shared = c.execute("SELECT count(*) FROM withdrawals w WHERE EXISTS (SELECT 1 FROM withdrawals o WHERE o.id < w.id"
                               " AND ((w.capacity_sha256 IS NOT NULL AND o.capacity_sha256 = w.capacity_sha256)"
                               " OR (w.spdes_sha256 IS NOT NULL AND o.spdes_sha256 = w.spdes_sha256)))").fetchone()[0]
            c.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION),))
            c.execute(f"INSERT OR REPLACE INTO meta(key, value) VALUES ('migrated_from_{state}_at', ?)", (self._now(),))
            self._log(c, "migrate", reason=reason,
                      detail=detail | {"withdrawals_sharing_evidence": shared,
                                       "policies": ["service_user_binding", "evidence_single_use", "signoff_separation"]})

    def _migrate_2_to_3(self, c, adm: str) -> dict:
        """The schema 2 -> 3 steps of :meth:`_migrate`, in its transaction; returns the counts for its journal row."""
        stmts = _split_sql(MIGRATION_3)
        trigger = [s for s in stmts if "TRIGGER IF NOT EXISTS withdrawals_forward_only" in s]
        for stmt in stmts:
            c.execute(stmt)
        c.execute("DROP TRIGGER withdrawals_forward_only")  # fill the new columns of existing rows, then guard them
        c.execute("UPDATE withdrawals SET requested_on = substr(requested_at, 1, 10)")
        for w in c.execute("SELECT id, application FROM withdrawals").fetchall():
            node = self._withdrawal_node(c, w["application"])
            if node is not None:
                c.execute("UPDATE withdrawals SET node=? WHERE id=?", (node, w["id"]))
        for stmt in trigger:
            c.execute(stmt)
        pending = 0
        for w in c.execute("SELECT * FROM withdrawals WHERE status='pending' ORDER BY id").fetchall():
            row = c.execute("SELECT txn, actor FROM journal WHERE action='withdraw' AND ref=? ORDER BY seq LIMIT 1",
                            (w["application"],)).fetchone()
            txn = row["txn"] if row and not c.execute("SELECT 1 FROM signoffs WHERE txn=?", (row["txn"],)).fetchone() \
                else uuid.uuid4().hex
            c.execute("INSERT INTO signoffs(txn, kind, ref, subaccount_id, amount_gpd, detail, status, recorded_at,"
                      " recorded_by) VALUES (?,?,?,?,?,?,'pending',?,?)",
                      (txn, "withdrawal", w["application"], w["subaccount_id"], w["amount_gpd"],
                       json.dumps({"migrated_from_schema": 2}), w["requested_at"],
                       row["actor"] if row else "(schema 2: not recorded)"))
            pending += 1
        lots = self._replay_lots(c)
        c.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('signoff_required_since', ?)", (self._now(),))
        self._register_administrator(c, adm, None, "first bank administrator, registered by the migration to schema 3")
        return {"pending_withdrawals": pending, **lots, "allocation_policy": ALLOCATION_POLICY}

    def _replay_lots(self, c) -> dict:
        """Rebuild the lots of a schema-2 bank from its journal (see :meth:`_migrate`); returns counts."""
        projects = {r["ref"]: r for r in c.execute("SELECT id, ref, certified_on FROM projects WHERE status='certified'")}
        condemned = {f"condemnation-{r['id']}": r["project_id"] for r in c.execute("SELECT id, project_id FROM condemnations")}
        taken: dict[str, list] = {}
        # a purge's carry-forward rows stand for movements older than every surviving row: they open the books
        rows = c.execute("SELECT seq, txn, at, action, subaccount_id, delta_gpd, ref FROM journal"
                         " WHERE subaccount_id IS NOT NULL AND delta_gpd <> 0"
                         " ORDER BY action = 'carry-forward' DESC, seq").fetchall()
        for r in rows:
            sub, d, ref, action = r["subaccount_id"], int(r["delta_gpd"]), r["ref"] or f"journal-{r['seq']}", r["action"]
            kw = {"txn": r["txn"], "at": r["at"]}
            if d > 0 and action == "deposit" and ref in projects:
                p = projects[ref]
                lot = self._new_lot(c, sub, p["id"], p["certified_on"], note=LOT_NOTE_MIGRATED, at=r["at"])
                self._lot_move(c, lot, d, action, ref, **kw)
            elif d > 0 and action in ("return", "default"):
                self._restore(c, taken.pop(ref, []), d, action, ref, sub, **kw)
            elif d > 0 and action in ("transfer-in", "condemn-in"):
                self._mirror(c, taken.get(ref, []), d, sub, action, ref, note=LOT_NOTE_MIGRATED, **kw)
            elif d > 0:  # carry-forward of purged rows, or any movement the journal does not explain
                lot = self._new_lot(c, sub, None, None, note=LOT_NOTE_UNKNOWN, at=r["at"])
                self._lot_move(c, lot, d, action, ref, **kw)
            else:
                lots = self._holder_lots(c, sub)
                if action == "condemn-out" and condemned.get(ref) is not None:  # the cited project's lots first
                    lots = sorted(lots, key=lambda lot: lot["project_id"] != condemned[ref])
                pieces, _left = self._take(c, lots, -d, action, ref, **kw)
                taken.setdefault(ref, []).extend(pieces)
        adjusted = 0
        for s in c.execute("SELECT id, balance_gpd FROM subaccounts ORDER BY id").fetchall():
            held = c.execute("SELECT coalesce(sum(gpd), 0) FROM lots WHERE subaccount_id=?", (s["id"],)).fetchone()[0]
            if held < s["balance_gpd"]:
                lot = self._new_lot(c, s["id"], None, None, note=LOT_NOTE_UNKNOWN)
                self._lot_move(c, lot, s["balance_gpd"] - held, "migrate", "schema-3 migration")
                adjusted += 1
            elif held > s["balance_gpd"]:
                self._take(c, self._holder_lots(c, s["id"]), held - s["balance_gpd"], "migrate", "schema-3 migration")
                adjusted += 1
        count = lambda sql: c.execute(sql).fetchone()[0]
        return {"lots": count("SELECT count(*) FROM lots WHERE gpd > 0"),
                "lots_gpd": count("SELECT coalesce(sum(gpd), 0) FROM lots"),
                "unknown_origin_gpd": count("SELECT coalesce(sum(gpd), 0) FROM lots WHERE project_id IS NULL"),
                "subaccounts_adjusted": adjusted}

    @staticmethod
    def _withdrawal_node(c, application: str) -> str | None:
        """The connection node recorded in the journal when ``application`` was withdrawn (None if none was given)."""
        row = c.execute("SELECT detail FROM journal WHERE action='withdraw' AND ref=? ORDER BY seq DESC LIMIT 1",
                        (application,)).fetchone()
        detail = _json_or_raw(row[0]) if row else None
        node = detail.get("node") if isinstance(detail, dict) else None
        return node if isinstance(node, str) else None


def _split_sql(script: str) -> list[str]:
    """Split the schema into statements (triggers hold ';' inside BEGIN ... END)."""
    out, buf = [], []
    for line in script.splitlines():
        if line.strip().startswith("--") or not line.strip():
            continue
        buf.append(line)
        joined = "\n".join(buf)
        if sqlite3.complete_statement(joined):
            out.append(joined)
            buf = []
    return out
