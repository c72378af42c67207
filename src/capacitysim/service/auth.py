"""Bearer tokens, web sessions, CSRF tokens, the throttle of failed authentications, and roles.

A token is ``cs1.<key id>.<secret>``: the key id finds the user's row, the secret is checked against the
SHA-256 stored there with :func:`hmac.compare_digest` (constant time); the secret itself is never stored
(``capacitysim users add`` prints it once). A credential is checked against its exact shape
(:data:`TOKEN_RE`, :data:`SESSION_RE`: ASCII, fixed length) before any database is asked, so a NUL byte, a
non-ASCII character or an overlong value is refused (401) like an unknown token. A user revoked with
``capacitysim users revoke`` (``revoked_at`` set) is refused like an unknown token: 401, and their web
sessions end.

A web session is not the token: signing in on ``/ui/login`` with the token makes a new random session id
(:func:`new_session_id`, 256 bits) that only the browser's cookie holds; the store keeps its SHA-256
(:func:`session_key`). The CSRF token of the session's forms is an HMAC of the session's key under the server's
secret (:func:`csrf_token`): it changes with every sign-in and is worthless once the session ends.

:class:`Throttle` counts the failed authentications of each client address (service policy ``auth_failures_max``
per ``auth_failures_window_s``); past it the address is answered 429 with ``Retry-After`` until the oldest
failure of the window is older than the window.

Roles (issue 18):

==============  =======================================================================================
engineer        submits jobs and uploads, sees and dismisses their own jobs, requests withdrawals citing them
administrator   everything an engineer does, on every job; the only role that signs off withdrawals, registers a
                basin's model of record and expires approvals
municipal       reads every job and the bank; requests withdrawals (the municipal user whose credits are spent);
                records the connection of an approved flow for a principal it is bound to
reviewer        reads every job, its results and report, and the bank; changes nothing
==============  =======================================================================================
"""

from __future__ import annotations

import collections
import hashlib
import hmac
import math
import re
import secrets
import threading
import time

from capacitysim.service.store import ROLES

TOKEN_PREFIX = "cs1"
#: Random bytes of a token's secret (256 bits) and of its key id (64 bits).
SECRET_BYTES = 32
KEY_ID_BYTES = 8
#: Random bytes of a web session's id (256 bits).
SESSION_BYTES = 32
#: The exact shape of a token: ``cs1``, 16 hex digits, 43 characters of URL-safe base64 (ASCII only).
TOKEN_RE = re.compile(rf"{TOKEN_PREFIX}\.[0-9a-f]{{{2 * KEY_ID_BYTES}}}\.[A-Za-z0-9_-]{{43}}")
#: The exact shape of a session id (the cookie's value): 43 characters of URL-safe base64.
SESSION_RE = re.compile(r"[A-Za-z0-9_-]{43}")
#: Who the journal names for a failed authentication (nobody is signed in).
ANONYMOUS = {"id": None, "name": "(not signed in)", "role": "anonymous"}

#: What each role may do. ``read-all``: read every job (without it, only one's own). The capacity register
#: (issue 24): ``register-model`` (register a basin's model of record), ``expire`` (release approvals past program
#: policy approval_expiry_years) and ``connect`` (record that an approved flow is in the sewer: an administrator,
#: or a municipal user bound to the application's principal, the municipal user whose sewer receives it).
PERMISSIONS = {
    "engineer": {"submit", "upload", "dismiss-own", "bank-read", "withdraw", "deposit"},
    "administrator": {"submit", "upload", "dismiss-own", "dismiss-any", "read-all", "bank-read", "withdraw", "deposit",
                      "transfer", "sign-off", "users", "journal", "register-model", "expire", "connect"},
    "municipal": {"read-all", "bank-read", "withdraw", "deposit", "transfer", "connect"},
    "reviewer": {"read-all", "bank-read", "journal"},
}
assert set(PERMISSIONS) == set(ROLES)


def new_token() -> tuple[str, str, str]:
    """A new token: (token, key id, SHA-256 of its secret)."""
    key_id = secrets.token_hex(KEY_ID_BYTES)
    secret = secrets.token_urlsafe(SECRET_BYTES)
    return f"{TOKEN_PREFIX}.{key_id}.{secret}", key_id, hashlib.sha256(secret.encode()).hexdigest()


def check_token(store, token) -> tuple[dict | None, str]:
    """The user of a bearer token and why not: ``(user, "ok")`` or ``(None, reason)``.

    Reasons: ``missing`` (no token), ``malformed`` (not the shape of :data:`TOKEN_RE`: NUL bytes, non-ASCII,
    overlong), ``unknown`` (no such key id, or a wrong secret) and ``revoked``.
    """
    if not token:
        return None, "missing"
    if not isinstance(token, str) or not TOKEN_RE.fullmatch(token):
        return None, "malformed"
    _, key_id, secret = token.split(".")
    row = store.user_by_key(key_id)
    digest = hashlib.sha256(secret.encode("ascii")).hexdigest()
    if row is None:
        hmac.compare_digest(digest, "0" * 64)  # the same work whether or not the key id exists
        return None, "unknown"
    if not hmac.compare_digest(digest, row["token_sha256"]):
        return None, "unknown"
    if row["revoked_at"] is not None:
        return None, "revoked"  # a revoked user's token is refused (401)
    return dict(row), "ok"


