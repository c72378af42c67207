"""`capacitysim bank ...` and `capacitysim credits ...`: exit codes, one-line refusals, JSON, reports.

Since issue 14 deposits, withdrawals and transfers are recorded pending and take effect at
`bank sign-off TXN` by a registered bank administrator who did not record them (the fixture's clerk
records and is one; the checker, a second one, signs off: program policy signoff_separation); a withdrawal
cites the JSON documents of `capacity` and `spdes check` (section H(1)) and an application approval
(section H(2)), and needs --node.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.bank_support import quantification

#: entries are recorded on their own days (program policy no_backdating): tests/conftest.py bank_calendar
pytestmark = pytest.mark.usefixtures("bank_calendar")


ROOT = Path(__file__).resolve().parents[2]
PROJECTS = ROOT / "models" / "projects"
B, JC, DEV = "JC CSO 4", "Village of Johnson City", "Acme Development"
CLERK = "Cal Clerk"  # the person acting; registered as bank administrator at init
CHECKER = "Cora Checker"  # a second bank administrator: signs off what the clerk records
NODE = "MH0001"


def quantified(run, project, gpd) -> tuple[str, str]:
    """``--quantification FILE`` for `bank deposit`: a PE's quantification of ``project`` (``gpd``) in ``run.tmp``."""
    return ("--quantification", quantification(run.tmp, project, gpd))


def sign_off(run, res, *extra):
    """Sign off what the command whose result is ``res`` recorded (its JSON ``txn``)."""
    assert res.exit_code == 0, res.output
    out = run("sign-off", json.loads(res.stdout)["txn"], "--json", "--actor", CHECKER, *extra)
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def evidence(folder, *, node=NODE, gpd=3000.0, as_of="2024-01-01", added=None, **spdes_keys):
    """The JSON documents a withdrawal cites: a passing capacity demonstration connecting ``gpd`` at
    ``node``, and a SPDES check adding ``added`` (default ``gpd``) as of ``as_of``."""
    import uuid

    k = uuid.uuid4().hex[:8]
    cap, spd = folder / f"cap-{k}.json", folder / f"spdes-{k}.json"
    # "run": each pair is a document of its own (program policy evidence_single_use: one document, one application)
    cap.write_text(json.dumps({"kind": "capacity-demonstration", "verdict": "pass", "run": k,
                               "scenario": {"connections": [{"node": node, "flow_gpd": gpd}]}}))
    spd.write_text(json.dumps({"kind": "spdes-check", "verdict": "pass", "as_of": as_of, "run": k,
                               "added_gpd": gpd if added is None else added, "connection_prohibited": False, **spdes_keys}))
    return str(cap), str(spd)


def approved(run, app, gpd=3000, on="2024-01-01", owner=JC, *extra):
    """A withdrawal with its section H references, signed off on ``on`` (the flow credit note)."""
    cap, spd = evidence(run.tmp, gpd=float(gpd), as_of=on)
    res = run("withdraw", "--basin", B, "--owner", owner, "--gpd", str(gpd), "--application", app, "--node", NODE,
              "--capacity-ref", cap, "--spdes-ref", spd, "--application-approval", f"H2-{app}", "--on", on, "--json", *extra)
    return sign_off(run, res, "--on", on)


