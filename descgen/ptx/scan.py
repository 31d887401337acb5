"""PTX scanning: every ``tcgen05.mma`` / ``tcgen05.cp`` (and Hopper's ``wgmma.mma_async``) in a PTX
file, the bits of each descriptor operand known at compile time, and each instruction checked with
its own qualifiers.

:func:`scan_ptx` (and :func:`scan_stream`, one function at a time) reads PTX text line by line
(comments, several statements on a line and statements over several lines are fine), finds every
``tcgen05.mma`` in all its forms (§9.7.16.10.9.1-4: ``.sp``, ``.ws``, ``.ws.sp``,
``.block_scale{.scale_vectorsize}``, ``.collector::*``, ``.ashift``, ``[a-tmem]``) and every
``tcgen05.cp`` (§9.7.16.9.2), and gives each descriptor operand (``idesc``, ``a-desc``,
``b-desc``, ``zero-column-mask-desc``, ``s-desc``; 32 or 64 bits) its known bits
(:class:`descgen.engine.KnownBits`) and value range: an immediate (E33) is known; a register is
followed through the definitions that reach the instruction by :mod:`descgen.ptx.dataflow` (E38,
E42). Braces open register scopes; registers may be named without ``%`` when declared. Only
functions with such an instruction are analysed: text is read function by function and a function
with nothing the scanner reads is skipped unread (:func:`_unread`); a function with one is read
as the backward slice of its descriptor operands with its control flow
(:func:`descgen.ptx.slicer.slice_function`), or, where that reader declines, statement by
statement, the statements before its first tcgen05.mma / tcgen05.cp / wgmma.mma_async only
recorded (:class:`descgen.ptx.dataflow.Recorder`) until that instruction asks for their values.

Every instruction is checked by the one :func:`descgen.check_mma` with the instruction's
qualifiers as context (kind, ``cta_group``, ``.ws``, ``.sp``, the scale vector size, A in tensor
memory) and the file's target, so every field whose bits are known is checked and every rule
whose inputs are known runs; ``tcgen05.cp``'s ``s-desc`` goes through
:func:`descgen.validate_smem`. Descriptor findings keep their codes (``IDESC-*``, ``SMEM-*``,
``ZCM-*``, ``MMA-*``) and name the operand. An operand with unknown bits gets one
``PTX-OPERAND-UNRESOLVED`` note saying which fields and why; :class:`ScanTally` groups them for
the one-line summary. The instruction-syntax rules (``PTX-*``) are catalogued in
``tables/rules.toml`` (``applies = "ptx"``).

Hopper's ``wgmma.mma_async{.sp}`` (§9.7.15.5.2, §9.7.15.6.3; ``sm_90a``) is read the same way: its
shape, types, ``.satfinite`` and immediates (``scale-d``, ``imm-scale-a/b``, ``imm-trans-a/b``,
``sp-sel``) from the statement, its ``a-desc`` (unless A is in registers) and ``b-desc`` through the
dataflow, and the whole instruction goes to :func:`descgen.check_wgmma`. A ``wgmma`` under a
``.target`` other than ``sm_90a`` is ``PTX-TARGET-WGMMA``, once per file.

Decisions (docs/spec-errata.md): E33 (immediates), E34 (the ``.target`` directive), E35 (the
scale vector size when ``.scale_vectorsize`` is omitted), E36 (partly known words), E38 (known
bits over the whole function; how run-time bits are reported), E39 (a base offset without
swizzle is a note), E40 (the ``.version`` each feature needs; ``.ws`` first), E48 (an immediate
wider than its operand is read as ptxas reads it, its low bits, with ``PTX-IMMEDIATE-TRUNCATED``;
one ptxas rejects is ``PTX-MALFORMED``).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping

from ..engine import KnownBits, hex_word
from ..errors import DescgenError, Finding, HasFindings
from ..loader import KINDS
from ..catalog import catalog, constraints
from ..context import bare_target, normalize_arch
from ..engine import show_value
from ..identify import key_fields
from ..instruction import check_mma, check_wgmma
from ..report import Report
from ..smem import validate_smem
from ..types import Arch, Kind
from ..wgmma_facts import parse_wgmma_shape, wgmma_table
from .dataflow import Function, Recorder, Value
from .knownbits import kb_ext
from .lexer import Lexer, Operand, parse_int, split_operands
from .slicer import RESOLVED, slice_function

__all__ = ["scan_ptx", "scan_file", "scan_stream", "ScanStream", "ScanChunk", "ScanTally", "ScanResult",
           "ScanInstruction", "ScanOperand", "ScanFinding", "SCAN_CODES", "parse_int", "not_ptx", "ptx_files"]

#: The scanner's own codes (catalogued in tables/rules.toml with ``applies = "ptx"``).
SCAN_CODES = (
    "PTX-OPERAND-UNRESOLVED",
    "PTX-TARGET-MISSING",
    "PTX-TARGET-UNKNOWN",
    "PTX-TARGET-TCGEN05",
    "PTX-TARGET-WGMMA",
    "PTX-VERSION",
    "PTX-MALFORMED",
    "PTX-BLOCK-SCALE",
    "PTX-SCALE-VEC-REQUIRED",
    "PTX-COLLECTOR",
    "PTX-ASHIFT",
    "PTX-ASHIFT-M",
    "PTX-SCALE-INPUT-D",
    "PTX-CTA-GROUP-MIXED",
    "PTX-CP-SHAPE",
    "PTX-IMMEDIATE-TRUNCATED",
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


# --------------------------------------------------------------------------------------------
# Results.


@dataclass(frozen=True, slots=True)
class ScanOperand:
    """One descriptor operand of an instruction.

    Attributes:
        role: ``idesc``, ``a_desc``, ``b_desc``, ``zcm`` (zero-column-mask-desc) or ``s_desc``.
        text: the operand as written (``%rd7``, ``0x08400010``).
        value: the word (unsigned, ``width`` bits) when every bit is known, else None.
        width: 32 (idesc) or 64 bits.
        origin: when fully known, ``"immediate"`` or the opcode of the register's one definition
            (``mov.b32``), or None (several definitions agree).
        origin_line: the line of that definition (the instruction's own line for an immediate).
        reason: why some bits are unknown (None when all are known): the run-time leaves the value
            comes from (``"kernel parameter"``, ``"loop-carried, shared memory address"``).
        known: the known bits (:class:`descgen.engine.KnownBits`; ``mask`` = bits fixed at compile
            time), ``width`` bits.
        unknown: the descriptor fields with an unknown bit (``("start_address",)``), after decoding.
        range: the unsigned interval ``(lo, hi)`` every value of the operand lies in (E42), or None
            for a word every bit of which is known.
    """

    role: str
    text: str
    value: int | None
    width: int
    origin: str | None = None
    origin_line: int | None = None
    reason: str | None = None
    known: KnownBits | None = None
    unknown: tuple[str, ...] = ()
    range: tuple[int, int] | None = None

    @property
    def name(self) -> str:
        """PTX's name for the operand (``b-desc``)."""
        return OPERAND_NAMES[self.role]

    @property
    def resolved(self) -> bool:
        """True when every bit is known."""
        return self.value is not None

    @property
    def bits(self) -> KnownBits:
        """The known bits (all of them for a resolved word)."""
        if self.known is not None:
            return self.known
        return KnownBits(self.value, (1 << self.width) - 1) if self.value is not None else KnownBits(0, 0)

    @property
    def status(self) -> str:
        """``"known"`` (every bit), ``"partial"`` (some bits) or ``"unknown"`` (none)."""
        mask = self.bits.mask & ((1 << self.width) - 1)
        return "known" if mask == (1 << self.width) - 1 else "partial" if mask else "unknown"

    @property
    def hex(self) -> str | None:
        return None if self.value is None else hex_word(self.value, self.width)

    def picture(self) -> str:
        """The word's bits, most significant first, in groups of 4; ``?`` for an unknown bit."""
        b = self.bits
        chars = ["?" if not b.mask >> i & 1 else "1" if b.value >> i & 1 else "0" for i in range(self.width - 1, -1, -1)]
        return "_".join("".join(chars[i:i + 4]) for i in range(0, self.width, 4))

    def why_text(self) -> str:
        """``start_address unknown: shared memory address`` (what is unknown and why)."""
        what = ", ".join(self.unknown) if self.unknown and self.status == "partial" else "every field"
        return f"{what} unknown: {self.reason or 'run-time value'}"

    def label(self) -> str:
        """``b-desc %rd2 = 0x4000404000010440``; ``idesc 272629776 = 0x10400010`` (words in hex);
        ``b-desc 0x...`` for an immediate already written so."""
        if self.value is None or self.text.lower() == self.hex:
            return f"{self.name} {self.text}"
        return f"{self.name} {self.text} = {self.hex}"

    def as_dict(self) -> dict[str, Any]:
        b = self.bits
        return {"role": self.role, "name": self.name, "text": self.text, "resolved": self.resolved, "value": self.hex,
                "width": self.width, "status": self.status, "known_mask": hex_word(b.mask, self.width),
                "known_value": hex_word(b.value & b.mask, self.width), "unknown_fields": list(self.unknown),
                "origin": self.origin, "origin_line": self.origin_line, "reason": self.reason,
                "range": None if self.range is None else [hex_word(r, self.width) for r in self.range]}


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
        return f"{f.code} {self.subject}: {field_name} = {show_value(f.value)}: {f.rule}{allowed} [{f.source}]"

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "operand": self.operand, "subject": self.subject, **self.finding.as_dict(),
                "message": self.message()}


