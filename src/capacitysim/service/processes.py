"""The service's process catalogue (OGC API - Processes, part 1): descriptions, JSON Schema, input validation.

Each process is one CLI command: ``capacity-demonstration`` (``capacitysim capacity``), ``detention-design``
(``capacitysim detention``), ``spdes-check`` (``capacitysim spdes check``), ``headroom``
(``capacitysim headroom``), ``credits-quantification`` (``capacitysim credits quantify``) and ``sweep``
(``capacitysim sweep run``). A request's ``inputs`` are checked here, in the server, before a job is
created: a bad value is a :class:`ServiceInputError` (HTTP 400) naming the field (``inputs.connections[0].gpd``),
the value and what is allowed. Files are named as the CLI names them: a bundled name (``"synthetic-50"``,
``"binghamton-1yr-24h"``, ``"sample-wwtp"``) or an upload (``"upload:<sha256>"``, from ``POST /uploads``);
:func:`prepare` resolves them to paths and records each file's SHA-256.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from capacitysim.errors import InputError
from capacitysim.io.submittal import SUBMITTAL_FIELDS

#: An uploaded file named in an input: ``upload:`` and the file's SHA-256 (hex).
UPLOAD_REF = re.compile(r"^upload:([0-9a-f]{64})$")
#: Longest text input accepted [characters] (a node id, a remediation spec, a name).
MAX_TEXT_CHARS = 500
#: Most items in an array input (connections, remediations, nodes, storms, added flows).
MAX_ITEMS = 200
#: Largest flow accepted in an input [gpd] (the bank's ceiling, 10^12, is far above any sewer).
MAX_GPD = 1e9


class ServiceInputError(InputError):
    """A request input the service refuses: names the field, the value and what is allowed (HTTP 400)."""

    def __init__(self, field: str, value, allowed: str, problem: str | None = None):
        self.field, self.value, self.allowed = field, value, allowed
        shown = _show(value)
        super().__init__(f"{field}: {problem or 'got ' + shown}; allowed: {allowed}")
        self.problem = problem

    def to_dict(self) -> dict:
        return {"field": self.field, "value": _jsonable(self.value), "allowed": self.allowed}


def _show(value) -> str:
    text = json.dumps(_jsonable(value))
    return text if len(text) <= 80 else text[:77] + "..."


def _jsonable(value):
    try:
        json.dumps(value, allow_nan=False)
        return value
    except (TypeError, ValueError):
        return repr(value)[:200]


# --- bundled files ------------------------------------------------------------------------------


def _bundled_folder(kind: str) -> Path:
    from capacitysim.io.files import bundled_dir, package_data_dir

    if kind == "model":
        return bundled_dir("models")
    if kind == "storm":
        return bundled_dir("storms")
    if kind == "rule":
        return package_data_dir() / "rules"
    return bundled_dir("models") / {"site": "sites", "project": "projects", "plant": "plants", "flows": "plants",
                                    "sweep": "sweeps"}[kind]


#: The file suffix of each kind of bundled file.
_SUFFIX = {"model": ".inp", "storm": ".toml", "rule": ".toml", "site": ".toml", "project": ".toml", "plant": ".toml",
           "flows": ".csv", "sweep": ".toml"}


def bundled(kind: str) -> dict[str, Path]:
    """The bundled files of one kind (``model``, ``storm``, ``site``, ``project``, ``plant``, ``flows``,
    ``sweep``, ``rule``), name to path."""
    folder = _bundled_folder(kind)
    if not folder.is_dir():
        return {}
    return {p.stem: p for p in sorted(folder.glob(f"*{_SUFFIX[kind]}")) if p.is_file()}


def sha256_file(path) -> str:
    """SHA-256 (hex) of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# --- the catalogue --------------------------------------------------------------------------------

_SUBMITTAL_SCHEMA = {
    "type": "object", "description": "Submittal identification (shown on the report and in the JSON).",
    "properties": {k: {"type": "string", "maxLength": 200, "description": v} for k, v in SUBMITTAL_FIELDS.items()},
    "additionalProperties": False,
}


def _file_schema(kind: str, what: str) -> dict:
    names = sorted(bundled(kind))
    return {"type": "string", "maxLength": MAX_TEXT_CHARS,
            "description": f"{what}: a bundled name ({', '.join(names) or 'none'}) or an upload (\"upload:<sha256>\" "
                           "from POST /uploads).",
            "x-bundled": names, **({"examples": names[:1]} if names else {})}


