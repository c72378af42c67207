"""Benchmark regression runs: named reference cases with expected values and tolerances, and speed
cases timed against a fixed reference kernel, stored as JSON and compared against a baseline.

The case definitions live in the project's ``benchmarks/cases_*.py`` files; this package is the
machinery (registry, runner, comparison, history report).
"""

from capacitysim.benchmarking.registry import ReferenceCase, SpeedCase, reference_case, speed_case

__all__ = ["ReferenceCase", "SpeedCase", "reference_case", "speed_case"]
