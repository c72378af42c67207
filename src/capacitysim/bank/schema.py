"""SQL schema of the sewer flow credit bank (SQLite): tables, CHECK constraints and guard triggers.

The database itself refuses what the program forbids, so that no code path (nor a hand-typed
``sqlite3`` session that does not drop the triggers) can break the ledger:

* balances are whole gallons per day and ``CHECK (balance_gpd >= 0)``;
* the journal is append-only: UPDATE is refused always; DELETE only inside a purge of rows older than
  the retention period and outside any open dispute (records section: three years, extended during
  an unresolved dispute);
* the journal is hash-chained (each row's SHA-256 covers its content and the previous row's hash),
  so an edit made after dropping the triggers is found by ``verify`` unless the whole chain is
  recomputed consistently; that rewrite is found only against a head hash kept outside the bank
  (``bank head``, ``bank verify --expect-head``; see :mod:`capacitysim.bank.ledger`);
* a journal row that moves credits must carry the subaccount's balance after the move (so a balance
  cannot change without its journal row, in the same transaction);
* entities, basins, subaccounts, projects, notes, transfers and condemnations cannot be deleted;
  transfers, condemnations, extensions, entities and basins cannot be changed; a withdrawal's
  amount and cited references cannot change and its status only moves forward;
* balances and journal amounts must stay INTEGER (SQLite turns an overflowing sum into REAL);
* a deposit's project is unique (a project is deposited once);
* a transfer across basins must cite a Board approval (credit bank section A), every transfer a
  document (section G).

Amounts are INTEGER gallons per day: sums are exact, so the journal sums to the balances exactly.

Schema version 3 (issue 14) adds, in :data:`MIGRATION_3` (run on a new bank right after
:data:`SCHEMA`, and on a version-2 bank by ``capacitysim bank migrate``, one transaction either way):

* ``administrators``: the persons registered as the BANK ADMINISTRATOR (definitions: "review and
  sign off on all approved applications for flow credit creation, bank deposits, withdrawals and
  transfers"); never deleted or changed;
* ``signoffs``: every deposit, withdrawal and transfer is recorded *pending* and takes effect only
  when a registered administrator signs it off (who and when are kept; SQL refuses a sign-off by a
  name that is not registered, and a withdrawal approved without its signed-off row);
* ``lots`` and ``lot_moves``: the provenance of credits (credit bank section D). Each signed-off
  deposit creates a lot (its project, hence the project's jurisdiction and basin); withdrawals,
  transfers and condemnations take credits out of lots and the receiving side gets lots of the same
  origin. A lot's ``gpd`` is, by trigger, always the sum of its moves; a lot of unknown origin
  (``project_id`` NULL) comes only from migrating a version-2 bank whose journal does not show it;
* ``applications``: applications for a new or modified connection or extension that withdraw no
  credits (2,500 gpd or less, or not using the bank): annual report parts C and D list them too;
* ``withdrawals`` gains ``node`` (the connection's model node), ``application_approval`` (the
  connection application program's approval, section H(2)), ``requested_on`` (the withdrawal date),
  ``spdes_as_of`` (date of the cited SPDES check) and ``app_type`` (connection or extension).

Schema version 4 (maker-checker, from the project's security issue) adds, in :data:`MIGRATION_4`
(run on a new bank after :data:`MIGRATION_3`; on a version-3 bank by ``capacitysim bank migrate``, on a
version-2 bank in the same transaction as :data:`MIGRATION_3`):

* ``bindings``: which service user (``capacitysim serve``) acts for which bank entity (program policy
  ``service_user_binding``). Bound and unbound by a registered administrator (SQL refuses any other
  name); never deleted; a binding is only ever closed (``unbound_at``), once;
* indexes on the SHA-256 of the documents withdrawals cite, and triggers refusing a capacity
  demonstration or SPDES check (the same SHA-256) already cited by another withdrawal that still holds
  it (pending, approved, completed or defaulted: program policy ``evidence_single_use``). The ledger
  refuses first, with a message naming the application that cites it; the triggers refuse again.

Schema version 5 (the capacity register, issue 24) adds, in :data:`MIGRATION_5` (run on a new bank after
:data:`MIGRATION_4`; on a version-2, 3 or 4 bank by ``capacitysim bank migrate``, in the same transaction):

* ``system_models``: the model of record of each basin (credit bank section A: "the I/I remediation
  basin that generated them"), its path, SHA-256, the basin's outlet node in it, the plant it drains to
  and the connected applications it contains; versions numbered per basin; never changed or deleted;
* ``withdrawals`` and ``applications`` gain ``average_gpd`` (the connection's average daily flow, when
  recorded), ``connected_on`` (set once, by ``bank connect``) and ``expired_on`` (an approval released
  under program policy ``approval_expiry_years``); ``applications`` gains ``approved_on``;
  ``withdrawals`` gains ``capacity_committed`` and ``spdes_committed``: the commitments each cited
  document included (JSON), fixed once recorded.

Schema version 6 (issue 25: the bank agrees with the program) adds, in :data:`MIGRATION_6` (run on a new
bank after :data:`MIGRATION_5`; on any older bank by ``capacitysim bank migrate``, in the same transaction):

* ``withdrawals`` gains ``applicant`` and ``affected_owner`` (the parties of the flow credit note:
  definitions, FLOW CREDIT NOTE, "an agreement between the Board and the applicant"), set once;
* ``projects`` gains ``property`` (``public`` or ``private``: records section, parts A and B list
  projects "in the municipal users' public sewage collection systems and private property"), and the
  quantification the deposit cites: ``quantification_ref``, ``quantification_sha256``,
  ``quantified_gpd``, ``pe_name``, ``pe_license`` (I/I quantification guidelines: "prepared by a
  professional engineer, licensed in the State of New York");
* ``certification_letters``: the completed certification letter of a project (records section B,
  Appendix A), its path and SHA-256, furnished once, never changed or deleted;
* ``annual_reports``: each municipal user's submission of its records to the bank administrator
  ("on at least an annual basis"), with the date it was due (program policy ``annual_report_due``),
  never changed or deleted.
"""

