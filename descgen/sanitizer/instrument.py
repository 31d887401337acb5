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

The ``wgmma.mma_async`` sites of one basic block are checked as a group, once, ahead of it
(:mod:`descgen.sanitizer.hoist`): each check a flag, each wgmma reading a stand-in that holds a
legal word where the group found something, and the finding noted there with no branch (a sticky
register, the registers the words come from saved); where the function ends, a branch out of line
to the record and the stop, so that ptxas keeps the warpgroup's wgmma pipeline and the loop's code
as it is.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ..backends.ptx_rules import Dynamic, Program, RawField, Site, Unsupported, field_of, raw_field_checks
from ..core.types import SmemArch
from ..model.catalog import catalog, usage_error
from ..model.facts import kind_facts, mma_k
from ..model.report import NotChecked
from ..model.word import KnownBits
from ..ptx.qualifiers import CpQualifiers, MmaQualifiers, WgmmaQualifiers
from ..ptx.results import ScanFinding, ScanInstruction, ScanOperand
from ..ptx.scan import scan_ptx
from .hoist import (Hoisted, block_start, definitions, earliest, enclosing_brace, hoist, register_types,
                    statement_parts, type_of)
from .shared_checks import Member, bits_read, shared
from .stage_table import stage_table, table_code
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
        decided: rules left open that the site's static facts decide (every check's condition is
            false here whatever the run-time bits: M = 32 uses all four zero-column sub-masks).
        proven: True when the scan proved every operand (no block).
        checked_at: the 1-based line its checks run before: its own, or for a ``wgmma.mma_async``
            the ``wgmma.fence`` of its group (:mod:`descgen.sanitizer.hoist`).
        reads: (role, register) of the registers its checks read there: the operands, or the
            registers their words are computed into ahead of the group.
        table: for a wgmma site whose group's checks are a table (its words change in their loop
            only with a stage counter, or not at all), where and for which values it is built;
            else empty (:mod:`descgen.sanitizer.stage_table`).
    """

    index: int
    line: int
    opcode: str
    text: str
    operands: tuple[tuple[str, str], ...] = ()
    codes: tuple[str, ...] = ()
    checks: tuple[tuple[str, str], ...] = ()
    not_compiled: tuple[tuple[str, str], ...] = ()
    decided: tuple[str, ...] = ()
    proven: bool = False
    checked_at: int = 0
    reads: tuple[tuple[str, str], ...] = ()
    table: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"site": self.index, "line": self.line, "opcode": self.opcode, "text": self.text,
                "operands": [list(o) for o in self.operands], "codes": list(self.codes),
                "checks": [list(c) for c in self.checks],
                "not_compiled": [list(n) for n in self.not_compiled], "decided": list(self.decided),
                "proven": self.proven,
                "checked_at": self.checked_at, "reads": [list(r) for r in self.reads], "table": self.table}


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
        each; how many of them a loop's table checks, :mod:`descgen.sanitizer.stage_table`), how
        many the scan proved, and how many have run-time bits no compiled check reads."""
        checked = [s for s in self.sites if s.codes]
        proven = sum(1 for s in self.sites if s.proven)
        counts: dict[str, int] = {}
        for site in checked:
            for code in site.codes:
                counts[code] = counts.get(code, 0) + 1
        why = f" ({', '.join(f'{c} x{n}' for c, n in counts.items())})" if counts else ""
        tabled = sum(1 for s in checked if s.table)
        why += f", {tabled} of them once per entry into their loop (a table)" if tabled else ""
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
    blocks: dict[int, list[str]] = {}  # a line -> the code before it
    heads: dict[int, list[str]] = {}  # a function's opening line -> its function-scope registers
    tails: dict[int, list[str]] = {}  # a function's closing line -> its end and its out-of-line records
    tables: list[str] = []
    pool: dict[tuple[int, ...], str] = {}
    wgmma: dict[tuple[int, int], list[_Wgmma]] = {}  # a function's body -> its wgmma sites with checks

    def keep(program: Program, head: int) -> None:
        tables.extend(f".const .align 8 .b64 {name}[{len(values)}] = {{{', '.join(_b64(v) for v in values)}}};"
                      for name, values in program.tables.items())
        for special in sorted(program.used):
            if f"mov.u32 {_SPECIALS[special]}, {special};" not in heads.setdefault(head, []):
                heads[head] += [f".reg .b32 {_SPECIALS[special]};", f"mov.u32 {_SPECIALS[special]}, {special};"]
        for lines in program.entry.values():  # (values derived from them, once: after them)
            if lines[0] not in heads.setdefault(head, []):
                heads[head] += lines

    for inst in result.instructions:
        site = CheckedSite(len(out.sites), inst.line, inst.opcode, inst.text, checked_at=inst.line)
        out.sites.append(site)
        open_ops = [o for o in inst.operands if not o.resolved and o.text.startswith("%")]
        if not open_ops:
            site.proven = True
            continue
        wgmma_site = inst.opcode == "wgmma.mma_async"  # (its checks with their values: for its record, out of line)
        program = Program(f"{'dgy' if wgmma_site else 'dg'}{site.index}_", pool, _SPECIALS)
        checks, skipped, decided = _checks(inst, open_ops, program, version)
        site.operands = site.reads = tuple((o.role, o.text) for o in open_ops)
        site.not_compiled, site.decided = tuple(skipped), tuple(decided)
        if not checks:
            continue
        site.codes = tuple(dict.fromkeys(c[0] for c in checks))
        site.checks = tuple(dict.fromkeys((c[0], c[1]) for c in checks))
        guard = _guard(lines[inst.line - 1])
        body = next((b for b in bodies if b[0] < inst.line <= b[1]), (0, len(lines) + 1))
        keep(program, body[0])
        if wgmma_site:
            flags = Program(f"dg{site.index}_", pool, _SPECIALS)  # (whether one fires: flags, no values)
            wgmma.setdefault(body, []).append(_Wgmma(site, flags, _checks(inst, open_ops, flags, version, True)[0],
                                                     guard, open_ops, program, checks,
                                                     any(f.line == inst.line and f.finding.severity in _STOPS
                                                         for f in result.findings)))
            keep(flags, body[0])
        else:
            blocks[inst.line] = _block(site, inst, program, checks, guard, on_error)
    groups = 0
    rewrites: dict[int, dict[str, str]] = {}
    leaves: dict[int, str] = {}  # a line that leaves a function with groups -> the branch to its end
    for (start, end), sites in wgmma.items():
        types = register_types(lines, start, end)
        at_end: list[str] = []
        first = groups  # (its end's labels: numbered as its first group)
        for group in _groups(lines, start, types, sites):
            code = _group_code(group, groups, on_error, definitions(lines, group[0], start, (start, end)), types,
                               lines, (start, end))
            groups += 1
            blocks.setdefault(code.at, []).extend(code.before)
            heads.setdefault(start, []).extend(code.head)
            tails.setdefault(end, []).extend(code.tail)
            for site_line, selected in code.selects.items():
                blocks.setdefault(site_line, []).extend(selected)
            for entry, built in code.entries.items():
                blocks.setdefault(entry, []).extend(built)
            rewrites.update(code.rewrites)
            at_end += code.at_end
        ending, leaving, declared = _function_end(lines, (start, end), first, at_end)
        tails[end][:0] = ending
        leaves.update(leaving)
        heads[start] += declared
    new: list[str] = []
    for number, line in enumerate(lines, 1):
        if number in tails:  # (the function's closing brace: after its last statement, its end and the records)
            new += tails[number]
        new += blocks.get(number, [])
        for reg, stand_in in rewrites.get(number, {}).items():
            line = re.sub(rf"{re.escape(reg)}\b", stand_in, line)
        new.append(leaves.get(number, line))
        if number in heads:  # (the function's opening brace)
            new += [f"\t{d}" for d in heads[number]]
    top = _module_head(new)
    new[top:top] = ["", f".visible .global .align 8 .u64 {REPORT_SYMBOL};", *tables, ""]
    out.ptx = "\n".join(new)
    return out


