"""CLI of the sewer flow credit bank (``capacitysim bank``) and I/I quantification (``capacitysim credits``).

Refusals by the program's rules exit 3 with one line; bad input exits 2 (see
:mod:`capacitysim.cli`).
"""

from __future__ import annotations

import json
import sqlite3

import click

from capacitysim.bank import DEFAULT_DB, Ledger
from capacitysim.bank.ledger import BankBusyError
from capacitysim.cli import cli
from capacitysim.cli.common import emit_json, emit_table, fmt, json_option
from capacitysim.errors import InputError
from capacitysim.rules import ii_offset

# --- bank ------------------------------------------------------------------------------------------

reason_option = click.option("--reason", default="", help="Why (recorded in the journal).")
documents_option = click.option("--document", "documents", multiple=True, help="A document cited (repeatable).")


def _ledger(ctx, create: bool = False) -> Ledger:
    return Ledger(ctx.obj["db"], actor=ctx.obj["actor"], create=create)


def _emit(obj, as_json: bool, rows=None, title=None):
    if as_json:
        emit_json(obj)
    else:
        emit_table(rows if rows is not None else [(k, "" if v is None else v) for k, v in obj.items()], title)


class BankGroup(click.Group):
    """Turns an SQLite error escaping a read (locked or damaged file) into one line, exit 1."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except sqlite3.Error as exc:
            raise BankBusyError(f"credit bank {ctx.obj['db'] if ctx.obj else DEFAULT_DB}: {exc}") from None


@cli.group(cls=BankGroup)
@click.option("--db", default=DEFAULT_DB, show_default=True, type=click.Path(dir_okay=False), help="The bank file.")
@click.option("--actor", default=None, help="Who acts (default $CAPACITYSIM_ACTOR or the login name).")
@click.pass_context
def bank(ctx, db, actor):
    """The sewer flow credit bank (Binghamton-Johnson City I/I offset program), one SQLite file."""
    ctx.obj = {"db": db, "actor": actor}


@bank.command()
@json_option
@click.pass_context
def init(ctx, as_json):
    """Create the bank file (idempotent)."""
    with _ledger(ctx, create=True) as led:
        out = {"db": str(led.path), "verify": led.verify()["ok"]}
    _emit(out, as_json, title="credit bank ready")


@bank.command("add-entity")
@click.argument("name")
@click.option("--municipal", is_flag=True, help="A municipal user (municipality or government entity with a public sewer).")
@reason_option
@documents_option
@json_option
@click.pass_context
def add_entity(ctx, name, municipal, reason, documents, as_json):
    """Register an entity (municipal user, developer, other credit holder)."""
    with _ledger(ctx) as led:
        out = led.add_entity(name, municipal, reason=reason, documents=documents)
    _emit(out, as_json, title="entity added")


@bank.command("add-basin")
@click.argument("name")
@click.option("--outlet", default=None, help="The POTW component (CSO, pumping station node) the basin drains to.")
@reason_option
@json_option
@click.pass_context
def add_basin(ctx, name, outlet, reason, as_json):
    """Register an I/I remediation basin."""
    with _ledger(ctx) as led:
        out = led.add_basin(name, outlet, reason=reason)
    _emit(out, as_json, title="basin added")


@bank.command("open-subaccount")
@click.option("--basin", required=True)
@click.option("--owner", required=True)
@reason_option
@json_option
@click.pass_context
def open_subaccount(ctx, basin, owner, reason, as_json):
    """Open an owner's subaccount in a basin."""
    with _ledger(ctx) as led:
        out = led.open_subaccount(basin, owner, reason=reason)
    _emit(out, as_json, title="subaccount opened")


