"""Issue 26, class 3: capacitysim validates no stricter than the engine.

SWMM 5.2 reads ``nan``/``inf`` with ``strtod``: it refuses a few on opening, crashes on a few while running,
turns most into results that are not numbers, and ignores some (the percent impervious of a subcatchment of
0 acres). A model the engine runs to finite results is run with a warning naming file, line, element and
field; the others are refused with a clear error (exit 2).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from capacitysim.errors import CapacitysimWarning, ModelError
from capacitysim.network.model import load_model

pytestmark = [pytest.mark.swmm]

MODELS = Path(__file__).resolve().parents[1] / "data" / "models"
IGNORED = MODELS / "nan-ignored-field.inp"
WARNING = "nan-ignored-field.inp:30: [SUBCATCHMENTS] S2: field 5 is 'nan', not a finite number"


def test_a_nan_the_engine_ignores_is_a_warning_not_a_refusal():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = load_model(IGNORED)
    msgs = [str(w.message) for w in caught if issubclass(w.category, CapacitysimWarning)]
    assert len(msgs) == 1 and msgs[0].startswith(WARNING) and "SWMM runs the model" in msgs[0]
    assert model.lint[0] == msgs[0]


def test_the_model_is_run_with_the_warning(run_cli):
    r = run_cli("capacity", "--model", str(IGNORED), "--connect", "J2=1000", "--json")
    assert r.exit_code in (0, 1), r.stderr
    assert f"warning: {WARNING}" in r.stderr
    doc = json.loads(r.stdout)
    assert doc["verdict"] in ("pass", "fail")
    assert any(WARNING in w for w in doc["warnings"])


def _edited(tmp_path, old, new):
    text = (MODELS / "population-dwf.inp").read_text()
    assert old in text
    p = tmp_path / "bad.inp"
    p.write_text(text.replace(old, new, 1))
    return p


@pytest.mark.parametrize("old, new, field, why", [
    # the engine refuses it on opening: its error, with the number named
    ("0          0          1\nC2", "0          0          nan\nC2", "bad.inp:54: [XSECTIONS] C1: field 7 is 'nan'",
     "ERROR 211: invalid number nan at bad.inp:54"),
    # the engine crashes running it
    ("C3               J3               PLANT            400 ", "C3               J3               PLANT            nan ",
     "bad.inp:50: [CONDUITS] C3: field 4 is 'nan'", "SWMM opens the model but fails running it"),
    # the engine runs it to results that are not numbers
    ("J2               99  ", "J2               inf ", "bad.inp:40: [JUNCTIONS] J2: field 2 is 'inf'",
     "SWMM runs the model but its results are not numbers (invert_elev of node J2"),
])
def test_what_the_engine_refuses_is_refused_clearly(run_cli, tmp_path, old, new, field, why):
    p = _edited(tmp_path, old, new)
    with pytest.raises(ModelError, match="not a finite number") as exc:
        load_model(p)
    assert field in str(exc.value) and why in str(exc.value)
    r = run_cli("capacity", "--model", str(p), "--connect", "J2=1000")
    assert r.exit_code == 2 and field in r.stderr and why in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert "capacitysim-nonfinite-" not in r.stderr  # no path into the trial run's removed folder
