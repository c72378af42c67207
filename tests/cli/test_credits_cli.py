"""``capacitysim credits connection`` and ``credits quantify``: issue 14's program policies on the command line.

Policies are printed as ``policy: ... (program interpretation — confirm with the bank administrator)`` lines and
carried in the JSON; a ratio below one to one exits 3 (refused by section F). Hand computations in the docstrings.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROJECTS = ROOT / "models" / "projects"
FLAG = "program interpretation — confirm with the bank administrator"


def _json(res):
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _policy_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("policy: ")]


# --- credits connection --------------------------------------------------------------------------------


def test_six_bedrooms_default_average_basis_json(run_cli):
    """6 x 110 gpd = 660 gpd average; Harmon PF at 6.6 persons = 18.0812404 / 4.0812404 = 4.430330;
    peak 2,924.02 gpd. Average 660 <= 2,500: no offset, 0 credits; on the peak it would be 2,924.02."""
    doc = _json(run_cli("credits", "connection", "--use", "residence_bedroom=6", "--json"))
    assert doc["average_gpd"] == 660.0 and doc["peak_flow_gpd"] == pytest.approx(2924.02, abs=0.01)
    assert doc["threshold_basis"] == "average" and doc["threshold_flow_gpd"] == 660.0
    assert doc["offset_required"] is False and doc["credits_required_gpd"] == 0.0
    assert doc["offset_required_on_average"] is False and doc["offset_required_on_peak"] is True
    p, peaking = doc["policies"]  # issue 25: the peaking method is a policy too, after the threshold basis
    assert p["name"] == "threshold_basis" and p["value"] == "average" and p["text"].startswith(FLAG)
    assert p["alternative"]["credits_required_gpd"] == pytest.approx(2924.02, abs=0.01)
    assert p["alternative"]["changes_outcome"] is True
    assert (peaking["name"], peaking["value"], peaking["alternative"]["value"]) == ("peaking_method", "harmon_100gpcd", "fixed")


def test_six_bedrooms_peak_basis_json(run_cli):
    """On the peak: 2,924.02 > 2,500 gpd, credits 2,924.02 gpd at 1:1 (section F)."""
    doc = _json(run_cli("credits", "connection", "--use", "residence_bedroom=6", "--threshold-basis", "peak", "--json"))
    assert doc["threshold_basis"] == "peak" and doc["offset_required"] is True
    assert doc["credits_required_gpd"] == doc["peak_flow_gpd"] == doc["threshold_flow_gpd"]
    assert doc["policies"][0]["alternative"] == {
        "value": "average", "text": doc["policies"][0]["alternative"]["text"], "threshold_flow_gpd": 660.0,
        "offset_required": False, "credits_required_gpd": 0.0, "changes_outcome": True}


def test_twenty_three_bedrooms_credits_the_peak_on_both_bases(run_cli):
    """23 x 110 = 2,530 gpd > 2,500 (the smallest count over the threshold on the average: 2,500 / 110 = 22.7);
    peak 2,530 x 4.366145 = 11,046.35 gpd; the credits are 11,046.35 gpd on either basis (section F)."""
    docs = [_json(run_cli("credits", "connection", "--use", "residence_bedroom=23", "--threshold-basis", b, "--json"))
            for b in ("average", "peak")]
    for doc in docs:
        assert doc["offset_required"] is True
        assert doc["credits_required_gpd"] == pytest.approx(11046.35, abs=0.01) == doc["peak_flow_gpd"]
    assert _json(run_cli("credits", "connection", "--use", "residence_bedroom=22", "--json"))["offset_required"] is False


def test_text_output_prints_both_outcomes_and_the_policy_line(run_cli):
    res = run_cli("credits", "connection", "--use", "residence_bedroom=6")
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "on the average (used)        no: 660 gpd <= 2,500 gpd; credits 0 gpd" in out
    assert "on the peak                  yes: 2,924 gpd > 2,500 gpd; credits 2,924 gpd" in out
    line, peaking = _policy_lines(out)
    assert line.startswith("policy: threshold_basis = average: the definitions of new or modified sewer connection")
    assert "'greater than 2,500 gallons per day of flow'" in line and line.endswith(f"({FLAG})")
    assert line.count(FLAG) == 1
    assert peaking.startswith("policy: peaking_method = harmon_100gpcd: section F sets the credits")
    assert peaking.endswith(f"({FLAG})") and peaking.count(FLAG) == 1


def test_offset_ratio_half_is_refused_with_exit_3(run_cli):
    """Section F: one-to-one. 0.5 would let 2 gallons in per gallon of I/I removed: refused (exit 3), one line."""
    res = run_cli("credits", "connection", "--use", "residence_bedroom=30", "--offset-ratio", "0.5", "--json")
    assert res.exit_code == 3 and res.stdout == ""
    lines = [x for x in res.stderr.strip().splitlines() if not x.startswith("note:")]
    assert len(lines) == 1 and lines[0].startswith("error: offset_ratio 0.5 is below the one-to-one offset ratio of section F")


def test_offset_ratio_above_one_is_a_flagged_policy(run_cli):
    """30 bedrooms: 3,300 gpd, peak 14,348.25 gpd; at 1.5:1 21,522.37 gpd, at 1:1 (section F) 14,348.25 gpd."""
    doc = _json(run_cli("credits", "connection", "--use", "residence_bedroom=30", "--offset-ratio", "1.5", "--json"))
    assert doc["credits_required_gpd"] == pytest.approx(21522.37, abs=0.01)
    ratio = {p["name"]: p for p in doc["policies"]}["offset_ratio"]
    assert ratio["value"] == 1.5 and "confirm with the bank administrator" in ratio["text"]
    assert ratio["alternative"]["value"] == 1.0
    assert ratio["alternative"]["credits_required_gpd"] == pytest.approx(14348.25, abs=0.01)
    text = run_cli("credits", "connection", "--use", "residence_bedroom=30", "--offset-ratio", "1.5").stdout
    assert f"policy: offset_ratio = 1.5: program policy above the one-to-one of section F ({FLAG})" in _policy_lines(text)
    assert "21,522 gpd = 1.5 x the peak sewage flow (ratio: program policy, below)" in text


@pytest.mark.parametrize(("args", "word"), [
    (["--threshold-basis", "mean"], "'mean' is not one of 'average', 'peak'"),
    (["--offset-ratio", "11"], "offset_ratio must be in [1, 10]"),
    (["--offset-ratio", "nan"], "offset_ratio must be a finite number"),
])
def test_bad_options_exit_2(run_cli, args, word):
    res = run_cli("credits", "connection", "--use", "residence_bedroom=6", *args)
    assert res.exit_code == 2 and word in res.stderr, res.output


def test_help_texts_present_policies_as_policies(run_cli):
    text = " ".join(run_cli("credits", "connection", "--help").stdout.split())
    assert "Program policy (the program does not say; confirm with the bank administrator)" in text
    assert "Section F fixes one-to-one (1); below 1 is refused (exit 3); above 1 (up to 10) only as a program policy" in text
    text = " ".join(run_cli("credits", "quantify", "--help").stdout.split())
    assert "--inflow-basis [volume|peak]" in text
    assert "Program policy (the program does not say; confirm with the bank administrator)" in text


# --- credits quantify ------------------------------------------------------------------------------------


def test_quantify_json_has_both_inflow_bases(run_cli):
    """Oak Street: the roof (12,000 ft2) and the separation (0.35 ac), CN 98, Q = 1.8735044 in.
    Volume basis: 12,000 x 1.8735044 / 12 x 7.4805195 = 14,014.79 gpd; 0.35 ac: 17,805.79 gpd; sum 31,820.57.
    Peak-rate basis (unit hydrograph, Tc 0.1 hr, 32.85 x the volume): 460,368 and 584,898 gpd."""
    doc = _json(run_cli("credits", "quantify", str(PROJECTS / "oak-street-sump-and-manholes.toml"), "--json"))
    assert doc["inflow_credit_basis"] == "volume"
    assert doc["inflow_credit_volume_gpd"] == pytest.approx(14014.79 + 17805.79, abs=0.02)
    assert doc["inflow_credit_peak_rate_gpd"] == pytest.approx(460368 + 584898, abs=2)
    roof = doc["items"][3]
    assert roof["gpd"] == roof["inflow_credit_volume_gpd"] == pytest.approx(14014.79, abs=0.01)
    assert roof["inflow_credit_peak_rate_gpd"] / roof["inflow_credit_volume_gpd"] == pytest.approx(32.85, abs=0.01)
    others = 4752 + 9936 + 28800 + 5200
    assert doc["total_gpd"] == doc["total_gpd_on_volume"] == pytest.approx(others + 31820.57, abs=0.02)
    assert doc["total_gpd_on_peak_rate"] == pytest.approx(others + 460368 + 584898, abs=2)
    (p,) = doc["policies"]
    assert p["name"] == "inflow_credit_basis" and p["value"] == "volume" and p["text"].startswith(FLAG)
    assert p["alternative"]["value"] == "peak" and p["alternative"]["total_gpd"] == doc["total_gpd_on_peak_rate"]


def test_quantify_peak_basis_credits_the_peak_rate(run_cli):
    doc = _json(run_cli("credits", "quantify", str(PROJECTS / "oak-street-sump-and-manholes.toml"),
                        "--inflow-basis", "peak", "--json"))
    assert doc["inflow_credit_basis"] == "peak" and doc["total_gpd"] == doc["total_gpd_on_peak_rate"]
    assert doc["items"][3]["gpd"] == doc["items"][3]["inflow_credit_peak_rate_gpd"]
    assert doc["policies"][0]["alternative"]["total_gpd"] == doc["total_gpd_on_volume"]


def test_quantify_text_prints_both_numbers_and_the_policy(run_cli):
    res = run_cli("credits", "quantify", str(PROJECTS / "oak-street-sump-and-manholes.toml"))
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "volume basis: 14,015 gpd; peak-rate basis (Tc 0.1 hr): 460,368 gpd (32.8 x)" in out
    assert "Total I/I removed (qualifying items): 80,508.6 gpd" in out
    assert "on the volume basis: 80,508.6 gpd; on the peak-rate basis: 1,093,95" in out
    (line,) = _policy_lines(out)
    assert line.startswith("policy: inflow_credit_basis = volume: Table 174-19.2") and line.endswith(f"({FLAG})")


def test_quantify_bad_inflow_basis_exits_2(run_cli):
    res = run_cli("credits", "quantify", str(PROJECTS / "oak-street-sump-and-manholes.toml"), "--inflow-basis", "rate")
    assert res.exit_code == 2 and res.stderr == 'error: --inflow-basis: got "rate"; allowed: one of "volume", "peak"\n'  # the process's validator


def test_quantify_project_tc_hr_out_of_range_exits_2(run_cli, tmp_path):
    p = tmp_path / "p.toml"
    p.write_text("[project]\nid='x'\nname='y'\nengineer='z'\npe_license='NY 012345'\n[[item]]\ntype='roof_drain'\narea_sqft=12000\n"
                 "cover='impervious'\nsoil='C'\ntc_hr=0.01\n")
    res = run_cli("credits", "quantify", str(p))
    assert res.exit_code == 2 and "tc_hr must be >= 0.1 hr" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
