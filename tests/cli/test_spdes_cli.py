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


def with_defaults(args) -> list[str]:
    """The bundled record's plant discharges within the watershed, and the record ends 2024-12-31: the tests
    written before the as-of date defaulted to today (issue 14 item 10) pass that date explicitly."""
    args = list(args)
    if "--watershed" not in args and "--not-watershed" not in args and "--plant" not in args:
        args.append("--watershed")
    if "--as-of" not in args and "--application-date" not in args:
        args += ["--as-of", "2024-12-31"]
    return args


def check_json(run_cli, *args):
    """The JSON document; the exit code follows the convention: 0 pass, 1 fail (the JSON still printed)."""
    r = run_cli("spdes", "check", *with_defaults(args), "--json")
    assert r.exit_code in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    assert r.exit_code == (0 if doc["verdict"] == "pass" else 1), (r.exit_code, doc["verdict"])
    return doc


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
    r = run_cli("spdes", "check", *with_defaults(["--flows", "sample-wwtp", "--limit-mgd", "0.5", "--added-gpd", "80000",
                "--report", str(out)]))
    assert r.exit_code == 1  # PROHIBITED: exit 1 (issue 14 item 13), the table still printed
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
    doc = check_json(run_cli, "--dmr", str(p))  # limit from the DMR; --as-of 2024-12-31 (the last DMR month)
    assert doc["limit_mgd"] == 0.5 and doc["as_of"] == "2024-12-31"
    assert doc["violation_in_prior_12_months"] and doc["worst_period"]["label"] == "2024-02"
    later = check_json(run_cli, "--dmr", str(p), "--as-of", "2025-02-28")  # Feb 2024 ended 12 months before
    assert not later["violation_in_prior_12_months"] and later["lookback_window"]["periods"] == 10
    r = run_cli("spdes", "check", "--dmr", str(p), "--basis", "30day", "--watershed")
    assert r.exit_code == 2 and "needs daily flows" in r.stderr


@pytest.mark.parametrize(
    "gpd, limit",
    [("50000", 1.0), ("50000.01", 0.5), ("499999.99", 0.5), ("500000", 0.2)],
)
def test_phosphorus_command(run_cli, gpd, limit):
    r = run_cli("spdes", "phosphorus", "--permitted-gpd", gpd, "--watershed", "--json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert doc["total_phosphorus_limit_mg_l"] == limit and doc["rule"] == "15 RCNY § 18-36(a)(8)" and doc["applies"]
    table = run_cli("spdes", "phosphorus", "--permitted-gpd", gpd, "--watershed")
    assert f"{limit:g} mg/l" in table.stdout


def test_phosphorus_applies_only_within_the_watershed(run_cli):
    """§ 18-36(a)(8): "Wastewater treatment plants with either surface or subsurface discharges within the watershed
    shall provide phosphorus removal ..." (issue 25, item 6): the command asks, and gives no limit outside it."""
    r = run_cli("spdes", "phosphorus", "--permitted-gpd", "60000")
    assert r.exit_code == 2 and "--watershed or --not-watershed is required" in r.stderr
    r = run_cli("spdes", "phosphorus", "--permitted-gpd", "60000", "--not-watershed", "--json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert doc["applies"] is False and doc["total_phosphorus_limit_mg_l"] is None and "within the watershed" in doc["why"]
    table = run_cli("spdes", "phosphorus", "--permitted-gpd", "60000", "--not-watershed")
    assert "does not apply" in table.stdout and "mg/l" not in table.stdout


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
        (lambda t: ["--flows", "sample-wwtp", "--limit-mgd", "500000"],
         "--limit-mgd: got 500000.0; allowed: a number in (0, 10000] (in MGD; a larger figure is a limit in gpd?"),
        (lambda t: ["--flows", "sample-wwtp", "--limit-mgd", "0.0004"], "differ by more than 100 times"),
        (lambda t: ["--flows", "sample-wwtp"], "--limit-mgd is required"),
        (lambda t: ["--limit-mgd", "0.5"], "--flows: missing; allowed: the plant's flow record once: --flows (daily CSV) or "
                                            "--dmr (ECHO DMR download)"),
        (lambda t: ["--flows", "sample-wwtp", "--limit-mgd", "0.5", "--as-of", "soon"],
         '--as-of: got "soon"; allowed: a date YYYY-MM-DD'),
        (lambda t: ["--flows", "sample-wwtp", "--limit-mgd", "0.5", "--as-of", "2019-01-01"], "look-back window"),
        (lambda t: ["--flows", "sample-wwtp", "--limit-mgd", "0.5", "--added-gpd", "-10"],
         "--added-gpd[0]: got -10.0; allowed: a number in [0, 1e+09]"),
        (lambda t: ["--flows", str(t / "missing.csv"), "--limit-mgd", "0.5"], "file not found"),
    ],
)
def test_bad_input_one_line_exit_2(run_cli, tmp_path, make_args, message):
    r = run_cli("spdes", "check", *make_args(tmp_path), "--watershed")
    assert r.exit_code == 2
    assert message in r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


