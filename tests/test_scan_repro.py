"""The scanner's reproductions (tests/ptx/repro/, hand-written, each assembled by ptxas 13.0 for
sm_100a): each scans to the true value of every descriptor operand, or to the bits every run
agrees on (E42). tests/test_scan_soundness.py runs them concretely too."""

from __future__ import annotations

from pathlib import Path

from descgen.ptx.scan import scan_file

from conftest import REPO

REPRO = Path(REPO) / "tests" / "ptx" / "repro"
HIGH = 0xFFFFFFFF00000000
START = 0x3FFF  # Table 40 bits 0-13


def scan(name: str):
    return scan_file(str(REPRO / name))


def high(o) -> int | None:
    """The operand's high half when every bit of it is known."""
    k = o.known
    return (k.value >> 32) if k.mask & HIGH == HIGH else None


def test_sink_operand_keeps_each_half_in_its_place():
    """mov.b64 {_, %r4}, %rd2: %r4 is the high half. The old scanner dropped the '_' and read the
    repacked word as 0x0001100000011000-like: a wrong value called known."""
    (ins,) = scan("sink_operand.ptx").instructions
    a, b = ins.operand("a_desc"), ins.operand("b_desc")
    assert high(a) == high(b) == 0x40004040
    # all but the start address (+2 may carry into bit 14? no: below 2**14)
    assert b.known.mask & ~START == ((1 << 64) - 1) & ~START
    assert b.known.value & ~START == 0x4000404000010000 and a.unknown == b.unknown == ("start_address",)


def test_registers_declared_in_an_inline_asm_scope_and_shadowing():
    first, second = scan("inline_asm_scopes.ptx").instructions
    a, b = first.operand("a_desc"), first.operand("b_desc")
    assert a.text == "smem_desc_b_3" and high(a) == 0x40004040 and a.unknown == ("start_address",)
    assert high(b) == 0x40004040  # the inner %rd4, not the function's all-zero %rd4
    # after the block, %rd4 is the function's again: 0, and the scanner says so
    assert second.operand("a_desc").value == 0 and second.operand("a_desc").origin_line == 18


def test_register_reuse_without_a_loop_is_checked_per_definition():
    r = scan("register_reuse.ptx")
    first, second = r.instructions
    assert first.operand("b_desc").value == 0x2000404000010440 and second.operand("b_desc").value == 0x4000404000010440
    assert [(f.line, f.code) for f in r.findings if f.severity == "error"] == [(21, "MMA-SWIZZLE-TABLE52")]
    assert not r.ok


def test_a_loop_moving_the_start_address_keeps_the_high_word():
    (ins,) = scan("loop_stable_high_word.ptx").instructions
    a = ins.operand("a_desc")
    assert high(a) == 0x40004040  # SBO, version, base offset, swizzle
    assert {"start_address", "lbo"} <= set(a.unknown)  # +2 per pass, for n passes: may reach LBO
    assert "sbo" not in a.unknown and "swizzle" not in a.unknown


def test_stage_offsets_with_ranges_leave_lbo_known():
    wrap, modulo, extended = scan("stage_ranges.ptx").instructions
    for ins in (wrap, modulo, extended):
        o = ins.operand("a_desc")
        assert o.unknown in (("start_address",), ("start_address", "reserved_14")), (ins.line, o.unknown)
        assert o.known.mask & 0x3FFF0000 == 0x3FFF0000 and o.known.value >> 16 & 0x3FFF == 1  # LBO 16 bytes
        assert high(o) == 0x40004040
    # the stage counter of the first is in [0, 5]: the word's range says at most 5 << 10 above the base
    assert wrap.operand("a_desc").range[1] <= 0x4000404000010000 + 0x3FFF + (5 << 10)


def test_shfl_with_the_full_mask_keeps_what_every_lane_knows():
    (ins,) = scan("uniform_shfl.ptx").instructions
    a, b = ins.operand("a_desc"), ins.operand("b_desc")
    assert a.unknown == ("start_address",) and a.known.value >> 16 & 0x3FFF == 1
    assert "lbo" in b.unknown and b.reason == "shfl.sync without the full member mask"
    assert high(b) == 0x40004040  # the packed immediate high half
