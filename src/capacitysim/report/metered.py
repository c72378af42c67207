"""The HTML report of a measured credit (:mod:`capacitysim.workflows.metered_credit`): the credit with its interval
and the PE block; per period the records and their quality, the dry days and GWI, the hydrographs (observed, base
flow, GWI, RDII, fitted), the event table and the RTK parameters; the rain-normalised check. Exports beside it:
:func:`write_exports` (events CSV, each period's decomposition as NetCDF)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from capacitysim.report.html import HtmlReport, new_figure

#: Events drawn with their fit per period (the largest by rain depth).
EVENTS_DRAWN = 3
#: The columns of the events CSV, in order.
EVENT_COLUMNS = ("period", "event", "rain_start", "rain_end", "depth_in", "rdii_volume_gal", "peak_rdii_gpd", "nse",
                 "volume_error_pct", "peak_error_pct")


def _event_rows(result) -> list[dict]:
    rows = []
    for name, p in result.periods.items():
        fitted = {e["name"]: e for e in (p.fit.events if p.fit else [])}
        for k, (w, ev) in enumerate(zip(p.wet, p.events)):
            f = fitted.get(ev.name, {})
            rows.append({"period": name, "event": k + 1, "rain_start": str(w.rain_start)[:16],
                         "rain_end": str(w.rain_end)[:16], "depth_in": w.depth_in, "rdii_volume_gal": w.rdii_volume_gal,
                         "peak_rdii_gpd": w.peak_rdii_gpd, "nse": f.get("nse"),
                         "volume_error_pct": f.get("volume_error_pct"), "peak_error_pct": f.get("peak_error_pct")})
    return rows


def write_exports(result, folder) -> list[Path]:
    """``events.csv`` (:data:`EVENT_COLUMNS`) and ``decomposition-<period>.nc`` (observed, BWF, GWI, RDII [gpd])
    in ``folder``; returns the paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / "events.csv"
    with open(out, "w", newline="", encoding="utf-8") as fh:
        wr = csv.DictWriter(fh, EVENT_COLUMNS)
        wr.writeheader()
        wr.writerows(_event_rows(result))
    paths = [out]
    for name, p in result.periods.items():
        nc = folder / f"decomposition-{name}.nc"
        ds = p.decomposition.copy()
        ds.attrs = {k: (str(v) if not isinstance(v, (int, float, str)) else v) for k, v in ds.attrs.items()}
        ds.to_netcdf(nc)
        paths.append(nc)
    return paths


def write_report(result, path) -> Path:
    """Write the report of a :class:`~capacitysim.workflows.metered_credit.MeteredCredit` to ``path``."""
    c = result.credit
    rep = HtmlReport("Measured I/I credit", "BJC I/I offset program, Table 174-19.1 (flow metering by a NYS licensed PE)")
    rep.heading("The credit")
    if c is None:
        rep.paragraph("No credit: " + "; ".join(result.warnings), "fail")
    else:
        rep.key_values([("I/I removed, claimed [gpd]", c.claimed_gpd), ("claim", f"{c.claim} ({'the interval' + chr(39) + 's lower bound' if c.claim == 'lower' else 'the point value, chosen by the PE'})"),
                        ("point value [gpd]", c.point_gpd), (f"{c.level:.0%} interval, lower [gpd]", c.lower_gpd),
                        (f"{c.level:.0%} interval, upper [gpd]", c.upper_gpd), ("basis", c.basis),
                        ("design-storm I/I before [gpd]", c.pre_ii_gpd), ("design-storm I/I after [gpd]", c.post_ii_gpd),
                        ("bootstrap resamples", c.n_boot), ("seed", c.seed)])
        rep.paragraph("The design storm is the program's 2.1 in, 1-year 24-hour NRCS Type II storm (Table 174-19.2); "
                      "the interval resamples each period's events with replacement and refits both RTK sets.")
    for w in result.warnings:
        rep.paragraph(w, "note")
    pe = result.pe
    rep.key_values([("professional engineer", pe.get("name") or "NOT NAMED"), ("NYS license", pe.get("license") or "-"),
                    ("basis", pe.get("statement", ""))])
    for name, p in result.periods.items():
        rep.heading(f"{name.capitalize()} period")
        q = p.flow.quality
        rep.key_values([("flow record", f"{p.flow.source.file} (SHA-256 {p.flow.source.sha256[:12]}...)"),
                        ("rain record", f"{p.rain.source.file} (SHA-256 {p.rain.source.sha256[:12]}...)"),
                        ("from (UTC)", str(p.flow.time_utc[0])), ("to (UTC)", str(p.flow.time_utc[-1])),
                        ("step [min]", p.flow.step_s / 60),
                        ("gaps", len(q.get("gaps", []) if isinstance(q, dict) else [])),
                        ("dry days", len(p.dry.dates)), ("GWI [gpd]", float(p.gwi.gwi_gpd)),
                        ("events", len(p.events)), ("enough events", p.enough[1])])
        ds = p.decomposition
        t = ds["time"].values
        fig, ax = new_figure(9, 3.4)
        ax.plot(t, ds["observed_gpd"].values, lw=0.6, color="0.3", label="observed")
        ax.plot(t, (ds["bwf_gpd"] + ds["gwi_gpd"]).values, lw=0.6, color="tab:blue", label="base flow + GWI")
        ax.plot(t, np.broadcast_to(ds["gwi_gpd"].values, t.shape), lw=0.8, color="tab:green", label="GWI")
        ax.plot(t, ds["rdii_gpd"].values, lw=0.6, color="tab:red", label="RDII")
        ax.set_ylabel("flow [gpd]")
        ax.legend(fontsize=8, ncol=4)
        ax.grid(alpha=0.3)
        rep.figure(fig, f"{name.capitalize()} period: the record split into base wastewater flow, GWI and RDII.")
        if p.fit is not None:
            order = np.argsort([-w.depth_in for w in p.wet[:len(p.events)]])[:EVENTS_DRAWN]
            for i in order:
                ev, fitted = p.events[i], p.fit.fitted[i]
                fig, ax = new_figure(8, 2.8)
                ax.plot(ev.t_hr, ev.rdii_gpd, lw=0.8, color="0.3", label="observed RDII")
                ax.plot(ev.t_hr, fitted, lw=1.0, color="tab:red", ls="--", label="fitted RTK")
                ax.set_xlabel("hours from the record's start")
                ax.set_ylabel("RDII [gpd]")
                ax.legend(fontsize=8)
                ax.grid(alpha=0.3)
                rep.figure(fig, f"{name.capitalize()} period, event {ev.name}: observed and fitted RDII.")
            rep.table(["parameter", "value", "standard error"],
                      [[r["name"], r["value"], r["se"]] for r in p.fit.table()])
        if p.regression:
            rep.key_values([(f"rain-normalised: {k}", v) for k, v in p.regression.items()
                            if isinstance(v, (int, float))])
    rep.heading("Events")
    rows = _event_rows(result)
    rep.table(["period", "event", "rain start", "depth [in]", "RDII volume [gal]", "peak RDII [gpd]", "NSE [-]",
               "volume error [%]", "peak error [%]"],
              [[r["period"], r["event"], r["rain_start"], r["depth_in"], r["rdii_volume_gal"], r["peak_rdii_gpd"],
                r["nse"], r["volume_error_pct"], r["peak_error_pct"]] for r in rows])
    rep.heading("Policies")
    for pol in result.policies:
        rep.paragraph(f"{pol['name']} = {pol['value']}: {pol['text']}")
    return rep.write(path)
