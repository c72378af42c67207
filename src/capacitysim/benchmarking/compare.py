"""Compare a benchmark run against a baseline: moved reference values and slower speed ratios."""

from __future__ import annotations

from dataclasses import dataclass

#: Default: a speed ratio more than 10 % worse than the baseline's is a regression...
DEFAULT_THRESHOLD = 0.10
#: ...provided the change also exceeds this many combined relative spreads (noise-aware).
NOISE_FACTOR = 2.0


@dataclass(frozen=True)
class Finding:
    kind: str  # "reference" | "speed" | "missing" | "new" | "version"
    name: str
    message: str
    regression: bool


def compare(baseline: dict, current: dict, threshold: float = DEFAULT_THRESHOLD) -> list[Finding]:
    """Every reference quantity that moved beyond its tolerance (against the baseline's value and
    against its expected value), and every speed ratio worse by more than ``threshold`` and beyond
    the noise (``NOISE_FACTOR`` x the sum of both runs' relative spreads)."""
    findings: list[Finding] = []
    for name, cur in current.get("reference", {}).items():
        base = baseline.get("reference", {}).get(name)
        if "error" in cur:
            findings.append(Finding("reference", name, f"failed to compute: {cur['error']}", True))
            continue
        if not cur["passed"]:
            bad = [
                f"{q} = {cur['values'][q]:.6g} (expected {cur['expected'][q]:.6g} +/- {cur['tolerance'][q]:g})"
                for q in cur["expected"]
                if abs(cur["values"][q] - cur["expected"][q]) > cur["tolerance"][q]
            ]
            findings.append(Finding("reference", name, "outside its tolerance: " + "; ".join(bad), True))
        if base is None:
            findings.append(Finding("new", name, "not in the baseline", False))
            continue
        if base.get("version") != cur.get("version"):
            findings.append(Finding("version", name, f"definition changed (v{base.get('version')} -> v{cur.get('version')}); not compared", False))
            continue
        for q, tol in cur.get("tolerance", {}).items():
            b = base.get("values", {}).get(q)
            if b is None:
                continue
            if abs(cur["values"][q] - b) > tol:
                findings.append(Finding("reference", name, f"{q} moved from {b:.6g} to {cur['values'][q]:.6g} (tolerance {tol:g})", True))
    for name in baseline.get("reference", {}):
        if name not in current.get("reference", {}):
            findings.append(Finding("missing", name, "in the baseline but not run now", False))
    for name, cur in current.get("speed", {}).items():
        base = baseline.get("speed", {}).get(name)
        if base is None:
            findings.append(Finding("new", name, "speed case not in the baseline", False))
            continue
        change = cur["ratio"] / base["ratio"] - 1.0
        noise = NOISE_FACTOR * (cur.get("spread_rel", 0.0) + base.get("spread_rel", 0.0))
        if change > threshold and change > noise:
            findings.append(
                Finding("speed", name, f"ratio {base['ratio']:.3g} -> {cur['ratio']:.3g} ({100 * change:+.0f} %, noise {100 * noise:.0f} %)", True)
            )
    return findings
