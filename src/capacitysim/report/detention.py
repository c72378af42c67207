"""The HTML report of a detention design (``capacitysim detention --report``).

Files are named by their name and SHA-256 (:func:`capacitysim.report.html.file_label`), never by a path
of the machine that ran the design; the submittal identification heads the report; the verdict is
printed qualified by the unverified rule-set values the design used ("PASS under unverified values: ...").
"""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np

from capacitysim.report.format import number
from capacitysim.report.html import HtmlReport, document_of, file_label, new_figure
from capacitysim.rules import nyc_stormwater as nyc
from capacitysim.units import MINUTES_PER_HOUR
from capacitysim.workflows.detention import SWMM_TOLERANCE, TRIENNIAL_KIND, DetentionResult


def _is_obligation(condition: dict) -> bool:
    """A condition of the owner's obligations of 15 RCNY § 31-04(a)(8) (the triennial one dated)."""
    return condition["citation"].startswith("15 RCNY § 31-04(a)(8)")


def _step_value(value, unit):
    """A step's value with the decimals of its unit (:data:`capacitysim.report.format.DECIMALS`)."""
    return number(value, unit) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


def verdict_line(result) -> str:
    """The verdict as the report and the text output print it: ``PASS`` only when every rule-set value
    the design used is verified, else ``PASS under unverified values: idf_10yr, ...`` (FAIL likewise).
    ``result`` is a :class:`DetentionResult` or its document."""
    if isinstance(result, dict):
        unver, status = result["unverified_values_used"], result["status"]
    else:
        unver, status = result.unverified_values_used, result.status
    word = status.upper()
    return f"{word} under unverified values: {', '.join(unver)}" if unver else word


