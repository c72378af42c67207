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
    # support.TEST_ARGS: max_active_jobs_per_user raised (test_load queues 200 jobs of two users at once)
    srv = Server(data, free_port(), workers=2, tokens=dict(out["tokens"]), names=out["names"], flows=out["flows"])
    srv.tokens["engineer2"] = add_user(data, "Second Engineer", "engineer")
    give_flows(data, "Second Engineer", out["flows"])
    srv.start()
    yield srv
    srv.stop()


def give_flows(data, name: str, flows: str) -> None:
    """The demo's recent flow record (``flows``: ``upload:<sha256>``) as an upload of ``name`` too (uploads belong to
    their uploader), the same bytes."""
    from capacitysim.service.demo import DEMO_USERS, add_upload
    from capacitysim.service.store import Store

    store = Store(data / "service.sqlite")
    try:
        admin = store.user_by_name(DEMO_USERS["administrator"])
        rec = store.upload(flows.removeprefix("upload:"), admin["id"])
        add_upload(store, data, rec["filename"], Path(rec["path"]).read_text(), store.user_by_name(name))
    finally:
        store.close()
