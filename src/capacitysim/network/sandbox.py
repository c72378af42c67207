"""An operating-system wall around the SWMM engine's child process: Linux Landlock through ctypes.

The engine reads a model that may come from anyone (a service upload) and writes the files the model
names (``[FILES]`` ``SAVE OUTFLOWS``, ``RAINFALL`` or ``RDII`` interface files, ``REPORT`` paths).
:func:`confine` makes the calling process, and every process it starts afterwards, unable to create,
write, truncate, rename or remove anything outside the folders of a :class:`Confinement`, or to read
anything outside its read paths. The child (``_child.py``) calls it after its imports (pyswmm,
swmm.toolkit, numpy: the libraries are then mapped) and before it opens the model.

Why Landlock
------------
* **bubblewrap** (or any namespace sandbox) is a Debian package to install, needs unprivileged user
  namespaces (often disabled on servers and in containers) and adds a second process tree between the
  service and the engine.
* **a dedicated unprivileged user** needs root to create and to switch to, and the service often runs
  as one user; it would also not stop the engine from writing wherever that user may write (``/tmp``).
* **seccomp** filters system calls by number and registers, not by path: it cannot allow ``open``
  under the run folder and deny it elsewhere.

Landlock is unprivileged (any process may restrict itself), enforced by the kernel (no user-space
broker to get around), per process (the service itself is not affected), inherited by every child
and not undone by ``execve``, needs no package (three system calls reached with :mod:`ctypes`), and
stacks (a process already confined by its parent can only be restricted further). It restricts root
too.

What the wall handles: every filesystem access right the running kernel's ABI knows (ABI 1: the 13
rights from execute to make-symlink; ABI 2: ``REFER``, linking or renaming across folders; ABI 3:
``TRUNCATE``; ABI 5: ``IOCTL_DEV``). Network and IPC scoping (ABI 4 and 6) are not handled. Rights of
file descriptors opened before :func:`confine` are kept (the engine's ``stdout`` on ``/dev/null``).

Measured behaviour (Linux 6.18, ABI 7, as root; ``tests/network/test_sandbox.py``):

* creating, overwriting, appending to, truncating, renaming or removing a file, or making a folder,
  outside the write folders (a sibling folder, ``/tmp``, the Python installation, a read-only
  folder): ``PermissionError`` (``EACCES``), moves between a write folder and an outside one
  included;
* hard-linking an outside file into a write folder: ``OSError`` ``EXDEV`` (the ``REFER`` right, the
  only refusal Landlock reports as a move across file systems);
* a symbolic link made inside a write folder and pointing outside cannot be written or read through
  (Landlock judges the file reached, not the name): ``EACCES``;
* reading or listing outside the read paths (``/etc/passwd``, ``/etc/hostname``, a folder of
  ``/tmp``): ``EACCES``; reading a *missing* file outside, even in a missing folder:
  ``FileNotFoundError`` (``ENOENT``): the name is resolved before Landlock judges the opened file,
  so existence (and ``os.stat``) can still be probed, contents cannot; *creating* that missing
  file: ``EACCES``;
* ``import json, decimal`` still work (the standard library is under ``sys.base_prefix``), a
  library already loaded is handed back by :mod:`ctypes`, and even a new one loads from a read path
  without ``EXECUTE`` (Landlock checks ``EXECUTE`` at ``execve``, not at ``mmap``): ``EXECUTE`` is
  only for starting programs (the interpreter and its loader in a later child); such a child's
  loader is refused ``/etc/ld.so.cache`` and searches the default library folders instead;
* a process started after the wall has it too; a SWMM run in its run folder succeeds, and
  ``[FILES] SAVE OUTFLOWS`` to a path outside ends in ``ERROR 351`` with no file made.

Operator switch: the environment variable ``CAPACITYSIM_LANDLOCK=off`` makes :func:`landlock_abi`
return 0, so :func:`confine` returns ``'unavailable: disabled by CAPACITYSIM_LANDLOCK=off'`` and
applies nothing (to tell a wall problem from an engine problem while debugging; the tests use it
to simulate a kernel without Landlock).

References
----------
.. [1] Linux kernel documentation, ``Documentation/userspace-api/landlock.rst``, "Landlock:
   unprivileged access control" (https://docs.kernel.org/userspace-api/landlock.html), and the
   user-space header ``include/uapi/linux/landlock.h``.
"""

