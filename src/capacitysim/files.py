"""Atomic file writes: the foundation's one way to put a file on disk.

Every output (reports, JSON, generated models, stores' side files) is written to a temporary file in the
same folder, flushed and fsynced, then renamed over the target, so a failure never leaves a half-written file.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _umask_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


_CREATE_MODE = _umask_mode()


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write text (UTF-8) to ``path`` atomically: a temporary file in the same folder, then a rename."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write bytes to ``path`` atomically (temporary file in the same folder, then rename)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        os.fchmod(fd, _CREATE_MODE)  # mkstemp makes 0600; give the file the usual umask-based mode
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return p


def check_output_folder(path: str | os.PathLike, inputs=(), *, option: str, purpose: str = "the outputs") -> Path:
    """Refuse an output folder that is a symbolic link, a file, an input, lies inside an input folder or
    holds an input (:class:`~capacitysim.errors.InputError`, exit 2); the folder may exist or not.

    Parameters
    ----------
    path : path-like
        The folder the user named.
    inputs : iterable of path-like or None
        The files and folders the job reads (``None`` entries are skipped).
    option : str
        The option that named the folder (``--out``, ``--export``), for the message.
    purpose : str
        What the folder is for, for the message.
    """
    from capacitysim.errors import InputError

    p = Path(path)
    if p.is_symlink():
        raise InputError(f"{option} {p}: is a symbolic link; give a plain folder (outputs never follow links)")
    if p.exists() and not p.is_dir():
        raise InputError(f"{option} {p}: is a file; give a folder for {purpose} (created when missing)")
    target = Path(os.path.realpath(p))
    for inp in inputs:
        if inp is None:
            continue
        src = Path(os.path.realpath(inp))
        if target == src or (src.is_dir() and src in target.parents):
            raise InputError(f"{option} {p}: is or lies inside the input {inp}; write it elsewhere")
        if target in src.parents:
            raise InputError(f"{option} {p}: holds the input {inp}; write {purpose} to a folder of their own")
    return p
