"""A descriptor word as the engine takes and gives it (:mod:`descgen.model.engine`): what the
decoders read (:data:`WordInput`: an integer, a partly known :class:`KnownBits`, the word's bytes
or a ``bitstring.Bits``, through :func:`as_word`), what the encoders return (:class:`Word`, the
integer with its findings), and how every word, mask and value is written (:func:`hex_word`,
:func:`hex_bits`, :func:`show_value`, :func:`unit_word`)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Iterable, NamedTuple, TypeAlias

from ..core.errors import Finding, WordError

if TYPE_CHECKING:  # bitstring is imported where a Bits is made (Decoded.bits), never at import time
    from bitstring import Bits

__all__ = ["WordInput", "KnownBits", "Word", "code_word", "check_word", "as_word", "hex_word", "hex_bits", "show_value",
           "unit_word"]

#: What the decoders and validators take as a word: an unsigned integer of the word's width, a
#: :class:`KnownBits`, the word's bytes as it lies in memory (``bytes``, ``bytearray`` or
#: ``memoryview``: little-endian, exactly width / 8 of them), or a ``bitstring.Bits`` of exactly
#: the word's width (MSB first, bitstring's order: ``Bits.uint`` is the word). :func:`as_word`
#: reads the last two.
WordInput: TypeAlias = "int | KnownBits | bytes | bytearray | memoryview | Bits"


def code_word(word: str) -> str:
    """A word's name as its codes begin: ``SMEM``, ``WGMMA-SMEM`` (for ``wgmma_smem``)."""
    return word.upper().replace("_", "-")


class KnownBits(NamedTuple):
    """A word known only in part, as a compiler leaves it: ``mask`` has a 1 for every bit whose
    value is fixed (at compile time), ``value`` holds those bits (the others are 0).

    Every decoder and validator takes one wherever it takes a word: a field whose bits are all
    known is decoded and checked as usual; a field with an unknown bit has value None and is
    listed in :attr:`Decoded.unknown`; a reserved or constant field is still checked on its known
    bits; a rule that reads an unknown field is not checked (never guessed).
    """

    value: int
    mask: int

    def full(self, width: int) -> bool:
        """True when every bit of a ``width``-bit word is known."""
        return self.mask & ((1 << width) - 1) == (1 << width) - 1


def check_word(word: Any, width: int, what: str) -> None:
    """Raise :class:`WordError` unless ``word`` is an unsigned integer of at most ``width`` bits."""
    if isinstance(word, bool) or not isinstance(word, int) or not 0 <= word < (1 << width):
        raise WordError((Finding(f"{code_word(what)}-WORD-RANGE", "error", "word", word, f"0..{(1 << width) - 1:#x}",
                                 f"{'an' if what[0] in 'aeiou' else 'a'} {what} word is an unsigned {width}-bit "
                                 "integer", "§9.7.16.4"),))


def as_word(word: Any, width: int, what: str) -> int:
    """``word`` as the unsigned ``width``-bit integer a decoder reads (``what``: the word's name,
    ``idesc``, ``smem``..., for the error's code).

    - ``bytes``, ``bytearray``, ``memoryview``: the word as it lies in memory, **little-endian**
      (a word copied from the device or from a host array: byte 0 holds bits 0-7), exactly
      ``width // 8`` bytes; ``int.from_bytes(data, "little")``.
    - ``bitstring.Bits`` (or ``BitArray``): exactly ``width`` bits, MSB first as bitstring writes
      them (index 0 is PTX bit ``width - 1``); ``Bits.uint``. bitstring is not imported here: a
      Bits exists only where its caller imported it.
    - an ``int``: returned as it is, once checked.

    Raises:
        WordError: ``<WORD>-WORD-RANGE`` (field ``word``): bytes or Bits of another length (the
            message names the length given and the one allowed), or anything else that is not
            an unsigned ``width``-bit integer.
    """
    article = "an" if what[0] in "aeiou" else "a"
    if isinstance(word, (bytes, bytearray, memoryview)):
        data = bytes(word)
        if len(data) != width // 8:
            raise _length_error(data, what, width, f"{width // 8} bytes",
                                f"{len(data)} bytes given: {article} {what} word is {width // 8} bytes, little-endian "
                                "(as in memory)")
        return int.from_bytes(data, "little")
    bitstring = sys.modules.get("bitstring")
    if bitstring is not None and isinstance(word, bitstring.Bits):
        if len(word) != width:
            raise _length_error(bitstring.Bits(word), what, width, f"a Bits of length {width}",  # (a BitArray: frozen)
                                f"a Bits of length {len(word)} given: {article} {what} word is {width} bits")
        value: int = word.uint
        return value
    check_word(word, width, what)
    return int(word)


def _length_error(word: Any, what: str, width: int, allowed: str, rule: str) -> WordError:
    """The WORD-RANGE error of bytes or Bits of the wrong length (``word``: an immutable copy,
    the finding's value)."""
    return WordError((Finding(f"{code_word(what)}-WORD-RANGE", "error", "word", word,
                              f"{allowed} (or an unsigned {width}-bit integer)", rule, "§9.7.16.4"),))


def hex_word(word: int, width: int) -> str:
    """``0x08400010`` (32-bit) / ``0xc000401000010800`` (64-bit): zero-padded to the width."""
    return f"{word:#0{width // 4 + 2}x}"


def hex_bits(value: int, nbits: int) -> str:
    """``value`` as hex zero-padded to ``nbits`` bits (rounded up to whole digits), e.g. an N-bit mask."""
    return f"0x{value:0{max(1, (nbits + 3) // 4)}x}"


def show_value(value: Any, fmt: str = "") -> str:
    """A field value as every text form prints it (key fields, the scanner, plain output, tables):
    ``?`` when unknown (a run-time field, an unknown code), ``true``/``false`` for a flag, ``fmt``
    for an integer (``"#x"``)."""
    if value is None:
        return "?"
    if isinstance(value, bool):
        return "true" if value else "false"
    return format(value, fmt) if fmt and isinstance(value, int) else str(value)


def unit_word(value: Any, unit: str) -> str:
    """``unit`` agreeing with ``value``: ``1 column``, ``2 columns``, ``1 mask bit``; units that are
    not a plural noun (``of the warpgroup (...)``) and non-numeric values keep it as written."""
    if value == 1 and value.__class__ is int and unit.endswith("s") and not unit.endswith("ss"):
        return unit[:-1]
    return unit


class Word(int):
    """An encoded word: the integer the bits ask for, with the :class:`Finding` records the rules
    reported in ``.findings`` (an empty tuple for a clean word). Every ``encode_*`` returns one.

    With checks on, ``.findings`` holds the warnings and notes the rules report for the word
    (exactly what ``validate_*`` of the word with the same context reports); ``encode_*(...,
    check=False)`` also attaches the errors it was encoded despite. A Word is an ``int`` in every
    other way: arithmetic on it gives plain ints, and ``hex()``, ``==``, JSON and pickling see
    the integer.
    """

    findings: tuple[Finding, ...] = ()

    def __new__(cls, value: int, findings: Iterable[Finding] = ()) -> "Word":
        self = super().__new__(cls, value)
        if findings:
            self.findings = tuple(findings)
        return self
