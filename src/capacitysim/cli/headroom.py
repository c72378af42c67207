"""CLI: ``capacitysim headroom``, the largest connection every node can take (and a return-period matrix)."""

from __future__ import annotations

import os

import click

from capacitysim.cli import cli
from capacitysim.cli.common import (ProgressBar, check_export_dir, emit_json, emit_table, export_option, json_option,
                                    submittal_options)


@cli.command()
@click.option("--model", "model_path", required=True, help="SWMM 5 .inp file (only read), or a bundled model's name.")
@click.option("--storm", "storms", multiple=True,
              help="Design storm (bundled name, storms/*.toml or a spec such as type2:3.2in); repeat for a node x storm (return-period) matrix. "
                   "Default: the model's rainfall.")
@click.option("--nodes", "nodes", default=None, metavar="A,B", help="Nodes to search (comma-separated).")
@click.option("--basin", default=None, metavar="OUTLET", help="Search the junctions of this basin (its outlet).")
@click.option("--all", "all_nodes", is_flag=True, help="Search every junction (the default).")
@click.option("--criteria", "criteria_file", type=click.Path(dir_okay=False), help="TOML file overriding the default criteria.")
@click.option("--remediate", "remediates", multiple=True, metavar="SPEC",
              help="I/I remediation in every run, as `capacitysim capacity --remediate`. Repeatable.")
@click.option("--plant", help="The plant outfall (default: the outfall with the largest tributary dry-weather flow).")
@click.option("--peaking", default="pattern", show_default=True,
              help="How connections are shaped: 'pattern' (the model's diurnal DWF pattern) or a constant peaking factor.")
@click.option("--spinup-hr", default=None, help="Hours of dry-weather simulation prepended (default as `capacity`: 6).")
@click.option("--tolerance-pct", default="5", show_default=True, help="Bracket width: failing / passing <= 1 + tolerance.")
@click.option("--max-gpd", default="10000000", show_default=True, help="Largest connection searched (passing it: bounded) [gpd].")
@click.option("--min-gpd", default="100", show_default=True, help="Smallest connection searched (failing it: 0) [gpd].")
@click.option("--workers", default=None, help="Worker processes of the local dask cluster (default one per core; 0: in this process).")
@click.option("--scheduler", default=None, help="Address of an existing dask.distributed scheduler (tcp://host:8786).")
@click.option("--out", "out_dir", type=click.Path(), default=None,
              help="Folder of the outputs: headroom.zarr (streamed, resumable), headroom.json, headroom.csv, headroom.geojson.")
