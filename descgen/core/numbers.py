"""How descgen reads an integer typed or pasted by a person: decimal, ``0x`` hex or ``0b`` binary,
``_`` separators, C suffixes; and the one rule for a descriptor word pasted as hex without ``0x``
(the command line and batch mode both read words through :func:`parse_uint`).

The rule for words (``words=True``), documented once, here and in ``descgen --help``:

- ``0x``/``0b`` mean what they say; a C suffix (``u``, ``ul``, ``ull``...) is dropped;
- digits that are not a decimal (``08400a10``, ``c000401000010800``) are hex;
- a token of exactly 8 or 16 digits (``08400010``, ``10400010``, ``4000404000010040``: what
  ``printf("%08x")``, ``%016llx`` and debuggers print) is hex: a descriptor word is almost never
  written that way in decimal (a 32-bit idesc has 9-10 decimal digits, a 64-bit shared memory
  descriptor with a swizzle mode set 19-20);
- anything else is decimal: ``138412048``. A decimal that could still be pasted hex (a leading
  zero, ``0400``) is read as decimal, with a note.

Each reading that is not the plain one comes back with a note saying which reading was taken.
"""

from __future__ import annotations

import re

__all__ = ["parse_uint", "HEX_WORD_DIGITS", "INTEGER_FORMATS"]

_DIGITS = {"0x": ("0123456789abcdef", 16, "hex"), "0b": ("01", 2, "binary")}
#: How an integer may be written, for messages.
INTEGER_FORMATS = "decimal, 0x hex or 0b binary, '_' separators and C suffixes u, l, ul, ull allowed"
#: C integer suffixes, as descgen's own --format c/cpp writes them (0x08400010u, 0x...ull): any case.
_C_SUFFIX = re.compile(r"(?<=[0-9a-f_])(?:u(?:ll|l)?|(?:ll|l)u?)$")
#: Digit counts of a 32- or 64-bit word printed as hex without 0x (printf("%08x"), ``%016llx``, a debugger).
HEX_WORD_DIGITS = (8, 16)


def parse_uint(text: str, *, words: bool = False) -> tuple[int, str | None]:
    """Parse ``1234``, ``0x4d2``, ``0b1101_0010``, ``0x0840_0010``, ``0x08400010u``; return
    ``(value, note)`` or raise ValueError with the reason (negative numbers say so).

    With ``words`` (a descriptor word, likely pasted), hex without ``0x`` is read by the module's
    rule: hex digits that are no decimal, or a token of exactly 8 or 16 digits, are hex; a
    decimal with a leading zero is decimal; either comes with ``note``, None otherwise.
    """
    shown = text.strip()
    s = _C_SUFFIX.sub("", shown.lower())
    sign = s[:1] if s[:1] in "-+" else ""
    body = s[len(sign):]
    prefix = body[:2] if body[:2] in _DIGITS else ""
    digits, base, _ = _DIGITS.get(prefix, ("0123456789", 10, "decimal"))
    stripped = body[len(prefix):].replace("_", "")
    hex_only = not prefix and bool(stripped) and all(c in _DIGITS["0x"][0] for c in stripped)
    number = bool(stripped) and all(c in digits for c in stripped)
    if sign:
        if sign == "-" and (number or hex_only):
            raise ValueError(f"{shown!r} is negative; descriptor values are unsigned")
        raise ValueError(f"{shown!r} is not an unsigned integer ({INTEGER_FORMATS})")
    if not number:
        if not hex_only:
            raise ValueError(f"{shown!r} is not an integer ({INTEGER_FORMATS})")
        if not words:
            raise ValueError(f"{shown!r} is not an integer ({INTEGER_FORMATS}); did you mean 0x{stripped}?")
        return int(stripped, 16), f"{shown!r} is not a decimal number: read as hex 0x{stripped}"
    if words and base == 10:
        if len(stripped) in HEX_WORD_DIGITS:
            value, decimal = int(stripped, 16), int(stripped)
            return value, (f"{shown!r} read as hex 0x{stripped} ({len(stripped)} digits, a word as printf and "
                           f"debuggers print it; for the decimal {decimal}, write {decimal:#x})")
        if len(stripped) > 1 and stripped[0] == "0":
            value = int(stripped)
            return value, f"{shown!r} read as decimal {value} ({value:#x}); did you mean 0x{stripped}?"
    return int(stripped, base), None