def _renamed(text: str, names: Mapping[str, str]) -> str:
    """``text`` with each register of ``names`` replaced by its new name (at once: a new name is
    not renamed again)."""
    if not names:
        return text
    pattern = "|".join(re.escape(old) for old in sorted(names, key=len, reverse=True))
    return re.sub(rf"({pattern})(?![\w$])", lambda m: names[m.group(1)], text)


# --------------------------------------------------------------------------------------------
# What a site checks: (code, operand role, predicate, value register, word register).

_Check = tuple[str, str, str, str, str]


def _b64(value: int) -> str:
    return f"{value & (1 << 64) - 1:#x}"


def _checks(inst: ScanInstruction, ops: list[ScanOperand], program: Program, version: tuple[int, int] | None,
            flags: bool = False) -> tuple[list[_Check], list[tuple[str, str]], list[str]]:
    """The site's checks (``flags``: each as a 32-bit register nonzero where it fires, no value or
    word: what deciding whether any fires needs), the open rules not compiled, with why, and the
    open rules the site's static facts decide (no check of theirs can fire here)."""
    report = inst.report
    assert report is not None
    q = inst.qualifiers
    kind = q.kind if isinstance(q, MmaQualifiers) else None
    layouts = _layouts(q, kind)
    by_role = {o.role: o for o in ops}
    checks: list[_Check] = []
    skipped: list[tuple[str, str]] = []
    decided: list[str] = []
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
                if severity in _STOPS and flags:
                    checks.append((code, o.role, _member_flag(program, f.fields[0], raws), "", ""))
                elif severity in _STOPS:
                    checks.append((code, o.role, _member(program, f.fields[0], raws), program.widen(raw), word))
    # The rules the scan left open at run time.
    rules = catalog()
    seen: set[tuple[str, str | None]] = set()
    for n in report.not_checked:
        if rules[n.code].severity not in _STOPS:
            continue
        shape_at_run_time = rules[n.code].applies == "zcm" and set(n.missing) <= {"m", "n"} and "idesc" in by_role
        if n.why != "run-time" and not (set(n.missing) <= set(RUN_TIME_CONTEXT) and smem_size_register) \
                and not shape_at_run_time:  # (a zero-column mask's M and N: the run-time idesc's)
            continue
        if shape_at_run_time:
            roles: list[str | None] = ["zcm"]
        elif n.why == "run-time":
            roles = [n.missing[0].split(".")[0] if "." in n.missing[0] else None]
        else:  # (a context the check reads at run time: each descriptor operand read at run time)
            roles = [o.role for o in ops if o.role in ("a_desc", "b_desc", "s_desc")]
        for role in roles:
            if (n.code, role) in seen:
                continue
            seen.add((n.code, role))
            try:
                compiled = _rule_checks(n, role, inst, by_role, layouts, kind, program, flags)
            except Unsupported as e:
                skipped.append((n.code, str(e)))
                continue
            checks += compiled
            if not compiled and n.code not in decided:  # (every check's condition false here, whatever the bits)
                decided.append(n.code)
    return checks, skipped, [c for c in decided if c not in {k[0] for k in checks}]


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


