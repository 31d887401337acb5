"""PTX scanning: every ``tcgen05.mma`` / ``tcgen05.cp`` in a PTX file, its descriptor operands
resolved where they are constants, and each one checked with the instruction's own qualifiers.

:func:`scan_ptx` reads PTX text (comments, several statements on a line and statements over
several lines are all fine), finds every ``tcgen05.mma`` in all its forms (§9.7.16.10.9.1-4:
``.sp``, ``.ws``, ``.ws.sp``, ``.block_scale{.scale_vectorsize}``, ``.collector::*``, ``.ashift``,
``[a-tmem]``) and every ``tcgen05.cp`` (§9.7.16.9.2), and resolves each descriptor operand
(``idesc``, ``a-desc``, ``b-desc``, ``zero-column-mask-desc``, ``s-desc``) when it is

- an immediate (decimal, ``0x`` hex, ``0b`` binary, octal with a leading 0, optional ``U`` suffix,
  optional ``-``: wrapped to the operand's width), or
- a register last written, earlier in the same straight-line block, by an unpredicated ``mov``
  from an immediate (or from a register that is itself resolved).

A label, ``bra``/``brx``/``ret``/``exit``/``call``/``trap``, a ``{`` or ``}`` and a function
header end the block: what was known before is forgotten. A predicated write, or any other
instruction that writes the register (its first operand), makes it unknown. Nothing is guessed:
an operand that cannot be resolved gets a ``PTX-OPERAND-UNRESOLVED`` note saying why, and the
rules that read it are not checked.

Every instruction is checked by the one :func:`descgen.check_mma`, given the instruction's
qualifiers as context (kind, ``cta_group``, ``.ws``, ``.sp``, the scale vector size, A in tensor
memory) and the file's target; an operand that is not resolved is a word known at run time only
(:class:`descgen.engine.KnownBits`), so every rule whose inputs are known still runs.
``tcgen05.cp``'s ``s-desc`` is checked with :func:`descgen.validate_smem`. Descriptor
findings keep their codes (``IDESC-*``, ``SMEM-*``, ``ZCM-*``, ``MMA-*``) and name the operand.
The instruction-syntax rules (``PTX-*``: ``.kind::mxf4nvf4`` without a scale vector size,
``.ashift`` limits, collector buffers, ``.block_scale`` vs kind, ``scale-input-d``, mixed
``cta_group``, ``tcgen05.cp`` shapes, the target) are catalogued in ``tables/rules.toml`` like every
other rule (``applies = "ptx"``).

Decisions (docs/spec-errata.md): E33 (operand resolution and straight-line blocks), E34 (the
``.target`` directive), E35 (the scale vector size when ``.scale_vectorsize`` is omitted), E36
(severities and what is reported when a word is missing).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping

from .engine import KnownBits, hex_word
from .errors import DescgenError, Finding, HasFindings
from .loader import KINDS
from .catalog import catalog, constraints
from .context import normalize_arch
from .identify import key_fields
from .instruction import check_mma
from .report import Report
from .smem import validate_smem
from .types import Arch, Kind

__all__ = ["scan_ptx", "scan_file", "ScanResult", "ScanInstruction", "ScanOperand", "ScanFinding", "SCAN_CODES",
           "parse_int"]

#: The scanner's own codes (catalogued in tables/rules.toml with ``applies = "ptx"``).
SCAN_CODES = (
    "PTX-OPERAND-UNRESOLVED",
    "PTX-TARGET-MISSING",
    "PTX-TARGET-UNKNOWN",
    "PTX-MALFORMED",
    "PTX-BLOCK-SCALE",
    "PTX-SCALE-VEC-REQUIRED",
    "PTX-COLLECTOR",
    "PTX-ASHIFT",
    "PTX-ASHIFT-M",
    "PTX-SCALE-INPUT-D",
    "PTX-CTA-GROUP-MIXED",
    "PTX-CP-SHAPE",
)

#: PTX's names for the descriptor operands (the instruction pages' syntax), by descgen role.
OPERAND_NAMES = {"idesc": "idesc", "a_desc": "a-desc", "b_desc": "b-desc", "zcm": "zero-column-mask-desc",
                 "s_desc": "s-desc"}
#: Operand widths in bits (§9.7.16.10.9.1: 32-bit idesc, 64-bit a-desc/b-desc; §9.7.16.10.9.3:
#: 64-bit zero-column-mask-desc; §9.7.16.9.2: 64-bit s-desc).
WIDTHS = {"idesc": 32, "a_desc": 64, "b_desc": 64, "zcm": 64, "s_desc": 64}

_MX = ("mxf8f6f4", "mxf4", "mxf4nvf4")
#: E35: the scale vector size when .scale_vectorsize is omitted (§9.7.16.10.9.1: .kind::mxf4
#: defaults to .block32; .kind::mxf4nvf4 must name one; .kind::mxf8f6f4 unstated: ptxas 13.0 takes
#: .block32, its only size besides the alias .scale_vec::1X).
DEFAULT_SCALE_VEC = {"mxf8f6f4": "block32", "mxf4": "block32"}
#: §9.7.16.10.9.1 (disable-output-lane): the vector has 4 elements for cta_group::1, 8 for ::2.
_LANE_VECTOR = {1: 4, 2: 8}
#: §9.7.16.9.2: tcgen05.cp shapes and the multicast each needs or allows (** / *** marks).
_CP_SHAPES = {"128x256b": (), "4x256b": (), "128x128b": (), "64x128b": ("warpx2::02_13", "warpx2::01_23"),
              "32x128b": ("warpx4",)}
_CP_SRC = ("b6x16_p32", "b4x16_p64")
_CP_DST = ("b8x16",)
#: Opcodes that end a straight-line block (E33).
_ENDS_BLOCK = ("bra", "brx", "ret", "exit", "call", "trap")


# --------------------------------------------------------------------------------------------
# Results.


@dataclass(frozen=True, slots=True)
class ScanOperand:
    """One descriptor operand of an instruction.

    Attributes:
        role: ``idesc``, ``a_desc``, ``b_desc``, ``zcm`` (zero-column-mask-desc) or ``s_desc``.
        text: the operand as written (``%rd7``, ``0x08400010``).
        value: the resolved word (unsigned, ``width`` bits), or None.
        width: 32 (idesc) or 64 bits.
        origin: ``"immediate"`` or ``"mov"`` when resolved, else None.
        origin_line: the line of the ``mov`` that set it (the instruction's own line for an immediate).
        reason: why it is not resolved (None when it is).
    """

    role: str
    text: str
    value: int | None
    width: int
    origin: str | None = None
    origin_line: int | None = None
    reason: str | None = None

    @property
    def name(self) -> str:
        """PTX's name for the operand (``b-desc``)."""
        return OPERAND_NAMES[self.role]

    @property
    def resolved(self) -> bool:
        return self.value is not None

    @property
    def hex(self) -> str | None:
        return None if self.value is None else hex_word(self.value, self.width)

    def label(self) -> str:
        """``b-desc %rd2 = 0x4000404000010440``; ``idesc 272629776 = 0x10400010`` (words in hex);
        ``b-desc 0x...`` for an immediate already written so."""
        if self.value is None or self.text.lower() == self.hex:
            return f"{self.name} {self.text}"
        return f"{self.name} {self.text} = {self.hex}"

    def as_dict(self) -> dict[str, Any]:
        return {"role": self.role, "name": self.name, "text": self.text, "resolved": self.resolved, "value": self.hex,
                "width": self.width, "origin": self.origin, "origin_line": self.origin_line, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class ScanFinding:
    """A finding at a line of the file.

    Attributes:
        line: 1-based line of the statement (its first line) or directive.
        finding: the :class:`descgen.Finding` (its ``code``, ``severity``, ``field``, ``value``,
            ``allowed``, ``rule``, ``source``).
        subject: what it is about, as printed: ``b-desc %rd2 = 0x...``, ``tcgen05.mma``, ``.target``.
        operand: the operand role it concerns (``b_desc``...), or None for the instruction or file.
        detail: for the scanner's own codes, what was found (the message prints it instead of the
            rule sentence, which ``descgen explain CODE`` gives).
    """

    line: int
    finding: Finding
    subject: str
    operand: str | None = None
    detail: str | None = None

    @property
    def code(self) -> str:
        return self.finding.code

    @property
    def severity(self) -> str:
        return self.finding.severity

    @property
    def source(self) -> str:
        return self.finding.source

    def message(self) -> str:
        """One line: ``CODE subject: field = value: rule (allowed: ...) [source]`` for a descriptor
        finding, ``CODE subject: detail (allowed: ...) [source]`` for the scanner's own."""
        f = self.finding
        allowed = f" (allowed: {f.allowed})" if f.allowed else ""
        if self.detail is not None:
            return f"{f.code} {self.subject}: {self.detail}{allowed} [{f.source}]"
        field_name = f.field.split(".", 1)[1] if "." in f.field else f.field
        return f"{f.code} {self.subject}: {field_name} = {_show(f.value)}: {f.rule}{allowed} [{f.source}]"

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "operand": self.operand, "subject": self.subject, **self.finding.as_dict(),
                "message": self.message()}


@dataclass(frozen=True)
class ScanInstruction:
    """One ``tcgen05.mma`` or ``tcgen05.cp`` statement.

    Attributes:
        line: 1-based line where the statement starts.
        opcode: ``tcgen05.mma`` or ``tcgen05.cp``.
        text: the statement on one line, comments removed (``tcgen05.mma.cta_group::1... ;``).
        qualifiers: what the opcode says: ``kind``, ``cta_group``, ``ws``, ``sp``, ``block_scale``,
            ``scale_vec`` (as written, or None), ``scale_vec_used`` (with the default of E35),
            ``collector`` (``a::fill``, ``b2::use``... or None), ``ashift``, ``a_tmem``; for
            ``tcgen05.cp``: ``cta_group``, ``shape``, ``multicast``, ``dst_fmt``, ``src_fmt``.
        operands: the descriptor operands, resolved or not.
        report: the validation report of the resolved words (None when none could be checked).
    """

    line: int
    opcode: str
    text: str
    qualifiers: Mapping[str, Any]
    operands: tuple[ScanOperand, ...]
    report: Report | None = None

    def operand(self, role: str) -> ScanOperand | None:
        return next((o for o in self.operands if o.role == role), None)

    def summary(self) -> list[str]:
        """One line per operand: its value, where it came from and its decoded fields (-v)."""
        out = []
        decoded = self.report.decoded if self.report is not None else {}
        for op in self.operands:
            if not op.resolved:
                out.append(f"{op.name} {op.text}: unresolved: {op.reason}")
                continue
            where = f"{op.label()} ({'immediate' if op.origin == 'immediate' else f'mov at line {op.origin_line}'})"
            d = decoded.get(op.role) or decoded.get({"s_desc": "smem"}.get(op.role, op.role))
            out.append(where + (f": {key_fields(d)}" if d is not None else ""))
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "opcode": self.opcode,
            "text": self.text,
            "qualifiers": dict(self.qualifiers),
            "operands": [o.as_dict() for o in self.operands],
            "checked": self.report is not None,
            "not_checked": [n.as_dict() for n in self.report.not_checked] if self.report is not None else [],
            "decoded": {role: d.as_dict() for role, d in self.report.decoded.items()} if self.report is not None else {},
        }


