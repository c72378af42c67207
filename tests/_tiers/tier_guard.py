"""The guard of the test tiers (a pytest plugin): a test that starts SWMM, a dask cluster, a server, a browser or
PostgreSQL carries the marker of it (``swmm``, ``dask``, ``server``, ``browser``, ``postgres``; pyproject.toml).

``make test-fast`` deselects those markers and sets ``CAPACITYSIM_TEST_TIER=fast``; the guard is then on, and a
test (or a fixture it uses) that starts one of them without its marker fails, naming the marker to add. A missing
marker would otherwise only make the fast tier slow, or need a Chromium or PostgreSQL a contributor may not have.

What it sees (:mod:`tier_watch`): in the pytest process, every new process (``subprocess.Popen``: the engine's
``_child.py``, a ``python -c`` script using pyswmm, a dask scheduler or worker, ``capacitysim serve``, ``initdb``,
Playwright's driver...) and in-process starts of ``pyswmm.Simulation``, ``distributed.Client``/``LocalCluster``,
``uvicorn.Server`` and ``psycopg`` connections; in the Python child processes of a test (``python -m capacitysim
capacity`` runs SWMM in a grandchild) the same, through ``sitecustomize.py`` of this folder put on
``PYTHONPATH``, written to a log read after the test.

``tests/conftest.py`` registers it; ``tests/test_tier_guard.py`` runs it with ``-p tier_guard``.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tier_watch  # noqa: E402

#: the environment variable that turns the guard on (``make test-fast`` sets it to ``fast``)
ENV_TIER = "CAPACITYSIM_TEST_TIER"
#: for child processes (sitecustomize.py): the log they write, and the test running now
ENV_LOG = "CAPACITYSIM_TIER_LOG"
ENV_TEST = "CAPACITYSIM_TIER_TEST"
HERE = Path(__file__).resolve().parent


class TierGuardError(RuntimeError):
    """A start without its marker (raised where it happens, and the test's report says it too)."""


def _message(nodeid: str, marker: str, what: str, where: str = "") -> str:
    return (f"{nodeid} {tier_watch.MARKERS[marker]}{where} ({what}) without its marker: add @pytest.mark.{marker} "
            f"(or pytestmark = [pytest.mark.{marker}]); make test-fast leaves such tests out")


class _Guard:
    def __init__(self):
        self.item = None
        self.seen: dict[str, list[str]] = {}  # nodeid -> messages
        self.log = Path(tempfile.mkdtemp(prefix="capacitysim-tiers-")) / "children.log"
        self.log.touch()

    def hit(self, marker: str, what: str) -> None:
        item = self.item
        if item is None or item.get_closest_marker(marker) is not None:
            return
        msg = _message(item.nodeid, marker, what)
        self.seen.setdefault(item.nodeid, []).append(msg)
        raise TierGuardError(msg)

    def in_children(self, item) -> list[str]:
        out = []
        for line in self.log.read_text(encoding="utf-8", errors="replace").splitlines():
            test, marker, what = (line.split("\t", 2) + ["", ""])[:3]
            if test == item.nodeid and marker in tier_watch.MARKERS and item.get_closest_marker(marker) is None:
                out.append(_message(item.nodeid, marker, what, " in a child process"))
        return out


_GUARD: _Guard | None = None


def pytest_configure(config):
    global _GUARD
    if os.environ.get(ENV_TIER) != "fast" or _GUARD is not None:
        return
    _GUARD = _Guard()
    tier_watch.install(_GUARD.hit)
    os.environ[ENV_LOG] = str(_GUARD.log)
    os.environ["PYTHONPATH"] = os.pathsep.join([str(HERE), *filter(None, [os.environ.get("PYTHONPATH")])])


def pytest_unconfigure(config):
    global _GUARD
    if _GUARD is not None:
        tier_watch.uninstall()
        _GUARD = None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if _GUARD is None:
        yield
        return
    _GUARD.item = item
    os.environ[ENV_TEST] = item.nodeid
    try:
        yield
    finally:
        _GUARD.item = None
        os.environ[ENV_TEST] = ""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if _GUARD is None:
        return
    report = outcome.get_result()
    msgs = _GUARD.seen.pop(item.nodeid, []) if call.when != "teardown" else []
    if call.when == "call":
        msgs += _GUARD.in_children(item)
    if msgs:
        report.outcome = "failed"
        report.longrepr = "tier guard:\n" + "\n".join(dict.fromkeys(msgs))
