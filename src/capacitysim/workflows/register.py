"""The capacity register (issue 24, part 5): what each plant and each registered model can still take.

The credit bank keeps the commitments (:meth:`capacitysim.bank.Ledger.register`); this workflow puts
beside them the figures the bank does not hold, computed by the workflows that give them elsewhere:

* **each plant** the bank's basins drain to: its permitted flow, the 12-month figure (the highest
  period average in the look-back window of 15 RCNY § 18-37(b)), the committed average flow and
  the remaining treatment headroom. The bank holds no flow records: they are inputs (``plants``:
  a plant file and its daily record per plant key), and the figures are those of the SPDES check
  itself (:func:`capacitysim.workflows.spdes.run_check`) run with the plant's commitments
  (:func:`capacitysim.workflows.committed.spdes_commitments`) and no added flow, so the remaining
  headroom is exactly the ``headroom_gpd`` of ``capacitysim spdes check --committed BANK``. A
  plant without a record is listed with its committed flow and "not computed".
* **each registered model**: its committed flows (with their nodes, and the model's geometry for a
  map) and the remaining headroom per manhole with the commitments in place: the headroom search
  (:func:`capacitysim.workflows.headroom.headroom`) with the model's commitments injected into
  every run as ``capacitysim capacity --committed BANK`` injects them (the AFTER run, before the
  connection: program policy ``committed_baseline``), so each figure is the largest connection
  that passes together with every commitment against the model of record, and its bracket is what
  ``capacity --connect NODE=GPD --committed BANK`` gives (passing_gpd passes, failing_gpd fails). Nodes searched: by default each commitment's node and each basin's
  outlet (the cost stays bounded: about 3 to 5 engine runs per node and one run before per
  storm); ``nodes`` adds nodes; ``all_nodes`` searches every junction.

Freshness. Each computed figure records the bank head and the time it was computed for, and a key
of everything it depends on (the commitments it included: application, node, average flow; the
model's or the plant files' SHA-256; the storms, criteria and options; the as-of date for a plant).
The figures are stored next to the bank (:func:`default_cache_path`, written atomically) and
re-used while their key is unchanged: the same bank head and inputs, or a head that moved by
journal rows that changed none of the section's commitments (a deposit elsewhere); a commitment
added, released or moved changes the key and the figure is computed again; ``refresh`` computes
everything. :func:`stored_register` shows the last register without computing anything, each
figure "current" or "stale" against the bank as it is now.

References
----------
Binghamton-Johnson City Joint Sewage Board I/I Offset Program, sewer flow credit bank paragraph H(1)
(adequate hydraulic and treatment capacity); 15 RCNY § 18-37(b) (the prior twelve months' SPDES flow
limit) and § 18-37(e) (approvals expire after five years).
"""

from __future__ import annotations

import copy
import datetime as _dt
import hashlib
import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from capacitysim.errors import InputError
from capacitysim.units import GPD_PER_MGD
from capacitysim.version import __version__

#: The ``kind`` of the register document and of its store next to the bank.
KIND = "capacity-register"
CACHE_KIND = "capacity-register-store"
#: The store of computed figures next to the bank: ``<bank file name>`` + this suffix.
CACHE_SUFFIX = ".register.json"
#: Figures kept per plant or model in the store (the newest; older ones are dropped).
CACHE_ENTRIES_PER_SCOPE = 4
#: Attempts to read the bank's register and commitments at one head (another process may write between).
READ_ATTEMPTS = 3

DEFINITIONS = {
    "permitted_flow_gpd": "the SPDES permit's flow limit [gpd] (the plant file's flow_limit_mgd)",
    "twelve_month": "the highest period average of the plant's record (by the permit's basis) among the periods "
                    "ending in the look-back window, the prior twelve months of 15 RCNY § 18-37(b) [gpd]",
    "committed_gpd": "the average daily flow the credit bank has committed on the basins registered as draining to the "
                     "plant (reserved, approved or connected and not yet in the model of record) [gpd]",
    "remaining_gpd": "permitted flow - 12-month figure - committed [gpd]: the headroom_gpd of `capacitysim spdes check "
                     "--committed BANK` with no added flow (negative: the commitments already exceed the permit)",
    "max_connection_gpd": "the largest average connection [gpd] at the node that passes every capacity criterion together "
                          "with the model's commitments, placed as `capacity --committed BANK` places them (program policy "
                          "committed_baseline) (= passing_gpd); `capacity --connect NODE=passing_gpd --committed BANK` "
                          "passes and `--connect NODE=failing_gpd` fails",
    "freshness": "each figure says the bank head and time it was computed for; current: the commitments and inputs it "
                 "depends on are those of the bank now; stale: they changed since (the figure is not re-computed)",
}


