"""The service's process catalogue (OGC API - Processes, part 1): generated from the processes of
:mod:`capacitysim.processes`, with the service's own checks of a request.

Each process is one workflow (:class:`capacitysim.processes.base.Process`) and one CLI command:
``capacity-demonstration`` (``capacitysim capacity``), ``detention-design`` (``capacitysim detention``),
``spdes-check`` (``capacitysim spdes check``), ``headroom`` (``capacitysim headroom``), ``credits-quantification``
(``capacitysim credits quantify``), ``capacity-register`` (``capacitysim bank register``) and ``sweep``
(``capacitysim sweep run``). A request's ``inputs`` are checked here, in the server, before a job is created, by
the process's own validator (its inputs' JSON Schema, the rules between them), then by the service's checks
(files named only as bundled names or uploads, confined models, the simulation size, nodes of the model): a bad
value is a :class:`ServiceInputError` (HTTP 400) naming the field (``inputs.connections[0].gpd``), the value and
what is allowed. Files are named as the CLI names them: a bundled name (``"synthetic-50"``,
``"binghamton-1yr-24h"``, ``"sample-wwtp"``) or an upload (``"upload:<sha256>"``, from ``POST /uploads``);
:func:`prepare` resolves them to paths and records each file's SHA-256. A design storm may also be a storm spec
(``"type2:3.2in"``, :func:`storm_spec`): no file, checked here, read by the job.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from capacitysim.errors import InputError
from capacitysim.processes import get as get_process
from capacitysim.processes import registry
from capacitysim.processes.base import (MAX_GPD, MAX_ITEMS, MAX_TEXT_CHARS, SUFFIX, UPLOAD_REF, FieldInputError,
                                        bundled, check_value)
from capacitysim.processes.base import _show as _show
from capacitysim.processes.base import allowed as _allowed
from capacitysim.processes.common import MAX_COMPANIONS
from capacitysim.processes.register import MAX_REGISTER_PLANTS

#: A request input the service refuses: names the field, the value and what is allowed (HTTP 400); the processes'
#: own error, raised by their validator.
ServiceInputError = FieldInputError

__all__ = ["MAX_COMPANIONS", "MAX_GPD", "MAX_ITEMS", "MAX_REGISTER_PLANTS", "MAX_TEXT_CHARS", "ServiceInputError",
           "bundled", "catalogue", "check_value", "prepare", "versions", "_allowed"]


def sha256_file(path) -> str:
    """SHA-256 (hex) of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# --- the catalogue --------------------------------------------------------------------------------


@dataclass
class ServiceProcess:
    """A process of the catalogue: the OGC process description of a :class:`capacitysim.processes.base.Process`."""

    process: object

    @property
    def id(self) -> str:
        return self.process.id

    def input_schema(self) -> dict:
        return self.process.input_schema(service=True)

    def output_schema(self) -> dict:
        return {"type": "object", "description": f"The JSON document `{self.process.command} --json` prints (same keys, "
                                                 "same verdict).",
                "properties": {"kind": {"type": "string"}} if self.process.kind else {}}

    def summary(self, base: str = "") -> dict:
        p = self.process
        return {"id": p.id, "title": p.title, "description": p.description, "version": p.version,
                "jobControlOptions": ["sync-execute", "async-execute", "dismiss"],
                "outputTransmission": ["value"],
                "links": [{"href": f"{base}/processes/{p.id}", "rel": "self", "type": "application/json",
                           "title": "process description"},
                          {"href": f"{base}/processes/{p.id}/execution", "rel": "http://www.opengis.net/def/rel/ogc/1.0/execute",
                           "type": "application/json", "title": "execute"}]}

    def describe(self, base: str = "") -> dict:
        schema = self.input_schema()
        return self.summary(base) | {
            "command": self.process.command,
            "inputs": {k: {"title": k, "schema": v, "minOccurs": 1 if k in schema["required"] else 0, "maxOccurs": 1}
                       for k, v in schema["properties"].items()},
            "inputsSchema": schema,
            "outputs": {"result": {"title": "result document", "schema": self.output_schema()},
                        **({"report": {"title": "HTML report", "schema": {"type": "string", "contentMediaType": "text/html"}}}
                           if self.process.has_report else {})},
        }


def _version() -> str:
    from capacitysim.version import __version__

    return __version__


@functools.lru_cache(maxsize=1)
def catalogue() -> dict[str, ServiceProcess]:
    """The processes, by id (built once per server: the bundled names are read from the installed package)."""
    return {pid: ServiceProcess(p) for pid, p in registry().items()}


#: The input that carries the files uploaded with each process's model or sweep file.
COMPANIONS = {pid: p.companion_input for pid, p in registry().items() if p.companion_input}


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


def storm_spec(name: str, value):
    """A storm input written as a storm spec (``type2:3.2in``, :func:`capacitysim.io.storms.parse_storm_spec`):
    its ``StormSpec``; None for anything else (a bundled name or an upload, resolved as a file). A value that looks
    like a spec and is not a valid one is a :class:`ServiceInputError` naming what is wrong with it. The service
    never reads a spec as a path: a spec contains ``:`` and no bundled name or upload reference does."""
    from capacitysim.io.storms import SPEC_GRAMMAR, StormSpecError, looks_like_storm_spec, parse_storm_spec

    if not isinstance(value, str) or UPLOAD_REF.match(value) or not looks_like_storm_spec(value):
        return None
    try:
        return parse_storm_spec(value)
    except StormSpecError as exc:
        names = ", ".join(bundled("storm")) or "none"
        raise ServiceInputError(name, value, f"a bundled storm ({names}), \"upload:<sha256>\" of a storm file, or a "
                                f"storm spec {SPEC_GRAMMAR}", exc.problem) from None


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
        stem = value[:-len(SUFFIX[kind])] if value.endswith(SUFFIX[kind]) else value
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


