"""Measured I/I in a model (issue 29, item 5): the fitted RTK sets of a metered-credit analysis
(:mod:`capacitysim.workflows.metered_credit`, ``capacitysim credits meter --json``) in place of the RDII of the nodes
its sub-basin drains to, so a capacity demonstration uses the I/I measured rather than the model's calibration.

The document is read once (:func:`capacitysim.io.project_files.read_metered_document`: its kind checked, its SHA-256
recorded); its ``credit.pre_rtk`` and ``credit.post_rtk`` become :class:`capacitysim.network.scenario.MeasuredRdii`
edits (``[HYDROGRAPHS]`` and ``[RDII]`` lines, SWMM 5.2 User's Manual Appendix D) of the BEFORE and the AFTER run
by the spec's period (:data:`MEASURED_PERIODS`, a program choice shown beside its alternatives).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from capacitysim.errors import InputError

#: The periods of a metered analysis (before and after the rehabilitation), whose sets a document carries.
PERIODS = ("pre", "post")


#: What each ``period`` of a measured I/I spec puts into the BEFORE and the AFTER run: the post set in both (the
#: sub-basin as it is now, the default: a demonstration judges the system a connection joins), the pre set in
#: both, or ``change`` (the pre set before, the post set after: the rehabilitation itself, measured).
MEASURED_PERIODS = {"post": ("post", "post"), "pre": ("pre", "pre"), "change": ("pre", "post")}
#: The keys of a measured I/I spec (``analysis=credit.json,nodes=MH3;MH4,period=post,gauge=RG1``).
MEASURED_KEYS = ("analysis", "nodes", "period", "gauge")


@dataclass(frozen=True)
class MeasuredIi:
    """The fitted RTK sets of a metered-credit document taken into a model at ``nodes`` (issue 29, item 5).

    ``analysis`` is the document (``capacitysim credits meter --json``); ``period`` one of
    :data:`MEASURED_PERIODS`; ``gauge`` the rain gauge that drives the sets (default: the one the nodes' own unit
    hydrographs read, else the model's only gauge).
    """

    analysis: object
    nodes: tuple
    period: str = "post"
    gauge: str | None = None

    def __post_init__(self):
        nodes = tuple(str(n).strip() for n in self.nodes if str(n).strip())
        if not nodes:
            raise InputError("measured I/I: nodes= names no node (the nodes the metered sub-basin drains to, A;B)")
        object.__setattr__(self, "nodes", nodes)
        if self.period not in MEASURED_PERIODS:
            raise InputError(f"measured I/I: period={self.period!r}; allowed: {', '.join(MEASURED_PERIODS)}")


def parse_measured_ii(value, field: str = "measured_ii") -> MeasuredIi:
    """A measured I/I spec: a :class:`MeasuredIi`, a dict of :data:`MEASURED_KEYS` (``nodes`` a list or ``A;B``), or
    the command line's ``analysis=credit.json,nodes=MH3;MH4[,period=post][,gauge=RG1]``."""
    if isinstance(value, MeasuredIi):
        return value
    if isinstance(value, str):
        parts = {}
        for part in value.split(","):
            key, eq, v = part.partition("=")
            key = key.strip().lower()
            if not eq or key not in MEASURED_KEYS or key in parts:
                raise InputError(f"{field}: {value!r}; allowed: analysis=FILE,nodes=A;B[,period="
                                 f"{'|'.join(MEASURED_PERIODS)}][,gauge=NAME], each key once")
            parts[key] = v.strip()
        value = parts
    if not isinstance(value, dict) or not value.get("analysis") or not value.get("nodes"):
        raise InputError(f"{field}: {value!r}; allowed: an analysis document and the nodes it drains to "
                         "(analysis=FILE,nodes=A;B)")
    unknown = set(value) - set(MEASURED_KEYS)
    if unknown:
        raise InputError(f"{field}: unknown key(s) {', '.join(sorted(unknown))}; allowed: {', '.join(MEASURED_KEYS)}")
    nodes = value["nodes"]
    nodes = nodes.split(";") if isinstance(nodes, str) else list(nodes)
    try:
        return MeasuredIi(value["analysis"], tuple(nodes), value.get("period") or "post", value.get("gauge") or None)
    except InputError as exc:
        raise InputError(f"{field}: {exc}") from None


def measured_ii_edits(m: MeasuredIi, field: str = "measured_ii") -> tuple[object, object, dict]:
    """The scenario edits of a measured I/I spec: ``(before, after, record)``.

    ``before`` and ``after`` are :class:`~capacitysim.network.scenario.MeasuredRdii` edits carrying the
    document's fitted RTK sets (``credit.pre_rtk`` / ``credit.post_rtk``, :data:`MEASURED_PERIODS`) and its sewer
    area; the record names the document, its SHA-256, the PE, the period and the sets, for the result document.
    """
    from capacitysim.hydrology.rtk_fit import RTKSet
    from capacitysim.io.project_files import read_metered_document
    from capacitysim.network.scenario import MeasuredRdii

    name = Path(str(m.analysis)).name
    doc, sha = read_metered_document(m.analysis, f"{field}: analysis {name!r}")
    credit = doc.get("credit")
    if not isinstance(credit, dict):
        raise InputError(f"{field}: analysis {name!r} gives no fitted RTK sets (no credit: "
                         f"{'; '.join(map(str, doc.get('warnings') or [])) or 'none computed'})")
    area = doc.get("area_ac")
    if isinstance(area, bool) or not isinstance(area, (int, float)) or not np.isfinite(area) or area <= 0:
        raise InputError(f"{field}: analysis {name!r} gives no sewer area (area_ac {area!r})")
    sets = {p: RTKSet.from_dict(credit.get(f"{p}_rtk"), f"{field}: analysis {name!r} credit.{p}_rtk") for p in PERIODS}
    for p, rtk in sets.items():  # both sets, whichever the period uses: a document is sound whole or refused
        if sum(rtk.R) > 1.0:
            raise InputError(f"{field}: analysis {name!r} credit.{p}_rtk: R1 + R2 + R3 at most 1 (the RTK volume is R "
                             f"x rain x area: no more RDII than rain); got {sum(rtk.R):g}")
    pe = doc.get("pe") or {}
    edits = tuple(MeasuredRdii(m.nodes, float(area), tuple(sets[p].rows()), m.gauge, source=name, period=p)
                  for p in MEASURED_PERIODS[m.period])
    record = {"analysis": name, "sha256": sha, "nodes": list(m.nodes), "period": m.period,
              "before": MEASURED_PERIODS[m.period][0], "after": MEASURED_PERIODS[m.period][1], "area_ac": float(area),
              "rtk": {p: sets[p].as_dict() for p in dict.fromkeys(MEASURED_PERIODS[m.period])},
              "pe": {"name": pe.get("name"), "license": pe.get("license")},
              "credit_claimed_gpd": credit.get("claimed_gpd")}
    return edits[0], edits[1], record
