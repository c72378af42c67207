"""Maker-checker in the bank (the project's security issue), on real SQLite files and the real CLI.

* nobody signs off or rejects a deposit, withdrawal or transfer they recorded (program policy
  ``signoff_separation``): "recorded" is the actor of the journal row that created the pending sign-off;
* a capacity demonstration or a SPDES/treatment check (the same SHA-256) is the evidence of one
  application only (program policy ``evidence_single_use = until-rejected-or-returned``, and its
  alternative ``never-released``);
* a bank administrator binds the service's users to the bank entities they act for (program policy
  ``service_user_binding``), journaled, never deleted.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import sqlite3
import uuid

import pytest

from capacitysim.bank import Ledger
from capacitysim.bank import ledger as ledger_module
from capacitysim.errors import InputError, RefusedError
from tests.bank_support import quantification

B = "JC CSO 4"
JC, BG, DEV = "Village of Johnson City", "City of Binghamton", "Acme Development"
ANN, BOB = "Ann Admin", "Bob Checker"  # two registered bank administrators
CLERK = "Cal Clerk"  # records, is not an administrator
NODE = "MH-1"
TODAY = dt.date.today().isoformat()


def evidence(folder, gpd=3000.0, *, as_of=TODAY) -> tuple[str, str]:
    """A passing capacity demonstration and SPDES check of their own (a fresh SHA-256 each)."""
    k = uuid.uuid4().hex[:8]
    cap, spd = folder / f"cap-{k}.json", folder / f"spdes-{k}.json"
    cap.write_text(json.dumps({"kind": "capacity-demonstration", "verdict": "pass", "run": k,
                               "scenario": {"connections": [{"node": NODE, "flow_gpd": gpd}]}}))
    spd.write_text(json.dumps({"kind": "spdes-check", "verdict": "pass", "as_of": as_of, "added_gpd": gpd,
                               "connection_prohibited": False, "run": k}))
    return str(cap), str(spd)


@pytest.fixture
def bank(tmp_path):
    """A bank with two administrators (Ann, Bob) and a clerk, 30,000 gpd signed off in Johnson City's subaccount."""
    path = tmp_path / "bank.sqlite"
    with Ledger(path, create=True, actor=ANN, administrator=ANN) as ann:
        ann.add_administrator(BOB)
        for name, municipal in ((JC, True), (BG, True), (DEV, False)):
            ann.add_entity(name, municipal=municipal)
        ann.add_basin(B)
        txn = ann.deposit(B, JC, 30000, "P-1", quantification=quantification(tmp_path, "P-1", 30000))["txn"]
    ann, bob, clerk = (Ledger(path, actor=a) for a in (ANN, BOB, CLERK))
    bob.sign_off(txn)
    yield {"ann": ann, "bob": bob, "clerk": clerk, "path": path, "tmp": tmp_path}
    v = ann.verify()
    assert v["ok"], v
    for lg in (ann, bob, clerk):
        lg.close()


def withdraw(lg, app, gpd=3000, refs=None, **kw):
    cap, spd = refs or evidence(lg.path.parent, gpd)
    return lg.withdraw(B, JC, gpd, app, node=NODE, capacity_ref=cap, spdes_ref=spd, application_approval=f"H2-{app}", **kw)


# --- 1. nobody signs off what they recorded --------------------------------------------------------------


