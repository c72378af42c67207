"""The capacity demonstration and SPDES check a withdrawal relies on: resolve, read and fingerprint them.

Credit bank section H(1) makes a withdrawal subject to "demonstration by the applicant of adequate
hydraulic and treatment capacity". A withdrawal cites that demonstration (``--capacity-ref``) and the
treatment/SPDES check (``--spdes-ref``) either as a run id (any text that is not a file path) or as
the path of a file. For a file:

* its absolute path and SHA-256 are recorded, so the evidence cannot silently change afterwards
  (:meth:`capacitysim.bank.Ledger.verify` re-hashes it);
* the bank reads only the machine-readable document: the JSON printed by
  ``capacitysim capacity ... --json`` (capacity) or ``capacitysim spdes check ... --json`` (SPDES).
  Fields are read by key and type, never by searching prose, so no node, storm or label text can
  change what is read. An HTML report is refused (it embeds no JSON): cite the JSON instead;
* a capacity demonstration must have the verdict ``pass`` and a connection
  (``scenario.connections[]``, each with ``node`` and ``flow_gpd``) of at least the withdrawal's
  peak flow, at the withdrawal's node when one is given; the SHA-256 of the model it ran
  (``external_files`` entry with verb ``MODEL``, or ``model.sha256``) is recorded with the connection
  matched. A demonstration that did not pass (``fail``/``untrusted``), one that does not cover the
  withdrawal, or a SPDES check that prohibits the connection is refused
  (:class:`~capacitysim.errors.RefusedError`): it does not demonstrate adequate capacity;
* a JSON document of the wrong kind (a SPDES check cited as the capacity demonstration, or the
  reverse), malformed JSON (``NaN``/``Infinity`` included), JSON nested deeper than
  :data:`MAX_DEPTH` or holding more than :data:`MAX_CONTAINERS` arrays/objects, or a file over
  :data:`MAX_REF_BYTES` is an input error (never a RecursionError or MemoryError);
* any other file (a consultant's PDF) is fingerprinted, its verdict recorded as ``not read``.

Text that looks like a path (has a path separator or a report/document extension) but names no file
is an input error, so that a mistyped path is not recorded as an opaque run id.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path

from capacitysim.errors import InputError, RefusedError

#: Extensions that mark a reference as a file path rather than a run id.
_PATH_SUFFIXES = (".json", ".html", ".htm", ".pdf", ".txt", ".csv", ".rpt", ".out")
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


def sha256_file(path: Path) -> str:
    """SHA-256 (hex) of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _looks_like_path(ref: str) -> bool:
    return "/" in ref or "\\" in ref or ref.lower().endswith(_PATH_SUFFIXES)


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


def _read_capacity(field: str, path: Path, doc, gpd: float | None, node: str | None) -> dict:
    if not isinstance(doc, dict):
        raise InputError(f"{field}: {path} is JSON but not a capacitysim capacity document (expected an object, "
                         f"got {_show(doc)})")
    # a result document names its kind (issue 13); older ones are told apart by their keys
    looks_spdes = doc.get("kind") == SPDES_KIND or "connection_prohibited" in doc
    if "verdict" not in doc or looks_spdes or doc.get("kind", CAPACITY_KIND) != CAPACITY_KIND:
        hint = " (it looks like a SPDES check: cite it with --spdes-ref)" if looks_spdes else ""
        why = f"kind {_show(doc['kind'])}" if "kind" in doc else ("a SPDES check" if looks_spdes else "no 'verdict' key")
        raise InputError(f"{field}: {path} is not a capacity demonstration JSON ({why}){hint}")
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
        found.append((name, flow))
    model = _model_of(field, path, doc)
    match = None
    if gpd is not None:
        ok = [(n, f) for n, f in found if f >= gpd and (node is None or n == node)]
        if not ok:
            listed = ", ".join(f"{_show(n)} {f:,.0f} gpd" for n, f in found[:5]) or "none"
            where = f" at node {node!r}" if node is not None else ""
            raise RefusedError(f"{field}: the capacity demonstration {path} connects {listed}: no connection of at least "
                               f"{gpd:,.0f} gpd{where}, so it does not demonstrate capacity for this withdrawal "
                               "(credit bank section H(1))")
        match = max(ok, key=lambda nf: nf[1])
    return {"verdict": "pass", **model,
            "connection": None if match is None else {"node": match[0], "flow_gpd": match[1]}}


