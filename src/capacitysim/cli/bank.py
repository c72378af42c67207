"""CLI of the sewer flow credit bank (``capacitysim bank``); I/I quantification is :mod:`capacitysim.cli.credits`.

Refusals by the program's rules exit 3 with one line; bad input exits 2 (see
:mod:`capacitysim.cli`). A file the bank writes (``journal --csv``, ``report --out``) is refused when it
would replace the bank file (or its ``-wal``/``-shm``/``-journal``), is a symbolic link or a folder.

Every command that writes needs the person acting (``--actor "Given Family"``, on the group or the
command, or ``$CAPACITYSIM_ACTOR``); the login name is never used. Deposits, withdrawals and transfers
are recorded pending and take effect at ``sign-off TXN`` by a registered bank administrator who did not
record them (program policy ``signoff_separation``); a cited capacity demonstration or SPDES check is the
evidence of one application (``evidence_single_use``); ``bind-user`` binds the service's users to the
entities they act for (``service_user_binding``). Where the
program is silent, outputs name the program policy applied and print it as a program interpretation
to confirm with the bank administrator; the help texts call such choices "program policy", never the
rule.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

import click

from capacitysim.bank import DEFAULT_DB, Ledger
from capacitysim.bank.ledger import BankBusyError
from capacitysim.cli import cli
from capacitysim.cli.common import check_output, emit_json, emit_table, json_option
from capacitysim.errors import CapacitysimError, InputError
from capacitysim.rules import credit_bank, ii_offset
from capacitysim.workflows.note import note_stem

# --- bank ------------------------------------------------------------------------------------------

reason_option = click.option("--reason", default="", help="Why (recorded in the journal).")
documents_option = click.option("--document", "documents", multiple=True, help="A document cited (repeatable).")

#: Help of ``--actor`` (the group's and every writing command's).
ACTOR_HELP = ("The person acting, by given and family name (letters, spaces, hyphens, apostrophes, periods; 2-100 "
              "characters), recorded on every journal row; required by commands that write (default "
              "$CAPACITYSIM_ACTOR; the login name is never used).")


#: ``--late-reason``: a bank administrator records an entry dated before the day of the journal's last row
#: (program policy no_backdating); the journal keeps both dates and the reason.
late_option = click.option(
    "--late-reason", "late_reason", default=None, metavar="TEXT",
    help="A late entry (dated before today): why it is recorded after its day. Required, and for a bank "
         "administrator only, when the date is before the journal's last row (program policy no_backdating); "
         "the journal keeps both dates.")


def _set_actor(ctx, _param, value):
    if value is not None:
        ctx.ensure_object(dict)
        ctx.find_root().meta["capacitysim.bank.actor"] = value
    return value


#: ``--actor`` on a writing command (overrides ``bank --actor``): ``bank sign-off TXN --actor "Ada Lee"``.
actor_option = click.option("--actor", "actor_here", default=None, expose_value=False, callback=_set_actor,
                            is_eager=True, help=ACTOR_HELP)


def _ledger(ctx, create: bool = False, **kw) -> Ledger:
    actor = ctx.find_root().meta.get("capacitysim.bank.actor") or ctx.obj["actor"]
    return Ledger(ctx.obj["db"], actor=actor, create=create, **kw)


def _cell(v) -> str:
    if v is None:
        return ""
    if isinstance(v, dict):
        return ", ".join(f"{k}={_cell(x)}" for k, x in v.items() if x not in (None, "", [], {}))
    if isinstance(v, list):
        return "; ".join(_cell(x) for x in v)
    return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)


def _policy_rows(pols) -> list[tuple[str, str]]:
    """A program policy as table rows: its name and value, then its text (which says it is a program
    interpretation to confirm with the bank administrator)."""
    return [(f"program policy {p['name']}", f"{_cell(p['value'])}: {p['text']}") for p in pols or ()]


def _rows(obj: dict) -> list[tuple[str, str]]:
    rows = []
    for k, v in obj.items():
        if k == "policies":
            continue
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            rows += [(f"{k} {i + 1}", _cell(x)) for i, x in enumerate(v)]
        else:
            rows.append((k, _cell(v)))
    return rows + _policy_rows(obj.get("policies"))


def _emit(obj, as_json: bool, rows=None, title=None):
    if as_json:
        emit_json(obj)
    else:
        emit_table(rows if rows is not None else _rows(obj), title)


#: Files SQLite keeps next to the bank file: never an output.
_SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


def _bank_files(ctx) -> list[str]:
    db = str(ctx.obj["db"])
    return [db, *(db + side for side in _SQLITE_SIDE_FILES)]


def _check_bank_output(ctx, path, option: str, cited=()):
    """Refuse an output that would replace the bank file or its side files, a report file a withdrawal cites,
    a symlink or a folder (exit 2)."""
    inputs = [*_bank_files(ctx), *cited]
    check_output(path, inputs, option=option)
    p = Path(path)
    for inp in inputs:
        try:
            same = p.exists() and os.path.samefile(p, inp)
        except OSError:
            same = False
        if same:  # a hard link to the bank
            raise InputError(f"{option} {p}: is the input {inp} (a hard link to it); it would be overwritten")
    return path


class BankGroup(click.Group):
    """Turns an SQLite error escaping a read into one line: locked (exit 1), damaged or not a bank (exit 2);
    and a value of the wrong type read from a bank edited outside capacitysim into one line, exit 2."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except CapacitysimError:
            raise
        except Exception as exc:
            raise self._one_line(ctx, exc) from None

    @staticmethod
    def _one_line(ctx, exc: Exception) -> Exception:
        """The one-line capacitysim error for ``exc``; anything else is returned as is (a bug keeps its traceback)."""
        db = ctx.obj["db"] if ctx.obj else DEFAULT_DB
        if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
            return InputError(f"credit bank {db} is damaged or not a credit bank (SQLite says: {exc})")
        if isinstance(exc, sqlite3.Error):  # locked, busy, or a table changed under us
            return BankBusyError(f"credit bank {db}: {exc}")
        if isinstance(exc, (TypeError, ValueError, KeyError, IndexError)):
            text = str(exc).splitlines()[0][:200] if str(exc) else ""
            return InputError(f"credit bank {db} holds a value capacitysim never writes ({type(exc).__name__}: {text}); "
                              f"it was edited outside capacitysim: run `capacitysim bank --db {db} verify`")
        return exc


@cli.group(cls=BankGroup)
@click.option("--db", default=DEFAULT_DB, show_default=True, type=click.Path(dir_okay=False), help="The bank file.")
@click.option("--actor", default=None, help=ACTOR_HELP)
@click.pass_context
def bank(ctx, db, actor):
    """The sewer flow credit bank (Binghamton-Johnson City I/I offset program), one SQLite file.

    \b
    Sign-off: deposits, withdrawals and transfers are recorded pending and take effect when a
    registered bank administrator other than the person who recorded them runs `sign-off TXN`
    (`pending` lists them; program policy signoff_separation). A withdrawal is signed off only with
    its capacity demonstration and SPDES check (section H(1), the JSON documents, each the evidence
    of one application only: program policy evidence_single_use) and its connection application
    approval (section H(2)).

    \b
    Capacity register: the administrator registers each basin's model of record (`add-basin --model`,
    `register-model`); a connection node must drain to the basin's outlet on its graph (section A);
    flows reserved, approved or connected and not yet in the model are commitments (`commitments`,
    `connect`, `expire`), and evidence must run the registered model and include every commitment of
    its scope (`capacity --committed BANK`, `spdes check --committed BANK`), at the withdrawal and
    again at the sign-off. `register` shows what each plant and each registered model can still take
    with every commitment in place, and how fresh each figure is.

    \b
    Tamper evidence: the journal is hash-chained. `verify` finds rows edited, removed or inserted
    without recomputing the chain, values of the wrong type and records out of step with the journal;
    it cannot, by itself, detect a consistent rewrite of the whole chain by someone with write access
    to the file. Keep the head (`bank head`, also printed in the annual report) outside the bank and
    check it later with `bank verify --expect-head HASH`.
    """
    ctx.obj = {"db": db, "actor": actor}


