"""The capacity register: registered system models, committed flows, and evidence that includes them.

Capacity is a resource every approved connection draws on. Credit bank section H(1) makes each
withdrawal "subject to demonstration by the applicant of adequate hydraulic and treatment capacity";
read one application at a time, two applications each demonstrated alone could be approved on the
same spare capacity. This module holds what the ledger (:class:`capacitysim.bank.Ledger`) needs to
keep a *capacity allocation register*, as utilities allocating sewer capacity under consent decrees
do: every approved or reserved flow that is not yet in the model of record is a **commitment** at its
node and at the plant, and evidence for a later application must include it.

* **The registered system model** (``system_models``): the model of record of a basin, by path and
  SHA-256, with the basin's outlet node in it and the plant it drains to. Section A ("credits shall
  be used only in the I/I remediation basin that generated them") is checked on its graph
  (:func:`node_drainage`): a connection node must drain to the basin's outlet.
* **Commitments** (:func:`commitment_flows`): a withdrawal reserved (pending) or approved and not
  connected; an application recorded without credits (2,500 gpd or less) received or approved and
  not connected; and a connected flow until a registered model version lists it as contained
  (program policy ``connected_until_registered``). Released: a withdrawal returned, rejected or
  defaulted before connection; an approval past :data:`APPROVAL_EXPIRY_YEARS` (program policy
  ``approval_expiry_years``); a connected flow contained in a registered version.
* **Evidence that stays true** (:func:`evidence_gaps`): the commitments a capacity demonstration or
  SPDES check included (its ``committed`` block, written by ``--committed BANK``) must cover every
  commitment in its scope at the reservation and again at the sign-off.

References
----------
Binghamton-Johnson City I/I Offset Program, sewer flow credit bank sections A and H(1).
15 RCNY § 18-37(e): an approval of a sewer connection "expires and is null and void unless
construction is completed within five (5) years of the date of issuance".
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import sqlite3
from pathlib import Path

from capacitysim.errors import InputError, RefusedError

#: Program policy ``approval_expiry_years`` [years]: an approval (a signed-off flow credit note, or an
#: application approved without credits) not connected within this period is released. 15 RCNY § 18-37(e)
#: (five years from issuance, for connections the NYC DEP approves in the watershed); the credit bank
#: sets no such period (its DEFAULT, one year to the certificate of occupancy, comes first unless extended).
APPROVAL_EXPIRY_YEARS = 5
#: Tolerance when comparing a committed flow with the flow a document included [gpd] (JSON round trips).
FLOW_TOLERANCE_GPD = 0.5

_FLAG = "program interpretation — confirm with the bank administrator"

#: The program policies of the capacity register (the form of :data:`capacitysim.bank.ledger.POLICIES`).
POLICIES = {
    "approval_expiry_years": {
        "name": "approval_expiry_years", "value": APPROVAL_EXPIRY_YEARS,
        "text": (f"{_FLAG}: the credit bank does not say how long an approval holds capacity; 15 RCNY § 18-37(e) "
                 "has an approval of a sewer connection expire 'unless construction is completed within five (5) "
                 "years of the date of issuance'; an approved withdrawal or application not connected within "
                 f"{APPROVAL_EXPIRY_YEARS} years of its approval releases its commitment (`bank expire`; the "
                 "credits of an expired withdrawal return to the holder as for a DEFAULT)"),
        "alternative": {"value": None, "text": "approvals never expire (capacity stays committed until returned)"}},
    "connected_until_registered": {
        "name": "connected_until_registered", "value": "committed-until-in-a-registered-model",
        "text": (f"{_FLAG}: a connected flow is in the sewer but not in the model of record; it stays a "
                 "commitment until the administrator registers a model version that contains it "
                 "(`bank register-model --includes APPLICATION`)"),
        "alternative": {"value": "released-when-connected",
                        "text": "a connected flow is released at once (the model of record understates the system "
                                "until it is updated)"}},
    "commitment_average": {
        "name": "commitment_average", "value": "recorded-else-peak",
        "text": (f"{_FLAG}: a commitment's average daily flow is the one recorded with the application "
                 "(--average-gpd); where none was recorded, its peak is used as its average (conservative: "
                 "a treatment check then adds more than the connection's average)"),
        "alternative": {"value": "harmon-inverse",
                        "text": "the average derived from the peak by the Harmon peaking factor"}},
    "section_a_unregistered": {
        "name": "section_a_unregistered", "value": "recorded-unchecked",
        "text": (f"{_FLAG}: section A is checked on the graph of the basin's registered model; a basin with no "
                 "registered model cannot be checked, so its withdrawals are accepted and recorded with "
                 "section_a 'not checked'"),
        "alternative": {"value": "refused", "text": "no withdrawal in a basin without a registered model"}},
}


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def add_years(d: _dt.date, years: int) -> _dt.date:
    try:
        return d.replace(year=d.year + years)
    except ValueError:  # 29 February
        return d.replace(year=d.year + years, day=28)


# --- registered system models -----------------------------------------------------------------------
def current_models(c: sqlite3.Connection) -> list[sqlite3.Row]:
    """The newest registered model of each basin (with ``basin``, the basin's name), by basin id."""
    return c.execute(
        "SELECT m.*, b.name AS basin FROM system_models m JOIN basins b ON b.id = m.basin_id"
        " WHERE m.version = (SELECT max(version) FROM system_models x WHERE x.basin_id = m.basin_id)"
        " ORDER BY m.basin_id").fetchall()


def model_of_basin(c: sqlite3.Connection, basin_id: int) -> sqlite3.Row | None:
    """The newest registered model of a basin, or None."""
    return c.execute("SELECT * FROM system_models WHERE basin_id = ? ORDER BY version DESC LIMIT 1",
                     (basin_id,)).fetchone()


def contained(c: sqlite3.Connection, basin_id: int) -> set[str]:
    """Applications (casefolded) a registered model version of the basin contains."""
    out: set[str] = set()
    for (inc,) in c.execute("SELECT includes FROM system_models WHERE basin_id = ?", (basin_id,)):
        out |= {str(a).casefold() for a in json.loads(inc or "[]")}
    return out


def read_model(path: str | Path, sha256: str | None = None, *, probe: bool = False):
    """Parse a model file (the engine opens it when ``probe``) and its SHA-256: ``(model, sha256)``.

    With ``sha256`` (a registered model), a file whose bytes changed since registration is refused:
    register the new version instead.
    """
    from capacitysim.network.model import load_model

    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"model: cannot read {p}: {exc.strerror or exc}") from None
    sha = sha256_bytes(data)
    if sha256 is not None and sha != sha256:
        raise RefusedError(f"the registered model {p} has changed since it was registered (SHA-256 {sha[:12]}..., "
                           f"registered {sha256[:12]}...): register the new version with `bank register-model`")
    return load_model(p, probe=probe), sha


