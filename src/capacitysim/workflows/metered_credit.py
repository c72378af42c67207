"""Measured credits (issue 29): the I/I a rehabilitation removed, from flow-meter and rain-gauge records of the
remediated sub-basin before and after the work, as a credit with its confidence interval on the program's design
storm.

Each period (pre, post) is read (:mod:`capacitysim.io.meters`: regular UTC grid, gaps kept as NaN, a quality
report), split into base wastewater flow, groundwater infiltration and RDII from its own dry days
(:mod:`capacitysim.hydrology.flow_decomposition`, SSOAP's method), cut into wet-weather events, and fitted with
three RTK unit hydrographs over all its events (:func:`capacitysim.hydrology.rtk_fit.fit_rtk`). The credit is the
design-storm I/I of the pre set minus that of the post set (Table 174-19.2's 2.1 in, 1-year 24-hour NRCS Type II
storm), with a bootstrap interval over events (:func:`capacitysim.hydrology.rtk_fit.credit_interval`); the credit
claimed is the interval's lower bound unless the PE chooses the point value, and says so. A period with too few or
too small qualifying events is flagged (:func:`capacitysim.hydrology.rtk_fit.enough_events`), and the
rain-normalised regression of event RDII volume on rain depth is shown beside the fit as an independent check.

Table 174-19.1 leaves pipe segments and laterals "to be determined for each specific project by using
calculations, flow metering, and/or televised inspection" by a NYS licensed PE: the document names the PE and the
records' SHA-256, so ``credits quantify`` can cite it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from capacitysim.errors import InputError

#: The kind of the document (``kind``).
KIND = "metered-credit"
#: Rain taken before an event's window into its RTK convolution [hr]: rain that fell shortly before still drains
#: into the window (the slow response's base is T (1 + K), up to about 3 days). Program choice.
LEAD_RAIN_HR = 72.0


@dataclass
class Period:
    """One metered period: its records, their quality, the decomposition, the events and the RTK fit."""

    name: str
    flow: object
    rain: object
    dry: object
    gwi: object
    decomposition: object
    wet: list
    events: list
    enough: tuple
    regression: dict
    fit: object = None


@dataclass
class MeteredCredit:
    """The result of :func:`metered_credit` (``to_dict``: its document)."""

    area_ac: float
    periods: dict
    credit: object
    pe: dict
    policies: list = field(default_factory=list)
    warnings: list = field(default_factory=list)

    def to_dict(self) -> dict:
        """The document: the credit with its interval, each period's quality, dry days, GWI, events and fit."""
        c = self.credit
        out = {"kind": KIND, "area_ac": self.area_ac,
               "credit": None if c is None else {**_plain(c.as_dict()),
                                                  "pre_rtk": c.pre_fit.params.as_dict(),
                                                  "post_rtk": c.post_fit.params.as_dict()},
               "pe": self.pe, "periods": {}, "warnings": list(self.warnings)}
        for name, p in self.periods.items():
            out["periods"][name] = {
                "flow_file": p.flow.source.file, "flow_sha256": p.flow.source.sha256,
                "rain_file": p.rain.source.file, "rain_sha256": p.rain.source.sha256,
                "start_utc": str(p.flow.time_utc[0]), "end_utc": str(p.flow.time_utc[-1]), "step_s": p.flow.step_s,
                "quality": {"flow": p.flow.quality, "rain": p.rain.quality},
                "dry_days": [str(d) for d in p.dry.dates], "gwi_gpd": float(p.gwi.gwi_gpd),
                "events": [_plain(e.to_dict()) for e in p.wet],
                "enough_events": {"ok": bool(p.enough[0]), "reason": p.enough[1]},
                "rain_normalised": _plain(p.regression),
                "rtk": None if p.fit is None else {"parameters": _plain(p.fit.table()), "events": _plain(p.fit.events),
                                                   "success": bool(p.fit.success)}}
        out["policies"] = self.policies
        return out


