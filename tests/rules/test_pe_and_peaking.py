"""Issue 25, item 4 (first part) and item 2 (rest): the professional engineer on every quantification, and the
peaking method of a connection as a named program policy with its source.

The regulation (``../shared/regulations/binghamton-jc-ii-offset-program.txt``):

* quantification guidelines: "The quantification of infiltration and inflow shall be prepared by a professional
  engineer, licensed in the State of New York, and presented in an I/I remediation engineering report";
* Table 174-19.1 note 2: "Calculations must be prepared by a New York State licensed professional engineer";
* credit bank section F: credits "equal to the estimated peak sewage flow rate increase" - estimated, by a
  method the program does not name.

Hand computations are in the docstrings.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from capacitysim.errors import DataFileError, InputError
from capacitysim.io.project_files import read_project
from capacitysim.rules import ii_offset as r

ROOT = Path(__file__).resolve().parents[2]
PROJECTS = ROOT / "models" / "projects"
REG = "regulations/binghamton-jc-ii-offset-program.txt"
FLAG = "program interpretation — confirm with the bank administrator"

#: A project of one sump pump (5 gpm x 1,440 min/day = 7,200 gpd, Table 174-19.2 note 1), its [project]
#: table to be completed by each test.
HEAD = "[project]\nid = 'JC-T-1'\nname = 'One sump pump'\nbasin = 'Johnson City CSO 4'\n" \
       "municipal_user = 'Village of Johnson City'\nengineer = 'A. Example, PE'\n"
ITEM = "[[item]]\ntype = 'sump_pump'\ncount = 1\n"


def _project(tmp_path: Path, extra: str = "", head: str = HEAD) -> Path:
    p = tmp_path / "project.toml"
    p.write_text(head + extra + ITEM, encoding="utf-8")
    return p


# --- the professional engineer (issue 25, item 4) ------------------------------------------------------


def test_the_regulation_requires_a_new_york_licensed_pe(shared_dir):
    """The words the refusals quote are the regulation's."""
    text = " ".join((shared_dir / REG).read_text().split())
    assert ("The quantification of infiltration and inflow shall be prepared by a professional engineer, licensed "
            "in the State of New York, and presented in an I/I remediation engineering report") in text
    assert "Calculations must be prepared by a New York State licensed professional engineer" in text
    assert "shall be prepared by a professional engineer, licensed in the State of New York" in r.PE_REQUIREMENT
    assert "Calculations must be prepared by a New York State licensed professional engineer" in r.PE_REQUIREMENT


def test_a_project_without_pe_license_exits_2_naming_the_field(run_cli, tmp_path):
    """The quantification 'shall be prepared by a professional engineer, licensed in the State of New York':
    a project file that names an engineer but gives no license is refused (exit 2), one line naming the field
    (pe_license), the value (nothing) and what is allowed (six digits, e.g. "NY 012345")."""
    res = run_cli("credits", "quantify", str(_project(tmp_path)))
    assert res.exit_code == 2, res.output
    (line,) = res.stderr.strip().splitlines()
    assert "[project]: pe_license is required" in line and "got nothing" in line
    assert "licensed in the State of New York" in line and '"NY 012345"' in line and "six digits" in line
    assert res.stdout == ""


@pytest.mark.parametrize("engineer", ["''", "'   '", "1"])
def test_a_project_without_an_engineer_name_exits_2(run_cli, tmp_path, engineer):
    """The engineer is named: blank text (or a number) is refused, exit 2, naming the field."""
    head = HEAD.replace("engineer = 'A. Example, PE'", f"engineer = {engineer}")
    res = run_cli("credits", "quantify", str(_project(tmp_path, "pe_license = 'NY 012345'\n", head=head)))
    assert res.exit_code == 2 and "engineer must" in res.stderr, res.output
    assert len(res.stderr.strip().splitlines()) == 1


def test_ny_000000_is_refused(run_cli, tmp_path):
    """"NY 000000" (what the bundled examples gave, with "(example)") has the form but is no license: all zeros
    is a placeholder. Refused, exit 2, naming the value; so is the old example text."""
    res = run_cli("credits", "quantify", str(_project(tmp_path, "pe_license = 'NY 000000'\n")))
    assert res.exit_code == 2 and "pe_license 'NY 000000' is not a license number" in res.stderr, res.output
    res = run_cli("credits", "quantify", str(_project(tmp_path, "pe_license = 'NY 000000 (example)'\n")))
    assert res.exit_code == 2 and "got 'NY 000000 (example)'" in res.stderr


def test_ny_012345_is_accepted_and_printed(run_cli, tmp_path):
    """"NY 012345": six digits after NY. The report prints the engineer and the license number."""
    res = run_cli("credits", "quantify", str(_project(tmp_path, "pe_license = 'NY 012345'\n")))
    assert res.exit_code == 0, res.output
    line = res.stdout.splitlines()[1]
    assert line == ("Prepared by A. Example, PE, professional engineer licensed in the State of New York, "
                    "license no. 012345 (given as NY 012345)")
    assert "Total I/I removed (qualifying items): 7,200.0 gpd" in res.stdout  # 5 gpm x 1,440 min/day