def node_drainage(model, node: str, outlet: str) -> dict:
    """Where ``node`` drains on the model's graph: does the basin's ``outlet`` lie on its way down?

    Returns
    -------
    dict
        ``node`` (the model's spelling), ``outlet``, ``drains_to_outlet`` (the outlet is the node or
        downstream of it) and ``reaches`` (the terminal nodes downstream: outfalls or dead ends).

    Raises
    ------
    InputError
        ``node`` or ``outlet`` is not a node of the model.
    """
    import networkx as nx

    from capacitysim.network.model import network_graph

    n = model.find_node(node)
    if n is None:
        raise InputError(f"node {node!r} is not a node of the registered model {Path(model.path).name}")
    o = model.find_node(outlet)
    if o is None:
        raise InputError(f"outlet {outlet!r} is not a node of the registered model {Path(model.path).name}")
    g = network_graph(model)
    down = nx.descendants(g, n) | {n}
    reaches = sorted(d for d in down if g.out_degree(d) == 0)
    return {"node": n, "outlet": o, "drains_to_outlet": o in down, "reaches": reaches, "downstream": down}


def section_a(c: sqlite3.Connection, basin_row, node: str) -> dict:
    """Section A on the graph: the connection ``node`` must drain to the basin's registered outlet.

    Returns ``{"section_a": "checked", "model_sha256", "model_version", "node"}`` or, for a basin with
    no registered model, ``{"section_a": "not checked: ...", "policy": "section_a_unregistered"}``.

    Raises
    ------
    RefusedError
        The node drains elsewhere (exit 3), naming the outlet(s) it drains to.
    """
    m = model_of_basin(c, basin_row["id"])
    if m is None:
        return {"section_a": f"not checked: basin {basin_row['name']} has no registered model",
                "policy": "section_a_unregistered"}
    model, _sha = read_model(m["path"], m["sha256"])
    d = node_drainage(model, node, m["outlet"])
    if not d["drains_to_outlet"]:
        others = [f"{r['outlet']} (outlet of basin {r['basin']})" for r in current_models(c)
                  if r["sha256"] == m["sha256"] and r["basin_id"] != basin_row["id"] and r["outlet"] in d["downstream"]]
        where = ", ".join(others + [f"{t} (terminal node)" for t in d["reaches"]])
        raise RefusedError(f"node {d['node']} drains to {where}, not to {d['outlet']}, the outlet of basin "
                           f"{basin_row['name']} (registered model version {m['version']}): credits are used only in the "
                           "I/I remediation basin that generated them (credit bank section A)")
    return {"section_a": "checked", "model_sha256": m["sha256"], "model_version": m["version"], "node": d["node"]}


