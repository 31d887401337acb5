"""The scanner's rules: every ``PTX-*`` code of the catalog (``applies = "ptx"`` in
``tables/rules.toml``: the instruction's syntax, the file's ``.target`` and ``.version``, operands
the scan cannot read).

The scanner hands each record of facts it reads to :func:`check`, which runs, in catalog order,
every rule over that record: those declared in the catalog ``on`` it (``on = "first tcgen05"``,
their ``[[rule.check]]`` entries compiled by :mod:`descgen.rules.language` as every word's rules
are; :data:`ON` names each record and what a rule reads of it), and the two that stay functions
registered here (``@_rule("PTX-MALFORMED", Malformed)``): ``PTX-MALFORMED`` and
``PTX-OPERAND-UNRESOLVED`` report the scanner's own observations (a statement its parser finds no
form of, an operand its dataflow cannot read), not a predicate over facts. The scanner holds no
rule's logic: a new ``PTX-*`` rule over facts already read is its catalog entry. The records:

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
from ..model.context import bare_target
from ..model.wgmma_facts import wgmma_table
from ..model.engine import Decoded, hex_word
from ..rules.checks import rule_impl
from .lexer import parse_int
from .qualifiers import CpQualifiers, Malformed, MmaOperands, MmaQualifiers
from .results import ScanFinding, ScanOperand

__all__ = ["check", "implemented", "SCAN_CODES", "BadImmediate", "TargetDirective", "FirstTcgen05", "FirstWgmma",
           "FeatureUse", "CtaGroupUse", "MmaSyntax", "MmaDecoded", "ON", "without_tcgen05", "known_without_tcgen05",
           "version_tuple", "fits"]

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
    order: the rules declared in the catalog over that record (``on = ...``, :data:`ON`: compiled
    from their ``[[rule.check]]`` entries, as every word's rules are), and the scanner's own
    functions registered here."""
    codes = _CODES.get(type(facts)) or _codes_for(type(facts))
    if not codes:
        return []
    rules = catalog()
    out: list[ScanFinding] = []
    declared: tuple[str, str | None, dict[str, Any]] | None = None
    for code in codes:
        fn = _RULES.get(code)
        if fn is not None:
            out += fn(rules[code], line, facts)
            continue
        if declared is None:
            declared = ON[type(facts)][1](facts)
        subject, operand, values = declared
        rule = rules[code]
        for f in rule_impl(code)(rule, values, constraints()):
            out.append(ScanFinding(line, f, subject, operand, f.rule[len(rule.rule) + 2:]))
    return out


_CODES: dict[type, tuple[str, ...]] = {}


def _codes_for(kind: type) -> tuple[str, ...]:
    """The codes whose rules read facts of type ``kind`` (registered functions, and rules declared
    ``on`` the record ``kind`` is), in catalog order."""
    on = ON[kind][0] if kind in ON else None
    _CODES[kind] = tuple(code for code, rule in catalog().items()
                         if kind in _FUNCTION_READS.get(code, ())
                         or (on is not None and (rule.declared or {}).get("on") == on))
    return _CODES[kind]


def implemented() -> frozenset[str]:
    """The catalog codes the scanner reports (a test checks them against the catalog's ``applies =
    "ptx"`` rules): its registered functions and the rules declared over its records of facts."""
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
# What a declared rule reads of each record: the subject and operand its findings name, and the
# facts by name (what ``when`` and the templates read).


def _mma_syntax(facts: MmaSyntax) -> tuple[str, str | None, dict[str, Any]]:
    q, sid = facts.q, facts.operands.scale_input_d
    return f"{q.name}.kind::{q.kind}", None, {
        **q.as_dict(), "a_tmem": facts.operands.a_tmem, "scale_input_d": sid,
        "scale_input_d_value": parse_int(sid) if sid is not None else None, "arch": facts.arch}


def _cp(facts: CpQualifiers) -> tuple[str, str | None, dict[str, Any]]:
    return f"tcgen05.cp.{facts.shape}", None, facts.as_dict()


def _mma_decoded(d: MmaDecoded) -> tuple[str, str | None, dict[str, Any]]:
    idesc = d.idesc
    m = None if idesc is None or "m" in idesc.unknown else idesc.value("m")
    return d.operand.label(), "idesc", {"ashift": d.q.ashift, "m": m}


