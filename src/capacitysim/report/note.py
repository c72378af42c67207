"""The flow credit note as a document: one self-contained HTML page or a PDF.

Binghamton-Johnson City I/I Offset Program, definitions, FLOW CREDIT NOTE: "An agreement between the
Board and the applicant that flow credits shall be made available to the applicant, developer, or a
municipal user under specific terms". The bank administrator's sign-off of a withdrawal issues the note;
the ledger describes it as a dict (see :func:`note_html` for the fields) and this module renders it.

Both formats carry the same content, in this order: title, program and Board; the parties; the flow
(peak, average, offset ratio, credits withdrawn, basin, node, the lots the credits came from); the
evidence with its full SHA-256; the dates (issued, certificate of occupancy due, extensions); the terms,
each with its heading, text and citation; the signature block (signed off by, recorded by, the sign-off
transaction, the journal row hash, the bank head); a footer with the capacitysim version that issued it.

A note is a record: the same dict always gives the same bytes, so its SHA-256 can be recorded and checked.
Nothing depends on the time of rendering (the PDF's creation date is the note's ``issued_on``, its file
identifier is computed from its content) nor on the machine (the bank is named, never its full path).
The PDF bytes also depend on the fpdf2 version and on the font file (DejaVu Sans, shipped with
matplotlib), so its SHA-256 is reproducible with the same installed versions.
"""

from __future__ import annotations

import datetime as _dt
import html
import unicodedata
from functools import lru_cache
from pathlib import Path

from capacitysim.errors import InputError
from capacitysim.files import atomic_write_bytes, atomic_write_text
from capacitysim.report.format import clean_text, number
from capacitysim.report.html import _CSS as _REPORT_CSS  # the look of every other report
from capacitysim.report.html import file_label

#: The fields of a note dict (all present; some may be None, see :func:`note_html`).
FIELDS = ("title", "program", "board", "application", "type", "applicant", "holder", "principal_municipal_user",
          "affected_owner", "basin", "node", "peak_flow_gpd", "average_gpd", "offset_ratio", "amount_gpd", "lots",
          "evidence", "issued_on", "co_due_on", "extensions", "signed_off_by", "recorded_by", "signoff_txn",
          "journal_hash", "bank", "terms", "capacitysim_version")

#: The suffixes :func:`write_note` writes.
SUFFIXES = (".html", ".pdf")

NOT_RECORDED = "not recorded"
UNKNOWN_ORIGIN = "unknown origin"


# --- the content, once for both formats ------------------------------------------------------------------------

def _check(note) -> None:
    if not isinstance(note, dict):
        raise InputError(f"note: {type(note).__name__}; a flow credit note is a dict with the fields {', '.join(FIELDS)}")
    missing = [k for k in FIELDS if k not in note]
    if missing:
        raise InputError(f"note: missing the fields {', '.join(missing)}; a flow credit note has all of {', '.join(FIELDS)}")


def _text(value, default: str = NOT_RECORDED) -> str:
    """A value printed as given (a name, a reference); ``default`` for None or an empty string."""
    if value is None:
        return default
    text = str(value)
    return text if text.strip() else default


def _date(value) -> str:
    """A date or date-time as the reports print them (no microseconds, no ``T``)."""
    return NOT_RECORDED if value is None else clean_text(str(value))


def _gpd(value) -> str:
    return NOT_RECORDED if value is None else number(value, "gpd")


def _parties(note: dict) -> list[tuple[str, str]]:
    return [("Board", _text(note["board"])),
            ("applicant", _text(note["applicant"])),
            ("credit holder (subaccount the credits leave)", _text(note["holder"])),
            ("principal municipal user", _text(note["principal_municipal_user"])),
            ("affected owner", _text(note["affected_owner"]))]


def _flow(note: dict) -> list[tuple[str, str]]:
    ratio = note["offset_ratio"]
    return [("peak flow [gpd]", _gpd(note["peak_flow_gpd"])),
            ("average flow [gpd]", _gpd(note["average_gpd"])),
            ("offset ratio [-]", NOT_RECORDED if ratio is None else number(ratio, "-")),
            ("flow credits withdrawn [gpd]", _gpd(note["amount_gpd"])),
            ("basin", _text(note["basin"])),
            ("node", _text(note["node"]))]


