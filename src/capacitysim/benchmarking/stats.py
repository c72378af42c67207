"""The statistics of speed ratios: intervals on one run's samples and on the change between two runs.

Speed ratios are positive and their noise is multiplicative (a busy machine makes a call 30 % slower,
not 3 ms slower), so every statistic here works on ``log(ratio)``: a shift ``d`` of the logs is a
change of the ratio by the factor ``exp(d)``.

* One run: the median of its log ratios and the distribution-free interval of the median from the
  order statistics (the binomial interval, Conover 1999, section 3.2), used by the runner's stopping
  rule and shown by ``bench report``.
* Two runs (baseline and current): the Hodges-Lehmann estimate of the shift (the median of the
  ``m x n`` differences ``current_j - baseline_i``) and its distribution-free confidence interval
  from the exact null distribution of the Mann-Whitney statistic U (Hollander, Wolfe & Chicken 2014,
  *Nonparametric Statistical Methods*, 3rd ed., section 4.3; the normal approximation with a
  continuity correction when ``m n`` exceeds :data:`EXACT_MAX_PAIRS`). It assumes only that the two
  runs' log ratios have the same shape of distribution, shifted.
* The noise of a run: 1.4826 x the median absolute deviation of its log ratios (a robust standard
  deviation: 1.4826 = 1 / Phi^-1(3/4) makes it consistent for normal data; Rousseeuw & Croux 1993),
  which for small values is the relative spread of the ratio.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as _st

#: ``m x n`` up to which the Mann-Whitney null distribution is computed exactly (above: normal approximation).
EXACT_MAX_PAIRS = 2500
#: Consistency factor of the MAD for a normal distribution, 1 / Phi^-1(3/4) (Rousseeuw & Croux 1993).
MAD_TO_SD = 1.0 / _st.norm.ppf(0.75)


@dataclass(frozen=True)
class Interval:
    """An estimate of a log shift (or a log median) and its confidence interval, in log units."""

    estimate: float
    low: float
    high: float
    confidence: float

    def factor(self) -> tuple[float, float, float]:
        """(estimate, low, high) as factors ``exp(.)`` (1.10: 10 % higher)."""
        return math.exp(self.estimate), math.exp(self.low), math.exp(self.high)

    def percent(self) -> tuple[float, float, float]:
        """(estimate, low, high) as relative changes in percent (+10.0: 10 % higher)."""
        return tuple(100.0 * (math.exp(v) - 1.0) if math.isfinite(v) else math.copysign(math.inf, v)
                     for v in (self.estimate, self.low, self.high))


def robust_spread(log_values) -> float:
    """1.4826 x the median absolute deviation of ``log_values``: a robust standard deviation of the
    logs, i.e. the relative spread of the values [-] (0.03: about 3 %)."""
    x = np.asarray(log_values, dtype=float)
    if x.size < 2:
        return 0.0
    return float(MAD_TO_SD * np.median(np.abs(x - np.median(x))))


def median_interval(log_values, confidence: float = 0.95) -> Interval:
    """The median of ``log_values`` and its distribution-free interval from the order statistics.

    ``[x_(k), x_(n+1-k)]`` with ``k`` the largest rank such that ``P(B <= k-1) <= (1-confidence)/2``,
    ``B ~ Binomial(n, 1/2)`` (Conover 1999, *Practical Nonparametric Statistics*, 3rd ed., section
    3.2). With too few values for the confidence the interval is infinite.
    """
    x = np.sort(np.asarray(log_values, dtype=float))
    n = x.size
    if n == 0:
        raise ValueError("median_interval of no values")
    alpha = 1.0 - confidence
    ks = np.arange(1, n // 2 + 1)
    ok = ks[_st.binom.cdf(ks - 1, n, 0.5) <= alpha / 2.0] if ks.size else ks
    med = float(np.median(x))
    if ok.size == 0:
        return Interval(med, -math.inf, math.inf, confidence)
    k = int(ok.max())
    return Interval(med, float(x[k - 1]), float(x[n - k]), confidence)


@functools.lru_cache(maxsize=256)
def mann_whitney_null_cdf(m: int, n: int) -> np.ndarray:
    """``P(U <= u)`` for ``u = 0 .. m n`` under the null hypothesis (no shift, no ties).

    U counts the pairs with the second sample's value above the first's. Exact recursion on the
    largest of the ``m + n`` values (Mann & Whitney 1947): it belongs to the second sample with
    probability ``n / (m + n)`` (then it exceeds all ``m`` values of the first: ``U = U' + m``),
    otherwise to the first (``U = U'``).
    """
    prev = [np.ones(1)]  # row i = 0: P(U = 0) = 1 for every j
    for _ in range(1, n + 1):
        prev.append(np.ones(1))
    for i in range(1, m + 1):
        row = [np.ones(1)]  # j = 0
        for j in range(1, n + 1):
            p = np.zeros(i * j + 1)
            from_first = prev[j]  # sizes (i-1, j)
            p[: from_first.size] += i / (i + j) * from_first
            from_second = row[j - 1]  # sizes (i, j-1): shifted by i
            p[i: i + from_second.size] += j / (i + j) * from_second
            row.append(p)
        prev = row
    return np.cumsum(prev[n])


def _rank_k(m: int, n: int, confidence: float) -> int:
    """Largest ``k`` with ``P(U <= k - 1) <= (1 - confidence) / 2`` (0: no finite interval)."""
    alpha = 1.0 - confidence
    if m * n <= EXACT_MAX_PAIRS:
        cdf = mann_whitney_null_cdf(m, n)
        return int(np.searchsorted(cdf, alpha / 2.0 * (1 + 1e-12), side="right"))
    # normal approximation with continuity correction (Hollander, Wolfe & Chicken 2014, eq. 4.41)
    z = _st.norm.ppf(1.0 - alpha / 2.0)
    k = m * n / 2.0 - z * math.sqrt(m * n * (m + n + 1) / 12.0) - 0.5
    return max(0, math.floor(k) + 1) if k > 0 else 0


def shift_interval(baseline_logs, current_logs, confidence: float = 0.99) -> Interval:
    """Hodges-Lehmann estimate of the shift ``current - baseline`` and its Mann-Whitney interval.

    With ``D_(1) <= ... <= D_(mn)`` the sorted differences ``current_j - baseline_i``, the interval
    is ``[D_(k), D_(mn+1-k)]`` with ``k`` the largest rank such that ``P(U <= k - 1) <= (1 -
    confidence) / 2`` (Hollander, Wolfe & Chicken 2014, section 4.3; Bauer 1972). Its coverage is at
    least ``confidence`` when the two samples differ only by a shift. With too few values for the
    confidence the interval is infinite (never a decision).
    """
    x = np.asarray(baseline_logs, dtype=float)
    y = np.asarray(current_logs, dtype=float)
    m, n = x.size, y.size
    if m == 0 or n == 0:
        raise ValueError("shift_interval needs values in both samples")
    d = np.sort((y[None, :] - x[:, None]).ravel())
    est = float(np.median(d))
    k = _rank_k(m, n, confidence)
    if k < 1:
        return Interval(est, -math.inf, math.inf, confidence)
    return Interval(est, float(d[k - 1]), float(d[m * n - k]), confidence)


#: The load regimes of a benchmark run, by its median 1-minute load average per core [-] (upper bounds): the
#: benchmark itself keeps one core busy, so a quiet 2-core machine reads about 0.5 per core; "shared" is another
#: process or two beside it; "oversubscribed" more runnable processes than cores. Program choice, set from the
#: pairs measured on the 2-core development machine (docs/workflows/bench.md, "Load regimes").
LOAD_REGIMES = (("quiet", 0.75), ("shared", 1.5), ("oversubscribed", math.inf))


def load_regime(loads, cores) -> dict:
    """The load regime of a run's samples: ``{"load1_median", "cores", "per_core", "regime"}``.

    Parameters
    ----------
    loads : sequence of float
        The 1-minute load average at each sample [-] (``os.getloadavg()[0]``).
    cores : int or None
        The machine's logical cores (``os.cpu_count()``); None or absent: 1 (the regime is then an upper bound).

    Returns
    -------
    dict
        ``regime`` one of the names of :data:`LOAD_REGIMES`, or ``"unknown"`` without loads.
    """
    values = [float(v) for v in loads or () if isinstance(v, (int, float)) and math.isfinite(v)]
    n = int(cores) if isinstance(cores, int) and cores > 0 else 1
    if not values:
        return {"load1_median": None, "cores": n, "per_core": None, "regime": "unknown"}
    med = float(np.median(values))
    per_core = med / n
    name = next(name for name, top in LOAD_REGIMES if per_core <= top)
    return {"load1_median": med, "cores": n, "per_core": per_core, "regime": name}
