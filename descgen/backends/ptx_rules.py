"""The rule language's PTX back end: the checks the static scan left open at one instruction, as
device code over the registers that feed it (the descriptor sanitizer, docs/sanitizer.md).

At an instruction site most facts are constants: the qualifiers (kind, cta_group, ``.ws``...),
the target, and every descriptor field whose bits the scan proved. The rest are fields of words
held in registers. Each check's ``when`` (:mod:`descgen.rules.language`) is compiled against that
split, as a partial evaluation:

- a subtree that reads no run-time field is evaluated here, in Python, with the Python back end's
  own semantics (:func:`descgen.rules.language.python_expression`);
- a subtree whose run-time fields have few raw bits together (at most :data:`FOLD_BITS`: types,
  majors, swizzle, M, N, flags) is evaluated here for every value of those bits, and becomes a
  constant table indexed by them: table lookups, set membership, names and derived facts are
  decided by the Python engine itself, bit for bit;
- the rest (the arithmetic over addresses, LBO and SBO: 14-bit fields) is written as PTX integer
  code with the language's semantics: 64-bit signed integers, Python's floor division and
  modulo, None a sentinel (:data:`NONE`), names numbered per site, a value true when it is neither
  0 nor None.

Each field's own checks (reserved bits, fixed constants, undefined enum codes: the engine's
``check_raw``) are folded the same way, field by field. The result is straight-line code with
predicates: no call, no loop, no memory but constant tables.

A check that cannot be compiled (a table keyed by a wide run-time value) raises
:class:`Unsupported`; the instrumenter lists its rule as not checked at run time, never passes it.
"""

from __future__ import annotations

import ast
import functools
import itertools
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ..core.memo import Memo
from ..model.engine import check_raw, plan
from ..rules.checks import RunTimeValue, python_namespace
from ..rules.language import python_expression
from .ptx_code import (ANY, NONE, S32, U32, Bits, Const, Program, RawField, Reg, Unsupported, Val, fits32, imm,
                       imm32, interval, moved)

__all__ = ["NONE", "FOLD_BITS", "Unsupported", "RawField", "Dynamic", "Program", "Site", "field_of", "raw_field_checks"]

#: The most raw bits of run-time fields a subtree may read to be folded into a constant table (a
#: true/false subtree: one bit per value, 512 bytes at most); a subtree of other values, one
#: 64-bit entry per value, takes at most :data:`FOLD_VALUE_BITS` (2 KiB).
FOLD_BITS = 12
FOLD_VALUE_BITS = 8


@dataclass(frozen=True)
class Dynamic:
    """A fact known at run time only: a function ``fn`` of the raw bits of ``fields`` (in order)
    giving the value the Python engine reads (a field's decoded value, or a fact derived from
    fields, such as the MMA's K from the Sparsity bit)."""

    fields: tuple[RawField, ...]
    fn: Callable[..., Any]
    shift: int | None = None  # a single field whose value is raw << shift (decoded natively)
    special: str | None = None  # a 32-bit special register the value is (``%aggr_smem_size``)


def field_of(reg: str, reg_width: int, layout_name: str, kind: str | None, name: str) -> Dynamic:
    """The fact that is field ``name`` of the word in ``reg``, decoded as the engine decodes it
    (``check_raw``), natively when the value is the raw bits shifted left."""
    p = plan(layout_name, kind)
    f = p.layout.by_name[name]
    raw = RawField(reg, reg_width, layout_name, kind, name, f.lo, f.width)
    decode = _decoder(layout_name, kind, name)
    shift = None
    if f.type not in ("enum", "flag") and f.width > FOLD_BITS:
        for s in range(0, 8):
            if all(decode(r) == r << s for r in (0, 1, 2, 5, (1 << f.width) - 1)):
                shift = s
                break
    return Dynamic((raw,), decode, shift)


@functools.cache
def _decoder(layout_name: str, kind: str | None, name: str) -> Callable[[int], Any]:
    p = plan(layout_name, kind)
    f = p.layout.by_name[name]

    @functools.cache
    def decode(raw: int) -> Any:
        return check_raw(p.layout, f, kind, raw)[0]
    return decode