@dataclass(frozen=True)
class ScanInstruction:
    """One ``tcgen05.mma``, ``tcgen05.cp`` or ``wgmma.mma_async`` statement.

    Attributes:
        line: 1-based line where the statement starts.
        opcode: ``tcgen05.mma``, ``tcgen05.cp`` or ``wgmma.mma_async``.
        text: the statement on one line, comments removed (``tcgen05.mma.cta_group::1... ;``).
        qualifiers: what the opcode says: ``kind``, ``cta_group``, ``ws``, ``sp``, ``block_scale``,
            ``scale_vec`` (as written, or None), ``scale_vec_used`` (with the default of E35),
            ``collector`` (``a::fill``, ``b2::use``... or None), ``ashift``, ``a_tmem``; for
            ``tcgen05.cp``: ``cta_group``, ``shape``, ``multicast``, ``dst_fmt``, ``src_fmt``; for
            ``wgmma.mma_async``: ``sp``, ``shape``, ``m``, ``n``, ``k``, ``dtype``, ``atype``, ``btype``,
            ``satfinite``, ``op`` (``and`` for .b1), ``a_registers``, and the immediates ``scale_d``
            (None: a predicate), ``scale_a``, ``scale_b``, ``trans_a``, ``trans_b``, ``sp_sel`` (absent
            when the form has none).
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
        """Per operand: its value or known bits (``?`` = unknown bit), where it came from, the fields
        checked and those not (-v)."""
        out = []
        decoded = self.report.decoded if self.report is not None else {}
        for op in self.operands:
            d = decoded.get(op.role) or decoded.get({"s_desc": "smem"}.get(op.role, op.role))
            if op.resolved:
                where = f"{op.label()} (immediate)" if op.origin == "immediate" else \
                    f"{op.name} {op.text} = {op.hex} ({op.origin or 'agreeing definitions'}" + \
                    (f" at line {op.origin_line})" if op.origin_line else ")")
                out.append(where + (f": {key_fields(d)}" if d is not None else ""))
                continue
            out.append(f"{op.name} {op.text}: {op.status}: {op.why_text()}")
            out.append(f"    bits {op.picture()}")
            if d is not None:
                known = [f"{f.name} {show_value(f.value)}" for f in d.fields
                         if f.value is not None and not f.name.startswith("reserved")]
                out.append("    fields checked: " + (", ".join(known) or "none"))
        if self.report is not None and self.report.not_checked:
            out.append("rules not checked: " + ", ".join(sorted({n.code for n in self.report.not_checked})))
        return out

    def as_dict(self) -> dict[str, Any]:
        rep = self.report
        return {
            "line": self.line,
            "opcode": self.opcode,
            "text": self.text,
            "qualifiers": dict(self.qualifiers),
            "operands": [o.as_dict() for o in self.operands],
            "checked": rep is not None,
            "fields_checked": {role: [f.name for f in d.fields if f.value is not None]
                               for role, d in rep.decoded.items() if d is not None} if rep is not None else {},
            "not_checked": [n.as_dict() for n in rep.not_checked] if rep is not None else [],
            "decoded": {role: d.as_dict() for role, d in rep.decoded.items() if d is not None} if rep is not None else {},
        }


class ScanTally:
    """Running totals over scanned instructions and findings (one file or a whole run), in
    constant memory: instructions, operands fully / partly / not known, the unknown ones grouped
    by what is unknown and why, and findings by severity."""

    def __init__(self) -> None:
        self.instructions = 0
        self.status: Counter[str] = Counter()
        self.groups: Counter[tuple[str, str]] = Counter()
        self.names: dict[tuple[str, str], set[str]] = {}
        self.severity: Counter[str] = Counter()

    def add(self, instructions: Iterable[ScanInstruction], findings: Iterable[ScanFinding]) -> None:
        for ins in instructions:
            self.instructions += 1
            for o in ins.operands:
                st = o.status
                self.status[st] += 1
                if st != "known":
                    fields = [u for u in o.unknown if not u.startswith("reserved")]
                    what = ", ".join(fields) if st == "partial" and fields else \
                        "reserved bits" if st == "partial" else "every field"
                    key = (what, o.reason or "run-time value")
                    self.groups[key] += 1
                    self.names.setdefault(key, set()).add(o.name)
        for f in findings:
            self.severity[f.severity] += 1

    def merge(self, other: "ScanTally") -> None:
        """Add another tally's totals (one file's, into the run's)."""
        self.instructions += other.instructions
        self.status.update(other.status)
        self.groups.update(other.groups)
        for k, names in other.names.items():
            self.names.setdefault(k, set()).update(names)
        self.severity.update(other.severity)

    @property
    def counts(self) -> dict[str, int]:
        """``instructions``, ``operands``, ``known``, ``partial``, ``unknown``, ``resolved`` (=
        ``known``), ``unresolved``, ``errors``, ``warnings``, ``notes``."""
        s = self.status
        return {"instructions": self.instructions, "operands": sum(s.values()), "known": s["known"],
                "partial": s["partial"], "unknown": s["unknown"], "resolved": s["known"],
                "unresolved": s["partial"] + s["unknown"], "errors": self.severity["error"],
                "warnings": self.severity["warning"], "notes": self.severity["info"]}

    def run_time(self) -> list[dict[str, Any]]:
        """The operands not fully known, grouped: count, operand names, what is unknown, why."""
        return [{"count": n, "operands": sorted(self.names[k]), "unknown": k[0], "why": k[1]}
                for k, n in sorted(self.groups.items(), key=lambda kv: (-kv[1], kv[0]))]

    def summary(self, name: str) -> str:
        """One line: ``NAME: N instructions; M descriptor operands: a fully known, b partly known
        (fields checked), c unknown; run-time: ...; E errors, W warnings``."""
        c = self.counts

        def n(k: int, word: str) -> str:
            return f"{k} {word}{'s' * (k != 1)}"

        text = (f"{name}: {n(c['instructions'], 'instruction')}; {n(c['operands'], 'descriptor operand')}: "
                f"{c['known']} fully known, {c['partial']} partly known (fields checked), {c['unknown']} unknown")
        groups = self.run_time()
        if groups:
            text += "; run-time: " + "; ".join(f"{g['count']} {'/'.join(g['operands'])} {g['unknown']} ({g['why']})"
                                               for g in groups)
        text += f"; {n(c['errors'], 'error')}, {n(c['warnings'], 'warning')}"
        if c["notes"]:
            text += f", {n(c['notes'], 'note')} (-v)"
        return text


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

    def tally(self) -> ScanTally:
        t = ScanTally()
        t.add(self.instructions, self.findings)
        return t

    @property
    def counts(self) -> dict[str, int]:
        """:attr:`ScanTally.counts`: ``instructions``, ``operands``, ``known``, ``partial``,
        ``unknown``, ``resolved``, ``unresolved``, ``errors``, ``warnings``, ``notes``."""
        return self.tally().counts

    def lines(self) -> list[str]:
        """The compiler-style report: ``FILE:LINE: severity: CODE message`` per finding (severity
        ``error``, ``warning`` or ``note``: descgen's ``info``, E36)."""
        return [f"{self.filename}:{f.line}: {severity_word(f.severity)}: {f.message()}" for f in self.findings]

    def summary(self) -> str:
        """One line (:meth:`ScanTally.summary`)."""
        return self.tally().summary(self.filename)

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.filename,
            "ok": self.ok,
            "arch": self.arch,
            "arch_from": self.arch_from,
            "target": None if self.target is None else {"line": self.target[0], "text": self.target[1]},
            "counts": self.counts,
            "run_time": self.tally().run_time(),
            "instructions": [i.as_dict() for i in self.instructions],
            "findings": [f.as_dict() for f in self.findings],
        }


