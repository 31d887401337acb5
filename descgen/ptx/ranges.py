"""Value ranges: unsigned intervals ``(lo, hi)`` of a ``width``-bit register, the second abstract
domain of :mod:`descgen.ptx.dataflow` beside known bits (:mod:`descgen.ptx.knownbits`).

Known bits alone cannot tell that ``start + (stage << 10)`` leaves LBO alone when the stage counter
wraps below the stage count: every bit of a loop-carried counter is unknown. An interval can
(``stage`` in ``[0, 7]``, so ``stage << 10 < 2**13``), and the two domains refine each other
(:func:`bits_of`: the bits every value of an interval shares; :func:`of_bits`: the interval a
known-bits value allows).

Every function returns an interval that contains every concrete result for concrete inputs
inside the input intervals (``tests/test_dataflow.py`` checks each with hypothesis); where the
result could wrap around 2**width, it is the full range ``(0, 2**width - 1)``. An interval is
never empty. Widths are in bits (1..64).
"""

from __future__ import annotations

from ..model.engine import KnownBits

__all__ = ["Range", "full", "const", "join", "meet", "of_bits", "bits_of", "add", "sub", "mul", "mul_hi", "shl",
           "shr", "and_", "or_", "xor", "ext", "bfe", "rem", "div", "min_", "max_", "refine", "to_signed"]

#: ``(lo, hi)``, unsigned, ``lo <= hi``.
Range = tuple[int, int]


def full(width: int) -> Range:
    """Every ``width``-bit value."""
    return (0, (1 << width) - 1)


def const(value: int, width: int) -> Range:
    """One value (negative values wrap)."""
    v = value & ((1 << width) - 1)
    return (v, v)


def join(a: Range, b: Range) -> Range:
    """The smallest interval holding both (either value may occur)."""
    return (min(a[0], b[0]), max(a[1], b[1]))


def meet(a: Range, b: Range) -> Range | None:
    """The values in both, or None if none is (a contradiction: that path cannot run)."""
    lo, hi = max(a[0], b[0]), min(a[1], b[1])
    return (lo, hi) if lo <= hi else None


def of_bits(bits: KnownBits, width: int) -> Range:
    """The interval a known-bits value allows: unknown bits all 0 to all 1."""
    m = (1 << width) - 1
    known = bits.value & bits.mask & m
    return (known, known | (~bits.mask & m))


def bits_of(r: Range, width: int) -> KnownBits:
    """The bits every value of ``r`` shares: those above the highest bit where ``lo`` and ``hi``
    differ (between two values every such bit is constant)."""
    m = (1 << width) - 1
    diff = (r[0] ^ r[1]) & m
    mask = m & ~((1 << diff.bit_length()) - 1)
    return KnownBits(r[0] & mask, mask)


def _fit(lo: int, hi: int, width: int) -> Range:
    return (lo, hi) if 0 <= lo and hi < 1 << width else full(width)


def add(a: Range, b: Range, width: int) -> Range:
    """``a + b`` modulo 2**width."""
    return _fit(a[0] + b[0], a[1] + b[1], width)


def sub(a: Range, b: Range, width: int) -> Range:
    """``a - b`` modulo 2**width."""
    return _fit(a[0] - b[1], a[1] - b[0], width)


def mul(a: Range, b: Range, width: int) -> Range:
    """``a * b`` modulo 2**width (``mul.lo``; ``mul.wide`` with ``width`` doubled)."""
    return _fit(a[0] * b[0], a[1] * b[1], width)


def mul_hi(a: Range, b: Range, width: int) -> Range:
    """``(a * b) >> width`` (``mul.hi.u``)."""
    return (a[0] * b[0] >> width, a[1] * b[1] >> width)


def shl(a: Range, n: int, width: int) -> Range:
    """``a << n`` (a constant ``n``; PTX clamps shifts of ``width`` or more to 0)."""
    if n >= width:
        return (0, 0)
    return _fit(a[0] << n, a[1] << n, width)


def shr(a: Range, n: int, width: int, signed: bool = False) -> Range:
    """``a >> n`` (a constant ``n``), logical, or arithmetic for ``signed`` (exact only while the
    sign bit is 0)."""
    n = min(n, width)
    if signed and a[1] >> (width - 1):
        return full(width)
    return (a[0] >> n, a[1] >> n)


