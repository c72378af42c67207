"""One check record and one verdict vocabulary for every workflow (capacity, detention, SPDES, sweeps).

A :class:`Check` is one criterion applied to one element: the value before and after (or the value of
a design), the limit, the unit, whether it passed, and the citation of the rule or policy it applies.
Verdicts are the words ``pass``, ``fail`` and ``untrusted``; where a verdict is stored as a number (a
sweep's Zarr store, a benchmark case), :data:`VERDICT_CODE` gives the one coding used everywhere.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: The verdicts a workflow gives: the design or connection passes every check, fails one, or the run
#: cannot be trusted (a mass balance or an injected volume off; the checks are then not a verdict).
VERDICTS = ("pass", "fail", "untrusted")
#: Numeric coding of a verdict, the same in sweeps, headroom stores and benchmarks: pass = 1, fail = 0,
#: untrusted = 2, and -1 where no verdict was computed (a missing or failed scenario, a runoff row).
VERDICT_CODE = {"": -1, "fail": 0, "pass": 1, "untrusted": 2}
#: The inverse of :data:`VERDICT_CODE`.
VERDICT_NAME = {v: k for k, v in VERDICT_CODE.items()}
#: Words of :attr:`Check.result`: ``confirm`` for a condition the inputs cannot show (the reviewer confirms).
RESULTS = ("pass", "fail", "confirm")


def _num(x):
    if isinstance(x, bool) or x is None or isinstance(x, str):
        return x
    x = float(x)
    return x if math.isfinite(x) else None


@dataclass(frozen=True)
class Check:
    """One criterion applied to one element.

    Attributes
    ----------
    criterion : str
        What is required, in words (``"max d/D <= 0.8 (gravity sewers)"``).
    element : str
        The element judged: a node, link or outfall id, ``"before run"``, ``"orifice"``, ``"storage system"``,
        the plant.
    before, after : float or str or None
        The value in the run before and after the change [unit]; a design check (detention) has only
        ``after``, the design's value.
    limit : float or str or None
        The limit the value is held to [unit].
    unit : str
        Unit of ``before``, ``after`` and ``limit``.
    passed : bool or None
        Whether the check passes; None when the inputs cannot show it (the reviewer must confirm).
    citation : str
        The regulation section, method or named policy the criterion applies.
    kind : str
        Kind of element: ``node``, ``link``, ``storage``, ``pump``, ``outfall``, ``run``, ``design``, ``plant``.
    requirement, value : str
        The requirement and the value as a reviewer reads them (formatted with their units), when the
        numbers alone do not say it (detention and SPDES checks).
    """

    criterion: str
    element: str
    before: float | str | None
    after: float | str | None
    limit: float | str | None
    unit: str
    passed: bool | None
    citation: str = ""
    kind: str = ""
    requirement: str = ""
    value: str = ""

    @property
    def result(self) -> str:
        """``pass``, ``fail`` or ``confirm`` (``passed`` None)."""
        return "confirm" if self.passed is None else ("pass" if self.passed else "fail")

    def to_dict(self) -> dict:
        """The JSON record: every attribute (non-finite numbers as null) and ``result``."""
        return {"criterion": self.criterion, "element": self.element, "kind": self.kind,
                "before": _num(self.before), "after": _num(self.after), "limit": _num(self.limit), "unit": self.unit,
                "passed": self.passed, "result": self.result, "requirement": self.requirement, "value": self.value,
                "citation": self.citation}


def verdict_from_checks(checks, untrusted: bool = False) -> str:
    """The one verdict rule of every workflow: ``untrusted`` when the run is not trusted, else ``fail`` when any
    check failed, else ``pass``.

    A check the reviewer must confirm (``passed`` None) does not fail the verdict; it is listed as a condition.
    A condition of trust that cannot be confirmed (an injected volume the engine's statistics cannot show, a
    change within the model's noise downstream of the connection) is not a check: the caller counts it in
    ``untrusted`` (:func:`capacitysim.workflows.judgement.judge_change`).
    """
    if untrusted:
        return "untrusted"
    return "fail" if any(c.passed is False for c in checks) else "pass"
