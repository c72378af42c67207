"""The sewer flow credit bank (Binghamton-Johnson City I/I offset program) on one SQLite file.

Deposits, withdrawals and transfers take effect only when a registered bank administrator signs them
off, never the person who recorded them (maker-checker); a cited capacity demonstration or SPDES check is
the evidence of one application; the service's users act only for the bank entities they are bound to;
credits are kept in lots by originating project (provenance, for condemnation under credit bank
section D); every change names the person acting. Where the program is silent the bank applies named
program policies (:data:`POLICIES`), never presented as the rule.

The journal is hash-chained and :meth:`Ledger.verify` audits it, but a consistent rewrite of the whole
chain by someone with write access to the file can only be detected against a head hash kept outside
the bank (:meth:`Ledger.head`; ``verify(expect_head=...)``): see :mod:`capacitysim.bank.ledger`.
"""

from capacitysim.bank.ledger import (
    DEFAULT_DB,
    POLICIES,
    Ledger,
    book_down,
    book_up,
    default_actor,
    person_name,
    policies,
)

__all__ = ["DEFAULT_DB", "POLICIES", "Ledger", "book_down", "book_up", "default_actor", "person_name", "policies"]
