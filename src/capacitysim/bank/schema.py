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
"""

SCHEMA_VERSION = 2

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

SCHEMA += "".join(
    f"CREATE TRIGGER IF NOT EXISTS {t}_no_delete BEFORE DELETE ON {t}\n"
    f"BEGIN SELECT RAISE(ABORT, 'records of the program cannot be deleted'); END;\n"
    for t in NO_DELETE
) + "".join(
    f"CREATE TRIGGER IF NOT EXISTS {t}_no_update BEFORE UPDATE ON {t}\n"
    f"BEGIN SELECT RAISE(ABORT, '{t} cannot be changed'); END;\n"
    for t in NO_UPDATE
)
