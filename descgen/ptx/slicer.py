"""A function's lines to the statements its descriptor operands can depend on: the scanner's fast
reader (issue 18: scan throughput).

Most statements of a kernel with a ``tcgen05.mma`` or ``wgmma.mma_async`` (its epilogue, its
loads and math, its barrier waits) never reach a descriptor operand. :func:`slice_function` finds
the ones that can without reading the others. A line holding one plain statement (``[@guard]
opcode operands;``, what compilers write on almost every line) is read with a few string
operations: its opcode and its first operand (the destination: PTX ISA §9.7, an instruction's
destination operands come first). Every other line (several statements, a label before a
statement, a statement over several lines, a brace with something else on its line, strings,
comments after code) goes through :class:`~descgen.ptx.lexer.Lexer` as the scanner would read it.
An index maps each name written to the statements writing it; the backward slice closes over the
names that the descriptor instructions read. What the scanner then reads (:class:`Sliced`) is,
in file order with the lines and text the lexer gives:

- every label, scope brace and directive (``.reg`` declarations, the function header);
- every statement that can change control flow (``bra``, ``brx.idx``, ``ret``, ``exit``,
  ``trap``, ``call``), every ``tcgen05.*`` and ``wgmma.*``, every statement whose destination is
  not read as names here;
- every statement writing a name in the slice (names as written: a name declared in several
  scopes is followed in all of them, a superset of the registers it resolves to), and every
  ``setp`` comparing one (the range widening's thresholds: :mod:`descgen.ptx.dataflow`);
- but not a braced block inside the body that the slice cannot see (an inline-asm barrier wait
  loop, a ``printf`` call sequence): no statement of the slice, no tcgen05 / wgmma, no control
  flow but ``bra`` to its own labels, so control enters at its top and leaves at its bottom with
  every register of the slice unchanged (kept where the function has a ``brx.idx``).

The statements left out write no register of the slice and change no control flow the slice can
see, so the definitions that reach each descriptor operand, and their values, are those of the
whole function. One thing is more precise: a ``selp`` whose ``setp`` is in the same basic block
narrows its operands (:mod:`descgen.ptx.dataflow`), and a barrier-wait block between the two no
longer splits that block. ``tests/test_scan_slicing.py`` checks against the statement-by-statement
reading on every corpus file: the same findings, and every bit known there known here too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .lexer import IDENT, Lexer, Operand, first_operand, parse_operand

__all__ = ["Sliced", "slice_function", "RESOLVED"]

#: The instructions whose descriptor operands the dataflow resolves: their names seed the slice,
#: and the scanner analyses only the functions that hold one.
RESOLVED = ("tcgen05.mma", "tcgen05.cp", "wgmma.mma_async")

#: Statements always read: control flow (the graph's edges), calls (their return registers),
#: ``setp`` (widening thresholds), and every tcgen05 / wgmma instruction (the scanner checks
#: qualifiers such as ``cta_group`` on all of them).
_ALWAYS = ("bra", "brx", "ret", "exit", "trap", "call", "setp", "tcgen05", "wgmma")
#: Each line's first two words (after ``\\n``): an opcode, a guard, a label, a brace, a directive;
#: then a destination, an opcode after a guard... (the line itself says what it is).
_WORDS = re.compile(r"\n[ \t]*(\S*)[ \t]*([^\s,;]*)")
#: The operands of a tcgen05.mma / tcgen05.cp / wgmma.mma_async that are no descriptor: vectors
#: (wgmma's accumulators and A registers, the disable-output-lane mask) and addresses (tensor
#: memory). Every descriptor operand is a register or an immediate (§9.7.16.10.9.1, §9.7.15.5.2).
_NOT_DESCRIPTORS = re.compile(r"\{[^{}]*\}|\[[^\]]*\]")
#: A line holding only a label (the lexer's label form, PTX ISA §4.4).
_LABEL_LINE = re.compile(r"([A-Za-z_$%][\w$]*)\s*:")
#: A statement's braces are vectors, whole and not nested (else the lexer reads the line).
_VECTORS = re.compile(r"[^{}]*(?:\{[^{}]*\}[^{}]*)*")


#: What is read of one line or statement: (order, kind, line, text, opcode), the kinds and
#: text of :func:`descgen.ptx.lexer.events`, the opcode as written ("" for all but statements).
_Event = tuple[int, str, int, str, str]


@dataclass
class Sliced:
    """What :func:`slice_function` keeps of a function's lines.

    Attributes:
        events: ``(kind, line, text)`` as :func:`descgen.ptx.lexer.events` gives them (``stmt``,
            ``label``, ``open``, ``close``), the statements left out omitted.
        read: how many of the lines were read: up to the line closing the function body (the
            lines after it are for the lexer).
    """

    events: list[tuple[str, int, str]]
    read: int


def _written(rest: str) -> list[str] | None:
    """The names a statement writes (as written), from the text after its opcode: the register
    names of its first operand (:func:`~descgen.ptx.lexer.first_operand`: a name, a ``|`` pair, a
    vector; ``_`` none); None when that operand is an immediate or an address (nothing is
    written) and ``["."]`` (read the statement whole: a call's return list, a qualifier written
    apart from its opcode, anything else) otherwise."""
    op = parse_operand(first_operand(rest))
    kind = op[0]
    if kind in ("imm", "addr"):
        return None
    if kind in ("name", "sink", "vec", "pair"):
        return _names(op)
    return ["."]


def _names(op: Operand) -> list[str]:
    """The names in a destination operand tree, in order (``_`` none)."""
    if op[0] == "name":
        return [str(op[1])]
    if op[0] in ("vec", "pair"):
        return [n for o in op[1] for n in _names(o)]
    return []


def _statement(s: str) -> tuple[str, list[str] | None]:
    """A statement's opcode (with its qualifiers, as written) and the names it writes (see
    :func:`_written`)."""
    if s[0] == "@":
        w = s.split(None, 2)
        return (w[1], _written(w[2]) if len(w) > 2 else None) if len(w) > 1 else ("", None)
    w = s.split(None, 1)
    return w[0], _written(w[1]) if len(w) > 1 else None


def slice_function(text: str, lines: list[str], first: int) -> Sliced | None:
    """The labels, braces, directives and statements of one function's text (its header's line
    up to the next header's) that its descriptor operands can depend on (see the module
    docstring).

    Args:
        text: the function's text.
        lines: its lines (``text.splitlines()``).
        first: the line number of the first.

    Returns:
        A :class:`Sliced`, or None where the text needs the lexer throughout: a line break other
        than ``\\n`` / ``\\r\\n``, or a statement left open at the end of the function body.
    """
    if len(lines) != text.count("\n") + (not text.endswith("\n")):
        return None  # a line break other than "\n" / "\r\n", which the lexer's numbering (splitlines) counts
    always: list[_Event] = []  # kept whatever the slice
    index: dict[str, list[_Event]] = {}  # name -> the statements writing it
    seeds: list[str] = []  # the statements whose operands the scanner resolves
    lexer = Lexer()
    order = depth = 0
    opened = brx = False
    clean = True
    read = len(lines)
    rows = _WORDS.findall("\n" + text)
    for k in range(read):
        w1, w2 = rows[k]
        if not w1:
            continue  # a blank line
        if clean:
            c = w1[0]
            line = lines[k]
            if "a" <= c <= "z" or c == "@" or c == ".":
                s = line.strip()
                # one plain statement on the line (else the lexer reads it)
                if s[-1] == ";" and s.count(";") == 1 and "/" not in s and '"' not in s \
                        and ("{" not in s or (c != "." and _VECTORS.fullmatch(s))):
                    if c == "@":
                        w = s.split(None, 3)
                        w1, w2 = (w[1], w[2].partition(",")[0].rstrip("; \t")) if len(w) > 2 else (w[-1], "")
                        c = w1[:1]
                    colon = w1.find(":")
                    if colon < 0 or w1[colon + 1:colon + 2] == ":":  # (a lone ':': a label first)
                        order += 1
                        e = (order, "stmt", first + k, s[:-1], w1)
                        if c == ".":
                            if not w1.startswith((".loc", ".file")):
                                always.append(e)
                            continue
                        if w1.startswith(_ALWAYS):
                            always.append(e)
                            if w1.startswith(RESOLVED):
                                seeds.append(e[3])
                            elif w1.startswith("brx"):
                                brx = True
                        if w2[:1] == "%" and "|" not in w2:  # the common case: one register written
                            if w2 in index:
                                index[w2].append(e)
                            else:
                                index[w2] = [e]
                        elif w2 and w2[0] != "[" and not w2[0].isdigit():  # (an address, a number: none)
                            names = _statement(e[3])[1]
                            if names == ["."]:
                                always.append(e)
                            elif names is not None:
                                for n in names:
                                    index.setdefault(n, []).append(e)
                        continue
                elif c == "." and w1 in (".loc", ".file") and not any(x in s.partition("//")[0] for x in ';{}/"'):
                    continue  # a line directive the scanner ignores
            elif c == "/" and w1[:2] == "//":
                continue  # a comment
            elif (c == "{" or c == "}") and line.strip() == c:
                order += 1
                always.append((order, "open" if c == "{" else "close", first + k, c, ""))
                depth += 1 if c == "{" else -1
                opened = True
                if depth == 0:
                    read = k + 1
                    break
                continue
            elif w1[-1] == ":" and _LABEL_LINE.fullmatch(line.strip()):
                order += 1
                always.append((order, "label", first + k, w1[:-1], ""))
                continue
        for kind, at, t in lexer.feed((lines[k],), first + k):
            order += 1
            if kind == "stmt":
                op, names = _statement(t)
                e = (order, kind, at, t, op)
                if op[:1] == "." or op.startswith(_ALWAYS) or names == ["."]:
                    always.append(e)
                    if op.startswith(RESOLVED):
                        seeds.append(t)
                    brx = brx or op.startswith("brx")
                if names is not None and names != ["."] and op[:1] != ".":
                    for n in names:
                        index.setdefault(n, []).append(e)
            else:
                always.append((order, kind, at, t, ""))
                if kind != "label":
                    depth += 1 if kind == "open" else -1
                    opened = True
        clean = lexer.clean
        if opened and depth == 0:
            read = k + 1
            break
    if not clean:
        return None
    # the slice: names the descriptor instructions read, closed over the statements writing them
    wanted: set[str] = set()
    sliced: dict[int, _Event] = {}
    work = [n for t in seeds for n in IDENT.findall(_NOT_DESCRIPTORS.sub(" ", t))]
    while work:
        name = work.pop()
        if name in wanted:
            continue
        wanted.add(name)
        for e in index.get(name, ()):
            if e[0] not in sliced:
                sliced[e[0]] = e
                work += IDENT.findall(e[3])
    kept = sorted({**{e[0]: e for e in always}, **sliced}.items())
    events = _without_quiet_blocks([e for _, e in kept], sliced, wanted, not brx)
    return Sliced(events, read)


def _without_quiet_blocks(kept: list[_Event], sliced: dict[int, _Event], wanted: set[str],
                          quiet_ok: bool) -> list[tuple[str, int, str]]:
    """The events of ``kept`` but the braced blocks inside the function body that the slice
    cannot see, each whole (inline-asm blocks: a barrier's wait loop, a ``printf``'s call
    sequence), and the ``setp`` statements that compare none of the ``wanted`` names (the
    widening's thresholds come from those that do). A block is left out when it holds only
    nested blocks, labels, ``.reg`` / ``.param`` declarations, ``bra`` to its own labels, and
    ``setp`` / ``call`` outside the slice: control enters it at the top and leaves at the bottom,
    and no definition in it reaches past it. Blocks stay unless ``quiet_ok`` (False where a
    ``brx.idx``, which may reach any label, is in the function)."""
    drop: set[int] = set()
    # per open block: [first index, quiet so far, labels, branch targets not yet resolved]
    frames: list[list[Any]] = []
    for i, (o, kind, _, t, op) in enumerate(kept):
        if kind == "stmt":
            if op.startswith("setp") and o not in sliced and not any(n in wanted for n in IDENT.findall(t)):
                drop.add(i)
            elif frames:
                if op.startswith("bra"):
                    frames[-1][3].append(t.rsplit(None, 1)[-1])
                elif not (op == ".reg" or op == ".param" or (op.startswith("call") and o not in sliced)):
                    frames[-1][1] = False
        elif kind == "open":
            frames.append([i, True, set(), []])
        elif kind == "close":
            if not frames:
                continue
            start, quiet, labels, targets = frames.pop()
            escaping = [x for x in targets if x not in labels]
            if frames:
                frames[-1][3] += escaping
                frames[-1][1] = frames[-1][1] and quiet
                if quiet and not escaping and quiet_ok:
                    drop.update(range(start, i + 1))
        elif frames:  # a label
            frames[-1][2].add(t)
    return [(kind, at, " ".join(t.split()) if kind == "stmt" else t)
            for i, (_, kind, at, t, _) in enumerate(kept) if i not in drop]