# ----------------------------------------------------------------------------------------------------
# inputs
# ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PlantInput:
    """The flow record of one plant of the register: ``--plant KEY=SPEC`` resolved.

    Attributes
    ----------
    key : str
        The plant as the bank registers it (a SPDES permit number or a plant name).
    spec : str
        As given (a bundled plant name, ``PLANT.toml``, ``PLANT.toml,FLOWS.csv``).
    plant_file : Path
        The plant file (name, watershed, spdes_permit, flow_limit_mgd, basis).
    flows : Path
        The plant's daily flow record (CSV, ``date,flow_mgd``).
    """

    key: str
    spec: str
    plant_file: Path
    flows: Path


def parse_plant_option(text: str) -> tuple[str, str]:
    """``KEY=SPEC`` (``--plant``) as ``(key, spec)``; InputError naming the form otherwise."""
    key, sep, spec = str(text).partition("=")
    if not sep or not key.strip() or not spec.strip():
        raise InputError(f"--plant {text!r}: expected KEY=PLANT: the bank's plant key (its SPDES permit number or name, "
                         "as `bank add-basin --plant` registered it), then a bundled plant name (sample-wwtp), a plant "
                         "file PLANT.toml (its record PLANT.csv beside it) or PLANT.toml,FLOWS.csv")
    return key.strip(), spec.strip()


def resolve_plant_input(key: str, spec: str) -> PlantInput:
    """The plant file and daily record ``spec`` names (see :class:`PlantInput`).

    ``spec`` is comma-separated: a bundled plant name (its plant file and its record), a ``.toml``
    plant file, a ``.csv`` daily record. A plant file without a record takes the ``.csv`` of the
    same name beside it, as the bundled plants are laid out.

    Raises
    ------
    InputError
        A file that is not there, two plant files or two records, no plant file, no record.
    """
    from capacitysim.workflows.spdes import resolve_flows_path, resolve_plant_path

    where = f"--plant {key}={spec}"
    plant_file = flows = None
    for item in [x.strip() for x in spec.split(",") if x.strip()]:
        p = Path(item).expanduser()
        suffix = p.suffix.lower()
        if suffix in (".toml", ".csv"):
            if not p.is_file():
                raise InputError(f"{where}: {item}: no such file")
            if suffix == ".toml":
                if plant_file is not None:
                    raise InputError(f"{where}: two plant files ({plant_file.name}, {p.name}); give one")
                plant_file = p
            else:
                if flows is not None:
                    raise InputError(f"{where}: two flow records ({flows.name}, {p.name}); give one")
                flows = p
            continue
        t, c = Path(resolve_plant_path(item)), Path(resolve_flows_path(item))
        if not t.is_file() or t.suffix.lower() != ".toml":
            raise InputError(f"{where}: {item!r} is not a plant file (.toml), a daily flow record (.csv) or a bundled "
                             "plant name (sample-wwtp)")
        if plant_file is not None:
            raise InputError(f"{where}: two plant files ({plant_file.name}, {t.name}); give one")
        plant_file = t
        if flows is None and c.is_file():
            flows = c
    if plant_file is None:
        raise InputError(f"{where}: no plant file: the permit's flow limit and whether the plant discharges within the "
                         "NYC watershed come from a plant file (PLANT.toml, or a bundled plant name)")
    if flows is None:
        sibling = plant_file.with_suffix(".csv")
        if not sibling.is_file():
            raise InputError(f"{where}: no daily flow record: give it as PLANT.toml,FLOWS.csv (none at {sibling})")
        flows = sibling
    return PlantInput(key, spec, plant_file, flows)


def default_cache_path(bank) -> Path:
    """The store of the register's figures next to the bank: ``bank.sqlite`` -> ``bank.sqlite.register.json``."""
    p = Path(bank)
    return p.with_name(p.name + CACHE_SUFFIX)


def _check_cache_path(cache: Path, bank: Path) -> Path:
    """Refuse a store path that is a symbolic link, a folder, or the bank file or one of its SQLite side files."""
    if cache.is_symlink():
        raise InputError(f"--cache {cache}: is a symbolic link; give a plain file path (outputs never follow links)")
    if cache.is_dir():
        raise InputError(f"--cache {cache}: is a folder; give a file path")
    real = os.path.realpath(cache)
    for side in ("", "-wal", "-shm", "-journal"):
        if real == os.path.realpath(str(bank) + side):
            raise InputError(f"--cache {cache}: is the bank file {bank}{side}; it would be overwritten")
    return cache


