"""Properties over the whole word space and the whole valid field space (hypothesis + exhaustive)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import descgen
from descgen import (
    EncodeError,
    decode_idesc,
    decode_smem,
    decode_zcm,
    encode_idesc,
    encode_smem,
    encode_zcm,
)
from descgen.model import loader
from descgen.words.idesc import decode_fields

from conftest import (
    AB_CODES,
    D_CODES,
    DENSE_KINDS,
    KINDS,
    MAX_SHIFT_CODES,
    MXF4_KINDS,
    NEGATE_OK,
    SCALE_CODES,
    SELECTOR_VALUES,
    SWIZZLE_CODES,
    TABLE39,
    TRANSPOSE_OK,
    VALID_M,
    VALID_N,
    idesc_args_from_values,
    idesc_configs,
    spec_bits,
    spec_encode_idesc,
    spec_encode_smem,
    spec_encode_zcm,
    spec_values,
)

WORD32 = st.integers(0, 2**32 - 1)
WORD64 = st.integers(0, 2**64 - 1)


def assert_well_formed(d, width):
    """Fields tile the word, raw bits reassemble it, findings name existing fields."""
    assert d.width == width
    lo = 0
    for f in d.fields:
        assert f.lo == lo
        assert 0 <= f.raw < 1 << (f.hi - f.lo + 1)
        lo = f.hi + 1
    assert lo == width
    assert sum(f.raw << f.lo for f in d.fields) == d.word
    names = {f.name for f in d.fields}
    for finding in d.findings:
        assert finding.field in names, finding
        assert finding.severity in ("error", "warning", "info")
        assert finding.code.startswith(d.descriptor.upper() + "-")
    assert d.ok == (not any(f.severity == "error" for f in d.findings))
    assert int(d.hex, 16) == d.word and len(d.hex) == width // 4 + 2


# --------------------------------------------------------------------------------------------
# Decode is total.


@settings(max_examples=300)
@given(word=WORD32)
@example(word=0)
@example(word=2**32 - 1)
def test_idesc_decode_total(word):
    for kind in KINDS:
        d = decode_idesc(word, kind)
        assert d.kind == kind and d.word == word
        assert_well_formed(d, 32)
    assert set(descgen.consistent_kinds(word)) <= set(KINDS)


@settings(max_examples=400)
@given(word=WORD64)
@example(word=0)
@example(word=2**64 - 1)
def test_smem_decode_total(word):
    assert_well_formed(decode_smem(word), 64)


@settings(max_examples=400)
@given(word=WORD64, m=st.sampled_from([32, 64, 128]), k=st.integers(1, 64))
@example(word=2**64 - 1, m=32, k=64)
def test_zcm_decode_total(word, m, k):
    assert_well_formed(decode_zcm(word), 64)
    n = k * {32: 4, 64: 2, 128: 1}[m]
    if n <= 256:
        mask = descgen.zcm_mask(word, m, n)
        assert 0 <= mask < 1 << n


# --------------------------------------------------------------------------------------------
# Instruction descriptor: round trip over the valid space derived from the spec.


@settings(max_examples=1500)
@given(cfg=idesc_configs())
def test_idesc_round_trip_product(cfg):
    kind, m, n, kw, row = cfg
    w = encode_idesc(kind, m, n, **kw)
    assert w == spec_encode_idesc(kind, m, n, **kw)
    d = decode_idesc(w, kind)
    assert d.ok and not d.findings, d.findings
    assert d.values() == spec_values(kind, m, n, **kw)
    assert d.value("k") == row.k
    # and back again from the decoded values
    m2, n2, args = idesc_args_from_values(d.values())
    assert encode_idesc(kind, m2, n2, **args) == w


@pytest.mark.parametrize("row", TABLE39,
                         ids=lambda r: f"{r.kind}-ws{int(r.ws)}-cta{r.cta_group}-{'sp' if r.sparse else 'de'}-K{r.k}")
def test_idesc_every_table39_shape(row):
    """Exhaustive over Table 39: every (M, N) of every row encodes, decodes and gives the row's K."""
    k = 96 if row.k == 96 else None
    for m in row.m:
        for n in row.n:
            w = encode_idesc(row.kind, m, n, sparse=row.sparse, k=k)
            assert w == spec_encode_idesc(row.kind, m, n, sparse=row.sparse, k=k)
            d = decode_idesc(w, row.kind)
            assert d.ok and not d.findings
            assert (d.value("m"), d.value("n"), d.value("sparse"), d.value("k")) == (m, n, row.sparse, row.k)
            assert encode_idesc(row.kind, m, n, sparse=row.sparse, k=row.k) == w


