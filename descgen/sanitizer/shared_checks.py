"""The checks a wgmma group's sites can share (docs/sanitizer.md, "wgmma").

A K loop's wgmma sites read words that differ by constants: CUTLASS's descriptor iterator and
Triton both advance a descriptor along K by adding ``32 bytes >> 4`` to the 64-bit word, so one
group's A words are ``X + 0, X + 2, X + 4, X + 6`` for one register ``X``. Their checks rarely read
the start address's low bits (a swizzled tile's extent and pattern phase start at its 128-byte
row), and for such checks two of the words stand for all of them:

    Let every check read its word through bits ``m`` and up only, and let the words be ``X + e_k``
    with ``0 <= e_k < 2**m``. Bits ``m`` and up of ``X + e_k`` are those of ``X`` plus the carry
    out of ``(X mod 2**m) + e_k``, which is 0 or 1 and grows with ``e_k``. So each word's bits
    ``m`` and up are those of the word with the least ``e_k`` or those of the word with the
    greatest: a check fires on some word exactly when it fires on one of these two.

:func:`bits_read` finds which bits of each word a site's check code reads (from the code itself,
conservatively), :func:`offsets` which words are one register plus a constant, and
:func:`shared` puts sites with the same check code into classes, each checked on two words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from ..ptx.lexer import parse_int
from .hoist import statement_parts

__all__ = ["bits_read", "offsets", "Member", "shared"]

_ALL = (1 << 64) - 1


@dataclass(frozen=True)
class _Pos:
    """A value that is bits of one word, moved: ``(word & mask) >> shift`` (left for shift < 0)."""

    word: str
    mask: int
    shift: int


_Abs = _Pos | dict[str, int]  # exact bits of a word, or the bits of each word it depends on


def _deps(v: _Abs | None) -> dict[str, int]:
    if v is None:
        return {}
    if isinstance(v, _Pos):
        return {v.word: v.mask} if v.mask else {}
    return v


def _union(*vs: _Abs | None) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in vs:
        for w, m in _deps(v).items():
            out[w] = out.get(w, 0) | m
    return out


def _window(p: _Pos, lo: int, width: int) -> _Pos:
    """``p``'s bits ``lo .. lo + width - 1`` (of its value), as bits of its word."""
    keep = sum(1 << i for i in range(64) if lo <= i - p.shift < lo + width) if width > 0 else 0
    return _Pos(p.word, p.mask & keep, p.shift)


def _moved(p: _Pos, right: int, width: int) -> _Pos:
    """``(p >> right)`` (``right`` < 0: left) on a ``width``-bit register."""
    q = _Pos(p.word, p.mask, p.shift + right)
    return _window(q, 0, width)


def _width(op: str) -> int:
    return 64 if re.search(r"\.[bsu]64\b", op) else 32


def bits_read(lines: Sequence[str], words: Sequence[str]) -> Callable[[str], dict[str, int]]:
    """Which bits of each word register in ``words`` each register of ``lines`` (PTX written by
    :class:`descgen.backends.ptx_code.Program`) depends on: a function from a register to
    ``{word: mask}`` (no entry: none of its bits). Conservative: an instruction it does not model
    depends on every bit its operands depend on; masks, shifts, bit-field extracts and the halves
    of a word keep track of exactly which bits move where."""
    val: dict[str, _Abs] = {w: _Pos(w, _ALL, 0) for w in words}
    for line in lines:
        text = line.split("//")[0].strip()
        parts = statement_parts(text) if text and not text.startswith((".", "{", "}")) else None
        if parts is None or not parts[2]:
            continue
        guard, op, (dest, *srcs) = parts[0].strip() or None, parts[1], parts[2]
        got = [val.get(s.strip()) for s in srcs]
        width = _width(op)
        result: _Abs
        if dest.startswith("{") and op.startswith("mov") and len(srcs) == 1 and isinstance(got[0], _Pos):
            halves = [h.strip() for h in dest.strip("{}").split(",")]
            for i, h in enumerate(halves):
                val[h] = _moved(got[0], 32 * i, 32)
            continue
        base = op.split(".")[0]
        p = got[0] if got and isinstance(got[0], _Pos) else None
        imms = [parse_int(s) for s in srcs]
        if p is not None and base in ("mov", "cvt") and len(srcs) == 1 and not op.startswith("cvt.s"):
            result = _window(p, 0, width if base == "mov" else min(width, _width(op.rsplit(".", 1)[-1])))
        elif p is not None and base == "and" and len(srcs) == 2 and imms[1] is not None:
            mask = imms[1] & ((1 << width) - 1)
            result = _Pos(p.word, p.mask & sum(1 << i for i in range(64) if 0 <= i - p.shift < 64
                                               and mask >> (i - p.shift) & 1), p.shift)
        elif p is not None and base == "shr" and ".s" not in op and imms[1:2] and imms[1] is not None:
            result = _moved(p, imms[1], width)
        elif p is not None and base == "shl" and imms[1:2] and imms[1] is not None:
            result = _moved(p, -imms[1], width)
        elif p is not None and base == "bfe" and ".s" not in op and len(imms) == 3 and None not in imms[1:]:
            result = _window(_moved(p, imms[1] or 0, width), 0, imms[2] or 0)
        else:
            result = _union(*got)
        if guard is not None:  # (written or not: either value)
            result = _union(result, val.get(dest), val.get(guard.lstrip("@!")))
        if isinstance(result, _Pos) and not result.mask:
            result = {}
        val[dest] = result
    return lambda reg: _deps(val.get(reg))


