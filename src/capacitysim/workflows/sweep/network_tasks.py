"""The network shipped to the workers and the SWMM scenario tasks of a sweep.

One task per scenario, each a real SWMM run through :func:`capacitysim.network.engine.run_inp`
(itself a fresh child process with ``THREADS 1`` and ``OMP_NUM_THREADS=1``, so the engine's global
state, its OpenMP threads and the file descriptor that ``[RDII]`` runs leak all die with the child:
../shared/reference/swmm-notes.md). A run *before* (the model under the scenario's storm after the
6 h spin-up, no connection, no remediation: the edits of
:func:`capacitysim.workflows.demonstration.scenario_edits`, as ``capacitysim capacity``) is one task
per distinct storm depth (:func:`run_baseline_task`, :func:`baseline_key`); each scenario's run after
(:func:`run_after_task`) starts without waiting for it, and its verdict (:func:`run_scenario_task`), which
depends on both, compares after with before by the capacity demonstration's own rules
(:func:`summarize_swmm`).

The network (the ``.inp`` text, its basins and the storm: a :class:`NetworkBundle`) is shipped to
the workers **once**; each worker writes it to its own temporary folder the first time a task
needs it and keeps the parsed model for the following tasks (:func:`_local_model`).

References
----------
.. [1] Binghamton-Johnson City Sewer Use Rules ch. 174, I/I Offset Program (capacity
   demonstration; I/I remediation basins).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from capacitysim.errors import InputError
from capacitysim.io.sweep_files import SweepSpec
from capacitysim.io.sweep_store import (
    CHECK_CHARS,
    DONE,
    MESSAGE_CHARS,
    UNIT_CHARS,
    failed_record,
    store_outfalls,
)
from capacitysim.rules.verdict import VERDICT_CODE
from capacitysim.units import MINUTES_PER_HOUR


@dataclass(frozen=True)
class NetworkBundle:
    """Everything a worker needs to run scenarios of one network: sent once per worker."""

    name: str
    inp_text: str
    sha: str
    plant: str
    basins: tuple  # capacitysim.network.basins.Basin, plant first
    cso_outfalls: tuple[str, ...]
    storm: object | None  # capacitysim.io.storms.StormSpec of the sweep, or None (the model's rainfall)
    timeout_s: float | None = None
    spinup_hr: float | None = None  # None: the capacity demonstration's default policy

    @property
    def outlets(self) -> tuple[str, ...]:
        return tuple(b.outlet for b in self.basins)

    def store_network(self) -> dict:
        """What the results store records of the network (:func:`capacitysim.io.sweep_store.create_store`):
        ``model`` (file name), ``plant``, ``outlets``, ``cso_outfalls``."""
        return {"model": self.name, "plant": self.plant, "outlets": self.outlets, "cso_outfalls": self.cso_outfalls}


def make_bundle(spec: SweepSpec) -> NetworkBundle:
    """Read the sweep's model once in the driver: text, plant, basins, CSO outfalls, storm.

    The parsed model is the one :func:`~capacitysim.io.sweep_files.load_sweep` parsed and the engine
    opened (:meth:`~capacitysim.io.sweep_files.SweepSpec.network_model`): never parsed twice.
    """
    from capacitysim.network.basins import find_basins
    from capacitysim.network.inp_text import prepare_inp_text
    from capacitysim.network.model import read_model_text
    from capacitysim.workflows.demonstration import choose_plant

    model = spec.network_model()
    plant, _ = choose_plant(model, spec.plant)
    basins = find_basins(model, spec.outlets, plant)
    outfalls = set(model.node_ids_of("OUTFALLS"))
    # the text byte for byte (latin-1), with the files it reads made absolute: workers write it elsewhere
    text = prepare_inp_text(read_model_text(spec.model), Path(spec.model).resolve().parent, None)
    return NetworkBundle(
        name=Path(spec.model).name, inp_text=text, sha=hashlib.sha256(text.encode("latin-1")).hexdigest()[:16],
        plant=plant or "", basins=tuple(basins), cso_outfalls=tuple(sorted(outfalls - {plant})),
        storm=spec.storm, timeout_s=spec.timeout_s, spinup_hr=spec.spinup_hr,
    )


_MODELS: dict[str, object] = {}  # per process: sha -> parsed SwmmInp written to a local file


def _local_model(bundle: NetworkBundle):
    """The bundle's model as a file in this process's temporary folder (written once per process)."""
    from capacitysim.network.model import parse_inp

    m = _MODELS.get(bundle.sha)
    if m is None or not Path(m.path).is_file():
        import atexit

        folder = Path(tempfile.mkdtemp(prefix=f"capacitysim-sweep-{bundle.sha}-"))
        atexit.register(shutil.rmtree, folder, True)  # removed when the worker process exits
        path = folder / bundle.name
        path.write_bytes(bundle.inp_text.encode("latin-1"))
        m = parse_inp(path)
        _MODELS[bundle.sha] = m
    return m


# ----------------------------------------------------------------------------------------------
# one SWMM scenario (the same functions run in the sweep and one by one)
# ----------------------------------------------------------------------------------------------
def _criteria(criteria: dict | None):
    from capacitysim.rules.capacity import Criteria

    return Criteria.from_dict(criteria or {})


def scenario_storm(bundle: NetworkBundle, model, params: dict):
    """The design storm of a scenario (a :class:`~capacitysim.network.scenario.Storm`), or None.

    With a sweep storm: that storm file with its ``depth_in`` replaced by ``storm_depth_in``
    (``capacitysim capacity --storm`` with a copy of the file of that depth gives the same hyetograph,
    bit for bit). Without one, ``storm_depth_in`` scales the model's own rainfall (an even-interval
    [TIMESERIES]), which is then run as a design storm (moved after the spin-up like any other);
    with neither, None (the model's rainfall, untouched).
    """
    from capacitysim.network.scenario import Storm, model_rainfall

    depth = params.get("storm_depth_in")
    if bundle.storm is not None:
        spec = bundle.storm
        if depth is not None:
            spec = dataclasses.replace(spec, depth_in=float(depth), name=f"{spec.name} at {float(depth):g} in")
        return Storm.from_spec(spec)
    if depth is None:
        return None
    t, d = model_rainfall(model)
    if d.size == 0 or d.sum() <= 0:
        raise InputError("storm_depth_in: the model's rainfall is not a [TIMESERIES] that can be scaled; give storm = ...")
    steps = np.diff(t)
    if steps.size and np.ptp(steps) > 1e-6:
        raise InputError("storm_depth_in: the model's rainfall has uneven intervals; give storm = ...")
    dt_min = float(steps[0] * MINUTES_PER_HOUR) if steps.size else 60.0
    d = d * (float(depth) / d.sum())
    return Storm(tuple(float(v) for v in d), dt_min, f"model rainfall scaled to {depth:g} in", float(t[0]))


def scenario_edits(bundle: NetworkBundle, model, params: dict, spinup_hr: float | None = None) -> tuple[list, list]:
    """(edits before, edits after) of a scenario: exactly what ``capacitysim capacity`` runs.

    The scenario's storm (:func:`scenario_storm`), connection (``connect_node``, ``connect_gpd``,
    ``peaking_factor`` or the node's diurnal pattern, as ``--connect NODE=GPD --peaking``) and
    remediation of ``remediation_fraction`` of the RDII in the connection node's I/I remediation
    basin (its tributary nodes, as ``--remediate basin=OUTLET,fraction=F``) go through
    :func:`capacitysim.workflows.demonstration.scenario_edits`, the capacity demonstration's own
    function: the same spin-up (default 6 h; storm moved, REPORT_START) and the same split of the
    edits between the two runs. ``spinup_hr`` overrides the bundle's (the baseline's, program policy
    ``initial_state``: :func:`capacitysim.workflows.judgement.shared_before`).
    """
    from capacitysim.network.basins import basin_of
    from capacitysim.network.scenario import Remediation
    from capacitysim.workflows.demonstration import (
        scenario_edits as demonstration_edits,
    )

    conns = _connections(params)
    rems = []
    frac = float(params.get("remediation_fraction", 0.0) or 0.0)
    if frac > 0:
        node = params.get("connect_node")
        if node is None:
            raise InputError("remediation_fraction needs connect_node (its basin is remediated)")
        b = basin_of(node, list(bundle.basins))
        rems.append(Remediation(tuple(b.tributary), fraction=frac, basin=b.outlet))
    return demonstration_edits(model, scenario_storm(bundle, model, params), conns, rems,
                               spinup_hr=bundle.spinup_hr if spinup_hr is None else spinup_hr)


def _connections(params: dict) -> list:
    """The scenario's connection (none when ``connect_gpd`` is 0 or absent)."""
    from capacitysim.network.scenario import Connection

    node = params.get("connect_node")
    gpd = float(params.get("connect_gpd", 0.0) or 0.0)
    if node is None or gpd <= 0:
        return []
    pf = params.get("peaking_factor")
    return [Connection(node, gpd, "pattern" if pf is None else float(pf))]


