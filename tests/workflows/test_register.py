"""The capacity register (issue 24, part 5): ``bank register`` and :mod:`capacitysim.workflows.register`.

Real SWMM and a real SQLite bank: basin CSO1 registered on a copy of the bundled ``synthetic-50``
(outlet MH0004, plant NY0024414), with two commitments: withdrawal A-1 (12,000 gpd peak, 3,000 gpd
average at MH0010, reserved, with hand-made evidence as tests/bank/test_capacity_register.py writes it)
and application S-1 (2,000 gpd peak, 500 gpd average at MH0011, received). The plant's record is the
bundled ``sample-wwtp`` as of 2025-01-15 (its record ends 2024-12-31).

Engine runs: the register searches three manholes (the two commitment nodes and the outlet, 8 runs
under the model's own rainfall); ``capacity --committed`` checks one bracket (4 runs); the cache test
computes once more after a commitment is added (a copy of the bank, 4 manholes).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import uuid

import pytest

from capacitysim.bank import Ledger
from capacitysim.errors import InputError, RefusedError
from capacitysim.io.bundled import model_path as bundled_model_path
from capacitysim.workflows import register as wr
from tests.bank_support import quantification

pytestmark = [pytest.mark.swmm]

ANN, BOB = "Ann Admin", "Bob Checker"
JC = "Village of Johnson City"
PLANT = "NY0024414"
AS_OF = "2025-01-15"


def _evidence(folder, node, gpd, committed, model_sha):
    """A passing capacity demonstration and SPDES check that include ``committed`` (hand-made, as the bank reads them)."""
    k = uuid.uuid4().hex[:8]
    block = {"bank_head": committed["bank_head"], "as_of": committed["as_of"],
             "flows": [{"application": f["application"], "node": f["node"], "average_gpd": f["average_gpd"]}
                       for f in committed["flows"]]}
    cap, spd = folder / f"cap-{k}.json", folder / f"spdes-{k}.json"
    cap.write_text(json.dumps({"kind": "capacity-demonstration", "verdict": "pass", "run": k,
                               "external_files": [{"verb": "MODEL", "path": "system.inp", "sha256": model_sha}],
                               "scenario": {"connections": [{"node": node, "flow_gpd": gpd}]}, "committed": block}))
    spd.write_text(json.dumps({"kind": "spdes-check", "run": k, "as_of": committed["as_of"], "added_gpd": gpd,
                               "treatment_capacity_shown": True, "committed": block,
                               "committed_gpd": sum(f["average_gpd"] for f in block["flows"])}))
    return str(cap), str(spd)


def make_bank(folder):
    """The bank of the module's docstring in ``folder`` (its model a copy of synthetic-50 there)."""
    model = folder / "system.inp"
    shutil.copyfile(bundled_model_path("synthetic-50"), model)
    bank = folder / "bank.sqlite"
    with Ledger(bank, create=True, actor=ANN, administrator=ANN) as ann:
        ann.add_administrator(BOB)
        ann.add_entity(JC, municipal=True)
        ann.add_basin("CSO1", outlet="MH0004", model=model, plant=PLANT)
        txn = ann.deposit("CSO1", JC, 100000, "P-1", quantification=quantification(folder, "P-1", 100000))["txn"]
    with Ledger(bank, actor=BOB) as bob:
        bob.sign_off(txn)
    sha = hashlib.sha256(model.read_bytes()).hexdigest()
    with Ledger(bank, actor=ANN) as ann:
        cap, spd = _evidence(folder, "MH0010", 12000, ann.commitments(model_sha256=sha, exclude="A-1"), sha)
        ann.withdraw("CSO1", JC, 12000, "A-1", node="MH0010", capacity_ref=cap, spdes_ref=spd,
                     application_approval="H2-A-1", average_gpd=3000)
        ann.record_application("S-1", JC, 2000, basin="CSO1", node="MH0011", average_gpd=500)
    return bank, model


@pytest.fixture(scope="module")
def setup(tmp_path_factory, run_cli):
    """The bank, and its register computed once through the CLI (``--json --report``)."""
    tmp = tmp_path_factory.mktemp("register")
    bank, model = make_bank(tmp)
    report = tmp / "register.html"
    r = run_cli("bank", "--db", bank, "register", "--plant", f"{PLANT}=sample-wwtp", "--as-of", AS_OF, "--workers", "0",
                "--no-progress", "--json", "--report", report)
    assert r.exit_code == 0, r.output
    return {"tmp": tmp, "bank": bank, "model": model, "doc": json.loads(r.stdout), "report": report}


