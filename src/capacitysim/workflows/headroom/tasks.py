"""The SWMM runs of a headroom search: the network shipped to the workers, the run before, one connection.

Every run is exactly the pair ``capacitysim capacity --model M --storm S --connect NODE=GPD
[--remediate ...] [--criteria F] [--plant P] [--spinup-hr H] [--peaking F]`` runs and judges: the
edits come from :func:`capacitysim.workflows.demonstration.scenario_edits` (spin-up, storm, the
connection, the remediations, the split between the two runs), the scenario files from
:func:`capacitysim.network.scenario.write_scenario`, the run from
:func:`capacitysim.network.engine.run_inp` (a fresh child process, ``THREADS 1``), and the verdict
from capacity's one judgement (:func:`capacitysim.workflows.judgement.judge_change`: the element checks,
injected volumes, the storm's rain, the model's noise, the initial state). The run *before* (storm and remediated sources, no
connection) does not depend on the connection: one per storm (:func:`before_task`), shared by
every node's runs (:func:`point_task`).

The network travels to the workers once (a :class:`HeadroomNetwork`, scattered); each worker writes
the model text to its own temporary folder the first time (the sweep's
:func:`capacitysim.workflows.sweep.network_tasks._local_model`).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import shutil
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from capacitysim.rules.capacity import Criteria
from capacitysim.units import HOURS_PER_DAY, SECONDS_PER_HOUR
from capacitysim.workflows.headroom.margins import check_key, margin_ratios, top_ratios
from capacitysim.workflows.sweep.network_tasks import NetworkBundle, _local_model

#: Ratios returned per run (the elements nearest to failing): what the search extrapolates from.
TOP_RATIOS = 24


@dataclass(frozen=True)
class HeadroomNetwork:
    """Everything a worker needs to run connections on one network (sent once per worker)."""

    bundle: NetworkBundle  # model text, basins, plant, CSO outfalls, spin-up (its storm is unused: per task)
    criteria: dict
    remediations: tuple = ()  # Remediation / SourceRemoval edits of every run, as --remediate gives them
    peaking: str | float = "pattern"
    #: the credit bank's commitments (Connection edits, capacitysim.workflows.committed.committed_connections),
    #: placed by demonstration.scenario_edits as capacity --committed places them (program policy committed_baseline)
    committed: tuple = ()
    #: measured I/I (issue 29): (before, after) MeasuredRdii pairs of every run, as capacity --measured-ii places them
    measured: tuple = ()

    @property
    def sha(self) -> str:
        return self.bundle.sha


def make_network(model, model_path, *, plant: str | None = None, criteria: Criteria | None = None,
                 remediations=(), peaking="pattern", spinup_hr: float | None = None,
                 timeout_s: float | None = None, committed=(), measured=()) -> HeadroomNetwork:
    """The network of a headroom run from plain arguments (the sweep's ``make_bundle`` takes a SweepSpec).

    ``model`` is the model :func:`capacitysim.network.model.load_model` opened (never parsed again);
    ``remediations`` are ``--remediate`` specs (parsed as ``capacitysim capacity`` parses them) or
    parsed edits; ``committed`` the credit bank's commitments as connection edits
    (:func:`capacitysim.workflows.committed.committed_connections`), placed by
    :func:`capacitysim.workflows.demonstration.scenario_edits` as ``capacity --committed`` places them;
    ``measured`` the (before, after) :class:`~capacitysim.network.scenario.MeasuredRdii` pairs of measured I/I
    (:func:`capacitysim.workflows.measured_ii.measured_ii_edits`), placed the same way.
    """
    from capacitysim.network.basins import find_basins
    from capacitysim.network.inp_text import prepare_inp_text
    from capacitysim.network.model import read_model_text
    from capacitysim.workflows.demonstration import choose_plant, parse_remediation

    plant_id, _ = choose_plant(model, plant)
    basins = find_basins(model, None, plant_id)
    rems = tuple(parse_remediation(r, basins, model) if isinstance(r, str) else r for r in remediations)
    outfalls = set(model.node_ids_of("OUTFALLS"))
    text = prepare_inp_text(read_model_text(model_path), Path(model_path).resolve().parent, None)
    bundle = NetworkBundle(
        name=Path(model_path).name, inp_text=text, sha=hashlib.sha256(text.encode("latin-1")).hexdigest()[:16],
        plant=plant_id or "", basins=tuple(basins), cso_outfalls=tuple(sorted(outfalls - {plant_id})),
        storm=None, timeout_s=timeout_s, spinup_hr=spinup_hr)
    return HeadroomNetwork(bundle, (criteria or Criteria()).to_dict(), rems, peaking, tuple(committed), tuple(measured))


def judged_for(net: HeadroomNetwork, node: str | None) -> dict:
    """``outlets``, ``plant``, ``cso_outfalls`` that :func:`~capacitysim.rules.capacity.judge` uses for a
    connection at ``node`` (:func:`capacitysim.workflows.demonstration.judged_elements`)."""
    from capacitysim.network.scenario import Connection
    from capacitysim.workflows.demonstration import judged_elements

    conns = [Connection(node, 1.0)] if node is not None else []
    return judged_elements(list(net.bundle.basins), conns)


def _edits(net: HeadroomNetwork, model, storm, node: str | None, gpd: float, spinup_hr: float | None = None):
    from capacitysim.network.scenario import Connection
    from capacitysim.workflows.demonstration import scenario_edits

    conns = [Connection(node, float(gpd), net.peaking)] if node is not None else []
    return scenario_edits(model, storm, conns, list(net.remediations),
                          spinup_hr=net.bundle.spinup_hr if spinup_hr is None else spinup_hr,
                          committed=list(net.committed), measured=list(net.measured))


def _run(net: HeadroomNetwork, edits: list, series_nodes=(), stop_rule: dict | None = None, with_run=None):
    """Write and run one scenario; (results Dataset, scenario record, series or None, what stopped it or None,
    what ``with_run(run, inp, folder)`` returned, called before the run's folder is removed, or None)."""
    from capacitysim.network.engine import read_results, run_inp
    from capacitysim.network.scenario import ReportNodes, write_scenario

    model = _local_model(net.bundle)
    tmp = tempfile.mkdtemp(prefix="capsim-headroom-")
    try:
        inp = Path(tmp) / "src" / "scenario.inp"
        inp.parent.mkdir(parents=True)
        if series_nodes:  # saved in the .out for the screen; adding names changes no result (ReportNodes)
            edits = list(edits) + [ReportNodes(tuple(series_nodes))]
        record = write_scenario(model, edits, inp)
        run = run_inp(inp, Path(tmp) / "run", timeout_s=net.bundle.timeout_s, origin=model.path, stop_rule=stop_rule)
        ds = read_results(run)
        series = read_series(run, series_nodes) if series_nodes else None
        stopped = json.loads(run.stats.read_text(encoding="utf-8")).get("stopped") if stop_rule is not None else None
        kept = with_run(ds, run, inp, Path(tmp)) if with_run is not None else None
        return ds, record, series, stopped, kept
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def read_series(run, nodes) -> dict:
    """Reporting-step series of a run: the flow of every link the ``.out`` holds and the total inflow of ``nodes``.

    Returns ``clock_hr`` (hours from midnight of the first reported day, at the end of each
    period), ``links`` and ``link_flow_cfs`` (periods x links), ``nodes`` and ``node_inflow_cfs``,
    ``out_start`` (ISO date-time the periods count from) and ``step_s`` (the reporting step [s]).
    """
    from swmm.toolkit import output as O
    from swmm.toolkit import shared_enum as E

    from capacitysim.network.engine import out_element_names, unit_factors

    names = out_element_names(run.out)
    h = O.init()
    O.open(h, str(run.out))
    try:
        flow_units = E.FlowUnits(O.get_units(h)[1]).name
        n = O.get_times(h, E.Time.NUM_PERIODS)
        step_s = O.get_times(h, E.Time.REPORT_STEP)
        start = _dt.datetime(1899, 12, 30) + _dt.timedelta(days=O.get_start_date(h))
        f = unit_factors(flow_units)["flow"]
        links = names["link"]
        lf = np.zeros((n, len(links)))
        if links:
            for p in range(n):
                lf[p] = np.asarray(O.get_link_attribute(h, p, E.LinkAttribute.FLOW_RATE), float)
        idx = {k: i for i, k in enumerate(names["node"])}
        have = [x for x in dict.fromkeys(nodes) if x in idx]
        nf = np.zeros((n, len(have)))
        for j, x in enumerate(have):
            nf[:, j] = np.asarray(O.get_node_series(h, idx[x], E.NodeAttribute.TOTAL_INFLOW, 0, n), float)
    finally:
        O.close(h)
    midnight = start.replace(hour=0, minute=0, second=0, microsecond=0)
    clock = ((start - midnight).total_seconds() + step_s * (np.arange(n) + 1)) / 3600.0
    return {"clock_hr": clock, "links": list(links), "link_flow_cfs": np.abs(lf) * f, "nodes": have,
            "node_inflow_cfs": nf * f, "out_start": start.isoformat(), "step_s": float(step_s)}


def before_task(net: HeadroomNetwork, storm, series_nodes=(), noise: bool = True) -> dict:
    """Dask task: the run before of one storm (no connection), with what every run after is judged against.

    Returns the Dataset, its scenario record, its series, the spin-up the runs use (program policy
    ``initial_state``, :func:`capacitysim.workflows.judgement.initial_state`: with the default spin-up, a
    model whose event is its initial state runs from its own start, as ``capacitysim capacity`` runs it),
    the noise measure (:func:`capacitysim.workflows.judgement.refined_runs`, made once here for every
    connection's run; not with ``noise=False``, a screening, which judges no run) and, for a model without
    subcatchments, the scenario the engine ran (its RDII rain).
    """
    from capacitysim.workflows.judgement import shared_before

    t0 = time.perf_counter()
    model = _local_model(net.bundle)

    def run(spin, with_run):
        before_edits, _ = _edits(net, model, storm, None, 0.0, spinup_hr=spin)
        ds, record, series, _, kept = _run(net, before_edits, series_nodes, with_run=with_run)
        return ds, record, series, kept

    c = Criteria.from_dict(net.criteria)
    out = shared_before(run, model, c if noise else replace(c, noise_factor=0.0), spinup_hr=net.bundle.spinup_hr,
                        timeout_s=net.bundle.timeout_s)
    out["series"] = series = out.pop("extra")
    if storm is not None:  # the rain is the same in every run of the storm: judged once here (the runner distrusts
        # the storm, and no run of it stops early on a failure the full judgement would call untrusted)
        from capacitysim.workflows.judgement import storm_check

        scn = out.get("scenario")
        problems = storm_check(out["ds"], out["ds"], storm, Criteria.from_dict(net.criteria), {},
                               None if scn is None else {"before": scn, "after": scn})[1]
        out["storm_problems"] = [p for p in problems if p.startswith("the before run")]
    out["seconds"] = time.perf_counter() - t0
    out["response_end_hr"] = response_end_hr(out["ds"], series, net.bundle.cso_outfalls) if series is not None else None
    return out


def point_task(net: HeadroomNetwork, storm, before: dict, node: str, gpd: float, tag=None, stop_early: bool = False) -> dict:
    """Dask task: one connection of ``gpd`` at ``node`` under ``storm``, judged as ``capacitysim capacity`` judges it.

    Returns a small record: ``verdict`` (pass, fail, untrusted, or error when the run raised),
    ``governing`` (the failed check with the largest share of its margin used, as a dict), ``failed``
    (number of failed checks), ``ratios`` (the :data:`TOP_RATIOS` largest
    :func:`~capacitysim.workflows.headroom.margins.margin_ratios`), ``untrusted_reasons``, ``seconds``.
    """
    t0 = time.perf_counter()
    try:
        return _point(net, storm, before, node, gpd, tag, t0, stop_early)
    except Exception as exc:  # noqa: BLE001 - recorded, never lost: the search of other nodes goes on
        return {"tag": tag, "node": node, "gpd": float(gpd), "verdict": "error", "message": f"{type(exc).__name__}: {exc}"[:400],
                "governing": None, "failed": 0, "ratios": {}, "untrusted_reasons": [], "seconds": time.perf_counter() - t0}


def _noise(before: dict):
    from capacitysim.workflows.judgement import shared_noise

    return None if before.get("noise") is None else shared_noise(before["noise"])


def _point(net, storm, before, node, gpd, tag, t0, stop_early=False) -> dict:
    from capacitysim.network.model import parse_inp
    from capacitysim.workflows.demonstration import split_committed
    from capacitysim.workflows.judgement import judge_change

    model = _local_model(net.bundle)
    _, after_edits = _edits(net, model, storm, node, gpd, spinup_hr=before.get("spinup_hr"))
    b = before["ds"]
    c = Criteria.from_dict(net.criteria)
    judged = judged_for(net, node)
    rule = None
    downstream = downstream_of(net, model, node)
    if stop_early and before.get("response_end_hr") is not None:
        rule = stop_rule(b, c, judged, downstream, before["response_end_hr"])
    scenario = before.get("scenario")

    def keep(ds, run, inp, folder):  # the scenario the engine ran, for the RDII rain of a model without catchments
        return None if scenario is None or storm is None else parse_inp(inp)

    after, record, _, stopped, after_scn = _run(net, after_edits, stop_rule=rule, with_run=keep)
    if stopped is not None:
        out = _stopped_point(b, after, c, judged, node, gpd, tag, t0, stopped, downstream, before)
        if out is not None:
            return out
        # the engine's threshold and the judge disagree (units rounding, or the change is within the noise):
        # run it to its end
        after, record, _, stopped, after_scn = _run(net, after_edits, with_run=keep)
    # as run_demonstration: the sources removed are those of the run before; the record's connections are the
    # searched one, the commitments listed apart (injection_checks checks both)
    record["removed_sources"] = before["record"]["sources"]
    split_committed(record)
    j = judge_change(model, b, after, record, c, judged=judged, noise=_noise(before), storm=storm,
                     scenarios=None if after_scn is None else {"before": scenario, "after": after_scn},
                     initial_state_problem=before.get("initial_state_problem"))
    ratios = margin_ratios(b, after, c, **judged)
    failed = [ch for ch in j.failed if check_key(ch) is not None]
    bounding = failed
    if not failed and j.within_noise_only:  # what bounds the flow: the changes past a limit within the noise
        bounding = [ch for ch in j.checks if ch.passed is None and check_key(ch) is not None]
    gov = max(bounding, key=lambda ch: ratios.get(check_key(ch), -math.inf)) if bounding else None
    return {"tag": tag, "node": node, "gpd": float(gpd), "verdict": j.verdict, "message": "",
            "governing": None if gov is None else {**_check_dict(gov), "ratio": ratios.get(check_key(gov))},
            "failed": len(failed), "ratios": top_ratios(ratios, TOP_RATIOS), "untrusted_reasons": j.untrusted[:5],
            "within_noise": j.within_noise_only,
            "seconds": time.perf_counter() - t0, "stopped_hr": None, "simulated_hr": simulated_hr(after)}


def _check_dict(ch) -> dict:
    def num(x):
        return None if x is None or not math.isfinite(float(x)) else float(x)

    return {"criterion": ch.criterion, "element": ch.element, "value": num(ch.after), "before": num(ch.before),
            "limit": num(ch.limit), "unit": ch.unit}


# ----------------------------------------------------------------------------------------------
# runs that stop once their failure is certain
# ----------------------------------------------------------------------------------------------
#: Hours after the run before's last peak (every link's flow, every judged inflow) before a run may stop.
SETTLE_HR = 2.0
#: Routing steps between two looks at the stop rule's statistics (about 5 minutes of a 10 s step).
STOP_EVERY_STEPS = 30


def _hours_between(a_iso: str, b_iso: str) -> float:
    return (_dt.datetime.fromisoformat(b_iso) - _dt.datetime.fromisoformat(a_iso)).total_seconds() / SECONDS_PER_HOUR


def simulated_hr(ds) -> float | None:
    """Hours a complete run of ``ds``'s scenario simulates (its start to its end)."""
    a, b = ds.attrs.get("simulation_start"), ds.attrs.get("simulation_end")
    return _hours_between(a, b) if a and b else None


def response_end_hr(before, series, cso_outfalls=()) -> float:
    """Policy STORM_RESPONSE_WINDOW: hours from the simulation's start after which the storm's response has passed.

    The latest of: the time of each link's largest flow and of each judged inflow's (the basin
    outlets, the plant) in the run before's reporting-step series, plus :data:`SETTLE_HR`; the end
    of the last period a CSO outfall received flow. A run may stop only after it (so the values it
    reports are those of the storm's peak, as a complete run's), and only when its failure is certain
    (:func:`stop_rule`).
    """
    start = _dt.datetime.fromisoformat(series["out_start"])
    sim0 = _dt.datetime.fromisoformat(before.attrs["simulation_start"])
    step_h = series["step_s"] / SECONDS_PER_HOUR
    offset = (start - sim0).total_seconds() / SECONDS_PER_HOUR
    ends = np.arange(1, len(series["clock_hr"]) + 1) * step_h + offset  # end of each period [hr from the start]
    t = 0.0
    for q in (series["link_flow_cfs"], series["node_inflow_cfs"]):
        if q.size:
            t = max(t, float(ends[np.argmax(q, axis=0)].max()) + SETTLE_HR)
    cso = set(cso_outfalls)
    for j, n in enumerate(series["nodes"]):
        q = series["node_inflow_cfs"][:, j]
        if n in cso and (q > 0).any():
            t = max(t, float(ends[np.flatnonzero(q > 0)[-1]]))
    return t


_DOWNSTREAM: dict = {}


def downstream_of(net: HeadroomNetwork, model, node: str) -> tuple[set, set]:
    """(nodes, links) downstream of ``node`` (the node itself included), by the links' from -> to direction."""
    g = _DOWNSTREAM.get(net.sha)
    if g is None:
        import networkx as nx

        g = nx.DiGraph()
        for lid, _, n1, n2, _ in model.links():
            g.add_edge(n1, n2, link=lid)
        _DOWNSTREAM.clear()
        _DOWNSTREAM[net.sha] = g
    if node not in g:
        return {node}, set()
    import networkx as nx

    nodes = {node} | nx.descendants(g, node)
    links = {d["link"] for u, v, d in g.edges(data=True) if u in nodes}
    return nodes, links


def stop_rule(before, c: Criteria, judged: dict, downstream: tuple[set, set], not_before_hr: float) -> dict:
    """Thresholds (model units) past which :func:`capacitysim.rules.capacity.judge` fails the run, whatever follows.

    Policy FAIL_WHEN_CERTAIN: the limits are judge's own (:func:`capacitysim.rules.capacity.capacity_limits`),
    each put on an engine statistic that never decreases during a run (a node's max depth and max
    inflow, its flooded volume, an outfall's inflow volume, a link's max depth and max flow), so a
    run that exceeds one has failed that check at its end too: it stops there (after
    :func:`response_end_hr`). Looked at: the nodes and links downstream of the connection (flooding,
    freeboard or a sealed junction's limit, storage fill as a depth, d/D as a depth, force-main
    q/Qfull as a flow), the judged basin outlets and plant (peak inflow), the judged CSO outfalls
    (volume). A pump's time off its curve (a share of the whole run) is never a reason to stop.
    """
    from capacitysim.network.engine import unit_factors
    from capacitysim.rules.capacity import capacity_limits

    f = unit_factors(before.attrs["flow_units"])
    dn, dl = downstream
    ntype = before.node_type.values
    rim = before.rim_depth_ft.values
    fd, ff = before.full_depth_ft.values, before.full_flow_cfs.values
    depth: dict[str, float] = {}
    out = {"node_vol_flooded": [], "node_max_inflow": [], "node_total_inflow": [], "link_max_depth": [], "link_max_flow": []}
    for lim in capacity_limits(before, c, **judged):
        for k, ident in enumerate(lim.ids):
            ident, thr = str(ident), float(lim.limit[k] + lim.slack)
            i = None if lim.index is None else int(lim.index[k])
            if not math.isfinite(thr):
                continue
            if lim.key in ("flood", "freeboard", "storage"):
                if ident not in dn or ntype[i] == "OUTFALL":
                    continue
                if lim.key == "flood":
                    out["node_vol_flooded"].append([ident, thr / f["volume"]])
                else:  # the depth past which the node fails (storage: its fill times its full depth)
                    d = thr * rim[i] if lim.key == "storage" else thr
                    depth[ident] = min(depth.get(ident, math.inf), d)
            elif lim.key in ("dD", "fm"):
                full = fd[i] if lim.key == "dD" else ff[i]
                if ident in dl and math.isfinite(full) and full > 0:
                    key = "link_max_depth" if lim.key == "dD" else "link_max_flow"
                    out[key].append([ident, thr * full / (f["length"] if lim.key == "dD" else f["flow"])])
            elif lim.key == "peak":
                out["node_max_inflow"].append([ident, thr / f["flow"]])
            elif lim.key == "cso":
                out["node_total_inflow"].append([ident, thr / f["volume"]])
    return {"not_before_days": not_before_hr / HOURS_PER_DAY, "every_steps": STOP_EVERY_STEPS,
            "node_max_depth": [[n, d / f["length"]] for n, d in depth.items()], **out}


def _stopped_point(b, after, c, judged, node, gpd, tag, t0, stopped, downstream=None, before=None) -> dict | None:
    """The record of a run the stop rule ended: ``fail`` on its capacity checks (None when judge finds none).

    Only failures the full judgement would keep count (:func:`capacitysim.workflows.judgement.judge_change`):
    at the elements the stop rule watches (downstream of the connection, the judged outlets: all within the
    change's reach) and beyond the model's numerical noise (program policy ``noise_floor``, the run before's
    noise measure); a stopped run whose failures are all within the noise is run to its end instead.
    """
    from capacitysim.rules.capacity import OUTLET_KEYS, judge, separate_noise

    if before is not None and (before.get("initial_state_problem") or before.get("storm_problems")):
        return None  # the full judgement would say untrusted: no failure is claimed from a stopped run
    checks = judge(b, after, c, **judged)
    failed = [ch for ch in checks if ch.passed is False and check_key(ch) is not None and not check_key(ch).startswith("pump|")]
    if downstream is not None:
        dn, dl = downstream
        failed = [ch for ch in failed if check_key(ch).split("|")[0] in OUTLET_KEYS or ch.element in dn or ch.element in dl]
    if failed and before is not None and before.get("noise") is not None and c.noise_factor > 0 \
            and before["noise"][0] is not None:
        kept, _ = separate_noise(failed, b, after, before["noise"][0], c, **judged)
        failed = [ch for ch in kept if ch.passed is False]
    if not failed:
        return None
    ratios = margin_ratios(b, after, c, **judged)
    gov = max(failed, key=lambda ch: ratios.get(check_key(ch), -math.inf))
    hr = float(stopped["elapsed_days"]) * HOURS_PER_DAY
    return {"tag": tag, "node": node, "gpd": float(gpd), "verdict": "fail", "message": "",
            "governing": {**_check_dict(gov), "ratio": ratios.get(check_key(gov)), "stopped_hr": hr},
            "failed": len(failed), "ratios": top_ratios(ratios, TOP_RATIOS), "untrusted_reasons": [],
            "seconds": time.perf_counter() - t0, "stopped_hr": hr, "simulated_hr": hr}
