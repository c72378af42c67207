"""Capacity headroom as a process (``capacitysim headroom``, :func:`capacitysim.headroom`, the service's
``headroom``): :func:`capacitysim.workflows.headroom.headroom`."""

from __future__ import annotations

from pathlib import Path

from capacitysim.processes.base import MAX_ITEMS, MAX_TEXT_CHARS, FieldInputError, Input, NullProgress, Process
from capacitysim.processes.common import (companions, criteria_input, gpd, model_input, peaking_input,
                                          remediations_input, storm_ref, submittal_input, submittal_of)


def _nodes_text(value, field):
    nodes = [n.strip() for n in value.split(",") if n.strip()]
    if not nodes:
        raise FieldInputError(field, value, "at least one node (A,B,...)")
    return nodes


def _workers_text(value, field):
    try:
        n = int(value)
    except ValueError:
        n = -1
    if n < 0:
        raise FieldInputError(field, value, "a whole number >= 0 (0: in this process, no cluster)")
    return n


class Headroom(Process):
    id = "headroom"
    title = "Capacity headroom"
    description = ("The largest connection each node can take, bracketed by SWMM runs (run inside the job's worker: "
                   "service policy headroom_workers = 0).")
    command = "capacitysim headroom"
    kind = "headroom"
    companion_input = "model_files"
    model_nodes = (("nodes", None),)
    stages = (("started", 0), ("inputs-checked", 10), ("searched", 90), ("report-written", 95))
    inputs = (
        model_input(),
        Input("model_files", companions("model")),
        Input("storms", {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": MAX_TEXT_CHARS},
                         "description": "Design storms (bundled names, uploads or storm specs such as type2:3.2in; "
                                        "on the command line and in the Python API also storm files)."},
              cli="--storm", file="storm", convert=storm_ref),
        Input("nodes", {"type": "array", "maxItems": MAX_ITEMS,
                        "items": {"type": "string", "minLength": 1, "maxLength": 100}}, cli="--nodes", text=_nodes_text),
        Input("basin", {"type": "string", "maxLength": 100}, cli="--basin"),
        remediations_input(),
        Input("plant", {"type": "string", "maxLength": 100}, cli="--plant"),
        peaking_input(),
        Input("spinup_hr", {"type": "number", "minimum": 0, "maximum": 720}, cli="--spinup-hr"),
        Input("tolerance_pct", {"type": "number", "exclusiveMinimum": 0, "maximum": 100, "default": 5},
              cli="--tolerance-pct"),
        Input("max_gpd", gpd("Largest connection searched") | {"default": 10000000}, cli="--max-gpd"),
        Input("min_gpd", gpd("Smallest connection searched") | {"default": 100}, cli="--min-gpd"),
        Input("method", {"type": "string", "enum": ["screen", "bisection"], "default": "screen"}, cli="--method"),
        Input("screen_only", {"type": "boolean", "default": False,
                              "description": "Screening: the run before and the screen only; every node gets the screen's "
                                             "estimate (screen_gpd), none a confirmed figure."}, cli="--screen-only"),
        criteria_input(),
        submittal_input(),
        Input("all_nodes", {"type": "boolean", "description": "Search every junction (the default)."}, cli="--all",
              service=False),
        Input("criteria_file", {"type": "string"}, cli="--criteria", service=False),
        Input("workers", {"type": "integer", "minimum": 0}, cli="--workers", service=False, text=_workers_text),
        Input("scheduler", {"type": "string"}, cli="--scheduler", service=False),
        Input("out", {"type": "string"}, cli="--out", service=False, typed=lambda v: hasattr(v, "__fspath__")),
        Input("resume", {"type": "boolean"}, cli="--resume", service=False),
    )

    def check(self, values, name, source):
        given = [k for k in ("nodes", "basin") if k in values] + (["all_nodes"] if values.get("all_nodes") else [])
        if len(given) > 1:
            raise FieldInputError(name(given[1]), values[given[1]], f"one of {', '.join(map(name, ('nodes', 'basin', 'all_nodes')))}"
                                  if source != "service" else "one of inputs.nodes and inputs.basin")
        if values.get("workers") is not None and values.get("scheduler") is not None:
            raise FieldInputError(name("scheduler"), values["scheduler"], "one of --workers (a local cluster) and "
                                  "--scheduler (an existing one)")
        if values.get("resume") and values.get("out") is None:
            raise FieldInputError(name("resume"), True, f"{name('resume')} only with {name('out')} DIR (the store it "
                                  "continues)")

    def run(self, inputs, progress=None, work_dir=None):
        from capacitysim.workflows.headroom import headroom

        progress = progress or NullProgress()
        storms = inputs.storms or []
        progress.stage("inputs-checked", f"{Path(inputs.model).name}, {len(storms) or 'its own'} storm(s)")

        def cb(done, total, runs):
            progress.step(done, total, f"{done} of {total} cells, {runs} SWMM runs", runs=runs)

        res = headroom(inputs.model, storms or None, inputs.nodes, basin=inputs.basin,
                       all_nodes=bool(inputs.all_nodes),
                       criteria=inputs.criteria, remediations=list(inputs.remediations or []), plant=inputs.plant,
                       peaking=inputs.get("peaking", "pattern"), spinup_hr=inputs.spinup_hr,
                       tolerance_pct=float(inputs.get("tolerance_pct", 5)), max_gpd=float(inputs.get("max_gpd", 10_000_000)),
                       min_gpd=float(inputs.get("min_gpd", 100)), workers=inputs.workers, scheduler=inputs.scheduler,
                       out=inputs.out, resume=bool(inputs.resume), method=inputs.get("method", "screen"), progress=cb,
                       screen_only=bool(inputs.get("screen_only", False)),
                       submittal=submittal_of(inputs), criteria_file=inputs.criteria_file)
        progress.stage("searched", "headroom searched")
        return res

    def report(self, result, path, doc=None):
        from capacitysim.report.headroom import write_report

        write_report(doc if doc is not None else result.to_dict(), path, result.coordinates, result.link_lines)
        return path