def _gpd(desc: str) -> dict:
    return {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_GPD, "description": f"{desc} [gpd]"}


#: Most files uploaded with a model or a sweep file (rain gauge, time series, climate, interface files).
MAX_COMPANIONS = 50
#: Most plants given to one capacity-register job.
MAX_REGISTER_PLANTS = 20
#: The input that carries the files uploaded with each process's model or sweep file.
COMPANIONS = {"capacity-demonstration": "model_files", "headroom": "model_files", "sweep": "sweep_files"}


def _companions(what: str) -> dict:
    return {"type": "array", "maxItems": MAX_COMPANIONS,
            "items": {"type": "string", "maxLength": MAX_TEXT_CHARS, "pattern": UPLOAD_REF.pattern},
            "description": f"Files uploaded with the {what} (\"upload:<sha256>\" from POST /uploads, each uploaded with "
                           f"?filename=NAME): the {what} names each by that bare NAME (a [TIMESERIES] or [RAINGAGES] FILE, "
                           "a [FILES] USE file, a model or storm a sweep names). Nothing else on the server can be named: "
                           "no path, no folder, no other upload."}


def _peaking() -> dict:
    return {"description": "How connections are peaked: \"pattern\" (the model's diurnal DWF pattern) or a constant "
                           "peaking factor >= 1.",
            "oneOf": [{"type": "string", "enum": ["pattern"]}, {"type": "number", "minimum": 1, "maximum": 100}],
            "default": "pattern"}


def _remediations() -> dict:
    return {"type": "array", "maxItems": MAX_ITEMS,
            "items": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT_CHARS},
            "description": "I/I remediation specs, as the CLI's --remediate: basin=OUTLET,fraction=0.3 | "
                           "basin=OUTLET,gpd=50000 | nodes=A;B,fraction=25% | nodes=A;B,sump_pumps=12 | "
                           "basin=OUTLET,roof_sqft=20000."}


def _application() -> dict:
    return {"type": "string", "minLength": 1, "maxLength": 200,
            "description": "The applicant's own application id (as the bank records it), left out of the credit bank's "
                           "commitments the job includes: the CLI's --application. The commitments are included by "
                           "themselves when the model (or the plant) is registered in the service's bank; there is no "
                           "input to leave them out."}


def _criteria() -> dict:
    from capacitysim.rules.capacity import Criteria

    return {"type": "object", "description": "Acceptance criteria overriding the defaults (a criteria TOML as JSON).",
            "properties": {k: {"type": "number", "minimum": 0} for k in Criteria.__dataclass_fields__},
            "additionalProperties": False}


@dataclass
class Process:
    """One process of the catalogue (OGC process description) and the CLI command it reproduces."""

    id: str
    title: str
    description: str
    command: str
    inputs: dict
    required: tuple[str, ...]
    output_kind: str
    has_report: bool
    files: dict = field(default_factory=dict)  # input name -> bundled kind

    def input_schema(self) -> dict:
        return {"type": "object", "properties": self.inputs, "required": list(self.required),
                "additionalProperties": False}

    def output_schema(self) -> dict:
        return {"type": "object", "description": f"The JSON document `{self.command} --json` prints (same keys, same "
                                                 "verdict).",
                "properties": {"kind": {"type": "string"}} if self.output_kind else {}}

    def summary(self, base: str = "") -> dict:
        return {"id": self.id, "title": self.title, "description": self.description, "version": _version(),
                "jobControlOptions": ["sync-execute", "async-execute", "dismiss"],
                "outputTransmission": ["value"],
                "links": [{"href": f"{base}/processes/{self.id}", "rel": "self", "type": "application/json",
                           "title": "process description"},
                          {"href": f"{base}/processes/{self.id}/execution", "rel": "http://www.opengis.net/def/rel/ogc/1.0/execute",
                           "type": "application/json", "title": "execute"}]}

    def describe(self, base: str = "") -> dict:
        return self.summary(base) | {
            "command": self.command,
            "inputs": {k: {"title": k, "schema": v, "minOccurs": 1 if k in self.required else 0, "maxOccurs": 1}
                       for k, v in self.inputs.items()},
            "inputsSchema": self.input_schema(),
            "outputs": {"result": {"title": "result document", "schema": self.output_schema()},
                        **({"report": {"title": "HTML report", "schema": {"type": "string", "contentMediaType": "text/html"}}}
                           if self.has_report else {})},
        }


