"""CLI: ``capacitysim serve``, the simulation service (OGC API - Processes) on uvicorn."""

from __future__ import annotations

import click

from capacitysim.cli import cli


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="Port to listen on.")
@click.option("--data", "data_dir", type=click.Path(file_okay=False), default="capacitysim-data", show_default=True,
              help="Data folder: the SQLite store (jobs, users, uploads, journal), the bank, job results.")
@click.option("--scheduler", default=None, help="Address of a dask.distributed scheduler (tcp://host:8786); default a "
                                                "local cluster. Its workers need the data folder at the same path.")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Worker processes of the local cluster (default: one per core).")
@click.option("--database", envvar="CAPACITYSIM_DATABASE_URL", default=None, show_envvar=True,
              help="The store of users, jobs, uploads and the journal: postgresql://USER@HOST:PORT/DBNAME for a "
                   "PostgreSQL database several servers share, or sqlite:///PATH (default: <data>/service.sqlite). "
                   "The bank stays <data>/bank.sqlite.")
@click.option("--lease-s", type=float, default=None, envvar="CAPACITYSIM_LEASE_S", show_envvar=True,
              help="Service policy job_lease_s: how long this server's lease on its jobs lasts without a heartbeat "
                   "before another server (or its restart) takes them [s] (default 30).")
def serve(host, port, data_dir, scheduler, workers, database, lease_s):
    """Serve capacity demonstrations over HTTP: processes, jobs, users and roles, the bank's sign-off.

    Every request needs `Authorization: Bearer TOKEN` (make one with `capacitysim users add NAME --role ROLE
    --data DIR`). The API is at /processes and /jobs (OGC API - Processes), the bank at /bank, the web pages
    at /ui, the OpenAPI document at /openapi.json.
    """
    from capacitysim.errors import InputError

    try:
        import uvicorn

        from capacitysim.service.app import create_app
    except ImportError as exc:
        raise InputError(f"capacitysim serve needs the service extra ({exc.name} is missing): "
                         "pip install 'capacitysim[service]'") from None

    from capacitysim.service.store import LEASE_S, open_store

    if scheduler and workers:
        raise InputError("give one of --workers (a local cluster) and --scheduler (an existing one)")
    if lease_s is not None and not 0 < lease_s < float("inf"):
        raise InputError(f"--lease-s: {lease_s!r} is not allowed; allowed: a positive number of seconds")
    store = open_store(database, data_dir, lease_s=LEASE_S if lease_s is None else lease_s)
    app = create_app(data_dir, scheduler=scheduler, workers=workers, store=store)
    click.echo(f"capacitysim serve: http://{host}:{port}/ui (API: /processes; data: {data_dir}; store: {store.where})",
               err=True)
    try:
        uvicorn.run(app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=5)
    finally:
        store.close()
