"""The 32-bit instruction descriptor (PTX ISA 9.1 §9.7.16.4.2, Tables 42-44), values from the spec."""

from __future__ import annotations

import pytest

import descgen
from descgen import EncodeError, UsageError, WordError, decode_idesc, encode_idesc

from conftest import (
    AB_CODES,
    DEFAULTS,
    DENSE_KINDS,
    K_OF,
    KINDS,
    MAX_SHIFT_CODES,
    MX_KINDS,
    MXF4_KINDS,
    NEGATE_OK,
    SELECTOR_VALUES,
    TRANSPOSE_OK,
    VALID_M,
    VALID_N,
    spec_bits,
    spec_encode_idesc,
)


def bits(word: int, lo: int, hi: int) -> int:
    return (word >> lo) & ((1 << (hi - lo + 1)) - 1)


def base_m(kind: str) -> int:
    return 128


def codes_of(exc: pytest.ExceptionInfo) -> list[str]:
    return [f.code for f in exc.value.findings]


# --------------------------------------------------------------------------------------------
# Real words (CUTLASS 4.x cute::UMMA::make_instr_desc, as the project's reference notes record them).

REAL_WORDS = [
    # word, kind, encode arguments, configuration
    (0x08400010, "f16", dict(m=128, n=256, atype="f16", btype="f16", dtype="f32")),
    (0x08200000, "f16", dict(m=128, n=128, atype="f16", btype="f16", dtype="f16")),
    (0x08400910, "tf32", dict(m=128, n=256, atype="tf32", btype="tf32", dtype="f32")),
    (0x08201690, "f8f6f4", dict(m=128, n=128, atype="e2m1", btype="e2m1", dtype="f32")),
    (0x08200020, "i8", dict(m=128, n=128, atype="u8", btype="u8", dtype="s32")),
]


@pytest.mark.parametrize("word, kind, args", REAL_WORDS, ids=[hex(w) for w, _, _ in REAL_WORDS])
def test_real_words_encode(word, kind, args):
    args = dict(args)
    assert encode_idesc(kind, args.pop("m"), args.pop("n"), **args) == word


@pytest.mark.parametrize("word, kind, args", REAL_WORDS, ids=[hex(w) for w, _, _ in REAL_WORDS])
def test_real_words_decode(word, kind, args):
    d = decode_idesc(word, kind)
    assert d.ok and not d.findings
    for name, value in args.items():
        assert d.value(name) == value, name
    assert d.value("a_major") == d.value("b_major") == "k"
    assert d.value("k") == K_OF[kind][0]


def test_real_word_fields_by_hand():
    # 0x08400010: dtype (4-5) = 1 (F32), atype = btype = 0 (F16), N >> 3 = 32, M >> 4 = 8
    w = 0x08400010
    assert (bits(w, 4, 5), bits(w, 7, 9), bits(w, 10, 12), bits(w, 17, 22), bits(w, 24, 28)) == (1, 0, 0, 32, 8)
    d = decode_idesc(w, "f16")
    assert d["n"].raw == 32 and d["n"].value == 256
    assert d["m"].raw == 8 and d["m"].value == 128
    assert d["dtype"].raw == 1


# --------------------------------------------------------------------------------------------
# Type codes (Tables 42-44).


@pytest.mark.parametrize("kind", KINDS)
def test_every_atype_btype_code(kind):
    bits_ = spec_bits(kind)
    m = VALID_M[kind][-1]
    for name, code in AB_CODES[kind].items():
        if kind == "f16" and name == "bf16":
            dtype = "f32"
        else:
            dtype = None
        wa = encode_idesc(kind, m, 64, atype=name, dtype=dtype)
        wb = encode_idesc(kind, m, 64, btype=name, dtype=dtype)
        assert bits(wa, *bits_["atype"]) == code
        assert bits(wb, *bits_["btype"]) == code
        assert decode_idesc(wa, kind).value("atype") == name
        assert decode_idesc(wb, kind).value("btype") == name