@dataclass(frozen=True)
class ScanResult(HasFindings):
    """What :func:`scan_ptx` found in one file.

    Behaves like a :class:`descgen.Report` for its findings (``findings``, ``codes``, ``ok``,
    ``errors``), which are ordered by line.

    Attributes:
        filename: as given (``<stdin>`` by default).
        arch: the target the rules ran with (None: not known, target rules not checked).
        arch_from: ``"target"`` (the file's ``.target``), ``"option"`` (the ``arch`` argument) or None.
        target: the ``.target`` directive as written and its line, or None.
        instructions: every ``tcgen05.mma`` / ``tcgen05.cp``, in file order.
        findings: every finding, by line.
    """

    filename: str
    arch: str | None
    arch_from: str | None
    target: tuple[int, str] | None
    instructions: tuple[ScanInstruction, ...]
    findings: tuple[ScanFinding, ...]

    def __iter__(self) -> Iterator[ScanFinding]:
        return iter(self.findings)

    def __len__(self) -> int:
        return len(self.findings)

    @property
    def counts(self) -> dict[str, int]:
        """``instructions``, ``operands``, ``resolved``, ``unresolved``, ``errors``, ``warnings``, ``notes``."""
        ops = [o for i in self.instructions for o in i.operands]
        sev = [f.severity for f in self.findings]
        return {"instructions": len(self.instructions), "operands": len(ops), "resolved": sum(o.resolved for o in ops),
                "unresolved": sum(not o.resolved for o in ops), "errors": sev.count("error"),
                "warnings": sev.count("warning"), "notes": sev.count("info")}

    def lines(self) -> list[str]:
        """The compiler-style report: ``FILE:LINE: severity: CODE message`` per finding (severity
        ``error``, ``warning`` or ``note``: descgen's ``info``, E36)."""
        return [f"{self.filename}:{f.line}: {severity_word(f.severity)}: {f.message()}" for f in self.findings]

    def summary(self) -> str:
        c = self.counts
        return (f"{self.filename}: {c['instructions']} instruction{'s' * (c['instructions'] != 1)}, "
                f"{c['resolved']} operand{'s' * (c['resolved'] != 1)} resolved, {c['unresolved']} unresolved, "
                f"{c['errors']} error{'s' * (c['errors'] != 1)}, {c['warnings']} warning{'s' * (c['warnings'] != 1)}")

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.filename,
            "ok": self.ok,
            "arch": self.arch,
            "arch_from": self.arch_from,
            "target": None if self.target is None else {"line": self.target[0], "text": self.target[1]},
            "counts": self.counts,
            "instructions": [i.as_dict() for i in self.instructions],
            "findings": [f.as_dict() for f in self.findings],
        }


