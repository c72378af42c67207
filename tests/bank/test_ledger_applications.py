"""After the withdrawal (capacitysim.bank.ledger_applications): return, default, extension, completion; applications without credits."""

from __future__ import annotations

import datetime as dt

import pytest

from capacitysim.errors import InputError, RefusedError
from tests.bank.test_ledger import B, JC, NODE, approve, led, bal  # the ledger's shared test helpers

#: entries are recorded on their own days (program policy no_backdating): tests/conftest.py bank_calendar
pytestmark = pytest.mark.usefixtures("bank_calendar")


def test_return_of_reserved_credits(led):
    led.withdraw(B, JC, 4000, "A5", node=NODE)
    led.return_credits("A5", reason="application withdrawn by the applicant")
    assert bal(led) == 10000 and led.withdrawal("A5")["status"] == "returned"
    assert led.withdrawal("A5")["signoff_status"] == "cancelled" and led.pending() == []
    assert [(x["project"], x["gpd"]) for x in led.lots()] == [("P1", 10000)]  # back into the lot they came from
    with pytest.raises(RefusedError, match="returned"):
        led.return_credits("A5", reason="again")


def test_default_one_year_after_note_unless_extended(led):
    approve(led, B, JC, 3000, "A6", on="2024-02-01")
    approve(led, B, JC, 3000, "A7", on="2024-02-01")
    assert led.check_defaults("2025-02-01") == []  # due on 2025-02-01: not yet in default
    with pytest.raises(RefusedError, match="later than"):
        led.extend("A7", "2025-01-15", document="Board letter", granted_on="2025-01-10")
    # granted the day after the due date: refused by the program policy extension_after_due_date (not the rule)
    with pytest.raises(RefusedError, match="program policy extension_after_due_date .*after the due date 2025-02-01"):
        led.extend("A7", "2025-08-01", document="Board letter", granted_on="2025-02-02")
    out = led.extend("A7", "2025-08-01", document="Board letter 2025-01-20", granted_on="2025-02-01")  # on the due date
    assert [p["name"] for p in out["policies"]] == ["extension_after_due_date"]
    out = led.check_defaults("2025-02-02")
    assert [d["application"] for d in out] == ["A6"] and out[0]["policy"] == "default_credits"
    assert led.withdrawal("A6")["status"] == "defaulted" and bal(led) == 10000 - 3000
    with pytest.raises(RefusedError, match="after the due date"):
        led.complete("A7", "2025-09-01")
    led.complete("A7", "2025-07-15")
    assert led.withdrawal("A7")["status"] == "completed"
    assert led.check_defaults() == []  # today: the completed note can no longer default
    with pytest.raises(InputError, match="as_of .* is in the future"):
        led.check_defaults((dt.date.today() + dt.timedelta(days=1)).isoformat())  # a default is final: never ahead of time
    with pytest.raises(RefusedError, match="only an issued flow credit note"):
        led.extend("A7", "2026-01-01", document="x")  # completed, not approved
    assert [e["action"] for e in led.journal() if e["ref"] in ("A6", "A7")].count("default") == 1


def test_completion_dates_are_checked(led):
    approve(led, B, JC, 3000, "A-C", on="2024-05-01")
    with pytest.raises(RefusedError, match="co_issued_on 2024-04-30 is before the journal's last row"):
        led.complete("A-C", "2024-04-30")  # program policy no_backdating
    with pytest.raises(InputError, match="before the flow credit note"):
        led.complete("A-C", "2024-04-30", late_reason="a certificate entered late")
    with pytest.raises(InputError, match="future"):
        led.complete("A-C", (dt.date.today() + dt.timedelta(days=2)).isoformat())
    led.complete("A-C", "2024-05-01")


def test_an_application_without_credits_is_received_approved_then_completed(led):
    out = led.record_application("S-1", JC, 2000, basin=B, node=NODE, received_on="2024-02-01")
    assert (out["status"], out["credits"], out["offset_required"]) == ("received", "none", False)
    with pytest.raises(RefusedError, match="only an application approved"):
        led.complete("S-1", "2024-02-02")
    assert led.attach("S-1", application_approval="H2-S-1")["status"] == "approved"
    with pytest.raises(InputError, match="only --application-approval"):
        led.attach("S-1", capacity_ref="cap.json")
    done = led.complete("S-1", "2024-03-01")
    assert (done["status"], done["completed_on"]) == ("completed", "2024-03-01")
    with pytest.raises(RefusedError, match="already has a withdrawal or record"):
        led.record_application("s-1", JC, 100)
