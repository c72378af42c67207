"""Capacity demonstration: SWMM runs before and after a new connection and/or I/I remediation.

Under the Binghamton-Johnson City I/I Offset Program a flow credit withdrawal needs
"demonstration by the applicant of adequate hydraulic and treatment capacity in the sewage
collection system and treatment plant" (I/I Offset Program, sewer flow credit bank paragraph H(1);
the program text numbers its tables, not its sections); the design storm is the 1-year 24-hour
Type II storm, 2.1 in (Table 174-19.2, printed "Table 174-19-2"). This workflow runs the model before and after the
scenario (each run in its own child process, the two at once), compares every node and link,
and gives a verdict under configurable criteria:

* no new or increased flooding (beyond ``flooding_tol_cf``);
* no new surcharge within ``freeboard_ft`` of the rim (a node whose max water level comes
  within the freeboard after, and rose);
* no increase of the peak inflow at the basin outlet of each connection, nor at the plant (H(1):
  "... and treatment plant"), beyond ``outlet_peak_tol_pct``, nor of CSO volume at any CSO outfall beyond ``cso_volume_tol_pct``
  (or ``cso_volume_tol_cf``, whichever is larger);
* max d/D of conduits within ``max_d_over_d`` unless it already was exceeded and did not rise;
* a run whose runoff or flow-routing continuity error exceeds ``continuity_limit_pct`` (1 %)
  makes the verdict ``untrusted`` rather than pass or fail.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import xarray as xr

from capacitysim.checks import check_range
from capacitysim.io.bundled import model_path as bundled_model_path
from capacitysim.network.reach import change_reach
from capacitysim.network.refine import STEP_RATIOS, write_step_refined
from capacitysim.rules.capacity import (NOISE_POLICY, Criteria, continuity_error, initial_state_pct, judge,
                                         separate_noise, spinup_drained_pct, step_noise, verdict_of)
from capacitysim.rules.verdict import Check
from capacitysim.errors import EngineError, InputError
from capacitysim.network.basins import Basin, basin_of, find_basins
from capacitysim.network.engine import (
    ENGINE_FLOW_TOL_CFS,
    RunFiles,
    node_series,
    system_series,
    read_results,
    run_inp,
    scenario_rejected,
    terminate_children,
)
from capacitysim.network.model import SwmmInp, display_name, finite_number, load_model, network_graph, parse_inp
from capacitysim.network.scenario import (
    DEFAULT_SPINUP_HR,
    Connection,
    Remediation,
    ReportNodes,
    SourceRemoval,
    Spinup,
    Storm,
    default_spinup_hr,
    write_scenario,
)
from capacitysim.network.model import report_start_hr, rtk_params, sim_start
from capacitysim.units import CFS_PER_FLOW_UNIT, GPD_PER_CFS, MILLIMETERS_PER_INCH, MINUTES_PER_HOUR, SQFT_PER_ACRE


@dataclass
class Demonstration:
    """The result of a capacity demonstration."""

    model: Path
    verdict: str
    before: xr.Dataset
    after: xr.Dataset
    runs: dict[str, RunFiles]
    checks: list[Check]
    criteria: Criteria
    scenario: dict
    basins: list[Basin]
    plant: str | None
    connections: list[Connection] = field(default_factory=list)
    storm_name: str | None = None
    injections: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    untrusted_reasons: list[str] = field(default_factory=list)
    work_dir: Path | None = None
    keep_files: bool = False
    #: Total inflow before and after at the connection, its basin outlet and the plant (read once from the runs).
    hydrographs: list[dict] = field(default_factory=list)
    #: The flow path from the first connection to the plant with elevations and max HGL before and after.
    profile: list[dict] | None = None
    #: The design storm (name, depth, distribution, source, what it is prescribed for, file and SHA-256).
    storm_record: dict | None = None
    #: Who submits what (capacitysim.io.submittal.Submittal), on the document and the report.
    submittal: object = None
    #: Node points and link lines of the model (:meth:`capacitysim.io.export.geometry.ModelGeometry.to_dict`):
    #: the report's plan map and the exports' GeoJSON.
    geometry: dict | None = None
    #: The model's numerical noise where a check failed (the run before with finer routing steps): its policy,
    #: the steps, the changes within it (``within_noise``) and the reach; None when nothing failed.
    noise: dict | None = None
    #: The bank's commitments injected into both runs
    #: (:func:`capacitysim.workflows.committed.committed_record`), None when run without them.
    committed: dict | None = None

    def __post_init__(self):
        if self.work_dir is not None and not self.keep_files:
            # a temporary folder is removed when the result is closed or collected, or at exit
            self._finalizer = weakref.finalize(self, shutil.rmtree, str(self.work_dir), True)

    def close(self) -> None:
        """Remove the runs' temporary folder (kept when a work_dir was given)."""
        fin = getattr(self, "_finalizer", None)
        if fin is not None:
            fin()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def to_dict(self) -> dict:
        """The result document (the CLI's ``--json``, the report's input, a service job's results)."""
        return demonstration_json(self)


