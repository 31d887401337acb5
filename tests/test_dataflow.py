"""descgen.ptx.knownbits: every known-bits transfer function agrees with concrete arithmetic (for
random concrete values consistent with the inputs' known bits, the concrete result has the
result's known bits), and E39 (a tcgen05.cp base offset without swizzle is a note)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from descgen.model.engine import KnownBits
from descgen.ptx.knownbits import (kb_add, kb_and, kb_bfe, kb_bfi, kb_concat, kb_ext, kb_meet, kb_mul, kb_not, kb_or,
                                  kb_prmt, kb_shl, kb_shr, kb_slice, kb_sub, kb_xor)
from descgen.ptx.scan import scan_ptx

WIDTHS = st.sampled_from([8, 16, 32, 64])


@st.composite
def abstract(draw, width):
    """(KnownBits, a concrete value consistent with it)."""
    m = (1 << width) - 1
    mask = draw(st.integers(0, m) | st.sampled_from([0, m, m & ~0xF, 0xFFFF & m]))
    concrete = draw(st.integers(0, m))
    value = concrete & mask
    return KnownBits(value, mask), concrete


def agrees(result: KnownBits, concrete: int, width: int) -> bool:
    m = (1 << width) - 1
    return result.value & ~result.mask == 0 and (concrete & m & result.mask) == result.value


def signed(x: int, w: int) -> int:
    return x - (1 << w) if x >> (w - 1) & 1 else x


@settings(max_examples=300)
@given(st.data(), WIDTHS)
def test_binary_ops_agree_with_concrete_arithmetic(data, w):
    (a, x), (b, y) = data.draw(abstract(w)), data.draw(abstract(w))
    m = (1 << w) - 1
    assert agrees(kb_add(a, b, w), (x + y) & m, w)
    assert agrees(kb_sub(a, b, w), (x - y) & m, w)
    assert agrees(kb_and(a, b, w), x & y, w)
    assert agrees(kb_or(a, b, w), x | y, w)
    assert agrees(kb_xor(a, b, w), x ^ y, w)
    assert agrees(kb_not(a, w), ~x & m, w)
    assert agrees(kb_mul(a, b, w), (x * y) & m, w)
    assert agrees(kb_meet(a, b), x, w) and agrees(kb_meet(a, b), y, w)


@settings(max_examples=300)
@given(st.data(), WIDTHS, st.integers(0, 70))
def test_shifts_and_extensions_agree(data, w, n):
    a, x = data.draw(abstract(w))
    m = (1 << w) - 1
    assert agrees(kb_shl(a, n, w), (x << n) & m if n < w else 0, w)
    assert agrees(kb_shr(a, n, w), x >> n if n < w else 0, w)
    assert agrees(kb_shr(a, n, w, signed=True), (signed(x, w) >> min(n, w)) & m, w)
    for dst in (8, 16, 32, 64):
        assert agrees(kb_ext(a, w, dst), x & ((1 << dst) - 1), dst)
        assert agrees(kb_ext(a, w, dst, signed=True), signed(x, w) & ((1 << dst) - 1), dst)
    k = data.draw(st.integers(0, 64))
    assert agrees(kb_mul(a, KnownBits(1 << min(k, w - 1), m), w), (x << min(k, w - 1)) & m, w)


@settings(max_examples=300)
@given(st.data(), st.sampled_from([32, 64]), st.integers(0, 80), st.integers(0, 80))
def test_bit_fields_agree(data, w, pos, length):
    (a, x), (b, y) = data.draw(abstract(w)), data.draw(abstract(w))
    m = (1 << w) - 1
    # bfe.u: bits past the msb are 0; bfe.s: they repeat the field's top bit (PTX ISA bfe)
    field = (x >> pos) & ((1 << length) - 1) if pos < w else 0
    assert agrees(kb_bfe(a, pos, length, w), field & m if length else 0, w)
    if length:
        top = min(pos + length - 1, w - 1)
        sign = x >> top & 1
        bits = [(x >> (pos + i) & 1) if pos + i <= top else sign for i in range(w)]
        assert agrees(kb_bfe(a, pos, length, w, signed=True), sum(b_ << i for i, b_ in enumerate(bits)), w)
    fmask = ((1 << length) - 1) << pos & m if pos < w else 0
    assert agrees(kb_bfi(a, b, pos, length, w), (y & ~fmask | (x << pos) & fmask) & m, w)


@settings(max_examples=200)
@given(st.data(), st.integers(0, 0xFFFF))
def test_prmt_and_vectors_agree(data, selector):
    (a, x), (b, y) = data.draw(abstract(32)), data.draw(abstract(32))
    src = x | y << 32
    out = 0
    for i in range(4):
        nib = selector >> (4 * i) & 0xF
        byte = src >> (8 * (nib & 7)) & 0xFF
        if nib & 8:
            byte = 0xFF if byte & 0x80 else 0
        out |= byte << (8 * i)
    assert agrees(kb_prmt(a, b, selector), out, 32)
    packed = kb_concat([a, b], 32)
    assert agrees(packed, x | y << 32, 64)
    assert kb_slice(packed, 0, 32) == a and kb_slice(packed, 1, 32) == b


def test_add_keeps_bits_above_a_stopped_carry():
    """CuTe's K step: a 14-bit start address + 2 may carry into bit 14 only; LBO above stays known."""
    low = KnownBits(0x00010000, 0xFFFFC000)
    out = kb_add(low, KnownBits(2, 0xFFFFFFFF), 32)
    assert out.mask == 0xFFFF8000 and out.value == 0x00010000


