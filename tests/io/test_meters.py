"""Flow-meter and rain-gauge readers (issue 29, item 1): logger formats, units, time zones and DST, the
regular grid with gaps as NaN, and the quality report's flags (flat lines, spikes, negatives, clock drift)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capacitysim.errors import DataFileError, InputError
from capacitysim.io.meters import (
    FLAT_LINE_HOURS,
    MeterRecord,
    RainRecord,
    flag_mask,
    quality_report,
    rain_on_grid,
    read_flow_record,
    read_rain_record,
)


def write(tmp_path: Path, text: str, name: str = "meter.csv") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def utc(*texts) -> np.ndarray:
    return np.array(texts, dtype="datetime64[s]")


# ---------------------------------------------------------------------------------------------
# Formats
# ---------------------------------------------------------------------------------------------


def test_plain_csv_iso_naive_in_utc(tmp_path):
    p = write(tmp_path, "timestamp,flow_gpd\n2024-01-01 00:00,1000\n2024-01-01T00:15:00,1100\n2024-01-01 00:30,1200\n")
    rec = read_flow_record(p, tz="UTC")
    assert isinstance(rec, MeterRecord)
    assert rec.time_utc.dtype == np.dtype("datetime64[s]") and rec.time_local.dtype == np.dtype("datetime64[s]")
    np.testing.assert_array_equal(rec.time_utc, utc("2024-01-01T00:00", "2024-01-01T00:15", "2024-01-01T00:30"))
    np.testing.assert_array_equal(rec.time_local, rec.time_utc)
    assert rec.step_s == 900 and rec.flow_gpd.dtype == np.float64
    np.testing.assert_array_equal(rec.flow_gpd, [1000.0, 1100.0, 1200.0])
    assert rec.depth_in is None and rec.velocity_fps is None
    assert rec.source.file == "meter.csv" and rec.source.sha256 == hashlib.sha256(p.read_bytes()).hexdigest()
    assert rec.tz == "UTC"
    assert rec.quality["flow"]["reading"]["units"]["flow"] == {"unit": "gpd", "from": "column name"}


def test_iso_with_offsets_is_converted_and_local_time_follows_tz(tmp_path):
    p = write(tmp_path, "Time,Flow (MGD)\n2024-07-01T00:00:00-04:00,0.5\n2024-07-01T00:05:00-04:00,0.6\n"
                        "2024-07-01T04:10:00Z,0.7\n")
    rec = read_flow_record(p, tz="America/New_York")
    np.testing.assert_array_equal(rec.time_utc, utc("2024-07-01T04:00", "2024-07-01T04:05", "2024-07-01T04:10"))
    np.testing.assert_array_equal(rec.time_local, utc("2024-07-01T00:00", "2024-07-01T00:05", "2024-07-01T00:10"))
    assert rec.step_s == 300
    # without tz: one offset in the file is the local zone
    q = write(tmp_path, "Time,Flow (MGD)\n2024-01-01T00:00-05:00,0.5\n2024-01-01T00:05-05:00,0.6\n", "b.csv")
    rec = read_flow_record(q)
    assert rec.tz == "UTC-05:00"
    np.testing.assert_array_equal(rec.time_local, utc("2024-01-01T00:00", "2024-01-01T00:05"))
    np.testing.assert_array_equal(rec.time_utc, utc("2024-01-01T05:00", "2024-01-01T05:05"))


def test_us_dates_with_am_pm_and_seconds(tmp_path):
    p = write(tmp_path, "Date Time,Flow (gpm)\n1/5/2024 11:45:00 AM,10\n1/5/2024 12:00:00 PM,11\n"
                        "1/5/2024 12:15:00 PM,12\n1/5/2024 12:30:00 PM,13\n")
    rec = read_flow_record(p, tz="UTC")
    np.testing.assert_array_equal(rec.time_utc[[0, -1]], utc("2024-01-05T11:45", "2024-01-05T12:30"))
    np.testing.assert_array_equal(rec.flow_gpd, np.array([10.0, 11, 12, 13]) * 1440.0)  # gpm -> gpd


def test_separate_date_and_time_columns_tab_separated_with_metadata(tmp_path):
    text = ("ISCO Flowlink export\nSite\tMH-7\nInterval\t5 min\n\n"
            "Date\tTime\tLevel (ft)\tFlow (cfs)\n"
            "01/02/2024\t23:50\t0.50\t0.10\n01/02/2024\t23:55\t0.51\t0.11\n01/03/2024\t00:00\t0.52\t0.12\n")
    rec = read_flow_record(write(tmp_path, text, "isco.txt"), tz="UTC")
    rd = rec.quality["flow"]["reading"]
    assert rd["header_line"] == 5 and rd["delimiter"] == "tab" and rd["time_columns"] == ["Date", "Time"]
    np.testing.assert_array_equal(rec.time_utc, utc("2024-01-02T23:50", "2024-01-02T23:55", "2024-01-03T00:00"))
    np.testing.assert_allclose(rec.depth_in, [6.0, 6.12, 6.24])
    np.testing.assert_allclose(rec.flow_gpd, np.array([0.10, 0.11, 0.12]) * 646316.88311688, rtol=1e-9)


def test_timestamp_in_year_month_day_hour_minute_columns(tmp_path):
    """SSOAP-style exports (a real record of this layout, 15-min Flow_mgd with Velocity_fps and Depth_in, was read
    with it): the parts composed in order, whatever the columns' order; the hour and minute are no values."""
    text = ("Month,Day,Year,Hour,Minute,Flow_mgd,Velocity_fps,Depth_in\n"
            "2,16,2008,0,0,1.259,2.33,7.11\n2,16,2008,0,15,1.105,2.08,7.04\n2,16,2008,0,30,1.078,2.05,6.98\n")
    rec = read_flow_record(write(tmp_path, text), tz="UTC")
    rd = rec.quality["flow"]["reading"]
    assert rd["time_columns"] == ["Year", "Month", "Day", "Hour", "Minute"]
    assert rd["columns"] == {"flow": "Flow_mgd", "depth": "Depth_in", "velocity": "Velocity_fps"}
    np.testing.assert_array_equal(rec.time_utc, utc("2008-02-16T00:00", "2008-02-16T00:15", "2008-02-16T00:30"))
    np.testing.assert_allclose(rec.flow_gpd, [1_259_000.0, 1_105_000.0, 1_078_000.0])
    rain = read_rain_record(write(tmp_path, "Month,Day,Year,Hour,Minute,Rain (inch)\n2,16,2008,21,15,0\n"
                                            "2,16,2008,21,30,0.02\n", "rain.csv"), tz="America/New_York")
    np.testing.assert_array_equal(rain.time_utc, utc("2008-02-17T02:15", "2008-02-17T02:30"))
    with pytest.raises(DataFileError, match="line 3.*not a timestamp"):
        read_flow_record(write(tmp_path, text.replace("2,16,2008,0,15,", "2,16,2008,0,x,"), "bad.csv"), tz="UTC")


