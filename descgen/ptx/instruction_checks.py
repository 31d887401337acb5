"""A scanned instruction checked once its function is read: each descriptor operand's known bits
and value range from the dataflow (:class:`descgen.ptx.dataflow.Value`), the words checked with
the instruction's qualifiers as context (:func:`descgen.check_mma`, :func:`descgen.check_wgmma`,
:func:`descgen.validate_smem` for ``tcgen05.cp``; each once per distinct instruction), and the
findings named by operand (E36, E38, E48).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Mapping

from ..model.engine import KnownBits
from ..core.errors import Finding
from ..words.instruction import check_mma, check_wgmma
from ..model.report import Report
from ..words.smem import validate_smem
from ..core.types import Kind
from .dataflow import Value
from .knownbits import kb_ext
from .lexer import Operand, parse_int
from .qualifiers import CpQualifiers, MmaQualifiers, Qualifiers, WgmmaQualifiers
from .results import WIDTHS, ScanFinding, ScanInstruction, ScanOperand
from .syntax_rules import BadImmediate, MmaDecoded, check, fits

__all__ = ["PendingInstruction", "operand_bits", "check_instruction", "role_of", "WGMMA_ARGS"]

#: The qualifiers and immediates of a scanned wgmma.mma_async that :func:`descgen.check_wgmma` takes.
WGMMA_ARGS = ("atype", "btype", "dtype", "m", "n", "k", "sp", "trans_a", "trans_b", "scale_a", "scale_b", "scale_d",
              "sp_sel", "satfinite")


@dataclass
class PendingInstruction:
    """A tcgen05 or wgmma instruction whose operands are resolved when its function ends."""

    line: int
    index: int  # the statement's index in its Function
    opcode: str  # tcgen05.mma / tcgen05.cp / wgmma.mma_async
    text: str
    name: str  # how findings about the instruction name it
    q: Qualifiers
    ops: list[tuple[str, str, Operand]]  # role, operand text, operand resolved in scope


def operand_bits(role: str, text: str, op: Operand, v: Value | None
                 ) -> tuple[KnownBits, str | None, int | None, str | None]:
    """(known bits, origin, origin line, why unknown) of one descriptor operand; ``v`` its
    value from the dataflow (None for an immediate)."""
    width = WIDTHS[role]
    if op[0] == "imm":  # E48: as ptxas reads it, the low bits of a wider literal
        n = op[1]
        assert isinstance(n, int)
        return KnownBits(n & ((1 << width) - 1), (1 << width) - 1), "immediate", None, None
    if op[0] == "other" and parse_int(text) is not None:
        return KnownBits(0, 0), None, None, f"ptxas rejects the immediate {text} (Constant overflow)"
    if op[0] != "reg" or v is None:
        return KnownBits(0, 0), None, None, "not a register or an integer immediate"
    bits = kb_ext(v.bits, v.width, width) if v.width >= width else KnownBits(v.bits.value, v.bits.mask)
    why = ", ".join(sorted(v.why)) or None
    if v.width < width:
        why = f"a {v.width}-bit register for a {width}-bit operand"
    return bits, v.origin, v.line, why


def check_instruction(p: PendingInstruction, vals: Mapping[str, Value], arch: str | None
                      ) -> tuple[ScanInstruction, list[ScanFinding]]:
    """Instruction ``p`` with its register operands' values ``vals`` (by role): its operands, the
    validation report of its words and every finding, in the order they are reported."""
    line, q = p.line, p.q
    found: list[ScanFinding] = []
    bits: dict[str, tuple[KnownBits, str | None, int | None, str | None]] = {
        role: operand_bits(role, t, op, vals.get(role)) for role, t, op in p.ops}
    words: dict[str, int | KnownBits] = {}
    for role, (kb, _, _, _) in bits.items():
        words[role] = kb.value if kb.full(WIDTHS[role]) else kb
    report: Report
    if isinstance(q, CpQualifiers):
        report = _validate_smem_cached(words["s_desc"], arch)
        decoded = {"s_desc": report.decoded.get("smem")}
    elif isinstance(q, WgmmaQualifiers):
        inst = tuple((k, getattr(q, k)) for k in WGMMA_ARGS)
        report = _check_wgmma_cached(words.get("a_desc"), words["b_desc"], inst)
        decoded = {role: report.decoded.get(role) for role in bits}
    else:
        ctx = q.context(arch)
        report = _check_mma_cached(words["idesc"], q.kind, words.get("a_desc"), words["b_desc"], words.get("zcm"),
                                   tuple(sorted(ctx.items())))
        decoded = {role: report.decoded.get(role) for role in bits}
    ops = []
    for role, t, _ in p.ops:
        kb, origin, oline, why = bits[role]
        width = WIDTHS[role]
        d = decoded.get(role)
        unknown = tuple(d.unknown) if d is not None and not kb.full(width) else ()
        full = kb.full(width)
        v = vals.get(role)
        rng = None if full or v is None or v.width != width else v.range
        ops.append(ScanOperand(role, t, kb.value if full else None, width, origin if full else None,
                               (oline if origin != "immediate" else line) if full else oline,
                               None if full else (why or "run-time value"), kb, unknown, rng))
    by = {o.role: o for o in ops}
    for (role, t, op), o in zip(p.ops, ops):
        if op[0] == "imm" and not fits(op[1], o.width):  # E48: ptxas keeps the low bits
            found += check(line, BadImmediate(o.name, t, o.width, o.value, "", o.role))
        elif not o.resolved and parse_int(o.text) is not None:  # past ptxas's 64-bit reading
            found += check(line, BadImmediate(o.name, t, o.width, None, "Constant overflow", o.role))
        else:
            found += check(line, o)  # PTX-OPERAND-UNRESOLVED for one not fully known
    for f in report.findings:
        if isinstance(q, CpQualifiers):
            found.append(ScanFinding(line, f, by["s_desc"].label(), "s_desc"))
            continue
        role = role_of(f)
        subject = by[role].label() if role in by else p.name if isinstance(q, WgmmaQualifiers) else \
            f"{p.name}.kind::{q.kind}"
        found.append(ScanFinding(line, f, subject, role if role in by else None))
    if isinstance(q, MmaQualifiers):
        found += check(line, MmaDecoded(q, report.decoded.get("idesc"), by["idesc"]))
    return ScanInstruction(line, p.opcode, p.text, q, tuple(ops), report), found


@functools.lru_cache(maxsize=4096)
def _validate_smem_cached(word: int | KnownBits, arch: str | None) -> Report:
    return validate_smem(word, arch=arch)  # type: ignore[arg-type]


@functools.lru_cache(maxsize=4096)
def _check_mma_cached(idesc: int | KnownBits, kind: Kind, a_desc: int | KnownBits | None, b_desc: int | KnownBits,
                      zcm: int | KnownBits | None,
                      ctx: tuple[tuple[str, Any], ...]) -> Report:
    """:func:`descgen.check_mma`, once per distinct instruction (unrolled kernels repeat them; a
    Report is immutable)."""
    return check_mma(idesc=idesc, kind=kind, a_desc=a_desc, b_desc=b_desc, zcm=zcm, **dict(ctx))


@functools.lru_cache(maxsize=4096)
def _check_wgmma_cached(a_desc: int | KnownBits | None, b_desc: int | KnownBits,
                        inst: tuple[tuple[str, Any], ...]) -> Report:
    """:func:`descgen.check_wgmma`, once per distinct instruction."""
    return check_wgmma(a_desc=a_desc, b_desc=b_desc, **dict(inst))


def role_of(f: Finding) -> str:
    """The operand a validator finding is about: its field's prefix (``b_desc.swizzle``), the idesc
    for the idesc's own fields, the instruction for context fields."""
    head = f.field.split(".", 1)[0]
    if "." in f.field and head in WIDTHS:
        return head
    if f.field in ("cta_group", "ws", "sp", "scale_vec", "a_tmem", "arch", "kind"):
        return "instruction"
    return "idesc"
