"""The capacity demonstration as a process (``capacitysim capacity``, :func:`capacitysim.capacity_demonstration`,
the service's ``capacity-demonstration``): :func:`capacitysim.workflows.demonstration.run_demonstration`."""

from __future__ import annotations

from pathlib import Path

from capacitysim.errors import InputError
from capacitysim.processes.base import MAX_ITEMS, MAX_TEXT_CHARS, FieldInputError, Input, NullProgress, Process
from capacitysim.processes.common import (application_input, check_application, committed_input, criteria_input,
                                          companions, gpd, model_input, peaking_input, remediations_input,
                                          storm_ref, storm_schema, submittal_input, submittal_of)


def _connections_text(values, field):
    return list(values)  # NODE=GPD or NODE=UNITSxGPD_PER_UNIT, parsed with the peaking (finish)


def _typed_connections(value) -> bool:
    from capacitysim.workflows.demonstration import Connection

    return isinstance(value, (list, tuple)) and all(isinstance(c, (str, Connection)) for c in value)


def _measured_items(values, field_of) -> list:
    """Each measured I/I item parsed (:func:`capacitysim.workflows.measured_ii.parse_measured_ii`); a refusal names
    the field ``field_of(i)`` and what is allowed."""
    from capacitysim.workflows.measured_ii import parse_measured_ii

    out = []
    for i, v in enumerate(values):
        try:
            out.append(parse_measured_ii(v))
        except InputError as exc:
            raise FieldInputError(field_of(i), v, MEASURED_ALLOWED, str(exc).split(": ", 1)[-1]) from None
    return out


def _measured_text(values, field):
    """``--measured-ii analysis=FILE,nodes=A;B[,period=post][,gauge=G]`` (repeatable) as the JSON items."""
    return [{"analysis": str(m.analysis), "nodes": list(m.nodes), "period": m.period,
             **({"gauge": m.gauge} if m.gauge else {})} for m in _measured_items(values, lambda i: field)]


def _typed_measured(value) -> bool:
    from capacitysim.workflows.measured_ii import MeasuredIi

    return isinstance(value, (list, tuple)) and all(isinstance(m, MeasuredIi) for m in value)


#: What a measured I/I item allows, in words.
MEASURED_ALLOWED = ("analysis=FILE (a metered-credit document: capacitysim credits meter --json),nodes=A;B (the nodes "
                    "the metered sub-basin drains to)[,period=post|pre|change][,gauge=RAIN_GAUGE]")


