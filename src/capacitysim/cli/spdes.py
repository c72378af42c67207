"""CLI commands of the treatment capacity check: ``capacitysim spdes check`` and ``spdes phosphorus``."""

from __future__ import annotations

import click

from capacitysim.cli import cli
from capacitysim.cli.common import check_output, emit_json, emit_table, json_option
from capacitysim.rules.spdes import BASES


@cli.group()
def spdes():
    """Treatment plant capacity: SPDES flow limit (15 RCNY § 18-37(b)) and phosphorus limits (§ 18-36(a)(8))."""


@spdes.command()
@click.option("--flows", help="Daily flow CSV (date,flow_mgd), or a bundled record name (sample-wwtp).")
@click.option("--dmr", help="EPA ECHO effluent chart download (CSV); the monthly averages of parameter 50050 are used.")
@click.option("--limit-mgd", type=float, help="The permit's flow limit [MGD] (with --dmr: default the DMR's limit).")
@click.option("--basis", type=click.Choice(list(BASES)), default="month", show_default=True,
              help="The permit's averaging basis: calendar month, 30-day rolling, 12-month rolling.")
@click.option("--as-of", help="Date of the check YYYY-MM-DD (default: the record's last day).")
@click.option("--added-gpd", type=float, multiple=True,
              help="Average daily flow of the new connection [gpd]; repeat for pending connections (summed).")
@click.option("--date-column", default="date", show_default=True, help="Date column of --flows.")
@click.option("--flow-column", default="flow_mgd", show_default=True, help="Flow column of --flows.")
@click.option("--units", type=click.Choice(["mgd", "gpd"]), help="Unit of the flow column (default: from its name, else MGD).")
@click.option("--outfall", help="With --dmr: the outfall (perm_feature_nmbr) when the file has several.")
@click.option("--location", help="With --dmr: the monitoring location when the file has several.")
@click.option("--report", help="Write an HTML report with the figure here (never an input, a link or a folder).")
@json_option
def check(flows, dmr, limit_mgd, basis, as_of, added_gpd, date_column, flow_column, units, outfall, location, report, as_json):
    """Would a new connection be prohibited? Prior-12-month violations, added flow, headroom."""
    from capacitysim.workflows.spdes import resolve_flows_path, run_check

    # the report must never overwrite the flow record it is computed from (checked before any work)
    check_output(report, [None if flows is None else resolve_flows_path(flows), dmr], option="--report")
    result = run_check(
        flows=flows, dmr=dmr, limit_mgd=limit_mgd, basis=basis, as_of=as_of, added_gpd=list(added_gpd),
        date_column=date_column, flow_column=flow_column, units=units, outfall=outfall, location=location,
    )
    if report:
        from capacitysim.report.spdes import write_report

        write_report(result, report)
    if as_json:
        out = result.to_dict()
        if report:
            out["report"] = str(report)
        emit_json(out)
        return
    emit_table(result.summary_rows(), title="SPDES flow limit check (15 RCNY § 18-37(b))")
    click.echo("")
    click.echo(result.verdict_line())
    for g in result.gaps[:5]:
        click.echo(f"gap (not filled): {g}")
    if len(result.gaps) > 5:
        click.echo(f"... and {len(result.gaps) - 5} more gaps")
    for note in result.notes:
        click.echo(f"note: {note}")
    if report:
        click.echo(f"report: {report}")


@spdes.command()
@click.option("--permitted-gpd", type=float, required=True, help="SPDES permitted total flow [gpd].")
@json_option
def phosphorus(permitted_gpd, as_json):
    """Total phosphorus limit for a SPDES permitted flow (15 RCNY § 18-36(a)(8))."""
    from capacitysim.workflows.spdes import phosphorus as limit

    out = limit(permitted_gpd)
    if as_json:
        emit_json(out)
        return
    emit_table(
        [
            ("permitted flow", f"{permitted_gpd:,.0f} gpd"),
            ("table row", out["band"]),
            ("total phosphorus limit", f"{out['total_phosphorus_limit_mg_l']:g} mg/l"),
        ],
        title="Phosphorus limit (15 RCNY § 18-36(a)(8))",
    )