# ----------------------------------------------------------------------------------------------------
# the result
# ----------------------------------------------------------------------------------------------------
@dataclass
class Register:
    """The result of :func:`capacity_register` and :func:`stored_register`; its document is :meth:`to_dict`."""

    document: dict

    def to_dict(self) -> dict:
        """The register document (``bank register --json``, the report's input), with the envelope (issue 27,
        item 3: the models of record with their SHA-256; SWMM when it computed headroom)."""
        from capacitysim.workflows.document import envelope, swmm_engine

        doc = self.document
        ran = bool((doc.get("inputs") or {}).get("headroom")) and bool(doc.get("runs_total"))
        models = [{"role": "model", "file": m.get("file"), "sha256": m.get("model_sha256")} for m in doc.get("models", [])]
        return envelope(doc, "capacity-register", engine=swmm_engine() if ran else None, inputs=models,
                        same={"capacitysim_version": "capacitysim"}, rename={"inputs": "input_files"})

    @property
    def problems(self) -> list[str]:
        """Cells of the models' headroom without a figure (untrusted runs, errors), in words."""
        out = []
        for m in self.document.get("models", []):
            for r in (m.get("headroom") or {}).get("nodes", []):
                if r.get("status") in ("untrusted", "error", "missing"):
                    out.append(f"{m['file']} {r['node']} ({r['storm']}): {r['status']}"
                               + (f": {r['message']}" if r.get("message") else ""))
        return out