def test_bad_basis_and_phosphorus_input(run_cli):
    r = run_cli("spdes", "check", "--flows", "sample-wwtp", "--limit-mgd", "0.5", "--basis", "weekly", "--watershed")
    assert r.exit_code == 2 and "weekly" in r.stderr
    r = run_cli("spdes", "phosphorus", "--permitted-gpd", "0", "--watershed")
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


@pytest.mark.parametrize("target", ["flows", "flows_relative", "flows_bundled", "dmr", "symlink", "folder", "plant", "submittal"])
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
    plant = tmp_path / "plant.toml"
    plant.write_text('name = "P"\nwatershed = true\n')
    sub = tmp_path / "submittal.toml"
    sub.write_text('[submittal]\nproject_number = "P-1"\n')
    source = ["--dmr", str(dmr)] if target == "dmr" else ["--flows", "sample-wwtp" if target == "flows_bundled" else str(flows),
                                                          "--limit-mgd", "0.5"]
    report = {"flows": str(flows), "flows_relative": os.path.relpath(flows), "flows_bundled": str(bundled), "dmr": str(dmr),
              "symlink": str(link), "folder": str(tmp_path / "folder"), "plant": str(plant), "submittal": str(sub)}[target]
    before = {p: p.read_bytes() for p in (flows, dmr, bundled, SAMPLE, plant, sub)}
    r = run_cli("spdes", "check", *source, "--plant", str(plant), "--submittal", str(sub), "--as-of", "2024-12-31",
                "--report", report)
    assert r.exit_code == 2, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --report"), r.stderr
    assert {p: p.read_bytes() for p in before} == before
    assert not (tmp_path / "elsewhere.html").exists()


def test_added_flows_that_overflow_are_refused(run_cli):
    r = run_cli("spdes", "check", "--flows", "sample-wwtp", "--limit-mgd", "0.5", "--added-gpd", "1e308", "--json", "--watershed")
    assert r.exit_code == 2 and "--added-gpd[0]: got 1e+308; allowed: a number in [0, 1e+09]" in r.stderr
    r = run_cli("spdes", "check", "--flows", "sample-wwtp", "--limit-mgd", "0.5", "--added-gpd", "6e8", "--added-gpd", "6e8",
                "--watershed")
    assert r.exit_code == 2 and "sum to 1,200,000,000 gpd" in r.stderr
    r = run_cli("spdes", "phosphorus", "--permitted-gpd", "1e308", "--watershed")
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1


# --- issue 14 items 9, 10, 13, 14: watershed or not, as-of date, exit codes, submittal ---------------
import datetime as dt
import hashlib


