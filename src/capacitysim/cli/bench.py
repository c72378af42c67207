"""``capacitysim bench``: benchmark regression runs (reference cases and speed).

Exit codes: 0 nothing regressed; 1 a regression (a reference case off its tolerance or moved, a
slower speed ratio; ``bench run``: a reference case failed); 2 an error: bad input (a results file
that is not a results document, baselines with no case in common, an output that is an input) or
a crash of the command itself, reported in one line -- never confused with a regression.
"""

from __future__ import annotations

import datetime as _dt
import functools
import sys
from pathlib import Path

import click

from capacitysim.benchmarking.compare import DEFAULT_THRESHOLD, compare
from capacitysim.benchmarking.registry import load_cases, select
from capacitysim.benchmarking.report import history_report, load_runs, read_results
from capacitysim.benchmarking.runner import run_cases
from capacitysim.cli import cli
from capacitysim.cli.common import check_output, emit_json, json_option
from capacitysim.errors import CapacitysimError, InputError
from capacitysim.io.files import bundled_dir, dumps_json
from capacitysim.files import atomic_write_text

#: The baseline a project compares against (``bench compare benchmarks/baseline.json``).
BASELINE_NAME = "baseline.json"
#: Folder of the stored runs (``bench run --save``, ``bench report``), inside the cases folder.
HISTORY_DIR = "history"
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
            except Exception as exc:  # noqa: BLE001 - a crash is an error (exit 2), not a regression (exit 1)
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


def _run(cases_dir, only, kind, repeats, progress):
    reference, speed = load_cases(_cases_dir(cases_dir))
    reference, speed = select(reference, only), select(speed, only)
    if kind == "reference":
        speed = {}
    elif kind == "speed":
        reference = {}
    if not reference and not speed:
        raise InputError(f"--only {only!r} matches no benchmark case")
    return run_cases(reference, speed, progress=progress, repeats=repeats)


def _print_run(doc):
    ref = doc["reference"]
    if ref:
        click.echo(f"{'reference case':<40} {'status':<6} values")
        for name, r in ref.items():
            status = "pass" if r.get("passed") else "FAIL"
            vals = r.get("error") or ", ".join(f"{k}={v:.6g}" for k, v in r["values"].items())
            click.echo(f"{name:<40} {status:<6} {vals}")
    if doc["speed"]:
        k = doc["reference_kernel"]
        click.echo(f"\nreference kernel: {k['description']}: {1e3 * k['median_s']:.2f} ms")
        click.echo(f"{'speed case':<40} {'median':>12} {'spread':>8} {'ratio':>9}")
        for name, s in doc["speed"].items():
            click.echo(f"{name:<40} {1e3 * s['median_s']:>9.3f} ms {100 * s['spread_rel']:>7.1f}% {s['ratio']:>9.3f}")


def _read(path: Path) -> dict:
    """A results file, parsed and checked: anything else is one line and exit 2."""
    return read_results(path)


@cli.group()
def bench():
    """Benchmark regression runs: reference cases and speed, against stored baselines."""


@bench.command("run")
@click.option("--only", help="Run only cases whose name contains PATTERN (wildcards allowed; comma-separated alternatives).")
@click.option("--kind", type=click.Choice(["all", "reference", "speed"]), default="all", show_default=True)
@click.option("--repeats", type=click.IntRange(3, 100), default=None, help="Timing samples per speed case.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write the results JSON here.")
@click.option("--save", is_flag=True, help="Also store the run in benchmarks/history/ for `bench report`.")
@cases_option
@json_option
@_no_crash("run")
def bench_run(only, kind, repeats, out, save, cases_dir, as_json):
    """Run the benchmark cases and print a table (exit 1 if a reference case fails; 2 on an error).

    --out must not be a case file, a baseline or a stored run (exit 2): write elsewhere and copy.
    """
    check_output(out, _protected_inputs(cases_dir), option="--out")
    doc = _run(cases_dir, only, kind, repeats, progress=sys.stderr.isatty() and not as_json)
    if out:
        atomic_write_text(out, dumps_json(doc))
    if save:
        stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        atomic_write_text(_cases_dir(cases_dir) / HISTORY_DIR / f"{stamp}.json", dumps_json(doc))
    if as_json:
        emit_json(doc)
    else:
        _print_run(doc)
    if not all(r.get("passed") for r in doc["reference"].values()):
        sys.exit(1)


@bench.command("compare")
@click.argument("baseline", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("current", type=click.Path(dir_okay=False, path_type=Path), required=False)
@click.option("--threshold", type=click.FloatRange(0.0, 10.0), default=DEFAULT_THRESHOLD, show_default=True,
              help="Relative slow-down of a speed ratio that counts as a regression.")
@click.option("--only", help="With no CURRENT: run only matching cases.")
@click.option("--kind", type=click.Choice(["all", "reference", "speed"]), default="all", show_default=True)
@cases_option
@json_option
@_no_crash("compare")
def bench_compare(baseline, current, threshold, only, kind, cases_dir, as_json):
    """Compare CURRENT (or a fresh run) against BASELINE; exit 1 when anything regressed.

    Exit 2 (one line) when a file is not a results document, when no case is compared (no case
    in common), or when the command itself crashes.
    """
    base = _read(baseline)
    cur = _read(current) if current else _run(cases_dir, only, kind, None, progress=sys.stderr.isatty() and not as_json)
    findings = compare(base, cur, threshold)
    regressed = [f for f in findings if f.regression]
    if as_json:
        emit_json({"regressed": bool(regressed), "findings": [f.__dict__ for f in findings]})
    else:
        for f in findings:
            click.echo(f"{'REGRESSION' if f.regression else 'note':<10} {f.kind:<9} {f.name}: {f.message}")
        click.echo(f"{len(regressed)} regression(s), {len(findings) - len(regressed)} note(s)")
    if regressed:
        sys.exit(1)


@bench.command("report")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=Path("bench-history.html"), show_default=True)
@click.option("--history", "history_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder of stored runs (default: benchmarks/history/).")
@_no_crash("report")
def bench_report(out, history_dir):
    """Write an HTML page with the history of stored runs.

    --out must not be a stored run, a case file or a baseline (exit 2).
    """
    folder = history_dir or bundled_dir("benchmarks") / HISTORY_DIR
    paths = sorted(Path(folder).glob("*.json")) if Path(folder).is_dir() else []
    check_output(out, [*paths, *_protected_inputs(None)], option="--out")
    path = history_report(load_runs(paths), out)
    click.echo(f"wrote {path} ({len(paths)} run(s))")
