"""The corpus test of issue 11: every model in tests/data and ../shared/models/public (and Hartfordville).

tests/data/models/public/ holds models from further public collections (issue 26: OWA and USEPA SWMM, SWMM5+), kept
in the project with their licences so that they always run; their sources are listed in tests/data/models/README.md.

For each model SWMM opens: the capacity demonstration runs; with no spin-up its BEFORE run gives every
conduit the peak flow of a plain pyswmm run of the untouched file (an independent reading: pyswmm's own
conduit statistics, in its own process); the volumes the engine received match the intended ones (a model
that routes nothing is untrusted, with the reason); nothing is left in the temporary folder. A model SWMM
rejects is refused with the engine's error (exit code 2 from the CLI).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from capacitysim.errors import ModelError
from capacitysim.units import CFS_PER_FLOW_UNIT
from capacitysim.network.model import load_model
from capacitysim.workflows.demonstration import run_demonstration

TESTS = Path(__file__).resolve().parents[1]
SHARED = TESTS.parents[0].parent / "shared" / "models"
OWN = sorted((TESTS / "data" / "models").rglob("*.inp"))
PUBLIC = sorted((SHARED / "public").rglob("*.inp")) + sorted((SHARED / "hartfordville").glob("*.inp"))

_PYSWMM = r"""
import json, sys
from pyswmm import Simulation, Links
inp, rpt, out = sys.argv[1:4]
with Simulation(inp, rpt, out) as sim:
    for _ in sim:
        pass
    peaks = {l.linkid: l.conduit_statistics["peak_flow"] for l in Links(sim) if l.is_conduit()}
print(json.dumps(peaks))
"""


def _pyswmm_peaks(model: Path, tmp: Path) -> dict[str, float]:
    """Conduit peak flows [model flow units] of a plain pyswmm run of a copy of the model's folder."""
    folder = tmp / "plain"
    shutil.copytree(model.parent, folder, ignore=shutil.ignore_patterns("*.rpt", "*.out"))
    r = subprocess.run([sys.executable, "-c", _PYSWMM, model.name, str(tmp / "plain.rpt"), str(tmp / "plain.out")],
                       cwd=folder, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def _ids(paths, root):
    return [str(p.relative_to(root)) for p in paths]


@pytest.mark.swmm
@pytest.mark.parametrize("model", OWN + PUBLIC, ids=_ids(OWN, TESTS / "data") + _ids(PUBLIC, SHARED) if PUBLIC else _ids(OWN, TESTS / "data"))
def test_corpus_model(model, tmp_path, monkeypatch):
    if not model.exists():
        pytest.skip("../shared is absent")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    try:
        m = load_model(model)
    except ModelError as e:  # the engine is the judge: a file it rejects is refused with its error
        assert "ERROR" in str(e)
        return
    node = next((n for n, t in m.engine_nodes.items() if t == "JUNCTION"), next(iter(m.engine_nodes)))
    d = run_demonstration(model, connections=[f"{node}=5000"], spinup_hr=0.0)
    try:
        if not d.before.attrs["routing"]:
            assert d.verdict == "untrusted" and any("routes no flow" in r for r in d.untrusted_reasons)
            return
        bad = [i for i in d.injections if not i["passed"]]
        assert not bad, bad
        assert {i["what"] for i in d.injections} >= {"connection", "external inflows (all)"}
        peaks = _pyswmm_peaks(model, tmp_path)
        if peaks:
            ids = list(peaks)
            ours = d.before.peak_flow_cfs.sel(link=ids).values
            theirs = np.abs(np.array([peaks[k] for k in ids])) * CFS_PER_FLOW_UNIT[m.flow_units]
            np.testing.assert_allclose(ours, theirs, rtol=0.01, atol=1e-6)
    finally:
        d.close()
    assert list(tmp.iterdir()) == []


def test_public_collections_carry_their_licence_and_source():
    """Each collection in tests/data/models/public has its licence or notice beside its models, and the README
    names every model file (source, commit, licence)."""
    public = TESTS / "data" / "models" / "public"
    readme = (TESTS / "data" / "models" / "README.md").read_text(encoding="utf-8")
    collections = [d for d in public.iterdir() if d.is_dir()]
    assert collections
    for d in collections:
        assert any(f.name.upper().startswith(("LICENSE", "README", "NOTICE")) for f in d.iterdir()), d
        for f in d.iterdir():
            if f.suffix in (".inp", ".hsf"):
                assert f"`public/{d.name}/{f.name}`" in readme, f


@pytest.mark.swmm
@pytest.mark.parametrize("model", [p for p in PUBLIC if p.name == "Hartfordville_1.inp"] or [SHARED / "missing.inp"])
def test_default_spinup_keeps_the_models_period_and_rain(model, tmp_path):
    """With the default spin-up the model's whole period is reported and all its rain simulated."""
    if not model.exists():
        pytest.skip("../shared is absent")
    d = run_demonstration(model, connections=["J1=5000"], work_dir=tmp_path / "a")
    z = run_demonstration(model, connections=["J1=5000"], work_dir=tmp_path / "b", spinup_hr=0.0)
    sim = d.to_dict()["simulation"]
    assert sim["spinup_hr"] == 6.0 and sim["report_start"] == z.to_dict()["simulation"]["report_start"]
    assert sim["end"] == z.to_dict()["simulation"]["end"]
    assert d.before.attrs["rainfall_simulated_in"] == pytest.approx(z.before.attrs["rainfall_simulated_in"], rel=1e-9)
    assert all(i["passed"] for i in d.injections)