@click.option("--resume", is_flag=True, help="Continue the store in --out: compute only the missing cells.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), help="Write the HTML report here.")
@click.option("--method", metavar="[screen|bisection]", default="screen", show_default=True,
              help="screen: estimates from the run before, then few runs; bisection: brute force (for comparison).")
@click.option("--screen-only", is_flag=True,
              help="Screening: the run before and the screen only (one run per storm, whatever the number of nodes); "
                   "every node gets the screen's estimate, none a confirmed figure. The same --out with --resume and "
                   "without --screen-only confirms them.")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@export_option
@submittal_options
@json_option
def headroom(model_path, storms, nodes, basin, all_nodes, criteria_file, remediates, plant, peaking, spinup_hr,
             tolerance_pct, max_gpd, min_gpd, workers, scheduler, out_dir, resume, report_path, method, screen_only,
             no_progress, as_json, export_dir, **submittal):
    """Capacity headroom: the largest connection each node can take, bracketed by SWMM runs.

    For each node (and storm): max_connection_gpd, the bracket [passing_gpd, failing_gpd] (both real
    runs, within --tolerance-pct), the governing check at the failing flow, and bounded when even
    --max-gpd passes; a node failing at --min-gpd reports 0. Each figure is what `capacitysim capacity
    --connect NODE=GPD` (same --storm, --remediate, --criteria) gives. Exit code 0 when every cell has
    a figure, 1 when any is untrusted or in error (one line on stderr), 2 for bad input. With
    --screen-only a cell with the screen's estimate counts as done.
    """
    from capacitysim.cli.common import check_output, run_process, submittal_values

    def outputs(inputs):  # never over an input (checked before any run or cluster)
        storm_files = [s for s in storms if os.path.exists(s)]
        check_output(report_path, [inputs.model, criteria_file, *storm_files,
                                   None if out_dir is None else os.path.join(out_dir, "headroom.zarr")])
        check_export_dir(export_dir, [inputs.model, criteria_file, *storm_files])

    values = dict(model=model_path, storms=storms, nodes=nodes, basin=basin, all_nodes=all_nodes, criteria=criteria_file,
                  criteria_file=criteria_file, remediations=remediates, plant=plant, peaking=peaking, spinup_hr=spinup_hr,
                  tolerance_pct=tolerance_pct, max_gpd=max_gpd, min_gpd=min_gpd, workers=workers, scheduler=scheduler,
                  out=out_dir, resume=resume, method=method, screen_only=screen_only, submittal=submittal_values(submittal))
    with ProgressBar("node", "headroom") as bar:
        proc, inputs, res = run_process("headroom", values, progress=None if no_progress else bar, before=outputs)
    doc = proc.document(res)
    if report_path:
        proc.report(res, report_path, doc)
    if export_dir:
        from capacitysim.io.export import export_node_table, model_geometry
        from capacitysim.network.model import parse_inp

        export_node_table(export_dir, doc["nodes"], id_key="node", index=("node", "storm"),
                          geometry=model_geometry(parse_inp(inputs.model)),
                          title="headroom: largest connection per node and storm",
                          attrs={"kind": "headroom", "model_file": doc["model_file"], "model_sha256": doc["model_sha256"]})
    if as_json:
        emit_json(doc)
    else:
        _print(doc, report_path)
    c = dict(doc["counts"])
    c["missing"] -= doc.get("nodes_screened") or 0  # screening asked for: a screened cell is what was asked
    bad = c["untrusted"] + c["error"] + c["missing"]
    if bad:
        parts = [f"{c[k]:,} {k}" for k in ("untrusted", "error", "missing") if c[k]]
        click.echo(f"{bad:,} of {len(doc['nodes']):,} cells have no figure ({', '.join(parts)})", err=True)
        click.get_current_context().exit(1)


def _print(doc: dict, report_path) -> None:
    from capacitysim.report.headroom import _sort_key, governing_text, headroom_text, screen_text

    c = doc["counts"]
    rows = [("model", doc["model_file"]), ("storms", ", ".join(s["label"] for s in doc["storms"])),
            ("cells", f"{len(doc['nodes']):,} ({c['ok']:,} bracketed, {c['bounded']:,} bounded, {c['zero']:,} zero, "
                      f"{c['untrusted']:,} untrusted, {c['error']:,} error"
                      + (f", {doc['nodes_screened']:,} screened only" if doc.get("screen_only") else "") + ")"),
            ("SWMM runs", f"{doc['runs_total']:,}" + (f" ({doc['runs_per_node']:.2f} per cell)" if doc["runs_per_node"] is not None else "")),
            ("time", f"{doc['seconds']:.1f} s ({doc['scheduler'] or '-'}, {doc['workers']} workers)")]
    if doc.get("full_run_equivalents_per_node") is not None:  # issue 30: the figure beside its floor
        rows.insert(-1, ("cost", f"{doc['full_run_equivalents_per_node']:.2f} complete runs per cell (the floor: 1.00, "
                                 "one complete run confirming each figure; the runs before excluded)"))
    if doc.get("store"):
        rows.append(("results", os.path.dirname(doc["store"])))
    if report_path:
        rows.append(("report", str(report_path)))
    emit_table(rows, "Capacity headroom")
    click.echo(f"{'node':<14} {'storm':<22} {'max connection [gpd]':>21} {'bracket [gpd]':>23} {'runs':>4}  governing check")
    for r in sorted(doc["nodes"], key=_sort_key):
        br = "-" if r.get("passing_gpd") is None else f"{r['passing_gpd']:,.0f}-" + ("" if r.get("failing_gpd") is None else f"{r['failing_gpd']:,.0f}")
        click.echo(f"{r['node']:<14} {r['storm'][:22]:<22} {headroom_text(r):>21} {br:>23} {r.get('runs') or 0:>4}  "
                   f"{governing_text(r) if r['status'] in ('ok', 'zero') else (r.get('message') or screen_text(r))}")
