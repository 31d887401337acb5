"""PTX text to statements and operands: the first layer of :mod:`descgen.ptx`.

- :func:`events`: PTX lines -> ``stmt`` (``;``-terminated, possibly over several lines, whitespace
  collapsed), ``label``, and ``open`` / ``close`` scope braces, each with its first line; comments
  dropped, strings kept whole (PTX ISA §4: a statement ends at ``;``; §11 line directives end at
  the newline).
- :func:`split_operands`: top-level comma-separated operands; :func:`first_operand`, the first.
- :func:`parse_int`: a PTX integer literal (§4.5.1); :func:`ptxas_int`: the 64-bit word ptxas reads
  for it, and :func:`ptxas_overflows`: whether ptxas rejects it (E48).
- :func:`parse_operand`: one operand as a small tree (:data:`Operand`): an immediate, a register
  name, a vector ``{a, _, b}`` (``_`` is PTX's sink, §9.7.1: "a bit bucket"), a ``|``-pair of
  destinations (``%r|%p``), an address ``[...]``, a symbol with an offset, or other text.
  Register names are left as written; :mod:`descgen.ptx.dataflow` resolves them in scope.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Iterable, Iterator

__all__ = ["events", "Lexer", "split_operands", "first_operand", "parse_int", "ptxas_int", "ptxas_overflows",
           "parse_operand", "Operand", "IDENT"]

_LEX = re.compile(r'[;{}"]|//|/\*')
_LABEL = re.compile(r"\s*([A-Za-z_$%][\w$]*)\s*:(?!:)")
#: Directives that end at the end of their line rather than at a ';' (PTX ISA §11).
_LINE_DIRECTIVES = (".version", ".target", ".address_size", ".file", ".loc")


def events(lines: Iterable[str]) -> Iterator[tuple[str, int, str]]:
    """``(kind, line, text)``: ``stmt`` (``;``-terminated, possibly over several lines, whitespace
    collapsed; the line directives end at the newline), ``label``, ``open`` and ``close`` (scope
    braces), with the line each starts on. Comments are dropped; strings are kept whole."""
    lexer = Lexer()
    yield from lexer.feed(lines)
    yield from lexer.finish()


class Lexer:
    """:func:`events` in parts: :meth:`feed` lines (numbered from ``first``), as many times as
    wanted, then :meth:`finish`. Between feeds, :attr:`clean` says whether the lines read so far
    end between statements (nothing pending, no comment open), where a caller may leave lines
    out and resume at another line."""

    __slots__ = ("parts", "start", "depth", "in_comment")

    def __init__(self) -> None:
        self.parts: list[str] = []  # the statement read so far
        self.start = 0  # its first line
        self.depth = 0  # braces inside the current statement (vector operands, initializers)
        self.in_comment = False

    @property
    def clean(self) -> bool:
        return not self.parts and not self.in_comment and self.depth == 0

    def finish(self) -> Iterator[tuple[str, int, str]]:
        """The statement left without its ``;`` at the end, if any."""
        stmt = self._flush()
        if stmt:
            yield ("stmt", self.start, stmt)

    def _flush(self) -> str:
        stmt = " ".join("".join(self.parts).split())
        self.parts.clear()
        return stmt

    def feed(self, lines: Iterable[str], first: int = 1) -> Iterator[tuple[str, int, str]]:
        """The events of ``lines``, the first numbered ``first``."""
        parts, flush = self.parts, self._flush
        start, depth, in_comment = self.start, self.depth, self.in_comment
        try:
            for n, line in enumerate(lines, first):
                pos = 0
                if in_comment:
                    k = line.find("*/")
                    if k < 0:
                        continue
                    pos, in_comment = k + 2, False
                colon = ":" in line
                while True:
                    if not parts and colon and depth == 0:
                        m = _LABEL.match(line, pos)
                        if m:
                            yield ("label", n, m.group(1))
                            pos = m.end()
                            continue
                    m = _LEX.search(line, pos)
                    seg = line[pos:] if m is None else line[pos:m.start()]
                    if parts:
                        parts.append(seg)
                    elif seg and not seg.isspace():
                        start = n
                        parts.append(seg)
                    if m is None:
                        break
                    ch = m.group()
                    pos = m.end()
                    if ch == ";":
                        if depth:
                            parts.append(";")
                            continue
                        stmt = flush()
                        if stmt:
                            yield ("stmt", start, stmt)
                    elif ch == "{":
                        pending = "".join(parts).strip()
                        if depth == 0 and (not pending or (pending[0] == "." and "=" not in pending)):
                            parts.clear()
                            if pending:
                                yield ("stmt", start, " ".join(pending.split()))
                            yield ("open", n, "{")
                        else:
                            if not parts:
                                start = n
                            depth += 1
                            parts.append("{")
                    elif ch == "}":
                        if depth == 0:
                            stmt = flush()
                            if stmt:
                                yield ("stmt", start, stmt)
                            yield ("close", n, "}")
                        else:
                            depth -= 1
                            parts.append("}")
                    elif ch == '"':
                        k = pos
                        while True:
                            k = line.find('"', k)
                            if k < 0 or line[k - 1] != "\\":
                                break
                            k += 1
                        if not parts:
                            start = n
                        end = len(line) if k < 0 else k + 1
                        parts.append(line[m.start():end])
                        pos = end
                    elif ch == "//":
                        break
                    else:  # /* ... */
                        k = line.find("*/", pos)
                        if k < 0:
                            in_comment = True
                            break
                        if parts:
                            parts.append(" ")
                        pos = k + 2
                if parts:
                    if depth == 0 and parts[0].lstrip().startswith(_LINE_DIRECTIVES):
                        stmt = flush()
                        if stmt:
                            yield ("stmt", start, stmt)
                    else:
                        parts.append(" ")
        finally:
            self.start, self.depth, self.in_comment = start, depth, in_comment


def split_operands(text: str) -> list[str]:
    """Top-level comma-separated operands (commas inside ``[]``, ``{}``, ``()`` do not split)."""
    if "{" not in text and "[" not in text and "(" not in text:
        return [t.strip() for t in text.split(",") if t.strip()]
    out: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(text):
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    last = text[start:].strip()
    if last:
        out.append(last)
    return out


def first_operand(rest: str) -> str:
    """The text of the first top-level operand of ``rest`` (what follows an opcode; a vector
    ``{...}`` whole): an instruction's destination when it has one (PTX ISA §9.7)."""
    if rest[:1] == "{":
        end = rest.find("}")
        return rest if end < 0 else rest[:end + 1]
    return rest.split(",", 1)[0]


