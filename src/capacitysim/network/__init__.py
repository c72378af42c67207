"""SWMM networks: load and validate ``.inp`` files, basins from the network graph, scenario edits,
runs in child processes (:mod:`capacitysim.network.engine`) and results as xarray.

Submodules are imported on demand (swmmio costs about 1 s to import).
"""

from capacitysim.network.engine import RunFiles, link_series, node_series, read_results, run_inp, system_series

__all__ = ["RunFiles", "run_inp", "read_results", "node_series", "link_series", "system_series"]
