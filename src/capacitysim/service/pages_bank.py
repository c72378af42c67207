"""The bank pages' Jinja2 templates (``bank.html``, ``register.html``), extending ``base.html`` of
:mod:`capacitysim.service.pages`; autoescaped, every form with the session's CSRF token."""

from __future__ import annotations

BANK = """{% extends "base.html" %}
{% macro sign_form(kind, ident) %}<form method="post" action="/ui/bank/sign-off"><input type="hidden" name="csrf" value="{{ csrf }}">
<input type="hidden" name="kind" value="{{ kind }}"><input type="hidden" name="id" value="{{ ident }}">
<input type="text" name="note" placeholder="note (required to reject)" aria-label="note">
<button name="decision" value="approve">Approve</button> <button name="decision" value="reject">Reject</button></form>{% endmacro %}
{% block body %}
<h2>Withdrawals awaiting sign-off</h2>
<table id="queue"><thead><tr><th>application</th><th>basin / owner</th><th>node</th><th>peak flow [gpd]</th><th>credits [gpd]</th><th>evidence</th><th>requested by</th><th></th></tr></thead><tbody>
{% for w in pending %}<tr id="w-{{ loop.index }}"><td>{{ w.application }}</td><td>{{ w.basin }} / {{ w.owner }}</td><td>{{ w.node }}</td>
<td>{{ '{:,.0f}'.format(w.peak_flow_gpd) }}</td><td>{{ '{:,}'.format(w.amount_gpd) }}</td>
<td>{% if w.capacity_job %}<a href="/ui/jobs/{{ w.capacity_job }}">capacity</a>{% endif %} {% if w.spdes_job %}<a href="/ui/jobs/{{ w.spdes_job }}">SPDES</a>{% endif %}
{% if w.missing_for_sign_off %}<br><span class="note">missing: {{ w.missing_for_sign_off | join('; ') }}</span>{% endif %}</td>
<td>{{ w.recorded_by }}</td><td>{% if can_sign %}
<form method="post" action="/ui/bank/sign-off"><input type="hidden" name="csrf" value="{{ csrf }}">
<input type="hidden" name="kind" value="withdrawal"><input type="hidden" name="application" value="{{ w.application }}">
<input type="text" name="note" placeholder="note (required to reject)" aria-label="note">
<button name="decision" value="approve">Approve</button> <button name="decision" value="reject">Reject</button></form>{% endif %}</td></tr>
{% else %}<tr><td colspan="8">Nothing awaits sign-off.</td></tr>{% endfor %}</tbody></table>
<h2>Deposits awaiting sign-off</h2>
<table id="deposit-queue"><thead><tr><th>project</th><th>basin / owner</th><th>credits [gpd]</th><th>certified</th><th>evidence</th><th>recorded by</th><th></th></tr></thead><tbody>
{% for d in pending_deposits %}<tr id="d-{{ loop.index }}"><td>{{ d.project }}</td><td>{{ d.basin }} / {{ d.owner }}</td>
<td>{{ '{:,}'.format(d.gpd) }}</td><td>{{ d.certified_on }}{% if d.certificate %}<br><span class="note">{{ d.certificate }}</span>{% endif %}</td>
<td>{% if d.quantification_job %}<a href="/ui/jobs/{{ d.quantification_job }}">quantification</a>{% endif %}</td>
<td>{{ d.recorded_by }}</td><td>{% if can_sign %}{{ sign_form("deposit", d.txn) }}{% endif %}</td></tr>
{% else %}<tr><td colspan="7">No deposit awaits sign-off.</td></tr>{% endfor %}</tbody></table>
<h2>Transfers awaiting sign-off</h2>
<table id="transfer-queue"><thead><tr><th>transfer</th><th>from</th><th>to</th><th>credits [gpd]</th><th>document</th><th></th></tr></thead><tbody>
{% for t in pending_transfers %}<tr id="t-{{ loop.index }}"><td>{{ t.transfer }}</td><td>{{ t.basin }} / {{ t.from }}</td><td>{{ t.to_basin }} / {{ t.to }}</td>
<td>{{ '{:,}'.format(t.gpd) }}</td><td>{{ t.document }}{% if t.board_approval %}<br><span class="note">Board: {{ t.board_approval }}</span>{% endif %}</td>
<td>{% if can_sign %}{{ sign_form("transfer", t.transfer) }}{% endif %}</td></tr>
{% else %}<tr><td colspan="6">No transfer awaits sign-off.</td></tr>{% endfor %}</tbody></table>
{% if not can_sign %}<p class="note">Only an administrator signs off.</p>{% endif %}
<h2>Decided withdrawals</h2><table id="decided"><thead><tr><th>application</th><th>status</th><th>signed off by</th><th>at</th><th>flow credit note</th></tr></thead><tbody>
{% for w in decided %}<tr><td>{{ w.application }}</td><td>{{ w.signoff_status }} ({{ w.status }})</td><td>{{ w.signed_off_by or '' }}</td><td>{{ w.signed_off_at or '' }}</td><td>{% if w.note_issued_on %}<a href="/ui/bank/notes/{{ w.application | urlencode }}">HTML</a> · <a href="/ui/bank/notes/{{ w.application | urlencode }}?format=pdf">PDF</a>{% endif %}</td></tr>{% endfor %}
</tbody></table>
<h2>Decided deposits and transfers</h2><table id="decided-other"><thead><tr><th>kind</th><th>id</th><th>credits [gpd]</th><th>status</th><th>by</th><th>at</th></tr></thead><tbody>
{% for d in decided_deposits %}<tr><td>deposit</td><td>{{ d.project }}</td><td>{{ '{:,}'.format(d.gpd) }}</td><td>{{ d.signoff_status }}</td><td>{{ d.decided_by or '' }}</td><td>{{ d.decided_at or '' }}</td></tr>{% endfor %}
{% for t in decided_transfers %}<tr><td>transfer</td><td>{{ t.transfer }} ({{ t.from }} to {{ t.to }})</td><td>{{ '{:,}'.format(t.gpd) }}</td><td>{{ t.signoff_status }}</td><td>{{ t.signed_off_by or '' }}</td><td>{{ t.signed_off_at or '' }}</td></tr>{% endfor %}
</tbody></table>
<h2>Balances</h2><table><thead><tr><th>basin</th><th>owner</th><th>balance [gpd]</th></tr></thead><tbody>
{% for b in balances %}<tr><td>{{ b.basin }}</td><td>{{ b.owner }}</td><td>{{ '{:,}'.format(b.balance_gpd) }}</td></tr>{% endfor %}</tbody></table>
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

TEMPLATES = {"bank.html": BANK, "register.html": REGISTER}
