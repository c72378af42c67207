"""The treatment capacity check as a process (``capacitysim spdes check``, :func:`capacitysim.spdes_check`, the
service's ``spdes-check``): :func:`capacitysim.workflows.spdes.run_check`."""

from __future__ import annotations

from capacitysim.processes.base import MAX_GPD, MAX_ITEMS, MAX_TEXT_CHARS, FieldInputError, Input, NullProgress, Process
from capacitysim.processes.common import (application_input, check_application, committed_input, file_schema,
                                          submittal_input, submittal_of)


def _plant(value, field):
    from capacitysim.io.plant_flows import read_plant_file
    from capacitysim.workflows.spdes import resolve_plant_path

    return read_plant_file(resolve_plant_path(value))


def _is_plant(value) -> bool:
    from capacitysim.io.plant_flows import PlantFile

    return isinstance(value, PlantFile)


def _bases() -> list:
    from capacitysim.rules.spdes import BASES

    return list(BASES)


def _date(desc: str) -> dict:
    return {"type": "string", "format": "date", "description": desc}


class SpdesCheck(Process):
    id = "spdes-check"
    title = "Treatment capacity (SPDES flow limit)"
    description = ("A plant's flow record against its SPDES flow limit: 15 RCNY § 18-37(b) for watershed plants, the "
                   "permitted-flow headroom for others. For a plant a basin of the service's credit bank drains to, the flow "
                   "the bank has committed to it is part of the baseline (`capacitysim spdes check --committed BANK`; the "
                   "result's `committed_gpd`).")
    command = "capacitysim spdes check"
    kind = "spdes-check"
    shared_commitments = "plant"
    stages = (("started", 0), ("inputs-checked", 10), ("checked", 80), ("report-written", 95))
    inputs = (
        Input("plant", file_schema("plant", "Plant TOML"), cli="--plant", file="plant", convert=_plant, typed=_is_plant),
        Input("flows", file_schema("flows", "Daily flow CSV (date, flow_mgd)"), cli="--flows", file="flows"),
        Input("dmr", {"type": "string", "maxLength": MAX_TEXT_CHARS,
                      "description": "An uploaded EPA ECHO DMR CSV (\"upload:<sha256>\")."}, cli="--dmr", file="upload"),
        Input("watershed", {"type": "boolean", "description": "Does the plant discharge within the NYC watershed?"},
              cli="--watershed"),
        Input("limit_mgd", {"type": "number", "exclusiveMinimum": 0, "maximum": 10000, "description": "Flow limit [MGD].",
                            "x-hint": "in MGD; a larger figure is a limit in gpd? 500,000 gpd = 0.5 MGD"},
              cli="--limit-mgd"),
        Input("basis", {"type": "string", "enum": _bases(), "description": "The permit's averaging basis."}, cli="--basis"),
        Input("as_of", _date("Date of the check YYYY-MM-DD (default today)."), cli="--as-of"),
        Input("application_date", _date("Date of the application YYYY-MM-DD."), cli="--application-date"),
        Input("strict_record_age", {"type": "boolean", "default": False, "description": "Refuse a stale record."},
              cli="--strict-record-age"),
        Input("added_gpd", {"type": "array", "maxItems": MAX_ITEMS, "items": {"type": "number", "minimum": 0, "maximum": MAX_GPD},
                            "description": "Average daily flow of the new connection(s) [gpd]."}, cli="--added-gpd"),
        Input("date_column", {"type": "string", "maxLength": 100, "default": "date"}, cli="--date-column"),
        Input("flow_column", {"type": "string", "maxLength": 100, "default": "flow_mgd"}, cli="--flow-column"),
        Input("units", {"type": "string", "enum": ["mgd", "gpd"]}, cli="--units"),
        Input("outfall", {"type": "string", "maxLength": 100}, cli="--outfall"),
        Input("location", {"type": "string", "maxLength": 100}, cli="--location"),
        application_input(),
        submittal_input(),
        committed_input("spdes check --committed BANK"),
    )

    def check(self, values, name, source):
        check_application(values, name, source)
        if ("flows" in values) == ("dmr" in values):
            raise FieldInputError(name("flows"), values.get("flows"), f"the plant's flow record once: {name('flows')} "
                                  f"(daily CSV) or {name('dmr')} (ECHO DMR {'download' if source == 'cli' else 'upload'})",
                                  None if "flows" in values else "missing")
        if "plant" not in values and "watershed" not in values:
            given = "--watershed or --not-watershed" if source == "cli" else "true or false"
            raise FieldInputError(name("watershed"), None, f"{given} (does the plant discharge within the NYC watershed? "
                                  f"15 RCNY § 18-37(b) applies only then), unless the {name('plant')} file says it",
                                  "missing")

    def finish(self, inputs, name, source):
        from capacitysim.workflows.spdes import plant_submittal

        inputs["submittal"] = submittal_of(inputs, plant_submittal(inputs.plant))
        if isinstance(inputs.committed, str) or hasattr(inputs.committed, "__fspath__"):
            from capacitysim.workflows.committed import plant_keys, spdes_commitments

            inputs["committed"] = spdes_commitments(inputs.committed, plant_keys(inputs.submittal, inputs.plant),
                                                    application=inputs.application)

    def run(self, inputs, progress=None, work_dir=None):
        from capacitysim.workflows.spdes import run_check

        progress = progress or NullProgress()
        progress.stage("inputs-checked", "plant read; checking the flow record")
        result = run_check(
            flows=inputs.flows, dmr=inputs.dmr, limit_mgd=inputs.limit_mgd, basis=inputs.basis, as_of=inputs.as_of,
            application_date=inputs.application_date, added_gpd=list(inputs.added_gpd or []), watershed=inputs.watershed,
            plant=inputs.plant, strict_record_age=bool(inputs.strict_record_age), submittal=inputs.submittal,
            date_column=inputs.get("date_column", "date"), flow_column=inputs.get("flow_column", "flow_mgd"),
            units=inputs.units, outfall=inputs.outfall, location=inputs.location, committed=inputs.committed)
        progress.stage("checked", f"flow record checked: verdict {result.to_dict().get('verdict')}")
        return result

    def report(self, result, path, doc=None):
        from capacitysim.report.spdes import write_report

        write_report(result, path)
        return path
