"""Fuzzing the model reader and the scenario writer (issue 12): malformed bytes, wrong tokens, extreme numbers.

Property: ``load_model`` (parse + the engine's own check) and ``write_scenario`` either succeed or raise
an :class:`~capacitysim.errors.InputError` (one line, exit 2 from the CLI); never another exception, and
nothing is written beside the model. Each example costs one engine probe (about 0.1 s), so the suite
tries :data:`EXAMPLES` mutated models per strategy.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capacitysim.errors import InputError
from capacitysim.network.model import load_model
from capacitysim.network.scenario import Connection, Spinup, write_scenario

pytestmark = [pytest.mark.swmm]

BASE = (Path(__file__).resolve().parents[1] / "data" / "models" / "population-dwf.inp").read_bytes()
LINES = BASE.split(b"\n")
EXAMPLES = 60
EXTREMES = [b"nan", b"inf", b"-inf", b"1e308", b"-1e308", b"1e-300", b"0", b"-0", b"-1", b"1e999", b"", b'""',
            b"\xff\xfe", b"\x00", b"J9", b"[JUNCTIONS]", b";", b'"unclosed', b"1/1/1", b"99:99"]

_settings = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _check(tmp_path: Path, data: bytes) -> None:
    folder = tmp_path / "m"
    folder.mkdir(exist_ok=True)
    for p in folder.iterdir():
        p.unlink()
    model = folder / "m.inp"
    model.write_bytes(data)
    try:
        m = load_model(model)
        write_scenario(m, [Spinup(6.0), Connection("J2", 1000.0)], tmp_path / "out" / "s.inp")
    except InputError as exc:
        assert "\n" not in str(exc).strip()
    assert [p.name for p in folder.iterdir()] == ["m.inp"]  # nothing written beside the model


@_settings
@given(st.data())
def test_token_replaced_by_extreme_or_garbage(tmp_path, data):
    k = data.draw(st.integers(0, len(LINES) - 1))
    toks = LINES[k].split()
    lines = list(LINES)
    if toks:
        j = data.draw(st.integers(0, len(toks) - 1))
        toks[j] = data.draw(st.sampled_from(EXTREMES))
        lines[k] = b" ".join(toks)
    _check(tmp_path, b"\n".join(lines))


@_settings
@given(st.lists(st.integers(0, len(LINES) - 1), min_size=1, max_size=5, unique=True))
def test_lines_deleted(tmp_path, gone):
    _check(tmp_path, b"\n".join(l for i, l in enumerate(LINES) if i not in set(gone)))


@_settings
@given(st.binary(max_size=400), st.integers(0, len(BASE)))
def test_random_bytes_inserted(tmp_path, junk, at):
    _check(tmp_path, BASE[:at] + junk + BASE[at:])
