"""The Landlock wall (capacitysim.network.sandbox) on real processes: each test starts a fresh child
that confines itself and then tries operations; the outcomes (``ok`` or the errno's name) come back
as JSON. Nothing is mocked; the module is skipped where the kernel has no Landlock.
"""

from __future__ import annotations

import _bisect  # a small extension module: copied and loaded under another name below
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SANDBOX_PY = Path(__file__).resolve().parents[2] / "src" / "capacitysim" / "network" / "sandbox.py"


def _load_sandbox():
    # by file: importing capacitysim.network would import the engine (xarray, pandas) for nothing
    spec = importlib.util.spec_from_file_location("capacitysim_sandbox_under_test", SANDBOX_PY)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


sandbox = _load_sandbox()

if sandbox.landlock_abi() == 0:
    pytest.skip(f"no Landlock here ({sandbox._probe()[1]})", allow_module_level=True)

# The child: load sandbox.py, run PRE (before the wall), confine, then run BODY, which records
# outcomes with t(name, callable); prints @@result@@{"status": ..., "results": {name: "ok" | errno name}}.
_CHILD = """
import ctypes, errno, importlib.util, json, os, sys
spec = importlib.util.spec_from_file_location("sb", {sandbox_py!r})
sb = importlib.util.module_from_spec(spec); sys.modules["sb"] = sb; spec.loader.exec_module(sb)
results = {{}}
def t(name, f):
    try:
        value = f()
        results[name] = "ok" if value is None or not isinstance(value, str) else "ok:" + value
    except OSError as e:
        results[name] = errno.errorcode.get(e.errno, type(e).__name__) if e.errno else type(e).__name__
    except Exception as e:
        results[name] = type(e).__name__ + ": " + str(e)
{pre}
c = sb.Confinement.from_json({conf!r})
status = sb.confine(c)
{body}
sys.stdout.flush()
print(chr(10) + "@@result@@" + json.dumps({{"status": status, "results": results}}), flush=True)
"""


def run_child(conf, body: str, pre: str = "", env: dict | None = None, cwd=None) -> dict:
    """Run BODY in a fresh child confined by CONF (a Confinement); the child's JSON answer."""
    code = _CHILD.format(sandbox_py=str(SANDBOX_PY), conf=conf.to_json(), pre=textwrap.dedent(pre),
                         body=textwrap.dedent(body))
    full_env = dict(os.environ)
    full_env.pop(sandbox.ENV_SWITCH, None)
    full_env.update(env or {})
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full_env,
                          cwd=cwd, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.rsplit("@@result@@", 1)[1])  # the engine prints its progress too


@pytest.fixture
def layout(tmp_path):
    """w/ (the write folder, with w/keep.txt), out/ (a sibling folder, with out/secret.txt),
    ro/ (a read-only folder, with ro/data.txt) and one allowed file, allowed.txt."""
    w, out, ro = tmp_path / "w", tmp_path / "out", tmp_path / "ro"
    for d in (w, out, ro):
        d.mkdir()
    (w / "keep.txt").write_text("keep")
    (out / "secret.txt").write_text("secret")
    (ro / "data.txt").write_text("data")
    (tmp_path / "allowed.txt").write_text("allowed")
    conf = sandbox.Confinement(write_dirs=(str(w),),
                               read_paths=sandbox.default_read_paths() + (str(ro), str(tmp_path / "allowed.txt")))
    return tmp_path, conf


def test_confinement_json_round_trip(tmp_path):
    c = sandbox.Confinement(write_dirs=(tmp_path, "/a b/ü"), read_paths=("/usr", "/dev/null"))
    assert c.write_dirs == (str(tmp_path), "/a b/ü")  # paths made strings
    back = sandbox.Confinement.from_json(c.to_json())
    assert back == c
    assert json.loads(c.to_json()) == {"write_dirs": [str(tmp_path), "/a b/ü"], "read_paths": ["/usr", "/dev/null"]}


