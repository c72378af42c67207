"""Screening: an estimate of every node's headroom from the run before alone (no SWMM run per node).

For a connection at node ``n`` the elements :func:`capacitysim.rules.capacity.judge` can fail lie
downstream of ``n`` (its downstream network in :func:`capacitysim.network.model.network_graph`).
Each gives a flow margin from the run before:

* a gravity conduit: the flow at which its max d/D reaches the limit (0.8, or the value before +
  the tolerance when it was already over), from the normal-depth relation of a circular pipe
  scaled through the conduit's own (peak flow, d/D) point before, ``Q_lim = Q_peak f(L) / f(d/D)``
  (``f`` = Q/Qfull of a part-full circle, Manning); a force main: ``L x Qfull``;
* the node's basin outlet and the plant: the peak inflow before + ``outlet_peak_tol_pct``;
* a CSO outfall: ``max(cso_volume_tol_pct of the volume, cso_volume_tol_cf)`` of added overflow
  volume, over the periods the outfall overflows in the run before.

The connection adds ``g x shape(t - tau) / GPD_PER_CFS`` [cfs] at an element (``shape``: the hourly
factors of mean 1 that :func:`capacitysim.network.scenario.connection_shape` gives the
connection, by clock hour; ``tau``: the travel time from the node, conduit lengths over full-flow
velocities). Superposed on the element's hydrograph before (the reporting-step series of the run
before, scaled to the engine's peak statistic), a peak criterion fails at::

    g* = min over t of (Q_lim - Q_before(t)) / s(t)

(the timing of the added hydrograph against the element's own: a connection that peaks at 8 am
takes more room from a plant that peaks at noon than its average, less than its peak), and a CSO
criterion at ``margin / (integral of s over the overflow periods)``. The screen's estimate is the
smallest ``g*``, and its key the element that gives it (``"peak|PLANT"``, ``"dD|P0012"``,
``"cso|CSO1"``: :mod:`.margins`). Node depths (freeboard, flooding), storage fill and pumps are
left to the runs (their flow-depth relation is not in the run before).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from capacitysim.units import GPD_PER_CFS, SECONDS_PER_HOUR

#: Full-flow velocity used when a conduit's is unknown [ft/s].
DEFAULT_VELOCITY_FPS = 2.5
#: d/D above which the part-full circle's flow no longer rises (0.938): no flow margin is read there.
D_OVER_D_OF_MAX_FLOW = 0.938
#: A CSO outfall overflows in a period when its inflow exceeds this [cfs].
OVERFLOW_CFS = 1e-6


def circle_q_over_qfull(y):
    """Normal-flow Q/Qfull of a circular pipe at relative depth ``y`` = d/D (Manning, constant n).

    ``theta = 2 acos(1 - 2y)``; ``A/Afull = (theta - sin theta) / 2 pi``; ``R/Rfull = 1 - sin theta / theta``;
    ``Q/Qfull = (A/Afull) (R/Rfull)^(2/3)``.

    References
    ----------
    Chow, V.T. (1959). Open-Channel Hydraulics, Table 2-1 (circle) with Manning's equation (eq. 5-6).
    """
    y = np.clip(np.asarray(y, float), 1e-9, 1.0)
    th = 2.0 * np.arccos(1.0 - 2.0 * y)
    a = (th - np.sin(th)) / (2.0 * np.pi)
    r = 1.0 - np.sin(th) / th
    return a * np.power(np.maximum(r, 0.0), 2.0 / 3.0)


@dataclass
class ScreenResult:
    """The screen of one storm: per node, the estimate [gpd] (inf: no limit found) and the element giving it."""

    gpd: dict[str, float] = field(default_factory=dict)
    key: dict[str, str] = field(default_factory=dict)
    #: per node, the three smallest estimates (key, gpd)
    detail: dict[str, list] = field(default_factory=dict)


def conduit_lengths_ft(model) -> dict[str, float]:
    """Conduit id -> length [ft] from ``[CONDUITS]``."""
    from capacitysim.network.engine import unit_factors
    from capacitysim.network.model import finite_number

    f = unit_factors(model.flow_units)["length"]
    out = {}
    for r in model.rows("CONDUITS"):
        if len(r.tokens) > 3:
            v = finite_number(r.tokens[3])
            if v is not None:
                out[r.tokens[0]] = v * f
    return out


def travel_graph(model, before) -> nx.DiGraph:
    """The network with each link's travel time [hr] (conduits: length over full-flow velocity; other links 0)."""
    g = nx.DiGraph()
    lengths = conduit_lengths_ft(model)
    links = [str(x) for x in before.link.values]
    qf = dict(zip(links, before.full_flow_cfs.values))
    dfull = dict(zip(links, before.full_depth_ft.values))
    ltype = dict(zip(links, before.link_type.values))
    for lid, _, n1, n2, _ in model.links():
        tt = 0.0
        if ltype.get(lid) == "CONDUIT":
            d = dfull.get(lid, np.nan)
            q = qf.get(lid, np.nan)
            v = q / (math.pi * d * d / 4.0) if (np.isfinite(d) and d > 0 and np.isfinite(q) and q > 0) else DEFAULT_VELOCITY_FPS
            v = min(max(v, 0.5), 15.0)
            tt = lengths.get(lid, 0.0) / v / SECONDS_PER_HOUR
        if g.has_edge(n1, n2):
            tt = min(tt, g[n1][n2]["tt"])
        g.add_edge(n1, n2, tt=tt, link=lid)
    for n in model.node_ids():
        g.add_node(n)
    return g


