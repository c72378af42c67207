"""One exception hierarchy for capacitysim.

Anything a user can fix raises :class:`InputError` (or a subclass) with a message that names the
field, the value and what is allowed; the CLI turns it into one line on stderr and exit code 2.
Operations refused by a rule (not enough credits, a prohibited connection) raise
:class:`RefusedError`, which the CLI reports with exit code 3.
"""

import os


class CapacitysimError(Exception):
    """Base class of every error capacitysim raises on purpose.

    Each class carries how every adapter reports it (issue 27, errors once): ``exit_code`` (the CLI),
    ``http_status`` and ``title`` (the service's problem document, RFC 9457), ``kind`` (a failed job's error
    type). :func:`report_of` reads them; nothing else maps an error.
    """

    exit_code = 1
    http_status = 500
    title = "Error"
    kind = "error"


class InputError(CapacitysimError, ValueError):
    """Bad input a user can fix: a value out of range, an unknown name, a malformed file."""

    exit_code = 2
    http_status = 400
    title = "Bad input"
    kind = "input"


class DataFileError(InputError):
    """A data file (storm, site, sweep, model, flow record) is missing or malformed."""


class ModelError(InputError):
    """A SWMM model fails validation (dangling references, missing cross sections...)."""


class RefusedError(CapacitysimError):
    """A well-formed request that the rules refuse (insufficient credits, missing document)."""

    exit_code = 3
    http_status = 409
    title = "Refused"
    kind = "refused"


class BusyError(CapacitysimError):
    """A shared resource is held by another writer for longer than the wait allowed: try again later."""

    exit_code = 1
    http_status = 503
    title = "Unavailable"
    kind = "busy"


class EngineError(CapacitysimError):
    """The simulation engine failed on input that passed validation.

    ``run_files`` are the message's mentions of a run's own files (its report, its copy of the model):
    ``(text naming the file, the same text without it, the file's path)``. A run in a temporary folder
    removes the folder before the error reaches its reader, so the message names such a file only while
    it exists (issue 26, class 8): it is rendered when read, not when raised.
    """

    exit_code = 1

    def __init__(self, *args, run_files=()):
        super().__init__(*args)
        self.run_files = tuple(run_files)

    def __str__(self) -> str:
        text = super().__str__()
        for named, unnamed, path in self.run_files:
            if not os.path.exists(path):
                text = text.replace(named, unnamed)
        return text

    def __reduce__(self):
        # across processes (a service job, a dask worker) with its run files, whatever a subclass's __init__ takes
        return _rebuild_engine_error, (type(self), self.args, dict(self.__dict__))


def _rebuild_engine_error(cls, args, state):
    exc = cls.__new__(cls)
    Exception.__init__(exc, *args)
    exc.__dict__.update(state)
    return exc


class CapacitysimWarning(UserWarning):
    """Something was clamped or approximated as the method prescribes; the result stands."""


#: The HTTP status of each error kind (a failed job's ``error.type``), from the classes that carry them.
STATUS_OF_KIND = {"input": InputError.http_status, "refused": RefusedError.http_status,
                  "busy": BusyError.http_status, "error": CapacitysimError.http_status}


def report_of(exc: BaseException) -> dict:
    """How an error is reported, the one mapping of the CLI, the service's handlers and its jobs.

    ``{"exit_code", "http_status", "title", "kind"}`` from the error's class (:class:`CapacitysimError`);
    anything else is an internal error (exit 1, HTTP 500, kind ``internal``).
    """
    if isinstance(exc, CapacitysimError):
        return {"exit_code": exc.exit_code, "http_status": exc.http_status, "title": exc.title, "kind": exc.kind}
    return {"exit_code": 1, "http_status": 500, "title": "Internal error", "kind": "internal"}