def user_for_token(store, token: str | None):
    """The user of a bearer token, or None (missing, malformed, unknown, revoked)."""
    return check_token(store, token)[0]


def new_session_id() -> str:
    """A new web session id (:data:`SESSION_BYTES` random bytes, URL-safe base64): the cookie's value."""
    return secrets.token_urlsafe(SESSION_BYTES)


def session_key(session_id: str) -> str:
    """The SHA-256 (hex) of a session id: the store's key of the session (the id itself is never stored)."""
    return hashlib.sha256(session_id.encode("ascii")).hexdigest()


def check_session(store, session_id, *, idle_s: float, absolute_s: float) -> tuple[dict | None, dict | str]:
    """The user of a web session's cookie: ``(user, session)`` or ``(None, reason)``.

    Reasons: ``missing``, ``malformed`` (not :data:`SESSION_RE`), ``unknown``, ``ended`` (signed out or ended
    before), ``revoked`` (its user), ``idle`` and ``absolute`` (service policies ``session_idle_s`` and
    ``session_absolute_s``: the session ends now).
    """
    if not session_id:
        return None, "missing"
    if not isinstance(session_id, str) or not SESSION_RE.fullmatch(session_id):
        return None, "malformed"
    return store.session(session_key(session_id), idle_s=idle_s, absolute_s=absolute_s)


def can(user, permission: str) -> bool:
    return permission in PERMISSIONS.get(user["role"], ())


def may_read_job(user, job: dict) -> bool:
    return can(user, "read-all") or job["owner_id"] == user["id"]


def may_dismiss_job(user, job: dict) -> bool:
    return can(user, "dismiss-any") or (can(user, "dismiss-own") and job["owner_id"] == user["id"])


def csrf_token(secret: bytes, session: dict) -> str:
    """The CSRF token of a web session's forms: HMAC-SHA-256 of the session's key under the server's secret."""
    return hmac.new(secret, f"csrf:{session['id_sha256']}".encode(), hashlib.sha256).hexdigest()


def csrf_ok(secret: bytes, session: dict, value) -> bool:
    """Whether a form's ``csrf`` field is the session's CSRF token (compared in constant time)."""
    if not isinstance(value, str) or not value or not value.isascii():
        return False
    return hmac.compare_digest(csrf_token(secret, session), value)


class Throttle:
    """Failed authentications per client address in a sliding window (service policies ``auth_failures_max``,
    ``auth_failures_window_s``), in this server process's memory.

    Parameters
    ----------
    max_failures : int
        Failures of one address allowed in a window; at that many the address is refused until the oldest
        of them leaves the window.
    window_s : float
        The window [s].
    max_addresses : int
        Addresses followed at most (the oldest are forgotten first): the memory stays bounded whatever the
        number of addresses.
    clock : callable
        Seconds, monotonic (:func:`time.monotonic`; a test may pass its own).
    """

    def __init__(self, max_failures: int, window_s: float, *, max_addresses: int = 100_000, clock=time.monotonic):
        self.max_failures, self.window_s, self.max_addresses, self.clock = max_failures, window_s, max_addresses, clock
        self._failures: collections.OrderedDict[str, collections.deque] = collections.OrderedDict()
        self._lock = threading.Lock()

    def _recent(self, address: str, now: float):
        q = self._failures.get(address)
        if q is None:
            return None
        while q and q[0] <= now - self.window_s:
            q.popleft()
        if not q:
            del self._failures[address]
            return None
        return q

    def retry_after(self, address: str) -> int | None:
        """Seconds until ``address`` may authenticate again, or None when it may now."""
        with self._lock:
            now = self.clock()
            q = self._recent(address, now)
            if q is None or len(q) < self.max_failures:
                return None
            return max(1, math.ceil(q[-self.max_failures] + self.window_s - now))

    def fail(self, address: str) -> int:
        """Count a failed authentication of ``address``; returns its failures in the window."""
        with self._lock:
            now = self.clock()
            q = self._recent(address, now)
            if q is None:
                q = self._failures[address] = collections.deque(maxlen=self.max_failures)
            self._failures.move_to_end(address)
            q.append(now)
            while len(self._failures) > self.max_addresses:
                self._failures.popitem(last=False)
            return len(q)


def client_address(request) -> str:
    """The client's address (the TCP peer, or the proxy's ``X-Forwarded-For`` when ``serve --forwarded-allow-ips``
    trusts it): what failed authentications are counted and journaled by."""
    return request.client.host if request.client else "unknown"
