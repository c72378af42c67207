"""The credit bank's transactions: deposits, withdrawals (with their section H references), transfers, condemnations.

A deposit (section B), a withdrawal (sections F and H) and a transfer (sections A, B, C, G) are recorded
*pending*: a withdrawal or transfer reserves its credits at once, out of the holder's lots (program
policy ``pending_reserve``), and each takes effect at the administrator's sign-off
(:mod:`capacitysim.bank.ledger_signoff`). A condemnation (section D) takes effect when recorded
(``condemnation_signoff``), only from lots whose project the condemning municipal user has jurisdiction over.
"""

from __future__ import annotations

from capacitysim.bank import commitments as _commit
from capacitysim.bank import refs as _refs
from capacitysim.bank.ledger_core import _same_name
from capacitysim.bank.ledger_lots import _describe_lots
from capacitysim.bank.ledger_policies import ALLOCATION_POLICY, SPDES_EVIDENCE_MAX_AGE_DAYS, policies
from capacitysim.bank.ledger_values import (
    MAX_GPD,
    _app_type,
    _positive_gpd,
    _property,
    _text,
    _whole_gpd,
    book_down,
    book_up,
    parse_date,
    quantification_facts_checked,
)
from capacitysim.errors import InputError, RefusedError
from capacitysim.rules import ii_offset


#: Missing references that keep a withdrawal from being signed off (section H).
_H_REFS = (("capacity_ref", "the capacity demonstration (--capacity-ref, section H(1))"),
           ("spdes_ref", "the SPDES/treatment check (--spdes-ref, section H(1))"),
           ("application_approval", ("the approval under the connection application program "
                                     "(--application-approval, section H(2))")))


