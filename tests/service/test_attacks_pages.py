"""Attacks on the new web pages through real HTTP (issue 28, item 5): the process forms and the upload form, the job
page with its checks CSV and cancel button, the network maps, the bank's request, confirmation and sign-off pages.

What holds is kept as a regression test: another engineer reads, cancels, maps and cites nothing of the engineer's
(jobs, uploads, checks, maps; 403 or 404 as the API answers); every POST of the pages wants the session's own CSRF
token and no GET changes anything; markup in node, link and file names, in the application id, notes, storm and
criteria text is shown as text (HTML autoescape, SVG escaping; the pages' CSP); uploads are bounded (body, files,
fields) and their names are cut to a safe name; numbers such as 1e309, NaN and -0 are refused by the field's label;
reviewers and municipal users neither submit nor upload nor sign off; a sign-off replayed is decided once; no answer
holds a server path or a traceback.

Three attacks that first did not hold are kept as tests of their fixes: deep nesting in an object field of a form
(``criteria``, ``submittal`` as JSON or TOML) was a 500 and is a 400 (``web_forms.MAX_OBJECT_DEPTH``); the checks
CSV wrote a node named ``=HYPERLINK(...)`` as a formula for the reviewer's spreadsheet and now writes it as text
(``web_jobs.csv_cell``); the job page showed any ``?notice=`` text and now shows only its own notices
(``web_jobs.NOTICES``).
"""

from __future__ import annotations

import contextlib
import csv
import io
import re
import threading
import uuid

import pytest
from bank_support import ASYNC, bind, demo_bindings
from support import wait_final

from capacitysim.io.files import bundled_dir
from capacitysim.service.demo import BASIN, MUNICIPAL

pytestmark = [pytest.mark.server]

#: Markup and template syntax put into a model's names (no spaces: SWMM names are single words).
XSS_NAMES = {
    "MH0004": "=HYPERLINK(0)+cmd|x!A0",  # the basin outlet: the element of a check, hence a cell of the checks CSV
    "MH0003": "<img/src=x/onerror=alert(1)>",
    "MH0007": "]]><script>alert(2)</script>",
    "P0003": "'><svg/onload=alert(3)>",
    "MH0005": "{{7*7}}",
    "MH0006": "</textarea><b>x</b>",
}
#: What must never appear unescaped in a page or a map.
RAW = ("<script>alert", "<img/src", "<svg/onload", "</textarea><b>", "<b>x</b>")
#: The file name the XSS model is uploaded under.
XSS_FILENAME = '<script>alert(9)</script>"><img src=x onerror=alert(8)>.inp'


