"""PTX scanning: every ``tcgen05.mma`` / ``tcgen05.cp`` (and Hopper's ``wgmma.mma_async``) in a PTX
file, the bits of each descriptor operand known at compile time, and each instruction checked with
its own qualifiers.

:func:`scan_ptx` (and :func:`scan_stream`, one function at a time) reads PTX text line by line
(comments, several statements on a line and statements over several lines are fine), finds every
``tcgen05.mma`` in all its forms (§9.7.16.10.9.1-4: ``.sp``, ``.ws``, ``.ws.sp``,
``.block_scale{.scale_vectorsize}``, ``.collector::*``, ``.ashift``, ``[a-tmem]``) and every
``tcgen05.cp`` (§9.7.16.9.2), and gives each descriptor operand (``idesc``, ``a-desc``,
``b-desc``, ``zero-column-mask-desc``, ``s-desc``; 32 or 64 bits) its known bits
(:class:`descgen.model.engine.KnownBits`) and value range: an immediate (E33) is known; a register is
followed through the definitions that reach the instruction by :mod:`descgen.ptx.dataflow` (E38,
E42). Braces open register scopes; registers may be named without ``%`` when declared. Only
functions with such an instruction are analysed: text is read function by function and a function
with nothing the scanner reads is skipped unread (:func:`descgen.ptx.skipping.unread`); a function with one is read
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
``tables/rules.toml`` (``applies = "ptx"``) and implemented in :mod:`descgen.ptx.syntax_rules`.

The scanner is in parts, each a module of :mod:`descgen.ptx`: this one reads the text (directives,
scopes, statements, function ends: :class:`_Scan`) and is the public entry point;
:mod:`~descgen.ptx.skipping` says what is not read, :mod:`~descgen.ptx.qualifiers` reads an
instruction's opcode and operands into typed records, :mod:`~descgen.ptx.syntax_rules` holds the
``PTX-*`` rules, :mod:`~descgen.ptx.instruction_checks` checks an instruction once its operands'
values are known, and :mod:`~descgen.ptx.results` holds the records a scan gives.

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

import re
from typing import Iterable, Iterator

from ..model.context import normalize_arch
from ..core.errors import DescgenError
from ..core.types import SmemArch
from .dataflow import Function, Recorder
from .instruction_checks import PendingInstruction, check_instruction
from .lexer import Lexer, Operand, parse_int, split_operands
from .qualifiers import (Malformed, Qualifiers, parse_cp, parse_mma_operands, parse_mma_qualifiers,
                         parse_wgmma_operands, parse_wgmma_qualifiers)
from .results import WIDTHS, ScanChunk, ScanFinding, ScanInstruction, ScanOperand, ScanResult, ScanTally
from .skipping import functions, not_ptx, ptx_files, trailer_unread, unread
from .slicer import RESOLVED, slice_function
from .syntax_rules import (SCAN_CODES, BadImmediate, CtaGroupUse, FeatureUse, FirstTcgen05, FirstWgmma, MmaSyntax,
                           TargetDirective, check, implemented, known_without_tcgen05, without_tcgen05)

__all__ = ["scan_ptx", "scan_file", "scan_stream", "ScanStream", "ScanChunk", "ScanTally", "ScanResult",
           "ScanInstruction", "ScanOperand", "ScanFinding", "SCAN_CODES", "parse_int", "not_ptx", "ptx_files",
           "implemented"]

_REG_DECL = re.compile(r"([A-Za-z_$%][\w$]*)\s*(?:<\s*(\d+)\s*>)?")
_ALIGN = re.compile(r"\.align\s+(\d+)")
_SHARED_NAME = re.compile(r"([A-Za-z_$][\w$]*)\s*(?:\[[^\]]*\]\s*)*(?:=.*)?$")
_TYPE_SIZE = re.compile(r"\.[bsuf](\d+)\b")


def _registers(text: str) -> list[tuple[str, int | None]]:
    """``.reg .b32 %r<40>;``, ``.reg .pred p, q;``: each name declared, with its count for
    ``name<count>``."""
    names = []
    for t in split_operands(re.sub(r"^\.reg\s+(?:\.\w+\s+)*", "", text)):
        m = _REG_DECL.fullmatch(t)
        if m:
            names.append((m.group(1), None if m.group(2) is None else int(m.group(2))))
    return names


def _shared_symbol(text: str) -> tuple[str, int] | None:
    """A ``.shared`` declaration's symbol and its alignment in bytes (``.align``, else its type's
    size), or None."""
    head = text.split("=", 1)[0]
    m = _SHARED_NAME.search(head.split()[-1]) if head.split() else None
    if not m:
        return None
    align = _ALIGN.search(head)
    size = _TYPE_SIZE.search(head)
    return m.group(1), int(align.group(1)) if align else (int(size.group(1)) // 8 if size else 1)


class _Scan:
    """One file's scan, fed its text function by function (:meth:`chunks`).

    It keeps what the text says between statements: the file's target and ``.version`` (E34, E40),
    the ``.shared`` symbols' alignments, the current function (its name, its ``.cta_group`` s, its
    statements: a :class:`~descgen.ptx.dataflow.Recorder` until an instruction asks for values,
    then a :class:`~descgen.ptx.dataflow.Function`) and the tcgen05 / wgmma instructions read in it
    (:class:`~descgen.ptx.instruction_checks.PendingInstruction`). Each instruction's opcode and
    operands are read by :mod:`descgen.ptx.qualifiers`; every fact read goes to
    :func:`descgen.ptx.syntax_rules.check`, which holds the ``PTX-*`` rules; when the function ends
    its instructions' operands are solved together and checked
    (:func:`descgen.ptx.instruction_checks.check_instruction`), and :meth:`chunks` hands out what
    the function gave as one :class:`~descgen.ptx.results.ScanChunk`.
    """

    def __init__(self, filename: str, arch: SmemArch | None) -> None:
        self.filename = filename
        self.findings: list[ScanFinding] = []
        self.instructions: list[ScanInstruction] = []
        # --arch sm_110, or Hopper's sm_90a: a target without tcgen05, read as its .target would be (E49)
        bare = arch is not None and known_without_tcgen05(str(arch))
        self.arch = None if bare else normalize_arch(arch)
        self.arch_from = "option" if self.arch or bare else None
        self.target: tuple[int, str] | None = None
        # a .target known to lack tcgen05 (sm_90a, sm_100, sm_120a), or such an --arch
        self.no_tcgen05: str | None = str(arch).strip().lower() if bare else None
        self.target_name: str | None = None  # the .target's target as written (E34), for wgmma
        self.seen_wgmma = False
        self.version: tuple[int, str] | None = None
        self.version_checked: set[str] = set()  # features already checked by PTX-VERSION
        self.cta_groups: dict[int, int] = {}  # cta_group -> first line, in the current function
        self.function = ""
        self.shared: dict[str, int] = {}  # .shared symbol -> alignment (bytes), module-wide
        self.direct = False  # the function being read has an instruction in RESOLVED: no Recorder
        self.fn: Function | Recorder = Recorder(self.shared)
        self.pending: list[PendingInstruction] = []
        self.body_depth: int | None = None  # scope depth of the current function's body
        self.header = False  # a function header was the last statement: its '{' opens the body
        self.seen_instruction = False

    def rules(self, line: int, facts: object) -> None:
        """The PTX-* rules that read ``facts`` (:func:`descgen.ptx.syntax_rules.check`)."""
        self.findings += check(line, facts)

    # directives and scopes -------------------------------------------------------------------

    def directive(self, line: int, text: str) -> None:
        head = text.split(None, 1)
        d = head[0]
        if d in (".loc", ".file", ".address_size", ".pragma", ".maxntid", ".reqntid", ".maxnreg", ".minnctapersm"):
            return
        if d == ".reg":  # declared in the current scope (an inner one shadows until its brace closes)
            self.fn.declare(_registers(text), self.body_depth or 0)
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
            symbol = _shared_symbol(text)
            if symbol is not None:
                self.shared[symbol[0]] = symbol[1]
            return
        if ".entry" in text or ".func" in text:
            words = text.split()
            if ".entry" in words or ".func" in words:
                self.finish_function()
                self.cta_groups = {}
                m = re.search(r"\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)", text)
                self.function = m.group(1) if m else ""
                self.header = True

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
        known = True
        try:
            self.arch = normalize_arch(name)
            self.arch_from = "target"
        except DescgenError:
            known = False
            if without_tcgen05(name):
                self.no_tcgen05 = name  # reported at the first tcgen05 instruction (PTX-TARGET-TCGEN05)
        self.rules(line, TargetDirective(name, known))  # PTX-TARGET-UNKNOWN

    def _needs_version(self, line: int, subject: str, features: Iterable[str | None]) -> None:
        """PTX-VERSION, once per feature and file (E40): each feature is checked against the
        ``.version`` once (the directive comes once; a feature found new enough stays so)."""
        if self.version is None:
            return
        for feature in features:
            if feature is None or feature in self.version_checked:
                continue
            self.version_checked.add(feature)
            self.rules(line, FeatureUse(subject, feature, self.version))

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
        self.rules(line, CtaGroupUse(opcode, g, self.cta_groups, self.function))  # PTX-CTA-GROUP-MIXED
        self.cta_groups.setdefault(g, line)

    def _first_instruction(self, line: int) -> None:
        if self.seen_instruction:
            return
        self.seen_instruction = True
        self.rules(line, FirstTcgen05(self.arch, self.arch_from, self.target, self.no_tcgen05))

    def _pend(self, line: int, index: int, opcode: str, text: str, name: str, q: Qualifiers,
              descriptors: Iterable[tuple[str, str]]) -> None:
        self.pending.append(PendingInstruction(line, index, opcode, text + ";", name, q,
                                               [(role, t, self._operand(t)) for role, t in descriptors]))

    def mma(self, line: int, index: int, text: str, opcode: str, operands: list[str]) -> None:
        self._first_instruction(line)
        q = parse_mma_qualifiers(opcode)
        if isinstance(q, Malformed):
            self.rules(line, q)
            return
        self._needs_version(line, "tcgen05.mma", q.features)
        layout = parse_mma_operands(q, operands)
        if isinstance(layout, Malformed):
            self.rules(line, layout)
            return
        if layout.problem is not None:
            self.rules(line, layout.problem)
        q = q.with_a_tmem(layout.a_tmem)
        self.rules(line, MmaSyntax(q, layout, self.arch))
        self._pend(line, index, "tcgen05.mma", text, q.name, q, layout.descriptors)

    def cp(self, line: int, index: int, text: str, opcode: str, operands: list[str]) -> None:
        self._first_instruction(line)
        name = "tcgen05.cp"
        self._needs_version(line, name, (name,))
        q = parse_cp(opcode, operands)
        if isinstance(q, Malformed):
            self.rules(line, q)
            return
        self.rules(line, q)  # PTX-CP-SHAPE
        self._pend(line, index, "tcgen05.cp", text, name, q, [("s_desc", operands[1])])

    # Hopper wgmma.mma_async (§9.7.15.5.2, §9.7.15.6.3) -----------------------------------------

    def _first_wgmma(self, line: int) -> None:
        if self.seen_wgmma:
            return
        self.seen_wgmma = True
        self.rules(line, FirstWgmma(self.arch, self.arch_from, self.target, self.no_tcgen05, self.target_name))

    def wgmma(self, line: int, index: int, text: str, opcode: str, operands: list[str]) -> None:
        """``wgmma.mma_async{.sp}.sync.aligned.shape.dtype.atype.btype{.satfinite}``: the qualifiers
        and immediates as written; the descriptor operands are resolved when the function ends and
        the whole instruction goes to :func:`descgen.check_wgmma`."""
        self._first_wgmma(line)
        q = parse_wgmma_qualifiers(opcode)
        if isinstance(q, Malformed):
            self.rules(line, q)
            return
        self._needs_version(line, q.name, q.features)
        parsed = parse_wgmma_operands(q, operands)
        if isinstance(parsed, Malformed):
            self.rules(line, parsed)
            return
        q, descriptors = parsed
        self._pend(line, index, "wgmma.mma_async", text, q.subject, q, descriptors)

    # resolution and checks, once per function ------------------------------------------------

    def finish_function(self) -> None:
        """Resolve and check the tcgen05 instructions of the function just read, then forget it."""
        pending, self.pending = self.pending, []
        if pending:
            uses = [(p.index, op, WIDTHS[role]) for p in pending for role, _, op in p.ops if op[0] == "reg"]
            assert isinstance(self.fn, Function)
            vals = iter(self.fn.solve(uses))
            for p in pending:
                ins, found = check_instruction(p, {role: next(vals) for role, _, op in p.ops if op[0] == "reg"},
                                               self.arch)
                self.findings += found
                self.instructions.append(ins)
            for m in self.fn.immediates:  # PTX-IMMEDIATE-TRUNCATED, PTX-MALFORMED (E48)
                self.rules(m.line, BadImmediate(m.opcode, m.text, m.width, m.word, m.why))
        self.fn = Function(self.shared) if self.direct else Recorder(self.shared)
        self.body_depth = None

    # the whole file --------------------------------------------------------------------------

    def chunks(self, source: str | Iterable[str]) -> Iterator[ScanChunk]:
        """Scan ``source`` (text, or its lines); one :class:`ScanChunk` per function (and one for
        what is outside). Text is read function by function: a function
        :func:`~descgen.ptx.skipping.unread` allows is skipped unread (as reading it would, it only
        ends the function before it)."""
        lexer = Lexer()
        if not isinstance(source, str):
            yield from self._read(lexer.feed(source))
        else:
            first = 1
            for part in functions(source):
                lines = part.splitlines()
                if lexer.clean and unread(part):
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
                        if not trailer_unread("\n".join(lines[sliced.read:])):
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


class ScanStream:
    """:func:`scan_stream`'s answer: iterate it for :class:`ScanChunk` s (one per function, in
    file order); afterwards ``arch``, ``arch_from``, ``target`` and ``version``
    describe the file. Iterate once."""

    def __init__(self, source: str | Iterable[str], filename: str, arch: SmemArch | None) -> None:
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


def scan_stream(source: str | Iterable[str], *, filename: str = "<stdin>", arch: SmemArch | None = None) -> ScanStream:
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


def scan_ptx(text: str, *, filename: str = "<stdin>", arch: SmemArch | None = None) -> ScanResult:
    """Scan PTX text for ``tcgen05.mma`` / ``tcgen05.cp`` / ``wgmma.mma_async`` and check every
    descriptor operand with what is known of it at compile time (E38).

    Args:
        text: the PTX source (a whole file or a fragment).
        filename: how findings name the file (``FILE:LINE: ...``).
        arch: the target (``sm_100a``...); overrides the file's ``.target``. None: the file's first
            ``.target`` (its last ``sm_`` entry, E34), or no target (target rules not checked). A
            bare target (``sm_110``, E49) or Hopper's ``sm_90a`` is taken as such a ``.target`` is:
            it has no tcgen05 (``PTX-TARGET-TCGEN05`` at the first tcgen05 instruction); wgmma is
            checked under ``sm_90a``.

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


def scan_file(path: str, *, arch: SmemArch | None = None) -> ScanResult:
    """:func:`scan_ptx` over a file (read as UTF-8, undecodable bytes replaced); findings name it
    ``path``. Raises OSError if it cannot be read."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        return scan_ptx(fh.read(), filename=path, arch=arch)
