"""``capacitysim list storms|models|covers|rule-sets``: what capacitysim ships, one row per item."""

from __future__ import annotations

import click

from capacitysim.cli import cli
from capacitysim.cli.common import emit_json, emit_table, json_option

#: The kinds ``capacitysim list`` knows, with the title of their table.
KINDS = {
    "storms": "Bundled design storms (--storm NAME; or a storm spec --storm DIST:DEPTH, e.g. type2:3.2in)",
    "models": "Bundled SWMM models (--model NAME or models/NAME.inp)",
    "covers": "Cover types of the curve number table (--cover KEY --cn-table TABLE)",
    "rule-sets": "Bundled rule sets (--rule NAME)",
}


def _items(kind: str) -> list[dict]:
    from capacitysim.io import bundled

    return {
        "storms": bundled.list_storms,
        "models": bundled.list_models,
        "covers": bundled.list_covers,
        "rule-sets": bundled.list_rule_sets,
    }[kind]()


def _cn_text(cn: dict) -> str:
    return "/".join("-" if v is None else f"{v:g}" for v in cn.values())


def _row(kind: str, item: dict) -> tuple[str, str]:
    """The label and the one-line description of an item in the table."""
    if kind == "storms":
        rp = f", {item['return_period_yr']:g}-yr" if item["return_period_yr"] is not None else ""
        where = f", {item['location']}" if item["location"] else ""
        return item["name"], (f"{item['depth_in']:g} in, {item['duration_hr']:g} h, NRCS Type {item['distribution']}"
                              f"{rp}{where}")
    if kind == "models":
        desc = f": {item['description']}" if item["description"] else ""
        return item["name"], f"{item['nodes']} nodes, {item['links']} links{desc}"
    if kind == "covers":
        return item["cover"], f"[{item['cn_table']}] CN A/B/C/D {_cn_text(item['cn'])}: {item['description']}"
    extends = f" (extends {item['extends']})" if item["extends"] else ""
    return item["name"], f"{item['title']}{extends}"


@cli.command("list")
@click.argument("kind", type=click.Choice(list(KINDS)))
@json_option
def list_(kind, as_json):
    """List what is bundled: design storms, SWMM models, cover types (curve numbers) or rule sets."""
    items = _items(kind)
    if as_json:
        extra = {}
        if kind == "storms":
            from capacitysim.io.storms import SPEC_GRAMMAR, SPEC_SOURCE

            extra = {"spec": {"grammar": SPEC_GRAMMAR, "source": SPEC_SOURCE}}
        emit_json({"kind": kind, "count": len(items), "items": items, **extra})
        return
    emit_table([_row(kind, item) for item in items], title=KINDS[kind])
    if kind == "storms":  # the grammar of the storms that are not bundled: a note, off the table (stderr)
        from capacitysim.io.storms import SPEC_GRAMMAR

        click.echo(f"\nAny NRCS 24-hour storm: --storm {SPEC_GRAMMAR}. Or a storm TOML file "
                   "(docs/reference/storm.md).", err=True)