def _element_ids(inp: Path, sections) -> set[str]:
    """The names of a SWMM .inp's elements in ``sections`` (first token of each row, the section headers read by
    the engine's own abbreviation rule: ``[RAINGAGE]`` is ``[RAINGAGES]``); read as text, no engine."""
    from capacitysim.network.inp_text import engine_tokens, section_of

    ids, section = set(), None
    with open(inp, encoding="latin-1") as fh:
        for line in fh:
            s = line.strip()
            first = engine_tokens(line)[:1]
            if first and first[0].startswith("["):
                section = section_of(first[0])
                continue
            if s and not s.startswith(";") and section in sections:
                ids.add(s.split()[0])
    return ids


def _node_ids(inp: Path) -> set[str]:
    """The node names of a SWMM .inp (:data:`capacitysim.io.bundled.NODE_SECTIONS`)."""
    from capacitysim.io.bundled import NODE_SECTIONS

    return _element_ids(inp, NODE_SECTIONS)


def _check_model_elements(proc, inputs: dict, model: Path) -> None:
    """Every node (:attr:`~capacitysim.processes.base.Process.model_nodes`) and rain gauge
    (:attr:`~capacitysim.processes.base.Process.model_gauges`) a request names must be one of the model's, checked
    before the job exists: a name is a token of the model's own sections, never text the scenario writes."""
    for attr, what, ids in (("model_nodes", "node", lambda: _node_ids(model)),
                            ("model_gauges", "rain gauge", lambda: _element_ids(model, ("RAINGAGES",)))):
        spec = getattr(proc, attr)
        if not spec:
            continue
        known = ids()
        for key, part in spec:
            for i, item in enumerate(inputs.get(key, [])):
                value = item.get(part) if part and isinstance(item, dict) else item if not part else None
                if value is None:  # an optional key not given
                    continue
                for j, n in ([(j, n) for j, n in enumerate(value)] if isinstance(value, list) else [(None, value)]):
                    if n not in known:
                        field = f"inputs.{key}[{i}]" + (f".{part}" if part else "") + ("" if j is None else f"[{j}]")
                        listed = ", ".join(sorted(known)[:8]) + (", ..." if len(known) > 8 else "")
                        raise ServiceInputError(field, n, f"a {what} of the model ({len(known)} {what}{'' if len(known) == 1 else 's'}: "
                                                f"{listed or 'none'})")


def _resolve_files(proc, inputs: dict, uploads) -> dict[str, str]:
    """Every file a request names (the process's file inputs, and the files inside the items of an input), resolved
    to its bundled path or upload: ``inputs.model`` -> ``model``, ``inputs.storms[0]`` -> ``storms[0]``,
    ``inputs.plants[0].flows`` -> ``plants[0].flows``."""
    files: dict[str, str] = {}
    for inp in proc.inputs:
        if not inp.service or inp.name not in inputs or inp.name == proc.companion_input:
            continue
        value = inputs[inp.name]
        if inp.file:
            kind = inp.file if inp.file in SUFFIX else None  # "upload": an upload only
            for key, v in ([(f"{inp.name}[{i}]", v) for i, v in enumerate(value)] if isinstance(value, list)
                           else [(inp.name, value)]):
                if kind == "storm" and storm_spec(f"inputs.{key}", v) is not None:
                    continue  # a storm spec (type2:3.2in) names no file: the job reads the spec itself
                files[key] = str(resolve_file(f"inputs.{key}", v, kind, uploads))
        for i, item in enumerate(value if inp.name in proc.item_files else []):
            for part, kind in proc.item_files[inp.name]:
                path = resolve_file(f"inputs.{inp.name}[{i}].{part}", item[part], kind, uploads)
                if "," in str(path):
                    raise ServiceInputError(f"inputs.{inp.name}[{i}].{part}", item[part], "a file whose path has no comma",
                                            "the register names a plant's files as PLANT,FLOWS")
                files[f"{inp.name}[{i}].{part}"] = str(path)
    return files


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
    proc = get_process(process_id)
    if not isinstance(body, dict):
        raise ServiceInputError("body", body, "a JSON object {\"inputs\": {...}}")
    extra = [k for k in body if k not in ("inputs", "outputs", "response", "subscriber")]
    if extra:
        raise ServiceInputError(extra[0], body[extra[0]], "the keys inputs, outputs, response, subscriber", "unknown key")
    inputs = body.get("inputs", {})
    check_value("inputs", inputs, proc.input_schema(service=True))
    files = _resolve_files(proc, inputs, uploads)
    companions = companion_files(process_id, inputs, uploads)
    for i, (name, path) in enumerate(companions.items()):
        files[f"{COMPANIONS[process_id]}[{i}]"] = str(path)
    if "model" in files:
        confined_model(Path(files["model"]), set(companions), "inputs.model")
    if "sweep" in files and UPLOAD_REF.match(inputs["sweep"]):  # a bundled sweep names the package's files
        check_sweep_files(Path(files["sweep"]), companions)
    if "model" in files:
        check_simulation_size(Path(files["model"]), inputs.get("spinup_hr"), "inputs.model")
    # the process's own validator: the rules between inputs and their conversions (criteria, submittal)
    proc.check_values(inputs, source="service", resolve_files=False)
    if "model" in files:
        _check_model_elements(proc, inputs, Path(files["model"]))
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
