"""report/format.py: one number of decimals per unit, yes/no, dates without microseconds, human labels."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from capacitysim.io.export.quantities import (
    UNIT_SUFFIXES,
    column_name,
    human_label,
    split_key,
)
from capacitysim.report.format import (
    DECIMALS,
    cell,
    clean_text,
    label,
    number,
    quantity,
    unit_of_header,
)
from capacitysim.report.html import HtmlReport
from tests.report.report_text import MICROSECONDS, NUMBER, read_report

finite = st.floats(min_value=-1e12, max_value=1e12, allow_nan=False, allow_infinity=False)


@given(finite, st.sampled_from(sorted(DECIMALS)))
def test_every_number_of_a_unit_has_that_units_decimals(x, unit):
    text = number(x, unit)
    m = NUMBER.match(text)
    assert m, text
    assert len(m.group(1) or "") == DECIMALS[unit], (x, unit, text)
    assert float(text.replace(",", "")) == pytest.approx(x, abs=0.5 * 10 ** -DECIMALS[unit] + 1e-9 * abs(x))


@given(st.sampled_from(sorted(UNIT_SUFFIXES)), st.from_regex(r"[a-z]{2,8}(_[a-z]{2,8}){0,2}", fullmatch=True),
       st.sampled_from(["", "_before", "_after", "_change"]))
def test_labels_and_columns_carry_the_unit_not_the_suffix(suffix, stem, qual):
    key = f"{stem}_{suffix}{qual}"
    _, unit, q = split_key(key)
    assert unit == suffix and (q or "") == qual.lstrip("_")
    lab = label(key)
    assert lab.endswith(f"[{UNIT_SUFFIXES[suffix][0]}]") and "_" not in lab
    assert column_name(key).endswith(f" [{UNIT_SUFFIXES[suffix][0]}]")
    assert unit_of_header(lab) is not None


@given(st.datetimes(min_value=dt.datetime(1990, 1, 1), max_value=dt.datetime(2100, 1, 1)), st.booleans())
def test_dates_lose_their_microseconds(when, aware):
    if aware:
        when = when.replace(tzinfo=dt.UTC)
    for text in (cell(when), clean_text(f"at {when.isoformat()} and {when} ok")):
        assert not MICROSECONDS.search(text), text
        assert not re.search(r"\d{4}-\d{2}-\d{2}T", text), text


def test_booleans_and_missing_values():
    assert cell(True) == "yes" and cell(False) == "no" and cell("True") == "yes" and cell(None) == "-"
    assert number(float("nan"), "cfs") == "-" and number(-0.00001, "cfs") == "0.0000"
    assert label("balance_gpd") == "balance [gpd]" and label("max_d_over_d_after") == "max d/D after"
    assert human_label("max_hgl_ft_before") == "max HGL before [ft]"
    assert quantity(4.88888, "peak_flow_cfs") == "4.8889 cfs" and quantity(12345.4, "volume_cf") == "12,345 ft3"


def test_html_tables_format_by_the_unit_of_their_header_or_row():
    rep = HtmlReport("t")
    rep.table(["element", "peak flow [cfs]", "volume [ft3]", "ok", "at"],
              [["L1", 4.88888, 12345.678, True, "2026-11-30T21:53:26.123456+00:00"]])
    rep.table(["quantity", "value"], [["release rate [cfs]", 0.29751], ["max depth [ft]", 2.97812]])
    rep.key_values([("rainfall simulated [in]", 2.1), ("flag", False)])
    text, tables = read_report(rep.render())
    assert tables[0]["rows"][0] == ["L1", "4.8889", "12,346", "yes", "2026-11-30 21:53:26 UTC"]
    assert [r[1] for r in tables[1]["rows"]] == ["0.2975", "2.978"]
    assert [r[1] for r in tables[2]["rows"]] == ["2.100", "no"]
    assert not re.search(r"\bTrue\b|\bFalse\b", text)
