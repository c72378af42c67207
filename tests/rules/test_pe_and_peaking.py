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


# --- the peaking method, a named program policy (issue 25, item 2) ------------------------------------

# The bundled design flow table's bedroom row (design_flows.toml, NYSDEC 2014 Table B-3 style): 110 gpd.
BEDROOM = {"residence_bedroom": {"gpd_per_unit": 110.0, "unit": "bedroom", "source": "NYSDEC 2014 Table B-3"}}


def _policy(res, name):
    policies = res.policies if hasattr(res, "policies") else res["policies"]
    return {p["name"]: p for p in policies}[name]


def test_section_f_estimates_the_peak_without_saying_how(shared_dir):
    """Section F: credits 'equal to the estimated peak sewage flow rate increase'; the method of the estimate
    is nowhere in the program, so it is a policy, and its text quotes section F."""
    text = (shared_dir / REG).read_text()
    assert "equal to the estimated peak sewage flow rate increase" in text
    assert "Harmon" not in text and "gpcd" not in text and "per capita" not in text
    for method in r.PEAKING_METHODS:
        assert r.PEAKING_METHOD_TEXT[method].startswith(FLAG + ": section F sets the credits 'equal to the estimated "
                                                        "peak sewage flow rate increase' and does not say how")
    assert r.DEFAULT_PEAKING_METHOD == "harmon_100gpcd" and r.TSS_PER_CAPITA_GPCD == 100.0


def test_harmon_hand_case_24_2_persons():
    """22 bedrooms x 110 gpd = 2,420 gpd; at 100 gpcd that is 24.2 persons, P = 0.0242 thousand.
    sqrt(0.0242) = 0.1555635; 4 + 0.1555635 = 4.1555635; 14 / 4.1555635 = 3.3689775;
    PF = 1 + 3.3689775 = 4.3689775 (the same as (18 + 0.1555635) / 4.1555635).
    Peak = 2,420 x 4.3689775 = 10,572.93 gpd."""
    assert r.harmon_peaking_factor(0.0242) == pytest.approx(4.3689775, abs=1e-7)
    assert r.harmon_peaking_factor(0.0242) == pytest.approx(1 + 14 / (4 + math.sqrt(0.0242)), rel=1e-15)
    assert r.equivalent_population_thousands(2420.0) == pytest.approx(0.0242, rel=1e-15)
    res = r.connection_offset({"residence_bedroom": 22}, BEDROOM)
    assert res.average_gpd == 2420.0 and res.peaking_factor == pytest.approx(4.3689775, abs=1e-7)
    assert res.peak_flow_gpd == pytest.approx(10572.93, abs=0.01)
    pol = _policy(res, "peaking_method")
    assert pol["value"] == "harmon_100gpcd" and "100 gallons per capita per day" in pol["text"]
    assert "PF = 1 + 14 / (4 + sqrt(P))" in pol["text"]
    # the alternative is the applicant's own factor: named, nothing to compute without it
    assert pol["alternative"] == {"value": "fixed", "text": r.PEAKING_METHOD_TEXT["fixed"]}
    assert [p["name"] for p in res.policies] == ["threshold_basis", "peaking_method"]


def test_a_fixed_factor_is_the_policy_fixed_with_harmon_beside_it():
    """30 bedrooms = 3,300 gpd; --peaking-factor 2: peak 6,600 gpd, credits 6,600 gpd (3,300 > 2,500 on the
    average). Beside it, Harmon at 100 gpcd: 33 persons, P = 0.033, sqrt = 0.1816590, PF = 1 + 14 / 4.1816590
    = 4.3479535, peak 3,300 x 4.3479535 = 14,348.25 gpd, credits 14,348.25 gpd: the outcome changes."""
    res = r.connection_offset({"residence_bedroom": 30}, BEDROOM, peaking_factor=2)
    assert res.peak_flow_gpd == 6600.0 and res.credits_required_gpd == 6600.0
    pol = _policy(res, "peaking_method")
    assert pol["value"] == "fixed" and pol["text"] == r.PEAKING_METHOD_TEXT["fixed"]
    alt = pol["alternative"]
    assert alt["value"] == "harmon_100gpcd" and alt["peaking_factor"] == pytest.approx(4.3479535, abs=1e-7)
    assert alt["peak_flow_gpd"] == pytest.approx(14348.25, abs=0.01) == alt["credits_required_gpd"]
    assert alt["offset_required"] is True and alt["changes_outcome"] is True


