"""``descgen instrument``: PTX with run-time checks of the descriptor operands the static scan could
not prove (docs/sanitizer.md).

The scan (:func:`descgen.ptx.scan.scan_ptx`) reads each ``tcgen05.mma``, ``tcgen05.cp`` and
``wgmma.mma_async``: which bits of each descriptor operand are fixed at compile time, and which of
the catalog's rules read a field known at run time only (its report's ``not_checked`` entries
with ``why = "run-time"``). Before each such instruction this module puts one ``{ }`` block that,
from the very registers the instruction reads:

- checks each field with a run-time bit as the engine does (``check_raw``: reserved bits, fixed
  constants, undefined codes), and
- runs each open rule of severity error or warning, compiled by the PTX back end
  (:mod:`descgen.backends.ptx_rules`) from the rule's declaration;

and, on the first finding, writes a record to the report buffer (``descgen_report``) and, with
``on_error="trap"``, stops the kernel. A site whose operands the scan proved gets no block.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..backends.ptx_rules import Dynamic, Program, RawField, Site, Unsupported, field_of, raw_field_checks
from ..core.types import SmemArch
from ..model.catalog import catalog, usage_error
from ..model.facts import kind_facts, mma_k
from ..model.report import NotChecked
from ..ptx.qualifiers import CpQualifiers, MmaQualifiers, WgmmaQualifiers
from ..ptx.results import ScanFinding, ScanInstruction, ScanOperand
from ..ptx.scan import scan_ptx
from ..rules.checks import declared

__all__ = ["ROLES", "CheckedSite", "Instrumented", "instrument_ptx", "REPORT_SYMBOL"]

#: The module global holding the report buffer's device address (docs/sanitizer.md).
REPORT_SYMBOL = "descgen_report"
#: Operand numbers in a record.
ROLES = {"idesc": 0, "a_desc": 1, "b_desc": 2, "zcm": 3, "s_desc": 1}
_STOPS = ("error", "warning")
#: Context names a check reads at run time from a special register (E50), and the register.
RUN_TIME_CONTEXT = {"smem_size": "%aggr_smem_size"}
#: The function-scope 32-bit register each special register a check reads is read into, once, at
#: the function's entry.
_SPECIALS = {"%aggr_smem_size": "%dgz_smem_size"}


def _smem_size_register(version: tuple[int, int] | None) -> bool:
    """Whether the module may read ``%aggr_smem_size`` (PTX ISA 8.1 and later)."""
    return version is not None and version >= (8, 1)


@dataclass
class CheckedSite:
    """One instruction and what runs before it.

    Attributes:
        index: the site's number in the records. line: its 1-based line. opcode, text: as the
            scan read them. operands: (role, register) of each operand read at run time.
        codes: the codes the block can report, in the order it checks them (a record's code is an
            index into this). checks: each check's (code, operand role), in order.
        not_compiled: rules left open that the PTX back end could not compile, with why.
        proven: True when the scan proved every operand (no block).
    """

    index: int
    line: int
    opcode: str
    text: str
    operands: tuple[tuple[str, str], ...] = ()
    codes: tuple[str, ...] = ()
    checks: tuple[tuple[str, str], ...] = ()
    not_compiled: tuple[tuple[str, str], ...] = ()
    proven: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"site": self.index, "line": self.line, "opcode": self.opcode, "text": self.text,
                "operands": [list(o) for o in self.operands], "codes": list(self.codes),
                "checks": [list(c) for c in self.checks],
                "not_compiled": [list(n) for n in self.not_compiled], "proven": self.proven}


@dataclass
class Instrumented:
    """An instrumented PTX file: the text, its sites, and what the static scan found (reported at
    once: a run-time check never repeats it)."""

    ptx: str
    file: str
    sites: list[CheckedSite] = field(default_factory=list)
    findings: tuple[ScanFinding, ...] = ()

    def sites_json(self) -> str:
        """The site table (``OUT.ptx.sites.json``), with the severity of every code."""
        codes = sorted({c for s in self.sites for c in s.codes})
        rules = catalog()
        return json.dumps({"file": self.file, "version": 1, "symbol": REPORT_SYMBOL,
                           "severity": {c: rules[c].severity if c in rules else "error" for c in codes},
                           "sites": [s.as_dict() for s in self.sites]}, indent=1)

    def summary(self) -> str:
        """One line: the sites, how many get a run-time check and for which codes (how many sites
        each), how many the scan proved, and how many have run-time bits no compiled check reads."""
        checked = [s for s in self.sites if s.codes]
        proven = sum(1 for s in self.sites if s.proven)
        counts: dict[str, int] = {}
        for site in checked:
            for code in site.codes:
                counts[code] = counts.get(code, 0) + 1
        why = f" ({', '.join(f'{c} x{n}' for c, n in counts.items())})" if counts else ""
        skipped = sum(len(s.not_compiled) for s in self.sites)
        return (f"{self.file}: {len(self.sites)} sites: {len(checked)} checked at run time{why}, {proven} proven "
                f"by the scan, {len(self.sites) - len(checked) - proven} with nothing the run-time checks cover"
                + (f"; {skipped} open rules not compiled (sites.json says why)" if skipped else ""))


def instrument_ptx(text: str, *, arch: SmemArch | None = None, on_error: str = "trap",
                   file: str = "<stdin>") -> Instrumented:
    """``text`` with a run-time check before every descriptor instruction the scan could not prove.

    Args:
        text: a PTX module. arch: its target if the ``.target`` line does not say (``sm_90a``...).
        on_error: ``"trap"`` (a finding stops the kernel after its record is written) or
            ``"report"`` (the record only).
        file: the name the records and messages give the file.

    Raises:
        UsageError: ``on_error`` is neither; the text is instrumented already.
    """
    if on_error not in ("trap", "report"):
        raise usage_error("INSTRUMENT-OPTION", "on_error", on_error, "trap, report", f"on_error = {on_error}",
                          "instrument")
    if re.search(rf"\b{REPORT_SYMBOL}\b", text):
        raise usage_error("INSTRUMENT-OPTION", "text", file, "PTX not instrumented yet",
                          f"{file} declares {REPORT_SYMBOL} already", "instrument")
    result = scan_ptx(text, filename=file, arch=arch)
    found = re.search(r"^\s*\.version\s+(\d+)\.(\d+)", text, re.M)
    version = (int(found.group(1)), int(found.group(2))) if found else None
    lines = text.split("\n")
    out = Instrumented(text, file, findings=tuple(result.findings))
    bodies = _function_bodies(lines)
    blocks: dict[int, list[str]] = {}
    rewrites: dict[int, dict[str, str]] = {}  # line -> operand register -> its checked stand-in
    stand_ins: list[str] = []
    tables: list[str] = []
    pool: dict[tuple[int, ...], str] = {}
    heads: dict[int, list[str]] = {}  # a function's opening line -> its function-scope registers
    recheck: dict[int, list[tuple[CheckedSite, Program, list[_Check]]]] = {}  # the same, -> its wgmma sites
    for inst in result.instructions:
        site = CheckedSite(len(out.sites), inst.line, inst.opcode, inst.text)
        out.sites.append(site)
        open_ops = [o for o in inst.operands if not o.resolved and o.text.startswith("%")]
        if not open_ops:
            site.proven = True
            continue
        program = Program(f"dg{site.index}_", pool, _SPECIALS)
        checks, skipped = _checks(inst, open_ops, program, version)
        site.operands = tuple((o.role, o.text) for o in open_ops)
        site.not_compiled = tuple(skipped)
        if not checks:
            continue
        site.codes = tuple(dict.fromkeys(c[0] for c in checks))
        site.checks = tuple(dict.fromkeys((c[0], c[1]) for c in checks))
        guard = _guard(lines[inst.line - 1])
        head = next((start for start, end in bodies if start < inst.line <= end), 0)
        programs = [program]
        if inst.opcode == "wgmma.mma_async":
            blocks[inst.line], rewrites[inst.line] = _deferred_block(site, program, checks, guard, open_ops, stand_ins)
            again = Program(f"dgy{site.index}_", pool, _SPECIALS)  # (the same checks over the pending words)
            pending = {o.text: _PENDING_WORDS[o.role] for o in open_ops if o.role in _PENDING_WORDS}
            rechecks = [(c, r, _renamed(p, pending), _renamed(v, pending), _renamed(w, pending))
                        for c, r, p, v, w in _checks(inst, open_ops, again, version)[0]]
            again.lines[:] = [_renamed(line, pending) for line in again.lines]
            recheck.setdefault(head, []).append((site, again, rechecks))
            programs.append(again)
        else:
            blocks[inst.line] = _block(site, inst, program, checks, guard, on_error)
        for used in programs:
            tables += [f".const .align 8 .b64 {name}[{len(values)}] = {{{', '.join(_b64(v) for v in values)}}};"
                       for name, values in used.tables.items()]
            for special in sorted(used.used):
                if f"mov.u32 {_SPECIALS[special]}, {special};" not in heads.setdefault(head, []):
                    heads[head] += [f".reg .b32 {_SPECIALS[special]};", f"mov.u32 {_SPECIALS[special]}, {special};"]
    for head, sites in recheck.items():
        heads.setdefault(head, []).extend(_pending_declarations(len(stand_ins)))
    new: list[str] = []
    for number, line in enumerate(lines, 1):
        if number in blocks:
            new += blocks[number]
        for reg, stand_in in rewrites.get(number, {}).items():
            line = re.sub(rf"{re.escape(reg)}\b", stand_in, line)
        inside = next((a for a, b in bodies if a < number <= b and a in recheck), None)
        if inside is not None and re.match(r"\s*(@!?%\w+\s+)?(ret|exit)\s*;", line):
            new += _flush(number, on_error, recheck[inside])
        new.append(line)
        if number in heads:  # (the function's opening brace)
            new += [f"\t{d}" for d in heads[number]]
    head = _module_head(new)
    new[head:head] = ["", f".visible .global .align 8 .u64 {REPORT_SYMBOL};", *tables, ""]
    out.ptx = "\n".join(new)
    return out


def _renamed(text: str, names: Mapping[str, str]) -> str:
    """``text`` with each register of ``names`` replaced by its new name."""
    for old, new in names.items():
        text = re.sub(rf"{re.escape(old)}(?![\w$])", new, text)
    return text


# --------------------------------------------------------------------------------------------
# What a site checks: (code, operand role, predicate, value register, word register).

_Check = tuple[str, str, str, str, str]


def _b64(value: int) -> str:
    return f"{value & (1 << 64) - 1:#x}"


def _checks(inst: ScanInstruction, ops: list[ScanOperand], program: Program,
            version: tuple[int, int] | None) -> tuple[list[_Check], list[tuple[str, str]]]:
    report = inst.report
    assert report is not None
    q = inst.qualifiers
    kind = q.kind if isinstance(q, MmaQualifiers) else None
    layouts = _layouts(q, kind)
    by_role = {o.role: o for o in ops}
    checks: list[_Check] = []
    skipped: list[tuple[str, str]] = []
    smem_size_register = _smem_size_register(version)
    # Each operand's fields with a run-time bit: the engine's own field checks.
    for o in ops:
        lay = layouts.get(o.role)
        if lay is None:
            skipped.append((o.role, "no layout for this operand"))
            continue
        word = _word_register(program, o)
        for name in o.unknown:
            f = field_of(o.text, o.width, lay, kind if o.role == "idesc" else None, name)
            raw = program.raw(f.fields[0])
            for code, severity, raws in raw_field_checks(lay, kind if o.role == "idesc" else None, name):
                if severity in _STOPS:
                    checks.append((code, o.role, _member(program, f.fields[0], raws), program.widen(raw), word))
    # The rules the scan left open at run time.
    rules = catalog()
    seen: set[tuple[str, str | None]] = set()
    for n in report.not_checked:
        if rules[n.code].severity not in _STOPS:
            continue
        if n.why != "run-time" and not (set(n.missing) <= set(RUN_TIME_CONTEXT) and smem_size_register):
            continue
        if n.why == "run-time":
            roles: list[str | None] = [n.missing[0].split(".")[0] if "." in n.missing[0] else None]
        else:  # (a context the check reads at run time: each descriptor operand read at run time)
            roles = [o.role for o in ops if o.role in ("a_desc", "b_desc", "s_desc")]
        for role in roles:
            if (n.code, role) in seen:
                continue
            seen.add((n.code, role))
            try:
                checks += _rule_checks(n, role, inst, by_role, layouts, kind, program)
            except Unsupported as e:
                skipped.append((n.code, str(e)))
    return checks, skipped


def _layouts(q: Any, kind: str | None) -> dict[str, str]:
    if isinstance(q, WgmmaQualifiers):
        return {"a_desc": "wgmma_smem_desc", "b_desc": "wgmma_smem_desc"}
    if isinstance(q, CpQualifiers):
        return {"s_desc": "smem_desc"}
    assert kind is not None
    return {"idesc": kind_facts(kind).plan.layout.name, "a_desc": "smem_desc", "b_desc": "smem_desc",
            "zcm": "zcm_desc"}


def _word_register(program: Program, o: ScanOperand) -> str:
    if o.width == 64:
        return o.text
    r = program.reg()
    program.emit(f"cvt.u64.u32 {r}, {o.text};")
    return r


def _member(program: Program, f: RawField, raws: tuple[int, ...]) -> str:
    """A predicate: field ``f``'s raw value is one of ``raws``."""
    width, raw = f.width, program.raw(f)
    if set(raws) == set(range(1, 1 << width)):  # (any bit set)
        return program.nonzero(f)
    p = program.pred()
    if len(raws) <= 2:
        program.emit(f"setp.eq.u32 {p}, {raw}, {raws[0]};")
        for r in raws[1:]:
            program.emit(f"setp.eq.or.u32 {p}, {raw}, {r}, {p};")
        return p
    words = [0] * max(1, (1 << width) // 64)
    for r in raws:
        words[r >> 6] |= 1 << (r & 63)
    program.emit(f"setp.ne.u32 {p}, {program.bit_of(tuple(words), raw)}, 0;")
    return p


def _facts(inst: ScanInstruction, role: str, layouts: Mapping[str, str], kind: str | None,
           program: Program) -> tuple[dict[str, Any], dict[str, Dynamic]]:
    """The static facts and the run-time ones of word ``role`` (its fields by name)."""
    assert inst.report is not None
    d = inst.report.decoded.get("smem" if role == "s_desc" else role)
    o = inst.operand(role)
    if d is None or o is None:
        return {}, {}
    unknown = set(d.unknown)
    static = {k: v for k, v in d.values().items() if k not in unknown}
    dynamic: dict[str, Dynamic] = {}
    if not o.resolved:
        lay = layouts[role]
        for name in d.unknown:
            if name in static or name.startswith(("reserved", "fixed")):
                continue
            dynamic[name] = field_of(o.text, o.width, lay, kind if role == "idesc" else None, name)
    return static, dynamic


def _rule_checks(n: NotChecked, role: str | None, inst: ScanInstruction, by_role: Mapping[str, ScanOperand],
                 layouts: Mapping[str, str], kind: str | None, program: Program) -> list[_Check]:
    """The PTX of rule ``n.code``'s checks at this site (``role``: the operand its missing field is
    of, for a rule of a word or a per-operand rule)."""
    assert inst.report is not None
    rule = catalog()[n.code]
    ctx = dict(inst.report.context)
    q = inst.qualifiers
    static: dict[str, Any]
    dynamic: dict[Any, Dynamic] = {}
    word_role = role
    if rule.applies == "smem":
        word_role = role or ("s_desc" if isinstance(q, CpQualifiers) else None)
        if word_role is None:
            raise Unsupported("no operand named")
        values, dyn = _facts(inst, word_role, layouts, kind, program)
        if isinstance(q, WgmmaQualifiers):
            base = {"arch": None, "pattern_start": None, "layout": "wgmma_smem_desc"}
        else:
            base = {"arch": ctx.get("arch"), "pattern_start": None}
        static = {**_no_context(), **base, **values}
        dynamic.update(dyn)
        if "smem_size" in n.missing:
            del static["smem_size"]
            dynamic["smem_size"] = Dynamic((), lambda: None, special=RUN_TIME_CONTEXT["smem_size"])
    elif rule.applies == "idesc":
        values, dyn = _facts(inst, "idesc", layouts, kind, program)
        assert kind is not None
        static = {**ctx, **values, "kind": kind, "implied_dtype": kind_facts(kind).implied_dtype}
        dynamic.update(dyn)
        word_role = "idesc"
        if "sparse" in dyn or "k_dim" in dyn:
            dynamic["k"] = _k_fact(kind, dyn, values)
        else:
            k96 = values.get("k_dim") == "96"
            static["k"] = None if k96 and values["sparse"] else mma_k(kind, values["sparse"], k96)
    elif rule.applies in ("mma", "wgmma"):
        static = dict(ctx) if rule.applies == "wgmma" else {}
        roles = ("idesc", "a_desc", "b_desc") if rule.applies == "mma" else ("a_desc", "b_desc")
        for r in roles:
            if inst.report.decoded.get(r) is None:
                continue
            values, dyn = _facts(inst, r, layouts, kind, program)
            static[r] = {**values, "kind": kind} if r == "idesc" else values
            dynamic.update({(r, name): f for name, f in dyn.items()})
    else:
        raise Unsupported(f"rules of {rule.applies} words are not compiled to PTX yet")
    site = Site(static, dynamic, program)
    out: list[_Check] = []
    for check in declared(n.code).checks:
        if check.operand is not None:
            op_role = f"{check.operand}_desc"
            if op_role not in static or (role is not None and op_role != role):
                continue
            word_role = op_role
        cond = site.condition(check.when)
        if cond is False:
            continue
        if cond is True:
            cond = _true(program)
        value = site.value_register(check.value)
        operand = by_role.get(word_role or "")
        word = _word_register(program, operand) if operand is not None else _zero(program)
        out.append((n.code, word_role or "idesc", cond, value, word))
    return out


def _true(program: Program) -> str:
    r, p = program.reg(), program.pred()
    program.emit(f"mov.b64 {r}, 1;")
    program.emit(f"setp.ne.s64 {p}, {r}, 0;")
    return p


def _zero(program: Program) -> str:
    r = program.reg()
    program.emit(f"mov.b64 {r}, 0;")
    return r


def _no_context() -> dict[str, Any]:
    from ..model.context import no_context
    return dict(no_context())


def _k_fact(kind: str, dyn: Mapping[str, Dynamic], values: Mapping[str, Any]) -> Dynamic:
    """The MMA's K when the Sparsity or K bit is known at run time only (as the engine derives it)."""
    parts = [dyn[n] for n in ("sparse", "k_dim") if n in dyn]
    fields = tuple(f for d in parts for f in d.fields)
    names = [n for n in ("sparse", "k_dim") if n in dyn]

    def k(*raws: int) -> Any:
        got = dict(values)
        for name, d, raw in zip(names, parts, raws):
            got[name] = d.fn(raw)
        k96, sparse = got.get("k_dim") == "96", got["sparse"]
        return None if k96 and sparse else mma_k(kind, sparse, k96)
    return Dynamic(fields, k)


def _guard(line: str) -> str | None:
    m = re.match(r"\s*@(!?)(%\w+)", line)
    if m is None:
        return None
    return f"@{'' if m.group(1) else '!'}{m.group(2)}"


def _module_head(lines: list[str]) -> int:
    """Where module-level declarations go: after ``.address_size`` (or ``.target``)."""
    for i, line in enumerate(lines):
        if line.strip().startswith(".address_size"):
            return i + 1
    for i, line in enumerate(lines):
        if line.strip().startswith(".target"):
            return i + 1
    return 0


def _block(site: CheckedSite, inst: ScanInstruction, program: Program, checks: list[_Check], guard: str | None,
           on_error: str) -> list[str]:
    """The ``{ }`` block before a tcgen05 instruction: the checks, the first finding's record by the
    thread that found it, the stop (predicated: the block has no branch)."""
    body, stop, packed, value = _first_finding(site, program, checks, guard)
    unpacked, found, op, word = _unpack(program, packed, {ROLES[role]: w for _, role, _, _, w in checks})
    written, lead = _record(program, site.index, stop, found, op, word, value, False)
    body += unpacked + written
    if on_error == "trap":
        body.append(f"@{lead} trap;")
    out = [f"\t{{ // descgen: site {site.index}, {inst.opcode} at line {site.line}: "
           f"{len(checks)} run-time checks ({', '.join(site.codes)})"]
    out += [f"\t{d}" for d in program.declarations()]
    out += [f"\t{line}" for line in body if line]
    out += ["\t}"]
    return out


def _first_finding(site: CheckedSite, program: Program, checks: list[_Check],
                   guard: str | None) -> tuple[list[str], str, str, str]:
    """The checks' code, then the first finding, cheaply: each check, last to first, sets the packed
    code (1 + its index in the site's codes, 0: none; its operand's number above bit 16) and the
    value where it fires, so that the first one's stay. Returns the code, a predicate ``stop`` (a
    finding, where the instruction runs: its guard) and the packed code's and the value's registers
    (:func:`_unpack` reads the packed code)."""
    body = list(program.lines)
    packed, value = program.reg(), program.reg()
    body += [f"mov.b64 {packed}, 0;", f"mov.b64 {value}, 0;"]
    codes = list(site.codes)
    for code, role, pred, val, _ in reversed(checks):
        body += [f"@{pred} mov.b64 {packed}, {(codes.index(code) + 1) | ROLES[role] << 16};",
                 f"@{pred} mov.b64 {value}, {val};"]
    stop = program.pred()
    body.append(f"setp.ne.s64 {stop}, {packed}, 0;")
    if guard is not None:  # (the instruction's own guard: no finding where it does not run)
        negated = guard.startswith("@!")  # (the guard written as its branch around the block)
        body.append(f"and.pred {stop}, {stop}, {'' if negated else '!'}{guard.lstrip('@!')};")
    return body, stop, packed, value


def _unpack(program: Program, packed: str, words: Mapping[int, str]) -> tuple[list[str], str, str, str]:
    """A packed code (:func:`_first_finding`) as the record's code + 1, operand number and word:
    ``words`` gives each operand number's word register."""
    found, op, word, p = program.reg(), program.reg(), program.reg(), program.pred()
    out = [f"and.b64 {found}, {packed}, 0xffff;", f"shr.u64 {op}, {packed}, 16;", f"mov.b64 {word}, 0;"]
    for number, reg in words.items():
        out += [f"setp.eq.s64 {p}, {op}, {number};", f"selp.b64 {word}, {reg}, {word}, {p};"]
    return out, found, op, word


#: The function-scope registers of a pending finding (docs/sanitizer.md, "wgmma"): the site + 1
#: (32 bits; 0: none) and the words of its operands A and B.
_PENDING = "%dgq_site"
_PENDING_WORDS = {"a_desc": "%dgq_a", "b_desc": "%dgq_b"}


def _pending_declarations(stand_ins: int) -> list[str]:
    return [f".reg .b32 {_PENDING};", *(f".reg .b64 {reg};" for reg in _PENDING_WORDS.values()),
            f".reg .b64 %dgs<{max(1, stand_ins)}>;", f"mov.b32 {_PENDING}, 0;",
            *(f"mov.b64 {reg}, 0;" for reg in _PENDING_WORDS.values())]


def _any_finding(program: Program, checks: list[_Check], guard: str | None) -> tuple[list[str], str]:
    """The checks' code, then a predicate: one of them fires where the instruction runs."""
    body = list(program.lines)
    stop = program.pred()
    body.append(f"mov.pred {stop}, {checks[0][2]};")
    body += [f"or.pred {stop}, {stop}, {pred};" for _, _, pred, _, _ in checks[1:]]
    if guard is not None:
        body.append(f"and.pred {stop}, {stop}, {'' if guard.startswith('@!') else '!'}{guard.lstrip('@!')};")
    return body, stop


def _deferred_block(site: CheckedSite, program: Program, checks: list[_Check], guard: str | None,
                    ops: list[ScanOperand], stand_ins: list[str]) -> tuple[list[str], dict[str, str]]:
    """Before a ``wgmma.mma_async``: the checks as straight-line integer code only (ptxas keeps the
    warpgroup's wgmma pipeline: a store, a load or a trap between them makes it insert
    ``warpgroup.arrive``, C7519, or serialize, C7520), whether one fires, and on the first site
    where one does, its words kept in the function's pending registers; :func:`_flush` runs the
    same checks again over them at the function's exit, for the finding's code and value, its
    record and the stop. Each shared memory descriptor is replaced by a stand-in register that
    holds it, or, after a finding at this site, a legal descriptor (start address 0, no swizzle),
    so that the instruction does not fault before the finding is reported."""
    from ..words.wgmma_smem import encode_wgmma_smem

    safe = int(encode_wgmma_smem(start_address=0, lbo=16, sbo=1024, swizzle="none"))
    body, stop = _any_finding(program, checks, guard)
    words = {o.role: o.text for o in ops}
    first = program.pred()
    body.append(f"setp.eq.and.u32 {first}, {_PENDING}, 0, {stop};")
    body += [f"@{first} mov.b32 {_PENDING}, {site.index + 1};"]
    body += [f"@{first} mov.b64 {reg}, {words.get(role, '0')};" for role, reg in _PENDING_WORDS.items()]
    rewrite = {}
    for o in ops:
        if o.role in ("a_desc", "b_desc") and o.text not in rewrite:
            rewrite[o.text] = f"%dgs{len(stand_ins)}"
            stand_ins.append(rewrite[o.text])
            body.append(f"selp.b64 {rewrite[o.text]}, {_b64(safe)}, {o.text}, {stop};")
    out = [f"\t{{ // descgen: site {site.index}, wgmma.mma_async at line {site.line}: {len(checks)} run-time checks "
           f"({', '.join(site.codes)}); a finding is recorded at the function's exit"]
    out += [f"\t{d}" for d in program.declarations()]
    out += [f"\t{line}" for line in body if line] + ["\t}"]
    return out, rewrite


def _flush(line: int, on_error: str, sites: list[tuple[CheckedSite, Program, list[_Check]]]) -> list[str]:
    """Before a ``ret``/``exit`` of a function with wgmma sites: the pending site's checks run again
    over its words (:func:`_deferred_block`) for the first finding's code, operand and value, its
    record and, with ``on_error="trap"``, the stop."""
    program = Program(f"dgx{line}_")
    stop, at, number = program.pred(), program.pred(), program.reg()
    packed, value = program.reg(), program.reg()
    body = [f"setp.ne.u32 {stop}, {_PENDING}, 0;", f"cvt.u64.u32 {number}, {_PENDING};",
            f"sub.s64 {number}, {number}, 1;", f"mov.b64 {packed}, 0;", f"mov.b64 {value}, 0;"]
    declarations = []
    for site, again, checks in sites:
        lines, _, site_packed, site_value = _first_finding(site, again, checks, None)
        declarations += again.declarations()
        body += lines
        body += [f"setp.eq.u32 {at}, {_PENDING}, {site.index + 1};",
                 f"selp.b64 {packed}, {site_packed}, {packed}, {at};",
                 f"selp.b64 {value}, {site_value}, {value}, {at};"]
    unpacked, found, op, word = _unpack(program, packed, {ROLES[role]: reg for role, reg in _PENDING_WORDS.items()})
    body += unpacked
    written, lead = _record(program, number, stop, found, op, word, value, True)
    body += written
    if on_error == "trap":
        body.append(f"@{lead} trap;")
    return ["\t{ // descgen: the pending finding of this function's wgmma sites",
            *(f"\t{d}" for d in program.declarations() + declarations), *(f"\t{b}" for b in body), "\t}"]


def _function_bodies(lines: list[str]) -> list[tuple[int, int]]:
    """Each function's body: the 1-based lines of its opening and closing brace (``.entry`` and
    ``.func`` with a body; braces inside a line, such as vector operands, balance on it)."""
    out = []
    heading = False
    depth = 0
    start = 0
    for number, raw in enumerate(lines, 1):
        line = raw.split("//")[0]
        if depth == 0 and re.match(r"\s*(\.(visible|weak|extern)\s+)*\.(entry|func)\b", line):
            heading = True
        for ch in line:
            if ch == "{":
                if depth == 0 and heading:
                    start, heading = number, False
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0 and start:
                    out.append((start, number))
                    start = 0
            elif ch == ";" and depth == 0:
                heading = False  # (a prototype: no body)
    return out


def _record(program: Program, site: int | str, stop: str, found: str, op: str, word: str, value: str,
            per_warpgroup: bool) -> tuple[list[str], str]:
    """Write one record (docs/sanitizer.md) where ``stop`` holds and the report buffer is attached,
    every store predicated; for a wgmma, by the warpgroup's first thread only (its 128 threads hold
    the same words). Returns the code and the predicate of the threads that stop the kernel: those
    that record (the others run on to their exit, so that no other thread's trap ends the context
    before the record is in host memory)."""
    buf, i, cap, rec = program.reg(), program.reg32(), program.reg32(), program.reg()
    w, a, b = program.reg32(), program.reg32(), program.reg32()
    lead, p = program.pred(), program.pred()
    out = [f"mov.b64 {buf}, 0;", f"mov.u32 {i}, 0;", f"mov.u32 {cap}, 0;"]
    if per_warpgroup:  # the thread's linear index in the CTA is 0 modulo 128
        out += [f"mov.u32 {a}, %tid.z;", f"mov.u32 {b}, %ntid.y;", f"mov.u32 {w}, %tid.y;",
                f"mad.lo.u32 {a}, {a}, {b}, {w};", f"mov.u32 {b}, %ntid.x;", f"mov.u32 {w}, %tid.x;",
                f"mad.lo.u32 {a}, {a}, {b}, {w};", f"and.b32 {a}, {a}, 127;",
                f"setp.eq.and.u32 {lead}, {a}, 0, {stop};"]
    else:
        out.append(f"mov.pred {lead}, {stop};")
    out += [f"@{lead} ld.global.u64 {buf}, [{REPORT_SYMBOL}];", f"setp.ne.and.u64 {p}, {buf}, 0, {lead};"]
    out += [f"@{p} atom.relaxed.sys.global.add.u32 {i}, [{buf}], 1;",
            f"@{p} ld.relaxed.sys.global.u32 {cap}, [{buf}+4];", f"setp.lt.and.u32 {p}, {i}, {cap}, {p};",
            f"mul.wide.u32 {rec}, {i}, 64;", f"add.u64 {rec}, {rec}, {buf};",
            *([f"cvt.u32.u64 {w}, {site};", f"@{p} st.relaxed.sys.global.u32 [{rec}+64], {w};"]
              if isinstance(site, str) else [f"@{p} st.relaxed.sys.global.u32 [{rec}+64], {site};"])]
    out += [f"cvt.u32.u64 {w}, {found};", f"sub.u32 {w}, {w}, 1;", f"@{p} st.relaxed.sys.global.u32 [{rec}+68], {w};",
            f"cvt.u32.u64 {w}, {op};", f"@{p} st.relaxed.sys.global.u32 [{rec}+72], {w};",
            f"@{p} st.relaxed.sys.global.u64 [{rec}+80], {word};"]
    for off, reg in ((88, "%ctaid.x"), (92, "%ctaid.y"), (96, "%ctaid.z"), (100, "%tid.x"), (104, "%tid.y"),
                     (108, "%tid.z"), (120, "%smid")):
        out += [f"mov.u32 {w}, {reg};", f"@{p} st.relaxed.sys.global.u32 [{rec}+{off}], {w};"]
    out += [f"@{p} st.relaxed.sys.global.u64 [{rec}+112], {value};", f"@{p} membar.sys;",
            f"@{p} st.relaxed.sys.global.u32 [{rec}+76], 1;", f"@{p} membar.sys;"]
    return out, lead