def _version_tuple(text: str) -> tuple[int, int] | None:
    """``"8.7"`` -> ``(8, 7)``; None for a .version that is not MAJOR.MINOR."""
    major, _, minor = text.strip().partition(".")
    return (int(major), int(minor)) if major.isdigit() and minor.isdigit() else None


def severity_word(severity: str) -> str:
    """The compiler word for a severity: ``error``, ``warning``, ``note`` (for ``info``)."""
    return "note" if severity == "info" else severity


# --------------------------------------------------------------------------------------------
# Scanning (E38).


def _fits(value: int, width: int) -> bool:
    """Whether a literal is a ``width``-bit word as written: unsigned, or negative in two's
    complement. ptxas keeps the low ``width`` bits of one that is not (E48)."""
    return -(1 << (width - 1)) <= value < 1 << width


def _signed_range(width: int) -> str:
    """``-0x80000000..0xffffffff``: the literals a ``width``-bit operand takes as written."""
    return f"{-(1 << (width - 1)):#x}..{(1 << width) - 1:#x}"


_REG_DECL = re.compile(r"([A-Za-z_$%][\w$]*)\s*(?:<\s*(\d+)\s*>)?")
_ALIGN = re.compile(r"\.align\s+(\d+)")
_SHARED_NAME = re.compile(r"([A-Za-z_$][\w$]*)\s*(?:\[[^\]]*\]\s*)*(?:=.*)?$")
_TYPE_SIZE = re.compile(r"\.[bsuf](\d+)\b")


#: A function header's line up to its ``.entry`` / ``.func`` (``.visible``, ``.weak``, ``.extern``).
_HEADER_PREFIX = re.compile(r"[ \t]*(?:\.(?:visible|weak|extern)[ \t]+)*")
#: What a function's text (header to the next header) must not contain to be skipped unread: an
#: instruction the scanner reads (tcgen05.*, wgmma.*), a directive it keeps (.target, .version,
#: and a .shared declaration: :data:`_SHARED_DECLARATION`), a block comment that could hide where
#: statements end (a string could too, unless it is plain: :data:`_PLAIN_STRING`).
_READ = ("tcgen05", "wgmma", ".target", ".version", "/*")
#: A string that cannot hide a statement's end or a comment (``.pragma "nounroll";``, ``.file 1
#: "kernel.py"``).
_PLAIN_STRING = re.compile(r'"(?:[^"\n;{}/\\]|/(?![/*]))*"')
#: A ``.shared`` declaration's state space (a word of its own, as :meth:`_Scan.directive` reads
#: one), not an instruction's qualifier (``ld.shared``, ``mbarrier.arrive.shared::cta``).
_SHARED_DECLARATION = re.compile(r"(?<![^\s;{}])\.shared")
_LINE_COMMENT = re.compile(r"//[^\n]*")
#: What may follow a function's last ';' for it to end between statements: blanks, closing braces,
#: labels, the line directives (.file, .loc) and the DWARF sections (``.section .debug_abbrev
#: { .b8 1 ... }``, data the scanner does not read) compilers write after a body.
_CLOSING = re.compile(r"(?:\s|\}|[A-Za-z_$%][\w$]*[ \t]*:(?!:)|\.(?:file|loc)\b[^\n]*"
                      r"|\.section[^;{}]*\{[^{};]*\})*")


