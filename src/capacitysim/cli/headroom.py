"""CLI: ``capacitysim headroom``, the largest connection every node can take (and a return-period matrix)."""

from __future__ import annotations

import math
import os

import click

from capacitysim.cli import cli
from capacitysim.cli.common import (ProgressBar, check_export_dir, emit_json, emit_table, export_option, json_option,
                                    pop_submittal, submittal_options)
from capacitysim.errors import InputError


def _number(option: str, value, *, low: float = 0.0, low_open: bool = True, high: float | None = None) -> float | None:
    """A number option parsed here, so a typo is one line (``error: --max-gpd must be ...``)."""
    if value is None:
        return None
    try:
        v = float(str(value).replace(",", "").replace("_", ""))
    except ValueError:
        raise InputError(f"{option} must be a number; got {value!r}") from None
    if not math.isfinite(v) or (v <= low if low_open else v < low) or (high is not None and v > high):
        rng = f"{'(' if low_open else '['}{low:g}, {'inf' if high is None else format(high, 'g')}]"
        raise InputError(f"{option} must be in {rng}; got {value}")
    return v


def _workers(value) -> int | None:
    if value is None:
        return None
    try:
        n = int(value)
    except ValueError:
        raise InputError(f"--workers must be an integer >= 0 (0: in this process, no cluster); got {value!r}") from None
    if n < 0:
        raise InputError(f"--workers must be an integer >= 0 (0: in this process, no cluster); got {value!r}")
    return n


def _peaking(value: str) -> str | float:
    if value == "pattern":
        return "pattern"
    pf = _number("--peaking", value, low=1.0, low_open=False)
    return pf


