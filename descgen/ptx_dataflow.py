"""Known bits of PTX registers over a whole function: what a scanner can know at compile time
about the value a descriptor operand holds (PTX ISA §9.7.16.4, used by :mod:`descgen.scan`).

Two parts:

- **Transfer functions** on :class:`descgen.engine.KnownBits` (``mask`` = bits fixed at compile
  time, ``value`` = those bits): :func:`kb_add`, :func:`kb_sub` (carry aware, as LLVM's
  ``KnownBits::computeForAddSub``), :func:`kb_and`, :func:`kb_or`, :func:`kb_xor`,
  :func:`kb_not`, :func:`kb_shl`, :func:`kb_shr`, :func:`kb_bfe`, :func:`kb_bfi`, :func:`kb_mul`,
  :func:`kb_prmt`, :func:`kb_ext` (zero/sign extension and truncation), :func:`kb_meet` (the bits
  two values agree on). Every width is in bits (1..64); results are masked to the width.
  Soundness: for every concrete input consistent with the inputs' known bits, the concrete result
  agrees with the result's known bits (``tests/test_dataflow.py`` checks each with hypothesis).

- **A function's registers** (:class:`Function`): each statement that writes a register is a
  definition; :meth:`Function.solve` gives every demanded register the known bits all of its
  definitions agree on (one unpredicated definition: its value at every use, as in SSA; several,
  or a predicated one: the bits common to all), iterated to a fixed point from "no value yet", so
  loop-carried registers get the bits every iteration agrees on. Each value carries the reasons its
  unknown bits are unknown (``"shared memory address"``, ``"kernel parameter"``,
  ``"loop-carried"``...). Unknown leaves: shared memory symbols (aligned as declared, below
  2**18: E38), loads, kernel parameters, special registers, every instruction not modelled.

Nothing here prints or raises on odd PTX: an operand that cannot be read is unknown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

from .engine import KnownBits

__all__ = ["Value", "Function", "kb_const", "kb_unknown", "kb_meet", "kb_add", "kb_sub", "kb_and", "kb_or", "kb_xor",
           "kb_not", "kb_shl", "kb_shr", "kb_bfe", "kb_bfi", "kb_mul", "kb_prmt", "kb_ext", "kb_concat", "kb_slice",
           "SHARED_LIMIT_BITS", "parse_int", "split_operands"]

#: E38: a shared memory symbol's address is below 2**18 (sm_100 has 228 KB of shared memory per
#: SM; shared-window addresses of a CTA are offsets into it), so its bits 18 and up are known 0.
SHARED_LIMIT_BITS = 18


def _m(width: int) -> int:
    return (1 << width) - 1


def kb_const(value: int, width: int) -> KnownBits:
    """A constant ``width``-bit word (negative values wrap)."""
    return KnownBits(value & _m(width), _m(width))


def kb_unknown() -> KnownBits:
    """No bit known."""
    return KnownBits(0, 0)


def kb_meet(a: KnownBits, b: KnownBits) -> KnownBits:
    """The bits ``a`` and ``b`` both know with equal values (either value may occur)."""
    mask = a.mask & b.mask & ~(a.value ^ b.value)
    return KnownBits(a.value & mask, mask)


def kb_and(a: KnownBits, b: KnownBits, width: int) -> KnownBits:
    """Bitwise and: a bit is known 0 if either is known 0, known 1 if both are."""
    zero = (a.mask & ~a.value) | (b.mask & ~b.value)
    one = a.value & b.value & a.mask & b.mask
    return KnownBits(one & _m(width), (zero | one) & _m(width))


def kb_or(a: KnownBits, b: KnownBits, width: int) -> KnownBits:
    """Bitwise or: a bit is known 1 if either is known 1, known 0 if both are."""
    one = (a.value & a.mask) | (b.value & b.mask)
    zero = a.mask & ~a.value & b.mask & ~b.value
    return KnownBits(one & _m(width), (zero | one) & _m(width))


def kb_xor(a: KnownBits, b: KnownBits, width: int) -> KnownBits:
    """Bitwise xor: known where both are known."""
    mask = a.mask & b.mask & _m(width)
    return KnownBits((a.value ^ b.value) & mask, mask)


def kb_not(a: KnownBits, width: int) -> KnownBits:
    """Bitwise not."""
    mask = a.mask & _m(width)
    return KnownBits(~a.value & mask, mask)


def _add(a: KnownBits, b: KnownBits, width: int, carry: int) -> KnownBits:
    # LLVM KnownBits::computeForAddSub with a known carry-in.
    m = _m(width)
    a_zero, a_one = a.mask & ~a.value & m, a.value & a.mask & m
    b_zero, b_one = b.mask & ~b.value & m, b.value & b.mask & m
    sum_zero = ((~a_zero & m) + (~b_zero & m) + carry) & m  # largest possible operands
    sum_one = (a_one + b_one + carry) & m                   # smallest possible operands
    carry_zero = ~(sum_zero ^ a_zero ^ b_zero) & m
    carry_one = (sum_one ^ a_one ^ b_one) & m
    known = (a_zero | a_one) & (b_zero | b_one) & (carry_zero | carry_one)
    return KnownBits(sum_one & known, known)


def kb_add(a: KnownBits, b: KnownBits, width: int) -> KnownBits:
    """``a + b`` modulo 2**width, carries followed bit by bit (a bit after an unknown carry is unknown)."""
    return _add(a, b, width, 0)


def kb_sub(a: KnownBits, b: KnownBits, width: int) -> KnownBits:
    """``a - b`` modulo 2**width (``a + ~b + 1``)."""
    return _add(a, kb_not(b, width), width, 1)


def kb_shl(a: KnownBits, n: int, width: int) -> KnownBits:
    """``a << n`` (a constant ``n``; PTX clamps shifts of ``width`` or more to 0)."""
    m = _m(width)
    if n >= width:
        return KnownBits(0, m)
    return KnownBits((a.value << n) & m, ((a.mask << n) | _m(n)) & m)


def kb_shr(a: KnownBits, n: int, width: int, signed: bool = False) -> KnownBits:
    """``a >> n`` (a constant ``n``), logical or arithmetic (``signed``: the sign bit fills)."""
    m = _m(width)
    n = min(n, width)
    value, mask = (a.value & m) >> n, (a.mask & m) >> n
    high = m & ~_m(width - n)
    sign = 1 << (width - 1)
    if not signed:
        return KnownBits(value, mask | high)
    if a.mask & sign:
        return KnownBits(value | (high if a.value & sign else 0), mask | high)
    return KnownBits(value & ~high, mask & ~high)


def kb_ext(a: KnownBits, src: int, dst: int, signed: bool = False) -> KnownBits:
    """``a`` (a ``src``-bit word) as a ``dst``-bit word: truncated, zero- or sign-extended."""
    if dst <= src:
        return KnownBits(a.value & _m(dst), a.mask & _m(dst))
    value, mask = a.value & _m(src), a.mask & _m(src)
    high = _m(dst) & ~_m(src)
    if not signed:
        return KnownBits(value, mask | high)
    sign = 1 << (src - 1)
    if mask & sign:
        return KnownBits(value | (high if value & sign else 0), mask | high)
    return KnownBits(value, mask)


def kb_bfe(a: KnownBits, pos: int, length: int, width: int, signed: bool = False) -> KnownBits:
    """``bfe``: ``length`` bits of ``a`` from bit ``pos`` (constants 0..255), zero- or
    sign-extended to ``width`` bits (PTX ISA §9.7.1 bfe: bits past the msb repeat it for ``.s``,
    are 0 for ``.u``)."""
    m = _m(width)
    if length == 0:
        return KnownBits(0, m)
    out_v = out_m = 0
    msb = min(pos + length - 1, width - 1)
    for i in range(width):
        src = pos + i if i < length else None
        if src is None:  # above the field: 0 or the field's sign
            if not signed:
                out_m |= 1 << i
                continue
            src = msb
        if src >= width:
            if not signed:
                out_m |= 1 << i
                continue
            src = width - 1
        if a.mask >> src & 1:
            out_m |= 1 << i
            out_v |= (a.value >> src & 1) << i
    return KnownBits(out_v, out_m)


def kb_bfi(a: KnownBits, b: KnownBits, pos: int, length: int, width: int) -> KnownBits:
    """``bfi``: ``b`` with bits ``pos .. pos+length-1`` replaced by the low bits of ``a``."""
    m = _m(width)
    if length == 0 or pos >= width:
        return KnownBits(b.value & m, b.mask & m)
    field_m = (_m(length) << pos) & m
    ins = kb_shl(a, pos, width)
    return KnownBits(((b.value & ~field_m) | (ins.value & field_m)) & m, ((b.mask & ~field_m) | (ins.mask & field_m)) & m)


def _trailing_known(a: KnownBits, width: int) -> int:
    n = 0
    while n < width and a.mask >> n & 1:
        n += 1
    return n


def _trailing_zeros(a: KnownBits, width: int) -> int:
    n = 0
    while n < width and a.mask >> n & 1 and not a.value >> n & 1:
        n += 1
    return n


def kb_mul(a: KnownBits, b: KnownBits, width: int) -> KnownBits:
    """``a * b`` modulo 2**width: exact when both are known; by a power of two, a shift; else the
    low bits where both operands' low bits are known, and the known trailing zeros."""
    m = _m(width)
    if a.mask & m == m and b.mask & m == m:
        return kb_const(a.value * b.value, width)
    for x, y in ((a, b), (b, a)):
        if y.mask & m == m and y.value & m and (y.value & m) & ((y.value & m) - 1) == 0:
            return kb_shl(x, (y.value & m).bit_length() - 1, width)
    low = min(_trailing_known(a, width), _trailing_known(b, width))
    zeros = min(width, _trailing_zeros(a, width) + _trailing_zeros(b, width))
    mask = _m(max(low, zeros))
    return KnownBits((a.value * b.value) & _m(low), mask)