@bank.command("add-project")
@click.argument("project")
@click.option("--basin", required=True)
@click.option("--jurisdiction", required=True, help="Municipal user with jurisdiction over the project site.")
@click.option("--priority", type=int, default=None, help="Rank in the prioritized list (1 first).")
@click.option("--estimated-gpd", type=float, default=None, help="Estimated I/I removal [gpd].")
@click.option("--description", default="")
@reason_option
@json_option
@click.pass_context
def add_project(ctx, project, basin, jurisdiction, priority, estimated_gpd, description, reason, as_json):
    """Record an identified/available I/I remediation project (annual report part A)."""
    with _ledger(ctx) as led:
        out = led.add_project(project, basin, jurisdiction, description=description, priority=priority,
                              estimated_gpd=estimated_gpd, reason=reason)
    _emit(out, as_json, title="project recorded")


@bank.command()
@click.option("--basin", required=True)
@click.option("--owner", required=True, help="Municipal user with jurisdiction over the project site (section B).")
@click.option("--gpd", type=float, required=True, help="Certified I/I removed [gpd] (booked rounded down).")
@click.option("--project", required=True, help="Project id (deposited once).")
@click.option("--certified-on", default=None, help="Date certified complete, YYYY-MM-DD (default today).")
@click.option("--certificate", default=None, help="Certification letter (Appendix A) reference.")
@click.option("--description", default="")
@reason_option
@documents_option
@json_option
@click.pass_context
def deposit(ctx, basin, owner, gpd, project, certified_on, certificate, description, reason, documents, as_json):
    """Deposit the credits of a project certified complete."""
    with _ledger(ctx) as led:
        out = led.deposit(basin, owner, gpd, project, certified_on=certified_on, certificate=certificate,
                          description=description, reason=reason, documents=documents)
    _emit(out, as_json, title="deposited")


@bank.command()
@click.option("--basin", required=True)
@click.option("--owner", required=True, help="Credit holder whose subaccount pays.")
@click.option("--gpd", type=float, required=True, help="Estimated peak sewage flow increase of the connection [gpd].")
@click.option("--application", required=True, help="Application id (one withdrawal each).")
@click.option("--capacity-ref", default=None, help="Capacity demonstration: run id, or the JSON/HTML file of "
              "`capacitysim capacity --json/--report` (its SHA-256 is recorded; a FAIL/UNTRUSTED verdict is refused).")
@click.option("--spdes-ref", default=None, help="SPDES / treatment check: run id, or the JSON/HTML file of "
              "`capacitysim spdes check --json/--report` (SHA-256 recorded; PROHIBITED is refused).")
@click.option("--principal", default=None, help="Principal municipal user (default the owner, if municipal).")
@click.option("--offset-ratio", type=float, default=ii_offset.DEFAULT_OFFSET_RATIO, show_default=True)
@click.option("--on", "on", default=None, help="Date of the flow credit note if approved now, YYYY-MM-DD.")
@click.option("--description", default="")
@reason_option
@documents_option
@json_option
@click.pass_context
def withdraw(ctx, basin, owner, gpd, application, capacity_ref, spdes_ref, principal, offset_ratio, on, description,
             reason, documents, as_json):
    """Reserve credits for an application (pending until capacity and SPDES refs are attached)."""
    with _ledger(ctx) as led:
        out = led.withdraw(basin, owner, gpd, application, capacity_ref=capacity_ref, spdes_ref=spdes_ref,
                           principal=principal, offset_ratio=offset_ratio, on=on, description=description,
                           reason=reason, documents=documents)
        out["balance_gpd"] = led.balance(basin, owner)["balance_gpd"]
    _emit(out, as_json, title=f"withdrawal {out['status']}")


@bank.command()
@click.option("--application", required=True)
@click.option("--capacity-ref", default=None, help="Capacity demonstration run id or JSON/HTML report path.")
@click.option("--spdes-ref", default=None, help="SPDES check run id or JSON/HTML report path.")
@click.option("--on", "on", default=None, help="Date of the flow credit note, YYYY-MM-DD (default today).")
@reason_option
@json_option
@click.pass_context
def attach(ctx, application, capacity_ref, spdes_ref, on, reason, as_json):
    """Attach capacity demonstration / SPDES refs to a withdrawal (approves it once both are there)."""
    with _ledger(ctx) as led:
        out = led.attach(application, capacity_ref=capacity_ref, spdes_ref=spdes_ref, on=on, reason=reason)
    _emit(out, as_json, title=f"withdrawal {out['status']}")