def _node(doc, node):
    return next(r for r in doc["models"][0]["headroom"]["nodes"] if r["node"] == node)


# --- the document ------------------------------------------------------------------------------------------


def test_the_register_lists_each_plant_and_model_with_its_commitments_and_figures(setup):
    doc = setup["doc"]
    assert doc["kind"] == "capacity-register" and doc["as_of"] == AS_OF and doc["report"] == str(setup["report"])
    with Ledger(setup["bank"]) as led:
        assert doc["bank_head"] == led.head()["head"]
    assert doc["freshness"]["status"] == "current" and doc["cache"]["computed"] == 2 and doc["cache"]["reused"] == 0
    (p,) = doc["plants"]
    f = p["figures"]
    assert p["plant"] == PLANT and p["basins"] == ["CSO1"] and p["committed_gpd"] == 3500.0
    assert f["permitted_flow_gpd"] == 500_000.0 and f["committed_gpd"] == 3500.0
    assert f["remaining_gpd"] == pytest.approx(f["permitted_flow_gpd"] - f["twelve_month_gpd"] - 3500.0, abs=1e-6)
    assert p["freshness"]["text"].startswith(f"computed for bank head {doc['bank_head'][:12]}") \
        and p["freshness"]["text"].endswith("(current)")
    (m,) = doc["models"]
    assert m["model_sha256"] == hashlib.sha256(setup["model"].read_bytes()).hexdigest()
    assert [(x["application"], x["node"], x["average_gpd"], x["status"]) for x in m["commitments"]["flows"]] == [
        ("A-1", "MH0010", 3000.0, "reserved"), ("S-1", "MH0011", 500.0, "received")]
    assert {k: v["why"] for k, v in ((s["node"], s) for s in m["selected_nodes"])} == {
        "MH0010": ["commitment A-1"], "MH0011": ["commitment S-1"], "MH0004": ["outlet of basin CSO1"]}
    hd = m["headroom"]
    assert {r["node"] for r in hd["nodes"]} == {"MH0010", "MH0011", "MH0004"}
    assert all(r["status"] == "ok" and r["passing_gpd"] < r["failing_gpd"] for r in hd["nodes"])
    assert hd["committed_applications"] == ["A-1", "S-1"] and hd["committed_bank_head"] == doc["bank_head"]
    assert doc["runs_total"] == hd["runs_total"] > 0
    assert set(m["geometry"]["nodes"]) >= {"MH0010", "MH0011", "MH0004"}  # the map's coordinates
    html = setup["report"].read_text()
    assert "Capacity register" in html and "(current)" in html and f"{f['remaining_gpd']:,.0f}" in html
    assert "<svg" in html and "the committed flows (stars)" in html  # the plan map (its labels are drawn as outlines)


def test_the_commitments_lower_the_manholes_headroom(setup):
    """The same search without the commitments (straight headroom) gives more room at the same node."""
    from capacitysim.workflows.headroom import headroom

    plain = headroom(setup["model"], None, ["MH0004"], workers=0).to_dict()["nodes"][0]
    assert plain["passing_gpd"] > _node(setup["doc"], "MH0004")["failing_gpd"]


# --- agreement with the checks it stands for ---------------------------------------------------------------


def test_the_plant_remaining_headroom_is_spdes_check_committed_exactly(setup, run_cli):
    r = run_cli("spdes", "check", "--plant", "sample-wwtp", "--flows", "sample-wwtp", "--spdes-permit", PLANT,
                "--as-of", AS_OF, "--committed", str(setup["bank"]), "--json")
    assert r.exit_code == 0, r.output
    check = json.loads(r.stdout)
    f = setup["doc"]["plants"][0]["figures"]
    assert check["headroom_gpd"] == f["remaining_gpd"] and check["committed_gpd"] == f["committed_gpd"] == 3500.0
    assert check["worst_average_mgd"] * 1e6 == pytest.approx(f["twelve_month_gpd"], rel=1e-12)


