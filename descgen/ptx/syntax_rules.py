"""The scanner's own rules: every ``PTX-*`` code of the catalog (``applies = "ptx"`` in
``tables/rules.toml``: the instruction's syntax, the file's ``.target`` and ``.version``, operands
the scan cannot read), each one function here, registered under its code.

A rule function takes the catalog's :class:`~descgen.model.catalog.Rule`, the line and one record of
facts the scanner read, and returns its findings (none when the facts break no rule), each made
with ``rule.finding(...)``. It is registered with the types of facts it reads
(``@_rule("PTX-CP-SHAPE", CpQualifiers)``); the scanner hands each record it reads to :func:`check`,
which runs every rule registered for that type, in catalog order, so that the scanner holds no
rule's logic and a new ``PTX-*`` rule over facts already read is its catalog entry and its
function here. The facts:

- :class:`~descgen.ptx.qualifiers.Malformed`: a statement that is no form of its syntax;
- :class:`BadImmediate`: an immediate ptxas cuts to its operand's width or rejects (E48);
- :class:`~descgen.ptx.results.ScanOperand`: a descriptor operand once its value is known;
- :class:`TargetDirective`, :class:`FirstTcgen05`, :class:`FirstWgmma`: the file's target when
  its ``.target`` and its first instruction of each family are read (E34, E49);
- :class:`FeatureUse`: a feature and the file's ``.version`` (E40);
- :class:`CtaGroupUse`: a ``.cta_group`` and those the function used before;
- :class:`MmaSyntax`: a ``tcgen05.mma``'s qualifiers and operands (§9.7.16.10.9.1-4);
- :class:`MmaDecoded`: a ``tcgen05.mma`` with its instruction descriptor decoded;
- :class:`~descgen.ptx.qualifiers.CpQualifiers`: a ``tcgen05.cp``'s qualifiers (§9.7.16.9.2).

What the scanner keeps between statements (the target, the features already reported, the
function's ``.cta_group`` s) is the scanner's; what breaks a rule is decided here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, TypeVar

from ..model.catalog import Rule, catalog, constraints
from ..model.engine import Decoded, hex_word
from ..rules.checks import rule_impl
from ..model.wgmma_facts import wgmma_table
from .lexer import parse_int
from .qualifiers import CpQualifiers, Malformed, MmaOperands, MmaQualifiers
from .results import ScanFinding, ScanOperand

__all__ = ["check", "implemented", "SCAN_CODES", "BadImmediate", "TargetDirective", "FirstTcgen05", "FirstWgmma",
           "FeatureUse", "CtaGroupUse", "MmaSyntax", "MmaDecoded", "without_tcgen05", "version_tuple", "fits",
           "signed_range"]

#: A rule's function: (its catalog entry, the line, the facts) -> its findings.
RuleFunction = Callable[[Rule, int, Any], list[ScanFinding]]
_F = TypeVar("_F", bound=RuleFunction)

#: Every PTX-* rule's function, by code, in catalog order.
_RULES: dict[str, RuleFunction] = {}
#: The types of facts each registered function reads.
_FUNCTION_READS: dict[str, tuple[type, ...]] = {}


def _rule(code: str, *reads: type) -> Callable[[_F], _F]:
    """Register the function of rule ``code``, which reads facts of the types ``reads``."""
    def register(fn: _F) -> _F:
        _RULES[code] = fn
        _FUNCTION_READS[code] = reads
        return fn
    return register


def check(line: int, facts: object) -> list[ScanFinding]:
    """The findings of every rule that reads facts of ``facts``' type, at ``line``, in catalog
    order: the functions registered here, and the rules declared in the catalog over one
    instruction's qualifiers (``on = "tcgen05.mma"``/``"tcgen05.cp"``: compiled from their
    ``[[rule.check]]`` entries, as every word's rules are)."""
    codes = _CODES.get(type(facts)) or _codes_for(type(facts))
    if not codes:
        return []
    rules = catalog()
    out: list[ScanFinding] = []
    declared: tuple[str, dict[str, Any]] | None = None
    for code in codes:
        fn = _RULES.get(code)
        if fn is not None:
            out += fn(rules[code], line, facts)
            continue
        if declared is None:
            declared = _declared_facts(facts)
        subject, values = declared
        rule = rules[code]
        for f in rule_impl(code)(rule, values, constraints()):
            out.append(ScanFinding(line, f, subject, None, f.rule[len(rule.rule) + 2:]))
    return out


