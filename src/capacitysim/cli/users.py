"""CLI: ``capacitysim users add NAME --role ROLE --data DIR`` (a bearer token for the service) and ``users list``."""

from __future__ import annotations

import click

from capacitysim.cli import cli
from capacitysim.cli.common import emit_json, json_option

ROLES = ("engineer", "administrator", "municipal", "reviewer")


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
def add(name, role, data_dir, registered_by):
    """Add a user and print their new bearer token (shown once; only its hash is stored).

    An administrator is also registered as bank administrator of the service's bank (<data>/bank.sqlite):
    the first one creates the bank; later ones are registered by --registered-by (service policy
    administrator_registration: the operator who runs this command acts for that administrator, and the
    bank's journal names both).
    """
    from pathlib import Path

    from capacitysim.bank import Ledger, person_name
    from capacitysim.errors import RefusedError
    from capacitysim.service.auth import new_token
    from capacitysim.service.store import Store

    name = person_name("NAME", name)
    data = Path(data_dir)
    store = Store(data / "service.sqlite")
    if store.user_by_name(name) is not None:
        raise RefusedError(f"a user named {name!r} exists already in {data}")
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
    token, key_id, digest = new_token()
    store.add_user(name, role, key_id, digest)
    click.echo(token)
    click.echo(f"user {name!r} ({role}) added to {data}; the token above is shown once (only its hash is stored)",
               err=True)


@users.command("list")
@click.option("--data", "data_dir", type=click.Path(file_okay=False), default="capacitysim-data", show_default=True)
@json_option
def list_cmd(data_dir, as_json):
    """The users of the service (names and roles; never tokens)."""
    from pathlib import Path

    from capacitysim.service.store import Store

    rows = Store(Path(data_dir) / "service.sqlite").users()
    if as_json:
        emit_json(rows)
        return
    for r in rows:
        click.echo(f"{r['name']:<30} {r['role']:<14} {r['created_at']}" + (" (revoked)" if r["revoked_at"] else ""))
