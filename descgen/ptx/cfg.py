"""A PTX function's control flow and reaching definitions, for :mod:`descgen.ptx.solver`.

- **Control flow** (:class:`ControlFlow`). Basic blocks end at a label or after ``bra``,
  ``brx.idx``, ``ret``, ``exit``, ``trap``; a predicated branch also falls through; ``brx.idx``
  may reach every label; a branch to a label no scope in its chain holds may reach every block.
  Blocks no path reaches are read as if they followed the block before them.
- **Reaching definitions** (:class:`ReachingDefinitions`). Only the slice the asked operands
  depend on (flow-insensitively) is followed. Each statement that writes one of its registers is
  a definition; a predicated one may not run, so it does not kill the definitions before it; each
  register also has an entry pseudo-definition (undefined on some path). A use gets the
  definitions that reach it along some path.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from .lexer import Operand
from .statements import Instr, registers_of

__all__ = ["ControlFlow", "ReachingDefinitions"]


class ControlFlow:
    """A function's basic blocks (``blocks``: ``(start, end)`` statement indices; ``block_of``:
    each statement's block, and one past the last) and each block's successors (``succ``)."""

    def __init__(self, instrs: Sequence[Instr], labels: Mapping[tuple[int, str], int]) -> None:
        self.instrs = instrs
        n = len(self.instrs)
        # blocks: leaders at 0, at labels, after control flow
        leaders = {0, n}
        for pos in labels.values():
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
        for (sid, name), pos in labels.items():
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
                    self.succ[b] = sorted({self.block_of[p] for p in labels.values()} | ({b + 1} if fall else set()))
                    continue
                elif last.flow == "stop":
                    fall = last.guard is not None and fall
            if fall:
                self.succ[b].append(b + 1)

    def _target(self, ins: Instr, scope_labels: dict[str, list[tuple[int, int]]]) -> int | None:
        """A ``bra``'s target: its label in the innermost scope of its chain that has it, or None."""
        assert ins.target is not None
        name, chain = ins.target
        found = dict(scope_labels.get(name, ()))
        for sid in chain:
            if sid in found:
                return found[sid]
        return None

    def rpo(self) -> list[int]:
        """The blocks in reverse postorder from the entry, then those no path reaches, each given
        an edge from the block before it."""
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


class ReachingDefinitions:
    """The definitions that reach each use, over the slice of the registers ``uses`` read.

    Attributes:
        def_list: every definition as ``(statement index, destination index, register key)``;
            the first ``len(entry_id)`` are the entry pseudo-definitions (index -1).
        entry_id: each register of the slice -> its entry pseudo-definition's id.
        defs_of: each register of the slice -> its definitions ``(statement, destination)``.
    """

    def __init__(self, cfg: ControlFlow, instrs: Sequence[Instr], uses: Sequence[tuple[int, Operand, int]]) -> None:
        self.instrs = instrs
        self.block_of = cfg.block_of
        # definitions per key, and the slice: keys the uses depend on (flow-insensitively)
        defs_of: dict[str, list[tuple[int, int]]] = {}
        for i, ins in enumerate(instrs):
            for j, d in enumerate(ins.dests):
                if d is not None:
                    defs_of.setdefault(d, []).append((i, j))
        want: list[str] = []
        seen: set[str] = set()
        for _, op, _ in uses:
            for k in registers_of(op):
                if k not in seen:
                    seen.add(k)
                    want.append(k)
        k_i = 0
        while k_i < len(want):
            key = want[k_i]
            k_i += 1
            for i, _ in defs_of.get(key, ()):
                for op in instrs[i].srcs:
                    for k in registers_of(op):
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
        nb = len(cfg.blocks)
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
        order = cfg.rpo()
        preds: list[list[int]] = [[] for _ in range(nb)]
        for b, ss in enumerate(cfg.succ):
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
        self.reach_memo: dict[tuple[int, str], tuple[int, ...]] = {}

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