def _lots(note: dict) -> list[tuple[str, str]]:
    lots = list(note["lots"] or [])
    rows = [(_text(lot.get("project"), UNKNOWN_ORIGIN), _gpd(lot.get("gpd"))) for lot in lots]
    gpds = [lot.get("gpd") for lot in lots]
    if len(lots) > 1 and all(g is not None for g in gpds):
        rows.append(("total", _gpd(sum(gpds))))
    return rows


def _evidence(note: dict) -> list[tuple[str, str, str, str]]:
    """kind, reference, as of, SHA-256 of each piece of evidence."""
    return [(_text(e.get("kind")), _text(e.get("ref")), _date(e.get("as_of")), _text(e.get("sha256")))
            for e in (note["evidence"] or [])]


def _dates(note: dict) -> list[tuple[str, str]]:
    return [("issued on", _date(note["issued_on"])),
            ("certificate of occupancy due on", _date(note["co_due_on"]))]


def _extensions(note: dict) -> list[tuple[str, str, str]]:
    """extended until, document, granted on of each extension of the due date."""
    return [(_date(x.get("until")), _text(x.get("document")), _date(x.get("granted_on")))
            for x in (note["extensions"] or [])]


def _terms(note: dict) -> list[tuple[str, str, str]]:
    return [(_text(t.get("heading"), ""), _text(t.get("text"), ""), _text(t.get("citation"), ""))
            for t in (note["terms"] or [])]


def _bank(note: dict) -> dict:
    return note["bank"] or {}


def _signoff(note: dict) -> list[tuple[str, str, bool]]:
    """label, value, monospace (a hash) of each line of the signature block."""
    bank = _bank(note)
    path = bank.get("path")
    return [("signed off by (bank administrator)", _text(note["signed_off_by"]), False),
            ("recorded by", _text(note["recorded_by"]), False),
            ("sign-off transaction", _text(note["signoff_txn"]), False),
            ("journal row hash", _text(note["journal_hash"]), True),
            # the bank by its name, never the full path (or connection string) of the machine that issued it
            ("bank", file_label(str(path)) if path else NOT_RECORDED, False),
            ("bank head", _text(bank.get("head")), True)]


def _subtitle(note: dict) -> str:
    return f"Application {_text(note['application'])} ({_text(note['type'])}), issued {_date(note['issued_on'])}"


def _footer(note: dict) -> str:
    return f"capacitysim {_text(note['capacitysim_version'], 'version not recorded')}"


# --- HTML ------------------------------------------------------------------------------------------------------

_NOTE_CSS = """
td, th, p, h1, h2, h3 { overflow-wrap: anywhere; }
td, th { min-width: 4.5rem; }
code { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: .8rem; white-space: nowrap; }
.term-text { white-space: pre-line; }
footer { margin-top: 2rem; border-top: 1px solid #bbb; padding-top: .3rem; }
@media print { body { margin: 0; max-width: none; } }
"""


def _esc(value) -> str:
    """Escape user text for HTML (quotes too); characters UTF-8 cannot carry (lone surrogates) become ``?``."""
    text = str(value).encode("utf-8", "replace").decode("utf-8")
    return html.escape(text, quote=True)


