"""The sewer flow credit bank of the Binghamton-Johnson City I/I offset program, on one SQLite file.

Every operation is one transaction (``BEGIN IMMEDIATE``: the write lock is taken before anything is
read, so two processes can never both see the same balance and spend it twice). Each operation checks
the program's rules in code first, to refuse with a message that says why
(:class:`~capacitysim.errors.RefusedError`), and the schema's CHECK constraints and triggers refuse
the same things again (:mod:`capacitysim.bank.schema`). Every change writes journal rows with who,
when, what, why and which documents; a row that moves credits carries the balance after the move.

Who acts
--------
Every command that writes names the person acting (``actor``: ``--actor`` or ``$CAPACITYSIM_ACTOR``),
a person's given and family name checked by :func:`person_name`; the login name is never used. The
journal records that name on every row.

Sign-off by the bank administrator
----------------------------------
The definitions make the BANK ADMINISTRATOR "review and sign off on all approved applications for
flow credit creation, bank deposits, withdrawals and transfers". Deposits, withdrawals and transfers
are therefore recorded *pending* and take effect only when a person registered as bank administrator
signs them off (:meth:`Ledger.sign_off`, who and when recorded in the journal and the ``signoffs``
table) or are rejected (:meth:`Ledger.reject`). A withdrawal is signed off only with the capacity
demonstration and the SPDES/treatment check of section H(1) and the connection application
program's approval of section H(2). What a pending transaction does to a balance is the program
policy ``pending_reserve`` (:data:`POLICIES`).

Maker-checker
-------------
* Nobody signs off or rejects a transaction they recorded (program policy ``signoff_separation``):
  "recorded" is the actor of the journal row that created the pending sign-off (``record-deposit``,
  ``withdraw``, ``transfer-out``; ``signoffs.recorded_by``), compared ignoring case. A bank with a single
  administrator therefore cannot sign off that administrator's own entries: a second administrator is
  registered with :meth:`Ledger.add_administrator`.
* A capacity demonstration or SPDES check (the same SHA-256) is the evidence of one application (program
  policy ``evidence_single_use``): :meth:`Ledger.withdraw` and :meth:`Ledger.attach` refuse a document
  another withdrawal holds, naming its application; a rejected or returned withdrawal releases it.
* The service's users act only for the bank entities an administrator bound them to (program policy
  ``service_user_binding``; :meth:`Ledger.bind_user`, :meth:`Ledger.acts_for`); the service enforces it,
  the ledger keeps the bindings (journaled, never deleted).

Provenance of credits
---------------------
Section D lets a municipal user condemn only credits "generated in relation to an I/I remediation
project within such municipal user's boundaries". Each signed-off deposit creates a *lot* (the
project, hence its jurisdiction and basin); withdrawals, transfers and condemnations take credits out
of a holder's lots in the order of the program policy ``allocation_policy`` (oldest deposit first),
and the receiving side gets lots of the same origin. :meth:`Ledger.condemn` takes only lots whose
project's jurisdiction is the condemning municipal user.

The journal is hash-chained (each row's SHA-256 covers its content and the previous row's hash),
and :meth:`Ledger.verify` audits the chain, the running balances, the lots and every record against
its journal rows, so an edit made around the triggers (with the ``sqlite3`` shell) is found.
Operations that cannot get the write lock within the timeout fail cleanly (:class:`BankBusyError`,
nothing changed).

What ``verify`` can and cannot detect
-------------------------------------
Without an anchor, ``verify`` finds any edit that leaves a trace inside the file: a row changed,
removed, inserted or reordered without recomputing the hashes; a value of the wrong type; a balance
that is not the sum of its journal rows or of its lots; a record (project, withdrawal, transfer,
condemnation) without its journal rows or with other amounts; a cited report file whose bytes
changed. It **cannot** detect a *consistent* rewrite: someone with write access to the file who drops the
triggers, edits history, keeps the records and balances in step and recomputes the whole hash chain
produces a file that verifies. Only a head hash kept *outside* the bank can show that: record the
head (:meth:`Ledger.head`, ``capacitysim bank head``, printed in every annual report) somewhere the
bank's writers cannot change (the Board's minutes, an e-mail, a signed report), and later
``capacitysim bank verify --expect-head HASH`` fails unless the current chain still leads to that
hash, i.e. unless every row up to that one is exactly as it was. Rows written after the anchor are
only protected by the next anchor.

Amounts are whole gallons per day, each at most :data:`MAX_GPD`. A certified figure is booked rounded *down* and a requirement
rounded *up* (never credit more I/I removal than certified, never withdraw less than required).

Program policies
----------------
Where the program text is silent the ledger applies a named program policy (:data:`POLICIES`):
``allocation_policy``, ``pending_reserve``, ``default_credits``, ``extension_after_due_date``,
``spdes_evidence_max_age_days``, ``condemnation_signoff``, ``administrator_registration``,
``signoff_separation``, ``evidence_single_use``, ``service_user_binding`` and ``bank_reads``. Each is
returned in the JSON of the operations it governs and printed as "program interpretation — confirm
with the bank administrator"; none is the rule.

References
----------
Binghamton-Johnson City I/I Offset Program: sewer flow credit bank sections A (basins; transfers
across basins only with Board approval), B (deposit into the subaccount of the municipal user with
jurisdiction once a project is certified complete; transfers with written notice), C (excess stays
on deposit, no expiration), D (condemnation), E (gpd), F (one-to-one offset), G (transfers need proper
documentation), H (withdrawal subject to capacity demonstration and connection approval); definitions
BANK ADMINISTRATOR, DEFAULT and FLOW CREDIT NOTE; records (three years, extended during a dispute;
annual report A-D).
"""

from __future__ import annotations

import contextlib
import copy
import datetime as _dt
import hashlib
import json
import math
import os
import re
import sqlite3
import unicodedata
import uuid
from pathlib import Path

from capacitysim.bank import commitments as _commit
from capacitysim.bank import refs as _refs
from capacitysim.bank.schema import MIGRATION_3, MIGRATION_4, MIGRATION_5, MIGRATION_6, SCHEMA, SCHEMA_VERSION
from capacitysim.errors import BusyError, CapacitysimError, InputError, RefusedError
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
#: Kinds of a connection application (definitions: NEW OR MODIFIED SEWER CONNECTION, SEWER EXTENSION).
APPLICATION_TYPES = ("connection", "extension")

# --- who acts ------------------------------------------------------------------------------------
#: Length of a person's name [characters].
MIN_NAME, MAX_NAME = 2, 100
#: Punctuation a person's name may hold besides letters: space, hyphen, apostrophes, period.
_NAME_PUNCTUATION = frozenset(" -'\u2019.")
#: Words that name a role, an account or a program, not a person: a name made only of them
#: ("root", "Bank Administrator", "System User") is refused.
ROLE_WORDS = frozenset({
    "admin", "administrator", "administrators", "anonymous", "bank", "bench", "benchmark", "board", "bot", "ci",
    "clerk", "daemon", "default", "dept", "department", "guest", "nobody", "office", "operator", "root", "server",
    "service", "setup", "staff", "sys", "sysadmin", "system", "test", "tester", "unknown", "user", "users", "worker",
})

# --- program policies: where the program text is silent --------------------------------------------
#: What every program policy's text says: it is the tool's reading, not the rule.
POLICY_FLAG = "program interpretation — confirm with the bank administrator"
#: Program policy ``allocation_policy``: the order in which credits leave a holder's lots.
ALLOCATION_POLICY = "FIFO"
#: Program policy ``spdes_evidence_max_age_days`` [days] (see :mod:`capacitysim.bank.refs`).
SPDES_EVIDENCE_MAX_AGE_DAYS = _refs.SPDES_EVIDENCE_MAX_AGE_DAYS
#: Program policy ``pending_reserve``.
PENDING_RESERVE = "reserve-when-recorded"
#: Program policy ``default_credits``: what happens to the credits of a defaulted flow credit note.
DEFAULT_CREDITS = "return-to-holder"
#: Program policy ``extension_after_due_date``.
EXTENSION_AFTER_DUE_DATE = "refused"
#: Program policy ``condemnation_signoff``.
CONDEMNATION_SIGNOFF = "not-required"
#: Program policy ``administrator_registration``.
ADMINISTRATOR_REGISTRATION = "by-a-registered-administrator"
#: Program policy ``signoff_separation`` (maker-checker): who may not sign off or reject a transaction.
SIGNOFF_SEPARATION = "recorder-excluded"
#: Program policy ``evidence_single_use``: ``until-rejected-or-returned`` (the policy) or ``never-released``
#: (its alternative, implemented: tests switch to it). The withdrawal statuses in which a withdrawal holds
#: the documents it cites, under each value (:data:`EVIDENCE_HELD_BY`).
EVIDENCE_SINGLE_USE = "until-rejected-or-returned"
EVIDENCE_HELD_BY = {"until-rejected-or-returned": ("pending", "approved", "completed", "defaulted"),
                    "never-released": ("pending", "approved", "completed", "defaulted", "returned")}
#: Program policy ``service_user_binding``: whom a service user (``capacitysim serve``) records transactions for.
SERVICE_USER_BINDING = "bound-entities-only"
#: The service roles a binding is for (administrators act for every entity; reviewers record nothing).
BINDABLE_ROLES = ("engineer", "municipal")
#: Program policy ``bank_reads``: what a service user may read of the bank.
BANK_READS = "public-record"

#: The program policies, ``{"name", "value", "text", "alternative"}`` (the form of
#: :func:`capacitysim.rules.ii_offset.check_offset_ratio`); each text starts with :data:`POLICY_FLAG`.
POLICIES = {
    "allocation_policy": {
        "name": "allocation_policy", "value": ALLOCATION_POLICY,
        "text": (f"{POLICY_FLAG}: the program does not say which of a holder's credits a withdrawal, transfer or "
                 "condemnation takes; credits leave a holder's lots oldest first (FIFO: the certification date of "
                 "the originating deposit, then the lot number); lots of unknown origin (from a migrated "
                 "schema-2 bank) count as the oldest"),
        "alternative": {"value": "LIFO", "text": "newest deposit first"}},
    "pending_reserve": {
        "name": "pending_reserve", "value": PENDING_RESERVE,
        "text": (f"{POLICY_FLAG}: the bank administrator signs off deposits, withdrawals and transfers (definitions, "
                 "BANK ADMINISTRATOR) but the program does not say what a transaction awaiting sign-off does to a "
                 "balance; a withdrawal or transfer takes its credits out of the holder's available balance when "
                 "it is recorded (reserved: they cannot be promised twice), a deposit and the receiving side of a "
                 "transfer count only once signed off, and a rejection or return releases the reserve"),
        "alternative": {"value": "nothing-until-signed-off",
                        "text": "a pending withdrawal or transfer reserves nothing (the same credits could be promised "
                                "twice; the second sign-off would be refused)"}},
    "default_credits": {
        "name": "default_credits", "value": DEFAULT_CREDITS,
        "text": (f"{POLICY_FLAG}: the program defines DEFAULT (no certificate of occupancy within one year of the "
                 "flow credit note, or the extended time) but not what happens to the note's credits; they return "
                 "to the subaccount and lots they were withdrawn from and the note is closed as defaulted"),
        "alternative": {"value": "forfeit", "text": "the credits are forfeited (to the Board or the principal "
                                                     "municipal user); not implemented"}},
    "extension_after_due_date": {
        "name": "extension_after_due_date", "value": EXTENSION_AFTER_DUE_DATE,
        "text": (f"{POLICY_FLAG}: the DEFAULT definition allows additional time 'when extended as provided "
                 "herein' but the program sets no deadline for granting it; an extension granted after the "
                 "certificate of occupancy's due date is refused (the note is taken to be in default from the "
                 "day after the due date)"),
        "alternative": {"value": "accepted-until-defaulted",
                        "text": "an extension granted after the due date is accepted while the note has not been "
                                "put in default"}},
    "spdes_evidence_max_age_days": {
        "name": "spdes_evidence_max_age_days", "value": SPDES_EVIDENCE_MAX_AGE_DAYS,
        "text": (f"{POLICY_FLAG}: section H(1) asks for a demonstration of adequate treatment capacity and sets "
                 f"no age for it; the cited SPDES/treatment check must be as of no more than "
                 f"{SPDES_EVIDENCE_MAX_AGE_DAYS} days before the withdrawal date and before the administrator's "
                 "sign-off"),
        "alternative": {"value": None, "text": "no age limit"}},
    "condemnation_signoff": {
        "name": "condemnation_signoff", "value": CONDEMNATION_SIGNOFF,
        "text": (f"{POLICY_FLAG}: section D lets the municipal user mandate a condemnation; the BANK "
                 "ADMINISTRATOR definition lists deposits, withdrawals and transfers for sign-off, not "
                 "condemnations, so a condemnation takes effect when recorded with the municipal user's "
                 "resolution"),
        "alternative": {"value": "required", "text": "a condemnation awaits the administrator's sign-off"}},
    "administrator_registration": {
        "name": "administrator_registration", "value": ADMINISTRATOR_REGISTRATION,
        "text": (f"{POLICY_FLAG}: the bank administrator is 'the Board or its designee' (definitions); the "
                 "program does not say how the bank learns who that is; the first administrator is registered "
                 "when the bank is created (or migrated) and further ones only by a registered administrator"),
        "alternative": {"value": "board-resolution-only",
                        "text": "every administrator registered against a cited Board resolution"}},
    "signoff_separation": {
        "name": "signoff_separation", "value": SIGNOFF_SEPARATION,
        "text": (f"{POLICY_FLAG}: the BANK ADMINISTRATOR definition has the administrator 'review and sign off' "
                 "deposits, withdrawals and transfers but does not say whether an administrator may sign off a "
                 "transaction they recorded; the person who recorded a deposit, withdrawal or transfer (the actor "
                 "of the journal row that created its pending sign-off: record-deposit, withdraw or transfer-out; "
                 "names compared ignoring case) can neither sign it off nor reject it: another registered "
                 "administrator does (a bank with a single administrator cannot sign off that administrator's own "
                 "entries: register a second one with add-administrator); attaching references to a pending "
                 "withdrawal does not make one its recorder, and the recorder may still return its credits"),
        "alternative": {"value": "any-administrator",
                        "text": "any registered administrator signs off, the recorder included (one person can "
                                "then record and approve a withdrawal alone)"}},
    "evidence_single_use": {
        "name": "evidence_single_use", "value": EVIDENCE_SINGLE_USE,
        "text": (f"{POLICY_FLAG}: section H(1) asks for a demonstration of adequate hydraulic and treatment "
                 "capacity 'in relation to the application' and does not say whether one demonstration may serve "
                 "several applications; a capacity demonstration or SPDES/treatment check (the same document: "
                 "the same SHA-256, whatever its path; through the service, the result of the same job or of a "
                 "job with byte-identical results) is the evidence of one application only: a second withdrawal "
                 "or attach citing it is refused while the withdrawal that cites it is pending, approved, "
                 "completed or defaulted; a withdrawal rejected by the administrator or returned (status "
                 "returned) releases its evidence, which a later application may cite"),
        "alternative": {"value": "never-released",
                        "text": "a cited document stays the evidence of the first application that cited it, even "
                                "once that withdrawal is rejected or returned"}},
    "service_user_binding": {
        "name": "service_user_binding", "value": SERVICE_USER_BINDING,
        "text": (f"{POLICY_FLAG}: sections B, C and G let a municipal user use and transfer the credits of its "
                 "subaccount and an applicant withdraw them for its application; the program does not say which "
                 "users of the simulation service act for which entity; a bank administrator binds each service "
                 "user to the bank entities they act for (bind-user, journaled): a municipal user records "
                 "deposits, withdrawals and transfers only for subaccounts whose owner is an entity they are "
                 "bound to (a municipal service user is bound only to municipal users), an engineer only for the "
                 "holders who named them (bound to the holder: a withdrawal paid from its subaccount, a deposit "
                 "into it); administrators act for every entity; a binding is closed with unbind-user and kept"),
        "alternative": {"value": "role-only",
                        "text": "any user of a role that may record a transaction records it for any entity "
                                "(the administrator checks the holder's consent at the sign-off)"}},
    "bank_reads": {
        "name": "bank_reads", "value": BANK_READS,
        "text": (f"{POLICY_FLAG}: the records section has the Board retain the program's records and make them "
                 "'available for public inspection by regulatory agencies and other interested parties'; every "
                 "service user who may read the bank (every role) reads every balance, deposit, withdrawal, "
                 "transfer and sign-off, whether or not bound to the entity; bindings limit only what a user "
                 "records, and the bindings themselves are read by administrators"),
        "alternative": {"value": "bound-entities-only",
                        "text": "engineers and municipal users read only the subaccounts of the entities they are "
                                "bound to"}},
    "no_backdating": {
        "name": "no_backdating", "value": "journal-order",
        "text": (f"{POLICY_FLAG}: the records section has the Board keep the program's records and the program dates "
                 "notes, defaults and approvals, but does not say whether an entry may be dated before entries already "
                 "recorded; a row (a withdrawal, sign-off, connection, model registration, expiry or default run) "
                 "cannot be dated before the day the journal's last row was recorded, so a date cannot be moved back "
                 "past evidence-age and expiry checks; a late entry is recorded by a bank administrator with its "
                 "reason (late_reason), and its journal rows keep both the date it takes effect and when it was "
                 "recorded"),
        "alternative": {"value": "any-past-date",
                        "text": "any date up to today is accepted (an entry can then be dated before rows recorded "
                                "earlier, and old evidence made to look recent)"}},
    "annual_report_due": {
        "name": "annual_report_due", "value": "anniversary",
        "text": (f"{POLICY_FLAG}: each municipal user submits its records to the bank administrator 'on at least an "
                 "annual basis' (records section), on no fixed date; the next submission is due one year after the "
                 "last one (the first one year after the municipal user entered the bank), and a submission after "
                 "that date is recorded as late"),
        "alternative": {"value": "calendar-year",
                        "text": "the records of each calendar year are due by December 31 of that year"}},
}


