"""Property: the sweep-file reader gives a spec or a DataFileError/InputError, whatever the file holds.

Arbitrary bytes, and TOML documents whose keys are the sweep file's own (and a few others) with
values of every TOML type -- huge integers, nan and inf, text, arrays, tables, dates -- and grids
with up to 12 parameters of up to 70 values each (up to 70^12 scenarios). Never another exception,
never the grid allocated: the reader's peak memory stays far below one byte per scenario.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capacitysim.errors import DataFileError, InputError
from capacitysim.io.sweep_files import MAX_SCENARIOS, PARAMETERS, SweepSpec, load_sweep

from .conftest import ROOT, TINY

#: Peak memory the reader may use on any input [bytes] (a 70^12 grid would need ~10^22).
PEAK_BYTES = 64 * 2**20
SITES = [str(ROOT / "models" / "sites" / "new-building.toml"), str(ROOT / "models" / "sweeps" / "sites" / "scs-tank.toml")]

ALL_PARAMETERS = sorted({k for kind in PARAMETERS.values() for k in kind})
TOP_KEYS = ["name", "kind", "model", "storm", "mode", "criteria", "site", "rules", "chunk_size", "plant", "outlets",
            "timeout_s", "distribution", "description", "spinup_hr", "bogus"]


def _toml(value) -> str:
    """A value as TOML (inline tables and arrays)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"


text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)
paths = st.sampled_from([str(TINY), *SITES, "sweep.toml", "nowhere.inp", "", ".", "/dev/null", "a" * 5000,
                         "models/synthetic-50", "binghamton-1yr-24h", "nyc-2012", "x\u0000y"])
scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.sampled_from([0, 1, -1, 10**400, -(10**400), 2**63, 2**64]),
    st.floats(allow_nan=True, allow_infinity=True),
    text, paths,
    st.dates(), st.datetimes(),
)
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.sampled_from(ALL_PARAMETERS + ["x"]), inner, max_size=3)),
                      max_leaves=8)


def _tiny_nodes() -> list[str]:
    from capacitysim.network.model import load_model

    return sorted(load_model(TINY).node_ids())


NODES = _tiny_nodes()
FRACTIONS = ("remediation_fraction", "drainage_plan_c", "weighted_c", "porosity", "discharge_coefficient")


@st.composite
def big_grids(draw, allowed=tuple(ALL_PARAMETERS)):
    """Up to 12 of the ``allowed`` parameters with up to 70 distinct in-range values each (up to
    70^12 scenarios), or the same lengths for ``mode = "zip"``."""
    keys = draw(st.lists(st.sampled_from(sorted(allowed)), min_size=1, max_size=12, unique=True))
    if "connect_node" in allowed and "connect_node" not in keys and draw(st.booleans()):
        keys.append("connect_node")
    same = draw(st.integers(1, 70)) if draw(st.booleans()) else None
    grid = {}
    for k in keys:
        n = same or draw(st.integers(1, 70))
        if k == "connect_node":  # distinct nodes of the model (repeated in zip grids)
            grid[k] = [NODES[i % len(NODES)] for i in range(n)] if same else NODES[:n]
        elif k in FRACTIONS:
            grid[k] = [round(0.001 + i * 0.0005, 6) for i in range(n)]
        else:
            grid[k] = [float(1 + i) for i in range(n)]
    return grid


@st.composite
def documents(draw) -> str:
    """A sweep file: mostly well-formed (a kind, its model or site, a grid of its parameters), then
    corrupted by keys of any type and value."""
    kind = draw(st.sampled_from(["swmm", "detention", "runoff", None]))
    doc: dict = {}
    if kind is not None:
        doc["kind"] = kind
    if kind == "swmm" or (kind is None and draw(st.booleans())):
        doc["model"] = str(TINY)
    if kind == "detention":
        doc["site"] = draw(st.sampled_from(SITES))
    if draw(st.booleans()):
        doc["mode"] = draw(st.sampled_from(["product", "zip"]))
    params = PARAMETERS[kind or ("swmm" if "model" in doc else "runoff")]
    doc["grid"] = draw(big_grids(tuple(params)))
    if draw(st.booleans()):  # corrupt: any top-level key (the grid too) with any value
        doc.update(draw(st.dictionaries(st.sampled_from(TOP_KEYS + ["grid"]), values, min_size=1, max_size=3)))
    if draw(st.booleans()):  # corrupt: one grid entry with any value
        if isinstance(doc["grid"], dict):
            doc["grid"][draw(st.sampled_from(ALL_PARAMETERS + ["bogus"]))] = draw(values)
    for key in ("model", "site", "storm"):
        if draw(st.integers(0, 5)) == 5:
            doc[key] = draw(paths)
    if draw(st.integers(0, 9)) == 9:
        del doc["grid"]
    return "\n".join(f"{k} = {_toml(v)}" for k, v in doc.items()) + "\n"


@pytest.fixture(scope="module")
def sweep_path(tmp_path_factory) -> Path:
    """The sweep file every example overwrites (module-scoped: hypothesis reruns the test body)."""
    return tmp_path_factory.mktemp("property") / "sweep.toml"


def _check(path: Path, content: bytes) -> None:
    path.write_bytes(content)
    tracemalloc.start()
    try:
        spec = load_sweep(path)
    except InputError:
        spec = None
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert peak < PEAK_BYTES, peak
    if spec is not None:
        assert isinstance(spec, SweepSpec)
        assert isinstance(spec.n_scenarios, int) and 1 <= spec.n_scenarios <= MAX_SCENARIOS


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(content=st.binary(max_size=512))
def test_arbitrary_bytes_give_a_spec_or_an_input_error(sweep_path, content):
    _check(sweep_path, content)


@pytest.mark.swmm
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(doc=documents())
def test_wrong_typed_and_extreme_values_give_a_spec_or_an_input_error(sweep_path, doc):
    _check(sweep_path, doc.encode("utf-8"))


def test_a_grid_of_64_to_the_12_is_refused_without_being_built(sweep_path):
    """64^12 = 2^72 scenarios: an int64 product wraps to 0; the reader counts them in Python integers
    and refuses them before anything is allocated."""
    keys = ("site_area_sf", "drainage_plan_c", "weighted_c", "length_ft", "width_ft", "height_ft", "orifice_diameter_in",
            "orifice_invert_ft", "discharge_coefficient", "tc_min", "cn", "storm_depth_in")
    grid = "\n".join(f"{k} = [{', '.join(repr(round(0.001 + i * 0.0005, 6)) if k in FRACTIONS else str(1 + i) for i in range(64))}]"
                     for k in keys)
    sweep_path.write_text(f'site = "{SITES[1]}"\n[grid]\n{grid}\n', encoding="utf-8")
    with pytest.raises(DataFileError, match="4,722,366,482,869,645,213,696 scenarios exceed the hard limit"):
        load_sweep(sweep_path)
    _check(sweep_path, sweep_path.read_bytes())
