"""The one judgement of a change: two runs (before and after) turned into checks, conditions of trust and a verdict.

A capacity demonstration (:func:`capacitysim.workflows.demonstration.run_demonstration`), each run of a
headroom search (:mod:`capacitysim.workflows.headroom.tasks`), each SWMM scenario of a sweep
(:mod:`capacitysim.workflows.sweep.network_tasks`) and the service's jobs call :func:`judge_change`, so a
scenario gets the same verdict whichever way it is run (issue 27, item 2). It applies, in this order:

* the element checks of :func:`capacitysim.rules.capacity.judge` (the limits of the named policies of
  :class:`~capacitysim.rules.capacity.Criteria`);
* the injected volumes (:func:`injection_checks`: what the engine received against what was given);
* the model's numerical noise (program policy ``noise_floor``, :data:`~capacitysim.rules.capacity.NOISE_POLICY`):
  when a check or an injected volume fails, the run before repeated with finer routing steps measures it
  (:func:`refined_runs`); a change within it is not a failure; where it cannot be told from the change,
  the verdict is untrusted;
* the design storm's rain (:func:`storm_check`);
* the conditions of trust of the runs: continuity, a model that routes, the initial state
  (:func:`initial_state`, program policy ``initial_state``);
* one verdict rule (:func:`capacitysim.rules.verdict.verdict_from_checks`): ``untrusted`` when any condition
  of trust fails or is not confirmed, else ``fail`` when a check failed, else ``pass``; a check the
  reviewer confirms (``passed`` None) never fails the verdict.

References
----------
BJC I/I offset program, sewer flow credit bank H(1) (demonstration of adequate hydraulic and treatment
capacity); Roache, P. J. (1997), Quantification of uncertainty in computational fluid dynamics,
*Annu. Rev. Fluid Mech.* 29:123-160 (the noise measure).
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from capacitysim.errors import EngineError, InputError
from capacitysim.network.basins import Basin, basin_of
from capacitysim.network.engine import (
    ENGINE_FLOW_TOL_CFS,
    RunFiles,
    read_results,
    run_inp,
    system_series,
    terminate_children,
)
from capacitysim.network.model import SwmmInp, finite_number, rtk_params, sim_start
from capacitysim.network.reach import change_reach
from capacitysim.network.refine import STEP_RATIOS, write_step_refined
from capacitysim.network.scenario import Storm
from capacitysim.rules.capacity import (
    NOISE_POLICY,
    Criteria,
    initial_state_pct,
    judge,
    separate_noise,
    spinup_drained_pct,
    step_noise,
    verdict_of,
)
from capacitysim.rules.policy import Policy
from capacitysim.rules.verdict import Check
from capacitysim.units import CFS_PER_FLOW_UNIT, GPD_PER_CFS, MILLIMETERS_PER_INCH
from capacitysim.xarray_setup import xr


#: The design storm of a capacity demonstration (program policy ``design_storm``).
STORM_POLICY = ("the storm of a capacity demonstration is set by the connection application program (credit bank "
                "section H(2)); Table 174-19.2 prescribes the 1-year 24-hour 2.1 in Type II storm for quantifying "
                "inflow credits only: program interpretation, confirm with the bank administrator")
#: Program policy ``design_storm`` (:data:`STORM_POLICY`), as the documents and the catalogue cite it.
DESIGN_STORM = Policy("design_storm", "the storm given", STORM_POLICY, scope="capacity demonstration",
                      where="capacitysim.workflows.judgement.STORM_POLICY")
#: Program policy ``noise_floor`` (:data:`~capacitysim.rules.capacity.NOISE_POLICY`): the model's numerical noise.
NOISE_FLOOR = Policy("noise_floor", NOISE_POLICY.partition(": ")[0], NOISE_POLICY.partition(": ")[2],
                     ({"value": "none", "text": "the absolute tolerances alone"},), scope="capacity demonstration",
                     where="capacitysim.rules.capacity.NOISE_POLICY")
#: Program policy ``initial_state`` (:func:`initial_state`): a model whose event is its initial state.
INITIAL_STATE = Policy(
    "initial_state", "kept",
    "with the default spin-up, a model whose spin-up would drain more than initial_state_max_pct of the water the "
    "run before routes from its initial state before the model's period (its event is that initial state) runs "
    "from its own start, as a model with a hotstart file does; with a spin-up given (--spinup-hr), such runs are "
    "untrusted", ({"value": "spin-up", "text": "the default spin-up anyway (the event is drained before the period "
                   "judged)"},),
    scope="capacity demonstration", where="capacitysim.workflows.judgement.INITIAL_STATE")


@dataclass
class Judgement:
    """What :func:`judge_change` finds: the verdict and everything it rests on.

    Attributes
    ----------
    verdict : str
        ``pass``, ``fail`` or ``untrusted`` (:data:`capacitysim.rules.verdict.VERDICTS`).
    checks : list of Check
        The element checks (failures, within-noise changes as checks to confirm), the outlet, CSO and
        continuity checks, then the storm check.
    injections : list of dict
        Intended against received volumes (:func:`injection_checks`), with the noise allowance.
    untrusted : list of str
        Why the runs cannot support a verdict (empty unless the verdict is ``untrusted``).
    warnings : list of str
        What the reviewer should know that does not change the verdict.
    noise : dict or None
        The noise measure (:func:`refined_runs`), None when no check failed.
    """

    verdict: str
    checks: list
    injections: list
    untrusted: list
    warnings: list
    noise: dict | None = None
    judged: dict = field(default_factory=dict)
    #: untrusted only because changes past a limit downstream of the change are within the model's noise: the
    #: change is not shown to pass (a larger change would show it fail); every other condition of trust held
    within_noise_only: bool = False

    @property
    def failed(self) -> list:
        """The failed checks, in :func:`~capacitysim.rules.capacity.judge`'s order."""
        return [ch for ch in self.checks if ch.passed is False]