def write_report(result: DetentionResult | dict, path) -> Path:
    """Write the self-contained HTML report: submittal, inputs (files by name and SHA-256), every step
    with its citation, hydrographs, stage, SWMM check, rule-set sources (unverified values flagged), the
    conditions and the § 31-04(a)(8) obligations with their citations, the triennial certification's due
    dates (or "not known" before approval) and the professions that may certify.

    ``result`` is the design or its stored document (``--json``); the report reads the document alone
    (:meth:`DetentionResult.report_keys` holds what it needs besides the numbers)."""
    d = document_of(result)
    n, s, site = d, d["hydrographs"], d["site_details"]
    status = d["status"]
    rep = HtmlReport(f"Detention design: {d['site']}", "Site Connection Proposal, NYC combined sewer area (15 RCNY § 31-03)")
    rep.submittal(d["submittal"])
    rep.raw(f'<p class="{status}">Result: {html.escape(verdict_line(d))}</p>')
    unver = d["unverified_values_used"]
    if unver:
        rep.paragraph("The verdict rests on rule-set values not verified against their primary text: "
                      f"{', '.join(unver)} (see 'Rule-set values and their sources'). Supply verified values in a rule set "
                      "of your own (extends = \"nyc-2012\", each table with its source and verified = true) and run "
                      "again with --rule.", "untrusted")
    for p in d["problems"]:
        rep.paragraph(p, "fail")

    rep.heading("Inputs")
    kind = site["development_kind"]
    rep.key_values([
        ("site file", file_label(d["site_file"], d["site_sha256"])),
        ("development", "new development" if kind == "new" else "alteration"),
        *([("alteration type", nyc.ALTERATION_TYPES.get(site["alteration_type"], site["alteration_type"])
            if site["alteration_type"] else "not stated")] if kind == "alteration" else []),
        *([("phased / subdivided", ", ".join(w for w, on in (("phased", site["phased"]), ("subdivided lots", site["subdivision"])) if on)),
           ("master/phased plan", site["master_plan"] or "-")] if site["phased"] or site["subdivision"] else []),
        ("total site area [ft2]", d["site_area_sf"]),
        *([("altered area [ft2]", d["altered_area_sf"])] if d["altered_area_sf"] else []),
        ("drainage-plan runoff coefficient", d["drainage_plan_c"]),
        ("receiving sewer", site["receiving_sewer"] or "not stated"),
        *([("new points of discharge", "not stated" if site["new_points_of_discharge"] is None else site["new_points_of_discharge"])]
          if kind == "alteration" else []),
        ("system", f"{d['system_type']} ({site['system_bottom']} bottom)"),
        ("orifice invert above bottom [ft]", n["orifice_invert_ft"]),
        ("rule set", d["rule_set"]),
        *[("rule-set file", file_label(f["file"], f["sha256"])) for f in d["rule_set_files"]],
    ])
    rep.table(["surface", "area [ft2]", "C [-]"], [[r["surface"], r["area_sf"], r["runoff_coefficient"]] for r in site["surfaces"]])
    if site["infiltration"]:
        inf = site["infiltration"]
        rep.key_values([("soil borings", ", ".join(inf["soil_borings"])), ("borings at system location", inf["borings_at_system_location"]),
                        ("permeability test", inf["permeability_test"]), ("infiltration rate [in/h]", inf["infiltration_rate_in_hr"]),
                        ("report", inf["report"] or "-")])
    if site["recycling"]:
        rec = site["recycling"]
        rep.key_values([("recycling demand [gpd]", rec["demand_gpd"]), ("independent system", rec["independent"]),
                        ("use", rec["use"] or "-")])

    rep.heading("Compliance checks")
    rep.table(["check", "requirement", "value", "result", "citation"],
              [[c["criterion"], c["requirement"], c["value"], c["result"].upper(), c["citation"]] for c in d["checks"]],
              classes=[{"pass": "pass", "fail": "fail"}.get(c["result"], "untrusted") for c in d["checks"]])
    obligations = [c for c in d["conditions"] if _is_obligation(c)]
    others = [c for c in d["conditions"] if not _is_obligation(c)]
    if others:
        rep.heading("Conditions for the DEP reviewer")
        rep.table(["condition", "citation"], [[c["text"], c["citation"]] for c in others])

    rep.heading("Calculation, step by step")
    rep.table(["step", "formula", "value", "unit", "citation"],
              [[st["step"], st["formula"], _step_value(st["value"], st["unit"]), st["unit"], st["citation"]] for st in d["steps"]])

    rep.heading("Design summary")
    rep.table(["quantity", "value"], [
        ["release rate [cfs]", n["release_rate_cfs"]],
        ["required volume [ft3]", n["required_volume_cf"]],
        ["storage provided [ft3]", n["storage_provided_cf"]],
        ["orifice diameter [in]", "infeasible" if n["orifice_diameter_in"] is None else n["orifice_diameter_in"]],
        ["critical design hydrograph", n["design_hydrograph"]],
        ["peak inflow [cfs]", n["peak_inflow_cfs"]],
        ["peak release to the sewer [cfs]", n["peak_outflow_cfs"]],
        ["max depth [ft] (system height)", f"{number(n['max_depth_ft'], 'ft')} ({number(n['system_height_ft'], 'ft')})"],
        ["max storage used [ft3]", n["max_storage_cf"]],
        ["routing mass balance error [ft3]", n["routing_mass_balance_error_cf"]],
    ])
    rep.citation("The orifice diameter is the largest that keeps the routed peak release at or below the release rate; "
                 "a fabricated orifice must not be larger. Routing: Modified Puls (storage indication), Chow, Maidment & Mays "
                 "(1988) § 8.2; orifice: Q = Cd A (2 g H)^0.5 with H to the centroid (Brater & King ch. 4; HEC-22 § 8.4).")

    if s is None:
        rep.paragraph("No routed hydrograph in the document.", "untrusted")
    else:
        _figures(rep, s, n)

    rep.heading("Check in EPA SWMM")
    if n["swmm_peak_outflow_cfs"] is None:
        rep.paragraph("SWMM check not run.")
    else:
        rep.table(["quantity", "capacitysim", "SWMM 5.2", "difference"], [
            ["peak outflow [cfs]", number(n["peak_outflow_cfs"], "cfs"), number(n["swmm_peak_outflow_cfs"], "cfs"),
             f"{number(n['swmm_peak_outflow_difference'] * 100, '%')} %"],
            ["max depth [ft]", number(n["max_depth_ft"], "ft"), number(n["swmm_max_depth_ft"], "ft"),
             f"{number(n['swmm_max_depth_difference'] * 100, '%')} %"],
        ], classes=["pass" if n["swmm_agreement"] else "fail"] * 2)
        rep.citation(f"Storage node with the same depth-area table, circular side orifice, free outfall, inflow as "
                     f"[INFLOWS]/[TIMESERIES]; dynamic wave, 1 s routing step. Agreement required within {SWMM_TOLERANCE:.0%}.")

    rep.heading("Rule-set values and their sources")
    rows, classes = [], []
    for e in d["rule_set_entries"]:
        rows.append([e["name"], ", ".join(f"{k}={v}" for k, v in e["values"].items()), e["source"],
                     "yes" if e["verified"] else "NO", ("overridden; " if e["overridden"] else "") + e["note"]])
        classes.append("" if e["verified"] else "untrusted")
    rep.table(["parameter", "value", "source", "verified", "note"], rows, classes)
    rep.paragraph("Values marked NO were not checked against the primary text (derived, assumed or recalled); the volume "
                  "depends directly on idf_10yr. PC § 1114.3.1.1 Eq. 11-6 could not be read in full and is not used.", "untrusted")

    rep.heading("Maintenance obligations (15 RCNY § 31-04(a)(8))")
    rep.table(["obligation", "citation"], [[c["text"], c["citation"]] for c in obligations or nyc.MAINTENANCE_OBLIGATIONS])
    triennial = next((c for c in obligations if c.get("kind") == TRIENNIAL_KIND), None)
    if triennial is not None:
        due = triennial["due_on"]
        rep.key_values([
            ("approval date", triennial["approved_on"] or "not given (a design before approval)"),
            ("triennial inspection and certification due on",
             f"{', '.join(due)}, and every {nyc.TRIENNIAL_INTERVAL_YEARS} years thereafter" if due
             else f"{nyc.TRIENNIAL_INTERVAL_YEARS} years after the approval date and every "
                  f"{nyc.TRIENNIAL_INTERVAL_YEARS} years thereafter (dates not known)"),
            ("inspected and certified by (one of)", ", ".join(triennial["certifier"])),
            ("how the dates are counted", triennial["due_on_basis"]),
        ])
        rep.citation(f"{triennial['citation']}: \"Three years after the date of approval of a retention or detention system "
                     "and every three years thereafter the operation of the system shall be inspected by a licensed "
                     "professional engineer, a registered architect or a licensed master plumber.\"")
    if site["recycling"]:
        rep.paragraph("Recycling systems cannot be modified or disconnected without DEP's express written approval; this binds "
                      "current and future owners (15 RCNY § 31-03(a)(4)).")
    return rep.write(path)


