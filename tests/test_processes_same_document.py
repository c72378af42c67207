"""Every process gives one document through its three faces: the CLI's ``--json`` (in-process click runner), the
public API function and the service (a real server on 127.0.0.1, tests/service/support.py), on the smallest bundled
inputs. Compared after normalising the named volatile fields only: run times, the store's path, absolute paths
(the service shows a file's name, never where the server keeps it)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent / "service"))

pytestmark = [pytest.mark.swmm, pytest.mark.dask, pytest.mark.server]

from capacitysim.io.files import bundled_dir  # noqa: E402

MODELS = bundled_dir("models")
SITE = MODELS / "sites" / "new-building.toml"
PROJECT = MODELS / "projects" / "oak-street-sump-and-manholes.toml"
SWEEP = MODELS / "sweeps" / "detention-family.toml"

#: Keys whose values change from run to run or with where the files are: set aside before comparing.
VOLATILE = {"seconds", "out", "path", "store", "generated_at", "created", "at"}
_ABS = re.compile(r"(?:/[^\s\"'<>,;:()\[\]{}|]+)+/([^/\s\"'<>,;:()\[\]{}|]+)")


def normal(doc):
    """The document with volatile keys dropped and every absolute path cut to its last component."""
    if isinstance(doc, dict):
        return {k: normal(v) for k, v in doc.items() if k not in VOLATILE}
    if isinstance(doc, list):
        return [normal(v) for v in doc]
    if isinstance(doc, str):
        return _ABS.sub(lambda m: m.group(1), doc)
    return doc


def cli_doc(*args):
    from capacitysim.cli import cli

    r = CliRunner().invoke(cli, [*args, "--json"])
    assert r.exit_code in (0, 1), (r.exit_code, r.output)
    return json.loads(r.stdout)


def service_doc(server, process, inputs):
    from support import wait_final

    with server.client("engineer") as c:
        r = c.post(f"/processes/{process}/execution", json={"inputs": inputs}, headers={"Prefer": "respond-async"})
        assert r.status_code == 201, r.text
        st = wait_final(c, r.json()["jobID"])
        assert st["status"] == "successful", (st["message"], st["error"])
        return c.get(f"/jobs/{st['jobID']}/results").json()


def _api(name, *args, **kw):
    import capacitysim

    res = getattr(capacitysim, name)(*args, **kw)
    try:
        return res.to_dict()
    finally:
        if hasattr(res, "close"):
            res.close()


CASES = {
    "credits-quantification": (
        lambda: cli_doc("credits", "quantify", str(PROJECT), "--inflow-basis", "peak"),
        lambda: _api("quantify_credits", PROJECT, inflow_basis="peak"),
        {"project": "oak-street-sump-and-manholes", "inflow_basis": "peak"}),
    "detention-design": (
        lambda: cli_doc("detention", str(SITE), "--no-swmm"),
        lambda: _api("design_detention", SITE, swmm=False),
        {"site": "new-building", "swmm": False}),
    "spdes-check": (
        lambda: cli_doc("spdes", "check", "--plant", "sample-wwtp", "--flows", "sample-wwtp", "--added-gpd", "5000",
                        "--as-of", "2024-12-31"),
        lambda: _api("spdes_check", plant="sample-wwtp", flows="sample-wwtp", added_gpd=[5000], as_of="2024-12-31"),
        {"plant": "sample-wwtp", "flows": "sample-wwtp", "added_gpd": [5000], "as_of": "2024-12-31"}),
    "capacity-demonstration": (
        lambda: cli_doc("capacity", "--model", "synthetic-50", "--storm", "binghamton-1yr-24h", "--connect", "MH0003=5000"),
        lambda: _api("capacity_demonstration", "synthetic-50", ["MH0003=5000"], storm="binghamton-1yr-24h"),
        {"model": "synthetic-50", "storm": "binghamton-1yr-24h", "connections": [{"node": "MH0003", "gpd": 5000}]}),
    "headroom": (
        lambda: cli_doc("headroom", "--model", "synthetic-50", "--storm", "binghamton-1yr-24h", "--nodes", "MH0003",
                        "--workers", "0", "--no-progress"),
        lambda: _api("headroom", "synthetic-50", ["binghamton-1yr-24h"], ["MH0003"], workers=0),
        {"model": "synthetic-50", "storms": ["binghamton-1yr-24h"], "nodes": ["MH0003"]}),
    "sweep": (
        lambda tmp: cli_doc("sweep", "run", str(SWEEP), "--out", str(tmp / "cli.zarr"), "--workers", "0", "--no-progress"),
        lambda tmp: _api("run_sweep", SWEEP, tmp / "api.zarr", workers=0),
        {"sweep": "detention-family"}),
    "metered-credit": (
        lambda tmp: cli_doc("credits", "meter", *_metered_args(tmp), "--n-boot", "20"),
        lambda tmp: _api("metered_credit", *_metered_files(tmp), area_ac=120, n_boot=20),
        lambda tmp, upload: {"pre_flow": upload(tmp / "pre-flow.csv"), "pre_rain": upload(tmp / "pre-rain.csv"),
                             "post_flow": upload(tmp / "post-flow.csv"), "post_rain": upload(tmp / "post-rain.csv"),
                             "area_ac": 120, "n_boot": 20}),
}
SWMM = {"capacity-demonstration", "headroom"}
#: The processes whose CLI and API write or read files in the test's folder.
WITH_TMP = {"sweep", "metered-credit"}


def _metered_files(tmp) -> list:
    """Pre and post meter and gauge records (tests/metered_records.py), made once in ``tmp``."""
    from tests.metered_records import POST, PRE, records

    if not (tmp / "pre-flow.csv").exists():
        records(tmp, "pre", "2025-03-01", PRE, seed=1, days=60)
        records(tmp, "post", "2026-03-01", POST, seed=2, days=60)
    return [tmp / f"{p}-{r}.csv" for p in ("pre", "post") for r in ("flow", "rain")]


def _metered_args(tmp) -> list:
    files = _metered_files(tmp)
    return ["--pre-flow", str(files[0]), "--pre-rain", str(files[1]), "--post-flow", str(files[2]),
            "--post-rain", str(files[3]), "--area-ac", "120"]


@pytest.mark.parametrize("process", [pytest.param(p, marks=[pytest.mark.swmm] if p in SWMM else []) for p in CASES])
def test_the_three_faces_return_one_document(server, process, tmp_path):
    cli, api, inputs = CASES[process]
    args = (tmp_path,) if process in WITH_TMP else ()
    c, a = normal(cli(*args)), normal(api(*args))
    if callable(inputs):  # files of the test's own: uploaded first
        def upload(path):
            with server.client("engineer") as up:
                r = up.post("/uploads", params={"filename": path.name}, content=path.read_bytes())
                assert r.status_code == 201, r.text
                return r.json()["id"]
        inputs = inputs(tmp_path, upload)
    s = normal(service_doc(server, process, inputs))
    assert list(c) == list(a) == list(s), process  # the same keys, in the same order
    assert c == a, process
    assert c == s, process


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from support import seeded_server

    with seeded_server(tmp_path_factory.mktemp("service"), workers=1) as srv:
        yield srv