def test_an_administrator_cannot_sign_off_a_deposit_withdrawal_or_transfer_they_recorded(bank):
    ann, bob = bank["ann"], bank["bob"]
    dep = ann.deposit(B, JC, 5000, "P-2", quantification=quantification(bank["tmp"], "P-2", 5000))
    wd = withdraw(ann, "A-1")
    tr = ann.transfer(B, JC, DEV, 1000, document="bill of sale 1")
    for kind, ref, out in (("deposit", "P-2", dep), ("withdrawal", "A-1", wd), ("transfer", tr["transfer"], tr)):
        with pytest.raises(RefusedError) as exc:
            ann.sign_off(out["txn"])
        msg = str(exc.value)
        assert f"'{ANN}' recorded {kind} {ref} (txn {out['txn']}) and cannot sign it off" in msg
        assert "program policy signoff_separation" in msg and f"another registered administrator ({BOB})" in msg
    # refused with nothing changed: still pending, balances as they were
    assert {p["txn"] for p in ann.pending()} == {dep["txn"], wd["txn"], tr["txn"]}
    assert ann.balance(B, JC)["balance_gpd"] == 30000 - 3000 - 1000
    # the names are the same person ignoring case and spacing, as the ledger compares administrators
    with Ledger(bank["path"], actor="ann   ADMIN") as ann2, pytest.raises(RefusedError, match="cannot sign it off"):
        ann2.sign_off(dep["txn"])
    # another administrator signs each off; the sign-off names both
    for out in (dep, wd, tr):
        got = bob.sign_off(out["txn"])
        assert got["status"] == "signed-off" and got["signed_off_by"] == BOB
    rows = [r for r in ann.journal() if r["action"] == "sign-off"]
    assert {(r["detail"]["recorded_by"], r["detail"]["signed_off_by"]) for r in rows[-3:]} == {(ANN, BOB)}
    assert ann.balance(B, JC)["balance_gpd"] == 30000 + 5000 - 3000 - 1000 and ann.balance(B, DEV)["balance_gpd"] == 1000


def test_an_administrator_cannot_reject_what_they_recorded(bank):
    ann, bob = bank["ann"], bank["bob"]
    dep = ann.deposit(B, JC, 5000, "P-2", quantification=quantification(bank["tmp"], "P-2", 5000))
    wd = withdraw(ann, "A-1")
    tr = ann.transfer(B, JC, DEV, 1000, document="bill of sale 1")
    for out in (dep, wd, tr):
        with pytest.raises(RefusedError, match=f"'{ANN}' recorded .* \\(txn {out['txn']}\\) and cannot reject it"):
            ann.reject(out["txn"], reason="changed my mind")
    for out in (dep, wd, tr):
        assert bob.reject(out["txn"], reason="not documented")["rejected_by"] == BOB
    assert ann.balance(B, JC)["balance_gpd"] == 30000 and ann.pending() == []
    # the recorder of a withdrawal may still give its credits back (a return, not a decision)
    wd = withdraw(ann, "A-2")
    assert ann.return_credits("A-2", reason="applicant withdrew")["status"] == "returned"
    assert bob.withdrawal("A-2")["signoff_status"] == "cancelled"


def test_a_bank_with_one_administrator_cannot_sign_off_its_own_entries(tmp_path):
    """Intended: a single administrator recording and approving alone is what maker-checker forbids."""
    path = tmp_path / "solo.sqlite"
    with Ledger(path, create=True, actor=ANN, administrator=ANN) as ann:
        ann.add_entity(JC, municipal=True)
        ann.add_basin(B)
        txn = ann.deposit(B, JC, 5000, "P-1", quantification=quantification(tmp_path, "P-1", 5000))["txn"]
        with pytest.raises(RefusedError, match="no other administrator is registered: register a second one with "
                                               "`bank add-administrator NAME`"):
            ann.sign_off(txn)
        ann.add_administrator(BOB)
    with Ledger(path, actor=BOB) as bob:
        assert bob.sign_off(txn)["balance_gpd"] == 5000


def test_recorded_means_the_row_that_created_the_pending_sign_off_not_an_attach(bank):
    """A clerk records the withdrawal; Ann attaches its references; Ann may sign it off (she did not record it)."""
    ann, clerk = bank["ann"], bank["clerk"]
    out = clerk.withdraw(B, JC, 3000, "A-1", node=NODE)
    cap, spd = evidence(bank["tmp"])
    ann.attach("A-1", capacity_ref=cap, spdes_ref=spd, application_approval="H2-A-1")
    p = ann.pending()[0]
    assert p["recorded_by"] == CLERK
    row = [r for r in ann.journal() if r["txn"] == out["txn"] and r["action"] == "withdraw"][0]
    assert row["actor"] == p["recorded_by"]  # the journal row that created the pending sign-off
    assert ann.sign_off(out["txn"])["signed_off_by"] == ANN
    assert ann.withdrawal("A-1")["recorded_by"] == CLERK


# --- 2. one document, one application --------------------------------------------------------------------