@pytest.mark.parametrize(
    "kind, name, code",
    [
        ("f16", "f16", 0), ("f16", "bf16", 1), ("tf32", "tf32", 2),
        ("f8f6f4", "e4m3", 0), ("f8f6f4", "e5m2", 1), ("f8f6f4", "e2m3", 3), ("f8f6f4", "e3m2", 4),
        ("f8f6f4", "e2m1", 5), ("mxf8f6f4", "e2m1", 5), ("mxf8f6f4", "e3m2", 4),
        ("mxf4", "e2m1", 1), ("mxf4nvf4", "e2m1", 1), ("i8", "u8", 0), ("i8", "s8", 1),
    ],
)
def test_type_codes_literal(kind, name, code):
    """The literal values of Tables 42/43/44 (independent of the conftest model)."""
    w = encode_idesc(kind, 128, 64, atype=name, btype=name, dtype="f32" if kind == "f16" else None)
    assert (w >> 7) & 0b111 == code
    bw = 0b11 if kind in MXF4_KINDS else 0b111
    assert (w >> 10) & bw == code


@pytest.mark.parametrize("kind, dtype, code", [("f16", "f16", 0), ("f16", "f32", 1), ("f8f6f4", "f16", 0),
                                               ("f8f6f4", "f32", 1), ("tf32", "f32", 1), ("i8", "s32", 2)])
def test_dtype_codes(kind, dtype, code):
    w = encode_idesc(kind, 128, 64, dtype=dtype)
    assert bits(w, 4, 5) == code
    assert decode_idesc(w, kind).value("dtype") == dtype


@pytest.mark.parametrize("kind, dtype", [("tf32", "f16"), ("i8", "f32"), ("f16", "s32"), ("f8f6f4", "s32")])
def test_dtype_not_of_kind(kind, dtype):
    with pytest.raises(EncodeError) as info:
        encode_idesc(kind, 128, 64, dtype=dtype)
    assert info.value.code == "IDESC-DTYPE-CODE"


@pytest.mark.parametrize("kind", MX_KINDS)
def test_mx_kinds_have_no_dtype_field(kind):
    w = encode_idesc(kind, 128, 64)
    assert encode_idesc(kind, 128, 64, dtype="f32") == w  # the implied D type is accepted
    d = decode_idesc(w, kind)
    assert "dtype" not in d.values()
    assert d.value("dtype") == "f32"  # derived (Table 39: D is f32)
    with pytest.raises(EncodeError) as info:
        encode_idesc(kind, 128, 64, dtype="f16")
    assert info.value.code == "IDESC-DTYPE-ABSENT"
    assert isinstance(info.value, EncodeError)


@pytest.mark.parametrize(
    "kind, scale, code",
    [("mxf8f6f4", "ue8m0", 1), ("mxf4", "ue8m0", 1), ("mxf4nvf4", "ue8m0", 1), ("mxf4nvf4", "ue4m3", 0)],
)
def test_scale_type_codes(kind, scale, code):
    w = encode_idesc(kind, 128, 64, scale_type=scale)
    assert bits(w, 23, 23) == code
    assert decode_idesc(w, kind).value("scale_type") == scale


@pytest.mark.parametrize("kind", ["mxf8f6f4", "mxf4"])
def test_ue4m3_only_for_mxf4nvf4(kind):
    with pytest.raises(EncodeError) as info:
        encode_idesc(kind, 128, 64, scale_type="ue4m3")
    assert info.value.code == "IDESC-SCALE-TYPE-CODE"
    # and the decoder flags bit 23 = 0 under these kinds
    w = encode_idesc(kind, 128, 64) & ~(1 << 23)
    d = decode_idesc(w, kind)
    assert not d.ok
    assert [f.code for f in d.errors] == ["IDESC-SCALE-TYPE-CODE"]
    assert d.value("scale_type") is None


def test_type_names():
    assert descgen.type_names("atype") == ("tf32", "f16", "bf16", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "u8", "s8")
    assert descgen.type_names("dtype") == ("f32", "f16", "s32")
    assert set(descgen.type_names("scale_type")) == {"ue8m0", "ue4m3"}


# --------------------------------------------------------------------------------------------
# Defaults per kind.


@pytest.mark.parametrize("kind", KINDS)
def test_defaults(kind):
    atype, btype, dtype, scale = DEFAULTS[kind]
    w = encode_idesc(kind, 128, 64)
    d = decode_idesc(w, kind)
    assert (d.value("atype"), d.value("btype")) == (atype, btype)
    if dtype is not None:
        assert d.value("dtype") == dtype
    else:
        assert d.value("dtype") == "f32"
        assert d.value("scale_type") == scale
    explicit = dict(atype=atype, btype=btype, dtype=dtype, scale_type=scale)
    assert encode_idesc(kind, 128, 64, **explicit) == w == spec_encode_idesc(kind, 128, 64)
    assert d.ok and not d.findings


