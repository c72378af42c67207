"""SWMM progress (issue 28, item 5): a run asked for progress reports its simulated time while it runs, and its
results are those of the plain run (one ``swmm_stride`` over the whole run) bit for bit."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from capacitysim.network.engine import run_inp, stop_runs_when

pytestmark = pytest.mark.swmm

MODELS = Path(__file__).resolve().parents[2] / "src" / "capacitysim" / "data" / "models"
#: synthetic-50 has [STORAGE] and [RDII]; the stop rule's own stepping is compared too (headroom runs with one)
COMPARED = ["node_stats", "link_stats", "runoff_continuity_error_pct", "flow_routing_continuity_error_pct",
            "routing_totals", "runoff_totals", "pump_stats", "storage_stats", "stopped"]


def _stats(run) -> dict:
    return json.loads(run.stats.read_text(encoding="utf-8"))


def _watch(path: Path, seen: list, stop: threading.Event) -> threading.Thread:
    def loop():
        while not stop.is_set():
            try:
                seen.append(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError):
                pass
            time.sleep(0.005)

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    return t


def _run_watched(model: Path, wd: Path, every_s: float, **kw):
    path = wd / "progress" / "progress.json"
    seen: list[dict] = []
    stop = threading.Event()
    t = _watch(path, seen, stop)
    try:
        run = run_inp(model, wd / "run", progress_path=path, progress_every_s=every_s, **kw)
    finally:
        stop.set()
        t.join()
    seen.append(json.loads(path.read_text(encoding="utf-8")))  # the final write, left for its caller
    return run, seen


@pytest.mark.parametrize("model", ["synthetic-50", "synthetic-500"])
def test_progress_changes_no_result_bit(model, tmp_path):
    inp = MODELS / f"{model}.inp"
    text = inp.read_text(encoding="latin-1")
    assert "[STORAGE]" in text and "[RDII]" in text  # the engine's storage and RDII paths are in the comparison
    plain = _stats(run_inp(inp, tmp_path / "plain"))
    run, seen = _run_watched(inp, tmp_path / "progress", 0.05)
    instrumented = _stats(run)
    assert plain["routing"] and plain["node_stats"]["max_depth"] and plain["link_stats"]["max_flow"]
    for key in COMPARED:
        assert instrumented[key] == plain[key], key  # ==, every float bit for bit
    assert instrumented["nodes"] == plain["nodes"] and instrumented["links"] == plain["links"]
    # and the report's summaries (the binary results too: the same routing steps write the same reporting steps)
    assert run.out.read_bytes() == (tmp_path / "plain" / f"{model}.out").read_bytes()


def test_the_progress_file_moves_to_the_total_with_an_eta(tmp_path):
    run, seen = _run_watched(MODELS / "synthetic-50.inp", tmp_path, 0.05)
    elapsed = [s["elapsed_days"] for s in seen]
    assert len(set(elapsed)) >= 3, elapsed  # several reports while it ran, not just the end
    assert elapsed == sorted(elapsed)  # never back
    first, last = seen[0], seen[-1]
    assert last["done"] is True and last["elapsed_days"] == last["total_days"] == 1.5  # START 06/01 to END 06/02 12:00
    assert last["now"] == "2024-06-02T12:00:00" and last["start"] == "2024-06-01T00:00:00"
    middle = [s for s in seen if not s["done"] and s["elapsed_days"] > 0.1]
    assert middle and all(s["eta_s"] is not None and s["eta_s"] > 0 for s in middle)
    assert all(s["wall_s"] >= 0 for s in seen) and first["run"] == "synthetic-50"
    # at most one write per progress_every_s (plus the final one)
    assert last["writes"] <= last["wall_s"] / 0.05 + 2


def test_progress_with_a_stop_rule_changes_nothing(tmp_path):
    # the headroom search's stepping with a stop rule: with and without progress, the same statistics and stop
    inp = MODELS / "synthetic-50.inp"
    rule = {"not_before_days": 0.5, "every_steps": 10, "node_max_depth": [["MH0003", 1e-6]]}
    plain = _stats(run_inp(inp, tmp_path / "plain", stop_rule=rule))
    run, seen = _run_watched(inp, tmp_path / "progress", 0.05, stop_rule=rule)
    instrumented = _stats(run)
    assert plain["stopped"] is not None
    for key in COMPARED:
        assert instrumented[key] == plain[key], key
    assert seen[-1]["done"] and seen[-1]["elapsed_days"] == plain["stopped"]["elapsed_days"] < seen[-1]["total_days"]


def test_a_service_job_s_runs_report_in_their_own_folders_removed_after(tmp_path):
    folder = tmp_path / "engine-progress"
    folder.mkdir()
    seen: set[str] = set()
    stop = threading.Event()

    def loop():
        while not stop.is_set():
            seen.update(p.parent.name for p in folder.glob("*/progress.json"))
            time.sleep(0.01)

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    with stop_runs_when(progress_dir=folder):
        run_inp(MODELS / "synthetic-50.inp", tmp_path / "run", name="before")
    stop.set()
    t.join()
    assert len(seen) == 1 and next(iter(seen)).startswith("before-")
    assert list(folder.iterdir()) == []  # cleaned up at the run's end


def test_a_plain_run_reports_nothing(tmp_path, monkeypatch):
    # the CLI, sweeps and benchmarks: no progress file, the one stride (an inherited variable is not a request)
    monkeypatch.setenv("CAPACITYSIM_ENGINE_PROGRESS", str(tmp_path / "stray.json"))
    run_inp(MODELS / "synthetic-50.inp", tmp_path / "run")
    assert not (tmp_path / "stray.json").exists()
