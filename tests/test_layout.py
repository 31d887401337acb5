"""Layouts (descgen.tiles): tiles -> descriptors, descriptors -> addresses, advancing along K.

The expected values are typed from the spec (§9.7.16.3.3's five worked examples, Table 53, Table
52, Table 41, §9.7.16.10.4) and from an independent model of a tile: Table 53 atoms tiled like
CuTe's ``tile_to_shape`` and swizzled by CuTe's ``Swizzle<B,M,S>`` relative to where the pattern
starts. Nothing here reads ``tables/smem_atoms.toml`` except the loader tests.
"""

from __future__ import annotations

import ast
import copy
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import descgen
from descgen import (
    EncodeError,
    UsageError,
    WordError,
    advance_smem,
    decode_smem,
    encode_smem,
    smem_for_tile,
    smem_layout,
    swizzle_atom,
)
from descgen.model import loader

# --------------------------------------------------------------------------------------------
# The spec, typed.

#: Table 53, MN x K, leading dimension in 128-bit elements. ("128B_base32B", "k") is "–".
TABLE53 = {
    ("128B_base32B", "mn"): (8, 4),
    ("128B", "mn"): (8, 8), ("128B", "k"): (8, 8),
    ("64B", "mn"): (4, 8), ("64B", "k"): (8, 4),
    ("32B", "mn"): (2, 8), ("32B", "k"): (8, 2),
    ("none", "mn"): (1, 8), ("none", "k"): (8, 1),
}
#: §9.7.16.3.3's Swizzle<B,M,S> per mode; 128B with 32B atomicity: CUTLASS's Swizzle<2,5,2> (E26).
FUNCTOR = {"none": (0, 4, 3), "32B": (1, 4, 3), "64B": (2, 4, 3), "128B": (3, 4, 3), "128B_base32B": (2, 5, 2)}
#: Element sizes (Table 52's type sizes; type names from Table 39).
BITS = {"tf32": 32, "f16": 16, "bf16": 16, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8, "e2m3": 6, "e3m2": 6, "e2m1": 4}


