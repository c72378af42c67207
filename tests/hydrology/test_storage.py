"""TR-55 Chapter 6 storage ratio (Figure 6-1, Table F-2)."""

from __future__ import annotations

import numpy as np
import pytest

from capacitysim.errors import CapacitysimWarning, InputError
from capacitysim.hydrology import detention_storage_ratio


def test_example_6_1():
    """TR-55 Example 6-1 (as reproduced): qo/qi = 180/360 = 0.5 on Type II gives Vs/Vr = 0.28."""
    assert detention_storage_ratio(0.5, "II") == pytest.approx(0.28, abs=0.005)


def test_table_f2_polynomials():
    x = 0.3
    assert detention_storage_ratio(x, "I") == pytest.approx(0.660 - 1.76 * x + 1.96 * x**2 - 0.730 * x**3)
    assert detention_storage_ratio(x, "IA") == detention_storage_ratio(x, "I")
    assert detention_storage_ratio(x, "III") == detention_storage_ratio(x, "II")


def test_less_outflow_needs_more_storage():
    r = detention_storage_ratio(np.linspace(0.1, 0.8, 30))
    assert np.all(np.diff(r) < 0)


def test_outside_the_figure_is_clamped_with_a_warning():
    with pytest.warns(CapacitysimWarning, match="0.1-0.8"):
        assert detention_storage_ratio(0.95) == detention_storage_ratio(0.8)
    with pytest.raises(InputError, match="qo_over_qi"):
        detention_storage_ratio(1.2)