def _ones_up_to(x: int) -> int:
    """The smallest ``2**k - 1`` at or above ``x``."""
    return (1 << x.bit_length()) - 1


def and_(a: Range, b: Range, width: int) -> Range:
    """``a & b``: at most the smaller maximum."""
    return (0, min(a[1], b[1]))


def or_(a: Range, b: Range, width: int) -> Range:
    """``a | b``: at least the larger minimum, at most all ones up to the larger maximum."""
    return (max(a[0], b[0]), _ones_up_to(max(a[1], b[1])))


def xor(a: Range, b: Range, width: int) -> Range:
    """``a ^ b``: at most all ones up to the larger maximum."""
    return (0, _ones_up_to(max(a[1], b[1])))


def to_signed(r: Range, width: int) -> tuple[int, int] | None:
    """The interval as signed values, or None when it holds values of both signs' encodings
    around the sign bit (``0x7FFF...`` and ``0x8000...``), which is not one signed interval."""
    half = 1 << (width - 1)
    if r[1] < half:
        return r
    if r[0] >= half:
        return (r[0] - (1 << width), r[1] - (1 << width))
    return None


def ext(a: Range, src: int, dst: int, signed: bool = False) -> Range:
    """``a`` (a ``src``-bit register) as ``dst`` bits: truncated, zero- or sign-extended."""
    if dst <= src:
        return a if a[1] < 1 << dst else full(dst)
    if not signed:
        return a
    s = to_signed(a, src)
    if s is None:
        return full(dst)
    return (s[0] & ((1 << dst) - 1), s[1] & ((1 << dst) - 1)) if s[0] >= 0 or s[1] < 0 else full(dst)


def bfe(a: Range, pos: int, length: int, width: int) -> Range:
    """``bfe.u``: ``length`` bits of ``a`` from ``pos``, zero-extended."""
    if length == 0 or pos >= width:
        return (0, 0)
    top = (1 << min(length, width - pos)) - 1
    if a[1] >> pos <= top:
        return (a[0] >> pos, a[1] >> pos)
    return (0, top)


def rem(a: Range, b: Range, width: int) -> Range | None:
    """``rem.u``: below the divisor; None when the divisor may be 0 (the result is then
    unspecified, PTX ISA §9.7.1.9)."""
    if b[0] == 0:
        return None
    if a[1] < b[0]:
        return a
    return (0, min(a[1], b[1] - 1))


def div(a: Range, b: Range, width: int) -> Range | None:
    """``div.u``; None when the divisor may be 0."""
    if b[0] == 0:
        return None
    return (a[0] // b[1], a[1] // b[0])


def min_(a: Range, b: Range, width: int) -> Range:
    """``min.u``."""
    return (min(a[0], b[0]), min(a[1], b[1]))


def max_(a: Range, b: Range, width: int) -> Range:
    """``max.u``."""
    return (max(a[0], b[0]), max(a[1], b[1]))


def refine(a: Range, cmp: str, c: Range, width: int, signed: bool) -> Range | None:
    """``a`` where ``a CMP c`` holds (``cmp``: PTX's ``eq ne lt le gt ge``, the unsigned ``lo ls hi
    hs``), ``c`` an interval; None when it never holds. A signed compare refines only intervals
    that do not cross the sign bit; anything not understood returns ``a``."""
    if signed:
        sa, sc = to_signed(a, width), to_signed(c, width)
        if sa is None or sc is None:
            return a
        got = _refine(sa, cmp, sc)
        if got is None:
            return None
        return (got[0] & ((1 << width) - 1), got[1] & ((1 << width) - 1))
    return _refine(a, {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}.get(cmp, cmp), c)


def _refine(a: tuple[int, int], cmp: str, c: tuple[int, int]) -> tuple[int, int] | None:
    lo, hi = a
    if cmp == "eq":
        lo, hi = max(lo, c[0]), min(hi, c[1])
    elif cmp == "ne":
        if c[0] == c[1]:
            if lo == c[0]:
                lo += 1
            if hi == c[0]:
                hi -= 1
    elif cmp == "lt":
        hi = min(hi, c[1] - 1)
    elif cmp == "le":
        hi = min(hi, c[1])
    elif cmp == "gt":
        lo = max(lo, c[0] + 1)
    elif cmp == "ge":
        lo = max(lo, c[0])
    return (lo, hi) if lo <= hi else None