def test_default_literals():
    assert encode_idesc("f16", 128, 64) == (1 << 4) | (8 << 24) | (8 << 17)  # A=B=f16 (0), D=f32 (1)
    assert encode_idesc("tf32", 128, 64) == (1 << 4) | (2 << 7) | (2 << 10) | (8 << 24) | (8 << 17)
    assert encode_idesc("f8f6f4", 128, 64) == (1 << 4) | (8 << 24) | (8 << 17)  # e4m3 = 0
    assert encode_idesc("i8", 128, 64) == (2 << 4) | (1 << 7) | (1 << 10) | (8 << 24) | (8 << 17)  # s8, s32
    assert encode_idesc("mxf8f6f4", 128, 64) == (1 << 23) | (1 << 27) | (8 << 17)  # e4m3, ue8m0
    assert encode_idesc("mxf4", 128, 64) == (1 << 7) | (1 << 10) | (1 << 23) | (1 << 27) | (8 << 17)
    assert encode_idesc("mxf4nvf4", 128, 64) == (1 << 7) | (1 << 10) | (1 << 27) | (8 << 17)  # ue4m3 = 0


# --------------------------------------------------------------------------------------------
# Bit positions of every flag and number.


def _flip(kind, **kw):
    """(base word, word with kw) for kind."""
    m = 128
    return encode_idesc(kind, m, 64), encode_idesc(kind, m, 64, **kw)


@pytest.mark.parametrize("kind", KINDS)
def test_sparse_bit_2(kind):
    base, w = _flip(kind, sparse=True)
    assert base ^ w == 1 << 2
    d = decode_idesc(w, kind)
    assert d.value("sparse") is True
    assert d.value("k") == K_OF[kind][1]
    assert decode_idesc(base, kind).value("k") == K_OF[kind][0]


def test_saturate_bit_3_i8_only():
    base, w = _flip("i8", saturate=True)
    assert base ^ w == 1 << 3
    assert decode_idesc(w, "i8").value("saturate") is True
    for kind in ("tf32", "f16", "f8f6f4"):
        with pytest.raises(EncodeError) as info:
            encode_idesc(kind, 128, 64, saturate=True)
        assert info.value.code == "IDESC-SATURATE-VALUE"
        # decoding bit 3 under these kinds is an error
        assert "IDESC-SATURATE-VALUE" in [f.code for f in decode_idesc(encode_idesc(kind, 128, 64) | 8, kind).errors]
    for kind in MX_KINDS:
        with pytest.raises(EncodeError) as info:
            encode_idesc(kind, 128, 64, saturate=True)
        assert info.value.code == "IDESC-SATURATE-ABSENT"
        assert [f.code for f in decode_idesc(encode_idesc(kind, 128, 64) | 8, kind).errors] == ["IDESC-RESERVED-3"]


@pytest.mark.parametrize("kind", KINDS)
def test_negate_bits_13_14(kind):
    if NEGATE_OK[kind]:
        base, wa = _flip(kind, negate_a=True)
        _, wb = _flip(kind, negate_b=True)
        assert base ^ wa == 1 << 13
        assert base ^ wb == 1 << 14
        assert decode_idesc(wa, kind).value("negate_a") is True
        assert decode_idesc(wb, kind).value("negate_b") is True
    else:  # Table 49: i8 has no negate
        for name in ("negate_a", "negate_b"):
            with pytest.raises(EncodeError) as info:
                encode_idesc(kind, 128, 64, **{name: True})
            assert info.value.code == f"IDESC-{name.upper().replace('_', '-')}-VALUE"
        assert not decode_idesc(encode_idesc(kind, 128, 64) | 1 << 13, kind).ok


@pytest.mark.parametrize("kind", KINDS)
def test_transpose_bits_15_16(kind):
    if TRANSPOSE_OK[kind]:
        base, wa = _flip(kind, a_major="mn")
        _, wb = _flip(kind, b_major="mn")
        assert base ^ wa == 1 << 15
        assert base ^ wb == 1 << 16
        assert decode_idesc(wa, kind).value("a_major") == "mn"
        assert decode_idesc(wb, kind).value("b_major") == "mn"
    else:  # Table 44 / Table 49: no transpose for mxf4, mxf4nvf4
        for name in ("a_major", "b_major"):
            with pytest.raises(EncodeError) as info:
                encode_idesc(kind, 128, 64, **{name: "mn"})
            assert info.value.code == f"IDESC-{name.upper().replace('_', '-')}-CODE"
        d = decode_idesc(encode_idesc(kind, 128, 64) | 1 << 16, kind)
        assert [f.code for f in d.errors] == ["IDESC-B-MAJOR-CODE"]