_CODES: dict[type, tuple[str, ...]] = {}


def _codes_for(kind: type) -> tuple[str, ...]:
    """The codes whose rules read facts of type ``kind`` (registered functions, and declared rules
    on the instruction ``kind`` carries), in catalog order."""
    on = {MmaSyntax: "tcgen05.mma", CpQualifiers: "tcgen05.cp"}.get(kind)
    _CODES[kind] = tuple(code for code, rule in catalog().items()
                         if kind in _FUNCTION_READS.get(code, ())
                         or (on is not None and (rule.declared or {}).get("on") == on))
    return _CODES[kind]


def _declared_facts(facts: object) -> tuple[str, dict[str, Any]]:
    """The subject a declared rule's findings name, and the facts its checks read: the
    instruction's qualifiers (and a tcgen05.mma's A in tensor memory, scale-input-d as written and
    its value, the target)."""
    if isinstance(facts, MmaSyntax):
        q, sid = facts.q, facts.operands.scale_input_d
        return f"{q.name}.kind::{q.kind}", {**q.as_dict(), "a_tmem": facts.operands.a_tmem, "scale_input_d": sid,
                                            "scale_input_d_value": parse_int(sid) if sid is not None else None,
                                            "arch": facts.arch}
    assert isinstance(facts, CpQualifiers)
    return f"tcgen05.cp.{facts.shape}", facts.as_dict()


def implemented() -> frozenset[str]:
    """The catalog codes the scanner reports (a test checks them against the catalog's ``applies =
    "ptx"`` rules): its registered functions and the rules declared over an instruction's
    qualifiers."""
    return frozenset(_RULES) | {code for code, rule in catalog().items() if (rule.declared or {}).get("on")}


def _found(rule: Rule, line: int, subject: str, field: str, value: Any, allowed: str, detail: str,
           operand: str | None = None) -> list[ScanFinding]:
    """One finding of ``rule``; ``detail`` is what the message prints after the subject."""
    return [ScanFinding(line, rule.finding(field, value, allowed, detail), subject, operand, detail)]


# --------------------------------------------------------------------------------------------
# The facts.


@dataclass(frozen=True, slots=True)
class BadImmediate:
    """An immediate ptxas does not take as written (E48).

    Attributes:
        subject: the operand's name (``b-desc``) or the statement's opcode (``mov.b32``).
        text: the literal (as written when ptxas rejects it, else in hex).
        width: the bits of the operand it is written for.
        word: the low ``width`` bits ptxas keeps (what the scan reads), or None when ptxas rejects
            the statement.
        why: for a rejected one, ptxas's reason; else empty.
        role: the descriptor operand (``b_desc``), or None for a statement the dataflow read.
    """

    subject: str
    text: str
    width: int
    word: int | None
    why: str = ""
    role: str | None = None


@dataclass(frozen=True, slots=True)
class TargetDirective:
    """The file's ``.target`` (its last ``sm_`` entry, E34) and whether descgen knows it as a
    tcgen05 target."""

    name: str
    known: bool


@dataclass(frozen=True, slots=True)
class FirstTcgen05:
    """The file's target at its first tcgen05 instruction.

    Attributes:
        arch: the target the rules run with, or None. arch_from: ``"option"``, ``"target"`` or None.
        target: the ``.target`` directive's line and text, or None.
        no_tcgen05: a target known to lack tcgen05 (``sm_90a``, ``sm_100``, ``--arch sm_110``), or None.
    """

    arch: str | None
    arch_from: str | None
    target: tuple[int, str] | None
    no_tcgen05: str | None


@dataclass(frozen=True, slots=True)
class FirstWgmma:
    """The file's target at its first ``wgmma.mma_async``: as :class:`FirstTcgen05`, and
    ``target_name``, the ``.target``'s target as written (E34)."""

    arch: str | None
    arch_from: str | None
    target: tuple[int, str] | None
    no_tcgen05: str | None
    target_name: str | None


