"""Each PTX opcode's transfer function (:func:`transfer`): the value a statement writes, from its
operands' values, in both domains at once (known bits through :mod:`descgen.ptx.knownbits`,
ranges through :mod:`descgen.ptx.ranges`, refined by each other: :func:`descgen.ptx.values.reduced_value`).

- **Leaves** (unknown, with why): kernel parameters, loads, special registers (with their
  architectural bounds), shared memory symbols, every instruction not modelled.
- **Refinement.** ``selp a, b, p`` where ``p`` is set by a ``setp`` comparing ``a`` or ``b`` in the
  same block, with no redefinition between: each side gets the range the comparison allows;
  ``x - ((mul.hi(x, M) >> sh) * d)``, LLVM's ``x % d`` by a constant, is in ``[0, d - 1]``.
- **Uniform values.** ``shfl.sync`` with the full member mask: what is known on every lane is
  known of the result.
- **Immediates** (E48): read as ptxas reads them, cut to the operand's width; one cut or rejected
  is noted (:meth:`Reader.wide`, :meth:`Reader.rejected`).

A new opcode the scanner should follow is a branch of :func:`transfer`, the same arithmetic in the
test interpreter ``tests/soundness.py`` and a case in ``tests/test_dataflow.py``.
"""

from __future__ import annotations

import functools
import re
from typing import Callable, Protocol, Sequence

from ..model.engine import KnownBits
from . import ranges as R
from .knownbits import (kb_add, kb_and, kb_bfe, kb_bfi, kb_concat, kb_const, kb_ext, kb_meet, kb_mul, kb_not, kb_or,
                        kb_prmt, kb_shl, kb_shr, kb_slice, kb_sub, kb_xor, mask_of)
from .lexer import Operand
from .statements import Instr
from .values import Value, reduced_value, unknown_value

__all__ = ["Reader", "transfer"]


class Reader(Protocol):
    """What a transfer function reads of the solver (:class:`descgen.ptx.solver.Solver`).

    Attributes:
        instrs: the function's statements.
        def_list: every definition as ``(statement index, destination index, register key)``.
        block_of: each statement's basic block.
        reaching: the ids (in ``def_list``) of the definitions of a register that reach a statement.
    """

    instrs: Sequence[Instr]
    def_list: list[tuple[int, int, str]]
    block_of: list[int]
    reaching: Callable[[int, str], tuple[int, ...]]

    def operand(self, i: int, op: Operand, width: int) -> Value | None:
        """The value of a source operand of statement ``i`` as a ``width``-bit word (None: none yet)."""

    def wide(self, i: int, n: int, width: int) -> None:
        """Note that statement ``i`` reads the literal ``n`` into ``width`` bits (ptxas keeps its low bits)."""

    def rejected(self, i: int, text: str, width: int, why: str) -> None:
        """Note that ptxas rejects statement ``i`` for its immediate ``text``."""


_TYPE = re.compile(r"^(?:b|s|u|f|bf|e4m3|e5m2)(\d+)(?:x\d+)?$")


@functools.lru_cache(maxsize=4096)
def _types(opcode: str) -> tuple[tuple[str, int], ...]:
    """The opcode's type qualifiers in order: ``cvt.u64.u32`` -> (("u", 64), ("u", 32))."""
    out = []
    for p in opcode.split(".")[1:]:
        if p == "pred":
            out.append(("pred", 1))
            continue
        m = _TYPE.match(p)
        if m:
            out.append((p.rstrip("0123456789x")[:1] if not p.startswith("bf") else "f", int(m.group(1))))
    return tuple(out)


#: A comparison's negation, and the comparison with its operands swapped (``setp``).
_NEGATE = {"eq": "ne", "ne": "eq", "lt": "ge", "ge": "lt", "le": "gt", "gt": "le", "lo": "hs", "hs": "lo",
           "ls": "hi", "hi": "ls"}
_SWAP = {"eq": "eq", "ne": "ne", "lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "lo": "hi", "hi": "lo",
         "ls": "hs", "hs": "ls"}


