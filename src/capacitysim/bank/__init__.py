"""The sewer flow credit bank (Binghamton-Johnson City I/I offset program) on one SQLite file.

The journal is hash-chained and :meth:`Ledger.verify` audits it, but a consistent rewrite of the whole
chain by someone with write access to the file can only be detected against a head hash kept outside
the bank (:meth:`Ledger.head`; ``verify(expect_head=...)``): see :mod:`capacitysim.bank.ledger`.
"""

from capacitysim.bank.ledger import DEFAULT_DB, Ledger, book_down, book_up, default_actor

__all__ = ["DEFAULT_DB", "Ledger", "book_down", "book_up", "default_actor"]
