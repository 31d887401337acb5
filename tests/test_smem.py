"""The 64-bit shared memory descriptor (PTX ISA 9.1 §9.7.16.4.1, Tables 40-41; §9.7.16.3)."""

from __future__ import annotations

import pytest

import descgen
from descgen import EncodeError, WordError, decode_smem, encode_smem

from conftest import SWIZZLE_CODES, spec_encode_smem


def bits(word: int, lo: int, hi: int) -> int:
    return (word >> lo) & ((1 << (hi - lo + 1)) - 1)


# --------------------------------------------------------------------------------------------
# §9.7.16.3.3, the five canonical-layout worked examples (Figures 188-192).
# (name, swizzle, LBO in bytes, SBO in bytes, LBO field, SBO field)
SIZEOF = {"tf32": 4, "bf16": 2}
EXAMPLES = [
    # K-major, no swizzle, tf32: LBO = 64*sizeof(tf32), SBO = 32*sizeof(tf32); encodings 16 and 8
    ("k-none-tf32", "none", 64 * SIZEOF["tf32"], 32 * SIZEOF["tf32"], 16, 8),
    # K-major, 32B swizzle, tf32: LBO "NA", encoding "1 (assumed)"; SBO = 64*sizeof(tf32) -> 16
    ("k-32B-tf32", "32B", 16, 64 * SIZEOF["tf32"], 1, 16),
    # MN-major, no swizzle, bf16: LBO = 128*sizeof(bf16) -> 16, SBO = 64*sizeof(bf16) -> 8
    ("mn-none-bf16", "none", 128 * SIZEOF["bf16"], 64 * SIZEOF["bf16"], 16, 8),
    # MN-major, 32B swizzle, bf16: LBO = 128*sizeof(bf16) -> 16, SBO = 256*sizeof(bf16) -> 32
    ("mn-32B-bf16", "32B", 128 * SIZEOF["bf16"], 256 * SIZEOF["bf16"], 16, 32),
    # MN-major, 64B swizzle, bf16: LBO = 256*sizeof(bf16) -> 32, SBO = 512*sizeof(bf16) -> 64
    ("mn-64B-bf16", "64B", 256 * SIZEOF["bf16"], 512 * SIZEOF["bf16"], 32, 64),
]