@functools.cache
def raw_field_checks(layout_name: str, kind: str | None, name: str) -> tuple[tuple[str, str, tuple[int, ...]], ...]:
    """The engine's own checks of one field, by raw value: (code, severity, the raw values that
    break it) for each code some raw value of the field gets (``check_raw``: reserved bits set, a
    fixed constant differing, an undefined enum code, a value outside the field's domain)."""
    p = plan(layout_name, kind)
    f = p.layout.by_name[name]
    by_code: dict[tuple[str, str], list[int]] = {}
    for raw in range(1 << f.width):
        problem = check_raw(p.layout, f, kind, raw)[1]
        if problem is not None:
            by_code.setdefault((problem.code, problem.severity), []).append(raw)
    return tuple((code, sev, tuple(raws)) for (code, sev), raws in by_code.items())


class _View:
    """The facts as the Python back end reads them (``v.get(name)``, ``v.get(word).get(field)``),
    with the run-time facts given values."""

    __slots__ = ("static", "values")

    def __init__(self, static: Mapping[str, Any], values: Mapping[Any, Any]) -> None:
        self.static = static
        self.values = values

    def get(self, name: str, default: Any = None) -> Any:
        if name in self.values:
            return self.values[name]
        value = self.static.get(name, default)
        if isinstance(value, Mapping):
            return _View(value, {k[1]: v for k, v in self.values.items() if isinstance(k, tuple) and k[0] == name})
        return value


@functools.cache
def _compiled_expression(text: str) -> Any:
    return compile(text, "<descgen ptx fold>", "eval")


def _evaluate(node: ast.expr, static: Mapping[str, Any], values: Mapping[Any, Any]) -> Any:
    """``node`` as the Python back end evaluates it, over the static facts and run-time values.

    Raises:
        Unsupported: it reads a fact known at run time only that the site does not provide."""
    try:
        scope = {**python_namespace(), "v": _View(static, values)}  # (globals: a known() lambda reads v)
        return eval(_compiled_expression(python_expression(node)), scope)
    except RunTimeValue as e:
        raise Unsupported(f"{e.name} is known at run time only and not read from a register here") from None


def _repr(value: Any, program: Program) -> tuple[int, str]:
    """A Python value as (64-bit value, kind)."""
    if value is None:
        return NONE, "int"
    if isinstance(value, bool):
        return int(value), "bool"
    if isinstance(value, int):
        return value, "int"
    if isinstance(value, str):
        return program.name_id(value), "name"
    raise Unsupported(f"a value {value!r} has no 64-bit form")


# --------------------------------------------------------------------------------------------
# The compiler of one expression.