# --------------------------------------------------------------------------- parsing specs


def parse_connection(spec: str, peaking: str | float = "pattern") -> Connection:
    """``NODE=GPD`` or ``NODE=UNITSxGPD_PER_UNIT`` (a building program) -> Connection."""
    if "=" not in spec:
        raise InputError(f"--connect {spec!r}: expected NODE=GPD or NODE=UNITSxGPD_PER_UNIT")
    node, value = (s.strip() for s in spec.split("=", 1))
    try:
        if "x" in value.lower():
            units, per = value.lower().split("x", 1)
            return Connection.from_program(node, float(units), float(per), peaking)
        flow = float(value.replace(",", "").replace("_", ""))
    except ValueError:
        raise InputError(f"--connect {spec!r}: flow {value!r} is not a number of gpd") from None
    if not flow > 0:
        raise InputError(f"--connect {spec!r}: flow must be > 0 gpd; got {flow:g}")
    return Connection(node, flow, peaking)


def parse_remediation(spec: str, basins: list[Basin], model: SwmmInp) -> Remediation | SourceRemoval:
    """A ``--remediate`` spec -> :class:`Remediation` (RDII) or :class:`SourceRemoval` (inflow sources).

    ``basin=OUTLET`` or ``nodes=A;B;C`` (the sewershed), then either the RDII reduction
    ``fraction=F`` (0-1 or ``25%``) | ``gpd=G``, or disconnected inflow sources
    ``sump_pumps=N`` and/or ``roof_sqft=A`` [ft^2] | ``roof_ac=A`` [ac] (Table 174-19.2 items,
    split evenly over the nodes; see :class:`~capacitysim.network.scenario.InflowSources`).
    ``basin=`` takes the basin's tributary nodes (everything draining to that outlet).
    """
    parts = {}
    for item in spec.split(","):
        if "=" not in item:
            raise InputError(f"--remediate {spec!r}: expected key=value pairs (basin=|nodes=, then fraction=|gpd= or sump_pumps=, roof_sqft=|roof_ac=)")
        k, v = (s.strip() for s in item.split("=", 1))
        parts[k.lower()] = v
    allowed = {"basin", "nodes", "fraction", "gpd", "sump_pumps", "roof_sqft", "roof_ac"}
    unknown = sorted(set(parts) - allowed)
    if unknown:
        raise InputError(f"--remediate {spec!r}: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(sorted(allowed))})")
    if ("basin" in parts) == ("nodes" in parts):
        raise InputError(f"--remediate {spec!r}: give exactly one of basin= and nodes=")
    if "basin" in parts:
        found = [b for b in basins if b.outlet == parts["basin"]]
        if not found:
            raise InputError(f"--remediate: basin {parts['basin']!r} is not a basin outlet (outlets: {', '.join(b.outlet for b in basins)})")
        nodes, label = tuple(found[0].tributary), parts["basin"]
    else:
        nodes, label = tuple(n.strip() for n in parts["nodes"].split(";") if n.strip()), ""
        known = model.node_ids()
        bad = [n for n in nodes if n not in known]
        if bad:
            raise InputError(f"--remediate: node {bad[0]!r} is not a node of {model.path.name}")
    source_keys = {"sump_pumps", "roof_sqft", "roof_ac"} & set(parts)
    if source_keys:
        if {"fraction", "gpd"} & set(parts):
            raise InputError(f"--remediate {spec!r}: an RDII reduction (fraction=, gpd=) and disconnected sources "
                             "(sump_pumps=, roof_sqft=, roof_ac=) go in separate --remediate options")
        if {"roof_sqft", "roof_ac"} <= set(parts):
            raise InputError(f"--remediate {spec!r}: give the roof area once, as roof_sqft= or roof_ac=")
        try:
            n_pumps = float(parts.get("sump_pumps", "0"))
            roof = float(parts.get("roof_sqft", "0")) + float(parts.get("roof_ac", "0")) * SQFT_PER_ACRE
        except ValueError:
            raise InputError(f"--remediate {spec!r}: sump_pumps, roof_sqft and roof_ac must be numbers") from None
        return SourceRemoval(nodes, sump_pumps=n_pumps, roof_area_sqft=roof, basin=label)
    try:
        fraction = float(parts["fraction"].rstrip("%")) / (100.0 if parts["fraction"].endswith("%") else 1.0) if "fraction" in parts else None
        gpd = float(parts["gpd"].replace(",", "")) if "gpd" in parts else None
    except ValueError:
        raise InputError(f"--remediate {spec!r}: fraction and gpd must be numbers") from None
    return Remediation(nodes, fraction=fraction, gpd=gpd, basin=label)


# --------------------------------------------------------------------------- running