def _csrf(text: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', text).group(1)


@contextlib.contextmanager
def sign_in(server, role):
    """An httpx client signed in on the pages as ``role`` (the sign-in form with its CSRF token), and the token of its
    forms."""
    import httpx

    with httpx.Client(base_url=server.url, timeout=300, follow_redirects=False) as c:
        page = c.get("/ui/login")
        r = c.post("/ui/login", data={"csrf": _csrf(page.text), "token": server.tokens[role]})
        assert r.status_code == 303 and r.headers["location"] == "/ui", r.text
        c.csrf = _csrf(c.get("/ui").text)
        yield c


def _error(r) -> str:
    m = re.search(r'class="error" role="alert">(.*?)</p>', r.text, re.S)
    return m.group(1) if m else ""


def _no_leak(r, server) -> None:
    """No server path, no traceback in an answer."""
    assert str(server.data) not in r.text and "/tmp/" not in r.text, r.text[:500]
    assert "Traceback" not in r.text and 'File "' not in r.text, r.text[:500]


def _internal_errors(server) -> int:
    return server.log_text().count("internal error, reference")


def xss_model() -> str:
    text = (bundled_dir("models") / "synthetic-50.inp").read_text(encoding="utf-8")
    for old, new in XSS_NAMES.items():
        text = re.sub(rf"\b{old}\b", lambda m: new, text)
    return text


def upload_by_form(c, name: str, data: bytes, process: str = "capacity-demonstration"):
    return c.post("/ui/uploads", data={"csrf": c.csrf, "process": process},
                  files=[("files", (name, data, "application/octet-stream"))])


@pytest.fixture(scope="module")
def xss_job(server):
    """The engineer's upload of a model whose names are markup (through the upload form, under a file name that is
    markup too) and a capacity demonstration on it (through the process form), connected at two of those names:
    ``(upload sha256, job id)``."""
    with sign_in(server, "engineer") as c:
        r = upload_by_form(c, XSS_FILENAME, xss_model().encode())
        assert r.status_code == 303, r.text
        sha = r.headers["location"].split("uploaded=")[1]
        assert re.fullmatch(r"[0-9a-f]{64}", sha)
        r = c.post("/ui/processes/capacity-demonstration", data={
            "csrf": c.csrf, "model": f"upload:{sha}", "storm": "binghamton-1yr-24h",
            "connections": f"{XSS_NAMES['MH0007']}=5000\n{XSS_NAMES['MH0005']}=100\n{XSS_NAMES['MH0006']}=10",
            "application": '<script>alert("app")</script>{{7*7}}'})
        assert r.status_code == 303, _error(r) or r.text
        job = r.headers["location"].rsplit("/", 1)[1]
    with server.client("engineer") as api:
        st = wait_final(api, job)
    assert st["status"] == "successful", st
    return sha, job


# --- (1) cross-user access ---------------------------------------------------------------------------------------


def test_another_engineer_reads_cancels_maps_and_picks_nothing_of_the_engineers(server, xss_job):
    sha, job = xss_job
    with sign_in(server, "engineer2") as eve:
        for path in (f"/ui/jobs/{job}", f"/ui/jobs/{job}/checks.csv", f"/ui/jobs/{job}/map.svg",
                     f"/ui/jobs/{job}/../{job}", f"/jobs/{job}/results", f"/jobs/{job}/report"):
            r = eve.get(path)
            assert r.status_code == 403, (path, r.status_code)
            assert "onerror" not in r.text and "alert" not in r.text
        r = eve.get("/ui/maps/model", params={"model": f"upload:{sha}"})
        assert r.status_code == 404 and "svg" not in r.headers["content-type"]
        # the upload is not offered to her, even when named in ?uploaded=
        r = eve.get("/ui/processes/capacity-demonstration", params={"uploaded": sha})
        assert r.status_code == 200 and sha not in r.text and "onerror_alert" not in r.text
        r = eve.post(f"/ui/jobs/{job}/cancel", data={"csrf": eve.csrf})
        assert r.status_code == 403
        for fields in ({"model": f"upload:{sha}"}, {"model": "synthetic-50", "model_files": f"upload:{sha}"},
                       {"model": "synthetic-50", "storm": f"upload:{sha}"}):
            r = eve.post("/ui/processes/capacity-demonstration", data={"csrf": eve.csrf, **fields})
            assert r.status_code == 400 and "no upload" in _error(r), (fields, _error(r))
    with server.client("administrator") as adm:
        rows = adm.get("/journal", params={"limit": 10000}).json()["journal"]
    seen = {(x["user_name"], x["action"], x["outcome"]) for x in rows if x["target"] in (job, f"upload:{sha}")}
    assert {("Second Engineer", "read jobs", "forbidden"), ("Second Engineer", "read uploads", "forbidden")} <= seen


def test_the_owner_and_a_reader_of_all_jobs_see_the_markup_as_text(server, xss_job):
    sha, job = xss_job
    with sign_in(server, "engineer") as c:
        page = c.get(f"/ui/jobs/{job}")
        assert page.status_code == 200 and page.headers["content-security-policy"].startswith("default-src 'self'")
        assert "script-src" not in page.headers["content-security-policy"]  # default-src 'self': no inline script
        for raw in RAW:
            assert raw not in page.text, raw
        assert "&lt;script&gt;alert(&#34;app&#34;)&lt;/script&gt;{{7*7}}" in page.text  # shown as typed, not evaluated
        assert "script_22_img_src_x_onerror_alert_8_.inp" in page.text  # the file name cut to a safe name
        _no_leak(page, server)
        for path in (f"/ui/jobs/{job}/map.svg", "/ui/maps/model?model=upload:" + sha):
            svg = c.get(path)
            assert svg.status_code == 200 and svg.headers["content-type"].startswith("image/svg+xml")
            assert svg.headers["content-security-policy"] == "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"
            assert svg.headers["x-content-type-options"] == "nosniff"
            for raw in RAW:
                assert raw not in svg.text, (path, raw)
            assert "<script" not in svg.text and not re.search(r"<[^>]*\son[a-z]+\s*=", svg.text)
            assert 'data-node="]]&gt;&lt;script&gt;alert(2)&lt;/script&gt;"' in svg.text
            import xml.dom.minidom

            xml.dom.minidom.parseString(svg.content)  # well-formed: ]]> and quotes do not break out
        # a form refused keeps its values, escaped, inside the textarea
        r = c.post("/ui/processes/capacity-demonstration", data={
            "csrf": c.csrf, "model": "synthetic-50", "connections": "</textarea><script>alert(5)</script>=x"})
        assert r.status_code == 400 and "<script>alert(5)" not in r.text
        assert "&lt;/textarea&gt;&lt;script&gt;alert(5)&lt;/script&gt;=x</textarea>" in r.text
    with sign_in(server, "reviewer") as rev:
        page = rev.get(f"/ui/jobs/{job}")
        assert page.status_code == 200 and not any(raw in page.text for raw in RAW)
        assert 'id="cancel-form"' not in page.text


def test_the_checks_csv_holds_no_formula_from_a_models_names(server, xss_job):
    _, job = xss_job
    with sign_in(server, "reviewer") as rev:  # a reader of every job opens the engineer's CSV
        r = rev.get(f"/ui/jobs/{job}/checks.csv")
    assert r.status_code == 200
    rows = list(csv.DictReader(io.StringIO(r.text)))
    assert rows
    cells = [v for row in rows for k, v in row.items() if k in ("element", "criterion", "citation", "kind", "unit")]
    assert not [v for v in cells if v[:1] in ("=", "+", "@", "\t", "\r") or (v[:1] == "-" and v != "-")]
    assert any(v.startswith("'=HYPERLINK") for v in cells)  # the name kept, as text


# --- (2) CSRF ----------------------------------------------------------------------------------------------------


def test_every_post_of_the_pages_wants_the_sessions_own_csrf_token(server, xss_job):
    _, job = xss_job
    posts = [("/ui/logout", {}), ("/ui/processes/capacity-demonstration", {"model": "synthetic-50"}),
             ("/ui/submit", {"model": "synthetic-50"}), (f"/ui/jobs/{job}/cancel", {}),
             ("/ui/bank/withdrawals", {"application": "CSRF-1"}), ("/ui/bank/register", {"storm": "binghamton-1yr-24h"}),
             ("/ui/bank/confirm", {"application": "CSRF-1", "decision": "approve"}),
             ("/ui/bank/sign-off", {"application": "CSRF-1", "decision": "approve"})]
    with server.client("engineer") as api:
        before = len(api.get("/jobs", params={"limit": 10000}).json()["jobs"])
    with sign_in(server, "engineer") as eng, sign_in(server, "engineer") as eng_b, sign_in(server, "engineer2") as eve, \
            sign_in(server, "administrator") as adm:
        for path, data in posts:
            c = adm if path.startswith(("/ui/bank/confirm", "/ui/bank/sign-off")) else eng
            for tok in (None, "x" * 43, eve.csrf, eng_b.csrf if c is eng else eng.csrf):
                r = c.post(path, data=data | ({} if tok is None else {"csrf": tok}))
                assert r.status_code == 403, (path, tok, r.status_code)
            r = c.post(path, files={"csrf": (None, "zz")}, data=data)
            assert r.status_code == 403, path
        for tok in (None, "y", eve.csrf):
            r = eng.post("/ui/uploads", data={"process": "capacity-demonstration"} | ({"csrf": tok} if tok else {}),
                         files=[("files", ("a.inp", b"[TITLE]\ncsrf", "text/plain"))])
            assert r.status_code == 403
        # no state change by GET
        for path in ("/ui/logout", f"/ui/jobs/{job}/cancel", "/ui/bank/sign-off?application=X&decision=approve",
                     "/ui/bank/confirm", "/ui/uploads", "/ui/bank/withdrawals"):
            assert eng.get(path).status_code == 405, path
        assert eng.get("/ui").status_code == 200  # still signed in: the logouts above did nothing
        # the API takes the session's cookie for reading only
        assert eng.delete(f"/jobs/{job}").status_code == 401
        assert eng.post("/uploads", content=b"abc").status_code == 401
        assert eng.post("/processes/capacity-demonstration/execution", json={"inputs": {"model": "synthetic-50"}}).status_code == 401
    with server.client("engineer") as api:
        assert len(api.get("/jobs", params={"limit": 10000}).json()["jobs"]) == before


# --- (3) reflected parameters ------------------------------------------------------------------------------------


def test_query_parameters_are_shown_as_text_or_not_at_all(server, xss_job):
    _, job = xss_job
    evil = '<script>alert(1)</script>{{7*7}}"><img src=x onerror=alert(2)>'
    with sign_in(server, "engineer") as c:
        r = c.get(f"/ui/jobs/{job}", params={"notice": evil})
        assert r.status_code == 200 and "<script>alert(1)" not in r.text and "<img src=x" not in r.text
        for kind in ("withdrawal", "deposit", "transfer"):
            r = c.get("/ui/bank", params={kind: evil})
            assert r.status_code == 200 and "alert(" not in r.text
        r = c.get("/ui/processes/capacity-demonstration", params={"uploaded": evil})
        assert r.status_code == 200 and "alert(" not in r.text
        for path in ("/ui/maps/model?model=" + evil, "/ui/jobs/<script>alert(1)</script>",
                     "/ui/jobs/<script>alert(1)</script>/map.svg", "/ui/processes/<script>alert(1)</script>"):
            r = c.get(path)
            assert r.status_code == 404, path
            assert r.headers["content-type"] != "text/html" or "<script>alert" not in r.text
            if r.headers["content-type"].startswith("application/problem+json"):
                assert r.headers["x-content-type-options"] == "nosniff"
                assert r.headers["content-security-policy"].startswith("default-src 'none'")


def test_the_job_page_shows_only_its_own_notices(server, xss_job):
    _, job = xss_job
    spoof = "Your session has expired: send your token to helpdesk@evil.example to keep this job"
    with sign_in(server, "engineer") as c:
        r = c.get(f"/ui/jobs/{job}", params={"notice": spoof})
    assert r.status_code == 200
    assert "helpdesk@evil.example" not in r.text


# --- (4) uploads -------------------------------------------------------------------------------------------------


def test_uploads_are_bounded_and_their_names_made_safe(server):
    errors = _internal_errors(server)
    with sign_in(server, "engineer") as c:
        tok = c.csrf
        big = b"x" * (50 * 1024 * 1024 + 10)
        r = upload_by_form(c, "big.inp", big)
        assert r.status_code == 413 and "max_upload_bytes" in r.text

        def chunks():
            yield (b'--B\r\nContent-Disposition: form-data; name="csrf"\r\n\r\n' + tok.encode()
                   + b'\r\n--B\r\nContent-Disposition: form-data; name="files"; filename="a.inp"\r\n\r\n')
            for _ in range(52):
                yield b"y" * (1024 * 1024)
            yield b"\r\n--B--\r\n"

        r = c.post("/ui/uploads", content=chunks(), headers={"Content-Type": "multipart/form-data; boundary=B"})
        assert r.status_code == 413
        files = [("files", (f"f{i}.inp", f"part {i} {uuid.uuid4()}".encode(), "text/plain")) for i in range(22)]
        assert c.post("/ui/uploads", data={"csrf": tok}, files=files).status_code == 400
        r = c.post("/ui/uploads", data={"csrf": tok, **{f"k{i}": "v" for i in range(20)}},
                   files=[("files", ("a.inp", b"abc", "text/plain"))])
        assert r.status_code == 400
        assert c.post("/ui/uploads", content=b"garbage", headers={"Content-Type": "multipart/form-data; boundary=B"}).status_code == 400
        r = upload_by_form(c, "empty.inp", b"")
        assert r.status_code == 400 and "not empty" in _error(r)
        # names: a path, a NUL, markup, a server path: stored under a safe name of the upload's own folder
        for name, safe in (("../../etc/passwd", "passwd"), ("..\\..\\x.inp", "x.inp"), ("a\x00b.inp", None),
                           ("/tmp/attack/service.sqlite", "service.sqlite"), ("....", "upload")):
            r = upload_by_form(c, name, f"[TITLE]\n{uuid.uuid4()}".encode())
            assert r.status_code == 303, (name, r.text)
            sha = r.headers["location"].split("uploaded=")[1]
            page = c.get(r.headers["location"])
            shown = re.search(rf'value="upload:{sha}"[^>]*>([^<]*) \(your upload', page.text).group(1)
            assert "/" not in shown and "\\" not in shown and "\x00" not in shown and ".." not in shown, shown
            if safe:
                assert shown == safe, (name, shown)
        # a "model" that is not one: bytes not UTF-8, an SVG, an HTML page: a 400 problem, never served as SVG
        for name, data in (("bin.inp", b"\xff\xfe\x00garbage\x80\x81"),
                           ("evil.svg", b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(1)</script></svg>'),
                           ("evil.html", b"<html><script>alert(1)</script>[JUNCTIONS]\nA 1 2\n")):
            r = upload_by_form(c, name, data)
            sha = r.headers["location"].split("uploaded=")[1]
            m = c.get("/ui/maps/model", params={"model": f"upload:{sha}"})
            assert m.status_code == 400 and m.headers["content-type"].startswith("application/problem+json"), m.text
            _no_leak(m, server)
    assert _internal_errors(server) == errors


# --- (5) input abuse ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fields, said", [
    ({"connections": "MH0003=1e309"}, "Connections, line 1 (gpd)"),
    ({"connections": "MH0003=NaN"}, "Connections, line 1"),
    ({"connections": "MH0003=-0"}, "(0, 1e+09]"),
    ({"spinup_hr": "1e309"}, "Spinup [h]"),
    ({"spinup_hr": "nan"}, "Spinup [h]"),
    ({"peaking": "nan"}, "Peaking"),
    ({"storm": "type2:1e308in"}, "depth must be &gt; 0 and &lt;= 200 in"),
    ({"storm": "type2:nanin"}, "Storm"),
    ({"storm": "<script>alert(1)</script>"}, "Storm: got &#34;&lt;script&gt;"),
    ({"storm": "../../../etc/passwd"}, "Storm"),
    ({"model": "../../tokens.json"}, "Model"),
    ({"criteria": '{"max_d_over_d": NaN}'}, "Criteria (max_d_over_d)"),
    ({"criteria": "max_d_over_d = inf"}, "Criteria (max_d_over_d)"),
    ({"criteria": "a = 1" + "0" * 5000}, "Criteria: got"),
    ({"submittal": '{"a": Infinity}'}, "Submittal (a)"),
])
def test_abusive_values_are_refused_by_the_fields_label(server, fields, said):
    errors = _internal_errors(server)
    with sign_in(server, "engineer") as c:
        r = c.post("/ui/processes/capacity-demonstration", data={"csrf": c.csrf, "model": "synthetic-50", **fields})
    assert r.status_code == 400, r.text[:300]
    assert said in _error(r), _error(r)
    assert "<script>alert" not in r.text
    _no_leak(r, server)
    assert _internal_errors(server) == errors


