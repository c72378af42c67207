"""CLI of the network capacity demonstration: ``capacitysim capacity`` and ``capacitysim basins``."""

from __future__ import annotations

import os

import click

from capacitysim.cli import cli
from capacitysim.cli.common import check_export_dir, emit_json, emit_table, export_option, json_option, submittal_options


@cli.command()
@click.option("--model", "model_path", required=True, help="SWMM 5 .inp file (only read), or a bundled model's name (capacitysim list models).")
@click.option("--storm", help="Design storm: a bundled name (binghamton-1yr-24h), a storms/*.toml file or a spec DIST:DEPTH (type2:3.2in, NRCS 24-h). Default: the model's rainfall.")
@click.option("--connect", "connects", multiple=True, metavar="NODE=GPD",
              help="New connection: NODE=FLOW, the average daily flow (a bare number is gpd; 0.05MGD, 35gpm, 0.1cfs, "
                   "2L/s are converted), or NODE=UNITSxGPD_PER_UNIT (building program). Repeatable.")
@click.option("--peaking", default="pattern", show_default=True,
              help="How connections are peaked: 'pattern' (the model's diurnal DWF pattern) or a constant peaking factor.")
@click.option("--remediate", "remediates", multiple=True, metavar="SPEC",
              help="I/I remediation: basin=OUTLET,fraction=0.3 | basin=OUTLET,gpd=50000 | nodes=A;B,fraction=25% | "
                   "nodes=A;B,sump_pumps=12 | basin=OUTLET,roof_sqft=20000 (or roof_ac=) (disconnected sources: in the "
                   "before run only). Repeatable.")
@click.option("--measured-ii", "measured", multiple=True, metavar="SPEC",
              help="Measured I/I: analysis=credit.json,nodes=A;B[,period=post|pre|change][,gauge=RG]: the fitted RTK sets "
                   "of a metered-credit analysis (capacitysim credits meter --json) in place of the RDII of the nodes the "
                   "metered sub-basin drains to. post (default): the post set in both runs; change: pre before, post after. "
                   "Repeatable.")
@click.option("--criteria", "criteria_file", type=click.Path(dir_okay=False), help="TOML file overriding the default criteria.")
@click.option("--plant", help="The plant outfall (default: the outfall with the largest tributary dry-weather flow).")
@click.option("--spinup-hr", type=float, default=None,
              help="Hours of dry-weather simulation prepended to the model's period (default 6; none for a model that starts "
                   "from a hotstart file or whose event is its initial state; 0 runs the model's period as it is).")
@click.option("--work-dir", type=click.Path(file_okay=False),
              help="Keep the runs' files here, relative or absolute (default: a temporary folder, removed at the end).")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), help="Write the HTML report here.")
@export_option
@click.option("--crs", default=None, metavar="AUTHORITY:CODE",
              help="Coordinate reference system of the model's map (EPSG:2263) for the GeoJSON export, when the "
                   "model does not state it in a comment (;;CRS: EPSG:2263). Default: none stated.")
@click.option("--committed", "committed_bank", type=click.Path(dir_okay=False), metavar="BANK",
              help="Credit bank file: inject every flow it has committed on the basins whose registered model is this "
                   "model (approved or reserved, not yet connected) into the AFTER run, before the connections: the "
                   "checks on the change judge them and the connections together against the model of record "
                   "(program policy committed_baseline = cumulative; the JSON's `committed`).")
@click.option("--application", "committed_application", metavar="APP",
              help="With --committed: the applicant's own application id, left out of the commitments.")
@click.option("--next-steps/--no-next-steps", "next_steps", default=True, show_default=True,
              help="On a FAIL: the largest connection that passes at each connection node (a bounded headroom search, "
                   "a few SWMM runs each) and the I/I removal that would offset it.")