def _kv_table(rows, mono: set[int] = frozenset()) -> str:
    out = ["<table><tbody>"]
    for i, (k, v) in enumerate(rows):
        value = f"<code>{_esc(v)}</code>" if i in mono else _esc(v)
        out.append(f"<tr><th scope=\"row\">{_esc(k)}</th><td>{value}</td></tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _table(header, rows, numeric: set[int] = frozenset(), mono: set[int] = frozenset()) -> str:
    out = ["<table><thead><tr>", *(f"<th>{_esc(h)}</th>" for h in header), "</tr></thead><tbody>"]
    for row in rows:
        out.append("<tr>")
        for j, v in enumerate(row):
            cls = ' class="num"' if j in numeric else ""
            value = f"<code>{_esc(v)}</code>" if j in mono and v != NOT_RECORDED else _esc(v)
            out.append(f"<td{cls}>{value}</td>")
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def note_html(note: dict) -> str:
    """The flow credit note as one self-contained HTML page (no script, nothing fetched, every text escaped).

    Parameters
    ----------
    note : dict
        The note as the ledger describes it, with every field of :data:`FIELDS`: ``title``, ``program``,
        ``board``, ``application``, ``type`` (connection or extension), ``applicant``, ``holder`` (whose
        subaccount the credits leave), ``principal_municipal_user``, ``affected_owner`` (None: not recorded),
        ``basin``, ``node``, ``peak_flow_gpd``, ``average_gpd`` (None: not recorded), ``offset_ratio``,
        ``amount_gpd``, ``lots`` (``project`` None: unknown origin; ``gpd``), ``evidence`` (``kind``, ``ref``,
        ``sha256``, ``as_of``), ``issued_on``, ``co_due_on``, ``extensions`` (``until``, ``document``,
        ``granted_on``), ``signed_off_by``, ``recorded_by``, ``signoff_txn``, ``journal_hash``, ``bank``
        (``path``, ``head``), ``terms`` (``heading``, ``text``, ``citation``), ``capacitysim_version``.

    Returns
    -------
    str
        The page; the same note always gives the same text (no time of rendering in it).

    Raises
    ------
    InputError
        ``note`` is not a dict or lacks a field.
    """
    _check(note)
    title = _text(note["title"], "Flow credit note")
    parts = [f"<h1>{_esc(title)}</h1>",
             f"<p><strong>{_esc(_text(note['program']))}</strong><br>{_esc(_text(note['board']))}</p>",
             f'<p class="meta">{_esc(_subtitle(note))}</p>',
             "<h2>Parties</h2>", _kv_table(_parties(note)),
             "<h2>Flow</h2>", _kv_table(_flow(note)),
             "<h3>Lots the credits came from</h3>"]
    lots = _lots(note)
    parts.append(_table(["project", "credits [gpd]"], lots, numeric={1}) if lots else "<p>none recorded</p>")
    parts.append("<h2>Evidence</h2>")
    evidence = _evidence(note)
    parts.append(_table(["kind", "reference", "as of", "SHA-256"], evidence, mono={3}) if evidence
                 else "<p>none recorded</p>")
    parts += ["<h2>Dates</h2>", _kv_table(_dates(note)), "<h3>Extensions of the due date</h3>"]
    extensions = _extensions(note)
    parts.append(_table(["extended until", "document", "granted on"], extensions) if extensions else "<p>none</p>")
    parts.append("<h2>Terms</h2>")
    for heading, text, citation in _terms(note):
        parts.append(f"<h3>{_esc(heading)}</h3>")
        if text:
            parts.append(f'<p class="term-text">{_esc(text)}</p>')
        if citation:
            parts.append(f'<p class="cite">{_esc(citation)}</p>')
    signoff = _signoff(note)
    parts += ["<h2>Sign-off</h2>",
              _kv_table([(k, v) for k, v, _ in signoff], mono={i for i, (_, v, m) in enumerate(signoff)
                                                               if m and v != NOT_RECORDED}),
              f'<footer class="meta">{_esc(_footer(note))}</footer>']
    body = "\n".join(parts)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{_esc(title)}: {_esc(_text(note['application']))}</title>"
            f"<style>{_REPORT_CSS}{_NOTE_CSS}</style></head>\n<body>\n{body}\n</body></html>\n")


# --- PDF -------------------------------------------------------------------------------------------------------

#: Stand-ins for characters the font has no glyph for (Latin-1 core fonts: dashes, quotes, signs).
SUBSTITUTES = {
    "\u2014": "-", "\u2013": "-", "\u2012": "-", "\u2010": "-", "\u2011": "-", "\u2212": "-",
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
    "\u2265": ">=", "\u2264": "<=", "\u2260": "!=", "\u2248": "~", "\u2026": "...", "\u2022": "*",
    "\u2192": "->", "\u2190": "<-", "\u2194": "<->", "\u20ac": "EUR", "\u2122": "TM", "\u2030": " per mille",
}

#: What the core (Latin-1) fonts print, when no TrueType font is found.
_LATIN1 = frozenset(range(0x20, 0x7F)) | frozenset(range(0xA0, 0x100))

_FONT_FILES = {"sans": "DejaVuSans.ttf", "sans-B": "DejaVuSans-Bold.ttf", "sans-I": "DejaVuSans-Oblique.ttf",
               "mono": "DejaVuSansMono.ttf"}