def judge_change(model: SwmmInp, before: xr.Dataset, after: xr.Dataset, record: dict, criteria: Criteria, *,
                 judged: dict, noise=None, storm: Storm | None = None, scenarios: dict | None = None,
                 initial_state_problem: str | None = None, model_problems=(), warnings=()) -> Judgement:
    """Judge the change between the run before and the run after: the one judgement of every workflow.

    Parameters
    ----------
    model : SwmmInp
        The user's model (its flow units, outfalls, [RDII]).
    before, after : xarray.Dataset
        The results of the two runs (:func:`capacitysim.network.engine.read_results`).
    record : dict
        The after scenario's record (:func:`capacitysim.network.scenario.write_scenario`) with
        ``removed_sources`` of the run before and the commitments split apart
        (:func:`capacitysim.workflows.demonstration.split_committed`); the storm check writes its
        rainfall into it.
    criteria : Criteria
    judged : dict
        ``outlets``, ``plant``, ``cso_outfalls`` (:func:`judged_elements`).
    noise : callable, optional
        ``noise() -> (refined datasets or None, record)``: the run before with finer routing steps
        (:func:`refined_runs`), called only when a check or an injected volume fails; None measures no
        noise (every check stands).
    storm : Storm, optional
        The design storm both runs were given (its rain is checked); None for the model's own rainfall.
    scenarios : dict, optional
        ``{"before": SwmmInp, "after": SwmmInp}`` of the files the engine ran, for the rain of a model
        whose storm reaches the network only as RDII (:func:`rdii_rainfall_in`).
    initial_state_problem : str, optional
        The initial state the spin-up drained (:func:`initial_state`), a reason not to trust the runs.
    model_problems : sequence of str
        Other reasons not to trust the runs (a model changed since the bank registered it).
    warnings : sequence of str
        Warnings so far; the judgement's own follow.

    Returns
    -------
    Judgement
    """
    c = criteria
    warnings_ = list(warnings)
    injections = injection_checks(model, before, after, record, c, rdii_model=(scenarios or {}).get("before"))
    # a connection whose lowest hourly flow is below SWMM's FLOW_TOL and that the engine received short of:
    # the engine dropped it (a fact of the engine, not noise)
    short = {i["element"] for i in injections if i["what"] == "connection" and i["passed"] is False
             and i["received_cf"] < i["intended_cf"]}
    tiny = sorted({cn["node"] for cn in record.get("connections", []) if cn["node"] in short
                   and cn.get("flow_gpd", math.inf) * cn.get("low_factor", 1.0) < ENGINE_FLOW_TOL_CFS * GPD_PER_CFS})
    checks = judge(before, after, c, **judged)
    noise_rec = None
    if noise is not None and c.noise_factor > 0 and (any(ch.passed is False and ch.kind != "run" for ch in checks)
                                                     or any(not i["passed"] for i in injections)):
        # a change past a limit, or an injected volume off: is it larger than the model's own noise?
        refined, noise_rec = noise()
        if refined is not None:
            reach = _change_reach(model, record, before, after, refined, c)
            link_to = {lid: n2 for lid, _sec, _n1, n2, _l in model.links()}

            def attributable(ch) -> bool:
                return ch.element in (reach.links if ch.element in link_to else reach.nodes)

            checks, within = separate_noise(checks, before, after, refined, c, attributable=attributable, **judged)
            injections = _injections_within_noise(injections, before, refined, c, dropped=set(tiny))
            noise_rec.update(_noise_record(reach, link_to, within))
        warnings_ += noise_rec.pop("_warnings")
    untrusted = [f"{i['what']} at {i['element']}: the engine received {i['received_cf']:,.1f} ft3, "
                 f"{i['difference_pct']:+.2f} % from the intended {i['intended_cf']:,.1f} ft3"
                 if i["passed"] is False else f"{i['what']} at {i['element']}: not confirmed ({i['basis']})"
                 for i in injections if not i["passed"]]
    if tiny:
        untrusted.append(f"the connection at {', '.join(tiny)} is near the smallest flow the engine takes: SWMM drops an "
                         f"external inflow below {ENGINE_FLOW_TOL_CFS:g} cfs ({ENGINE_FLOW_TOL_CFS * GPD_PER_CFS:.1f} gpd) at "
                         "each step (routing.c, addExternalInflows), so it cannot be shown whole")
    if initial_state_problem:
        untrusted.append(initial_state_problem)
    if not before.attrs.get("routing", 1):
        untrusted.append("the model routes no flow (no links, or IGNORE_ROUTING YES): the engine computes no "
                         "hydraulics, so no capacity can be demonstrated with it")
    storm_checks = []
    if storm is not None:
        ch, problems, storm_warnings = storm_check(before, after, storm, c, record, scenarios)
        storm_checks.append(ch)
        untrusted += problems
        warnings_ += storm_warnings
    untrusted += list(model_problems)
    checks = checks + storm_checks
    verdict = verdict_of(before, after, checks, c)
    if noise_rec and noise_rec.get("untrusted"):
        # a failure beyond the noise decides; changes within it only stop a pass from being shown
        (warnings_ if verdict == "fail" else untrusted).append(noise_rec["untrusted"])
    untrusted += [f"the {ch.element}'s flow routing or runoff continuity error, {ch.after:+.2f} %, is beyond the "
                  f"{ch.limit:g} % limit: the engine's own mass balance does not support a verdict"
                  for ch in checks if ch.kind == "run" and ch.criterion.startswith("continuity") and ch.passed is False]
    if untrusted and verdict != "untrusted":
        verdict = "untrusted"
    noise_only = bool(noise_rec) and verdict == "untrusted" and untrusted == [noise_rec.get("untrusted")]
    return Judgement(verdict, checks, injections, untrusted, warnings_, noise_rec, dict(judged), noise_only)


