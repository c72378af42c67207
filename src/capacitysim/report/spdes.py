"""The HTML report of a treatment-capacity check (``capacitysim spdes check --report``): 15 RCNY § 18-37(b)
for a watershed plant, the permitted-flow headroom under its SPDES permit for any other plant.

The submittal identification heads the report; files are named by name and SHA-256
(:func:`capacitysim.report.html.file_label`), never by a path of the machine that ran the check.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from capacitysim.report.html import HtmlReport, document_of, file_label, new_figure
from capacitysim.rules import spdes as rule
from capacitysim.units import GPD_PER_MGD
from capacitysim.workflows import spdes as sp
from capacitysim.workflows.spdes import SpdesCheck


def periods_of(series: dict, basis: str) -> rule.PeriodAverages:
    """The periods a document stores (``monthly_averages``, ``period_averages``) as the check held them."""
    return rule.PeriodAverages(
        basis, np.array(series["start"], dtype="datetime64[D]"), np.array(series["end"], dtype="datetime64[D]"),
        np.array([np.nan if a is None else a for a in series["average_mgd"]], dtype=float),
        np.array(series["days_present"], dtype=int), np.array(series["days_expected"], dtype=int),
        np.array(series["complete"], dtype=bool))


class _Stored:
    """What the report reads of a stored SPDES document: the document, its verdict's numbers, its periods."""

    def __init__(self, d: dict):
        self.d = d
        self.basis = d["basis"]
        self.as_of = np.datetime64(d["as_of"], "D")
        self.limit_mgd = float(d["limit_mgd"])
        self.committed_gpd = float(d["committed_gpd"])
        self.added_gpd = float(d["added_gpd"])
        self.on_top_gpd = self.committed_gpd + self.added_gpd
        self.window_start_exclusive = np.datetime64(d["lookback_window"]["start_exclusive"], "D")
        self.monthly = periods_of(d["monthly_averages"], "month")
        self.periods = self.monthly if d["period_averages"] is None else periods_of(d["period_averages"], self.basis)
        # the look-back window as the check selects it (rules.spdes.spdes_verdict)
        self.window = self.periods.select(rule.in_lookback(self.periods.end, self.as_of) & ~np.isnan(self.periods.average_mgd))


def figure(result, months_shown: int = 36):
    """Monthly averages against the limit, the committed and the added flow stacked on top, the look-back window
    shaded. ``result`` is a check, its document, or the document as the report reads it."""
    v = result if isinstance(result, _Stored) else _Stored(document_of(result))
    m = v.monthly
    last_month = max(np.datetime64(v.as_of, "M"), m.end[-1].astype("datetime64[M]"))
    keep = (m.end.astype("datetime64[M]") > last_month - months_shown) & (m.days_present > 0)
    start = m.start[keep].astype("datetime64[ns]")
    end = m.end[keep]
    avg = m.average_mgd[keep]
    complete = m.complete[keep]
    in_w = rule.in_lookback(end, v.as_of)
    fig, ax = new_figure(9.0, 4.0)
    x = pd.to_datetime(start) + pd.Timedelta(days=14)
    width = 24
    over = rule.exceeds(avg, v.limit_mgd, 0.0)
    colors = np.where(over, "#c0392b", np.where(in_w, "#2c6fbb", "#9bb7d6"))
    bars = ax.bar(x, avg, width=width, color=colors, edgecolor="#1b1b1b", linewidth=0.4, label="monthly average (record)")
    for b, c in zip(bars, complete):
        if not c:
            b.set_hatch("///")
    committed_mgd = v.committed_gpd / GPD_PER_MGD
    if v.committed_gpd > 0:
        ax.bar(x[in_w], np.full(int(in_w.sum()), committed_mgd), bottom=avg[in_w], width=width, color="#8e6bbf",
               edgecolor="#1b1b1b", linewidth=0.4, label=f"committed flow {v.committed_gpd:,.0f} gpd")
    if v.added_gpd > 0:
        added_mgd = v.added_gpd / GPD_PER_MGD
        ax.bar(x[in_w], np.full(int(in_w.sum()), added_mgd), bottom=avg[in_w] + committed_mgd, width=width,
               color="#f0a500", edgecolor="#1b1b1b", linewidth=0.4, label=f"added flow {v.added_gpd:,.0f} gpd")
    ax.axhline(v.limit_mgd, color="#a21515", linewidth=1.5, linestyle="--", label=f"SPDES limit {v.limit_mgd:g} MGD")
    if v.basis != "month":
        p = v.periods
        sel = (p.end.astype("datetime64[M]") > last_month - months_shown)
        ax.plot(pd.to_datetime(p.end[sel].astype("datetime64[ns]")), p.average_mgd[sel], color="#1b1b1b", linewidth=1.0,
                label=f"{v.basis} average (the permit's basis)")
    lo = pd.Timestamp(v.window_start_exclusive) + pd.Timedelta(days=1)
    ax.axvspan(lo, pd.Timestamp(v.as_of) + pd.Timedelta(days=1), color="#dddddd", alpha=0.5, zorder=0,
               label="prior twelve months (period ends)")
    ax.set_ylabel("flow [MGD]")
    top = max(float(np.nanmax(avg)) + v.on_top_gpd / GPD_PER_MGD, v.limit_mgd) * 1.12
    ax.set_ylim(0, top)
    ax.legend(loc="upper left", fontsize=7, ncol=2)
    ax.set_title(f"Monthly average flow against the SPDES limit (as of {v.as_of})", fontsize=10)
    fig.autofmt_xdate()
    return fig


