"""`capacitysim capacity --committed BANK` and `spdes check --committed BANK` end to end (issue 24): a real credit bank
with a registered model (a copy of synthetic-50) and plant, recorded applications as commitments, real SWMM runs."""

from __future__ import annotations

import json
import shutil

import pytest

from capacitysim.bank import Ledger
from capacitysim.io.bundled import model_path as bundled_model_path

pytestmark = [pytest.mark.swmm]

ANN = "Ann Admin"
JC = "Village of Johnson City"
PLANT = "NY0024414"
SPDES = ["spdes", "check", "--plant", "sample-wwtp", "--flows", "sample-wwtp", "--as-of", "2024-12-31", "--added-gpd", "1000"]


@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    """Basin CSO1 (outlet MH0004) registered on a copy of synthetic-50, draining to plant NY0024414; three recorded
    applications: at MH0010 (800 gpd average), MH0017 (1,000 gpd) and one with no node (1,500 gpd peak, its average)."""
    tmp = tmp_path_factory.mktemp("bank")
    model = tmp / "system.inp"
    shutil.copyfile(bundled_model_path("synthetic-50"), model)
    path = tmp / "bank.sqlite"
    with Ledger(path, create=True, actor=ANN, administrator=ANN) as led:
        led.add_entity(JC, municipal=True)
        led.add_basin("CSO1", outlet="MH0004", model=model, plant=PLANT)
        led.record_application("APP-1", JC, 2000.0, basin="CSO1", node="MH0010", average_gpd=800.0)
        led.record_application("APP-2", JC, 2400.0, basin="CSO1", node="MH0017", average_gpd=1000.0)
        led.record_application("APP-3", JC, 1500.0, basin="CSO1")
        head = led.head()["head"]
    return {"path": str(path), "model": str(model), "tmp": tmp, "head": head}


def test_capacity_with_the_banks_commitments(run_cli, bank):
    r = run_cli("capacity", "--model", bank["model"], "--connect", "MH0010=5000", "--committed", bank["path"], "--json")
    assert r.exit_code in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    c = doc["committed"]
    assert c["bank_head"] == bank["head"] and c["scope"] == {"model_sha256": doc["model_sha256"]}
    assert [(f["application"], f["node"], f["average_gpd"]) for f in c["flows"]] == [
        ("APP-1", "MH0010", 800.0), ("APP-2", "MH0017", 1000.0), ("APP-3", None, 1500.0)]
    assert c["total_gpd"] == 3300.0 and c["placed_gpd"] == 1800.0
    assert [u["application"] for u in c["unplaced"]] == ["APP-3"] and any("APP-3" in w for w in doc["warnings"])
    # the commitments are injected (in the after run: program policy committed_baseline) and checked like connections
    assert doc["committed"]["baseline"] == "cumulative"
    assert {i["element"] for i in doc["injections"] if i["what"] == "connection"} == {"MH0010", "MH0017"}
    assert all(i["passed"] for i in doc["injections"])
    assert [x["flow_gpd"] for x in doc["scenario"]["connections"]] == [5000.0]
    assert sorted(x["flow_gpd"] for x in doc["scenario"]["committed_connections"]) == [800.0, 1000.0]


def test_capacity_leaves_the_applicants_own_out_and_prints_the_table(run_cli, bank):
    r = run_cli("capacity", "--model", bank["model"], "--connect", "MH0010=800", "--committed", bank["path"],
                "--application", "app-1")
    assert r.exit_code in (0, 1), r.stderr
    assert "committed flows: 2 from bank" in r.stdout and "app-1 left out" in r.stdout
    assert "APP-2" in r.stdout and "APP-1 " not in r.stdout


def test_capacity_on_a_model_the_bank_has_not_registered_exit_2(run_cli, bank):
    r = run_cli("capacity", "--model", "synthetic-500", "--connect", "MH0020=5000", "--committed", bank["path"])
    assert r.exit_code == 2 and r.stderr.startswith(f"error: --committed '{bank['path']}': ")
    assert len(r.stderr.strip().splitlines()) == 1


def test_spdes_check_with_the_banks_commitments(run_cli, bank):
    base = json.loads(run_cli(*SPDES, "--spdes-permit", PLANT, "--json").stdout)
    r = run_cli(*SPDES, "--spdes-permit", PLANT, "--committed", bank["path"], "--json")
    assert r.exit_code in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    assert base["committed_gpd"] == 0.0 and base["committed"] is None
    assert doc["committed_gpd"] == 3300.0 and doc["committed"]["bank_head"] == bank["head"]
    assert base["headroom_gpd"] - doc["headroom_gpd"] == pytest.approx(3300.0, abs=1e-6)
    assert base["headroom_before_gpd"] - doc["headroom_before_gpd"] == pytest.approx(3300.0, abs=1e-6)
    one = json.loads(run_cli(*SPDES, "--spdes-permit", PLANT, "--committed", bank["path"], "--application", "APP-3",
                             "--json").stdout)
    assert one["committed_gpd"] == 1800.0 and one["committed"]["excluded"] == "APP-3"
    text = run_cli(*SPDES, "--spdes-permit", PLANT, "--committed", bank["path"]).stdout
    assert "committed flow" in text and "3,300 gpd" in text


def test_spdes_check_of_a_plant_the_bank_does_not_know_exit_2(run_cli, bank):
    r = run_cli(*SPDES, "--committed", bank["path"])  # by the plant file's name: the bank knows the permit only
    assert r.exit_code == 2 and "--committed" in r.stderr and PLANT in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_the_python_api_reads_the_same_commitments(bank):
    import capacitysim.api as api

    with api.capacity_demonstration(bank["model"], ["MH0010=800"], committed=bank["path"], application="APP-2") as d:
        c = d.to_dict()["committed"]
    assert c["bank_head"] == bank["head"] and c["excluded"] == "APP-2"
    assert [f["application"] for f in c["flows"]] == ["APP-1", "APP-3"]


def test_spdes_sample_record_ends_yesterday_and_refuses_a_bad_date(run_cli, tmp_path):
    """`spdes sample-record` writes three years of the sample plant ending yesterday (a check as of today finds a
    recent record); a date that is not YYYY-MM-DD is exit 2."""
    import datetime as dt

    out = tmp_path / "recent.csv"
    r = run_cli("spdes", "sample-record", str(out))
    assert r.exit_code == 0, r.output
    lines = out.read_text().splitlines()
    yesterday = dt.date.today() - dt.timedelta(days=1)
    assert lines[0] == "date,flow_mgd" and lines[-1].startswith(yesterday.isoformat() + ",")
    assert 1094 <= len(lines) - 1 <= 1096 and all(line.split(",")[1] for line in lines[1:])
    r = run_cli("spdes", "check", "--flows", str(out), "--watershed", "--limit-mgd", "0.5", "--added-gpd", "1000",
                "--strict-record-age", "--json")
    assert r.exit_code == 0, r.output
    r = run_cli("spdes", "sample-record", str(tmp_path / "x.csv"), "--end", "31/12/2025")
    assert r.exit_code == 2 and "--end" in r.stderr and not (tmp_path / "x.csv").exists()
