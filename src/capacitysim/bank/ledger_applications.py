"""Applications after the withdrawal: connection, expiry, return, extension, completion, default; applications without credits.

A flow credit note is connected (its flow in the sewer), expires when not connected in time (program
policy ``approval_expiry_years``), is returned, extended (``extension_after_due_date``), completed by
the certificate of occupancy or put in default (``default_credits``: the credits go back to the lots
they came from). An application that withdraws no credits (2,500 gpd or less) is still recorded
(records section, parts C and D) and moves from received to approved to completed or returned.
"""

from __future__ import annotations

import datetime as _dt

from capacitysim.bank import commitments as _commit
from capacitysim.bank.ledger_policies import DEFAULT_CREDITS, POLICY_FLAG, policies
from capacitysim.bank.ledger_transactions import _threshold_detail
from capacitysim.bank.ledger_values import _app_type, _nonnegative_gpd, _text, parse_date
from capacitysim.errors import InputError, RefusedError
from capacitysim.rules import ii_offset


class Applications:
    """The life of an application and its flow credit note after it is recorded.

    A part of :class:`capacitysim.bank.ledger.Ledger`, which composes it with the other parts: it works in
    the ledger's connection and transactions (:class:`capacitysim.bank.ledger_core.LedgerCore`) and calls
    the other parts' methods through ``self``; it holds no state of its own.
    """

    def connect(self, application: str, on=None, *, late_reason: str | None = None, reason: str = "",
                documents=()) -> dict:
        """Record that an approved application's flow is connected to the sewer on ``on`` (default today).

        A connected flow stays a commitment until a registered model version contains it (program
        policy ``connected_until_registered``); it no longer expires. Only an approved (or completed)
        withdrawal or application can be connected, on or after its approval, once.
        """
        application = _text("application", application)
        on = self._not_future("on", parse_date("on", on)) or self._today()
        with self._tx() as c:
            self._dated(c, "on", on, late_reason)
            app = self._application_row(c, application)
            if app is not None:
                table, row, since, basin_id = "applications", app, app["approved_on"] or app["received_on"], app["basin_id"]
                ok = app["status"] in ("approved", "completed")
            else:
                row = self._withdrawal(c, application)
                table, since = "withdrawals", row["note_issued_on"]
                basin_id = c.execute("SELECT basin_id FROM subaccounts WHERE id=?", (row["subaccount_id"],)).fetchone()[0]
                ok = row["status"] in ("approved", "completed")
            if not ok:
                raise RefusedError(f"application {row['application']!r} is {row['status']}; only an approved application "
                                   "is connected")
            if row["connected_on"]:
                raise RefusedError(f"application {row['application']!r} was connected on {row['connected_on']}")
            if row["expired_on"]:
                raise RefusedError(f"application {row['application']!r} expired on {row['expired_on']}")
            if since and on.isoformat() < since[:10]:
                raise InputError(f"on {on} is before the approval of {row['application']!r} ({since[:10]}); allowed: on "
                                 "or after it")
            c.execute(f"UPDATE {table} SET connected_on=? WHERE id=?", (on.isoformat(), row["id"]))
            self._log(c, "connect", reason=reason, documents=documents, basin_id=basin_id, ref=row["application"],
                      detail={"connected_on": on.isoformat(), "policy": "connected_until_registered"})
        out = self.application(application) if app is not None else self.withdrawal(application)
        return out | {"policies": policies("connected_until_registered")}

    def expire(self, as_of=None, *, late_reason: str | None = None, reason: str = "") -> list[dict]:
        """Release every approval not connected within program policy ``approval_expiry_years`` of its approval.

        15 RCNY § 18-37(e): an approval "expires and is null and void unless construction is completed
        within five (5) years of the date of issuance". An expired withdrawal's credits return to the
        holder's lots (as for a DEFAULT); an expired application without credits is closed as returned.
        """
        as_of = self._not_future("as_of", parse_date("as_of", as_of)) or self._today()
        years = _commit.APPROVAL_EXPIRY_YEARS
        out = []
        with self._tx() as c:
            self._dated(c, "as_of", as_of, late_reason)
            for w in c.execute("SELECT * FROM withdrawals WHERE status='approved' AND connected_on IS NULL"
                               " AND expired_on IS NULL ORDER BY id").fetchall():
                due = _commit.add_years(_dt.date.fromisoformat(w["note_issued_on"][:10]), years)
                if due < as_of:
                    why = reason or f"not connected within {years} years of the note of {w['note_issued_on']}"
                    c.execute("UPDATE withdrawals SET expired_on=? WHERE id=?", (as_of.isoformat(), w["id"]))
                    basin_id = c.execute("SELECT basin_id FROM subaccounts WHERE id=?", (w["subaccount_id"],)).fetchone()[0]
                    self._log(c, "expire", reason=why, basin_id=basin_id, ref=w["application"],
                              detail={"approved_on": w["note_issued_on"], "expired_on": as_of.isoformat(),
                                      "policy": "approval_expiry_years"})
                    self._close_and_return(c, w, "returned", "return", why, ())
                    out.append({"application": w["application"], "approved_on": w["note_issued_on"],
                                "expired_on": as_of.isoformat(), "returned_gpd": w["amount_gpd"]})
            for a in c.execute("SELECT * FROM applications WHERE status='approved' AND connected_on IS NULL"
                               " AND expired_on IS NULL ORDER BY id").fetchall():
                since = a["approved_on"] or a["received_on"]
                if _commit.add_years(_dt.date.fromisoformat(since[:10]), years) < as_of:
                    c.execute("UPDATE applications SET expired_on=?, status='returned', closed_at=? WHERE id=?",
                              (as_of.isoformat(), self._now(), a["id"]))
                    self._log(c, "expire", reason=reason or f"not connected within {years} years of its approval",
                              basin_id=a["basin_id"], ref=a["application"],
                              detail={"approved_on": since, "expired_on": as_of.isoformat(),
                                      "policy": "approval_expiry_years"})
                    out.append({"application": a["application"], "approved_on": since, "expired_on": as_of.isoformat(),
                                "returned_gpd": 0})
        return out

    def return_credits(self, application: str, *, reason: str, documents=()) -> dict:
        """Return the credits reserved by a pending or approved withdrawal to the lots they came from;
        for an application without credits, close it as returned."""
        reason = _text("reason", reason)
        application = _text("application", application)
        with self._tx() as c:
            app = self._application_row(c, application)
            if app is not None:
                if app["status"] not in ("received", "approved"):
                    raise RefusedError(f"application {application!r} is {app['status']}; it cannot be returned")
                if app["connected_on"]:
                    raise RefusedError(f"application {application!r} was connected on {app['connected_on']}: its flow is "
                                       "in the sewer and cannot be returned")
                c.execute("UPDATE applications SET status='returned', closed_at=? WHERE id=?", (self._now(), app["id"]))
                self._log(c, "return-application", reason=reason, documents=documents, basin_id=app["basin_id"],
                          ref=application, detail={"status": "returned"})
                return_app = True
            else:
                return_app = False
                w = self._withdrawal(c, application)
                if w["status"] not in ("pending", "approved"):
                    raise RefusedError(f"application {application!r} is {w['status']}; its credits cannot be returned")
                if w["connected_on"]:
                    raise RefusedError(f"application {application!r} was connected on {w['connected_on']}: its flow is "
                                       "in the sewer and its credits cannot be returned")
                s = c.execute("SELECT * FROM signoffs WHERE kind='withdrawal' AND ref=? AND status='pending'",
                              (w["application"],)).fetchone()
                if s is not None:
                    self._decide(c, s, "cancelled", reason)
                self._close_and_return(c, w, "returned", "return", reason, documents)
        return self.application(application) if return_app else self.withdrawal(application)

    def _close_and_return(self, c, w, status: str, action: str, reason: str, documents) -> None:
        c.execute("UPDATE withdrawals SET status=?, closed_at=? WHERE id=?", (status, self._now(), w["id"]))
        basin_id = c.execute("SELECT basin_id FROM subaccounts WHERE id=?", (w["subaccount_id"],)).fetchone()[0]
        self._restore(c, self._pieces(c, w["application"], "withdraw"), w["amount_gpd"], action, w["application"],
                      w["subaccount_id"])
        self._move(c, w["subaccount_id"], w["amount_gpd"], action, reason=reason, documents=documents, basin_id=basin_id,
                   ref=w["application"], detail={"returned_gpd": w["amount_gpd"],
                                                 **({"policy": "default_credits", "default_credits": DEFAULT_CREDITS}
                                                    if action == "default" else {})})

    def extend(self, application: str, until, *, document: str, granted_on=None, late_reason: str | None = None,
               reason: str = "") -> dict:
        """Record an extension of the time allowed for the certificate of occupancy (DEFAULT).

        The DEFAULT definition allows additional time "when extended as provided herein" but sets no
        deadline for granting it. Program policy ``extension_after_due_date`` (:data:`POLICIES`): an
        extension granted (``granted_on``, default today) after the current due date is refused.
        """
        until = parse_date("until", until)
        if until is None:
            raise InputError("until must be a date YYYY-MM-DD")
        document = _text("document", document)
        granted = self._not_future("granted_on", parse_date("granted_on", granted_on)) or self._today()
        with self._tx() as c:
            self._dated(c, "granted_on", granted, late_reason)
            w = self._withdrawal(c, application)
            if w["status"] != "approved":
                raise RefusedError(f"application {application!r} is {w['status']}; only an issued flow credit note can be extended")
            if granted.isoformat() > w["co_due_on"]:
                raise RefusedError(f"program policy extension_after_due_date ({POLICY_FLAG}): an extension granted on "
                                   f"{granted}, after the due date {w['co_due_on']} of the note of {application!r}, is "
                                   "refused (the program sets no deadline for extensions; this policy takes the note to be "
                                   "in default from the day after the due date)")
            if until.isoformat() <= w["co_due_on"]:
                raise RefusedError(f"the extension must be later than the current due date {w['co_due_on']}")
            c.execute("INSERT INTO extensions(withdrawal_id, old_due_on, new_due_on, document, created_at) VALUES (?,?,?,?,?)",
                      (w["id"], w["co_due_on"], until.isoformat(), document, self._now()))
            c.execute("UPDATE withdrawals SET co_due_on=? WHERE id=?", (until.isoformat(), w["id"]))
            basin_id = c.execute("SELECT basin_id FROM subaccounts WHERE id=?", (w["subaccount_id"],)).fetchone()[0]
            self._log(c, "extend", reason=reason, documents=[document], basin_id=basin_id, ref=application,
                      detail={"old_due_on": w["co_due_on"], "new_due_on": until.isoformat(), "granted_on": granted.isoformat(),
                              "policy": "extension_after_due_date"})
        return self.withdrawal(application) | {"policies": policies("extension_after_due_date")}

    def complete(self, application: str, co_issued_on, *, late_reason: str | None = None, reason: str = "",
                 documents=()) -> dict:
        """Record the certificate of occupancy (or, without credits, the completion): the connection is
        complete (annual report part D)."""
        co = parse_date("co_issued_on", co_issued_on)
        if co is None:
            raise InputError("co_issued_on must be a date YYYY-MM-DD")
        self._not_future("co_issued_on", co)
        application = _text("application", application)
        with self._tx() as c:
            self._dated(c, "co_issued_on", co, late_reason)
            app = self._application_row(c, application)
            if app is not None:
                if app["status"] != "approved":
                    raise RefusedError(f"application {application!r} is {app['status']}; only an application approved under "
                                       "the connection application program (--application-approval) can be completed")
                if co.isoformat() < app["received_on"]:
                    raise InputError(f"co_issued_on {co} is before the application was received ({app['received_on']}); "
                                     "allowed: on or after it")
                c.execute("UPDATE applications SET status='completed', completed_on=?, closed_at=? WHERE id=?",
                          (co.isoformat(), self._now(), app["id"]))
                self._log(c, "complete", reason=reason, documents=documents, basin_id=app["basin_id"], ref=application,
                          detail={"co_issued_on": co.isoformat(), "credits": "none"})
            else:
                w = self._withdrawal(c, application)
                if w["status"] != "approved":
                    raise RefusedError(f"application {application!r} is {w['status']}; only a withdrawal approved (signed off) "
                                       "can be completed")
                if co.isoformat() < w["note_issued_on"]:
                    raise InputError(f"co_issued_on {co} is before the flow credit note of {w['note_issued_on']}; "
                                     "allowed: on or after the note")
                if co.isoformat() > w["co_due_on"]:
                    raise RefusedError(f"the certificate of occupancy ({co}) is after the due date {w['co_due_on']}: "
                                       "the note is in default unless an extension is recorded first")
                c.execute("UPDATE withdrawals SET status='completed', co_issued_on=?, closed_at=? WHERE id=?",
                          (co.isoformat(), self._now(), w["id"]))
                basin_id = c.execute("SELECT basin_id FROM subaccounts WHERE id=?", (w["subaccount_id"],)).fetchone()[0]
                self._log(c, "complete", reason=reason, documents=documents, basin_id=basin_id, ref=application,
                          detail={"co_issued_on": co.isoformat()})
        return self.application(application) if app is not None else self.withdrawal(application)

    def check_defaults(self, as_of=None, *, late_reason: str | None = None, reason: str = "") -> list[dict]:
        """Put in default every approved note whose certificate of occupancy is past due on ``as_of``.

        The program defines DEFAULT (no certificate of occupancy within one year of the note, or the
        extended time) but not its consequence. Program policy ``default_credits``
        (:data:`POLICIES`, value ``return-to-holder``): the reserved credits return to the subaccount
        and lots they came from, and the note is closed as ``defaulted``. ``as_of`` cannot be in the
        future: a default is final, and a note is not in default before its due date has passed.

        Returns
        -------
        list of dict
            ``application``, ``returned_gpd``, ``co_due_on`` and ``policy`` (``default_credits``) per
            note put in default.
        """
        as_of = self._not_future("as_of", parse_date("as_of", as_of)) or self._today()
        out = []
        with self._tx() as c:
            self._dated(c, "as_of", as_of, late_reason)
            rows = c.execute("SELECT * FROM withdrawals WHERE status='approved' AND co_due_on < ? ORDER BY id",
                             (as_of.isoformat(),)).fetchall()
            for w in rows:
                self._close_and_return(c, w, "defaulted", "default",
                                       reason or f"no certificate of occupancy by {w['co_due_on']} (as of {as_of})", ())
                out.append({"application": w["application"], "returned_gpd": w["amount_gpd"], "co_due_on": w["co_due_on"],
                            "policy": "default_credits"})
        return out

    def record_application(self, application: str, principal: str, peak_flow_gpd: float, *, basin: str | None = None,
                           node: str | None = None, average_gpd: float | None = None, app_type: str = "connection",
                           received_on=None, late_reason: str | None = None,
                           application_approval: str | None = None, description: str = "", reason: str = "",
                           documents=()) -> dict:
        """Record an application for a new or modified connection or extension that withdraws no credits.

        The records section lists *every* application (part C) and every connection completed
        since 2013-01-01 (part D), not only those that used credits: one adding 2,500 gpd or less
        needs no offset (definitions) but is still an application. Its status moves from
        ``received`` to ``approved`` (``application_approval``, the connection application program's
        approval) and then ``completed`` (:meth:`complete`) or ``returned`` (:meth:`return_credits`).
        An application that needs an offset (more than 2,500 gpd) withdraws credits with
        :meth:`withdraw` instead; recorded here it is flagged ``offset_required``.

        With a ``basin`` it is a commitment at ``node`` (:meth:`commitments`) until connected and
        contained in a registered model, returned or expired; where the basin has a registered
        model, ``node`` must drain to its outlet (section A). ``average_gpd``: its average daily
        flow [gpd] (program policy ``commitment_average``: the peak when not given).
        """
        application = _text("application", application)
        peak = _nonnegative_gpd("peak_flow_gpd", peak_flow_gpd)
        average = self._average(average_gpd, peak) if peak > 0 else None
        app_type = _app_type(app_type)
        node = _text("node", node, required=False)
        received = self._not_future("received_on", parse_date("received_on", received_on)) or self._today()
        approval = _text("application_approval", application_approval, required=False)
        decision = ii_offset.threshold_decision(peak, average)
        with self._tx() as c:
            self._dated(c, "received_on", received, late_reason)
            same = self._app_taken(c, application)
            if same is not None:
                raise RefusedError(f"application {application!r} already has a withdrawal or record"
                                   + ("" if same == application else f" (as {same!r})"))
            p = self._entity(c, principal)
            if not p["municipal"]:
                raise RefusedError(f"{principal} is not a municipal user (the principal municipal user receives the connection)")
            b = self._basin(c, basin) if basin is not None else None
            section_a = _commit.section_a(c, b, node) if b is not None and node is not None else {}
            node = section_a.get("node", node)
            c.execute("INSERT INTO applications(application, app_key, app_type, principal_id, basin_id, node, peak_flow_gpd,"
                      " description, received_on, application_approval, status, created_at, average_gpd, approved_on)"
                      " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                      (application, application.casefold(), app_type, p["id"], b["id"] if b else None, node, peak,
                       description or "", received.isoformat(), approval, "approved" if approval else "received", self._now(),
                       average, received.isoformat() if approval else None))
            self._log(c, "record-application", reason=reason, documents=[*documents, *([approval] if approval else [])],
                      basin_id=b["id"] if b else None, ref=application,
                      detail={"principal": p["name"], "peak_flow_gpd": peak, "type": app_type, "credits": "none",
                              "node": node, "average_gpd": average, **section_a,
                              "offset_required": decision["offset_required"], "threshold": _threshold_detail(decision),
                              "received_on": received.isoformat(), "application_approval": approval})
        return self.application(application)

    def _approve_application(self, application: str, approval: str | None, reason: str, documents) -> dict:
        if approval is None:
            raise InputError("application_approval is required")
        with self._tx() as c:
            app = self._application_row(c, application)
            if app["application_approval"] is not None:
                raise RefusedError(f"application {application!r} already cites application_approval "
                                   f"{app['application_approval']!r}; a recorded reference cannot be replaced")
            if app["status"] != "received":
                raise RefusedError(f"application {application!r} is {app['status']}")
            c.execute("UPDATE applications SET application_approval=?, status='approved', approved_on=? WHERE id=?",
                      (approval, self._today().isoformat(), app["id"]))
            self._log(c, "attach", reason=reason, documents=[*documents, approval], basin_id=app["basin_id"], ref=application,
                      detail={"application_approval": approval, "status": "approved", "credits": "none"})
        return self.application(application)
