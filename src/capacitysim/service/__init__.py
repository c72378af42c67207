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

Data at rest
------------
Everything is under ``--data DIR``: ``service.sqlite`` (users with token hashes, jobs with their inputs, the
SHA-256 of every input file, the versions they ran on, uploads, the append-only journal), ``bank.sqlite`` (the
flow credit bank), ``jobs/<id>/`` (``result.json``, ``report.html``, a sweep's store), ``uploads/<sha256>/``
and ``secret`` (the key of the web forms' CSRF tokens). One server process serves one data folder.

Several service processes sharing one store (not built): SQLite's WAL needs the processes on one host, so a
store shared by servers on several hosts needs a database server. A PostgreSQL store would need: a
``--database postgresql://...`` option and a driver (psycopg 3); the schema of :mod:`~capacitysim.service.store`
with ``SERIAL``/``BIGSERIAL`` keys and the journal's triggers in PL/pgSQL; ``SELECT ... FOR UPDATE SKIP
LOCKED`` for the restart recovery (two servers must not both re-queue a job); the bank on PostgreSQL too
(:class:`capacitysim.bank.Ledger` is SQLite-only today); job folders and uploads on a file system every
server and dask worker mounts at the same path (or an object store).

Service policies (named where the issue is silent)
--------------------------------------------------
``restart_attempts`` (:data:`capacitysim.service.runner.RESTART_ATTEMPTS`)
    A job left ``accepted``/``running`` by a stopped server is re-run at start-up, at most this many runs in
    all; past it, it is ``failed`` with the reason.
``headroom_workers = 0``, ``sweep_workers = 0``
    A headroom or sweep job runs its SWMM runs inside its own dask worker (the service's cluster is the
    parallelism; a job does not start a cluster of its own).
``dismissed jobs keep their files``
    ``DELETE /jobs/{id}`` marks the job dismissed (no results are served) but keeps its folder; a job cited by
    the bank is not dismissed (409): its result is evidence.
``administrator_registration``
    ``capacitysim users add NAME --role administrator`` also registers NAME as bank administrator, on behalf
    of the first registered one (``--registered-by``); the bank's journal names both.
"""
