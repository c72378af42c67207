"""The HTML report of a capacity demonstration (``capacitysim capacity --report``).

It reads the demonstration's result document only (:meth:`Demonstration.to_dict`), so a stored document
(a service job's results, a ``--json`` file) renders the same report.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from capacitysim.report.format import number
from capacitysim.report.html import HtmlReport, file_label, new_figure
from capacitysim.report.plan_map import capacity_plan_map, profile_labels


def _num(x) -> float:
    """A document number (null for not-a-number) as a float."""
    return math.nan if x is None else float(x)


def write_report(result, path) -> Path:
    """A self-contained HTML report to attach to a flow-credit withdrawal application.

    Parameters
    ----------
    result : Demonstration or dict
        The capacity demonstration, or its result document (``to_dict()``, e.g. a stored job's
        results): the report reads the document only, so a stored document renders the same report.
    path : path
        The HTML file (written atomically).
    """
    doc = result.to_dict() if hasattr(result, "to_dict") else result
    verdict, storm_label = doc["verdict"], doc["storm"]
    model_name = Path(doc["model"]).name
    scenario = doc.get("scenario", {})
    rep = HtmlReport("Sewer capacity demonstration",
                     f"Model {model_name}; design storm: {storm_label}; verdict: {verdict.upper()}")
    rep.submittal(doc.get("submittal"))
    rep.heading("Purpose")
    rep.paragraph("Demonstration of adequate hydraulic capacity in the sewage collection system for a new or modified "
                  "sewer connection and the I/I remediation offsetting it, by SWMM runs of the network before and after "
                  "the change under the same rainfall.")
    rep.citation("Binghamton-Johnson City Joint Sewage Board I/I Offset Program (effective January 1, 2013), sewer flow "
                 "credit bank paragraph H(1) (withdrawal subject to \u201cdemonstration by the applicant of adequate hydraulic "
                 "and treatment capacity in the sewage collection system and treatment plant\u201d), paragraph F (credits equal "
                 "to the estimated peak sewage flow rate increase, one-to-one), paragraph A (credits used only in the I/I "
                 "remediation basin that generated them); Table 174-19.2, Inflow Guidelines (1-year 24-hour Type II storm, "
                 "2.1 in; sump pumps 5 gpm; roof drains by TR-55); Table 174-19.3 (CN 98 for roofs).")
    rep.heading("Inputs")
    sim = doc["simulation"]
    items = [("model", file_label(doc.get("model_file") or doc["model"], doc.get("model_sha256"))),
             ("plant outfall", doc["plant"] or "none (check skipped)"),
             ("rainfall", storm_label),
             ("simulated", f"{sim['start']} to {sim['end']}; reported from {sim['report_start']} "
                           f"({sim['spinup_policy']})")]
    if doc["rainfall_simulated_in"] is not None:
        items.append(("rainfall simulated over the catchment [in]", doc["rainfall_simulated_in"]))
    for w in doc["warnings"]:
        items.append(("warning", w))
    for w in doc["fixes"]:
        items.append(("changed in the scenario", w))
    for w in doc["untrusted_reasons"]:
        items.append(("UNTRUSTED", w))
    for c in scenario.get("connections", []):
        pk = c.get("shape", "")
        items.append((f"connection at {c['node']}", f"{number(c['flow_gpd'], 'gpd')} gpd average, {pk}" + (f"; {c['label']}" if c.get("label") else "")))
    for r in scenario.get("remediations", []):
        how = (f"{number(r['gpd'], 'gpd')} gpd removed = {number(r['fraction'] * 100, '%')} % of the peak RDII "
               f"({number(r['peak_rdii_gpd_before'], 'gpd')} gpd)" if r.get("gpd") else f"{number(r['fraction'] * 100, '%')} % of RDII")
        items.append((f"I/I remediation in basin {r['basin'] or '(node list)'}", f"{how}; {r['n_nodes']} nodes"))
    for r in scenario.get("removed_sources", []):
        what = []
        if r["sump_pumps"]:
            what.append(f"{r['sump_pumps']:g} sump pumps x {number(r['sump_pump_gpm'], 'gpm')} gpm (Table 174-19.2), "
                        f"on from {number(r['sump_on_hr'], 'h')} h to the end of the run")
        if r["roof_area_sqft"]:
            what.append(f"{number(r['roof_area_sqft'], 'ft2')} ft2 of roof (TR-55, CN {r['roof_cn']:g}, Tc {number(r['roof_tc_hr'], 'h')} h: "
                        f"{number(r['roof_tr55_runoff_in'], 'in')} in, {number(r['roof_tr55_volume_cf'], 'ft3')} ft3, "
                        f"peak {number(r['roof_peak_cfs'], 'cfs')} cfs)")
        items.append((f"disconnected inflow sources in {('basin ' + r['basin']) if r['basin'] else 'the node list'}",
                      "; ".join(what) + f"; {len(r['nodes'])} nodes; in the BEFORE model only"))
    rep.key_values(items)
    storm_rec = doc.get("storm_record")
    if storm_rec:
        rep.heading("Design storm")
        rows = [("storm", storm_rec["name"])]
        if storm_rec.get("depth_in") is not None:
            rows += [("depth [in], distribution, duration [h]",
                      f"{storm_rec['depth_in']:g}, Type {storm_rec['distribution']}, {storm_rec['duration_hr']:g}"),
                     ("source of the depth", storm_rec.get("source") or "-")]
        if storm_rec.get("file"):
            rows.append(("storm file", file_label(storm_rec["file"], storm_rec.get("sha256"))))
        rep.key_values(rows)
        rep.paragraph("Program interpretation (confirm with the bank administrator): " + storm_rec["policy"] + ".", "untrusted")
    c = doc["criteria"]
    rep.key_values([
        ("flooding", f"no new or increased flooding (tolerance {c['flooding_tol_cf']:g} ft3)"),
        ("surcharge", f"no node may newly come within {c['freeboard_ft']:g} ft of its rim"),
        ("basin outlet and plant", f"peak inflow at the connection's basin outlet and at the plant may rise at most {c['outlet_peak_tol_pct']:g} %"),
        ("CSO", f"CSO volume may rise at most {c['cso_volume_tol_pct']:g} % or {c['cso_volume_tol_cf']:g} ft3"),
        ("d/D", f"max d/D of conduits <= {c['max_d_over_d']:g} unless already exceeded and not rising"),
        ("model quality", f"runoff and flow-routing continuity errors within {c['continuity_limit_pct']:g} %, else untrusted"),
    ])
    rep.citation("These criteria are program policies (capacitysim.rules.capacity.Criteria), not numbers of the "
                 "regulation: the program asks for a demonstration of adequate capacity without setting them.")
    _committed_section(rep, doc.get("committed"))
    rep.heading("Verdict")
    rep.raw(f'<p class="{verdict}">Verdict: {verdict.upper()}</p>')
    rows = [[ch["criterion"], ch["element"], number(ch["before"], ch["unit"]), number(ch["after"], ch["unit"]),
             number(ch["limit"], ch["unit"]), ch["unit"], _check_result(ch["passed"])] for ch in doc["checks"]]
    rep.table(["criterion", "element", "before", "after", "limit", "unit", "result"], rows,
              [_check_result(ch["passed"]).lower().replace("not confirmed", "untrusted") for ch in doc["checks"]])
    _margins_section(rep, doc.get("margins"))
    rep.heading("Network plan")
    plan = capacity_plan_map(doc)
    if plan is None:
        rep.paragraph("No plan map: the model has no [COORDINATES].")
    else:
        rep.figure(plan[0], plan[1], dpi=150)
    rep.heading("Largest changes")
    links, nodes = doc["links"], doc["nodes"]
    dq = np.array([_num(r["peak_flow_cfs_after"]) - _num(r["peak_flow_cfs_before"]) for r in links])
    order = np.argsort(-np.abs(np.nan_to_num(dq)), kind="stable")[:12]
    rep.table(["link", "peak flow before [cfs]", "peak flow after [cfs]", "q/Qfull before [-]", "q/Qfull after [-]",
               "d/D before [-]", "d/D after [-]"],
              [[links[i]["id"], *(_num(links[i][k]) for k in ("peak_flow_cfs_before", "peak_flow_cfs_after", "max_q_over_qfull_before",
                                                              "max_q_over_qfull_after", "max_d_over_d_before", "max_d_over_d_after"))]
               for i in order])
    dh = np.array([_num(r["max_hgl_ft_after"]) - _num(r["max_hgl_ft_before"]) for r in nodes])
    order = np.argsort(-np.abs(np.nan_to_num(dh)), kind="stable")[:12]
    rep.table(["node", "max HGL before [ft]", "max HGL after [ft]", "freeboard after [ft]", "surcharge after [ft]",
               "flooding after [ft3]"],
              [[nodes[i]["id"], *(_num(nodes[i][k]) for k in ("max_hgl_ft_before", "max_hgl_ft_after", "freeboard_ft_after",
                                                              "max_surcharge_ft_after", "flooding_volume_cf_after"))]
               for i in order])
    rep.key_values([("continuity error before [%]", _num(doc["before"]["continuity_error_pct"])),
                    ("continuity error after [%]", _num(doc["after"]["continuity_error_pct"]))])
    files = doc.get("external_files") or []
    if files:
        rep.heading("Files")
        rep.table(["file", "kind", "use", "SHA-256"],  # names only: never the machine's absolute paths
                  [[f["name"], f["kind"], f["verb"].lower(), f["sha256"] or ("written in the run's folder" if f["verb"] == "SAVE" else "MISSING")]
                   for f in files])
    if doc["injections"]:
        rep.heading("Injected volumes (self-check)")
        rep.table(["what", "element", "intended [ft3]", "received [ft3]", "difference [%]", "basis", "result"],
                  [[i["what"], i["element"], i["intended_cf"], i["received_cf"], i["difference_pct"], i["basis"],
                    "pass" if i["passed"] else "UNTRUSTED"] for i in doc["injections"]],
                  ["pass" if i["passed"] else "fail" for i in doc["injections"]])

    rep.heading("Hydrographs")
    for h in doc.get("hydrographs") or []:
        fig, ax = new_figure(8, 3.2)
        for key, style in (("before", "-"), ("after", "--")):
            ax.plot(h[f"elapsed_hr_{key}"], [_num(q) for q in h[f"total_inflow_cfs_{key}"]], style, label=key)
        ax.set_xlabel("time from start of simulation [hr]")
        ax.set_ylabel("total inflow [cfs]")
        ax.set_title(f"{h['node']} ({h['label']})")
        ax.grid(alpha=0.3)
        ax.legend()
        rep.figure(fig, f"Total inflow at {h['node']} ({h['label']}) before and after.")
    prof = doc.get("profile")
    if prof:
        ids = [p["node"] for p in prof]
        x = np.array([p["distance_ft"] for p in prof])
        col = {k: np.array([_num(p[k]) for p in prof]) for k in ("invert_ft", "crown_ft", "rim_ft", "max_hgl_before_ft", "max_hgl_after_ft")}
        fig, ax = new_figure(9, 4.6)
        ax.fill_between(x, col["invert_ft"], col["crown_ft"], color="0.88", lw=0, label="pipe (invert to crown)")
        ax.plot(x, col["rim_ft"], color="0.3", lw=1.2, label="rim (ground)")
        ax.plot(x, col["crown_ft"], color="0.5", lw=0.9, ls=":", label="crown")
        ax.plot(x, col["invert_ft"], color="k", lw=1, label="invert")
        profile_labels(ax, x, ids, col["rim_ft"], col["crown_ft"])
        ax.plot(x, col["max_hgl_before_ft"], color="tab:blue", label="max HGL before")
        ax.plot(x, col["max_hgl_after_ft"], color="tab:red", ls="--", label="max HGL after")
        ax.set_xlabel(f"distance from {ids[0]} along the flow path [ft]")
        ax.set_ylabel("elevation [ft]")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower left")
        ax.margins(y=0.12)
        rep.figure(fig, f"Hydraulic grade line profile (maximum after the spin-up) from the connection {ids[0]} to the plant "
                        f"{ids[-1]}; each manhole labelled, with its rim (upper tick) and the crown of its highest pipe "
                        "(lower tick).", dpi=150)
    rep.heading("Method")
    rep.paragraph("Each run is SWMM 5.2 (swmm-toolkit) in its own process with one thread, on a copy of the model. Peak flows, "
                  "depths, flooding and surcharge are the engine's routing-step statistics; q/Qfull and d/D use the engine's "
                  "full-flow capacity and full depth of each conduit; outfall and CSO volumes are the engine's whole-run outfall inflow "
                  "volumes (flow-routing mass balance; the Outfall Loading Summary prints a total within 0.02 % of it, rounded "
                  "to 0.001 million gallons). "
                  "Connections are [INFLOWS] baselines of their average flow shaped by an hourly pattern of mean 1 "
                  "(the model's own HOURLY dry-weather pattern divided by its mean, or constant), so each adds its stated "
                  "average flow; every run checks the volumes the engine received against the intended ones; "
                  "I/I remediation scales the sewershed's RDII sewer areas; disconnected sump pumps and roof leaders "
                  "are [INFLOWS] of the BEFORE model (sump pumps 5 gpm each from the start of the rain to the end of the "
                  "run; roofs by the TR-55 unit hydrograph with CN 98 under the same rainfall) and absent from the AFTER model. "
                  f"Spin-up: {scenario.get('spinup_hr') or 0:g} h of simulation are prepended to the model's own period "
                  "(the start moved earlier; time series values SWMM counts from the start, those before a series' first date, "
                  "and rules on the elapsed simulation time moved with it), and peaks, depths, "
                  "surcharge and flooding are counted over the model's whole period (REPORT_START at its start), after "
                  "the initially empty pipes and wet wells have filled with dry-weather flow; a design storm starts at "
                  "the model's start; "
                  "outfall and CSO volumes and the continuity errors cover the whole run.")
    return rep.write(path)


def _committed_section(rep: HtmlReport, block: dict | None) -> None:
    """The credit bank's committed flows, in the after run (``capacity --committed``); nothing without them."""
    if not block:
        return
    rep.heading("Committed flows")
    rep.paragraph("Flows the credit bank has committed on this model (approved or reserved and not yet connected, and "
                  "recorded applications) are injected at their nodes into the AFTER run, before the new connection, "
                  "volume-true as a connection is (its average flow, peaked by the model's diurnal pattern). The BEFORE "
                  "run is the model of record, so the checks on the change judge the committed flows and the new "
                  "connection together (program policy committed_baseline = cumulative; the alternative, incremental, "
                  "would put them in both runs and let each application use the whole relative limit again).")
    unplaced = {u["application"] for u in block.get("unplaced") or []}
    rep.key_values([
        ("bank", f"{Path(str(block['bank'])).name} (journal head {block['bank_head']})"),
        ("as of", block["as_of"]),
        ("left out (the applicant's own)", block.get("excluded") or "none"),
        ("committed average flow [gpd]", block["total_gpd"]),
        ("committed peak flow [gpd]", block.get("total_peak_gpd")),
        ("in the runs [gpd]", block.get("placed_gpd", block["total_gpd"])),
    ])
    flows = block["flows"]
    if flows:
        rep.table(["application", "basin", "node", "average [gpd]", "peak [gpd]", "status", "in the runs"],
                  [[f["application"], f.get("basin") or "-", f.get("node") or "-", f["average_gpd"],
                    f["peak_gpd"], f["status"],
                    "NO: " + next(u["reason"] for u in block["unplaced"] if u["application"] == f["application"])
                    if f["application"] in unplaced else "yes"] for f in flows],
                  ["fail" if f["application"] in unplaced else "" for f in flows])
    else:
        rep.paragraph("The bank has no commitment on this model.")


