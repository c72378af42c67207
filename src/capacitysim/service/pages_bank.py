"""The bank pages' Jinja2 templates (``bank.html``, ``withdraw.html``, ``confirm.html``, ``register.html``), extending ``base.html`` of
:mod:`capacitysim.service.pages`; autoescaped, every form with the session's CSRF token."""

from __future__ import annotations

#: The evidence of a pending withdrawal (rows of :func:`capacitysim.service.bank_api.withdrawal_evidence`), shown in the
#: queue and on the confirmation page.
EVIDENCE = """{% macro gpd(v) %}{{ '{:,.0f}'.format(v) if v is not none else '-' }}{% endmacro %}
{% macro evidence(rows) %}<ul class="evidence">{% for e in rows %}<li class="ev {{ e.field }}"><b>{{ 'Capacity demonstration' if e.field == 'capacity_job' else 'SPDES check' }}</b>
{% if e.job %}<a href="/ui/jobs/{{ e.job }}">{{ e.job[:8] }}</a>{% endif %}:
<span class="{{ e.verdict or 'failed' }}">{{ (e.verdict or e.status) | upper }}</span>{% if e.finished %}, finished {{ e.finished }}
(<span class="age">{{ 'today' if e.age_days == 0 else '1 day ago' if e.age_days == 1 else '{:,} days ago'.format(e.age_days) }}</span>){% endif %}
{% if e.flows %}<br>{{ 'connections' if e.field == 'capacity_job' else 'added' }}: <span class="flows">{% for n, g in e.flows %}{% if n %}{{ n }}={% endif %}{{ gpd(g) }} gpd{% if not loop.last %}, {% endif %}{% endfor %}</span>{% endif %}
{%- if e.model %}; model {{ e.model if e.model | length < 40 else e.model[:19] ~ '...' }}{% endif %}{% if e.plant %}; plant {{ e.plant if e.plant | length < 40 else e.plant[:19] ~ '...' }}{% endif %}
{% if e.model_of_record is sameas true %}<span class="pass">(the basin's model of record)</span>{% elif e.model_of_record is sameas false %}<span class="fail">(not the basin's model of record)</span>{% endif %}
<br>{% if e.covers is sameas true %}<span class="pass covers">covers the request</span>{% else %}<span class="fail covers">{{ e.covers }}</span>{% endif %}
{% if e.included is not none %}<br><span class="note">commitments included: {{ e.included | join(', ') or 'none' }}</span>{% endif %}</li>
{% endfor %}</ul>{% endmacro %}
"""

