"""Imported at start-up by the Python child processes of a test while the tier guard is on (``tier_guard`` puts
this folder on ``PYTHONPATH``): it logs what this child starts that needs a marker (SWMM's engine child, a dask
cluster, a server, a browser, PostgreSQL), with the test that was running, for the guard to read after the test."""

import os
import sys


def _install():
    log, test = os.environ.get("CAPACITYSIM_TIER_LOG"), os.environ.get("CAPACITYSIM_TIER_TEST")
    if not log or not test:
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        import tier_watch
    finally:
        del sys.path[0]

    def hit(marker, what):
        try:
            with open(log, "a", encoding="utf-8") as f:
                f.write(f"{test}\t{marker}\t{what}\n")
        except OSError:  # the engine's child is walled off (Landlock) from the log: it starts nothing anyway
            pass

    tier_watch.install(hit)


_install()
