"""The web pages' Jinja2 templates (kept in Python so the wheel needs no extra package data).

The environment autoescapes every value (``autoescape=True``): a node name, a note or a user's name with
``<script>`` in it is shown as text. Every form carries the session's CSRF token (``csrf``).
"""

from __future__ import annotations

BASE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ title }} - capacitysim</title>
{% if refresh %}<meta http-equiv="refresh" content="{{ refresh }}">{% endif %}
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font-family:system-ui,sans-serif;margin:0 auto;max-width:60rem;padding:1rem;color:#222}
nav{display:flex;gap:1rem;align-items:center;border-bottom:1px solid #ccc;padding-bottom:.5rem;margin-bottom:1rem}
nav .who{margin-left:auto;color:#555}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.3rem;text-align:left;vertical-align:top}
.pass{color:#060;font-weight:bold}.fail,.failed{color:#a00;font-weight:bold}.untrusted{color:#a60;font-weight:bold}
.error{background:#fee;border:1px solid #c00;padding:.5rem}.note{color:#555}
textarea,input[type=text],input[type=password],select{width:100%;max-width:40rem;box-sizing:border-box}
progress{width:20rem}
</style></head><body>
{% if user %}<nav><a href="/ui">Jobs</a><a href="/ui/processes" id="nav-new">New job</a><a href="/ui/bank">Bank</a>
<a href="/ui/bank/register" id="nav-register">Capacity register</a>
<span class="who">{{ user.name }} ({{ user.role }})</span>
<form method="post" action="/ui/logout"><input type="hidden" name="csrf" value="{{ csrf }}"><button>Sign out</button></form></nav>{% endif %}
<h1>{{ title }}</h1>
{% if error %}<p class="error" role="alert">{{ error }}</p>{% endif %}
{% block body %}{% endblock %}
</body></html>
"""

LOGIN = """{% extends "base.html" %}{% block body %}
<form method="post" action="/ui/login">
<input type="hidden" name="csrf" value="{{ csrf }}">
<p><label>Bearer token (from <code>capacitysim users add</code>)<br>
<input type="password" name="token" id="token" autocomplete="off" required></label></p>
<p><button id="sign-in">Sign in</button></p></form>{% endblock %}
"""

JOBS = """{% extends "base.html" %}{% block body %}
<table id="jobs"><thead><tr><th>job</th><th>process</th><th>owner</th><th>status</th><th>verdict</th><th>created</th></tr></thead><tbody>
{% for j in jobs %}<tr><td><a href="/ui/jobs/{{ j.id }}">{{ j.id[:8] }}</a></td><td>{{ j.process }}</td><td>{{ j.owner }}</td>
<td class="{{ j.status }}">{{ j.status }}</td><td class="{{ j.verdict or '' }}">{{ j.verdict or '' }}</td><td>{{ j.created_at }}</td></tr>
{% else %}<tr><td colspan="6">No jobs yet.</td></tr>{% endfor %}</tbody></table>{% endblock %}
"""

PROCESSES = """{% extends "base.html" %}{% block body %}
<p>Each process is a command of <code>capacitysim</code>; a job runs it on the server and keeps its inputs, result and report.</p>
<table id="processes"><thead><tr><th>process</th><th>what it does</th><th>command line</th></tr></thead><tbody>
{% for p in procs %}<tr><td><a href="/ui/processes/{{ p.id }}" id="process-{{ p.id }}">{{ p.title }}</a></td><td>{{ p.description }}</td><td><code>{{ p.command }}</code></td></tr>{% endfor %}
</tbody></table>{% if not can_submit %}<p class="note">Your role reads jobs; it does not submit them.</p>{% endif %}{% endblock %}
"""

PROCESS = """{% extends "base.html" %}
{% macro field(f) %}{% set v = values.get(f.name, '') %}<p class="field" id="field-{{ f.name }}">
{% if f.kind == 'uploads' %}<fieldset><legend>{{ f.label }}</legend>{% for val, shown in f.options %}
<label><input type="checkbox" name="{{ f.name }}" value="{{ val }}" {% if val in (v or []) %}checked{% endif %}> {{ shown }}</label><br>
{% else %}<span class="note">No uploads yet.</span>{% endfor %}</fieldset>
{% else %}<label for="{{ f.name }}">{{ f.label }}{% if f.required %} (required){% endif %}</label><br>
{% if f.kind in ('choice', 'flag') %}<select name="{{ f.name }}" id="{{ f.name }}">{% for val, shown in f.options %}
<option value="{{ val }}" {% if val == v %}selected{% endif %}>{{ shown }}</option>{% endfor %}</select>
{% elif f.kind in ('lines', 'object') %}<textarea name="{{ f.name }}" id="{{ f.name }}" rows="{{ 6 if f.kind == 'object' else 4 }}">{{ v }}</textarea>
{% elif f.kind == 'date' %}<input type="date" name="{{ f.name }}" id="{{ f.name }}" value="{{ v }}">
{% else %}<input type="text" name="{{ f.name }}" id="{{ f.name }}" value="{{ v }}"{% if f.suggestions %} list="{{ f.name }}-list"{% endif %}>
{% if f.suggestions %}<datalist id="{{ f.name }}-list">{% for o in f.suggestions %}<option value="{{ o }}">{% endfor %}</datalist>{% endif %}{% endif %}
{% endif %}{% if f.help %}<br><span class="note">{{ f.help }}</span>{% endif %}</p>{% endmacro %}
{% block body %}
<p class="note">{{ proc.description }} On the command line: <code>{{ proc.command }}</code>.</p>
{% if can_upload %}<form method="post" action="/ui/uploads" enctype="multipart/form-data" id="upload-form">
<input type="hidden" name="csrf" value="{{ csrf }}"><input type="hidden" name="process" value="{{ proc.id }}">
<fieldset><legend>Upload files{% if proc.companion_input %}: a model and the files it names{% endif %}</legend>
<input type="file" name="files" id="files" multiple> <button id="upload">Upload</button><br>
<span class="note">Uploads are yours alone; they are then offered below{% if proc.companion_input %}, the model chosen and its files ticked{% endif %}.</span>
</fieldset></form>{% endif %}
{% if can_submit %}<form method="post" action="/ui/processes/{{ proc.id }}" id="process-form">
<input type="hidden" name="csrf" value="{{ csrf }}">
{% for f in fields if not f.advanced %}{{ field(f) }}{% endfor %}
{% if map_input %}<div class="network-map" id="map" data-src="/ui/maps/model?model={{ (values.get('model') or (fields[0].options[0][0] if fields[0].options else '')) | urlencode }}"
 data-target="#{{ map_input }}" data-model-select="#model"><span class="note">The model's map: click a manhole to add it to {{ map_input }}.</span></div>{% endif %}
{% if fields | selectattr('advanced') | list %}<details><summary>More options</summary>{% for f in fields if f.advanced %}{{ field(f) }}{% endfor %}</details>{% endif %}
<p><button id="run">Run {{ proc.title | lower }}</button></p></form>
<script src="/ui/assets/map.js"></script>
{% else %}<p class="note">Your role reads jobs; it does not submit them.</p>{% endif %}
{% endblock %}
"""

JOB = """{% extends "base.html" %}{% block body %}
<p>Process <b>{{ job.process }}</b>, submitted by {{ job.owner }} on {{ job.created_at }}; attempt {{ job.attempts }}.</p>
<p>Status: <b id="status" class="{{ job.status }}">{{ job.status }}</b>
{% if job.status in ("accepted", "running") %}<progress id="progress" max="100" value="{{ job.progress }}">{{ job.progress }} %</progress>{% endif %}
<span class="note">{{ job.message }}</span></p>
{% if job.status == "successful" %}
<p>Verdict: <b id="verdict" class="{{ job.verdict or '' }}">{{ (job.verdict or 'done') | upper }}</b></p>
<p><a id="results" href="/jobs/{{ job.id }}/results">Result document (JSON)</a>
{% if job.report_path %} | <a id="report" href="/jobs/{{ job.id }}/report">HTML report</a>{% endif %}</p>
{% if checks %}<h2>Checks</h2><table id="checks"><thead><tr><th></th><th>criterion</th><th>element</th><th>before</th><th>after</th><th>limit</th></tr></thead><tbody>
{% for c in checks %}<tr><td class="{{ 'pass' if c.passed else 'fail' }}">{{ 'ok' if c.passed else 'FAIL' }}</td><td>{{ c.criterion }}</td><td>{{ c.element }}</td>
<td>{{ c.before if c.before is not none else '-' }}</td><td>{{ c.after }}</td><td>{{ c.limit }} {{ c.unit }}</td></tr>{% endfor %}</tbody></table>
{% if more %}<p class="note">{{ more }} more checks in the result document.</p>{% endif %}{% endif %}
{% elif job.status == "failed" %}<p class="error" id="failure">{{ job.message }}</p>{% endif %}
{% if stages %}<h2>Stages</h2><table id="stages"><thead><tr><th>stage</th><th>progress [%]</th><th></th><th>at (UTC)</th></tr></thead><tbody>
{% for st in stages %}<tr class="stage-{{ st.stage }}"><td>{{ st.stage }}</td><td>{{ st.progress }}</td><td>{{ st.message }}</td><td>{{ st.at }}</td></tr>{% endfor %}
</tbody></table>{% endif %}
<h2>Inputs</h2><pre>{{ inputs }}</pre>
<h2>Record</h2><table><tr><th>input SHA-256</th><td><pre>{{ hashes }}</pre></td></tr><tr><th>versions</th><td><pre>{{ versions }}</pre></td></tr></table>
{% endblock %}
"""

TEMPLATES = {"base.html": BASE, "login.html": LOGIN, "jobs.html": JOBS, "processes.html": PROCESSES, "process.html": PROCESS, "job.html": JOB}


def environment():
    """The Jinja2 environment of the pages (autoescape on for every template)."""
    from jinja2 import DictLoader, Environment, StrictUndefined

    from capacitysim.service import pages_bank

    return Environment(loader=DictLoader(TEMPLATES | pages_bank.TEMPLATES), autoescape=True, undefined=StrictUndefined)
