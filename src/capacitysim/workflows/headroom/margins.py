"""A continuous measure of a capacity run: how much of each criterion's margin a change uses.

:func:`capacitysim.rules.capacity.judge` answers pass or fail per element; a search for the largest
connection needs to know *how far* from failing a run is. :func:`margin_ratios` applies the same
criteria to the same two result datasets and returns, for every judged element and criterion, the
share of the margin the change used::

    r = (after - before) / (L - before)

where ``L`` is the value beyond which :func:`~capacitysim.rules.capacity.judge` fails the element
(its limit, or ``before`` + the criterion's tolerance when the element already was beyond the
limit). ``r > 1`` is a failure of that element (up to the strict/non-strict edge), ``r`` near 0 an
element the change does not reach. The keys name the criterion and the element (``"peak|PLANT"``,
``"dD|P0012"``, ...: :data:`KINDS`); :func:`check_key` gives the key of a :class:`Check`, so the
failed check that governs a run is the one with the largest ratio.

The ratios are computed in :mod:`capacitysim.rules.capacity` (:func:`~capacitysim.rules.capacity.margin_ratios`)
from the same :func:`~capacitysim.rules.capacity.capacity_limits` that ``judge`` fails elements on: each
rule is stated once. This module adds what the search needs around them: the key of a check, the
largest ratios.
"""

from __future__ import annotations

from capacitysim.rules.capacity import LIMIT_KINDS, check_key, margin_ratios  # noqa: F401 - the search's measure, re-exported
from capacitysim.rules.verdict import Check

#: Kinds of keys: the criterion of :func:`~capacitysim.rules.capacity.judge` each stands for.
KINDS = {k: v[0] for k, v in LIMIT_KINDS.items()}


def top_ratios(ratios: dict[str, float], k: int) -> dict[str, float]:
    """The ``k`` largest ratios (the elements nearest to failing)."""
    return dict(sorted(ratios.items(), key=lambda kv: -kv[1])[:k])