def _functions(text: str) -> Iterator[str]:
    """``text`` cut before each function header's line (each part but the last ends with a line
    break): where ``.entry`` / ``.func`` follows only blanks and ``.visible`` / ``.weak`` /
    ``.extern`` on its line."""
    starts = []
    for word in (".entry", ".func"):
        k = text.find(word)
        while k >= 0:
            line = text.rfind("\n", 0, k) + 1
            after = text[k + len(word):k + len(word) + 1]
            if line and not (after.isalnum() or after in "_$") and _HEADER_PREFIX.fullmatch(text, line, k):
                starts.append(line)
            k = text.find(word, k + 1)
    at = 0
    for start in sorted(starts):
        yield text[at:start]
        at = start
    yield text[at:]


def _inert(text: str) -> bool:
    """Whether ``text`` holds nothing the scanner reads or keeps: none of :data:`_READ`, no
    ``.shared`` declaration, no string but plain ones."""
    return not (any(w in text for w in _READ) or _SHARED_DECLARATION.search(text)
                or ('"' in text and text.count('"') != 2 * len(_PLAIN_STRING.findall(text))))


def _unread(part: str) -> bool:
    """Whether a function's text (a part of :func:`_functions`) can be skipped: reading it would
    change nothing but end the function before it (its header does) and reset the per-function
    state. It is :func:`_inert` and ends between statements: after its last ``;`` (line comments
    aside) only what :data:`_CLOSING` allows, so the lexer is clean where the next header starts
    (in PTX that ptxas accepts, a statement's braces close before its ``;``)."""
    if not part or not _inert(part):
        return False
    code = _LINE_COMMENT.sub("", part)
    end = code.rfind(";")
    return end >= 0 and _CLOSING.fullmatch(code, end + 1) is not None


def _trailer_unread(text: str) -> bool:
    """Whether what follows a function's body up to the next header (labels, ``.file`` lines,
    DWARF sections) can be skipped: :func:`_inert`, and only what :data:`_CLOSING` allows."""
    return _inert(text) and _CLOSING.fullmatch(_LINE_COMMENT.sub("", text)) is not None


@dataclass
class _Pending:
    """A tcgen05 or wgmma instruction whose operands are resolved when its function ends."""

    line: int
    index: int  # the statement's index in its Function
    opcode: str  # tcgen05.mma / tcgen05.cp / wgmma.mma_async
    text: str
    name: str
    q: dict[str, Any]
    ops: list[tuple[str, str, Operand]]  # role, operand text, operand resolved in scope


@dataclass(frozen=True)
class ScanChunk:
    """What one function (or the statements outside any) gave, in line order: its instructions
    and its findings. :func:`scan_stream` yields one per function, so memory stays bounded by
    the largest function."""

    instructions: tuple[ScanInstruction, ...]
    findings: tuple[ScanFinding, ...]


def _without_tcgen05(name: str) -> bool:
    """Whether a ``.target`` descgen does not know is one ptxas rejects tcgen05 on: before sm_100
    (``sm_90a``), without the arch- or family-specific suffix (``sm_100``, ``compute_100``), or of
    the sm_120 family (``sm_120a``). An unknown later target (``sm_130a``) is only unknown
    (PTX-TARGET-UNKNOWN)."""
    m = re.fullmatch(r"(?:sm|compute)_(\d+)([af]?)", name.strip().lower())
    if m is None:
        return False
    number, suffix = int(m.group(1)), m.group(2)
    return number < 100 or not suffix or 120 <= number < 130