@pytest.fixture
def bank(tmp_path, run_cli):
    db = str(tmp_path / "bank.sqlite")

    def run(*args):
        return run_cli("bank", "--db", db, "--actor", CLERK, *args)

    assert run("init", "--administrator", CLERK).exit_code == 0
    assert run("add-administrator", CHECKER).exit_code == 0
    assert run("add-entity", JC, "--municipal").exit_code == 0
    assert run("add-entity", DEV).exit_code == 0
    assert run("add-basin", B, "--outlet", "CSO4").exit_code == 0
    assert run("add-basin", "Other").exit_code == 0
    run.tmp = tmp_path
    run.db = db
    res = run("deposit", "--basin", B, "--owner", JC, "--gpd", "9000", "--project", "P1", "--certificate", "cert.pdf",
              "--certified-on", "2023-12-01", *quantified(run, "P1", 9000), "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["balance_gpd"] == 0  # pending: not counted
    assert sign_off(run, res)["balance_gpd"] == 9000
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
    assert bank("init", "--administrator", CLERK).exit_code == 0
    assert balance(bank) == 9000


def test_withdraw_pending_then_attach_then_sign_off(bank):
    res = bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A1", "--node", NODE, "--on",
               "2024-04-01", "--json")
    assert res.exit_code == 0
    out = json.loads(res.stdout)
    assert out["status"] == "pending" and out["amount_gpd"] == 3000 and out["balance_gpd"] == 6000
    cap, spd = evidence(bank.tmp, as_of="2024-03-31")
    res = bank("attach", "--application", "A1", "--capacity-ref", cap, "--spdes-ref", spd, "--application-approval",
               "Village permit 2024-12", "--json")
    assert json.loads(res.stdout)["status"] == "pending"  # attaching never approves
    assert json.loads(res.stdout)["missing_for_sign_off"] == []
    txn = json.loads(res.stdout)["signoff_txn"]
    res = bank("sign-off", txn, "--on", "2024-04-02", "--json")
    assert res.exit_code == 3 and "cannot sign it off" in res.stderr  # the clerk recorded it (signoff_separation)
    res = bank("sign-off", txn, "--on", "2024-04-02", "--json", "--actor", CHECKER)
    assert res.exit_code == 0, res.output
    w = json.loads(res.stdout)
    assert w["status"] == "signed-off" and w["note_issued_on"] == "2024-04-02" and w["co_due_on"] == "2025-04-02"


def test_refusals_exit_3_with_one_line(bank):
    refused(bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "9001", "--application", "A2", "--node", NODE),
            "insufficient")
    refused(bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "2500", "--application", "A3", "--node", NODE),
            "no offset")
    refused(bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A4", "--node", NODE,
                 "--offset-ratio", "0.5"), "one-to-one offset ratio of section F")
    refused(bank("transfer", "--basin", B, "--from", JC, "--to", DEV, "--gpd", "100"), "document")
    refused(bank("transfer", "--basin", B, "--from", JC, "--to", DEV, "--gpd", "100", "--document", "bill",
                 "--to-basin", "Other"), "Board approval")
    refused(bank("transfer", "--basin", B, "--from", JC, "--to", DEV, "--gpd", "9001", "--document", "bill"), "insufficient")
    refused(bank("deposit", "--basin", B, "--owner", JC, "--gpd", "5", "--project", "P1", *quantified(bank, "P1", 5)),
            "already")
    refused(bank("add-entity", JC), "already exists")
    assert balance(bank) == 9000