_BINARY_KB = {"and": kb_and, "or": kb_or, "xor": kb_xor, "add": kb_add, "sub": kb_sub}
_BINARY_R = {"and": R.and_, "or": R.or_, "xor": R.xor, "add": R.add, "sub": R.sub, "min": R.min_, "max": R.max_}


def transfer(s: Reader, i: int, ins: Instr, index: int) -> Value | None:
    """The value instruction ``i`` writes to its ``index``-th destination (None: an operand has
    no value yet)."""
    opcode = ins.opcode
    base = opcode.split(".", 1)[0]
    types = _types(opcode)
    width = types[0][1] if types else 32
    srcs = ins.srcs
    count = len(ins.dests)

    def op(k: int, w: int | None = None) -> Value | None:
        if k >= len(srcs):
            return unknown_value(w or width, "missing operand")
        return s.operand(i, srcs[k], w or width)

    def const(k: int, w: int = 32) -> int | None:
        """Operand ``k`` when it is an immediate, as the ``w``-bit word ptxas reads (E48)."""
        if k < len(srcs) and srcs[k][0] == "imm":
            n = srcs[k][1]
            if not isinstance(n, int):
                return None
            if not -(1 << (w - 1)) <= n < 1 << w:
                s.wide(i, n, w)
            return n & mask_of(w)
        return None

    def field_bits(k: int) -> int | None:
        """``bfe``/``bfi``'s position or length (operand ``k``) when an immediate ptxas takes:
        0..255 (it rejects any other, E48), else None (after noting the rejection)."""
        if k < len(srcs) and srcs[k][0] == "imm":
            n = srcs[k][1]
            if isinstance(n, int) and 0 <= n <= 255:
                return n
            what = "position" if k == len(srcs) - 2 else "length"
            s.rejected(i, hex(n) if isinstance(n, int) else str(n), 32,
                       f"{base}'s {what} (argument {k + 1}) is outside 0..255")
        return None

    def leaf(why: str, w: int = width, rng: tuple[int, int] | None = None) -> Value:
        return reduced_value(KnownBits(0, 0), w, rng, {why})

    if base == "mov" and srcs:
        src = srcs[0]
        if count > 1:  # unpacking: {%r1, %r2} = %rd (a "_" keeps its place)
            w = width // count
            v = op(0)
            if v is None:
                return None
            bits = kb_slice(v.bits, index, w)
            return reduced_value(bits, w, None, v.why)
        if src[0] == "vec":  # packing
            parts = src[1]
            w = width // max(1, len(parts))
            vs = [s.operand(i, p, w) for p in parts]
            if any(v is None for v in vs):
                return None
            why = frozenset().union(*(v.why for v in vs if v is not None))
            bits = kb_concat([v.bits for v in vs if v is not None], w)
            rng = None
            if len(vs) >= 1 and all(v is not None and v.full for v in vs[1:]):
                lo = vs[0]
                assert lo is not None
                high = bits.value & ~mask_of(w)
                rng = (high + lo.range[0], high + lo.range[1])
            return reduced_value(bits, width, rng, why)
        v = op(0)
        return None if v is None else reduced_value(v.bits, width, v.range, v.why)
    if base in ("ld", "ldu"):
        return leaf("kernel parameter" if ".param" in opcode else "loaded from memory")
    if base == "shfl":
        # shfl.sync.mode.b32 d|p, a, b, c, membermask: d is lane j's a; with every lane in the
        # mask, every lane runs this instruction, so what all lanes know of a holds for d.
        if index != 0:
            return leaf("set by shfl.sync")
        mask = op(3, 32)
        a = op(0, 32)
        if mask is None or a is None:
            return None
        if mask.full and mask.bits.value & 0xFFFFFFFF == 0xFFFFFFFF:
            return reduced_value(a.bits, 32, a.range, a.why)
        return leaf("shfl.sync without the full member mask", 32)
    if count != 1:
        return leaf(f"set by {base}")
    if base == "cvt":
        if len(types) < 2 or any(t[0] in ("f", "pred") for t in types) or ".rn" in opcode or ".sat" in opcode:
            return leaf(f"set by {opcode}")
        src_w, signed = types[1][1], types[1][0] == "s"
        v = op(0, src_w)
        if v is None:
            return None
        return reduced_value(kb_ext(v.bits, src_w, width, signed), width, R.ext(v.range, src_w, width, signed), v.why)
    if types and types[0][0] in ("f", "pred") and base != "selp":
        if base == "setp":
            return leaf("a comparison", 1, (0, 1))
        return leaf(f"set by {base}")
    if base in ("and", "or", "xor", "add", "sub", "min", "max"):
        if ".cc" in opcode or (base in ("min", "max") and (types and types[0][0] == "s" or ".relu" in opcode)):
            if base in ("min", "max") and ".cc" not in opcode:
                return _signed_minmax(op(0), op(1), base, width)
            return leaf(f"set by {opcode}")
        a, b = op(0), op(1)
        if a is None or b is None:
            return None
        fn = _BINARY_KB.get(base)
        if fn is None:
            bits = KnownBits(0, 0)
        else:
            bits = fn(a.bits, b.bits, width)
        rng = _BINARY_R[base](a.range, b.range, width)
        if base == "sub":
            rem = _urem_idiom(s, i, ins, width)
            if rem is not None:
                rng = R.meet(rng, rem) or rem
        return reduced_value(bits, width, rng, a.why | b.why)
    if base == "selp":
        a, b = op(0), op(1)
        if a is None or b is None:
            return None
        a, b = _refine_selp(s, i, ins, a, b, width)
        if a is None and b is None:
            return None
        if a is None or b is None:
            v = a or b
            assert v is not None
            return v
        return reduced_value(kb_meet(a.bits, b.bits), width, R.join(a.range, b.range), a.why | b.why)
    if base in ("not", "neg"):
        a = op(0)
        if a is None:
            return None
        if base == "not":
            return reduced_value(kb_not(a.bits, width), width,
                                 (mask_of(width) - a.range[1], mask_of(width) - a.range[0]), a.why)
        return reduced_value(kb_sub(kb_const(0, width), a.bits, width), width, R.sub(R.const(0, width), a.range, width),
                             a.why)
    if base in ("shl", "shr"):
        a, n = op(0), const(1)
        if a is None:
            return None
        if n is None:
            amount = op(1, 32)
            if amount is None:
                return None
            return leaf("shift by a run-time amount") if base == "shl" else \
                reduced_value(KnownBits(0, 0), width, (0, a.range[1]) if types[0][0] != "s" else None,
                              a.why | {"shift by a run-time amount"})
        signed = types[0][0] == "s" if types else False
        if base == "shl":
            return reduced_value(kb_shl(a.bits, n, width), width, R.shl(a.range, n, width), a.why)
        return reduced_value(kb_shr(a.bits, n, width, signed), width, R.shr(a.range, n, width, signed), a.why)
    if base == "bfe":
        a, pos, ln = op(0), field_bits(1), field_bits(2)
        if a is None:
            return None
        if pos is None or ln is None:
            return leaf("bit field at a run-time position" if _imm_or_none(srcs, 1, 2) else
                        "a bit field position or length ptxas rejects")
        signed = types[0][0] == "s"
        rng = None if signed else R.bfe(a.range, pos, ln, width)
        return reduced_value(kb_bfe(a.bits, pos, ln, width, signed), width, rng, a.why)
    if base == "bfi":
        a, b, pos, ln = op(0), op(1), field_bits(2), field_bits(3)
        if a is None or b is None:
            return None
        if pos is None or ln is None:
            return leaf("bit field at a run-time position" if _imm_or_none(srcs, 2, 3) else
                        "a bit field position or length ptxas rejects")
        return reduced_value(kb_bfi(a.bits, b.bits, pos, ln, width), width, None, a.why | b.why)
    if base in ("mul", "mad"):
        wide = ".wide" in opcode
        hi = ".hi" in opcode
        if not (".lo" in opcode or wide or hi):
            return leaf(f"set by {opcode}")
        signed = types[0][0] == "s"
        w_out = width * 2 if wide else width
        a, b = op(0), op(1)
        if a is None or b is None:
            return None
        why = a.why | b.why
        if hi:
            if signed or base == "mad":
                return leaf(f"set by {opcode}")
            return reduced_value(KnownBits(0, 0), width, R.mul_hi(a.range, b.range, width), why)
        ab, bb = kb_ext(a.bits, width, w_out, signed), kb_ext(b.bits, width, w_out, signed)
        bits = kb_mul(ab, bb, w_out)
        ra, rb = R.ext(a.range, width, w_out, signed), R.ext(b.range, width, w_out, signed)
        rng = R.mul(ra, rb, w_out) \
            if not signed or (a.range[1] >> (width - 1) == 0 and b.range[1] >> (width - 1) == 0) else R.full(w_out)
        if base == "mad":
            c = op(2, w_out)
            if c is None:
                return None
            bits, why = kb_add(bits, c.bits, w_out), why | c.why
            rng = R.add(rng, c.range, w_out)
        return reduced_value(bits, w_out, rng, why)
    if base in ("rem", "div"):
        a, b = op(0), op(1)
        if a is None or b is None:
            return None
        if types and types[0][0] == "u":
            r = (R.rem if base == "rem" else R.div)(a.range, b.range, width)
            if r is not None:
                return reduced_value(KnownBits(0, 0), width, r, a.why | b.why)
        return leaf(f"set by {opcode}")
    if base == "prmt" and opcode.count(".") == 1:
        a, b, sel = op(0), op(1), const(2)
        if a is None or b is None:
            return None
        if sel is None:
            return leaf("prmt with a run-time selector", 32)
        return reduced_value(kb_prmt(a.bits, b.bits, sel), 32, None, a.why | b.why)
    if base == "cvta":
        return leaf("address conversion (cvta)")
    return leaf(f"set by {base}")