SCHEMA_VERSION = 6

SCHEMA = r"""
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS entities (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE CHECK (length(trim(name)) > 0),
    municipal  INTEGER NOT NULL CHECK (municipal IN (0, 1)),
    created_at TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS basins (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE CHECK (length(trim(name)) > 0),
    outlet     TEXT,
    created_at TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS subaccounts (
    id          INTEGER PRIMARY KEY,
    basin_id    INTEGER NOT NULL REFERENCES basins(id),
    owner_id    INTEGER NOT NULL REFERENCES entities(id),
    -- typeof: an INTEGER sum that overflows becomes REAL in SQLite; refuse it rather than lose exactness
    balance_gpd INTEGER NOT NULL DEFAULT 0 CHECK (typeof(balance_gpd) = 'integer' AND balance_gpd >= 0),
    opened_at   TEXT NOT NULL,
    UNIQUE (basin_id, owner_id)
);

-- I/I remediation projects: identified (report part A) or certified complete and deposited (part B).
CREATE TABLE IF NOT EXISTS projects (
    id              INTEGER PRIMARY KEY,
    ref             TEXT NOT NULL UNIQUE CHECK (length(trim(ref)) > 0),
    basin_id        INTEGER NOT NULL REFERENCES basins(id),
    jurisdiction_id INTEGER NOT NULL REFERENCES entities(id),
    description     TEXT NOT NULL DEFAULT '',
    priority        INTEGER,
    estimated_gpd   REAL CHECK (estimated_gpd IS NULL OR estimated_gpd >= 0),
    status          TEXT NOT NULL CHECK (status IN ('identified', 'certified')),
    certified_gpd   INTEGER CHECK (certified_gpd IS NULL OR certified_gpd > 0),
    certified_on    TEXT,
    certificate     TEXT,
    created_at      TEXT NOT NULL,
    CHECK (status = 'identified' OR (certified_gpd IS NOT NULL AND certified_on IS NOT NULL))
);

-- Flow credit notes / withdrawals for an application (new or modified sewer connection).
CREATE TABLE IF NOT EXISTS withdrawals (
    id               INTEGER PRIMARY KEY,
    application      TEXT NOT NULL UNIQUE CHECK (length(trim(application)) > 0),
    app_key          TEXT NOT NULL UNIQUE,  -- application casefolded: 'A-1' and 'a-1' are one application
    subaccount_id    INTEGER NOT NULL REFERENCES subaccounts(id),
    principal_id     INTEGER NOT NULL REFERENCES entities(id),
    peak_flow_gpd    REAL NOT NULL CHECK (peak_flow_gpd >= 0),
    offset_ratio     REAL NOT NULL CHECK (offset_ratio > 0),
    amount_gpd       INTEGER NOT NULL CHECK (amount_gpd > 0),
    status           TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'completed', 'returned', 'defaulted')),
    capacity_ref     TEXT,
    capacity_sha256  TEXT,
    spdes_ref        TEXT,
    spdes_sha256     TEXT,
    description      TEXT NOT NULL DEFAULT '',
    requested_at     TEXT NOT NULL,
    note_issued_on   TEXT,
    co_due_on        TEXT,
    co_issued_on     TEXT,
    closed_at        TEXT,
    CHECK (status <> 'approved' OR (capacity_ref IS NOT NULL AND spdes_ref IS NOT NULL AND note_issued_on IS NOT NULL)),
    CHECK (status <> 'completed' OR co_issued_on IS NOT NULL)
);

CREATE TABLE IF NOT EXISTS extensions (
    id            INTEGER PRIMARY KEY,
    withdrawal_id INTEGER NOT NULL REFERENCES withdrawals(id),
    old_due_on    TEXT NOT NULL,
    new_due_on    TEXT NOT NULL CHECK (new_due_on > old_due_on),
    document      TEXT NOT NULL CHECK (length(trim(document)) > 0),
    created_at    TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS transfers (
    id             INTEGER PRIMARY KEY,
    from_id        INTEGER NOT NULL REFERENCES subaccounts(id),
    to_id          INTEGER NOT NULL REFERENCES subaccounts(id),
    amount_gpd     INTEGER NOT NULL CHECK (amount_gpd > 0),
    document       TEXT NOT NULL CHECK (length(trim(document)) > 0),
    board_approval TEXT,
    cross_basin    INTEGER NOT NULL CHECK (cross_basin IN (0, 1)),
    created_at     TEXT NOT NULL,
    CHECK (from_id <> to_id),
    CHECK (cross_basin = 0 OR length(trim(coalesce(board_approval, ''))) > 0)
);

CREATE TABLE IF NOT EXISTS condemnations (
    id          INTEGER PRIMARY KEY,
    from_id     INTEGER NOT NULL REFERENCES subaccounts(id),
    to_id       INTEGER NOT NULL REFERENCES subaccounts(id),
    project_id  INTEGER NOT NULL REFERENCES projects(id),
    amount_gpd  INTEGER NOT NULL CHECK (amount_gpd > 0),
    document    TEXT NOT NULL CHECK (length(trim(document)) > 0),
    created_at  TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS disputes (
    id         INTEGER PRIMARY KEY,
    basin_id   INTEGER NOT NULL REFERENCES basins(id),
    subject    TEXT NOT NULL CHECK (length(trim(subject)) > 0),
    opened_at  TEXT NOT NULL,
    closed_at  TEXT
);

-- A purge in progress: the journal's DELETE trigger only lets rows up to seq_max through while a
-- permit row exists (inserted and removed inside the purge transaction).
CREATE TABLE IF NOT EXISTS purge_permits (
    seq_max    INTEGER NOT NULL,
    cutoff     TEXT NOT NULL
);

-- Hash chain: hash = sha256 of the row's content and prev_hash (see Ledger._log); the first row's
-- prev_hash is meta 'journal_anchor' (64 zeros, or the hash of the last row a purge removed).
CREATE TABLE IF NOT EXISTS journal (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    prev_hash      TEXT NOT NULL,
    hash           TEXT NOT NULL UNIQUE,
    txn            TEXT NOT NULL,
    at             TEXT NOT NULL,
    actor          TEXT NOT NULL CHECK (length(trim(actor)) > 0),
    action         TEXT NOT NULL,
    reason         TEXT NOT NULL DEFAULT '',
    documents      TEXT NOT NULL DEFAULT '[]',
    basin_id       INTEGER REFERENCES basins(id),
    subaccount_id  INTEGER REFERENCES subaccounts(id),
    delta_gpd      INTEGER NOT NULL DEFAULT 0 CHECK (typeof(delta_gpd) = 'integer'),
    balance_after  INTEGER,
    ref            TEXT,
    detail         TEXT NOT NULL DEFAULT '{}',
    CHECK (subaccount_id IS NOT NULL OR delta_gpd = 0)
);
CREATE INDEX IF NOT EXISTS journal_subaccount ON journal(subaccount_id);
CREATE INDEX IF NOT EXISTS journal_at ON journal(at);

-- The journal is append-only.
CREATE TRIGGER IF NOT EXISTS journal_no_update BEFORE UPDATE ON journal
BEGIN
    SELECT RAISE(ABORT, 'the journal is append-only: rows cannot be changed');
END;

CREATE TRIGGER IF NOT EXISTS journal_delete_guard BEFORE DELETE ON journal
WHEN NOT EXISTS (SELECT 1 FROM purge_permits p WHERE old.seq <= p.seq_max AND old.at < p.cutoff)
  OR old.at >= datetime('now', '-3 years')
  OR EXISTS (SELECT 1 FROM disputes d WHERE d.closed_at IS NULL AND d.basin_id = old.basin_id)
BEGIN
    SELECT RAISE(ABORT, 'journal rows younger than three years or under dispute cannot be deleted');
END;

-- A journal row that moves credits states the subaccount's balance after the move.
CREATE TRIGGER IF NOT EXISTS journal_balance_matches BEFORE INSERT ON journal
WHEN new.subaccount_id IS NOT NULL AND (
    new.balance_after IS NULL OR
    new.balance_after <> (SELECT balance_gpd FROM subaccounts WHERE id = new.subaccount_id))
BEGIN
    SELECT RAISE(ABORT, 'journal balance_after does not match the subaccount balance');
END;

-- A subaccount never changes basin or owner; a certified project stays certified with its figure.
CREATE TRIGGER IF NOT EXISTS subaccounts_fixed BEFORE UPDATE OF basin_id, owner_id ON subaccounts
BEGIN SELECT RAISE(ABORT, 'a subaccount cannot change basin or owner'); END;
CREATE TRIGGER IF NOT EXISTS projects_certified_fixed BEFORE UPDATE ON projects
WHEN old.status = 'certified'
BEGIN SELECT RAISE(ABORT, 'a certified project cannot be changed'); END;

-- A withdrawal keeps its amount, subaccount and application; its status only moves forward; a cited
-- capacity or SPDES reference (and its SHA-256) cannot be replaced once recorded.
CREATE TRIGGER IF NOT EXISTS withdrawals_forward_only BEFORE UPDATE ON withdrawals
WHEN new.application IS NOT old.application OR new.app_key IS NOT old.app_key OR new.subaccount_id IS NOT old.subaccount_id
  OR new.principal_id IS NOT old.principal_id OR new.peak_flow_gpd IS NOT old.peak_flow_gpd
  OR new.offset_ratio IS NOT old.offset_ratio OR new.amount_gpd IS NOT old.amount_gpd
  OR new.requested_at IS NOT old.requested_at
  OR (old.capacity_ref IS NOT NULL AND (new.capacity_ref IS NOT old.capacity_ref OR new.capacity_sha256 IS NOT old.capacity_sha256))
  OR (old.spdes_ref IS NOT NULL AND (new.spdes_ref IS NOT old.spdes_ref OR new.spdes_sha256 IS NOT old.spdes_sha256))
  OR old.status IN ('completed', 'returned', 'defaulted')
  OR (old.status = 'pending' AND new.status NOT IN ('pending', 'approved', 'returned'))
  OR (old.status = 'approved' AND new.status NOT IN ('approved', 'completed', 'returned', 'defaulted'))
BEGIN SELECT RAISE(ABORT, 'a withdrawal keeps its amount and references and its status only moves forward'); END;

-- A dispute is only ever closed, once.
CREATE TRIGGER IF NOT EXISTS disputes_close_only BEFORE UPDATE ON disputes
WHEN new.basin_id IS NOT old.basin_id OR new.subject IS NOT old.subject OR new.opened_at IS NOT old.opened_at
  OR old.closed_at IS NOT NULL OR new.closed_at IS NULL
BEGIN SELECT RAISE(ABORT, 'a dispute can only be closed, once'); END;
"""

