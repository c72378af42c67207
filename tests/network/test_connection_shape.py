"""connection_shape reads the model's HOURLY [DWF] patterns once (a screen asks for every node's; scanning every
[DWF] row per node took minutes at 10,000 nodes): for any layout of rows and patterns, every node's shape and source
are those of the direct scan of the rows (the rule as written before, kept here as the oracle)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from capacitysim.network.model import parse_inp
from capacitysim.network.scenario import connection_shape

PATTERNS = {  # name -> (type, factors)
    "H1": ("HOURLY", [1.0 + 0.1 * (k % 6) for k in range(24)]),
    "H2": ("HOURLY", [0.5 + 0.05 * k for k in range(24)]),
    "H3": ("HOURLY", [2.0] * 24),
    "Z0": ("HOURLY", [0.0] * 24),  # mean 0: not a shape
    "M1": ("MONTHLY", [1.0] * 12),
    "D1": ("DAILY", [1.0] * 7),
}


def _oracle(model, node):
    usable = {name: np.asarray(f[:24], float) for name, (kind, f) in model.patterns().items()
              if kind == "HOURLY" and len(f) >= 24 and np.mean(f[:24]) > 0}

    def hourly(names):  # the first of the row's patterns that is a usable HOURLY one
        return next(((str(n), usable[str(n).upper()]) for n in names if str(n).upper() in usable), None)

    rows = model.dwf_rows()
    own = next((hourly(pt) for nd, _, pt, _ in rows if nd == node and hourly(pt)), None)
    if own:
        return own[1] / own[1].mean(), "node"
    counts: dict = {}
    for _, _, pt, _ in rows:
        h = hourly(pt)
        if h:
            counts[h[0]] = counts.get(h[0], 0) + 1
    if counts:
        name = max(counts, key=lambda k: (counts[k], k))
        f = hourly([name])[1]
        return f / f.mean(), "common"
    return np.ones(24), "constant"


def _model(tmp_path, rows):
    lines = ["[JUNCTIONS]"] + [f"J{k} 0 5" for k in range(6)] + ["", "[DWF]"]
    lines += [f"{n} FLOW {v} " + " ".join(f'"{p}"' for p in pats) for n, v, pats in rows]
    lines += ["", "[PATTERNS]"]
    for name, (kind, f) in PATTERNS.items():
        lines.append(f"{name} {kind} " + " ".join(f"{x:g}" for x in f))
    path = tmp_path / "m.inp"
    path.write_text("\n".join(lines) + "\n")
    return parse_inp(path)


ROWS = st.lists(st.tuples(st.sampled_from([f"J{k}" for k in range(6)]), st.sampled_from([0.1, 1.0, 2.5]),
                          st.lists(st.sampled_from(sorted(PATTERNS) + [""]), max_size=4)), max_size=12)


@settings(max_examples=60, deadline=None)
@given(rows=ROWS)
def test_every_nodes_shape_is_the_direct_scans(tmp_path_factory, rows):
    model = _model(tmp_path_factory.mktemp("shape"), rows)
    for k in range(6):
        node = f"J{k}"
        want, kind = _oracle(model, node)
        got, source = connection_shape(model, node, "pattern")
        np.testing.assert_array_equal(got, want)
        assert {"node": "of the node's [DWF]", "common": "most used", "constant": "constant"}[kind] in source
        assert got.mean() == np.float64(1.0) or abs(got.mean() - 1.0) < 1e-12


def test_a_constant_peaking_factor_is_not_a_pattern(tmp_path):
    model = _model(tmp_path, [("J0", 1.0, ["H1"])])
    got, source = connection_shape(model, "J0", 2.5)
    assert got.tolist() == [2.5] * 24 and "peaking factor 2.5" in source