@pytest.mark.parametrize(
    "args",
    [
        ("withdraw", "--basin", B, "--owner", JC, "--gpd", "lots", "--application", "A", "--node", NODE),
        ("withdraw", "--basin", B, "--owner", JC, "--application", "A", "--node", NODE),
        ("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A"),  # --node is required
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
    if args[0] == "deposit":  # a deposit citing its quantification: bad for the reason its arguments give
        args = (*args, *quantified(bank, "P9", 5))
    res = bank(*args)
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output


def test_missing_bank_file_is_bad_input(run_cli, tmp_path):
    res = run_cli("bank", "--db", str(tmp_path / "none.sqlite"), "balance")
    assert res.exit_code == 2 and "no credit bank" in res.stderr


def test_transfer_condemn_and_journal(bank):
    sign_off(bank, bank("transfer", "--basin", B, "--from", JC, "--to", DEV, "--gpd", "2000", "--document",
                        "bill of sale 12", "--reason", "sale", "--json"))
    res = bank("condemn", "--basin", B, "--from", DEV, "--by", JC, "--gpd", "500", "--project", "P1",
               "--document", "resolution 2024-3", "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["from_balance_gpd"] == 1500
    res = bank("journal", "--json")
    rows = json.loads(res.stdout)["journal"]
    assert {r["actor"] for r in rows} == {CLERK, CHECKER}  # the checker signed off
    assert {r["actor"] for r in rows if r["action"] == "sign-off"} == {CHECKER}
    assert sum(r["delta_gpd"] for r in rows if r["owner"] == DEV) == balance(bank, DEV) == 1500
    assert any(r["documents"] == ["bill of sale 12"] and r["reason"] == "sale" for r in rows)
    csv_path = bank.tmp / "journal.csv"
    assert bank("journal", "--csv", str(csv_path)).exit_code == 0
    with csv_path.open() as fh:
        assert len(list(csv.DictReader(fh))) == len(rows)
    res = bank("verify", "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["ok"]


def test_default_and_complete(bank):
    approved(bank, "A1")
    approved(bank, "A2")
    assert bank("complete", "--application", "A2", "--co-date", "2024-11-01").exit_code == 0
    res = bank("check-defaults", "--as-of", "2025-01-02", "--json")
    out = json.loads(res.stdout)
    assert [d["application"] for d in out["defaulted"]] == ["A1"]
    assert [p["name"] for p in out["policies"]] == ["default_credits"]  # what happens to the credits: a policy
    assert balance(bank) == 6000


def test_report_writes_parts_a_to_d_as_csv_and_html(bank):
    bank("add-project", "P7", "--basin", B, "--jurisdiction", JC, "--priority", "1", "--estimated-gpd", "4000",
         "--description", "Elm St sumps")
    approved(bank, "A1")
    bank("complete", "--application", "A1", "--co-date", "2024-06-01")
    bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "2600", "--application", "A2", "--node", NODE)
    out = bank.tmp / "report"
    res = bank("report", "--municipal-user", JC, "--out", str(out), "--json")
    assert res.exit_code == 0, res.output
    info = json.loads(res.stdout)
    assert info["rows"]["a_available_projects"] == 1 and info["rows"]["b_completed_projects"] == 1
    # C lists every application (A1 completed, A2 pending), D every completed connection
    assert info["rows"]["c_applications"] == 2 and info["rows"]["d_connections_completed"] == 1
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


#: A withdrawal date within the program policy spdes_evidence_max_age_days of the sample plant record's
#: last day (2024-12-31, the `as_of` of `spdes check --flows sample-wwtp`).
SPDES_ON = "2025-01-15"


@pytest.fixture(scope="module")
def real_evidence(tmp_path_factory):
    """Real outputs of `capacitysim capacity` (one SWMM before/after pair) and `capacitysim spdes check`."""
    from click.testing import CliRunner

    from capacitysim.cli import cli

    d = tmp_path_factory.mktemp("evidence")

    def run(*args):
        res = CliRunner().invoke(cli, list(args), catch_exceptions=False)
        assert res.exit_code == 0, res.output
        return res.stdout

    def spdes(*args, watershed=True):
        """`spdes check` of the sample plant as of its record's last day; the plant's watershed status and
        --as-of are given where the command takes them (issue 14), else the older invocation is used."""
        res = CliRunner().invoke(cli, ["spdes", "check", "--flows", "sample-wwtp", *args, "--as-of", "2024-12-31",
                                       "--watershed" if watershed else "--not-watershed"], catch_exceptions=False)
        if res.exit_code == 2 and "No such option" in res.output:
            res = CliRunner().invoke(cli, ["spdes", "check", "--flows", "sample-wwtp", *args], catch_exceptions=False)
        assert res.exit_code in (0, 1), res.output  # 1: the verdict is fail (the JSON is still printed)
        return res.stdout

    (d / "cap.json").write_text(run("capacity", "--model", str(MODEL), "--connect", "MH0001=3000", "--json",
                                    "--report", str(d / "cap.html")))
    (d / "spdes.json").write_text(spdes("--limit-mgd", "0.6", "--added-gpd", "3000", "--json", "--report", str(d / "spdes.html")))
    (d / "spdes-prohibited.json").write_text(spdes("--limit-mgd", "0.3", "--json", "--report",
                                                   str(d / "spdes-prohibited.html")))
    # a plant outside the watershed: not prohibited by 15 RCNY § 18-37(b), but no permitted-flow headroom left
    (d / "spdes-no-headroom.json").write_text(spdes("--limit-mgd", "0.3", "--added-gpd", "3000", "--json",
                                                    watershed=False))
    return d


def _sha(path):
    import hashlib

    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.mark.swmm
def test_withdraw_cites_real_capacity_and_spdes_files_with_sha256(bank, real_evidence):
    evidence = real_evidence
    cap, spd = evidence / "cap.json", evidence / "spdes.json"
    assert json.loads((evidence / "cap.json").read_text())["verdict"] == "pass"
    res = bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A1", "--capacity-ref", str(cap),
               "--spdes-ref", str(spd), "--node", NODE, "--on", SPDES_ON, "--application-approval", "permit 12", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["status"] == "pending" and out["missing_for_sign_off"] == []
    assert sign_off(bank, res, "--on", SPDES_ON)["status"] == "signed-off"
    assert json.loads(bank("balance", "--basin", B, "--owner", JC, "--json").stdout)["reserved_gpd"] == 3000
    assert out["capacity_ref"] == str(cap.resolve()) and out["capacity_sha256"] == _sha(cap)
    assert out["spdes_ref"] == str(spd.resolve()) and out["spdes_sha256"] == _sha(spd)
    row = [r for r in json.loads(bank("journal", "--json").stdout)["journal"] if r["action"] == "withdraw"][0]
    assert row["detail"]["capacity_sha256"] == _sha(cap) and row["detail"]["capacity_verdict"] == "pass"
    assert row["detail"]["spdes_verdict"] == "treatment capacity shown"
    # treatment_capacity_shown decides when the document has it (issue 14), else not connection_prohibited
    spdes_doc = json.loads(spd.read_text())
    assert row["detail"]["spdes_basis"] == ("treatment_capacity_shown" if "treatment_capacity_shown" in spdes_doc
                                            else "not connection_prohibited")
    assert row["detail"]["spdes_added_gpd"] == 3000.0 and row["detail"]["spdes_as_of"] == "2024-12-31"
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
        assert {r["kind"]: r["status"] for r in v["refs"]} == {"capacity": "changed", "spdes": "ok", "quantification": "ok"}
        assert any("changed since it was recorded" in p for p in v["problems"])
    finally:
        cap.write_bytes(cap.read_bytes()[:-1])
    assert bank("verify").exit_code == 0


@pytest.mark.swmm
def test_failing_or_prohibiting_evidence_is_refused(bank, real_evidence, tmp_path):
    evidence = real_evidence
    doc = json.loads((evidence / "cap.json").read_text())
    for verdict in ("fail", "untrusted"):
        bad = tmp_path / f"cap-{verdict}.json"
        bad.write_text(json.dumps(doc | {"verdict": verdict}))
        refused(bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A1", "--node", NODE,
                     "--capacity-ref", str(bad)), verdict.upper())
    refused(bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A1", "--node", NODE,
                 "--on", SPDES_ON, "--spdes-ref", str(evidence / "spdes-prohibited.json")), "PROHIBITED")
    assert balance(bank) == 9000
    # a pending withdrawal cannot get a prohibiting check attached either
    assert bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A2", "--node", NODE,
                "--on", SPDES_ON, "--capacity-ref", str(evidence / "cap.json")).exit_code == 0
    refused(bank("attach", "--application", "A2", "--spdes-ref", str(evidence / "spdes-prohibited.json")), "PROHIBITED")
    res = bank("attach", "--application", "A2", "--spdes-ref", str(evidence / "spdes.json"), "--json")
    assert json.loads(res.stdout)["status"] == "pending"
    # a recorded reference cannot be swapped afterwards
    refused(bank("attach", "--application", "A2", "--capacity-ref", str(evidence / "cap.json")), "cannot be replaced")


