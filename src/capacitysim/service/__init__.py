"""``capacitysim serve``: the simulation service (OGC API - Processes, part 1), with users, roles and the bank.

The HTTP face of capacitysim, beside :mod:`capacitysim.cli` and :mod:`capacitysim.api` at the top of the
layers: it calls the same workflow functions as the CLI (:mod:`capacitysim.service.tasks`) and a job's
results are the same JSON document the CLI prints with ``--json``.

Modules
-------
processes
    The process catalogue: ids, JSON Schema of inputs and outputs, validation of a request's inputs
    (bundled names and uploads resolved to files, every file's SHA-256).
tasks
    What a dask worker runs for a job: the workflow call of the matching CLI command.
store
    Jobs, users, uploads and the journal in one SQLite file under the data folder (transactions).
runner
    Jobs on dask (a local cluster, or ``--scheduler`` for a ``dask.distributed`` one); restart recovery.
auth
    Bearer tokens (stored as SHA-256 only, compared in constant time) and roles.
app
    The FastAPI application: ``/processes``, ``/jobs``, ``/uploads``, ``/bank`` and the web pages.
"""
