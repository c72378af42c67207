"""Submittal identification: who submits what, for which site and plant (on every result and report).

A reviewer files a capacity demonstration, a detention design or a treatment-capacity check under a
project or application number, an applicant, the engineer of record who seals it (name and licence),
the site (address or NYC borough-block-lot) and the plant (name and SPDES permit). Every workflow
result carries these fields (``submittal`` in its JSON) and every report prints them at the top.

They come from a ``[submittal]`` table of an input file (a site file, or a file of its own given with
``--submittal``) and from CLI options (``--project-number`` ...), the options winning.

References
----------
NY Education Law § 7209 (an engineer's seal and licence number on plans and reports); NYC Department
of Finance, BBL (borough 1-5, block up to 5 digits, lot up to 4 digits); 6 NYCRR Part 750 (SPDES
permit numbers, ``NY`` followed by seven digits).
"""

from __future__ import annotations

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


def submittal_from_table(table, where: str) -> Submittal:
    """A :class:`Submittal` from a ``[submittal]`` table of an input file (keys of :data:`SUBMITTAL_FIELDS`)."""
    if table is None:
        return Submittal()
    if not isinstance(table, dict):
        raise DataFileError(f"{where}: [submittal] must be a table; got {quoted(table)}")
    check_keys(table, f"{where} [submittal]", set(), set(SUBMITTAL_FIELDS))
    try:
        return Submittal(**table)
    except InputError as exc:
        raise DataFileError(f"{where}: {exc}") from None


def load_submittal(path: str | os.PathLike) -> Submittal:
    """The ``[submittal]`` table of a TOML file (``--submittal FILE``)."""
    data = read_toml(path)
    check_keys(data, str(path), set(), {"submittal"})
    return submittal_from_table(data.get("submittal", {}), str(path))
