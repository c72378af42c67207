"""Reading the credit bank: balances, withdrawals, applications, transfers, projects, entities, the journal.

Every read answers from the file as it is, with the sign-off status of what awaits it and the program
policies in force; :meth:`Reading.cited_files` lists the files the records cite (which no output may
replace).
"""

from __future__ import annotations

import sqlite3

from capacitysim.bank import commitments as _commit
from capacitysim.bank.ledger_core import _json_or_raw
from capacitysim.bank.ledger_policies import ALLOCATION_POLICY, policies
from capacitysim.bank.ledger_transactions import _H_REFS
from capacitysim.bank.ledger_values import parse_date
from capacitysim.bank.ledger_verify import _program_documents
from capacitysim.errors import InputError
from capacitysim.rules import ii_offset


class Reading:
    """What the bank holds, read without a transaction of its own.

    A part of :class:`capacitysim.bank.ledger.Ledger`, which composes it with the other parts: it works in
    the ledger's connection and transactions (:class:`capacitysim.bank.ledger_core.LedgerCore`) and calls
    the other parts' methods through ``self``; it holds no state of its own.
    """

    def _pending_sums(self, subaccount_id: int) -> dict:
        c = self.conn
        q = lambda sql: c.execute(sql, (subaccount_id,)).fetchone()[0]
        return {
            "pending_in_gpd": q("SELECT coalesce(sum(amount_gpd), 0) FROM signoffs WHERE status='pending' AND "
                               "kind IN ('deposit', 'transfer') AND subaccount_id=?"),
            "pending_out_gpd": q("SELECT coalesce(sum(t.amount_gpd), 0) FROM transfers t JOIN signoffs s ON s.kind='transfer'"
                                " AND s.ref = 'transfer-' || t.id WHERE s.status='pending' AND t.from_id=?")
            + q("SELECT coalesce(sum(amount_gpd), 0) FROM signoffs WHERE status='pending' AND kind='withdrawal' "
                "AND subaccount_id=?"),
        }

    def balance(self, basin: str, owner: str, *, lots: bool = False) -> dict:
        """Balance of one subaccount [gpd].

        Returns
        -------
        dict
            ``balance_gpd`` (on deposit and available: signed-off credits in, minus what withdrawals
            and transfers took, pending ones included: program policy ``pending_reserve``),
            ``reserved_gpd`` (by pending or approved withdrawals), ``pending_in_gpd`` (deposits and
            transfers to it awaiting sign-off: not counted), ``pending_out_gpd`` (withdrawals and
            transfers from it awaiting sign-off: already taken out), ``allocation_policy`` and, with
            ``lots``, the subaccount's ``lots`` (:meth:`lots`).
        """
        c = self.conn
        sub = self._subaccount(c, basin, owner)
        reserved = c.execute("SELECT coalesce(sum(amount_gpd), 0) FROM withdrawals WHERE subaccount_id=? AND "
                             "status IN ('pending', 'approved')", (sub["id"],)).fetchone()[0]
        out = {"basin": basin, "owner": owner, "balance_gpd": sub["balance_gpd"], "reserved_gpd": reserved,
               **self._pending_sums(sub["id"]), "allocation_policy": ALLOCATION_POLICY}
        if lots:
            out["lots"] = self.lots(basin, owner)
            out["policies"] = policies("allocation_policy", "pending_reserve")
        return out

    def balances(self, *, lots: bool = False) -> list[dict]:
        """Every subaccount's balance, by basin then owner (with ``lots``: each subaccount's lots)."""
        rows = self.conn.execute(
            "SELECT b.name AS basin, e.name AS owner, e.municipal, s.balance_gpd, s.id,"
            " (SELECT coalesce(sum(amount_gpd),0) FROM withdrawals w WHERE w.subaccount_id=s.id AND w.status IN ('pending','approved')) AS reserved_gpd"
            " FROM subaccounts s JOIN basins b ON b.id=s.basin_id JOIN entities e ON e.id=s.owner_id ORDER BY b.name, e.name").fetchall()
        out = []
        for r in rows:
            item = {"basin": r["basin"], "owner": r["owner"], "municipal": bool(r["municipal"]),
                    "balance_gpd": r["balance_gpd"], "reserved_gpd": r["reserved_gpd"], **self._pending_sums(r["id"])}
            if lots:
                item["lots"] = self.lots(r["basin"], r["owner"])
            out.append(item)
        return out

    def _signoff_of(self, kind: str, ref: str) -> sqlite3.Row | None:
        return self.conn.execute("SELECT * FROM signoffs WHERE kind=? AND ref=? ORDER BY id DESC LIMIT 1", (kind, ref)).fetchone()

    def withdrawal(self, application: str) -> dict:
        """One withdrawal (flow credit note) with its section H references and its sign-off.

        ``signoff_status`` is ``pending``, ``signed-off``, ``rejected``, ``cancelled`` or, for a
        withdrawal made before sign-off existed (migrated schema-2 bank), ``none (schema 2)``;
        ``missing_for_sign_off`` lists the section H references still to attach.
        """
        r = self.conn.execute(
            "SELECT w.*, b.name AS basin, e.name AS owner, p.name AS principal FROM withdrawals w JOIN subaccounts s ON s.id=w.subaccount_id"
            " JOIN basins b ON b.id=s.basin_id JOIN entities e ON e.id=s.owner_id JOIN entities p ON p.id=w.principal_id"
            " WHERE w.application=?", (application,)).fetchone()
        if r is None:
            raise InputError(f"unknown application {application!r}")
        keys = ("application", "basin", "owner", "principal", "status", "peak_flow_gpd", "offset_ratio", "amount_gpd",
                "node", "application_approval", "capacity_ref", "capacity_sha256", "spdes_ref", "spdes_sha256",
                "spdes_as_of", "description", "requested_at", "requested_on", "note_issued_on", "co_due_on", "co_issued_on",
                "closed_at", "average_gpd", "connected_on", "expired_on", "applicant", "affected_owner")
        out = {k: r[k] for k in keys}
        for kind in ("capacity", "spdes"):
            held = _commit.stored_evidence(r[f"{kind}_committed"]) if r[f"{kind}_ref"] else None
            out[f"{kind}_included"] = (None if held is None or held["committed"] is None
                                       else [f["application"] for f in held["committed"]["flows"]])
        out["type"] = r["app_type"]
        s = self._signoff_of("withdrawal", r["application"])
        out.update(signoff_txn=s["txn"] if s else None, signoff_status=s["status"] if s else "none (schema 2)",
                   recorded_by=s["recorded_by"] if s else None, signed_off_by=s["decided_by"] if s else None,
                   signed_off_at=s["decided_at"] if s else None)
        out["missing_for_sign_off"] = ([what for col, what in _H_REFS if r[col] is None]
                                       if r["status"] == "pending" else [])
        return out

    def withdrawals(self) -> list[dict]:
        apps = [r[0] for r in self.conn.execute("SELECT application FROM withdrawals ORDER BY id")]
        return [self.withdrawal(a) for a in apps]

    def application(self, application: str) -> dict:
        """One application recorded without credits (:meth:`record_application`)."""
        r = self.conn.execute(
            "SELECT a.*, p.name AS principal, b.name AS basin FROM applications a JOIN entities p ON p.id = a.principal_id"
            " LEFT JOIN basins b ON b.id = a.basin_id WHERE a.application=?", (application,)).fetchone()
        if r is None:
            raise InputError(f"unknown application {application!r}")
        return {"application": r["application"], "type": r["app_type"], "principal": r["principal"], "basin": r["basin"],
                "node": r["node"], "peak_flow_gpd": r["peak_flow_gpd"], "credits": "none",
                "offset_required": ii_offset.threshold_decision(r["peak_flow_gpd"], r["average_gpd"])["offset_required"],
                "description": r["description"],
                "received_on": r["received_on"], "application_approval": r["application_approval"], "status": r["status"],
                "completed_on": r["completed_on"], "closed_at": r["closed_at"], "average_gpd": r["average_gpd"],
                "approved_on": r["approved_on"], "connected_on": r["connected_on"], "expired_on": r["expired_on"]}

    def applications(self) -> list[dict]:
        """Applications recorded without credits, in the order recorded."""
        return [self.application(r[0]) for r in self.conn.execute("SELECT application FROM applications ORDER BY id")]

    def transfers(self) -> list[dict]:
        """Every transfer with its sign-off status (``none (schema 2)`` for one made before sign-off existed)."""
        out = []
        for t in self.conn.execute(
                "SELECT t.*, fb.name AS basin, fe.name AS from_owner, tb.name AS to_basin, te.name AS to_owner FROM transfers t"
                " JOIN subaccounts f ON f.id=t.from_id JOIN basins fb ON fb.id=f.basin_id JOIN entities fe ON fe.id=f.owner_id"
                " JOIN subaccounts d ON d.id=t.to_id JOIN basins tb ON tb.id=d.basin_id JOIN entities te ON te.id=d.owner_id"
                " ORDER BY t.id").fetchall():
            s = self._signoff_of("transfer", f"transfer-{t['id']}")
            out.append({"transfer": f"transfer-{t['id']}", "basin": t["basin"], "from": t["from_owner"],
                        "to_basin": t["to_basin"], "to": t["to_owner"], "gpd": t["amount_gpd"], "document": t["document"],
                        "board_approval": t["board_approval"], "created_at": t["created_at"],
                        "signoff_status": s["status"] if s else "none (schema 2)",
                        "signed_off_by": s["decided_by"] if s else None, "signed_off_at": s["decided_at"] if s else None})
        return out

    @staticmethod
    def policies() -> list[dict]:
        """Every program policy in force (:data:`POLICIES`), each flagged as a program interpretation."""
        return policies()

    def projects(self) -> list[dict]:
        """Every project with its property (public/private), the quantification its deposit cited (SHA-256,
        total, the PE) and its certification letter (``letter_ref``, ``letter_sha256``, ``letter_on``; None
        when not furnished: annual report part B flags it)."""
        rows = self.conn.execute(
            "SELECT p.*, b.name AS basin, e.name AS jurisdiction, l.ref AS letter_ref, l.sha256 AS letter_sha256,"
            " l.letter_on FROM projects p JOIN basins b ON b.id=p.basin_id JOIN entities e ON e.id=p.jurisdiction_id"
            " LEFT JOIN certification_letters l ON l.project_id = p.id"
            " ORDER BY p.status, coalesce(p.priority, 1e9), p.ref").fetchall()
        keys = ("ref", "basin", "jurisdiction", "description", "priority", "estimated_gpd", "status", "certified_gpd",
                "certified_on", "certificate", "property", "quantification_ref", "quantification_sha256",
                "quantified_gpd", "pe_name", "pe_license", "letter_ref", "letter_sha256", "letter_on")
        return [{k: r[k] for k in keys} for r in rows]

    def entities(self) -> list[dict]:
        return [{"name": r["name"], "municipal": bool(r["municipal"])}
                for r in self.conn.execute("SELECT * FROM entities ORDER BY name")]

    def journal(self, *, basin: str | None = None, owner: str | None = None, since=None, ref: str | None = None,
                txn: str | None = None) -> list[dict]:
        """Journal rows, oldest first, optionally for one basin / owner, from a date, of one ``ref`` (an
        application, project, transfer) or one transaction ``txn``."""
        where, args = [], []
        for col, value in (("j.ref", ref), ("j.txn", txn)):
            if value is not None:
                where.append(f"{col} = ?")
                args.append(value)
        if basin is not None:
            where.append("b.name = ?")
            args.append(basin)
        if owner is not None:
            where.append("e.name = ?")
            args.append(owner)
        since = parse_date("since", since)
        if since is not None:
            where.append("j.at >= ?")
            args.append(since.isoformat())
        sql = ("SELECT j.*, b.name AS basin, e.name AS owner FROM journal j LEFT JOIN basins b ON b.id=j.basin_id"
               " LEFT JOIN subaccounts s ON s.id=j.subaccount_id LEFT JOIN entities e ON e.id=s.owner_id"
               + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY j.seq")
        out = []
        for r in self.conn.execute(sql, args):
            out.append({"seq": r["seq"], "txn": r["txn"], "at": r["at"], "actor": r["actor"], "action": r["action"],
                        "hash": r["hash"],
                        "basin": r["basin"], "owner": r["owner"], "delta_gpd": r["delta_gpd"], "balance_after": r["balance_after"],
                        "ref": r["ref"], "reason": r["reason"], "documents": _json_or_raw(r["documents"]),
                        "detail": _json_or_raw(r["detail"])})
        return out

    def cited_files(self) -> list[str]:
        """Paths of the report files withdrawals cite (recorded with their SHA-256): inputs no output may replace."""
        out = []
        for r in self.conn.execute("SELECT capacity_ref, capacity_sha256, spdes_ref, spdes_sha256 FROM withdrawals"):
            for kind in ("capacity", "spdes"):
                if r[f"{kind}_sha256"] is not None and isinstance(r[f"{kind}_ref"], str):
                    out.append(r[f"{kind}_ref"])
        out += [ref for _what, ref, _sha, _owner in _program_documents(self.conn)]
        for (detail,) in self.conn.execute("SELECT detail FROM signoffs WHERE kind='deposit' AND status='pending'"):
            d = _json_or_raw(detail)
            for key in ("quantification", "letter"):
                if isinstance(d, dict) and isinstance(d.get(key), dict) and isinstance(d[key].get("ref"), str):
                    out.append(d[key]["ref"])
        return out