@submittal_options
@json_option
def capacity(model_path, storm, connects, peaking, remediates, measured, criteria_file, plant, spinup_hr, work_dir, report_path,
             export_dir, crs, committed_bank, committed_application, next_steps, as_json, **submittal):
    """Capacity demonstration: SWMM before and after new connections and/or I/I remediation.

    Prints the verdict (pass | fail | untrusted) and the failed checks; exit code 0 for pass,
    1 for fail or untrusted. With --committed BANK, the bank's committed flows on this model are in
    the after run with the connections (program policy committed_baseline).
    """
    from capacitysim.cli.common import check_output, run_process, submittal_values

    def outputs(inputs):  # never over an input (checked before any run)
        paths = [inputs.model, criteria_file, storm if storm and os.path.exists(storm) else None, committed_bank,
                 *[m.analysis for m in inputs.measured_ii or []]]
        check_output(report_path, paths)
        check_export_dir(export_dir, paths)

    values = dict(model=model_path, storm=storm, connections=connects, peaking=peaking, remediations=remediates,
                  measured_ii=measured, criteria=criteria_file, plant=plant, spinup_hr=spinup_hr, crs=crs, committed=committed_bank,
                  application=committed_application, submittal=submittal_values(submittal), next_steps=next_steps)
    proc, inputs, d = run_process("capacity-demonstration", values, work_dir=work_dir, before=outputs)
    with d:  # the temporary run folder goes when the command ends (kept with --work-dir)
        _print_capacity(d, report_path, as_json, export_dir)
    if d.verdict != "pass":
        click.get_current_context().exit(1)


def committed_lines(block: dict | None) -> list[str]:
    """The committed flows of a result document as lines of the readable output (none without them)."""
    from capacitysim.report.format import number

    if not block:
        return []
    head = (f"committed flows: {len(block['flows'])} from bank {block['bank']} (head {str(block['bank_head'])[:12]}..., "
            f"as of {block['as_of']}): {number(block['total_gpd'], 'gpd')} gpd average, "
            f"{number(block.get('total_peak_gpd'), 'gpd')} gpd peak")
    if block.get("excluded"):
        head += f"; {block['excluded']} left out (the applicant's own)"
    lines = [head]
    for f in block["flows"]:
        lines.append(f"  {f['application']:<16} {str(f.get('basin') or '-'):<12} {str(f.get('node') or '-'):<12} "
                     f"{number(f['average_gpd'], 'gpd'):>12} gpd avg {number(f['peak_gpd'], 'gpd'):>12} gpd peak  {f['status']}")
    for u in block.get("unplaced") or []:
        lines.append(f"  not in the runs: {u['application']} ({u['reason']})")
    return lines