@pytest.mark.parametrize("kind", DENSE_KINDS)
@pytest.mark.parametrize("shift, code", sorted(MAX_SHIFT_CODES.items()))
def test_max_shift_bits_30_31(kind, shift, code):
    w = encode_idesc(kind, 128, 64, max_shift=shift)
    assert bits(w, 30, 31) == code
    assert w & ~(0b11 << 30) == encode_idesc(kind, 128, 64)
    assert decode_idesc(w, kind).value("max_shift") == shift


@pytest.mark.parametrize("bad", [1, 4, 24, 64, -8])
def test_max_shift_other_values_rejected(bad):
    with pytest.raises(EncodeError) as info:
        encode_idesc("f16", 128, 64, max_shift=bad)
    assert info.value.code == "IDESC-MAX-SHIFT-CODE"


@pytest.mark.parametrize("kind", MX_KINDS)
@pytest.mark.parametrize("arg, value", [("max_shift", 8), ("sparsity_selector", 1)])
def test_table42_only_fields_absent_for_mx(kind, arg, value):
    with pytest.raises(EncodeError) as info:
        encode_idesc(kind, 128, 64, **{arg: value})
    assert info.value.code == f"IDESC-{arg.upper().replace('_', '-')}-ABSENT"


@pytest.mark.parametrize("kind", DENSE_KINDS)
def test_sparsity_selector_bits_0_1(kind):
    for sel in SELECTOR_VALUES[kind]:
        w = encode_idesc(kind, 128, 64, sparse=True, sparsity_selector=sel)
        assert bits(w, 0, 1) == sel
        assert w & ~0b11 == encode_idesc(kind, 128, 64, sparse=True)
        assert decode_idesc(w, kind).value("sparsity_selector") == sel
    # Table 42 "0-3"; §9.7.16.10.8.4.5-6: "must be 0 for .kind::i8 and .kind::f8f6f4" (errata E15)
    for bad in sorted(set(range(5)) - set(SELECTOR_VALUES[kind])):
        with pytest.raises(EncodeError) as info:
            encode_idesc(kind, 128, 64, sparse=True, sparsity_selector=bad)
        assert info.value.code == "IDESC-SPARSITY-SELECTOR-RANGE"


@pytest.mark.parametrize("kind", DENSE_KINDS)
def test_m_bits_24_28_table42(kind):
    for m in VALID_M[kind]:
        w = encode_idesc(kind, m, 64)
        assert bits(w, 24, 28) == m >> 4
        assert decode_idesc(w, kind).value("m") == m
    assert bits(encode_idesc(kind, 64, 64), 24, 28) == 4
    assert bits(encode_idesc(kind, 256, 64), 24, 28) == 16


@pytest.mark.parametrize("kind", MX_KINDS)
def test_m_bits_27_28_tables_43_44(kind):
    assert VALID_M[kind] == (128, 256)
    for m, field in ((128, 1), (256, 2)):
        w = encode_idesc(kind, m, 64)
        assert bits(w, 27, 28) == field
        assert bits(w, 24, 26) == 0
        # errata 5: CUTLASS writes M >> 4 into bits 24-28; same bits for the legal M
        assert bits(w, 24, 28) == m >> 4
        assert decode_idesc(w, kind).value("m") == m
    with pytest.raises(EncodeError) as info:
        encode_idesc(kind, 64, 64)
    assert info.value.code in ("IDESC-M-ALIGN", "IDESC-M-RANGE")
    # bits 24-26 are reserved: a word with M >> 4 = 12 (M = 192 the CUTLASS way) is flagged
    d = decode_idesc((encode_idesc(kind, 128, 64) & ~(0x1F << 24)) | (12 << 24), kind)
    assert "IDESC-RESERVED-24" in [f.code for f in d.findings]


@pytest.mark.parametrize("kind", KINDS)
def test_n_bits_17_22(kind):
    for n in VALID_N[kind]:
        w = encode_idesc(kind, base_m(kind), n)
        assert bits(w, 17, 22) == n >> 3
        assert w & ~(0x3F << 17) == encode_idesc(kind, base_m(kind), 64) & ~(0x3F << 17)
        assert decode_idesc(w, kind).value("n") == n