#: Records of the program with no delete path (records section), and those that never change either.
NO_DELETE = ("entities", "basins", "subaccounts", "projects", "withdrawals", "transfers", "condemnations",
             "extensions", "disputes")
NO_UPDATE = ("transfers", "condemnations", "extensions", "entities", "basins")


def _guards(no_delete, no_update) -> str:
    return "".join(
        f"CREATE TRIGGER IF NOT EXISTS {t}_no_delete BEFORE DELETE ON {t}\n"
        f"BEGIN SELECT RAISE(ABORT, 'records of the program cannot be deleted'); END;\n"
        for t in no_delete
    ) + "".join(
        f"CREATE TRIGGER IF NOT EXISTS {t}_no_update BEFORE UPDATE ON {t}\n"
        f"BEGIN SELECT RAISE(ABORT, '{t} cannot be changed'); END;\n"
        for t in no_update
    )


#: The version-2 schema (tables, checks and triggers); a new bank gets it and then :data:`MIGRATION_3`.
SCHEMA += _guards(NO_DELETE, NO_UPDATE)

#: Tables added by schema version 3: never deleted; administrators and lot moves never changed either.
NO_DELETE_3 = ("administrators", "signoffs", "lots", "lot_moves", "applications")
NO_UPDATE_3 = ("administrators", "lot_moves")

