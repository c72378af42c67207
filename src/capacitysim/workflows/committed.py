"""Committed flows from the credit bank as the baseline of a capacity demonstration or a SPDES check.

Issue 24 ("no capacity promised twice"), cumulative evidence: every flow the bank has committed (an
approved or reserved withdrawal not yet connected, a recorded application at or under 2,500 gpd, a
connected flow the registered model does not contain yet) is part of the system the next applicant is
judged against. ``capacitysim capacity --committed BANK`` injects the commitments of the model's basins
into the AFTER run, before the applicant's own flow (program policy ``committed_baseline``,
:data:`COMMITTED_BASELINE`: the relative criteria judge every committed flow and the applicant together
against the model of record, so the +1 % of a no-net-increase policy is not spent once per application);
``capacitysim spdes check --committed BANK`` adds the committed average flow of every basin draining to
the plant to the plant's flow before the applicant's added flow.

The one place that reads commitments for evidence (the CLI and the service call it):

* :func:`capacity_commitments` -- the commitments of every basin whose registered model is the model
  demonstrated (its SHA-256 as read);
* :func:`spdes_commitments` -- the commitments of every basin registered as draining to a plant
  (:func:`plant_keys`: the SPDES permit number, else the plant's name);
* :func:`committed_connections` -- the commitments as volume-true
  :class:`~capacitysim.network.scenario.Connection` edits of a model, and those that cannot be placed;
* :func:`check_commitments` -- the validator of a commitments document given through the Python API.

The document is the one :meth:`capacitysim.bank.Ledger.commitments` returns (``bank``, ``bank_head``,
``as_of``, ``scope``, ``basins``, ``excluded``, ``flows``, ``total_gpd``, ``total_peak_gpd``,
``policies``); the result documents carry it as ``committed``.

References
----------
Binghamton-Johnson City Joint Sewage Board I/I Offset Program, sewer flow credit bank paragraph H(1)
(demonstration of adequate hydraulic and treatment capacity); 15 RCNY § 18-37(b) (the additional flow
that "will cause or can be expected to cause" a SPDES flow parameter violation).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from pathlib import Path

from capacitysim.errors import InputError

#: The CLI option the bank is named by (every error names it).
OPTION = "--committed"
#: Keys a commitments document must have.
REQUIRED_KEYS = ("bank", "bank_head", "as_of", "flows", "total_gpd")
#: Keys each committed flow must have.
FLOW_KEYS = ("application", "node", "average_gpd", "peak_gpd", "status")
#: At most this many unplaced flows are named in the warning (all are in ``unplaced``).
WARN_NAMES = 5
#: The label of a committed flow's connection (``committed APP``): how a scenario record tells it from the applicant's.
COMMITTED_LABEL = "committed "
#: Program policy ``committed_baseline``: which run of a capacity demonstration carries the bank's commitments.
COMMITTED_BASELINE = "cumulative"
#: The policy, with its alternative (the form of :data:`capacitysim.bank.ledger.POLICIES`).
COMMITTED_BASELINE_POLICY = {
    "name": "committed_baseline", "value": COMMITTED_BASELINE,
    "text": ("program interpretation — confirm with the bank administrator: section H(1) asks each applicant to "
             "demonstrate adequate hydraulic capacity and does not say what the demonstration is measured against; "
             "the committed flows are in the AFTER run only, before the applicant's flow: the BEFORE run is the model of "
             "record, so a criterion on the change (peak inflow at the basin outlet within +1 %, CSO volume) judges "
             "every committed flow and the applicant together, and two applications each within the limit alone "
             "cannot both use it; criteria on the state after the change (d/D, surcharge, freeboard) are the same "
             "either way"),
    "alternative": {"value": "incremental",
                    "text": "the committed flows in BOTH runs: the applicant's change is judged on top of them, so each "
                            "application may use the whole relative limit again (only physical limits accumulate)"}}


def model_sha256(model_path) -> str:
    """SHA-256 (hex) of a model file's bytes as read now.

    Parameters
    ----------
    model_path : path or str
        The ``.inp`` file, or the name of a bundled model (``synthetic-500``).
    """
    from capacitysim.io.bundled import model_path as bundled_model_path

    path = Path(bundled_model_path(model_path))
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    except OSError as exc:
        raise InputError(f"--model {str(model_path)!r}: cannot read the model file ({exc.strerror or exc})") from None
    return h.hexdigest()


def _named(bank_path, exc: Exception) -> InputError:
    """``exc`` as an InputError naming ``--committed`` and the bank path once."""
    msg = str(exc)
    for lead in (f"{OPTION}: ", f"{OPTION} "):
        if msg.startswith(lead):
            msg = msg[len(lead):]
            break
    return InputError(f"{OPTION} {str(bank_path)!r}: {msg}")


def _open_bank(bank_path):
    """The :class:`~capacitysim.bank.Ledger` of ``bank_path`` (read only: no actor), or InputError naming ``--committed``."""
    from capacitysim.bank import Ledger

    if bank_path is None or not str(bank_path).strip():
        raise InputError(f"{OPTION}: give the path of a capacitysim credit bank (the file of `capacitysim bank --db`)")
    path = Path(bank_path)
    if not path.is_file():
        raise InputError(f"{OPTION} {str(bank_path)!r}: no credit bank there (no such file); allowed: the path of a "
                         "capacitysim credit bank (the file of `capacitysim bank --db`)")
    try:
        return Ledger(path)
    except InputError as exc:
        raise _named(bank_path, exc) from None


def _commitments(bank_path, **scope) -> dict:
    with _open_bank(bank_path) as led:
        try:
            return check_commitments(led.commitments(**scope))
        except InputError as exc:
            raise _named(bank_path, exc) from None


def capacity_commitments(bank_path, model_path, *, application: str | None = None, as_of=None) -> dict:
    """The commitments of every basin whose registered model is ``model_path`` (by its SHA-256).

    Parameters
    ----------
    bank_path : path or str
        The credit bank (``--committed``).
    model_path : path or str
        The model demonstrated (a ``.inp`` file or a bundled model's name); hashed as read now.
    application : str, optional
        The applicant's own application id, left out of the commitments (its reservation is its own
        flow, not a commitment to judge it against).
    as_of : date-like, optional
        The date the commitments are taken as of (expiries); default the bank's today.

    Returns
    -------
    dict
        :meth:`capacitysim.bank.Ledger.commitments` (``scope`` ``{"model_sha256": ...}``).

    Raises
    ------
    InputError
        No bank at ``bank_path``, not a bank, or no basin registered with this model (naming the
        registered models).
    """
    sha = model_sha256(model_path)
    return _commitments(bank_path, model_sha256=sha, exclude=application, as_of=as_of)


def plant_keys(submittal=None, plant=None) -> list[str]:
    """The keys a plant is registered by in the bank: its SPDES permit number, then its name.

    Parameters
    ----------
    submittal : capacitysim.io.submittal.Submittal, optional
        The check's submittal (``spdes_permit``, ``plant``: they override the plant file's).
    plant : capacitysim.io.plant_flows.PlantFile, optional
        The plant file (``spdes_permit``, ``name``).

    Returns
    -------
    list of str
        The permit number (when known), then the name (when known), each once (case-insensitively).

    Raises
    ------
    InputError
        Neither a permit number nor a name is known.
    """
    cands = [getattr(submittal, "spdes_permit", None), getattr(plant, "spdes_permit", None),
             getattr(submittal, "plant", None), getattr(plant, "name", None)]
    out: list[str] = []
    for c in cands:
        if c and str(c).strip() and str(c).strip().casefold() not in {o.casefold() for o in out}:
            out.append(str(c).strip())
    if not out:
        raise InputError(f"{OPTION}: the plant's commitments are found by its SPDES permit number or name, and this check "
                         "has neither; allowed: give --plant FILE (with spdes_permit or name), --spdes-permit or --plant-name")
    return out


def spdes_commitments(bank_path, plant_key: str | Sequence[str], *, application: str | None = None, as_of=None) -> dict:
    """The commitments of every basin registered as draining to a plant.

    Parameters
    ----------
    bank_path : path or str
        The credit bank (``--committed``).
    plant_key : str or sequence of str
        The plant as the bank registers it (``bank add-basin --plant``): a SPDES permit number or a
        plant name (case-insensitive). Several keys (:func:`plant_keys`: the permit, then the name)
        are the same plant: the commitments of the basins registered under any of them, each once.
    application : str, optional
        The applicant's own application id, left out.
    as_of : date-like, optional
        The date the commitments are taken as of; default the bank's today.

    Returns
    -------
    dict
        :meth:`capacitysim.bank.Ledger.commitments` (``scope`` ``{"plant": KEY}``; with several keys
        matched, ``{"plant": [KEY, ...]}`` and the flows of all, each application and basin once).

    Raises
    ------
    InputError
        No bank, not a bank, or no basin registered under any of the keys (the bank's message,
        listing the known plants).
    """
    keys = [plant_key] if isinstance(plant_key, str) else [str(k) for k in plant_key]
    if not keys or not all(k.strip() for k in keys):
        raise InputError(f"{OPTION}: the plant key must be a SPDES permit number or a plant name; got {plant_key!r}")
    for _attempt in range(3):  # the same bank head for every key (another process may commit in between)
        found, errors = [], []
        with _open_bank(bank_path) as led:
            for k in keys:
                try:
                    found.append(check_commitments(led.commitments(plant=k, exclude=application, as_of=as_of)))
                except InputError as exc:
                    errors.append(exc)
        if not found:
            raise _named(bank_path, errors[0]) from None
        if len({b["bank_head"] for b in found}) == 1:
            break
    else:
        raise InputError(f"{OPTION} {str(bank_path)!r}: the bank changed while its commitments were read; try again")
    if len(found) == 1:
        return found[0]
    return _merged(found)


def _merged(blocks: list[dict]) -> dict:
    """Several commitments documents of one bank head (one plant under several keys) as one."""
    out = dict(blocks[0])
    flows, seen = [], set()
    for b in blocks:
        for f in b["flows"]:
            key = (str(f["application"]), str(f.get("basin")))
            if key not in seen:
                seen.add(key)
                flows.append(f)
    out["flows"] = flows
    out["basins"] = sorted({x for b in blocks for x in (b.get("basins") or [])})
    out["scope"] = {"plant": [b.get("scope", {}).get("plant") for b in blocks]}
    out["total_gpd"] = float(sum(float(f["average_gpd"]) for f in flows))
    out["total_peak_gpd"] = float(sum(float(f["peak_gpd"] or 0.0) for f in flows))
    return out


def _number(name: str, value, *, allow_none: bool = False) -> float | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise InputError(f"committed: {name} must be a number of gpd >= 0; got {value!r}")
    return float(value)


def check_commitments(block) -> dict:
    """Validate a commitments document (:meth:`capacitysim.bank.Ledger.commitments`); return it as a new dict.

    Raises
    ------
    InputError
        Not a dict, a required key missing (:data:`REQUIRED_KEYS`, :data:`FLOW_KEYS`), a flow that is
        not a number of gpd >= 0, or a ``total_gpd`` that is not the sum of the flows' ``average_gpd``.
    """
    if not isinstance(block, dict):
        raise InputError(f"committed: expected the commitments document of a credit bank (a dict); got {type(block).__name__}")
    missing = [k for k in REQUIRED_KEYS if k not in block]
    if missing:
        raise InputError(f"committed: the commitments document has no {', '.join(missing)} (keys: {', '.join(REQUIRED_KEYS)})")
    if not isinstance(block["flows"], list):
        raise InputError(f"committed: flows must be a list; got {type(block['flows']).__name__}")
    out = dict(block)
    flows = []
    for i, f in enumerate(block["flows"]):
        if not isinstance(f, dict) or any(k not in f for k in FLOW_KEYS):
            raise InputError(f"committed: flows[{i}] must have {', '.join(FLOW_KEYS)}; got {f!r}")
        f = dict(f)
        f["average_gpd"] = _number(f"flows[{i}].average_gpd", f["average_gpd"])
        f["peak_gpd"] = _number(f"flows[{i}].peak_gpd", f["peak_gpd"], allow_none=True)
        flows.append(f)
    out["flows"] = flows
    total = _number("total_gpd", block["total_gpd"])
    summed = sum(f["average_gpd"] for f in flows)
    if not math.isclose(total, summed, rel_tol=1e-9, abs_tol=1e-6):
        raise InputError(f"committed: total_gpd {total:,.3f} is not the sum of the flows' average_gpd ({summed:,.3f})")
    out["total_gpd"] = total
    if "total_peak_gpd" in block and block["total_peak_gpd"] is not None:
        out["total_peak_gpd"] = _number("total_peak_gpd", block["total_peak_gpd"])
    return out


def committed_connections(block: dict, model) -> tuple[list, list[dict], list[str]]:
    """The commitments of ``block`` as scenario edits of ``model``: ``(connections, unplaced, warnings)``.

    Each flow becomes ``Connection(node, average_gpd, "pattern", label="committed APP")``: an
    [INFLOWS] baseline of its average flow shaped by an hourly pattern of mean 1, volume-true as an
    applicant's connection is (:class:`~capacitysim.network.scenario.Connection`). The average, not
    the peak the flow was approved for: the model's diurnal pattern peaks it, as it peaks the
    applicant's flow. A flow whose node the bank does not know, whose node is not a node of the
    model, or with no average flow cannot be placed: it is returned in ``unplaced`` (with the reason)
    and named in a warning, never dropped silently; it still counts in the document's totals.

    Parameters
    ----------
    block : dict
        A commitments document (:func:`check_commitments`).
    model : capacitysim.network.model.SwmmInp
        The model the runs edit (node names matched as SWMM matches them, ignoring case).

    Returns
    -------
    (list of Connection, list of dict, list of str)
    """
    from capacitysim.network.scenario import Connection

    conns, unplaced = [], []
    for f in block["flows"]:
        node = f.get("node")
        reason = None
        found = None
        if node is None or not str(node).strip():
            reason = "the bank records no node for it"
        elif (found := model.find_node(str(node))) is None:
            reason = f"node {node} is not a node of {model.path.name}"
        elif not f["average_gpd"] > 0:
            reason = "no average flow"
        if reason is not None:
            unplaced.append({"application": f["application"], "basin": f.get("basin"), "node": node,
                             "average_gpd": f["average_gpd"], "peak_gpd": f["peak_gpd"], "status": f["status"],
                             "reason": reason})
            continue
        conns.append(Connection(found, f["average_gpd"], "pattern", label=f"{COMMITTED_LABEL}{f['application']}",
                                commitment=str(f["application"])))
    warnings = []
    if unplaced:
        gpd = sum(u["average_gpd"] for u in unplaced)
        named = "; ".join(f"{u['application']} ({u['average_gpd']:,.0f} gpd: {u['reason']})" for u in unplaced[:WARN_NAMES])
        more = f"; and {len(unplaced) - WARN_NAMES} more" if len(unplaced) > WARN_NAMES else ""
        warnings.append(f"{len(unplaced)} committed flow(s) of the bank, {gpd:,.0f} gpd in all, could not be placed in the "
                        f"model and are NOT in the runs (they are counted in the committed totals): {named}{more}")
    return conns, unplaced, warnings


def committed_record(block: dict, unplaced: list[dict] | None = None) -> dict:
    """The ``committed`` block of a result document: the bank, its head, the date, the flows and totals.

    ``placed_gpd`` is the committed average flow actually injected (the total less ``unplaced``);
    ``unplaced`` is None for a check that places no flow at a node (a SPDES check).
    """
    rec = {k: block.get(k) for k in ("bank", "bank_head", "as_of", "scope", "basins", "excluded")}
    rec["flows"] = [dict(f) for f in block["flows"]]
    rec["total_gpd"] = float(block["total_gpd"])
    rec["total_peak_gpd"] = (float(block["total_peak_gpd"]) if block.get("total_peak_gpd") is not None
                             else float(sum(f["peak_gpd"] or 0.0 for f in block["flows"])))
    if unplaced is not None:
        rec["unplaced"] = [dict(u) for u in unplaced]
        rec["placed_gpd"] = rec["total_gpd"] - float(sum(u["average_gpd"] for u in unplaced))
    rec["policies"] = list(block.get("policies") or [])
    if unplaced is not None:  # a capacity demonstration: which run carries them
        rec["baseline"] = COMMITTED_BASELINE
        rec["policies"].append(dict(COMMITTED_BASELINE_POLICY))
    return rec
