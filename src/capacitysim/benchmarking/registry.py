"""Registry of benchmark cases (filled by importing ``benchmarks/cases_*.py``)."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

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


@dataclass(frozen=True)
class SpeedCase:
    """A hot path to time: ``setup()`` returns the zero-argument callable that is timed."""

    name: str
    setup: Callable[[], Callable[[], object]]
    description: str
    repeats: int = 7
    tags: tuple[str, ...] = ()


_REFERENCE: dict[str, ReferenceCase] = {}
_SPEED: dict[str, SpeedCase] = {}


def reference_case(name: str, *, expected: dict, tolerance: dict, source: str, version: int = 1, tags=()):
    """Decorator registering ``compute()`` as a reference case."""
    if set(expected) != set(tolerance):
        raise ValueError(f"reference case {name}: expected and tolerance must name the same quantities")

    def deco(fn):
        _REFERENCE[name] = ReferenceCase(name, fn, dict(expected), dict(tolerance), source, version, tuple(tags))
        return fn

    return deco


def speed_case(name: str, *, description: str, repeats: int = 7, tags=()):
    """Decorator registering ``setup()`` as a speed case."""

    def deco(fn):
        _SPEED[name] = SpeedCase(name, fn, description, repeats, tuple(tags))
        return fn

    return deco


def load_cases(folder: Path) -> tuple[dict[str, ReferenceCase], dict[str, SpeedCase]]:
    """Import every ``cases_*.py`` in ``folder`` (once) and return the registered cases."""
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


def select(cases: dict, only: str | None) -> dict:
    """Cases whose name contains ``only`` (shell-style wildcards allowed; commas separate
    alternatives: ``bank,network``)."""
    if not only:
        return cases
    import fnmatch

    patterns = [p if any(ch in p for ch in "*?[") else f"*{p}*" for p in (x.strip() for x in only.split(",")) if p]
    return {k: v for k, v in cases.items() if any(fnmatch.fnmatch(k, p) for p in patterns)}