class _Scan:
    def __init__(self, filename: str, arch: Arch | None) -> None:
        self.filename = filename
        self.rules = catalog()
        self.findings: list[ScanFinding] = []
        self.instructions: list[ScanInstruction] = []
        bare = bare_target(arch)  # --arch sm_110: a target without tcgen05, read as its .target would be (E49)
        self.arch = None if bare else normalize_arch(arch)
        self.arch_from = "option" if self.arch or bare else None
        self.target: tuple[int, str] | None = None
        # a .target known to lack tcgen05 (sm_90a, sm_100, sm_120a), or such an --arch
        self.no_tcgen05: str | None = str(arch).strip().lower() if bare else None
        self.target_name: str | None = None  # the .target's target as written (E34), for wgmma
        self.seen_wgmma = False
        self.version: tuple[int, str] | None = None
        self.version_reported: set[str] = set()  # features already reported by PTX-VERSION
        self.cta_groups: dict[int, int] = {}  # cta_group -> first line, in the current function
        self.function = ""
        self.shared: dict[str, int] = {}  # .shared symbol -> alignment (bytes), module-wide
        self.direct = False  # the function being read has an instruction in RESOLVED: no Recorder
        self.fn: Function | Recorder = Recorder(self.shared)
        self.pending: list[_Pending] = []
        self.body_depth: int | None = None  # scope depth of the current function's body
        self.header = False  # a function header was the last statement: its '{' opens the body
        self.seen_instruction = False

    # findings --------------------------------------------------------------------------------

    def add(self, line: int, finding: Finding, subject: str, operand: str | None = None) -> None:
        self.findings.append(ScanFinding(line, finding, subject, operand))

    def rule(self, code: str, line: int, subject: str, field: str, value: Any, allowed: str, detail: str,
             operand: str | None = None) -> None:
        self.findings.append(ScanFinding(line, self.rules[code].finding(field, value, allowed, detail), subject, operand,
                                         detail))

    # directives and scopes -------------------------------------------------------------------

    def directive(self, line: int, text: str) -> None:
        head = text.split(None, 1)
        d = head[0]
        if d in (".loc", ".file", ".address_size", ".pragma", ".maxntid", ".reqntid", ".maxnreg", ".minnctapersm"):
            return
        if d == ".reg":
            self._reg(text)
            return
        if d == ".version":
            if self.version is None:
                self.version = (line, head[1].strip() if len(head) > 1 else "")
            return
        if d == ".target":
            if self.target is None:
                self.target = (line, text)
                self._target(line, head[1] if len(head) > 1 else "")
            return
        if ".shared" in text.split("=", 1)[0].split():
            self._shared(text)
            return
        if ".entry" in text or ".func" in text:
            words = text.split()
            if ".entry" in words or ".func" in words:
                self.finish_function()
                self.cta_groups = {}
                m = re.search(r"\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)", text)
                self.function = m.group(1) if m else ""
                self.header = True

    def _reg(self, text: str) -> None:
        """``.reg .b32 %r<40>;``, ``.reg .pred p, q;``: declared in the current scope (an inner
        declaration shadows an outer register of the same name until its brace closes)."""
        names = []
        for t in split_operands(re.sub(r"^\.reg\s+(?:\.\w+\s+)*", "", text)):
            m = _REG_DECL.fullmatch(t)
            if m:
                names.append((m.group(1), None if m.group(2) is None else int(m.group(2))))
        self.fn.declare(names, self.body_depth or 0)

    def _shared(self, text: str) -> None:
        head = text.split("=", 1)[0]
        m = _SHARED_NAME.search(head.split()[-1]) if head.split() else None
        if not m:
            return
        align = _ALIGN.search(head)
        size = _TYPE_SIZE.search(head)
        self.shared[m.group(1)] = int(align.group(1)) if align else (int(size.group(1)) // 8 if size else 1)

    def open(self) -> None:
        self.fn.open_scope()
        if self.header and self.body_depth is None:
            self.body_depth = self.fn.depth
        self.header = False

    def close(self) -> None:
        self.header = False
        if self.fn.depth == 0:
            return
        self.fn.close_scope()
        if self.body_depth is not None and self.fn.depth < self.body_depth:
            self.finish_function()

    def _target(self, line: int, spec: str) -> None:
        """E34: the last ``sm_`` entry of the first ``.target`` is the target; the options
        (``debug``, ``texmode_*``, ``map_f64_to_f32``) are not targets."""
        names = [t.strip() for t in spec.split(",") if t.strip().startswith(("sm_", "compute_"))]
        if self.arch_from == "option":
            return
        if not names:
            return
        name = names[-1]
        self.target_name = name.strip().lower()
        self._needs_version(line, ".target", (name,))
        try:
            self.arch = normalize_arch(name)
            self.arch_from = "target"
        except DescgenError:
            if _without_tcgen05(name):
                self.no_tcgen05 = name  # reported at the first tcgen05 instruction (PTX-TARGET-TCGEN05)
                return
            c = constraints()
            self.rule("PTX-TARGET-UNKNOWN", line, ".target", "arch", name, ", ".join(c.targets),
                      f".target {name}; the rules that need the target are not checked (--arch sets one)")

    # instructions ----------------------------------------------------------------------------

    def statement(self, line: int, text: str) -> None:
        if text[0] == ".":
            self.directive(line, text)
            return
        self.header = False
        guard = None
        if text[0] == "@":
            guard, _, text = text.partition(" ")
            if not text:
                return
        opcode, _, rest = text.partition(" ")
        while rest.startswith("."):  # qualifiers may be spaced out: "tcgen05.mma.cta_group::1 .kind::f16"
            more, _, rest = rest.partition(" ")
            opcode += more
        if opcode.startswith(RESOLVED) and isinstance(self.fn, Recorder):
            self.fn = self.fn.function()
        index = self.fn.statement(line, guard, opcode, rest)
        if opcode.startswith("tcgen05."):
            self._cta_group(line, opcode)
            if opcode.startswith("tcgen05.mma"):
                self.mma(line, index, f"{opcode} {rest}".strip(), opcode, split_operands(rest))
            elif opcode.startswith("tcgen05.cp"):
                self.cp(line, index, f"{opcode} {rest}".strip(), opcode, split_operands(rest))
        elif opcode.startswith("wgmma.mma_async"):
            self.wgmma(line, index, f"{opcode} {rest}".strip(), opcode, split_operands(rest))

    def _operand(self, text: str) -> Operand:
        """A descriptor operand of the statement just read, resolved in scope."""
        assert isinstance(self.fn, Function)  # made by statement() for the opcodes in RESOLVED
        return self.fn.operand_of(text)

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


    def malformed(self, line: int, opcode: str, what: str) -> None:
        self.rule("PTX-MALFORMED", line, opcode, "instruction", opcode, "a form of the instruction's syntax", what)

    def _first_instruction(self, line: int) -> None:
        if self.seen_instruction:
            return
        self.seen_instruction = True
        if self.no_tcgen05 is not None:
            where = " (--arch)" if self.arch_from == "option" or self.target is None else f" (line {self.target[0]})"
            self.rule("PTX-TARGET-TCGEN05", line, ".target", "arch", self.no_tcgen05, ", ".join(constraints().targets),
                      f".target {self.no_tcgen05}{where} has no tcgen05: ptxas rejects the instruction "
                      "there; tcgen05 needs one of the targets allowed")
        if self.arch is None and self.target is None and self.no_tcgen05 is None:
            self.rule("PTX-TARGET-MISSING", line, "file", "arch", None, ", ".join(constraints().targets),
                      "no .target directive before the first tcgen05 instruction and no --arch; the rules that need the target are not checked")

    def mma(self, line: int, index: int, text: str, opcode: str, operands: list[str]) -> None:
        self._first_instruction(line)
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
        self.pending.append(_Pending(line, index, "tcgen05.mma", text + ";", name, q,
                                     [(role, t, self._operand(t)) for role, t in ops]))

    def _mma_qualifiers(self, line: int, opcode: str, name: str) -> dict[str, Any] | None:
        q: dict[str, Any] = {"kind": None, "cta_group": None, "ws": False, "sp": False, "block_scale": False,
                             "scale_vec": None, "scale_vec_used": None, "collector": None, "ashift": False,
                             "a_tmem": None}
        seen: set[str] = set()
        for index, token in enumerate(opcode.split(".")[2:]):
            key = token.split("::", 1)[0]
            if key in seen:
                self.malformed(line, name, f"qualifier .{key} given twice")
                return None
            seen.add(key)
            if token == "ws" and index:  # ptxas 13.0: "Unknown modifier '.ws'" anywhere else (E40)
                self.malformed(line, name, ".ws must come right after tcgen05.mma (tcgen05.mma.ws...)")
                return None
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
        used = {"4X": ".scale_vec::4X", "block16": ".block16", "block32": ".block32"}.get(q["scale_vec_used"] or "")
        self._needs_version(line, name, ("tcgen05.mma", f".kind::{q['kind']}", used))
        return q

    def _needs_version(self, line: int, subject: str, features: Iterable[str | None]) -> None:
        """PTX-VERSION, once per feature and file, for each feature newer than the ``.version``
        directive ([[ptx_version]] of tables/rules.toml, E40)."""
        if self.version is None:
            return
        have = _version_tuple(self.version[1])
        table = constraints().ptx_versions
        for feature in features:
            if feature is None or feature in self.version_reported or feature not in table or have is None:
                continue
            need, source = table[feature]
            if have < need:
                self.version_reported.add(feature)
                self.rule("PTX-VERSION", line, subject, "version", self.version[1], f"{need[0]}.{need[1]} or later",
                          f"{feature} needs PTX ISA {need[0]}.{need[1]} ({source}); the file says .version {self.version[1]}")

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
            n = len(split_operands(extra["lanes"][1:-1]))
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

    def cp(self, line: int, index: int, text: str, opcode: str, operands: list[str]) -> None:
        self._first_instruction(line)
        name = "tcgen05.cp"
        self._needs_version(line, name, (name,))
        q: dict[str, Any] = {"cta_group": None, "shape": None, "multicast": None, "dst_fmt": None, "src_fmt": None}
        tokens = opcode.split(".")[2:]
        for token in tokens:
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
        self.pending.append(_Pending(line, index, "tcgen05.cp", text + ";", name, q,
                                     [("s_desc", operands[1], self._operand(operands[1]))]))

    # Hopper wgmma.mma_async (§9.7.15.5.2, §9.7.15.6.3) -----------------------------------------

    def _first_wgmma(self, line: int) -> None:
        """PTX-TARGET-WGMMA, once per file: wgmma needs sm_90a (the option's target, else the
        ``.target``'s, E34)."""
        if self.seen_wgmma:
            return
        self.seen_wgmma = True
        target = (self.arch or self.no_tcgen05) if self.arch_from == "option" else self.target_name
        allowed = wgmma_table().targets
        if target is not None and target not in allowed:
            where = f" (line {self.target[0]})" if self.target is not None and self.arch_from != "option" else ""
            self.rule("PTX-TARGET-WGMMA", line, ".target", "arch", target, ", ".join(allowed),
                      f".target {target}{where} has no wgmma.mma_async: ptxas rejects the instruction there")

    def wgmma(self, line: int, index: int, text: str, opcode: str, operands: list[str]) -> None:
        """``wgmma.mma_async{.sp}.sync.aligned.shape.dtype.atype.btype{.satfinite}`` (``.and.popc``
        for .b1): the qualifiers and immediates as written; the descriptor operands are resolved
        when the function ends and the whole instruction goes to :func:`descgen.check_wgmma`."""
        self._first_wgmma(line)
        name = "wgmma.mma_async"
        q: dict[str, Any] = {"sp": False, "shape": None, "m": None, "n": None, "k": None, "dtype": None, "atype": None,
                             "btype": None, "satfinite": False, "op": None}
        types: list[str] = []
        seen: set[str] = set()
        for token in opcode.split(".")[2:]:
            is_type = re.fullmatch(r"[a-z]+\d+\w*", token) is not None and parse_wgmma_shape(token) is None
            if token in seen and not is_type:  # (.f16.f16: a type may repeat)
                self.malformed(line, name, f"qualifier .{token} given twice")
                return
            seen.add(token)
            shape = parse_wgmma_shape(token)
            if shape is not None and q["shape"] is None:
                q["shape"], (q["m"], q["n"], q["k"]) = token, shape
            elif token in ("sp", "satfinite"):
                q[token] = True
            elif token in ("sync", "aligned", "popc"):
                continue
            elif token == "and":
                q["op"] = token
            elif is_type and len(types) < 3:  # .f32, .e4m3, .s8 ...
                types.append(token)
            else:
                self.malformed(line, name, f"unknown qualifier .{token}")
                return
        if q["sp"]:
            name += ".sp"
        missing = [w for w in ("sync", "aligned") if w not in seen]
        if missing or q["shape"] is None or len(types) != 3:
            what = f"no .{' .'.join(missing)}" if missing else "no .shape (.m64nNkK)" if q["shape"] is None else \
                "expected .dtype.atype.btype"
            self.malformed(line, name, what)
            return
        q["dtype"], q["atype"], q["btype"] = types
        row = wgmma_table().row(q["atype"])
        if row is not None and (q["op"] is not None or "popc" in seen) != (row.name == "b1"):
            self.malformed(line, name, ".b1 takes .and.popc, the other types do not")
            return
        mixed = q["atype"] != q["btype"] and {q["atype"], q["btype"]} <= {"s8", "u8"}
        self._needs_version(line, name, (name, ".s8.u8" if mixed else None))
        subject = f"{name}.{q['shape']}.{q['dtype']}.{q['atype']}.{q['btype']}"
        a_regs = len(operands) > 1 and operands[1].startswith("{")
        # d, a, b-desc, {sp-meta, sp-sel,} scale-d {, imm-scale-a, imm-scale-b} {, imm-trans-a} {, imm-trans-b}
        head = 5 if q["sp"] else 3
        imms: list[str] = []
        if row is not None:
            imms = ["scale_a", "scale_b"] * row.floating + (["trans_a"] if row.transpose and not a_regs else []) + \
                ["trans_b"] * row.transpose
        want = head + 1 + len(imms)
        if len(operands) != want or not operands[0].startswith("{"):
            self.malformed(line, name, f"{len(operands)} operands; {subject} takes {want}: d, "
                           f"{'a' if a_regs else 'a-desc'}, b-desc, {'sp-meta, sp-sel, ' if q['sp'] else ''}scale-d"
                           + "".join(f", imm-{i.replace('_', '-')}" for i in imms))
            return
        values: dict[str, int | None] = {}
        for i, key in enumerate(imms):
            values[key] = parse_int(operands[head + 1 + i])
            if values[key] is None:
                self.malformed(line, name, f"imm-{key.replace('_', '-')} {operands[head + 1 + i]} is not an integer constant")
                return
        sel = parse_int(operands[4]) if q["sp"] else None
        if q["sp"] and sel is None:
            self.malformed(line, name, f"sp-sel {operands[4]} is not an integer constant")
            return
        q.update({"a_registers": a_regs, "scale_d": parse_int(operands[head]), "sp_sel": sel, **values})
        ops = ([] if a_regs else [("a_desc", operands[1])]) + [("b_desc", operands[2])]
        self.pending.append(_Pending(line, index, "wgmma.mma_async", text + ";", subject, q,
                                     [(role, t, self._operand(t)) for role, t in ops]))

    # resolution and checks, once per function ------------------------------------------------

    def _operand_bits(self, role: str, text: str, op: Operand, v: Value | None
                      ) -> tuple[KnownBits, str | None, int | None, str | None]:
        """(known bits, origin, origin line, why unknown) of one descriptor operand; ``v`` its
        value from the dataflow (None for an immediate)."""
        width = WIDTHS[role]
        if op[0] == "imm":  # E48: as ptxas reads it, the low bits of a wider literal
            n = op[1]
            assert isinstance(n, int)
            return KnownBits(n & ((1 << width) - 1), (1 << width) - 1), "immediate", None, None
        if op[0] == "other" and parse_int(text) is not None:
            return KnownBits(0, 0), None, None, f"ptxas rejects the immediate {text} (Constant overflow)"
        if op[0] != "reg" or v is None:
            return KnownBits(0, 0), None, None, "not a register or an integer immediate"
        bits = kb_ext(v.bits, v.width, width) if v.width >= width else KnownBits(v.bits.value, v.bits.mask)
        why = ", ".join(sorted(v.why)) or None
        if v.width < width:
            why = f"a {v.width}-bit register for a {width}-bit operand"
        return bits, v.origin, v.line, why

    def finish_function(self) -> None:
        """Resolve and check the tcgen05 instructions of the function just read, then forget it."""
        pending, self.pending = self.pending, []
        if pending:
            uses = [(p.index, op, WIDTHS[role]) for p in pending for role, _, op in p.ops if op[0] == "reg"]
            assert isinstance(self.fn, Function)
            vals = iter(self.fn.solve(uses))
            for p in pending:
                self._check(p, {role: next(vals) for role, _, op in p.ops if op[0] == "reg"})
            for m in self.fn.immediates:
                self._immediate(m.line, m.opcode, m.text, m.width, m.word, m.why, None)
        self.fn = Function(self.shared) if self.direct else Recorder(self.shared)
        self.body_depth = None

    def _immediate(self, line: int, subject: str, text: str, width: int, word: int | None, why: str,
                   role: str | None) -> None:
        """E48: an immediate that ptxas cuts to its operand's low ``width`` bits
        (``PTX-IMMEDIATE-TRUNCATED``, a warning: the scan reads the cut word) or rejects
        (``PTX-MALFORMED``: ``word`` is None)."""
        if word is None:
            allowed = "0..255" if "outside 0..255" in why else "a literal ptxas can read (its digits within 64 bits)"
            self.rule("PTX-MALFORMED", line, f"{subject} {text}", role or "immediate", text, allowed,
                      f"ptxas rejects the immediate {text}: {why}", role)
            return
        self.rule("PTX-IMMEDIATE-TRUNCATED", line, f"{subject} {text}", role or "immediate", text, _signed_range(width),
                  f"wider than its {width}-bit operand: ptxas keeps the low {width} bits, {hex_word(word, width)}, "
                  "and the scan reads that", role)

    def _check(self, p: _Pending, vals: Mapping[str, Value]) -> None:
        line, q = p.line, p.q
        bits: dict[str, tuple[KnownBits, str | None, int | None, str | None]] = {
            role: self._operand_bits(role, t, op, vals.get(role)) for role, t, op in p.ops}
        words: dict[str, int | KnownBits] = {}
        for role, (kb, _, _, _) in bits.items():
            words[role] = kb.value if kb.full(WIDTHS[role]) else kb
        report: Report
        if p.opcode == "tcgen05.cp":
            report = _validate_smem_cached(words["s_desc"], self.arch)
            decoded = {"s_desc": report.decoded.get("smem")}
        elif p.opcode == "wgmma.mma_async":
            inst = tuple((k, q.get(k)) for k in _WGMMA_ARGS)
            report = _check_wgmma_cached(words.get("a_desc"), words["b_desc"], inst)
            decoded = {role: report.decoded.get(role) for role in bits}
        else:
            ctx = self._context(q)
            report = _check_mma_cached(words["idesc"], q["kind"], words.get("a_desc"), words["b_desc"], words.get("zcm"),
                                       tuple(sorted(ctx.items())))
            decoded = {role: report.decoded.get(role) for role in bits}
        ops = []
        for role, t, _ in p.ops:
            kb, origin, oline, why = bits[role]
            width = WIDTHS[role]
            d = decoded.get(role)
            unknown = tuple(d.unknown) if d is not None and not kb.full(width) else ()
            full = kb.full(width)
            v = vals.get(role)
            rng = None if full or v is None or v.width != width else v.range
            ops.append(ScanOperand(role, t, kb.value if full else None, width, origin if full else None,
                                   (oline if origin != "immediate" else line) if full else oline,
                                   None if full else (why or "run-time value"), kb, unknown, rng))
        by = {o.role: o for o in ops}
        for (role, t, op), o in zip(p.ops, ops):
            if op[0] == "imm" and not _fits(op[1], o.width):  # E48: ptxas keeps the low bits
                self._immediate(line, o.name, t, o.width, o.value, "", o.role)
            elif not o.resolved and parse_int(o.text) is not None:  # past ptxas's 64-bit reading
                self._immediate(line, o.name, t, o.width, None, "Constant overflow", o.role)
            elif not o.resolved:
                self.rule("PTX-OPERAND-UNRESOLVED", line, f"{o.name} {o.text}", o.role, o.text, "", o.why_text(), o.role)
        for f in report.findings:
            if p.opcode == "tcgen05.cp":
                self.add(line, f, by["s_desc"].label(), "s_desc")
                continue
            role = _role_of(f)
            subject = by[role].label() if role in by else p.name if p.opcode == "wgmma.mma_async" else \
                f"{p.name}.kind::{q['kind']}"
            self.add(line, f, subject, role if role in by else None)
        if p.opcode == "tcgen05.mma":
            idesc_word = report.decoded.get("idesc")
            if q["ashift"] and idesc_word is not None and "m" not in idesc_word.unknown:
                m = idesc_word.value("m")
                if m not in (128, 256):
                    self.rule("PTX-ASHIFT-M", line, by["idesc"].label(), "m", m, "128, 256", f".ashift with M = {m}", "idesc")
        self.instructions.append(ScanInstruction(line, p.opcode, p.text, q, tuple(ops), report))

    # the whole file --------------------------------------------------------------------------

    def chunks(self, source: str | Iterable[str]) -> Iterator[ScanChunk]:
        """Scan ``source`` (text, or its lines); one :class:`ScanChunk` per function (and one for
        what is outside). Text is read function by function: a function :func:`_unread` allows
        is skipped unread (as reading it would, it only ends the function before it)."""
        lexer = Lexer()
        if not isinstance(source, str):
            yield from self._read(lexer.feed(source))
        else:
            first = 1
            for part in _functions(source):
                lines = part.splitlines()
                if lexer.clean and _unread(part):
                    self.finish_function()  # what its header would do; its body adds nothing
                    self.cta_groups, self.function, self.header = {}, "", False
                    if self.instructions or self.findings:
                        yield self._chunk()
                else:
                    self.direct = any(w in part for w in RESOLVED)  # its function is analysed: build it at once
                    sliced = slice_function(part, lines, first) if self.direct and lexer.clean else None
                    if sliced is None:
                        yield from self._read(lexer.feed(lines, first))
                    else:  # only what its descriptors can depend on, then what follows its body
                        yield from self._read(sliced.events)
                        if not _trailer_unread("\n".join(lines[sliced.read:])):
                            yield from self._read(lexer.feed(lines[sliced.read:], first + sliced.read))
                first += len(lines)
        yield from self._read(lexer.finish())
        self.finish_function()
        if self.instructions or self.findings:
            yield self._chunk()

    def _read(self, events: Iterable[tuple[str, int, str]]) -> Iterator[ScanChunk]:
        for kind, line, text in events:
            if kind == "stmt":
                self.statement(line, text)
            elif kind == "open":
                self.open()
            elif kind == "close":
                self.close()
            else:
                self.header = False
                self.fn.label(text)
            if self.instructions or (self.findings and not self.pending):
                yield self._chunk()

    def _chunk(self) -> ScanChunk:
        ins, found = self.instructions, self.findings
        self.instructions, self.findings = [], []
        return ScanChunk(tuple(ins), tuple(sorted(found, key=lambda f: f.line)))


@functools.lru_cache(maxsize=4096)
def _validate_smem_cached(word: int | KnownBits, arch: str | None) -> Report:
    return validate_smem(word, arch=arch)  # type: ignore[arg-type]


@functools.lru_cache(maxsize=4096)
def _check_mma_cached(idesc: int | KnownBits, kind: Kind, a_desc: int | KnownBits | None, b_desc: int | KnownBits,
                      zcm: int | KnownBits | None,
                      ctx: tuple[tuple[str, Any], ...]) -> Report:
    """:func:`descgen.check_mma`, once per distinct instruction (unrolled kernels repeat them; a
    Report is immutable)."""
    return check_mma(idesc=idesc, kind=kind, a_desc=a_desc, b_desc=b_desc, zcm=zcm, **dict(ctx))


#: The qualifiers and immediates of a scanned wgmma.mma_async that :func:`descgen.check_wgmma` takes.
_WGMMA_ARGS = ("atype", "btype", "dtype", "m", "n", "k", "sp", "trans_a", "trans_b", "scale_a", "scale_b", "scale_d",
               "sp_sel", "satfinite")


@functools.lru_cache(maxsize=4096)
def _check_wgmma_cached(a_desc: int | KnownBits | None, b_desc: int | KnownBits,
                        inst: tuple[tuple[str, Any], ...]) -> Report:
    """:func:`descgen.check_wgmma`, once per distinct instruction."""
    return check_wgmma(a_desc=a_desc, b_desc=b_desc, **dict(inst))


def _role_of(f: Finding) -> str:
    """The operand a validator finding is about: its field's prefix (``b_desc.swizzle``), the idesc
    for the idesc's own fields, the instruction for context fields."""
    head = f.field.split(".", 1)[0]
    if "." in f.field and head in WIDTHS:
        return head
    if f.field in ("cta_group", "ws", "sp", "scale_vec", "a_tmem", "arch", "kind"):
        return "instruction"
    return "idesc"




class ScanStream:
    """:func:`scan_stream`'s answer: iterate it for :class:`ScanChunk` s (one per function, in
    file order); afterwards ``arch``, ``arch_from``, ``target`` and ``version``
    describe the file. Iterate once."""

    def __init__(self, source: str | Iterable[str], filename: str, arch: Arch | None) -> None:
        self._scan = _Scan(filename, arch)
        self._source = source
        self.filename = filename

    def __iter__(self) -> Iterator[ScanChunk]:
        return self._scan.chunks(self._source)

    @property
    def arch(self) -> str | None:
        return self._scan.arch

    @property
    def arch_from(self) -> str | None:
        return self._scan.arch_from

    @property
    def target(self) -> tuple[int, str] | None:
        return self._scan.target

    @property
    def version(self) -> tuple[int, str] | None:
        """The ``.version`` directive's line and value (``"9.0"``), or None."""
        return self._scan.version


def scan_stream(source: str | Iterable[str], *, filename: str = "<stdin>", arch: Arch | None = None) -> ScanStream:
    """:func:`scan_ptx`, one function at a time: memory stays bounded by the largest function.

    Args:
        source: PTX text, or its lines (an open file works).
        filename, arch: as :func:`scan_ptx`.

    Returns:
        A :class:`ScanStream` yielding :class:`ScanChunk` s.

    Raises:
        UsageError: ``arch`` is not a target descgen knows (``CONTEXT-ARCH``).
    """
    return ScanStream(source, filename, arch)


def scan_ptx(text: str, *, filename: str = "<stdin>", arch: Arch | None = None) -> ScanResult:
    """Scan PTX text for ``tcgen05.mma`` / ``tcgen05.cp`` / ``wgmma.mma_async`` and check every
    descriptor operand with what is known of it at compile time (E38).

    Args:
        text: the PTX source (a whole file or a fragment).
        filename: how findings name the file (``FILE:LINE: ...``).
        arch: the target (``sm_100a``...); overrides the file's ``.target``. None: the file's first
            ``.target`` (its last ``sm_`` entry, E34), or no target (target rules not checked). A
            bare target (``sm_110``, E49) is taken as such a ``.target`` is: it has no tcgen05
            (``PTX-TARGET-TCGEN05`` at the first tcgen05 instruction).

    Returns:
        A :class:`ScanResult`: the instructions (qualifiers, operands with their known bits, the
        validation report) and the findings by line. Descriptor findings keep their codes
        (``IDESC-*``, ``SMEM-*``, ``ZCM-*``, ``MMA-*``, ``WGMMA-*``); the scanner's own are ``PTX-*``
        (``descgen rules --applies ptx``).

    Raises:
        UsageError: ``arch`` is not a target descgen knows, nor a bare one (``CONTEXT-ARCH``).
            Problems in the PTX itself are findings, never exceptions.
    """
    stream = scan_stream(text, filename=filename, arch=arch)
    instructions: list[ScanInstruction] = []
    findings: list[ScanFinding] = []
    for chunk in stream:
        instructions += chunk.instructions
        findings += chunk.findings
    findings.sort(key=lambda f: f.line)
    return ScanResult(filename, stream.arch, stream.arch_from, stream.target, tuple(instructions), tuple(findings))


def scan_file(path: str, *, arch: Arch | None = None) -> ScanResult:
    """:func:`scan_ptx` over a file (read as UTF-8, undecodable bytes replaced); findings name it
    ``path``. Raises OSError if it cannot be read."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        return scan_ptx(fh.read(), filename=path, arch=arch)


#: Characters no PTX text holds: control characters other than blanks, what UTF-8 decoding
#: replaced (U+FFFD) or escaped (lone surrogates), DEL.
_UNPRINTABLE = re.compile("[\x00-\x08\x0e-\x1f\x7f\ufffd\udc80-\udcff]")
#: not_ptx reads this much of the text for its share of unprintable characters.
_SNIFF = 1 << 16


def not_ptx(text: str) -> str | None:
    """Why ``text`` is not PTX to scan, or None (the one test for files, standard input and every
    caller, so that each is reported alike):

    - ``"the file is empty"``: nothing but blanks;
    - ``"the file is binary"``: a NUL byte, or more than 1 in 100 of its first 64 KiB characters
      unprintable (control characters other than blanks, bytes that are not UTF-8);
    - ``"no .version directive and no tcgen05 or wgmma instruction"``: every PTX module opens with
      ``.version`` (PTX ISA §11.1); text without it is still scanned as a fragment when it holds
      an instruction the scan checks (``printf '...tcgen05.mma...' | descgen scan -``).
    """
    if not text.strip(" \t\n\r\f\v"):  # blanks only (str.strip would take \x1c-\x1f for blanks too)
        return "the file is empty"
    head = text[:_SNIFF]
    if "\x00" in text or len(_UNPRINTABLE.findall(head)) * 100 > len(head):
        return "the file is binary"
    if re.search(r"^\s*\.version\b", text, flags=re.M) is None and "tcgen05" not in text and "wgmma" not in text:
        return "no .version directive and no tcgen05 or wgmma instruction"
    return None


def ptx_files(paths: Iterable[str]) -> Iterator[str]:
    """Each path as given, or for a directory every ``*.ptx`` file under it (recursively, sorted);
    ``-`` (standard input) passes through."""
    import os

    for p in paths:
        if p != "-" and os.path.isdir(p):
            found = []
            for root, dirs, files in os.walk(p):
                dirs.sort()
                found += [os.path.join(root, f) for f in files if f.endswith(".ptx")]
            yield from sorted(found)
        else:
            yield p


def implemented() -> frozenset[str]:
    """The catalog codes the scanner reports itself (a test checks them against the catalog)."""
    return frozenset(SCAN_CODES)
