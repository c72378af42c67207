"""The sewer flow credit bank of the Binghamton-Johnson City I/I offset program, on one SQLite file.

Every operation is one transaction (``BEGIN IMMEDIATE``: the write lock is taken before anything is
read, so two processes can never both see the same balance and spend it twice). Each operation checks
the program's rules in code first, to refuse with a message that says why
(:class:`~capacitysim.errors.RefusedError`), and the schema's CHECK constraints and triggers refuse
the same things again (:mod:`capacitysim.bank.schema`). Every change writes journal rows with who,
when, what, why and which documents; a row that moves credits carries the balance after the move.

The journal is hash-chained (each row's SHA-256 covers its content and the previous row's hash), and
:meth:`Ledger.verify` audits the chain, the running balances and every record against its journal
rows, so an edit made around the triggers (with the ``sqlite3`` shell) is found. Operations that
cannot get the write lock within the timeout fail cleanly (:class:`BankBusyError`, nothing changed).

What ``verify`` can and cannot detect
-------------------------------------
Without an anchor, ``verify`` finds any edit that leaves a trace inside the file: a row changed,
removed, inserted or reordered without recomputing the hashes; a value of the wrong type; a balance
that is not the sum of its journal rows; a record (project, withdrawal, transfer, condemnation)
without its journal rows or with other amounts; a cited report file whose bytes changed. It
**cannot** detect a *consistent* rewrite: someone with write access to the file who drops the
triggers, edits history, keeps the records and balances in step and recomputes the whole hash chain
produces a file that verifies. Only a head hash kept *outside* the bank can show that: record the
head (:meth:`Ledger.head`, ``capacitysim bank head``, printed in every annual report) somewhere the
bank's writers cannot change (the Board's minutes, an e-mail, a signed report), and later
``capacitysim bank verify --expect-head HASH`` fails unless the current chain still leads to that
hash, i.e. unless every row up to that one is exactly as it was. Rows written after the anchor are
only protected by the next anchor.

Amounts are whole gallons per day, each at most :data:`MAX_GPD`. A certified figure is booked rounded *down* and a requirement
rounded *up* (never credit more I/I removal than certified, never withdraw less than required).

References
----------
Binghamton-Johnson City I/I Offset Program: sewer flow credit bank sections A (basins; transfers
across basins only with Board approval), B (deposit into the subaccount of the municipal user with
jurisdiction once a project is certified complete; transfers with written notice), C (excess stays
on deposit, no expiration), D (condemnation), E (gpd), F (one-to-one offset), G (transfers need proper
documentation), H (withdrawal subject to capacity demonstration and connection approval); definitions
DEFAULT and FLOW CREDIT NOTE; records (three years, extended during a dispute; annual report A-D).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import getpass
import hashlib
import json
import math
import os
import sqlite3
import unicodedata
import uuid
from pathlib import Path

from capacitysim.bank import refs as _refs
from capacitysim.bank.schema import SCHEMA, SCHEMA_VERSION
from capacitysim.errors import CapacitysimError, InputError, RefusedError
from capacitysim.rules import ii_offset

#: Default bank file, in the working folder.
DEFAULT_DB = "capacitysim-bank.sqlite"
#: Digits kept before rounding an amount to whole gpd (absorbs float noise such as 3168.0000000000005).
_ROUND_DIGITS = 6
_TS_FORMAT = "%Y-%m-%d %H:%M:%S.%f"
#: Largest amount one operation may carry [gpd]: 1,000 MGD, about 30 times the Binghamton-Johnson City
#: plant's design flow (35 MGD) and above the largest US plants. It keeps every sum an exact SQLite
#: INTEGER (a sum past 2**63 would silently become REAL) and catches mistyped figures (1e30).
MAX_GPD = 1e9
#: Longest name, id or reference accepted [characters].
MAX_TEXT = 500
#: prev_hash of the first journal row of a new bank.
GENESIS_HASH = "0" * 64
#: Unicode categories refused in names and ids: control, format (zero-width...), line/paragraph separators.
_BAD_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


class BankBusyError(CapacitysimError):
    """The bank file is locked by another writer for longer than the timeout, or unreadable."""

    exit_code = 1


def default_actor() -> str:
    """Who is acting: ``$CAPACITYSIM_ACTOR``, else the login name, validated like ``--actor``.

    Raises
    ------
    InputError
        The variable (or the login name, which ``getpass`` takes from ``$LOGNAME``/``$USER``) holds a
        control or invisible character (a newline would forge a journal line), is blank or too long.
    """
    env = os.environ.get("CAPACITYSIM_ACTOR")
    if env:  # unset or empty: the login name
        return _text("actor ($CAPACITYSIM_ACTOR)", env)
    try:
        login = getpass.getuser()
    except Exception:  # pragma: no cover - no login name in some containers
        return "unknown"
    return _text("actor (the login name, from $LOGNAME/$USER)", login)


def parse_date(name: str, value) -> _dt.date | None:
    """An ISO date (YYYY-MM-DD) or None; anything else is an InputError naming the field."""
    if value is None or value == "":
        return None
    if isinstance(value, _dt.date):
        return value
    try:
        return _dt.date.fromisoformat(str(value))
    except ValueError:
        raise InputError(f"{name} must be a date YYYY-MM-DD, got {value!r}") from None


def _positive_gpd(name: str, value) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number of gallons per day, got {value!r}") from None
    if not math.isfinite(v) or v <= 0 or v > MAX_GPD:
        raise InputError(f"{name} must be > 0 and <= {MAX_GPD:,.0f} gpd, got {value!r}")
    return v


def book_down(gpd: float) -> int:
    """Whole gpd credited for a certified figure (rounded down)."""
    return int(math.floor(round(gpd, _ROUND_DIGITS)))


def book_up(gpd: float) -> int:
    """Whole gpd required for a requirement (rounded up)."""
    return int(math.ceil(round(gpd, _ROUND_DIGITS)))


def _text(name: str, value, required: bool = True) -> str | None:
    """A name, id or reference: NFC-normalised, stripped, no control/format characters, bounded.

    NFC makes a composed and a decomposed "Café" the same name; control and format characters (a
    newline, a zero-width space) would let two names look identical or break one-line records.
    """
    v = "" if value is None else unicodedata.normalize("NFC", str(value)).strip()
    if not v:
        if required:
            raise InputError(f"{name} must not be empty")
        return None
    bad = [ch for ch in v if unicodedata.category(ch) in _BAD_CATEGORIES]
    if bad:
        raise InputError(f"{name} {v!r} contains control or invisible character(s) "
                         f"{', '.join(f'U+{ord(ch):04X}' for ch in dict.fromkeys(bad))}; allowed: printable text")
    if len(v) > MAX_TEXT:
        raise InputError(f"{name} is {len(v)} characters long; allowed: at most {MAX_TEXT}")
    return v


class Ledger:
    """The flow credit bank in one SQLite file (WAL, foreign keys, one transaction per operation).

    Parameters
    ----------
    path : str or Path
        The bank file.
    actor : str, optional
        Who acts (journal ``actor``); default :func:`default_actor`.
    create : bool, default False
        Create and initialise the file if needed; otherwise a missing or uninitialised file is an
        InputError.
    timeout_s : float, default 60
        How long to wait for another writer's lock [s].
    clock : callable, optional
        Returns the current UTC datetime (tests use it to write records with past dates).
    """

    def __init__(self, path=DEFAULT_DB, *, actor: str | None = None, create: bool = False,
                 timeout_s: float = 60.0, clock=None):
        self.path = Path(path)
        self.actor = _text("actor", actor) if actor is not None else default_actor()
        self._clock = clock or (lambda: _dt.datetime.now(_dt.timezone.utc))
        if not create and not self.path.is_file():
            raise InputError(f"no credit bank at {self.path} (create it with `capacitysim bank --db {self.path} init`)")
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
            if state not in ("empty", str(SCHEMA_VERSION)):
                raise InputError(f"{self.path}: bank schema version {state}, this capacitysim reads version {SCHEMA_VERSION}")
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
        if create:
            try:
                self._init_schema()
            except BaseException:
                c.close()
                raise

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

    # --- plumbing ---------------------------------------------------------------------------------
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

    @contextlib.contextmanager
    def _tx(self):
        """One transaction, write lock first (BEGIN IMMEDIATE); rollback on any error.

        SQLite errors become one-line capacitysim errors: a constraint or trigger refusing the change
        is a :class:`RefusedError`; a lock held past the timeout or a damaged file a
        :class:`BankBusyError`. Nothing is committed in either case.
        """
        c = self.conn
        try:
            c.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise BankBusyError(f"credit bank {self.path}: cannot start a transaction ({exc}); nothing was changed") from None
        self._txn = uuid.uuid4().hex
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

    def _init_schema(self) -> None:
        with self._tx() as c:
            for stmt in _split_sql(SCHEMA):
                c.execute(stmt)
            row = c.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if row is None:
                c.execute("INSERT INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                c.execute("INSERT INTO meta(key, value) VALUES ('created_at', ?)", (self._now(),))
                c.execute("INSERT INTO meta(key, value) VALUES ('journal_anchor', ?)", (GENESIS_HASH,))
                c.execute("INSERT INTO meta(key, value) VALUES ('journal_head', ?)", (GENESIS_HASH,))
                self._log(c, "init", reason="bank created", detail={"schema_version": SCHEMA_VERSION})
            elif int(row[0]) != SCHEMA_VERSION:
                raise InputError(f"{self.path}: schema version {row[0]}, this capacitysim knows {SCHEMA_VERSION}")

    def _log(self, c, action: str, *, reason: str = "", documents=(), basin_id=None, subaccount_id=None,
             delta_gpd: int = 0, ref: str | None = None, detail: dict | None = None) -> int:
        balance_after = None
        if subaccount_id is not None:
            balance_after = c.execute("SELECT balance_gpd FROM subaccounts WHERE id=?", (subaccount_id,)).fetchone()[0]
        last = c.execute("SELECT seq FROM sqlite_sequence WHERE name='journal'").fetchone()
        seq = (last[0] if last else 0) + 1
        prev = c.execute("SELECT value FROM meta WHERE key='journal_head'").fetchone()[0]
        row = {"seq": seq, "txn": self._txn, "at": self._now(), "actor": self.actor, "action": action,
               "reason": reason or "", "documents": json.dumps([d for d in documents if d], ensure_ascii=False),
               "basin_id": basin_id, "subaccount_id": subaccount_id, "delta_gpd": int(delta_gpd),
               "balance_after": balance_after, "ref": ref,
               "detail": json.dumps(detail or {}, sort_keys=True, ensure_ascii=False), "prev_hash": prev}
        row["hash"] = journal_hash(row)
        cols = list(row)
        c.execute(f"INSERT INTO journal({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", [row[k] for k in cols])
        c.execute("UPDATE meta SET value=? WHERE key='journal_head'", (row["hash"],))
        return seq

    def _move(self, c, subaccount_id: int, delta: int, action: str, **log) -> int:
        """Change a balance (never below zero) and journal it, in the caller's transaction."""
        bal = c.execute("SELECT balance_gpd FROM subaccounts WHERE id=?", (subaccount_id,)).fetchone()[0]
        if bal + delta < 0:
            raise RefusedError(f"insufficient credits: the subaccount holds {bal:,} gpd, {-delta:,} gpd needed")
        c.execute("UPDATE subaccounts SET balance_gpd = balance_gpd + ? WHERE id=?", (delta, subaccount_id))
        return self._log(c, action, subaccount_id=subaccount_id, delta_gpd=delta, **log)

    # --- lookups ------------------------------------------------------------------------------------
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

    # --- registry -----------------------------------------------------------------------------------
    def add_entity(self, name: str, municipal: bool = False, *, reason: str = "", documents=()) -> dict:
        """Register an entity (municipal user, developer, other flow credit holder)."""
        name = _text("name", name)
        with self._tx() as c:
            same = _same_name(c, "entities", "name", name)
            if same is not None:
                raise RefusedError(f"entity {name!r} already exists" + ("" if same == name else f" as {same!r}"))
            c.execute("INSERT INTO entities(name, municipal, created_at) VALUES (?,?,?)", (name, int(bool(municipal)), self._now()))
            self._log(c, "add-entity", reason=reason, documents=documents, detail={"name": name, "municipal": bool(municipal)})
        return {"name": name, "municipal": bool(municipal)}

    def add_basin(self, name: str, outlet: str | None = None, *, reason: str = "", documents=()) -> dict:
        """Register an I/I remediation basin (tributary to one CSO or pumping station)."""
        name = _text("name", name)
        outlet = _text("outlet", outlet, required=False)
        with self._tx() as c:
            same = _same_name(c, "basins", "name", name)
            if same is not None:
                raise RefusedError(f"basin {name!r} already exists" + ("" if same == name else f" as {same!r}"))
            cur = c.execute("INSERT INTO basins(name, outlet, created_at) VALUES (?,?,?)", (name, outlet, self._now()))
            self._log(c, "add-basin", reason=reason, documents=documents, basin_id=cur.lastrowid,
                      detail={"name": name, "outlet": outlet})
        return {"name": name, "outlet": outlet}

    def open_subaccount(self, basin: str, owner: str, *, reason: str = "", documents=()) -> dict:
        """Open the subaccount of ``owner`` in ``basin`` (refused if it exists)."""
        with self._tx() as c:
            b, e = self._basin(c, basin), self._entity(c, owner)
            if c.execute("SELECT 1 FROM subaccounts WHERE basin_id=? AND owner_id=?", (b["id"], e["id"])).fetchone():
                raise RefusedError(f"{owner} already has a subaccount in basin {basin}")
            self._open(c, b, e, reason)
        return {"basin": basin, "owner": owner, "balance_gpd": 0}

    def add_project(self, ref: str, basin: str, jurisdiction: str, *, description: str = "", priority: int | None = None,
                    estimated_gpd: float | None = None, reason: str = "", documents=()) -> dict:
        """Record an identified/available I/I remediation project (annual report part A)."""
        ref = _text("project", ref)
        if estimated_gpd is not None:
            estimated_gpd = _positive_gpd("estimated_gpd", estimated_gpd)
        with self._tx() as c:
            b, j = self._basin(c, basin), self._entity(c, jurisdiction)
            if not j["municipal"]:
                raise RefusedError(f"{jurisdiction} is not a municipal user; a project's jurisdiction is a municipal user")
            same = _same_name(c, "projects", "ref", ref)
            if same is not None:
                raise RefusedError(f"project {ref!r} already exists" + ("" if same == ref else f" as {same!r}"))
            c.execute("INSERT INTO projects(ref, basin_id, jurisdiction_id, description, priority, estimated_gpd, status,"
                      " created_at) VALUES (?,?,?,?,?,?,'identified',?)",
                      (ref, b["id"], j["id"], description or "", priority, estimated_gpd, self._now()))
            self._log(c, "add-project", reason=reason, documents=documents, basin_id=b["id"], ref=ref,
                      detail={"jurisdiction": jurisdiction, "priority": priority, "estimated_gpd": estimated_gpd})
        return {"project": ref, "basin": basin, "jurisdiction": jurisdiction, "status": "identified"}

    # --- credits in -----------------------------------------------------------------------------------
    def deposit(self, basin: str, owner: str, gpd: float, project: str, *, certified_on=None, certificate: str | None = None,
                description: str = "", reason: str = "", documents=()) -> dict:
        """Deposit the credits of a project certified complete (section B).

        The credits go to the subaccount of the municipal user having jurisdiction over the project
        site (``owner``, a municipal user; the subaccount is opened if needed). A project is deposited
        once. The certified figure is booked rounded down to whole gpd.
        """
        stated = _positive_gpd("gpd", gpd)
        amount = book_down(stated)
        if amount < 1:
            raise InputError(f"gpd must be at least 1 whole gpd to deposit, got {gpd!r}")
        ref = _text("project", project)
        on = parse_date("certified_on", certified_on) or self._today()
        if on > self._today():
            raise InputError(f"certified_on {on} is in the future; allowed: today ({self._today()}) or earlier")
        certificate = _text("certificate", certificate, required=False)
        docs = [*documents, *([certificate] if certificate else [])]
        with self._tx() as c:
            b, e = self._basin(c, basin), self._entity(c, owner)
            if not e["municipal"]:
                raise RefusedError(f"{owner} is not a municipal user: certified credits are deposited to the subaccount of the "
                                   "municipal user with jurisdiction over the project site (section B); transfer them after")
            same = _same_name(c, "projects", "ref", ref)
            if same is not None and same != ref:
                raise RefusedError(f"project {ref!r} already exists as {same!r}")
            p = c.execute("SELECT * FROM projects WHERE ref=?", (ref,)).fetchone()
            if p is not None:
                if p["status"] == "certified":
                    raise RefusedError(f"project {ref!r} was already certified and deposited ({p['certified_gpd']:,} gpd)")
                if p["basin_id"] != b["id"] or p["jurisdiction_id"] != e["id"]:
                    raise RefusedError(f"project {ref!r} is recorded in another basin or jurisdiction")
                c.execute("UPDATE projects SET status='certified', certified_gpd=?, certified_on=?, certificate=?,"
                          " description=CASE WHEN ?<>'' THEN ? ELSE description END WHERE id=?",
                          (amount, on.isoformat(), certificate, description, description, p["id"]))
            else:
                c.execute("INSERT INTO projects(ref, basin_id, jurisdiction_id, description, status, certified_gpd, certified_on,"
                          " certificate, created_at) VALUES (?,?,?,?,'certified',?,?,?,?)",
                          (ref, b["id"], e["id"], description or "", amount, on.isoformat(), certificate, self._now()))
            sub = self._subaccount(c, basin, owner, open_if_missing=True, reason=f"deposit of project {ref}")
            self._move(c, sub["id"], amount, "deposit", reason=reason or f"project {ref} certified complete",
                       documents=docs, basin_id=b["id"], ref=ref,
                       detail={"stated_gpd": stated, "booked_gpd": amount, "certified_on": on.isoformat()})
        return {"project": ref, "basin": basin, "owner": owner, "deposited_gpd": amount, "stated_gpd": stated,
                "balance_gpd": self.balance(basin, owner)["balance_gpd"]}

    # --- credits out: flow credit notes ----------------------------------------------------------------
    def withdraw(self, basin: str, owner: str, peak_flow_gpd: float, application: str, *, capacity_ref: str | None = None,
                 spdes_ref: str | None = None, principal: str | None = None,
                 offset_ratio: float = ii_offset.DEFAULT_OFFSET_RATIO, threshold_gpd: float = ii_offset.OFFSET_THRESHOLD_GPD,
                 on=None, description: str = "", reason: str = "", documents=(), node: str | None = None) -> dict:
        """Reserve credits for an application at once; approve when the capacity and SPDES refs are attached.

        ``peak_flow_gpd`` is the estimated peak sewage flow rate increase of the connection; the
        credits reserved are ``offset_ratio`` times it, rounded up (section F; a ratio below one would
        offset less than the flow added and is refused). A connection adding no more than 2,500 gpd
        needs no offset, so its withdrawal is refused. Without both the capacity demonstration ref and
        the SPDES/treatment ref the withdrawal stays *pending* (section H(1)); with both, the flow
        credit note is issued (``on``, default today, never in the future) and the certificate of
        occupancy falls due one year later (DEFAULT). A ref that is a file is fingerprinted with
        SHA-256 and, if it is a capacitysim JSON document, is read (:mod:`capacitysim.bank.refs`): the
        capacity demonstration must pass and connect at least ``peak_flow_gpd`` (at ``node``, the
        connection's model node, when given; it is recorded for a later :meth:`attach`); an HTML
        report is refused (cite the JSON).
        """
        peak = _positive_gpd("peak_flow_gpd", peak_flow_gpd)
        application = _text("application", application)
        ratio = _offset_ratio(offset_ratio)
        node = _text("node", node, required=False)
        cap = _refs.resolve_ref("capacity", _text("capacity_ref", capacity_ref, required=False), gpd=peak, node=node)
        spd = _refs.resolve_ref("spdes", _text("spdes_ref", spdes_ref, required=False))
        if not ii_offset.offset_required(peak, threshold_gpd):
            raise RefusedError(f"no offset is required: {peak:,.0f} gpd does not exceed the {threshold_gpd:,.0f} gpd "
                               "threshold (definitions, NEW OR MODIFIED SEWER CONNECTION); no credits withdrawn")
        need = book_up(float(ii_offset.credits_required_gpd(peak, ratio, threshold_gpd)))
        if need > MAX_GPD:
            raise InputError(f"peak_flow_gpd x offset_ratio = {need:,} gpd; allowed: at most {MAX_GPD:,.0f} gpd")
        on = self._not_future("on", parse_date("on", on))
        principal = _text("principal", principal, required=False)
        with self._tx() as c:
            b, e = self._basin(c, basin), self._entity(c, owner)
            row = c.execute("SELECT application FROM withdrawals WHERE app_key=?", (application.casefold(),)).fetchone()
            same = row[0] if row else None
            if same is not None:
                raise RefusedError(f"application {application!r} already has a withdrawal"
                                   + ("" if same == application else f" (as {same!r})"))
            if principal is None:
                if not e["municipal"]:
                    raise InputError("principal (the municipal user whose sewer receives the connection) is required "
                                     "when the credit holder is not a municipal user")
                p = e
            else:
                p = self._entity(c, principal)
                if not p["municipal"]:
                    raise RefusedError(f"{principal} is not a municipal user")
            sub = self._subaccount(c, basin, owner)
            approved = cap is not None and spd is not None
            note_on = (on or self._today()) if approved else None
            due = _add_years(note_on, ii_offset.CERTIFICATE_OF_OCCUPANCY_YEARS) if note_on else None
            status = "approved" if approved else "pending"
            cur = c.execute(
                "INSERT INTO withdrawals(application, app_key, subaccount_id, principal_id, peak_flow_gpd, offset_ratio, amount_gpd,"
                " status, capacity_ref, capacity_sha256, spdes_ref, spdes_sha256, description, requested_at, note_issued_on,"
                " co_due_on) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (application, application.casefold(), sub["id"], p["id"], peak, ratio, need, status,
                 cap and cap["ref"], cap and cap["sha256"], spd and spd["ref"], spd and spd["sha256"],
                 description or "", self._now(), note_on.isoformat() if note_on else None, due.isoformat() if due else None))
            self._move(c, sub["id"], -need, "withdraw", reason=reason or f"application {application}",
                       documents=[*documents, *_ref_docs(cap, spd)], basin_id=b["id"], ref=application,
                       detail={"peak_flow_gpd": peak, "offset_ratio": ratio, "reserved_gpd": need, "status": status,
                               "principal": p["name"], **({"node": node} if node else {}), **_ref_detail(cap, spd),
                               **({"note_issued_on": note_on.isoformat(), "co_due_on": due.isoformat()} if note_on else {})})
            wid = cur.lastrowid
        return self.withdrawal(application) | {"id": wid}

    def attach(self, application: str, *, capacity_ref: str | None = None, spdes_ref: str | None = None, on=None,
               reason: str = "", documents=(), node: str | None = None) -> dict:
        """Attach the capacity demonstration and/or SPDES refs; a pending withdrawal with both is approved.

        A capacity JSON is checked against the withdrawal (its peak flow, and ``node`` or the node
        recorded at :meth:`withdraw`). A reference already recorded cannot be replaced (the note was,
        or will be, issued on it): return the credits and apply again instead.
        """
        node = _text("node", node, required=False)
        capacity_ref = _text("capacity_ref", capacity_ref, required=False)
        peak = None
        if capacity_ref is not None:
            w = self._withdrawal(self.conn, application)  # peak flow and node never change: read before the transaction
            peak = w["peak_flow_gpd"]
            recorded = self._withdrawal_node(self.conn, w["application"])
            if node is not None and recorded is not None and node != recorded:
                raise InputError(f"node {node!r}: application {w['application']!r} was made for node {recorded!r}")
            node = node or recorded
        cap = _refs.resolve_ref("capacity", capacity_ref, gpd=peak, node=node)
        spd = _refs.resolve_ref("spdes", _text("spdes_ref", spdes_ref, required=False))
        if cap is None and spd is None:
            raise InputError("give capacity_ref and/or spdes_ref to attach")
        on = self._not_future("on", parse_date("on", on))
        with self._tx() as c:
            w = self._withdrawal(c, application)
            if w["status"] not in ("pending", "approved"):
                raise RefusedError(f"application {application!r} is {w['status']}; nothing to attach")
            for new, col in ((cap, "capacity_ref"), (spd, "spdes_ref")):
                if new is not None and w[col] is not None:
                    raise RefusedError(f"application {application!r} already cites {col} {w[col]!r}; a recorded reference "
                                       "cannot be replaced (return the credits and apply again)")
            cap_ref, cap_sha = (cap["ref"], cap["sha256"]) if cap else (w["capacity_ref"], w["capacity_sha256"])
            spd_ref, spd_sha = (spd["ref"], spd["sha256"]) if spd else (w["spdes_ref"], w["spdes_sha256"])
            status, note_on, due = w["status"], w["note_issued_on"], w["co_due_on"]
            if status == "pending" and cap_ref and spd_ref:
                status = "approved"
                d = on or self._today()
                note_on, due = d.isoformat(), _add_years(d, ii_offset.CERTIFICATE_OF_OCCUPANCY_YEARS).isoformat()
            c.execute("UPDATE withdrawals SET capacity_ref=?, capacity_sha256=?, spdes_ref=?, spdes_sha256=?, status=?,"
                      " note_issued_on=?, co_due_on=? WHERE id=?",
                      (cap_ref, cap_sha, spd_ref, spd_sha, status, note_on, due, w["id"]))
            basin_id = c.execute("SELECT basin_id FROM subaccounts WHERE id=?", (w["subaccount_id"],)).fetchone()[0]
            self._log(c, "attach", reason=reason, documents=[*documents, *_ref_docs(cap, spd)], basin_id=basin_id,
                      ref=application, detail={"status": status, "note_issued_on": note_on, "co_due_on": due,
                                               **_ref_detail(cap, spd)})
        return self.withdrawal(application)

    @staticmethod
    def _withdrawal_node(c, application: str) -> str | None:
        """The connection node recorded when ``application`` was withdrawn (None if none was given)."""
        row = c.execute("SELECT detail FROM journal WHERE action='withdraw' AND ref=? ORDER BY seq DESC LIMIT 1",
                        (application,)).fetchone()
        detail = _json_or_raw(row[0]) if row else None
        node = detail.get("node") if isinstance(detail, dict) else None
        return node if isinstance(node, str) else None

    def _not_future(self, name: str, d: _dt.date | None) -> _dt.date | None:
        if d is not None and d > self._today():
            raise InputError(f"{name} {d} is in the future; allowed: today ({self._today()}) or earlier")
        return d

    def return_credits(self, application: str, *, reason: str, documents=()) -> dict:
        """Return the credits reserved by a pending or approved withdrawal to its subaccount."""
        reason = _text("reason", reason)
        with self._tx() as c:
            w = self._withdrawal(c, application)
            if w["status"] not in ("pending", "approved"):
                raise RefusedError(f"application {application!r} is {w['status']}; its credits cannot be returned")
            self._close_and_return(c, w, "returned", "return", reason, documents)
        return self.withdrawal(application)

    def _close_and_return(self, c, w, status: str, action: str, reason: str, documents) -> None:
        c.execute("UPDATE withdrawals SET status=?, closed_at=? WHERE id=?", (status, self._now(), w["id"]))
        basin_id = c.execute("SELECT basin_id FROM subaccounts WHERE id=?", (w["subaccount_id"],)).fetchone()[0]
        self._move(c, w["subaccount_id"], w["amount_gpd"], action, reason=reason, documents=documents, basin_id=basin_id,
                   ref=w["application"], detail={"returned_gpd": w["amount_gpd"]})

    def extend(self, application: str, until, *, document: str, granted_on=None, reason: str = "") -> dict:
        """Record an extension of the time allowed for the certificate of occupancy (DEFAULT).

        The extension must be granted (``granted_on``, default today) on or before the current due
        date: the day after it the note is in default by definition, whether or not
        :meth:`check_defaults` has run yet.
        """
        until = parse_date("until", until)
        if until is None:
            raise InputError("until must be a date YYYY-MM-DD")
        document = _text("document", document)
        granted = self._not_future("granted_on", parse_date("granted_on", granted_on)) or self._today()
        with self._tx() as c:
            w = self._withdrawal(c, application)
            if w["status"] != "approved":
                raise RefusedError(f"application {application!r} is {w['status']}; only an issued flow credit note can be extended")
            if granted.isoformat() > w["co_due_on"]:
                raise RefusedError(f"the note of {application!r} has been in default since the day after {w['co_due_on']} "
                                   f"(DEFAULT); an extension granted on {granted} comes too late")
            if until.isoformat() <= w["co_due_on"]:
                raise RefusedError(f"the extension must be later than the current due date {w['co_due_on']}")
            c.execute("INSERT INTO extensions(withdrawal_id, old_due_on, new_due_on, document, created_at) VALUES (?,?,?,?,?)",
                      (w["id"], w["co_due_on"], until.isoformat(), document, self._now()))
            c.execute("UPDATE withdrawals SET co_due_on=? WHERE id=?", (until.isoformat(), w["id"]))
            basin_id = c.execute("SELECT basin_id FROM subaccounts WHERE id=?", (w["subaccount_id"],)).fetchone()[0]
            self._log(c, "extend", reason=reason, documents=[document], basin_id=basin_id, ref=application,
                      detail={"old_due_on": w["co_due_on"], "new_due_on": until.isoformat(), "granted_on": granted.isoformat()})
        return self.withdrawal(application)

    def complete(self, application: str, co_issued_on, *, reason: str = "", documents=()) -> dict:
        """Record the certificate of occupancy: the connection is complete (report part D)."""
        co = parse_date("co_issued_on", co_issued_on)
        if co is None:
            raise InputError("co_issued_on must be a date YYYY-MM-DD")
        self._not_future("co_issued_on", co)
        with self._tx() as c:
            w = self._withdrawal(c, application)
            if w["status"] != "approved":
                raise RefusedError(f"application {application!r} is {w['status']}; only an approved withdrawal can be completed")
            if co.isoformat() < w["note_issued_on"]:
                raise InputError(f"co_issued_on {co} is before the flow credit note of {w['note_issued_on']}; "
                                 "allowed: on or after the note")
            if co.isoformat() > w["co_due_on"]:
                raise RefusedError(f"the certificate of occupancy ({co}) is after the due date {w['co_due_on']}: "
                                   "the note is in default unless an extension is recorded first")
            c.execute("UPDATE withdrawals SET status='completed', co_issued_on=?, closed_at=? WHERE id=?",
                      (co.isoformat(), self._now(), w["id"]))
            basin_id = c.execute("SELECT basin_id FROM subaccounts WHERE id=?", (w["subaccount_id"],)).fetchone()[0]
            self._log(c, "complete", reason=reason, documents=documents, basin_id=basin_id, ref=application,
                      detail={"co_issued_on": co.isoformat()})
        return self.withdrawal(application)

    def check_defaults(self, as_of=None, *, reason: str = "") -> list[dict]:
        """Put in default every approved note whose certificate of occupancy is past due on ``as_of``.

        The program defines DEFAULT (no certificate of occupancy within one year of the note, or the
        extended time) but not its consequence; here the reserved credits return to the subaccount
        they came from, and the note is closed as ``defaulted``. ``as_of`` cannot be in the future:
        a default is final, and a note is not in default before its due date has passed.
        """
        as_of = self._not_future("as_of", parse_date("as_of", as_of)) or self._today()
        out = []
        with self._tx() as c:
            rows = c.execute("SELECT * FROM withdrawals WHERE status='approved' AND co_due_on < ? ORDER BY id",
                             (as_of.isoformat(),)).fetchall()
            for w in rows:
                self._close_and_return(c, w, "defaulted", "default",
                                       reason or f"no certificate of occupancy by {w['co_due_on']} (as of {as_of})", ())
                out.append({"application": w["application"], "returned_gpd": w["amount_gpd"], "co_due_on": w["co_due_on"]})
        return out

    # --- credits between holders ---------------------------------------------------------------------
    def transfer(self, basin: str, from_owner: str, to_owner: str, gpd: float, *, document: str,
                 to_basin: str | None = None, board_approval: str | None = None, reason: str = "") -> dict:
        """Transfer credits between holders (sections B, C, G), within a basin unless the Board approved (A).

        Refused without a document (notarized bill of sale, memorandum of gift or grant, written
        notice), across basins without a recorded Board approval, or for more than the balance.
        The receiving subaccount is opened if needed. ``gpd`` must be whole gallons per day.
        """
        amount = _whole_gpd("gpd", gpd)
        document = _text("document", document, required=False)
        if document is None:
            raise RefusedError("a transfer needs a cited document (notarized bill of sale, memorandum of gift or grant, "
                               "written notice: credit bank sections B and G)")
        to_basin = to_basin or basin
        board_approval = _text("board_approval", board_approval, required=False)
        cross = to_basin != basin
        if cross and board_approval is None:
            raise RefusedError(f"credits generated in basin {basin} cannot be transferred to basin {to_basin} without a "
                               "recorded Board approval (credit bank section A)")
        with self._tx() as c:
            src = self._subaccount(c, basin, from_owner)
            self._entity(c, to_owner)
            if not cross and from_owner == to_owner:
                raise InputError("a transfer needs two different holders")
            dst = self._subaccount(c, to_basin, to_owner, open_if_missing=True, reason=f"transfer from {from_owner}")
            cur = c.execute("INSERT INTO transfers(from_id, to_id, amount_gpd, document, board_approval, cross_basin, created_at)"
                            " VALUES (?,?,?,?,?,?,?)", (src["id"], dst["id"], amount, document, board_approval, int(cross), self._now()))
            ref = f"transfer-{cur.lastrowid}"
            docs = [document, board_approval]
            detail = {"from": from_owner, "to": to_owner, "basin": basin, "to_basin": to_basin, "gpd": amount}
            self._move(c, src["id"], -amount, "transfer-out", reason=reason, documents=docs, basin_id=src["basin_id"],
                       ref=ref, detail=detail)
            self._move(c, dst["id"], amount, "transfer-in", reason=reason, documents=docs, basin_id=dst["basin_id"],
                       ref=ref, detail=detail)
        return {"transfer": ref, **detail, "from_balance_gpd": self.balance(basin, from_owner)["balance_gpd"],
                "to_balance_gpd": self.balance(to_basin, to_owner)["balance_gpd"]}

    def condemn(self, basin: str, from_owner: str, by: str, gpd: float, *, project: str, document: str,
                reason: str = "") -> dict:
        """Condemn credits on deposit in a private entity's name for a public purpose (section D).

        ``by`` must be a municipal user having jurisdiction over the project the credits were
        generated by (the project's jurisdiction), in the same basin; ``from_owner`` a private
        entity; ``document`` the condemnation resolution. The credits move to ``by``'s subaccount.
        """
        amount = _whole_gpd("gpd", gpd)
        document = _text("document", document, required=False)
        if document is None:
            raise RefusedError("a condemnation needs a cited document (the municipal user's resolution)")
        ref = _text("project", project)
        with self._tx() as c:
            b = self._basin(c, basin)
            m, f = self._entity(c, by), self._entity(c, from_owner)
            if not m["municipal"]:
                raise RefusedError(f"{by} is not a municipal user; only a municipal user can condemn credits (section D)")
            if f["municipal"]:
                raise RefusedError(f"{from_owner} is a municipal user; only credits in a private entity's name can be condemned")
            p = c.execute("SELECT * FROM projects WHERE ref=?", (ref,)).fetchone()
            if p is None or p["status"] != "certified":
                raise RefusedError(f"project {ref!r} is not a certified project of the bank")
            if p["basin_id"] != b["id"] or p["jurisdiction_id"] != m["id"]:
                raise RefusedError(f"{by} does not have jurisdiction over project {ref!r} in basin {basin} (section D)")
            taken = c.execute("SELECT coalesce(sum(amount_gpd), 0) FROM condemnations WHERE project_id=?", (p["id"],)).fetchone()[0]
            if amount > p["certified_gpd"] - taken:
                raise RefusedError(f"project {ref!r} generated {p['certified_gpd']:,} gpd, {taken:,} gpd of it already condemned: "
                                   f"at most {p['certified_gpd'] - taken:,} gpd more can be condemned under it (section D)")
            src = self._subaccount(c, basin, from_owner)
            dst = self._subaccount(c, basin, by, open_if_missing=True, reason="condemnation")
            cur = c.execute("INSERT INTO condemnations(from_id, to_id, project_id, amount_gpd, document, created_at)"
                            " VALUES (?,?,?,?,?,?)", (src["id"], dst["id"], p["id"], amount, document, self._now()))
            cref = f"condemnation-{cur.lastrowid}"
            detail = {"from": from_owner, "by": by, "project": ref, "gpd": amount}
            self._move(c, src["id"], -amount, "condemn-out", reason=reason or "public purpose", documents=[document],
                       basin_id=b["id"], ref=cref, detail=detail)
            self._move(c, dst["id"], amount, "condemn-in", reason=reason or "public purpose", documents=[document],
                       basin_id=b["id"], ref=cref, detail=detail)
        return {"condemnation": cref, **detail, "basin": basin,
                "from_balance_gpd": self.balance(basin, from_owner)["balance_gpd"],
                "to_balance_gpd": self.balance(basin, by)["balance_gpd"]}

    # --- records --------------------------------------------------------------------------------------
    def open_dispute(self, basin: str, subject: str, *, reason: str = "", documents=()) -> dict:
        """Record an unresolved dispute: the basin's records cannot be purged until it is closed."""
        subject = _text("subject", subject)
        with self._tx() as c:
            b = self._basin(c, basin)
            cur = c.execute("INSERT INTO disputes(basin_id, subject, opened_at) VALUES (?,?,?)", (b["id"], subject, self._now()))
            self._log(c, "dispute-open", reason=reason, documents=documents, basin_id=b["id"], ref=f"dispute-{cur.lastrowid}",
                      detail={"subject": subject})
        return {"dispute": cur.lastrowid, "basin": basin, "subject": subject}

    def close_dispute(self, dispute_id: int, *, reason: str, documents=()) -> dict:
        reason = _text("reason", reason)
        with self._tx() as c:
            d = c.execute("SELECT * FROM disputes WHERE id=?", (int(dispute_id),)).fetchone()
            if d is None:
                raise InputError(f"unknown dispute {dispute_id!r}")
            if d["closed_at"] is not None:
                raise RefusedError(f"dispute {dispute_id} is already closed")
            c.execute("UPDATE disputes SET closed_at=? WHERE id=?", (self._now(), d["id"]))
            self._log(c, "dispute-close", reason=reason, documents=documents, basin_id=d["basin_id"], ref=f"dispute-{d['id']}")
        return {"dispute": int(dispute_id), "closed": True}

    def purge(self, before, *, reason: str) -> dict:
        """Purge journal rows dated before ``before``, if all are older than the retention period.

        Refused when ``before`` is within three years of today (records section) or when any row to
        purge belongs to a basin under an open dispute. Each subaccount's purged movements are
        carried forward in one ``carry-forward`` row, so the journal still sums to the balances.
        """
        reason = _text("reason", reason)
        cutoff = parse_date("before", before)
        if cutoff is None:
            raise InputError("before must be a date YYYY-MM-DD")
        limit = _add_years(self._today(), -ii_offset.RECORD_RETENTION_YEARS)
        if cutoff > limit:
            raise RefusedError(f"records younger than {ii_offset.RECORD_RETENTION_YEARS} years cannot be purged "
                               f"(the cutoff must be on or before {limit})")
        cut = cutoff.isoformat()
        with self._tx() as c:
            disputed = c.execute("SELECT d.id, b.name FROM journal j JOIN disputes d ON d.basin_id = j.basin_id "
                                 "JOIN basins b ON b.id = d.basin_id WHERE d.closed_at IS NULL AND j.at < ? LIMIT 1",
                                 (cut,)).fetchone()
            if disputed:
                raise RefusedError(f"basin {disputed['name']} is under dispute {disputed['id']}: its records cannot be purged")
            # only a contiguous oldest part of the journal, so the hash chain stays one chain
            first_kept = c.execute("SELECT min(seq) FROM journal WHERE at >= ?", (cut,)).fetchone()[0]
            seq_max = (first_kept - 1) if first_kept is not None else c.execute("SELECT max(seq) FROM journal").fetchone()[0]
            if seq_max is None or c.execute("SELECT count(*) FROM journal WHERE seq <= ?", (seq_max,)).fetchone()[0] == 0:
                return {"purged_rows": 0, "before": cut}
            anchor = c.execute("SELECT hash FROM journal WHERE seq <= ? ORDER BY seq DESC LIMIT 1", (seq_max,)).fetchone()[0]
            carry = c.execute("SELECT subaccount_id, basin_id, sum(delta_gpd) AS d FROM journal WHERE seq <= ? AND at < ? "
                              "AND subaccount_id IS NOT NULL GROUP BY subaccount_id", (seq_max, cut)).fetchall()
            c.execute("INSERT INTO purge_permits(seq_max, cutoff) VALUES (?, ?)", (seq_max, cut))
            n = c.execute("DELETE FROM journal WHERE seq <= ? AND at < ?", (seq_max, cut)).rowcount
            c.execute("DELETE FROM purge_permits")
            c.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('journal_anchor', ?)", (anchor,))
            c.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('purged_before', ?)", (cut,))
            for r in carry:
                self._log(c, "carry-forward", reason=f"movements before {cut} purged", basin_id=r["basin_id"],
                          subaccount_id=r["subaccount_id"], delta_gpd=r["d"], detail={"purged_before": cut})
            self._log(c, "purge", reason=reason, detail={"before": cut, "rows": n, "last_purged_seq": seq_max,
                                                         "last_purged_hash": anchor})
        return {"purged_rows": n, "before": cut}

    # --- reading ----------------------------------------------------------------------------------------
    def balance(self, basin: str, owner: str) -> dict:
        """Balance of one subaccount: on deposit, and reserved by pending/approved withdrawals [gpd]."""
        c = self.conn
        sub = self._subaccount(c, basin, owner)
        reserved = c.execute("SELECT coalesce(sum(amount_gpd), 0) FROM withdrawals WHERE subaccount_id=? AND "
                             "status IN ('pending', 'approved')", (sub["id"],)).fetchone()[0]
        return {"basin": basin, "owner": owner, "balance_gpd": sub["balance_gpd"], "reserved_gpd": reserved}

    def balances(self) -> list[dict]:
        """Every subaccount's balance, by basin then owner."""
        rows = self.conn.execute(
            "SELECT b.name AS basin, e.name AS owner, e.municipal, s.balance_gpd, s.id,"
            " (SELECT coalesce(sum(amount_gpd),0) FROM withdrawals w WHERE w.subaccount_id=s.id AND w.status IN ('pending','approved')) AS reserved_gpd"
            " FROM subaccounts s JOIN basins b ON b.id=s.basin_id JOIN entities e ON e.id=s.owner_id ORDER BY b.name, e.name").fetchall()
        return [{"basin": r["basin"], "owner": r["owner"], "municipal": bool(r["municipal"]), "balance_gpd": r["balance_gpd"],
                 "reserved_gpd": r["reserved_gpd"]} for r in rows]

    def withdrawal(self, application: str) -> dict:
        r = self.conn.execute(
            "SELECT w.*, b.name AS basin, e.name AS owner, p.name AS principal FROM withdrawals w JOIN subaccounts s ON s.id=w.subaccount_id"
            " JOIN basins b ON b.id=s.basin_id JOIN entities e ON e.id=s.owner_id JOIN entities p ON p.id=w.principal_id"
            " WHERE w.application=?", (application,)).fetchone()
        if r is None:
            raise InputError(f"unknown application {application!r}")
        keys = ("application", "basin", "owner", "principal", "status", "peak_flow_gpd", "offset_ratio", "amount_gpd",
                "capacity_ref", "capacity_sha256", "spdes_ref", "spdes_sha256", "description", "requested_at", "note_issued_on", "co_due_on", "co_issued_on", "closed_at")
        return {k: r[k] for k in keys}

    def withdrawals(self) -> list[dict]:
        apps = [r[0] for r in self.conn.execute("SELECT application FROM withdrawals ORDER BY id")]
        return [self.withdrawal(a) for a in apps]

    def projects(self) -> list[dict]:
        rows = self.conn.execute(
            "SELECT p.*, b.name AS basin, e.name AS jurisdiction FROM projects p JOIN basins b ON b.id=p.basin_id"
            " JOIN entities e ON e.id=p.jurisdiction_id ORDER BY p.status, coalesce(p.priority, 1e9), p.ref").fetchall()
        keys = ("ref", "basin", "jurisdiction", "description", "priority", "estimated_gpd", "status", "certified_gpd",
                "certified_on", "certificate")
        return [{k: r[k] for k in keys} for r in rows]

    def entities(self) -> list[dict]:
        return [{"name": r["name"], "municipal": bool(r["municipal"])}
                for r in self.conn.execute("SELECT * FROM entities ORDER BY name")]

    def journal(self, *, basin: str | None = None, owner: str | None = None, since=None) -> list[dict]:
        """Journal rows, oldest first, optionally for one basin / owner and from a date."""
        where, args = [], []
        if basin is not None:
            where.append("b.name = ?")
            args.append(basin)
        if owner is not None:
            where.append("e.name = ?")
            args.append(owner)
        since = parse_date("since", since)
        if since is not None:
            where.append("j.at >= ?")
            args.append(since.isoformat())
        sql = ("SELECT j.*, b.name AS basin, e.name AS owner FROM journal j LEFT JOIN basins b ON b.id=j.basin_id"
               " LEFT JOIN subaccounts s ON s.id=j.subaccount_id LEFT JOIN entities e ON e.id=s.owner_id"
               + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY j.seq")
        out = []
        for r in self.conn.execute(sql, args):
            out.append({"seq": r["seq"], "txn": r["txn"], "at": r["at"], "actor": r["actor"], "action": r["action"],
                        "basin": r["basin"], "owner": r["owner"], "delta_gpd": r["delta_gpd"], "balance_after": r["balance_after"],
                        "ref": r["ref"], "reason": r["reason"], "documents": _json_or_raw(r["documents"]),
                        "detail": _json_or_raw(r["detail"])})
        return out

    def cited_files(self) -> list[str]:
        """Paths of the report files withdrawals cite (recorded with their SHA-256): inputs no output may replace."""
        out = []
        for r in self.conn.execute("SELECT capacity_ref, capacity_sha256, spdes_ref, spdes_sha256 FROM withdrawals"):
            for kind in ("capacity", "spdes"):
                if r[f"{kind}_sha256"] is not None and isinstance(r[f"{kind}_ref"], str):
                    out.append(r[f"{kind}_ref"])
        return out

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
        balance, never negative; credits deposited = held + withdrawn; every certified project has
        its deposit row of the certified amount, every withdrawal its ``withdraw`` row (once) and,
        when returned or defaulted, its return row (once), every transfer and condemnation its out
        and in rows (records older than a purge are exempt); and, with ``check_files``, that every
        report file a withdrawal cites still has the SHA-256 recorded.

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
            ``ok``, ``problems``, ``deposited_gpd``, ``held_gpd``, ``withdrawn_gpd``, ``journal_rows``,
            ``journal_head``, ``refs`` and, with ``expect_head``, ``expected_head``
            (``{"hash", "found", "seq"}``).

        Raises
        ------
        InputError
            ``expect_head`` is not 64 hexadecimal digits.
        """
        expect = _head_hash("expect_head", expect_head) if expect_head is not None else None
        c = self.conn
        out = {"ok": False, "problems": [], "deposited_gpd": 0, "held_gpd": 0, "withdrawn_gpd": 0, "journal_rows": 0,
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
        out.update(deposited_gpd=deposits, held_gpd=held, withdrawn_gpd=withdrawn)
        if deposits != held + withdrawn:
            problems.append(f"credits deposited {deposits} != held {held} + withdrawn {withdrawn}")
        problems += self._cross_check(c, by_ref, purged_before, bad_rows)
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

    @staticmethod
    def _cross_check(c, by_ref: dict, purged_before: str, bad_rows: dict | None = None) -> list[str]:
        """Every record that moved credits has exactly its journal rows, of its amounts."""
        problems = []
        bad_rows = bad_rows or {}

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
                    expect(f"{short}-out", ref, [-t["amount_gpd"]], ref)
                    expect(f"{short}-in", ref, [t["amount_gpd"]], ref)
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


#: Journal columns the hash covers, in this order (every column but the hash itself).
HASHED_COLUMNS = ("seq", "txn", "at", "actor", "action", "reason", "documents", "basin_id", "subaccount_id", "delta_gpd",
                  "balance_after", "ref", "detail", "prev_hash")


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


def _same_name(c, table: str, column: str, value: str):
    """An existing row of ``table`` whose ``column`` equals ``value`` ignoring case (Unicode casefold)."""
    key = value.casefold()
    for row in c.execute(f"SELECT {column} FROM {table}"):
        if row[0].casefold() == key:
            return row[0]
    return None


#: Largest offset ratio accepted [-] (other programs use up to 4:1; 10 leaves room, catches typos).
MAX_OFFSET_RATIO = 10.0


def _offset_ratio(value) -> float:
    """Offset ratio, >= 1: section F requires credits *equal* to the peak flow increase (one to one);
    a program may ask more (up to 4:1 elsewhere), never less."""
    try:
        r = float(value)
    except (TypeError, ValueError):
        raise InputError(f"offset_ratio must be a number, got {value!r}") from None
    if not math.isfinite(r) or r < 1.0 or r > MAX_OFFSET_RATIO:
        raise InputError(f"offset_ratio must be >= 1 and <= {MAX_OFFSET_RATIO:g} (section F: at least one to one), got {value!r}")
    return r


def _ref_docs(*refs) -> list[str]:
    """Journal document entries for resolved refs: the ref, with its SHA-256 for a file."""
    return [r["ref"] + (f" (sha256 {r['sha256']})" if r["sha256"] else "") for r in refs if r is not None]


def _ref_detail(cap, spd) -> dict:
    """Journal detail of resolved refs: ref, SHA-256 and verdict; for a capacity JSON also the model
    file's SHA-256 and the connection it demonstrated."""
    out = {}
    for kind, r in (("capacity", cap), ("spdes", spd)):
        if r is not None:
            out[f"{kind}_ref"], out[f"{kind}_sha256"], out[f"{kind}_verdict"] = r["ref"], r["sha256"], r["verdict"]
            for key in ("model", "model_sha256", "connection", "added_gpd"):
                if r.get(key) is not None:
                    out[f"{kind}_{key}"] = r[key]
    return out


def _json_or_raw(text):
    """A stored JSON column decoded, or the stored value itself when it is not JSON (an edited row)."""
    if not isinstance(text, (str, bytes)):
        return text
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text if isinstance(text, str) else text.hex()


def _whole_gpd(name: str, value) -> int:
    v = _positive_gpd(name, value)
    if v != int(v):
        raise InputError(f"{name} must be whole gallons per day, got {value!r}")
    return int(v)


def _add_years(d: _dt.date, years: int) -> _dt.date:
    try:
        return d.replace(year=d.year + years)
    except ValueError:  # 29 February
        return d.replace(year=d.year + years, day=28)


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