def choose_plant(model: SwmmInp, plant: str | None) -> tuple[str | None, str | None]:
    """The treatment plant outfall and a warning when there is none.

    ``plant`` (``--plant``) when given (it must be an outfall); else the outfall receiving the
    most mean dry-weather flow (patterns applied); else None, with the warning that the plant
    check is skipped (a storm-sewer model: no outfall receives dry-weather flow).
    """
    from capacitysim.network.basins import find_plant

    if plant:
        p = model.find_node(plant)
        if p is None or model.node_ids()[p][0] != "OUTFALLS":
            outs = ", ".join(r.tokens[0] for r in model.rows("OUTFALLS")[:8])
            raise InputError(f"--plant {plant!r} is not an outfall of {model.path.name} (outfalls: {outs})")
        return p, None
    found = find_plant(model)
    if found is None:
        return None, ("no outfall receives dry-weather flow (a storm-sewer model?): the treatment plant check is "
                      "skipped; name the plant with --plant to apply it")
    return found, None


def _edits_in_words(conns, rems, storm_name, committed_conns, extra_edits) -> list[str]:
    """The edits an after scenario holds, in words, for the message of a scenario the engine rejected."""
    words = [f"connection {c.node} {float(c.flow_gpd):,.0f} gpd" for c in conns]
    words += [f"committed flow {c.node} {float(c.flow_gpd):,.0f} gpd" for c in committed_conns]
    words += [f"remediation {getattr(r, 'basin', r)}" for r in rems]
    words += [f"design storm {storm_name}"] if storm_name else []
    words += [type(e).__name__ for e in extra_edits]
    return words


