"""The capacity register in the bank (issue 24): registered system models, section A on the graph,
committed flows, connection, expiry, and evidence that must include every commitment.

Real SQLite files; the model of record is the bundled ``synthetic-50`` (the engine opens it when it
is registered). Its graph: basin CSO1's outlet is MH0004 (31 nodes upstream, MH0010 among them, and
MH0017 through the pump station PS1_WW); MH0001 is downstream of MH0004 (towards the plant); MH0045
drains to the plant on another branch, through MH0001. Evidence documents here are
written by hand in the shape `capacitysim capacity/spdes check --committed --json` writes (the
end-to-end runs with real SWMM are in tests/workflows/test_committed_race.py).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import shutil
import uuid

import pytest

from capacitysim.bank import Ledger
from capacitysim.bank import commitments as commit_module
from capacitysim.errors import InputError, RefusedError
from capacitysim.network.basins import find_basins
from capacitysim.network.model import load_model
from capacitysim.io.bundled import model_path as bundled_model_path
from tests.bank_support import quantification

ANN, BOB = "Ann Admin", "Bob Checker"
JC, DEV = "Village of Johnson City", "Acme Development"
PLANT = "NY0024414"
TODAY = dt.date.today()


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    src = bundled_model_path("synthetic-50")
    dst = tmp_path_factory.mktemp("model") / "system.inp"
    shutil.copyfile(src, dst)
    return dst


def _sha(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def test_the_graph_facts_this_module_relies_on(model_file):
    """Guard the fixture: if synthetic-50 changes, the cases below would test nothing."""
    import networkx as nx

    from capacitysim.network.model import network_graph

    g = network_graph(load_model(model_file, probe=False))
    up = nx.ancestors(g, "MH0004")
    assert {"MH0010", "MH0017", "PS1_WW"} <= up and not {"MH0001", "MH0045"} & up
    assert "MH0045" in nx.ancestors(g, "MH0001") and "MH0004" in nx.ancestors(g, "MH0001")


@pytest.fixture
def bank(tmp_path, model_file):
    path = tmp_path / "bank.sqlite"
    with Ledger(path, create=True, actor=ANN, administrator=ANN) as ann:
        ann.add_administrator(BOB)
        ann.add_entity(JC, municipal=True)
        ann.add_entity(DEV)
        ann.add_basin("CSO1", outlet="MH0004", model=model_file, plant=PLANT)
        txn = ann.deposit("CSO1", JC, 100000, "P-1", quantification=quantification(tmp_path, "P-1", 100000))["txn"]
    ann, bob = Ledger(path, actor=ANN), Ledger(path, actor=BOB)
    bob.sign_off(txn)
    yield {"ann": ann, "bob": bob, "path": path, "tmp": tmp_path, "model": model_file}
    v = ann.verify()
    assert v["ok"], v
    ann.close()
    bob.close()


def evidence(folder, node, gpd, committed, *, model_sha, as_of=TODAY) -> tuple[str, str]:
    """A passing capacity demonstration and SPDES check that include ``committed`` (a commitments() dict or None)."""
    k = uuid.uuid4().hex[:8]
    block = None if committed is None else {
        "bank_head": committed["bank_head"], "as_of": committed["as_of"],
        "flows": [{"application": f["application"], "node": f["node"], "average_gpd": f["average_gpd"]}
                  for f in committed["flows"]]}
    cap, spd = folder / f"cap-{k}.json", folder / f"spdes-{k}.json"
    cap.write_text(json.dumps({"kind": "capacity-demonstration", "verdict": "pass", "run": k,
                               "external_files": [{"verb": "MODEL", "path": "system.inp", "sha256": model_sha}],
                               "scenario": {"connections": [{"node": node, "flow_gpd": gpd}]}, "committed": block}))
    spd.write_text(json.dumps({"kind": "spdes-check", "run": k, "as_of": as_of.isoformat(), "added_gpd": gpd,
                               "treatment_capacity_shown": True, "committed": block,
                               "committed_gpd": 0.0 if block is None else sum(f["average_gpd"] for f in block["flows"])}))
    return str(cap), str(spd)


def _apply(lg, app, node="MH0010", gpd=12000.0, *, committed="auto", **kw):
    sha = _sha(lg.models("CSO1")[-1]["path"])
    if committed == "auto":
        committed = lg.commitments(model_sha256=sha, exclude=app)
    cap, spd = evidence(lg.path.parent, node, gpd, committed, model_sha=sha, as_of=kw.get("on") or TODAY)
    return lg.withdraw("CSO1", JC, gpd, app, node=node, capacity_ref=cap, spdes_ref=spd,
                       application_approval=f"H2-{app}", **kw)


# --- 1. the registered system model and section A on its graph ---------------------------------------------


def test_a_model_is_registered_with_its_sha256_by_an_administrator_only(bank, model_file):
    m = bank["ann"].models("CSO1")
    assert len(m) == 1 and m[0]["version"] == 1 and m[0]["sha256"] == _sha(model_file) and m[0]["current"]
    assert m[0]["outlet"] == "MH0004" and m[0]["plant"] == PLANT and m[0]["nodes"] > 40
    with Ledger(bank["path"], actor="Cal Clerk") as clerk, pytest.raises(RefusedError, match="not a registered bank"):
        clerk.register_model("CSO1", model_file)
    with pytest.raises(InputError, match="outlet 'NOPE' is not a node"):
        bank["ann"].register_model("CSO1", model_file, outlet="NOPE")


@pytest.mark.parametrize("node, ok, names", [
    ("MH0010", True, None),                 # upstream of the outlet
    ("MH0017", True, None),                 # upstream, through a pump station
    ("MH0004", True, None),                 # the outlet itself
    ("mh0010", True, None),                 # a node named in another case is the model's node
    ("MH0001", False, "PLANT"),             # downstream of the outlet
    ("MH0045", False, "PLANT"),             # another branch (the example)
])
def test_section_a_a_withdrawal_node_must_drain_to_the_basin_outlet(bank, node, ok, names):
    ann = bank["ann"]
    if ok:
        out = _apply(ann, "A-1", node=node)
        assert out["node"] == node.upper()
        assert ann.journal()[-1]["detail"]["section_a"] == "checked"
    else:
        with pytest.raises(RefusedError) as exc:
            _apply(ann, "A-1", node=node)
        msg = str(exc.value)
        assert f"node {node} drains to" in msg and names in msg and "not to MH0004, the outlet of basin CSO1" in msg
        assert "section A" in msg
        assert ann.withdrawals() == []  # nothing recorded


def test_section_a_names_the_other_basin_outlet_a_node_drains_to(bank, model_file):
    ann = bank["ann"]
    ann.add_basin("TRUNK", outlet="MH0001", model=model_file, plant=PLANT)
    with pytest.raises(RefusedError, match=r"node MH0045 drains to MH0001 \(outlet of basin TRUNK\), PLANT"):
        _apply(ann, "A-1", node="MH0045")


def test_a_node_not_in_the_registered_model_is_an_input_error(bank):
    with pytest.raises(InputError, match="node 'MH9999' is not a node of the registered model"):
        _apply(bank["ann"], "A-1", node="MH9999")


def test_a_changed_model_file_is_refused_until_its_new_version_is_registered(bank, tmp_path):
    ann, path = bank["ann"], bank["model"]
    original = path.read_bytes()
    try:
        path.write_bytes(original + b"\n; edited\n")
        with pytest.raises(RefusedError, match="has changed since it was registered"):
            _apply(ann, "A-1", committed=None)
        out = ann.register_model("CSO1", path, reason="survey 2026")
        assert out["version"] == 2 and out["outlet"] == "MH0004" and out["plant"] == PLANT
        _apply(ann, "A-1")
    finally:
        path.write_bytes(original)


def test_a_basin_without_a_registered_model_records_that_section_a_was_not_checked(bank):
    ann = bank["ann"]
    ann.add_basin("OLD", outlet="X1")
    txn = ann.deposit("OLD", JC, 10000, "P-9", quantification=quantification(bank["tmp"], "P-9", 10000))["txn"]
    bank["bob"].sign_off(txn)
    ann.withdraw("OLD", JC, 3000, "A-9", node="anything")
    d = ann.journal()[-1]["detail"]
    assert d["section_a"].startswith("not checked") and d["policy"] == "section_a_unregistered"


# --- 2. committed flows ------------------------------------------------------------------------------------


def test_reserved_approved_and_small_applications_are_commitments_until_released(bank):
    ann, bob = bank["ann"], bank["bob"]
    sha = _sha(bank["model"])
    assert ann.commitments(model_sha256=sha)["flows"] == []
    w = _apply(ann, "A-1", average_gpd=3000)
    assert ann.commitments(model_sha256=sha)["flows"][0]["status"] == "reserved"
    bob.sign_off(w["txn"])
    ann.record_application("S-1", JC, 2000, basin="CSO1", node="MH0011", average_gpd=500)
    c = ann.commitments(model_sha256=sha)
    assert [(f["application"], f["status"], f["average_gpd"], f["peak_gpd"], f["node"]) for f in c["flows"]] == [
        ("A-1", "approved", 3000.0, 12000.0, "MH0010"), ("S-1", "received", 500.0, 2000.0, "MH0011")]
    assert c["total_gpd"] == 3500.0 and c["total_peak_gpd"] == 14000.0 and c["bank_head"] == ann.head()["head"]
    assert c["basins"] == ["CSO1"] and ann.commitments(plant=PLANT.lower())["total_gpd"] == 3500.0
    assert [f["application"] for f in ann.commitments(model_sha256=sha, exclude="a-1")["flows"]] == ["S-1"]
    # connected: still committed until a registered version contains it
    ann.connect("A-1", TODAY)
    assert ann.commitments(model_sha256=sha)["flows"][0]["status"] == "connected"
    with pytest.raises(RefusedError, match="S-1' is not connected"):
        ann.register_model("CSO1", bank["model"], includes=["S-1"])
    with pytest.raises(RefusedError, match="connected on .*cannot be returned"):
        ann.return_credits("A-1", reason="changed mind")
    ann.register_model("CSO1", bank["model"], includes=["A-1"], reason="as-built survey")
    assert [f["application"] for f in ann.commitments(model_sha256=sha)["flows"]] == ["S-1"]
    ann.return_credits("S-1", reason="withdrawn by the applicant")
    assert ann.commitments(model_sha256=sha)["flows"] == []


def test_an_unknown_model_or_plant_names_what_is_registered(bank):
    with pytest.raises(InputError, match="not the current registered model of any basin.*basin CSO1: system.inp"):
        bank["ann"].commitments(model_sha256="0" * 64)
    with pytest.raises(InputError, match=f"registered plants: {PLANT}"):
        bank["ann"].commitments(plant="NY0000000")


def test_an_approval_expires_after_the_policy_period_and_releases_its_commitment(bank):
    """15 RCNY 18-37(e): five years from issuance (program policy approval_expiry_years)."""
    ann, bob = bank["ann"], bank["bob"]
    sha = _sha(bank["model"])
    long_ago = TODAY - dt.timedelta(days=365 * 6)
    txn = ann.deposit("CSO1", JC, 20000, "P-old", quantification=quantification(bank["tmp"], "P-old", 20000),
                      certified_on=long_ago - dt.timedelta(days=30))["txn"]
    late = "paper records of 2020 entered in the bank"  # program policy no_backdating: late entries, both dates kept
    bob.sign_off(txn, on=long_ago - dt.timedelta(days=30), late_reason=late)
    w = _apply(ann, "A-1", on=long_ago, late_reason=late)
    bob.sign_off(w["txn"], on=long_ago, late_reason=late)
    ann.record_application("S-1", JC, 1500, basin="CSO1", node="MH0011", received_on=long_ago,
                           application_approval="H2-S-1", late_reason=late)
    # void on the day the period ends, even before `bank expire` records it
    assert ann.commitments(model_sha256=sha)["flows"] == []
    assert [f["application"] for f in ann.commitments(model_sha256=sha, as_of=long_ago)["flows"]] == ["A-1", "S-1"]
    balance = ann.balance("CSO1", JC)["balance_gpd"]
    out = ann.expire()
    assert [r["application"] for r in out] == ["A-1", "S-1"]
    assert ann.balance("CSO1", JC)["balance_gpd"] == balance + 12000
    assert ann.withdrawal("A-1")["expired_on"] == TODAY.isoformat() and ann.withdrawal("A-1")["status"] == "returned"
    assert ann.expire() == []


def test_a_connection_is_recorded_once_after_the_approval(bank):
    ann, bob = bank["ann"], bank["bob"]
    w = _apply(ann, "A-1")
    with pytest.raises(RefusedError, match="is pending; only an approved application is connected"):
        ann.connect("A-1")
    bob.sign_off(w["txn"])
    with pytest.raises(RefusedError, match="cannot be back-dated"):
        ann.connect("A-1", TODAY - dt.timedelta(days=3))
    with pytest.raises(InputError, match="before the approval"):
        ann.connect("A-1", TODAY - dt.timedelta(days=3), late_reason="connected before the note was entered")
    ann.connect("A-1")
    with pytest.raises(RefusedError, match="was connected on"):
        ann.connect("A-1")


# --- 4. evidence that stays true ---------------------------------------------------------------------------


def test_two_applications_demonstrated_alone_cannot_both_be_reserved(bank):
    ann = bank["ann"]
    sha = _sha(bank["model"])
    alone = ann.commitments(model_sha256=sha)  # both applicants ran with nothing committed
    _apply(ann, "A-1", committed=alone)
    with pytest.raises(RefusedError) as exc:
        _apply(ann, "A-2", node="MH0011", committed=alone)
    msg = str(exc.value)
    assert "leaves out 1 commitment(s) made so far: A-1 (12,000 gpd at MH0010, reserved)" in msg
    assert "--committed BANK" in msg
    assert [w["application"] for w in ann.withdrawals()] == ["A-1"]
    out = _apply(ann, "A-2", node="MH0011")  # demonstrated again with A-1 committed
    assert out["capacity_included"] == ["A-1"] and out["spdes_included"] == ["A-1"]


def test_evidence_run_without_committed_is_refused_when_there_are_commitments(bank):
    ann = bank["ann"]
    _apply(ann, "A-1")
    with pytest.raises(RefusedError, match="capacity_ref: .*leaves out 1 commitment"):
        _apply(ann, "A-2", committed=None)


def test_evidence_that_understates_a_commitment_or_moves_it_is_refused(bank):
    ann = bank["ann"]
    _apply(ann, "A-1", average_gpd=3000)
    c = ann.commitments(model_sha256=_sha(bank["model"]))
    c["flows"][0]["average_gpd"] = 1000.0
    with pytest.raises(RefusedError, match="the document has 1,000 gpd"):
        _apply(ann, "A-2", committed=c)
    c["flows"][0]["average_gpd"], c["flows"][0]["node"] = 3000.0, "MH0011"
    with pytest.raises(RefusedError, match="the document has it at MH0011"):
        _apply(ann, "A-2", committed=c)


def test_a_demonstration_on_another_model_is_refused(bank, tmp_path):
    ann = bank["ann"]
    cap, spd = evidence(tmp_path, "MH0010", 12000.0, None, model_sha="ab" * 32)
    with pytest.raises(RefusedError, match="ran a model of SHA-256 abababababab.*registered model is version 1"):
        ann.withdraw("CSO1", JC, 12000, "A-1", node="MH0010", capacity_ref=cap, spdes_ref=spd)


def test_the_sign_off_refuses_evidence_that_leaves_out_a_commitment_made_since(bank):
    """A-1 reserved without evidence; A-2 reserved with A-1 committed; A-1 then attaches evidence that includes A-2
    (both pass together). A small application S-1 recorded after A-2's demonstration: A-2's sign-off is refused."""
    ann, bob = bank["ann"], bank["bob"]
    sha = _sha(bank["model"])
    w1 = ann.withdraw("CSO1", JC, 12000, "A-1", node="MH0010", application_approval="H2-A-1")
    w2 = _apply(ann, "A-2", node="MH0011")
    assert w2["capacity_included"] == ["A-1"]
    cap, spd = evidence(bank["tmp"], "MH0010", 12000.0, ann.commitments(model_sha256=sha, exclude="A-1"), model_sha=sha)
    ann.attach("A-1", capacity_ref=cap, spdes_ref=spd)
    ann.record_application("S-1", JC, 2000, basin="CSO1", node="MH0012", average_gpd=600)
    with pytest.raises(RefusedError, match="leaves out 1 commitment\\(s\\) made since it was run: S-1"):
        bob.sign_off(w2["txn"])
    assert ann.withdrawal("A-2")["status"] == "pending"
    with pytest.raises(RefusedError, match="S-1"):
        bob.sign_off(w1["txn"])


def test_the_sign_off_refuses_evidence_on_a_superseded_model_version(bank):
    ann, bob = bank["ann"], bank["bob"]
    w = _apply(ann, "A-1")
    path = bank["model"]
    original = path.read_bytes()
    try:
        path.write_bytes(original + b"\n; v2\n")
        ann.register_model("CSO1", path)
        with pytest.raises(RefusedError, match="registered model is version 2"):
            bob.sign_off(w["txn"])
    finally:
        path.write_bytes(original)


def test_the_register_lists_models_and_plants_with_their_commitments(bank):
    ann = bank["ann"]
    _apply(ann, "A-1", average_gpd=3000)
    ann.record_application("S-1", JC, 2000, basin="CSO1", node="MH0011", average_gpd=500)
    reg = ann.register()
    assert reg["bank_head"] == ann.head()["head"]
    (m,) = reg["models"]
    assert [b["basin"] for b in m["basins"]] == ["CSO1"] and m["total_gpd"] == 3500.0
    (p,) = reg["plants"]
    assert p["plant"] == PLANT and p["committed_gpd"] == 3500.0 and p["flows"] == ["A-1", "S-1"]


def test_add_years_keeps_29_february_in_the_calendar():
    assert commit_module.add_years(dt.date(2024, 2, 29), 5) == dt.date(2029, 2, 28)


def test_commitments_not_read_from_this_bank_are_refused(bank, tmp_path):
    """A document whose committed block names a bank head this bank's journal never had was not read from it."""
    ann = bank["ann"]
    c = ann.commitments(model_sha256=_sha(bank["model"]))
    c["bank_head"] = "cd" * 32
    with pytest.raises(RefusedError, match="were not read from this bank"):
        _apply(ann, "A-1", committed=c)