@bank.command()
@click.option("--administrator", default=None, metavar="NAME",
              help="The first bank administrator (a person's name), required when the bank is created.")
@actor_option
@json_option
@click.pass_context
def init(ctx, administrator, as_json):
    """Create the bank file with its first bank administrator (idempotent)."""
    with _ledger(ctx, create=True, administrator=administrator) as led:
        out = {"db": str(led.path), "administrators": [a["name"] for a in led.administrators()],
               "verify": led.verify()["ok"]}
    _emit(out, as_json, title="credit bank ready")


@bank.command()
@click.option("--administrator", default=None, metavar="NAME",
              help="A schema-2 bank only: the first bank administrator registered in the migrated bank (a person's "
                   "name). A schema-3, 4 or 5 bank is migrated by a registered administrator (--actor).")
@actor_option
@json_option
@click.pass_context
def migrate(ctx, administrator, as_json):
    """Migrate a schema-2, 3, 4 or 5 bank to the current schema (6), in one transaction.

    \b
    Schema 2 -> 3 (sign-off, credit lots): existing balances become lots of the projects their
    deposits record, by replaying the journal with the allocation policy (program policy, see `bank
    policies`); credits whose project the journal does not show (purged history) become lots of
    unknown origin, which condemnation refuses to take. A pending withdrawal now needs its H(2)
    approval and the sign-off.

    \b
    Schema 3 -> 4 (by a registered administrator): service users bound to bank entities
    (`bind-user`) and the single use of cited evidence (program policies service_user_binding and
    evidence_single_use).

    \b
    Schema 4 -> 5 (by a registered administrator): registered models of record and committed flows
    (the capacity register). Basins have no registered model until `register-model` names one.

    \b
    Schema 5 -> 6 (by a registered administrator): the parties of a flow credit note, public or private
    property, the PE's quantification a deposit cites, certification letters and the municipal users'
    annual records. Deposits made before cite no quantification: annual report part B flags them.
    """
    from capacitysim.bank.schema import SCHEMA_VERSION

    with _ledger(ctx, migrate=True, administrator=administrator) as led:
        lots = led.lots()
        out = {"db": str(led.path), "schema_version": SCHEMA_VERSION,
               "administrators": [a["name"] for a in led.administrators()],
               "lots": len(lots), "unknown_origin_gpd": sum(x["gpd"] for x in lots if x["origin"] == "unknown"),
               "pending_sign_off": len(led.pending()), "verify": led.verify()["ok"],
               "policies": _policies("allocation_policy", "service_user_binding", "evidence_single_use")}
    _emit(out, as_json, title=f"credit bank migrated to schema {SCHEMA_VERSION}")


@bank.command("add-administrator")
@click.argument("name")
@click.option("--document", default=None, help="The Board's designation of the administrator.")
@reason_option
@actor_option
@json_option
@click.pass_context
def add_administrator(ctx, name, document, reason, as_json):
    """Register a person as bank administrator (only a registered administrator may; program policy)."""
    with _ledger(ctx) as led:
        out = led.add_administrator(name, document=document, reason=reason)
    _emit(out, as_json, title="bank administrator registered")


@bank.command()
@json_option
@click.pass_context
def administrators(ctx, as_json):
    """The persons registered as bank administrator."""
    with _ledger(ctx) as led:
        out = led.administrators()
    if as_json:
        emit_json({"administrators": out})
    else:
        emit_table([(a["name"], f"registered {a['registered_at'][:19]} UTC by {a['registered_by']}") for a in out]
                   or [("administrators", "none")], "bank administrators")


@bank.command()
@json_option
@click.pass_context
def pending(ctx, as_json):
    """Deposits, withdrawals and transfers awaiting the bank administrator's sign-off."""
    with _ledger(ctx) as led:
        out = led.pending()
    if as_json:
        emit_json({"pending": out, "policies": _policies("pending_reserve")})
        return
    rows = []
    for p in out:
        missing = f"; missing: {'; '.join(p['missing'])}" if p.get("missing") else ""
        text = (f"{p['kind']} {p['ref']}: {p['amount_gpd']:,} gpd, {p['basin']} / {p['owner']}, recorded by "
                f"{p['recorded_by']} at {p['recorded_at'][:19]} UTC{missing}")
        rows.append((p["txn"], text))
    emit_table((rows or [("pending", "none")]) + _policy_rows(_policies("pending_reserve")), "awaiting sign-off")


# --- service users bound to bank entities ----------------------------------------------------------


def _service_user(ctx, user: str, data_dir, database):
    """The service's user ``user`` (a row of the store of ``capacitysim serve``): InputError (exit 2) when the
    store holds no such user, or when there is no store to look in; RefusedError (exit 3) when revoked."""
    from capacitysim.bank import person_name
    from capacitysim.errors import RefusedError

    user = person_name("USER", user)
    data = Path(data_dir) if data_dir is not None else Path(ctx.obj["db"]).resolve().parent
    if database is None and not (data / "service.sqlite").is_file():
        raise InputError(f"USER {user!r}: no service store at {data / 'service.sqlite'} to find the service user in; give "
                         "--data DIR (the folder of `capacitysim serve --data`) or --database URL")
    from capacitysim.service.store import open_store

    store = open_store(database, data)
    try:
        row = store.user_by_name(user)
        names = [u["name"] for u in store.users() if u["revoked_at"] is None]
        where = store.where
    finally:
        store.close()
    if row is None:
        shown = ", ".join(names[:10]) + (", ..." if len(names) > 10 else "")
        raise InputError(f"USER {user!r} is not a user of the service ({where}); users: {shown or 'none'} "
                         "(add one with `capacitysim users add`)")
    if row["revoked_at"] is not None:
        raise RefusedError(f"USER {row['name']!r} was revoked at {row['revoked_at']}; a revoked user is not bound")
    return row


_data_option = click.option("--data", "data_dir", type=click.Path(file_okay=False), default=None,
                            help="The service's data folder (`capacitysim serve --data`) whose users are bound "
                                 "(default: the bank file's folder).")
_database_option = click.option("--database", envvar="CAPACITYSIM_DATABASE_URL", default=None, show_envvar=True,
                                help="The service's store when it is not <data>/service.sqlite (as `capacitysim "
                                     "serve --database`).")


@bank.command("bind-user")
@click.argument("user")
@click.option("--entity", required=True, help="The bank entity (holder) the service user acts for.")
@click.option("--document", default=None, help="The entity's letter naming the user (recorded).")
@_data_option
@_database_option
@reason_option
@actor_option
@json_option
@click.pass_context
def bind_user(ctx, user, entity, document, data_dir, database, reason, as_json):
    """Bind a service user to a bank entity they act for (bank administrator only).

    \b
    Program policy service_user_binding: through `capacitysim serve`, a municipal user records
    deposits, withdrawals and transfers only for subaccounts whose owner is an entity they are bound
    to, and an engineer only for the holders who named them; administrators act for every entity.
    USER is a user of the service (`capacitysim users list`); an unknown USER or entity exits 2.
    """
    row = _service_user(ctx, user, data_dir, database)
    with _ledger(ctx) as led:
        out = led.bind_user(row["name"], entity, role=row["role"], document=document, reason=reason)
    _emit(out, as_json, title="service user bound")


