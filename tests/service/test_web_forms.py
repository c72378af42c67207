"""The process forms and the job page (issue 28, item 5): a form for every process generated from its inputs, the
same JSON inputs and refusals as the API (named by the form's labels and lines), the upload of a model with its
files, and a job page with formatted numbers, tables, downloads and cancel, through real HTTP."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest

from support import wait_final

from capacitysim.processes import registry
from capacitysim.service.processes import ServiceInputError, prepare
from capacitysim.service.web_forms import field_label, fields_of, form_error, form_inputs, label_of

MODELS = Path(__file__).resolve().parents[1] / "data" / "models" / "external files"


class Form(dict):
    """A submitted form (what starlette's FormData offers the handler: ``get`` and ``getlist``)."""

    def getlist(self, key):
        v = self.get(key, [])
        return v if isinstance(v, list) else [v]


# --- the form model (no server) ---------------------------------------------------------------------------------


@pytest.mark.parametrize("pid", sorted(registry()))
def test_every_service_input_has_a_field(pid):
    proc = registry()[pid]
    names = [f.name for f in fields_of(pid, [])]
    assert names == [i.name for i in proc.inputs if i.service]


def test_a_form_gives_the_apis_json_inputs():
    inputs, lines = form_inputs("capacity-demonstration", Form(
        model="synthetic-50", storm="type2:3.2in", connections="MH0003=0.05MGD\n\n MH0004 = 2,500 ",
        spinup_hr="12", next_steps="no", criteria='max_d_over_d = 0.75', peaking=""))
    assert inputs == {"model": "synthetic-50", "storm": "type2:3.2in",
                      "connections": [{"node": "MH0003", "gpd": pytest.approx(50_000)}, {"node": "MH0004", "gpd": 2500}],
                      "spinup_hr": 12, "criteria": {"max_d_over_d": 0.75}, "next_steps": False}
    assert lines == {"connections": [1, 3]}
    # the API's validator takes them as they are
    prepare("capacity-demonstration", {"inputs": inputs}, lambda sha: None)


@pytest.mark.parametrize("form, message", [
    (dict(connections="MH0003"), "Connections, line 1: got \"MH0003\"; allowed: NODE=GPD"),
    (dict(connections="MH0003=5 furlongs"), "Connections, line 1"),
    (dict(next_steps="maybe"), "Next steps: got \"maybe\"; allowed: yes, no or the default"),
    (dict(spinup_hr="six"), "Spinup [h]: got \"six\""),
    (dict(criteria="{not json"), "Criteria: got"),
])
def test_a_bad_field_is_named_by_its_label(form, message):
    with pytest.raises(ServiceInputError) as err:
        form_inputs("capacity-demonstration", Form(model="synthetic-50", **form))
    assert str(err.value).startswith(message)


def test_the_validators_refusal_names_the_label_and_line():
    inputs, lines = form_inputs("capacity-demonstration", Form(model="synthetic-50",
                                                               connections="MH0003=5000\n\n\nNOPE=10"))
    with pytest.raises(ServiceInputError) as err:
        prepare("capacity-demonstration", {"inputs": inputs}, lambda sha: None)
    assert err.value.field == "inputs.connections[1].node"
    assert form_error(err.value, lines).startswith('Connections, line 4 (node): got "NOPE"')
    assert field_label("inputs.spinup_hr", {}) == "Spinup [h]" and label_of("added_gpd") == "Added [gpd]"


def test_a_measured_ii_line_is_written_as_on_the_command_line():
    """issue 29, item 5: an item holding a list (the nodes) is a line as --measured-ii takes it, read by its parser."""
    ref = "upload:" + "a" * 64
    inputs, lines = form_inputs("capacity-demonstration", Form(
        model="synthetic-50", measured_ii=f"\nanalysis={ref},nodes=MH0003;MH0004,period=change"))
    assert inputs["measured_ii"] == [{"analysis": ref, "nodes": ["MH0003", "MH0004"], "period": "change"}]
    assert lines == {"measured_ii": [2]}
    prepare("capacity-demonstration", {"inputs": inputs}, lambda sha: __file__)
    with pytest.raises(ServiceInputError) as err:
        form_inputs("capacity-demonstration", Form(model="synthetic-50", measured_ii=f"analysis={ref},nodes=A,period=x"))
    assert str(err.value).startswith("Measured ii, line 1: got") and "period='x'; allowed: post, pre, change" in str(err.value)
    help_ = next(f for f in fields_of("capacity-demonstration", []) if f.name == "measured_ii").help
    assert "--measured-ii" in help_ and "analysis=...,nodes=..." in help_


# --- through real HTTP ------------------------------------------------------------------------------------------


def _csrf(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)


@contextlib.contextmanager
def _signed_in(server, role):
    import httpx

    with httpx.Client(base_url=server.url, timeout=300, follow_redirects=False) as c:
        r = c.post("/ui/login", data={"csrf": _csrf(c.get("/ui/login").text), "token": server.tokens[role]})
        assert r.status_code == 303
        yield c


@pytest.mark.server
def test_every_process_has_a_page_with_every_field(server):
    with _signed_in(server, "engineer") as c:
        listing = c.get("/ui/processes")
        for pid, proc in registry().items():
            assert f'href="/ui/processes/{pid}"' in listing.text
            page = c.get(f"/ui/processes/{pid}")
            assert page.status_code == 200 and 'id="process-form"' in page.text
            for inp in proc.inputs:
                if inp.service:
                    assert f'id="field-{inp.name}"' in page.text, (pid, inp.name)
        assert c.get("/ui/processes/nothing").status_code == 404


@pytest.mark.server
def test_upload_a_model_with_its_file_run_it_and_read_the_job_page(server):
    text = (MODELS / "external-files.inp").read_bytes().replace(b'"rain data/rain.dat"', b"rain.dat")
    rain = (MODELS / "rain data" / "rain.dat").read_bytes()
    with _signed_in(server, "engineer") as c, _signed_in(server, "engineer2") as other:
        form = c.get("/ui/processes/capacity-demonstration")
        csrf = _csrf(form.text)
        r = c.post("/ui/uploads", data={"csrf": csrf, "process": "capacity-demonstration"},
                   files=[("files", ("external-files.inp", text)), ("files", ("rain.dat", rain))])
        assert r.status_code == 303 and "uploaded=" in r.headers["location"], r.text
        page = c.get(r.headers["location"])
        model = re.search(r'<option value="(upload:[0-9a-f]{64})" selected>external-files.inp', page.text)
        assert model, "the uploaded model is chosen"
        ticked = re.findall(r'name="model_files" value="(upload:[0-9a-f]{64})" checked', page.text)
        assert len(ticked) == 1, "its rain file is ticked"
        # without its file the model is refused on the form, named by the label
        r = c.post("/ui/processes/capacity-demonstration", data={"csrf": csrf, "model": model.group(1),
                                                                 "connections": "J1=5000"})
        assert r.status_code == 400 and "rain.dat" in r.text and "Model" in r.text and "inputs.model" not in r.text
        r = c.post("/ui/processes/capacity-demonstration", data={"csrf": csrf, "model": model.group(1),
                                                                 "model_files": ticked, "connections": "J1=5000"})
        assert r.status_code == 303, r.text
        job = r.headers["location"].rsplit("/", 1)[1]
        with server.client("engineer") as api:
            assert wait_final(api, job)["status"] == "successful"
        page = c.get(f"/ui/jobs/{job}").text
        assert 'id="verdict"' in page and 'id="checks"' in page and 'id="inputs"' in page
        assert "external-files.inp (upload" in page and "J1 = 5,000 gpd" in page
        assert not re.search(r"\d\.\d{6,}", re.sub(r"<code>[^<]*</code>", "", page)), "a number unformatted"
        assert str(server.data) not in page, "a server path on the page"
        csv = c.get(f"/ui/jobs/{job}/checks.csv")
        assert csv.status_code == 200 and csv.text.startswith("result,criterion,element,kind,before,after")
        assert len(csv.text.splitlines()) > 3
        # another engineer sees neither the page nor its CSV
        for path in (f"/ui/jobs/{job}", f"/ui/jobs/{job}/checks.csv"):
            assert other.get(path).status_code == 403


@pytest.mark.server
def test_the_owner_cancels_a_running_job_from_its_page(server):
    with _signed_in(server, "engineer") as c, _signed_in(server, "reviewer") as rev:
        csrf = _csrf(c.get("/ui/processes/capacity-demonstration").text)
        r = c.post("/ui/processes/capacity-demonstration", data={"csrf": csrf, "model": "synthetic-500",
                                                                 "connections": "MH0003=5000"})
        assert r.status_code == 303, r.text
        path = r.headers["location"]
        job = path.rsplit("/", 1)[1]
        page = c.get(path).text
        assert 'id="cancel"' in page
        # a reviewer reads it but has no cancel button, and a forged post is refused
        rp = rev.get(path)
        assert rp.status_code == 200 and 'id="cancel"' not in rp.text
        assert rev.post(f"{path}/cancel", data={"csrf": _csrf(rp.text)}).status_code == 403
        assert c.post(f"{path}/cancel", data={}).status_code == 403  # no CSRF token
        r = c.post(f"{path}/cancel", data={"csrf": csrf})
        assert r.status_code == 303 and r.headers["location"].endswith("notice=cancelled")
        with server.client("engineer") as api:
            st = wait_final(api, job)
        assert st["status"] == "dismissed" and "dismissed by" in st["message"]
        page = c.get(r.headers["location"]).text
        assert 'id="cancel"' not in page and 'class="dismissed"' in page


@pytest.mark.server
def test_the_job_page_of_every_kind_of_document_renders(server):
    """A job page reads any process's document (keys it lacks are not an error: no 500), and a failed job's."""
    runs = {"spdes-check": {"plant": "sample-wwtp", "flows": server.flows, "added_gpd": [5000]},
            "credits-quantification": {"project": "elm-street-separation-to-combined"},
            "detention-design": {"site": "new-building", "swmm": False},
            "capacity-demonstration": {"model": "synthetic-50", "connections": [{"node": "MH0003", "gpd": 1e9}]}}
    with server.client("engineer") as api, _signed_in(server, "engineer") as c:
        for pid, inputs in runs.items():
            r = api.post(f"/processes/{pid}/execution", json={"inputs": inputs}, headers={"Prefer": "respond-async"})
            assert r.status_code == 201, r.text
            st = wait_final(api, r.json()["jobID"])
            page = c.get(f"/ui/jobs/{st['jobID']}")
            assert page.status_code == 200, (pid, page.text[:500])
            assert f'class="{st["status"]}"' in page.text and 'id="inputs"' in page.text


def test_csv_cells_that_a_spreadsheet_would_run_are_text():
    from capacitysim.service.web_jobs import csv_cell

    for bad in ("=1+1", "+A1", "@SUM(A1)", "\t=1", "\r=1", "-A1+cmd"):
        assert csv_cell(bad) == "'" + bad
    for ok in ("MH0003", "-", "-0.25", "-1,200", 3.5, -2, None, ""):
        assert csv_cell(ok) == ok


def test_an_object_field_nested_too_deep_is_refused_before_parsing():
    from capacitysim.service.web_forms import MAX_OBJECT_DEPTH

    deep = "a = " + "[" * (MAX_OBJECT_DEPTH + 1) + "]" * (MAX_OBJECT_DEPTH + 1)
    with pytest.raises(ServiceInputError) as err:
        form_inputs("capacity-demonstration", Form(model="synthetic-50", criteria=deep))
    assert "nested" in str(err.value) and str(err.value).startswith("Criteria")
