"""Partly known words (descgen.model.engine.KnownBits): what a compiler fixes is checked, the rest is
reported as run-time, and nothing is guessed.

Soundness, over random words and random masks: every field called known decodes to the value the
whole word gives, and every finding on the partly known word is a finding of EVERY completion of
its unknown bits (a finding never depends on a bit that is not known).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import descgen
from descgen.model.engine import KnownBits

U64 = (1 << 64) - 1
SMEM = 0x4000404000010040  # K-major 128B swizzle, LBO 16, SBO 1024 (see test_smem.py)
START = 0x3FFF  # Table 40 bits 0-13: the start address, what a compiler leaves to run time


def _keys(findings):
    return {(f.code, f.field) for f in findings}


def test_unknown_start_address_leaves_every_other_field_checked():
    d = descgen.decode_smem(KnownBits(SMEM & ~START, U64 & ~START))
    assert d.unknown == ("start_address",)
    assert d.value("start_address") is None and "run-time: 0 of 14 bits known" in d["start_address"].note
    assert (d.value("sbo"), d.value("lbo"), d.value("swizzle"), d.value("base_offset")) == (1024, 16, "128B", 0)
    assert d.ok and not d.complete
    r = descgen.validate_smem(KnownBits(SMEM & ~START, U64 & ~START))
    late = {n.code: n for n in r.not_checked if n.why == "run-time"}
    assert late["SMEM-BASE-OFFSET-BOUNDARY"].missing == ("start_address",)
    assert d.as_dict()["unknown"] == ["start_address"] and d.as_dict()["known"] == hex(U64 & ~START)


def test_a_known_illegal_field_is_an_error_whatever_the_run_time_bits():
    bad = (SMEM & ~(7 << 61)) | (3 << 61)  # swizzle code 3: not in Table 40
    d = descgen.decode_smem(KnownBits(bad & ~START, U64 & ~START))
    assert "SMEM-SWIZZLE-CODE" in d.codes
    # a reserved bit known to be 1, in a field whose other bits are unknown
    partial_reserved = descgen.decode_smem(KnownBits(1 << 14, 1 << 14))
    assert "SMEM-RESERVED-14" in partial_reserved.codes and "reserved_14" in partial_reserved.unknown
    # Table 40's fixed constant 0b001 at bits 46-48: a known 0 in bit 46 is wrong already
    assert "SMEM-VERSION-CONST" in descgen.decode_smem(KnownBits(0, 1 << 46)).codes


def test_check_mma_checks_cross_word_rules_on_known_fields():
    idesc = descgen.encode_idesc("f16", 128, 256)
    # B's swizzle is 32B: Table 52 allows it for 16-bit K-major, and A's known fields are checked
    ok = descgen.check_mma(idesc=idesc, kind="f16", a_desc=KnownBits(SMEM & ~START, U64 & ~START),
                           b_desc=KnownBits(0, 0))
    assert ok.ok
    assert {n.missing[0] for n in ok.not_checked if n.code == "MMA-SWIZZLE-TABLE52"} == {"b_desc.swizzle"}
    # absolute LBO mode on an MN-major A (MMA-LBO-MODE-MAJOR): found though A's start address is unknown
    mn = descgen.encode_idesc("f16", 128, 256, a_major="mn")
    absolute = descgen.encode_smem(start_address=0, lbo=0x400, sbo=1024, swizzle="128B", lbo_mode="absolute",
                                   check=False)
    r = descgen.check_mma(idesc=mn, kind="f16", a_desc=KnownBits(absolute & ~START, U64 & ~START),
                          b_desc=KnownBits(0, 0))
    assert "MMA-LBO-MODE-MAJOR" in r.codes and "a_desc.lbo_mode" in {f.field for f in r.findings}
    # the instruction descriptor known at run time only: its rules are not checked, none guessed
    unknown_idesc = descgen.check_mma(idesc=KnownBits(0, 0), kind="f16", a_desc=SMEM, b_desc=SMEM)
    assert unknown_idesc.ok
    assert {"IDESC-M-SHAPE", "MMA-SWIZZLE-TABLE52"} <= {n.code for n in unknown_idesc.not_checked
                                                        if n.why == "run-time"}


def test_partly_known_idesc_k_is_unknown_when_sparsity_is():
    word = descgen.encode_idesc("f16", 128, 256)
    d = descgen.decode_idesc(KnownBits(word & ~4, 0xFFFFFFFF & ~4), "f16")  # bit 2: Sparsity
    assert "sparse" in d.unknown and "k" not in {name for name, _, _ in d.derived}
    assert d.value("m") == 128 and d.value("n") == 256


def _completions(bits: KnownBits, width: int, rng: random.Random, count: int = 12):
    free = ((1 << width) - 1) & ~bits.mask
    for _ in range(count):
        yield (bits.value & bits.mask) | (rng.getrandbits(width) & free)


@settings(max_examples=150, deadline=None)
@given(word=st.integers(0, U64), mask=st.integers(0, U64), seed=st.integers(0, 2**32))
def test_smem_and_zcm_partial_findings_hold_for_every_completion(word, mask, seed):
    rng = random.Random(seed)
    for validate, decoded in ((descgen.validate_smem, "smem"), (descgen.validate_zcm, "zcm")):
        part = validate(KnownBits(word & mask, mask))
        d = part.decoded[decoded]
        for full_word in _completions(KnownBits(word, mask), 64, rng):
            full = validate(full_word)
            fd = full.decoded[decoded]
            for f in d.fields:
                if f.name not in d.unknown:
                    assert fd[f.name].value == f.value and fd[f.name].raw == f.raw
            missing = _keys(part.findings) - _keys(full.findings)
            assert not missing, (hex(word), hex(mask), missing)


@settings(max_examples=150, deadline=None)
@given(word=st.integers(0, 0xFFFFFFFF), mask=st.integers(0, 0xFFFFFFFF), kind=st.sampled_from(descgen.KINDS),
       cta_group=st.sampled_from([None, 1, 2]), seed=st.integers(0, 2**32))
def test_idesc_partial_findings_hold_for_every_completion(word, mask, kind, cta_group, seed):
    rng = random.Random(seed)
    part = descgen.validate_idesc(KnownBits(word & mask, mask), kind, cta_group=cta_group)
    for full_word in _completions(KnownBits(word, mask), 32, rng):
        full = descgen.validate_idesc(full_word, kind, cta_group=cta_group)
        missing = _keys(part.findings) - _keys(full.findings)
        assert not missing, (hex(word), hex(mask), kind, missing)


@pytest.mark.parametrize("seed", range(4))
def test_check_mma_partial_findings_hold_for_every_completion(seed):
    rng = random.Random(seed)
    for _ in range(60):
        kind = rng.choice(descgen.KINDS)
        idesc_mask = rng.choice([0xFFFFFFFF, 0, rng.getrandbits(32)])
        a_mask, b_mask = (rng.choice([U64, U64 & ~START, 0, rng.getrandbits(64)]) for _ in range(2))
        idesc, a, b = rng.getrandbits(32), rng.getrandbits(64), rng.getrandbits(64)
        part = descgen.check_mma(idesc=KnownBits(idesc & idesc_mask, idesc_mask), kind=kind,
                                 a_desc=KnownBits(a & a_mask, a_mask), b_desc=KnownBits(b & b_mask, b_mask))
        for _ in range(6):
            full = descgen.check_mma(
                idesc=next(_completions(KnownBits(idesc, idesc_mask), 32, rng, 1)), kind=kind,
                a_desc=next(_completions(KnownBits(a, a_mask), 64, rng, 1)),
                b_desc=next(_completions(KnownBits(b, b_mask), 64, rng, 1)))
            assert not _keys(part.findings) - _keys(full.findings)


def test_a_fully_known_mask_is_the_word_itself():
    assert descgen.decode_smem(KnownBits(SMEM, U64)) == descgen.decode_smem(SMEM)
    with pytest.raises(descgen.WordError):
        descgen.decode_smem(KnownBits(1 << 64, U64))