@pytest.mark.parametrize("kind", MX_KINDS)
def test_scale_factor_ids_bits_4_5_and_29_30(kind):
    # IDs 0-3 are legal for mxf8f6f4 (1X / .block32) and, for mxf4/mxf4nvf4, at K = 96 (.block32)
    m, k = (128, None) if kind == "mxf8f6f4" else (256, 96)
    for i in range(4):
        wb = encode_idesc(kind, m, 64, b_sf_id=i, k=k)
        wa = encode_idesc(kind, m, 64, a_sf_id=i, k=k)
        assert bits(wb, 4, 5) == i and bits(wa, 29, 30) == i
        assert wb & ~(0b11 << 4) == wa & ~(0b11 << 29) == encode_idesc(kind, m, 64, k=k)
        assert decode_idesc(wb, kind).value("b_sf_id") == i
        assert decode_idesc(wa, kind).value("a_sf_id") == i
    for arg in ("a_sf_id", "b_sf_id"):
        with pytest.raises(EncodeError) as info:
            encode_idesc(kind, 128, 64, **{arg: 4})
        assert info.value.code == f"IDESC-{arg.upper().replace('_', '-')}-RANGE"


@pytest.mark.parametrize("kind", DENSE_KINDS)
def test_scale_factor_ids_absent_for_table42(kind):
    for arg in ("a_sf_id", "b_sf_id"):
        with pytest.raises(EncodeError) as info:
            encode_idesc(kind, 128, 64, **{arg: 2})
        assert info.value.code == f"IDESC-{arg.upper().replace('_', '-')}-ABSENT"


@pytest.mark.parametrize("kind", MXF4_KINDS)
def test_k96_bit_31(kind):
    base = encode_idesc(kind, 256, 64)
    w = encode_idesc(kind, 256, 64, k=96)
    assert base ^ w == 1 << 31
    d = decode_idesc(w, kind)
    assert d.value("k") == 96 and d["k_dim"].raw == 1
    assert decode_idesc(base, kind).value("k") == 64
    # the K Table 39 fixes for the sparsity is accepted and leaves bit 31 clear
    assert encode_idesc(kind, 256, 64, k=64) == base
    assert encode_idesc(kind, 256, 64, sparse=True, k=128) == encode_idesc(kind, 256, 64, sparse=True)
    with pytest.raises(EncodeError) as info:
        encode_idesc(kind, 256, 64, k=96, sparse=True)
    assert info.value.code == "IDESC-K-VALUE"


@pytest.mark.parametrize("kind", [k for k in KINDS if k not in MXF4_KINDS])
def test_k_fixed_for_other_kinds(kind):
    dense, sparse = K_OF[kind]
    assert encode_idesc(kind, 128, 64, k=dense) == encode_idesc(kind, 128, 64)
    assert encode_idesc(kind, 128, 64, sparse=True, k=sparse) == encode_idesc(kind, 128, 64, sparse=True)
    for bad, sp in ((96, False), (sparse, False), (dense, True), (True, False)):
        with pytest.raises(EncodeError) as info:
            encode_idesc(kind, 128, 64, k=bad, sparse=sp)
        assert info.value.code == "IDESC-K-VALUE"
        assert info.value.field == "k"


@pytest.mark.parametrize("kind, dense, sparse", [(k, *K_OF[k]) for k in KINDS])
def test_mma_k(kind, dense, sparse):
    assert descgen.mma_k(kind, False) == dense
    assert descgen.mma_k(kind, True) == sparse
    assert descgen.mma_k(kind, False, k96=True) == 96


# --------------------------------------------------------------------------------------------
# Errors: exception type, code, message.


def test_unknown_kind():
    for bad in ("f64", "", None, "kind::", 16):
        with pytest.raises(UsageError) as info:
            encode_idesc(bad, 128, 64)
        assert info.value.code == "IDESC-KIND"
    with pytest.raises(UsageError) as info:
        decode_idesc(0x08400010, "bf16")
    assert info.value.code == "IDESC-KIND"
    assert "f16" in info.value.allowed and "mxf4nvf4" in info.value.allowed


@pytest.mark.parametrize("spelling", ["f16", "kind::f16", ".kind::f16", " F16 ", ".KIND::F16"])
def test_kind_spellings(spelling):
    assert descgen.normalize_kind(spelling) == "f16"
    assert encode_idesc(spelling, 128, 256) == 0x08400010
    assert decode_idesc(0x08400010, spelling).kind == "f16"


def test_n_not_multiple_of_8():
    with pytest.raises(EncodeError) as info:
        encode_idesc("f16", 128, 100)
    e = info.value
    assert (e.code, e.field, e.value) == ("IDESC-N-ALIGN", "n", 100)
    assert "8" in e.rule


