"""``capacitysim spdes check`` and ``spdes phosphorus``: the bundled record out of the box, JSON fields checked
against an independent pandas calculation, the HTML report, and one-line errors with exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "models" / "plants" / "sample-wwtp.csv"


def monthly_by_pandas() -> pd.Series:
    s = pd.read_csv(SAMPLE, parse_dates=["date"]).set_index("date")["flow_mgd"]
    return s.resample("MS").mean()  # skips the blank (NaN) days: the average of the days present


def check_json(run_cli, *args):
    r = run_cli("spdes", "check", *args, "--json")
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)


def test_sample_out_of_the_box_matches_pandas(run_cli):
    doc = check_json(run_cli, "--flows", "sample-wwtp", "--limit-mgd", "0.5")
    m = monthly_by_pandas()
    window = m["2024-01-01":"2024-12-01"]  # as of 2024-12-31: months ending after 2023-12-31
    assert doc["as_of"] == "2024-12-31" and doc["lookback_window"]["periods"] == 12
    assert doc["violation_in_prior_12_months"] is False
    assert doc["projected_violation"] is False and doc["connection_prohibited"] is False
    assert doc["worst_period"]["label"] == window.idxmax().strftime("%Y-%m")
    assert doc["worst_average_mgd"] == pytest.approx(window.max(), rel=1e-12)
    assert doc["headroom_gpd"] == pytest.approx((0.5 - window.max()) * 1e6, rel=1e-9)
    # the August meter outage: averaged over the days present and flagged, not filled
    assert doc["lookback_window"]["incomplete_periods"] == 1
    assert doc["gaps"] == ["2024-08-12 to 2024-08-14 (3 days)"]
    assert doc["lookback_window"]["days_with_data"] == 366 - 3


def test_wet_spring_is_a_prior_violation_until_it_leaves_the_window(run_cli):
    doc = check_json(run_cli, "--flows", str(SAMPLE), "--limit-mgd", "0.5", "--as-of", "2024-04-29")
    assert doc["violation_in_prior_12_months"] and doc["connection_prohibited"]
    assert doc["grounds"] == ["prior violation"] and doc["worst_period"]["label"] == "2023-04"
    assert [v["label"] for v in doc["violations"]] == ["2023-04"]  # March 2023 ended before 2023-04-29
    out = check_json(run_cli, "--flows", str(SAMPLE), "--limit-mgd", "0.5", "--as-of", "2024-04-30")
    assert not out["violation_in_prior_12_months"]  # April 2023 ended exactly 12 months before


def test_added_flows_are_summed_and_tip_the_worst_month(run_cli):
    m = monthly_by_pandas()["2024-01-01":"2024-12-01"]
    room = (0.5 - m.max()) * 1e6
    ok = check_json(run_cli, "--flows", "sample-wwtp", "--limit-mgd", "0.5", "--added-gpd", f"{room - 1:.3f}")
    assert not ok["projected_violation"] and ok["headroom_gpd"] == pytest.approx(1.0, abs=1e-3)
    half = (room + 1) / 2
    tip = check_json(run_cli, "--flows", "sample-wwtp", "--limit-mgd", "0.5",
                     "--added-gpd", f"{half:.6f}", "--added-gpd", f"{half:.6f}")
    assert tip["added_gpd"] == pytest.approx(room + 1, abs=1e-5) and len(tip["added_gpd_items"]) == 2
    assert tip["projected_violation"] and tip["connection_prohibited"] and tip["grounds"] == ["added flow"]
    assert [v["label"] for v in tip["projected_violations"]] == [m.idxmax().strftime("%Y-%m")]
    assert tip["headroom_gpd"] == pytest.approx(-1.0, abs=1e-3)


@pytest.mark.parametrize("basis", ["30day", "12month"])
def test_other_bases_run(run_cli, basis):
    doc = check_json(run_cli, "--flows", "sample-wwtp", "--limit-mgd", "0.5", "--basis", basis)
    assert doc["basis"] == basis and doc["worst_average_mgd"] > 0.3
    for key in ("violation_in_prior_12_months", "projected_violation", "connection_prohibited", "headroom_gpd",
                "worst_period", "worst_average_mgd"):
        assert key in doc


def test_table_output_and_report(run_cli, tmp_path):
    out = tmp_path / "spdes.html"
    r = run_cli("spdes", "check", "--flows", "sample-wwtp", "--limit-mgd", "0.5", "--added-gpd", "80000",
                "--report", str(out))
    assert r.exit_code == 0
    assert "PROHIBITED as of 2024-12-31" in r.stdout and "added flow" in r.stdout and "gap (not filled)" in r.stdout
    page = out.read_text()
    assert page.count("<img") == 1 and "data:image/png;base64," in page
    assert "18-37(b)" in page and "prior twelve months" in page and "80,000" in page
    assert "2024-05" in page


def test_dmr_input(run_cli, tmp_path):
    rows = ["npdes_id,perm_feature_nmbr,parameter_code,statistical_base_short_desc,limit_value_standard_units,"
            "monitoring_period_end_date,dmr_value_standard_units"]
    values = [0.40, 0.42, 0.55, 0.44, 0.41, 0.39, 0.38, 0.37, 0.36, 0.38, 0.40, 0.41, 0.43]
    months = pd.period_range("2023-12", periods=len(values), freq="M")
    rows += [f"NY1,001,50050,MO AVG,0.5,{m.to_timestamp(how='end').strftime('%m/%d/%Y')},{v}" for m, v in zip(months, values)]
    p = tmp_path / "dmr.csv"
    p.write_text("\n".join(rows) + "\n")
    doc = check_json(run_cli, "--dmr", str(p))  # limit from the DMR
    assert doc["limit_mgd"] == 0.5 and doc["as_of"] == "2024-12-31"
    assert doc["violation_in_prior_12_months"] and doc["worst_period"]["label"] == "2024-02"
    later = check_json(run_cli, "--dmr", str(p), "--as-of", "2025-02-28")  # Feb 2024 ended 12 months before
    assert not later["violation_in_prior_12_months"] and later["lookback_window"]["periods"] == 10
    r = run_cli("spdes", "check", "--dmr", str(p), "--basis", "30day")
    assert r.exit_code == 2 and "needs daily flows" in r.stderr


@pytest.mark.parametrize(
    "gpd, limit",
    [("50000", 1.0), ("50000.01", 0.5), ("499999.99", 0.5), ("500000", 0.2)],
)
def test_phosphorus_command(run_cli, gpd, limit):
    r = run_cli("spdes", "phosphorus", "--permitted-gpd", gpd, "--json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert doc["total_phosphorus_limit_mg_l"] == limit and doc["rule"] == "15 RCNY § 18-36(a)(8)"
    table = run_cli("spdes", "phosphorus", "--permitted-gpd", gpd)
    assert f"{limit:g} mg/l" in table.stdout


def _bad_file(tmp_path, text):
    p = tmp_path / "bad.csv"
    p.write_text(text)
    return str(p)


@pytest.mark.parametrize(
    "make_args, message",
    [
        (lambda t: ["--flows", _bad_file(t, "date,flow_mgd\n2024-01-02,0.4\n2024-01-01,0.4\n"), "--limit-mgd", "0.5"],
         "line 3: date 2024-01-01 comes after 2024-01-02"),
        (lambda t: ["--flows", _bad_file(t, "date,flow_mgd\n2024-01-01,0.4\n2024-01-01,0.4\n"), "--limit-mgd", "0.5"],
         "appears 2 times"),
        (lambda t: ["--flows", _bad_file(t, "date,flow_mgd\n2024-01-01,0.4\n2024-01-02,n/a\n"), "--limit-mgd", "0.5"],
         "line 3: column 'flow_mgd' is not a number: got 'n/a'"),
        (lambda t: ["--flows", _bad_file(t, "date,flow_mgd\n2024-01-01,410000\n2024-01-02,415000\n"), "--limit-mgd", "0.5"],
         "look like gallons per day"),
        (lambda t: ["--flows", "sample-wwtp", "--limit-mgd", "500000"], "a limit in gpd?"),
        (lambda t: ["--flows", "sample-wwtp", "--limit-mgd", "0.0004"], "differ by more than 100 times"),
        (lambda t: ["--flows", "sample-wwtp"], "--limit-mgd is required"),
        (lambda t: ["--limit-mgd", "0.5"], "give the plant's flow record once"),
        (lambda t: ["--flows", "sample-wwtp", "--limit-mgd", "0.5", "--as-of", "soon"], "--as-of must be a date"),
        (lambda t: ["--flows", "sample-wwtp", "--limit-mgd", "0.5", "--as-of", "2019-01-01"], "look-back window"),
        (lambda t: ["--flows", "sample-wwtp", "--limit-mgd", "0.5", "--added-gpd", "-10"], "--added-gpd must be >= 0"),
        (lambda t: ["--flows", str(t / "missing.csv"), "--limit-mgd", "0.5"], "file not found"),
    ],
)
def test_bad_input_one_line_exit_2(run_cli, tmp_path, make_args, message):
    r = run_cli("spdes", "check", *make_args(tmp_path))
    assert r.exit_code == 2
    assert message in r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


def test_bad_basis_and_phosphorus_input(run_cli):
    r = run_cli("spdes", "check", "--flows", "sample-wwtp", "--limit-mgd", "0.5", "--basis", "weekly")
    assert r.exit_code == 2 and "weekly" in r.stderr
    r = run_cli("spdes", "phosphorus", "--permitted-gpd", "0")
    assert r.exit_code == 2 and "permitted_flow_gpd must be in (0, inf) gpd" in r.stderr


# --- issue 12: the report never overwrites an input ---------------------------------------------------
def _dmr_file(tmp_path):
    rows = ["npdes_id,perm_feature_nmbr,parameter_code,statistical_base_short_desc,limit_value_standard_units,"
            "monitoring_period_end_date,dmr_value_standard_units"]
    months = pd.period_range("2024-01", periods=12, freq="M")
    rows += [f"NY1,001,50050,MO AVG,0.5,{m.to_timestamp(how='end').strftime('%m/%d/%Y')},0.4" for m in months]
    p = tmp_path / "dmr.csv"
    p.write_text("\n".join(rows) + "\n")
    return p


@pytest.mark.parametrize("target", ["flows", "flows_relative", "flows_bundled", "dmr", "symlink", "folder"])
def test_report_never_overwrites_an_input(run_cli, tmp_path, monkeypatch, target):
    """--report was written over the flow record it was computed from; now refused with exit 2.

    The bundled record is read from a copy ($CAPACITYSIM_MODELS), so a regression cannot destroy the real one."""
    import os

    models = tmp_path / "models"
    (models / "plants").mkdir(parents=True)
    bundled = models / "plants" / "sample-wwtp.csv"
    bundled.write_bytes(SAMPLE.read_bytes())
    monkeypatch.setenv("CAPACITYSIM_MODELS", str(models))
    flows = tmp_path / "flows.csv"
    flows.write_bytes(SAMPLE.read_bytes())
    dmr = _dmr_file(tmp_path)
    link = tmp_path / "link.html"
    link.symlink_to(tmp_path / "elsewhere.html")
    (tmp_path / "folder").mkdir()
    source = ["--dmr", str(dmr)] if target == "dmr" else ["--flows", "sample-wwtp" if target == "flows_bundled" else str(flows),
                                                          "--limit-mgd", "0.5"]
    report = {"flows": str(flows), "flows_relative": os.path.relpath(flows), "flows_bundled": str(bundled), "dmr": str(dmr),
              "symlink": str(link), "folder": str(tmp_path / "folder")}[target]
    before = {p: p.read_bytes() for p in (flows, dmr, bundled, SAMPLE)}
    r = run_cli("spdes", "check", *source, "--report", report)
    assert r.exit_code == 2, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --report"), r.stderr
    assert {p: p.read_bytes() for p in before} == before
    assert not (tmp_path / "elsewhere.html").exists()


def test_added_flows_that_overflow_are_refused(run_cli):
    r = run_cli("spdes", "check", "--flows", "sample-wwtp", "--limit-mgd", "0.5", "--added-gpd", "1e308", "--json")
    assert r.exit_code == 2 and "--added-gpd must be >= 0 gpd and <= 1,000,000,000 gpd" in r.stderr
    r = run_cli("spdes", "check", "--flows", "sample-wwtp", "--limit-mgd", "0.5", "--added-gpd", "6e8", "--added-gpd", "6e8")
    assert r.exit_code == 2 and "sum to 1,200,000,000 gpd" in r.stderr
    r = run_cli("spdes", "phosphorus", "--permitted-gpd", "1e308")
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1