def test_oversized_forms_odd_ids_and_paths(server):
    errors = _internal_errors(server)
    with sign_in(server, "engineer") as c:
        r = c.post("/ui/processes/capacity-demonstration", data={"csrf": c.csrf, "connections": "MH0003=1\n" * 120_000})
        assert r.status_code == 413
        r = c.post("/ui/processes/capacity-demonstration", data={"csrf": c.csrf, **{f"f{i}": "1" for i in range(250)}})
        assert r.status_code == 400
        r = c.post("/ui/bank/withdrawals", data={"csrf": c.csrf, **{f"f{i}": "1" for i in range(5000)}})
        assert r.status_code == 400
        r = c.post("/ui/processes/capacity-demonstration", data={"csrf": c.csrf}, files=[("model", ("a", b"x"))])
        assert r.status_code == 400
        r = c.post("/ui/processes/headroom", data={"csrf": c.csrf, "model": "synthetic-50", "nodes": "MH0003\n" * 50_000})
        assert r.status_code == 400 and "Nodes" in _error(r)
        for path in ("/ui/processes/..%2f", "/ui/processes/..%2F..%2Ftokens.json", "/ui/processes/" + "a" * 5000,
                     "/ui/processes/capacity-demonstration%00", "/ui/processes/__class__", "/ui/jobs/" + "0" * 32,
                     "/ui/jobs/-1", "/ui/jobs/..%2F..%2Fetc", "/ui/jobs/" + "A" * 32, "/ui/jobs/%00/checks.csv",
                     "/ui/maps/model?model=upload:" + "0" * 64, "/ui/maps/model?model=upload:../../x",
                     "/ui/maps/model?model=../../../etc/passwd", "/ui/maps/model",
                     "/ui/bank/notes/%3Cscript%3E"):
            r = c.get(path)
            assert r.status_code == 404, (path, r.status_code)
            _no_leak(r, server)
        r = c.post("/ui/processes/..%2f..%2fx", data={"csrf": c.csrf})
        assert r.status_code in (303, 404, 405)
    assert _internal_errors(server) == errors


