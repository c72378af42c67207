"""One exception hierarchy for capacitysim.

Anything a user can fix raises :class:`InputError` (or a subclass) with a message that names the
field, the value and what is allowed; the CLI turns it into one line on stderr and exit code 2.
Operations refused by a rule (not enough credits, a prohibited connection) raise
:class:`RefusedError`, which the CLI reports with exit code 3.
"""

import os


class CapacitysimError(Exception):
    """Base class of every error capacitysim raises on purpose."""

    exit_code = 1


class InputError(CapacitysimError, ValueError):
    """Bad input a user can fix: a value out of range, an unknown name, a malformed file."""

    exit_code = 2


class DataFileError(InputError):
    """A data file (storm, site, sweep, model, flow record) is missing or malformed."""


class ModelError(InputError):
    """A SWMM model fails validation (dangling references, missing cross sections...)."""


class RefusedError(CapacitysimError):
    """A well-formed request that the rules refuse (insufficient credits, missing document)."""

    exit_code = 3


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
