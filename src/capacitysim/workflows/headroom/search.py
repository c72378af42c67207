"""The search of one node's largest passing connection: a bracket closed with few runs.

A :class:`NodeSearch` holds what is known of one node under one storm (the screen's estimate, the
runs made and their verdicts) and says which flow to run next (:meth:`NodeSearch.next_gpd`) until
the bracket closes: a flow that passes (``passing_gpd``) and one that fails (``failing_gpd``),
both real runs, with ``failing / passing <= 1 + tolerance``.

Method ``"screen"`` (the default):

1. The first run is placed just below the estimate (``estimate / sqrt(1 + t)``): the screen's
   (:mod:`.screen`) times the correction its group learned (:attr:`NodeSearch.factor`).
2. Every run returns, besides its verdict, the share of the margin each judged element used
   (:func:`~capacitysim.workflows.headroom.margins.margin_ratios`, the largest ones). Each element
   extrapolates to where its share reaches 1: through the origin from one run, by a secant in
   log-log (``r = a g^b``) or, when a share is not positive, a linear regula falsi from two (the
   two runs nearest to 1, on both sides when there are). The estimate is the smallest of them, so
   a run tells where every element fails, and the governing element may change from run to run.
3. The next run is the one that closes the bracket if the estimate is right: ``passing x (1 + t)``
   when the estimate lies within that of the largest passing run, ``failing / (1 + t)`` when it lies
   within that of the smallest failing run, else just above or below the estimate, on the side that
   leaves the narrower bracket. Each run stays strictly inside the bracket; when two runs in a row
   do not halve its width (in log), the next one bisects it (geometric mean).
4. ``min_gpd`` and ``max_gpd`` bound the search: a node failing at ``min_gpd`` reports 0 (it fails
   with any connection), a node passing at ``max_gpd`` is ``bounded``.

Method ``"bisection"`` is the brute force the screen is measured against: a run at ``max_gpd``,
then geometric bisection between ``min_gpd`` and the smallest failing flow.

Flows are rounded to :data:`SIGNIFICANT_DIGITS` significant digits (a figure a reviewer can type
into ``capacitysim capacity --connect NODE=GPD``); the bracket's ratio is aimed at
``(1 + t) (1 - 1e-3)`` so that rounding never widens it past ``1 + t``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

#: Significant digits of every flow run (and so of every figure reported).
SIGNIFICANT_DIGITS = 4
#: Largest step of the screen method away from the one side known, when the estimate is wild.
MAX_STEP = 30.0
#: Exponents of the log-log secant outside this range are clipped.
B_MIN, B_MAX = 0.2, 5.0

#: Keys of ``governing_check``: ``value`` is the check's value in the failing run; ``stopped_hr`` the hour
#: that run stopped at once its failure was certain (None: it ran to its end, the value is a complete run's).
GOVERNING_KEYS = ("criterion", "element", "value", "limit", "unit", "stopped_hr")

STATUSES = ("running", "ok", "bounded", "zero", "untrusted", "error")


def round_sig(x: float, digits: int = SIGNIFICANT_DIGITS) -> float:
    """``x`` rounded to ``digits`` significant digits."""
    if not (math.isfinite(x) and x > 0):
        return x
    e = math.floor(math.log10(x)) - digits + 1
    return round(x / 10.0 ** e) * 10.0 ** e if e > 0 else round(x, -e)


@dataclass
class Point:
    """One run of a search: the flow [gpd], the verdict and what the run says of each element."""

    gpd: float
    verdict: str  # pass | fail | untrusted | error
    ratios: dict = field(default_factory=dict)
    governing: dict | None = None
    message: str = ""
    #: hours simulated by the run, and the hour it stopped at when its failure was certain (None: ran to its end)
    simulated_hr: float | None = None
    stopped_hr: float | None = None
    #: untrusted only because its changes downstream are within the model's numerical noise
    #: (:attr:`capacitysim.workflows.judgement.Judgement.within_noise_only`): not shown to pass
    within_noise: bool = False


def element_estimate(pts: list[tuple[float, float]]) -> float:
    """Flow [gpd] at which one element's share of its margin reaches 1, from its (flow, share) points."""
    pts = [(g, r) for g, r in pts if math.isfinite(r) or r == math.inf]
    if not pts:
        return math.inf
    if any(r == math.inf for _, r in pts):
        return min(g for g, r in pts if r == math.inf) * 0.999
    if len(pts) == 1:
        g, r = pts[0]
        return g / r if r > 0 else math.inf
    below = [p for p in pts if p[1] < 1.0]
    above = [p for p in pts if p[1] >= 1.0]
    if below and above:
        p1 = max(below, key=lambda p: (p[1], p[0]))
        p2 = min(above, key=lambda p: (p[1], -p[0]))
    else:
        def closeness(p):
            return abs(math.log(p[1])) if p[1] > 0 else math.inf
        ranked = sorted(pts, key=lambda p: (closeness(p), -p[0]))
        p1, p2 = ranked[0], ranked[1]
    (g1, r1), (g2, r2) = sorted((p1, p2))
    if g1 == g2:
        r = max(r1, r2)
        return g1 / r if r > 0 else math.inf
    if r1 > 0 and r2 > 0:
        b = math.log(r2 / r1) / math.log(g2 / g1)
        if b < B_MIN:
            # flat or falling: an element that stays below its limit does not govern; one above it did fail
            return math.inf if max(r1, r2) < 1 else min(g for g, r in pts if r >= 1) * 0.999
        b = min(b, B_MAX)
        return g1 * (1.0 / r1) ** (1.0 / b)
    slope = (r2 - r1) / (g2 - g1)
    if slope <= 0:
        return math.inf if max(r1, r2) < 1 else min(g for g, r in pts if r >= 1) * 0.999
    return g1 + (1.0 - r1) / slope


