"""Where a change at some nodes can act: downstream of them, and upstream as far as backwater reaches.

A flow added at a node travels down every path from it; in a dynamic wave model it also raises the water
downstream, and that rise acts upstream through every link whose downstream end it reaches (the water at the
link's downstream node above the conduit's outlet invert, or above a weir's or orifice's crest: EPA SWMM 5.2
Reference Manual Vol. II, sections 3.4-3.5),, from a node whose water the
change raised beyond the model's noise (measured on the 500-node model under a 6 in storm: a 20 gpd connection
"raised" a node it reaches only geometrically by backwater 0.31 ft, where no node on its way rose beyond its
noise). A link that discharges above the water (a drop, a free outfall of a pipe into a
higher chamber) passes nothing upstream. Everything else in the network is beyond the change's
reach: what differs there between two runs is the model's own numerical noise (issue 26, class 5), never the
change's effect.

The reach takes the highest water the runs reached at each node, so any link flooded back at any time passes the
backwater, and a node reached by backwater passes the change on down all
its outgoing links too.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import networkx as nx

from capacitysim.network.model import SwmmInp, finite_number, network_graph
from capacitysim.units import METERS_PER_FOOT

#: Water this close above a link's outlet invert is not counted as submerging it [ft] (SWMM's FUDGE depth
#: for a dry node is 0.0001 ft; a wet film on the invert is not backwater).
SUBMERGED_TOL_FT = 1e-3


@dataclass(frozen=True)
class Reach:
    """The elements a change can act on.

    Attributes
    ----------
    nodes, links : frozenset of str
        Every node and link the change can reach (sources included).
    downstream : frozenset of str
        The nodes reached by flowing down from the sources.
    backwater : frozenset of str
        The nodes reached only through a submerged link outlet (and what they drain to).
    """

    nodes: frozenset
    links: frozenset
    downstream: frozenset
    backwater: frozenset

    def to_dict(self) -> dict:
        return {"n_nodes": len(self.nodes), "n_links": len(self.links), "n_downstream": len(self.downstream),
                "n_backwater": len(self.backwater)}


#: Pump curve types whose flow depends on the head at the discharge (SWMM 5.2 User's Manual, Pump Curves):
#: TYPE3 (head difference) and TYPE5 (variable speed on head); TYPE1, TYPE2, TYPE4 and ideal pumps follow
#: the wet well only.
HEAD_PUMPS = ("PUMP3", "PUMP5")


def backwater_thresholds_ft(model: SwmmInp, invert_ft: Mapping[str, float]) -> dict[str, float]:
    """The water level at each link's downstream node above which that water acts upstream through it [ft].

    * conduits: the outlet invert, the to-node's invert plus ``OutOffset`` (a height with ``LINK_OFFSETS
      DEPTH``, the default; an elevation with ``ELEVATION``, ``*`` the node's invert): water above it moves
      the conduit's downstream boundary (a drop into a lower chamber passes nothing up);
    * orifices, weirs and outlets: their crest or opening, the from-node's invert plus their offset
      (the tailwater submerges them above it);
    * pumps: the to-node's invert for head-dependent curves (:data:`HEAD_PUMPS`), never for the others
      (infinite).

    Offsets are in the model's length unit (SWMM 5.2 User's Manual, Appendix D); the result is in ft.
    """
    to_ft = 1.0 / METERS_PER_FOOT if model.is_si else 1.0
    elevation = (model.option("LINK_OFFSETS", "DEPTH") or "DEPTH").upper().startswith("ELEV")
    curve_type = {}
    for r in model.rows("CURVES"):
        if len(r.tokens) >= 2 and r.tokens[1].upper().startswith("PUMP"):
            curve_type.setdefault(r.tokens[0].upper(), r.tokens[1].upper())
    offset_at = {"CONDUITS": 6, "ORIFICES": 4, "WEIRS": 4, "OUTLETS": 3}
    rows = {sec: {r.tokens[0]: r.tokens for r in model.rows(sec)} for sec in ("CONDUITS", "ORIFICES", "WEIRS", "OUTLETS", "PUMPS")}
    out: dict[str, float] = {}
    for lid, sec, n1, n2, _line in model.links():
        toks = rows.get(sec, {}).get(lid, [])
        if sec == "PUMPS":
            curve = toks[3].upper() if len(toks) > 3 else "*"
            out[lid] = float(invert_ft.get(n2, float("nan"))) if curve_type.get(curve) in HEAD_PUMPS else float("inf")
            continue
        node = n2 if sec == "CONDUITS" else n1
        base = float(invert_ft.get(node, float("nan")))
        k = offset_at.get(sec)
        off = finite_number(toks[k]) if k is not None and len(toks) > k else None
        if off is None:
            out[lid] = base
        elif elevation:
            out[lid] = max(base, off * to_ft)
        else:
            out[lid] = base + off * to_ft
    return out


def change_reach(model: SwmmInp, sources: Iterable[str], max_hgl_ft: Mapping[str, float],
                 invert_ft: Mapping[str, float], g: nx.MultiDiGraph | None = None, carries=None) -> Reach:
    """The nodes and links a change at ``sources`` can act on.

    Parameters
    ----------
    model : SwmmInp
        The model (links, offsets).
    sources : iterable of str
        The nodes where the change enters (connections, injected inflows, remediated nodes).
    max_hgl_ft : mapping
        The highest water surface [ft] at each node over the runs compared (the larger of before and after).
    invert_ft : mapping
        Each node's invert [ft].
    g : networkx.MultiDiGraph, optional
        :func:`~capacitysim.network.model.network_graph` of the model, when the caller has it.
    carries : collection of str, optional
        The nodes whose water the change raised beyond the model's noise: backwater goes up from these only
        (water the change did not raise lifts nothing upstream). Every reached node when None.

    Returns
    -------
    Reach

    Notes
    -----
    Downstream: every node on a directed path from a source. Backwater: from every reached node ``v``, each
    link ``u -> v`` whose threshold (:func:`backwater_thresholds_ft`) the water at ``v`` rose above by more than
    :data:`SUBMERGED_TOL_FT`, when the change raised the water at ``v`` (``carries``), is reached, and so is ``u`` with everything downstream of it; repeated until
    nothing is added. Links reached: those leaving a reached node and those whose outlet was submerged by a
    reached node.
    """
    g = network_graph(model) if g is None else g
    start = [s for s in dict.fromkeys(sources) if s in g]
    down: set[str] = set(start)
    for s in start:
        down |= nx.descendants(g, s)
    reached = set(down)
    links: set[str] = set()
    outlet = backwater_thresholds_ft(model, invert_ft)
    queue = deque(reached)
    while queue:
        v = queue.popleft()
        for _, w, lid in g.out_edges(v, keys=True):
            links.add(lid)
        if carries is not None and v not in carries:
            continue
        head = float(max_hgl_ft.get(v, float("nan")))
        for u, _, lid in g.in_edges(v, keys=True):
            z = outlet.get(lid, float("nan"))
            if not head > z + SUBMERGED_TOL_FT:
                continue
            links.add(lid)
            if u not in reached:
                new = {u} | nx.descendants(g, u)
                new -= reached
                reached |= new
                queue.extend(new)
    return Reach(frozenset(reached), frozenset(links), frozenset(down), frozenset(reached - down))