def test_default_read_paths():
    paths = sandbox.default_read_paths()
    assert sys.prefix in paths and sys.base_prefix in paths and "/usr" in paths and "/dev/null" in paths
    assert all(os.path.exists(p) for p in paths)
    for forbidden in ("/", "/etc", "/tmp", "/home", "/root", str(Path(__file__).resolve().parents[2])):
        assert forbidden not in paths
    swmm_spec = importlib.util.find_spec("swmm")
    if swmm_spec is not None:  # the site-packages holding swmm (and swmm_toolkit's libswmm5)
        assert os.path.dirname(list(swmm_spec.submodule_search_locations)[0]) in paths


def test_writes_only_in_the_write_folder(layout):
    tmp, conf = layout
    w, out = tmp / "w", tmp / "out"
    in_prefix = Path(sys.prefix) / f"capacitysim-landlock-probe-{os.getpid()}"
    try:
        got = run_child(conf, f"""
            w, out = {str(w)!r}, {str(out)!r}
            t("write in", lambda: open(w + "/new.txt", "w").write("x"))
            t("append in", lambda: open(w + "/new.txt", "a").write("y"))
            t("truncate in", lambda: os.truncate(w + "/new.txt", 0))
            t("rename in", lambda: os.rename(w + "/new.txt", w + "/renamed.txt"))
            t("mkdir in", lambda: os.mkdir(w + "/sub"))
            t("link in", lambda: os.link(w + "/keep.txt", w + "/sub/keep-link.txt"))
            t("remove in", lambda: os.remove(w + "/renamed.txt"))
            t("create out", lambda: open(out + "/new.txt", "w"))
            t("overwrite out", lambda: open(out + "/secret.txt", "w"))
            t("append out", lambda: open(out + "/secret.txt", "a"))
            t("truncate out", lambda: os.truncate(out + "/secret.txt", 0))
            t("rename out", lambda: os.rename(out + "/secret.txt", out + "/moved.txt"))
            t("move in to out", lambda: os.rename(w + "/keep.txt", out + "/keep.txt"))
            t("move out to in", lambda: os.rename(out + "/secret.txt", w + "/secret.txt"))
            t("remove out", lambda: os.remove(out + "/secret.txt"))
            t("mkdir out", lambda: os.mkdir(out + "/d"))
            t("symlink in to out", lambda: os.symlink(out + "/secret.txt", w + "/link.txt"))
            t("write through symlink", lambda: open(w + "/link.txt", "w"))
            t("read through symlink", lambda: open(w + "/link.txt").read())
            t("hard link out into in", lambda: os.link(out + "/secret.txt", w + "/hard.txt"))
            t("create in sys.prefix", lambda: open({str(in_prefix)!r}, "w"))
            t("write read-only folder", lambda: open({str(tmp / "ro" / "data.txt")!r}, "a"))
            t("write /dev/null", lambda: open("/dev/null", "w").write("x"))
            t("create in /tmp", lambda: open("/tmp/capacitysim-landlock-probe-" + str(os.getpid()), "w"))
        """)
    finally:
        in_prefix.unlink(missing_ok=True)
    assert got["status"].startswith(f"landlock ABI {sandbox.landlock_abi()}: writes only under 1 folder(s)")
    r = got["results"]
    for name in ("write in", "append in", "truncate in", "rename in", "mkdir in", "link in", "remove in",
                 "symlink in to out", "write /dev/null"):
        assert r[name] == "ok", (name, r[name])
    # measured: EACCES (PermissionError) for every refused create/write/truncate/rename/remove/mkdir
    for name in ("create out", "overwrite out", "append out", "truncate out", "rename out", "move in to out",
                 "move out to in", "remove out", "mkdir out", "write through symlink", "read through symlink",
                 "create in sys.prefix", "write read-only folder", "create in /tmp"):
        assert r[name] == "EACCES", (name, r[name])
    # a hard link across folders is the REFER right: Landlock answers EXDEV (as across file systems)
    assert r["hard link out into in"] == "EXDEV"
    assert (out / "secret.txt").read_text() == "secret"
    assert sorted(p.name for p in out.iterdir()) == ["secret.txt"]
    assert (w / "keep.txt").read_text() == "keep" and (w / "sub" / "keep-link.txt").exists()
    assert not in_prefix.exists()


