"""What callers give the credit bank, checked before anything is locked: names, dates, amounts, texts.

:func:`person_name` (the person acting: a given and family name, never a login), :func:`default_actor`
(``$CAPACITYSIM_ACTOR``), :func:`parse_date` (ISO dates), whole gallons per day (:func:`book_down` for a
certified figure, :func:`book_up` for a requirement, bounded by :data:`MAX_GPD`), names and references
(NFC, no control or invisible characters, at most :data:`MAX_TEXT` characters), the kind of an
application, a project's property and a quantification the service read. Each refusal is an
:class:`~capacitysim.errors.InputError` naming the field and what is allowed.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import re
import unicodedata

from capacitysim.bank import refs as _refs
from capacitysim.errors import InputError


#: Digits kept before rounding an amount to whole gpd (absorbs float noise such as 3168.0000000000005).
_ROUND_DIGITS = 6
#: Largest amount one operation may carry [gpd]: 1,000 MGD, about 30 times the Binghamton-Johnson City
#: plant's design flow (35 MGD) and above the largest US plants. It keeps every sum an exact SQLite
#: INTEGER (a sum past 2**63 would silently become REAL) and catches mistyped figures (1e30).
MAX_GPD = 1e9
#: Longest name, id or reference accepted [characters].
MAX_TEXT = 500
#: Unicode categories refused in names and ids: control, format (zero-width...), line/paragraph separators.
_BAD_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
#: Kinds of a connection application (definitions: NEW OR MODIFIED SEWER CONNECTION, SEWER EXTENSION).
APPLICATION_TYPES = ("connection", "extension")
#: Length of a person's name [characters].
MIN_NAME, MAX_NAME = 2, 100
#: Punctuation a person's name may hold besides letters: space, hyphen, apostrophes, period.
_NAME_PUNCTUATION = frozenset(" -'\u2019.")
#: Words that name a role, an account or a program, not a person: a name made only of them
#: ("root", "Bank Administrator", "System User") is refused.
ROLE_WORDS = frozenset({
    "admin", "administrator", "administrators", "anonymous", "bank", "bench", "benchmark", "board", "bot", "ci",
    "clerk", "daemon", "default", "dept", "department", "guest", "nobody", "office", "operator", "root", "server",
    "service", "setup", "staff", "sys", "sysadmin", "system", "test", "tester", "unknown", "user", "users", "worker",
})
#: Where an I/I remediation project is (records section, parts A and B).
PROPERTIES = ("public", "private")


def person_name(name: str, value) -> str:
    """A person's name for the journal (``actor``) or the administrator register.

    Rules (issue 14, the journal names a person, never a login): NFC-normalised, stripped, runs of
    spaces made one; :data:`MIN_NAME` to :data:`MAX_NAME` characters; only letters (any script, with
    their combining marks), spaces, hyphens, apostrophes (``'`` and ``’``) and periods; starts with a
    letter and every part holds a letter; at least two parts (given and family name: a single token
    such as ``root`` or ``jsmith`` is what a login name looks like); not made only of role or
    account words (:data:`ROLE_WORDS`: "Bank Administrator", "System User").

    Raises
    ------
    InputError
        Naming the field, the value and what is allowed.
    """
    allowed = ("allowed: a person's given and family name, e.g. \"Jane Q. Smith\" (letters, spaces, hyphens, "
               f"apostrophes, periods; {MIN_NAME}-{MAX_NAME} characters)")
    v = "" if value is None else re.sub(" +", " ", unicodedata.normalize("NFC", str(value)).strip())
    if not v:
        raise InputError(f"{name} must name the person acting; {allowed}")
    shown = repr(v if len(v) <= 60 else v[:57] + "...")
    bad = [ch for ch in v if ch not in _NAME_PUNCTUATION and unicodedata.category(ch)[0] not in "LM"]
    if bad:
        chars = ", ".join(f"U+{ord(ch):04X}" + (f" {ch!r}" if ch.isprintable() else "") for ch in dict.fromkeys(bad))
        raise InputError(f"{name} {shown} contains {chars}; {allowed}")
    if not MIN_NAME <= len(v) <= MAX_NAME:
        raise InputError(f"{name} {shown} is {len(v)} characters long; {allowed}")
    words = v.split(" ")
    if unicodedata.category(v[0])[0] != "L" or not all(any(unicodedata.category(ch)[0] == "L" for ch in w) for w in words):
        raise InputError(f"{name} {shown}: every part must hold a letter and the name must start with one; {allowed}")
    if len(words) < 2:
        raise InputError(f"{name} {shown} is a single word, as a login or account name is; {allowed}")
    if all(w.casefold().strip(".'\u2019-") in ROLE_WORDS for w in words):
        raise InputError(f"{name} {shown} names a role or an account, not a person; {allowed}")
    return v


def default_actor() -> str | None:
    """Who is acting when no ``actor`` is given: ``$CAPACITYSIM_ACTOR`` (validated by :func:`person_name`), else None.

    There is no fallback to the login name (issue 14): a command that writes without an actor is an
    :class:`InputError`.

    Raises
    ------
    InputError
        The variable is set but not a person's name (a newline would forge a journal line; a login
        such as ``root`` names no person).
    """
    env = os.environ.get("CAPACITYSIM_ACTOR")
    if not env:  # unset or empty: no actor (reading only)
        return None
    return person_name("actor ($CAPACITYSIM_ACTOR)", env)


def parse_date(name: str, value) -> _dt.date | None:
    """An ISO date (YYYY-MM-DD) or None; anything else is an InputError naming the field."""
    if value is None or value == "":
        return None
    if isinstance(value, _dt.date):
        return value
    try:
        return _dt.date.fromisoformat(str(value))
    except ValueError:
        raise InputError(f"{name} must be a date YYYY-MM-DD, got {value!r}") from None


def _positive_gpd(name: str, value) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number of gallons per day, got {value!r}") from None
    if not math.isfinite(v) or v <= 0 or v > MAX_GPD:
        raise InputError(f"{name} must be > 0 and <= {MAX_GPD:,.0f} gpd, got {value!r}")
    return v


def _nonnegative_gpd(name: str, value) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number of gallons per day, got {value!r}") from None
    if not math.isfinite(v) or v < 0 or v > MAX_GPD:
        raise InputError(f"{name} must be >= 0 and <= {MAX_GPD:,.0f} gpd, got {value!r}")
    return v


def _whole_gpd(name: str, value) -> int:
    v = _positive_gpd(name, value)
    if v != int(v):
        raise InputError(f"{name} must be whole gallons per day, got {value!r}")
    return int(v)


def book_down(gpd: float) -> int:
    """Whole gpd credited for a certified figure (rounded down)."""
    return int(math.floor(round(gpd, _ROUND_DIGITS)))


def book_up(gpd: float) -> int:
    """Whole gpd required for a requirement (rounded up)."""
    return int(math.ceil(round(gpd, _ROUND_DIGITS)))


def _text(name: str, value, required: bool = True) -> str | None:
    """A name, id or reference: NFC-normalised, stripped, no control/format characters, bounded.

    NFC makes a composed and a decomposed "Café" the same name; control and format characters (a
    newline, a zero-width space) would let two names look identical or break one-line records.
    """
    v = "" if value is None else unicodedata.normalize("NFC", str(value)).strip()
    if not v:
        if required:
            raise InputError(f"{name} must not be empty")
        return None
    bad = [ch for ch in v if unicodedata.category(ch) in _BAD_CATEGORIES]
    if bad:
        raise InputError(f"{name} {v!r} contains control or invisible character(s) "
                         f"{', '.join(f'U+{ord(ch):04X}' for ch in dict.fromkeys(bad))}; allowed: printable text")
    if len(v) > MAX_TEXT:
        raise InputError(f"{name} is {len(v)} characters long; allowed: at most {MAX_TEXT}")
    return v


def _app_type(value) -> str:
    v = "connection" if value is None else str(value).strip().lower()
    if v not in APPLICATION_TYPES:
        raise InputError(f"type must be one of {', '.join(APPLICATION_TYPES)} (definitions: new or modified sewer "
                         f"connection, sewer extension), got {value!r}")
    return v


def _property(value) -> str | None:
    """``public`` or ``private`` (records section A and B: "the municipal users' public sewage collection
    systems and private property"), or None when not stated."""
    if value is None:
        return None
    v = str(value).strip().casefold()
    if v not in PROPERTIES:
        raise InputError(f"property {value!r}; allowed: {', '.join(PROPERTIES)} (records section, parts A and B)")
    return v


def quantification_facts_checked(facts: dict, **deposit) -> dict:
    """A quantification the caller (the service) read and fingerprinted: ``{"ref", "sha256", "document"}``,
    checked here with :func:`capacitysim.bank.refs.quantification_facts` like a cited file."""
    ref, sha, doc = facts.get("ref"), facts.get("sha256"), facts.get("document")
    if not isinstance(ref, str) or not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{64}", sha):
        raise InputError("quantification: a dict needs ref, sha256 (64 hex digits) and document")
    return {"ref": ref, "sha256": sha} | _refs.quantification_facts("quantification", ref, doc, **deposit)
