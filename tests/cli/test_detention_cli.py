"""capacitysim detention: JSON keys, report, and bad input as exit 2 with one line."""

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITES = ROOT / "models" / "sites"
BASE = (SITES / "new-building.toml").read_text()


def test_json_keys(run_cli, tmp_path):
    r = run_cli("detention", str(SITES / "new-building.toml"), "--json", "--report", str(tmp_path / "r.html"))
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    for key in ("allowable_flow_cfs", "release_rate_cfs", "required_volume_cf", "orifice_diameter_in",
                "peak_outflow_cfs", "max_depth_ft", "swmm_peak_outflow_cfs"):
        assert isinstance(out[key], float), key
    assert out["release_rate_cfs"] == pytest.approx(0.25)
    assert out["peak_outflow_cfs"] <= 0.25
    assert abs(out["swmm_peak_outflow_cfs"] - out["peak_outflow_cfs"]) <= 0.02 * out["peak_outflow_cfs"]
    assert (tmp_path / "r.html").stat().st_size > 10000


def test_table_output(run_cli):
    r = run_cli("detention", str(SITES / "alteration.toml"), "--no-swmm")
    assert r.exit_code == 0
    assert "release rate" in r.stdout and "PASS" in r.stdout


OPEN = (SITES / "open-bottom-infiltration.toml").read_text()


@pytest.mark.parametrize(
    "text, needle",
    [
        (BASE.replace("roof = 14000", "roof = -14000"), "roof must be > 0"),
        (BASE.replace("grass = 2000", "grass = 0"), "grass must be > 0"),
        (BASE.replace("site_area_sf = 20000", "site_area_sf = 0"), "site_area_sf must be > 0"),
        (BASE.replace("roof = 14000", "roof = 13000"), "sum to 19,000 ft2 but site_area_sf is 20,000"),
        (BASE.replace("drainage_plan_c = 0.60", "drainage_plan_c = 1.2"), "drainage_plan_c must be <= 1"),
        (BASE.replace("drainage_plan_c = 0.60", "drainage_plan_c = -0.1"), "drainage_plan_c must be > 0"),
        (BASE.replace("roof = 14000", "lawn = 14000"), "unknown surface type 'lawn'"),
        (OPEN.replace('soil_borings = ["B-3", "B-4"]\n', ""), "missing: soil_borings"),
        (OPEN.replace('permeability_test = "in-situ"\n', ""), "missing: permeability_test"),
        (BASE + '\n[infiltration]\ninfiltration_rate_in_hr = 1.0\n', "only for open-bottom systems"),
    ],
)
def test_bad_input_exit_2_one_line(run_cli, tmp_path, text, needle):
    p = tmp_path / "bad.toml"
    p.write_text(text)
    r = run_cli("detention", str(p), "--no-swmm")
    assert r.exit_code == 2, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert needle in lines[0]


def test_laboratory_test_refused_exit_3(run_cli, tmp_path):
    p = tmp_path / "lab.toml"
    p.write_text(OPEN.replace('"in-situ"', '"laboratory"'))
    r = run_cli("detention", str(p), "--no-swmm")
    assert r.exit_code == 3
    assert "in situ" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_missing_file_and_unknown_rule(run_cli, tmp_path):
    r = run_cli("detention", str(tmp_path / "nope.toml"))
    assert r.exit_code == 2 and "file not found" in r.stderr
    r = run_cli("detention", str(SITES / "new-building.toml"), "--rule", "nyc-1999")
    assert r.exit_code == 2 and "bundled" in r.stderr


ALT = (SITES / "alteration.toml").read_text()


@pytest.mark.parametrize(
    "text, needle",
    [
        (ALT.replace("new_points_of_discharge = 0", "new_points_of_discharge = 1"), "no new points of discharge are permitted"),
        (BASE.replace('receiving_sewer = "combined"', 'receiving_sewer = "storm"'), "connections to combined sewers"),
    ],
)
def test_rule_refusals_exit_3(run_cli, tmp_path, text, needle):
    p = tmp_path / "refused.toml"
    p.write_text(text)
    r = run_cli("detention", str(p), "--no-swmm")
    assert r.exit_code == 3, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "31-03" in lines[0]


@pytest.mark.parametrize(
    "text, needle",
    [
        (ALT.replace("new_points_of_discharge = 0", "new_points_of_discharge = -1"), "new_points_of_discharge must be a whole number"),
        (BASE.replace('receiving_sewer = "combined"', 'receiving_sewer = "csos"'), "receiving_sewer must be one of"),
    ],
)
def test_bad_site_keys_exit_2(run_cli, tmp_path, text, needle):
    p = tmp_path / "bad.toml"
    p.write_text(text)
    r = run_cli("detention", str(p), "--no-swmm")
    assert r.exit_code == 2 and needle in r.stderr