@dataclass
class NodeSearch:
    """The search of one node under one storm (see the module's text)."""

    node: str
    storm: str
    tolerance: float  # fraction: 0.05 for 5 %
    min_gpd: float
    max_gpd: float
    screen_gpd: float = math.inf
    screen_key: str = ""
    method: str = "screen"
    #: correction of the screen's estimate learned from the group's leader (1: none)
    factor: float = 1.0
    #: the first run just above the estimate (expected to fail: a run that fails stops early, so a
    #: miss costs less) rather than just below it
    first_above: bool = True
    points: list[Point] = field(default_factory=list)
    lo: float = 0.0
    hi: float = math.inf
    lo_point: Point | None = None
    hi_point: Point | None = None
    status: str = "running"
    message: str = ""
    _stalls: int = 0

    # ------------------------------------------------------------------ state
    @property
    def ratio(self) -> float:
        return 1.0 + self.tolerance

    @property
    def runs(self) -> int:
        return len(self.points)

    def closed(self) -> bool:
        return self.lo > 0 and math.isfinite(self.hi) and self.hi <= self.lo * self.ratio * (1 + 1e-12)

    def _update_status(self) -> None:
        if self.status in ("untrusted", "error"):
            return
        if self.hi <= self.min_gpd * (1 + 1e-12):
            self.status = "zero"
        elif self.lo >= self.max_gpd * (1 - 1e-12):
            self.status = "bounded"
        elif self.closed():
            self.status = "ok"

    def add(self, p: Point) -> None:
        """Record a run's result and update the bracket (or stop: untrusted, error)."""
        width = self._width()
        self.points.append(p)
        if p.verdict == "pass":
            if p.gpd > self.lo:
                self.lo, self.lo_point = p.gpd, p
        elif p.verdict == "fail":
            if p.gpd < self.hi:
                if self.hi_point is not None and self.hi_point.within_noise:
                    self.message = ""  # the bound within the noise is no longer the failing end
                self.hi, self.hi_point = p.gpd, p
        elif p.verdict == "untrusted" and p.within_noise:
            # program policy noise_floor: a flow whose effect downstream cannot be told from the model's noise is
            # not shown to pass; the largest flow that passes is below it (a bound, never a failure claimed)
            if p.gpd < self.hi:
                self.hi, self.hi_point = p.gpd, p
                self.message = (f"the run at {p.gpd:,.6g} gpd is not shown to pass: its changes downstream are within "
                                f"the model's numerical noise ({p.message})")[:240]
        elif p.verdict == "untrusted":
            self.status = "untrusted"
            self.message = f"the run at {p.gpd:,.6g} gpd is untrusted (not a capacity failure): {p.message}"[:240]
        else:
            self.status = "error"
            self.message = f"the run at {p.gpd:,.6g} gpd raised: {p.message}"[:240]
        # a run that did not halve the (log) width of the range left is a stall
        self._stalls = self._stalls + 1 if self._width() > 0.5 * width else 0
        self._update_status()

    def _ends(self) -> tuple[float, float]:
        """The range left: (largest passing flow or min_gpd, smallest failing flow or max_gpd)."""
        return (self.lo if self.lo > 0 else self.min_gpd), (self.hi if math.isfinite(self.hi) else self.max_gpd)

    def _width(self) -> float:
        a, b = self._ends()
        return math.log(b / a) if b > a else 0.0

    # ------------------------------------------------------------------ next run
    def estimate(self) -> float:
        """The current estimate of the largest passing flow [gpd] (inf: no element limits it)."""
        runs = [p for p in self.points if p.verdict in ("pass", "fail")]
        if not runs:
            return self.screen_gpd * self.factor
        per: dict[str, list] = {}
        for p in runs:
            for k, r in p.ratios.items():
                if not k.startswith("_"):
                    per.setdefault(k, []).append((p.gpd, r))
        best = math.inf
        for pts in per.values():
            best = min(best, element_estimate(pts))
        return best

    def next_gpd(self) -> float | None:
        """The flow of the next run [gpd], or None when the search is over."""
        if self.status != "running":
            return None
        x = self._bisection_step() if self.method == "bisection" else self._screen_step()
        return self._inside(x)

    def _inside(self, x: float) -> float:
        """``x`` within [min_gpd, max_gpd], rounded, strictly inside the bracket (else the bracket's geometric middle)."""
        x = min(max(x, self.min_gpd), self.max_gpd)
        for cand in (round_sig(x), x):
            if self.lo < cand < self.hi:
                return cand
        a = self.lo if self.lo > 0 else self.min_gpd
        b = min(self.hi, self.max_gpd)
        mid = math.sqrt(a * b)
        for cand in (round_sig(mid), mid):
            if self.lo < cand < self.hi:
                return cand
        return mid

    def _bisection_step(self) -> float:
        if not self.points:
            return self.max_gpd
        if self.lo <= 0:
            if self.hi <= self.min_gpd * self.ratio * (1 - 1e-3):
                return self.min_gpd
            return math.sqrt(self.min_gpd * self.hi)
        return math.sqrt(self.lo * self.hi)

    def _screen_step(self) -> float:
        R = self.ratio
        Reff = R * (1 - 1e-3)
        root = math.sqrt(Reff)
        a, b = self._ends()
        if self.lo <= 0 and math.isfinite(self.hi) and self.hi <= self.min_gpd * Reff:
            return self.min_gpd  # only the smallest flow is left to try
        # two runs in a row that did not halve the range left (in log): bisect it
        if self._stalls >= 2:
            self._stalls = 0
            return math.sqrt(a * b)
        est = self.estimate()
        if not (est > 0):
            est = self.min_gpd
        if not math.isfinite(est) and self.points:
            # no element tells where it fails: the largest flow when only passes are known, else bisect
            return self.max_gpd if not math.isfinite(self.hi) else math.sqrt(a * b)
        lo, hi = self.lo, self.hi
        if lo <= 0 and not math.isfinite(hi):  # first run
            if not math.isfinite(est) or est >= self.max_gpd / root:
                return self.max_gpd
            if est <= self.min_gpd * root:
                return self.min_gpd
            return est * root if self.first_above else est / root
        if not math.isfinite(hi):  # only passes so far
            if est >= self.max_gpd / root:
                return self.max_gpd
            if est <= lo * Reff:
                return lo * Reff
            return min(est * root, lo * MAX_STEP)
        if lo <= 0:  # only failures so far
            if est <= self.min_gpd * root:
                return self.min_gpd
            if est >= hi / Reff:
                return hi / Reff
            return max(est / root, hi / MAX_STEP)
        # both sides known
        if est <= lo * Reff:
            return lo * Reff
        if est >= hi / Reff:
            return hi / Reff
        below, above = est / root, est * root  # expected to pass / to fail
        return below if math.log(hi / below) <= math.log(above / lo) else above

    # ------------------------------------------------------------------ result
    def record(self) -> dict:
        """The node's result (the JSON ``nodes`` item and the store's cell)."""
        st = self.status
        gov = self.hi_point.governing if self.hi_point is not None else None
        figure = {"ok": self.lo, "bounded": self.lo, "zero": 0.0}.get(st)
        return {"node": self.node, "storm": self.storm, "status": st,
                "max_connection_gpd": figure,
                "passing_gpd": self.lo if (self.lo > 0 or st == "zero") else None,
                "failing_gpd": self.hi if math.isfinite(self.hi) else None,
                "bounded": st == "bounded",
                "governing_check": None if gov is None else {k: gov.get(k) for k in GOVERNING_KEYS},
                "runs": self.runs, "runs_stopped": sum(p.stopped_hr is not None for p in self.points),
                "simulated_hr": sum(p.simulated_hr or 0.0 for p in self.points), "screen_gpd": self.screen_gpd if math.isfinite(self.screen_gpd) else None,
                "screen_element": self.screen_key, "message": self.message}