def severity_word(severity: str) -> str:
    """The compiler word for a severity: ``error``, ``warning``, ``note`` (for ``info``)."""
    return "note" if severity == "info" else severity


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "?" if value is None else str(value)


# --------------------------------------------------------------------------------------------
# Lexing: comments, statements, labels and braces.

_COMMENT = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*.*?\*/', re.S)
_IDENT = re.compile(r"[A-Za-z_$%][A-Za-z0-9_$]*")


def _strip_comments(text: str) -> str:
    """Comments become spaces (newlines kept, so lines still count); strings are left alone."""
    def repl(m: re.Match[str]) -> str:
        s = m.group(0)
        return s if s.startswith('"') else re.sub(r"[^\n]", " ", s)
    return _COMMENT.sub(repl, text)


@dataclass(frozen=True, slots=True)
class _Event:
    kind: str  # "stmt", "label", "open", "close"
    line: int
    text: str


#: Directives that end at the end of their line rather than at a ';' (PTX ISA §11).
_LINE_DIRECTIVES = (".version", ".target", ".address_size", ".file", ".loc")


def _events(text: str) -> Iterator[_Event]:
    """Statements (``;``-terminated, possibly over several lines; the line directives end at the
    newline), labels and scope braces, with the line each starts on."""
    text = _strip_comments(text)
    buf: list[str] = []
    content = False  # buf holds something other than whitespace
    start = line = 1
    depth = 0  # braces inside the current statement (vector operands, initializers)
    in_str = False

    def flush() -> Iterator[_Event]:
        pending = " ".join("".join(buf).split())
        if pending:
            yield _Event("stmt", start, pending)

    for ch in text:
        if in_str:
            buf.append(ch)
            in_str = ch != '"'
            if ch == "\n":
                line += 1
            continue
        if ch == "\n":
            if content and depth == 0 and "".join(buf).lstrip().startswith(_LINE_DIRECTIVES):
                yield from flush()
                buf, content = [], False
            line += 1
            buf.append(ch)
            continue
        if ch.isspace():
            buf.append(ch)
            continue
        if not content:
            start, content = line, True
        if ch == '"':
            in_str = True
        elif ch == "{":
            pending = "".join(buf).strip()
            if depth == 0 and (not pending or (pending.startswith(".") and "=" not in pending)):
                yield from flush()
                buf, content = [], False
                yield _Event("open", line, "{")
                continue
            depth += 1
        elif ch == "}":
            if depth == 0:
                yield from flush()
                buf, content = [], False
                yield _Event("close", line, "}")
                continue
            depth -= 1
        elif ch == ";" and depth == 0:
            yield from flush()
            buf, content = [], False
            continue
        elif ch == ":" and depth == 0:
            pending = "".join(buf).strip()
            if _IDENT.fullmatch(pending or "-"):
                buf, content = [], False
                yield _Event("label", start, pending)
                continue
        buf.append(ch)
    yield from flush()


