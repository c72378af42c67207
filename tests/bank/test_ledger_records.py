"""The program's records (capacitysim.bank.ledger_records): annual submissions, disputes, the purge."""

from __future__ import annotations

import datetime as dt

import pytest

from capacitysim.errors import InputError, RefusedError
from tests.bank.test_ledger import B, JC, DEV, NODE, make, dep, led, bal  # the ledger's shared test helpers

#: entries are recorded on their own days (program policy no_backdating): tests/conftest.py bank_calendar
pytestmark = pytest.mark.usefixtures("bank_calendar")


def test_purge_refused_for_young_records_and_under_dispute(tmp_path):
    clock = {"now": dt.datetime(2015, 1, 1, tzinfo=dt.timezone.utc)}
    led = make(tmp_path / "old.sqlite", clock=lambda: clock["now"])
    dep(led, B, JC, 9000, "OLD1")
    led.withdraw(B, JC, 3000, "OLD-A", node=NODE)
    clock["now"] = dt.datetime.now(dt.timezone.utc)
    dep(led, B, JC, 500, "NEW1")
    recent = (dt.date.today() - dt.timedelta(days=365)).isoformat()
    with pytest.raises(RefusedError, match="younger than 3 years"):
        led.purge(recent, reason="housekeeping")
    d = led.open_dispute(B, "quantification of OLD1 contested")
    with pytest.raises(RefusedError, match="under dispute"):
        led.purge("2016-01-01", reason="housekeeping")
    assert led.journal()[0]["action"] == "init"
    led.close_dispute(d["dispute"], reason="settled")
    out = led.purge("2016-01-01", reason="housekeeping")
    assert out["purged_rows"] > 0
    rows = led.journal()
    assert all(r["at"] >= "2016" for r in rows)
    assert "carry-forward" in [r["action"] for r in rows]
    assert led.verify()["ok"]  # the journal still sums to the balances
    assert bal(led) == 6500
    led.close()


def test_annual_records_fall_due_a_year_after_entry_then_after_each_submission(tmp_path):
    led = make(tmp_path / "annual.sqlite")  # entities entered on 2020-01-01 (the calendar's first day)
    jc = {r["municipal_user"]: r for r in led.annual_reports(as_of="2021-06-01")}[JC]
    assert (jc["next_due_on"], jc["status"], jc["submissions"]) == ("2021-01-01", "overdue", [])
    out = led.record_annual_report(JC, 2020, submitted_on="2021-02-01")
    assert (out["due_on"], out["late"]) == ("2021-01-01", True)
    jc = {r["municipal_user"]: r for r in led.annual_reports(as_of="2021-06-01")}[JC]
    assert (jc["next_due_on"], jc["status"], jc["last_submitted_on"]) == ("2022-02-01", "due", "2021-02-01")
    with pytest.raises(RefusedError, match="already submitted"):
        led.record_annual_report(JC, 2020, submitted_on="2021-02-01")
    with pytest.raises(RefusedError, match="is not a municipal user"):
        led.record_annual_report(DEV, 2020, submitted_on="2021-02-01")
    led.close()


def test_a_dispute_is_closed_once(led):
    d = led.open_dispute(B, "lot attribution")["dispute"]
    assert led.close_dispute(d, reason="settled") == {"dispute": d, "closed": True}
    with pytest.raises(RefusedError, match="already closed"):
        led.close_dispute(d, reason="again")
    with pytest.raises(InputError, match="unknown dispute"):
        led.close_dispute(d + 1, reason="none")
