"""Fixtures of the sweep tests: a tiny SWMM network (14 nodes, 30 h) and sweep files written per test."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data"
TINY = DATA / "tiny.inp"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def write_sweep(tmp_path):
    """Write a sweep TOML into tmp_path and return its path."""

    def _write(text: str, name: str = "sweep.toml") -> Path:
        p = tmp_path / name
        p.write_text(text.replace("@TINY@", str(TINY)).replace("@ROOT@", str(ROOT)), encoding="utf-8")
        return p

    return _write