# --- commitments ------------------------------------------------------------------------------------
def _date(v) -> _dt.date | None:
    return _dt.date.fromisoformat(str(v)[:10]) if v else None


def commitment_flows(c: sqlite3.Connection, basin_ids, *, exclude: str | None = None,
                     as_of: _dt.date) -> list[dict]:
    """The committed flows of the basins ``basin_ids`` on ``as_of``, in the order recorded.

    Each: ``application``, ``basin``, ``node``, ``average_gpd``, ``peak_gpd``, ``status``
    (``reserved``, ``approved``, ``received`` or ``connected``), ``average_basis`` (``recorded`` or
    ``peak``: program policy ``commitment_average``), ``kind`` (``withdrawal`` or ``application``),
    ``expires_on`` (an approval not connected: program policy ``approval_expiry_years``).
    """
    ids = sorted({int(b) for b in basin_ids})
    if not ids:
        return []
    skip = exclude.casefold() if exclude else None
    marks = ",".join("?" * len(ids))
    inside = {b: contained(c, b) for b in ids}
    out = []
    rows = c.execute(
        "SELECT w.*, b.id AS basin_id, b.name AS basin FROM withdrawals w JOIN subaccounts s ON s.id = w.subaccount_id"
        f" JOIN basins b ON b.id = s.basin_id WHERE b.id IN ({marks}) ORDER BY w.id", ids).fetchall()
    for w in rows:
        connected = w["connected_on"] or (w["co_issued_on"] if w["status"] == "completed" else None)
        if connected:
            status = "connected"
        elif w["expired_on"] or w["status"] in ("returned", "defaulted", "completed"):
            continue
        elif w["status"] == "pending":
            status = "reserved"
        else:
            status = "approved"
        out.append(_flow(w, "withdrawal", status, w["requested_on"], w["note_issued_on"], connected))
    apps = c.execute(f"SELECT a.*, b.name AS basin FROM applications a JOIN basins b ON b.id = a.basin_id "
                     f"WHERE a.basin_id IN ({marks}) ORDER BY a.id", ids).fetchall()
    for a in apps:
        connected = a["connected_on"] or (a["completed_on"] if a["status"] == "completed" else None)
        if connected:
            status = "connected"
        elif a["expired_on"] or a["status"] in ("returned", "completed"):
            continue
        else:
            status = a["status"]
        out.append(_flow(a, "application", status, a["received_on"], a["approved_on"], connected))
    kept = []
    for f in out:
        basin_id = f.pop("_basin_id")
        if skip is not None and f["application"].casefold() == skip:
            continue
        if f["status"] == "connected" and f["application"].casefold() in inside[basin_id]:
            continue
        exp = _date(f["expires_on"])
        if f["status"] in ("approved",) and exp is not None and exp < as_of:
            continue  # past the approval_expiry_years period: void even before `bank expire` records it
        kept.append(f)
    return kept


