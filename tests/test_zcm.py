"""The zero-column mask descriptor (PTX ISA 9.1 §9.7.16.4.3, Table 45 and its four worked examples).

The API's ``skip_span`` / ``use_span`` are column COUNTS; the descriptor fields (and the worked
examples) hold count - 1. "Skip Span 2" is 3 zeroed columns (mask bits 1), "Use Span 3" is 4 used
columns (mask bits 0): errata 3.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import descgen
from descgen import EncodeError, UsageError, WordError, decode_zcm, encode_zcm, zcm_mask, zcm_submasks

from conftest import spec_encode_zcm


def printed(pattern: str) -> tuple[int, int]:
    """``"0b … 111 0000 111 00"`` -> (value of the printed low bits, how many bits were printed)."""
    digits = pattern.replace("0b", "").replace("…", "").replace("...", "").replace(" ", "")
    assert digits and set(digits) <= {"0", "1"}, pattern
    return int(digits, 2), len(digits)


def test_printed_helper():
    assert printed("0b … 111 0000 111 00") == (0b111000011100, 12)
    assert printed("0b … 0000 111 0000 11") == (0b0000111000011, 13)
    assert printed("0b … 111 0000 111 0000") == (0b11100001110000, 14)


def check_submask(sub: int, width: int, pattern: str, period: int) -> None:
    """The printed low bits match, and the rest of the sub-mask continues the pattern periodically."""
    low, count = printed(pattern)
    count = min(count, width)
    assert sub & ((1 << count) - 1) == low & ((1 << count) - 1), (bin(sub), pattern)
    assert sub >> width == 0
    for j in range(period, width):
        assert (sub >> j) & 1 == (sub >> (j - period)) & 1, (j, bin(sub))


# Skip Span 2 / Use Span 3 as printed: 3 ones, 4 zeros, period 7.
SKIP_FIELD, USE_FIELD = 2, 3
SKIP, USE = SKIP_FIELD + 1, USE_FIELD + 1
PERIOD = SKIP + USE


def test_spans_are_counts_stored_minus_one():
    w = encode_zcm(skip_span=SKIP, use_span=USE)
    assert (w >> 40) & 0xFF == SKIP_FIELD
    assert (w >> 48) & 0xFF == USE_FIELD
    d = decode_zcm(w)
    assert d["skip_span"].raw == 2 and d.value("skip_span") == 3
    assert d["use_span"].raw == 3 and d.value("use_span") == 4
    assert d["skip_span"].unit == "columns"


def test_example_1_nonzero_mask_0():
    # {0,0,0,0} {0,0,0,0}, Non-Zero Mask 0, Skip Span 4, Use Span 3, shift 0 -> mask 0x0
    w = encode_zcm(start_count=(0, 0, 0, 0), first_span=(0, 0, 0, 0), nonzero_mask=False, skip_span=5, use_span=4)
    assert (w >> 39) & 1 == 0
    assert (w >> 40) & 0xFF == 4 and (w >> 48) & 0xFF == 3
    assert w == spec_encode_zcm(nonzero_mask=False, skip_span=5, use_span=4)
    for n in (8, 64, 128, 256):
        assert zcm_mask(w, 128, n) == 0
        assert zcm_submasks(w, 128, n) == (0,)
    assert zcm_submasks(w, 32, 64) == (0, 0, 0, 0)


@pytest.mark.parametrize("n", [16, 64, 128, 256])
def test_example_2_m128(n):
    # M = 128: sc0 = 0, fs0 = 0, Non-Zero Mask 1, Skip Span 2, Use Span 3, shift 0
    w = encode_zcm(start_count=(0, 0, 0, 0), first_span=(0, 0, 0, 0), skip_span=SKIP, use_span=USE)
    (mask0,) = zcm_submasks(w, 128, n)
    check_submask(mask0, n, "0b … 111 0000 111 0000", PERIOD)
    assert zcm_mask(w, 128, n) == mask0


@pytest.mark.parametrize("n", [32, 64, 128, 256])
def test_example_3_m64(n):
    # M = 64: sc = {0, 0}, fs0 = 1, fs1 = 0
    w = encode_zcm(start_count=(0, 0, 0, 0), first_span=(1, 0, 0, 0), skip_span=SKIP, use_span=USE)
    mask0, mask1 = zcm_submasks(w, 64, n)
    half = n // 2
    check_submask(mask0, half, "0b … 111 0000 111 0000 111", PERIOD)
    check_submask(mask1, half, "0b … 0000 111 0000 111 0000", PERIOD)  # printed as "masl1"
    # sub-mask coverage: mask0 = columns [0, N/2-1], mask1 = [N/2, N-1]
    assert zcm_mask(w, 64, n) == mask0 | mask1 << half


EXAMPLE_4 = {
    "start_count": (0, 1, 2, 1),  # {sc3, sc2, sc1, sc0} = {1, 2, 1, 0}
    "first_span": (1, 1, 0, 0),  # {fs3, fs2, fs1, fs0} = {0, 0, 1, 1}
    "skip_span": SKIP,
    "use_span": USE,
    "column_shift": 2,
}
EXAMPLE_4_MASKS = (
    "0b … 0000 111 0000 111",
    "0b … 0000 111 0000 11",
    "0b … 111 0000 111 00",
    "0b … 111 0000 111 000",
)


@pytest.mark.parametrize("n", [64, 128, 256])
def test_example_4_m32(n):
    w = encode_zcm(**EXAMPLE_4)
    assert w == spec_encode_zcm((0, 1, 2, 1), (1, 1, 0, 0), skip_span=SKIP, use_span=USE, column_shift=2)
    assert (w >> 56) & 0x3F == 2
    subs = zcm_submasks(w, 32, n)
    quarter = n // 4
    assert len(subs) == 4
    for sub, pattern in zip(subs, EXAMPLE_4_MASKS):
        check_submask(sub, quarter, pattern, PERIOD)
    # sub-mask i covers columns [i*N/4, (i+1)*N/4 - 1]
    assert zcm_mask(w, 32, n) == sum(sub << (i * quarter) for i, sub in enumerate(subs))


def test_example_4_exact_sub_masks_n128():
    """Example 4 written out in full for N = 128 (32-bit sub-masks), continuing each printed pattern."""
    subs = zcm_submasks(encode_zcm(**EXAMPLE_4), 32, 128)
    pattern = "1110000"  # read LSB first: fs = 1 starts with the 3 zeroed columns
    def expand(first_one: bool, drop: int) -> int:
        seq = (pattern if first_one else pattern[3:] + pattern[:3]) * 10
        seq = seq[drop:drop + 32]
        return int(seq[::-1], 2)
    assert subs == (expand(True, 0), expand(True, 1), expand(False, 2), expand(False, 1))


def test_column_shift_does_not_change_the_mask():
    """Errata 4: Column Shift moves which B columns are read, not the mask bits."""
    args = dict(EXAMPLE_4)
    shifted = encode_zcm(**args)
    args["column_shift"] = 0
    plain = encode_zcm(**args)
    assert shifted ^ plain == 2 << 56
    assert zcm_mask(shifted, 32, 128) == zcm_mask(plain, 32, 128)
    assert decode_zcm(shifted).value("column_shift") == 2


def test_real_word():
    # CUTLASS make_column_zero_mask: 3-tap 1-D convolution tap s=0, M=32, N=64
    word = 0x000C008007050301
    d = decode_zcm(word)
    assert d.ok and not d.findings
    assert [d.value(f"start_count_{i}") for i in range(4)] == [1, 3, 5, 7]
    assert [d.value(f"first_span_{i}") for i in range(4)] == [0, 0, 0, 0]
    assert d.value("nonzero_mask") is True
    assert d["skip_span"].raw == 0 and d.value("skip_span") == 1
    assert d["use_span"].raw == 12 and d.value("use_span") == 13
    assert d.value("column_shift") == 0
    assert zcm_mask(word, 32, 64) == 0x0040010004001000
    assert zcm_submasks(word, 32, 64) == (0x1000, 0x0400, 0x0100, 0x0040)
    assert encode_zcm(start_count=(1, 3, 5, 7), skip_span=1, use_span=13) == word
    assert d.hex == "0x000c008007050301"


# --------------------------------------------------------------------------------------------
# Independent model of the mask (errata 4) against the library, over all fields.


def model_submask(sc: int, fs: int, skip: int, use: int, width: int) -> int:
    run = ([1] * skip + [0] * use) if fs else ([0] * use + [1] * skip)
    seq = run * ((sc + width) // len(run) + 1)
    out = 0
    for j, bit in enumerate(seq[sc:sc + width]):
        out |= bit << j
    return out


@settings(max_examples=400)
@given(
    sc=st.tuples(*[st.integers(0, 255)] * 4),
    fs=st.tuples(*[st.integers(0, 1)] * 4),
    nz=st.booleans(),
    skip=st.integers(1, 256),
    use=st.integers(1, 256),
    shift=st.integers(0, 32),
    m=st.sampled_from([32, 64, 128]),
    data=st.data(),
)
def test_mask_matches_model(sc, fs, nz, skip, use, shift, m, data):
    count = {32: 4, 64: 2, 128: 1}[m]
    n = data.draw(st.integers(1, 256 // count).map(lambda k: k * count), label="n")
    w = encode_zcm(start_count=sc, first_span=fs, nonzero_mask=nz, skip_span=skip, use_span=use, column_shift=shift)
    assert w == spec_encode_zcm(sc, fs, nz, skip_span=skip, use_span=use, column_shift=shift)
    width = n // count
    expected = tuple(model_submask(sc[i], fs[i], skip, use, width) if nz else 0 for i in range(count))
    assert zcm_submasks(w, m, n) == expected
    mask = zcm_mask(w, m, n)
    assert mask == sum(sub << (i * width) for i, sub in enumerate(expected))
    assert 0 <= mask < 1 << n


def test_first_span_starts_with_ones_or_zeros():
    w1 = encode_zcm(first_span=(1, 0, 0, 0), skip_span=2, use_span=5)
    w0 = encode_zcm(first_span=(0, 0, 0, 0), skip_span=2, use_span=5)
    assert zcm_mask(w1, 128, 14) == 0b00000110000011
    assert zcm_mask(w0, 128, 14) == 0b11000001100000


def test_start_count_drops_leading_bits():
    base = encode_zcm(skip_span=3, use_span=4)
    full = zcm_mask(base, 128, 64)
    for sc in range(0, 20):
        w = encode_zcm(start_count=(sc, 0, 0, 0), skip_span=3, use_span=4)
        ext = zcm_mask(base, 128, 256)
        assert zcm_mask(w, 128, 64) == (ext >> sc) & ((1 << 64) - 1)
    assert full == zcm_mask(encode_zcm(start_count=(7, 0, 0, 0), skip_span=3, use_span=4), 128, 64)  # one period


# --------------------------------------------------------------------------------------------
# Fields and errors.


def test_field_bits():
    w = encode_zcm(start_count=(0x11, 0x22, 0x33, 0x44), first_span=(1, 0, 1, 1), skip_span=0x56, use_span=0x79,
                   column_shift=0x1F)
    assert w & 0xFFFFFFFF == 0x44332211
    assert (w >> 32) & 0xF == 0b1101
    assert (w >> 36) & 0b111 == 0
    assert (w >> 39) & 1 == 1
    assert (w >> 40) & 0xFF == 0x55
    assert (w >> 48) & 0xFF == 0x78
    assert (w >> 56) & 0x3F == 0x1F
    assert w >> 62 == 0


@pytest.mark.parametrize("m", [0, 16, 48, 96, 256, True, "32", None])
def test_m_not_32_64_128(m):
    with pytest.raises(UsageError) as info:
        zcm_submasks(encode_zcm(skip_span=1, use_span=1), m, 64)
    assert info.value.code == "ZCM-M-RANGE"
    assert info.value.field == "m"
    with pytest.raises(UsageError):
        zcm_mask(encode_zcm(skip_span=1, use_span=1), m, 64)


@pytest.mark.parametrize("m, n", [(32, 66), (32, 2), (64, 7), (128, 0), (128, 257), (64, -2), (128, 64.0), (32, True)])
def test_n_not_multiple_of_sub_mask_count(m, n):
    with pytest.raises(UsageError) as info:
        zcm_submasks(encode_zcm(skip_span=1, use_span=1), m, n)
    assert info.value.code == "ZCM-N-RANGE"


@pytest.mark.parametrize("m, n", [(32, 4), (64, 2), (128, 1), (128, 256), (32, 256)])
def test_n_boundaries_accepted(m, n):
    assert len(zcm_submasks(encode_zcm(skip_span=1, use_span=1), m, n)) == {32: 4, 64: 2, 128: 1}[m]


@pytest.mark.parametrize("name", ["skip_span", "use_span"])
@pytest.mark.parametrize("value", [0, 257, -1])
def test_span_range(name, value):
    args = dict(skip_span=3, use_span=4)
    args[name] = value
    with pytest.raises(EncodeError) as info:
        encode_zcm(**args)
    assert info.value.code == f"ZCM-{name.upper().replace('_', '-')}-RANGE"
    assert info.value.allowed == "1..256"


@pytest.mark.parametrize("name", ["skip_span", "use_span"])
def test_span_extremes(name):
    lo = {"skip_span": 40, "use_span": 48}[name]
    for count, raw in ((1, 0), (256, 255)):
        w = encode_zcm(**{"skip_span": 3, "use_span": 4, name: count})
        assert (w >> lo) & 0xFF == raw
        assert decode_zcm(w).value(name) == count


@pytest.mark.parametrize("name", ["start_count", "first_span"])
@pytest.mark.parametrize("bad", [(0, 0, 0), (0, 0, 0, 0, 0), "0000", 5, None])
def test_sequences_need_four_entries(name, bad):
    with pytest.raises(UsageError) as info:
        encode_zcm(skip_span=1, use_span=1, **{name: bad})
    assert info.value.code == f"ZCM-{name.upper().replace('_', '-')}-LENGTH"


def test_entry_ranges():
    with pytest.raises(EncodeError) as info:
        encode_zcm(start_count=(0, 256, 0, 0), first_span=(0, 0, 2, 0), skip_span=1, use_span=1, column_shift=33)
    assert sorted(f.code for f in info.value.findings) == [
        "ZCM-COLUMN-SHIFT-RANGE", "ZCM-FIRST-SPAN-2-RANGE", "ZCM-START-COUNT-1-RANGE",
    ]


def test_decode_reserved_bits_and_shift():
    base = encode_zcm(skip_span=3, use_span=4)
    for bit in (36, 37, 38):
        d = decode_zcm(base | 1 << bit)
        assert [(f.code, f.severity) for f in d.findings] == [("ZCM-RESERVED-36", "error")]
    for bit in (62, 63):
        d = decode_zcm(base | 1 << bit)
        assert [f.code for f in d.findings] == ["ZCM-RESERVED-62"]
    for shift in (33, 48, 63):
        d = decode_zcm(base | shift << 56)
        assert [f.code for f in d.findings] == ["ZCM-COLUMN-SHIFT-RANGE"]
        assert d.value("column_shift") == shift
    assert decode_zcm(base | 32 << 56).ok


@pytest.mark.parametrize("word", [-1, 2**64, False, "0x0", 0.0])
def test_decode_rejects_non_words(word):
    with pytest.raises(WordError) as info:
        decode_zcm(word)
    assert info.value.code == "ZCM-WORD-RANGE"
    with pytest.raises(WordError):
        zcm_mask(word, 128, 64)


def test_submask_counts():
    assert descgen.submask_counts() == {32: 4, 64: 2, 128: 1}
