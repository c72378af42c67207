"""CLI: ``capacitysim serve``, the simulation service (OGC API - Processes) on uvicorn."""

from __future__ import annotations

import click

from capacitysim.cli import cli


def default_base_url(host: str, port: int) -> str:
    """The base of the service's links when ``--base-url`` is not given: ``http://HOST:PORT``, with 127.0.0.1 for
    a wildcard host (0.0.0.0, ::), whose address is no use in a link."""
    if host in ("", "0.0.0.0", "::", "[::]"):
        host = "127.0.0.1"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}"


def log_config(access_log: bool = True) -> dict:
    """uvicorn's logging configuration, with the access log (one line a request: the client's address, the
    request line, the status) and the service's own logger ``capacitysim`` (internal errors, with their
    reference and traceback) on the error stream."""
    import copy

    from uvicorn.config import LOGGING_CONFIG

    cfg = copy.deepcopy(LOGGING_CONFIG)
    cfg["loggers"]["capacitysim"] = {"handlers": ["default"], "level": "INFO", "propagate": False}
    cfg["loggers"]["uvicorn.access"]["level"] = "INFO" if access_log else "WARNING"
    return cfg


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
@click.option("--base-url", default=None, envvar="CAPACITYSIM_BASE_URL", show_envvar=True,
              help="Where clients reach the service, http(s)://HOST[:PORT][/PREFIX]: every link and Location "
                   "header starts with it, never with the request's Host header (default http://HOST:PORT, "
                   "127.0.0.1 for a wildcard --host). A https URL also makes the session cookie Secure.")
@click.option("--limit", "limits", multiple=True, metavar="NAME=VALUE",
              help="A service policy of the limits (repeatable): max_body_bytes, max_upload_bytes, "
                   "max_active_jobs_per_user, max_sync_waits, sync_wait_s, session_idle_s, session_absolute_s, "
                   "auth_failures_max, auth_failures_window_s (docs/workflows/service.md, Security).")
@click.option("--forwarded-allow-ips", default=None,
              help="Addresses of reverse proxies whose X-Forwarded-For / X-Forwarded-Proto are believed "
                   "(comma-separated, as uvicorn's option). Default none: the client's address is the TCP peer's "
                   "(it is what the throttle of failed authentications counts and the journal records).")
@click.option("--access-log/--no-access-log", default=True, show_default=True,
              help="uvicorn's access log on stderr: one line a request (client address, request line, status).")
def serve(host, port, data_dir, scheduler, workers, database, lease_s, base_url, limits, forwarded_allow_ips,
          access_log):
    """Serve capacity demonstrations over HTTP: processes, jobs, users and roles, the bank's sign-off.

    Every request needs `Authorization: Bearer TOKEN` (make one with `capacitysim users add NAME --role ROLE
    --data DIR`), the OpenAPI document at /openapi.json too. The API is at /processes and /jobs (OGC API -
    Processes), the bank at /bank, the web pages at /ui (sign in there with the token).
    """
    from capacitysim.errors import InputError

    try:
        import uvicorn

        from capacitysim.service.app import Limits, create_app, normal_base_url
    except ImportError as exc:
        raise InputError(f"capacitysim serve needs the service extra ({exc.name} is missing): "
                         "pip install 'capacitysim[service]'") from None

    from capacitysim.service.store import LEASE_S, open_store

    if scheduler and workers:
        raise InputError("give one of --workers (a local cluster) and --scheduler (an existing one)")
    if lease_s is not None and not 0 < lease_s < float("inf"):
        raise InputError(f"--lease-s: {lease_s!r} is not allowed; allowed: a positive number of seconds")
    policy = Limits.parse(limits)
    base = normal_base_url(base_url if base_url else default_base_url(host, port))
    store = open_store(database, data_dir, lease_s=LEASE_S if lease_s is None else lease_s)
    app = create_app(data_dir, scheduler=scheduler, workers=workers, store=store, limits=policy, base_url=base)
    click.echo(f"capacitysim serve: {base}/ui (API: {base}/processes; listening on {host}:{port}; data: {data_dir}; "
               f"store: {store.where})", err=True)
    for line in startup_warnings():
        click.echo(line, err=True)
    proxied = bool(forwarded_allow_ips)
    try:
        uvicorn.run(app, host=host, port=port, log_level="info", access_log=access_log,
                    log_config=log_config(access_log), proxy_headers=proxied,
                    forwarded_allow_ips=forwarded_allow_ips if proxied else None, server_header=False,
                    timeout_graceful_shutdown=5)
    finally:
        store.close()


def startup_warnings() -> list[str]:
    """What ``serve`` says before it serves: the engine's operating-system wall (every job records it too, in its
    ``versions``), and a loud warning when it runs as root."""
    import os

    from capacitysim.service.processes import engine_sandbox

    wall = engine_sandbox()
    out = []
    if wall.startswith("unavailable"):
        out.append(f"capacitysim serve: WARNING: no operating-system wall around SWMM runs ({wall}); a model's files are "
                   "confined by the service's model rewriter alone (docs/reference/model-files.md)")
    else:
        out.append(f"capacitysim serve: SWMM runs behind {wall} (writes only in their run folder)")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        bar = "!" * 100
        out += [bar, "capacitysim serve: WARNING: running as root. Every job runs with root's rights over this machine "
                "beyond what the engine's wall confines (the workflow code, the dask workers, the data folder). Run "
                "the service as an unprivileged user that owns only its data folder.", bar]
    return out
