"""What is known of a register or operand at one point of a PTX function (:class:`Value`): its
known bits (:mod:`descgen.ptx.knownbits`) and its value range (:mod:`descgen.ptx.ranges`), each
refined by the other (the reduced product, :func:`reduced_value`); the leaves' facts (a shared
memory symbol's address is below 2**18, special registers' bounds: E38, E42); and the immediates
ptxas does not take as written (:class:`Immediate`, E48).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ..model.engine import KnownBits
from . import ranges as R
from .knownbits import kb_const, kb_meet, mask_of

__all__ = ["Value", "Immediate", "reduced_value", "unknown_value", "const_value", "join_values", "SHARED_LIMIT_BITS",
           "SPECIAL_RANGES"]

#: E38: a shared memory symbol's address is below 2**18 (sm_100 has 228 KB of shared memory per
#: SM; shared-window addresses of a CTA are offsets into it), so its bits 18 and up are known 0.
SHARED_LIMIT_BITS = 18

#: Special registers with architectural bounds (PTX ISA §10; CUDA's limits: 1024 threads per
#: CTA, (1024, 1024, 64) per dimension, 2**31 - 1 / 65535 CTAs per grid dimension, 32 lanes, at
#: most 64 warps per SM, at most 16 CTAs per cluster). Inclusive (lo, hi).
SPECIAL_RANGES: dict[str, tuple[int, int]] = {
    "%laneid": (0, 31), "%warpid": (0, 63), "%nwarpid": (1, 64),
    "%tid.x": (0, 1023), "%tid.y": (0, 1023), "%tid.z": (0, 63),
    "%ntid.x": (1, 1024), "%ntid.y": (1, 1024), "%ntid.z": (1, 64),
    "%ctaid.x": (0, (1 << 31) - 2), "%ctaid.y": (0, 65534), "%ctaid.z": (0, 65534),
    "%nctaid.x": (1, (1 << 31) - 1), "%nctaid.y": (1, 65535), "%nctaid.z": (1, 65535),
    "%cluster_ctarank": (0, 15), "%cluster_nctarank": (1, 16),
    "%cluster_ctaid.x": (0, 15), "%cluster_ctaid.y": (0, 15), "%cluster_ctaid.z": (0, 15),
    "%cluster_nctaid.x": (1, 16), "%cluster_nctaid.y": (1, 16), "%cluster_nctaid.z": (1, 16),
}


@dataclass(frozen=True, slots=True)
class Value:
    """What is known about a register or operand at one point.

    Attributes:
        bits: the known bits (:class:`KnownBits`), ``width`` bits wide.
        width: the width in bits (1..64).
        range: the unsigned interval ``(lo, hi)`` every value lies in (inclusive).
        why: why the unknown bits are unknown (empty when every bit is known): short phrases such
            as ``"shared memory address"``, ``"kernel parameter"``, ``"loaded from memory"``,
            ``"loop-carried"``, ``"several definitions"``, ``"special register %tid.x"``.
        line: the line of the one definition that reaches (else None).
        origin: that definition's opcode (``mov.b32``), ``"immediate"``, or None.
    """

    bits: KnownBits
    width: int
    range: tuple[int, int]
    why: frozenset[str] = frozenset()
    line: int | None = None
    origin: str | None = None

    @property
    def full(self) -> bool:
        return self.bits.mask & mask_of(self.width) == mask_of(self.width)


@dataclass(frozen=True, slots=True)
class Immediate:
    """An integer immediate a solve read that ptxas does not take as written (E48).

    Attributes:
        line: the statement's line.
        opcode: its opcode (``mov.b32``).
        text: the literal (as written when ptxas rejects it, else in hex: ``0x999912345678``).
        width: the bits of the operand it is written for.
        word: the low ``width`` bits ptxas keeps (what the solve read), or None when ptxas rejects
            the statement.
        why: for a rejected one, ptxas's reason (``"Constant overflow"``...); else empty.
    """

    line: int
    opcode: str
    text: str
    width: int
    word: int | None
    why: str = ""


def reduced_value(bits: KnownBits, width: int, rng: tuple[int, int] | None, why: frozenset[str] | set[str],
                  line: int | None = None, origin: str | None = None) -> Value:
    """A value with its two domains refined by each other (the reduced product:
    :func:`~descgen.ptx.ranges.bits_of` and :func:`~descgen.ptx.ranges.of_bits`, written out here
    because every definition's value passes through it)."""
    m = (1 << width) - 1
    mask = bits.mask & m
    known = bits.value & mask
    if rng is None:  # the range the bits allow (what the general case below gives for the full range)
        return Value(KnownBits(known, mask), width, (known, known | (~mask & m)),
                     _NO_WHY if mask == m else frozenset(why), line, origin)
    lo, hi = rng
    if lo > m:
        lo = m
    if hi > m:
        hi = m
    shared = m & ~((1 << ((lo ^ hi) & m).bit_length()) - 1)  # the bits every value in [lo, hi] shares
    known |= lo & shared & ~mask
    mask |= shared
    # the range meets what the bits allow (an empty meet: keep the range)
    blo, bhi = known, known | (~mask & m)
    nlo = blo if blo > lo else lo
    nhi = bhi if bhi < hi else hi
    if nlo <= nhi:
        lo, hi = nlo, nhi
    if mask == m:
        return Value(KnownBits(known, mask), width, (lo, hi), _NO_WHY, line, origin)
    return Value(KnownBits(known, mask), width, (lo, hi), why if isinstance(why, frozenset) else frozenset(why),
                 line, origin)


_NO_WHY: frozenset[str] = frozenset()


@functools.lru_cache(maxsize=1024)
def unknown_value(width: int, why: str, line: int | None = None, origin: str | None = None) -> Value:
    """Nothing known but ``why`` (cached: a Value is immutable, and few reasons recur)."""
    return Value(KnownBits(0, 0), width, R.full(width), frozenset((why,)), line, origin)


@functools.lru_cache(maxsize=4096)
def const_value(n: int, width: int, origin: str | None = "immediate") -> Value:
    """The constant ``n`` as ``width`` bits (cached)."""
    return Value(kb_const(n, width), width, R.const(n, width), frozenset(), None, origin)


def join_values(a: Value, b: Value) -> Value:
    """What holds of either value (the join of both domains)."""
    width = max(a.width, b.width)
    return Value(kb_meet(a.bits, b.bits), width, R.join(a.range, b.range), a.why | b.why)
