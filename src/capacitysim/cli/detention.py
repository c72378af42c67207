"""CLI: ``capacitysim detention SITE.toml`` - NYC detention design (15 RCNY § 31-03).

Exit codes: 0 the design passes; 1 it fails (infeasible, a failed check, SWMM disagreeing), the
table or JSON still printed; 2 bad input (one line naming the field, the value and what is allowed);
3 refused by the rules (one line citing the section or the named policy).
"""

from __future__ import annotations

import click

from capacitysim.cli import cli
from capacitysim.cli.common import (
    check_export_dir,
    check_output,
    emit_json,
    emit_table,
    export_option,
    json_option,
    submittal_options,
)


@cli.command()
@click.argument("site_file")
@click.option("--rule", "rule", default="nyc-2012", show_default=True, help="Rule set: a bundled name or a TOML file (extends = \"nyc-2012\").")
@click.option("--report", "report", help="Write the HTML report here (a new file or a plain file; never an input, a link or a folder).")
@click.option("--no-swmm", is_flag=True, help="Skip the SWMM check.")
@click.option("--approved-on", "approved_on", metavar="YYYY-MM-DD",
              help="Date DEP approved the system (not after today), over the site file's [submittal] approved_on: the "
                   "triennial certifications of 15 RCNY § 31-04(a)(8) are listed with their due dates.")
@export_option
@submittal_options
@json_option
def detention(site_file, rule, report, no_swmm, approved_on, export_dir, as_json, **submittal):
    """Size the detention system and orifice of a NYC site (release rate, volume, routing, SWMM check).

    Exit code 0 when the design passes, 1 when it fails (the result is still printed), 2 for bad
    input, 3 when the rules refuse the site. The submittal identification comes from the site file's
    [submittal] table, overridden by --submittal FILE, overridden by the single options. The approval
    date (--approved-on, else the site file's [submittal] approved_on) dates the triennial inspection and
    certification of 15 RCNY § 31-04(a)(8); a date after today is bad input (exit 2): it records an
    approval DEP has given.
    """
    from capacitysim.cli.common import run_process, submittal_values
    from capacitysim.report.detention import verdict_line

    sub_file = submittal.get("submittal__submittal_file")

    def outputs(inputs):  # never over an input: the site file, any rule-set file read, the submittal file
        paths = [site_file, *inputs.rule.sources, sub_file]
        check_output(report, paths, option="--report")
        check_export_dir(export_dir, paths)

    values = dict(approved_on=approved_on, rule=rule, site=site_file, swmm=False if no_swmm else None,
                  submittal=submittal_values(submittal))
    proc, _, result = run_process("detention-design", values, before=outputs)
    if report:
        proc.report(result, report)
    written = None
    if export_dir:
        from capacitysim.io.export import export_detention

        written = export_detention(export_dir, result.to_dict(), result.series, result.steps)
    if as_json:
        out = proc.document(result)
        if report:
            out["report"] = str(report)
        if written:
            out["export"] = {"folder": str(export_dir), "files": sorted(written)}
        emit_json(out)
    else:
        _print_table(result, verdict_line(result))
        if written:
            click.echo(f"exported: {export_dir}: {', '.join(sorted(written))}")
    if result.status != "pass":
        click.get_current_context().exit(1)


def _print_table(result, verdict: str) -> None:
    from capacitysim.report.format import number
    from capacitysim.workflows.detention import TRIENNIAL_KIND

    n = result.numbers
    d = n["orifice_diameter_in"]
    rows = list(result.submittal.rows())
    rows += [
        ("allowable flow", f"{number(n['allowable_flow_cfs'], 'cfs')} cfs"),
        ("release rate", f"{number(n['release_rate_cfs'], 'cfs')} cfs"),
        ("required volume", f"{number(n['required_volume_cf'], 'ft3')} ft3 (provided {number(n['storage_provided_cf'], 'ft3')} ft3)"),
        ("orifice diameter", "infeasible" if d is None else f"{number(d, 'in')} in"),
        ("peak outflow", f"{number(n['peak_outflow_cfs'], 'cfs')} cfs"),
        ("max depth", f"{number(n['max_depth_ft'], 'ft')} ft of {number(n['system_height_ft'], 'ft')} ft"),
    ]
    if n["swmm_peak_outflow_cfs"] is not None:
        rows.append(("SWMM check", f"{number(n['swmm_peak_outflow_cfs'], 'cfs')} cfs, {number(n['swmm_max_depth_ft'], 'ft')} ft "
                                   f"({'agrees' if n['swmm_agreement'] else 'DISAGREES'} within 2 %)"))
    rows.append(("status", verdict))
    emit_table(rows, title=f"Detention design: {result.site.name}")
    for p in result.problems:
        click.echo(f"  - {p}")
    for c in result.checks:
        if c.result != "pass":
            click.echo(f"  check {c.criterion}: {c.result} ({c.value}; {c.requirement}, {c.citation})")
    for c in result.conditions:
        click.echo(f"  condition: {c['text']} ({c['citation']})")
        if c.get("kind") == TRIENNIAL_KIND:  # the dated record (its due dates are in its text): who, how counted
            click.echo(f"    certifier (one of): {', '.join(c['certifier'])}")
            click.echo(f"    due dates: {c['due_on_basis']}")
    unused = [k for k in result.rules.unverified() if k not in result.unverified_values_used]
    if unused:
        click.echo(f"  unverified rule-set values not used by this design: {', '.join(unused)} (see the report)")
