"""Schemathesis over the service's OpenAPI document: no 5xx, every 4xx a JSON problem document, and every status
answered documented for its operation in the document (``responses``).

Each operation of ``/openapi.json`` (which needs a token too) gets generated requests (schemathesis strategies
driven by hypothesis) sent with an administrator's token (the role allowed most). The pytest plugin of
schemathesis is not used (it does not run under this pytest); the strategies are the same.
"""

from __future__ import annotations

import pytest

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402

pytestmark = [pytest.mark.server]

#: Generated requests per operation (bounded: the suite stays a few minutes).
EXAMPLES = 25


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory):
    """A server of its own: the generated requests are valid often enough to move credits (seven transfers out of
    the demo subaccount in one CI run), which drained the bank the session's other tests share."""
    from support import seeded_server

    with seeded_server(tmp_path_factory.mktemp("fuzz"), workers=2) as srv:
        yield srv


def test_no_server_error_and_json_errors(fuzz_server):
    server = fuzz_server
    headers = {"Authorization": f"Bearer {server.tokens['administrator']}"}
    schema = schemathesis.openapi.from_url(f"{server.url}/openapi.json", headers=headers)  # the document needs a token
    seen = []
    for result in schema.get_all_operations():
        op = result.ok()
        seen.append(f"{op.method.upper()} {op.path}")
        documented = set(op.definition.raw["responses"])
        assert {"400", "401", "403", "404", "409", "413", "429"} <= documented, (op.method, op.path, documented)

        @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        @given(case=op.as_strategy())
        def run(case):
            response = case.call(base_url=server.url, headers=headers, timeout=120)
            where = (case.method, case.formatted_path, response.status_code, response.text[:300])
            assert response.status_code < 500, where
            assert str(response.status_code) in documented, where
            if 400 <= response.status_code < 500:
                ctype = response.headers["content-type"]
                ctype = ctype[0] if isinstance(ctype, list) else ctype  # schemathesis' Response: a list per header
                assert ctype.startswith("application/problem+json"), where
                body = response.json()
                assert body["status"] == response.status_code and body["detail"], where

        run()
    assert "POST /processes/{process_id}/execution" in seen and "POST /bank/withdrawals" in seen