@bank.command("unbind-user")
@click.argument("user")
@click.option("--entity", required=True, help="The bank entity the service user no longer acts for.")
@reason_option
@actor_option
@json_option
@click.pass_context
def unbind_user(ctx, user, entity, reason, as_json):
    """Close a service user's binding to a bank entity (bank administrator only; the record is kept)."""
    with _ledger(ctx) as led:
        out = led.unbind_user(user, entity, reason=reason)
    _emit(out, as_json, title="service user unbound")


@bank.command()
@click.option("--user", default=None, help="Only this service user's bindings.")
@click.option("--entity", default=None, help="Only the bindings to this entity.")
@click.option("--all", "closed", is_flag=True, help="Closed bindings too.")
@json_option
@click.pass_context
def bindings(ctx, user, entity, closed, as_json):
    """The service users bound to bank entities (program policy service_user_binding)."""
    with _ledger(ctx) as led:
        out = led.bindings(user=user, entity=entity, closed=closed)
    pols = _policies("service_user_binding")
    if as_json:
        emit_json({"bindings": out, "policies": pols})
        return
    rows = [(f"{b['user']} ({b['role'] or 'role not recorded'})",
             f"acts for {b['entity']}, bound {b['bound_at'][:19]} UTC by {b['bound_by']}"
             + (f"; unbound {b['unbound_at'][:19]} UTC by {b['unbound_by']}" if b["unbound_at"] else "")) for b in out]
    emit_table((rows or [("bindings", "none")]) + _policy_rows(pols), "service users bound to bank entities")


@bank.command("sign-off")
@click.argument("txn")
@click.option("--on", "on", default=None, help="Date of the sign-off, YYYY-MM-DD (default today): the date of the "
              "flow credit note for a withdrawal.")
@late_option
@click.option("--note-dir", default=None, type=click.Path(file_okay=False),
              help="Where the flow credit note of a withdrawal is written, as HTML and PDF (default: the folder "
                   "<bank file>-notes beside the bank).")
@reason_option
@documents_option
@actor_option
@json_option
@click.pass_context
def sign_off(ctx, txn, on, late_reason, note_dir, reason, documents, as_json):
    """Sign off a pending deposit, withdrawal or transfer (bank administrator only): it takes effect.

    The administrator who recorded it cannot sign it off (program policy signoff_separation): another
    registered administrator does. Signing off a withdrawal issues its flow credit note: written as HTML
    and PDF (`bank note` writes it again)."""
    from capacitysim.files import check_output_folder

    folder = Path(note_dir) if note_dir else _default_note_dir(ctx)
    with _ledger(ctx) as led:
        kind = next((p["kind"] for p in led.pending() if str(p["txn"]).startswith(str(txn).strip().lower())), None)
        if kind == "withdrawal":  # the note's folder, checked and made before the sign-off takes effect
            check_output_folder(folder, _bank_files(ctx), option="--note-dir", purpose="the flow credit notes")
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise InputError(f"--note-dir {folder}: cannot be made ({exc.strerror or exc}); nothing was signed off") \
                    from None
        out = led.sign_off(txn, on=on, late_reason=late_reason, reason=reason, documents=documents)
        if out["kind"] == "withdrawal":
            try:
                out["note_files"] = _write_notes(ctx, led, out["ref"], [folder / f"{note_stem(out['ref'])}{sfx}"
                                                                        for sfx in (".html", ".pdf")])
            except (OSError, CapacitysimError) as exc:
                raise CapacitysimError(f"the withdrawal {out['ref']} is signed off (note issued {out['note_issued_on']}), "
                                       f"but its note was not written ({exc}); write it with `capacitysim bank --db "
                                       f"{ctx.obj['db']} note {out['ref']} --out FILE.pdf`") from None
    _emit(out, as_json, title=f"{out['kind']} signed off")


def _default_note_dir(ctx) -> Path:
    db = Path(str(ctx.obj["db"]))
    return db.with_name(f"{db.name}-notes")


def _write_notes(ctx, led, application: str, outs) -> list[dict]:
    """Write the flow credit note of ``application`` to each path (``.html``/``.pdf``), never over the bank, its
    side files or a file a withdrawal cites; returns ``[{"path", "sha256"}]``."""
    from capacitysim.report.note import write_note
    from capacitysim.workflows.note import flow_credit_note

    cited = led.cited_files()
    for out in outs:
        if Path(out).parent.is_symlink():
            raise InputError(f"--note-dir {Path(out).parent}: is a symbolic link; give a plain folder path")
        _check_bank_output(ctx, out, "--out", cited)
    note = flow_credit_note(led, application)
    written = []
    for out in outs:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        p = Path(write_note(note, Path(out)))
        written.append({"path": str(p), "sha256": hashlib.sha256(p.read_bytes()).hexdigest()})
    return written


@bank.command("note")
@click.argument("application")
@click.option("--out", "outs", multiple=True, required=True, type=click.Path(dir_okay=False),
              help="The note's file, .html or .pdf (repeat for both).")
@json_option
@click.pass_context
def note(ctx, application, outs, as_json):
    """Write the flow credit note of a signed-off withdrawal (HTML or PDF): the parties, the credits, the evidence
    with SHA-256, the due date, what default does and the program's sections G and I."""
    with _ledger(ctx) as led:
        files = _write_notes(ctx, led, application, [Path(o) for o in outs])
    if as_json:
        emit_json({"application": application, "files": files})
    else:
        emit_table([(f["path"], f"sha256 {f['sha256']}") for f in files], f"flow credit note of {application}")


@bank.command()
@click.argument("txn")
@click.option("--reason", required=True, help="Why it is rejected.")
@documents_option
@actor_option
@json_option
@click.pass_context
def reject(ctx, txn, reason, documents, as_json):
    """Reject a pending deposit, withdrawal or transfer (bank administrator only): nothing takes effect.

    The person who recorded it cannot reject it (program policy signoff_separation); a withdrawal's
    recorder may `return` its credits instead."""
    with _ledger(ctx) as led:
        out = led.reject(txn, reason=reason, documents=documents)
    _emit(out, as_json, title=f"{out['kind']} rejected")


@bank.command()
@json_option
@click.pass_context
def policies(ctx, as_json):
    """The program policies the bank applies where the program text is silent."""
    out = _policies()
    if as_json:
        emit_json({"policies": out})
    else:
        emit_table(_policy_rows(out), "program policies")


def _policies(*names):
    from capacitysim.bank import policies as _p

    return _p(*names)


@bank.command("add-entity")
@click.argument("name")
@click.option("--municipal", is_flag=True, help="A municipal user (municipality or government entity with a public sewer).")
@reason_option
@documents_option
@json_option
@actor_option
@click.pass_context
def add_entity(ctx, name, municipal, reason, documents, as_json):
    """Register an entity (municipal user, developer, other credit holder)."""
    with _ledger(ctx) as led:
        out = led.add_entity(name, municipal, reason=reason, documents=documents)
    _emit(out, as_json, title="entity added")


_MODEL_HELP = ("The basin's model of record, a SWMM .inp (SHA-256 recorded; the engine opens it first): section A is "
               "checked on its graph and capacity evidence must run it. Registering it takes a bank administrator.")
_PLANT_HELP = ("The plant the basin drains to: its SPDES permit number (or name), as `spdes check --committed` "
               "identifies the plant.")


