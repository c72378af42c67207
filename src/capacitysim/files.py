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
