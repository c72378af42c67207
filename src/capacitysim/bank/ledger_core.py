"""The credit bank's file, its transactions and its journal: what every part of the ledger builds on.

:class:`LedgerCore` opens the SQLite file (refusing another program's database and telling how to
migrate an older bank), holds the person acting, runs each operation as one ``BEGIN IMMEDIATE``
transaction (:meth:`LedgerCore._tx`: SQLite errors become :class:`BankBusyError` or
:class:`~capacitysim.errors.RefusedError`, nothing committed), writes the hash-chained journal rows
(:meth:`LedgerCore._log`, :func:`journal_hash`) and the balance moves they record, finds entities,
basins, subaccounts and applications by name, and checks the date a row takes effect against the
journal (program policy ``no_backdating``: :meth:`LedgerCore._dated`). The clock is :func:`utc_now`
unless a ledger is given its own.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import os
import sqlite3
import uuid
from pathlib import Path

from capacitysim.bank.ledger_policies import POLICY_FLAG
from capacitysim.bank.ledger_values import MAX_GPD, _text, default_actor, person_name
from capacitysim.bank.schema import SCHEMA_VERSION
from capacitysim.errors import BusyError, InputError, RefusedError


#: Default bank file, in the working folder.
DEFAULT_DB = "capacitysim-bank.sqlite"
_TS_FORMAT = "%Y-%m-%d %H:%M:%S.%f"
#: prev_hash of the first journal row of a new bank.
GENESIS_HASH = "0" * 64
#: Journal columns the hash covers, in this order (every column but the hash itself).
HASHED_COLUMNS = ("seq", "txn", "at", "actor", "action", "reason", "documents", "basin_id", "subaccount_id", "delta_gpd",
                  "balance_after", "ref", "detail", "prev_hash")


class BankBusyError(BusyError):
    """The bank file is locked by another writer for longer than the timeout, or unreadable."""


def _create_private(path: Path) -> None:
    """Create the bank's file readable and writable by its owner only (0600), before SQLite opens it: the ledger
    names people and holds the evidence's hashes, and its WAL and journal files take the same mode from it."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        pass
    except OSError as exc:
        raise InputError(f"cannot create the credit bank at {path}: {exc.strerror or exc}") from None


def utc_now() -> _dt.datetime:
    """The bank's default clock: the current time, UTC (a ledger made with ``clock=`` uses its own)."""
    return _dt.datetime.now(_dt.timezone.utc)


def journal_hash(row) -> str:
    """SHA-256 (hex) of a journal row: canonical JSON of :data:`HASHED_COLUMNS` (stored values).

    A BLOB (never written by capacitysim, only by an edit) is hashed as ``{"blob": hex}``, so any
    stored value gives a hash (a mismatch) instead of an error.
    """
    payload = json.dumps([row[k] for k in HASHED_COLUMNS], ensure_ascii=False, separators=(",", ":"), default=_blob_json)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _blob_json(value):
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"blob": bytes(value).hex()}
    raise TypeError(f"cannot hash a {type(value).__name__}")


def _json_or_raw(text):
    """A stored JSON column decoded, or the stored value itself when it is not JSON (an edited row)."""
    if not isinstance(text, (str, bytes)):
        return text
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text if isinstance(text, str) else text.hex()


def _same_name(c, table: str, column: str, value: str):
    """An existing row of ``table`` whose ``column`` equals ``value`` ignoring case (Unicode casefold)."""
    key = value.casefold()
    for row in c.execute(f"SELECT {column} FROM {table}"):
        if row[0].casefold() == key:
            return row[0]
    return None


