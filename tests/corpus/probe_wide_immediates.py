#!/usr/bin/env python3
"""Probe what ptxas makes of an integer immediate wider than its operand (errata E48).

Not corpus data: each probe is a small hand-written kernel. It is assembled with ``ptxas
-arch=sm_100a`` (``sm_90a`` for wgmma) and the cubin disassembled (``cuobjdump -sass``, or
``nvdisasm``); the constants the kernel stores to global memory, and the descriptor words a
``tcgen05.mma`` / ``tcgen05.cp`` / ``wgmma.mma_async`` reads from its uniform registers, are read
back from the SASS by a small evaluator of the instructions that materialise constants (``MOV``,
``IMAD.MOV.U32``, ``HFMA2 Rd, -RZ, RZ, hi, lo`` with two half-precision immediates, ``CS2R``,
``UMOV``, ``R2UR``). Run-time forms (an operand loaded from memory) keep their SASS as evidence:
the immediate ptxas encodes is visible there.

Writes ``wide_immediates.json`` beside this script: ptxas's and the disassembler's versions, the
kernel template, and per literal (``mov.b64`` of it) and per case: the PTX, whether ptxas accepts
it and what it said, the SASS lines that matter, and the values read back. CI has no ptxas:
``tests/test_scan_immediates.py`` checks the scanner (``descgen.ptx``) and the soundness
interpreter (``tests/soundness.py``) against this recorded file.

    python tests/corpus/probe_wide_immediates.py [--ptxas ptxas] [--disassembler cuobjdump]

A toolkit without cuobjdump or nvdisasm can take one from PyPI (``pip install
nvidia-cuda-cuobjdump`` puts ``nvidia/cu13/bin/cuobjdump`` in site-packages; the recorded file was
read with its 13.5 against ptxas 13.0's cubins).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from analyze import split_operands  # noqa: E402  (the corpus scripts' one operand splitter)
OUT = HERE / "wide_immediates.json"

TEMPLATE = """.version 8.7
.target {target}
.address_size 64
.visible .entry probe(.param .u64 out, .param .u64 inp)
{{
.reg .b16 %rs<10>;
.reg .b32 %r<10>;
.reg .b64 %rd<10>;
.reg .f32 %f<8>;
.reg .pred %p<3>;
ld.param.u64 %rd8, [out];
ld.param.u64 %rd9, [inp];
ld.global.u32 %r9, [%rd9];
ld.global.u64 %rd7, [%rd9+8];
setp.ne.u32 %p1, %r9, 0;
mov.b32 %r8, 0;
{body}
ret;
}}
"""
#: The line of the template's {body} (1-based): ptxas's messages name it.
BODY_LINE = TEMPLATE.splitlines().index("{body}") + 1

#: Integer literals, each assembled as ``mov.b64 %rd1, LITERAL; st.global.b64 [%rd8], %rd1;``:
#: where ptxas stops with "Constant overflow" and what 64-bit word it keeps otherwise.
LITERALS = [
    "0x999912345678", "0x1999912345678abcd", "0x10000000000000000", "0x7fffffffffffffff0", "0x7fffffffffffffff0U",
    "0x80000000000000000", "0x1" + "0" * 32 + "5", "0x" + "f" * 32, "0x" + "f" * 16, "0x" + "f" * 17,
    "18446744073709551617", "92233720368547758079", "92233720368547758080", "99999999999999999999999",
    "-92233720368547758079", "-92233720368547758080", "-9223372036854775809", "-0x10000000000000001",
    "07777777777777777777777", "010000000000000000000000", "0b" + "1" * 64, "0b" + "1" * 65, "0b1" + "0" * 64,
]

#: (name, target, PTX body, what it shows). Stores go to [%rd8 + offset]; %r9 and %rd7 are
#: loaded (run-time values), %p1 is set from %r9.
CASES: list[tuple[str, str, str, str]] = [
    ("mov.b32", "sm_100a", "mov.b32 %r1, 0x999912345678;\nst.global.b32 [%rd8], %r1;",
     "a 48-bit immediate into a 32-bit register"),
    ("mov.b32 negative", "sm_100a", "mov.b32 %r1, -0x999912345678;\nst.global.b32 [%rd8], %r1;",
     "the low 32 bits of the 64-bit two's complement"),
    ("mov.u32", "sm_100a", "mov.u32 %r1, 0x999912345678;\nst.global.b32 [%rd8], %r1;",
     "the type's signedness does not matter"),
    ("mov.s32", "sm_100a", "mov.s32 %r1, 0x999912345678;\nst.global.b32 [%rd8], %r1;", "no saturation for .s32"),
    ("mov.b32 2**32", "sm_100a", "mov.b32 %r1, 4294967296;\nst.global.b32 [%rd8], %r1;", "decimal"),
    ("mov.b32 -2**31-1", "sm_100a", "mov.b32 %r1, -2147483649;\nst.global.b32 [%rd8], %r1;", "below the signed range"),
    ("mov.b16", "sm_100a", "mov.b16 %rs1, 0x123456;\nst.global.b16 [%rd8], %rs1;", "16-bit register"),
    ("mov.b64", "sm_100a", "mov.b64 %rd1, 0x1999912345678abcd;\nst.global.b64 [%rd8], %rd1;",
     "a 65-bit literal into a 64-bit register"),
    ("mov.b64 unpack", "sm_100a",
     "mov.b64 {%r1, %r2}, 0x1999912345678abcd;\nst.global.b32 [%rd8], %r1;\nst.global.b32 [%rd8+4], %r2;",
     "a wide immediate split into two 32-bit parts"),
    ("mov.b32 unpack", "sm_100a",
     "mov.b32 {%rs1, %rs2}, 0x999912345678;\nst.global.b16 [%rd8], %rs1;\nst.global.b16 [%rd8+2], %rs2;",
     "into two 16-bit parts"),
    ("mov.b64 pack", "sm_100a", "mov.b64 %rd1, {0x999912345678, 0x1};\nst.global.b64 [%rd8], %rd1;",
     "a vector part wider than 32 bits"),
    ("mov.b64 pack register", "sm_100a", "mov.b64 %rd1, {%r9, 0x999912345678};\nst.global.b64 [%rd8], %rd1;",
     "beside a run-time part"),
    ("mov.b32 pack", "sm_100a", "mov.b32 %r1, {0x123456, 0x1};\nst.global.b32 [%rd8], %r1;", "a 16-bit vector part"),
    ("mov.b64 from a wide mov.b32", "sm_100a",
     "mov.b32 %r2, 0x999912345678;\nmov.b32 %r3, 5;\nmov.b64 %rd1, {%r3, %r2};\nst.global.b64 [%rd8], %rd1;",
     "packing registers set from wide immediates"),
    ("or.b32", "sm_100a", "mov.b32 %r2, 0x80000000;\nor.b32 %r1, %r2, 0x999912345678;\nst.global.b32 [%rd8], %r1;",
     "folded"),
    ("or.b32 run-time", "sm_100a", "or.b32 %r1, %r9, 0x999912345678;\nst.global.b32 [%rd8], %r1;",
     "the immediate ptxas encodes (LOP3)"),
    ("or.b64", "sm_100a", "mov.b64 %rd2, 0x100;\nor.b64 %rd1, %rd2, 0x1999912345678abcd;\nst.global.b64 [%rd8], %rd1;",
     "folded"),
    ("or.b64 run-time", "sm_100a", "or.b64 %rd1, %rd7, 0x1999912345678abcd;\nst.global.b64 [%rd8], %rd1;",
     "two LOP3 with the low and high words"),
    ("add.s64", "sm_100a",
     "mov.b64 %rd2, 0x100;\nadd.s64 %rd1, %rd2, -0x1999912345678abcd;\nst.global.b64 [%rd8], %rd1;", "folded"),
    ("add.s64 run-time", "sm_100a", "add.s64 %rd1, %rd7, 0x1999912345678abcd;\nst.global.b64 [%rd8], %rd1;",
     "IADD3 with the low word, IADD3.X with the high"),
    ("add.u32 run-time", "sm_100a", "add.u32 %r1, %r9, 0x999912345678;\nst.global.b32 [%rd8], %r1;",
     "IADD3 with the low word"),
    ("and.b32, xor.b32", "sm_100a",
     "mov.b32 %r2, 3;\nand.b32 %r1, %r2, 0x1fffffff1;\nxor.b32 %r3, %r1, 0x300000000;\nst.global.b32 [%rd8], %r3;",
     "folded"),
    ("sub.u32", "sm_100a", "mov.b32 %r2, 3;\nsub.u32 %r1, %r2, 0x100000001;\nst.global.b32 [%rd8], %r1;", "folded"),
    ("min.u32", "sm_100a", "mov.b32 %r2, 7;\nmin.u32 %r1, %r2, 0x100000005;\nst.global.b32 [%rd8], %r1;", "folded"),
    ("not.b32", "sm_100a", "not.b32 %r1, 0x999912345678;\nst.global.b32 [%rd8], %r1;", "an immediate source"),
    ("neg.s32", "sm_100a", "neg.s32 %r1, 0x999912345678;\nst.global.b32 [%rd8], %r1;", "an immediate source"),
    ("shl.b32", "sm_100a", "mov.b32 %r2, 3;\nshl.b32 %r1, %r2, 0x100000001;\nst.global.b32 [%rd8], %r1;",
     "the shift amount is .u32"),
    ("shl.b32 run-time", "sm_100a", "shl.b32 %r1, %r9, 0x100000001;\nst.global.b32 [%rd8], %r1;", "SHF by 1"),
    ("shl.b64", "sm_100a", "mov.b64 %rd2, 3;\nshl.b64 %rd1, %rd2, 0x100000001;\nst.global.b64 [%rd8], %rd1;",
     "the shift amount of a 64-bit shift is .u32 too"),
    ("mul.lo.u32", "sm_100a", "mov.b32 %r2, 3;\nmul.lo.u32 %r1, %r2, 0x100000005;\nst.global.b32 [%rd8], %r1;",
     "folded"),
    ("mul.wide.u32", "sm_100a", "mov.b32 %r2, 3;\nmul.wide.u32 %rd1, %r2, 0x100000005;\nst.global.b64 [%rd8], %rd1;",
     "the sources are 32-bit"),
    ("mul.wide.u32 run-time", "sm_100a", "mul.wide.u32 %rd1, %r9, 0x100000005;\nst.global.b64 [%rd8], %rd1;",
     "IMAD.WIDE.U32 by 5"),
    ("mad.lo.u32", "sm_100a",
     "mov.b32 %r2, 3;\nmad.lo.u32 %r1, %r2, 0x100000005, 0x100000007;\nst.global.b32 [%rd8], %r1;", "folded"),
    ("selp.b32", "sm_100a", "selp.b32 %r1, 0x999912345678, 0x1ffffffff, %p1;\nst.global.b32 [%rd8], %r1;",
     "both sides (a run-time choice)"),
    ("setp.eq.u32", "sm_100a",
     "setp.eq.u32 %p2, %r9, 0x100000005;\nselp.b32 %r1, 7, 9, %p2;\nst.global.b32 [%rd8], %r1;", "ISETP against 5"),
    ("prmt.b32", "sm_100a",
     "mov.b32 %r2, 0x44332211;\nprmt.b32 %r1, %r2, %r2, 0x100003210;\nst.global.b32 [%rd8], %r1;",
     "the selector's low 32 bits"),
    ("cvt.u64.u32", "sm_100a", "cvt.u64.u32 %rd1, 0x999912345678;\nst.global.b64 [%rd8], %rd1;",
     "cut to the source type, then zero-extended"),
    ("cvt.s64.s32", "sm_100a", "cvt.s64.s32 %rd1, 0x9999f2345678;\nst.global.b64 [%rd8], %rd1;",
     "cut to the source type, then sign-extended"),
    ("cvt.u32.u64", "sm_100a", "cvt.u32.u64 %r1, 0x1999912345678abcd;\nst.global.b32 [%rd8], %r1;",
     "a 65-bit literal as the 64-bit source"),
    ("cvt.u16.u32", "sm_100a", "cvt.u16.u32 %rs1, 0x999912345678;\nst.global.b16 [%rd8], %rs1;", "cut twice"),
    ("bfe.u32 position 2**32+4", "sm_100a",
     "mov.b32 %r2, 0xf0;\nbfe.u32 %r1, %r2, 0x100000004, 4;\nst.global.b32 [%rd8], %r1;",
     "bfe's position and length are range-checked, not cut"),
    ("bfe.u32 position 256", "sm_100a", "mov.b32 %r2, 0xf0;\nbfe.u32 %r1, %r2, 256, 4;\nst.global.b32 [%rd8], %r1;",
     "range-checked"),
    ("bfe.u32 position -1", "sm_100a", "mov.b32 %r2, 0xf0;\nbfe.u32 %r1, %r2, -1, 4;\nst.global.b32 [%rd8], %r1;",
     "range-checked"),
    ("bfi.b32 length 2**32+4", "sm_100a",
     "mov.b32 %r2, 0xf0;\nbfi.b32 %r1, 0x1ffffffff, %r2, 0, 0x100000004;\nst.global.b32 [%rd8], %r1;", "range-checked"),
    ("tcgen05.mma idesc from mov.b32", "sm_100a",
     "mov.b32 %r1, 0x999908400010;\nmov.b64 %rd1, 0x4000404000010040;\nmov.b64 %rd2, 0x4000404000010440;\n"
     "tcgen05.mma.cta_group::1.kind::f16 [%r8], %rd1, %rd2, %r1, %p1;", "the idesc the MMA reads (UMOV)"),
    ("tcgen05.mma idesc immediate", "sm_100a",
     "mov.b64 %rd1, 0x4000404000010040;\nmov.b64 %rd2, 0x4000404000010440;\n"
     "tcgen05.mma.cta_group::1.kind::f16 [%r8], %rd1, %rd2, 0x999908400010, %p1;",
     "an immediate idesc operand wider than 32 bits"),
    ("tcgen05.mma b-desc immediate", "sm_100a",
     "mov.b64 %rd1, 0x4000404000010040;\n"
     "tcgen05.mma.cta_group::1.kind::f16 [%r8], %rd1, 0x14000404000010440, 0x08400010, %p1;",
     "a 65-bit b-desc immediate"),
    ("tcgen05.mma b-desc from mov.b64", "sm_100a",
     "mov.b64 %rd1, 0x4000404000010040;\nmov.b64 %rd2, 0x14000404000010440;\n"
     "tcgen05.mma.cta_group::1.kind::f16 [%r8], %rd1, %rd2, 0x08400010, %p1;", "a 65-bit mov.b64"),
    ("tcgen05.mma b-desc packed", "sm_100a",
     "mov.b64 %rd1, 0x4000404000010040;\nmov.b64 %rd2, {0x999900010440, 0x40004040};\n"
     "tcgen05.mma.cta_group::1.kind::f16 [%r8], %rd1, %rd2, 0x08400010, %p1;", "a wide vector part of a descriptor"),
    ("tcgen05.cp s-desc immediate", "sm_100a", "tcgen05.cp.cta_group::1.128x256b [%r8], 0x14000404000010440;",
     "a 65-bit s-desc immediate"),
    ("tcgen05.mma idesc overflow", "sm_100a",
     "mov.b64 %rd1, 0x4000404000010040;\nmov.b64 %rd2, 0x4000404000010440;\n"
     "tcgen05.mma.cta_group::1.kind::f16 [%r8], %rd1, %rd2, 0x80000000008400010, %p1;", "ptxas's literal overflow"),
    ("wgmma.mma_async descriptors", "sm_90a",
     "mov.b64 %rd1, 0x14000004000010040;\nwgmma.fence.sync.aligned;\n"
     "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, "
     "%rd1, 0x24000004000010440, 0, 1, 1, 0, 0;\n"
     "wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n"
     "st.global.v4.f32 [%rd8], {%f0, %f1, %f2, %f3};",
     "Hopper: a-desc from a 65-bit mov.b64, b-desc a 66-bit immediate"),
]

_INSTR = re.compile(r"/\*[0-9a-f]{4}\*/\s+(.*?)\s*;")
_REG = re.compile(r"(U?R)(\d+)")


def _imm(text: str) -> int | None:
    t = text.strip()
    try:
        return int(t, 0) & 0xFFFFFFFF
    except ValueError:
        return None


def _half(text: str) -> int | None:
    """An fp16 immediate as SASS prints it (``103.5``, ``-0``, ``+INF``) -> its 16 bits (None for NaN)."""
    t = text.strip()
    if "NAN" in t.upper():
        return None
    value = float("inf") if t in ("INF", "+INF") else float("-inf") if t == "-INF" else float(t)
    return int(struct.unpack("<H", struct.pack("<e", value))[0])


def evaluate(sass: list[str]) -> dict[str, Any]:
    """The constants a kernel stores (``store+OFFSET``: bits, as hex) and the descriptors its
    tensor core instructions read (``idesc``, ``a_desc``, ``b_desc``, ``s_desc``), where the SASS
    makes them from immediates only; a value it cannot follow is None."""
    regs: dict[str, int | None] = {}
    found: dict[str, Any] = {}

    def get(name: str) -> int | None:
        name = name.strip().lstrip("-")
        if name in ("RZ", "URZ", "SRZ"):
            return 0
        if _REG.fullmatch(name):
            return regs.get(name)
        return _imm(name)

    def pair(name: str) -> int | None:
        m = _REG.fullmatch(name)
        if not m:
            return None
        lo, hi = regs.get(name), regs.get(f"{m.group(1)}{int(m.group(2)) + 1}")
        return None if lo is None or hi is None else lo | hi << 32

    def inside(text: str) -> str:
        return text[text.index("[") + 1:text.index("]")]

    for line in sass:
        m = _INSTR.search(line)
        if not m:
            continue
        ins = m.group(1)
        predicated = ins.startswith("@")
        if predicated:
            ins = ins.split(None, 1)[1]
        op, _, rest = ins.partition(" ")
        args = split_operands(rest)
        base = op.split(".")[0]
        dest = args[0] if args and _REG.fullmatch(args[0]) else None
        value: int | None = None
        if base == "STG" and len(args) >= 2:
            addr = args[0]
            off = re.search(r"\+(0x[0-9a-f]+|\d+)\]$", addr)
            key = f"store+{int(off.group(1), 0) if off else 0}"
            src = args[1]
            if ".64" in op:
                v = 0 if src == "RZ" else pair(src)
            elif ".128" in op:
                v = None
            else:
                v = get(src)
                if v is not None and ".U16" in op:
                    v &= 0xFFFF
            found[key] = None if v is None else hex(v)
            continue
        if base == "UTCHMMA":
            descs = [a for a in args if a.startswith("gdesc[")]
            idesc = next((a for a in args if a.startswith("idesc[")), None)
            if len(descs) == 2:
                for role, a in zip(("a_desc", "b_desc"), descs):
                    v = pair(inside(a))
                    found[role] = None if v is None else hex(v)
            if idesc is not None:
                v = get(inside(idesc))
                found["idesc"] = None if v is None else hex(v)
            continue
        if base == "UTCCP":
            d = next((a for a in args if a.startswith("gdesc[")), None)
            if d is not None:
                v = pair(inside(d))
                found["s_desc"] = None if v is None else hex(v)
            continue
        if base == "HGMMA":
            d = next((a for a in args if a.startswith("gdesc[")), None)
            if d is not None:
                r = _REG.fullmatch(inside(d))
                assert r is not None
                n = int(r.group(2))
                a, b = pair(f"UR{n}"), pair(f"UR{n + 2}")
                found["a_desc"] = None if a is None else hex(a)
                found["b_desc"] = None if b is None else hex(b)
            continue
        if dest is None:
            continue
        if base in ("MOV", "UMOV", "R2UR") and len(args) == 2:
            value = get(args[1])
        elif base == "IMAD" and op.startswith("IMAD.MOV") and len(args) == 4 and args[1] == "RZ" and args[2] == "RZ":
            value = get(args[3])
        elif base == "HFMA2" and len(args) == 5 and args[1] == "-RZ" and args[2] == "RZ":
            hi, lo = _half(args[3]), _half(args[4])
            value = None if hi is None or lo is None else hi << 16 | lo
        elif base == "CS2R" and len(args) == 2 and args[1] == "SRZ":
            value = 0
            r = _REG.fullmatch(dest)
            assert r is not None
            regs[f"{r.group(1)}{int(r.group(2)) + 1}"] = 0
        regs[dest] = None if predicated else value
        if ".64" in op or ".WIDE" in op:
            r = _REG.fullmatch(dest)
            assert r is not None
            regs[f"{r.group(1)}{int(r.group(2)) + 1}"] = None
    return found


def assemble(ptxas: str, disassembler: str, body: str, target: str, work: str) -> dict[str, Any]:
    """Assemble one kernel in ``work`` (named ``probe.ptx`` there, so that ptxas's messages name no
    directory) and read its SASS."""
    src = TEMPLATE.format(target=target, body=body)
    with open(os.path.join(work, "probe.ptx"), "w") as fh:
        fh.write(src)
    cubin = os.path.join(work, "probe.cubin")
    if os.path.exists(cubin):
        os.remove(cubin)
    p = subprocess.run([ptxas, f"-arch={target}", "probe.ptx", "-o", "probe.cubin"], cwd=work,
                       capture_output=True, text=True)
    messages = [line.strip() for line in (p.stdout + p.stderr).splitlines() if line.strip()]
    out: dict[str, Any] = {"accepted": p.returncode == 0, "ptxas": messages}
    if p.returncode != 0:
        return out
    args = [disassembler, "-sass", "probe.cubin"] if "cuobjdump" in os.path.basename(disassembler) else \
        [disassembler, "probe.cubin"]
    dis = subprocess.run(args, cwd=work, capture_output=True, text=True, check=True).stdout
    sass = []
    for line in dis.splitlines():
        m = _INSTR.search(line)
        if m and not re.match(r"(NOP|BRA|EXIT|LDC|LDCU|ULDC|S2R|S2UR|LDG)\b", m.group(1)):
            sass.append(m.group(1))
    out["sass"] = sass
    out["values"] = evaluate([f"/*0000*/ {s} ;" for s in sass])
    return out


def version(tool: str, flag: str = "--version") -> str:
    text = subprocess.run([tool, flag], capture_output=True, text=True).stdout
    m = re.search(r"release [\d.]+, V[\d.]+", text)
    return m.group(0) if m else text.strip().splitlines()[-1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ptxas", default=shutil.which("ptxas") or "ptxas")
    ap.add_argument("--disassembler", default=shutil.which("cuobjdump") or shutil.which("nvdisasm") or "cuobjdump",
                    help="cuobjdump (run with -sass) or nvdisasm")
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args()
    record: dict[str, Any] = {
        "ptxas": version(a.ptxas),
        "disassembler": f"{os.path.basename(a.disassembler)} {version(a.disassembler)}",
        "template": TEMPLATE,
        "body_line": BODY_LINE,
        "literals": [],
        "cases": [],
    }
    with tempfile.TemporaryDirectory() as work:
        for lit in LITERALS:
            body = f"mov.b64 %rd1, {lit};\nst.global.b64 [%rd8], %rd1;"
            got = assemble(a.ptxas, a.disassembler, body, "sm_100a", work)
            record["literals"].append({"literal": lit, "accepted": got["accepted"], "ptxas": got["ptxas"],
                                       "value": got.get("values", {}).get("store+0")})
        for name, target, body, shows in CASES:
            got = assemble(a.ptxas, a.disassembler, body, target, work)
            record["cases"].append({"name": name, "target": target, "body": body, "shows": shows, **got})
    with open(a.out, "w") as fh:
        json.dump(record, fh, indent=1)
        fh.write("\n")
    for lit in record["literals"]:
        print(f"{lit['literal'][:40]:42} {'ok' if lit['accepted'] else 'ERR'} {lit['value'] or ' '.join(lit['ptxas'])}")
    for case in record["cases"]:
        print(f"{case['name']:34} {'ok' if case['accepted'] else 'ERR'} "
              f"{case.get('values') or ' '.join(case['ptxas'])}")


if __name__ == "__main__":
    main()
