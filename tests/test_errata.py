"""Pins the decisions recorded in docs/spec-errata.md (E1..E18 here; later ones beside the code they
concern, and one test checks every erratum names tests that exist).

Each test asserts concrete bits, values or finding codes that would change if the decision were
reversed. Where the library does not (yet) follow a decision, the test is marked
``xfail(strict=True)`` with the erratum id in the reason.
"""

from __future__ import annotations

import pytest

from descgen import (
    EncodeError,
    decode_idesc,
    decode_smem,
    decode_zcm,
    encode_idesc,
    encode_smem,
    encode_zcm,
    mma_k,
    zcm_mask,
    zcm_submasks,
)
from descgen import validate_idesc, validate_smem
from descgen.model.loader import shapes
from descgen.model.catalog import constraints

MX_KINDS = ("mxf8f6f4", "mxf4", "mxf4nvf4")
DENSE_KINDS = ("tf32", "f16", "f8f6f4", "i8")


def bits(word: int, lo: int, hi: int) -> int:
    """Bits lo..hi (inclusive) of word."""
    return (word >> lo) & ((1 << (hi - lo + 1)) - 1)


def codes(decoded) -> dict[str, str]:
    """Finding code -> severity."""
    return {f.code: f.severity for f in decoded.findings}


def pattern(text: str) -> int:
    """A mask as PTX prints it (MSB left, groups separated by spaces) -> integer."""
    return int(text.replace(" ", ""), 2)


def smem_word(**kw) -> int:
    args = dict(start_address=0x400, lbo=16, sbo=1024, swizzle="128B")
    args.update(kw)
    return encode_smem(**args)


# ---------------------------------------------------------------------------------------------
# E1: Table 40 bits 53-60 "0xb00000000" is the constant 0.


def test_e1_encode_leaves_bits_53_60_zero():
    for swizzle in ("none", "128B_base32B", "128B", "64B", "32B"):
        for base_offset in (0, 7):
            w = smem_word(swizzle=swizzle, base_offset=base_offset)
            assert bits(w, 53, 60) == 0


def test_e1_nonzero_bits_53_60_is_an_error():
    w = smem_word()
    for extra in (1 << 53, 1 << 60, 0xB << 53):
        d = decode_smem(w | extra)
        assert codes(d).get("SMEM-FIXED-53-CONST") == "error"
        assert not d.ok
    assert decode_smem(w).ok and not decode_smem(w).findings


# ---------------------------------------------------------------------------------------------
# E2: bits 46-48 = 0b001; bit 46 clear decodes as a warning.


def test_e2_encode_writes_version_0b001():
    w = smem_word()
    assert bits(w, 46, 48) == 0b001
    assert w & (1 << 46)
    assert not w & (0b11 << 47)


def test_e2_matches_cutlass_two_bit_version():
    # CUTLASS: 2-bit version_ = 1 at bits 46-47, bit 48 unused -> the same single bit.
    w = smem_word()
    assert w & (0b111 << 46) == (1 << 46)
    assert bits(w, 46, 47) == 1


def test_e2_bit46_clear_is_a_warning_not_an_error():
    w = smem_word() & ~(1 << 46)
    d = decode_smem(w)  # must not raise
    found = [f for f in d.findings if f.code == "SMEM-VERSION-CONST"]
    assert len(found) == 1
    assert found[0].severity == "warning"
    assert d.ok
    assert not d.errors
    # the rest of the word still decodes
    assert d.value("swizzle") == "128B"
    assert d.value("sbo") == 1024


# ---------------------------------------------------------------------------------------------
# E3: Use Span + 1 = used run (0s), Skip Span + 1 = zeroed run (1s); API takes counts.


def test_e3_spans_are_counts_used_run_then_zeroed_run():
    w = encode_zcm(skip_span=3, use_span=4, first_span=(0, 0, 0, 0))
    # raw fields hold count - 1
    assert bits(w, 40, 47) == 2
    assert bits(w, 48, 55) == 3
    mask = zcm_mask(w, 128, 16)
    assert bits(mask, 0, 3) == 0  # 4 used columns
    assert bits(mask, 4, 6) == 0b111  # 3 zeroed columns
    assert bits(mask, 0, 6) == 0b1110000
    assert mask == 0b0011100001110000
    d = decode_zcm(w)
    assert d.value("skip_span") == 3 and d["skip_span"].raw == 2
    assert d.value("use_span") == 4 and d["use_span"].raw == 3


def test_e3_worked_example_2():
    # Example 2: M = 128, Skip Span 2, Use Span 3 (raw), fs0 = 0, sc0 = 0, shift 0
    # -> mask0 0b ... 111 0000 111 0000
    w = encode_zcm(skip_span=2 + 1, use_span=3 + 1)
    assert zcm_mask(w, 128, 14) == pattern("111 0000 111 0000")


def test_e3_description_column_reading_is_rejected():
    # Literal Table 45 Description: Skip Span + 1 = used run, Use Span + 1 = zeroed run, which
    # for Example 2 would give 0b ... 1111 000 1111 000.
    w = encode_zcm(skip_span=3, use_span=4)
    assert zcm_mask(w, 128, 14) != pattern("1111 000 1111 000")


# ---------------------------------------------------------------------------------------------
# E4: mask semantics.


def test_e4_worked_example_3_m64():
    # Example 3: M = 64, sc = {0, 0}, fs = {fs1 0, fs0 1}, Skip 2, Use 3.
    w = encode_zcm(skip_span=3, use_span=4, first_span=(1, 0, 0, 0), start_count=(0, 0, 0, 0))
    mask0, mask1 = zcm_submasks(w, 64, 36)  # 18 bits each
    # printed: mask0 0b ... 111 0000 111 0000 111, mask1 0b ... 0000 111 0000 111 0000
    assert mask0 == pattern("0 111 0000 111 0000 111")
    assert mask1 == pattern("0000 111 0000 111 0000")