def refined_runs(before_inp: Path, run_dir: Path, model: SwmmInp, *, timeout_s: float | None = None
                 ) -> tuple[list[xr.Dataset] | None, dict]:
    """The run before, repeated with finer routing steps (:data:`~capacitysim.network.refine.STEP_RATIOS`),
    the runs side by side: the noise measure of program policy ``noise_floor``
    (:data:`~capacitysim.rules.capacity.NOISE_POLICY`).

    Returns their results (None when the engine could not run one, or the step cannot be read: the noise
    is then unknown and every check stands) and the record of the noise measure.
    """
    runs, rec = [], {"policy": NOISE_POLICY, "measured": False, "within_noise": [], "_warnings": []}
    try:
        jobs = []
        for k, ratio in enumerate(STEP_RATIOS):
            inp = before_inp.with_name(f"before_refined_{k}_input.inp")
            steps = write_step_refined(before_inp, inp, ratio)
            rec.setdefault("routing_step_s", steps["routing_step_s"])
            rec.setdefault("refined_steps_s", []).append(steps["refined_step_s"])
            jobs.append((inp, run_dir / str(k)))
        with ThreadPoolExecutor(max_workers=len(jobs)) as pool:  # the threads only wait on child processes
            futures = [pool.submit(run_inp, inp, d, name=f"refined-{k}", origin=model.path, timeout_s=timeout_s)
                       for k, (inp, d) in enumerate(jobs)]
            try:
                runs = [read_results(f.result()) for f in futures]
            except BaseException:
                terminate_children()
                raise
    except (EngineError, InputError) as exc:
        rec["_warnings"].append(f"the run before with a finer routing step did not finish ({exc}): the model's "
                                "numerical noise is unknown, every check stands")
        return None, rec
    rec["measured"] = True
    return runs, rec


def shared_noise(measured: tuple[list[xr.Dataset] | None, dict]):
    """A ``noise`` callable for :func:`judge_change` over a measure made once (the run before shared by many
    runs after: a headroom search, a sweep): each call gets its own copy of the record."""
    import copy

    refined, rec = measured

    def noise():
        return refined, copy.deepcopy(rec)

    return noise


def shared_before(run, model: SwmmInp, c: Criteria, *, spinup_hr: float | None = None,
                  timeout_s: float | None = None) -> dict:
    """The run before that many runs after share (a headroom search, a sweep), with what each is judged against.

    ``run(spin_hr, with_run)`` writes and runs the scenario before with a spin-up of ``spin_hr``, calls
    ``with_run(ds, run_files, inp, folder)`` before its folder is removed and returns ``(ds, record, extra,
    kept)`` (``kept`` what ``with_run`` returned). As :func:`capacitysim.workflows.demonstration.run_demonstration`
    does for one pair of runs:

    * program policy ``initial_state`` (:func:`initial_state`): with the default spin-up (``spinup_hr``
      None), a model whose event is its initial state runs again from its own start, and every run after
      uses ``spinup_hr`` 0 (``spinup_policy`` says why); with a spin-up given, the runs are not trusted
      (``initial_state_problem``);
    * the noise measure (:func:`refined_runs`), made once here (``noise``, for :func:`shared_noise`);
    * for a model without subcatchments, the scenario the engine ran (``scenario``, the RDII rain of
      :func:`storm_check`).

    Returns ``{"ds", "record", "extra", "spinup_hr", "spinup_policy", "initial_state",
    "initial_state_problem", "noise", "scenario", "engine_runs"}`` (``engine_runs``: the engine runs made here).
    """
    from capacitysim.network.model import parse_inp
    from capacitysim.network.scenario import default_spinup_hr

    spin = default_spinup_hr(model)[0] if spinup_hr is None else float(spinup_hr)

    def keep(ds, run_files, inp, folder):
        state, held = initial_state(ds, run_files, spin, c)
        if held is not None and spinup_hr is None:
            return {"state": state, "held": held}  # run again from the model's own start: measure nothing here
        noise = refined_runs(inp, folder / "refined", model, timeout_s=timeout_s) if c.noise_factor > 0 else None
        scenario = None if ds.attrs.get("n_subcatchments", 0) else parse_inp(inp)
        return {"state": state, "held": held, "noise": noise, "scenario": scenario}

    ds, record, extra, kept = run(spin, keep)
    problem, policy, runs = None, None, 1
    if kept["held"] is not None and spinup_hr is None:
        policy = initial_state_kept(spin, kept["held"])
        spin = 0.0
        ds, record, extra, kept = run(spin, keep)
        runs += 1
    elif kept["held"] is not None:
        problem = initial_state_problem(kept["held"])
    if kept["noise"] is not None:
        runs += len(kept["noise"][1].get("refined_steps_s", []))
    return {"ds": ds, "record": record, "extra": extra, "spinup_hr": spin, "spinup_policy": policy,
            "initial_state": kept["state"], "initial_state_problem": problem, "noise": kept["noise"],
            "scenario": kept["scenario"], "engine_runs": runs}