def run_demonstration(model_path, *, connections=(), remediations=(), storm=None, criteria: Criteria | None = None,
                      work_dir=None, outlets=None, plant=None, parallel: bool = True, extra_edits=(),
                      spinup_hr: float | None = None, submittal=None, crs: str | None = None,
                      committed: dict | None = None) -> Demonstration:
    """Run the before and after scenarios and judge them.

    Parameters
    ----------
    model_path : path or str
        SWMM ``.inp`` (opened by the engine first: a file SWMM runs is accepted; only read), or the
        name of a bundled model (``synthetic-50``).
    connections : list of Connection or str
        New connections (``NODE=GPD`` strings are parsed). Each adds its average flow over the
        reporting period, shaped by an hourly pattern of mean 1
        (:func:`~capacitysim.network.scenario.connection_shape`).
    remediations : list of Remediation, SourceRemoval or str
        I/I remediation (``basin=...,fraction=...`` / ``nodes=...,sump_pumps=...`` strings are
        parsed). A :class:`SourceRemoval` puts its sump pumps and roof leaders into the BEFORE
        model only (the scenario record lists them under ``removed_sources``).
    storm : str, path, StormSpec or Storm, optional
        The design storm (a bundled name or a TOML file); both runs get it, on every rain gauge,
        starting at the model's own (reporting) start. ``None`` keeps the model's own rainfall. The
        storm of a capacity demonstration is set by the connection application program (credit bank
        section H(2)); Table 174-19.2's 1-year 24-hour 2.1 in Type II storm is prescribed for
        quantifying inflow credits (:data:`STORM_POLICY`, shown in the document and the report).
    criteria : Criteria
    work_dir : path, optional
        Folder for the runs, kept (relative or absolute). Default: a temporary folder removed by
        :meth:`Demonstration.close` (or when the result is collected).
    outlets, plant : optional
        Override the automatic basin outlets / plant outfall.
    spinup_hr : float, optional
        Dry-weather spin-up PREPENDED to the model's period (default by the named policy of
        :func:`~capacitysim.network.scenario.default_spinup_hr`: 6 h, or 0 for a model that sets
        its own initial state; 0 runs the model's period as it is). The model's own period is
        simulated and reported whole.
    submittal : Submittal, optional
        The submittal identification (project number, applicant, engineer of record...).
    crs : str, optional
        The coordinate reference system of the model's map (``EPSG:2263``), when the model does not
        state it (:func:`capacitysim.io.export.geometry.model_geometry`); only the exports and the
        plan map use it.
    committed : dict, optional
        The credit bank's commitments on this model
        (:func:`capacitysim.workflows.committed.capacity_commitments`, i.e.
        :meth:`capacitysim.bank.Ledger.commitments`). Each flow is injected at its node into the AFTER
        run, before the connections (volume-true, as a connection; program policy
        ``committed_baseline`` = ``cumulative``, :data:`capacitysim.workflows.committed.COMMITTED_BASELINE`):
        the BEFORE run is the model of record, so the criteria on the change judge the commitments and
        the connections together; still two engine runs. A flow that cannot be placed
        (no node, or a node not in the model) is listed under ``unplaced`` with a warning. The
        document records the block as ``committed`` (null without it). The bank's commitments are of
        the model with the SHA-256 the bank registered: a model file that changes before it is run
        makes the verdict untrusted.
    """
    from capacitysim.io.export.geometry import check_crs, model_geometry

    crs = check_crs(crs)
    criteria = criteria or Criteria()
    model_path = bundled_model_path(model_path)
    model = load_model(model_path)
    plant_id, plant_warning = choose_plant(model, plant)
    basins = find_basins(model, outlets=outlets, plant=plant_id)
    connections, remediations = list(connections), list(remediations)  # read twice when the run is made again
    conns = [parse_connection(c) if isinstance(c, str) else c for c in connections]
    canon = []
    for c in conns:
        n = model.find_node(c.node)
        if n is None:
            raise InputError(f"--connect: node {c.node!r} is not a node of {model.path.name}")
        canon.append(replace(c, node=n))
    conns = canon
    committed_conns, committed_rec, committed_warnings = [], None, []
    if committed is not None:
        from capacitysim.workflows.committed import check_commitments, committed_connections, committed_record

        block = check_commitments(committed)
        committed_conns, unplaced, committed_warnings = committed_connections(block, model)
        committed_rec = committed_record(block, unplaced)
    rems = [parse_remediation(r, basins, model) if isinstance(r, str) else r for r in remediations]
    storm_edit, storm_record = _storm_edit(storm)
    storm_name = None if storm_record is None else storm_record["name"]
    if not conns and not rems and not extra_edits:
        raise InputError("nothing to demonstrate: give at least one connection (--connect) or remediation (--remediate)")
    if spinup_hr is None:
        spin, spin_policy = default_spinup_hr(model)
    else:
        spin = float(check_range("spinup_hr", spinup_hr, 0.0, unit="hr"))
        spin_policy = f"{spin:g} h spin-up prepended (--spinup-hr)"
    before_edits, after_edits = scenario_edits(model, storm_edit, conns, rems, spinup_hr=spin, extra_edits=extra_edits,
                                               committed=committed_conns)
    # the report's hydrographs: the connections, their basin outlets and the plant are saved in the .out
    shown = [c.node for c in conns] + [b.outlet for c in conns if (b := _basin_or_none(c.node, basins))] + ([plant_id] if plant_id else [])
    if shown:
        before_edits.append(ReportNodes(tuple(shown)))
        after_edits.append(ReportNodes(tuple(shown)))
    keep = work_dir is not None
    wd = Path(work_dir).resolve() if keep else Path(tempfile.mkdtemp(prefix="capacitysim-"))
    try:  # anything that fails, in the runs or after them, leaves no temporary folder behind
        wd.mkdir(parents=True, exist_ok=True)
        before_inp = wd / "before_input.inp"
        before_record = write_scenario(model, before_edits, before_inp)
        after_inp = wd / "after_input.inp"
        record = write_scenario(model, after_edits, after_inp)
        split_committed(record)
        record["removed_sources"] = before_record["sources"]
        record["report_start_hr"] = spin + report_start_hr(model)
        record["simulation"]["spinup_policy"] = spin_policy

        jobs = {"before": (before_inp, wd / "before"), "after": (after_inp, wd / "after")}
        edits = _edits_in_words(conns, rems, storm_name, committed_conns, extra_edits)

        def run_one(k, inp, d):
            """One run; the after run's rejection is the tool's failure (issue 26, class 2), not the user's."""
            try:
                return run_inp(inp, d, name=k, origin=model.path)
            except EngineError as exc:
                if k == "after":
                    raise scenario_rejected(exc, model.path.name, k, edits) from None
                raise

        if parallel:
            with ThreadPoolExecutor(max_workers=3) as pool:  # two threads only wait on child processes
                futures = {k: pool.submit(run_one, k, inp, d) for k, (inp, d) in jobs.items()}
                pool.submit(_first_dataarray)  # xarray's one-off duck-array imports, while the engine runs
                try:
                    runs = {k: f.result() for k, f in futures.items()}
                except BaseException:  # an error or a signal: stop the other run before the pool waits for it
                    terminate_children()
                    raise
        else:
            runs = {k: run_one(k, inp, d) for k, (inp, d) in jobs.items()}
        before, after = read_results(runs["before"]), read_results(runs["after"])
        held_pct = initial_state_pct(before)
        state = {"stored_cf": _f(before.attrs.get("routing_initStorage_cf", math.nan)), "share_pct": _f(held_pct),
                 "limit_pct": criteria.initial_state_max_pct, "drained_cf": None, "drained_pct": None}
        record["simulation"]["initial_state"] = state
        initial_state_problem = None
        if spin > 0 and held_pct > criteria.initial_state_max_pct:
            # the initial state could carry the event: did the spin-up drain it before the model's period?
            at_start = float(system_series(runs["before"], "volume_stored").values[0])
            drained_pct = spinup_drained_pct(before, at_start)
            state.update(drained_cf=_f(state["stored_cf"] - at_start), drained_pct=_f(drained_pct))
        if spin > 0 and state["drained_pct"] is not None and state["drained_pct"] > criteria.initial_state_max_pct:
            held = (f"the {spin:g} h spin-up drained {state['drained_cf']:,.0f} ft3 of the model's initial state "
                    f"({state['stored_cf']:,.0f} ft3) before the model's period, {state['drained_pct']:.0f} % of the water "
                    f"the run before routes (more than initial_state_max_pct, {criteria.initial_state_max_pct:g} %)")
            if spinup_hr is None:
                # program policy initial_state = kept: the event is in the initial state, which a spin-up would drain
                # before the model's period; the model runs from its own start, as one with a hotstart file does
                for d in (wd / "before", wd / "after"):
                    shutil.rmtree(d, ignore_errors=True)
                if not keep:
                    shutil.rmtree(wd, ignore_errors=True)
                again = run_demonstration(model_path, connections=connections, remediations=remediations, storm=storm,
                                          criteria=criteria, work_dir=work_dir, outlets=outlets, plant=plant,
                                          parallel=parallel, extra_edits=extra_edits, spinup_hr=0.0, submittal=submittal,
                                          crs=crs, committed=committed)
                again.scenario["simulation"]["spinup_policy"] = (
                    f"no spin-up (program policy initial_state = kept; alternative: the {spin:g} h spin-up anyway): {held}, "
                    "so the model's event is its initial state and it runs from its own start")
                return again
            initial_state_problem = (f"{held}: the event the initial state carries is not in the period judged (the "
                                     "spin-up was given with --spinup-hr); run with --spinup-hr 0")
        ext = model_files(model)
        warnings_ = [plant_warning] if plant_warning else []
        warnings_ += [f"external file {f['name']} ({f['kind']}) is missing: {f['path']}" for f in ext
                      if f["verb"] != "SAVE" and f["sha256"] is None]
        lint = model.lint
        warnings_ += [f"the engine ran the model, but: {p}" for p in lint[:5]]
        if len(lint) > 5:
            warnings_.append(f"(and {len(lint) - 5} more such problems)")
        warnings_ += record.get("notes", [])
        warnings_ += committed_warnings
        injections = injection_checks(model, before, after, record, criteria)
        # a connection whose lowest hourly flow is below SWMM's FLOW_TOL and that the engine received short of:
        # the engine dropped it (a fact of the engine, not noise)
        short = {i["element"] for i in injections if i["what"] == "connection" and i["passed"] is False
                 and i["received_cf"] < i["intended_cf"]}
        tiny = sorted({c["node"] for c in record.get("connections", []) if c["node"] in short
                       and c.get("flow_gpd", math.inf) * c.get("low_factor", 1.0) < ENGINE_FLOW_TOL_CFS * GPD_PER_CFS})
        judged = judged_elements(basins, conns)
        checks = judge(before, after, criteria, **judged)
        noise_rec = None
        if criteria.noise_factor > 0 and (any(ch.passed is False and ch.kind != "run" for ch in checks)
                                          or any(not i["passed"] for i in injections)):
            # a change past a limit, or an injected volume off: is it larger than the model's own noise?
            refined, noise_rec = _refined_run(before_inp, wd / "refined", model)
            if refined is not None:
                reach = _change_reach(model, record, before, after, refined, criteria)
                link_to = {lid: n2 for lid, _sec, _n1, n2, _l in model.links()}

                def attributable(ch) -> bool:
                    return ch.element in (reach.links if ch.element in link_to else reach.nodes)

                checks, within = separate_noise(checks, before, after, refined, criteria, attributable=attributable,
                                                **judged)
                injections = _injections_within_noise(injections, before, refined, criteria, dropped=set(tiny))
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
        if storm_edit is not None:
            ch, problems, storm_warnings = storm_check(before, after, storm_edit, criteria, record,
                                                       {"before": parse_inp(before_inp), "after": parse_inp(after_inp)})
            storm_checks.append(ch)
            untrusted += problems
            warnings_ += storm_warnings
        record["external_files"] = ext
        if committed_rec is not None:
            untrusted += _committed_model_problems(committed_rec, committed, ext)
        checks = checks + storm_checks
        missing = [c.node for c in conns if _basin_or_none(c.node, basins) is None]
        if missing:
            warnings_.append(f"connection node(s) {', '.join(missing)} drain to no outfall: no basin outlet check")
        verdict = verdict_of(before, after, checks, criteria)
        if noise_rec and noise_rec.get("untrusted"):
            # a failure beyond the noise decides; changes within it only stop a pass from being shown
            (warnings_ if verdict == "fail" else untrusted).append(noise_rec["untrusted"])
        untrusted += [f"the {ch.element}'s flow routing or runoff continuity error, {ch.after:+.2f} %, is beyond the "
                      f"{ch.limit:g} % limit: the engine's own mass balance does not support a verdict"
                      for ch in checks if ch.kind == "run" and ch.criterion.startswith("continuity") and ch.passed is False]
        if untrusted and verdict != "untrusted":
            verdict = "untrusted"
        shown_points = [("the connection", conns[0].node)] if conns else []
        if conns and (b0 := _basin_or_none(conns[0].node, basins)) is not None:
            shown_points.append(("the basin outlet", b0.outlet))
        if plant_id:
            shown_points.append(("the plant", plant_id))
        return Demonstration(Path(model_path), verdict, before, after, runs, checks, criteria, record, basins,
                             plant_id, conns, storm_name, injections, warnings_, untrusted, wd, keep, storm_record=storm_record,
                             submittal=submittal, geometry=model_geometry(model, crs).to_dict(),
                             hydrographs=_hydrographs(runs, shown_points),
                             profile=_profile(model, conns[0].node, plant_id, before, after) if conns and plant_id else None,
                             committed=committed_rec, noise=noise_rec)
    except BaseException:
        if not keep:
            shutil.rmtree(wd, ignore_errors=True)
        raise