def _field_domains(kind):
    """Every spec value of every argument, one field at a time (the rest at defaults)."""
    doms = {
        "m": VALID_M[kind],
        "n": VALID_N[kind],
        "atype": tuple(AB_CODES[kind]),
        "btype": tuple(AB_CODES[kind]),
        "sparse": (False, True),
        "negate_a": (False, True) if NEGATE_OK[kind] else (False,),
        "negate_b": (False, True) if NEGATE_OK[kind] else (False,),
        "a_major": ("k", "mn") if TRANSPOSE_OK[kind] else ("k",),
        "b_major": ("k", "mn") if TRANSPOSE_OK[kind] else ("k",),
    }
    if kind in DENSE_KINDS:
        doms.update(
            dtype=tuple(D_CODES[kind]),
            saturate=(False, True) if kind == "i8" else (False,),
            sparsity_selector=SELECTOR_VALUES[kind],
            max_shift=tuple(MAX_SHIFT_CODES),
        )
    else:
        doms.update(scale_type=tuple(SCALE_CODES[kind]), a_sf_id=(0, 1, 2, 3), b_sf_id=(0, 1, 2, 3))
    if kind in MXF4_KINDS:
        doms["k"] = (None, 96)
    return doms


@pytest.mark.parametrize("kind", KINDS)
def test_idesc_each_field_exhaustive_and_local(kind):
    """Every value of every field: round trip, spec encoding, and only that field's bits change."""
    bits = spec_bits(kind)
    m0 = 256 if kind in MXF4_KINDS else 128  # K = 96 needs M = 256
    base_args = {"dtype": "f32"} if kind == "f16" else {}  # f16/bf16 both legal with D = f32
    base = encode_idesc(kind, m0, 64, **base_args)
    for name, values in _field_domains(kind).items():
        lo, hi = bits["k_dim" if name == "k" else name]  # encode_idesc's k is Table 44's k_dim bit
        field_mask = ((1 << (hi - lo + 1)) - 1) << lo
        seen = set()
        for v in values:
            m = v if name == "m" else m0
            n = v if name == "n" else 64
            kw = dict(base_args)
            if name not in ("m", "n"):
                kw[name] = v
            # field by field: some values are legal only with other M/N (Table 39), which the
            # cross-field rules check (tests/test_validate.py); here only the field checks count
            w = encode_idesc(kind, m, n, **kw, check=False)
            assert w == spec_encode_idesc(kind, m, n, **kw), (name, v)
            assert (w ^ base) & ~field_mask == 0, (name, v, hex(w), hex(base))
            seen.add(w & field_mask)
            d = decode_fields(w, kind)
            assert d.ok, (name, v, d.findings)
            assert d.values() == spec_values(kind, m, n, **kw), (name, v)
        assert len(seen) == len(values), name  # distinct values, distinct bits


@pytest.mark.parametrize("kind", KINDS)
def test_idesc_type_combinations_exhaustive(kind):
    dtypes = tuple(D_CODES.get(kind, {None: 0}))
    scales = tuple(SCALE_CODES.get(kind, {None: 0}))
    for a, b, dt, sc in itertools.product(AB_CODES[kind], AB_CODES[kind], dtypes, scales):
        if kind == "f16" and dt == "f16" and "bf16" in (a, b):
            continue  # Table 39: dtype f16 only with f16 inputs (see test_idesc xfail)
        w = encode_idesc(kind, 128, 128, atype=a, btype=b, dtype=dt, scale_type=sc)
        assert w == spec_encode_idesc(kind, 128, 128, atype=a, btype=b, dtype=dt, scale_type=sc)
        d = decode_idesc(w, kind)
        assert (d.value("atype"), d.value("btype")) == (a, b)