def test_e39_cp_base_offset_without_swizzle_is_a_note():
    word = 0x0008400800000040  # Triton's second scale factor copy: SBO 128 B, base offset 4, no swizzle
    r = scan_ptx(f".target sm_100a\ntcgen05.cp.cta_group::1.warpx4.32x128b [%r0], {word:#x};")
    assert [(f.code, f.severity) for f in r.findings] == [("SMEM-BASE-OFFSET-IGNORED", "info")]
    assert r.ok


# ---------------------------------------------------------------------------------------------
# Value ranges (E42): every concrete result of concrete inputs inside the input intervals lies in
# the result's interval.

from descgen.ptx import ranges as R  # noqa: E402


@st.composite
def _interval(draw, w):
    a, b = draw(st.integers(0, (1 << w) - 1)), draw(st.integers(0, (1 << w) - 1))
    lo, hi = min(a, b), max(a, b)
    return (lo, hi), draw(st.integers(lo, hi))


@settings(max_examples=400, deadline=None)
@given(st.data(), WIDTHS)
def test_ranges_hold_for_concrete_values(data, w):
    (ra, a), (rb, b) = data.draw(_interval(w)), data.draw(_interval(w))
    m = (1 << w) - 1
    n = data.draw(st.integers(0, w + 2))
    cases = [(R.add(ra, rb, w), (a + b) & m), (R.sub(ra, rb, w), (a - b) & m), (R.mul(ra, rb, w), (a * b) & m),
             (R.mul_hi(ra, rb, w), (a * b) >> w), (R.and_(ra, rb, w), a & b), (R.or_(ra, rb, w), a | b),
             (R.xor(ra, rb, w), a ^ b), (R.min_(ra, rb, w), min(a, b)), (R.max_(ra, rb, w), max(a, b)),
             (R.shl(ra, n, w), (a << n) & m if n < w else 0), (R.shr(ra, n, w), a >> min(n, w)),
             (R.ext(ra, w, 64), a),
             (R.ext(ra, w, 64, signed=True), (a - (1 << w) if a >> (w - 1) else a) & (2**64 - 1)),
             (R.bfe(ra, n, 5, w), (a >> n) & 31 if n < w else 0)]
    if rb[0] > 0:
        cases += [(R.rem(ra, rb, w), a % b), (R.div(ra, rb, w), a // b)]
    for rng, value in cases:
        assert rng[0] <= value <= rng[1], (rng, value)
    # the two domains agree: the bits every value of an interval shares hold for the value
    k = R.bits_of(ra, w)
    assert a & k.mask == k.value & k.mask
    lo, hi = R.of_bits(k, w)
    assert lo <= a <= hi
    # refinement keeps every value that satisfies the comparison
    for cmp in ("eq", "ne", "lt", "le", "gt", "ge"):
        got = R.refine(ra, cmp, rb, w, signed=False)
        if {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[cmp]:
            assert got is not None and got[0] <= a <= got[1], (cmp, ra, rb, a, b, got)


@settings(max_examples=500)
@given(st.sampled_from([1, 8, 16, 32, 64]), st.integers(0, (1 << 70) - 1), st.integers(0, (1 << 70) - 1),
       st.none() | st.tuples(st.integers(0, (1 << 70) - 1), st.integers(0, (1 << 70) - 1)))
def test_the_reduced_product_written_out_is_the_domains_own(w, value, mask, rng):
    """values.reduced_value (every definition's value passes through it, so its refinement of the bits
    by the range and the range by the bits is written out) gives what ranges.bits_of,
    ranges.of_bits and ranges.meet give, wide inputs clipped to the width."""
    from descgen.ptx import ranges as R
    from descgen.ptx.values import reduced_value

    m = (1 << w) - 1
    if rng is not None:
        rng = (min(rng), max(rng))
    got = reduced_value(KnownBits(value, mask), w, rng, {"why"})
    bits = KnownBits(value & mask & m, mask & m)
    if rng is None:
        want_rng = (bits.value, bits.value | (~bits.mask & m))
    else:
        clipped = (min(rng[0], m), min(rng[1], m))
        by_range = R.bits_of(clipped, w)
        bits = KnownBits((bits.value & bits.mask) | (by_range.value & by_range.mask & ~bits.mask),
                         bits.mask | by_range.mask)
        want_rng = R.meet(clipped, R.of_bits(bits, w)) or clipped
    assert (got.bits, got.range) == (bits, want_rng)
    assert got.why == (frozenset() if bits.mask == m else frozenset({"why"}))
