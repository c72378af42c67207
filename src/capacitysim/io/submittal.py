"""Submittal identification: who submits what, for which site and plant (on every result and report).

A reviewer files a capacity demonstration, a detention design or a treatment-capacity check under a
project or application number, an applicant, the engineer of record who seals it (name and licence),
the site (address or NYC borough-block-lot) and the plant (name and SPDES permit). Every workflow
result carries these fields (``submittal`` in its JSON) and every report prints them at the top.

They come from a ``[submittal]`` table of an input file (a site file, or a file of its own given with
``--submittal``) and from CLI options (``--project-number`` ...), the options winning.

A site file's ``[submittal]`` may also give ``approved_on``, the date DEP approved the detention system
(:data:`APPROVAL_FIELD`, read by :func:`approval_date`): the triennial certification of 15 RCNY
§ 31-04(a)(8) falls due from it. It is a fact of the detention approval, not an identification field:
it is not a field of :class:`Submittal`, and ``--submittal FILE`` (read by every command) does not take it.

References
----------
NY Education Law § 7209 (an engineer's seal and licence number on plans and reports); NYC Department
of Finance, BBL (borough 1-5, block up to 5 digits, lot up to 4 digits); 6 NYCRR Part 750 (SPDES
permit numbers, ``NY`` followed by seven digits).
"""

from __future__ import annotations

import datetime as dt
import os
import re
from dataclasses import asdict, dataclass, fields

from capacitysim.errors import DataFileError, InputError
from capacitysim.io.files import check_keys, quoted, read_toml

#: The fields, with what each means (the report's labels).
SUBMITTAL_FIELDS = {
    "project_number": "project / application number",
    "applicant": "applicant",
    "engineer": "engineer of record",
    "engineer_license": "engineer's licence number",
    "site_address": "site address",
    "bbl": "borough-block-lot (BBL)",
    "plant": "treatment plant",
    "spdes_permit": "SPDES permit number",
}
#: Longest text of a field [characters].
MAX_FIELD_CHARS = 200
#: A BBL: borough 1-5, block, lot, written 10 digits or with separators (1-00123-0045, 1/123/45).
_BBL = re.compile(r"^([1-5])[-/ ]?(\d{1,5})[-/ ]?(\d{1,4})$")
#: A SPDES permit number: NY and seven digits (NY0024414), or a general permit (GP-0-15-002).
_SPDES = re.compile(r"^(NY\d{7}|GP-\d-\d{2}-\d{3})$")
#: The key of a site file's [submittal] table giving the date DEP approved the detention system.
APPROVAL_FIELD = "approved_on"
#: An approval date as text: an ISO 8601 calendar date, YYYY-MM-DD.
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True)
class Submittal:
    """The identification of a submittal; every field optional (None when not given)."""

    project_number: str | None = None
    applicant: str | None = None
    engineer: str | None = None
    engineer_license: str | None = None
    site_address: str | None = None
    bbl: str | None = None
    plant: str | None = None
    spdes_permit: str | None = None

    def __post_init__(self):
        for f in fields(self):
            v = getattr(self, f.name)
            if v is None:
                continue
            if not isinstance(v, str) or not v.strip() or len(v) > MAX_FIELD_CHARS or any(c in v for c in "\r\n\x00"):
                raise InputError(f"submittal {f.name} must be one line of text (1 to {MAX_FIELD_CHARS} characters); "
                                 f"got {quoted(v)}")
            object.__setattr__(self, f.name, v.strip())
        if self.bbl is not None:
            m = _BBL.match(self.bbl)
            if not m:
                raise InputError(f"submittal bbl {quoted(self.bbl)} is not a borough-block-lot; allowed: borough 1-5, "
                                 "block up to 5 digits, lot up to 4 digits (1000120045 or 1-00012-0045)")
            object.__setattr__(self, "bbl", f"{m.group(1)}-{int(m.group(2)):05d}-{int(m.group(3)):04d}")
        if self.spdes_permit is not None:
            permit = self.spdes_permit.upper().replace(" ", "")
            if not _SPDES.match(permit):
                raise InputError(f"submittal spdes_permit {quoted(self.spdes_permit)} is not a SPDES permit number; "
                                 "allowed: NY and seven digits (NY0024414) or a general permit (GP-0-15-002)")
            object.__setattr__(self, "spdes_permit", permit)
        if self.engineer_license is not None and self.engineer is None:
            raise InputError("submittal engineer_license is given without the engineer's name (engineer)")

    def to_dict(self) -> dict:
        """The JSON record: every field, None when not given."""
        return asdict(self)

    def rows(self) -> list[tuple[str, str]]:
        """(label, value) of the fields given, for a report's heading."""
        return [(SUBMITTAL_FIELDS[k], v) for k, v in asdict(self).items() if v is not None]

    def merged(self, **overrides) -> "Submittal":
        """This submittal with the non-None ``overrides`` (CLI options) replacing its fields."""
        data = asdict(self)
        data.update({k: v for k, v in overrides.items() if v is not None})
        return Submittal(**data)


