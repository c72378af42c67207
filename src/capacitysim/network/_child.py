"""The SWMM run itself, executed as a script in a fresh child process (never imported by the parent).

Usage: ``python _child.py INP RPT OUT STATS_JSON [STOP_JSON]`` (a run; with a stop rule, see
:func:`_run_until`; with the environment variable :data:`ENV_PROGRESS` naming a file, the run reports its
simulated time there while it runs, see :class:`_Reporter`) or ``python _child.py --probe INP RPT OUT
JSON`` (open the project, which parses and checks the whole input as a run would, write its
network and close it: the engine is the judge of a model's validity). Imports only the standard library and
``swmm.toolkit`` (about 20 ms), so process start-up is negligible against the engine time.

Why a child process: the SWMM engine is one global object per process (two simulations in one
process corrupt each other, threads are unsafe; ../shared/reference/swmm-notes.md). The parent
starts this script with ``stdout`` on ``/dev/null`` (the engine prints its progress from C to file
descriptor 1) and ``OMP_NUM_THREADS=1``.

The run is ``swmm_open`` / ``swmm_start`` / one ``swmm_stride`` over the whole run (the engine's
C loop of ``swmm_step``, as in ``swmm_run``; no Python per routing step) / ``swmm_end`` /
``swmm_close``: the same calls ``swmm_run`` makes, with two additions while the project is open:
the full-flow capacity and full depth of every link (``swmm_getValue(swmm_LINK_FULLFLOW)``, the
values behind the report's Max/Full Flow and Max/Full Depth, reached by ctypes on the same
``libswmm5``), and the engine's own routing-step statistics (max depth, flooding, surcharge time,
max flow), which are exact where the ``.out`` file only holds reporting steps.

Everything is written in the model's own units (FLOW_UNITS); the parent converts.

Progress (issue 28, item 5): ``swmm_stride`` over the whole run reports nothing until the end. When the parent
asks for progress (:data:`ENV_PROGRESS`), the run steps with ``swmm_step`` instead, the call ``swmm_run`` and
``swmm_stride`` repeat in C (EPA SWMM 5.2 ``swmm5.c``: ``swmm_run`` is ``swmm_start``, a loop of ``swmm_step``
while the elapsed time is positive, ``swmm_end``; ``swmm_stride`` runs the same loop until its stride ends, and a
stride past the end of the run caps nothing): the same routing steps, so results identical bit for bit
(``tests/network/test_engine_progress.py`` compares every statistic with ``==``). Between steps the wall clock
is read (``time.monotonic``, tens of nanoseconds against a routing step of a network) and at most once per
:data:`ENV_PROGRESS_S` seconds the file is replaced atomically. A run without progress keeps the one stride.
"""

import ctypes
import json
import os
import sys
import time

#: Stride [s] longer than any simulation (68 years): swmm_stride then runs the whole simulation in C.
STRIDE_ALL_S = 2**31 - 1
#: Environment variable naming the file the run reports its progress to (absent: no progress, one stride).
ENV_PROGRESS = "CAPACITYSIM_ENGINE_PROGRESS"
#: Environment variable: the shortest wall time between two progress writes [s] (default 1).
ENV_PROGRESS_S = "CAPACITYSIM_ENGINE_PROGRESS_S"


def _libswmm5():
    import swmm.toolkit

    base = os.path.dirname(os.path.dirname(os.path.dirname(swmm.toolkit.__file__)))
    for name in ("libswmm5.so", "libswmm5.dylib", "swmm5.dll"):
        path = os.path.join(base, "swmm_toolkit", name)
        if os.path.exists(path):
            lib = ctypes.CDLL(path)  # the loader hands back the handle _solver already uses
            lib.swmm_getValue.restype = ctypes.c_double
            lib.swmm_getValue.argtypes = [ctypes.c_int, ctypes.c_int]
            return lib
    return None


def _totals(obj):
    return {a: getattr(obj, a) for a in dir(obj) if not a.startswith("_") and a not in ("this", "thisown")}