@pytest.mark.parametrize("criteria", ["a = " + "[" * 5000 + "]" * 5000, '{"a":' + "[" * 5000 + "]" * 5000 + "}"],
                         ids=["toml", "json"])
def test_deeply_nested_criteria_are_a_400(server, criteria):
    with sign_in(server, "engineer") as c:
        r = c.post("/ui/processes/capacity-demonstration",
                   data={"csrf": c.csrf, "model": "synthetic-50", "criteria": criteria})
    assert r.status_code == 400, r.text[:300]


# --- (6) roles ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["reviewer", "municipal"])
def test_readers_neither_submit_nor_upload_nor_sign_off_through_the_pages(server, role):
    with sign_in(server, role) as c:
        for path in ("/ui/processes/capacity-demonstration", "/ui/submit"):
            r = c.post(path, data={"csrf": c.csrf, "model": "synthetic-50"})
            assert r.status_code == 403 and "does not submit jobs" in _error(r), path
        r = upload_by_form(c, "a.inp", b"[TITLE]\nrole")
        assert r.status_code == 403 and "does not upload files" in _error(r)
        assert c.post("/ui/bank/register", data={"csrf": c.csrf, "storm": "binghamton-1yr-24h"}).status_code == 403
        for path in ("/ui/bank/confirm", "/ui/bank/sign-off"):
            r = c.post(path, data={"csrf": c.csrf, "application": "X", "decision": "approve"})
            assert r.status_code == 403, path
        if role == "reviewer":
            assert c.get("/ui/bank/withdrawals/new").status_code == 403
            r = c.post("/ui/bank/withdrawals", data={"csrf": c.csrf, "application": "REV-1"})
            assert r.status_code == 403