def _member_flag(program: Program, f: RawField, raws: tuple[int, ...]) -> str:
    """A 32-bit register nonzero where field ``f``'s raw value is one of ``raws``."""
    if set(raws) == set(range(1, 1 << f.width)):  # (any bit set)
        return program.nonzero_word(f)
    w = program.reg32()
    program.emit(f"selp.b32 {w}, 1, 0, {_member(program, f, raws)};")
    return w


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
                 layouts: Mapping[str, str], kind: str | None, program: Program, flags: bool) -> list[_Check]:
    """The PTX of rule ``n.code``'s checks at this site (``role``: the operand its missing field is
    of, for a rule of a word or a per-operand rule; ``flags``: as :func:`_checks` says)."""
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
    elif rule.applies == "zcm":  # (its context: the idesc's M and N, as check_mma gives them; .ws)
        values, dyn = _facts(inst, "zcm", layouts, kind, program)
        shape, shape_dyn = _facts(inst, "idesc", layouts, kind, program)
        static = {**_no_context(), **{k: v for k, v in ctx.items() if v is not None}, **values,
                  **{k: shape[k] for k in ("m", "n") if k in shape}}
        dynamic.update(dyn)
        dynamic.update({k: shape_dyn[k] for k in ("m", "n") if k in shape_dyn})
        word_role = "zcm"
    else:
        raise Unsupported(f"rules of {rule.applies} words are not compiled to PTX")
    site = Site(static, dynamic, program)
    out: list[_Check] = []
    for check in declared(n.code).checks:
        if check.operand is not None:
            op_role = f"{check.operand}_desc"
            if op_role not in static or (role is not None and op_role != role):
                continue
            word_role = op_role
        if flags:
            fires = site.condition_word(check.when)
            if fires is not False:
                out.append((n.code, word_role or "idesc", _one(program) if fires is True else fires, "", ""))
            continue
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


