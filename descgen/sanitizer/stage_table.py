"""A wgmma group whose words change in its loop only with a stage counter: its checks run once
where the loop is entered, for every value the counter can have, into a table; in the loop the
group reads one bit of it (docs/sanitizer.md, "What a site gets": the stage counter's table).

A software-pipelined K loop reads each stage's tiles at ``base + stage * stride``, and the stage
counts ``0, 1, ..., S - 1, 0, ...`` (Triton: ``s = s + 1 > S - 1 ? 0 : s + 1``). So the words a
group's checks read at its check point (:mod:`descgen.sanitizer.hoist`) are a function of the
counter and of registers the loop never writes. Then, on every step, the group's flag is bit
``s - lo`` of a table built where the loop is entered, bit ``v - lo`` the same checks on the words
computed with ``s = v``: exact on every step (no finding where the words are legal, and each bad
word flagged), where:

- the loop is the innermost one around the check point: the lines from a label above it to the
  last branch back to that label below it; the table is built before every way into those lines
  from outside them (the fall-through into the label, each branch from outside to a label among
  them);
- every other register the words and the checks read is written nowhere in those lines, so that
  it holds at the check point what it held where the table was built; where none of them is
  written there, the table is one bit, the checks of the words as they are;
- the counter's values at the check point lie in ``[lo, hi]``, at most :data:`MOST` of them, by
  :func:`counter_range`; or the words read only one run of its bits, at most 3 (the K index
  through a mask: ``(k << 15) & 0x18000``), and the table is indexed by those bits;
- the loop has at most :data:`ENTRIES` ways in (each gets the table's code).

The unsigned ranges of :mod:`descgen.ptx.ranges` cannot hold a counter that starts at -1 (Triton's
pipelined prologue): ``{-1} | [0, 2]`` is every 32-bit value to them. :func:`counter_range`
reasons about such a counter alone, over signed intervals, from every instruction that writes it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..ptx.lexer import parse_int
from .hoist import Hoisted, block_start, enclosing_brace, read, statement, statement_parts, type_of, written
from .shared_checks import bits_read

__all__ = ["MOST", "ENTRIES", "StageTable", "stage_table", "loop_around", "counter_range", "table_code"]

#: The most counter values a table is built for (a pipeline's stages: Triton's ``num_stages``,
#: CUTLASS's ``Stages``).
MOST = 8
#: The most places a table is built at (the ways into its loop: each gets the table's code).
ENTRIES = 4

_BRANCH = re.compile(r"(@!?%[\w$]+\s+)?bra(\.uni)?\s+([\w$.]+)\s*;?$")
_LABEL = re.compile(r"([\w$.]+):")
_LEAVES = re.compile(r"(@!?%[\w$]+\s+)?(bra|ret|exit|trap)\b")
_INT32 = ("b32", "s32", "u32")
@dataclass(frozen=True)
class StageTable:
    """Where a group's checks are a table (module docstring).

    Attributes:
        stage: the counter register the table is indexed by (32 bits), or None where the words are
            the same on every step (the checks run once per entry into the loop: a table of one bit).
        values: its least and greatest value at the check point (signed), ``hi - lo <`` :data:`MOST`
            (``(0, 0)`` without a counter); with ``field``, those of the field.
        field: ``(position, width)`` where the words read only these bits of the register (the
            K index through a mask, ``(k << 15) & 0x18000``: bits 0-1): the table is indexed by
            them, whatever the register's range.
        loop: the 1-based lines of the loop's label and of its last branch back to it.
        entries: the 1-based lines the table is built before: the label (where the line above
            falls through to it) and each branch from outside the loop's lines to a label among them.
    """

    stage: str | None
    values: tuple[int, int]
    loop: tuple[int, int]
    entries: tuple[int, ...]
    field: tuple[int, int] | None = None

    def describe(self) -> str:
        lo, hi = self.values
        loop = f"once per entry into the loop at lines {self.loop[0]}-{self.loop[1]}"
        if self.field is not None:
            pos, width = self.field
            return f"for each value of bits {pos}..{pos + width - 1} of {self.stage} ({lo}..{hi}), {loop}"
        return f"for each value of {self.stage} ({lo}..{hi}), {loop}" if self.stage else \
            f"{loop} (the words the same on every step)"


def _signed(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >> 31 else value


def loop_around(lines: list[str], body: tuple[int, int], line: int) -> tuple[int, int] | None:
    """The innermost loop around 1-based ``line`` in a function (``body``: the lines of its
    braces): the line of its label (the greatest label above ``line`` that a branch below it goes
    back to) and of the last branch to that label. None where there is none, where the label is
    inside an inline-asm block or named twice, or where the function has a ``brx.idx``."""
    start, end = body
    labels: dict[str, list[int]] = {}
    branches: list[tuple[int, str]] = []
    for n in range(start + 1, end):
        text = statement(lines[n - 1])
        label = _LABEL.fullmatch(text)
        if label:
            labels.setdefault(label.group(1), []).append(n)
        elif text.startswith("brx") or re.match(r"@!?%[\w$]+\s+brx", text):
            return None
        else:
            branch = _BRANCH.match(text)
            if branch:
                branches.append((n, branch.group(3)))
    heads = {labels[t][0] for n, t in branches if n >= line and len(labels.get(t, [])) == 1 and labels[t][0] <= line}
    if not heads:
        return None
    head = max(heads)
    if enclosing_brace(lines, head, start) != head:
        return None
    return head, max(n for n, t in branches if labels.get(t) == [head])


def _entries(lines: list[str], body: tuple[int, int], loop: tuple[int, int]) -> tuple[int, ...] | None:
    """The lines before which control enters the lines of ``loop`` from outside them: its label,
    where the line above can fall through to it, and each branch from outside to a label among
    them (LLVM may place a loop's latch above its header and enter at the header). None where
    there is none."""
    start, end = body
    head, back = loop
    inside = {statement(lines[n - 1])[:-1] for n in range(head, back + 1) if _LABEL.fullmatch(statement(lines[n - 1]))}
    entries = []
    for n in range(start + 1, end):
        branch = _BRANCH.match(statement(lines[n - 1])) if not head <= n <= back else None
        if branch and branch.group(3) in inside:
            entries.append(n)
    above = next((statement(lines[n - 1]) for n in range(head - 1, start, -1)
                  if statement(lines[n - 1]) and not statement(lines[n - 1]).startswith((".loc", ".pragma"))), "{")
    falls = above != "{" and not (_LEAVES.match(above) and not above.startswith("@"))
    return tuple(sorted(entries + ([head] if falls else []))) or None


def _last_write(lines: list[str], line: int, reg: str, floor: int) -> int | None:
    """The line of the last write of ``reg`` above ``line`` in its basic block (not before ``floor``)."""
    n = line - 1
    stop = block_start(lines, line, floor)
    while n >= max(stop, floor + 1):
        if reg in written(statement(lines[n - 1])):
            return n
        n -= 1
    return None


def _reaching_write(lines: list[str], body: tuple[int, int], line: int, reg: str) -> int | None:
    """The line of the write of ``reg`` that every path to 1-based ``line`` last passes: the last
    write above it, where control enters the lines between only from that write (every label
    between is the target of branches between only: an inline-asm wait loop). None otherwise."""
    labels: set[str] = set()
    n = line - 1
    while n > body[0]:
        text = statement(lines[n - 1])
        if reg in written(text):
            break
        label = _LABEL.fullmatch(text)
        if label:
            labels.add(label.group(1))
        n -= 1
    else:
        return None
    for m in range(body[0] + 1, body[1]):
        branch = _BRANCH.match(statement(lines[m - 1])) if not n < m < line else None
        if branch and branch.group(3) in labels:
            return None
    return n


def _refined(r: tuple[int, int], cmp: str, k: int, holds: bool) -> tuple[int, int] | None:
    """The values of signed interval ``r`` for which ``x cmp k`` is ``holds`` (None: none)."""
    lo, hi = r
    if not holds:
        cmp = {"eq": "ne", "ne": "eq", "lt": "ge", "ge": "lt", "le": "gt", "gt": "le"}[cmp]
    if cmp == "eq":
        lo, hi = max(lo, k), min(hi, k)
    elif cmp == "ne":
        lo, hi = lo + (lo == k), hi - (hi == k)
    elif cmp == "lt":
        hi = min(hi, k - 1)
    elif cmp == "le":
        hi = min(hi, k)
    elif cmp == "gt":
        lo = max(lo, k + 1)
    else:
        lo = max(lo, k)
    return (lo, hi) if lo <= hi else None


_FLIP = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "eq": "eq", "ne": "ne"}


class _Unknown(Exception):
    """The counter's values cannot be bounded (:func:`counter_range`)."""


@dataclass(frozen=True)
class _Step:
    """A ``selp`` side ``T = reg + c``, taken where ``T cmp k`` is ``holds``."""

    c: int
    cmp: str
    k: int
    unsigned: bool
    holds: bool

    def values(self, s: tuple[int, int]) -> tuple[int, int] | None:
        """Its values when ``reg`` lies in ``s`` (None: never taken)."""
        t = (s[0] + self.c, s[1] + self.c)
        if t[0] < -(1 << 31) or t[1] >= 1 << 31 or self.unsigned and (t[0] < 0 or not 0 <= self.k < 1 << 31):
            raise _Unknown  # (it may wrap, or an unsigned comparison of a negative value)
        return _refined(t, self.cmp, self.k, self.holds)


def counter_range(lines: list[str], body: tuple[int, int], reg: str, at: int) -> tuple[int, int] | None:
    """The signed interval a 32-bit register lies in at 1-based line ``at`` on every execution,
    where every instruction of its function (``body``) that writes it is

    - ``mov.b32 reg, IMM`` (or of a register that holds an immediate there, :func:`_constants`), or
    - ``selp.b32 reg, A, B, %p`` where each of ``A``, ``B`` is an immediate or a register ``T``
      written above it in its basic block by ``add.s32 T, reg, IMM`` (``reg`` and ``T`` not written
      in between), and ``%p`` is written between that ``add`` and the ``selp`` by
      ``setp.CMP.s32 %p, T, IMM`` (or ``IMM, T``; ``.u32`` where ``T`` is never negative), so that
      the side taken is ``T`` restricted by the comparison (Triton's stage counter:
      ``add.s32 %t, %s, 1; setp.gt.s32 %p, %t, 2; selp.b32 %s, 0, %t, %p``);

    else None. The interval is the least fixed point over those instructions: the ``mov`` s'
    values, and each ``selp``'s sides computed from the interval so far. At ``at``, the write every
    path to it last passes decides (:func:`_reaching_write`); without one, the whole interval (the
    compilers write a register before any read of it: a register read before any write holds no
    value PTX defines)."""
    start, end = body
    consts: list[int] = []
    selps: dict[int, list[_Step | int]] = {}  # (a selp's line -> its sides: an immediate or a step)
    for n in range(start + 1, end):
        text = statement(lines[n - 1])
        if reg not in written(text):
            continue
        parts = statement_parts(text)
        if parts is None or parts[0] or parts[2][0] != reg:
            return None
        _, op, ops = parts
        if re.fullmatch(r"mov\.[bsu]32", op) and len(ops) == 2:
            found = _constants(lines, body, ops[1], n)
            if found is None:
                return None
            consts += found
            continue
        if not re.fullmatch(r"selp\.[bsu]32", op) or len(ops) != 4:
            return None
        sides: list[_Step | int] = []
        for side, holds in ((ops[1], True), (ops[2], False)):
            value = parse_int(side)
            step = None if value is not None else _counter_step(lines, body, n, reg, side, ops[3], holds)
            if value is None and step is None:
                return None
            sides.append(_signed(value) if value is not None else step)  # type: ignore[arg-type]
        selps[n] = sides
    if not consts:
        return None

    def selp_values(n: int, s: tuple[int, int]) -> tuple[int, int] | None:
        found = [(side, side) if isinstance(side, int) else side.values(s) for side in selps[n]]
        taken = [r for r in found if r is not None]
        return (min(r[0] for r in taken), max(r[1] for r in taken)) if taken else None

    s = (min(consts), max(consts))
    try:
        for _ in range(64):
            grown = s
            for n in selps:
                r = selp_values(n, s)
                grown = grown if r is None else (min(grown[0], r[0]), max(grown[1], r[1]))
            if grown == s:
                break
            s = grown
        else:
            return None
        last = _reaching_write(lines, body, at, reg)
        if last in selps:
            return selp_values(last, s)
    except _Unknown:
        return None
    if last is None:
        return s
    found = _constants(lines, body, statement_parts(statement(lines[last - 1]))[2][1], last)  # type: ignore[index]
    return None if found is None else (found[0], found[0])


def _constants(lines: list[str], body: tuple[int, int], operand: str, line: int) -> list[int] | None:
    """The value the source of the ``mov`` at 1-based ``line`` holds there: an immediate, or a
    register whose write every path to the line last passes (:func:`_reaching_write`) is a ``mov``
    of such a source (CUTLASS's pipeline state copied from a register just set to 0); else None."""
    value = parse_int(operand)
    if value is not None:
        return [_signed(value)]
    write = _reaching_write(lines, body, line, operand) if operand.startswith("%") else None
    parts = statement_parts(statement(lines[write - 1])) if write is not None else None
    if write is None or parts is None or parts[0] or parts[2][0] != operand \
            or not re.fullmatch(r"mov\.[bsu]32", parts[1]) or len(parts[2]) != 2:
        return None
    return _constants(lines, body, parts[2][1], write)


def _counter_step(lines: list[str], body: tuple[int, int], selp: int, reg: str, side: str, pred: str,
                  holds: bool) -> _Step | None:
    """A ``selp`` side register ``T`` as :func:`counter_range` reads it (taken where the predicate
    is ``holds``), or None."""
    add = _last_write(lines, selp, side, body[0])
    parts = statement_parts(statement(lines[add - 1])) if add is not None else None
    if add is None or parts is None or parts[0] or not re.fullmatch(r"add\.[su]32", parts[1]) \
            or len(parts[2]) != 3 or reg not in parts[2][1:]:
        return None
    c = parse_int(parts[2][2] if parts[2][1] == reg else parts[2][1])
    if c is None or _last_write(lines, selp, reg, add) is not None:
        return None
    setp = _last_write(lines, selp, pred, add)
    parts = statement_parts(statement(lines[setp - 1])) if setp is not None else None
    m = re.fullmatch(r"setp\.(eq|ne|lt|le|gt|ge)\.([su])32", parts[1]) if parts is not None and not parts[0] else None
    if m is None or parts is None or len(parts[2]) != 3 or parts[2][0] != pred or side not in parts[2][1:]:
        return None
    first = parts[2][1] == side
    k = parse_int(parts[2][2] if first else parts[2][1])
    if k is None:
        return None
    unsigned = m.group(2) == "u"
    return _Step(_signed(c), m.group(1) if first else _FLIP[m.group(1)], k & 0xFFFFFFFF if unsigned else _signed(k),
                 unsigned, holds)


def stage_table(lines: list[str], body: tuple[int, int], hoisted: Hoisted, checks: list[str],
                types: dict[str, str]) -> StageTable | None:
    """Whether a group's checks can be a table (module docstring), and where: ``hoisted`` its words
    at its check point, ``checks`` its check code (the registers it writes are its own), ``types``
    the function's register types."""
    loop = loop_around(lines, body, hoisted.line)
    if loop is None:
        return None
    leaves: set[str] = set().union(*map(read, _replayed(hoisted)), hoisted.words.values())
    own: set[str] = set()
    for line in checks:
        text = statement(line)
        if text and not text.startswith((".", "{", "}")):
            leaves |= read(text)
            own |= written(text)
    leaves = {r for r in leaves - own if not hoisted.shadow(r)}
    changed = set().union(*(written(statement(lines[n - 1])) for n in range(loop[0], loop[1] + 1)))
    varying = leaves & changed
    entries = _entries(lines, body, loop)
    if len(varying) > 1 or not entries or len(entries) > ENTRIES:
        return None
    if not varying:
        return StageTable(None, (0, 0), loop, entries)
    stage = next(iter(varying))
    if type_of(types, stage) not in _INT32:
        return None
    values = counter_range(lines, body, stage, hoisted.line)
    if values is not None and values[1] - values[0] < MOST:
        return StageTable(stage, values, loop, entries)
    field = _field_read(hoisted, stage)
    if field is None or 1 << field[1] > MOST:
        return None
    return StageTable(stage, (0, (1 << field[1]) - 1), loop, entries, field)


def _replayed(hoisted: Hoisted) -> list[str]:
    """The statements of a group's replay, one each (a guarded write is two on its line)."""
    return [part.strip() + ";" for line in hoisted.replay for part in line.split(";") if part.strip()]


def _field_read(hoisted: Hoisted, reg: str) -> tuple[int, int] | None:
    """The bits of ``reg`` the words of ``hoisted`` depend on, as ``(position, width)`` of one
    field, or None (none, or not one run of bits): from the replay's code, each instruction's
    result depending on exactly the bits a mask, shift or bit-field extract keeps, and on every
    bit its operands depend on otherwise (:func:`~descgen.sanitizer.shared_checks.bits_read`)."""
    deps = bits_read(_replayed(hoisted), [reg])
    mask = 0
    for word in hoisted.words.values():
        mask |= deps(word).get(reg, 0) if hoisted.shadow(word) else (-1 if word == reg else 0)
    mask &= 0xFFFFFFFF
    if not mask or mask & (mask + (mask & -mask)):  # (none, or more than one run)
        return None
    pos = (mask & -mask).bit_length() - 1
    return pos, (mask >> pos).bit_length()


def table_code(table: StageTable, number: int, replay: list[str], checks: list[str],
               flags: str) -> tuple[list[str], list[str]]:
    """A group's table: the code built at each entry into its loop (bit ``v - lo`` of
    ``%dgt<number>`` set where ``checks``, or-ing their flags into ``flags``, find something in the
    words ``replay`` computes with the counter ``v``; without a counter, bit 0 for the words as
    they are), and the code at its check point that reads the counter's bit into ``flags`` (0 or 1)."""
    lo, hi = table.values
    bits, counter, bit = f"%dgt{number}", f"%dgk{number}", f"%dgb{number}"
    which = f"bit v of {bits} for bits {table.field[0]}.. of {table.stage} = v" if table.field else \
        f"bit v - {lo} of {bits} for {table.stage} = v" if lo else f"bit v of {bits} for {table.stage} = v"
    built = [f"\t{{ // descgen: group {number}'s checks {table.describe()}: "
             f"{which if table.stage else f'bit 0 of {bits}'}",
             f"\t.reg .b32 {counter + ', ' if table.stage else ''}{bit};", f"\tmov.b32 {bits}, 0;"]
    name = re.compile(re.escape(table.stage or "") + r"(?![\w$])")

    def with_counter(line: str) -> str:  # (the counter read from %dgk)
        return name.sub(counter, line) if table.stage else line

    shift = table.field[0] if table.field else 0
    for v in range(lo, hi + 1):
        built += [f"\tmov.b32 {counter}, {v << shift};"] if table.stage else []
        built += ["\t" + with_counter(line) for line in replay]
        built += [f"\tmov.b32 {flags}, 0;", *(with_counter(line) for line in checks), f"\tmin.u32 {bit}, {flags}, 1;",
                  f"\tshl.b32 {bit}, {bit}, {v - lo};", f"\tor.b32 {bits}, {bits}, {bit};"]
    built.append("\t}")
    if table.stage is None:
        return built, [f"\tmov.b32 {flags}, {bits}; // descgen: group {number}'s flag: its table's one bit"]
    if table.field:
        index = [f"\tbfe.u32 {bit}, {table.stage}, {table.field[0]}, {table.field[1]};",
                 f"\tshr.b32 {bit}, {bits}, {bit};"]
    elif lo:
        index = [f"\tadd.s32 {bit}, {table.stage}, {-lo};", f"\tshr.b32 {bit}, {bits}, {bit};"]
    else:
        index = [f"\tshr.b32 {bit}, {bits}, {table.stage};"]
    lookup = [f"\t{{ // descgen: group {number}'s flag: its table's bit for {table.stage}", f"\t.reg .b32 {bit};",
              *index, f"\tand.b32 {flags}, {bit}, 1;", "\t}"]
    return built, lookup