@bank.command("return")
@click.option("--application", required=True)
@click.option("--reason", required=True, help="Why the credits are returned.")
@documents_option
@json_option
@click.pass_context
def return_(ctx, application, reason, documents, as_json):
    """Return the credits reserved by a pending or approved withdrawal."""
    with _ledger(ctx) as led:
        out = led.return_credits(application, reason=reason, documents=documents)
    _emit(out, as_json, title="credits returned")


@bank.command()
@click.option("--application", required=True)
@click.option("--until", required=True, help="New due date of the certificate of occupancy, YYYY-MM-DD.")
@click.option("--document", required=True, help="The Board's extension.")
@click.option("--granted-on", default=None, help="Date the extension was granted, YYYY-MM-DD (default today); "
              "it must be on or before the current due date.")
@reason_option
@json_option
@click.pass_context
def extend(ctx, application, until, document, granted_on, reason, as_json):
    """Record an extension of the time allowed for the certificate of occupancy."""
    with _ledger(ctx) as led:
        out = led.extend(application, until, document=document, granted_on=granted_on, reason=reason)
    _emit(out, as_json, title="extended")


@bank.command()
@click.option("--application", required=True)
@click.option("--co-date", required=True, help="Date the certificate of occupancy was issued, YYYY-MM-DD.")
@reason_option
@documents_option
@json_option
@click.pass_context
def complete(ctx, application, co_date, reason, documents, as_json):
    """Record the certificate of occupancy: the connection is complete."""
    with _ledger(ctx) as led:
        out = led.complete(application, co_date, reason=reason, documents=documents)
    _emit(out, as_json, title="connection completed")


@bank.command("check-defaults")
@click.option("--as-of", default=None, help="Date, YYYY-MM-DD (default today).")
@json_option
@click.pass_context
def check_defaults(ctx, as_of, as_json):
    """Put past-due flow credit notes in default and return their credits."""
    with _ledger(ctx) as led:
        out = led.check_defaults(as_of)
    if as_json:
        emit_json({"defaulted": out})
    else:
        emit_table([(r["application"], f"{r['returned_gpd']:,} gpd returned (due {r['co_due_on']})") for r in out]
                   or [("defaults", "none")], "defaults")


@bank.command()
@click.option("--basin", required=True)
@click.option("--from", "from_owner", required=True)
@click.option("--to", "to_owner", required=True)
@click.option("--gpd", type=float, required=True, help="Whole gallons per day.")
@click.option("--document", default=None, help="Bill of sale, memorandum of gift or grant, written notice.")
@click.option("--to-basin", default=None, help="Destination basin (needs --board-approval).")
@click.option("--board-approval", default=None, help="The Board's approval of a transfer across basins.")
@reason_option
@json_option
@click.pass_context
def transfer(ctx, basin, from_owner, to_owner, gpd, document, to_basin, board_approval, reason, as_json):
    """Transfer credits between holders (within a basin unless the Board approved)."""
    with _ledger(ctx) as led:
        out = led.transfer(basin, from_owner, to_owner, gpd, document=document, to_basin=to_basin,
                           board_approval=board_approval, reason=reason)
    _emit(out, as_json, title="transferred")


@bank.command()
@click.option("--basin", required=True)
@click.option("--from", "from_owner", required=True, help="Private entity holding the credits.")
@click.option("--by", required=True, help="Municipal user with jurisdiction (condemning).")
@click.option("--gpd", type=float, required=True, help="Whole gallons per day.")
@click.option("--project", required=True, help="The project within the municipal user's boundaries that generated them.")
@click.option("--document", default=None, help="The condemnation resolution.")
@reason_option
@json_option
@click.pass_context
def condemn(ctx, basin, from_owner, by, gpd, project, document, reason, as_json):
    """Condemn credits on deposit in a private entity's name for a public purpose (section D)."""
    with _ledger(ctx) as led:
        out = led.condemn(basin, from_owner, by, gpd, project=project, document=document, reason=reason)
    _emit(out, as_json, title="condemned")


