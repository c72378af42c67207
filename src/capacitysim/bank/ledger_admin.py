"""Administration of the credit bank: its bank administrators and the service users bound to entities.

The definitions make the BANK ADMINISTRATOR sign off deposits, withdrawals and transfers: the first is
registered when the bank is created or migrated, further ones only by a registered administrator
(program policy ``administrator_registration``); the person who recorded a transaction neither signs
it off nor rejects it (``signoff_separation``). An administrator binds each service user to the bank
entities they act for (``service_user_binding``): bindings are journaled, closed and never deleted.
"""

from __future__ import annotations

from capacitysim.bank.ledger_policies import BINDABLE_ROLES, POLICY_FLAG, policies
from capacitysim.bank.ledger_values import _text, person_name
from capacitysim.errors import InputError, RefusedError


class Administration:
    """Bank administrators (registered, required, kept apart from what they recorded) and service users' bindings.

    A part of :class:`capacitysim.bank.ledger.Ledger`, which composes it with the other parts: it works in
    the ledger's connection and transactions (:class:`capacitysim.bank.ledger_core.LedgerCore`) and calls
    the other parts' methods through ``self``; it holds no state of its own.
    """

    @staticmethod
    def _administrator(c, name: str) -> str | None:
        """The registered administrator's name matching ``name`` (ignoring case), or None."""
        row = c.execute("SELECT name FROM administrators WHERE name_key=?", (name.casefold(),)).fetchone()
        return row[0] if row else None

    @staticmethod
    def _administrator_names(c) -> list[str]:
        return [r[0] for r in c.execute("SELECT name FROM administrators ORDER BY id")]

    def _require_administrator(self, c, what: str) -> str:
        """The acting person's registered administrator name; refused (exit 3) when not registered."""
        actor = self._require_actor()
        name = self._administrator(c, actor)
        if name is None:
            names = ", ".join(self._administrator_names(c)) or "none"
            raise RefusedError(f"{actor!r} is not a registered bank administrator; only the bank administrator {what} "
                               f"(definitions, BANK ADMINISTRATOR: 'review and sign off on ... bank deposits, "
                               f"withdrawals and transfers'); registered: {names}")
        return name

    def _register_administrator(self, c, name: str, document: str | None, reason: str) -> dict:
        same = self._administrator(c, name)
        if same is not None:
            raise RefusedError(f"{name!r} is already a registered bank administrator" + ("" if same == name else f" as {same!r}"))
        c.execute("INSERT INTO administrators(name, name_key, document, registered_at, registered_by) VALUES (?,?,?,?,?)",
                  (name, name.casefold(), document, self._now(), self._require_actor()))
        self._log(c, "add-administrator", reason=reason, documents=[document] if document else (),
                  detail={"administrator": name, "policy": "administrator_registration"})
        return {"administrator": name, "registered_by": self._actor, "document": document}

    def _not_the_recorder(self, c, s, admin: str, verb: str) -> None:
        """Refuse (program policy ``signoff_separation``) an administrator deciding a transaction they recorded.

        "Recorded" is the actor of the journal row that created the pending sign-off (``signoffs.recorded_by``:
        the ``record-deposit``, ``withdraw`` or ``transfer-out`` row); names are compared as the ledger
        compares administrators (NFC, spaces collapsed by :func:`person_name`, then ignoring case).
        """
        recorder = s["recorded_by"]
        if not isinstance(recorder, str) or recorder.casefold() != admin.casefold():
            return
        others = [n for n in self._administrator_names(c) if n.casefold() != admin.casefold()]
        who = (f"another registered administrator ({', '.join(others)}) must {verb}" if others else
               "no other administrator is registered: register a second one with `bank add-administrator NAME`")
        raise RefusedError(f"{admin!r} recorded {s['kind']} {s['ref']} (txn {s['txn']}) and cannot {verb}: the "
                           f"person who recorded a transaction neither signs it off nor rejects it (program policy "
                           f"signoff_separation, {POLICY_FLAG}); {who}")

    def add_administrator(self, name: str, *, document: str | None = None, reason: str = "") -> dict:
        """Register a person as bank administrator (definitions: "the Board or its designee").

        Only a registered administrator registers another (program policy
        ``administrator_registration``; the first is registered by ``init``/``migrate``).

        Raises
        ------
        InputError
            ``name`` is not a person's name (:func:`person_name`).
        RefusedError
            The actor is not a registered administrator, or ``name`` already is one.
        """
        name = person_name("administrator", name)
        document = _text("document", document, required=False)
        with self._tx() as c:
            self._require_administrator(c, "registers another administrator")
            out = self._register_administrator(c, name, document, reason or "bank administrator registered")
        return out | {"policies": policies("administrator_registration")}

    def administrators(self) -> list[dict]:
        """The persons registered as bank administrator, oldest first."""
        return [{"name": r["name"], "registered_at": r["registered_at"], "registered_by": r["registered_by"],
                 "document": r["document"]}
                for r in self.conn.execute("SELECT * FROM administrators ORDER BY id")]

    def bind_user(self, user: str, entity: str, *, role: str | None = None, document: str | None = None,
                  reason: str = "") -> dict:
        """Bind a service user (``capacitysim serve``) to a bank entity they act for (administrator only).

        Program policy ``service_user_binding``: an engineer or municipal service user records deposits,
        withdrawals and transfers through the service only for subaccounts whose owner is an entity they
        are bound to; administrators act for every entity. ``user`` is the service user's name (a
        person's name, :func:`person_name`; the bank does not hold the service's users: the CLI and the
        service check it is one of theirs), ``role`` their service role (``engineer`` or ``municipal``:
        a municipal service user is bound only to a municipal user), ``document`` the entity's letter
        naming them. Recorded in ``bindings`` and journaled (``bind-user``).

        Raises
        ------
        InputError
            ``user`` is not a person's name; ``entity`` is unknown.
        RefusedError
            The actor is not a registered administrator; the role is not bound (administrator,
            reviewer); a municipal service user to an entity that is not a municipal user; the binding
            exists already.
        """
        user = person_name("user", user)
        document = _text("document", document, required=False)
        if role is not None and role not in BINDABLE_ROLES:
            why = ("administrators act for every entity" if role == "administrator" else
                   "reviewers record nothing" if role == "reviewer" else f"allowed: {', '.join(BINDABLE_ROLES)}")
            raise RefusedError(f"{user!r} is a service {role}: only {' and '.join(BINDABLE_ROLES)} users are bound to "
                               f"entities ({why}; program policy service_user_binding)")
        with self._tx() as c:
            admin = self._require_administrator(c, "binds service users to bank entities")
            e = self._entity(c, entity)
            if role == "municipal" and not e["municipal"]:
                raise RefusedError(f"{e['name']!r} is not a municipal user: a municipal service user such as {user!r} acts "
                                   "for municipal users only (program policy service_user_binding); bind an engineer to "
                                   "a private holder")
            same = c.execute("SELECT user_name FROM bindings WHERE user_key=? AND entity_id=? AND unbound_at IS NULL",
                             (user.casefold(), e["id"])).fetchone()
            if same is not None:
                raise RefusedError(f"{same[0]!r} is already bound to {e['name']!r}")
            now = self._now()
            cur = c.execute("INSERT INTO bindings(user_name, user_key, role, entity_id, document, bound_at, bound_by)"
                            " VALUES (?,?,?,?,?,?,?)", (user, user.casefold(), role, e["id"], document, now, admin))
            self._log(c, "bind-user", reason=reason or f"service user {user} acts for {e['name']}",
                      documents=[document] if document else (), ref=f"binding-{cur.lastrowid}",
                      detail={"user": user, "entity": e["name"], "role": role, "policy": "service_user_binding"})
        return {"binding": cur.lastrowid, "user": user, "entity": e["name"], "role": role, "document": document,
                "bound_at": now, "bound_by": admin, "policies": policies("service_user_binding")}

    def unbind_user(self, user: str, entity: str, *, reason: str = "") -> dict:
        """Close a service user's binding to an entity (administrator only); the record is kept (``unbind-user``).

        Raises
        ------
        InputError
            ``user`` is not a person's name; ``entity`` is unknown; there is no open binding of them.
        RefusedError
            The actor is not a registered administrator.
        """
        user = person_name("user", user)
        with self._tx() as c:
            admin = self._require_administrator(c, "unbinds service users from bank entities")
            e = self._entity(c, entity)
            b = c.execute("SELECT * FROM bindings WHERE user_key=? AND entity_id=? AND unbound_at IS NULL",
                          (user.casefold(), e["id"])).fetchone()
            if b is None:
                bound = self._bound_names(c, user)
                raise InputError(f"{user!r} is not bound to {e['name']!r} (bound to: {', '.join(bound) or 'no entity'}; "
                                 "see `bank bindings`)")
            now = self._now()
            c.execute("UPDATE bindings SET unbound_at=?, unbound_by=? WHERE id=?", (now, admin, b["id"]))
            self._log(c, "unbind-user", reason=reason or f"service user {b['user_name']} no longer acts for {e['name']}",
                      ref=f"binding-{b['id']}",
                      detail={"user": b["user_name"], "entity": e["name"], "role": b["role"], "policy": "service_user_binding"})
        return {"binding": b["id"], "user": b["user_name"], "entity": e["name"], "role": b["role"], "bound_at": b["bound_at"],
                "bound_by": b["bound_by"], "unbound_at": now, "unbound_by": admin}

    @staticmethod
    def _bound_names(c, user: str) -> list[str]:
        return [r[0] for r in c.execute("SELECT e.name FROM bindings b JOIN entities e ON e.id = b.entity_id"
                                        " WHERE b.user_key=? AND b.unbound_at IS NULL ORDER BY e.name",
                                        (str(user).casefold(),))]

    def bindings(self, *, user: str | None = None, entity: str | None = None, closed: bool = False) -> list[dict]:
        """Service users bound to entities, oldest first (with ``closed``, the closed bindings too).

        Each: ``binding``, ``user``, ``role``, ``entity``, ``municipal``, ``document``, ``bound_at``,
        ``bound_by``, ``unbound_at``, ``unbound_by``.
        """
        where, args = ["1"], []
        if user is not None:
            where.append("b.user_key = ?")
            args.append(str(user).strip().casefold())
        if entity is not None:
            where.append("e.name = ?")
            args.append(_text("entity", entity))
        if not closed:
            where.append("b.unbound_at IS NULL")
        rows = self.conn.execute("SELECT b.*, e.name AS entity, e.municipal FROM bindings b JOIN entities e ON e.id = b.entity_id"
                                 f" WHERE {' AND '.join(where)} ORDER BY b.id", args).fetchall()
        return [{"binding": r["id"], "user": r["user_name"], "role": r["role"], "entity": r["entity"],
                 "municipal": bool(r["municipal"]), "document": r["document"], "bound_at": r["bound_at"],
                 "bound_by": r["bound_by"], "unbound_at": r["unbound_at"], "unbound_by": r["unbound_by"]} for r in rows]

    def bound_entities(self, user: str) -> list[str]:
        """The entities ``user`` (a service user's name, ignoring case) is bound to, by name."""
        return self._bound_names(self.conn, user)

    def acts_for(self, user: str, entity: str) -> bool:
        """Whether service user ``user`` is bound to ``entity`` (program policy ``service_user_binding``).

        Raises
        ------
        InputError
            ``entity`` is not an entity of the bank.
        """
        e = self._entity(self.conn, entity)
        return self.conn.execute("SELECT 1 FROM bindings WHERE user_key=? AND entity_id=? AND unbound_at IS NULL",
                                 (str(user).strip().casefold(), e["id"])).fetchone() is not None