class Transactions:
    """Deposits, withdrawals and their references, transfers and condemnations.

    A part of :class:`capacitysim.bank.ledger.Ledger`, which composes it with the other parts: it works in
    the ledger's connection and transactions (:class:`capacitysim.bank.ledger_core.LedgerCore`) and calls
    the other parts' methods through ``self``; it holds no state of its own.
    """

    def deposit(self, basin: str, owner: str, gpd: float, project: str, *, quantification: str | dict | None = None,
                letter: str | None = None, property: str | None = None, certified_on=None,
                certificate: str | None = None, description: str = "", reason: str = "", documents=()) -> dict:
        """Record the deposit of the credits of a project certified complete (section B), pending sign-off.

        The credits go to the subaccount of the municipal user having jurisdiction over the project
        site (``owner``, a municipal user; the subaccount is opened if needed). The certified figure
        is booked rounded down to whole gpd. The deposit takes effect, and the project is recorded as
        certified with a lot of its credits, only when the bank administrator signs it off
        (:meth:`sign_off`; definitions, BANK ADMINISTRATOR): until then the balance does not count
        it (program policy ``pending_reserve``). A project is deposited once.

        The deposit cites the project's quantification (``quantification``: the JSON of ``capacitysim
        credits quantify --json``, its SHA-256 recorded; I/I quantification guidelines: "prepared by a
        professional engineer, licensed in the State of New York, and presented in an I/I remediation
        engineering report"): it must name the PE and licence, quantify this project for this municipal
        user and basin, and total at least ``gpd`` (:func:`capacitysim.bank.refs.quantification_facts`).
        ``letter`` is the completed certification letter (Appendix A; records section B: "If not
        previously furnished, provide completed certification letter"), which may follow with
        :meth:`furnish_letter`; annual report part B flags a certified project without it.

        Parameters
        ----------
        quantification : str or dict
            The path of the quantification JSON, or (the service) the facts already checked with
            ``ref`` and ``sha256`` (:func:`capacitysim.bank.refs.quantification_facts`). Required.
        letter : str, optional
            The path of the certification letter (any format; SHA-256 recorded).
        property : {"public", "private"}, optional
            Where the project is (records section, parts A and B: "public sewage collection systems
            and private property").

        Returns
        -------
        dict
            ``project``, ``basin``, ``owner``, ``booked_gpd`` (whole gpd to be deposited),
            ``stated_gpd``, ``status`` (``pending sign-off``), ``txn`` (give it to ``sign_off``),
            ``balance_gpd`` (unchanged until the sign-off) and ``policies``.
        """
        stated = _positive_gpd("gpd", gpd)
        amount = book_down(stated)
        if amount < 1:
            raise InputError(f"gpd must be at least 1 whole gpd to deposit, got {gpd!r}")
        ref = _text("project", project)
        on = self._not_future("certified_on", parse_date("certified_on", certified_on)) or self._today()
        if on < ii_offset.PROGRAM_EFFECTIVE_DATE:
            raise InputError(f"certified_on {on} is before the program took effect ({ii_offset.PROGRAM_EFFECTIVE_DATE}); "
                             "allowed: a certification under the program")
        certificate = _text("certificate", certificate, required=False)
        prop = _property(property)
        if quantification is None:
            raise InputError("quantification is required: the JSON of `capacitysim credits quantify PROJECT.toml --json` "
                             "(the I/I remediation engineering report of a NYS licensed PE, I/I quantification guidelines)")
        if isinstance(quantification, dict):
            quant = quantification_facts_checked(quantification, project=ref, owner=owner, basin=basin, gpd=stated)
        else:
            quant = _refs.resolve_quantification(_text("quantification", quantification), project=ref, owner=owner,
                                                 basin=basin, gpd=stated)
        letter_doc = _refs.resolve_document("letter", _text("letter", letter, required=False),
                                            "the completed certification letter (Appendix A)")
        docs = [*documents, *([certificate] if certificate else []), quant["ref"],
                *([letter_doc["ref"]] if letter_doc else [])]
        with self._tx() as c:
            b, e = self._basin(c, basin), self._entity(c, owner)
            if not e["municipal"]:
                raise RefusedError(f"{owner} is not a municipal user: certified credits are deposited to the subaccount of the "
                                   "municipal user with jurisdiction over the project site (section B); transfer them after")
            same = _same_name(c, "projects", "ref", ref)
            if same is not None and same != ref:
                raise RefusedError(f"project {ref!r} already exists as {same!r}")
            p = c.execute("SELECT * FROM projects WHERE ref=?", (ref,)).fetchone()
            if p is not None:
                if p["status"] == "certified":
                    raise RefusedError(f"project {ref!r} was already certified and deposited ({p['certified_gpd']:,} gpd)")
                if p["basin_id"] != b["id"] or p["jurisdiction_id"] != e["id"]:
                    raise RefusedError(f"project {ref!r} is recorded in another basin or jurisdiction")
                open_ = c.execute("SELECT txn FROM signoffs WHERE kind='deposit' AND ref=? AND status='pending'", (ref,)).fetchone()
                if open_ is not None:
                    raise RefusedError(f"a deposit of project {ref!r} is already awaiting the administrator's sign-off "
                                       f"(txn {open_[0]})")
            else:
                c.execute("INSERT INTO projects(ref, basin_id, jurisdiction_id, description, status, created_at)"
                          " VALUES (?,?,?,?,'identified',?)", (ref, b["id"], e["id"], description or "", self._now()))
            sub = self._subaccount(c, basin, owner, open_if_missing=True, reason=f"deposit of project {ref}")
            detail = {"stated_gpd": stated, "booked_gpd": amount, "certified_on": on.isoformat(), "certificate": certificate,
                      "description": description or "", "documents": docs, "reason": reason or "", "property": prop,
                      "quantification": quant, "letter": letter_doc}
            txn = self._record_signoff(c, "deposit", ref, sub["id"], amount, detail)
            self._log(c, "record-deposit", reason=reason or f"project {ref} certified complete", documents=docs,
                      basin_id=b["id"], ref=ref, detail=detail | {"sign_off": "pending", "owner": owner})
            balance = c.execute("SELECT balance_gpd FROM subaccounts WHERE id=?", (sub["id"],)).fetchone()[0]
        return {"project": ref, "basin": basin, "owner": owner, "booked_gpd": amount, "stated_gpd": stated,
                "status": "pending sign-off", "txn": txn, "balance_gpd": balance, "quantification": quant,
                "letter": letter_doc, "property": prop, "policies": policies("pending_reserve")}

    def _offset_ratio(self, value) -> tuple[float, dict | None]:
        """Section F's offset ratio through :func:`capacitysim.rules.ii_offset.check_offset_ratio`:
        below one refused, above one a program policy (returned)."""
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise InputError(f"offset_ratio must be a number, got {value!r}") from None
        checked = ii_offset.check_offset_ratio(value)
        return float(checked["offset_ratio"]), checked["policy"]

    @staticmethod
    def _average(average_gpd, peak: float) -> float | None:
        """A connection's recorded average daily flow [gpd]: > 0 and at most its peak, or None."""
        if average_gpd is None:
            return None
        average = _positive_gpd("average_gpd", average_gpd)
        if average > peak:
            raise InputError(f"average_gpd {average:,.0f} gpd is above the peak {peak:,.0f} gpd; allowed: an average "
                             "daily flow at most the connection's peak")
        return average

    def _spdes_date_ok(self, spd: dict | None) -> None:
        if spd is not None and spd["as_of"] > self._today().isoformat():
            raise InputError(f"spdes_ref: the SPDES check {spd['ref']} is as of {spd['as_of']}, in the future; allowed: a "
                             f"check of records up to today ({self._today()})")

    def withdraw(self, basin: str, owner: str, peak_flow_gpd: float, application: str, *, node: str | None = None,
                 average_gpd: float | None = None,
                 capacity_ref: str | None = None, spdes_ref: str | None = None, application_approval: str | None = None,
                 principal: str | None = None, offset_ratio: float = ii_offset.DEFAULT_OFFSET_RATIO,
                 threshold_gpd: float = ii_offset.OFFSET_THRESHOLD_GPD, on=None, app_type: str = "connection",
                 applicant: str | None = None, affected_owner: str | None = None, late_reason: str | None = None,
                 description: str = "", reason: str = "", documents=()) -> dict:
        """Reserve credits for an application; it is approved (the flow credit note issued) only at the sign-off.

        ``peak_flow_gpd`` is the estimated peak sewage flow rate increase of the connection; the
        credits reserved are ``offset_ratio`` times it, rounded up (section F;
        :func:`~capacitysim.rules.ii_offset.check_offset_ratio` refuses a ratio below one and flags one
        above as a program policy). A connection adding no more than 2,500 gpd needs no offset, so its
        withdrawal is refused (record it with :meth:`record_application`). The credits leave the
        holder's lots by the allocation policy and are reserved at once (program policy
        ``pending_reserve``). The withdrawal is *pending* until the bank administrator signs it off
        (:meth:`sign_off`), which needs the capacity demonstration and SPDES check of section H(1)
        (``capacity_ref``, ``spdes_ref``, or :meth:`attach` later) and the connection application
        program's approval of section H(2) (``application_approval``). A cited document another withdrawal
        holds (the same SHA-256) is refused, naming that application (program policy ``evidence_single_use``).

        Parameters
        ----------
        node : str
            The model node where the connection is made (required): the capacity demonstration must
            connect at least ``peak_flow_gpd`` there.
        capacity_ref, spdes_ref : str, optional
            Paths of the JSON documents of ``capacitysim capacity --json`` and
            ``capacitysim spdes check --json`` (:func:`capacitysim.bank.refs.resolve_ref`): the SPDES
            check must show treatment capacity with ``added_gpd`` >= ``average_gpd`` when recorded (a
            monthly-average permit limit), else >= ``peak_flow_gpd``, and be as of no more than
            ``spdes_evidence_max_age_days`` (program policy) before ``on``.
        application_approval : str, optional
            The approval reference under the new or modified sewer connection application program
            (section H(2)).
        on : date or str, optional
            The withdrawal date (default today, never in the future).
        app_type : {"connection", "extension"}
            A new or modified sewer connection, or a sewer extension (annual report part C).
        average_gpd : float, optional
            The connection's average daily flow [gpd] (at most ``peak_flow_gpd``): its commitment's
            average (program policy ``commitment_average``: the peak when not given).
        applicant, affected_owner : str, optional
            The parties of the flow credit note besides the Board (definitions, FLOW CREDIT NOTE): the
            applicant (default: the credit holder, ``owner``) and the owner of the property the
            connection serves, when another person.
        late_reason : str, optional
            A bank administrator recording the withdrawal after the day of the journal's last row
            (``on`` earlier) gives the reason (program policy ``no_backdating``).

        Where the basin has a registered model (:meth:`register_model`), ``node`` must drain to the
        basin's outlet on its graph (section A; exit 3 naming where it drains otherwise), a cited
        capacity demonstration must have run that model (same SHA-256), and each cited document must
        include every commitment of its scope made so far (:mod:`capacitysim.bank.commitments`).
        """
        peak = _positive_gpd("peak_flow_gpd", peak_flow_gpd)
        average = self._average(average_gpd, peak)
        application = _text("application", application)
        ratio, ratio_policy = self._offset_ratio(offset_ratio)
        node = _text("node", node, required=False)
        if node is None:
            raise InputError("node is required: the model node where the connection is made (the capacity demonstration "
                             "must connect the application's peak flow there, credit bank section H(1))")
        app_type = _app_type(app_type)
        on = self._not_future("on", parse_date("on", on)) or self._today()
        approval = _text("application_approval", application_approval, required=False)
        decision = ii_offset.threshold_decision(peak, average, threshold_gpd=threshold_gpd)
        compared = "average daily flow" if decision["compared"] == "average" else "peak flow"
        if not decision["offset_required"]:
            raise RefusedError(f"no offset is required: the {compared} {decision['compared_flow_gpd']:,.0f} gpd does not "
                               f"exceed the {threshold_gpd:,.0f} gpd threshold (definitions, NEW OR MODIFIED SEWER "
                               f"CONNECTION; program policy threshold_basis = {decision['policy']['value']}); no credits "
                               "withdrawn (record the application with `bank record-application`)")
        need = book_up(float(ii_offset.credits_required_gpd(peak, ratio, threshold_gpd,
                                                            threshold_flow_gpd=decision["compared_flow_gpd"])))
        if need > MAX_GPD:
            raise InputError(f"peak_flow_gpd x offset_ratio = {need:,} gpd; allowed: at most {MAX_GPD:,.0f} gpd")
        cap = _refs.resolve_ref("capacity", _text("capacity_ref", capacity_ref, required=False), gpd=peak, node=node,
                                average_gpd=average)
        spd = _refs.resolve_ref("spdes", _text("spdes_ref", spdes_ref, required=False), gpd=peak, on=on,
                                max_age_days=SPDES_EVIDENCE_MAX_AGE_DAYS, average_gpd=average)
        self._spdes_date_ok(spd)
        principal = _text("principal", principal, required=False)
        applicant = _text("applicant", applicant, required=False) or _text("owner", owner)
        affected_owner = _text("affected_owner", affected_owner, required=False)
        with self._tx() as c:
            self._dated(c, "on", on, late_reason)
            b, e = self._basin(c, basin), self._entity(c, owner)
            same = self._app_taken(c, application)
            if same is not None:
                raise RefusedError(f"application {application!r} already has a withdrawal or record"
                                   + ("" if same == application else f" (as {same!r})"))
            section_a = _commit.section_a(c, b, node)
            node = section_a.get("node", node)
            self._evidence_free(c, "capacity", cap, application)
            self._evidence_free(c, "spdes", spd, application)
            for kind, r in (("capacity", cap), ("spdes", spd)):
                if r is not None:
                    self._evidence_current(c, b, application, kind, r["ref"], r.get("model_sha256"), r["committed"],
                                           on=self._today(), when="so far")
            if principal is None:
                if not e["municipal"]:
                    raise InputError("principal (the municipal user whose sewer receives the connection) is required "
                                     "when the credit holder is not a municipal user")
                p = e
            else:
                p = self._entity(c, principal)
                if not p["municipal"]:
                    raise RefusedError(f"{principal} is not a municipal user")
            sub = self._subaccount(c, basin, owner)
            c.execute(
                "INSERT INTO withdrawals(application, app_key, subaccount_id, principal_id, peak_flow_gpd, offset_ratio, amount_gpd,"
                " status, capacity_ref, capacity_sha256, spdes_ref, spdes_sha256, spdes_as_of, description, requested_at,"
                " requested_on, node, application_approval, app_type, average_gpd, capacity_committed, spdes_committed,"
                " applicant, affected_owner) VALUES (?,?,?,?,?,?,?,'pending',?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (application, application.casefold(), sub["id"], p["id"], peak, ratio, need,
                 cap and cap["ref"], cap and cap["sha256"], spd and spd["ref"], spd and spd["sha256"], spd and spd["as_of"],
                 description or "", self._now(), on.isoformat(), node, approval, app_type, average,
                 cap and _commit.evidence_summary(cap), spd and _commit.evidence_summary(spd), applicant, affected_owner))
            self._need(c, sub["id"], need)
            pieces = self._consume(c, sub["id"], need, "withdraw", application)
            dated = [p for p in pieces if p["deposited_on"]]
            if dated:
                last = max(dated, key=lambda p: p["deposited_on"])
                if on.isoformat() < last["deposited_on"][:10]:
                    raise RefusedError(f"the withdrawal date {on} is before {last['deposited_on'][:10]}, when the credits it "
                                       f"would use (lot {last['lot']}, project {last['project']}) were certified: credits "
                                       "are withdrawn only once deposited (credit bank sections B and H)")
            txn = self._record_signoff(c, "withdrawal", application, sub["id"], need)
            self._move(c, sub["id"], -need, "withdraw", reason=reason or f"application {application}",
                       documents=[*documents, *_ref_docs(cap, spd), *([approval] if approval else [])], basin_id=b["id"],
                       ref=application,
                       detail={"peak_flow_gpd": peak, "offset_ratio": ratio, "reserved_gpd": need, "status": "pending",
                               "sign_off": "pending", "principal": p["name"], "node": node, "withdrawal_date": on.isoformat(),
                               "average_gpd": average, **section_a, "threshold": _threshold_detail(decision),
                               "applicant": applicant, "affected_owner": affected_owner,
                               "application_approval": approval, "type": app_type, **_ref_detail(cap, spd),
                               "lots": self._show_pieces(pieces), "allocation_policy": ALLOCATION_POLICY,
                               **({"offset_ratio_policy": ratio_policy} if ratio_policy else {})})
        out = self.withdrawal(application)
        return out | {"txn": txn, "lots_taken": self._show_pieces(pieces), "threshold": _threshold_detail(decision),
                      "policies": policies("allocation_policy", "pending_reserve", "spdes_evidence_max_age_days")
                      + [decision["policy"]] + ([ratio_policy] if ratio_policy else [])}

    def attach(self, application: str, *, capacity_ref: str | None = None, spdes_ref: str | None = None,
               application_approval: str | None = None, node: str | None = None, reason: str = "", documents=()) -> dict:
        """Attach the section H references to a pending withdrawal (or the H(2) approval to an application
        without credits); nothing is approved here: the bank administrator signs off (:meth:`sign_off`).

        A capacity JSON is checked against the withdrawal's peak flow at its node, a SPDES JSON
        against its flow and its withdrawal date (program policy ``spdes_evidence_max_age_days``).
        ``node`` may be given only for a withdrawal recorded without one (a migrated schema-2 bank).
        A reference already recorded cannot be replaced: return the credits and apply again instead.
        """
        application = _text("application", application)
        node = _text("node", node, required=False)
        approval = _text("application_approval", application_approval, required=False)
        capacity_ref = _text("capacity_ref", capacity_ref, required=False)
        spdes_ref = _text("spdes_ref", spdes_ref, required=False)
        if capacity_ref is None and spdes_ref is None and approval is None and node is None:
            raise InputError("give capacity_ref, spdes_ref and/or application_approval to attach")
        app = self._application_row(self.conn, application)
        if app is not None:
            if capacity_ref or spdes_ref or node:
                raise InputError(f"application {application!r} withdraws no credits: only --application-approval can be "
                                 "attached to it")
            return self._approve_application(application, approval, reason, documents)
        w = self._withdrawal(self.conn, application)  # peak flow, node and date never change: read before the transaction
        if node is not None and w["node"] is not None and node != w["node"]:
            raise InputError(f"node {node!r}: application {w['application']!r} was made for node {w['node']!r}")
        node = w["node"] or node
        if capacity_ref is not None and node is None:
            raise InputError(f"node is required: application {w['application']!r} has no connection node recorded; give "
                             "--node with the capacity demonstration")
        requested = parse_date("requested_on", w["requested_on"]) or self._today()
        cap = _refs.resolve_ref("capacity", capacity_ref, gpd=w["peak_flow_gpd"], node=node, average_gpd=w["average_gpd"])
        spd = _refs.resolve_ref("spdes", spdes_ref, gpd=w["peak_flow_gpd"], on=requested,
                                max_age_days=SPDES_EVIDENCE_MAX_AGE_DAYS, average_gpd=w["average_gpd"])
        self._spdes_date_ok(spd)
        with self._tx() as c:
            w = self._withdrawal(c, application)
            if w["status"] != "pending":
                raise RefusedError(f"application {application!r} is {w['status']}; references are attached before the "
                                   "administrator's sign-off")
            for new, col in ((cap, "capacity_ref"), (spd, "spdes_ref"), (approval, "application_approval")):
                if new is not None and w[col] is not None:
                    raise RefusedError(f"application {application!r} already cites {col} {w[col]!r}; a recorded reference "
                                       "cannot be replaced (return the credits and apply again)")
            self._evidence_free(c, "capacity", cap, w["application"], exclude_id=w["id"])
            self._evidence_free(c, "spdes", spd, w["application"], exclude_id=w["id"])
            b = c.execute("SELECT b.* FROM basins b JOIN subaccounts s ON s.basin_id = b.id WHERE s.id=?",
                          (w["subaccount_id"],)).fetchone()
            if node is not None and w["node"] is None:
                node = _commit.section_a(c, b, node).get("node", node)
            for kind, r in (("capacity", cap), ("spdes", spd)):
                if r is not None:
                    self._evidence_current(c, b, w["application"], kind, r["ref"], r.get("model_sha256"), r["committed"],
                                           on=self._today(), when="so far")
                    c.execute(f"UPDATE withdrawals SET {kind}_committed=? WHERE id=?",
                              (_commit.evidence_summary(r), w["id"]))
            cap_ref, cap_sha = (cap["ref"], cap["sha256"]) if cap else (w["capacity_ref"], w["capacity_sha256"])
            spd_ref, spd_sha, spd_as_of = ((spd["ref"], spd["sha256"], spd["as_of"]) if spd
                                           else (w["spdes_ref"], w["spdes_sha256"], w["spdes_as_of"]))
            c.execute("UPDATE withdrawals SET capacity_ref=?, capacity_sha256=?, spdes_ref=?, spdes_sha256=?, spdes_as_of=?,"
                      " application_approval=?, node=? WHERE id=?",
                      (cap_ref, cap_sha, spd_ref, spd_sha, spd_as_of, approval or w["application_approval"], node, w["id"]))
            basin_id = c.execute("SELECT basin_id FROM subaccounts WHERE id=?", (w["subaccount_id"],)).fetchone()[0]
            self._log(c, "attach", reason=reason, documents=[*documents, *_ref_docs(cap, spd), *([approval] if approval else [])],
                      basin_id=basin_id, ref=application,
                      detail={"status": "pending", "node": node, **({"application_approval": approval} if approval else {}),
                              **_ref_detail(cap, spd)})
        return self.withdrawal(application) | {"policies": policies("spdes_evidence_max_age_days")}

    def transfer(self, basin: str, from_owner: str, to_owner: str, gpd: float, *, document: str,
                 to_basin: str | None = None, board_approval: str | None = None, reason: str = "") -> dict:
        """Record a transfer of credits between holders (sections B, C, G), pending the administrator's sign-off.

        Refused without a document (notarized bill of sale, memorandum of gift or grant, written
        notice), across basins without a recorded Board approval (section A), or for more than the
        balance. The credits leave the sender's lots by the allocation policy and are reserved at
        once (program policy ``pending_reserve``); the receiver gets lots of the same origin when the
        bank administrator signs the transfer off (:meth:`sign_off`). ``gpd`` must be whole gallons
        per day; the receiving subaccount is opened if needed.
        """
        amount = _whole_gpd("gpd", gpd)
        document = _text("document", document, required=False)
        if document is None:
            raise RefusedError("a transfer needs a cited document (notarized bill of sale, memorandum of gift or grant, "
                               "written notice: credit bank sections B and G)")
        to_basin = to_basin or basin
        board_approval = _text("board_approval", board_approval, required=False)
        cross = to_basin != basin
        if cross and board_approval is None:
            raise RefusedError(f"credits generated in basin {basin} cannot be transferred to basin {to_basin} without a "
                               "recorded Board approval (credit bank section A)")
        with self._tx() as c:
            src = self._subaccount(c, basin, from_owner)
            self._entity(c, to_owner)
            if not cross and from_owner == to_owner:
                raise InputError("a transfer needs two different holders")
            dst = self._subaccount(c, to_basin, to_owner, open_if_missing=True, reason=f"transfer from {from_owner}")
            self._need(c, src["id"], amount)
            cur = c.execute("INSERT INTO transfers(from_id, to_id, amount_gpd, document, board_approval, cross_basin, created_at)"
                            " VALUES (?,?,?,?,?,?,?)", (src["id"], dst["id"], amount, document, board_approval, int(cross), self._now()))
            ref = f"transfer-{cur.lastrowid}"
            docs = [document, board_approval]
            detail = {"from": from_owner, "to": to_owner, "basin": basin, "to_basin": to_basin, "gpd": amount}
            pieces = self._consume(c, src["id"], amount, "transfer-out", ref)
            txn = self._record_signoff(c, "transfer", ref, dst["id"], amount, detail)
            self._move(c, src["id"], -amount, "transfer-out", reason=reason, documents=docs, basin_id=src["basin_id"],
                       ref=ref, detail=detail | {"sign_off": "pending", "lots": self._show_pieces(pieces),
                                                 "allocation_policy": ALLOCATION_POLICY})
        return {"transfer": ref, **detail, "status": "pending sign-off", "txn": txn,
                "from_balance_gpd": self.balance(basin, from_owner)["balance_gpd"],
                "to_balance_gpd": self.balance(to_basin, to_owner)["balance_gpd"], "lots_taken": self._show_pieces(pieces),
                "policies": policies("allocation_policy", "pending_reserve")}

    def condemn(self, basin: str, from_owner: str, by: str, gpd: float, *, project: str | None = None, document: str,
                reason: str = "") -> dict:
        """Condemn credits on deposit in a private entity's name for a public purpose (section D).

        Section D: a municipal user "can mandate that credits 'on deposit' in the name of a private
        entity generated in relation to an I/I remediation project within such municipal user's
        boundaries shall be 'condemned'". Only the holder's lots whose project's jurisdiction is
        ``by`` (and, with ``project``, of that project) can be taken, in the order of the allocation
        policy; a lot of unknown origin (migrated schema-2 bank) never. Asking for more is refused,
        naming the holder's lots and their jurisdictions. One condemnation record is made per project
        taken from; the credits move to ``by``'s subaccount as lots of the same origin, at once
        (program policy ``condemnation_signoff``). ``document`` is the condemnation resolution.
        """
        amount = _whole_gpd("gpd", gpd)
        document = _text("document", document, required=False)
        if document is None:
            raise RefusedError("a condemnation needs a cited document (the municipal user's resolution)")
        ref = _text("project", project, required=False)
        with self._tx() as c:
            b = self._basin(c, basin)
            m, f = self._entity(c, by), self._entity(c, from_owner)
            if not m["municipal"]:
                raise RefusedError(f"{by} is not a municipal user; only a municipal user can condemn credits (section D)")
            if f["municipal"]:
                raise RefusedError(f"{from_owner} is a municipal user; only credits in a private entity's name can be condemned")
            p = None
            if ref is not None:
                p = c.execute("SELECT * FROM projects WHERE ref=?", (ref,)).fetchone()
                if p is None or p["status"] != "certified":
                    raise RefusedError(f"project {ref!r} is not a certified project of the bank")
                if p["jurisdiction_id"] != m["id"]:
                    raise RefusedError(f"{by} does not have jurisdiction over project {ref!r} (section D: only credits of an "
                                       "I/I remediation project within the condemning municipal user's boundaries)")
            src = self._subaccount(c, basin, from_owner)
            lots = self._holder_lots(c, src["id"])
            eligible = [lot for lot in lots if lot["jurisdiction_id"] == m["id"] and (p is None or lot["project_id"] == p["id"])]
            available = sum(lot["gpd"] for lot in eligible)
            if amount > available:
                scope = f" of project {ref}" if ref else ""
                raise RefusedError(f"insufficient eligible credits: {by} can condemn only credits generated by an I/I "
                                   f"remediation project within its boundaries (section D){scope}; {from_owner} holds in "
                                   f"basin {basin} {_describe_lots(lots)}; eligible {available:,} gpd, asked {amount:,} gpd")
            dst = self._subaccount(c, basin, by, open_if_missing=True, reason="condemnation")
            plan, left = {}, amount  # project -> ([its lots taken], gpd), in the allocation order (FIFO)
            for lot in eligible:
                if left <= 0:
                    break
                g = min(int(lot["gpd"]), left)
                lots_g = plan.setdefault(lot["project_id"], [[], 0])
                lots_g[0].append(lot)
                lots_g[1] += g
                left -= g
            pieces, made = [], []
            for project_id, (group_lots, g) in plan.items():
                cur = c.execute("INSERT INTO condemnations(from_id, to_id, project_id, amount_gpd, document, created_at)"
                                " VALUES (?,?,?,?,?,?)", (src["id"], dst["id"], project_id, g, document, self._now()))
                cref = f"condemnation-{cur.lastrowid}"
                group, _ = self._take(c, group_lots, g, "condemn-out", cref)
                pieces += group
                new_lots = self._mirror(c, group, g, dst["id"], "condemn-in", cref)
                detail = {"from": from_owner, "by": by, "project": group[0]["project"], "gpd": g,
                          "lots": self._show_pieces(group), "allocation_policy": ALLOCATION_POLICY,
                          "policy": "condemnation_signoff"}
                self._move(c, src["id"], -g, "condemn-out", reason=reason or "public purpose", documents=[document],
                           basin_id=b["id"], ref=cref, detail=detail)
                self._move(c, dst["id"], g, "condemn-in", reason=reason or "public purpose", documents=[document],
                           basin_id=b["id"], ref=cref, detail=detail | {"new_lots": new_lots})
                made.append({"condemnation": cref, "project": group[0]["project"], "gpd": g})
        return {"condemnation": ", ".join(x["condemnation"] for x in made), "condemnations": made, "from": from_owner,
                "by": by, "project": ref, "gpd": amount, "basin": basin, "lots_taken": self._show_pieces(pieces),
                "from_balance_gpd": self.balance(basin, from_owner)["balance_gpd"],
                "to_balance_gpd": self.balance(basin, by)["balance_gpd"],
                "policies": policies("allocation_policy", "condemnation_signoff")}


