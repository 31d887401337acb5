"""What a function's registers hold at each instruction: a control-flow graph per PTX function,
the definitions that reach each use, and two abstract domains (known bits and value ranges)
iterated to a fixed point (E38, E42).

A :class:`Function` is filled statement by statement by the scanner (:meth:`Function.statement`,
:meth:`Function.label`, :meth:`Function.open_scope` / :meth:`Function.close_scope`,
:meth:`Function.declare`), then asked for the values of some operands (:meth:`Function.solve`).

The dataflow is in parts, each a module of :mod:`descgen.ptx`: this one builds a function (names
resolved in scope; :class:`Recorder` keeps the building calls of a function that may never be
analysed); :mod:`~descgen.ptx.statements` holds a statement as the analysis reads it
(:class:`~descgen.ptx.statements.Instr`), :mod:`~descgen.ptx.cfg` the basic blocks and the
reaching definitions, :mod:`~descgen.ptx.transfer` each opcode's transfer function,
:mod:`~descgen.ptx.solver` the fixed point, and :mod:`~descgen.ptx.values` what is known of a
value (:class:`~descgen.ptx.values.Value`).

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

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from .lexer import Operand, first_operand, parse_operand, split_operands
from .solver import Solver
from .statements import (CONTROL, NO_DEST, Instr, dest_keys, is_special, own_dests, own_register,
                         resolved_operand)
from .values import SHARED_LIMIT_BITS, SPECIAL_RANGES, Immediate, Value

__all__ = ["Value", "Function", "Recorder", "Instr", "Immediate", "SHARED_LIMIT_BITS", "SPECIAL_RANGES", "is_special"]


class _Scope:
    """One open brace: the names it declares (and what they hid) and its ``name<count>`` ranges."""

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
            return own_register(name)
        key = self._names.get(name)
        if key is not None:
            return key
        for prefix, count, suffix in reversed(self._ranges):
            if name.startswith(prefix):
                digits = name[len(prefix):]
                if digits.isdigit() and (digits == "0" or digits[0] != "0") and int(digits) < count:
                    return name + suffix
        return own_register(name)

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
        flow = CONTROL.get(base, "fall")
        target = None
        srcs: tuple[Operand, ...] | None = None
        if base == "call":
            dests, srcs = self._call(rest), ()
        elif flow == "jump" and first is not None and first[0] == "name":
            target = (str(first[1]), tuple(s.id for s in reversed(self._scopes)))
            srcs = ()
        elif first is not None and base not in NO_DEST and (base != "tcgen05" or opcode.startswith("tcgen05.ld")) \
                and first[0] in ("name", "vec", "pair", "sink"):
            dests = own_dests(first) if not self._names and not self._ranges else dest_keys(first, self.resolve)
            skip = 1
        if srcs is None and (self._names or self._ranges) and self._may_name_scoped(rest):
            # names declared in a scope: resolve them now, while it is open
            srcs = tuple(resolved_operand(parse_operand(t), self.resolve) for t in split_operands(rest)[skip:])
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
        return resolved_operand(parse_operand(text), self.resolve)

    # -- solving -----------------------------------------------------------------------------

    def solve(self, uses: Sequence[tuple[int, Operand, int]]) -> list[Value]:
        """The value of each ``(instruction index, operand, width)`` at that instruction; the
        immediates read on the way that ptxas cuts or rejects are left in :attr:`immediates`."""
        solver = Solver(self.instrs, self.labels, self.shared)
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
