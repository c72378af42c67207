"""The bank agrees with the program: dated entries, the PE's quantification, the note, the annual records
(issue 25, items 3 to 6), each with the program's words and a hand case."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import sqlite3

import pytest

from capacitysim.bank import Ledger
from capacitysim.errors import InputError, RefusedError
from tests.bank_support import evidence, quantification

ANN, BOB, CLERK = "Ann Admin", "Bob Checker", "Jo Clerk"
JC, B, NODE = "Village of Johnson City", "Johnson City CSO 4", "MH-1"


def clock_at(state):
    return lambda: state["now"]


@pytest.fixture
def bank(tmp_path):
    """A bank on a clock the test moves: created 2025-03-01; 20,000 gpd of JC-1 certified and signed off that day."""
    state = {"now": dt.datetime(2025, 3, 1, 9, tzinfo=dt.timezone.utc)}
    path = tmp_path / "bank.sqlite"
    with Ledger(path, create=True, actor=ANN, administrator=ANN, clock=clock_at(state)) as ann:
        ann.add_administrator(BOB)
        ann.add_entity(JC, municipal=True)
        ann.add_basin(B)
        txn = ann.deposit(B, JC, 20000, "JC-1", quantification=quantification(tmp_path, "JC-1", 20000),
                          certified_on="2025-03-01")["txn"]
    led = {n: Ledger(path, actor=n, clock=clock_at(state)) for n in (ANN, BOB, CLERK)}
    led[BOB].sign_off(txn)
    yield {"led": led, "state": state, "tmp": tmp_path, "path": path}
    for x in led.values():
        x.close()


# --- item 3: no back-dating; late entries keep both dates ----------------------------------------------------


def test_on_cannot_date_a_withdrawal_before_the_journals_last_row(bank):
    """Issue 25 item 3: "`--on` cannot date a row before the journal's last row (no back-dating)". The journal's
    last row was recorded on 2025-03-01; the clerk, on 2025-06-01, dates a withdrawal 2025-02-27: refused, exit 3,
    naming both dates. The SPDES check is as of 2025-02-20 (101 days before 2025-06-01: too old for the 90-day
    policy on its day, but not on the back-dated one): back-dating would have made stale evidence pass."""
    bank["state"]["now"] = dt.datetime(2025, 6, 1, 9, tzinfo=dt.timezone.utc)
    cap, spd = evidence(bank["tmp"], 3000, "2025-02-20")
    clerk = bank["led"][CLERK]
    with pytest.raises(RefusedError, match=r"on 2025-02-27 is before the journal's last row \(seq \d+, deposit, "
                                           r"recorded 2025-03-01\): a row cannot be back-dated \(program policy "
                                           r"no_backdating"):
        clerk.withdraw(B, JC, 3000, "A-1", node=NODE, capacity_ref=cap, spdes_ref=spd, on="2025-02-27")
    assert clerk.withdrawals() == []
    # a late entry is the administrator's, with a reason
    with pytest.raises(RefusedError, match="is not a registered bank administrator"):
        clerk.withdraw(B, JC, 3000, "A-1", node=NODE, capacity_ref=cap, spdes_ref=spd, on="2025-02-27",
                       late_reason="paper application")
    with pytest.raises(RefusedError, match="is as of 2025-02-20, 101 days before the withdrawal date 2025-06-01"):
        clerk.withdraw(B, JC, 3000, "A-1", node=NODE, capacity_ref=cap, spdes_ref=spd)  # on its own day: too old
    cap, spd = evidence(bank["tmp"], 3000, "2025-05-31")
    with pytest.raises(InputError, match="late_reason given, but on 2025-06-01 is today or later"):
        clerk.withdraw(B, JC, 3000, "A-1", node=NODE, capacity_ref=cap, spdes_ref=spd, late_reason="x")


def test_a_late_entry_keeps_both_dates_and_its_reason(bank):
    """An administrator records on 2025-06-01 the sign-off the Board gave on paper on 2025-03-05 (a late entry):
    the note is issued on 2025-03-05 (the certificate of occupancy due one year later, 2026-03-05, DEFAULT), and
    the journal row keeps the effective date, the day it was recorded and the reason."""
    ann, bob, state = bank["led"][ANN], bank["led"][BOB], bank["state"]
    state["now"] = dt.datetime(2025, 3, 5, 9, tzinfo=dt.timezone.utc)
    cap, spd = evidence(bank["tmp"], 3000, "2025-03-01")
    w = ann.withdraw(B, JC, 3000, "A-1", node=NODE, capacity_ref=cap, spdes_ref=spd, application_approval="H2")
    state["now"] = dt.datetime(2025, 6, 1, 9, tzinfo=dt.timezone.utc)
    out = bob.sign_off(w["txn"], on="2025-03-05", late_reason="signed by the Board on paper on 2025-03-05")
    assert out["note_issued_on"] == "2025-03-05" and out["co_due_on"] == "2026-03-05"
    row = [r for r in bob.journal() if r["action"] == "sign-off" and r["ref"] == "A-1"][-1]
    assert row["at"].startswith("2025-06-01") and row["detail"]["on"] == "2025-03-05"
    assert row["detail"]["late"] == {"reason": "signed by the Board on paper on 2025-03-05", "recorded_on": "2025-06-01",
                                     "journal_last_recorded_on": "2025-03-05"}
    assert bob.verify()["ok"]


# --- item 4: the professional engineer ---------------------------------------------------------------------------


def test_a_deposit_cites_a_pes_quantification_and_is_refused_above_its_total(bank, tmp_path):
    """I/I quantification guidelines: "The quantification of infiltration and inflow shall be prepared by a
    professional engineer, licensed in the State of New York, and presented in an I/I remediation engineering
    report." Hand case: a quantification of 12,345.6 gpd covers a deposit of 12,345 gpd, not of 12,346."""
    clerk = bank["led"][CLERK]
    q = quantification(tmp_path, "JC-2", 12345.6, owner=JC, basin=B)
    with pytest.raises(InputError, match="quantification is required"):
        clerk.deposit(B, JC, 100, "JC-2")
    with pytest.raises(RefusedError, match="quantified 12,345.60 gpd .* the deposit states 12,346.00 gpd"):
        clerk.deposit(B, JC, 12346, "JC-2", quantification=q)
    with pytest.raises(RefusedError, match="quantified project 'JC-2', not 'JC-3'"):
        clerk.deposit(B, JC, 100, "JC-3", quantification=q)
    for licence in ("000000", "12345", ""):
        bad = quantification(tmp_path, "JC-2", 20000, licence=licence)
        with pytest.raises(RefusedError, match="names no NYS licensed professional engineer"):
            clerk.deposit(B, JC, 100, "JC-2", quantification=bad)
    out = clerk.deposit(B, JC, 12345, "JC-2", quantification=q, property="private")
    assert out["quantification"]["sha256"] == hashlib.sha256(open(q, "rb").read()).hexdigest()
    assert (out["quantification"]["engineer"], out["quantification"]["pe_license"]) == ("Pat Engineer, PE", "012345")
    bank["led"][BOB].sign_off(out["txn"])
    p = {x["ref"]: x for x in clerk.projects()}["JC-2"]
    assert (p["pe_name"], p["pe_license"], p["quantified_gpd"], p["property"]) == ("Pat Engineer, PE", "012345",
                                                                                     12345.6, "private")