def test_e4_worked_example_4_m32():
    # Example 4: M = 32, {sc3, sc2, sc1, sc0} = {1, 2, 1, 0}, {fs3, fs2, fs1, fs0} = {0, 0, 1, 1},
    # Skip 2, Use 3, shift 2.
    w = encode_zcm(skip_span=3, use_span=4, start_count=(0, 1, 2, 1), first_span=(1, 1, 0, 0), column_shift=2)
    m0, m1, m2, m3 = zcm_submasks(w, 32, 56)  # 14 bits each
    assert bits(m0, 0, 13) == pattern("0000 111 0000 111")
    assert bits(m1, 0, 12) == pattern("0000 111 0000 11")
    assert bits(m2, 0, 11) == pattern("111 0000 111 00")
    assert bits(m3, 0, 12) == pattern("111 0000 111 000")


def test_e4_nonzero_mask_zero_gives_all_zero_mask():
    # Example 1: Non-Zero Mask 0, Skip Span 4, Use Span 3 (raw) -> 0x0.
    w = encode_zcm(nonzero_mask=False, skip_span=5, use_span=4, first_span=(1, 1, 1, 1))
    for m, n in ((128, 256), (64, 128), (32, 64)):
        assert zcm_mask(w, m, n) == 0
        assert all(s == 0 for s in zcm_submasks(w, m, n))


def test_e4_column_shift_does_not_change_mask():
    kw = dict(skip_span=3, use_span=4, start_count=(0, 1, 2, 1), first_span=(1, 1, 0, 0))
    base = encode_zcm(column_shift=0, **kw)
    for shift in (2, 16, 32):
        shifted = encode_zcm(column_shift=shift, **kw)
        assert bits(shifted, 56, 61) == shift
        for m, n in ((128, 128), (64, 128), (32, 128)):
            assert zcm_mask(shifted, m, n) == zcm_mask(base, m, n)


def test_e4_submasks_lie_side_by_side():
    w = encode_zcm(skip_span=1, use_span=2, first_span=(1, 0, 1, 0), start_count=(0, 1, 0, 2))
    for m, count in ((128, 1), (64, 2), (32, 4)):
        n = 48
        parts = zcm_submasks(w, m, n)
        assert len(parts) == count
        width = n // count
        mask = zcm_mask(w, m, n)
        for i, part in enumerate(parts):
            assert bits(mask, i * width, (i + 1) * width - 1) == part
    # sub-mask 1 at M = 64: fs1 = 0, runs of 2 used / 1 zeroed: "0 0 1 0 0 1 0 ..." from bit 0,
    # first sc1 = 1 bit dropped -> bits 0-5 = 0, 1, 0, 0, 1, 0
    assert bits(zcm_submasks(w, 64, 48)[1], 0, 5) == 0b010010
    # sub-mask 0: fs0 = 1, sc0 = 0 -> bits 0-5 = 1, 0, 0, 1, 0, 0
    assert bits(zcm_submasks(w, 64, 48)[0], 0, 5) == 0b001001


# ---------------------------------------------------------------------------------------------
# E5: M >> 7 in bits 27-28 for the mx kinds; bits 24-26 reserved.


@pytest.mark.parametrize("kind", MX_KINDS)
def test_e5_m_is_bits_27_28_and_matches_cutlass_for_legal_m(kind):
    for m in (128, 256):
        w = encode_idesc(kind, m, 128)
        assert bits(w, 27, 28) == m >> 7
        assert bits(w, 24, 26) == 0
        # CUTLASS writes M >> 4 into bits 24-28: identical for the legal M.
        assert bits(w, 24, 28) == m >> 4
        assert decode_idesc(w, kind).value("m") == m
        assert decode_idesc(w, kind).ok
    assert encode_idesc(kind, 128, 128) & (1 << 27)
    assert encode_idesc(kind, 256, 128) & (1 << 28)


@pytest.mark.parametrize("kind", MX_KINDS)
def test_e5_m64_not_encodable_for_mx_kinds(kind):
    with pytest.raises(EncodeError) as exc:
        encode_idesc(kind, 64, 128)
    assert exc.value.field == "m"


@pytest.mark.parametrize("kind", MX_KINDS)
def test_e5_cutlass_style_m64_word_flags_reserved_24(kind):
    w = encode_idesc(kind, 128, 128)
    cutlass_m64 = (w & ~(0x1F << 24)) | ((64 >> 4) << 24)
    assert cutlass_m64 & (1 << 26)
    d = decode_idesc(cutlass_m64, kind)
    c = codes(d)
    assert c.get("IDESC-RESERVED-24") == "error"
    assert c.get("IDESC-M-RANGE") == "error"
    assert d["reserved_24"].raw == 4
    assert d.value("m") == 0
    assert not d.ok


# ---------------------------------------------------------------------------------------------
# E6: no sparsity selector for the mx kinds; bits 0-1 decode as a warning.


@pytest.mark.parametrize("kind", MX_KINDS)
def test_e6_encoder_never_writes_selector_for_mx_kinds(kind):
    for selector in (1, 2, 3):
        with pytest.raises(EncodeError) as exc:
            encode_idesc(kind, 128, 128, sparse=True, sparsity_selector=selector)
        assert exc.value.code == "IDESC-SPARSITY-SELECTOR-ABSENT"
    w = encode_idesc(kind, 128, 128, sparse=True, sparsity_selector=0)
    assert bits(w, 0, 1) == 0
    assert w & (1 << 2)


@pytest.mark.parametrize("kind", MX_KINDS)
def test_e6_bits_0_1_decode_as_warning_under_mx_kinds(kind):
    w = encode_idesc(kind, 128, 128, sparse=True)
    for selector in (1, 2, 3):
        d = decode_idesc(w | selector, kind)
        assert codes(d) == {"IDESC-RESERVED-0": "warning"}
        assert d.ok
    # other reserved bits of the same layout stay errors
    d = decode_idesc(w | (1 << 3), kind)
    assert codes(d) == {"IDESC-RESERVED-3": "error"}
    assert not d.ok
    # contrast: under Table 42 bits 0-1 are the selector, a value, no finding
    dense = decode_idesc(encode_idesc("f16", 128, 128, sparse=True) | 2, "f16")
    assert dense.value("sparsity_selector") == 2 and dense.ok and not dense.findings


# ---------------------------------------------------------------------------------------------
# E7: scale factor IDs 0-3 in the field; which IDs are legal depends on the scale vector size and K.