def _record(tmp_path, start, end, base, months=None, name="flows.csv"):
    """A daily record at ``base`` MGD every day, ``months`` ({"2024-06": 0.52}) at another flow every day:
    every calendar-month average is then exactly that flow, by hand."""
    days = pd.date_range(start, end, freq="D")
    flow = [(months or {}).get(d.strftime("%Y-%m"), base) for d in days]
    p = tmp_path / name
    p.write_text("date,flow_mgd\n" + "".join(f"{d:%Y-%m-%d},{q:.4f}\n" for d, q in zip(days, flow)))
    return p


def _run_json(run_cli, *args):
    r = run_cli("spdes", "check", *args, "--json")
    return r, (json.loads(r.stdout) if r.stdout.strip().startswith("{") else None)


def test_watershed_plant_with_a_violation_exits_1_with_the_18_37_conditions(run_cli, tmp_path):
    """Hand computation, 15 RCNY § 18-37(b) ("prohibited where the wastewater treatment plant ... which discharges
    within the watershed has had a SPDES flow parameter violation in the prior twelve months"):

    Record 2024-01-01 to 2024-12-31 at 0.40 MGD every day, June 2024 at 0.52 MGD every day; limit 0.50 MGD on the
    monthly average; as of 2024-12-31 the prior twelve months are the months ending after 2023-12-31, January to
    December 2024. June's average is 0.52 MGD > 0.50 MGD: a violation in the prior twelve months, so PROHIBITED
    (exit 1, issue 14 item 13) whatever the added flow. Headroom = (0.50 - 0.52) x 1,000,000 - 5,000 = -25,000 gpd.
    The conditions are those of § 18-37(c)(1) (48-hour notice), (c)(2) (superintendent's permit), (c)(3) (owner's
    statement that no SPDES permit modification is needed), (e) (five-year expiry) and (j)(2) (letter of flow acceptance).
    """
    p = _record(tmp_path, "2024-01-01", "2024-12-31", 0.40, {"2024-06": 0.52})
    r, doc = _run_json(run_cli, "--flows", str(p), "--limit-mgd", "0.5", "--watershed", "--as-of", "2024-12-31",
                       "--added-gpd", "5000")
    assert r.exit_code == 1 and doc is not None  # the JSON is still printed
    assert doc["verdict"] == "fail" and doc["connection_prohibited"] is True and doc["treatment_capacity_shown"] is False
    assert doc["watershed"] is True and doc["rule"] == "15 RCNY § 18-37(b)"
    assert doc["grounds"] == ["prior violation", "added flow"] and doc["worst_period"]["label"] == "2024-06"
    assert doc["worst_average_mgd"] == pytest.approx(0.52, abs=1e-12)
    assert doc["headroom_gpd"] == pytest.approx(-25_000.0, abs=1e-6)
    assert [c["citation"] for c in doc["conditions"]] == [
        "15 RCNY § 18-37(c)(1)", "15 RCNY § 18-37(c)(2)(i)-(ii)", "15 RCNY § 18-37(c)(3)(i)-(ii)",
        "15 RCNY § 18-37(e)", "15 RCNY § 18-37(j)(2)"]
    texts = " ".join(c["text"] for c in doc["conditions"])
    for words in ("48 hours", "superintendent", "will not require a modification of the plant's SPDES permit",
                  "five (5) years", "letter of flow acceptance"):
        assert words in texts
    assert all(c["citation"] == "15 RCNY § 18-37(b)" for c in doc["checks"])
    table = run_cli("spdes", "check", "--flows", str(p), "--limit-mgd", "0.5", "--watershed", "--as-of", "2024-12-31")
    assert table.exit_code == 1 and "PROHIBITED as of 2024-12-31" in table.stdout
    assert "15 RCNY § 18-37(c)(1)" in table.stdout and "15 RCNY § 18-37(j)(2)" in table.stdout