def _one(program: Program) -> str:
    w = program.reg32()
    program.emit(f"mov.b32 {w}, 1;")
    return w


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


def _any_finding(program: Program, checks: list[_Check], guard: str | None, into: str) -> list[str]:
    """The checks' code (each a flag, :func:`_checks`), then their flags or-ed into the 32-bit
    register ``into``, where the instruction runs (``guard``: as :func:`_guard` writes it)."""
    masks: dict[str, int] = {}  # (flags that are bits of one register: one and of their masks)
    level = []
    for _, _, flag, _, _ in checks:
        if flag in program.masks:
            src, mask = program.masks[flag]
            masks[src] = masks.get(src, 0) | mask
        elif flag not in level:
            level.append(flag)
    level += [program.masked(src, mask) for src, mask in masks.items()]
    body = list(program.lines)
    while len(level) > 1:  # (a balanced tree: the flags' dependence chain stays short)
        pairs, level = level, []
        for i in range(0, len(pairs) - 1, 2):
            level.append(program.reg32())
            body.append(f"or.b32 {level[-1]}, {pairs[i]}, {pairs[i + 1]};")
        level += pairs[len(pairs) - len(pairs) % 2:]
    acc = level[0]
    if guard is not None:  # (no finding where the instruction does not run)
        body.append(f"selp.b32 {acc}, 0, {acc}, {guard.lstrip('@')};")
    body.append(f"or.b32 {into}, {into}, {acc};")
    return body


@dataclass
class _Wgmma:
    """A wgmma site with run-time checks: whether one fires (``program``, the checks as flags), and
    the checks themselves (``again``) for the record of a finding."""

    site: CheckedSite
    program: Program
    checks: list[_Check]
    guard: str | None
    ops: list[ScanOperand]
    again: Program
    again_checks: list[_Check]
    found: bool = False  # (the scan found an error or a warning at its line)


def _groups(lines: list[str], start: int, types: dict[str, str],
            sites: list[_Wgmma]) -> list[tuple[Hoisted, list[_Wgmma]]]:
    """The function's wgmma sites in groups checked together: the sites of one basic block whose
    words can be computed at the block's ``wgmma.fence`` before the first of them, each with those
    words; any other site alone, checked before its own line (or its inline-asm block). ``types``:
    the function's register types."""
    runs: list[list[_Wgmma]] = []
    for w in sorted(sites, key=lambda w: w.site.line):
        if runs and block_start(lines, w.site.line, start) <= runs[-1][-1].site.line:
            runs[-1].append(w)
        else:
            runs.append([w])
    out: list[tuple[Hoisted, list[_Wgmma]]] = []
    for run in runs:
        first = run[0].site.line
        floor = block_start(lines, first, start)
        fence = next((n for n in range(first - 1, floor, -1) if lines[n - 1].strip().startswith("wgmma.fence")), None)
        needed = {w.site.line: _reads(w) for w in run}
        hoisted = hoist(lines, types, fence, needed, f"dgh{first}_") if fence is not None else None
        if hoisted is not None:  # (and as early in the block as its words allow)
            top = earliest(lines, hoisted, floor)
            out.append(((hoist(lines, types, top, needed, f"dgh{first}_") if top < hoisted.line else None) or hoisted,
                        run))
            continue
        for w in run:  # (alone: before its inline-asm block, or right before it)
            line = w.site.line
            alone = hoist(lines, types, enclosing_brace(lines, line, start), {line: _reads(w)}, f"dgh{line}_")
            out.append((alone or Hoisted(line, words={(line, r): r for r in _reads(w)}), [w]))
    return out


