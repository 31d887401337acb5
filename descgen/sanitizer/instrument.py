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

from ..backends.ptx_rules import Dynamic, Program, Site, Unsupported, field_of, raw_field_checks
from ..core.types import Arch
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


def instrument_ptx(text: str, *, arch: Arch | None = None, on_error: str = "trap",
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
    blocks: dict[int, list[str]] = {}
    tables: list[str] = []
    pool: dict[tuple[int, ...], str] = {}
    for inst in result.instructions:
        site = CheckedSite(len(out.sites), inst.line, inst.opcode, inst.text)
        out.sites.append(site)
        open_ops = [o for o in inst.operands if not o.resolved and o.text.startswith("%")]
        if not open_ops:
            site.proven = True
            continue
        program = Program(f"dg{site.index}_", pool)
        checks, skipped = _checks(inst, open_ops, program, version)
        site.operands = tuple((o.role, o.text) for o in open_ops)
        site.not_compiled = tuple(skipped)
        if not checks:
            continue
        site.codes = tuple(dict.fromkeys(c[0] for c in checks))
        site.checks = tuple(dict.fromkeys((c[0], c[1]) for c in checks))
        guard = _guard(lines[inst.line - 1])
        blocks[inst.line] = _block(site, inst, program, checks, guard, on_error)
        tables += [f".const .align 8 .b64 {name}[{len(values)}] = {{{', '.join(_b64(v) for v in values)}}};"
                   for name, values in program.tables.items()]
    new = []
    for number, line in enumerate(lines, 1):
        if number in blocks:
            new += blocks[number]
        new.append(line)
    head = _module_head(new)
    new[head:head] = ["", f".visible .global .align 8 .u64 {REPORT_SYMBOL};", *tables, ""]
    out.ptx = "\n".join(new)
    return out


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
                    checks.append((code, o.role, _member(program, raw, f.fields[0].width, raws), raw, word))
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


def _member(program: Program, raw: str, width: int, raws: tuple[int, ...]) -> str:
    """A predicate: ``raw`` (a ``width``-bit value in a 64-bit register) is one of ``raws``."""
    p = program.pred()
    if len(raws) <= 2:
        program.emit(f"setp.eq.s64 {p}, {raw}, {raws[0]};")
        for r in raws[1:]:
            program.emit(f"setp.eq.or.s64 {p}, {raw}, {r}, {p};")
        return p
    if set(raws) == set(range(1, 1 << width)):  # (any bit set)
        program.emit(f"setp.ne.s64 {p}, {raw}, 0;")
        return p
    words = [0] * max(1, (1 << width) // 64)
    for r in raws:
        words[r >> 6] |= 1 << (r & 63)
    program.emit(f"setp.ne.s64 {p}, {program.bit_of(tuple(words), raw)}, 0;")
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
    """The ``{ }`` block before the instruction: the checks, the first finding's record, the stop."""
    end = f"$DG_{site.index}_END"
    body = list(program.lines)
    found, op, word, value = program.reg(), program.reg(), program.reg(), program.reg()
    body += [f"mov.b64 {found}, 0;", f"mov.b64 {op}, 0;", f"mov.b64 {word}, 0;", f"mov.b64 {value}, 0;"]
    codes = list(site.codes)
    first = program.pred()
    for code, role, pred, val, w in checks:
        body.append(f"setp.eq.and.s64 {first}, {found}, 0, {pred};")
        body += [f"@{first} mov.b64 {found}, {codes.index(code) + 1};", f"@{first} mov.b64 {op}, {ROLES[role]};",
                 f"@{first} mov.b64 {word}, {w};", f"@{first} mov.b64 {value}, {val};"]
    none = program.pred()
    body += [f"setp.eq.s64 {none}, {found}, 0;", f"@{none} bra.uni {end};"]
    body += _record(program, site, found, op, word, value, inst.opcode == "wgmma.mma_async")
    if on_error == "trap":
        body += ["membar.sys;", "trap;"]
    head: list[str] = []
    if inst.opcode == "wgmma.mma_async":  # (its descriptors are the same in the warpgroup's 4 warps, §9.7.15.5.1:
        head = _first_warp_only(program, end)  # the first warp checks them)
    out = [f"\t{{ // descgen: site {site.index}, {inst.opcode} at line {site.line}: "
           f"{len(checks)} run-time checks ({', '.join(site.codes)})"]
    out += [f"\t{d}" for d in program.declarations()]
    if guard is not None:
        out.append(f"\t{guard} bra.uni {end};")
    out += [f"\t{line}" for line in head]
    out += [f"\t{line}" for line in body if line]
    out += [f"{end}:", "\t}"]
    return out


def _first_warp_only(program: Program, end: str) -> list[str]:
    """Branch to ``end`` unless this thread is in the first warp of its warpgroup (the thread's
    linear index in the CTA, over 32, modulo 4)."""
    a, b, c, p = program.reg32(), program.reg32(), program.reg32(), program.pred()
    return [f"mov.u32 {a}, %tid.z;", f"mov.u32 {b}, %ntid.y;", f"mov.u32 {c}, %tid.y;",
            f"mad.lo.u32 {a}, {a}, {b}, {c};", f"mov.u32 {b}, %ntid.x;", f"mov.u32 {c}, %tid.x;",
            f"mad.lo.u32 {a}, {a}, {b}, {c};",
            f"shr.u32 {a}, {a}, 5;", f"and.b32 {a}, {a}, 3;", f"setp.ne.u32 {p}, {a}, 0;", f"@{p} bra.uni {end};"]


def _record(program: Program, site: CheckedSite, found: str, op: str, word: str, value: str,
            per_warp: bool) -> list[str]:
    """Write one record (docs/sanitizer.md) when the report buffer is attached."""
    buf, i, cap, rec = program.reg(), program.reg32(), program.reg32(), program.reg()
    w = program.reg32()
    skip = f"$DG_{site.index}_NOREC"
    p = program.pred()
    out = [f"ld.global.u64 {buf}, [{REPORT_SYMBOL}];", f"setp.eq.u64 {p}, {buf}, 0;", f"@{p} bra.uni {skip};"]
    if per_warp:  # (a warpgroup's 128 threads hold the same words: lane 0 of each warp writes)
        out += [f"mov.u32 {w}, %laneid;", f"setp.ne.u32 {p}, {w}, 0;", f"@{p} bra.uni {skip};"]
    out += [f"atom.relaxed.sys.global.add.u32 {i}, [{buf}], 1;", f"ld.relaxed.sys.global.u32 {cap}, [{buf}+4];",
            f"setp.ge.u32 {p}, {i}, {cap};", f"@{p} bra.uni {skip};",
            f"mul.wide.u32 {rec}, {i}, 64;", f"add.u64 {rec}, {rec}, {buf};",
            f"st.relaxed.sys.global.u32 [{rec}+64], {site.index};"]
    out += [f"cvt.u32.u64 {w}, {found};", f"sub.u32 {w}, {w}, 1;", f"st.relaxed.sys.global.u32 [{rec}+68], {w};",
            f"cvt.u32.u64 {w}, {op};", f"st.relaxed.sys.global.u32 [{rec}+72], {w};",
            f"st.relaxed.sys.global.u64 [{rec}+80], {word};"]
    for off, reg in ((88, "%ctaid.x"), (92, "%ctaid.y"), (96, "%ctaid.z"), (100, "%tid.x"), (104, "%tid.y"),
                     (108, "%tid.z"), (120, "%smid")):
        out += [f"mov.u32 {w}, {reg};", f"st.relaxed.sys.global.u32 [{rec}+{off}], {w};"]
    out += [f"st.relaxed.sys.global.u64 [{rec}+112], {value};", "membar.sys;",
            f"st.relaxed.sys.global.u32 [{rec}+76], 1;", f"{skip}:"]
    return out

