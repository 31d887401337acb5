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
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ..core.memo import Memo
from ..model.engine import check_raw, plan
from ..rules.checks import RunTimeValue, python_namespace
from ..rules.language import python_expression

__all__ = ["NONE", "FOLD_BITS", "Unsupported", "RawField", "Dynamic", "Program", "Site", "field_of", "raw_field_checks"]

#: None as a 64-bit value (no fact, no table entry).
NONE = -(1 << 63)
#: The most raw bits of run-time fields a subtree may read to be folded into a constant table (a
#: true/false subtree: one bit per value, 512 bytes at most); a subtree of other values, one
#: 64-bit entry per value, takes at most :data:`FOLD_VALUE_BITS` (2 KiB).
FOLD_BITS = 12
FOLD_VALUE_BITS = 8


class Unsupported(Exception):
    """A check the PTX back end cannot compile at this site (the reason is the message)."""


@dataclass(frozen=True)
class RawField:
    """A field of a word held in a register: its bits ``lo .. lo + width - 1`` of ``reg``
    (``reg_width`` 32 or 64 bits), of layout ``layout`` read under ``kind``."""

    reg: str
    reg_width: int
    layout: str
    kind: str | None
    name: str
    lo: int
    width: int


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


# --------------------------------------------------------------------------------------------
# Values while compiling: a constant, or a register with what it holds.


@dataclass(frozen=True)
class _Const:
    value: Any


@dataclass(frozen=True)
class _Reg:
    name: str
    kind: str  # "int" (None: NONE), "name" (an id, None: NONE), "bool" (0 or 1)
    maybe_none: bool = True  # False: never None (a field, a special register, arithmetic, a comparison)
    pred: str | None = None  # a predicate already holding its truth (a comparison's)


_Val = _Const | _Reg


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


# --------------------------------------------------------------------------------------------
# A program: the code of one site, with its registers and constant tables.


@dataclass
class Program:
    """PTX being written for one site: its lines, the registers it declares (``prefix`` + number:
    64-bit ``%<prefix>r<N>``, predicates ``%<prefix>p<N>``), the constant tables it reads (by name:
    the values) and the names it numbers (name -> id >= 1)."""

    prefix: str
    pool: dict[tuple[int, ...], str] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    regs: int = 0
    words: int = 0
    preds: int = 0
    tables: dict[str, tuple[int, ...]] = field(default_factory=dict)
    names: dict[str, int] = field(default_factory=dict)
    _raw: dict[tuple[str, int, int], str] = field(default_factory=dict)

    def reg(self) -> str:
        self.regs += 1
        return f"%{self.prefix}r{self.regs - 1}"

    def reg32(self) -> str:
        self.words += 1
        return f"%{self.prefix}w{self.words - 1}"

    def pred(self) -> str:
        self.preds += 1
        return f"%{self.prefix}p{self.preds - 1}"

    def emit(self, line: str) -> None:
        self.lines.append(line)

    def name_id(self, name: str) -> int:
        return self.names.setdefault(name, len(self.names) + 1)

    def raw(self, f: RawField) -> str:
        """A register holding ``f``'s raw bits (read once per site)."""
        key = (f.reg, f.lo, f.width)
        if key not in self._raw:
            r = self.reg()
            src = f.reg
            if f.reg_width == 32:
                self.emit(f"cvt.u64.u32 {r}, {src};")
                src = r
            self.emit(f"bfe.u64 {r}, {src}, {f.lo}, {f.width};")
            self._raw[key] = r
        return self._raw[key]

    def table(self, values: tuple[int, ...]) -> str:
        """The module-level constant table holding ``values``: one per distinct content in the
        module (``pool``, shared by the sites; ``tables`` lists the ones this site adds)."""
        name = self.pool.get(values)
        if name is None:
            name = self.pool[values] = f"descgen_t{len(self.pool)}"
            self.tables[name] = values
        return name

    def bit_of(self, words: tuple[int, ...], index: str) -> str:
        """A register holding bit ``index`` of the bit string ``words`` (64 bits each, the first
        lowest): an immediate for one word, else a constant table."""
        r, n = self.reg(), self.reg32()
        if len(words) == 1:
            self.emit(f"mov.b64 {r}, {_imm(words[0])};")
        else:
            a = self.reg()
            self.emit(f"shr.u64 {r}, {index}, 6;")
            self.emit(f"mov.u64 {a}, {self.table(words)};")
            self.emit(f"mad.lo.u64 {a}, {r}, 8, {a};")
            self.emit(f"ld.const.u64 {r}, [{a}];")
        self.emit(f"cvt.u32.u64 {n}, {index};")
        self.emit(f"and.b32 {n}, {n}, 63;")
        self.emit(f"shr.u64 {r}, {r}, {n};")
        self.emit(f"and.b64 {r}, {r}, 1;")
        return r

    def declarations(self) -> list[str]:
        out = []
        if self.regs:
            out.append(f".reg .b64 %{self.prefix}r<{self.regs}>;")
        if self.words:
            out.append(f".reg .b32 %{self.prefix}w<{self.words}>;")
        if self.preds:
            out.append(f".reg .pred %{self.prefix}p<{self.preds}>;")
        return out


