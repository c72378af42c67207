"""The rules on a service job that the API and the web pages share (below both: :mod:`capacitysim.service.app`
and :mod:`capacitysim.service.web_jobs` import this module, never each other)."""

from __future__ import annotations

import re

from capacitysim.service import auth
from capacitysim.service.problems import ApiError


def cancel_job(svc, user: dict, job_id: str) -> dict:
    """Dismiss a job (OGC dismiss): cancel it when it has not ended; the one rule of ``DELETE /jobs/{id}`` and the
    job page's cancel button.

    Its owner may (permission ``dismiss-own``), and a role with ``dismiss-any`` (:func:`auth.may_dismiss_job`); a
    job another engineer cannot read is answered as ``GET /jobs/{id}`` answers it. A running job's SWMM runs are
    killed within :data:`capacitysim.network.engine.STOP_POLL_S` seconds (:meth:`Runner.cancel` writes its stop
    file, ``dismissed by NAME``), and the job ends ``dismissed`` with the message ``dismissed by NAME``. Dismissing
    a dismissed job changes nothing.

    Parameters
    ----------
    svc : Service
        The service (its store and runner).
    user : dict
        The user asking (the store's user record: ``id``, ``name``, ``role``).
    job_id : str
        The job's id (32 hexadecimal digits).

    Returns
    -------
    dict
        The job's record after it (the store's; :func:`job_status` makes the status document).

    Raises
    ------
    ApiError
        404 no such job; 403 another user's job the role may not read, or may not dismiss; 409 a job the bank cites
        (its result is evidence and stays).
    """
    from capacitysim.service.bank_api import citing

    j = svc.store.job(job_id) if re.fullmatch(r"[0-9a-f]{32}", str(job_id)) else None
    if j is None:
        raise ApiError(404, "Not found", f"no job {str(job_id)[:100]!r}",
                       type_="http://www.opengis.net/def/exceptions/ogcapi-processes-1/1.0/no-such-job")
    if not auth.may_read_job(user, j):
        svc.store.journal("dismiss jobs", user, job_id, outcome="forbidden")
        raise ApiError(403, "Forbidden", f"job {job_id} belongs to another user; an {user['role']} sees only their own jobs")
    if not auth.may_dismiss_job(user, j):
        svc.store.journal("dismiss", user, job_id, outcome="forbidden")
        raise ApiError(403, "Forbidden", f"the role {user['role']!r} may not dismiss this job")
    if j["status"] == "dismissed":
        return j
    cited = citing(svc, j)
    if cited:
        svc.store.journal("dismiss", user, job_id, {"cited_by": cited}, outcome="refused")
        raise ApiError(409, "Refused", f"job {job_id} is cited by the bank ({', '.join(cited)}); its result is "
                                       "evidence and stays")
    svc.runner.cancel(job_id, f"dismissed by {user['name']}")
    return svc.store.dismiss(job_id, user)