def test_part_b_flags_a_project_without_its_certification_letter(bank, tmp_path):
    """Records section B: "If not previously furnished, provide completed certification letter for I/I remediation
    projects completed. (See Appendix A for letter format.)" JC-1 has none: flagged; once furnished (SHA-256
    recorded, once), the flag goes."""
    from capacitysim.workflows.bank_reports import annual_report

    clerk = bank["led"][CLERK]
    b = {r["project"]: r for r in annual_report(clerk)["tables"]["b_completed_projects"]}
    assert "certification letter (Appendix A) not furnished" in b["JC-1"]["flag"]
    letter = tmp_path / "letter-JC-1.pdf"
    letter.write_bytes(b"%PDF-1.4 signed letter")
    out = clerk.furnish_letter("JC-1", str(letter))
    assert out["letter"]["sha256"] == hashlib.sha256(letter.read_bytes()).hexdigest()
    with pytest.raises(RefusedError, match="its certification letter was furnished on 2025-03-01"):
        clerk.furnish_letter("JC-1", str(letter))
    b = {r["project"]: r for r in annual_report(clerk)["tables"]["b_completed_projects"]}
    assert b["JC-1"]["flag"] == "" and b["JC-1"]["letter_sha256"] == out["letter"]["sha256"]


# --- item 5: the flow credit note ---------------------------------------------------------------------------------


