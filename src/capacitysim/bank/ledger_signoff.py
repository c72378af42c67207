"""The bank administrator's sign-off: pending deposits, withdrawals and transfers signed off or rejected.

Each pending transaction has a sign-off record (``signoffs``: who recorded it, when); only a registered
bank administrator who did not record it signs it off or rejects it (definitions, BANK ADMINISTRATOR;
program policy ``signoff_separation``). Signing off a deposit certifies its project and makes its lot;
a withdrawal's sign-off checks its section H references again and issues the flow credit note; a
transfer's gives the receiver lots of the same origin. A rejection releases what was reserved.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import sqlite3

from capacitysim.bank import commitments as _commit
from capacitysim.bank import refs as _refs
from capacitysim.bank.ledger_core import _json_or_raw
from capacitysim.bank.ledger_evidence import _evidence_message
from capacitysim.bank.ledger_policies import POLICY_FLAG, SPDES_EVIDENCE_MAX_AGE_DAYS
from capacitysim.bank.ledger_transactions import _H_REFS
from capacitysim.bank.ledger_values import _text, parse_date
from capacitysim.errors import InputError, RefusedError
from capacitysim.rules import ii_offset


class SignOff:
    """Sign-off records; the administrator's sign-off and rejection; what awaits them.

    A part of :class:`capacitysim.bank.ledger.Ledger`, which composes it with the other parts: it works in
    the ledger's connection and transactions (:class:`capacitysim.bank.ledger_core.LedgerCore`) and calls
    the other parts' methods through ``self``; it holds no state of its own.
    """

    def _record_signoff(self, c, kind: str, ref: str, subaccount_id: int, amount: int, detail: dict | None = None) -> str:
        """A pending sign-off row for what this transaction recorded; returns its id (the transaction's txn)."""
        c.execute("INSERT INTO signoffs(txn, kind, ref, subaccount_id, amount_gpd, detail, status, recorded_at, recorded_by)"
                  " VALUES (?,?,?,?,?,?,'pending',?,?)",
                  (self._txn, kind, ref, subaccount_id, int(amount), json.dumps(detail or {}, sort_keys=True,
                                                                                ensure_ascii=False),
                   self._now(), self._require_actor()))
        return self._txn

    @staticmethod
    def _signoff_row(c, txn: str) -> sqlite3.Row:
        t = str(txn or "").strip().lower()
        if not re.fullmatch(r"[0-9a-f]{8,32}", t):
            raise InputError(f"txn {str(txn)[:60]!r}: allowed: the transaction id printed when the deposit, withdrawal or "
                             "transfer was recorded (`bank pending`), 8 to 32 hexadecimal digits")
        rows = c.execute("SELECT * FROM signoffs WHERE txn LIKE ? ORDER BY id LIMIT 2", (t + "%",)).fetchall()
        if not rows:
            raise InputError(f"txn {t!r}: no deposit, withdrawal or transfer was recorded with this id (see `bank pending`)")
        if len(rows) > 1:
            raise InputError(f"txn {t!r} is the start of more than one transaction id; give more digits")
        return rows[0]

    def _decide(self, c, s, status: str, reason: str, on: _dt.date | None = None, *, by: str | None = None) -> None:
        c.execute("UPDATE signoffs SET status=?, decided_at=?, decided_on=?, decided_by=?, decision=? WHERE id=?",
                  (status, self._now(), (on or self._today()).isoformat(), by or self._require_actor(), reason or "",
                   s["id"]))

    def pending(self) -> list[dict]:
        """Deposits, withdrawals and transfers awaiting the bank administrator's sign-off, oldest first.

        Each has ``txn``, ``kind``, ``ref``, ``amount_gpd``, ``basin``, ``owner`` (receiving, or paying
        for a withdrawal), ``recorded_by``, ``recorded_at`` and, for a withdrawal, ``missing`` (the
        section H references still to attach before it can be signed off).
        """
        out = []
        rows = self.conn.execute(
            "SELECT s.*, b.name AS basin, e.name AS owner FROM signoffs s JOIN subaccounts a ON a.id = s.subaccount_id"
            " JOIN basins b ON b.id = a.basin_id JOIN entities e ON e.id = a.owner_id WHERE s.status = 'pending'"
            " ORDER BY s.id").fetchall()
        for s in rows:
            item = {"txn": s["txn"], "kind": s["kind"], "ref": s["ref"], "amount_gpd": s["amount_gpd"], "basin": s["basin"],
                    "owner": s["owner"], "recorded_by": s["recorded_by"], "recorded_at": s["recorded_at"]}
            if s["kind"] == "withdrawal":
                w = self.conn.execute("SELECT * FROM withdrawals WHERE application=?", (s["ref"],)).fetchone()
                item["missing"] = [what for col, what in _H_REFS if w is not None and w[col] is None]
            out.append(item)
        return out

    def sign_off(self, txn: str, *, on=None, late_reason: str | None = None, reason: str = "", documents=()) -> dict:
        """The bank administrator signs off a pending deposit, withdrawal or transfer: it takes effect.

        Only a person registered as bank administrator signs off (definitions, BANK ADMINISTRATOR), and
        not the person who recorded the transaction (program policy ``signoff_separation``); the journal
        records who (the actor) and when, with ``on`` (the date of the sign-off, default today: the date
        of the flow credit note for a withdrawal).

        * a deposit: the project is recorded as certified, a lot of its credits is created and the
          subaccount's balance rises;
        * a withdrawal: refused unless it cites the capacity demonstration and the SPDES check
          (section H(1)) and the connection application program's approval (section H(2)), the cited
          files are unchanged since they were recorded, and the SPDES check is as of no more than
          ``spdes_evidence_max_age_days`` (program policy) before ``on``. The flow credit note is
          issued on ``on`` and the certificate of occupancy falls due one year later (DEFAULT);
        * a transfer: the receiving holder gets lots of the same origin as the credits taken.

        Raises
        ------
        InputError
            An unknown or ambiguous ``txn``; ``on`` in the future.
        RefusedError
            The actor is not a registered administrator, or recorded the transaction; the transaction
            is not pending; a withdrawal lacks a section H reference, its evidence changed or is too
            old, or is held by an earlier withdrawal (program policy ``evidence_single_use``); ``on``
            before the withdrawal date, or before the as-of date of the SPDES check it cites.
        """
        on = self._not_future("on", parse_date("on", on)) or self._today()
        reason = _text("reason", reason, required=False) or ""
        with self._tx() as c:
            s = self._signoff_row(c, txn)
            admin = self._require_administrator(c, "signs off deposits, withdrawals and transfers")
            self._dated(c, "on", on, late_reason)
            if s["status"] != "pending":
                raise RefusedError(f"{s['kind']} {s['ref']} (txn {s['txn']}) is {s['status']}, not awaiting sign-off")
            self._not_the_recorder(c, s, admin, "sign it off")
            sub = c.execute("SELECT * FROM subaccounts WHERE id=?", (s["subaccount_id"],)).fetchone()
            detail = _json_or_raw(s["detail"]) if isinstance(_json_or_raw(s["detail"]), dict) else {}
            common = {"txn": s["txn"], "kind": s["kind"], "signed_off_by": admin, "signed_off_on": on.isoformat(),
                      "recorded_by": s["recorded_by"], "recorded_at": s["recorded_at"]}
            if s["kind"] == "deposit":
                p = c.execute("SELECT * FROM projects WHERE ref=?", (s["ref"],)).fetchone()
                for key, what in (("quantification", "quantification"), ("letter", "certification letter")):
                    doc = detail.get(key)
                    if isinstance(doc, dict) and not str(doc.get("ref", "")).startswith("service job "):
                        status = _refs.check_ref(doc.get("ref"), doc.get("sha256"))
                        if status != "ok":
                            raise RefusedError(f"project {s['ref']!r}: the cited {what} {doc.get('ref')} is {status} since "
                                               "the deposit was recorded; the administrator cannot sign off on it")
                if on.isoformat() < detail.get("certified_on", ""):
                    raise InputError(f"on {on} is before the project's certification ({detail['certified_on']}); allowed: "
                                     "on or after it")
                self._decide(c, s, "signed-off", reason, on, by=admin)
                desc = detail.get("description") or ""
                quant = detail.get("quantification") or {}
                c.execute("UPDATE projects SET status='certified', certified_gpd=?, certified_on=?, certificate=?,"
                          " description=CASE WHEN ?<>'' THEN ? ELSE description END,"
                          " property=coalesce(property, ?), quantification_ref=?, quantification_sha256=?,"
                          " quantified_gpd=?, pe_name=?, pe_license=? WHERE id=?",
                          (s["amount_gpd"], detail.get("certified_on"), detail.get("certificate"), desc, desc,
                           detail.get("property"), quant.get("ref"), quant.get("sha256"), quant.get("total_gpd"),
                           quant.get("engineer"), quant.get("pe_license"), p["id"]))
                if detail.get("letter") and c.execute("SELECT 1 FROM certification_letters WHERE project_id=?",
                                                      (p["id"],)).fetchone() is None:
                    c.execute("INSERT INTO certification_letters(project_id, ref, sha256, letter_on, recorded_at,"
                              " recorded_by) VALUES (?,?,?,?,?,?)",
                              (p["id"], detail["letter"]["ref"], detail["letter"]["sha256"], detail.get("certified_on"),
                               s["recorded_at"], s["recorded_by"]))
                lot = self._new_lot(c, sub["id"], p["id"], detail.get("certified_on"))
                self._lot_move(c, lot, s["amount_gpd"], "deposit", s["ref"])
                self._log(c, "sign-off", reason=reason, documents=documents, basin_id=sub["basin_id"], ref=s["ref"],
                          detail=common)
                self._move(c, sub["id"], s["amount_gpd"], "deposit",
                           reason=detail.get("reason") or f"project {s['ref']} certified complete",
                           documents=detail.get("documents") or [], basin_id=sub["basin_id"], ref=s["ref"],
                           detail={"stated_gpd": detail.get("stated_gpd"), "booked_gpd": s["amount_gpd"],
                                   "certified_on": detail.get("certified_on"), "lot": lot, **common})
                out = {"project": s["ref"], "deposited_gpd": s["amount_gpd"], "lot": lot}
            elif s["kind"] == "withdrawal":
                w = self._withdrawal(c, s["ref"])
                missing = [what for col, what in _H_REFS if w[col] is None]
                if missing:
                    raise RefusedError(f"application {w['application']!r} cannot be signed off without "
                                       + "; ".join(missing) + " (attach them with `bank attach`)")
                if w["capacity_sha256"] is None or w["spdes_sha256"] is None:
                    raise RefusedError(f"application {w['application']!r} cites a run id, not a JSON result document; "
                                       "the bank reads the document itself: return the credits and apply again citing "
                                       "the JSON files")
                for kind in ("capacity", "spdes"):
                    status = _refs.check_ref(w[f"{kind}_ref"], w[f"{kind}_sha256"])
                    if status != "ok":
                        raise RefusedError(f"application {w['application']!r}: the cited {kind} document {w[f'{kind}_ref']} "
                                           f"is {status} since it was recorded; the administrator cannot sign off on it")
                    first = self._evidence_holders(c, kind, w[f"{kind}_sha256"], before_id=w["id"])
                    if first:  # two withdrawals of a bank older than schema 4 citing one document: the first keeps it
                        raise RefusedError(_evidence_message(kind, w[f"{kind}_ref"], w[f"{kind}_sha256"], first[0],
                                                             w["application"], self._evidence_single_use()))
                if on.isoformat() < (w["requested_on"] or ""):
                    raise RefusedError(f"the sign-off date {on} is before the withdrawal date {w['requested_on']} of "
                                       f"application {w['application']!r}: a flow credit note is issued on or after the "
                                       "withdrawal it approves")
                b = c.execute("SELECT * FROM basins WHERE id=?", (sub["basin_id"],)).fetchone()
                for kind in ("capacity", "spdes"):
                    held = _commit.stored_evidence(w[f"{kind}_committed"])
                    self._evidence_current(c, b, w["application"], kind, w[f"{kind}_ref"], held["model_sha256"],
                                           held["committed"], on=on, when="since it was run")
                as_of = parse_date("spdes_as_of", w["spdes_as_of"])
                if as_of is not None and as_of > on:
                    raise RefusedError(f"application {w['application']!r}: the cited SPDES check is as of {as_of}, after "
                                       f"the sign-off date {on}: the administrator signs off on evidence that exists on "
                                       "the day of the sign-off")
                if as_of is not None and (on - as_of).days > SPDES_EVIDENCE_MAX_AGE_DAYS:
                    raise RefusedError(f"application {w['application']!r}: the cited SPDES check is as of {as_of}, "
                                       f"{(on - as_of).days} days before the sign-off on {on}; allowed: at most "
                                       f"{SPDES_EVIDENCE_MAX_AGE_DAYS} days (program policy spdes_evidence_max_age_days, "
                                       f"{POLICY_FLAG})")
                self._decide(c, s, "signed-off", reason, on, by=admin)
                due = _commit.add_years(on, ii_offset.CERTIFICATE_OF_OCCUPANCY_YEARS)
                c.execute("UPDATE withdrawals SET status='approved', note_issued_on=?, co_due_on=? WHERE id=?",
                          (on.isoformat(), due.isoformat(), w["id"]))
                self._log(c, "sign-off", reason=reason, documents=documents, basin_id=sub["basin_id"], ref=s["ref"],
                          detail=common | {"status": "approved", "note_issued_on": on.isoformat(),
                                           "co_due_on": due.isoformat()})
                out = {"application": s["ref"], "note_issued_on": on.isoformat(), "co_due_on": due.isoformat()}
            else:
                t = c.execute("SELECT * FROM transfers WHERE id=?", (int(s["ref"].split("-")[-1]),)).fetchone()
                self._decide(c, s, "signed-off", reason, on, by=admin)
                lots = self._mirror(c, self._pieces(c, s["ref"], "transfer-out"), t["amount_gpd"], sub["id"],
                                    "transfer-in", s["ref"])
                self._log(c, "sign-off", reason=reason, documents=documents, basin_id=sub["basin_id"], ref=s["ref"],
                          detail=common)
                self._move(c, sub["id"], t["amount_gpd"], "transfer-in", reason=reason, documents=[t["document"],
                                                                                                   t["board_approval"]],
                           basin_id=sub["basin_id"], ref=s["ref"], detail={**common, "gpd": t["amount_gpd"], "lots": lots})
                out = {"transfer": s["ref"], "gpd": t["amount_gpd"], "lots": lots}
            owner = c.execute("SELECT e.name FROM entities e WHERE e.id=?", (sub["owner_id"],)).fetchone()[0]
            basin = c.execute("SELECT name FROM basins WHERE id=?", (sub["basin_id"],)).fetchone()[0]
            balance = c.execute("SELECT balance_gpd FROM subaccounts WHERE id=?", (sub["id"],)).fetchone()[0]
        return {"txn": s["txn"], "kind": s["kind"], "ref": s["ref"], "status": "signed-off", "signed_off_by": admin,
                "signed_off_on": on.isoformat(), "basin": basin, "owner": owner, "balance_gpd": balance, **out}

    def reject(self, txn: str, *, reason: str, documents=()) -> dict:
        """The bank administrator rejects a pending deposit, withdrawal or transfer (nothing takes effect).

        A rejected deposit leaves the project identified (not certified); a rejected withdrawal is
        closed as ``returned`` and its credits go back to the lots they came from (and its evidence is
        released: program policy ``evidence_single_use``); a rejected transfer's credits go back to the
        sender's lots (``transfer-reject``). The person who recorded the transaction cannot reject it
        (program policy ``signoff_separation``).
        """
        reason = _text("reason", reason)
        with self._tx() as c:
            s = self._signoff_row(c, txn)
            admin = self._require_administrator(c, "rejects deposits, withdrawals and transfers")
            if s["status"] != "pending":
                raise RefusedError(f"{s['kind']} {s['ref']} (txn {s['txn']}) is {s['status']}, not awaiting sign-off")
            self._not_the_recorder(c, s, admin, "reject it")
            self._decide(c, s, "rejected", reason, by=admin)
            sub = c.execute("SELECT * FROM subaccounts WHERE id=?", (s["subaccount_id"],)).fetchone()
            common = {"txn": s["txn"], "kind": s["kind"], "rejected_by": admin}
            self._log(c, "reject", reason=reason, documents=documents, basin_id=sub["basin_id"], ref=s["ref"], detail=common)
            if s["kind"] == "withdrawal":
                self._close_and_return(c, self._withdrawal(c, s["ref"]), "returned", "return", reason, documents)
            elif s["kind"] == "transfer":
                t = c.execute("SELECT * FROM transfers WHERE id=?", (int(s["ref"].split("-")[-1]),)).fetchone()
                self._restore(c, self._pieces(c, s["ref"], "transfer-out"), t["amount_gpd"], "transfer-reject", s["ref"],
                              t["from_id"])
                src = c.execute("SELECT basin_id FROM subaccounts WHERE id=?", (t["from_id"],)).fetchone()
                self._move(c, t["from_id"], t["amount_gpd"], "transfer-reject", reason=reason, documents=documents,
                           basin_id=src["basin_id"], ref=s["ref"], detail=common | {"gpd": t["amount_gpd"]})
        return {"txn": s["txn"], "kind": s["kind"], "ref": s["ref"], "status": "rejected", "rejected_by": admin,
                "reason": reason}
