"""Inputs several processes share: their JSON Schema and their conversion to typed values, written once."""

from __future__ import annotations

from capacitysim.errors import InputError
from capacitysim.processes.base import MAX_GPD, MAX_ITEMS, MAX_TEXT_CHARS, UPLOAD_REF, FieldInputError, Input, bundled

#: Most files uploaded with a model or a sweep file (rain gauge, time series, climate, interface files).
MAX_COMPANIONS = 50


def file_schema(kind: str, what: str) -> dict:
    names = sorted(bundled(kind))
    return {"type": "string", "maxLength": MAX_TEXT_CHARS,
            "description": f"{what}: a bundled name ({', '.join(names) or 'none'}) or an upload (\"upload:<sha256>\" "
                           "from POST /uploads).",
            "x-bundled": names, **({"examples": names[:1]} if names else {})}


def storm_schema(what: str) -> dict:
    """A design storm input: a bundled name, an upload, or a storm spec ``type2:3.2in`` (issue 28, item 4)."""
    from capacitysim.io.storms import SPEC_GRAMMAR

    schema = file_schema("storm", what)
    schema["description"] += (f" Or a storm spec {SPEC_GRAMMAR}; on the command line and in the Python API also a "
                              "storm TOML file.")
    return schema


def storm_ref(value, field: str):
    """A storm input as the workflow reads it: a storm spec (``type2:3.2in``) parsed into its ``StormSpec``;
    a path, a bundled name or a ``StormSpec`` as given (the workflow loads them)."""
    from capacitysim.io.files import path_exists
    from capacitysim.io.storms import SPEC_GRAMMAR, StormSpecError, looks_like_storm_spec, parse_storm_spec

    if not looks_like_storm_spec(value) or path_exists(value):
        return value
    try:
        return parse_storm_spec(value)
    except StormSpecError as exc:
        names = sorted(bundled("storm"))
        raise FieldInputError(field, value, f"a bundled name ({', '.join(names) or 'none'}), a storm TOML file, or a "
                                            f"storm spec {SPEC_GRAMMAR}", exc.problem) from None


def gpd(desc: str) -> dict:
    return {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_GPD, "description": f"{desc} [gpd]"}


def companions(what: str) -> dict:
    return {"type": "array", "maxItems": MAX_COMPANIONS,
            "items": {"type": "string", "maxLength": MAX_TEXT_CHARS, "pattern": UPLOAD_REF.pattern},
            "description": f"Files uploaded with the {what} (\"upload:<sha256>\" from POST /uploads, each uploaded with "
                           f"?filename=NAME): the {what} names each by that bare NAME (a [TIMESERIES] or [RAINGAGES] FILE, "
                           "a [FILES] USE file, a model or storm a sweep names). Nothing else on the server can be named: "
                           "no path, no folder, no other upload."}


def peaking_schema() -> dict:
    return {"description": "How connections are peaked: \"pattern\" (the model's diurnal DWF pattern) or a constant "
                           "peaking factor >= 1.",
            "oneOf": [{"type": "string", "enum": ["pattern"]}, {"type": "number", "minimum": 1, "maximum": 100}],
            "default": "pattern"}


def remediations_schema() -> dict:
    return {"type": "array", "maxItems": MAX_ITEMS,
            "items": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT_CHARS},
            "description": "I/I remediation specs, as the CLI's --remediate: basin=OUTLET,fraction=0.3 | "
                           "basin=OUTLET,gpd=50000 | nodes=A;B,fraction=25% | nodes=A;B,sump_pumps=12 | "
                           "basin=OUTLET,roof_sqft=20000."}


def application_schema() -> dict:
    return {"type": "string", "minLength": 1, "maxLength": 200,
            "description": "The applicant's own application id (as the bank records it), left out of the credit bank's "
                           "commitments the job includes: the CLI's --application. The commitments are included by "
                           "themselves when the model (or the plant) is registered in the service's bank; there is no "
                           "input to leave them out."}