@pytest.mark.parametrize("name, swizzle, lbo, sbo, lbo_field, sbo_field", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_canonical_layout_examples(name, swizzle, lbo, sbo, lbo_field, sbo_field):
    w = encode_smem(start_address=0, lbo=lbo, sbo=sbo, swizzle=swizzle)
    assert bits(w, 16, 29) == lbo_field
    assert bits(w, 32, 45) == sbo_field
    assert lbo >> 4 == lbo_field and sbo >> 4 == sbo_field  # "(LBO) >> 4", "(SBO) >> 4"
    assert bits(w, 61, 63) == SWIZZLE_CODES[swizzle]
    d = decode_smem(w)
    assert d.ok and not d.findings
    assert (d.value("lbo"), d.value("sbo"), d.value("swizzle")) == (lbo, sbo, swizzle)
    assert d["lbo"].raw == lbo_field and d["sbo"].raw == sbo_field
    assert d["lbo"].unit == d["sbo"].unit == "bytes"


def test_k_major_swizzled_lbo_may_be_zero():
    """Errata 8: the LBO of K-major swizzled layouts is ignored; 0 is as good as the assumed 1."""
    w = encode_smem(start_address=0, lbo=0, sbo=256, swizzle="32B")
    assert bits(w, 16, 29) == 0
    assert decode_smem(w).ok


# --------------------------------------------------------------------------------------------
# Real words (CUTLASS 4.x sm100 collectives, as the project's reference notes record them).

REAL = [
    # e2m1, K-major, 32B swizzle, 128x64 tile, start 0x8000: LBO field 1 (assumed), SBO 256 B
    (0xC000401000010800, dict(start_address=0x8000, lbo=16, sbo=256, swizzle="32B")),
    # 16-bit, MN-major, no swizzle, start 0x400: LBO 2048 B, SBO 128 B
    (0x0000400800800040, dict(start_address=0x400, lbo=2048, sbo=128, swizzle="none")),
    # 8-bit, MN-major, 128B swizzle, start 0x400: LBO 0, SBO 1024 B
    (0x4000404000000040, dict(start_address=0x400, lbo=0, sbo=1024, swizzle="128B")),
]


@pytest.mark.parametrize("word, args", REAL, ids=[hex(w) for w, _ in REAL])
def test_real_words(word, args):
    assert encode_smem(**args) == word
    d = decode_smem(word)
    assert d.ok and not d.findings
    for name, value in args.items():
        assert d.value(name) == value
    assert d.value("base_offset") == 0
    assert d.value("lbo_mode") == "relative"
    assert d.hex == f"{word:#018x}"


def test_real_word_raw_fields():
    d = decode_smem(0xC000401000010800)
    assert d["start_address"].raw == 0x800
    assert d["lbo"].raw == 1
    assert d["sbo"].raw == 16
    assert d["version"].raw == 0b001
    assert d["swizzle"].raw == 6


# --------------------------------------------------------------------------------------------
# Fields.


@pytest.mark.parametrize("swizzle, code", sorted(SWIZZLE_CODES.items(), key=lambda kv: kv[1]))
def test_swizzle_codes(swizzle, code):
    w = encode_smem(start_address=0, lbo=0, sbo=0, swizzle=swizzle)
    assert w >> 61 == code
    assert w == (code << 61) | (1 << 46)
    assert decode_smem(w).value("swizzle") == swizzle
    assert swizzle in descgen.SWIZZLES


def test_swizzle_names_constant():
    assert descgen.SWIZZLES == ("none", "128B_base32B", "128B", "64B", "32B")
    assert descgen.LBO_MODES == ("relative", "absolute")


@pytest.mark.parametrize("code", [3, 5, 7])
def test_invalid_swizzle_codes_decode_to_a_finding(code):
    w = encode_smem(start_address=0, lbo=0, sbo=0, swizzle="none") | code << 61
    d = decode_smem(w)
    assert d.value("swizzle") is None
    assert d["swizzle"].note == f"unknown code {code}"
    assert d["swizzle"].raw == code
    assert [(f.code, f.severity, f.value) for f in d.findings] == [("SMEM-SWIZZLE-CODE", "error", code)]
    assert not d.ok
    assert d.derived == ()


def test_unknown_swizzle_name():
    with pytest.raises(EncodeError) as info:
        encode_smem(start_address=0, lbo=0, sbo=0, swizzle="16B")
    assert info.value.code == "SMEM-SWIZZLE-CODE"
    assert "128B" in info.value.allowed


@pytest.mark.parametrize(
    "swizzle, span, boundary",
    [("128B", 128, 1024), ("64B", 64, 512), ("32B", 32, 256), ("128B_base32B", 128, 1024)],
)
def test_derived_swizzle_bytes_and_table41_boundary(swizzle, span, boundary):
    d = decode_smem(encode_smem(start_address=0, lbo=0, sbo=0, swizzle=swizzle))
    assert d.value("swizzle_bytes") == span
    assert d.value("pattern_boundary") == boundary
    assert dict((name, unit) for name, _, unit in d.derived) == {"swizzle_bytes": "bytes", "pattern_boundary": "bytes"}


def test_fixed_constant_bits_46_48_on_encode():
    for swizzle in SWIZZLE_CODES:
        for mode in ("relative", "absolute"):
            w = encode_smem(start_address=0x3FFF0, lbo=0x3FFF0, sbo=0x3FFF0, swizzle=swizzle, base_offset=7,
                            lbo_mode=mode, check=False)  # absolute mode with base offset 7 breaks §9.7.16.3.1.2.1
            assert bits(w, 46, 48) == 0b001
            assert bits(w, 53, 60) == 0
            assert bits(w, 14, 15) == 0 and bits(w, 30, 31) == 0


def test_zero_version_bit_is_a_warning():
    """Errata 2: some kernels leave bit 46 at 0; decode flags it but does not fail."""
    w = encode_smem(start_address=0x400, lbo=16, sbo=1024, swizzle="128B") & ~(1 << 46)
    d = decode_smem(w)
    assert [(f.code, f.severity) for f in d.findings] == [("SMEM-VERSION-CONST", "warning")]
    assert d.ok
    assert d["version"].raw == 0
    assert "0b001" in d.findings[0].allowed


@pytest.mark.parametrize("bad", [0b011, 0b101, 0b111, 0b100, 0b010])
def test_other_version_values_flagged(bad):
    w = (encode_smem(start_address=0, lbo=0, sbo=0, swizzle="none") & ~(0b111 << 46)) | bad << 46
    assert [f.code for f in decode_smem(w).findings] == ["SMEM-VERSION-CONST"]


@pytest.mark.parametrize("bit", range(53, 61))
def test_bits_53_60_must_be_zero(bit):
    """Errata 1: "0xb00000000" means 0b00000000."""
    w = encode_smem(start_address=0, lbo=0, sbo=0, swizzle="none") | 1 << bit
    d = decode_smem(w)
    assert [(f.code, f.severity) for f in d.findings] == [("SMEM-FIXED-53-CONST", "error")]
    assert d["fixed_53"].raw == 1 << (bit - 53)
    assert not d.ok


@pytest.mark.parametrize("bit, code", [(14, "SMEM-RESERVED-14"), (15, "SMEM-RESERVED-14"),
                                       (30, "SMEM-RESERVED-30"), (31, "SMEM-RESERVED-30")])
def test_unlisted_bits_are_reserved(bit, code):
    w = encode_smem(start_address=0, lbo=0, sbo=0, swizzle="none") | 1 << bit
    d = decode_smem(w)
    assert [(f.code, f.severity) for f in d.findings] == [(code, "error")]
    # the neighbouring fields are not disturbed
    assert d.value("start_address") == 0 and d.value("lbo") == 0 and d.value("sbo") == 0


def test_start_address_alignment_and_range():
    assert bits(encode_smem(start_address=0x3FFF0, lbo=0, sbo=0, swizzle="none"), 0, 13) == 0x3FFF
    assert bits(encode_smem(start_address=0x10, lbo=0, sbo=0, swizzle="none"), 0, 13) == 1
    for bad in (8, 0x401, 0x3FFF8):
        with pytest.raises(EncodeError) as info:
            encode_smem(start_address=bad, lbo=0, sbo=0, swizzle="none")
        assert (info.value.code, info.value.field, info.value.value) == ("SMEM-START-ADDRESS-ALIGN", "start_address",
                                                                         bad)
        assert "16" in str(info.value)
    for bad in (0x40000, 0x40010, 2**20, -16):
        with pytest.raises(EncodeError) as info:
            encode_smem(start_address=bad, lbo=0, sbo=0, swizzle="none")
        assert info.value.code == "SMEM-START-ADDRESS-RANGE"
        assert "0..262128" in info.value.allowed or "262128" in info.value.allowed


@pytest.mark.parametrize("field", ["lbo", "sbo"])
def test_offsets_alignment_and_range(field):
    args = dict(start_address=0, lbo=0, sbo=0, swizzle="none")
    lo = {"lbo": 16, "sbo": 32}[field]
    for value in (16, 0x1230, 0x3FFF0):
        w = encode_smem(**{**args, field: value})
        assert bits(w, lo, lo + 13) == value >> 4
        assert decode_smem(w).value(field) == value
    with pytest.raises(EncodeError) as info:
        encode_smem(**{**args, field: 24})
    assert info.value.code == f"SMEM-{field.upper()}-ALIGN"
    with pytest.raises(EncodeError) as info:
        encode_smem(**{**args, field: 0x40000})
    assert info.value.code == f"SMEM-{field.upper()}-RANGE"


def test_base_offset_bits_49_51():
    for off in range(8):
        w = encode_smem(start_address=0, lbo=0, sbo=0, swizzle="128B", base_offset=off)
        assert bits(w, 49, 51) == off
        assert w & ~(0b111 << 49) == encode_smem(start_address=0, lbo=0, sbo=0, swizzle="128B")
        assert decode_smem(w).value("base_offset") == off
    for bad in (8, -1):
        with pytest.raises(EncodeError) as info:
            encode_smem(start_address=0, lbo=0, sbo=0, swizzle="128B", base_offset=bad)
        assert info.value.code == "SMEM-BASE-OFFSET-RANGE"


def test_table41_base_offset_formula_example():
    """Base offset = (pattern start addr >> 7) & 7 for a 128B pattern starting off its 1024 B boundary."""
    start = 0x1000 + 3 * 128
    off = (start >> 7) & 7
    assert off == 3
    w = encode_smem(start_address=start, lbo=16, sbo=1024, swizzle="128B", base_offset=off)
    assert bits(w, 49, 51) == 3 and bits(w, 0, 13) == start >> 4


def test_lbo_mode_bit_52():
    rel = encode_smem(start_address=0, lbo=0x1000, sbo=0, swizzle="128B")
    ab = encode_smem(start_address=0, lbo=0x1000, sbo=0, swizzle="128B", lbo_mode="absolute")
    assert rel ^ ab == 1 << 52
    assert decode_smem(ab).value("lbo_mode") == "absolute"
    assert decode_smem(rel).value("lbo_mode") == "relative"
    with pytest.raises(EncodeError) as info:
        encode_smem(start_address=0, lbo=0, sbo=0, swizzle="128B", lbo_mode="abs")
    assert info.value.code == "SMEM-LBO-MODE-CODE"


def test_every_problem_reported_at_once():
    with pytest.raises(EncodeError) as info:
        encode_smem(start_address=8, lbo=0x40000, sbo=24, swizzle="48B", base_offset=9)
    assert sorted(f.code for f in info.value.findings) == sorted([
        "SMEM-START-ADDRESS-ALIGN", "SMEM-LBO-RANGE", "SMEM-SBO-ALIGN", "SMEM-SWIZZLE-CODE", "SMEM-BASE-OFFSET-RANGE",
    ])


def test_arguments_are_keyword_only_and_required():
    with pytest.raises(TypeError):
        encode_smem(0, 0, 0, "none")  # type: ignore[misc]
    with pytest.raises(TypeError):
        encode_smem(start_address=0, lbo=0, sbo=0)  # type: ignore[call-arg]


def test_check_false():
    args = dict(start_address=0x400, lbo=16, sbo=1024, swizzle="128B", base_offset=3)
    assert encode_smem(**args, check=False) == encode_smem(**args) == spec_encode_smem(**args)
    # values that do not fit their bits (or have no code) are refused even unchecked
    with pytest.raises(EncodeError):
        encode_smem(**{**args, "base_offset": 8}, check=False)
    with pytest.raises(EncodeError):
        encode_smem(**{**args, "swizzle": "16B"}, check=False)


def test_check_false_returns_word_with_findings():
    w = encode_smem(start_address=0x400, lbo=16, sbo=1024, swizzle="128B", base_offset=7, check=False)
    assert w == spec_encode_smem(0x400, 16, 1024, "128B", 7)
    assert not w.findings
    with pytest.raises(EncodeError) as info:  # misaligned: the dropped low bits would be lost
        encode_smem(start_address=8, lbo=0, sbo=0, swizzle="none", check=False)
    assert info.value.code == "SMEM-START-ADDRESS-ALIGN"


@pytest.mark.parametrize("field, value", [("start_address", 0x40000), ("start_address", -16), ("lbo", 0x40010),
                                          ("sbo", 0x7FFF0)])
def test_check_false_never_wraps_addresses(field, value):
    args = dict(start_address=0, lbo=0, sbo=0, swizzle="none")
    args[field] = value
    with pytest.raises(EncodeError):
        encode_smem(**args, check=False)


@pytest.mark.parametrize("word", [-1, 2**64, True, "0", 1.5])
def test_decode_rejects_non_words(word):
    with pytest.raises(WordError) as info:
        decode_smem(word)
    assert info.value.code == "SMEM-WORD-RANGE"


def test_decode_extremes():
    d = decode_smem(2**64 - 1)
    assert d.hex == "0xffffffffffffffff"
    assert {f.code for f in d.findings} == {
        "SMEM-RESERVED-14", "SMEM-RESERVED-30", "SMEM-VERSION-CONST", "SMEM-FIXED-53-CONST", "SMEM-SWIZZLE-CODE",
        "SMEM-LBO-MODE-BASE-OFFSET",  # bit 52 (absolute) with base offset 7: §9.7.16.3.1.2.1
    }
    d0 = decode_smem(0)
    assert [f.code for f in d0.findings] == ["SMEM-VERSION-CONST"]
    assert d0.hex == "0x0000000000000000"


def test_e50_a_start_address_past_the_cta_is_outside():
    """SMEM-OUTSIDE-CTA (E50): the first atom (8 rows of the swizzle's row bytes from the start
    address's row, the last row's first 16 bytes) must end below the CTA's shared memory."""
    def codes(start, swizzle, size):
        word = descgen.encode_smem(start_address=start, lbo=16, sbo=1024, swizzle=swizzle, check=False)
        return {f.code for f in descgen.validate_smem(word, smem_size=size).findings}
    # 128B: rows of 128 bytes; the first atom of 0x7c00 reads up to 0x7c00 + 7 * 128 + 15 = 0x7f8f
    assert "SMEM-OUTSIDE-CTA" not in codes(0x7c00, "128B", 0x7f90)
    assert "SMEM-OUTSIDE-CTA" in codes(0x7c00, "128B", 0x7f8f)
    # mid-row (a K step of 32 bytes): the row's start counts, not the address
    assert "SMEM-OUTSIDE-CTA" not in codes(0x7c20, "128B", 0x7f90)
    # without swizzling: the 128 contiguous bytes of the first core matrix
    assert "SMEM-OUTSIDE-CTA" not in codes(0x7f80, "none", 0x8000)
    assert "SMEM-OUTSIDE-CTA" in codes(0x7f90, "none", 0x8000)
    # 32B: rows of 32 bytes
    assert "SMEM-OUTSIDE-CTA" in codes(0x7f20, "32B", 0x8000) and "SMEM-OUTSIDE-CTA" not in codes(0x7f00, "32B", 0x8000)
    # not given: not checked, and said so
    report = descgen.validate_smem(descgen.encode_smem(start_address=0x7f90, lbo=16, sbo=1024, swizzle="none"))
    assert "SMEM-OUTSIDE-CTA" in {n.code for n in report.not_checked}
