"""A decoded word (:mod:`descgen.model.engine` makes it): :class:`Decoded`, its fields
(:class:`DecodedField`), and its bits as ``bitstring.Bits``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator

from ..core.errors import Finding, HasFindings
from .table_types import VALUE_TYPES
from .word import hex_word

if TYPE_CHECKING:  # bitstring is imported where a Bits is made (Decoded.bits), never at import time
    from bitstring import Bits

__all__ = ["DecodedField", "Decoded"]


@dataclass(frozen=True, slots=True)
class DecodedField:
    """One field of a decoded word.

    Attributes:
        name, bits, lo, hi: the field and its bit range (PTX numbering, LSB = 0).
        raw: the field's bits as an unsigned integer.
        value: the logical value (bytes, M, N, a count, a member name, a bool); None for an
            unknown enum code (see ``note``).
        unit: unit of ``value`` (``bytes``, ``columns``, ``rows``...), or ``""``.
        type: ``uint``, ``flag``, ``enum``, ``reserved`` or ``constant``.
        description, source: the spec's wording and citation.
        note: e.g. ``unknown code 3``.
    """

    name: str
    bits: str
    lo: int
    hi: int
    raw: int
    value: Any
    unit: str
    type: str
    description: str
    source: str
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "bits": self.bits,
            "raw": self.raw,
            "value": self.value,
            "unit": self.unit,
            "type": self.type,
            "description": self.description,
            "source": self.source,
            **({"note": self.note} if self.note else {}),
        }


@dataclass(frozen=True, slots=True)
class Decoded(HasFindings):
    """A decoded descriptor word.

    Attributes:
        word: the word (an unsigned 32- or 64-bit integer).
        width: 32 or 64.
        descriptor: ``idesc``, ``smem`` or ``zcm``.
        layout: the layout (table) used, e.g. ``idesc_dense`` (Table 42).
        kind: the MMA kind it was decoded under (idesc), else None.
        fields: every field, in bit order, tiling the word.
        findings: reserved bits set, wrong constants, unknown codes, out-of-range values.
        derived: values that follow from the fields (e.g. the MMA's K), by name.
        known: the mask of the bits known (-1: all of them; see :class:`descgen.KnownBits`); unknown bits
            of ``word`` are 0.
        unknown: the fields with an unknown bit (value None), in bit order.
    """

    word: int
    width: int
    descriptor: str
    layout: str
    kind: str | None
    fields: tuple[DecodedField, ...]
    findings: tuple[Finding, ...]
    derived: tuple[tuple[str, Any, str], ...] = ()
    known: int = -1
    unknown: tuple[str, ...] = ()
    #: :meth:`values` (given by :meth:`Plan.result`, else computed once): not a field of the
    #: result (not compared, not shown).
    _values: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    @property
    def complete(self) -> bool:
        """True when every bit of the word is known."""
        return not self.unknown and (self.known == -1 or self.known == (1 << self.width) - 1)

    def __getitem__(self, name: str) -> DecodedField:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)

    def __iter__(self) -> Iterator[DecodedField]:
        return iter(self.fields)

    def value(self, name: str) -> Any:
        """The logical value of field ``name`` (or of a derived value such as ``k``)."""
        for dname, dvalue, _ in self.derived:
            if dname == name:
                return dvalue
        return self[name].value

    def values(self) -> dict[str, Any]:
        """Logical values of the value fields (not reserved/constant), by name (a new dict)."""
        values = self._values
        if values is None:
            values = {f.name: f.value for f in self.fields if f.type in VALUE_TYPES}
            object.__setattr__(self, "_values", values)
        return dict(values)

    @property
    def hex(self) -> str:
        return hex_word(self.word, self.width)

    @property
    def bits(self) -> Bits:
        """The word as a ``bitstring.Bits`` of :attr:`width` bits (32 or 64), MSB first as
        bitstring orders bits: ``bits.uint == word`` and ``bits.hex`` is :attr:`hex` without
        ``0x``.

        PTX numbers bits from the LSB (bit 0); bitstring indexes from the MSB. PTX bit ``b`` is
        ``bits[width - 1 - b]``, and a field of PTX bits ``lo..hi`` is the slice
        ``bits[width - 1 - hi : width - lo]`` (:meth:`field_bits`): ``bits[0]`` is bit 31 of an
        idesc (bit 63 of a 64-bit word), ``bits[-1]`` bit 0. Bits of a partly known word that
        are not known are 0 here (:attr:`known` says which are).

        A new Bits at each call; bitstring is imported on first use (``import descgen`` does not
        import it).
        """
        from bitstring import Bits

        return Bits(uint=self.word, length=self.width)

    def field_bits(self, name: str) -> Bits:
        """The bits of field ``name`` as a ``bitstring.Bits`` of the field's width, MSB first
        (``field_bits(name).uint == self[name].raw``): the slice
        ``bits[width - 1 - hi : width - lo]`` of :attr:`bits` for PTX bits ``lo..hi``.

        Raises:
            KeyError: no field ``name`` (derived values such as ``k`` have no bits).
        """
        f = self[name]
        return self.bits[self.width - 1 - f.hi: self.width - f.lo]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form; the word is a hex string (TOML/JSON consumers may not hold 64 bits)."""
        return {
            "descriptor": self.descriptor,
            "layout": self.layout,
            "kind": self.kind,
            "word": self.hex,
            "width": self.width,
            "ok": self.ok,
            "fields": [f.as_dict() for f in self.fields],
            "derived": {name: {"value": value, "unit": unit} for name, value, unit in self.derived},
            "findings": [f.as_dict() for f in self.findings],
            **({"known": hex_word(self.known, self.width), "unknown": list(self.unknown)} if self.known != -1 else {}),
        }
