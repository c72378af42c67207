"""Server-rendered web pages (placeholder until the pages slice)."""

from __future__ import annotations


def install(app, svc, ApiError) -> None:
    """Add the ``/ui`` pages to ``app``."""
