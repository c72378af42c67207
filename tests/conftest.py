"""Shared fixtures: paths to ../shared (skipping when absent), a CLI runner, a dask scheduler with two workers; the
hypothesis profiles; the test tiers' guard (tests/_tiers/tier_guard.py: markers in pyproject.toml).

Hypothesis profiles, chosen by ``HYPOTHESIS_PROFILE``: ``ci`` (``make test``, ``.ci/run``) runs hypothesis's full
counts, every ``@settings(max_examples=...)`` as written; ``dev`` (the default, and ``make test-fast``) draws
:data:`DEV_MAX_EXAMPLES` examples where a test sets no count of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import settings

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
DATA = Path(__file__).resolve().parent / "data"

sys.path.insert(0, str(Path(__file__).resolve().parent / "_tiers"))
import tier_guard  # noqa: E402

#: examples per hypothesis test in the quick profile (hypothesis's default, kept by ``ci``, is 100)
DEV_MAX_EXAMPLES = 20
settings.register_profile("ci", print_blob=True)
settings.register_profile("dev", max_examples=DEV_MAX_EXAMPLES)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


#: Tier markers of tests in files another person is editing now (tests/bank/ is being split; test_committed.py):
#: file -> {test function or "*" for all: markers}. Each moves into its file's pytestmark when the file is free.
MARKS_FROM_HERE = {
    "tests/bank/test_capacity_register.py": {"*": ("swmm",)},  # the bank fixture registers a model (an engine probe)
    "tests/test_golden_documents.py": {"*": ("slow",)},  # every bundled example through the CLI: 35-40 s
    "tests/workflows/test_committed.py": {name: ("swmm",) for name in (
        "test_connections_from_commitments_and_unplaced",
        "test_scenario_edits_put_commitments_in_the_after_run_before_the_applicant",
        "test_commitment_raises_the_after_run_by_its_volume",
        "test_commitments_and_applicant_judged_together_against_the_model_of_record",
        "test_commitments_add_no_engine_run", "test_committed_block_of_the_document",
        "test_report_shows_the_committed_flows", "test_changed_model_makes_the_commitments_untrusted")},
}


def pytest_configure(config):
    if not config.pluginmanager.has_plugin("tier_guard"):
        config.pluginmanager.register(tier_guard, "tier_guard")


@pytest.hookimpl(tryfirst=True)  # before -m deselects
def pytest_collection_modifyitems(config, items):
    for item in items:
        marks = MARKS_FROM_HERE.get(item.nodeid.split("::")[0])
        if marks:
            for name in (*marks.get("*", ()), *marks.get(getattr(item, "originalname", item.name), ())):
                item.add_marker(getattr(pytest.mark, name))


@pytest.fixture
def shared_dir() -> Path:
    """The read-only ../shared folder; tests that need it skip when it is absent."""
    if not SHARED.is_dir():
        pytest.skip("../shared is absent (reference models and regulations are not part of the project)")
    return SHARED


@pytest.fixture(scope="session")
def run_cli():
    """Invoke the capacitysim CLI in-process; returns click's Result (exit_code, stdout, stderr). Arguments may be
    paths or numbers (they are passed as ``str``). Session-scoped (it holds nothing), so module fixtures use it too."""
    from capacitysim.cli import cli

    def _run(*args):
        return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)

    return _run


@pytest.fixture
def dask_scheduler(tmp_path):
    """A real dask scheduler and two single-threaded workers (no nanny) on 127.0.0.1, each its own process:
    ``(address, [worker Popen, worker Popen])``. Per test: a test may kill a worker."""
    sched_file = tmp_path / "scheduler.json"
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                               "--port", "0", "--scheduler-file", str(sched_file), "--no-dashboard"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        deadline, address = time.time() + 60, None
        while address is None and time.time() < deadline:  # the file may exist before it is whole
            try:
                address = json.loads(sched_file.read_text())["address"]
            except (FileNotFoundError, json.JSONDecodeError, KeyError):
                time.sleep(0.1)
        assert address, "the dask scheduler did not write its address within 60 s"
        assert address.startswith("tcp://127.0.0.1:")
        workers = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
                                     "--no-nanny", "--host", "127.0.0.1", "--no-dashboard", "--name", f"w{k}"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for k in range(2)]
        procs += workers
        from distributed import Client

        with Client(address, timeout="30s") as c:
            c.wait_for_workers(2, timeout=60)
        yield address, workers
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


@pytest.fixture
def bank_calendar(monkeypatch):
    """A credit bank calendar for tests that record a history over many days in one run.

    The bank refuses a row dated before the day of the journal's last row (program policy
    ``no_backdating``): a history from 2024 recorded today would be back-dated. This fixture stands in
    for the passing days, at the bank's clock (its only boundary with time): the clock starts on
    2020-01-01 and moves forward to each date a test records (``on``, ``certified_on``, ``as_of``,
    ...), as if each entry were made on its day; never backwards and never past the real today (so a
    date in the future is still refused, and a test going back in time meets the policy). Returns the
    state (``state["now"]``, a UTC datetime).
    """
    import datetime as dt

    from capacitysim.bank import ledger as ledger_mod
    from capacitysim.bank import ledger_core

    state = {"now": dt.datetime(2020, 1, 1, 9, tzinfo=dt.timezone.utc)}
    monkeypatch.setattr(ledger_core, "utc_now", lambda: state["now"])  # the default clock a Ledger reads
    not_future = ledger_mod.Ledger._not_future

    def day_of(self, name, d):
        if d is not None and state["now"].date() < d <= dt.datetime.now(dt.timezone.utc).date():
            state["now"] = dt.datetime.combine(d, dt.time(9), dt.timezone.utc)
        return not_future(self, name, d)

    monkeypatch.setattr(ledger_mod.Ledger, "_not_future", day_of)
    return state
