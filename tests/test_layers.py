"""The import contracts of ``.importlinter`` (the layer table of design.md) hold.

Runs import-linter's ``lint-imports`` in a subprocess, once on the whole file and once per contract,
so a broken contract is named by its own test while the others still report. The hydrology layer
"imports nothing from network, io or workflows" is part of the ``layers`` contract (hydrology sits
below them) and the ``hydrology-pure`` contract keeps out the rest.
"""

from __future__ import annotations

import configparser
import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / ".importlinter"
#: Seconds allowed to one lint-imports run (it takes well under one on this package).
TIMEOUT_S = 120


def _lint_imports() -> str | None:
    """The ``lint-imports`` executable of the interpreter running the tests (its own bin folder first)."""
    name = "lint-imports.exe" if os.name == "nt" else "lint-imports"
    here = Path(sys.executable).parent / name
    if here.is_file():
        return str(here)
    return shutil.which(name)


def _contract_ids() -> list[str]:
    parser = configparser.ConfigParser()
    parser.read(CONFIG, encoding="utf-8")
    prefix = "importlinter:contract:"
    return [s[len(prefix):] for s in parser.sections() if s.startswith(prefix)]


LINT_IMPORTS = _lint_imports()
needs_import_linter = pytest.mark.skipif(
    LINT_IMPORTS is None,
    reason="import-linter is not installed (pip install -e '.[test]' provides lint-imports)",
)


@functools.lru_cache(maxsize=None)
def _config_args() -> tuple[str, ...]:
    """How to name the config file: positionally where lint-imports takes that (newer 2.x, which
    deprecates ``--config``), else ``--config`` (every 2.x)."""
    usage = subprocess.run([LINT_IMPORTS, "--help"], capture_output=True, text=True, timeout=TIMEOUT_S).stdout
    return (str(CONFIG),) if "CONFIG_FILES" in usage else ("--config", str(CONFIG))


def _run(*extra: str) -> subprocess.CompletedProcess:
    # --no-cache: a test run leaves no .import_linter_cache behind; cwd and PYTHONPATH are the repo's
    # so the package imported is the one checked out here
    cmd = [LINT_IMPORTS, "--no-cache", *_config_args(), *extra]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")])))
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)


def test_the_contract_file_names_its_contracts():
    assert CONFIG.is_file(), f"{CONFIG} is missing"
    ids = _contract_ids()
    assert {"layers", "engine-not-scenario", "scenario-not-engine", "hydrology-pure"} <= set(ids), ids


@needs_import_linter
def test_all_import_contracts_are_kept():
    proc = _run()
    assert proc.returncode == 0, f"lint-imports failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"


@needs_import_linter
@pytest.mark.parametrize("contract", _contract_ids())
def test_import_contract_is_kept(contract):
    proc = _run("--contract", contract)
    assert proc.returncode == 0, f"contract {contract!r} is broken (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