def storage(dtype: str, kind: str | None) -> tuple[int, int, int]:
    """(element bits, T = elements per 16-byte chunk, bit pitch): §9.7.16.3.3 T = 128 / bits;
    §9.7.16.10.4.4 f8f6f4/mxf8f6f4 pad 16 sub-byte elements into a chunk (E24); §9.7.16.10.4.6
    mxf4/mxf4nvf4 pack two 4-bit elements per byte."""
    b = BITS[dtype]
    if b == 4 and kind in ("mxf4", "mxf4nvf4"):
        return 4, 32, 4
    return (b, 16, b) if b < 8 else (b, 128 // b, b)


#: (dtype, kind) pairs to cover: every type, e2m1 under each kind that takes it.
PAIRS = [(d, None) for d in BITS if d != "e2m1"] + [("e2m1", k) for k in ("f8f6f4", "mxf8f6f4", "mxf4", "mxf4nvf4")] \
    + [("e3m2", "mxf8f6f4")]
#: Table 52: (major, bits) -> swizzle modes. K-major lists all modes, but Table 53 has no K atom
#: for 128B with 32B atomicity (E27); MN-major excludes 4- and 6-bit (E18).
TABLE52 = {
    ("k", b): {"none", "128B_base32B", "128B", "64B", "32B"} for b in (4, 6, 8, 16, 32)
} | {("mn", 8): {"none", "128B", "64B", "32B"}, ("mn", 16): {"none", "128B", "64B", "32B"},
     ("mn", 32): {"128B_base32B"}, ("mn", 4): set(), ("mn", 6): set()}


def legal(dtype: str, kind: str | None, major: str, swizzle: str) -> bool:
    bits = BITS[dtype]
    return swizzle in TABLE52[(major, bits)] and (swizzle, major) in TABLE53


def bits(word: int, lo: int, hi: int) -> int:
    return (word >> lo) & ((1 << (hi - lo + 1)) - 1)


def atom_elements(dtype: str, kind: str | None, major: str, swizzle: str) -> tuple[int, int]:
    """Table 53's shape for ``dtype``: the leading dimension times T (Table 53's note)."""
    t = storage(dtype, kind)[1]
    a_mn, a_k = TABLE53[(swizzle, major)]
    return (a_mn * t, a_k) if major == "mn" else (a_mn, a_k * t)


def tile_model(dtype, kind, major, swizzle, mn, k, start, order, pattern_start):
    """The tile as CuTe would store it: Table 53 atoms tiled along MN first (or K first), each
    atom row-major in 16-byte chunks, the whole swizzled by Swizzle<B,M,S> relative to the
    pattern start (0 = absolute addresses). Returns bit addresses, mn x k."""
    _, t, pitch = storage(dtype, kind)
    b, m, s = FUNCTOR[swizzle]
    s_mn, s_k = TABLE53[(swizzle, major)]
    rows, cols = (s_k, s_mn) if major == "mn" else (s_mn, s_k)
    a_mn, a_k = atom_elements(dtype, kind, major, swizzle)
    atom_bytes = rows * cols * 16
    n_mn, n_k = mn // a_mn, k // a_k
    ps = pattern_start or 0
    out = []
    for i in range(mn):
        row = []
        for j in range(k):
            index = i // a_mn + (j // a_k) * n_mn if order == "mn_first" else j // a_k + (i // a_mn) * n_k
            ii, jj = i % a_mn, j % a_k
            r, c, e = (jj, ii // t, ii % t) if major == "mn" else (ii, jj // t, jj % t)
            rel = start + index * atom_bytes + r * cols * 16 + c * 16 - ps
            rel ^= ((rel >> (m + s)) & ((1 << b) - 1)) << m  # CuTe Swizzle<B,M,S>
            row.append((ps + rel) * 8 + e * pitch)
        out.append(row)
    return out


def cute_offsets(text: str, mn: int, k: int) -> list[list[int]]:
    """Evaluate a CuTe layout as §9.7.16.3.3 prints it, ``(S_mn,S_k):(D_mn,D_k)`` with nested
    tuples: coordinate i splits colexicographically over the MN shape, j over the K shape."""
    shape_text, stride_text = text.split(":")
    shape, stride = _tuple(shape_text), _tuple(stride_text)

    def flat(x):
        return [y for z in x for y in flat(z)] if isinstance(x, tuple) else [x]

    def offset(idx, shp, std):
        total = 0
        for size, d in zip(flat(shp), flat(std)):
            total += (idx % size) * d
            idx //= size
        return total

    return [[offset(i, shape[0], stride[0]) + offset(j, shape[1], stride[1]) for j in range(k)] for i in range(mn)]


def _tuple(text: str):
    return ast.literal_eval(text)  # "((8,2),(4,4))" is a Python literal


# --------------------------------------------------------------------------------------------
# §9.7.16.3.3: the five worked examples, exactly.

SIZEOF = {"tf32": 4, "bf16": 2}
EXAMPLES = [
    # name, dtype, major, swizzle, T, m, k, exact layout, canonical, LBO (bytes or None = NA), SBO, enc LBO, enc SBO
    ("fig188-k-none-tf32", "tf32", "k", "none", 4, 2, 2,
     "Swizzle<0,4,3> o ((8,2),(4,4)):((4,32),(1,64))", "((8,m),(T,2k)):((1T,SBO),(1,LBO))",
     64 * SIZEOF["tf32"], 32 * SIZEOF["tf32"], 16, 8),
    ("fig189-k-32B-tf32", "tf32", "k", "32B", 4, 2, 2,
     "Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))", "((8,m),(T,2k)):((2T,SBO),(1,T))",
     None, 64 * SIZEOF["tf32"], 1, 16),
    ("fig190-mn-none-bf16", "bf16", "mn", "none", 8, 2, 2,
     "Swizzle<0,4,3> o ((8,1,2),(8,2)):((1,8,64),(8,128))", "((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))",
     128 * SIZEOF["bf16"], 64 * SIZEOF["bf16"], 16, 8),
    ("fig191-mn-32B-bf16", "bf16", "mn", "32B", 8, 2, 2,
     "Swizzle<1,4,3> o ((8,2,2),(8,2)):((1,8,128),(16,256))", "((T,2,m),(8,k)):((1,T,LBO),(2T,SBO))",
     128 * SIZEOF["bf16"], 256 * SIZEOF["bf16"], 16, 32),
    ("fig192-mn-64B-bf16", "bf16", "mn", "64B", 8, 2, 2,
     "Swizzle<2,4,3> o ((8,4,2),(8,2)):((1,8,256),(32,512))", "((T,4,m),(8,k)):((1,T,LBO),(4T,SBO))",
     256 * SIZEOF["bf16"], 512 * SIZEOF["bf16"], 32, 64),
]


def example_tile(major: str, swizzle: str, t: int, m: int, k: int) -> tuple[int, int]:
    """The tile an example's shape covers: K-major ((8,m),(T,2k)); MN-major ((T,S,m),(8,k))."""
    if major == "k":
        return 8 * m, t * 2 * k
    s = {"none": 1, "32B": 2, "64B": 4, "128B": 8}[swizzle]
    return t * s * m, 8 * k


@pytest.mark.parametrize("ex", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_worked_examples_reproduce_exactly(ex):
    _, dtype, major, swizzle, t, m, k, exact, canonical, lbo, sbo, enc_lbo, enc_sbo = ex
    mn, kk = example_tile(major, swizzle, t, m, k)
    td = smem_for_tile(dtype=dtype, major=major, swizzle=swizzle, mn=mn, k=kk, start_address=0)
    assert td.cute == exact
    assert td.canonical == exact.split(" o ")[0] + " o " + canonical
    assert td.atom.per_chunk == t
    assert td.sbo == sbo and bits(td.word, 32, 45) == enc_sbo
    assert bits(td.word, 16, 29) == enc_lbo
    if lbo is None:  # "LBO (relative offset) NA", "Encoding of LBO in descriptor 1 (assumed)"
        assert td.lbo == 16 and "assumed to be 1" in td.lbo_meaning
    else:
        assert td.lbo == lbo and lbo >> 4 == enc_lbo
    assert any(exact in sentence for sentence in td.reasoning)


@pytest.mark.parametrize("ex", [e for e in EXAMPLES if e[0] != "fig189-k-32B-tf32"], ids=lambda e: e[0])
def test_worked_example_layouts_are_what_the_descriptor_reads(ex):
    """The addresses smem_layout reads back are the example's exact layout (in elements, times
    the element size), swizzled: nothing is swizzled at address 0 row 0, and the examples'
    Swizzle<B,4,3> is the README item 9 formula with base offset 0."""
    _, dtype, major, swizzle, t, m, k, exact, *_ = ex
    mn, kk = example_tile(major, swizzle, t, m, k)
    td = smem_for_tile(dtype=dtype, major=major, swizzle=swizzle, mn=mn, k=kk, start_address=0)
    lay = smem_layout(td.word, dtype=dtype, major=major, mn=mn, k=kk)
    b, mm, s = FUNCTOR[swizzle]
    want = [[(x * SIZEOF[dtype]) ^ ((((x * SIZEOF[dtype]) >> (mm + s)) & ((1 << b) - 1)) << mm) for x in row]
            for row in cute_offsets(exact.split(" o ")[1], mn, kk)]
    assert lay.addresses() == want
    assert lay.ok and not lay.findings


def test_e25_example_189_exact_layout_overlaps_and_layout_says_so():
    """Figure 189's exact layout ((8,2),(4,4)):((8,64),(1,4)) maps (1,0) and (0,8) to offset 8:
    the K-major 32B descriptor reaches one 32-byte atom row along K. smem_layout reads what the
    canonical form says and reports it; the tile's second K atom is reached by advancing."""
    exact = "((8,2),(4,4)):((8,64),(1,4))"
    offsets = cute_offsets(exact, 16, 16)
    assert offsets[1][0] == offsets[0][8] == 8
    td = smem_for_tile(dtype="tf32", major="k", swizzle="32B", mn=16, k=16, start_address=0)
    assert td.cute == "Swizzle<1,4,3> o " + exact
    assert td.descriptor_k == 8
    assert td.tile_cute == "Swizzle<1,4,3> o ((8,2),(4,2,2)):((8,64),(1,4,128))"
    lay = smem_layout(td.word, dtype="tf32", major="k", mn=16, k=16)
    assert [[x >> 2 for x in row] for row in lay.addresses()] == [
        [o ^ ((((o * 4) >> 7) & 1) << 2) for o in row] for row in offsets]
    codes = {f.code: f.severity for f in lay.findings}
    assert codes == {"LAYOUT-OVERLAP": "error", "LAYOUT-ROW-SPAN": "error"}
    assert not lay.ok
    assert td.k_offset(8) == 512  # the second K atom: 2 atoms of 256 bytes along MN first
    nxt = smem_layout(advance_smem(td.word, 512), dtype="tf32", major="k", mn=16, k=8)
    assert nxt.ok and nxt.addresses() == [[b >> 3 for b in row[8:]] for row in
                                          tile_model("tf32", None, "k", "32B", 16, 16, 0, "mn_first", None)]


# --------------------------------------------------------------------------------------------
# Table 53 atoms for every element size and swizzle mode; Table 52.


@pytest.mark.parametrize("dtype, kind", PAIRS)
@pytest.mark.parametrize("major", ["k", "mn"])
@pytest.mark.parametrize("swizzle", sorted(FUNCTOR))
def test_table53_atom_shapes(dtype, kind, major, swizzle):
    if (swizzle, major) not in TABLE53:
        with pytest.raises(EncodeError) as err:
            swizzle_atom(dtype=dtype, major=major, swizzle=swizzle, kind=kind)
        assert err.value.code == "LAYOUT-SWIZZLE-MAJOR" and "Table 53" in err.value.source
        return
    a = swizzle_atom(dtype=dtype, major=major, swizzle=swizzle, kind=kind)
    assert (a.mn, a.k) == atom_elements(dtype, kind, major, swizzle)
    s_mn, s_k = TABLE53[(swizzle, major)]
    assert (a.rows, a.columns) == ((s_k, s_mn) if major == "mn" else (s_mn, s_k))
    assert a.bytes == s_mn * s_k * 16 and a.row_bytes == a.columns * 16
    assert a.functor == FUNCTOR[swizzle]
    assert (a.element_bits, a.per_chunk, a.bit_pitch) == storage(dtype, kind)
    assert a.source.startswith("Table 53")


def test_e27_table53_tf32_example_is_32x8_but_table52_refuses_it():
    """"128B MN major swizzle atom would have a shape of (8*(128/32))x8 = 32x8 for tf32"."""
    a = swizzle_atom(dtype="tf32", major="mn", swizzle="128B")
    assert (a.mn, a.k) == (32, 8)
    with pytest.raises(EncodeError) as err:
        smem_for_tile(dtype="tf32", major="mn", swizzle="128B", mn=32, k=8, start_address=0)
    assert err.value.code == "LAYOUT-TABLE52"


def test_e27_k_major_128b_base32b_has_no_atom():
    """Table 52 says K-major takes all swizzle modes; Table 53 has "–" (and CUTLASS refuses)."""
    for dtype in ("bf16", "tf32", "e4m3"):
        with pytest.raises(EncodeError) as err:
            smem_for_tile(dtype=dtype, major="k", swizzle="128B_base32B", mn=8, k=64, start_address=0)
        assert err.value.code == "LAYOUT-SWIZZLE-MAJOR" and "E27" in err.value.rule


@pytest.mark.parametrize("dtype, kind", PAIRS)
@pytest.mark.parametrize("major", ["k", "mn"])
@pytest.mark.parametrize("swizzle", sorted(FUNCTOR))
def test_table52_decides_what_smem_for_tile_builds(dtype, kind, major, swizzle):
    if (swizzle, major) not in TABLE53:
        return  # test_table53_atom_shapes
    a_mn, a_k = atom_elements(dtype, kind, major, swizzle)
    args = dict(dtype=dtype, major=major, swizzle=swizzle, mn=a_mn, k=a_k, start_address=0x1000, kind=kind)
    if legal(dtype, kind, major, swizzle):
        assert smem_for_tile(**args).word >> 61 == {"none": 0, "128B_base32B": 1, "128B": 2, "64B": 4,
                                                    "32B": 6}[swizzle]
    else:
        with pytest.raises(EncodeError) as err:
            smem_for_tile(**args)
        assert err.value.code == "LAYOUT-TABLE52" and "Table 52" in err.value.source
        # the layout model still answers, with the violation as an error finding
        w = encode_smem(start_address=0x1000, lbo=0, sbo=0, swizzle=swizzle)
        lay = smem_layout(w, dtype=dtype, major=major, mn=a_mn, k=a_k, kind=kind)
        assert "LAYOUT-TABLE52" in {f.code for f in lay.findings} and not lay.ok


@pytest.mark.parametrize("kind", descgen.KINDS)
def test_two_t_is_table39_dense_k_for_every_kind_and_type(kind):
    """A dense MMA reads 32 bytes of K: 2T elements is Table 39's K for every kind and A/B type."""
    types = {t for row in loader.shapes().types if row["kind"] == kind for t in row["ab"]}
    for dtype in types:
        t = storage(dtype, kind)[1]
        assert 2 * t == descgen.mma_k(kind, False), (kind, dtype)
        a = swizzle_atom(dtype=dtype, major="k", swizzle="none", kind=kind)
        assert a.per_chunk == t


# --------------------------------------------------------------------------------------------
# Element storage (§9.7.16.10.4; errata E24).


def test_e24_f8f6f4_4_bit_packed_16_per_chunk_with_padding():
    td = smem_for_tile(dtype="e2m1", kind="f8f6f4", major="k", swizzle="none", mn=8, k=32, start_address=0x800)
    lay = smem_layout(td.word, dtype="e2m1", kind="f8f6f4", major="k", mn=8, k=32)
    first = [(lay.address(0, j), lay.bit(0, j)) for j in range(16)]
    assert first == [(0x800 + j // 2, 4 * (j % 2)) for j in range(16)]  # 8 bytes used, 8 padding
    assert lay.address(0, 16) == 0x800 + td.lbo  # the 17th element opens the next 16-byte column
    assert td.atom.per_chunk == 16 and td.atom.k == 16
    assert "8 bytes padding" in td.reasoning[0]


def test_e24_f8f6f4_6_bit_packed_16_per_chunk_with_padding():
    td = smem_for_tile(dtype="e3m2", major="k", swizzle="none", mn=8, k=16, start_address=0x800)
    lay = smem_layout(td.word, dtype="e3m2", major="k", mn=8, k=16)
    assert [(lay.address(0, j), lay.bit(0, j)) for j in (0, 1, 2, 3, 4, 15)] == [
        (0x800, 0), (0x800, 6), (0x801, 4), (0x802, 2), (0x803, 0), (0x80B, 2)]  # 12 bytes used, 4 padding
    assert lay.bit_address(0, 15) == 0x800 * 8 + 90
    assert "4 bytes padding" in td.reasoning[0]


@pytest.mark.parametrize("kind", ["mxf4", "mxf4nvf4"])
def test_e24_mxf4_two_per_byte_32_per_chunk(kind):
    td = smem_for_tile(dtype="e2m1", kind=kind, major="k", swizzle="32B", mn=8, k=64, start_address=0x800)
    assert (td.atom.per_chunk, td.atom.k) == (32, 64)
    lay = smem_layout(td.word, dtype="e2m1", kind=kind, major="k", mn=8, k=64)
    assert [(lay.address(0, j), lay.bit(0, j)) for j in (0, 1, 31, 32, 63)] == [
        (0x800, 0), (0x800, 4), (0x80F, 4), (0x810, 0), (0x81F, 4)]
    assert lay.as_dict()["bits"][0][:3] == [0, 4, 0]


def test_e24_e2m1_needs_the_kind():
    with pytest.raises(UsageError) as err:
        smem_for_tile(dtype="e2m1", major="k", swizzle="none", mn=8, k=32, start_address=0)
    assert err.value.code == "LAYOUT-KIND-REQUIRED"
    assert set(err.value.allowed.split(", ")) == {"f8f6f4", "mxf8f6f4", "mxf4", "mxf4nvf4"}
    # 6-bit types are read by f8f6f4/mxf8f6f4 only, both padded: no kind needed
    assert swizzle_atom(dtype="e2m3", major="k", swizzle="none").per_chunk == 16


@pytest.mark.parametrize("dtype, kind", [("e2m1", "i8"), ("e4m3", "mxf4"), ("bf16", "tf32"), ("tf32", "f16")])
def test_type_the_kind_does_not_take(dtype, kind):
    with pytest.raises(EncodeError) as err:
        swizzle_atom(dtype=dtype, major="k", swizzle="none", kind=kind)
    assert err.value.code == "LAYOUT-DTYPE-KIND" and "Table 39" in err.value.source


def test_unknown_names():
    for kwargs, code, cls in [(dict(dtype="f32"), "LAYOUT-DTYPE-CODE", EncodeError),
                              (dict(major="row"), "LAYOUT-MAJOR-CODE", EncodeError),
                              (dict(swizzle="16B"), "LAYOUT-SWIZZLE-CODE", EncodeError),
                              (dict(kind="f64"), "IDESC-KIND", UsageError)]:
        args = dict(dtype="bf16", major="k", swizzle="none") | kwargs
        with pytest.raises(cls) as err:
            swizzle_atom(**args)
        assert err.value.code == code


# --------------------------------------------------------------------------------------------
# Round trip: the layout read back from a word smem_for_tile built is the tile's layout.

COMBOS = [(d, kd, mj, sw) for d, kd in PAIRS for mj in ("k", "mn") for sw in FUNCTOR if legal(d, kd, mj, sw)]


@st.composite
def tiles(draw):
    dtype, kind, major, swizzle = draw(st.sampled_from(COMBOS))
    a_mn, a_k = atom_elements(dtype, kind, major, swizzle)
    mn, k = a_mn * draw(st.integers(1, 3)), a_k * draw(st.integers(1, 3))
    order = draw(st.sampled_from(["mn_first", "k_first"]))
    size = mn * k // storage(dtype, kind)[1] * 16  # bytes: 16 per chunk of T elements
    unit = 16 if swizzle == "none" else 16 * TABLE53[(swizzle, major)][0 if major == "mn" else 1]  # atom row
    start = draw(st.integers(0, (0x40000 - size) // unit)) * unit
    pattern = draw(st.sampled_from(["absolute", "at start", "elsewhere"]))
    pattern_start = {"absolute": None, "at start": start - start % 128,
                     "elsewhere": draw(st.integers(0, 0x3FF)) * 128}[pattern]
    if pattern == "at start":
        start = pattern_start
    return dtype, kind, major, swizzle, mn, k, start, order, pattern_start


def built_and_modelled(tile):
    """(the TileDescriptor smem_for_tile builds for ``tile``, the independent model's bit addresses)."""
    dtype, kind, major, swizzle, mn, k, start, order, pattern_start = tile
    td = smem_for_tile(dtype=dtype, kind=kind, major=major, swizzle=swizzle, mn=mn, k=k, start_address=start,
                       atom_order=order, pattern_start=pattern_start)
    return td, tile_model(dtype, kind, major, swizzle, mn, k, start, order, pattern_start)


@settings(max_examples=80)
@given(tiles())
def test_round_trip_layout_of_the_word_is_the_tile(tile):
    dtype, kind, major, swizzle, mn, k, start, order, pattern_start = tile
    td, want = built_and_modelled(tile)
    span = td.descriptor_k
    assert span == (k if major == "mn" or swizzle == "none" else atom_elements(dtype, kind, major, swizzle)[1])
    for j0 in range(0, k, span):
        word = advance_smem(td.word, td.k_offset(j0))
        assert bits(word, 49, 51) == td.base_offset  # advancing keeps the base offset
        lay = smem_layout(word, dtype=dtype, kind=kind, major=major, mn=mn, k=span)
        assert [[lay.bit_address(i, j) for j in range(span)] for i in range(mn)] == [row[j0:j0 + span] for row in want]
        assert lay.ok, lay.findings
    # the only warning a tile can get: its first atom off the pattern (absolute swizzle, odd start)
    assert {f.code for f in td.findings} <= {"LAYOUT-ATOM-PHASE"}
    if pattern_start is not None and start == pattern_start:
        assert not td.findings


@settings(max_examples=40)
@given(tiles())
def test_round_trip_per_mma_step_inside_an_atom(tile):
    """Kernels advance by one MMA's K at a time: every K-block of 32 bytes reads back its slice."""
    dtype, kind, major, _, mn, k, *_ = tile
    td, want = built_and_modelled(tile)
    step = td.mma_k
    unit = td.atom.per_chunk if major == "k" else td.atom.k
    assert step % unit == 0
    for j0 in range(0, k - step + 1, step):
        lay = smem_layout(advance_smem(td.word, td.k_offset(j0)), dtype=dtype, kind=kind, major=major, mn=mn, k=step)
        assert [[lay.bit_address(i, j) for j in range(step)] for i in range(mn)] == [row[j0:j0 + step] for row in want]


# --------------------------------------------------------------------------------------------
# LBO/SBO per major-ness, order and CUTLASS's real words.


@pytest.mark.parametrize("word, args", [
    # CUTLASS 4.x sm100 collectives' words (the project's reference notes)
    (0xC000401000010800, dict(dtype="e2m1", kind="f8f6f4", major="k", swizzle="32B", mn=128, k=64,
                              start_address=0x8000)),
    (0xC000401000010800, dict(dtype="e2m1", kind="mxf4", major="k", swizzle="32B", mn=128, k=64, start_address=0x8000)),
    (0x0000400800800040, dict(dtype="bf16", major="mn", swizzle="none", mn=128, k=64, start_address=0x400)),
    (0x4000404000000040, dict(dtype="e4m3", major="mn", swizzle="128B", mn=128, k=64, start_address=0x400)),
])
def test_cutlass_real_words(word, args):
    td = smem_for_tile(**args)
    assert td.word == word
    assert td.hex == f"{word:#018x}"


def test_unused_stride_is_zero_like_cutlass():
    """One MN atom (128 e4m3 = one 128B atom wide): the MN stride is never taken, LBO = 0."""
    td = smem_for_tile(dtype="e4m3", major="mn", swizzle="128B", mn=128, k=64, start_address=0x400)
    assert (td.lbo, td.sbo, td.repeats) == (0, 1024, (1, 8))
    assert "unused: 0" in td.lbo_meaning


@pytest.mark.parametrize("order, lbo, sbo", [("mn_first", 2048, 128), ("k_first", 128, 1024)])
def test_e28_mn_major_interleave_lbo_is_k_stride_sbo_is_mn_stride(order, lbo, sbo):
    """E28: without swizzle, MN-major LBO steps along K and SBO along MN (Figure 190)."""
    td = smem_for_tile(dtype="bf16", major="mn", swizzle="none", mn=128, k=64, start_address=0x400, atom_order=order)
    assert (td.lbo, td.sbo) == (lbo, sbo)
    lay = smem_layout(td.word, dtype="bf16", major="mn", mn=128, k=64)
    assert lay.address(8, 0) - lay.address(0, 0) == sbo  # next 16-byte column of MN
    assert lay.address(0, 8) - lay.address(0, 0) == lbo  # next group of 8 K rows


@pytest.mark.parametrize("order, lbo, sbo", [("mn_first", 1024, 2048), ("k_first", 8192, 1024)])
def test_mn_major_swizzled_lbo_is_mn_atom_stride(order, lbo, sbo):
    td = smem_for_tile(dtype="bf16", major="mn", swizzle="128B", mn=128, k=64, start_address=0x400, atom_order=order)
    assert (td.lbo, td.sbo) == (lbo, sbo)
    lay = smem_layout(td.word, dtype="bf16", major="mn", mn=128, k=64)
    assert lay.address(64, 0) - lay.address(0, 0) == lbo and lay.address(0, 8) - lay.address(0, 0) == sbo


def test_k_major_swizzled_lbo_is_ignored():
    """E8: any LBO reads the same for K-major swizzled layouts."""
    td = smem_for_tile(dtype="bf16", major="k", swizzle="128B", mn=64, k=64, start_address=0x2000)
    base = smem_layout(td.word, dtype="bf16", major="k", mn=64, k=64).addresses()
    for lbo in (0, 16, 0x10000, 0x3FFF0):
        w = encode_smem(start_address=0x2000, lbo=lbo, sbo=td.sbo, swizzle="128B")
        assert smem_layout(w, dtype="bf16", major="k", mn=64, k=64).addresses() == base


# --------------------------------------------------------------------------------------------
# Base offset at and off the Table 41 boundaries (errata E9, E29).


@pytest.mark.parametrize("swizzle, pattern_start, base_offset", [
    ("128B", 0x1000, 0), ("128B", 0x1400, 0), ("128B", 0x1180, 3), ("128B", 0x1380, 7), ("128B", 0x1080, 1),
    ("64B", 0x1200, 0), ("64B", 0x1000, 0), ("64B", 0x1080, 1), ("64B", 0x1280, 5),
    ("32B", 0x1100, 0), ("32B", 0x1000, 0), ("32B", 0x1180, 3), ("32B", 0x1080, 1),
    ("128B_base32B", 0x1000, 0), ("128B_base32B", 0x1200, 4), ("128B_base32B", 0x1180, 3),
])
def test_base_offset_at_and_off_table41_boundaries(swizzle, pattern_start, base_offset):
    dtype, major = ("tf32", "mn") if swizzle == "128B_base32B" else ("bf16", "k")
    a_mn, a_k = atom_elements(dtype, None, major, swizzle)
    td = smem_for_tile(dtype=dtype, major=major, swizzle=swizzle, mn=a_mn * 2, k=a_k, start_address=pattern_start,
                       pattern_start=pattern_start)
    assert td.base_offset == base_offset == bits(td.word, 49, 51)
    assert not td.findings
    # the pattern starts at the tile: its first row is not swizzled, whatever the address
    lay = smem_layout(td.word, dtype=dtype, major=major, mn=a_mn * 2, k=a_k)
    assert [lay.address(0, j) for j in range(0, a_k if major == "k" else 1, td.atom.per_chunk)] == \
        [pattern_start + 16 * c for c in range(td.atom.columns if major == "k" else 1)]


def test_e29_no_pattern_start_means_absolute_swizzle_base_offset_0():
    """pattern_start=None: swizzled on absolute address bits (TMA, CuTe), base offset 0. A tile at
    0x1180 sits on row 3 of the 1024-byte pattern: its element (0, 0) is in chunk 0 ^ 3."""
    td = smem_for_tile(dtype="bf16", major="k", swizzle="128B", mn=8, k=64, start_address=0x1180)
    assert td.base_offset == 0
    assert [f.code for f in td.findings] == ["LAYOUT-ATOM-PHASE"]
    lay = smem_layout(td.word, dtype="bf16", major="k", mn=8, k=64)
    assert lay.address(0, 0) == 0x1180 + (3 << 4)
    # with the pattern starting at the tile instead: base offset 3, element (0, 0) unswizzled
    td3 = smem_for_tile(dtype="bf16", major="k", swizzle="128B", mn=8, k=64, start_address=0x1180, pattern_start=0x1180)
    assert td3.base_offset == 3 and not td3.findings
    assert smem_layout(td3.word, dtype="bf16", major="k", mn=8, k=64).address(0, 0) == 0x1180


def test_base_offset_without_swizzle_is_zero_and_ignored():
    td = smem_for_tile(dtype="bf16", major="k", swizzle="none", mn=8, k=8, start_address=0x1180, pattern_start=0x1180)
    assert td.base_offset == 0 and "not used" in td.reasoning[-2]
    w = encode_smem(start_address=0x1180, lbo=128, sbo=128, swizzle="none", base_offset=5)
    lay = smem_layout(w, dtype="bf16", major="k", mn=8, k=8)
    assert lay.addresses() == smem_layout(td.word, dtype="bf16", major="k", mn=8, k=8).addresses()
    assert [(f.code, f.severity) for f in lay.findings] == [("SMEM-BASE-OFFSET-IGNORED", "info")]  # E39


@pytest.mark.parametrize("pattern_start", [0x1010, 0x40000, -128, True])
def test_pattern_start_must_be_a_128_byte_address(pattern_start):
    with pytest.raises(EncodeError) as err:
        smem_for_tile(dtype="bf16", major="k", swizzle="128B", mn=8, k=64, start_address=0x1000,
                      pattern_start=pattern_start)
    assert err.value.code == "LAYOUT-PATTERN-START-ALIGN"


# --------------------------------------------------------------------------------------------
# advance_smem.


def test_advance_at_the_carry_edge():
    w = encode_smem(start_address=0x3FFE0, lbo=16, sbo=1024, swizzle="128B", base_offset=3)
    assert decode_smem(advance_smem(w, 16)).value("start_address") == 0x3FFF0
    assert advance_smem(w, 16) == w + 1  # below the edge: the raw add CUTLASS does
    with pytest.raises(EncodeError) as err:
        advance_smem(w, 32)
    e = err.value
    assert (e.code, e.field, e.value) == ("SMEM-START-ADDRESS-CARRY", "start_address", 0x40000)
    assert e.allowed == "0..0x3fff0" and "carry" in e.rule and "Table 40" in e.source
    assert (w + 2) & (1 << 14)  # what the raw add would have done: set reserved bit 14
    with pytest.raises(EncodeError) as err:
        advance_smem(encode_smem(start_address=0x10, lbo=0, sbo=0, swizzle="none"), -32)
    assert err.value.code == "SMEM-START-ADDRESS-CARRY" and err.value.value == -16
    assert decode_smem(advance_smem(w, -0x3FFE0)).value("start_address") == 0


@pytest.mark.parametrize("nbytes", [8, 1, -4, 1.5, True, "32"])
def test_advance_moves_in_16_byte_steps(nbytes):
    with pytest.raises(EncodeError) as err:
        advance_smem(encode_smem(start_address=0x400, lbo=16, sbo=1024, swizzle="128B"), nbytes)
    assert err.value.code == "SMEM-START-ADDRESS-ALIGN"


def test_e29_advance_keeps_the_base_offset_and_every_other_bit():
    w = encode_smem(start_address=0x1180, lbo=0x12340, sbo=0x2ABC0, swizzle="64B", base_offset=3, lbo_mode="absolute",
                    check=False)  # illegal on purpose (§9.7.16.3.1.2.1): advance_smem keeps every other bit
    w |= 1 << 14 | 1 << 60  # even bits that are wrong stay as they are
    moved = advance_smem(w, 0x1000)  # across a 1024-byte boundary
    assert moved ^ w == (0x1180 >> 4) ^ (0x2180 >> 4)
    assert bits(moved, 49, 51) == 3


def test_advance_inside_an_atom_reads_the_next_k_slice():
    """README item 9: +32 bytes per K = 16 bf16 slice inside a 128B atom, base offset still 0."""
    td = smem_for_tile(dtype="bf16", major="k", swizzle="128B", mn=128, k=64, start_address=0x400)
    whole = smem_layout(td.word, dtype="bf16", major="k", mn=128, k=64).addresses()
    for n in range(4):
        w = advance_smem(td.word, 32 * n)
        assert td.k_offset(16 * n) == 32 * n and bits(w, 49, 51) == 0
        assert smem_layout(w, dtype="bf16", major="k", mn=128, k=16).addresses() == [row[16 * n:16 * n + 16]
                                                                                      for row in whole]


def test_advance_rejects_non_words():
    with pytest.raises(WordError):
        advance_smem(-1, 16)


# --------------------------------------------------------------------------------------------
# smem_layout findings.


def test_overlap_is_an_error():
    w = encode_smem(start_address=0x400, lbo=0, sbo=64, swizzle="none")  # 8-row groups 64 B apart: half overlap
    lay = smem_layout(w, dtype="bf16", major="k", mn=16, k=8)
    (f,) = [f for f in lay.findings if f.code == "LAYOUT-OVERLAP"]
    assert f.severity == "error" and f.value == (8, 0) and "32 element(s)" in f.rule  # rows 8-11
    assert "(8, 0) and (4, 0) at 0x440" in f.rule
    assert lay.address(8, 0) == lay.address(4, 0) == 0x440


def test_outside_buffer():
    td = smem_for_tile(dtype="bf16", major="k", swizzle="128B", mn=16, k=64, start_address=0x400)
    assert smem_layout(td.word, dtype="bf16", major="k", mn=16, k=64, buffer=(0x400, 2048)).ok
    lay = smem_layout(td.word, dtype="bf16", major="k", mn=16, k=64, buffer=(0x400, 1024))
    (f,) = lay.findings
    assert (f.code, f.severity, f.value) == ("LAYOUT-OUTSIDE-BUFFER", "error", (8, 0))  # the first element outside
    assert ("0x400..0x7ff" in f.allowed
            and f"{8 * 64} element(s) read outside the buffer, first (8, 0) at 0x800" in f.rule)


def test_sub_byte_buffer_edge():
    w = smem_for_tile(dtype="e2m1", kind="mxf4", major="k", swizzle="none", mn=8, k=32, start_address=0x400).word
    assert smem_layout(w, dtype="e2m1", kind="mxf4", major="k", mn=8, k=32, buffer=(0x400, 128)).ok
    assert not smem_layout(w, dtype="e2m1", kind="mxf4", major="k", mn=8, k=32, buffer=(0x400, 127)).ok


def test_atom_stride_off_the_pattern_is_a_warning():
    w = encode_smem(start_address=0x400, lbo=16, sbo=1152, swizzle="128B")
    lay = smem_layout(w, dtype="bf16", major="k", mn=16, k=64)
    assert [(f.code, f.severity, f.field, f.value) for f in lay.findings] == [
        ("LAYOUT-ATOM-STRIDE", "warning", "sbo", 1152)]
    assert lay.ok


def test_mn_major_atom_strides_checked_both_ways():
    w = encode_smem(start_address=0x400, lbo=1040, sbo=2064, swizzle="128B")
    lay = smem_layout(w, dtype="bf16", major="mn", mn=128, k=16)
    assert sorted(f.field for f in lay.findings if f.code == "LAYOUT-ATOM-STRIDE") == ["lbo", "sbo"]
    assert not {f.field for f in smem_layout(w, dtype="bf16", major="mn", mn=64, k=8).findings}  # strides unused


def test_row_span_mn_major_mid_row_start():
    """An MN-major descriptor may start mid-row (the second half of a 128-element 8-bit atom)
    as long as the MN read fits the rest of the row."""
    td = smem_for_tile(dtype="e4m3", major="mn", swizzle="128B", mn=128, k=32, start_address=0x1000)
    w = advance_smem(td.word, 64)
    ok = smem_layout(w, dtype="e4m3", major="mn", mn=64, k=32)
    assert ok.ok and ok.addresses() == [row for row in smem_layout(td.word, dtype="e4m3", major="mn", mn=128,
                                                                    k=32).addresses()[64:]]
    bad = smem_layout(w, dtype="e4m3", major="mn", mn=128, k=32)
    assert "LAYOUT-ROW-SPAN" in {f.code for f in bad.findings} and not bad.ok


def test_word_problems():
    bad_swizzle = encode_smem(start_address=0, lbo=0, sbo=0, swizzle="none") | 3 << 61
    with pytest.raises(EncodeError) as err:
        smem_layout(bad_swizzle, dtype="bf16", major="k", mn=8, k=8)
    assert err.value.code == "SMEM-SWIZZLE-CODE"
    absolute = encode_smem(start_address=0, lbo=0x400, sbo=1024, swizzle="128B", lbo_mode="absolute")
    with pytest.raises(UsageError) as err:
        smem_layout(absolute, dtype="bf16", major="k", mn=8, k=16)
    assert err.value.code == "LAYOUT-LBO-MODE"
    with pytest.raises(EncodeError) as err:
        smem_layout(encode_smem(start_address=0, lbo=0, sbo=0, swizzle="128B_base32B"), dtype="bf16", major="k",
                    mn=8, k=8)
    assert err.value.code == "LAYOUT-SWIZZLE-MAJOR"
    no_version = encode_smem(start_address=0x400, lbo=128, sbo=128, swizzle="none") & ~(1 << 46)
    lay = smem_layout(no_version, dtype="bf16", major="k", mn=8, k=8)
    assert [f.code for f in lay.findings] == ["SMEM-VERSION-CONST"] and lay.ok
    with pytest.raises(WordError):
        smem_layout(2**64, dtype="bf16", major="k", mn=8, k=8)


@pytest.mark.parametrize("kwargs, code, cls", [
    (dict(mn=0), "LAYOUT-MN-RANGE", EncodeError),
    (dict(k=-8), "LAYOUT-K-RANGE", EncodeError),
    (dict(k=8.0), "LAYOUT-K-RANGE", EncodeError),
    (dict(mn=2048, k=1024), "LAYOUT-SIZE", UsageError),
    (dict(buffer=(0, -1)), "LAYOUT-BUFFER", UsageError),
    (dict(buffer=[0, 16]), "LAYOUT-BUFFER", UsageError),
])
def test_smem_layout_bad_arguments(kwargs, code, cls):
    args = dict(dtype="bf16", major="k", mn=8, k=8) | kwargs
    with pytest.raises(cls) as err:
        smem_layout(encode_smem(start_address=0, lbo=0, sbo=0, swizzle="none"), **args)
    assert err.value.code == code


def test_layout_accessors_and_dict():
    td = smem_for_tile(dtype="bf16", major="k", swizzle="128B", mn=16, k=64, start_address=0x400)
    lay = smem_layout(td.word, dtype="bf16", major="k", mn=16, k=64)
    assert lay.address(1, 0) == 0x400 + 128 + 16  # row 1 of the pattern: chunk 0 ^ 1
    assert lay.atom_index(15, 63) == (1, 0)
    chunks = lay.chunks()
    assert chunks[0x490] == [(1, j) for j in range(8)] and len(chunks) == 16 * 8
    assert list(lay)[:2] == [(0, 0, 0x400, 0), (0, 1, 0x402, 0)]
    d = lay.as_dict()
    assert d["word"] == td.hex and d["addresses"] == lay.addresses() and "bits" not in d
    assert d["chunks"][0] == {"address": 0x400, "elements": [[0, j] for j in range(8)]}
    for bad in [(16, 0), (0, 64), (-1, 0), ("0", 0)]:
        with pytest.raises(UsageError) as err:
            lay.address(*bad)
        assert err.value.code == "LAYOUT-INDEX"


# --------------------------------------------------------------------------------------------
# smem_for_tile: refusals and the rest of the result.


@pytest.mark.parametrize("kwargs, code", [
    (dict(mn=12), "LAYOUT-MN-ATOM"),
    (dict(k=48), "LAYOUT-K-ATOM"),
    (dict(mn=0), "LAYOUT-MN-RANGE"),
    (dict(atom_order="row"), "LAYOUT-ATOM-ORDER-CODE"),
    (dict(start_address=0x3F000), "LAYOUT-TILE-RANGE"),
    (dict(start_address=0x408), "SMEM-START-ADDRESS-ALIGN"),
    (dict(start_address=0x410), "LAYOUT-START-ROW"),
    (dict(swizzle="32B", start_address=0x430), "LAYOUT-START-ROW"),
    (dict(major="mn", swizzle="128B_base32B", mn=64, k=8), "LAYOUT-TABLE52"),
    (dict(swizzle="128B_base32B"), "LAYOUT-SWIZZLE-MAJOR"),
])
def test_smem_for_tile_refuses(kwargs, code):
    args = dict(dtype="bf16", major="k", swizzle="128B", mn=128, k=64, start_address=0x400) | kwargs
    with pytest.raises(EncodeError) as err:
        smem_for_tile(**args)
    assert err.value.code == code
    assert err.value.findings[0].source


def test_tile_descriptor_fields_and_dict():
    td = smem_for_tile(dtype="bf16", major="k", swizzle="128B", mn=128, k=128, start_address=0x400)
    assert (td.repeats, td.mn_step, td.k_step, td.descriptor_k, td.mma_k) == ((16, 2), 1024, 16384, 64, 16)
    assert (td.atom.mn, td.atom.k, td.atom.rows, td.atom.columns, td.atom.bytes) == (8, 64, 8, 8, 1024)
    assert [td.k_offset(j) for j in (0, 8, 16, 56, 64, 72)] == [0, 16, 32, 112, 16384, 16400]
    for bad in (4, 128, -8):
        with pytest.raises(UsageError):
            td.k_offset(bad)
    d = td.as_dict()
    assert d["word"] == td.hex and d["lbo"] == {"bytes": 16, "field": 1, "meaning": td.lbo_meaning}
    assert d["tile"] == [128, 128] and d["atom"]["bytes"] == 1024 and d["reasoning"] == list(td.reasoning)
    assert any("16384 bytes to the next atom along K" in s for s in td.reasoning)


def test_mn_major_k_offset_is_whole_atoms():
    td = smem_for_tile(dtype="tf32", major="mn", swizzle="128B_base32B", mn=64, k=16, start_address=0)
    assert (td.atom.mn, td.atom.k, td.lbo, td.sbo) == (32, 4, 512, 1024)
    assert [td.k_offset(j) for j in (0, 4, 8, 12)] == [0, 1024, 2048, 3072]
    with pytest.raises(UsageError):
        td.k_offset(2)


# --------------------------------------------------------------------------------------------
# 128B with 32B atomicity (errata E26).


def test_e26_base32b_swaps_32_byte_units_by_row():
    """Swizzle<2,5,2>: within each 128-byte row, 32-byte unit u moves to u ^ (row & 3); 4-row
    atoms of 512 bytes; K rows 128 bytes apart, SBO between groups of 4 rows."""
    td = smem_for_tile(dtype="tf32", major="mn", swizzle="128B_base32B", mn=32, k=8, start_address=0x1000)
    assert td.canonical == "Swizzle<2,5,2> o ((T,8,m),(4,k)):((1,T,LBO),(8T,SBO))"
    assert td.cute == "Swizzle<2,5,2> o ((4,8,1),(4,2)):((1,4,0),(32,128))"
    lay = smem_layout(td.word, dtype="tf32", major="mn", mn=32, k=8)
    for j in range(8):
        for unit in range(4):  # 32-byte unit = 8 tf32 along MN
            row = j % 4
            assert lay.address(8 * unit, j) == 0x1000 + (j // 4) * td.sbo + row * 128 + 32 * (unit ^ row)
            assert lay.address(8 * unit + 4, j) == lay.address(8 * unit, j) + 16  # the two chunks stay together
    assert td.sbo == 512 and lay.ok


def test_e26_base32b_pattern_repeats_every_512_bytes():
    """Under mask 3 a pattern start 512 bytes into the 1024-byte boundary (base offset 4) reads
    like base offset 0: E9's 1024-byte boundary and the 512-byte pattern agree."""
    a = smem_for_tile(dtype="tf32", major="mn", swizzle="128B_base32B", mn=32, k=8, start_address=0x1200)
    b = smem_for_tile(dtype="tf32", major="mn", swizzle="128B_base32B", mn=32, k=8, start_address=0x1200,
                      pattern_start=0x1200)
    assert (a.base_offset, b.base_offset) == (0, 4)
    read = [smem_layout(t.word, dtype="tf32", major="mn", mn=32, k=8).addresses() for t in (a, b)]
    assert read[0] == read[1]


# --------------------------------------------------------------------------------------------
# The loader: tables/smem_atoms.toml.


def _atoms_data() -> dict:
    import tomllib

    with open(f"{os.path.dirname(loader.__file__)}/../tables/smem_atoms.toml", "rb") as fh:
        return tomllib.load(fh)


def test_atoms_table_loads_and_cites_sources():
    a = loader.atoms()
    assert set(a.swizzles) == set(descgen.SWIZZLES)
    assert set(a.atoms) == set(TABLE53)
    assert {(s, m): (x.mn, x.k) for (s, m), x in a.atoms.items()} == TABLE53
    for row in [*a.swizzles.values(), *a.atoms.values(), *a.combinations, *a.storage]:
        assert "Table" in row.source or "§" in row.source
    assert {name: size for name, (size, _) in a.elements.items()} == BITS


@pytest.mark.parametrize("mutate, words", [
    (lambda d: d["atom"][0].update(colour="red"), ["atom #1", "unknown key", "colour"]),
    (lambda d: d["atom"][0].pop("source"), ["atom #1", "missing key 'source'"]),
    (lambda d: d["atom"].append(dict(d["atom"][0])), ["listed twice"]),
    (lambda d: d["atom"][0].update(shape=[8]), ["'shape' must be [MN, K]"]),
    (lambda d: d["swizzle"][0].update(name="16B"), ["not a Table 40 swizzle mode"]),
    (lambda d: d["swizzle"][1].update(cute=[1, 4, 4]), ["M + S = 7"]),
    (lambda d: d["swizzle"].pop(), ["no functor for 128B_base32B"]),
    (lambda d: d["storage"].append(dict(d["storage"][-1])), ["storage #7", "given twice"]),
    (lambda d: d["storage"][0].update(per_chunk=8), ["per_chunk"]),
    (lambda d: d["storage"][3].update(kinds=["f7"]), ["unknown element size or kind"]),
    (lambda d: d["element"][0]["types"].append("bf16"), ["listed twice"]),
    (lambda d: d["combination"][0].update(swizzles=["48B"]), ["combination #1"]),
    (lambda d: d.pop("table"), ["missing 'source'"]),
    (lambda d: d.update(extra=1), ["unknown key", "extra"]),
    (lambda d: d["atom"][0].update(source=" "), ["empty 'source'"]),
])
def test_malformed_atoms_table_is_rejected(mutate, words):
    data = copy.deepcopy(_atoms_data())
    assert loader.parse_atoms(data, "tables/smem_atoms.toml")  # the shipped file parses
    mutate(data)
    with pytest.raises(descgen.TableError) as err:
        loader.parse_atoms(data, "tables/smem_atoms.toml")
    message = str(err.value)
    assert message.startswith("tables/smem_atoms.toml: ")
    for w in words:
        assert w in message, message


def test_storage_rule_missing_for_a_size_is_rejected():
    data = copy.deepcopy(_atoms_data())
    data["storage"] = [s for s in data["storage"] if s["bits"] != 6]
    with pytest.raises(descgen.TableError) as err:
        loader.parse_atoms(data, "tables/smem_atoms.toml")
    assert "no storage rule for [6]-bit elements" in str(err.value)


def test_import_is_light_and_tables_load_lazily():
    code = ("import sys, descgen\n"
            "print(descgen.model.loader.atoms.cache_info().currsize, "
            "descgen.model.loader.layout.cache_info().currsize,\n"
            "      'descgen.tiles' in sys.modules,\n"
            "      sorted(m for m in sys.modules if m.split('.')[0] in ('click', 'rich', 'bitstring')))\n"
            "print(descgen.smem_for_tile.__module__, 'descgen.tiles' in sys.modules, 'smem_layout' in dir(descgen))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60).stdout
    assert out.split() == ["0", "0", "False", "[]", "descgen.tiles.descriptor", "True", "True"]


def test_tile_api_reads_names_case_insensitively_as_the_encoders_do():
    """One spelling rule: dtype, major, swizzle and atom order in any case give the
    same descriptor, layout and atom as the tables' spelling, and results carry the tables' spelling."""
    canon = descgen.smem_for_tile(mn=128, k=64, dtype="bf16", major="k", swizzle="128B", start_address=0x400)
    loose = descgen.smem_for_tile(mn=128, k=64, dtype="BF16", major="K", swizzle="128b", start_address=0x400,
                                  atom_order="MN_FIRST")
    assert loose.word == canon.word == 0x4000404000010040
    assert (loose.dtype, loose.major, loose.swizzle) == ("bf16", "k", "128B")
    a = descgen.smem_layout(canon.word, dtype="BF16", major="K", mn=128, k=64)
    b = descgen.smem_layout(canon.word, dtype="bf16", major="k", mn=128, k=64)
    assert a.address(0, 1) == b.address(0, 1) == 0x402  # K-major: the next bf16 along K, 2 bytes on
    assert (descgen.swizzle_atom(dtype="E4M3", major="MN", swizzle="64b")
            == descgen.swizzle_atom(dtype="e4m3", major="mn", swizzle="64B"))
    with pytest.raises(descgen.EncodeError) as e:
        descgen.smem_for_tile(mn=128, k=64, dtype="bf17", major="k", swizzle="128B", start_address=0)
    assert e.value.code == "LAYOUT-DTYPE-CODE"