def initial_state(before: xr.Dataset, before_run: RunFiles, spin_hr: float, c: Criteria) -> tuple[dict, str | None]:
    """The model's initial state and what the spin-up did with it (program policy ``initial_state``).

    Returns the record (``stored_cf``, ``share_pct`` of the water the run before routes, ``limit_pct``,
    ``drained_cf``, ``drained_pct``) and, when a spin-up of ``spin_hr`` drained more than
    ``c.initial_state_max_pct`` of that water before the model's period, the sentence saying so (else
    None): the event the initial state carries is then not in the period judged. A demonstration with
    the default spin-up runs again from the model's own start (:func:`initial_state_kept`); one whose
    spin-up was given is untrusted (:func:`initial_state_problem`).
    """
    held_pct = initial_state_pct(before)
    state = {"stored_cf": _f(before.attrs.get("routing_initStorage_cf", math.nan)), "share_pct": _f(held_pct),
             "limit_pct": c.initial_state_max_pct, "drained_cf": None, "drained_pct": None}
    if spin_hr > 0 and held_pct > c.initial_state_max_pct:
        # the initial state could carry the event: did the spin-up drain it before the model's period?
        at_start = float(system_series(before_run, "volume_stored").values[0])
        drained_pct = spinup_drained_pct(before, at_start)
        state.update(drained_cf=_f(state["stored_cf"] - at_start), drained_pct=_f(drained_pct))
    if spin_hr > 0 and state["drained_pct"] is not None and state["drained_pct"] > c.initial_state_max_pct:
        return state, (f"the {spin_hr:g} h spin-up drained {state['drained_cf']:,.0f} ft3 of the model's initial state "
                       f"({state['stored_cf']:,.0f} ft3) before the model's period, {state['drained_pct']:.0f} % of the "
                       f"water the run before routes (more than initial_state_max_pct, {c.initial_state_max_pct:g} %)")
    return state, None


def initial_state_kept(spin_hr: float, held: str) -> str:
    """The spin-up policy of a run made again from the model's own start (program policy ``initial_state = kept``)."""
    return (f"no spin-up (program policy initial_state = kept; alternative: the {spin_hr:g} h spin-up anyway): {held}, "
            "so the model's event is its initial state and it runs from its own start")


def initial_state_problem(held: str) -> str:
    """Why runs whose given spin-up drained the initial state are not trusted."""
    return (f"{held}: the event the initial state carries is not in the period judged (the "
            "spin-up was given with --spinup-hr); run with --spinup-hr 0")


def _f(x) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def _injections_within_noise(rows: list[dict], before: xr.Dataset, refined: list[xr.Dataset], c: Criteria,
                             dropped=frozenset()) -> list[dict]:
    """Injected-volume rows whose miss is within the noise of the engine's own volume accounting.

    A node's lateral inflow volume (and the routing continuity's External Inflow) is the engine's integral
    over its routing steps: the run before and its finer-step twins, the same inputs, differ by the
    integration error of the node's whole inflow (DWF, runoff), which can exceed a 5-20 gpd connection's
    volume. A row that misses by no more than ``noise_factor`` times that difference passes, with the noise
    shown (``noise_cf``); not a connection at a node of ``dropped`` (below the engine's FLOW_TOL: its miss is
    the engine's, not noise).
    """
    out = []
    for row in rows:
        row = dict(row)
        if row["element"] in dropped:
            out.append(row)
            continue
        if row["element"] == "system":
            if "lateral inflow volume" in row["basis"]:
                noise = None  # the node basis: the nodes' own noise is not summed here, the row stands
            elif "routing_exInflow_cf" not in before.attrs:
                noise = None
            else:
                key = "routing_exInflow_cf"
                noise = step_noise(before.attrs.get(key, math.nan), [r.attrs.get(key, math.nan) for r in refined],
                                   c.noise_factor)
        elif row["element"] in before.node.values:
            node = row["element"]
            noise = step_noise(float(before.lateral_volume_cf.sel(node=node)),
                               [float(r.lateral_volume_cf.sel(node=node)) for r in refined], c.noise_factor)
        else:
            noise = None
        if noise is not None:
            row["noise_cf"] = float(noise)
            if not row["passed"] and abs(row["received_cf"] - row["intended_cf"]) <= row["noise_cf"]:
                row["passed"] = True
                row["basis"] += (f"; the miss is within {c.noise_factor:g} x the engine's own accounting noise at the "
                                 f"element ({row['noise_cf']:,.2f} ft3, the run before with finer routing steps)")
        out.append(row)
    return out