class Site:
    """Compiles checks at one site: ``static`` the facts known here (the engine's facts mapping,
    words as nested mappings), ``dynamic`` the run-time facts (by name, or ``(word, field)`` for an
    instruction rule's ``idesc.atype``), into ``program``.

    Each register carries the range of values it may hold; an operation whose operands and result
    fit 32 bits is written on 32-bit registers (half the instructions of a 64-bit one)."""

    def __init__(self, static: Mapping[str, Any], dynamic: Mapping[Any, Dynamic], program: Program) -> None:
        self.static = static
        self.dynamic = dynamic
        self.p = program
        self._leaves: dict[int, frozenset[Any]] = {}
        self._values: dict[str, Val] = {}
        self._static_key: Any = None
        self._converted: dict[tuple[str, int], str] = {}
        self._made: dict[Bits, Reg] = {}
        self._shifted: dict[str, tuple[str, int]] = {}  # made of bits: a register -> (it unshifted, the shift)
        self._sums: dict[str, tuple[Val, int]] = {}  # a register -> (a value, a constant) it is the sum of

    # -- what a subtree reads at run time

    def _key(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Name) and not node.id.isupper():
            return node.id
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            return (node.value.id, node.attr)
        return None

    def leaves(self, node: ast.expr) -> frozenset[Any]:
        hit = self._leaves.get(id(node))
        if hit is None:
            key = self._key(node)
            if key is not None:
                hit = frozenset([key]) if key in self.dynamic else frozenset()
            else:
                hit = frozenset().union(*(self.leaves(c) for c in ast.iter_child_nodes(node)
                                          if isinstance(c, ast.expr)))
            self._leaves[id(node)] = hit
        return hit

    # -- values

    def value(self, node: ast.expr) -> Val:
        """``node``'s value: a constant, or a register the code so far computes (every value is
        computed unconditionally, so one seen before is reused)."""
        memo = ast.dump(node)
        hit = self._values.get(memo)
        if hit is None:
            hit = self._values[memo] = self._value(node)
        return hit

    def _value(self, node: ast.expr) -> Val:
        keys = self.leaves(node)
        if not keys:
            try:
                return Const(_evaluate(node, self.static, {}))
            except (TypeError, ArithmeticError):  # (Python would raise: a guard keeps the check from reading it)
                return Const(None)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "known":
            return self.value(node.args[0])
        fields = tuple(dict.fromkeys(f for k in sorted(keys, key=repr) for f in self.dynamic[k].fields))
        key = self._key(node)
        if key is not None and self.dynamic[key].special is not None:
            return Reg(self.p.special(str(self.dynamic[key].special)), "int", False, None, *U32, 32)
        shift = self.dynamic[key].shift if key is not None else None
        half = self.p.in_half(fields[0]) if shift is not None else None
        if shift is not None and half is not None and ((1 << fields[0].width) - 1) << shift < 1 << 32:
            return Bits(half[0], half[1], (1 << fields[0].width) - 1, shift)
        if shift is not None:
            lo, hi = 0, ((1 << fields[0].width) - 1) << shift
            width = 32 if fits32(lo, hi) else 64
            raw = self.p.raw(fields[0])
            r = self._new(width)
            self.p.emit(f"shl.b{width} {r}, {raw if width == 32 else self.p.widen(raw)}, {shift};")
            return Reg(r, "int", False, None, lo, hi, width)
        if sum(f.width for f in fields) <= FOLD_BITS and not any(self.dynamic[k].special for k in keys):
            folded = self._fold(node, keys, fields)
            if folded is not None:
                return folded
        return self._native(node)

    def _fold(self, node: ast.expr, keys: frozenset[Any], fields: tuple[RawField, ...]) -> Val | None:
        """``node`` evaluated for every value of the raw bits of ``fields``: a constant table
        indexed by them (None when a result is no 64-bit value: a set, left to the parent)."""
        reads = tuple((k, tuple((f.layout, f.kind, f.name) for f in self.dynamic[k].fields))
                      for k in sorted(keys, key=repr))
        memo_key = (id(node), self._frozen(), reads, tuple((f.layout, f.kind, f.name) for f in fields))
        got = _FOLDS.get(memo_key)
        if got is None:
            got = _FOLDS.remember(memo_key, self._outcomes(node, keys, fields))
        if got is None:
            return None
        outs, kinds = got
        results = [_repr(out, self.p)[0] for out in outs]
        kind = next(iter(kinds)) if len(kinds) == 1 else "int"
        none = any(out is None for out in outs)
        if len(set(results)) == 1:
            return Const(outs[0])
        if not set(results) <= {0, 1} and sum(f.width for f in fields) > FOLD_VALUE_BITS:
            return None
        index = self._index(fields)
        if set(results) <= {0, 1} and not none:
            words = [0] * max(1, len(results) // 64)
            for i, bit in enumerate(results):
                words[i >> 6] |= bit << (i & 63)
            return Reg(self.p.bit_of(tuple(words), index), "bool" if kind == "bool" else kind, False, None, 0, 1, 32)
        r = self.p.reg()
        self.p.emit(f"mov.u64 {r}, {self.p.table(tuple(results))};")
        self.p.emit(f"mad.wide.u32 {r}, {index}, 8, {r};")
        self.p.emit(f"ld.const.u64 {r}, [{r}];")
        return Reg(r, kind, none, None, min(results), max(results))

    def _outcomes(self, node: ast.expr, keys: frozenset[Any],
                  fields: tuple[RawField, ...]) -> tuple[tuple[Any, ...], frozenset[str]] | None:
        """``node``'s value for each value of the raw bits of ``fields`` (the first lowest), and the
        kinds of value seen; None when one is a set."""
        outs: list[Any] = []
        kinds: set[str] = set()
        for raws in itertools.product(*(range(1 << f.width) for f in reversed(fields))):
            by_field = dict(zip(reversed(fields), raws))
            values = {k: self.dynamic[k].fn(*(by_field[f] for f in self.dynamic[k].fields)) for k in keys}
            try:
                out = _evaluate(node, self.static, values)
            except (TypeError, ArithmeticError):
                out = None  # (Python would raise: a guard elsewhere keeps the check from reading it)
            if isinstance(out, tuple):
                return None
            outs.append(out)
            if out is not None:
                kinds.add("bool" if isinstance(out, bool) else "name" if isinstance(out, str) else "int")
        return tuple(outs), frozenset(kinds)

    def _frozen(self) -> Any:
        if self._static_key is None:
            self._static_key = _freeze(self.static)
        return self._static_key

    def _index(self, fields: tuple[RawField, ...]) -> str:
        """A 32-bit register holding the raw bits of ``fields`` side by side (the first lowest)."""
        if not fields:
            return "0"
        index = self.p.raw(fields[0])
        shift = fields[0].width
        for f in fields[1:]:
            r = self.p.reg32()
            self.p.emit(f"shl.b32 {r}, {self.p.raw(f)}, {shift};")
            self.p.emit(f"or.b32 {r}, {r}, {index};")
            index, shift = r, shift + f.width
        return index

    # -- registers and operands

    def _new(self, width: int) -> str:
        return self.p.reg32() if width == 32 else self.p.reg()

    def _made_of(self, b: Bits) -> Reg:
        """``b`` computed: an ``and`` and a shift."""
        if b not in self._made:
            r = self.p.reg32()
            if b.mask << b.lo < 1 << 32:
                self.p.emit(f"and.b32 {r}, {b.src}, {imm32(b.mask << b.lo)};")
                n = b.shift - b.lo
            else:
                self.p.emit(f"shr.u32 {r}, {b.src}, {b.lo};")
                self.p.emit(f"and.b32 {r}, {r}, {imm32(b.mask)};")
                n = b.shift
            if n:
                moved = self.p.reg32()
                self.p.emit(f"{'shl.b32' if n > 0 else 'shr.u32'} {moved}, {r}, {abs(n)};")
                if n > 0:
                    self._shifted[moved] = (r, n)
                r = moved
            self._made[b] = Reg(r, "int", False, None, 0, b.mask << b.shift, 32)
        return self._made[b]

    def _bounds(self, v: Val) -> tuple[int, int]:
        if isinstance(v, Bits):
            return 0, v.mask << v.shift
        if isinstance(v, Const):
            code = _repr(v.value, self.p)[0]
            return code, code
        return v.lo, v.hi

    def reg_of(self, v: Val) -> Reg:
        """``v`` in a register (a constant in a 64-bit one)."""
        if isinstance(v, Bits):
            return self._made_of(v)
        if isinstance(v, Reg):
            return v
        code, kind = _repr(v.value, self.p)
        r = self.p.reg()
        self.p.emit(f"mov.b64 {r}, {imm(code)};")
        return Reg(r, kind, v.value is None, None, code, code)

    def _src(self, v: Val, width: int) -> str:
        """``v`` as a ``width``-bit source operand: an immediate for a constant, else its register
        (its low half, or widened as it reads)."""
        if isinstance(v, Bits):
            v = self._made_of(v)
        if isinstance(v, Const):
            code = _repr(v.value, self.p)[0]
            return imm(code) if width == 64 else imm32(code)
        if v.width == width:
            return v.name
        key = (v.name, width)
        if key not in self._converted:
            if width == 32:
                r = self._converted[key] = self.p.reg32()
                self.p.emit(f"cvt.u32.u64 {r}, {v.name};")
            else:
                self._converted[key] = self.p.widen(v.name, signed=v.lo < 0)
        return self._converted[key]

    def _first(self, v: Val, width: int) -> str:
        """``v`` as a ``width``-bit first source operand: a register."""
        if isinstance(v, Const):
            r = self._new(width)
            self.p.emit(f"mov.b{width} {r}, {self._src(v, width)};")
            return r
        return self._src(v, width)

    def operand(self, v: Val) -> str:
        """``v`` as a 64-bit instruction operand: an immediate for a constant, else a register."""
        return self._src(v, 64)

    def truth(self, v: Val) -> str:
        """A predicate: ``v`` is true (Python's truth: neither 0 nor None; a name is true)."""
        if isinstance(v, Bits) and v.mask << v.lo < 1 << 32:
            p, t = self.p.pred(), self.p.reg32()
            self.p.emit(f"and.b32 {t}, {v.src}, {imm32(v.mask << v.lo)};")
            self.p.emit(f"setp.ne.b32 {p}, {t}, 0;")
            return p
        v = self.reg_of(v)
        if v.pred is not None:
            return v.pred
        p = self.p.pred()
        if not v.maybe_none:
            self.p.emit(f"setp.ne.b{v.width} {p}, {v.name}, 0;")
        elif v.kind == "name":
            self.p.emit(f"setp.ne.s64 {p}, {v.name}, {imm(NONE)};")
        else:
            q = self.p.pred()
            self.p.emit(f"setp.ne.s64 {q}, {v.name}, 0;")
            self.p.emit(f"setp.ne.and.s64 {p}, {v.name}, {imm(NONE)}, {q};")
        return p

    def _bool(self, p: str) -> Reg:
        r = self.p.reg32()
        self.p.emit(f"selp.b32 {r}, 1, 0, {p};")  # (ptxas drops it where only the predicate is read)
        return Reg(r, "bool", False, p, 0, 1, 32)

    def _select(self, t: str, a: Val, b: Val) -> Val:
        """``a`` where predicate ``t`` holds, else ``b``."""
        if isinstance(a, Const) and isinstance(b, Const) and a.value == b.value:
            return a
        a, b = (self._made_of(v) if isinstance(v, Bits) else v for v in (a, b))
        kind_a = _repr(a.value, self.p)[1] if isinstance(a, Const) else a.kind
        kind_b = _repr(b.value, self.p)[1] if isinstance(b, Const) else b.kind
        none = any(v.value is None if isinstance(v, Const) else v.maybe_none for v in (a, b))
        (al, ah), (bl, bh) = self._bounds(a), self._bounds(b)
        lo, hi = min(al, bl), max(ah, bh)
        width = 32 if fits32(lo, hi) else 64
        r = self._new(width)
        self.p.emit(f"selp.b{width} {r}, {self._src(a, width)}, {self._src(b, width)}, {t};")
        return Reg(r, kind_a if kind_a == kind_b else "int", none, None, lo, hi, width)

    def _reading(self, *ranges: tuple[int, int]) -> str:
        """The type values in ``ranges`` compare as: ``u32``, ``s32`` or ``s64``."""
        if all(U32[0] <= lo and hi <= U32[1] for lo, hi in ranges):
            return "u32"
        if all(S32[0] <= lo and hi <= S32[1] for lo, hi in ranges):
            return "s32"
        return "s64"

    def _native(self, node: ast.expr) -> Val:
        if isinstance(node, ast.BoolOp):
            acc = self.value(node.values[0])
            is_and = isinstance(node.op, ast.And)
            for nxt in node.values[1:]:
                if isinstance(acc, Const):
                    if bool(acc.value) != is_and:  # (decided: a false 'and', a true 'or')
                        return acc
                    acc = self.value(nxt)
                    continue
                t = self.truth(acc)
                b = self.value(nxt)
                acc = self._select(t, b, acc) if is_and else self._select(t, acc, b)
            return acc
        if isinstance(node, ast.UnaryOp):
            inner = self.value(node.operand)
            if isinstance(inner, Const):
                return Const(not inner.value if isinstance(node.op, ast.Not) else -inner.value)
            if isinstance(node.op, ast.Not):
                p = self.truth(inner)
                q = self.p.pred()
                self.p.emit(f"not.pred {q}, {p};")
                return self._bool(q)
            return self._negate(inner)
        if isinstance(node, ast.IfExp):
            test = self.value(node.test)
            if isinstance(test, Const):
                return self.value(node.body if test.value else node.orelse)
            t = self.truth(test)
            return self._select(t, self.value(node.body), self.value(node.orelse))
        if isinstance(node, ast.BinOp):
            return self._binop(type(node.op), self.value(node.left), self.value(node.right))
        if isinstance(node, ast.Compare):
            v = self._compare(node)
            assert not isinstance(v, str)  # (a flag register only where asked for)
            return v
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            args = [self.value(a) for a in node.args]
            if node.func.id in ("min", "max"):
                (al, ah), (bl, bh) = self._bounds(args[0]), self._bounds(args[1])
                pick = min if node.func.id == "min" else max
                lo, hi = pick(al, bl), pick(ah, bh)
                t = self._reading((al, ah), (bl, bh))
                width = int(t[1:])
                r = self._new(width)
                self.p.emit(f"{node.func.id}.{t} {r}, {self._first(args[0], width)}, {self._src(args[1], width)};")
                return Reg(r, "int", False, None, lo, hi, width)
            if node.func.id == "ceil_div":  # -(-a // b)
                return self._negate(self._binop(ast.FloorDiv, self._negate(args[0]), args[1]))
        raise Unsupported(f"{ast.unparse(node)} reads a wide run-time value where only a table can answer")

    def _negate(self, v: Val) -> Val:
        if isinstance(v, Const):
            return Const(-v.value)
        v = self.reg_of(v)
        lo, hi = -v.hi, -v.lo
        width = 32 if S32[0] <= lo and hi <= S32[1] and fits32(v.lo, v.hi) else 64
        r = self._new(width)
        self.p.emit(f"neg.s{width} {r}, {self._src(v, width)};")
        return Reg(r, "int", False, None, lo, hi, width)

    def _binop(self, op: type, left: Val, right: Val) -> Val:
        if isinstance(left, Const) and isinstance(right, Const):
            return Const(_evaluate(ast.BinOp(ast.Constant(left.value), op(), ast.Constant(right.value)), {}, {}))
        simple = {ast.Add: "add.s", ast.Sub: "sub.s", ast.Mult: "mul.lo.s", ast.BitAnd: "and.b", ast.BitOr: "or.b"}
        if isinstance(left, Const) and op in (ast.Add, ast.Mult, ast.BitAnd, ast.BitOr):
            left, right = right, left  # (commutative: the constant second)
        if isinstance(left, Bits) or isinstance(right, Bits):
            bits = moved(op, left, right)
            if bits is not None:
                return bits
            left, right = (self._made_of(v) if isinstance(v, Bits) else v for v in (left, right))
        if op in (ast.Add, ast.Sub) and isinstance(left, Reg) and left.name in self._sums \
                and isinstance(right, Const) and type(right.value) is int:  # ((x + a) + b: x + (a + b))
            base, c = self._sums[left.name]
            return self._binop(ast.Add, base, Const(c + (right.value if op is ast.Add else -right.value)))
        a, b = self._bounds(left), self._bounds(right)
        if op in simple:  # (the low 32 bits of the result are the operands' low 32 bits')
            lo, hi = interval(op, a, b)
            width = 32 if fits32(lo, hi) else 64
            r = self._new(width)
            self.p.emit(f"{simple[op]}{width} {r}, {self._first(left, width)}, {self._src(right, width)};")
            if op in (ast.Add, ast.Sub) and isinstance(right, Const) and type(right.value) is int:
                self._sums[r] = (left, right.value if op is ast.Add else -right.value)
            return Reg(r, "int", False, None, lo, hi, width)
        power = isinstance(right, Const) and isinstance(right.value, int) and right.value > 0 \
            and right.value & (right.value - 1) == 0
        if op is ast.Mod and power:  # (Python's remainder by a power of two: the low bits, exactly)
            assert isinstance(right, Const)
            width = 32 if fits32(*a) else 64
            r = self._new(width)
            self.p.emit(f"and.b{width} {r}, {self._first(left, width)}, {right.value - 1};")
            return Reg(r, "int", False, None, 0, right.value - 1, width)
        if op is ast.FloorDiv and power:
            assert isinstance(right, Const)
            op, right = ast.RShift, Const(right.value.bit_length() - 1)
        if op in (ast.RShift, ast.LShift):
            if isinstance(right, Const):
                n = min(int(right.value), 64)
                if op is ast.LShift:
                    lo, hi = interval(ast.Mult, a, (1 << n, 1 << n))
                    width = 32 if fits32(lo, hi) and n < 32 else 64
                    mnemonic = f"shl.b{width}"
                else:
                    lo, hi = a[0] >> n, a[1] >> n
                    width = 32 if fits32(*a) and n < 32 else 64
                    mnemonic = f"shr.{'u' if a[0] >= 0 and width == 32 else 's'}{width}"
                r = self._new(width)
                self.p.emit(f"{mnemonic} {r}, {self._first(left, width)}, {n};")
                return Reg(r, "int", False, None, lo, hi, width)
            clamped, n32 = self.p.reg(), self.p.reg32()
            self.p.emit(f"min.u64 {clamped}, {self._src(right, 64)}, 64;")  # (64 or more: all sign bits, or 0)
            self.p.emit(f"cvt.u32.u64 {n32}, {clamped};")
            r = self.p.reg()
            self.p.emit(f"{'shr.s64' if op is ast.RShift else 'shl.b64'} {r}, {self._first(left, 64)}, {n32};")
            lo, hi = (min(a[0], 0), max(a[1], 0)) if op is ast.RShift else ANY
            return Reg(r, "int", False, None, lo, hi)
        if op in (ast.FloorDiv, ast.Mod):  # Python's: the quotient rounded down, the remainder of b's sign
            x, t = self._first(left, 64), self.p.reg()
            q, m, r = self.p.reg(), self.p.reg(), self.p.reg()
            zero, fix = self.p.pred(), self.p.pred()
            self.p.emit(f"setp.eq.s64 {zero}, {self._src(right, 64)}, 0;")
            self.p.emit(f"selp.b64 {t}, 1, {self._src(right, 64)}, {zero};")  # (no division by zero: a guard decides)
            self.p.emit(f"div.s64 {q}, {x}, {t};")
            self.p.emit(f"rem.s64 {m}, {x}, {t};")
            s = self.p.reg()
            self.p.emit(f"xor.b64 {s}, {m}, {t};")
            self.p.emit(f"setp.lt.s64 {fix}, {s}, 0;")
            self.p.emit(f"setp.ne.and.s64 {fix}, {m}, 0, {fix};")
            self.p.emit(f"@{fix} sub.s64 {q}, {q}, 1;")
            self.p.emit(f"@{fix} add.s64 {m}, {m}, {t};")
            self.p.emit(f"mov.b64 {r}, {q if op is ast.FloorDiv else m};")
            return Reg(r, "int", False)
        raise Unsupported(f"operator {op.__name__}")

    def _compare(self, node: ast.Compare, flag: bool = False) -> Val | str:
        """``node``'s value (``flag``: where it can be, as :meth:`condition_word` says, a 32-bit flag
        register instead)."""
        op, left, right = node.ops[0], node.left, node.comparators[0]
        if len(node.ops) != 1:
            raise Unsupported("a chained comparison")
        a = self.value(left)
        if isinstance(op, (ast.Is, ast.IsNot)):
            if not isinstance(a, Reg) or not a.maybe_none:
                is_none = isinstance(a, Const) and a.value is None
                return Const(is_none == isinstance(op, ast.Is))
            p = self.p.pred()
            self.p.emit(f"setp.{'eq' if isinstance(op, ast.Is) else 'ne'}.s64 {p}, {a.name}, {imm(NONE)};")
            return self._bool(p)
        if isinstance(op, (ast.In, ast.NotIn)):
            if not isinstance(right, ast.Tuple) or self.leaves(right):
                raise Unsupported(f"{ast.unparse(node)}: membership in a run-time set")
            values = [_evaluate(e, self.static, {}) for e in right.elts]
            if isinstance(a, Const):
                return Const((a.value in values) == isinstance(op, ast.In))
            a = self.reg_of(a)
            p = self.p.pred()
            codes = [_repr(v, self.p)[0] for v in values] or [NONE + 1]
            t = self._reading((a.lo, a.hi), (min(codes), max(codes)))
            x = self._src(a, int(t[1:]))
            written = imm if t == "s64" else imm32
            self.p.emit(f"setp.eq.{t} {p}, {x}, {written(codes[0])};")
            for code in codes[1:]:
                self.p.emit(f"setp.eq.or.{t} {p}, {x}, {written(code)}, {p};")
            if isinstance(op, ast.NotIn):
                self.p.emit(f"not.pred {p}, {p};")
            return self._bool(p)
        b = self.value(right)
        if isinstance(a, Const) and isinstance(b, Const):
            return Const(_evaluate(ast.Compare(ast.Constant(a.value), [op], [ast.Constant(b.value)]), {}, {}))
        flip = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE}
        if isinstance(a, Const):
            a, b, op = b, a, flip.get(type(op), type(op))()
        if isinstance(a, Bits) and isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(b, Const) and b.value == 0 \
                and type(b.value) is int:
            t = self.truth(a)
            if isinstance(op, ast.Eq):
                q = self.p.pred()
                self.p.emit(f"not.pred {q}, {t};")
                t = q
            return self._bool(t)
        a = self.reg_of(a)
        against = self._against_special(a, op, b, flag)
        if against is not None:
            return against
        cmp = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}[type(op)]
        t = self._reading((a.lo, a.hi), self._bounds(b))
        width = int(t[1:])
        p = self.p.pred()
        self.p.emit(f"setp.{cmp}.{t} {p}, {self._src(a, width)}, {self._src(b, width)};")
        return self._bool(p)

    def _against_special(self, a: Reg, op: ast.cmpop, b: Val, flag: bool = False) -> Val | str | None:
        """``a = (x << n) + c`` against a special register ``S`` read at the function's entry
        (``a >= S``, ``a > S`` and their negations): ``x`` against ``ceil(max(S - c, 0) / 2**n)``
        (``c - 1`` for ``>``), computed at the entry once (:meth:`Program.threshold`), for ``x >= 0``
        (bits of a register, or any register that is never negative; ``n = 0`` where it is not
        shifted); None otherwise. Exact: ``a`` is computed with no overflow (its range fits its
        register), so ``x * 2**n + c >= S`` is ``x >= (S - c) / 2**n``, rounded up. With ``flag``,
        the comparison is a 32-bit flag register: the sign bit of ``t - 1 - x`` (``x >= t``) or of
        ``x - t`` (``x < t``), where both lie in ``0 .. 2**31 - 1`` (no overflow; no predicate
        between the word and the flags it is or-ed with)."""
        if not isinstance(b, Reg) or b.name not in self.p.specials.values() or b.width != 32 \
                or not isinstance(op, (ast.GtE, ast.Gt, ast.Lt, ast.LtE)):
            return None
        base, c = self._sums.get(a.name, (a, 0))
        if not isinstance(base, Reg) or base.lo < 0 or base.width != 32:
            return None
        x, n = self._shifted.get(base.name, (base.name, 0))
        ge = isinstance(op, (ast.GtE, ast.Lt))  # (a >= S, or its negation a < S)
        t = self.p.threshold(b.name, c if ge else c - 1, n)  # (a > S: a - 1 >= S)
        if t is None:
            return None
        at_least = isinstance(op, (ast.GtE, ast.Gt))
        if flag and base.hi >> n < 1 << 31:  # (t < 2**31 too: (S - c) / 2**n with S a 32-bit size)
            d = self.p.reg32()
            self.p.emit(f"sub.s32 {d}, {t}, {x};" if at_least else f"sub.s32 {d}, {x}, {t};")
            if at_least:
                self.p.emit(f"sub.s32 {d}, {d}, 1;")
            return self.p.masked(d, 1 << 31)
        p = self.p.pred()
        self.p.emit(f"setp.{'ge' if at_least else 'lt'}.u32 {p}, {x}, {t};")
        return self._bool(p)

    # -- a whole condition

    def condition(self, node: ast.expr) -> str | bool:
        """A predicate register for ``node``'s truth, or a bool when it is decided here."""
        v = self.value(node)
        if isinstance(v, Const):
            return bool(v.value)
        return self.truth(v)

    def condition_word(self, node: ast.expr) -> str | bool:
        """A 32-bit register nonzero exactly where ``node`` is true, or a bool when it is decided
        here (a flag: ``or``-ed with others, one comparison decides whether any is true)."""
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) \
                and all(isinstance(c := self.value(e), Const) and c.value for e in node.values[:-1]):
            return self.condition_word(node.values[-1])  # (``smem_size is not None and ...``, the size known)
        v = self._compare(node, flag=True) if isinstance(node, ast.Compare) else self.value(node)
        if isinstance(v, str):
            return v
        if isinstance(v, Const):
            return bool(v.value)
        if isinstance(v, Bits) and v.mask << v.lo < 1 << 32:
            return self.p.masked(v.src, v.mask << v.lo)
        if isinstance(v, Reg) and not v.maybe_none and v.width == 32:
            return v.name  # (a 0/1 truth, a number whose truth is not 0, a name's id: never 0)
        t = self.p.reg32()
        self.p.emit(f"selp.b32 {t}, 1, 0, {self.truth(v)};")
        return t

    def value_register(self, node: ast.expr) -> str:
        """A 64-bit register holding ``node``'s value as a finding reports it (names by id)."""
        v = self.reg_of(self.value(node))
        return v.name if v.width == 64 else self._src(v, 64)


#: Each folded subtree's values, per the subtree, the static facts and the run-time fields.
_FOLDS: Memo[tuple[tuple[Any, ...], frozenset[str]] | None] = Memo("PTX back end: folded subtrees", 1 << 12)


def _freeze(value: Any) -> Any:
    if isinstance(value, Mapping):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    return value
