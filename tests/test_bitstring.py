"""bitstring's role: a decoded word's bits as ``bitstring.Bits``, decoders that take Bits or the
word's bytes, and, here, a second packer made from the tables that the engine must agree with.

The second packer reads ``tables/*.toml`` itself (``tomllib``, not descgen's loader): each
layout's fields, MSB first, become a bitstring format string (``uint3=swizzle, uint8=fixed_53,
...``), and each logical value becomes its raw bits by the table (an enum's code, a flag's 0/1,
a constant's value, 0 for reserved bits, and the named transform, written again below). It packs
with ``bitstring.pack`` and unpacks with ``Bits.unpack``; the engine's generated ``pack`` and
``unpack`` functions (``descgen.model.engine.Plan``) must give the same words and fields over the legal
space of every layout and kind: every member of every field's domain (the others at a legal
value), every raw value of every field, and random legal words (hypothesis).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from typing import Any, Callable

import bitstring
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import descgen
from descgen.model.engine import Plan, plan
from descgen.model.loader import LAYOUT_FILES, layout

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: The transforms the tables name, written again from Tables 40-45 (descgen/core/transforms.py is the
#: engine's copy): logical value -> raw bits.
TRANSFORMS: dict[str, Callable[[int], int]] = {
    "identity": lambda x: x,
    "matrix_descriptor_encode": lambda x: (x & 0x3FFFF) >> 4,  # Table 40
    "shr3": lambda x: x >> 3,  # N >> 3
    "shr4": lambda x: x >> 4,  # M >> 4 (Table 42)
    "shr7": lambda x: x >> 7,  # M >> 7 (Tables 43-44)
    "minus1": lambda x: x - 1,  # Table 45: count - 1
}


# --------------------------------------------------------------------------------------------
# The second packer: the tables as bitstring format strings.


class TablePacker:
    """One layout (a ``tables/*.toml`` file) for one kind, read with tomllib: ``fmt`` is the
    bitstring format string of its fields MSB first, ``raw(values)`` the fields' raw bits by
    the table, ``pack(values)`` the word by ``bitstring.pack``."""

    def __init__(self, file: str, kind: str | None) -> None:
        with open(os.path.join(REPO, "tables", file), "rb") as fh:
            doc = tomllib.load(fh)
        self.width: int = doc["descriptor"]["width"]
        kinds = doc["descriptor"].get("kinds", [])
        self.kind = kind
        self.fields: list[dict[str, Any]] = []
        for row in doc["field"]:
            lo, _, hi = row["bits"].partition("-")
            f = {"name": row["name"], "type": row["type"], "lo": int(lo), "hi": int(hi or lo),
                 "transform": TRANSFORMS[row.get("transform", "identity")], "const": row.get("value", 0)}
            if row["type"] == "enum":
                members = row["members"]
                if kinds and set(members) <= set(kinds):  # a per-kind table of members
                    members = members.get(kind, {})
                as_key = int if row.get("value_type") == "int" else str
                f["codes"] = {as_key(name): code["code"] if isinstance(code, dict) else code
                              for name, code in members.items()}
            self.fields.append(f)
        self.fields.sort(key=lambda f: -f["lo"])  # MSB first, as bitstring writes a word
        self.fmt = ", ".join(f"uint{f['hi'] - f['lo'] + 1}={f['name']}" for f in self.fields)
        self.unpack_fmt = ", ".join(f"uint{f['hi'] - f['lo'] + 1}" for f in self.fields)

    def raw(self, values: dict[str, Any]) -> dict[str, int]:
        out = {}
        for f in self.fields:
            if f["type"] == "reserved":
                out[f["name"]] = 0
            elif f["type"] == "constant":
                out[f["name"]] = f["const"]
            elif f["type"] == "enum":
                out[f["name"]] = f["codes"][values[f["name"]]]
            elif f["type"] == "flag":
                out[f["name"]] = int(values[f["name"]])
            else:
                out[f["name"]] = f["transform"](values[f["name"]])
        return out

    def pack(self, values: dict[str, Any]) -> bitstring.Bits:
        return bitstring.pack(self.fmt, **self.raw(values))

    def unpack(self, word: int) -> dict[str, int]:
        """Every field's raw bits (by name) of ``word``, by ``Bits.unpack``."""
        got = bitstring.Bits(uint=word, length=self.width).unpack(self.unpack_fmt)
        return {f["name"]: raw for f, raw in zip(self.fields, got)}


def _cases() -> list[tuple[str, str | None]]:
    """(layout, kind) for every layout: one per kind of each idesc layout, else kind None."""
    return [(name, kind) for name in LAYOUT_FILES for kind in (layout(name).kinds or (None,))]


CASES = _cases()
IDS = [f"{name}-{kind}" if kind else name for name, kind in CASES]


def _domains(p: Plan) -> dict[str, tuple[Any, ...]]:
    """The legal values of each value field of the plan's kind (the tables' domains)."""
    return {f.name: f.domain(p.kind).members() for f in p.value_fields}


def _engine_pack(p: Plan, values: dict[str, Any]) -> int:
    """The word of the engine's generated ``pack`` function (compiled on the first call)."""
    word = p.pack(values)
    assert p.pack.__name__ == "pack"  # the generated function, not the first call's compiler
    return int(word)


def _engine_unpack(p: Plan, word: int) -> tuple[dict[str, int], dict[str, Any]]:
    """Every field's raw bits and the value fields' values, by the engine's generated ``unpack``."""
    read = p.read(word)
    assert p.unpack is not None and p.unpack.__name__ == "unpack"
    return {f.name: f.raw for f in read.fields}, read.values


def test_the_cases_cover_every_layout_and_kind() -> None:
    assert {name for name, _ in CASES} == set(LAYOUT_FILES)
    assert {kind for name, kind in CASES if name.startswith("idesc")} == set(descgen.KINDS)
    assert len(CASES) == len(descgen.KINDS) + 4  # smem, wgmma_smem, zcm, taddr


@pytest.mark.parametrize(("name", "kind"), CASES, ids=IDS)
def test_the_format_string_tiles_the_word(name: str, kind: str | None) -> None:
    """The format string names every field of the engine's layout once, MSB first, and its
    lengths add up to the word's width."""
    packer = TablePacker(LAYOUT_FILES[name], kind)
    lay = layout(name)
    assert packer.width == lay.width
    assert [f["name"] for f in packer.fields] == [f.name for f in reversed(lay.fields)]
    assert len(packer.pack({f.name: m[0] for f, m in ((f, f.domain(kind).members())
                                                      for f in lay.fields if f.is_value)})) == lay.width
    assert sum(f["hi"] - f["lo"] + 1 for f in packer.fields) == lay.width


@pytest.mark.parametrize(("name", "kind"), CASES, ids=IDS)
def test_every_domain_member_packs_alike(name: str, kind: str | None) -> None:
    """Exhaustive over each field's legal values (the others at their first legal value): the
    bitstring packer and the engine's generated pack give the same word, and the generated
    unpack gives back the values and the raw bits Bits.unpack reads."""
    p = plan(name, kind)
    packer = TablePacker(LAYOUT_FILES[name], kind)
    domains = _domains(p)
    base = {field: members[0] for field, members in domains.items()}
    swept = 0
    for field, members in domains.items():
        for member in members:
            values = {**base, field: member}
            word = packer.pack(values)
            assert _engine_pack(p, values) == word.uint, (field, member)
            raws, got = _engine_unpack(p, word.uint)
            assert got == values and raws == packer.unpack(word.uint), (field, member)
            swept += 1
    assert swept == sum(map(len, domains.values())) > 0


@pytest.mark.parametrize(("name", "kind"), CASES, ids=IDS)
def test_every_raw_value_unpacks_alike(name: str, kind: str | None) -> None:
    """Exhaustive over each field's raw bits (reserved and constant fields too), the rest of the
    word 0 and then all ones: the engine's generated unpack reads the raw bits Bits.unpack
    reads, and bitstring.pack of those raw bits is the word again. Every raw value of a field of
    up to 14 bits (every field but the tensor memory address's 16-bit lane and column: for those
    0..1023, each single bit, all ones and every 61st value); bitstring.pack of every raw value
    of a field of up to 10 bits, of a wider one the same sample."""
    packer = TablePacker(LAYOUT_FILES[name], kind)
    p = plan(name, kind)
    full = (1 << packer.width) - 1
    for f in packer.fields:
        width, lo = f["hi"] - f["lo"] + 1, f["lo"]
        hole = full ^ (((1 << width) - 1) << lo)
        sample = {*range(1024), *(1 << b for b in range(width)), (1 << width) - 1, *range(0, 1 << width, 61)}
        repack = set(range(1 << width)) if width <= 10 else sample
        for raw in (range(1 << width) if width <= 14 else sorted(sample)):
            for rest in (0, hole):
                word = rest | raw << lo
                want = packer.unpack(word)
                assert want[f["name"]] == raw
                raws, _ = _engine_unpack(p, word)
                assert raws == want, (f["name"], hex(word))
                if raw in repack:
                    assert bitstring.pack(packer.fmt, **raws).uint == word


def _legal_values(name: str, kind: str | None) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({field: st.sampled_from(members)
                                  for field, members in _domains(plan(name, kind)).items()})


@settings(max_examples=150, deadline=None)
@given(st.data())
@pytest.mark.parametrize(("name", "kind"), CASES, ids=IDS)
def test_random_legal_words_pack_alike(name: str, kind: str | None, data: st.DataObject) -> None:
    """Random legal values of every field at once: the same word from both packers, and the
    engine's generated unpack gives the values back (with Decoded.bits the bitstring word)."""
    values = data.draw(_legal_values(name, kind))
    p = plan(name, kind)
    packer = TablePacker(LAYOUT_FILES[name], kind)
    word = packer.pack(values)
    assert _engine_pack(p, values) == word.uint
    raws, got = _engine_unpack(p, word.uint)
    assert got == values and raws == packer.unpack(word.uint)
    assert p.decode(word).bits == word  # the decoder takes the Bits, and hands the same back


@settings(max_examples=150, deadline=None)
@given(st.data())
@pytest.mark.parametrize(("name", "kind"), CASES, ids=IDS)
def test_random_words_unpack_alike(name: str, kind: str | None, data: st.DataObject) -> None:
    """Any word of the width, legal or not: the engine's fields are the bitstring packer's."""
    packer = TablePacker(LAYOUT_FILES[name], kind)
    word = data.draw(st.integers(0, (1 << packer.width) - 1))
    raws, _ = _engine_unpack(plan(name, kind), word)
    assert raws == packer.unpack(word)
    assert bitstring.pack(packer.fmt, **raws).uint == word


def test_the_packer_sees_a_wrong_table() -> None:
    """The comparison can fail: a format string with two fields swapped, or a wrong transform,
    gives another word than the engine's."""
    p = plan("smem_desc")
    packer = TablePacker(LAYOUT_FILES["smem_desc"], None)
    values = {"start_address": 0x400, "lbo": 16, "sbo": 1024, "base_offset": 0, "lbo_mode": "relative",
              "swizzle": "128B"}
    assert packer.pack(values).uint == _engine_pack(p, values) == 0x4000404000010040
    packer.fmt = packer.fmt.replace("=sbo", "=TMP").replace("=start_address", "=sbo").replace("=TMP", "=start_address")
    assert (bitstring.pack(packer.fmt, **packer.raw({**values, "sbo": 2048})).uint
            != _engine_pack(p, {**values, "sbo": 2048}))
    packer = TablePacker(LAYOUT_FILES["smem_desc"], None)
    packer.fields[-1]["transform"] = lambda x: x >> 3
    assert packer.pack(values).uint != _engine_pack(p, values)


def test_every_transform_of_the_tables_is_written_here() -> None:
    """A transform a table names and TRANSFORMS lacks fails TablePacker (KeyError) and this test;
    the two copies agree over each field's legal values."""
    for name in LAYOUT_FILES:
        lay = layout(name)
        for f in lay.fields:
            assert f.transform.name in TRANSFORMS, (name, f.name)
            if f.type == "uint":
                for kind in lay.kinds or (None,):
                    for v in f.domain(kind).members():
                        assert TRANSFORMS[f.transform.name](v) == f.transform.encode(v)


# --------------------------------------------------------------------------------------------
# Decoded.bits and Decoded.field_bits.

DECODERS: list[tuple[str, int, Callable[[Any], descgen.Decoded]]] = [
    ("idesc", 32, lambda w: descgen.decode_idesc(w, "f16")),
    ("idesc", 32, lambda w: descgen.decode_idesc(w, "mxf4nvf4")),
    ("smem", 64, descgen.decode_smem),
    ("wgmma_smem", 64, descgen.decode_wgmma_smem),
    ("zcm", 64, descgen.decode_zcm),
    ("taddr", 32, descgen.decode_taddr),
    ("smem", 64, lambda w: descgen.decode("smem_desc", w)),
    ("idesc", 32, lambda w: descgen.decode("idesc_mxf8f6f4", w, "mxf8f6f4")),
    ("idesc", 32, lambda w: descgen.validate_idesc(w, "f16", cta_group=1).decoded["idesc"]),
    ("smem", 64, lambda w: descgen.validate_smem(w, arch="sm_100a").decoded["smem"]),
    ("zcm", 64, lambda w: descgen.validate_zcm(w, m=128).decoded["zcm"]),
    ("wgmma_smem", 64, lambda w: descgen.validate_wgmma_smem(w).decoded["wgmma_smem"]),
    ("taddr", 32, lambda w: descgen.validate_taddr(w, warp=1).decoded["taddr"]),
]
DECODER_IDS = ["decode_idesc", "decode_idesc-mxf4nvf4", "decode_smem", "decode_wgmma_smem", "decode_zcm",
               "decode_taddr", "decode-smem", "decode-idesc", "validate_idesc", "validate_smem", "validate_zcm",
               "validate_wgmma_smem", "validate_taddr"]


@settings(max_examples=60, deadline=None)
@given(st.data())
@pytest.mark.parametrize(("what", "width", "decode"), DECODERS, ids=DECODER_IDS)
def test_decoded_bits_are_the_word_msb_first(what: str, width: int, decode: Callable[[Any], descgen.Decoded],
                                             data: st.DataObject) -> None:
    """``Decoded.bits`` is a Bits of the word's width with ``.uint == word``, PTX bit b at index
    width - 1 - b; ``field_bits(name)`` is each field's raw bits, MSB first, at its width."""
    word = data.draw(st.integers(0, (1 << width) - 1))
    d = decode(word)
    bits = d.bits
    assert type(bits) is bitstring.Bits and len(bits) == width == d.width and bits.uint == word
    assert bits.hex == d.hex[2:]
    assert [bits[width - 1 - b] for b in range(width)] == [bool(word >> b & 1) for b in range(width)]
    for f in d.fields:
        fb = d.field_bits(f.name)
        assert type(fb) is bitstring.Bits and len(fb) == f.hi - f.lo + 1 and fb.uint == f.raw, f.name
        assert fb == bits[width - 1 - f.hi: width - f.lo]


@settings(max_examples=60, deadline=None)
@given(st.data())
@pytest.mark.parametrize(("what", "width", "decode"), DECODERS, ids=DECODER_IDS)
def test_decoders_take_bits_and_little_endian_bytes(what: str, width: int, decode: Callable[[Any], descgen.Decoded],
                                                    data: st.DataObject) -> None:
    """A Bits of the word's width, and the word's bytes little-endian (bytes, bytearray,
    memoryview), decode as the integer does; ``decode(d.bits)`` is ``d``."""
    word = data.draw(st.integers(0, (1 << width) - 1))
    want = decode(word)
    little = word.to_bytes(width // 8, "little")
    for given_as in (bitstring.Bits(uint=word, length=width), bitstring.BitArray(uint=word, length=width), want.bits,
                     little, bytearray(little), memoryview(little)):
        assert decode(given_as) == want, given_as


def test_bytes_are_little_endian() -> None:
    """The bytes of a word as it lies in memory: byte 0 holds bits 0-7."""
    assert descgen.decode_idesc(bytes.fromhex("10004008"), "f16").word == 0x08400010
    assert descgen.decode_idesc(b"\x10\x00\x40\x08", "f16").value("n") == 256
    smem = descgen.decode_smem((0x4000404000010040).to_bytes(8, "little"))
    assert smem.word == 0x4000404000010040 and smem.value("swizzle") == "128B"
    assert descgen.decode_smem((0x4000404000010040).to_bytes(8, "big")).word == 0x4000010040400040  # read as LE


@pytest.mark.parametrize(("decode", "width", "code"), [
    (lambda w: descgen.decode_idesc(w, "f16"), 32, "IDESC-WORD-RANGE"),
    (descgen.decode_smem, 64, "SMEM-WORD-RANGE"),
    (descgen.decode_wgmma_smem, 64, "WGMMA-SMEM-WORD-RANGE"),
    (descgen.decode_zcm, 64, "ZCM-WORD-RANGE"),
    (descgen.decode_taddr, 32, "TADDR-WORD-RANGE"),
    (lambda w: descgen.validate_smem(w), 64, "SMEM-WORD-RANGE"),
    (lambda w: descgen.decode("taddr", w), 32, "TADDR-WORD-RANGE"),
    (descgen.decode_idesc_all, 32, "IDESC-WORD-RANGE"),
], ids=["idesc", "smem", "wgmma_smem", "zcm", "taddr", "validate_smem", "decode-taddr", "decode_idesc_all"])
def test_a_wrong_length_is_a_word_error(decode: Callable[[Any], Any], width: int, code: str) -> None:
    """Bits or bytes of another length than the word's: the word's WORD-RANGE error, field
    ``word``, its message naming the length given and the one allowed. Never padded or cut."""
    for n in (width - 1, width + 1, 0, 96 - width):
        with pytest.raises(descgen.WordError) as e:
            decode(bitstring.Bits(uint=0, length=n) if n else bitstring.Bits())
        assert (e.value.code, e.value.field) == (code, "word")
        assert f"a Bits of length {n} given" in str(e.value) and f"a Bits of length {width}" in e.value.allowed
    for n in (width // 8 - 1, width // 8 + 1, 0, 96 // 8 - width // 8):
        with pytest.raises(descgen.WordError) as e:
            decode(bytes(n))
        assert (e.value.code, e.value.field) == (code, "word")
        assert f"{n} bytes given" in str(e.value) and "little-endian" in str(e.value)
        assert e.value.allowed.startswith(f"{width // 8} bytes")
    with pytest.raises(descgen.WordError) as e:  # the finding holds an immutable copy (hashable, JSON as text)
        decode(bitstring.BitArray(uint=0, length=width - 1))
    assert type(e.value.findings[0].value) is bitstring.Bits and hash(e.value.findings[0]) is not None
    with pytest.raises(descgen.WordError) as e:
        decode(memoryview(bytearray(width // 8 + 1)))
    assert (e.value.findings[0].value == bytes(width // 8 + 1)
            and isinstance(e.value.findings[0].as_dict()["value"], str))
    with pytest.raises(descgen.WordError) as e:  # other objects: the integer check, as before
        decode("0x08400010")
    assert e.value.code == code


def test_as_word_reads_what_the_decoders_read() -> None:
    from descgen.model.engine import as_word

    assert as_word(bitstring.Bits("0x08400010"), 32, "idesc") == 0x08400010
    assert as_word(b"\x40\x00\x01\x00\x40\x40\x00\x40", 64, "smem") == 0x4000404000010040
    assert as_word(7, 32, "idesc") == 7 and as_word(descgen.Word(7), 32, "idesc").__class__ is int
    with pytest.raises(descgen.WordError):
        as_word(True, 32, "idesc")


def test_the_diagram_is_drawn_from_the_bits() -> None:
    """The terminal's bit diagram (cli/render.py) writes each field's Bits slice: its digit rows,
    read MSB first, are the word's binary digits."""
    pytest.importorskip("rich")
    from descgen.cli import render

    for d in (descgen.decode_idesc(0x48400010, "f16"), descgen.decode_smem(0xC000404000010040 | 0x3 << 14),
              descgen.decode_zcm(0x000C008007050301)):
        lines = render.bit_diagram(d, render.field_styles(d), 200)
        rows = [line.plain.strip() for line in lines if line.plain.strip() and set(line.plain.strip()) <= set("01 ")]
        assert "".join(rows).replace(" ", "") == d.bits.bin == format(d.word, f"0{d.width}b")


def test_bitstring_loads_only_where_bits_are_used() -> None:
    """``import descgen`` and decoding an integer leave bitstring out; ``Decoded.bits`` loads it."""
    code = ("import sys, descgen\n"
            "d = descgen.decode_smem(descgen.encode_smem(start_address=0x400, lbo=16, sbo=1024, swizzle='128B'))\n"
            "descgen.decode_idesc(b'\\x10\\x00\\x40\\x08', 'f16')\n"  # bytes need no bitstring
            "print('bitstring' in sys.modules)\n"
            "print(d.bits.hex, 'bitstring' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "4000404000010040", "True"]


def test_bitstring_is_a_dependency() -> None:
    """pyproject.toml names bitstring among the dependencies a wheel install pulls in."""
    with open(os.path.join(REPO, "pyproject.toml"), "rb") as fh:
        deps = tomllib.load(fh)["project"]["dependencies"]
    assert any(d.split(">")[0].split("=")[0].strip() == "bitstring" for d in deps), deps