def test_the_manhole_headroom_agrees_with_capacity_committed_at_its_bracket(setup, run_cli):
    """The issue's test: at the commitment's own node, `capacity --connect NODE=passing --committed BANK` passes and
    `--connect NODE=failing` fails, both with the bank's commitments."""
    cell = _node(setup["doc"], "MH0010")
    out = {}
    for gpd in (cell["passing_gpd"], cell["failing_gpd"]):
        r = run_cli("capacity", "--model", str(setup["model"]), "--connect", f"MH0010={gpd:g}", "--committed",
                    str(setup["bank"]), "--json")
        out[gpd] = (r.exit_code, json.loads(r.stdout))
    (ok_code, ok), (bad_code, bad) = out[cell["passing_gpd"]], out[cell["failing_gpd"]]
    assert ok_code == 0 and ok["verdict"] == "pass"
    assert bad_code == 1 and bad["verdict"] == "fail"
    for d in (ok, bad):
        assert [x["application"] for x in d["committed"]["flows"]] == ["A-1", "S-1"]
        assert d["committed"]["bank_head"] == setup["doc"]["bank_head"]
    failed = {(c["criterion"], c["element"]) for c in bad["checks"] if c["passed"] is False}
    g = cell["governing_check"]
    assert (g["criterion"], g["element"]) in failed


# --- freshness and the store next to the bank --------------------------------------------------------------


def _copy_bank(src_dir, dst_dir):
    """A copy of the bank (SQLite's backup: WAL included), its stored register, and the same model path."""
    dst = dst_dir / "bank.sqlite"
    with sqlite3.connect(src_dir / "bank.sqlite") as a, sqlite3.connect(dst) as b:
        a.backup(b)
    shutil.copyfile(wr.default_cache_path(src_dir / "bank.sqlite"), wr.default_cache_path(dst))
    return dst


def test_the_stored_figures_are_reused_while_the_commitments_are_unchanged(setup, tmp_path):
    bank = _copy_bank(setup["tmp"], tmp_path)
    same = wr.capacity_register(bank, plants={PLANT: "sample-wwtp"}, as_of=AS_OF, workers=0).to_dict()
    assert same["runs_total"] == 0 and same["cache"] == {"path": str(wr.default_cache_path(bank)), "reused": 2,
                                                         "computed": 0, "note": None}
    assert same["models"][0]["headroom"] == setup["doc"]["models"][0]["headroom"]
    assert same["plants"][0]["figures"] == setup["doc"]["plants"][0]["figures"]
    assert same["models"][0]["freshness"]["text"].endswith("(current)")
    # the head moves (a deposit), no commitment changes: still re-used, and it says so
    with Ledger(bank, actor=ANN) as ann:
        ann.deposit("CSO1", JC, 5000, "P-2", quantification=quantification(tmp_path, "P-2", 5000))
    moved = wr.capacity_register(bank, plants={PLANT: "sample-wwtp"}, as_of=AS_OF, workers=0).to_dict()
    assert moved["bank_head"] != same["bank_head"] and moved["runs_total"] == 0 and moved["cache"]["reused"] == 2
    assert "current: the bank's head is now" in moved["models"][0]["freshness"]["text"]
    # --refresh computes again
    again = wr.capacity_register(bank, as_of=AS_OF, workers=0, refresh=True, headroom=False)
    assert again.to_dict()["cache"]["reused"] == 0


def test_a_commitment_added_makes_the_stored_figures_stale_and_they_are_computed_again(setup, tmp_path, run_cli):
    bank = _copy_bank(setup["tmp"], tmp_path)
    with Ledger(bank, actor=ANN) as ann:
        ann.record_application("S-2", JC, 1000, basin="CSO1", node="MH0020", average_gpd=250)
    r = run_cli("bank", "--db", str(bank), "register", "--cached")
    assert r.exit_code == 0, r.output
    assert "stale: computed for bank head" in r.stdout and "the commitments changed since: added S-2" in r.stdout
    stale = wr.stored_register(bank).to_dict()
    assert {s["freshness"]["status"] for s in stale["models"] + stale["plants"]} == {"stale"}
    new = wr.capacity_register(bank, plants={PLANT: "sample-wwtp"}, as_of=AS_OF, workers=0).to_dict()
    assert new["cache"]["computed"] == 2 and new["cache"]["reused"] == 0 and new["runs_total"] > 0
    assert new["plants"][0]["figures"]["remaining_gpd"] == pytest.approx(
        setup["doc"]["plants"][0]["figures"]["remaining_gpd"] - 250.0, abs=1e-6)
    assert "MH0020" in {s["node"] for s in new["models"][0]["selected_nodes"]}
    assert new["models"][0]["headroom"]["committed_applications"] == ["A-1", "S-1", "S-2"]
    assert wr.stored_register(bank).to_dict()["freshness"]["status"] == "current"