BANK = """{% extends "base.html" %}""" + EVIDENCE + """
{% macro sign_form(kind, ident, field="id") %}<form method="post" action="/ui/bank/confirm"><input type="hidden" name="csrf" value="{{ csrf }}">
<input type="hidden" name="kind" value="{{ kind }}"><input type="hidden" name="{{ field }}" value="{{ ident }}">
<input type="text" name="note" placeholder="note (required to reject)" aria-label="note">
<button name="decision" value="approve">Approve...</button> <button name="decision" value="reject">Reject...</button></form>{% endmacro %}
{% block body %}
{% if result %}<p id="result" role="status" style="background:#efe;border:1px solid #060;padding:.5rem">{{ result.kind | capitalize }}
<b>{{ result.id }}</b> ({{ gpd(result.gpd) }} gpd of credits):
{% if result.status == 'pending' %}requested by {{ result.by }}, reserved, awaiting the administrator's sign-off
{%- elif result.status == 'signed-off' %}approved by {{ result.by }} at {{ (result.at or '')[:19] }}
{%- elif result.status == 'rejected' %}rejected by {{ result.by }} at {{ (result.at or '')[:19] }}
{%- else %}{{ result.status }}{% endif %}.
{% if result.balance %}Basin {{ result.basin }}, {{ result.owner }}: available now <b class="available">{{ gpd(result.balance.available_gpd) }} gpd</b>,
reserved by pending withdrawals {{ gpd(result.balance.pending_withdrawals_gpd) }} gpd.{% endif %}</p>{% endif %}
{% if can_request %}<p><a href="/ui/bank/withdrawals/new" id="new-withdrawal">Request a withdrawal of flow credits</a></p>{% endif %}
<h2>Withdrawals awaiting sign-off</h2>
<table id="queue"><thead><tr><th>application</th><th>basin / owner</th><th>node</th><th>peak flow [gpd]</th><th>credits [gpd]</th><th>evidence</th><th>requested by</th><th></th></tr></thead><tbody>
{% for w in pending %}<tr id="w-{{ loop.index }}" class="pending-withdrawal"><td>{{ w.application }}</td><td>{{ w.basin }} / {{ w.owner }}</td><td>{{ w.node }}</td>
<td>{{ gpd(w.peak_flow_gpd) }}</td><td>{{ gpd(w.amount_gpd) }}</td>
<td>{{ evidence(w.evidence) }}
{% if w.missing_for_sign_off %}<span class="note">missing: {{ w.missing_for_sign_off | join('; ') }}</span>{% endif %}</td>
<td>{{ w.recorded_by }}</td><td>{% if can_sign %}{{ sign_form("withdrawal", w.application, "application") }}{% endif %}</td></tr>
{% else %}<tr><td colspan="8">Nothing awaits sign-off.</td></tr>{% endfor %}</tbody></table>
<h2>Deposits awaiting sign-off</h2>
<table id="deposit-queue"><thead><tr><th>project</th><th>basin / owner</th><th>credits [gpd]</th><th>certified</th><th>evidence</th><th>recorded by</th><th></th></tr></thead><tbody>
{% for d in pending_deposits %}<tr id="d-{{ loop.index }}"><td>{{ d.project }}</td><td>{{ d.basin }} / {{ d.owner }}</td>
<td>{{ gpd(d.gpd) }}</td><td>{{ d.certified_on }}{% if d.certificate %}<br><span class="note">{{ d.certificate }}</span>{% endif %}</td>
<td>{% if d.quantification_job %}<a href="/ui/jobs/{{ d.quantification_job }}">quantification</a>{% endif %}</td>
<td>{{ d.recorded_by }}</td><td>{% if can_sign %}{{ sign_form("deposit", d.txn) }}{% endif %}</td></tr>
{% else %}<tr><td colspan="7">No deposit awaits sign-off.</td></tr>{% endfor %}</tbody></table>
<h2>Transfers awaiting sign-off</h2>
<table id="transfer-queue"><thead><tr><th>transfer</th><th>from</th><th>to</th><th>credits [gpd]</th><th>document</th><th></th></tr></thead><tbody>
{% for t in pending_transfers %}<tr id="t-{{ loop.index }}"><td>{{ t.transfer }}</td><td>{{ t.basin }} / {{ t.from }}</td><td>{{ t.to_basin }} / {{ t.to }}</td>
<td>{{ gpd(t.gpd) }}</td><td>{{ t.document }}{% if t.board_approval %}<br><span class="note">Board: {{ t.board_approval }}</span>{% endif %}</td>
<td>{% if can_sign %}{{ sign_form("transfer", t.transfer) }}{% endif %}</td></tr>
{% else %}<tr><td colspan="6">No transfer awaits sign-off.</td></tr>{% endfor %}</tbody></table>
{% if not can_sign %}<p class="note">Only an administrator signs off.</p>{% else %}<p class="note">Approve or Reject leads to a
confirmation of what will be decided; nothing is decided before it.</p>{% endif %}
<h2>Decided withdrawals</h2><table id="decided"><thead><tr><th>application</th><th>status</th><th>signed off by</th><th>at</th><th>flow credit note</th></tr></thead><tbody>
{% for w in decided %}<tr><td>{{ w.application }}</td><td>{{ w.signoff_status }} ({{ w.status }})</td><td>{{ w.signed_off_by or '' }}</td><td>{{ w.signed_off_at or '' }}</td><td>{% if w.note_issued_on %}<a href="/ui/bank/notes/{{ w.application | urlencode }}">HTML</a> · <a href="/ui/bank/notes/{{ w.application | urlencode }}?format=pdf">PDF</a>{% endif %}</td></tr>{% endfor %}
</tbody></table>
<h2>Decided deposits and transfers</h2><table id="decided-other"><thead><tr><th>kind</th><th>id</th><th>credits [gpd]</th><th>status</th><th>by</th><th>at</th></tr></thead><tbody>
{% for d in decided_deposits %}<tr><td>deposit</td><td>{{ d.project }}</td><td>{{ gpd(d.gpd) }}</td><td>{{ d.signoff_status }}</td><td>{{ d.decided_by or '' }}</td><td>{{ d.decided_at or '' }}</td></tr>{% endfor %}
{% for t in decided_transfers %}<tr><td>transfer</td><td>{{ t.transfer }} ({{ t.from }} to {{ t.to }})</td><td>{{ gpd(t.gpd) }}</td><td>{{ t.signoff_status }}</td><td>{{ t.signed_off_by or '' }}</td><td>{{ t.signed_off_at or '' }}</td></tr>{% endfor %}
</tbody></table>
<h2>Balances</h2>
<p class="note">A withdrawal or transfer takes its credits out of the subaccount when it is requested (program policy
pending_reserve): the available figure already leaves out what requests awaiting sign-off reserve; a rejection returns them.</p>
<table id="balances"><thead><tr><th>basin</th><th>owner</th><th>available [gpd]</th><th>reserved by pending withdrawals [gpd]</th>
<th>pending transfers out [gpd]</th><th>held, available and reserved [gpd]</th><th>pending deposits and transfers in [gpd]</th></tr></thead><tbody>
{% for b in balances %}<tr class="balance"><td>{{ b.basin }}</td><td>{{ b.owner }}</td><td class="available">{{ gpd(b.available_gpd) }}</td>
<td class="reserved">{{ gpd(b.pending_withdrawals_gpd) }}</td><td>{{ gpd(b.pending_transfers_out_gpd) }}</td><td class="held">{{ gpd(b.held_gpd) }}</td>
<td>{{ gpd(b.pending_in_gpd) }}</td></tr>{% endfor %}</tbody></table>
{% endblock %}
"""

