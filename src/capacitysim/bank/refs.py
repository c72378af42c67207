"""The capacity demonstration and SPDES check a withdrawal relies on: resolve, read and fingerprint them.

Credit bank section H(1) makes a withdrawal subject to "demonstration by the applicant of adequate
hydraulic and treatment capacity". A withdrawal cites that demonstration (``--capacity-ref``) and the
treatment/SPDES check (``--spdes-ref``) either as a run id (any text that is not a file path) or as
the path of a file written by ``capacitysim capacity ... --json/--report`` or
``capacitysim spdes check ... --json/--report``. For a file:

* its absolute path and SHA-256 are recorded, so the evidence cannot silently change afterwards
  (:meth:`capacitysim.bank.Ledger.verify` re-hashes it);
* if it is one of those JSON documents or HTML reports, its verdict is read, and a demonstration that
  did not pass (``fail``/``untrusted``) or a check that prohibits the connection is refused: it
  demonstrates the opposite of adequate capacity;
* a JSON document of the wrong kind (a SPDES check cited as the capacity demonstration, or the
  reverse) is an input error;
* any other file (a consultant's PDF) is fingerprinted, its verdict recorded as ``not read``.

Text that looks like a path (has a path separator or a report/document extension) but names no file
is an input error, so that a mistyped path is not recorded as an opaque run id.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from capacitysim.errors import InputError, RefusedError

#: Extensions that mark a reference as a file path rather than a run id.
_PATH_SUFFIXES = (".json", ".html", ".htm", ".pdf", ".txt", ".csv", ".rpt", ".out")
_CAPACITY_HTML = re.compile(r"Verdict:\s*(PASS|FAIL|UNTRUSTED)\b")
_SPDES_HTML = re.compile(r"\b(NOT PROHIBITED|PROHIBITED) (?:by|as of)\b")

KINDS = ("capacity", "spdes")


def sha256_file(path: Path) -> str:
    """SHA-256 (hex) of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _looks_like_path(ref: str) -> bool:
    return "/" in ref or "\\" in ref or ref.lower().endswith(_PATH_SUFFIXES)


def _verdict_json(kind: str, field: str, path: Path, doc) -> str:
    if not isinstance(doc, dict):
        raise InputError(f"{field}: {path} is JSON but not a capacitysim {kind} document (expected an object)")
    if kind == "capacity":
        if "verdict" not in doc:
            hint = " (it looks like a SPDES check: cite it with --spdes-ref)" if "connection_prohibited" in doc else ""
            raise InputError(f"{field}: {path} is not a capacity demonstration JSON (no 'verdict' key){hint}")
        verdict = str(doc["verdict"]).lower()
        if verdict not in ("pass", "fail", "untrusted"):
            raise InputError(f"{field}: {path} has verdict {doc['verdict']!r}; allowed: pass, fail, untrusted")
        return verdict
    if "connection_prohibited" not in doc:
        hint = " (it looks like a capacity demonstration: cite it with --capacity-ref)" if "verdict" in doc else ""
        raise InputError(f"{field}: {path} is not a SPDES check JSON (no 'connection_prohibited' key){hint}")
    if not isinstance(doc["connection_prohibited"], bool):
        raise InputError(f"{field}: {path}: connection_prohibited must be true or false, got {doc['connection_prohibited']!r}")
    return "prohibited" if doc["connection_prohibited"] else "not prohibited"


def _verdict_html(kind: str, text: str) -> str:
    if kind == "capacity":
        m = _CAPACITY_HTML.search(text)
        return m.group(1).lower() if m else "not read"
    m = _SPDES_HTML.search(text)
    return m.group(1).lower() if m else "not read"


def resolve_ref(kind: str, ref: str | None) -> dict | None:
    """Resolve a capacity (``kind="capacity"``) or SPDES (``"spdes"``) reference.

    Returns
    -------
    dict or None
        ``{"ref", "sha256", "verdict", "file"}``: ``ref`` is the absolute path for a file (else the
        run id as given), ``sha256`` the file's hash (None for a run id), ``verdict`` ``pass`` /
        ``not prohibited`` / ``not read`` / ``run id``.

    Raises
    ------
    InputError
        A path that names no file, an unreadable file, or a JSON document of the wrong kind.
    RefusedError
        The cited demonstration failed or is untrusted, or the cited check prohibits the connection
        (credit bank section H(1) asks for a demonstration of adequate capacity).
    """
    if ref is None:
        return None
    field = f"{kind}_ref"
    p = Path(ref).expanduser()
    if not p.is_file():
        if p.exists():
            raise InputError(f"{field}: {ref!r} is not a file (give a run id or the path of a JSON/HTML report)")
        if _looks_like_path(ref):
            raise InputError(f"{field}: no file {ref!r} (give an existing report path, or a run id without '/' or extension)")
        return {"ref": ref, "sha256": None, "verdict": "run id", "file": False}
    p = p.resolve()
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"{field}: cannot read {p}: {exc.strerror}") from None
    digest = hashlib.sha256(data).hexdigest()
    verdict = "not read"
    text = None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    if text is not None:
        stripped = text.lstrip()
        if p.suffix.lower() == ".json" or stripped.startswith("{"):
            try:
                doc = json.loads(text)
            except ValueError:
                if p.suffix.lower() == ".json":
                    raise InputError(f"{field}: {p} is not valid JSON") from None
                doc = None
            if doc is not None:
                verdict = _verdict_json(kind, field, p, doc)
        elif p.suffix.lower() in (".html", ".htm") or stripped[:15].lower().startswith(("<!doctype", "<html")):
            verdict = _verdict_html(kind, text)
    if verdict in ("fail", "untrusted"):
        raise RefusedError(f"{field}: the capacity demonstration {p} has verdict {verdict.upper()}: it does not demonstrate "
                           "adequate hydraulic capacity (credit bank section H(1)); the withdrawal cannot rely on it")
    if verdict == "prohibited":
        raise RefusedError(f"{field}: the SPDES check {p} finds the connection PROHIBITED: it does not demonstrate adequate "
                           "treatment capacity (credit bank section H(1)); the withdrawal cannot rely on it")
    return {"ref": str(p), "sha256": digest, "verdict": verdict, "file": True}


def check_ref(ref: str, sha256: str | None) -> str:
    """Status of a recorded file reference now: ``ok``, ``changed``, ``missing`` or ``run id``."""
    if sha256 is None:
        return "run id"
    p = Path(ref)
    if not p.is_file():
        return "missing"
    return "ok" if sha256_file(p) == sha256 else "changed"
