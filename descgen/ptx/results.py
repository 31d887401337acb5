"""What a PTX scan gives: each descriptor operand (:class:`ScanOperand`), finding
(:class:`ScanFinding`) and instruction (:class:`ScanInstruction`), one function's share
(:class:`ScanChunk`), a whole file's (:class:`ScanResult`) and the running totals of the one-line
summary (:class:`ScanTally`). Records only: :mod:`descgen.ptx.scan` makes them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from ..model.engine import KnownBits, hex_word, show_value
from ..core.errors import Finding, HasFindings
from ..words.identify import key_fields
from ..model.report import Report
from .qualifiers import Qualifiers

__all__ = ["ScanOperand", "ScanFinding", "ScanInstruction", "ScanChunk", "ScanTally", "ScanResult", "severity_word",
           "OPERAND_NAMES", "WIDTHS"]

#: PTX's names for the descriptor operands (the instruction pages' syntax), by descgen role.
OPERAND_NAMES = {"idesc": "idesc", "a_desc": "a-desc", "b_desc": "b-desc", "zcm": "zero-column-mask-desc",
                 "s_desc": "s-desc"}
#: Operand widths in bits (§9.7.16.10.9.1: 32-bit idesc, 64-bit a-desc/b-desc; §9.7.16.10.9.3:
#: 64-bit zero-column-mask-desc; §9.7.16.9.2: 64-bit s-desc).
WIDTHS = {"idesc": 32, "a_desc": 64, "b_desc": 64, "zcm": 64, "s_desc": 64}


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
        known: the known bits (:class:`descgen.model.engine.KnownBits`; ``mask`` = bits fixed at compile
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
        chars = ["?" if not b.mask >> i & 1 else "1" if b.value >> i & 1 else "0"
                 for i in range(self.width - 1, -1, -1)]
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
        qualifiers: what the opcode says, a typed record that reads as a mapping too
            (:class:`~descgen.ptx.qualifiers.MmaQualifiers`, ``CpQualifiers``, ``WgmmaQualifiers``;
            ``qualifiers.kind`` or ``qualifiers["kind"]``): ``kind``, ``cta_group``, ``ws``, ``sp``, ``block_scale``,
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
    qualifiers: Qualifiers
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
            "qualifiers": self.qualifiers.as_dict(),
            "operands": [o.as_dict() for o in self.operands],
            "checked": rep is not None,
            "fields_checked": {role: [f.name for f in d.fields if f.value is not None]
                               for role, d in rep.decoded.items() if d is not None} if rep is not None else {},
            "not_checked": [n.as_dict() for n in rep.not_checked] if rep is not None else [],
            "decoded": {role: d.as_dict() for role, d in rep.decoded.items()
                        if d is not None} if rep is not None else {},
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



@dataclass(frozen=True)
class ScanChunk:
    """What one function (or the statements outside any) gave, in line order: its instructions
    and its findings. :func:`scan_stream` yields one per function, so memory stays bounded by
    the largest function."""

    instructions: tuple[ScanInstruction, ...]
    findings: tuple[ScanFinding, ...]



def severity_word(severity: str) -> str:
    """The compiler word for a severity: ``error``, ``warning``, ``note`` (for ``info``)."""
    return "note" if severity == "info" else severity
