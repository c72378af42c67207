"""The credit bank's program policies: where the program text is silent, the reading the ledger applies.

:data:`POLICIES` holds each policy as ``{"name", "value", "text", "alternative"}`` (the form of
:func:`capacitysim.rules.ii_offset.check_offset_ratio`), each text starting with :data:`POLICY_FLAG`;
the capacity register's policies (:mod:`capacitysim.bank.commitments`) are added to it.
:func:`policies` returns independent copies for the documents of the operations they govern. The
named values (``ALLOCATION_POLICY``, ``EVIDENCE_SINGLE_USE``...) are what the ledger's parts compute with.
"""

from __future__ import annotations

import copy

from capacitysim.bank import commitments as _commit
from capacitysim.bank import refs as _refs


#: What every program policy's text says: it is the tool's reading, not the rule.
POLICY_FLAG = "program interpretation — confirm with the bank administrator"
#: Program policy ``allocation_policy``: the order in which credits leave a holder's lots.
ALLOCATION_POLICY = "FIFO"
#: Program policy ``spdes_evidence_max_age_days`` [days] (see :mod:`capacitysim.bank.refs`).
SPDES_EVIDENCE_MAX_AGE_DAYS = _refs.SPDES_EVIDENCE_MAX_AGE_DAYS
#: Program policy ``pending_reserve``.
PENDING_RESERVE = "reserve-when-recorded"
#: Program policy ``default_credits``: what happens to the credits of a defaulted flow credit note.
DEFAULT_CREDITS = "return-to-holder"
#: Program policy ``extension_after_due_date``.
EXTENSION_AFTER_DUE_DATE = "refused"
#: Program policy ``condemnation_signoff``.
CONDEMNATION_SIGNOFF = "not-required"
#: Program policy ``administrator_registration``.
ADMINISTRATOR_REGISTRATION = "by-a-registered-administrator"
#: Program policy ``signoff_separation`` (maker-checker): who may not sign off or reject a transaction.
SIGNOFF_SEPARATION = "recorder-excluded"
#: Program policy ``evidence_single_use``: ``until-rejected-or-returned`` (the policy) or ``never-released``
#: (its alternative, implemented: tests switch to it). The withdrawal statuses in which a withdrawal holds
#: the documents it cites, under each value (:data:`EVIDENCE_HELD_BY`).
EVIDENCE_SINGLE_USE = "until-rejected-or-returned"
EVIDENCE_HELD_BY = {"until-rejected-or-returned": ("pending", "approved", "completed", "defaulted"),
                    "never-released": ("pending", "approved", "completed", "defaulted", "returned")}
