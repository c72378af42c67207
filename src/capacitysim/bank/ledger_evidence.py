"""The evidence a withdrawal cites: used once (program policy ``evidence_single_use``) and current.

A capacity demonstration or SPDES/treatment check (the same SHA-256) is the evidence of one application:
:meth:`Evidence._evidence_free` refuses a document another withdrawal holds, naming its application, and
:meth:`Evidence.evidence_use` lists who cites a document. Which withdrawal statuses hold a document is
the policy value in force, read from the composed ledger at each call (``Ledger._evidence_single_use``:
the module attribute ``capacitysim.bank.ledger.EVIDENCE_SINGLE_USE``, which switches to the alternative).
:meth:`Evidence._evidence_current` refuses evidence run on another model than the basin's registered one
or leaving out a commitment of its scope (:mod:`capacitysim.bank.commitments`).
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

from capacitysim.bank import commitments as _commit
from capacitysim.bank import refs as _refs
from capacitysim.bank.ledger_policies import EVIDENCE_HELD_BY, POLICY_FLAG
from capacitysim.errors import RefusedError


class Evidence:
    """Single use of cited evidence, and evidence current on the capacity register.

    A part of :class:`capacitysim.bank.ledger.Ledger`, which composes it with the other parts: it works in
    the ledger's connection and transactions (:class:`capacitysim.bank.ledger_core.LedgerCore`) and calls
    the other parts' methods through ``self``; it holds no state of its own.
    """

    def _evidence_holders(self, c, kind: str, sha256: str | None, *, exclude_id: int | None = None,
                          before_id: int | None = None) -> list:
        """The withdrawals holding the ``kind`` document of SHA-256 ``sha256`` (program policy
        ``evidence_single_use``: the statuses of :data:`EVIDENCE_HELD_BY`), oldest first."""
        if sha256 is None:
            return []
        held = EVIDENCE_HELD_BY[self._evidence_single_use()]
        sql = (f"SELECT id, application, status FROM withdrawals WHERE {kind}_sha256 = ? "
               f"AND status IN ({', '.join('?' * len(held))})")
        args: list = [sha256, *held]
        if exclude_id is not None:
            sql += " AND id <> ?"
            args.append(exclude_id)
        if before_id is not None:
            sql += " AND id < ?"
            args.append(before_id)
        return c.execute(sql + " ORDER BY id", args).fetchall()

    def _evidence_free(self, c, kind: str, ref: dict | None, application: str, *, exclude_id: int | None = None) -> None:
        """Refuse citing a document another application's withdrawal holds (naming that application)."""
        if ref is None:
            return
        rows = self._evidence_holders(c, kind, ref.get("sha256"), exclude_id=exclude_id)
        if rows:
            raise RefusedError(_evidence_message(kind, ref["ref"], ref["sha256"], rows[0], application,
                                                 self._evidence_single_use()))

    def evidence_use(self, sha256: str) -> list[dict]:
        """The withdrawals citing the document of SHA-256 ``sha256`` (capacity or SPDES evidence), oldest first.

        Each: ``application``, ``kind`` (``capacity`` or ``spdes``), ``status`` and ``holds`` (True when,
        under program policy ``evidence_single_use``, that withdrawal keeps the document from being cited
        by another application).
        """
        out = []
        held = EVIDENCE_HELD_BY[self._evidence_single_use()]
        for kind in _refs.KINDS:
            for r in self.conn.execute(f"SELECT id, application, status FROM withdrawals WHERE {kind}_sha256 = ? ORDER BY id",
                                       (str(sha256),)):
                out.append({"id": r["id"], "application": r["application"], "kind": kind, "status": r["status"],
                            "holds": r["status"] in held})
        return [{k: v for k, v in x.items() if k != "id"} for x in sorted(out, key=lambda x: x["id"])]

    def _evidence_current(self, c, basin_row, application: str, kind: str, ref: str, model_sha256: str | None,
                          block, *, on: _dt.date, when: str) -> None:
        """Refuse evidence on another model than the basin's registered one, or leaving out a commitment of its
        scope (``kind`` capacity: the basins on the registered model; spdes: the basins draining to its plant)."""
        m = _commit.model_of_basin(c, basin_row["id"])
        if m is None:
            return
        if kind == "capacity" and model_sha256 != m["sha256"]:
            ran = f"a model of SHA-256 {model_sha256[:12]}..." if model_sha256 else "a model whose SHA-256 it does not record"
            raise RefusedError(f"capacity_ref: the demonstration {ref} ran {ran}; basin {basin_row['name']}'s registered "
                               f"model is version {m['version']}, {Path(m['path']).name} ({m['sha256'][:12]}...): a "
                               "demonstration cited for a withdrawal runs the registered model (register a newer version "
                               "with `bank register-model`, or demonstrate on it)")
        if block is not None:
            head = block.get("bank_head")
            known = head is not None and (
                c.execute("SELECT 1 FROM journal WHERE hash=?", (head,)).fetchone() is not None
                or c.execute("SELECT 1 FROM meta WHERE key='journal_anchor' AND value=?", (head,)).fetchone() is not None)
            if not known:
                raise RefusedError(f"{kind}_ref: the commitments recorded in {ref} were not read from this bank (its bank "
                                   f"head {str(head)[:12]}... is no head of this bank's journal): run it with --committed "
                                   f"{self.path}")
        if kind == "capacity":
            scope = _commit.scope_basins(c, model_sha256=m["sha256"])
        elif m["plant"]:
            scope = _commit.scope_basins(c, plant=m["plant"])
        else:
            return
        required = _commit.commitment_flows(c, [b["basin_id"] for b in scope], exclude=application, as_of=on)
        if not required:
            return
        gaps = _commit.evidence_gaps(required, block)
        if gaps:
            how = ("capacitysim capacity MODEL ... --committed BANK --application APP" if kind == "capacity"
                   else "capacitysim spdes check ... --committed BANK --application APP")
            raise RefusedError(f"{kind}_ref: the {'capacity demonstration' if kind == 'capacity' else 'SPDES check'} "
                               f"{ref} leaves out {len(gaps)} commitment(s) made {when}: {'; '.join(gaps[:8])}"
                               f"{' ...' if len(gaps) > 8 else ''}; capacity is not promised twice: demonstrate again "
                               f"with them committed (`{how}`)")


def _evidence_message(kind: str, ref: str, sha256: str, holder, application: str, single_use: str) -> str:
    """The refusal of program policy ``evidence_single_use`` (its value in force: ``single_use``), naming both
    applications."""
    what = "capacity demonstration" if kind == "capacity" else "SPDES/treatment check"
    released = (" (it is released if that withdrawal is rejected or returned)"
                if single_use == "until-rejected-or-returned" and holder["status"] == "pending" else "")
    return (f"{kind}_ref: the {what} {ref} (sha256 {sha256[:12]}...) is already the evidence of application "
            f"{holder['application']!r} ({holder['status']}){released}; application {application!r} cannot cite it: a "
            f"capacity demonstration or treatment check is the evidence of one application only (program policy "
            f"evidence_single_use = {single_use}, {POLICY_FLAG}); demonstrate capacity for {application!r} "
            "with its own run")
