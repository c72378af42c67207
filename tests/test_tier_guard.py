"""The tier guard (tests/_tiers/tier_guard.py) fails a test that starts SWMM, dask, a server, a browser or PostgreSQL
without its marker, when it is on (``make test-fast``), and nothing else: an inner pytest run on tests written here.

The starts are real ``Popen`` calls and connections whose arguments name what they start (``python -c pass
_child.py``): the guard judges a start by what it is asked to start, so the inner tests stay fast."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

TIERS = Path(__file__).resolve().parent / "_tiers"

INNER = '''
import subprocess, sys
import pytest

PY = sys.executable


def test_unmarked_engine():
    subprocess.run([PY, "-c", "pass", "capacitysim/network/_child.py"], check=True)


@pytest.mark.swmm
def test_marked_engine():
    subprocess.run([PY, "-c", "pass", "capacitysim/network/_child.py"], check=True)


def test_child_starts_a_dask_scheduler():
    # the name is joined in the child, so only the child's own start names a dask scheduler
    code = "import subprocess, sys; subprocess.run([sys.executable, '-c', 'pass', 'distributed.' + 'cli.dask_scheduler'])"
    subprocess.run([PY, "-c", code], check=True)


def test_swallowed_postgres_connection():
    import psycopg
    try:
        psycopg.connect("postgresql://nobody@127.0.0.1:9/none", connect_timeout=1).close()
    except Exception:
        pass


@pytest.fixture(scope="module")
def a_server():
    subprocess.run([PY, "-c", "pass", "uvicorn"], check=True)


def test_unmarked_server_fixture(a_server):
    pass


def test_pure():
    subprocess.run([PY, "-c", "pass"], check=True)
'''


def _inner(tmp_path, tier: str | None) -> tuple[int, dict[str, str], str]:
    """Exit code, {test: "passed" or what its failure or error says}, the output."""
    (tmp_path / "test_inner.py").write_text(INNER, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CAPACITYSIM_TIER", "CAPACITYSIM_TEST_TIER"))}
    env["PYTHONPATH"] = str(TIERS)  # tier_guard; and its sitecustomize.py once the guard is on
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # schemathesis, hypothesis...: seconds of start-up the inner run needs not
    if tier:
        env["CAPACITYSIM_TEST_TIER"] = tier
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "tier_guard", "-p", "no:cacheprovider", "-o", "addopts=",
                        "-q", "--junitxml", str(tmp_path / "r.xml"), "--rootdir", str(tmp_path),
                        str(tmp_path / "test_inner.py")], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300)
    results = {}
    for case in ET.parse(tmp_path / "r.xml").getroot().iter("testcase"):
        bad = [e for e in case if e.tag in ("failure", "error")]
        results[case.get("name")] = " ".join(f"{e.tag}: {e.get('message', '')} {e.text or ''}" for e in bad) or "passed"
    return r.returncode, results, r.stdout + r.stderr


def test_guard_fails_each_unmarked_start_and_names_its_marker(tmp_path):
    code, res, out = _inner(tmp_path, "fast")
    assert code == 1, out
    assert res["test_marked_engine"] == res["test_pure"] == "passed", out
    for test, marker in [("test_unmarked_engine", "swmm"), ("test_child_starts_a_dask_scheduler", "dask"),
                         ("test_swallowed_postgres_connection", "postgres"), ("test_unmarked_server_fixture", "server")]:
        assert f"without its marker: add @pytest.mark.{marker}" in res[test], (test, out)
    assert res["test_unmarked_server_fixture"].startswith("error:"), out  # the fixture's start fails its setup
    assert "in a child process" in res["test_child_starts_a_dask_scheduler"], out
    assert len(res) == 6, out


def test_guard_is_off_outside_the_fast_tier(tmp_path):
    code, res, out = _inner(tmp_path, None)
    assert code == 0 and set(res.values()) == {"passed"} and len(res) == 6, out
