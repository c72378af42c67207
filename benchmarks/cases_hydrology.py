"""Benchmark cases of the hydrology core (TR-55, NEH 630 ch. 16): reference values and hot paths."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import xarray as xr

from capacitysim import hydrology as h
from capacitysim.benchmarking import reference_case, speed_case
from capacitysim.hydrology.unit_hydrograph import time_to_peak_hr
from capacitysim.units import CUBIC_FEET_PER_SQMI_INCH, SECONDS_PER_HOUR

_TABLE_2_1 = Path(__file__).resolve().parents[1] / "tests" / "data" / "tr55_table_2_1.csv"


@reference_case(
    "tr55.table_2_1.max_error",
    expected={"max_abs_error_in": 0.0, "cells_over_half_digit": 1.0},
    tolerance={"max_abs_error_in": 0.015, "cells_over_half_digit": 0.0},
    source="TR-55 (1986) Table 2-1, all 286 cells (iemiscdata transcription); one known cell (P 7.0, CN 50) prints 1.68 vs 1.667",
)
def _table_2_1():
    with open(_TABLE_2_1) as fh:
        rows = list(csv.DictReader(line for line in fh if not line.startswith("#")))
    p = np.array([float(r["precip_in"]) for r in rows])
    cn = np.array([float(r["cn"]) for r in rows])
    q = np.array([float(r["runoff_in"]) for r in rows])
    err = np.abs(h.runoff_depth(p, cn) - q)
    return {"max_abs_error_in": float(err.max()), "cells_over_half_digit": float(np.count_nonzero(err > 0.005 + 1e-9))}


@reference_case(
    "tr55.example_3_1.tc",
    expected={"sheet_hr": 0.30, "shallow_hr": 0.24, "channel_hr": 0.99, "tc_hr": 1.53},
    tolerance={"sheet_hr": 0.005, "shallow_hr": 0.005, "channel_hr": 0.005, "tc_hr": 0.005},
    source="TR-55 (1986) Example 3-1, Worksheet 3 (Figure 3-2)",
)
def _example_3_1():
    sheet = h.sheet_flow_time(0.24, 100.0, 3.6, 0.01)
    shallow = h.shallow_flow_time(1400.0, 0.01, False)
    channel = h.channel_flow_time(7300.0, 0.05, 27.0, 28.2, 0.005)
    return {"sheet_hr": sheet, "shallow_hr": shallow, "channel_hr": channel, "tc_hr": sheet + shallow + channel}


@reference_case(
    "tr55.example_4_1.peak",
    expected={"runoff_in": 3.28, "qp_cfs": 345.0},
    tolerance={"runoff_in": 0.005, "qp_cfs": 3.45},
    source="TR-55 (1986) Example 4-1, Worksheet 4 (Heavenly Acres: 0.39 mi2, CN 75, Tc 1.53 h, 6.0 in Type II)",
)
def _example_4_1():
    return {"runoff_in": h.runoff_depth(6.0, 75), "qp_cfs": h.graphical_peak_discharge(0.39, 75, 6.0, 1.53)}


@reference_case(
    "tr55.example_6_1.storage_ratio",
    expected={"vs_over_vr": 0.28},
    tolerance={"vs_over_vr": 0.005},
    source="TR-55 (1986) Example 6-1 / Figure 6-1 (qo/qi 0.5, Type II)",
)
def _example_6_1():
    return {"vs_over_vr": h.detention_storage_ratio(0.5, "II")}


@reference_case(
    "neh630.uh.volume_and_peak",
    expected={"volume_ratio": 1.0, "peak_over_484AQ_Tp": 1.0},
    tolerance={"volume_ratio": 1e-9, "peak_over_484AQ_Tp": 0.01},
    source="NEH 630 ch. 16: unit volume conserved; qp = 484 A Q / Tp for a short burst of excess",
)
def _uh_properties():
    dt = 0.01
    rain = np.zeros(400)
    rain[0] = 1.0
    storm = xr.DataArray(rain, dims=("time_hr",), coords={"time_hr": dt * np.arange(1, 401)})
    flow = h.unit_hydrograph_runoff(2.0, 100.0, 1.0, storm)
    vol = float(flow.sum()) * dt * SECONDS_PER_HOUR / (2.0 * CUBIC_FEET_PER_SQMI_INCH)
    return {"volume_ratio": vol, "peak_over_484AQ_Tp": float(flow.max()) / (484 * 2.0 / time_to_peak_hr(1.0, dt))}


@reference_case(
    "binghamton.storm_runoff",
    expected={"impervious_runoff_in": 1.8735, "storm_depth_in": 2.1},
    tolerance={"impervious_runoff_in": 1e-4, "storm_depth_in": 1e-12},
    source="BJC I/I offset program Table 174-19.2 (2.1 in, Type II) with Table 174-19.3 CN 98; TR-55 eq. 2-3",
)
def _binghamton():
    cn = h.curve_number("impervious", "B", table="BJC 174-19.3")
    return {"impervious_runoff_in": h.runoff_depth(2.1, cn), "storm_depth_in": float(h.design_storm(2.1, "II").sum())}


# Issue 30: a kernel that streams memory and the np.sort reference (compute-bound, in cache) do not slow alike
# when another process shares the machine, so their ratio moved with the load. Each hydrology case is now timed
# against a reference of its own kind, on one thread as the case runs: the same formula in plain numpy on the same
# cells (runoff), and the FFT convolution of the same shape that dominates the unit hydrograph (scipy.fft, one
# worker). The measured pair (quiet, then two busy processes) is in docs/workflows/bench.md, "Load regimes".


@speed_case("hydrology.runoff_depth.1e6", description="runoff_depth on 10^6 cells (fused kernel)", basis="cpu", version=2)
def _speed_runoff():
    from capacitysim.benchmarking import Paired

    rng = np.random.default_rng(1)
    p, cn = rng.uniform(0, 8, 1_000_000), rng.uniform(40, 98, 1_000_000)
    return Paired(lambda: h.runoff_depth(p, cn), lambda: h.runoff_depth(p, cn, kernel="numpy"),
                  "the same 10^6 cells by the pure-numpy kernel (runoff_depth kernel='numpy', one thread)")


def _uh_inputs():
    rng = np.random.default_rng(3)
    storm = h.design_storm(2.1, "II", dt_min=6.0)
    return (rng.uniform(0.001, 0.5, 10_000), rng.uniform(40, 98, 10_000), rng.uniform(0.1, 10.0, 10_000)), storm


@speed_case("hydrology.unit_hydrograph.1e4", description="unit_hydrograph_runoff, 10^4 subcatchments, 24 h at 6 min",
            basis="cpu", version=2)
def _speed_uh():
    import scipy.fft

    from capacitysim.benchmarking import Paired

    args, storm = _uh_inputs()
    flow = h.unit_hydrograph_runoff(*args, storm)  # its output's shape sets the reference's
    n_fft = scipy.fft.next_fast_len(flow.sizes["time_hr"], real=True)
    x = np.random.default_rng(4).random((flow.sizes["subcatchment"], n_fft))

    def fft_round_trip():
        return scipy.fft.irfft(scipy.fft.rfft(x, axis=1) * scipy.fft.rfft(x, axis=1), n_fft, axis=1)

    return Paired(lambda: h.unit_hydrograph_runoff(*args, storm), fft_round_trip,
                  f"the FFT convolution of its shape ({x.shape[0]:,} x {n_fft:,}, scipy.fft, one worker)")
