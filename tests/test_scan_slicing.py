"""The scanner's sliced reader (descgen.ptx.slicer, for throughput) against reading every
statement: on every corpus file and reproduction the same findings and, for every descriptor
operand, every bit the full reading knows, with the same value, and a range inside its range (the
sliced reading may know more: a barrier-wait block between a ``setp`` and its ``selp`` no longer
splits their basic block; tests/test_scan_soundness.py runs the sliced reading concretely). And
hand-written cases where leaving out the wrong line would give a wrong value."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from descgen.ptx import scan as scan_module
from descgen.ptx import skipping
from descgen.ptx.scan import scan_ptx
from descgen.ptx.slicer import RESOLVED, slice_function

from conftest import REPO
from test_scan_soundness import check_text

ROOT = Path(REPO) / "tests"
FILES = sorted((ROOT / "corpus").glob("*/*.ptx")) + sorted((ROOT / "ptx").glob("*.ptx")) + \
    sorted((ROOT / "ptx" / "repro").glob("*.ptx"))


def unsliced(text: str, monkeypatch: pytest.MonkeyPatch):
    with monkeypatch.context() as m:
        m.setattr(scan_module, "slice_function", lambda *args: None)
        return scan_ptx(text)


def findings(r) -> list[tuple[int, str, str]]:
    return sorted((f.line, f.code, f.operand or "") for f in r.findings if f.code != "PTX-OPERAND-UNRESOLVED")


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_sliced_reading_knows_what_reading_every_statement_knows(path, monkeypatch):
    text = path.read_text(errors="replace")
    fast, full = scan_ptx(text), unsliced(text, monkeypatch)
    assert findings(fast) == findings(full)
    assert [(i.line, i.opcode) for i in fast.instructions] == [(i.line, i.opcode) for i in full.instructions]
    for a, b in zip(fast.instructions, full.instructions):
        for x, y in zip(a.operands, b.operands):
            assert (x.role, x.text) == (y.role, y.text)
            assert x.known.mask & y.known.mask == y.known.mask, (a.line, x.role)  # knows at least as much
            assert x.known.value & y.known.mask == y.known.value & y.known.mask, (a.line, x.role)
            if y.range is not None and x.range is not None:
                assert y.range[0] <= x.range[0] <= x.range[1] <= y.range[1], (a.line, x.role)
            if x.known.mask == y.known.mask:
                assert (x.value, x.origin, x.origin_line, x.unknown) == (y.value, y.origin, y.origin_line, y.unknown)


def test_the_sliced_reading_reads_every_corpus_kernel_and_leaves_most_lines_out():
    """It engages on every function with a descriptor instruction in the corpus, and what the
    scanner then reads is a small part of those functions."""
    read = total = 0
    for path in sorted((ROOT / "corpus").glob("*/*.ptx")):
        first = 1
        for part in skipping.functions(path.read_text(errors="replace")):
            lines = part.splitlines()
            if any(w in part for w in RESOLVED):
                sliced = slice_function(part, lines, first)
                assert sliced is not None, (path.name, first)
                read += len(sliced.events)
                total += sliced.read
            first += len(lines)
    assert total > 400_000 and read < total / 4


HEADER = """.version 9.0
.target sm_100a
.address_size 64
.visible .entry k(.param .u64 p)
{
\t.reg .pred %p<4>;
\t.reg .b32 %r<16>;
\t.reg .b64 %rd<8>;
\t.shared .align 1024 .b8 smem[32768];
"""
A = "0x4000404000010000"  # two legal words (version 1, SBO 1024 B, LBO 16 B), start 0 and 0x400
B = "0x4000404000010040"
MMA = "\ttcgen05.mma.cta_group::1.kind::f16 [%r0], %rd1, %rd1, %r7, 1;\n"


def one_operand(body: str, monkeypatch: pytest.MonkeyPatch):
    text = HEADER + "\tmov.b32 %r7, 136314896;\n" + body + MMA + "\tret;\n}\n"
    fast, full = scan_ptx(text), unsliced(text, monkeypatch)
    a, b = fast.instructions[0].operand("a_desc"), full.instructions[0].operand("a_desc")
    assert (a.known, a.range) == (b.known, b.range)
    return a


@pytest.mark.parametrize("body,value", [
    # the defining statement shares its line with another: the lexer reads that line
    (f"\tmov.b64 %rd1, {A}; mov.b64 %rd1, {B};\n", int(B, 16)),
    # a label before the statement on its line
    (f"\tmov.b64 %rd1, {A};\nL1: mov.b64 %rd1, {B};\n", int(B, 16)),
    # a statement over two lines
    (f"\tmov.b64 %rd1, {A};\n\tmov.b64 %rd1,\n\t\t{B};\n", int(B, 16)),
    # a guarded definition does not kill the one before it
    (f"\tmov.b64 %rd1, {A};\n\tsetp.eq.u32 %p1, %r9, 0;\n\t@%p1 mov.b64 %rd1, {B};\n", None),
    # a vector destination
    (f"\tmov.b64 %rd1, {A};\n\tmov.b64 {{%r1, %r2}}, %rd1;\n\tmov.b32 %r1, 64;\n\tmov.b64 %rd1, {{%r1, %r2}};\n",
     0x4000404000000040),
    # a line comment after the statement, a CRLF line end
    (f"\tmov.b64 %rd1, {A}; // not {B}\r\n", int(A, 16)),
])
def test_lines_the_sliced_reading_must_not_misread(body, value, monkeypatch):
    a = one_operand(body, monkeypatch)
    if value is None:
        assert a.value is None and a.known.mask & 0xFFFFFFFF00000000 == 0xFFFFFFFF00000000
    else:
        assert a.value == value


def test_a_block_branching_out_of_itself_is_read(monkeypatch):
    """{ @p bra SKIP; } jumps over the second definition: left out, the block would make %rd1
    fully known as B, which is wrong when p holds."""
    a = one_operand(f"\tmov.b64 %rd1, {A};\n\t{{\n\t.reg .pred q;\n\tsetp.eq.u32 q, %r9, 0;\n\t@q bra SKIP;\n\t}}\n"
                    f"\tmov.b64 %rd1, {B};\nSKIP:\n", monkeypatch)
    assert a.value is None and a.known.value & 0x40 == 0 and a.known.mask & 0x40 == 0


def test_a_quiet_block_is_left_out_and_its_own_loop_does_not_matter(monkeypatch):
    body = (f"\tmov.b64 %rd1, {A};\n\t{{\n\t.reg .pred P1;\n\tLAB_WAIT:\n"
            "\tmbarrier.try_wait.parity.shared.b64 P1, [%r3], %r4, 10000000;\n\t@P1 bra.uni DONE;\n"
            "\tbra.uni LAB_WAIT;\n\tDONE:\n\t}\n")
    assert one_operand(body, monkeypatch).value == int(A, 16)
    text = HEADER + body + MMA + "\tret;\n}\n"
    sliced = slice_function(text[text.index(".visible"):], text[text.index(".visible"):].splitlines(), 4)
    assert sliced is not None and not any("LAB_WAIT" in t for _, _, t in sliced.events)
    # with a brx.idx in the function (it may reach any label), the block stays
    with_brx = body + "\tbrx.idx %r5, tbl;\n"
    text = HEADER + with_brx + MMA + "\tret;\n}\n"
    part = text[text.index(".visible"):]
    sliced = slice_function(part, part.splitlines(), 4)
    assert sliced is not None and any("LAB_WAIT" in t for _, _, t in sliced.events)


def test_line_breaks_the_lexer_numbers_otherwise_are_left_to_it(monkeypatch):
    text = HEADER + f"\tmov.b64 %rd1, {A};\r\tmov.b64 %rd1, {B};\n" + MMA + "\tret;\n}\n"
    part = text[text.index(".visible"):]
    assert slice_function(part, part.splitlines(), 4) is None
    assert scan_ptx(text).instructions[0].operand("a_desc").value == int(B, 16)


# -- random functions: whatever the layout, the sliced reading is sound and knows what the full one does --

REGS32 = [f"%r{i}" for i in range(1, 9)]
REGS64 = [f"%rd{i}" for i in range(1, 5)]
PREDS = ["%p1", "%p2", "%p3"]


@st.composite
def statement(draw: st.DrawFn, labels: list[str]) -> list[str]:
    """One statement (or an inline-asm block) of a random function, as lines."""
    r = lambda: draw(st.sampled_from(REGS32))  # noqa: E731
    d = lambda: draw(st.sampled_from(REGS64))  # noqa: E731
    imm = lambda: draw(st.sampled_from([0, 1, 3, 16, 64, 0x400, 0x4040, 0x40004040, 0x10000]))  # noqa: E731
    kind = draw(st.integers(0, 11))
    if kind == 0:
        return [f"mov.b32 {r()}, {imm()};"]
    if kind == 1:
        return [f"add.s32 {r()}, {r()}, {imm()};"]
    if kind == 2:
        return [f"{draw(st.sampled_from(['and', 'or', 'xor']))}.b32 {r()}, {r()}, {imm()};"]
    if kind == 3:
        return [f"mov.b64 {d()}, {{{r()}, {r()}}};"]
    if kind == 4:
        space = draw(st.sampled_from([" ", ""]))  # ``mov.b64{%r1, %r2}, ...``: no blank before a vector
        return [f"mov.b64{space}{{{r()}, {draw(st.sampled_from(REGS32 + ['_']))}}}, {d()};"]
    if kind == 5:
        return [f"setp.{draw(st.sampled_from(['eq', 'ne', 'lt']))}.u32 {draw(st.sampled_from(PREDS))}, {r()}, {imm()};"]
    if kind == 6:
        return [f"selp.b32 {r()}, {r()}, {imm()}, {draw(st.sampled_from(PREDS))};"]
    if kind == 7:
        return [f"@{draw(st.sampled_from(PREDS))} mov.b32 {r()}, {imm()};"]
    if kind == 8:
        return [f"@{draw(st.sampled_from(PREDS))} bra {draw(st.sampled_from(labels))};"]
    if kind == 9:
        return [f"{draw(st.sampled_from(labels))}:"]
    if kind == 10:  # a barrier-wait-like block, quiet or writing a register of the function
        inner = [f"mov.b32 {r()}, {imm()};"] if draw(st.booleans()) else []
        return ["{", ".reg .pred q;", "W:", f"setp.eq.u32 q, {r()}, 0;", "@q bra D;", *inner, "bra W;", "D:", "}"]
    return ["{", ".reg .pred q;", f"setp.eq.u32 q, {r()}, 0;", f"@q bra {draw(st.sampled_from(labels))};", "}"]


@st.composite
def function(draw: st.DrawFn) -> str:
    """A random function ending in a tcgen05.mma, its lines laid out as compilers and people do:
    one statement a line, several on a line, a comment after one, a statement over two lines, a
    label before a statement on its line, a statement in a scope of its own on one line (``{ cvt
    ...; }``, as CuTe DSL writes), a scope's brace on a statement's line, a comment after a
    brace."""
    labels = ["L1", "L2", "L3"]
    stmts = [line for _ in range(draw(st.integers(4, 28))) for line in draw(statement(labels))]
    stmts += [f"{x}:" for x in labels]  # every label defined (after the body: forward jumps only)
    out: list[str] = []
    i = 0
    while i < len(stmts):
        s = stmts[i]
        layout = draw(st.integers(0, 13))
        if layout == 0 and i + 1 < len(stmts) and s.endswith(";") and stmts[i + 1].endswith(";"):
            out.append(f"\t{s} {stmts[i + 1]}")  # two on a line
            i += 2
            continue
        if layout == 4 and s.endswith(";") and not s.startswith((".", "@")):
            out.append(f"\t{{ {s} }}")  # a scope of its own around one statement
            i += 1
            continue
        if layout == 5 and s == "{" and i + 1 < len(stmts) and stmts[i + 1].endswith(";"):
            out.append(f"\t{{{stmts[i + 1]}")  # ``{.reg .pred q;``
            i += 2
            continue
        if layout == 6 and s.endswith(";") and i + 1 < len(stmts) and stmts[i + 1] == "}":
            out.append(f"\t{s} }}")  # ``bra W; }``
            i += 2
            continue
        if layout == 7 and s in ("{", "}"):
            out.append(f"\t{s} // callseq")
            i += 1
            continue
        if layout == 1 and s.endswith(";"):
            out.append(f"\t{s} // {stmts[i - 1] if i else 'x'}")
        elif layout == 2 and s.endswith(";") and ", " in s:
            head, _, tail = s.partition(", ")
            out += [f"\t{head},", f"\t\t{tail}"]
        elif layout == 3 and s.endswith(":") and i + 1 < len(stmts) and stmts[i + 1].endswith(";"):
            out.append(f"{s} {stmts[i + 1]}")
            i += 2
            continue
        else:
            out.append(s if s.endswith(":") else f"\t{s}")
        i += 1
    a, b = draw(st.sampled_from(REGS64)), draw(st.sampled_from(REGS64))
    body = "\n".join(out)
    return (HEADER + "".join(f"\tmov.b32 {x}, {0x40 * n};\n" for n, x in enumerate(REGS32, 1))
            + "".join(f"\tmov.b64 {x}, 0x4000404000010000;\n" for x in REGS64)
            + "".join(f"\tsetp.ne.u32 {p}, %r1, 0;\n" for p in PREDS)
            + "\tmov.b32 %r0, 0;\n\tmov.b32 %r7, 136314896;\n"
            + body + f"\n\ttcgen05.mma.cta_group::1.kind::f16 [%r0], {a}, {b}, %r7, 1;\n\tret;\n}}\n")


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(function())
def test_random_functions_sliced_reading_is_sound_and_no_less_precise(text):
    fast = scan_ptx(text)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(scan_module, "slice_function", lambda *args: None)
        full = scan_ptx(text)
    assert findings(fast) == findings(full)
    for x, y in zip(fast.instructions[0].operands, full.instructions[0].operands):
        assert x.known.mask & y.known.mask == y.known.mask
        assert x.known.value & y.known.mask == y.known.value & y.known.mask
    checked, wrong = check_text(text, "random.ptx", seeds=4)
    assert wrong == []


# -- text skipped unread: a function without descriptor instructions, what follows a body --

@pytest.mark.parametrize("path", [p for p in FILES if p.parent.name in ("triton", "cutlass", "tilelang", "ptx")],
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_skipping_text_changes_nothing(path, monkeypatch):
    """Functions without a descriptor instruction (``ld.shared`` is no ``.shared`` declaration,
    ``.pragma "nounroll"`` a plain string) and what follows a body (labels, ``.file`` lines, DWARF
    sections) are skipped unread; reading them gives the very same answer."""
    text = path.read_text(errors="replace")
    renamed = text.replace("tcgen05.mma", "tcgen05.mmX").replace("wgmma.mma_async", "wgmma.mmX_async")
    for t in (text, renamed):
        skipped = scan_ptx(t)
        with monkeypatch.context() as m:
            m.setattr(scan_module, "unread", lambda part: False)
            m.setattr(scan_module, "trailer_unread", lambda rest: False)
            read = scan_ptx(t)
        assert [(i.line, i.operands) for i in skipped.instructions] == [(i.line, i.operands) for i in read.instructions]
        assert [(f.line, f.code, f.message()) for f in skipped.findings] == \
            [(f.line, f.code, f.message()) for f in read.findings]


@pytest.mark.parametrize("text,unread", [
    ("\t.visible .entry k()\n{\n\tld.shared.u32 %r1, [%r2];\n\t.pragma \"nounroll\";\n\tret;\n$L__func_end0:\n}\n"
     "\t.file 1 \"/a/b.py\"\n\t.section .debug_abbrev\n\t{\n.b8 1\n.b8 17\n\t}\n", True),
    ("\t.visible .entry k()\n{\n\t.shared .align 16 .b8 s[64];\n\tret;\n}\n", False),  # a declaration
    ("\t.visible .entry k()\n{\n\t.pragma \"a;b\";\n\tret;\n}\n", False),  # a string that could hide a ';'
    ("\t.visible .entry k()\n{\n\tret;\n}\n\t.global .u32 g", False),  # a statement left open
])
def test_what_is_skipped_unread(text, unread):
    assert skipping.unread(text) is unread