def _iso(t):
    y, mo, d, h, mi, s = t
    return f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}"


class _Reporter:
    """Writes the run's progress to ``path`` (JSON, replaced atomically) at most once per ``every_s`` of wall time.

    The document: ``run`` (the input's stem), ``elapsed_days`` (simulated time since the start, as ``swmm_step``
    returns it [days]), ``total_days`` (END minus START of ``[OPTIONS]`` [days]), ``start`` and ``now`` (ISO
    simulated date-times), ``wall_s`` (wall time since ``swmm_start`` [s]), ``eta_s`` (wall time left at the rate so
    far, ``wall_s * (total - elapsed) / elapsed`` [s]; None before the first step), ``done`` (the run reached its
    end) and ``writes`` (how many times the file was written).
    """

    def __init__(self, S, E, path, every_s, run):
        import datetime as dt

        self.path, self.tmp, self.every_s, self.run = path, path + ".tmp", float(every_s), run
        self.start = dt.datetime(*S.simulation_get_datetime(E.TimeProperty.START_DATE))
        end = dt.datetime(*S.simulation_get_datetime(E.TimeProperty.END_DATE))
        self.total_days = (end - self.start).total_seconds() / 86400.0
        self.t0 = time.monotonic()
        self.next_t = self.t0  # the first step writes
        self.writes = 0
        self.last = 0.0

    def tick(self, elapsed):
        """After each routing step: ``elapsed`` [days]; writes when ``every_s`` has passed since the last write."""
        self.last = elapsed
        now = time.monotonic()
        if now >= self.next_t:
            self.write(elapsed, now, False)
            self.next_t = now + self.every_s

    def finish(self, stopped=False):
        """The run ended, written at once: the whole period, or, when a stop rule stopped it, the last elapsed time.

        ``swmm_step`` returns 0 for the step that reaches the end of the period (EPA SWMM 5.2 ``swmm5.c``:
        the elapsed time is reported only while ``NewRoutingTime < TotalDuration``), so the last time it
        returned lies one routing step short of the end: a run that ended has simulated ``total_days``.
        """
        self.write(self.last if stopped else self.total_days, time.monotonic(), True)

    def write(self, elapsed, now, done):
        import datetime as dt

        wall = now - self.t0
        self.writes += 1
        doc = {"run": self.run, "elapsed_days": elapsed, "total_days": self.total_days,
               "start": self.start.isoformat(),
               "now": (self.start + dt.timedelta(days=elapsed)).replace(microsecond=0).isoformat(),
               "wall_s": wall, "eta_s": (0.0 if done else wall * (self.total_days - elapsed) / elapsed if elapsed > 0
                                         else None),
               "done": done, "writes": self.writes}
        try:
            with open(self.tmp, "w", encoding="utf-8") as fh:
                json.dump(doc, fh)
            os.replace(self.tmp, self.path)
        except OSError:  # the folder was removed (the run is being stopped): progress is never worth a failed run
            pass


def _run_reporting(S, reporter):
    """Step the whole run (``swmm_step``: the routing steps of ``swmm_run``), reporting after each step."""
    while True:
        elapsed = S.swmm_step()
        if elapsed <= 0:
            return
        reporter.tick(elapsed)


