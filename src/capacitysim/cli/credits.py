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


def _echo_policies(policies) -> None:
    """One line per program policy: ``policy: ... (program interpretation — confirm with the bank administrator)``."""
    for p in policies:
        click.echo(ii_offset.policy_line(p))


@credits.command()
@click.argument("project_file", type=click.Path(dir_okay=False))
@click.option("--inflow-basis", "inflow_basis", metavar=f"[{'|'.join(ii_offset.INFLOW_CREDIT_BASES)}]",
              default=ii_offset.DEFAULT_INFLOW_CREDIT_BASIS, show_default=True,
              help="Program policy (the program does not say; confirm with the bank administrator): what a TR-55 "
                   "inflow item credits, the 24-hour runoff volume of the 1-year storm as gpd, or the peak rate of "
                   "its runoff (SCS unit hydrograph) as gpd. Both are printed.")
@json_option
def quantify(project_file, inflow_basis, as_json):
    """Print the itemised I/I remediation engineering report of PROJECT_FILE (TOML).

    The project names the engineer and gives the NYS PE license (six digits, e.g. "NY 012345"): the
    quantification "shall be prepared by a professional engineer, licensed in the State of New York"
    (quantification guidelines; Table 174-19.1 note 2). Without either, exit 2.
    """
    from capacitysim.cli.common import run_process

    proc, inputs, result = run_process("credits-quantification", dict(project=project_file, inflow_basis=inflow_basis))
    out = proc.document(result)
    inflow_basis = inputs.inflow_basis
    meta = out["project"]
    if as_json:
        emit_json(out)
        return
    click.echo(f"I/I remediation engineering report: {meta['id']} - {meta['name']}")
    given = "" if meta["pe_license"].strip() == meta["pe_license_number"] else f" (given as {meta['pe_license'].strip()})"
    click.echo(f"Prepared by {meta['engineer']}, professional engineer licensed in the State of New York, "
               f"license no. {meta['pe_license_number']}{given}")
    for key in ("municipal_user", "basin", "description"):
        if meta.get(key):
            click.echo(f"{key.replace('_', ' ').capitalize()}: {meta[key]}")
    click.echo("Quantification per the Binghamton-Johnson City I/I Offset Program, Tables 174-19.1, 174-19.2, 174-19.3;")
    storm = out["storm"]
    credited = ("24-hour runoff volume as gpd" if inflow_basis == "volume"
                else "peak rate of the runoff (SCS unit hydrograph) as gpd")
    click.echo(f"TR-55 items: {storm['depth_in']:g} in, 1-year {storm['duration_hr']}-hour {storm['distribution']} storm, "
               f"{credited} (program policy inflow_credit_basis = {inflow_basis}).")
    click.echo("")
    for i, r in enumerate(result["items"], 1):
        flag = "" if r["qualifies"] else "  [DOES NOT QUALIFY]"
        click.echo(f"{i:>2}. {r['type']}  {r['location']}{flag}")
        click.echo(f"    {r['quantity']}: {r['basis']}")
        if r["note"]:
            click.echo(f"    note: {r['note']}")
        if "inflow_credit_basis" in r:
            vol, peak = r["inflow_credit_volume_gpd"], r["inflow_credit_peak_rate_gpd"]
            ratio = f" ({peak / vol:.1f} x)" if vol > 0 else ""
            click.echo(f"    volume basis: {fmt(vol, 1)} gpd; peak-rate basis (Tc {r['tc_hr']:g} hr): {fmt(peak, 1)} gpd{ratio}")
        click.echo(f"    {r['reference']}: {fmt(r['gpd'], 1)} gpd")
    click.echo("")
    click.echo(f"Total I/I removed (qualifying items): {result['total_gpd']:,.1f} gpd")
    if result["policies"]:
        click.echo(f"  on the volume basis: {result['total_gpd_on_volume']:,.1f} gpd; "
                   f"on the peak-rate basis: {result['total_gpd_on_peak_rate']:,.1f} gpd")
        _echo_policies(result["policies"])


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
@click.option("--peaking-factor", type=float, default=None,
              help="A peaking factor you state (>= 1, e.g. from metering a like connection) instead of Harmon's: program "
                   "policy peaking_method = fixed (the program does not say how the peak of section F is estimated; "
                   "confirm with the bank administrator). Harmon's at 100 gpcd is printed beside it.")
@click.option("--population", type=float, default=None,
              help="Persons served, for Harmon's factor: program policy peaking_method = harmon_population (default "
                   "harmon_100gpcd: the average flow / 100 gpcd).")