@pytest.mark.parametrize("kind", KINDS)
def test_idesc_flag_combinations_exhaustive(kind):
    flags = [name for name in ("sparse", "negate_a", "negate_b", "saturate") if name in _field_domains(kind)
             and len(_field_domains(kind)[name]) == 2]
    majors = _field_domains(kind)["a_major"]
    for combo in itertools.product((False, True), repeat=len(flags)):
        for am, bm in itertools.product(majors, majors):
            kw = dict(zip(flags, combo), a_major=am, b_major=bm)
            w = encode_idesc(kind, 128, 64, **kw)
            assert w == spec_encode_idesc(kind, 128, 64, **kw)
            assert decode_idesc(w, kind).values() == spec_values(kind, 128, 64, **kw)


def _raw_words(kind):
    """Words built field by field: mostly raw values the field accepts, sometimes any raw bits;
    reserved bits mostly 0. (Which raws are legal is read from the layout: this property checks
    decode against encode, not against the spec.)"""
    lay = loader.layout(descgen.KIND_LAYOUTS[kind])
    parts = []
    for f in lay.fields:
        top = (1 << f.width) - 1
        if f.type == "enum":
            legal = sorted(f.codes(kind).values())
        elif f.type == "flag":
            legal = sorted(int(v) for v in f.domain(kind).members())
        elif f.type == "uint":
            legal = sorted(f.transform.encode(v) for v in f.domain(kind).members())
        else:
            legal = [f.const]
        raw = st.one_of(st.sampled_from(legal), st.sampled_from(legal), st.sampled_from(legal), st.integers(0, top))
        parts.append(raw.map(lambda r, lo=f.lo: r << lo))
    return st.tuples(*parts).map(sum)


@pytest.mark.parametrize("kind", KINDS)
def test_idesc_clean_words_re_encode(kind):
    """encode(decode(w).values()) == w for every word that decodes with no finding."""
    clean = []

    @settings(max_examples=300)
    @given(word=_raw_words(kind))
    def check(word):
        d = decode_idesc(word, kind)
        if d.findings:
            return
        values = d.values()
        clean.append(word)
        m, n, args = idesc_args_from_values(values)
        assert encode_idesc(kind, m, n, **args) == word

    check()
    assert clean, "no clean word generated"


# --------------------------------------------------------------------------------------------
# Shared memory descriptor.

