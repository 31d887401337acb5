"""A wgmma group whose words change in its loop only with a stage counter reads its flag from a table
built where the loop is entered (descgen.sanitizer.stage_table): the counter's range is proven, the
table is exact on every iteration (the same findings, the same stand-ins and the same record as the
group's checks run on every iteration), and the Triton K loops of the GPU runs get one.
"""

from __future__ import annotations

import gzip
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from check_machine import Machine, const_tables, function_statements
from descgen.sanitizer import instrument as instrument_module
from descgen.sanitizer.instrument import _function_bodies, instrument_ptx
from descgen.sanitizer.stage_table import ENTRIES, MOST, counter_range

LEGAL = 0x4000004000010040  # (a K-major 128B-swizzled word: start address 1 KiB)
MMA = "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}"
#: Ways a compiler writes a counter of ``S`` stages: ``(setp, selp)`` over ``%t = %s + 1``.
WRAPS = {
    "gt": ("setp.gt.s32 %p1, %r6, {last};", "selp.b32 %r5, 0, %r6, %p1;"),  # (Triton)
    "eq": ("setp.eq.s32 %p1, %r6, {stages};", "selp.b32 %r5, 0, %r6, %p1;"),
    "lt": ("setp.lt.u32 %p1, %r6, {stages};", "selp.b32 %r5, %r6, 0, %p1;"),
    "ge_swapped": ("setp.le.s32 %p1, {stages}, %r6;", "selp.b32 %r5, 0, %r6, %p1;"),
}


def _loop_kernel(start: str, stage: str, source: str, step: str) -> str:
    """A K loop of ``%r1`` steps (the step register ``step``), two wgmma a step, A's word
    ``a + (source << sh)``, ``sh`` a kernel parameter: ``start`` before the loop, ``stage`` (the
    lines computing ``source``) at its top."""
    return (".version 8.0\n.target sm_90a\n.address_size 64\n"
            ".visible .entry k(.param .u64 a, .param .u32 n, .param .u32 sh)\n{\n.reg .f32 %f<5>;\n"
            ".reg .b64 %rd<8>;\n.reg .b32 %r<9>;\n.reg .pred %p<4>;\nld.param.u64 %rd1, [a];\n"
            f"ld.param.u32 %r1, [n];\nld.param.u32 %r2, [sh];\n{start}$L_loop:\n{stage}"
            f"cvt.u64.u32 %rd2, {source};\nshl.b64 %rd2, %rd2, %r2;\nadd.s64 %rd3, %rd1, %rd2;\n"
            "wgmma.fence.sync.aligned;\n"
            f"{MMA}, %rd3, %rd1, 1, 1, 1, 0, 0;\nadd.s64 %rd4, %rd3, 2;\n{MMA}, %rd4, %rd1, 1, 1, 1, 0, 0;\n"
            f"wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\nadd.s32 {step}, {step}, 1;\n"
            f"setp.lt.u32 %p2, {step}, %r1;\n@%p2 bra $L_loop;\nret;\n}}\n")


def _staged_kernel(stages: int = 3, init: int = -1, wrap: str = "gt", extra: str = "") -> str:
    """:func:`_loop_kernel` with A's word ``a + (s << sh)`` for the stage counter ``s`` (``%r5``:
    ``init``, then ``0 .. stages - 1`` over and over; the step ``%r3``); ``extra``: a line in the loop."""
    setp, selp = (t.format(last=stages - 1, stages=stages) for t in WRAPS[wrap])
    return _loop_kernel(f"mov.b32 %r5, {init};\nmov.b32 %r3, 0;\n", f"add.s32 %r6, %r5, 1;\n{setp}\n{selp}\n{extra}",
                        "%r5", "%r3")


def _run(ptx: str, regs: dict[str, int], tid: int = 0) -> Machine:
    m = Machine(const_tables(ptx), regs, tid=tid)
    m.run(function_statements(ptx))
    return m


