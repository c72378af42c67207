"""HTML page with the history of stored benchmark runs (speed ratios over runs, reference status)."""

from __future__ import annotations

import json
from pathlib import Path

from capacitysim.benchmarking.compare import check_results
from capacitysim.errors import DataFileError
from capacitysim.report.html import HtmlReport, new_figure


def read_results(path: str | Path) -> dict:
    """A stored benchmark results file, parsed and checked (:func:`~capacitysim.benchmarking.compare.check_results`).

    Raises
    ------
    capacitysim.errors.DataFileError
        The file is missing, not UTF-8 JSON, or not a results document.
    """
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataFileError(f"{p}: file not found") from None
    except IsADirectoryError:
        raise DataFileError(f"{p}: is a folder, expected a JSON results file") from None
    except UnicodeDecodeError as exc:
        raise DataFileError(f"{p}: not a JSON results file (not UTF-8 text: {exc.reason} at byte {exc.start})") from None
    except (json.JSONDecodeError, RecursionError) as exc:
        raise DataFileError(f"{p}: not a JSON results file ({str(exc)[:200] or type(exc).__name__})") from None
    return check_results(doc, str(p))


def load_runs(paths: list[Path]) -> list[tuple[str, dict]]:
    """The stored runs ``paths``, each checked, as (timestamp, document) sorted by timestamp."""
    runs = []
    for p in paths:
        doc = read_results(p)
        runs.append((doc.get("environment", {}).get("timestamp", Path(p).stem), doc))
    runs.sort(key=lambda r: r[0])
    return runs


def history_report(runs: list[tuple[str, dict]], out: Path) -> Path:
    """Write the history page: one line per speed case (ratio to the reference kernel) over runs."""
    rep = HtmlReport("capacitysim benchmark history", f"{len(runs)} stored run(s)")
    if not runs:
        rep.paragraph("No stored runs yet: `capacitysim bench run --save` stores one.")
        return rep.write(out)
    names = sorted({n for _, d in runs for n in d.get("speed", {})})
    if names:
        fig, ax = new_figure(9, 4)
        for n in names:
            xs = [i for i, (_, d) in enumerate(runs) if n in d.get("speed", {})]
            ys = [runs[i][1]["speed"][n]["ratio"] for i in xs]
            ax.plot(xs, ys, marker="o", label=n)
        ax.set_yscale("log")
        ax.set_xticks(range(len(runs)))
        ax.set_xticklabels([t[:16] for t, _ in runs], rotation=30, ha="right", fontsize=7)
        ax.set_ylabel("time / reference kernel time")
        ax.legend(fontsize=7)
        ax.grid(True, alpha=0.3)
        rep.heading("Speed ratios over runs").figure(fig, "Lower is faster; the reference kernel is np.sort of 10^6 doubles timed in the same run.")
        last = runs[-1][1]
        rep.table(
            ["case", "median [s]", "spread [%]", "ratio", "what"],
            [[n, s.get("median_s"), 100 * s.get("spread_rel", 0.0), s["ratio"], s.get("description", "")]
             for n, s in last.get("speed", {}).items()],
        )
    rep.heading("Reference cases in the latest run")
    last = runs[-1][1]
    rows, classes = [], []
    for n, r in last.get("reference", {}).items():
        rows.append([n, "pass" if r.get("passed") else "FAIL", r.get("source", "")])
        classes.append("pass" if r.get("passed") else "fail")
    rep.table(["case", "status", "source"], rows, classes)
    rep.heading("Runs")
    rep.table(["timestamp", "capacitysim", "python", "numpy", "swmm-toolkit"],
              [[t, *(d.get("environment", {}).get(k) for k in ("capacitysim", "python", "numpy", "swmm-toolkit"))] for t, d in runs])
    return rep.write(out)