@bank.command("add-basin")
@click.argument("name")
@click.option("--outlet", default=None, help="The POTW component (CSO, pumping station node) the basin drains to.")
@click.option("--model", "model", default=None, type=click.Path(dir_okay=False), help=_MODEL_HELP)
@click.option("--plant", default=None, help=_PLANT_HELP)
@reason_option
@documents_option
@json_option
@actor_option
@click.pass_context
def add_basin(ctx, name, outlet, model, plant, reason, documents, as_json):
    """Register an I/I remediation basin (with --model: its model of record, version 1)."""
    with _ledger(ctx) as led:
        out = led.add_basin(name, outlet, model=model, plant=plant, reason=reason, documents=documents)
    _emit(out, as_json, title="basin added")


@bank.command("register-model")
@click.argument("basin")
@click.option("--model", "model", required=True, type=click.Path(dir_okay=False), help=_MODEL_HELP)
@click.option("--outlet", default=None, help="The basin's outlet node in this model (default: the previous version's).")
@click.option("--plant", default=None, help=_PLANT_HELP + " Default: the previous version's.")
@click.option("--includes", "includes", multiple=True, metavar="APPLICATION",
              help="A connected application this version contains (repeat): its commitment is released "
                   "(program policy connected_until_registered).")
@click.option("--on", "on", default=None, help="The registration date, YYYY-MM-DD (default today).")
@late_option
@reason_option
@documents_option
@json_option
@actor_option
@click.pass_context
def register_model(ctx, basin, model, outlet, plant, includes, on, late_reason, reason, documents, as_json):
    """Register a newer model of record for a basin (a bank administrator)."""
    with _ledger(ctx) as led:
        out = led.register_model(basin, model, outlet=outlet, plant=plant, includes=includes, on=on,
                                 late_reason=late_reason, reason=reason, documents=documents)
    _emit(out, as_json, title=f"model version {out['version']} registered for basin {out['basin']}")


@bank.command()
@click.option("--basin", default=None)
@json_option
@click.pass_context
def models(ctx, basin, as_json):
    """List the registered models of record (every version)."""
    with _ledger(ctx) as led:
        out = led.models(basin)
    if as_json:
        emit_json(out)
    else:
        emit_table([(f"{m['basin']} v{m['version']}{' (current)' if m['current'] else ''}",
                     f"{m['path']} sha256 {m['sha256'][:12]}... outlet {m['outlet']} plant {m['plant'] or '-'} "
                     f"{m['nodes']} nodes; contains {', '.join(m['includes']) or 'no connected application'}")
                    for m in out] or [("models", "none registered")], "registered models")


@bank.command()
@click.option("--model", "model", default=None, type=click.Path(dir_okay=False),
              help="A model file: the commitments of the basins whose current registered model it is.")
@click.option("--plant", default=None, help="A plant key: the commitments of the basins draining to it.")
@click.option("--exclude", default=None, metavar="APPLICATION", help="Leave out one application (the applicant's own).")
@json_option
@click.pass_context
def commitments(ctx, model, plant, exclude, as_json):
    """List the committed flows on a registered model or plant (not yet in the model of record)."""
    from capacitysim.workflows.committed import model_sha256

    sha = model_sha256(model) if model is not None else None
    with _ledger(ctx) as led:
        out = led.commitments(model_sha256=sha, plant=plant, exclude=exclude)
    if as_json:
        emit_json(out)
    else:
        emit_table([(f["application"], f"{f['average_gpd']:,.0f} gpd average ({f['average_basis']}), "
                     f"{f['peak_gpd']:,.0f} gpd peak at {f['node'] or 'no node'} ({f['basin']}, {f['status']})")
                    for f in out["flows"]] + [("total", f"{out['total_gpd']:,.0f} gpd average, "
                                                        f"{out['total_peak_gpd']:,.0f} gpd peak")],
                   f"commitments as of {out['as_of']} (bank head {out['bank_head'][:12]}...)")


@bank.command()
@click.argument("application")
@click.option("--on", "on", default=None, help="The connection date, YYYY-MM-DD (default today).")
@late_option
@reason_option
@documents_option
@json_option
@actor_option
@click.pass_context
def connect(ctx, application, on, late_reason, reason, documents, as_json):
    """Record that an approved application is connected (a commitment until a model version contains it)."""
    with _ledger(ctx) as led:
        out = led.connect(application, on, late_reason=late_reason, reason=reason, documents=documents)
    _emit(out, as_json, title="connected")


@bank.command()
@click.option("--as-of", default=None, help="Date, YYYY-MM-DD (default today).")
@late_option
@reason_option
@json_option
@actor_option
@click.pass_context
def expire(ctx, as_of, late_reason, reason, as_json):
    """Release approvals not connected within program policy approval_expiry_years (15 RCNY 18-37(e))."""
    with _ledger(ctx) as led:
        out = led.expire(as_of, late_reason=late_reason, reason=reason)
    pols = _policies("approval_expiry_years")
    if as_json:
        emit_json({"expired": out, "policies": pols})
    else:
        emit_table([(r["application"], f"approved {r['approved_on']}, expired {r['expired_on']}, "
                     f"{r['returned_gpd']:,} gpd returned") for r in out] or [("expired", "none")], "expired approvals")
        emit_table(_policy_rows(pols))


@bank.command("open-subaccount")
@click.option("--basin", required=True)
@click.option("--owner", required=True)
@reason_option
@json_option
@actor_option
@click.pass_context
def open_subaccount(ctx, basin, owner, reason, as_json):
    """Open an owner's subaccount in a basin."""
    with _ledger(ctx) as led:
        out = led.open_subaccount(basin, owner, reason=reason)
    _emit(out, as_json, title="subaccount opened")


@bank.command("add-project")
@click.argument("project")
@click.option("--basin", required=True)
@click.option("--jurisdiction", required=True, help="Municipal user with jurisdiction over the project site.")
@click.option("--priority", type=int, default=None, help="Rank in the prioritized list (1 first).")
@click.option("--estimated-gpd", type=float, default=None, help="Estimated I/I removal [gpd].")
@click.option("--property", "property_", type=click.Choice(["public", "private"]), default=None,
              help="Public sewage collection system or private property (annual report parts A and B).")
@click.option("--description", default="")
@reason_option
@json_option
@actor_option
@click.pass_context
def add_project(ctx, project, basin, jurisdiction, priority, estimated_gpd, property_, description, reason, as_json):
    """Record an identified/available I/I remediation project (annual report part A)."""
    with _ledger(ctx) as led:
        out = led.add_project(project, basin, jurisdiction, description=description, priority=priority,
                              estimated_gpd=estimated_gpd, property=property_, reason=reason)
    _emit(out, as_json, title="project recorded")


@bank.command("submit-records")
@click.argument("municipal_user")
@click.option("--period", type=int, required=True, help="The calendar year the records cover.")
@click.option("--on", "on", default=None, help="The date they were submitted, YYYY-MM-DD (default today).")
@click.option("--document", default=None, type=click.Path(dir_okay=False),
              help="The submitted records (any format; SHA-256 recorded).")
@late_option
@reason_option
@json_option
@actor_option
@click.pass_context
def submit_records(ctx, municipal_user, period, on, document, late_reason, reason, as_json):
    """Record a municipal user's annual submission of its records (records section), with its due date."""
    with _ledger(ctx) as led:
        out = led.record_annual_report(municipal_user, period, submitted_on=on, document=document,
                                       late_reason=late_reason, reason=reason)
    _emit(out, as_json, rows=_rows(out | {"period": str(out["period"])}), title="records submitted")  # a year, not 2,025


