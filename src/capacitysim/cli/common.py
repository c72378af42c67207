"""Helpers shared by the CLI commands: JSON output, tables, unit options."""

from __future__ import annotations

import click

from capacitysim.io.files import dumps_json

json_option = click.option("--json", "as_json", is_flag=True, help="Print a JSON document instead of a table.")


def emit_json(obj) -> None:
    click.echo(dumps_json(obj))


def emit_table(rows: list[tuple[str, object]], title: str | None = None) -> None:
    """Print label/value rows aligned, with an optional title line."""
    if title:
        click.echo(title)
        click.echo("-" * len(title))
    width = max((len(label) for label, _ in rows), default=0)
    for label, value in rows:
        click.echo(f"{label:<{width}}  {value}")


def fmt(value: float, digits: int = 3) -> str:
    """A number for a table: fixed digits, thousands separators for large values."""
    if abs(value) >= 1000:
        return f"{value:,.{max(digits - 3, 0)}f}"
    return f"{value:.{digits}f}"
