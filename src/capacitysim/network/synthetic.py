"""Generator of realistic synthetic sanitary networks (SWMM 5 ``.inp``) of a chosen size.

A network is a random dendritic tree of manholes draining to an interceptor and the plant
outfall, with:

* manholes with rim and invert elevations (ground rising upstream, 6-14 ft of cover to invert);
* circular pipes of standard diameters (8-48 in) sized by Manning's equation for their design
  flow, at slopes no flatter than the Ten States Standards minimums (sec. 33.41);
* dry-weather flow per manhole from a served population (100 gpcd, Ten States Standards
  sec. 11.243) with a residential diurnal pattern (hourly multipliers with mean 1);
* RDII per sewershed (three RTK unit hydrographs, one per quarter of the network's branches),
  sewer areas of 2-8 ac per manhole;
* one pump station (wet well + pump with a depth-flow curve) lifting a branch into the trunk;
* one CSO regulator (a transverse weir at a trunk manhole discharging to a CSO outfall);
* the plant outfall at the end of the interceptor;
* a rain gauge carrying the Binghamton 1-yr 24-h Type II storm (2.1 in, 6-min steps), so the
  model's own rainfall is the program's design storm.

Design flow of a pipe = Harmon peaking factor x tributary average DWF + ``rdii_design_ratio`` x
the tributary's peak RDII under the design storm; pipes are sized so the design flow is at most
``design_fill`` of full-pipe capacity. A ratio below 1 leaves the network slightly short for the
storm, which is what a capacity demonstration has to look at.

References
----------
.. [1] Great Lakes-Upper Mississippi River Board (2014). Recommended Standards for Wastewater
   Facilities (Ten States Standards): 11.243 (100 gpcd), 33.41 (minimum slopes), 33.94 (Harmon:
   PF = (18 + sqrt(P)) / (4 + sqrt(P)), P in thousands).
.. [2] Manning's equation in U.S. units: Q = (1.486/n) A R^(2/3) S^(1/2) (e.g. SWMM Reference
   Manual Vol. II, eq. 3-4).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from capacitysim.errors import InputError
from capacitysim.files import atomic_write_text
from capacitysim.hydrology.rdii import rtk_hydrograph_cfs
from capacitysim.units import GPD_PER_CFS, INCHES_PER_FOOT, MINUTES_PER_HOUR

#: Manning's constant for U.S. units [ft^(1/3)/s] [2]_.
MANNING_US = 1.486
#: Per-capita average sewage flow [gpd/person], Ten States Standards 11.243 [1]_.
GPCD = 100.0
#: Standard sewer diameters [in].
DIAMETERS_IN = (8, 10, 12, 15, 18, 21, 24, 27, 30, 36, 42, 48, 54, 60)
#: Minimum slopes [ft/ft] by diameter [in], Ten States Standards 33.41 [1]_ (n = 0.013).
MIN_SLOPE = {8: 0.0040, 10: 0.0028, 12: 0.0022, 15: 0.0015, 18: 0.0012, 21: 0.0010, 24: 0.0008,
             27: 0.00067, 30: 0.00058, 36: 0.00046, 42: 0.00037, 48: 0.00032, 54: 0.00027, 60: 0.00023}
#: Residential diurnal pattern, hourly multipliers from midnight (mean 1).
DIURNAL = np.array([0.58, 0.50, 0.45, 0.43, 0.46, 0.62, 0.95, 1.30, 1.45, 1.38, 1.27, 1.18,
                    1.12, 1.06, 1.02, 1.00, 1.05, 1.16, 1.30, 1.35, 1.28, 1.12, 0.92, 0.75])
DIURNAL = DIURNAL / DIURNAL.mean()
#: Three sewershed responses (R, T [hr], K): tight, average and leaky systems.
RTK_SETS = {
    "UH_TIGHT": [(0.010, 1.0, 2.0), (0.012, 4.0, 3.0), (0.010, 10.0, 4.0)],
    "UH_AVERAGE": [(0.018, 1.0, 2.0), (0.018, 4.0, 3.0), (0.015, 10.0, 4.0)],
    "UH_LEAKY": [(0.030, 0.75, 2.0), (0.025, 3.5, 3.0), (0.020, 9.0, 4.0)],
}
MANNING_N = 0.013
#: CSO weir crest height above the regulator invert, as a fraction of the interceptor diameter.
CSO_CREST_FRACTION = 0.5


def harmon_pf(pop: float) -> float:
    """Harmon peaking factor (18 + sqrt(P)) / (4 + sqrt(P)), P in thousands of persons [1]_."""
    p = max(pop, 0.0) / 1000.0
    return (18.0 + math.sqrt(p)) / (4.0 + math.sqrt(p))


def full_flow_cfs(diam_in: float, slope: float, n: float = MANNING_N) -> float:
    """Full-pipe capacity of a circular pipe by Manning [cfs] [2]_."""
    d = diam_in / INCHES_PER_FOOT
    area = math.pi * d * d / 4.0
    return MANNING_US / n * area * (d / 4.0) ** (2.0 / 3.0) * math.sqrt(slope)


@dataclass
class _Node:
    name: str
    parent: int  # index of the downstream node (-1: plant)
    length_ft: float
    pop: float
    area_ac: float
    uh: str
    x: float
    y: float


def design_storm_rain(depth_in: float = 2.1, dt_min: float = 6.0):
    """The Type II 24-h storm as (start of step [hr], depth [in])."""
    from capacitysim.hydrology import design_storm

    h = design_storm(depth_in, "II", dt_min)
    d = np.asarray(h.values, float)
    return np.arange(len(d)) * dt_min / MINUTES_PER_HOUR, d


def generate(n_nodes: int, seed: int = 1, *, duration_hr: float = 48.0, storm_start_hr: float = 6.0,
             rdii_design_ratio: float = 0.5, design_fill: float = 1.0, title: str = "") -> str:
    """Text of a synthetic SWMM model with about ``n_nodes`` nodes (junctions, wet well, outfalls).

    Parameters
    ----------
    n_nodes : int
        Number of nodes, >= 12.
    seed : int
        Random seed (same seed, same model).
    duration_hr : float
        Simulated time [hr]; the storm starts at ``storm_start_hr``.
    rdii_design_ratio : float
        Share of the tributary's peak RDII under the design storm that the pipes are sized for.
    design_fill : float
        Design flow / full-flow capacity when sizing.
    """
    if n_nodes < 12:
        raise InputError(f"n_nodes must be >= 12; got {n_nodes}")
    rng = np.random.default_rng(seed)
    n_j = n_nodes - 3  # + wet well, CSO outfall, plant
    # --- tree: node 0 is the last trunk manhole before the plant; trunk of ~sqrt(n) nodes
    n_trunk = max(4, int(round(math.sqrt(n_j) * 1.5)))
    nodes: list[_Node] = []
    children = [0] * n_j
    uh_names = list(RTK_SETS)
    for i in range(n_j):
        if i < n_trunk:
            parent = i - 1
        else:
            recent = [k for k in range(max(0, i - 6), i) if children[k] < 2]
            pool = recent if (recent and rng.random() < 0.7) else [k for k in range(i) if children[k] < 3]
            parent = int(rng.choice(pool))
        if parent >= 0:
            children[parent] += 1
        length = float(rng.uniform(180, 420))
        nodes.append(_Node(f"MH{i + 1:04d}", parent, length, float(rng.uniform(40, 260)), float(rng.uniform(2, 8)),
                           "", 0.0, 0.0))
    # sewershed of each node: the branch off the trunk it belongs to, grouped into RTK sets
    branch = [0] * n_j
    for i in range(n_j):
        p = nodes[i].parent
        branch[i] = i if (i < n_trunk or p < n_trunk) else branch[p]
    for i, nd in enumerate(nodes):
        nd.uh = "UH_AVERAGE" if i < n_trunk else uh_names[branch[i] % len(uh_names)]
    # coordinates (for maps): trunk along x, branches fanning out
    for i, nd in enumerate(nodes):
        if nd.parent < 0:
            nd.x, nd.y = 0.0, 0.0
        else:
            px, py = nodes[nd.parent].x, nodes[nd.parent].y
            ang = 0.0 if i < n_trunk else float(rng.uniform(-math.pi / 2, math.pi / 2)) + (math.pi / 2 if rng.random() < 0.5 else -math.pi / 2) * 0.5
            nd.x, nd.y = px + nd.length_ft * math.cos(ang), py + nd.length_ft * math.sin(ang)
    # --- pump station: a branch of some size off the trunk drains to a wet well
    sub_sizes = [0] * n_j
    for i in reversed(range(n_j)):
        sub_sizes[i] += 1
        if nodes[i].parent >= 0:
            sub_sizes[nodes[i].parent] += sub_sizes[i]
    branch_roots = [i for i in range(n_trunk, n_j) if nodes[i].parent < n_trunk]
    target = max(3, n_j // 8)
    ps_root = min(branch_roots, key=lambda i: abs(sub_sizes[i] - target)) if branch_roots else n_trunk
    # --- flows, design and sizing from upstream to downstream
    rain_t, rain_in = design_storm_rain()
    peak_per_ac = {k: rtk_hydrograph_cfs(v, 1.0, rain_t, rain_in).max() for k, v in RTK_SETS.items()}
    pop = np.array([nd.pop for nd in nodes])
    adf = pop * GPCD / GPD_PER_CFS  # cfs
    cum_pop = pop.copy()
    cum_adf = adf.copy()
    cum_rdii = np.array([peak_per_ac[nd.uh] * nd.area_ac for nd in nodes])
    for i in reversed(range(n_j)):
        p = nodes[i].parent
        if p >= 0:
            cum_pop[p] += cum_pop[i]
            cum_adf[p] += cum_adf[i]
            cum_rdii[p] += cum_rdii[i]
    diam = np.zeros(n_j)
    slope = np.zeros(n_j)
    for i in range(n_j):
        q = harmon_pf(cum_pop[i]) * cum_adf[i] + rdii_design_ratio * cum_rdii[i]
        s = float(rng.uniform(0.004, 0.012)) if i >= n_trunk else float(rng.uniform(0.0012, 0.0025))
        for d in DIAMETERS_IN:
            s_use = max(s, MIN_SLOPE[d] * 1.05)
            if full_flow_cfs(d, s_use) * design_fill >= q:
                break
        diam[i], slope[i] = d, s_use
        if i >= n_trunk and nodes[i].parent >= 0:
            pass
    # pipes never get smaller downstream
    for i in range(n_j):
        for _ in range(1):
            p = nodes[i].parent
            if p >= 0 and diam[p] < diam[i]:
                diam[p] = diam[i]
    for i in reversed(range(n_j)):
        p = nodes[i].parent
        if p >= 0 and diam[p] < diam[i]:
            diam[p] = diam[i]
            slope[p] = max(slope[p], MIN_SLOPE[int(diam[p])] * 1.05)
    # --- elevations: inverts from the plant upward; crowns matched at junctions
    plant_inv = 100.0
    inv_out = np.zeros(n_j)  # invert of the pipe leaving node i (= node invert)
    node_inv = np.zeros(n_j)
    ground = np.zeros(n_j)
    drop_ft = 0.1
    for i in range(n_j):
        p = nodes[i].parent
        down_inv = (plant_inv + 0.5) if p < 0 else node_inv[p] + drop_ft + max(0.0, (diam[p] - diam[i]) / INCHES_PER_FOOT)
        if i == ps_root:
            down_inv = node_inv[p] + drop_ft  # force main discharge; the branch itself rises from the wet well
        node_inv[i] = down_inv + slope[i] * nodes[i].length_ft
    cover = rng.uniform(7.0, 13.0, n_j)
    for i in range(n_j):
        ground[i] = node_inv[i] + cover[i] + diam[i] / INCHES_PER_FOOT
    # the pump station branch root discharges via force main; its own sewer drains into the wet well
    ww_inv = node_inv[ps_root] - 6.0
    # --- CSO regulator at a trunk manhole about 1/3 of the way up the trunk
    reg = max(1, n_trunk // 3)
    cso_pipe = nodes[reg].parent  # the interceptor leaving the regulator is node reg's outlet pipe

    q_ps_design = harmon_pf(cum_pop[ps_root]) * cum_adf[ps_root] + rdii_design_ratio * cum_rdii[ps_root]
    lines: list[str] = []
    add = lines.append
    add("[TITLE]")
    add(title or f"Synthetic sanitary network, {n_nodes} nodes, seed {seed} (capacitysim.network.synthetic)")
    add("")
    end_day, end_hr = divmod(duration_hr, 24.0)
    add("[OPTIONS]")
    for k, v in [("FLOW_UNITS", "CFS"), ("INFILTRATION", "HORTON"), ("FLOW_ROUTING", "DYNWAVE"), ("LINK_OFFSETS", "DEPTH"),
                 ("MIN_SLOPE", "0"), ("ALLOW_PONDING", "NO"), ("SKIP_STEADY_STATE", "NO"),
                 ("START_DATE", "06/01/2024"), ("START_TIME", "00:00:00"), ("REPORT_START_DATE", "06/01/2024"),
                 ("REPORT_START_TIME", "00:00:00"), ("END_DATE", f"06/{1 + int(end_day):02d}/2024"),
                 ("END_TIME", f"{int(end_hr):02d}:00:00"), ("SWEEP_START", "01/01"), ("SWEEP_END", "12/31"), ("DRY_DAYS", "0"),
                 ("REPORT_STEP", "00:05:00"), ("WET_STEP", "00:06:00"), ("DRY_STEP", "00:06:00"), ("ROUTING_STEP", "0:00:10"),
                 ("RULE_STEP", "00:00:00"), ("INERTIAL_DAMPING", "PARTIAL"), ("NORMAL_FLOW_LIMITED", "BOTH"),
                 ("FORCE_MAIN_EQUATION", "H-W"), ("VARIABLE_STEP", "0.75"), ("LENGTHENING_STEP", "0"), ("MIN_SURFAREA", "12.566"),
                 ("MAX_TRIALS", "8"), ("HEAD_TOLERANCE", "0.005"), ("SYS_FLOW_TOL", "5"), ("LAT_FLOW_TOL", "5"),
                 ("MINIMUM_STEP", "0.5"), ("THREADS", "1")]:
        add(f"{k:<20} {v}")
    add("")
    add("[EVAPORATION]\nCONSTANT         0.0\nDRY_ONLY         NO\n")
    add("[RAINGAGES]\n;;Name  Format  Interval  SCF  Source")
    add("RG1  VOLUME  0:06  1.0  TIMESERIES  DESIGN_STORM\n")
    add("[JUNCTIONS]\n;;Name  Elevation  MaxDepth  InitDepth  SurDepth  Aponded")
    for i, nd in enumerate(nodes):
        add(f"{nd.name:<10} {node_inv[i]:.3f} {ground[i] - node_inv[i]:.3f} 0 0 0")
    add("")
    add("[OUTFALLS]\n;;Name  Elevation  Type  StageData  Gated")
    add(f"PLANT      {plant_inv:.3f} FREE  NO")
    cso_inv = node_inv[reg] - 4.0
    add(f"CSO1       {cso_inv:.3f} FREE  NO")
    add("")
    add("[STORAGE]\n;;Name  Elev  MaxDepth  InitDepth  Shape  Area  0  0  SurDepth  Fevap")
    add(f"PS1_WW     {ww_inv:.3f} 14 2 FUNCTIONAL 0 0 {max(200.0, 400.0 * q_ps_design):.0f} 0 0")
    add("")
    add("[CONDUITS]\n;;Name  From  To  Length  Roughness  InOffset  OutOffset  InitFlow  MaxFlow")
    xs = []
    for i, nd in enumerate(nodes):
        if i == ps_root:
            to = "PS1_WW"
            length = nd.length_ft
            out_off = max(0.0, node_inv[i] - slope[i] * length - ww_inv)
        else:
            to = "PLANT" if nd.parent < 0 else nodes[nd.parent].name
            length = nd.length_ft
            down_node_inv = plant_inv if nd.parent < 0 else node_inv[nd.parent]
            out_off = max(0.0, node_inv[i] - slope[i] * length - down_node_inv)
        add(f"P{i + 1:04d}      {nd.name:<10} {to:<10} {length:.1f} {MANNING_N} 0 {out_off:.3f} 0 0")
        xs.append((f"P{i + 1:04d}", "CIRCULAR", diam[i] / INCHES_PER_FOOT))
    # force main from the wet well to the manhole the branch used to join
    fm_to = nodes[nodes[ps_root].parent].name if nodes[ps_root].parent >= 0 else "PLANT"
    add("")
    add("[PUMPS]\n;;Name  From  To  Curve  Status  Startup  Shutoff")
    add(f"PS1_PUMP   PS1_WW     {fm_to:<10} PS1_CURVE ON 0 0")  # no on/off cycling: a variable-speed station (PUMP4)
    add("")
    add("[WEIRS]\n;;Name  From  To  Type  CrestHt  Qcoeff  Gated  EndCon  EndCoeff  Surcharge")
    crest = CSO_CREST_FRACTION * diam[reg] / INCHES_PER_FOOT  # crest above the regulator invert
    add(f"CSO1_WEIR  {nodes[reg].name:<10} CSO1       TRANSVERSE {crest:.3f} 3.33 NO 0 0 YES")
    add("")
    add("[XSECTIONS]\n;;Link  Shape  Geom1  Geom2  Geom3  Geom4  Barrels  Culvert")
    for name, shape, g1 in xs:
        add(f"{name:<10} {shape} {g1:.4f} 0 0 0 1")
    add(f"CSO1_WEIR  RECT_OPEN {max(2.0, diam[reg] / INCHES_PER_FOOT):.3f} 4 0 0")
    add("")
    add("[DWF]\n;;Node  Constituent  Baseline  Patterns")
    for i, nd in enumerate(nodes):
        add(f"{nd.name:<10} FLOW {adf[i]:.6f} \"DIURNAL\"")
    add("")
    add("[HYDROGRAPHS]\n;;Hydrograph  Month  Response  R  T  K  Dmax  Drecov  Dinit")
    for uh, resp in RTK_SETS.items():
        add(f"{uh}  RG1")
        for label, (r, t, k) in zip(("SHORT", "MEDIUM", "LONG"), resp):
            add(f"{uh}  ALL  {label}  {r}  {t}  {k}  0  0  0")
    add("")
    add("[RDII]\n;;Node  UnitHydrograph  SewerArea")
    for i, nd in enumerate(nodes):
        add(f"{nd.name:<10} {nd.uh:<12} {nd.area_ac:.2f}")
    add("")
    add("[CURVES]\n;;Name  Type  X  Y")
    qp = 1.25 * q_ps_design
    add(f"PS1_CURVE  PUMP4  0  0")
    add(f"PS1_CURVE         3  {qp:.4f}")
    add(f"PS1_CURVE         14 {qp:.4f}")
    add("")
    add("[TIMESERIES]\n;;Name  Date  Time  Value")
    add(";Binghamton 1-yr 24-h Type II storm, 2.1 in, 6-min depths [in]")
    for t, d in zip(rain_t, rain_in):
        h = storm_start_hr + t
        add(f"DESIGN_STORM  {int(h)}:{int(round((h - int(h)) * 60)):02d}  {d:.5f}")
    add("")
    add("[PATTERNS]\n;;Name  Type  Multipliers")
    for k in range(0, 24, 6):
        vals = " ".join(f"{v:.4f}" for v in DIURNAL[k:k + 6])
        add(f"DIURNAL  {'HOURLY' if k == 0 else '':<7} {vals}")
    add("")
    add("[REPORT]\nINPUT NO\nCONTROLS NO\nSUBCATCHMENTS NONE\nNODES ALL\nLINKS ALL\n")
    add("[COORDINATES]\n;;Node  X  Y")
    for nd in nodes:
        add(f"{nd.name:<10} {nd.x:.1f} {nd.y:.1f}")
    add(f"PLANT      {-300.0:.1f} 0.0")
    add(f"CSO1       {nodes[reg].x:.1f} {nodes[reg].y - 300.0:.1f}")
    add(f"PS1_WW     {nodes[ps_root].x:.1f} {nodes[ps_root].y + 50.0:.1f}")
    add("")
    return "\n".join(lines) + "\n"


def write_model(path: str | Path, n_nodes: int, seed: int = 1, **kw) -> Path:
    """Generate a model and write it atomically to ``path``."""
    return atomic_write_text(path, generate(n_nodes, seed, **kw))
