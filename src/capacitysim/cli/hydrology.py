"""CLI commands of the hydrology core: storm, runoff, peak, hydrograph."""

from __future__ import annotations

import click
import numpy as np

from capacitysim import hydrology
from capacitysim.cli import cli
from capacitysim.cli.common import emit_json, emit_table, fmt, json_option
from capacitysim.errors import InputError
from capacitysim.hydrology._inputs import MAX_AREA_MI2
from capacitysim.io.files import non_finite_path
from capacitysim.io.storms import load_storm
from capacitysim.units import (
    ACRES_PER_SQMI,
    CUBIC_FEET_PER_SQMI_INCH,
    GALLONS_PER_CUBIC_FOOT,
    MINUTES_PER_HOUR,
    SECONDS_PER_HOUR,
)

DEFAULT_STORM = "binghamton-1yr-24h"
#: The largest drainage area the hydrology core takes, in acres (MAX_AREA_MI2 = 10,000 mi2: past the
#: methods' use; a larger value is a unit error and overflows the results).
MAX_AREA_AC = MAX_AREA_MI2 * ACRES_PER_SQMI


def _area_mi2(area_ac, area_mi2) -> float:
    """The drainage area [mi2] from --area-ac or --area-mi2 (exactly one), in (0, MAX_AREA_MI2]."""
    if (area_ac is None) == (area_mi2 is None):
        raise InputError("give the drainage area once: --area-ac or --area-mi2")
    if area_ac is not None:
        if not 0 < area_ac <= MAX_AREA_AC:
            raise InputError(f"--area-ac must be > 0 acres and <= {MAX_AREA_AC:,.0f} acres; got {area_ac:g}")
        return area_ac / ACRES_PER_SQMI
    if not 0 < area_mi2 <= MAX_AREA_MI2:
        raise InputError(f"--area-mi2 must be > 0 mi2 and <= {MAX_AREA_MI2:,.0f} mi2; got {area_mi2:g}")
    return area_mi2


def _ratio(num: float, den: float) -> float | None:
    """num / den, or None when it has no finite value (den 0, or so small the ratio overflows)."""
    if not den > 0:
        return None
    r = num / den
    return r if np.isfinite(r) else None


def _require_finite(out: dict, inputs: str) -> None:
    """Refuse to print a result holding inf or NaN (JSON has neither; a table would show nonsense).

    The bounds of the hydrology core keep results finite; this is the last guard, naming the inputs.
    """
    found = non_finite_path(out)
    if found is not None:
        path, value = found
        raise InputError(f"result {path} = {value!r} is not a finite number for {inputs}: "
                         "the inputs are outside the range the method can compute")


def _cn(cn, cover, soil, table) -> float:
    if cn is not None and cover is not None:
        raise InputError("give --cn or --cover/--soil, not both")
    if cn is not None:
        return cn
    if cover is None or soil is None:
        raise InputError("give --cn, or --cover with --soil (hydrologic soil group A-D)")
    return float(hydrology.curve_number(cover, soil, table=table))


cn_options = [
    click.option("--cn", type=float, help="Curve number (0, 100]."),
    click.option("--cover", help="Cover key for a table lookup instead of --cn (e.g. open_space_good)."),
    click.option("--soil", help="Hydrologic soil group A-D, with --cover."),
    click.option("--cn-table", default="TR-55", type=click.Choice(["TR-55", "BJC 174-19.3"]), show_default=True),
]
area_options = [
    click.option("--area-ac", type=float, help="Drainage area [ac]."),
    click.option("--area-mi2", type=float, help="Drainage area [mi2]."),
]


def _apply(options):
    def deco(f):
        for opt in reversed(options):
            f = opt(f)
        return f

    return deco