def _sf_word_args(kind: str) -> dict:
    """A shape under which some scale vector size allows IDs 0-3: mxf8f6f4 (1X / .block32) at
    its own K, mxf4/mxf4nvf4 only at K = 96 (.block32, Figures 234-237)."""
    return {"m": 128, "n": 128} if kind == "mxf8f6f4" else {"m": 256, "n": 128, "k": 96}


@pytest.mark.parametrize("kind", MX_KINDS)
def test_e7_sf_id_field_accepts_0_to_3_for_all_mx_kinds(kind):
    args = _sf_word_args(kind)
    for a in range(4):
        for b in range(4):
            w = encode_idesc(kind, args["m"], args["n"], k=args.get("k"), a_sf_id=a, b_sf_id=b)
            assert bits(w, 29, 30) == a
            assert bits(w, 4, 5) == b
            d = decode_idesc(w, kind)
            assert d.value("a_sf_id") == a and d.value("b_sf_id") == b
            assert d.ok


@pytest.mark.parametrize("kind", MX_KINDS)
def test_e7_sf_id_4_is_out_of_range(kind):
    with pytest.raises(EncodeError) as exc:
        encode_idesc(kind, 128, 128, a_sf_id=4)
    assert exc.value.code == "IDESC-A-SF-ID-RANGE"
    with pytest.raises(EncodeError) as exc:
        encode_idesc(kind, 128, 128, b_sf_id=4)
    assert exc.value.code == "IDESC-B-SF-ID-RANGE"


def test_e7_context_rule_needs_the_scale_vector_size():
    # Table 44's "0 or 2" is not the field's rule: IDs 1 and 3 (legal for .block32 K = 96) decode
    # clean at K = 96, and the rule that depends on .scale_vectorsize runs when it is given.
    for kind in ("mxf4", "mxf4nvf4"):
        w = encode_idesc(kind, 256, 128, k=96, a_sf_id=1, b_sf_id=3, scale_type="ue8m0")
        d = decode_idesc(w, kind)
        assert d.ok and not d.findings
        assert validate_idesc(w, kind, scale_vec="block32").ok
        # without it the rule is checked against every size (checked or not checked, never both)
        assert "IDESC-A-SF-ID-SCALE-VEC" not in {n.code for n in validate_idesc(w, kind).not_checked}
        assert validate_idesc(w, kind).ok
        # at K = 64 no scale vector size allows 1 or 3: an error with or without the context
        w64 = encode_idesc(kind, 128, 128, a_sf_id=1, b_sf_id=3, scale_type="ue8m0", check=False)
        both = {"IDESC-A-SF-ID-SCALE-VEC", "IDESC-B-SF-ID-SCALE-VEC"}
        assert {f.code for f in validate_idesc(w64, kind, scale_vec="2X").findings} == both
        assert {f.code for f in decode_idesc(w64, kind).findings} == both
    # .block32 with K = 96: IDs 0-3 (Figures 234-237); .block16 with K = 96: 0 or 2; 4X: 0 only
    k96 = encode_idesc("mxf4nvf4", 256, 128, k=96, a_sf_id=3, b_sf_id=1, scale_type="ue8m0")
    assert validate_idesc(k96, "mxf4nvf4", scale_vec="block32").ok
    assert validate_idesc(k96, "mxf4nvf4", scale_vec="block16").codes == ("IDESC-A-SF-ID-SCALE-VEC",
                                                                          "IDESC-B-SF-ID-SCALE-VEC")
    assert not validate_idesc(encode_idesc("mxf4nvf4", 128, 128, a_sf_id=2), "mxf4nvf4", scale_vec="4X").ok


# ---------------------------------------------------------------------------------------------
# E8: K-major swizzled LBO: 1 (16 bytes) and 0 both accepted.


@pytest.mark.parametrize("swizzle", ["128B_base32B", "128B", "64B", "32B"])
def test_e8_lbo_16_and_0_both_accepted_for_k_major_swizzled(swizzle):
    w16 = smem_word(lbo=16, swizzle=swizzle)
    w0 = smem_word(lbo=0, swizzle=swizzle)
    assert bits(w16, 16, 29) == 1
    assert bits(w0, 16, 29) == 0
    for w, lbo in ((w16, 16), (w0, 0)):
        d = decode_smem(w)
        assert d.ok and not d.findings
        assert d.value("lbo") == lbo
    assert w16 ^ w0 == 1 << 16


# ---------------------------------------------------------------------------------------------
# E9: base offset as given; 128B_base32B shares the 1024-byte boundary.


def test_e9_pattern_boundaries_128b_base32b_is_1024():
    expected = {"128B_base32B": 1024, "128B": 1024, "64B": 512, "32B": 256}
    for swizzle, boundary in expected.items():
        d = decode_smem(smem_word(swizzle=swizzle))
        assert d.value("pattern_boundary") == boundary
        assert d.value("swizzle_bytes") == (128 if swizzle.startswith("128B") else int(swizzle[:-1]))


def test_e9_base_offset_taken_as_given():
    for bo in range(8):
        w = smem_word(base_offset=bo)
        assert bits(w, 49, 51) == bo
        assert decode_smem(w).value("base_offset") == bo
    # the formula for a 128B pattern starting at 0x1180: (0x1180 >> 7) & 7 = 3
    assert (0x1180 >> 7) & 7 == 3
    assert bits(smem_word(start_address=0x1180, base_offset=3), 49, 51) == 3
    with pytest.raises(EncodeError) as exc:
        smem_word(base_offset=8)
    assert exc.value.code == "SMEM-BASE-OFFSET-RANGE"


# ---------------------------------------------------------------------------------------------
# E10: both mxf4 kinds are sparse (4:8 pairwise) with sparse K = 128.


@pytest.mark.parametrize("kind", ["mxf4", "mxf4nvf4"])
def test_e10_both_mxf4_kinds_have_sparse_rows_with_k128(kind):
    sparse_rows = [r for r in shapes().for_kind(kind) if r.sparse]
    assert {(r.cta_group, r.m, r.k) for r in sparse_rows} == {(1, (128,), 128), (2, (256,), 128)}
    assert shapes().k_values(kind, True) == (128,)
    assert mma_k(kind, True) == 128