def test_a_plant_without_a_record_is_listed_not_computed(setup, tmp_path):
    bank = _copy_bank(setup["tmp"], tmp_path)
    stored = wr.default_cache_path(bank).read_bytes()
    doc = wr.capacity_register(bank, as_of=AS_OF, headroom=False, cache=False).to_dict()
    (p,) = doc["plants"]
    assert p["figures"] is None and p["committed_gpd"] == 3500.0
    assert p["freshness"] == {"status": "not computed", "text": f"remaining: not computed (give --plant {PLANT}=PLANT)"}
    assert doc["models"][0]["headroom"] is None and doc["runs_total"] == 0
    assert doc["models"][0]["freshness"]["text"] == "headroom: not computed (--no-headroom)"
    assert wr.default_cache_path(bank).read_bytes() == stored  # cache=False: the store is neither read nor written


# --- the command's answers to bad input --------------------------------------------------------------------


@pytest.mark.parametrize("args, code, message", [
    (["--plant", "NY0099999=sample-wwtp"], 2, "no basin of the bank bank.sqlite is registered as draining to plant "
                                              "'NY0099999'; registered plants: NY0024414"),
    (["--plant", "sample-wwtp"], 2, "expected KEY=PLANT"),
    (["--plant", f"{PLANT}=no-such-plant"], 2, "is not a plant file (.toml), a daily flow record (.csv) or a bundled"),
    (["--nodes", "MH9999"], 2, "--nodes: MH9999 is not a node of any registered model"),
    (["--plant", f"{PLANT}=sample-wwtp", "--as-of", "2026-11-30"], 2, "no month period with data ends in the look-back"),
    (["--nodes", "MH0010", "--all"], 2, "give --nodes or --all, not both"),
    (["--cached", "--refresh"], 2, "--cached shows the stored register as it was computed"),
])
def test_bad_input_exits_2_with_one_line(setup, tmp_path, run_cli, args, code, message):
    bank = _copy_bank(setup["tmp"], tmp_path)
    r = run_cli("bank", "--db", str(bank), "register", "--no-headroom", *args)
    assert r.exit_code == code, r.output
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_the_plant_file_of_another_permit_is_refused(setup, tmp_path):
    plant = tmp_path / "other.toml"
    plant.write_text('name = "Other WWTP"\nwatershed = true\nspdes_permit = "NY0099999"\nflow_limit_mgd = 0.5\n')
    shutil.copyfile(wr.resolve_plant_input("k", "sample-wwtp").flows, tmp_path / "other.csv")  # its record, beside it
    with pytest.raises(InputError, match=f"is of SPDES permit NY0099999 \\(Other WWTP\\), not of plant {PLANT}"):
        wr.capacity_register(setup["bank"], plants=[f"{PLANT}={plant}"], as_of=AS_OF, headroom=False, cache=False)


def test_no_bank_and_no_stored_register_exit_2(tmp_path, run_cli):
    r = run_cli("bank", "--db", str(tmp_path / "none.sqlite"), "register", "--no-headroom")
    assert r.exit_code == 2 and "no credit bank at" in r.stderr
    bank, _ = make_bank(tmp_path)
    r = run_cli("bank", "--db", str(bank), "register", "--cached")
    assert r.exit_code == 2 and "no stored register at" in r.stderr


def test_a_registered_model_changed_since_registration_exits_3(tmp_path, run_cli):
    bank, model = make_bank(tmp_path)
    model.write_bytes(model.read_bytes() + b"\n; edited after registration\n")
    r = run_cli("bank", "--db", str(bank), "register", "--no-headroom")
    assert r.exit_code == 3, r.output
    assert "has changed since it was registered" in r.stderr and "register the new version" in r.stderr
    with pytest.raises(RefusedError):
        wr.capacity_register(bank, headroom=False, cache=False)


def test_the_table_says_how_fresh_each_figure_is(setup, tmp_path, run_cli):
    bank = _copy_bank(setup["tmp"], tmp_path)
    r = run_cli("bank", "--db", str(bank), "register", "--plant", f"{PLANT}=sample-wwtp", "--as-of", AS_OF, "--workers", "0")
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert "capacity register" in out and "plant NY0024414" in out and "model system.inp" in out
    remaining = f"{setup['doc']['plants'][0]['figures']['remaining_gpd']:,.0f} gpd"
    assert f"remaining        {remaining}" in out
    assert out.count("(current)") >= 2 and "0 computed now, 2 re-used" in out
    for node in ("MH0010", "MH0011", "MH0004"):
        assert node in out