def _imm_or_none(srcs: Sequence[Operand], *ks: int) -> bool:
    """True unless one of operands ``ks`` is an immediate outside 0..255 (what ptxas rejects as
    ``bfe``/``bfi``'s position or length)."""
    return not any(k < len(srcs) and srcs[k][0] == "imm" and not 0 <= srcs[k][1] <= 255 for k in ks)


def _signed_minmax(a: Value | None, b: Value | None, base: str, width: int) -> Value | None:
    if a is None or b is None:
        return None
    sa, sb = R.to_signed(a.range, width), R.to_signed(b.range, width)
    if sa is None or sb is None or (sa[0] < 0) != (sb[0] < 0):
        return reduced_value(KnownBits(0, 0), width, None, a.why | b.why | {f"set by {base}"})
    fn = R.min_ if base == "min" else R.max_
    return reduced_value(KnownBits(0, 0), width, fn(a.range, b.range, width), a.why | b.why)


def _refine_selp(s: Reader, i: int, ins: Instr, a: Value, b: Value, width: int) -> tuple[Value | None, Value | None]:
    """``selp a, b, p``: narrow each side by what ``p`` says when it is chosen (the ``setp`` that
    wrote ``p`` in the same block, comparing that same register, none redefined between). A side
    that can never be chosen is None."""
    if len(ins.srcs) < 3 or ins.srcs[2][0] != "reg":
        return a, b
    pkey = str(ins.srcs[2][1])
    ids = s.reaching(i, pkey)
    if len(ids) != 1:
        return a, b
    k, j, _ = s.def_list[ids[0]]
    if k < 0 or s.block_of[k] != s.block_of[i]:
        return a, b
    setp = s.instrs[k]
    parts = setp.opcode.split(".")
    if parts[0] != "setp" or len(parts) < 3 or setp.guard is not None or len(setp.srcs) != 2:
        return a, b
    cmp, ty = parts[1], _types(setp.opcode)
    if cmp not in _NEGATE or not ty or ty[0][0] not in ("s", "u", "b") or ty[0][1] != width:
        return a, b
    if j == 1:  # setp p|q: q is the negation
        cmp = _NEGATE[cmp]
    signed = ty[0][0] == "s"
    out: list[Value | None] = []
    for side, val, c in ((0, a, cmp), (1, b, _NEGATE[cmp])):
        src = ins.srcs[side]
        if src[0] != "reg":
            out.append(val)
            continue
        key = str(src[1])
        # the compared register must hold the same value here as at the setp
        if any(key in [d for d in s.instrs[x].dests if d is not None] for x in range(k, i)) or \
                pkey in [d for x in range(k + 1, i) for d in s.instrs[x].dests]:
            out.append(val)
            continue
        x, y = setp.srcs
        if x == src:
            other = s.operand(k, y, width)
            how = c
        elif y == src:
            other = s.operand(k, x, width)
            how = _SWAP[c]
        else:
            out.append(val)
            continue
        if other is None:
            out.append(val)
            continue
        r = R.refine(val.range, how, other.range, width, signed)
        out.append(None if r is None else reduced_value(val.bits, width, r, val.why, val.line, val.origin))
    return out[0], out[1]