def test_n_40_for_i8():
    with pytest.raises(EncodeError) as info:
        encode_idesc("i8", 128, 40)
    e = info.value
    assert (e.code, e.field, e.value) == ("IDESC-N-RANGE", "n", 40)
    assert "48" in e.allowed and "32" in e.allowed
    # N = 40 is legal for every other Table 42 kind
    for kind in ("tf32", "f16", "f8f6f4"):
        assert bits(encode_idesc(kind, 128, 40), 17, 22) == 5


@pytest.mark.parametrize("n", [0, 264, 512, -8])
def test_n_out_of_range(n):
    with pytest.raises(EncodeError) as info:
        encode_idesc("f16", 128, n)
    assert info.value.code == "IDESC-N-RANGE"


def test_m_48():
    with pytest.raises(EncodeError) as info:
        encode_idesc("f16", 48, 64)
    e = info.value
    # 48 is a multiple of 16 (it fits M >> 4), so the problem is the range Table 39 allows
    assert (e.code, e.field, e.value) == ("IDESC-M-RANGE", "m", 48)
    assert "64" in e.allowed and "128" in e.allowed
    with pytest.raises(EncodeError) as info:
        encode_idesc("f16", 40, 64)
    assert info.value.code == "IDESC-M-ALIGN"


@pytest.mark.parametrize(
    "kind, m, n, kwargs, code, field, value, allowed",
    [
        ("tf32", 128, 64, dict(atype="bf16"), "IDESC-ATYPE-CODE", "atype", "bf16", "tf32"),
        ("f16", 128, 64, dict(saturate=True), "IDESC-SATURATE-VALUE", "saturate", True, "false"),
        ("f16", 128, 64, dict(scale_type="ue8m0"), "IDESC-SCALE-TYPE-ABSENT", "scale_type", "ue8m0", "none"),
        ("mxf8f6f4", 128, 64, dict(dtype="f16"), "IDESC-DTYPE-ABSENT", "dtype", "f16", "f32"),
        ("mxf4nvf4", 256, 64, dict(k=96, sparse=True), "IDESC-K-VALUE", "k", 96, "128"),
    ],
)
def test_encode_error_names_field_value_and_allowed(kind, m, n, kwargs, code, field, value, allowed):
    with pytest.raises(EncodeError) as info:
        encode_idesc(kind, m, n, **kwargs)
    e = info.value
    assert (e.code, e.field, e.value) == (code, field, value)
    assert allowed in e.allowed


def test_check_false_encodes_illegal_but_fitting_values():
    w = encode_idesc("i8", 128, 40, check=False)
    assert isinstance(w, descgen.Word) and isinstance(w, int)
    assert [f.code for f in w.findings] == ["IDESC-N-RANGE"]
    assert bits(w, 17, 22) == 5
    assert w == spec_encode_idesc("i8", 128, 64) & ~(0x3F << 17) | 5 << 17
    d = decode_idesc(w, "i8")
    assert [f.code for f in d.errors] == ["IDESC-N-RANGE"]
    assert d.value("n") == 40
    w = encode_idesc("f16", 128, 64, saturate=True, check=False)
    assert bits(w, 3, 3) == 1
    assert [f.code for f in w.findings] == ["IDESC-SATURATE-VALUE"]
    # a legal word is the same with or without checks, and carries no findings
    legal = encode_idesc("f16", 128, 256, check=False)
    assert legal == 0x08400010
    assert not legal.findings


@pytest.mark.parametrize(
    "kwargs",
    [dict(n=1024), dict(n=44), dict(atype="bf17"), dict(m=4096)],
    ids=["n-too-wide", "n-misaligned", "unknown-member", "m-too-wide"],
)
def test_check_false_still_rejects_what_does_not_fit(kwargs):
    args = dict(m=128, n=64)
    args.update(kwargs)
    with pytest.raises(EncodeError):
        encode_idesc("f16", args.pop("m"), args.pop("n"), check=False, **args)


def test_error_message_names_field_value_allowed_and_source():
    with pytest.raises(EncodeError) as info:
        encode_idesc("i8", 128, 40)
    msg = str(info.value)
    for part in ("n = 40", "8..32 step 8, 48..256 step 16", "Table 42", "IDESC-N-RANGE", ".kind::i8"):
        assert part in msg, (part, msg)
    assert "Table" in info.value.source
    with pytest.raises(EncodeError) as info:
        encode_idesc("tf32", 128, 64, atype="bf16")
    msg = str(info.value)
    for part in ("atype", "'bf16'", "tf32 = 2", "Table 42"):
        assert part in msg, (part, msg)