def _imm(value: int) -> str:
    return str(value) if value >= 0 else f"{value & ((1 << 64) - 1):#x}"


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
    instruction rule's ``idesc.atype``), into ``program``."""

    def __init__(self, static: Mapping[str, Any], dynamic: Mapping[Any, Dynamic], program: Program) -> None:
        self.static = static
        self.dynamic = dynamic
        self.p = program
        self._leaves: dict[int, frozenset[Any]] = {}
        self._values: dict[str, _Val] = {}
        self._static_key: Any = None

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

    def value(self, node: ast.expr) -> _Val:
        """``node``'s value: a constant, or a register the code so far computes (every value is
        computed unconditionally, so one seen before is reused)."""
        memo = ast.dump(node)
        hit = self._values.get(memo)
        if hit is None:
            hit = self._values[memo] = self._value(node)
        return hit

    def _value(self, node: ast.expr) -> _Val:
        keys = self.leaves(node)
        if not keys:
            try:
                return _Const(_evaluate(node, self.static, {}))
            except (TypeError, ArithmeticError):  # (Python would raise: a guard keeps the check from reading it)
                return _Const(None)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "known":
            return self.value(node.args[0])
        fields = tuple(dict.fromkeys(f for k in sorted(keys, key=repr) for f in self.dynamic[k].fields))
        key = self._key(node)
        if key is not None and self.dynamic[key].special is not None:
            r, w = self.p.reg(), self.p.reg32()
            self.p.emit(f"mov.u32 {w}, {self.dynamic[key].special};")
            self.p.emit(f"cvt.u64.u32 {r}, {w};")
            return _Reg(r, "int", False)
        if key is not None and self.dynamic[key].shift is not None:
            r = self.p.reg()
            self.p.emit(f"shl.b64 {r}, {self.p.raw(fields[0])}, {self.dynamic[key].shift};")
            return _Reg(r, "int", False)
        if sum(f.width for f in fields) <= FOLD_BITS and not any(self.dynamic[k].special for k in keys):
            folded = self._fold(node, keys, fields)
            if folded is not None:
                return folded
        return self._native(node)

    def _fold(self, node: ast.expr, keys: frozenset[Any], fields: tuple[RawField, ...]) -> _Val | None:
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
            return _Const(outs[0])
        if not set(results) <= {0, 1} and sum(f.width for f in fields) > FOLD_VALUE_BITS:
            return None
        index = self._index(fields)
        r = self.p.reg()
        if set(results) <= {0, 1} and not none:
            words = [0] * max(1, len(results) // 64)
            for i, bit in enumerate(results):
                words[i >> 6] |= bit << (i & 63)
            return _Reg(self.p.bit_of(tuple(words), index), "bool" if kind == "bool" else kind, False)
        name = self.p.table(tuple(results))
        self.p.emit(f"mov.u64 {r}, {name};")
        self.p.emit(f"mad.lo.u64 {r}, {index}, 8, {r};")
        self.p.emit(f"ld.const.u64 {r}, [{r}];")
        return _Reg(r, kind, none)

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
        """A register holding the raw bits of ``fields`` side by side (the first lowest)."""
        if not fields:
            return "0"
        index = self.p.raw(fields[0])
        shift = fields[0].width
        for f in fields[1:]:
            r = self.p.reg()
            self.p.emit(f"shl.b64 {r}, {self.p.raw(f)}, {shift};")
            self.p.emit(f"or.b64 {r}, {r}, {index};")
            index, shift = r, shift + f.width
        return index

    def _const(self, value: int) -> str:
        r = self.p.reg()
        self.p.emit(f"mov.b64 {r}, {_imm(value)};")
        return r

    def reg_of(self, v: _Val) -> _Reg:
        """``v`` in a register."""
        if isinstance(v, _Reg):
            return v
        code, kind = _repr(v.value, self.p)
        return _Reg(self._const(code), kind, v.value is None)

    def operand(self, v: _Val) -> str:
        """``v`` as an instruction's operand: an immediate for a constant, else its register."""
        return _imm(_repr(v.value, self.p)[0]) if isinstance(v, _Const) else v.name

    def truth(self, v: _Val) -> str:
        """A predicate: ``v`` is true (Python's truth: neither 0 nor None; a name is true)."""
        v = self.reg_of(v)
        if v.pred is not None:
            return v.pred
        p = self.p.pred()
        if v.kind == "name":
            self.p.emit(f"setp.ne.s64 {p}, {v.name}, {_imm(NONE)};")
        elif v.kind == "bool" or not v.maybe_none:
            self.p.emit(f"setp.ne.s64 {p}, {v.name}, 0;")
        else:
            q = self.p.pred()
            self.p.emit(f"setp.ne.s64 {q}, {v.name}, 0;")
            self.p.emit(f"setp.ne.and.s64 {p}, {v.name}, {_imm(NONE)}, {q};")
        return p

    def _bool(self, p: str) -> _Reg:
        r = self.p.reg()
        self.p.emit(f"selp.b64 {r}, 1, 0, {p};")  # (ptxas drops it where only the predicate is read)
        return _Reg(r, "bool", False, p)

    def _select(self, t: str, a: _Val, b: _Val) -> _Val:
        """``a`` where predicate ``t`` holds, else ``b``."""
        if isinstance(a, _Const) and isinstance(b, _Const) and a.value == b.value:
            return a
        kind_a = _repr(a.value, self.p)[1] if isinstance(a, _Const) else a.kind
        kind_b = _repr(b.value, self.p)[1] if isinstance(b, _Const) else b.kind
        none = any(v.value is None if isinstance(v, _Const) else v.maybe_none for v in (a, b))
        r = self.p.reg()
        self.p.emit(f"selp.b64 {r}, {self.operand(a)}, {self.operand(b)}, {t};")
        return _Reg(r, kind_a if kind_a == kind_b else "int", none)

    def _native(self, node: ast.expr) -> _Val:
        if isinstance(node, ast.BoolOp):
            acc = self.value(node.values[0])
            is_and = isinstance(node.op, ast.And)
            for nxt in node.values[1:]:
                if isinstance(acc, _Const):
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
            if isinstance(inner, _Const):
                return _Const(not inner.value if isinstance(node.op, ast.Not) else -inner.value)
            if isinstance(node.op, ast.Not):
                p = self.truth(inner)
                q = self.p.pred()
                self.p.emit(f"not.pred {q}, {p};")
                return self._bool(q)
            r = self.p.reg()
            self.p.emit(f"neg.s64 {r}, {inner.name};")
            return _Reg(r, "int", False)
        if isinstance(node, ast.IfExp):
            test = self.value(node.test)
            if isinstance(test, _Const):
                return self.value(node.body if test.value else node.orelse)
            t = self.truth(test)
            return self._select(t, self.value(node.body), self.value(node.orelse))
        if isinstance(node, ast.BinOp):
            return self._binop(type(node.op), self.value(node.left), self.value(node.right))
        if isinstance(node, ast.Compare):
            return self._compare(node)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            args = [self.value(a) for a in node.args]
            if node.func.id in ("min", "max"):
                r = self.p.reg()
                self.p.emit(f"{node.func.id}.s64 {r}, {self.reg_of(args[0]).name}, {self.operand(args[1])};")
                return _Reg(r, "int", False)
            if node.func.id == "ceil_div":  # -(-a // b)
                r = self.p.reg()
                self.p.emit(f"neg.s64 {r}, {self.reg_of(args[0]).name};")
                quotient = self._binop(ast.FloorDiv, _Reg(r, "int", False), args[1])
                out = self.p.reg()
                self.p.emit(f"neg.s64 {out}, {self.reg_of(quotient).name};")
                return _Reg(out, "int", False)
        raise Unsupported(f"{ast.unparse(node)} reads a wide run-time value where only a table can answer")

    def _binop(self, op: type, left: _Val, right: _Val) -> _Val:
        if isinstance(left, _Const) and isinstance(right, _Const):
            return _Const(_evaluate(ast.BinOp(ast.Constant(left.value), op(), ast.Constant(right.value)), {}, {}))
        r = self.p.reg()
        simple = {ast.Add: "add.s64", ast.Sub: "sub.s64", ast.Mult: "mul.lo.s64", ast.BitAnd: "and.b64",
                  ast.BitOr: "or.b64"}
        if isinstance(left, _Const) and op in (ast.Add, ast.Mult, ast.BitAnd, ast.BitOr):
            left, right = right, left  # (commutative: the constant second)
        a = self.reg_of(left).name
        if op in simple:
            self.p.emit(f"{simple[op]} {r}, {a}, {self.operand(right)};")
            return _Reg(r, "int", False)
        if op in (ast.RShift, ast.LShift):
            if isinstance(right, _Const):
                n = str(min(int(right.value), 64))
            else:
                c, n = self.p.reg(), self.p.reg32()
                self.p.emit(f"min.u64 {c}, {right.name}, 64;")  # (a shift of 64 or more: all sign bits, or 0)
                self.p.emit(f"cvt.u32.u64 {n}, {c};")
            self.p.emit(f"{'shr.s64' if op is ast.RShift else 'shl.b64'} {r}, {a}, {n};")
            return _Reg(r, "int", False)
        if op in (ast.FloorDiv, ast.Mod):  # Python's: the quotient rounded down, the remainder of b's sign
            if isinstance(right, _Const) and isinstance(right.value, int) and right.value > 0 \
                    and right.value & (right.value - 1) == 0:  # (a power of two: the bits, exactly)
                d = right.value
                self.p.emit(f"shr.s64 {r}, {a}, {d.bit_length() - 1};" if op is ast.FloorDiv
                            else f"and.b64 {r}, {a}, {d - 1};")
                return _Reg(r, "int", False)
            b = self.reg_of(right).name
            q, m = self.p.reg(), self.p.reg()
            zero, fix, t = self.p.pred(), self.p.pred(), self.p.reg()
            self.p.emit(f"setp.eq.s64 {zero}, {b}, 0;")
            self.p.emit(f"selp.b64 {t}, 1, {b}, {zero};")  # (no division by zero: a guard decides)
            self.p.emit(f"div.s64 {q}, {a}, {t};")
            self.p.emit(f"rem.s64 {m}, {a}, {t};")
            x = self.p.reg()
            self.p.emit(f"xor.b64 {x}, {m}, {t};")
            self.p.emit(f"setp.lt.s64 {fix}, {x}, 0;")
            self.p.emit(f"setp.ne.and.s64 {fix}, {m}, 0, {fix};")
            self.p.emit(f"@{fix} sub.s64 {q}, {q}, 1;")
            self.p.emit(f"@{fix} add.s64 {m}, {m}, {t};")
            self.p.emit(f"mov.b64 {r}, {q if op is ast.FloorDiv else m};")
            return _Reg(r, "int", False)
        raise Unsupported(f"operator {op.__name__}")

    def _compare(self, node: ast.Compare) -> _Val:
        op, left, right = node.ops[0], node.left, node.comparators[0]
        if len(node.ops) != 1:
            raise Unsupported("a chained comparison")
        a = self.value(left)
        if isinstance(op, (ast.Is, ast.IsNot)):
            if isinstance(a, _Const) or not a.maybe_none:
                is_none = isinstance(a, _Const) and a.value is None
                return _Const(is_none == isinstance(op, ast.Is))
            p = self.p.pred()
            self.p.emit(f"setp.{'eq' if isinstance(op, ast.Is) else 'ne'}.s64 {p}, {a.name}, {_imm(NONE)};")
            return self._bool(p)
        if isinstance(op, (ast.In, ast.NotIn)):
            if not isinstance(right, ast.Tuple) or self.leaves(right):
                raise Unsupported(f"{ast.unparse(node)}: membership in a run-time set")
            values = [_evaluate(e, self.static, {}) for e in right.elts]
            if isinstance(a, _Const):
                return _Const((a.value in values) == isinstance(op, ast.In))
            p = self.p.pred()
            codes = [_repr(v, self.p)[0] for v in values] or [NONE + 1]
            self.p.emit(f"setp.eq.s64 {p}, {a.name}, {_imm(codes[0])};")
            for code in codes[1:]:
                self.p.emit(f"setp.eq.or.s64 {p}, {a.name}, {_imm(code)}, {p};")
            if isinstance(op, ast.NotIn):
                self.p.emit(f"not.pred {p}, {p};")
            return self._bool(p)
        b = self.value(right)
        if isinstance(a, _Const) and isinstance(b, _Const):
            return _Const(_evaluate(ast.Compare(ast.Constant(a.value), [op], [ast.Constant(b.value)]), {}, {}))
        flip = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE}
        if isinstance(a, _Const):
            a, b, op = b, a, flip.get(type(op), type(op))()
        cmp = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}[type(op)]
        p = self.p.pred()
        assert isinstance(a, _Reg)
        self.p.emit(f"setp.{cmp}.s64 {p}, {a.name}, {self.operand(b)};")
        return self._bool(p)

    # -- a whole condition

    def condition(self, node: ast.expr) -> str | bool:
        """A predicate register for ``node``'s truth, or a bool when it is decided here."""
        v = self.value(node)
        if isinstance(v, _Const):
            return bool(v.value)
        return self.truth(v)

    def value_register(self, node: ast.expr) -> str:
        """A register holding ``node``'s value as a finding reports it (names by id)."""
        return self.reg_of(self.value(node)).name


#: Each folded subtree's values, per the subtree, the static facts and the run-time fields.
_FOLDS: Memo[tuple[tuple[Any, ...], frozenset[str]] | None] = Memo("PTX back end: folded subtrees", 1 << 12)


def _freeze(value: Any) -> Any:
    if isinstance(value, Mapping):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    return value
