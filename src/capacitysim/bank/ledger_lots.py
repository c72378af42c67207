"""The provenance of credits (credit bank section D): the lots of each subaccount and their moves.

Each signed-off deposit creates a lot of its project; withdrawals, transfers and condemnations take
credits out of a holder's lots in the order of program policy ``allocation_policy`` (oldest deposit
first), the receiving side gets lots of the same origin (:meth:`Lots._mirror`), and a return, default
or rejection puts credits back into the lots they came from (:meth:`Lots._restore`). Credits whose
origin the ledger did not see happen sit in lots of unknown origin (:data:`LOT_NOTE_UNKNOWN`), which a
condemnation never takes.
"""

from __future__ import annotations

import sqlite3

from capacitysim.bank.ledger_policies import ALLOCATION_POLICY
from capacitysim.errors import RefusedError


#: Notes of lots whose origin the ledger did not see happen.
LOT_NOTE_MIGRATED = ("attributed at the migration to schema 3 by replaying the journal with the allocation policy "
                     f"({ALLOCATION_POLICY})")
LOT_NOTE_UNKNOWN = ("origin unknown: credits of a schema-2 bank whose journal does not show the project they came "
                    "from (purged, or moved before lots were kept); condemnation refuses to take them")


def _describe_lots(lots, limit: int = 6) -> str:
    """The lots of a holder in one line: number, gpd, project and its jurisdiction (or unknown origin)."""
    if not lots:
        return "no credits"
    parts = []
    for lot in lots[:limit]:
        if lot["project"] is None:
            parts.append(f"lot {lot['id']}: {lot['gpd']:,} gpd of unknown origin (migrated schema-2 bank: cannot be condemned)")
        else:
            parts.append(f"lot {lot['id']}: {lot['gpd']:,} gpd from project {lot['project']} (jurisdiction "
                         f"{lot['jurisdiction']})")
    more = f"; and {len(lots) - limit} more lot(s)" if len(lots) > limit else ""
    return "; ".join(parts) + more