from __future__ import annotations

import ctypes
import errno
import importlib.util
import json
import os
import platform
import site
import stat
import sys
from dataclasses import dataclass

#: Environment variable of the operator switch: ``off`` (also ``0``, ``no``, ``false``) disables the wall.
ENV_SWITCH = "CAPACITYSIM_LANDLOCK"
#: Environment variable naming the JSON file of a :class:`Confinement` that the engine child applies
#: (:func:`confine_from_env`); written by :func:`capacitysim.network.engine.confinement_for`'s caller.
ENV_FILE = "CAPACITYSIM_SANDBOX_FILE"

# System call numbers (the generic table: the same on x86_64 and aarch64).
_SYS_CREATE_RULESET = 444
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_ARCHES = ("x86_64", "aarch64")

_PR_SET_NO_NEW_PRIVS = 38
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1

# Filesystem access rights (include/uapi/linux/landlock.h).
EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5

#: Rights that apply to a file (a rule on a file with any other right is refused with EINVAL).
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
_READ = READ_FILE | READ_DIR
_WRITE = (WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO
          | MAKE_BLOCK | MAKE_SYM | REFER | TRUNCATE)
#: Files in the read paths that may also be written: writing them discards or changes nothing.
_DISCARD_FILES = ("/dev/null",)


def _abi_rights(abi: int) -> int:
    """Every filesystem right Landlock ABI ``abi`` knows (0 for ABI 0)."""
    if abi < 1:
        return 0
    rights = (1 << 13) - 1  # ABI 1: EXECUTE .. MAKE_SYM
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


class _RulesetAttr(ctypes.Structure):
    # struct landlock_ruleset_attr, first field only (its size tells the kernel which fields are set)
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    # struct landlock_path_beneath_attr, __attribute__((packed)): 12 bytes
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc_handle = None


def _syscall(number: int, *args) -> int:
    """``syscall(number, *args)``; returns the result, or ``-errno`` on failure."""
    global _libc_handle
    if _libc_handle is None:
        _libc_handle = ctypes.CDLL(None, use_errno=True)
        _libc_handle.syscall.restype = ctypes.c_long
    ctypes.set_errno(0)
    result = _libc_handle.syscall(ctypes.c_long(number), *args)
    if result == -1:
        return -ctypes.get_errno()
    return result


def _probe() -> tuple[int, str]:
    """The Landlock ABI of the running kernel and, when 0, why."""
    if os.environ.get(ENV_SWITCH, "").strip().lower() in ("off", "0", "no", "false"):
        return 0, f"disabled by {ENV_SWITCH}={os.environ[ENV_SWITCH]}"
    if not sys.platform.startswith("linux"):
        return 0, f"not Linux ({sys.platform})"
    machine = platform.machine()
    if machine not in _ARCHES or ctypes.sizeof(ctypes.c_void_p) != 8:
        return 0, f"no known Landlock system call numbers for {machine} ({ctypes.sizeof(ctypes.c_void_p) * 8}-bit)"
    try:
        abi = _syscall(_SYS_CREATE_RULESET, ctypes.c_void_p(None), ctypes.c_size_t(0),
                       ctypes.c_uint32(_CREATE_RULESET_VERSION))
    except (OSError, AttributeError) as exc:  # no libc syscall()
        return 0, f"no syscall() in the C library ({exc})"
    if abi > 0:
        return abi, ""
    code = -abi
    if code == errno.ENOSYS:
        return 0, "kernel without Landlock (ENOSYS)"
    if code == errno.EOPNOTSUPP:
        return 0, "Landlock disabled at boot (EOPNOTSUPP; add landlock to the lsm= kernel parameter)"
    if code == errno.EPERM:  # a seccomp profile (some container runtimes) refusing the call
        return 0, "landlock_create_ruleset refused (EPERM, a seccomp filter?)"
    return 0, f"landlock_create_ruleset failed ({errno.errorcode.get(code, code)})"


