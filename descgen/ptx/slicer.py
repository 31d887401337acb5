"""A function's lines to the statements its descriptor operands can depend on: the scanner's fast
reader (scan throughput: bench/bench_scan.py).

Most statements of a kernel with a ``tcgen05.mma`` or ``wgmma.mma_async`` (its epilogue, its
loads and math, its barrier waits) never reach a descriptor operand. :func:`slice_function` finds
the ones that can without reading the others. One regular expression (:data:`_ROWS`) sorts the
function's lines in one pass: a line holding one plain statement (``[@guard] opcode operands;``,
what compilers write on almost every line, possibly with a scope's ``{`` before it or ``}`` after
it) gives its opcode and its first operand (the destination: PTX ISA §9.7, an instruction's
destination operands come first); a brace, a label, a comment, a ``.loc`` line is told apart;
every other line (several statements, a label before a statement, a statement over several lines,
strings, comments after code) goes through :class:`~descgen.ptx.lexer.Lexer` as the scanner would
read it. A plain statement stays a line number until the slice asks for it.
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

import operator
import re
from dataclasses import dataclass
from itertools import chain, compress
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
#: First pass, one row per line (after its ``\n``), in C: (0) the predicate (or ``p|q`` pair) a
#: ``setp`` alone on its line writes (kept always: :data:`_ALWAYS`); (1) the register a *plain* line
#: writes: one statement alone on its line, ``[@guard] opcode %dest, ...;`` (braces only as whole
#: vectors; no comment, no string), whose opcode is no control flow, no tcgen05 / wgmma, no ``setp``
#: or ``call`` (:data:`_ALWAYS`) and no directive; (2) the vector it writes instead (``{%r1, _}``);
#: nothing for a line that writes no register (a plain store, an address or a number first); (3) a
#: ``bra`` to a label and (4) a directive (``.reg``...; not ``.loc`` / ``.file``), alone on their
#: line (kept always); (5) a label alone; nothing for a line that holds nothing the scanner reads (a
#: comment line, a ``.loc`` / ``.file`` line, a blank line); else (6) the line: a *special* line,
#: read in order by :data:`_ROW` (braces, several statements, the lexer's lines...). ASCII: a name
#: with other letters is a special line (the lexer reads it).
_LINES = re.compile(
    r"\n[ \t]*+(?:"
    r"(?:@!?%?[\w$]++[ \t]++)?setp\.[a-z0-9_.]*+[ \t]++(%[\w$]++(?:\|%[\w$]++)?)(?=[ \t]*+,)"
    r"[^\n;{}/\"]*+;[ \t\r]*+(?=\n|\Z)"
    r"|(?:@!?%?[\w$]++[ \t]++)?(?!" + "|".join(_ALWAYS) + ")"
    r"[a-z][a-zA-Z0-9_.]*+(?:::[a-zA-Z0-9_.]++)*+[ \t]++"
    r"(?:(%[\w$]++)(?=[ \t]*+,)|(\{[^\n;{}/\"|]*+\})(?=[ \t]*+,)|\[[^\n\]]*+\]|[0-9-][^\s,;]*+)"
    r"[^\n;{}/\"]*+(?:\{[^\n;{}/\"]*+\}[^\n;{}/\"]*+)*+;[ \t\r]*+(?=\n|\Z)"
    r"|(?:@!?%?[\w$]++[ \t]++)?(bra(?:\.uni)?)[ \t]++[\w$]++[ \t]*+;[ \t\r]*+(?=\n|\Z)"
    r"|(?!\.loc|\.file)(\.[a-z][a-z0-9_.]*+(?:::[a-z0-9_.]++)*+)(?:[ \t][^\n;{}/\"]*+)?;[ \t\r]*+(?=\n|\Z)"
    r"|([A-Za-z_$%][\w$]*+):[ \t\r]*+(?=\n|\Z)"
    r"|(?://[^\n]*+|\.(?:loc|file)(?=[ \t\r\n]|\Z)[^\n;{}/\"]*+(?://[^\n]*+)?)?[ \t\r]*+(?=\n|\Z)"
    r"|([^\n]++))", re.ASCII)
#: Second pass, a special line (after a ``\n``): nothing (as above); one plain statement with (1) a
#: scope's ``{`` before it, (2) its text, (3) its opcode, (4) its first operand, (5) a scope's
#: ``}`` after it; (6) a scope brace alone (a comment after it); (7) a label alone; else (8) the
#: line, for the lexer.
_ROW = re.compile(
    r"\n[ \t]*(?:"
    r"//[^\n]*|\.(?:loc|file)(?=[ \t\r\n]|\Z)[^\n;{}/\"]*(?://[^\n]*)?"
    r"|(\{[ \t]*)?((?:@[^\s;{}/\"]++[ \t]+)?([a-z.][^\s;{}/\"]*+)"
    r"(?:(?:[ \t]+|(?=\{))(\{[^{}\n;/\"]*\}|[^\s,;{}/\"]*+)[^\n;{}/\"]*+(?:\{[^{}\n;/\"]*\}[^\n;{}/\"]*+)*+)?);"
    r"([ \t]*\})?"
    r"|([{}])(?:[ \t]*//[^\n]*)?"
    r"|([A-Za-z_$%][\w$]*):"
    r"|"
    r")[ \t\r]*+(?![^\n])"
    r"|\n([^\n]*)")
_SETP = operator.itemgetter(0)
_WRITTEN = operator.itemgetter(1)
_VECTOR = operator.itemgetter(2)
_BRA = operator.itemgetter(3)
_DIRECTIVE_LINE = operator.itemgetter(4)
_LABEL_LINE = operator.itemgetter(5)
_SPECIAL = operator.itemgetter(6)
#: An opcode as the plain-statement reader takes it (a single ':' is a label's: the lexer).
_OPCODE = re.compile(r"[a-z.][\w.]*(?:::[\w.]+)*")
#: What a plain statement's opcode asks of :func:`slice_function` (:func:`_opcode_class`).
_PLAIN, _KEEP, _SEED, _BRX, _DIRECTIVE, _IGNORED, _LEXER = range(7)
_CLASSES: dict[str, int] = {}


def _opcode_class(op: str) -> int:
    """:data:`_PLAIN` (kept if in the slice), :data:`_KEEP` (always kept: :data:`_ALWAYS`),
    :data:`_SEED` (kept, and its operands seed the slice: :data:`RESOLVED`), :data:`_BRX` (kept;
    the function has a ``brx.idx``), :data:`_DIRECTIVE` (kept), :data:`_IGNORED` (``.loc``,
    ``.file``) or :data:`_LEXER` (not an opcode: the lexer reads the line). Cached."""
    c = _CLASSES.get(op)
    if c is None:
        if not _OPCODE.fullmatch(op):
            c = _LEXER
        elif op[0] == ".":
            c = _IGNORED if op.startswith((".loc", ".file")) else _DIRECTIVE
        elif op.startswith(RESOLVED):
            c = _SEED
        elif op.startswith("brx"):
            c = _BRX
        else:
            c = _KEEP if op.startswith(_ALWAYS) else _PLAIN
        if len(_CLASSES) < 4096:
            _CLASSES[op] = c
    return c


#: Two registers written as a ``|`` pair (``setp``'s ``%p|%q``).
_PAIR = re.compile(r"%[\w$]+\|%[\w$]+")
#: Whitespace but line breaks (statement texts hold none); used where there is whitespace other
#: than blanks and tabs (almost never: else str.replace does the same).
_BLANKS = re.compile(r"[^\S\n]+")
#: The operands of a tcgen05.mma / tcgen05.cp / wgmma.mma_async that are no descriptor: vectors
#: (wgmma's accumulators and A registers, the disable-output-lane mask) and addresses (tensor
#: memory). Every descriptor operand is a register or an immediate (§9.7.16.10.9.1, §9.7.15.5.2).
_NOT_DESCRIPTORS = re.compile(r"\{[^{}]*\}|\[[^\]]*\]")


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
        than ``\\n`` / ``\\r\\n``, a statement left open at the end of the function body, or a
        line the lexer reads as more than 1024 events.
    """
    if len(lines) != text.count("\n") + (not text.endswith("\n")):
        return None  # a line break other than "\n" / "\r\n", which the lexer's numbering (splitlines) counts
    # An event's key is its line's offset << 10, plus its place on the line where the lexer reads
    # the line: keys sort in file order. A plain line is kept as its offset alone (most are never
    # looked at again), every other event as an _Event.
    n = len(lines)
    rows = _LINES.findall("\n" + text)
    written = list(map(_WRITTEN, rows))  # per line: the register a plain line writes, else ""
    always: list[_Event] = []  # kept whatever the slice
    compares: list[_Event] = []  # setp statements of special lines: kept if they compare a name of the slice
    events: dict[int, _Event] = {}  # the statements of special lines that write names, by key
    index: dict[str, list[int]] = {}  # name -> the keys of those statements
    seeds: list[str] = []  # the statements whose operands the scanner resolves
    lexed: list[int] = []  # lines the lexer read past a special line (a statement left open)
    lexer = Lexer()
    depth = 0
    opened = brx = False
    read = n
    skip_to = 0
    classes = _CLASSES
    for k in compress(range(n), map(_SPECIAL, rows)):
        if k < skip_to:
            continue  # read by the lexer already
        x = rows[k][6].rstrip()
        if x == "{" or x == "}":  # (most special lines: a scope brace alone)
            lead = stmt = op = dest = trail = label = other = ""
            brace = x
        else:
            m = _ROW.match("\n" + lines[k])
            assert m is not None  # (its last branch takes any line)
            lead, stmt, op, dest, trail, brace, label, other = m.groups("")
        if op:
            c = classes.get(op)
            if c is None:
                c = _opcode_class(op)
            if c < _DIRECTIVE or (c != _LEXER and "{" not in stmt):  # (a directive with braces: the lexer)
                key = k << 10 | 1
                if lead:
                    always.append((k << 10, "open", first + k, "{", ""))
                    depth += 1
                    opened = True
                if c:
                    if c == _KEEP and op.startswith("setp"):
                        compares.append((key, "stmt", first + k, stmt, op))
                    elif c != _IGNORED:
                        always.append((key, "stmt", first + k, stmt, op))
                    if c == _SEED:
                        seeds.append(stmt)
                    elif c == _BRX:
                        brx = True
                if c < _DIRECTIVE:
                    names = _dest_names(dest, stmt)
                    if names == ["."]:
                        if not c:
                            always.append((key, "stmt", first + k, stmt, op))
                    elif names:
                        events[key] = (key, "stmt", first + k, stmt, op)
                        for name in names:
                            index.setdefault(name, []).append(key)
                if trail:
                    always.append((k << 10 | 2, "close", first + k, "}", ""))
                    depth -= 1
                    if depth == 0:
                        read = k + 1
                        break
                continue
        elif brace:
            always.append((k << 10, "open" if brace == "{" else "close", first + k, brace, ""))
            depth += 1 if brace == "{" else -1
            opened = True
            if depth == 0:
                read = k + 1
                break
            continue
        elif label:
            always.append((k << 10, "label", first + k, label, ""))
            continue
        elif not other:
            continue  # a blank line, a comment, a line directive the scanner ignores
        # the lexer: this line, and the next ones while a statement or comment is left open
        j = k
        while True:
            if j > k:
                lexed.append(j)
            key = j << 10
            for kind, at, t in lexer.feed((lines[j],), first + j):
                if key & 1023 == 1023:
                    return None  # (over 1023 events on one line)
                if kind == "stmt":
                    sop, names = _statement(t)
                    e = (key, kind, at, t, sop)
                    if sop.startswith("setp"):
                        compares.append(e)
                    elif sop[:1] == "." or sop.startswith(_ALWAYS) or names == ["."]:
                        always.append(e)
                        if sop.startswith(RESOLVED):
                            seeds.append(t)
                        brx = brx or sop.startswith("brx")
                    if names is not None and names != ["."] and sop[:1] != ".":
                        events[key] = e
                        for name in names:
                            index.setdefault(name, []).append(key)
                else:
                    always.append((key, kind, at, t, ""))
                    if kind != "label":
                        depth += 1 if kind == "open" else -1
                        opened = True
                key += 1
            j += 1
            if lexer.clean or j == n or (opened and depth == 0):
                break
        skip_to = j
        if opened and depth == 0:
            read = j
            break
    if not lexer.clean:
        return None
    # plain lines by the register they write: the first and the last line writing each (C loops)
    last = dict(zip(written, range(n)))
    firsts = dict(zip(reversed(written[:n]), range(n - 1, -1, -1)))
    gone = set(lexed)
    # vector writes and setp lines: the names they write, in C; indexed by line only if the slice
    # asks for one of those names (descriptors rarely pass through them)
    vectors = list(map(_VECTOR, rows[:read]))
    vector_lines = [k for k in compress(range(read), vectors) if k not in gone]
    vector_names = set(" ".join(vectors).replace(",", " ").replace("{", " ").replace("}", " ").split()) - {"_"}
    setps = list(map(_SETP, rows[:read]))
    setp_lines = [k for k in compress(range(read), setps) if k not in gone]
    setp_names = set("|".join(setps).split("|"))
    lazy: dict[str, list[int]] | None = None
    # the slice: names the descriptor instructions read, closed over the statements writing them
    wanted: set[str] = set()
    sliced: dict[int, _Event] = {}
    work = [name for t in seeds for name in IDENT.findall(_NOT_DESCRIPTORS.sub(" ", t))]
    while work:
        name = work.pop()
        if name in wanted:
            continue
        wanted.add(name)
        keys = index.get(name, [])
        if name in vector_names or name in setp_names:
            if lazy is None:
                lazy = {}
                for k in vector_lines:
                    for v in vectors[k][1:-1].replace(",", " ").split():
                        if v != "_":  # (PTX's sink: nothing written)
                            lazy.setdefault(v, []).append(k << 10 | 1)
                for k in setp_lines:
                    for v in setps[k].split("|"):
                        lazy.setdefault(v, []).append(k << 10 | 1)
            keys = keys + lazy.get(name, [])
        f = firsts.get(name)
        if f is not None and name:
            at = f
            while True:
                if at < read and at not in gone:
                    keys = keys + [at << 10 | 1]
                if at >= last[name]:
                    break
                at = written.index(name, at + 1)
        for key in keys:
            if key not in sliced:
                sliced[key] = e = events[key] if key in events else _plain(key, lines, first)
                work += IDENT.findall(e[3])
    # branches, directives and labels alone on their line: kept whatever the slice
    for k in chain(compress(range(read), map(_BRA, rows)), compress(range(read), map(_DIRECTIVE_LINE, rows))):
        if k not in gone:
            always.append(_plain(k << 10 | 1, lines, first))
    for k, label in zip(compress(range(read), map(_LABEL_LINE, rows)), filter(None, map(_LABEL_LINE, rows[:read]))):
        if k not in gone:
            always.append((k << 10, "label", first + k, label, ""))
    # a setp outside the slice is kept where it compares a name of the slice (the widening's thresholds)
    for e in chain(compares, (_plain(k << 10 | 1, lines, first) for k in setp_lines)):
        if e[0] not in sliced and not wanted.isdisjoint(_words(e[3])):
            always.append(e)
    kept = sorted({**{e[0]: e for e in always}, **sliced}.items())
    return Sliced(_without_quiet_blocks([e for _, e in kept], sliced, not brx), read)