def test_ads_style_export_with_header_lines_and_units_row(tmp_path):
    text = ('"Site: MH-101 (Main St)"\n"Exported",2024-02-01 10:00\n"Channel: 1"\n'
            "Date/Time,DFINAL,VFINAL,QFINAL\n,in,ft/s,MGD\n"
            "01/01/2024 00:00,5.2,1.10,0.250\n01/01/2024 00:15,5.3,1.20,0.260\n01/01/2024 00:30,5.4,1.30,0.270\n")
    rec = read_flow_record(write(tmp_path, text), tz="America/New_York")
    rd = rec.quality["flow"]["reading"]
    assert rd["header_line"] == 4 and rd["units_row"]
    assert rd["columns"] == {"flow": "QFINAL", "depth": "DFINAL", "velocity": "VFINAL"}
    assert rd["units"]["flow"]["from"].startswith("units row")
    np.testing.assert_array_equal(rec.flow_gpd, [250000.0, 260000.0, 270000.0])
    np.testing.assert_array_equal(rec.depth_in, [5.2, 5.3, 5.4])
    np.testing.assert_array_equal(rec.velocity_fps, [1.1, 1.2, 1.3])
    np.testing.assert_array_equal(rec.time_utc[0], np.datetime64("2024-01-01T05:00", "s"))