def screen(model, before, series: dict | None, nodes, judged_of, criteria, peaking="pattern") -> ScreenResult:
    """Estimate every node's largest passing connection [gpd] from the run before.

    Parameters
    ----------
    model : SwmmInp
    before : xarray.Dataset
        The run before (``read_results``).
    series : dict, optional
        Its reporting-step series (:func:`capacitysim.workflows.headroom.tasks.read_series`); without
        them every hydrograph is taken at its peak against the connection's largest hourly factor.
    nodes : list of str
    judged_of : callable(node) -> dict
        ``outlets``, ``plant``, ``cso_outfalls`` judged for a connection at the node.
    criteria : Criteria
    peaking : "pattern" or float
    """
    from capacitysim.network.scenario import connection_shape

    c = criteria
    g = travel_graph(model, before)
    links = [str(x) for x in before.link.values]
    lidx = {k: i for i, k in enumerate(links)}
    nidx = {str(k): i for i, k in enumerate(before.node.values)}
    peak = before.peak_flow_cfs.values
    rb = before.max_d_over_d.values
    qfull = before.full_flow_cfs.values
    shape_ = before.link_shape.values if "link_shape" in before else np.full(len(links), "", dtype=object)
    fm = np.array([str(x) == "FORCE_MAIN" for x in shape_])
    # flow limit of each conduit [cfs] (nan: not judged by flow here)
    qlim = np.full(len(links), np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        grav = (before.link_type.values == "CONDUIT") & ~fm & np.isfinite(rb) & (rb > 0) & (peak > 0)
        L = np.where(rb <= c.max_d_over_d, c.max_d_over_d, rb + c.d_over_d_tol)
        ok = grav & (L < D_OVER_D_OF_MAX_FLOW)
        qlim[ok] = peak[ok] * circle_q_over_qfull(L[ok]) / circle_q_over_qfull(rb[ok])
        qq = before.max_q_over_qfull.values
        okf = fm & np.isfinite(qq) & np.isfinite(qfull) & (qfull > 0)
        Lf = np.where(qq <= c.force_main_max_q_over_qfull, c.force_main_max_q_over_qfull, qq + c.d_over_d_tol)
        qlim[okf] = Lf[okf] * qfull[okf]
    if series is not None:
        clock = np.asarray(series["clock_hr"], float)
        s_links = {k: i for i, k in enumerate(series["links"])}
        s_nodes = {k: i for i, k in enumerate(series["nodes"])}
        lf, nf = series["link_flow_cfs"], series["node_inflow_cfs"]
        dt_s = float(np.median(np.diff(clock))) * SECONDS_PER_HOUR if clock.size > 1 else 300.0
    else:
        clock, s_links, s_nodes, lf, nf, dt_s = np.zeros(1), {}, {}, None, None, 300.0

    def link_hydrograph(i):
        j = s_links.get(links[i])
        if j is None:
            return None
        q = lf[:, j]
        m = q.max()
        return q * (peak[i] / m) if m > 0 else None

    def node_hydrograph(n, stat_peak):
        j = s_nodes.get(n)
        if j is None:
            return None
        q = nf[:, j]
        m = q.max()
        return q * (stat_peak / m) if m > 0 else None

    link_q = {}
    shapes: dict = {}
    out = ScreenResult()
    for n in nodes:
        sh, _ = connection_shape(model, n, peaking)
        key_sh = tuple(np.round(sh, 12))
        shapes.setdefault(key_sh, np.asarray(sh, float))
        sh = shapes[key_sh] / GPD_PER_CFS  # cfs per gpd, by clock hour
        try:
            tau = nx.single_source_dijkstra_path_length(g, n, weight="tt")
        except nx.NodeNotFound:
            tau = {n: 0.0}
        cands: list[tuple[float, str]] = []

        def s_of(t_hr, sh=sh):
            hours = np.floor(np.mod(clock - t_hr, 24.0)).astype(int)
            return sh[hours]

        for u, t_hr in tau.items():
            for _, v, data in g.out_edges(u, data=True):
                i = lidx.get(data["link"])
                if i is None or not np.isfinite(qlim[i]):
                    continue
                if i not in link_q:
                    link_q[i] = link_hydrograph(i)
                q = link_q[i]
                if q is None:
                    gs = (qlim[i] - peak[i]) / sh.max()
                else:
                    s = s_of(t_hr)
                    gs = float(np.min((qlim[i] - q) / s))
                cands.append((max(gs, 0.0), ("fm|" if fm[i] else "dD|") + links[i]))
        judged = judged_of(n)
        outs = list(dict.fromkeys(judged["outlets"]))
        if judged.get("plant") and judged["plant"] not in outs:
            outs.append(judged["plant"])
        for o in outs:
            if o not in tau or o not in nidx:
                continue
            qb = float(before.max_inflow_cfs.values[nidx[o]])
            lim = qb * (1 + c.outlet_peak_tol_pct / 100.0)
            q = node_hydrograph(o, qb)
            if q is None:
                gs = (lim - qb) / sh.max()
            else:
                gs = float(np.min((lim - q) / s_of(tau[o])))
            cands.append((max(gs, 0.0), f"peak|{o}"))
        for o in judged["cso_outfalls"]:
            if o not in tau or o not in s_nodes or o not in before.outfall.values:
                continue
            vb = float(before.volume_cf.sel(outfall=o))
            margin = max(vb * c.cso_volume_tol_pct / 100.0, c.cso_volume_tol_cf)
            spill = nf[:, s_nodes[o]] > OVERFLOW_CFS
            per_gpd = float(np.sum(s_of(tau[o])[spill])) * dt_s  # ft3 of added overflow per gpd
            if per_gpd > 0:
                cands.append((margin / per_gpd, f"cso|{o}"))
        cands.sort()
        out.detail[n] = [(k, v) for v, k in cands[:3]]
        if cands:
            out.gpd[n], out.key[n] = cands[0]
        else:
            out.gpd[n], out.key[n] = math.inf, ""
    return out