def _run_until(S, E, stop_path, reporter=None):
    """Step the run (``swmm_step``, the same routing steps as ``swmm_run``) until its end or a stop rule.

    The rule (JSON, model units): ``not_before_days`` (elapsed time before which it never stops),
    ``every_steps`` (routing steps between looks) and thresholds ``[id, value]`` on statistics that
    never decrease during a run: ``node_max_depth``, ``node_max_inflow``, ``node_vol_flooded``,
    ``node_total_inflow`` (volume), ``link_max_depth``, ``link_max_flow`` (absolute). The run stops
    at the first look at or after ``not_before_days`` where one statistic exceeds its threshold
    (a complete run's statistic then exceeds it too). Returns None (ran to the end) or what
    stopped it: ``elapsed_days``, ``kind``, ``id``, ``value``, ``threshold``.
    """
    with open(stop_path, encoding="utf-8") as fh:
        rule = json.load(fh)
    not_before = float(rule.get("not_before_days", 0.0))
    every = max(1, int(rule.get("every_steps", 30)))
    looks = []
    for kind, obj in (("node_max_depth", E.ObjectType.NODE), ("node_max_inflow", E.ObjectType.NODE),
                      ("node_vol_flooded", E.ObjectType.NODE), ("node_total_inflow", E.ObjectType.NODE),
                      ("link_max_depth", E.ObjectType.LINK), ("link_max_flow", E.ObjectType.LINK)):
        for ident, thr in rule.get(kind, ()):
            try:
                looks.append((kind, ident, S.project_get_index(obj, ident), float(thr)))
            except Exception:  # noqa: BLE001 - an id the engine does not know: no look at it
                continue

    def value(kind, i):
        if kind == "node_max_depth":
            return S.node_get_stats(i).maxDepth
        if kind == "node_max_inflow":
            return S.node_get_stats(i).maxInflow
        if kind == "node_vol_flooded":
            return S.node_get_stats(i).volFlooded
        if kind == "node_total_inflow":
            return S.node_get_total_inflow(i)
        if kind == "link_max_depth":
            return S.link_get_stats(i).maxDepth
        return abs(S.link_get_stats(i).maxFlow)

    k = 0
    while True:
        elapsed = S.swmm_step()
        if elapsed <= 0:
            return None
        if reporter is not None:
            reporter.tick(elapsed)
        k += 1
        if looks and elapsed >= not_before and k % every == 0:
            for kind, ident, i, thr in looks:
                v = value(kind, i)
                if v > thr:
                    return {"elapsed_days": elapsed, "kind": kind, "id": ident, "value": v, "threshold": thr}


def probe(inp, rpt, out, json_path):
    from swmm.toolkit import shared_enum as E
    from swmm.toolkit import solver as S

    wall = _wall()

    S.swmm_open(inp, rpt, out)
    try:
        n_nodes = S.project_get_count(E.ObjectType.NODE)
        n_links = S.project_get_count(E.ObjectType.LINK)
        node_ids = [S.project_get_id(E.ObjectType.NODE, i) for i in range(n_nodes)]
        doc = {
            "flow_units": E.FlowUnits(S.simulation_get_unit(E.UnitProperty.FLOW_UNIT)).name,
            "nodes": {"id": node_ids, "type": [E.NodeType(S.node_get_type(i)).name for i in range(n_nodes)]},
            "links": {"id": [S.project_get_id(E.ObjectType.LINK, i) for i in range(n_links)],
                      "type": [E.LinkType(S.link_get_type(i)).name for i in range(n_links)],
                      "from": [node_ids[S.link_get_connections(i)[0]] for i in range(n_links)],
                      "to": [node_ids[S.link_get_connections(i)[1]] for i in range(n_links)]},
            "n_subcatchments": S.project_get_count(E.ObjectType.SUBCATCH),
            "n_gauges": S.project_get_count(E.ObjectType.GAGE),
            "start": _iso(S.simulation_get_datetime(E.TimeProperty.START_DATE)),
            "end": _iso(S.simulation_get_datetime(E.TimeProperty.END_DATE)),
            "report_start": _iso(S.simulation_get_datetime(E.TimeProperty.REPORT_DATE)),
            "sandbox": wall,
        }
    finally:
        S.swmm_close()
    with open(json_path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh)


