"""``capacitysim bench``: benchmark regression runs (reference cases, counts and speed ratios).

Exit codes: 0 nothing regressed; 1 a regression (a reference case off its tolerance or moved, a
count that grew, a speed ratio slower beyond doubt; ``bench run``: a reference case failed); 2 an
error: bad input (a results file that is not a results document, baselines with no case in common,
an output that is an input) or a crash of the command itself, reported in one line -- never
confused with a regression; 4 (``bench compare``) inconclusive: no regression was found but a speed
case could not be decided (the machine was too noisy, or the interval straddles the threshold).
"""

from __future__ import annotations

import datetime as _dt
import functools
import sys
import textwrap
from pathlib import Path

import click

from capacitysim.benchmarking.compare import (
    CONFIDENCE,
    DEFAULT_THRESHOLD,
    EXIT_INCONCLUSIVE,
    NOISE_FLOOR,
    NOISE_MULTIPLE,
    RATIO_SENTENCE,
    compare,
)
from capacitysim.benchmarking.registry import count_cases, load_cases, select
from capacitysim.benchmarking.report import history_report, load_runs, read_results
from capacitysim.benchmarking.runner import run_cases
from capacitysim.cli import cli
from capacitysim.cli.common import check_output, emit_json, json_option
from capacitysim.errors import CapacitysimError, InputError
from capacitysim.files import atomic_write_text
from capacitysim.io.files import bundled_dir, dumps_json

#: The baseline a project compares against (``bench compare benchmarks/baseline.json``).
BASELINE_NAME = "baseline.json"
#: Folder of the stored runs (``bench run --save``, ``bench report``), inside the cases folder.
HISTORY_DIR = "history"
#: The sentence that explains a ratio, wrapped for --help.
RATIO_HELP = textwrap.fill(RATIO_SENTENCE, 78)
#: Exit code of a crash inside a bench command (an error, as bad input; 1 means a regression).
CRASH_EXIT_CODE = 2


class BenchCrashError(CapacitysimError):
    """An unexpected exception inside a bench command: one line and exit 2, never exit 1 (a regression)."""

    exit_code = CRASH_EXIT_CODE


def _no_crash(name: str):
    """Turn an unexpected exception of the command ``bench NAME`` into :class:`BenchCrashError`.

    capacitysim's own errors, a path the system refuses (``OSError``: the CLI's one line, exit 2)
    and click's exits pass through unchanged.
    """

    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except (CapacitysimError, OSError, click.exceptions.Exit, click.ClickException, click.Abort):
                raise
            except Exception as exc:
                text = " ".join(str(exc).split())[:300]
                raise BenchCrashError(f"bench {name} crashed: {type(exc).__name__}: {text} "
                                      f"(exit {CRASH_EXIT_CODE}: an error, not a regression)") from exc

        return wrapper

    return deco


def _protected_inputs(cases_dir) -> list[Path]:
    """Files an output of ``bench`` must never overwrite: the case files, the baselines, the stored runs."""
    folders = {Path(_cases_dir(cases_dir)), Path(bundled_dir("benchmarks"))}
    out: list[Path] = []
    for folder in folders:
        if folder.is_dir():
            out += sorted(folder.glob("cases_*.py")) + [folder / BASELINE_NAME]
            out += sorted((folder / HISTORY_DIR).glob("*.json")) if (folder / HISTORY_DIR).is_dir() else []
    return [p for p in out if p.exists()]


cases_option = click.option(
    "--cases", "cases_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Folder of cases_*.py files (default: the project's benchmarks/).",
)


def _cases_dir(cases_dir):
    return cases_dir or bundled_dir("benchmarks")


def _run(cases_dir, only, kind, repeats, progress, budget_s=None):
    reference, speed = load_cases(_cases_dir(cases_dir))
    counts = count_cases()
    reference, speed, counts = select(reference, only), select(speed, only), select(counts, only)
    if kind != "all":
        reference, speed, counts = (x if kind == k else {} for x, k in ((reference, "reference"), (speed, "speed"), (counts, "count")))
    if not reference and not speed and not counts:
        raise InputError(f"--only {only!r} matches no benchmark case" + (f" of kind {kind}" if kind != "all" else ""))
    return run_cases(reference, speed, progress=progress, repeats=repeats, counts=counts, budget_s=budget_s)