def _print_capacity(d, report_path, as_json, export_dir=None):
    from capacitysim.report.capacity import write_report
    from capacitysim.report.format import number

    doc = d.to_dict()
    if report_path:
        write_report(doc, report_path)
    if export_dir:
        from capacitysim.io.export import export_demonstration

        written = export_demonstration(export_dir, doc, d.before, d.after)
        doc["export"] = {"folder": str(export_dir), "files": sorted(written)}
    if as_json:
        emit_json(doc)
    else:
        rows = [("verdict", d.verdict.upper()), ("model", str(d.model)), ("rainfall", doc["storm"]),
                ("continuity error before [%]", number(doc["before"]["continuity_error_pct"], "%")),
                ("continuity error after [%]", number(doc["after"]["continuity_error_pct"], "%")),
                ("failed checks", str(doc["failed_checks"]))]
        for c in doc["scenario"].get("connections", []):  # how each flow was read (a bare number is gpd)
            rows.append((f"connection {c['node']} [gpd]", f"{number(c['flow_gpd'], 'gpd')} average daily flow"
                         + (f" ({c['label']})" if c.get("label") else " (given in gpd)")))
        if doc["before"]["plant_peak_inflow_cfs"] is not None:
            rows.append((f"plant {d.plant} peak inflow [cfs]",
                         f"{number(doc['before']['plant_peak_inflow_cfs'], 'cfs')} -> {number(doc['after']['plant_peak_inflow_cfs'], 'cfs')}"))
        if report_path:
            rows.append(("report", str(report_path)))
        if export_dir:
            rows.append(("exported", f"{export_dir}: {', '.join(doc['export']['files'])}"))
        emit_table(rows, "Capacity demonstration")
        for line in committed_lines(doc.get("committed")):
            click.echo(line)
        for ch in doc["checks"]:
            mark = "ok  " if ch["passed"] else ("CONFIRM" if ch["passed"] is None else "FAIL")  # None: not confirmed
            u = ch["unit"]
            click.echo(f"{mark} {ch['criterion']}: {ch['element']} {number(ch['before'], u)} -> {number(ch['after'], u)} "
                       f"(limit {number(ch['limit'], u)} {u})")
        for i in doc["injections"]:
            mark = "ok  " if i["passed"] else "UNTRUSTED"
            click.echo(f"{mark} injected volume, {i['what']} at {i['element']}: intended {number(i['intended_cf'], 'ft3')} ft3, "
                       f"engine received {number(i['received_cf'], 'ft3')} ft3 ({i['difference_pct']:+.2f} %)")
        m = doc.get("margins") or {}
        for r in m.get("tightest", [])[:5]:  # where the system is tight downstream of the connections
            q = r["quantity"]
            click.echo(f"margin {r['element']} {q} {number(r['after'], q)} (limit {number(r['limit'], q)}; "
                       f"margin {number(r['margin'], q)})")
        for r in m.get("existing_deficiencies", []):  # the system's before the change, not the change's
            q = r["quantity"]
            click.echo(f"deficient before the change: {r['element']} {q} {number(r['before'], q)} -> {number(r['after'], q)} "
                       f"(limit {number(r['limit'], q)})")
        ns = doc.get("next_steps") or {}
        for g in ns.get("governing", []):
            click.echo(f"governing ({g['limit_kind']}): {g['text']}")
        for c in ns.get("connections", []):
            if c["largest_passing_gpd"] is not None:
                click.echo(f"next step: {c['node']} takes {number(c['largest_passing_gpd'], 'gpd')} gpd (passes; "
                           f"{number(c['flow_gpd'], 'gpd')} gpd asked, {c['search']['runs']} runs)")
            if c["basin"]:
                click.echo(f"next step: offset by {number(c['ii_removal_gpd'], 'gpd')} gpd of I/I removal in basin "
                           f"{c['basin']} (the peak sewage flow x {c['offset_ratio']:g}, section F): "
                           f"--remediate basin={c['basin']},gpd={c['ii_removal_gpd']:.0f}")
        for w in doc["untrusted_reasons"]:
            click.echo(f"untrusted: {w}")
        for w in doc["warnings"]:
            click.echo(f"warning: {w}")
        for w in doc["fixes"]:
            click.echo(f"changed in the scenario: {w}")


@cli.command()
@click.option("--model", "model_path", required=True, help="SWMM 5 .inp file, or a bundled model's name (capacitysim list models).")
@click.option("--outlet", "outlets", multiple=True, help="Use these nodes as basin outlets instead of the automatic ones. Repeatable.")
@click.option("--plant", help="The plant outfall (default: the outfall with the largest tributary dry-weather flow).")
@click.option("--nodes", "show_nodes", is_flag=True, help="List the tributary nodes of each basin.")
@json_option
def basins(model_path, outlets, plant, show_nodes, as_json):
    """I/I remediation basins: the nodes tributary to each CSO regulator, pump station and the plant."""
    from capacitysim.network.basins import find_basins
    from capacitysim.network.model import load_model

    from capacitysim.io.bundled import model_path as resolve_model

    model_path = resolve_model(model_path)
    model = load_model(model_path)
    found = find_basins(model, outlets=list(outlets) or None, plant=plant)
    if as_json:
        emit_json({"model": str(model_path), "flow_units": model.flow_units, "basins": [b.as_dict() for b in found],
                   "dwf_note": "dwf_mean: [DWF] baselines x the mean of their time patterns"})
        return
    area_unit = "ha" if model.is_si else "ac"
    click.echo(f"{'outlet':<24} {'kind':<13} {'overflow':<12} {'tributary':>9} {'local':>6} {'mean DWF [gpd]':>15} "
               f"{'RDII area [' + area_unit + ']':>15}")
    for b in found:
        click.echo(f"{b.outlet:<24} {b.kind:<13} {b.overflow_outfall or '-':<12} {len(b.tributary):>9} {len(b.local):>6} "
                   f"{b.dwf_mean_gpd:>15,.0f} {b.rdii_area_ac:>15.2f}")
        if show_nodes:
            click.echo("    " + " ".join(b.tributary))
    click.echo("mean DWF: [DWF] baselines x the mean of their time patterns (monthly, daily, hourly/weekend), in gpd")