_INT = re.compile(r"(-)?(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)[uU]?")
_SIGN_BIT = 1 << 63
_WORD = (1 << 64) - 1


def parse_int(text: str) -> int | None:
    """A PTX integer literal (``0x1F``, ``0b101``, ``017`` octal, ``42``, ``42U``, ``-1``) as a
    Python int, exactly as written (any size), or None if ``text`` is not one (PTX ISA §4.5.1
    integer constants). What ptxas makes of it: :func:`ptxas_int`."""
    m = _INT.fullmatch(text.strip())
    if not m:
        return None
    digits = m.group(2)
    if digits[:2].lower() == "0x":
        v = int(digits[2:], 16)
    elif digits[:2].lower() == "0b":
        v = int(digits[2:], 2)
    elif digits[0] == "0" and len(digits) > 1:
        v = int(digits[1:], 8)
    else:
        v = int(digits)
    return -v if m.group(1) else v


def ptxas_overflows(text: str) -> bool:
    """Whether ptxas 13.0 stops at the integer literal ``text`` with "Constant overflow" (E48):
    it reads the digits into a 64-bit total that wraps, and a digit read while the total is
    2**63 or more overflows (``0x7fffffffffffffff0`` is read, wrapped; ``0x80000000000000000``
    overflows). A literal below 2**63 never does. False for what is not a literal."""
    m = _INT.fullmatch(text.strip())
    if not m:
        return False
    digits = m.group(2)
    if digits[:2].lower() in ("0x", "0b"):
        radix, digits = (16 if digits[1] in "xX" else 2), digits[2:]
    else:
        radix = 8 if digits[0] == "0" else 10
    if int(digits, radix) < _SIGN_BIT:
        return False
    total = 0
    for d in digits:
        if total >= _SIGN_BIT:
            return True
        total = (total * radix + int(d, 16)) & _WORD
    return False


def ptxas_int(text: str) -> int | None:
    """The 64-bit word ptxas 13.0 reads for the integer literal ``text`` (E48): the literal
    modulo 2**64, a minus sign negating it modulo 2**64 (``-1`` is ``0xffffffffffffffff``,
    ``0x1999912345678abcd`` is ``0x999912345678abcd``); None when ``text`` is no literal or ptxas
    rejects it (:func:`ptxas_overflows`). An operand of ``w`` bits then takes the word's low ``w``
    bits, whatever the instruction's type (``tests/corpus/wide_immediates.json``)."""
    n = parse_int(text)
    if n is None or ptxas_overflows(text):
        return None
    return n & _WORD


#: An operand: ``("imm", int)`` (the literal as written, of any size: an operand of ``w`` bits
#: takes its low ``w`` bits, as ptxas does, E48), ``("name", text)`` (a register, symbol or label
#: as written, ``%tid.x`` included), ``("sink",)`` (``_``), ``("vec", (Operand, ...))``, ``("pair",
#: (Operand, Operand))`` (``a|b``), ``("sym", name, offset)`` (``name+8``), ``("addr", text)``
#: (``[...]``), ``("other", text)`` (float literals, an integer literal ptxas rejects, anything else).
Operand = tuple[Any, ...]

IDENT = re.compile(r"[%$]?[A-Za-z_$][\w$]*(?:\.[xyzw])?")
_SYM_OFF = re.compile(r"([A-Za-z_$][\w$]*)\s*\+\s*(\S+)")


@functools.lru_cache(maxsize=65536)
def parse_operand(text: str) -> Operand:
    """One operand as written (see :data:`Operand`). Never raises. Cached: operands repeat (an
    Operand is immutable)."""
    t = text.strip()
    if not t:
        return ("other", t)
    c = t[0]
    if c == "{" and t.endswith("}"):
        return ("vec", tuple(parse_operand(p) for p in split_operands(t[1:-1])))
    if c == "[":
        return ("addr", t)
    if "|" in t and c != "(":
        a, _, b = t.partition("|")
        return ("pair", (parse_operand(a), parse_operand(b)))
    if t == "_":
        return ("sink",)
    if c.isdigit() or c == "-":
        n = parse_int(t)
        if n is None or ptxas_overflows(t):  # a literal ptxas rejects is no value (E48)
            return ("other", t)
        return ("imm", n)
    if IDENT.fullmatch(t):
        return ("name", t)
    m = _SYM_OFF.fullmatch(t)
    if m:
        off = parse_int(m.group(2))
        if off is not None:
            return ("sym", m.group(1), off)
    return ("other", t)