def test_semicolon_separated_with_decimal_comma_and_european_dates(tmp_path):
    text = "Zeit;Durchfluss (l/s)\n05.01.2024 10:00;1,5\n05.01.2024 10:01;2,0\n05.01.2024 10:02;2,5\n"
    rec = read_flow_record(write(tmp_path, text), tz="UTC", flow_column="Durchfluss (l/s)", time_column="Zeit")
    lps = 86400 / 3.785411784  # gal/d per L/s
    np.testing.assert_allclose(rec.flow_gpd, np.array([1.5, 2.0, 2.5]) * lps, rtol=1e-6)
    assert rec.step_s == 60


def test_newest_first_file_is_read_in_reverse(tmp_path):
    p = write(tmp_path, "timestamp,flow_gpd\n2024-01-01 00:30,3\n2024-01-01 00:15,2\n2024-01-01 00:00,1\n")
    rec = read_flow_record(p, tz="UTC")
    np.testing.assert_array_equal(rec.flow_gpd, [1.0, 2.0, 3.0])
    assert any("newest" in n for n in rec.quality["flow"]["reading"]["notes"])


# ---------------------------------------------------------------------------------------------
# Units
# ---------------------------------------------------------------------------------------------


def test_mgd_is_converted_to_gpd_exactly_and_the_argument_wins(tmp_path):
    p = write(tmp_path, "timestamp,flow_mgd\n2024-01-01 00:00,0.25\n2024-01-01 00:15,1.5\n2024-01-01 00:30,0.000125\n")
    rec = read_flow_record(p, tz="UTC")
    assert rec.flow_gpd.tolist() == [250000.0, 1500000.0, 125.0]
    q = write(tmp_path, "timestamp,Q\n2024-01-01 00:00,0.25\n2024-01-01 00:15,1.5\n", "q.csv")
    assert read_flow_record(q, tz="UTC", units="MGD").flow_gpd.tolist() == [250000.0, 1500000.0]
    assert read_flow_record(q, tz="UTC", units="cfs").flow_gpd[0] == pytest.approx(0.25 * 646316.88, rel=1e-7)


def test_rain_in_mm_is_divided_by_25_4_and_missing_is_nan_not_zero(tmp_path):
    p = write(tmp_path, "timestamp,rain (mm)\n2024-01-01 00:00,25.4\n2024-01-01 00:05,0\n2024-01-01 00:10,\n"
                        "2024-01-01 00:15,2.54\n")
    rec = read_rain_record(p, tz="UTC")
    assert isinstance(rec, RainRecord)
    assert rec.rain_in[0] == pytest.approx(1.0, abs=1e-15) and rec.rain_in[1] == 0.0
    assert np.isnan(rec.rain_in[2]) and rec.rain_in[3] == pytest.approx(0.1)
    assert rec.quality["rain"]["reading"]["blank_values"]["rain"] == {"count": 1, "lines": [4]}
    assert rec.quality["rain"]["gaps"][0]["steps"] == 1


def test_no_unit_anywhere_is_an_error_never_a_guess(tmp_path):
    p = write(tmp_path, "timestamp,flow\n2024-01-01 00:00,0.25\n2024-01-01 00:15,0.3\n")
    with pytest.raises(DataFileError, match=r"no unit for the flow column 'flow'.*never guessed"):
        read_flow_record(p, tz="UTC")
    r = write(tmp_path, "timestamp,rainfall\n2024-01-01 00:00,0.1\n", "r.csv")
    with pytest.raises(DataFileError, match="no unit for the rain column"):
        read_rain_record(r, tz="UTC")
    with pytest.raises(InputError, match="'furlongs' is not a flow unit"):
        read_flow_record(p, tz="UTC", units="furlongs")