@bank.command("submissions")
@click.option("--as-of", default=None, help="Date the due dates are judged on, YYYY-MM-DD (default today).")
@json_option
@click.pass_context
def submissions(ctx, as_of, as_json):
    """Each municipal user's submissions of its records and the next due date (program policy annual_report_due)."""
    with _ledger(ctx) as led:
        rows = led.annual_reports(as_of)
    pols = _policies("annual_report_due")
    if as_json:
        emit_json({"municipal_users": rows, "policies": pols})
        return
    emit_table(([(r["municipal_user"], f"next due {r['next_due_on']} ({r['status']}); last submitted "
                  f"{r['last_submitted_on'] or 'never'}") for r in rows] or [("municipal users", "none")])
               + _policy_rows(pols), "annual records")


@bank.command("letter")
@click.argument("project")
@click.option("--letter", required=True, type=click.Path(dir_okay=False),
              help="The completed certification letter (Appendix A), any format (SHA-256 recorded).")
@click.option("--on", "on", default=None, help="The letter's date, YYYY-MM-DD (default today).")
@late_option
@reason_option
@json_option
@actor_option
@click.pass_context
def letter(ctx, project, letter, on, late_reason, reason, as_json):
    """Furnish the certification letter of a certified project (records section B; once per project)."""
    with _ledger(ctx) as led:
        out = led.furnish_letter(project, letter, on=on, late_reason=late_reason, reason=reason)
    _emit(out, as_json, title="certification letter recorded")


@bank.command()
@click.option("--basin", required=True)
@click.option("--owner", required=True, help="Municipal user with jurisdiction over the project site (section B).")
@click.option("--gpd", type=float, required=True, help="Certified I/I removed [gpd] (booked rounded down).")
@click.option("--project", required=True, help="Project id (deposited once).")
@click.option("--quantification", required=True, type=click.Path(dir_okay=False),
              help="The project's quantification: the JSON of `capacitysim credits quantify PROJECT.toml --json` "
                   "(SHA-256 recorded): it names the NYS licensed PE, this project, municipal user and basin, and a "
                   "total_gpd of at least --gpd.")
@click.option("--letter", default=None, type=click.Path(dir_okay=False),
              help="The completed certification letter (Appendix A), any format (SHA-256 recorded); it may follow "
                   "with `bank letter` (annual report part B flags a project without it).")
@click.option("--property", "property_", type=click.Choice(["public", "private"]), default=None,
              help="Public sewage collection system or private property (annual report parts A and B).")
@click.option("--certified-on", default=None, help="Date certified complete, YYYY-MM-DD (default today).")
@click.option("--certificate", default=None, help="Certificate reference (text), besides the letter.")
@click.option("--description", default="")
@reason_option
@documents_option
@json_option
@actor_option
@click.pass_context
def deposit(ctx, basin, owner, gpd, project, quantification, letter, property_, certified_on, certificate, description,
            reason, documents, as_json):
    """Record the deposit of a certified project's credits (effective at the administrator's sign-off)."""
    with _ledger(ctx) as led:
        out = led.deposit(basin, owner, gpd, project, quantification=quantification, letter=letter,
                          property=property_, certified_on=certified_on, certificate=certificate,
                          description=description, reason=reason, documents=documents)
    _emit(out, as_json, title=f"deposit recorded, awaiting sign-off (bank sign-off {out['txn']})")


@bank.command()
@click.option("--basin", required=True)
@click.option("--owner", required=True, help="Credit holder whose subaccount pays.")
@click.option("--gpd", type=float, required=True, help="Estimated peak sewage flow increase of the connection [gpd].")
@click.option("--application", required=True, help="Application id (one withdrawal each).")
@click.option("--node", required=True, help="Model node where the connection is made: the capacity demonstration "
              "must connect at least --gpd there.")
@click.option("--capacity-ref", default=None, help="Capacity demonstration (section H(1)): the JSON file of "
              "`capacitysim capacity --connect NODE=GPD --json` (SHA-256 recorded; it must pass and connect at least "
              "--gpd at --node; a run id, HTML or PDF is refused; a document another application cites is refused: "
              "program policy evidence_single_use).")
@click.option("--spdes-ref", default=None, help="SPDES / treatment check (section H(1)): the JSON file of "
              "`capacitysim spdes check --added-gpd GPD --json` (SHA-256 recorded; it must show treatment capacity "
              "with at least --average-gpd added (a monthly-average limit), else --gpd, and be recent: program policy "
              "spdes_evidence_max_age_days).")
@click.option("--application-approval", default=None, help="Approval reference under the new or modified sewer "
              "connection application program (section H(2)); required before the sign-off.")
@click.option("--type", "app_type", type=click.Choice(["connection", "extension"]), default="connection",
              show_default=True, help="A new or modified sewer connection, or a sewer extension.")
@click.option("--principal", default=None, help="Principal municipal user (default the owner, if municipal).")
@click.option("--offset-ratio", type=float, default=ii_offset.DEFAULT_OFFSET_RATIO, show_default=True,
              help="Section F: one to one; above one is a program policy; below one is refused.")
@click.option("--on", "on", default=None, help="The withdrawal date, YYYY-MM-DD (default today).")
@click.option("--average-gpd", type=float, default=None, help="The connection's average daily flow [gpd]: its "
              "commitment's average (default: --gpd, program policy commitment_average).")
@click.option("--applicant", default=None, help="The applicant, party to the flow credit note with the Board "
              "(default: --owner).")
@click.option("--affected-owner", default=None, help="The owner of the property the connection serves, when "
              "another person (named on the flow credit note).")
@late_option
@click.option("--description", default="")
@reason_option
@documents_option
@actor_option
@json_option
@click.pass_context
def withdraw(ctx, basin, owner, gpd, application, node, capacity_ref, spdes_ref, application_approval, app_type, principal,
             offset_ratio, on, average_gpd, applicant, affected_owner, late_reason, description, reason, documents, as_json):
    """Reserve credits for an application; approved only at the administrator's sign-off."""
    with _ledger(ctx) as led:
        out = led.withdraw(basin, owner, gpd, application, node=node, average_gpd=average_gpd, capacity_ref=capacity_ref,
                           spdes_ref=spdes_ref,
                           application_approval=application_approval, principal=principal, offset_ratio=offset_ratio,
                           on=on, app_type=app_type, applicant=applicant, affected_owner=affected_owner,
                           late_reason=late_reason, description=description, reason=reason, documents=documents)
        out["balance_gpd"] = led.balance(basin, owner)["balance_gpd"]
    _emit(out, as_json, title=f"withdrawal recorded, awaiting sign-off (bank sign-off {out['txn']})")


@bank.command()
@click.option("--application", required=True)
@click.option("--capacity-ref", default=None, help="Capacity demonstration JSON (`capacitysim capacity --json`).")
@click.option("--spdes-ref", default=None, help="SPDES check JSON (`capacitysim spdes check --json`).")
@click.option("--application-approval", default=None, help="Approval under the connection application program "
              "(section H(2)).")
@click.option("--node", default=None, help="Model node of the connection, only for a withdrawal recorded without one "
              "(a migrated bank).")
@reason_option
@documents_option
@actor_option
@json_option
@click.pass_context
def attach(ctx, application, capacity_ref, spdes_ref, application_approval, node, reason, documents, as_json):
    """Attach the section H references to a pending withdrawal (or the approval to an application)."""
    with _ledger(ctx) as led:
        out = led.attach(application, capacity_ref=capacity_ref, spdes_ref=spdes_ref,
                         application_approval=application_approval, node=node, reason=reason, documents=documents)
    _emit(out, as_json, title=f"application {out['status']}")