def font_folder() -> Path | None:
    """The folder of the DejaVu fonts matplotlib ships (None when they are missing: core fonts are used)."""
    try:
        import matplotlib
    except ImportError:  # pragma: no cover - matplotlib is a dependency
        return None
    folder = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    return folder if all((folder / f).is_file() for f in _FONT_FILES.values()) else None


@lru_cache(maxsize=8)
def _cmap(path: str) -> frozenset[int]:
    from fontTools.ttLib import TTFont

    with TTFont(path, lazy=True) as font:
        return frozenset(font.getBestCmap())


def printable(text: str, glyphs: frozenset[int]) -> str:
    """``text`` with every character the font has no glyph for replaced: a stand-in (:data:`SUBSTITUTES`),
    else its compatibility decomposition without accents (``ﬁ`` -> ``fi``, ``ő`` -> ``o``), else ``?``.
    Line breaks are kept, other control characters become spaces, invisible format characters go."""
    out = []
    for ch in text.replace("\r\n", "\n"):
        if ch == "\n":
            out.append(ch)
            continue
        cat = unicodedata.category(ch)
        if cat == "Cc" or cat in ("Zl", "Zp"):
            out.append("\n" if cat in ("Zl", "Zp") or ch == "\r" else " ")
        elif cat == "Cf":
            continue
        elif ord(ch) in glyphs:
            out.append(ch)
        elif (sub := SUBSTITUTES.get(ch)) is not None and all(ord(c) in glyphs for c in sub):
            out.append(sub)
        else:
            plain = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
            out.append(plain if plain and all(ord(c) in glyphs for c in plain) else "?")
    return "".join(out)


_MARGIN = 18.0      # page margins [mm]
_LINE = 4.6         # line height of body text [mm]
_PAD = 1.0          # vertical padding inside a table cell [mm]
_SIZE = 9.5         # body text [pt]
_MONO_SIZE = 8.0    # hashes [pt]: a SHA-256 (64 characters) fits on one line of a full-width cell
_LABEL_W = 62.0     # label column of the two-column tables [mm]