@pytest.mark.parametrize("kind", ["mxf4", "mxf4nvf4"])
def test_e10_sparse_bit_encodes_for_both_mxf4_kinds(kind):
    w = encode_idesc(kind, 128, 128, sparse=True)
    assert w & (1 << 2)
    assert not w & (1 << 31)  # "Sparse K=128" is bit 31 = 0
    d = decode_idesc(w, kind)
    assert d.ok and d.value("k") == 128


# ---------------------------------------------------------------------------------------------
# E11: cta_group::2: idesc M is the pair's M (128/256); N steps 16 (32 for i8).


def test_e11_cta_group_2_rows_are_pair_m_and_n_step_16_or_32():
    rows = [r for r in shapes().rows if r.cta_group == 2]
    assert {r.kind for r in rows} == set(DENSE_KINDS + MX_KINDS)
    for r in rows:
        assert set(r.m) <= {128, 256}
        assert not r.ws
        step = 32 if r.kind == "i8" else 16
        assert r.n == tuple(range(step, 257, step))
    for kind in DENSE_KINDS:
        pair = [r for r in rows if r.kind == kind]
        assert all(r.m == (128, 256) for r in pair)


def test_e11_m256_needs_cta_group_2():
    w = encode_idesc("f16", 256, 128)
    assert validate_idesc(w, "f16", cta_group=2).ok
    assert validate_idesc(w, "f16", cta_group=1).codes == ("IDESC-M-SHAPE",)
    # i8 under cta_group::2 steps N by 32
    assert validate_idesc(encode_idesc("i8", 128, 48), "i8", cta_group=2).codes == ("IDESC-N-SHAPE",)
    assert validate_idesc(encode_idesc("i8", 128, 64), "i8", cta_group=2).ok


def test_e11_encoder_m_domain_is_union_over_contexts():
    for kind in DENSE_KINDS:
        assert shapes().m_values(kind) == {32, 64, 128, 256}
        w = encode_idesc(kind, 256, 32)
        assert bits(w, 24, 28) == 256 >> 4 == 16
        assert bits(encode_idesc(kind, 32, 64), 24, 28) == 2
        with pytest.raises(EncodeError):
            encode_idesc(kind, 512, 64)
    for kind in MX_KINDS:
        assert shapes().m_values(kind) == {128, 256}
    # i8 with cta_group::2 steps N by 32; N = 40 is in no Table 39 i8 row
    assert bits(encode_idesc("i8", 256, 32), 17, 22) == 4
    with pytest.raises(EncodeError):
        encode_idesc("i8", 128, 40)


# ---------------------------------------------------------------------------------------------
# E12: Table 44 bit 23: mxf4 -> ue8m0 only; mxf4nvf4 -> ue8m0 or ue4m3.


def test_e12_mxf4_scale_type_ue8m0_only():
    w = encode_idesc("mxf4", 128, 128)
    assert w & (1 << 23)
    assert encode_idesc("mxf4", 128, 128, scale_type="ue8m0") == w
    with pytest.raises(EncodeError) as exc:
        encode_idesc("mxf4", 128, 128, scale_type="ue4m3")
    assert exc.value.code == "IDESC-SCALE-TYPE-CODE"
    d = decode_idesc(w & ~(1 << 23), "mxf4")
    assert codes(d).get("IDESC-SCALE-TYPE-CODE") == "error"
    # mxf8f6f4 (Table 43): ue8m0 only as well
    with pytest.raises(EncodeError):
        encode_idesc("mxf8f6f4", 128, 128, scale_type="ue4m3")


def test_e12_mxf4nvf4_takes_ue8m0_or_ue4m3():
    w8 = encode_idesc("mxf4nvf4", 128, 128, scale_type="ue8m0")
    w4 = encode_idesc("mxf4nvf4", 128, 128, scale_type="ue4m3")
    assert w8 & (1 << 23)
    assert not w4 & (1 << 23)
    assert w8 ^ w4 == 1 << 23
    assert encode_idesc("mxf4nvf4", 128, 128) == w4  # default ue4m3
    assert decode_idesc(w8, "mxf4nvf4").value("scale_type") == "ue8m0"
    assert decode_idesc(w4, "mxf4nvf4").value("scale_type") == "ue4m3"
    assert decode_idesc(w8, "mxf4nvf4").ok and decode_idesc(w4, "mxf4nvf4").ok


# ---------------------------------------------------------------------------------------------
# E13: Table 44 btype is bits 10-11; bit 12 reserved; same wire bits as CUTLASS's 3-bit field.


@pytest.mark.parametrize("kind", ["mxf4", "mxf4nvf4"])
def test_e13_btype_is_bits_10_11_same_bits_as_cutlass(kind):
    w = encode_idesc(kind, 128, 128)
    assert bits(w, 10, 11) == 1  # Table 44: 2-bit btype, E2M1 = 1
    assert bits(w, 12, 12) == 0  # reserved
    assert bits(w, 10, 12) == 1  # CUTLASS: 3-bit b_format, MXF4 E2M1 = 1
    assert bits(w, 7, 9) == 1  # atype E2M1 = 1
    d = decode_idesc(w, kind)
    assert d["btype"].bits == "10-11"
    assert d.value("btype") == "e2m1"


def test_e13_bit_12_is_reserved_and_catches_f8f6f4_e2m1_code():
    w = encode_idesc("mxf4", 128, 128)
    d = decode_idesc(w | (1 << 12), "mxf4")
    assert codes(d) == {"IDESC-RESERVED-12": "error"}
    # f8f6f4's E2M1 code (5 = 0b101) written into an mxf4 word
    wrong = (w & ~(0x3F << 7)) | (5 << 7) | (5 << 10)
    c = codes(decode_idesc(wrong, "mxf4"))
    assert c.get("IDESC-ATYPE-CODE") == "error"
    assert c.get("IDESC-RESERVED-12") == "error"


# ---------------------------------------------------------------------------------------------
# E14: Non-Zero Mask: 0 = all-zero mask, 1 = generate (PTX, not CUTLASS's comment).