def kb_prmt(a: KnownBits, b: KnownBits, selector: int) -> KnownBits:
    """``prmt.b32`` (default mode) with a constant selector: each result byte is one of the 8
    bytes of ``{b, a}`` (a = bytes 0-3), or its sign (bit 3 of the selector nibble)."""
    src_v = (a.value & 0xFFFFFFFF) | (b.value & 0xFFFFFFFF) << 32
    src_m = (a.mask & 0xFFFFFFFF) | (b.mask & 0xFFFFFFFF) << 32
    v = mk = 0
    for i in range(4):
        nib = selector >> (4 * i) & 0xF
        byte = nib & 7
        if nib & 8:
            bit = byte * 8 + 7
            if src_m >> bit & 1:
                mk |= 0xFF << (8 * i)
                v |= (0xFF if src_v >> bit & 1 else 0) << (8 * i)
        else:
            mk |= (src_m >> (8 * byte) & 0xFF) << (8 * i)
            v |= (src_v >> (8 * byte) & 0xFF) << (8 * i)
    return KnownBits(v & mk, mk)


def kb_concat(parts: Iterable[KnownBits], width: int) -> KnownBits:
    """Vector packing ``mov.b64 %rd, {lo, hi}``: ``parts`` of ``width`` bits each, the first lowest."""
    v = mk = 0
    for i, p in enumerate(parts):
        v |= (p.value & _m(width)) << (i * width)
        mk |= (p.mask & _m(width)) << (i * width)
    return KnownBits(v, mk)