@bank.command()
@click.option("--basin", required=True)
@click.option("--subject", required=True)
@reason_option
@documents_option
@json_option
@click.pass_context
def dispute(ctx, basin, subject, reason, documents, as_json):
    """Record an unresolved dispute (its basin's records cannot be purged until resolved)."""
    with _ledger(ctx) as led:
        out = led.open_dispute(basin, subject, reason=reason, documents=documents)
    _emit(out, as_json, title="dispute recorded")


@bank.command()
@click.argument("dispute_id", type=int)
@click.option("--reason", required=True)
@documents_option
@json_option
@click.pass_context
def resolve(ctx, dispute_id, reason, documents, as_json):
    """Close a dispute."""
    with _ledger(ctx) as led:
        out = led.close_dispute(dispute_id, reason=reason, documents=documents)
    _emit(out, as_json, title="dispute resolved")


@bank.command()
@click.option("--before", required=True, help="Purge journal rows dated before this date, YYYY-MM-DD.")
@click.option("--reason", required=True)
@json_option
@click.pass_context
def purge(ctx, before, reason, as_json):
    """Purge journal rows older than the three-year retention period (never under dispute)."""
    with _ledger(ctx) as led:
        out = led.purge(before, reason=reason)
    _emit(out, as_json, title="purged")


@bank.command()
@click.option("--basin", default=None)
@click.option("--owner", default=None)
@json_option
@click.pass_context
def balance(ctx, basin, owner, as_json):
    """Balance of one subaccount (--basin and --owner), or of every subaccount."""
    with _ledger(ctx) as led:
        if basin is not None and owner is not None:
            out = led.balance(basin, owner)
            _emit(out, as_json, rows=[("basin", basin), ("owner", owner), ("balance_gpd", f"{out['balance_gpd']:,}"),
                                       ("reserved_gpd", f"{out['reserved_gpd']:,}")], title="balance")
            return
        if (basin is None) != (owner is None):
            rows = [r for r in led.balances() if r["basin"] == basin or r["owner"] == owner]
        else:
            rows = led.balances()
    if as_json:
        emit_json({"balances": rows})
    else:
        emit_table([(f"{r['basin']} / {r['owner']}", f"{r['balance_gpd']:,} gpd (reserved {r['reserved_gpd']:,})") for r in rows]
                   or [("subaccounts", "none")], "balances")


@bank.command()
@click.option("--basin", default=None)
@click.option("--owner", default=None)
@click.option("--since", default=None, help="From this date, YYYY-MM-DD.")
@click.option("--csv", "csv_path", default=None, type=click.Path(dir_okay=False), help="Also write the journal as CSV.")
@json_option
@click.pass_context
def journal(ctx, basin, owner, since, csv_path, as_json):
    """The append-only journal."""
    from capacitysim.io.files import atomic_write_text
    from capacitysim.workflows.bank_reports import COLUMNS, rows_to_csv

    with _ledger(ctx) as led:
        rows = led.journal(basin=basin, owner=owner, since=since)
    if csv_path:
        flat = [dict(r, documents="; ".join(r["documents"]), detail=json.dumps(r["detail"], sort_keys=True)) for r in rows]
        atomic_write_text(csv_path, rows_to_csv(flat, COLUMNS["journal"]))
    if as_json:
        emit_json({"journal": rows})
        return
    for r in rows:
        delta = f"{r['delta_gpd']:+,} gpd -> {r['balance_after']:,}" if r["balance_after"] is not None else ""
        who = " / ".join(x for x in (r["basin"], r["owner"]) if x)
        docs = f" [{'; '.join(r['documents'])}]" if r["documents"] else ""
        click.echo(f"{r['seq']:>6} {r['at'][:19]} {r['actor']:<12} {r['action']:<16} {who:<30} {delta:<24} {r['ref'] or ''}"
                   f"{(' - ' + r['reason']) if r['reason'] else ''}{docs}")


