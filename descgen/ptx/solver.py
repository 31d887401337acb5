"""The fixed point of one :meth:`descgen.ptx.dataflow.Function.solve` (E38, E42): each definition
of the slice's registers gets its :class:`~descgen.ptx.values.Value`, its opcode's transfer
function (:func:`descgen.ptx.transfer.transfer`) over the join of the values of the definitions
reaching its operands (:mod:`descgen.ptx.cfg`), re-evaluated until nothing changes.

Known bits have finite height and need no widening; the ranges of loop-carried definitions (those
on a cycle of the definitions' users) are widened with thresholds: the constants a ``setp``
compares the slice's registers with and the ``2**k - 1``, then, after :attr:`Solver.WIDEN_AFTER`
moves, the whole range. A work budget far above real code bounds the loop; past it every operand
is unknown (soundly).
"""

from __future__ import annotations

import bisect
from collections import deque
from typing import Callable, Mapping, Sequence

from ..model.engine import KnownBits
from . import ranges as R
from .cfg import ControlFlow, ReachingDefinitions
from .knownbits import kb_add, kb_const, kb_ext, mask_of
from .lexer import Operand, parse_int
from .statements import Instr, operand_text, registers_of
from .transfer import transfer
from .values import (SHARED_LIMIT_BITS, SPECIAL_RANGES, Immediate, Value, const_value, join_values, reduced_value,
                     unknown_value)

__all__ = ["Solver"]


class Solver:
    """Reaching definitions and the fixed point for one :meth:`descgen.ptx.dataflow.Function.solve`;
    what the transfer functions read of it is :class:`descgen.ptx.transfer.Reader`."""

    #: threshold jumps of one definition's range before it is widened to the whole range
    WIDEN_AFTER = 16

    def __init__(self, instrs: Sequence[Instr], labels: Mapping[tuple[int, str], int], shared: Mapping[str, int]
                 ) -> None:
        self.instrs = instrs
        self.shared = shared
        self.immediates: dict[tuple[int, str, int], Immediate] = {}
        self.cfg = ControlFlow(instrs, labels)
        self.block_of = self.cfg.block_of

    def run(self, uses: Sequence[tuple[int, Operand, int]]) -> list[Value]:
        """The value of each ``(instruction index, operand, width)`` at that instruction."""
        rd = ReachingDefinitions(self.cfg, self.instrs, uses)
        self.def_list, self.entry_id, self.defs_of = rd.def_list, rd.entry_id, rd.defs_of
        self.reaching: Callable[[int, str], tuple[int, ...]] = rd.reaching
        limits = {0} | {(1 << k) - 1 for k in range(1, 65)}
        for ins in self.instrs:  # the constants the slice's registers are compared with
            if ins.opcode.startswith("setp.") and any(k in self.entry_id for op in ins.srcs for k in registers_of(op)):
                for op in ins.srcs:
                    if op[0] == "imm" and isinstance(op[1], int) and op[1] >= 0:
                        limits.update((max(0, op[1] - 1), op[1], op[1] + 1))
        self.thresholds = sorted(limits)
        return self._fixpoint(uses)

    # -- the fixed point -----------------------------------------------------------------------

    def _fixpoint(self, uses: Sequence[tuple[int, Operand, int]]) -> list[Value]:
        nd = len(self.def_list)
        vals: list[Value | None] = [None] * nd
        changes = [0] * nd
        self.vals = vals
        # entry pseudo-definitions: unknown
        for k, n in self.entry_id.items():
            vals[n] = unknown_value(64, "no definition in the function" if not self.defs_of[k] else
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
                return [unknown_value(w, "analysis limit") for _, _, w in uses]
            cur = work.popleft()
            queued[cur] = False
            i, j, _ = self.def_list[cur]
            new = self._eval(i, j)
            if new is None:
                continue
            old = vals[cur]
            if old is not None:
                joined = join_values(old, new)
                rng = joined.range
                if rng != old.range and cur in self.loops:  # a loop grows it: widen
                    changes[cur] += 1
                    rng = self._widen(old.range, rng, joined.width, changes[cur])
                joined = reduced_value(joined.bits, joined.width, rng, joined.why | new.why, new.line, new.origin)
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
            out.append(v if v is not None else unknown_value(w, "no value reaches it"))
        return out

    def _users(self) -> list[set[int]]:
        """Per definition, the definitions whose value reads it: those it reaches as an operand,
        and a ``selp`` whose ``setp`` it reaches as an operand (what :func:`transfer` reads). The
        fixed point re-evaluates a definition's users when its value changes; the definitions on
        a cycle of this graph are the loop-carried ones, whose ranges alone are widened."""
        nd = len(self.def_list)
        users: list[set[int]] = [set() for _ in range(nd)]
        for n in range(len(self.entry_id), nd):
            i = self.def_list[n][0]
            ins = self.instrs[i]
            reads = [(i, k) for op in ins.srcs for k in registers_of(op)]
            if ins.opcode.startswith("selp") and len(ins.srcs) > 2 and ins.srcs[2][0] == "reg":
                for p in self.reaching(i, str(ins.srcs[2][1])):
                    k = self.def_list[p][0]
                    if k >= 0:
                        reads += [(k, key) for op in self.instrs[k].srcs for key in registers_of(op)]
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
            return unknown_value(width, "no definition reaches it")
        vals = self.vals
        acc: Value | None = None
        for n in ids:
            v = vals[n]
            if v is None:
                continue
            acc = v if acc is None else join_values(acc, v)
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
            return reduced_value(kb_ext(acc.bits, acc.width, width), width, R.ext(acc.range, acc.width, width), acc.why,
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
            return const_value(n, width)
        if kind == "reg":
            return self.reg(i, str(op[1]), width)
        if kind == "special":
            name = str(op[1])
            bounds = SPECIAL_RANGES.get(name)
            if bounds is not None and bounds[1] < 1 << width:
                return reduced_value(KnownBits(0, 0), width, bounds, {f"special register {name}"})
            return unknown_value(width, f"special register {name}")
        if kind == "sym":
            name, off = str(op[1]), op[2]
            assert isinstance(off, int)
            if name in self.shared:
                align = max(1, self.shared[name])
                low = mask_of(align.bit_length() - 1)
                high = mask_of(width) & ~mask_of(SHARED_LIMIT_BITS)
                sym = reduced_value(KnownBits(0, low | high), width, (0, (1 << SHARED_LIMIT_BITS) - 1),
                             {"shared memory address"})
                if off:
                    return reduced_value(kb_add(sym.bits, kb_const(off, width), width), width,
                                  R.add(sym.range, R.const(off, width), width), sym.why)
                return sym
            return unknown_value(width, f"address of {name}")
        if kind == "other" and parse_int(str(op[1])) is not None:  # E48: a literal ptxas rejects
            self.rejected(i, str(op[1]), width, "Constant overflow")
            return unknown_value(width, f"ptxas rejects the immediate {op[1]} (Constant overflow)")
        return unknown_value(width, "operand " + operand_text(op))

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
        v = transfer(self, i, ins, j)
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