def test_a_second_withdrawal_citing_the_same_document_is_refused_naming_the_first(bank):
    ann, clerk = bank["ann"], bank["clerk"]
    cap, spd = evidence(bank["tmp"])
    withdraw(clerk, "A-1", refs=(cap, spd))
    # the same bytes under another name are the same document (its SHA-256)
    copy = bank["tmp"] / "copy-of-cap.json"
    shutil.copyfile(cap, copy)
    _, spd2 = evidence(bank["tmp"])
    with pytest.raises(RefusedError) as exc:
        withdraw(clerk, "A-2", refs=(str(copy), spd2))
    msg = str(exc.value)
    assert msg.startswith("capacity_ref: the capacity demonstration") and "already the evidence of application 'A-1'" in msg
    assert "application 'A-2' cannot cite it" in msg and "program policy evidence_single_use" in msg
    cap2, _ = evidence(bank["tmp"])
    with pytest.raises(RefusedError, match="spdes_ref: the SPDES/treatment check .* evidence of application 'A-1' "
                                           "\\(pending\\)"):
        withdraw(clerk, "A-2", refs=(cap2, spd))
    assert ann.balance(B, JC)["balance_gpd"] == 27000  # nothing reserved by the refusals
    # attach is refused the same way
    clerk.withdraw(B, JC, 3000, "A-3", node=NODE)
    with pytest.raises(RefusedError, match="already the evidence of application 'A-1'.*'A-3' cannot cite it"):
        clerk.attach("A-3", capacity_ref=str(copy))
    with pytest.raises(RefusedError, match="already the evidence of application 'A-1'"):
        clerk.attach("A-3", spdes_ref=spd)
    assert ann.withdrawal("A-3")["capacity_ref"] is None
    uses = ann.evidence_use(ann.withdrawal("A-1")["capacity_sha256"])
    assert uses == [{"application": "A-1", "kind": "capacity", "status": "pending", "holds": True}]


def test_approved_and_completed_withdrawals_keep_their_evidence(bank):
    ann, bob = bank["ann"], bank["bob"]
    cap, spd = evidence(bank["tmp"])
    bob.sign_off(withdraw(ann, "A-1", refs=(cap, spd))["txn"])
    with pytest.raises(RefusedError, match="evidence of application 'A-1' \\(approved\\)"):
        withdraw(ann, "A-2", refs=(cap, evidence(bank["tmp"])[1]))
    ann.complete("A-1", TODAY)
    with pytest.raises(RefusedError, match="evidence of application 'A-1' \\(completed\\)"):
        withdraw(ann, "A-2", refs=(evidence(bank["tmp"])[0], spd))


@pytest.mark.parametrize("how", ["rejected", "returned"])
def test_a_rejected_or_returned_withdrawal_releases_its_evidence(bank, how):
    """Program policy evidence_single_use = until-rejected-or-returned."""
    ann, bob = bank["ann"], bank["bob"]
    assert ledger_module.EVIDENCE_SINGLE_USE == "until-rejected-or-returned"
    cap, spd = evidence(bank["tmp"])
    out = withdraw(ann, "A-1", refs=(cap, spd))
    if how == "rejected":
        bob.reject(out["txn"], reason="H(2) approval not shown")
    else:
        ann.return_credits("A-1", reason="applicant withdrew")
    out = withdraw(ann, "A-2", refs=(cap, spd))
    assert out["status"] == "pending" and bob.sign_off(out["txn"])["status"] == "signed-off"
    uses = ann.evidence_use(ann.withdrawal("A-2")["spdes_sha256"])
    assert [(u["application"], u["status"], u["holds"]) for u in uses] == [("A-1", "returned", False),
                                                                           ("A-2", "approved", True)]


def test_the_alternative_never_released_keeps_the_evidence_of_a_rejected_withdrawal(bank, monkeypatch):
    ann, bob = bank["ann"], bank["bob"]
    monkeypatch.setattr(ledger_module, "EVIDENCE_SINGLE_USE", "never-released")
    cap, spd = evidence(bank["tmp"])
    bob.reject(withdraw(ann, "A-1", refs=(cap, spd))["txn"], reason="H(2) approval not shown")
    with pytest.raises(RefusedError, match="evidence of application 'A-1' \\(returned\\).*never-released"):
        withdraw(ann, "A-2", refs=(cap, spd))


