"""capacitysim: defensible sewer capacity demonstrations.

TR-55/SCS hydrology (vectorized numpy), SWMM network runs (pyswmm), and the rules of the
Binghamton-Johnson City I/I offset program and NYC DEP (15 RCNY ch. 18 and ch. 31).

The public API, one function per workflow (:mod:`capacitysim.api`)::

    capacity_demonstration   SWMM before/after runs judged element by element (BJC H(1))
    design_detention         NYC detention design of one site (15 RCNY § 31-03)
    design_detention_variants   the same engine over many variants at once
    spdes_check              plant flow record against its SPDES limit (15 RCNY § 18-37(b))
    connection_credits       credits a new connection must withdraw (BJC section F)
    run_sweep, open_sweep    scenario sweeps on dask into Zarr, read back as xarray

Each result has ``to_dict()``: the document the CLI prints with ``--json``. The names are loaded on
first use, so ``import capacitysim`` stays light (the CLI starts fast).
"""

from capacitysim.version import __version__

#: The public API (loaded from :mod:`capacitysim.api` on first use).
__all__ = ["capacity_demonstration", "connection_credits", "design_detention", "design_detention_variants", "headroom",
           "metered_credit", "open_sweep", "quantify_credits", "run_sweep", "spdes_check"]


def __getattr__(name):
    if name in __all__:
        from capacitysim import api

        return getattr(api, name)
    raise AttributeError(f"module 'capacitysim' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)
