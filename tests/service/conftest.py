"""Fixtures of tests/service: one real server on 127.0.0.1 for the session (see support.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # tests import support (pytest runs with --import-mode=importlib)

from support import Server, add_user, free_port, seeded  # noqa: E402


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    data = tmp_path_factory.mktemp("service")
    out = seeded(data)
    srv = Server(data, free_port(), workers=2, tokens=dict(out["tokens"]), names=out["names"], flows=out["flows"])
    srv.tokens["engineer2"] = add_user(data, "Second Engineer", "engineer")
    srv.start()
    yield srv
    srv.stop()