def test_the_database_refuses_reused_evidence_behind_the_code(bank, monkeypatch):
    """The schema's triggers refuse what the ledger's check refuses, if the check were bypassed."""
    ann = bank["ann"]
    cap, spd = evidence(bank["tmp"])
    withdraw(ann, "A-1", refs=(cap, spd))
    monkeypatch.setattr(Ledger, "_evidence_free", lambda *a, **k: None)
    with pytest.raises(RefusedError, match="refused by the ledger: the cited document is already the evidence"):
        withdraw(ann, "A-2", refs=(cap, evidence(bank["tmp"])[1]))
    ann.withdraw(B, JC, 3000, "A-3", node=NODE)
    with pytest.raises(RefusedError, match="refused by the ledger: the cited document is already the evidence"):
        ann.attach("A-3", spdes_ref=spd)


def test_of_two_older_withdrawals_citing_one_document_only_the_first_is_signed_off(bank, monkeypatch):
    """A bank older than schema 4 may hold two withdrawals citing one document: the first keeps it."""
    ann, bob = bank["ann"], bank["bob"]
    cap, spd = evidence(bank["tmp"])
    first = withdraw(ann, "A-1", refs=(cap, spd))
    ann.conn.execute("DROP TRIGGER withdrawals_evidence_once")
    with monkeypatch.context() as m:
        m.setattr(Ledger, "_evidence_free", lambda *a, **k: None)
        later = withdraw(ann, "A-2", refs=(cap, spd))
    with pytest.raises(RefusedError, match="already the evidence of application 'A-1'.*'A-2' cannot cite it"):
        bob.sign_off(later["txn"])
    assert bob.sign_off(first["txn"])["status"] == "signed-off"


# --- 3. service users bound to bank entities --------------------------------------------------------------


def test_an_administrator_binds_and_unbinds_service_users_journaled(bank):
    ann, clerk = bank["ann"], bank["clerk"]
    out = ann.bind_user("Mia Municipal", JC, role="municipal", document="Village letter 2026-3")
    assert (out["user"], out["entity"], out["bound_by"]) == ("Mia Municipal", JC, ANN)
    assert out["policies"][0]["name"] == "service_user_binding"
    ann.bind_user("eli engineer", DEV, role="engineer")
    ann.bind_user("Eli Engineer", JC, role="engineer")
    assert ann.acts_for("Mia Municipal", JC) and ann.acts_for("MIA MUNICIPAL", JC) and not ann.acts_for("Mia Municipal", BG)
    assert ann.bound_entities("Eli Engineer") == [DEV, JC]
    assert [(b["user"], b["entity"], b["role"]) for b in ann.bindings(entity=JC)] == [
        ("Mia Municipal", JC, "municipal"), ("Eli Engineer", JC, "engineer")]
    # only an administrator binds; twice is refused; unknown entities and non-persons are input errors
    with pytest.raises(RefusedError, match="'Cal Clerk' is not a registered bank administrator"):
        clerk.bind_user("Rae Other", JC, role="municipal")
    with pytest.raises(RefusedError, match="'Mia Municipal' is already bound to 'Village of Johnson City'"):
        ann.bind_user("mia municipal", JC, role="municipal")
    with pytest.raises(InputError, match="unknown entity 'Nowhere LLC'"):
        ann.bind_user("Mia Municipal", "Nowhere LLC", role="municipal")
    with pytest.raises(InputError, match="single word"):
        ann.bind_user("mia", JC, role="municipal")
    # a municipal service user acts for municipal users only; administrators and reviewers are not bound
    with pytest.raises(RefusedError, match="'Acme Development' is not a municipal user"):
        ann.bind_user("Mia Municipal", DEV, role="municipal")
    for role, why in (("administrator", "administrators act for every entity"), ("reviewer", "reviewers record nothing")):
        with pytest.raises(RefusedError, match=why):
            ann.bind_user("Rae Reviewer", JC, role=role)
    # unbinding closes the binding and keeps it
    out = ann.unbind_user("Mia Municipal", JC, reason="left the Village")
    assert out["unbound_by"] == ANN and not ann.acts_for("Mia Municipal", JC)
    with pytest.raises(InputError, match="'Mia Municipal' is not bound to 'Village of Johnson City'"):
        ann.unbind_user("Mia Municipal", JC)
    ann.bind_user("Mia Municipal", JC, role="municipal")  # bound again: a new record
    assert len(ann.bindings(user="Mia Municipal", closed=True)) == 2 and len(ann.bindings(user="Mia Municipal")) == 1
    rows = [r for r in ann.journal() if r["action"] in ("bind-user", "unbind-user")]
    assert [(r["action"], r["actor"], r["detail"]["user"], r["detail"]["entity"]) for r in rows] == [
        ("bind-user", ANN, "Mia Municipal", JC), ("bind-user", ANN, "eli engineer", DEV),
        ("bind-user", ANN, "Eli Engineer", JC), ("unbind-user", ANN, "Mia Municipal", JC),
        ("bind-user", ANN, "Mia Municipal", JC)]
    assert rows[0]["documents"] == ["Village letter 2026-3"] and rows[3]["reason"] == "left the Village"


