"""The envelope of every result document (issue 27, item 3).

Every workflow's document (``--json``, the HTML report's input, the service's job result) ends with the same
keys, after the keys it had before (documents stay byte-compatible where their kind existed: the envelope adds
keys, never changes or removes one; tests/test_golden_documents.py):

``kind``
    What the document is (:data:`KINDS`: ``capacity-demonstration``, ``headroom``, ``detention-design``,
    ``spdes-check``, ``ii-quantification``, ``credits-connection``, ``sweep-run``, ``sweep-summary``,
    ``capacity-register``; the kinds that existed before keep their names).
    A document whose ``kind`` already meant something else (a sweep summary's ``kind`` is the sweep's: ``swmm``
    or ``detention``) carries it as ``document_kind``; :func:`document_kind` reads either.
``schema_version``
    The version of the kind's shape (:data:`SCHEMA_VERSION`), raised when a key changes meaning.
``capacitysim_version``
    The capacitysim that wrote it.
``engine``
    ``{"name": "SWMM", "version": "5.2.4", "swmm-toolkit": ..., "pyswmm": ...}`` when the workflow ran SWMM,
    else None (:func:`capacitysim.workflows.document.swmm_engine`).
``inputs``
    Every file read: ``{"role", "file", "sha256"}`` (the SHA-256 the document already records).
``policies``
    The program policies the workflow applied, each ``{"name", "value", "text", "alternative", "citation"}``
    (:class:`capacitysim.rules.policy.Policy`; the catalogue is :mod:`capacitysim.workflows.policies`).
``checks``, ``verdict``, ``warnings``
    Where the kind has them.

A key the document already has (a capacity demonstration's ``verdict``, a headroom's ``policies``) is kept as it
is and never written twice.
"""

from __future__ import annotations

from capacitysim.version import __version__

#: The version of every kind's shape at issue 27 (the shapes before it had none: read them as version 1).
SCHEMA_VERSION = 1

#: The keys :func:`envelope` may add (the golden test removes exactly these before comparing with older documents).
ENVELOPE_KEYS = ("kind", "document_kind", "schema_version", "capacitysim_version", "engine", "inputs", "input_files",
                 "policies", "checks", "verdict", "warnings")

#: Every document kind (the ``capacitysim report`` command dispatches on these).
KINDS = ("capacity-demonstration", "headroom", "detention-design", "spdes-check", "ii-quantification",
         "credits-connection", "sweep-run", "sweep-summary", "capacity-register")


def envelope(doc: dict, kind: str, *, engine: dict | None = None, inputs=(), policies=None, checks=None,
             verdict=None, warnings=None, kind_key: str = "kind", schema_version: int = SCHEMA_VERSION,
             same: dict | None = None, rename: dict | None = None) -> dict:
    """The document ``doc`` with the envelope's keys added after its own (a new dict; ``doc`` is not changed).

    How to use it: build the document's own keys as before and return them through it, e.g. at the end of a
    ``to_dict``::

        return envelope({...the document's keys...}, "headroom", engine=swmm_engine(),
                        inputs=[{"role": "model", "file": ..., "sha256": ...}], policies=[...], warnings=[...])

    Parameters
    ----------
    doc : dict
        The document's own keys, in their order (they stay first and unchanged).
    kind : str
        One of :data:`KINDS`.
    engine : dict or None
        The engine's record when the workflow ran it (:func:`capacitysim.workflows.document.swmm_engine`).
    inputs : iterable of dict
        The files read, ``{"role", "file", "sha256"}``.
    policies, checks, verdict, warnings
        Added when given and ``doc`` has no key of that name. Policies may be
        :class:`~capacitysim.rules.policy.Policy` objects or their dicts.
    kind_key : str
        ``"document_kind"`` for a document whose ``kind`` means something else.
    schema_version : int
        :data:`SCHEMA_VERSION` unless the kind's shape changed since.
    same : dict, optional
        Envelope key -> the document's key that already means it (a capacity register's ``capacitysim`` is the
        ``capacitysim_version``): not written twice.
    rename : dict, optional
        Envelope key -> the key it takes in a document whose key of that name means something else (a capacity
        register's ``inputs`` are its parameters: its files are ``input_files``).

    Returns
    -------
    dict
        ``doc``'s keys, then those of the envelope it lacked, in the order of :data:`ENVELOPE_KEYS`.
    """
    if kind not in KINDS:
        raise ValueError(f"envelope: unknown document kind {kind!r} (known: {', '.join(KINDS)})")
    if kind_key == "kind" and doc.get("kind", kind) != kind:
        raise ValueError(f"envelope: the document's kind is {doc['kind']!r}, not {kind!r}")
    out = dict(doc)

    same, rename = same or {}, rename or {}

    def add(key, value):
        key = rename.get(key, key)
        if key not in out and same.get(key) not in out:
            out[key] = value

    add(kind_key, kind)
    add("schema_version", schema_version)
    add("capacitysim_version", __version__)
    add("engine", dict(engine) if engine else None)
    add("inputs", [dict(i) for i in inputs])
    add("policies", [p.to_dict() if hasattr(p, "to_dict") else dict(p) for p in (policies or ())])
    if checks is not None:
        add("checks", [c.to_dict() if hasattr(c, "to_dict") else c for c in checks])
    if verdict is not None:
        add("verdict", verdict)
    if warnings is not None:
        add("warnings", list(warnings))
    return out


def document_kind(doc) -> str | None:
    """The kind of a stored document: its ``document_kind``, else its ``kind`` when that is one of :data:`KINDS`
    (a document written before the envelope: a capacity demonstration, a headroom, a capacity register), else
    None."""
    if not isinstance(doc, dict):
        return None
    kind = doc.get("document_kind", doc.get("kind"))
    return kind if kind in KINDS else None
