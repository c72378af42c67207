"""Running the searches of every node and storm: on dask (or in this process), streamed to Zarr, resumable.

The driver keeps one :class:`~capacitysim.workflows.headroom.search.NodeSearch` per (node, storm)
cell and the tasks in flight (at most :data:`IN_FLIGHT_PER_WORKER` per worker); each search has at
most one run in flight, and a search that needs another run goes to the front of the queue, so
cells finish (and are written) early and memory stays flat. The network is scattered once
(``broadcast=True``); the run before of each storm is one task, its result a dependency of every
run of that storm (dask keeps it on the workers).

Groups and their leaders: the nodes of a storm whose screen names the same element form a group.
Its leader (the node of median screen estimate) is searched first; the others start when it is
done, with the screen's estimate multiplied by the leader's correction (its bracket's geometric
middle over its screen estimate). The correction depends only on the leader's runs, so a search
is the same whatever order the cluster finishes runs in: a resumed run (or one on another number
of workers) gives the same figures, bit for bit.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

from capacitysim.io.headroom_store import MISSING, StoreWriter, cell_of, read_cells
from capacitysim.workflows.headroom.search import NodeSearch, Point
from capacitysim.workflows.headroom.tasks import (
    before_task,
    judged_for,
    point_task,
    simulated_hr,
)

#: Tasks kept in flight per worker.
IN_FLIGHT_PER_WORKER = 3


@dataclass
class RunCounts:
    """What one invocation did."""

    cells: int = 0  # cells computed now
    runs: int = 0  # SWMM runs of the cells computed now
    before_runs: int = 0
    screened: int = 0  # cells given the screen's estimate only (screen_only)
    workers: int = 0
    scheduler: str = ""
    #: storm label -> hours one complete run simulates (from the run before)
    full_run_hr: dict = field(default_factory=dict)


class _Inline:
    """Tasks run in this process, one at a time, in submission order."""

    def __init__(self):
        self.q = deque()
        self.n = 0

    def scatter(self, obj):
        return obj

    def submit(self, fn, *args):
        self.n += 1
        h = self.n
        self.q.append((h, fn, args))
        return h

    def pending(self) -> int:
        return len(self.q)

    def next(self):
        h, fn, args = self.q.popleft()
        try:
            return h, fn(*args), None
        except Exception as exc:  # noqa: BLE001
            return h, None, exc

    def release(self, h):
        pass


class _Dask:
    """Tasks on a dask.distributed client; results in completion order."""

    def __init__(self, client):
        from distributed import as_completed

        self.client = client
        self.ac = as_completed()
        self.live = 0

    def scatter(self, obj):
        return self.client.scatter(obj, broadcast=True, hash=False)

    def submit(self, fn, *args):
        f = self.client.submit(fn, *args, pure=False)
        self.ac.add(f)
        self.live += 1
        return f

    def pending(self) -> int:
        return self.live

    def next(self):
        f = next(self.ac)
        self.live -= 1
        if f.status == "finished":
            return f, f.result(), None
        return f, None, f.exception()

    def release(self, h):
        h.release()


def _leader(nodes, screen_gpd):
    """The node of median screen estimate (ties: the order of ``nodes``)."""
    ranked = sorted(range(len(nodes)), key=lambda i: (screen_gpd.get(nodes[i], math.inf), i))
    return nodes[ranked[len(ranked) // 2]]


def _factor(rec: dict) -> float:
    """A finished leader's correction of its screen estimate (1 when it gave no bracket)."""
    s = rec.get("screen_gpd")
    p, f = rec.get("passing_gpd"), rec.get("failing_gpd")
    if rec.get("status") != "ok" or not s or not p or not f or not math.isfinite(s):
        return 1.0
    return math.sqrt(p * f) / s


