"""The table-driven engine against the independent hand-written encoder (bench/handwritten.py)."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings

from descgen import decode_idesc, encode_idesc

from conftest import (
    AB_CODES,
    KINDS,
    MAX_SHIFT_CODES,
    SCALE_CODES,
    TABLE39,
    TYPE_ROWS,
    idesc_configs,
    load_handwritten,
    rows_of,
    spec_encode_idesc,
)

hand = load_handwritten()


def test_handwritten_is_the_bench_file():
    assert hand.__file__.endswith("bench/handwritten.py")
    assert hand.encode_idesc("f16", 128, 256) == 0x08400010


@pytest.mark.parametrize("kind", KINDS)
def test_differential_hypothesis(kind):
    @settings(max_examples=400)
    @given(cfg=idesc_configs(kind))
    def check(cfg):
        _, m, n, kw, _row = cfg
        assert encode_idesc(kind, m, n, **kw) == hand.encode_idesc(kind, m, n, **kw)

    check()


def _random_configs(rng: random.Random, count: int):
    """A seeded stream of valid configurations (same rules as conftest.idesc_configs)."""
    for _ in range(count):
        kind = rng.choice(KINDS)
        row = rng.choice(rows_of(kind))
        m, n = rng.choice(row.m), rng.choice(row.n)
        dtype, ab = rng.choice(TYPE_ROWS[kind])
        atype = rng.choice(ab)
        btype = atype if kind == "f16" else rng.choice(ab)
        kw = dict(atype=atype, btype=btype, sparse=row.sparse)
        if dtype:
            kw["dtype"] = dtype
        if kind not in ("mxf4", "mxf4nvf4"):
            if atype not in ("e2m1", "e2m3", "e3m2"):
                kw["a_major"] = rng.choice(("k", "mn"))
            if btype not in ("e2m1", "e2m3", "e3m2") and (btype not in ("e4m3", "e5m2", "u8", "s8")
                                                          or n % (16 * row.cta_group) == 0):
                kw["b_major"] = rng.choice(("k", "mn"))
        if kind != "i8":
            kw["negate_a"], kw["negate_b"] = rng.random() < 0.5, rng.random() < 0.5
        else:
            kw["saturate"] = rng.random() < 0.5
        if kind in ("tf32", "f16", "f8f6f4", "i8"):
            if row.sparse and kind in ("tf32", "f16"):
                kw["sparsity_selector"] = rng.randrange(4)
            if row.ws:
                kw["max_shift"] = rng.choice(tuple(MAX_SHIFT_CODES))
        else:
            kw["scale_type"] = rng.choice(tuple(SCALE_CODES[kind]))
            ids = (0, 1, 2, 3) if kind == "mxf8f6f4" else (0, 2)
            kw["a_sf_id"], kw["b_sf_id"] = rng.choice(ids), rng.choice(ids)
        if row.k == 96:
            kw["k"] = 96
        yield kind, m, n, kw


def test_differential_large_stream():
    rng = random.Random(20250105)
    seen_kinds = set()
    for kind, m, n, kw in _random_configs(rng, 30000):
        w = encode_idesc(kind, m, n, **kw)
        assert w == hand.encode_idesc(kind, m, n, **kw), (kind, m, n, kw)
        seen_kinds.add(kind)
    assert seen_kinds == set(KINDS)  # the stream reached every kind


def test_differential_every_table39_shape_and_type():
    """Exhaustive: every Table 39 (M, N) with every A/B type pair and dtype, K-major, defaults elsewhere."""
    for row in TABLE39:
        kind = row.kind
        k = 96 if row.k == 96 else None
        for dtype, ab in TYPE_ROWS[kind]:
            for atype, btype in itertools.product(ab, ab):
                for m in row.m:
                    for n in row.n:
                        kw = dict(atype=atype, btype=btype, dtype=dtype, sparse=row.sparse, k=k)
                        w = encode_idesc(kind, m, n, **kw)
                        assert w == hand.encode_idesc(kind, m, n, **kw) == spec_encode_idesc(kind, m, n, **kw)


@pytest.mark.parametrize("kind", KINDS)
def test_handwritten_words_decode_clean(kind):
    """The other direction: what the hand-written encoder builds, the engine decodes clean and back."""
    for atype in AB_CODES[kind]:
        for scale in SCALE_CODES.get(kind, {None: 0}):
            dtype = "f32" if kind == "f16" else None
            w = hand.encode_idesc(kind, 128, 128, atype=atype, btype=atype, dtype=dtype, scale_type=scale)
            d = decode_idesc(w, kind)
            assert d.ok and not d.findings
            assert (d.value("atype"), d.value("btype"), d.value("m"), d.value("n")) == (atype, atype, 128, 128)