def _flow(r, kind: str, status: str, since, approved_on, connected) -> dict:
    avg = r["average_gpd"]
    approved = _date(approved_on)
    return {"application": r["application"], "kind": kind, "basin": r["basin"], "node": r["node"],
            "average_gpd": float(avg if avg is not None else r["peak_flow_gpd"]), "peak_gpd": float(r["peak_flow_gpd"]),
            "average_basis": "recorded" if avg is not None else "peak", "status": status, "since": since,
            "connected_on": connected,
            "expires_on": (add_years(approved, APPROVAL_EXPIRY_YEARS).isoformat()
                           if approved is not None and not connected else None),
            "_basin_id": r["basin_id"]}


def scope_basins(c: sqlite3.Connection, *, model_sha256: str | None = None, plant: str | None = None) -> list[sqlite3.Row]:
    """The basins whose current registered model is ``model_sha256``, or which drain to ``plant`` (case-insensitive).

    Raises
    ------
    InputError
        No basin matches (naming what the bank has registered).
    """
    if (model_sha256 is None) == (plant is None):
        raise InputError("give exactly one of model_sha256 and plant")
    models = current_models(c)
    if model_sha256 is not None:
        hit = [m for m in models if m["sha256"] == str(model_sha256).lower()]
        if not hit:
            known = "; ".join(f"basin {m['basin']}: {Path(m['path']).name} {m['sha256'][:12]}... (version {m['version']})"
                              for m in models) or "none"
            raise InputError(f"--committed: the model (SHA-256 {str(model_sha256)[:12]}...) is not the current "
                             f"registered model of any basin of the bank; registered: {known}")
        return hit
    key = str(plant).strip().casefold()
    hit = [m for m in models if m["plant"] and m["plant"].strip().casefold() == key]
    if not hit:
        known = sorted({m["plant"] for m in models if m["plant"]})
        raise InputError(f"--committed: no basin of the bank is registered as draining to plant {plant!r}; registered "
                         f"plants: {', '.join(known) or 'none'} (`bank register-model BASIN --model PATH --plant KEY`)")
    return hit


# --- evidence ---------------------------------------------------------------------------------------
def evidence_summary(resolved: dict) -> str:
    """What a cited document included, as stored with the withdrawal (JSON text): its model's SHA-256 and
    its ``committed`` block (``bank_head``, ``as_of``, ``flows``), or ``committed: null``."""
    block = resolved.get("committed")
    return json.dumps({"model_sha256": resolved.get("model_sha256"),
                       "committed": None if block is None else {"bank_head": block.get("bank_head"),
                                                                "as_of": block.get("as_of"), "flows": block.get("flows", [])}},
                      sort_keys=True)


def stored_evidence(text: str | None) -> dict:
    """:func:`evidence_summary`'s text read back (``{"model_sha256": None, "committed": None}`` when none)."""
    if not text:
        return {"model_sha256": None, "committed": None}
    return json.loads(text)


