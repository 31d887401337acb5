"""The scanner's sliced reader (descgen.ptx.slicer, issue 18's throughput) against reading every
statement: on every corpus file and reproduction the same findings and, for every descriptor
operand, every bit the full reading knows, with the same value, and a range inside its range (the
sliced reading may know more: a barrier-wait block between a ``setp`` and its ``selp`` no longer
splits their basic block; tests/test_scan_soundness.py runs the sliced reading concretely). And
hand-written cases where leaving out the wrong line would give a wrong value."""

from __future__ import annotations

from pathlib import Path

import pytest

from descgen.ptx import scan as scan_module
from descgen.ptx.scan import RESOLVED, _functions, scan_ptx
from descgen.ptx.slicer import slice_function

from conftest import REPO

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
        for part in _functions(path.read_text(errors="replace")):
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
