"""The sewer flow credit bank (Binghamton-Johnson City I/I offset program) on one SQLite file."""

from capacitysim.bank.ledger import DEFAULT_DB, Ledger, book_down, book_up, default_actor

__all__ = ["DEFAULT_DB", "Ledger", "book_down", "book_up", "default_actor"]