def criteria_schema() -> dict:
    from capacitysim.rules.capacity import Criteria

    return {"type": "object", "description": "Acceptance criteria overriding the defaults (a criteria TOML as JSON).",
            "properties": {k: {"type": "number", "minimum": 0} for k in Criteria.__dataclass_fields__},
            "additionalProperties": False}


def submittal_schema() -> dict:
    from capacitysim.io.submittal import SUBMITTAL_FIELDS

    return {"type": "object", "description": "Submittal identification (shown on the report and in the JSON).",
            "properties": {k: {"type": "string", "maxLength": 200, "description": v} for k, v in SUBMITTAL_FIELDS.items()},
            "additionalProperties": False}


# --- conversions ------------------------------------------------------------------------------------------------


def _is_criteria(value) -> bool:
    from capacitysim.rules.capacity import Criteria

    return isinstance(value, Criteria)


def _criteria_text(path, field):
    """``--criteria FILE``: the criteria TOML, read and checked (its messages name the file)."""
    from capacitysim.io.files import read_toml
    from capacitysim.rules.capacity import Criteria

    return Criteria.from_dict(read_toml(path), path)


def _criteria(value, field):
    from capacitysim.rules.capacity import Criteria

    try:
        return Criteria.from_dict(value, field)
    except FieldInputError:
        raise
    except InputError as exc:  # the criteria's own rules: named on the field
        raise FieldInputError(field, value, str(exc)) from None


def _submittal(value, field):
    """The submittal fields given (they override the base a site or plant file gives), checked."""
    from capacitysim.io.submittal import Submittal

    try:
        Submittal(**value)
    except InputError as exc:  # the submittal's own rules (a licence number, a BBL...): its words, on the field
        problem, _, allowed = str(exc).partition("; allowed: ")
        raise FieldInputError(field, value, allowed or "a submittal its own rules accept", problem) from None
    return dict(value)


def _peaking(value, field):
    return "pattern" if value == "pattern" else float(value)


def _model(value, field):
    from capacitysim.io.bundled import model_path

    return model_path(value, option=field)


def model_input(**kw) -> Input:
    return Input("model", file_schema("model", "SWMM model"), required=True, cli="--model", file="model",
                 convert=_model, **kw)


def peaking_input() -> Input:
    return Input("peaking", peaking_schema(), cli="--peaking", convert=_peaking)


def criteria_input(**kw) -> Input:
    return Input("criteria", criteria_schema(), cli="--criteria", text=_criteria_text, typed=_is_criteria,
                 convert=_criteria, **kw)


def submittal_input() -> Input:
    return Input("submittal", submittal_schema(), cli="--submittal", convert=_submittal)


def remediations_input() -> Input:
    return Input("remediations", remediations_schema(), cli="--remediate")


def application_input() -> Input:
    return Input("application", application_schema(), cli="--application")


def committed_input(what: str) -> Input:
    """``committed``: the credit bank file whose commitments are included (CLI ``--committed BANK``, the API), or
    its commitments document; the service includes its own bank's and has no such input."""
    return Input("committed", {"type": ["string", "object"], "description": f"The credit bank file ({what})."},
                 cli="--committed", service=False, typed=lambda v: isinstance(v, (dict, str)) or hasattr(v, "__fspath__"))


def check_application(values: dict, name, source: str) -> None:
    """An application to leave out names one of the commitments included: allowed only with ``committed`` (the
    service includes its own bank's commitments by itself)."""
    if source != "service" and values.get("application") is not None and values.get("committed") is None:
        raise FieldInputError(name("application"), values["application"],
                              f"an application id only with {name('committed')} BANK (a bank file)",
                              "names the applicant's own application to leave out of the commitments")


def submittal_of(inputs, base=None):
    """The submittal: ``base`` (a site's or a plant's file) with the fields given replacing its own."""
    from capacitysim.io.submittal import Submittal

    return (base if base is not None else Submittal()).merged(**(inputs.submittal or {}))