@dataclass(frozen=True, slots=True)
class FeatureUse:
    """A feature (``tcgen05.mma``, ``.kind::mxf4``, ``.target``'s ``sm_103a``) an instruction or
    directive uses, and the file's ``.version`` (its line and value), or None."""

    subject: str
    feature: str
    version: tuple[int, str] | None


@dataclass(frozen=True, slots=True)
class CtaGroupUse:
    """A tcgen05 instruction's ``.cta_group::N``.

    Attributes:
        opcode: the opcode with its qualifiers. group: N.
        seen: the ``.cta_group`` s used before in the function, each with its first line.
        function: the function's name, or ``""``.
    """

    opcode: str
    group: int
    seen: Mapping[int, int]
    function: str


@dataclass(frozen=True, slots=True)
class MmaSyntax:
    """A ``tcgen05.mma``'s qualifiers and operands, and the target (None: unknown)."""

    q: MmaQualifiers
    operands: MmaOperands
    arch: str | None


@dataclass(frozen=True, slots=True)
class MmaDecoded:
    """A ``tcgen05.mma`` once its words are checked: its qualifiers, its instruction descriptor
    decoded (None when it could not be) and the idesc operand."""

    q: MmaQualifiers
    idesc: Decoded | None
    operand: ScanOperand


# --------------------------------------------------------------------------------------------
# Helpers the rules and the scanner share.


def version_tuple(text: str) -> tuple[int, int] | None:
    """``"8.7"`` -> ``(8, 7)``; None for a .version that is not MAJOR.MINOR."""
    major, _, minor = text.strip().partition(".")
    return (int(major), int(minor)) if major.isdigit() and minor.isdigit() else None


def without_tcgen05(name: str) -> bool:
    """Whether a ``.target`` descgen does not know is one ptxas rejects tcgen05 on: before sm_100
    (``sm_90a``), without the arch- or family-specific suffix (``sm_100``, ``compute_100``), or of
    the sm_120 family (``sm_120a``). An unknown later target (``sm_130a``) is only unknown
    (PTX-TARGET-UNKNOWN)."""
    m = re.fullmatch(r"(?:sm|compute)_(\d+)([af]?)", name.strip().lower())
    if m is None:
        return False
    number, suffix = int(m.group(1)), m.group(2)
    return number < 100 or not suffix or 120 <= number < 130


def fits(value: int, width: int) -> bool:
    """Whether a literal is a ``width``-bit word as written: unsigned, or negative in two's
    complement. ptxas keeps the low ``width`` bits of one that is not (E48)."""
    return -(1 << (width - 1)) <= value < 1 << width


def signed_range(width: int) -> str:
    """``-0x80000000..0xffffffff``: the literals a ``width``-bit operand takes as written."""
    return f"{-(1 << (width - 1)):#x}..{(1 << width) - 1:#x}"


# --------------------------------------------------------------------------------------------
# The rules, in catalog order.


@_rule("PTX-OPERAND-UNRESOLVED", ScanOperand)
def _operand_unresolved(rule: Rule, line: int, o: ScanOperand) -> list[ScanFinding]:
    if o.resolved:
        return []
    return _found(rule, line, f"{o.name} {o.text}", o.role, o.text, "", o.why_text(), o.role)


@_rule("PTX-TARGET-MISSING", FirstTcgen05)
def _target_missing(rule: Rule, line: int, f: FirstTcgen05) -> list[ScanFinding]:
    if f.arch is not None or f.target is not None or f.no_tcgen05 is not None:
        return []
    return _found(rule, line, "file", "arch", None, ", ".join(constraints().targets),
                  "no .target directive before the first tcgen05 instruction and no --arch; the rules that need "
                  "the target are not checked")


@_rule("PTX-TARGET-UNKNOWN", TargetDirective)
def _target_unknown(rule: Rule, line: int, t: TargetDirective) -> list[ScanFinding]:
    if t.known or without_tcgen05(t.name):  # (one without tcgen05 is reported at its first use)
        return []
    return _found(rule, line, ".target", "arch", t.name, ", ".join(constraints().targets),
                  f".target {t.name}; the rules that need the target are not checked (--arch sets one)")