def test_reads_only_in_the_read_paths(layout):
    tmp, conf = layout
    # a shared library and a program, copied into the read-only folder (read, not execute, rights)
    shutil.copy(_bisect.__file__, tmp / "ro" / "copied-lib.so")
    shutil.copy(shutil.which("true"), tmp / "ro" / "copied-true")
    etc = "/etc/hostname" if os.path.exists("/etc/hostname") else "/etc/passwd"
    got = run_child(conf, f"""
        t("read allowed file", lambda: open({str(tmp / "allowed.txt")!r}).read())
        t("read read-only folder", lambda: open({str(tmp / "ro" / "data.txt")!r}).read())
        t("list read-only folder", lambda: ",".join(sorted(os.listdir({str(tmp / "ro")!r}))))
        t("read write folder", lambda: open({str(tmp / "w" / "keep.txt")!r}).read())
        t("read outside", lambda: open({str(tmp / "out" / "secret.txt")!r}).read())
        t("list outside", lambda: os.listdir({str(tmp / "out")!r}))
        t("read missing outside", lambda: open({str(tmp / "out" / "missing.txt")!r}).read())
        t("read missing folder outside", lambda: open({str(tmp / "nowhere" / "missing.txt")!r}).read())
        t("create missing outside", lambda: open({str(tmp / "out" / "missing.txt")!r}, "x"))
        t("read etc", lambda: open({etc!r}).read())
        t("read passwd", lambda: open("/etc/passwd").read())
        t("import json decimal", lambda: str(json.loads("[1]")[0] + __import__("decimal").Decimal("0.5")))
        t("ctypes loaded library", lambda: ctypes.CDLL("libc.so.6").getpid() > 0)
        t("read /proc/self", lambda: open("/proc/self/status").read()[:5])
        t("urandom", lambda: os.urandom(4))
        t("load new library from read path", lambda: ctypes.CDLL({str(tmp / "ro" / "copied-lib.so")!r}))
        t("execute from read path", lambda: os.execv({str(tmp / "ro" / "copied-true")!r}, ["true"]))
    """, pre="import json")
    r = got["results"]
    assert r["read allowed file"] == "ok:allowed"
    assert r["read read-only folder"] == "ok:data"
    assert r["list read-only folder"] == "ok:copied-lib.so,copied-true,data.txt"
    assert r["read write folder"] == "ok:keep"
    assert r["import json decimal"] == "ok:1.5"
    assert r["ctypes loaded library"] == "ok"
    assert r["read /proc/self"] == "ok:Name:"
    assert r["urandom"] == "ok"
    # Landlock's EXECUTE is checked at execve, not when a library is mapped executable
    assert r["load new library from read path"] == "ok"
    assert r["execute from read path"] == "EACCES"
    for name in ("read outside", "list outside", "read etc", "read passwd", "create missing outside"):
        assert r[name] == "EACCES", (name, r[name])
    # measured: a missing file outside is not found (ENOENT) rather than refused: the name is resolved
    # before Landlock sees an opened file, so existence can be probed, contents cannot
    assert r["read missing outside"] == "ENOENT"
    assert r["read missing folder outside"] == "ENOENT"


def test_a_grandchild_inherits_the_wall(layout):
    tmp, conf = layout
    got = run_child(conf, f"""
        import subprocess
        def grandchild(code):
            p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
            return p.stdout.strip() or p.stderr.strip().splitlines()[-1]
        t("write in", lambda: grandchild("open({str(tmp / 'w' / 'gc.txt')!r}, 'w').write('1'); print('done')"))
        t("write out", lambda: grandchild("open({str(tmp / 'out' / 'gc.txt')!r}, 'w')"))
        t("read out", lambda: grandchild("print(open({str(tmp / 'out' / 'secret.txt')!r}).read())"))
    """)
    r = got["results"]
    assert r["write in"] == "ok:done"
    assert r["write out"].startswith("ok:PermissionError: [Errno 13]")
    assert r["read out"].startswith("ok:PermissionError: [Errno 13]")
    assert not (tmp / "out" / "gc.txt").exists()


