"""Shapes that do not broadcast are a user error naming each field and its shape, not a numpy ValueError."""

from __future__ import annotations

import numpy as np
import pytest

from capacitysim.errors import InputError
from capacitysim import hydrology as h

TWO = np.array([1.0, 2.0])
THREE = np.array([60.0, 70.0, 80.0])


@pytest.mark.parametrize(
    "call, fields",
    [
        (lambda: h.runoff_depth(TWO, THREE), ["precip_in has shape (2,)", "cn has shape (3,)"]),
        (lambda: h.runoff_depth(TWO, THREE, kernel="numpy"), ["precip_in has shape (2,)", "cn has shape (3,)"]),
        (lambda: h.runoff_depth(2.0, THREE, ia_ratio=np.array([0.2, 0.05])), ["ia_ratio has shape (2,)"]),
        (lambda: h.composite_cn(THREE, TWO), ["cn has shape (3,)", "area has shape (2,)"]),
        (lambda: h.impervious_cn(THREE, np.array([10.0, 20.0])), ["pervious_cn has shape (3,)", "impervious_pct has shape (2,)"]),
        (lambda: h.curve_number(["impervious", "woods_good"], ["A", "B", "C"]), ["cover has shape (2,)", "soil_group has shape (3,)"]),
        (lambda: h.sheet_flow_time(np.array([0.1, 0.2]), THREE, 3.0, 0.01), ["n has shape (2,)", "length_ft has shape (3,)"]),
        (lambda: h.shallow_flow_time(THREE, TWO / 100, True), ["length_ft has shape (3,)", "slope has shape (2,)"]),
        (lambda: h.channel_flow_time(THREE, 0.03, TWO, 5.0, 0.01), ["length_ft has shape (3,)", "area_ft2 has shape (2,)"]),
        (lambda: h.time_of_concentration(TWO, THREE), ["travel_times_hr[0] has shape (2,)", "travel_times_hr[1] has shape (3,)"]),
        (lambda: h.graphical_peak_discharge(TWO, THREE, 4.0, 1.0), ["area_mi2 has shape (2,)", "cn has shape (3,)"]),
        (lambda: h.unit_peak_discharge_csm_in(TWO, np.array([0.1, 0.2, 0.3])), ["tc_hr has shape (2,)", "ia_over_p has shape (3,)"]),
        (lambda: h.unit_hydrograph_runoff(TWO, THREE, 1.0, h.design_storm(2.0)), ["area_mi2 has shape (2,)", "cn has shape (3,)"]),
    ],
)
def test_shapes_that_do_not_broadcast_are_named(call, fields):
    with pytest.raises(InputError, match="do not broadcast") as err:
        call()
    for f in fields:
        assert f in str(err.value)