#: Version 2 -> 3 (issue 14): administrators, sign-off, lots (provenance), applications without credits.
#: DDL only; :meth:`capacitysim.bank.Ledger.migrate` runs it and fills the new tables from the journal,
#: in the same transaction. ``withdrawals_forward_only`` is replaced (the migration fills
#: ``requested_on`` and ``node`` of existing rows between the DROP and the CREATE).
MIGRATION_3 = r"""
ALTER TABLE withdrawals ADD COLUMN node TEXT;
ALTER TABLE withdrawals ADD COLUMN application_approval TEXT;
ALTER TABLE withdrawals ADD COLUMN requested_on TEXT;
ALTER TABLE withdrawals ADD COLUMN spdes_as_of TEXT;
ALTER TABLE withdrawals ADD COLUMN app_type TEXT CHECK (app_type IS NULL OR app_type IN ('connection', 'extension'));
DROP TRIGGER IF EXISTS withdrawals_forward_only;

-- Persons registered as the bank administrator (definitions: BANK ADMINISTRATOR).
CREATE TABLE IF NOT EXISTS administrators (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE CHECK (length(trim(name)) >= 2),
    name_key      TEXT NOT NULL UNIQUE,   -- casefolded: 'Ada Lee' and 'ada lee' are one person
    document      TEXT,                   -- the Board's designation, when cited
    registered_at TEXT NOT NULL,
    registered_by TEXT NOT NULL
);

-- Deposits, withdrawals and transfers: recorded pending, effective once a registered administrator signs off.
CREATE TABLE IF NOT EXISTS signoffs (
    id            INTEGER PRIMARY KEY,
    txn           TEXT NOT NULL UNIQUE,   -- the journal txn of the transaction that recorded it
    kind          TEXT NOT NULL CHECK (kind IN ('deposit', 'withdrawal', 'transfer')),
    ref           TEXT NOT NULL,          -- project, application, transfer-N
    subaccount_id INTEGER NOT NULL REFERENCES subaccounts(id),  -- receiving (deposit, transfer) or paying (withdrawal)
    amount_gpd    INTEGER NOT NULL CHECK (typeof(amount_gpd) = 'integer' AND amount_gpd > 0),
    detail        TEXT NOT NULL DEFAULT '{}',
    status        TEXT NOT NULL CHECK (status IN ('pending', 'signed-off', 'rejected', 'cancelled')),
    recorded_at   TEXT NOT NULL,
    recorded_by   TEXT NOT NULL,
    decided_at    TEXT,
    decided_on    TEXT,
    decided_by    TEXT,
    decision      TEXT NOT NULL DEFAULT '',
    CHECK (status = 'pending' OR (decided_at IS NOT NULL AND decided_by IS NOT NULL))
);
CREATE UNIQUE INDEX IF NOT EXISTS signoffs_one_open ON signoffs(kind, ref) WHERE status IN ('pending', 'signed-off');

-- Provenance: credits by originating project (NULL: unknown origin, only from a migrated version-2 bank).
CREATE TABLE IF NOT EXISTS lots (
    id            INTEGER PRIMARY KEY,
    subaccount_id INTEGER NOT NULL REFERENCES subaccounts(id),
    project_id    INTEGER REFERENCES projects(id),
    deposited_on  TEXT,                   -- certification date of the originating deposit (allocation order)
    source_lot_id INTEGER REFERENCES lots(id),
    gpd           INTEGER NOT NULL DEFAULT 0 CHECK (typeof(gpd) = 'integer' AND gpd >= 0),
    note          TEXT NOT NULL DEFAULT '',
    created_at    TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS lots_subaccount ON lots(subaccount_id);
CREATE TABLE IF NOT EXISTS lot_moves (
    id        INTEGER PRIMARY KEY,
    lot_id    INTEGER NOT NULL REFERENCES lots(id),
    delta_gpd INTEGER NOT NULL CHECK (typeof(delta_gpd) = 'integer' AND delta_gpd <> 0),
    action    TEXT NOT NULL,
    ref       TEXT NOT NULL,
    txn       TEXT NOT NULL,
    at        TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS lot_moves_lot ON lot_moves(lot_id);
CREATE INDEX IF NOT EXISTS lot_moves_ref ON lot_moves(ref, action);

-- Applications that withdraw no credits (report parts C and D list every application and connection).
CREATE TABLE IF NOT EXISTS applications (
    id                   INTEGER PRIMARY KEY,
    application          TEXT NOT NULL UNIQUE CHECK (length(trim(application)) > 0),
    app_key              TEXT NOT NULL UNIQUE,
    app_type             TEXT NOT NULL CHECK (app_type IN ('connection', 'extension')),
    principal_id         INTEGER NOT NULL REFERENCES entities(id),
    basin_id             INTEGER REFERENCES basins(id),
    node                 TEXT,
    peak_flow_gpd        REAL NOT NULL CHECK (peak_flow_gpd >= 0),
    description          TEXT NOT NULL DEFAULT '',
    received_on          TEXT NOT NULL,
    application_approval TEXT,
    status               TEXT NOT NULL CHECK (status IN ('received', 'approved', 'completed', 'returned')),
    completed_on         TEXT,
    closed_at            TEXT,
    created_at           TEXT NOT NULL,
    CHECK (status NOT IN ('approved', 'completed') OR application_approval IS NOT NULL),
    CHECK (status <> 'completed' OR completed_on IS NOT NULL)
);

-- An application id is one application, with or without credits.
CREATE TRIGGER IF NOT EXISTS applications_unique_across BEFORE INSERT ON applications
WHEN EXISTS (SELECT 1 FROM withdrawals w WHERE w.app_key = new.app_key)
BEGIN SELECT RAISE(ABORT, 'the application already has a withdrawal'); END;
CREATE TRIGGER IF NOT EXISTS withdrawals_unique_across BEFORE INSERT ON withdrawals
WHEN EXISTS (SELECT 1 FROM applications a WHERE a.app_key = new.app_key)
BEGIN SELECT RAISE(ABORT, 'the application is already recorded without credits'); END;

-- A withdrawal keeps its amount, subaccount, application, node, date and type; its status only moves
-- forward; a cited reference (and its SHA-256) or approval cannot be replaced once recorded; it is
-- approved only with its three references and its signed-off row (section H, BANK ADMINISTRATOR).
CREATE TRIGGER IF NOT EXISTS withdrawals_forward_only BEFORE UPDATE ON withdrawals
WHEN new.application IS NOT old.application OR new.app_key IS NOT old.app_key OR new.subaccount_id IS NOT old.subaccount_id
  OR new.principal_id IS NOT old.principal_id OR new.peak_flow_gpd IS NOT old.peak_flow_gpd
  OR new.offset_ratio IS NOT old.offset_ratio OR new.amount_gpd IS NOT old.amount_gpd
  OR new.requested_at IS NOT old.requested_at OR new.requested_on IS NOT old.requested_on
  OR new.app_type IS NOT old.app_type
  OR (old.node IS NOT NULL AND new.node IS NOT old.node)
  OR (old.application_approval IS NOT NULL AND new.application_approval IS NOT old.application_approval)
  OR (old.capacity_ref IS NOT NULL AND (new.capacity_ref IS NOT old.capacity_ref OR new.capacity_sha256 IS NOT old.capacity_sha256))
  OR (old.spdes_ref IS NOT NULL AND (new.spdes_ref IS NOT old.spdes_ref OR new.spdes_sha256 IS NOT old.spdes_sha256
                                     OR new.spdes_as_of IS NOT old.spdes_as_of))
  OR old.status IN ('completed', 'returned', 'defaulted')
  OR (old.status = 'pending' AND new.status NOT IN ('pending', 'approved', 'returned'))
  OR (old.status = 'approved' AND new.status NOT IN ('approved', 'completed', 'returned', 'defaulted'))
  OR (old.status = 'pending' AND new.status = 'approved' AND (
        new.application_approval IS NULL OR new.capacity_ref IS NULL OR new.spdes_ref IS NULL
        OR NOT EXISTS (SELECT 1 FROM signoffs s WHERE s.kind = 'withdrawal' AND s.ref = new.application
                       AND s.status = 'signed-off')))
BEGIN SELECT RAISE(ABORT, 'a withdrawal keeps its amount and references, its status only moves forward, and it is approved only when signed off with its capacity, SPDES and application approval references'); END;

-- A sign-off record moves once, from pending; only a registered administrator signs off.
CREATE TRIGGER IF NOT EXISTS signoffs_forward_only BEFORE UPDATE ON signoffs
WHEN new.txn IS NOT old.txn OR new.kind IS NOT old.kind OR new.ref IS NOT old.ref
  OR new.subaccount_id IS NOT old.subaccount_id OR new.amount_gpd IS NOT old.amount_gpd OR new.detail IS NOT old.detail
  OR new.recorded_at IS NOT old.recorded_at OR new.recorded_by IS NOT old.recorded_by
  OR old.status <> 'pending' OR new.status = 'pending'
BEGIN SELECT RAISE(ABORT, 'a sign-off record is decided once, from pending'); END;
CREATE TRIGGER IF NOT EXISTS signoffs_by_administrator BEFORE UPDATE ON signoffs
WHEN new.status IN ('signed-off', 'rejected')
  AND NOT EXISTS (SELECT 1 FROM administrators a WHERE a.name = new.decided_by)
BEGIN SELECT RAISE(ABORT, 'only a registered bank administrator signs off or rejects'); END;

-- A lot keeps its origin and starts empty; its gpd is always the sum of its moves.
CREATE TRIGGER IF NOT EXISTS lots_start_empty BEFORE INSERT ON lots
WHEN new.gpd <> 0
BEGIN SELECT RAISE(ABORT, 'a lot starts at 0 gpd; credits enter it by a lot move'); END;
CREATE TRIGGER IF NOT EXISTS lots_fixed BEFORE UPDATE ON lots
WHEN new.subaccount_id IS NOT old.subaccount_id OR new.project_id IS NOT old.project_id
  OR new.deposited_on IS NOT old.deposited_on OR new.source_lot_id IS NOT old.source_lot_id
  OR new.note IS NOT old.note OR new.created_at IS NOT old.created_at
  OR new.gpd IS NOT (SELECT coalesce(sum(m.delta_gpd), 0) FROM lot_moves m WHERE m.lot_id = new.id)
BEGIN SELECT RAISE(ABORT, 'a lot keeps its origin and its gpd is the sum of its moves'); END;

-- An application without credits keeps its identity; its status only moves forward.
CREATE TRIGGER IF NOT EXISTS applications_forward_only BEFORE UPDATE ON applications
WHEN new.application IS NOT old.application OR new.app_key IS NOT old.app_key OR new.app_type IS NOT old.app_type
  OR new.principal_id IS NOT old.principal_id OR new.basin_id IS NOT old.basin_id OR new.node IS NOT old.node
  OR new.peak_flow_gpd IS NOT old.peak_flow_gpd OR new.received_on IS NOT old.received_on
  OR new.created_at IS NOT old.created_at
  OR (old.application_approval IS NOT NULL AND new.application_approval IS NOT old.application_approval)
  OR old.status IN ('completed', 'returned')
  OR (old.status = 'received' AND new.status NOT IN ('received', 'approved', 'returned'))
  OR (old.status = 'approved' AND new.status NOT IN ('approved', 'completed', 'returned'))
BEGIN SELECT RAISE(ABORT, 'an application keeps its identity and its status only moves forward'); END;
""" + _guards(NO_DELETE_3, NO_UPDATE_3)

