"""Known bits: transfer functions on :class:`descgen.model.engine.KnownBits` (``mask`` = bits fixed at
compile time, ``value`` = those bits), the first of the two abstract domains of
:mod:`descgen.ptx.dataflow` (the other is :mod:`descgen.ptx.ranges`).

:func:`kb_add`, :func:`kb_sub` (carry aware, as LLVM's ``KnownBits::computeForAddSub``),
:func:`kb_and`, :func:`kb_or`, :func:`kb_xor`, :func:`kb_not`, :func:`kb_shl`, :func:`kb_shr`,
:func:`kb_bfe`, :func:`kb_bfi`, :func:`kb_mul`, :func:`kb_prmt`, :func:`kb_ext` (zero/sign extension
and truncation), :func:`kb_concat` / :func:`kb_slice` (vector packing), :func:`kb_meet` (the bits
two values agree on: the lattice's join of "what may happen"). Every width is in bits (1..64);
results are masked to the width. The lattice has finite height (a mask only loses bits), so a
fixed point over it needs no widening.

Soundness: for every concrete input consistent with the inputs' known bits, the concrete result
agrees with the result's known bits (``tests/test_dataflow.py`` checks each with hypothesis).
"""

from __future__ import annotations

from typing import Iterable

from ..model.engine import KnownBits

__all__ = ["kb_const", "kb_unknown", "kb_meet", "kb_add", "kb_sub", "kb_and", "kb_or", "kb_xor", "kb_not", "kb_shl",
           "kb_shr", "kb_bfe", "kb_bfi", "kb_mul", "kb_prmt", "kb_ext", "kb_concat", "kb_slice", "mask_of"]


def mask_of(width: int) -> int:
    """``2**width - 1``."""
    return (1 << width) - 1


_m = mask_of


def kb_const(value: int, width: int) -> KnownBits:
    """A constant ``width``-bit word (negative values wrap)."""
    return KnownBits(value & _m(width), _m(width))


def kb_unknown() -> KnownBits:
    """No bit known."""
    return KnownBits(0, 0)


def kb_meet(a: KnownBits, b: KnownBits) -> KnownBits:
    """The bits ``a`` and ``b`` both know with equal values (either value may occur)."""
    mask = a.mask & b.mask & ~(a.value ^ b.value)
    return KnownBits(a.value & mask, mask)


def kb_and(a: KnownBits, b: KnownBits, width: int) -> KnownBits:
    """Bitwise and: a bit is known 0 if either is known 0, known 1 if both are."""
    zero = (a.mask & ~a.value) | (b.mask & ~b.value)
    one = a.value & b.value & a.mask & b.mask
    return KnownBits(one & _m(width), (zero | one) & _m(width))


def kb_or(a: KnownBits, b: KnownBits, width: int) -> KnownBits:
    """Bitwise or: a bit is known 1 if either is known 1, known 0 if both are."""
    one = (a.value & a.mask) | (b.value & b.mask)
    zero = a.mask & ~a.value & b.mask & ~b.value
    return KnownBits(one & _m(width), (zero | one) & _m(width))


def kb_xor(a: KnownBits, b: KnownBits, width: int) -> KnownBits:
    """Bitwise xor: known where both are known."""
    mask = a.mask & b.mask & _m(width)
    return KnownBits((a.value ^ b.value) & mask, mask)


def kb_not(a: KnownBits, width: int) -> KnownBits:
    """Bitwise not."""
    mask = a.mask & _m(width)
    return KnownBits(~a.value & mask, mask)


def _add(a: KnownBits, b: KnownBits, width: int, carry: int) -> KnownBits:
    # LLVM KnownBits::computeForAddSub with a known carry-in.
    m = _m(width)
    a_zero, a_one = a.mask & ~a.value & m, a.value & a.mask & m
    b_zero, b_one = b.mask & ~b.value & m, b.value & b.mask & m
    sum_zero = ((~a_zero & m) + (~b_zero & m) + carry) & m  # largest possible operands
    sum_one = (a_one + b_one + carry) & m                   # smallest possible operands
    carry_zero = ~(sum_zero ^ a_zero ^ b_zero) & m
    carry_one = (sum_one ^ a_one ^ b_one) & m
    known = (a_zero | a_one) & (b_zero | b_one) & (carry_zero | carry_one)
    return KnownBits(sum_one & known, known)


def kb_add(a: KnownBits, b: KnownBits, width: int) -> KnownBits:
    """``a + b`` modulo 2**width, carries followed bit by bit (a bit after an unknown carry is unknown)."""
    return _add(a, b, width, 0)


def kb_sub(a: KnownBits, b: KnownBits, width: int) -> KnownBits:
    """``a - b`` modulo 2**width (``a + ~b + 1``)."""
    return _add(a, kb_not(b, width), width, 1)


def kb_shl(a: KnownBits, n: int, width: int) -> KnownBits:
    """``a << n`` (a constant ``n``; PTX clamps shifts of ``width`` or more to 0)."""
    m = _m(width)
    if n >= width:
        return KnownBits(0, m)
    return KnownBits((a.value << n) & m, ((a.mask << n) | _m(n)) & m)


def kb_shr(a: KnownBits, n: int, width: int, signed: bool = False) -> KnownBits:
    """``a >> n`` (a constant ``n``), logical or arithmetic (``signed``: the sign bit fills)."""
    m = _m(width)
    n = min(n, width)
    value, mask = (a.value & m) >> n, (a.mask & m) >> n
    high = m & ~_m(width - n)
    sign = 1 << (width - 1)
    if not signed:
        return KnownBits(value, mask | high)
    if a.mask & sign:
        return KnownBits(value | (high if a.value & sign else 0), mask | high)
    return KnownBits(value & ~high, mask & ~high)