def run_network(bundle: NetworkBundle, edits: list, work_root: str | None = None):
    """Run the bundle's model with ``edits`` in SWMM (a child process); the results Dataset."""
    return _run_scenario(bundle, edits, work_root)[0]


def _run_scenario(bundle: NetworkBundle, edits: list, work_root: str | None = None, with_run=None):
    """(results Dataset, scenario record (None without edits), what ``with_run(ds, run, inp, folder)`` returned
    before the run's folder is removed)."""
    from capacitysim.network.engine import read_results, run_inp
    from capacitysim.network.scenario import write_scenario

    model = _local_model(bundle)
    tmp = tempfile.mkdtemp(prefix="capsim-scn-", dir=work_root)
    try:
        inp = Path(tmp) / "src" / "scenario.inp"
        record = None
        if edits:
            record = write_scenario(model, edits, inp)
        else:
            inp.parent.mkdir(parents=True)
            shutil.copyfile(model.path, inp)
        run = run_inp(inp, Path(tmp) / "run", timeout_s=bundle.timeout_s)
        ds = read_results(run)
        return ds, record, (with_run(ds, run, inp, Path(tmp)) if with_run is not None else None)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def baseline_key(params: dict) -> str:
    """Scenarios with the same key share their 'before' run (same storm)."""
    return json.dumps({k: v for k, v in params.items() if k == "storm_depth_in"}, sort_keys=True)