def offsets(definition: Callable[[str], str | None], reg: str) -> tuple[str, int]:
    """A word register as a base register plus a constant: ``(base, c)`` with ``reg = base + c``
    (mod 2**64), from its definition (``definition(reg)``: the instruction that last wrote it before
    the check point, or None): an ``add`` of an immediate, or an ``or`` of an immediate with no bit
    in common with the base's largest value (its definition a ``cvt`` of a ``bfe`` or an ``and``).
    Otherwise ``(reg, 0)``."""
    line = definition(reg)
    parts = statement_parts(line.split("//")[0].strip()) if line is not None else None
    if parts is None or parts[0]:
        return reg, 0
    _, op, ops = parts
    if len(ops) != 3 or not op.endswith("64") or op.split(".")[0] not in ("add", "or"):
        return reg, 0
    a, b = ops[1], ops[2]
    if parse_int(a) is not None:
        a, b = b, a
    c = parse_int(b)
    if c is None or parse_int(a) is not None:
        return reg, 0
    if op.startswith("or") and c & _below(definition, a):
        return reg, 0
    return a, c & _ALL


def _below(definition: Callable[[str], str | None], reg: str) -> int:
    """A mask of every bit ``reg`` may have set: from its definitions, a ``cvt.u64.u32`` of a 32-bit
    value bounded by a ``bfe.u32``, an ``and`` with an immediate or a ``shr.u32`` of one (else all)."""
    line = definition(reg)
    parts = statement_parts(line.strip()) if line is not None else None
    op, ops = (parts[1], parts[2]) if parts is not None and not parts[0] else ("", [])
    if op in ("cvt.u64.u32", "mov.b32", "mov.u32") and len(ops) == 2:
        return _below(definition, ops[1]) & 0xFFFFFFFF
    imm = parse_int(ops[-1]) if ops else None
    if op == "bfe.u32" and len(ops) == 4 and imm is not None:
        return (1 << min(32, imm)) - 1
    if op.startswith("and.b") and len(ops) == 3 and imm is not None:
        return _below(definition, ops[1]) & imm
    if op in ("shr.u32", "shr.b32", "shr.u64", "shr.b64") and len(ops) == 3 and imm is not None:
        return _below(definition, ops[1]) >> imm
    return _ALL if op.endswith("64") or not op else 0xFFFFFFFF


@dataclass(frozen=True)
class Member:
    """A site of a group, for :func:`shared`: ``key`` (its check code with its own registers named
    alike: sites with equal keys compute the same function of their words), ``words`` (role -> the
    register its checks read the role's word from), and what that code reads of each: ``reads``
    (role -> mask of the word's bits any check reads; ``None``: a check reads two words)."""

    key: object
    words: Mapping[str, str]
    reads: Mapping[str, int] | None


def shared(members: Sequence[Member],
           definition: Callable[[str], str | None]) -> list[tuple[list[int], list[dict[str, str]]]]:
    """The members in classes whose checks run on two sets of words for all of them: each class
    its member indices and the word sets to check (role -> register; one set where the two agree).
    A member whose checks read two words at once, or whose words are no base plus a constant in
    the sense of the module's docstring, is a class alone, checked on its own words."""
    classes: dict[object, list[tuple[int, dict[str, int]]]] = {}  # (a member, each role's low offset e_k)
    alone: list[tuple[list[int], list[dict[str, str]]]] = []
    for i, m in enumerate(members):
        if m.reads is None:
            alone.append(([i], [dict(m.words)]))
            continue
        key: list[object] = [m.key]
        place: dict[str, int] = {}
        for role, reg in sorted(m.words.items()):
            read = m.reads.get(role, 0)
            low = (read & -read).bit_length() - 1 if read else 64  # (its lowest bit read)
            base, c = offsets(definition, reg)
            if low == 0 or base == reg and c == 0:
                key.append((role, reg, 0))
                place[role] = 0
                continue
            e = c & ((1 << low) - 1) if low < 64 else c
            key.append((role, base, low, (c - e) & _ALL))
            place[role] = e
        classes.setdefault(tuple(key), []).append((i, place))
    out = list(alone)
    for group in classes.values():
        sets: list[dict[str, str]] = [{}, {}]
        for role in members[group[0][0]].words:
            lo = min(group, key=lambda g: g[1][role])[0]
            hi = max(group, key=lambda g: g[1][role])[0]
            sets[0][role], sets[1][role] = members[lo].words[role], members[hi].words[role]
        out.append(([g[0] for g in group], sets if sets[0] != sets[1] else sets[:1]))
    return sorted(out)