def _reads(w: _Wgmma) -> list[str]:
    """The registers a wgmma site's checks read: its open operands and its guard."""
    return [o.text for o in w.ops] + ([w.guard.lstrip("@!")] if w.guard else [])


@dataclass
class _GroupCode:
    """A wgmma group's code: ``before`` goes before line ``at`` (the words, the checks, the finding
    noted), ``head`` at its function's entry (the registers the group's parts share), each site's
    ``selects`` before it (its stand-ins), ``rewrites`` in its line (the operands replaced by them),
    ``at_end`` where its function ends (the branch to the record where the group found something),
    ``tail`` after it (the record), and ``entries`` before lines where its loop is entered (its
    checks as a table, :mod:`descgen.sanitizer.stage_table`)."""

    at: int
    before: list[str]
    head: list[str]
    tail: list[str]
    selects: dict[int, list[str]]
    rewrites: dict[int, dict[str, str]]
    at_end: list[str]
    entries: dict[int, list[str]]


def _shared_member(w: _Wgmma, checks: list[_Check], body: list[str], words: Mapping[str, str]) -> Member:
    """A site of a group as :func:`~descgen.sanitizer.shared_checks.shared` sees it: its check code
    (``body``, reading its words ``words``: operand register -> word register) with its own
    registers and its words named by role, and the bits of each word its checks read."""
    by_role = {o.role: words[o.text] for o in w.ops}
    role_of = {reg: role for role, reg in by_role.items()}
    key = tuple(_renamed(line, {reg: f"%<{role}>" for reg, role in role_of.items()})
                .replace(f"%{w.program.prefix}", "%<site>") for line in body)
    deps = bits_read(body, list(role_of))
    reads: dict[str, int] | None = {} if len(role_of) == len(by_role) else None  # (one register, two roles: no)
    for _, _, flag, _, _ in checks:
        found = deps(flag)
        if reads is None or len(found) > 1:  # (a check reading two words)
            return Member(key, by_role, None)
        for reg, mask in found.items():
            reads[role_of[reg]] = reads.get(role_of[reg], 0) | mask
    return Member(key, by_role, reads)


def _general(sites: list[_Wgmma], guards: list[str | None]) -> list[tuple[int, int]]:
    """Sites ``j`` whose words another site ``g``'s check code checks exactly, as pairs ``(j, g)``:
    the same instruction (operand registers aside) under the same guard, no static finding at
    either, ``g`` checking every rule ``j`` does and none that ``j`` left open uncompiled, and every
    bit of ``g``'s words known at compile time known in ``j``'s with the same value. ``g``'s code is
    then the rules on any word with ``g``'s known bits, and the rules it adds are decided at ``j``
    (the scan proved them): on ``j``'s words it fires exactly where ``j``'s own does."""
    def shape(w: _Wgmma) -> str:
        return re.sub(r"%[\w$]+", "%", w.site.text)

    out = []
    for j, wj in enumerate(sites):
        known = {o.role: o.known for o in wj.ops}
        for g, wg in enumerate(sites):
            if g == j or wj.found or wg.found or shape(wj) != shape(wg) or guards[j] != guards[g] \
                    or set(wj.site.checks) == set(wg.site.checks) or not set(wj.site.checks) <= set(wg.site.checks) \
                    or {c for c, _ in wg.site.checks} & {c for c, _ in wj.site.not_compiled} \
                    or set(known) != {o.role for o in wg.ops}:
                continue
            if all(_known_in(o.known, known[o.role]) for o in wg.ops):
                out.append((j, g))
                break
    return out


def _known_in(general: KnownBits | None, particular: KnownBits | None) -> bool:
    """Every bit ``general`` knows, ``particular`` knows, with the same value."""
    return general is not None and particular is not None and not general.mask & ~particular.mask \
        and not (general.value ^ particular.value) & general.mask


