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


def test_above_the_figure_is_clamped_with_a_warning_on_the_safe_side():
    with pytest.warns(CapacitysimWarning, match="above 0.8"):
        clamped = detention_storage_ratio(0.95)
    assert clamped == detention_storage_ratio(0.8)
    # The cubic continued to 0.95 would give less storage than the clamp: clamping is conservative.
    assert 0.682 - 1.43 * 0.95 + 1.64 * 0.95**2 - 0.804 * 0.95**3 < clamped
    with pytest.raises(InputError, match=r"qo_over_qi must be in \[0.1, 1\), got 1.2"):
        detention_storage_ratio(1.2)


def test_below_the_figure_is_refused_not_clamped():
    """Clamping qo/qi = 0.05 up to 0.1 would understate the storage (Vs/Vr falls with qo/qi)."""
    assert detention_storage_ratio(0.1) > detention_storage_ratio(0.2)
    with pytest.raises(InputError, match=r"qo_over_qi must be in \[0.1, 1\), got 0.05"):
        detention_storage_ratio(0.05)
    with pytest.raises(InputError, match="qo_over_qi must not be NaN"):
        detention_storage_ratio(float("nan"))
    with pytest.raises(InputError, match="distribution must be one of"):
        detention_storage_ratio(0.5, "IV")
