"""CLI: ``capacitysim sweep run SWEEP.toml --out RESULTS.zarr`` and ``capacitysim sweep summarize RESULTS.zarr``."""

from __future__ import annotations

import click

from capacitysim.cli import cli
from capacitysim.cli.common import ProgressBar, check_export_dir, emit_json, emit_table, export_option, json_option


@cli.group()
def sweep():
    """Scenario sweeps on dask: many SWMM capacity runs or vectorized detention/runoff designs."""


@sweep.command("run")
@click.argument("sweep_file", type=click.Path(dir_okay=False))
@click.option("--out", "out", required=True, type=click.Path(), help="Zarr store of the results (RESULTS.zarr).")
@click.option("--workers", metavar="N", default=None,
              help="Worker processes of the local cluster (default: one per core; 0: in this process, no cluster).")
@click.option("--scheduler", default=None, help="Address of an existing dask.distributed scheduler (tcp://host:8786).")
@click.option("--resume", is_flag=True, help="Continue an interrupted sweep: compute only the missing scenarios.")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@click.option("--yes-large", is_flag=True,
              help="Run a sweep above the size limit (the refusal says how many scenarios and how long they would "
                   "take); the hard limit (memory of the store) stays.")
@json_option
def run_cmd(sweep_file, out, workers, scheduler, resume, no_progress, yes_large, as_json):
    """Run every scenario of SWEEP_FILE, writing results to --out as they finish.

    Exit code 0 when every scenario of the store passed (or, in runoff sweeps, was computed: they
    have no verdict); 1 when any failed, was untrusted, raised or is missing, with one line on
    stderr: ``3 of 12 scenarios failed (2 fail, 1 untrusted)``; 2 for bad input: among others a
    sweep above the size limit without --yes-large (the line gives the number of scenarios and an
    estimate of the run time), an --out that is the sweep file, the model or a symbolic link, an
    unreachable --scheduler. With --resume the whole store counts, not only the scenarios computed now.
    """
    from capacitysim.cli.common import run_process
    from capacitysim.workflows.sweep import outcome_line

    values = dict(sweep=sweep_file, out=out, workers=workers, scheduler=scheduler, resume=resume, yes_large=yes_large)
    # the size, the store's path and the scheduler are refused by run_sweep before the bar, the cluster or the store
    with ProgressBar("scn", "sweep") as bar:
        proc, inputs, run = run_process("sweep", values, progress=None if no_progress else bar)
    spec = inputs.sweep  # the sweep file, read once by the process
    o = run.outcome
    if as_json:
        emit_json(proc.document(run))
    else:
        emit_table([("scenarios", f"{run.n_scenarios:,}"), ("computed now", f"{run.computed:,}"),
                    ("already done (resume)", f"{run.skipped:,}"), ("failed", f"{run.failed:,}"),
                    ("pass / fail / untrusted", f"{o['pass']:,} / {o['fail']:,} / {o['untrusted']:,}"),
                    ("scheduler", f"{run.scheduler} ({run.workers} workers)"), ("time", f"{run.seconds:.1f} s"),
                    ("results", run.path)], title=f"Sweep: {spec.name}")
        for f in run.failures[:5]:
            click.echo(f"  scenario {f['scenario']}: {f['message']}")
    if o["not_passed"]:
        click.echo(outcome_line(o), err=True)
        click.get_current_context().exit(1)