@cli.command()
@click.argument("storm", default=DEFAULT_STORM)
@json_option
def storm(storm, as_json):
    """Show a design storm (a TOML file, a bundled name or a storm spec such as type2:3.2in; default the Binghamton
    1-yr 24-h)."""
    spec = load_storm(storm)
    da = spec.hyetograph()
    dt_hr = spec.dt_min / MINUTES_PER_HOUR
    cum = np.cumsum(da.values)
    i_peak = int(np.argmax(da.values))
    summary = {
        "name": spec.name,
        "depth_in": spec.depth_in,
        "distribution": spec.distribution,
        "duration_hr": spec.duration_hr,
        "dt_min": spec.dt_min,
        "location": spec.location,
        "source": spec.source,
        "peak_intensity_in_per_hr": float(da.values[i_peak] / dt_hr),
        "peak_step_end_hr": float(da["time_hr"].values[i_peak]),
    }
    if as_json:
        summary["time_hr"] = da["time_hr"].values.tolist()
        summary["precip_in"] = da.values.tolist()
        emit_json(summary)
        return
    emit_table(
        [
            ("storm", spec.name),
            ("depth", f"{spec.depth_in:g} in, NRCS Type {spec.distribution}, {spec.duration_hr:g} h at {spec.dt_min:g} min"),
            ("location", spec.location),
            ("peak intensity", f"{summary['peak_intensity_in_per_hr']:.2f} in/h in the step ending at {summary['peak_step_end_hr']:.1f} h"),
            ("source", spec.source),
        ],
        title="Design storm",
    )
    click.echo("\n hour  cumulative [in]")
    t = da["time_hr"].values
    for h in range(0, int(spec.duration_hr) + 1, 2):
        k = np.searchsorted(t, h - 1e-9)
        c = 0.0 if h == 0 else cum[min(k, cum.size - 1)]
        click.echo(f"{h:5d}  {c:8.3f}")


@cli.command()
@click.option("--precip-in", "precip_in", type=float, required=True, help="Rainfall depth P [in].")
@_apply(cn_options)
@click.option("--ia-ratio", type=float, default=0.2, show_default=True, help="Ia / S.")
@json_option
def runoff(precip_in, cn, cover, soil, cn_table, ia_ratio, as_json):
    """Runoff depth Q by the SCS curve number method (TR-55 eq. 2-1 to 2-4)."""
    cn_value = _cn(cn, cover, soil, cn_table)
    q = hydrology.runoff_depth(precip_in, cn_value, ia_ratio)
    s = hydrology.potential_retention_in(cn_value)
    out = {"precip_in": precip_in, "cn": cn_value, "ia_ratio": ia_ratio, "s_in": s,
           "ia_in": hydrology.initial_abstraction_in(cn_value, ia_ratio), "runoff_in": q}
    _require_finite(out, f"--precip-in {precip_in:g}, CN {cn_value:g}, --ia-ratio {ia_ratio:g}")
    if as_json:
        emit_json(out)
        return
    emit_table(
        [
            ("P [in]", fmt(precip_in)),
            ("CN", f"{cn_value:g}" + (f" ({cover}, soil {soil}, {cn_table})" if cover else "")),
            ("S [in]", fmt(s)),
            ("Ia [in]", fmt(out["ia_in"])),
            ("Q [in]", fmt(q)),
        ],
        title="SCS runoff (TR-55 ch. 2)",
    )