@bank.command()
@click.option("--municipal-user", default=None, help="Report for one municipal user (default all).")
@click.option("--year", type=int, default=None, help="Restrict parts B, D and the journal to one year.")
@click.option("--out", "out_dir", default="bank-report", show_default=True, type=click.Path(file_okay=False),
              help="Folder for report.html and one CSV per table.")
@json_option
@click.pass_context
def report(ctx, municipal_user, year, out_dir, as_json):
    """The annual municipal user report (A-D), balances and journal, as CSV and HTML."""
    from capacitysim.workflows.bank_reports import annual_report, write_report

    with _ledger(ctx) as led:
        rep = annual_report(led, municipal_user, year)
    paths = write_report(rep, out_dir)
    counts = {k: len(v) for k, v in rep["tables"].items()}
    if as_json:
        emit_json({"files": {k: str(p) for k, p in paths.items()}, "rows": counts, "verify": rep["verify"]})
    else:
        emit_table([(k, f"{counts.get(k, '')} rows  {p}" if k in counts else str(p)) for k, p in paths.items()],
                   "annual municipal user report")


@bank.command()
@json_option
@click.pass_context
def verify(ctx, as_json):
    """Check the ledger: journal sums equal balances, deposits = held + withdrawn, SQLite integrity."""
    with _ledger(ctx) as led:
        out = led.verify()
    if as_json:
        emit_json(out)
    else:
        emit_table([("result", "ok" if out["ok"] else "PROBLEMS FOUND"), ("journal rows", out["journal_rows"]),
                    ("journal head (sha256)", out["journal_head"]), ("deposited", f"{out['deposited_gpd']:,} gpd"),
                    ("held", f"{out['held_gpd']:,} gpd"), ("withdrawn", f"{out['withdrawn_gpd']:,} gpd")]
                   + [(f"{r['application']} {r['kind']} ref", f"{r['status']}: {r['ref']}") for r in out["refs"]]
                   + [("problem", p) for p in out["problems"]], "ledger check")
    if not out["ok"]:
        ctx.exit(1)


# --- credits: quantification and connections -------------------------------------------------------


@cli.group()
def credits():
    """I/I quantification (Tables 174-19.1 to 174-19.3) and the offset a connection needs."""


@credits.command()
@click.argument("project_file", type=click.Path(dir_okay=False))
@json_option
def quantify(project_file, as_json):
    """Print the itemised I/I remediation engineering report of PROJECT_FILE (TOML)."""
    from capacitysim.io.project_files import read_project

    proj = read_project(project_file)
    meta = proj["project"]
    result = ii_offset.quantify_items(proj["items"], engineer=meta.get("engineer", ""))
    out = {"project": meta, "storm": {"depth_in": ii_offset.PROGRAM_STORM_DEPTH_IN, "distribution": "Type II",
                                     "duration_hr": 24, "cn_table": ii_offset.PROGRAM_CN_TABLE},
           **result}
    if as_json:
        emit_json(out)
        return
    click.echo(f"I/I remediation engineering report: {meta['id']} - {meta['name']}")
    click.echo(f"Prepared by {meta['engineer']}" + (f" (license {meta['pe_license']})" if meta.get("pe_license") else ""))
    for key in ("municipal_user", "basin", "description"):
        if meta.get(key):
            click.echo(f"{key.replace('_', ' ').capitalize()}: {meta[key]}")
    click.echo("Quantification per the Binghamton-Johnson City I/I Offset Program, Tables 174-19.1, 174-19.2, 174-19.3;")
    click.echo(f"TR-55 items: {ii_offset.PROGRAM_STORM_DEPTH_IN:g} in, 1-year 24-hour Type II storm, 24-hour runoff volume as gpd.")
    click.echo("")
    for i, r in enumerate(result["items"], 1):
        flag = "" if r["qualifies"] else "  [DOES NOT QUALIFY]"
        click.echo(f"{i:>2}. {r['type']}  {r['location']}{flag}")
        click.echo(f"    {r['quantity']}: {r['basis']}")
        if r["note"]:
            click.echo(f"    note: {r['note']}")
        click.echo(f"    {r['reference']}: {fmt(r['gpd'], 1)} gpd")
    click.echo("")
    click.echo(f"Total I/I removed (qualifying items): {result['total_gpd']:,.1f} gpd")