def test_encode_error_lists_every_problem_at_once():
    with pytest.raises(EncodeError) as info:
        encode_idesc("f16", 100, 44, atype="xx", saturate=True)
    found = codes_of(info)
    assert sorted(found) == sorted(["IDESC-SATURATE-VALUE", "IDESC-ATYPE-CODE", "IDESC-N-ALIGN", "IDESC-M-ALIGN"])
    msg = str(info.value)
    assert msg.count("\n  - ") == 4
    for code in found:
        assert code in msg
    assert {f.field for f in info.value.findings} == {"saturate", "atype", "n", "m"}
    assert all(f.severity == "error" for f in info.value.findings)


def test_absent_fields_reported_together():
    with pytest.raises(EncodeError) as info:
        encode_idesc("f16", 128, 64, scale_type="ue8m0", a_sf_id=1, b_sf_id=2)
    assert sorted(codes_of(info)) == ["IDESC-A-SF-ID-ABSENT", "IDESC-B-SF-ID-ABSENT", "IDESC-SCALE-TYPE-ABSENT"]


# --------------------------------------------------------------------------------------------
# Decoding.


def test_consistent_kinds():
    assert descgen.consistent_kinds(0x08400010) == ["f16", "f8f6f4"]
    assert descgen.consistent_kinds(0x08400910) == ["tf32"]
    assert descgen.consistent_kinds(0x08200020) == ["i8"]
    nv = descgen.consistent_kinds(encode_idesc("mxf4nvf4", 128, 64))  # ue4m3 (bit 23 = 0)
    assert "mxf4nvf4" in nv and "mxf4" not in nv and "mxf8f6f4" not in nv
    # e2m1 = 1 under Table 44 reads as e5m2 = 1 under Table 43
    assert descgen.consistent_kinds(encode_idesc("mxf4", 128, 64)) == ["mxf8f6f4", "mxf4", "mxf4nvf4"]
    assert descgen.consistent_kinds(0xFFFFFFFF) == []


def test_decode_idesc_all():
    all_ = descgen.decode_idesc_all(0x08400010)
    assert list(all_) == list(KINDS)
    assert all_["f16"].layout == "idesc_dense"
    assert all_["mxf8f6f4"].layout == "idesc_mxf8f6f4"
    assert all_["mxf4"].layout == all_["mxf4nvf4"].layout == "idesc_mxf4"
    assert descgen.KIND_LAYOUTS == {"tf32": "idesc_dense", "f16": "idesc_dense", "f8f6f4": "idesc_dense",
                                    "i8": "idesc_dense", "mxf8f6f4": "idesc_mxf8f6f4", "mxf4": "idesc_mxf4",
                                    "mxf4nvf4": "idesc_mxf4"}


@pytest.mark.parametrize("word", [-1, 2**32, 2**40, True, False, "0x08400010", 1.0, None, b"\x00"])
def test_decode_rejects_non_words(word):
    with pytest.raises(WordError) as info:
        decode_idesc(word, "f16")
    assert info.value.code == "IDESC-WORD-RANGE"
    assert info.value.field == "word"


def test_decode_accepts_extremes():
    for kind in KINDS:
        assert decode_idesc(0, kind).word == 0
        assert decode_idesc(2**32 - 1, kind).word == 2**32 - 1


@pytest.mark.parametrize(
    "kind, bit, code",
    [
        ("f16", 6, "IDESC-RESERVED-6"), ("f16", 23, "IDESC-RESERVED-23"), ("f16", 29, "IDESC-RESERVED-29"),
        ("mxf8f6f4", 3, "IDESC-RESERVED-3"), ("mxf8f6f4", 31, "IDESC-RESERVED-31"),
        ("mxf8f6f4", 24, "IDESC-RESERVED-24"), ("mxf4", 12, "IDESC-RESERVED-12"), ("mxf4", 6, "IDESC-RESERVED-6"),
    ],
)
def test_reserved_bits_are_error_findings(kind, bit, code):
    d = decode_idesc(encode_idesc(kind, 128, 64) | 1 << bit, kind)
    assert [f.code for f in d.findings] == [code]
    assert d.findings[0].severity == "error"
    assert not d.ok