def test_bindings_are_guarded_in_sql_and_audited_by_verify(bank):
    ann = bank["ann"]
    ann.bind_user("Mia Municipal", JC, role="municipal")
    c = ann.conn
    for sql in ("DELETE FROM bindings", "UPDATE bindings SET entity_id = 2",
                f"UPDATE bindings SET unbound_at = '2030-01-01', unbound_by = '{CLERK}'",
                f"INSERT INTO bindings(user_name, user_key, entity_id, bound_at, bound_by) VALUES ('X Y', 'x y', 1, 'now', '{CLERK}')"):
        with pytest.raises(sqlite3.IntegrityError):
            c.execute(sql)
    # a binding slipped in by an administrator's name without its journal row is found
    c.execute(f"INSERT INTO bindings(user_name, user_key, entity_id, bound_at, bound_by) VALUES ('Zed Sneak', 'zed sneak', 1,"
              f" '2030-01-01', '{ANN}')")
    v = ann.verify()
    assert not v["ok"] and any("'bind-user' journal rows, 1 expected" in p for p in v["problems"]), v
    c.execute("DROP TRIGGER bindings_no_delete")
    c.execute("DELETE FROM bindings WHERE user_name = 'Zed Sneak'")
    c.execute("CREATE TRIGGER bindings_no_delete BEFORE DELETE ON bindings BEGIN SELECT RAISE(ABORT, 'no'); END")
    assert ann.verify()["ok"]


def test_the_new_policies_are_listed_with_their_alternatives(run_cli):
    res = run_cli("bank", "policies", "--json")
    assert res.exit_code == 0, res.output
    pols = {p["name"]: p for p in json.loads(res.stdout)["policies"]}
    for name, value, alternative in (("signoff_separation", "recorder-excluded", "any-administrator"),
                                     ("evidence_single_use", "until-rejected-or-returned", "never-released"),
                                     ("service_user_binding", "bound-entities-only", "role-only"),
                                     ("bank_reads", "public-record", "bound-entities-only")):
        assert pols[name]["value"] == value and pols[name]["alternative"]["value"] == alternative
        assert pols[name]["text"].startswith("program interpretation — confirm with the bank administrator")
    res = run_cli("bank", "policies")
    assert "program policy signoff_separation" in res.stdout and "program policy evidence_single_use" in res.stdout


# --- the CLI: exit codes and one-line refusals ---------------------------------------------------------------


def one_line(res, code: int, *words: str) -> str:
    assert res.exit_code == code, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


@pytest.fixture
def cli(tmp_path, run_cli):
    """``capacitysim bank`` on a bank of two administrators (Ann records, Bob checks) next to a service store."""
    db = tmp_path / "bank.sqlite"

    def run(*args, actor=ANN):
        return run_cli("bank", "--db", str(db), "--actor", actor, *args)

    for args in (("init", "--administrator", ANN), ("add-administrator", BOB), ("add-entity", JC, "--municipal"),
                 ("add-entity", DEV), ("add-basin", B)):
        assert run(*args).exit_code == 0
    res = run("deposit", "--basin", B, "--owner", JC, "--gpd", "30000", "--project", "P-1", "--quantification",
              quantification(tmp_path, "P-1", 30000), "--json")
    assert run("sign-off", json.loads(res.stdout)["txn"], actor=BOB).exit_code == 0
    run.db, run.tmp = db, tmp_path
    return run


def test_cli_self_sign_off_exits_3_naming_the_recorder_and_the_transaction(cli):
    res = cli("deposit", "--basin", B, "--owner", JC, "--gpd", "5000", "--project", "P-2", "--quantification",
              quantification(cli.tmp, "P-2", 5000), "--json")
    txn = json.loads(res.stdout)["txn"]
    one_line(cli("sign-off", txn), 3, f"'{ANN}' recorded deposit P-2 (txn {txn})", "cannot sign it off", BOB,
             "signoff_separation")
    one_line(cli("reject", txn, "--reason", "oops"), 3, f"'{ANN}' recorded deposit P-2 (txn {txn})", "cannot reject it")
    res = cli("sign-off", txn, "--json", actor=BOB)
    assert res.exit_code == 0 and json.loads(res.stdout)["signed_off_by"] == BOB


