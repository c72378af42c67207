"""Plant flow readers: daily CSV and ECHO DMR downloads; errors name the lines; gaps reported, never filled;
MGD vs gpd mix-ups caught by magnitude; the bundled sample record regenerates byte for byte."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from capacitysim.errors import DataFileError
from capacitysim.io.plant_flows import read_echo_dmr, read_flow_csv
from capacitysim.workflows.spdes import SAMPLE_SEED, write_sample_record

ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str, name: str = "flows.csv") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_reads_default_columns_and_reports_gaps_without_filling(tmp_path):
    p = write(tmp_path, "date,flow_mgd\n2024-01-01,0.40\n2024-01-02,\n2024-01-03,0.42\n2024-01-06,0.44\n")
    rec = read_flow_csv(p)
    assert list(rec.flow_mgd.round(6)) == [0.40, 0.42, 0.44]  # nothing invented for the missing days
    assert [str(g) for g in rec.gaps] == ["2024-01-02 (1 day)", "2024-01-04 to 2024-01-05 (2 days)"]
    assert rec.missing_days == 3
    assert any("line 3" in n and "blank" in n for n in rec.notes)
    assert rec.dates.dtype == np.dtype("datetime64[D]")


def test_column_mapping_gpd_units_and_us_dates(tmp_path):
    p = write(tmp_path, "Day,Effluent Flow (gpd),Operator\n01/30/2024,410000,AB\n01/31/2024,420500,AB\n")
    rec = read_flow_csv(p, date_column="Day", flow_column="Effluent Flow (gpd)", units="gpd")
    assert rec.units_read == "gpd"
    np.testing.assert_allclose(rec.values_mgd, [0.41, 0.4205])
    assert str(rec.first.date()) == "2024-01-30"
    # units inferred from a column name ending in gpd
    p2 = write(tmp_path, "date,flow_gpd\n2024-01-01,410000\n2024-01-02,420000\n", "g.csv")
    assert read_flow_csv(p2, flow_column="flow_gpd").units_read == "gpd"


@pytest.mark.parametrize(
    "text, match",
    [
        ("date,flow_mgd\n2024-01-01,0.4\n2024-01-03,0.4\n2024-01-02,0.4\n",
         r"line 4: date 2024-01-02 comes after 2024-01-03 on line 3.*increasing order"),
        ("date,flow_mgd\n2024-01-01,0.4\n2024-01-02,0.4\n2024-01-02,0.5\n",
         r"lines 3, 4: date 2024-01-02 appears 2 times"),
        ("date,flow_mgd\n2024-01-01,0.4\n2024-01-02,abc\n2024-01-03,0.4\n",
         r"line 3: column 'flow_mgd' is not a number: got 'abc'"),
        ("date,flow_mgd\n2024-01-01,0.4\n2024-01-02,-0.1\n", r"line 3: column 'flow_mgd' is negative"),
        ("date,flow_mgd\n2024-01-01,0.4\n2024-13-02,0.4\n", r"line 3: column 'date' is not a date"),
        ("date,flow_mgd\n2024-01-01 06:00,0.4\n", r"line 2: .*time of day"),
        ("day,flow\n2024-01-01,0.4\n", r"no column 'date', 'flow_mgd' \(columns: 'day', 'flow'\)"),
        ("date,flow_mgd\n", r"no data rows"),
        ("", r"empty file"),
        ("date,flow_mgd\n2024-01-01,inf\n", r"line 2: .*not finite"),
    ],
)
def test_bad_files_name_the_line(tmp_path, text, match):
    with pytest.raises(DataFileError, match=match):
        read_flow_csv(write(tmp_path, text))


def test_missing_file(tmp_path):
    with pytest.raises(DataFileError, match="file not found"):
        read_flow_csv(tmp_path / "nope.csv")


def test_gpd_values_in_an_mgd_column_are_caught_by_magnitude(tmp_path):
    rows = "\n".join(f"2024-01-{d:02d},{410000 + 1000 * d}" for d in range(1, 11))
    with pytest.raises(DataFileError, match=r"median of 415,500 MGD.*look like gallons per day.*--units gpd"):
        read_flow_csv(write(tmp_path, "date,flow_mgd\n" + rows + "\n"))


def test_mgd_values_read_as_gpd_are_caught_by_magnitude(tmp_path):
    rows = "\n".join(f"2024-01-{d:02d},0.4{d}" for d in range(1, 10))
    with pytest.raises(DataFileError, match=r"read as gpd has a median of 0.45 gpd.*look like MGD"):
        read_flow_csv(write(tmp_path, "date,flow\n" + rows + "\n"), flow_column="flow", units="gpd")


def test_one_day_typed_in_the_other_unit_is_named(tmp_path):
    rows = [f"2024-01-{d:02d},0.41" for d in range(1, 31)]
    rows[16] = "2024-01-17,412000"  # line 18 of the file
    with pytest.raises(DataFileError, match=r"line 18: column 'flow_mgd' value 412,000 is .* times the record's median.*other unit"):
        read_flow_csv(write(tmp_path, "date,flow_mgd\n" + "\n".join(rows) + "\n"))
    rows[16] = "2024-01-17,0.00000041"  # and a tiny one (MGD written as MGD/1e6)
    with pytest.raises(DataFileError, match=r"line 18"):
        read_flow_csv(write(tmp_path, "date,flow_mgd\n" + "\n".join(rows) + "\n"))


def test_zero_flow_days_are_allowed(tmp_path):
    rec = read_flow_csv(write(tmp_path, "date,flow_mgd\n2024-01-01,0.4\n2024-01-02,0\n2024-01-03,0.4\n"))
    assert rec.values_mgd.tolist() == [0.4, 0.0, 0.4]


def test_bundled_sample_record_regenerates_byte_for_byte(tmp_path):
    committed = ROOT / "models" / "plants" / "sample-wwtp.csv"
    fresh = write_sample_record(tmp_path / "sample.csv", seed=SAMPLE_SEED)
    assert fresh.read_bytes() == committed.read_bytes()
    rec = read_flow_csv(committed)
    assert str(rec.first.date()) == "2022-01-01" and str(rec.last.date()) == "2024-12-31"
    assert [str(g) for g in rec.gaps] == ["2024-08-12 to 2024-08-14 (3 days)"]
    monthly = rec.flow_mgd.resample("MS").mean()
    # the wet spring of 2023 is above 0.50 MGD, nothing else is
    assert sorted(str(i.date())[:7] for i in monthly[monthly > 0.5].index) == ["2023-03", "2023-04"]


# ---------------------------------------------------------------------------------------------
# ECHO DMR downloads (columns as ECHO's effluent chart download names them)
# ---------------------------------------------------------------------------------------------

DMR_HEADER = (
    "npdes_id,perm_feature_nmbr,parameter_code,parameter_desc,monitoring_location_desc,statistical_base_short_desc,"
    "limit_value_standard_units,monitoring_period_end_date,dmr_value_nmbr,dmr_unit_desc,dmr_value_standard_units,nodi_code,nodi_desc"
)


def dmr_rows(values, start="2024-01", base="MO AVG", outfall="001", code="50050", limit="0.5"):
    out = []
    months = pd.period_range(start, periods=len(values), freq="M")
    for m, v in zip(months, values):
        end = m.to_timestamp(how="end").strftime("%m/%d/%Y")
        nodi = ("C", "No Discharge") if v == "" else ("", "")
        out.append(f"NY0000001,{outfall},{code},\"Flow, in conduit or thru treatment plant\",Effluent Gross,{base},{limit},"
                   f"{end},{v},MGD,{v},{nodi[0]},{nodi[1]}")
    return out


def test_dmr_monthly_averages_of_50050(tmp_path):
    rows = (
        dmr_rows(["0.41", "0.43", "", "0.52"])
        + dmr_rows(["0.80", "0.90", "0.70", "0.95"], base="DAILY MX", limit="")
        + dmr_rows(["3.1", "2.9", "3.3", "3.0"], code="00665", limit="")
    )
    p = write(tmp_path, "\n".join([DMR_HEADER.upper(), *rows]) + "\n", "dmr.csv")  # ECHO bulk files use upper case
    rec = read_echo_dmr(p)
    assert rec.statistical_base == "MO AVG" and rec.limit_mgd == 0.5 and rec.npdes_id == "NY0000001"
    assert [str(t.date()) for t in rec.monthly["period_end"]] == ["2024-01-31", "2024-02-29", "2024-03-31", "2024-04-30"]
    np.testing.assert_allclose(rec.monthly["average_mgd"].to_numpy(), [0.41, 0.43, np.nan, 0.52])
    assert rec.monthly["nodi"].tolist()[2] == "No Discharge"
    assert any("without a value" in n and "No Discharge" in n for n in rec.notes)
    daily_max = read_echo_dmr(p, statistical_base="daily mx")
    assert daily_max.monthly["average_mgd"].max() == 0.95 and daily_max.limit_mgd is None


def test_dmr_gal_per_day_values_are_converted(tmp_path):
    head = "npdes_id,parameter_code,statistical_base_short_desc,monitoring_period_end_date,dmr_value_nmbr,dmr_unit_desc"
    p = write(tmp_path, f"{head}\nNY1,50050,MO AVG,01/31/2024,410000,gal/d\nNY1,50050,MO AVG,02/29/2024,0.42,MGD\n", "d.csv")
    rec = read_echo_dmr(p)
    np.testing.assert_allclose(rec.monthly["average_mgd"].to_numpy(), [0.41, 0.42])
    assert any("gal/d" in n for n in rec.notes)


@pytest.mark.parametrize(
    "rows, kwargs, match",
    [
        (dmr_rows(["3.1"], code="00665"), {}, r"no rows for parameter 50050.*00665"),
        (dmr_rows(["0.4"], base="DAILY MX"), {}, r"statistical base 'MO AVG'; bases present: DAILY MX"),
        (dmr_rows(["0.4"]) + dmr_rows(["0.3"], outfall="002"), {}, r"several outfalls \(001, 002\).*--outfall"),
        (dmr_rows(["0.4", "0.41"]) + dmr_rows(["0.45"]), {}, r"lines 2, 4: monitoring period ending 2024-01-31 is reported more than once"),
        (dmr_rows(["0.4", "lots"]), {}, r"line 3: dmr_value_standard_units is not a number: got 'lots'"),
        (dmr_rows(["0.4"]), {"outfall": "009"}, r"no outfall '009'"),
        (dmr_rows(["410000", "420000"]), {}, r"look like gallons per day"),
    ],
)
def test_dmr_errors(tmp_path, rows, kwargs, match):
    p = write(tmp_path, "\n".join([DMR_HEADER, *rows]) + "\n", "dmr.csv")
    with pytest.raises(DataFileError, match=match):
        read_echo_dmr(p, **kwargs)


def test_dmr_outfall_choice_and_not_a_dmr(tmp_path):
    p = write(tmp_path, "\n".join([DMR_HEADER, *dmr_rows(["0.4"]), *dmr_rows(["0.3"], outfall="002")]) + "\n", "dmr.csv")
    assert read_echo_dmr(p, outfall="002").monthly["average_mgd"].tolist() == [0.3]
    with pytest.raises(DataFileError, match="not an ECHO DMR download"):
        read_echo_dmr(write(tmp_path, "date,flow_mgd\n2024-01-01,0.4\n"))


# --- plant files (spdes check --plant) -------------------------------------------------------------------
from capacitysim.io.plant_flows import read_plant_file


def test_plant_file_reads_and_normalizes(tmp_path):
    p = write(tmp_path, 'name = " River WWTP "\nwatershed = false\nspdes_permit = "ny 0024414"\nflow_limit_mgd = 0.5\n'
                        'basis = "12month"\nreceiving_water = "Susquehanna River"\n', "plant.toml")
    pf = read_plant_file(p)
    assert (pf.name, pf.watershed, pf.spdes_permit, pf.flow_limit_mgd, pf.basis, pf.receiving_water) == (
        "River WWTP", False, "NY0024414", 0.5, "12month", "Susquehanna River")
    import hashlib

    assert pf.sha256 == hashlib.sha256(p.read_bytes()).hexdigest() and pf.source == str(p)
    minimal = read_plant_file(write(tmp_path, 'name = "P"\nwatershed = true\n', "min.toml"))
    assert minimal.watershed is True and minimal.flow_limit_mgd is None and minimal.basis is None


@pytest.mark.parametrize("text, message", [
    ('name = "P"\n', "missing key(s) watershed"),
    ('name = "P"\nwatershed = "yes"\n', "watershed must be true or false"),
    ('name = "P"\nwatershed = true\nflow_limit_mgd = -1\n', "flow_limit_mgd must be > 0 MGD; got -1"),
    ('name = "P"\nwatershed = true\nflow_limit_mgd = 500000\n', "flow_limit_mgd must be <= 1000 MGD"),
    ('name = "P"\nwatershed = true\nbasis = "weekly"\n', "basis must be one of month, 30day, 12month; got 'weekly'"),
    ('name = "P"\nwatershed = true\nspdes_permit = "NY12345"\n', "is not a SPDES permit number"),
    ('name = "P"\nwatershed = true\nlimit = 0.5\n', "unknown key(s) limit"),
    ('name = ""\nwatershed = true\n', "name must be a non-empty string"),
    ('name = "P"\nwatershed = true\nreceiving_water = "a\\nb"\n', "receiving_water must be one line of text"),
    ("name = [\n", "not valid TOML"),
])
def test_plant_file_errors_name_the_file_and_key(tmp_path, text, message):
    p = write(tmp_path, text, "plant.toml")
    with pytest.raises(DataFileError) as exc:
        read_plant_file(p)
    assert message in str(exc.value) and str(p) in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.parametrize("name, watershed", [("sample-wwtp.toml", True), ("sample-river-wwtp.toml", False)])
def test_bundled_plant_files_read(name, watershed):
    pf = read_plant_file(ROOT / "models" / "plants" / name)
    assert pf.watershed is watershed and pf.flow_limit_mgd == 0.5 and pf.basis == "month"
