"""A failure of our own scenario is our failure (issue 26, class 2).

The before run is the user's model (plus the spin-up); the after run is the scenario capacitysim wrote. When the
engine rejects the after run only, the error says that capacitysim's scenario failed, which edits it holds, and the
line the engine rejected; it is not an input error of the user's model (exit 1, not 2). The rejection is forced
through the real engine: the scenario writer is wrapped to add a line SWMM rejects to the after run's file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from capacitysim.errors import EngineError, InputError
from capacitysim.network.engine import EngineInputError, ScenarioRejectedError
from capacitysim.workflows import demonstration

pytestmark = [pytest.mark.swmm]

MODELS = Path(__file__).resolve().parents[1] / "data" / "models"
MODEL = MODELS / "rdii-only.inp"
BAD_LINE = "NOSUCHNODE FLOW \"\" FLOW 1.0 1.0"


@pytest.fixture
def broken_after(monkeypatch):
    real = demonstration.write_scenario

    def write(model, edits, out_path, **kw):
        record = real(model, edits, out_path, **kw)
        if Path(out_path).name == "after_input.inp":
            text = Path(out_path).read_text(encoding="latin-1")
            Path(out_path).write_text(text.replace("[INFLOWS]", f"[INFLOWS]\n{BAD_LINE}", 1), encoding="latin-1")
        return record

    monkeypatch.setattr(demonstration, "write_scenario", write)


def test_after_scenario_rejected_is_capacitysims_failure(broken_after, tmp_path):
    with pytest.raises(ScenarioRejectedError) as err:
        demonstration.run_demonstration(MODEL, connections=["J1=3000"], storm="binghamton-1yr-24h", parallel=False)
    e = err.value
    msg = str(e)
    assert isinstance(e, EngineError) and not isinstance(e, EngineInputError) and e.exit_code == 1
    assert "scenario capacitysim wrote" in msg and "this is capacitysim's failure, not an input error" in msg
    assert "connection J1 3,000 gpd" in msg and "design storm" in msg  # the edits the scenario holds
    assert "ERROR 209" in msg and "NOSUCHNODE" in msg  # the engine's error and the line it rejected
    assert e.run == "after" and e.edits and e.engine_error.startswith("ERROR 209")


def test_after_scenario_rejected_in_parallel_runs_too(broken_after):
    with pytest.raises(ScenarioRejectedError, match="scenario capacitysim wrote"):
        demonstration.run_demonstration(MODEL, connections=["J1=3000"], parallel=True)


def test_cli_says_the_tools_edit_failed(broken_after, run_cli):
    r = run_cli("capacity", "--model", str(MODEL), "--connect", "J1=3000", "--json")
    assert r.exit_code == 1
    assert "scenario capacitysim wrote" in r.stderr and "capacitysim's failure" in r.stderr


def test_users_model_rejected_stays_an_input_error(tmp_path):
    """The before run is the user's model: its rejection is still the user's (exit 2), not the scenario's."""
    bad = tmp_path / "bad.inp"
    bad.write_text(MODEL.read_text().replace("[DWF]", f"[INFLOWS]\n{BAD_LINE}\n\n[DWF]", 1))
    with pytest.raises(InputError) as err:  # refused when the model is opened, before any scenario is written
        demonstration.run_demonstration(bad, connections=["J1=3000"], parallel=False)
    assert not isinstance(err.value, ScenarioRejectedError) and err.value.exit_code == 2
    assert "NOSUCHNODE" in str(err.value)
