"""The flow credit note as a document (Binghamton-Johnson City I/I Offset Program, definitions, FLOW CREDIT
NOTE: "An agreement between the Board and the applicant that flow credits shall be made available to the
applicant, developer, or a municipal user under specific terms"): HTML and PDF with the same content, every
user text escaped, the same bytes for the same note (its SHA-256 is reproducible)."""

from __future__ import annotations

import copy
import hashlib
import html
import io
import re

import pytest

from capacitysim.errors import InputError
from capacitysim.report import note as note_mod
from capacitysim.report.note import note_html, note_pdf, printable, write_note

pypdf = pytest.importorskip("pypdf")

SHA_CAPACITY = hashlib.sha256(b"capacity demonstration").hexdigest()
SHA_SPDES = hashlib.sha256(b"spdes check").hexdigest()
JOURNAL = hashlib.sha256(b"journal row").hexdigest()
HEAD = hashlib.sha256(b"bank head").hexdigest()


@pytest.fixture
def note() -> dict:
    return {
        "title": "Flow credit note",
        "program": "Binghamton-Johnson City I/I Offset Program",
        "board": "Binghamton-Johnson City Joint Sewage Board",
        "application": "APP-2025-014",
        "type": "connection",
        "applicant": "Riverside Lofts LLC",
        "holder": "Village of Johnson City",
        "principal_municipal_user": "City of Binghamton",
        "affected_owner": None,
        "basin": "PS1_WW",
        "node": "MH0017",
        "peak_flow_gpd": 12000.0,
        "average_gpd": 2727.3,
        "offset_ratio": 1.0,
        "amount_gpd": 12000,
        "lots": [{"project": "Main Street lining 2023", "gpd": 9000}, {"project": None, "gpd": 3000}],
        "evidence": [
            {"kind": "capacity", "ref": "capacity-APP-2025-014.json", "sha256": SHA_CAPACITY,
             "as_of": "2025-02-27T10:15:00.123456+00:00"},
            {"kind": "spdes", "ref": "spdes-2025-02.json", "sha256": SHA_SPDES, "as_of": "2025-02-28"},
            {"kind": "site plan", "ref": "sheet C-101", "sha256": None, "as_of": None},
        ],
        "issued_on": "2025-03-01",
        "co_due_on": "2026-03-01",
        "extensions": [{"until": "2026-09-01", "document": "Board resolution 2026-07", "granted_on": "2026-02-15"}],
        "signed_off_by": "J. Administrator",
        "recorded_by": "clerk",
        "signoff_txn": "txn-000042",
        "journal_hash": JOURNAL,
        "bank": {"path": "/srv/banks/bjc-bank.sqlite", "head": HEAD},
        "terms": [
            {"heading": "Terms of the note", "text": "Flow credits of 12,000 gpd are made available to the applicant.",
             "citation": "Definitions, FLOW CREDIT NOTE"},
            {"heading": "Certificate of occupancy due", "text": "Due within one year of the note \u2014 by 2026-03-01.",
             "citation": "Definitions, DEFAULT"},
            {"heading": "Default", "text": "A note past due without an extension is in default.",
             "citation": "Definitions, DEFAULT"},
            {"heading": "Section G: transfers", "text": "While \u201con deposit\u201d flow credits have no monetary value.",
             "citation": "Flow credit bank \u00a7 G"},
            {"heading": "Section I: no vested rights", "text": "Credits on deposit create no \"vested rights\".",
             "citation": "Flow credit bank \u00a7 I"},
        ],
        "capacitysim_version": "0.1.0",
    }


def pdf_text(data: bytes) -> str:
    reader = pypdf.PdfReader(io.BytesIO(data))
    return "\n".join(page.extract_text() for page in reader.pages)


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


# --- HTML --------------------------------------------------------------------------------------------------------

def test_html_has_every_party_the_amount_the_hashes_and_the_terms(note):
    page = note_html(note)
    assert page.startswith("<!DOCTYPE html>")
    for party in (note["board"], note["applicant"], note["holder"], note["principal_municipal_user"]):
        assert party in page
    assert "affected owner</th><td>not recorded" in page
    assert "12,000" in page and "2,727" in page and "1.000" in page
    assert "unknown origin" in page and "Main Street lining 2023" in page
    for sha in (SHA_CAPACITY, SHA_SPDES, JOURNAL, HEAD):
        assert f"<code>{sha}</code>" in page
    for term in note["terms"]:
        assert term["heading"] in page
        assert html.escape(term["citation"]) in page
    assert "2026-03-01" in page and "2026-09-01" in page and "Board resolution 2026-07" in page
    assert "2025-02-27 10:15 UTC" in page            # dates as the reports print them, no microseconds
    assert "bjc-bank.sqlite" in page and "/srv/banks" not in page   # the bank by name, not the machine's path
    assert "capacitysim 0.1.0" in page
    assert "<script" not in page and "http://" not in page and "https://" not in page and "src=" not in page


