"""What callers give the bank (capacitysim.bank.ledger_values): names, dates, amounts and texts, checked."""

from __future__ import annotations

import datetime as dt

import pytest

from capacitysim.bank.ledger_values import (
    MAX_GPD,
    MAX_TEXT,
    _positive_gpd,
    _text,
    _whole_gpd,
    book_down,
    book_up,
    default_actor,
    parse_date,
    person_name,
)
from capacitysim.errors import InputError


def test_a_person_name_is_a_given_and_family_name_never_a_login_or_a_role():
    assert person_name("actor", "  Jane   Q. Smith ") == "Jane Q. Smith"
    for bad, why in (("", "must name the person acting"), ("root", "is a single word"),
                     ("Bank Administrator", "names a role or an account"), ("Jane\nSmith", "contains U\\+000A"),
                     ("J" * 101 + " Smith", "characters long")):
        with pytest.raises(InputError, match=why):
            person_name("actor", bad)


def test_the_actor_comes_from_the_environment_and_is_checked(monkeypatch):
    monkeypatch.delenv("CAPACITYSIM_ACTOR", raising=False)
    assert default_actor() is None
    monkeypatch.setenv("CAPACITYSIM_ACTOR", "Ann Able")
    assert default_actor() == "Ann Able"
    monkeypatch.setenv("CAPACITYSIM_ACTOR", "root")
    with pytest.raises(InputError, match=r"\$CAPACITYSIM_ACTOR"):
        default_actor()


def test_certified_figures_book_down_and_requirements_up_without_float_noise():
    assert (book_down(3168.0000000000005), book_up(3168.0000000000005)) == (3168, 3168)
    assert (book_down(3168.9), book_up(3168.1)) == (3168, 3169)


def test_dates_amounts_and_texts_are_refused_naming_the_field():
    assert parse_date("on", "") is None and parse_date("on", "2024-02-29") == dt.date(2024, 2, 29)
    with pytest.raises(InputError, match="on must be a date YYYY-MM-DD"):
        parse_date("on", "2024-02-30")
    with pytest.raises(InputError, match="gpd must be > 0"):
        _positive_gpd("gpd", MAX_GPD * 2)
    with pytest.raises(InputError, match="whole gallons per day"):
        _whole_gpd("gpd", 10.5)
    with pytest.raises(InputError, match="U\\+200B"):
        _text("name", "Acme\u200bDevelopment")
    with pytest.raises(InputError, match=f"at most {MAX_TEXT}"):
        _text("name", "x" * (MAX_TEXT + 1))
    assert _text("name", "Cafe\u0301") == "Caf\u00e9"  # NFC: one name however it was typed
