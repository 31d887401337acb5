"""Where a wgmma group's checks run: the operand words of a group of ``wgmma.mma_async`` sites,
computed ahead of the group (docs/sanitizer.md, "wgmma").

ptxas keeps a warpgroup's wgmma pipeline only while the code between ``wgmma.fence`` and the last
``wgmma.mma_async`` of a group is straight integer code: a branch, a load, a store or a trap there
makes it insert ``warpgroup.arrive`` (C7519) or serialize the wgmma (C7520). So the checks of every
site of a group (the sites of one basic block) run at one *check point*: the group's
``wgmma.fence``, moved up the block over the integer code, barriers and fences the words depend on
(:func:`earliest`). There they read the words the sites will read: each word is either a register
not written between the check point and its site (read as it is), or the result of integer
instructions in between, which are replayed at the check point into registers of their own
(*shadows*), in order, with their sources renamed to the latest shadow (:func:`hoist`). A word
that comes from anything else (a load, a call, a wgmma's result) cannot be computed ahead: the
group is not hoisted, and each of its sites is checked on its own, right before it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Mapping

from ..ptx.lexer import split_operands

__all__ = ["Hoisted", "register_types", "is_boundary", "block_start", "enclosing_brace", "hoist", "earliest",
           "definitions", "statement_parts", "type_of", "written", "read", "statement"]

#: Integer instructions a replay may copy: their first operand is the one register they write, and
#: they read registers and immediates only (no memory, no side effect).
_PURE = frozenset({"add", "sub", "mul", "mad", "and", "or", "xor", "not", "shl", "shr", "bfe", "bfi", "cvt", "mov",
                   "selp", "min", "max", "neg", "abs", "setp", "prmt", "cvta", "popc", "clz", "brev", "shfl"})
#: Instructions whose first operand is no register they write (stores, fences, barriers, branches;
#: a barrier's reduction, :data:`_REDUCTIONS`, writes it).
_NO_DESTINATION = ("st.", "st ", "red.", "bar", "fence", "membar", "prefetch", "cp.", "wgmma.fence", "wgmma.commit",
                   "wgmma.wait", "trap", "ret", "exit", "bra", "griddepcontrol")
_REDUCTIONS = ("bar.red", "barrier.red", "barrier.cta.red")
#: Where a check point stops moving up: memory accesses and the tensor cores (the loads and stores
#: of the next stage issue first, and the checks run while they are in flight and while the warps
#: wait at the barrier before the group: a barrier or a fence changes no register).
_MEMORY = ("ld", "st", "cp", "atom", "red", "mbarrier", "wgmma", "tcgen05", "@")
_REG = re.compile(r"%[A-Za-z_$][\w$]*")
_POISON = ""


@dataclass
class Hoisted:
    """A group's words at its check point.

    Attributes:
        line: the 1-based line the check point is before (the group's ``wgmma.fence``, or above).
        replay: the replayed instructions, in order (shadow registers only written).
        declarations: the shadows' ``.reg`` lines (function scope: the out-of-line record computes
            some of them again).
        words: each site's line and operand register -> the register holding its word at the check point.
        prefix: the shadows' names, ``%<prefix>N`` (empty: no replay).
    """

    line: int
    replay: list[str] = field(default_factory=list)
    declarations: list[str] = field(default_factory=list)
    words: dict[tuple[int, str], str] = field(default_factory=dict)
    prefix: str = ""

    def shadow(self, reg: str) -> bool:
        """Whether ``reg`` is one of the replay's registers (a shadow), not the kernel's."""
        return bool(self.prefix) and reg.startswith(f"%{self.prefix}")


def register_types(lines: list[str], start: int, end: int) -> dict[str, str]:
    """The types of the registers a function (its body: 1-based lines ``start .. end``) declares,
    by name or by the prefix of a ``%rd<N>`` range (``{"%rd": "b64", "%p": "pred"}``)."""
    out: dict[str, str] = {}
    for line in lines[start - 1:end]:
        for m in re.finditer(r"\.reg\s+\.(\w+)\s+([^;]+);", line.split("//")[0]):
            for name in m.group(2).split(","):
                name = name.strip()
                out[name.split("<")[0]] = m.group(1)
    return out


def type_of(types: Mapping[str, str], reg: str) -> str | None:
    """A register's type (``"b64"``, ``"pred"``) as :func:`register_types` read it, or None."""
    return types.get(reg) or types.get(reg.rstrip("0123456789"))


def statement(line: str) -> str:
    """A line's statement: its text before any ``//`` comment, stripped."""
    return line.split("//")[0].strip()


