"""Compare a benchmark run against a baseline: moved reference values and slower speed ratios.

A results document (what ``capacitysim bench run --out`` writes) is checked by
:func:`check_results` before anything reads it: a file that is not a JSON object, a case without
its keys or with values of the wrong type is a :class:`~capacitysim.errors.DataFileError` naming
the file, the case and the key, never a traceback. :func:`compare` refuses two documents with no
case compared (``0 regressions`` would then be a verdict on nothing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from capacitysim.errors import DataFileError, InputError

#: Default: a speed ratio more than 10 % worse than the baseline's is a regression...
DEFAULT_THRESHOLD = 0.10
#: ...provided the change also exceeds this many combined relative spreads (noise-aware).
NOISE_FACTOR = 2.0
#: Case names listed in a message before "...".
NAMES_SHOWN = 5
#: Characters of a value shown in a message.
VALUE_CHARS = 60


@dataclass(frozen=True)
class Finding:
    kind: str  # "reference" | "speed" | "missing" | "new" | "version"
    name: str
    message: str
    regression: bool


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


def _check_speed(where: str, case) -> None:
    if not isinstance(case, dict):
        raise DataFileError(f"{where}: must be an object; got {_type_name(case)}")
    if "ratio" not in case:
        raise DataFileError(f"{where}: missing key ratio (time / reference kernel time)")
    if not _is_number(case["ratio"]) or case["ratio"] <= 0:
        raise DataFileError(f"{where}: ratio must be a finite number > 0; got {_show(case['ratio'])}")
    for key in ("median_s", "spread_rel", "min_s"):
        if key in case and (not _is_number(case[key]) or case[key] < 0):
            raise DataFileError(f"{where}: {key} must be a finite number >= 0; got {_show(case[key])}")
    if "description" in case and not isinstance(case["description"], str):
        raise DataFileError(f"{where}: description must be a string; got {_show(case['description'])}")


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
    if "reference" not in doc and "speed" not in doc:
        raise DataFileError(f"{where}: no reference and no speed cases (keys: {_show(sorted(doc))}); "
                            "not a `capacitysim bench run --out` file")
    for section, check in (("reference", _check_reference), ("speed", _check_speed)):
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


def compared_cases(baseline: dict, current: dict) -> tuple[set[str], set[str]]:
    """(reference cases compared, speed cases compared): in both documents, reference cases of the
    same definition version (a changed definition is not compared)."""
    base_ref, cur_ref = baseline.get("reference", {}), current.get("reference", {})
    ref = {n for n in set(base_ref) & set(cur_ref) if base_ref[n].get("version") == cur_ref[n].get("version")}
    return ref, set(baseline.get("speed", {})) & set(current.get("speed", {}))


def compare(baseline: dict, current: dict, threshold: float = DEFAULT_THRESHOLD) -> list[Finding]:
    """Every reference quantity that moved beyond its tolerance (against the baseline's value and
    against its expected value), and every speed ratio worse by more than ``threshold`` and beyond
    the noise (``NOISE_FACTOR`` x the sum of both runs' relative spreads).

    Raises
    ------
    capacitysim.errors.InputError
        No case is compared: the two documents have no case in common (a baseline of other
        cases, an ``--only`` that matches none of it), or every case in common changed its
        definition. "0 regressions" would be a verdict on nothing.
    """
    ref, speed = compared_cases(baseline, current)
    if not ref and not speed:
        base_names = set(baseline.get("reference", {})) | set(baseline.get("speed", {}))
        cur_names = set(current.get("reference", {})) | set(current.get("speed", {}))
        common = base_names & cur_names
        why = (f"every case in common changed its definition (version): {_names(common)}; store a new baseline" if common
               else f"no case in common (baseline {_names(base_names)}; current {_names(cur_names)})")
        raise InputError(f"bench compare: nothing to compare: {why}")
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