# ----------------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------------
def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _key(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def _model_signature(flows) -> list:
    """What a model's figures depend on in its commitments: application, node, average flow (in the bank's order)."""
    return [[str(f["application"]), None if f.get("node") is None else str(f["node"]).upper(),
             round(float(f["average_gpd"]), 3)] for f in flows]


def _plant_signature(flows) -> list:
    """What a plant's figures depend on in its commitments: application and average flow."""
    return sorted([str(f["application"]), round(float(f["average_gpd"]), 3)] for f in flows)


def _short(head: str | None) -> str:
    return f"{str(head)[:12]}..." if head else "-"


def _when(iso: str | None) -> str:
    if not iso:
        return "-"
    return str(iso).replace("T", " ").replace("Z", " UTC")


def freshness(computed: dict | None, head_now: str, *, current: bool, changed: str = "") -> dict:
    """The freshness of one figure: ``{"status", "text"}``.

    ``computed`` is the figure's ``computed`` block (``bank_head``, ``computed_at``), None when it
    was not computed; ``current`` says whether what it depends on is unchanged at ``head_now``;
    ``changed`` says what changed (for a stale figure).
    """
    if computed is None:
        return {"status": "not computed", "text": "not computed"}
    head, at = computed.get("bank_head"), _when(computed.get("computed_at"))
    said = f"computed for bank head {_short(head)} at {at}"
    if current:
        if head == head_now:
            return {"status": "current", "text": f"{said} (current)"}
        return {"status": "current", "text": f"{said} (current: the bank's head is now {_short(head_now)}; the "
                                             "commitments and inputs of this figure are unchanged)"}
    return {"status": "stale", "text": f"stale: {said}; {changed or 'its commitments changed since'} (bank head now "
                                       f"{_short(head_now)})"}


def _overall(doc: dict) -> dict:
    states = [s["freshness"]["status"] for s in doc["plants"] + doc["models"]]
    stale = states.count("stale")
    done = states.count("current")
    if stale:
        return {"status": "stale", "text": f"{stale} of {len(states)} figure(s) stale (computed for commitments that "
                                           f"changed since); {done} current"}
    return {"status": "current", "text": f"{done} of {len(states)} figure(s) computed for the commitments of bank head "
                                         f"{_short(doc['bank_head'])} (current)"
                                         + (f"; {len(states) - done} not computed" if done < len(states) else "")}


def _read_bank(bank: Path, as_of, plant_keys: dict[str, list[str]]) -> tuple[dict, dict, dict, dict]:
    """The bank's register, each model's commitments and each given plant's, read at one bank head.

    Returns ``(register, model_blocks by sha256, plant_blocks by plant key, head)``.
    """
    from capacitysim.bank import Ledger
    from capacitysim.workflows.committed import check_commitments, spdes_commitments

    for _attempt in range(READ_ATTEMPTS):
        with Ledger(bank) as led:
            reg = led.register(as_of)
            head = led.head()
            models = {m["model_sha256"]: check_commitments(led.commitments(model_sha256=m["model_sha256"],
                                                                           as_of=reg["as_of"]))
                      for m in reg["models"]}
        plants = {k: spdes_commitments(bank, keys, as_of=reg["as_of"]) for k, keys in plant_keys.items()}
        heads = {reg["bank_head"], head["head"], *(b["bank_head"] for b in models.values()),
                 *(b["bank_head"] for b in plants.values())}
        if len(heads) == 1:
            return reg, models, plants, head
    raise InputError(f"bank register: the bank {bank} changed while its register was read ({READ_ATTEMPTS} times); "
                     "try again")


# ----------------------------------------------------------------------------------------------------
# the store next to the bank
# ----------------------------------------------------------------------------------------------------
def _read_cache(path: Path) -> tuple[dict | None, str | None]:
    """The store (``None`` when there is none) and a note when it could not be used."""
    if not path.exists():
        return None, None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return None, f"the stored register {path} could not be read ({type(exc).__name__}); every figure computed again"
    if not isinstance(data, dict) or data.get("kind") != CACHE_KIND or not isinstance(data.get("entries"), dict):
        return None, f"{path} is not a stored capacity register; every figure computed again (and the file replaced)"
    return data, None


def _write_cache(path: Path, bank: Path, doc: dict, old: dict | None, new_entries: dict) -> None:
    from capacitysim.files import atomic_write_text
    from capacitysim.io.files import dumps_json

    entries = dict((old or {}).get("entries") or {})
    entries.update(new_entries)
    scopes = {("plant", p["plant"].casefold()) for p in doc["plants"]} | {("model", m["model_sha256"]) for m in doc["models"]}
    by_scope: dict = {}
    for k, e in entries.items():
        s = (e.get("section"), str(e.get("scope")))
        if s in scopes:
            by_scope.setdefault(s, []).append((e.get("computed", {}).get("computed_at") or "", k))
    kept = {}
    for items in by_scope.values():
        for _, k in sorted(items, reverse=True)[:CACHE_ENTRIES_PER_SCOPE]:
            kept[k] = entries[k]
    atomic_write_text(path, dumps_json({"kind": CACHE_KIND, "capacitysim": __version__, "bank": str(bank),
                                        "written_at": _now(), "document": doc, "entries": kept}))


# ----------------------------------------------------------------------------------------------------
# the workflow
# ----------------------------------------------------------------------------------------------------
def capacity_register(bank, *, plants: Mapping[str, str] | Sequence[str] = (), storms=None, nodes: Sequence[str] = (),
                      all_nodes: bool = False, headroom: bool = True, as_of=None, criteria=None,
                      criteria_file=None, tolerance_pct: float | None = None, spinup_hr: float | None = None,
                      workers: int | None = None, refresh: bool = False, cache=None, progress=None) -> Register:
    """The capacity register: each plant's and each registered model's remaining capacity with the commitments in place.

    Parameters
    ----------
    bank : path or str
        The credit bank file (read only).
    plants : mapping or sequence
        The flow records of the plants: ``{KEY: SPEC}`` or ``["KEY=SPEC", ...]`` (``--plant``), KEY
        a plant key the bank registers (its SPDES permit number or name, any case), SPEC a bundled
        plant name, ``PLANT.toml`` (its record ``PLANT.csv`` beside it) or ``PLANT.toml,FLOWS.csv``
        (:func:`resolve_plant_input`). A registered plant not given is listed with its committed
        flow, its remaining headroom "not computed".
    storms : str, path, StormSpec or list of them, optional
        The design storm(s) of the models' headroom (as ``capacitysim headroom --storm``); default
        the model's own rainfall (as ``capacitysim capacity`` without ``--storm``).
    nodes : sequence of str
        Nodes searched in addition to each commitment's node and each basin's outlet (each must be
        a node of at least one registered model; searched in the models that have it).
    all_nodes : bool
        Search every junction of every registered model (about 3 to 5 engine runs per junction).
    headroom : bool
        False: skip the hydraulic part (the models' commitments are still listed).
    as_of : date-like, optional
        The date of the register (approvals past program policy ``approval_expiry_years`` are
        released; the plants' look-back windows end on it); default today.
    criteria : Criteria or dict, optional
        The capacity criteria (default :class:`capacitysim.rules.capacity.Criteria`).
    criteria_file : path, optional
        The file ``criteria`` was read from (recorded).
    tolerance_pct : float, optional
        Width of each bracket: failing / passing <= 1 + tolerance_pct / 100 (default 5).
    spinup_hr : float, optional
        As ``capacitysim capacity --spinup-hr`` [hr].
    workers : int, optional
        Engine worker processes (default one per core; 0: in this process).
    refresh : bool
        Compute every figure again, even when a stored one is current.
    cache : path, str or False, optional
        Where the figures are stored and re-used (default :func:`default_cache_path`); False:
        neither read nor written.
    progress : callable(label, done, total, runs), optional
        Called as each model's nodes finish.

    Returns
    -------
    Register
        Its document: ``kind`` ``capacity-register``, ``capacitysim``, ``bank``, ``bank_head``,
        ``as_of``, ``computed_at``, ``freshness``, ``plants`` and ``models`` (each with
        ``computed`` and ``freshness``), ``runs_total`` [engine runs now], ``seconds``, ``cache``,
        ``inputs``, ``policies``, ``definitions``.

    Raises
    ------
    InputError
        Bad input (exit 2): no bank, an unknown plant key, a plant file of another plant, a node in
        no registered model, a record that does not cover the as-of date.
    RefusedError
        A registered model file changed since it was registered (exit 3): register the new version.
    """
    from capacitysim.bank.commitments import read_model
    from capacitysim.io.export.geometry import model_geometry
    from capacitysim.io.plant_flows import file_sha256, read_plant_file
    from capacitysim.rules.capacity import Criteria
    from capacitysim.workflows.committed import (
        COMMITTED_BASELINE_POLICY,
        committed_connections,
        committed_record,
        plant_keys,
    )
    from capacitysim.workflows.headroom import DEFAULT_TOLERANCE_PCT, storm_list

    t0 = time.perf_counter()
    bank = Path(bank)
    if isinstance(criteria, dict):
        criteria = Criteria.from_dict(criteria)
    criteria = criteria or Criteria()
    tol = DEFAULT_TOLERANCE_PCT if tolerance_pct is None else float(tolerance_pct)
    if all_nodes and nodes:
        raise InputError("give --nodes or --all, not both (--all searches every junction)")
    extra = [str(n).strip() for n in nodes if str(n).strip()]
    given = _plant_inputs(plants)
    cache_path = None if cache is False else _check_cache_path(Path(cache) if cache else default_cache_path(bank), bank)

    # --- 1. read and check everything before any engine run ---------------------------------------------
    from capacitysim.bank import Ledger

    with Ledger(bank) as led:  # the registered plants first: an unknown --plant key is bad input
        reg0 = led.register(as_of)
    registered = {p["plant"].strip().casefold(): p["plant"] for p in reg0["plants"]}
    resolved: dict[str, tuple[PlantInput, object, list[str]]] = {}
    for key, spec in given:
        if key.casefold() not in registered:
            raise InputError(f"--plant {key}={spec}: no basin of the bank {bank.name} is registered as draining to plant "
                             f"{key!r}; registered plants: {', '.join(registered.values()) or 'none'} (`bank add-basin "
                             "--plant`, `bank register-model --plant`)")
        if registered[key.casefold()] in resolved:
            raise InputError(f"--plant {key}: given twice")
        pin = resolve_plant_input(key, spec)
        pf = read_plant_file(pin.plant_file)
        own = [k for k in (pf.spdes_permit, pf.name) if k]
        if pf.spdes_permit and key.casefold() not in {k.casefold() for k in own}:
            raise InputError(f"--plant {key}={spec}: the plant file {pin.plant_file.name} is of SPDES permit "
                             f"{pf.spdes_permit} ({pf.name}), not of plant {key}")
        keys = list(dict.fromkeys([registered[key.casefold()], *plant_keys(None, pf)]))
        resolved[registered[key.casefold()]] = (pin, pf, keys)
    reg, model_blocks, plant_blocks, head = _read_bank(bank, reg0["as_of"], {k: v[2] for k, v in resolved.items()})
    as_of_text = reg["as_of"]
    storm_items = storm_list(storms) if headroom else []
    storm_id = [[lab, rec.get("sha256"), rec.get("depth_in")] for lab, _, rec in storm_items]

    models_in = []
    found_anywhere: set[str] = set()
    for m in reg["models"]:
        model, _sha = read_model(m["path"], m["model_sha256"])  # RefusedError: changed since registered
        block = model_blocks[m["model_sha256"]]
        conns, unplaced, warnings_ = committed_connections(block, model)
        outfalls = set(model.node_ids_of("OUTFALLS"))
        chosen: dict[str, list[str]] = {}
        notes: list[str] = list(warnings_)

        def add(node, why):
            chosen.setdefault(node, [])
            if why not in chosen[node]:
                chosen[node].append(why)

        left_out = {u["application"] for u in unplaced}
        placed = [f for f in block["flows"] if f["application"] not in left_out]  # committed_connections' order
        for f, c in zip(placed, conns, strict=True):
            app = f["application"]
            if c.node in outfalls:
                notes.append(f"commitment {app} is at {c.node}, an outfall: no headroom is searched there")
            else:
                add(c.node, f"commitment {app}")
        for b in m["basins"]:
            o = model.find_node(b["outlet"]) if b.get("outlet") else None
            if o is None:
                notes.append(f"the outlet {b.get('outlet')} of basin {b['basin']} is not a node of the model")
            elif o in outfalls:
                notes.append(f"the outlet {o} of basin {b['basin']} is an outfall: no headroom is searched there")
            else:
                add(o, f"outlet of basin {b['basin']}")
        for name in extra:
            n = model.find_node(name)
            if n is not None:
                found_anywhere.add(name)
                if n in outfalls:
                    raise InputError(f"--nodes: {name!r} is an outfall of {Path(m['path']).name}; a connection goes to a "
                                     "manhole, a junction or a wet well")
                add(n, "asked (--nodes)")
        if all_nodes:
            for n in model.node_ids_of("JUNCTIONS"):
                add(n, "every junction (--all)")
        models_in.append({"reg": m, "model": model, "block": block, "unplaced": unplaced, "chosen": chosen,
                          "notes": notes})
    missing = [n for n in extra if n not in found_anywhere]
    if missing:
        raise InputError(f"--nodes: {', '.join(missing)} is not a node of any registered model of the bank "
                         f"({', '.join(Path(m['path']).name for m in reg['models']) or 'none registered'})")

    stored, note = (None, None) if cache_path is None else _read_cache(cache_path)
    entries = {} if stored is None else stored["entries"]
    new_entries: dict = {}
    reused = computed_now = runs_total = 0

    # --- 2. the plants ------------------------------------------------------------------------------------
    from capacitysim.workflows.spdes import plant_submittal, run_check

    out_plants = []
    for p in reg["plants"]:
        sec = {"plant": p["plant"], "basins": p["basins"], "committed_gpd": p["committed_gpd"],
               "committed_peak_gpd": p["committed_peak_gpd"], "flows": p["flows"],
               "signature": _plant_signature(_plant_flows(reg, p)), "given": None, "figures": None,
               "computed": None}
        if p["plant"] in resolved:
            pin, pf, keys = resolved[p["plant"]]
            block = plant_blocks[p["plant"]]
            flows_sha = file_sha256(pin.flows)
            key = _key({"section": "plant", "version": __version__, "plant": p["plant"].casefold(), "keys": keys,
                        "as_of": as_of_text, "plant_file": pf.sha256, "flows": flows_sha,
                        "committed": _plant_signature(block["flows"])})
            sec["given"] = {"spec": pin.spec, "plant_file": {"name": pin.plant_file.name, "path": str(pin.plant_file),
                                                             "sha256": pf.sha256},
                            "flows": {"name": pin.flows.name, "path": str(pin.flows), "sha256": flows_sha}}
            hit = entries.get(key) if not refresh else None
            if hit is not None:
                sec["figures"], sec["computed"] = hit["figures"], dict(hit["computed"], reused=True)
                reused += 1
            else:
                try:
                    check = run_check(flows=str(pin.flows), plant=pf, as_of=as_of_text, added_gpd=(),
                                      submittal=plant_submittal(pf), committed=block)
                except InputError as exc:
                    raise InputError(f"--plant {pin.key}={pin.spec}: {exc}") from None
                sec["figures"] = _plant_figures(check.to_dict())
                sec["computed"] = {"bank_head": block["bank_head"], "computed_at": _now(), "key": key, "reused": False,
                                   "signature": _plant_signature(_plant_flows(reg, p))}
                computed_now += 1
            new_entries[key] = {"section": "plant", "scope": p["plant"].casefold(), "figures": sec["figures"],
                                "computed": {k: v for k, v in sec["computed"].items() if k != "reused"}}
        sec["freshness"] = freshness(sec["computed"], head["head"], current=True)
        if sec["computed"] is None:
            sec["freshness"]["text"] = f"remaining: not computed (give --plant {p['plant']}=PLANT)"
        out_plants.append(sec)

    # --- 3. the registered models ---------------------------------------------------------------------------
    from capacitysim.workflows.headroom import headroom as run_headroom

    out_models = []
    for item in models_in:
        m, block, chosen = item["reg"], item["block"], item["chosen"]
        rec = committed_record(block, item["unplaced"])
        sec = {"model_sha256": m["model_sha256"], "path": m["path"], "file": Path(m["path"]).name, "nodes": m["nodes"],
               "basins": m["basins"], "commitments": rec,
               "signature": _model_signature(block["flows"]),
               "geometry": model_geometry(item["model"]).to_dict(), "notes": item["notes"],
               "selected_nodes": [{"node": n, "why": why} for n, why in chosen.items()],
               "headroom": None, "headroom_status": None, "computed": None}
        if not headroom:
            sec["headroom_status"] = "not computed (--no-headroom)"
        elif not chosen:
            sec["headroom_status"] = "no node to search (no commitment at a manhole and no basin outlet that is one)"
        else:
            key = _key({"section": "model", "version": __version__, "model_sha256": m["model_sha256"],
                        "committed": sec["signature"], "nodes": list(chosen), "storms": storm_id,
                        "criteria": criteria.to_dict(), "tolerance_pct": tol, "spinup_hr": spinup_hr})
            hit = entries.get(key) if not refresh else None
            if hit is not None:
                sec["headroom"], sec["computed"] = hit["headroom"], dict(hit["computed"], reused=True)
                sec["headroom_status"] = "re-used (stored)"
                reused += 1
            else:
                label = sec["file"]
                cb = None if progress is None else (lambda d, t, r, label=label: progress(label, d, t, r))
                res = run_headroom(m["path"], storms, list(chosen), criteria=criteria, tolerance_pct=tol,
                                   spinup_hr=spinup_hr, workers=workers, progress=cb, committed=block,
                                   criteria_file=criteria_file)
                hd = res.to_dict()
                sec["headroom"] = _headroom_part(hd, chosen)
                sec["computed"] = {"bank_head": block["bank_head"], "computed_at": _now(), "key": key, "reused": False,
                                   "signature": sec["signature"]}
                sec["headroom_status"] = "computed"
                runs_total += int(hd["runs_total"])
                computed_now += 1
            new_entries[key] = {"section": "model", "scope": m["model_sha256"], "headroom": sec["headroom"],
                                "computed": {k: v for k, v in sec["computed"].items() if k != "reused"}}
        sec["freshness"] = freshness(sec["computed"], head["head"], current=True)
        if sec["computed"] is None:
            sec["freshness"]["text"] = f"headroom: {sec['headroom_status']}"
        out_models.append(sec)

    doc = {
        "kind": KIND, "capacitysim": __version__, "bank": str(bank.resolve()), "bank_head": head["head"],
        "bank_rows": head["rows"], "bank_last_at": head["last_at"], "as_of": as_of_text, "computed_at": _now(),
        "freshness": None, "plants": out_plants, "models": out_models,
        "inputs": {"plants": {k: v[0].spec for k, v in resolved.items()}, "storms": [r for _, _, r in storm_items],
                   "nodes": extra, "all_nodes": bool(all_nodes), "headroom": bool(headroom),
                   "criteria": criteria.to_dict(), "criteria_file": None if criteria_file is None else str(criteria_file),
                   "tolerance_pct": tol, "spinup_hr": spinup_hr, "refresh": bool(refresh)},
        "runs_total": runs_total, "seconds": 0.0,
        "cache": {"path": None if cache_path is None else str(cache_path), "reused": reused, "computed": computed_now,
                  "note": note},
        "policies": [*reg["policies"], dict(COMMITTED_BASELINE_POLICY)], "definitions": DEFINITIONS,
    }
    doc["freshness"] = _overall(doc)
    doc["seconds"] = time.perf_counter() - t0
    if cache_path is not None:
        _write_cache(cache_path, bank, doc, stored, new_entries)
    return Register(doc)


def _plant_inputs(plants) -> list[tuple[str, str]]:
    if isinstance(plants, Mapping):
        return [(str(k).strip(), str(v).strip()) for k, v in plants.items()]
    if isinstance(plants, str):
        plants = [plants]
    return [parse_plant_option(p) for p in plants]


def _plant_flows(reg: dict, plant: dict) -> list[dict]:
    """The committed flows of a plant of the register (its ``flows`` are application ids): the models' flows."""
    names = {str(a).casefold() for a in plant["flows"]}
    seen, out = set(), []
    for m in reg["models"]:
        for f in m["flows"]:
            k = str(f["application"]).casefold()
            if k in names and k not in seen:
                seen.add(k)
                out.append(f)
    return out


def _plant_figures(d: dict) -> dict:
    """The register's figures of a plant from its SPDES check document (``spdes check --json``)."""
    w = d["worst_period"]
    return {
        "permitted_flow_gpd": d["limit_gpd"], "limit_mgd": d["limit_mgd"], "limit_source": d["limit_source"],
        "basis": d["basis"], "watershed": d["watershed"],
        "twelve_month_gpd": d["worst_average_mgd"] * GPD_PER_MGD,
        "twelve_month_period": w["label"], "twelve_month_period_complete": w["complete"],
        "lookback_window": {k: d["lookback_window"][k] for k in ("start_exclusive", "end_inclusive", "periods",
                                                                 "incomplete_periods")},
        "committed_gpd": d["committed_gpd"], "remaining_gpd": d["headroom_gpd"],
        "treatment_capacity_shown": d["treatment_capacity_shown"], "connection_prohibited": d["connection_prohibited"],
        "violation_in_prior_12_months": d["violation_in_prior_12_months"], "verdict": d["verdict"],
        "record_end": d["record_end"], "record_age_days": d["record_age_days"], "as_of": d["as_of"],
        "plant_name": d["plant"]["name"], "spdes_permit": d["plant"]["spdes_permit"],
        "committed_applications": [f["application"] for f in (d.get("committed") or {}).get("flows", [])],
        "committed_bank_head": (d.get("committed") or {}).get("bank_head"),
        "warnings": list(d["warnings"]), "reasons": list(d["reasons"]),
        "headroom_definition": d["headroom_definition"],
    }


def _headroom_part(hd: dict, chosen: dict) -> dict:
    """The register's part of a headroom document: its cells (with why each node was searched) and its costs."""
    nodes = []
    for r in hd["nodes"]:
        nodes.append({**r, "why": list(chosen.get(r["node"], []))})
    return {"nodes": nodes, "storms": hd["storms"], "criteria": hd["criteria"], "tolerance_pct": hd["tolerance_pct"],
            "min_gpd": hd["min_gpd"], "max_gpd": hd["max_gpd"], "method": hd["method"], "plant": hd["plant"],
            "spinup_hr": hd["spinup_hr"], "peaking": hd["peaking"], "counts": hd["counts"], "runs_total": hd["runs_total"],
            "runs_stopped": hd["runs_stopped"], "full_run_equivalents": hd["full_run_equivalents"],
            "seconds": hd["seconds"], "workers": hd["workers"], "policies": hd["policies"],
            "warnings": hd.get("warnings") or [], "committed_bank_head": (hd.get("committed") or {}).get("bank_head"),
            "committed_applications": [f["application"] for f in (hd.get("committed") or {}).get("flows", [])],
            "definitions": hd["definitions"]}


def stored_register(bank, *, cache=None) -> Register:
    """The last register stored next to the bank, each figure marked current or stale against the bank now.

    Nothing is computed: the bank's commitments are read (one read) and compared with those each
    stored figure was computed for. A figure whose commitments changed is ``stale``, naming what
    changed; models registered or plants added since are listed as not computed.

    Raises
    ------
    InputError
        No bank, or no stored register (run :func:`capacity_register` first).
    """
    from capacitysim.bank import Ledger

    bank = Path(bank)
    cache_path = _check_cache_path(Path(cache) if cache else default_cache_path(bank), bank)
    with Ledger(bank):
        pass  # no bank: InputError before the store is looked at
    stored, note = _read_cache(cache_path)
    if stored is None or not isinstance(stored.get("document"), dict):
        raise InputError(f"--cached: {note or f'no stored register at {cache_path}'}; compute one with `capacitysim bank "
                         f"--db {bank} register` first")
    doc = copy.deepcopy(stored["document"])
    with Ledger(bank) as led:
        reg = led.register(doc["as_of"])
        head = led.head()
    now_models = {m["model_sha256"]: m for m in reg["models"]}
    now_plants = {p["plant"].casefold(): p for p in reg["plants"]}
    for sec in doc["models"]:
        m = now_models.get(sec["model_sha256"])
        if m is None:
            sec["freshness"] = {"status": "stale", "text": "stale: this model is no longer the current registered model of "
                                                             "any basin"}
            continue
        was = (sec.get("computed") or {}).get("signature", sec.get("signature"))
        now = _model_signature(m["flows"])
        if sec.get("computed") is None:
            sec["freshness"] = {"status": "not computed", "text": f"headroom: {sec.get('headroom_status')}"}
        else:
            sec["freshness"] = freshness(sec["computed"], head["head"], current=was == now, changed=_changes(was, now))
    for sec in doc["plants"]:
        p = now_plants.get(sec["plant"].casefold())
        if p is None:
            sec["freshness"] = {"status": "stale", "text": "stale: no basin of the bank drains to this plant any more"}
            continue
        if sec.get("computed") is None:
            continue
        was = sec["computed"].get("signature", sec.get("signature"))
        now = _plant_signature(_plant_flows(reg, p))
        sec["freshness"] = freshness(sec["computed"], head["head"], current=was == now,
                                     changed=_changes([[a, None, g] for a, g in was], [[a, None, g] for a, g in now]))
    known_m = {s["model_sha256"] for s in doc["models"]}
    known_p = {s["plant"].casefold() for s in doc["plants"]}
    added = [f"model {Path(m['path']).name} (basins {', '.join(b['basin'] for b in m['basins'])})"
             for sha, m in now_models.items() if sha not in known_m]
    added += [f"plant {p['plant']}" for k, p in now_plants.items() if k not in known_p]
    doc["bank_head_now"] = head["head"]
    doc["registered_since"] = added
    doc["freshness"] = _overall(doc)
    if added:
        doc["freshness"]["status"] = "stale"
        doc["freshness"]["text"] += f"; registered since, not in this register: {'; '.join(added)}"
    doc["cache"] = dict(doc.get("cache") or {}, path=str(cache_path), shown_from_store=True)
    return Register(doc)


def _changes(was: list, now: list) -> str:
    """What changed between two model signatures, in words (``added A-3; released A-1``)."""
    w = {str(a).casefold(): (a, n, g) for a, n, g in was}
    n_ = {str(a).casefold(): (a, n, g) for a, n, g in now}
    added = [n_[k][0] for k in n_ if k not in w]
    gone = [w[k][0] for k in w if k not in n_]
    moved = [n_[k][0] for k in n_ if k in w and n_[k] != w[k]]
    parts = ([f"added {', '.join(added)}"] if added else []) + ([f"released {', '.join(gone)}"] if gone else []) \
        + ([f"changed {', '.join(moved)}"] if moved else [])
    return "the commitments changed since: " + ("; ".join(parts) if parts else "their order")
