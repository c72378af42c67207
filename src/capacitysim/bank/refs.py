"""The capacity demonstration and SPDES check a withdrawal relies on: resolve, read and fingerprint them.

Credit bank section H(1) makes a withdrawal subject to "demonstration by the applicant of adequate
hydraulic and treatment capacity". A withdrawal cites that demonstration (``--capacity-ref``) and the
treatment/SPDES check (``--spdes-ref``) as the path of the JSON result document of a capacitysim
command (issue 14: a free-text run id is no longer accepted; a run id of a future service job may be
accepted later, and is refused now with a message saying so). For the file:

* its absolute path and SHA-256 are recorded, so the evidence cannot silently change afterwards
  (:meth:`capacitysim.bank.Ledger.verify` re-hashes it; the sign-off refuses a changed file);
* the bank reads only the machine-readable document: the JSON printed by
  ``capacitysim capacity ... --json`` (``"kind": "capacity-demonstration"``) or
  ``capacitysim spdes check ... --json`` (``"kind": "spdes-check"``). Fields are read by key and
  type, never by searching prose, so no node, storm or label text can change what is read. An HTML
  report, a PDF or any other file that is not such a JSON document is an input error: cite the JSON;
* a capacity demonstration must have the verdict ``pass`` and a connection
  (``scenario.connections[]``, each with ``node`` and ``flow_gpd``) of at least the withdrawal's
  peak flow *at the application's node*; the SHA-256 of the model it ran (``external_files`` entry
  with verb ``MODEL``, or ``model.sha256``) is recorded with the connection matched;
* a SPDES/treatment check must show treatment capacity: ``treatment_capacity_shown`` when the
  document has it (watershed plants: the connection is not prohibited under 15 RCNY § 18-37(b);
  other plants: the permitted-flow headroom after the added flow is >= 0), else
  ``not connection_prohibited``; its ``added_gpd`` must be at least the withdrawal's flow (a check
  run with 0 gpd added shows nothing about the connection), and its ``as_of`` date no more than
  :data:`SPDES_EVIDENCE_MAX_AGE_DAYS` days before the withdrawal date (program policy
  ``spdes_evidence_max_age_days``: the program sets no age; program interpretation — confirm with
  the bank administrator);
* a demonstration that did not pass (``fail``/``untrusted``), or does not cover the withdrawal, or a
  check that does not show treatment capacity, added too little flow or is too old is refused
  (:class:`~capacitysim.errors.RefusedError`): it does not demonstrate adequate capacity;
* a JSON document of the wrong kind (a SPDES check cited as the capacity demonstration, or the
  reverse), malformed JSON (``NaN``/``Infinity`` included), JSON nested deeper than
  :data:`MAX_DEPTH` or holding more than :data:`MAX_CONTAINERS` arrays/objects, or a file over
  :data:`MAX_REF_BYTES` is an input error (never a RecursionError or MemoryError).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import re
import unicodedata
from pathlib import Path

from capacitysim.errors import InputError, RefusedError
from capacitysim.rules.ii_offset import QUANTIFICATION_KIND

_HTML_SUFFIXES = (".html", ".htm", ".xhtml")
#: Largest cited file read [bytes]: a capacity JSON of a 500-node model is a few MB.
MAX_REF_BYTES = 20 * 1024 * 1024
#: Deepest nesting of arrays/objects accepted in a cited JSON document (capacitysim writes < 10).
MAX_DEPTH = 64
#: Most arrays/objects accepted in a cited JSON document (a 10,000-node demonstration has ~50,000): bounds
#: the memory a hostile file of 20 MB of ``[],[],...`` would take to parse (~450 MB).
MAX_CONTAINERS = 1_000_000
_SHA256 = re.compile(r"[0-9a-f]{64}")
_UTF8_BOM = b"\xef\xbb\xbf"

KINDS = ("capacity", "spdes")
#: The ``kind`` of the result documents cited (``Demonstration.to_dict``, ``SpdesCheck.to_dict``).
CAPACITY_KIND = "capacity-demonstration"
SPDES_KIND = "spdes-check"
#: Program policy ``spdes_evidence_max_age_days``: the cited SPDES check's ``as_of`` may be at most this
#: many days before the withdrawal date (and before the administrator's sign-off) [days]. Section H(1)
#: asks for a demonstration of adequate treatment capacity and sets no age; 90 days is about one
#: quarter of plant flow records. Program interpretation — confirm with the bank administrator.
SPDES_EVIDENCE_MAX_AGE_DAYS = 90


def sha256_file(path: Path) -> str:
    """SHA-256 (hex) of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _show(value) -> str:
    """A short, one-line description of a JSON value for a message (never recurses into it)."""
    if isinstance(value, str):
        return repr(value[:60] + ("..." if len(value) > 60 else ""))
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return repr(value) if not isinstance(value, int) or abs(value) < 10**30 else "a huge integer"
    return "an array" if isinstance(value, list) else "an object" if isinstance(value, dict) else type(value).__name__