def _split_operands(text: str) -> list[str]:
    """Top-level comma-separated operands (commas inside ``[]``, ``{}``, ``()`` do not split)."""
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


_INT = re.compile(r"(-)?(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)[uU]?")


def parse_int(text: str) -> int | None:
    """A PTX integer literal (``0x1F``, ``0b101``, ``017`` octal, ``42``, ``42U``, ``-1``) as a
    Python int, or None if ``text`` is not one (PTX ISA §4.5.1 integer constants)."""
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


# --------------------------------------------------------------------------------------------
# Register tracking (E33).


@dataclass(frozen=True, slots=True)
class _Reg:
    value: int | None
    line: int
    how: str  # "mov" when known; else why it is not


class _Tracker:
    """What is known about registers in the current straight-line block."""

    def __init__(self) -> None:
        self.known: dict[str, _Reg] = {}
        self.stale: dict[str, tuple[_Reg, str]] = {}
        self.block = "the start of the file"

    def end_block(self, why: str) -> None:
        for name, reg in self.known.items():
            self.stale[name] = (reg, why)
        self.known = {}
        self.block = why

    def write(self, name: str, reg: _Reg) -> None:
        self.known[name] = reg
        self.stale.pop(name, None)

    def lookup(self, name: str) -> _Reg:
        if name in self.known:
            return self.known[name]
        if name in self.stale:
            reg, why = self.stale[name]
            was = f"set by mov at line {reg.line}" if reg.value is not None else reg.how
            return _Reg(None, reg.line, f"{was}, but {why} ends the straight-line block")
        return _Reg(None, 0, f"not set by a mov from an immediate in this straight-line block (since {self.block})")


def _fits(value: int, width: int) -> int | None:
    """A literal as a ``width``-bit word: negative values wrap (two's complement); None if too wide."""
    if value < 0:
        value += 1 << width
        return value if value >= 1 << (width - 1) else None
    return value if value < 1 << width else None


def _mov(tracker: _Tracker, opcode: str, operands: list[str], line: int, guard: str | None) -> None:
    """Track ``mov.TYPE d, a``: an immediate or a known register gives ``d`` a value."""
    if not operands:
        return
    dest = operands[0]
    if not _IDENT.fullmatch(dest):
        return
    if guard:
        tracker.write(dest, _Reg(None, line, f"set by a predicated mov ({guard}) at line {line}: not trusted"))
        return
    parts = opcode.split(".")
    width = next((int(p[1:]) for p in parts[1:] if p[:1] in "bus" and p[1:].isdigit()), None)
    src = operands[1] if len(operands) > 1 else ""
    value = parse_int(src)
    if value is not None and width is not None:
        word = _fits(value, width)
        if word is None:
            tracker.write(dest, _Reg(None, line, f"set by {opcode} at line {line} from {src}, which does not fit {width} bits"))
        else:
            tracker.write(dest, _Reg(word, line, "mov"))
        return
    if _IDENT.fullmatch(src) and src.startswith("%"):
        reg = tracker.lookup(src)
        if reg.value is not None:
            tracker.write(dest, _Reg(reg.value, line, "mov"))
        else:
            tracker.write(dest, _Reg(None, line, f"copied by {opcode} at line {line} from {src}, which is {reg.how}"))
        return
    what = "a vector (packing is not resolved)" if src.startswith("{") else src or "nothing"
    tracker.write(dest, _Reg(None, line, f"set by {opcode} at line {line} from {what}, not an immediate"))


def _destinations(first: str) -> list[str]:
    """The registers an instruction's first operand writes: ``%r1``, ``{%r1, %r2}``, ``%p|%q``."""
    if first.startswith("["):
        return []
    return [t for t in re.split(r"[{},|\s]+", first) if t.startswith("%") and _IDENT.fullmatch(t)]


# --------------------------------------------------------------------------------------------
# Scanning.


