"""A page and a form for every process (``/ui/processes``, ``/ui/processes/{id}``), generated from the process's
declared inputs (:class:`capacitysim.processes.base.Input`), and the upload form of models and their files
(``/ui/uploads``) (:func:`install`, called by :func:`capacitysim.service.web.install`).

One form per process, no form written by hand: each input of the service's catalogue becomes a field by its JSON
Schema (:func:`fields_of`): a bundled or uploaded file is a choice among the bundled names and the user's own
uploads; a design storm is text with the bundled names offered (a storm spec ``type2:3.2in`` is typed); an
``enum`` is a choice; a boolean is default / yes / no; a list is one item per line, an item of several keys is
written ``FIRST=SECOND,THIRD`` (a connection ``MH0003=5000``, a flow in any unit :func:`capacitysim.checks.flow_gpd`
reads: ``0.05MGD``, ``35gpm``); an object (criteria, submittal) is JSON or TOML text. The form's values become the
same JSON ``inputs`` as ``POST /processes/{id}/execution`` (:func:`form_inputs`) and go through the same
:func:`~capacitysim.service.processes.prepare`: a refusal is shown on the form with the field's label and the
line it came from (:func:`field_label`), never ``inputs.connections[0].node``, and the values are kept.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse

from capacitysim.errors import InputError
from capacitysim.service import auth
from capacitysim.service.processes import ServiceInputError, bundled, catalogue, prepare, versions
from capacitysim.service.store import ActiveJobsLimit

#: Units read from the end of an input's name, shown in its label.
UNIT_SUFFIXES = (("_gpd", "gpd"), ("_mgd", "MGD"), ("_hr", "h"), ("_pct", "%"), ("_in", "in"), ("_s", "s"))
#: The most files one upload form sends (the model and its external files; the service's own limit on the files
#: named with a model is :data:`capacitysim.service.processes.MAX_COMPANIONS`).
MAX_FORM_FILES = 21
#: The most uploads a form offers (newest first).
MAX_UPLOADS_SHOWN = 200
#: Deepest nesting of brackets and braces an object field (criteria, submittal) may have: theirs is 2 or 3.
MAX_OBJECT_DEPTH = 16
_FIELD = re.compile(r"^inputs\.(\w+)(?:\[(\d+)\])?(?:\.(\w+))?(.*)$")
_NAMED = re.compile(r"\binputs\.\w+(?:\[\d+\])?(?:\.\w+)?")


@dataclass
class FormField:
    """One field of a process's form: ``kind`` is ``choice``, ``text``, ``lines``, ``object``, ``flag``, ``date``
    or ``uploads`` (checkboxes of the user's uploads); ``options`` are ``(value, shown)`` pairs."""

    name: str
    label: str
    kind: str
    help: str = ""
    required: bool = False
    options: list = field(default_factory=list)
    suggestions: list = field(default_factory=list)
    item_keys: tuple = ()
    advanced: bool = False


def label_of(name: str) -> str:
    """An input's label: its name in words with the unit its name ends with (``spinup_hr`` -> ``Spinup [h]``)."""
    for suffix, unit in UNIT_SUFFIXES:
        if name.endswith(suffix):
            return f"{name[:-len(suffix)].replace('_', ' ').capitalize()} [{unit}]"
    return name.replace("_", " ").capitalize()


def fields_of(process_id: str, uploads: list[dict]) -> list[FormField]:
    """The form fields of a service process, in the order its inputs are declared.

    ``uploads`` are the user's own uploads (:meth:`capacitysim.service.store.Store.uploads_by`): offered for every
    file input beside the bundled names.
    """
    proc = catalogue()[process_id].process
    mine = [(f"upload:{u['sha256']}", f"{u['filename']} (your upload, {u['sha256'][:8]})") for u in uploads]
    out = []
    for inp in proc.inputs:
        if not inp.service:
            continue
        s = inp.schema
        desc = s.get("description", "")
        f = FormField(inp.name, label_of(inp.name), "text", desc, inp.required)
        items = s.get("items", {}) if s.get("type") == "array" else {}
        if inp.name == proc.companion_input:
            f.kind, f.options = "uploads", mine
            f.help = "The files the model or sweep file names (tick them; upload them above first)."
        elif inp.file == "storm" or (items and inp.file == "storm"):
            f.kind = "lines" if s.get("type") == "array" else "text"
            f.suggestions = [*bundled("storm"), "type2:3.2in", *(v for v, _ in mine if v)]
            f.help = desc + " Bundled: " + ", ".join(bundled("storm")) + "."
        elif inp.file:
            names = [(n, n) for n in bundled(inp.file)] if inp.file != "upload" else []
            f.kind, f.options = "choice", ([] if inp.required else [("", "(none)")]) + names + mine
        elif "enum" in s:
            f.kind, f.options = "choice", ([] if inp.required else [("", "(default)")]) + [(v, v) for v in s["enum"]]
        elif s.get("type") == "boolean":
            dflt = s.get("default")
            f.kind = "flag"
            f.options = [("", "(default" + (f": {'yes' if dflt else 'no'})" if dflt is not None else ")")),
                         ("yes", "yes"), ("no", "no")]
        elif s.get("type") == "object":
            f.kind, f.advanced = "object", True
            f.help = desc + " As JSON or TOML."
        elif s.get("type") == "array":
            f.kind = "lines"
            if _spec_lines(inp):
                f.help = (desc + f" One per line, as the command line's {inp.cli} takes it: "
                          + ",".join(f"{k}=..." for k in items.get("required", ())) + " (a list's items split by ;); "
                          "a file is one of your uploads (upload:<sha256>).")
            elif items.get("type") == "object":
                keys = tuple(items.get("properties", {}))
                f.item_keys = keys
                f.help = (desc + f" One per line: {keys[0].upper()}=" + ",".join(k.upper() for k in keys[1:]) + "."
                          + (" A flow may carry its unit (0.05MGD, 35gpm, 2L/s); a bare number is gpd."
                             if any(k.endswith("gpd") for k in keys) else ""))
            else:
                f.help = (desc + " One per line.").strip()
        elif s.get("format") == "date":
            f.kind = "date"
        out.append(f)
    return out


def _spec_lines(inp) -> bool:
    """A list input whose items hold a list (measured I/I: ``nodes``): a form line is written as the command line
    writes it (``analysis=upload:...,nodes=A;B``) and read by the input's own command-line parser."""
    props = inp.schema.get("items", {}).get("properties", {})
    return inp.text is not None and any(p.get("type") == "array" for p in props.values())


def _number(text: str, schema: dict, where: str):
    from capacitysim.processes.base import _from_text

    return _from_text(text.strip(), schema, where)


def _item(line: str, keys: tuple, props: dict, where: str) -> dict:
    """A line ``FIRST=SECOND,THIRD`` as the item ``{keys[0]: FIRST, keys[1]: SECOND, ...}`` (numbers read by the
    key's schema; a flow in gpd may carry a unit, :func:`capacitysim.checks.flow_gpd`)."""
    from capacitysim.checks import flow_gpd

    first, sep, rest = line.partition("=")
    parts = [first, *(rest.split(",", len(keys) - 2) if len(keys) > 1 else [])]
    if not sep or len(parts) != len(keys):
        raise ServiceInputError(where, line, f"{keys[0].upper()}=" + ",".join(k.upper() for k in keys[1:]))
    item = {}
    for k, v in zip(keys, parts):
        v = v.strip()
        if props.get(k, {}).get("type") in ("number", "integer"):
            if k.endswith("gpd"):
                try:
                    v = flow_gpd(v, where)[0]
                except InputError as exc:
                    raise ServiceInputError(where, line, str(exc).split("allowed: ", 1)[-1]) from None
            else:
                v = _number(v, props[k], where)
        item[k] = v
    return item


def form_inputs(process_id: str, form) -> tuple[dict, dict]:
    """A submitted form as the process's JSON ``inputs``, and the line of the form each list item came from
    (``{"connections": [3, 5]}``: item 0 is line 3), for :func:`field_label`. A field left empty is not given."""
    import tomllib

    proc = catalogue()[process_id].process
    inputs, lines_of = {}, {}
    for inp in proc.inputs:
        if not inp.service:
            continue
        s, name = inp.schema, inp.name
        if name == proc.companion_input:
            refs = [str(v) for v in form.getlist(name)] if hasattr(form, "getlist") else []
            if refs:
                inputs[name] = refs
            continue
        raw = str(form.get(name, "") or "")
        if not raw.strip():
            continue
        label = label_of(name)
        t = s.get("type")
        if t == "boolean":
            if raw not in ("yes", "no"):
                raise ServiceInputError(label, raw, "yes, no or the default")
            inputs[name] = raw == "yes"
        elif t == "object":
            if _depth(raw) > MAX_OBJECT_DEPTH:  # before parsing: both parsers recurse into nesting
                raise ServiceInputError(label, raw, f"a JSON object or TOML text nested at most {MAX_OBJECT_DEPTH} "
                                                    "levels", "nested deeper")
            try:
                inputs[name] = json.loads(raw) if raw.lstrip().startswith("{") else tomllib.loads(raw)
            except (ValueError, tomllib.TOMLDecodeError, RecursionError) as exc:
                raise ServiceInputError(label, raw, "a JSON object or TOML text", f"not readable: {exc}") from None
        elif t == "array":
            items, where = [], []
            schema = s.get("items", {})
            for n, line in enumerate(raw.splitlines(), start=1):
                if not line.strip():
                    continue
                at = f"{label}, line {n}"
                if _spec_lines(inp):  # key=value,... as on the command line (its own parser)
                    items.extend(inp.text((line.strip(),), at))
                elif schema.get("type") == "object":
                    items.append(_item(line.strip(), tuple(schema.get("properties", {})), schema.get("properties", {}), at))
                elif schema.get("type") in ("number", "integer"):
                    items.append(_number(line, schema, at))
                else:
                    items.append(line.strip())
                where.append(n)
            inputs[name], lines_of[name] = items, where
        elif t in ("number", "integer") or "oneOf" in s:
            inputs[name] = _number(raw, s, label)
        else:
            inputs[name] = raw.strip()
    return inputs, lines_of


def _depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` in a text (quotes not parsed: an over-estimate is refused, never
    under-estimated)."""
    depth = deepest = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth = max(0, depth - 1)
    return deepest


def field_label(field_name: str, lines_of: dict) -> str:
    """A service field name (``inputs.connections[1].node``) as the form names it (``Connections, line 3 (node)``)."""
    m = _FIELD.match(field_name)
    if not m:
        return field_name
    name, index, part, rest = m.groups()
    text = label_of(name)
    if index is not None:
        where = lines_of.get(name, [])
        i = int(index)
        text += f", line {where[i]}" if i < len(where) else f", item {i + 1}"
    if part:
        text += f" ({part}{rest})"
    return text


def form_error(exc: ServiceInputError, lines_of: dict) -> str:
    """A refusal as the form shows it: the field's label, the value and what is allowed."""
    text = str(exc)
    if exc.field.startswith("inputs.") and ": " in text:
        text = f"{field_label(exc.field, lines_of)}: " + text.split(": ", 1)[1]
    # any other field the message names (the files uploaded with a model: inputs.model_files), by its label too
    return _NAMED.sub(lambda m: field_label(m.group(0), lines_of), text)


def install(w) -> None:
    """Add the process pages and the upload form to ``w.app`` (``w``: :class:`capacitysim.service.web.Web`)."""
    app, svc, page, session, to_login = w.app, w.svc, w.page, w.session, w.to_login
    threaded, checked_form, lim = w.threaded, w.checked_form, w.svc.limits

    def form_page(who, process_id: str, values: dict | None = None, error=None, status=200, uploaded=()):
        proc = catalogue()[process_id].process
        uploads = svc.store.uploads_by(who.user["id"], MAX_UPLOADS_SHOWN)
        values = dict(values or {})
        if uploaded:  # just uploaded: the model (or sweep file) chosen, its files ticked
            main = proc.companion_input and next((u for u in uploads if u["sha256"] in uploaded and u["filename"]
                                                  .endswith(".inp" if process_id != "sweep" else ".toml")), None)
            if main:
                values.setdefault("model" if process_id != "sweep" else "sweep", f"upload:{main['sha256']}")
            if proc.companion_input:
                values.setdefault(proc.companion_input, [f"upload:{u['sha256']}" for u in uploads
                                                         if u["sha256"] in uploaded and u is not main])
        return page("process.html", who, status, title=proc.title, proc=proc, fields=fields_of(process_id, uploads),
                    values=values, can_submit=auth.can(who.user, "submit"), can_upload=auth.can(who.user, "upload"),
                    error=error, map_input=proc.model_nodes[0][0] if proc.model_nodes else None)

    @app.get("/ui/processes", response_class=HTMLResponse, include_in_schema=False)
    def processes_page(request: Request):
        who = session(request)
        if who is None:
            return to_login(request)
        procs = [sp.process for sp in catalogue().values()]
        return page("processes.html", who, title="New job", procs=procs, can_submit=auth.can(who.user, "submit"))

    @app.get("/ui/processes/{process_id}", response_class=HTMLResponse, include_in_schema=False)
    def process_page(request: Request, process_id: str, uploaded: str = ""):
        who = session(request)
        if who is None:
            return to_login(request)
        if process_id not in catalogue():
            return page("jobs.html", who, 404, title="Jobs", jobs=[],
                        error=f"no process {process_id[:100]!r}; processes: {', '.join(catalogue())}")
        shas = tuple(s for s in uploaded.split(",") if re.fullmatch(r"[0-9a-f]{64}", s))[:MAX_FORM_FILES]
        return form_page(who, process_id, uploaded=shas)

    def submit(request: Request, form, process_id: str):
        who = session(request)
        if who is None:
            return to_login(request)
        checked_form(request, who, form)
        user = who.user
        kept = {k: (form.getlist(k) if k == catalogue()[process_id].process.companion_input else str(form.get(k, "")))
                for k in form.keys() if k != "csrf"}
        if not auth.can(user, "submit"):
            svc.store.journal("submit jobs", user, process_id, outcome="forbidden")
            return form_page(who, process_id, kept, f"The role {user['role']!r} does not submit jobs.", 403)
        lines_of: dict = {}
        try:
            inputs, lines_of = form_inputs(process_id, form)
            prepared = prepare(process_id, {"inputs": inputs}, svc.uploads_of(user))
            job_id = svc.store.create_job(prepared, user, versions(process_id), max_active=lim.max_active_jobs_per_user)
        except ServiceInputError as exc:
            return form_page(who, process_id, kept, form_error(exc, lines_of), 400)
        except ActiveJobsLimit as exc:
            return form_page(who, process_id, kept, str(exc), 429)
        svc.runner.submit(job_id)
        return RedirectResponse(f"/ui/jobs/{job_id}", status_code=303)

    @app.post("/ui/processes/{process_id}", include_in_schema=False)
    async def run_process(request: Request, process_id: str):
        from starlette.concurrency import run_in_threadpool

        if process_id not in catalogue():
            return RedirectResponse("/ui/processes", status_code=303)
        form = await request.form(max_files=0, max_fields=200)
        return await run_in_threadpool(submit, request, form, process_id)

    @app.get("/ui/submit", include_in_schema=False)
    def old_submit_page():
        return RedirectResponse("/ui/processes/capacity-demonstration", status_code=303)

    @app.post("/ui/submit", include_in_schema=False)
    @threaded
    def old_submit(request: Request, form):
        """The capacity demonstration's form as it was first posted (its fields are the process's inputs)."""
        return submit(request, form, "capacity-demonstration")

    @app.post("/ui/uploads", include_in_schema=False)
    async def upload_files(request: Request):
        """Upload files from a form (multipart; the body limit of ``POST /uploads``), then back to the process's
        form with the model chosen and its files ticked."""
        from starlette.concurrency import run_in_threadpool

        form = await request.form(max_files=MAX_FORM_FILES, max_fields=10)

        def handle():
            who = session(request)
            if who is None:
                return to_login(request)
            checked_form(request, who, form)
            process_id = str(form.get("process", ""))
            if process_id not in catalogue():
                process_id = "capacity-demonstration"
            if not auth.can(who.user, "upload"):
                svc.store.journal("upload", who.user, "form", outcome="forbidden")
                return form_page(who, process_id, None, f"The role {who.user['role']!r} does not upload files.", 403)
            files = [f for f in form.getlist("files") if hasattr(f, "read") and getattr(f, "filename", "")]
            if not files:
                return form_page(who, process_id, None, "Files: none chosen; allowed: 1 to "
                                                        f"{MAX_FORM_FILES} files (the model and the files it names)", 400)
            shas = []
            for f in files:
                try:
                    rec = svc.save_upload(who.user, f.filename, f.file.read())
                except ServiceInputError as exc:
                    return form_page(who, process_id, None, f"File {f.filename[:100]!r}: {exc}", 400)
                shas.append(rec["sha256"])
            return RedirectResponse(f"/ui/processes/{process_id}?uploaded={','.join(shas)}", status_code=303)

        try:
            return await run_in_threadpool(handle)
        finally:
            await form.close()
