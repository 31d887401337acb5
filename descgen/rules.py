"""The rules catalog and constraint tables (``tables/rules.toml``), the instruction context, and
validation reports.

Every check descgen runs has a stable code. A single field's own range check is generated from its
layout table (``IDESC-N-RANGE``, ``SMEM-RESERVED-14``: see :func:`field_codes`); every rule that ties
fields, words or the instruction together is a ``[[rule]]`` entry of ``tables/rules.toml`` with its
severity, rule sentence, PTX source and a legal and an illegal example. The checks themselves are in
:mod:`descgen.validate`; this module holds the data they read and the records they return.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping

from .errors import SEVERITIES, Finding, HasFindings, TableError, UsageError
from .loader import KINDS, LAYOUT_FILES, _keys, _read, atoms, layout

__all__ = [
    "RULES_FILE",
    "CONTEXT_NAMES",
    "SCALE_VECS",
    "Rule",
    "Constraints",
    "NotChecked",
    "Report",
    "catalog",
    "constraints",
    "context",
    "field_codes",
    "all_codes",
]

RULES_FILE = "rules.toml"

#: Instruction context the rules may depend on, with what each means.
CONTEXT_NAMES: dict[str, str] = {
    "cta_group": "the instruction's .cta_group (1 or 2)",
    "ws": "tcgen05.mma.ws (True) or not (False)",
    "sp": "tcgen05.mma.sp (True) or not (False)",
    "scale_vec": ".scale_vec::1X/2X/4X or .block16/.block32 (\"1X\", \"2X\", \"4X\", \"block16\", \"block32\")",
    "a_tmem": "A is read from tensor memory ([a-tmem]) rather than a shared memory descriptor",
    "arch": "the .target (sm_100a, sm_100f, sm_103a, sm_103f, sm_110a, sm_110f)",
    "pattern_start": "byte address where the operand's swizzle pattern starts (smem)",
    "m": "the instruction descriptor's M (zcm)",
    "n": "the instruction descriptor's N (zcm)",
    "warp": "the warp's ID within its warpgroup, 0-3 (warp ID % 4), for tcgen05.ld/st (taddr)",
    "alloc_columns": "nCols of the tcgen05.alloc the address lies in: a power of 2 in 32..512 (taddr)",
    "alloc_base": "the tensor memory address tcgen05.alloc wrote: lane 0, the allocation's first column (taddr)",
}

#: Where a context value's meaning is defined, for its CONTEXT-* usage code (default: the
#: tcgen05.mma instruction syntax, whose qualifiers most of them are).
_CONTEXT_SOURCES = {
    "pattern_start": "Table 41",
    "m": "§9.7.16.4.3",
    "n": "§9.7.16.4.3",
    "warp": "§9.7.16.8.1",
    "alloc_columns": "§9.7.16.1.2; §9.7.16.7.1 (tcgen05.alloc nCols)",
    "alloc_base": "§9.7.16.1.2; §9.7.16.7.1",
}


def context_source(name: str) -> str:
    """The PTX section a context value ``name`` comes from (the source of ``CONTEXT-<NAME>``)."""
    return _CONTEXT_SOURCES.get(name, "§9.7.16.10.9 (tcgen05.mma syntax)")


#: The scale vector sizes, as descgen names them (PTX: .scale_vec::1X ... .block32).
SCALE_VECS = ("1X", "2X", "4X", "block16", "block32")

_APPLIES = ("idesc", "smem", "zcm", "mma", "taddr", "ptx")  # "context" is used by the usage codes only; "ptx": descgen.scan
_RULE_KEYS = {"code", "severity", "applies", "kinds", "fields", "needs", "uses", "rule", "source", "legal", "illegal"}
_TOP_KEYS = {"table", "transpose_b_8bit", "scale_vec", "a_tmem", "absolute_lbo", "zcm",
             "targets", "requires", "rule"}


@dataclass(frozen=True, slots=True)
class Rule:
    """One catalogued rule.

    Attributes:
        code: stable code (``IDESC-N-SHAPE``).
        severity: ``"error"``, ``"warning"`` or ``"info"``.
        applies: ``idesc``, ``smem``, ``zcm``, ``mma`` (instruction-level, :func:`descgen.check_mma`) or
            ``ptx`` (an instruction-syntax or file rule reported by :func:`descgen.scan_ptx`).
        fields: the fields (or context names) the rule reads.
        needs: context it cannot run without; missing context makes it "not checked".
        uses: context that narrows it when given (otherwise every case is allowed for).
        rule: the rule in one sentence. source: PTX table / section.
        legal, illegal: examples (see ``tables/rules.toml``); None for generated field codes.
        kinds: the MMA kinds the rule concerns (empty: all); for the others, missing context
            is not reported as not checked.
    """

    code: str
    severity: str
    applies: str
    fields: tuple[str, ...]
    needs: tuple[str, ...]
    uses: tuple[str, ...]
    rule: str
    source: str
    legal: Mapping[str, Any] | None = None
    illegal: Mapping[str, Any] | None = None
    kinds: tuple[str, ...] = ()

    def finding(self, field: str, value: Any, allowed: str, detail: str = "") -> Finding:
        """A finding of this rule; ``detail`` says what was found, after the rule sentence."""
        text = f"{self.rule}: {detail}" if detail else self.rule
        return Finding(self.code, self.severity, field, value, allowed, text, self.source)

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code, "severity": self.severity, "applies": self.applies, "fields": list(self.fields),
            "needs": list(self.needs), "uses": list(self.uses), "kinds": list(self.kinds), "rule": self.rule,
            "source": self.source,
        }


@dataclass(frozen=True, slots=True)
class Constraints:
    """The constraint tables of ``tables/rules.toml`` (see the file for each one's source), with
    Table 52 and the element sizes from ``tables/smem_atoms.toml``."""

    type_bits: Mapping[str, int]
    major_swizzle: tuple[Mapping[str, Any], ...]
    transpose_b_8bit: Mapping[int, frozenset[int]]
    scale_vec: tuple[Mapping[str, Any], ...]
    a_tmem: Mapping[str, Any]
    absolute_lbo: Mapping[str, Any]
    zcm: Mapping[str, Any]
    targets: tuple[str, ...]
    aliases: Mapping[str, str]
    requires: Mapping[str, tuple[str, ...]]

    def swizzles_for(self, bits: int, major: str) -> tuple[str, ...]:
        """Table 52: the swizzle modes an operand of ``bits``-bit elements and ``major`` may use."""
        return tuple(s for row in self.major_swizzle if bits in row["bits"] and row["major"] == major for s in row["swizzles"])

    def supports(self, arch: str, feature: str) -> bool:
        """Whether target ``arch`` meets the requirement list of ``feature`` ([[requires]])."""
        return any(_meets(arch, req) for req in self.requires[feature])


def _meets(arch: str, req: str) -> bool:
    """``sm_100f`` is met by every target of the same family at or above 100; ``sm_100a`` only by itself."""
    if req == arch:
        return True
    if req.endswith("f"):
        want, have = int(req[3:-1]), int(arch[3:-1])
        return have // 10 == want // 10 and have >= want
    return False


@dataclass(frozen=True, slots=True)
class NotChecked:
    """A rule that did not run because context it needs was not given."""

    code: str
    missing: tuple[str, ...]
    rule: str
    source: str

    def __str__(self) -> str:
        return f"not checked {self.code}: needs {', '.join(self.missing)} ({self.rule}) [{self.source}]"

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "missing": list(self.missing), "rule": self.rule, "source": self.source}


#: The words of one instruction (:func:`descgen.check_mma`), in the order they are shown.
ROLES = ("idesc", "a_desc", "b_desc", "zcm")


def role_of(f: Finding) -> str:
    """The word a finding of :func:`descgen.check_mma` is about: its field's prefix
    (``a_desc.swizzle`` -> ``a_desc``), else the instruction descriptor."""
    head = f.field.split(".", 1)[0]
    return head if "." in f.field and head in ROLES else "idesc"


@dataclass(frozen=True)
class Report(HasFindings):
    """What a validation found: a sequence of :class:`Finding` records (iterate, ``len``, index),
    plus the rules that could not run and the decoded words.

    Attributes:
        findings: every finding, all checks run (field checks first, then the rules in catalog order).
        not_checked: rules whose context was missing.
        decoded: ``{role: Decoded}`` (``idesc``, ``smem``, ``zcm``, or ``a_desc``/``b_desc`` for
            :func:`descgen.check_mma`).
        context: the context the rules ran with (normalized; None = not given).
    """

    findings: tuple[Finding, ...]
    not_checked: tuple[NotChecked, ...]
    decoded: Mapping[str, Any]
    context: Mapping[str, Any] = field(default_factory=dict)

    def __iter__(self) -> Iterator[Finding]:
        return iter(self.findings)

    def __len__(self) -> int:
        return len(self.findings)

    def __getitem__(self, i: int) -> Finding:
        return self.findings[i]

    def findings_for(self, role: str) -> tuple[Finding, ...]:
        """The findings about the word ``role`` (a key of ``decoded``): all of them for a one-word
        report, else those :func:`role_of` assigns to it."""
        if len(self.decoded) <= 1:
            return self.findings if role in self.decoded else ()
        return tuple(f for f in self.findings if role_of(f) == role)

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "context": {k: v for k, v in self.context.items() if v is not None},
            "findings": [f.as_dict() for f in self.findings],
            "not_checked": [n.as_dict() for n in self.not_checked],
            "decoded": {role: d.as_dict() for role, d in self.decoded.items()},
        }


# --------------------------------------------------------------------------------------------
# Loading.


@functools.cache
def _data() -> tuple[dict[str, Rule], Constraints]:
    return parse_rules(_read(RULES_FILE), f"tables/{RULES_FILE}")


def catalog() -> dict[str, Rule]:
    """Every ``[[rule]]`` of ``tables/rules.toml``, by code, in file order."""
    return _data()[0]


def constraints() -> Constraints:
    """The constraint tables of ``tables/rules.toml``."""
    return _data()[1]


def _need(table: Mapping[str, Any], key: str, path: str, where: str) -> Any:
    if key not in table:
        raise TableError(path, where, f"missing key '{key}'")
    return table[key]


def _int_range(spec: Any, path: str, where: str) -> frozenset[int]:
    if isinstance(spec, dict):
        _keys(spec, {"min", "max", "step"}, path, where)
        return frozenset(range(spec["min"], spec["max"] + 1, spec.get("step", 1)))
    if isinstance(spec, list) and all(isinstance(v, int) for v in spec):
        return frozenset(spec)
    raise TableError(path, where, f"expected a list of integers or {{ min, max, step }}, got {spec!r}")


def parse_rules(data: Mapping[str, Any], path: str) -> tuple[dict[str, Rule], Constraints]:
    """Validate and compile ``tables/rules.toml``. Raises :class:`TableError` naming the entry."""
    _keys(data, _TOP_KEYS, path, "file")
    swizzles = tuple(layout("smem_desc").field("swizzle").codes(None))

    # Table 52 and the element sizes: tables/smem_atoms.toml (one copy, beside Table 53)
    table52 = atoms()
    type_bits = {name: bits for name, (bits, _) in table52.elements.items()}
    major_swizzle = [{"bits": c.bits, "major": c.major, "swizzles": c.swizzles, "source": c.source}
                     for c in table52.combinations]

    t50 = {}
    for i, row in enumerate(_need(data, "transpose_b_8bit", path, "file")):
        where = f"transpose_b_8bit #{i + 1}"
        _keys(row, {"cta_group", "n", "source"}, path, where)
        _need(row, "source", path, where)
        t50[int(_need(row, "cta_group", path, where))] = _int_range(_need(row, "n", path, where), path, where)

    scale_vec = []
    for i, row in enumerate(_need(data, "scale_vec", path, "file")):
        where = f"scale_vec #{i + 1}"
        keys = {"name", "kinds", "k", "scale_factors", "scale_types", "sf_ids", "source"}
        _keys(row, keys, path, where)
        for key in keys:
            _need(row, key, path, where)
        if row["name"] not in SCALE_VECS:
            raise TableError(path, where, f"unknown scale vector size {row['name']!r}; known: {', '.join(SCALE_VECS)}")
        if any(k not in KINDS for k in row["kinds"]):
            raise TableError(path, where, f"unknown kind in {row['kinds']}")
        scale_vec.append(dict(row, kinds=tuple(row["kinds"]), k=tuple(row["k"]), scale_types=tuple(row["scale_types"]),
                              sf_ids=tuple(row["sf_ids"])))

    singles = {}
    for name, keys in (("a_tmem", {"a_major", "source"}), ("absolute_lbo", {"swizzles", "major", "base_offset", "source"}),
                       ("zcm", {"ms", "max_column_shift", "source"}), ("targets", {"names", "aliases", "source"})):
        table = _need(data, name, path, "file")
        _keys(table, keys, path, name)
        for key in keys:
            _need(table, key, path, name)
        singles[name] = table
    bad = [sw for sw in singles["absolute_lbo"]["swizzles"] if sw not in swizzles]
    if bad:
        raise TableError(path, "absolute_lbo", f"unknown swizzle mode(s) {bad}; known: {', '.join(swizzles)}")
    zcm = dict(singles["zcm"], max_column_shift={int(m): v for m, v in singles["zcm"]["max_column_shift"].items()})
    targets = tuple(singles["targets"]["names"])
    for t in (*targets, *singles["targets"]["aliases"].values()):
        if not (t.startswith("sm_") and t[3:-1].isdigit() and t[-1] in "af"):
            raise TableError(path, "targets", f"target {t!r} is not sm_<NNN>a or sm_<NNN>f")

    requires = {}
    for i, row in enumerate(_need(data, "requires", path, "file")):
        where = f"requires #{i + 1}"
        _keys(row, {"feature", "targets", "source"}, path, where)
        for key in ("feature", "targets", "source"):
            _need(row, key, path, where)
        unknown = [t for t in row["targets"] if t not in targets]
        if unknown:
            raise TableError(path, where, f"unknown target(s) {unknown}; known: {', '.join(targets)}")
        requires[row["feature"]] = tuple(row["targets"])

    rules: dict[str, Rule] = {}
    for i, row in enumerate(_need(data, "rule", path, "file")):
        where = f"rule #{i + 1}"
        _keys(row, _RULE_KEYS, path, where)
        for key in ("code", "severity", "applies", "fields", "rule", "source", "legal", "illegal"):
            _need(row, key, path, where)
        where = f"rule {row['code']}"
        if row["code"] in rules:
            raise TableError(path, where, "duplicate code")
        if row["severity"] not in SEVERITIES:
            raise TableError(path, where, f"severity must be one of {', '.join(SEVERITIES)}")
        if row["applies"] not in _APPLIES:
            raise TableError(path, where, f"applies must be one of {', '.join(_APPLIES)}")
        for key in ("needs", "uses"):
            unknown = [c for c in row.get(key, []) if c not in CONTEXT_NAMES]
            if unknown:
                raise TableError(path, where, f"unknown context {unknown} in '{key}'; known: {', '.join(CONTEXT_NAMES)}")
        for key in ("legal", "illegal"):
            if row[key].get("as") not in _APPLIES:
                raise TableError(path, where, f"'{key}' example needs as = one of {', '.join(_APPLIES)}")
            if (row[key]["as"] == "ptx") != isinstance(row[key].get("ptx"), str):
                raise TableError(path, where, f"'{key}' example: a PTX snippet (ptx = \"...\") goes with as = \"ptx\", and only there")
        rules[row["code"]] = Rule(row["code"], row["severity"], row["applies"], tuple(row["fields"]),
                                  tuple(row.get("needs", ())), tuple(row.get("uses", ())), row["rule"], row["source"],
                                  row["legal"], row["illegal"], tuple(row.get("kinds", ())))
        if any(k not in KINDS for k in rules[row["code"]].kinds):
            raise TableError(path, where, f"unknown kind in {row['kinds']}; known: {', '.join(KINDS)}")

    return rules, Constraints(
        type_bits=type_bits,
        major_swizzle=tuple(major_swizzle),
        transpose_b_8bit=t50,
        scale_vec=tuple(scale_vec),
        a_tmem=singles["a_tmem"],
        absolute_lbo=singles["absolute_lbo"],
        zcm=zcm,
        targets=targets,
        aliases=dict(singles["targets"]["aliases"]),
        requires=requires,
    )


# --------------------------------------------------------------------------------------------
# Context.


def _usage(name: str, value: Any, allowed: str, rule: str) -> UsageError:
    return UsageError((Finding(f"CONTEXT-{name.upper().replace('_', '-')}", "error", name, value, allowed, rule,
                               context_source(name)),))


def _flag(name: str, value: Any) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise _usage(name, value, "true, false or None", f"{name} is {CONTEXT_NAMES[name]}")


def _uint(name: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _usage(name, value, "a non-negative integer or None", f"{name} is {CONTEXT_NAMES[name]}")
    return value


def normalize_scale_vec(value: Any) -> str | None:
    """``"2X"``, ``"2x"``, ``"scale_vec::2X"``, ``".block16"`` -> the canonical name (None stays None).

    Raises:
        UsageError: not a scale vector size.
    """
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip().removeprefix(".").removeprefix("scale_vec::")
        for name in SCALE_VECS:
            if text.lower() == name.lower():
                return name
    raise _usage("scale_vec", value, ", ".join(SCALE_VECS), "the scale vector size is .scale_vec::1X/2X/4X or .block16/.block32")


def normalize_arch(value: Any) -> str | None:
    """``"sm_100a"`` (also ``"sm_101a"``, renamed ``sm_110a``) -> the canonical target name.

    Raises:
        UsageError: a target descgen does not know.
    """
    if value is None:
        return None
    c = constraints()
    if isinstance(value, str):
        name = value.strip().lower()
        name = c.aliases.get(name, name)
        if name in c.targets:
            return name
    raise _usage("arch", value, ", ".join(c.targets) + " (sm_101a/f = sm_110a/f)",
                 "tcgen05 needs an arch- or family-specific Blackwell target")


def context(*, cta_group: Any = None, ws: Any = None, sp: Any = None, scale_vec: Any = None, a_tmem: Any = None,
            arch: Any = None, pattern_start: Any = None, m: Any = None, n: Any = None, warp: Any = None,
            alloc_columns: Any = None, alloc_base: Any = None) -> dict[str, Any]:
    """Check and normalize instruction context; None means "not given" for every name.

    Raises:
        UsageError: a value that is not a context value (``CONTEXT-<NAME>``).
    """
    if cta_group is not None and (isinstance(cta_group, bool) or not hasattr(type(cta_group), "__index__") or cta_group not in (1, 2)):
        raise _usage("cta_group", cta_group, "1, 2 or None", "the instruction's .cta_group is ::1 or ::2")
    return {
        "cta_group": cta_group,
        "ws": _flag("ws", ws),
        "sp": _flag("sp", sp),
        "scale_vec": normalize_scale_vec(scale_vec),
        "a_tmem": _flag("a_tmem", a_tmem),
        "arch": normalize_arch(arch),
        "pattern_start": _uint("pattern_start", pattern_start),
        "m": _uint("m", m),
        "n": _uint("n", n),
        "warp": _warp(warp),
        "alloc_columns": _uint("alloc_columns", alloc_columns),
        "alloc_base": _alloc_base(alloc_base),
    }


def _warp(value: Any) -> int | None:
    if value is None:
        return None
    warps = layout("taddr").extra["access"]["warps"]  # §9.7.16.8.1
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < warps:
        raise UsageError((Finding("CONTEXT-WARP", "error", "warp", value, f"0..{warps - 1} or None",
                                  "warp is the warp's ID within its warpgroup (warp ID % 4); §9.7.16.8.1 gives each "
                                  "of the 4 warps a quarter of the lanes", context_source("warp")),))
    return value


def _alloc_base(value: Any) -> int | None:
    """The address tcgen05.alloc wrote: a tensor memory address with lane 0 (all 128 lanes of a
    column are allocated together) and a column that exists."""
    if value is None:
        return None
    columns = layout("taddr").field("column").domain(None)
    if (isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 32 or value >> 16
            or value not in columns):
        raise UsageError((Finding("CONTEXT-ALLOC-BASE", "error", "alloc_base", value,
                                  f"a tensor memory address with lane 0 and column {columns.describe()}",
                                  "tcgen05.alloc allocates whole columns (all 128 lanes) and writes the address of "
                                  "the first: lane 0, that column", context_source("alloc_base")),))
    return value


# --------------------------------------------------------------------------------------------
# Generated field codes.


_CHECKS = {"uint": ("TYPE", "ALIGN", "RANGE"), "flag": ("TYPE", "VALUE"), "enum": ("CODE",), "reserved": ("RESERVED",),
           "constant": ("CONST",)}


@functools.cache
def field_codes() -> dict[str, Rule]:
    """The per-field codes every layout generates (``IDESC-N-RANGE``, ``SMEM-RESERVED-14``...), as
    rules without examples: one per (descriptor word, field, check), the union over layouts."""
    from .engine import finding_code

    out: dict[str, Rule] = {}
    for name in LAYOUT_FILES:
        lay = layout(name)
        for f in lay.fields:
            for check in _CHECKS[f.type]:
                if check == "ALIGN" and f.transform.align == 1:
                    continue
                code = finding_code(lay.word, f, check)
                if code in out:
                    continue
                rule = {
                    "TYPE": "the value must have the field's type",
                    "ALIGN": f"must be a multiple of {f.transform.align}" + (f" ({f.unit})" if f.unit else ""),
                    "RANGE": "the value must lie in the field's domain",
                    "VALUE": "the flag value must be one the kind supports",
                    "CODE": "the code must be one the table defines",
                    "RESERVED": f"reserved bits {f.bits} must be 0",
                    "CONST": f"bits {f.bits} are a fixed constant {f.const:#0{f.width + 2}b}",
                }[check]
                out[code] = Rule(code, "error" if check in ("TYPE", "ALIGN") else f.severity, lay.word, (f.name,), (), (),
                                 f"{f.description}: {rule}", f.source)
    return out


@functools.cache
def usage_codes() -> dict[str, Rule]:
    """Codes of calls that are wrong in themselves (a kind, an argument, a word width, a context
    value): raised as :class:`UsageError` / :class:`EncodeError`, never found in a word."""
    from .idesc import _NEUTRAL

    def rule(code: str, applies: str, field: str, text: str, source: str) -> tuple[str, Rule]:
        return code, Rule(code, "error", applies, (field,), (), (), text, source)

    out = dict([
        rule("IDESC-KIND", "idesc", "kind", "the MMA kind must be one PTX defines; it selects Table 42, 43 or 44",
             "§9.7.16.4.2, Tables 42-44"),
        rule("MMA-A-OPERAND", "mma", "a_desc", "A comes from shared memory (a-desc) or tensor memory ([a-tmem]), exactly one",
             "§9.7.16.10.9.1 (tcgen05.mma syntax)"),
        rule("ZCM-START-COUNT-LENGTH", "zcm", "start_count", "four start counts, one per sub-mask", "Table 45"),
        rule("ZCM-FIRST-SPAN-LENGTH", "zcm", "first_span", "four first spans, one per sub-mask", "Table 45"),
        rule("ZCM-M-RANGE", "zcm", "m", "the mask is generated for M = 32, 64 and 128", "§9.7.16.4.3"),
        rule("ZCM-N-RANGE", "zcm", "n", "N must split into equal sub-masks (at most 256 columns)", "§9.7.16.4.3"),
        rule("DIFF-DESCRIPTOR", "context", "descriptor", "diff compares two words of one descriptor type (idesc, smem, "
             "zcm, taddr); a kind applies to instruction descriptors only", "§9.7.16.4 (E32)"),
    ])
    emit = "descgen.emit (README: Emitting code)"
    out.update([
        rule("EMIT-FORMAT", "emit", "format", "the format is one descgen writes: hex, json, c, cpp, ptx, python", emit),
        rule("EMIT-NAME", "emit", "name", "the name is an identifier of the language, not a keyword, and names one word", emit),
        rule("EMIT-WORD", "emit", "word", "a word to write is an unsigned integer below 2**64", "§9.7.16.4"),
        rule("EMIT-INPUT", "emit", "what", "emit writes ints, Decoded, Report and TileDescriptor results, or lists and "
                                           "mappings of them", emit),
        rule("EMIT-KIND", "emit", "kind", "an int instruction descriptor is decoded for its comment under a kind", "Tables 42-44"),
        rule("EMIT-DESCRIPTOR", "emit", "descriptor", "the descriptor is idesc, smem, zcm or taddr", "§9.7.16.4, §9.7.16.1.1"),
    ])
    out.update(rule(f"IDESC-{arg.upper().replace('_', '-')}-ABSENT", "idesc", arg,
                    f"{arg} is given but the kind's layout has no field for it", "Tables 42-44") for arg in _NEUTRAL)
    for word, source in (("idesc", "§9.7.16.4.2 (32-bit)"), ("smem", "§9.7.16.4.1 (64-bit)"), ("zcm", "§9.7.16.4.3 (64-bit)"),
                         ("taddr", "§9.7.16.1.1 (32-bit)")):
        out.update([rule(f"{word.upper()}-WORD-RANGE", word, "word", f"a {word} word is an unsigned integer of its width", source)])
    for lay in (layout(n) for n in LAYOUT_FILES):
        for f in lay.fields:
            if f.is_value and f.default is None and not any(f.name in d for d in lay.defaults.values()):
                out.update([rule(f"{lay.word.upper()}-{f.name.upper().replace('_', '-')}-MISSING", lay.word, f.name,
                                 "a value is required", f.source)])
    out.update(rule(f"CONTEXT-{name.upper().replace('_', '-')}", "context", name, f"{name} is {text}",
                    context_source(name)) for name, text in CONTEXT_NAMES.items())
    from .batch import BATCH_CODES, _SOURCE

    out.update(rule(code, "batch", field, text, _SOURCE) for code, (field, text) in BATCH_CODES.items())
    return out


def all_codes() -> dict[str, Rule]:
    """Every code descgen can report: generated field codes, the catalog and the usage codes."""
    return {**field_codes(), **catalog(), **usage_codes()}


# --------------------------------------------------------------------------------------------
# Examples and the rules page.


@dataclass(frozen=True, slots=True)
class Example:
    """A catalog example made concrete: the words, the kind and the context.

    ``words`` maps a role to its word: ``idesc``/``smem``/``zcm`` for a one-word example, or
    ``idesc``, ``a_desc``, ``b_desc`` (and ``zcm``) for an instruction (``as_ == "mma"``); none for a
    PTX example (``as_ == "ptx"``), whose ``ptx`` snippet is scanned by :func:`descgen.scan_ptx`.
    """

    as_: str
    kind: str | None
    words: Mapping[str, int]
    context: Mapping[str, Any]
    ptx: str | None = None

    def command(self) -> str:
        """The CLI command that shows it (``descgen validate ...`` or ``descgen check ...``)."""
        ctx = " ".join(_option(k, v) for k, v in self.context.items())
        if self.as_ == "ptx":
            lines = " ".join(f"'{line.strip()}'" for line in (self.ptx or "").splitlines())
            return f"printf '%s\\n' {lines} | descgen scan -" + (f" {ctx}" if ctx else "")
        kind = f" --kind {self.kind}" if self.kind else ""
        if self.as_ == "mma":
            words = " ".join(f"--{role.replace('_', '')} {_hex(role, w)}" for role, w in self.words.items())
            return f"descgen check {words}{kind}" + (f" {ctx}" if ctx else "")
        (role, word), = self.words.items()
        return f"descgen validate {_hex(role, word)} --as {self.as_}{kind}" + (f" {ctx}" if ctx else "")

    def run(self) -> Any:
        """Validate the example (what ``command()`` prints): a :class:`Report`, or for a PTX example
        a :class:`descgen.scan.ScanResult` (the same ``findings``, ``codes`` and ``ok``)."""
        from . import validate

        if self.as_ == "ptx":
            from .scan import scan_ptx

            return scan_ptx(self.ptx or "", **self.context)
        if self.as_ == "mma":
            return validate.check_mma(kind=self.kind, **self.words,
                                      **self.context)
        (_, word), = self.words.items()
        if self.as_ == "idesc":
            return validate.validate_idesc(word, self.kind, **self.context)
        if self.as_ == "taddr":
            from .taddr import validate_taddr

            return validate_taddr(word, **self.context)
        return (validate.validate_smem if self.as_ == "smem" else validate.validate_zcm)(word, **self.context)


def _hex(role: str, word: int) -> str:
    return f"{word:#010x}" if role in ("idesc", "taddr") else f"{word:#018x}"


def _option(name: str, value: Any) -> str:
    flag = "--" + name.replace("_", "-")
    if isinstance(value, bool):
        return flag if value else f"--no-{name.replace('_', '-')}"
    return f"{flag} {value:#x}" if name in ("pattern_start", "alloc_base") else f"{flag} {value}"


_LAYOUT_OF = {"smem": "smem_desc", "zcm": "zcm_desc", "a_desc": "smem_desc", "b_desc": "smem_desc", "taddr": "taddr"}


def example(spec: Mapping[str, Any]) -> Example:
    """Build the words of a catalog example (fields are encoded with the generic engine and
    ``check=False``, so an illegal example is the word a kernel would hold)."""
    from .engine import encode
    from .idesc import KIND_LAYOUTS, idesc_defaults

    as_ = spec["as"]
    kind = spec.get("kind")
    if as_ == "ptx":
        return Example(as_, None, {}, dict(spec.get("context", {})), spec["ptx"])
    words = {}
    roles = ("idesc", "a_desc", "b_desc", "zcm") if as_ == "mma" else (as_,)
    for role in roles:
        fields = spec.get(role) if as_ == "mma" else spec.get("fields")
        if fields is None:
            if "word" in spec and as_ != "mma":
                words[role] = int(spec["word"], 16)
            continue
        if role == "idesc":
            values = {**idesc_defaults(kind), **fields}
            values = {k: v for k, v in values.items() if k in layout(KIND_LAYOUTS[kind]).by_name}
            words[role] = int(encode(KIND_LAYOUTS[kind], kind, check=False, **values))
        else:
            words[role] = int(encode(_LAYOUT_OF[role], None, check=False, **fields))
    return Example(as_, kind, words, dict(spec.get("context", {})))


def rules_markdown() -> str:
    """The rules page (``docs/rules.md``): every code, generated from the tables."""
    lines = [
        "# Rules descgen checks",
        "",
        "Generated from `tables/rules.toml` and the layout tables by `descgen rules --markdown`;",
        "`tests/test_validate.py` checks that this page is current. `descgen explain CODE` prints one",
        "entry with a legal and an illegal example.",
        "",
        "Severity: **error** breaks a PTX rule (encoders refuse it, `validate`/`check` exit 1);",
        "**warning** is legal but suspicious or ignored by the hardware. *Needs*: context the rule",
        "cannot run without (reported as not checked when missing); *uses*: context that narrows it.",
        "",
        "## Rules between fields, words and the instruction",
        "",
        "| code | severity | applies to | needs / uses | rule | source |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in catalog().values():
        ctx = ", ".join(r.needs) + (f" (uses {', '.join(r.uses)})" if r.uses else "")
        lines.append(f"| `{r.code}` | {r.severity} | {r.applies} | {ctx or '-'} | {_md(r.rule)} | {_md(r.source)} |")
    lines += ["", "### Examples", ""]
    for r in catalog().values():
        lines += [f"- `{r.code}`", f"  - legal: `{example(r.legal).command()}`", f"  - illegal: `{example(r.illegal).command()}`"]
    for title, codes in (("Field checks (one per field, generated from the layout tables)", field_codes()),
                         ("Usage errors (the call itself is wrong; raised, never found in a word)", usage_codes())):
        lines += ["", f"## {title}", "", "| code | severity | rule | source |", "| --- | --- | --- | --- |"]
        lines += [f"| `{r.code}` | {r.severity} | {_md(r.rule)} | {_md(r.source)} |" for r in codes.values()]
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|")