@click.option("--offset-ratio", type=float, default=ii_offset.DEFAULT_OFFSET_RATIO, show_default=True,
              help="Section F fixes one-to-one (1); below 1 is refused (exit 3); above 1 (up to 10) only as a "
                   "program policy, flagged in the output.")
@click.option("--threshold-basis", type=click.Choice(ii_offset.THRESHOLD_BASES),
              default=ii_offset.DEFAULT_THRESHOLD_BASIS, show_default=True,
              help="Program policy (the program does not say; confirm with the bank administrator): the flow "
                   "compared with the 2,500 gpd of the definitions, the average daily design flow or the peak "
                   "sewage flow. Both outcomes are printed; the credits are the peak (section F) either way.")
@json_option
def connection(uses, flows_path, peaking_factor, population, offset_ratio, threshold_basis, as_json):
    """Peak sewage flow of a new or modified connection and the credits it needs."""
    from capacitysim.io.project_files import read_design_flows

    table = read_design_flows(flows_path)
    result = ii_offset.connection_offset(_parse_uses(uses), table["uses"], design_flow_table=table["path"],
                                         peaking_factor=peaking_factor, population_persons=population,
                                         offset_ratio=offset_ratio, threshold_basis=threshold_basis, field="--use")
    if as_json:
        emit_json(result.to_dict())
    else:
        yes = {True: "yes", False: "no"}
        alt = next(p["alternative"] for p in result.policies if p["name"] == "threshold_basis")
        peaking = next(p for p in result.policies if p["name"] == "peaking_method")
        other = peaking["alternative"]
        if "peak_flow_gpd" in other:  # the default, computed beside the method used
            other_row = (f"  on {other['value']}", (f"PF {other['peaking_factor']:.3f}: peak {other['peak_flow_gpd']:,.0f} gpd; "
                                                      f"credits {other['credits_required_gpd']:,.0f} gpd"))
        else:  # the applicant's own factor
            other_row = (f"  or {other['value']}", f"a factor you state (--peaking-factor F): peak = {result.average_gpd:,.0f} gpd x F")
        credits_on = {result.threshold_basis: result.credits_required_gpd, alt["value"]: alt["credits_required_gpd"]}
        required_on = {"average": result.offset_required_on_average, "peak": result.offset_required_on_peak}
        flow_on = {"average": result.average_gpd, "peak": result.peak_flow_gpd}
        compared = [(f"  on the {b}" + (" (used)" if b == result.threshold_basis else ""),
                     (f"{yes[required_on[b]]}: {flow_on[b]:,.0f} gpd {'>' if required_on[b] else '<='} "
                      f"{result.threshold_gpd:,.0f} gpd; credits {credits_on[b]:,.0f} gpd"))
                    for b in ii_offset.THRESHOLD_BASES]
        ratio_note = (" (section F, one-to-one)" if result.offset_ratio == ii_offset.DEFAULT_OFFSET_RATIO
                      else " (ratio: program policy, below)")
        emit_table([(f"{u.use} x {u.count:g} {u.unit}", f"{u.gpd_per_unit:g} gpd each = {u.average_gpd:,.0f} gpd"
                     + ("" if u.verified else "  (unverified)")) for u in result.uses]
                   + [("average design flow", f"{result.average_gpd:,.0f} gpd"),
                      ("peaking factor", (f"{result.peaking_factor:.3f} ({result.peaking_basis}; program policy "
                                          f"peaking_method = {peaking['value']}, below)")),
                      other_row,
                      ("peak sewage flow", f"{result.peak_flow_gpd:,.0f} gpd"),
                      ("offset required", (f"{yes[result.offset_required]} (the {result.threshold_basis} compared "
                                           f"with {result.threshold_gpd:,.0f} gpd: program policy threshold_basis, below)")),
                      *compared,
                      ("credits required", (f"{result.credits_required_gpd:,.0f} gpd = {result.offset_ratio:g} x the "
                                            f"peak sewage flow{ratio_note}"))],
                   "connection flow")
        _echo_policies(result.policies)
    if result.unverified_values:
        click.echo(f"note: design flows not verified against their source: {', '.join(result.unverified_values)} "
                   f"({result.design_flow_table})", err=True)


@credits.command()
@click.option("--pre-flow", "pre_flow", required=True, type=click.Path(dir_okay=False),
              help="Flow-meter record before the rehabilitation (CSV or logger export).")
@click.option("--pre-rain", "pre_rain", required=True, type=click.Path(dir_okay=False),
              help="Rain-gauge record of the pre period.")
