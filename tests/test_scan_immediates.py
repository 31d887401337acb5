"""Integer immediates wider than their operand (errata E48): read as ptxas 13.0 reads them.

``tests/corpus/probe_wide_immediates.py`` assembled small kernels with ptxas 13.0 and read the
constants back from the cubin's SASS (``tests/corpus/wide_immediates.json``; CI has no ptxas, so
these tests read the recorded file). ptxas reads a literal into 64 bits (wrapping; "Constant
overflow" for a digit read while the total has its top bit set) and an operand keeps the low bits
of its width, without a word. The scanner's dataflow (``descgen.ptx``) and the soundness
interpreter (``tests/soundness.py``) must both read what ptxas stored, and the scanner warns
``PTX-IMMEDIATE-TRUNCATED`` where it cuts one.
"""

from __future__ import annotations

import json
import random
import re
import struct
from pathlib import Path
from typing import Any

import pytest

from descgen.ptx.dataflow import Function, Immediate, Value
from descgen.ptx.lexer import events, parse_int, ptxas_int, ptxas_overflows, split_operands
from descgen.ptx.scan import scan_file, scan_ptx

from conftest import REPO
from soundness import Machine, lit, parse
from test_scan_soundness import check_file

RECORD: dict[str, Any] = json.loads((Path(REPO) / "tests" / "corpus" / "wide_immediates.json").read_text())
CASES = {c["name"]: c for c in RECORD["cases"]}
REPRO = Path(REPO) / "tests" / "ptx" / "repro" / "wide_immediates.ptx"
ROLES = ("idesc", "a_desc", "b_desc", "s_desc")


def kernel(case: dict[str, Any]) -> str:
    return RECORD["template"].format(target=case["target"], body=case["body"])


def recorded_stores(case: dict[str, Any]) -> dict[str, int]:
    return {k: int(v, 16) for k, v in case.get("values", {}).items() if k.startswith("store+") and v is not None}


def _store(rest: str, opcode: str) -> tuple[str, str, int] | None:
    """``st.global.b32 [%rd8+4], %r2`` -> ("store+4", "%r2", 32); None for other stores."""
    m = re.fullmatch(r"st\.global\.[bus](\d+)", opcode)
    if not m:
        return None
    addr, src = split_operands(rest)
    off = addr.strip("[]").partition("+")[2]
    return f"store+{int(off or '0', 0)}", src, int(m.group(1))


def dataflow_stores(text: str) -> tuple[dict[str, Value], list[Immediate]]:
    """What descgen's dataflow knows of each register a kernel stores, and the immediates it
    noted (E48)."""
    fn = Function()
    uses, keys = [], []
    for kind, line, stmt in events(text.splitlines()):
        if kind != "stmt" or stmt.startswith("."):
            continue
        guard = None
        if stmt.startswith("@"):
            guard, _, stmt = stmt.partition(" ")
        opcode, _, rest = stmt.partition(" ")
        i = fn.statement(line, guard, opcode, rest)
        store = _store(rest, opcode)
        if store is not None:
            keys.append(store[0])
            uses.append((i, fn.operand_of(store[1]), store[2]))
    values = fn.solve(uses)
    return dict(zip(keys, values)), fn.immediates


def interpreted_stores(text: str) -> dict[str, int]:
    """What tests/soundness.py's interpreter stores, running the kernel once."""
    (fn,) = [f for f in parse(text) if f.stmts]
    machine = Machine(fn, {}, random.Random(0))
    out = {}
    for s in fn.stmts:
        m = re.fullmatch(r"st\.global\.[bus](\d+)", s.op)
        if m:
            off = s.texts[0].strip("[]").partition("+")[2]
            out[f"store+{int(off or '0', 0)}"] = machine.val(s.args[2], int(m.group(1)))
        else:
            machine.step(s, s.op.split(".")[0])
    return out


