"""The bare engine, the reference of the cases that wrap it: ``swmm.toolkit.solver.swmm_run`` in a fresh
interpreter -- the call pyswmm's ``Simulation.execute()`` makes -- with ``OMP_NUM_THREADS=1``, on inputs prepared as
capacitysim runs them (``THREADS 1``, external files made absolute:
:func:`capacitysim.network.inp_text.prepare_inp_text`).

References
----------
.. [1] pyswmm, ``Simulation.execute`` (github.com/pyswmm/pyswmm, ``pyswmm/simulation.py``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BARE_ENGINE = "import sys; from swmm.toolkit import solver; solver.swmm_run(sys.argv[1], sys.argv[2], sys.argv[3])"


def bare_runs(inputs: list[Path], folder: Path) -> None:
    """The bare engine on every input at once (one child process each, as a demonstration runs its two); the
    report and output files go to ``folder``."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    procs = []
    for k, inp in enumerate(inputs):
        procs.append(subprocess.Popen([sys.executable, "-c", BARE_ENGINE, str(inp), str(folder / f"bare{k}.rpt"),
                                       str(folder / f"bare{k}.out")], env=env, cwd=folder,  # scratch files there
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
    errors = [p.communicate()[1] for p in procs]
    for p, err in zip(procs, errors):
        if p.returncode != 0:
            raise RuntimeError(f"bare engine run failed (exit {p.returncode}): {err.decode(errors='replace')[-300:]}")