def test_the_note_names_the_parties_the_evidence_and_the_programs_statements(bank):
    """Definitions, FLOW CREDIT NOTE: "An agreement between the Board and the applicant that flow credits shall be
    made available ... under specific terms"; section G: credits "shall have no monetary value, accrue no interest,
    and may not be assigned or pledged as collateral"; section I: no "vested rights"."""
    from capacitysim.report.note import note_html, note_pdf
    from capacitysim.workflows.note import flow_credit_note

    ann, bob = bank["led"][ANN], bank["led"][BOB]
    cap, spd = evidence(bank["tmp"], 12000, "2025-03-01")
    w = ann.withdraw(B, JC, 12000, "A-12", node=NODE, capacity_ref=cap, spdes_ref=spd, application_approval="H2-12",
                     applicant="Oak Street Partners LLC", affected_owner="R. Owner", average_gpd=2730)
    with pytest.raises(RefusedError, match="no flow credit note was issued"):
        flow_credit_note(ann, "A-12")
    bob.sign_off(w["txn"])
    note = flow_credit_note(ann, "A-12")
    assert (note["board"], note["applicant"], note["holder"], note["affected_owner"]) == (
        "Binghamton-Johnson City Joint Sewage Board", "Oak Street Partners LLC", JC, "R. Owner")
    assert (note["amount_gpd"], note["average_gpd"], note["issued_on"], note["co_due_on"]) == (12000, 2730, "2025-03-01",
                                                                                               "2026-03-01")
    assert note["lots"] == [{"project": "JC-1", "gpd": 12000}]
    shas = {e["sha256"] for e in note["evidence"]}
    assert hashlib.sha256(open(cap, "rb").read()).hexdigest() in shas
    headings = [t["heading"] for t in note["terms"]]
    assert "Section G: no monetary value" in headings and "Section I: no vested rights" in headings
    html = note_html(note)
    assert "no monetary value, accrue no interest" in html and "vested rights" in html and "12,000" in html
    # the same bank gives the same note, byte for byte, later
    pdf = note_pdf(note)
    ann.connect("A-12")
    assert note_pdf(flow_credit_note(ann, "A-12")) == pdf


def test_sign_off_writes_the_note_and_balances_print_section_g(tmp_path, run_cli, monkeypatch):
    """Through the CLI: the sign-off of a withdrawal writes the note as HTML and PDF and prints their SHA-256;
    `bank note` writes the same bytes again; balances print section G."""
    db = str(tmp_path / "bank.sqlite")
    monkeypatch.setenv("CAPACITYSIM_ACTOR", ANN)

    def bank_(*args):
        res = run_cli("bank", "--db", db, *args)
        assert res.exit_code == 0, res.output
        return res

    bank_("init", "--administrator", ANN)
    bank_("add-administrator", BOB)
    bank_("add-entity", JC, "--municipal")
    bank_("add-basin", B)
    txn = json.loads(bank_("deposit", "--basin", B, "--owner", JC, "--gpd", "5000", "--project", "JC-1",
                           "--quantification", quantification(tmp_path, "JC-1", 5000), "--json").stdout)["txn"]
    bank_("sign-off", txn, "--actor", BOB)
    cap, spd = evidence(tmp_path, 3000, dt.date.today().isoformat())
    txn = json.loads(bank_("withdraw", "--basin", B, "--owner", JC, "--gpd", "3000", "--application", "A/1",
                           "--node", NODE, "--capacity-ref", cap, "--spdes-ref", spd, "--application-approval", "H2",
                           "--json").stdout)["txn"]
    out = json.loads(bank_("sign-off", txn, "--actor", BOB, "--json").stdout)
    files = {f["path"][-4:]: f for f in out["note_files"]}
    stem = "flow-credit-note-A_1-" + hashlib.sha256(b"A/1").hexdigest()[:10]  # A/1 and A_1 get different files
    assert set(files) == {"html", ".pdf"} and all(f"bank.sqlite-notes/{stem}." in f["path"]
                                                  for f in files.values())
    again = json.loads(bank_("note", "A/1", "--out", str(tmp_path / "n.pdf"), "--json").stdout)["files"][0]
    assert again["sha256"] == files[".pdf"]["sha256"]
    res = run_cli("bank", "--db", db, "note", "A/1", "--out", str(tmp_path / "n.docx"))
    assert res.exit_code == 2 and ".html or .pdf" in res.output
    assert "no monetary value, accrue no interest" in bank_("balance").stdout


# --- item 6: the municipal users' annual records -----------------------------------------------------------------


