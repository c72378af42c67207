"""The run before a change, repeated with a finer routing step: the model's numerical uncertainty (issue 26, class 5).

SWMM's dynamic wave solution is deterministic: the same input gives bit-identical results, so repeating a run
measures nothing. Halving the time step is the classic measure of a discretisation's uncertainty (Roache, P. J.
(1997), Quantification of uncertainty in computational fluid dynamics, Annu. Rev. Fluid Mech. 29, 123-160: the
grid convergence index, here on the time step; ASME V&V 20-2009). Measured on the bundled models under a 6 in
storm, the changes a 5-200 gpd connection made past the tolerances were all within three times the difference
between the run and its step-halved twin; see :func:`capacitysim.rules.capacity.separate_noise`.
"""

from __future__ import annotations

from pathlib import Path

from capacitysim.errors import InputError
from capacitysim.network.inp_text import engine_lines, engine_options, read_engine_lines
from capacitysim.network.model import DEFAULT_ROUTING_STEP_S, engine_double, model_number, parse_clock_hr
from capacitysim.units import SECONDS_PER_HOUR

#: The refinement ratio r of the routing step (half the step).
STEP_REFINEMENT = 0.5
#: The routing steps of the noise runs, as ratios of the model's: half (r = 2, the classic two-grid study) and
#: three quarters, a second sample of the solution's sensitivity to its step. One sample alone was measured to
#: under-state the noise (a 20 gpd connection on the 500-node model under a 6 in storm moved a node it reaches
#: only by backwater 0.31 ft, 2.7 x the half-step difference there).
STEP_RATIOS = (STEP_REFINEMENT, 0.75)


def routing_step_s(text: str) -> float:
    """ROUTING_STEP of a model's text as the engine reads it [s] (decimal seconds or H:MM:SS; SWMM's 20 s
    default when absent; SWMM 5.2 User's Manual, Appendix D, [OPTIONS])."""
    tok = engine_options(text).get("ROUTING_STEP")
    if tok is None:
        return DEFAULT_ROUTING_STEP_S
    # the engine: getDouble (C strtod: hexadecimal too), else a clock time (input.c, readOption)
    v = engine_double(tok)
    if v is None:
        v = parse_clock_hr(tok) * SECONDS_PER_HOUR if ":" in tok else model_number(tok, "ROUTING_STEP")
    if not v > 0:
        raise InputError(f"ROUTING_STEP {tok!r} must be a time > 0")
    return v


def write_step_refined(src: str | Path, dst: str | Path, ratio: float = STEP_REFINEMENT) -> dict:
    """Copy a model's text with its routing step times ``ratio``: a ``ROUTING_STEP`` line after its last option.

    The engine reads every [OPTIONS] line and the last one of a keyword wins (``input.c``, first pass), so
    one added line sets the step whatever the file says; nothing else changes. ``dst`` is written beside
    ``src`` by the caller, so relative file names resolve the same.

    Returns
    -------
    dict
        ``routing_step_s`` (the model's) and ``refined_step_s`` [s].
    """
    src, dst = Path(src), Path(dst)
    raw = src.read_bytes().decode("latin-1")
    step = routing_step_s(raw)
    new = step * ratio
    lines = engine_lines(raw)
    last = max((ln.number for ln in read_engine_lines(raw) if ln.option), default=None)
    nl = "\r\n" if "\r\n" in raw else "\n"
    added = f"ROUTING_STEP {new!r}"
    head, tail = ("".join(lines), "") if last is None else ("".join(lines[:last]), "".join(lines[last:]))
    if head and not head.endswith("\n"):
        head += nl
    if last is None:
        added = f"{nl}[OPTIONS]{nl}{added}"
    dst.write_bytes((head + added + nl + tail).encode("latin-1"))
    return {"routing_step_s": step, "refined_step_s": new}