def _version() -> str:
    from capacitysim.version import __version__

    return __version__


@functools.lru_cache(maxsize=1)
def catalogue() -> dict[str, Process]:
    """The processes, by id (built once per server: the bundled names are read from the installed package)."""
    from capacitysim.rules import ii_offset
    from capacitysim.rules.spdes import BASES

    submittal = _SUBMITTAL_SCHEMA
    procs = [
        Process(
            "capacity-demonstration", "Capacity demonstration",
            "SWMM before and after new connections and/or I/I remediation, judged element by element "
            "(BJC I/I offset program, credit bank H(1)). Verdict pass | fail | untrusted. On the current registered "
            "model of a basin of the service's credit bank, every flow the bank has committed is in both runs "
            "(`capacitysim capacity --committed BANK`; the result's `committed`).",
            "capacitysim capacity",
            {"model": _file_schema("model", "SWMM model"),
             "model_files": _companions("model"),
             "storm": _file_schema("storm", "Design storm (default: the model's own rainfall)"),
             "connections": {"type": "array", "maxItems": MAX_ITEMS, "description": "New connections.",
                             "items": {"type": "object", "required": ["node", "gpd"], "additionalProperties": False,
                                       "properties": {"node": {"type": "string", "minLength": 1, "maxLength": 100,
                                                               "description": "Model node"},
                                                      "gpd": _gpd("Average daily flow")}}},
             "remediations": _remediations(),
             "peaking": _peaking(),
             "plant": {"type": "string", "maxLength": 100, "description": "The plant outfall (default: chosen from the network)."},
             "spinup_hr": {"type": "number", "minimum": 0, "maximum": 720, "description": "Dry-weather spin-up [h] (default 6)."},
             "criteria": _criteria(),
             "application": _application(),
             "submittal": submittal},
            ("model",), "capacity-demonstration", True, {"model": "model", "storm": "storm"}),
        Process(
            "detention-design", "Detention design (NYC)",
            "Size the detention system and orifice of a NYC site (15 RCNY § 31-03), checked in SWMM.",
            "capacitysim detention",
            {"site": _file_schema("site", "Site TOML"),
             "rule": {"type": "string", "enum": sorted(bundled("rule")) or ["nyc-2012"], "default": "nyc-2012",
                      "description": "Bundled rule set."},
             "swmm": {"type": "boolean", "default": True, "description": "Check the design in SWMM."},
             "approved_on": {"type": "string", "format": "date",
                             "description": "Date DEP approved the system (not after today), over the site file's "
                                            "[submittal] approved_on: dates the triennial certification of 15 RCNY "
                                            "§ 31-04(a)(8) (CLI --approved-on)."},
             "submittal": submittal},
            ("site",), "", True, {"site": "site"}),
        Process(
            "spdes-check", "Treatment capacity (SPDES flow limit)",
            "A plant's flow record against its SPDES flow limit: 15 RCNY § 18-37(b) for watershed plants, the "
            "permitted-flow headroom for others. For a plant a basin of the service's credit bank drains to, the flow "
            "the bank has committed to it is part of the baseline (`capacitysim spdes check --committed BANK`; the "
            "result's `committed_gpd`).",
            "capacitysim spdes check",
            {"plant": _file_schema("plant", "Plant TOML"),
             "flows": _file_schema("flows", "Daily flow CSV (date, flow_mgd)"),
             "dmr": {"type": "string", "maxLength": MAX_TEXT_CHARS, "description": "An uploaded EPA ECHO DMR CSV (\"upload:<sha256>\")."},
             "watershed": {"type": "boolean", "description": "Does the plant discharge within the NYC watershed?"},
             "limit_mgd": {"type": "number", "exclusiveMinimum": 0, "maximum": 10000, "description": "Flow limit [MGD]."},
             "basis": {"type": "string", "enum": list(BASES), "description": "The permit's averaging basis."},
             "as_of": {"type": "string", "format": "date", "description": "Date of the check YYYY-MM-DD (default today)."},
             "application_date": {"type": "string", "format": "date", "description": "Date of the application YYYY-MM-DD."},
             "strict_record_age": {"type": "boolean", "default": False, "description": "Refuse a stale record."},
             "added_gpd": {"type": "array", "maxItems": MAX_ITEMS, "items": {"type": "number", "minimum": 0, "maximum": MAX_GPD},
                           "description": "Average daily flow of the new connection(s) [gpd]."},
             "date_column": {"type": "string", "maxLength": 100, "default": "date"},
             "flow_column": {"type": "string", "maxLength": 100, "default": "flow_mgd"},
             "units": {"type": "string", "enum": ["mgd", "gpd"]},
             "outfall": {"type": "string", "maxLength": 100},
             "location": {"type": "string", "maxLength": 100},
             "application": _application(),
             "submittal": submittal},
            (), "spdes-check", True, {"plant": "plant", "flows": "flows", "dmr": None}),
        Process(
            "headroom", "Capacity headroom",
            "The largest connection each node can take, bracketed by SWMM runs (run inside the job's worker: "
            "service policy headroom_workers = 0).",
            "capacitysim headroom",
            {"model": _file_schema("model", "SWMM model"),
             "model_files": _companions("model"),
             "storms": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": MAX_TEXT_CHARS},
                        "description": "Design storms (bundled names or uploads)."},
             "nodes": {"type": "array", "maxItems": MAX_ITEMS, "items": {"type": "string", "minLength": 1, "maxLength": 100}},
             "basin": {"type": "string", "maxLength": 100},
             "remediations": _remediations(),
             "plant": {"type": "string", "maxLength": 100},
             "peaking": _peaking(),
             "spinup_hr": {"type": "number", "minimum": 0, "maximum": 720},
             "tolerance_pct": {"type": "number", "exclusiveMinimum": 0, "maximum": 100, "default": 5},
             "max_gpd": _gpd("Largest connection searched") | {"default": 10000000},
             "min_gpd": _gpd("Smallest connection searched") | {"default": 100},
             "method": {"type": "string", "enum": ["screen", "bisection"], "default": "screen"},
             "criteria": _criteria(),
             "submittal": submittal},
            ("model",), "headroom", True, {"model": "model"}),
        Process(
            "credits-quantification", "I/I credit quantification",
            "The itemised I/I remediation engineering report of a project (BJC Tables 174-19.1 to 174-19.3).",
            "capacitysim credits quantify",
            {"project": _file_schema("project", "Project TOML"),
             "inflow_basis": {"type": "string", "enum": list(ii_offset.INFLOW_CREDIT_BASES),
                              "default": ii_offset.DEFAULT_INFLOW_CREDIT_BASIS,
                              "description": "Program policy inflow_credit_basis."}},
            ("project",), "", False, {"project": "project"}),
        Process(
            "capacity-register", "Capacity register",
            "The capacity register of the service's credit bank (issue 24): per plant given its flow record, the "
            "permitted flow, the 12-month figure, the committed flow and the remaining treatment headroom; per "
            "registered model, the remaining headroom per manhole with every commitment in place, at each commitment's "
            "node, each basin's outlet and the nodes asked (run inside the job's worker: service policy "
            "headroom_workers = 0). GET /bank/register and /ui/bank/register show the last one, each figure current "
            "or stale against the bank.",
            "capacitysim bank register",
            {"plants": {"type": "array", "maxItems": MAX_REGISTER_PLANTS,
                        "description": "The flow records of the registered plants (a plant not given is listed with its "
                                       "committed flow, its remaining headroom not computed): the CLI's --plant KEY=PLANT.",
                        "items": {"type": "object", "required": ["key", "plant", "flows"], "additionalProperties": False,
                                  "properties": {
                                      "key": {"type": "string", "minLength": 1, "maxLength": 200,
                                              "description": "The plant as the bank registers it (SPDES permit number or "
                                                             "name, GET /bank/models)."},
                                      "plant": _file_schema("plant", "Plant TOML"),
                                      "flows": _file_schema("flows", "Daily flow CSV (date, flow_mgd)")}}},
             "storms": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": MAX_TEXT_CHARS},
                        "description": "Design storms of the models' headroom (bundled names or uploads; default each "
                                       "model's own rainfall)."},
             "nodes": {"type": "array", "maxItems": MAX_ITEMS, "items": {"type": "string", "minLength": 1, "maxLength": 100},
                       "description": "Nodes searched besides each commitment's node and each basin's outlet."},
             "as_of": {"type": "string", "format": "date", "description": "Date of the register YYYY-MM-DD (default "
                                                                         "today)."},
             "tolerance_pct": {"type": "number", "exclusiveMinimum": 0, "maximum": 100, "default": 5},
             "spinup_hr": {"type": "number", "minimum": 0, "maximum": 720}},
            (), "capacity-register", True, {}),
        Process(
            "sweep", "Scenario sweep",
            "Every scenario of a sweep file, into a Zarr store in the job's folder (run inside the job's worker: "
            "service policy sweep_workers = 0).",
            "capacitysim sweep run",
            {"sweep": _file_schema("sweep", "Sweep TOML"), "sweep_files": _companions("sweep file")},
            ("sweep",), "", False, {"sweep": "sweep"}),
    ]
    return {p.id: p for p in procs}