@cli.command()
@_apply(area_options)
@_apply(cn_options)
@click.option("--tc-hr", type=float, required=True, help="Time of concentration [h].")
@click.option("--precip-in", "precip_in", type=float, help="24-h rainfall [in] (default: the storm's depth).")
@click.option("--storm", "storm_ref", default=DEFAULT_STORM, show_default=True, help="Storm file, bundled name or spec (type2:3.2in).")
@click.option("--pond-swamp-pct", type=float, default=0.0, show_default=True, help="Pond and swamp area [%].")
@json_option
def peak(area_ac, area_mi2, cn, cover, soil, cn_table, tc_hr, precip_in, storm_ref, pond_swamp_pct, as_json):
    """Peak discharge by the TR-55 graphical method (chapter 4)."""
    am = _area_mi2(area_ac, area_mi2)
    cn_value = _cn(cn, cover, soil, cn_table)
    spec = load_storm(storm_ref)
    p = spec.depth_in if precip_in is None else precip_in
    q_in = hydrology.runoff_depth(p, cn_value)
    ia = hydrology.initial_abstraction_in(cn_value)
    qp = hydrology.graphical_peak_discharge(am, cn_value, p, tc_hr, spec.distribution, pond_swamp_pct)
    out = {
        "area_mi2": am,
        "cn": cn_value,
        "precip_in": p,
        "distribution": spec.distribution,
        "tc_hr": tc_hr,
        "runoff_in": q_in,
        "ia_in": ia,
        "ia_over_p": _ratio(ia, p),
        "fp": hydrology.pond_swamp_adjustment(pond_swamp_pct),
        "peak_cfs": qp,
    }
    _require_finite(out, f"area {am:g} mi2, CN {cn_value:g}, P {p:g} in, --tc-hr {tc_hr:g}")
    if as_json:
        emit_json(out)
        return
    emit_table(
        [
            ("area [mi2]", f"{am:.4f}"),
            ("CN", f"{cn_value:g}"),
            ("P [in]", f"{p:g} (Type {spec.distribution})"),
            ("Tc [h]", f"{tc_hr:g}"),
            ("Q [in]", fmt(q_in)),
            ("Ia/P", "-" if out["ia_over_p"] is None else f"{out['ia_over_p']:.3f}"),
            ("Fp", f"{out['fp']:.2f}"),
            ("qp [cfs]", fmt(qp, 2)),
        ],
        title="TR-55 graphical peak discharge (ch. 4)",
    )


@cli.command()
@_apply(area_options)
@_apply(cn_options)
@click.option("--tc-hr", type=float, required=True, help="Time of concentration [h].")
@click.option("--storm", "storm_ref", default=DEFAULT_STORM, show_default=True, help="Storm file, bundled name or spec (type2:3.2in).")
@click.option("--peak-rate-factor", type=float, default=484.0, show_default=True)
@json_option
def hydrograph(area_ac, area_mi2, cn, cover, soil, cn_table, tc_hr, storm_ref, peak_rate_factor, as_json):
    """Runoff hydrograph by the SCS unit hydrograph (NEH 630 ch. 16) on the CN excess."""
    am = _area_mi2(area_ac, area_mi2)
    cn_value = _cn(cn, cover, soil, cn_table)
    spec = load_storm(storm_ref)
    rain = spec.hyetograph()
    q = hydrology.unit_hydrograph_runoff(am, cn_value, tc_hr, rain, peak_rate_factor)
    dt_s = q.attrs["dt_hr"] * SECONDS_PER_HOUR
    volume_cf = float(q.sum()) * dt_s
    i_peak = int(np.argmax(q.values))
    out = {
        "storm": spec.name,
        "area_mi2": am,
        "cn": cn_value,
        "tc_hr": tc_hr,
        "runoff_in": hydrology.runoff_depth(spec.depth_in, cn_value),
        "peak_cfs": float(q.values[i_peak]),
        "time_of_peak_hr": float(q["time_hr"].values[i_peak]),
        "volume_cf": volume_cf,
        "volume_gal": volume_cf * GALLONS_PER_CUBIC_FOOT,
    }
    _require_finite(out, f"area {am:g} mi2, CN {cn_value:g}, --tc-hr {tc_hr:g}, storm {spec.name}")
    if as_json:
        out["time_hr"] = q["time_hr"].values.tolist()
        out["flow_cfs"] = q.values.tolist()
        emit_json(out)
        return
    emit_table(
        [
            ("storm", spec.name),
            ("area [mi2]", f"{am:.4f}"),
            ("CN / Tc", f"{cn_value:g} / {tc_hr:g} h"),
            ("runoff [in]", fmt(out["runoff_in"])),
            ("peak [cfs]", f"{out['peak_cfs']:.2f} at {out['time_of_peak_hr']:.1f} h"),
            ("volume [ft3]", fmt(volume_cf, 0)),
            ("volume check [in]", fmt(volume_cf / (am * CUBIC_FEET_PER_SQMI_INCH))),
        ],
        title="SCS unit hydrograph runoff (NEH 630 ch. 16)",
    )
