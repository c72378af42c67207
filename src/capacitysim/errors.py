"""One exception hierarchy for capacitysim.

Anything a user can fix raises :class:`InputError` (or a subclass) with a message that names the
field, the value and what is allowed; the CLI turns it into one line on stderr and exit code 2.
Operations refused by a rule (not enough credits, a prohibited connection) raise
:class:`RefusedError`, which the CLI reports with exit code 3.
"""


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
    """The simulation engine failed on input that passed validation."""

    exit_code = 1


class CapacitysimWarning(UserWarning):
    """Something was clamped or approximated as the method prescribes; the result stands."""