def evidence_gaps(required: list[dict], block) -> list[str]:
    """The commitments of ``required`` that a document's ``committed`` block leaves out (or understates).

    A flow is covered when the block lists the same application at the same node (ignoring case) with
    at least its average flow (less :data:`FLOW_TOLERANCE_GPD`). Each gap is described in words.
    """
    have = {}
    for f in (block or {}).get("flows", []):
        have[str(f.get("application", "")).casefold()] = f
    gaps = []
    for r in required:
        f = have.get(r["application"].casefold())
        what = f"{r['application']} ({r['average_gpd']:,.0f} gpd at {r['node'] or 'no node'}, {r['status']})"
        if f is None:
            gaps.append(what)
        elif r["node"] and str(f.get("node") or "").casefold() != r["node"].casefold():
            gaps.append(f"{what}: the document has it at {f.get('node')}")
        elif float(f.get("average_gpd") or 0.0) < r["average_gpd"] - FLOW_TOLERANCE_GPD:
            gaps.append(f"{what}: the document has {float(f.get('average_gpd') or 0.0):,.0f} gpd")
    return gaps


# --- verify --------------------------------------------------------------------------------------------
def register_problems(c: sqlite3.Connection, purged_before: str = "") -> list[str]:
    """What :meth:`capacitysim.bank.Ledger.verify` finds wrong in the capacity register: records out of step with
    their journal rows.

    * every registered model version has its ``register-model`` row (same SHA-256, outlet, plant, contained
      applications) and every such row its version;
    * every connection date and expiry has its ``connect`` / ``expire`` row with the same date, and every such
      row its record (a commitment released by editing a record, not by the journal, is found);
    * a withdrawal's or application's average flow is the one its ``withdraw`` / ``record-application`` row
      recorded.

    Rows older than ``purged_before`` (a purge) are not required.
    """
    problems = []

    def rows(action):
        out = {}
        for r in c.execute("SELECT ref, at, detail FROM journal WHERE action=? ORDER BY seq", (action,)):
            try:
                detail = json.loads(r["detail"])
            except (TypeError, ValueError):
                detail = {}
            out[r["ref"]] = (r["at"], detail if isinstance(detail, dict) else {})
        return out

    registered = rows("register-model")
    seen = set()
    for m in c.execute("SELECT m.*, b.name AS basin FROM system_models m JOIN basins b ON b.id = m.basin_id"):
        ref = f"{m['basin']} v{m['version']}"
        seen.add(ref)
        j = registered.get(ref)
        if j is None:
            if m["registered_at"] >= purged_before:
                problems.append(f"registered model {ref}: no register-model journal row")
            continue
        d = j[1]
        want = {"model_sha256": m["sha256"], "outlet": m["outlet"], "plant": m["plant"],
                "includes": json.loads(m["includes"] or "[]")}
        for k, v in want.items():
            if d.get(k) != v:
                problems.append(f"registered model {ref}: {k} {v!r} but its journal row says {d.get(k)!r}")
    for ref in set(registered) - seen:
        problems.append(f"journal register-model {ref!r} has no registered model")
    connects, expires = rows("connect"), rows("expire")
    withdraws, recorded = rows("withdraw"), rows("record-application")
    records = [("withdrawal", r) for r in c.execute("SELECT application, connected_on, expired_on, average_gpd, requested_at"
                                                    " AS at FROM withdrawals")]
    records += [("application", r) for r in c.execute("SELECT application, connected_on, expired_on, average_gpd,"
                                                      " created_at AS at FROM applications")]
    names = set()
    for kind, r in records:
        app = r["application"]
        names.add(app)
        for col, journal in (("connected_on", connects), ("expired_on", expires)):
            j = journal.get(app)
            if r[col] is not None and j is None and r["at"] >= purged_before:
                problems.append(f"{kind} {app}: {col} {r[col]} without its journal row")
            elif j is not None and j[1].get(col) != r[col]:
                problems.append(f"{kind} {app}: {col} {r[col]!r} but its journal row says {j[1].get(col)!r}")
        j = (withdraws if kind == "withdrawal" else recorded).get(app)
        if j is not None and "average_gpd" in j[1] and j[1]["average_gpd"] != r["average_gpd"]:
            problems.append(f"{kind} {app}: average {r['average_gpd']!r} gpd but its journal row says "
                            f"{j[1]['average_gpd']!r}")
    for ref in (set(connects) | set(expires)) - names:
        problems.append(f"journal connect/expire of {ref!r} has no application")
    return problems
