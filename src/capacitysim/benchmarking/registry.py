"""Registry of benchmark cases (filled by importing ``benchmarks/cases_*.py``)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from capacitysim.errors import InputError


@dataclass(frozen=True)
class ReferenceCase:
    """A numeric case with a published or stored answer.

    ``compute()`` returns ``{quantity: value}``; each quantity has an expected value and an
    absolute tolerance. ``version`` changes when the case's definition changes (a new version is
    not compared against an old baseline value).
    """

    name: str
    compute: Callable[[], dict[str, float]]
    expected: dict[str, float]
    tolerance: dict[str, float]
    source: str
    version: int = 1
    tags: tuple[str, ...] = ()

    def evaluate(self) -> dict:
        values = {k: float(v) for k, v in self.compute().items()}
        missing = sorted(set(self.expected) - set(values))
        if missing:
            raise InputError(f"reference case {self.name}: compute() gave no value for {', '.join(missing)}")
        errors = {k: values[k] - self.expected[k] for k in self.expected}
        passed = all(abs(errors[k]) <= self.tolerance[k] for k in self.expected)
        return {
            "version": self.version,
            "source": self.source,
            "values": values,
            "expected": dict(self.expected),
            "tolerance": dict(self.tolerance),
            "passed": passed,
        }


class SkipCase(Exception):
    """Raised by a case's ``setup()``/``compute()`` when it cannot run here (a corpus that is absent,
    a hook not filled yet): the run records ``skipped`` with the reason, not a failure."""


@dataclass(frozen=True)
class Paired:
    """What a speed case's ``setup()`` returns when its ratio is not to the reference kernel: the
    timed call, its own reference call (timed interleaved with it) and what the reference is; ``close`` (if any)
    stops what the setup started (a dask cluster, a server) once the case is measured, so it never runs beside the
    cases after it."""

    case: Callable[[], object]
    reference: Callable[[], object]
    reference_description: str
    close: Callable[[], object] | None = None


#: Bases of a speed ratio: ``"cpu"`` (CPU time of this process and of its finished children, for
#: cases that do their work on one thread at a time; a busy machine delays them but does not make
#: them use more CPU) or ``"wall"`` (elapsed time: cases that wait on disks, or run threads).
BASES = ("cpu", "wall")


@dataclass(frozen=True)
class SpeedCase:
    """A hot path to time against a reference, interleaved, as a ratio.

    ``setup()`` returns the zero-argument callable that is timed (its ratio is to the reference
    kernel) or a :class:`Paired` (its ratio is to its own reference). Samples are taken until the
    interval of the median ratio is narrow enough (``target_rel``), the time budget ``budget_s`` is
    spent or ``max_samples`` are taken, and never fewer than ``min_samples``. ``version`` changes when
    the case's definition changes (a new version is not compared against an old baseline).
    """

    name: str
    setup: Callable[[], object]
    description: str
    min_samples: int = 8
    basis: str = "cpu"
    max_samples: int = 40
    budget_s: float = 20.0
    version: int = 1
    tags: tuple[str, ...] = ()

    @property
    def repeats(self) -> int:  # the former name of min_samples
        return self.min_samples


@dataclass(frozen=True)
class CountCase:
    """A count of work (SWMM runs per node...), deterministic, where higher is worse.

    ``compute()`` returns ``{quantity: value}``; a value above the baseline's by more than its
    ``tolerance`` (absolute, default 0) is a regression, a lower one an improvement.
    """

    name: str
    compute: Callable[[], dict[str, float]]
    description: str
    tolerance: dict[str, float]
    version: int = 1
    tags: tuple[str, ...] = ()

    def evaluate(self) -> dict:
        values = {k: float(v) for k, v in self.compute().items()}
        return {"version": self.version, "description": self.description, "values": values,
                "tolerance": {k: float(self.tolerance.get(k, 0.0)) for k in values}, "worse": "higher"}


_REFERENCE: dict[str, ReferenceCase] = {}
_SPEED: dict[str, SpeedCase] = {}
_COUNT: dict[str, CountCase] = {}


def reference_case(name: str, *, expected: dict, tolerance: dict, source: str, version: int = 1, tags=()):
    """Decorator registering ``compute()`` as a reference case."""
    if set(expected) != set(tolerance):
        raise ValueError(f"reference case {name}: expected and tolerance must name the same quantities")

    def deco(fn):
        _REFERENCE[name] = ReferenceCase(name, fn, dict(expected), dict(tolerance), source, version, tuple(tags))
        return fn

    return deco


def speed_case(name: str, *, description: str, repeats: int = 8, basis: str = "cpu", max_samples: int = 40,
               budget_s: float = 20.0, version: int = 1, tags=()):
    """Decorator registering ``setup()`` as a speed case (``repeats``: the minimum number of samples)."""
    if basis not in BASES:
        raise ValueError(f"speed case {name}: basis must be one of {', '.join(BASES)}; got {basis!r}")

    def deco(fn):
        _SPEED[name] = SpeedCase(name, fn, description, int(repeats), basis, max(int(max_samples), int(repeats)),
                                 float(budget_s), version, tuple(tags))
        return fn

    return deco


def count_case(name: str, *, description: str, tolerance: dict | None = None, version: int = 1, tags=()):
    """Decorator registering ``compute()`` as a count case (higher is worse)."""

    def deco(fn):
        _COUNT[name] = CountCase(name, fn, description, dict(tolerance or {}), version, tuple(tags))
        return fn

    return deco


def load_cases(folder: Path) -> tuple[dict[str, ReferenceCase], dict[str, SpeedCase]]:
    """Import every ``cases_*.py`` in ``folder`` (once) and return the registered reference and
    speed cases (the count cases: :func:`count_cases`)."""
    if not folder.is_dir():
        raise InputError(f"benchmarks folder {folder} not found")
    for path in sorted(folder.glob("cases_*.py")):
        mod_name = f"capacitysim_benchmarks_{path.stem}"
        if mod_name in sys.modules:
            continue
        spec = importlib.util.spec_from_file_location(mod_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = module
        spec.loader.exec_module(module)
    return dict(_REFERENCE), dict(_SPEED)


def count_cases() -> dict[str, CountCase]:
    """The registered count cases (after :func:`load_cases`)."""
    return dict(_COUNT)


def select(cases: dict, only: str | None) -> dict:
    """Cases whose name contains ``only`` (shell-style wildcards allowed; commas separate
    alternatives: ``bank,network``)."""
    if not only:
        return cases
    import fnmatch

    patterns = [p if any(ch in p for ch in "*?[") else f"*{p}*" for p in (x.strip() for x in only.split(",")) if p]
    return {k: v for k, v in cases.items() if any(fnmatch.fnmatch(k, p) for p in patterns)}
