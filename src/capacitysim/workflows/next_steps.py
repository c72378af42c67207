"""What to do after a failing capacity demonstration (issue 28, item 1): the engineer's answer, not only the verdict.

For a demonstration that fails, :func:`next_steps` gives

* the governing checks in plain words, each named a *policy* limit (no net increase at a basin outlet, the plant
  or a CSO: program policies of :class:`~capacitysim.rules.capacity.Criteria`, not a pipe running full) or a
  *physical* one (flooding, surcharge near the rim, d/D, a force main or a storage unit near full, a pump off its
  curve);
* the largest connection that passes at each connection node, by the headroom search
  (:func:`capacitysim.workflows.headroom.headroom`, bounded by the connection's own flow, within its tolerance
  and confirmed by real runs: the passing end is a complete run that passes), unless the caller opts out;
* the offset the program asks for: under the BJC I/I offset program a new connection withdraws flow credits 1:1
  against its peak sewage flow (section F; program policy ``offset_ratio``), earned by I/I removal in the
  connection's I/I remediation basin; ``--remediate basin=OUTLET,gpd=GPD`` runs that removal in the
  demonstration.

References
----------
BJC I/I offset program, sections F (credits 1:1 against the peak sewage flow) and H(1) (demonstration of
adequate capacity); the limits are the named policies of :class:`capacitysim.rules.capacity.Criteria`.
"""

from __future__ import annotations

import math

#: Criteria that are program policies (no net increase), not a physical limit of a pipe or structure.
POLICY_CRITERIA = ("peak inflow at the basin outlet", "peak inflow at the plant", "CSO volume")


def plain_words(check: dict) -> dict:
    """A failed check of a demonstration document in plain words: ``{"criterion", "element", "limit_kind", "text"}``.

    ``limit_kind`` is ``policy`` for the no-net-increase criteria (:data:`POLICY_CRITERIA`: a tolerance on a
    rise, set by program policy) and ``physical`` for the others (the element itself reaches its limit).
    """
    crit, el = check["criterion"], check["element"]
    if crit.startswith(POLICY_CRITERIA):
        text = (f"{el}: {crit} is a program policy (no net increase, Criteria), not a pipe running full: the connection "
                f"raises it from {_n(check.get('before'))} to {_n(check.get('after'))} {check.get('unit', '')} past "
                f"{_n(check.get('limit'))}; an I/I removal in the basin that offsets the rise meets it")
        kind = "policy"
    else:
        text = (f"{el}: {crit}: {_n(check.get('before'))} -> {_n(check.get('after'))} {check.get('unit', '')} "
                f"(limit {_n(check.get('limit'))}): a physical limit of the element")
        kind = "physical"
    return {"criterion": crit, "element": el, "limit_kind": kind, "text": " ".join(text.split())}


def _n(x) -> str:
    return "-" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:,.4g}"


def next_steps(doc: dict, *, model, basins=(), storm=None, criteria=None, remediations=(), plant=None,
               spinup_hr=None, peaking="pattern", search: bool = True, measured_ii=()) -> dict | None:
    """The next steps of a failing demonstration document (None unless its verdict is ``fail``).

    Parameters
    ----------
    doc : dict
        The demonstration's document (:func:`capacitysim.workflows.demonstration.demonstration_json`).
    model, storm, criteria, remediations, plant, spinup_hr, peaking, measured_ii
        The demonstration's own inputs: the headroom search runs the same scenario with the connection's flow
        searched.
    basins : list of Basin
        The model's I/I remediation basins (:attr:`~capacitysim.workflows.demonstration.Demonstration.basins`).
    search : bool
        Run the bounded headroom search at each connection node (a few SWMM runs each); False gives the plain
        words and the offset only.

    Returns
    -------
    dict
        ``governing`` (:func:`plain_words` of each failed check), ``connections`` (per connection node: its flow,
        ``largest_passing_gpd`` with the search's bracket and runs, or None without the search; the I/I
        remediation basin and the I/I removal and credits the program asks for), ``commands`` (what to run next).
    """
    if doc.get("verdict") != "fail":
        return None
    from capacitysim.rules.ii_offset import DEFAULT_OFFSET_RATIO

    governing = [plain_words(c) for c in doc["checks"] if c["passed"] is False and c["kind"] != "run"]
    out, commands = [], []
    for c in doc.get("scenario", {}).get("connections", []):
        node, gpd = c["node"], float(c["flow_gpd"])
        peak = gpd * float(c.get("peak_factor", 1.0))
        row = {"node": node, "flow_gpd": gpd, "peak_gpd": peak, "largest_passing_gpd": None, "search": None,
               "ii_removal_gpd": peak * DEFAULT_OFFSET_RATIO, "offset_ratio": DEFAULT_OFFSET_RATIO,
               "basin": _basin_of(node, basins)}
        if search:
            row["search"] = _search(model, node, gpd, storm=storm, criteria=criteria, remediations=remediations,
                                    plant=plant, spinup_hr=spinup_hr, peaking=peaking, measured_ii=measured_ii)
            row["largest_passing_gpd"] = row["search"]["max_connection_gpd"]
        if row["basin"]:
            commands.append(f"--remediate basin={row['basin']},gpd={row['ii_removal_gpd']:.0f}")
        commands.append(f"capacitysim headroom --nodes {node} (the largest connection {node} takes)")
        out.append(row)
    return {"governing": governing, "connections": out, "commands": commands,
            "definitions": {
                "largest_passing_gpd": "the largest flow at the node that passes, bracketed by real runs within the "
                                       "headroom tolerance (the passing end is a complete run); 0: fails at the smallest "
                                       "flow searched",
                "ii_removal_gpd": "the I/I removal the program asks for in the connection's I/I remediation basin: "
                                  "the peak sewage flow x offset_ratio (section F, credits 1:1)",
                "limit_kind": "policy: a no-net-increase tolerance (Criteria); physical: the element reaches its limit"}}


def _basin_of(node: str, basins) -> str | None:
    """The outlet of the I/I remediation basin ``node`` drains to (None: no outfall)."""
    from capacitysim.network.basins import basin_of

    from capacitysim.errors import InputError

    try:
        b = basin_of(node, list(basins))
    except InputError:  # a node that drains to no basin: no offset basin to name
        return None
    return None if b is None else b.outlet


def _search(model, node, gpd, **kw) -> dict:
    """The bounded headroom search at ``node``: largest passing flow in (0, gpd]."""
    from capacitysim.workflows.headroom import headroom

    storm = kw.pop("storm")
    res = headroom(model, [storm] if storm is not None else None, [node], workers=0, max_gpd=gpd,
                   min_gpd=min(100.0, gpd / 10.0), **kw)
    (cell,) = res.to_dict()["nodes"]
    return {k: cell.get(k) for k in ("max_connection_gpd", "passing_gpd", "failing_gpd", "status", "runs",
                                     "governing_check", "message")}