def body_line(case: dict[str, Any], needle: str) -> int:
    """The kernel line of the body's statement that contains ``needle``."""
    lines = case["body"].splitlines()
    return RECORD["body_line"] + next(k for k, line in enumerate(lines) if needle in line)


# --------------------------------------------------------------------------------------------
# The recorded facts themselves.


def test_the_record_is_ptxas_13_0_and_says_what_it_probed():
    assert RECORD["ptxas"].startswith("release 13.0")
    assert len(RECORD["literals"]) >= 20 and len(CASES) >= 40
    # every literal ptxas took is read as the low 64 bits of its value; the rest overflow
    for rec in RECORD["literals"]:
        if rec["accepted"]:
            n = parse_int(rec["literal"])
            assert n is not None and int(rec["value"], 16) == n % 2 ** 64, rec
        else:
            assert any("Constant overflow" in m for m in rec["ptxas"]), rec


@pytest.mark.parametrize("rec", RECORD["literals"], ids=lambda r: r["literal"][:24])
def test_literals_read_as_ptxas_reads_them(rec):
    want = int(rec["value"], 16) if rec["accepted"] else None
    assert ptxas_int(rec["literal"]) == want
    assert ptxas_overflows(rec["literal"]) == (not rec["accepted"])
    assert lit(rec["literal"]) == want  # the soundness interpreter's own reading


# --------------------------------------------------------------------------------------------
# Stored constants: descgen's dataflow and the interpreter read what ptxas stored.

STORED = [name for name, c in CASES.items() if recorded_stores(c)]


def test_the_probe_reads_back_most_constants():
    assert len(STORED) >= 25


@pytest.mark.parametrize("name", STORED)
def test_dataflow_reads_the_word_ptxas_stored(name):
    case = CASES[name]
    values, notes = dataflow_stores(kernel(case))
    for key, want in recorded_stores(case).items():
        v = values[key]
        assert v.full and v.bits.value == want, (key, hex(v.bits.value), hex(v.bits.mask), v.why)
        assert v.range == (want, want)
    # each case holds a literal wider than its operand: noted at its statement, with the word kept
    assert notes and all(n.word is not None for n in notes)
    assert {n.line for n in notes} <= set(range(RECORD["body_line"],
                                                RECORD["body_line"] + case["body"].count("\n") + 1))


@pytest.mark.parametrize("name", STORED)
def test_the_soundness_interpreter_stores_what_ptxas_stored(name):
    case = CASES[name]
    got = interpreted_stores(kernel(case))
    assert {k: hex(got[k]) for k in recorded_stores(case)} == {k: hex(v) for k, v in recorded_stores(case).items()}


def test_mov_b32_cuts_to_the_low_32_bits_and_notes_it():
    case = CASES["mov.b32"]
    values, notes = dataflow_stores(kernel(case))
    assert values["store+0"].bits.value == 0x12345678
    assert notes == [Immediate(body_line(case, "mov.b32"), "mov.b32", "0x999912345678", 32, 0x12345678)]


# --------------------------------------------------------------------------------------------
# Descriptor operands: the scan reads the word the tensor core instruction got, and warns.

DESCRIPTORS = [name for name, c in CASES.items() if c["accepted"] and any(r in c.get("values", {}) for r in ROLES)]


@pytest.mark.parametrize("name", DESCRIPTORS)
def test_the_scan_checks_the_descriptor_ptxas_encoded(name):
    case = CASES[name]
    result = scan_ptx(kernel(case))  # the kernel's own .target (sm_90a for wgmma)
    (ins,) = result.instructions
    for role in ROLES:
        if role in case["values"]:
            assert ins.operand(role).value == int(case["values"][role], 16), role
    warned = [f for f in result.findings if f.code == "PTX-IMMEDIATE-TRUNCATED"]
    assert warned and all(f.severity == "warning" for f in warned)
    assert result.ok and not [f for f in result.findings if f.code == "PTX-OPERAND-UNRESOLVED"]


