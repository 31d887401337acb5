"""The Hopper wgmma (sm_90a) shared memory descriptor (PTX ISA 9.1 §9.7.15.5.1.2.2), the second
family beside tcgen05's (Table 40): encode, decode, validate, identify, port, tiles, the CLI.
Decisions: docs/spec-errata.md E44. CUTLASS's words: tests/test_cutlass_gmma.py."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import descgen
from descgen.cli import cli
from descgen.words.identify import identify

#: K-major 128B f16 at 0x400, LBO 16 ("assumed 1"), SBO 1024: a CUTLASS word (gmma_desc_words.txt).
HOPPER = 0x4000004000010040
#: The same on Blackwell: bit 46 (Table 40's version) set.
BLACKWELL = 0x4000404000010040


def codes(found) -> list[str]:
    return [f.code for f in found]


# --------------------------------------------------------------------------------------------
# The word.


def test_encode_gives_the_sections_bits():
    assert descgen.encode_wgmma_smem(start_address=0x400, lbo=16, sbo=1024, swizzle="128B") == HOPPER
    # swizzle codes 0-3 in bits 62-63 (§9.7.15.5.1.2.2): none 0, 128B 1, 64B 2, 32B 3
    for name, code in (("none", 0), ("128B", 1), ("64B", 2), ("32B", 3)):
        assert descgen.encode_wgmma_smem(start_address=0, lbo=0, sbo=0, swizzle=name) == code << 62
    # each address field is (x & 0x3FFFF) >> 4 in 14 bits; base offset in bits 49-51
    word = descgen.encode_wgmma_smem(start_address=0x3FFF0, lbo=0x3FFF0, sbo=0x3FFF0, swizzle="64B", base_offset=7)
    assert word == (2 << 62) | (7 << 49) | (0x3FFF << 32) | (0x3FFF << 16) | 0x3FFF
    assert descgen.WGMMA_SWIZZLES == ("none", "128B", "64B", "32B")


@pytest.mark.parametrize("kwargs, code", [
    ({"start_address": 0x408}, "WGMMA-SMEM-START-ADDRESS-ALIGN"),
    ({"lbo": 1 << 18}, "WGMMA-SMEM-LBO-RANGE"),
    ({"sbo": 0x40000}, "WGMMA-SMEM-SBO-RANGE"),
    ({"swizzle": "128B_base32B"}, "WGMMA-SMEM-SWIZZLE-CODE"),
    ({"base_offset": 8}, "WGMMA-SMEM-BASE-OFFSET-RANGE"),
])
def test_encode_is_strict(kwargs, code):
    args = {"start_address": 0x400, "lbo": 16, "sbo": 1024, "swizzle": "128B", **kwargs}
    with pytest.raises(descgen.EncodeError) as e:
        descgen.encode_wgmma_smem(**args)
    assert code in codes(e.value.findings)


def test_base_offset_rules_are_the_smem_rules():
    # no swizzle: the base offset is not used (§9.7.15.5.1.2.2 "valid for all swizzling modes except the no-swizzle
    # mode")
    w = descgen.encode_wgmma_smem(start_address=0x400, lbo=128, sbo=256, swizzle="none", base_offset=3)
    assert codes(w.findings) == ["SMEM-BASE-OFFSET-IGNORED"]
    # the pattern start table: 0x580 is 3 rows past its 1024-byte boundary
    assert codes(descgen.validate_wgmma_smem(HOPPER, pattern_start=0x580)) == ["SMEM-BASE-OFFSET-TABLE41"]
    ok = descgen.encode_wgmma_smem(start_address=0x580, lbo=16, sbo=1024, swizzle="128B", base_offset=3,
                                   pattern_start=0x580)
    assert descgen.validate_wgmma_smem(ok, pattern_start=0x580).ok
    with pytest.raises(descgen.EncodeError) as e:
        descgen.encode_wgmma_smem(start_address=0x580, lbo=16, sbo=1024, swizzle="128B", pattern_start=0x580)
    assert codes(e.value.findings) == ["SMEM-BASE-OFFSET-TABLE41"]
    # the LBO mode rules are tcgen05's only: not run, not "not checked"
    report = descgen.validate_wgmma_smem(HOPPER)
    assert [n.code for n in report.not_checked] == ["SMEM-OUTSIDE-CTA", "SMEM-BASE-OFFSET-TABLE41"]


def test_decode_is_total_and_reads_bytes():
    d = descgen.decode_wgmma_smem(HOPPER)
    assert d.descriptor == "wgmma_smem" and d.layout == "wgmma_smem_desc" and d.ok and not d.findings
    assert d.values() == {"start_address": 0x400, "lbo": 16, "sbo": 1024, "base_offset": 0, "swizzle": "128B"}
    assert d.value("pattern_boundary") == 1024
    every = descgen.decode_wgmma_smem((1 << 64) - 1)
    assert codes(every.findings) == ["WGMMA-SMEM-RESERVED-14", "WGMMA-SMEM-RESERVED-30", "WGMMA-SMEM-RESERVED-46",
                            "WGMMA-SMEM-RESERVED-52"]
    with pytest.raises(descgen.WordError):
        descgen.decode_wgmma_smem(1 << 64)


# --------------------------------------------------------------------------------------------
# E44.


def test_e44_unlisted_bits_are_reserved():
    for bit, code in ((14, "WGMMA-SMEM-RESERVED-14"), (31, "WGMMA-SMEM-RESERVED-30"), (46, "WGMMA-SMEM-RESERVED-46"),
                      (48, "WGMMA-SMEM-RESERVED-46"), (52, "WGMMA-SMEM-RESERVED-52"), (61, "WGMMA-SMEM-RESERVED-52")):
        d = descgen.decode_wgmma_smem(HOPPER | 1 << bit)
        assert codes(d.findings) == [code] and not d.ok, bit


def test_e44_bit_46_tells_the_families_apart():
    hopper, blackwell = identify(HOPPER), identify(BLACKWELL)
    assert [r.name for r in hopper.consistent] == ["wgmma_smem", "smem"]  # valid in both: wgmma has no finding
    assert "valid in both families" in hopper.why[-1] and "SMEM-VERSION-CONST" in hopper.why[0]
    assert [r.name for r in blackwell.consistent] == ["smem"]
    assert "WGMMA-SMEM-RESERVED-46" in blackwell.why[0] and blackwell.why[-1].startswith("a tcgen05 (sm_100a)")
    # 128B with 32-byte atomicity (bits 61-63 = 0b001) and the absolute LBO mode are tcgen05's only
    for word in (descgen.encode_smem(start_address=0x400, lbo=16, sbo=1024, swizzle="128B_base32B"),
                 descgen.encode_smem(start_address=0x400, lbo=0x800, sbo=1024, swizzle="128B", lbo_mode="absolute")):
        assert "WGMMA-SMEM-RESERVED-52" in codes(descgen.decode_wgmma_smem(word).findings)


def test_e44_same_swizzle_bits_other_codes():
    for name in descgen.WGMMA_SWIZZLES:
        hopper = descgen.encode_wgmma_smem(start_address=0x400, lbo=16, sbo=1024, swizzle=name)
        blackwell = descgen.encode_smem(start_address=0x400, lbo=16, sbo=1024, swizzle=name)
        assert hopper ^ blackwell == 1 << 46  # only the version bit: the swizzle's bits are the same
        assert descgen.decode_smem(hopper).value("swizzle") == name
    p = descgen.port_smem(HOPPER, to="sm_100a")
    swz = next(c for c in p.changes if c.field == "swizzle")
    assert (swz.raw_from, swz.raw_to, swz.bits_from, swz.bits_to) == (1, 2, "62-63", "61-63")


def test_e44_port_refuses_a_mode_wgmma_lacks():
    b32 = descgen.encode_smem(start_address=0x400, lbo=16, sbo=1024, swizzle="128B_base32B")
    absolute = descgen.encode_smem(start_address=0x400, lbo=0x800, sbo=1024, swizzle="128B", lbo_mode="absolute")
    for word, field in ((b32, "swizzle"), (absolute, "lbo_mode")):
        with pytest.raises(descgen.EncodeError) as e:
            descgen.port_smem(word, to="sm_90a")
        assert e.value.code == "PORT-MODE" and e.value.findings[0].field == field
    same = descgen.port_smem(BLACKWELL, to="sm_100a")  # already tcgen05 (bit 46 is reserved in wgmma): unchanged
    assert same.word == BLACKWELL and same.changes == () and "WGMMA-SMEM-RESERVED-46" in same.note
    with pytest.raises(descgen.UsageError) as u:
        descgen.port_smem(HOPPER, to="sm_80")
    assert u.value.code == "PORT-TARGET"


def test_e44_b1_is_not_modelled():
    with pytest.raises(descgen.EncodeError) as e:
        descgen.smem_for_tile(dtype="e2m1", major="k", swizzle="128B", mn=64, k=128, start_address=0, arch="sm_90a")
    assert e.value.code == "LAYOUT-DTYPE-ARCH" and "b1 is not modelled" in str(e.value)


# --------------------------------------------------------------------------------------------
# Porting.


def test_port_both_ways():
    p = descgen.port_smem(HOPPER, to="sm_100a")
    assert p.word == BLACKWELL and p.flipped == 1 << 46 and p.from_arch == "sm_90a" and p.to_arch == "sm_100a"
    assert [c.field for c in p.changes] == ["version", "swizzle"] and "E2" in p.changes[0].why
    assert p.source.descriptor == "wgmma_smem" and p.target.descriptor == "smem" and p.target.ok
    back = descgen.port_smem(BLACKWELL, to="sm_90a")
    assert back.word == HOPPER and [c.field for c in back.changes] == ["lbo_mode", "version", "swizzle"]
    assert descgen.port_smem(HOPPER, to="sm_101a").to_arch == "sm_110a"  # a tcgen05 alias
    assert json.loads(json.dumps(p.as_dict()))["to"]["word"] == hex(BLACKWELL)


words = st.builds(
    dict, start_address=st.integers(0, 0x3FFF).map(lambda x: x << 4), lbo=st.integers(0, 0x3FFF).map(lambda x: x << 4),
    sbo=st.integers(1, 0x3FFF).map(lambda x: x << 4), swizzle=st.sampled_from(("none", "128B", "64B", "32B")),
    base_offset=st.integers(0, 7))  # (SBO 0 with nothing above bit 31 is a word below 2**32: PORT-WORD, not ported)


@settings(max_examples=300, deadline=None)
@given(words)
def test_round_trip_and_port_over_the_valid_space(fields):
    word = descgen.encode_wgmma_smem(**fields, check=False)
    assert descgen.decode_wgmma_smem(word).values() == fields
    p = descgen.port_smem(word, to="sm_100a")
    assert p.word == word | 1 << 46 and descgen.decode_smem(p.word).values() == {**fields, "lbo_mode": "relative"}
    assert descgen.port_smem(p.word, to="sm_90a").word == word


# --------------------------------------------------------------------------------------------
# Tiles and layouts: what the lead's hardware probe calls.


def test_smem_layout_reads_the_word_as_wgmma():
    lay = descgen.smem_layout(HOPPER, dtype="f16", major="k", mn=64, k=16, arch="sm_90a")
    assert lay.descriptor == "wgmma_smem" and lay.ok
    # E9: a = 0x400 + 128 * row + 16 * chunk, then XOR ((a >> 7) & 7) << 4
    assert lay.addresses()[0][:9] == [0x400 + 2 * j for j in range(8)] + [0x410]
    assert lay.addresses()[1][0] == 0x490 and lay.addresses()[1][8] == 0x480
    # the same canonical layouts and address model as tcgen05's for the ported word
    assert lay.addresses() == descgen.smem_layout(BLACKWELL, dtype="f16", major="k", mn=64, k=16).addresses()


@pytest.mark.parametrize("dtype, major, swizzle, tile, lbo, sbo", [
    # §9.7.15.5.1.2.1.3's examples (LBO, SBO in bytes; the text's "Encoding" is these >> 4)
    ("tf32", "k", "none", (16, 16), 64 * 4, 32 * 4),
    ("tf32", "k", "32B", (16, 16), 16, 64 * 4),
    ("bf16", "mn", "none", (16, 16), 128 * 2, 64 * 2),
    ("bf16", "mn", "32B", (32, 16), 128 * 2, 256 * 2),
    ("bf16", "mn", "64B", (64, 16), 256 * 2, 512 * 2),
])
def test_smem_for_tile_follows_the_sections_examples(dtype, major, swizzle, tile, lbo, sbo):
    td = descgen.smem_for_tile(dtype=dtype, major=major, swizzle=swizzle, mn=tile[0], k=tile[1], start_address=0,
                               arch="sm_90a")
    assert (td.lbo, td.sbo, td.descriptor) == (lbo, sbo, "wgmma_smem")
    assert descgen.decode_wgmma_smem(td.word).values()["lbo"] == lbo
    assert any("§9.7.15.5.1.2.1.3" in s for s in td.reasoning)


@pytest.mark.parametrize("kwargs, error, code", [
    ({"dtype": "tf32", "major": "mn"}, descgen.EncodeError, "LAYOUT-MAJOR-ARCH"),
    ({"dtype": "e4m3", "major": "mn"}, descgen.EncodeError, "LAYOUT-MAJOR-ARCH"),
    ({"swizzle": "128B_base32B", "major": "mn"}, descgen.EncodeError, "LAYOUT-SWIZZLE-CODE"),
    ({"kind": "f16"}, descgen.UsageError, "LAYOUT-KIND-ARCH"),
    ({"arch": "sm_80"}, descgen.UsageError, "LAYOUT-ARCH"),
])
def test_smem_for_tile_refuses_what_wgmma_lacks(kwargs, error, code):
    args = {"dtype": "f16", "major": "k", "swizzle": "128B", "mn": 64, "k": 64, "start_address": 0x400,
            "arch": "sm_90a", **kwargs}
    with pytest.raises(error) as e:
        descgen.smem_for_tile(**args)
    assert e.value.code == code


def test_smem_layout_reports_a_transposed_8_bit_tile():
    lay = descgen.smem_layout(HOPPER, dtype="e4m3", major="mn", mn=128, k=32, arch="sm_90a")
    assert "LAYOUT-MAJOR-ARCH" in codes(lay.findings) and not lay.ok


# --------------------------------------------------------------------------------------------
# The CLI.


def run(*args: str, code: int = 0):
    r = CliRunner().invoke(cli, list(args))
    assert r.exit_code == code, r.output
    return r


def test_cli_smem_encodes_a_wgmma_word():
    assert run("smem", "--addr", "0x400", "--lbo", "16", "--sbo", "1024", "--swizzle", "128B",
               "--arch", "sm_90a").stdout.strip() == hex(HOPPER)
    tile = run("smem", "--tile", "64x64", "--dtype", "f16", "--major", "k", "--swizzle", "128B", "--addr", "0x400",
               "--arch", "sm_90a", "--json").stdout
    doc = json.loads(tile)
    assert doc["result"]["descriptor"] == "wgmma_smem" and doc["tile"]["descriptor"] == "wgmma_smem"
    bad = run("smem", "--addr", "0x400", "--lbo", "16", "--sbo", "1024", "--swizzle", "128B", "--arch", "sm_90a",
              "--lbo-mode", "absolute", code=2)
    assert "--lbo-mode" in bad.output


def test_cli_decode_offers_the_wgmma_reading():
    lines = run("decode", hex(HOPPER), "--plain").stdout.splitlines()
    assert "consistent=wgmma_smem,smem" in lines and "wgmma_smem.swizzle=128B" in lines
    assert any(line.startswith("families=valid in both families") for line in lines)
    one = run("decode", hex(HOPPER), "--arch", "sm_90a", "--plain").stdout.splitlines()
    assert "descriptor=wgmma_smem" in one and "ok=true" in one
    assert "wgmma_smem.finding" not in run("decode", hex(BLACKWELL), "--plain").stdout
    assert "finding=error WGMMA-SMEM-RESERVED-46" in run("decode", hex(BLACKWELL), "--as", "wgmma_smem", "--plain",
                                                         code=1).stdout


def test_cli_validate_with_arch_sm_90a():
    assert run("validate", hex(HOPPER), "--arch", "sm_90a").exit_code == 0
    bad = run("validate", hex(BLACKWELL), "--arch", "sm_90a", code=1)
    assert "WGMMA-SMEM-RESERVED-46" in bad.output
    # a tcgen05 rule given sm_90a: tcgen05 needs a Blackwell target
    assert "tcgen05 needs" in run("validate", "0x08400010", "--kind", "f16", "--arch", "sm_90a", code=2).output


def test_cli_layout_and_port():
    lines = run("layout", hex(HOPPER), "--arch", "sm_90a", "--dtype", "f16", "--major", "k", "--tile", "64x16",
                "--plain").stdout.splitlines()
    assert "descriptor=wgmma_smem" in lines and "ok=true" in lines
    ported = run("port", hex(HOPPER), "--to", "sm_100a", "--plain").stdout.splitlines()
    assert ported[0] == f"word={BLACKWELL:#018x}" and "flipped=0x0000400000000000" in ported
    assert any(line.startswith("change.version=? -> 1") for line in ported)
    assert json.loads(run("port", hex(BLACKWELL), "--to", "sm_90a", "--json").stdout)["result"]["word"] == \
        f"{HOPPER:#018x}"
    refused = run("port", hex(descgen.encode_smem(start_address=0, lbo=16, sbo=1024, swizzle="128B_base32B")),
                  "--to", "sm_90a", code=1)
    assert "PORT-MODE" in refused.output


def test_the_tile_model_takes_wgmmas_types_from_the_shape_table():
    """The element types, K and major-ness smem_for_tile(arch="sm_90a") takes come from
    tables/wgmma_shapes.toml (one home): every multiplicand type but b1, K of the dense shape,
    MN-major only where the form has imm-trans."""
    from descgen.model.loader import atoms

    for t, k, mn in (("f16", 16, True), ("bf16", 16, True), ("tf32", 8, False), ("e4m3", 32, False),
                     ("e5m2", 32, False), ("s8", 32, False), ("u8", 32, False)):
        assert t in atoms().elements
        row = 4 * k  # one 128-byte atom row along K: every type's K is 32 bytes (16 f16, 8 tf32, 32 8-bit)
        td = descgen.smem_for_tile(dtype=t, major="k", swizzle="128B", mn=64, k=row, start_address=0, arch="sm_90a")
        assert td.descriptor == "wgmma_smem" and td.mma_k == k
        if mn:
            descgen.smem_for_tile(dtype=t, major="mn", swizzle="128B", mn=64, k=row, start_address=0, arch="sm_90a")
        else:
            with pytest.raises(descgen.EncodeError, match="LAYOUT-MAJOR-ARCH"):
                descgen.smem_for_tile(dtype=t, major="mn", swizzle="128B", mn=64, k=row, start_address=0, arch="sm_90a")
    with pytest.raises(descgen.EncodeError, match="LAYOUT-DTYPE-ARCH"):
        descgen.smem_for_tile(dtype="b1", major="k", swizzle="128B", mn=64, k=256, start_address=0, arch="sm_90a")


def test_emit_batch_and_diff_know_the_word():
    code = descgen.emit(HOPPER, "cpp", descriptor="wgmma_smem")
    assert "wgmma shared memory matrix descriptor" in code and "9.7.15.5.1.2.2" in code
    assert "\nconstexpr std::uint64_t wgmma_desc = 0x4000004000010040ull;\n\n#endif" in code  # (then the guard's end)
    td = descgen.smem_for_tile(dtype="f16", major="k", swizzle="128B", mn=64, k=64, start_address=0x400, arch="sm_90a")
    assert "#define WGMMA_DESC UINT64_C(0x4000004000010040)" in descgen.emit(td, "c")
    d = descgen.diff(HOPPER, HOPPER + 2, descriptor="wgmma_smem")
    assert d.descriptor == "wgmma_smem" and [f.name for f in d.changed] == ["start_address"]

    from descgen.batch import response_line

    def one(req):
        return json.loads(response_line(1, json.dumps(req)))

    enc = one({"op": "encode", "descriptor": "wgmma_smem", "start_address": 1024, "lbo": 16, "sbo": 1024,
               "swizzle": "128B"})
    assert enc["ok"] and enc["word"] == f"{HOPPER:#018x}"
    tile = one({"op": "encode", "descriptor": "wgmma_smem", "dtype": "f16", "major": "k", "swizzle": "128B", "mn": 64,
                "k": 64, "start_address": 1024})
    assert tile["word"] == f"{HOPPER:#018x}"
    dec = one({"op": "decode", "word": hex(HOPPER)})
    assert dec["consistent"] == ["wgmma_smem", "smem"]
    bad = one({"op": "validate", "descriptor": "wgmma_smem", "word": hex(BLACKWELL)})
    assert not bad["ok"] and [f["code"] for f in bad["findings"]] == ["WGMMA-SMEM-RESERVED-46"]
