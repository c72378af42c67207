"""Vectorized sweeps: detention families and runoff, one task per block of scenarios.

The flat scenario index is a :func:`dask.array.arange` chunked by ``chunk_size``, and each block
is computed in one call (stage-storage tables, release rates and the orifice bisection for all
designs of the block at once, through the numba routing kernel) -- one task per block
(:func:`block_task`), never one per scenario. Detention blocks run the one detention engine,
:func:`capacitysim.workflows.detention.design_batch` (:func:`detention_block`); runoff blocks the
TR-55 depth and the SCS unit hydrograph (:func:`runoff_block`).

References
----------
.. [1] 15 RCNY § 31-03 (NYC release rate, detention).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from capacitysim.io.sweep_files import SweepSpec
from capacitysim.io.sweep_store import (
    CHECK_CHARS,
    DETENTION_VARS,
    DONE,
    FAILED,
    MESSAGE_CHARS,
    failed_record,
)
from capacitysim.rules.verdict import VERDICT_CODE
from capacitysim.units import (
    ACRES_PER_SQMI,
    INCHES_PER_FOOT,
    MINUTES_PER_HOUR,
    SQFT_PER_ACRE,
)


@dataclass(frozen=True)
class VectorPayload:
    """What a block of a detention or runoff sweep needs (sent once)."""

    kind: str
    site: object | None = None  # capacitysim.io.site_files.Site
    rules: object | None = None  # RuleSet
    storm_distribution: str = "II"
    storm_depth_in: float | None = None
    storm_dt_min: float | None = None


def make_payload(spec: SweepSpec) -> VectorPayload:
    """The payload of a vectorized sweep: the site and rule set that
    :func:`~capacitysim.io.sweep_files.load_sweep` read (never parsed twice:
    :meth:`~capacitysim.io.sweep_files.SweepSpec.site_and_rules`), or the runoff storm."""
    if spec.kind == "detention":
        from capacitysim.workflows.detention import site_refusals

        site, rules = spec.site_and_rules()
        site_refusals(site)  # refused before any scenario, as `capacitysim detention` refuses it
        return VectorPayload("detention", site, rules)
    st = spec.storm
    return VectorPayload("runoff", storm_distribution=st.distribution, storm_depth_in=float(st.depth_in), storm_dt_min=float(st.dt_min))


def _vector_block(payload: VectorPayload, cols: dict[str, np.ndarray]) -> dict:
    if payload.kind == "detention":
        return detention_block(payload, cols)
    return runoff_block(payload, cols)


def runoff_block(payload: VectorPayload, cols: dict[str, np.ndarray]) -> dict:
    """Runoff of n subcatchments at once: TR-55 depth and the SCS unit hydrograph peak.

    References
    ----------
    TR-55 (1986) ch. 2 eq. 2-3; NEH 630 ch. 16 (unit hydrograph) through
    :func:`capacitysim.hydrology.unit_hydrograph_runoff`.
    """
    from capacitysim import hydrology
    from capacitysim.io.sweep_files import RUNOFF_DEFAULTS

    n = len(next(iter(cols.values())))
    get = lambda k, d: np.broadcast_to(np.asarray(cols.get(k, d), float), (n,))  # noqa: E731
    area, cn, tc = get("area_ac", RUNOFF_DEFAULTS["area_ac"]), get("cn", RUNOFF_DEFAULTS["cn"]), get("tc_min", RUNOFF_DEFAULTS["tc_min"])
    depth = get("storm_depth_in", payload.storm_depth_in)
    q_in = np.asarray(hydrology.runoff_depth(depth, cn), float) * np.ones(n)
    peak = np.empty(n)
    tpk = np.empty(n)
    for d in np.unique(depth):
        rows = np.flatnonzero(depth == d)
        storm = hydrology.design_storm(float(d), payload.storm_distribution, payload.storm_dt_min)
        hyd = hydrology.unit_hydrograph_runoff(area[rows] / ACRES_PER_SQMI, cn[rows], tc[rows] / MINUTES_PER_HOUR, storm)
        v = np.atleast_2d(hyd.values)
        peak[rows] = v.max(axis=1)
        tpk[rows] = hyd["time_hr"].values[np.argmax(v, axis=1)]
    return {"status": np.full(n, DONE, np.int8), "verdict": np.full(n, -1, np.int8), "message": np.full(n, "", f"<U{MESSAGE_CHARS}"),
            "runoff_depth_in": q_in, "runoff_volume_cf": q_in / INCHES_PER_FOOT * area * SQFT_PER_ACRE,
            "peak_flow_cfs": peak, "time_to_peak_hr": tpk}


def detention_block(payload: VectorPayload, cols: dict[str, np.ndarray]) -> dict:
    """n variants of a NYC site at once, by the one detention engine
    (:func:`capacitysim.workflows.detention.design_batch`, which ``capacitysim detention`` runs with
    n = 1): the same numbers, refusals and verdict; the SWMM cross-check is the one-site command's.
    Verdict "pass" when the orifice keeps the release rate without overtopping, the storage holds the
    required volume and the critical storm duration is bracketed by the routed ones.
    """
    from capacitysim.workflows.detention import DESIGN_CHECKS, design_batch

    n = len(next(iter(cols.values())))
    b = design_batch(payload.site, payload.rules, cols, n)
    message = np.array([b.message(i)[:MESSAGE_CHARS] for i in range(n)], dtype=f"<U{MESSAGE_CHARS}")
    crit = np.full(n, "", f"<U{CHECK_CHARS}")
    elem = np.full(n, "", f"<U{CHECK_CHARS}")
    for key, (criterion, element) in DESIGN_CHECKS.items():
        crit[b.failed_check == key] = criterion
        elem[b.failed_check == key] = element
    v = b.values
    out = {"status": np.where(b.valid, DONE, FAILED).astype(np.int8),
           "verdict": np.where(b.valid, b.passed.astype(np.int8), VERDICT_CODE[""]).astype(np.int8),
           "message": message, "failed_criterion": crit, "failed_element": elem,
           **{k: v[k] for k in DETENTION_VARS if k in v},
           "spill_limit_in": np.where(np.isinf(v["spill_limit_in"]), np.nan, v["spill_limit_in"])}
    for k in DETENTION_VARS:
        out[k] = np.where(b.valid, np.asarray(out[k], float), np.nan)
    return out


def block_task(payload, spec: SweepSpec, block: np.ndarray) -> tuple[int, int, dict]:
    """Dask task: one block of a vectorized sweep (flat indices ``block``, contiguous)."""
    start, stop = int(block[0]), int(block[-1]) + 1
    try:
        rec = _vector_block(payload, spec.columns(start, stop))
    except Exception as exc:  # noqa: BLE001
        rec = failed_record(exc)
    return start, stop, rec
