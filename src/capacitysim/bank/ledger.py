"""The sewer flow credit bank of the Binghamton-Johnson City I/I offset program, on one SQLite file.

Every operation is one transaction (``BEGIN IMMEDIATE``: the write lock is taken before anything is
read, so two processes can never both see the same balance and spend it twice). Each operation checks
the program's rules in code first, to refuse with a message that says why
(:class:`~capacitysim.errors.RefusedError`), and the schema's CHECK constraints and triggers refuse
the same things again (:mod:`capacitysim.bank.schema`). Every change writes journal rows with who,
when, what, why and which documents; a row that moves credits carries the balance after the move.

Amounts are whole gallons per day. A certified figure is booked rounded *down* and a requirement
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
import json
import math
import os
import sqlite3
import uuid
from pathlib import Path

from capacitysim.bank.schema import SCHEMA, SCHEMA_VERSION
from capacitysim.errors import InputError, RefusedError
from capacitysim.rules import ii_offset

#: Default bank file, in the working folder.
DEFAULT_DB = "capacitysim-bank.sqlite"
#: Digits kept before rounding an amount to whole gpd (absorbs float noise such as 3168.0000000000005).
_ROUND_DIGITS = 6
_TS_FORMAT = "%Y-%m-%d %H:%M:%S.%f"


def default_actor() -> str:
    """Who is acting: ``$CAPACITYSIM_ACTOR``, else the login name."""
    env = os.environ.get("CAPACITYSIM_ACTOR", "").strip()
    if env:
        return env
    try:
        return getpass.getuser()
    except Exception:  # pragma: no cover - no login name in some containers
        return "unknown"


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
    if not math.isfinite(v) or v <= 0:
        raise InputError(f"{name} must be > 0 gpd, got {value!r}")
    return v


def book_down(gpd: float) -> int:
    """Whole gpd credited for a certified figure (rounded down)."""
    return int(math.floor(round(gpd, _ROUND_DIGITS)))


def book_up(gpd: float) -> int:
    """Whole gpd required for a requirement (rounded up)."""
    return int(math.ceil(round(gpd, _ROUND_DIGITS)))


def _text(name: str, value, required: bool = True) -> str | None:
    v = "" if value is None else str(value).strip()
    if not v:
        if required:
            raise InputError(f"{name} must not be empty")
        return None
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
            mode = c.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            c.execute("PRAGMA foreign_keys = ON")
            c.execute("PRAGMA synchronous = FULL")
        except sqlite3.DatabaseError as exc:
            c.close()
            raise InputError(f"{self.path} is not a credit bank (SQLite says: {exc})") from None
        if mode.lower() != "wal":  # pragma: no cover - e.g. a read-only medium
            raise InputError(f"{self.path}: cannot switch the bank to WAL mode (got {mode})")
        if create:
            self._init_schema()
        else:
            row = c.execute("SELECT name FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
            if row is None:
                c.close()
                raise InputError(f"{self.path} is not an initialised credit bank (run `capacitysim bank --db {self.path} init`)")

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
        """One transaction, write lock first (BEGIN IMMEDIATE); rollback on any error."""
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        self._txn = uuid.uuid4().hex
        try:
            yield c
        except sqlite3.IntegrityError as exc:
            c.execute("ROLLBACK")
            raise RefusedError(f"refused by the ledger: {exc}") from None
        except BaseException:
            c.execute("ROLLBACK")
            raise
        else:
            c.execute("COMMIT")

    def _init_schema(self) -> None:
        with self._tx() as c:
            for stmt in _split_sql(SCHEMA):
                c.execute(stmt)
            row = c.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if row is None:
                c.execute("INSERT INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                c.execute("INSERT INTO meta(key, value) VALUES ('created_at', ?)", (self._now(),))
                self._log(c, "init", reason="bank created", detail={"schema_version": SCHEMA_VERSION})
            elif int(row[0]) != SCHEMA_VERSION:
                raise InputError(f"{self.path}: schema version {row[0]}, this capacitysim knows {SCHEMA_VERSION}")

    def _log(self, c, action: str, *, reason: str = "", documents=(), basin_id=None, subaccount_id=None,
             delta_gpd: int = 0, ref: str | None = None, detail: dict | None = None) -> int:
        balance_after = None
        if subaccount_id is not None:
            balance_after = c.execute("SELECT balance_gpd FROM subaccounts WHERE id=?", (subaccount_id,)).fetchone()[0]
        cur = c.execute(
            "INSERT INTO journal(txn, at, actor, action, reason, documents, basin_id, subaccount_id, delta_gpd,"
            " balance_after, ref, detail) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (self._txn, self._now(), self.actor, action, reason or "", json.dumps([d for d in documents if d]),
             basin_id, subaccount_id, int(delta_gpd), balance_after, ref, json.dumps(detail or {}, sort_keys=True)),
        )
        return cur.lastrowid

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
            if c.execute("SELECT 1 FROM entities WHERE name=?", (name,)).fetchone():
                raise RefusedError(f"entity {name!r} already exists")
            c.execute("INSERT INTO entities(name, municipal, created_at) VALUES (?,?,?)", (name, int(bool(municipal)), self._now()))
            self._log(c, "add-entity", reason=reason, documents=documents, detail={"name": name, "municipal": bool(municipal)})
        return {"name": name, "municipal": bool(municipal)}

    def add_basin(self, name: str, outlet: str | None = None, *, reason: str = "", documents=()) -> dict:
        """Register an I/I remediation basin (tributary to one CSO or pumping station)."""
        name = _text("name", name)
        outlet = _text("outlet", outlet, required=False)
        with self._tx() as c:
            if c.execute("SELECT 1 FROM basins WHERE name=?", (name,)).fetchone():
                raise RefusedError(f"basin {name!r} already exists")
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
            if c.execute("SELECT 1 FROM projects WHERE ref=?", (ref,)).fetchone():
                raise RefusedError(f"project {ref!r} already exists")
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
        certificate = _text("certificate", certificate, required=False)
        docs = [*documents, *([certificate] if certificate else [])]
        with self._tx() as c:
            b, e = self._basin(c, basin), self._entity(c, owner)
            if not e["municipal"]:
                raise RefusedError(f"{owner} is not a municipal user: certified credits are deposited to the subaccount of the "
                                   "municipal user with jurisdiction over the project site (section B); transfer them after")
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
                 on=None, description: str = "", reason: str = "", documents=()) -> dict:
        """Reserve credits for an application at once; approve when the capacity and SPDES refs are attached.

        ``peak_flow_gpd`` is the estimated peak sewage flow rate increase of the connection; the
        credits reserved are ``offset_ratio`` times it, rounded up (section F). A connection adding
        no more than 2,500 gpd needs no offset, so its withdrawal is refused. Without both the
        capacity demonstration ref and the SPDES/treatment ref the withdrawal stays *pending*
        (section H(1)); with both, the flow credit note is issued (``on``, default today) and the
        certificate of occupancy falls due one year later (DEFAULT).
        """
        peak = _positive_gpd("peak_flow_gpd", peak_flow_gpd)
        application = _text("application", application)
        capacity_ref = _text("capacity_ref", capacity_ref, required=False)
        spdes_ref = _text("spdes_ref", spdes_ref, required=False)
        if not ii_offset.offset_required(peak, threshold_gpd):
            raise RefusedError(f"no offset is required: {peak:,.0f} gpd does not exceed the {threshold_gpd:,.0f} gpd "
                               "threshold (definitions, NEW OR MODIFIED SEWER CONNECTION); no credits withdrawn")
        need = book_up(float(ii_offset.credits_required_gpd(peak, offset_ratio, threshold_gpd)))
        on = parse_date("on", on)
        with self._tx() as c:
            b, e = self._basin(c, basin), self._entity(c, owner)
            if c.execute("SELECT 1 FROM withdrawals WHERE application=?", (application,)).fetchone():
                raise RefusedError(f"application {application!r} already has a withdrawal")
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
            approved = capacity_ref is not None and spdes_ref is not None
            note_on = (on or self._today()) if approved else None
            due = _add_years(note_on, ii_offset.CERTIFICATE_OF_OCCUPANCY_YEARS) if note_on else None
            cur = c.execute(
                "INSERT INTO withdrawals(application, subaccount_id, principal_id, peak_flow_gpd, offset_ratio, amount_gpd,"
                " status, capacity_ref, spdes_ref, description, requested_at, note_issued_on, co_due_on)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (application, sub["id"], p["id"], peak, float(offset_ratio), need, "approved" if approved else "pending",
                 capacity_ref, spdes_ref, description or "", self._now(),
                 note_on.isoformat() if note_on else None, due.isoformat() if due else None))
            self._move(c, sub["id"], -need, "withdraw", reason=reason or f"application {application}",
                       documents=[*documents, capacity_ref, spdes_ref], basin_id=b["id"], ref=application,
                       detail={"peak_flow_gpd": peak, "offset_ratio": float(offset_ratio), "reserved_gpd": need,
                               "status": "approved" if approved else "pending", "principal": p["name"]})
            wid = cur.lastrowid
        return self.withdrawal(application) | {"id": wid}

    def attach(self, application: str, *, capacity_ref: str | None = None, spdes_ref: str | None = None, on=None,
               reason: str = "", documents=()) -> dict:
        """Attach the capacity demonstration and/or SPDES refs; a pending withdrawal with both is approved."""
        capacity_ref = _text("capacity_ref", capacity_ref, required=False)
        spdes_ref = _text("spdes_ref", spdes_ref, required=False)
        if capacity_ref is None and spdes_ref is None:
            raise InputError("give capacity_ref and/or spdes_ref to attach")
        on = parse_date("on", on)
        with self._tx() as c:
            w = self._withdrawal(c, application)
            if w["status"] not in ("pending", "approved"):
                raise RefusedError(f"application {application!r} is {w['status']}; nothing to attach")
            cap = capacity_ref or w["capacity_ref"]
            spd = spdes_ref or w["spdes_ref"]
            status, note_on, due = w["status"], w["note_issued_on"], w["co_due_on"]
            if status == "pending" and cap and spd:
                status = "approved"
                d = on or self._today()
                note_on, due = d.isoformat(), _add_years(d, ii_offset.CERTIFICATE_OF_OCCUPANCY_YEARS).isoformat()
            c.execute("UPDATE withdrawals SET capacity_ref=?, spdes_ref=?, status=?, note_issued_on=?, co_due_on=? WHERE id=?",
                      (cap, spd, status, note_on, due, w["id"]))
            basin_id = c.execute("SELECT basin_id FROM subaccounts WHERE id=?", (w["subaccount_id"],)).fetchone()[0]
            self._log(c, "attach", reason=reason, documents=[*documents, capacity_ref, spdes_ref], basin_id=basin_id,
                      ref=application, detail={"status": status, "note_issued_on": note_on, "co_due_on": due})
        return self.withdrawal(application)

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

    def extend(self, application: str, until, *, document: str, reason: str = "") -> dict:
        """Record an extension of the time allowed for the certificate of occupancy (DEFAULT)."""
        until = parse_date("until", until)
        if until is None:
            raise InputError("until must be a date YYYY-MM-DD")
        document = _text("document", document)
        with self._tx() as c:
            w = self._withdrawal(c, application)
            if w["status"] != "approved":
                raise RefusedError(f"application {application!r} is {w['status']}; only an issued flow credit note can be extended")
            if until.isoformat() <= w["co_due_on"]:
                raise RefusedError(f"the extension must be later than the current due date {w['co_due_on']}")
            c.execute("INSERT INTO extensions(withdrawal_id, old_due_on, new_due_on, document, created_at) VALUES (?,?,?,?,?)",
                      (w["id"], w["co_due_on"], until.isoformat(), document, self._now()))
            c.execute("UPDATE withdrawals SET co_due_on=? WHERE id=?", (until.isoformat(), w["id"]))
            basin_id = c.execute("SELECT basin_id FROM subaccounts WHERE id=?", (w["subaccount_id"],)).fetchone()[0]
            self._log(c, "extend", reason=reason, documents=[document], basin_id=basin_id, ref=application,
                      detail={"old_due_on": w["co_due_on"], "new_due_on": until.isoformat()})
        return self.withdrawal(application)

    def complete(self, application: str, co_issued_on, *, reason: str = "", documents=()) -> dict:
        """Record the certificate of occupancy: the connection is complete (report part D)."""
        co = parse_date("co_issued_on", co_issued_on)
        if co is None:
            raise InputError("co_issued_on must be a date YYYY-MM-DD")
        with self._tx() as c:
            w = self._withdrawal(c, application)
            if w["status"] != "approved":
                raise RefusedError(f"application {application!r} is {w['status']}; only an approved withdrawal can be completed")
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
        they came from, and the note is closed as ``defaulted``.
        """
        as_of = parse_date("as_of", as_of) or self._today()
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
            seq_max = c.execute("SELECT max(seq) FROM journal WHERE at < ?", (cut,)).fetchone()[0]
            if seq_max is None:
                return {"purged_rows": 0, "before": cut}
            carry = c.execute("SELECT subaccount_id, basin_id, sum(delta_gpd) AS d FROM journal WHERE seq <= ? AND at < ? "
                              "AND subaccount_id IS NOT NULL GROUP BY subaccount_id", (seq_max, cut)).fetchall()
            c.execute("INSERT INTO purge_permits(seq_max, cutoff) VALUES (?, ?)", (seq_max, cut))
            n = c.execute("DELETE FROM journal WHERE seq <= ? AND at < ?", (seq_max, cut)).rowcount
            c.execute("DELETE FROM purge_permits")
            for r in carry:
                self._log(c, "carry-forward", reason=f"movements before {cut} purged", basin_id=r["basin_id"],
                          subaccount_id=r["subaccount_id"], delta_gpd=r["d"], detail={"purged_before": cut})
            self._log(c, "purge", reason=reason, detail={"before": cut, "rows": n})
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
                "capacity_ref", "spdes_ref", "description", "requested_at", "note_issued_on", "co_due_on", "co_issued_on", "closed_at")
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
                        "ref": r["ref"], "reason": r["reason"], "documents": json.loads(r["documents"]),
                        "detail": json.loads(r["detail"])})
        return out

    def verify(self) -> dict:
        """Check the ledger: every subaccount's journal sums to its balance; no negative balance;
        every reserved withdrawal's credits accounted; SQLite integrity and foreign keys."""
        c = self.conn
        problems = []
        if c.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
            problems.append("sqlite integrity_check failed")
        if c.execute("PRAGMA foreign_key_check").fetchone() is not None:
            problems.append("foreign key violations")
        for r in c.execute("SELECT s.id, s.balance_gpd, coalesce(sum(j.delta_gpd), 0) AS total FROM subaccounts s"
                           " LEFT JOIN journal j ON j.subaccount_id = s.id GROUP BY s.id"):
            if r["balance_gpd"] != r["total"]:
                problems.append(f"subaccount {r['id']}: balance {r['balance_gpd']} but journal sums to {r['total']}")
            if r["balance_gpd"] < 0:
                problems.append(f"subaccount {r['id']}: negative balance")
        deposits = c.execute("SELECT coalesce(sum(certified_gpd),0) FROM projects WHERE status='certified'").fetchone()[0]
        held = c.execute("SELECT coalesce(sum(balance_gpd),0) FROM subaccounts").fetchone()[0]
        out = c.execute("SELECT coalesce(sum(amount_gpd),0) FROM withdrawals WHERE status IN ('pending','approved','completed')").fetchone()[0]
        if deposits != held + out:
            problems.append(f"credits deposited {deposits} != held {held} + withdrawn {out}")
        return {"ok": not problems, "problems": problems, "deposited_gpd": deposits, "held_gpd": held, "withdrawn_gpd": out}


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