# ---------------------------------------------------------------------------------------------
# Time zones and daylight saving time
# ---------------------------------------------------------------------------------------------


def test_november_repeated_hour_keeps_every_sample_in_order_in_utc(tmp_path):
    walls = ["00:00", "00:15", "00:30", "00:45", "01:00", "01:15", "01:30", "01:45",  # EDT
             "01:00", "01:15", "01:30", "01:45", "02:00", "02:15"]  # EST after the clock went back
    rows = "".join(f"11/03/2024 {w},{i + 1}\n" for i, w in enumerate(walls))
    rec = read_flow_record(write(tmp_path, "Date Time,Flow (gpd)\n" + rows), tz="America/New_York")
    expected = np.datetime64("2024-11-03T04:00", "s") + np.arange(14) * np.timedelta64(900, "s")
    np.testing.assert_array_equal(rec.time_utc, expected)
    np.testing.assert_array_equal(rec.flow_gpd, np.arange(1, 15, dtype=float))  # file order kept
    assert not np.isnan(rec.flow_gpd).any()
    assert [str(t)[11:16] for t in rec.time_local] == walls  # the wall clock repeats
    amb = rec.quality["flow"]["reading"]["ambiguous_local"]
    assert (amb["count"], amb["as_daylight"], amb["as_standard"]) == (8, 4, 4)
    assert rec.quality["flow"]["reading"]["dst_transitions"][0]["shift_s"] == -3600


def test_march_missing_hour_is_not_an_error_and_leaves_no_gap(tmp_path):
    walls = ["01:00", "01:15", "01:30", "01:45", "03:00", "03:15", "03:30"]
    rows = "".join(f"2024-03-10 {w},{i + 1}\n" for i, w in enumerate(walls))
    rec = read_flow_record(write(tmp_path, "timestamp,flow_gpd\n" + rows), tz="America/New_York")
    expected = np.datetime64("2024-03-10T06:00", "s") + np.arange(7) * np.timedelta64(900, "s")
    np.testing.assert_array_equal(rec.time_utc, expected)
    assert rec.quality["flow"]["gaps"] == [] and rec.quality["flow"]["reading"]["nonexistent_local"] == []
    assert not any("02:" in str(t)[11:14] for t in rec.time_local)
    assert any("daylight saving time begins" in n for n in rec.quality["flow"]["reading"]["notes"])


def test_a_reading_stamped_in_the_missing_hour_is_flagged_with_its_value(tmp_path):
    rows = "2024-03-10 01:30,1\n2024-03-10 01:45,2\n2024-03-10 02:30,99\n2024-03-10 03:00,3\n2024-03-10 03:15,4\n"
    rec = read_flow_record(write(tmp_path, "timestamp,flow_gpd\n" + rows), tz="America/New_York")
    assert rec.quality["flow"]["reading"]["nonexistent_local"] == [
        {"line": 4, "time_local": "2024-03-10 02:30", "flow_gpd": 99.0}]
    assert 99.0 not in rec.flow_gpd.tolist() and rec.quality["counts"]["flow"]["nonexistent_local"] == 1


def test_naive_times_without_tz_and_unknown_tz_are_refused(tmp_path):
    p = write(tmp_path, "timestamp,flow_gpd\n2024-01-01 00:00,1\n2024-01-01 00:15,1\n")
    with pytest.raises(DataFileError, match="no UTC offset: give tz"):
        read_flow_record(p)
    with pytest.raises(InputError, match="not an IANA time zone"):
        read_flow_record(p, tz="America/NewYork")


# ---------------------------------------------------------------------------------------------
# Grid: gaps, duplicates, off-grid values
# ---------------------------------------------------------------------------------------------