@pytest.mark.parametrize("sql, found", [
    ("UPDATE withdrawals SET connected_on = NULL", "connected_on None but its journal row says"),
    ("UPDATE withdrawals SET average_gpd = 10", "average 10.0 gpd but its journal row says 3000"),
    ("UPDATE system_models SET includes = '[\"A-1\"]'", "includes ['A-1'] but its journal row says []"),
    ("UPDATE system_models SET sha256 = '" + "e" * 64 + "'", "model_sha256"),
])
def test_verify_finds_a_commitment_released_or_a_model_changed_outside_the_journal(bank, sql, found):
    """Someone with write access drops the guards and edits a record to release a commitment or swap the model of
    record: verify names it (the journal's rows are the record)."""
    import sqlite3

    ann, bob = bank["ann"], bank["bob"]
    w = _apply(ann, "A-1", average_gpd=3000)
    bob.sign_off(w["txn"])
    ann.connect("A-1")
    assert ann.verify()["ok"]
    raw = sqlite3.connect(bank["path"])
    for t in ("withdrawals_commitment_once", "withdrawals_forward_only", "system_models_no_update"):
        raw.execute(f"DROP TRIGGER IF EXISTS {t}")
    raw.execute(sql)
    raw.commit()
    raw.close()
    v = ann.verify()
    assert not v["ok"] and any(found in p for p in v["problems"]), v["problems"]
    # put the file back for the fixture's own verify
    raw = sqlite3.connect(bank["path"])
    raw.execute("UPDATE withdrawals SET connected_on = ?, average_gpd = 3000", (TODAY.isoformat(),))
    raw.execute("UPDATE system_models SET includes = '[]', sha256 = ?", (_sha(bank["model"]),))
    raw.commit()
    raw.close()


