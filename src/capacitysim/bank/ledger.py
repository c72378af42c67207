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

Where it is written
-------------------
This module composes :class:`Ledger` and is where its names are imported from; each part is a module
of its own: :mod:`~capacitysim.bank.ledger_core` (the file, the transaction, the journal and its hash,
the date a row takes effect), :mod:`~capacitysim.bank.ledger_values` (names, dates, amounts, texts
given), :mod:`~capacitysim.bank.ledger_policies` (:data:`POLICIES`), :mod:`~capacitysim.bank.ledger_lots`
(provenance), :mod:`~capacitysim.bank.ledger_admin` (administrators, service users' bindings),
:mod:`~capacitysim.bank.ledger_registry` (entities, basins, projects, models of record, committed
flows), :mod:`~capacitysim.bank.ledger_transactions` (deposits, withdrawals, transfers, condemnations),
:mod:`~capacitysim.bank.ledger_evidence` (single use and currency of cited evidence),
:mod:`~capacitysim.bank.ledger_signoff` (the administrator's sign-off),
:mod:`~capacitysim.bank.ledger_applications` (a note's life after it, applications without credits),
:mod:`~capacitysim.bank.ledger_records` (annual submissions, disputes, the purge),
:mod:`~capacitysim.bank.ledger_reading` (balances and records read), :mod:`~capacitysim.bank.ledger_verify`
(the head and the audit) and :mod:`~capacitysim.bank.ledger_migration` (a new bank's schema, older
banks migrated). They import one another only downwards (values and policies, then the core, then the
parts); a part reaches another part's methods through ``self``, never by import.
"""

from __future__ import annotations

from capacitysim.bank.ledger_admin import Administration
from capacitysim.bank.ledger_applications import Applications
from capacitysim.bank.ledger_core import (
    DEFAULT_DB,
    GENESIS_HASH,
    HASHED_COLUMNS,
    BankBusyError,
    LedgerCore,
    journal_hash,
    utc_now,
)
from capacitysim.bank.ledger_evidence import Evidence
from capacitysim.bank.ledger_lots import LOT_NOTE_MIGRATED, LOT_NOTE_UNKNOWN, Lots
from capacitysim.bank.ledger_migration import Migration
from capacitysim.bank.ledger_policies import (
    ADMINISTRATOR_REGISTRATION,
    ALLOCATION_POLICY,
    BANK_READS,
    BINDABLE_ROLES,
    CONDEMNATION_SIGNOFF,
    DEFAULT_CREDITS,
    EVIDENCE_HELD_BY,
    EVIDENCE_SINGLE_USE,
    EXTENSION_AFTER_DUE_DATE,
    PENDING_RESERVE,
    POLICIES,
    POLICY_FLAG,
    SERVICE_USER_BINDING,
    SIGNOFF_SEPARATION,
    SPDES_EVIDENCE_MAX_AGE_DAYS,
    policies,
)
from capacitysim.bank.ledger_reading import Reading
from capacitysim.bank.ledger_records import Records
from capacitysim.bank.ledger_registry import Registry
from capacitysim.bank.ledger_signoff import SignOff
from capacitysim.bank.ledger_transactions import Transactions
from capacitysim.bank.ledger_values import (
    APPLICATION_TYPES,
    MAX_GPD,
    MAX_NAME,
    MAX_TEXT,
    MIN_NAME,
    PROPERTIES,
    ROLE_WORDS,
    book_down,
    book_up,
    default_actor,
    parse_date,
    person_name,
    quantification_facts_checked,
)
from capacitysim.bank.ledger_verify import Verification

# importable from here before the split (the ledger imported them), and so still: the schema, errors, offset rules
from capacitysim.bank.schema import MIGRATION_3, MIGRATION_4, MIGRATION_5, MIGRATION_6, SCHEMA, SCHEMA_VERSION
from capacitysim.errors import BusyError, CapacitysimError, InputError, RefusedError
from capacitysim.rules import ii_offset

__all__ = [
    "ADMINISTRATOR_REGISTRATION", "ALLOCATION_POLICY", "APPLICATION_TYPES", "BANK_READS", "BINDABLE_ROLES",
    "CONDEMNATION_SIGNOFF", "DEFAULT_CREDITS", "DEFAULT_DB", "EVIDENCE_HELD_BY", "EVIDENCE_SINGLE_USE",
    "EXTENSION_AFTER_DUE_DATE", "GENESIS_HASH", "HASHED_COLUMNS", "LOT_NOTE_MIGRATED", "LOT_NOTE_UNKNOWN", "MAX_GPD",
    "MAX_NAME", "MAX_TEXT", "MIN_NAME", "PENDING_RESERVE", "POLICIES", "POLICY_FLAG", "PROPERTIES", "ROLE_WORDS",
    "SERVICE_USER_BINDING", "SIGNOFF_SEPARATION", "SPDES_EVIDENCE_MAX_AGE_DAYS", "BankBusyError", "Ledger", "book_down",
    "book_up", "default_actor", "journal_hash", "parse_date", "person_name", "policies", "quantification_facts_checked",
    "utc_now",
    "MIGRATION_3", "MIGRATION_4", "MIGRATION_5", "MIGRATION_6", "SCHEMA", "SCHEMA_VERSION", "BusyError",
    "CapacitysimError", "InputError", "RefusedError", "ii_offset",
]


class Ledger(Migration, Administration, Registry, Transactions, Evidence, SignOff, Applications, Records, Lots, Reading,
             Verification, LedgerCore):
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

    @staticmethod
    def _evidence_single_use() -> str:
        """The value of program policy ``evidence_single_use`` in force: this module's :data:`EVIDENCE_SINGLE_USE`,
        read at each call, so that setting that attribute switches the ledger to its alternative (``never-released``)."""
        return EVIDENCE_SINGLE_USE