@click.option("--post-flow", "post_flow", required=True, type=click.Path(dir_okay=False),
              help="Flow-meter record after the rehabilitation.")
@click.option("--post-rain", "post_rain", required=True, type=click.Path(dir_okay=False),
              help="Rain-gauge record of the post period.")
@click.option("--area-ac", "area_ac", required=True, help="The metered sub-basin's sewer area [ac].")
@click.option("--tz", "tz", default="America/New_York", show_default=True,
              help="Time zone of timestamps written without an offset (IANA name).")
@click.option("--flow-units", "flow_units", help="Flow units when the file does not say them: gpd, MGD, gpm, cfs, L/s.")
@click.option("--rain-units", "rain_units", help="Rain units when the file does not say them: in, mm.")
@click.option("--basis", "basis", default="peak", show_default=True,
              help="Policy metered_credit_basis: the design storm's peak RDII rate, or its volume over a day.")
@click.option("--claim", "claim", default="lower", show_default=True,
              help="Policy metered_credit_claim: the interval's lower bound, or the point value (the record says which).")
@click.option("--level", "level", default="0.9", show_default=True, help="Two-sided level of the interval.")
@click.option("--n-boot", "n_boot", default="200", show_default=True, help="Bootstrap resamples.")
@click.option("--seed", "seed", default="0", show_default=True, help="Seed of the bootstrap.")
@click.option("--pe-name", "pe_name", help="The NYS licensed PE who prepared the analysis.")
@click.option("--pe-license", "pe_license", help="The PE's NYS license number.")
@click.option("--dry-include", "dry_include", multiple=True, metavar="YYYY-MM-DD", help="A day the PE counts as dry.")
@click.option("--dry-exclude", "dry_exclude", multiple=True, metavar="YYYY-MM-DD", help="A day the PE does not count as dry.")
@click.option("--report", "report", help="Write the HTML report here (a new file or a plain file; never an input).")
@click.option("--out", "out", help="Write events.csv and decomposition-pre/post.nc into this folder.")
@json_option
def meter(report, out, as_json, **values):
    """The I/I a rehabilitation removed, measured from meter and gauge records before and after it.

    Each period is decomposed into base flow, GWI and RDII on its own dry days, RTK unit hydrographs are fitted to
    its wet-weather events, and the credit is the design-storm (2.1 in, 1-year 24-hour Type II) I/I before minus
    after, with a bootstrap interval; the lower bound is claimed unless --claim point. Table 174-19.1: prepared by
    a NYS licensed PE (--pe-name, --pe-license).
    """
    from capacitysim.cli.common import check_output, run_process
    from capacitysim.files import check_output_folder
    from capacitysim.report.metered import write_exports

    records = [values[k] for k in ("pre_flow", "pre_rain", "post_flow", "post_rain")]
    values = {k: (list(v) or None) if isinstance(v, tuple) else v for k, v in values.items()}

    def outputs(_inputs):
        if report:
            check_output(report, records, option="--report")
        if out:
            check_output_folder(out, records, option="--out", purpose="the exports")

    proc, _, result = run_process("metered-credit", values, before=outputs)
    doc = proc.document(result)
    if report:
        proc.report(result, report)
        doc["report"] = str(report)
    if out:
        doc["exports"] = [str(p) for p in write_exports(result, out)]
    if as_json:
        emit_json(doc)
        return
    c = result.credit
    for name, p in result.periods.items():
        click.echo(f"{name}: {p.flow.source.file}, {len(p.dry.dates)} dry days, GWI {fmt(float(p.gwi.gwi_gpd), 0)} gpd, "
                   f"{len(p.events)} events ({p.enough[1]})")
    if c is None:
        click.echo("No credit.")
    else:
        click.echo(f"Design-storm I/I before {fmt(c.pre_ii_gpd, 0)} gpd, after {fmt(c.post_ii_gpd, 0)} gpd ({c.basis} basis)")
        click.echo(f"I/I removed: {fmt(c.point_gpd, 0)} gpd, {c.level:.0%} interval {fmt(c.lower_gpd, 0)} to "
                   f"{fmt(c.upper_gpd, 0)} gpd ({c.n_boot} resamples, seed {c.seed})")
        click.echo(f"Credit claimed: {fmt(c.claimed_gpd, 0)} gpd ({'lower bound' if c.claim == 'lower' else 'point value, the PE chose'})")
    for w in result.warnings:
        click.echo(f"warning: {w}")
