"""Scenario sweeps on dask: many SWMM capacity runs, or thousands of vectorized detention/runoff designs.

How a sweep runs
----------------
* **SWMM sweeps** (``kind = "swmm"``, :mod:`.network_tasks`): one task per scenario, each a real
  SWMM run through :func:`capacitysim.network.engine.run_inp` (itself a fresh child process with
  ``THREADS 1`` and ``OMP_NUM_THREADS=1``, so the engine's global state, its OpenMP threads and the
  file descriptor that ``[RDII]`` runs leak all die with the child: ../shared/reference/swmm-notes.md).
  A run *before* (the model under the scenario's storm after the 6 h spin-up, no connection, no
  remediation: the edits of :func:`capacitysim.workflows.demonstration.scenario_edits`, as
  ``capacitysim capacity``) is one task per distinct storm depth; every scenario task depends on
  its baseline and computes the verdict after vs before. Tasks run on a ``dask.distributed``
  cluster (:mod:`.runner`): by default a ``LocalCluster(processes=True, threads_per_worker=1)``
  with one worker per core, or an existing scheduler (``scheduler=ADDRESS``) that receives the
  same tasks unchanged.
* The network (the ``.inp`` text, its basins and the storm) is shipped to the workers **once**
  (``client.scatter(..., broadcast=True)``); each worker writes it to its own temporary folder the
  first time a task needs it and keeps the parsed model for the following tasks. In the driver,
  every input file is parsed once: the model (and the site and rule set of a detention sweep)
  that :func:`~capacitysim.io.sweep_files.load_sweep` parsed to check the grid is the one the run
  uses (:meth:`~capacitysim.io.sweep_files.SweepSpec.network_model`,
  :meth:`~capacitysim.io.sweep_files.SweepSpec.site_and_rules`).
* **Detention and runoff sweeps** are numpy-vectorized (:mod:`.vector_tasks`): the flat scenario
  index is a :func:`dask.array.arange` chunked by ``chunk_size``, and each block is computed in one
  call (stage-storage tables, release rates and the orifice bisection for all designs of the block
  at once, through the numba routing kernel) -- one task per block, never one per scenario.
* **Before anything runs** (:func:`run_sweep`, :mod:`.plan`): a sweep above
  :data:`LARGE_SWMM_SCENARIOS` (SWMM) or :data:`LARGE_VECTOR_SCENARIOS` (vectorized) scenarios is
  refused unless ``yes_large`` (``--yes-large``), with its size and an estimated run time
  (:func:`run_seconds_estimate`); above :data:`capacitysim.io.sweep_files.MAX_SCENARIOS` it is
  refused whatever the options (memory of the store). The store's path is never an input, a
  symbolic link or a file (:func:`check_store_path`), and a ``scheduler`` must answer
  (:func:`check_scheduler_address`) before the store is created.

Results
-------
A Zarr store (:mod:`capacitysim.io.sweep_store`, the backend) holding a flat ``scenario``
dimension (C order over the grid) and the grid's values; :func:`open_results` returns an
:class:`xarray.Dataset` with one dimension per swept parameter (``product``) or ``scenario``
(``zip``). Results are written by the driver as scenarios finish (with at most a few tasks per
worker in flight, so memory stays flat); ``status`` (0 missing, 1 done, 2 failed) is written last,
so a sweep killed at any moment resumes (``resume=True``) by recomputing exactly the scenarios
whose status is 0; until then a missing scenario has no verdict (never "fail": :func:`open_results`,
:func:`summarize`). A scenario that raises (a SWMM error, a bad combination such as remediation in a
basin without RDII) is stored with status 2 and its message; the sweep goes on. Tasks of a worker
that dies are rescheduled by the dask scheduler (its ``allowed-failures``). SWMM and detention
stores also hold, per scenario, the criterion and element of its first failed check
(``failed_criterion``, ``failed_element``; "" when none failed), which :func:`summarize`
(:mod:`.summary`) names as the check that governs a capacity. The HTML report of a store is
:func:`capacitysim.report.sweep.write_summary_report`.

Modules
-------
=========================  ======================================================================
:mod:`.plan`               size limits, run-time estimate, store-path and scheduler checks
:mod:`.network_tasks`      the network bundle and the SWMM scenario tasks
:mod:`.vector_tasks`       the payload and the blocks of detention and runoff sweeps
:mod:`.runner`             :func:`run_sweep`: the store written in this process or on dask
:mod:`.summary`            :func:`summarize` and its words
=========================  ======================================================================

The public names of these modules and of :mod:`capacitysim.io.sweep_store` are importable from
here; private ones (``_local_model``...) are imported from their module.

References
----------
.. [1] Dask Development Team (2016). Dask: Library for dynamic task scheduling; dask.distributed
   (``Client.scatter``, ``as_completed``, ``LocalCluster``).
.. [2] Binghamton-Johnson City Sewer Use Rules ch. 174, I/I Offset Program (capacity
   demonstration; I/I remediation basins); 15 RCNY § 31-03 (NYC release rate, detention).
"""