class _NotePdf:
    """Writes the note on an FPDF document, with one font family for text and one for hashes."""

    def __init__(self, note: dict):
        from fpdf import FPDF

        self.pdf = pdf = FPDF(orientation="portrait", unit="mm", format="letter")
        pdf.set_margins(_MARGIN, _MARGIN, _MARGIN)
        pdf.set_auto_page_break(True, margin=_MARGIN + 6)
        pdf.set_creation_date(_issued_datetime(note["issued_on"]))
        folder = font_folder()
        if folder is not None:
            pdf.add_font("DejaVu", "", str(folder / _FONT_FILES["sans"]))
            pdf.add_font("DejaVu", "B", str(folder / _FONT_FILES["sans-B"]))
            pdf.add_font("DejaVu", "I", str(folder / _FONT_FILES["sans-I"]))
            pdf.add_font("DejaVuMono", "", str(folder / _FONT_FILES["mono"]))
            self.sans, self.mono = "DejaVu", "DejaVuMono"
            # characters every one of the faces has (a character one face lacks is replaced everywhere)
            sets = [_cmap(str(folder / f)) for f in _FONT_FILES.values()]
            self.glyphs = frozenset.intersection(*sets)
        else:
            self.sans, self.mono = "helvetica", "courier"
            self.glyphs = _LATIN1
        self.width = pdf.w - 2 * _MARGIN

    def t(self, value) -> str:
        return printable(str(value), self.glyphs)

    def font(self, style: str = "", size: float = _SIZE, mono: bool = False) -> None:
        self.pdf.set_font(self.mono if mono else self.sans, "" if mono else style, size)

    def paragraph(self, text: str, style: str = "", size: float = _SIZE, line: float = _LINE,
                  color: int = 0, mono: bool = False) -> None:
        pdf = self.pdf
        self.font(style, size, mono)
        pdf.set_text_color(color)
        pdf.set_x(_MARGIN)
        pdf.multi_cell(self.width, line, self.t(text), align="L", new_x="LMARGIN", new_y="NEXT")
        pdf.set_text_color(0)

    def heading(self, text: str, level: int = 2) -> None:
        pdf = self.pdf
        size = {1: 17, 2: 12.5, 3: 10.5}[level]
        # keep a heading with at least a few lines of what follows
        if pdf.y + 22 > pdf.page_break_trigger:
            pdf.add_page()
        pdf.ln(4 if level == 2 else 2)
        self.paragraph(text, "B", size, line=size * 0.5)
        if level <= 2:
            pdf.set_draw_color(120)
            pdf.line(_MARGIN, pdf.y + 0.6, _MARGIN + self.width, pdf.y + 0.6)
            pdf.set_draw_color(0)
            pdf.ln(2)
        else:
            pdf.ln(0.5)

    def _cell_height(self, text: str, width: float, style: str, mono: bool) -> float:
        self.font(style, _MONO_SIZE if mono else _SIZE, mono)
        return self.pdf.multi_cell(width, _LINE, self.t(text), align="L", dry_run=True, output="HEIGHT")

    def row(self, cells: list[tuple[str, float, str, bool, str]], fill: bool = False) -> None:
        """One table row: cells of (text, width [mm], style, monospace, align), as high as its tallest cell.

        A row that does not fit on the rest of the page starts a new one; a row taller than a whole page (a
        hostile 5,000-character name) is written as paragraphs, which flow over the pages.
        """
        pdf = self.pdf
        height = max(self._cell_height(text, w, style, mono) for text, w, style, mono, _ in cells) + 2 * _PAD
        if height > pdf.page_break_trigger - pdf.t_margin:
            for text, _, style, mono, _ in cells:
                self.paragraph(text, style, _MONO_SIZE if mono else _SIZE, mono=mono)
            pdf.ln(1)
            return
        if pdf.y + height > pdf.page_break_trigger:
            pdf.add_page()
        x, y = _MARGIN, pdf.y
        pdf.set_auto_page_break(False)
        pdf.set_draw_color(170)
        pdf.set_fill_color(238, 241, 244)
        for text, w, style, mono, align in cells:
            pdf.rect(x, y, w, height, style="DF" if fill else "D")
            pdf.set_xy(x, y + _PAD)
            self.font(style, _MONO_SIZE if mono else _SIZE, mono)
            pdf.multi_cell(w, _LINE, self.t(text), align=align, new_x="RIGHT", new_y="TOP")
            x += w
        pdf.set_draw_color(0)
        pdf.set_auto_page_break(True, margin=_MARGIN + 6)
        pdf.set_xy(_MARGIN, y + height)

    def key_values(self, rows: list[tuple[str, str]], mono: set[int] = frozenset()) -> None:
        for i, (k, v) in enumerate(rows):
            self.row([(k, _LABEL_W, "B", False, "L"),
                      (v, self.width - _LABEL_W, "", i in mono and v != NOT_RECORDED, "L")])
        self.pdf.ln(1.5)

    def table(self, header: list[str], rows: list[tuple], widths: list[float], numeric: set[int] = frozenset()) -> None:
        aligns = ["R" if j in numeric else "L" for j in range(len(header))]
        self.row([(h, w, "B", False, a) for h, w, a in zip(header, widths, aligns)], fill=True)
        for r in rows:
            self.row([(v, w, "", False, a) for v, w, a in zip(r, widths, aligns)])
        self.pdf.ln(1.5)

    def footers(self, text: str) -> None:
        """The footer of every page (written last, so it can say "page i of n" without a placeholder that user
        text could contain)."""
        pdf = self.pdf
        n = pdf.pages_count
        pdf.set_auto_page_break(False)
        for i in range(1, n + 1):
            pdf.page = i
            # the page's content stream ends in whatever font its last text used: select the footer's font anew
            # (two changes, so FPDF writes the selection on this page whatever it last selected elsewhere)
            self.font("B", 8)
            self.font("", 8)
            pdf.set_text_color(85)
            pdf.set_xy(_MARGIN, pdf.h - _MARGIN)
            pdf.cell(self.width / 2, 4, self.t(text), align="L")
            pdf.cell(self.width / 2, 4, f"page {i} of {n}", align="R")
            pdf.set_text_color(0)


def _issued_datetime(issued_on) -> _dt.datetime:
    try:
        day = _dt.date.fromisoformat(str(issued_on)[:10])
    except ValueError:
        raise InputError(f"issued_on {issued_on!r}: not a date; give YYYY-MM-DD (the PDF's creation date is "
                         "the date the note was issued)") from None
    return _dt.datetime(day.year, day.month, day.day, tzinfo=_dt.timezone.utc)