def swmm_verdict(bundle: NetworkBundle, params: dict, before: dict, after, record: dict,
                 criteria: dict | None = None) -> tuple[str, str]:
    """Verdict after vs before with the capacity demonstration's own judgement
    (:func:`capacitysim.workflows.judgement.judge_change`): ("pass" | "fail" | "untrusted", why)."""
    j = _swmm_judgement(bundle, params, before, after, record, criteria)
    return j.verdict, _reason(j)


def _reason(j) -> str:
    """The failed checks (the first three), then why the runs are not trusted."""
    failed = j.failed
    out = "; ".join(f"{ch.criterion} at {ch.element}: {_num(ch.before)} -> {_num(ch.after)} {ch.unit}"
                    for ch in failed[:3]) + (f" (+{len(failed) - 3} more)" if len(failed) > 3 else "")
    if j.verdict == "untrusted" and j.untrusted:
        out = "; ".join(filter(None, ["untrusted: " + "; ".join(j.untrusted[:2]), out]))
    return out


def _swmm_judgement(bundle: NetworkBundle, params: dict, before: dict, after, record: dict, criteria: dict | None):
    """The judgement of one scenario (:func:`capacitysim.workflows.judgement.judge_change`), as
    ``capacitysim capacity`` judges the same pair of runs: checks, injected volumes, the noise measure of the
    shared run before, the storm's rain, the initial state."""
    from capacitysim.workflows.demonstration import split_committed
    from capacitysim.workflows.judgement import judge_change, judged_elements, shared_noise

    model = _local_model(bundle)
    c = _criteria(criteria)
    record = dict(record or {})
    record["removed_sources"] = (before["record"] or {}).get("sources", [])
    split_committed(record)
    storm = scenario_storm(bundle, model, params)
    scenarios = None
    if storm is not None and before.get("scenario") is not None and record.get("_scenario") is not None:
        scenarios = {"before": before["scenario"], "after": record.pop("_scenario")}
    record.pop("_scenario", None)
    return judge_change(model, before["ds"], after, record, c,
                        judged=judged_elements(list(bundle.basins), _connections(params)),
                        noise=None if before.get("noise") is None else shared_noise(before["noise"]),
                        storm=storm, scenarios=scenarios, initial_state_problem=before.get("initial_state_problem"))


def _num(x) -> str:
    return "-" if x is None else f"{x:,.4g}"


def _cso_volume(bundle: NetworkBundle, ds) -> float:
    vol = ds.volume_cf.sel(outfall=[o for o in bundle.cso_outfalls if o in ds.outfall.values]).values
    return float(np.nansum(vol))


def _float_or_nan(x) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return math.nan
    return v if math.isfinite(v) else (v if v == math.inf else math.nan)


def ratio_key(ch) -> str | None:
    """The :func:`capacitysim.rules.capacity.margin_ratios` key of a failed check (None: a run check):
    :func:`capacitysim.rules.capacity.check_key`, headroom's reading too."""
    from capacitysim.rules.capacity import check_key

    return check_key(ch)