def test_the_json_carries_the_pe_and_the_six_digits(run_cli, tmp_path):
    """The bank reads project.id, project.engineer, project.pe_license_number, project.basin,
    project.municipal_user and total_gpd: pe_license "NY 012345" gives pe_license_number "012345" (text: the
    leading zero kept); the license as given stays in project.pe_license, just before it."""
    res = run_cli("credits", "quantify", str(_project(tmp_path, "pe_license = 'NY 012345'\n")), "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    project = doc["project"]
    assert project["pe_license_number"] == "012345" and project["pe_license"] == "NY 012345"
    assert list(project) == ["id", "name", "basin", "municipal_user", "engineer", "pe_license", "pe_license_number"]
    assert (project["id"], project["engineer"], project["basin"], project["municipal_user"], doc["total_gpd"]) == (
        "JC-T-1", "A. Example, PE", "Johnson City CSO 4", "Village of Johnson City", 7200.0)


@pytest.mark.parametrize(("given", "digits"), [
    ("NY 012345", "012345"), ("012345", "012345"), ("PE 012345", "012345"), ("NYS P.E. License No. 012345", "012345"),
    ("ny pe #098765", "098765"), ("  PE-100000 ", "100000"), ("Lic. No.: 000001", "000001"),
])
def test_license_forms_accepted(given, digits):
    """Six digits, optionally after NY, NYS, PE, License, No. (NYSED lists a PE license as six digits)."""
    assert r.pe_license_number(given) == digits


@pytest.mark.parametrize(("given", "words"), [
    (None, "pe_license is required"), ("", "pe_license is required"), ("   ", "pe_license is required"),
    ("NY 000000", "is not a license number"), ("000000", "is not a license number"),
    ("NY 12345", "six digits"), ("NY 0123456", "six digits"), ("NJ 012345", "six digits"),
    ("NY 012345 (example)", "six digits"), ("P E 012345", "six digits"), ("NY 0123 45", "six digits"),
    (12345, "must be text (quoted: a number loses its leading zeros)"), (["NY 012345"], "must be text"),
])
def test_license_forms_refused(given, words):
    with pytest.raises(InputError, match=r"^pe_license ") as info:
        r.pe_license_number(given)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_read_project_checks_the_items_first_then_the_pe(tmp_path):
    """A file with a bad item and no license is refused for the item (the file's form first); a good file
    without a license is refused for the license, as a DataFileError naming the file."""
    bad = tmp_path / "bad.toml"
    bad.write_text(HEAD + "[[item]]\ntype = 'sump_pump'\ncount = 'two'\n", encoding="utf-8")
    with pytest.raises(DataFileError, match="count must be a whole number"):
        read_project(bad)
    with pytest.raises(DataFileError, match=r"project\.toml \[project\]: pe_license is required"):
        read_project(_project(tmp_path))
    ok = read_project(_project(tmp_path, "pe_license = 'PE 054321'\n"))
    assert ok["project"]["pe_license_number"] == "054321"


def test_quantify_project_and_quantify_items_need_the_engineer():
    """The rule itself, without a file: quantify_project requires both; quantify_items every figure's
    engineer (before, only the case-by-case items of Table 174-19.1 note 2 needed one)."""
    sump = {"type": "sump_pump", "count": 1}
    out = r.quantify_project({"id": "X", "engineer": "A, PE", "pe_license": "012345"}, [sump])
    assert out["project"]["pe_license_number"] == "012345" and out["total_gpd"] == 7200.0
    assert out["storm"] == r.program_storm()
    with pytest.raises(InputError, match="^pe_license is required"):
        r.quantify_project({"id": "X", "engineer": "A, PE"}, [sump])
    with pytest.raises(InputError, match="^engineer must name the professional engineer"):
        r.quantify_project({"id": "X", "pe_license": "012345"}, [sump])
    with pytest.raises(InputError, match="^engineer must name the professional engineer"):
        r.quantify_items([sump])
    with pytest.raises(InputError, match="^pe_license 'NY 000000' is not a license number"):
        r.quantify_items([sump], engineer="A, PE", pe_license="NY 000000")


@pytest.mark.parametrize("name", ["oak-street-sump-and-manholes.toml", "elm-street-separation-to-combined.toml"])
def test_bundled_examples_give_a_fictitious_valid_license_and_say_so(name):
    """The bundled examples no longer say "NY 000000 (example)" (refused now): a license of the right form,
    with a comment that it is a fictitious example."""
    path = PROJECTS / name
    text = path.read_text(encoding="utf-8")
    above = " ".join(text.split("\npe_license =")[0].splitlines()[-2:])  # the two comment lines above it
    assert "000000" not in text and above.startswith("#") and "fictitious" in above and "example" in above
    project = read_project(path)["project"]
    assert len(project["pe_license_number"]) == 6 and project["engineer"].strip()
