"""The files of the credit bank's annual report: one CSV per table and one self-contained HTML page.

CSV cells that a spreadsheet would run as a formula (text starting with ``=``, ``+``, ``-``, ``@``, a tab
or a carriage return) are written with a leading ``'`` (:func:`csv_cell`); numbers, and text that is a
plain number such as ``-5``, are kept (OWASP, CSV injection).
"""

from __future__ import annotations

import csv
import html
import io
import re
from pathlib import Path

from capacitysim.files import atomic_write_text
from capacitysim.report.format import clean_text, label
from capacitysim.report.html import HtmlReport
from capacitysim.workflows.bank_reports import COLUMNS, TITLES


#: Text a spreadsheet reads as a plain number (kept as is in a CSV cell).
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
#: First characters that make a spreadsheet evaluate a cell (OWASP CSV injection).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value):
    """A value made safe for a spreadsheet: text starting a formula gets a leading ``'``.

    ``None`` is an empty cell; numbers and text that is a plain number (``-5``, ``-1.5e3``) are kept.
    """
    if value is None:
        return ""
    if isinstance(value, (int, float)):
        return value
    text = str(value)
    if text.startswith(_FORMULA_START) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


def rows_to_csv(rows: list[dict], columns: list[str] | None = None) -> str:
    """CSV text of a table (header row always written; columns from the first row if not given).

    Every cell goes through :func:`csv_cell` (no spreadsheet formula can be injected by a name, a
    reason or a document cited).
    """
    columns = columns or (list(rows[0]) if rows else [])
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=[csv_cell(c) for c in columns], extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({csv_cell(k): csv_cell(r.get(k)) for k in columns})
    return buf.getvalue()


def render_html(report: dict) -> str:
    """The whole report as one self-contained HTML page."""
    who = report["municipal_user"] or "all municipal users"
    when = f"year {report['year']}" if report["year"] else "all years"
    page = HtmlReport("Sewer flow credit bank: annual municipal user report", f"{who}; {when}")
    page.citation("Binghamton-Johnson City Joint Sewage Board, I/I Offset Program, records section A-D; credit bank sections A-I.")
    pols = report.get("policies") or []
    if pols:
        page.paragraph("Program policies in force, where the program text is silent (each a program interpretation — "
                       "confirm with the bank administrator; none is the rule): "
                       + "; ".join(f"{p['name']} = {p['value']}" for p in pols) + ". Their texts are in the table "
                       "'Program policies in force' below.", "untrusted")
    v = report["verify"]
    page.paragraph(
        ("Ledger check passed: " if v["ok"] else "LEDGER CHECK FAILED: ")
        + f"{v['deposited_gpd']:,} gpd deposited = {v['held_gpd']:,} gpd held + {v['withdrawn_gpd']:,} gpd withdrawn"
        + ("" if v["ok"] else "; " + "; ".join(v["problems"])),
        "pass" if v["ok"] else "fail",
    )
    h = report.get("head") or {"head": v["journal_head"], "rows": v["journal_rows"], "last_seq": None, "last_at": None}
    # the last row's time as a reader reads it (no microseconds), the exact value kept in <time datetime=...>
    last = ""
    if h.get("last_seq") is not None:
        shown = html.escape(clean_text(str(h["last_at"])))
        last = (f", last row {h['last_seq']} at <time datetime=\"{html.escape(str(h['last_at']))}\">{shown}</time>"
                + ("" if shown.endswith("UTC") else " UTC"))
    page.raw("<p>" + html.escape(f"Journal: {h['rows']:,} rows, hash-chained; head SHA-256 {h['head']}") + last
             + html.escape(f". Keep this value outside "
                           f"the bank: `capacitysim bank verify --expect-head {h['head']}` fails if the journal up to that row is "
                           "ever rewritten. Without it, `verify` cannot detect a consistent rewrite of the whole chain by someone "
                           "with write access to the bank file.") + "</p>")
    for key, rows in report["tables"].items():
        page.heading(TITLES[key])
        if not rows:
            page.paragraph("None.")
            continue
        cols = COLUMNS[key]
        page.table([label(c) for c in cols], [[r[c] if r[c] is not None else "" for c in cols] for r in rows])
    return page.render()


def report_files() -> list[str]:
    """Names of the files :func:`write_report` writes into its folder."""
    return [f"{key}.csv" for key in COLUMNS] + ["report.html"]


def write_report(report: dict, out_dir: str | Path) -> dict[str, Path]:
    """Write ``<table>.csv`` for every table and ``report.html`` into ``out_dir`` (atomically)."""
    out = Path(out_dir)
    paths = {}
    for key, rows in report["tables"].items():
        paths[key] = atomic_write_text(out / f"{key}.csv", rows_to_csv(rows, COLUMNS[key]))
    paths["html"] = atomic_write_text(out / "report.html", render_html(report))
    return paths