#: Tables added by schema version 4: never deleted.
NO_DELETE_4 = ("bindings",)

#: Version 3 -> 4 (maker-checker): service users bound to bank entities, single use of cited evidence.
#: DDL only, additive; :meth:`capacitysim.bank.Ledger._migrate` runs it in one transaction with its
#: ``migrate`` journal row.
MIGRATION_4 = r"""
-- Service users (capacitysim serve) bound to the bank entities they act for (program policy service_user_binding).
CREATE TABLE IF NOT EXISTS bindings (
    id          INTEGER PRIMARY KEY,
    user_name   TEXT NOT NULL CHECK (length(trim(user_name)) >= 2),
    user_key    TEXT NOT NULL,            -- casefolded: 'Mia Lee' and 'mia lee' are one service user
    role        TEXT CHECK (role IS NULL OR role IN ('engineer', 'municipal')),
    entity_id   INTEGER NOT NULL REFERENCES entities(id),
    document    TEXT,                     -- the entity's letter naming the user, when cited
    bound_at    TEXT NOT NULL,
    bound_by    TEXT NOT NULL,
    unbound_at  TEXT,
    unbound_by  TEXT,
    CHECK ((unbound_at IS NULL) = (unbound_by IS NULL))
);
CREATE UNIQUE INDEX IF NOT EXISTS bindings_one_open ON bindings(user_key, entity_id) WHERE unbound_at IS NULL;
CREATE INDEX IF NOT EXISTS bindings_user ON bindings(user_key);

-- Only a registered administrator binds or unbinds; a binding is only ever closed, once.
CREATE TRIGGER IF NOT EXISTS bindings_by_administrator BEFORE INSERT ON bindings
WHEN NOT EXISTS (SELECT 1 FROM administrators a WHERE a.name = new.bound_by)
BEGIN SELECT RAISE(ABORT, 'only a registered bank administrator binds a service user to an entity'); END;
CREATE TRIGGER IF NOT EXISTS bindings_close_only BEFORE UPDATE ON bindings
WHEN new.id IS NOT old.id OR new.user_name IS NOT old.user_name OR new.user_key IS NOT old.user_key
  OR new.role IS NOT old.role OR new.entity_id IS NOT old.entity_id OR new.document IS NOT old.document
  OR new.bound_at IS NOT old.bound_at OR new.bound_by IS NOT old.bound_by
  OR old.unbound_at IS NOT NULL OR new.unbound_at IS NULL
  OR NOT EXISTS (SELECT 1 FROM administrators a WHERE a.name = new.unbound_by)
BEGIN SELECT RAISE(ABORT, 'a binding is only closed, once, by a registered bank administrator'); END;

-- A capacity demonstration or SPDES check (its SHA-256) is the evidence of one application
-- (program policy evidence_single_use): not while another withdrawal citing it still holds it.
CREATE INDEX IF NOT EXISTS withdrawals_capacity_sha256 ON withdrawals(capacity_sha256);
CREATE INDEX IF NOT EXISTS withdrawals_spdes_sha256 ON withdrawals(spdes_sha256);
CREATE TRIGGER IF NOT EXISTS withdrawals_evidence_once BEFORE INSERT ON withdrawals
WHEN EXISTS (SELECT 1 FROM withdrawals w WHERE w.status IN ('pending', 'approved', 'completed', 'defaulted')
             AND ((new.capacity_sha256 IS NOT NULL AND w.capacity_sha256 = new.capacity_sha256)
               OR (new.spdes_sha256 IS NOT NULL AND w.spdes_sha256 = new.spdes_sha256)))
BEGIN SELECT RAISE(ABORT, 'the cited document is already the evidence of another application'); END;
CREATE TRIGGER IF NOT EXISTS withdrawals_evidence_once_attach BEFORE UPDATE OF capacity_sha256, spdes_sha256 ON withdrawals
WHEN EXISTS (SELECT 1 FROM withdrawals w WHERE w.id <> new.id
             AND w.status IN ('pending', 'approved', 'completed', 'defaulted')
             AND ((new.capacity_sha256 IS NOT NULL AND old.capacity_sha256 IS NULL AND w.capacity_sha256 = new.capacity_sha256)
               OR (new.spdes_sha256 IS NOT NULL AND old.spdes_sha256 IS NULL AND w.spdes_sha256 = new.spdes_sha256)))
BEGIN SELECT RAISE(ABORT, 'the cited document is already the evidence of another application'); END;
""" + _guards(NO_DELETE_4, ())

