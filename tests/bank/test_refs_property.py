"""Property: whatever file is cited as --capacity-ref / --spdes-ref, the reader accepts a document or
refuses it with a capacitysim error (one line), never another exception; what it accepts meets the
section H(1) checks (a capacity demonstration connecting the flow, a SPDES check showing treatment
capacity with at least that flow added and recent enough)."""

from __future__ import annotations

import datetime as dt
import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from capacitysim.bank.refs import resolve_ref
from capacitysim.errors import InputError, RefusedError

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=30)
# documents shaped like a capacity demonstration, with any value where capacitysim writes a known one
connections = st.lists(st.fixed_dictionaries({}, optional={"node": json_values | st.sampled_from(["MH0001", "N"]),
                                                           "flow_gpd": json_values | st.floats(0, 1e6)}), max_size=3)
shaped = st.fixed_dictionaries({}, optional={
    "kind": st.sampled_from(["capacity-demonstration", "spdes-check", "detention-design"]) | json_values,
    "verdict": st.sampled_from(["pass", "fail", "untrusted", "PASS", "maybe"]) | json_values,
    "scenario": st.fixed_dictionaries({}, optional={"connections": connections | json_values}) | json_values,
    "external_files": st.lists(st.fixed_dictionaries({"verb": st.sampled_from(["MODEL", "FILE"])},
                                                     optional={"sha256": json_values | st.just("0" * 64),
                                                               "path": json_values})) | json_values,
    "model": json_values,
    "connection_prohibited": st.booleans() | json_values,
    "treatment_capacity_shown": st.booleans() | json_values,
    "watershed": st.booleans() | json_values,
    "added_gpd": st.sampled_from([0, 2999.9, 3000, 80000]) | json_values,
    "as_of": st.sampled_from(["2024-06-30", "2024-01-01", "2025-13-01", "2024-06-30T10:00:00"]) | json_values,
})
ON = dt.date(2024, 7, 1)


def _check(kind: str, name: str, data: bytes) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / name
        p.write_bytes(data)
        try:
            out = resolve_ref(kind, str(p), gpd=3000.0, node=None, on=ON, max_age_days=90)
        except (InputError, RefusedError) as exc:
            assert "\n" not in str(exc)
            return
        assert out["file"] and out["sha256"] and out["ref"] == str(p.resolve())
        assert out["verdict"] in ("pass", "treatment capacity shown")
        if out["verdict"] == "pass":
            assert out["connection"]["flow_gpd"] >= 3000.0
        else:  # section H(1): treatment capacity shown for at least the flow, as of at most 90 days before
            assert out["added_gpd"] >= 3000.0 and (ON - dt.date.fromisoformat(out["as_of"])).days <= 90


@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=300), name=st.sampled_from(["ref.json", "ref.html", "ref.bin", "ref"]),
       kind=st.sampled_from(["capacity", "spdes"]))
def test_arbitrary_bytes_are_accepted_or_refused_cleanly(data, name, kind):
    _check(kind, name, data)


@settings(max_examples=200, deadline=None)
@given(doc=json_values | shaped, name=st.sampled_from(["ref.json", "ref.txt"]), kind=st.sampled_from(["capacity", "spdes"]))
def test_arbitrary_json_values_are_accepted_or_refused_cleanly(doc, name, kind):
    _check(kind, name, json.dumps(doc).encode())


@settings(max_examples=30, deadline=None)
@given(depth=st.integers(1, 3000), opener=st.sampled_from(["[", '{"a":']))
def test_nested_json_of_any_depth_is_accepted_or_refused_cleanly(depth, opener):
    closer = "]" if opener == "[" else "}"
    _check("capacity", "ref.json", (opener * depth + "1" + closer * depth).encode())