def test_six_processes_reserving_at_once_on_evidence_that_omits_the_others_one_wins(bank):
    """Six engineers demonstrated at the same moment, nothing committed; six `bank withdraw` processes start
    together. BEGIN IMMEDIATE serialises them and the evidence check runs inside the transaction: exactly one is
    reserved, each other exits 3 naming the winner as the commitment its evidence leaves out."""
    import os
    import subprocess
    import sys

    ann = bank["ann"]
    sha = _sha(bank["model"])
    alone = ann.commitments(model_sha256=sha)
    nodes = ["MH0010", "MH0011", "MH0012", "MH0013", "MH0014", "MH0016"]
    env = dict(os.environ, CAPACITYSIM_ACTOR=ANN)
    procs = []
    for i, node in enumerate(nodes):
        cap, spd = evidence(bank["tmp"], node, 3000.0, alone, model_sha=sha)
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "capacitysim", "bank", "--db", str(bank["path"]), "withdraw", "--basin", "CSO1",
             "--owner", JC, "--gpd", "3000", "--application", f"R-{i}", "--node", node, "--capacity-ref", cap,
             "--spdes-ref", spd], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    results = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    codes = [rc for rc, _ in results]
    assert codes.count(0) == 1 and codes.count(3) == 5, results
    (winner,) = [w["application"] for w in ann.withdrawals()]
    for rc, err in results:
        if rc == 3:
            assert f"leaves out 1 commitment(s) made so far: {winner} (3,000 gpd" in err, err