def _target(t: TargetDirective) -> tuple[str, str | None, dict[str, Any]]:
    return ".target", None, {"name": t.name, "known": t.known, "without_tcgen05": without_tcgen05(t.name)}


def _first_tcgen05(f: FirstTcgen05) -> tuple[str, str | None, dict[str, Any]]:
    where = " (--arch)" if f.arch_from == "option" or f.target is None else f" (line {f.target[0]})"
    return ".target", None, {"arch": f.arch, "target_line": f.target[0] if f.target else None,
                             "no_tcgen05": f.no_tcgen05, "where": where}


def _first_wgmma(f: FirstWgmma) -> tuple[str, str | None, dict[str, Any]]:
    """wgmma's target: the option's, else the ``.target``'s as written (E34)."""
    target = (f.arch or f.no_tcgen05) if f.arch_from == "option" else f.target_name
    where = f" (line {f.target[0]})" if f.target is not None and f.arch_from != "option" else ""
    return ".target", None, {"target": target, "where": where}


def _feature(u: FeatureUse) -> tuple[str, str | None, dict[str, Any]]:
    have = version_tuple(u.version[1]) if u.version is not None else None
    return u.subject, None, {"feature": u.feature, "version": u.version[1] if u.version else None,
                             "have": 100 * have[0] + have[1] if have is not None else None}


def _cta_group(u: CtaGroupUse) -> tuple[str, str | None, dict[str, Any]]:
    other = next((k for k in u.seen if k != u.group), None)
    return u.opcode.split(".cta_group")[0], None, {
        "cta_group": u.group, "other": other, "other_line": u.seen[other] if other is not None else None,
        "where": f" in {u.function}" if u.function else ""}


def _immediate(b: BadImmediate) -> tuple[str, str | None, dict[str, Any]]:
    return f"{b.subject} {b.text}", b.role, {
        "text": b.text, "width": b.width, "word": b.word, "role": b.role or "immediate",
        "word_hex": hex_word(b.word, b.width) if b.word is not None else None}


#: Each record of facts a declared rule may read (``on = ...``, catalog.PTX_FACTS): its name and
#: what a rule reads of it.
ON: dict[type, tuple[str, Callable[[Any], tuple[str, str | None, dict[str, Any]]]]] = {
    MmaSyntax: ("tcgen05.mma", _mma_syntax), CpQualifiers: ("tcgen05.cp", _cp),
    MmaDecoded: ("tcgen05.mma idesc", _mma_decoded), TargetDirective: (".target", _target),
    FirstTcgen05: ("first tcgen05", _first_tcgen05), FirstWgmma: ("first wgmma", _first_wgmma),
    FeatureUse: ("feature", _feature), CtaGroupUse: ("cta_group", _cta_group), BadImmediate: ("immediate", _immediate),
}


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


def known_without_tcgen05(name: str) -> bool:
    """Whether ``name`` is a target descgen knows that has no tcgen05: a bare one (``sm_110``, E49) or
    Hopper's ``sm_90a`` (its wgmma is checked there)."""
    return bool(bare_target(name)) or name.strip().lower() in wgmma_table().targets


def fits(value: int, width: int) -> bool:
    """Whether a literal is a ``width``-bit word as written: unsigned, or negative in two's
    complement. ptxas keeps the low ``width`` bits of one that is not (E48)."""
    return -(1 << (width - 1)) <= value < 1 << width


# --------------------------------------------------------------------------------------------
# The rules, in catalog order.


@_rule("PTX-OPERAND-UNRESOLVED", ScanOperand)
def _operand_unresolved(rule: Rule, line: int, o: ScanOperand) -> list[ScanFinding]:
    if o.resolved:
        return []
    return _found(rule, line, f"{o.name} {o.text}", o.role, o.text, "", o.why_text(), o.role)


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


#: The scanner's own codes, in catalog order (each catalogued with ``applies = "ptx"``).
SCAN_CODES: tuple[str, ...] = tuple(code for code, rule in catalog().items() if rule.applies == "ptx")