def run_cells(executor, net, model, storms, nodes, status, store_path, *, tolerance, min_gpd, max_gpd, method,
              criteria, max_nodes=None, progress=None, workers: int = 0, early_stop: bool = True,
              screen_only: bool = False) -> RunCounts:
    """Compute every missing cell of the store (``status`` node x storm == 0); the counts of this invocation.

    ``storms``: list of (label, Storm or None); ``nodes``: the node ids (store order). ``screen_only``: the runs
    before and the screen only; each missing cell gets the screen's estimate and stays missing (no figure is
    confirmed; a later call without it confirms them).
    """
    from capacitysim.rules.capacity import continuity_error
    from capacitysim.workflows.headroom.screen import screen

    counts = RunCounts(workers=workers)
    stop_early = method == "screen" and early_stop
    writer = StoreWriter(store_path)
    stored = {(r["node"], r["storm"]): r for r in read_cells(store_path)} if (status != MISSING).any() else {}
    todo = {j: [i for i in range(len(nodes)) if status[i, j] == MISSING] for j in range(len(storms))}
    total = sum(len(v) for v in todo.values())
    started = 0
    window = max(1, IN_FLIGHT_PER_WORKER * max(workers, 1)) if not isinstance(executor, _Inline) else 1
    net_ref = executor.scatter(net)
    meta: dict = {}
    before_refs: dict = {}
    ready: deque = deque()
    waiting: dict = {}  # (storm index, group key) -> followers
    group_of: dict = {}  # id(search) -> (storm index, group key) for leaders
    series_nodes_cache: dict = {}
    done = 0
    node_index = {n: i for i, n in enumerate(nodes)}

    def finish(s: NodeSearch, j: int):
        nonlocal done
        rec = s.record()
        writer.write(node_index[s.node], j, cell_of(rec))
        counts.cells += 1
        done += 1
        key = group_of.pop(id(s), None)
        if key is not None:
            fac = _factor(rec)
            for f in waiting.pop(key, []):
                f.factor = fac
                ready.append((f, j))
        if progress is not None:
            progress(done, total, counts.runs)

    def series_nodes():
        if "x" not in series_nodes_cache:
            want = []
            for b in net.bundle.basins:
                want.append(b.outlet)
                if b.overflow_outfall:
                    want.append(b.overflow_outfall)
            if net.bundle.plant:
                want.append(net.bundle.plant)
            series_nodes_cache["x"] = tuple(dict.fromkeys(want))
        return series_nodes_cache["x"]

    for j, (label, storm) in enumerate(storms):
        if todo[j]:
            h = executor.submit(before_task, net_ref, storm, series_nodes(), not screen_only)  # a screening judges no run
            meta[h] = ("before", j)

    def start_storm(j: int, before: dict):
        c = criteria
        label = storms[j][0]
        b = before["ds"]
        err = continuity_error(b)
        distrust = None
        if not abs(err) <= c.continuity_limit_pct:
            distrust = (f"the run before is untrusted: its continuity error {err:.3g} % exceeds {c.continuity_limit_pct:g} % "
                        "(every connection's verdict would be untrusted)")
        elif not b.attrs.get("routing", 1):
            distrust = "the model routes no flow (no links, or IGNORE_ROUTING YES): no capacity can be demonstrated with it"
        elif before.get("initial_state_problem"):
            distrust = f"the run before is untrusted: {before['initial_state_problem']}"
        elif before.get("storm_problems"):
            distrust = f"the run before is untrusted: {before['storm_problems'][0]}"
        sc = screen(model, b, before.get("series"), nodes, lambda n: judged_for(net, n), c, net.peaking)
        groups: dict = {}
        for n in nodes:  # the screen's element and the node's basin: nodes behind a regulator share its spill
            outlets = judged_for(net, n)["outlets"]
            groups.setdefault(f"{sc.key.get(n, '')}@{outlets[0] if outlets else ''}", []).append(n)
        leaders = {k: _leader(v, sc.gpd) for k, v in groups.items()}
        order = sorted(groups, key=lambda k: (-len(groups[k]), k))
        searches = []
        for i in todo[j]:
            n = nodes[i]
            s = NodeSearch(n, label, tolerance, min_gpd, max_gpd, screen_gpd=sc.gpd.get(n, math.inf),
                           screen_key=sc.key.get(n, ""), method=method)
            if distrust:
                s.status, s.message = "untrusted", distrust
                finish(s, j)
                continue
            searches.append(s)
        if screen_only:
            writer.write_screen(j, [node_index[s.node] for s in searches],
                                [s.screen_gpd for s in searches],  # inf: no element limits the node
                                [s.screen_key for s in searches])
            counts.screened += len(searches)
            if progress is not None:  # the cells screened so far, over every storm
                progress(done + counts.screened, total, counts.runs)
            return
        by_node = {s.node: s for s in searches}
        for k in order:
            lead = leaders[k]
            for n in groups[k]:
                s = by_node.get(n)
                if s is None:
                    continue
                if method != "screen":
                    ready.append((s, j))
                elif n == lead:
                    group_of[id(s)] = (j, k)
                    ready.append((s, j))
                else:
                    lead_rec = stored.get((lead, label))
                    if lead_rec is not None and lead_rec.get("status") != "missing":
                        s.factor = _factor({**lead_rec, "screen_gpd": sc.gpd.get(lead)})
                        ready.append((s, j))
                    elif lead in by_node:
                        waiting.setdefault((j, k), []).append(s)
                    else:
                        ready.append((s, j))
        # leaders first: move them ahead of the followers released without waiting
        leads = [x for x in ready if id(x[0]) in group_of]
        rest = [x for x in ready if id(x[0]) not in group_of]
        ready.clear()
        ready.extend(leads + rest)

    active = set()
    while True:
        while len(active) < window and ready:
            s, j = ready.popleft()
            if id(s) not in active and not s.points and max_nodes is not None and started >= max_nodes:
                continue  # interrupted on purpose (tests): this cell stays missing
            x = s.next_gpd()
            if x is None:
                finish(s, j)
                continue
            if not s.points:
                started += 1
            h = executor.submit(point_task, net_ref, storms[j][1], before_refs[j], s.node, x, None, stop_early)
            meta[h] = ("point", s, j)
            active.add(id(s))
        if executor.pending() == 0:
            break
        h, res, exc = executor.next()
        kind = meta.pop(h)
        if kind[0] == "before":
            j = kind[1]
            counts.before_runs += 1 if exc is not None else res.get("engine_runs", 1)
            if exc is not None:
                for i in todo[j]:
                    s = NodeSearch(nodes[i], storms[j][0], tolerance, min_gpd, max_gpd, method=method)
                    s.status, s.message = "error", f"the run before raised: {type(exc).__name__}: {exc}"[:240]
                    finish(s, j)
                continue
            before_refs[j] = res if isinstance(executor, _Inline) else h
            counts.full_run_hr[storms[j][0]] = simulated_hr(res["ds"])
            start_storm(j, res)
            continue
        _, s, j = kind
        active.discard(id(s))
        executor.release(h)
        counts.runs += 1
        if exc is not None:
            p = Point(float("nan"), "error", message=f"{type(exc).__name__}: {exc}"[:200])
        else:
            p = Point(res["gpd"], res["verdict"], res["ratios"], res["governing"],
                      "; ".join(res["untrusted_reasons"]) if res["verdict"] == "untrusted" else res["message"],
                      simulated_hr=res.get("simulated_hr"), stopped_hr=res.get("stopped_hr"),
                      within_noise=bool(res.get("within_noise")))
        s.add(p)
        if s.status != "running":
            finish(s, j)
        else:
            ready.appendleft((s, j))
    return counts