def test_no_offset_either_way_does_not_change_the_outcome():
    """22 bedrooms = 2,420 gpd average, not more than 2,500 gpd: no offset on the average whatever the peak, so
    a factor of 2.5 (peak 6,050 gpd) or Harmon's (10,572.93 gpd) needs 0 credits: changes_outcome false."""
    res = r.connection_offset({"residence_bedroom": 22}, BEDROOM, peaking_factor=2.5)
    alt = _policy(res, "peaking_method")["alternative"]
    assert res.credits_required_gpd == 0.0 and alt["credits_required_gpd"] == 0.0
    assert alt["peak_flow_gpd"] == pytest.approx(10572.93, abs=0.01) and alt["changes_outcome"] is False


def test_a_stated_population_is_the_policy_harmon_population():
    """24 bedrooms = 2,640 gpd, 60 persons served: P = 0.06, sqrt = 0.2449490, PF = 1 + 14 / 4.2449490 =
    4.2980373, peak 2,640 x 4.2980373 = 11,346.82 gpd."""
    res = r.connection_offset({"residence_bedroom": 24}, BEDROOM, population_persons=60)
    assert res.peaking_factor == pytest.approx(4.2980373, abs=1e-7)
    assert res.peak_flow_gpd == pytest.approx(11346.82, abs=0.01)
    pol = _policy(res, "peaking_method")
    assert pol["value"] == "harmon_population" and pol["alternative"]["value"] == "harmon_100gpcd"
    assert r.peaking_method_for() == "harmon_100gpcd" and r.peaking_method_for(population_persons=60) == "harmon_population"
    assert r.peaking_method_for(2.0, 60) == "fixed"  # a stated factor wins, as peaking_factor_for applies it
    with pytest.raises(InputError, match="peaking_factor"):
        r.peaking_method_for(0.5)


def test_credits_connection_shows_the_peaking_policy_and_its_alternative(run_cli):
    """Text: the peaking factor row names the policy, the next row its alternative, and a policy line; JSON: the
    policy with its alternative after threshold_basis. 22 bedrooms: PF 4.369, peak 10,573 gpd."""
    res = run_cli("credits", "connection", "--use", "residence_bedroom=22")
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "peaking factor                  4.369 (Harmon (Ten States Standards Figure 1); program policy " \
           "peaking_method = harmon_100gpcd, below)" in out
    assert "  or fixed                      a factor you state (--peaking-factor F): peak = 2,420 gpd x F" in out
    (line,) = [x for x in out.splitlines() if x.startswith("policy: peaking_method")]
    assert line.startswith("policy: peaking_method = harmon_100gpcd: section F sets the credits")
    assert line.endswith(f"({FLAG})") and line.count(FLAG) == 1
    doc = json.loads(run_cli("credits", "connection", "--use", "residence_bedroom=22", "--json").stdout)
    assert [p["name"] for p in doc["policies"]] == ["threshold_basis", "peaking_method"]
    assert doc["policies"][1]["alternative"]["value"] == "fixed"
    res = run_cli("credits", "connection", "--use", "residence_bedroom=30", "--peaking-factor", "2")
    assert "  on harmon_100gpcd             PF 4.348: peak 14,348 gpd; credits 14,348 gpd" in res.stdout
    assert "policy: peaking_method = fixed: " in res.stdout


def test_the_policy_is_documented():
    """docs/reference/policies.md lists every named policy of credits connection, with its alternative."""
    text = (ROOT / "docs" / "reference" / "policies.md").read_text(encoding="utf-8")
    row = next(x for x in text.splitlines() if x.startswith("| `peaking_method` |"))
    assert f"`{r.DEFAULT_PEAKING_METHOD}`" in row and "`fixed`" in row and "`harmon_population`" in row
