"""A storm that reaches the network only as RDII is checked too (issue 26, class 6).

``tests/data/models/rdii-only.inp`` has no subcatchments: the engine's runoff continuity has no rainfall total,
so the rain the design storm delivers is read from the scenario's text (the [RDII] unit hydrographs' rain gauge,
its format, interval and time series, over the simulated window) and compared with the storm's depth. Where it
cannot be read, the check is not confirmed (``passed`` None, result ``confirm``) and a warning says why; such a
check does not fail the verdict (``capacitysim.rules.verdict``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from capacitysim.network.engine import read_results, run_inp
from capacitysim.network.model import parse_inp
from capacitysim.rules.capacity import Criteria, verdict_of
from capacitysim.rules.verdict import Check
from capacitysim.workflows.demonstration import rdii_rainfall_in, run_demonstration

MODELS = Path(__file__).resolve().parents[1] / "data" / "models"
RDII_ONLY = MODELS / "rdii-only.inp"
STORM = "binghamton-1yr-24h"
SUBCATCHMENT = ("[SUBCATCHMENTS]\nS1 RG1 J1 5 100 300 1 0\n\n[SUBAREAS]\nS1 0.013 0.1 0 0 100 OUTLET\n\n"
                "[INFILTRATION]\nS1 3.0 0.5 4 7 0\n\n[JUNCTIONS]")


def _variant(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.swmm
def test_storm_reaching_the_network_only_as_rdii_is_verified(tmp_path):
    with run_demonstration(RDII_ONLY, connections=["J1=3000"], storm=STORM, parallel=False) as d:
        doc = d.to_dict()
    assert doc["rainfall_simulated_in"] is None  # no subcatchments: the engine has no rainfall total
    ch = next(c for c in doc["checks"] if c["element"] == "rainfall (RDII rain gauges)")
    assert ch["passed"] is True and ch["result"] == "pass"
    assert ch["before"] == pytest.approx(2.1, rel=1e-9) and ch["after"] == pytest.approx(2.1, rel=1e-9)
    assert doc["scenario"]["rainfall_rdii_in"] == {"before": {"RG1": pytest.approx(2.1)}, "after": {"RG1": pytest.approx(2.1)}}
    assert not any("could not be verified" in w for w in doc["warnings"])
    assert doc["verdict"] == "pass"


def test_only_the_rain_within_the_simulated_window_counts(tmp_path):
    """The rain counted is the rain within the simulated window (END 06/02 00:00): a rain interval that runs past
    the end counts only up to it."""
    text = RDII_ONLY.read_text()
    scen = _variant(tmp_path, "short.inp", text.replace("RAIN                        3:00       1.0",
                                                        "RAIN                        3:00       1.0\nRAIN 23:30 0.4"))
    depths, why = rdii_rainfall_in(parse_inp(scen))
    assert why == [] and depths == {"RG1": pytest.approx(0.5 + 1.0 + 0.3 + 0.2)}  # half of the last hour


@pytest.mark.swmm
def test_storm_that_cannot_be_verified_warns_and_is_not_confirmed(tmp_path):
    """IGNORE_RDII YES on a model without subcatchments: the storm reaches nothing that can be read; the check
    is reported as not confirmed, with a warning saying why, and does not fail the verdict."""
    model = _variant(tmp_path, "ignore-rdii.inp",
                     RDII_ONLY.read_text().replace("ROUTING_STEP         5", "ROUTING_STEP         5\nIGNORE_RDII YES"))
    with run_demonstration(model, connections=["J1=200"], storm=STORM, parallel=False) as d:
        doc = d.to_dict()
    ch = next(c for c in doc["checks"] if c["criterion"].startswith("rain simulated"))
    assert ch["passed"] is None and ch["result"] == "confirm" and ch["before"] is None
    assert any("design storm could not be verified in the before and after runs" in w and "IGNORE_RDII YES" in w
               for w in doc["warnings"]), doc["warnings"]
    assert doc["failed_checks"] == 0 and doc["verdict"] == "pass"


@pytest.mark.parametrize("gauge, reason", [
    ("RG1 INTENSITY 1:00 1.0 FILE rain.dat RG1 IN", "reads the rain file rain.dat"),
    ("RG1 INTENSITY 1:00 1.0 TIMESERIES NOSUCH", "NOSUCH, which the model does not define"),
])
def test_a_gauge_whose_rain_the_text_cannot_give_is_said(tmp_path, gauge, reason):
    text = re.sub(r"(?m)^RG1\s+INTENSITY.*$", gauge, RDII_ONLY.read_text())
    depths, why = rdii_rainfall_in(parse_inp(_variant(tmp_path, "g.inp", text)))
    assert depths == {} and len(why) == 1 and reason in why[0]


@pytest.mark.swmm
@pytest.mark.parametrize("fmt, series", [
    ("INTENSITY", None),  # the model's own: a dated row, then undated rows that carry its date
    ("VOLUME", None),
    ("CUMULATIVE", "RAIN 06/01/2024 2:00 0.5\nRAIN 3:00 1.5\nRAIN 4:00 1.8\nRAIN 06/02/2024 0:30 0.25\n"),
    ("INTENSITY", "RAIN 05/31/2024 23:30 2.0\nRAIN 06/01/2024 1.5 0.6 2.5 0.0 3.5 0.8\n"),  # straddling the start; decimal hours
])
def test_the_rain_read_from_the_text_is_the_rain_the_engine_simulates(tmp_path, fmt, series):
    """The same gauge on a subcatchment: the engine's runoff continuity total equals the depth read from the text."""
    text = RDII_ONLY.read_text().replace("INTENSITY 1:00", f"{fmt} 1:00").replace("[JUNCTIONS]", SUBCATCHMENT, 1)
    if series is not None:
        text = re.sub(r"(?ms)^RAIN\s.*\Z", series, text)
    inp = _variant(tmp_path, f"{fmt.lower()}.inp", text)
    depths, why = rdii_rainfall_in(parse_inp(inp))
    engine = read_results(run_inp(inp, tmp_path / "run")).attrs["rainfall_simulated_in"]
    assert why == [] and engine > 0
    assert depths["RG1"] == pytest.approx(engine, rel=1e-4)


def test_a_check_to_confirm_does_not_fail_the_capacity_verdict():
    import xarray as xr

    ds = xr.Dataset(attrs={"runoff_continuity_error_pct": 0.0, "flow_routing_continuity_error_pct": 0.0,
                           "n_subcatchments": 0})
    c = Check("rain", "rainfall", None, None, 2.1, "in", None)
    assert verdict_of(ds, ds, [c], Criteria()) == "pass"
    assert verdict_of(ds, ds, [c, Check("x", "J1", 0, 1, 0, "ft3", False)], Criteria()) == "fail"


def test_a_check_not_confirmed_is_printed_as_such_not_as_fail():
    """rules.verdict: a check that could not be made (passed None) does not fail the verdict; the report and the
    CLI must not print it as FAIL."""
    from capacitysim.report.capacity import _check_result

    assert [_check_result(p) for p in (True, False, None)] == ["pass", "FAIL", "not confirmed"]
