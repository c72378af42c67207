"""Every file a model makes the engine touch, found with the engine's own reading rules (issue 23).

A table of lines per section and spelling (prefixes, case, quotes, comments, NUL bytes, long lines) against
what SWMM 5.2.4's ``input.c`` reads (``network/inp_text.py`` cites the source), and cross-checks with the
real engine: the file it writes is the one the enumeration names, and after :func:`prepare_inp_text` it
writes nothing outside the run's folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from capacitysim.errors import InputError
from capacitysim.network.inp_text import (
    ConfinedModelError,
    confine_model_text,
    engine_lines,
    engine_tokens,
    file_references,
    prepare_inp_text,
    section_of,
)

# (model text, expected [(section, what, name, access)])
CASES = [
    ("[FILES]\nSAVE OUTFLOWS out.txt\n", [("FILES", "SAVE OUTFLOWS", "out.txt", "write")]),
    ("[FILE]\nSAVE OUTFLOWS \"/abs/x.pth\"\n", [("FILES", "SAVE OUTFLOWS", "/abs/x.pth", "write")]),
    ("[files]\nsave outflows x\n", [("FILES", "SAVE OUTFLOWS", "x", "write")]),
    ("[FILESYSTEM]\nSAVEX OUTFLOWSX x\n", [("FILES", "SAVE OUTFLOWS", "x", "write")]),
    ("  [FILES\nUSE HOTSTART h.hsf\n", [("FILES", "USE HOTSTART", "h.hsf", "read-write")]),
    ("[FILES]\nUSE RAINFALL r.dat\nUSE RUNOFF ro.dat\nUSE RDII rd.dat\nUSE INFLOWS i.txt\nSAVE HOTSTART s.hsf\n",
     [("FILES", "USE RAINFALL", "r.dat", "read-write"), ("FILES", "USE RUNOFF", "ro.dat", "read-write"),
      ("FILES", "USE RDII", "rd.dat", "read"), ("FILES", "USE INFLOWS", "i.txt", "read"),
      ("FILES", "SAVE HOTSTART", "s.hsf", "write")]),
    ("[FILES]\nSCRATCH RAINFALL r.dat\nNOPE RDII x\n", [("FILES", "SCRATCH RAINFALL", "r.dat", "write"),
                                                        ("FILES", "NO RDII", "x", "write")]),
    ("[FILES]\nSAVE\tOUTFLOWS\t\"with space.txt\" ; comment\n", [("FILES", "SAVE OUTFLOWS", "with space.txt", "write")]),
    # a ';' inside quotes starts the comment all the same (getTokens cuts at the first ';')
    ("[FILES]\nSAVE OUTFLOWS \"a;b\"\n", [("FILES", "SAVE OUTFLOWS", "a", "write")]),
    # a C string ends at NUL
    ("[FILES]\nSAVE OUTFLOWS x\x00y\n", [("FILES", "SAVE OUTFLOWS", "x", "write")]),
    # a quoted header is a header for the data pass
    ("[TITLE]\n\"[FILES]\"\nSAVE OUTFLOWS /abs/q\n", [("FILES", "SAVE OUTFLOWS", "/abs/q", "write")]),
    # a header hidden past the engine's 1,023-character line buffer
    (";" + "x" * 1022 + "[FILES]\nSAVE OUTFLOWS /abs/long\n", [("FILES", "SAVE OUTFLOWS", "/abs/long", "write")]),
    ("[RAINGAGES]\nG1 INTENSITY 0:15 1.0 FILE \"/etc/passwd\" STA IN\n", [("RAINGAGES", "FILE", "/etc/passwd", "read")]),
    ("[RAINGAGE]\nG1 INTENSITY 0:15 1.0 file r.dat STA IN\n", [("RAINGAGES", "FILE", "r.dat", "read")]),
    ("[RAINGAGES]\nG1 INTENSITY 0:15 1.0 TIMESERIES TS1\n", []),
    ("[TIMESERIES]\nTS1 FILE \"/etc/passwd\"\nTS2 0 1.0\n", [("TIMESERIES", "FILE", "/etc/passwd", "read")]),
    ("[TIMESERIES]\nTS1 file rain.dat\nTS1 FILEX rain.dat\n", [("TIMESERIES", "FILE", "rain.dat", "read")]),
    ("[TEMPERATURE]\nFILE clim.dat 1/1/2000\n", [("TEMPERATURE", "FILE", "clim.dat", "read")]),
    ("[TEMP]\nFILE clim.dat\n", []),  # not a section keyword: the engine refuses the header
    ("[TEMPERATURES]\nFILEX c.dat\nWINDSPEED FILE\n", [("TEMPERATURE", "FILE", "c.dat", "read")]),
    ("[LID_USAGE]\nS1 BC1 1 100 10 0 0 0 \"/srv/jobs/x/result-1.json\"\n",
     [("LID_USAGE", "report file", "/srv/jobs/x/result-1.json", "write")]),
    ("[LID_USAGE]\nS1 BC1 1 100 10 0 0 0 *\n", []),
    ("[OPTIONS]\nTEMPDIR /tmp/x\nTEMPDIRECTORY /tmp/y\n", [("OPTIONS", "TEMPDIR", "/tmp/x", "folder"),
                                                          ("OPTIONS", "TEMPDIR", "/tmp/y", "folder")]),
    ("[OPTION]\n  tempdir \"/a b\"\n", [("OPTIONS", "TEMPDIR", "/a b", "folder")]),
    ("[JUNCTIONS]\nFILE 1 2\n[PMPZ]\nSAVE OUTFLOWS x\n", []),
]


@pytest.mark.parametrize("text,expected", CASES, ids=[c[0].split("\n", 1)[0][:30] + f"-{i}" for i, c in enumerate(CASES)])
def test_file_references_table(text, expected):
    got = [(r.section, r.what, r.name, r.access) for r in file_references(text)]
    assert got == expected


def test_engine_reading_rules():
    assert section_of("[FILE]") == "FILES" and section_of("[JUNC]") == "JUNCTIONS" and section_of("[xsect]") == "XSECTIONS"
    assert section_of("[INLET_USAGE]") == "INLET_USAGE" and section_of("[INLETS]") == "INLETS"
    assert section_of("[TEMP]") is None and section_of("[FIL]") is None
    assert engine_tokens('a "b c" d"e ""') == ["a", "b c", 'd"e', ""]
    assert engine_tokens('"x"y') == ["x", "y"]
    assert len(engine_tokens(" ".join(["t"] * 50))) == 40
    long = "a" * 2500 + "\nb\n"
    assert [len(x) for x in engine_lines(long)] == [1023, 1023, 455, 2]


def test_prepare_redirects_every_write_and_resolves_reads(tmp_path):
    run = tmp_path / "run"
    text = ("[TITLE]\n\"[FILES]\"\nSAVE OUTFLOWS \"/abs/evil.pth\"\nUSE HOTSTART hot.hsf\n[OPTIONS]\nTEMPDIR /etc\n"
            "[LID_USAGE]\nS1 BC1 1 100 10 0 0 0 ../../x.json\n[TIMESERIES]\nTS1 FILE rain.dat\n")
    copies: list = []
    out = prepare_inp_text(text, tmp_path, run, copies)
    refs = file_references(out)
    for r in refs:
        p = Path(r.name)
        assert p.is_absolute(), r
        if r.access != "read":
            assert p.parent == run, r  # writes, folders and r+b copies: in the run folder only
    assert {r.name for r in refs if r.access == "read"} == {str((tmp_path / "rain.dat"))}
    assert copies == [(tmp_path / "hot.hsf", run / f"use-4-hot.hsf")]
    assert "THREADS              1" in out


def test_confined_text_refuses_any_name_not_uploaded_the_same_way(tmp_path):
    allowed = {"rain.dat"}
    ok, rec = confine_model_text("[TIMESERIES]\nTS1 FILE rain.dat\n[FILES]\nSAVE OUTFLOWS /x/y/out.txt\n", allowed)
    assert "TS1 FILE rain.dat" in ok and "SAVE OUTFLOWS out.txt" in ok and len(rec) == 2
    messages = []
    for name in ("/etc/passwd", "/etc/no-such-file-here", "../uploads/abc/rain.dat", "sub/rain.dat", "RAIN.DAT"):
        with pytest.raises(ConfinedModelError) as e:
            confine_model_text(f"[TIMESERIES]\nTS1 FILE \"{name}\"\n", allowed)
        messages.append(str(e.value).replace(name, "NAME"))
    assert len(set(messages)) == 1, messages  # an existing and a missing path are refused alike
    assert "uploaded with this model: rain.dat" in messages[0]


# --- the real engine ---------------------------------------------------------------------------

MINI = """[TITLE]
mini
[OPTIONS]
FLOW_UNITS CFS
ROUTING_STEP 10
START_DATE 01/01/2020
START_TIME 00:00:00
END_DATE 01/01/2020
END_TIME 01:00:00
REPORT_STEP 00:15:00
{files}
[JUNCTIONS]
J1 100 5 0 0 0
[OUTFALLS]
O1 99 FREE NO
[CONDUITS]
C1 J1 O1 100 0.013 0 0 0 0
[XSECTIONS]
C1 CIRCULAR 1 0 0 0 1
[INFLOWS]
J1 FLOW "" FLOW 1.0 1.0 1.0
"""

SPELLINGS = ["[FILES]\nSAVE OUTFLOWS \"{p}\"", "[FILE]\nSAVE OUTFLOWS \"{p}\"", "[files]\nsave outflows \"{p}\"",
             "[TITLE]\n\"[FILES]\"\nSAVEX OUTFLOWSX \"{p}\"", ";" + "z" * 1022 + "[FILES]\nSAVE OUTFLOWS \"{p}\""]


def _swmm(inp: Path, cwd: Path, landlock: bool = False) -> subprocess.CompletedProcess:
    code = ("import sys; from swmm.toolkit import solver\n"
            "try:\n    solver.swmm_run(sys.argv[1], sys.argv[2], sys.argv[3])\nexcept Exception:\n    sys.exit(3)\n")
    env = dict(os.environ, CAPACITYSIM_LANDLOCK="on" if landlock else "off")
    return subprocess.run([sys.executable, "-c", code, str(inp), str(cwd / "r.rpt"), str(cwd / "r.out")], cwd=cwd,
                          env=env, capture_output=True, timeout=120)


@pytest.mark.swmm
@pytest.mark.parametrize("spelling", SPELLINGS, ids=["FILES", "FILE", "lower", "quoted-header", "long-line"])
def test_the_engine_writes_where_the_enumeration_says_and_nowhere_after_prepare(tmp_path, spelling):
    pytest.importorskip("swmm.toolkit")
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "planted.txt"
    text = MINI.replace("{files}", "").replace("[JUNCTIONS]", spelling.replace("{p}", str(target)) + "\n[JUNCTIONS]")
    src = tmp_path / "model.inp"
    src.write_text(text, encoding="latin-1")
    # the engine, on the raw model, writes the file the enumeration names
    raw = tmp_path / "raw"
    raw.mkdir()
    _swmm(src, raw)
    assert target.is_file(), "the engine did not write the file: the spelling is not a case of the attack"
    assert [r.name for r in file_references(text) if r.access == "write"] == [str(target)]
    target.unlink()
    # the run's copy: the same engine writes only in its run folder
    run = tmp_path / "run"
    run.mkdir()
    (run / "m.inp").write_text(prepare_inp_text(text, tmp_path, run), encoding="latin-1")
    proc = _swmm(run / "m.inp", run)
    assert proc.returncode == 0 and not target.exists() and not list(outside.iterdir())
    assert (run / "planted.txt").is_file()


LID_MODEL = MINI.replace("{files}", """[RAINGAGES]
RG1 INTENSITY 0:05 1.0 TIMESERIES TS1
[TIMESERIES]
TS1 0:00 1.0
TS1 1:00 0.0
[SUBCATCHMENTS]
S1 RG1 J1 1 50 100 1 0
[SUBAREAS]
S1 0.013 0.1 0.05 0.05 25 OUTLET
[INFILTRATION]
S1 3.0 0.5 4 7 0
[LID_CONTROLS]
RB1 RB
RB1 STORAGE 36 0.75 0.5 0
RB1 DRAIN 1 0.5 6 6
[LID_USAGE]
S1 RB1 1 10 0 0 100 0 "{p}"
""")


@pytest.mark.swmm
def test_the_lid_report_file_is_written_only_in_the_run_folder(tmp_path):
    """The issue's second write: the report file of a [LID_USAGE] line, aimed at another job's document."""
    pytest.importorskip("swmm.toolkit")
    other_job = tmp_path / "jobs" / "other"
    other_job.mkdir(parents=True)
    evidence = other_job / "result-1.json"
    evidence.write_text('{"verdict": "pass"}')
    text = LID_MODEL.replace("{p}", str(evidence))
    (tmp_path / "m.inp").write_text(text)
    raw = tmp_path / "raw"
    raw.mkdir()
    _swmm(tmp_path / "m.inp", raw)
    assert evidence.read_text() != '{"verdict": "pass"}', "the engine did not write the LID report: not the attack"
    assert [r.what for r in file_references(text) if r.access == "write"] == ["report file"]
    evidence.write_text('{"verdict": "pass"}')
    run = tmp_path / "run"
    run.mkdir()
    (run / "m.inp").write_text(prepare_inp_text(text, tmp_path, run))
    assert _swmm(run / "m.inp", run).returncode == 0
    assert evidence.read_text() == '{"verdict": "pass"}' and (run / "result-1.json").is_file()


@pytest.mark.parametrize("length", [1000, 1010, 1015, 1020, 1022, 1023])
@pytest.mark.parametrize("section,line", [
    ("TIMESERIES", "TSX FILE rain.dat {pad} AAAA FILE /etc/hostname"),
    ("FILES", "SAVE OUTFLOWS o.txt {pad} SAVE OUTFLOWS /tmp/outside/evil.pth"),
])
def test_a_line_made_longer_by_its_absolute_path_never_becomes_two(tmp_path, length, section, line):
    """A line near the engine's 1,023 characters grows when its file name is written out in full; the rest would be
    read as a line of its own (found by an attack on this code): the copy is refused, or names only what was meant."""
    body = line.replace("{pad}", "")
    body = line.replace("{pad}", "x" * max(1, length - len(body)))
    text = f"[{section}]\n{body}\n"
    run = tmp_path / "run"
    try:
        out = prepare_inp_text(text, tmp_path, run)
    except InputError as exc:
        assert "line" in str(exc)
        return
    names = [r.name for r in file_references(out)]
    assert names in ([str(tmp_path / "rain.dat")], [str(run / "o.txt")]), names


@pytest.mark.swmm
def test_the_options_are_read_as_the_engine_reads_them(tmp_path):
    """What the service estimates a run from (its end date) is what the engine uses: the last line of a keyword, a
    keyword by prefix, a line past 1,023 characters, a quoted header that only the data pass sees."""
    pytest.importorskip("swmm.toolkit")
    from capacitysim.network.engine import probe_inp
    from capacitysim.network.inp_text import engine_options

    variants = {
        "duplicate": "END_DATE 01/01/2020\nEND_DATE 03/01/2020",
        "prefix": "END_DATEXYZ 03/01/2020",
        "lower": "end_date 03/01/2020",
        "quoted-header": '"[TITLE]"\nEND_DATE 03/01/2020',
        "long-line": ";" + "z" * 1022 + "END_DATE 03/01/2020",
    }
    for name, lines in variants.items():
        text = MINI.replace("{files}", "").replace("END_DATE 01/01/2020\n", lines + "\n", 1)
        p = tmp_path / f"{name}.inp"
        p.write_text(text)
        engine_end = probe_inp(p)["end"][:10]
        assert engine_end == "2020-03-01", (name, engine_end)
        assert engine_options(text)["END_DATE"] == "03/01/2020", name


@pytest.mark.swmm
def test_a_run_writing_past_the_file_size_limit_is_stopped_with_the_reason(tmp_path):
    """A model with a report step as short as its routing step fills the disk with its results file; the service's runs carry a file
    size limit (RLIMIT_FSIZE), and passing it stops the run with the policy's name."""
    pytest.importorskip("swmm.toolkit")
    from capacitysim.errors import EngineError
    from capacitysim.network.engine import run_inp, stop_runs_when

    text = MINI.replace("{files}", "").replace("REPORT_STEP 00:15:00", "REPORT_STEP 00:00:10")
    (tmp_path / "m.inp").write_text(text)
    with stop_runs_when(max_file_bytes=20_000), pytest.raises(EngineError, match="max_engine_file_bytes"):
        run_inp(tmp_path / "m.inp", tmp_path / "w")
    run = run_inp(tmp_path / "m.inp", tmp_path / "w2")  # outside the block: no limit
    assert run.out.stat().st_size > 20_000


@pytest.mark.swmm
def test_a_missing_windows_path_is_left_to_the_engine_to_report(tmp_path):
    """A model made on Windows names C:\\...\\inflow.txt that is not here (swmmio's model_full_features_network):
    the copy keeps the name it resolved, and the engine reports the missing file, not capacitysim a defect."""
    pytest.importorskip("swmm.toolkit")
    from capacitysim.network.engine import EngineInputError, run_inp

    text = MINI.replace("{files}", '[TIMESERIES]\nTS9 FILE "C:\\Rotations\\R3 - Vue\\inflow.txt"\n')
    (tmp_path / "w.inp").write_text(text)
    out = prepare_inp_text(text, tmp_path, tmp_path / "run")
    assert [r.name for r in file_references(out)] == ["C:/Rotations/R3 - Vue/inflow.txt"]
    with pytest.raises(EngineInputError, match=r"ERROR \d+"):
        run_inp(tmp_path / "w.inp", tmp_path / "run2")