def _figures(rep: HtmlReport, s: dict, n: dict) -> None:
    """The hydrographs and the stage of the document's ``hydrographs`` (every ``time_step_min`` from 0)."""
    inflow = np.asarray(s["inflow_cfs"], float)
    t_hr = np.arange(inflow.size) * s["time_step_min"] / MINUTES_PER_HOUR
    losses = np.asarray(s["losses_cfs"], float)
    fig, ax = new_figure()
    ax.plot(t_hr, inflow, label="inflow")
    ax.plot(t_hr, np.asarray(s["sewer_cfs"], float), label="release to sewer")
    if losses.size and losses.max() > 0:
        ax.plot(t_hr, losses, label="infiltration + recycling")
    ax.axhline(n["release_rate_cfs"], color="k", ls="--", lw=1, label="release rate")
    ax.set_xlabel("time [h]")
    ax.set_ylabel("flow [cfs]")
    ax.legend()
    rep.figure(fig, f"Inflow and outflow hydrographs ({n['design_hydrograph']})")
    fig, ax = new_figure()
    ax.plot(t_hr, np.asarray(s["stage_ft"], float), label="stage")
    ax.axhline(s["top_ft"], color="r", ls="--", lw=1, label="top of system")
    ax.set_xlabel("time [h]")
    ax.set_ylabel("depth above bottom [ft]")
    ax.legend()
    rep.figure(fig, "Stage over time")