def test_cli_second_withdrawal_on_the_same_document_exits_3_naming_both_applications(cli):
    cap, spd = evidence(cli.tmp)
    args = ("--basin", B, "--owner", JC, "--gpd", "3000", "--node", NODE, "--capacity-ref", cap, "--spdes-ref", spd)
    assert cli("withdraw", "--application", "A-1", *args).exit_code == 0
    one_line(cli("withdraw", "--application", "A-2", *args), 3, "already the evidence of application 'A-1'",
             "application 'A-2' cannot cite it", "evidence_single_use")
    assert cli("withdraw", "--application", "A-3", "--basin", B, "--owner", JC, "--gpd", "3000", "--node", NODE).exit_code == 0
    one_line(cli("attach", "--application", "A-3", "--spdes-ref", spd), 3, "'A-1'", "'A-3'")


def _service_users(folder, **users):
    from capacitysim.service.auth import new_token
    from capacitysim.service.store import Store

    store = Store(folder / "service.sqlite")
    for name, role in users.items():
        _, key_id, digest = new_token()
        store.add_user(name, role, key_id, digest)
    return store


def test_cli_bind_user_checks_the_service_user_and_the_entity(cli):
    store = _service_users(cli.tmp, **{"Mia Municipal": "municipal", "Eli Engineer": "engineer",
                                       "Rae Reviewer": "reviewer", "Old Timer": "municipal"})
    store.revoke_user("Old Timer")
    store.close()
    res = cli("bind-user", "Mia Municipal", "--entity", JC, "--document", "letter 1", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert (out["user"], out["entity"], out["role"], out["bound_by"]) == ("Mia Municipal", JC, "municipal", ANN)
    assert cli("bind-user", "eli engineer", "--entity", DEV).exit_code == 0  # the service's spelling is recorded
    one_line(cli("bind-user", "Nobody Known", "--entity", JC), 2, "'Nobody Known' is not a user of the service",
             "Mia Municipal")
    one_line(cli("bind-user", "Mia Municipal", "--entity", "Nowhere LLC"), 2, "unknown entity 'Nowhere LLC'")
    one_line(cli("bind-user", "Old Timer", "--entity", JC), 3, "revoked")
    one_line(cli("bind-user", "Rae Reviewer", "--entity", JC), 3, "reviewers record nothing")
    one_line(cli("bind-user", "Mia Municipal", "--entity", DEV), 3, "not a municipal user")
    one_line(cli("bind-user", "Mia Municipal", "--entity", JC), 3, "already bound")
    one_line(cli("bind-user", "Eli Engineer", "--entity", JC, actor=CLERK), 3, "not a registered bank administrator")
    res = cli("bindings", "--json")
    assert [(b["user"], b["entity"]) for b in json.loads(res.stdout)["bindings"]] == [("Mia Municipal", JC),
                                                                                      ("Eli Engineer", DEV)]
    assert "Eli Engineer (engineer)" in cli("bindings").stdout
    res = cli("unbind-user", "Mia Municipal", "--entity", JC, "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["unbound_by"] == ANN
    one_line(cli("unbind-user", "Mia Municipal", "--entity", JC), 2, "is not bound to")
    one_line(cli("unbind-user", "Mia Municipal", "--entity", "Nowhere LLC"), 2, "unknown entity")
    res = cli("bindings", "--all", "--json")
    assert [b["unbound_by"] for b in json.loads(res.stdout)["bindings"]] == [ANN, None]


def test_cli_bind_user_without_a_service_store_exits_2(cli, tmp_path):
    one_line(cli("bind-user", "Mia Municipal", "--entity", JC), 2, "no service store at", "--data DIR")
    other = tmp_path / "service-data"
    other.mkdir()
    _service_users(other, **{"Mia Municipal": "municipal"}).close()
    res = cli("bind-user", "Mia Municipal", "--entity", JC, "--data", str(other), "--json")
    assert res.exit_code == 0, res.output