def test_sample_prohibited_exits_1_and_pass_exits_0(run_cli):
    """The bundled record: April 2023 (0.5202 MGD) is in the prior twelve months as of 2024-03-31: exit 1."""
    r = run_cli("spdes", "check", "--flows", "sample-wwtp", "--limit-mgd", "0.5", "--watershed", "--as-of", "2024-03-31", "--json")
    assert r.exit_code == 1 and json.loads(r.stdout)["connection_prohibited"] is True
    r = run_cli("spdes", "check", "--flows", "sample-wwtp", "--limit-mgd", "0.5", "--watershed", "--as-of", "2024-12-31")
    assert r.exit_code == 0 and "NOT PROHIBITED" in r.stdout


@pytest.mark.parametrize("added, headroom, shown", [("30000", 10_000.0, True), ("40000", 0.0, True),
                                                    ("50000", -10_000.0, False)])
def test_non_watershed_plant_is_permitted_flow_headroom_without_18_37(run_cli, tmp_path, added, headroom, shown):
    """A Binghamton-like plant discharging to the Susquehanna: § 18-37(b) does not apply (it reaches only a plant
    "which discharges within the watershed"); treatment capacity is the permitted-flow headroom.

    Record 2024-01-01 to 2024-12-31 at 0.40 MGD, July 2024 at 0.46 MGD; permit limit 0.50 MGD (monthly average);
    as of 2024-12-31. Highest monthly average in the prior twelve months: July, 0.46 MGD. Headroom before the added
    flow = (0.50 - 0.46) x 1,000,000 = 40,000 gpd; after 30,000 gpd: 10,000 gpd (shown, exit 0); after 40,000 gpd:
    0 gpd (at the limit: shown, exit 0); after 50,000 gpd: -10,000 gpd (not shown, exit 1). Never prohibited.
    """
    p = _record(tmp_path, "2024-01-01", "2024-12-31", 0.40, {"2024-07": 0.46})
    report = tmp_path / "river.html"
    args = ["--flows", str(p), "--limit-mgd", "0.5", "--not-watershed", "--as-of", "2024-12-31", "--added-gpd", added,
            "--spdes-permit", "NY0024414", "--plant-name", "River WWTP", "--report", str(report)]
    r, doc = _run_json(run_cli, *args)
    assert r.exit_code == (0 if shown else 1) and doc is not None
    assert doc["watershed"] is False and doc["connection_prohibited"] is False and doc["grounds"] == []
    assert doc["treatment_capacity_shown"] is shown and doc["verdict"] == ("pass" if shown else "fail")
    assert doc["headroom_before_gpd"] == pytest.approx(40_000.0, abs=1e-6)
    assert doc["headroom_gpd"] == pytest.approx(headroom, abs=1e-6)
    assert doc["conditions"] == []
    assert doc["rule"].startswith("permitted flow headroom") and "NY0024414" in doc["rule"]
    assert [c["criterion"] for c in doc["checks"]] == ["permitted-flow headroom before the added flow >= 0",
                                                       "permitted-flow headroom after the added flow >= 0"]
    assert all("SPDES permit NY0024414" in c["citation"] for c in doc["checks"])
    assert [c["passed"] for c in doc["checks"]] == [True, shown]
    assert "18-37" not in r.stdout and "18-36" not in r.stdout  # no § 18-37(b) citation anywhere in the JSON
    page = report.read_text()
    assert "18-37" not in page and "18-36" not in page  # nor in the report (phosphorus is a watershed rule too)
    assert "River WWTP" in page and "NY0024414" in page
    table = run_cli("spdes", "check", *args[:-2])
    assert table.exit_code == r.exit_code
    assert "15 RCNY § 18-37(b) does not apply" in table.stdout
    assert ("TREATMENT CAPACITY SHOWN" if shown else "NO TREATMENT CAPACITY SHOWN") in table.stdout