def _change_reach(model: SwmmInp, record: dict, before: xr.Dataset, after: xr.Dataset, refined: list[xr.Dataset],
                  c: Criteria):
    """Where the scenario's changes can act (:func:`capacitysim.network.reach.change_reach`): down from every node
    given a change, and up by backwater from each node whose highest water (or flooded volume: a flooded node's
    water stands at its rim in both runs) the change raised beyond both the model's noise there
    (``noise_factor`` x the larger ``|refined - before|``) and ``depth_tol_ft`` (``flooding_tol_cf``)."""
    sources = ({c["node"] for c in record.get("connections", [])} | {c["node"] for c in record.get("committed_connections") or []}
               | {i["node"] for i in record.get("inflows", [])} | {n for r in record.get("remediations", []) for n in r.get("nodes", [])}
               | {n for s in record.get("removed_sources", []) for n in s.get("nodes", [])})
    nodes = before.node.values

    def raised(var: str, tol: float) -> np.ndarray:
        b, a = before[var].values, after[var].values
        noise = step_noise(b, [r[var].values for r in refined], c.noise_factor)
        with np.errstate(invalid="ignore"):
            return (a - b) > np.maximum(noise, tol)

    carries = set(nodes[raised("max_hgl_ft", c.depth_tol_ft) | raised("flooding_volume_cf", c.flooding_tol_cf)])
    hgl = dict(zip(nodes, np.fmax(before.max_hgl_ft.values, after.max_hgl_ft.values)))
    return change_reach(model, sources, hgl, dict(zip(nodes, before.invert_elev_ft.values)), carries=carries)


def _noise_record(reach, link_to: dict, within) -> dict:
    """Where the changes set apart are, and what they mean for the verdict.

    A change past a limit within the noise downstream of a connection (or at a judged outlet) cannot be told
    from the connection's effect: the verdict is untrusted, saying so. A failure the change cannot reach (not
    downstream, and no raised water backs up to it) is the model's noise, listed and not a failure, whatever
    its size; one reached only by backwater and within the noise likewise.
    """
    rows, downstream = [], []
    for w in within:
        el = w.check.element
        node = link_to.get(el, el)
        where = ("judged outlet" if w.key in ("peak", "cso") else "beyond reach" if not w.attributable
                 else "downstream" if node in reach.downstream else "backwater")
        rows.append({**w.to_dict(), "where": where})
        if where in ("judged outlet", "downstream"):
            downstream.append(rows[-1])
    out = {"within_noise": rows, "reach": reach.to_dict(), "_warnings": []}
    others = len(rows) - len(downstream)
    if others:
        out["_warnings"].append(f"{others} change(s) past a limit where the connection does not reach, or within the "
                                "model's numerical noise where only its backwater does (the run before with finer "
                                "routing steps): not failures (noise.within_noise)")
    if downstream:
        e = downstream[0]
        out["untrusted"] = (f"{len(downstream)} change(s) past a limit downstream of the change are within the model's "
                            f"numerical noise, e.g. {e['criterion']} at {e['element']}: {e['change']:+.4g} against a noise "
                            f"of {e['noise']:.4g} ({e['quantity']}): the model cannot show whether the connection "
                            "causes them (a finer routing step, or a larger connection, settles it)")
    return out


