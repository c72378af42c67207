"""Fuzz the TOML readers and the hydrology CLI's numeric options (issue 12, hardening).

Property, for every input tried: the reader returns a valid result or raises
:class:`~capacitysim.errors.InputError` (a one-line, exit-2 error on the CLI) - never another
exception, never a non-finite number in its result - and nothing is written.

Inputs tried per reader (hypothesis ``max_examples`` of each test; each test draws that many):

========================  ==========================================================  =========
reader                    strategies                                                  examples
========================  ==========================================================  =========
read_toml                 arbitrary bytes; valid TOML with bytes spliced in           2 x 200
load_site                 the same two, and a valid document with one value replaced  3 x 200
read_project              (extreme number, wrong type, deleted key; an unknown key)   3 x 200
load_storm                                                                            3 x 200
load_rule_set                                                                         3 x 200
runoff, peak, hydrograph  extreme floats in every numeric option (CLI, --json or not)  3 x 200
========================  ==========================================================  =========

The constants below are those counts; the tests print nothing.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import math
import os
import tempfile
from dataclasses import asdict, is_dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capacitysim.errors import InputError, RefusedError
from capacitysim.io.files import read_toml
from capacitysim.io.project_files import read_project
from capacitysim.io.site_files import load_rule_set, load_site
from capacitysim.io.storms import load_storm

ROOT = Path(__file__).resolve().parents[2]

#: Examples drawn by each hypothesis test below (one strategy, one reader); 25 under the quick hypothesis profile
#: (``dev``, tests/conftest.py: ``make test-fast``), 200 under ``ci`` (``make test``).
EXAMPLES_PER_TEST = 200 if settings.default.max_examples >= 100 else 25
#: Readers fed arbitrary bytes and spliced bytes (2 tests each) and mutated documents (1 test each).
TOML_READERS = ("read_toml", "load_site", "read_project", "load_storm", "load_rule_set")
#: Hydrology commands whose numeric options are fuzzed (1 test each).
CLI_COMMANDS = ("runoff", "peak", "hydrograph")
#: Inputs tried per reader: read_toml 400, each loader 600, each CLI command 200.
INPUTS_PER_READER = {
    "read_toml": 2 * EXAMPLES_PER_TEST,
    **{r: 3 * EXAMPLES_PER_TEST for r in TOML_READERS if r != "read_toml"},
    **{c: EXAMPLES_PER_TEST for c in CLI_COMMANDS},
}

FUZZ = settings(max_examples=EXAMPLES_PER_TEST, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- values ----------------------------------------------------------------------------------------
EXTREME_FLOATS = (math.inf, -math.inf, math.nan, 1e308, -1e308, -0.0, 0.0, 1e-300, -1e-300, 5e-324, 2.5, -1.0, 1e9, 1e-9)
extreme_floats = st.sampled_from(EXTREME_FLOATS) | st.floats(allow_nan=True, allow_infinity=True)
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
scalars = (
    extreme_floats
    | st.integers(-(2**63), 2**63 - 1)
    | st.booleans()
    | texts
    | st.sampled_from(["yes", "no", "true", "1", "", "II", "tank", "new", "open", "nyc-2012"])
    | st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2100, 1, 1))
)
toml_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
                           max_leaves=6)


def _toml_string(s: str) -> str:
    out = []
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return _toml_string(v)
    if isinstance(v, (dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_toml_string(k)} = {_toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(type(v))


def dumps_toml(doc: dict) -> str:
    """A TOML document of ``doc`` (inline tables throughout: valid TOML that reads back as ``doc``)."""
    return "".join(f"{_toml_string(k)} = {_toml_value(v)}\n" for k, v in doc.items())


# --- the valid documents mutated ---------------------------------------------------------------------
BASE = {
    "load_site": read_toml(ROOT / "models" / "sites" / "open-bottom-infiltration.toml")
    | {"design": {"hydrograph": "rational", "tc_min": 10.0, "dt_min": 1.0},
       "recycling": {"demand_gpd": 2000.0, "independent": True, "use": "toilets"}},
    "read_project": read_toml(ROOT / "models" / "projects" / "oak-street-sump-and-manholes.toml"),
    "load_storm": read_toml(ROOT / "storms" / "binghamton-1yr-24h.toml"),
    "load_rule_set": {"extends": "nyc-2012", **{k: v for k, v in read_toml(
        ROOT / "src" / "capacitysim" / "data" / "rules" / "nyc-2012.toml").items() if isinstance(v, dict)}},
}
RULES = load_rule_set("nyc-2012")
LOADERS = {
    "read_toml": read_toml,
    "load_site": lambda p: load_site(p, RULES),
    "read_project": read_project,
    "load_storm": load_storm,
    "load_rule_set": load_rule_set,
}


def _paths(doc, prefix=()):
    """Every key path of a document (tables, arrays of tables and leaves)."""
    out = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.append((*prefix, k))
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out.append((*prefix, i))
            out += _paths(v, (*prefix, i))
    return out


def _get(doc, path):
    for k in path:
        doc = doc[k]
    return doc


@st.composite
def mutated(draw, reader: str) -> dict:
    doc = json.loads(json.dumps(BASE[reader], default=str))  # a deep copy (dates become text)
    # numbers in place of numbers half the time: extreme floats reach the range checks behind the type checks
    action = draw(st.sampled_from(["number", "number", "number", "replace", "replace", "delete"]))
    paths = _paths(doc)
    if action == "number":
        paths = [q for q in paths if isinstance(_get(doc, q), (int, float)) and not isinstance(_get(doc, q), bool)]
    path = draw(st.sampled_from(paths))
    *parent_path, last = path
    parent = _get(doc, parent_path)
    if action == "delete":
        del parent[last]
    elif action == "number":
        parent[last] = draw(extreme_floats | st.integers(-(10**6), 10**6) | st.floats(-1e4, 1e4))
    else:
        parent[last] = draw(toml_values)
    if draw(st.integers(0, 9)) == 0:  # and now and then a key the reader does not know
        doc[draw(texts)] = draw(toml_values)
    return doc


# --- the property --------------------------------------------------------------------------------
def _finite_everywhere(obj) -> bool:
    if is_dataclass(obj):
        obj = asdict(obj)
    if isinstance(obj, float):
        return math.isfinite(obj)
    if isinstance(obj, dict):
        return all(_finite_everywhere(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return all(_finite_everywhere(v) for v in obj)
    return True


def _check_reader(reader: str, data: bytes) -> None:
    """Feed ``data`` as a file to ``reader``: a result with finite numbers or an InputError; no file written."""
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "input.toml"
        p.write_bytes(data)
        before = sorted(os.listdir(tmp))
        try:
            result = LOADERS[reader](p)
        except InputError as exc:
            assert "\n" not in str(exc), str(exc)
        else:
            assert reader == "read_toml" or _finite_everywhere(result)  # TOML itself may hold inf and nan
            if reader == "read_toml":
                assert isinstance(result, dict)
        assert sorted(os.listdir(tmp)) == before
        assert p.read_bytes() == data


VALID_TEXT = {reader: dumps_toml(BASE[reader]).encode() for reader in BASE}
VALID_TEXT["read_toml"] = VALID_TEXT["load_site"]


@pytest.mark.parametrize("reader", TOML_READERS)
@FUZZ
@given(data=st.binary(max_size=400))
def test_arbitrary_bytes(reader, data):
    _check_reader(reader, data)


@pytest.mark.parametrize("reader", TOML_READERS)
@FUZZ
@given(data=st.data())
def test_valid_document_with_bytes_spliced_in(reader, data):
    text = VALID_TEXT[reader]
    at = data.draw(st.integers(0, len(text)))
    cut = data.draw(st.integers(0, 8))
    junk = data.draw(st.binary(min_size=1, max_size=8) | st.sampled_from([b"\xff", b"\xc3", b"\x00", b"[", b"=", b'"', b"\n[[x]]\n"]))
    _check_reader(reader, text[:at] + junk + text[at + cut:])


@pytest.mark.parametrize("reader", [r for r in TOML_READERS if r != "read_toml"])
@FUZZ
@given(data=st.data())
def test_wrong_types_and_extreme_values(reader, data):
    doc = data.draw(mutated(reader))
    _check_reader(reader, dumps_toml(doc).encode())


def test_the_base_documents_are_valid():
    """The mutations start from documents every loader accepts (so the fuzz reaches past the parser)."""
    for reader in TOML_READERS[1:]:
        _check_reader(reader, VALID_TEXT[reader])
    with tempfile.TemporaryDirectory() as tmp:
        for reader in TOML_READERS[1:]:
            p = Path(tmp) / f"{reader}.toml"
            p.write_bytes(VALID_TEXT[reader])
            assert LOADERS[reader](p) is not None


# --- the hydrology CLI -----------------------------------------------------------------------------
def _num_text(x: float) -> str:
    return repr(x) if isinstance(x, float) else str(x)


def _reject_constant(name):
    raise AssertionError(f"JSON output holds {name}")


def _all_finite_json(obj) -> bool:
    if isinstance(obj, float):
        return math.isfinite(obj)
    if isinstance(obj, dict):
        return all(_all_finite_json(v) for v in obj.values())
    if isinstance(obj, list):
        return all(_all_finite_json(v) for v in obj)
    return True


def _check_cli(args: list[str], as_json: bool) -> None:
    from capacitysim.cli import cli

    with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp):
        result = CliRunner().invoke(cli, args + (["--json"] if as_json else []), catch_exceptions=False)
        assert os.listdir(tmp) == []
    assert result.exit_code in (0, 2), (args, result.exit_code, result.output)
    err = [ln for ln in result.stderr.splitlines() if not ln.startswith("warning: ")]
    if result.exit_code == 2:
        assert len(err) == 1 and err[0].startswith("error: "), result.stderr
        assert result.stdout == ""
        return
    assert err == [], result.stderr
    if as_json:
        assert _all_finite_json(json.loads(result.stdout, parse_constant=_reject_constant))
    else:
        low = result.stdout.lower()
        assert "inf" not in low.replace("info", "") and "nan" not in low, result.stdout


numbers = extreme_floats | st.floats(-1e3, 1e3) | st.sampled_from([80.0, 2.1, 0.5, 40.0, 484.0])


@FUZZ
@given(p=numbers, cn=numbers, ia=numbers, as_json=st.booleans())
def test_cli_runoff_numeric_options(p, cn, ia, as_json):
    _check_cli(["runoff", "--precip-in", _num_text(p), "--cn", _num_text(cn), "--ia-ratio", _num_text(ia)], as_json)


@FUZZ
@given(area=numbers, unit=st.sampled_from(["--area-ac", "--area-mi2"]), cn=numbers, tc=numbers, p=numbers,
       pond=numbers, as_json=st.booleans())
def test_cli_peak_numeric_options(area, unit, cn, tc, p, pond, as_json):
    _check_cli(["peak", unit, _num_text(area), "--cn", _num_text(cn), "--tc-hr", _num_text(tc), "--precip-in", _num_text(p),
                "--pond-swamp-pct", _num_text(pond)], as_json)


@FUZZ
@given(area=numbers, unit=st.sampled_from(["--area-ac", "--area-mi2"]), cn=numbers, tc=numbers,
       prf=numbers | st.floats(100.0, 600.0), as_json=st.booleans())
def test_cli_hydrograph_numeric_options(area, unit, cn, tc, prf, as_json):
    _check_cli(["hydrograph", unit, _num_text(area), "--cn", _num_text(cn), "--tc-hr", _num_text(tc),
                "--peak-rate-factor", _num_text(prf)], as_json)


def test_refusals_of_the_rules_are_not_input_errors():
    """A rule refusal (RefusedError, exit 3) is a verdict, not a reader outcome: the readers never raise it."""
    assert not issubclass(RefusedError, InputError)