def _group_code(group: tuple[Hoisted, list[_Wgmma]], number: int, on_error: str,
                definition: Callable[[str], str | None], types: dict[str, str], lines: list[str],
                body: tuple[int, int]) -> _GroupCode:
    """A group's code (:class:`_GroupCode`): at its check point the words and each site's checks
    as flags or-ed together, and where one is set, the finding noted (the group's sticky register
    or-ed with them, and the registers its words are computed from saved); each site's stand-ins;
    where the function ends, a branch where the group ever found something to the out-of-line
    record (the words computed again from the saved registers, each site's checks again, in order,
    the first that fires recorded by the warpgroup's first thread; then the stop, or with
    ``on_error="report"`` back); where the words change in their loop only with a stage counter,
    the checks as a table built where the loop is entered, of which the group reads a bit
    (:mod:`descgen.sanitizer.stage_table`). ``types``: the function's register types; ``lines``,
    ``body``: the file and the function's braces."""
    hoisted, sites = group
    fired, flags, fail, back = f"%dgf{number}", f"%dgfw{number}", f"descgen_fail{number}", f"descgen_back{number}"
    sticky = f"%dgst{number}"
    before = [f"\t// descgen: group {number}: the checks of wgmma sites {', '.join(str(w.site.index) for w in sites)} "
              f"(lines {', '.join(str(w.site.line) for w in sites)}), ahead of the group"]
    if hoisted.replay:
        before += [f"\t{{ // descgen: group {number}'s words", *(f"\t{line}" for line in hoisted.replay), "\t}"]
    chosen = Program(f"dgx{number}_")
    site_reg, packed, value, word_a, word_b = (chosen.reg() for _ in range(5))
    fires, take = chosen.pred(), chosen.pred()
    again_blocks: list[str] = []
    declarations: list[str] = []
    members: list[Member] = []
    bodies: list[list[str]] = []
    guards: list[str | None] = []
    read_words: list[str] = []
    for w in sites:
        w.site.checked_at = hoisted.line
        words = {r: hoisted.words[(w.site.line, r)] for r in _reads(w)}
        w.site.reads = tuple((o.role, words[o.text]) for o in w.ops)
        guard = w.guard and w.guard[:w.guard.index("%")] + words[w.guard.lstrip("@!")]
        guards.append(guard)
        w.program.lines[:] = [_renamed(line, words) for line in w.program.lines]
        checks = [(c, r, _renamed(f, words), v, x) for c, r, f, v, x in w.checks]
        bodies.append(_any_finding(w.program, checks, guard, flags))
        members.append(_shared_member(w, checks, bodies[-1], words))
        w.again.lines[:] = [_renamed(line, words) for line in w.again.lines]
        again = [(c, r, p, _renamed(v, words), _renamed(x, words)) for c, r, p, v, x in w.again_checks]
        lines_i, _, packed_i, value_i = _first_finding(w.site, w.again, again, None)
        declarations += w.again.declarations()
        by_role = {o.role: words[o.text] for o in w.ops}
        read_words += [r for r in by_role.values() if r not in read_words]
        lines_i += [f"setp.ne.s64 {fires}, {packed_i}, 0;",  # (the first site that fires is the one recorded)
                    f"setp.eq.and.s64 {take}, {packed}, 0, {fires};", f"@{take} mov.b64 {site_reg}, {w.site.index};",
                    f"@{take} mov.b64 {packed}, {packed_i};", f"@{take} mov.b64 {value}, {value_i};",
                    f"@{take} mov.b64 {word_a}, {by_role.get('a_desc', '0')};",
                    f"@{take} mov.b64 {word_b}, {by_role.get('b_desc', '0')};"]
        again_blocks += [f"\t{{ // descgen: again site {w.site.index}", *(f"\t{line}" for line in lines_i), "\t}"]
    code = [(w, bodies[i], members[i].words) for i, w in enumerate(sites)]  # (whose code each site runs)
    check_code: list[str] = []  # (the checks, each site's or a class's block)
    for j, g in _general(sites, guards):
        members[j] = Member(members[g].key, members[j].words, members[g].reads)
        code[j] = code[g]
    for indices, word_sets in shared(members, definition):  # (sites with one check code: two words each)
        w, site_body, roles = code[indices[0]]
        for word_set in word_sets:
            on = "" if [sites[i] for i in indices] == [w] else (
                f", for sites {', '.join(str(sites[i].site.index) for i in indices)} on "
                + ", ".join(f"{role} {reg}" for role, reg in word_set.items()))
            check_code += [f"\t{{ // descgen: site {w.site.index}, wgmma.mma_async at line {w.site.line}: "
                           f"{len(w.checks)} run-time checks ({', '.join(w.site.codes)}){on}"]
            check_code += [f"\t{d}" for d in w.program.declarations()]
            check_code += [f"\t{_renamed(line, {roles[r]: word_set[r] for r in roles})}" for line in site_body]
            check_code.append("\t}")
    # Where the words change in their loop only with a stage counter, the checks run where the loop
    # is entered, for each of the counter's values, and here the group reads its bit (stage_table).
    table = stage_table(lines, body, hoisted, check_code, types)
    entries: dict[int, list[str]] = {}
    if table is None:
        before += [f"\tmov.b32 {flags}, 0;", *check_code]
    else:
        built, lookup = table_code(table, number, hoisted.replay, check_code, flags)
        entries = {line: built for line in table.entries}
        before += lookup
        for w in sites:
            w.site.table = table.describe()
    before.append(f"\tsetp.ne.b32 {fired}, {flags}, 0;")
    # Where a flag is set, the finding noted: the sticky register or-ed with the flags, and the
    # registers the words are computed from saved (the last such words: the record is written
    # where the function ends, :func:`_function_end`; no branch in the loop the group is in).
    again_from, roots = _computed_from(hoisted.replay, read_words, types, hoisted.declarations)
    saved = {root: f"%dgv{number}_{i}" for i, root in enumerate(roots)}
    before += [f"\t@{fired} mov.{kind} {saved[root]}, {root};" for root, kind in roots.items()]
    before.append(f"\tor.b32 {sticky}, {sticky}, {flags};")
    head = [f".reg .pred {fired};", f".reg .b32 {flags};", f".reg .b32 {sticky};", f"mov.b32 {sticky}, 0;",
            *(f".reg .{kind} {saved[root]};" for root, kind in roots.items()),
            *hoisted.declarations, *([f".reg .b32 %dgt{number};"] if table else [])]
    # Each wgmma reads a stand-in register: its word, or where the group found something, a legal one
    # (start address 0, no swizzle: the bad word never reaches the tensor core, and the kernel runs
    # on to its end, where the finding is recorded).
    from ..words.wgmma_smem import encode_wgmma_smem
    safe = int(encode_wgmma_smem(start_address=0, lbo=16, sbo=1024, swizzle="none"))
    selects: dict[int, list[str]] = {}
    rewrites: dict[int, dict[str, str]] = {}
    count = 0
    for w in sites:
        for o in w.ops:
            if o.role in ("a_desc", "b_desc") and o.text not in rewrites.get(w.site.line, {}):
                reg = rewrites.setdefault(w.site.line, {})[o.text] = f"%dgs{number}_{count}"
                count += 1
                if o.known is not None and o.known.mask >> 32 == 0xFFFFFFFF:  # (its high half fixed: the low one)
                    selects.setdefault(w.site.line, []).append(
                        f"\t{{ .reg .b32 %dgl, %dgh; mov.b64 {{%dgl, %dgh}}, {o.text}; selp.b32 %dgl, "
                        f"{safe & 0xFFFFFFFF}, %dgl, {fired}; mov.b64 {reg}, {{%dgl, %dgh}}; }}")
                else:
                    selects.setdefault(w.site.line, []).append(f"\tselp.b64 {reg}, {_b64(safe)}, {o.text}, {fired};")
    head.append(f".reg .b64 %dgs{number}_<{max(count, 1)}>;")
    stop = chosen.pred()
    unpacked, found, op, word = _unpack(chosen, packed, {ROLES["a_desc"]: word_a, ROLES["b_desc"]: word_b})
    written, lead = _record(chosen, site_reg, stop, found, op, word, value, True)
    end = [f"setp.ne.s64 {stop}, {packed}, 0;", *unpacked, *written]
    end += [f"@{lead} trap;", "exit;"] if on_error == "trap" else [f"bra.uni {back};"]
    init = [f"mov.b64 {r}, 0;" for r in (site_reg, packed, value, word_a, word_b)]
    again_words = [f"\t{{ // descgen: group {number}'s words again, from the registers saved",
                   *(f"\t{_renamed(line, saved)}" for line in again_from), "\t}"] if again_from else []
    tail = [f"{fail}:", f"\t{{ // descgen: group {number}'s finding: its sites' checks again, the first that fires "
            "recorded by the warpgroup's first thread", *(f"\t{d}" for d in chosen.declarations() + declarations),
            *again_words, *(f"\t{line}" for line in init), *(_renamed(line, saved) for line in again_blocks),
            *(f"\t{line}" for line in end), "\t}"]
    at_end = [f"\tsetp.ne.b32 {fired}, {sticky}, 0;", f"\t@{fired} bra {fail};", f"{back}:"]
    return _GroupCode(hoisted.line, before, head, tail, selects, rewrites, at_end, entries)