_RULE_18_37_B = (
    "15 RCNY § 18-37(b): \"A new sewer connection or sewer extension to a sewer system is prohibited where the "
    "wastewater treatment plant to which the sewer system has been connected and which discharges within the "
    "watershed has had a SPDES flow parameter violation in the prior twelve months, or where the additional flow "
    "from the new sewer connection or sewer extension will cause or can be expected to cause such wastewater "
    "treatment plant to have a SPDES flow parameter violation as defined herein.\""
)


def write_report(result: SpdesCheck | dict, path: str | Path) -> Path:
    """The HTML report: submittal, verdict, warnings, conditions, arithmetic, definitions, policies, figure,
    the periods that count, the record (named by file name and SHA-256, never a machine path).

    A watershed plant's report cites and quotes 15 RCNY § 18-37(b) and lists the § 18-37(c)(1)-(3), (e),
    (j)(2) conditions and the § 18-36(a)(8) phosphorus limit; another plant's report shows the
    permitted-flow headroom under its SPDES permit and cites neither (they apply within the watershed).

    ``result`` is the check or its stored document (``--json``); the report reads the document alone
    (:meth:`SpdesCheck.report_keys` holds what it needs besides the check's numbers).
    """
    d = document_of(result)
    v = _Stored(d)
    ws = d["watershed"]
    if ws:
        rep = HtmlReport("Treatment capacity: SPDES flow limit check",
                         "15 RCNY § 18-37(b) (and § 18-36(a)(8) phosphorus limits)")
    else:
        rep = HtmlReport("Treatment capacity: SPDES permitted flow headroom",
                         "The plant's SPDES permit flow limit; the plant does not discharge within the NYC watershed")
    rep.submittal(d["submittal"])
    rep.heading("Verdict")
    rep.paragraph(d["verdict_line"], "pass" if d["verdict"] == "pass" else "fail")
    if ws:
        rep.citation(_RULE_18_37_B)
    else:
        rep.paragraph(
            "The plant does not discharge within the New York City watershed, so the watershed rules' prohibition of "
            "new connections to a plant with a SPDES flow violation does not apply. Treatment capacity is shown by "
            "the permitted-flow headroom: the permit's flow limit minus the highest period average of the prior "
            "twelve months and the added flow, which must be at least 0 gpd."
        )
        rep.citation(d["permit_citation"])
    if d["warnings"]:
        rep.heading("Warnings")
        for w in d["warnings"]:
            rep.paragraph(f"warning: {w}", "untrusted")
    rep.key_values([tuple(r) for r in d["summary_rows"]])
    rep.heading("Checks")
    rep.table(["criterion", "requirement", "value", "result", "citation"],
              [[c["criterion"], c["requirement"], c["value"], c["result"], c["citation"]] for c in d["checks"]],
              ["pass" if c["result"] == "pass" else "fail" for c in d["checks"]])
    if d["conditions"]:
        rep.heading("Conditions (15 RCNY § 18-37)")
        rep.paragraph("Conditions of the rule that go with the connection; the check cannot show them, the applicant "
                      "meets them and the reviewer confirms which apply to this connection.")
        rep.table(["applies when", "condition", "citation"],
                  [[c["applies_when"], c["text"], c["citation"]] for c in d["conditions"]])
    rep.heading("Definitions used")
    texts = [d["definitions"].get("violation") or d["definitions"].get("exceedance"), d["lookback_window"]["definition"],
             sp.INCOMPLETE_TEXT, sp.ADDED_TEXT, sp.HEADROOM_TEXT]
    if d["definitions"].get("committed_flow"):
        texts.append(d["definitions"]["committed_flow"])
    for text in texts:
        rep.paragraph(text)
    rep.heading("Named program policies")
    rep.table(["policy", "value", "what", "status"],
              [[p["name"], "-" if p["value"] is None else str(p["value"]), p["text"], p["status"]] for p in d["policies"]])
    rep.heading("Monthly averages")
    rep.figure(
        figure(v),
        "Bars: monthly average flow of the record (dark: period ends in the look-back window; red: above the limit; "
        "hatched: days missing). Orange: the added flow stacked on the months that count"
        + (" (purple below it: the flow committed by the credit bank)" if v.committed_gpd else "")
        + ". Dashed: the permit's limit.",
    )
    rep.heading(f"Periods in the look-back window ({v.basis})")
    w = v.window
    added = v.on_top_gpd  # the committed flow (credit bank) and the added flow on top of each period
    with_ = "with committed and added flow" if v.committed_gpd else "with added flow"
    if v.basis == "30day":
        rep.paragraph(f"{len(w)} daily 30-day periods end in the window; those over the limit are grouped in runs below.")
        rows, classes = _runs(w, v.limit_mgd, added, with_)
        if rows:
            rep.table(["period ends", "periods", "highest average [MGD]", f"{with_} [MGD]", "over the limit"], rows, classes)
        else:
            rep.paragraph("No 30-day period in the window exceeds the limit, with or without the added flow.", "pass")
    else:
        rows, classes = [], []
        for i in range(len(w)):
            p = _period(w, i, added)
            over_rec = bool(rule.exceeds(w.average_mgd[i], v.limit_mgd, 0.0))
            over_proj = bool(rule.exceeds(w.average_mgd[i], v.limit_mgd, added))
            rows.append([p["label"], p["average_mgd"], p["projected_average_mgd"],
                         (v.limit_mgd - p["projected_average_mgd"]) * GPD_PER_MGD,
                         f"{p['days_present']} / {p['days_expected']}" + ("" if p["complete"] else " (incomplete)"),
                         "record" if over_rec else (with_ if over_proj else "no")])
            classes.append("fail" if over_proj else "")
        rep.table(["period", "average [MGD]", f"{with_} [MGD]", f"margin {with_} [gpd]", "days", "over the limit"], rows, classes)
    rep.heading("Record")
    items = []
    if d["plant"]["file"] is not None:
        items.append(("plant file", file_label(d["plant"]["file"]["name"], d["plant"]["file"]["sha256"])))
    items += [
        ("file", file_label(d["source_file"]["name"], d["source_file"]["sha256"])),
        ("kind", "daily flows" if d["source_kind"] == "daily" else "ECHO DMR monthly values (parameter 50050)"),
        ("last day with data", d["record_end"] or "-"),
        ("periods ending over the whole record above the limit", d["violations_in_record"]),
        ("gaps (not filled)", "; ".join(d["gaps"]) if d["gaps"] else "none"),
    ]
    rep.key_values(items)
    for note in d["notes"]:
        rep.paragraph(note)
    if ws:
        rep.heading("Phosphorus (15 RCNY § 18-36(a)(8))")
        ph = sp.phosphorus(v.limit_mgd * GPD_PER_MGD, watershed=True)
        rep.paragraph(
            f"Taking the flow limit as the SPDES permitted total flow ({ph['permitted_flow_gpd']:,.0f} gpd, row "
            f"{ph['band']}), the plant's total phosphorus limit is {ph['total_phosphorus_limit_mg_l']:g} mg/l."
        )
        rep.raw(
            "<table><thead><tr><th>SPDES Permitted Total Flow (Gallons/day)</th><th>Total Phosphorus Limit (mg/l)</th></tr></thead>"
            "<tbody><tr><td>≤ 50,000</td><td>1.0</td></tr><tr><td>&gt; 50,000 and &lt; 500,000</td><td>0.5</td></tr>"
            "<tr><td>≥ 500,000</td><td>0.2</td></tr></tbody></table>"
        )
        rep.citation("Table of 15 RCNY § 18-36(a)(8), as written.")
    return rep.write(path)


