"""Every document kind that existed at 6f47459 stays byte-compatible (issue 27, item 3).

tests/data/golden/NAME.json is what ``capacitysim ... --json`` printed at commit 6f47459 (the commands are in
tests/data/golden/commands.json and README.md there). Each test runs the same command at HEAD and asserts that,
after removing only the envelope's new keys (:data:`capacitysim.rules.document.ENVELOPE_KEYS` the golden
document lacks), the document is the golden one byte for byte: every key present, with the identical value, in
the same order. The envelope adds keys; it never changes or removes one.

Normalised before comparing, and nothing else: the repository's root and the command's temporary folder in any
string (the golden documents were made in a clone at /tmp/golden), and the values at the paths of
:data:`VOLATILE` (durations, clock times, the bank's file, its hash chain's head, which hashes the clock times).
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from capacitysim.io.files import dumps_json
from capacitysim.rules.document import ENVELOPE_KEYS, document_kind

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "data" / "golden"
#: Where the golden documents were made (tests/data/golden/README.md).
GOLDEN_ROOT = "/tmp/golden"

_spec = importlib.util.spec_from_file_location("golden_capture", GOLDEN / "capture.py")
capture = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(capture)

#: The values that change from run to run, by document and path (``*`` any list index).
VOLATILE = {
    "headroom": ("/seconds",),
    "sweep-run": ("/seconds",),
    "capacity-register": ("/bank", "/bank_head", "/bank_last_at", "/as_of", "/computed_at", "/freshness/text",
                          "/seconds", "/cache/path", "/models/*/commitments/bank", "/models/*/commitments/bank_head",
                          "/models/*/commitments/as_of", "/models/*/computed", "/models/*/freshness"),
}
#: Keys a kind's document gained so that its report renders from the document alone (issue 27, item 3,
#: report.stored): the document's own keys, after the golden ones and before the envelope's.
REPORT_KEYS = {
    "capacity": ("margins", "next_steps"),  # issue 28, items 1 and 2: what to do after a fail; the margins
    "detention": ("site_details", "steps", "rule_set_entries", "hydrographs"),
    "spdes-check": ("verdict_line", "permit_citation", "summary_rows", "monthly_averages", "period_averages"),
    "sweep-summary": ("verdict_map", "criteria", "scenario_table"),
}
#: Kinds whose to_dict does not carry the envelope yet (their modules had another item's uncommitted changes).
ENVELOPE_PENDING: set = set()  # every kind carries the envelope


def _normalise(obj, volatile, here=""):
    if isinstance(obj, dict):
        return {k: _normalise(v, volatile, f"{here}/{k}") for k, v in obj.items()}
    if isinstance(obj, list):
        return [_normalise(v, volatile, f"{here}/{i}") for i, v in enumerate(obj)]
    if any(re.fullmatch(re.escape(p).replace(r"\*", r"\d+"), here) for p in volatile):
        return "<volatile>"
    return obj


def _text(raw: str, root: str, tmp: str) -> str:
    return raw.replace(tmp, "<tmp>").replace(root, "<root>")


def _params():
    for name, spec in capture.COMMANDS.items():
        yield pytest.param(name, marks=[getattr(pytest.mark, m) for m in spec["markers"]], id=name)


@pytest.mark.parametrize("name", list(_params()))
def test_document_is_the_golden_one_plus_the_envelope(name, tmp_path):
    golden_raw = (GOLDEN / f"{name}.json").read_text(encoding="utf-8")
    golden = json.loads(golden_raw)
    assert dumps_json(golden) + "\n" == golden_raw  # the comparison below re-dumps: it is exact

    code, raw = capture.run(name, ROOT, tmp_path)
    assert code == capture.COMMANDS[name]["exit"], raw[-2000:]
    head = json.loads(raw)
    added = [k for k in head if k not in golden]
    report_keys = REPORT_KEYS.get(name, ())
    assert set(added) <= set(ENVELOPE_KEYS) | set(report_keys), f"{name}: keys added outside the envelope: {added}"
    assert [k for k in added if k in report_keys] == list(report_keys), f"{name}: report keys missing or reordered"
    assert list(head)[len(golden):len(golden) + len(report_keys)] == list(report_keys), \
        f"{name}: the report keys follow the golden keys, before the envelope's"
    stripped = {k: v for k, v in head.items() if k in golden}

    volatile = VOLATILE.get(name, ())
    # the golden documents' temporary folders are gone: a tmp path is compared up to the folder
    g = _normalise(json.loads(re.sub(r"/tmp/tmp[\w-]+", "<tmp>", _text(golden_raw, GOLDEN_ROOT, "\0"))), volatile)
    h = _normalise(json.loads(_text(dumps_json(stripped), str(ROOT), str(tmp_path))), volatile)
    assert dumps_json(h) == dumps_json(g)

    if name not in ENVELOPE_PENDING:
        assert document_kind(head), f"{name}: no document kind"
        for key in ("schema_version", "capacitysim_version", "engine", "inputs", "policies"):
            # a capacity register's "capacitysim" already is the version (not written twice)
            assert key in head or (key, name) == ("capacitysim_version", "capacity-register"), f"{name}: envelope key {key} missing"
        files = head["input_files"] if name == "capacity-register" else head["inputs"]  # its "inputs" are parameters
        assert all(set(i) >= {"role", "file", "sha256"} for i in files)
        assert all({"name", "text"} <= set(p) for p in head["policies"])  # existing shapes kept as they are
        ran_swmm = "swmm" in capture.COMMANDS[name]["markers"]
        assert (head["engine"] is not None) == ran_swmm
        if ran_swmm:
            assert head["engine"]["name"] == "SWMM" and re.fullmatch(r"5\.\d\.\d+", head["engine"]["version"])
