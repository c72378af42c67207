"""Two applications, each passing alone, failing together: the bank never approves both (issue 24, end to end).

Real SWMM through the real CLI on a copy of the bundled ``synthetic-50`` registered as basin CSO1's model of
record (outlet MH0004, plant NY0024414). Measured once with ``capacitysim headroom --model synthetic-50 --storm
binghamton-1yr-24h --nodes MH0010,MH0011``: MH0010 takes 13,120 gpd (13,760 fails), MH0011 13,200 gpd (13,850
fails), both governed downstream in the same basin. So 9,000 gpd at each passes alone (about 30 % below either
bracket) and 18,000 gpd together is more than either node takes (37 % above the larger bracket): the
demonstration with the other committed must fail. The treatment side is the issue's own case: 20,000 gpd of
SPDES headroom (0.48 of 0.50 MGD) and two 12,000 gpd applications.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil

import numpy as np
import pandas as pd
import pytest

from capacitysim.bank import Ledger
from capacitysim.io.bundled import model_path as bundled_model_path
from tests.bank_support import quantification

pytestmark = [pytest.mark.swmm]

ANN, BOB = "Ann Admin", "Bob Checker"
JC = "Village of Johnson City"
PLANT = "NY0024414"
STORM = "binghamton-1yr-24h"
GPD = 9000
TODAY = dt.date.today()


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("race")
    model = tmp / "system.inp"
    shutil.copyfile(bundled_model_path("synthetic-50"), model)
    days = pd.date_range(TODAY - dt.timedelta(days=400), TODAY - dt.timedelta(days=1), freq="D")
    flows = tmp / "flows.csv"
    pd.DataFrame({"date": days.strftime("%Y-%m-%d"), "flow_mgd": np.full(days.size, 0.48)}).to_csv(flows, index=False)
    bank = tmp / "bank.sqlite"
    with Ledger(bank, create=True, actor=ANN, administrator=ANN) as ann:
        ann.add_administrator(BOB)
        ann.add_entity(JC, municipal=True)
        ann.add_basin("CSO1", outlet="MH0004", model=model, plant=PLANT)
        txn = ann.deposit("CSO1", JC, 100000, "P-1", quantification=quantification(tmp, "P-1", 100000))["txn"]
    with Ledger(bank, actor=BOB) as bob:
        bob.sign_off(txn)
    return {"tmp": tmp, "model": model, "flows": flows, "bank": bank}


def _capacity(run_cli, s, node, out, gpd=GPD, committed=True, application=None):
    args = ["capacity", "--model", str(s["model"]), "--storm", STORM, "--connect", f"{node}={gpd}", "--json"]
    if committed:
        args += ["--committed", str(s["bank"])]
    if application:
        args += ["--application", application]
    r = run_cli(*args)
    assert r.exit_code in (0, 1), r.output
    out.write_text(r.stdout)
    return json.loads(r.stdout)


def _spdes(run_cli, s, gpd, out, application=None, project=None):
    args = ["spdes", "check", "--flows", str(s["flows"]), "--limit-mgd", "0.5", "--watershed", "--spdes-permit", PLANT,
            "--added-gpd", str(gpd), "--committed", str(s["bank"]), "--project-number", project or out.stem, "--json"]
    if application:
        args += ["--application", application]
    r = run_cli(*args)
    assert r.exit_code in (0, 1, 3), r.output
    out.write_text(r.stdout)
    return json.loads(r.stdout)


def _withdraw(run_cli, s, app, node, cap, spd, gpd=GPD):
    return run_cli("bank", "--db", str(s["bank"]), "--actor", ANN, "withdraw", "--basin", "CSO1", "--owner", JC,
                   "--gpd", str(gpd), "--average-gpd", str(gpd), "--application", app, "--node", node,
                   "--application-approval", f"H2-{app}", "--capacity-ref", str(cap), "--spdes-ref", str(spd), "--json")


def test_two_applications_each_passing_alone_are_never_both_approved(run_cli, setup):
    s, tmp = setup, setup["tmp"]
    # both engineers demonstrate at the same time: nothing is committed yet, each passes alone
    a = _capacity(run_cli, s, "MH0010", tmp / "cap-a.json")
    b = _capacity(run_cli, s, "MH0011", tmp / "cap-b.json")
    assert a["verdict"] == b["verdict"] == "pass", (a["verdict"], b["verdict"])
    assert a["committed"]["flows"] == [] and b["committed"]["flows"] == []
    sa = _spdes(run_cli, s, GPD, tmp / "spdes-a.json")
    sb = _spdes(run_cli, s, GPD, tmp / "spdes-b.json")
    assert sa["committed_gpd"] == sb["committed_gpd"] == 0.0
    # A reserves first; B's evidence, which leaves A out, is refused (exit 3) naming A
    r = _withdraw(run_cli, s, "A-1", "MH0010", tmp / "cap-a.json", tmp / "spdes-a.json")
    assert r.exit_code == 0, r.output
    r = _withdraw(run_cli, s, "B-1", "MH0011", tmp / "cap-b.json", tmp / "spdes-b.json")
    assert r.exit_code == 3, r.output
    assert "leaves out 1 commitment(s) made so far: A-1 (9,000 gpd at MH0010, reserved)" in r.stderr
    # demonstrated again with A committed, B fails: together they do not fit
    b2 = _capacity(run_cli, s, "MH0011", tmp / "cap-b2.json")
    assert [f["application"] for f in b2["committed"]["flows"]] == ["A-1"]
    assert b2["verdict"] == "fail", b2["verdict"]
    r = _withdraw(run_cli, s, "B-1", "MH0011", tmp / "cap-b2.json", tmp / "spdes-b.json")
    assert r.exit_code == 3 and "verdict FAIL" in r.stderr, r.output
    # A's sign-off stands; B holds nothing
    with Ledger(s["bank"], actor=BOB) as bob:
        txn = bob.withdrawal("A-1")["signoff_txn"]
        bob.sign_off(txn)
        assert bob.withdrawal("A-1")["status"] == "approved"
        assert [w["application"] for w in bob.withdrawals()] == ["A-1"]
        assert bob.verify()["ok"]


def test_the_treatment_check_of_the_issue_12000_and_12000_on_20000(run_cli, setup, tmp_path):
    """Two 12,000 gpd applications on a plant with 20,000 gpd of headroom: the second's check with the first
    committed finds the connection prohibited (headroom -4,000 gpd), and the bank will not take the first check."""
    s = setup
    with Ledger(s["bank"], actor=ANN) as ann:
        ann.record_application("S-12", JC, 12000, basin="CSO1", node="MH0012", average_gpd=12000)
    try:
        d = _spdes(run_cli, s, 12000, tmp_path / "spdes.json")
        assert d["committed_gpd"] >= 12000
        assert d["connection_prohibited"] and d["headroom_gpd"] <= -4000 + 1e-6
    finally:
        with Ledger(s["bank"], actor=ANN) as ann:
            ann.return_credits("S-12", reason="test case over")
