"""Errors once (issue 27, item 4): each error class carries its exit code, HTTP status and kind, and one mapping
(``capacitysim.errors.report_of``) serves the CLI, the service's handlers and its failed jobs."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import capacitysim
from capacitysim.errors import STATUS_OF_KIND, CapacitysimError, InputError, RefusedError, report_of


def _all_error_classes():
    for mod in pkgutil.walk_packages(capacitysim.__path__, "capacitysim."):
        if mod.name.endswith("__main__") or "._child" in mod.name:
            continue  # scripts: they run when imported
        try:
            importlib.import_module(mod.name)
        except ImportError:  # an optional extra not installed: its classes are not counted
            continue
    seen, todo = set(), [CapacitysimError]
    while todo:
        cls = todo.pop()
        if cls not in seen:
            seen.add(cls)
            todo.extend(cls.__subclasses__())
    return sorted(seen, key=lambda c: c.__qualname__)


@pytest.mark.parametrize("cls", _all_error_classes(), ids=lambda c: c.__qualname__)
def test_every_error_class_reports_one_way(cls):
    r = {"exit_code": cls.exit_code, "http_status": cls.http_status, "title": cls.title, "kind": cls.kind}
    if cls.__name__ == "ActiveJobsLimit":  # a refusal of the request's timing (429, with Retry-After), never a job's
        assert (r["exit_code"], r["http_status"]) == (3, 429)
        return
    assert STATUS_OF_KIND[cls.kind] == cls.http_status  # a failed job's status is the route's status
    if cls.__name__ == "BenchCrashError":  # bench keeps exit 1 for a regression: a crash there is 2 (documented)
        assert (r["exit_code"], r["http_status"]) == (2, 500)
    elif issubclass(cls, InputError):
        assert (r["exit_code"], r["http_status"], r["kind"]) == (2, 400, "input")
    elif issubclass(cls, RefusedError):
        assert (r["exit_code"], r["http_status"], r["kind"]) == (3, 409, "refused")
    else:
        assert r["exit_code"] == 1 and r["http_status"] in (500, 503)


def test_the_engine_rejecting_the_users_file_is_an_input_error():
    from capacitysim.network.engine import EngineError, EngineInputError

    exc = EngineInputError("m.inp: SWMM failed: ERROR 205")
    assert isinstance(exc, InputError) and isinstance(exc, EngineError)
    assert report_of(exc) == {"exit_code": 2, "http_status": 400, "title": "Bad input", "kind": "input"}


def test_a_busy_bank_is_unavailable_not_an_error_of_the_request():
    from capacitysim.bank.ledger import BankBusyError

    assert report_of(BankBusyError("locked"))["http_status"] == 503
    assert report_of(ValueError("x")) == {"exit_code": 1, "http_status": 500, "title": "Internal error", "kind": "internal"}


def test_the_service_maps_our_errors_in_one_handler(tmp_path):
    """One handler for every CapacitysimError (its status from the class), besides the field-level one."""
    pytest.importorskip("fastapi")
    from capacitysim.service.app import create_app
    from capacitysim.service.processes import ServiceInputError

    app = create_app(tmp_path / "data", start_runner=False)
    ours = [k for k in app.exception_handlers if isinstance(k, type) and issubclass(k, CapacitysimError)]
    from capacitysim.service.store import ActiveJobsLimit

    assert set(ours) == {CapacitysimError, ServiceInputError, ActiveJobsLimit}  # the two add fields and headers