def _read_spdes(field: str, path: Path, doc) -> dict:
    if not isinstance(doc, dict):
        raise InputError(f"{field}: {path} is JSON but not a capacitysim SPDES check (expected an object, got {_show(doc)})")
    if "connection_prohibited" not in doc:
        looks_capacity = doc.get("kind") == CAPACITY_KIND or ("verdict" in doc and "scenario" in doc)
        hint = " (it looks like a capacity demonstration: cite it with --capacity-ref)" if looks_capacity else ""
        raise InputError(f"{field}: {path} is not a SPDES check JSON (no 'connection_prohibited' key){hint}")
    prohibited = doc["connection_prohibited"]
    if not isinstance(prohibited, bool):
        raise InputError(f"{field}: {path}: connection_prohibited must be true or false, got {_show(prohibited)}")
    if prohibited:
        raise RefusedError(f"{field}: the SPDES check {path} finds the connection PROHIBITED: it does not demonstrate "
                           "adequate treatment capacity (credit bank section H(1)); the withdrawal cannot rely on it")
    added = _number(doc.get("added_gpd"))
    return {"verdict": "not prohibited", "added_gpd": added}


def _kind_of_bytes(path: Path, data: bytes) -> str:
    """``json``, ``html`` or ``other``, from the extension and the first bytes (a renamed file is caught)."""
    head = data[:512].removeprefix(_UTF8_BOM).lstrip(b" \t\r\n\f\v").lower()
    suffix = path.suffix.lower()
    if suffix == ".json" or head.startswith((b"{", b"[")):
        return "json"
    if suffix in _HTML_SUFFIXES or head.startswith(b"<"):
        return "html"
    return "other"


def resolve_ref(kind: str, ref: str | None, *, gpd: float | None = None, node: str | None = None) -> dict | None:
    """Resolve a capacity (``kind="capacity"``) or SPDES (``"spdes"``) reference.

    Parameters
    ----------
    kind : {"capacity", "spdes"}
    ref : str or None
        A run id or the path of the JSON document.
    gpd : float, optional
        The withdrawal's peak flow [gpd]: a capacity demonstration must connect at least this much.
    node : str, optional
        The withdrawal's connection node: the demonstration's connection must be at this node.

    Returns
    -------
    dict or None
        ``{"ref", "sha256", "verdict", "file"}`` and, for a capacity JSON, ``model``,
        ``model_sha256`` and ``connection`` (node and flow matched); for a SPDES JSON ``added_gpd``.
        ``ref`` is the absolute path for a file (else the run id as given), ``sha256`` the file's
        hash (None for a run id), ``verdict`` ``pass`` / ``not prohibited`` / ``not read`` /
        ``run id``.

    Raises
    ------
    InputError
        A path that names no file, an unreadable, oversized, HTML or malformed file, or a JSON
        document of the wrong kind.
    RefusedError
        The cited demonstration failed, is untrusted or does not cover the withdrawal, or the cited
        check prohibits the connection (credit bank section H(1) asks for a demonstration of adequate
        capacity).
    """
    if ref is None:
        return None
    if kind not in KINDS:
        raise InputError(f"reference kind {kind!r}; allowed: {', '.join(KINDS)}")
    field = f"{kind}_ref"
    p = Path(ref).expanduser()
    try:
        is_file, exists = p.is_file(), p.exists()
    except (OSError, ValueError):  # a name too long for the OS, an embedded NUL
        raise InputError(f"{field}: {ref!r} is not a usable path (give a run id or the path of a JSON document)") from None
    if not is_file:
        if exists:
            raise InputError(f"{field}: {ref!r} is not a regular file (give a run id or the path of a JSON document)")
        if _looks_like_path(ref):
            raise InputError(f"{field}: no file {ref!r} (give an existing report path, or a run id without '/' or extension)")
        return {"ref": ref, "sha256": None, "verdict": "run id", "file": False}
    p = p.resolve()
    try:
        with open(p, "rb") as fh:
            data = fh.read(MAX_REF_BYTES + 1)
    except OSError as exc:
        raise InputError(f"{field}: cannot read {p}: {exc.strerror or exc}") from None
    if len(data) > MAX_REF_BYTES:
        raise InputError(f"{field}: {p} is larger than {MAX_REF_BYTES // (1024 * 1024)} MB; allowed: the JSON document "
                         "of a capacitysim command")
    digest = hashlib.sha256(data).hexdigest()
    out = {"ref": str(p), "sha256": digest, "verdict": "not read", "file": True}
    what = _kind_of_bytes(p, data)
    command = "capacitysim capacity ... --json > capacity.json" if kind == "capacity" else \
        "capacitysim spdes check ... --json > spdes.json"
    if what == "html":
        raise InputError(f"{field}: {p} is an HTML report; the bank reads only the machine-readable JSON document: "
                         f"cite the output of `{command}`")
    if what == "json":
        doc = parse_json_document(field, p, data)
        out |= _read_capacity(field, p, doc, gpd, node) if kind == "capacity" else _read_spdes(field, p, doc)
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