def landlock_abi() -> int:
    """The highest Landlock ABI version the running kernel supports; 0 when there is none.

    0 on other systems than Linux, on other architectures than x86_64 and aarch64 (64-bit), when
    the kernel has no Landlock (``ENOSYS``) or it is disabled at boot (``EOPNOTSUPP``), and when
    the operator switch ``CAPACITYSIM_LANDLOCK=off`` is set.
    """
    return _probe()[0]


@dataclass(frozen=True)
class Confinement:
    """What the wall allows (paths as given; symbolic links are followed when the wall is applied).

    Attributes
    ----------
    write_dirs : tuple of str
        Folders under which (recursively) files and folders may be read, created, written,
        truncated, renamed, linked and removed.
    read_paths : tuple of str
        Files, or folders (recursively), that may be read (folders also listed). Those under the
        Python installation, ``/usr``, ``/lib`` and ``/lib64`` may also be executed (a later child
        process starts the interpreter and its loader).
    """

    write_dirs: tuple[str, ...] = ()
    read_paths: tuple[str, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "write_dirs", tuple(os.fspath(p) for p in self.write_dirs))
        object.__setattr__(self, "read_paths", tuple(os.fspath(p) for p in self.read_paths))

    def to_json(self) -> str:
        """The confinement as a JSON object (``write_dirs``, ``read_paths``: lists of strings)."""
        return json.dumps({"write_dirs": list(self.write_dirs), "read_paths": list(self.read_paths)})

    @classmethod
    def from_json(cls, text: str) -> Confinement:
        """The confinement written by :meth:`to_json`."""
        data = json.loads(text)
        return cls(write_dirs=tuple(data.get("write_dirs", ())), read_paths=tuple(data.get("read_paths", ())))


def _package_root(name: str) -> str | None:
    """The folder holding the top-level package ``name`` (its site-packages), without importing it
    if it is not already imported; None when it cannot be found."""
    module = sys.modules.get(name)
    locations: list[str] = []
    if module is not None:
        locations = list(getattr(module, "__path__", None) or ())
        if not locations and getattr(module, "__file__", None):
            locations = [os.path.dirname(module.__file__)]
    else:
        try:
            spec = importlib.util.find_spec(name)  # a top-level name: only looked up, not imported
        except (ImportError, ValueError):
            spec = None
        if spec is not None:
            locations = list(spec.submodule_search_locations or ())
            if not locations and spec.origin:
                locations = [os.path.dirname(spec.origin)]
    for loc in locations:
        if os.path.isdir(loc):
            return os.path.dirname(os.path.abspath(loc))
    return None


def _install_roots() -> tuple[str, ...]:
    """Folders whose files may be executed as well as read: the Python installation and the system's."""
    roots = [sys.prefix, sys.base_prefix, sys.exec_prefix, "/usr", "/lib", "/lib64"]
    try:
        roots += list(site.getsitepackages())
    except AttributeError:  # pragma: no cover - old virtualenv's site.py
        pass
    for name in ("swmm", "numpy"):
        root = _package_root(name)
        if root:
            roots.append(root)
    # never the root folder itself (a Python installed with prefix "/" would open everything)
    return tuple(dict.fromkeys(os.path.abspath(r) for r in roots if r and os.path.abspath(r) != "/"))