def test_annual_records_fall_due_a_year_after_the_last_submission(bank):
    """Records section: each municipal user submits its records "to the bank administrator on at least an annual
    basis" (program policy annual_report_due = anniversary). Hand case: JC entered the bank on 2025-03-01, so its
    first records are due 2026-03-01; submitted 2026-03-10, late; the next are due 2027-03-10."""
    ann, state = bank["led"][ANN], bank["state"]
    assert ann.annual_reports()[0]["next_due_on"] == "2026-03-01"
    state["now"] = dt.datetime(2026, 3, 10, 9, tzinfo=dt.timezone.utc)
    assert ann.annual_reports()[0]["status"] == "overdue"
    out = ann.record_annual_report(JC, 2025)
    assert (out["due_on"], out["submitted_on"], out["late"]) == ("2026-03-01", "2026-03-10", True)
    u = ann.annual_reports()[0]
    assert (u["next_due_on"], u["status"], u["last_submitted_on"]) == ("2027-03-10", "due", "2026-03-10")
    with pytest.raises(RefusedError, match="records of 2025 were already submitted"):
        ann.record_annual_report(JC, 2025)
    with pytest.raises(InputError, match="allowed: a calendar year from 2013"):
        ann.record_annual_report(JC, 2012)


def test_parts_a_and_b_list_public_then_private_property(bank, tmp_path):
    """Records section A and B: projects "in the municipal users' public sewage collection systems and private
    property"."""
    from capacitysim.workflows.bank_reports import annual_report

    clerk = bank["led"][CLERK]
    clerk.add_project("P-priv", B, JC, priority=1, property="private")
    clerk.add_project("P-pub", B, JC, priority=2, property="public")
    with pytest.raises(InputError, match="property 'both'; allowed: public, private"):
        clerk.add_project("P-x", B, JC, property="both")
    a = annual_report(clerk)["tables"]["a_available_projects"]
    assert [(r["project"], r["property"]) for r in a] == [("P-pub", "public"), ("P-priv", "private")]


# --- the migration keeps every balance -----------------------------------------------------------------------------


def test_a_schema_5_bank_migrated_to_6_keeps_every_balance_and_lot(bank):
    """A bank of the schema before issue 25 (no parties, property, quantification, letters or submissions) is
    migrated by an administrator in one transaction: every balance and lot is the same after."""
    from tests.bank.test_migration import _as_schema_5

    ann = bank["led"][ANN]
    cap, spd = evidence(bank["tmp"], 3000, "2025-03-01")
    ann.withdraw(B, JC, 3000, "A-1", node=NODE, capacity_ref=cap, spdes_ref=spd)
    before = (ann.balances(), ann.lots(), ann.head()["head"])
    for x in bank["led"].values():
        x.close()
    _as_schema_5(bank["path"])
    c = sqlite3.connect(bank["path"])
    assert c.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "5"
    c.close()
    with Ledger(bank["path"], actor=ANN, migrate=True) as led:
        assert (led.balances(), led.lots()) == before[:2]
        assert led.verify(expect_head=before[2])["ok"]
        assert led.journal()[-1]["detail"]["from"] == 5


# --- the attacks of the review (issue 25): every dated entry, the documents, the journal's order --------------------


def test_a_clerk_cannot_dodge_a_default_by_dating_an_extension_or_a_certificate_back(bank):
    """DEFAULT: no certificate of occupancy "within one year from the time of issuance of the flow credit note or,
    if later, within the additional time allowed ... when extended". The note of 2025-03-01 is due 2026-03-01; on
    2026-03-10 a clerk cannot record an extension granted, or a certificate issued, "on 2026-02-27": both dates are
    before the journal's last row (program policy no_backdating); an administrator can, with the reason, and the
    journal keeps it."""
    ann, bob, clerk, state = bank["led"][ANN], bank["led"][BOB], bank["led"][CLERK], bank["state"]
    cap, spd = evidence(bank["tmp"], 3000, "2025-03-01")
    w = ann.withdraw(B, JC, 3000, "A-1", node=NODE, capacity_ref=cap, spdes_ref=spd, application_approval="H2")
    bob.sign_off(w["txn"])
    state["now"] = dt.datetime(2026, 3, 9, 9, tzinfo=dt.timezone.utc)
    clerk.record_application("S-1", JC, 1200, basin=B)  # any entry on 2026-03-09
    state["now"] = dt.datetime(2026, 3, 10, 9, tzinfo=dt.timezone.utc)
    with pytest.raises(RefusedError, match="granted_on 2026-02-27 is before the journal's last row"):
        clerk.extend("A-1", "2027-03-01", document="Board letter", granted_on="2026-02-27")
    with pytest.raises(RefusedError, match="co_issued_on 2026-02-27 is before the journal's last row"):
        clerk.complete("A-1", "2026-02-27")
    with pytest.raises(RefusedError, match="received_on 2019-01-02 is before the journal's last row"):
        clerk.record_application("OLD", JC, 1200, basin=B, received_on="2019-01-02", application_approval="OK")
    out = ann.complete("A-1", "2026-02-27", late_reason="certificate of occupancy of 2026-02-27 received by mail")
    assert out["status"] == "completed" and out["co_issued_on"] == "2026-02-27"
    row = ann.journal(ref="A-1")[-1]
    assert row["action"] == "complete" and row["detail"]["late"]["reason"].startswith("certificate of occupancy")


