"""Benchmark regression runs: named reference cases with expected values and tolerances, counts of
work (higher is worse), and speed cases timed interleaved with a reference as ratios, stored with
every sample and compared against a baseline by a stated statistical rule with three outcomes.

The case definitions live in the project's ``benchmarks/cases_*.py`` files; this package is the
machinery (registry, runner, statistics, comparison, history report).
"""

from capacitysim.benchmarking.registry import (
                                               CountCase,
                                               Paired,
                                               ReferenceCase,
                                               SkipCase,
                                               SpeedCase,
                                               count_case,
                                               reference_case,
                                               speed_case,
)

__all__ = ["CountCase", "Paired", "ReferenceCase", "SkipCase", "SpeedCase", "count_case", "reference_case", "speed_case"]
