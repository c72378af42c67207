"""The HTML report of a scenario sweep (``capacitysim sweep summarize --report``).

Reads the store's Dataset (:func:`capacitysim.io.sweep_store.open_results`) and its summary
(:func:`capacitysim.workflows.sweep.summarize`): counts, the largest passing connections or
orifices with the check that governs them, every scenario with its governing check (the columns of
:data:`capacitysim.workflows.sweep.summary.SCENARIO_COLUMNS`), and the verdict map over two swept parameters.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import numpy as np

from capacitysim.errors import InputError
from capacitysim.report.format import label, number
from capacitysim.report.html import HtmlReport, document_of, new_figure
from capacitysim.rules.capacity import Criteria
from capacitysim.workflows.sweep.summary import (
    bound_text,
    governing_text,
    missing_note,
    scenario_cell_text,
    summarize,
    value_key,
    verdict_map_axes,
)


def write_summary_report(ds, path, x: str | None = None, y: str | None = None) -> Path:
    """HTML report: counts, largest passing connections, and the verdict map over two parameters
    (share of the scenarios over the other swept parameters that pass).

    Parameters
    ----------
    ds : xarray.Dataset or dict
        The store as :func:`capacitysim.io.sweep_store.open_results` reads it, or its summary document (the
        ``--json`` of ``sweep summarize``): the report reads the document alone, the store's summary made into
        one first, so ``sweep summarize --report`` and ``capacitysim report DOC.json`` are the same HTML.
    path : path
        The HTML file written.
    x, y : str, optional
        Swept parameters of the verdict map's axes (default: :func:`verdict_map_axes`).

    Returns
    -------
    pathlib.Path
        The report written.
    """
    s = document_of(ds if isinstance(ds, dict) else _Summary(summarize(ds)))
    grid = _verdict_grid(s)
    if x is not None or y is not None:
        if grid is None:
            raise InputError("--x/--y: a zip sweep (mode = \"zip\") has no grid to map; the verdict map is for product grids")
        verdict_map_axes(grid, x, y)  # a parameter the user named must exist
    rep = HtmlReport(f"Scenario sweep: {s['name']}", f"{s['kind']} sweep, {s['scenarios']:,} scenarios ({s['mode']})")
    rep.key_values([("done", s["done"]), ("failed", s["failed"]), ("missing", s["missing"]), ("pass", s["pass"]),
                    ("fail", s["fail"]), ("untrusted (continuity error)", s["untrusted"])])
    if s["missing"]:
        rep.paragraph(missing_note(s), "fail")
    rep.table(["parameter", "name in the sweep file", "values"],
              [[label(k), k, ", ".join(number(x, key=k) if isinstance(x, (int, float)) and not isinstance(x, bool) else str(x)
                                       for x in v)] for k, v in s["grid"].items()])
    for field_name, title, value_dim in (("largest_passing", "Largest connection that passes", "connect_gpd"),
                                         ("largest_passing_orifice", "Largest orifice that passes", "orifice_diameter_in")):
        if s.get(field_name):
            rep.heading(title)
            rep.paragraph("≥: the largest swept value passes (or every larger one is undecided), so the capacity is at "
                          "least that value; the grid does not bracket it. Otherwise the smallest larger value that fails "
                          "is shown with the check that governs it (its first failed check).")
            derived = {value_key(value_dim, "largest_passing"), value_key(value_dim, "smallest_failing"), "lower_bound",
                       "governing_check", "monotone", "undecided", "missing"}
            keys = [k for k in s[field_name][0] if k not in derived]
            rep.table([label(k) for k in keys] + ["largest passing", "governing check", "no smaller value fails"],
                      [[r[k] for k in keys] + [bound_text(r, value_dim), governing_text(r) or "-", "yes" if r["monotone"] else "NO"]
                       for r in s[field_name]])
    table = s.get("scenario_table")
    if table and table["rows"]:
        rep.heading("Scenarios and the check that governs each")
        rep.paragraph(f"Governing check: {table['governing']}. Value and limit are in the governing unit.")
        rows = table["rows"][:SCENARIO_ROWS]
        rep.table([label(c) for c in table["columns"]],
                  [_scenario_cells(table["columns"], r) for r in rows],
                  classes=[_row_class(dict(zip(table["columns"], r))) for r in rows])
        if len(table["rows"]) > SCENARIO_ROWS:
            rep.paragraph(f"The first {SCENARIO_ROWS:,} of {len(table['rows']):,} scenarios; the summary's --json holds all.")
    if s["failures"]:
        rep.heading("Failed scenarios")
        for m in s["failures"]:
            rep.paragraph(m, "fail")
    if s["mode"] == "product" and grid is not None:
        ds = grid
        try:
            xd, yd = verdict_map_axes(ds, x, y)
        except InputError as exc:
            rep.paragraph(str(exc))
        else:
            v = ds.verdict.transpose(yd, xd, ...)
            vals = np.asarray(v.values, dtype=object)
            decided = np.isin(vals, ["pass", "fail"])
            passing = (vals == "pass").reshape(vals.shape[0], vals.shape[1], -1)
            dec = decided.reshape(passing.shape)
            with np.errstate(invalid="ignore"):
                share = passing.sum(-1) / dec.sum(-1)
            fig, ax = new_figure(7.0, 4.0)
            im = ax.imshow(share, origin="lower", aspect="auto", cmap="RdYlGn", vmin=0, vmax=1)
            ax.set_xticks(range(ds.sizes[xd]), [f"{t:g}" if isinstance(t, float) else str(t) for t in ds[xd].values.tolist()], rotation=45)
            ax.set_yticks(range(ds.sizes[yd]), [f"{t:g}" if isinstance(t, float) else str(t) for t in ds[yd].values.tolist()])
            ax.set_xlabel(label(xd))
            ax.set_ylabel(label(yd))
            fig.colorbar(im, ax=ax, label="share passing")
            rest = [d for d in ds.verdict.dims if d not in (xd, yd)]
            rep.figure(fig, f"Verdict map over {label(xd)} and {label(yd)}" + (f" (share of scenarios over {', '.join(label(r) for r in rest)} that pass; "
                                                                   "blank: none decided)" if rest else " (green: pass, red: fail)"))
    if s["kind"] == "swmm":
        crit = _criteria_dict(s["criteria"])
        rep.citation("Verdict criteria (capacitysim.rules.capacity.Criteria, program policies): "
                     + "; ".join(f"{label(k)} = {number(v, key=k) if isinstance(v, (int, float)) and not isinstance(v, bool) else v}"
                                 for k, v in crit.items()) + ".")
    else:
        rep.citation("Verdict criteria: 15 RCNY § 31-03 release rate, no overtopping, required volume provided.")
    return rep.write(path)


#: Scenarios listed in the report's scenario table (the summary's --json holds all).
SCENARIO_ROWS = 2000


def _scenario_cells(columns: list, row: list) -> list:
    """A scenario's cells as the report prints them: a swept value raw (the table gives it the decimals of the unit
    in its header), the governing value and limit with the decimals of the row's unit, text as it is, "-" for none."""
    rec = dict(zip(columns, row))
    out = []
    for c, v in zip(columns, row):
        if v is None or v == "":
            out.append("-")
        elif c in ("governing_value", "governing_limit") and isinstance(v, (int, float)):
            out.append(number(v, rec.get("governing_unit") or None))
        elif c == "governing_ratio" or not isinstance(v, (int, float)) or isinstance(v, bool):
            out.append(scenario_cell_text(c, v))
        else:
            out.append(v)
    return out


def _row_class(row: dict) -> str:
    return {"pass": "pass", "fail": "fail"}.get(row.get("verdict") or "", "")


def _criteria_dict(criteria: dict) -> dict:
    """The store's ``criteria`` with every default filled in (:class:`capacitysim.rules.capacity.Criteria`)."""
    return asdict(Criteria.from_dict(criteria or {}))


class _Summary:
    """A store's summary as :func:`~capacitysim.report.html.document_of` reads a result (its ``to_dict``)."""

    def __init__(self, doc: dict):
        self.to_dict = lambda: doc


def _verdict_grid(s: dict):
    """The summary's ``verdict_map`` as the Dataset the map reads (``verdict`` over the swept dims), None for a zip."""
    m = s.get("verdict_map")
    if m is None:
        return None
    from capacitysim.xarray_setup import xr

    return xr.Dataset({"verdict": (m["dims"], np.asarray(m["verdict"], dtype=object))},
                      coords={d: v for d, v in m["coords"].items()})
