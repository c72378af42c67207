"""What needs a test-tier marker, seen from inside a process: new processes (the ``subprocess.Popen`` audit event,
:pep:`578`) and in-process starts of pyswmm, dask, uvicorn and psycopg (patched right after their first import).
No pytest here: child processes load it through ``sitecustomize.py``."""

from __future__ import annotations

import importlib.abc
import os
import sys

#: marker -> what it stands for (the marker texts in pyproject.toml say the same)
MARKERS = {
    "swmm": "runs the SWMM engine",
    "dask": "starts a dask cluster or client",
    "server": "starts a capacitysim server (uvicorn) on 127.0.0.1",
    "browser": "drives Chromium through Playwright",
    "postgres": "starts or connects to a PostgreSQL server",
}

_HIT = None  # the callback (marker, what) of install()


def classify_argv(argv) -> str | None:
    """The marker a new process with this ``argv`` needs, or None."""
    if isinstance(argv, (str, bytes, os.PathLike)):
        argv = [argv]
    args = [os.fsdecode(a) if isinstance(a, (bytes, os.PathLike)) else str(a) for a in (argv or [])]
    if not args:
        return None
    names = [os.path.basename(a) for a in args]
    text = " ".join(args)
    if "_child.py" in names or "Simulation(" in text or "solver.swmm_" in text:  # a -c script running pyswmm
        return "swmm"
    if names[0] in ("initdb", "pg_ctl", "postgres", "pg_ctlcluster") or "/postgresql/" in args[0]:
        return "postgres"
    if "playwright" in text or "chrom" in names[0]:
        return "browser"
    if "distributed.cli" in text or names[0] in ("dask", "dask-scheduler", "dask-worker"):
        return "dask"
    if "uvicorn" in text or ("serve" in args and "capacitysim" in text):
        return "server"
    return None


def _shown(argv) -> str:
    return " ".join(str(a) for a in ([argv] if isinstance(argv, (str, bytes, os.PathLike)) else argv or []))[:160]


def _audit(event, args):
    if event == "subprocess.Popen" and _HIT is not None:
        argv = args[1] if args[1] is not None else args[0]
        marker = classify_argv(argv)
        if marker:
            _HIT(marker, "started " + _shown(argv))


def _wrap(owner, name, marker, what):
    orig = vars(owner)[name]
    if isinstance(orig, classmethod):
        f = orig.__func__

        def cm(cls, *a, **k):
            if _HIT is not None:
                _HIT(marker, what)
            return f(cls, *a, **k)

        setattr(owner, name, classmethod(cm))
        return

    def fn(*a, **k):
        if _HIT is not None:
            _HIT(marker, what)
        return orig(*a, **k)

    fn.__wrapped__ = orig
    setattr(owner, name, fn)


PATCHES = {
    "pyswmm": lambda m: _wrap(m.Simulation, "__init__", "swmm", "pyswmm.Simulation"),
    "distributed": lambda m: (_wrap(m.Client, "__init__", "dask", "distributed.Client"),
                              _wrap(m.LocalCluster, "__init__", "dask", "distributed.LocalCluster")),
    "uvicorn": lambda m: _wrap(m.Server, "serve", "server", "uvicorn.Server.serve"),
    "psycopg": lambda m: (_wrap(m.Connection, "connect", "postgres", "psycopg.Connection.connect"),
                          _wrap(m, "connect", "postgres", "psycopg.connect")),  # bound before: psycopg.connect
}


class _AfterImport(importlib.abc.MetaPathFinder):
    """Patch a watched module right after it is first executed (never importing it ourselves)."""

    def find_spec(self, fullname, path, target=None):
        if fullname not in PATCHES:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is None:
                continue
            loader = spec.loader
            if loader is None or not hasattr(loader, "exec_module"):
                return spec
            patch = PATCHES[fullname]

            class _Loader(importlib.abc.Loader):
                def __getattr__(self, name):  # get_resource_reader, is_package, get_code ...
                    return getattr(loader, name)

                def create_module(self, spec):
                    return loader.create_module(spec)

                def exec_module(self, module):
                    loader.exec_module(module)
                    patch(module)

            spec.loader = _Loader()
            return spec
        return None


def install(hit) -> None:
    """Call ``hit(marker, what)`` on every start this process makes from now on (once per process)."""
    global _HIT
    first = _HIT is None
    _HIT = hit
    if not first:
        return
    for name, patch in PATCHES.items():
        if name in sys.modules:
            patch(sys.modules[name])
    sys.meta_path.insert(0, _AfterImport())
    sys.addaudithook(_audit)  # cannot be removed: uninstall() makes it do nothing


def uninstall() -> None:
    global _HIT
    _HIT = lambda marker, what: None  # noqa: E731 (keeps install() from adding a second hook)