from __future__ import annotations

from capacitysim.io.sweep_files import sweep_inputs
from capacitysim.io.sweep_store import (
    CHECK_CHARS,
    DETENTION_VARS,
    DONE,
    FAILED,
    MESSAGE_CHARS,
    MISSING,
    RUNOFF_VARS,
    VERDICTS,
    create_store,
    failed_record,
    missing_indices,
    open_results,
    result_variables,
)
from capacitysim.workflows.sweep.network_tasks import (
    NetworkBundle,
    baseline_key,
    make_bundle,
    run_after_task,
    run_baseline_task,
    run_network,
    run_scenario_task,
    scenario_edits,
    scenario_storm,
    summarize_swmm,
    swmm_verdict,
)
from capacitysim.workflows.sweep.plan import (
    DETENTION_SECONDS_PER_ROW,
    LARGE_SWMM_SCENARIOS,
    LARGE_VECTOR_SCENARIOS,
    RUNOFF_SECONDS_PER_ROW,
    SCHEDULER_CONNECT_TIMEOUT_S,
    SCHEDULER_PROBE_TIMEOUT_S,
    SCHEDULER_SCHEMES,
    SECONDS_PER_YEAR,
    SWMM_RUN_OVERHEAD_S,
    SWMM_SECONDS_PER_NODE,
    check_scheduler_address,
    check_store_path,
    check_sweep_size,
    duration_text,
    large_limit,
    run_seconds_estimate,
)
from capacitysim.workflows.sweep.runner import (
    IN_FLIGHT_PER_WORKER,
    LOCAL_CLUSTER_CONFIG,
    SweepRun,
    default_workers,
    local_cluster,
    outcome_line,
    run_one,
    run_sweep,
    sweep_outcome,
)
from capacitysim.workflows.sweep.summary import (
    bound_text,
    governing_text,
    missing_note,
    summarize,
    value_key,
    verdict_map_axes,
)
from capacitysim.workflows.sweep.vector_tasks import (
    VectorPayload,
    block_task,
    detention_block,
    make_payload,
    runoff_block,
)

#: The public names of the package's modules and of capacitysim.io.sweep_store (see the table above).
__all__ = [
    "CHECK_CHARS",
    "DETENTION_SECONDS_PER_ROW",
    "DETENTION_VARS",
    "DONE",
    "FAILED",
    "IN_FLIGHT_PER_WORKER",
    "LARGE_SWMM_SCENARIOS",
    "LARGE_VECTOR_SCENARIOS",
    "LOCAL_CLUSTER_CONFIG",
    "MESSAGE_CHARS",
    "MISSING",
    "RUNOFF_SECONDS_PER_ROW",
    "RUNOFF_VARS",
    "SCHEDULER_CONNECT_TIMEOUT_S",
    "SCHEDULER_PROBE_TIMEOUT_S",
    "SCHEDULER_SCHEMES",
    "SECONDS_PER_YEAR",
    "SWMM_RUN_OVERHEAD_S",
    "SWMM_SECONDS_PER_NODE",
    "VERDICTS",
    "NetworkBundle",
    "SweepRun",
    "VectorPayload",
    "baseline_key",
    "block_task",
    "bound_text",
    "check_scheduler_address",
    "check_store_path",
    "check_sweep_size",
    "create_store",
    "default_workers",
    "detention_block",
    "duration_text",
    "failed_record",
    "governing_text",
    "large_limit",
    "local_cluster",
    "make_bundle",
    "make_payload",
    "missing_indices",
    "missing_note",
    "open_results",
    "outcome_line",
    "result_variables",
    "run_after_task",
    "run_baseline_task",
    "run_network",
    "run_one",
    "run_scenario_task",
    "run_seconds_estimate",
    "run_sweep",
    "runoff_block",
    "scenario_edits",
    "scenario_storm",
    "summarize",
    "summarize_swmm",
    "sweep_inputs",
    "sweep_outcome",
    "swmm_verdict",
    "value_key",
    "verdict_map_axes",
]