WITHDRAW = """{% extends "base.html" %}
{% macro inv(name) %}{% if field == name %} aria-invalid="true" aria-describedby="field-error"{% endif %}{% endmacro %}
{% macro text(name, required=false, hint="") %}<p><label for="w-{{ name }}">{{ labels[name] }}{% if not required %} (optional){% endif %}</label>{% if hint %} <span class="note">{{ hint }}</span>{% endif %}<br>
<input type="text" id="w-{{ name }}" name="{{ name }}" value="{{ values[name] }}" maxlength="200"{% if required %} required{% endif %}{{ inv(name) }}></p>{% endmacro %}
{% macro choose(name, options, hint="") %}<p><label for="w-{{ name }}">{{ labels[name] }}</label>{% if hint %} <span class="note">{{ hint }}</span>{% endif %}<br>
<select id="w-{{ name }}" name="{{ name }}" required{{ inv(name) }}><option value="">(choose)</option>
{% for o in options %}<option value="{{ o }}"{% if values[name] == o %} selected{% endif %}>{{ o }}</option>{% endfor %}</select></p>{% endmacro %}
{% macro cite(name, rows, what) %}<p><label for="w-{{ name }}">{{ labels[name] }}</label> <span class="note">one of your own successful, passing
{{ what }} jobs not cited by another application</span><br>
<select id="w-{{ name }}" name="{{ name }}" required{{ inv(name) }}><option value="">(choose)</option>
{% for j in rows %}<option value="{{ j.id }}"{% if values[name] == j.id %} selected{% endif %}>{{ j.id[:8] }} · {{ j.finished }} · {{ j.model if j.model | length < 40 else j.model[:19] ~ '...' }} · {{ j.flows }} gpd</option>{% endfor %}
</select>{% if not rows %}<br><span class="note">You have none: run one first{% if name == 'capacity_job' %} (<a href="/ui/submit">New demonstration</a>){% endif %}.</span>{% endif %}</p>{% endmacro %}
{% block body %}
<p class="note">The credits reserved are the peak flow times the offset ratio (credit bank section F); they are taken from the
owner's subaccount at once and the request awaits the bank administrator's sign-off (who cannot be you). The capacity
demonstration must connect at least the peak flow at the node; the SPDES check must add at least that flow (section H(1)).</p>
{% if error %}<p id="field-error" class="note">Nothing was recorded: correct the field named above and send the form again.</p>{% endif %}
<form method="post" action="/ui/bank/withdrawals" id="withdraw-form"><input type="hidden" name="csrf" value="{{ csrf }}">
{{ text("application", true) }}
{{ choose("basin", basins) }}
{{ choose("owner", owners, "the holders you act for (program policy service_user_binding)") }}
{{ text("node", true, "the model node where the connection is made") }}
{{ text("peak_flow_gpd", true, "more than 2,500 gpd (a smaller connection needs no offset)") }}
{{ text("average_gpd", false, "its commitment at the plant; default the peak") }}
{{ cite("capacity_job", jobs.capacity_job, "capacity-demonstration") }}
{{ cite("spdes_job", jobs.spdes_job, "spdes-check") }}
{{ text("application_approval", false, "the connection application program's approval: required before sign-off") }}
{{ text("principal", false, "the developer or property owner; default the owner") }}
<p><label for="w-description">{{ labels.description }} (optional)</label><br><textarea id="w-description" name="description" rows="3" maxlength="2000"{{ inv("description") }}>{{ values.description }}</textarea></p>
<p><button id="request-withdrawal">Request the withdrawal</button> <a href="/ui/bank">Cancel</a></p></form>
{% endblock %}
"""

