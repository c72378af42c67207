"""The triennial inspection and certification of a NYC detention system, dated from its approval.

15 RCNY § 31-04(a)(8), third and fourth sentences: "Three years after the date of approval of a retention
or detention system and every three years thereafter the operation of the system shall be inspected by a
licensed professional engineer, a registered architect or a licensed master plumber. Such architect,
engineer or master plumber shall submit certification to DEP that the system is free of debris and
sediments, that its orifice is unobstructed and flowing and that the system is otherwise operating in
compliance with this rule."

Hand cases: approval 2024-03-15 falls due 2027-03-15, 2030-03-15, 2033-03-15; approval 2024-02-29 falls due
2027-02-28, 2030-02-28, 2033-02-28 and, 2036 being a leap year, 2036-02-29 (each due date counted from the
approval date, named policy LEAP_DAY_FEB_28 where a year has no February 29); no approval date, no due dates.
"""

import datetime as dt
import json
from pathlib import Path

import pytest

from capacitysim.errors import DataFileError, InputError
from capacitysim.io.site_files import load_rule_set, load_site
from capacitysim.io.submittal import approval_date
from capacitysim.report.detention import write_report
from capacitysim.rules import nyc_stormwater as nyc
from capacitysim.workflows.detention import TRIENNIAL_KIND, design_site, triennial_condition

ROOT = Path(__file__).resolve().parents[2]
SITES = ROOT / "models" / "sites"
BASE = (SITES / "new-building.toml").read_text()
PROFESSIONS = ["licensed professional engineer", "registered architect", "licensed master plumber"]
D = dt.date


@pytest.fixture(scope="module")
def rules():
    return load_rule_set("nyc-2012")


def _site(tmp_path, approved_on: str | None, rules):
    """new-building.toml with ``approved_on = <approved_on>`` (TOML text as given) in its [submittal]."""
    text = BASE if approved_on is None else BASE.replace(
        'project_number = "EXAMPLE-SCP-0001"', f'project_number = "EXAMPLE-SCP-0001"\napproved_on = {approved_on}')
    path = tmp_path / "site.toml"
    path.write_text(text)
    return load_site(path, rules)


def _triennial(conditions):
    rows = [c for c in conditions if c.get("kind") == TRIENNIAL_KIND]
    assert len(rows) == 1
    return rows[0]


# --- the rule function --------------------------------------------------------------------------
def test_approval_2024_03_15_falls_due_every_three_years():
    """"Three years after the date of approval ... and every three years thereafter": 2027, 2030, 2033."""
    assert nyc.triennial_certifications(D(2024, 3, 15), count=3) == (D(2027, 3, 15), D(2030, 3, 15), D(2033, 3, 15))
    assert nyc.triennial_certifications(D(2024, 3, 15)) == (
        D(2027, 3, 15), D(2030, 3, 15), D(2033, 3, 15), D(2036, 3, 15), D(2039, 3, 15))  # five by default
    assert nyc.TRIENNIAL_DUE_DATES_LISTED == 5 and nyc.TRIENNIAL_INTERVAL_YEARS == 3


def test_feb_29_approval_falls_due_feb_28_and_feb_29_in_leap_years():
    """The rule does not say when three years after February 29 falls; each due date is counted from the
    approval date (not from the previous due date), February 28 in a year without February 29 and
    February 29 in a leap year (policy LEAP_DAY_FEB_28)."""
    assert nyc.triennial_certifications(D(2024, 2, 29), count=4) == (
        D(2027, 2, 28), D(2030, 2, 28), D(2033, 2, 28), D(2036, 2, 29))
    # 2048 and 2060 are leap years; 2100 is not (divisible by 100, not by 400)
    due = nyc.triennial_certifications(D(2024, 2, 29), through=D(2101, 1, 1))
    assert D(2048, 2, 29) in due and D(2060, 2, 29) in due and D(2099, 2, 28) in due
    assert all(d.month == 2 and d.day == (29 if d.year % 4 == 0 and (d.year % 100 or d.year % 400 == 0) else 28) for d in due)
    assert nyc.LEAP_DAY_POLICY in nyc.LEAP_DAY_CITATION and nyc.PROGRAM_INTERPRETATION in nyc.LEAP_DAY_CITATION


def test_horizon_and_count():
    assert nyc.triennial_certifications(D(2024, 3, 15), through=D(2033, 3, 15)) == (D(2027, 3, 15), D(2030, 3, 15), D(2033, 3, 15))
    assert nyc.triennial_certifications(D(2024, 3, 15), through=D(2033, 3, 14)) == (D(2027, 3, 15), D(2030, 3, 15))
    assert nyc.triennial_certifications(D(2024, 3, 15), through=D(2027, 3, 14)) == ()
    assert nyc.triennial_certifications(D(2024, 3, 15), through=D(2100, 1, 1), count=2) == (D(2027, 3, 15), D(2030, 3, 15))
    assert nyc.triennial_certifications(D(9990, 1, 1), count=10) == (D(9993, 1, 1), D(9996, 1, 1), D(9999, 1, 1))


