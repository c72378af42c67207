"""Dates in order (issue 25, item 3): the bank refuses a withdrawal dated before the credits it uses were certified,
a note signed off before its withdrawal, and a sign-off on evidence dated after it; `verify` finds each in a file
edited outside capacitysim.

Credit bank section B: credits are deposited "once the I/I remediation project is certified complete"; section H:
the withdrawal of credits is subject to the capacity demonstration; definitions, FLOW CREDIT NOTE: the note is
issued for an approved application. A note cannot approve a withdrawal that did not yet exist, credits cannot be
withdrawn before they exist, and the evidence an administrator signs off on must exist on the day of the sign-off.
"""

from __future__ import annotations

import datetime as dt
import sqlite3

import pytest

from capacitysim.bank import Ledger
from capacitysim.errors import RefusedError
from tests.bank_support import evidence, funded_bank

#: entries are recorded on their own days (program policy no_backdating): tests/conftest.py bank_calendar
pytestmark = pytest.mark.usefixtures("bank_calendar")

ANN, BOB = "Ann Admin", "Bob Checker"
JC, B, NODE = "Village of Johnson City", "JC CSO 4", "MH-1"


@pytest.fixture
def bank(tmp_path):
    """10,000 gpd of project P-1, certified on 2024-03-01, in Johnson City's subaccount (signed off that day)."""
    path = funded_bank(tmp_path / "bank.sqlite", 10000, "2024-03-01", administrators=(ANN, BOB), owner=JC, basin=B)
    ann, bob = Ledger(path, actor=ANN), Ledger(path, actor=BOB)
    yield {"ann": ann, "bob": bob, "path": path, "tmp": tmp_path}
    ann.close()
    bob.close()


def test_a_withdrawal_dated_before_its_credits_were_certified_is_refused_naming_both_dates(bank):
    """Credit bank section B: credits are deposited "once an I/I remediation project is certified complete", and
    section H withdraws credits on deposit. Recorded on its day, a withdrawal dated before the certification is
    back-dated (program policy no_backdating: refused, naming both dates); recorded late by an administrator, it
    still cannot precede the certification of the credits it uses."""
    ann = bank["ann"]
    cap, spd = evidence(bank["tmp"], 3000, "2024-02-20")
    with pytest.raises(RefusedError, match=r"on 2024-02-28 is before the journal's last row \(seq \d+, deposit, "
                                           r"recorded 2024-03-01\): a row cannot be back-dated"):
        ann.withdraw(B, JC, 3000, "A-1", node=NODE, capacity_ref=cap, spdes_ref=spd, on="2024-02-28")
    with pytest.raises(RefusedError, match=r"the withdrawal date 2024-02-28 is before 2024-03-01, when the credits it "
                                           r"would use \(lot 1, project P-1\) were certified"):
        ann.withdraw(B, JC, 3000, "A-1", node=NODE, capacity_ref=cap, spdes_ref=spd, on="2024-02-28",
                     late_reason="paper application of 2024-02-28 entered late")
    assert ann.withdrawals() == [] and ann.balance(B, JC)["balance_gpd"] == 10000
    out = ann.withdraw(B, JC, 3000, "A-1", node=NODE, capacity_ref=cap, spdes_ref=spd, on="2024-03-01")  # the same day
    assert out["requested_on"] == "2024-03-01"


def test_a_note_signed_off_before_its_withdrawal_is_refused_naming_both_dates(bank):
    ann, bob = bank["ann"], bank["bob"]
    cap, spd = evidence(bank["tmp"], 3000, "2024-04-01")
    w = ann.withdraw(B, JC, 3000, "A-1", node=NODE, capacity_ref=cap, spdes_ref=spd, application_approval="H2",
                     on="2024-04-10")
    with pytest.raises(RefusedError, match="on 2024-04-09 is before the journal's last row .*recorded 2024-04-10"):
        bob.sign_off(w["txn"], on="2024-04-09")
    with pytest.raises(RefusedError, match="the sign-off date 2024-04-09 is before the withdrawal date 2024-04-10"):
        bob.sign_off(w["txn"], on="2024-04-09", late_reason="signed on paper the day before")
    assert bob.sign_off(w["txn"], on="2024-04-10")["note_issued_on"] == "2024-04-10"


def test_a_sign_off_on_evidence_dated_after_it_is_refused(bank, bank_calendar):
    """The SPDES check is as of 2024-04-20; a withdrawal of 2024-04-10 recorded late (on 2024-04-20) may cite it,
    but a note issued on 2024-04-15 cannot rest on a check of records up to 2024-04-20."""
    ann, bob = bank["ann"], bank["bob"]
    cap, spd = evidence(bank["tmp"], 3000, "2024-04-20")
    bank_calendar["now"] = dt.datetime(2024, 4, 20, 9, tzinfo=dt.timezone.utc)
    w = ann.withdraw(B, JC, 3000, "A-1", node=NODE, capacity_ref=cap, spdes_ref=spd, application_approval="H2",
                     on="2024-04-10", late_reason="application of 2024-04-10 entered late")
    with pytest.raises(RefusedError, match="the cited SPDES check is as of 2024-04-20, after the sign-off date 2024-04-15"):
        bob.sign_off(w["txn"], on="2024-04-15", late_reason="signed on paper on 2024-04-15")
    bob.sign_off(w["txn"], on="2024-04-20")


@pytest.mark.parametrize("sql, found", [
    ("UPDATE withdrawals SET requested_on = '2024-02-01'", "withdrawn on 2024-02-01, before its credits were certified "
                                                          "(2024-03-01)"),
    ("UPDATE withdrawals SET note_issued_on = '2024-04-01'", "note issued on 2024-04-01, before its withdrawal (2024-04-10)"),
    ("UPDATE withdrawals SET spdes_as_of = '2024-05-01'", "its SPDES check is as of 2024-05-01, after the note of 2024-04-10"),
])
def test_verify_finds_dates_out_of_order_written_outside_capacitysim(bank, sql, found):
    ann, bob = bank["ann"], bank["bob"]
    cap, spd = evidence(bank["tmp"], 3000, "2024-04-01")
    w = ann.withdraw(B, JC, 3000, "A-1", node=NODE, capacity_ref=cap, spdes_ref=spd, application_approval="H2",
                     on="2024-04-10")
    bob.sign_off(w["txn"], on="2024-04-10")
    assert ann.verify()["ok"]
    raw = sqlite3.connect(bank["path"])
    for t in ("withdrawals_forward_only", "withdrawals_commitment_once"):
        raw.execute(f"DROP TRIGGER IF EXISTS {t}")
    raw.execute(sql)
    raw.commit()
    raw.close()
    v = ann.verify(check_files=False)
    assert not v["ok"] and any(found in p for p in v["problems"]), v["problems"]
