"""The program's records: the municipal users' annual submissions, disputes, and the purge after retention.

Each municipal user submits its records at least annually (records section; program policy
``annual_report_due``); records are kept three years and longer while a dispute is open, after which
:meth:`Records.purge` removes the oldest journal rows, carrying each subaccount's movements forward and
keeping the hash chain one chain (its new anchor).
"""

from __future__ import annotations

import datetime as _dt

from capacitysim.bank import commitments as _commit
from capacitysim.bank import refs as _refs
from capacitysim.bank.ledger_policies import policies
from capacitysim.bank.ledger_values import _text, parse_date
from capacitysim.errors import InputError, RefusedError
from capacitysim.rules import ii_offset


class Records:
    """Annual submissions of the municipal users, disputes, and the purge of old records.

    A part of :class:`capacitysim.bank.ledger.Ledger`, which composes it with the other parts: it works in
    the ledger's connection and transactions (:class:`capacitysim.bank.ledger_core.LedgerCore`) and calls
    the other parts' methods through ``self``; it holds no state of its own.
    """

    def record_annual_report(self, municipal_user: str, period: int, *, submitted_on=None, document: str | None = None,
                             late_reason: str | None = None, reason: str = "") -> dict:
        """Record a municipal user's submission of its records to the bank administrator (records section:
        "submit them to the bank administrator on at least an annual basis"), for ``period`` (a calendar
        year), with the date it was due under program policy ``annual_report_due`` (:meth:`annual_reports`)
        and the document's SHA-256 when a file is given. Once per municipal user and period.
        """
        if isinstance(period, bool) or (isinstance(period, float) and not period.is_integer()):
            raise InputError(f"period {period!r}; allowed: a calendar year (2013 or later)")
        try:
            period = int(period)
        except (TypeError, ValueError):
            raise InputError(f"period {period!r}; allowed: a calendar year (2013 or later)") from None
        submitted = self._not_future("submitted_on", parse_date("submitted_on", submitted_on)) or self._today()
        if not 2013 <= period <= submitted.year:
            raise InputError(f"period {period}; allowed: a calendar year from 2013 (the program's start) to the year of "
                             f"the submission ({submitted.year})")
        doc = _refs.resolve_document("document", _text("document", document, required=False),
                                     "the submitted records (any format)")
        with self._tx() as c:
            e = self._entity(c, municipal_user)
            if not e["municipal"]:
                raise RefusedError(f"{municipal_user} is not a municipal user: the records section asks each municipal user "
                                   "to submit its records")
            self._dated(c, "submitted_on", submitted, late_reason)
            if submitted.isoformat() < str(e["created_at"])[:10]:
                raise RefusedError(f"{municipal_user} entered the bank on {str(e['created_at'])[:10]}; records submitted on "
                                   f"{submitted} were submitted before it")
            if c.execute("SELECT 1 FROM annual_reports WHERE entity_id=? AND period=?", (e["id"], period)).fetchone():
                raise RefusedError(f"{municipal_user}: the records of {period} were already submitted")
            due = _annual_due(c, e)
            c.execute("INSERT INTO annual_reports(entity_id, period, due_on, submitted_on, document, sha256, recorded_at,"
                      " recorded_by) VALUES (?,?,?,?,?,?,?,?)",
                      (e["id"], period, due.isoformat(), submitted.isoformat(), doc and doc["ref"], doc and doc["sha256"],
                       self._now(), self._require_actor()))
            self._log(c, "annual-report", reason=reason, documents=[doc["ref"]] if doc else [], ref=municipal_user,
                      detail={"period": period, "due_on": due.isoformat(), "submitted_on": submitted.isoformat(),
                              "late": submitted > due, "policy": "annual_report_due"})
        return {"municipal_user": municipal_user, "period": period, "due_on": due.isoformat(),
                "submitted_on": submitted.isoformat(), "late": submitted > due, "document": doc,
                "policies": policies("annual_report_due")}

    def annual_reports(self, as_of=None) -> list[dict]:
        """Each municipal user's annual records: its submissions and the next due date (program policy
        ``annual_report_due``), with ``status`` ``due`` (by the date), ``overdue`` (past it on ``as_of``,
        default today)."""
        as_of = parse_date("as_of", as_of) or self._today()
        out = []
        c = self.conn
        for e in c.execute("SELECT * FROM entities WHERE municipal ORDER BY name").fetchall():
            subs = [{"period": r["period"], "due_on": r["due_on"], "submitted_on": r["submitted_on"],
                     "late": r["submitted_on"] > r["due_on"], "document": r["document"], "sha256": r["sha256"]}
                    for r in c.execute("SELECT * FROM annual_reports WHERE entity_id=? ORDER BY submitted_on, period",
                                       (e["id"],))]
            due = _annual_due(c, e)
            out.append({"municipal_user": e["name"], "submissions": subs, "next_due_on": due.isoformat(),
                        "status": "overdue" if due < as_of else "due",
                        "last_submitted_on": subs[-1]["submitted_on"] if subs else None})
        return out

    def open_dispute(self, basin: str, subject: str, *, reason: str = "", documents=()) -> dict:
        """Record an unresolved dispute: the basin's records cannot be purged until it is closed."""
        subject = _text("subject", subject)
        with self._tx() as c:
            b = self._basin(c, basin)
            cur = c.execute("INSERT INTO disputes(basin_id, subject, opened_at) VALUES (?,?,?)", (b["id"], subject, self._now()))
            self._log(c, "dispute-open", reason=reason, documents=documents, basin_id=b["id"], ref=f"dispute-{cur.lastrowid}",
                      detail={"subject": subject})
        return {"dispute": cur.lastrowid, "basin": basin, "subject": subject}

    def close_dispute(self, dispute_id: int, *, reason: str, documents=()) -> dict:
        reason = _text("reason", reason)
        with self._tx() as c:
            d = c.execute("SELECT * FROM disputes WHERE id=?", (int(dispute_id),)).fetchone()
            if d is None:
                raise InputError(f"unknown dispute {dispute_id!r}")
            if d["closed_at"] is not None:
                raise RefusedError(f"dispute {dispute_id} is already closed")
            c.execute("UPDATE disputes SET closed_at=? WHERE id=?", (self._now(), d["id"]))
            self._log(c, "dispute-close", reason=reason, documents=documents, basin_id=d["basin_id"], ref=f"dispute-{d['id']}")
        return {"dispute": int(dispute_id), "closed": True}

    def purge(self, before, *, reason: str) -> dict:
        """Purge journal rows dated before ``before``, if all are older than the retention period.

        Refused when ``before`` is within three years of today (records section) or when any row to
        purge belongs to a basin under an open dispute. Each subaccount's purged movements are
        carried forward in one ``carry-forward`` row, so the journal still sums to the balances.
        """
        reason = _text("reason", reason)
        cutoff = parse_date("before", before)
        if cutoff is None:
            raise InputError("before must be a date YYYY-MM-DD")
        limit = _commit.add_years(self._today(), -ii_offset.RECORD_RETENTION_YEARS)
        if cutoff > limit:
            raise RefusedError(f"records younger than {ii_offset.RECORD_RETENTION_YEARS} years cannot be purged "
                               f"(the cutoff must be on or before {limit})")
        cut = cutoff.isoformat()
        with self._tx() as c:
            disputed = c.execute("SELECT d.id, b.name FROM journal j JOIN disputes d ON d.basin_id = j.basin_id "
                                 "JOIN basins b ON b.id = d.basin_id WHERE d.closed_at IS NULL AND j.at < ? LIMIT 1",
                                 (cut,)).fetchone()
            if disputed:
                raise RefusedError(f"basin {disputed['name']} is under dispute {disputed['id']}: its records cannot be purged")
            # only a contiguous oldest part of the journal, so the hash chain stays one chain
            first_kept = c.execute("SELECT min(seq) FROM journal WHERE at >= ?", (cut,)).fetchone()[0]
            seq_max = (first_kept - 1) if first_kept is not None else c.execute("SELECT max(seq) FROM journal").fetchone()[0]
            if seq_max is None or c.execute("SELECT count(*) FROM journal WHERE seq <= ?", (seq_max,)).fetchone()[0] == 0:
                return {"purged_rows": 0, "before": cut}
            anchor = c.execute("SELECT hash FROM journal WHERE seq <= ? ORDER BY seq DESC LIMIT 1", (seq_max,)).fetchone()[0]
            carry = c.execute("SELECT subaccount_id, basin_id, sum(delta_gpd) AS d FROM journal WHERE seq <= ? AND at < ? "
                              "AND subaccount_id IS NOT NULL GROUP BY subaccount_id", (seq_max, cut)).fetchall()
            c.execute("INSERT INTO purge_permits(seq_max, cutoff) VALUES (?, ?)", (seq_max, cut))
            n = c.execute("DELETE FROM journal WHERE seq <= ? AND at < ?", (seq_max, cut)).rowcount
            c.execute("DELETE FROM purge_permits")
            c.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('journal_anchor', ?)", (anchor,))
            c.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('purged_before', ?)", (cut,))
            for r in carry:
                self._log(c, "carry-forward", reason=f"movements before {cut} purged", basin_id=r["basin_id"],
                          subaccount_id=r["subaccount_id"], delta_gpd=r["d"], detail={"purged_before": cut})
            self._log(c, "purge", reason=reason, detail={"before": cut, "rows": n, "last_purged_seq": seq_max,
                                                         "last_purged_hash": anchor})
        return {"purged_rows": n, "before": cut}


def _annual_due(c, entity) -> _dt.date:
    """The next date a municipal user's records are due (program policy ``annual_report_due``,
    ``anniversary``): one year after its last submission; the first, one year after it entered the bank."""
    last = c.execute("SELECT max(submitted_on) FROM annual_reports WHERE entity_id=?", (entity["id"],)).fetchone()[0]
    since = _dt.date.fromisoformat(last[:10]) if last else _dt.date.fromisoformat(str(entity["created_at"])[:10])
    return _commit.add_years(since, 1)