def _parse_uses(uses: tuple[str, ...]) -> dict[str, float]:
    out = {}
    for u in uses:
        name, sep, count = u.partition("=")
        if not sep:
            raise InputError(f"--use must be NAME=COUNT, got {u!r}")
        try:
            out[name.strip()] = out.get(name.strip(), 0.0) + float(count)
        except ValueError:
            raise InputError(f"--use {name}: COUNT must be a number, got {count!r}") from None
    return out


@credits.command()
@click.option("--use", "uses", multiple=True, required=True, help="NAME=COUNT of a design flow use (repeatable).")
@click.option("--flows", "flows_path", default=None, type=click.Path(dir_okay=False),
              help="Your design flow table (TOML) instead of the bundled one.")
@click.option("--peaking-factor", type=float, default=None, help="A fixed peaking factor instead of Harmon's.")
@click.option("--population", type=float, default=None, help="Persons served, for Harmon's factor (default flow / 100 gpcd).")
@click.option("--offset-ratio", type=float, default=ii_offset.DEFAULT_OFFSET_RATIO, show_default=True)
@json_option
def connection(uses, flows_path, peaking_factor, population, offset_ratio, as_json):
    """Peak sewage flow of a new or modified connection and the credits it needs."""
    from capacitysim.io.project_files import read_design_flows

    table = read_design_flows(flows_path)
    counts = _parse_uses(uses)
    rows, avg, unverified = [], 0.0, []
    for name, n in counts.items():
        if name not in table["uses"]:
            raise InputError(f"--use {name!r} is not in {table['path']} (known: {', '.join(table['uses'])})")
        row = table["uses"][name]
        q = float(ii_offset.average_design_flow_gpd(n, row["gpd_per_unit"]))
        avg += q
        rows.append({"use": name, "count": n, "unit": row["unit"], "gpd_per_unit": row["gpd_per_unit"], "average_gpd": q,
                     "source": row["source"], "verified": bool(row["verified"])})
        if not row["verified"]:
            unverified.append(name)
    pop_k = None if population is None else population / ii_offset.PERSONS_PER_THOUSAND
    pf = float(ii_offset.peaking_factor_for(avg, peaking_factor, pop_k))
    pf_basis = "given" if peaking_factor is not None else "Harmon (Ten States Standards Figure 1)"
    peak = float(ii_offset.peak_sewage_flow_gpd(avg, peaking_factor, pop_k))
    need = float(ii_offset.credits_required_gpd(peak, offset_ratio))
    out = {"uses": rows, "average_gpd": avg, "peaking_factor": pf, "peaking_basis": pf_basis, "peak_flow_gpd": peak,
           "threshold_gpd": ii_offset.OFFSET_THRESHOLD_GPD, "offset_required": bool(ii_offset.offset_required(peak)),
           "offset_ratio": offset_ratio, "credits_required_gpd": need, "design_flow_table": table["path"],
           "unverified_values": unverified}
    if as_json:
        emit_json(out)
        return
    emit_table([(f"{r['use']} x {r['count']:g} {r['unit']}", f"{r['gpd_per_unit']:g} gpd each = {r['average_gpd']:,.0f} gpd"
                 + ("" if r["verified"] else "  (unverified)")) for r in rows]
               + [("average design flow", f"{avg:,.0f} gpd"), ("peaking factor", f"{pf:.3f} ({pf_basis})"),
                  ("peak sewage flow", f"{peak:,.0f} gpd"),
                  ("offset required", f"{'yes' if out['offset_required'] else 'no'} (more than {ii_offset.OFFSET_THRESHOLD_GPD:,.0f} gpd)"),
                  ("credits required", f"{need:,.0f} gpd at {offset_ratio:g}:1")], "connection flow")
    if unverified:
        click.echo(f"note: design flows not verified against their source: {', '.join(unverified)} ({table['path']})", err=True)