#: Tables added by schema version 5: never deleted, never changed.
NO_DELETE_5 = ("system_models",)
NO_UPDATE_5 = ("system_models",)

#: Version 4 -> 5 (issue 24, the capacity register): the registered system model of each basin, committed
#: flows (average, connection date, expiry) and the commitments each cited document included. DDL only,
#: additive; :meth:`capacitysim.bank.Ledger._migrate` runs it in one transaction with its ``migrate`` row.
MIGRATION_5 = r"""
CREATE TABLE IF NOT EXISTS system_models (
    id            INTEGER PRIMARY KEY,
    basin_id      INTEGER NOT NULL REFERENCES basins(id),
    version       INTEGER NOT NULL CHECK (version >= 1),
    path          TEXT NOT NULL CHECK (length(path) > 0),
    sha256        TEXT NOT NULL CHECK (length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*'),
    outlet        TEXT NOT NULL CHECK (length(trim(outlet)) > 0),
    plant         TEXT,                       -- the SPDES permit number or plant name it drains to
    nodes         INTEGER NOT NULL CHECK (nodes >= 0),
    includes      TEXT NOT NULL DEFAULT '[]', -- JSON list: connected applications the model contains
    registered_on TEXT NOT NULL,
    registered_at TEXT NOT NULL,
    registered_by TEXT NOT NULL,
    UNIQUE (basin_id, version)
);
CREATE INDEX IF NOT EXISTS system_models_sha256 ON system_models(sha256);

ALTER TABLE withdrawals ADD COLUMN average_gpd REAL CHECK (average_gpd IS NULL OR average_gpd > 0);
ALTER TABLE withdrawals ADD COLUMN connected_on TEXT;
ALTER TABLE withdrawals ADD COLUMN expired_on TEXT;
ALTER TABLE withdrawals ADD COLUMN capacity_committed TEXT;
ALTER TABLE withdrawals ADD COLUMN spdes_committed TEXT;
ALTER TABLE applications ADD COLUMN average_gpd REAL CHECK (average_gpd IS NULL OR average_gpd > 0);
ALTER TABLE applications ADD COLUMN connected_on TEXT;
ALTER TABLE applications ADD COLUMN expired_on TEXT;
ALTER TABLE applications ADD COLUMN approved_on TEXT;

-- The average, the connection date, the expiry and the commitments a cited document included are set once.
CREATE TRIGGER IF NOT EXISTS withdrawals_commitment_once BEFORE UPDATE ON withdrawals
WHEN new.average_gpd IS NOT old.average_gpd
  OR (old.connected_on IS NOT NULL AND new.connected_on IS NOT old.connected_on)
  OR (old.expired_on IS NOT NULL AND new.expired_on IS NOT old.expired_on)
  OR (old.capacity_committed IS NOT NULL AND new.capacity_committed IS NOT old.capacity_committed)
  OR (old.spdes_committed IS NOT NULL AND new.spdes_committed IS NOT old.spdes_committed)
  OR (new.connected_on IS NOT NULL AND new.status NOT IN ('approved', 'completed', 'defaulted'))
BEGIN SELECT RAISE(ABORT, 'a withdrawal keeps its average flow, connection date, expiry and the commitments its evidence included'); END;
CREATE TRIGGER IF NOT EXISTS applications_commitment_once BEFORE UPDATE ON applications
WHEN new.average_gpd IS NOT old.average_gpd
  OR (old.connected_on IS NOT NULL AND new.connected_on IS NOT old.connected_on)
  OR (old.expired_on IS NOT NULL AND new.expired_on IS NOT old.expired_on)
  OR (old.approved_on IS NOT NULL AND new.approved_on IS NOT old.approved_on)
BEGIN SELECT RAISE(ABORT, 'an application keeps its average flow, approval and connection dates and expiry'); END;
""" + _guards(NO_DELETE_5, NO_UPDATE_5)

