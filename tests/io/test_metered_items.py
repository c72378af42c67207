"""A case-by-case item measured by flow metering (issue 29, item 5): a project item cites a metered-credit document
(``capacitysim credits meter --json``); its credit claimed becomes the item's gpd, with the document's SHA-256, the
interval and the PE recorded; anything else about the citation is refused naming the item and the file."""

from __future__ import annotations

import hashlib
import json

import pytest

from capacitysim.errors import DataFileError
from capacitysim.io.project_files import read_project
from capacitysim.rules.ii_offset import quantify_project

PROJECT = """[project]
id = "ELM-METERED"
name = "Elm Street sewer lining"
engineer = "A. Example, PE"
pe_license = "NY 012345"

[[item]]
type = "pipe_segment"
location = "Elm Street, MH 12 to MH 19"
{item}
"""


def _doc(**over) -> dict:
    doc = {"kind": "metered-credit", "area_ac": 120.0,
           "credit": {"point_gpd": 61_000.0, "lower_gpd": 52_500.0, "upper_gpd": 70_100.0, "claimed_gpd": 52_500.0,
                      "claim": "lower", "level": 0.9, "basis": "peak"},
           "pe": {"name": "A. Example, PE", "license": "012345"}, "periods": {}, "warnings": []}
    return doc | over


def _project(tmp_path, item: str, doc: dict | None = None):
    if doc is not None:
        (tmp_path / "credit.json").write_text(json.dumps(doc))
    p = tmp_path / "project.toml"
    p.write_text(PROJECT.format(item=item))
    return p


def test_a_metered_item_takes_the_credit_claimed_and_records_its_document(tmp_path):
    p = _project(tmp_path, 'analysis = "credit.json"', _doc())
    proj = read_project(p)
    out = quantify_project(proj["project"], proj["items"])
    (item,) = out["items"]
    assert item["gpd"] == 52_500.0 and out["total_gpd"] == 52_500.0
    assert item["analysis"]["sha256"] == hashlib.sha256((tmp_path / "credit.json").read_bytes()).hexdigest()
    assert item["analysis"]["pe"] == {"name": "A. Example, PE", "license": "012345"}
    assert "metered" in item["basis"] and "lower bound of the 90% interval 52,500 to 70,100 gpd" in item["basis"]


@pytest.mark.parametrize("item, doc, message", [
    ('analysis = "credit.json"\ngpd = 9000', _doc(), "give gpd, gpm or analysis, one of them"),
    ('analysis = "credit.json"', _doc(kind="capacity-demonstration"), "is not a metered-credit document"),
    ('analysis = "credit.json"', _doc(credit=None, warnings=["post period: 3 qualifying events"]), "gives no credit"),
    ('analysis = "credit.json"', _doc(pe={"name": None, "license": None}), "names no PE"),
    ('analysis = "missing.json"', None, "cannot be read"),
])
def test_a_bad_citation_is_refused_naming_the_item(tmp_path, item, doc, message):
    with pytest.raises(DataFileError) as err:
        read_project(_project(tmp_path, item, doc))
    assert "item[0]" in str(err.value) and message in str(err.value)


@pytest.mark.parametrize("ref", ["/etc/passwd", "../credit.json", "sub/credit.json", "C:credit.json", ".."])
def test_an_analysis_is_only_a_file_beside_the_project(tmp_path, ref):
    with pytest.raises(DataFileError) as err:
        read_project(_project(tmp_path, f'analysis = "{ref}"', _doc()))
    assert "bare name of a file beside the project file" in str(err.value)
