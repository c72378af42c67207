"""Workflows compose the pure layers, the engines and the stores; each returns one result document.

=====================================  ==========================================================
:func:`run_demonstration`              capacity demonstration (:mod:`.demonstration`)
:func:`design_site`                    detention design of one site (:mod:`.detention`)
:func:`design_batch`                   the detention engine for n variants (:mod:`.detention`)
:func:`run_check`                      SPDES flow-limit check (:mod:`.spdes`)
:func:`annual_report`                  the credit bank's annual report (:mod:`.bank_reports`)
:func:`run_sweep`                      scenario sweeps (:mod:`.sweep`)
=====================================  ==========================================================

The names load their module on first use (a SWMM or dask import costs about a second).
"""

_HOMES = {
    "run_demonstration": "demonstration", "Demonstration": "demonstration",
    "design_site": "detention", "design_batch": "detention", "DetentionResult": "detention", "DetentionBatch": "detention",
    "run_check": "spdes", "SpdesCheck": "spdes",
    "annual_report": "bank_reports",
    "run_sweep": "sweep", "open_results": "sweep", "summarize": "sweep",
}
__all__ = sorted(_HOMES)


def __getattr__(name):
    if name in _HOMES:
        import importlib

        return getattr(importlib.import_module(f"capacitysim.workflows.{_HOMES[name]}"), name)
    raise AttributeError(f"module 'capacitysim.workflows' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)