def test_gaps_become_nan_and_are_reported_with_their_lengths(tmp_path):
    times = [0, 1, 2, 5, 6, 7, 8, 12, 13]  # steps present (5-minute): gaps of 2 and 3 steps
    t0 = np.datetime64("2024-01-01T00:00", "s")
    rows = "".join(f"{t0 + np.timedelta64(300 * k, 's')}Z,{100 + k}\n" for k in times)
    rec = read_flow_record(write(tmp_path, "timestamp,flow_gpd\n" + rows))
    assert rec.flow_gpd.size == 14 and int(np.isnan(rec.flow_gpd).sum()) == 5
    gaps = rec.quality["flow"]["gaps"]
    assert [(g["start_utc"], g["steps"], g["hours"]) for g in gaps] == [
        ("2024-01-01T00:15:00Z", 2, 10 / 60), ("2024-01-01T00:45:00Z", 3, 0.25)]
    assert rec.quality["flow"]["missing"] == 5


def test_duplicates_keep_the_first_and_off_grid_values_are_listed(tmp_path):
    rows = ("2024-01-01 00:00,1\n2024-01-01 00:15,2\n2024-01-01 00:15,20\n2024-01-01 00:22,7\n"
            "2024-01-01 00:30,3\n2024-01-01 00:45:10,4\n2024-01-01 01:00,5\n2024-01-01 01:15,6\n")
    rec = read_flow_record(write(tmp_path, "timestamp,flow_gpd\n" + rows), tz="UTC")
    np.testing.assert_array_equal(rec.flow_gpd, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    rd = rec.quality["flow"]["reading"]
    assert rd["duplicates"] == [{"line": 4, "time_utc": "2024-01-01T00:15:00Z", "kept_line": 3, "flow_gpd": 20.0}]
    assert rd["off_grid"] == [{"line": 5, "time_utc": "2024-01-01T00:22:00Z", "flow_gpd": 7.0}]
    assert rd["snapped"] == 1  # 00:45:10 is 10 s late: moved onto the grid, counted


def test_step_min_given_overrides_the_inferred_step(tmp_path):
    rows = "2024-01-01 00:00,1\n2024-01-01 00:30,2\n2024-01-01 01:00,3\n"
    rec = read_flow_record(write(tmp_path, "timestamp,flow_gpd\n" + rows), tz="UTC", step_min=15)
    assert rec.step_s == 900 and rec.flow_gpd.size == 5 and int(np.isnan(rec.flow_gpd).sum()) == 2
    with pytest.raises(InputError, match="step_min"):
        read_flow_record(write(tmp_path, "timestamp,flow_gpd\n" + rows, "b.csv"), tz="UTC", step_min=0.001)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(12, 150), data=st.data())
def test_property_removed_rows_are_exactly_the_nans(tmp_path, n, data):
    max_removed = (n - 2) // 3 - 1
    removed = data.draw(st.sets(st.integers(1, n - 2), max_size=max(0, max_removed)))
    flows = data.draw(st.lists(st.floats(0.0, 1e6, allow_nan=False), min_size=n, max_size=n))
    base = np.datetime64("2024-05-01T00:00", "s")
    rows = "".join(f"{base + np.timedelta64(300 * k, 's')}Z,{flows[k]!r}\n" for k in range(n) if k not in removed)
    rec = read_flow_record(write(tmp_path, "timestamp,flow_gpd\n" + rows, "h.csv"))
    assert rec.flow_gpd.size == n and rec.step_s == 300
    assert int(np.isnan(rec.flow_gpd).sum()) == len(removed)
    assert sorted(np.flatnonzero(np.isnan(rec.flow_gpd)).tolist()) == sorted(removed)
    kept = [k for k in range(n) if k not in removed]
    np.testing.assert_array_equal(rec.flow_gpd[kept], np.array(flows)[kept])
    assert sum(g["steps"] for g in rec.quality["flow"]["gaps"]) == len(removed)


# ---------------------------------------------------------------------------------------------
# Quality flags
# ---------------------------------------------------------------------------------------------


def _record(values, step_s=900, start="2024-01-01T00:00") -> MeterRecord:
    values = np.asarray(values, dtype=float)
    t = np.datetime64(start, "s") + np.arange(values.size) * np.timedelta64(step_s, "s")
    rec = MeterRecord(t, t.copy(), step_s, values, source=("synthetic", ""), tz="UTC")
    rec.quality = quality_report(rec)
    return rec


