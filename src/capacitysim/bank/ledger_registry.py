"""The credit bank's registry: entities, basins, subaccounts, projects, and the capacity register's models.

Entities (municipal users and other holders), I/I remediation basins, subaccounts, identified projects
and their certification letters; each basin's registered model of record (SHA-256, outlet, plant) and
the committed flows read from it (:meth:`Registry.commitments`, :meth:`Registry.register`, through
:mod:`capacitysim.bank.commitments`).
"""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path

from capacitysim.bank import commitments as _commit
from capacitysim.bank import refs as _refs
from capacitysim.bank.ledger_core import _same_name
from capacitysim.bank.ledger_policies import policies
from capacitysim.bank.ledger_values import _positive_gpd, _property, _text, parse_date
from capacitysim.errors import InputError, RefusedError


class Registry:
    """Entities, basins, subaccounts, projects, letters; registered models and committed flows.

    A part of :class:`capacitysim.bank.ledger.Ledger`, which composes it with the other parts: it works in
    the ledger's connection and transactions (:class:`capacitysim.bank.ledger_core.LedgerCore`) and calls
    the other parts' methods through ``self``; it holds no state of its own.
    """

    def add_entity(self, name: str, municipal: bool = False, *, reason: str = "", documents=()) -> dict:
        """Register an entity (municipal user, developer, other flow credit holder)."""
        name = _text("name", name)
        with self._tx() as c:
            same = _same_name(c, "entities", "name", name)
            if same is not None:
                raise RefusedError(f"entity {name!r} already exists" + ("" if same == name else f" as {same!r}"))
            c.execute("INSERT INTO entities(name, municipal, created_at) VALUES (?,?,?)", (name, int(bool(municipal)), self._now()))
            self._log(c, "add-entity", reason=reason, documents=documents, detail={"name": name, "municipal": bool(municipal)})
        return {"name": name, "municipal": bool(municipal)}

    def add_basin(self, name: str, outlet: str | None = None, *, model=None, plant: str | None = None,
                  reason: str = "", documents=()) -> dict:
        """Register an I/I remediation basin (tributary to one CSO or pumping station).

        With ``model`` (a SWMM ``.inp``), the basin's model of record is registered at once as version 1
        (:meth:`register_model`: a bank administrator only; ``outlet`` required and a node of the model;
        ``plant`` the SPDES permit number or name of the plant the basin drains to).
        """
        name = _text("name", name)
        outlet = _text("outlet", outlet, required=False)
        plant = _text("plant", plant, required=False)
        if model is not None and outlet is None:
            raise InputError("outlet is required with a model: the basin's outlet node in the model (credit bank "
                             "section A is checked against it)")
        if plant is not None and model is None:
            raise InputError("plant is registered with the basin's model: give --model too")
        loaded = self._load_for_registration(model, outlet) if model is not None else None
        with self._tx() as c:
            same = _same_name(c, "basins", "name", name)
            if same is not None:
                raise RefusedError(f"basin {name!r} already exists" + ("" if same == name else f" as {same!r}"))
            if loaded is not None:
                self._require_administrator(c, "registers a basin's model of record")
            cur = c.execute("INSERT INTO basins(name, outlet, created_at) VALUES (?,?,?)",
                            (name, loaded["outlet"] if loaded else outlet, self._now()))
            self._log(c, "add-basin", reason=reason, documents=documents, basin_id=cur.lastrowid,
                      detail={"name": name, "outlet": loaded["outlet"] if loaded else outlet})
            if loaded is not None:
                b = c.execute("SELECT * FROM basins WHERE id=?", (cur.lastrowid,)).fetchone()
                self._insert_model(c, b, loaded, plant, (), self._today(), reason, documents)
        out = {"name": name, "outlet": loaded["outlet"] if loaded else outlet}
        return out | ({"model": self.models(name)[-1]} if loaded else {})

    def _load_for_registration(self, model, outlet: str | None) -> dict:
        """Have the engine open ``model`` (the engine is the judge of validity) and find ``outlet`` in it."""
        path = Path(_text("model", str(model))).expanduser().resolve()
        m, sha = _commit.read_model(path, probe=True)
        out = {"path": str(path), "sha256": sha, "nodes": len(m.node_ids()), "model": m}
        if outlet is not None:
            o = m.find_node(outlet)
            if o is None:
                raise InputError(f"outlet {outlet!r} is not a node of {path.name}; allowed: a node of the model")
            out["outlet"] = o
        return out

    def _insert_model(self, c, b, loaded: dict, plant, includes, on: _dt.date, reason: str, documents) -> dict:
        version = c.execute("SELECT coalesce(max(version), 0) + 1 FROM system_models WHERE basin_id=?",
                            (b["id"],)).fetchone()[0]
        c.execute("INSERT INTO system_models(basin_id, version, path, sha256, outlet, plant, nodes, includes, registered_on,"
                  " registered_at, registered_by) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                  (b["id"], version, loaded["path"], loaded["sha256"], loaded["outlet"], plant, loaded["nodes"],
                   json.dumps(list(includes)), on.isoformat(), self._now(), self._require_actor()))
        detail = {"basin": b["name"], "version": version, "model": loaded["path"], "model_sha256": loaded["sha256"],
                  "outlet": loaded["outlet"], "plant": plant, "nodes": loaded["nodes"], "includes": list(includes),
                  "registered_on": on.isoformat()}
        self._log(c, "register-model", reason=reason, documents=[*documents, loaded["path"]], basin_id=b["id"],
                  ref=f"{b['name']} v{version}", detail=detail)
        return detail

    def register_model(self, basin: str, model, *, outlet: str | None = None, plant: str | None = None, includes=(),
                       on=None, late_reason: str | None = None, reason: str = "", documents=()) -> dict:
        """Register a (newer) model of record for a basin, with its SHA-256: a bank administrator only.

        The engine opens the file first (a model it rejects is refused). ``outlet`` and ``plant``
        default to the previous version's. ``includes`` names connected applications the new version
        contains: their commitments are released (program policy ``connected_until_registered``); an
        application that is not connected, or not in this basin, is refused. Capacity evidence cited
        for a withdrawal must be on the basin's newest version (same SHA-256).
        """
        basin = _text("basin", basin)
        on = self._not_future("on", parse_date("on", on)) or self._today()
        names = [_text("includes", a) for a in includes]
        with self._tx() as c:  # who acts and the previous version's outlet, before the slow engine probe
            self._require_administrator(c, "registers a basin's model of record")
            prev = _commit.model_of_basin(c, self._basin(c, basin)["id"])
        outlet = _text("outlet", outlet, required=False) or (prev["outlet"] if prev else None)
        if outlet is None:
            raise InputError(f"outlet is required: basin {basin!r} has no registered model yet")
        plant = _text("plant", plant, required=False) or (prev["plant"] if prev else None)
        loaded = self._load_for_registration(model, outlet)
        with self._tx() as c:
            self._require_administrator(c, "registers a basin's model of record")
            self._dated(c, "on", on, late_reason)
            b = self._basin(c, basin)
            keys = []
            for name in names:
                row = (c.execute("SELECT w.application, w.connected_on, w.status, w.co_issued_on, s.basin_id FROM withdrawals w"
                                 " JOIN subaccounts s ON s.id = w.subaccount_id WHERE w.app_key=?", (name.casefold(),)).fetchone()
                       or c.execute("SELECT application, connected_on, status, completed_on AS co_issued_on, basin_id"
                                    " FROM applications WHERE app_key=?", (name.casefold(),)).fetchone())
                if row is None:
                    raise InputError(f"includes: unknown application {name!r}")
                if row["basin_id"] != b["id"]:
                    raise RefusedError(f"includes: application {row['application']!r} is not in basin {b['name']}")
                if not (row["connected_on"] or row["status"] == "completed"):
                    raise RefusedError(f"includes: application {row['application']!r} is not connected (`bank connect` "
                                       "records it): a model of record contains only flows in the sewer")
                keys.append(row["application"])
            detail = self._insert_model(c, b, loaded, plant, keys, on, reason, documents)
        return detail | {"policies": policies("connected_until_registered")}

    def models(self, basin: str | None = None) -> list[dict]:
        """Every registered model version (of ``basin``, or all), oldest first."""
        sql = ("SELECT m.*, b.name AS basin FROM system_models m JOIN basins b ON b.id = m.basin_id"
               + (" WHERE b.name = ?" if basin else "") + " ORDER BY b.id, m.version")
        rows = self.conn.execute(sql, (basin,) if basin else ()).fetchall()
        if basin and not rows:
            self._basin(self.conn, basin)  # unknown basin -> InputError
        newest = {r["basin_id"]: r["version"] for r in rows}  # rows by version: the last one per basin is the newest
        return [{"basin": r["basin"], "version": r["version"], "current": r["version"] == newest[r["basin_id"]],
                 "path": r["path"], "sha256": r["sha256"], "outlet": r["outlet"], "plant": r["plant"], "nodes": r["nodes"],
                 "includes": json.loads(r["includes"]), "registered_on": r["registered_on"],
                 "registered_by": r["registered_by"]} for r in rows]

    def commitments(self, *, model_sha256: str | None = None, plant: str | None = None, exclude: str | None = None,
                    as_of=None) -> dict:
        """The committed flows of the basins on a registered model (``model_sha256``) or draining to ``plant``.

        Every withdrawal reserved or approved and not yet connected, every application recorded
        without credits and not yet connected, and every connected flow not yet contained in a
        registered model version (:func:`capacitysim.bank.commitments.commitment_flows`), read in one
        read transaction with the journal's head (``bank_head``): a document that records them can be
        checked later against the bank (:meth:`withdraw`, :meth:`sign_off`).

        Parameters
        ----------
        model_sha256 : str, optional
            The SHA-256 of a model: the basins whose newest registered model it is.
        plant : str, optional
            A plant key (SPDES permit number or name, any case): the basins registered as draining to it.
        exclude : str, optional
            An application left out (the applicant's own, already reserved).
        as_of : date or str, optional
            Default today (approvals past program policy ``approval_expiry_years`` on it are void).

        Returns
        -------
        dict
            ``bank``, ``bank_head``, ``as_of``, ``scope``, ``basins``, ``excluded``, ``flows``
            (``application``, ``basin``, ``node``, ``average_gpd`` [gpd], ``peak_gpd`` [gpd], ``status``,
            ``average_basis``...), ``total_gpd`` (sum of the averages) [gpd], ``total_peak_gpd`` [gpd],
            ``policies``.
        """
        as_of = parse_date("as_of", as_of) or self._today()
        exclude = _text("exclude", exclude, required=False)
        c = self.conn
        c.execute("BEGIN")
        try:
            basins = _commit.scope_basins(c, model_sha256=model_sha256, plant=plant)
            flows = _commit.commitment_flows(c, [b["basin_id"] for b in basins], exclude=exclude, as_of=as_of)
            head = self.head()["head"]
        finally:
            c.execute("COMMIT")
        scope = {"model_sha256": str(model_sha256).lower()} if model_sha256 is not None else {"plant": plant}
        return {"bank": str(self.path.resolve()), "bank_head": head, "as_of": as_of.isoformat(), "scope": scope,
                "basins": [b["basin"] for b in basins], "excluded": exclude, "flows": flows,
                "total_gpd": float(sum(f["average_gpd"] for f in flows)),
                "total_peak_gpd": float(sum(f["peak_gpd"] for f in flows)),
                "policies": policies("commitment_average", "connected_until_registered", "approval_expiry_years")}

    def register(self, as_of=None) -> dict:
        """The capacity register's bank part: each registered model and plant with its committed flows.

        Returns ``{"bank_head", "as_of", "models": [...], "plants": [...]}``: per current model its
        basins, commitments and totals; per plant key the basins draining to it and the committed
        average flow [gpd]. The hydraulic and treatment figures beside them are computed by the
        register workflow (:mod:`capacitysim.workflows.register`).
        """
        as_of = parse_date("as_of", as_of) or self._today()
        c = self.conn
        c.execute("BEGIN")
        try:
            models = _commit.current_models(c)
            head = self.head()["head"]
            by_sha: dict[str, list] = {}
            for m in models:
                by_sha.setdefault(m["sha256"], []).append(m)
            out_models = []
            for sha, ms in by_sha.items():
                flows = _commit.commitment_flows(c, [m["basin_id"] for m in ms], as_of=as_of)
                out_models.append({"model_sha256": sha, "path": ms[0]["path"], "nodes": ms[0]["nodes"],
                                   "basins": [{"basin": m["basin"], "version": m["version"], "outlet": m["outlet"],
                                               "plant": m["plant"]} for m in ms],
                                   "flows": flows, "total_gpd": float(sum(f["average_gpd"] for f in flows)),
                                   "total_peak_gpd": float(sum(f["peak_gpd"] for f in flows))})
            plants: dict[str, list] = {}
            for m in models:
                if m["plant"]:
                    plants.setdefault(m["plant"].strip().casefold(), []).append(m)
            out_plants = []
            for ms in plants.values():
                flows = _commit.commitment_flows(c, [m["basin_id"] for m in ms], as_of=as_of)
                out_plants.append({"plant": ms[0]["plant"], "basins": [m["basin"] for m in ms],
                                   "committed_gpd": float(sum(f["average_gpd"] for f in flows)),
                                   "committed_peak_gpd": float(sum(f["peak_gpd"] for f in flows)),
                                   "flows": [f["application"] for f in flows]})
        finally:
            c.execute("COMMIT")
        return {"bank": str(self.path.resolve()), "bank_head": head, "as_of": as_of.isoformat(), "models": out_models,
                "plants": out_plants, "policies": policies("commitment_average", "connected_until_registered",
                                                           "approval_expiry_years", "section_a_unregistered")}

    def open_subaccount(self, basin: str, owner: str, *, reason: str = "", documents=()) -> dict:
        """Open the subaccount of ``owner`` in ``basin`` (refused if it exists)."""
        with self._tx() as c:
            b, e = self._basin(c, basin), self._entity(c, owner)
            if c.execute("SELECT 1 FROM subaccounts WHERE basin_id=? AND owner_id=?", (b["id"], e["id"])).fetchone():
                raise RefusedError(f"{owner} already has a subaccount in basin {basin}")
            self._open(c, b, e, reason)
        return {"basin": basin, "owner": owner, "balance_gpd": 0}

    def add_project(self, ref: str, basin: str, jurisdiction: str, *, description: str = "", priority: int | None = None,
                    estimated_gpd: float | None = None, property: str | None = None, reason: str = "",
                    documents=()) -> dict:
        """Record an identified/available I/I remediation project (annual report part A), on ``property``
        ``public`` or ``private`` (records section A: "in the municipal users' public sewage collection
        systems and private property")."""
        ref = _text("project", ref)
        prop = _property(property)
        if estimated_gpd is not None:
            estimated_gpd = _positive_gpd("estimated_gpd", estimated_gpd)
        with self._tx() as c:
            b, j = self._basin(c, basin), self._entity(c, jurisdiction)
            if not j["municipal"]:
                raise RefusedError(f"{jurisdiction} is not a municipal user; a project's jurisdiction is a municipal user")
            same = _same_name(c, "projects", "ref", ref)
            if same is not None:
                raise RefusedError(f"project {ref!r} already exists" + ("" if same == ref else f" as {same!r}"))
            c.execute("INSERT INTO projects(ref, basin_id, jurisdiction_id, description, priority, estimated_gpd, status,"
                      " created_at, property) VALUES (?,?,?,?,?,?,'identified',?,?)",
                      (ref, b["id"], j["id"], description or "", priority, estimated_gpd, self._now(), prop))
            self._log(c, "add-project", reason=reason, documents=documents, basin_id=b["id"], ref=ref,
                      detail={"jurisdiction": jurisdiction, "priority": priority, "estimated_gpd": estimated_gpd,
                              "property": prop})
        return {"project": ref, "basin": basin, "jurisdiction": jurisdiction, "status": "identified", "property": prop}

    def furnish_letter(self, project: str, letter: str, *, on=None, late_reason: str | None = None,
                       reason: str = "") -> dict:
        """Record the completed certification letter of a certified project (records section B: "If not
        previously furnished, provide completed certification letter for I/I remediation projects
        completed. (See Appendix A for letter format.)"): its path and SHA-256, once per project.

        Raises
        ------
        RefusedError
            The project is not certified, or its letter was already furnished.
        """
        ref = _text("project", project)
        doc = _refs.resolve_document("letter", _text("letter", letter), "the completed certification letter (Appendix A)")
        on = self._not_future("on", parse_date("on", on)) or self._today()
        with self._tx() as c:
            self._dated(c, "on", on, late_reason)
            p = c.execute("SELECT * FROM projects WHERE ref=?", (ref,)).fetchone()
            if p is None:
                raise InputError(f"project: unknown project {ref!r}")
            if p["status"] == "certified" and on.isoformat() < str(p["certified_on"])[:10]:
                raise RefusedError(f"project {ref!r}: a certification letter dated {on} is before the certification of "
                                   f"{str(p['certified_on'])[:10]} it certifies")
            if p["status"] != "certified":
                raise RefusedError(f"project {ref!r} is {p['status']}: a certification letter is furnished for a project "
                                   "certified complete and deposited")
            old = c.execute("SELECT ref, letter_on FROM certification_letters WHERE project_id=?", (p["id"],)).fetchone()
            if old is not None:
                raise RefusedError(f"project {ref!r}: its certification letter was furnished on {old['letter_on']} "
                                   f"({old['ref']})")
            c.execute("INSERT INTO certification_letters(project_id, ref, sha256, letter_on, recorded_at, recorded_by)"
                      " VALUES (?,?,?,?,?,?)", (p["id"], doc["ref"], doc["sha256"], on.isoformat(), self._now(),
                                                 self._require_actor()))
            self._log(c, "furnish-letter", reason=reason, documents=[doc["ref"]], basin_id=p["basin_id"], ref=ref,
                      detail={"letter": doc, "letter_on": on.isoformat()})
        return {"project": ref, "letter": doc, "letter_on": on.isoformat()}
