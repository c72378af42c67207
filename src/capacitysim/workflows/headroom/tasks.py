"""The SWMM runs of a headroom search: the network shipped to the workers, the run before, one connection.

Every run is exactly the pair ``capacitysim capacity --model M --storm S --connect NODE=GPD
[--remediate ...] [--criteria F] [--plant P] [--spinup-hr H] [--peaking F]`` runs and judges: the
edits come from :func:`capacitysim.workflows.demonstration.scenario_edits` (spin-up, storm, the
connection, the remediations, the split between the two runs), the scenario files from
:func:`capacitysim.network.scenario.write_scenario`, the run from
:func:`capacitysim.network.engine.run_inp` (a fresh child process, ``THREADS 1``), and the verdict
from :func:`capacitysim.rules.capacity.judge` and ``verdict_of`` plus the demonstration's own
conditions of trust (:func:`~capacitysim.workflows.demonstration.injection_checks`, the storm's
simulated rainfall, a model that routes). The run *before* (storm and remediated sources, no
connection) does not depend on the connection: one per storm (:func:`before_task`), shared by
every node's runs (:func:`point_task`).

The network travels to the workers once (a :class:`HeadroomNetwork`, scattered); each worker writes
the model text to its own temporary folder the first time (the sweep's
:func:`capacitysim.workflows.sweep.network_tasks._local_model`).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import math
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from capacitysim.rules.capacity import Criteria
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

    @property
    def sha(self) -> str:
        return self.bundle.sha


def make_network(model, model_path, *, plant: str | None = None, criteria: Criteria | None = None,
                 remediations=(), peaking="pattern", spinup_hr: float | None = None,
                 timeout_s: float | None = None) -> HeadroomNetwork:
    """The network of a headroom run from plain arguments (the sweep's ``make_bundle`` takes a SweepSpec).

    ``model`` is the model :func:`capacitysim.network.model.load_model` opened (never parsed again);
    ``remediations`` are ``--remediate`` specs (parsed as ``capacitysim capacity`` parses them) or
    parsed edits.
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
    return HeadroomNetwork(bundle, (criteria or Criteria()).to_dict(), rems, peaking)


def judged_for(net: HeadroomNetwork, node: str | None) -> dict:
    """``outlets``, ``plant``, ``cso_outfalls`` that :func:`~capacitysim.rules.capacity.judge` uses for a
    connection at ``node`` (:func:`capacitysim.workflows.demonstration.judged_elements`)."""
    from capacitysim.network.scenario import Connection
    from capacitysim.workflows.demonstration import judged_elements

    conns = [Connection(node, 1.0)] if node is not None else []
    return judged_elements(list(net.bundle.basins), conns)


def _edits(net: HeadroomNetwork, model, storm, node: str | None, gpd: float):
    from capacitysim.network.scenario import Connection
    from capacitysim.workflows.demonstration import scenario_edits

    conns = [Connection(node, float(gpd), net.peaking)] if node is not None else []
    return scenario_edits(model, storm, conns, list(net.remediations), spinup_hr=net.bundle.spinup_hr)


def _run(net: HeadroomNetwork, edits: list, series_nodes=()):
    """Write and run one scenario; (results Dataset, scenario record, series or None)."""
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
        run = run_inp(inp, Path(tmp) / "run", timeout_s=net.bundle.timeout_s, origin=model.path)
        ds = read_results(run)
        series = read_series(run, series_nodes) if series_nodes else None
        return ds, record, series
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def read_series(run, nodes) -> dict:
    """Reporting-step series of a run: the flow of every link the ``.out`` holds and the total inflow of ``nodes``.

    Returns ``clock_hr`` (hours from midnight of the first reported day, at the end of each
    period), ``links`` and ``link_flow_cfs`` (periods x links), ``nodes`` and ``node_inflow_cfs``.
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
            "node_inflow_cfs": nf * f}


def before_task(net: HeadroomNetwork, storm, series_nodes=()) -> dict:
    """Dask task: the run before of one storm (no connection): the Dataset, its scenario record, its series."""
    t0 = time.perf_counter()
    model = _local_model(net.bundle)
    before_edits, _ = _edits(net, model, storm, None, 0.0)
    ds, record, series = _run(net, before_edits, series_nodes)
    return {"ds": ds, "record": record, "series": series, "seconds": time.perf_counter() - t0}


def point_task(net: HeadroomNetwork, storm, before: dict, node: str, gpd: float, tag=None) -> dict:
    """Dask task: one connection of ``gpd`` at ``node`` under ``storm``, judged as ``capacitysim capacity`` judges it.

    Returns a small record: ``verdict`` (pass, fail, untrusted, or error when the run raised),
    ``governing`` (the failed check with the largest share of its margin used, as a dict), ``failed``
    (number of failed checks), ``ratios`` (the :data:`TOP_RATIOS` largest
    :func:`~capacitysim.workflows.headroom.margins.margin_ratios`), ``untrusted_reasons``, ``seconds``.
    """
    t0 = time.perf_counter()
    try:
        return _point(net, storm, before, node, gpd, tag, t0)
    except Exception as exc:  # noqa: BLE001 - recorded, never lost: the search of other nodes goes on
        return {"tag": tag, "node": node, "gpd": float(gpd), "verdict": "error", "message": f"{type(exc).__name__}: {exc}"[:400],
                "governing": None, "failed": 0, "ratios": {}, "untrusted_reasons": [], "seconds": time.perf_counter() - t0}


def _point(net, storm, before, node, gpd, tag, t0) -> dict:
    from capacitysim.rules.capacity import judge, verdict_of
    from capacitysim.workflows.demonstration import injection_checks, rainfall_problems

    model = _local_model(net.bundle)
    _, after_edits = _edits(net, model, storm, node, gpd)
    after, record, _ = _run(net, after_edits)
    b = before["ds"]
    c = Criteria.from_dict(net.criteria)
    # as run_demonstration: the sources removed are those of the run before
    record["removed_sources"] = before["record"]["sources"]
    injections = injection_checks(model, b, after, record, c)
    untrusted = [f"{i['what']} at {i['element']}: the engine received {i['received_cf']:,.1f} ft3, "
                 f"{i['difference_pct']:+.2f} % from the intended {i['intended_cf']:,.1f} ft3"
                 for i in injections if not i["passed"]]
    if not b.attrs.get("routing", 1):
        untrusted.append("the model routes no flow (no links, or IGNORE_ROUTING YES)")
    if storm is not None:
        untrusted += rainfall_problems(b, after, storm, c, record)
    judged = judged_for(net, node)
    checks = judge(b, after, c, **judged)
    verdict = verdict_of(b, after, checks, c)
    if untrusted and verdict != "untrusted":
        verdict = "untrusted"
    ratios = margin_ratios(b, after, c, **judged)
    failed = [ch for ch in checks if ch.passed is False and check_key(ch) is not None]
    gov = max(failed, key=lambda ch: ratios.get(check_key(ch), -math.inf)) if failed else None
    if verdict == "untrusted":
        untrusted += [f"{ch.criterion}: {ch.element} {ch.after:.3g} % (limit {ch.limit:g} %)" for ch in checks
                      if ch.passed is False and check_key(ch) is None]
    return {"tag": tag, "node": node, "gpd": float(gpd), "verdict": verdict, "message": "",
            "governing": None if gov is None else {**_check_dict(gov), "ratio": ratios.get(check_key(gov))},
            "failed": len(failed), "ratios": top_ratios(ratios, TOP_RATIOS), "untrusted_reasons": untrusted[:5],
            "seconds": time.perf_counter() - t0}


def _check_dict(ch) -> dict:
    def num(x):
        return None if x is None or not math.isfinite(float(x)) else float(x)

    return {"criterion": ch.criterion, "element": ch.element, "value": num(ch.after), "before": num(ch.before),
            "limit": num(ch.limit), "unit": ch.unit}