def statement_parts(text: str) -> tuple[str, str, list[str]] | None:
    """A statement's guard (``@%p `` or empty), opcode and operands, or None (not an instruction)."""
    m = re.match(r"(@!?%[\w$]+\s+)?([\w.:]+)\s*(.*?);?$", text)
    return None if m is None else (m.group(1) or "", m.group(2), split_operands(m.group(3)))


def written(text: str) -> set[str]:
    """The registers a statement writes (its first operand, for an instruction that has one: a
    call's results, an mbarrier wait's predicate, a barrier's reduction too)."""
    parts = statement_parts(text)
    if parts is None or not parts[2] or text.startswith(".") \
            or parts[1].startswith(_NO_DESTINATION) and not parts[1].startswith(_REDUCTIONS):
        return set()
    return set(_REG.findall(parts[2][0]))


def read(text: str) -> set[str]:
    """The registers a statement reads (its guard and every operand after its first)."""
    parts = statement_parts(text)
    return set() if parts is None else set(_REG.findall(" ".join([parts[0], *parts[2][1:]])))


def is_boundary(line: str) -> bool:
    """A basic block ends or starts at this line: a label, a branch, a return."""
    text = statement(line)
    return bool(re.fullmatch(r"[\w$.]+:", text) or re.match(r"(@!?%\w+\s+)?(bra|ret|exit|brx)\b", text))


def block_start(lines: list[str], line: int, floor: int) -> int:
    """The first 1-based line of the basic block holding ``line`` (not before ``floor``)."""
    n = line - 1
    while n > floor and not is_boundary(lines[n - 1]):
        n -= 1
    return n


def enclosing_brace(lines: list[str], line: int, floor: int) -> int:
    """The 1-based line of the ``{`` opening the innermost block around ``line`` below the
    function's top level (an inline-asm block), or ``line`` itself where it is at the top."""
    depth, n = 0, line - 1
    while n > floor:
        text = statement(lines[n - 1])
        depth += text.count("}") - text.count("{")
        if depth < 0:
            return n
        n -= 1
    return line


def earliest(lines: list[str], hoisted: Hoisted, floor: int) -> int:
    """The earliest line above ``hoisted``'s check point (and below ``floor``) the check point may
    move up to, so that the checks overlap the integer work before the group: above every integer
    instruction the words depend on, below the last other instruction that writes one of the
    registers they read, the last memory access or wgmma, predicated instruction, label and brace
    (an inline-asm block)."""
    needed = {r for line in hoisted.replay for r in _REG.findall(line) if not hoisted.shadow(r)}
    needed |= {w for w in hoisted.words.values() if not hoisted.shadow(w)}
    n = hoisted.line - 1
    while n > floor:
        text = statement(lines[n - 1])
        if "{" in text or "}" in text or text.endswith(":") or text.startswith(_MEMORY) \
                or text.startswith(".") and not text.startswith((".loc", ".pragma")):  # (a declaration)
            break
        parts = statement_parts(text)
        if text and not text.startswith(".") and parts is not None:
            wrote = written(text)
            if wrote & needed:
                if parts[1].split(".")[0] not in _PURE or parts[0] or "|" in parts[2][0]:
                    break
                needed = needed - wrote | read(text)
        n -= 1
    return n + 1


def _renamed(text: str, current: dict[str, str]) -> str:
    """``text`` with each register written since the check point read from its latest shadow."""
    return _REG.sub(lambda r: current.get(r.group(0), r.group(0)), text)