@pytest.mark.swmm
@pytest.mark.parametrize(
    ("opt", "name", "word"),
    [
        ("--capacity-ref", "spdes.json", "cite it with --spdes-ref"),  # swapped
        ("--spdes-ref", "cap.json", "cite it with --capacity-ref"),
        ("--capacity-ref", "no/such/report.json", "no file"),
        ("--spdes-ref", "missing.html", "no file"),
        ("--capacity-ref", "cap-run-17", "a run id is not accepted"),  # free-text run ids: refused since issue 14
        ("--spdes-ref", "spdes-3", "a run id is not accepted"),
    ],
)
def test_wrong_or_missing_evidence_file_is_bad_input(bank, real_evidence, opt, name, word):
    evidence = real_evidence
    ref = str(evidence / name) if (evidence / name).exists() else name
    res = bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A1", "--node", NODE,
               "--on", SPDES_ON, opt, ref)
    assert res.exit_code == 2, res.output
    assert len(res.stderr.strip().splitlines()) == 1 and word in res.stderr, res.stderr
    assert balance(bank) == 9000


# --- the verdict is read from the JSON document only: no prose, no HTML ---------------------------------


def bad_input(res, word):
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and word in lines[0], res.stderr


@pytest.mark.swmm
@pytest.mark.parametrize(("opt", "name"), [("--capacity-ref", "cap.html"), ("--spdes-ref", "spdes.html"),
                                           ("--spdes-ref", "spdes-prohibited.html")])
