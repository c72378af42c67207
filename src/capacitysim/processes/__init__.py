"""The workflows as processes: one :class:`~capacitysim.processes.base.Process` per workflow, the faces adapters.

Each module holds one process (its metadata, inputs, ``run``, document and report); :data:`PROCESSES` lists
their classes in the order the service's catalogue shows them. The command line (``capacitysim.cli``), the public
API (``capacitysim.api``) and the service (``capacitysim.service``) are written against these, never against the
workflow functions directly: adding a workflow is one module here and a line in :data:`PROCESSES`, then its
command and API function (docs/adding-a-workflow.md).
"""

from __future__ import annotations

import functools
import importlib

from capacitysim.processes.base import FieldInputError, Input, Inputs, Process

#: The processes, by id: module and class, in the catalogue's order (imported when first asked for).
PROCESSES = {
    "capacity-demonstration": ("capacity", "CapacityDemonstration"),
    "detention-design": ("detention", "DetentionDesign"),
    "spdes-check": ("spdes", "SpdesCheck"),
    "headroom": ("headroom", "Headroom"),
    "credits-quantification": ("credits", "CreditsQuantification"),
    "metered-credit": ("metered", "MeteredCredit"),
    "capacity-register": ("register", "CapacityRegister"),
    "sweep": ("sweep", "Sweep"),
}


@functools.lru_cache(maxsize=None)
def get(process_id: str) -> Process:
    """The process of that id (one instance per interpreter)."""
    module, cls = PROCESSES[process_id]
    return getattr(importlib.import_module(f"capacitysim.processes.{module}"), cls)()


def registry() -> dict[str, Process]:
    """Every process, by id, in the catalogue's order."""
    return {pid: get(pid) for pid in PROCESSES}


__all__ = ["PROCESSES", "FieldInputError", "Input", "Inputs", "Process", "get", "registry"]