def hoist(lines: list[str], types: dict[str, str], fence: int, sites: dict[int, list[str]],
          prefix: str) -> Hoisted | None:
    """The words of ``sites`` (1-based line -> the operand registers read there, all after line
    ``fence`` in its basic block) at the check point before line ``fence``, or None when one
    cannot be computed there. ``prefix`` names the shadows (``%<prefix><N>``)."""
    out = Hoisted(fence, prefix=prefix)
    declared: dict[str, str] = {}  # a shadow -> its declaration
    current: dict[str, str] = {}  # a register written since the check point -> its shadow (or poisoned)
    made: list[tuple[tuple[str, ...], frozenset[str], str]] = []  # (its shadows, the shadows it reads, the instruction)
    count = 0
    last = max(sites)
    for number in range(fence, last + 1):
        if number in sites:
            for reg in sites[number]:
                word = current.get(reg, reg)
                if word == _POISON:
                    return None
                out.words[(number, reg)] = word
        text = statement(lines[number - 1])
        if not text or text.startswith((".", "{", "}")) or text.endswith(":"):
            continue
        parts = statement_parts(text)
        if parts is None:
            return None
        guard, opcode, ops = parts
        unpack = opcode.startswith("mov.") and bool(ops) and re.fullmatch(r"\{\s*%[\w$]+(\s*,\s*%[\w$]+)*\s*\}", ops[0])
        if unpack and not guard:  # (a wide register's halves: mov.b64 {%r1, %r2}, %rd1)
            halves = _REG.findall(ops[0])
            kinds = [type_of(types, h) for h in halves]
            if None in kinds or any(current.get(r) == _POISON for r in _REG.findall(ops[1])):
                current.update({h: _POISON for h in halves})
                continue
            reads = frozenset(current[r] for r in _REG.findall(ops[1]) if r in current)
            shadows = tuple(f"%{prefix}{count + i}" for i in range(len(halves)))
            count += len(halves)
            made.append((shadows, reads, f"{opcode} {{{', '.join(shadows)}}}, {_renamed(ops[1], current)};"))
            for h, kind, shadow in zip(halves, kinds, shadows):
                declared[shadow] = f".reg .{kind} {shadow};"
                current[h] = shadow
            continue
        if opcode.split(".")[0] not in _PURE or not ops or "|" in ops[0] or not _REG.fullmatch(ops[0]):
            current.update((reg, _POISON) for reg in written(text))
            continue
        dest = ops[0]
        kind = type_of(types, dest)
        if kind is None or any(current.get(r) == _POISON for r in _REG.findall(" ".join(ops[1:]) + guard)):
            current[dest] = _POISON
            continue
        shadow = f"%{prefix}{count}"
        count += 1
        reads = frozenset(current[r] for r in _REG.findall(" ".join(ops[1:]) + guard) if r in current)
        body = f"{_renamed(guard, current)}{opcode} {shadow}, {', '.join(_renamed(o, current) for o in ops[1:])};"
        if guard:  # (where the guard is false, the register keeps its value)
            old = current.get(dest, dest)
            body = f"mov.{'pred' if kind == 'pred' else 'b' + kind[1:]} {shadow}, {old}; {body}"
            reads |= {old} if old in current.values() else set()
        made.append(((shadow,), reads, body))
        declared[shadow] = f".reg .{kind} {shadow};"
        current[dest] = shadow
    needed = {w for w in out.words.values() if out.shadow(w)}
    kept = []
    for shadows, reads, body in reversed(made):  # (only what the words need)
        if needed & set(shadows):
            needed |= reads | set(shadows)
            kept.append(body)
    out.replay = kept[::-1]
    out.declarations = [d for shadow, d in declared.items() if shadow in needed]
    return out


def definitions(lines: list[str], hoisted: Hoisted, floor: int, body: tuple[int, int]) -> Callable[[str], str | None]:
    """Where a register read at ``hoisted``'s check point got the value it has there: a function
    from the register to the instruction that wrote it, when that instruction's sources still hold
    there the values it read (so that two words computed from one register share its value), else
    None. The instruction is a replayed one (for a shadow), the last write above the check point in
    its basic block (not before ``floor``; its sources not written in between), or the one write
    in the function (``body``: the 1-based lines of its braces), above the check point, of a
    register whose sources are each written once, above it, or never (a compiler's SSA values:
    written once, before every read)."""
    writes: dict[str, list[tuple[int, str]]] = {}
    for number in range(body[0] + 1, body[1]):
        text = statement(lines[number - 1])
        for reg in written(text):
            writes.setdefault(reg, []).append((number, text))

    def once(reg: str) -> str | None:
        found = writes.get(reg, [])
        if len(found) != 1 or found[0][0] >= hoisted.line or found[0][1].startswith("@") \
                or written(found[0][1]) != {reg}:
            return None
        at, text = found[0]
        sources = [writes.get(r, []) for r in read(text)]
        return text if all(not w or len(w) == 1 and w[0][0] < at for w in sources) else None

    def definition(reg: str) -> str | None:
        for text in reversed(hoisted.replay):
            if written(text.strip()) == {reg}:
                return text.strip()
        changed: set[str] = set()
        n = hoisted.line - 1
        while n > floor and not is_boundary(lines[n - 1]):
            text = statement(lines[n - 1])
            wrote = written(text)
            if reg in wrote:
                return text if wrote == {reg} and not text.startswith("@") and not read(text) & changed else None
            changed |= wrote
            n -= 1
        return once(reg)
    return definition