def test_operator_switch_makes_it_unavailable(layout, monkeypatch):
    tmp, conf = layout
    monkeypatch.setenv(sandbox.ENV_SWITCH, "off")
    assert sandbox.landlock_abi() == 0
    got = run_child(conf, f"""
        t("write out", lambda: open({str(tmp / 'out' / 'free.txt')!r}, "w").write("x"))
    """, env={sandbox.ENV_SWITCH: "off"})
    assert got["status"] == f"unavailable: disabled by {sandbox.ENV_SWITCH}=off"
    assert got["results"]["write out"] == "ok"  # nothing was applied
    monkeypatch.delenv(sandbox.ENV_SWITCH)
    assert sandbox.landlock_abi() >= 1


def test_missing_paths_are_skipped(tmp_path):
    (tmp_path / "w").mkdir()
    conf = sandbox.Confinement(write_dirs=(str(tmp_path / "w"), str(tmp_path / "nope")),
                               read_paths=sandbox.default_read_paths() + (str(tmp_path / "absent.txt"),))
    got = run_child(conf, "")
    n_read = len(sandbox.default_read_paths())
    assert got["status"] == (f"landlock ABI {sandbox.landlock_abi()}: writes only under 1 folder(s), "
                             f"reads under {n_read} path(s)")


# --- the engine itself behind the wall ------------------------------------------------------------

_INP = """\
[TITLE]
capacitysim sandbox test: one junction with dry-weather flow, one conduit, one outfall, 1 h

[OPTIONS]
FLOW_UNITS           CFS
FLOW_ROUTING         DYNWAVE
START_DATE           06/01/2024
START_TIME           00:00:00
REPORT_START_DATE    06/01/2024
REPORT_START_TIME    00:00:00
END_DATE             06/01/2024
END_TIME             01:00:00
DRY_STEP             00:05:00
WET_STEP             00:05:00
REPORT_STEP          00:05:00
ROUTING_STEP         10

[JUNCTIONS]
;;Name  Elevation  MaxDepth  InitDepth  SurDepth  Aponded
J1      100        8         0          0         0

[OUTFALLS]
OUT1    99         FREE                 NO

[CONDUITS]
C1      J1         OUT1      400        0.013     0         0         0         0

[XSECTIONS]
C1      CIRCULAR   1.5       0          0         0         1

[DWF]
J1      FLOW       0.5
"""

_SWMM_BODY = """
    from swmm.toolkit import solver
    def run(stem):
        try:
            solver.swmm_run(stem + ".inp", stem + ".rpt", stem + ".out")
        except Exception as e:
            return "failed"
        return "ran"
    t("good", lambda: run("good"))
    t("escape", lambda: run("escape"))
"""


@pytest.mark.swmm
@pytest.mark.skipif(importlib.util.find_spec("swmm") is None or importlib.util.find_spec("swmm.toolkit") is None,
                    reason="swmm.toolkit is not installed")
def test_swmm_runs_behind_the_wall_and_cannot_write_outside(tmp_path):
    run_dir, outside = tmp_path / "run", tmp_path / "outside"
    run_dir.mkdir()
    outside.mkdir()
    escape = outside / "x.txt"
    (run_dir / "good.inp").write_text(_INP)
    (run_dir / "escape.inp").write_text(_INP + f'\n[FILES]\nSAVE OUTFLOWS "{escape}"\n')
    conf = sandbox.Confinement(write_dirs=(str(run_dir),), read_paths=sandbox.default_read_paths() + (str(run_dir),))
    pre = "from swmm.toolkit import solver\nimport numpy"  # as _child.py: imports before the wall
    # control: without the wall the escaping model does write outside its folder
    free = run_child(conf, _SWMM_BODY, pre=pre, env={sandbox.ENV_SWITCH: "off"}, cwd=run_dir)
    assert free["status"].startswith("unavailable:")
    assert free["results"] == {"good": "ok:ran", "escape": "ok:ran"}
    assert escape.exists()
    escape.unlink()

    walled = run_child(conf, _SWMM_BODY, pre=pre, cwd=run_dir)
    assert walled["status"].startswith("landlock ABI")
    assert walled["results"]["good"] == "ok:ran"
    report = (run_dir / "good.rpt").read_text()
    assert "Flow Routing Continuity" in report and "ERROR" not in report
    assert (run_dir / "good.out").stat().st_size > 0
    assert not escape.exists()
    assert walled["results"]["escape"] == "ok:failed"
    assert "ERROR 351" in (run_dir / "escape.rpt").read_text()  # cannot open routing interface file