@sweep.command("summarize")
@click.argument("results", type=click.Path())
@click.option("--report", "report", type=click.Path(dir_okay=False), help="Write the HTML report (verdict map) here.")
@click.option("--x", "x", default=None, help="Swept parameter on the verdict map's x axis.")
@click.option("--y", "y", default=None, help="Swept parameter on the verdict map's y axis.")
@export_option
@json_option
def summarize_cmd(results, report, x, y, export_dir, as_json):
    """Summarize a sweep: counts, the largest connection that passes at each node, a verdict map.

    The largest passing value is printed as a lower bound (``≥ 100,000 gpd``) when no larger swept
    value fails, else with the smallest larger value that fails and the check that governs it (its
    first failed check: criterion at element). In --json each row carries ``lower_bound``,
    ``smallest_failing_gpd`` (``smallest_failing_orifice_diameter_in``) and ``governing_check``
    (see :func:`capacitysim.workflows.sweep.summarize`).

    Then every scenario (the first 20 in text; all in --json's ``scenario_table`` and the report) with the
    check that governs it: the failed check that used the most of its margin (criterion, element, value vs
    limit, the share of the margin used), in the columns of
    :data:`capacitysim.workflows.sweep.summary.SCENARIO_COLUMNS` after the swept parameters. A store
    written before issue 28 holds no governing check: the summary says so and shows the first failed one.
    """
    import json

    from capacitysim.cli.common import check_output
    from capacitysim.io.sweep_store import open_results
    from capacitysim.workflows.sweep import (
        bound_text,
        governing_text,
        missing_note,
        summarize,
        verdict_map_axes,
    )
    from capacitysim.workflows.sweep.summary import scenario_table_lines

    ds = open_results(results)
    if x is not None or y is not None:
        verdict_map_axes(ds, x, y)  # named parameters must exist and differ, with or without --report
    try:
        inputs = [str(i) for i in json.loads(ds.attrs.get("inputs", "[]"))]
    except (TypeError, ValueError):
        inputs = []
    if report:
        check_output(report, [results, *inputs], option="--report")  # never into the store, never over the sweep file
    check_export_dir(export_dir, [results, *inputs])
    s = summarize(ds)
    if report:
        from capacitysim.report.sweep import write_summary_report

        write_summary_report(ds, report, x, y)
        s["report"] = str(report)
    if export_dir:
        from capacitysim.io.export import export_sweep

        written = export_sweep(export_dir, ds, s, geometry=_sweep_geometry(inputs))
        s["export"] = {"folder": str(export_dir), "files": sorted(written)}
    if as_json:
        emit_json(s)
        return
    emit_table([("scenarios", f"{s['scenarios']:,}"), ("done / failed / missing", f"{s['done']:,} / {s['failed']:,} / {s['missing']:,}"),
                ("pass / fail / untrusted", f"{s['pass']:,} / {s['fail']:,} / {s['untrusted']:,}")],
               title=f"Sweep: {s['name']} ({s['kind']})")
    if s["missing"]:
        click.echo(f"note: {missing_note(s)}")
    derived = {"lower_bound", "governing_check", "monotone", "undecided", "missing"}
    if s.get("largest_passing"):
        click.echo("")
        click.echo("largest connection that passes (≥: no larger swept flow fails, a lower bound):")
        for r in s["largest_passing"]:
            cond = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()
                             if k not in derived | {"connect_node", "largest_passing_gpd", "smallest_failing_gpd"})
            note = "" if r["monotone"] else " (a smaller flow fails)"
            gov = governing_text(r)
            click.echo(f"  {r['connect_node']}{' (' + cond + ')' if cond else ''}: {bound_text(r, 'connect_gpd')}{note}"
                       + (f"; governed by: {gov}" if gov else ""))
    if s.get("largest_passing_orifice"):
        rows = s["largest_passing_orifice"]
        click.echo("")
        click.echo("largest orifice that passes:")
        for r in rows[:20]:
            cond = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()
                             if k not in derived | {"largest_passing_orifice_diameter_in", "smallest_failing_orifice_diameter_in"})
            gov = governing_text(r)
            click.echo(f"  {cond}: {bound_text(r, 'orifice_diameter_in')}" + (f"; governed by: {gov}" if gov else ""))
        if len(rows) > 20:
            click.echo(f"  ... {len(rows) - 20} more (--json, --report)")
    table = s.get("scenario_table")
    if table and table["rows"]:
        click.echo("")
        click.echo(f"scenarios (governing check: {table['governing']}):")
        for line in scenario_table_lines(table):
            click.echo(f"  {line}")
    for m in s["failures"][:5]:
        click.echo(f"  failed: {m}")
    if report:
        click.echo(f"report: {report}")
    if export_dir:
        click.echo(f"exported: {export_dir}: {', '.join(s['export']['files'])}")


def _sweep_geometry(inputs: list[str]):
    """The coordinates of a SWMM sweep's model (its .inp among the store's inputs), or None (no model, or
    the model is no longer there: the export then has no GeoJSON)."""
    import os

    from capacitysim.io.export import model_geometry
    from capacitysim.network.model import parse_inp

    inp = next((p for p in inputs if p.lower().endswith(".inp") and os.path.isfile(p)), None)
    return None if inp is None else model_geometry(parse_inp(inp))