def _words(stmt: str) -> list[str]:
    """A statement's words: its opcode, then its operands (a ``!`` negation dropped); a ``setp``
    compares a name of the slice when one of them is."""
    return stmt.replace(",", " ").replace("!", " ").split()


def _plain(key: int, lines: list[str], first: int) -> _Event:
    """The event of the plain line (one statement alone on it) at ``key``."""
    t = lines[key >> 10].strip()[:-1]
    w = t.split(None, 2)
    return (key, "stmt", first + (key >> 10), t, w[1] if t[0] == "@" else w[0])


def _dest_names(dest: str, stmt: str) -> list[str] | None:
    """The names a special line's statement writes, from its first operand ``dest`` (see
    :func:`_written`; ``["."]``: read it whole)."""
    d = dest[:1]
    if d == "%" and "|" not in dest:  # one register
        return [dest]
    if d == "{" and "|" not in dest:  # a vector of registers (``_``: none)
        return [x for x in dest[1:-1].replace(",", " ").split() if x != "_"]
    if (d == "$" or d.isalpha()) and "|" not in dest:  # a name without % (a label: harmless)
        return [dest]
    if d == "%" and _PAIR.fullmatch(dest):  # setp's p|q
        return dest.split("|")
    if d and d != "[" and d != "-" and not d.isdigit():  # (an address, a number: none)
        return _statement(stmt)[1]
    return None