class LedgerCore:
    """The bank file, the person acting, one transaction per operation and the journal rows it writes.

    The constructor's parameters are those of :class:`capacitysim.bank.ledger.Ledger`, which composes
    this class with the ledger's parts; creating a bank (``create``) and migrating one (``migrate``) are
    the migration part's (:class:`capacitysim.bank.ledger_migration.Migration`).
    """

    def __init__(self, path=DEFAULT_DB, *, actor: str | None = None, create: bool = False,
                 administrator: str | None = None, migrate: bool = False, timeout_s: float = 60.0, clock=None):
        self.path = Path(path)
        self._actor = person_name("actor", actor) if actor is not None else default_actor()
        self._clock = clock or (lambda: utc_now())
        self._txn = None
        self._dating: dict | None = None
        if not create and not self.path.is_file():
            raise InputError(f"no credit bank at {self.path} (create it with `capacitysim bank --db {self.path} init`)")
        if create and not self.path.exists():
            _create_private(self.path)
        try:
            self.conn = sqlite3.connect(str(self.path), timeout=timeout_s, isolation_level=None)
        except sqlite3.Error as exc:
            raise InputError(f"cannot open the credit bank {self.path}: {exc}") from None
        self.conn.row_factory = sqlite3.Row
        c = self.conn
        try:
            c.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
            # look before changing anything (WAL mode rewrites the header): a foreign database is left as it is
            state = self._inspect(c)
            if state == "foreign":
                raise InputError(f"{self.path} is an SQLite database but not a capacitysim credit bank "
                                 f"({self._foreign_tables(c)}); refusing to change it: give another --db path")
            if state == "empty" and not create:
                raise InputError(f"{self.path} is not an initialised credit bank "
                                 f"(run `capacitysim bank --db {self.path} init`)")
            if state == "2" and not migrate:
                raise InputError(f"{self.path}: bank schema version 2; this capacitysim uses version {SCHEMA_VERSION} "
                                 "(administrator sign-off, credit lots): migrate it with `capacitysim bank --db "
                                 f"{self.path} migrate --actor NAME --administrator NAME` (one transaction; keep a "
                                 "copy of the file first)")
            if state == "3" and not migrate:
                raise InputError(f"{self.path}: bank schema version 3; this capacitysim uses version {SCHEMA_VERSION} "
                                 "(service users bound to bank entities, single use of cited evidence): migrate it with "
                                 f"`capacitysim bank --db {self.path} migrate --actor NAME` (NAME: a registered bank "
                                 "administrator; one transaction; keep a copy of the file first)")
            if state == "4" and not migrate:
                raise InputError(f"{self.path}: bank schema version 4; this capacitysim uses version {SCHEMA_VERSION} "
                                 "(registered system models, committed flows): migrate it with `capacitysim bank --db "
                                 f"{self.path} migrate --actor NAME` (NAME: a registered bank administrator; one "
                                 "transaction; keep a copy of the file first)")
            if state == "5" and not migrate:
                raise InputError(f"{self.path}: bank schema version 5; this capacitysim uses version {SCHEMA_VERSION} "
                                 "(the parties of a note, public or private property, the PE's quantification, "
                                 "certification letters, annual records): migrate it with `capacitysim bank --db "
                                 f"{self.path} migrate --actor NAME` (NAME: a registered bank administrator; one "
                                 "transaction; keep a copy of the file first)")
            if state not in ("empty", "2", "3", "4", "5", str(SCHEMA_VERSION)):
                raise InputError(f"{self.path}: bank schema version {state}, this capacitysim reads version {SCHEMA_VERSION}"
                                 " (and migrates versions 2 to 5)")
            mode = c.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            c.execute("PRAGMA foreign_keys = ON")
            c.execute("PRAGMA synchronous = FULL")
        except sqlite3.OperationalError as exc:
            c.close()
            raise BankBusyError(f"credit bank {self.path}: {exc}") from None
        except sqlite3.DatabaseError as exc:
            c.close()
            raise InputError(f"{self.path} is not a credit bank (SQLite says: {exc})") from None
        except BaseException:
            c.close()
            raise
        if str(mode).lower() != "wal":  # pragma: no cover - e.g. a read-only medium
            c.close()
            raise InputError(f"{self.path}: cannot switch the bank to WAL mode (got {mode})")
        try:
            if create and state not in ("2", "3", "4"):
                self._init_schema(administrator)
            if migrate:
                self._migrate(administrator)
        except BaseException:
            c.close()
            raise

    @property
    def actor(self) -> str | None:
        """The person acting (None when not given: reading only)."""
        return self._actor

    @actor.setter
    def actor(self, value) -> None:
        self._actor = person_name("actor", value)

    @staticmethod
    def _inspect(c) -> str:
        """What the file holds: ``empty`` (no schema: a new file), ``foreign`` (another program's
        database) or the bank's schema version (text). Reads only; raises sqlite3.DatabaseError for a
        file that is not SQLite."""
        names = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")}
        if not names:
            return "empty"
        if not {"meta", "journal", "subaccounts"} <= names:
            return "foreign"
        try:
            ver = c.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        except sqlite3.OperationalError as exc:
            if "no such column" in str(exc):
                return "foreign"
            raise
        return "foreign" if ver is None else str(ver[0])[:20]

    @staticmethod
    def _foreign_tables(c) -> str:
        names = [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' "
                                         "ORDER BY name LIMIT 4")]
        shown = ", ".join(repr(str(n)[:40]) for n in names[:3])
        return f"tables {shown}{', ...' if len(names) > 3 else ''}" if names else "no capacitysim tables"

    def close(self) -> None:
        self.conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _now(self) -> str:
        return self._clock().astimezone(_dt.timezone.utc).strftime(_TS_FORMAT)

    def _today(self) -> _dt.date:
        return self._clock().astimezone(_dt.timezone.utc).date()

    def _require_actor(self) -> str:
        if self._actor is None:
            raise InputError("actor: a command that changes the bank needs the person acting: give --actor \"Given "
                             "Family\" or set $CAPACITYSIM_ACTOR (a person's name; the login name is not used)")
        return self._actor

    @contextlib.contextmanager
    def _tx(self):
        """One transaction, write lock first (BEGIN IMMEDIATE); rollback on any error.

        Refused (:class:`InputError`) before anything is locked when no actor is known. SQLite errors
        become one-line capacitysim errors: a constraint or trigger refusing the change is a
        :class:`RefusedError`; a lock held past the timeout or a damaged file a
        :class:`BankBusyError`. Nothing is committed in either case.
        """
        self._require_actor()
        c = self.conn
        try:
            c.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise BankBusyError(f"credit bank {self.path}: cannot start a transaction ({exc}); nothing was changed") from None
        self._txn = uuid.uuid4().hex
        self._dating = None
        try:
            yield c
        except BaseException as exc:
            if c.in_transaction:
                c.execute("ROLLBACK")
            if isinstance(exc, sqlite3.IntegrityError):
                raise RefusedError(f"refused by the ledger: {exc}") from None
            if isinstance(exc, OverflowError):
                raise InputError(f"an amount is too large for the ledger ({exc}); allowed: up to {MAX_GPD:,.0f} gpd") from None
            if isinstance(exc, sqlite3.Error):
                raise BankBusyError(f"credit bank {self.path}: {exc}; nothing was changed") from None
            raise
        else:
            try:
                c.execute("COMMIT")
            except sqlite3.Error as exc:
                if c.in_transaction:
                    c.execute("ROLLBACK")
                raise BankBusyError(f"credit bank {self.path}: commit failed ({exc}); nothing was changed") from None

    def _log(self, c, action: str, *, reason: str = "", documents=(), basin_id=None, subaccount_id=None,
             delta_gpd: int = 0, ref: str | None = None, detail: dict | None = None) -> int:
        balance_after = None
        if subaccount_id is not None:
            balance_after = c.execute("SELECT balance_gpd FROM subaccounts WHERE id=?", (subaccount_id,)).fetchone()[0]
        last = c.execute("SELECT seq FROM sqlite_sequence WHERE name='journal'").fetchone()
        seq = (last[0] if last else 0) + 1
        prev = c.execute("SELECT value FROM meta WHERE key='journal_head'").fetchone()[0]
        row = {"seq": seq, "txn": self._txn, "at": self._now(), "actor": self._require_actor(), "action": action,
               "reason": reason or "", "documents": json.dumps([d for d in documents if d], ensure_ascii=False),
               "basin_id": basin_id, "subaccount_id": subaccount_id, "delta_gpd": int(delta_gpd),
               "balance_after": balance_after, "ref": ref,
               "detail": json.dumps((detail or {}) | (self._dating or {}), sort_keys=True, ensure_ascii=False),
               "prev_hash": prev}
        row["hash"] = journal_hash(row)
        cols = list(row)
        c.execute(f"INSERT INTO journal({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", [row[k] for k in cols])
        c.execute("UPDATE meta SET value=? WHERE key='journal_head'", (row["hash"],))
        return seq

    def _move(self, c, subaccount_id: int, delta: int, action: str, **log) -> int:
        """Change a balance (never below zero) and journal it, in the caller's transaction."""
        self._need(c, subaccount_id, -delta)
        c.execute("UPDATE subaccounts SET balance_gpd = balance_gpd + ? WHERE id=?", (delta, subaccount_id))
        return self._log(c, action, subaccount_id=subaccount_id, delta_gpd=delta, **log)

    @staticmethod
    def _need(c, subaccount_id: int, amount: int) -> None:
        """Refuse taking ``amount`` gpd from a subaccount holding less."""
        bal = c.execute("SELECT balance_gpd FROM subaccounts WHERE id=?", (subaccount_id,)).fetchone()[0]
        if amount > 0 and bal - amount < 0:
            raise RefusedError(f"insufficient credits: the subaccount holds {bal:,} gpd, {amount:,} gpd needed")

    def _entity(self, c, name: str) -> sqlite3.Row:
        row = c.execute("SELECT * FROM entities WHERE name=?", (_text("entity", name),)).fetchone()
        if row is None:
            raise InputError(f"unknown entity {name!r} (add it with `bank add-entity`)")
        return row

    def _basin(self, c, name: str) -> sqlite3.Row:
        row = c.execute("SELECT * FROM basins WHERE name=?", (_text("basin", name),)).fetchone()
        if row is None:
            raise InputError(f"unknown basin {name!r} (add it with `bank add-basin`)")
        return row

    def _subaccount(self, c, basin, owner, *, open_if_missing: bool = False, reason: str = "") -> sqlite3.Row:
        b, e = self._basin(c, basin), self._entity(c, owner)
        row = c.execute("SELECT * FROM subaccounts WHERE basin_id=? AND owner_id=?", (b["id"], e["id"])).fetchone()
        if row is None:
            if not open_if_missing:
                raise RefusedError(f"{owner} has no subaccount in basin {basin}")
            self._open(c, b, e, reason or "opened to receive credits")
            row = c.execute("SELECT * FROM subaccounts WHERE basin_id=? AND owner_id=?", (b["id"], e["id"])).fetchone()
        return row

    def _open(self, c, b, e, reason: str) -> int:
        cur = c.execute("INSERT INTO subaccounts(basin_id, owner_id, opened_at) VALUES (?,?,?)", (b["id"], e["id"], self._now()))
        self._log(c, "open-subaccount", reason=reason, basin_id=b["id"], subaccount_id=cur.lastrowid,
                  detail={"basin": b["name"], "owner": e["name"]})
        return cur.lastrowid

    def _withdrawal(self, c, application: str) -> sqlite3.Row:
        row = c.execute("SELECT * FROM withdrawals WHERE application=?", (_text("application", application),)).fetchone()
        if row is None:
            raise InputError(f"unknown application {application!r}")
        return row

    @staticmethod
    def _application_row(c, application: str) -> sqlite3.Row | None:
        return c.execute("SELECT * FROM applications WHERE application=?", (application,)).fetchone()

    @staticmethod
    def _app_taken(c, application: str) -> str | None:
        """The recorded application id equal to ``application`` ignoring case, with or without credits."""
        key = application.casefold()
        for table in ("withdrawals", "applications"):
            row = c.execute(f"SELECT application FROM {table} WHERE app_key=?", (key,)).fetchone()
            if row:
                return row[0]
        return None

    def _not_future(self, name: str, d: _dt.date | None) -> _dt.date | None:
        if d is not None and d > self._today():
            raise InputError(f"{name} {d} is in the future; allowed: today ({self._today()}) or earlier")
        return d

    def _dated(self, c, name: str, d: _dt.date, late_reason: str | None) -> _dt.date:
        """Check the date a row takes effect against the journal (program policy ``no_backdating``), in the
        caller's transaction, and have every journal row of the transaction record it.

        A row cannot be dated before the day the journal's last row was recorded: ``--on`` then
        back-dates it past rows already in the journal, and past evidence-age and expiry checks.
        A late entry is legitimate when an event happened before it could be recorded: a registered
        bank administrator records it with ``late_reason`` (required before the day of the journal's
        last row, allowed for any date before today); the row keeps both dates (``on``, and the
        recording time ``at`` of every journal row) and ``late`` with the reason.

        Raises
        ------
        RefusedError
            ``d`` before the day of the journal's last row without ``late_reason``, or with it by an
            actor who is not a bank administrator.
        InputError
            ``late_reason`` given for a row dated today, or empty.
        """
        last = c.execute("SELECT seq, at, action FROM journal ORDER BY seq DESC LIMIT 1").fetchone()
        floor = last["at"][:10] if last is not None else d.isoformat()
        if self._today().isoformat() < floor:
            raise RefusedError(f"this computer's clock says {self._today()} (UTC), before the journal's last row (seq "
                               f"{last['seq']}, recorded {floor}): a clock behind the record would date rows out of order; "
                               "set the clock right (UTC) and try again")
        late = _text("late_reason", late_reason, required=False) if late_reason is not None else None
        if late_reason is not None and late is None:
            raise InputError("late_reason is empty; allowed: the reason a late entry is recorded after the event")
        if late is not None and d >= self._today():
            raise InputError(f"late_reason given, but {name} {d} is today or later: the entry is not late; allowed: "
                             f"late_reason only for a row dated before today ({self._today()})")
        if d.isoformat() >= floor and late is None:
            self._dating = {"on": d.isoformat()}
            return d
        if late is None:
            raise RefusedError(f"{name} {d} is before the journal's last row (seq {last['seq']}, {last['action']}, "
                               f"recorded {floor}): a row cannot be back-dated (program policy no_backdating, "
                               f"{POLICY_FLAG}); a late entry is recorded by a bank administrator with its reason "
                               "(--late-reason), keeping both dates")
        self._require_administrator(c, "records a late entry")
        self._dating = {"on": d.isoformat(), "late": {"reason": late, "recorded_on": self._today().isoformat(),
                                                       "journal_last_recorded_on": floor}}
        return d