def test_watershed_flag_is_required_or_from_the_plant_file(run_cli, tmp_path):
    r = run_cli("spdes", "check", "--flows", "sample-wwtp", "--limit-mgd", "0.5", "--as-of", "2024-12-31")
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "--watershed: missing; allowed: --watershed or --not-watershed (does the plant discharge within the NYC " \
           "watershed? 15 RCNY § 18-37(b) applies only then), unless the --plant file says it" in r.stderr
    plant = tmp_path / "river.toml"
    plant.write_text('name = "River WWTP"\nwatershed = false\nspdes_permit = "NY0024414"\nflow_limit_mgd = 0.5\n'
                     'receiving_water = "Susquehanna River"\n')
    r, doc = _run_json(run_cli, "--plant", str(plant), "--flows", "sample-wwtp", "--as-of", "2024-12-31")
    assert r.exit_code == 0 and doc["watershed"] is False and doc["limit_mgd"] == 0.5 and doc["limit_source"] == "plant file"
    assert doc["submittal"]["plant"] == "River WWTP" and doc["submittal"]["spdes_permit"] == "NY0024414"
    assert doc["plant"]["receiving_water"] == "Susquehanna River"
    assert doc["plant"]["file"] == {"name": "river.toml", "sha256": hashlib.sha256(plant.read_bytes()).hexdigest()}
    r = run_cli("spdes", "check", "--plant", str(plant), "--watershed", "--flows", "sample-wwtp", "--as-of", "2024-12-31")
    assert r.exit_code == 2 and "--watershed contradicts the plant file river.toml: watershed = false" in r.stderr
    # the bundled plant files
    r, doc = _run_json(run_cli, "--plant", "sample-wwtp", "--flows", "sample-wwtp", "--as-of", "2024-12-31")
    assert r.exit_code == 0 and doc["watershed"] is True and doc["basis"] == "month" and doc["limit_mgd"] == 0.5
    r, doc = _run_json(run_cli, "--plant", "sample-river-wwtp", "--flows", "sample-wwtp", "--as-of", "2024-12-31")
    assert r.exit_code == 0 and doc["watershed"] is False and doc["plant"]["receiving_water"] == "Susquehanna River"


def test_as_of_defaults_to_today_and_a_stale_record_warns_or_is_refused(run_cli, tmp_path):
    """Issue 14 item 10: the as-of date is today unless given (the record's last day no longer is); a record ending
    more than 45 days before it (policy record_max_age_days) is a warning, refused (exit 3) with --strict-record-age.

    A record ending 10 days before today: no warning; one ending 60 days before: 60 > 45, a warning."""
    today = dt.date.today()
    fresh = _record(tmp_path, today - dt.timedelta(days=500), today - dt.timedelta(days=10), 0.40, name="fresh.csv")
    r, doc = _run_json(run_cli, "--flows", str(fresh), "--limit-mgd", "0.5", "--watershed")
    assert r.exit_code == 0 and doc["as_of"] == today.isoformat() and doc["as_of_basis"] == "today"
    assert doc["warnings"] == [] and doc["record_age_days"] == 10
    stale = _record(tmp_path, today - dt.timedelta(days=500), today - dt.timedelta(days=60), 0.40, name="stale.csv")
    r, doc = _run_json(run_cli, "--flows", str(stale), "--limit-mgd", "0.5", "--watershed")
    assert r.exit_code == 0 and doc["as_of"] == today.isoformat() and doc["record_age_days"] == 60
    assert len(doc["warnings"]) == 1 and "60 days before the as-of date" in doc["warnings"][0]
    assert "record_max_age_days = 45" in doc["warnings"][0] and "warning: " in r.stderr
    assert {p["name"]: p["value"] for p in doc["policies"]}["record_max_age_days"] == 45
    assert all(p["status"] == "program interpretation — confirm with DEP" for p in doc["policies"])
    table = run_cli("spdes", "check", "--flows", str(stale), "--limit-mgd", "0.5", "--watershed")
    assert table.exit_code == 0 and "warning: the flow record ends" in table.stdout
    strict = run_cli("spdes", "check", "--flows", str(stale), "--limit-mgd", "0.5", "--watershed", "--strict-record-age")
    assert strict.exit_code == 3 and len(strict.stderr.strip().splitlines()) == 1 and "--strict-record-age" in strict.stderr
    # the application date is the other basis; both at once is bad input
    app = (today - dt.timedelta(days=20)).isoformat()
    r, doc = _run_json(run_cli, "--flows", str(fresh), "--limit-mgd", "0.5", "--watershed", "--application-date", app)
    assert r.exit_code == 0 and doc["as_of"] == app and doc["as_of_basis"] == "application date"
    r = run_cli("spdes", "check", "--flows", str(fresh), "--limit-mgd", "0.5", "--watershed", "--application-date", app,
                "--as-of", app)
    assert r.exit_code == 2 and "not both" in r.stderr