def governing_check(failed: list, ratios: dict[str, float]) -> dict:
    """The failed check that governs a scenario: the one that used the most of its margin.

    ``ratios`` are :func:`capacitysim.rules.capacity.margin_ratios` of the two runs (the headroom
    search's measure: ``r = (after - before) / (limit - before)``, ``r > 1`` a failure) and
    :func:`ratio_key` names a check's ratio. Of the failed checks,
    the one with the largest ratio governs; a failed check without a ratio (a run check: continuity,
    injected volume) governs only when no failed check has one (then the first of them, ratio NaN).

    Returns the record's ``governing_criterion``, ``governing_element`` ("" when nothing failed),
    ``governing_ratio``, ``governing_value`` (the value after), ``governing_limit`` (NaN when not a number)
    and ``governing_unit``.
    """
    rec = {"governing_criterion": "", "governing_element": "", "governing_ratio": math.nan,
           "governing_value": math.nan, "governing_limit": math.nan, "governing_unit": ""}
    if not failed:
        return rec
    keyed = [(ratios[ratio_key(ch)], i, ch) for i, ch in enumerate(failed) if ratio_key(ch) in ratios]
    if keyed:  # the largest ratio; of equal ones, the first in judge's order
        ratio, _, ch = max(keyed, key=lambda t: (t[0], -t[1]))
    else:
        ratio, ch = math.nan, failed[0]
    rec.update(governing_criterion=str(ch.criterion)[:CHECK_CHARS], governing_element=str(ch.element)[:CHECK_CHARS],
               governing_ratio=float(ratio), governing_value=_float_or_nan(ch.after),
               governing_limit=_float_or_nan(ch.limit), governing_unit=str(ch.unit or "")[:UNIT_CHARS])
    return rec


def summarize_swmm(bundle: NetworkBundle, params: dict, before: dict, after, record: dict,
                   criteria: dict | None = None) -> dict:
    """Per-scenario summary record (scalars and per-outlet/per-outfall vectors) of one SWMM scenario;
    ``failed_criterion`` and ``failed_element`` are those of its first failed check ("" when none), the
    ``governing_*`` values those of the failed check that used the most of its margin
    (:func:`governing_check`).

    ``before`` is the baseline (:func:`run_baseline_task`), ``after`` the scenario's results and ``record``
    its scenario record (:func:`capacitysim.network.scenario.write_scenario`)."""
    from capacitysim.rules.capacity import margin_ratios
    from capacitysim.workflows.judgement import judged_elements

    j = _swmm_judgement(bundle, params, before, after, record, criteria)
    verdict, failed = j.verdict, j.failed
    reason = _reason(j)
    first_criterion, first_element = (failed[0].criterion, failed[0].element) if failed else ("", "")
    before = before["ds"]
    ratios = margin_ratios(before, after, _criteria(criteria),
                           **judged_elements(list(bundle.basins), _connections(params))) if failed else {}
    governing = governing_check(failed, ratios)
    qq = after.max_q_over_qfull.values
    outf = store_outfalls(bundle.plant, bundle.cso_outfalls)

    def plant_peak(ds):  # no plant (no outfall receives dry-weather flow): not a number
        return float(ds.max_inflow_cfs.sel(node=bundle.plant)) if bundle.plant else math.nan
    return {
        "status": DONE,
        "verdict": VERDICT_CODE[verdict],
        "message": reason[:MESSAGE_CHARS],
        "failed_criterion": str(first_criterion)[:CHECK_CHARS],
        "failed_element": str(first_element)[:CHECK_CHARS],
        **governing,
        "plant_peak_inflow_cfs": plant_peak(after),
        "max_q_over_qfull": float(np.nanmax(qq)) if np.isfinite(qq).any() else math.nan,
        "flooding_volume_cf": float(np.nansum(after.flooding_volume_cf.values)),
        "cso_volume_cf": _cso_volume(bundle, after),
        "runoff_continuity_error_pct": float(after.attrs["runoff_continuity_error_pct"]),
        "flow_routing_continuity_error_pct": float(after.attrs["flow_routing_continuity_error_pct"]),
        "plant_peak_inflow_before_cfs": plant_peak(before),
        "cso_volume_before_cf": _cso_volume(bundle, before),
        "outlet_peak_inflow_cfs": after.max_inflow_cfs.sel(node=list(bundle.outlets)).values.astype(float),
        "outfall_volume_cf": np.array([float(after.volume_cf.sel(outfall=o)) if o in after.outfall.values else math.nan for o in outf]),
    }