def test_an_idesc_from_a_wide_mov_is_checked_as_its_low_word():
    """The issue's case: ``mov.b32 %r1, 0x999912345678``-style idesc, formerly "every field unknown"."""
    case = CASES["tcgen05.mma idesc from mov.b32"]
    result = scan_ptx(kernel(case))
    (ins,) = result.instructions
    idesc = ins.operand("idesc")
    assert idesc.value == 0x08400010 and idesc.origin == "mov.b32" and idesc.reason is None
    assert ins.report is not None and ins.report.decoded["idesc"].value("n") == 256
    (f,) = [f for f in result.findings if f.code == "PTX-IMMEDIATE-TRUNCATED"]
    assert f.line == body_line(case, "0x999908400010") and f.subject == "mov.b32 0x999908400010"
    assert "ptxas keeps the low 32 bits, 0x08400010" in f.message()
    # a wrong low word is still caught: the cut word is checked like any other
    bad = kernel(case).replace("0x999908400010", "0x999908400011")
    assert "IDESC-RESERVED-0-1" in {f.code for f in scan_ptx(bad).findings} or not scan_ptx(bad).ok


def test_an_immediate_descriptor_operand_is_cut_and_warned_at_the_instruction():
    case = CASES["tcgen05.mma idesc immediate"]
    result = scan_ptx(kernel(case))
    (ins,) = result.instructions
    assert (ins.operand("idesc").value == 0x08400010
            and ins.operand("idesc").label() == "idesc 0x999908400010 = 0x08400010")
    (f,) = [f for f in result.findings if f.code == "PTX-IMMEDIATE-TRUNCATED"]
    assert (f.line, f.operand, f.subject) == (ins.line, "idesc", "idesc 0x999908400010")


# --------------------------------------------------------------------------------------------
# What ptxas rejects is no value: PTX-MALFORMED where the scan reads it.


def test_a_literal_ptxas_overflows_on_is_malformed_not_a_word():
    case = CASES["tcgen05.mma idesc overflow"]
    assert not case["accepted"] and any("Constant overflow" in m for m in case["ptxas"])
    result = scan_ptx(kernel(case))
    (ins,) = result.instructions
    assert ins.operand("idesc").value is None and "Constant overflow" in ins.operand("idesc").reason
    assert [(f.code, f.line) for f in result.findings if f.severity == "error"] == [("PTX-MALFORMED", ins.line)]


@pytest.mark.parametrize("name", [n for n in CASES if n.startswith(("bfe", "bfi"))])
def test_a_bit_field_position_or_length_outside_0_255_is_rejected_not_cut(name):
    case = CASES[name]
    assert not case["accepted"] and any("expected to be in range [0..255]" in m for m in case["ptxas"])
    values, notes = dataflow_stores(kernel(case))
    assert not values["store+0"].full
    (rejected,) = [n for n in notes if n.word is None]
    assert "outside 0..255" in rejected.why and rejected.opcode.startswith(name[:3])


# --------------------------------------------------------------------------------------------
# Run-time forms: the SASS encodes the low word(s) of the literal the scan reads.

RUN_TIME = {
    "or.b32 run-time": [("0x999912345678", 32)],
    "or.b64 run-time": [("0x1999912345678abcd", 64)],
    "add.s64 run-time": [("0x1999912345678abcd", 64)],
    "add.u32 run-time": [("0x999912345678", 32)],
    "shl.b32 run-time": [("0x100000001", 32)],
    "mul.wide.u32 run-time": [("0x100000005", 32)],
    "selp.b32": [("0x999912345678", 32), ("0x1ffffffff", 32)],
    "setp.eq.u32": [("0x100000005", 32)],
    "prmt.b32": [("0x100003210", 32)],
    "mov.b64 pack register": [("0x999912345678", 32)],
}