def default_read_paths() -> tuple[str, ...]:
    """What any Python child needs to keep reading after the wall.

    ``sys.prefix``, ``sys.base_prefix``, ``sys.exec_prefix``, the site-packages folders
    (:func:`site.getsitepackages` and the folder holding the ``swmm`` and ``numpy`` packages, found
    without importing them when they are not imported yet), ``/usr``, ``/lib``, ``/lib64``,
    ``/dev/null``, ``/dev/urandom`` and ``/proc/self``, those that exist. Not ``/etc``, ``/tmp``,
    ``/home``, ``/root`` or the project folder (except a virtual environment inside it, through
    ``sys.prefix``).
    """
    paths = list(_install_roots()) + ["/dev/null", "/dev/urandom", "/proc/self"]
    return tuple(p for p in dict.fromkeys(paths) if os.path.exists(p))


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _add_rule(ruleset_fd: int, path: str, access: int, handled: int) -> bool:
    """One PATH_BENEATH rule; False when ``path`` does not exist (skipped)."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return False
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            access &= _FILE_RIGHTS
        attr = _PathBeneathAttr(allowed_access=access & handled, parent_fd=fd)
        if attr.allowed_access == 0:
            return False
        rc = _syscall(_SYS_ADD_RULE, ctypes.c_int(ruleset_fd), ctypes.c_int(_RULE_PATH_BENEATH),
                      ctypes.byref(attr), ctypes.c_uint32(0))
        if rc < 0:
            raise OSError(-rc, f"landlock_add_rule({path!r}, access={attr.allowed_access:#x}) failed: "
                               f"{os.strerror(-rc)}")
        return True
    finally:
        os.close(fd)


def confine(c: Confinement) -> str:
    """Apply the wall to the calling process and to every process it starts afterwards.

    ``prctl(PR_SET_NO_NEW_PRIVS)``, then a Landlock ruleset handling every filesystem right of the
    running ABI, one rule per existing path of ``c`` (read paths: read, plus execute under the
    Python installation and ``/usr``, ``/lib``, ``/lib64``; ``/dev/null`` may also be written;
    write folders: read and every write, make, remove, refer and truncate right), then
    ``landlock_restrict_self``. It cannot be undone; calling it again restricts further.

    Parameters
    ----------
    c : Confinement
        The folders that may be written and the paths that may be read. Missing paths are skipped.

    Returns
    -------
    str
        One line, ``'landlock ABI <abi>: writes only under <n> folder(s), reads under <m> path(s)'``
        (``n``, ``m``: rules actually added), or ``'unavailable: <reason>'`` when the kernel (or
        the operator switch) offers no Landlock; nothing is applied then.

    Raises
    ------
    OSError
        The kernel supports Landlock but a call failed (the message names the call and the path).
    """
    abi, reason = _probe()
    if abi == 0:
        return f"unavailable: {reason}"
    handled = _abi_rights(abi)
    attr = _RulesetAttr(handled_access_fs=handled)
    ruleset_fd = _syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)),
                          ctypes.c_uint32(0))
    if ruleset_fd < 0:
        raise OSError(-ruleset_fd, f"landlock_create_ruleset(handled_access_fs={handled:#x}) failed: "
                                   f"{os.strerror(-ruleset_fd)}")
    try:
        exec_roots = _install_roots()
        n_write = sum(_add_rule(ruleset_fd, p, _READ | _WRITE, handled) for p in dict.fromkeys(c.write_dirs))
        n_read = 0
        for p in dict.fromkeys(c.read_paths):
            access = _READ
            if _under(os.path.abspath(p), exec_roots):
                access |= EXECUTE
            if os.path.abspath(p) in _DISCARD_FILES:
                access |= WRITE_FILE
            n_read += _add_rule(ruleset_fd, p, access, handled)
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(ctypes.c_int(_PR_SET_NO_NEW_PRIVS), ctypes.c_ulong(1), ctypes.c_ulong(0),
                      ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
            code = ctypes.get_errno()
            raise OSError(code, f"prctl(PR_SET_NO_NEW_PRIVS) failed: {os.strerror(code)}")
        rc = _syscall(_SYS_RESTRICT_SELF, ctypes.c_int(ruleset_fd), ctypes.c_uint32(0))
        if rc < 0:
            raise OSError(-rc, f"landlock_restrict_self failed: {os.strerror(-rc)}")
    finally:
        os.close(ruleset_fd)
    return f"landlock ABI {abi}: writes only under {n_write} folder(s), reads under {n_read} path(s)"


def confine_from_env() -> str:
    """Apply the :class:`Confinement` of the JSON file named by ``$CAPACITYSIM_SANDBOX_FILE`` (the engine child
    calls it after its imports, before it opens the model); ``'not requested'`` when the variable is unset."""
    path = os.environ.get(ENV_FILE)
    if not path:
        return "not requested"
    with open(path, encoding="utf-8") as fh:
        c = Confinement.from_json(fh.read())
    return confine(c)


def status() -> str:
    """What :func:`confine` would do on this machine now, without applying anything: ``'landlock ABI <n>'`` or
    ``'unavailable: <reason>'`` (``capacitysim serve`` says it at start-up, and every job records it)."""
    abi, reason = _probe()
    return f"landlock ABI {abi}" if abi else f"unavailable: {reason}"