def run_baseline_task(bundle: NetworkBundle, params: dict, criteria: dict | None = None) -> dict:
    """Dask task: the 'before' run of a storm (its exception fails the dependent scenarios).

    Only the storm parameters are used (:func:`baseline_key`): a scenario's own bad connection or
    remediation never fails the baseline other scenarios share. Returns the shared run before of
    :func:`capacitysim.workflows.judgement.shared_before` (the initial-state policy, the noise measure)."""
    from capacitysim.workflows.judgement import shared_before

    storm_only = json.loads(baseline_key(params))
    model = _local_model(bundle)

    def run(spin, with_run):
        before, _ = scenario_edits(bundle, model, storm_only, spinup_hr=spin)
        ds, record, kept = _run_scenario(bundle, before, with_run=with_run)
        return ds, record, None, kept

    return shared_before(run, model, _criteria(criteria), spinup_hr=bundle.spinup_hr, timeout_s=bundle.timeout_s)


def expected_spinup_hr(bundle: NetworkBundle) -> float:
    """The spin-up [h] the shared run before keeps unless program policy ``initial_state`` moves it to 0
    (:func:`capacitysim.workflows.judgement.shared_before`): the bundle's, else the demonstration's default
    (:func:`capacitysim.network.scenario.default_spinup_hr`)."""
    from capacitysim.network.scenario import default_spinup_hr

    return default_spinup_hr(_local_model(bundle))[0] if bundle.spinup_hr is None else float(bundle.spinup_hr)


def _after_run(bundle: NetworkBundle, params: dict, spinup_hr: float) -> dict:
    """The engine run after of one scenario with a spin-up of ``spinup_hr`` [h]: ``{"spinup_hr", "ds", "record",
    "scenario"}`` (``scenario``: the input the engine ran, parsed, for a model without subcatchments, whose
    storm check reads the RDII rain from it, as the run before keeps its own)."""
    from capacitysim.network.model import parse_inp

    def keep(ds, run, inp, folder):
        return None if ds.attrs.get("n_subcatchments", 0) else parse_inp(inp)

    _, edits = scenario_edits(bundle, _local_model(bundle), params, spinup_hr=spinup_hr)
    after, record, scn = _run_scenario(bundle, edits, with_run=keep)
    return {"spinup_hr": spinup_hr, "ds": after, "record": record, "scenario": scn}


def run_after_task(bundle: NetworkBundle, params: dict) -> dict:
    """Dask task: the run after of one scenario, started without waiting for its run before.

    The run after needs only the spin-up of the run before, known beforehand (:func:`expected_spinup_hr`) except
    where program policy ``initial_state`` moves it to 0; :func:`run_scenario_task` then runs it again with the
    spin-up the run before kept, so a verdict never pairs two spin-ups. Independent of the baseline (whose task
    also makes the noise measure's refined runs), the runs after fill the workers while it runs: on 2 workers the
    8-scenario Hartfordville sweep had one worker idle for the baseline's whole time. An exception is returned
    (``{"error": exc}``), judged as a failed scenario by :func:`run_scenario_task`.
    """
    try:
        return _after_run(bundle, params, expected_spinup_hr(bundle))
    except Exception as exc:  # noqa: BLE001 - recorded, never lost: the sweep goes on
        return {"error": exc}


def run_scenario_task(bundle: NetworkBundle, index: int, params: dict, before: dict, criteria: dict | None,
                      ran: dict | None = None) -> tuple[int, dict]:
    """Dask task: one scenario's verdict; a scenario that raises returns a failed record (the sweep goes on).

    ``ran`` is its run after made beforehand (:func:`run_after_task`); without it, or when the run before kept
    another spin-up (program policy ``initial_state``), the run after is made here.
    """
    try:
        if ran is not None and "error" in ran:
            raise ran["error"]
        if ran is None or ran["spinup_hr"] != before["spinup_hr"]:
            ran = _after_run(bundle, params, before["spinup_hr"])
        record = dict(ran["record"] or {}, _scenario=ran["scenario"] if before.get("scenario") is not None else None)
        return index, summarize_swmm(bundle, params, before, ran["ds"], record, criteria)
    except Exception as exc:  # noqa: BLE001 - recorded, never lost: the sweep goes on
        return index, failed_record(exc)
