"""The credit bank ledger on a real SQLite file: the composed Ledger, and the helpers its parts' tests share.

Each part of the ledger (capacitysim.bank.ledger_<part>) has its tests in tests/bank/test_ledger_<part>.py,
which import the helpers below; this module tests the composition: the names importable from
capacitysim.bank.ledger, each method written in one part, and any sequence of operations through all parts.

Since issue 14 deposits, withdrawals and transfers take effect at the bank administrator's sign-off:
the helpers ``dep``/``tr`` sign off at once, and ``approve`` cites the section H documents (JSON files
written by ``evidence``) and signs off. The tester records; a second registered administrator, the
checker, signs off and rejects (program policy signoff_separation: nobody signs off what they recorded).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capacitysim.bank import Ledger
from capacitysim.bank import ledger as ledger_module
from capacitysim.errors import InputError, RefusedError
from tests.bank_support import quantification

#: entries are recorded on their own days (program policy no_backdating): tests/conftest.py bank_calendar
pytestmark = pytest.mark.usefixtures("bank_calendar")

B, B2 = "JC CSO 4", "BG CSO 12"
JC, BG, DEV, DEV2 = "Village of Johnson City", "City of Binghamton", "Acme Development", "Other LLC"
TESTER = "Terry Tester"  # the person acting, registered as bank administrator
CHECKER = "Cora Checker"  # a second bank administrator: signs off and rejects what the tester records
NODE = "MH-1"


def make(path, **kw) -> Ledger:
    led = Ledger(path, create=True, actor=TESTER, administrator=TESTER, **kw)
    led.add_administrator(CHECKER)
    led.add_entity(JC, municipal=True)
    led.add_entity(BG, municipal=True)
    led.add_entity(DEV)
    led.add_entity(DEV2)
    led.add_basin(B, outlet="CSO4")
    led.add_basin(B2)
    return led


def checked(led, txn, *, reject: str | None = None, **kw) -> dict:
    """The checker signs off (or, with ``reject``, rejects) what the tester recorded."""
    before, led.actor = led.actor, CHECKER
    try:
        return led.reject(txn, reason=reject) if reject is not None else led.sign_off(txn, **kw)
    finally:
        led.actor = before


def q(led, project, gpd) -> str:
    """A PE's quantification of ``project`` (``gpd``) beside the bank file, for a deposit to cite."""
    return quantification(led.path.parent, project, gpd)


def dep(led, basin, owner, gpd, project, **kw) -> dict:
    """Deposit (citing a quantification of ``gpd`` unless ``quantification`` is given) and sign off (the deposit
    takes effect)."""
    kw.setdefault("quantification", q(led, project, gpd))
    out = led.deposit(basin, owner, gpd, project, **kw)
    checked(led, out["txn"], on=kw.get("certified_on"))
    return out


def tr(led, *args, **kw) -> dict:
    """Transfer and sign off."""
    out = led.transfer(*args, **kw)
    checked(led, out["txn"])
    return out


def evidence(folder, *, node=NODE, gpd=3000.0, as_of="2024-05-01", added=None) -> tuple[str, str]:
    """A passing capacity demonstration (connecting ``gpd`` at ``node``) and a SPDES check (``added`` gpd, as of ``as_of``)."""
    import uuid

    k = uuid.uuid4().hex[:8]  # each pair is a document of its own (program policy evidence_single_use)
    cap = {"kind": "capacity-demonstration", "verdict": "pass", "run": k,
           "scenario": {"connections": [{"node": node, "flow_gpd": gpd}]},
           "external_files": [{"verb": "MODEL", "path": "/models/m.inp", "sha256": "ab" * 32}]}
    spd = {"kind": "spdes-check", "verdict": "pass", "as_of": as_of, "added_gpd": gpd if added is None else added,
           "connection_prohibited": False, "run": k}
    (folder / f"cap-{k}.json").write_text(json.dumps(cap))
    (folder / f"spdes-{k}.json").write_text(json.dumps(spd))
    return str(folder / f"cap-{k}.json"), str(folder / f"spdes-{k}.json")


def approve(led, basin, owner, gpd, app, *, on, ratio=1.0, **kw) -> dict:
    """A withdrawal citing its section H(1) documents and H(2) approval, signed off on ``on``."""
    cap, spd = evidence(led.path.parent, gpd=gpd, as_of=on)
    out = led.withdraw(basin, owner, gpd, app, node=NODE, capacity_ref=cap, spdes_ref=spd, application_approval=f"H2-{app}",
                       offset_ratio=ratio, on=on, **kw)
    checked(led, out["txn"], on=on)
    return led.withdrawal(app)


@pytest.fixture
def led(tmp_path):
    ledger = make(tmp_path / "bank.sqlite")
    dep(ledger, B, JC, 10000, "P1", certified_on="2024-01-02", certificate="cert-P1.pdf")
    yield ledger
    assert ledger.verify()["ok"], ledger.verify()
    ledger.close()


def bal(led, basin=B, owner=JC):
    return led.balance(basin, owner)["balance_gpd"]


# --- any sequence through every part ------------------------------------------------------------

