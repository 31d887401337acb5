"""What a function's registers hold at each instruction: a control-flow graph per PTX function,
the definitions that reach each use, and two abstract domains (known bits and value ranges)
iterated to a fixed point (E38, E42).

A :class:`Function` is filled statement by statement by the scanner (:meth:`Function.statement`,
:meth:`Function.label`, :meth:`Function.open_scope` / :meth:`Function.close_scope`,
:meth:`Function.declare`), then asked for the values of some operands (:meth:`Function.solve`).

- **Names in scope.** A register is resolved when its statement is read, to the innermost
  declaration in scope (``{ .reg .b64 d<8>; ... }`` declares ``d0``..``d7`` there; an inner
  declaration shadows an outer one of the same name and ends with its braces). ``%``-names not
  declared in an inner scope are the function's. Labels resolve the same way (inline-asm blocks
  repeat ``DONE:`` in every scope). ``_`` is PTX's sink: it names no register.
- **Control flow.** Basic blocks end at a label or after ``bra``, ``brx.idx``, ``ret``, ``exit``,
  ``trap``; a predicated branch also falls through; ``brx.idx`` may reach every label.
- **Reaching definitions.** Each statement that writes a register is a definition; a
  predicated one may not run, so it does not kill the definitions before it. A use gets the
  definitions that reach it along some path (a register read before any definition on some path
  is unknown there).
- **Values.** A definition's :class:`Value` is its opcode's transfer function over its operands'
  values; an operand's value is the join of the values of the definitions reaching it. Known bits
  (:mod:`descgen.ptx.knownbits`) have finite height and need no widening; ranges
  (:mod:`descgen.ptx.ranges`) are widened to what the known bits allow after a few changes. The
  two refine each other after every step.
- **Leaves** (unknown, with why): kernel parameters, loads, special registers (with their
  architectural bounds: ``%laneid`` < 32, ``%tid.x`` < 1024...), shared memory symbols (aligned
  as declared, below 2**18: E38), every instruction not modelled.
- **Refinement.** ``selp a, b, p`` where ``p`` is set by a ``setp`` comparing ``a`` or ``b`` in the
  same block, with no redefinition between: each side gets the range the comparison allows
  (``selp 0, s + 1, (s + 1 == 8)``: the counter stays in ``[0, 7]``).
- **Uniform values.** ``shfl.sync`` with the full member mask returns another lane's value of the
  same register at the same instruction (every lane must execute it, PTX ISA §9.7.9.6): what is
  known on every lane is known of the result.
- **Immediates** (E48). An integer literal is read as ptxas 13.0 reads it: modulo 2**64, then cut
  to the operand's width (``mov.b32 %r1, 0x999912345678`` writes ``0x12345678``; a vector part, a
  shift amount, a ``cvt`` source alike). Each literal that did not fit its operand, and each one
  ptxas rejects (a literal past its 64-bit reading, a ``bfe``/``bfi`` position or length outside
  0..255: no value), is listed in :attr:`Function.immediates` after :meth:`Function.solve`.

Soundness: every known bit and every range holds on every execution that reaches the use
(``tests/test_scan_soundness.py`` runs a concrete interpreter over the corpus with random leaves).
Nothing here prints or raises on odd PTX: an operand that cannot be read is unknown.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from ..engine import KnownBits
from . import ranges as R
from .knownbits import (kb_add, kb_and, kb_bfe, kb_bfi, kb_concat, kb_const, kb_ext, kb_meet, kb_mul, kb_not, kb_or,
                        kb_prmt, kb_shl, kb_shr, kb_slice, kb_sub, kb_xor, mask_of)
from .lexer import Operand, first_operand, parse_int, parse_operand, split_operands

__all__ = ["Value", "Function", "Recorder", "Instr", "Immediate", "SHARED_LIMIT_BITS", "SPECIAL_RANGES", "is_special"]

#: E38: a shared memory symbol's address is below 2**18 (sm_100 has 228 KB of shared memory per
#: SM; shared-window addresses of a CTA are offsets into it), so its bits 18 and up are known 0.
SHARED_LIMIT_BITS = 18

#: Special registers with architectural bounds (PTX ISA §10; CUDA's limits: 1024 threads per
#: CTA, (1024, 1024, 64) per dimension, 2**31 - 1 / 65535 CTAs per grid dimension, 32 lanes, at
#: most 64 warps per SM, at most 16 CTAs per cluster). Inclusive (lo, hi).
SPECIAL_RANGES: dict[str, tuple[int, int]] = {
    "%laneid": (0, 31), "%warpid": (0, 63), "%nwarpid": (1, 64),
    "%tid.x": (0, 1023), "%tid.y": (0, 1023), "%tid.z": (0, 63),
    "%ntid.x": (1, 1024), "%ntid.y": (1, 1024), "%ntid.z": (1, 64),
    "%ctaid.x": (0, (1 << 31) - 2), "%ctaid.y": (0, 65534), "%ctaid.z": (0, 65534),
    "%nctaid.x": (1, (1 << 31) - 1), "%nctaid.y": (1, 65535), "%nctaid.z": (1, 65535),
    "%cluster_ctarank": (0, 15), "%cluster_nctarank": (1, 16),
    "%cluster_ctaid.x": (0, 15), "%cluster_ctaid.y": (0, 15), "%cluster_ctaid.z": (0, 15),
    "%cluster_nctaid.x": (1, 16), "%cluster_nctaid.y": (1, 16), "%cluster_nctaid.z": (1, 16),
}
_SPECIAL = ("%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpid", "%nwarpid", "%smid", "%nsmid", "%gridid",
            "%lanemask", "%clock", "%globaltimer", "%cluster", "%is_explicit_cluster", "%dynamic_smem_size",
            "%total_smem_size", "%aggr_smem_size", "%envreg", "%pm", "%reserved_smem", "%current_graph_exec")


def is_special(name: str) -> bool:
    """True for a special register (``%tid.x``, ``%laneid``, ``%clock64``...)."""
    return name[:1] == "%" and name.startswith(_SPECIAL)


@dataclass(frozen=True, slots=True)
class Value:
    """What is known about a register or operand at one point.

    Attributes:
        bits: the known bits (:class:`KnownBits`), ``width`` bits wide.
        width: the width in bits (1..64).
        range: the unsigned interval ``(lo, hi)`` every value lies in (inclusive).
        why: why the unknown bits are unknown (empty when every bit is known): short phrases such
            as ``"shared memory address"``, ``"kernel parameter"``, ``"loaded from memory"``,
            ``"loop-carried"``, ``"several definitions"``, ``"special register %tid.x"``.
        line: the line of the one definition that reaches (else None).
        origin: that definition's opcode (``mov.b32``), ``"immediate"``, or None.
    """

    bits: KnownBits
    width: int
    range: tuple[int, int]
    why: frozenset[str] = frozenset()
    line: int | None = None
    origin: str | None = None

    @property
    def full(self) -> bool:
        return self.bits.mask & mask_of(self.width) == mask_of(self.width)


@dataclass(frozen=True, slots=True)
class Immediate:
    """An integer immediate a solve read that ptxas does not take as written (E48).

    Attributes:
        line: the statement's line.
        opcode: its opcode (``mov.b32``).
        text: the literal (as written when ptxas rejects it, else in hex: ``0x999912345678``).
        width: the bits of the operand it is written for.
        word: the low ``width`` bits ptxas keeps (what the solve read), or None when ptxas rejects
            the statement.
        why: for a rejected one, ptxas's reason (``"Constant overflow"``...); else empty.
    """

    line: int
    opcode: str
    text: str
    width: int
    word: int | None
    why: str = ""


def _value(bits: KnownBits, width: int, rng: tuple[int, int] | None, why: frozenset[str] | set[str],
           line: int | None = None, origin: str | None = None) -> Value:
    """A value with its two domains refined by each other (the reduced product:
    :func:`~descgen.ptx.ranges.bits_of` and :func:`~descgen.ptx.ranges.of_bits`, written out here
    because every definition's value passes through it)."""
    m = (1 << width) - 1
    mask = bits.mask & m
    known = bits.value & mask
    if rng is None:  # the range the bits allow (what the general case below gives for the full range)
        return Value(KnownBits(known, mask), width, (known, known | (~mask & m)),
                     _NO_WHY if mask == m else frozenset(why), line, origin)
    lo, hi = rng
    if lo > m:
        lo = m
    if hi > m:
        hi = m
    shared = m & ~((1 << ((lo ^ hi) & m).bit_length()) - 1)  # the bits every value in [lo, hi] shares
    known |= lo & shared & ~mask
    mask |= shared
    # the range meets what the bits allow (an empty meet: keep the range)
    blo, bhi = known, known | (~mask & m)
    nlo = blo if blo > lo else lo
    nhi = bhi if bhi < hi else hi
    if nlo <= nhi:
        lo, hi = nlo, nhi
    if mask == m:
        return Value(KnownBits(known, mask), width, (lo, hi), _NO_WHY, line, origin)
    return Value(KnownBits(known, mask), width, (lo, hi), why if isinstance(why, frozenset) else frozenset(why),
                 line, origin)


_NO_WHY: frozenset[str] = frozenset()


@functools.lru_cache(maxsize=1024)
def _unknown(width: int, why: str, line: int | None = None, origin: str | None = None) -> Value:
    """Nothing known but ``why`` (cached: a Value is immutable, and few reasons recur)."""
    return Value(KnownBits(0, 0), width, R.full(width), frozenset((why,)), line, origin)


@functools.lru_cache(maxsize=4096)
def _const(n: int, width: int, origin: str | None = "immediate") -> Value:
    """The constant ``n`` as ``width`` bits (cached)."""
    return Value(kb_const(n, width), width, R.const(n, width), frozenset(), None, origin)


def _join(a: Value, b: Value) -> Value:
    width = max(a.width, b.width)
    return Value(kb_meet(a.bits, b.bits), width, R.join(a.range, b.range), a.why | b.why)


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


#: Opcodes whose first operand, when a register, is read, never written (``bar.sync %r``,
#: ``brx.idx %r, tbl``, ``nanosleep.u32 %r``); every other statement's first operand is its
#: destination when it is a register, a vector, a ``|`` pair or ``_`` (an address ``[...]`` is not).
_NO_DEST = frozenset(("bar", "barrier", "bra", "brx", "ret", "exit", "trap", "st", "red", "prefetch", "prefetchu",
                      "nanosleep", "fence", "membar", "griddepcontrol", "setmaxnreg", "pmevent", "stmatrix",
                      "discard", "applypriority"))
_CONTROL = {"bra": "jump", "brx": "any", "ret": "stop", "exit": "stop", "trap": "stop"}
_NEGATE = {"eq": "ne", "ne": "eq", "lt": "ge", "ge": "lt", "le": "gt", "gt": "le", "lo": "hs", "hs": "lo",
           "ls": "hi", "hi": "ls"}
_SWAP = {"eq": "eq", "ne": "ne", "lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "lo": "hi", "hi": "lo",
         "ls": "hs", "hs": "ls"}


class Instr:
    """One statement of a function, names resolved.

    Attributes:
        line: its first line in the file.
        guard: the key of its guard predicate (``@%p`` / ``@!%p``), or None.
        opcode: with every qualifier (``add.s32``, ``mov.b64``).
        dests: the register keys it writes, None for ``_`` (empty for none).
        srcs: its source operands, registers resolved to ``("reg", key)``. Read when first asked
            for: most statements are never in a descriptor's slice. A statement that names no
            register declared in an open scope resolves its names without those scopes, so
            parsing it later gives what parsing it at once would.
        flow: ``"fall"``, ``"jump"`` (``bra``), ``"any"`` (``brx.idx``), ``"stop"`` (``ret``...).
        target: a ``bra``'s label and the scope chain it was written in.
    """

    __slots__ = ("line", "guard", "opcode", "dests", "_srcs", "_rest", "_skip", "flow", "target")

    def __init__(self, line: int, guard: str | None, opcode: str, dests: tuple[str | None, ...],
                 srcs: tuple[Operand, ...] | None, rest: str = "", skip: int = 0, flow: str = "fall",
                 target: tuple[str, tuple[int, ...]] | None = None) -> None:
        self.line, self.guard, self.opcode, self.dests = line, guard, opcode, dests
        self._srcs, self._rest, self._skip = srcs, rest, skip
        self.flow, self.target = flow, target

    @property
    def srcs(self) -> tuple[Operand, ...]:
        if self._srcs is None:
            texts = split_operands(self._rest)[self._skip:]
            self._srcs = tuple(_resolved(parse_operand(t), _own_register) for t in texts)
        return self._srcs


def _dest_keys(op: Operand, resolve: Callable[[str], str | None]) -> tuple[str | None, ...]:
    """The register keys a destination operand writes, in order (None for ``_`` and for what is
    no register), names resolved by ``resolve``."""
    kind = op[0]
    if kind in ("vec", "pair"):
        return tuple(k for o in op[1] for k in _dest_keys(o, resolve))
    if kind == "name":
        return (resolve(str(op[1])),)
    return (None,)


@functools.lru_cache(maxsize=65536)
def _own_dests(op: Operand) -> tuple[str | None, ...]:
    """:func:`_dest_keys` where no scope declares names (most statements; cached)."""
    return _dest_keys(op, _own_register)


def _own_register(name: str) -> str | None:
    """A name's key where no scope declares names: a ``%``-name is the function's register."""
    return name if name[:1] == "%" and not name.startswith(_SPECIAL) else None


def _resolved(op: Operand, resolve: Callable[[str], str | None]) -> Operand:
    """``op`` with its names resolved: ``("reg", key)``, ``("special", name)`` or ``("sym",
    name, 0)``."""
    kind = op[0]
    if kind == "name":
        name = op[1]
        if is_special(name):
            return ("special", name)
        key = resolve(name)
        return ("reg", key) if key is not None else ("sym", name, 0)
    if kind in ("vec", "pair"):
        return (kind, tuple(_resolved(o, resolve) for o in op[1]))
    return op


class _Scope:
    __slots__ = ("id", "shadowed", "ranges")

    def __init__(self, sid: int) -> None:
        self.id = sid
        self.shadowed: list[tuple[str, str | None]] = []  # names declared here, with what they hid
        self.ranges = 0  # how many entries of Function._ranges this scope added


@dataclass
class Function:
    """The statements of one function (or of a fragment outside any), with their registers.

    ``shared`` maps a module's ``.shared`` symbol to its declared alignment in bytes (module-wide,
    shared with the scanner).
    """

    shared: dict[str, int] = field(default_factory=dict)
    instrs: list[Instr] = field(default_factory=list)
    labels: dict[tuple[int, str], int] = field(default_factory=dict)  # (scope id, label) -> instr index
    _scopes: list[_Scope] = field(default_factory=lambda: [_Scope(0)])
    _next_scope: int = 1
    _names: dict[str, str] = field(default_factory=dict)  # a declared name in scope -> its key
    _ranges: list[tuple[str, int, str]] = field(default_factory=list)  # name<count> in scope: prefix, count, suffix
    #: after :meth:`solve`: the immediates it read that ptxas cuts or rejects (E48), by line
    immediates: list[Immediate] = field(default_factory=list)

    # -- building ----------------------------------------------------------------------------

    def open_scope(self) -> None:
        """``{``: a new register and label scope."""
        self._scopes.append(_Scope(self._next_scope))
        self._next_scope += 1

    def close_scope(self) -> None:
        """``}``: its declarations end (the names they hid are visible again)."""
        if len(self._scopes) > 1:
            scope = self._scopes.pop()
            for name, old in reversed(scope.shadowed):
                if old is None:
                    self._names.pop(name, None)
                else:
                    self._names[name] = old
            if scope.ranges:
                del self._ranges[len(self._ranges) - scope.ranges:]

    @property
    def depth(self) -> int:
        """Open scopes inside the function's own (0 in the body)."""
        return len(self._scopes) - 1

    def declare(self, names: Iterable[tuple[str, int | None]], body_depth: int) -> None:
        """``.reg``: each ``(name, count)`` (``count`` for ``name<count>``). Declarations at depth
        ``body_depth`` (the function body) are the function's own registers; deeper ones are keyed
        by their scope and shadow outer ones."""
        scope = self._scopes[-1]
        inner = self.depth > body_depth
        suffix = f"'{scope.id}" if inner else ""
        for name, count in names:
            if not inner and name[:1] == "%":
                continue  # the function's own %-registers are their names
            if count is None:
                scope.shadowed.append((name, self._names.get(name)))
                self._names[name] = name + suffix
            else:
                self._ranges.append((name, count, suffix))
                scope.ranges += 1

    def resolve(self, name: str) -> str | None:
        """The key of a register name in scope, or None when it names no register (a label, a
        symbol). ``%``-names nobody declared are the function's own."""
        if not self._names and not self._ranges:
            return _own_register(name)
        key = self._names.get(name)
        if key is not None:
            return key
        for prefix, count, suffix in reversed(self._ranges):
            if name.startswith(prefix):
                digits = name[len(prefix):]
                if digits.isdigit() and (digits == "0" or digits[0] != "0") and int(digits) < count:
                    return name + suffix
        return _own_register(name)

    def label(self, name: str) -> None:
        """A label before the next statement, in the current scope."""
        scope = self._scopes[-1]
        self.labels[(scope.id, name)] = len(self.instrs)

    def statement(self, line: int, guard: str | None, opcode: str, rest: str) -> int:
        """Record ``[@guard] opcode rest``; returns its index. ``guard`` as written (``%p``,
        ``!%p``). Only the destinations are read now, and the sources where a scope declares
        names (see :class:`Instr`)."""
        base = opcode.split(".", 1)[0]
        gkey = None
        if guard is not None:
            g = guard.lstrip("@").lstrip("!")
            gkey = self.resolve(g) or g
        first = parse_operand(first_operand(rest)) if rest else None
        dests: tuple[str | None, ...] = ()
        skip = 0
        flow = _CONTROL.get(base, "fall")
        target = None
        srcs: tuple[Operand, ...] | None = None
        if base == "call":
            dests, srcs = self._call(rest), ()
        elif flow == "jump" and first is not None and first[0] == "name":
            target = (str(first[1]), tuple(s.id for s in reversed(self._scopes)))
            srcs = ()
        elif first is not None and base not in _NO_DEST and (base != "tcgen05" or opcode.startswith("tcgen05.ld")) \
                and first[0] in ("name", "vec", "pair", "sink"):
            dests = _own_dests(first) if not self._names and not self._ranges else _dest_keys(first, self.resolve)
            skip = 1
        if srcs is None and (self._names or self._ranges) and self._may_name_scoped(rest):
            # names declared in a scope: resolve them now, while it is open
            srcs = tuple(_resolved(parse_operand(t), self.resolve) for t in split_operands(rest)[skip:])
        self.instrs.append(Instr(line, gkey, opcode, dests, srcs, rest, skip, flow, target))
        return len(self.instrs) - 1

    def _may_name_scoped(self, text: str) -> bool:
        """Whether ``text`` may name a register declared in an open scope (a name or a range's
        prefix occurs in it as a substring; where none does, resolving later, without the scope,
        gives the same keys)."""
        return any(name in text for name in self._names) or any(r[0] in text for r in self._ranges)

    def _call(self, rest: str) -> tuple[str | None, ...]:
        """``call (%r1, %r2), f, (args);``: the return registers are written (unknown)."""
        m = re.match(r"\s*\(([^)]*)\)\s*,", rest)
        if not m:
            return ()
        return tuple(self.resolve(t.strip()) for t in m.group(1).split(",") if t.strip())

    def operand_of(self, text: str) -> Operand:
        """A source operand of a statement just recorded, resolved in the current scope."""
        return _resolved(parse_operand(text), self.resolve)

    # -- solving -----------------------------------------------------------------------------

    def solve(self, uses: Sequence[tuple[int, Operand, int]]) -> list[Value]:
        """The value of each ``(instruction index, operand, width)`` at that instruction; the
        immediates read on the way that ptxas cuts or rejects are left in :attr:`immediates`."""
        solver = _Solver(self)
        values = solver.run(uses)
        self.immediates = sorted(solver.immediates.values(), key=lambda m: (m.line, m.text, m.width))
        return values


class Recorder:
    """A function's building calls (:class:`Function`'s ``open_scope``, ``close_scope``,
    ``declare``, ``label``, ``statement``), kept as they come, for a function that may never be
    analysed: most functions have no instruction whose operands are asked for, and recording a
    call costs far less than making it. :meth:`function` replays them into a :class:`Function`,
    which is then exactly the one the calls would have built (each call sees the scopes and
    declarations it would have seen). ``depth`` and the statement indices are :class:`Function`'s.
    A call is kept as a tuple of strings and ints (the garbage collector stops tracking those).
    """

    __slots__ = ("shared", "calls", "depth", "count")

    def __init__(self, shared: dict[str, int]) -> None:
        self.shared = shared
        self.calls: list[tuple[Any, ...]] = []
        self.depth = 0  # as Function.depth
        self.count = 0  # statements recorded

    def open_scope(self) -> None:
        self.calls.append(("{",))
        self.depth += 1

    def close_scope(self) -> None:
        self.calls.append(("}",))
        self.depth = max(0, self.depth - 1)

    def declare(self, names: Iterable[tuple[str, int | None]], body_depth: int) -> None:
        self.calls.append(("declare", tuple(names), body_depth))

    def label(self, name: str) -> None:
        self.calls.append(("label", name))

    def statement(self, line: int, guard: str | None, opcode: str, rest: str) -> int:
        """As :meth:`Function.statement` (the index it would return)."""
        self.calls.append((line, guard, opcode, rest))
        self.count += 1
        return self.count - 1

    def function(self) -> Function:
        """The :class:`Function` the recorded calls build."""
        fn = Function(self.shared)
        for call in self.calls:
            what = call[0]
            if what == "{":
                fn.open_scope()
            elif what == "}":
                fn.close_scope()
            elif what == "label":
                fn.label(call[1])
            elif what == "declare":
                fn.declare(call[1], call[2])
            else:
                fn.statement(*call)
        return fn


class _Solver:
    """Blocks, reaching definitions and the fixed point for one :meth:`Function.solve`."""

    #: threshold jumps of one definition's range before it is widened to the whole range
    WIDEN_AFTER = 16

    def __init__(self, fn: Function) -> None:
        self.fn = fn
        self.instrs = fn.instrs
        self.shared = fn.shared
        self.immediates: dict[tuple[int, str, int], Immediate] = {}
        n = len(self.instrs)
        # blocks: leaders at 0, at labels, after control flow
        leaders = {0, n}
        for pos in fn.labels.values():
            leaders.add(pos)
        for i, ins in enumerate(self.instrs):
            if ins.flow != "fall":
                leaders.add(i + 1)
        starts = sorted(p for p in leaders if p <= n)
        self.block_of = [0] * (n + 1)
        self.blocks: list[tuple[int, int]] = []
        for b, s in enumerate(starts):
            e = starts[b + 1] if b + 1 < len(starts) else n + 1
            self.blocks.append((s, min(e, n)))
            for i in range(s, min(e, n + 1)):
                self.block_of[i] = b
        self.succ: list[list[int]] = [[] for _ in self.blocks]
        scope_labels: dict[str, list[tuple[int, int]]] = {}
        for (sid, name), pos in fn.labels.items():
            scope_labels.setdefault(name, []).append((sid, pos))
        for b, (s, e) in enumerate(self.blocks):
            last = self.instrs[e - 1] if e > s else None
            fall = b + 1 < len(self.blocks)
            if last is not None:
                if last.flow == "jump":
                    tgt = self._target(last, scope_labels)
                    if tgt is None:  # an unknown label: anywhere
                        self.succ[b] = list(range(len(self.blocks)))
                        continue
                    self.succ[b].append(self.block_of[tgt])
                    fall = last.guard is not None and fall
                elif last.flow == "any":
                    self.succ[b] = sorted({self.block_of[p] for p in fn.labels.values()} | ({b + 1} if fall else set()))
                    continue
                elif last.flow == "stop":
                    fall = last.guard is not None and fall
            if fall:
                self.succ[b].append(b + 1)

    def _target(self, ins: Instr, scope_labels: dict[str, list[tuple[int, int]]]) -> int | None:
        assert ins.target is not None
        name, chain = ins.target
        found = dict(scope_labels.get(name, ()))
        for sid in chain:
            if sid in found:
                return found[sid]
        return None

    # -- the slice and its reaching definitions ----------------------------------------------

    def run(self, uses: Sequence[tuple[int, Operand, int]]) -> list[Value]:
        instrs = self.instrs
        # definitions per key, and the slice: keys the uses depend on (flow-insensitively)
        defs_of: dict[str, list[tuple[int, int]]] = {}
        for i, ins in enumerate(instrs):
            for j, d in enumerate(ins.dests):
                if d is not None:
                    defs_of.setdefault(d, []).append((i, j))
        want: list[str] = []
        seen: set[str] = set()
        for _, op, _ in uses:
            for k in _regs(op):
                if k not in seen:
                    seen.add(k)
                    want.append(k)
        k_i = 0
        while k_i < len(want):
            key = want[k_i]
            k_i += 1
            for i, _ in defs_of.get(key, ()):
                for op in instrs[i].srcs:
                    for k in _regs(op):
                        if k not in seen:
                            seen.add(k)
                            want.append(k)
        self.defs_of = {k: defs_of.get(k, []) for k in want}
        # def ids: 0..K-1 entry pseudo-definitions (one per key), then the real ones
        self.def_list: list[tuple[int, int, str]] = [(-1, -1, k) for k in want]
        self.entry_id = {k: n for n, k in enumerate(want)}
        key_mask: dict[str, int] = {}
        for k in want:
            bits = 1 << self.entry_id[k]
            for i, j in self.defs_of[k]:
                self.def_list.append((i, j, k))
                bits |= 1 << (len(self.def_list) - 1)
            key_mask[k] = bits
        self.key_mask = key_mask
        self.def_id = {(i, j): n for n, (i, j, _) in enumerate(self.def_list) if i >= 0}
        # per block: gen / kill; per instruction position: the defs in its block, for local lookups
        nb = len(self.blocks)
        gen = [0] * nb
        kill = [0] * nb
        self.block_defs: list[dict[str, list[int]]] = [{} for _ in range(nb)]
        for n, (i, j, k) in enumerate(self.def_list):
            if i < 0:
                continue
            b = self.block_of[i]
            self.block_defs[b].setdefault(k, []).append(n)
        for b in range(nb):
            g = kl = 0
            for k, ids in self.block_defs[b].items():
                ids.sort(key=lambda n: self.def_list[n][0])
                last_kill = None
                for n in ids:
                    if instrs[self.def_list[n][0]].guard is None:
                        last_kill = n
                if last_kill is not None:
                    kl |= key_mask[k]
                    g |= 1 << last_kill
                    pos = self.def_list[last_kill][0]
                    for n in ids:
                        if self.def_list[n][0] > pos or (self.def_list[n][0] == pos and n > last_kill):
                            g |= 1 << n
                else:
                    for n in ids:
                        g |= 1 << n
            gen[b], kill[b] = g, kl
        entry_bits = (1 << len(want)) - 1
        rd_in = [0] * nb
        rd_out = [0] * nb
        order = self._rpo()
        preds: list[list[int]] = [[] for _ in range(nb)]
        for b, ss in enumerate(self.succ):
            for s in ss:
                preds[s].append(b)
        changed = True
        while changed:
            changed = False
            for b in order:
                x = entry_bits if b == 0 else 0
                for p in preds[b]:
                    x |= rd_out[p]
                out = gen[b] | (x & ~kill[b])
                if x != rd_in[b] or out != rd_out[b]:
                    rd_in[b], rd_out[b] = x, out
                    changed = True
        self.rd_in = rd_in
        limits = {0} | {(1 << k) - 1 for k in range(1, 65)}
        for ins in instrs:  # the constants the slice's registers are compared with
            if ins.opcode.startswith("setp.") and any(k in self.entry_id for op in ins.srcs for k in _regs(op)):
                for op in ins.srcs:
                    if op[0] == "imm" and isinstance(op[1], int) and op[1] >= 0:
                        limits.update((max(0, op[1] - 1), op[1], op[1] + 1))
        self.thresholds = sorted(limits)
        self.reach_memo: dict[tuple[int, str], tuple[int, ...]] = {}
        return self._fixpoint(uses)

    def _rpo(self) -> list[int]:
        seen = [False] * len(self.blocks)
        post: list[int] = []
        stack: list[tuple[int, int]] = [(0, 0)] if self.blocks else []
        if self.blocks:
            seen[0] = True
        while stack:
            b, k = stack[-1]
            if k < len(self.succ[b]):
                stack[-1] = (b, k + 1)
                s = self.succ[b][k]
                if not seen[s]:
                    seen[s] = True
                    stack.append((s, 0))
            else:
                stack.pop()
                post.append(b)
        order = post[::-1]
        # Code no path reaches never runs: any value is sound there. It is read as if it followed
        # the statement before it, so a dead MMA is still checked with what precedes it.
        for b in range(1, len(self.blocks)):
            if not seen[b]:
                seen[b] = True
                self.succ[b - 1].append(b)
                order.append(b)
        return order

    def reaching(self, i: int, key: str) -> tuple[int, ...]:
        """The definition ids of ``key`` that reach instruction ``i`` (before it runs)."""
        memo = self.reach_memo.get((i, key))
        if memo is not None:
            return memo
        b = self.block_of[i]
        local = [n for n in self.block_defs[b].get(key, ()) if self.def_list[n][0] < i]
        out: list[int] = []
        for n in reversed(local):
            out.append(n)
            if self.instrs[self.def_list[n][0]].guard is None:
                break
        else:
            x = self.rd_in[b] & self.key_mask.get(key, 0)
            while x:
                low = x & -x
                out.append(low.bit_length() - 1)
                x ^= low
        res = tuple(out)
        self.reach_memo[(i, key)] = res
        return res

    # -- the fixed point -----------------------------------------------------------------------

    def _fixpoint(self, uses: Sequence[tuple[int, Operand, int]]) -> list[Value]:
        nd = len(self.def_list)
        vals: list[Value | None] = [None] * nd
        changes = [0] * nd
        self.vals = vals
        # entry pseudo-definitions: unknown
        for k, n in self.entry_id.items():
            vals[n] = _unknown(64, "no definition in the function" if not self.defs_of[k] else
                               "not defined on every path")
        users = self._users()
        self.loops = _cycles(users)
        # in program order: a definition's operands are mostly computed before it is
        work = deque(sorted(range(len(self.entry_id), nd), key=lambda n: self.def_list[n][0]))
        queued = [True] * nd
        budget = 64 * max(1, nd) + 10000
        while work:
            budget -= 1
            if budget < 0:  # never reached on real code: give up soundly
                return [_unknown(w, "analysis limit") for _, _, w in uses]
            cur = work.popleft()
            queued[cur] = False
            i, j, _ = self.def_list[cur]
            new = self._eval(i, j)
            if new is None:
                continue
            old = vals[cur]
            if old is not None:
                joined = _join(old, new)
                rng = joined.range
                if rng != old.range and cur in self.loops:  # a loop grows it: widen
                    changes[cur] += 1
                    rng = self._widen(old.range, rng, joined.width, changes[cur])
                joined = _value(joined.bits, joined.width, rng, joined.why | new.why, new.line, new.origin)
                if joined.bits == old.bits and joined.range == old.range and joined.why == old.why:
                    continue
                new = joined
            vals[cur] = new
            for u in users[cur]:
                if not queued[u]:
                    queued[u] = True
                    work.append(u)
        out = []
        for i, op, w in uses:
            v = self.operand(i, op, w)
            out.append(v if v is not None else _unknown(w, "no value reaches it"))
        return out

    def _users(self) -> list[set[int]]:
        """Per definition, the definitions whose value reads it: those it reaches as an operand,
        and a ``selp`` whose ``setp`` it reaches as an operand (what :func:`_transfer` reads). The
        fixed point re-evaluates a definition's users when its value changes; the definitions on
        a cycle of this graph are the loop-carried ones, whose ranges alone are widened."""
        nd = len(self.def_list)
        users: list[set[int]] = [set() for _ in range(nd)]
        for n in range(len(self.entry_id), nd):
            i = self.def_list[n][0]
            ins = self.instrs[i]
            reads = [(i, k) for op in ins.srcs for k in _regs(op)]
            if ins.opcode.startswith("selp") and len(ins.srcs) > 2 and ins.srcs[2][0] == "reg":
                for p in self.reaching(i, str(ins.srcs[2][1])):
                    k = self.def_list[p][0]
                    if k >= 0:
                        reads += [(k, key) for op in self.instrs[k].srcs for key in _regs(op)]
            for at, key in reads:
                for m in self.reaching(at, key):
                    users[m].add(n)
        return users

    def _widen(self, old: tuple[int, int], rng: tuple[int, int], width: int, changes: int) -> tuple[int, int]:
        """Widening with thresholds: a bound that moves jumps to the next constant that a ``setp``
        comparing a register of the slice uses (``c - 1``, ``c``, ``c + 1``) or the next
        ``2**k - 1``; after :attr:`WIDEN_AFTER` moves, the whole range. Terminates: each bound
        moves through finitely many thresholds."""
        if changes > self.WIDEN_AFTER:
            return R.full(width)
        m = mask_of(width)
        t = self.thresholds
        lo, hi = rng
        if hi > old[1]:
            k = bisect.bisect_left(t, hi)
            hi = min(t[k] if k < len(t) else m, m)
        if lo < old[0]:
            k = bisect.bisect_right(t, lo) - 1
            lo = t[k] if k >= 0 else 0
        return (lo, hi)

    def reg(self, i: int, key: str, width: int) -> Value | None:
        """The value of register ``key`` read by instruction ``i``, as ``width`` bits (None: no
        value yet)."""
        ids = self.reaching(i, key)
        if not ids:
            return _unknown(width, "no definition reaches it")
        vals = self.vals
        acc: Value | None = None
        for n in ids:
            v = vals[n]
            if v is None:
                continue
            acc = v if acc is None else _join(acc, v)
        if acc is None:
            return None
        if len(ids) == 1:
            single = vals[ids[0]]
            assert single is not None
            acc = single
        elif any(n < len(self.entry_id) for n in ids):  # undefined on some path
            real = [n for n in ids if n >= len(self.entry_id)]
            if real and all(self.instrs[self.def_list[n][0]].guard is not None for n in real):
                acc = Value(acc.bits, acc.width, acc.range,
                            (acc.why - {"not defined on every path"}) | {"predicated definition"})
        elif not acc.full and any(v is not None and v.bits != acc.bits for v in (vals[n] for n in ids)):
            why = "loop-carried" if any(n in self.loops for n in ids) else "several definitions"
            acc = Value(acc.bits, acc.width, acc.range, acc.why | {why})
        if acc.width == width:
            return acc
        if acc.width > width:
            return _value(kb_ext(acc.bits, acc.width, width), width, R.ext(acc.range, acc.width, width), acc.why,
                          acc.line, acc.origin)
        return Value(acc.bits, width, acc.range, acc.why | {"narrower register"}, acc.line, acc.origin)

    def operand(self, i: int, op: Operand, width: int) -> Value | None:
        """The value of a source operand of instruction ``i`` as a ``width``-bit word."""
        kind = op[0]
        if kind == "imm":
            n = op[1]
            assert isinstance(n, int)
            if not -(1 << (width - 1)) <= n < 1 << width:  # E48: ptxas keeps the low bits
                self.wide(i, n, width)
            return _const(n, width)
        if kind == "reg":
            return self.reg(i, str(op[1]), width)
        if kind == "special":
            name = str(op[1])
            bounds = SPECIAL_RANGES.get(name)
            if bounds is not None and bounds[1] < 1 << width:
                return _value(KnownBits(0, 0), width, bounds, {f"special register {name}"})
            return _unknown(width, f"special register {name}")
        if kind == "sym":
            name, off = str(op[1]), op[2]
            assert isinstance(off, int)
            if name in self.shared:
                align = max(1, self.shared[name])
                low = mask_of(align.bit_length() - 1)
                high = mask_of(width) & ~mask_of(SHARED_LIMIT_BITS)
                sym = _value(KnownBits(0, low | high), width, (0, (1 << SHARED_LIMIT_BITS) - 1),
                             {"shared memory address"})
                if off:
                    return _value(kb_add(sym.bits, kb_const(off, width), width), width,
                                  R.add(sym.range, R.const(off, width), width), sym.why)
                return sym
            return _unknown(width, f"address of {name}")
        if kind == "other" and parse_int(str(op[1])) is not None:  # E48: a literal ptxas rejects
            self.rejected(i, str(op[1]), width, "Constant overflow")
            return _unknown(width, f"ptxas rejects the immediate {op[1]} (Constant overflow)")
        return _unknown(width, "operand " + _show(op))

    def wide(self, i: int, n: int, width: int) -> None:
        """Note that instruction ``i`` reads the literal ``n`` into ``width`` bits: ptxas keeps its
        low bits (E48)."""
        text = hex(n)
        self.immediates.setdefault((i, text, width), Immediate(self.instrs[i].line, self.instrs[i].opcode, text,
                                                               width, n & mask_of(width)))

    def rejected(self, i: int, text: str, width: int, why: str) -> None:
        """Note that ptxas rejects instruction ``i`` for its immediate ``text`` (E48)."""
        self.immediates.setdefault((i, text, width), Immediate(self.instrs[i].line, self.instrs[i].opcode, text,
                                                               width, None, why))

    def _eval(self, i: int, j: int) -> Value | None:
        ins = self.instrs[i]
        v = _transfer(self, i, ins, j)
        if v is None:
            return None
        return Value(v.bits, v.width, v.range, v.why, ins.line, ins.opcode)


def _cycles(users: list[set[int]]) -> set[int]:
    """The nodes on a cycle of the graph ``users`` (node -> successors): Tarjan's SCCs."""
    cyclic: set[int] = set()
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on: set[int] = set()
    stack: list[int] = []
    counter = 0
    for root in range(len(users)):
        if root in index:
            continue
        work = [(root, iter(users[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(users[w])))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1 or v in users[v]:
                    cyclic.update(comp)
    return cyclic


def _regs(op: Operand) -> list[str]:
    kind = op[0]
    if kind == "reg":
        return [str(op[1])]
    if kind in ("vec", "pair"):
        out: list[str] = []
        for o in op[1]:
            out += _regs(o)
        return out
    return []


def _show(op: Operand) -> str:
    kind = op[0]
    if kind in ("vec", "pair"):
        inner = ", ".join(_show(o) for o in op[1])
        return "{" + inner + "}" if kind == "vec" else inner.replace(", ", "|")
    if kind == "sink":
        return "_"
    if kind == "sym":
        return f"{op[1]}+{op[2]}" if op[2] else str(op[1])
    return str(op[1])


_BINARY_KB = {"and": kb_and, "or": kb_or, "xor": kb_xor, "add": kb_add, "sub": kb_sub}
_BINARY_R = {"and": R.and_, "or": R.or_, "xor": R.xor, "add": R.add, "sub": R.sub, "min": R.min_, "max": R.max_}


def _transfer(s: _Solver, i: int, ins: Instr, index: int) -> Value | None:
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
            return _unknown(w or width, "missing operand")
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
        return _value(KnownBits(0, 0), w, rng, {why})

    if base == "mov" and srcs:
        src = srcs[0]
        if count > 1:  # unpacking: {%r1, %r2} = %rd (a "_" keeps its place)
            w = width // count
            v = op(0)
            if v is None:
                return None
            bits = kb_slice(v.bits, index, w)
            return _value(bits, w, None, v.why)
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
            return _value(bits, width, rng, why)
        v = op(0)
        return None if v is None else _value(v.bits, width, v.range, v.why)
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
            return _value(a.bits, 32, a.range, a.why)
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
        return _value(kb_ext(v.bits, src_w, width, signed), width, R.ext(v.range, src_w, width, signed), v.why)
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
        return _value(bits, width, rng, a.why | b.why)
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
        return _value(kb_meet(a.bits, b.bits), width, R.join(a.range, b.range), a.why | b.why)
    if base in ("not", "neg"):
        a = op(0)
        if a is None:
            return None
        if base == "not":
            return _value(kb_not(a.bits, width), width, (mask_of(width) - a.range[1], mask_of(width) - a.range[0]), a.why)
        return _value(kb_sub(kb_const(0, width), a.bits, width), width, R.sub(R.const(0, width), a.range, width), a.why)
    if base in ("shl", "shr"):
        a, n = op(0), const(1)
        if a is None:
            return None
        if n is None:
            amount = op(1, 32)
            if amount is None:
                return None
            return leaf("shift by a run-time amount") if base == "shl" else \
                _value(KnownBits(0, 0), width, (0, a.range[1]) if types[0][0] != "s" else None, a.why | {"shift by a run-time amount"})
        signed = types[0][0] == "s" if types else False
        if base == "shl":
            return _value(kb_shl(a.bits, n, width), width, R.shl(a.range, n, width), a.why)
        return _value(kb_shr(a.bits, n, width, signed), width, R.shr(a.range, n, width, signed), a.why)
    if base == "bfe":
        a, pos, ln = op(0), field_bits(1), field_bits(2)
        if a is None:
            return None
        if pos is None or ln is None:
            return leaf("bit field at a run-time position" if _imm_or_none(srcs, 1, 2) else
                        "a bit field position or length ptxas rejects")
        signed = types[0][0] == "s"
        rng = None if signed else R.bfe(a.range, pos, ln, width)
        return _value(kb_bfe(a.bits, pos, ln, width, signed), width, rng, a.why)
    if base == "bfi":
        a, b, pos, ln = op(0), op(1), field_bits(2), field_bits(3)
        if a is None or b is None:
            return None
        if pos is None or ln is None:
            return leaf("bit field at a run-time position" if _imm_or_none(srcs, 2, 3) else
                        "a bit field position or length ptxas rejects")
        return _value(kb_bfi(a.bits, b.bits, pos, ln, width), width, None, a.why | b.why)
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
            return _value(KnownBits(0, 0), width, R.mul_hi(a.range, b.range, width), why)
        ab, bb = kb_ext(a.bits, width, w_out, signed), kb_ext(b.bits, width, w_out, signed)
        bits = kb_mul(ab, bb, w_out)
        ra, rb = R.ext(a.range, width, w_out, signed), R.ext(b.range, width, w_out, signed)
        rng = R.mul(ra, rb, w_out) if not signed or (a.range[1] >> (width - 1) == 0 and b.range[1] >> (width - 1) == 0) \
            else R.full(w_out)
        if base == "mad":
            c = op(2, w_out)
            if c is None:
                return None
            bits, why = kb_add(bits, c.bits, w_out), why | c.why
            rng = R.add(rng, c.range, w_out)
        return _value(bits, w_out, rng, why)
    if base in ("rem", "div"):
        a, b = op(0), op(1)
        if a is None or b is None:
            return None
        if types and types[0][0] == "u":
            r = (R.rem if base == "rem" else R.div)(a.range, b.range, width)
            if r is not None:
                return _value(KnownBits(0, 0), width, r, a.why | b.why)
        return leaf(f"set by {opcode}")
    if base == "prmt" and opcode.count(".") == 1:
        a, b, sel = op(0), op(1), const(2)
        if a is None or b is None:
            return None
        if sel is None:
            return leaf("prmt with a run-time selector", 32)
        return _value(kb_prmt(a.bits, b.bits, sel), 32, None, a.why | b.why)
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
        return _value(KnownBits(0, 0), width, None, a.why | b.why | {f"set by {base}"})
    fn = R.min_ if base == "min" else R.max_
    return _value(KnownBits(0, 0), width, fn(a.range, b.range, width), a.why | b.why)


def _refine_selp(s: _Solver, i: int, ins: Instr, a: Value, b: Value, width: int) -> tuple[Value | None, Value | None]:
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
        out.append(None if r is None else _value(val.bits, width, r, val.why, val.line, val.origin))
    return out[0], out[1]


def _single_local_def(s: _Solver, i: int, op: Operand) -> int | None:
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


def _urem_idiom(s: _Solver, i: int, ins: Instr, width: int) -> tuple[int, int] | None:
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
