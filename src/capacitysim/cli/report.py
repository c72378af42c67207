"""``capacitysim report DOC.json --out X.html``: a report from a stored result document (issue 27, item 3)."""

from __future__ import annotations

import json

import click

from capacitysim.cli import cli
from capacitysim.cli.common import check_output
from capacitysim.errors import InputError


@cli.command("report")
@click.argument("document", type=click.Path(exists=True, dir_okay=False))
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False), help="The HTML file written.")
def report(document, out):
    """Render the HTML report of a stored result document, from the document alone: the `--json` of
    capacity, headroom, detention, spdes check, sweep summarize or bank register (the same HTML as the
    command's own --report). A sweep run, credits quantify and credits connection have no HTML report;
    a detention or SPDES document printed before its report keys is refused naming the missing field."""
    from capacitysim.report.stored import write_stored_report

    check_output(out, [document], option="--out")
    try:
        with open(document, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"document {document}: not a JSON document ({exc}); allowed: the --json of a workflow") from None
    path = write_stored_report(doc, out)
    click.echo(f"report written: {path}")