class _Scan:
    def __init__(self, filename: str, arch: Arch | None) -> None:
        self.filename = filename
        self.rules = catalog()
        self.findings: list[ScanFinding] = []
        self.instructions: list[ScanInstruction] = []
        self.tracker = _Tracker()
        self.arch = normalize_arch(arch)
        self.arch_from = "option" if self.arch else None
        self.target: tuple[int, str] | None = None
        self.cta_groups: dict[int, int] = {}  # cta_group -> first line, in the current function
        self.function = ""

    # findings --------------------------------------------------------------------------------

    def add(self, line: int, finding: Finding, subject: str, operand: str | None = None) -> None:
        self.findings.append(ScanFinding(line, finding, subject, operand))

    def rule(self, code: str, line: int, subject: str, field: str, value: Any, allowed: str, detail: str,
             operand: str | None = None) -> None:
        self.findings.append(ScanFinding(line, self.rules[code].finding(field, value, allowed, detail), subject, operand,
                                         detail))

    # directives and control ------------------------------------------------------------------

    def directive(self, line: int, text: str) -> None:
        head = text.split(None, 1)
        if head[0] == ".target" and self.target is None:
            self.target = (line, text)
            self._target(line, head[1] if len(head) > 1 else "")
        if any(w in (".entry", ".func") for w in text.split()):
            self.tracker.end_block(f"the function header at line {line}")
            self.cta_groups = {}
            m = re.search(r"\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)", text)
            self.function = m.group(1) if m else ""

    def _target(self, line: int, spec: str) -> None:
        """E34: the last ``sm_`` entry of the first ``.target`` is the target; the options
        (``debug``, ``texmode_*``, ``map_f64_to_f32``) are not targets."""
        names = [t.strip() for t in spec.split(",") if t.strip().startswith(("sm_", "compute_"))]
        if self.arch_from == "option":
            return
        if not names:
            return
        name = names[-1]
        try:
            self.arch = normalize_arch(name)
            self.arch_from = "target"
        except DescgenError:
            c = constraints()
            self.rule("PTX-TARGET-UNKNOWN", line, ".target", "arch", name, ", ".join(c.targets),
                      f".target {name}; the rules that need the target are not checked (--arch sets one)")

    # instructions ----------------------------------------------------------------------------

    def statement(self, line: int, text: str) -> None:
        if text.startswith("."):
            self.directive(line, text)
            return
        guard = None
        m = re.match(r"@!?[%\w$]+\s*", text)
        if m:
            guard = m.group(0).strip()
            text = text[m.end():]
        parts = text.split(None, 1)
        if not parts:
            return
        opcode, rest = parts[0], (parts[1] if len(parts) > 1 else "")
        while rest.startswith("."):  # qualifiers may be spaced out: "tcgen05.mma.cta_group::1 .kind::f16"
            more, _, rest = rest.partition(" ")
            opcode += more
        text = f"{opcode} {rest}".strip()
        base = opcode.split(".", 1)[0]
        operands = _split_operands(rest)
        if opcode.startswith("tcgen05."):
            self._cta_group(line, opcode)
        if opcode.startswith("tcgen05.mma"):
            self.mma(line, text, opcode, operands)
        elif opcode.startswith("tcgen05.cp"):
            self.cp(line, text, opcode, operands)
        if base == "mov":
            _mov(self.tracker, opcode, operands, line, guard)
        elif base in _ENDS_BLOCK:
            self.tracker.end_block(f"the {base} at line {line}")
        elif operands:
            what = "loaded from memory by" if base in ("ld", "ldu") else "set by"
            for reg in _destinations(operands[0]):
                note = f"{what} {opcode} at line {line}" + (f" (predicated {guard})" if guard else "")
                self.tracker.write(reg, _Reg(None, line, note))

    def _cta_group(self, line: int, opcode: str) -> None:
        m = re.search(r"\.cta_group::(\d)", opcode)
        if not m:
            return
        g = int(m.group(1))
        other = next((k for k in self.cta_groups if k != g), None)
        if other is not None:
            where = f" in {self.function}" if self.function else ""
            self.rule("PTX-CTA-GROUP-MIXED", line, opcode.split(".cta_group")[0], "cta_group", g,
                      f"{other} (as at line {self.cta_groups[other]})",
                      f".cta_group::{g} here, .cta_group::{other} at line {self.cta_groups[other]}{where}")
        self.cta_groups.setdefault(g, line)

    def operand(self, role: str, text: str) -> ScanOperand:
        width = WIDTHS[role]
        value = parse_int(text)
        if value is not None:
            word = _fits(value, width)
            if word is None:
                return ScanOperand(role, text, None, width, reason=f"the immediate {text} does not fit {width} bits")
            return ScanOperand(role, text, word, width, "immediate")
        if not (_IDENT.fullmatch(text) and text.startswith("%")):
            return ScanOperand(role, text, None, width, reason="not a register or an integer immediate")
        reg = self.tracker.lookup(text)
        if reg.value is None:
            return ScanOperand(role, text, None, width, reason=reg.how)
        if reg.value >= 1 << width:
            return ScanOperand(role, text, None, width, origin_line=reg.line,
                               reason=f"set by mov at line {reg.line} to {reg.value:#x}, wider than {width} bits")
        return ScanOperand(role, text, reg.value, width, "mov", reg.line)

    def malformed(self, line: int, opcode: str, what: str) -> None:
        self.rule("PTX-MALFORMED", line, opcode, "instruction", opcode, "a form of the instruction's syntax", what)

    def mma(self, line: int, text: str, opcode: str, operands: list[str]) -> None:
        q = self._mma_qualifiers(line, opcode, "tcgen05.mma")
        if q is None:
            return
        name = "tcgen05.mma" + ".ws" * q["ws"] + ".sp" * q["sp"]
        layout = self._mma_operands(line, name, q, operands)
        if layout is None:
            return
        ops, extra = layout
        q["a_tmem"] = extra["a_tmem"]
        self._mma_syntax(line, name, q, extra)
        resolved = [self.operand(role, t) for role, t in ops]
        instr_report = self._check_mma(line, name, q, resolved)
        self.instructions.append(ScanInstruction(line, "tcgen05.mma", text + ";", q, tuple(resolved), instr_report))

    def _mma_qualifiers(self, line: int, opcode: str, name: str) -> dict[str, Any] | None:
        q: dict[str, Any] = {"kind": None, "cta_group": None, "ws": False, "sp": False, "block_scale": False,
                             "scale_vec": None, "scale_vec_used": None, "collector": None, "ashift": False,
                             "a_tmem": None}
        seen: set[str] = set()
        for token in opcode.split(".")[2:]:
            key = token.split("::", 1)[0]
            if key in seen:
                self.malformed(line, name, f"qualifier .{key} given twice")
                return None
            seen.add(key)
            if token in ("ws", "sp", "block_scale", "ashift"):
                q[token] = True
            elif re.fullmatch(r"cta_group::[12]", token):
                q["cta_group"] = int(token[-1])
            elif token.startswith("kind::") and token[6:] in KINDS:
                q["kind"] = token[6:]
            elif re.fullmatch(r"scale_vec::[124]X", token) or token in ("block16", "block32"):
                if "scale_vectorsize" in seen:
                    self.malformed(line, name, "two scale vector sizes")
                    return None
                seen.add("scale_vectorsize")
                q["scale_vec"] = token.removeprefix("scale_vec::")
            elif re.fullmatch(r"collector::(a|b[0-3])::(fill|use|lastuse|discard)", token):
                q["collector"] = token.removeprefix("collector::")
            else:
                self.malformed(line, name, f"unknown qualifier .{token}")
                return None
        for need in ("cta_group", "kind"):
            if q[need] is None:
                self.malformed(line, name, f"no .{need} qualifier")
                return None
        q["scale_vec_used"] = q["scale_vec"] or (DEFAULT_SCALE_VEC.get(q["kind"]) if q["block_scale"] else None)
        return q

    def _mma_operands(self, line: int, name: str, q: dict[str, Any], operands: list[str]
                      ) -> tuple[list[tuple[str, str]], dict[str, Any]] | None:
        """The descriptor operands by role, and the other operands' shape, per syntax form."""
        def bracket(s: str) -> bool:
            return s.startswith("[") and s.endswith("]")

        head = 5 if q["sp"] else 4  # [d-tmem], A, b-desc, {[sp-meta-tmem],} idesc
        if len(operands) < head + 1:
            self.malformed(line, name, f"{len(operands)} operands; expected at least {head + 1}")
            return None
        d, a, b = operands[:3]
        idesc = operands[head - 1]
        tail = operands[head:]
        extra: dict[str, Any] = {"a_tmem": bracket(a), "lanes": None, "scale_input_d": None, "zcm": None}
        problems = []
        if not bracket(d):
            problems.append(f"d-tmem {d} is not a [tensor memory address]")
        if q["sp"] and not bracket(operands[3]):
            problems.append(f"sp-meta-tmem {operands[3]} is not a [tensor memory address]")
        if q["block_scale"] or q["kind"] in _MX:  # (.ws has no block-scaled form: MMA-WS-KIND says so)
            form = "[scale-A-tmem], [scale-B-tmem], enable-input-d"
            ok = len(tail) == 3 and bracket(tail[0]) and bracket(tail[1])
        elif q["ws"]:
            form = "enable-input-d {, zero-column-mask-desc}"
            ok = 1 <= len(tail) <= 2 and not tail[0].startswith(("{", "["))
            if ok and len(tail) == 2:
                extra["zcm"] = tail[1]
        else:
            form = "{ disable-output-lane }, enable-input-d {, scale-input-d}"
            rest = list(tail)
            if rest and rest[0].startswith("{"):
                extra["lanes"] = rest.pop(0)
            ok = 1 <= len(rest) <= 2 and not any(r.startswith(("{", "[")) for r in rest)
            if ok and len(rest) == 2:
                extra["scale_input_d"] = rest[1]
        if not ok:
            problems.append(f"after idesc: {', '.join(tail)}; expected {form}")
        if problems:
            self.malformed(line, name, "; ".join(problems))
            return None
        if extra["lanes"] is not None:
            n = len(_split_operands(extra["lanes"][1:-1]))
            want = _LANE_VECTOR[q["cta_group"]]
            if n != want:
                self.malformed(line, name, f"disable-output-lane has {n} elements; .cta_group::{q['cta_group']} takes {want}")
        ops = [("idesc", idesc)]
        if not extra["a_tmem"]:
            ops.append(("a_desc", a))
        ops.append(("b_desc", b))
        if extra["zcm"] is not None:
            ops.append(("zcm", extra["zcm"]))
        return ops, extra

    def _mma_syntax(self, line: int, name: str, q: dict[str, Any], extra: dict[str, Any]) -> None:
        """The instruction-syntax rules of §9.7.16.10.9.1-4 (not descriptor rules)."""
        kind, mx = q["kind"], q["kind"] in _MX
        subject = f"{name}.kind::{kind}"
        if mx and not q["block_scale"]:
            self.rule("PTX-BLOCK-SCALE", line, subject, "block_scale", False, ".block_scale",
                      f".kind::{kind} without .block_scale")
        elif q["block_scale"] and not mx:
            self.rule("PTX-BLOCK-SCALE", line, subject, "block_scale", True, "no .block_scale",
                      f".block_scale with .kind::{kind}")
        elif q["scale_vec"] and not q["block_scale"]:
            self.rule("PTX-BLOCK-SCALE", line, subject, "scale_vec", q["scale_vec"], "no scale vector size",
                      "a scale vector size without .block_scale")
        if kind == "mxf4nvf4" and q["block_scale"] and q["scale_vec"] is None:
            self.rule("PTX-SCALE-VEC-REQUIRED", line, subject, "scale_vec", None, ".scale_vec::2X, .scale_vec::4X, .block16, .block32",
                      ".kind::mxf4nvf4.block_scale with no scale vector size")
        coll = q["collector"]
        if coll is not None:
            buffer = coll.split("::")[0]
            if q["ws"] and buffer == "a":
                self.rule("PTX-COLLECTOR", line, subject, "collector", coll, "b0, b1, b2, b3 (collector for B)",
                          f".collector::{coll} on tcgen05.mma.ws")
            elif not q["ws"] and buffer != "a":
                self.rule("PTX-COLLECTOR", line, subject, "collector", coll, "a (collector for A)",
                          f".collector::{coll} without .ws")
        if q["ashift"]:
            if q["ws"]:
                self.rule("PTX-ASHIFT", line, subject, "ashift", True, "no .ashift", ".ashift on tcgen05.mma.ws")
            elif not extra["a_tmem"]:
                self.rule("PTX-ASHIFT", line, subject, "ashift", True, "A in tensor memory ([a-tmem])",
                          ".ashift with A from a shared memory descriptor")
            elif coll in ("a::fill", "a::use"):
                self.rule("PTX-ASHIFT", line, subject, "collector", coll, "a::lastuse, a::discard",
                          f".ashift with .collector::{coll}")
        sid = extra["scale_input_d"]
        if sid is not None:
            value = parse_int(sid)
            c = constraints()
            if kind not in ("tf32", "f16"):
                self.rule("PTX-SCALE-INPUT-D", line, subject, "scale_input_d", sid, ".kind::tf32, .kind::f16",
                          f"scale-input-d with .kind::{kind}")
            elif value is None or not 0 <= value <= 15:
                self.rule("PTX-SCALE-INPUT-D", line, subject, "scale_input_d", sid, "an immediate 0..15",
                          f"scale-input-d {sid}")
            elif self.arch is not None and not c.supports(self.arch, "scale_input_d"):
                self.rule("PTX-SCALE-INPUT-D", line, subject, "arch", self.arch, ", ".join(c.requires["scale_input_d"]),
                          f"scale-input-d on {self.arch}")

    def _context(self, q: Mapping[str, Any]) -> dict[str, Any]:
        return {"cta_group": q["cta_group"], "ws": q["ws"], "sp": q["sp"], "scale_vec": q["scale_vec_used"],
                "a_tmem": q["a_tmem"], "arch": self.arch}

    def _check_mma(self, line: int, name: str, q: Mapping[str, Any], ops: list[ScanOperand]) -> Report | None:
        by = {o.role: o for o in ops}
        for o in ops:
            if not o.resolved:
                self.rule("PTX-OPERAND-UNRESOLVED", line, f"{o.name} {o.text}", o.role, o.text,
                          "", o.reason or "", o.role)
        ctx = self._context(q)
        idesc, a, b, zcm = (by.get(r) for r in ("idesc", "a_desc", "b_desc", "zcm"))
        # Every operand through the one check_mma: an operand the scanner could not resolve is a
        # word known at run time only, so each rule whose inputs are known runs (E36).
        words = {r: o.value if o.resolved else KnownBits(0, 0) for r, o in by.items()}
        report: Report | None = None
        if any(o.resolved for o in ops) or "idesc" in words:
            report = _check_mma_cached(words["idesc"], q["kind"], words.get("a_desc"), words["b_desc"], words.get("zcm"),
                                       tuple(sorted(ctx.items())))
        if report is not None:
            for f in report.findings:
                role = _role_of(f)
                subject = by[role].label() if role in by else f"{name}.kind::{q['kind']}"
                self.add(line, f, subject, role if role in by else None)
            idesc_word = report.decoded.get("idesc")
            if q["ashift"] and idesc_word is not None and "m" not in idesc_word.unknown:
                m = idesc_word.value("m")
                if m not in (128, 256):
                    self.rule("PTX-ASHIFT-M", line, idesc.label(), "m", m, "128, 256", f".ashift with M = {m}", "idesc")
        return report

    def cp(self, line: int, text: str, opcode: str, operands: list[str]) -> None:
        name = "tcgen05.cp"
        q: dict[str, Any] = {"cta_group": None, "shape": None, "multicast": None, "dst_fmt": None, "src_fmt": None}
        tokens = opcode.split(".")[2:]
        for i, token in enumerate(tokens):
            if re.fullmatch(r"cta_group::[12]", token) and q["cta_group"] is None:
                q["cta_group"] = int(token[-1])
            elif token in _CP_SHAPES and q["shape"] is None:
                q["shape"] = token
            elif token in ("warpx2::02_13", "warpx2::01_23", "warpx4") and q["multicast"] is None:
                q["multicast"] = token
            elif token in _CP_DST and q["dst_fmt"] is None:
                q["dst_fmt"] = token
            elif token in _CP_SRC and q["src_fmt"] is None:
                q["src_fmt"] = token
            else:
                self.malformed(line, name, f"unknown or repeated qualifier .{token}")
                return
        if q["cta_group"] is None or q["shape"] is None:
            self.malformed(line, name, "no .cta_group" if q["cta_group"] is None else "no .shape")
            return
        if len(operands) != 2 or not operands[0].startswith("["):
            self.malformed(line, name, f"operands {', '.join(operands) or '(none)'}; expected [taddr], s-desc")
            return
        need = _CP_SHAPES[q["shape"]]
        subject = f"{name}.{q['shape']}"
        if need and q["multicast"] not in need:
            self.rule("PTX-CP-SHAPE", line, subject, "multicast", q["multicast"], ", ".join(need),
                      f".{q['shape']} with {'.' + q['multicast'] if q['multicast'] else 'no multicast'}")
        elif not need and q["multicast"]:
            self.rule("PTX-CP-SHAPE", line, subject, "multicast", q["multicast"], "none",
                      f".{q['shape']} with .{q['multicast']}")
        if (q["dst_fmt"] is None) != (q["src_fmt"] is None):
            self.rule("PTX-CP-SHAPE", line, subject, "dst_fmt" if q["dst_fmt"] is None else "src_fmt", None,
                      ".b8x16 with .b6x16_p32 or .b4x16_p64", "decompression names .dst_fmt and .src_fmt together")
        op = self.operand("s_desc", operands[1])
        report = None
        if not op.resolved:
            self.rule("PTX-OPERAND-UNRESOLVED", line, f"{op.name} {op.text}", op.role, op.text,
                      "", op.reason or "", op.role)
        else:
            report = validate_smem(op.value, arch=self.arch)
            for f in report.findings:
                self.add(line, f, op.label(), "s_desc")
        self.instructions.append(ScanInstruction(line, "tcgen05.cp", text + ";", q, (op,), report))

    # the whole file --------------------------------------------------------------------------

    def run(self, text: str) -> ScanResult:
        for ev in _events(text):
            if ev.kind == "stmt":
                self.statement(ev.line, ev.text)
            elif ev.kind == "label":
                self.tracker.end_block(f"the label {ev.text} at line {ev.line}")
            elif ev.kind == "open":
                self.tracker.end_block(f"the '{{' at line {ev.line}")
            else:
                self.tracker.end_block(f"the '}}' at line {ev.line}")
        if self.arch is None and self.instructions and self.target is None:
            first = self.instructions[0].line
            self.rule("PTX-TARGET-MISSING", first, "file", "arch", None, ", ".join(constraints().targets),
                      "no .target directive before the first tcgen05 instruction and no --arch; the rules that need the target are not checked")
        findings = sorted(self.findings, key=lambda f: f.line)  # stable: within a line, in the order found
        return ScanResult(self.filename, self.arch, self.arch_from, self.target, tuple(self.instructions), tuple(findings))