def test_e14_nonzero_mask_bit_polarity_follows_ptx():
    on = encode_zcm(nonzero_mask=True, skip_span=3, use_span=4)
    off = encode_zcm(nonzero_mask=False, skip_span=3, use_span=4)
    assert on & (1 << 39)
    assert not off & (1 << 39)
    assert on ^ off == 1 << 39
    assert zcm_mask(on, 128, 16) == 0b0011100001110000
    assert zcm_mask(off, 128, 16) == 0
    assert decode_zcm(on).value("nonzero_mask") is True
    assert decode_zcm(off).value("nonzero_mask") is False


# ---------------------------------------------------------------------------------------------
# E15: sparsity selector must be 0 for i8 and f8f6f4 (§9.7.16.10.8.4.5-6); 0-3 for tf32/f16.


@pytest.mark.parametrize("kind", ["tf32", "f16"])
def test_e15_selector_0_to_3_for_tf32_and_f16(kind):
    for selector in range(4):
        w = encode_idesc(kind, 128, 128, sparse=True, sparsity_selector=selector)
        assert bits(w, 0, 1) == selector
        d = decode_idesc(w, kind)
        assert d.ok and d.value("sparsity_selector") == selector


@pytest.mark.parametrize("kind", ["i8", "f8f6f4"])
def test_e15_encode_rejects_selector_for_i8_and_f8f6f4(kind):
    assert bits(encode_idesc(kind, 128, 128, sparse=True, sparsity_selector=0), 0, 1) == 0
    with pytest.raises(EncodeError) as exc:
        encode_idesc(kind, 128, 128, sparse=True, sparsity_selector=1)
    assert exc.value.field == "sparsity_selector"


@pytest.mark.parametrize("kind", ["i8", "f8f6f4"])
def test_e15_decode_flags_selector_for_i8_and_f8f6f4(kind):
    w = encode_idesc(kind, 128, 128, sparse=True) | 1
    d = decode_idesc(w, kind)
    assert any(f.field == "sparsity_selector" and f.severity == "error" for f in d.findings)
    assert not d.ok


# ---------------------------------------------------------------------------------------------
# E16: K is implied, except Table 44 bit 31 selects dense K = 96 for mxf4 / mxf4nvf4.


@pytest.mark.parametrize("kind", ["mxf4", "mxf4nvf4"])
def test_e16_k96_is_bit_31_for_dense_mxf4_kinds(kind):
    w96 = encode_idesc(kind, 256, 128, k=96)
    w64 = encode_idesc(kind, 256, 128)
    assert w96 & (1 << 31)
    assert not w64 & (1 << 31)
    assert w96 ^ w64 == 1 << 31
    assert encode_idesc(kind, 256, 128, k=64) == w64
    assert decode_idesc(w96, kind).value("k") == 96
    assert decode_idesc(w64, kind).value("k") == 64
    assert mma_k(kind, False, k96=True) == 96


def test_e16_k96_rejected_elsewhere():
    for kind, sparse in (("mxf4", True), ("mxf4nvf4", True), ("mxf8f6f4", False), ("f16", False), ("i8", False)):
        with pytest.raises(EncodeError) as exc:
            encode_idesc(kind, 256, 128, sparse=sparse, k=96)
        assert exc.value.code == "IDESC-K-VALUE"
    # every other kind: K comes from Table 39 (kind, sparsity)
    assert mma_k("f16", False) == 16 and mma_k("f16", True) == 32
    assert mma_k("mxf8f6f4", False) == 32 and mma_k("mxf8f6f4", True) == 64
    assert encode_idesc("f16", 128, 128, k=16) == encode_idesc("f16", 128, 128)
    # bit 31 is max_shift under Table 42, not K
    assert decode_idesc(encode_idesc("f16", 128, 128, max_shift=16), "f16").value("k") == 16


# ---------------------------------------------------------------------------------------------
# E17: no M = 64 for the block-scaled kinds, whatever the sparsity-metadata heading says.


def test_e17_sparse_m64_only_for_non_mx_kinds():
    for kind in MX_KINDS:
        with pytest.raises(EncodeError) as exc:
            encode_idesc(kind, 64, 128, sparse=True)
        assert exc.value.field == "m"
        assert 64 not in shapes().m_values(kind)
    for kind in ("f8f6f4", "i8"):
        w = encode_idesc(kind, 64, 128, sparse=True)
        assert bits(w, 24, 28) == 4
        assert decode_idesc(w, kind).ok


# ---------------------------------------------------------------------------------------------
# E18: transpose: Table 49 per kind (implemented); Table 52's 4-/6-bit exclusion not yet checked.


def test_e18_transpose_per_kind_table_49():
    for kind in ("mxf4", "mxf4nvf4"):
        for arg in ("a_major", "b_major"):
            with pytest.raises(EncodeError) as exc:
                encode_idesc(kind, 128, 128, **{arg: "mn"})
            assert exc.value.code == f"IDESC-{arg.upper().replace('_', '-')}-CODE"
        d = decode_idesc(encode_idesc(kind, 128, 128) | (1 << 15), kind)
        assert codes(d).get("IDESC-A-MAJOR-CODE") == "error"
    for kind in ("f8f6f4", "mxf8f6f4"):
        w = encode_idesc(kind, 128, 128, atype="e4m3", btype="e5m2", a_major="mn", b_major="mn")
        assert bits(w, 15, 16) == 0b11
        assert decode_idesc(w, kind).ok


def test_e18_type_size_rule():
    # Table 52 (and CUTLASS) exclude MN-major for 4-/6-bit types.
    for kind, t in (("f8f6f4", "e2m1"), ("mxf8f6f4", "e3m2"), ("f8f6f4", "e2m3")):
        with pytest.raises(EncodeError) as exc:
            encode_idesc(kind, 128, 128, atype=t, btype=t, a_major="mn", b_major="mn")
        assert [(f.code, f.field) for f in exc.value.findings] == [("IDESC-MAJOR-TYPE-SIZE", "a_major"),
                                                                    ("IDESC-MAJOR-TYPE-SIZE", "b_major")]
        # K-major is fine, and one 8-bit operand may be MN-major beside a 4-bit K-major one
        assert decode_idesc(encode_idesc(kind, 128, 128, atype=t, btype=t), kind).ok
        encode_idesc(kind, 128, 128, atype=t, btype="e4m3", b_major="mn")

# ---------------------------------------------------------------------------------------------
# E19: Table 39's dtype x atype/btype rows