def test_certifiers_are_the_three_professions_of_the_rule():
    assert nyc.TRIENNIAL_CERTIFIERS == tuple(PROFESSIONS)
    assert nyc.TRIENNIAL_CITATION == nyc.MAINTENANCE_OBLIGATIONS[2]["citation"]


@pytest.mark.parametrize("kwargs, needle", [
    ({"approved_on": "2024-03-15"}, "approved_on must be a date"),
    ({"approved_on": dt.datetime(2024, 3, 15, 9, 0)}, "approved_on must be a date"),
    ({"approved_on": D(2024, 3, 15), "through": "2030-01-01"}, "through must be a date"),
    ({"approved_on": D(2024, 3, 15), "count": 0}, "count must be a whole number from 1 to 1000"),
    ({"approved_on": D(2024, 3, 15), "count": True}, "count must be a whole number"),
    ({"approved_on": D(2024, 3, 15), "count": 2.0}, "count must be a whole number"),
])
def test_bad_arguments_are_input_errors(kwargs, needle):
    with pytest.raises(InputError, match=needle):
        nyc.triennial_certifications(**kwargs)


# --- the approval date as read ------------------------------------------------------------------
def test_approval_date_reads_text_and_toml_dates_and_refuses_the_rest():
    today = D(2026, 1, 10)
    assert approval_date(None) is None
    assert approval_date("2024-03-15", today=today) == D(2024, 3, 15)
    assert approval_date(D(2024, 2, 29), today=today) == D(2024, 2, 29)
    assert approval_date("2026-01-10", today=today) == D(2026, 1, 10)  # today itself is allowed
    for value, needle in [("2026-01-11", "--approved-on 2026-01-11 is after today (2026-01-10)"),
                          ("2023-02-29", "is not a date of the calendar"),
                          ("2024-3-15", "must be a date; got '2024-3-15'"),
                          ("15/03/2024", "must be a date"),
                          (20240315, "must be a date; got 20240315"),
                          (dt.datetime(2024, 3, 15, 9, 0), "without a time of day")]:
        with pytest.raises(InputError, match="allowed: a date YYYY-MM-DD") as info:
            approval_date(value, "--approved-on", today=today)
        assert needle in str(info.value), (value, str(info.value))


# --- the condition record and the design ----------------------------------------------------------
def test_condition_with_an_approval_date_lists_due_dates_and_certifiers():
    c = triennial_condition(D(2024, 3, 15), "--approved-on")
    assert c["kind"] == TRIENNIAL_KIND and c["citation"] == nyc.TRIENNIAL_CITATION
    assert c["approved_on"] == "2024-03-15"
    assert c["due_on"] == ["2027-03-15", "2030-03-15", "2033-03-15", "2036-03-15", "2039-03-15"]
    assert c["certifier"] == PROFESSIONS
    assert "2027-03-15, 2030-03-15, 2033-03-15" in c["text"] and "licensed master plumber" in c["text"]
    assert "--approved-on" in c["due_on_basis"] and nyc.LEAP_DAY_POLICY not in c["due_on_basis"]
    leap = triennial_condition(D(2024, 2, 29))
    assert leap["due_on"][:4] == ["2027-02-28", "2030-02-28", "2033-02-28", "2036-02-29"]
    assert nyc.LEAP_DAY_POLICY in leap["due_on_basis"]  # the named policy is printed where it decides


def test_condition_without_an_approval_date_has_no_dates_and_says_why():
    c = triennial_condition(None)
    assert c["due_on"] is None and c["approved_on"] is None and c["certifier"] == PROFESSIONS
    assert "Due 3 years after the approval date" in c["text"]
    assert "no approval date" in c["due_on_basis"]
    assert json.loads(json.dumps(c)) == c


def test_site_file_approved_on_dates_the_condition(tmp_path, rules):
    site = _site(tmp_path, "2024-03-15", rules)  # a TOML date
    assert site.approved_on == D(2024, 3, 15)
    res = design_site(site, rules, swmm=False)
    c = _triennial(res.conditions)
    assert c["due_on"][:3] == ["2027-03-15", "2030-03-15", "2033-03-15"]
    assert "the site file's [submittal] approved_on" in c["due_on_basis"]
    doc = res.to_dict()
    assert doc["approved_on"] == "2024-03-15" and _triennial(doc["conditions"])["due_on"] == c["due_on"]
    assert "approved_on" not in doc["submittal"]  # a fact of the approval, not an identification field
    json.dumps(doc)  # dates are text: the document is JSON as it stands
    # the condition closes the list, after the two other obligations
    assert res.conditions[-1] is c and res.conditions[-3:-1] == list(nyc.MAINTENANCE_OBLIGATIONS[:2])