@bank.command("record-application")
@click.argument("application")
@click.option("--principal", required=True, help="Principal municipal user (whose sewer receives the connection).")
@click.option("--gpd", type=float, required=True, help="Estimated peak sewage flow increase [gpd] (0 allowed).")
@click.option("--basin", default=None)
@click.option("--node", default=None, help="Model node of the connection.")
@click.option("--type", "app_type", type=click.Choice(["connection", "extension"]), default="connection",
              show_default=True)
@click.option("--received-on", default=None, help="Date the application was received, YYYY-MM-DD (default today).")
@click.option("--application-approval", default=None, help="Approval under the connection application program.")
@click.option("--average-gpd", type=float, default=None, help="Average daily flow [gpd] (default: --gpd, program "
              "policy commitment_average).")
@late_option
@click.option("--description", default="")
@reason_option
@documents_option
@actor_option
@json_option
@click.pass_context
def record_application(ctx, application, principal, gpd, basin, node, app_type, received_on, application_approval,
                       average_gpd, late_reason, description, reason, documents, as_json):
    """Record an application that withdraws no credits (e.g. 2,500 gpd or less): report parts C and D."""
    with _ledger(ctx) as led:
        out = led.record_application(application, principal, gpd, basin=basin, node=node, average_gpd=average_gpd,
                                     app_type=app_type,
                                     received_on=received_on, application_approval=application_approval,
                                     late_reason=late_reason, description=description, reason=reason,
                                     documents=documents)
    _emit(out, as_json, title="application recorded")


@bank.command("return")
@click.option("--application", required=True)
@click.option("--reason", required=True, help="Why the credits are returned.")
@documents_option
@json_option
@actor_option
@click.pass_context
def return_(ctx, application, reason, documents, as_json):
    """Return the credits of a pending or approved withdrawal (or close an application as returned)."""
    with _ledger(ctx) as led:
        out = led.return_credits(application, reason=reason, documents=documents)
    _emit(out, as_json, title="credits returned")


@bank.command()
@click.option("--application", required=True)
@click.option("--until", required=True, help="New due date of the certificate of occupancy, YYYY-MM-DD.")
@click.option("--document", required=True, help="The Board's extension.")
@click.option("--granted-on", default=None, help="Date the extension was granted, YYYY-MM-DD (default today); "
              "after the current due date it is refused (program policy extension_after_due_date).")
@late_option
@reason_option
@json_option
@actor_option
@click.pass_context
def extend(ctx, application, until, document, granted_on, late_reason, reason, as_json):
    """Record an extension of the time allowed for the certificate of occupancy (late ones: program policy)."""
    with _ledger(ctx) as led:
        out = led.extend(application, until, document=document, granted_on=granted_on, late_reason=late_reason,
                         reason=reason)
    _emit(out, as_json, title="extended")


@bank.command()
@click.option("--application", required=True)
@click.option("--co-date", required=True, help="Date the certificate of occupancy was issued, YYYY-MM-DD.")
@late_option
@reason_option
@documents_option
@json_option
@actor_option
@click.pass_context
def complete(ctx, application, co_date, late_reason, reason, documents, as_json):
    """Record the certificate of occupancy (or completion): the connection is complete (report part D)."""
    with _ledger(ctx) as led:
        out = led.complete(application, co_date, late_reason=late_reason, reason=reason, documents=documents)
    _emit(out, as_json, title="connection completed")


@bank.command("check-defaults")
@click.option("--as-of", default=None, help="Date, YYYY-MM-DD (default today).")
@late_option
@json_option
@actor_option
@click.pass_context
def check_defaults(ctx, as_of, late_reason, as_json):
    """Put past-due flow credit notes in default (DEFAULT); what happens to their credits is a program policy."""
    with _ledger(ctx) as led:
        out = led.check_defaults(as_of, late_reason=late_reason)
    pols = _policies("default_credits")
    if as_json:
        emit_json({"defaulted": out, "policies": pols})
    else:
        emit_table([(r["application"], f"{r['returned_gpd']:,} gpd returned to the holder (due {r['co_due_on']})")
                    for r in out] or [("defaults", "none")] + [], "defaults")
        emit_table(_policy_rows(pols))


@bank.command()
@click.option("--basin", required=True)
@click.option("--from", "from_owner", required=True)
@click.option("--to", "to_owner", required=True)
@click.option("--gpd", type=float, required=True, help="Whole gallons per day.")
@click.option("--document", default=None, help="Bill of sale, memorandum of gift or grant, written notice.")
@click.option("--to-basin", default=None, help="Destination basin (needs --board-approval).")
@click.option("--board-approval", default=None, help="The Board's approval of a transfer across basins.")
@reason_option
@json_option
@actor_option
@click.pass_context
def transfer(ctx, basin, from_owner, to_owner, gpd, document, to_basin, board_approval, reason, as_json):
    """Record a transfer of credits between holders (effective at the administrator's sign-off)."""
    with _ledger(ctx) as led:
        out = led.transfer(basin, from_owner, to_owner, gpd, document=document, to_basin=to_basin,
                           board_approval=board_approval, reason=reason)
    _emit(out, as_json, title=f"transfer recorded, awaiting sign-off (bank sign-off {out['txn']})")


@bank.command()
@click.option("--basin", required=True)
@click.option("--from", "from_owner", required=True, help="Private entity holding the credits.")
@click.option("--by", required=True, help="Municipal user with jurisdiction (condemning).")
@click.option("--gpd", type=float, required=True, help="Whole gallons per day.")
@click.option("--project", default=None, help="Only credits of this project (within the municipal user's boundaries); "
              "default: any of the holder's credits generated within them.")
@click.option("--document", default=None, help="The condemnation resolution.")
@reason_option
@json_option
@actor_option
@click.pass_context
def condemn(ctx, basin, from_owner, by, gpd, project, document, reason, as_json):
    """Condemn credits on deposit in a private entity's name for a public purpose (section D).

    Only credits generated by a project within the condemning municipal user's boundaries (the
    holder's lots of that jurisdiction, see `balance --lots`) can be taken; asking for more is refused.
    """
    with _ledger(ctx) as led:
        out = led.condemn(basin, from_owner, by, gpd, project=project, document=document, reason=reason)
    _emit(out, as_json, title="condemned")


@bank.command()
@click.option("--basin", required=True)
@click.option("--subject", required=True)
@reason_option
@documents_option
@json_option
@actor_option
@click.pass_context
def dispute(ctx, basin, subject, reason, documents, as_json):
    """Record an unresolved dispute (its basin's records cannot be purged until resolved)."""
    with _ledger(ctx) as led:
        out = led.open_dispute(basin, subject, reason=reason, documents=documents)
    _emit(out, as_json, title="dispute recorded")


@bank.command()
@click.argument("dispute_id", type=int)
@click.option("--reason", required=True)
@documents_option
@json_option
@actor_option
@click.pass_context
def resolve(ctx, dispute_id, reason, documents, as_json):
    """Close a dispute."""
    with _ledger(ctx) as led:
        out = led.close_dispute(dispute_id, reason=reason, documents=documents)
    _emit(out, as_json, title="dispute resolved")


@bank.command()
@click.option("--before", required=True, help="Purge journal rows dated before this date, YYYY-MM-DD.")
@click.option("--reason", required=True)
@json_option
@actor_option
@click.pass_context
def purge(ctx, before, reason, as_json):
    """Purge journal rows older than the three-year retention period (never under dispute)."""
    with _ledger(ctx) as led:
        out = led.purge(before, reason=reason)
    _emit(out, as_json, title="purged")