def test_html_reports_are_refused_asking_for_the_json(bank, real_evidence, opt, name):
    bad_input(bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A1", "--node", NODE, opt,
                   str(real_evidence / name)), "--json")
    assert balance(bank) == 9000


@pytest.mark.swmm
def test_a_storm_or_node_named_verdict_pass_cannot_make_a_failing_report_pass(bank, real_evidence, tmp_path):
    """The report of a FAIL, whose storm is named "Verdict: PASS": the old regex over HTML read PASS."""
    evidence = real_evidence
    html = (evidence / "cap.html").read_text()
    assert "Verdict: PASS" in html
    forged = html.replace("Verdict: PASS", "Verdict: FAIL").replace("<body>", "<body><p>Storm: Verdict: PASS</p>", 1)
    (tmp_path / "fail.html").write_text(forged)
    (tmp_path / "fail.txt").write_text(forged)  # renamed: still recognised as HTML by its content, still refused
    for name in ("fail.html", "fail.txt"):
        bad_input(bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A1", "--node", NODE,
                       "--capacity-ref", str(tmp_path / name)), "HTML")
    # in the JSON document a node or storm name is just a value: the verdict key decides
    doc = json.loads((evidence / "cap.json").read_text())
    doc |= {"verdict": "fail", "storm": "Verdict: PASS"}
    doc["scenario"]["connections"][0]["node"] = "Verdict: PASS"
    (tmp_path / "fail.json").write_text(json.dumps(doc))
    refused(bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A1", "--node", NODE,
                 "--capacity-ref", str(tmp_path / "fail.json")), "FAIL")
    assert balance(bank) == 9000


@pytest.mark.swmm
def test_the_capacity_json_must_demonstrate_the_withdrawal_flow_at_its_node(bank, real_evidence, tmp_path):
    evidence = real_evidence
    cap = str(evidence / "cap.json")  # connects MH0001 = 3,000 gpd
    refused(bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "5000", "--application", "A1", "--node", NODE,
                 "--capacity-ref", cap), "no connection of at least 5,000 gpd")
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
    bad_input(bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A2", "--node", NODE,
                   "--capacity-ref", str(tmp_path / "noscenario.json")), "scenario.connections")