def _print_run(doc):
    ref = doc["reference"]
    if ref:
        click.echo(f"{'reference case':<44} {'status':<7} values")
        for name, r in ref.items():
            status = "skipped" if "skipped" in r else "pass" if r.get("passed") else "FAIL"
            vals = r.get("skipped") or r.get("error") or ", ".join(f"{k}={v:.6g}" for k, v in r["values"].items())
            click.echo(f"{name:<44} {status:<7} {vals}")
    if doc.get("count"):
        click.echo(f"\n{'count case (higher is worse)':<44} values")
        for name, c in doc["count"].items():
            vals = c.get("skipped") and f"skipped: {c['skipped']}" or ", ".join(f"{k}={v:.6g}" for k, v in c["values"].items())
            click.echo(f"{name:<44} {vals}")
    if doc["speed"]:
        click.echo(f"\n{'speed case':<44} {'basis':<5} {'ratio':>9} {'95 % interval':>19} {'spread':>7} {'n':>3} {'load':>9}")
        for name, s in doc["speed"].items():
            if "skipped" in s:
                click.echo(f"{name:<44} skipped: {s['skipped']}")
                continue
            ci = f"{s['ratio_ci'][0]:>9.4g}-{s['ratio_ci'][1]:<9.4g}" if s.get("ratio_ci") else f"{'(too few)':>19}"
            loads = s["samples"]["load1"]
            click.echo(f"{name:<44} {s['basis']:<5} {s['ratio']:>9.4g} {ci} {100 * s['spread_rel']:>6.1f}% "
                       f"{s['n_samples']:>3} {min(loads):>4.1f}-{max(loads):<4.1f}")
        refs = sorted({s["reference"] for s in doc["speed"].values() if "reference" in s})
        click.echo(f"\n{RATIO_SENTENCE} References: {'; '.join(refs)}. Load: 1-minute load average during the samples "
                   f"({doc['environment'].get('cpu_count')} cores).")


def _read(path: Path) -> dict:
    """A results file, parsed and checked: anything else is one line and exit 2."""
    return read_results(path)


@cli.group(help=f"""Benchmark regression runs: reference cases, counts and speed ratios, against stored baselines.

\b
{RATIO_HELP}

\b
Exit codes: 0 no regression; 1 a regression; 2 an error (bad input, nothing to compare, a crash);
{EXIT_INCONCLUSIVE} (bench compare) inconclusive: the machine was too noisy to decide, rerun with more samples (--repeats).""")
def bench():
    pass


repeats_option = click.option("--repeats", type=click.IntRange(3, 1000), default=None,
                              help="Minimum timing samples per speed case (default: the case's, usually 8); more "
                                   "samples narrow the interval of an inconclusive comparison.")
budget_option = click.option("--budget", "budget_s", type=click.FloatRange(1.0, 3600.0), default=None,
                             help="Time budget per speed case [s] once --repeats samples are taken (default: the case's).")


@bench.command("run")
@click.option("--only", help="Run only cases whose name contains PATTERN (wildcards allowed; comma-separated alternatives).")
@click.option("--kind", type=click.Choice(["all", "reference", "count", "speed"]), default="all", show_default=True)
@repeats_option
@budget_option
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write the results JSON here.")
@click.option("--save", is_flag=True, help="Also store the run in benchmarks/history/ for `bench report`.")
@cases_option
@json_option
@_no_crash("run")
def bench_run(only, kind, repeats, budget_s, out, save, cases_dir, as_json):
    """Run the benchmark cases and print a table (exit 1 if a reference case fails; 2 on an error).

    Speed cases are timed interleaved with their reference until the 95 % interval of the median
    ratio is within +/-1.5 % or the case's time budget is spent; every sample is stored with its
    CPU and wall time and the load average. --out must not be a case file, a baseline or a stored
    run (exit 2): write elsewhere and copy.
    """
    check_output(out, _protected_inputs(cases_dir), option="--out")
    doc = _run(cases_dir, only, kind, repeats, progress=sys.stderr.isatty() and not as_json, budget_s=budget_s)
    if out:
        atomic_write_text(out, dumps_json(doc))
    if save:
        stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
        atomic_write_text(_cases_dir(cases_dir) / HISTORY_DIR / f"{stamp}.json", dumps_json(doc))
    if as_json:
        emit_json(doc)
    else:
        _print_run(doc)
    if not all(r.get("passed") for r in doc["reference"].values() if "skipped" not in r):
        sys.exit(1)