def _period(p: rule.PeriodAverages, i: int, added_gpd: float) -> dict:
    """One period of the look-back window as the table shows it (the check's ``_period``)."""
    avg = float(p.average_mgd[i])
    return {"label": SpdesCheck._label(p.basis, p.start[i], p.end[i]), "average_mgd": avg,
            "projected_average_mgd": avg + added_gpd / GPD_PER_MGD, "days_present": int(p.days_present[i]),
            "days_expected": int(p.days_expected[i]), "complete": bool(p.complete[i])}


def _runs(w: rule.PeriodAverages, limit_mgd: float, added_gpd: float, with_: str = "with added flow"):
    over = rule.exceeds(w.average_mgd, limit_mgd, added_gpd)
    rows, classes = [], []
    i = 0
    n = len(w)
    while i < n:
        if not over[i]:
            i += 1
            continue
        j = i
        while j + 1 < n and over[j + 1] and (w.end[j + 1] - w.end[j]).astype(int) == 1:
            j += 1
        seg = slice(i, j + 1)
        peak = float(np.max(w.average_mgd[seg]))
        rec = bool(rule.exceeds(w.average_mgd[seg], limit_mgd, 0.0).any())
        rows.append([f"{w.end[i]} to {w.end[j]}", j - i + 1, peak, peak + added_gpd / GPD_PER_MGD,
                     "record" if rec else with_])
        classes.append("fail")
        i = j + 1
    return rows, classes