def injection_checks(model: SwmmInp, before: xr.Dataset, after: xr.Dataset, record: dict, c: Criteria, *,
                     rdii_model: SwmmInp | None = None) -> list[dict]:
    """Intended vs received volumes of every injection, from the engine's own mass balance.

    * each connection node (not also remediated or given removed sources): the intended volume
      over the reporting period (average flow x the integral of its hourly shape) against the
      change of the node's lateral inflow volume (engine statistics, reporting period);
    * all external inflows together: the intended whole-run volume of the connections and
      injected hydrographs, minus the removed sump pumps and roof leaders of the BEFORE run,
      against the change of the routing continuity's External Inflow;
    * the credit bank's committed flows (``record["committed_connections"]``, in the AFTER run only)
      are checked as connections are: at each node (together with a connection at the same node)
      and in the whole-run External Inflow;
    * RDII remediation: the intended reduction (the remediated share of the BEFORE run's RDII
      volume, by sewer area x the R of its unit hydrographs) against the change of the routing
      continuity's RDII Inflow (checked when all [RDII] share one rain gauge's rainfall).

    A difference beyond ``c.injected_volume_tol_pct`` makes the verdict untrusted.
    """
    cf = CFS_PER_FLOW_UNIT[model.flow_units]
    out = []
    remediated = {n for r in record.get("remediations", []) for n in r.get("nodes", [])}
    remediated |= set(record.get("measured_change_nodes", []))  # measured I/I, pre set before and post set after
    sourced = {n for s in record.get("removed_sources", []) for n in s.get("nodes", [])}

    def row(what, element, intended, received, basis):
        diff = (received - intended) / abs(intended) * 100.0 if intended else (0.0 if abs(received) < 1.0 else math.inf)
        out.append({"what": what, "element": element, "intended_cf": float(intended), "received_cf": float(received),
                    "difference_pct": float(diff), "limit_pct": c.injected_volume_tol_pct, "basis": basis,
                    "passed": bool(abs(diff) <= c.injected_volume_tol_pct)})

    injected = list(record.get("connections", [])) + list(record.get("committed_connections") or [])
    by_node: dict[str, float] = {}
    for conn in injected:
        by_node[conn["node"]] = by_node.get(conn["node"], 0.0) + conn["intended_report_volume_model"] * cf
    for node, vol in by_node.items():
        if node in remediated or node in sourced:
            continue
        got = float(after.lateral_volume_cf.sel(node=node) - before.lateral_volume_cf.sel(node=node))
        row("connection", node, vol, got, "node lateral inflow volume, reporting period")
    intended_ex = sum(conn["intended_run_volume_model"] * cf for conn in injected)
    intended_ex += sum(i["volume_cf"] for i in record.get("inflows", []))
    intended_ex -= sum(s.get("volume_cf", 0.0) for s in record.get("removed_sources", []))
    edited = injected or record.get("inflows") or record.get("removed_sources")
    returning = backflow_outfalls(model)
    if edited and returning:
        # SWMM counts flow that an outfall returns into the network as External Inflow (routing.c,
        # removeOutflows): the change of that term holds the change of the backflow too, which the
        # connection causes by raising the water at the outfall pipes. Count only the nodes we edited.
        given = {c["node"] for c in injected} | {i["node"] for i in record.get("inflows", [])} | sourced
        nodes = given - remediated
        intended = sum(conn["intended_report_volume_model"] * cf for conn in injected if conn["node"] in nodes)
        intended += sum(i.get("report_volume_cf", i["volume_cf"]) for i in record.get("inflows", []) if i["node"] in nodes)
        intended -= sum(s.get("volume_cf", 0.0) * sum(1 for n in s.get("nodes", []) if n in nodes) / max(len(s.get("nodes", [])), 1)
                        for s in record.get("removed_sources", []))
        got = sum(float(after.lateral_volume_cf.sel(node=n) - before.lateral_volume_cf.sel(node=n)) for n in sorted(nodes))
        left = given & remediated
        left = f"; remediated node(s) {', '.join(sorted(left))} left to the RDII check" if left else ""
        row("external inflows (all)", "system", intended, got,
            f"lateral inflow volume of the {len(nodes)} node(s) given inflows, reporting period (not the routing "
            f"continuity's External Inflow, which counts the backflow of the ungated outfall(s) "
            f"{', '.join(returning[:5])}{' ...' if len(returning) > 5 else ''}){left}")
        if given & remediated:
            # at a remediated node the lateral inflow also loses the RDII removed: the edit there cannot be
            # told apart, and the External Inflow that could holds the backflow; not confirmed, never passed
            out[-1].update(passed=None, basis=out[-1]["basis"] + ": the inflows given at remediated nodes cannot be "
                                                                   "checked in a model whose outfalls return flow")
    elif edited and "routing_exInflow_cf" in after.attrs:
        got = after.attrs["routing_exInflow_cf"] - before.attrs["routing_exInflow_cf"]
        row("external inflows (all)", "system", intended_ex, got, "routing continuity External Inflow, whole run")
    rems = record.get("remediations", [])
    if rems and "routing_iiInflow_cf" in before.attrs:
        weights = rdii_weights(rdii_model or model)  # the BEFORE scenario's [RDII] when it differs (measured I/I)
        if weights is not None:
            total_w = sum(weights.values())
            share = 0.0
            for r in rems:
                share += r["fraction"] * sum(w for n, w in weights.items() if n in set(r["nodes"]))
            intended = before.attrs["routing_iiInflow_cf"] * share / total_w if total_w else 0.0
            got = before.attrs["routing_iiInflow_cf"] - after.attrs["routing_iiInflow_cf"]
            row("RDII removed", "system", intended, got, "routing continuity RDII Inflow, whole run")
    return out


#: Outfall types whose stage is given, not computed from the outflow: with no flap gate, SWMM's dynamic wave
#: routes flow from them back into the network when their stage is above the water in the outfall pipe.
STAGED_OUTFALLS = ("FIXED", "TIDAL", "TIMESERIES")


def backflow_outfalls(model: SwmmInp) -> list[str]:
    """Outfalls that can return flow into the network: a given stage, no flap gate, dynamic wave routing.

    [OUTFALLS] rows are ``Name Elev Type [Stage|Curve|Series] [Gated] [RouteTo]`` (SWMM 5.2 User's Manual,
    Appendix D); FREE and NORMAL outfalls take their depth from the outflow, and only DYNWAVE routes a
    reversed flow (EPA SWMM 5.2 Reference Manual Vol. II, section 3.3). SWMM adds such backflow to the
    routing continuity's External Inflow (``routing.c``, ``removeOutflows``: a negative system outflow at a
    node is an external inflow).
    """
    if (model.option("FLOW_ROUTING", "KINWAVE") or "").upper() != "DYNWAVE":
        return []
    out = []
    for r in model.rows("OUTFALLS"):
        t = r.tokens
        if len(t) < 3 or t[2].upper() not in STAGED_OUTFALLS:
            continue
        gated = len(t) > 4 and t[4].upper() == "YES"
        if not gated:
            out.append(t[0])
    return out


