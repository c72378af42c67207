"""A scenario sweep as a process (``capacitysim sweep run``, :func:`capacitysim.run_sweep`, the service's ``sweep``):
:func:`capacitysim.workflows.sweep.run_sweep` into a Zarr store."""

from __future__ import annotations

import os
from pathlib import Path

from capacitysim.processes.base import Input, NullProgress, Process
from capacitysim.processes.common import companions, file_schema


def _is_spec(value) -> bool:
    from capacitysim.io.sweep_files import SweepSpec

    return isinstance(value, SweepSpec)


class Sweep(Process):
    id = "sweep"
    title = "Scenario sweep"
    description = ("Every scenario of a sweep file, into a Zarr store in the job's folder (run inside the job's worker: "
                   "service policy sweep_workers = 0).")
    command = "capacitysim sweep run"
    companion_input = "sweep_files"
    writes_work_dir = True
    stages = (("started", 0), ("inputs-checked", 10), ("swept", 95))
    inputs = (
        Input("sweep", file_schema("sweep", "Sweep TOML"), required=True, cli="SWEEP_FILE", file="sweep", typed=_is_spec),
        Input("sweep_files", companions("sweep file")),
        Input("out", {"type": "string"}, cli="--out", service=False, typed=lambda v: hasattr(v, "__fspath__")),
        Input("workers", {"type": "integer", "minimum": 0}, cli="--workers", service=False),
        Input("scheduler", {"type": "string"}, cli="--scheduler", service=False),
        Input("resume", {"type": "boolean"}, cli="--resume", service=False),
        Input("yes_large", {"type": "boolean"}, cli="--yes-large", service=False),
    )

    def spec(self, inputs):
        """The sweep file, read (once: kept in the inputs)."""
        from capacitysim.io.sweep_files import load_sweep

        if not _is_spec(inputs.sweep):
            inputs["sweep"] = load_sweep(inputs.sweep)
        return inputs.sweep

    def run(self, inputs, progress=None, work_dir=None):
        from capacitysim.workflows.sweep import check_scheduler_address, check_sweep_size, default_workers, run_sweep

        progress = progress or NullProgress()
        spec = self.spec(inputs)
        workers, scheduler = inputs.workers, inputs.scheduler
        check_sweep_size(spec, bool(inputs.yes_large), None if scheduler else (workers if workers is not None else default_workers()))
        if scheduler:  # reached before the first progress step (a bar) and the store
            check_scheduler_address(scheduler)
        progress.stage("inputs-checked", "sweep file read")
        out = inputs.out if inputs.out is not None else Path(work_dir) / "sweep.zarr"

        def cb(done, failed, total):
            progress.step(done, total, f"{done} of {total} scenarios ({failed} failed)", failed=failed)

        run = run_sweep(spec, os.fspath(out), workers=workers, scheduler=scheduler, resume=bool(inputs.resume),
                        progress=cb, yes_large=bool(inputs.yes_large))
        progress.stage("swept", "every scenario run")
        return run