def note_pdf(note: dict) -> bytes:
    """The flow credit note as a PDF (US letter), with the content of :func:`note_html`.

    Text is set in DejaVu Sans (embedded, a deterministic subset; the font ships with matplotlib); a
    character it lacks is replaced (:func:`printable`). Without the font, the Latin-1 core fonts are used and
    dashes, quotes and signs outside Latin-1 are replaced. The creation date is ``issued_on`` (midnight UTC)
    and the file identifier derives from the content, so the same note gives the same bytes.

    Raises
    ------
    InputError
        ``note`` is not a dict or lacks a field; ``issued_on`` is not a date.
    """
    _check(note)
    doc = _NotePdf(note)
    pdf = doc.pdf
    title = _text(note["title"], "Flow credit note")
    pdf.set_title(doc.t(f"{title}: {_text(note['application'])}"))
    pdf.set_subject(doc.t(_text(note["program"])))
    pdf.set_author(doc.t(_text(note["board"])))
    pdf.set_creator(doc.t(_footer(note)))
    pdf.add_page()

    doc.paragraph(title, "B", 17, line=8)
    pdf.set_draw_color(27)
    pdf.set_line_width(0.5)
    pdf.line(_MARGIN, pdf.y + 0.5, _MARGIN + doc.width, pdf.y + 0.5)
    pdf.set_line_width(0.2)
    pdf.ln(2.5)
    doc.paragraph(_text(note["program"]), "B", 11, line=5.5)
    doc.paragraph(_text(note["board"]), "", 11, line=5.5)
    doc.paragraph(_subtitle(note), "", 9, color=85)

    doc.heading("Parties")
    doc.key_values(_parties(note))
    doc.heading("Flow")
    doc.key_values(_flow(note))
    doc.heading("Lots the credits came from", 3)
    lots = _lots(note)
    if lots:
        doc.table(["project", "credits [gpd]"], lots, [doc.width - 45, 45], numeric={1})
    else:
        doc.paragraph("none recorded")

    doc.heading("Evidence")
    evidence = _evidence(note)
    if not evidence:
        doc.paragraph("none recorded")
    widths = [38, doc.width - 38 - 40, 40]
    if evidence:
        doc.row([(h, w, "B", False, "L") for h, w in zip(["kind", "reference", "as of"], widths)], fill=True)
    for kind, ref, as_of, sha in evidence:
        doc.row([(kind, widths[0], "", False, "L"), (ref, widths[1], "", False, "L"), (as_of, widths[2], "", False, "L")])
        doc.row([("SHA-256", widths[0], "", False, "L"),
                 (sha, doc.width - widths[0], "", sha != NOT_RECORDED, "L")])
    pdf.ln(1.5)

    doc.heading("Dates")
    doc.key_values(_dates(note))
    doc.heading("Extensions of the due date", 3)
    extensions = _extensions(note)
    if extensions:
        doc.table(["extended until", "document", "granted on"], extensions, [38, doc.width - 76, 38])
    else:
        doc.paragraph("none")

    doc.heading("Terms")
    for heading, text, citation in _terms(note):
        doc.heading(heading, 3)
        if text:
            doc.paragraph(text)
        if citation:
            doc.paragraph(citation, "I", 8.5, color=85)
        pdf.ln(1)

    doc.heading("Sign-off")
    signoff = _signoff(note)
    doc.key_values([(k, v) for k, v, _ in signoff], mono={i for i, (_, _, m) in enumerate(signoff) if m})
    doc.footers(_footer(note))
    return bytes(pdf.output())


# --- files -----------------------------------------------------------------------------------------------------

def write_note(note: dict, out: Path) -> Path:
    """Write the note to ``out`` atomically: HTML for ``.html``, PDF for ``.pdf``.

    Raises
    ------
    InputError
        ``out`` has another suffix (or none); the note is not a note (:func:`note_html`).
    """
    out = Path(out)
    suffix = out.suffix.lower()
    if suffix not in SUFFIXES:
        raise InputError(f"out {str(out)!r}: suffix {out.suffix or '(none)'!r} is not a note format; "
                         f"give a file ending in {' or '.join(SUFFIXES)}")
    if suffix == ".pdf":
        return atomic_write_bytes(out, note_pdf(note))
    return atomic_write_text(out, note_html(note))