def _refined_run(before_inp: Path, run_dir: Path, model: SwmmInp) -> tuple[list[xr.Dataset] | None, dict]:
    """The run before, repeated with finer routing steps (:data:`~capacitysim.network.refine.STEP_RATIOS`),
    the runs side by side.

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
            futures = [pool.submit(run_inp, inp, d, name=f"refined-{k}", origin=model.path) for k, (inp, d) in enumerate(jobs)]
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


def split_committed(record: dict) -> dict:
    """Keep the scenario's own connections under ``record["connections"]`` (the bank reads them as the
    applicant's) and list the bank's commitments apart, under ``record["committed_connections"]``
    (:func:`injection_checks` checks both). A commitment is told by ``Connection.commitment``, set only by
    :func:`capacitysim.workflows.committed.committed_connections`, never by a label a user can type."""
    conns = record.get("connections", [])
    record["committed_connections"] = [r for r in conns if r.get("commitment") is not None]
    record["connections"] = [r for r in conns if r.get("commitment") is None]
    return record


def _committed_model_problems(rec: dict, block: dict, ext: list[dict]) -> list[str]:
    """The commitments are of a registered model (its SHA-256): the model run must be that one."""
    want = (block.get("scope") or {}).get("model_sha256")
    got = next((f.get("sha256") for f in ext if f.get("verb") == "MODEL"), None)
    if want and got and want != got:
        return [f"the bank's commitments are those of the model with SHA-256 {want}, but the model run has SHA-256 "
                f"{got} (the file changed?): the commitments may not be those of this model"]
    return []


def _hydrographs(runs: dict, points: list[tuple[str, str]]) -> list[dict]:
    """Total inflow [cfs] before and after at each point (label, node), once per node, from the runs' .out files."""
    out, seen = [], set()
    for label, node in points:
        if node in seen:
            continue
        seen.add(node)
        rec = {"node": display_name(node), "label": label}
        for key in ("before", "after"):
            s = node_series(runs[key], node, "total_inflow")
            rec[f"elapsed_hr_{key}"] = s.elapsed_hr.values.astype(float)
            rec[f"total_inflow_cfs_{key}"] = s.values.astype(float)
        out.append(rec)
    return out