def _diurnal(n, step_s=900, base=300000.0):
    h = np.arange(n) * step_s / 3600.0
    return base * (1 + 0.3 * np.sin(2 * np.pi * h / 24))


def test_flat_line_longer_than_the_policy_is_flagged_with_its_value():
    q = _diurnal(96 * 2)
    q[40:40 + 28] = 123456.0  # 7 h at 15 min: more than 6 h
    q[120:120 + 20] = 0.0  # 5 h of zeros: under the policy
    rep = _record(q).quality["flow"]
    assert [(f["start_utc"], f["steps"], f["value"], f["zero"]) for f in rep["flat_lines"]] == [
        ("2024-01-01T10:00:00Z", 28, 123456.0, False)]
    assert FLAT_LINE_HOURS == 6.0
    q[120:120 + 28] = 0.0
    rep = _record(q).quality["flow"]
    assert [(f["value"], f["zero"]) for f in rep["flat_lines"]] == [(123456.0, False), (0.0, True)]
    # a shorter policy flags more, the values stay
    assert len(quality_report(_record(q), flat_line_hours=4.0)["flow"]["flat_lines"]) == 2
    assert _record(q).flow_gpd[50] == 123456.0


def test_a_spike_is_flagged_and_kept_but_a_storm_response_is_not():
    n = 96 * 3
    q = _diurnal(n)
    t = np.arange(n)
    q += 400000.0 * np.clip(1 - np.abs(t - 150) / 12.0, 0, None)  # a storm response, 3 h each side
    q[60] = 5 * q[60]
    q[200] = 0.0  # a dropout
    rec = _record(q)
    spikes = rec.quality["flow"]["spikes"]
    assert [s["time_utc"] for s in spikes] == ["2024-01-01T15:00:00Z", "2024-01-03T02:00:00Z"]
    assert spikes[0]["value"] == q[60] and spikes[0]["score"] > 6
    assert rec.flow_gpd[60] == q[60]  # flagged, not deleted
    mask = flag_mask(rec)
    assert mask.sum() == 2 and mask[60] and mask[200]


def test_negative_flows_are_flagged_as_runs_with_their_minimum():
    q = _diurnal(96)
    q[10:13] = [-5.0, -20.0, -1.0]
    q[50] = -3.0
    rep = _record(q).quality["flow"]
    assert [(g["start_utc"], g["steps"], g["min_value"]) for g in rep["negatives"]] == [
        ("2024-01-01T02:30:00Z", 3, -20.0), ("2024-01-01T12:30:00Z", 1, -3.0)]
    assert rep is not None and _record(q).flow_gpd[11] == -20.0


def test_negatives_read_from_a_file_are_kept_and_flagged(tmp_path):
    rows = "".join(f"2024-01-01T00:{5 * k:02d}:00Z,{v}\n" for k, v in enumerate([1, -2, 3, 4]))
    rec = read_flow_record(write(tmp_path, "timestamp,flow_gpd\n" + rows))
    assert rec.flow_gpd[1] == -2.0 and rec.quality["counts"]["flow"]["negatives"] == 1


def _synthetic_pair(tmp_path, shift_feb_h: float):
    step = 900
    start = np.datetime64("2024-01-01T00:00", "s")
    n = 60 * 96  # January and February 2024
    rain = np.zeros(n)
    for day in range(2, 58, 3):  # an event every third day at 10:00 UTC, 1 h of 0.4 in/h
        k = day * 96 + 40
        rain[k:k + 4] = 0.1
    uh = np.concatenate((np.linspace(0, 1, 9), np.linspace(1, 0, 17)[1:]))  # peak 2 h after the rain
    flow = _diurnal(n) + 1.5e6 * np.convolve(rain, uh)[:n]
    t = start + np.arange(n) * np.timedelta64(step, "s")
    frows = "".join(f"{t[k]}Z,{flow[k]:.3f}\n" for k in range(n))
    fpath = write(tmp_path, "timestamp,flow_gpd\n" + frows, "flow.csv")
    shift = np.timedelta64(int(shift_feb_h * 3600), "s")
    feb = np.datetime64("2024-02-01T00:00", "s")
    rt = np.where(t >= feb, t + shift, t)
    rrows = "".join(f"{rt[k]}Z,{rain[k]}\n" for k in range(n))
    rpath = write(tmp_path, "timestamp,rain_in\n" + rrows, "rain.csv")
    return read_flow_record(fpath), read_rain_record(rpath)