CONFIRM = """{% extends "base.html" %}""" + EVIDENCE + """
{% block body %}
<p id="what">You are about to <b>{{ 'approve (sign off)' if decision == 'approve' else 'reject' }}</b> this {{ kind }}.
{% if decision == 'approve' %}{% if kind == 'withdrawal' %}The flow credit note is issued; the credits reserved stay taken from the subaccount.
{% else %}The credits are booked.{% endif %}{% else %}{% if kind == 'deposit' %}Nothing is booked.{% else %}The credits reserved return to the subaccount.{% endif %}{% endif %}</p>
<table id="decision"><tbody>
{% if kind == 'withdrawal' %}<tr><th>application</th><td>{{ rec.application }}</td></tr>
<tr><th>basin / owner</th><td>{{ rec.basin }} / {{ rec.owner }}</td></tr><tr><th>principal</th><td>{{ rec.principal }}</td></tr>
<tr><th>node</th><td>{{ rec.node }}</td></tr><tr><th>peak flow [gpd]</th><td>{{ gpd(rec.peak_flow_gpd) }}</td></tr>
<tr><th>average daily flow [gpd]</th><td>{{ gpd(rec.average_gpd) }}</td></tr>
<tr><th>credits [gpd]</th><td id="amount">{{ gpd(rec.amount_gpd) }} (offset ratio {{ rec.offset_ratio }})</td></tr>
<tr><th>application approval</th><td>{{ rec.application_approval or '-' }}</td></tr>
<tr><th>requested by</th><td>{{ rec.recorded_by }} at {{ (rec.requested_at or '')[:19] }}</td></tr>
<tr><th>evidence</th><td>{{ evidence(evidence_rows) }}{% if rec.missing_for_sign_off %}<span class="fail">missing: {{ rec.missing_for_sign_off | join('; ') }}</span>{% endif %}</td></tr>
{% elif kind == 'deposit' %}<tr><th>project</th><td>{{ rec.project }}</td></tr><tr><th>basin / owner</th><td>{{ rec.basin }} / {{ rec.owner }}</td></tr>
<tr><th>credits [gpd]</th><td id="amount">{{ gpd(rec.gpd) }}</td></tr><tr><th>certificate</th><td>{{ rec.certificate or '-' }} (certified {{ rec.certified_on }})</td></tr>
<tr><th>evidence</th><td>{% if rec.quantification_job %}<a href="/ui/jobs/{{ rec.quantification_job }}">quantification {{ rec.quantification_job[:8] }}</a>{% else %}the ledger's certificate reference{% endif %}</td></tr>
<tr><th>recorded by</th><td>{{ rec.recorded_by }} at {{ (rec.recorded_at or '')[:19] }}</td></tr>
{% else %}<tr><th>transfer</th><td>{{ rec.transfer }}</td></tr><tr><th>from</th><td>{{ rec.basin }} / {{ rec.from }}</td></tr>
<tr><th>to</th><td>{{ rec.to_basin }} / {{ rec.to }}</td></tr><tr><th>credits [gpd]</th><td id="amount">{{ gpd(rec.gpd) }}</td></tr>
<tr><th>document</th><td>{{ rec.document }}{% if rec.board_approval %}; Board: {{ rec.board_approval }}{% endif %}</td></tr>{% endif %}
{% if balance %}<tr><th>subaccount now</th><td>available {{ gpd(balance.available_gpd) }} gpd; reserved by pending withdrawals
{{ gpd(balance.pending_withdrawals_gpd) }} gpd</td></tr>{% endif %}
<tr><th>decision</th><td id="decision-value">{{ decision }}</td></tr>
</tbody></table>
{% if own %}<p class="error" id="own" role="alert">You ({{ user.name }}) recorded this {{ kind }}: the person who recorded a request
neither approves nor rejects it (program policy signoff_separation). Another administrator decides it.</p>
<p><a href="/ui/bank">Back to the bank</a></p>
{% else %}<form method="post" action="/ui/bank/sign-off" id="confirm-form"><input type="hidden" name="csrf" value="{{ csrf }}">
<input type="hidden" name="kind" value="{{ kind }}"><input type="hidden" name="{{ 'application' if kind == 'withdrawal' else 'id' }}" value="{{ ident }}">
<input type="hidden" name="decision" value="{{ decision }}">
<p><label for="note">Note{% if decision == 'reject' %} (the reason for the rejection: required){% else %} (optional){% endif %}</label><br>
<input type="text" id="note" name="note" value="{{ note }}" maxlength="2000"{% if decision == 'reject' %} required{% endif %}></p>
<p><button id="confirm">{{ 'Approve' if decision == 'approve' else 'Reject' }} {{ kind }} {{ ident }}</button> <a href="/ui/bank" id="cancel">Cancel</a></p></form>{% endif %}
{% endblock %}
"""