def _profile(model: SwmmInp, start: str, end: str, before: xr.Dataset, after: xr.Dataset) -> list[dict] | None:
    """The flow path from ``start`` to ``end`` with invert, crown, rim [ft] and max HGL before and after [ft]."""
    try:
        path = profile_path(model, start, end)
    except InputError:
        return None
    ids = [p["node"] for p in path]
    inv = before.invert_elev_ft.sel(node=ids).values
    rim = inv + before.rim_depth_ft.sel(node=ids).values
    crown = inv + before.crown_depth_ft.sel(node=ids).values
    hb, ha = before.max_hgl_ft.sel(node=ids).values, after.max_hgl_ft.sel(node=ids).values
    return [{"node": display_name(p["node"]), "link": None if p["link"] is None else display_name(p["link"]),
             "distance_ft": p["distance_ft"], "invert_ft": float(inv[i]), "crown_ft": float(crown[i]), "rim_ft": float(rim[i]),
             "max_hgl_before_ft": float(hb[i]), "max_hgl_after_ft": float(ha[i])} for i, p in enumerate(path)]


def model_files(model: SwmmInp) -> list[dict]:
    """The model file and every external file it names, with SHA-256 of those that exist (SAVE targets are
    redirected into the run's folder, so only named)."""
    from capacitysim.network.inp_text import external_files

    sha = _sha256
    out = [{"section": "", "verb": "MODEL", "kind": "MODEL", "name": model.path.name, "path": str(model.path.resolve()),
            "sha256": sha(model.path)}]
    for f in external_files("\n".join(model.lines), model.path.resolve().parent):
        written = f.pop("access") in ("write", "folder")
        f["sha256"] = None if written else sha(f["path"])
        if written:
            f["path"] = None
        out.append(f)
    return out


def _first_dataarray() -> None:
    """Build one DataArray: xarray imports its duck-array modules (dask, about 0.9 s) at the first one."""
    xr.DataArray(np.zeros(1))


def _basin_or_none(node, basins):
    try:
        return basin_of(node, basins)
    except InputError:
        return None