def _computed_from(replay: list[str], words: list[str], types: Mapping[str, str],
                   declarations: list[str]) -> tuple[list[str], dict[str, str]]:
    """The fewest registers a group's ``words`` are computed from by its ``replay``'s instructions
    of one register and immediates (``add.s64 %w, %x, 2``: ``%w`` from ``%x``), each with its
    ``mov`` type, and those instructions, in order. A word computed otherwise is its own (a shuffle
    is a warp's instruction: its result is saved, not computed again where the function ends)."""
    every = {**types, **register_types(declarations, 1, len(declarations))}  # (the kernel's and the shadows')

    def kind(reg: str) -> str | None:
        found = type_of(every, reg)
        return None if found is None else "pred" if found == "pred" else f"b{found[1:]}"

    one_source: dict[str, tuple[str, str]] = {}
    for line in replay:
        parts = statement_parts(line.strip()) if line.count(";") == 1 else None
        if parts is None or parts[0] or not parts[2] or parts[1].startswith("shfl"):
            continue  # (guarded, two statements, or a shuffle)
        sources = set(re.findall(r"%[\w$.]+", " ".join(parts[2][1:])))
        if len(sources) == 1 and re.fullmatch(r"%[\w$]+", parts[2][0]) and kind(next(iter(sources))):
            one_source[parts[2][0]] = (next(iter(sources)), line)
    used: set[str] = set()
    roots: dict[str, str] = {}
    for word in words:
        reg = word
        while reg in one_source:
            reg, line = one_source[reg]
            used.add(line)
        roots[reg] = kind(reg) or "b64"  # (a word not computed by the replay: a descriptor operand, 64 bits)
    return [line for line in replay if line in used], roots