def _threshold_detail(decision: dict) -> dict:
    """The journal's and the answer's record of the offset threshold (:func:`capacitysim.rules.ii_offset.threshold_decision`)."""
    return {k: decision[k] for k in ("offset_required", "compared", "compared_flow_gpd", "threshold_gpd", "note")} | {
        "threshold_basis": decision["policy"]["value"]}


def _ref_docs(*refs) -> list[str]:
    """Journal document entries for resolved refs: the ref, with its SHA-256 for a file."""
    return [r["ref"] + (f" (sha256 {r['sha256']})" if r["sha256"] else "") for r in refs if r is not None]


def _ref_detail(cap, spd) -> dict:
    """Journal detail of resolved refs: ref, SHA-256 and verdict; for a capacity JSON also the model
    file's SHA-256 and the connection it demonstrated."""
    out = {}
    for kind, r in (("capacity", cap), ("spdes", spd)):
        if r is not None:
            out[f"{kind}_ref"], out[f"{kind}_sha256"], out[f"{kind}_verdict"] = r["ref"], r["sha256"], r["verdict"]
            for key in ("model", "model_sha256", "connection", "added_gpd", "as_of", "watershed", "basis"):
                if r.get(key) is not None:
                    out[f"{kind}_{key}"] = r[key]
    return out
