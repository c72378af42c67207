"""HTML page with the history of stored benchmark runs: every speed case's samples over runs (the spread,
not only a median), counts, reference status, and the machine's load during each run."""

from __future__ import annotations

import json
from pathlib import Path

from capacitysim.benchmarking.compare import RATIO_SENTENCE, check_results
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


#: Speed cases per row of the figure grid.
COLUMNS = 2


def _samples(case: dict) -> list[float]:
    """A speed entry's ratio samples (a schema 1 entry: its one median)."""
    if "skipped" in case:
        return []
    return list(case.get("samples", {}).get("ratio") or [case["ratio"]])


def history_report(runs: list[tuple[str, dict]], out: Path) -> Path:
    """Write the history page: per speed case, the ratio samples of every run (box and points: the
    spread) with the 95 % interval of the median; counts; reference status; the runs' load."""
    import math

    rep = HtmlReport("capacitysim benchmark history", f"{len(runs)} stored run(s)")
    rep.paragraph(RATIO_SENTENCE)
    if not runs:
        rep.paragraph("No stored runs yet: `capacitysim bench run --save` stores one.")
        return rep.write(out)
    names = sorted({n for _, d in runs for n, c in d.get("speed", {}).items() if "skipped" not in c})
    labels = [t[:16] for t, _ in runs]
    if names:
        rows = math.ceil(len(names) / COLUMNS)
        fig, _ = new_figure(9, 2.6 * rows)
        fig.clf()
        for k, n in enumerate(names):
            ax = fig.add_subplot(rows, COLUMNS, k + 1)
            xs = [i for i, (_, d) in enumerate(runs) if n in d.get("speed", {}) and _samples(d["speed"][n])]
            data = [_samples(runs[i][1]["speed"][n]) for i in xs]
            if xs:
                ax.boxplot(data, positions=xs, widths=0.5, showfliers=False)
                for x, ys in zip(xs, data):
                    ax.plot([x] * len(ys), ys, ".", color="tab:blue", alpha=0.35, ms=3)
                med = [runs[i][1]["speed"][n]["ratio"] for i in xs]
                ax.plot(xs, med, "-", color="tab:red", lw=1)
            ax.set_title(n, fontsize=8)
            ax.set_xticks(range(len(runs)))
            ax.set_xticklabels(labels if k >= len(names) - COLUMNS else [""] * len(runs), rotation=30, ha="right", fontsize=6)
            ax.tick_params(axis="y", labelsize=7)
            ax.grid(True, alpha=0.3)
        fig.supylabel("ratio (time / reference time)", fontsize=8)
        fig.tight_layout()
        rep.heading("Speed ratios over runs").figure(
            fig, "Each box: one run's samples (quartiles, whiskers to 1.5 IQR; the dots are the samples); red: the "
                 "median ratio. Lower is faster. A run in the former format (no samples) shows its one median.")
        last = runs[-1][1]
        table = []
        for n, c in last.get("speed", {}).items():
            if "skipped" in c:
                table.append([n, "skipped", None, None, None, None, c["skipped"]])
                continue
            lo, hi = c.get("ratio_ci") or [None, None]
            loads = c.get("samples", {}).get("load1") or []
            table.append([n, c.get("basis", "wall"), c["ratio"], f"{lo:.4g} - {hi:.4g}" if lo else None,
                          100 * c.get("spread_rel", 0.0), len(_samples(c)),
                          f"{c.get('reference', 'np.sort kernel')}; load {min(loads):.1f}-{max(loads):.1f}" if loads
                          else c.get("reference", "np.sort kernel")])
        rep.heading("Speed cases in the latest run", 3)
        rep.table(["case", "basis", "ratio (median)", "95 % interval", "spread [%]", "samples", "reference; 1-min load"], table)
    counts = sorted({n for _, d in runs for n in d.get("count", {})})
    if counts:
        rep.heading("Counts over runs (higher is worse)")
        quantities = sorted({(n, q) for _, d in runs for n in counts for q in d.get("count", {}).get(n, {}).get("values", {})})
        rep.table(["run", *[f"{n}: {q}" for n, q in quantities]],
                  [[t, *(d.get("count", {}).get(n, {}).get("values", {}).get(q) for n, q in quantities)] for t, d in runs])
    rep.heading("Reference cases in the latest run")
    last = runs[-1][1]
    rows, classes = [], []
    for n, r in last.get("reference", {}).items():
        status = "skipped" if "skipped" in r else "pass" if r.get("passed") else "FAIL"
        rows.append([n, status, r.get("source", "")])
        classes.append("fail" if status == "FAIL" else "pass")
    rep.table(["case", "status", "source"], rows, classes)
    rep.heading("Runs")
    rep.table(["timestamp", "capacitysim", "python", "numpy", "swmm-toolkit", "cores", "1-min load (start, end)"],
              [[t, *(d.get("environment", {}).get(k) for k in ("capacitysim", "python", "numpy", "swmm-toolkit", "cpu_count")),
                ", ".join(f"{d['environment'][k][0]:.1f}" for k in ("loadavg_start", "loadavg_end") if k in d.get("environment", {}))]
               for t, d in runs])
    return rep.write(out)
