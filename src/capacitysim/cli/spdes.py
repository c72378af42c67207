"""CLI commands of the treatment capacity check: ``capacitysim spdes check`` and ``spdes phosphorus``.

Exit codes of ``spdes check``: 0 treatment capacity shown (not prohibited under 15 RCNY § 18-37(b),
or non-negative permitted-flow headroom for a plant outside the watershed); 1 not shown (PROHIBITED,
or negative headroom; the table or JSON is still printed); 2 bad input (one line naming the field,
the value and what is allowed); 3 refused (a stale record with ``--strict-record-age``).
"""

from __future__ import annotations

import click

from capacitysim.cli import cli
from capacitysim.cli.common import check_output, emit_json, emit_table, json_option, submittal_options
from capacitysim.rules.spdes import BASES, RECORD_MAX_AGE_DAYS


@cli.group()
def spdes():
    """Treatment plant capacity: SPDES flow limit (15 RCNY § 18-37(b) for watershed plants, permitted-flow headroom
    for others) and phosphorus limits (§ 18-36(a)(8))."""


@spdes.command()
@click.option("--plant", "plant_file",
              help="Plant TOML file (name, watershed, spdes_permit, flow_limit_mgd, basis, receiving_water), or a bundled "
                   "plant name (sample-wwtp); the options below override it.")
@click.option("--flows", help="Daily flow CSV (date,flow_mgd), or a bundled record name (sample-wwtp).")
@click.option("--dmr", help="EPA ECHO effluent chart download (CSV); the monthly averages of parameter 50050 are used.")
@click.option("--watershed/--not-watershed", "watershed", default=None,
              help="Does the plant discharge within the NYC watershed? Required unless the --plant file says it. "
                   "Watershed: 15 RCNY § 18-37(b). Not: the permitted-flow headroom under the plant's SPDES permit.")
@click.option("--limit-mgd", metavar="FLOAT",
              help="The permit's flow limit [MGD] (default: the plant file's flow_limit_mgd; with --dmr, then the DMR's limit).")
@click.option("--basis", metavar=f"[{'|'.join(BASES)}]", default=None,
              help="The permit's averaging basis: calendar month, 30-day rolling, 12-month rolling "
                   "[default: the plant file's, else month].")
@click.option("--as-of", help="Date of the check YYYY-MM-DD (default: --application-date, else today).")
@click.option("--application-date", help="Date of the application YYYY-MM-DD: the as-of date when --as-of is not given.")
@click.option("--strict-record-age", is_flag=True,
              help=f"Refuse (exit 3) a record ending more than {RECORD_MAX_AGE_DAYS} days before the as-of date "
                   "(default: a warning; policy record_max_age_days).")
@click.option("--added-gpd", metavar="FLOAT", multiple=True,
              help="Average daily flow of the new connection [gpd]; repeat for pending connections (summed).")
@click.option("--date-column", default="date", show_default=True, help="Date column of --flows.")
@click.option("--flow-column", default="flow_mgd", show_default=True, help="Flow column of --flows.")
@click.option("--units", metavar="[mgd|gpd]", help="Unit of the flow column (default: from its name, else MGD).")
@click.option("--outfall", help="With --dmr: the outfall (perm_feature_nmbr) when the file has several.")
@click.option("--location", help="With --dmr: the monitoring location when the file has several.")
@click.option("--report", help="Write an HTML report with the figure here (never an input, a link or a folder).")
@click.option("--committed", "committed_bank", type=click.Path(dir_okay=False), metavar="BANK",
              help="Credit bank file: add the average flow it has committed on every basin registered as draining to "
                   "this plant (by its SPDES permit number, else its name) to the plant's flow, before the added flow "
                   "(the JSON's committed_gpd).")
@click.option("--application", "committed_application", metavar="APP",
              help="With --committed: the applicant's own application id, left out of the commitments.")