def _margins_section(rep: HtmlReport, m: dict | None) -> None:
    """The tightest elements downstream of the connections, and the deficiencies before the change (issue 28, item 2)."""
    if not m:
        return
    rep.heading("Margins downstream")
    rep.paragraph("The elements downstream of the connections nearest their limit in the run after: margin is the "
                  "limit less the value (freeboard: the value less the limit).")
    rows = [[r["element"], r["quantity"], number(r["before"], r["quantity"]), number(r["after"], r["quantity"]),
             number(r["limit"], r["quantity"]), number(r["margin"], r["quantity"])] for r in m.get("tightest", [])]
    rep.table(["element", "quantity", "before", "after", "limit", "margin"], rows)
    if m.get("existing_deficiencies"):
        rep.heading("Deficiencies before the change")
        rep.paragraph("Elements already past their limit in the run before: the system's deficiencies, not the "
                      "change's (the verdict judges them only if the change makes them worse).")
        rows = [[r["element"], r["quantity"], number(r["before"], r["quantity"]), number(r["after"], r["quantity"]),
                 number(r["limit"], r["quantity"])] for r in m["existing_deficiencies"]]
        rep.table(["element", "quantity", "before", "after", "limit"], rows)


def _check_result(passed) -> str:
    """A check's result as the report prints it: ``pass``, ``FAIL``, or ``not confirmed`` where the check could not
    be made (``passed`` None, rules.verdict: it does not fail the verdict; its warning says why)."""
    return "pass" if passed else ("not confirmed" if passed is None else "FAIL")
