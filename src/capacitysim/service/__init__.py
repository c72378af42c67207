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
    Jobs, users, uploads, the journal and the servers' leases, in transactions: one SQL text for both backends.
db
    Where the store lives (``--database``): the SQLite file under the data folder, or a PostgreSQL database
    (psycopg 3, a connection pool) that several server processes share.
runner
    Jobs on dask (a local cluster, or ``--scheduler`` for a ``dask.distributed`` one); the server's lease
    (heartbeats) and the restart recovery.
auth
    Bearer tokens (stored as SHA-256 only, compared in constant time) and roles.
app
    The FastAPI application: ``/processes``, ``/jobs``, ``/uploads``, ``/bank`` and the web pages.

Data at rest
------------
The store (users with token hashes, jobs with their inputs, the SHA-256 of every input file, the versions they
ran on, uploads, the append-only journal, the servers and their leases) is ``<data>/service.sqlite`` by
default, or the PostgreSQL database of ``--database postgresql://...``. Everything else is under ``--data
DIR``: ``bank.sqlite`` (the flow credit bank), ``documents/<id>/`` (what is served of a job: ``result-<attempt>.json``,
``report-<attempt>.html``; never written by an engine run), ``jobs/<id>/`` (the job's staged inputs, runs, temporary
folders, progress, a sweep's store), ``uploads/<sha256>/`` and ``secret`` (the key of the web forms' CSRF tokens).
A job's model reads only the files uploaded with it, and its SWMM runs write only in their run folders, behind
Landlock where the kernel offers it (docs/reference/model-files.md); the security of the HTTP face is in
docs/workflows/service.md ("Security").

Several service processes sharing one store (``--database postgresql://...``)
-----------------------------------------------------------------------------
What the PostgreSQL store covers: users, jobs, uploads' records and the journal, with the SQLite store's
schema (identity keys, the journal's append-only triggers in PL/pgSQL, the schema version in ``meta``) and the
same transactions; every server sees every job and user at once (a user revoked on one is refused by all).
Each server registers itself and renews a lease (policy ``job_lease_s``); the restart recovery takes only the
jobs of servers whose lease has expired, ``SELECT ... FOR UPDATE SKIP LOCKED``, so a live server's job is never
re-queued nor failed and two servers never take the same job; a job's end is recorded only from the attempt
that holds it.

What it does not cover, so several servers need:

* the same data folder at the same path: the bank stays SQLite (``<data>/bank.sqlite``;
  :class:`capacitysim.bank.Ledger` is SQLite-only), and SQLite's WAL needs every writer on one host, so
  servers sharing the bank must run on one host (on several hosts, the bank's endpoints must be served by one
  of them); job folders and uploads are read by path, so they must be on a file system every server and dask
  worker mounts at the same path (the CSRF ``secret`` too, for the web pages);
* PostgreSQL itself: its backups, replication and access control are the operator's.

Service policies (named where the issue is silent)
--------------------------------------------------
``restart_attempts`` (:data:`capacitysim.service.runner.RESTART_ATTEMPTS`)
    A job left ``accepted``/``running`` by a stopped server is re-run at start-up, at most this many runs in
    all; past it, it is ``failed`` with the reason.
``job_lease_s = 30`` (:data:`capacitysim.service.store.LEASE_S`; ``serve --lease-s``)
    A server's lease on its jobs, renewed every third of it. A job whose server has not renewed its lease for
    this long is taken by another server sharing the store (or the server's restart): re-queued, or failed
    past ``restart_attempts``. A server that stops ends its lease at once; a restarted server also takes at once
    the jobs of a server of its host whose process is gone.
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
