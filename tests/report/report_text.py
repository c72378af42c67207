"""Read a rendered HTML report back as a reader sees it: visible text, tables (headers and cells)."""

from __future__ import annotations

import html as _html
import re
from html.parser import HTMLParser


class _Tables(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tables: list[dict] = []
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self._is_head = False
        self.text: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("style", "script"):
            self._skip += 1
        if tag == "table":
            self.tables.append({"header": [], "rows": []})
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []
            self._is_head = tag == "th"

    def handle_endtag(self, tag):
        if tag in ("style", "script"):
            self._skip -= 1
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None and self.tables:
            t = self.tables[-1]
            if self._is_head and not t["header"]:
                t["header"] = self._row
            else:
                t["rows"].append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._skip:
            return
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def read_report(html: str) -> tuple[str, list[dict]]:
    """(visible text, tables [{"header": [...], "rows": [[...], ...]}]) of a report; attributes and images are not text."""
    p = _Tables()
    p.feed(html)
    return _html.unescape(" ".join(p.text)), p.tables


#: A field name with its unit suffix, as the result documents spell it (``balance_gpd``).
RAW_KEY = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)*_(?:gpd|gpm|mgd|cfs|cf|ft|in|hr|pct|ac|sqft|mi2)\b")
MICROSECONDS = re.compile(r"\d{2}:\d{2}:\d{2}\.\d+")
BOOL_WORD = re.compile(r"\b(?:True|False)\b")
UNIT_IN_HEADER = re.compile(r"\[([^\[\]]+)\]\s*$")
NUMBER = re.compile(r"^-?[\d,]+(?:\.(\d+))?$")