def _function_end(lines: list[str], body: tuple[int, int], number: int,
                  at_end: list[str]) -> tuple[list[str], dict[int, str], list[str]]:
    """A function with wgmma groups leaves at one place, where each group's findings are recorded
    (``at_end``: each group's branch to its record): each ``ret`` (and ``exit``) becomes a branch
    there. Returns the lines of that end (before the function's closing brace), the lines that
    leave rewritten (by 1-based number) and the function-scope declarations it needs. In a
    ``.func``, an ``exit`` still exits after the records (a predicate says which way it left)."""
    start, stop = body
    header = next(lines[n - 1] for n in range(start, 0, -1) if re.search(r"\.(entry|func)\b", lines[n - 1]))
    kernel = re.search(r"\.entry\b", header) is not None
    end, quit_, way = f"descgen_end{number}", f"descgen_quit{number}", f"%dgq{number}"
    leaving: dict[int, str] = {}
    for n in range(start + 1, stop):
        m = re.match(r"(\s*)(@!?%[\w$]+\s+)?(ret|exit)(\.uni)?\s*;(.*)$", lines[n - 1])
        if m is not None:
            target = quit_ if m.group(3) == "exit" and not kernel else end
            leaving[n] = f"{m.group(1)}{m.group(2) or ''}bra{'' if m.group(2) else '.uni'} {target};{m.group(5)}"
    if not any(quit_ in line for line in leaving.values()):
        return [f"{end}:", *at_end, "\tret;"], leaving, []
    return ([f"{end}:", f"\tmov.pred {way}, 0;", f"{end}_records:", *at_end, f"\t@{way} exit;", "\tret;",
             f"{quit_}:", f"\tmov.pred {way}, -1;", f"\tbra.uni {end}_records;"], leaving, [f".reg .pred {way};"])


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
