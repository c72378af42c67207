"""The :class:`Process` of a workflow: its metadata, its inputs with one validator, ``run``, its document, its report.

A process (as pygeoapi's ``BaseProcessor``) is one class holding what the faces need of a workflow: an id, a
title, a version and a description; its inputs, declared once (:class:`Input`: a JSON Schema, the CLI option it
comes from, the bundled files it may name); the progress stages ``run`` reports; ``run`` itself, which calls the
workflow's own functions (``capacitysim.workflows``); the document it returns (``result.to_dict()``) and the report
it renders. The CLI command, the public API function (:mod:`capacitysim.api`) and the service's process
(:mod:`capacitysim.service.processes`) are adapters over it: they hand their raw values (CLI strings, the
service's JSON, Python values) to :meth:`Process.validate`, the one validator, which returns the typed
:class:`Inputs` or raises :class:`FieldInputError` naming the field, the value and what is allowed.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from capacitysim.errors import InputError

#: Longest text input accepted [characters] (a node id, a remediation spec, a name).
MAX_TEXT_CHARS = 500
#: Most items in an array input (connections, remediations, nodes, storms, added flows).
MAX_ITEMS = 200
#: Largest flow accepted in an input [gpd] (the bank's ceiling, 10^12, is far above any sewer).
MAX_GPD = 1e9
#: An uploaded file named in a service input: ``upload:`` and the file's SHA-256 (hex).
UPLOAD_REF = re.compile(r"^upload:([0-9a-f]{64})$")


class FieldInputError(InputError):
    """An input refused by a process's validator: names the field, the value and what is allowed (exit 2, HTTP 400).

    The field is named as its face names it: ``inputs.connections[0].gpd`` in the service, ``--max-gpd`` on the
    command line, ``max_gpd`` in the Python API.
    """

    def __init__(self, field: str, value, allowed: str, problem: str | None = None):
        self.field, self.value, self.allowed = field, value, allowed
        # the value as given (a problem says why it is refused); an input not given is only "missing"
        said = problem if value is None and problem else f"got {_show(value)}{f' ({problem})' if problem else ''}"
        super().__init__(f"{field}: {said}; allowed: {allowed}")
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

#: The file suffix of each kind of bundled file.
SUFFIX = {"model": ".inp", "storm": ".toml", "rule": ".toml", "site": ".toml", "project": ".toml", "plant": ".toml",
          "flows": ".csv", "sweep": ".toml"}


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


def bundled(kind: str) -> dict[str, Path]:
    """The bundled files of one kind (``model``, ``storm``, ``site``, ``project``, ``plant``, ``flows``,
    ``sweep``, ``rule``), name to path."""
    folder = _bundled_folder(kind)
    if not folder.is_dir():
        return {}
    return {p.stem: p for p in sorted(folder.glob(f"*{SUFFIX[kind]}")) if p.is_file()}


# --- the JSON Schema subset of the inputs, and its checker ----------------------------------------------------


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


def allowed(schema: dict) -> str:
    """What a schema allows, in words (the ``allowed`` of a :class:`FieldInputError`)."""
    if "oneOf" in schema:
        return " or ".join(allowed(s) for s in schema["oneOf"])
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
    t = schema.get("type")
    if t in ("number", "integer"):
        lo = schema.get("minimum", schema.get("exclusiveMinimum"))
        hi = schema.get("maximum")
        left = "(" if "exclusiveMinimum" in schema else "["
        rng = f" in {left}{lo:g}, {'inf' if hi is None else format(hi, 'g')}]" if lo is not None else ""
        hint = f" ({schema['x-hint']})" if schema.get("x-hint") else ""  # a likely mistake, named (units)
        return f"a {'whole ' if t == 'integer' else ''}number{rng}{hint}"
    if t == "string":
        if schema.get("format") == "date":
            return "a date YYYY-MM-DD"
        bundled_names = schema.get("x-bundled")
        if bundled_names is not None:
            return f"a bundled name ({', '.join(bundled_names) or 'none'}) or \"upload:<sha256>\""
        return f"text of {schema.get('minLength', 0)} to {schema.get('maxLength', MAX_TEXT_CHARS)} characters"
    if t == "array":
        return f"an array of at most {schema.get('maxItems', MAX_ITEMS)} items, each {allowed(schema.get('items', {}))}"
    if t == "object":
        props = schema.get("properties", {})
        return "an object" + (f" with keys {', '.join(props)}" if props else "")
    if t == "boolean":
        return "true or false"
    return "a JSON value"


_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def check_value(name: str, value, schema: dict):
    """Check ``value`` against the subset of JSON Schema the processes use; raise :class:`FieldInputError`."""
    if "oneOf" in schema:
        for alt in schema["oneOf"]:
            try:
                return check_value(name, value, alt)
            except FieldInputError:
                continue
        raise FieldInputError(name, value, allowed(schema))
    t = schema.get("type")
    if t and not _type_ok(value, t):
        raise FieldInputError(name, value, allowed(schema))
    if "enum" in schema and value not in schema["enum"]:
        raise FieldInputError(name, value, allowed(schema))
    if t in ("number", "integer"):
        if ("minimum" in schema and value < schema["minimum"]) or ("maximum" in schema and value > schema["maximum"]) \
                or ("exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]):
            raise FieldInputError(name, value, allowed(schema))
    if t == "string":
        if len(value) > schema.get("maxLength", MAX_TEXT_CHARS) or len(value) < schema.get("minLength", 0) \
                or "\x00" in value:
            raise FieldInputError(name, value, allowed(schema))
        if schema.get("format") == "date":
            import datetime as _dt

            try:
                if not _DATE.match(value):
                    raise ValueError
                _dt.date.fromisoformat(value)
            except ValueError:
                raise FieldInputError(name, value, allowed(schema)) from None
    if t == "array":
        if len(value) > schema.get("maxItems", MAX_ITEMS):
            raise FieldInputError(name, value, allowed(schema), f"{len(value)} items")
        for i, item in enumerate(value):
            check_value(f"{name}[{i}]", item, schema.get("items", {}))
    if t == "object":
        props = schema.get("properties", {})
        if schema.get("additionalProperties") is False:
            for k in value:
                if k not in props:
                    raise FieldInputError(f"{name}.{k}", value[k], f"the keys {', '.join(props) or '(none)'}",
                                          "unknown key")
        for k in schema.get("required", []):
            if k not in value:
                raise FieldInputError(f"{name}.{k}", None, allowed(props.get(k, {})), "missing (required)")
        for k, v in value.items():
            if k in props:
                check_value(f"{name}.{k}", v, props[k])
    return value


def _from_text(text: str, schema: dict, field: str):
    """A command-line string as the JSON value the schema describes (a number, a boolean; text as it is)."""
    t = schema.get("type")
    if t is None and "oneOf" in schema:
        for alt in schema["oneOf"]:
            try:
                return check_value(field, _from_text(text, alt, field), alt)
            except FieldInputError:
                continue
        raise FieldInputError(field, text, allowed(schema))
    if t in ("number", "integer"):
        try:
            v = float(str(text).replace(",", "").replace("_", ""))
        except ValueError:
            raise FieldInputError(field, text, allowed(schema)) from None
        if t == "integer" and v.is_integer():
            return int(v)
        return v
    if t == "boolean" and isinstance(text, str):
        return {"true": True, "false": False}.get(text.lower(), text)
    return text


# --- inputs -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Input:
    """One input of a process, declared once for every face.

    Parameters
    ----------
    name : str
        The key in the service's ``inputs`` and the keyword of the Python API.
    schema : dict
        JSON Schema of its JSON value (what the service's catalogue publishes and every JSON value is checked by).
    required : bool
    cli : str, optional
        The command-line option the value comes from (``--max-gpd``): the field named in the CLI's messages.
    file : str, optional
        The kind of bundled file it names (``model``, ``storm``...): the value is a path or a bundled name.
    service : bool
        Published in the service's catalogue (False: a command-line and API input only, e.g. a bank file).
    text : callable, optional
        ``text(value, field) -> value`` turning a command-line string (or tuple of strings) into the JSON value
        or the typed value (default: by the schema's type).
    typed : callable, optional
        ``typed(value) -> bool``: the value is already the typed object (an API caller's ``Criteria``), not checked
        against the schema.
    convert : callable, optional
        ``convert(value, field) -> typed value`` once checked (a file: ``resolve(value, field) -> Path``).
    """

    name: str
    schema: dict
    required: bool = False
    cli: str | None = None
    file: str | None = None
    service: bool = True
    text: Callable | None = None
    typed: Callable | None = None
    convert: Callable | None = None


class Inputs(dict):
    """The typed inputs of a process (a dict with attribute access; an input not given is None)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def get(self, key, default=None):
        value = super().get(key)
        return default if value is None else value


def field_namer(process: "Process", source: str) -> Callable[[str], str]:
    """How a face names an input in messages: ``inputs.NAME`` (service), the option (CLI), ``NAME`` (API)."""
    by_name = {i.name: i for i in process.inputs}

    def name(key: str) -> str:
        if source == "service":
            return f"inputs.{key}"
        if source == "cli" and key in by_name and by_name[key].cli:
            return by_name[key].cli
        return key

    return name


class NullProgress:
    """The progress of a run nobody watches: stages and steps are dropped."""

    def stage(self, name: str, message: str = "") -> None:
        pass

    def step(self, done: int, total: int, message: str = "", **counts) -> None:
        pass


SOURCES = ("api", "cli", "service")


class Process:
    """One workflow as a process: metadata, inputs with one validator, ``run``, its document and its report.

    A subclass sets the class attributes and implements :meth:`run` (calling the workflow's functions) and, when
    the workflow writes one, :meth:`report`; it may add cross-field rules (:meth:`check`) and conversions that
    need several inputs (:meth:`finish`).
    """

    #: The process's id (the service's ``/processes/<id>``).
    id: str = ""
    title: str = ""
    description: str = ""
    #: The command of the command line it is (``capacitysim capacity``).
    command: str = ""
    #: The result document's ``kind`` ("" for a document without one).
    kind: str = ""
    #: The inputs, in the order the catalogue lists them.
    inputs: tuple[Input, ...] = ()
    #: The stages ``run`` reports, in order: (name, progress [%]); ``started`` and ``inputs-checked`` first.
    stages: tuple[tuple[str, int], ...] = ()
    #: The input carrying the files uploaded with a model or sweep file (the service), or None.
    companion_input: str | None = None
    #: Inputs naming nodes of the input ``model`` (checked against the model before a service job is created):
    #: ``(input, key of each item or None)``.
    model_nodes: tuple[tuple[str, str | None], ...] = ()
    #: Inputs naming rain gauges of the input ``model``, checked as :attr:`model_nodes` are.
    model_gauges: tuple[tuple[str, str | None], ...] = ()
    #: What a shared credit bank's commitments are included by (the service includes its own bank's): ``"model"``
    #: (the flows committed on the model's basins), ``"plant"`` (committed to the plant), or None.
    shared_commitments: str | None = None
    #: Files named inside the items of an input: ``{input: ((key, bundled kind), ...)}``.
    item_files: dict = {}
    #: Whether ``run`` keeps what it writes in the ``work_dir`` the service gives it (its job's folder): a store.
    writes_work_dir: bool = False

    @property
    def version(self) -> str:
        """The process's version: capacitysim's (the workflow and its rules change with it)."""
        from capacitysim.version import __version__

        return __version__

    @property
    def has_report(self) -> bool:
        return type(self).report is not Process.report

    # --- the one validator ---------------------------------------------------------------------------------

    def check_values(self, raw, *, source: str = "api", resolve_files: bool = True) -> dict:
        """Each given value checked (and converted) by its :class:`Input`, then :meth:`check`; files resolved to
        paths unless ``resolve_files`` is False (the service resolves its own: bundled names and uploads only)."""
        if source not in SOURCES:
            raise ValueError(f"source {source!r}: one of {SOURCES}")
        by_name = {i.name: i for i in self.inputs if source != "service" or i.service}
        name = field_namer(self, source)
        values: dict[str, Any] = {}
        for key, value in dict(raw).items():
            if key not in by_name:
                raise FieldInputError(name(key), value, f"the inputs {', '.join(by_name)}", "unknown input")
            if value is None and source != "service":
                continue  # not given (an option left out; a keyword left None)
            inp = by_name[key]
            field = name(key)
            if source == "cli" and (isinstance(value, str) or (isinstance(value, tuple) and inp.schema.get("type") == "array")):
                value = inp.text(value, field) if inp.text else self._text(value, inp, field)
                if value is None:
                    continue
            if source == "service" or inp.typed is None or not inp.typed(value):  # the service: JSON only
                if isinstance(value, tuple):
                    value = list(value)
                if not (inp.file and source != "service" and isinstance(value, Path)):
                    check_value(field, value, inp.schema)
                if inp.file:
                    if resolve_files:
                        value = self.resolve_file(inp, value, field)
                elif inp.convert is not None:
                    value = inp.convert(value, field)
            values[key] = value
        for inp in by_name.values():
            if inp.required and inp.name not in values:
                raise FieldInputError(name(inp.name), None, allowed(inp.schema), "missing (required)")
        self.check(values, name, source)
        return values

    def validate(self, raw, *, source: str = "api") -> Inputs:
        """The one validator: raw values (CLI strings with ``source="cli"``, the service's JSON with
        ``source="service"``, Python values) to the typed :class:`Inputs`, or :class:`FieldInputError` (an
        :class:`~capacitysim.errors.InputError`) naming the field, the value and what is allowed."""
        values = self.check_values(raw, source=source)
        out = Inputs({i.name: None for i in self.inputs})
        out.update(values)
        self.finish(out, field_namer(self, source), source)
        return out

    @staticmethod
    def _text(value, inp: Input, field: str):
        if isinstance(value, tuple):
            items = inp.schema.get("items", {})
            return [_from_text(v, items, f"{field}[{i}]") for i, v in enumerate(value)]
        return _from_text(value, inp.schema, field)

    def resolve_file(self, inp: Input, value, field: str):
        """A file input as the workflow reads it: its ``convert`` (a bundled name looked up), else as given (the
        workflow resolves bundled names itself)."""
        if isinstance(value, list):
            return [self.resolve_file(inp, v, f"{field}[{i}]") for i, v in enumerate(value)]
        return value if inp.convert is None else inp.convert(value, field)

    def check(self, values: dict, name: Callable[[str], str], source: str) -> None:
        """Rules between inputs (one of two given, ...): raise :class:`FieldInputError`."""

    def finish(self, inputs: Inputs, name: Callable[[str], str], source: str) -> None:
        """Conversions that need several inputs (a connection needs the peaking), in place."""

    # --- running ---------------------------------------------------------------------------------------------

    def run(self, inputs: Inputs, progress=None, work_dir=None):
        """Run the workflow on validated inputs; returns its typed result (``document(result)`` is its JSON)."""
        raise NotImplementedError

    def document(self, result) -> dict:
        """The result document: what the CLI prints with ``--json``, the API's ``to_dict()``, the service's result."""
        return result.to_dict()

    def report(self, result, path, doc=None):
        """Write the HTML report of ``result`` (its document ``doc`` when already made) to ``path``; returns the
        path (the base: no report)."""
        return None

    def __call__(self, progress=None, work_dir=None, /, **raw):
        """Validate Python values and run: what the public API's functions are."""
        return self.run(self.validate(raw), progress=progress, work_dir=work_dir)

    # --- description (OGC API - Processes) -------------------------------------------------------------------

    def input_schema(self, *, service: bool = True) -> dict:
        ins = [i for i in self.inputs if i.service or not service]
        return {"type": "object", "properties": {i.name: i.schema for i in ins},
                "required": [i.name for i in ins if i.required], "additionalProperties": False}