def test_the_bundled_record_as_of_today_is_bad_input_naming_its_age(run_cli):
    """The sample ends 2024-12-31: as of today no month of it is in the prior twelve months (run after 2025-12-31)."""
    if dt.date.today() <= dt.date(2025, 12, 31):
        pytest.skip("the sample record still has months in the look-back window today")
    r = run_cli("spdes", "check", "--flows", "sample-wwtp", "--limit-mgd", "0.5", "--watershed")
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "look-back window" in r.stderr and "the record ends 2024-12-31" in r.stderr and "--as-of" in r.stderr


def test_submittal_on_the_json_and_the_report_and_no_machine_path(run_cli, tmp_path):
    p = _record(tmp_path, "2024-01-01", "2024-12-31", 0.40)
    report = tmp_path / "out" / "check.html"
    report.parent.mkdir()
    fields = {"--project-number": "DEP-2025-0042", "--applicant": "Oak Street LLC", "--engineer": "A. Engineer",
              "--engineer-license": "PE 012345", "--site-address": "12 Oak St, Walton NY", "--bbl": "1-00012-0045",
              "--plant-name": "Walton WWTP", "--spdes-permit": "NY0024414"}
    args = [a for kv in fields.items() for a in kv]
    r, doc = _run_json(run_cli, "--flows", str(p), "--limit-mgd", "0.5", "--watershed", "--as-of", "2024-12-31",
                       "--report", str(report), *args)
    assert r.exit_code == 0
    assert doc["submittal"] == {"project_number": "DEP-2025-0042", "applicant": "Oak Street LLC", "engineer": "A. Engineer",
                                "engineer_license": "PE 012345", "site_address": "12 Oak St, Walton NY",
                                "bbl": "1-00012-0045", "plant": "Walton WWTP", "spdes_permit": "NY0024414"}
    sha = hashlib.sha256(p.read_bytes()).hexdigest()
    assert doc["source_file"] == {"name": "flows.csv", "sha256": sha} and doc["source_sha256"] == sha
    page = report.read_text()
    for value in fields.values():
        assert value in page
    assert page.index("Submittal") < page.index("Verdict")  # the submittal block heads the report
    assert f"flows.csv (SHA-256 {sha})" in page
    assert str(tmp_path) not in page and str(p) not in page  # no absolute path of the machine
    # from a --submittal file too, the options overriding it
    sub = tmp_path / "submittal.toml"
    sub.write_text('[submittal]\nproject_number = "FILE-1"\napplicant = "From File"\n')
    r, doc = _run_json(run_cli, "--flows", str(p), "--limit-mgd", "0.5", "--watershed", "--as-of", "2024-12-31",
                       "--submittal", str(sub), "--project-number", "OPT-2")
    assert doc["submittal"]["project_number"] == "OPT-2" and doc["submittal"]["applicant"] == "From File"
    # a bundled record's report names the file, not the package folder
    report2 = tmp_path / "bundled.html"
    run_cli("spdes", "check", "--flows", "sample-wwtp", "--limit-mgd", "0.5", "--watershed", "--as-of", "2024-12-31",
            "--report", str(report2))
    page2 = report2.read_text()
    assert "sample-wwtp.csv (SHA-256 " in page2 and "site-packages" not in page2
    assert str(SAMPLE.parent) not in page2 and str(SAMPLE.resolve().parent) not in page2