def injection_checks(model: SwmmInp, before: xr.Dataset, after: xr.Dataset, record: dict, c: Criteria) -> list[dict]:
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
        weights = rdii_weights(model)
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


def scenario_edits(model: SwmmInp, storm: Storm | None, connections=(), remediations=(), *,
                   spinup_hr: float | None = None, extra_edits=(), committed=()) -> tuple[list, list]:
    """The edits of the BEFORE and the AFTER model of a capacity demonstration: ``(before, after)``.

    The one place that decides what each run gets (``capacitysim capacity`` and the SWMM scenarios
    of ``capacitysim sweep`` both call it, so a sweep scenario is the same pair of runs):

    * both runs: a :class:`~capacitysim.network.scenario.Spinup` of ``spinup_hr`` (prepended,
      when > 0) and the design ``storm`` placed at the model's own reporting start (its
      ``start_hr`` counted from there), i.e. ``spinup_hr`` + the model's REPORT_START offset
      from the moved simulation start;
    * AFTER only, before the connections: the ``committed`` connections (the credit bank's
      commitments, :func:`capacitysim.workflows.committed.committed_connections`; program policy
      ``committed_baseline`` = ``cumulative``): the BEFORE run stays the model of record;
    * BEFORE only: the sources of every :class:`~capacitysim.network.scenario.SourceRemoval`
      (disconnected sump pumps and roof leaders discharge today, not after);
    * AFTER only: the connections, the RDII remediations and ``extra_edits``.
    """
    spin = default_spinup_hr(model)[0] if spinup_hr is None else float(check_range("spinup_hr", spinup_hr, 0.0, unit="hr"))
    if storm is not None:
        storm = replace(storm, start_hr=spin + report_start_hr(model) + storm.start_hr)
    both = ([Spinup(spin)] if spin > 0 else []) + ([storm] if storm is not None else [])
    before = both + [r.sources for r in remediations if isinstance(r, SourceRemoval)]
    after = (both + list(committed) + list(connections) + [r for r in remediations if not isinstance(r, SourceRemoval)]
             + list(extra_edits))
    return before, after


#: What a capacity demonstration's design storm is, when its storm file does not say (BJC credit bank H).
STORM_POLICY = ("the storm of a capacity demonstration is set by the connection application program (credit bank "
                "section H(2)); Table 174-19.2 prescribes the 1-year 24-hour 2.1 in Type II storm for quantifying "
                "inflow credits only: program interpretation, confirm with the bank administrator")


def _storm_edit(storm):
    """(the scenario edit, the storm record of the result document) of a storm argument."""
    if storm is None:
        return None, None
    if isinstance(storm, Storm):
        return storm, {"name": storm.name, "policy": STORM_POLICY}
    from capacitysim.io.storms import StormSpec, load_storm

    spec = storm if isinstance(storm, StormSpec) else load_storm(storm)
    record = {"name": spec.name, "depth_in": spec.depth_in, "distribution": spec.distribution, "duration_hr": spec.duration_hr,
              "return_period_yr": spec.return_period_yr, "source": spec.source, "purpose": spec.purpose,
              "file": Path(spec.path).name if spec.path else None,
              "sha256": _sha256(spec.path) if spec.path else None, "policy": STORM_POLICY}
    return Storm.from_spec(spec), record


def _sha256(path) -> str | None:
    import hashlib

    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


# --------------------------------------------------------------------------- judging


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


# --------------------------------------------------------------------------- JSON