def kb_slice(a: KnownBits, index: int, width: int) -> KnownBits:
    """Vector unpacking ``mov.b64 {lo, hi}, %rd``: element ``index`` of ``width`` bits."""
    return KnownBits(a.value >> (index * width) & _m(width), a.mask >> (index * width) & _m(width))


_INT = re.compile(r"(-)?(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)[uU]?")


def parse_int(text: str) -> int | None:
    """A PTX integer literal (``0x1F``, ``0b101``, ``017`` octal, ``42``, ``42U``, ``-1``) as a
    Python int, or None if ``text`` is not one (PTX ISA §4.5.1 integer constants)."""
    m = _INT.fullmatch(text.strip())
    if not m:
        return None
    digits = m.group(2)
    if digits[:2].lower() == "0x":
        v = int(digits[2:], 16)
    elif digits[:2].lower() == "0b":
        v = int(digits[2:], 2)
    elif digits[0] == "0" and len(digits) > 1:
        v = int(digits[1:], 8)
    else:
        v = int(digits)
    return -v if m.group(1) else v


# --------------------------------------------------------------------------------------------
# A function's registers.


@dataclass(frozen=True, slots=True)
class Value:
    """What is known about a register or operand.

    Attributes:
        bits: the known bits (:class:`KnownBits`), ``width`` bits wide.
        width: the width in bits (1..64).
        why: why the unknown bits are unknown (empty when every bit is known): short phrases such
            as ``"shared memory address"``, ``"kernel parameter"``, ``"loaded from memory"``,
            ``"loop-carried"``, ``"several definitions"``, ``"special register %tid.x"``.
        line: the line of the register's definition when it has exactly one (else None).
        origin: that definition's opcode (``mov.b32``), ``"immediate"``, or None.
    """

    bits: KnownBits
    width: int
    why: frozenset[str] = frozenset()
    line: int | None = None
    origin: str | None = None

    @property
    def full(self) -> bool:
        return self.bits.mask & _m(self.width) == _m(self.width)


