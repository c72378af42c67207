"""The capacity register of a credit bank as a process (the service's ``capacity-register``; ``capacitysim bank
register`` is its command): :func:`capacitysim.workflows.register.capacity_register`."""

from __future__ import annotations

from pathlib import Path

from capacitysim.errors import InputError
from capacitysim.processes.base import MAX_ITEMS, MAX_TEXT_CHARS, FieldInputError, Input, NullProgress, Process
from capacitysim.processes.common import file_schema, storm_ref

#: Most plants given to one capacity register.
MAX_REGISTER_PLANTS = 20
#: The file a register run stores its figures in (its work folder): what GET /bank/register reads
#: (:func:`capacitysim.workflows.register.stored_register`) to say whether each figure is current.
REGISTER_STORE = "register.json"


class CapacityRegister(Process):
    id = "capacity-register"
    title = "Capacity register"
    description = (
        "The capacity register of the service's credit bank (issue 24): per plant given its flow record, the "
        "permitted flow, the 12-month figure, the committed flow and the remaining treatment headroom; per "
        "registered model, the remaining headroom per manhole with every commitment in place, at each commitment's "
        "node, each basin's outlet and the nodes asked (run inside the job's worker: service policy "
        "headroom_workers = 0). GET /bank/register and /ui/bank/register show the last one, each figure current "
        "or stale against the bank.")
    command = "capacitysim bank register"
    kind = "capacity-register"
    stages = (("started", 0), ("inputs-checked", 10), ("computed", 90), ("report-written", 95))
    item_files = {"plants": (("plant", "plant"), ("flows", "flows"))}
    writes_work_dir = True
    inputs = (
        Input("plants", {"type": "array", "maxItems": MAX_REGISTER_PLANTS,
                         "description": "The flow records of the registered plants (a plant not given is listed with its "
                                        "committed flow, its remaining headroom not computed): the CLI's --plant KEY=PLANT.",
                         "items": {"type": "object", "required": ["key", "plant", "flows"], "additionalProperties": False,
                                   "properties": {
                                       "key": {"type": "string", "minLength": 1, "maxLength": 200,
                                               "description": "The plant as the bank registers it (SPDES permit number or "
                                                              "name, GET /bank/models)."},
                                       "plant": file_schema("plant", "Plant TOML"),
                                       "flows": file_schema("flows", "Daily flow CSV (date, flow_mgd)")}}}),
        Input("storms", {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": MAX_TEXT_CHARS},
                         "description": "Design storms of the models' headroom (bundled names or uploads; default each "
                                        "model's own rainfall; in the Python API also storm specs such as "
                                        "type2:3.2in)."}, file="storm", convert=storm_ref),
        Input("nodes", {"type": "array", "maxItems": MAX_ITEMS, "items": {"type": "string", "minLength": 1, "maxLength": 100},
                        "description": "Nodes searched besides each commitment's node and each basin's outlet."}),
        Input("as_of", {"type": "string", "format": "date", "description": "Date of the register YYYY-MM-DD (default "
                                                                          "today)."}),
        Input("tolerance_pct", {"type": "number", "exclusiveMinimum": 0, "maximum": 100, "default": 5}),
        Input("spinup_hr", {"type": "number", "minimum": 0, "maximum": 720}),
        Input("bank", {"type": "string"}, service=False, typed=lambda v: hasattr(v, "__fspath__")),
    )

    def check(self, values, name, source):
        keys = set()
        for i, item in enumerate(values.get("plants") or []):
            if item["key"].strip().casefold() in keys:
                raise FieldInputError(f"{name('plants')}[{i}].key", item["key"], "each registered plant once")
            keys.add(item["key"].strip().casefold())

    def run(self, inputs, progress=None, work_dir=None):
        from capacitysim.workflows.register import capacity_register

        progress = progress or NullProgress()
        bank = inputs.bank
        if bank is None or not Path(bank).is_file():
            raise InputError("capacity-register: the service has no credit bank yet (the first `capacitysim users add NAME "
                             "--role administrator` creates it)")
        plants = {p["key"]: f"{p['plant']},{p['flows']}" for p in inputs.plants or []}
        storms = list(inputs.storms or [])
        progress.stage("inputs-checked", f"{len(plants)} plant record(s), {len(storms) or 'each model’s own'} storm(s)")

        def cb(label, done, total, runs):
            progress.step(done, total, f"{label}: {done} of {total} nodes, {runs} SWMM runs", runs=runs)

        reg = capacity_register(bank, plants=plants, storms=storms or None, nodes=list(inputs.nodes or []),
                                as_of=inputs.as_of, tolerance_pct=inputs.tolerance_pct, spinup_hr=inputs.spinup_hr,
                                workers=0, refresh=True, cache=None if work_dir is None else Path(work_dir) / REGISTER_STORE,
                                progress=cb)
        progress.stage("computed", f"register computed: {reg.to_dict()['freshness']['text']}")
        return reg

    def report(self, result, path, doc=None):
        from capacitysim.report.register import write_report

        write_report(doc if doc is not None else result.to_dict(), path)
        return path