def _plain(v):
    """A value as JSON takes it (numpy scalars and datetimes as Python values and text)."""
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, np.generic):
        return v.item() if not isinstance(v, np.datetime64) else str(v)
    if isinstance(v, np.ndarray):
        return [_plain(x) for x in v.tolist()]
    if isinstance(v, float) and not np.isfinite(v):
        return None
    return v


def _hours(t, t0) -> np.ndarray:
    return (np.asarray(t, "datetime64[s]") - t0).astype("timedelta64[s]").astype(float) / 3600.0


def rdii_events(flow, rain, decomposition, wet) -> list:
    """The :class:`~capacitysim.hydrology.rtk_fit.RdiiEvent` of each wet event: its window's RDII [gpd] on the
    record's UTC clock [hr from the record's start] and the rain from :data:`LEAD_RAIN_HR` before the window to
    its end (the start of each rain interval; a rain gap counted as no rain, as the decomposition counts it)."""
    from capacitysim.hydrology.rtk_fit import RdiiEvent

    t0 = flow.time_utc[0]
    t_hr = _hours(flow.time_utc, t0)
    rain_start_hr = _hours(rain.time_utc, t0) - rain.step_s / 3600.0  # a depth is over the step ending at its time
    rain_in = np.nan_to_num(np.asarray(rain.rain_in, float), nan=0.0)
    rdii = np.asarray(decomposition["rdii_gpd"].values, float)
    local = np.asarray(flow.time_local, "datetime64[s]")
    out = []
    for k, ev in enumerate(wet):
        i0 = np.flatnonzero(local == np.datetime64(ev.window_start, "s"))
        i1 = np.flatnonzero(local == np.datetime64(ev.window_end, "s"))
        if not i0.size or not i1.size:
            continue
        a, b = int(i0[0]), int(i1[-1]) + 1
        lo, hi = t_hr[a] - LEAD_RAIN_HR, t_hr[b - 1]
        keep = (rain_start_hr >= lo) & (rain_start_hr < hi)
        if not keep.any():
            continue
        out.append(RdiiEvent(rain_start_hr[keep], rain_in[keep], t_hr[a:b], rdii[a:b],
                             name=f"{k + 1}: {str(ev.rain_start)[:16]}"))
    return out


def read_period(name: str, flow_path, rain_path, *, tz: str, flow_units=None, rain_units=None,
                include=None, exclude=None) -> Period:
    """Read, check and decompose one period's records, and cut its wet-weather events."""
    from capacitysim.hydrology import flow_decomposition as fd
    from capacitysim.hydrology.rtk_fit import enough_events, rain_normalised
    from capacitysim.io.meters import quality_report, read_flow_record, read_rain_record

    flow = read_flow_record(flow_path, units=flow_units, tz=tz)
    rain = read_rain_record(rain_path, units=rain_units, tz=tz)
    flow.quality = quality_report(flow, rain)
    dry = fd.dry_days(rain.time_local, rain.rain_in, flow.time_local, flow.flow_gpd, step_s=flow.step_s,
                      rain_step_s=rain.step_s, include=include, exclude=exclude)
    if not len(dry.dates):
        raise InputError(f"{name} period: no dry day in {Path(flow_path).name} (a dry day has little rain on it and "
                         f"the {fd.DRY_ANTECEDENT_DAYS} days before, and its flow recorded): no base flow to take off")
    patterns = fd.diurnal_patterns(flow.time_local, flow.flow_gpd, dry, step_s=flow.step_s)
    g = fd.gwi(flow.time_local, flow.flow_gpd, dry, step_s=flow.step_s)
    ds = fd.decompose(flow.time_local, flow.flow_gpd, dry, gwi_gpd=g.gwi_gpd, patterns=patterns, step_s=flow.step_s,
                      time_utc=flow.time_utc)
    wet = fd.wet_events(flow.time_local, ds["rdii_gpd"].values, rain.time_local, rain.rain_in, step_s=flow.step_s,
                        rain_step_s=rain.step_s)
    events = rdii_events(flow, rain, ds, wet)
    enough = enough_events(events) if events else (False, "no wet-weather event in the record")
    regression = rain_normalised(events) if len(events) >= 2 else {}
    return Period(name, flow, rain, dry, g, ds, wet, events, enough, regression)