# --- validation ------------------------------------------------------------------------------------


def _type_ok(value, t: str) -> bool:
    if t == "string":
        return isinstance(value, str)
    if t == "boolean":
        return isinstance(value, bool)
    if t == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if t == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if t == "array":
        return isinstance(value, list)
    if t == "object":
        return isinstance(value, dict)
    return False


def _allowed(schema: dict) -> str:
    if "oneOf" in schema:
        return " or ".join(_allowed(s) for s in schema["oneOf"])
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
    t = schema.get("type")
    if t in ("number", "integer"):
        lo = schema.get("minimum", schema.get("exclusiveMinimum"))
        hi = schema.get("maximum")
        left = "(" if "exclusiveMinimum" in schema else "["
        rng = f" in {left}{lo:g}, {'inf' if hi is None else format(hi, 'g')}]" if lo is not None else ""
        return f"a {'whole ' if t == 'integer' else ''}number{rng}"
    if t == "string":
        if schema.get("format") == "date":
            return "a date YYYY-MM-DD"
        bundled_names = schema.get("x-bundled")
        if bundled_names is not None:
            return f"a bundled name ({', '.join(bundled_names) or 'none'}) or \"upload:<sha256>\""
        return f"text of {schema.get('minLength', 0)} to {schema.get('maxLength', MAX_TEXT_CHARS)} characters"
    if t == "array":
        return f"an array of at most {schema.get('maxItems', MAX_ITEMS)} items, each {_allowed(schema.get('items', {}))}"
    if t == "object":
        props = schema.get("properties", {})
        return "an object" + (f" with keys {', '.join(props)}" if props else "")
    if t == "boolean":
        return "true or false"
    return "a JSON value"