def kb_ext(a: KnownBits, src: int, dst: int, signed: bool = False) -> KnownBits:
    """``a`` (a ``src``-bit word) as a ``dst``-bit word: truncated, zero- or sign-extended."""
    if dst <= src:
        return KnownBits(a.value & _m(dst), a.mask & _m(dst))
    value, mask = a.value & _m(src), a.mask & _m(src)
    high = _m(dst) & ~_m(src)
    if not signed:
        return KnownBits(value, mask | high)
    sign = 1 << (src - 1)
    if mask & sign:
        return KnownBits(value | (high if value & sign else 0), mask | high)
    return KnownBits(value, mask)


def kb_bfe(a: KnownBits, pos: int, length: int, width: int, signed: bool = False) -> KnownBits:
    """``bfe``: ``length`` bits of ``a`` from bit ``pos`` (constants 0..255), zero- or
    sign-extended to ``width`` bits (PTX ISA §9.7.1 bfe: bits past the msb repeat it for ``.s``,
    are 0 for ``.u``)."""
    m = _m(width)
    if length == 0:
        return KnownBits(0, m)
    out_v = out_m = 0
    msb = min(pos + length - 1, width - 1)
    for i in range(width):
        src = pos + i if i < length else None
        if src is None:  # above the field: 0 or the field's sign
            if not signed:
                out_m |= 1 << i
                continue
            src = msb
        if src >= width:
            if not signed:
                out_m |= 1 << i
                continue
            src = width - 1
        if a.mask >> src & 1:
            out_m |= 1 << i
            out_v |= (a.value >> src & 1) << i
    return KnownBits(out_v, out_m)


def kb_bfi(a: KnownBits, b: KnownBits, pos: int, length: int, width: int) -> KnownBits:
    """``bfi``: ``b`` with bits ``pos .. pos+length-1`` replaced by the low bits of ``a``."""
    m = _m(width)
    if length == 0 or pos >= width:
        return KnownBits(b.value & m, b.mask & m)
    field_m = (_m(length) << pos) & m
    ins = kb_shl(a, pos, width)
    return KnownBits(((b.value & ~field_m) | (ins.value & field_m)) & m,
                     ((b.mask & ~field_m) | (ins.mask & field_m)) & m)


def _trailing_known(a: KnownBits, width: int) -> int:
    n = 0
    while n < width and a.mask >> n & 1:
        n += 1
    return n


def _trailing_zeros(a: KnownBits, width: int) -> int:
    n = 0
    while n < width and a.mask >> n & 1 and not a.value >> n & 1:
        n += 1
    return n


def kb_mul(a: KnownBits, b: KnownBits, width: int) -> KnownBits:
    """``a * b`` modulo 2**width: exact when both are known; by a power of two, a shift; else the
    low bits where both operands' low bits are known, and the known trailing zeros."""
    m = _m(width)
    if a.mask & m == m and b.mask & m == m:
        return kb_const(a.value * b.value, width)
    for x, y in ((a, b), (b, a)):
        if y.mask & m == m and y.value & m and (y.value & m) & ((y.value & m) - 1) == 0:
            return kb_shl(x, (y.value & m).bit_length() - 1, width)
    low = min(_trailing_known(a, width), _trailing_known(b, width))
    zeros = min(width, _trailing_zeros(a, width) + _trailing_zeros(b, width))
    mask = _m(max(low, zeros))
    return KnownBits((a.value * b.value) & _m(low), mask)


def kb_prmt(a: KnownBits, b: KnownBits, selector: int) -> KnownBits:
    """``prmt.b32`` (default mode) with a constant selector: each result byte is one of the 8
    bytes of ``{b, a}`` (a = bytes 0-3), or its sign (bit 3 of the selector nibble)."""
    src_v = (a.value & 0xFFFFFFFF) | (b.value & 0xFFFFFFFF) << 32
    src_m = (a.mask & 0xFFFFFFFF) | (b.mask & 0xFFFFFFFF) << 32
    v = mk = 0
    for i in range(4):
        nib = selector >> (4 * i) & 0xF
        byte = nib & 7
        if nib & 8:
            bit = byte * 8 + 7
            if src_m >> bit & 1:
                mk |= 0xFF << (8 * i)
                v |= (0xFF if src_v >> bit & 1 else 0) << (8 * i)
        else:
            mk |= (src_m >> (8 * byte) & 0xFF) << (8 * i)
            v |= (src_v >> (8 * byte) & 0xFF) << (8 * i)
    return KnownBits(v & mk, mk)


def kb_concat(parts: Iterable[KnownBits], width: int) -> KnownBits:
    """Vector packing ``mov.b64 %rd, {lo, hi}``: ``parts`` of ``width`` bits each, the first lowest."""
    v = mk = 0
    for i, p in enumerate(parts):
        v |= (p.value & _m(width)) << (i * width)
        mk |= (p.mask & _m(width)) << (i * width)
    return KnownBits(v, mk)


def kb_slice(a: KnownBits, index: int, width: int) -> KnownBits:
    """Vector unpacking ``mov.b64 {lo, hi}, %rd``: element ``index`` of ``width`` bits."""
    return KnownBits(a.value >> (index * width) & _m(width), a.mask >> (index * width) & _m(width))