def test_html_is_the_same_for_the_same_note_no_time_of_rendering(note):
    a = note_html(note)
    b = note_html(copy.deepcopy(note))
    assert a == b
    assert "Generated" not in a


def test_html_average_not_recorded(note):
    note["average_gpd"] = None
    assert "average flow [gpd]</th><td>not recorded" in note_html(note)


HOSTILE = "<script>alert('x')</script> \"quoted\" & 'single' Z\u00fcrich \u2014 \u2265 \u5317\u4eac"


def hostile(note: dict) -> dict:
    n = copy.deepcopy(note)
    n["applicant"] = HOSTILE
    n["holder"] = "N" * 5000
    n["affected_owner"] = "Z\u00fcrich \u2014 \u2265 \u5317\u4eac \u201cquoted\u201d\tend\x00\u200b"
    n["evidence"][0]["ref"] = "R" * 600
    n["terms"][0]["text"] = "<b>bold</b>\nsecond line " + "w" * 3000
    n["application"] = "<img src=x onerror=alert(1)>"
    return n


def test_html_escapes_hostile_text(note):
    page = note_html(hostile(note))
    assert "<script>" not in page and "<img" not in page and "<b>" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &quot;quoted&quot; &amp; &#x27;single&#x27;" in page
    assert "Z\u00fcrich \u2014 \u2265 \u5317\u4eac" in page      # UTF-8 page: every character as given
    assert "N" * 5000 in page


# --- PDF ---------------------------------------------------------------------------------------------------------

def test_pdf_is_deterministic_and_carries_the_content(note):
    a = note_pdf(note)
    b = note_pdf(copy.deepcopy(note))
    assert a.startswith(b"%PDF")
    assert a == b
    assert b"/CreationDate (D:20250301000000Z" in a
    text = _flat(pdf_text(a))
    assert "APP-2025-014" in text
    assert "12,000" in text
    assert "Section G: transfers" in text and "Section I: no vested rights" in text
    for sha in (SHA_CAPACITY, SHA_SPDES, JOURNAL, HEAD):
        assert sha in text
    for party in (note["board"], note["applicant"], note["holder"], note["principal_municipal_user"]):
        assert party in text
    assert "capacitysim 0.1.0" in text and "page 1 of" in text


def test_pdf_of_another_day_differs(note):
    other = copy.deepcopy(note)
    other["issued_on"] = "2025-03-02"
    assert note_pdf(other) != note_pdf(note)


def test_pdf_survives_hostile_text(note):
    data = note_pdf(hostile(note))
    assert data.startswith(b"%PDF") and data == note_pdf(hostile(note))
    text = _flat(pdf_text(data))
    assert "Z\u00fcrich \u2014 \u2265 ??" in text     # the embedded font has no CJK glyphs: ?, never a crash
    assert "<script>alert('x')</script>" in text     # PDF text is not markup: printed as given


def test_pdf_with_the_core_fonts_only(note, monkeypatch):
    """Without the DejaVu files, Latin-1 core fonts; dashes, quotes and signs outside Latin-1 replaced."""
    monkeypatch.setattr(note_mod, "font_folder", lambda: None)
    data = note_pdf(hostile(note))
    assert data.startswith(b"%PDF") and data == note_pdf(hostile(note))
    text = _flat(pdf_text(data))
    assert "Z\u00fcrich - >= ??" in text
    assert "Flow credit bank \u00a7 G" in text


def test_printable():
    latin1 = note_mod._LATIN1
    assert printable("a \u2014 b \u2013 c \u2019 \u201cq\u201d \u2265 \u2026 \u00a7", latin1) == 'a - b - c \' "q" >= ... \u00a7'
    assert printable("\u0151\ufb01\u5317", latin1) == "ofi?"
    assert printable("a\tb\x00c\u200bd\r\ne", latin1) == "a b cd\ne"


def test_bad_issued_on(note):
    note["issued_on"] = "March 1st"
    with pytest.raises(InputError, match="issued_on"):
        note_pdf(note)


def test_missing_field(note):
    del note["terms"]
    with pytest.raises(InputError, match="terms"):
        note_html(note)


# --- files -------------------------------------------------------------------------------------------------------

def test_write_note_by_suffix(note, tmp_path):
    html_path = write_note(note, tmp_path / "note.html")
    assert html_path.read_text(encoding="utf-8") == note_html(note)
    pdf_path = write_note(note, tmp_path / "sub" / "note.pdf")
    assert pdf_path.read_bytes() == note_pdf(note)
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["note.html", "note.pdf", "sub"]   # no temporary left


def test_write_note_refuses_another_suffix(note, tmp_path):
    with pytest.raises(InputError) as err:
        write_note(note, tmp_path / "note.docx")
    message = str(err.value)
    assert "out" in message and "note.docx" in message and ".html" in message and ".pdf" in message
    assert not (tmp_path / "note.docx").exists()
