"""The registry (capacitysim.bank.ledger_registry): entities, basins, subaccounts, projects, models of record."""

from __future__ import annotations

import pytest

from capacitysim.errors import InputError, RefusedError
from tests.bank.test_ledger import B, JC, BG, DEV, DEV2, led  # the ledger's shared test helpers

#: entries are recorded on their own days (program policy no_backdating): tests/conftest.py bank_calendar
pytestmark = pytest.mark.usefixtures("bank_calendar")


def test_names_are_one_whatever_their_case(led):
    with pytest.raises(RefusedError, match="entity 'village of johnson city' already exists as 'Village of Johnson City'"):
        led.add_entity("village of johnson city")
    with pytest.raises(RefusedError, match="basin 'jc cso 4' already exists"):
        led.add_basin("jc cso 4")
    assert [e["name"] for e in led.entities()] == sorted([JC, BG, DEV, DEV2])


def test_a_project_lies_in_a_municipal_user_s_jurisdiction(led):
    with pytest.raises(RefusedError, match="is not a municipal user"):
        led.add_project("PX", B, DEV)
    out = led.add_project("PX", B, BG, property="Private", estimated_gpd=1200)
    assert (out["status"], out["property"]) == ("identified", "private")
    with pytest.raises(InputError, match="property 'attic'"):
        led.add_project("PY", B, BG, property="attic")


def test_a_subaccount_is_opened_once_and_a_basin_without_model_has_none(led):
    assert led.open_subaccount(B, DEV)["balance_gpd"] == 0
    with pytest.raises(RefusedError, match="already has a subaccount"):
        led.open_subaccount(B, DEV)
    assert led.models(B) == []
    with pytest.raises(InputError, match="plant is registered with the basin's model"):
        led.add_basin("New basin", plant="NY0024414")