def rdii_weights(model: SwmmInp) -> dict[str, float] | None:
    """Each [RDII] node's share of RDII volume: sewer area x total R of its unit hydrograph.

    None when the unit hydrographs read different rain gauges (shares then depend on the rain).
    """

    gauges = {r.tokens[1].upper() for r in model.rows("HYDROGRAPHS") if len(r.tokens) == 2}
    if len(gauges) > 1:
        return None
    month = sim_start(model).month
    out: dict[str, float] = {}
    for r in model.rows("RDII"):
        area = finite_number(r.tokens[2]) if len(r.tokens) >= 3 else None
        if area is None:
            continue
        R = sum(rtk[0] for rtk in rtk_params(model, r.tokens[1], month))  # the month's responses, else ALL
        n = model.canon_node(r.tokens[0])
        out[n] = out.get(n, 0.0) + area * R
    return out


def _gauge_rain_in(model: SwmmInp, gauge_tokens: list[str], start, end) -> tuple[float | None, str]:
    """Rain [in] a rain gauge delivers from ``start`` to ``end`` (the simulated window), read from the model text.

    SWMM's [RAINGAGES] rules (User's Manual 5.2, Appendix D; ``gage.c``): a value at time t holds for the gauge's
    recording interval from t; INTENSITY is a rate [in/hr or mm/hr], VOLUME the depth of the interval,
    CUMULATIVE the depth since the start (a value below the previous one starts a new accumulation); zero
    values are skipped; undated [TIMESERIES] rows count from the last date given (the simulation start before
    any); SI models are in mm; [ADJUSTMENTS] RAINFALL multiplies by month. Returns (depth, "") or (None, why
    the text cannot tell).
    """
    from datetime import timedelta

    from capacitysim.network.model import parse_clock_hr, series_instants

    name = gauge_tokens[0]
    if len(gauge_tokens) < 6:
        return None, f"rain gauge {name} names no rainfall source"
    fmt, source, series = gauge_tokens[1].upper(), gauge_tokens[4].upper(), gauge_tokens[5]
    if source != "TIMESERIES":
        return None, (f"rain gauge {name} reads the rain file {series} ({source}): the rain it delivers cannot be "
                      "read from the model text")  # station formats (NWS, NCDC): not read here
    if fmt not in ("INTENSITY", "VOLUME", "CUMULATIVE"):
        return None, f"rain gauge {name} has the unknown rain format {gauge_tokens[1]}"
    try:
        interval_hr = parse_clock_hr(gauge_tokens[2])
    except InputError:
        return None, f"rain gauge {name}: its recording interval {gauge_tokens[2]!r} is not a time"
    if not interval_hr > 0:
        return None, f"rain gauge {name}: its recording interval {gauge_tokens[2]!r} is not positive"
    if not any(r.tokens and r.tokens[0].upper() == series.upper() for r in model.rows("TIMESERIES")):
        return None, f"rain gauge {name} reads the time series {series}, which the model does not define"
    try:  # the engine's reading: several pairs a line, dates carried, a FILE series read from its file
        entries = [(v.when, v.value) for v in series_instants(model, series, start)]
    except InputError as exc:
        return None, f"the time series {series} cannot be read as the engine reads it: {exc}"
    factors = {}
    for r in model.rows("ADJUSTMENTS"):
        if r.tokens and r.tokens[0].upper() == "RAINFALL" and len(r.tokens) >= 13:
            factors = {m + 1: finite_number(t) for m, t in enumerate(r.tokens[1:13])}
    depth, accum = 0.0, 0.0
    for t, v in entries:
        if v == 0.0:
            continue
        if fmt == "INTENSITY":
            rate = v
        elif fmt == "VOLUME":
            rate = v / interval_hr
        else:
            rate = (v if v < accum else v - accum) / interval_hr
            accum = v
        t1 = t + timedelta(hours=interval_hr)
        overlap_hr = (min(t1, end) - max(t, start)).total_seconds() / 3600.0
        if overlap_hr > 0:
            f = factors.get(t.month)
            depth += rate * overlap_hr * (1.0 if f is None else f)
    if model.is_si:
        depth /= MILLIMETERS_PER_INCH
    return depth, ""


def rdii_rainfall_in(scenario: SwmmInp) -> tuple[dict[str, float], list[str]]:
    """The rain [in] each rain gauge of the model's [RDII] unit hydrographs delivers within the simulated window.

    Read from the text of the scenario the engine ran (its [RAINGAGES], [TIMESERIES], [HYDROGRAPHS], [RDII],
    START/END dates): ``({gauge: depth}, [why a gauge's rain cannot be read, ...])``. No gauges (no [RDII], or
    IGNORE_RDII YES: the storm reaches no part of the network) is said as a reason.
    """
    from capacitysim.network.model import sim_end

    if (scenario.option("IGNORE_RDII", "NO") or "NO").upper() == "YES":
        return {}, ["the model sets IGNORE_RDII YES, so the storm reaches its network neither as runoff nor as RDII"]
    uh_gauge = {r.tokens[0].upper(): r.tokens[1] for r in scenario.rows("HYDROGRAPHS") if len(r.tokens) == 2}
    used = {r.tokens[1].upper() for r in scenario.rows("RDII") if len(r.tokens) >= 2}
    names = sorted({uh_gauge[u] for u in used if u in uh_gauge}, key=str.upper)
    if not names:
        return {}, ["the model has no subcatchments and no [RDII] unit hydrograph with a rain gauge"]
    gauges = {r.tokens[0].upper(): r.tokens for r in scenario.rows("RAINGAGES") if r.tokens}
    start, end = sim_start(scenario), sim_end(scenario)
    depths, why = {}, []
    for g in names:
        toks = gauges.get(g.upper())
        if toks is None:
            why.append(f"the unit hydrographs' rain gauge {g} is not in [RAINGAGES]")
            continue
        d, reason = _gauge_rain_in(scenario, toks, start, end)
        if d is None:
            why.append(reason)
        else:
            depths[toks[0]] = d
    return depths, why