#: Program policy ``service_user_binding``: whom a service user (``capacitysim serve``) records transactions for.
SERVICE_USER_BINDING = "bound-entities-only"
#: The service roles a binding is for (administrators act for every entity; reviewers record nothing).
BINDABLE_ROLES = ("engineer", "municipal")
#: Program policy ``bank_reads``: what a service user may read of the bank.
BANK_READS = "public-record"
#: The program policies, ``{"name", "value", "text", "alternative"}`` (the form of
#: :func:`capacitysim.rules.ii_offset.check_offset_ratio`); each text starts with :data:`POLICY_FLAG`.
POLICIES = {
    "allocation_policy": {
        "name": "allocation_policy", "value": ALLOCATION_POLICY,
        "text": (f"{POLICY_FLAG}: the program does not say which of a holder's credits a withdrawal, transfer or "
                 "condemnation takes; credits leave a holder's lots oldest first (FIFO: the certification date of "
                 "the originating deposit, then the lot number); lots of unknown origin (from a migrated "
                 "schema-2 bank) count as the oldest"),
        "alternative": {"value": "LIFO", "text": "newest deposit first"}},
    "pending_reserve": {
        "name": "pending_reserve", "value": PENDING_RESERVE,
        "text": (f"{POLICY_FLAG}: the bank administrator signs off deposits, withdrawals and transfers (definitions, "
                 "BANK ADMINISTRATOR) but the program does not say what a transaction awaiting sign-off does to a "
                 "balance; a withdrawal or transfer takes its credits out of the holder's available balance when "
                 "it is recorded (reserved: they cannot be promised twice), a deposit and the receiving side of a "
                 "transfer count only once signed off, and a rejection or return releases the reserve"),
        "alternative": {"value": "nothing-until-signed-off",
                        "text": "a pending withdrawal or transfer reserves nothing (the same credits could be promised "
                                "twice; the second sign-off would be refused)"}},
    "default_credits": {
        "name": "default_credits", "value": DEFAULT_CREDITS,
        "text": (f"{POLICY_FLAG}: the program defines DEFAULT (no certificate of occupancy within one year of the "
                 "flow credit note, or the extended time) but not what happens to the note's credits; they return "
                 "to the subaccount and lots they were withdrawn from and the note is closed as defaulted"),
        "alternative": {"value": "forfeit", "text": "the credits are forfeited (to the Board or the principal "
                                                     "municipal user); not implemented"}},
    "extension_after_due_date": {
        "name": "extension_after_due_date", "value": EXTENSION_AFTER_DUE_DATE,
        "text": (f"{POLICY_FLAG}: the DEFAULT definition allows additional time 'when extended as provided "
                 "herein' but the program sets no deadline for granting it; an extension granted after the "
                 "certificate of occupancy's due date is refused (the note is taken to be in default from the "
                 "day after the due date)"),
        "alternative": {"value": "accepted-until-defaulted",
                        "text": "an extension granted after the due date is accepted while the note has not been "
                                "put in default"}},
    "spdes_evidence_max_age_days": {
        "name": "spdes_evidence_max_age_days", "value": SPDES_EVIDENCE_MAX_AGE_DAYS,
        "text": (f"{POLICY_FLAG}: section H(1) asks for a demonstration of adequate treatment capacity and sets "
                 f"no age for it; the cited SPDES/treatment check must be as of no more than "
                 f"{SPDES_EVIDENCE_MAX_AGE_DAYS} days before the withdrawal date and before the administrator's "
                 "sign-off"),
        "alternative": {"value": None, "text": "no age limit"}},
    "condemnation_signoff": {
        "name": "condemnation_signoff", "value": CONDEMNATION_SIGNOFF,
        "text": (f"{POLICY_FLAG}: section D lets the municipal user mandate a condemnation; the BANK "
                 "ADMINISTRATOR definition lists deposits, withdrawals and transfers for sign-off, not "
                 "condemnations, so a condemnation takes effect when recorded with the municipal user's "
                 "resolution"),
        "alternative": {"value": "required", "text": "a condemnation awaits the administrator's sign-off"}},
    "administrator_registration": {
        "name": "administrator_registration", "value": ADMINISTRATOR_REGISTRATION,
        "text": (f"{POLICY_FLAG}: the bank administrator is 'the Board or its designee' (definitions); the "
                 "program does not say how the bank learns who that is; the first administrator is registered "
                 "when the bank is created (or migrated) and further ones only by a registered administrator"),
        "alternative": {"value": "board-resolution-only",
                        "text": "every administrator registered against a cited Board resolution"}},
    "signoff_separation": {
        "name": "signoff_separation", "value": SIGNOFF_SEPARATION,
        "text": (f"{POLICY_FLAG}: the BANK ADMINISTRATOR definition has the administrator 'review and sign off' "
                 "deposits, withdrawals and transfers but does not say whether an administrator may sign off a "
                 "transaction they recorded; the person who recorded a deposit, withdrawal or transfer (the actor "
                 "of the journal row that created its pending sign-off: record-deposit, withdraw or transfer-out; "
                 "names compared ignoring case) can neither sign it off nor reject it: another registered "
                 "administrator does (a bank with a single administrator cannot sign off that administrator's own "
                 "entries: register a second one with add-administrator); attaching references to a pending "
                 "withdrawal does not make one its recorder, and the recorder may still return its credits"),
        "alternative": {"value": "any-administrator",
                        "text": "any registered administrator signs off, the recorder included (one person can "
                                "then record and approve a withdrawal alone)"}},
    "evidence_single_use": {
        "name": "evidence_single_use", "value": EVIDENCE_SINGLE_USE,
        "text": (f"{POLICY_FLAG}: section H(1) asks for a demonstration of adequate hydraulic and treatment "
                 "capacity 'in relation to the application' and does not say whether one demonstration may serve "
                 "several applications; a capacity demonstration or SPDES/treatment check (the same document: "
                 "the same SHA-256, whatever its path; through the service, the result of the same job or of a "
                 "job with byte-identical results) is the evidence of one application only: a second withdrawal "
                 "or attach citing it is refused while the withdrawal that cites it is pending, approved, "
                 "completed or defaulted; a withdrawal rejected by the administrator or returned (status "
                 "returned) releases its evidence, which a later application may cite"),
        "alternative": {"value": "never-released",
                        "text": "a cited document stays the evidence of the first application that cited it, even "
                                "once that withdrawal is rejected or returned"}},
    "service_user_binding": {
        "name": "service_user_binding", "value": SERVICE_USER_BINDING,
        "text": (f"{POLICY_FLAG}: sections B, C and G let a municipal user use and transfer the credits of its "
                 "subaccount and an applicant withdraw them for its application; the program does not say which "
                 "users of the simulation service act for which entity; a bank administrator binds each service "
                 "user to the bank entities they act for (bind-user, journaled): a municipal user records "
                 "deposits, withdrawals and transfers only for subaccounts whose owner is an entity they are "
                 "bound to (a municipal service user is bound only to municipal users), an engineer only for the "
                 "holders who named them (bound to the holder: a withdrawal paid from its subaccount, a deposit "
                 "into it); administrators act for every entity; a binding is closed with unbind-user and kept"),
        "alternative": {"value": "role-only",
                        "text": "any user of a role that may record a transaction records it for any entity "
                                "(the administrator checks the holder's consent at the sign-off)"}},
    "bank_reads": {
        "name": "bank_reads", "value": BANK_READS,
        "text": (f"{POLICY_FLAG}: the records section has the Board retain the program's records and make them "
                 "'available for public inspection by regulatory agencies and other interested parties'; every "
                 "service user who may read the bank (every role) reads every balance, deposit, withdrawal, "
                 "transfer and sign-off, whether or not bound to the entity; bindings limit only what a user "
                 "records, and the bindings themselves are read by administrators"),
        "alternative": {"value": "bound-entities-only",
                        "text": "engineers and municipal users read only the subaccounts of the entities they are "
                                "bound to"}},
    "no_backdating": {
        "name": "no_backdating", "value": "journal-order",
        "text": (f"{POLICY_FLAG}: the records section has the Board keep the program's records and the program dates "
                 "notes, defaults and approvals, but does not say whether an entry may be dated before entries already "
                 "recorded; a row (a withdrawal, sign-off, connection, model registration, expiry or default run) "
                 "cannot be dated before the day the journal's last row was recorded, so a date cannot be moved back "
                 "past evidence-age and expiry checks; a late entry is recorded by a bank administrator with its "
                 "reason (late_reason), and its journal rows keep both the date it takes effect and when it was "
                 "recorded"),
        "alternative": {"value": "any-past-date",
                        "text": "any date up to today is accepted (an entry can then be dated before rows recorded "
                                "earlier, and old evidence made to look recent)"}},
    "annual_report_due": {
        "name": "annual_report_due", "value": "anniversary",
        "text": (f"{POLICY_FLAG}: each municipal user submits its records to the bank administrator 'on at least an "
                 "annual basis' (records section), on no fixed date; the next submission is due one year after the "
                 "last one (the first one year after the municipal user entered the bank), and a submission after "
                 "that date is recorded as late"),
        "alternative": {"value": "calendar-year",
                        "text": "the records of each calendar year are due by December 31 of that year"}},
}
POLICIES.update(_commit.POLICIES)


def policies(*names: str) -> list[dict]:
    """The program policies named (all of them by default), as independent copies."""
    return [copy.deepcopy(POLICIES[n]) for n in (names or POLICIES)]
