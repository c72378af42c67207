"""Reports rendered from a stored result document alone (issue 27, item 3): ``capacitysim report DOC.json``.

:func:`write_stored_report` dispatches on the document's kind (:func:`capacitysim.rules.document.document_kind`)
to the report module that reads that document. The detention design and the SPDES check carry what
their reports draw (the design steps and routed hydrographs; the record's monthly and period averages), so the
workflow's ``--report`` and this are one renderer of one document. Kinds whose report still needs more than the
document are refused with an :class:`~capacitysim.errors.InputError` that names them and what is allowed.
"""

from __future__ import annotations

from pathlib import Path

from capacitysim.errors import InputError
from capacitysim.rules.document import KINDS, document_kind


def _capacity(doc, path):
    from capacitysim.report.capacity import write_report

    return write_report(doc, path)


def _headroom(doc, path):
    from capacitysim.report.headroom import write_report

    return write_report(doc, path)


def _detention(doc, path):
    from capacitysim.report.detention import write_report

    return write_report(doc, path)


def _spdes(doc, path):
    from capacitysim.report.spdes import write_report

    return write_report(doc, path)


def _sweep_summary(doc, path):
    from capacitysim.report.sweep import write_summary_report

    return write_summary_report(doc, path)


def _register(doc, path):
    from capacitysim.report.register import write_report

    return write_report(doc, path)


#: kind -> the renderer of a stored document of that kind.
RENDERERS = {"capacity-demonstration": _capacity, "headroom": _headroom, "detention-design": _detention,
             "spdes-check": _spdes, "sweep-summary": _sweep_summary, "capacity-register": _register}
#: Why the other kinds cannot render from the document alone yet.
NOT_YET = {
    "sweep-run": "a sweep run has no report; summarize its store (capacitysim sweep summarize STORE --report)",
    "ii-quantification": "the quantification has no HTML report (capacitysim credits quantify prints its table)",
    "credits-connection": "the connection offset has no HTML report (capacitysim credits connection prints its table)",
}


def write_stored_report(doc, path) -> Path:
    """Write the HTML report of the result document ``doc`` (a dict read from ``--json``) to ``path``.

    Raises
    ------
    InputError
        ``doc`` is not a document, its kind is unknown, or its kind's report needs more than the document.
    """
    if not isinstance(doc, dict):
        raise InputError(f"document: must be a JSON object, got {type(doc).__name__}")
    kind = document_kind(doc)
    allowed = ", ".join(RENDERERS)
    if kind is None:
        raise InputError(f"kind: {doc.get('document_kind', doc.get('kind'))!r} is not a capacitysim document kind; "
                         f"allowed: {', '.join(KINDS)}")
    if kind not in RENDERERS:
        raise InputError(f"kind: {kind!r} cannot be rendered from the stored document: {NOT_YET.get(kind, 'no renderer')}; "
                         f"allowed: {allowed}")
    try:
        return RENDERERS[kind](doc, path)
    except (KeyError, TypeError, AttributeError, IndexError) as exc:
        raise InputError(f"document: a {kind} document without the field {exc}; give the --json of the workflow as "
                         "it printed it") from None
