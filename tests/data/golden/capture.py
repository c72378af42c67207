"""Capture the golden documents: ``python tests/data/golden/capture.py ROOT OUT [NAME ...]`` runs every command of
commands.json from the repository ROOT (``PYTHONPATH=ROOT/src``) and writes OUT/NAME.json (or only the NAMEs given after OUT) (the command's
stdout, byte for byte). tests/test_golden_documents.py runs the same commands through :func:`run`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
COMMANDS = {k: v for k, v in json.loads((HERE / "commands.json").read_text()).items() if not k.startswith("_")}


def run(name: str, root: Path, tmp: Path) -> tuple[int, str]:
    """Run the command ``name`` of commands.json from ``root`` with the fresh folder ``tmp``: (exit code, stdout)."""
    spec = COMMANDS[name]
    env = {**os.environ, "PYTHONPATH": str(Path(root) / "src"), "CAPACITYSIM_ACTOR": "Jane Q. Clerk",
           "TQDM_DISABLE": "1"}

    def call(argv):
        argv = [a.replace("{tmp}", str(tmp)) for a in argv]
        return subprocess.run([sys.executable, "-m", "capacitysim", *argv], cwd=root, env=env,
                              capture_output=True, text=True)

    for argv in spec.get("setup", ()):
        done = call(argv)
        if done.returncode not in (0, 1):  # 1: a verdict other than pass (a sweep with failing scenarios)
            raise RuntimeError(f"{name}: setup {argv} exited {done.returncode}: {done.stderr[-2000:]}")
    done = call(spec["argv"])
    return done.returncode, done.stdout


def main(root: str, out: str, *names: str) -> None:
    Path(out).mkdir(parents=True, exist_ok=True)
    for name, spec in COMMANDS.items():
        if names and name not in names:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            code, text = run(name, Path(root).resolve(), Path(tmp))
        if code != spec["exit"]:
            raise SystemExit(f"{name}: exit {code}, expected {spec['exit']}")
        (Path(out) / f"{name}.json").write_text(text)
        print(name, code, len(text))


if __name__ == "__main__":
    main(*sys.argv[1:])
