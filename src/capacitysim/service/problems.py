"""HTTP errors of the service as JSON problem documents (RFC 7807)."""

from __future__ import annotations

from fastapi.responses import JSONResponse

PROBLEM = "application/problem+json"


class ApiError(Exception):
    """An HTTP error with a JSON problem document."""

    def __init__(self, status: int, title: str, detail: str, **extra):
        super().__init__(detail)
        self.status, self.title, self.detail, self.extra = status, title, detail, extra


def problem(status: int, title: str, detail: str, headers: dict | None = None, **extra) -> JSONResponse:
    kind = extra.pop("type_", None) or f"urn:capacitysim:problem:{title.lower().replace(' ', '-')}"
    body = {"type": kind, "title": title, "status": status, "detail": detail, **extra}
    return JSONResponse(body, status_code=status, headers=headers, media_type=PROBLEM)
