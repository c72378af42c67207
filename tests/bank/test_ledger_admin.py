"""Administration (capacitysim.bank.ledger_admin): bank administrators and service users bound to entities."""

from __future__ import annotations

import pytest

from capacitysim.errors import InputError, RefusedError
from tests.bank.test_ledger import JC, BG, DEV, TESTER, CHECKER, led  # the ledger's shared test helpers

#: entries are recorded on their own days (program policy no_backdating): tests/conftest.py bank_calendar
pytestmark = pytest.mark.usefixtures("bank_calendar")


def test_only_a_registered_administrator_registers_another_once(led):
    led.actor = "Dana Doe"
    with pytest.raises(RefusedError, match="'Dana Doe' is not a registered bank administrator"):
        led.add_administrator("Eve Example")
    led.actor = TESTER
    with pytest.raises(RefusedError, match="already a registered bank administrator as 'Terry Tester'"):
        led.add_administrator("terry tester")
    led.add_administrator("Eve Example", document="Board resolution 7")
    assert [a["name"] for a in led.administrators()] == [TESTER, CHECKER, "Eve Example"]


def test_a_service_user_acts_only_for_the_entities_bound_to_them(led):
    out = led.bind_user("Mia Muni", JC, role="municipal", document="letter of the Village")
    assert (out["user"], out["entity"], out["bound_by"]) == ("Mia Muni", JC, TESTER)
    assert led.acts_for("mia muni", JC) and not led.acts_for("Mia Muni", BG)
    with pytest.raises(RefusedError, match="is not a municipal user"):
        led.bind_user("Mia Muni", DEV, role="municipal")
    with pytest.raises(RefusedError, match="reviewers record nothing"):
        led.bind_user("Rae Reviewer", JC, role="reviewer")
    led.unbind_user("Mia Muni", JC, reason="left the Village")
    assert not led.acts_for("Mia Muni", JC) and led.bound_entities("Mia Muni") == []
    assert [b["unbound_by"] for b in led.bindings(closed=True)] == [TESTER]
    with pytest.raises(InputError, match="is not bound to"):
        led.unbind_user("Mia Muni", JC)
