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