def test_a_changed_quantification_or_letter_cannot_be_signed_off_and_verify_finds_it(bank, tmp_path):
    """A deposit rests on the PE's document as recorded (SHA-256): changed before the sign-off, it is refused;
    changed after, verify names it. A document whose total is not the sum of its qualifying items was edited."""
    clerk, bob = bank["led"][CLERK], bank["led"][BOB]
    q = quantification(tmp_path, "JC-5", 5000)
    doc = json.loads(open(q).read())
    doc["total_gpd"] = 9e8
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(doc))
    with pytest.raises(RefusedError, match="its qualifying items sum to 5,000.00 gpd: the document was changed"):
        clerk.deposit(B, JC, 900000, "JC-5", quantification=str(forged))
    doc["kind"] = "capacity-demonstration"
    forged.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="is not a quantification document"):
        clerk.deposit(B, JC, 100, "JC-5", quantification=str(forged))
    letter = tmp_path / "letter-5.pdf"
    letter.write_bytes(b"signed")
    txn = clerk.deposit(B, JC, 5000, "JC-5", quantification=q, letter=str(letter))["txn"]
    letter.write_bytes(b"changed")
    with pytest.raises(RefusedError, match="the cited certification letter .* is changed since the deposit was recorded"):
        bob.sign_off(txn)
    letter.write_bytes(b"signed")
    bob.sign_off(txn)
    assert str(letter) in clerk.cited_files() and q in clerk.cited_files()
    with open(q, "a") as fh:
        fh.write(" ")
    v = clerk.verify()
    assert not v["ok"] and any("project JC-5: quantification" in p and "changed" in p for p in v["problems"])


def test_notes_of_two_applications_never_share_a_file_name():
    """`A/1` and `A_1`, `Ä-1` and `Ö-1`: one file each."""
    from capacitysim.workflows.note import note_stem

    names = [note_stem(a) for a in ("A/1", "A_1", "Ä-1", "Ö-1", "x" * 90, "x" * 91)]
    assert len(set(names)) == len(names) and names[1] == "flow-credit-note-A_1"
    assert all("/" not in n and not n.startswith(".") for n in names)


def test_verify_finds_a_row_dated_back_or_recorded_out_of_order(bank):
    """Rows written outside capacitysim (or by one without the policy): a row dated before the row before it was
    recorded, not marked late; a journal whose clock went backwards. And a clock behind the journal is refused."""
    ann, state = bank["led"][ANN], bank["state"]
    assert ann.verify()["ok"]
    state["now"] = dt.datetime(2025, 6, 1, 9, tzinfo=dt.timezone.utc)
    ann.add_entity("Other LLC")  # a row recorded on 2025-06-01
    cap, spd = evidence(bank["tmp"], 3000, "2025-05-30")
    ann._dated = lambda c, name, d, late: setattr(ann, "_dating", {"on": d.isoformat()}) or d  # an old capacitysim
    ann.withdraw(B, JC, 3000, "A-1", node=NODE, capacity_ref=cap, spdes_ref=spd, on="2025-05-31")
    problems = " | ".join(ann.verify(check_files=False)["problems"])
    assert "dated 2025-05-31, before row" in problems and "not recorded as a late entry" in problems
    del ann._dated
    state["now"] = dt.datetime(2025, 5, 1, 9, tzinfo=dt.timezone.utc)
    with pytest.raises(RefusedError, match=r"clock says 2025-05-01 \(UTC\), before the journal's last row"):
        ann.connect("A-1")


def test_annual_records_and_letters_are_dated_in_order(bank, tmp_path):
    """A submission cannot cover a year after it, nor precede the user's entry into the bank; a letter certifies a
    completion, so it is not dated before it."""
    ann = bank["led"][ANN]
    with pytest.raises(InputError, match="to the year of the submission \\(2025\\)"):
        ann.record_annual_report(JC, 2026)
    with pytest.raises(InputError, match="period 2024.7"):
        ann.record_annual_report(JC, 2024.7)
    letter = tmp_path / "l.pdf"
    letter.write_bytes(b"x")
    with pytest.raises(RefusedError, match="dated 2025-02-01 is before the certification of 2025-03-01"):
        ann.furnish_letter("JC-1", str(letter), on="2025-02-01", late_reason="paper letter")