ADDR = st.integers(0, (2**18 - 16) // 16).map(lambda x: x * 16)  # multiples of 16 below 2**18


@settings(max_examples=600)
@given(start=ADDR, lbo=ADDR, sbo=ADDR, swizzle=st.sampled_from(tuple(SWIZZLE_CODES)), base_offset=st.integers(0, 7),
       mode=st.sampled_from(("relative", "absolute")))
def test_smem_round_trip(start, lbo, sbo, swizzle, base_offset, mode):
    args = dict(start_address=start, lbo=lbo, sbo=sbo, swizzle=swizzle, base_offset=base_offset, lbo_mode=mode)
    # §9.7.16.3.1.2.1: the absolute LBO mode needs 128B swizzling and base offset 0
    legal = mode == "relative" or (swizzle == "128B" and base_offset == 0)
    if not legal:
        with pytest.raises(EncodeError) as exc:
            encode_smem(**args)
        assert {f.code for f in exc.value.findings} <= {"SMEM-LBO-MODE-SWIZZLE", "SMEM-LBO-MODE-BASE-OFFSET"}
    w = encode_smem(**args, check=legal)
    assert w == spec_encode_smem(**args)
    d = decode_smem(w)
    assert d.ok == legal
    assert all(f.code.startswith(("SMEM-LBO-MODE", "SMEM-BASE-OFFSET")) for f in d.findings)
    assert d.values() == args
    assert encode_smem(**d.values(), check=legal) == w


@settings(max_examples=300)
@given(start=st.integers(-2**20, 2**20), swizzle=st.sampled_from(tuple(SWIZZLE_CODES)))
def test_smem_start_address_accepted_iff_aligned_and_in_range(start, swizzle):
    legal = start % 16 == 0 and 0 <= start <= 0x3FFF0
    try:
        w = encode_smem(start_address=start, lbo=0, sbo=0, swizzle=swizzle)
    except EncodeError as e:
        assert not legal
        assert e.code in ("SMEM-START-ADDRESS-ALIGN", "SMEM-START-ADDRESS-RANGE")
    else:
        assert legal
        assert w & 0x3FFF == start >> 4


def _smem_raw_words():
    return st.tuples(
        st.integers(0, 0x3FFF),
        st.sampled_from([0, 0, 0, 1, 2, 3]),
        st.integers(0, 0x3FFF),
        st.sampled_from([0, 0, 0, 1, 2, 3]),
        st.integers(0, 0x3FFF),
        st.sampled_from([1, 1, 1, 0, 2, 3, 7]),
        st.integers(0, 7),
        st.integers(0, 1),
        st.sampled_from([0, 0, 0, 1, 0x80]),
        st.integers(0, 7),
    ).map(lambda t: t[0] | t[1] << 14 | t[2] << 16 | t[3] << 30 | t[4] << 32 | t[5] << 46 | t[6] << 49
          | t[7] << 52 | t[8] << 53 | t[9] << 61)


@settings(max_examples=500)
@given(word=_smem_raw_words())
def test_smem_clean_words_re_encode(word):
    d = decode_smem(word)
    assert_well_formed(d, 64)
    codes = {f.code for f in d.findings}
    never_written = {"SMEM-RESERVED-14", "SMEM-RESERVED-30", "SMEM-VERSION-CONST", "SMEM-FIXED-53-CONST",
                     "SMEM-SWIZZLE-CODE"}
    if not d.findings:
        assert encode_smem(**d.values()) == word
    elif not codes & never_written:
        # only rules between fields (absolute LBO mode, base offset): the encoder refuses the
        # errors and writes the word anyway when told to
        assert codes <= {code for code in descgen.model.catalog.catalog() if code.startswith("SMEM-")}
        assert encode_smem(**d.values(), check=d.ok) == word


# --------------------------------------------------------------------------------------------
# Zero-column mask descriptor.


@settings(max_examples=600)
@given(sc=st.tuples(*[st.integers(0, 255)] * 4), fs=st.tuples(*[st.integers(0, 1)] * 4), nz=st.booleans(),
       skip=st.integers(1, 256), use=st.integers(1, 256), shift=st.integers(0, 32))
def test_zcm_round_trip(sc, fs, nz, skip, use, shift):
    w = encode_zcm(start_count=sc, first_span=fs, nonzero_mask=nz, skip_span=skip, use_span=use, column_shift=shift)
    assert w == spec_encode_zcm(sc, fs, nz, skip_span=skip, use_span=use, column_shift=shift)
    d = decode_zcm(w)
    assert d.ok and not d.findings
    v = d.values()
    assert tuple(v[f"start_count_{i}"] for i in range(4)) == sc
    assert tuple(v[f"first_span_{i}"] for i in range(4)) == fs
    assert (v["nonzero_mask"], v["skip_span"], v["use_span"], v["column_shift"]) == (nz, skip, use, shift)


def zcm_args_from_values(v):
    return dict(
        start_count=tuple(v[f"start_count_{i}"] for i in range(4)),
        first_span=tuple(v[f"first_span_{i}"] for i in range(4)),
        nonzero_mask=v["nonzero_mask"],
        skip_span=v["skip_span"],
        use_span=v["use_span"],
        column_shift=v["column_shift"],
    )


@settings(max_examples=500)
@given(low=st.integers(0, 2**40 - 1), spans=st.integers(0, 2**16 - 1), shift=st.integers(0, 63),
       top=st.sampled_from([0, 0, 0, 1, 3]))
def test_zcm_clean_words_re_encode(low, spans, shift, top):
    word = low | spans << 40 | shift << 56 | top << 62
    d = decode_zcm(word)
    assert_well_formed(d, 64)
    legal = (word >> 36) & 0b111 == 0 and shift <= 32 and top == 0
    assert d.ok == legal
    if legal:
        assert not d.findings
        assert encode_zcm(**zcm_args_from_values(d.values())) == word