#: Citation of the design storm check.
STORM_CHECK_CITATION = ("capacitysim storm honesty: the rain simulated must be the design storm's depth within "
                        "rainfall_tol_pct (program policy)")


def storm_check(before: xr.Dataset, after: xr.Dataset, storm: Storm, c: Criteria, record: dict,
                scenarios: dict[str, SwmmInp] | None = None) -> tuple[Check, list[str], list[str]]:
    """Storm honesty, as a check: ``(check, problems, warnings)``.

    The rain each run received must be the storm's depth within ``c.rainfall_tol_pct``:

    * a model with subcatchments: the engine's total precipitation (runoff continuity,
      ``rainfall_simulated_in``);
    * a model without subcatchments whose storm reaches the network only as RDII: the rain each rain gauge
      of the [RDII] unit hydrographs delivers within the simulated window, read from the scenario the
      engine ran (``scenarios``, :func:`rdii_rainfall_in`; ``record["rainfall_rdii_in"]``).

    A depth off the storm's is a problem (the verdict is untrusted; the check fails). When the rain cannot
    be read (a gauge reading a rain file, no gauge series...), the check is not confirmed (``passed`` None:
    the reviewer confirms; it does not change the verdict) and a warning says why.
    """
    depth = float(np.sum(storm.depth_in))
    tol = depth * c.rainfall_tol_pct / 100.0
    record["rainfall_simulated_in"] = None
    values: dict[str, float | None] = {}
    problems, unverified, basis = [], {}, "catchment"
    for name, ds in (("before", before), ("after", after)):
        got = ds.attrs.get("rainfall_simulated_in", math.nan)
        if math.isfinite(got):
            record["rainfall_simulated_in"] = got
            values[name] = got
            if abs(got - depth) > tol:
                problems.append(f"the {name} run simulated {got:.3f} in of rain over its catchment, not the design "
                                f"storm's {depth:.3f} in")
            continue
        values[name] = None
        if ds.attrs.get("n_subcatchments", 0):
            unverified.setdefault("the engine reported no rainfall total for the model's subcatchments", []).append(name)
            continue
        if scenarios is None or name not in scenarios:
            unverified.setdefault("the model has no subcatchments and the rain of its RDII was not read", []).append(name)
            continue
        basis = "RDII rain gauges"
        depths, why = rdii_rainfall_in(scenarios[name])
        record.setdefault("rainfall_rdii_in", {})[name] = dict(depths)
        for w in why:
            unverified.setdefault(w, []).append(name)
        if depths:
            worst = max(depths, key=lambda g: abs(depths[g] - depth))
            values[name] = depths[worst]
        for g, got in depths.items():
            if abs(got - depth) > tol:
                problems.append(f"the {name} run's rain gauge {g} delivered {got:.3f} in of rain to the RDII unit "
                                f"hydrographs within the simulated period, not the design storm's {depth:.3f} in")
    warnings = [f"the design storm could not be verified in the {' and '.join(runs)} run{'s' if len(runs) > 1 else ''}: "
                f"{why} (the storm check is not confirmed)" for why, runs in unverified.items()]
    passed = False if problems else (None if unverified else True)
    check = Check(criterion=f"rain simulated = the design storm's {depth:.3f} in within {c.rainfall_tol_pct:g} %",
                  element=f"rainfall ({basis})", before=values.get("before"), after=values.get("after"), limit=depth,
                  unit="in", passed=passed, citation=STORM_CHECK_CITATION, kind="run")
    record["rainfall_check"] = {"basis": basis, "passed": passed, "depth_in": depth,
                                "unverified": list(unverified)}
    return check, problems, warnings


def rainfall_problems(before: xr.Dataset, after: xr.Dataset, storm: Storm, c: Criteria, record: dict,
                      scenarios: dict[str, SwmmInp] | None = None) -> list[str]:
    """Storm honesty: the problems of :func:`storm_check` (the rain simulated is not the storm's depth)."""
    return storm_check(before, after, storm, c, record, scenarios)[1]


def judged_elements(basins: list[Basin], conns) -> dict:
    """The element ids :func:`~capacitysim.rules.capacity.judge` needs for these connections.

    ``outlets``: the basin outlet of each connection (in order, once each); ``plant``: the plant
    outfall when a connection adds flow; ``cso_outfalls``: the overflow outfall of every CSO basin.
    """
    outlets = []
    for conn in conns:
        b = _basin_or_none(conn.node, basins)
        if b is not None and b.outlet not in outlets:
            outlets.append(b.outlet)
    plant = next((b.outlet for b in basins if b.kind == "plant"), None) if conns else None
    cso = [b.overflow_outfall for b in basins if b.kind == "cso" and b.overflow_outfall is not None]
    return {"outlets": outlets, "plant": plant, "cso_outfalls": cso}


def _basin_or_none(node, basins):
    try:
        return basin_of(node, basins)
    except InputError:
        return None