@pytest.mark.parametrize("kind", MX_KINDS)
def test_mx_bits_0_1_are_a_warning(kind):
    """Errata 6: CUTLASS writes a sparsity selector in reserved bits 0-1 of the mx layouts."""
    d = decode_idesc(encode_idesc(kind, 256, 64, sparse=True) | 0b10, kind)
    assert [(f.code, f.severity) for f in d.findings] == [("IDESC-RESERVED-0", "warning")]
    assert d.ok


def test_unknown_type_code_decodes_to_none():
    w = encode_idesc("f8f6f4", 128, 64) | (2 << 7)  # code 2 is not an f8f6f4 type
    d = decode_idesc(w, "f8f6f4")
    assert d.value("atype") is None
    assert d["atype"].note == "unknown code 2"
    assert [f.code for f in d.errors] == ["IDESC-ATYPE-CODE"]


def test_decode_flags_illegal_m_and_n():
    d = decode_idesc(0, "f16")
    assert {f.code for f in d.errors} == {"IDESC-M-RANGE", "IDESC-N-RANGE"}
    assert d.value("m") == 0 and d.value("n") == 0


# --------------------------------------------------------------------------------------------
# Known gaps (library bugs): see the final report.


@pytest.mark.parametrize("kind", MXF4_KINDS)
def test_decode_flags_sparse_k96(kind):
    w = encode_idesc(kind, 256, 64, sparse=True) | 1 << 31
    d = decode_idesc(w, kind)
    assert not d.ok
    assert d.value("k") != 96


@pytest.mark.parametrize(
    "kind, m, n, kwargs, code",
    [
        # M = 256 exists only with cta_group::2, where N steps by 16 (Table 39)
        pytest.param("f16", 256, 8, {}, "IDESC-N-SHAPE", id="f16-M256-N8"),
        # M = 32 exists only with .ws, where N is 64, 128 or 256
        pytest.param("f16", 32, 8, {}, "IDESC-N-SHAPE", id="f16-M32-N8"),
        # K1 = 96 steps N by 16 with one CTA (E41: 128xNxK1) as with two (256xNxK1)
        pytest.param("mxf4", 128, 136, {"k": 96}, "IDESC-N-SHAPE", id="mxf4-K96-M128-N136"),
        # K1 = 96 rows step N by 16
        pytest.param("mxf4nvf4", 256, 8, {"k": 96}, "IDESC-N-SHAPE", id="mxf4nvf4-K96-N8"),
        # Table 50: 8-bit transposed B needs N in steps of 16 (cta_group::1) or 32 (cta_group::2)
        pytest.param("i8", 128, 8, {"b_major": "mn"}, "IDESC-N-TRANSPOSE-8BIT", id="i8-transposed-B-N8"),
    ],
)
def test_table39_combinations_rejected(kind, m, n, kwargs, code):
    """No context makes these legal, so the encoder refuses them without being told the context."""
    with pytest.raises(EncodeError) as exc:
        encode_idesc(kind, m, n, **kwargs)
    assert [f.code for f in exc.value.findings] == [code]
    word = encode_idesc(kind, m, n, **kwargs, check=False)
    assert [f.code for f in word.findings] == [code]
    assert [f.code for f in decode_idesc(word, kind).errors] == [code]


@pytest.mark.parametrize("atype, btype", [("bf16", "bf16"), ("bf16", "f16"), ("f16", "bf16")])
def test_f16_accumulator_only_for_f16_inputs(atype, btype):
    word = (0 << 4) | (AB_CODES["f16"][atype] << 7) | (AB_CODES["f16"][btype] << 10) | (8 << 24) | (8 << 17)
    assert not decode_idesc(word, "f16").ok
    with pytest.raises(EncodeError):
        encode_idesc("f16", 128, 64, atype=atype, btype=btype, dtype="f16")


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param(dict(m=128.0, n=256), id="float-m"),
        pytest.param(dict(m=128, n=256.0), id="float-n"),
        pytest.param(dict(m=128, n=256, sparse=True, sparsity_selector=True), id="bool-selector"),
        pytest.param(dict(m=128, n=256, max_shift=False), id="bool-max-shift"),
    ],
)
def test_encode_rejects_non_integers(kwargs):
    args = dict(kwargs)
    with pytest.raises(EncodeError):
        encode_idesc("f16", args.pop("m"), args.pop("n"), **args)


def test_encode_rejects_non_integers_on_the_checked_path():
    """The same on the checked path (another field is wrong too)."""
    with pytest.raises(EncodeError) as info:
        encode_idesc("f16", 128.0, 44)
    assert "IDESC-M-TYPE" in codes_of(info)