def _without_quiet_blocks(kept: list[_Event], sliced: dict[int, _Event], quiet_ok: bool) -> list[tuple[str, int, str]]:
    """The events of ``kept`` but the braced blocks inside the function body that the slice
    cannot see, each whole (inline-asm blocks: a barrier's wait loop, a ``printf``'s call
    sequence). A block is left out when it holds only nested blocks, labels, ``.reg`` /
    ``.param`` declarations, ``bra`` to its own labels, and ``call`` outside the slice (a
    ``setp`` comparing no name of the slice is not in ``kept``): control enters it at the top and
    leaves at the bottom, and no definition in it reaches past it. Blocks stay unless
    ``quiet_ok`` (False where a ``brx.idx``, which may reach any label, is in the function)."""
    drop: set[int] = set()
    # per open block: [first index, quiet so far, labels, branch targets not yet resolved]
    frames: list[list[Any]] = []
    for i, (o, kind, _, t, op) in enumerate(kept):
        if kind == "stmt":
            if frames:
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
    out = [(kind, at, t) for i, (_, kind, at, t, _) in enumerate(kept) if i not in drop] if drop else \
        [(kind, at, t) for _, kind, at, t, _ in kept]
    # statements with whitespace collapsed (as the lexer gives them): in one pass over them all
    stmts = [i for i, e in enumerate(out) if e[0] == "stmt"]
    joined = "\n".join(out[i][2] for i in stmts)
    if not joined.isascii() or any(c in joined for c in "\r\x0b\x0c\x1c\x1d\x1e\x1f"):
        joined = _BLANKS.sub(" ", joined)
    else:  # blanks and tabs only: the same in a few passes of str.replace
        joined = joined.replace("\t", " ")
        while "  " in joined:
            joined = joined.replace("  ", " ")
    collapsed = joined.split("\n")
    for i, t in zip(stmts, collapsed):
        out[i] = ("stmt", out[i][1], t.strip())
    return out
