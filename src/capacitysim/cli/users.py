"""CLI: ``capacitysim users add NAME --role ROLE --data DIR`` (a bearer token for the service), ``users list`` and
``users revoke NAME`` (the token is refused from then on). ``--database URL`` (or ``CAPACITYSIM_DATABASE_URL``) names
the store as for ``capacitysim serve``; the bank stays ``<data>/bank.sqlite``."""

from __future__ import annotations

import click

from capacitysim.cli import cli
from capacitysim.cli.common import emit_json, json_option

ROLES = ("engineer", "administrator", "municipal", "reviewer")


def database_option(f):
    """``--database URL`` (env ``CAPACITYSIM_DATABASE_URL``): the service's store, as ``capacitysim serve --database``."""
    return click.option("--database", envvar="CAPACITYSIM_DATABASE_URL", default=None, show_envvar=True,
                        help="The service's store when it is not <data>/service.sqlite: postgresql://USER@HOST:PORT/DBNAME "
                             "or sqlite:///PATH (as `capacitysim serve --database`).")(f)


@cli.group()
def users():
    """Users of the service (`capacitysim serve`): names, roles, bearer tokens."""


@users.command("add")
@click.argument("name")
@click.option("--role", type=click.Choice(ROLES), required=True,
              help="engineer: submits jobs, sees their own; administrator: signs off withdrawals; municipal: reads, "
                   "requests withdrawals; reviewer: reads.")
@click.option("--data", "data_dir", type=click.Path(file_okay=False), default="capacitysim-data", show_default=True,
              help="The service's data folder (as `capacitysim serve --data`).")
@click.option("--registered-by", default=None,
              help="For an administrator of an existing bank: the registered bank administrator who registers them "
                   "(default: the first one registered).")
@database_option
def add(name, role, data_dir, registered_by, database):
    """Add a user and print their new bearer token (shown once; only its hash is stored).

    An administrator is also registered as bank administrator of the service's bank (<data>/bank.sqlite, mode
    0600 like the store): the first one creates the bank; later ones are registered by --registered-by (service
    policy administrator_registration: the operator who runs this command acts for that administrator, and the
    bank's journal names both).
    """
    from pathlib import Path

    from capacitysim.bank import Ledger, person_name
    from capacitysim.errors import RefusedError
    from capacitysim.service.auth import new_token
    from capacitysim.service.db import private_file
    from capacitysim.service.store import open_store

    name = person_name("NAME", name)
    data = Path(data_dir)
    store = open_store(database, data)
    data.mkdir(parents=True, exist_ok=True)  # the bank's folder, whichever the store
    if store.user_by_name(name) is not None:
        raise RefusedError(f"a user named {name!r} exists already in {store.where}")
    if role == "administrator":
        bank = data / "bank.sqlite"
        if not bank.is_file():
            Ledger(bank, create=True, actor=name, administrator=name).close()
        else:
            with Ledger(bank) as lg:
                names = [a["name"] for a in lg.administrators()]
            if name.casefold() not in {n.casefold() for n in names}:
                by = registered_by or (names[0] if names else None)
                if by is None:
                    raise RefusedError(f"{bank} has no registered administrator to register {name!r}")
                with Ledger(bank, actor=by) as lg:
                    lg.add_administrator(name, reason=f"service administrator added with `capacitysim users add` "
                                                      f"(service policy administrator_registration, on behalf of {by})")
        private_file(bank)  # the bank (and its WAL files): owner only
    token, key_id, digest = new_token()
    store.add_user(name, role, key_id, digest)
    store.close()
    click.echo(token)
    click.echo(f"user {name!r} ({role}) added to {store.where}; the token above is shown once (only its hash is "
               "stored)", err=True)


@users.command("revoke")
@click.argument("name")
@click.option("--data", "data_dir", type=click.Path(file_okay=False), default="capacitysim-data", show_default=True,
              help="The service's data folder (as `capacitysim serve --data`).")
@database_option
def revoke(name, data_dir, database):
    """Revoke a user: their token is refused from now on (401), on every server of the store.

    The user's record, jobs and journal rows stay; the journal names the revocation and the operating-system
    user who ran this command. A bank administrator stays registered in the bank's own journal (revoking
    the service user stops their sign-offs through the service). To give the person access again, add them
    under another name (a name is never reused).
    """
    from pathlib import Path

    from capacitysim.service.store import open_store, operator

    store = open_store(database, Path(data_dir))
    out = store.revoke_user(name, by=operator("capacitysim users revoke"))
    store.close()
    click.echo(f"user {out['name']!r} ({out['role']}) revoked in {store.where} at {out['revoked_at']}: their token "
               "is refused from now on", err=True)


@users.command("list")
@click.option("--data", "data_dir", type=click.Path(file_okay=False), default="capacitysim-data", show_default=True,
              help="The service's data folder (as `capacitysim serve --data`).")
@database_option
@json_option
def list_cmd(data_dir, database, as_json):
    """The users of the service (names, roles, when added and revoked; never tokens)."""
    from pathlib import Path

    from capacitysim.service.store import open_store

    store = open_store(database, Path(data_dir))
    rows = store.users()
    store.close()
    if as_json:
        emit_json(rows)
        return
    for r in rows:
        click.echo(f"{r['name']:<30} {r['role']:<14} {r['created_at']}" + (" (revoked)" if r["revoked_at"] else ""))
