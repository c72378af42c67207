"""CLI of I/I credit quantification and a connection's credits (``capacitysim credits``), BJC I/I offset program.

Bad input exits 2 (see :mod:`capacitysim.cli`).
"""

from __future__ import annotations

import click

from capacitysim.cli import cli
from capacitysim.cli.common import emit_json, emit_table, fmt, json_option
from capacitysim.errors import InputError
from capacitysim.rules import ii_offset


# --- credits: quantification and connections -------------------------------------------------------


@cli.group()
def credits():
    """I/I quantification (Tables 174-19.1 to 174-19.3) and the offset a connection needs."""


@credits.command()
@click.argument("project_file", type=click.Path(dir_okay=False))
@json_option
def quantify(project_file, as_json):
    """Print the itemised I/I remediation engineering report of PROJECT_FILE (TOML)."""
    from capacitysim.io.project_files import read_project

    proj = read_project(project_file)
    meta = proj["project"]
    result = ii_offset.quantify_items(proj["items"], engineer=meta.get("engineer", ""))
    out = {"project": meta, "storm": ii_offset.program_storm(), **result}
    if as_json:
        emit_json(out)
        return
    click.echo(f"I/I remediation engineering report: {meta['id']} - {meta['name']}")
    click.echo(f"Prepared by {meta['engineer']}" + (f" (license {meta['pe_license']})" if meta.get("pe_license") else ""))
    for key in ("municipal_user", "basin", "description"):
        if meta.get(key):
            click.echo(f"{key.replace('_', ' ').capitalize()}: {meta[key]}")
    click.echo("Quantification per the Binghamton-Johnson City I/I Offset Program, Tables 174-19.1, 174-19.2, 174-19.3;")
    storm = out["storm"]
    click.echo(f"TR-55 items: {storm['depth_in']:g} in, 1-year {storm['duration_hr']}-hour {storm['distribution']} storm, "
               f"{storm['duration_hr']}-hour runoff volume as gpd.")
    click.echo("")
    for i, r in enumerate(result["items"], 1):
        flag = "" if r["qualifies"] else "  [DOES NOT QUALIFY]"
        click.echo(f"{i:>2}. {r['type']}  {r['location']}{flag}")
        click.echo(f"    {r['quantity']}: {r['basis']}")
        if r["note"]:
            click.echo(f"    note: {r['note']}")
        click.echo(f"    {r['reference']}: {fmt(r['gpd'], 1)} gpd")
    click.echo("")
    click.echo(f"Total I/I removed (qualifying items): {result['total_gpd']:,.1f} gpd")


def _parse_uses(uses: tuple[str, ...]) -> dict[str, float]:
    out = {}
    for u in uses:
        name, sep, count = u.partition("=")
        if not sep:
            raise InputError(f"--use must be NAME=COUNT, got {u!r}")
        try:
            out[name.strip()] = out.get(name.strip(), 0.0) + float(count)
        except ValueError:
            raise InputError(f"--use {name}: COUNT must be a number, got {count!r}") from None
    return out


@credits.command()
@click.option("--use", "uses", multiple=True, required=True, help="NAME=COUNT of a design flow use (repeatable).")
@click.option("--flows", "flows_path", default=None, type=click.Path(dir_okay=False),
              help="Your design flow table (TOML) instead of the bundled one.")
@click.option("--peaking-factor", type=float, default=None, help="A fixed peaking factor instead of Harmon's.")
@click.option("--population", type=float, default=None, help="Persons served, for Harmon's factor (default flow / 100 gpcd).")
@click.option("--offset-ratio", type=float, default=ii_offset.DEFAULT_OFFSET_RATIO, show_default=True)
@json_option
def connection(uses, flows_path, peaking_factor, population, offset_ratio, as_json):
    """Peak sewage flow of a new or modified connection and the credits it needs."""
    from capacitysim.io.project_files import read_design_flows

    table = read_design_flows(flows_path)
    result = ii_offset.connection_offset(_parse_uses(uses), table["uses"], design_flow_table=table["path"],
                                         peaking_factor=peaking_factor, population_persons=population,
                                         offset_ratio=offset_ratio, field="--use")
    if as_json:
        emit_json(result.to_dict())
        return
    emit_table([(f"{u.use} x {u.count:g} {u.unit}", f"{u.gpd_per_unit:g} gpd each = {u.average_gpd:,.0f} gpd"
                 + ("" if u.verified else "  (unverified)")) for u in result.uses]
               + [("average design flow", f"{result.average_gpd:,.0f} gpd"),
                  ("peaking factor", f"{result.peaking_factor:.3f} ({result.peaking_basis})"),
                  ("peak sewage flow", f"{result.peak_flow_gpd:,.0f} gpd"),
                  ("offset required", f"{'yes' if result.offset_required else 'no'} (more than {result.threshold_gpd:,.0f} gpd)"),
                  ("credits required", f"{result.credits_required_gpd:,.0f} gpd at {result.offset_ratio:g}:1")],
               "connection flow")
    if result.unverified_values:
        click.echo(f"note: design flows not verified against their source: {', '.join(result.unverified_values)} "
                   f"({result.design_flow_table})", err=True)