POLICIES.update(_commit.POLICIES)


def policies(*names: str) -> list[dict]:
    """The program policies named (all of them by default), as independent copies."""
    return [copy.deepcopy(POLICIES[n]) for n in (names or POLICIES)]


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


def person_name(name: str, value) -> str:
    """A person's name for the journal (``actor``) or the administrator register.

    Rules (issue 14, the journal names a person, never a login): NFC-normalised, stripped, runs of
    spaces made one; :data:`MIN_NAME` to :data:`MAX_NAME` characters; only letters (any script, with
    their combining marks), spaces, hyphens, apostrophes (``'`` and ``’``) and periods; starts with a
    letter and every part holds a letter; at least two parts (given and family name: a single token
    such as ``root`` or ``jsmith`` is what a login name looks like); not made only of role or
    account words (:data:`ROLE_WORDS`: "Bank Administrator", "System User").

    Raises
    ------
    InputError
        Naming the field, the value and what is allowed.
    """
    allowed = ("allowed: a person's given and family name, e.g. \"Jane Q. Smith\" (letters, spaces, hyphens, "
               f"apostrophes, periods; {MIN_NAME}-{MAX_NAME} characters)")
    v = "" if value is None else re.sub(" +", " ", unicodedata.normalize("NFC", str(value)).strip())
    if not v:
        raise InputError(f"{name} must name the person acting; {allowed}")
    shown = repr(v if len(v) <= 60 else v[:57] + "...")
    bad = [ch for ch in v if ch not in _NAME_PUNCTUATION and unicodedata.category(ch)[0] not in "LM"]
    if bad:
        chars = ", ".join(f"U+{ord(ch):04X}" + (f" {ch!r}" if ch.isprintable() else "") for ch in dict.fromkeys(bad))
        raise InputError(f"{name} {shown} contains {chars}; {allowed}")
    if not MIN_NAME <= len(v) <= MAX_NAME:
        raise InputError(f"{name} {shown} is {len(v)} characters long; {allowed}")
    words = v.split(" ")
    if unicodedata.category(v[0])[0] != "L" or not all(any(unicodedata.category(ch)[0] == "L" for ch in w) for w in words):
        raise InputError(f"{name} {shown}: every part must hold a letter and the name must start with one; {allowed}")
    if len(words) < 2:
        raise InputError(f"{name} {shown} is a single word, as a login or account name is; {allowed}")
    if all(w.casefold().strip(".'\u2019-") in ROLE_WORDS for w in words):
        raise InputError(f"{name} {shown} names a role or an account, not a person; {allowed}")
    return v


def default_actor() -> str | None:
    """Who is acting when no ``actor`` is given: ``$CAPACITYSIM_ACTOR`` (validated by :func:`person_name`), else None.

    There is no fallback to the login name (issue 14): a command that writes without an actor is an
    :class:`InputError`.

    Raises
    ------
    InputError
        The variable is set but not a person's name (a newline would forge a journal line; a login
        such as ``root`` names no person).
    """
    env = os.environ.get("CAPACITYSIM_ACTOR")
    if not env:  # unset or empty: no actor (reading only)
        return None
    return person_name("actor ($CAPACITYSIM_ACTOR)", env)


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


def _nonnegative_gpd(name: str, value) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number of gallons per day, got {value!r}") from None
    if not math.isfinite(v) or v < 0 or v > MAX_GPD:
        raise InputError(f"{name} must be >= 0 and <= {MAX_GPD:,.0f} gpd, got {value!r}")
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


def _app_type(value) -> str:
    v = "connection" if value is None else str(value).strip().lower()
    if v not in APPLICATION_TYPES:
        raise InputError(f"type must be one of {', '.join(APPLICATION_TYPES)} (definitions: new or modified sewer "
                         f"connection, sewer extension), got {value!r}")
    return v


#: Notes of lots whose origin the ledger did not see happen.
LOT_NOTE_MIGRATED = ("attributed at the migration to schema 3 by replaying the journal with the allocation policy "
                     f"({ALLOCATION_POLICY})")
LOT_NOTE_UNKNOWN = ("origin unknown: credits of a schema-2 bank whose journal does not show the project they came "
                    "from (purged, or moved before lots were kept); condemnation refuses to take them")
#: Missing references that keep a withdrawal from being signed off (section H).
_H_REFS = (("capacity_ref", "the capacity demonstration (--capacity-ref, section H(1))"),
           ("spdes_ref", "the SPDES/treatment check (--spdes-ref, section H(1))"),
           ("application_approval", ("the approval under the connection application program "
                                     "(--application-approval, section H(2))")))