def _single_local_def(s: Reader, i: int, op: Operand) -> int | None:
    """The index of the one definition of register ``op`` that reaches instruction ``i``, when it
    is in ``i``'s block and unpredicated (so its value is the one ``i`` reads); else None."""
    if op[0] != "reg":
        return None
    ids = s.reaching(i, str(op[1]))
    if len(ids) != 1:
        return None
    k = s.def_list[ids[0]][0]
    if k < 0 or s.block_of[k] != s.block_of[i] or s.instrs[k].guard is not None:
        return None
    return k


def _urem_idiom(s: Reader, i: int, ins: Instr, width: int) -> tuple[int, int] | None:
    """``x - ((mul.hi(x, M) >> sh) * d)``: LLVM's unsigned ``x % d`` by a constant, in one block.
    When ``M`` and ``sh`` compute ``x / d`` exactly for every ``width``-bit ``x`` (``2**k <= M * d
    <= 2**k + 2**sh`` with ``k = width + sh``, Granlund and Montgomery), the result is in
    ``[0, d - 1]``. None when the statement is not that idiom."""
    if len(ins.srcs) != 2:
        return None
    x, t = ins.srcs
    k_mul = _single_local_def(s, i, t)
    if k_mul is None:
        return None
    mul = s.instrs[k_mul]
    if not mul.opcode.startswith("mul.lo.") or len(mul.srcs) != 2:
        return None
    q, d = mul.srcs if mul.srcs[1][0] == "imm" else mul.srcs[::-1]
    if d[0] != "imm" or not isinstance(d[1], int):
        return None
    divisor = d[1] & mask_of(width)  # the word ptxas reads (E48)
    if divisor == 0:
        return None
    k_q = _single_local_def(s, k_mul, q)
    if k_q is None:
        return None
    shift = 0
    div = s.instrs[k_q]
    if div.opcode == f"shr.u{width}" and len(div.srcs) == 2 and div.srcs[1][0] == "imm":
        shift = div.srcs[1][1] & 0xFFFFFFFF
        k_q = _single_local_def(s, k_q, div.srcs[0])
        if k_q is None:
            return None
        div = s.instrs[k_q]
    if div.opcode != f"mul.hi.u{width}" or len(div.srcs) != 2 or x not in div.srcs:
        return None
    magic = div.srcs[1] if div.srcs[0] == x else div.srcs[0]
    if magic[0] != "imm" or not isinstance(magic[1], int):
        return None
    # the x read by the sub is the x read by the mul.hi: no definition of it between them
    if any(x[1] in s.instrs[j].dests for j in range(k_q, i)):
        return None
    m, k = magic[1] & mask_of(width), width + shift
    if not (1 << k) <= m * divisor <= (1 << k) + (1 << shift):
        return None
    return (0, divisor - 1)