@functools.lru_cache(maxsize=4096)
def _check_mma_cached(idesc: int | KnownBits, kind: Kind, a_desc: int | KnownBits | None, b_desc: int | KnownBits,
                      zcm: int | KnownBits | None,
                      ctx: tuple[tuple[str, Any], ...]) -> Report:
    """:func:`descgen.check_mma`, once per distinct instruction (unrolled kernels repeat them; a
    Report is immutable)."""
    return check_mma(idesc=idesc, kind=kind, a_desc=a_desc, b_desc=b_desc, zcm=zcm, **dict(ctx))


def _prefixed(role: str, findings: Iterable[Finding]) -> list[Finding]:
    return [dataclasses.replace(f, field=f"{role}.{f.field}") for f in findings]


def _role_of(f: Finding) -> str:
    """The operand a validator finding is about: its field's prefix (``b_desc.swizzle``), the idesc
    for the idesc's own fields, the instruction for context fields."""
    head = f.field.split(".", 1)[0]
    if "." in f.field and head in WIDTHS:
        return head
    if f.field in ("cta_group", "ws", "sp", "scale_vec", "a_tmem", "arch", "kind"):
        return "instruction"
    return "idesc"


def scan_ptx(text: str, *, filename: str = "<stdin>", arch: Arch | None = None) -> ScanResult:
    """Scan PTX text for ``tcgen05.mma`` / ``tcgen05.cp`` and check every descriptor operand that
    is a constant.

    Args:
        text: the PTX source (a whole file or a fragment).
        filename: how findings name the file (``FILE:LINE: ...``).
        arch: the target (``sm_100a``...); overrides the file's ``.target``. None: the file's first
            ``.target`` (its last ``sm_`` entry, E34), or no target (target rules not checked).

    Returns:
        A :class:`ScanResult`: the instructions (qualifiers, operands resolved or not, the
        validation report of the resolved words) and the findings by line. Descriptor findings keep
        their codes (``IDESC-*``, ``SMEM-*``, ``ZCM-*``, ``MMA-*``); the scanner's own are ``PTX-*``
        (``descgen rules --applies ptx``).

    Raises:
        UsageError: ``arch`` is not a target descgen knows (``CONTEXT-ARCH``). Problems in the PTX
            itself are findings, never exceptions.
    """
    return _Scan(filename, arch).run(text)


def scan_file(path: str, *, arch: Arch | None = None) -> ScanResult:
    """:func:`scan_ptx` over a file (read as UTF-8, undecodable bytes replaced); findings name it
    ``path``. Raises OSError if it cannot be read."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        return scan_ptx(fh.read(), filename=path, arch=arch)


def implemented() -> frozenset[str]:
    """The catalog codes the scanner reports itself (a test checks them against the catalog)."""
    return frozenset(SCAN_CODES)