def _unknown(width: int, why: str) -> Value:
    return Value(KnownBits(0, 0), width, frozenset((why,)))


_TOKEN = re.compile(r"(?<![\w$%])%?[A-Za-z_$][\w$.]*")
_TYPE = re.compile(r"^(?:b|s|u|f|bf|e4m3|e5m2)(\d+)(?:x\d+)?$")
_SPECIAL = ("%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpid", "%nwarpid", "%smid", "%nsmid", "%gridid",
            "%lanemask", "%clock", "%globaltimer", "%cluster", "%is_explicit_cluster", "%dynamic_smem_size",
            "%total_smem_size", "%aggr_smem_size", "%envreg", "%pm", "%reserved_smem", "%current_graph_exec")


def _types(opcode: str) -> list[tuple[str, int]]:
    """The opcode's type qualifiers in order: ``cvt.u64.u32`` -> [("u", 64), ("u", 32)]."""
    out = []
    for p in opcode.split(".")[1:]:
        if p == "pred":
            out.append(("pred", 1))
            continue
        m = _TYPE.match(p)
        if m:
            out.append((p.rstrip("0123456789x")[:1] if not p.startswith("bf") else "f", int(m.group(1))))
    return out


def split_operands(text: str) -> list[str]:
    """Top-level comma-separated operands (commas inside ``[]``, ``{}``, ``()`` do not split)."""
    if "{" not in text and "[" not in text and "(" not in text:
        return [t.strip() for t in text.split(",") if t.strip()]
    out: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(text):
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    last = text[start:].strip()
    if last:
        out.append(last)
    return out


#: A definition: (line, guarded, opcode, operand text, index of the register among the
#: destinations, number of destinations).
Def = tuple[int, bool, str, str, int, int]


