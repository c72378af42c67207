"""Submittal identification: validated fields, normalised BBL and SPDES permit numbers, option precedence."""

import pytest

from capacitysim.errors import DataFileError, InputError
from capacitysim.io.submittal import Submittal, load_submittal, submittal_from_table


def test_bbl_and_permit_are_normalised():
    s = Submittal(bbl="1000120045", spdes_permit="ny 0024414", engineer="A. Engineer", engineer_license="PE 012345")
    assert s.bbl == "1-00012-0045" and s.spdes_permit == "NY0024414"
    assert Submittal(bbl="3/123/7").bbl == "3-00123-0007"
    assert ("engineer of record", "A. Engineer") in s.rows()


@pytest.mark.parametrize("kw, word", [
    ({"bbl": "6-00012-0045"}, "borough-block-lot"),     # borough 6 does not exist
    ({"bbl": "1-123456-1"}, "borough-block-lot"),       # a block has at most 5 digits
    ({"spdes_permit": "NY12345"}, "SPDES permit"),
    ({"engineer_license": "012345"}, "without the engineer"),
    ({"applicant": "two\nlines"}, "one line"),
    ({"applicant": "  "}, "one line"),
])
def test_bad_fields_name_field_and_value(kw, word):
    with pytest.raises(InputError, match=word):
        Submittal(**kw)


def test_options_override_the_file(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text('[submittal]\nproject_number = "A-1"\napplicant = "Dev LLC"\n', encoding="utf-8")
    s = load_submittal(p).merged(applicant="Other LLC", engineer=None)
    assert s.project_number == "A-1" and s.applicant == "Other LLC" and s.engineer is None
    with pytest.raises(DataFileError, match="unknown key"):
        submittal_from_table({"project": "x"}, "site.toml")