def test_e19_f16_accumulator_only_with_f16_inputs():
    assert bits(encode_idesc("f16", 128, 64, atype="f16", btype="f16", dtype="f16"), 4, 5) == 0
    for a, b in (("bf16", "bf16"), ("bf16", "f16"), ("f16", "bf16")):
        with pytest.raises(EncodeError) as exc:
            encode_idesc("f16", 128, 64, atype=a, btype=b, dtype="f16")
        assert exc.value.code == "IDESC-TYPES-TABLE39" and exc.value.field == "dtype"
        w = encode_idesc("f16", 128, 64, atype=a, btype=b, dtype="f16", check=False)
        assert [f.code for f in w.findings] == ["IDESC-TYPES-TABLE39"]
        d = decode_idesc(w, "f16")
        assert not d.ok and [f.code for f in d.findings] == ["IDESC-TYPES-TABLE39"]


def test_e19_mixed_inputs_within_a_row():
    w = encode_idesc("f16", 128, 64, atype="f16", btype="bf16", dtype="f32")
    assert (bits(w, 7, 9), bits(w, 10, 12), bits(w, 4, 5)) == (0, 1, 1)
    assert decode_idesc(w, "f16").ok
    w = encode_idesc("f8f6f4", 128, 64, atype="e2m1", btype="e5m2", dtype="f16")
    assert (bits(w, 7, 9), bits(w, 10, 12), bits(w, 4, 5)) == (5, 1, 0)
    assert decode_idesc(w, "f8f6f4").ok


# ---------------------------------------------------------------------------------------------
# E20-E23: validation decisions


def test_e20_target_lists():
    c = constraints()
    assert c.requires["kind_i8"] == ("sm_100a", "sm_110a")
    assert c.requires["scale_vec_nx"] == ("sm_100a",)
    assert [a for a in c.targets if c.supports(a, "scale_vec_block")] == list(c.targets)
    assert [a for a in c.targets if c.supports(a, "sparse_mxf4")] == ["sm_100a", "sm_103a", "sm_110a"]
    assert [a for a in c.targets if c.supports(a, "k96")] == ["sm_103a"]
    assert validate_idesc(encode_idesc("i8", 128, 128), "i8", arch="sm_101a").ok  # renamed sm_110a


def test_e21_k96_block_only():
    w = encode_idesc("mxf4", 256, 128, k=96)
    assert validate_idesc(w, "mxf4", scale_vec="block32").ok
    assert validate_idesc(w, "mxf4", scale_vec="2X").codes == ("IDESC-SCALE-VEC-K",)
    assert validate_idesc(encode_idesc("mxf4", 256, 128), "mxf4", scale_vec="2X").ok


def test_e23_k_advance_inside_a_row_is_clean():
    base = dict(lbo=16, sbo=1024, swizzle="128B")
    for offset in (0, 32, 64, 96):  # K = 16 f16 slices inside a 128B atom
        assert not decode_smem(encode_smem(start_address=0x2000 + offset, **base)).findings
    d = decode_smem(encode_smem(start_address=0x2000 + 3 * 128, **base))
    assert [(f.code, f.severity) for f in d.findings] == [("SMEM-BASE-OFFSET-BOUNDARY", "warning")]
    # with the pattern start given, the exact rule decides
    w = encode_smem(start_address=0x2180, base_offset=3, **base)
    assert validate_smem(w, pattern_start=0x2180).ok and not validate_smem(w, pattern_start=0x2180).findings
    assert validate_smem(w, pattern_start=0x2000).codes == ("SMEM-BASE-OFFSET-TABLE41",)


def test_e37_dense_selector_is_an_error_for_every_kind():
    # one rule, one severity: a nonzero selector with Sparsity = 0 is an error for tf32, f16, f8f6f4, i8
    severities = set()
    for kind in DENSE_KINDS:
        dense = encode_idesc(kind, 128, 128)
        for selector in (1, 2, 3):
            d = decode_idesc(dense | selector, kind)
            hits = [f for f in d.findings if f.code == "IDESC-SPARSITY-SELECTOR-DENSE"]
            assert len(hits) == 1 and hits[0].field == "sparsity_selector" and not d.ok
            severities.add(hits[0].severity)
            with pytest.raises(EncodeError) as exc:
                encode_idesc(kind, 128, 128, sparsity_selector=selector)
            assert exc.value.field == "sparsity_selector"  # (i8, f8f6f4: the field check, E15, comes first)
    assert severities == {"error"}
    # sparse words keep E15: tf32 and f16 take 0-3
    for kind in ("tf32", "f16"):
        assert decode_idesc(encode_idesc(kind, 128, 128, sparse=True, sparsity_selector=3), kind).ok