REGISTER = """{% extends "base.html" %}
{% macro gpd(v) %}{{ '{:,.0f}'.format(v) if v is not none else '-' }}{% endmacro %}
{% block body %}
<p class="note" id="freshness">The bank's capacity allocation register as of {{ reg.as_of }}: read {{ read_at }} (UTC) from
bank head <code>{{ reg.bank_head[:12] }}</code>...; reload the page to read it again. Every flow approved or reserved and not yet
in the model of record is committed at its node and at its plant until it is connected and a model version containing it is
registered, or until it is released. <a href="/bank/register">JSON</a></p>
<p id="computed">{% if computed and computed.document %}Remaining headroom: computed by the register job
<a href="/ui/jobs/{{ computed.job }}">{{ computed.job[:8] }}</a> (ended {{ computed.finished }}): {{ computed.document.freshness.text }}.
{% elif computed %}<span class="error">The register job {{ computed.job[:8] }} left no figures that can be read: {{ computed.error }}</span>
{% else %}Remaining headroom: not computed yet (a register job computes it).{% endif %}</p>
{% if can_submit %}<form method="post" action="/ui/bank/register" id="compute-form"><input type="hidden" name="csrf" value="{{ csrf }}">
<details><summary>Compute the remaining headroom again (a job: a few SWMM runs per manhole)</summary>
<p><label>Design storm<br><select name="storm" id="register-storm"><option value="">(each model's own rainfall)</option>
{% for st in storms %}<option value="{{ st }}">{{ st }}</option>{% endfor %}</select></label></p>
<p><label>Plant (its remaining treatment headroom needs its flow record)<br><select name="key" id="register-plant-key"><option value="">(no plant)</option>
{% for p in reg.plants %}<option value="{{ p.plant }}">{{ p.plant }}</option>{% endfor %}</select></label></p>
<p><label>Plant file<br><select name="plant" id="register-plant">{% for pl in plants %}<option value="{{ pl }}">{{ pl }}</option>{% endfor %}</select></label></p>
<p><label>Daily flow record: a bundled name or "upload:&lt;sha256&gt;" of yours<br><input type="text" name="flows" id="register-flows"></label></p>
</details><p><button id="compute">Compute the register</button></p></form>{% endif %}
<h2>Plants</h2>
<table id="plants"><thead><tr><th>plant</th><th>basins draining to it</th><th>committed average [gpd]</th><th>committed peak [gpd]</th><th>applications</th>
<th>permitted [gpd]</th><th>12-month figure [gpd]</th><th>remaining [gpd]</th><th>figures</th></tr></thead><tbody>
{% for p in reg.plants %}{% set f = p.computed.figures if p.computed else none %}<tr class="plant"><td>{{ p.plant }}</td><td>{{ p.basins | join(', ') }}</td><td>{{ gpd(p.committed_gpd) }}</td>
<td>{{ gpd(p.committed_peak_gpd) }}</td><td>{{ p.flows | join(', ') or '-' }}</td>
<td>{{ gpd(f.permitted_flow_gpd) if f else '-' }}</td><td>{{ gpd(f.twelve_month_gpd) if f else '-' }}</td>
<td class="remaining">{{ gpd(f.remaining_gpd) if f else '-' }}</td><td class="note">{{ p.computed.freshness.text if p.computed else 'not computed' }}</td></tr>
{% else %}<tr><td colspan="9">No basin is registered as draining to a plant.</td></tr>{% endfor %}</tbody></table>
<h2>Registered models</h2>
{% for m in reg.models %}<section class="model" id="model-{{ m.model_sha256[:12] }}">
<h3>{{ m.path }} <span class="note">SHA-256 <code>{{ m.model_sha256[:12] }}</code>..., {{ m.nodes }} nodes</span></h3>
<p>{% for b in m.basins %}Basin <b>{{ b.basin }}</b> (version {{ b.version }}, outlet {{ b.outlet }}, plant {{ b.plant or '-' }}){% if not loop.last %}; {% endif %}{% endfor %}</p>
<table class="flows"><thead><tr><th>application</th><th>basin</th><th>node</th><th>average [gpd]</th><th>peak [gpd]</th><th>status</th><th>since</th><th>expires</th></tr></thead><tbody>
{% for f in m.flows %}<tr class="flow"><td>{{ f.application }}</td><td>{{ f.basin }}</td><td>{{ f.node or '-' }}</td><td>{{ gpd(f.average_gpd) }}{% if f.average_basis == 'peak' %} <span class="note">(the peak)</span>{% endif %}</td>
<td>{{ gpd(f.peak_gpd) }}</td><td>{{ f.status }}</td><td>{{ (f.connected_on or f.since or '')[:10] }}</td><td>{{ f.expires_on or '' }}</td></tr>
{% else %}<tr><td colspan="8">Nothing committed on this model.</td></tr>{% endfor %}</tbody>
<tfoot><tr><th colspan="3">committed</th><th>{{ gpd(m.total_gpd) }}</th><th>{{ gpd(m.total_peak_gpd) }}</th><th colspan="3"></th></tr></tfoot></table>
{% if m.computed %}<p class="note freshness">{{ m.computed.freshness.text }}</p>
{% if m.computed.headroom %}<table class="headroom"><thead><tr><th>manhole</th><th>why searched</th><th>storm</th><th>largest connection with the commitments [gpd]</th><th>governing check</th></tr></thead><tbody>
{% for r in m.computed.headroom.nodes %}<tr class="cell"><td>{{ r.node }}</td><td>{{ r.why | join('; ') }}</td><td>{{ r.storm }}</td><td>{{ r.headroom_text }}</td><td>{{ r.governing_text }}</td></tr>{% endfor %}
</tbody></table>{% else %}<p class="note">headroom: {{ m.computed.headroom_status }}</p>{% endif %}
{% else %}<p class="note freshness">Remaining headroom: not computed for this model yet.</p>{% endif %}
</section>
{% else %}<p id="no-models">No basin has a registered model of record (an administrator registers one: <code>POST /bank/models</code>).</p>{% endfor %}
<p class="note" id="headroom">The remaining headroom per manhole (with the commitments in place) and at each plant is computed by the
register workflow (<code>capacitysim bank register</code>, here the <code>capacity-register</code> job); a figure computed for
commitments that have changed since is marked stale. A capacity demonstration or SPDES check run here on a registered
model or plant includes the commitments above by itself.</p>
<h2>Policies</h2><ul>{% for p in reg.policies %}<li><b>{{ p.name }}</b> = {{ p.value }}: {{ p.text }}</li>{% endfor %}</ul>
{% endblock %}
"""

TEMPLATES = {"bank.html": BANK, "register.html": REGISTER, "withdraw.html": WITHDRAW, "confirm.html": CONFIRM}