def test_clock_drift_of_two_hours_is_reported(tmp_path):
    flow, rain = _synthetic_pair(tmp_path, 2.0)
    rep = quality_report(flow, rain)
    cd = rep["clock_drift"]
    months = {m["month"]: m for m in cd["months"]}
    assert months["2024-01"]["drift_s"] == 0 and not months["2024-01"]["flagged"]
    assert abs(months["2024-02"]["drift_s"]) == 7200 and months["2024-02"]["flagged"]
    assert cd["max_abs_drift_s"] == 7200 and rep["counts"]["clock_drift_months_flagged"] == 1
    assert rep["rain"]["gaps"][0]["steps"] == 8  # the rain clock's jump leaves 2 h without rain data
    # the same pair without the shift: no drift
    flow, rain = _synthetic_pair(tmp_path, 0.0)
    cd = quality_report(flow, rain)["clock_drift"]
    assert cd["max_abs_drift_s"] == 0 and cd["flagged"] == [] and len(cd["events"]) >= 15


def test_rain_on_another_grid_is_summed_or_spread():
    t = np.datetime64("2024-01-01T01:00", "s") + np.arange(3) * np.timedelta64(3600, "s")
    rain = RainRecord(t, t.copy(), 3600, np.array([0.4, np.nan, 0.8]))
    grid = np.datetime64("2024-01-01T00:15", "s") + np.arange(12) * np.timedelta64(900, "s")
    r = rain_on_grid(rain, grid, 900)
    np.testing.assert_allclose(r[:4], 0.1)
    assert np.isnan(r[4:8]).all()
    np.testing.assert_allclose(r[8:], 0.2)
    coarse = rain_on_grid(rain, np.array(["2024-01-01T01:00"], dtype="datetime64[s]"), 3600)
    np.testing.assert_allclose(coarse, [0.4])


# ---------------------------------------------------------------------------------------------
# Bad files
# ---------------------------------------------------------------------------------------------


def test_no_timestamp_column(tmp_path):
    p = write(tmp_path, "reading,flow_gpd\n1,100\n2,200\n")
    with pytest.raises(DataFileError, match=r"meter\.csv: no timestamp column"):
        read_flow_record(p, tz="UTC")


def test_unparseable_timestamp_names_its_line(tmp_path):
    p = write(tmp_path, "timestamp,flow_gpd\n2024-01-01 00:00,1\n2024-01-01 00:15,2\n2024-13-45 99:00,3\n")
    with pytest.raises(DataFileError, match=r"line 4: column\(s\) 'timestamp': '2024-13-45 99:00' is not a timestamp"):
        read_flow_record(p, tz="UTC")


def test_non_numeric_flow_names_its_line(tmp_path):
    p = write(tmp_path, "timestamp,flow_gpd\n2024-01-01 00:00,1\n2024-01-01 00:15,ERR\n2024-01-01 00:30,3\n")
    with pytest.raises(DataFileError, match=r"line 3: column 'flow_gpd' \(flow\) is not a number: got 'ERR'"):
        read_flow_record(p, tz="UTC")