def _wall():
    """Apply the operating system's wall (``sandbox.py`` beside this file, loaded by path: the child imports no
    capacitysim package) once the engine's libraries are loaded and before the model is opened."""
    import importlib.util

    limit = os.environ.get("CAPACITYSIM_ENGINE_MAX_FILE_BYTES")
    if limit:  # the largest file the run may write (the results file of a run with a 1-second report step...)
        import resource
        import signal

        resource.setrlimit(resource.RLIMIT_FSIZE, (int(limit), int(limit)))
        # Python ignores SIGXFSZ (a write past the limit would then fail quietly and the engine, which does not
        # check its writes, would go on with a cut results file): the signal ends the run instead
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    spec = importlib.util.spec_from_file_location("_capacitysim_sandbox", os.path.join(os.path.dirname(__file__), "sandbox.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod.confine_from_env()


def main(inp, rpt, out, stats_path, stop_path=None):
    from swmm.toolkit import shared_enum as E
    from swmm.toolkit import solver as S

    wall = _wall()

    S.swmm_open(inp, rpt, out)
    try:
        lib = _libswmm5()
        n_nodes = S.project_get_count(E.ObjectType.NODE)
        n_links = S.project_get_count(E.ObjectType.LINK)
        flow_units = E.FlowUnits(S.simulation_get_unit(E.UnitProperty.FLOW_UNIT)).name
        nodes = {
            "id": [S.project_get_id(E.ObjectType.NODE, i) for i in range(n_nodes)],
            "type": [E.NodeType(S.node_get_type(i)).name for i in range(n_nodes)],
            "invert_elev": [S.node_get_parameter(i, E.NodeProperty.INVERT_ELEVATION) for i in range(n_nodes)],
            "full_depth": [S.node_get_parameter(i, E.NodeProperty.FULL_DEPTH) for i in range(n_nodes)],
            "surcharge_depth": [S.node_get_parameter(i, E.NodeProperty.SURCHARGE_DEPTH) for i in range(n_nodes)],
        }
        n_sub = S.project_get_count(E.ObjectType.SUBCATCH)
        dates = {k: _iso(S.simulation_get_datetime(getattr(E.TimeProperty, k.upper())))
                 for k in ("start_date", "end_date", "report_date")}
        links = {
            "id": [S.project_get_id(E.ObjectType.LINK, i) for i in range(n_links)],
            "type": [E.LinkType(S.link_get_type(i)).name for i in range(n_links)],
            "from": [],
            "to": [],
            "offset1": [S.link_get_parameter(i, E.LinkProperty.OFFSET_1) for i in range(n_links)],
            "offset2": [S.link_get_parameter(i, E.LinkProperty.OFFSET_2) for i in range(n_links)],
            "full_flow": [lib.swmm_getValue(S.swmm_LINK_FULLFLOW, i) if lib else None for i in range(n_links)],
            "full_depth": [lib.swmm_getValue(S.swmm_LINK_FULLDEPTH, i) if lib else None for i in range(n_links)],
        }
        for i in range(n_links):
            n1, n2 = S.link_get_connections(i)
            links["from"].append(nodes["id"][n1])
            links["to"].append(nodes["id"][n2])

        # SWMM routes only with links and without IGNORE_ROUTING; otherwise its node and link
        # statistics are never allocated (node_get_stats then crashes the process): report zeros
        routing = n_links > 0 and not S.simulation_get_setting(E.SimOption.IGNORE_ROUTE)
        cpu0 = time.process_time()
        S.swmm_start(True)
        # one stride longer than any simulation: the engine's own C loop of routing steps, as in
        # swmm_run. (A shorter stride caps the last routing step of each stride at its end, which
        # changes the step sequence; a stride past the end of the run changes nothing.)
        stopped = None
        progress_path = os.environ.get(ENV_PROGRESS)
        if progress_path:
            reporter = _Reporter(S, E, progress_path, float(os.environ.get(ENV_PROGRESS_S) or 1.0),
                                 os.path.splitext(os.path.basename(inp))[0])
            if stop_path is None:
                _run_reporting(S, reporter)
            else:
                stopped = _run_until(S, E, stop_path, reporter)
            reporter.finish(stopped is not None)
        elif stop_path is None:
            while S.swmm_stride(STRIDE_ALL_S) > 0:
                pass
        else:
            stopped = _run_until(S, E, stop_path)

        node_stats = {k: [] for k in ("max_depth", "vol_flooded", "time_flooded", "time_surcharged", "max_inflow", "max_overflow",
                                      "total_inflow_volume", "total_lateral_volume")}
        for i in range(n_nodes if routing else 0):
            st = S.node_get_stats(i)
            node_stats["max_depth"].append(st.maxDepth)
            node_stats["vol_flooded"].append(st.volFlooded)
            node_stats["time_flooded"].append(st.timeFlooded)
            node_stats["time_surcharged"].append(st.timeSurcharged)
            node_stats["max_inflow"].append(st.maxInflow)
            node_stats["max_overflow"].append(st.maxOverflow)
            # whole-run inflow volume (mass balance, every routing step): at an outfall, what it discharged
            node_stats["total_inflow_volume"].append(S.node_get_total_inflow(i))
            # lateral inflow volume (DWF + external + RDII + runoff) over the reporting period
            node_stats["total_lateral_volume"].append(st.totLatFlow)
        pumps, storages = {}, {}
        if not routing:
            for k in node_stats:
                node_stats[k] = [0.0] * n_nodes
        for i in range(n_links if routing else 0):
            if S.link_get_type(i) == E.LinkType.PUMP.value:
                ps = S.pump_get_stats(i)
                pumps[links["id"][i]] = {"utilized": ps.utilized, "max_flow": ps.maxFlow, "off_curve_low": ps.offCurveLow,
                                         "off_curve_high": ps.offCurveHigh, "total_periods": ps.totalPeriods}
        for i in range(n_nodes if routing else 0):
            if nodes["type"][i] == "STORAGE":
                ss = S.storage_get_stats(i)
                storages[nodes["id"][i]] = {"max_volume": ss.maxVol}
        link_stats = {k: [] for k in ("max_flow", "max_depth", "time_surcharged", "time_full_flow")}
        for i in range(n_links if routing else 0):
            st = S.link_get_stats(i)
            link_stats["max_flow"].append(st.maxFlow)
            link_stats["max_depth"].append(st.maxDepth)
            link_stats["time_surcharged"].append(st.timeSurcharged)
            link_stats["time_full_flow"].append(st.timeFullFlow)
        if not routing:
            for k in link_stats:
                link_stats[k] = [0.0] * n_links
        # cumulative totals of the whole run (read while the project runs, as the API requires)
        routing_totals = _totals(S.system_get_routing_totals())
        runoff_totals = _totals(S.system_get_runoff_totals())
        S.swmm_end()
        engine_cpu_s = time.process_time() - cpu0
        runoff_err, flow_err, qual_err = S.swmm_get_mass_balance()
        # no swmm_report(): in 5.2 swmm_end writes the summaries; swmm_report adds the [REPORT]
        # time-series tables (130,000 lines for Hartfordville), which swmm_run does not write either
    finally:
        S.swmm_close()
    doc = {
        "flow_units": flow_units,
        "nodes": nodes,
        "links": links,
        "node_stats": node_stats,
        "link_stats": link_stats,
        "runoff_continuity_error_pct": runoff_err,
        "flow_routing_continuity_error_pct": flow_err,
        "pump_stats": pumps,
        "storage_stats": storages,
        "routing_totals": routing_totals,
        "runoff_totals": runoff_totals,
        "dates": dates,
        "n_subcatchments": n_sub,
        "routing": routing,
        "engine_cpu_s": engine_cpu_s,
        "child_cpu_s": time.process_time(),
        "stopped": stopped,
        "sandbox": wall,
    }
    with open(stats_path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh)


if __name__ == "__main__":
    try:
        if sys.argv[1] == "--probe":
            probe(*sys.argv[2:6])
        else:
            main(*sys.argv[1:6])
    except Exception as exc:  # the parent reads the engine's text from the .rpt
        sys.stderr.write(f"{type(exc).__name__}: {exc}\n")
        sys.exit(1)