_LABEL = {"regression": "REGRESSION", "inconclusive": "INCONCLUSIVE", "ok": "ok", "note": "note"}


@bench.command("compare", help=f"""Compare CURRENT (or a fresh run) against BASELINE.

\b
Speed cases: the change of the ratio is the Hodges-Lehmann estimate on the logs of the two runs'
samples, with its {100 * CONFIDENCE:g} % Mann-Whitney interval. No regression when the interval's top is at
most +THRESHOLD; inconclusive when this run's ratios spread more than {100 * NOISE_FLOOR:g} % and {NOISE_MULTIPLE:g}x the
baseline's (a busy machine); a regression when the interval's bottom is above 0 and the estimate
above +THRESHOLD; otherwise inconclusive (the interval straddles the threshold). Reference cases:
a value off its expected value or moved beyond its tolerance. Counts: higher than the baseline's.

\b
{RATIO_HELP}

\b
Exit codes: 0 no regression; 1 a regression (each named with its change and interval); 2 an error
(a file that is not a results document, no case compared, a crash); {EXIT_INCONCLUSIVE} inconclusive (no
regression found, but a speed case could not be decided: rerun on a quieter machine or with more
samples, --repeats).""")
@click.argument("baseline", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("current", type=click.Path(dir_okay=False, path_type=Path), required=False)
@click.option("--threshold", type=click.FloatRange(0.0, 10.0), default=DEFAULT_THRESHOLD, show_default=True,
              help="Relative slow-down of a speed ratio that counts as a regression (0.05: 5 %).")
@click.option("--only", help="With no CURRENT: run only matching cases.")
@click.option("--kind", type=click.Choice(["all", "reference", "count", "speed"]), default="all", show_default=True)
@repeats_option
@budget_option
@cases_option
@json_option
@_no_crash("compare")
def bench_compare(baseline, current, threshold, only, kind, repeats, budget_s, cases_dir, as_json):
    base = _read(baseline)
    cur = _read(current) if current else _run(cases_dir, only, kind, repeats, progress=sys.stderr.isatty() and not as_json,
                                              budget_s=budget_s)
    result = compare(base, cur, threshold)
    if as_json:
        emit_json(result.to_dict())
    else:
        for f in result.findings:
            click.echo(f"{_LABEL[f.outcome]:<12} {f.kind:<9} {f.name}: {f.message}")
        n = {k: len(result.of(k)) for k in ("regression", "inconclusive", "ok", "note")}
        env = cur.get("environment", {})
        load = env.get("loadavg_start")
        click.echo(f"{n['regression']} regression(s), {n['inconclusive']} inconclusive, {n['ok']} ok, {n['note']} note(s)"
                   + (f"; 1-min load at the start of the current run {load[0]:.1f} on {env.get('cpu_count')} cores" if load else ""))
        click.echo({"regression": "outcome: REGRESSION (exit 1)",
                    "inconclusive": f"outcome: INCONCLUSIVE (exit {EXIT_INCONCLUSIVE}): no regression found, but the runs were "
                                    "made in different load regimes, the machine was too noisy or the samples too few to "
                                    "decide every case; compare runs of one regime, or rerun with more samples (--repeats)",
                    "ok": "outcome: no regression (exit 0)"}[result.outcome])
    if result.exit_code:
        sys.exit(result.exit_code)


@bench.command("report", help=f"""Write an HTML page with the history of stored runs: each speed case's samples
per run (box and points: the spread) with the median, counts, reference cases and each run's load.

\b
{RATIO_HELP}

--out must not be a stored run, a case file or a baseline (exit 2).""")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=Path("bench-history.html"), show_default=True)
@click.option("--history", "history_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder of stored runs (default: benchmarks/history/).")
@_no_crash("report")
def bench_report(out, history_dir):
    folder = history_dir or bundled_dir("benchmarks") / HISTORY_DIR
    paths = sorted(Path(folder).glob("*.json")) if Path(folder).is_dir() else []
    check_output(out, [*paths, *_protected_inputs(None)], option="--out")
    path = history_report(load_runs(paths), out)
    click.echo(f"wrote {path} ({len(paths)} run(s))")