class CapacityDemonstration(Process):
    id = "capacity-demonstration"
    title = "Capacity demonstration"
    description = ("SWMM before and after new connections and/or I/I remediation, judged element by element "
                   "(BJC I/I offset program, credit bank H(1)). Verdict pass | fail | untrusted. On the current registered "
                   "model of a basin of the service's credit bank, every flow the bank has committed is in both runs "
                   "(`capacitysim capacity --committed BANK`; the result's `committed`).")
    command = "capacitysim capacity"
    kind = "capacity-demonstration"
    companion_input = "model_files"
    model_nodes = (("connections", "node"), ("measured_ii", "nodes"))
    model_gauges = (("measured_ii", "gauge"),)
    item_files = {"measured_ii": (("analysis", None),)}
    shared_commitments = "model"
    stages = (("started", 0), ("inputs-checked", 10), ("swmm-runs", 20), ("judged", 80), ("report-written", 95))
    inputs = (
        model_input(),
        Input("model_files", companions("model")),
        Input("storm", storm_schema("Design storm (default: the model's own rainfall)"), cli="--storm",
              file="storm", convert=storm_ref),
        Input("connections", {"type": "array", "maxItems": MAX_ITEMS, "description": "New connections.",
                              "items": {"type": "object", "required": ["node", "gpd"], "additionalProperties": False,
                                        "properties": {"node": {"type": "string", "minLength": 1, "maxLength": 100,
                                                                "description": "Model node"},
                                                       "gpd": gpd("Average daily flow")}}},
              cli="--connect", text=_connections_text, typed=_typed_connections),
        remediations_input(),
        Input("measured_ii", {"type": "array", "maxItems": 20,
                              "description": "Measured I/I (issue 29): the fitted RTK sets of a metered-credit analysis "
                                             "(capacitysim credits meter --json; the metered-credit process) in place of "
                                             "the RDII of the nodes its sub-basin drains to. period post (default): the "
                                             "post-rehabilitation set in both runs; pre: the pre set; change: pre before "
                                             "and post after (the rehabilitation itself).",
                              "items": {"type": "object", "required": ["analysis", "nodes"], "additionalProperties": False,
                                        "properties": {
                                            "analysis": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT_CHARS,
                                                         "description": "The analysis document (\"upload:<sha256>\" of "
                                                                        "its JSON in the service; a path on the command "
                                                                        "line and in the API)"},
                                            "nodes": {"type": "array", "minItems": 1, "maxItems": MAX_ITEMS,
                                                      "items": {"type": "string", "minLength": 1, "maxLength": 100},
                                                      "description": "Model nodes the sub-basin drains to (its sewer "
                                                                     "area split evenly over them)"},
                                            "period": {"type": "string", "enum": ["post", "pre", "change"],
                                                       "default": "post", "description": "Which fitted set, in which run"},
                                            "gauge": {"type": "string", "minLength": 1, "maxLength": 100,
                                                      "description": "The rain gauge that drives it (default: that of "
                                                                     "the nodes' own unit hydrographs, else the "
                                                                     "model's only gauge)"}}}},
              cli="--measured-ii", text=_measured_text, typed=_typed_measured),
        peaking_input(),
        Input("plant", {"type": "string", "maxLength": 100,
                        "description": "The plant outfall (default: chosen from the network)."}, cli="--plant"),
        Input("spinup_hr", {"type": "number", "minimum": 0, "maximum": 720,
                            "description": "Dry-weather spin-up [h] (default 6)."}, cli="--spinup-hr"),
        criteria_input(),
        application_input(),
        submittal_input(),
        committed_input("capacity --committed BANK"),
        Input("crs", {"type": "string", "maxLength": 100, "description": "The model map's CRS (AUTHORITY:CODE)."},
              cli="--crs", service=False),
        Input("next_steps", {"type": "boolean", "default": True,
                             "description": "On a fail: the largest connection that passes at each connection node "
                                            "(a bounded headroom search) and the I/I removal that would offset it."},
              cli="--next-steps"),
    )

    def check(self, values, name, source):
        check_application(values, name, source)
        if source == "service" and not values.get("connections") and not values.get("remediations") \
                and not any((m.get("period") if isinstance(m, dict) else None) == "change"
                            for m in values.get("measured_ii") or []):
            raise FieldInputError(name("connections"), values.get("connections"),
                                  "at least one connection or remediation (a demonstration of nothing is not one)")

    def finish(self, inputs, name, source):
        from capacitysim.workflows.demonstration import Connection, parse_connection

        pk = inputs.peaking or "pattern"
        inputs["connections"] = [c if isinstance(c, Connection) else parse_connection(c, pk) if isinstance(c, str)
                                 else parse_connection(f"{c['node']}={float(c['gpd'])!r}", pk)
                                 for c in inputs.connections or []]
        inputs["remediations"] = list(inputs.remediations or [])
        inputs["measured_ii"] = _measured_items(inputs.measured_ii or [], lambda i: f"{name('measured_ii')}[{i}]")
        if isinstance(inputs.committed, (str, Path)) or hasattr(inputs.committed, "__fspath__"):
            from capacitysim.workflows.committed import capacity_commitments

            inputs["committed"] = capacity_commitments(inputs.committed, inputs.model, application=inputs.application)

    def run(self, inputs, progress=None, work_dir=None):
        from capacitysim.workflows.demonstration import run_demonstration

        progress = progress or NullProgress()
        conns, rems = inputs.connections, inputs.remediations
        progress.stage("inputs-checked", f"{len(conns)} connection(s), {len(rems)} remediation(s) on {Path(inputs.model).name}")
        progress.stage("swmm-runs", "SWMM: the before and after scenarios, run side by side")
        d = run_demonstration(inputs.model, connections=conns, remediations=rems, storm=inputs.storm,
                              criteria=inputs.criteria, work_dir=work_dir, plant=inputs.plant, spinup_hr=inputs.spinup_hr,
                              submittal=submittal_of(inputs), crs=inputs.crs, committed=inputs.committed,
                              measured_ii=inputs.measured_ii)
        progress.stage("judged", f"before and after runs judged: verdict {d.verdict}")
        if d.verdict == "fail":
            from capacitysim.workflows.next_steps import next_steps

            d.next_steps = next_steps(d.to_dict(), model=inputs.model, basins=d.basins, storm=inputs.storm,
                                      criteria=inputs.criteria, remediations=rems, plant=inputs.plant,
                                      spinup_hr=inputs.spinup_hr, peaking=inputs.peaking or "pattern",
                                      search=inputs.next_steps is not False, measured_ii=inputs.measured_ii)
        return d

    def report(self, result, path, doc=None):
        from capacitysim.report.capacity import write_report

        write_report(doc if doc is not None else result.to_dict(), path)
        return path