def approval_date(value, field: str = APPROVAL_FIELD, *, today: dt.date | None = None) -> dt.date | None:
    """The date DEP approved a detention system, checked: a ``datetime.date`` (None when not given).

    The triennial inspection and certification of 15 RCNY § 31-04(a)(8) falls due "three years after the
    date of approval ... and every three years thereafter"
    (:func:`capacitysim.rules.nyc_stormwater.triennial_certifications`).

    Parameters
    ----------
    value : str, datetime.date or None
        ``YYYY-MM-DD`` text (the CLI's ``--approved-on``, a quoted TOML string) or a TOML date
        (``approved_on = 2024-03-15``). A date with a time of day is refused.
    field : str
        The name the error gives (``approved_on``, ``--approved-on``).
    today : datetime.date, optional
        The date to compare with [date] (default: today's date on this machine).

    Returns
    -------
    datetime.date or None

    Raises
    ------
    InputError
        Not a date, or a date after ``today``: an approval date records an approval DEP has given, and
        a design before approval gives none (its certifications are then due "3 years after the approval
        date", without dates). A future date is refused rather than read as an expected approval, so
        that due dates are never printed from an approval that has not happened.
    """
    if value is None:
        return None
    allowed = "allowed: a date YYYY-MM-DD (e.g. 2024-03-15) on or before today"
    if isinstance(value, dt.datetime):
        raise InputError(f"{field} must be a date without a time of day; got {value.isoformat()}; {allowed}")
    if isinstance(value, dt.date):
        day = value
    elif isinstance(value, str) and _ISO_DATE.match(value.strip()):
        try:
            day = dt.date.fromisoformat(value.strip())
        except ValueError:
            raise InputError(f"{field} {quoted(value)} is not a date of the calendar; {allowed}") from None
    else:
        raise InputError(f"{field} must be a date; got {quoted(value)}; {allowed}")
    today = dt.date.today() if today is None else today
    if day > today:
        raise InputError(f"{field} {day.isoformat()} is after today ({today.isoformat()}): an approval date records an "
                         f"approval DEP has given (leave it out for a design before approval); {allowed}")
    return day


def submittal_from_table(table, where: str, *, extra: tuple[str, ...] = ()) -> Submittal:
    """A :class:`Submittal` from a ``[submittal]`` table of an input file (keys of :data:`SUBMITTAL_FIELDS`).

    ``extra`` names further keys the file may give that are not identification fields (a site file's
    :data:`APPROVAL_FIELD`): they are allowed here and read by their own function (:func:`approval_date`).
    """
    if table is None:
        return Submittal()
    if not isinstance(table, dict):
        raise DataFileError(f"{where}: [submittal] must be a table; got {quoted(table)}")
    check_keys(table, f"{where} [submittal]", set(), set(SUBMITTAL_FIELDS) | set(extra))
    try:
        return Submittal(**{k: v for k, v in table.items() if k not in extra})
    except InputError as exc:
        raise DataFileError(f"{where}: {exc}") from None


def load_submittal(path: str | os.PathLike) -> Submittal:
    """The ``[submittal]`` table of a TOML file (``--submittal FILE``)."""
    data = read_toml(path)
    check_keys(data, str(path), set(), {"submittal"})
    return submittal_from_table(data.get("submittal", {}), str(path))
