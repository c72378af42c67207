"""Orifice and weir equations against hand calculations."""

import math

import numpy as np
import pytest

from capacitysim.errors import InputError
from capacitysim.hydraulics import (
    circular_area_sf,
    orifice_diameter_for_flow_in,
    orifice_flow_cfs,
    rectangular_weir_flow_cfs,
    v_notch_weir_flow_cfs,
)

G = 32.174


def test_free_orifice_head_to_centroid_hand_calc():
    # 6-in orifice, invert 0, stage 4.0 ft: centroid 0.25 ft, H = 3.75 ft
    # A = pi 0.5^2 / 4 = 0.19635 ft2; Q = 0.61 * 0.19635 * sqrt(2 * 32.174 * 3.75) = 1.8606 cfs
    hand = 0.61 * 0.19634954 * math.sqrt(2 * 32.174 * 3.75)
    assert hand == pytest.approx(1.8606, abs=1e-4)
    assert orifice_flow_cfs(4.0, 6.0) == pytest.approx(hand, rel=1e-7)
    # invert 1.0 ft: H = 4.0 - 1.25 = 2.75 ft
    assert orifice_flow_cfs(4.0, 6.0, invert_ft=1.0) == pytest.approx(0.61 * 0.19634954 * math.sqrt(2 * G * 2.75), rel=1e-7)


def test_submerged_orifice_uses_level_difference():
    # tailwater 2.0 ft above the centroid (0.25): H = 4.0 - 2.0 = 2.0 ft
    q = orifice_flow_cfs(4.0, 6.0, tailwater_ft=2.0)
    assert q == pytest.approx(0.61 * 0.19634954 * math.sqrt(2 * G * 2.0), rel=1e-7)
    # tailwater below the centroid: free flow
    assert orifice_flow_cfs(4.0, 6.0, tailwater_ft=0.1) == pytest.approx(orifice_flow_cfs(4.0, 6.0))
    # tailwater above the stage: no reverse flow
    assert orifice_flow_cfs(1.0, 6.0, tailwater_ft=2.0) == 0.0


def test_partly_submerged_orifice_is_continuous_weir_transition():
    d_ft = 0.5
    area = math.pi * d_ft**2 / 4
    # at the crown both forms give Cd A sqrt(2 g D/2)
    crown = orifice_flow_cfs(d_ft, 6.0)
    assert crown == pytest.approx(0.61 * area * math.sqrt(2 * G * d_ft / 2), rel=1e-9)
    assert orifice_flow_cfs(d_ft - 1e-9, 6.0) == pytest.approx(crown, rel=1e-6)
    # half submerged: f = 0.5 -> crown flow x 0.5^1.5
    assert orifice_flow_cfs(0.25, 6.0) == pytest.approx(crown * 0.5**1.5, rel=1e-9)
    assert orifice_flow_cfs(0.0, 6.0) == 0.0
    assert orifice_flow_cfs(-1.0, 6.0) == 0.0


def test_orifice_monotone_and_vectorized():
    h = np.linspace(0, 10, 1001)
    q = orifice_flow_cfs(h[None, :], np.array([2.0, 4.0, 8.0])[:, None])
    assert q.shape == (3, 1001)
    assert np.all(np.diff(q, axis=1) >= 0)
    assert np.all(np.diff(q, axis=0) >= 0)


def test_orifice_diameter_inverse():
    d = orifice_diameter_for_flow_in(1.8605566, 3.75)
    assert d == pytest.approx(6.0, rel=1e-5)
    assert circular_area_sf(12.0) == pytest.approx(math.pi / 4)


def test_orifice_rejects_bad_cd():
    with pytest.raises(InputError, match="cd"):
        orifice_flow_cfs(1.0, 4.0, cd=0.0)


def test_rectangular_weir_francis_hand_calc():
    # L = 4 ft, H = 0.5 ft: Q = 3.33 * 4 * 0.5^1.5 = 4.7093 cfs
    assert rectangular_weir_flow_cfs(0.5, 4.0) == pytest.approx(3.33 * 4 * 0.5**1.5, rel=1e-12)
    assert rectangular_weir_flow_cfs(0.5, 4.0) == pytest.approx(4.7093, abs=1e-4)
    # two end contractions: L_eff = 4 - 0.2 * 0.5 = 3.9 ft
    assert rectangular_weir_flow_cfs(0.5, 4.0, contractions=2) == pytest.approx(3.33 * 3.9 * 0.5**1.5, rel=1e-12)
    assert rectangular_weir_flow_cfs(-0.2, 4.0) == 0.0


def test_villemonte_submergence():
    free = rectangular_weir_flow_cfs(1.0, 2.0)
    sub = rectangular_weir_flow_cfs(1.0, 2.0, tailwater_head_ft=0.5)
    assert sub == pytest.approx(free * (1 - 0.5**1.5) ** 0.385, rel=1e-12)


def test_v_notch_hand_calc():
    # 90 degrees, H = 0.8 ft: Q = 2.5 * 1 * 0.8^2.5 = 1.4311 cfs
    assert v_notch_weir_flow_cfs(0.8) == pytest.approx(2.5 * 0.8**2.5, rel=1e-12)
    # 60 degrees: tan 30 = 0.57735
    assert v_notch_weir_flow_cfs(0.8, 60.0) == pytest.approx(2.5 * math.tan(math.pi / 6) * 0.8**2.5, rel=1e-12)