ops = st.lists(
    st.tuples(st.sampled_from(["deposit", "deposit-bg", "withdraw", "transfer", "return", "condemn", "sign", "reject"]),
              st.integers(1, 6000), st.sampled_from([JC, BG, DEV, DEV2])),
    min_size=1, max_size=25)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops)
def test_any_sequence_keeps_balances_lots_and_journal_in_step(tmp_path_factory, seq):
    """Deposits by two jurisdictions, transfers and withdrawals left pending or decided in any order,
    returns and condemnations: balances never negative, lots always sum to the balances, verify clean,
    and a holder's credits condemned by Johnson City always came from Johnson City's projects."""
    led = make(tmp_path_factory.mktemp("prop") / "p.sqlite")
    dep(led, B, JC, 5000, "SEED")
    for i, (op, n, who) in enumerate(seq):
        try:
            if op == "deposit":
                led.deposit(B, JC, n, f"P{i}", quantification=q(led, f"P{i}", n))
            elif op == "deposit-bg":
                led.deposit(B, BG, n, f"BGP{i}", quantification=q(led, f"BGP{i}", n))
            elif op == "withdraw":
                led.withdraw(B, who, n + 2500, f"A{i}", principal=JC, node=NODE)
            elif op == "transfer":
                led.transfer(B, JC if who != JC else BG, who, n, document="bill of sale")
            elif op == "return":
                apps = [w["application"] for w in led.withdrawals() if w["status"] == "pending"]
                if apps:
                    led.return_credits(apps[0], reason="withdrawn")
            elif op in ("sign", "reject"):
                pend = [p for p in led.pending() if p["kind"] != "withdrawal"]
                if pend:
                    checked(led, pend[0]["txn"], reject=None if op == "sign" else "no")
            else:
                out = led.condemn(B, who, JC, n, document="resolution")
                assert {x["jurisdiction"] for x in out["lots_taken"]} == {JC}
        except (RefusedError, InputError):
            pass
        assert all(r["balance_gpd"] >= 0 for r in led.balances())
    for r in led.balances():
        assert sum(x["gpd"] for x in led.lots(r["basin"], r["owner"])) == r["balance_gpd"]
    v = led.verify()
    assert v["ok"], v
    led.close()


# --- the composition --------------------------------------------------------------------------------

#: Every public name capacitysim.bank.ledger defined or imported before it was split into parts (issue 27).
NAMES_BEFORE_THE_SPLIT = (
    "ADMINISTRATOR_REGISTRATION", "ALLOCATION_POLICY", "APPLICATION_TYPES", "BANK_READS", "BINDABLE_ROLES",
    "BankBusyError", "BusyError", "CONDEMNATION_SIGNOFF", "CapacitysimError", "DEFAULT_CREDITS", "DEFAULT_DB",
    "EVIDENCE_HELD_BY", "EVIDENCE_SINGLE_USE", "EXTENSION_AFTER_DUE_DATE", "GENESIS_HASH", "HASHED_COLUMNS",
    "InputError", "LOT_NOTE_MIGRATED", "LOT_NOTE_UNKNOWN", "Ledger", "MAX_GPD", "MAX_NAME", "MAX_TEXT", "MIGRATION_3",
    "MIGRATION_4", "MIGRATION_5", "MIGRATION_6", "MIN_NAME", "PENDING_RESERVE", "POLICIES", "POLICY_FLAG", "PROPERTIES",
    "ROLE_WORDS", "RefusedError", "SCHEMA", "SCHEMA_VERSION", "SERVICE_USER_BINDING", "SIGNOFF_SEPARATION",
    "SPDES_EVIDENCE_MAX_AGE_DAYS", "book_down", "book_up", "default_actor", "ii_offset", "journal_hash", "parse_date",
    "person_name", "policies", "quantification_facts_checked", "utc_now",
)


def test_every_name_importable_from_the_ledger_before_the_split_still_is():
    missing = [n for n in NAMES_BEFORE_THE_SPLIT if not hasattr(ledger_module, n)]
    assert missing == []
    assert sorted(ledger_module.__all__) == sorted(NAMES_BEFORE_THE_SPLIT)
    assert ledger_module.Ledger is Ledger and ledger_module.policies()[0]["name"] == "allocation_policy"


def test_each_method_of_the_ledger_is_written_in_one_part_only():
    parts = Ledger.__mro__[1:-1]
    assert {p.__module__ for p in parts} == {f"capacitysim.bank.ledger_{m}" for m in (
        "core", "lots", "admin", "migration", "verify", "evidence", "transactions", "signoff", "applications",
        "registry", "records", "reading")}
    seen: dict[str, str] = {}
    for part in parts:
        for name in vars(part):
            if not name.startswith("__") or name == "__init__":
                assert name not in seen, f"{name} is written in {seen[name]} and in {part.__name__}"
                seen[name] = part.__name__
    own = set(vars(Ledger)) - {"__module__", "__doc__", "__qualname__", "__firstlineno__", "__static_attributes__"}
    assert own - {"_not_future"} == {"_evidence_single_use"}  # _not_future: the bank_calendar fixture's stand-in