class Lots:
    """The lots of credits: made, moved, taken in the allocation order, restored, mirrored, listed.

    A part of :class:`capacitysim.bank.ledger.Ledger`, which composes it with the other parts: it works in
    the ledger's connection and transactions (:class:`capacitysim.bank.ledger_core.LedgerCore`) and calls
    the other parts' methods through ``self``; it holds no state of its own.
    """

    def _new_lot(self, c, subaccount_id: int, project_id, deposited_on, *, source_lot_id=None, note: str = "",
                 at: str | None = None) -> int:
        cur = c.execute("INSERT INTO lots(subaccount_id, project_id, deposited_on, source_lot_id, note, created_at)"
                        " VALUES (?,?,?,?,?,?)", (subaccount_id, project_id, deposited_on, source_lot_id, note,
                                                  at or self._now()))
        return cur.lastrowid

    def _lot_move(self, c, lot_id: int, delta: int, action: str, ref: str, *, txn: str | None = None,
                  at: str | None = None) -> None:
        """Move credits into (+) or out of (-) a lot: the move row, then the lot's gpd (a trigger keeps them equal)."""
        c.execute("INSERT INTO lot_moves(lot_id, delta_gpd, action, ref, txn, at) VALUES (?,?,?,?,?,?)",
                  (lot_id, int(delta), action, ref, txn or self._txn, at or self._now()))
        c.execute("UPDATE lots SET gpd = gpd + ? WHERE id=?", (int(delta), lot_id))

    @staticmethod
    def _holder_lots(c, subaccount_id: int) -> list[sqlite3.Row]:
        """The subaccount's lots holding credits, in the order of the allocation policy (FIFO: the
        originating deposit's certification date, unknown origin first, then the lot number)."""
        return c.execute(
            "SELECT l.id, l.gpd, l.project_id, l.deposited_on, p.ref AS project, p.jurisdiction_id, e.name AS jurisdiction,"
            " pb.name AS project_basin FROM lots l LEFT JOIN projects p ON p.id = l.project_id"
            " LEFT JOIN entities e ON e.id = p.jurisdiction_id LEFT JOIN basins pb ON pb.id = p.basin_id"
            " WHERE l.subaccount_id = ? AND l.gpd > 0 ORDER BY l.deposited_on IS NOT NULL, l.deposited_on, l.id",
            (subaccount_id,)).fetchall()

    def _take(self, c, lots, amount: int, action: str, ref: str, *, txn=None, at=None) -> tuple[list[dict], int]:
        """Take ``amount`` gpd out of ``lots`` in their order; returns the pieces taken and what is left untaken."""
        pieces, left = [], int(amount)
        for lot in lots:
            if left <= 0:
                break
            g = min(int(lot["gpd"]), left)
            self._lot_move(c, lot["id"], -g, action, ref, txn=txn, at=at)
            pieces.append({"lot": lot["id"], "gpd": g, "project": lot["project"], "jurisdiction": lot["jurisdiction"],
                           "deposited_on": lot["deposited_on"]})
            left -= g
        return pieces, left

    def _consume(self, c, subaccount_id: int, amount: int, action: str, ref: str) -> list[dict]:
        """Take ``amount`` gpd out of a holder's lots by the allocation policy (in the caller's transaction)."""
        self._need(c, subaccount_id, amount)
        pieces, left = self._take(c, self._holder_lots(c, subaccount_id), amount, action, ref)
        if left:
            raise RefusedError(f"the lots of subaccount {subaccount_id} hold {amount - left:,} gpd, less than its balance: "
                               "the bank was edited outside capacitysim (run `capacitysim bank verify`)")
        return pieces

    @staticmethod
    def _pieces(c, ref: str, action: str) -> list[dict]:
        """The pieces an operation took out of lots (``action``, ``ref``), in the order taken."""
        return [{"lot": r["lot_id"], "gpd": r["gpd"]} for r in c.execute(
            "SELECT lot_id, -delta_gpd AS gpd FROM lot_moves WHERE ref=? AND action=? AND delta_gpd < 0 ORDER BY id",
            (ref, action))]

    def _restore(self, c, pieces, amount: int, action: str, ref: str, subaccount_id: int, *, txn=None, at=None) -> None:
        """Put ``amount`` gpd back into the lots ``pieces`` came from (a return, a default, a rejection);
        what no piece accounts for goes to a lot of unknown origin."""
        left = int(amount)
        for pc in pieces:
            g = min(int(pc["gpd"]), left)
            if g > 0:
                self._lot_move(c, pc["lot"], g, action, ref, txn=txn, at=at)
                left -= g
        if left > 0:
            lot = self._new_lot(c, subaccount_id, None, None, note=LOT_NOTE_UNKNOWN, at=at)
            self._lot_move(c, lot, left, action, ref, txn=txn, at=at)

    def _mirror(self, c, pieces, amount: int, subaccount_id: int, action: str, ref: str, *, txn=None, at=None,
                note: str = "") -> list[int]:
        """Give the receiving subaccount lots of the same origin as ``pieces`` (a transfer, a condemnation)."""
        left, made = int(amount), []
        for pc in pieces:
            g = min(int(pc["gpd"]), left)
            if g <= 0:
                continue
            src = c.execute("SELECT project_id, deposited_on FROM lots WHERE id=?", (pc["lot"],)).fetchone()
            lot = self._new_lot(c, subaccount_id, src["project_id"], src["deposited_on"], source_lot_id=pc["lot"],
                                note=note, at=at)
            self._lot_move(c, lot, g, action, ref, txn=txn, at=at)
            made.append(lot)
            left -= g
        if left > 0:
            lot = self._new_lot(c, subaccount_id, None, None, note=LOT_NOTE_UNKNOWN, at=at)
            self._lot_move(c, lot, left, action, ref, txn=txn, at=at)
            made.append(lot)
        return made

    @staticmethod
    def _show_pieces(pieces) -> list[dict]:
        return [{"lot": p["lot"], "gpd": p["gpd"], "project": p.get("project"), "jurisdiction": p.get("jurisdiction")}
                for p in pieces]

    def lots(self, basin: str | None = None, owner: str | None = None, *, empty: bool = False) -> list[dict]:
        """The lots holding credits (with ``empty``, also those emptied), in the allocation order per subaccount.

        Each: ``lot``, ``basin``, ``owner``, ``gpd``, ``project`` (None: unknown origin),
        ``project_basin``, ``jurisdiction`` (the municipal user with jurisdiction over the project
        site: who may condemn it, section D), ``deposited_on``, ``source_lot`` (the lot it was split
        from by a transfer or condemnation), ``origin`` (``project`` or ``unknown``) and ``note``.
        """
        where, args = ["1"], []
        if basin is not None:
            where.append("b.name = ?")
            args.append(basin)
        if owner is not None:
            where.append("o.name = ?")
            args.append(owner)
        if not empty:
            where.append("l.gpd > 0")
        rows = self.conn.execute(
            "SELECT l.*, b.name AS basin, o.name AS owner, p.ref AS project, pb.name AS project_basin, j.name AS jurisdiction"
            " FROM lots l JOIN subaccounts s ON s.id = l.subaccount_id JOIN basins b ON b.id = s.basin_id"
            " JOIN entities o ON o.id = s.owner_id LEFT JOIN projects p ON p.id = l.project_id"
            " LEFT JOIN basins pb ON pb.id = p.basin_id LEFT JOIN entities j ON j.id = p.jurisdiction_id"
            f" WHERE {' AND '.join(where)}"
            " ORDER BY b.name, o.name, l.deposited_on IS NOT NULL, l.deposited_on, l.id", args).fetchall()
        return [{"lot": r["id"], "basin": r["basin"], "owner": r["owner"], "gpd": r["gpd"], "project": r["project"],
                 "project_basin": r["project_basin"], "jurisdiction": r["jurisdiction"], "deposited_on": r["deposited_on"],
                 "source_lot": r["source_lot_id"], "origin": "project" if r["project_id"] is not None else "unknown",
                 "note": r["note"]} for r in rows]