_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def check_value(name: str, value, schema: dict):
    """Check ``value`` against the subset of JSON Schema the catalogue uses; raise :class:`ServiceInputError`."""
    if "oneOf" in schema:
        for alt in schema["oneOf"]:
            try:
                return check_value(name, value, alt)
            except ServiceInputError:
                continue
        raise ServiceInputError(name, value, _allowed(schema))
    t = schema.get("type")
    if t and not _type_ok(value, t):
        raise ServiceInputError(name, value, _allowed(schema))
    if "enum" in schema and value not in schema["enum"]:
        raise ServiceInputError(name, value, _allowed(schema))
    if t in ("number", "integer"):
        if ("minimum" in schema and value < schema["minimum"]) or ("maximum" in schema and value > schema["maximum"]) \
                or ("exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]):
            raise ServiceInputError(name, value, _allowed(schema))
    if t == "string":
        if len(value) > schema.get("maxLength", MAX_TEXT_CHARS) or len(value) < schema.get("minLength", 0) \
                or "\x00" in value:
            raise ServiceInputError(name, value, _allowed(schema))
        if schema.get("format") == "date":
            import datetime as _dt

            try:
                if not _DATE.match(value):
                    raise ValueError
                _dt.date.fromisoformat(value)
            except ValueError:
                raise ServiceInputError(name, value, _allowed(schema)) from None
    if t == "array":
        if len(value) > schema.get("maxItems", MAX_ITEMS):
            raise ServiceInputError(name, value, _allowed(schema), f"{len(value)} items")
        for i, item in enumerate(value):
            check_value(f"{name}[{i}]", item, schema.get("items", {}))
    if t == "object":
        props = schema.get("properties", {})
        if schema.get("additionalProperties") is False:
            for k in value:
                if k not in props:
                    raise ServiceInputError(f"{name}.{k}", value[k], f"the keys {', '.join(props) or '(none)'}",
                                            "unknown key")
        for k in schema.get("required", []):
            if k not in value:
                raise ServiceInputError(f"{name}.{k}", None, _allowed(props.get(k, {})), "missing (required)")
        for k, v in value.items():
            if k in props:
                check_value(f"{name}.{k}", v, props[k])
    return value


@dataclass
class Prepared:
    """A validated request: the inputs as given (JSON), the files they name, and each file's SHA-256."""

    process: str
    inputs: dict
    files: dict[str, str]          # input name (inputs.model, inputs.storms[0]) -> absolute path
    sha256: dict[str, str]         # same keys -> SHA-256 of the file; "inputs" -> of the canonical inputs JSON


def canonical_json(obj) -> str:
    """The canonical JSON text of a value (sorted keys, no spaces): what the inputs' SHA-256 is taken of."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)


def resolve_file(name: str, value: str, kind: str | None, uploads) -> Path:
    """A file input: a bundled name of ``kind`` or ``upload:<sha256>`` (``uploads(sha) -> Path | None``)."""
    m = UPLOAD_REF.match(value)
    names = bundled(kind) if kind else {}
    allowed = (f"a bundled name ({', '.join(names)}) or " if kind else "") + "\"upload:<sha256>\" of a file sent to POST /uploads"
    if m:
        path = uploads(m.group(1))
        if path is None:
            raise ServiceInputError(name, value, allowed, f"no upload {m.group(1)[:12]}...")
        return Path(path)
    if value in names:
        return names[value].resolve()
    raise ServiceInputError(name, value, allowed)


#: Service policy ``max_simulation_work``: the largest single SWMM run the service accepts, in routing steps x
#: elements (:func:`capacitysim.network.model.simulation_size`, estimated before the run). 2e9 is about 15 min
#: of engine time on one core (measured: synthetic-500 under the program storm, 1.9e7, runs in 10 s).
MAX_SIMULATION_WORK = 2e9


def check_simulation_size(model: Path, spinup_hr, field: str) -> dict:
    """Refuse (:class:`ServiceInputError`) a model whose one run is larger than :data:`MAX_SIMULATION_WORK`, with the
    estimate in the message; returns the estimate."""
    from capacitysim.network.model import parse_inp, simulation_size

    try:
        size = simulation_size(parse_inp(model), 6.0 if spinup_hr is None else float(spinup_hr))
    except InputError as exc:
        raise ServiceInputError(field, model.name, "a SWMM model with valid dates and routing step", str(exc)) from None
    if size["work"] > MAX_SIMULATION_WORK:
        raise ServiceInputError(
            field, model.name, f"a run of at most {MAX_SIMULATION_WORK:.3g} routing steps x elements (service policy "
            "max_simulation_work)", f"one run is estimated at {max(size['steps'], size['report_steps']):,.0f} routing "
            f"or reporting steps ({size['period_hr']:,.1f} h at {size['routing_step_s']:g} s routing, "
            f"{size['report_step_s']:g} s reporting) x {size['elements']:,} elements = {size['work']:.3g}")
    return size


def companion_files(process_id: str, inputs: dict, uploads) -> dict[str, Path]:
    """The files uploaded with a process's model or sweep file, by the name they were uploaded under."""
    key = COMPANIONS.get(process_id)
    out: dict[str, Path] = {}
    for i, ref in enumerate(inputs.get(key, []) if key else []):
        path = resolve_file(f"inputs.{key}[{i}]", ref, None, uploads)
        if path.name in out:
            raise ServiceInputError(f"inputs.{key}[{i}]", ref, "files of distinct names (the model names them by name)",
                                    f"a second file named {path.name!r}")
        out[path.name] = path
    return out


def confined_model(model: Path, names: set[str], field: str) -> tuple[str, list[dict]]:
    """The text of a model the service runs (:func:`capacitysim.network.inp_text.confine_model_text`): it may read
    only ``names`` (the files uploaded with it); anything else is a :class:`ServiceInputError` on ``field``, the same
    whether or not such a path exists on the server."""
    from capacitysim.network.inp_text import ConfinedModelError, confine_model_text

    text = model.read_bytes().decode("latin-1")
    try:
        return confine_model_text(text, frozenset(names), field=field)
    except ConfinedModelError as exc:
        raise ServiceInputError(field, model.name, "a model whose files are uploaded with it (inputs.model_files) and "
                                "named by their bare file names", str(exc).split(": ", 1)[-1]) from None


#: The keys of a sweep file that name another file (io/sweep_files.py).
SWEEP_FILE_KEYS = {"model": "model", "site": "site", "storm": "storm", "rules": "rule"}


def check_sweep_files(sweep: Path, companions: dict[str, Path]) -> None:
    """A sweep file run by the service names only bundled files or files uploaded with it, by bare name; a model
    it names among those is confined as ``inputs.model`` is (:func:`confined_model`)."""
    import tomllib

    try:
        data = tomllib.loads(sweep.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ServiceInputError("inputs.sweep", sweep.name, "a TOML sweep file (UTF-8)", f"not TOML: {exc}") from None
    for key, kind in SWEEP_FILE_KEYS.items():
        value = data.get(key)
        if not isinstance(value, str):
            continue  # the sweep reader names what is wrong with it
        names = bundled(kind)
        stem = value[:-len(_SUFFIX[kind])] if value.endswith(_SUFFIX[kind]) else value
        if value in companions and key != "rules":  # a rule set file is looked up from the worker's folder: bundled only
            if key == "model":
                confined_model(companions[value], set(companions), f"inputs.sweep_files ({value}, the sweep's model)")
            continue
        if stem in names and "/" not in value and "\\" not in value:
            continue
        raise ServiceInputError(f"inputs.sweep ({key})", value,
                                f"a bundled {kind} ({', '.join(names) or 'none'}) or the bare name of a file uploaded with "
                                f"the sweep (inputs.sweep_files: {', '.join(companions) or 'none'})",
                                f"{key} = {_show(value)} names a file that is neither bundled nor uploaded with the sweep")


def _node_ids(inp: Path) -> set[str]:
    """The node names of a SWMM .inp (first token of each node section's rows); read as text, no engine."""
    from capacitysim.io.bundled import NODE_SECTIONS
    from capacitysim.network.inp_text import engine_tokens, section_of

    ids, section = set(), None
    with open(inp, encoding="latin-1") as fh:
        for line in fh:
            s = line.strip()
            first = engine_tokens(line)[:1]
            if first and first[0].startswith("["):
                section = section_of(first[0])
                continue
            if s and not s.startswith(";") and section in NODE_SECTIONS:
                ids.add(s.split()[0])
    return ids


def prepare(process_id: str, body, uploads) -> Prepared:
    """Validate an execute request's body (``{"inputs": {...}}``) for ``process_id``.

    Parameters
    ----------
    process_id : str
    body : object
        The parsed JSON body.
    uploads : callable
        ``uploads(sha256) -> Path | None``: the stored upload of that hash.

    Raises
    ------
    ServiceInputError
        Naming the field (``inputs.connections[0].node``), the value and what is allowed.
    """
    procs = catalogue()
    proc = procs[process_id]
    if not isinstance(body, dict):
        raise ServiceInputError("body", body, "a JSON object {\"inputs\": {...}}")
    extra = [k for k in body if k not in ("inputs", "outputs", "response", "subscriber")]
    if extra:
        raise ServiceInputError(extra[0], body[extra[0]], "the keys inputs, outputs, response, subscriber", "unknown key")
    inputs = body.get("inputs", {})
    check_value("inputs", inputs, proc.input_schema())
    files: dict[str, str] = {}
    for key, kind in proc.files.items():
        if key in inputs:
            files[key] = str(resolve_file(f"inputs.{key}", inputs[key], kind, uploads))
    if process_id in ("headroom", "capacity-register"):
        for i, s in enumerate(inputs.get("storms", [])):
            files[f"storms[{i}]"] = str(resolve_file(f"inputs.storms[{i}]", s, "storm", uploads))
    if process_id == "capacity-register":
        keys = set()
        for i, item in enumerate(inputs.get("plants", [])):
            if item["key"].strip().casefold() in keys:
                raise ServiceInputError(f"inputs.plants[{i}].key", item["key"], "each registered plant once")
            keys.add(item["key"].strip().casefold())
            for part, kind in (("plant", "plant"), ("flows", "flows")):
                path = resolve_file(f"inputs.plants[{i}].{part}", item[part], kind, uploads)
                if "," in str(path):
                    raise ServiceInputError(f"inputs.plants[{i}].{part}", item[part], "a file whose path has no comma",
                                            "the register names a plant's files as PLANT,FLOWS")
                files[f"plants[{i}].{part}"] = str(path)
    companions = companion_files(process_id, inputs, uploads)
    for i, (name, path) in enumerate(companions.items()):
        files[f"{COMPANIONS[process_id]}[{i}]"] = str(path)
    if "model" in files:
        confined_model(Path(files["model"]), set(companions), "inputs.model")
    if process_id == "sweep" and UPLOAD_REF.match(inputs["sweep"]):  # a bundled sweep names the package's files
        check_sweep_files(Path(files["sweep"]), companions)
    if "model" in files:
        check_simulation_size(Path(files["model"]), inputs.get("spinup_hr"), "inputs.model")
    if process_id == "capacity-demonstration":
        if not inputs.get("connections") and not inputs.get("remediations"):
            raise ServiceInputError("inputs.connections", inputs.get("connections"),
                                    "at least one connection or remediation (a demonstration of nothing is not one)")
        known = _node_ids(Path(files["model"]))
        for i, c in enumerate(inputs.get("connections", [])):
            if c["node"] not in known:
                shown = ", ".join(sorted(known)[:8])
                raise ServiceInputError(f"inputs.connections[{i}].node", c["node"],
                                        f"a node of the model ({len(known)} nodes: {shown}, ...)")
    if process_id == "headroom":
        known = _node_ids(Path(files["model"]))
        for i, n in enumerate(inputs.get("nodes", [])):
            if n not in known:
                raise ServiceInputError(f"inputs.nodes[{i}]", n, f"a node of the model ({len(known)} nodes)")
        if "nodes" in inputs and "basin" in inputs:
            raise ServiceInputError("inputs.basin", inputs["basin"], "one of inputs.nodes and inputs.basin")
    if process_id == "spdes-check":
        if ("flows" in inputs) == ("dmr" in inputs):
            raise ServiceInputError("inputs.flows", inputs.get("flows"), "the plant's flow record once: inputs.flows "
                                    "(daily CSV) or inputs.dmr (ECHO DMR upload)")
        if "plant" not in inputs and "watershed" not in inputs:
            raise ServiceInputError("inputs.watershed", None, "true or false (required unless inputs.plant says it)",
                                    "missing")
    if "submittal" in inputs:
        from capacitysim.io.submittal import Submittal

        try:
            Submittal(**inputs["submittal"])
        except InputError as exc:
            raise ServiceInputError("inputs.submittal", inputs["submittal"], str(exc)) from None
    if "criteria" in inputs:
        from capacitysim.rules.capacity import Criteria

        try:
            Criteria.from_dict(inputs["criteria"], "inputs.criteria")
        except InputError as exc:
            raise ServiceInputError("inputs.criteria", inputs["criteria"], str(exc)) from None
    sha = {k: sha256_file(v) for k, v in files.items()}
    sha["inputs"] = hashlib.sha256(canonical_json(inputs).encode()).hexdigest()
    return Prepared(process_id, inputs, files, sha)


def _swmm_engine() -> str | None:
    """The EPA SWMM engine's version (``5.2.4``), from ``swmm_get_version()`` (written 52004), or None."""
    try:
        from swmm.toolkit import solver

        v = int(solver.swmm_get_version())
    except Exception:  # noqa: BLE001 - no engine installed: the record says so
        return None
    return f"{v // 10000}.{v // 1000 % 10}.{v % 1000}"


@functools.lru_cache(maxsize=None)
def _versions(process_id: str) -> str:
    return json.dumps(_compute_versions(process_id))


def versions(process_id: str) -> dict:
    """What a job of ``process_id`` runs on (computed once per server process; see :func:`_compute_versions`)."""
    return json.loads(_versions(process_id))


def _compute_versions(process_id: str) -> dict:
    """What a job ran on: capacitysim, the SWMM engine and its bindings, the rule sets (SHA-256 of each bundled
    rule file and of the design-flow table), Python."""
    import platform
    from importlib import metadata

    from capacitysim.io.files import package_data_dir

    def ver(dist):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    rules = {name: sha256_file(p) for name, p in bundled("rule").items()}
    flows = package_data_dir() / "design_flows.toml"
    if flows.is_file():
        rules["design_flows"] = sha256_file(flows)
    return {"capacitysim": _version(), "engine": {"swmm": _swmm_engine(), "swmm-toolkit": ver("swmm-toolkit"),
                                                  "pyswmm": ver("pyswmm"), "swmmio": ver("swmmio")},
            "rule_sets": rules, "python": platform.python_version(), "dask": ver("dask"), "process": process_id,
            "engine_sandbox": engine_sandbox()}


def engine_sandbox() -> str:
    """The operating system's wall around the engine's child processes on this server
    (:func:`capacitysim.network.sandbox.status`): ``landlock ABI <n>`` or ``unavailable: <reason>``."""
    from capacitysim.network.sandbox import status

    return status()