@pytest.mark.parametrize("on_error", ["trap", "report"])
def test_a_stage_counters_group_reads_its_flag_from_a_table(on_error, tmp_path):
    """The group's checks run before the loop, once for each stage; in the loop the group reads one
    bit. A bad word on stage 2 (``2 << 13`` sets reserved bit 14) is flagged on stage 2's steps only:
    their wgmma read stand-ins, the last one's word is recorded; a run that never reaches stage 2
    records nothing although the table's bit for it is set; ptxas assembles it."""
    text = _staged_kernel()
    out = instrument_ptx(text, on_error=on_error)
    head, back = (text.split("\n").index(ln) + 1 for ln in ("$L_loop:", "@%p2 bra $L_loop;"))
    loop = out.ptx[out.ptx.index("$L_loop:"):out.ptx.index("@%p2 bra $L_loop;")]
    before = out.ptx[:out.ptx.index("$L_loop:")]
    assert "{ // descgen: site" not in loop and "// descgen: group 0's flag: its table's bit for %r5" in loop
    headers = re.findall(r"\{ // descgen: site [^\n]*", before)
    assert len(headers) == 4 * len(set(headers))  # (the stage's four values, -1 .. 2, at the loop's entry)
    sites = [s for s in out.sites if s.checks]
    assert {s.table for s in sites} == {
        f"for each value of %r5 (-1..2), once per entry into the loop at lines {head}-{back}"}
    assert not re.search(r"\b(bra\S*|trap|exit)\b", loop.replace("@%p2 bra $L_loop", ""))
    assert "2 checked at run time" in out.summary() and "2 of them once per entry into their loop" in out.summary()
    safe = 0x4000010000
    for tid in (0, 5):
        m = _run(out.ptx, {"%rd1": LEGAL, "%r1": 4, "%r2": 13}, tid)
        steps = [[(LEGAL + (s << 13), LEGAL), (LEGAL + (s << 13) + 2, LEGAL)] for s in (0, 1)]
        assert m.wgmma == steps[0] + steps[1] + [(safe, safe)] * 2 + steps[0]
        assert [(r["site"], sites[0].codes[r["code"]], r["word"]) for r in m.records()] == (
            [(sites[0].index, "WGMMA-SMEM-RESERVED-14", LEGAL + (2 << 13))] if tid == 0 else [])
        assert m.trapped == (on_error == "trap" and tid == 0)
    short = _run(out.ptx, {"%rd1": LEGAL, "%r1": 2, "%r2": 13})
    # (the table is indexed by the counter where the checks run, before its wrap: bit 1 - (-1) for 1 -> 2)
    assert short.r["%dgt0"] == 0b100 and not short.records() and safe not in {a for a, _ in short.wgmma}
    clean = _run(out.ptx, {"%rd1": LEGAL, "%r1": 5, "%r2": 12})
    assert clean.r["%dgt0"] == 0 and not clean.records() and not clean.trapped and len(clean.wgmma) == 10
    if shutil.which("ptxas"):
        (tmp_path / "k.ptx").write_text(out.ptx)
        run = subprocess.run(["ptxas", "-arch=sm_90a", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")],
                             capture_output=True, text=True)
        assert run.returncode == 0 and "C75" not in run.stderr, run.stderr[:2000]


@settings(max_examples=40, deadline=None)
@given(stages=st.integers(1, 8), init=st.integers(-1, 7), wrap=st.sampled_from(sorted(WRAPS)),
       steps=st.integers(1, 12), sh=st.integers(8, 14), base=st.sampled_from([LEGAL, LEGAL + 0x3000, LEGAL | 0x38]))
def test_the_table_is_exact_on_every_step(stages, init, wrap, steps, sh, base):
    """Run whole: the table gives each step the flag the group's checks give it there (the
    instrumentation without tables, the same inputs): the same words to the tensor core (stand-ins
    on the same steps), the same record."""
    init = min(init, stages - 1)
    text = _staged_kernel(stages, init, wrap)
    regs = {"%rd1": base, "%r1": steps, "%r2": sh}
    tabled = instrument_ptx(text)
    # (the counter where the checks run, before its wrap: init .. stages - 1; a table for at most MOST values)
    assert all(bool(s.table) == (stages - min(init, 0) <= MOST) for s in tabled.sites if s.checks)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(instrument_module, "stage_table", lambda *args: None)
        each = instrument_ptx(text)
    assert "%dgt0" not in each.ptx
    a, b = _run(tabled.ptx, dict(regs)), _run(each.ptx, dict(regs))
    assert a.wgmma == b.wgmma and a.records() == b.records() and a.trapped == b.trapped


def _at_selp(text: str) -> tuple[list[str], tuple[int, int], int]:
    lines = text.split("\n")
    return lines, _function_bodies(lines)[0], next(n for n, ln in enumerate(lines, 1) if ln.startswith("cvt.u64"))


@pytest.mark.parametrize("wrap", sorted(WRAPS))
@pytest.mark.parametrize("stages,init", [(3, -1), (3, 0), (4, 2), (1, 0), (8, -1)])
def test_a_counters_range(wrap, stages, init):
    """The counter's values after its wrap: 0 .. stages - 1 whatever the compare; at the loop's head
    (before it): its first value too."""
    lines, body, after = _at_selp(_staged_kernel(stages, init, wrap))
    assert counter_range(lines, body, "%r5", after) == (0, stages - 1)
    head = lines.index("add.s32 %r6, %r5, 1;") + 1
    assert counter_range(lines, body, "%r5", head) == (min(init, 0), stages - 1)


@pytest.mark.parametrize("extra", [
    "add.s32 %r5, %r5, 1;\n",  # (another write: the counter is not one)
    "@%p2 mov.b32 %r5, 7;\n",  # (a guarded write)
    "mov.b32 %r5, %r3;\n",  # (a write of a register)
    "add.s32 %r6, %r6, 5;\n",  # (the sum changed before the selp? no: after it; then read below)
])
def test_a_register_that_is_no_counter_has_no_range_and_its_group_no_table(extra):
    """Where some write of the counter is not a ``mov`` of an immediate or the wrap, it has no range
    (or a range too wide), and its group is checked on every step."""
    text = _staged_kernel(extra=extra)
    lines, body, after = _at_selp(text)
    found = counter_range(lines, body, "%r5", after)
    if extra.startswith("add.s32 %r6"):  # (the sum is not the counter: the range holds)
        assert found == (0, 2)
        return
    assert found is None or found[1] - found[0] >= 8
    assert not any(s.table for s in instrument_ptx(text).sites)


def test_a_counter_copied_from_a_register_that_holds_an_immediate():
    """CUTLASS's pipeline state starts as a copy of a register just set to 0: the copy's value is
    the immediate its source holds there; a source loaded (a kernel parameter) gives no range."""
    for source, expected in (("mov.b32 %r8, -1;\nmov.b32 %r5, %r8;", (0, 2)), ("mov.b32 %r5, %r2;", None)):
        lines, body, after = _at_selp(_staged_kernel().replace("mov.b32 %r5, -1;", source))
        assert counter_range(lines, body, "%r5", after) == expected
    tutorial = instrument_ptx((Path(__file__).parent / "corpus" / "cutlass_sm90" / "cute_tutorial_wgmma_sm90.ptx")
                              .read_text())
    assert len({s.table for s in tutorial.sites if s.table}) == 2


def test_a_loop_with_more_ways_in_than_entries_gets_no_table():
    """Each way into the loop gets the table's code: past ENTRIES of them, the group is checked on
    every step instead."""
    ways = "@%p3 bra $L_mid;\n" * ENTRIES
    text = _staged_kernel().replace("mov.b32 %r3, 0;\n", "mov.b32 %r3, 0;\n" + ways).replace(
        "cvt.u64.u32 %rd2, %r5;\n", "$L_mid:\ncvt.u64.u32 %rd2, %r5;\n")
    assert not any(s.table for s in instrument_ptx(text).sites)


def test_a_wrap_that_may_overflow_gives_no_range():
    """A counter that starts at the largest int: its sum could wrap (no range)."""
    lines, body, after = _at_selp(_staged_kernel(init=2 ** 31 - 1))
    assert counter_range(lines, body, "%r5", after) is None


def test_a_loop_entered_in_its_middle_builds_its_table_on_that_way_in_too():
    """A branch from before the loop to a label inside it (LLVM enters a loop at its header when
    its latch is placed above): the table is built before that branch too, and both ways in give
    each step the group's own flag (the first step through the middle sees the counter's -1)."""
    text = _staged_kernel().replace("mov.b32 %r3, 0;\n", "mov.b32 %r3, 0;\n@%p3 bra $L_mid;\n").replace(
        "cvt.u64.u32 %rd2, %r5;\n", "$L_mid:\ncvt.u64.u32 %rd2, %r5;\n")
    tabled = instrument_ptx(text)
    assert tabled.ptx.count("// descgen: group 0's checks") == 2
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(instrument_module, "stage_table", lambda *args: None)
        each = instrument_ptx(text)
    for middle in (0, 1):
        for sh in (4, 13):
            regs = {"%rd1": LEGAL, "%r1": 4, "%r2": sh, "%p3": middle}
            a, b = _run(tabled.ptx, dict(regs)), _run(each.ptx, dict(regs))
            assert a.wgmma == b.wgmma and a.records() == b.records(), (middle, sh)


def _masked_kernel(mask: int = 3) -> str:
    """:func:`_loop_kernel` with A's word ``a + ((k & mask) << sh)`` for the step ``k`` (``%r5``,
    unbounded: the hand-written GEMM's stage is the K index through a mask)."""
    return _loop_kernel("mov.b32 %r5, 0;\n", f"and.b32 %r7, %r5, {mask};\n", "%r7", "%r5")


@settings(max_examples=25, deadline=None)
@given(steps=st.integers(1, 12), sh=st.integers(10, 14), base=st.sampled_from([LEGAL, LEGAL + 0x3000, LEGAL | 0x38]))
def test_a_k_index_through_a_mask_indexes_the_table_by_its_bits(steps, sh, base):
    """The step ``k`` has no range, but the words read only bits 0-1 of it: the table has 4 bits,
    indexed by ``bfe k, 0, 2``, and gives each step the group's own flag."""
    text = _masked_kernel()
    tabled = instrument_ptx(text)
    assert {s.table.split(",")[0] for s in tabled.sites if s.checks} == {"for each value of bits 0..1 of %r5 (0..3)"}
    assert "bfe.u32 %dgb0, %r5, 0, 2;" in tabled.ptx
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(instrument_module, "stage_table", lambda *args: None)
        each = instrument_ptx(text)
    regs = {"%rd1": base, "%r1": steps, "%r2": sh}
    a, b = _run(tabled.ptx, dict(regs)), _run(each.ptx, dict(regs))
    assert a.wgmma == b.wgmma and a.records() == b.records() and a.trapped == b.trapped


@pytest.mark.parametrize("mask", [5, 15])
def test_bits_that_are_no_small_field_index_no_table(mask):
    """Two runs of bits (``k & 5``), or 16 values (``k & 15``): no table, the checks on every step."""
    assert not any(s.table for s in instrument_ptx(_masked_kernel(mask)).sites)


RECORDED = Path(__file__).parent / "device" / "sanitizer" / "recorded" / "triton"


@pytest.mark.parametrize("kernel,stage,values", [("bf16", "%r402", (0, 2)), ("fp8", "%r401", (0, 2)),
                                                 ("persistent", "%r389", (0, 2)), ("tma", "%r168", (0, 3))])
def test_tritons_k_loops_get_a_table(kernel, stage, values):
    """The Triton matmuls of the GPU runs (Triton 3.6): each K loop's group reads a table indexed by
    its stage counter (``mov.b32 s, -1`` before the loop, Triton's wrap in it)."""
    text = gzip.open(RECORDED / f"{kernel}.plain.ptx.gz", "rt").read()
    out = instrument_ptx(text)
    tables = {s.table for s in out.sites if s.checks}
    assert len(tables) == 1 and f"for each value of {stage} ({values[0]}..{values[1]})" in tables.pop()


def test_recorded_gpu_run_of_a_fault_on_one_stage():
    """On the H200 (tests/device/triton_hook, ``stage``): the persistent matmul with A's tiles moved
    16 KiB up in the words its wgmma read faults without descgen (an illegal address), and stops
    with it on SMEM-OUTSIDE-CTA, every word found one of stage 2 (the dynamic shared memory's base
    1 KiB, A's stage s at 112 KiB + 16 KiB * s, the second warpgroup's half 8 KiB further; stages 0
    and 1 lie inside the CTA's 144 KiB): a finding through the table, on its stage only."""
    hook = Path(__file__).parent / "device" / "triton_hook" / "recorded"
    plain = (hook / "stage_plain.txt").read_text()
    assert "an illegal memory access was encountered" in plain
    found = (hook / "stage.txt").read_text()
    assert "codes: ['SMEM-OUTSIDE-CTA'] complete: True" in found
    starts = re.search(r"start addresses of the words found \(bytes\): \[(.*)\]", found)[1]
    base = 0x400
    assert {int(x.strip("' "), 16) for x in starts.split(",")} == {base + (112 + 2 * 16) * 1024,
                                                                    base + (112 + 2 * 16 + 8) * 1024}