@pytest.mark.parametrize("name", sorted(RUN_TIME))
def test_run_time_forms_encode_the_low_words_the_scan_reads(name):
    case = CASES[name]
    immediates = {int(x, 16) & 0xFFFFFFFF for line in case["sass"] for x in re.findall(r"-?0x[0-9a-f]+", line)}
    for line in case["sass"]:  # HFMA2 Rd, -RZ, RZ, hi, lo: a 32-bit constant as two halves
        m = re.fullmatch(r"HFMA2 R\d+, -RZ, RZ, (\S+), (\S+)", line)
        if m:
            hi, lo = (struct.unpack("<H", struct.pack("<e", float(h)))[0] for h in m.groups())
            immediates.add(hi << 16 | lo)
    for literal, width in RUN_TIME[name]:
        assert literal in case["body"]
        word = ptxas_int(literal)
        assert word is not None
        word &= (1 << width) - 1
        for half in ([word] if width == 32 else [word & 0xFFFFFFFF, word >> 32]):
            assert half in immediates, (literal, hex(half), case["sass"])


# --------------------------------------------------------------------------------------------
# A whole kernel (tests/ptx/repro/wide_immediates.ptx, assembled by ptxas 13.0).


def test_the_repro_reads_every_wide_immediate_as_ptxas_does():
    result = scan_file(str(REPRO))
    first, second, cp = result.instructions
    assert first.operand("idesc").value == second.operand("idesc").value == 0x08400010
    a = first.operand("a_desc")  # ((smem >> 4) & 0x3fff) | 0x4000404000010000: only the start address unknown
    assert a.unknown == ("start_address",) and a.known.value >> 16 == 0x4000404000010000 >> 16
    assert second.operand("a_desc").value == 0x4000404000010040  # (0x1999940004040 << 32) | 0x10040, each cut
    assert cp.operand("s_desc").value == 0x4000404000010440
    text = REPRO.read_text().splitlines()
    warned = [f.line for f in result.findings if f.code == "PTX-IMMEDIATE-TRUNCATED"]
    assert warned == sorted(n for n, line in enumerate(text, 1) if re.search(r"0x[0-9a-f]{9,}", line)
                            and not line.lstrip().startswith(("//", "mov.b64 %rd4")))
    assert result.ok and not [f for f in result.findings if f.severity == "error"]


def test_the_repro_is_sound_on_concrete_runs():
    checked, wrong = check_file(REPRO)
    assert wrong == [] and checked > 0


# --------------------------------------------------------------------------------------------
# The command line.


def test_cli_warns_and_exits_0(tmp_path):
    from test_cli import _runner
    from descgen.cli import cli

    path = tmp_path / "k.ptx"
    path.write_text(kernel(CASES["tcgen05.mma idesc from mov.b32"]))
    r = _runner().invoke(cli, ["scan", str(path)])
    assert r.exit_code == 0
    line = body_line(CASES["tcgen05.mma idesc from mov.b32"], "0x999908400010")
    assert r.stdout.splitlines() == [
        f"{path}:{line}: warning: PTX-IMMEDIATE-TRUNCATED mov.b32 0x999908400010: wider than its 32-bit operand: "
        "ptxas keeps the low 32 bits, 0x08400010, and the scan reads that (allowed: -0x80000000..0xffffffff) "
        "[PTX ISA §4.5.1 (integer constants are 64 bits); ptxas 13.0 (E48)]"]
    r = _runner().invoke(cli, ["scan", str(path), "--json"])
    docs = [json.loads(x) for x in r.stdout.splitlines()]
    found = [d for d in docs if d["type"] == "finding"]
    assert [(d["line"], d["code"], d["severity"]) for d in found] == [(line, "PTX-IMMEDIATE-TRUNCATED", "warning")]
    (ins,) = [d for d in docs if d["type"] == "instruction"]
    assert ins["operands"][0]["value"] == "0x08400010" and ins["operands"][0]["status"] == "known"