def test_every_erratum_is_pinned_by_tests_that_exist():
    """Each decision in docs/spec-errata.md names the tests that pin it ("Pinned by"), and each
    named test is defined in tests/ (a renamed or deleted test would leave the decision unpinned)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    errata = (root / "docs" / "spec-errata.md").read_text(encoding="utf-8")
    sources = "".join(path.read_text(encoding="utf-8") for path in (root / "tests").glob("test_*.py"))
    ids = re.findall(r'<a id="e(\d+)"></a>', errata)
    assert ids == [str(n) for n in range(1, len(ids) + 1)] and len(ids) >= 36  # numbered in order, none skipped
    for n in ids:
        section = errata.split(f'<a id="e{n}"></a>')[1].split("<a id=")[0]
        assert "**Pinned by**" in section, f"E{n} names no test"
        pins = re.findall(r"`(test_\w+)", section.split("**Pinned by**")[1])
        assert pins, f"E{n}"
        for name in pins:
            assert f"def {name}(" in sources, (f"E{n}", name)


# ---------------------------------------------------------------------------------------------
# E47: a swizzled SBO is a whole number of swizzle patterns where the MMA steps by it.


def test_e47_sbo_off_the_pattern_warns_where_it_is_used():
    from descgen import check_mma

    def sbo_findings(n: int, a_sbo: int, b_sbo: int, b_major: str = "k", b_swizzle: str = "128B") -> list[str]:
        idesc = encode_idesc("f16", 128, n, b_major=b_major)
        r = check_mma(idesc=idesc, kind="f16", a_desc=smem_word(sbo=a_sbo), cta_group=1,
                      b_desc=smem_word(start_address=0x4400, sbo=b_sbo, swizzle=b_swizzle,
                                       lbo=16 if b_major == "k" else 8192))
        return sorted(f.field for f in r.findings if f.code == "MMA-SBO-ATOM")

    assert sbo_findings(128, 1024, 1024) == []
    assert sbo_findings(128, 1152, 2048) == ["a_desc.sbo"]          # 128B: multiples of 1024
    assert sbo_findings(128, 1024, 1536, b_swizzle="64B") == []       # 64B: multiples of 512
    assert sbo_findings(128, 1024, 768, b_swizzle="64B") == ["b_desc.sbo"]
    assert sbo_findings(32, 1024, 1152) == ["b_desc.sbo"]             # 16 rows per CTA or more
    assert sbo_findings(16, 1024, 1152) == []                         # 8 rows under cta_group::2: unused
    assert sbo_findings(128, 1024, 1152, b_major="mn") == ["b_desc.sbo"]  # f16 K = 16 rows > 8
    assert descgen_period("128B_base32B") == 512 and descgen_period("128B") == 1024 and descgen_period("none") == 0


def descgen_period(swizzle: str) -> int:
    from descgen.model.facts import swizzle_period

    return swizzle_period(swizzle)


# The CuTe DSL slice-K example (tests/corpus/cutedsl/prim_slicek_expanded_async_s32_smem.ptx, made
# by tests/corpus/make_cutedsl.py): one 128x32x32B MMA whose B descriptor has 128B swizzle and
# SBO = 32 bytes, so its four 8-row N groups are the four 32-byte K stripes of B's 8 rows.
SLICE_K = "prim_slicek_expanded_async_s32_smem.ptx"


def slice_k_words() -> tuple[int, int, int]:
    """(idesc, A's descriptor, B's descriptor) of the example's one tcgen05.mma, as its PTX holds
    them: the idesc immediate, and the constant each descriptor ORs into its shifted shared memory
    address (the start address is known at run time only)."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parent / "corpus" / "cutedsl" / SLICE_K).read_text()
    mma = re.search(r"tcgen05\.mma\.\S+ \[%r\d+\], (%rd\d+), (%rd\d+), (%r\d+), %p\d+;", text)
    assert mma is not None

    def const(reg: str) -> int:
        hit = re.search(rf"(?:or\.b64|mov\.b32)\s+{re.escape(reg)}, (?:%rd\d+, )?(-?\d+);", text)
        assert hit is not None, reg
        return int(hit.group(1)) % (1 << 64)

    return const(mma.group(3)), const(mma.group(1)), const(mma.group(2))


def with_sbo(word: int, sbo: int) -> int:
    return word & ~(0x3FFF << 32) | (sbo >> 4) << 32


def test_e47_slice_k_of_the_cutedsl_example_is_legal_and_a_skewed_sbo_still_warns():
    """The words the compiler wrote: B's SBO of 32 bytes keeps the four groups inside one 128-byte
    atom row (slice-K): no warning. SBO 1040 (the next atom, 16 bytes along the row) and a start
    whose groups run past the row's end still warn."""
    from descgen import check_mma

    idesc, a, b = slice_k_words()
    assert (idesc, a, b) == (0x08080010, 0xC000401000010000, 0x4000400200010000)
    assert decode_idesc(idesc, "f8f6f4").value("n") == 32 and decode_smem(b).value("swizzle") == "128B"
    assert decode_smem(b).value("sbo") == 32 and decode_smem(a).value("sbo") == 256  # A: 32B swizzle, whole patterns

    def sbo_warnings(b_word: int, b_start: int, a_word: int = a, a_start: int = 0x400) -> list[tuple[str, int]]:
        r = check_mma(idesc=idesc, kind="f8f6f4", a_desc=a_word | a_start >> 4, b_desc=b_word | b_start >> 4,
                      cta_group=1)
        return [(f.field, f.value) for f in r.findings if f.code == "MMA-SBO-ATOM"]

    assert sbo_warnings(b, 0x1400) == []                                   # the example: slice-K
    assert sbo_warnings(with_sbo(b, 1040), 0x1400) == [("b_desc.sbo", 1040)]  # planted: another atom and 16 bytes along
    assert sbo_warnings(with_sbo(b, 1152), 0x1400) == [("b_desc.sbo", 1152)]  # other rows of the same pattern
    assert sbo_warnings(with_sbo(b, 1024), 0x1400) == []                   # tiling
    assert sbo_warnings(b, 0x1400 + 96) == [("b_desc.sbo", 32)]            # from byte 96 the next group leaves the row
    assert sbo_warnings(with_sbo(b, 48), 0x1400) == []                     # 2 groups per CTA at least: 48 + 32 <= 128
    assert sbo_warnings(with_sbo(b, 112), 0x1400) == [("b_desc.sbo", 112)]  # 112 + 32 > 128