@bank.command()
@click.option("--basin", default=None)
@click.option("--owner", default=None)
@click.option("--lots", "show_lots", is_flag=True, help="Also list the lots: credits by originating project and its "
              "jurisdiction (provenance, section D).")
@json_option
@click.pass_context
def balance(ctx, basin, owner, show_lots, as_json):
    """Balance of one subaccount (--basin and --owner), or of every subaccount."""
    with _ledger(ctx) as led:
        if basin is not None and owner is not None:
            out = led.balance(basin, owner, lots=show_lots) | {"section_g": _SECTION_G}
            if as_json:
                emit_json(out)
                return
            rows = [("basin", basin), ("owner", owner), ("balance_gpd", f"{out['balance_gpd']:,}"),
                    ("reserved_gpd", f"{out['reserved_gpd']:,}"),
                    ("awaiting sign-off in", f"{out['pending_in_gpd']:,} gpd (not counted)"),
                    ("awaiting sign-off out", f"{out['pending_out_gpd']:,} gpd (already taken out)")]
            rows += [(f"lot {x['lot']}", _lot_text(x)) for x in out.get("lots", [])]
            emit_table(rows + [_section_g_row()] + _policy_rows(out.get("policies") or _policies("allocation_policy")),
                       "balance")
            return
        rows = led.balances(lots=show_lots)
        if (basin is None) != (owner is None):
            rows = [r for r in rows if r["basin"] == basin or r["owner"] == owner]
    pols = _policies("allocation_policy", "pending_reserve")
    if as_json:
        emit_json({"balances": rows, "section_g": _SECTION_G, "policies": pols})
    else:
        table = []
        for r in rows:
            text = (f"{r['balance_gpd']:,} gpd (reserved {r['reserved_gpd']:,}; awaiting sign-off: in "
                    f"{r['pending_in_gpd']:,}, out {r['pending_out_gpd']:,})")
            table.append((f"{r['basin']} / {r['owner']}", text))
            table += [(f"  lot {x['lot']}", _lot_text(x)) for x in r.get("lots", [])]
        emit_table((table or [("subaccounts", "none")]) + [_section_g_row()] + _policy_rows(pols), "balances")


#: Credit bank section G on every balance: credits on deposit have no monetary value (rules.credit_bank).
_SECTION_G = {"text": credit_bank.SECTION_G, "citation": credit_bank.SECTION_G_CITATION}


def _section_g_row() -> tuple[str, str]:
    return ("credits on deposit", f"{credit_bank.SECTION_G} ({credit_bank.SECTION_G_CITATION})")


def _lot_text(x: dict) -> str:
    if x["origin"] == "unknown":
        return f"{x['gpd']:,} gpd of unknown origin (cannot be condemned)"
    return (f"{x['gpd']:,} gpd from project {x['project']} (jurisdiction {x['jurisdiction']}, deposited "
            f"{x['deposited_on']})")


@bank.command()
@click.option("--basin", default=None)
@click.option("--owner", default=None)
@click.option("--since", default=None, help="From this date, YYYY-MM-DD.")
@click.option("--csv", "csv_path", default=None, type=click.Path(), help="Also write the journal as CSV (not over the "
              "bank file, a symbolic link or a folder).")
@json_option
@click.pass_context
def journal(ctx, basin, owner, since, csv_path, as_json):
    """The append-only journal (--csv: spreadsheet formulas neutralised; never over the bank file)."""
    from capacitysim.files import atomic_write_text
    from capacitysim.report.bank import rows_to_csv
    from capacitysim.workflows.bank_reports import COLUMNS, flat_journal_row

    if csv_path:
        _check_bank_output(ctx, csv_path, "--csv")
    with _ledger(ctx) as led:
        if csv_path:
            _check_bank_output(ctx, csv_path, "--csv", led.cited_files())
        rows = led.journal(basin=basin, owner=owner, since=since)
    if csv_path:
        atomic_write_text(csv_path, rows_to_csv([flat_journal_row(r) for r in rows], COLUMNS["journal"]))
    if as_json:
        emit_json({"journal": rows})
        return
    for r in rows:
        f = flat_journal_row(r)
        delta = f"{_signed(r['delta_gpd'])} gpd -> {_num(r['balance_after'])}" if r["balance_after"] is not None else ""
        who = " / ".join(str(x) for x in (r["basin"], r["owner"]) if x)
        docs = f" [{f['documents']}]" if f["documents"] else ""
        click.echo(f"{r['seq']:>6} {str(r['at'])[:19]} {str(r['actor']):<12} {str(r['action']):<16} {who:<30} {delta:<24} "
                   f"{r['ref'] or ''}{(' - ' + str(r['reason'])) if r['reason'] else ''}{docs}")


def _num(v) -> str:
    return f"{v:,}" if isinstance(v, int) else repr(v)


def _signed(v) -> str:
    return f"{v:+,}" if isinstance(v, int) else repr(v)


@bank.command()
@click.option("--municipal-user", default=None, help="Report for one municipal user (default all).")
@click.option("--year", type=int, default=None, help="Restrict parts B, C (applications received that year, and "
              "those still open), D (cumulative to that year's end) and the journal to one year.")
@click.option("--out", "out_dir", default="bank-report", show_default=True, type=click.Path(file_okay=False),
              help="Folder for report.html and one CSV per table.")
@json_option
@click.pass_context
def report(ctx, municipal_user, year, out_dir, as_json):
    """The annual municipal user report (A-D: C every application, D every connection completed), balances,
    lots, sign-offs and journal, as CSV and HTML, with the journal head and the program policies in force."""
    from capacitysim.report.bank import report_files, write_report
    from capacitysim.workflows.bank_reports import annual_report

    if Path(out_dir).is_symlink():
        raise InputError(f"--out {out_dir}: is a symbolic link; give a plain folder path (outputs never follow links)")
    for name in report_files():
        _check_bank_output(ctx, Path(out_dir) / name, "--out")
    with _ledger(ctx) as led:
        cited = led.cited_files()
        for name in report_files():
            _check_bank_output(ctx, Path(out_dir) / name, "--out", cited)
        rep = annual_report(led, municipal_user, year)
    paths = write_report(rep, out_dir)
    counts = {k: len(v) for k, v in rep["tables"].items()}
    if as_json:
        emit_json({"files": {k: str(p) for k, p in paths.items()}, "rows": counts, "verify": rep["verify"], "head": rep["head"],
                   "policies": rep["policies"]})
    else:
        emit_table([(k, f"{counts.get(k, '')} rows  {p}" if k in counts else str(p)) for k, p in paths.items()]
                   + [("journal head (sha256)", rep["head"]["head"])] + _policy_rows(rep["policies"]),
                   "annual municipal user report")


@bank.command()
@click.option("--expect-head", default=None, metavar="HASH",
              help="A head hash kept outside the bank (`bank head`, the annual report): fail unless the journal up to "
                   "that row is unchanged.")
@json_option
@click.pass_context
def verify(ctx, expect_head, as_json):
    """Check the ledger: hash chain, value types, journal sums equal balances, deposits = held + withdrawn,
    records match their journal rows, cited files unchanged, SQLite integrity. Exit 1 on any problem.

    \b
    Without --expect-head this finds edits that leave a trace in the file, but NOT a consistent
    rewrite of the whole chain by someone with write access (triggers dropped, history edited,
    every hash recomputed). Only a head hash kept elsewhere detects that: --expect-head HASH fails,
    naming the first row where the chain no longer leads to HASH, or saying HASH is not in it.
    """
    with _ledger(ctx) as led:
        out = led.verify(expect_head=expect_head)
    if as_json:
        emit_json(out)
    else:
        exp = out.get("expected_head")
        emit_table([("result", "ok" if out["ok"] else "PROBLEMS FOUND"), ("journal rows", out["journal_rows"]),
                    ("journal head (sha256)", out["journal_head"]), ("deposited", f"{out['deposited_gpd']:,} gpd"),
                    ("held", f"{out['held_gpd']:,} gpd"), ("withdrawn", f"{out['withdrawn_gpd']:,} gpd")]
                   + ([("expected head", f"{exp['hash']}: " + (f"found (row {exp['seq']})" if exp["found"] else "NOT FOUND"))]
                      if exp else [])
                   + [(f"{r.get('application') or r.get('record')} {r['kind']} ref", f"{r['status']}: {r['ref']}")
                      for r in out["refs"]]
                   + [("problem", p) for p in out["problems"]], "ledger check")
    if not out["ok"]:
        ctx.exit(1)