def _passing_jobs(server, client, gpd: int) -> tuple[str, str]:
    cap = client.post("/processes/capacity-demonstration/execution", headers=ASYNC, json={"inputs": {
        "model": "synthetic-50", "storm": "binghamton-1yr-24h", "connections": [{"node": "MH0003", "gpd": gpd}]}}).json()["jobID"]
    spd = client.post("/processes/spdes-check/execution", headers=ASYNC, json={"inputs": {
        "plant": "sample-wwtp", "flows": server.flows, "added_gpd": [gpd]}}).json()["jobID"]
    cap, spd = wait_final(client, cap), wait_final(client, spd)
    assert cap["verdict"] == "pass" and spd["status"] == "successful", (cap, spd)
    return cap["jobID"], spd["jobID"]


def test_a_withdrawal_cites_only_own_jobs_shows_markup_as_text_and_is_signed_off_once(server):
    demo_bindings(server)
    bind(server, "Second Engineer")
    app = f"ATK-{uuid.uuid4().hex[:6]}"
    with server.client("engineer") as api:
        cap, spd = _passing_jobs(server, api, 3217)
    values = {"application": app, "basin": BASIN, "owner": MUNICIPAL, "node": "MH0003", "peak_flow_gpd": "3,217",
              "capacity_job": cap, "spdes_job": spd, "application_approval": f"H2-{app}",
              "description": "</textarea><script>alert(3)</script>{{7*7}}"}
    with sign_in(server, "engineer2") as eve:
        r = eve.post("/ui/bank/withdrawals", data={"csrf": eve.csrf, **values, "application": app + "-EVE"})
        assert r.status_code == 403 and "belongs to another user" in _error(r), _error(r)
    with sign_in(server, "engineer") as eng:
        for k, v in (("peak_flow_gpd", "1e309"), ("peak_flow_gpd", "nan"), ("peak_flow_gpd", "-0"),
                     ("capacity_job", "../../x"), ("basin", "x" * 3000)):
            r = eng.post("/ui/bank/withdrawals", data={"csrf": eng.csrf, **values, k: v})
            assert r.status_code == 400, (k, v, r.status_code)
            assert "<script>alert" not in r.text
        r = eng.post("/ui/bank/withdrawals", data={"csrf": eng.csrf, **values})
        assert r.status_code == 303, _error(r)
    with sign_in(server, "administrator") as adm:
        page = adm.get("/ui/bank")
        assert "<script>alert" not in page.text
        r = adm.post("/ui/bank/confirm", data={"csrf": adm.csrf, "application": app, "decision": "approve",
                                                "note": "</textarea><script>alert(4)</script>{{7*7}}"})
        assert r.status_code == 200 and "<script>alert" not in r.text and "{{7*7}}" in r.text
        assert r.headers["content-security-policy"].startswith("default-src 'self'")
        assert re.findall(r'<form[^>]*action="([^"]+)"', r.text) == ["/ui/logout", "/ui/bank/sign-off"]
        codes: list[int] = []

        def sign_off():
            codes.append(adm.post("/ui/bank/sign-off", data={"csrf": adm.csrf, "application": app,
                                                               "decision": "approve", "note": "ok"}).status_code)

        threads = [threading.Thread(target=sign_off) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(codes) == [303, 409, 409, 409], codes
        r = adm.post("/ui/bank/sign-off", data={"csrf": adm.csrf, "application": app, "decision": "reject", "note": "flip"})
        assert r.status_code == 409
        r = adm.post("/ui/bank/confirm", data={"csrf": adm.csrf, "application": app, "decision": "approve"})
        assert r.status_code == 409
        _no_leak(r, server)