def test_e47_slice_k_is_the_canonical_read_moved_along_the_row():
    """E9's address model (smem_layout, measured on Hopper): the slice-K word reads every byte of
    one 1024-byte atom once, and group g (N rows 8g..8g+7) is exactly the canonical one-atom read
    with the start moved 32g bytes along the row. SBO 1040's group g is atom g's rows, 16g bytes
    along: another atom and another K at once, which LAYOUT-ATOM-STRIDE reports."""
    from descgen import smem_layout

    _, _, b = slice_k_words()
    start = 0x1400

    def unswizzled(addr: int) -> tuple[int, int, int]:
        """(atom, row, byte along the row) of a read address, the 128B swizzle undone (E9)."""
        u = addr ^ (((addr >> 7) & 7) << 4)
        return u // 1024, u % 1024 // 128, u % 128

    lay = smem_layout(b | start >> 4, dtype="e4m3", major="k", mn=32, k=32)
    assert not lay.findings
    read = lay.addresses()
    assert sorted(x for row in read for x in row) == list(range(start, start + 1024))
    for g in range(4):
        one = smem_layout(encode_smem(start_address=start + 32 * g, lbo=16, sbo=1024, swizzle="128B"), dtype="e4m3",
                          major="k", mn=8, k=32)
        assert not one.findings and read[8 * g:8 * g + 8] == one.addresses()
        assert {unswizzled(read[8 * g + r][k]) for r in range(8) for k in range(32)} == \
            {(start // 1024, r, 32 * g + k) for r in range(8) for k in range(32)}
    skew = smem_layout(with_sbo(b, 1040) | start >> 4, dtype="e4m3", major="k", mn=32, k=32)
    assert [(f.code, f.field, f.value) for f in skew.findings] == [("LAYOUT-ATOM-STRIDE", "sbo", 1040)]
    read = skew.addresses()
    for g in range(4):
        assert {unswizzled(read[8 * g + r][k]) for r in range(8) for k in range(32)} == \
            {(start // 1024 + g, r, 16 * g + k) for r in range(8) for k in range(32)}


def test_e47_a_stride_is_whole_patterns_or_stays_in_one_atom_row():
    """facts.skewed_stride, the one test of MMA-SBO-ATOM and LAYOUT-ATOM-STRIDE, per swizzle mode:
    rows of 128, 64, 32 bytes (128 for 128B with 32B atomicity); MN-major groups read whole rows."""
    from descgen import check_mma
    from descgen.model.facts import skewed_stride, swizzle_row

    assert [swizzle_row(s) for s in ("128B", "64B", "32B", "128B_base32B", "none")] == [128, 64, 32, 128, 0]
    assert not skewed_stride(1024, "128B", 16, 32) and not skewed_stride(2048, "128B", 16, 32)  # tiling
    assert not skewed_stride(32, "128B", 4, 32)                  # slice-K: 3 x 32 + 32 = 128
    assert skewed_stride(32, "128B", 4, 32, start=0x1420)        # from byte 32 the fourth group crosses the row
    assert not skewed_stride(16, "128B", 4, 32)                  # overlapping K windows, still one row
    assert (skewed_stride(1040, "128B", 2, 32) and skewed_stride(1152, "128B", 2, 32)
            and skewed_stride(128, "128B", 2, 32))
    assert not skewed_stride(32, "64B", 2, 32) and skewed_stride(32, "64B", 3, 32)  # 64-byte rows
    assert not skewed_stride(512, "64B", 8, 32) and skewed_stride(768, "64B", 2, 32)
    assert skewed_stride(16, "32B", 2, 32) and not skewed_stride(256, "32B", 2, 32)  # one MMA's K fills a 32-byte row
    assert skewed_stride(16, "128B", 2, 128) and skewed_stride(16, "128B_base32B", 2, 128)  # whole rows: patterns only
    assert not skewed_stride(512, "128B_base32B", 2, 128)
    assert not skewed_stride(1040, "128B", 1, 32) and not skewed_stride(40, "none", 4, 32)

    def b_sbo(n: int, sbo: int, b_major: str = "k", swizzle: str = "128B", sparse: bool = False) -> list[str]:
        idesc = encode_idesc("f16", 128, n, b_major=b_major, sparse=sparse) if sparse else \
            encode_idesc("f16", 128, n, b_major=b_major)
        r = check_mma(idesc=idesc, kind="f16", a_desc=smem_word(), cta_group=1, sp=sparse or None,
                      b_desc=smem_word(start_address=0x4400, sbo=sbo, swizzle=swizzle,
                                       lbo=16 if b_major == "k" else 8192))
        return [f.field for f in r.findings if f.code == "MMA-SBO-ATOM"]

    assert b_sbo(32, 32) == [] and b_sbo(32, 1040) == ["b_desc.sbo"]
    # 4 and 8 groups per CTA at least: 128 and 256 bytes
    assert b_sbo(64, 32) == [] and b_sbo(128, 32) == ["b_desc.sbo"]
    assert b_sbo(32, 32, swizzle="64B") == [] and b_sbo(64, 32, swizzle="64B") == ["b_desc.sbo"]
    assert b_sbo(32, 32, swizzle="32B") == ["b_desc.sbo"]
    # .sp: B reads 64 bytes of K
    assert b_sbo(32, 64, sparse=True) == [] and b_sbo(32, 80, sparse=True) == ["b_desc.sbo"]
    assert b_sbo(128, 32, b_major="mn") == ["b_desc.sbo"]           # MN-major: 64 N of f16 per CTA fill the row
    assert b_sbo(16, 16, b_major="mn") == [] and b_sbo(16, 1040, b_major="mn") == ["b_desc.sbo"]  # 8 N: 16 bytes a row


def test_e47_hopper_reads_off_pattern_sbos_as_e9s_model_says():
    """The address model E47 reasons with holds off the pattern: wgmma.mma_async on an H200
    (tests/device/wgmma_probe, jobs e47_jobs.txt, recorded/e47_maps.txt.gz) read B (K-major, N =
    128: sixteen 8-row groups) with SBO 16, 32, 64 (inside one 128-byte row for the first groups,
    past it after), 1040, 1152, 32 from bytes 0x60 and 0x400, 64B and 32B swizzle: every element
    from the byte descgen.smem_layout predicts."""
    import gzip
    from pathlib import Path

    from descgen import smem_layout

    probe = Path(__file__).resolve().parent / "device" / "wgmma_probe"
    jobs = [line.split() for line in (probe / "e47_jobs.txt").read_text().splitlines() if not line.startswith("#")]
    lines = gzip.open(probe / "recorded" / "e47_maps.txt.gz", "rt").read().splitlines()
    assert lines[0].startswith("# device NVIDIA H") and "sm_90" in lines[0]
    seen, i = [], 1
    while i < len(lines):
        _, name, inst, op, word, mn, k, _base = lines[i].split()
        read = [[int(x) for x in lines[i + 1 + r].split()] for r in range(int(mn))]
        lay = smem_layout(int(word, 16), dtype=inst.split("_")[0], major="k", mn=int(mn), k=int(k), arch="sm_90a")
        assert lay.addresses() == read, name
        seen.append((name, inst, op, word))
        i += 1 + int(mn)
    assert sorted(seen) == sorted((j[0], j[1], j[2], j[3]) for j in jobs) and len(seen) == 22
    assert {int(j[3], 16) >> 32 & 0x3FFF for j in jobs} == {1, 2, 4, 65, 72, 33, 17}  # SBO / 16