@cli.command()
@click.option("--model", "model_path", required=True, help="SWMM 5 .inp file (only read), or a bundled model's name.")
@click.option("--storm", "storms", multiple=True,
              help="Design storm (bundled name or storms/*.toml); repeat for a node x storm (return-period) matrix. "
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
@click.option("--method", type=click.Choice(["screen", "bisection"]), default="screen", show_default=True,
              help="screen: estimates from the run before, then few runs; bisection: brute force (for comparison).")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@export_option
@submittal_options
@json_option
def headroom(model_path, storms, nodes, basin, all_nodes, criteria_file, remediates, plant, peaking, spinup_hr,
             tolerance_pct, max_gpd, min_gpd, workers, scheduler, out_dir, resume, report_path, method, no_progress,
             as_json, export_dir, **submittal):
    """Capacity headroom: the largest connection each node can take, bracketed by SWMM runs.

    For each node (and storm): max_connection_gpd, the bracket [passing_gpd, failing_gpd] (both real
    runs, within --tolerance-pct), the governing check at the failing flow, and bounded when even
    --max-gpd passes; a node failing at --min-gpd reports 0. Each figure is what `capacitysim capacity
    --connect NODE=GPD` (same --storm, --remediate, --criteria) gives. Exit code 0 when every cell has
    a figure, 1 when any is untrusted or in error (one line on stderr), 2 for bad input.
    """
    from capacitysim.cli.common import check_output
    from capacitysim.io.bundled import model_path as resolve_model
    from capacitysim.io.files import read_toml
    from capacitysim.rules.capacity import Criteria
    from capacitysim.workflows.headroom import headroom as run_headroom

    if nodes is not None and basin is not None or (all_nodes and (nodes is not None or basin is not None)):
        raise InputError("give one of --nodes, --basin and --all")
    node_list = None
    if nodes is not None:
        node_list = [n.strip() for n in nodes.split(",") if n.strip()]
        if not node_list:
            raise InputError(f"--nodes must name at least one node (A,B,...); got {nodes!r}")
    if workers is not None and scheduler is not None:
        raise InputError("give one of --workers (a local cluster) and --scheduler (an existing one)")
    if resume and out_dir is None:
        raise InputError("--resume continues the store in --out DIR; give --out")
    tol = _number("--tolerance-pct", tolerance_pct, high=100.0)
    mx = _number("--max-gpd", max_gpd)
    mn = _number("--min-gpd", min_gpd)
    spin = _number("--spinup-hr", spinup_hr, low_open=False)
    nw = _workers(workers)
    pk = _peaking(peaking)
    model_file = resolve_model(model_path)
    storm_files = [s for s in storms if os.path.exists(s)]
    check_output(report_path, [model_file, criteria_file, *storm_files,
                               None if out_dir is None else os.path.join(out_dir, "headroom.zarr")])
    check_export_dir(export_dir, [model_file, criteria_file, *storm_files])
    criteria = Criteria.from_dict(read_toml(criteria_file), criteria_file) if criteria_file else Criteria()
    sub = pop_submittal(submittal)
    bar = ProgressBar("node", "headroom")
    progress = None if no_progress else (lambda done, total, runs: bar.update(done, total, runs=runs))
    with bar:
        res = run_headroom(model_file, list(storms) or None, node_list, basin=basin, all_nodes=all_nodes, criteria=criteria,
                           remediations=list(remediates), plant=plant, peaking=pk, spinup_hr=spin, tolerance_pct=tol,
                           max_gpd=mx, min_gpd=mn, workers=nw, scheduler=scheduler, out=out_dir, resume=resume,
                           method=method, progress=progress, submittal=sub, criteria_file=criteria_file)
    doc = res.to_dict()
    if report_path:
        from capacitysim.report.headroom import write_report

        write_report(doc, report_path, res.coordinates, res.link_lines)
    if export_dir:
        from capacitysim.io.export import export_node_table, model_geometry
        from capacitysim.network.model import parse_inp

        export_node_table(export_dir, doc["nodes"], id_key="node", index=("node", "storm"),
                          geometry=model_geometry(parse_inp(model_file)),
                          title="headroom: largest connection per node and storm",
                          attrs={"kind": "headroom", "model_file": doc["model_file"], "model_sha256": doc["model_sha256"]})
    if as_json:
        emit_json(doc)
    else:
        _print(doc, report_path)
    c = doc["counts"]
    bad = c["untrusted"] + c["error"] + c["missing"]
    if bad:
        parts = [f"{c[k]:,} {k}" for k in ("untrusted", "error", "missing") if c[k]]
        click.echo(f"{bad:,} of {len(doc['nodes']):,} cells have no figure ({', '.join(parts)})", err=True)
        click.get_current_context().exit(1)


def _print(doc: dict, report_path) -> None:
    from capacitysim.report.headroom import _sort_key, governing_text, headroom_text

    c = doc["counts"]
    rows = [("model", doc["model_file"]), ("storms", ", ".join(s["label"] for s in doc["storms"])),
            ("cells", f"{len(doc['nodes']):,} ({c['ok']:,} bracketed, {c['bounded']:,} bounded, {c['zero']:,} zero, "
                      f"{c['untrusted']:,} untrusted, {c['error']:,} error)"),
            ("SWMM runs", f"{doc['runs_total']:,}" + (f" ({doc['runs_per_node']:.2f} per cell)" if doc["runs_per_node"] is not None else "")),
            ("time", f"{doc['seconds']:.1f} s ({doc['scheduler'] or '-'}, {doc['workers']} workers)")]
    if doc.get("store"):
        rows.append(("results", os.path.dirname(doc["store"])))
    if report_path:
        rows.append(("report", str(report_path)))
    emit_table(rows, "Capacity headroom")
    click.echo(f"{'node':<14} {'storm':<22} {'max connection [gpd]':>21} {'bracket [gpd]':>23} {'runs':>4}  governing check")
    for r in sorted(doc["nodes"], key=_sort_key):
        br = "-" if r.get("passing_gpd") is None else f"{r['passing_gpd']:,.0f}-" + ("" if r.get("failing_gpd") is None else f"{r['failing_gpd']:,.0f}")
        click.echo(f"{r['node']:<14} {r['storm'][:22]:<22} {headroom_text(r):>21} {br:>23} {r.get('runs') or 0:>4}  "
                   f"{governing_text(r) if r['status'] in ('ok', 'zero') else (r.get('message') or '')}")