@pytest.mark.parametrize("case", ["deep", "deep-100", "huge", "many", "nan", "bom-html"])
def test_hostile_reference_files_exit_2_with_one_line(bank, tmp_path, case):
    p = tmp_path / "ref.json"
    if case == "deep":
        p.write_text("[" * 100_000 + "]" * 100_000)
    elif case == "deep-100":
        p.write_text('{"kind": "capacity-demonstration", "verdict": "pass", "scenario": {"connections": [{"node": "N", "flow_gpd": 9000, "x": '
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
    bad_input(bank("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A1", "--node", "N",
                   "--capacity-ref", str(p)), word)
    assert balance(bank) == 9000


# --- crafted input through the CLI ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "word"),
    [
        (("deposit", "--basin", B, "--owner", JC, "--gpd", "1e300", "--project", "P9"), "<= 1,000,000,000 gpd"),
        (("deposit", "--basin", B, "--owner", JC, "--gpd", "nan", "--project", "P9"), "gpd must be > 0"),
        (("deposit", "--basin", B, "--owner", JC, "--gpd", "inf", "--project", "P9"), "gpd must be > 0"),
        (("deposit", "--basin", B, "--owner", JC, "--gpd", "0", "--project", "P9"), "gpd must be > 0"),
        (("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A", "--node", NODE, "--offset-ratio",
          "11"), "offset_ratio"),
        (("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A", "--node", NODE, "--on",
          "2999-01-01"), "future"),
        (("add-entity", "Bad\nName"), "U+000A"),
        (("add-entity", "Zero\u200bWidth"), "U+200B"),
        (("add-entity", "x" * 501), "at most 500"),
        (("check-defaults", "--as-of", "2999-01-01"), "future"),
    ],
)
def test_crafted_input_exits_2_with_one_line_naming_the_field(bank, args, word):
    if args[0] == "deposit":  # a deposit citing its quantification: bad for the reason its arguments give
        args = (*args, *quantified(bank, "P9", 1e9))
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
    sign_off(bank, bank("transfer", "--basin", B, "--from", JC, "--to", "Cafe\u0301", "--gpd", "10", "--document", "bill",
                        "--json"))
    assert balance(bank, "Caf\u00e9") == 10


def test_huge_deposits_never_overflow_the_integer_books(bank):
    # 1e9 gpd is the largest single amount; repeated, the sum stays an exact integer
    for i in range(3):
        sign_off(bank, bank("deposit", "--basin", B, "--owner", JC, "--gpd", "1e9", "--project", f"BIG{i}",
                            *quantified(bank, f"BIG{i}", 1e9), "--json"))
    assert balance(bank) == 9000 + 3 * 10**9
    v = json.loads(bank("verify", "--json").stdout)
    assert v["ok"] and v["held_gpd"] == 9000 + 3 * 10**9


# --- issue 14: provenance, sign-off, section H references, report C and D, policies, actor ----------------------


@pytest.fixture
def bjc(tmp_path, run_cli):
    """A bank with Johnson City, Binghamton and Dev LLC; the clerk records, Ada Lee is the administrator."""
    db = str(tmp_path / "bjc.sqlite")

    def run(*args, actor=CLERK):
        return run_cli("bank", "--db", db, "--actor", actor, *args)

    assert run("init", "--administrator", "Ada Lee").exit_code == 0
    for args in ((JC, "--municipal"), ("City of Binghamton", "--municipal"), ("Dev LLC",)):
        assert run("add-entity", *args).exit_code == 0
    assert run("add-basin", B).exit_code == 0

    def admin_signs(res):
        assert res.exit_code == 0, res.output
        out = run("sign-off", json.loads(res.stdout)["txn"], "--json", actor="Ada Lee")
        assert out.exit_code == 0, out.output
        return json.loads(out.stdout)

    run.admin_signs = admin_signs
    run.tmp = tmp_path
    return run


def test_cli_johnson_city_condemning_dev_llcs_binghamton_credits_exits_3_naming_the_lots(bjc):
    """Section D: only credits "generated in relation to an I/I remediation project within such municipal
    user's boundaries". Dev LLC bought 5,000 gpd of Binghamton's BG-1; Johnson City's own project is JC-1."""
    bjc.admin_signs(bjc("deposit", "--basin", B, "--owner", "City of Binghamton", "--gpd", "8000", "--project", "BG-1",
                        "--certified-on", "2024-02-01", *quantified(bjc, "BG-1", 8000), "--json"))
    bjc.admin_signs(bjc("deposit", "--basin", B, "--owner", JC, "--gpd", "6000", "--project", "JC-1",
                        *quantified(bjc, "JC-1", 6000), "--json"))
    bjc.admin_signs(bjc("transfer", "--basin", B, "--from", "City of Binghamton", "--to", "Dev LLC", "--gpd", "5000",
                        "--document", "bill of sale 2024-3 (notarized)", "--json"))
    for project in (("--project", "JC-1"), ()):
        res = bjc("condemn", "--basin", B, "--from", "Dev LLC", "--by", JC, "--gpd", "3000", *project, "--document",
                  "Village resolution 2024-33")
        refused(res, "from project BG-1 (jurisdiction City of Binghamton)")
        assert "section D" in res.stderr and "eligible 0 gpd, asked 3,000 gpd" in res.stderr
    res = bjc("balance", "--basin", B, "--owner", "Dev LLC", "--lots", "--json")
    out = json.loads(res.stdout)
    assert out["balance_gpd"] == 5000 and [(x["project"], x["jurisdiction"]) for x in out["lots"]] == [
        ("BG-1", "City of Binghamton")]
    assert out["allocation_policy"] == "FIFO"


