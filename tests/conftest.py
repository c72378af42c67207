"""Shared fixtures: paths to ../shared (skipping when absent), a CLI runner."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture
def shared_dir() -> Path:
    """The read-only ../shared folder; tests that need it skip when it is absent."""
    if not SHARED.is_dir():
        pytest.skip("../shared is absent (reference models and regulations are not part of the project)")
    return SHARED


@pytest.fixture
def run_cli():
    """Invoke the capacitysim CLI in-process; returns click's Result (exit_code, stdout, stderr)."""
    from capacitysim.cli import cli

    def _run(*args: str):
        return CliRunner().invoke(cli, list(args), catch_exceptions=False)

    return _run


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
