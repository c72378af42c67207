"""The README's flow credit bank tour runs as written, on any date (the brief: every README example works).

The block under "The flow credit bank" is run command by command in a fresh folder (``models`` linked to the
bundled models, ``out/`` made), through a real shell with the project's ``capacitysim`` on PATH. Placeholders are
filled as a reader would: ``<TXN>`` with the pending sign-off of ``bank pending --json``, ``<HASH>`` with ``bank
head --json``. Every command must exit 0. Real SWMM (one capacity run of synthetic-500), real SQLite.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.swmm]

ROOT = Path(__file__).resolve().parents[1]


def _block(title: str) -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(title)
    body = text[text.index("```\n", start) + 4:]
    body = body[:body.index("```")]
    commands, cur = [], ""
    for line in body.splitlines():
        line = re.sub(r"\s+#\s.*$", "", line)  # a trailing comment (two spaces and a hash)
        if line.rstrip().endswith("\\"):
            cur += line.rstrip()[:-1] + " "
            continue
        cur += line
        if cur.strip():
            commands.append(cur.strip())
        cur = ""
    return commands


def test_the_readme_bank_tour_runs_as_written(tmp_path):
    (tmp_path / "models").symlink_to(ROOT / "src" / "capacitysim" / "data" / "models")
    (tmp_path / "out").mkdir()
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("CAPACITYSIM_ACTOR", None)
    commands = _block("**The flow credit bank")
    assert any("register" in c for c in commands) and any("--committed" in c for c in commands)

    def run(cmd: str) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", "-c", cmd], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)

    for cmd in commands:
        if cmd.startswith("export "):
            name, value = cmd[len("export "):].split("=", 1)
            env[name] = shlex.split(value)[0]
            continue
        if "<TXN>" in cmd:
            pending = json.loads(run("capacitysim bank --db bank.sqlite pending --json").stdout)["pending"]
            cmd = cmd.replace("<TXN>", pending[-1]["txn"])
        if "<HASH>" in cmd:
            cmd = cmd.replace("<HASH>", json.loads(run("capacitysim bank --db bank.sqlite head --json").stdout)["head"])
        r = run(cmd)
        assert r.returncode == 0, f"{cmd}\nexit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
    with_a1 = json.loads(run("capacitysim bank --db bank.sqlite commitments --plant NY0024414 --json").stdout)
    assert [f["application"] for f in with_a1["flows"]] == ["A-1"]


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__, "-q"])
