"""`capacitysim bank ...` and `capacitysim credits ...`: exit codes, one-line refusals, JSON, reports."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parents[2]
PROJECTS = ROOT / "models" / "projects"
B, JC, DEV = "JC CSO 4", "Village of Johnson City", "Acme Development"


@pytest.fixture
def bank(tmp_path, run_cli):
    db = str(tmp_path / "bank.sqlite")

    def run(*args):
        return run_cli("bank", "--db", db, "--actor", "clerk", *args)

    assert run("init").exit_code == 0
    assert run("add-entity", JC, "--municipal").exit_code == 0
    assert run("add-entity", DEV).exit_code == 0
    assert run("add-basin", B, "--outlet", "CSO4").exit_code == 0
    assert run("add-basin", "Other").exit_code == 0
    res = run("deposit", "--basin", B, "--owner", JC, "--gpd", "9000", "--project", "P1", "--certificate", "cert.pdf", "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["balance_gpd"] == 9000
    run.tmp = tmp_path
    return run


def balance(run, owner=JC):
    res = run("balance", "--basin", B, "--owner", owner, "--json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)["balance_gpd"]


def refused(res, word):
    assert res.exit_code == 3, res.output
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and word in lines[0], res.stderr


def test_init_is_idempotent(bank):
    assert bank("init", "--json").exit_code == 0
    assert balance(bank) == 9000


def test_withdraw_pending_then_attach(bank):
    res = bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A1", "--json")
    assert res.exit_code == 0
    out = json.loads(res.stdout)
    assert out["status"] == "pending" and out["amount_gpd"] == 3000 and out["balance_gpd"] == 6000
    res = bank("attach", "--application", "A1", "--capacity-ref", "run-17", "--spdes-ref", "spdes-3", "--on", "2024-04-01", "--json")
    assert json.loads(res.stdout)["status"] == "approved"
    assert json.loads(res.stdout)["co_due_on"] == "2025-04-01"


def test_refusals_exit_3_with_one_line(bank):
    refused(bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "9001", "--application", "A2"), "insufficient")
    refused(bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "2500", "--application", "A3"), "no offset")
    refused(bank("transfer", "--basin", B, "--from", JC, "--to", DEV, "--gpd", "100"), "document")
    refused(bank("transfer", "--basin", B, "--from", JC, "--to", DEV, "--gpd", "100", "--document", "bill",
                 "--to-basin", "Other"), "Board approval")
    refused(bank("transfer", "--basin", B, "--from", JC, "--to", DEV, "--gpd", "9001", "--document", "bill"), "insufficient")
    refused(bank("deposit", "--basin", B, "--owner", JC, "--gpd", "5", "--project", "P1"), "already")
    refused(bank("add-entity", JC), "already exists")
    assert balance(bank) == 9000


@pytest.mark.parametrize(
    "args",
    [
        ("withdraw", "--basin", B, "--owner", JC, "--gpd", "lots", "--application", "A"),
        ("withdraw", "--basin", B, "--owner", JC, "--application", "A"),
        ("deposit", "--basin", "Nowhere", "--owner", JC, "--gpd", "5", "--project", "P9"),
        ("deposit", "--basin", B, "--owner", JC, "--gpd", "-5", "--project", "P9"),
        ("deposit", "--basin", B, "--owner", JC, "--gpd", "5", "--project", "P9", "--certified-on", "2024-13-01"),
        ("transfer", "--basin", B, "--from", JC, "--to", "Nobody", "--gpd", "5", "--document", "d"),
        ("transfer", "--basin", B, "--from", JC, "--to", DEV, "--gpd", "2.5", "--document", "d"),
        ("balance", "--basin", B, "--owner", "Nobody"),
        ("journal", "--since", "yesterday"),
    ],
)
def test_bad_input_exits_2(bank, args):
    res = bank(*args)
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output


def test_missing_bank_file_is_bad_input(run_cli, tmp_path):
    res = run_cli("bank", "--db", str(tmp_path / "none.sqlite"), "balance")
    assert res.exit_code == 2 and "no credit bank" in res.stderr


def test_transfer_condemn_and_journal(bank):
    assert bank("transfer", "--basin", B, "--from", JC, "--to", DEV, "--gpd", "2000", "--document", "bill of sale 12",
                "--reason", "sale").exit_code == 0
    res = bank("condemn", "--basin", B, "--from", DEV, "--by", JC, "--gpd", "500", "--project", "P1",
               "--document", "resolution 2024-3", "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["from_balance_gpd"] == 1500
    res = bank("journal", "--json")
    rows = json.loads(res.stdout)["journal"]
    assert {r["actor"] for r in rows} == {"clerk"}
    assert sum(r["delta_gpd"] for r in rows if r["owner"] == DEV) == balance(bank, DEV) == 1500
    assert any(r["documents"] == ["bill of sale 12"] and r["reason"] == "sale" for r in rows)
    csv_path = bank.tmp / "journal.csv"
    assert bank("journal", "--csv", str(csv_path)).exit_code == 0
    with csv_path.open() as fh:
        assert len(list(csv.DictReader(fh))) == len(rows)
    res = bank("verify", "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["ok"]


def test_default_and_complete(bank):
    bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A1", "--capacity-ref", "c",
         "--spdes-ref", "s", "--on", "2024-01-01")
    bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A2", "--capacity-ref", "c",
         "--spdes-ref", "s", "--on", "2024-01-01")
    assert bank("complete", "--application", "A2", "--co-date", "2024-11-01").exit_code == 0
    res = bank("check-defaults", "--as-of", "2025-01-02", "--json")
    assert [d["application"] for d in json.loads(res.stdout)["defaulted"]] == ["A1"]
    assert balance(bank) == 6000


def test_report_writes_parts_a_to_d_as_csv_and_html(bank):
    bank("add-project", "P7", "--basin", B, "--jurisdiction", JC, "--priority", "1", "--estimated-gpd", "4000",
         "--description", "Elm St sumps")
    bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A1", "--capacity-ref", "c",
         "--spdes-ref", "s", "--on", "2024-01-01")
    bank("complete", "--application", "A1", "--co-date", "2024-06-01")
    bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "2600", "--application", "A2")
    out = bank.tmp / "report"
    res = bank("report", "--municipal-user", JC, "--out", str(out), "--json")
    assert res.exit_code == 0, res.output
    info = json.loads(res.stdout)
    assert info["rows"]["a_available_projects"] == 1 and info["rows"]["b_completed_projects"] == 1
    assert info["rows"]["c_applications"] == 1 and info["rows"]["d_connections_completed"] == 1
    with (out / "d_connections_completed.csv").open() as fh:
        d = list(csv.DictReader(fh))
    assert d[0]["application"] == "A1" and d[0]["co_issued_on"] == "2024-06-01"
    html = (out / "report.html").read_text()
    for part in ("A. Prioritized", "B. I/I remediation projects completed", "C. Applications", "D. New or modified"):
        assert part in html
    assert "Ledger check passed" in html
    assert bank("report", "--municipal-user", DEV, "--out", str(out)).exit_code == 2


# --- credits -----------------------------------------------------------------------------------


def test_quantify_example_project_json(run_cli):
    res = run_cli("credits", "quantify", str(PROJECTS / "oak-street-sump-and-manholes.toml"), "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    gpd = [i["gpd"] for i in out["items"]]
    # by hand: CN 98, P 2.1 in -> S = 0.2040816 in, Q = (2.1 - 0.0408163)^2 / (2.1 - 0.0408163 + 0.2040816) = 1.8735044 in;
    # 12,000 ft2 roofs: 12,000 x 1.8735044/12 ft x 7.4805195 gal/ft3 = 14,014.79 gal;
    # 0.35 ac separated: 0.35 x 43,560 x 1.8735044/12 x 7.4805195 = 17,805.79 gal
    expected = [3 * 1.1 * 1440, 3 * 2.3 * 1440, 4 * 7200, 14014.79, 17805.79, 5200]
    assert gpd == pytest.approx(expected, abs=0.01)
    assert out["total_gpd"] == pytest.approx(4752 + 9936 + 28800 + 14014.79 + 17805.79 + 5200, abs=0.02)


def test_quantify_text_report_and_non_qualifying_separation(run_cli):
    res = run_cli("credits", "quantify", str(PROJECTS / "elm-street-separation-to-combined.toml"))
    assert res.exit_code == 0
    assert "DOES NOT QUALIFY" in res.stdout and "Total I/I removed (qualifying items): 7,200.0 gpd" in res.stdout


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("[project]\nid='x'\nname='y'\nengineer='z'\n", "item"),
        ("[project]\nid='x'\nname='y'\n[[item]]\ntype='sump_pump'\ncount=1\n", "engineer"),
        ("[project]\nid='x'\nname='y'\nengineer='z'\n[[item]]\ntype='sump_pump'\ncount='two'\n", "count"),
        ("[project]\nid='x'\nname='y'\nengineer='z'\n[[item]]\ntype='roof_drain'\ncover='impervious'\nsoil='C'\n", "area"),
        ("[project]\nid='x'\nname='y'\nengineer='z'\n[[item]]\ntype='lateral'\ngpd=5\n", "justification"),
        ("[project]\nid='x'\nname='y'\nengineer='z'\n[[item]]\ntype='sump_pump'\ncount=1\ncolor=1\n", "unknown key"),
        ("not toml [", "TOML"),
    ],
)
def test_quantify_bad_project_files_exit_2(run_cli, tmp_path, text, word):
    p = tmp_path / "p.toml"
    p.write_text(text)
    res = run_cli("credits", "quantify", str(p))
    assert res.exit_code == 2 and word in res.stderr, res.output
    assert len(res.stderr.strip().splitlines()) == 1


def test_connection_peak_flow_and_override_table(run_cli, tmp_path):
    res = run_cli("credits", "connection", "--use", "residence_bedroom=24", "--use", "restaurant_seat=40", "--json")
    out = json.loads(res.stdout)
    avg = 24 * 110 + 40 * 35  # 4,040 gpd
    assert out["average_gpd"] == avg
    # Harmon by hand: P = 4,040 / 100 gpcd = 40.4 persons = 0.0404 thousand; sqrt = 0.2009975;
    # PF = 18.2009975 / 4.2009975 = 4.332542; peak = 4,040 x 4.332542 = 17,503.47 gpd
    assert out["peaking_factor"] == pytest.approx(4.332542, abs=1e-6)
    assert out["peak_flow_gpd"] == pytest.approx(17503.47, abs=0.01)
    assert out["credits_required_gpd"] == pytest.approx(out["peak_flow_gpd"]) and out["offset_required"]
    assert "residence_bedroom" in out["unverified_values"]
    mine = tmp_path / "flows.toml"
    mine.write_text('[uses.apartment]\ngpd_per_unit = 200\nunit = "unit"\nsource = "Village table 3"\nverified = true\n')
    res = run_cli("credits", "connection", "--use", "apartment=5", "--flows", str(mine), "--peaking-factor", "2", "--json")
    out = json.loads(res.stdout)
    assert out["peak_flow_gpd"] == 2000 and not out["offset_required"] and out["credits_required_gpd"] == 0
    assert run_cli("credits", "connection", "--use", "castle=1").exit_code == 2
    assert run_cli("credits", "connection", "--use", "apartment").exit_code == 2


# --- the withdrawal cites the capacity demonstration and SPDES check files it relies on -----------

MODEL = ROOT / "models" / "synthetic-50.inp"


@pytest.fixture(scope="module")
def evidence(tmp_path_factory):
    """Real outputs of `capacitysim capacity` (one SWMM before/after pair) and `capacitysim spdes check`."""
    from click.testing import CliRunner

    from capacitysim.cli import cli

    d = tmp_path_factory.mktemp("evidence")

    def run(*args):
        res = CliRunner().invoke(cli, list(args), catch_exceptions=False)
        assert res.exit_code == 0, res.output
        return res.stdout

    (d / "cap.json").write_text(run("capacity", "--model", str(MODEL), "--connect", "MH0001=3000", "--json",
                                    "--report", str(d / "cap.html")))
    (d / "spdes.json").write_text(run("spdes", "check", "--flows", "sample-wwtp", "--limit-mgd", "0.6", "--added-gpd", "3000",
                                      "--json", "--report", str(d / "spdes.html")))
    (d / "spdes-prohibited.json").write_text(run("spdes", "check", "--flows", "sample-wwtp", "--limit-mgd", "0.3", "--json",
                                                 "--report", str(d / "spdes-prohibited.html")))
    return d


def _sha(path):
    import hashlib

    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def test_withdraw_cites_real_capacity_and_spdes_files_with_sha256(bank, evidence):
    cap, spd = evidence / "cap.json", evidence / "spdes.json"
    assert json.loads((evidence / "cap.json").read_text())["verdict"] == "pass"
    res = bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A1", "--capacity-ref", str(cap),
               "--spdes-ref", str(spd), "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["status"] == "approved"
    assert out["capacity_ref"] == str(cap.resolve()) and out["capacity_sha256"] == _sha(cap)
    assert out["spdes_ref"] == str(spd.resolve()) and out["spdes_sha256"] == _sha(spd)
    row = [r for r in json.loads(bank("journal", "--json").stdout)["journal"] if r["action"] == "withdraw"][0]
    assert row["detail"]["capacity_sha256"] == _sha(cap) and row["detail"]["capacity_verdict"] == "pass"
    assert row["detail"]["spdes_verdict"] == "not prohibited"
    # the model the demonstration ran and the connection it demonstrated are recorded with the withdrawal
    assert row["detail"]["capacity_model_sha256"] == _sha(MODEL)
    assert row["detail"]["capacity_connection"] == {"node": "MH0001", "flow_gpd": 3000.0}
    assert any(_sha(spd) in d for d in row["documents"])
    assert bank("verify").exit_code == 0
    # the evidence changes after the note was issued on it: verify says so and fails
    cap.write_bytes(cap.read_bytes() + b"\n")
    try:
        res = bank("verify", "--json")
        assert res.exit_code == 1
        v = json.loads(res.stdout)
        assert {r["kind"]: r["status"] for r in v["refs"]} == {"capacity": "changed", "spdes": "ok"}
        assert any("changed since it was recorded" in p for p in v["problems"])
    finally:
        cap.write_bytes(cap.read_bytes()[:-1])
    assert bank("verify").exit_code == 0


def test_failing_or_prohibiting_evidence_is_refused(bank, evidence, tmp_path):
    doc = json.loads((evidence / "cap.json").read_text())
    for verdict in ("fail", "untrusted"):
        bad = tmp_path / f"cap-{verdict}.json"
        bad.write_text(json.dumps(doc | {"verdict": verdict}))
        refused(bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A1",
                     "--capacity-ref", str(bad)), verdict.upper())
    refused(bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A1",
                 "--spdes-ref", str(evidence / "spdes-prohibited.json")), "PROHIBITED")
    assert balance(bank) == 9000
    # a pending withdrawal cannot be approved on a prohibiting check either
    assert bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A2",
                "--capacity-ref", str(evidence / "cap.json")).exit_code == 0
    refused(bank("attach", "--application", "A2", "--spdes-ref", str(evidence / "spdes-prohibited.json")), "PROHIBITED")
    res = bank("attach", "--application", "A2", "--spdes-ref", str(evidence / "spdes.json"), "--json")
    assert json.loads(res.stdout)["status"] == "approved"
    # a recorded reference cannot be swapped afterwards
    refused(bank("attach", "--application", "A2", "--capacity-ref", "run-99"), "cannot be replaced")


@pytest.mark.parametrize(
    ("opt", "name", "word"),
    [
        ("--capacity-ref", "spdes.json", "cite it with --spdes-ref"),  # swapped
        ("--spdes-ref", "cap.json", "cite it with --capacity-ref"),
        ("--capacity-ref", "no/such/report.json", "no file"),  # a mistyped path is not a run id
        ("--spdes-ref", "missing.html", "no file"),
    ],
)
def test_wrong_or_missing_evidence_file_is_bad_input(bank, evidence, opt, name, word):
    ref = str(evidence / name) if (evidence / name).exists() else name
    res = bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A1", opt, ref)
    assert res.exit_code == 2, res.output
    assert len(res.stderr.strip().splitlines()) == 1 and word in res.stderr, res.stderr
    assert balance(bank) == 9000


# --- the verdict is read from the JSON document only: no prose, no HTML ---------------------------------


def bad_input(res, word):
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and word in lines[0], res.stderr


@pytest.mark.parametrize(("opt", "name"), [("--capacity-ref", "cap.html"), ("--spdes-ref", "spdes.html"),
                                           ("--spdes-ref", "spdes-prohibited.html")])
def test_html_reports_are_refused_asking_for_the_json(bank, evidence, opt, name):
    bad_input(bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A1", opt, str(evidence / name)),
              "--json")
    assert balance(bank) == 9000


def test_a_storm_or_node_named_verdict_pass_cannot_make_a_failing_report_pass(bank, evidence, tmp_path):
    """The report of a FAIL, whose storm is named "Verdict: PASS": the old regex over HTML read PASS."""
    html = (evidence / "cap.html").read_text()
    assert "Verdict: PASS" in html
    forged = html.replace("Verdict: PASS", "Verdict: FAIL").replace("<body>", "<body><p>Storm: Verdict: PASS</p>", 1)
    (tmp_path / "fail.html").write_text(forged)
    (tmp_path / "fail.txt").write_text(forged)  # renamed: still recognised as HTML by its content, still refused
    for name in ("fail.html", "fail.txt"):
        bad_input(bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A1",
                       "--capacity-ref", str(tmp_path / name)), "HTML")
    # in the JSON document a node or storm name is just a value: the verdict key decides
    doc = json.loads((evidence / "cap.json").read_text())
    doc |= {"verdict": "fail", "storm": "Verdict: PASS"}
    doc["scenario"]["connections"][0]["node"] = "Verdict: PASS"
    (tmp_path / "fail.json").write_text(json.dumps(doc))
    refused(bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A1",
                 "--capacity-ref", str(tmp_path / "fail.json")), "FAIL")
    assert balance(bank) == 9000


def test_the_capacity_json_must_demonstrate_the_withdrawal_flow_at_its_node(bank, evidence, tmp_path):
    cap = str(evidence / "cap.json")  # connects MH0001 = 3,000 gpd
    refused(bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "5000", "--application", "A1", "--capacity-ref", cap),
            "no connection of at least 5,000 gpd")
    refused(bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A1", "--capacity-ref", cap,
                 "--node", "MH0002"), "at node 'MH0002'")
    assert balance(bank) == 9000
    res = bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A1", "--node", "MH0001", "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["status"] == "pending"
    # attach checks the recorded node and peak flow too
    doc = json.loads((evidence / "cap.json").read_text())
    doc["scenario"]["connections"][0]["node"] = "MH0002"
    (tmp_path / "elsewhere.json").write_text(json.dumps(doc))
    refused(bank("attach", "--application", "A1", "--capacity-ref", str(tmp_path / "elsewhere.json")), "at node 'MH0001'")
    assert bank("attach", "--application", "A1", "--capacity-ref", cap).exit_code == 0
    # a document without scenario.connections does not demonstrate a connection
    del doc["scenario"]
    (tmp_path / "noscenario.json").write_text(json.dumps(doc))
    bad_input(bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A2",
                   "--capacity-ref", str(tmp_path / "noscenario.json")), "scenario.connections")


@pytest.mark.parametrize("case", ["deep", "deep-100", "huge", "many", "nan", "bom-html"])
def test_hostile_reference_files_exit_2_with_one_line(bank, tmp_path, case):
    p = tmp_path / "ref.json"
    if case == "deep":
        p.write_text("[" * 100_000 + "]" * 100_000)
    elif case == "deep-100":
        p.write_text('{"verdict": "pass", "scenario": {"connections": [{"node": "N", "flow_gpd": 9000, "x": '
                     + "[" * 100 + "]" * 100 + "}]}}")
    elif case == "huge":  # 50 MB of valid JSON
        with p.open("w") as fh:
            fh.write('{"verdict": "pass", "scenario": {"connections": [{"node": "N", "flow_gpd": 9000}]}, "pad": "')
            fh.write("x" * (50 * 1024 * 1024))
            fh.write('"}')
    elif case == "many":  # 3.6 MB of empty arrays: under the size cap, but millions of objects to build
        p.write_text("[" + ",".join(["[]"] * 1_200_000) + "]")
    elif case == "nan":
        p.write_text('{"verdict": "pass", "scenario": {"connections": [{"node": "N", "flow_gpd": Infinity}]}}')
    else:
        p = tmp_path / "ref.txt"
        p.write_bytes(b"\xef\xbb\xbf  <!DOCTYPE html><p>Verdict: PASS</p>")
    word = {"deep": "nested", "deep-100": "nested", "huge": "larger than 20 MB", "many": "arrays/objects", "nan": "not valid JSON", "bom-html": "HTML"}[case]
    bad_input(bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A1", "--capacity-ref", str(p)),
              word)
    assert balance(bank) == 9000


# --- crafted input through the CLI ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "word"),
    [
        (("deposit", "--basin", B, "--owner", JC, "--gpd", "1e300", "--project", "P9"), "<= 1,000,000,000 gpd"),
        (("deposit", "--basin", B, "--owner", JC, "--gpd", "nan", "--project", "P9"), "gpd must be > 0"),
        (("deposit", "--basin", B, "--owner", JC, "--gpd", "inf", "--project", "P9"), "gpd must be > 0"),
        (("deposit", "--basin", B, "--owner", JC, "--gpd", "0", "--project", "P9"), "gpd must be > 0"),
        (("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A", "--offset-ratio", "0.5"), "offset_ratio"),
        (("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A", "--on", "2999-01-01"), "future"),
        (("add-entity", "Bad\nName"), "U+000A"),
        (("add-entity", "Zero\u200bWidth"), "U+200B"),
        (("add-entity", "x" * 501), "at most 500"),
        (("check-defaults", "--as-of", "2999-01-01"), "future"),
    ],
)
def test_crafted_input_exits_2_with_one_line_naming_the_field(bank, args, word):
    res = bank(*args)
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and word in lines[0], res.stderr
    assert balance(bank) == 9000


def test_lookalike_names_are_one_entity(bank):
    # "Café" composed (U+00E9) and decomposed (e + U+0301) are the same name; so are names differing in case
    assert bank("add-entity", "Caf\u00e9").exit_code == 0
    refused(bank("add-entity", "Cafe\u0301"), "already exists")
    refused(bank("add-entity", "village of johnson city"), "already exists as 'Village of Johnson City'")
    refused(bank("add-basin", "jc cso 4"), "already exists")
    assert bank("transfer", "--basin", B, "--from", JC, "--to", "Cafe\u0301", "--gpd", "10", "--document", "bill").exit_code == 0
    assert balance(bank, "Caf\u00e9") == 10


def test_huge_deposits_never_overflow_the_integer_books(bank):
    # 1e9 gpd is the largest single amount; repeated, the sum stays an exact integer
    for i in range(3):
        assert bank("deposit", "--basin", B, "--owner", JC, "--gpd", "1e9", "--project", f"BIG{i}").exit_code == 0
    assert balance(bank) == 9000 + 3 * 10**9
    v = json.loads(bank("verify", "--json").stdout)
    assert v["ok"] and v["held_gpd"] == 9000 + 3 * 10**9
