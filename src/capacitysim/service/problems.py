"""HTTP errors of the service as JSON problem documents (RFC 7807).

Every 4xx and 5xx answer of the API is ``application/problem+json``: ``type``, ``title``, ``status``, ``detail``
and, where there is one, the ``field``, the ``value`` and what is ``allowed``. :data:`DOCUMENTED` lists the
statuses a route may answer besides its success, with the problem document's schema: every route of the
OpenAPI document names them (``FastAPI(responses=...)``).
"""

from __future__ import annotations

from fastapi.responses import JSONResponse

PROBLEM = "application/problem+json"

#: The JSON Schema of a problem document (RFC 7807, with capacitysim's ``field``, ``value`` and ``allowed``).
PROBLEM_SCHEMA = {
    "type": "object",
    "required": ["type", "title", "status", "detail"],
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "field": {"type": "string", "description": "the input at fault (a bad input)"},
        "value": {"description": "the value given (a bad input)"},
        "allowed": {"type": "string", "description": "what is allowed (a bad input)"},
        "limit": {"type": "number", "description": "the policy's limit (413, 429)"},
        "policy": {"type": "string", "description": "the named policy that refused (413, 429)"},
    },
}

#: What each error status means, for every route of the OpenAPI document.
ERRORS = {
    400: "Bad input: the problem names the field, the value and what is allowed",
    401: "No valid credentials (`Authorization: Bearer TOKEN`, or the web session's cookie for a GET)",
    403: "The role may not do this, or the job belongs to another user",
    404: "No such process, job, result, report or bank record",
    409: "Refused by a rule or by the state of the job or bank record",
    413: "The request's body is larger than the policy max_body_bytes (max_upload_bytes for /uploads)",
    429: "Too many failed authentications from this address (policy auth_failures_max; Retry-After), or too "
         "many of the user's jobs queued or running (policy max_active_jobs_per_user)",
}
DOCUMENTED = {status: {"description": text, "content": {PROBLEM: {"schema": PROBLEM_SCHEMA}}}
              for status, text in ERRORS.items()}


class ApiError(Exception):
    """An HTTP error with a JSON problem document.

    Parameters
    ----------
    status : int
        The HTTP status.
    title, detail : str
        The problem's title and the sentence saying what is wrong and what to do.
    headers : dict, optional
        Headers of the answer (``Retry-After``, ``WWW-Authenticate``).
    **extra
        More members of the problem document (``field``, ``value``, ``allowed``, ``limit``); ``type_`` its type URI.
    """

    def __init__(self, status: int, title: str, detail: str, headers: dict | None = None, **extra):
        super().__init__(detail)
        self.status, self.title, self.detail, self.headers, self.extra = status, title, detail, headers, extra


def problem(status: int, title: str, detail: str, headers: dict | None = None, **extra) -> JSONResponse:
    """A JSON problem document (``application/problem+json``) answer."""
    kind = extra.pop("type_", None) or f"urn:capacitysim:problem:{title.lower().replace(' ', '-')}"
    body = {"type": kind, "title": title, "status": status, "detail": detail, **extra}
    return JSONResponse(body, status_code=status, headers=headers, media_type=PROBLEM)
