"""Compare a benchmark run against a baseline: reference values that moved, counts that grew, and
speed ratios judged by a stated statistical rule with three outcomes.

The rule for a speed case (:func:`judge_speed`)
-----------------------------------------------
Both runs stored every sample of the case's ratio (its time / its reference's time, interleaved in
the same process: :mod:`capacitysim.benchmarking.runner`). On the logs of the two samples, the
Hodges-Lehmann estimate of the change and its :data:`CONFIDENCE` (99 %) distribution-free
interval from the Mann-Whitney statistic (:func:`~capacitysim.benchmarking.stats.shift_interval`)
give the change of the ratio, ``c`` (+10 %: 10 % slower), and its interval ``[lo, hi]``. With the
threshold ``t`` (``--threshold``, default :data:`DEFAULT_THRESHOLD` = 5 %):

0. When the two runs were made in different **load regimes** (:func:`~capacitysim.benchmarking.stats.load_regime`:
   quiet, shared or oversubscribed, by the median 1-minute load per core of the case's samples): **inconclusive**,
   never a regression -- a load moves a ratio (a kernel that streams memory and the ``np.sort`` reference do not
   slow alike when another process shares the machine), so only runs of one regime are compared.
1. ``hi <= t``: **no regression** -- at 99 % confidence the case is at most ``t`` slower.
2. Else, when the current run is *too noisy* -- the robust spread of its ratios is above both
   :data:`NOISE_FLOOR` and :data:`NOISE_MULTIPLE` x the baseline's -- **inconclusive**: the machine
   was too busy to decide (rerun on a quieter machine or with more samples, ``--repeats``).
3. Else ``lo > 0`` and ``c > t``: **regression** -- slower beyond doubt, and by more than ``t``.
4. Otherwise **inconclusive**: the interval straddles the threshold (more samples narrow it).

A false alarm (rule 3 on pure noise) needs the 99 % interval to miss the true change of 0 on its
low side: at most 0.5 % of comparisons when the two runs differ only by noise. A real 10 % slowdown
is flagged when the interval is narrower than about +/-5 %, which the runner's stopping rule aims
for (+/-1.5 % on each run's median).

A baseline in the former format (schema 1: a median ratio per case, no samples) is still read: its
ratio is then taken as exact and the interval is that of the current run's median alone
(:func:`~capacitysim.benchmarking.stats.median_interval` at 99 %); every such case says so and how
to store a new baseline.

A results document (what ``capacitysim bench run --out`` writes) is checked by
:func:`check_results` before anything reads it: a file that is not a JSON object, a case without
its keys or with values of the wrong type is a :class:`~capacitysim.errors.DataFileError` naming
the file, the case and the key, never a traceback. :func:`compare` refuses two documents with no
case compared (``0 regressions`` would then be a verdict on nothing).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from capacitysim.benchmarking.registry import BASES
from capacitysim.benchmarking.stats import (
    LOAD_REGIMES,
    load_regime,
    median_interval,
    robust_spread,
    shift_interval,
)
from capacitysim.errors import DataFileError, InputError

#: Default threshold: a speed ratio more than 5 % worse than the baseline's (beyond doubt) is a regression.
DEFAULT_THRESHOLD = 0.05
#: Confidence of the interval of the change (two-sided).
CONFIDENCE = 0.99
#: A run is too noisy to judge when the robust spread of its ratios exceeds this...
NOISE_FLOOR = 0.08
#: ...and this many times the baseline's spread.
NOISE_MULTIPLE = 2.0
#: The largest change of a speed ratio measured between two load regimes with no code change [%], shown in the
#: message of a comparison across regimes: +30 % (hydrology.runoff_depth.1e6 against np.sort, quiet then three
#: busy processes, tests/data/bench/pair-old-*.json; docs/workflows/bench.md, "Load regimes"). Issue 30 reported
#: +130 % for a baseline stored at load 4.5-7.7 and a run at load 0.3.
MEASURED_REGIME_SHIFT_PCT = 30
#: Exit codes of ``bench compare``: nothing regressed; a regression; an error; too noisy to decide.
EXIT_OK, EXIT_REGRESSION, EXIT_ERROR, EXIT_INCONCLUSIVE = 0, 1, 2, 4
#: Outcomes of a finding.
OUTCOMES = ("regression", "inconclusive", "ok", "note")
#: Case names listed in a message before "...".
NAMES_SHOWN = 5
#: Characters of a value shown in a message.
VALUE_CHARS = 60
#: What a ratio is, in one sentence (``bench --help``, ``bench report``).
RATIO_SENTENCE = ("A speed case's ratio is its time divided by the time of a reference (one of its own kind: the bare "
                  "engine run it wraps, the plain-numpy form of a kernel; else a fixed np.sort kernel) measured in the "
                  "same process, alternating with it, so a faster or busier machine moves both and the ratio compares "
                  "across runs of one load regime; lower is faster.")


@dataclass(frozen=True)
class Finding:
    kind: str  # "reference" | "speed" | "count" | "missing" | "new" | "version" | "skipped" | "format"
    name: str
    message: str
    outcome: str  # one of OUTCOMES
    detail: dict | None = None

    @property
    def regression(self) -> bool:
        return self.outcome == "regression"

    def to_dict(self) -> dict:
        return {**asdict(self), "regression": self.regression}


@dataclass(frozen=True)
class Comparison:
    """The findings of :func:`compare` and the one outcome of the comparison."""

    findings: list[Finding]
    threshold: float
    confidence: float

    def of(self, outcome: str) -> list[Finding]:
        return [f for f in self.findings if f.outcome == outcome]

    @property
    def outcome(self) -> str:
        """``"regression"`` when anything regressed, else ``"inconclusive"`` when a speed case could
        not be decided, else ``"ok"``."""
        return "regression" if self.of("regression") else "inconclusive" if self.of("inconclusive") else "ok"

    @property
    def exit_code(self) -> int:
        return {"regression": EXIT_REGRESSION, "inconclusive": EXIT_INCONCLUSIVE, "ok": EXIT_OK}[self.outcome]

    def to_dict(self) -> dict:
        return {"outcome": self.outcome, "exit_code": self.exit_code, "regressed": bool(self.of("regression")),
                "threshold": self.threshold, "confidence": self.confidence,
                "rule": rule_text(self.threshold, self.confidence), "findings": [f.to_dict() for f in self.findings]}

    def __iter__(self):  # a Comparison reads as its list of findings
        return iter(self.findings)

    def __len__(self):
        return len(self.findings)

    def __eq__(self, other):
        if isinstance(other, list):
            return self.findings == other
        return NotImplemented


def rule_text(threshold: float = DEFAULT_THRESHOLD, confidence: float = CONFIDENCE) -> str:
    """The decision rule for speed cases, in words."""
    t, c = f"{100 * threshold:g} %", f"{100 * confidence:g} %"
    return (f"runs made in different load regimes (quiet, shared, oversubscribed: median 1-min load per core) are "
            f"inconclusive; else change of the ratio = Hodges-Lehmann estimate on the logs of the two runs' samples, with its {c} "
            f"Mann-Whitney interval; no regression when the interval's top is <= +{t}; inconclusive when this run's "
            f"ratios spread more than {100 * NOISE_FLOOR:g} % and {NOISE_MULTIPLE:g}x the baseline's; regression when "
            f"the interval's bottom is > 0 and the estimate > +{t}; otherwise inconclusive")


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 3] + "..."


def _type_name(value) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _numbers(where: str, key: str, value, *, minimum: float | None = None) -> dict:
    """An object of finite numbers (``values``, ``expected``, ``tolerance``)."""
    if not isinstance(value, dict):
        raise DataFileError(f"{where}: {key} must be an object of numbers; got {_type_name(value)}")
    for q, v in value.items():
        if not _is_number(v) or (minimum is not None and v < minimum):
            limit = f" >= {minimum:g}" if minimum is not None else ""
            raise DataFileError(f"{where}: {key}.{q} must be a finite number{limit}; got {_show(v)}")
    return value


def _check_reference(where: str, case) -> None:
    if not isinstance(case, dict):
        raise DataFileError(f"{where}: must be an object; got {_type_name(case)}")
    if "version" in case and (isinstance(case["version"], bool) or not isinstance(case["version"], int)):
        raise DataFileError(f"{where}: version must be an integer; got {_show(case['version'])}")
    if "passed" in case and not isinstance(case["passed"], bool):
        raise DataFileError(f"{where}: passed must be true or false; got {_show(case['passed'])}")
    if _skipped(where, case):
        return
    if "error" in case:  # a case that raised: its message, no values
        if not isinstance(case["error"], str):
            raise DataFileError(f"{where}: error must be a string; got {_show(case['error'])}")
        return
    missing = [k for k in ("passed", "values", "expected", "tolerance") if k not in case]
    if missing:
        raise DataFileError(f"{where}: missing key(s) {', '.join(missing)} (a reference case has passed, values, "
                            "expected and tolerance, or error)")
    values = _numbers(where, "values", case["values"])
    expected = _numbers(where, "expected", case["expected"])
    tolerance = _numbers(where, "tolerance", case["tolerance"], minimum=0.0)
    if set(expected) != set(tolerance):
        raise DataFileError(f"{where}: expected and tolerance must name the same quantities; got "
                            f"{', '.join(sorted(expected))} and {', '.join(sorted(tolerance))}")
    absent = sorted(set(expected) - set(values))
    if absent:
        raise DataFileError(f"{where}: values has no {', '.join(absent)} (every expected quantity needs a value)")


_SAMPLE_KEYS = ("ratio", "ratio_wall", "ratio_cpu", "case_wall_s", "case_cpu_s", "ref_wall_s", "ref_cpu_s", "load1")


def _skipped(where: str, case) -> bool:
    if "skipped" not in case:
        return False
    if not isinstance(case["skipped"], str):
        raise DataFileError(f"{where}: skipped must be a string (the reason); got {_show(case['skipped'])}")
    return True


def _check_speed(where: str, case) -> None:
    if not isinstance(case, dict):
        raise DataFileError(f"{where}: must be an object; got {_type_name(case)}")
    if "description" in case and not isinstance(case["description"], str):
        raise DataFileError(f"{where}: description must be a string; got {_show(case['description'])}")
    if _skipped(where, case):
        return
    if "ratio" not in case:
        raise DataFileError(f"{where}: missing key ratio (time / reference time)")
    if not _is_number(case["ratio"]) or case["ratio"] <= 0:
        raise DataFileError(f"{where}: ratio must be a finite number > 0; got {_show(case['ratio'])}")
    for key in ("median_s", "spread_rel", "min_s", "cpu_median_s"):
        if key in case and (not _is_number(case[key]) or case[key] < 0):
            raise DataFileError(f"{where}: {key} must be a finite number >= 0; got {_show(case[key])}")
    ci = case.get("ratio_ci")
    if ci is not None and not (isinstance(ci, list) and len(ci) == 2 and all(_is_number(v) and v > 0 for v in ci)):
        raise DataFileError(f"{where}: ratio_ci must be two finite numbers > 0 or null; got {_show(ci)}")
    if "basis" in case and case["basis"] not in BASES:
        raise DataFileError(f"{where}: basis must be one of {', '.join(BASES)}; got {_show(case['basis'])}")
    if "samples" in case:
        smp = case["samples"]
        if not isinstance(smp, dict):
            raise DataFileError(f"{where}: samples must be an object of lists; got {_type_name(smp)}")
        if "ratio" not in smp:
            raise DataFileError(f"{where}: samples has no ratio (the list the comparison ranks)")
        sizes = set()
        for key, values in smp.items():
            if not isinstance(values, list) or not values:
                raise DataFileError(f"{where}: samples.{key} must be a non-empty list of numbers; got {_show(values)}")
            low = 0.0 if key in _SAMPLE_KEYS else None
            for v in values:
                if not _is_number(v) or (low is not None and v < low) or (key.startswith("ratio") and v <= 0):
                    raise DataFileError(f"{where}: samples.{key} must hold finite numbers "
                                        f"{'> 0' if key.startswith('ratio') else '>= 0'}; got {_show(v)}")
            sizes.add(len(values))
        if len(sizes) > 1:
            raise DataFileError(f"{where}: the lists of samples differ in length ({', '.join(map(str, sorted(sizes)))})")


def _check_count(where: str, case) -> None:
    if not isinstance(case, dict):
        raise DataFileError(f"{where}: must be an object; got {_type_name(case)}")
    if _skipped(where, case):
        return
    if "values" not in case:
        raise DataFileError(f"{where}: missing key values (a count case has values, tolerance)")
    _numbers(where, "values", case["values"])
    _numbers(where, "tolerance", case.get("tolerance", {}), minimum=0.0)


def check_results(doc, where: str) -> dict:
    """Validate a benchmark results document (the JSON of ``bench run --out``).

    Parameters
    ----------
    doc : object
        The parsed JSON.
    where : str
        The file it came from (named in every message).

    Returns
    -------
    dict
        ``doc``, unchanged.

    Raises
    ------
    capacitysim.errors.DataFileError
        Not an object; no ``reference`` and no ``speed``; a section or a case that is not an
        object; a reference case without ``passed``, ``values``, ``expected``, ``tolerance`` (or
        ``error``), or with values that are not finite numbers; a speed case without a finite
        ``ratio`` > 0; an ``environment`` that is not an object or a ``timestamp`` that is not text.
    """
    if not isinstance(doc, dict):
        raise DataFileError(f"{where}: a benchmark results file is a JSON object with reference and speed cases; "
                            f"got {_type_name(doc)}")
    if not any(k in doc for k in ("reference", "speed", "count")):
        raise DataFileError(f"{where}: no reference and no speed cases (keys: {_show(sorted(doc))}); "
                            "not a `capacitysim bench run --out` file")
    for section, check in (("reference", _check_reference), ("count", _check_count), ("speed", _check_speed)):
        cases = doc.get(section, {})
        if not isinstance(cases, dict):
            raise DataFileError(f"{where}: {section} must be an object of cases; got {_type_name(cases)}")
        for name, case in cases.items():
            check(f"{where}: {section} case {name!r}", case)
    env = doc.get("environment", {})
    if not isinstance(env, dict):
        raise DataFileError(f"{where}: environment must be an object; got {_type_name(env)}")
    if "timestamp" in env and not isinstance(env["timestamp"], str):
        raise DataFileError(f"{where}: environment.timestamp must be a string; got {_show(env['timestamp'])}")
    return doc


def _names(names) -> str:
    names = sorted(names)
    shown = ", ".join(names[:NAMES_SHOWN]) + (", ..." if len(names) > NAMES_SHOWN else "")
    return f"{len(names)}: {shown}" if names else "none"


def _live(section: dict) -> dict:
    return {n: c for n, c in section.items() if "skipped" not in c}


def compared_cases(baseline: dict, current: dict) -> tuple[set[str], set[str]]:
    """(reference and count cases compared, speed cases compared): in both documents, not skipped,
    of the same definition version (a changed definition is not compared)."""
    def same(section):
        b, c = _live(baseline.get(section, {})), _live(current.get(section, {}))
        if section != "speed":
            return {n for n in set(b) & set(c) if b[n].get("version") == c[n].get("version")}
        # a schema 1 speed case has no version and no basis: version 1, any basis
        return {n for n in set(b) & set(c) if b[n].get("version", 1) == c[n].get("version", 1)
                and b[n].get("basis", c[n].get("basis")) == c[n].get("basis", b[n].get("basis"))}

    return same("reference") | {f"count:{n}" for n in same("count")}, same("speed")


def _pct(v: float) -> str:
    return f"{v:+.1f} %" if math.isfinite(v) else ("+inf %" if v > 0 else "-inf %")


def _load_text(doc: dict, case: dict) -> str:
    loads = case.get("samples", {}).get("load1") or []
    cores = doc.get("environment", {}).get("cpu_count")
    if not loads:
        return ""
    on = f" on {cores} cores" if cores else ""
    return f"1-min load {min(loads):.1f}-{max(loads):.1f}{on}"


def case_regime(doc: dict | None, case: dict) -> dict:
    """The load regime of one run's speed case (:func:`~capacitysim.benchmarking.stats.load_regime`): the one the
    run recorded, else computed from its samples' ``load1`` and the run's ``environment.cpu_count``."""
    rec = case.get("load_regime")
    if (isinstance(rec, dict) and rec.get("regime") in {n for n, _ in LOAD_REGIMES} and _is_number(rec.get("load1_median"))
            and isinstance(rec.get("cores"), int) and not isinstance(rec.get("cores"), bool) and rec["cores"] > 0):
        return rec
    return load_regime(case.get("samples", {}).get("load1"), (doc or {}).get("environment", {}).get("cpu_count"))


def _regime_text(r: dict) -> str:
    return f"{r['regime']} (1-min load {r['load1_median']:.1f} on {r['cores']} cores)"


def judge_speed(name: str, base: dict, cur: dict, threshold: float = DEFAULT_THRESHOLD,
                confidence: float = CONFIDENCE, current_doc: dict | None = None,
                baseline_doc: dict | None = None) -> Finding:
    """The outcome of one speed case by the rule of this module (see its docstring).

    ``base`` and ``cur`` are the two runs' speed entries; ``base`` may be in the former format
    (a ``ratio``, no ``samples``). ``baseline_doc`` and ``current_doc`` are the runs' documents (their
    ``environment``: the cores the load regime divides by).
    """
    t = math.log1p(threshold)
    cur_samples = cur.get("samples", {}).get("ratio")
    base_samples = base.get("samples", {}).get("ratio")
    if not cur_samples:
        return Finding("speed", name, "the current run has no samples (a schema 1 document): nothing to rank; run "
                       "`capacitysim bench run --out FILE` with this version", "inconclusive")
    y = np.log(cur_samples)
    spread_cur = robust_spread(y)
    if base_samples:
        x = np.log(base_samples)
        ci = shift_interval(x, y, confidence)
        spread_base = robust_spread(x)
        how = f"Hodges-Lehmann, {len(x)} vs {len(y)} samples"
        old = ""
    else:  # schema 1 baseline: its median taken as exact
        ci0 = median_interval(y, confidence)
        b = math.log(base["ratio"])
        ci = type(ci0)(ci0.estimate - b, ci0.low - b, ci0.high - b, confidence)
        spread_base = float(base.get("spread_rel", 0.0))
        how = f"median of {len(y)} samples against the baseline's stored median"
        old = ("; the baseline is in the former format (a median, no samples: its own noise is not counted) -- "
               "store a new one: `capacitysim bench run --out NEW.json`, then copy NEW.json over the baseline")
    est, lo, hi = ci.percent()
    b_ratio = float(np.exp(np.median(x))) if base_samples else float(base["ratio"])
    c_ratio = float(np.exp(np.median(y)))
    basis = cur.get("basis", "wall")
    change = (f"ratio ({basis} time) {b_ratio:.4g} -> {c_ratio:.4g}: {_pct(est)} "
              f"({100 * confidence:g} % interval {_pct(lo)} to {_pct(hi)}; {how})")
    detail = {"baseline_ratio": b_ratio, "current_ratio": c_ratio, "change_pct": est, "interval_pct": [lo, hi],
              "confidence": confidence, "spread_rel_current": spread_cur, "spread_rel_baseline": spread_base,
              "samples": [len(base_samples or []), len(y)], "basis": basis}
    noise_limit = max(NOISE_FLOOR, NOISE_MULTIPLE * spread_base)
    n_now = len(y)
    more = max(2 * n_now, 20)
    regimes = (case_regime(baseline_doc, base), case_regime(current_doc, cur))
    detail["load_regimes"] = list(regimes)
    if "unknown" not in (regimes[0]["regime"], regimes[1]["regime"]) and regimes[0]["regime"] != regimes[1]["regime"]:
        return Finding("speed", name,
                       f"not judged: the runs were made in different load regimes, the baseline {_regime_text(regimes[0])} "
                       f"and this run {_regime_text(regimes[1])}, and a load moves a ratio by more than any threshold "
                       f"(measured up to {MEASURED_REGIME_SHIFT_PCT:g} % on this project's cases); {change}; compare runs "
                       f"of the same regime (store the baseline on a quiet machine, and run there){old}",
                       "inconclusive", detail)
    if ci.high <= t:
        word = "faster" if ci.high < 0 else "no regression"
        return Finding("speed", name, f"{word}: {change}{old}", "ok", detail)
    if spread_cur > noise_limit:
        load = _load_text(current_doc or {}, cur)
        return Finding("speed", name,
                       f"too noisy to decide: this run's ratios spread {100 * spread_cur:.1f} % (the baseline's "
                       f"{100 * spread_base:.1f} %; the limit {100 * noise_limit:.1f} %)"
                       f"{', ' + load if load else ''}; {change}; rerun on a quieter machine or with more samples "
                       f"(--repeats {more}){old}", "inconclusive", detail)
    if ci.low > 0 and ci.estimate > t:
        return Finding("speed", name, f"slower by {_pct(est)}, beyond the {100 * threshold:g} % threshold: {change}{old}",
                       "regression", detail)
    return Finding("speed", name,
                   f"not settled: the interval straddles the {100 * threshold:g} % threshold: {change}; more samples "
                   f"narrow it (--repeats {more}){old}", "inconclusive", detail)


def compare(baseline: dict, current: dict, threshold: float = DEFAULT_THRESHOLD,
            confidence: float = CONFIDENCE) -> Comparison:
    """Every reference quantity that moved beyond its tolerance (against the baseline's value and
    against its expected value), every count that grew beyond its tolerance, and every speed case
    judged by :func:`judge_speed`.

    Raises
    ------
    capacitysim.errors.InputError
        No case is compared: the two documents have no case in common (a baseline of other
        cases, an ``--only`` that matches none of it), or every case in common changed its
        definition or was skipped. "0 regressions" would be a verdict on nothing.
    """
    ref, speed = compared_cases(baseline, current)
    if not ref and not speed:
        sections = ("reference", "count", "speed")
        base_names = set().union(*(baseline.get(k, {}) for k in sections))
        cur_names = set().union(*(current.get(k, {}) for k in sections))
        common = base_names & cur_names
        why = (f"every case in common was skipped or changed its definition (version): {_names(common)}; "
               "store a new baseline" if common else
               f"no case in common (baseline {_names(base_names)}; current {_names(cur_names)})")
        raise InputError(f"bench compare: nothing to compare: {why}")
    findings: list[Finding] = []
    for name, cur in current.get("reference", {}).items():
        base = baseline.get("reference", {}).get(name)
        if "skipped" in cur:
            findings.append(Finding("skipped", name, f"skipped: {cur['skipped']}", "note"))
            continue
        if "error" in cur:
            findings.append(Finding("reference", name, f"failed to compute: {cur['error']}", "regression"))
            continue
        if not cur["passed"]:
            bad = [
                f"{q} = {cur['values'][q]:.6g} (expected {cur['expected'][q]:.6g} +/- {cur['tolerance'][q]:g})"
                for q in cur["expected"]
                if abs(cur["values"][q] - cur["expected"][q]) > cur["tolerance"][q]
            ]
            findings.append(Finding("reference", name, "outside its tolerance: " + "; ".join(bad), "regression"))
        if base is None or "skipped" in base:
            findings.append(Finding("new", name, "not in the baseline", "note"))
            continue
        if base.get("version") != cur.get("version"):
            findings.append(Finding("version", name, f"definition changed (v{base.get('version')} -> v{cur.get('version')}); not compared", "note"))
            continue
        for q, tol in cur.get("tolerance", {}).items():
            b = base.get("values", {}).get(q)
            if b is None:
                continue
            if abs(cur["values"][q] - b) > tol:
                findings.append(Finding("reference", name, f"{q} moved from {b:.6g} to {cur['values'][q]:.6g} (tolerance {tol:g})", "regression"))
    for section in ("reference", "count", "speed"):
        for name in baseline.get(section, {}):
            if name not in current.get(section, {}):
                findings.append(Finding("missing", name, f"{section} case in the baseline but not run now", "note"))
    for name, cur in current.get("count", {}).items():
        base = baseline.get("count", {}).get(name)
        if "skipped" in cur:
            findings.append(Finding("skipped", name, f"skipped: {cur['skipped']}", "note"))
        elif base is None or "skipped" in base:
            findings.append(Finding("new", name, "count case not in the baseline", "note"))
        elif base.get("version") != cur.get("version"):
            findings.append(Finding("version", name, f"definition changed (v{base.get('version')} -> v{cur.get('version')}); not compared", "note"))
        else:
            for q, v in cur["values"].items():
                b = base.get("values", {}).get(q)
                if b is None:
                    continue
                tol = cur.get("tolerance", {}).get(q, 0.0)
                if v > b + tol:
                    findings.append(Finding("count", name, f"{q} grew from {b:.6g} to {v:.6g} (tolerance {tol:g}; higher is worse)", "regression"))
                elif v < b - tol:
                    findings.append(Finding("count", name, f"{q} fell from {b:.6g} to {v:.6g} (an improvement: store a new baseline)", "note"))
                else:
                    findings.append(Finding("count", name, f"{q} = {v:.6g} (baseline {b:.6g})", "ok"))
    for name, cur in current.get("speed", {}).items():
        base = baseline.get("speed", {}).get(name)
        if "skipped" in cur:
            findings.append(Finding("skipped", name, f"skipped: {cur['skipped']}", "note"))
        elif base is None or "skipped" in base:
            findings.append(Finding("new", name, "speed case not in the baseline", "note"))
        elif name not in speed:
            findings.append(Finding("version", name, f"definition changed (v{base.get('version')}/{base.get('basis', 'wall')} -> "
                                    f"v{cur.get('version')}/{cur.get('basis', 'wall')}); not compared", "note"))
        else:
            findings.append(judge_speed(name, base, cur, threshold, confidence, current, baseline))
    return Comparison(findings, threshold, confidence)
