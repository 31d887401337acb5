"""The checks a wgmma group's sites share (descgen.sanitizer.shared_checks): which bits of a word
check code reads, which words are one register plus a constant, and the classes of sites checked on
two words. The group-level claim (the shared checks fire exactly where each site's own do) is
tested on real kernels in tests/test_instrument.py."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from check_machine import Machine, entry
from descgen.sanitizer.instrument import instrument_ptx
from descgen.sanitizer.shared_checks import Member, bits_read, offsets, shared

HERE = Path(__file__).parent


def test_bits_read_follows_masks_shifts_and_halves():
    code = ["cvt.u32.u64 %w0, %W;", "and.b32 %w1, %w0, 16376;", "shl.b32 %w1, %w1, 4;", "add.s32 %w2, %w1, 911;",
            "setp.ge.u32 %p0, %w2, %dgz_smem_size;", "selp.b32 %w3, 1, 0, %p0;",  # a bound: start & ~7
            "bfe.u32 %w4, %w0, 14, 2;",  # bits 14-15
            "mov.b64 {%lo, %hi}, %W;", "and.b32 %w5, %hi, 16383;",  # the SBO: bits 32-45
            "shr.u64 %r0, %W, 62;",  # the swizzle
            "add.s32 %w6, %w0, 5;", "and.b32 %w7, %w6, 8;",  # an add: every bit of the half it reads
            "and.b32 %w8, %w1, 0;",  # nothing
            "@%q mov.b32 %w9, %w5;"]  # perhaps written: what it held, or the new value, or the guard
    deps = bits_read(code, ["%W"])
    assert deps("%w3") == {"%W": 0x3FF8}
    assert deps("%w4") == {"%W": 0xC000}
    assert deps("%w5") == {"%W": 0x3FFF << 32}
    assert deps("%r0") == {"%W": 0b11 << 62}
    assert deps("%w7") == {"%W": 0xFFFFFFFF}
    assert deps("%w8") == {} and deps("%dgz_smem_size") == {}
    assert deps("%w9") == {"%W": 0x3FFF << 32}


def test_bits_read_tells_two_words_apart():
    deps = bits_read(["cvt.u32.u64 %a, %A;", "cvt.u32.u64 %b, %B;", "and.b32 %x, %a, 56;", "and.b32 %y, %b, 56;",
                      "or.b32 %z, %x, %y;"], ["%A", "%B"])
    assert deps("%x") == {"%A": 56} and deps("%z") == {"%A": 56, "%B": 56}


SHARED_PTX = [HERE / "device" / "sanitizer" / "ptx" / f"triton_{k}_sm90.ptx" for k in ("tma", "bf16", "persistent")]


@pytest.mark.parametrize("path", SHARED_PTX, ids=lambda p: p.name)
def test_bits_read_is_sound_on_real_check_code(path):
    """On the check blocks instrument writes for real kernels: a word's bits outside what
    bits_read says a block's flag reads never change the flag (random words, random flips)."""
    out = instrument_ptx(path.read_text())
    text = out.ptx.split("\n")
    first = entry(text)
    rng = random.Random(path.name)
    checked = 0
    for i, ln in enumerate(text):
        m = re.search(r"\{ // descgen: site \d+,.*, for sites [\d, ]+ on (.*)$", ln)
        if not m:
            continue
        words = [pair.split()[1] for pair in m.group(1).split(", ")]
        body = []
        for line in text[i + 1:]:
            if line.strip() == "}":
                break
            body.append(line.strip())
        flag = re.search(r"or\.b32 (%dgfw\d+),", body[-1])[1]
        deps = bits_read(body[:-1], words)
        acc = re.search(r"or\.b32 %dgfw\d+, %dgfw\d+, (%\S+);", body[-1])[1]
        guards = {g for ln2 in body for g in re.findall(r"selp\.b32 \S+, 0, \S+, (%\w+);", ln2)}
        for _ in range(200):
            regs = {w: rng.getrandbits(64) >> rng.choice((0, 40, 50)) for w in words}
            regs.update({g: rng.randrange(2) for g in guards} | {flag: 0})
            smem = rng.choice((0x30000, 0x400 * rng.randrange(1, 240)))
            before = Machine({}, dict(regs), smem_size=smem)
            before.run([*first, *body])
            flipped = {w: regs[w] ^ (rng.getrandbits(64) & ~deps(acc).get(w, 0)) for w in words}
            after = Machine({}, {**regs, **flipped}, smem_size=smem)
            after.run([*first, *body])
            assert bool(before.r[acc]) == bool(after.r[acc])
            checked += 1
    assert checked >= 200


def test_offsets_reads_adds_and_disjoint_ors():
    defs = {"%w": "add.s64 %w, %base, 6;", "%v": "or.b64 %v, %x, 4611686293305294848;",
            "%x": "cvt.u64.u32 %x, %y;", "%y": "bfe.u32 %y, %z, 4, 14;",
            "%u": "or.b64 %u, %t, 4611686293305294848;", "%s": "add.s64 %s, %base, %t;",
            "%r": "or.b64 %r, %x, 8;", "%o": "add.s64\t%o, %base, 017;"}
    look = defs.get
    assert offsets(look, "%w") == ("%base", 6)
    assert offsets(look, "%v") == ("%x", 4611686293305294848)  # (%x < 2**14: or is add)
    assert offsets(look, "%u") == ("%u", 0)  # (%t unbounded)
    assert offsets(look, "%s") == ("%s", 0)  # (a register: no constant)
    assert offsets(look, "%r") == ("%r", 0)  # (8 overlaps %x's bits)
    assert offsets(look, "%o") == ("%base", 15)  # (a tab after the opcode; a PTX octal literal)


def test_shared_classes_take_the_least_and_greatest_offset():
    defs = {f"%a{k}": f"add.s64 %a{k}, %A, {k * 2};" for k in range(4)}
    defs |= {f"%b{k}": f"add.s64 %b{k}, %B, {512 + k * 2};" for k in range(4)}
    members = [Member("code", {"a_desc": f"%a{k}", "b_desc": f"%b{k}"}, {"a_desc": 0x3FF8, "b_desc": 0x38})
               for k in range(4)]
    assert shared(members, defs.get) == [([0, 1, 2, 3], [{"a_desc": "%a0", "b_desc": "%b0"},
                                                         {"a_desc": "%a3", "b_desc": "%b3"}])]
    # a check reading bit 1: offsets 2 and 6 are no longer below its lowest bit read
    low = [Member("code", m.words, {"a_desc": 0x3FFE, "b_desc": 0x38}) for m in members]
    assert [c[0] for c in shared(low, defs.get)] == [[0], [1], [2], [3]]
    # two check codes, a check reading both words: no class
    mixed = [members[0], Member("other", members[1].words, members[1].reads), Member("code", members[2].words, None)]
    assert [c[0] for c in shared(mixed, defs.get)] == [[0], [1], [2]]
