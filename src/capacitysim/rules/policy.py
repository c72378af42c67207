"""One type for every program policy (issue 27, item 3).

A program policy is capacitysim's reading where a regulation or the program is silent; it is never presented as
the rule. Before this type the policies came in about seven shapes (the bank's ``POLICIES`` dicts, the
``POLICY_FLAG`` texts of :mod:`capacitysim.rules.ii_offset`, :func:`capacitysim.rules.spdes.policy`, the
strings ``STORM_POLICY``, ``NOISE_POLICY``, ``CRS_POLICY``, the headroom's ``SEARCH_POLICIES``...); they stay where
they are, with their texts, and :mod:`capacitysim.workflows.policies` reads every one of them into a
:class:`Policy` (the catalogue the documents and ``docs/reference/policies.md`` are made from).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Policy:
    """A named program policy.

    Attributes
    ----------
    name : str
        Its name, as the documents and the texts cite it (``threshold_basis``, ``noise_floor``).
    value : object
        The value in force (a number, a word, or None when the policy is a rule of reading without one).
    text : str
        What it decides and why it is a reading, not the rule (the text the documents print).
    alternatives : tuple of dict
        The readings not taken: each ``{"value", "text"}``.
    citation : str or None
        The text of the regulation or program it reads (where it is silent).
    scope : str
        The workflow or program it belongs to (``capacity demonstration``, ``credit bank``...).
    where : str
        The Python name it is defined by (``capacitysim.rules.spdes.policy``).
    """

    name: str
    value: object
    text: str
    alternatives: tuple = ()
    citation: str | None = None
    scope: str = ""
    where: str = ""
    extra: dict = field(default_factory=dict, compare=False)

    @property
    def alternative(self) -> dict | None:
        """The first alternative (the shape of the bank's ``POLICIES``), or None."""
        return self.alternatives[0] if self.alternatives else None

    def to_dict(self) -> dict:
        """``{"name", "value", "text", "alternative", "citation"}`` (the envelope's ``policies`` entry)."""
        return {"name": self.name, "value": self.value, "text": self.text, "alternative": self.alternative,
                "citation": self.citation}

    @classmethod
    def from_record(cls, record: dict, *, scope: str = "", where: str = "", citation: str | None = None) -> "Policy":
        """A policy from the dict shape the documents already carry: ``name``, ``value``, ``text``,
        ``alternative`` (a dict, a list of dicts or absent), ``citation`` or ``status`` (kept in ``extra``)."""
        alt = record.get("alternative")
        alts = tuple(dict(a) for a in alt) if isinstance(alt, (list, tuple)) else ((dict(alt),) if alt else ())
        extra = {k: v for k, v in record.items() if k not in ("name", "value", "text", "alternative", "citation")}
        return cls(name=str(record["name"]), value=record.get("value"), text=str(record.get("text", "")),
                   alternatives=alts, citation=record.get("citation", citation), scope=scope, where=where,
                   extra=extra)