class Ledger:
    """The flow credit bank in one SQLite file (WAL, foreign keys, one transaction per operation).

    Parameters
    ----------
    path : str or Path
        The bank file.
    actor : str, optional
        The person acting (journal ``actor``), checked by :func:`person_name`; default
        :func:`default_actor` (``$CAPACITYSIM_ACTOR``). Required by every operation that writes
        (an :class:`InputError` otherwise); reading needs none.
    create : bool, default False
        Create and initialise the file if needed; otherwise a missing or uninitialised file is an
        InputError.
    administrator : str, optional
        With ``create`` (a new bank) or ``migrate``: the first person registered as bank
        administrator (required then).
    migrate : bool, default False
        Migrate a schema-2 bank to schema 3 (:meth:`_migrate_2_to_3`), in one transaction.
    timeout_s : float, default 60
        How long to wait for another writer's lock [s].
    clock : callable, optional
        Returns the current UTC datetime (tests use it to write records with past dates).
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

    # --- lots: the provenance of credits (section D) ----------------------------------------------------
    def _new_lot(self, c, subaccount_id: int, project_id, deposited_on, *, source_lot_id=None, note: str = "",
                 at: str | None = None) -> int:
        cur = c.execute("INSERT INTO lots(subaccount_id, project_id, deposited_on, source_lot_id, note, created_at)"
                        " VALUES (?,?,?,?,?,?)", (subaccount_id, project_id, deposited_on, source_lot_id, note,
                                                  at or self._now()))
        return cur.lastrowid

    def _lot_move(self, c, lot_id: int, delta: int, action: str, ref: str, *, txn: str | None = None,
                  at: str | None = None) -> None:
        """Move credits into (+) or out of (-) a lot: the move row, then the lot's gpd (a trigger keeps them equal)."""
        c.execute("INSERT INTO lot_moves(lot_id, delta_gpd, action, ref, txn, at) VALUES (?,?,?,?,?,?)",
                  (lot_id, int(delta), action, ref, txn or self._txn, at or self._now()))
        c.execute("UPDATE lots SET gpd = gpd + ? WHERE id=?", (int(delta), lot_id))

    @staticmethod
    def _holder_lots(c, subaccount_id: int) -> list[sqlite3.Row]:
        """The subaccount's lots holding credits, in the order of the allocation policy (FIFO: the
        originating deposit's certification date, unknown origin first, then the lot number)."""
        return c.execute(
            "SELECT l.id, l.gpd, l.project_id, l.deposited_on, p.ref AS project, p.jurisdiction_id, e.name AS jurisdiction,"
            " pb.name AS project_basin FROM lots l LEFT JOIN projects p ON p.id = l.project_id"
            " LEFT JOIN entities e ON e.id = p.jurisdiction_id LEFT JOIN basins pb ON pb.id = p.basin_id"
            " WHERE l.subaccount_id = ? AND l.gpd > 0 ORDER BY l.deposited_on IS NOT NULL, l.deposited_on, l.id",
            (subaccount_id,)).fetchall()

    def _take(self, c, lots, amount: int, action: str, ref: str, *, txn=None, at=None) -> tuple[list[dict], int]:
        """Take ``amount`` gpd out of ``lots`` in their order; returns the pieces taken and what is left untaken."""
        pieces, left = [], int(amount)
        for lot in lots:
            if left <= 0:
                break
            g = min(int(lot["gpd"]), left)
            self._lot_move(c, lot["id"], -g, action, ref, txn=txn, at=at)
            pieces.append({"lot": lot["id"], "gpd": g, "project": lot["project"], "jurisdiction": lot["jurisdiction"],
                           "deposited_on": lot["deposited_on"]})
            left -= g
        return pieces, left

    def _consume(self, c, subaccount_id: int, amount: int, action: str, ref: str) -> list[dict]:
        """Take ``amount`` gpd out of a holder's lots by the allocation policy (in the caller's transaction)."""
        self._need(c, subaccount_id, amount)
        pieces, left = self._take(c, self._holder_lots(c, subaccount_id), amount, action, ref)
        if left:
            raise RefusedError(f"the lots of subaccount {subaccount_id} hold {amount - left:,} gpd, less than its balance: "
                               "the bank was edited outside capacitysim (run `capacitysim bank verify`)")
        return pieces

    @staticmethod
    def _pieces(c, ref: str, action: str) -> list[dict]:
        """The pieces an operation took out of lots (``action``, ``ref``), in the order taken."""
        return [{"lot": r["lot_id"], "gpd": r["gpd"]} for r in c.execute(
            "SELECT lot_id, -delta_gpd AS gpd FROM lot_moves WHERE ref=? AND action=? AND delta_gpd < 0 ORDER BY id",
            (ref, action))]

    def _restore(self, c, pieces, amount: int, action: str, ref: str, subaccount_id: int, *, txn=None, at=None) -> None:
        """Put ``amount`` gpd back into the lots ``pieces`` came from (a return, a default, a rejection);
        what no piece accounts for goes to a lot of unknown origin."""
        left = int(amount)
        for pc in pieces:
            g = min(int(pc["gpd"]), left)
            if g > 0:
                self._lot_move(c, pc["lot"], g, action, ref, txn=txn, at=at)
                left -= g
        if left > 0:
            lot = self._new_lot(c, subaccount_id, None, None, note=LOT_NOTE_UNKNOWN, at=at)
            self._lot_move(c, lot, left, action, ref, txn=txn, at=at)

    def _mirror(self, c, pieces, amount: int, subaccount_id: int, action: str, ref: str, *, txn=None, at=None,
                note: str = "") -> list[int]:
        """Give the receiving subaccount lots of the same origin as ``pieces`` (a transfer, a condemnation)."""
        left, made = int(amount), []
        for pc in pieces:
            g = min(int(pc["gpd"]), left)
            if g <= 0:
                continue
            src = c.execute("SELECT project_id, deposited_on FROM lots WHERE id=?", (pc["lot"],)).fetchone()
            lot = self._new_lot(c, subaccount_id, src["project_id"], src["deposited_on"], source_lot_id=pc["lot"],
                                note=note, at=at)
            self._lot_move(c, lot, g, action, ref, txn=txn, at=at)
            made.append(lot)
            left -= g
        if left > 0:
            lot = self._new_lot(c, subaccount_id, None, None, note=LOT_NOTE_UNKNOWN, at=at)
            self._lot_move(c, lot, left, action, ref, txn=txn, at=at)
            made.append(lot)
        return made

    @staticmethod
    def _show_pieces(pieces) -> list[dict]:
        return [{"lot": p["lot"], "gpd": p["gpd"], "project": p.get("project"), "jurisdiction": p.get("jurisdiction")}
                for p in pieces]

    # --- sign-off records ---------------------------------------------------------------------------
    def _record_signoff(self, c, kind: str, ref: str, subaccount_id: int, amount: int, detail: dict | None = None) -> str:
        """A pending sign-off row for what this transaction recorded; returns its id (the transaction's txn)."""
        c.execute("INSERT INTO signoffs(txn, kind, ref, subaccount_id, amount_gpd, detail, status, recorded_at, recorded_by)"
                  " VALUES (?,?,?,?,?,?,'pending',?,?)",
                  (self._txn, kind, ref, subaccount_id, int(amount), json.dumps(detail or {}, sort_keys=True,
                                                                                ensure_ascii=False),
                   self._now(), self._require_actor()))
        return self._txn

    @staticmethod
    def _signoff_row(c, txn: str) -> sqlite3.Row:
        t = str(txn or "").strip().lower()
        if not re.fullmatch(r"[0-9a-f]{8,32}", t):
            raise InputError(f"txn {str(txn)[:60]!r}: allowed: the transaction id printed when the deposit, withdrawal or "
                             "transfer was recorded (`bank pending`), 8 to 32 hexadecimal digits")
        rows = c.execute("SELECT * FROM signoffs WHERE txn LIKE ? ORDER BY id LIMIT 2", (t + "%",)).fetchall()
        if not rows:
            raise InputError(f"txn {t!r}: no deposit, withdrawal or transfer was recorded with this id (see `bank pending`)")
        if len(rows) > 1:
            raise InputError(f"txn {t!r} is the start of more than one transaction id; give more digits")
        return rows[0]

    def _decide(self, c, s, status: str, reason: str, on: _dt.date | None = None, *, by: str | None = None) -> None:
        c.execute("UPDATE signoffs SET status=?, decided_at=?, decided_on=?, decided_by=?, decision=? WHERE id=?",
                  (status, self._now(), (on or self._today()).isoformat(), by or self._require_actor(), reason or "",
                   s["id"]))

    # --- administrators ---------------------------------------------------------------------------------
    @staticmethod
    def _administrator(c, name: str) -> str | None:
        """The registered administrator's name matching ``name`` (ignoring case), or None."""
        row = c.execute("SELECT name FROM administrators WHERE name_key=?", (name.casefold(),)).fetchone()
        return row[0] if row else None

    @staticmethod
    def _administrator_names(c) -> list[str]:
        return [r[0] for r in c.execute("SELECT name FROM administrators ORDER BY id")]

    def _require_administrator(self, c, what: str) -> str:
        """The acting person's registered administrator name; refused (exit 3) when not registered."""
        actor = self._require_actor()
        name = self._administrator(c, actor)
        if name is None:
            names = ", ".join(self._administrator_names(c)) or "none"
            raise RefusedError(f"{actor!r} is not a registered bank administrator; only the bank administrator {what} "
                               f"(definitions, BANK ADMINISTRATOR: 'review and sign off on ... bank deposits, "
                               f"withdrawals and transfers'); registered: {names}")
        return name

    def _register_administrator(self, c, name: str, document: str | None, reason: str) -> dict:
        same = self._administrator(c, name)
        if same is not None:
            raise RefusedError(f"{name!r} is already a registered bank administrator" + ("" if same == name else f" as {same!r}"))
        c.execute("INSERT INTO administrators(name, name_key, document, registered_at, registered_by) VALUES (?,?,?,?,?)",
                  (name, name.casefold(), document, self._now(), self._require_actor()))
        self._log(c, "add-administrator", reason=reason, documents=[document] if document else (),
                  detail={"administrator": name, "policy": "administrator_registration"})
        return {"administrator": name, "registered_by": self._actor, "document": document}

    def _not_the_recorder(self, c, s, admin: str, verb: str) -> None:
        """Refuse (program policy ``signoff_separation``) an administrator deciding a transaction they recorded.

        "Recorded" is the actor of the journal row that created the pending sign-off (``signoffs.recorded_by``:
        the ``record-deposit``, ``withdraw`` or ``transfer-out`` row); names are compared as the ledger
        compares administrators (NFC, spaces collapsed by :func:`person_name`, then ignoring case).
        """
        recorder = s["recorded_by"]
        if not isinstance(recorder, str) or recorder.casefold() != admin.casefold():
            return
        others = [n for n in self._administrator_names(c) if n.casefold() != admin.casefold()]
        who = (f"another registered administrator ({', '.join(others)}) must {verb}" if others else
               "no other administrator is registered: register a second one with `bank add-administrator NAME`")
        raise RefusedError(f"{admin!r} recorded {s['kind']} {s['ref']} (txn {s['txn']}) and cannot {verb}: the "
                           f"person who recorded a transaction neither signs it off nor rejects it (program policy "
                           f"signoff_separation, {POLICY_FLAG}); {who}")

    def add_administrator(self, name: str, *, document: str | None = None, reason: str = "") -> dict:
        """Register a person as bank administrator (definitions: "the Board or its designee").

        Only a registered administrator registers another (program policy
        ``administrator_registration``; the first is registered by ``init``/``migrate``).

        Raises
        ------
        InputError
            ``name`` is not a person's name (:func:`person_name`).
        RefusedError
            The actor is not a registered administrator, or ``name`` already is one.
        """
        name = person_name("administrator", name)
        document = _text("document", document, required=False)
        with self._tx() as c:
            self._require_administrator(c, "registers another administrator")
            out = self._register_administrator(c, name, document, reason or "bank administrator registered")
        return out | {"policies": policies("administrator_registration")}

    def administrators(self) -> list[dict]:
        """The persons registered as bank administrator, oldest first."""
        return [{"name": r["name"], "registered_at": r["registered_at"], "registered_by": r["registered_by"],
                 "document": r["document"]}
                for r in self.conn.execute("SELECT * FROM administrators ORDER BY id")]

    # --- service users bound to bank entities (program policy service_user_binding) ----------------------
    def bind_user(self, user: str, entity: str, *, role: str | None = None, document: str | None = None,
                  reason: str = "") -> dict:
        """Bind a service user (``capacitysim serve``) to a bank entity they act for (administrator only).

        Program policy ``service_user_binding``: an engineer or municipal service user records deposits,
        withdrawals and transfers through the service only for subaccounts whose owner is an entity they
        are bound to; administrators act for every entity. ``user`` is the service user's name (a
        person's name, :func:`person_name`; the bank does not hold the service's users: the CLI and the
        service check it is one of theirs), ``role`` their service role (``engineer`` or ``municipal``:
        a municipal service user is bound only to a municipal user), ``document`` the entity's letter
        naming them. Recorded in ``bindings`` and journaled (``bind-user``).

        Raises
        ------
        InputError
            ``user`` is not a person's name; ``entity`` is unknown.
        RefusedError
            The actor is not a registered administrator; the role is not bound (administrator,
            reviewer); a municipal service user to an entity that is not a municipal user; the binding
            exists already.
        """
        user = person_name("user", user)
        document = _text("document", document, required=False)
        if role is not None and role not in BINDABLE_ROLES:
            why = ("administrators act for every entity" if role == "administrator" else
                   "reviewers record nothing" if role == "reviewer" else f"allowed: {', '.join(BINDABLE_ROLES)}")
            raise RefusedError(f"{user!r} is a service {role}: only {' and '.join(BINDABLE_ROLES)} users are bound to "
                               f"entities ({why}; program policy service_user_binding)")
        with self._tx() as c:
            admin = self._require_administrator(c, "binds service users to bank entities")
            e = self._entity(c, entity)
            if role == "municipal" and not e["municipal"]:
                raise RefusedError(f"{e['name']!r} is not a municipal user: a municipal service user such as {user!r} acts "
                                   "for municipal users only (program policy service_user_binding); bind an engineer to "
                                   "a private holder")
            same = c.execute("SELECT user_name FROM bindings WHERE user_key=? AND entity_id=? AND unbound_at IS NULL",
                             (user.casefold(), e["id"])).fetchone()
            if same is not None:
                raise RefusedError(f"{same[0]!r} is already bound to {e['name']!r}")
            now = self._now()
            cur = c.execute("INSERT INTO bindings(user_name, user_key, role, entity_id, document, bound_at, bound_by)"
                            " VALUES (?,?,?,?,?,?,?)", (user, user.casefold(), role, e["id"], document, now, admin))
            self._log(c, "bind-user", reason=reason or f"service user {user} acts for {e['name']}",
                      documents=[document] if document else (), ref=f"binding-{cur.lastrowid}",
                      detail={"user": user, "entity": e["name"], "role": role, "policy": "service_user_binding"})
        return {"binding": cur.lastrowid, "user": user, "entity": e["name"], "role": role, "document": document,
                "bound_at": now, "bound_by": admin, "policies": policies("service_user_binding")}

    def unbind_user(self, user: str, entity: str, *, reason: str = "") -> dict:
        """Close a service user's binding to an entity (administrator only); the record is kept (``unbind-user``).

        Raises
        ------
        InputError
            ``user`` is not a person's name; ``entity`` is unknown; there is no open binding of them.
        RefusedError
            The actor is not a registered administrator.
        """
        user = person_name("user", user)
        with self._tx() as c:
            admin = self._require_administrator(c, "unbinds service users from bank entities")
            e = self._entity(c, entity)
            b = c.execute("SELECT * FROM bindings WHERE user_key=? AND entity_id=? AND unbound_at IS NULL",
                          (user.casefold(), e["id"])).fetchone()
            if b is None:
                bound = self._bound_names(c, user)
                raise InputError(f"{user!r} is not bound to {e['name']!r} (bound to: {', '.join(bound) or 'no entity'}; "
                                 "see `bank bindings`)")
            now = self._now()
            c.execute("UPDATE bindings SET unbound_at=?, unbound_by=? WHERE id=?", (now, admin, b["id"]))
            self._log(c, "unbind-user", reason=reason or f"service user {b['user_name']} no longer acts for {e['name']}",
                      ref=f"binding-{b['id']}",
                      detail={"user": b["user_name"], "entity": e["name"], "role": b["role"], "policy": "service_user_binding"})
        return {"binding": b["id"], "user": b["user_name"], "entity": e["name"], "role": b["role"], "bound_at": b["bound_at"],
                "bound_by": b["bound_by"], "unbound_at": now, "unbound_by": admin}

    @staticmethod
    def _bound_names(c, user: str) -> list[str]:
        return [r[0] for r in c.execute("SELECT e.name FROM bindings b JOIN entities e ON e.id = b.entity_id"
                                        " WHERE b.user_key=? AND b.unbound_at IS NULL ORDER BY e.name",
                                        (str(user).casefold(),))]

    def bindings(self, *, user: str | None = None, entity: str | None = None, closed: bool = False) -> list[dict]:
        """Service users bound to entities, oldest first (with ``closed``, the closed bindings too).

        Each: ``binding``, ``user``, ``role``, ``entity``, ``municipal``, ``document``, ``bound_at``,
        ``bound_by``, ``unbound_at``, ``unbound_by``.
        """
        where, args = ["1"], []
        if user is not None:
            where.append("b.user_key = ?")
            args.append(str(user).strip().casefold())
        if entity is not None:
            where.append("e.name = ?")
            args.append(_text("entity", entity))
        if not closed:
            where.append("b.unbound_at IS NULL")
        rows = self.conn.execute("SELECT b.*, e.name AS entity, e.municipal FROM bindings b JOIN entities e ON e.id = b.entity_id"
                                 f" WHERE {' AND '.join(where)} ORDER BY b.id", args).fetchall()
        return [{"binding": r["id"], "user": r["user_name"], "role": r["role"], "entity": r["entity"],
                 "municipal": bool(r["municipal"]), "document": r["document"], "bound_at": r["bound_at"],
                 "bound_by": r["bound_by"], "unbound_at": r["unbound_at"], "unbound_by": r["unbound_by"]} for r in rows]

    def bound_entities(self, user: str) -> list[str]:
        """The entities ``user`` (a service user's name, ignoring case) is bound to, by name."""
        return self._bound_names(self.conn, user)

    def acts_for(self, user: str, entity: str) -> bool:
        """Whether service user ``user`` is bound to ``entity`` (program policy ``service_user_binding``).

        Raises
        ------
        InputError
            ``entity`` is not an entity of the bank.
        """
        e = self._entity(self.conn, entity)
        return self.conn.execute("SELECT 1 FROM bindings WHERE user_key=? AND entity_id=? AND unbound_at IS NULL",
                                 (str(user).strip().casefold(), e["id"])).fetchone() is not None

    # --- migration ----------------------------------------------------------------------------------------
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

    def add_basin(self, name: str, outlet: str | None = None, *, model=None, plant: str | None = None,
                  reason: str = "", documents=()) -> dict:
        """Register an I/I remediation basin (tributary to one CSO or pumping station).

        With ``model`` (a SWMM ``.inp``), the basin's model of record is registered at once as version 1
        (:meth:`register_model`: a bank administrator only; ``outlet`` required and a node of the model;
        ``plant`` the SPDES permit number or name of the plant the basin drains to).
        """
        name = _text("name", name)
        outlet = _text("outlet", outlet, required=False)
        plant = _text("plant", plant, required=False)
        if model is not None and outlet is None:
            raise InputError("outlet is required with a model: the basin's outlet node in the model (credit bank "
                             "section A is checked against it)")
        if plant is not None and model is None:
            raise InputError("plant is registered with the basin's model: give --model too")
        loaded = self._load_for_registration(model, outlet) if model is not None else None
        with self._tx() as c:
            same = _same_name(c, "basins", "name", name)
            if same is not None:
                raise RefusedError(f"basin {name!r} already exists" + ("" if same == name else f" as {same!r}"))
            if loaded is not None:
                self._require_administrator(c, "registers a basin's model of record")
            cur = c.execute("INSERT INTO basins(name, outlet, created_at) VALUES (?,?,?)",
                            (name, loaded["outlet"] if loaded else outlet, self._now()))
            self._log(c, "add-basin", reason=reason, documents=documents, basin_id=cur.lastrowid,
                      detail={"name": name, "outlet": loaded["outlet"] if loaded else outlet})
            if loaded is not None:
                b = c.execute("SELECT * FROM basins WHERE id=?", (cur.lastrowid,)).fetchone()
                self._insert_model(c, b, loaded, plant, (), self._today(), reason, documents)
        out = {"name": name, "outlet": loaded["outlet"] if loaded else outlet}
        return out | ({"model": self.models(name)[-1]} if loaded else {})

    # --- the registered system model and committed flows (issue 24; capacitysim.bank.commitments) ------------
    def _load_for_registration(self, model, outlet: str | None) -> dict:
        """Have the engine open ``model`` (the engine is the judge of validity) and find ``outlet`` in it."""
        path = Path(_text("model", str(model))).expanduser().resolve()
        m, sha = _commit.read_model(path, probe=True)
        out = {"path": str(path), "sha256": sha, "nodes": len(m.node_ids()), "model": m}
        if outlet is not None:
            o = m.find_node(outlet)
            if o is None:
                raise InputError(f"outlet {outlet!r} is not a node of {path.name}; allowed: a node of the model")
            out["outlet"] = o
        return out

    def _insert_model(self, c, b, loaded: dict, plant, includes, on: _dt.date, reason: str, documents) -> dict:
        version = c.execute("SELECT coalesce(max(version), 0) + 1 FROM system_models WHERE basin_id=?",
                            (b["id"],)).fetchone()[0]
        c.execute("INSERT INTO system_models(basin_id, version, path, sha256, outlet, plant, nodes, includes, registered_on,"
                  " registered_at, registered_by) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                  (b["id"], version, loaded["path"], loaded["sha256"], loaded["outlet"], plant, loaded["nodes"],
                   json.dumps(list(includes)), on.isoformat(), self._now(), self._require_actor()))
        detail = {"basin": b["name"], "version": version, "model": loaded["path"], "model_sha256": loaded["sha256"],
                  "outlet": loaded["outlet"], "plant": plant, "nodes": loaded["nodes"], "includes": list(includes),
                  "registered_on": on.isoformat()}
        self._log(c, "register-model", reason=reason, documents=[*documents, loaded["path"]], basin_id=b["id"],
                  ref=f"{b['name']} v{version}", detail=detail)
        return detail

    def register_model(self, basin: str, model, *, outlet: str | None = None, plant: str | None = None, includes=(),
                       on=None, late_reason: str | None = None, reason: str = "", documents=()) -> dict:
        """Register a (newer) model of record for a basin, with its SHA-256: a bank administrator only.

        The engine opens the file first (a model it rejects is refused). ``outlet`` and ``plant``
        default to the previous version's. ``includes`` names connected applications the new version
        contains: their commitments are released (program policy ``connected_until_registered``); an
        application that is not connected, or not in this basin, is refused. Capacity evidence cited
        for a withdrawal must be on the basin's newest version (same SHA-256).
        """
        basin = _text("basin", basin)
        on = self._not_future("on", parse_date("on", on)) or self._today()
        names = [_text("includes", a) for a in includes]
        with self._tx() as c:  # who acts and the previous version's outlet, before the slow engine probe
            self._require_administrator(c, "registers a basin's model of record")
            prev = _commit.model_of_basin(c, self._basin(c, basin)["id"])
        outlet = _text("outlet", outlet, required=False) or (prev["outlet"] if prev else None)
        if outlet is None:
            raise InputError(f"outlet is required: basin {basin!r} has no registered model yet")
        plant = _text("plant", plant, required=False) or (prev["plant"] if prev else None)
        loaded = self._load_for_registration(model, outlet)
        with self._tx() as c:
            self._require_administrator(c, "registers a basin's model of record")
            self._dated(c, "on", on, late_reason)
            b = self._basin(c, basin)
            keys = []
            for name in names:
                row = (c.execute("SELECT w.application, w.connected_on, w.status, w.co_issued_on, s.basin_id FROM withdrawals w"
                                 " JOIN subaccounts s ON s.id = w.subaccount_id WHERE w.app_key=?", (name.casefold(),)).fetchone()
                       or c.execute("SELECT application, connected_on, status, completed_on AS co_issued_on, basin_id"
                                    " FROM applications WHERE app_key=?", (name.casefold(),)).fetchone())
                if row is None:
                    raise InputError(f"includes: unknown application {name!r}")
                if row["basin_id"] != b["id"]:
                    raise RefusedError(f"includes: application {row['application']!r} is not in basin {b['name']}")
                if not (row["connected_on"] or row["status"] == "completed"):
                    raise RefusedError(f"includes: application {row['application']!r} is not connected (`bank connect` "
                                       "records it): a model of record contains only flows in the sewer")
                keys.append(row["application"])
            detail = self._insert_model(c, b, loaded, plant, keys, on, reason, documents)
        return detail | {"policies": policies("connected_until_registered")}

    def models(self, basin: str | None = None) -> list[dict]:
        """Every registered model version (of ``basin``, or all), oldest first."""
        sql = ("SELECT m.*, b.name AS basin FROM system_models m JOIN basins b ON b.id = m.basin_id"
               + (" WHERE b.name = ?" if basin else "") + " ORDER BY b.id, m.version")
        rows = self.conn.execute(sql, (basin,) if basin else ()).fetchall()
        if basin and not rows:
            self._basin(self.conn, basin)  # unknown basin -> InputError
        newest = {r["basin_id"]: r["version"] for r in rows}  # rows by version: the last one per basin is the newest
        return [{"basin": r["basin"], "version": r["version"], "current": r["version"] == newest[r["basin_id"]],
                 "path": r["path"], "sha256": r["sha256"], "outlet": r["outlet"], "plant": r["plant"], "nodes": r["nodes"],
                 "includes": json.loads(r["includes"]), "registered_on": r["registered_on"],
                 "registered_by": r["registered_by"]} for r in rows]

    def commitments(self, *, model_sha256: str | None = None, plant: str | None = None, exclude: str | None = None,
                    as_of=None) -> dict:
        """The committed flows of the basins on a registered model (``model_sha256``) or draining to ``plant``.

        Every withdrawal reserved or approved and not yet connected, every application recorded
        without credits and not yet connected, and every connected flow not yet contained in a
        registered model version (:func:`capacitysim.bank.commitments.commitment_flows`), read in one
        read transaction with the journal's head (``bank_head``): a document that records them can be
        checked later against the bank (:meth:`withdraw`, :meth:`sign_off`).

        Parameters
        ----------
        model_sha256 : str, optional
            The SHA-256 of a model: the basins whose newest registered model it is.
        plant : str, optional
            A plant key (SPDES permit number or name, any case): the basins registered as draining to it.
        exclude : str, optional
            An application left out (the applicant's own, already reserved).
        as_of : date or str, optional
            Default today (approvals past program policy ``approval_expiry_years`` on it are void).

        Returns
        -------
        dict
            ``bank``, ``bank_head``, ``as_of``, ``scope``, ``basins``, ``excluded``, ``flows``
            (``application``, ``basin``, ``node``, ``average_gpd`` [gpd], ``peak_gpd`` [gpd], ``status``,
            ``average_basis``...), ``total_gpd`` (sum of the averages) [gpd], ``total_peak_gpd`` [gpd],
            ``policies``.
        """
        as_of = parse_date("as_of", as_of) or self._today()
        exclude = _text("exclude", exclude, required=False)
        c = self.conn
        c.execute("BEGIN")
        try:
            basins = _commit.scope_basins(c, model_sha256=model_sha256, plant=plant)
            flows = _commit.commitment_flows(c, [b["basin_id"] for b in basins], exclude=exclude, as_of=as_of)
            head = self.head()["head"]
        finally:
            c.execute("COMMIT")
        scope = {"model_sha256": str(model_sha256).lower()} if model_sha256 is not None else {"plant": plant}
        return {"bank": str(self.path.resolve()), "bank_head": head, "as_of": as_of.isoformat(), "scope": scope,
                "basins": [b["basin"] for b in basins], "excluded": exclude, "flows": flows,
                "total_gpd": float(sum(f["average_gpd"] for f in flows)),
                "total_peak_gpd": float(sum(f["peak_gpd"] for f in flows)),
                "policies": policies("commitment_average", "connected_until_registered", "approval_expiry_years")}

    def register(self, as_of=None) -> dict:
        """The capacity register's bank part: each registered model and plant with its committed flows.

        Returns ``{"bank_head", "as_of", "models": [...], "plants": [...]}``: per current model its
        basins, commitments and totals; per plant key the basins draining to it and the committed
        average flow [gpd]. The hydraulic and treatment figures beside them are computed by the
        register workflow (:mod:`capacitysim.workflows.register`).
        """
        as_of = parse_date("as_of", as_of) or self._today()
        c = self.conn
        c.execute("BEGIN")
        try:
            models = _commit.current_models(c)
            head = self.head()["head"]
            by_sha: dict[str, list] = {}
            for m in models:
                by_sha.setdefault(m["sha256"], []).append(m)
            out_models = []
            for sha, ms in by_sha.items():
                flows = _commit.commitment_flows(c, [m["basin_id"] for m in ms], as_of=as_of)
                out_models.append({"model_sha256": sha, "path": ms[0]["path"], "nodes": ms[0]["nodes"],
                                   "basins": [{"basin": m["basin"], "version": m["version"], "outlet": m["outlet"],
                                               "plant": m["plant"]} for m in ms],
                                   "flows": flows, "total_gpd": float(sum(f["average_gpd"] for f in flows)),
                                   "total_peak_gpd": float(sum(f["peak_gpd"] for f in flows))})
            plants: dict[str, list] = {}
            for m in models:
                if m["plant"]:
                    plants.setdefault(m["plant"].strip().casefold(), []).append(m)
            out_plants = []
            for ms in plants.values():
                flows = _commit.commitment_flows(c, [m["basin_id"] for m in ms], as_of=as_of)
                out_plants.append({"plant": ms[0]["plant"], "basins": [m["basin"] for m in ms],
                                   "committed_gpd": float(sum(f["average_gpd"] for f in flows)),
                                   "committed_peak_gpd": float(sum(f["peak_gpd"] for f in flows)),
                                   "flows": [f["application"] for f in flows]})
        finally:
            c.execute("COMMIT")
        return {"bank": str(self.path.resolve()), "bank_head": head, "as_of": as_of.isoformat(), "models": out_models,
                "plants": out_plants, "policies": policies("commitment_average", "connected_until_registered",
                                                           "approval_expiry_years", "section_a_unregistered")}

    def connect(self, application: str, on=None, *, late_reason: str | None = None, reason: str = "",
                documents=()) -> dict:
        """Record that an approved application's flow is connected to the sewer on ``on`` (default today).

        A connected flow stays a commitment until a registered model version contains it (program
        policy ``connected_until_registered``); it no longer expires. Only an approved (or completed)
        withdrawal or application can be connected, on or after its approval, once.
        """
        application = _text("application", application)
        on = self._not_future("on", parse_date("on", on)) or self._today()
        with self._tx() as c:
            self._dated(c, "on", on, late_reason)
            app = self._application_row(c, application)
            if app is not None:
                table, row, since, basin_id = "applications", app, app["approved_on"] or app["received_on"], app["basin_id"]
                ok = app["status"] in ("approved", "completed")
            else:
                row = self._withdrawal(c, application)
                table, since = "withdrawals", row["note_issued_on"]
                basin_id = c.execute("SELECT basin_id FROM subaccounts WHERE id=?", (row["subaccount_id"],)).fetchone()[0]
                ok = row["status"] in ("approved", "completed")
            if not ok:
                raise RefusedError(f"application {row['application']!r} is {row['status']}; only an approved application "
                                   "is connected")
            if row["connected_on"]:
                raise RefusedError(f"application {row['application']!r} was connected on {row['connected_on']}")
            if row["expired_on"]:
                raise RefusedError(f"application {row['application']!r} expired on {row['expired_on']}")
            if since and on.isoformat() < since[:10]:
                raise InputError(f"on {on} is before the approval of {row['application']!r} ({since[:10]}); allowed: on "
                                 "or after it")
            c.execute(f"UPDATE {table} SET connected_on=? WHERE id=?", (on.isoformat(), row["id"]))
            self._log(c, "connect", reason=reason, documents=documents, basin_id=basin_id, ref=row["application"],
                      detail={"connected_on": on.isoformat(), "policy": "connected_until_registered"})
        out = self.application(application) if app is not None else self.withdrawal(application)
        return out | {"policies": policies("connected_until_registered")}

    def expire(self, as_of=None, *, late_reason: str | None = None, reason: str = "") -> list[dict]:
        """Release every approval not connected within program policy ``approval_expiry_years`` of its approval.

        15 RCNY § 18-37(e): an approval "expires and is null and void unless construction is completed
        within five (5) years of the date of issuance". An expired withdrawal's credits return to the
        holder's lots (as for a DEFAULT); an expired application without credits is closed as returned.
        """
        as_of = self._not_future("as_of", parse_date("as_of", as_of)) or self._today()
        years = _commit.APPROVAL_EXPIRY_YEARS
        out = []
        with self._tx() as c:
            self._dated(c, "as_of", as_of, late_reason)
            for w in c.execute("SELECT * FROM withdrawals WHERE status='approved' AND connected_on IS NULL"
                               " AND expired_on IS NULL ORDER BY id").fetchall():
                due = _commit.add_years(_dt.date.fromisoformat(w["note_issued_on"][:10]), years)
                if due < as_of:
                    why = reason or f"not connected within {years} years of the note of {w['note_issued_on']}"
                    c.execute("UPDATE withdrawals SET expired_on=? WHERE id=?", (as_of.isoformat(), w["id"]))
                    basin_id = c.execute("SELECT basin_id FROM subaccounts WHERE id=?", (w["subaccount_id"],)).fetchone()[0]
                    self._log(c, "expire", reason=why, basin_id=basin_id, ref=w["application"],
                              detail={"approved_on": w["note_issued_on"], "expired_on": as_of.isoformat(),
                                      "policy": "approval_expiry_years"})
                    self._close_and_return(c, w, "returned", "return", why, ())
                    out.append({"application": w["application"], "approved_on": w["note_issued_on"],
                                "expired_on": as_of.isoformat(), "returned_gpd": w["amount_gpd"]})
            for a in c.execute("SELECT * FROM applications WHERE status='approved' AND connected_on IS NULL"
                               " AND expired_on IS NULL ORDER BY id").fetchall():
                since = a["approved_on"] or a["received_on"]
                if _commit.add_years(_dt.date.fromisoformat(since[:10]), years) < as_of:
                    c.execute("UPDATE applications SET expired_on=?, status='returned', closed_at=? WHERE id=?",
                              (as_of.isoformat(), self._now(), a["id"]))
                    self._log(c, "expire", reason=reason or f"not connected within {years} years of its approval",
                              basin_id=a["basin_id"], ref=a["application"],
                              detail={"approved_on": since, "expired_on": as_of.isoformat(),
                                      "policy": "approval_expiry_years"})
                    out.append({"application": a["application"], "approved_on": since, "expired_on": as_of.isoformat(),
                                "returned_gpd": 0})
        return out

    def _evidence_current(self, c, basin_row, application: str, kind: str, ref: str, model_sha256: str | None,
                          block, *, on: _dt.date, when: str) -> None:
        """Refuse evidence on another model than the basin's registered one, or leaving out a commitment of its
        scope (``kind`` capacity: the basins on the registered model; spdes: the basins draining to its plant)."""
        m = _commit.model_of_basin(c, basin_row["id"])
        if m is None:
            return
        if kind == "capacity" and model_sha256 != m["sha256"]:
            ran = f"a model of SHA-256 {model_sha256[:12]}..." if model_sha256 else "a model whose SHA-256 it does not record"
            raise RefusedError(f"capacity_ref: the demonstration {ref} ran {ran}; basin {basin_row['name']}'s registered "
                               f"model is version {m['version']}, {Path(m['path']).name} ({m['sha256'][:12]}...): a "
                               "demonstration cited for a withdrawal runs the registered model (register a newer version "
                               "with `bank register-model`, or demonstrate on it)")
        if block is not None:
            head = block.get("bank_head")
            known = head is not None and (
                c.execute("SELECT 1 FROM journal WHERE hash=?", (head,)).fetchone() is not None
                or c.execute("SELECT 1 FROM meta WHERE key='journal_anchor' AND value=?", (head,)).fetchone() is not None)
            if not known:
                raise RefusedError(f"{kind}_ref: the commitments recorded in {ref} were not read from this bank (its bank "
                                   f"head {str(head)[:12]}... is no head of this bank's journal): run it with --committed "
                                   f"{self.path}")
        if kind == "capacity":
            scope = _commit.scope_basins(c, model_sha256=m["sha256"])
        elif m["plant"]:
            scope = _commit.scope_basins(c, plant=m["plant"])
        else:
            return
        required = _commit.commitment_flows(c, [b["basin_id"] for b in scope], exclude=application, as_of=on)
        if not required:
            return
        gaps = _commit.evidence_gaps(required, block)
        if gaps:
            how = ("capacitysim capacity MODEL ... --committed BANK --application APP" if kind == "capacity"
                   else "capacitysim spdes check ... --committed BANK --application APP")
            raise RefusedError(f"{kind}_ref: the {'capacity demonstration' if kind == 'capacity' else 'SPDES check'} "
                               f"{ref} leaves out {len(gaps)} commitment(s) made {when}: {'; '.join(gaps[:8])}"
                               f"{' ...' if len(gaps) > 8 else ''}; capacity is not promised twice: demonstrate again "
                               f"with them committed (`{how}`)")

    def open_subaccount(self, basin: str, owner: str, *, reason: str = "", documents=()) -> dict:
        """Open the subaccount of ``owner`` in ``basin`` (refused if it exists)."""
        with self._tx() as c:
            b, e = self._basin(c, basin), self._entity(c, owner)
            if c.execute("SELECT 1 FROM subaccounts WHERE basin_id=? AND owner_id=?", (b["id"], e["id"])).fetchone():
                raise RefusedError(f"{owner} already has a subaccount in basin {basin}")
            self._open(c, b, e, reason)
        return {"basin": basin, "owner": owner, "balance_gpd": 0}

    def add_project(self, ref: str, basin: str, jurisdiction: str, *, description: str = "", priority: int | None = None,
                    estimated_gpd: float | None = None, property: str | None = None, reason: str = "",
                    documents=()) -> dict:
        """Record an identified/available I/I remediation project (annual report part A), on ``property``
        ``public`` or ``private`` (records section A: "in the municipal users' public sewage collection
        systems and private property")."""
        ref = _text("project", ref)
        prop = _property(property)
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
                      " created_at, property) VALUES (?,?,?,?,?,?,'identified',?,?)",
                      (ref, b["id"], j["id"], description or "", priority, estimated_gpd, self._now(), prop))
            self._log(c, "add-project", reason=reason, documents=documents, basin_id=b["id"], ref=ref,
                      detail={"jurisdiction": jurisdiction, "priority": priority, "estimated_gpd": estimated_gpd,
                              "property": prop})
        return {"project": ref, "basin": basin, "jurisdiction": jurisdiction, "status": "identified", "property": prop}

    def furnish_letter(self, project: str, letter: str, *, on=None, late_reason: str | None = None,
                       reason: str = "") -> dict:
        """Record the completed certification letter of a certified project (records section B: "If not
        previously furnished, provide completed certification letter for I/I remediation projects
        completed. (See Appendix A for letter format.)"): its path and SHA-256, once per project.

        Raises
        ------
        RefusedError
            The project is not certified, or its letter was already furnished.
        """
        ref = _text("project", project)
        doc = _refs.resolve_document("letter", _text("letter", letter), "the completed certification letter (Appendix A)")
        on = self._not_future("on", parse_date("on", on)) or self._today()
        with self._tx() as c:
            self._dated(c, "on", on, late_reason)
            p = c.execute("SELECT * FROM projects WHERE ref=?", (ref,)).fetchone()
            if p is None:
                raise InputError(f"project: unknown project {ref!r}")
            if p["status"] == "certified" and on.isoformat() < str(p["certified_on"])[:10]:
                raise RefusedError(f"project {ref!r}: a certification letter dated {on} is before the certification of "
                                   f"{str(p['certified_on'])[:10]} it certifies")
            if p["status"] != "certified":
                raise RefusedError(f"project {ref!r} is {p['status']}: a certification letter is furnished for a project "
                                   "certified complete and deposited")
            old = c.execute("SELECT ref, letter_on FROM certification_letters WHERE project_id=?", (p["id"],)).fetchone()
            if old is not None:
                raise RefusedError(f"project {ref!r}: its certification letter was furnished on {old['letter_on']} "
                                   f"({old['ref']})")
            c.execute("INSERT INTO certification_letters(project_id, ref, sha256, letter_on, recorded_at, recorded_by)"
                      " VALUES (?,?,?,?,?,?)", (p["id"], doc["ref"], doc["sha256"], on.isoformat(), self._now(),
                                                 self._require_actor()))
            self._log(c, "furnish-letter", reason=reason, documents=[doc["ref"]], basin_id=p["basin_id"], ref=ref,
                      detail={"letter": doc, "letter_on": on.isoformat()})
        return {"project": ref, "letter": doc, "letter_on": on.isoformat()}

    # --- credits in -----------------------------------------------------------------------------------
    def deposit(self, basin: str, owner: str, gpd: float, project: str, *, quantification: str | dict | None = None,
                letter: str | None = None, property: str | None = None, certified_on=None,
                certificate: str | None = None, description: str = "", reason: str = "", documents=()) -> dict:
        """Record the deposit of the credits of a project certified complete (section B), pending sign-off.

        The credits go to the subaccount of the municipal user having jurisdiction over the project
        site (``owner``, a municipal user; the subaccount is opened if needed). The certified figure
        is booked rounded down to whole gpd. The deposit takes effect, and the project is recorded as
        certified with a lot of its credits, only when the bank administrator signs it off
        (:meth:`sign_off`; definitions, BANK ADMINISTRATOR): until then the balance does not count
        it (program policy ``pending_reserve``). A project is deposited once.

        The deposit cites the project's quantification (``quantification``: the JSON of ``capacitysim
        credits quantify --json``, its SHA-256 recorded; I/I quantification guidelines: "prepared by a
        professional engineer, licensed in the State of New York, and presented in an I/I remediation
        engineering report"): it must name the PE and licence, quantify this project for this municipal
        user and basin, and total at least ``gpd`` (:func:`capacitysim.bank.refs.quantification_facts`).
        ``letter`` is the completed certification letter (Appendix A; records section B: "If not
        previously furnished, provide completed certification letter"), which may follow with
        :meth:`furnish_letter`; annual report part B flags a certified project without it.

        Parameters
        ----------
        quantification : str or dict
            The path of the quantification JSON, or (the service) the facts already checked with
            ``ref`` and ``sha256`` (:func:`capacitysim.bank.refs.quantification_facts`). Required.
        letter : str, optional
            The path of the certification letter (any format; SHA-256 recorded).
        property : {"public", "private"}, optional
            Where the project is (records section, parts A and B: "public sewage collection systems
            and private property").

        Returns
        -------
        dict
            ``project``, ``basin``, ``owner``, ``booked_gpd`` (whole gpd to be deposited),
            ``stated_gpd``, ``status`` (``pending sign-off``), ``txn`` (give it to ``sign_off``),
            ``balance_gpd`` (unchanged until the sign-off) and ``policies``.
        """
        stated = _positive_gpd("gpd", gpd)
        amount = book_down(stated)
        if amount < 1:
            raise InputError(f"gpd must be at least 1 whole gpd to deposit, got {gpd!r}")
        ref = _text("project", project)
        on = self._not_future("certified_on", parse_date("certified_on", certified_on)) or self._today()
        if on < ii_offset.PROGRAM_EFFECTIVE_DATE:
            raise InputError(f"certified_on {on} is before the program took effect ({ii_offset.PROGRAM_EFFECTIVE_DATE}); "
                             "allowed: a certification under the program")
        certificate = _text("certificate", certificate, required=False)
        prop = _property(property)
        if quantification is None:
            raise InputError("quantification is required: the JSON of `capacitysim credits quantify PROJECT.toml --json` "
                             "(the I/I remediation engineering report of a NYS licensed PE, I/I quantification guidelines)")
        if isinstance(quantification, dict):
            quant = quantification_facts_checked(quantification, project=ref, owner=owner, basin=basin, gpd=stated)
        else:
            quant = _refs.resolve_quantification(_text("quantification", quantification), project=ref, owner=owner,
                                                 basin=basin, gpd=stated)
        letter_doc = _refs.resolve_document("letter", _text("letter", letter, required=False),
                                            "the completed certification letter (Appendix A)")
        docs = [*documents, *([certificate] if certificate else []), quant["ref"],
                *([letter_doc["ref"]] if letter_doc else [])]
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
                open_ = c.execute("SELECT txn FROM signoffs WHERE kind='deposit' AND ref=? AND status='pending'", (ref,)).fetchone()
                if open_ is not None:
                    raise RefusedError(f"a deposit of project {ref!r} is already awaiting the administrator's sign-off "
                                       f"(txn {open_[0]})")
            else:
                c.execute("INSERT INTO projects(ref, basin_id, jurisdiction_id, description, status, created_at)"
                          " VALUES (?,?,?,?,'identified',?)", (ref, b["id"], e["id"], description or "", self._now()))
            sub = self._subaccount(c, basin, owner, open_if_missing=True, reason=f"deposit of project {ref}")
            detail = {"stated_gpd": stated, "booked_gpd": amount, "certified_on": on.isoformat(), "certificate": certificate,
                      "description": description or "", "documents": docs, "reason": reason or "", "property": prop,
                      "quantification": quant, "letter": letter_doc}
            txn = self._record_signoff(c, "deposit", ref, sub["id"], amount, detail)
            self._log(c, "record-deposit", reason=reason or f"project {ref} certified complete", documents=docs,
                      basin_id=b["id"], ref=ref, detail=detail | {"sign_off": "pending", "owner": owner})
            balance = c.execute("SELECT balance_gpd FROM subaccounts WHERE id=?", (sub["id"],)).fetchone()[0]
        return {"project": ref, "basin": basin, "owner": owner, "booked_gpd": amount, "stated_gpd": stated,
                "status": "pending sign-off", "txn": txn, "balance_gpd": balance, "quantification": quant,
                "letter": letter_doc, "property": prop, "policies": policies("pending_reserve")}

    # --- credits out: flow credit notes ----------------------------------------------------------------
    def _offset_ratio(self, value) -> tuple[float, dict | None]:
        """Section F's offset ratio through :func:`capacitysim.rules.ii_offset.check_offset_ratio`:
        below one refused, above one a program policy (returned)."""
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise InputError(f"offset_ratio must be a number, got {value!r}") from None
        checked = ii_offset.check_offset_ratio(value)
        return float(checked["offset_ratio"]), checked["policy"]

    @staticmethod
    def _average(average_gpd, peak: float) -> float | None:
        """A connection's recorded average daily flow [gpd]: > 0 and at most its peak, or None."""
        if average_gpd is None:
            return None
        average = _positive_gpd("average_gpd", average_gpd)
        if average > peak:
            raise InputError(f"average_gpd {average:,.0f} gpd is above the peak {peak:,.0f} gpd; allowed: an average "
                             "daily flow at most the connection's peak")
        return average

    def _spdes_date_ok(self, spd: dict | None) -> None:
        if spd is not None and spd["as_of"] > self._today().isoformat():
            raise InputError(f"spdes_ref: the SPDES check {spd['ref']} is as of {spd['as_of']}, in the future; allowed: a "
                             f"check of records up to today ({self._today()})")

    def withdraw(self, basin: str, owner: str, peak_flow_gpd: float, application: str, *, node: str | None = None,
                 average_gpd: float | None = None,
                 capacity_ref: str | None = None, spdes_ref: str | None = None, application_approval: str | None = None,
                 principal: str | None = None, offset_ratio: float = ii_offset.DEFAULT_OFFSET_RATIO,
                 threshold_gpd: float = ii_offset.OFFSET_THRESHOLD_GPD, on=None, app_type: str = "connection",
                 applicant: str | None = None, affected_owner: str | None = None, late_reason: str | None = None,
                 description: str = "", reason: str = "", documents=()) -> dict:
        """Reserve credits for an application; it is approved (the flow credit note issued) only at the sign-off.

        ``peak_flow_gpd`` is the estimated peak sewage flow rate increase of the connection; the
        credits reserved are ``offset_ratio`` times it, rounded up (section F;
        :func:`~capacitysim.rules.ii_offset.check_offset_ratio` refuses a ratio below one and flags one
        above as a program policy). A connection adding no more than 2,500 gpd needs no offset, so its
        withdrawal is refused (record it with :meth:`record_application`). The credits leave the
        holder's lots by the allocation policy and are reserved at once (program policy
        ``pending_reserve``). The withdrawal is *pending* until the bank administrator signs it off
        (:meth:`sign_off`), which needs the capacity demonstration and SPDES check of section H(1)
        (``capacity_ref``, ``spdes_ref``, or :meth:`attach` later) and the connection application
        program's approval of section H(2) (``application_approval``). A cited document another withdrawal
        holds (the same SHA-256) is refused, naming that application (program policy ``evidence_single_use``).

        Parameters
        ----------
        node : str
            The model node where the connection is made (required): the capacity demonstration must
            connect at least ``peak_flow_gpd`` there.
        capacity_ref, spdes_ref : str, optional
            Paths of the JSON documents of ``capacitysim capacity --json`` and
            ``capacitysim spdes check --json`` (:func:`capacitysim.bank.refs.resolve_ref`): the SPDES
            check must show treatment capacity with ``added_gpd`` >= ``average_gpd`` when recorded (a
            monthly-average permit limit), else >= ``peak_flow_gpd``, and be as of no more than
            ``spdes_evidence_max_age_days`` (program policy) before ``on``.
        application_approval : str, optional
            The approval reference under the new or modified sewer connection application program
            (section H(2)).
        on : date or str, optional
            The withdrawal date (default today, never in the future).
        app_type : {"connection", "extension"}
            A new or modified sewer connection, or a sewer extension (annual report part C).
        average_gpd : float, optional
            The connection's average daily flow [gpd] (at most ``peak_flow_gpd``): its commitment's
            average (program policy ``commitment_average``: the peak when not given).
        applicant, affected_owner : str, optional
            The parties of the flow credit note besides the Board (definitions, FLOW CREDIT NOTE): the
            applicant (default: the credit holder, ``owner``) and the owner of the property the
            connection serves, when another person.
        late_reason : str, optional
            A bank administrator recording the withdrawal after the day of the journal's last row
            (``on`` earlier) gives the reason (program policy ``no_backdating``).

        Where the basin has a registered model (:meth:`register_model`), ``node`` must drain to the
        basin's outlet on its graph (section A; exit 3 naming where it drains otherwise), a cited
        capacity demonstration must have run that model (same SHA-256), and each cited document must
        include every commitment of its scope made so far (:mod:`capacitysim.bank.commitments`).
        """
        peak = _positive_gpd("peak_flow_gpd", peak_flow_gpd)
        average = self._average(average_gpd, peak)
        application = _text("application", application)
        ratio, ratio_policy = self._offset_ratio(offset_ratio)
        node = _text("node", node, required=False)
        if node is None:
            raise InputError("node is required: the model node where the connection is made (the capacity demonstration "
                             "must connect the application's peak flow there, credit bank section H(1))")
        app_type = _app_type(app_type)
        on = self._not_future("on", parse_date("on", on)) or self._today()
        approval = _text("application_approval", application_approval, required=False)
        decision = ii_offset.threshold_decision(peak, average, threshold_gpd=threshold_gpd)
        compared = "average daily flow" if decision["compared"] == "average" else "peak flow"
        if not decision["offset_required"]:
            raise RefusedError(f"no offset is required: the {compared} {decision['compared_flow_gpd']:,.0f} gpd does not "
                               f"exceed the {threshold_gpd:,.0f} gpd threshold (definitions, NEW OR MODIFIED SEWER "
                               f"CONNECTION; program policy threshold_basis = {decision['policy']['value']}); no credits "
                               "withdrawn (record the application with `bank record-application`)")
        need = book_up(float(ii_offset.credits_required_gpd(peak, ratio, threshold_gpd,
                                                            threshold_flow_gpd=decision["compared_flow_gpd"])))
        if need > MAX_GPD:
            raise InputError(f"peak_flow_gpd x offset_ratio = {need:,} gpd; allowed: at most {MAX_GPD:,.0f} gpd")
        cap = _refs.resolve_ref("capacity", _text("capacity_ref", capacity_ref, required=False), gpd=peak, node=node,
                                average_gpd=average)
        spd = _refs.resolve_ref("spdes", _text("spdes_ref", spdes_ref, required=False), gpd=peak, on=on,
                                max_age_days=SPDES_EVIDENCE_MAX_AGE_DAYS, average_gpd=average)
        self._spdes_date_ok(spd)
        principal = _text("principal", principal, required=False)
        applicant = _text("applicant", applicant, required=False) or _text("owner", owner)
        affected_owner = _text("affected_owner", affected_owner, required=False)
        with self._tx() as c:
            self._dated(c, "on", on, late_reason)
            b, e = self._basin(c, basin), self._entity(c, owner)
            same = self._app_taken(c, application)
            if same is not None:
                raise RefusedError(f"application {application!r} already has a withdrawal or record"
                                   + ("" if same == application else f" (as {same!r})"))
            section_a = _commit.section_a(c, b, node)
            node = section_a.get("node", node)
            self._evidence_free(c, "capacity", cap, application)
            self._evidence_free(c, "spdes", spd, application)
            for kind, r in (("capacity", cap), ("spdes", spd)):
                if r is not None:
                    self._evidence_current(c, b, application, kind, r["ref"], r.get("model_sha256"), r["committed"],
                                           on=self._today(), when="so far")
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
            c.execute(
                "INSERT INTO withdrawals(application, app_key, subaccount_id, principal_id, peak_flow_gpd, offset_ratio, amount_gpd,"
                " status, capacity_ref, capacity_sha256, spdes_ref, spdes_sha256, spdes_as_of, description, requested_at,"
                " requested_on, node, application_approval, app_type, average_gpd, capacity_committed, spdes_committed,"
                " applicant, affected_owner) VALUES (?,?,?,?,?,?,?,'pending',?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (application, application.casefold(), sub["id"], p["id"], peak, ratio, need,
                 cap and cap["ref"], cap and cap["sha256"], spd and spd["ref"], spd and spd["sha256"], spd and spd["as_of"],
                 description or "", self._now(), on.isoformat(), node, approval, app_type, average,
                 cap and _commit.evidence_summary(cap), spd and _commit.evidence_summary(spd), applicant, affected_owner))
            self._need(c, sub["id"], need)
            pieces = self._consume(c, sub["id"], need, "withdraw", application)
            dated = [p for p in pieces if p["deposited_on"]]
            if dated:
                last = max(dated, key=lambda p: p["deposited_on"])
                if on.isoformat() < last["deposited_on"][:10]:
                    raise RefusedError(f"the withdrawal date {on} is before {last['deposited_on'][:10]}, when the credits it "
                                       f"would use (lot {last['lot']}, project {last['project']}) were certified: credits "
                                       "are withdrawn only once deposited (credit bank sections B and H)")
            txn = self._record_signoff(c, "withdrawal", application, sub["id"], need)
            self._move(c, sub["id"], -need, "withdraw", reason=reason or f"application {application}",
                       documents=[*documents, *_ref_docs(cap, spd), *([approval] if approval else [])], basin_id=b["id"],
                       ref=application,
                       detail={"peak_flow_gpd": peak, "offset_ratio": ratio, "reserved_gpd": need, "status": "pending",
                               "sign_off": "pending", "principal": p["name"], "node": node, "withdrawal_date": on.isoformat(),
                               "average_gpd": average, **section_a, "threshold": _threshold_detail(decision),
                               "applicant": applicant, "affected_owner": affected_owner,
                               "application_approval": approval, "type": app_type, **_ref_detail(cap, spd),
                               "lots": self._show_pieces(pieces), "allocation_policy": ALLOCATION_POLICY,
                               **({"offset_ratio_policy": ratio_policy} if ratio_policy else {})})
        out = self.withdrawal(application)
        return out | {"txn": txn, "lots_taken": self._show_pieces(pieces), "threshold": _threshold_detail(decision),
                      "policies": policies("allocation_policy", "pending_reserve", "spdes_evidence_max_age_days")
                      + [decision["policy"]] + ([ratio_policy] if ratio_policy else [])}

    # --- single use of the cited evidence (program policy evidence_single_use) ------------------------------
    @staticmethod
    def _evidence_holders(c, kind: str, sha256: str | None, *, exclude_id: int | None = None,
                          before_id: int | None = None) -> list:
        """The withdrawals holding the ``kind`` document of SHA-256 ``sha256`` (program policy
        ``evidence_single_use``: the statuses of :data:`EVIDENCE_HELD_BY`), oldest first."""
        if sha256 is None:
            return []
        held = EVIDENCE_HELD_BY[EVIDENCE_SINGLE_USE]
        sql = (f"SELECT id, application, status FROM withdrawals WHERE {kind}_sha256 = ? "
               f"AND status IN ({', '.join('?' * len(held))})")
        args: list = [sha256, *held]
        if exclude_id is not None:
            sql += " AND id <> ?"
            args.append(exclude_id)
        if before_id is not None:
            sql += " AND id < ?"
            args.append(before_id)
        return c.execute(sql + " ORDER BY id", args).fetchall()

    def _evidence_free(self, c, kind: str, ref: dict | None, application: str, *, exclude_id: int | None = None) -> None:
        """Refuse citing a document another application's withdrawal holds (naming that application)."""
        if ref is None:
            return
        rows = self._evidence_holders(c, kind, ref.get("sha256"), exclude_id=exclude_id)
        if rows:
            raise RefusedError(_evidence_message(kind, ref["ref"], ref["sha256"], rows[0], application))

    def evidence_use(self, sha256: str) -> list[dict]:
        """The withdrawals citing the document of SHA-256 ``sha256`` (capacity or SPDES evidence), oldest first.

        Each: ``application``, ``kind`` (``capacity`` or ``spdes``), ``status`` and ``holds`` (True when,
        under program policy ``evidence_single_use``, that withdrawal keeps the document from being cited
        by another application).
        """
        out = []
        held = EVIDENCE_HELD_BY[EVIDENCE_SINGLE_USE]
        for kind in _refs.KINDS:
            for r in self.conn.execute(f"SELECT id, application, status FROM withdrawals WHERE {kind}_sha256 = ? ORDER BY id",
                                       (str(sha256),)):
                out.append({"id": r["id"], "application": r["application"], "kind": kind, "status": r["status"],
                            "holds": r["status"] in held})
        return [{k: v for k, v in x.items() if k != "id"} for x in sorted(out, key=lambda x: x["id"])]

    def attach(self, application: str, *, capacity_ref: str | None = None, spdes_ref: str | None = None,
               application_approval: str | None = None, node: str | None = None, reason: str = "", documents=()) -> dict:
        """Attach the section H references to a pending withdrawal (or the H(2) approval to an application
        without credits); nothing is approved here: the bank administrator signs off (:meth:`sign_off`).

        A capacity JSON is checked against the withdrawal's peak flow at its node, a SPDES JSON
        against its flow and its withdrawal date (program policy ``spdes_evidence_max_age_days``).
        ``node`` may be given only for a withdrawal recorded without one (a migrated schema-2 bank).
        A reference already recorded cannot be replaced: return the credits and apply again instead.
        """
        application = _text("application", application)
        node = _text("node", node, required=False)
        approval = _text("application_approval", application_approval, required=False)
        capacity_ref = _text("capacity_ref", capacity_ref, required=False)
        spdes_ref = _text("spdes_ref", spdes_ref, required=False)
        if capacity_ref is None and spdes_ref is None and approval is None and node is None:
            raise InputError("give capacity_ref, spdes_ref and/or application_approval to attach")
        app = self._application_row(self.conn, application)
        if app is not None:
            if capacity_ref or spdes_ref or node:
                raise InputError(f"application {application!r} withdraws no credits: only --application-approval can be "
                                 "attached to it")
            return self._approve_application(application, approval, reason, documents)
        w = self._withdrawal(self.conn, application)  # peak flow, node and date never change: read before the transaction
        if node is not None and w["node"] is not None and node != w["node"]:
            raise InputError(f"node {node!r}: application {w['application']!r} was made for node {w['node']!r}")
        node = w["node"] or node
        if capacity_ref is not None and node is None:
            raise InputError(f"node is required: application {w['application']!r} has no connection node recorded; give "
                             "--node with the capacity demonstration")
        requested = parse_date("requested_on", w["requested_on"]) or self._today()
        cap = _refs.resolve_ref("capacity", capacity_ref, gpd=w["peak_flow_gpd"], node=node, average_gpd=w["average_gpd"])
        spd = _refs.resolve_ref("spdes", spdes_ref, gpd=w["peak_flow_gpd"], on=requested,
                                max_age_days=SPDES_EVIDENCE_MAX_AGE_DAYS, average_gpd=w["average_gpd"])
        self._spdes_date_ok(spd)
        with self._tx() as c:
            w = self._withdrawal(c, application)
            if w["status"] != "pending":
                raise RefusedError(f"application {application!r} is {w['status']}; references are attached before the "
                                   "administrator's sign-off")
            for new, col in ((cap, "capacity_ref"), (spd, "spdes_ref"), (approval, "application_approval")):
                if new is not None and w[col] is not None:
                    raise RefusedError(f"application {application!r} already cites {col} {w[col]!r}; a recorded reference "
                                       "cannot be replaced (return the credits and apply again)")
            self._evidence_free(c, "capacity", cap, w["application"], exclude_id=w["id"])
            self._evidence_free(c, "spdes", spd, w["application"], exclude_id=w["id"])
            b = c.execute("SELECT b.* FROM basins b JOIN subaccounts s ON s.basin_id = b.id WHERE s.id=?",
                          (w["subaccount_id"],)).fetchone()
            if node is not None and w["node"] is None:
                node = _commit.section_a(c, b, node).get("node", node)
            for kind, r in (("capacity", cap), ("spdes", spd)):
                if r is not None:
                    self._evidence_current(c, b, w["application"], kind, r["ref"], r.get("model_sha256"), r["committed"],
                                           on=self._today(), when="so far")
                    c.execute(f"UPDATE withdrawals SET {kind}_committed=? WHERE id=?",
                              (_commit.evidence_summary(r), w["id"]))
            cap_ref, cap_sha = (cap["ref"], cap["sha256"]) if cap else (w["capacity_ref"], w["capacity_sha256"])
            spd_ref, spd_sha, spd_as_of = ((spd["ref"], spd["sha256"], spd["as_of"]) if spd
                                           else (w["spdes_ref"], w["spdes_sha256"], w["spdes_as_of"]))
            c.execute("UPDATE withdrawals SET capacity_ref=?, capacity_sha256=?, spdes_ref=?, spdes_sha256=?, spdes_as_of=?,"
                      " application_approval=?, node=? WHERE id=?",
                      (cap_ref, cap_sha, spd_ref, spd_sha, spd_as_of, approval or w["application_approval"], node, w["id"]))
            basin_id = c.execute("SELECT basin_id FROM subaccounts WHERE id=?", (w["subaccount_id"],)).fetchone()[0]
            self._log(c, "attach", reason=reason, documents=[*documents, *_ref_docs(cap, spd), *([approval] if approval else [])],
                      basin_id=basin_id, ref=application,
                      detail={"status": "pending", "node": node, **({"application_approval": approval} if approval else {}),
                              **_ref_detail(cap, spd)})
        return self.withdrawal(application) | {"policies": policies("spdes_evidence_max_age_days")}

    @staticmethod
    def _withdrawal_node(c, application: str) -> str | None:
        """The connection node recorded in the journal when ``application`` was withdrawn (None if none was given)."""
        row = c.execute("SELECT detail FROM journal WHERE action='withdraw' AND ref=? ORDER BY seq DESC LIMIT 1",
                        (application,)).fetchone()
        detail = _json_or_raw(row[0]) if row else None
        node = detail.get("node") if isinstance(detail, dict) else None
        return node if isinstance(node, str) else None

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

    # --- the bank administrator's sign-off ------------------------------------------------------------
    def pending(self) -> list[dict]:
        """Deposits, withdrawals and transfers awaiting the bank administrator's sign-off, oldest first.

        Each has ``txn``, ``kind``, ``ref``, ``amount_gpd``, ``basin``, ``owner`` (receiving, or paying
        for a withdrawal), ``recorded_by``, ``recorded_at`` and, for a withdrawal, ``missing`` (the
        section H references still to attach before it can be signed off).
        """
        out = []
        rows = self.conn.execute(
            "SELECT s.*, b.name AS basin, e.name AS owner FROM signoffs s JOIN subaccounts a ON a.id = s.subaccount_id"
            " JOIN basins b ON b.id = a.basin_id JOIN entities e ON e.id = a.owner_id WHERE s.status = 'pending'"
            " ORDER BY s.id").fetchall()
        for s in rows:
            item = {"txn": s["txn"], "kind": s["kind"], "ref": s["ref"], "amount_gpd": s["amount_gpd"], "basin": s["basin"],
                    "owner": s["owner"], "recorded_by": s["recorded_by"], "recorded_at": s["recorded_at"]}
            if s["kind"] == "withdrawal":
                w = self.conn.execute("SELECT * FROM withdrawals WHERE application=?", (s["ref"],)).fetchone()
                item["missing"] = [what for col, what in _H_REFS if w is not None and w[col] is None]
            out.append(item)
        return out

    def sign_off(self, txn: str, *, on=None, late_reason: str | None = None, reason: str = "", documents=()) -> dict:
        """The bank administrator signs off a pending deposit, withdrawal or transfer: it takes effect.

        Only a person registered as bank administrator signs off (definitions, BANK ADMINISTRATOR), and
        not the person who recorded the transaction (program policy ``signoff_separation``); the journal
        records who (the actor) and when, with ``on`` (the date of the sign-off, default today: the date
        of the flow credit note for a withdrawal).

        * a deposit: the project is recorded as certified, a lot of its credits is created and the
          subaccount's balance rises;
        * a withdrawal: refused unless it cites the capacity demonstration and the SPDES check
          (section H(1)) and the connection application program's approval (section H(2)), the cited
          files are unchanged since they were recorded, and the SPDES check is as of no more than
          ``spdes_evidence_max_age_days`` (program policy) before ``on``. The flow credit note is
          issued on ``on`` and the certificate of occupancy falls due one year later (DEFAULT);
        * a transfer: the receiving holder gets lots of the same origin as the credits taken.

        Raises
        ------
        InputError
            An unknown or ambiguous ``txn``; ``on`` in the future.
        RefusedError
            The actor is not a registered administrator, or recorded the transaction; the transaction
            is not pending; a withdrawal lacks a section H reference, its evidence changed or is too
            old, or is held by an earlier withdrawal (program policy ``evidence_single_use``); ``on``
            before the withdrawal date, or before the as-of date of the SPDES check it cites.
        """
        on = self._not_future("on", parse_date("on", on)) or self._today()
        reason = _text("reason", reason, required=False) or ""
        with self._tx() as c:
            s = self._signoff_row(c, txn)
            admin = self._require_administrator(c, "signs off deposits, withdrawals and transfers")
            self._dated(c, "on", on, late_reason)
            if s["status"] != "pending":
                raise RefusedError(f"{s['kind']} {s['ref']} (txn {s['txn']}) is {s['status']}, not awaiting sign-off")
            self._not_the_recorder(c, s, admin, "sign it off")
            sub = c.execute("SELECT * FROM subaccounts WHERE id=?", (s["subaccount_id"],)).fetchone()
            detail = _json_or_raw(s["detail"]) if isinstance(_json_or_raw(s["detail"]), dict) else {}
            common = {"txn": s["txn"], "kind": s["kind"], "signed_off_by": admin, "signed_off_on": on.isoformat(),
                      "recorded_by": s["recorded_by"], "recorded_at": s["recorded_at"]}
            if s["kind"] == "deposit":
                p = c.execute("SELECT * FROM projects WHERE ref=?", (s["ref"],)).fetchone()
                for key, what in (("quantification", "quantification"), ("letter", "certification letter")):
                    doc = detail.get(key)
                    if isinstance(doc, dict) and not str(doc.get("ref", "")).startswith("service job "):
                        status = _refs.check_ref(doc.get("ref"), doc.get("sha256"))
                        if status != "ok":
                            raise RefusedError(f"project {s['ref']!r}: the cited {what} {doc.get('ref')} is {status} since "
                                               "the deposit was recorded; the administrator cannot sign off on it")
                if on.isoformat() < detail.get("certified_on", ""):
                    raise InputError(f"on {on} is before the project's certification ({detail['certified_on']}); allowed: "
                                     "on or after it")
                self._decide(c, s, "signed-off", reason, on, by=admin)
                desc = detail.get("description") or ""
                quant = detail.get("quantification") or {}
                c.execute("UPDATE projects SET status='certified', certified_gpd=?, certified_on=?, certificate=?,"
                          " description=CASE WHEN ?<>'' THEN ? ELSE description END,"
                          " property=coalesce(property, ?), quantification_ref=?, quantification_sha256=?,"
                          " quantified_gpd=?, pe_name=?, pe_license=? WHERE id=?",
                          (s["amount_gpd"], detail.get("certified_on"), detail.get("certificate"), desc, desc,
                           detail.get("property"), quant.get("ref"), quant.get("sha256"), quant.get("total_gpd"),
                           quant.get("engineer"), quant.get("pe_license"), p["id"]))
                if detail.get("letter") and c.execute("SELECT 1 FROM certification_letters WHERE project_id=?",
                                                      (p["id"],)).fetchone() is None:
                    c.execute("INSERT INTO certification_letters(project_id, ref, sha256, letter_on, recorded_at,"
                              " recorded_by) VALUES (?,?,?,?,?,?)",
                              (p["id"], detail["letter"]["ref"], detail["letter"]["sha256"], detail.get("certified_on"),
                               s["recorded_at"], s["recorded_by"]))
                lot = self._new_lot(c, sub["id"], p["id"], detail.get("certified_on"))
                self._lot_move(c, lot, s["amount_gpd"], "deposit", s["ref"])
                self._log(c, "sign-off", reason=reason, documents=documents, basin_id=sub["basin_id"], ref=s["ref"],
                          detail=common)
                self._move(c, sub["id"], s["amount_gpd"], "deposit",
                           reason=detail.get("reason") or f"project {s['ref']} certified complete",
                           documents=detail.get("documents") or [], basin_id=sub["basin_id"], ref=s["ref"],
                           detail={"stated_gpd": detail.get("stated_gpd"), "booked_gpd": s["amount_gpd"],
                                   "certified_on": detail.get("certified_on"), "lot": lot, **common})
                out = {"project": s["ref"], "deposited_gpd": s["amount_gpd"], "lot": lot}
            elif s["kind"] == "withdrawal":
                w = self._withdrawal(c, s["ref"])
                missing = [what for col, what in _H_REFS if w[col] is None]
                if missing:
                    raise RefusedError(f"application {w['application']!r} cannot be signed off without "
                                       + "; ".join(missing) + " (attach them with `bank attach`)")
                if w["capacity_sha256"] is None or w["spdes_sha256"] is None:
                    raise RefusedError(f"application {w['application']!r} cites a run id, not a JSON result document; "
                                       "the bank reads the document itself: return the credits and apply again citing "
                                       "the JSON files")
                for kind in ("capacity", "spdes"):
                    status = _refs.check_ref(w[f"{kind}_ref"], w[f"{kind}_sha256"])
                    if status != "ok":
                        raise RefusedError(f"application {w['application']!r}: the cited {kind} document {w[f'{kind}_ref']} "
                                           f"is {status} since it was recorded; the administrator cannot sign off on it")
                    first = self._evidence_holders(c, kind, w[f"{kind}_sha256"], before_id=w["id"])
                    if first:  # two withdrawals of a bank older than schema 4 citing one document: the first keeps it
                        raise RefusedError(_evidence_message(kind, w[f"{kind}_ref"], w[f"{kind}_sha256"], first[0],
                                                             w["application"]))
                if on.isoformat() < (w["requested_on"] or ""):
                    raise RefusedError(f"the sign-off date {on} is before the withdrawal date {w['requested_on']} of "
                                       f"application {w['application']!r}: a flow credit note is issued on or after the "
                                       "withdrawal it approves")
                b = c.execute("SELECT * FROM basins WHERE id=?", (sub["basin_id"],)).fetchone()
                for kind in ("capacity", "spdes"):
                    held = _commit.stored_evidence(w[f"{kind}_committed"])
                    self._evidence_current(c, b, w["application"], kind, w[f"{kind}_ref"], held["model_sha256"],
                                           held["committed"], on=on, when="since it was run")
                as_of = parse_date("spdes_as_of", w["spdes_as_of"])
                if as_of is not None and as_of > on:
                    raise RefusedError(f"application {w['application']!r}: the cited SPDES check is as of {as_of}, after "
                                       f"the sign-off date {on}: the administrator signs off on evidence that exists on "
                                       "the day of the sign-off")
                if as_of is not None and (on - as_of).days > SPDES_EVIDENCE_MAX_AGE_DAYS:
                    raise RefusedError(f"application {w['application']!r}: the cited SPDES check is as of {as_of}, "
                                       f"{(on - as_of).days} days before the sign-off on {on}; allowed: at most "
                                       f"{SPDES_EVIDENCE_MAX_AGE_DAYS} days (program policy spdes_evidence_max_age_days, "
                                       f"{POLICY_FLAG})")
                self._decide(c, s, "signed-off", reason, on, by=admin)
                due = _commit.add_years(on, ii_offset.CERTIFICATE_OF_OCCUPANCY_YEARS)
                c.execute("UPDATE withdrawals SET status='approved', note_issued_on=?, co_due_on=? WHERE id=?",
                          (on.isoformat(), due.isoformat(), w["id"]))
                self._log(c, "sign-off", reason=reason, documents=documents, basin_id=sub["basin_id"], ref=s["ref"],
                          detail=common | {"status": "approved", "note_issued_on": on.isoformat(),
                                           "co_due_on": due.isoformat()})
                out = {"application": s["ref"], "note_issued_on": on.isoformat(), "co_due_on": due.isoformat()}
            else:
                t = c.execute("SELECT * FROM transfers WHERE id=?", (int(s["ref"].split("-")[-1]),)).fetchone()
                self._decide(c, s, "signed-off", reason, on, by=admin)
                lots = self._mirror(c, self._pieces(c, s["ref"], "transfer-out"), t["amount_gpd"], sub["id"],
                                    "transfer-in", s["ref"])
                self._log(c, "sign-off", reason=reason, documents=documents, basin_id=sub["basin_id"], ref=s["ref"],
                          detail=common)
                self._move(c, sub["id"], t["amount_gpd"], "transfer-in", reason=reason, documents=[t["document"],
                                                                                                   t["board_approval"]],
                           basin_id=sub["basin_id"], ref=s["ref"], detail={**common, "gpd": t["amount_gpd"], "lots": lots})
                out = {"transfer": s["ref"], "gpd": t["amount_gpd"], "lots": lots}
            owner = c.execute("SELECT e.name FROM entities e WHERE e.id=?", (sub["owner_id"],)).fetchone()[0]
            basin = c.execute("SELECT name FROM basins WHERE id=?", (sub["basin_id"],)).fetchone()[0]
            balance = c.execute("SELECT balance_gpd FROM subaccounts WHERE id=?", (sub["id"],)).fetchone()[0]
        return {"txn": s["txn"], "kind": s["kind"], "ref": s["ref"], "status": "signed-off", "signed_off_by": admin,
                "signed_off_on": on.isoformat(), "basin": basin, "owner": owner, "balance_gpd": balance, **out}

    def reject(self, txn: str, *, reason: str, documents=()) -> dict:
        """The bank administrator rejects a pending deposit, withdrawal or transfer (nothing takes effect).

        A rejected deposit leaves the project identified (not certified); a rejected withdrawal is
        closed as ``returned`` and its credits go back to the lots they came from (and its evidence is
        released: program policy ``evidence_single_use``); a rejected transfer's credits go back to the
        sender's lots (``transfer-reject``). The person who recorded the transaction cannot reject it
        (program policy ``signoff_separation``).
        """
        reason = _text("reason", reason)
        with self._tx() as c:
            s = self._signoff_row(c, txn)
            admin = self._require_administrator(c, "rejects deposits, withdrawals and transfers")
            if s["status"] != "pending":
                raise RefusedError(f"{s['kind']} {s['ref']} (txn {s['txn']}) is {s['status']}, not awaiting sign-off")
            self._not_the_recorder(c, s, admin, "reject it")
            self._decide(c, s, "rejected", reason, by=admin)
            sub = c.execute("SELECT * FROM subaccounts WHERE id=?", (s["subaccount_id"],)).fetchone()
            common = {"txn": s["txn"], "kind": s["kind"], "rejected_by": admin}
            self._log(c, "reject", reason=reason, documents=documents, basin_id=sub["basin_id"], ref=s["ref"], detail=common)
            if s["kind"] == "withdrawal":
                self._close_and_return(c, self._withdrawal(c, s["ref"]), "returned", "return", reason, documents)
            elif s["kind"] == "transfer":
                t = c.execute("SELECT * FROM transfers WHERE id=?", (int(s["ref"].split("-")[-1]),)).fetchone()
                self._restore(c, self._pieces(c, s["ref"], "transfer-out"), t["amount_gpd"], "transfer-reject", s["ref"],
                              t["from_id"])
                src = c.execute("SELECT basin_id FROM subaccounts WHERE id=?", (t["from_id"],)).fetchone()
                self._move(c, t["from_id"], t["amount_gpd"], "transfer-reject", reason=reason, documents=documents,
                           basin_id=src["basin_id"], ref=s["ref"], detail=common | {"gpd": t["amount_gpd"]})
        return {"txn": s["txn"], "kind": s["kind"], "ref": s["ref"], "status": "rejected", "rejected_by": admin,
                "reason": reason}

    # --- closing notes and applications ----------------------------------------------------------------
    def return_credits(self, application: str, *, reason: str, documents=()) -> dict:
        """Return the credits reserved by a pending or approved withdrawal to the lots they came from;
        for an application without credits, close it as returned."""
        reason = _text("reason", reason)
        application = _text("application", application)
        with self._tx() as c:
            app = self._application_row(c, application)
            if app is not None:
                if app["status"] not in ("received", "approved"):
                    raise RefusedError(f"application {application!r} is {app['status']}; it cannot be returned")
                if app["connected_on"]:
                    raise RefusedError(f"application {application!r} was connected on {app['connected_on']}: its flow is "
                                       "in the sewer and cannot be returned")
                c.execute("UPDATE applications SET status='returned', closed_at=? WHERE id=?", (self._now(), app["id"]))
                self._log(c, "return-application", reason=reason, documents=documents, basin_id=app["basin_id"],
                          ref=application, detail={"status": "returned"})
                return_app = True
            else:
                return_app = False
                w = self._withdrawal(c, application)
                if w["status"] not in ("pending", "approved"):
                    raise RefusedError(f"application {application!r} is {w['status']}; its credits cannot be returned")
                if w["connected_on"]:
                    raise RefusedError(f"application {application!r} was connected on {w['connected_on']}: its flow is "
                                       "in the sewer and its credits cannot be returned")
                s = c.execute("SELECT * FROM signoffs WHERE kind='withdrawal' AND ref=? AND status='pending'",
                              (w["application"],)).fetchone()
                if s is not None:
                    self._decide(c, s, "cancelled", reason)
                self._close_and_return(c, w, "returned", "return", reason, documents)
        return self.application(application) if return_app else self.withdrawal(application)

    def _close_and_return(self, c, w, status: str, action: str, reason: str, documents) -> None:
        c.execute("UPDATE withdrawals SET status=?, closed_at=? WHERE id=?", (status, self._now(), w["id"]))
        basin_id = c.execute("SELECT basin_id FROM subaccounts WHERE id=?", (w["subaccount_id"],)).fetchone()[0]
        self._restore(c, self._pieces(c, w["application"], "withdraw"), w["amount_gpd"], action, w["application"],
                      w["subaccount_id"])
        self._move(c, w["subaccount_id"], w["amount_gpd"], action, reason=reason, documents=documents, basin_id=basin_id,
                   ref=w["application"], detail={"returned_gpd": w["amount_gpd"],
                                                 **({"policy": "default_credits", "default_credits": DEFAULT_CREDITS}
                                                    if action == "default" else {})})

    def extend(self, application: str, until, *, document: str, granted_on=None, late_reason: str | None = None,
               reason: str = "") -> dict:
        """Record an extension of the time allowed for the certificate of occupancy (DEFAULT).

        The DEFAULT definition allows additional time "when extended as provided herein" but sets no
        deadline for granting it. Program policy ``extension_after_due_date`` (:data:`POLICIES`): an
        extension granted (``granted_on``, default today) after the current due date is refused.
        """
        until = parse_date("until", until)
        if until is None:
            raise InputError("until must be a date YYYY-MM-DD")
        document = _text("document", document)
        granted = self._not_future("granted_on", parse_date("granted_on", granted_on)) or self._today()
        with self._tx() as c:
            self._dated(c, "granted_on", granted, late_reason)
            w = self._withdrawal(c, application)
            if w["status"] != "approved":
                raise RefusedError(f"application {application!r} is {w['status']}; only an issued flow credit note can be extended")
            if granted.isoformat() > w["co_due_on"]:
                raise RefusedError(f"program policy extension_after_due_date ({POLICY_FLAG}): an extension granted on "
                                   f"{granted}, after the due date {w['co_due_on']} of the note of {application!r}, is "
                                   "refused (the program sets no deadline for extensions; this policy takes the note to be "
                                   "in default from the day after the due date)")
            if until.isoformat() <= w["co_due_on"]:
                raise RefusedError(f"the extension must be later than the current due date {w['co_due_on']}")
            c.execute("INSERT INTO extensions(withdrawal_id, old_due_on, new_due_on, document, created_at) VALUES (?,?,?,?,?)",
                      (w["id"], w["co_due_on"], until.isoformat(), document, self._now()))
            c.execute("UPDATE withdrawals SET co_due_on=? WHERE id=?", (until.isoformat(), w["id"]))
            basin_id = c.execute("SELECT basin_id FROM subaccounts WHERE id=?", (w["subaccount_id"],)).fetchone()[0]
            self._log(c, "extend", reason=reason, documents=[document], basin_id=basin_id, ref=application,
                      detail={"old_due_on": w["co_due_on"], "new_due_on": until.isoformat(), "granted_on": granted.isoformat(),
                              "policy": "extension_after_due_date"})
        return self.withdrawal(application) | {"policies": policies("extension_after_due_date")}

    def complete(self, application: str, co_issued_on, *, late_reason: str | None = None, reason: str = "",
                 documents=()) -> dict:
        """Record the certificate of occupancy (or, without credits, the completion): the connection is
        complete (annual report part D)."""
        co = parse_date("co_issued_on", co_issued_on)
        if co is None:
            raise InputError("co_issued_on must be a date YYYY-MM-DD")
        self._not_future("co_issued_on", co)
        application = _text("application", application)
        with self._tx() as c:
            self._dated(c, "co_issued_on", co, late_reason)
            app = self._application_row(c, application)
            if app is not None:
                if app["status"] != "approved":
                    raise RefusedError(f"application {application!r} is {app['status']}; only an application approved under "
                                       "the connection application program (--application-approval) can be completed")
                if co.isoformat() < app["received_on"]:
                    raise InputError(f"co_issued_on {co} is before the application was received ({app['received_on']}); "
                                     "allowed: on or after it")
                c.execute("UPDATE applications SET status='completed', completed_on=?, closed_at=? WHERE id=?",
                          (co.isoformat(), self._now(), app["id"]))
                self._log(c, "complete", reason=reason, documents=documents, basin_id=app["basin_id"], ref=application,
                          detail={"co_issued_on": co.isoformat(), "credits": "none"})
            else:
                w = self._withdrawal(c, application)
                if w["status"] != "approved":
                    raise RefusedError(f"application {application!r} is {w['status']}; only a withdrawal approved (signed off) "
                                       "can be completed")
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
        return self.application(application) if app is not None else self.withdrawal(application)

    def check_defaults(self, as_of=None, *, late_reason: str | None = None, reason: str = "") -> list[dict]:
        """Put in default every approved note whose certificate of occupancy is past due on ``as_of``.

        The program defines DEFAULT (no certificate of occupancy within one year of the note, or the
        extended time) but not its consequence. Program policy ``default_credits``
        (:data:`POLICIES`, value ``return-to-holder``): the reserved credits return to the subaccount
        and lots they came from, and the note is closed as ``defaulted``. ``as_of`` cannot be in the
        future: a default is final, and a note is not in default before its due date has passed.

        Returns
        -------
        list of dict
            ``application``, ``returned_gpd``, ``co_due_on`` and ``policy`` (``default_credits``) per
            note put in default.
        """
        as_of = self._not_future("as_of", parse_date("as_of", as_of)) or self._today()
        out = []
        with self._tx() as c:
            self._dated(c, "as_of", as_of, late_reason)
            rows = c.execute("SELECT * FROM withdrawals WHERE status='approved' AND co_due_on < ? ORDER BY id",
                             (as_of.isoformat(),)).fetchall()
            for w in rows:
                self._close_and_return(c, w, "defaulted", "default",
                                       reason or f"no certificate of occupancy by {w['co_due_on']} (as of {as_of})", ())
                out.append({"application": w["application"], "returned_gpd": w["amount_gpd"], "co_due_on": w["co_due_on"],
                            "policy": "default_credits"})
        return out

    def record_application(self, application: str, principal: str, peak_flow_gpd: float, *, basin: str | None = None,
                           node: str | None = None, average_gpd: float | None = None, app_type: str = "connection",
                           received_on=None, late_reason: str | None = None,
                           application_approval: str | None = None, description: str = "", reason: str = "",
                           documents=()) -> dict:
        """Record an application for a new or modified connection or extension that withdraws no credits.

        The records section lists *every* application (part C) and every connection completed
        since 2013-01-01 (part D), not only those that used credits: one adding 2,500 gpd or less
        needs no offset (definitions) but is still an application. Its status moves from
        ``received`` to ``approved`` (``application_approval``, the connection application program's
        approval) and then ``completed`` (:meth:`complete`) or ``returned`` (:meth:`return_credits`).
        An application that needs an offset (more than 2,500 gpd) withdraws credits with
        :meth:`withdraw` instead; recorded here it is flagged ``offset_required``.

        With a ``basin`` it is a commitment at ``node`` (:meth:`commitments`) until connected and
        contained in a registered model, returned or expired; where the basin has a registered
        model, ``node`` must drain to its outlet (section A). ``average_gpd``: its average daily
        flow [gpd] (program policy ``commitment_average``: the peak when not given).
        """
        application = _text("application", application)
        peak = _nonnegative_gpd("peak_flow_gpd", peak_flow_gpd)
        average = self._average(average_gpd, peak) if peak > 0 else None
        app_type = _app_type(app_type)
        node = _text("node", node, required=False)
        received = self._not_future("received_on", parse_date("received_on", received_on)) or self._today()
        approval = _text("application_approval", application_approval, required=False)
        decision = ii_offset.threshold_decision(peak, average)
        with self._tx() as c:
            self._dated(c, "received_on", received, late_reason)
            same = self._app_taken(c, application)
            if same is not None:
                raise RefusedError(f"application {application!r} already has a withdrawal or record"
                                   + ("" if same == application else f" (as {same!r})"))
            p = self._entity(c, principal)
            if not p["municipal"]:
                raise RefusedError(f"{principal} is not a municipal user (the principal municipal user receives the connection)")
            b = self._basin(c, basin) if basin is not None else None
            section_a = _commit.section_a(c, b, node) if b is not None and node is not None else {}
            node = section_a.get("node", node)
            c.execute("INSERT INTO applications(application, app_key, app_type, principal_id, basin_id, node, peak_flow_gpd,"
                      " description, received_on, application_approval, status, created_at, average_gpd, approved_on)"
                      " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                      (application, application.casefold(), app_type, p["id"], b["id"] if b else None, node, peak,
                       description or "", received.isoformat(), approval, "approved" if approval else "received", self._now(),
                       average, received.isoformat() if approval else None))
            self._log(c, "record-application", reason=reason, documents=[*documents, *([approval] if approval else [])],
                      basin_id=b["id"] if b else None, ref=application,
                      detail={"principal": p["name"], "peak_flow_gpd": peak, "type": app_type, "credits": "none",
                              "node": node, "average_gpd": average, **section_a,
                              "offset_required": decision["offset_required"], "threshold": _threshold_detail(decision),
                              "received_on": received.isoformat(), "application_approval": approval})
        return self.application(application)

    def _approve_application(self, application: str, approval: str | None, reason: str, documents) -> dict:
        if approval is None:
            raise InputError("application_approval is required")
        with self._tx() as c:
            app = self._application_row(c, application)
            if app["application_approval"] is not None:
                raise RefusedError(f"application {application!r} already cites application_approval "
                                   f"{app['application_approval']!r}; a recorded reference cannot be replaced")
            if app["status"] != "received":
                raise RefusedError(f"application {application!r} is {app['status']}")
            c.execute("UPDATE applications SET application_approval=?, status='approved', approved_on=? WHERE id=?",
                      (approval, self._today().isoformat(), app["id"]))
            self._log(c, "attach", reason=reason, documents=[*documents, approval], basin_id=app["basin_id"], ref=application,
                      detail={"application_approval": approval, "status": "approved", "credits": "none"})
        return self.application(application)

    # --- credits between holders ---------------------------------------------------------------------
    def transfer(self, basin: str, from_owner: str, to_owner: str, gpd: float, *, document: str,
                 to_basin: str | None = None, board_approval: str | None = None, reason: str = "") -> dict:
        """Record a transfer of credits between holders (sections B, C, G), pending the administrator's sign-off.

        Refused without a document (notarized bill of sale, memorandum of gift or grant, written
        notice), across basins without a recorded Board approval (section A), or for more than the
        balance. The credits leave the sender's lots by the allocation policy and are reserved at
        once (program policy ``pending_reserve``); the receiver gets lots of the same origin when the
        bank administrator signs the transfer off (:meth:`sign_off`). ``gpd`` must be whole gallons
        per day; the receiving subaccount is opened if needed.
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
            self._need(c, src["id"], amount)
            cur = c.execute("INSERT INTO transfers(from_id, to_id, amount_gpd, document, board_approval, cross_basin, created_at)"
                            " VALUES (?,?,?,?,?,?,?)", (src["id"], dst["id"], amount, document, board_approval, int(cross), self._now()))
            ref = f"transfer-{cur.lastrowid}"
            docs = [document, board_approval]
            detail = {"from": from_owner, "to": to_owner, "basin": basin, "to_basin": to_basin, "gpd": amount}
            pieces = self._consume(c, src["id"], amount, "transfer-out", ref)
            txn = self._record_signoff(c, "transfer", ref, dst["id"], amount, detail)
            self._move(c, src["id"], -amount, "transfer-out", reason=reason, documents=docs, basin_id=src["basin_id"],
                       ref=ref, detail=detail | {"sign_off": "pending", "lots": self._show_pieces(pieces),
                                                 "allocation_policy": ALLOCATION_POLICY})
        return {"transfer": ref, **detail, "status": "pending sign-off", "txn": txn,
                "from_balance_gpd": self.balance(basin, from_owner)["balance_gpd"],
                "to_balance_gpd": self.balance(to_basin, to_owner)["balance_gpd"], "lots_taken": self._show_pieces(pieces),
                "policies": policies("allocation_policy", "pending_reserve")}

    def condemn(self, basin: str, from_owner: str, by: str, gpd: float, *, project: str | None = None, document: str,
                reason: str = "") -> dict:
        """Condemn credits on deposit in a private entity's name for a public purpose (section D).

        Section D: a municipal user "can mandate that credits 'on deposit' in the name of a private
        entity generated in relation to an I/I remediation project within such municipal user's
        boundaries shall be 'condemned'". Only the holder's lots whose project's jurisdiction is
        ``by`` (and, with ``project``, of that project) can be taken, in the order of the allocation
        policy; a lot of unknown origin (migrated schema-2 bank) never. Asking for more is refused,
        naming the holder's lots and their jurisdictions. One condemnation record is made per project
        taken from; the credits move to ``by``'s subaccount as lots of the same origin, at once
        (program policy ``condemnation_signoff``). ``document`` is the condemnation resolution.
        """
        amount = _whole_gpd("gpd", gpd)
        document = _text("document", document, required=False)
        if document is None:
            raise RefusedError("a condemnation needs a cited document (the municipal user's resolution)")
        ref = _text("project", project, required=False)
        with self._tx() as c:
            b = self._basin(c, basin)
            m, f = self._entity(c, by), self._entity(c, from_owner)
            if not m["municipal"]:
                raise RefusedError(f"{by} is not a municipal user; only a municipal user can condemn credits (section D)")
            if f["municipal"]:
                raise RefusedError(f"{from_owner} is a municipal user; only credits in a private entity's name can be condemned")
            p = None
            if ref is not None:
                p = c.execute("SELECT * FROM projects WHERE ref=?", (ref,)).fetchone()
                if p is None or p["status"] != "certified":
                    raise RefusedError(f"project {ref!r} is not a certified project of the bank")
                if p["jurisdiction_id"] != m["id"]:
                    raise RefusedError(f"{by} does not have jurisdiction over project {ref!r} (section D: only credits of an "
                                       "I/I remediation project within the condemning municipal user's boundaries)")
            src = self._subaccount(c, basin, from_owner)
            lots = self._holder_lots(c, src["id"])
            eligible = [lot for lot in lots if lot["jurisdiction_id"] == m["id"] and (p is None or lot["project_id"] == p["id"])]
            available = sum(lot["gpd"] for lot in eligible)
            if amount > available:
                scope = f" of project {ref}" if ref else ""
                raise RefusedError(f"insufficient eligible credits: {by} can condemn only credits generated by an I/I "
                                   f"remediation project within its boundaries (section D){scope}; {from_owner} holds in "
                                   f"basin {basin} {_describe_lots(lots)}; eligible {available:,} gpd, asked {amount:,} gpd")
            dst = self._subaccount(c, basin, by, open_if_missing=True, reason="condemnation")
            plan, left = {}, amount  # project -> ([its lots taken], gpd), in the allocation order (FIFO)
            for lot in eligible:
                if left <= 0:
                    break
                g = min(int(lot["gpd"]), left)
                lots_g = plan.setdefault(lot["project_id"], [[], 0])
                lots_g[0].append(lot)
                lots_g[1] += g
                left -= g
            pieces, made = [], []
            for project_id, (group_lots, g) in plan.items():
                cur = c.execute("INSERT INTO condemnations(from_id, to_id, project_id, amount_gpd, document, created_at)"
                                " VALUES (?,?,?,?,?,?)", (src["id"], dst["id"], project_id, g, document, self._now()))
                cref = f"condemnation-{cur.lastrowid}"
                group, _ = self._take(c, group_lots, g, "condemn-out", cref)
                pieces += group
                new_lots = self._mirror(c, group, g, dst["id"], "condemn-in", cref)
                detail = {"from": from_owner, "by": by, "project": group[0]["project"], "gpd": g,
                          "lots": self._show_pieces(group), "allocation_policy": ALLOCATION_POLICY,
                          "policy": "condemnation_signoff"}
                self._move(c, src["id"], -g, "condemn-out", reason=reason or "public purpose", documents=[document],
                           basin_id=b["id"], ref=cref, detail=detail)
                self._move(c, dst["id"], g, "condemn-in", reason=reason or "public purpose", documents=[document],
                           basin_id=b["id"], ref=cref, detail=detail | {"new_lots": new_lots})
                made.append({"condemnation": cref, "project": group[0]["project"], "gpd": g})
        return {"condemnation": ", ".join(x["condemnation"] for x in made), "condemnations": made, "from": from_owner,
                "by": by, "project": ref, "gpd": amount, "basin": basin, "lots_taken": self._show_pieces(pieces),
                "from_balance_gpd": self.balance(basin, from_owner)["balance_gpd"],
                "to_balance_gpd": self.balance(basin, by)["balance_gpd"],
                "policies": policies("allocation_policy", "condemnation_signoff")}

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
        limit = _commit.add_years(self._today(), -ii_offset.RECORD_RETENTION_YEARS)
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
    def _pending_sums(self, subaccount_id: int) -> dict:
        c = self.conn
        q = lambda sql: c.execute(sql, (subaccount_id,)).fetchone()[0]
        return {
            "pending_in_gpd": q("SELECT coalesce(sum(amount_gpd), 0) FROM signoffs WHERE status='pending' AND "
                               "kind IN ('deposit', 'transfer') AND subaccount_id=?"),
            "pending_out_gpd": q("SELECT coalesce(sum(t.amount_gpd), 0) FROM transfers t JOIN signoffs s ON s.kind='transfer'"
                                " AND s.ref = 'transfer-' || t.id WHERE s.status='pending' AND t.from_id=?")
            + q("SELECT coalesce(sum(amount_gpd), 0) FROM signoffs WHERE status='pending' AND kind='withdrawal' "
                "AND subaccount_id=?"),
        }

    def balance(self, basin: str, owner: str, *, lots: bool = False) -> dict:
        """Balance of one subaccount [gpd].

        Returns
        -------
        dict
            ``balance_gpd`` (on deposit and available: signed-off credits in, minus what withdrawals
            and transfers took, pending ones included: program policy ``pending_reserve``),
            ``reserved_gpd`` (by pending or approved withdrawals), ``pending_in_gpd`` (deposits and
            transfers to it awaiting sign-off: not counted), ``pending_out_gpd`` (withdrawals and
            transfers from it awaiting sign-off: already taken out), ``allocation_policy`` and, with
            ``lots``, the subaccount's ``lots`` (:meth:`lots`).
        """
        c = self.conn
        sub = self._subaccount(c, basin, owner)
        reserved = c.execute("SELECT coalesce(sum(amount_gpd), 0) FROM withdrawals WHERE subaccount_id=? AND "
                             "status IN ('pending', 'approved')", (sub["id"],)).fetchone()[0]
        out = {"basin": basin, "owner": owner, "balance_gpd": sub["balance_gpd"], "reserved_gpd": reserved,
               **self._pending_sums(sub["id"]), "allocation_policy": ALLOCATION_POLICY}
        if lots:
            out["lots"] = self.lots(basin, owner)
            out["policies"] = policies("allocation_policy", "pending_reserve")
        return out

    def balances(self, *, lots: bool = False) -> list[dict]:
        """Every subaccount's balance, by basin then owner (with ``lots``: each subaccount's lots)."""
        rows = self.conn.execute(
            "SELECT b.name AS basin, e.name AS owner, e.municipal, s.balance_gpd, s.id,"
            " (SELECT coalesce(sum(amount_gpd),0) FROM withdrawals w WHERE w.subaccount_id=s.id AND w.status IN ('pending','approved')) AS reserved_gpd"
            " FROM subaccounts s JOIN basins b ON b.id=s.basin_id JOIN entities e ON e.id=s.owner_id ORDER BY b.name, e.name").fetchall()
        out = []
        for r in rows:
            item = {"basin": r["basin"], "owner": r["owner"], "municipal": bool(r["municipal"]),
                    "balance_gpd": r["balance_gpd"], "reserved_gpd": r["reserved_gpd"], **self._pending_sums(r["id"])}
            if lots:
                item["lots"] = self.lots(r["basin"], r["owner"])
            out.append(item)
        return out

    def lots(self, basin: str | None = None, owner: str | None = None, *, empty: bool = False) -> list[dict]:
        """The lots holding credits (with ``empty``, also those emptied), in the allocation order per subaccount.

        Each: ``lot``, ``basin``, ``owner``, ``gpd``, ``project`` (None: unknown origin),
        ``project_basin``, ``jurisdiction`` (the municipal user with jurisdiction over the project
        site: who may condemn it, section D), ``deposited_on``, ``source_lot`` (the lot it was split
        from by a transfer or condemnation), ``origin`` (``project`` or ``unknown``) and ``note``.
        """
        where, args = ["1"], []
        if basin is not None:
            where.append("b.name = ?")
            args.append(basin)
        if owner is not None:
            where.append("o.name = ?")
            args.append(owner)
        if not empty:
            where.append("l.gpd > 0")
        rows = self.conn.execute(
            "SELECT l.*, b.name AS basin, o.name AS owner, p.ref AS project, pb.name AS project_basin, j.name AS jurisdiction"
            " FROM lots l JOIN subaccounts s ON s.id = l.subaccount_id JOIN basins b ON b.id = s.basin_id"
            " JOIN entities o ON o.id = s.owner_id LEFT JOIN projects p ON p.id = l.project_id"
            " LEFT JOIN basins pb ON pb.id = p.basin_id LEFT JOIN entities j ON j.id = p.jurisdiction_id"
            f" WHERE {' AND '.join(where)}"
            " ORDER BY b.name, o.name, l.deposited_on IS NOT NULL, l.deposited_on, l.id", args).fetchall()
        return [{"lot": r["id"], "basin": r["basin"], "owner": r["owner"], "gpd": r["gpd"], "project": r["project"],
                 "project_basin": r["project_basin"], "jurisdiction": r["jurisdiction"], "deposited_on": r["deposited_on"],
                 "source_lot": r["source_lot_id"], "origin": "project" if r["project_id"] is not None else "unknown",
                 "note": r["note"]} for r in rows]

    def _signoff_of(self, kind: str, ref: str) -> sqlite3.Row | None:
        return self.conn.execute("SELECT * FROM signoffs WHERE kind=? AND ref=? ORDER BY id DESC LIMIT 1", (kind, ref)).fetchone()

    def withdrawal(self, application: str) -> dict:
        """One withdrawal (flow credit note) with its section H references and its sign-off.

        ``signoff_status`` is ``pending``, ``signed-off``, ``rejected``, ``cancelled`` or, for a
        withdrawal made before sign-off existed (migrated schema-2 bank), ``none (schema 2)``;
        ``missing_for_sign_off`` lists the section H references still to attach.
        """
        r = self.conn.execute(
            "SELECT w.*, b.name AS basin, e.name AS owner, p.name AS principal FROM withdrawals w JOIN subaccounts s ON s.id=w.subaccount_id"
            " JOIN basins b ON b.id=s.basin_id JOIN entities e ON e.id=s.owner_id JOIN entities p ON p.id=w.principal_id"
            " WHERE w.application=?", (application,)).fetchone()
        if r is None:
            raise InputError(f"unknown application {application!r}")
        keys = ("application", "basin", "owner", "principal", "status", "peak_flow_gpd", "offset_ratio", "amount_gpd",
                "node", "application_approval", "capacity_ref", "capacity_sha256", "spdes_ref", "spdes_sha256",
                "spdes_as_of", "description", "requested_at", "requested_on", "note_issued_on", "co_due_on", "co_issued_on",
                "closed_at", "average_gpd", "connected_on", "expired_on", "applicant", "affected_owner")
        out = {k: r[k] for k in keys}
        for kind in ("capacity", "spdes"):
            held = _commit.stored_evidence(r[f"{kind}_committed"]) if r[f"{kind}_ref"] else None
            out[f"{kind}_included"] = (None if held is None or held["committed"] is None
                                       else [f["application"] for f in held["committed"]["flows"]])
        out["type"] = r["app_type"]
        s = self._signoff_of("withdrawal", r["application"])
        out.update(signoff_txn=s["txn"] if s else None, signoff_status=s["status"] if s else "none (schema 2)",
                   recorded_by=s["recorded_by"] if s else None, signed_off_by=s["decided_by"] if s else None,
                   signed_off_at=s["decided_at"] if s else None)
        out["missing_for_sign_off"] = ([what for col, what in _H_REFS if r[col] is None]
                                       if r["status"] == "pending" else [])
        return out

    def withdrawals(self) -> list[dict]:
        apps = [r[0] for r in self.conn.execute("SELECT application FROM withdrawals ORDER BY id")]
        return [self.withdrawal(a) for a in apps]

    def application(self, application: str) -> dict:
        """One application recorded without credits (:meth:`record_application`)."""
        r = self.conn.execute(
            "SELECT a.*, p.name AS principal, b.name AS basin FROM applications a JOIN entities p ON p.id = a.principal_id"
            " LEFT JOIN basins b ON b.id = a.basin_id WHERE a.application=?", (application,)).fetchone()
        if r is None:
            raise InputError(f"unknown application {application!r}")
        return {"application": r["application"], "type": r["app_type"], "principal": r["principal"], "basin": r["basin"],
                "node": r["node"], "peak_flow_gpd": r["peak_flow_gpd"], "credits": "none",
                "offset_required": ii_offset.threshold_decision(r["peak_flow_gpd"], r["average_gpd"])["offset_required"],
                "description": r["description"],
                "received_on": r["received_on"], "application_approval": r["application_approval"], "status": r["status"],
                "completed_on": r["completed_on"], "closed_at": r["closed_at"], "average_gpd": r["average_gpd"],
                "approved_on": r["approved_on"], "connected_on": r["connected_on"], "expired_on": r["expired_on"]}

    def applications(self) -> list[dict]:
        """Applications recorded without credits, in the order recorded."""
        return [self.application(r[0]) for r in self.conn.execute("SELECT application FROM applications ORDER BY id")]

    def transfers(self) -> list[dict]:
        """Every transfer with its sign-off status (``none (schema 2)`` for one made before sign-off existed)."""
        out = []
        for t in self.conn.execute(
                "SELECT t.*, fb.name AS basin, fe.name AS from_owner, tb.name AS to_basin, te.name AS to_owner FROM transfers t"
                " JOIN subaccounts f ON f.id=t.from_id JOIN basins fb ON fb.id=f.basin_id JOIN entities fe ON fe.id=f.owner_id"
                " JOIN subaccounts d ON d.id=t.to_id JOIN basins tb ON tb.id=d.basin_id JOIN entities te ON te.id=d.owner_id"
                " ORDER BY t.id").fetchall():
            s = self._signoff_of("transfer", f"transfer-{t['id']}")
            out.append({"transfer": f"transfer-{t['id']}", "basin": t["basin"], "from": t["from_owner"],
                        "to_basin": t["to_basin"], "to": t["to_owner"], "gpd": t["amount_gpd"], "document": t["document"],
                        "board_approval": t["board_approval"], "created_at": t["created_at"],
                        "signoff_status": s["status"] if s else "none (schema 2)",
                        "signed_off_by": s["decided_by"] if s else None, "signed_off_at": s["decided_at"] if s else None})
        return out

    @staticmethod
    def policies() -> list[dict]:
        """Every program policy in force (:data:`POLICIES`), each flagged as a program interpretation."""
        return policies()

    def projects(self) -> list[dict]:
        """Every project with its property (public/private), the quantification its deposit cited (SHA-256,
        total, the PE) and its certification letter (``letter_ref``, ``letter_sha256``, ``letter_on``; None
        when not furnished: annual report part B flags it)."""
        rows = self.conn.execute(
            "SELECT p.*, b.name AS basin, e.name AS jurisdiction, l.ref AS letter_ref, l.sha256 AS letter_sha256,"
            " l.letter_on FROM projects p JOIN basins b ON b.id=p.basin_id JOIN entities e ON e.id=p.jurisdiction_id"
            " LEFT JOIN certification_letters l ON l.project_id = p.id"
            " ORDER BY p.status, coalesce(p.priority, 1e9), p.ref").fetchall()
        keys = ("ref", "basin", "jurisdiction", "description", "priority", "estimated_gpd", "status", "certified_gpd",
                "certified_on", "certificate", "property", "quantification_ref", "quantification_sha256",
                "quantified_gpd", "pe_name", "pe_license", "letter_ref", "letter_sha256", "letter_on")
        return [{k: r[k] for k in keys} for r in rows]

    # --- the municipal users' annual records (records section) -------------------------------------------
    def record_annual_report(self, municipal_user: str, period: int, *, submitted_on=None, document: str | None = None,
                             late_reason: str | None = None, reason: str = "") -> dict:
        """Record a municipal user's submission of its records to the bank administrator (records section:
        "submit them to the bank administrator on at least an annual basis"), for ``period`` (a calendar
        year), with the date it was due under program policy ``annual_report_due`` (:meth:`annual_reports`)
        and the document's SHA-256 when a file is given. Once per municipal user and period.
        """
        if isinstance(period, bool) or (isinstance(period, float) and not period.is_integer()):
            raise InputError(f"period {period!r}; allowed: a calendar year (2013 or later)")
        try:
            period = int(period)
        except (TypeError, ValueError):
            raise InputError(f"period {period!r}; allowed: a calendar year (2013 or later)") from None
        submitted = self._not_future("submitted_on", parse_date("submitted_on", submitted_on)) or self._today()
        if not 2013 <= period <= submitted.year:
            raise InputError(f"period {period}; allowed: a calendar year from 2013 (the program's start) to the year of "
                             f"the submission ({submitted.year})")
        doc = _refs.resolve_document("document", _text("document", document, required=False),
                                     "the submitted records (any format)")
        with self._tx() as c:
            e = self._entity(c, municipal_user)
            if not e["municipal"]:
                raise RefusedError(f"{municipal_user} is not a municipal user: the records section asks each municipal user "
                                   "to submit its records")
            self._dated(c, "submitted_on", submitted, late_reason)
            if submitted.isoformat() < str(e["created_at"])[:10]:
                raise RefusedError(f"{municipal_user} entered the bank on {str(e['created_at'])[:10]}; records submitted on "
                                   f"{submitted} were submitted before it")
            if c.execute("SELECT 1 FROM annual_reports WHERE entity_id=? AND period=?", (e["id"], period)).fetchone():
                raise RefusedError(f"{municipal_user}: the records of {period} were already submitted")
            due = _annual_due(c, e)
            c.execute("INSERT INTO annual_reports(entity_id, period, due_on, submitted_on, document, sha256, recorded_at,"
                      " recorded_by) VALUES (?,?,?,?,?,?,?,?)",
                      (e["id"], period, due.isoformat(), submitted.isoformat(), doc and doc["ref"], doc and doc["sha256"],
                       self._now(), self._require_actor()))
            self._log(c, "annual-report", reason=reason, documents=[doc["ref"]] if doc else [], ref=municipal_user,
                      detail={"period": period, "due_on": due.isoformat(), "submitted_on": submitted.isoformat(),
                              "late": submitted > due, "policy": "annual_report_due"})
        return {"municipal_user": municipal_user, "period": period, "due_on": due.isoformat(),
                "submitted_on": submitted.isoformat(), "late": submitted > due, "document": doc,
                "policies": policies("annual_report_due")}

    def annual_reports(self, as_of=None) -> list[dict]:
        """Each municipal user's annual records: its submissions and the next due date (program policy
        ``annual_report_due``), with ``status`` ``due`` (by the date), ``overdue`` (past it on ``as_of``,
        default today)."""
        as_of = parse_date("as_of", as_of) or self._today()
        out = []
        c = self.conn
        for e in c.execute("SELECT * FROM entities WHERE municipal ORDER BY name").fetchall():
            subs = [{"period": r["period"], "due_on": r["due_on"], "submitted_on": r["submitted_on"],
                     "late": r["submitted_on"] > r["due_on"], "document": r["document"], "sha256": r["sha256"]}
                    for r in c.execute("SELECT * FROM annual_reports WHERE entity_id=? ORDER BY submitted_on, period",
                                       (e["id"],))]
            due = _annual_due(c, e)
            out.append({"municipal_user": e["name"], "submissions": subs, "next_due_on": due.isoformat(),
                        "status": "overdue" if due < as_of else "due",
                        "last_submitted_on": subs[-1]["submitted_on"] if subs else None})
        return out

    def entities(self) -> list[dict]:
        return [{"name": r["name"], "municipal": bool(r["municipal"])}
                for r in self.conn.execute("SELECT * FROM entities ORDER BY name")]

    def journal(self, *, basin: str | None = None, owner: str | None = None, since=None, ref: str | None = None,
                txn: str | None = None) -> list[dict]:
        """Journal rows, oldest first, optionally for one basin / owner, from a date, of one ``ref`` (an
        application, project, transfer) or one transaction ``txn``."""
        where, args = [], []
        for col, value in (("j.ref", ref), ("j.txn", txn)):
            if value is not None:
                where.append(f"{col} = ?")
                args.append(value)
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
                        "hash": r["hash"],
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
        out += [ref for _what, ref, _sha, _owner in _program_documents(self.conn)]
        for (detail,) in self.conn.execute("SELECT detail FROM signoffs WHERE kind='deposit' AND status='pending'"):
            d = _json_or_raw(detail)
            for key in ("quantification", "letter"):
                if isinstance(d, dict) and isinstance(d.get(key), dict) and isinstance(d[key].get("ref"), str):
                    out.append(d[key]["ref"])
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


def _threshold_detail(decision: dict) -> dict:
    """The journal's and the answer's record of the offset threshold (:func:`capacitysim.rules.ii_offset.threshold_decision`)."""
    return {k: decision[k] for k in ("offset_required", "compared", "compared_flow_gpd", "threshold_gpd", "note")} | {
        "threshold_basis": decision["policy"]["value"]}


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


def _describe_lots(lots, limit: int = 6) -> str:
    """The lots of a holder in one line: number, gpd, project and its jurisdiction (or unknown origin)."""
    if not lots:
        return "no credits"
    parts = []
    for lot in lots[:limit]:
        if lot["project"] is None:
            parts.append(f"lot {lot['id']}: {lot['gpd']:,} gpd of unknown origin (migrated schema-2 bank: cannot be condemned)")
        else:
            parts.append(f"lot {lot['id']}: {lot['gpd']:,} gpd from project {lot['project']} (jurisdiction "
                         f"{lot['jurisdiction']})")
    more = f"; and {len(lots) - limit} more lot(s)" if len(lots) > limit else ""
    return "; ".join(parts) + more


def _evidence_message(kind: str, ref: str, sha256: str, holder, application: str) -> str:
    """The refusal of program policy ``evidence_single_use``, naming both applications."""
    what = "capacity demonstration" if kind == "capacity" else "SPDES/treatment check"
    released = (" (it is released if that withdrawal is rejected or returned)"
                if EVIDENCE_SINGLE_USE == "until-rejected-or-returned" and holder["status"] == "pending" else "")
    return (f"{kind}_ref: the {what} {ref} (sha256 {sha256[:12]}...) is already the evidence of application "
            f"{holder['application']!r} ({holder['status']}){released}; application {application!r} cannot cite it: a "
            f"capacity demonstration or treatment check is the evidence of one application only (program policy "
            f"evidence_single_use = {EVIDENCE_SINGLE_USE}, {POLICY_FLAG}); demonstrate capacity for {application!r} "
            "with its own run")


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
            for key in ("model", "model_sha256", "connection", "added_gpd", "as_of", "watershed", "basis"):
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


#: Where an I/I remediation project is (records section, parts A and B).
PROPERTIES = ("public", "private")


def _property(value) -> str | None:
    """``public`` or ``private`` (records section A and B: "the municipal users' public sewage collection
    systems and private property"), or None when not stated."""
    if value is None:
        return None
    v = str(value).strip().casefold()
    if v not in PROPERTIES:
        raise InputError(f"property {value!r}; allowed: {', '.join(PROPERTIES)} (records section, parts A and B)")
    return v


def quantification_facts_checked(facts: dict, **deposit) -> dict:
    """A quantification the caller (the service) read and fingerprinted: ``{"ref", "sha256", "document"}``,
    checked here with :func:`capacitysim.bank.refs.quantification_facts` like a cited file."""
    ref, sha, doc = facts.get("ref"), facts.get("sha256"), facts.get("document")
    if not isinstance(ref, str) or not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{64}", sha):
        raise InputError("quantification: a dict needs ref, sha256 (64 hex digits) and document")
    return {"ref": ref, "sha256": sha} | _refs.quantification_facts("quantification", ref, doc, **deposit)


def _annual_due(c, entity) -> _dt.date:
    """The next date a municipal user's records are due (program policy ``annual_report_due``,
    ``anniversary``): one year after its last submission; the first, one year after it entered the bank."""
    last = c.execute("SELECT max(submitted_on) FROM annual_reports WHERE entity_id=?", (entity["id"],)).fetchone()[0]
    since = _dt.date.fromisoformat(last[:10]) if last else _dt.date.fromisoformat(str(entity["created_at"])[:10])
    return _commit.add_years(since, 1)


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