def _depth_ok(doc, limit: int = MAX_DEPTH) -> bool:
    """True if ``doc`` nests arrays/objects at most ``limit`` deep (iterative: no recursion)."""
    stack = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (list, dict)):
            if depth > limit:
                return False
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return True


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not allowed")


def parse_json_document(field: str, path: Path, data: bytes):
    """Parse the bytes of a cited JSON document, refusing anything a capacitysim command does not write.

    Raises
    ------
    InputError
        Not UTF-8, not valid JSON (NaN/Infinity included), or nested deeper than :data:`MAX_DEPTH`.
    """
    if data.startswith(_UTF8_BOM):
        data = data[len(_UTF8_BOM):]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{field}: {path} is not UTF-8 text; allowed: the JSON document of a capacitysim command") from None
    if data.count(b"[") + data.count(b"{") > MAX_CONTAINERS:  # counts brackets in strings too: an upper bound
        raise InputError(f"{field}: {path} holds more than {MAX_CONTAINERS:,} JSON arrays/objects; allowed: the JSON "
                         "document of a capacitysim command")
    try:
        doc = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise InputError(f"{field}: {path} is JSON nested too deeply; allowed: at most {MAX_DEPTH} levels") from None
    except (ValueError, MemoryError) as exc:
        reason = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        raise InputError(f"{field}: {path} is not valid JSON ({reason})") from None
    if not _depth_ok(doc):
        raise InputError(f"{field}: {path} is JSON nested too deeply; allowed: at most {MAX_DEPTH} levels")
    return doc


