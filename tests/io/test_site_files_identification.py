"""Site files and rule sets: the keys of issue 14 items 11 and 14 (alteration kind, phases and master
plans, [submittal]) and the SHA-256 of every file read."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from capacitysim.errors import DataFileError
from capacitysim.io.site_files import (
    RULES_DIR,
    load_rule_set,
    load_site,
    read_toml_sha256,
)
from capacitysim.io.submittal import Submittal

ROOT = Path(__file__).resolve().parents[2]
SITES = ROOT / "models" / "sites"
BASE = (SITES / "new-building.toml").read_text()
ALT = (SITES / "alteration.toml").read_text()


@pytest.fixture(scope="module")
def rules():
    return load_rule_set("nyc-2012")


def _write(tmp_path, text, name="site.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_sha256_is_of_the_bytes_read(tmp_path, rules):
    p = _write(tmp_path, BASE)
    assert load_site(p, rules).sha256 == hashlib.sha256(p.read_bytes()).hexdigest()
    data, digest = read_toml_sha256(p)
    assert data["site"]["kind"] == "new" and digest == hashlib.sha256(p.read_bytes()).hexdigest()


def test_rule_set_files_by_name_and_sha256(tmp_path):
    mine = _write(tmp_path, 'extends = "nyc-2012"\n[idf_10yr]\na = 150.0\n', "mine.toml")
    rs = load_rule_set(mine)
    bundled = RULES_DIR / "nyc-2012.toml"
    assert rs.files() == [{"file": "mine.toml", "sha256": hashlib.sha256(mine.read_bytes()).hexdigest()},
                          {"file": "nyc-2012.toml", "sha256": hashlib.sha256(bundled.read_bytes()).hexdigest()}]
    # an override without a source is named by the file's name, never its folder
    assert rs.data["idf_10yr"]["source"] == "user override in mine.toml"
    assert str(tmp_path) not in str(rs.entries())


@pytest.mark.parametrize("raw, needle", [(b"\xff\xfe", "not UTF-8"), (b"[site\n", "not valid TOML")])
def test_unreadable_files_keep_their_one_line_errors(tmp_path, rules, raw, needle):
    p = tmp_path / "bad.toml"
    p.write_bytes(raw)
    with pytest.raises(DataFileError, match=needle):
        load_site(p, rules)
    with pytest.raises(DataFileError, match="file not found"):
        load_site(tmp_path / "none.toml", rules)


def test_new_keys_are_read(tmp_path, rules):
    alt = load_site(SITES / "alteration.toml", rules)
    assert alt.alteration_type == "horizontal_enlargement"
    assert not alt.phased and not alt.subdivision and alt.master_plan is None
    p = _write(tmp_path, BASE.replace('receiving_sewer = "combined"\n',
                                      'receiving_sewer = "combined"\nphased = true\nsubdivision = true\nmaster_plan = " MP-9 "\n'))
    site = load_site(p, rules)
    assert site.phased and site.subdivision and site.master_plan == "MP-9"
    # any text is read: a kind § 31-03(a) does not cover is the rule's refusal (exit 3), not a file error
    p = _write(tmp_path, ALT.replace('"horizontal_enlargement"', '"interior_renovation"'))
    assert load_site(p, rules).alteration_type == "interior_renovation"


def test_submittal_from_the_site_file(tmp_path, rules):
    site = load_site(SITES / "new-building.toml", rules)
    assert site.submittal == Submittal(project_number="EXAMPLE-SCP-0001", applicant="Example Owner LLC",
                                       site_address="120 Example Street, Brooklyn, NY")
    # [site] address is the submittal's site address when [submittal] gives none
    p = _write(tmp_path, ALT.replace('kind = "alteration"', 'kind = "alteration"\naddress = "1 Main St, Queens"'))
    assert load_site(p, rules).submittal == Submittal(site_address="1 Main St, Queens")
    assert load_site(SITES / "alteration.toml", rules).submittal == Submittal()


@pytest.mark.parametrize(
    "text, needle",
    [
        (BASE.replace('applicant = "Example Owner LLC"', 'applicant = "Example Owner LLC"\nbbl = "7-1-1"'), "bbl '7-1-1' is not a borough-block-lot"),
        (BASE.replace('applicant = "Example Owner LLC"', 'engineer_license = "1234"'), "engineer_license is given without the engineer"),
        (BASE.replace('applicant = "Example Owner LLC"', "applicant = 5"), "applicant must be one line of text"),
        ("submittal = 3\n" + ALT, "[submittal] must be a table"),
        (ALT.replace('kind = "alteration"', 'kind = "alteration"\naddress = "a\\nb"'), "address"),
    ],
)
def test_bad_submittal_is_a_data_file_error(tmp_path, rules, text, needle):
    with pytest.raises(DataFileError) as exc:
        load_site(_write(tmp_path, text), rules)
    assert needle in str(exc.value) and len(str(exc.value).splitlines()) == 1