def test_unstated_points_of_discharge_is_a_condition_not_a_pass(run_cli, tmp_path):
    p = tmp_path / "alt.toml"
    p.write_text(ALT.replace("new_points_of_discharge = 0", ""))
    r = run_cli("detention", str(p), "--no-swmm", "--json")
    assert r.exit_code == 0
    out = json.loads(r.stdout)
    row = next(c for c in out["checks"] if c["criterion"] == "New points of discharge")
    assert row["result"] == "confirm"
    assert any("no new points of discharge" in c for c in out["conditions"])


# --- issue 12: no input clobbered, no traceback, no runaway ------------------------------------------
#: Address space given to a command run in a child process [bytes]: 2 GiB runs any real detention
#: design; a runaway allocation fails there (MemoryError) instead of taking the machine down.
CHILD_MEMORY_BYTES = 2 * 1024**3
CHILD_TIMEOUT_S = 120


def _run_capped(*args: str) -> subprocess.CompletedProcess:
    """Run ``capacitysim ARGS`` in a child with capped memory and time (a runaway fails, not the suite)."""

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY_BYTES, CHILD_MEMORY_BYTES))

    return subprocess.run([sys.executable, "-m", "capacitysim", *args], capture_output=True, text=True,
                          timeout=CHILD_TIMEOUT_S, preexec_fn=cap)


def _one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


def _rule_chain(tmp_path):
    base = tmp_path / "base-rules.toml"
    base.write_text('extends = "nyc-2012"\n[idf_10yr]\na = 150.0\nb_min = 15.0\nsource = "my curve"\nverified = true\n')
    top = tmp_path / "rules.toml"
    top.write_text(f'extends = "{base}"\n[weir_coefficient]\nvalue = 3.2\nsource = "my weir"\nverified = false\n')
    return base, top


@pytest.mark.parametrize("target", ["site", "rule", "base_rule", "symlink", "folder"])
def test_report_never_overwrites_an_input(run_cli, tmp_path, target):
    """--report must refuse (exit 2) a path that is the site file, any rule-set file read, a link or a folder.

    (The bundled nyc-2012.toml at the end of every chain is an input too - ``RuleSet.sources`` lists it,
    tests/io/test_readers_hardening.py - but is not written at here: a regression would destroy it.)"""
    site = tmp_path / "site.toml"
    site.write_text(BASE)
    base, top = _rule_chain(tmp_path)
    link = tmp_path / "link.html"
    link.symlink_to(tmp_path / "elsewhere.html")
    folder = tmp_path / "folder"
    folder.mkdir()
    report = {"site": site, "rule": top, "base_rule": base, "symlink": link, "folder": folder}[target]
    # a relative spelling of the same file is the same file
    shown = os.path.relpath(report) if target in ("site", "rule") else str(report)
    before = {p: p.read_bytes() for p in (site, base, top)}
    r = run_cli("detention", str(site), "--rule", str(top), "--no-swmm", "--report", shown)
    assert r.exit_code == 2, r.output
    line = _one_error_line(r.stderr)
    assert line.startswith("error: --report")
    assert {p: p.read_bytes() for p in before} == before
    assert not (tmp_path / "elsewhere.html").exists()


def test_report_to_a_new_file_still_works(run_cli, tmp_path):
    site = tmp_path / "site.toml"
    site.write_text(BASE)
    r = run_cli("detention", str(site), "--no-swmm", "--report", str(tmp_path / "out" / "report.html"))
    assert r.exit_code == 0, r.output
    assert (tmp_path / "out" / "report.html").stat().st_size > 1000


@pytest.mark.parametrize(
    "design, needle",
    [
        ("[design]\ntc_min = 1e9\n", "tc_min must be <= 10080"),
        ("[design]\ndt_min = 1e-9\n", "dt_min = 1e-09 min"),
        ('[design]\nhydrograph = "scs"\ncn = 80\ndt_min = 1e-9\n', "dt_min = 1e-09 min"),
        ("[design]\ndt_min = 0.0005\n", "time steps"),  # 370,000 steps of hydrograph + a 12-h tail at 0.03 s
    ],
)
def test_runaway_times_are_refused_before_allocating(tmp_path, design, needle):
    """tc_min = 1e9 was OOM-killed and dt_min = 1e-9 asked for 1.35 TiB: now one line, exit 2, in seconds."""
    p = tmp_path / "site.toml"
    p.write_text(BASE + "\n" + design)
    r = _run_capped("detention", str(p), "--no-swmm")
    assert r.returncode == 2, r.stderr[-2000:]
    assert needle in _one_error_line(r.stderr)
    assert "at most 1,000,000" in r.stderr or "must be <=" in r.stderr


def _drop_table(text: str, name: str) -> str:
    start = text.index(f"[{name}]")
    end = text.find("\n[", start + 1)
    return text[:start] + ("" if end < 0 else text[end + 1:])