@dataclass
class Function:
    """The registers of one function (or of a fragment outside any function) and their definitions.

    Filled by the scanner statement by statement (:meth:`define`), then asked for values
    (:meth:`solve`). ``shared`` maps a ``.shared`` symbol to its declared alignment in bytes;
    ``registers`` names the registers declared without ``%`` (``.reg .b32 r<20>;`` is legal PTX);
    ``resolve`` maps an inner-scope register name to its unique key (see the scanner).
    """

    shared: dict[str, int] = field(default_factory=dict)
    defs: dict[str, list[Def]] = field(default_factory=dict)
    plain: set[str] = field(default_factory=set)
    plain_ranges: dict[str, int] = field(default_factory=dict)
    resolve: dict[str, str] = field(default_factory=dict)

    def is_register(self, name: str) -> bool:
        """True for ``%name`` and for a declared register named without ``%``."""
        if name[:1] == "%":
            return True
        if name in self.plain or name in self.resolve:
            return True
        m = re.fullmatch(r"([A-Za-z_$][\w$]*?)(\d+)", name)
        return bool(m and int(m.group(2)) < self.plain_ranges.get(m.group(1), -1))

    def key(self, name: str) -> str:
        """The register's key: its name, or the unique key of an inner-scope declaration."""
        return self.resolve.get(name, name)

    def define(self, line: int, guarded: bool, opcode: str, rest: str, dests: list[str]) -> None:
        """Record the statement ``opcode rest`` (operands as written) as a definition of each key
        in ``dests`` (already resolved with :meth:`key`)."""
        n = len(dests)
        for i, d in enumerate(dests):
            self.defs.setdefault(d, []).append((line, guarded, opcode, rest, i, n))

    # -- evaluation --------------------------------------------------------------------------

    def solve(self, keys: Iterable[str]) -> dict[str, Value]:
        """The known bits of each register in ``keys`` and of every register they depend on,
        iterated to a fixed point (E38). Returns key -> :class:`Value`."""
        order, cyclic = self._slice(keys)
        vals: dict[str, Value | None] = dict.fromkeys(order)
        changes: dict[str, int] = {}
        for _ in range(200):
            changed = False
            for k in order:
                new = self._compute(k, vals, k in cyclic)
                old = vals[k]
                if new is None:
                    continue
                if old is not None:
                    meet = kb_meet(old.bits, new.bits)
                    why = old.why | new.why
                    if meet == old.bits and why == old.why:
                        continue
                    changes[k] = changes.get(k, 0) + 1
                    if changes[k] > 2 and meet != old.bits:  # widening: every bit above a lost one
                        lost = old.bits.mask & ~meet.mask
                        low = (lost & -lost).bit_length() - 1
                        keep = meet.mask & _m(low)
                        meet = KnownBits(meet.value & keep, keep)
                    new = Value(meet, new.width, why, new.line, new.origin)
                vals[k] = new
                changed = True
            if not changed:
                break
        else:  # not reached on real code: give up soundly
            return {k: _unknown(64, "analysis limit") for k in order}
        return {k: (v if v is not None else _unknown(64, "no value reaches it")) for k, v in vals.items()}

    def _slice(self, keys: Iterable[str]) -> tuple[list[str], set[str]]:
        """The registers ``keys`` depend on, dependencies first, and those on a cycle."""
        order: list[str] = []
        state: dict[str, int] = {}
        cyclic: set[str] = set()
        for root in keys:
            if root in state:
                continue
            stack = [(root, iter(self._sources(root)))]
            state[root] = 1
            path = [root]
            while stack:
                k, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    stack.pop()
                    path.pop()
                    state[k] = 2
                    order.append(k)
                    continue
                s = state.get(nxt)
                if s is None:
                    state[nxt] = 1
                    path.append(nxt)
                    stack.append((nxt, iter(self._sources(nxt))))
                elif s == 1:
                    cyclic.update(path[path.index(nxt):])
        return order, cyclic

    def _sources(self, key: str) -> list[str]:
        out = []
        for d in self.defs.get(key, ()):
            ops = split_operands(d[3])
            for tok in _TOKEN.findall(",".join(ops[1:])):
                if tok[0] == "%" and tok.startswith(_SPECIAL):
                    continue
                if self.is_register(tok.split(".")[0] if tok[0] == "%" else tok):
                    out.append(self.key(tok))
        return out

    def _compute(self, key: str, vals: dict[str, Value | None], cyclic: bool) -> Value | None:
        defs = self.defs.get(key)
        if not defs:
            return _unknown(64, "no definition in the function" if key[:1] == "%" or key in self.plain else "not a register")
        result: Value | None = None
        guarded = False
        for d in defs:
            v = self._eval_def(d, vals)
            guarded |= d[1]
            if v is None:
                continue
            if result is None:
                result = v
            else:
                bits = kb_meet(result.bits, v.bits)
                why = result.why | v.why
                if bits != result.bits or bits != v.bits:
                    why |= {"loop-carried" if cyclic else "several definitions"}
                result = Value(bits, max(result.width, v.width), why)
        if result is None:
            return None
        if guarded and all(d[1] for d in defs):
            return Value(KnownBits(0, 0), result.width, result.why | {"predicated definition"})
        if len(defs) == 1 and result.line is None:
            result = Value(result.bits, result.width, result.why, defs[0][0], defs[0][2])
        elif len(defs) > 1:
            result = Value(result.bits, result.width, result.why)
        if result.full:
            return Value(result.bits, result.width, frozenset(), result.line, result.origin)
        return result

    def operand(self, text: str, width: int, vals: dict[str, Value | None]) -> Value | None:
        """The value of one source operand as a ``width``-bit word (None: not yet known, during
        the fixed point)."""
        t = text.strip()
        if not t:
            return _unknown(width, "missing operand")
        c = t[0]
        if c.isdigit() or c == "-":
            n = parse_int(t)
            if n is None:
                return _unknown(width, f"operand {t}")
            if not -(1 << (width - 1)) <= n < 1 << width:
                return _unknown(width, f"the immediate {t} does not fit {width} bits")
            return Value(kb_const(n, width), width, frozenset(), None, "immediate")
        if c == "%" and t.startswith(_SPECIAL):
            return _unknown(width, f"special register {t}")
        if self.is_register(t):
            v = vals.get(self.key(t))
            if v is None:
                return None if self.key(t) in vals else _unknown(width, "not a register")
            if v.width == width:
                return v
            if v.width > width:
                return Value(kb_ext(v.bits, v.width, width), width, v.why, v.line, v.origin)
            return Value(v.bits, width, v.why | {"narrower register"}, v.line, v.origin)
        base = t.split("+")[0].strip()
        if base in self.shared:
            align = max(1, self.shared[base])
            low = _m(align.bit_length() - 1)
            high = _m(width) & ~_m(SHARED_LIMIT_BITS)
            sym = Value(KnownBits(0, low | high), width, frozenset(("shared memory address",)))
            if "+" in t:
                off = parse_int(t.split("+", 1)[1])
                if off is None:
                    return _unknown(width, f"address {t}")
                return Value(kb_add(sym.bits, kb_const(off, width), width), width, sym.why)
            return sym
        return _unknown(width, f"address of {base}" if re.fullmatch(r"[A-Za-z_$][\w$]*", base) else f"operand {t}")

    def _eval_def(self, d: Def, vals: dict[str, Value | None]) -> Value | None:
        line, guarded, opcode, rest, index, count = d
        base = opcode.split(".", 1)[0]
        types = _types(opcode)
        width = types[0][1] if types else 32
        ops = split_operands(rest)
        srcs = ops[1:]

        def op(i: int, w: int | None = None) -> Value | None:
            if i >= len(srcs):
                return _unknown(w or width, "missing operand")
            return self.operand(srcs[i], w or width, vals)

        def const(i: int) -> int | None:
            return parse_int(srcs[i]) if i < len(srcs) else None

        def leaf(why: str) -> Value:
            return Value(KnownBits(0, 0), width, frozenset((why,)), line, opcode)

        if base == "mov" and srcs:
            src = srcs[0]
            if count > 1:  # unpacking: {%r1, %r2} = %rd
                w = width // count
                v = op(0)
                if v is None:
                    return None
                return Value(kb_slice(v.bits, index, w), w, v.why, line, opcode)
            if src.startswith("{"):  # packing
                parts = split_operands(src[1:-1])
                w = width // max(1, len(parts))
                vs = [self.operand(p, w, vals) for p in parts]
                if any(v is None for v in vs):
                    return None
                why = frozenset().union(*(v.why for v in vs if v is not None))
                return Value(kb_concat([v.bits for v in vs if v is not None], w), width, why, line, opcode)
            v = op(0)
            return None if v is None else Value(v.bits, width, v.why, line, opcode)
        if base == "ld" or base == "ldu":
            if ".param" in opcode:
                return leaf("kernel parameter")
            return leaf("loaded from memory")
        if count != 1:
            return leaf(f"set by {base}")
        if base == "cvt":
            if len(types) < 2 or any(t[0] in ("f", "pred") for t in types) or ".rn" in opcode or ".sat" in opcode:
                return leaf(f"set by {opcode}")
            v = op(0, types[1][1])
            if v is None:
                return None
            return Value(kb_ext(v.bits, types[1][1], width, types[1][0] == "s"), width, v.why, line, opcode)
        if types and types[0][0] == "f":
            return leaf(f"set by {base}")
        if base in ("and", "or", "xor", "add", "sub", "selp"):
            if ".cc" in opcode:
                return leaf(f"set by {opcode}")
            a, b = op(0), op(1)
            if a is None or b is None:
                return None
            fn = {"and": kb_and, "or": kb_or, "xor": kb_xor, "add": kb_add, "sub": kb_sub}.get(base)
            bits = kb_meet(a.bits, b.bits) if fn is None else fn(a.bits, b.bits, width)
            return Value(bits, width, a.why | b.why, line, opcode)
        if base in ("not", "neg", "cnot") and base != "cnot":
            a = op(0)
            if a is None:
                return None
            bits = kb_not(a.bits, width) if base == "not" else kb_sub(kb_const(0, width), a.bits, width)
            return Value(bits, width, a.why, line, opcode)
        if base in ("shl", "shr"):
            a, n = op(0), const(1)
            if a is None:
                return None
            if n is None:
                return Value(KnownBits(0, 0), width, a.why | {"shift by a run-time amount"}, line, opcode)
            bits = kb_shl(a.bits, n, width) if base == "shl" else kb_shr(a.bits, n, width, types[0][0] == "s")
            return Value(bits, width, a.why, line, opcode)
        if base == "bfe":
            a, pos, ln = op(0), const(1), const(2)
            if a is None:
                return None
            if pos is None or ln is None:
                return Value(KnownBits(0, 0), width, a.why | {"bit field at a run-time position"}, line, opcode)
            return Value(kb_bfe(a.bits, pos & 0xFF, ln & 0xFF, width, types[0][0] == "s"), width, a.why, line, opcode)
        if base == "bfi":
            a, b, pos, ln = op(0), op(1), const(2), const(3)
            if a is None or b is None:
                return None
            if pos is None or ln is None:
                return Value(KnownBits(0, 0), width, a.why | b.why | {"bit field at a run-time position"}, line, opcode)
            return Value(kb_bfi(a.bits, b.bits, pos & 0xFF, ln & 0xFF, width), width, a.why | b.why, line, opcode)
        if base in ("mul", "mad"):
            wide = ".wide" in opcode
            if not (".lo" in opcode or wide):
                return leaf(f"set by {opcode}")
            w_out = width * 2 if wide else width
            a, b = op(0), op(1)
            if a is None or b is None:
                return None
            ab, bb = (kb_ext(a.bits, width, w_out, types[0][0] == "s"), kb_ext(b.bits, width, w_out, types[0][0] == "s"))
            bits = kb_mul(ab, bb, w_out)
            why = a.why | b.why
            if base == "mad":
                c = op(2, w_out)
                if c is None:
                    return None
                bits, why = kb_add(bits, c.bits, w_out), why | c.why
            return Value(bits, w_out, why, line, opcode)
        if base == "prmt" and opcode.count(".") == 1:
            a, b, sel = op(0), op(1), const(2)
            if a is None or b is None:
                return None
            if sel is None:
                return Value(KnownBits(0, 0), 32, a.why | b.why | {"prmt with a run-time selector"}, line, opcode)
            return Value(kb_prmt(a.bits, b.bits, sel), 32, a.why | b.why, line, opcode)
        if base == "cvta":
            return leaf("address conversion (cvta)")
        return leaf(f"set by {base}")