def test_cli_an_80000_gpd_withdrawal_on_a_0_gpd_spdes_check_exits_3(bjc):
    """The reported case: 80,000 gpd approved on a SPDES check with 0 gpd added; now refused (section H(1))."""
    bjc.admin_signs(bjc("deposit", "--basin", B, "--owner", JC, "--gpd", "100000", "--project", "JC-1",
                        *quantified(bjc, "JC-1", 100000), "--json"))
    cap, spd = evidence(bjc.tmp, gpd=80000.0, added=0.0, as_of="2025-03-01")
    res = bjc("withdraw", "--basin", B, "--owner", JC, "--gpd", "80000", "--application", "A-80k", "--node", NODE,
              "--capacity-ref", cap, "--spdes-ref", spd, "--on", "2025-03-10")
    refused(res, "added 0 gpd, less than the withdrawal's 80,000 gpd")
    assert json.loads(bjc("balance", "--basin", B, "--owner", JC, "--json").stdout)["balance_gpd"] == 100000


def test_cli_sign_off_by_a_non_administrator_exits_3_and_by_the_administrator_records_who_and_when(bjc):
    """Definitions, BANK ADMINISTRATOR: "review and sign off on all ... bank deposits, withdrawals and transfers"."""
    res = bjc("deposit", "--basin", B, "--owner", JC, "--gpd", "9000", "--project", "JC-1", *quantified(bjc, "JC-1", 9000),
              "--json")
    txn = json.loads(res.stdout)["txn"]
    refused(bjc("sign-off", txn), "'Cal Clerk' is not a registered bank administrator")
    refused(bjc("sign-off", txn, actor="Eve Intruder"), "is not a registered bank administrator")
    refused(bjc("add-administrator", "Eve Intruder", actor="Eve Intruder"), "not a registered bank administrator")
    pend = json.loads(bjc("pending", "--json").stdout)
    assert [p["txn"] for p in pend["pending"]] == [txn] and pend["policies"][0]["name"] == "pending_reserve"
    # `--actor` on the command, as in `bank sign-off TXN --actor "NAME"`
    res = bjc("sign-off", txn[:10], "--actor", "Ada Lee", "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["signed_off_by"] == "Ada Lee"
    rows = json.loads(bjc("journal", "--json").stdout)["journal"]
    sign = next(r for r in rows if r["action"] == "sign-off")
    assert sign["actor"] == "Ada Lee" and sign["at"] and sign["detail"]["recorded_by"] == CLERK
    assert json.loads(bjc("pending", "--json").stdout)["pending"] == []


def test_cli_annual_report_c_lists_small_and_returned_applications_and_d_a_connection_without_credits(bjc):
    """Records section C: every application for a new or modified connection or extension, so a 2,000 gpd
    one (no offset: 2,000 <= 2,500 gpd) and a returned one; D: every connection completed since
    2013-01-01, so the 2,000 gpd connection that used no credits (credits_used_gpd 0)."""
    import csv

    bjc.admin_signs(bjc("deposit", "--basin", B, "--owner", JC, "--gpd", "9000", "--project", "JC-1", "--certified-on",
                        "2024-01-02", *quantified(bjc, "JC-1", 9000), "--json"))
    assert bjc("record-application", "A-2000", "--principal", JC, "--gpd", "2000", "--basin", B, "--received-on",
               "2024-01-05", "--application-approval", "Village permit 2024-3").exit_code == 0
    assert bjc("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A-ret", "--node", NODE,
               "--on", "2024-02-01").exit_code == 0
    assert bjc("return", "--application", "A-ret", "--reason", "returned incomplete").exit_code == 0
    assert bjc("complete", "--application", "A-2000", "--co-date", "2024-06-30").exit_code == 0
    out = bjc.tmp / "rep"
    res = bjc("report", "--municipal-user", JC, "--out", str(out), "--json")
    assert res.exit_code == 0, res.output
    info = json.loads(res.stdout)
    assert info["rows"]["c_applications"] == 2 and info["rows"]["d_connections_completed"] == 1
    assert {p["name"] for p in info["policies"]} >= {"allocation_policy", "pending_reserve", "default_credits",
                                                     "extension_after_due_date", "spdes_evidence_max_age_days"}
    with (out / "c_applications.csv").open() as fh:
        c = {r["application"]: r for r in csv.DictReader(fh)}
    assert (c["A-2000"]["status"], c["A-2000"]["credits_reserved_gpd"], c["A-2000"]["offset_required"]) == (
        "completed", "0", "False")
    assert c["A-ret"]["status"] == "returned" and c["A-ret"]["credits_reserved_gpd"] == "3000"
    with (out / "d_connections_completed.csv").open() as fh:
        d = list(csv.DictReader(fh))
    assert [(r["application"], r["credits_used_gpd"], r["co_issued_on"]) for r in d] == [("A-2000", "0", "2024-06-30")]
    html = (out / "report.html").read_text()
    assert "Program policies in force" in html and "program interpretation — confirm with the bank administrator" in html
    with (out / "policies.csv").open() as fh:
        assert all(r["text"].startswith("program interpretation") for r in csv.DictReader(fh))


def test_cli_help_calls_default_and_extension_choices_program_policy_not_the_rule(run_cli):
    """Item 7: what happens to a defaulted note's credits and refusing a late extension are not in the text:
    the help says "program policy"; it never presents them as the rule (and prints no policy verdict)."""
    for cmd in ("check-defaults", "extend"):
        text = " ".join(run_cli("bank", cmd, "--help").stdout.split())
        assert "program policy" in text
        assert "the rule" not in text and "program interpretation" not in text
    text = " ".join(run_cli("bank", "policies").stdout.split())
    for name in ("default_credits return-to-holder", "extension_after_due_date refused", "allocation_policy FIFO",
                 "spdes_evidence_max_age_days 90", "pending_reserve reserve-when-recorded"):
        assert f"program policy {name}: program interpretation — confirm with the bank administrator" in text


def test_cli_default_and_late_extension_print_the_policy(bank):
    approved(bank, "A1", on="2024-01-01")
    res = bank("extend", "--application", "A1", "--until", "2025-06-01", "--document", "Board letter", "--granted-on",
               "2025-01-02")
    refused(res, "program policy extension_after_due_date (program interpretation — confirm with the bank administrator)")
    res = bank("check-defaults", "--as-of", "2025-01-02")
    assert res.exit_code == 0
    assert "program policy default_credits  return-to-holder: program interpretation — confirm with the bank administrator" \
        in res.stdout


@pytest.mark.parametrize(("actor", "word"), [("root", "single word"), ("clerk", "single word"),
                                             ("Bank Administrator", "role or an account"), ("C3PO Droid", "U+0033")])
def test_cli_actor_must_be_a_persons_name(bank, actor, word):
    res = bank("add-entity", "X Corp", "--actor", actor)
    assert res.exit_code == 2 and word in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_cli_writing_without_an_actor_exits_2_and_never_uses_the_login(bank, run_cli, monkeypatch):
    monkeypatch.delenv("CAPACITYSIM_ACTOR", raising=False)
    monkeypatch.setenv("LOGNAME", "jsmith")
    res = run_cli("bank", "--db", bank.db, "add-entity", "X Corp")
    assert res.exit_code == 2 and "needs the person acting" in res.stderr
    assert run_cli("bank", "--db", bank.db, "balance").exit_code == 0  # reading needs no actor
    assert "$CAPACITYSIM_ACTOR; the login name is never used" in " ".join(run_cli("bank", "--help").stdout.split())
