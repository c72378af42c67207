"""Jobs on dask: a local cluster by default, or a ``dask.distributed`` scheduler (``--scheduler``).

The runner submits :func:`capacitysim.service.tasks.run_job` for each accepted job and a monitor thread
follows them: it reads each attempt's progress file (``running``, percentage) and, when a future ends,
writes the result document and report into the job's folder (atomically) and the job's final record
into the store (one transaction). At start-up :meth:`Runner.recover` re-queues every job a previous
server left ``accepted`` or ``running`` (service policy ``restart_attempts``: a job is run at most that
many times; past it, it is marked ``failed`` with the reason), so no job stays ``running`` for ever.

Several servers may share one store (PostgreSQL): each registers itself and a lease thread renews its
lease every third of ``job_lease_s`` (:data:`capacitysim.service.store.LEASE_S`), then takes the jobs of
servers whose lease has expired (a server killed while the others live: its jobs are re-run by one of
them) and stops following a job another server has taken from it (its own record of it would be refused:
the store takes a job's end only from the attempt that holds it). Recovery never touches a job of a live
server.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from pathlib import Path

from capacitysim.files import atomic_write_text
from capacitysim.service import tasks

#: Service policy ``restart_attempts``: how many times a job is started in all (the first run and the
#: re-runs after server restarts) before it is marked failed. Every process is deterministic and
#: writes only in its job's folder, so a re-run gives the same document.
RESTART_ATTEMPTS = 2
#: How often the monitor looks at the running jobs [s].
POLL_S = 0.2
#: Time a job's own task gets past ``max_job_s`` to fail by itself before the monitor fails it [s].
JOB_GRACE_S = 60.0


class Runner:
    """Submits jobs to dask and records how they end.

    Parameters
    ----------
    store : capacitysim.service.store.Store
    data_dir : path
        The service's data folder (jobs in ``jobs/<id>/``).
    scheduler : str, optional
        Address of a ``dask.distributed`` scheduler; default a local cluster of ``workers`` processes.
    workers : int, optional
        Worker processes of the local cluster (default: one per core).
    """

    def __init__(self, store, data_dir, *, scheduler: str | None = None, workers: int | None = None):
        self.store = store
        self.data_dir = Path(data_dir)
        self.scheduler = scheduler
        self.workers = workers
        self.client = None
        self.cluster = None
        self._futures: dict[str, tuple[int, object]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None
        self._events: dict[str, threading.Event] = {}
        self._seen: dict[str, tuple] = {}  # the last progress recorded of each job (written only when it changes)
        self._lease_thread = None
        self._started: dict[str, float] = {}  # when each followed job was sent to dask (monotonic)

    # --- life cycle ----------------------------------------------------------------------------------
    def start(self) -> None:
        from distributed import Client

        if self.scheduler:
            from capacitysim.workflows.sweep.plan import check_scheduler_address

            check_scheduler_address(self.scheduler)
            self.client = Client(self.scheduler, timeout="10s")
        else:
            from capacitysim.workflows.sweep.runner import default_workers, local_cluster

            self.cluster = local_cluster(self.workers or default_workers())
            self.client = Client(self.cluster)
        self.store.register_server()
        self.recover(startup=True)
        self._thread = threading.Thread(target=self._monitor, name="capacitysim-jobs", daemon=True)
        self._thread.start()
        self._lease_thread = threading.Thread(target=self._lease, name="capacitysim-lease", daemon=True)
        self._lease_thread.start()

    def stop(self) -> None:
        self._stop.set()
        for t in (self._thread, self._lease_thread):
            if t is not None:
                t.join(timeout=5)
        try:  # its unfinished jobs are recovered at once by the next server (or another live one)
            self.store.release_server()
        except Exception:  # noqa: BLE001 - the store is unreachable: the lease expires by itself
            pass
        for closer in (self.client, self.cluster):
            if closer is not None:
                try:
                    closer.close()
                except Exception:  # noqa: BLE001 - shutting down
                    pass

    def recover(self, *, startup: bool = False) -> tuple[list[str], list[str]]:
        """Re-queue here (or fail, past :data:`RESTART_ATTEMPTS`) the jobs of servers that are gone (a previous
        server of this one, or another whose lease expired)."""
        requeued, failed = self.store.recover(RESTART_ATTEMPTS, startup=startup)
        for job_id in requeued:
            self.submit(job_id)
        return requeued, failed

    def _lease(self) -> None:
        """Renew this server's lease, take the jobs of servers whose lease expired, drop jobs taken from it."""
        every_s = self.store.lease_s / 3
        while not self._stop.wait(every_s):
            try:
                self.store.heartbeat()
                self.recover()
                with self._lock:
                    mine = {job_id: attempt for job_id, (attempt, _) in self._futures.items()}
                for job_id in self.store.jobs_moved(mine):
                    self.cancel(job_id)
            except Exception as exc:  # noqa: BLE001 - a database away for a moment: try again at the next beat
                logging.getLogger(__name__).warning("capacitysim serve: lease heartbeat or recovery failed: %s: %s",
                                                    type(exc).__name__, exc)

    # --- jobs ----------------------------------------------------------------------------------------
    def job_dir(self, job_id: str) -> Path:
        return self.data_dir / "jobs" / job_id

    def submit(self, job_id: str) -> None:
        """Send a job to dask; a job dask does not take is failed at once with the reason."""
        job = self.store.job(job_id)
        d = self.job_dir(job_id)
        try:
            d.mkdir(parents=True, exist_ok=True)
            fut = self.client.submit(tasks.run_job, job["process"], job["inputs"], job["files"], str(d), job["attempts"],
                                     bank=str(self.data_dir / "bank.sqlite"), key=f"job-{job_id}-{job['attempts']}",
                                     pure=False)
        except Exception as exc:  # noqa: BLE001 - no cluster, a full disk: the job says so instead of waiting
            self._fail(job_id, job["attempts"], exc)
            return
        with self._lock:
            self._futures[job_id] = (job["attempts"], fut)
            self._events.setdefault(job_id, threading.Event())
            self._started[job_id] = time.monotonic()

    def documents_dir(self, job_id: str) -> Path:
        """Where the documents the service serves for a job are kept (``<data>/documents/<id>/``): never the job's
        folder, where its engine runs write."""
        return self.data_dir / "documents" / job_id

    def cancel(self, job_id: str, why: str = "") -> None:
        """Stop a job: its dask task is cancelled and its stop file written, which kills its running SWMM children
        within :data:`capacitysim.network.engine.STOP_POLL_S` seconds (:func:`capacitysim.network.engine.stop_runs_when`),
        on whichever worker they run. ``why`` (``dismissed by NAME``) goes into the stop file: the stopped runs'
        error says it. Who may cancel is decided before (:func:`capacitysim.service.jobs.cancel_job`)."""
        try:
            f = tasks.stop_file(self.job_dir(job_id))
            if f.parent.is_dir():
                atomic_write_text(f, why or "the job was dismissed")
        except OSError:  # the job never got a folder: nothing of it runs
            pass
        with self._lock:
            item = self._futures.pop(job_id, None)
            ev = self._events.get(job_id)
        if item is not None:
            item[1].cancel()
        if ev is not None:
            ev.set()

    def wait(self, job_id: str, timeout_s: float | None = None) -> dict:
        """Block until the job is final (for synchronous execution); returns its record."""
        with self._lock:
            ev = self._events.setdefault(job_id, threading.Event())
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            job = self.store.job(job_id)
            if job["status"] in ("successful", "failed", "dismissed"):
                return job
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return job
            ev.wait(timeout=1.0 if left is None else min(left, 1.0))

    def _monitor(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                items = list(self._futures.items())
            for job_id, (attempt, fut) in items:
                try:
                    if fut.done():
                        self._finish(job_id, attempt, fut)
                    elif time.monotonic() - self._started.get(job_id, time.monotonic()) > tasks.MAX_JOB_S + JOB_GRACE_S:
                        self._overtime(job_id, attempt)
                    else:
                        self._progress(job_id, attempt)
                except Exception as exc:  # noqa: BLE001 - the monitor never dies; the job records why
                    self._fail(job_id, attempt, exc)
            self._stop.wait(POLL_S)

    def _overtime(self, job_id: str, attempt: int) -> None:
        """A job past the longest-job limit whose task did not end by itself: stopped and failed with the reason."""
        self.cancel(job_id, f"the job passed the longest-job limit of {tasks.MAX_JOB_S:,.0f} s (service policy max_job_s)")
        self.store.finish(job_id, attempt, status="failed",
                          message=f"stopped: the job passed the longest-job limit of {tasks.MAX_JOB_S:,.0f} s "
                                  "(service policy max_job_s)",
                          error={"type": "error", "message": f"longer than max_job_s = {tasks.MAX_JOB_S:g} s"})
        self._done(job_id)

    def _fail(self, job_id: str, attempt: int, exc: BaseException) -> None:
        """Record a job the service itself could not run or finish (failed, with the reason)."""
        err = tasks.internal_error(exc, f"job {job_id} attempt {attempt}")
        try:
            self.store.finish(job_id, attempt, status="failed", message=f"service error: {err['message']}", error=err)
        except Exception:  # noqa: BLE001 - the store is unavailable: the start-up recovery will end the job
            pass
        self._done(job_id)

    def _progress(self, job_id: str, attempt: int) -> None:
        p = tasks.progress_file(self.job_dir(job_id), attempt)
        try:
            info = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        state = (attempt, int(info.get("progress", 0)), str(info.get("message", ""))[:500])
        if self._seen.get(job_id) != state:
            self.store.set_running(job_id, *state)
            self._seen[job_id] = state

    def _done(self, job_id: str) -> None:
        with self._lock:
            self._futures.pop(job_id, None)
            self._seen.pop(job_id, None)
            self._started.pop(job_id, None)
            ev = self._events.pop(job_id, None)
        if ev is not None:
            ev.set()

    def _finish(self, job_id: str, attempt: int, fut) -> None:
        if fut.status == "cancelled":
            self._done(job_id)
            return
        try:
            out = fut.result()
        except Exception as exc:  # noqa: BLE001 - a worker that died, a task that raised outside the workflow
            out = {"error": tasks.internal_error(exc, f"job {job_id} attempt {attempt} (its worker)")}
        self._progress(job_id, attempt)  # a job that ran between two polls still passes through 'running'
        if "error" in out:
            err = out["error"]
            self.store.finish(job_id, attempt, status="failed", message=err["message"], error=err)
        else:
            # each attempt writes its own files, and the store records them only if this attempt still holds the
            # job: a stale attempt (its server's lease lapsed, another server re-ran the job) never replaces the
            # document whose SHA-256 the store, and the bank citing it, hold
            d = self.documents_dir(job_id)  # not the job's folder, where its engine runs write
            text = out["document_json"]
            result = d / f"result-{attempt}.json"
            atomic_write_text(result, text + "\n")
            report = None
            if out.get("report_html") is not None:
                report = atomic_write_text(d / f"report-{attempt}.html", out["report_html"])
            doc = json.loads(text)
            verdict = doc.get("verdict") if isinstance(doc, dict) else None
            taken = self.store.finish(job_id, attempt, status="successful",
                                      message=f"verdict {verdict}" if verdict else "done", verdict=verdict,
                                      result_path=str(result),
                                      result_sha256=hashlib.sha256((text + "\n").encode()).hexdigest(),
                                      report_path=None if report is None else str(report))
            if not taken:
                for f in (result, report):
                    if f is not None:
                        Path(f).unlink(missing_ok=True)
        self._done(job_id)
