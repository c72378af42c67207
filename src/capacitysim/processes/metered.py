"""Measured credits as a process (``capacitysim credits meter``, :func:`capacitysim.metered_credit`, the service's
``metered-credit``): :func:`capacitysim.workflows.metered_credit.metered_credit` on pre and post meter records."""

from __future__ import annotations

from capacitysim.processes.base import MAX_TEXT_CHARS, Input, NullProgress, Process


def _record(name: str, what: str) -> Input:
    return Input(name, {"type": "string", "maxLength": MAX_TEXT_CHARS,
                        "description": f"{what}: a CSV or logger export (\"upload:<sha256>\" in the service)."},
                 required=True, cli=f"--{name.replace('_', '-')}", file="upload")


def _choices(values, default, desc) -> dict:
    return {"type": "string", "enum": list(values), "description": desc, **({"default": default} if default else {})}


class MeteredCredit(Process):
    id = "metered-credit"
    title = "Measured I/I credit"
    description = ("The I/I a rehabilitation removed, from flow-meter and rain-gauge records of the remediated "
                   "sub-basin before and after the work: flow decomposition (BWF, GWI, RDII), RTK unit hydrographs "
                   "fitted to the wet-weather events, and the credit on the program's design storm (2.1 in, 1-year "
                   "24-hour Type II) with its bootstrap interval; the lower bound is claimed (BJC Table 174-19.1: "
                   "metered by a NYS licensed PE).")
    command = "capacitysim credits meter"
    kind = "metered-credit"
    stages = (("started", 0), ("inputs-checked", 5), ("pre", 10), ("post", 30), ("fit", 50), ("credited", 90),
              ("report-written", 95))
    inputs = (
        _record("pre_flow", "Flow-meter record before the rehabilitation"),
        _record("pre_rain", "Rain-gauge record of the pre period"),
        _record("post_flow", "Flow-meter record after the rehabilitation"),
        _record("post_rain", "Rain-gauge record of the post period"),
        Input("area_ac", {"type": "number", "exclusiveMinimum": 0, "maximum": 1e6,
                          "description": "The metered sub-basin's sewer area [ac]."}, required=True, cli="--area-ac"),
        Input("tz", {"type": "string", "minLength": 1, "maxLength": 64, "default": "America/New_York",
                     "description": "Time zone of timestamps written without an offset (IANA name)."}, cli="--tz"),
        Input("flow_units", _choices(("gpd", "MGD", "gpm", "cfs", "L/s"), None,
                                     "Flow units when the file does not say them."), cli="--flow-units"),
        Input("rain_units", _choices(("in", "mm"), None, "Rain units when the file does not say them."),
              cli="--rain-units"),
        Input("basis", _choices(("peak", "volume"), "peak", "Policy metered_credit_basis."), cli="--basis"),
        Input("claim", _choices(("lower", "point"), "lower", "Policy metered_credit_claim: the interval's lower "
                                "bound, or the point value (the record says which)."), cli="--claim"),
        Input("level", {"type": "number", "minimum": 0.5, "maximum": 0.99, "default": 0.9,
                        "description": "Two-sided level of the interval (policy metered_credit_level)."}, cli="--level"),
        Input("n_boot", {"type": "integer", "minimum": 20, "maximum": 2000, "default": 200,
                         "description": "Bootstrap resamples of the interval."}, cli="--n-boot"),
        Input("seed", {"type": "integer", "minimum": 0, "maximum": 2**32 - 1, "default": 0,
                       "description": "Seed of the bootstrap (kept in the record)."}, cli="--seed"),
        Input("pe_name", {"type": "string", "maxLength": 200, "description": "The NYS licensed PE."}, cli="--pe-name"),
        Input("pe_license", {"type": "string", "maxLength": 40, "description": "The PE's NYS license number."},
              cli="--pe-license"),
        Input("dry_include", {"type": "array", "maxItems": 400, "items": {"type": "string", "format": "date"},
                              "description": "Days the PE counts as dry (YYYY-MM-DD)."}, cli="--dry-include"),
        Input("dry_exclude", {"type": "array", "maxItems": 400, "items": {"type": "string", "format": "date"},
                              "description": "Days the PE does not count as dry (YYYY-MM-DD)."}, cli="--dry-exclude"),
    )

    def run(self, inputs, progress=None, work_dir=None):
        from capacitysim.workflows.metered_credit import metered_credit

        progress = progress or NullProgress()
        progress.stage("inputs-checked", f"sub-basin of {inputs.area_ac:g} ac")
        names = {"pre": "pre period: records read and decomposed", "post": "post period: records read and decomposed",
                 "fit": "RTK sets fitted; the bootstrap interval"}
        result = metered_credit(inputs.pre_flow, inputs.pre_rain, inputs.post_flow, inputs.post_rain,
                                area_ac=inputs.area_ac, tz=inputs.tz or "America/New_York",
                                flow_units=inputs.flow_units, rain_units=inputs.rain_units, basis=inputs.basis,
                                claim=inputs.claim, level=inputs.level, n_boot=inputs.n_boot, seed=inputs.seed or 0,
                                pe_name=inputs.pe_name, pe_license=inputs.pe_license,
                                dry_include=inputs.dry_include, dry_exclude=inputs.dry_exclude,
                                progress=lambda stage: progress.stage(stage, names[stage]))
        c = result.credit
        progress.stage("credited", "no credit: see the warnings" if c is None else
                       f"{c.claimed_gpd:,.0f} gpd claimed ({c.claim} bound of {c.lower_gpd:,.0f} to {c.upper_gpd:,.0f})")
        return result

    def report(self, result, path, doc=None):
        from capacitysim.report.metered import write_report

        write_report(result, path)
        return path
