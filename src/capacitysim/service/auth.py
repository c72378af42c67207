"""Bearer tokens and roles.

A token is ``cs1.<key id>.<secret>``: the key id finds the user's row, the secret is checked against the
SHA-256 stored there with :func:`hmac.compare_digest` (constant time); the secret itself is never stored
(``capacitysim users add`` prints it once). A user revoked with ``capacitysim users revoke`` (``revoked_at``
set) is refused like an unknown token: 401. Roles (issue 18):

==============  =======================================================================================
engineer        submits jobs and uploads, sees and dismisses their own jobs, requests withdrawals citing them
administrator   everything an engineer does, on every job; the only role that signs off withdrawals
municipal       reads every job and the bank; requests withdrawals (the municipal user whose credits are spent)
reviewer        reads every job, its results and report, and the bank; changes nothing
==============  =======================================================================================
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from capacitysim.service.store import ROLES

TOKEN_PREFIX = "cs1"
#: Random bytes of a token's secret (256 bits) and of its key id (64 bits).
SECRET_BYTES = 32
KEY_ID_BYTES = 8

#: What each role may do. ``read-all``: read every job (without it, only one's own).
PERMISSIONS = {
    "engineer": {"submit", "upload", "dismiss-own", "bank-read", "withdraw", "deposit"},
    "administrator": {"submit", "upload", "dismiss-own", "dismiss-any", "read-all", "bank-read", "withdraw", "deposit",
                      "transfer", "sign-off", "users", "journal"},
    "municipal": {"read-all", "bank-read", "withdraw", "deposit", "transfer"},
    "reviewer": {"read-all", "bank-read", "journal"},
}
assert set(PERMISSIONS) == set(ROLES)


def new_token() -> tuple[str, str, str]:
    """A new token: (token, key id, SHA-256 of its secret)."""
    key_id = secrets.token_hex(KEY_ID_BYTES)
    secret = secrets.token_urlsafe(SECRET_BYTES)
    return f"{TOKEN_PREFIX}.{key_id}.{secret}", key_id, hashlib.sha256(secret.encode()).hexdigest()


def user_for_token(store, token: str | None):
    """The user of a bearer token, or None (unknown, revoked, malformed)."""
    if not token or len(token) > 200:
        return None
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != TOKEN_PREFIX:
        return None
    row = store.user_by_key(parts[1])
    digest = hashlib.sha256(parts[2].encode("utf-8", "replace")).hexdigest()
    if row is None:
        hmac.compare_digest(digest, "0" * 64)  # the same work whether or not the key id exists
        return None
    ok = hmac.compare_digest(digest, row["token_sha256"])
    return row if ok and row["revoked_at"] is None else None  # a revoked user's token is refused (401)


def can(user, permission: str) -> bool:
    return permission in PERMISSIONS.get(user["role"], ())


def may_read_job(user, job: dict) -> bool:
    return can(user, "read-all") or job["owner_id"] == user["id"]


def may_dismiss_job(user, job: dict) -> bool:
    return can(user, "dismiss-any") or (can(user, "dismiss-own") and job["owner_id"] == user["id"])


def csrf_token(secret: bytes, user) -> str:
    """The CSRF token of a user's web session: HMAC-SHA-256 of the user's key id under the server's secret."""
    return hmac.new(secret, f"csrf:{user['key_id']}".encode(), hashlib.sha256).hexdigest()


def csrf_ok(secret: bytes, user, value: str | None) -> bool:
    return bool(value) and hmac.compare_digest(csrf_token(secret, user), str(value))