def _number(value) -> float | None:
    """A finite JSON number as float, else None (booleans are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        v = float(value)
    except OverflowError:
        return None
    return v if math.isfinite(v) else None


def _model_of(field: str, path: Path, doc: dict) -> dict:
    """The model file a capacity demonstration ran: ``{"model": path or None, "model_sha256": hex or None}``."""
    model_path, sha = None, None
    files = doc.get("external_files")
    if files is not None and not isinstance(files, list):
        raise InputError(f"{field}: {path}: external_files must be an array, got {_show(files)}")
    for f in files or ():
        if isinstance(f, dict) and f.get("verb") == "MODEL":
            sha, model_path = f.get("sha256"), f.get("path")
            break
    model = doc.get("model")
    if sha is None and isinstance(model, dict):
        sha, model_path = model.get("sha256"), model.get("path", model_path)
    if model_path is None and isinstance(model, str):
        model_path = model
    if sha is not None and not (isinstance(sha, str) and _SHA256.fullmatch(sha)):
        raise InputError(f"{field}: {path}: the model's sha256 must be 64 lowercase hex digits, got {_show(sha)}")
    if model_path is not None and not isinstance(model_path, str):
        raise InputError(f"{field}: {path}: the model's path must be text, got {_show(model_path)}")
    return {"model": model_path, "model_sha256": sha}


def _committed_block(field: str, path: Path, doc: dict) -> dict | None:
    """The ``committed`` block of a document run with ``--committed BANK`` (None when run without it).

    Read by key and type: ``bank_head`` (text), ``as_of`` (text) and ``flows`` (objects with
    ``application`` text, ``node`` text or null, ``average_gpd`` a number >= 0).
    """
    block = doc.get("committed")
    if block is None:
        return None
    if not isinstance(block, dict):
        raise InputError(f"{field}: {path}: committed must be an object or null, got {_show(block)}")
    flows = block.get("flows")
    if not isinstance(flows, list):
        raise InputError(f"{field}: {path}: committed.flows must be an array, got {_show(flows)}")
    out = []
    for i, f in enumerate(flows):
        if not isinstance(f, dict) or not isinstance(f.get("application"), str):
            raise InputError(f"{field}: {path}: committed.flows[{i}] must be an object with an application, got {_show(f)}")
        node = f.get("node")
        avg = _number(f.get("average_gpd"))
        if node is not None and not isinstance(node, str):
            raise InputError(f"{field}: {path}: committed.flows[{i}].node must be text or null, got {_show(node)}")
        if avg is None or avg < 0:
            raise InputError(f"{field}: {path}: committed.flows[{i}].average_gpd must be a number >= 0, "
                             f"got {_show(f.get('average_gpd'))}")
        out.append({"application": f["application"], "node": node, "average_gpd": avg})
    head, as_of = block.get("bank_head"), block.get("as_of")
    return {"bank_head": head if isinstance(head, str) else None, "as_of": as_of if isinstance(as_of, str) else None,
            "flows": out}


def _read_capacity(field: str, path: Path, doc, gpd: float | None, node: str | None,
                   average_gpd: float | None = None) -> dict:
    if not isinstance(doc, dict):
        raise InputError(f"{field}: {path} is JSON but not a capacitysim capacity document (expected an object, "
                         f"got {_show(doc)})")
    # a result document names its kind (issue 13): it is required
    looks_spdes = doc.get("kind") == SPDES_KIND or "connection_prohibited" in doc
    if doc.get("kind") != CAPACITY_KIND or "verdict" not in doc:
        hint = " (it looks like a SPDES check: cite it with --spdes-ref)" if looks_spdes else ""
        why = (f"kind {_show(doc['kind'])}" if "kind" in doc else "no 'kind' key") if doc.get("kind") != CAPACITY_KIND \
            else "no 'verdict' key"
        raise InputError(f"{field}: {path} is not a capacity demonstration JSON ({why}; allowed: \"kind\": "
                         f"\"{CAPACITY_KIND}\", the output of `capacitysim capacity --connect NODE=GPD --json`){hint}")
    verdict = doc["verdict"]
    if not isinstance(verdict, str) or verdict.lower() not in ("pass", "fail", "untrusted"):
        raise InputError(f"{field}: {path} has verdict {_show(verdict)}; allowed: pass, fail, untrusted")
    verdict = verdict.lower()
    if verdict != "pass":
        raise RefusedError(f"{field}: the capacity demonstration {path} has verdict {verdict.upper()}: it does not "
                           "demonstrate adequate hydraulic capacity (credit bank section H(1)); the withdrawal cannot rely on it")
    scenario = doc.get("scenario")
    conns = scenario.get("connections") if isinstance(scenario, dict) else None
    if not isinstance(conns, list):
        raise InputError(f"{field}: {path} has no scenario.connections array; allowed: the JSON of "
                         "`capacitysim capacity --connect NODE=GPD --json`")
    found = []
    for i, conn in enumerate(conns):
        if not isinstance(conn, dict):
            raise InputError(f"{field}: {path}: scenario.connections[{i}] must be an object, got {_show(conn)}")
        flow = _number(conn.get("flow_gpd"))
        name = conn.get("node")
        if flow is None or flow < 0:
            raise InputError(f"{field}: {path}: scenario.connections[{i}].flow_gpd must be a number >= 0, "
                             f"got {_show(conn.get('flow_gpd'))}")
        if not isinstance(name, str):
            raise InputError(f"{field}: {path}: scenario.connections[{i}].node must be text, got {_show(name)}")
        pf = _number(conn.get("peak_factor"))
        found.append((name, flow, pf if pf is not None and pf >= 1.0 else 1.0))
    model = _model_of(field, path, doc)
    match = None
    if gpd is not None:
        where = f" at node {node!r}" if node is not None else ""
        at_node = [c for c in found if node is None or c[0] == node]
        if average_gpd is None:
            ok = [c for c in at_node if c[1] >= gpd]
            need = f"no connection of at least {gpd:,.0f} gpd{where}"
        else:
            ok = [c for c in at_node if c[1] >= average_gpd - 0.5 and c[1] * c[2] >= gpd - 0.5]
            need = (f"no connection{where} of at least the withdrawal's average {average_gpd:,.0f} gpd that reaches its "
                    f"peak {gpd:,.0f} gpd (flow_gpd x peak_factor; give the demonstration's connection the shape that "
                    "reaches it, e.g. `capacity --peaking F`)")
        if not ok:
            listed = ", ".join(f"{_show(n)} {f:,.0f} gpd (peak {f * k:,.0f})" for n, f, k in found[:5]) or "none"
            raise RefusedError(f"{field}: the capacity demonstration {path} connects {listed}: {need}, so it does not "
                               "demonstrate capacity for this withdrawal (credit bank section H(1))")
        match = max(ok, key=lambda c: c[1])
    return {"verdict": "pass", **model, "committed": _committed_block(field, path, doc),
            "connection": None if match is None else {"node": match[0], "flow_gpd": match[1]}}


def _as_of(field: str, path: Path, value) -> _dt.date:
    """The ``as_of`` date of a SPDES check (``YYYY-MM-DD``, or an ISO date-time whose date is taken)."""
    if not isinstance(value, str):
        raise InputError(f"{field}: {path}: as_of must be a date YYYY-MM-DD, got {_show(value)}; allowed: the JSON of "
                         "`capacitysim spdes check --json`")
    try:
        return _dt.date.fromisoformat(value[:10])
    except ValueError:
        raise InputError(f"{field}: {path}: as_of must be a date YYYY-MM-DD, got {_show(value)}") from None


def _read_spdes(field: str, path: Path, doc, gpd: float | None, on: _dt.date | None, max_age_days: int) -> dict:
    if not isinstance(doc, dict):
        raise InputError(f"{field}: {path} is JSON but not a capacitysim SPDES check (expected an object, got {_show(doc)})")
    if doc.get("kind") != SPDES_KIND:
        looks_capacity = doc.get("kind") == CAPACITY_KIND or ("verdict" in doc and "scenario" in doc)
        hint = " (it looks like a capacity demonstration: cite it with --capacity-ref)" if looks_capacity else ""
        why = f"kind {_show(doc['kind'])}" if "kind" in doc else "no 'kind' key"
        raise InputError(f"{field}: {path} is not a SPDES check JSON ({why}; allowed: \"kind\": \"{SPDES_KIND}\", the "
                         f"output of `capacitysim spdes check --added-gpd GPD --json`){hint}")
    watershed = doc.get("watershed")
    if watershed is not None and not isinstance(watershed, bool):
        raise InputError(f"{field}: {path}: watershed must be true or false, got {_show(watershed)}")
    if "treatment_capacity_shown" in doc:
        shown, basis = doc["treatment_capacity_shown"], "treatment_capacity_shown"
        if not isinstance(shown, bool):
            raise InputError(f"{field}: {path}: treatment_capacity_shown must be true or false, got {_show(shown)}")
    elif "connection_prohibited" in doc:
        prohibited, basis = doc["connection_prohibited"], "not connection_prohibited"
        if not isinstance(prohibited, bool):
            raise InputError(f"{field}: {path}: connection_prohibited must be true or false, got {_show(prohibited)}")
        shown = not prohibited
    else:
        raise InputError(f"{field}: {path} has neither 'treatment_capacity_shown' nor 'connection_prohibited'; allowed: "
                         "the JSON of `capacitysim spdes check --json`")
    if not shown:
        if basis == "not connection_prohibited" or (watershed and doc.get("connection_prohibited") is True):
            what = "finds the connection PROHIBITED" + (" under 15 RCNY § 18-37(b) (watershed plant)" if watershed else "")
        elif watershed is False:
            what = ("does not show treatment capacity (treatment_capacity_shown false: plant outside the watershed with no "
                    "permitted-flow headroom after the added flow)")
        else:
            what = "does not show treatment capacity (treatment_capacity_shown false)"
        raise RefusedError(f"{field}: the SPDES check {path} {what}: it does not demonstrate adequate treatment "
                           "capacity (credit bank section H(1)); the withdrawal cannot rely on it")
    added_raw = doc.get("added_gpd")
    added = _number(added_raw)
    if added is None or added < 0:
        raise InputError(f"{field}: {path}: added_gpd must be a number >= 0, got {_show(added_raw)}")
    as_of = _as_of(field, path, doc.get("as_of"))
    if gpd is not None and added < gpd:
        raise RefusedError(f"{field}: the SPDES check {path} added {added:,.0f} gpd, less than the withdrawal's "
                           f"{gpd:,.0f} gpd: it does not show treatment capacity for this connection (credit bank "
                           "section H(1)); run `capacitysim spdes check --added-gpd` with at least the connection's flow")
    if on is not None:
        age = (on - as_of).days
        if age > max_age_days:
            raise RefusedError(f"{field}: the SPDES check {path} is as of {as_of}, {age} days before the withdrawal date "
                               f"{on}; allowed: at most {max_age_days} days (program policy spdes_evidence_max_age_days, "
                               "program interpretation — confirm with the bank administrator)")
    return {"verdict": "treatment capacity shown", "added_gpd": added, "as_of": as_of.isoformat(),
            "watershed": watershed, "basis": basis, "committed": _committed_block(field, path, doc)}


def _kind_of_bytes(path: Path, data: bytes) -> str:
    """``json``, ``html`` or ``other``, from the extension and the first bytes (a renamed file is caught)."""
    head = data[:512].removeprefix(_UTF8_BOM).lstrip(b" \t\r\n\f\v").lower()
    suffix = path.suffix.lower()
    if suffix == ".json" or head.startswith((b"{", b"[")):
        return "json"
    if suffix in _HTML_SUFFIXES or head.startswith(b"<"):
        return "html"
    return "other"


def _read_cited(field: str, ref: str, allowed: str, missing: str = "") -> tuple[Path, bytes]:
    """The resolved path and bytes (at most :data:`MAX_REF_BYTES`) of a cited file, or an InputError naming
    ``field``, the value and what is ``allowed``."""
    p = Path(ref).expanduser()
    try:
        is_file, exists = p.is_file(), p.exists()
    except (OSError, ValueError):  # a name too long for the OS, an embedded NUL
        raise InputError(f"{field}: {ref!r} is not a usable path; allowed: {allowed}") from None
    if not is_file:
        if exists:
            raise InputError(f"{field}: {ref!r} is not a regular file; allowed: {allowed}")
        raise InputError(f"{field}: no file {ref!r}; allowed: {allowed}{missing}")
    p = p.resolve()
    try:
        with open(p, "rb") as fh:
            data = fh.read(MAX_REF_BYTES + 1)
    except OSError as exc:
        raise InputError(f"{field}: cannot read {p}: {exc.strerror or exc}") from None
    if len(data) > MAX_REF_BYTES:
        raise InputError(f"{field}: {p} is larger than {MAX_REF_BYTES // (1024 * 1024)} MB; allowed: {allowed}")
    return p, data


def resolve_document(field: str, ref: str | None, what: str) -> dict | None:
    """Fingerprint a cited document of any format (a signed letter, a scan): ``{"ref", "sha256"}``.

    ``ref`` is resolved to an absolute path and hashed (SHA-256 of its bytes), so that ``verify`` and
    the administrator can tell whether it changed afterwards; ``what`` names the document in errors.
    """
    if ref is None:
        return None
    p, data = _read_cited(field, ref, f"the path of {what}")
    return {"ref": str(p), "sha256": hashlib.sha256(data).hexdigest()}


def _same_words(a, b) -> bool:
    return " ".join(str(a).split()).casefold() == " ".join(str(b).split()).casefold()


def quantification_facts(field: str, where: str, doc, *, project: str, owner: str, basin: str | None,
                         gpd: float) -> dict:
    """Check that a quantification document (``capacitysim credits quantify --json``) covers a deposit.

    The I/I quantification guidelines: "The quantification of infiltration and inflow shall be prepared
    by a professional engineer, licensed in the State of New York, and presented in an I/I remediation
    engineering report"; credit bank section B deposits the credits of the certified project "for the use
    by the municipal user having jurisdiction over the site"; section A keeps credits in the basin where
    they were generated. So the document must name the PE (``project.engineer``) and the licence
    (``project.pe_license_number``, six digits), quantify the project deposited (``project.id``), for
    the same municipal user and basin when it names them, and a ``total_gpd`` [gpd] at least the deposit.

    Parameters
    ----------
    field : str
        The input named in errors (``quantification``, ``quantification_job``).
    where : str
        How the document is named in errors (a path, ``job <id>``).
    doc : dict
        The parsed JSON document.
    project, owner, basin, gpd
        The deposit: project id, municipal user, basin (None: not checked) and stated flow [gpd].

    Returns
    -------
    dict
        ``project``, ``engineer``, ``pe_license`` (the six digits), ``total_gpd`` [gpd] and
        ``basis`` (the inflow credit basis the total is on).

    Raises
    ------
    InputError
        Not a quantification document (no ``project`` object or ``total_gpd``).
    RefusedError
        No PE or licence named; another project, municipal user or basin; a total below the deposit.
    """
    meta = doc.get("project") if isinstance(doc, dict) else None
    total = _number(doc.get("total_gpd")) if isinstance(doc, dict) else None
    if not isinstance(meta, dict) or total is None:
        raise InputError(f"{field}: {where} is not a quantification document (no project and total_gpd); allowed: "
                         "the JSON of `capacitysim credits quantify PROJECT.toml --json`")
    if doc.get("kind") != QUANTIFICATION_KIND:
        raise InputError(f"{field}: {where} is not a quantification document (kind {doc.get('kind')!r}, expected "
                         f"{QUANTIFICATION_KIND!r}); allowed: the JSON of `capacitysim credits quantify PROJECT.toml --json`")
    items = doc.get("items")
    if isinstance(items, list) and items:
        gpds = [_number(it.get("gpd")) if isinstance(it, dict) else None for it in items]
        if any(g is None for g in gpds) or any(not isinstance(it.get("qualifies"), bool) for it in items):
            raise InputError(f"{field}: {where}: every item needs a number gpd and a boolean qualifies")
        summed = sum(g for g, it in zip(gpds, items) if it["qualifies"])
        if not math.isclose(summed, total, rel_tol=1e-9, abs_tol=1e-6):
            raise RefusedError(f"{field}: {where} states total_gpd {total:,.2f} but its qualifying items sum to "
                               f"{summed:,.2f} gpd: the document was changed after capacitysim wrote it")
    on_basis = _number(doc.get(f"total_gpd_on_{doc.get('inflow_credit_basis')}"))
    if on_basis is not None and not math.isclose(on_basis, total, rel_tol=1e-9, abs_tol=1e-6):
        raise RefusedError(f"{field}: {where} states total_gpd {total:,.2f} but total_gpd_on_"
                           f"{doc.get('inflow_credit_basis')} {on_basis:,.2f}: the document was changed after "
                           "capacitysim wrote it")
    engineer = meta.get("engineer")
    if not isinstance(engineer, str) or len(engineer) > 200 or any(
            unicodedata.category(ch)[0] == "C" for ch in engineer):
        raise RefusedError(f"{field}: {where}: the engineer {str(engineer)[:80]!r} is not a name (text of at most 200 "
                           "characters, no control or format characters)")
    engineer = engineer.strip()
    licence = str(meta.get("pe_license_number") or "").strip()
    if not engineer or not re.fullmatch(r"[0-9]{6}", licence) or licence == "000000":
        raise RefusedError(f"{field}: {where} names no NYS licensed professional engineer (engineer {engineer!r}, "
                           f"licence number {licence!r}); the I/I quantification guidelines require the quantification "
                           "to be 'prepared by a professional engineer, licensed in the State of New York': quantify "
                           "again with the PE's name and six-digit licence number")
    if meta.get("id") != project:
        raise RefusedError(f"{field}: {where} quantified project {meta.get('id')!r}, not {project!r}: a deposit cites the "
                           "quantification of its own project")
    if meta.get("municipal_user") and not _same_words(meta["municipal_user"], owner):
        raise RefusedError(f"{field}: {where} quantified project {project!r} for the municipal user "
                           f"{meta['municipal_user']!r}, not {owner!r} (credit bank section B: the credits go to the "
                           "municipal user having jurisdiction over the project site)")
    if basin is not None and meta.get("basin") and not _same_words(meta["basin"], basin):
        raise RefusedError(f"{field}: {where} quantified project {project!r} in the basin {meta['basin']!r}, not "
                           f"{basin!r} (credit bank section A: credits are deposited in the I/I remediation basin "
                           "where the I/I was removed; moving them needs a transfer with the Board's approval)")
    if gpd > total:
        raise RefusedError(f"{field}: {where} quantified {total:,.2f} gpd of I/I removed for project {project!r} "
                           f"(total_gpd, {doc.get('inflow_credit_basis', '?')} basis); the deposit states {gpd:,.2f} gpd "
                           "(credit bank section B: only the I/I removal of the certified project is deposited)")
    return {"project": project, "engineer": engineer, "pe_license": licence, "total_gpd": total,
            "basis": doc.get("inflow_credit_basis")}


def resolve_quantification(ref: str | None, *, project: str, owner: str, basin: str | None, gpd: float) -> dict | None:
    """Read, fingerprint and check the quantification a deposit cites (:func:`quantification_facts`).

    Returns ``{"ref", "sha256"}`` and the facts, or None when ``ref`` is None.
    """
    if ref is None:
        return None
    field = "quantification"
    command = "capacitysim credits quantify PROJECT.toml --json"
    p, data = _read_cited(field, ref, f"the path of the JSON document of `{command}`")
    if _kind_of_bytes(p, data) != "json":
        raise InputError(f"{field}: {p} is not a JSON document; allowed: the JSON document of `{command}`")
    doc = parse_json_document(field, p, data)
    return {"ref": str(p), "sha256": hashlib.sha256(data).hexdigest()} | quantification_facts(
        field, str(p), doc, project=project, owner=owner, basin=basin, gpd=gpd)


def resolve_ref(kind: str, ref: str | None, *, gpd: float | None = None, node: str | None = None,
                average_gpd: float | None = None,
                on: _dt.date | None = None, max_age_days: int = SPDES_EVIDENCE_MAX_AGE_DAYS) -> dict | None:
    """Resolve a capacity (``kind="capacity"``) or SPDES (``"spdes"``) reference: the path of its JSON document.

    Parameters
    ----------
    kind : {"capacity", "spdes"}
    ref : str or None
        The path of the JSON result document (a run id is refused).
    gpd : float, optional
        The withdrawal's peak flow [gpd]: a capacity demonstration's connection must reach at least this
        much at its peak; without ``average_gpd``, it must connect at least this much as its average and a
        SPDES check must have added at least this much (``added_gpd``).
    average_gpd : float, optional
        The withdrawal's recorded average daily flow [gpd] (issue 25, item 2: average where the rule is an
        average, peak where it is a peak): the SPDES check (a monthly-average permit limit) must have added
        at least this much; the demonstration's connection must carry at least this much as its average
        (``flow_gpd``) *and* reach the peak ``gpd`` at its peak (``flow_gpd`` x ``peak_factor``, the shape the
        demonstration gave it: the model's diurnal pattern, or ``--peaking F``).
    node : str, optional
        The application's connection node: the demonstration's connection must be at this node.
    on : datetime.date, optional
        The withdrawal date: a SPDES check's ``as_of`` must be at most ``max_age_days`` before it.
    max_age_days : int, default :data:`SPDES_EVIDENCE_MAX_AGE_DAYS`
        Program policy ``spdes_evidence_max_age_days`` [days].

    Returns
    -------
    dict or None
        ``{"ref", "sha256", "verdict", "file"}`` and, for a capacity JSON, ``model``,
        ``model_sha256`` and ``connection`` (node and flow matched); for a SPDES JSON ``added_gpd``,
        ``as_of``, ``watershed`` and ``basis`` (which key showed treatment capacity). ``ref`` is the
        absolute path, ``sha256`` the file's hash, ``verdict`` ``pass`` (capacity) or
        ``treatment capacity shown`` (SPDES).

    Raises
    ------
    InputError
        A run id, a path that names no file, an unreadable, oversized, HTML, non-JSON or malformed
        file, or a JSON document of the wrong kind.
    RefusedError
        The cited demonstration failed, is untrusted or does not cover the withdrawal at its node;
        the cited check does not show treatment capacity, added less than the withdrawal's flow, or
        is older than the policy allows (credit bank section H(1)).
    """
    if ref is None:
        return None
    if kind not in KINDS:
        raise InputError(f"reference kind {kind!r}; allowed: {', '.join(KINDS)}")
    field = f"{kind}_ref"
    command = "capacitysim capacity --connect NODE=GPD --json > capacity.json" if kind == "capacity" else \
        "capacitysim spdes check --added-gpd GPD --json > spdes.json"
    p, data = _read_cited(field, ref, f"the path of the JSON document of `{command}`",
                          missing=" (a run id is not accepted: the bank reads the result document itself; run ids of "
                                  "a future service job are not supported yet)")
    digest = hashlib.sha256(data).hexdigest()
    out = {"ref": str(p), "sha256": digest, "verdict": "not read", "file": True}
    what = _kind_of_bytes(p, data)
    if what == "html":
        raise InputError(f"{field}: {p} is an HTML report; the bank reads only the machine-readable JSON document: "
                         f"cite the output of `{command}`")
    if what != "json":
        raise InputError(f"{field}: {p} is not a JSON document; the bank reads only the machine-readable JSON result "
                         f"document: cite the output of `{command}`")
    doc = parse_json_document(field, p, data)
    if kind == "capacity":
        out |= _read_capacity(field, p, doc, gpd, node, average_gpd)
    else:
        out |= _read_spdes(field, p, doc, average_gpd if average_gpd is not None else gpd, on, max_age_days)
    return out


def check_ref(ref: str, sha256: str | None) -> str:
    """Status of a recorded file reference now: ``ok``, ``changed``, ``missing``, ``unreadable`` or ``run id``."""
    if sha256 is None:
        return "run id"
    p = Path(str(ref))
    try:
        if not p.is_file():
            return "missing"
        return "ok" if sha256_file(p) == sha256 else "changed"
    except (OSError, ValueError):
        return "unreadable"