@pytest.mark.parametrize(
    "text, needle",
    [
        ('site = "x"\n' + _drop_table(BASE, "site"), "[site]: must be a table"),
        ("surfaces = [1, 2]\n" + _drop_table(BASE, "surfaces"), "[surfaces]: must be a table"),
        ("system = 1\n" + _drop_table(BASE, "system"), "[system]: must be a table"),
        ("design = [1]\n" + BASE, "[design]: must be a table"),
        ('infiltration = "yes"\n' + BASE.replace('bottom = "closed"', 'bottom = "open"'), "[infiltration]: must be a table"),
        ("recycling = 3\n" + BASE, "[recycling]: must be a table"),
        (BASE + '\n[recycling]\ndemand_gpd = 2000\nindependent = "yes"\n', "independent must be true or false"),
        (BASE.replace("roof = 14000", "roof = 1" + "0" * 400), "roof must be a number of a usable size"),
        (BASE.replace("roof = 14000", "roof = inf"), "roof must be a finite number"),
        (BASE.replace("site_area_sf = 20000", "site_area_sf = 1e308"), "site_area_sf must be <= 100,000,000 ft2"),
        (BASE.replace("length_ft = 40.0", "length_ft = 1e300"), "length_ft must be <= 10000"),
        (BASE.replace('name = "Example', 'name = ["Example').replace('lot)"', 'lot)"]'), "name must be a string"),
    ],
)
def test_wrong_toml_types_are_one_line_exit_2(run_cli, tmp_path, text, needle):
    p = tmp_path / "bad.toml"
    p.write_text(text)
    r = run_cli("detention", str(p), "--no-swmm")
    assert r.exit_code == 2, r.output
    assert needle in _one_error_line(r.stderr)


def test_invalid_utf8_site_and_rule_files_are_one_line_exit_2(run_cli, tmp_path):
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(BASE.replace('name = "Example', 'name = "Caf\xe9 example').encode("latin-1"))
    r = run_cli("detention", str(bad), "--no-swmm")
    assert r.exit_code == 2
    assert "not UTF-8" in _one_error_line(r.stderr)
    r = run_cli("detention", str(SITES / "new-building.toml"), "--no-swmm", "--rule", str(bad))
    assert r.exit_code == 2
    assert "not UTF-8" in _one_error_line(r.stderr)


@pytest.mark.parametrize(
    "rule, needle",
    [
        ('extends = "nyc-2012"\n[weir_coefficient]\nvalue = -3.33\n', "weir_coefficient must be > 0"),
        ('extends = "nyc-2012"\n[weir_coefficient]\nvalue = 33.3\n', "weir_coefficient must be <= 5.34"),
        ('extends = "nyc-2012"\n[design_storm_10yr_24h]\ndepth_in = -5.0\n', "design_storm_10yr_24h.depth_in must be > 0"),
        ('extends = "nyc-2012"\n[design_storm_10yr_24h]\ndepth_in = 1e308\n', "design_storm_10yr_24h.depth_in must be <= 200"),
        ('extends = "nyc-2012"\n[idf_10yr]\nverified = "no"\n', "[idf_10yr] verified must be true or false"),
        ('extends = "nyc-2012"\n[idf_10yr]\nA = 300.0\n', "unknown key(s) A"),
        ('extends = "nyc-2012"\nidf_10yr = 5\n', "idf_10yr must be a table"),
        ('extends = "nyc-2012"\n[rational_hydrograph]\ndurations_min = [5, "ten"]\n', "durations_min[1] must be a number"),
        ('extends = "nyc-2012"\n[routing]\ndt_min = 1e-9\n', None),  # a legal value: refused later by the step count
        ('extends = ["nyc-2012"]\n', "extends must name another rule set"),
    ],
)
def test_bad_rule_sets_are_one_line_exit_2(run_cli, tmp_path, rule, needle):
    p = tmp_path / "mine.toml"
    p.write_text(rule)
    r = run_cli("detention", str(SITES / "new-building.toml"), "--no-swmm", "--rule", str(p))
    assert r.exit_code == 2, r.output
    line = _one_error_line(r.stderr)
    assert needle is None or needle in line


def test_rule_set_extends_cycle_is_refused(run_cli, tmp_path):
    (tmp_path / "a.toml").write_text(f'extends = "{tmp_path / "b.toml"}"\n')
    (tmp_path / "b.toml").write_text(f'extends = "{tmp_path / "a.toml"}"\n')
    r = run_cli("detention", str(SITES / "new-building.toml"), "--no-swmm", "--rule", str(tmp_path / "a.toml"))
    assert r.exit_code == 2
    assert "extends loops back" in _one_error_line(r.stderr)
    (tmp_path / "self.toml").write_text(f'extends = "{tmp_path / "self.toml"}"\n')
    r = run_cli("detention", str(SITES / "new-building.toml"), "--no-swmm", "--rule", str(tmp_path / "self.toml"))
    assert r.exit_code == 2 and "extends loops back" in _one_error_line(r.stderr)