def test_a_quoted_date_is_read_and_the_argument_overrides_the_file(tmp_path, rules):
    site = _site(tmp_path, '"2024-02-29"', rules)
    assert site.approved_on == D(2024, 2, 29)
    res = design_site(site, rules, swmm=False, approved_on=D(2021, 6, 1))
    c = _triennial(res.conditions)
    assert c["approved_on"] == "2021-06-01" and c["due_on"][0] == "2024-06-01" and "--approved-on" in c["due_on_basis"]
    assert res.approved_on == D(2021, 6, 1)


def test_no_approval_date_no_due_dates(rules):
    site = load_site(SITES / "new-building.toml", rules)
    assert site.approved_on is None
    res = design_site(site, rules, swmm=False)
    c = _triennial(res.conditions)
    assert c["due_on"] is None and res.to_dict()["approved_on"] is None


@pytest.mark.parametrize("value, needle", [
    ('"2024-02-30"', "approved_on '2024-02-30' is not a date of the calendar"),
    ('"March 15, 2024"', "approved_on must be a date"),
    ("2024-03-15T10:00:00", "without a time of day"),
    ("20240315", "approved_on must be a date; got 20240315"),
])
def test_bad_approved_on_in_the_site_file_is_a_data_file_error(tmp_path, rules, value, needle):
    with pytest.raises(DataFileError, match="allowed: a date YYYY-MM-DD") as info:
        _site(tmp_path, value, rules)
    assert "[submittal]" in str(info.value) and needle in str(info.value)


def test_future_approved_on_is_refused(tmp_path, rules):
    tomorrow = dt.date.today() + dt.timedelta(days=1)
    with pytest.raises(DataFileError, match="is after today"):
        _site(tmp_path, tomorrow.isoformat(), rules)
    with pytest.raises(InputError, match="approved_on .* is after today"):
        design_site(load_site(SITES / "new-building.toml", rules), rules, swmm=False, approved_on=tomorrow)


def test_report_shows_due_dates_and_certifiers(tmp_path, rules):
    res = design_site(_site(tmp_path, "2024-02-29", rules), rules, swmm=False)
    html = write_report(res, tmp_path / "r.html").read_text()
    part = html[html.index("Maintenance obligations"):]
    for needle in ("2027-02-28", "2030-02-28", "2033-02-28", "2036-02-29", "licensed professional engineer",
                   "registered architect", "licensed master plumber", "approval date", "2024-02-29", nyc.LEAP_DAY_POLICY):
        assert needle in part, needle
    before = design_site(load_site(SITES / "new-building.toml", rules), rules, swmm=False)
    html = write_report(before, tmp_path / "b.html").read_text()
    part = html[html.index("Maintenance obligations"):]
    assert "not given (a design before approval)" in part and "(dates not known)" in part


# --- the CLI --------------------------------------------------------------------------------------
def test_cli_approved_on_json_and_text(run_cli, tmp_path):
    site = str(SITES / "new-building.toml")
    r = run_cli("detention", site, "--no-swmm", "--json", "--approved-on", "2024-03-15")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    c = _triennial(out["conditions"])
    assert out["approved_on"] == "2024-03-15"
    assert c["due_on"][:3] == ["2027-03-15", "2030-03-15", "2033-03-15"] and c["certifier"] == PROFESSIONS
    r = run_cli("detention", site, "--no-swmm", "--approved-on", "2024-02-29")
    assert r.exit_code == 0, r.output
    assert "due 2027-02-28, 2030-02-28, 2033-02-28, 2036-02-29" in r.stdout
    assert "certifier (one of): licensed professional engineer, registered architect, licensed master plumber" in r.stdout
    assert nyc.LEAP_DAY_POLICY in r.stdout
    r = run_cli("detention", site, "--no-swmm")
    assert "Due 3 years after the approval date" in r.stdout and "no approval date" in r.stdout


def test_cli_option_overrides_the_site_file(run_cli, tmp_path, rules):
    _site(tmp_path, "2020-01-15", rules)
    r = run_cli("detention", str(tmp_path / "site.toml"), "--no-swmm", "--json")
    assert _triennial(json.loads(r.stdout)["conditions"])["due_on"][0] == "2023-01-15"
    r = run_cli("detention", str(tmp_path / "site.toml"), "--no-swmm", "--json", "--approved-on", "2022-05-02")
    assert _triennial(json.loads(r.stdout)["conditions"])["due_on"][0] == "2025-05-02"


@pytest.mark.parametrize("value, needle", [
    ("2023-02-29", "--approved-on '2023-02-29' is not a date of the calendar"),
    ("15/03/2024", "--approved-on must be a date; got '15/03/2024'"),
    ("", "--approved-on must be a date"),
    # a week ahead: the date is computed when the tests are collected, and a run may cross midnight
    ((dt.date.today() + dt.timedelta(days=7)).isoformat(), "is after today"),
])
def test_cli_bad_approved_on_exit_2_one_line(run_cli, value, needle):
    r = run_cli("detention", str(SITES / "new-building.toml"), "--no-swmm", "--approved-on", value)
    assert r.exit_code == 2, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in r.output
    assert needle in lines[0] and "allowed: a date YYYY-MM-DD" in lines[0]