def test_ambiguous_or_missing_flow_columns_list_the_columns(tmp_path):
    p = write(tmp_path, "timestamp,Flow 1 (MGD),Flow 2 (MGD)\n2024-01-01 00:00,1,2\n2024-01-01 00:15,1,2\n")
    with pytest.raises(DataFileError, match=r"'Flow 1 \(MGD\)', 'Flow 2 \(MGD\)' all look like flow: choose one with flow_column="):
        read_flow_record(p, tz="UTC")
    assert read_flow_record(p, tz="UTC", flow_column="Flow 2 (MGD)").flow_gpd[0] == 2e6
    with pytest.raises(DataFileError, match=r"no column 'Flow 3' for flow \(columns: 'timestamp', 'Flow 1"):
        read_flow_record(p, tz="UTC", flow_column="Flow 3")


def test_a_row_with_the_wrong_number_of_fields_and_an_empty_file(tmp_path):
    p = write(tmp_path, "timestamp,flow_gpd\n2024-01-01 00:00,1\n2024-01-01 00:15,2,7\n")
    with pytest.raises(DataFileError, match="line 3: 3 field"):
        read_flow_record(p, tz="UTC")
    with pytest.raises(DataFileError, match="empty file"):
        read_flow_record(write(tmp_path, "\n\n", "e.csv"), tz="UTC")
    with pytest.raises(DataFileError, match="file not found"):
        read_flow_record(tmp_path / "none.csv", tz="UTC")


def test_a_logger_on_standard_time_at_the_fall_back_shows_a_gap_and_a_note(tmp_path):
    walls = ["00:30", "00:45", "01:00", "01:15", "01:30", "01:45", "02:00", "02:15"]  # no wall time repeats
    rows = "".join(f"2024-11-03 {w},{i + 1}\n" for i, w in enumerate(walls))
    rec = read_flow_record(write(tmp_path, "timestamp,flow_gpd\n" + rows), tz="America/New_York")
    assert [g["steps"] for g in rec.quality["flow"]["gaps"]] == [4]  # 01:xx read as daylight time: an hour missing
    assert any("standard time all year" in n for n in rec.quality["flow"]["reading"]["notes"])


def test_a_text_row_under_the_header_is_not_taken_for_units(tmp_path):
    p = write(tmp_path, "timestamp,flow_gpd\nsensor fault,offline\n2024-01-01 00:00,1\n2024-01-01 00:15,2\n")
    with pytest.raises(DataFileError, match="line 2: column 'flow_gpd' \\(flow\\) is not a number: got 'offline'"):
        read_flow_record(p, tz="UTC")


def test_a_depth_column_without_a_unit_is_not_read_and_said_so(tmp_path):
    p = write(tmp_path, "timestamp,Level,Velocity (m/s),flow_gpd\n2024-01-01 00:00,5,1.0,1\n2024-01-01 00:15,5,2.0,2\n")
    rec = read_flow_record(p, tz="UTC")
    assert rec.depth_in is None
    np.testing.assert_allclose(rec.velocity_fps, [1 / 0.3048, 2 / 0.3048])
    assert any("'Level' looks like depth" in n and "never guessed" in n for n in rec.quality["flow"]["reading"]["notes"])
    # named explicitly, the missing unit is an error
    with pytest.raises(DataFileError, match="no unit for the depth column 'Level'"):
        read_flow_record(p, tz="UTC", depth_column="Level")


def test_offsets_other_than_the_zone_are_converted_by_their_offset_and_noted(tmp_path):
    p = write(tmp_path, "Time,flow_gpd\n2024-07-01T00:00-05:00,1\n2024-07-01T00:15-05:00,2\n")  # EST kept in July
    rec = read_flow_record(p, tz="America/New_York")
    np.testing.assert_array_equal(rec.time_utc, utc("2024-07-01T05:00", "2024-07-01T05:15"))
    np.testing.assert_array_equal(rec.time_local, utc("2024-07-01T01:00", "2024-07-01T01:15"))
    assert any("offset other than America/New_York" in n for n in rec.quality["flow"]["reading"]["notes"])


def test_the_report_is_json_ready(tmp_path):
    import json

    flow, rain = _synthetic_pair(tmp_path, 2.0)
    text = json.dumps(quality_report(flow, rain))
    assert '"clock_drift"' in text and json.dumps(flow.quality) and json.dumps(rain.quality)