def metered_credit(pre_flow, pre_rain, post_flow, post_rain, *, area_ac: float, tz: str, flow_units=None,
                   rain_units=None, basis: str | None = None, claim: str | None = None, level: float | None = None,
                   n_boot: int | None = None, seed: int = 0, pe_name: str | None = None,
                   pe_license: str | None = None, dry_include=None, dry_exclude=None, progress=None) -> MeteredCredit:
    """The I/I removed by a rehabilitation [gpd], measured: pre and post meter records of the same sub-basin.

    Parameters
    ----------
    pre_flow, pre_rain, post_flow, post_rain : path
        Flow-meter and rain-gauge records (CSV or a logger export, :mod:`capacitysim.io.meters`) before and after
        the rehabilitation.
    area_ac : float
        The metered sub-basin's sewer area [ac] (the RTK volume is R x rain x area).
    tz : str
        The records' time zone (IANA name, e.g. ``America/New_York``) for naive local timestamps.
    flow_units, rain_units : str, optional
        Units when the files do not say them (gpd, MGD, gpm, cfs, L/s; in, mm).
    basis, claim, level, n_boot, seed
        The credit's policies (:func:`capacitysim.hydrology.rtk_fit.credit_interval`): ``basis`` peak (default) or
        volume, ``claim`` lower (default: the interval's lower bound) or point, the interval's ``level`` (0.90),
        the bootstrap's resamples and seed.
    pe_name, pe_license : str
        The NYS licensed PE who prepared the analysis (Table 174-19.1).
    dry_include, dry_exclude : sequences of dates, optional
        The PE's overrides of the dry-day selection, both periods.

    Returns
    -------
    MeteredCredit
        ``credit`` None when a period does not support a figure (the warnings say why).
    """
    from capacitysim.hydrology import rtk_fit as rf

    if not (isinstance(area_ac, (int, float)) and np.isfinite(area_ac) and area_ac > 0):
        raise InputError(f"area_ac: got {area_ac!r}; allowed: the sub-basin's sewer area > 0 [ac]")
    step = progress or (lambda *a, **k: None)
    periods, warnings = {}, []
    for name, fp, rp in (("pre", pre_flow, pre_rain), ("post", post_flow, post_rain)):
        step(name)
        p = read_period(name, fp, rp, tz=tz, flow_units=flow_units, rain_units=rain_units, include=dry_include,
                        exclude=dry_exclude)
        if not p.enough[0]:
            warnings.append(f"{name} period: {p.enough[1]}")
        periods[name] = p
    credit = None
    if all(len(p.events) >= 2 for p in periods.values()):
        step("fit")
        credit = rf.credit_interval(periods["pre"].events, periods["post"].events, area_ac=float(area_ac),
                                    n_boot=rf.N_BOOT if n_boot is None else int(n_boot), seed=seed,
                                    level=rf.CREDIT_INTERVAL_LEVEL if level is None else float(level),
                                    basis=basis or rf.CREDIT_BASIS, claim=claim or rf.CREDIT_CLAIM)
        periods["pre"].fit, periods["post"].fit = credit.pre_fit, credit.post_fit
    else:
        warnings.append("no credit: each period needs at least two wet-weather events to fit")
    if not all(p.enough[0] for p in periods.values()) and credit is not None:
        warnings.append("the credit stands on too few or too small events (see the periods' enough_events): a "
                        "figure the program should not accept without more monitoring")
    pe = {"name": pe_name, "license": pe_license,
          "statement": "Table 174-19.1: pipe segments and laterals are determined for each specific project by "
                       "calculations, flow metering and/or televised inspection, prepared by a NYS licensed PE"}
    if not pe_name or not pe_license:
        warnings.append("no PE named (pe_name and pe_license): Table 174-19.1 asks a NYS licensed PE to prepare it")
    from capacitysim.workflows.policies import catalogue

    policies = [p.to_dict() for p in catalogue().values() if p.scope == "measured I/I credits"]
    return MeteredCredit(float(area_ac), periods, credit, pe, policies, warnings)