@bank.command()
@json_option
@click.pass_context
def head(ctx, as_json):
    """Print the head of the journal's hash chain, its row count and the time of its last row.

    Keep the head outside the bank (minutes, e-mail, signed report): `bank verify --expect-head HASH`
    later fails if the journal up to that row was rewritten, even with every hash recomputed.
    """
    with _ledger(ctx) as led:
        out = led.head()
    if as_json:
        emit_json(out)
    else:
        emit_table([("head (sha256)", out["head"]), ("rows", f"{out['rows']:,}"),
                    ("last row", f"{out['last_seq']} at {out['last_at']} UTC" if out["last_seq"] is not None else "none")],
                   "journal head")


@bank.command("register")
@click.option("--plant", "plants", multiple=True, metavar="KEY=PLANT",
              help="The flow record of a plant the bank's basins drain to (repeat per plant): KEY the plant as the bank "
                   "registers it (SPDES permit number or name), PLANT a bundled plant name (sample-wwtp), PLANT.toml (its "
                   "record PLANT.csv beside it) or PLANT.toml,FLOWS.csv, as `spdes check --plant --flows` take them. A "
                   "plant not given is listed with its committed flow, its remaining headroom not computed.")
@click.option("--storm", "storms", multiple=True,
              help="Design storm of the models' headroom (bundled name, storms/*.toml or a spec such as type2:3.2in; repeatable). Default: the model's "
                   "rainfall, as `capacity` without --storm.")
@click.option("--nodes", default=None, metavar="A,B",
              help="Search these nodes too (default: each commitment's node and each basin's outlet).")
@click.option("--all", "all_nodes", is_flag=True,
              help="Search every junction of every registered model (about 3 to 5 engine runs per junction: on "
                   "synthetic-500, some 1,700 runs).")
@click.option("--no-headroom", is_flag=True, help="Skip the hydraulic part (the models' commitments are still listed).")
@click.option("--criteria", "criteria_file", type=click.Path(dir_okay=False), help="TOML file overriding the default criteria.")
@click.option("--spinup-hr", type=float, default=None, help="As `capacity --spinup-hr` (default 6, or none by the spin-up policy).")
@click.option("--tolerance-pct", type=float, default=None, help="Bracket width: failing / passing <= 1 + tolerance [default 5].")
@click.option("--workers", type=click.IntRange(min=0), default=None,
              help="Engine worker processes (default one per core; 0: in this process).")
@click.option("--as-of", default=None, help="Date of the register, YYYY-MM-DD (expiries; the plants' look-back window). "
                                            "Default today.")
@click.option("--refresh", is_flag=True, help="Compute every figure again, even those stored and current.")
@click.option("--cached", is_flag=True,
              help="Compute nothing: show the stored register, each figure current or stale against the bank now.")
@click.option("--cache", "cache_path", type=click.Path(dir_okay=False), default=None,
              help="Where the figures are stored and re-used (default: BANK.register.json next to the bank).")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), help="Write the HTML register here.")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@json_option
@click.pass_context
def register_(ctx, plants, storms, nodes, all_nodes, no_headroom, criteria_file, spinup_hr, tolerance_pct, workers, as_of,
              refresh, cached, cache_path, report_path, no_progress, as_json):
    """The capacity register: per plant, the permitted flow, the 12-month figure, the committed flow and the
    remaining treatment headroom; per registered model, the committed flows and the remaining headroom per manhole
    with the commitments in place.

    \b
    Plant figures are those of `spdes check --committed BANK` with no added flow; each manhole's figure is
    bracketed by two real runs with every commitment of the model in place, so `capacity --connect NODE=GPD
    --committed BANK` passes at its passing flow and fails at its failing flow. Each figure says the bank head
    and time it was computed for; the figures are stored next to the bank and re-used while the commitments and
    inputs they depend on are unchanged (computed again when a commitment is added, released or moved, or with
    --refresh). Exit 0; 1 when a manhole's figure could not be computed (untrusted run, error); 2 bad input;
    3 a registered model file changed since it was registered.
    """
    from capacitysim.report.register import text_lines
    from capacitysim.workflows.register import capacity_register, default_cache_path, stored_register

    db = Path(ctx.obj["db"])
    cache = Path(cache_path) if cache_path else default_cache_path(db)
    _check_bank_output(ctx, cache, "--cache")
    if report_path:
        _check_bank_output(ctx, report_path, "--report", [cache, criteria_file])
    if cached:
        given = [o for o, v in (("--plant", plants), ("--storm", storms), ("--nodes", nodes), ("--all", all_nodes),
                                ("--no-headroom", no_headroom), ("--criteria", criteria_file), ("--refresh", refresh),
                                ("--as-of", as_of), ("--spinup-hr", spinup_hr), ("--tolerance-pct", tolerance_pct),
                                ("--workers", workers)) if v]
        if given:
            raise InputError(f"--cached shows the stored register as it was computed; {', '.join(given)} would compute "
                             "it again: leave --cached out")
        reg = stored_register(db, cache=cache)
    else:
        criteria = None
        if criteria_file:
            from capacitysim.io.files import read_toml
            from capacitysim.rules.capacity import Criteria

            criteria = Criteria.from_dict(read_toml(criteria_file), criteria_file)
        node_list = []
        if nodes is not None:
            node_list = [n.strip() for n in nodes.split(",") if n.strip()]
            if not node_list:
                raise InputError(f"--nodes must name at least one node (A,B,...); got {nodes!r}")
        from capacitysim.cli.common import ProgressBar

        bars: dict = {}

        def progress(label, done, total, runs):
            if label not in bars:
                bars[label] = ProgressBar("node", f"headroom {label}")
            bars[label].update(done, total, runs=runs)

        try:
            reg = capacity_register(db, plants=list(plants), storms=list(storms) or None, nodes=node_list,
                                    all_nodes=all_nodes, headroom=not no_headroom, as_of=as_of, criteria=criteria,
                                    criteria_file=criteria_file, tolerance_pct=tolerance_pct, spinup_hr=spinup_hr,
                                    workers=workers, refresh=refresh, cache=cache,
                                    progress=None if no_progress else progress)
        finally:
            for b in bars.values():
                b.__exit__(None, None, None)
    doc = reg.to_dict()
    if report_path:
        from capacitysim.report.register import write_report

        write_report(doc, report_path)
    if as_json:
        emit_json(doc | ({"report": str(report_path)} if report_path else {}))
    else:
        for line in text_lines(doc):
            click.echo(line)
        if report_path:
            click.echo(f"report: {report_path}")
    if reg.problems:
        click.echo(f"{len(reg.problems)} manhole figure(s) could not be computed: {reg.problems[0]}"
                   + (f" (and {len(reg.problems) - 1} more)" if len(reg.problems) > 1 else ""), err=True)
        ctx.exit(1)
