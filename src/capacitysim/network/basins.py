"""I/I remediation basins from the network graph.

The Binghamton-Johnson City I/I Offset Program ties flow credits to an "I/I remediation basin",
"the sewage collection system ... tributary to a particular component of the POTW, such as a CSO
or pumping station" (Sewer Use Rules ch. 174, definitions; credits "shall only be used in the
specific I/I remediation basin in which they were generated", sewer flow credit bank paragraph A). Here a basin outlet is
found automatically:

* the **plant**: the outfall with the largest tributary mean dry-weather flow (patterns applied),
  or the one named; none in a model where no outfall receives dry-weather flow (storm sewers);
* each **CSO regulator**: the upstream node of a weir, orifice or outlet that discharges to an
  outfall other than the plant (the basin is what reaches the regulator);
* each **pump station**: the wet well (inlet node) of a pump;
* any other outfall.

``outlets=[...]`` overrides the automatic list. Each basin has its ``tributary`` nodes (every node
that drains to the outlet, the outlet included) and its ``local`` nodes (those reaching it without
passing another basin outlet: the nested basins partition the network).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import networkx as nx

from capacitysim.errors import InputError
from capacitysim.network.model import SwmmInp, finite_number, network_graph


@dataclass
class Basin:
    """One I/I remediation basin (node ids sorted)."""

    outlet: str
    kind: str  # plant | cso | pump_station | outfall | user
    overflow_outfall: str | None = None
    tributary: list[str] = field(default_factory=list)
    local: list[str] = field(default_factory=list)
    dwf_mean: float = 0.0  # mean DWF (patterns applied) [model flow units], sum over tributary nodes
    rdii_area_ac: float = 0.0  # sum of [RDII] sewer areas over tributary nodes (ac, or ha in SI models)
    flow_units: str = "CFS"

    @property
    def dwf_mean_gpd(self) -> float:
        """Mean dry-weather flow of the basin [gpd] (patterns applied)."""
        from capacitysim.units import CFS_PER_FLOW_UNIT, GPD_PER_CFS

        return self.dwf_mean * CFS_PER_FLOW_UNIT[self.flow_units] * GPD_PER_CFS

    def as_dict(self) -> dict:
        return {"outlet": self.outlet, "kind": self.kind, "overflow_outfall": self.overflow_outfall,
                "n_tributary_nodes": len(self.tributary), "n_local_nodes": len(self.local),
                "dwf_mean_gpd": self.dwf_mean_gpd, "dwf_mean_model_units": self.dwf_mean,
                "model_flow_units": self.flow_units,
                "rdii_sewer_area": self.rdii_area_ac, "rdii_sewer_area_units": "ha" if self.flow_units in ("CMS", "LPS", "MLD") else "ac",
                "tributary": self.tributary, "local": self.local}


def _tributary(g: nx.MultiDiGraph, node: str) -> set[str]:
    return nx.ancestors(g, node) | {node}


def _local(g: nx.MultiDiGraph, node: str, stops: set[str]) -> set[str]:
    seen = {node}
    queue = deque([node])
    while queue:
        n = queue.popleft()
        for up in g.predecessors(n):
            if up in seen or up in stops:
                continue
            seen.add(up)
            queue.append(up)
    return seen


def find_plant(model: SwmmInp, g: nx.MultiDiGraph | None = None) -> str | None:
    """The plant outfall: the outfall receiving the most mean dry-weather flow (patterns applied).

    Ties go to the outfall with more tributary nodes. None when no outfall receives any
    dry-weather flow (a storm-sewer model): no outfall is then taken for a plant.
    """
    g = g if g is not None else network_graph(model)
    dwf = model.dwf_mean()
    outfalls = list(model.node_ids_of("OUTFALLS"))
    if not outfalls:
        return None

    def score(o):
        trib = _tributary(g, o)
        return (sum(dwf.get(n, 0.0) for n in trib), len(trib), o)
    best = max(outfalls, key=score)
    return best if score(best)[0] > 0 else None


def find_basins(model: SwmmInp, outlets: list[str] | None = None, plant: str | None = None) -> list[Basin]:
    """The I/I remediation basins of a model (automatic outlets unless ``outlets`` is given).

    Parameters
    ----------
    model : SwmmInp
    outlets : list of str, optional
        Node ids to use as basin outlets instead of the automatic ones (kind ``user``).
    plant : str, optional
        The plant outfall (default: :func:`find_plant`).
    """
    g = network_graph(model)
    outfalls = set(model.node_ids_of("OUTFALLS"))
    found: list[tuple[str, str, str | None]] = []
    if outlets:
        for o in outlets:
            n = model.find_node(o)
            if n is None:
                raise InputError(f"basin outlet {o!r} is not a node of {model.path.name}")
            found.append((n, "user", None))
    else:
        if plant:
            p = model.find_node(plant)
            if p not in outfalls:
                raise InputError(f"plant {plant!r} is not an outfall of {model.path.name}")
            plant = p
        else:
            plant = find_plant(model, g)
        seen = set()
        if plant is not None:
            found.append((plant, "plant", None))
            seen.add(plant)
        for lid, sec, n1, n2, _ in model.links():
            if sec == "PUMPS" and n1 not in seen:
                found.append((n1, "pump_station", None))
                seen.add(n1)
        for lid, sec, n1, n2, _ in model.links():
            if sec in ("WEIRS", "ORIFICES", "OUTLETS") and n2 in outfalls and n2 != plant and n1 not in seen and plant is not None:
                found.append((n1, "cso", n2))
                seen.add(n1)
        for o in sorted(outfalls - seen):
            if not any(o == of for _, _, of in found) and o != plant:
                found.append((o, "outfall", None))
                seen.add(o)
    stops = {o for o, _, _ in found}
    dwf = model.dwf_mean()
    rdii = {}
    for r in model.rows("RDII"):
        try:
            n = model.canon_node(r.tokens[0])
            rdii[n] = rdii.get(n, 0.0) + (finite_number(r.tokens[2]) or 0.0)
        except (IndexError, ValueError):
            pass
    basins = []
    for o, kind, overflow in found:
        trib = _tributary(g, o)
        loc = _local(g, o, stops - {o})
        basins.append(Basin(o, kind, overflow, sorted(trib), sorted(loc),
                            sum(dwf.get(n, 0.0) for n in trib), sum(rdii.get(n, 0.0) for n in trib), model.flow_units))
    return basins


def basin_of(node: str, basins: list[Basin]) -> Basin:
    """The basin whose local nodes hold ``node`` (the nearest basin outlet downstream)."""
    for b in basins:
        if node in b.local:
            return b
    for b in basins:
        if node in b.tributary:
            return b
    raise InputError(f"node {node!r} lies in no basin")
