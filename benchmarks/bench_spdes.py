"""Speed of the SPDES flow check (issue 5): period averages and the § 18-37(b) check on a long record.

A 30-year daily record (10,958 days) on each basis, against pandas (``resample("MS").mean()`` and
``rolling("30D").mean()``) as the reference. Run:
``.venv/bin/python -m pytest benchmarks/bench_spdes.py -o python_files='bench_*.py' --benchmark-only``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from capacitysim.rules import spdes

START = np.datetime64("1995-01-01")
N_DAYS = 10_958


@pytest.fixture(scope="module")
def record():
    rng = np.random.default_rng(5)
    d = START + np.arange(N_DAYS).astype("timedelta64[D]")
    return d, rng.gamma(9.0, 0.05, N_DAYS)


@pytest.mark.parametrize("basis", spdes.BASES)
def test_period_averages(benchmark, record, basis):
    d, q = record
    p = benchmark(spdes.period_averages, d, q, basis)
    assert len(p) > 0


def test_check_connection(benchmark, record):
    d, q = record
    p = spdes.period_averages(d, q, "30day")
    v = benchmark(spdes.check_connection, p, 0.5, d[-1], 25_000.0)
    assert len(v.window) == 366  # 2024 is a leap year


def test_pandas_monthly_reference(benchmark, record):
    d, q = record
    s = pd.Series(q, index=pd.DatetimeIndex(d.astype("datetime64[ns]")))
    benchmark(lambda: s.resample("MS").mean())


def test_pandas_rolling_30d_reference(benchmark, record):
    d, q = record
    s = pd.Series(q, index=pd.DatetimeIndex(d.astype("datetime64[ns]")))
    benchmark(lambda: s.rolling("30D").mean())


@pytest.mark.parametrize("watershed", [True, False])
def test_workflow_document(benchmark, record, watershed):
    """The whole check of a 30-year record to its JSON document (issue 14: watershed or permitted-flow headroom,
    conditions, policies, record age), as of the record's last day."""
    from capacitysim.io.plant_flows import FlowRecord
    from capacitysim.workflows.spdes import check_daily

    d, q = record
    rec = FlowRecord(pd.Series(q, index=pd.DatetimeIndex(d.astype("datetime64[ns]"), name="date"), name="flow_mgd"))

    def run():
        return check_daily(rec, 0.5, "30day", str(d[-1]), [25_000.0], watershed=watershed).to_dict()

    doc = benchmark(run)
    assert doc["watershed"] is watershed and doc["warnings"] == [] and doc["lookback_window"]["periods"] == 366