def _f(x) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def demonstration_json(d: Demonstration) -> dict:
    """The ``--json`` document (keys as issue 3 specifies, plus the checks and the scenario record)."""
    b, a = d.before, d.after

    def run_doc(ds, run):
        return {"continuity_error_pct": _f(continuity_error(ds)),
                "runoff_continuity_error_pct": _f(ds.attrs["runoff_continuity_error_pct"]),
                "flow_routing_continuity_error_pct": _f(ds.attrs["flow_routing_continuity_error_pct"]),
                "plant_peak_inflow_cfs": _f(ds.max_inflow_cfs.sel(node=d.plant)) if d.plant in ds.node.values else None,
                "outfall_volume_cf": {str(k): _f(v) for k, v in zip(ds.outfall.values, ds.volume_cf.values)},
                "rainfall_simulated_in": _f(ds.attrs.get("rainfall_simulated_in", math.nan)),
                "external_inflow_cf": _f(ds.attrs.get("routing_exInflow_cf", math.nan)),
                "rdii_inflow_cf": _f(ds.attrs.get("routing_iiInflow_cf", math.nan)),
                "dry_weather_inflow_cf": _f(ds.attrs.get("routing_dwInflow_cf", math.nan)),
                # files are cited only when they outlive the command (--work-dir)
                "report_file": str(run.rpt) if d.keep_files else None}

    def arr(ds, name):  # one array per variable (not a DataArray per element)
        return ds[name].values

    lb = {k: arr(b, k) for k in ("peak_flow_cfs", "max_q_over_qfull", "max_d_over_d")}
    la = {k: arr(a, k) for k in lb}
    links = [{"id": display_name(str(l)), "peak_flow_cfs_before": _f(lb["peak_flow_cfs"][i]), "peak_flow_cfs_after": _f(la["peak_flow_cfs"][i]),
              "max_q_over_qfull_before": _f(lb["max_q_over_qfull"][i]), "max_q_over_qfull_after": _f(la["max_q_over_qfull"][i]),
              "max_d_over_d_before": _f(lb["max_d_over_d"][i]), "max_d_over_d_after": _f(la["max_d_over_d"][i])}
             for i, l in enumerate(b.link.values)]
    nb = {k: arr(b, k) for k in ("flooding_volume_cf", "max_surcharge_ft", "max_hgl_ft", "freeboard_ft")}
    na = {k: arr(a, k) for k in nb}
    nodes = [{"id": display_name(str(n)), "flooding_volume_cf_before": _f(nb["flooding_volume_cf"][i]),
              "flooding_volume_cf_after": _f(na["flooding_volume_cf"][i]),
              "max_surcharge_ft_before": _f(nb["max_surcharge_ft"][i]), "max_surcharge_ft_after": _f(na["max_surcharge_ft"][i]),
              "max_hgl_ft_before": _f(nb["max_hgl_ft"][i]), "max_hgl_ft_after": _f(na["max_hgl_ft"][i]),
              "freeboard_ft_before": _f(nb["freeboard_ft"][i]), "freeboard_ft_after": _f(na["freeboard_ft"][i])}
             for i, n in enumerate(b.node.values)]
    checks = [{**ch.to_dict(), "element": display_name(ch.element)} for ch in d.checks]
    sim = d.scenario.get("simulation", {})
    model_file = next((f for f in d.scenario.get("external_files", []) if f.get("verb") == "MODEL"), None)
    return {"kind": "capacity-demonstration", "verdict": d.verdict, "model": str(d.model),
            "model_file": d.model.name, "model_sha256": None if model_file is None else model_file.get("sha256"),
            "submittal": d.submittal.to_dict() if d.submittal is not None else None,
            "storm": d.storm_name or "model rainfall", "storm_record": _jsonable(d.storm_record), "plant": d.plant,
            "simulation": {"start": sim.get("start"), "end": sim.get("end"), "report_start": sim.get("report_start"),
                           "spinup_hr": sim.get("spinup_hr"), "spinup_policy": sim.get("spinup_policy"),
                           "initial_state": sim.get("initial_state")},
            "rainfall_simulated_in": _f(b.attrs.get("rainfall_simulated_in", math.nan)),
            "injections": _jsonable(d.injections), "untrusted_reasons": list(d.untrusted_reasons),
            "noise": _jsonable(d.noise),
            "warnings": list(d.warnings), "fixes": list(d.scenario.get("fixes", [])),
            "work_dir": str(d.work_dir) if d.keep_files else None,
            "external_files": _jsonable(d.scenario.get("external_files", [])),
            "criteria": d.criteria.to_dict(), "scenario": _jsonable(d.scenario),
            "before": run_doc(b, d.runs["before"]), "after": run_doc(a, d.runs["after"]),
            "checks": checks, "failed_checks": sum(1 for ch in d.checks if ch.passed is False),
            "links": links, "nodes": nodes,
            "hydrographs": _jsonable(d.hydrographs), "profile": _jsonable(d.profile),
            "geometry": d.geometry,
            "committed": _jsonable(d.committed),
            "units": "flow cfs, depth/elevation ft, volume ft3 (converted from the model's FLOW_UNITS)"}


def _jsonable(o):
    if isinstance(o, np.ndarray):
        return [_jsonable(v) for v in o.tolist()]
    if isinstance(o, dict):
        return {k: _jsonable(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_jsonable(v) for v in o]
    if isinstance(o, (np.floating, float)):
        return _f(o)
    if isinstance(o, np.integer):
        return int(o)
    return o


# --------------------------------------------------------------------------- profile and report


def profile_path(model: SwmmInp, start: str, end: str) -> list[dict]:
    """Nodes along the flow path from ``start`` to ``end`` with their distance [ft] (conduit lengths)."""
    import networkx as nx

    g = network_graph(model)
    try:
        path = nx.shortest_path(g, start, end)
    except (nx.NetworkXNoPath, nx.NodeNotFound):
        raise InputError(f"no flow path from {start} to {end}") from None
    lengths = {r.tokens[0]: n for r in model.rows("CONDUITS") if len(r.tokens) > 3 and (n := finite_number(r.tokens[3])) is not None}
    out, dist = [{"node": path[0], "distance_ft": 0.0, "link": None}], 0.0
    for u, v in zip(path[:-1], path[1:]):
        lid = min(g[u][v], key=lambda k: lengths.get(k, 0.0))
        dist += lengths.get(lid, 0.0)
        out.append({"node": v, "distance_ft": dist, "link": lid})
    return out