@submittal_options
@json_option
def check(plant_file, flows, dmr, watershed, limit_mgd, basis, as_of, application_date, strict_record_age, added_gpd,
          date_column, flow_column, units, outfall, location, report, committed_bank, committed_application, as_json,
          **kwargs):
    """Treatment capacity for a new connection: prior-12-month violations, added flow, headroom.

    A plant discharging within the NYC watershed is checked under 15 RCNY § 18-37(b) (prohibited or
    not); any other plant by its permitted-flow headroom after the added flow. Exit code 0 when
    treatment capacity is shown, 1 when it is not (PROHIBITED, or negative headroom; the table or
    JSON is still printed), 2 for bad input, 3 when the record is refused (--strict-record-age).
    With --committed BANK, the flow the bank has committed to the plant is part of the baseline.
    """
    from capacitysim.cli.common import run_process, submittal_values
    from capacitysim.workflows.spdes import resolve_flows_path, resolve_plant_path

    def outputs(inputs):  # the report must never overwrite an input (checked before any work)
        check_output(report, [None if flows is None else resolve_flows_path(flows), dmr,
                              None if plant_file is None else resolve_plant_path(plant_file), sub_file, committed_bank],
                     option="--report")

    sub_file = kwargs.get("submittal__submittal_file")
    values = dict(plant=plant_file, flows=flows, dmr=dmr, watershed=watershed, limit_mgd=limit_mgd, basis=basis, as_of=as_of,
                  application_date=application_date, strict_record_age=strict_record_age, added_gpd=added_gpd,
                  date_column=date_column, flow_column=flow_column, units=units, outfall=outfall, location=location,
                  committed=committed_bank, application=committed_application, submittal=submittal_values(kwargs))
    proc, _, result = run_process("spdes-check", values, before=outputs)
    if report:
        proc.report(result, report)
    if as_json:
        out = proc.document(result)
        if report:
            out["report"] = str(report)
        emit_json(out)
        for w in result.warnings:
            click.echo(f"warning: {w}", err=True)
    else:
        _print_check(result, report)
    if result.status != "pass":
        click.get_current_context().exit(1)


def _print_check(result, report) -> None:
    rows = list(result.submittal.rows())
    rows += result.summary_rows()
    title = ("SPDES flow limit check (15 RCNY § 18-37(b))" if result.watershed
             else "SPDES permitted flow headroom (plant outside the NYC watershed)")
    emit_table(rows, title=title)
    click.echo("")
    click.echo(result.verdict_line())
    if not result.watershed:
        click.echo("15 RCNY § 18-37(b) does not apply: the plant does not discharge within the NYC watershed "
                   "(--not-watershed); the treatment capacity shown is the permitted-flow headroom.")
    for w in result.warnings:
        click.echo(f"warning: {w}")
    for c in result.conditions():
        click.echo(f"condition ({c['applies_when']}): {c['text']} ({c['citation']})")
    for g in result.gaps[:5]:
        click.echo(f"gap (not filled): {g}")
    if len(result.gaps) > 5:
        click.echo(f"... and {len(result.gaps) - 5} more gaps")
    for note in result.notes:
        click.echo(f"note: {note}")
    for p in result.policies():
        value = "" if p["value"] is None else f" = {p['value']}"
        click.echo(f"policy {p['name']}{value}: {p['text']} ({p['status']})")
    if report:
        click.echo(f"report: {report}")


@spdes.command("sample-record")
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--end", default=None, help="Last day of the record, YYYY-MM-DD (default yesterday).")
def sample_record(path, end):
    """Write the sample plant's made-up daily record (three years ending yesterday) to PATH.

    The bundled `sample-wwtp` record ends on 2024-12-31; this one is recent on any date, so a treatment
    check as of today (and the bank's 90-day age policy for cited checks) can be tried with it.
    """
    import datetime as dt

    from capacitysim.cli.common import check_output
    from capacitysim.errors import InputError
    from capacitysim.files import atomic_write_text
    from capacitysim.workflows.spdes import recent_sample_record

    if end is not None:
        try:
            end = dt.date.fromisoformat(end)
        except ValueError:
            raise InputError(f"--end {end!r}: allowed: a date YYYY-MM-DD") from None
    out = check_output(path, option="PATH")
    atomic_write_text(out, recent_sample_record(end))
    click.echo(f"wrote {out}")


@spdes.command()
@click.option("--permitted-gpd", type=float, required=True, help="SPDES permitted total flow [gpd].")
@click.option("--watershed/--not-watershed", default=None, help="Does the plant discharge within the NYC watershed? "
              "(required: § 18-36(a)(8) applies only there)")
@json_option
def phosphorus(permitted_gpd, watershed, as_json):
    """Total phosphorus limit for a SPDES permitted flow (15 RCNY § 18-36(a)(8), watershed plants)."""
    from capacitysim.errors import InputError
    from capacitysim.workflows.spdes import phosphorus as limit

    if watershed is None:
        raise InputError("--watershed or --not-watershed is required: § 18-36(a)(8) applies only to plants discharging "
                         "within the NYC watershed")
    out = limit(permitted_gpd, watershed)
    if as_json:
        emit_json(out)
        return
    if not out["applies"]:
        emit_table([("permitted flow", f"{permitted_gpd:,.0f} gpd"), ("§ 18-36(a)(8)", "does not apply"),
                    ("why", out["why"])], title="Phosphorus limit (15 RCNY § 18-36(a)(8))")
        return
    emit_table(
        [
            ("permitted flow", f"{permitted_gpd:,.0f} gpd"),
            ("table row", out["band"]),
            ("total phosphorus limit", f"{out['total_phosphorus_limit_mg_l']:g} mg/l"),
        ],
        title="Phosphorus limit (15 RCNY § 18-36(a)(8))",
    )