#: Tables added by schema version 6: never deleted or changed.
NO_DELETE_6 = ("certification_letters", "annual_reports")
NO_UPDATE_6 = ("certification_letters", "annual_reports")

#: Version 5 -> 6 (issue 25): the parties of a note, public or private property, the PE's quantification,
#: certification letters, annual report submissions.
MIGRATION_6 = r"""
ALTER TABLE withdrawals ADD COLUMN applicant TEXT;
ALTER TABLE withdrawals ADD COLUMN affected_owner TEXT;
ALTER TABLE projects ADD COLUMN property TEXT CHECK (property IS NULL OR property IN ('public', 'private'));
ALTER TABLE projects ADD COLUMN quantification_ref TEXT;
ALTER TABLE projects ADD COLUMN quantification_sha256 TEXT
    CHECK (quantification_sha256 IS NULL OR (length(quantification_sha256) = 64 AND quantification_sha256 NOT GLOB '*[^0-9a-f]*'));
ALTER TABLE projects ADD COLUMN quantified_gpd REAL CHECK (quantified_gpd IS NULL OR quantified_gpd > 0);
ALTER TABLE projects ADD COLUMN pe_name TEXT;
ALTER TABLE projects ADD COLUMN pe_license TEXT;

CREATE TABLE IF NOT EXISTS certification_letters (
    id          INTEGER PRIMARY KEY,
    project_id  INTEGER NOT NULL UNIQUE REFERENCES projects(id),
    ref         TEXT NOT NULL CHECK (length(trim(ref)) > 0),
    sha256      TEXT NOT NULL CHECK (length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*'),
    letter_on   TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    recorded_by TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS annual_reports (
    id           INTEGER PRIMARY KEY,
    entity_id    INTEGER NOT NULL REFERENCES entities(id),
    period       INTEGER NOT NULL CHECK (period BETWEEN 2013 AND 9999),
    due_on       TEXT NOT NULL,
    submitted_on TEXT NOT NULL,
    document     TEXT,
    sha256       TEXT CHECK (sha256 IS NULL OR (length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*')),
    recorded_at  TEXT NOT NULL,
    recorded_by  TEXT NOT NULL,
    UNIQUE (entity_id, period)
);

-- The parties of a withdrawal are set once; a project's property and quantification once recorded stay.
CREATE TRIGGER IF NOT EXISTS withdrawals_parties_once BEFORE UPDATE ON withdrawals
WHEN new.applicant IS NOT old.applicant OR new.affected_owner IS NOT old.affected_owner
BEGIN SELECT RAISE(ABORT, 'a withdrawal keeps its applicant and affected owner'); END;
CREATE TRIGGER IF NOT EXISTS projects_quantification_once BEFORE UPDATE ON projects
WHEN (old.property IS NOT NULL AND new.property IS NOT old.property)
  OR (old.quantification_sha256 IS NOT NULL AND (new.quantification_sha256 IS NOT old.quantification_sha256
      OR new.quantification_ref IS NOT old.quantification_ref OR new.quantified_gpd IS NOT old.quantified_gpd
      OR new.pe_name IS NOT old.pe_name OR new.pe_license IS NOT old.pe_license))
BEGIN SELECT RAISE(ABORT, 'a project keeps its property and the quantification its deposit cited'); END;
""" + _guards(NO_DELETE_6, NO_UPDATE_6)
