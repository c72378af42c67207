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
progress{width:20rem}.num{text-align:right;font-variant-numeric:tabular-nums}.pre{white-space:pre-wrap}
.notice{background:#efe;border:1px solid #060;padding:.5rem}.network-map svg{width:100%;height:auto;max-height:70vh;border:1px solid #ddd}
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

JOB = """{% extends "base.html" %}
{% macro q(v, unit=None) %}{{ v | num(unit) }}{% endmacro %}
{% block body %}
{% if notice %}<p class="notice" role="status" id="notice">{{ notice }}</p>{% endif %}
<p>Process <b>{{ job.process }}</b>, submitted by {{ job.owner }} on {{ job.created_at | when }}; attempt {{ job.attempts }}.</p>
<p>Status: <b id="status" class="{{ job.status }}">{{ job.status }}</b>
{% if job.status in ("accepted", "running") %}<progress id="progress" max="100" value="{{ job.progress }}">{{ job.progress }} %</progress>
<span id="progress-pct">{{ job.progress }} %</span>{% endif %}
<span class="note" id="message">{{ job.message }}</span></p>
{% if runs %}<table id="engine-runs"><thead><tr><th>SWMM run</th><th>simulated</th><th>done [%]</th><th>wall time [s]</th><th>time left [s]</th></tr></thead><tbody>
{% for r in runs %}<tr class="engine-run"><td>{{ r.run }}</td><td>{{ (r.now or '') | when }}</td><td class="num">{{ (100 * r.fraction) | num('%') if r.fraction is not none else '-' }}</td>
<td class="num">{{ r.wall_s | num('s') }}</td><td class="num">{{ r.eta_s | num('s') if r.eta_s is not none else 'not yet known' }}</td></tr>{% endfor %}</tbody></table>{% endif %}
{% if may_cancel %}<form method="post" action="/ui/jobs/{{ job.id }}/cancel" id="cancel-form"><input type="hidden" name="csrf" value="{{ csrf }}">
<button id="cancel">Cancel this job</button></form>{% endif %}
{% if job.status == "successful" %}
{% if job.verdict %}<p>Verdict: <b id="verdict" class="{{ job.verdict }}">{{ job.verdict | upper }}</b></p>{% else %}<p id="verdict">Done.</p>{% endif %}
<h2>Downloads</h2><ul id="downloads"><li><a id="results" href="/jobs/{{ job.id }}/results">Result document (JSON)</a></li>
{% if job.report_path %}<li><a id="report" href="/jobs/{{ job.id }}/report">Report (HTML)</a></li>{% endif %}
{% if checks %}<li><a id="checks-csv" href="/ui/jobs/{{ job.id }}/checks.csv">Checks (CSV)</a></li>{% endif %}
{% if has_map %}<li><a id="map-svg" href="/ui/jobs/{{ job.id }}/map.svg">Map (SVG)</a></li>{% endif %}</ul>
{% if has_map %}<h2>Map</h2><div class="network-map" id="map" data-src="/ui/jobs/{{ job.id }}/map.svg"><span class="note">Loading the map...</span></div>{% endif %}
{% set ns = doc.get('next_steps') %}{% set mg = doc.get('margins') or {} %}{% if ns %}<h2>Next steps</h2><ul id="governing">{% for g in ns.governing %}<li><b>{{ g.limit_kind }} limit</b>: {{ g.text }}</li>{% endfor %}</ul>
<table id="next-steps"><thead><tr><th>node</th><th>flow [gpd]</th><th>largest that passes [gpd]</th><th>I/I remediation basin</th><th>I/I removal to offset the peak [gpd]</th></tr></thead><tbody>
{% for c in ns.connections %}<tr><td>{{ c.node }}</td><td class="num">{{ c.flow_gpd | num('gpd') }}</td><td class="num">{{ c.largest_passing_gpd | num('gpd') if c.largest_passing_gpd is not none else 'not searched' }}</td>
<td>{{ c.basin or '-' }}</td><td class="num">{{ c.ii_removal_gpd | num('gpd') }}</td></tr>{% endfor %}</tbody></table>
<p class="note">Then: {% for cmd in ns.commands %}<code>{{ cmd }}</code>{% if not loop.last %}; {% endif %}{% endfor %}</p>{% endif %}
{% if checks %}<h2>Checks</h2><table id="checks"><thead><tr><th></th><th>criterion</th><th>element</th><th>before</th><th>after</th><th>limit</th><th>unit</th></tr></thead><tbody>
{% for c in checks %}<tr><td class="{{ 'pass' if c.passed else 'fail' }}">{{ 'ok' if c.passed else 'FAIL' }}</td><td>{{ c.criterion }}</td><td>{{ c.element }}</td>
<td class="num">{{ q(c.before, c.unit) if c.before is not none else '-' }}</td><td class="num">{{ q(c.after, c.unit) }}</td><td class="num">{{ q(c.limit, c.unit) }}</td><td>{{ c.unit }}</td></tr>{% endfor %}</tbody></table>
{% if more %}<p class="note">{{ more }} more checks in the result document and the CSV.</p>{% endif %}{% endif %}
{% if mg.get('tightest') %}<h2>Tightest elements downstream</h2><table id="margins"><thead><tr><th>element</th><th>quantity</th><th>before</th><th>after</th><th>limit</th><th>margin</th><th>used [%]</th></tr></thead><tbody>
{% for m in mg.tightest %}<tr><td>{{ m.element }}</td><td>{{ m.quantity }}</td><td class="num">{{ q(m.before) }}</td><td class="num">{{ q(m.after) }}</td><td class="num">{{ q(m.limit) }}</td><td class="num">{{ q(m.margin) }}</td><td class="num">{{ (100 * m.used) | num('%') if m.used is not none else '-' }}</td></tr>{% endfor %}</tbody></table>{% endif %}
{% if mg.get('existing_deficiencies') %}<h2>Deficiencies before the change</h2><table id="deficiencies"><thead><tr><th>element</th><th>quantity</th><th>before</th><th>after</th><th>limit</th></tr></thead><tbody>
{% for m in mg.existing_deficiencies %}<tr><td>{{ m.element }}</td><td>{{ m.quantity }}</td><td class="num">{{ q(m.before) }}</td><td class="num">{{ q(m.after) }}</td><td class="num">{{ q(m.limit) }}</td></tr>{% endfor %}</tbody></table>{% endif %}
{% elif job.status == "failed" %}<p class="error" id="failure">{{ job.message }}</p>{% endif %}
{% if stages %}<h2>Stages</h2><table id="stages"><thead><tr><th>stage</th><th>progress [%]</th><th></th><th>at (UTC)</th></tr></thead><tbody>
{% for st in stages %}<tr class="stage-{{ st.stage }}"><td>{{ st.stage }}</td><td class="num">{{ st.progress }}</td><td>{{ st.message }}</td><td>{{ st.at | when }}</td></tr>{% endfor %}
</tbody></table>{% endif %}
<h2>Inputs</h2><table id="inputs"><tbody>{% for k, v in inputs %}<tr><th>{{ k }}</th><td class="pre">{{ v }}</td></tr>{% endfor %}</tbody></table>
<h2>Record</h2><table id="record"><tbody>
{% for k, v in hashes %}<tr><th>SHA-256 of {{ k }}</th><td><code>{{ v }}</code></td></tr>{% endfor %}
{% for k, v in versions.items() if k not in ('rule_sets',) %}<tr><th>{{ k }}</th><td>{% if v is mapping %}{% for a, b in v.items() %}{{ a }} {{ b if b is not none else '-' }}{% if not loop.last %}, {% endif %}{% endfor %}{% else %}{{ v }}{% endif %}</td></tr>{% endfor %}
{% if versions.rule_sets %}<tr><th>rule sets (SHA-256)</th><td>{% for a, b in versions.rule_sets.items() %}{{ a }} <code>{{ b[:12] }}</code>{% if not loop.last %}, {% endif %}{% endfor %}</td></tr>{% endif %}
</tbody></table>
{% if has_map %}<script src="/ui/assets/map.js"></script>{% endif %}
{% endblock %}
"""

TEMPLATES = {"base.html": BASE, "login.html": LOGIN, "jobs.html": JOBS, "processes.html": PROCESSES, "process.html": PROCESS, "job.html": JOB}


def environment():
    """The Jinja2 environment of the pages (autoescape on for every template)."""
    from jinja2 import DictLoader, Environment, StrictUndefined

    from capacitysim.service import pages_bank

    from capacitysim.report.format import date_text, number

    env = Environment(loader=DictLoader(TEMPLATES | pages_bank.TEMPLATES), autoescape=True, undefined=StrictUndefined)
    # numbers and times as the reports print them: the decimals of the unit, thousands separators, no microseconds
    env.filters["num"] = lambda v, unit=None: number(v, unit) if isinstance(v, (int, float)) else ("-" if v is None else v)
    env.filters["when"] = lambda v: date_text(v) if v else ""
    return env