@_rule("PTX-TARGET-TCGEN05", FirstTcgen05)
def _target_tcgen05(rule: Rule, line: int, f: FirstTcgen05) -> list[ScanFinding]:
    if f.no_tcgen05 is None:
        return []
    where = " (--arch)" if f.arch_from == "option" or f.target is None else f" (line {f.target[0]})"
    return _found(rule, line, ".target", "arch", f.no_tcgen05, ", ".join(constraints().targets),
                  f".target {f.no_tcgen05}{where} has no tcgen05: ptxas rejects the instruction "
                  "there; tcgen05 needs one of the targets allowed")


@_rule("PTX-TARGET-WGMMA", FirstWgmma)
def _target_wgmma(rule: Rule, line: int, f: FirstWgmma) -> list[ScanFinding]:
    """wgmma needs sm_90a (the option's target, else the ``.target``'s, E34)."""
    target = (f.arch or f.no_tcgen05) if f.arch_from == "option" else f.target_name
    allowed = wgmma_table().targets
    if target is None or target in allowed:
        return []
    where = f" (line {f.target[0]})" if f.target is not None and f.arch_from != "option" else ""
    return _found(rule, line, ".target", "arch", target, ", ".join(allowed),
                  f".target {target}{where} has no wgmma.mma_async: ptxas rejects the instruction there")


@_rule("PTX-VERSION", FeatureUse)
def _version(rule: Rule, line: int, u: FeatureUse) -> list[ScanFinding]:
    """A feature newer than the ``.version`` directive ([[ptx_version]] of the tables, E40)."""
    if u.version is None:
        return []
    have = version_tuple(u.version[1])
    table = constraints().ptx_versions
    if u.feature not in table or have is None:
        return []
    need, source = table[u.feature]
    if not have < need:
        return []
    return _found(rule, line, u.subject, "version", u.version[1], f"{need[0]}.{need[1]} or later",
                  f"{u.feature} needs PTX ISA {need[0]}.{need[1]} ({source}); the file says .version {u.version[1]}")


@_rule("PTX-MALFORMED", Malformed, BadImmediate)
def _malformed(rule: Rule, line: int, facts: Malformed | BadImmediate) -> list[ScanFinding]:
    if isinstance(facts, Malformed):
        return _found(rule, line, facts.subject, "instruction", facts.subject, "a form of the instruction's syntax",
                      facts.what)
    b = facts
    if b.word is not None:
        return []
    allowed = "0..255" if "outside 0..255" in b.why else "a literal ptxas can read (its digits within 64 bits)"
    return _found(rule, line, f"{b.subject} {b.text}", b.role or "immediate", b.text, allowed,
                  f"ptxas rejects the immediate {b.text}: {b.why}", b.role)


@_rule("PTX-ASHIFT-M", MmaDecoded)
def _ashift_m(rule: Rule, line: int, d: MmaDecoded) -> list[ScanFinding]:
    idesc = d.idesc
    if not d.q.ashift or idesc is None or "m" in idesc.unknown:
        return []
    m = idesc.value("m")
    if m in (128, 256):
        return []
    return _found(rule, line, d.operand.label(), "m", m, "128, 256", f".ashift with M = {m}", "idesc")


@_rule("PTX-CTA-GROUP-MIXED", CtaGroupUse)
def _cta_group_mixed(rule: Rule, line: int, u: CtaGroupUse) -> list[ScanFinding]:
    other = next((k for k in u.seen if k != u.group), None)
    if other is None:
        return []
    where = f" in {u.function}" if u.function else ""
    first = u.seen[other]
    return _found(rule, line, u.opcode.split(".cta_group")[0], "cta_group", u.group, f"{other} (as at line {first})",
                  f".cta_group::{u.group} here, .cta_group::{other} at line {first}{where}")


@_rule("PTX-IMMEDIATE-TRUNCATED", BadImmediate)
def _immediate_truncated(rule: Rule, line: int, b: BadImmediate) -> list[ScanFinding]:
    if b.word is None:
        return []
    return _found(rule, line, f"{b.subject} {b.text}", b.role or "immediate", b.text, signed_range(b.width),
                  f"wider than its {b.width}-bit operand: ptxas keeps the low {b.width} bits, "
                  f"{hex_word(b.word, b.width)}, and the scan reads that", b.role)


#: The scanner's own codes, in catalog order (each catalogued with ``applies = "ptx"``).
SCAN_CODES: tuple[str, ...] = tuple(code for code, rule in catalog().items() if rule.applies == "ptx")
