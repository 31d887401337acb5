"""The rules catalog and the tables around it (:data:`FILES`), as data.

Every check descgen runs has a stable code. A single field's own range check is generated from its
layout table (``IDESC-N-RANGE``, ``SMEM-RESERVED-14``: see :mod:`descgen.codes`); every rule that
ties fields, words or the instruction together is a ``[[rule]]`` entry of ``tables/rules.toml``
with its severity, rule sentence, PTX source and a legal and an illegal example. The constraint
tables the rules read (Table 50, Tables 54/55, the target notes...) are in
``tables/constraints.toml``, the instruction context they may depend on (``[[context]]``) in
``tables/contexts.toml``, and the codes raised or found outside the rule runner, each with its rule
sentence and source, in ``tables/codes.toml``: ``[[usage]]`` (a call wrong in itself,
:func:`usage_error`) and ``[[layout]]`` (the shared-memory tile model, with severity and fields:
:func:`layout_finding`); the raise sites add only what they found. The checks themselves are in
:mod:`descgen.rules.checks`; this module holds the data they read.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Mapping, NamedTuple, get_args

from ..core.errors import SEVERITIES, DescgenError, Finding, TableError, UsageError
from .loader import KINDS, atoms, check_keys, layout, read_table
from ..core.types import Arch, ScaleVec

__all__ = [
    "RULES_FILE",
    "FILES",
    "SECTION_PATHS",
    "SCALE_VECS",
    "PTX_FACTS",
    "APPLIES",
    "USAGE_APPLIES",
    "CONTEXT_VALUES",
    "Rule",
    "ContextName",
    "Constraints",
    "Catalog",
    "catalog",
    "derived",
    "constraints",
    "contexts",
    "usage_table",
    "usage_error",
    "layout_table",
    "layout_finding",
    "catalog_tables",
    "parse_rules",
    "EXAMPLE_FORMS",
]

RULES_FILE = "rules.toml"
#: The catalog's files under ``tables/``, each with the top-level sections it holds (by concern).
FILES: dict[str, tuple[str, ...]] = {
    RULES_FILE: ("rule", "derive"),
    "codes.toml": ("usage", "layout"),
    "contexts.toml": ("context",),
    "constraints.toml": ("transpose_b_8bit", "scale_vec", "a_tmem", "absolute_lbo", "zcm", "targets", "requires",
                         "cp_shapes", "ptx_version"),
}
#: The file each section is in (``tables/<file>``): the path :func:`parse_rules`' errors name.
SECTION_PATHS: dict[str, str] = {section: f"tables/{name}" for name, sections in FILES.items() for section in sections}

#: The scale vector sizes, as descgen names them (PTX: .scale_vec::1X ... .block32).
SCALE_VECS: tuple[ScaleVec, ...] = get_args(ScaleVec)

#: What a rule applies to: one word, one instruction (``mma``: :func:`descgen.check_mma`; ``wgmma``:
#: :func:`descgen.check_wgmma`, Hopper) or an instruction-syntax or file rule of
#: :func:`descgen.scan_ptx` (``ptx``).
APPLIES = ("idesc", "smem", "zcm", "mma", "taddr", "ptx", "wgmma")
#: What a declared ``ptx`` rule may read (``on = ...``): the records of facts the scanner hands
#: over (descgen.ptx.syntax_rules says what each holds): an instruction's qualifiers, a tcgen05.mma
#: with its instruction descriptor decoded, the file's ``.target`` and its target at the first
#: instruction of each family, a feature against the ``.version``, a ``.cta_group`` against the
#: function's others, an immediate wider than its operand.
PTX_FACTS = ("tcgen05.mma", "tcgen05.cp", "tcgen05.mma idesc", ".target", "first tcgen05", "first wgmma", "feature",
             "cta_group", "immediate")
#: The kinds of context value a ``[[context]]`` entry may declare (``value = ...``).
CONTEXT_VALUES = ("flag", "uint", "cta_group", "scale_vec", "arch", "warp", "alloc_base")
_WORDS = ("idesc", "smem", "zcm", "mma", "taddr", "wgmma_smem")
_RULE_KEYS = {"code", "severity", "applies", "kinds", "fields", "needs", "uses", "rule", "source", "legal", "illegal",
              "let", "operands", "check", "on"}
_USAGE_KEYS = {"code", "applies", "field", "rule", "source"}
#: What a [[layout]], [[usage]] or [[context]] entry may add: its examples, or why no input produces
#: its code (descgen.examples; tests/test_codes.py checks every code has one or the other).
_EXAMPLE_KEYS = {"legal", "illegal", "unreachable"}
#: The forms an example takes (``as = ...``): one word, an instruction or a PTX snippet (what
#: ``descgen validate``/``check``/``scan`` show), a call of the Python API, batch requests.
EXAMPLE_FORMS = ("idesc", "smem", "zcm", "taddr", "mma", "ptx", "call", "batch")
USAGE_APPLIES = ("idesc", "smem", "zcm", "mma", "taddr", "context", "emit", "batch", "layout", "ptx", "tables", "port",
                 "instrument")
_LAYOUT_KEYS = {"code", "severity", "applies", "fields", "rule", "source"}
_LAYOUT_APPLIES = ("layout", "smem")
_KEY_ORDER = ("code", "severity", "applies", "field", "fields", "rule", "source")  # the entries' order
_CONTEXT_KEYS = {"name", "meaning", "value", "words", "help", "metavar", "source", "legal", "illegal"}
_TOP_KEYS = {"table", *SECTION_PATHS}  # [table] (a file's source note) may head any of them


@dataclass(frozen=True, slots=True)
class Rule:
    """One catalogued rule.

    Attributes:
        code: stable code (``IDESC-N-SHAPE``).
        severity: ``"error"``, ``"warning"`` or ``"info"``.
        applies: ``idesc``, ``smem``, ``zcm``, ``mma`` (instruction-level, :func:`descgen.check_mma`),
            ``wgmma`` (a Hopper instruction, :func:`descgen.check_wgmma`) or ``ptx`` (an instruction-syntax or file
            rule reported by :func:`descgen.scan_ptx`).
        fields: the fields (or context names) the rule reads.
        needs: context it cannot run without; missing context makes it "not checked".
        uses: context that narrows it when given (otherwise every case is allowed for).
        rule: the rule in one sentence. source: PTX table / section.
        legal, illegal: examples (see ``tables/rules.toml`` and ``tables/codes.toml``;
            :mod:`descgen.examples` builds and runs them); None for the generated codes, whose
            examples are generated.
        kinds: the MMA kinds the rule concerns (empty: all); for the others, missing context
            is not reported as not checked.
        unreachable: why no input produces the code (a ``[[usage]]`` or ``[[layout]]`` entry
            without examples), else ``""``.
        declared: the rule's checks as the table writes them (``let``, ``operands``, ``check``:
            :mod:`descgen.rules.language`), or None (a ``ptx`` rule, or a usage or layout code).
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
    unreachable: str = ""
    declared: Mapping[str, Any] | None = None

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
class ContextName:
    """One ``[[context]]`` entry: a name the instruction context may give.

    Attributes:
        name: ``cta_group``, ``ws``... (the keyword argument of the validators).
        meaning: what it is, in one phrase. value: its kind of value (:data:`CONTEXT_VALUES`).
        words: the words whose rules use it (``idesc``, ``smem``, ``zcm``, ``mma``, ``taddr``).
        help: the help line of its command-line option. metavar: the option's value name.
        source: where PTX defines it.
        legal, illegal: the examples of ``CONTEXT-<NAME>``: a call given a good and a bad value.
    """

    name: str
    meaning: str
    value: str
    words: tuple[str, ...]
    help: str
    metavar: str
    source: str
    legal: Mapping[str, Any] | None = None
    illegal: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Constraints:
    """The constraint tables of ``tables/constraints.toml`` (see the file for each one's source),
    with Table 52 and the element sizes from ``tables/smem_atoms.toml``."""

    type_bits: Mapping[str, int]
    major_swizzle: tuple[Mapping[str, Any], ...]
    transpose_b_8bit: Mapping[int, frozenset[int]]
    scale_vec: tuple[Mapping[str, Any], ...]
    a_tmem: Mapping[str, Any]
    absolute_lbo: Mapping[str, Any]
    zcm: Mapping[str, Any]
    targets: tuple[Arch, ...]
    aliases: Mapping[str, str]
    requires: Mapping[str, tuple[str, ...]]
    ptx_versions: Mapping[str, tuple[tuple[int, int], str]]
    #: §9.7.16.9.2: each tcgen05.cp shape and the multicast qualifiers it takes (none: none allowed).
    cp_shapes: Mapping[str, tuple[str, ...]]

    #: :meth:`swizzles_for`'s answers, once computed (the tables are immutable; not compared).
    _swizzles: dict[tuple[int, str], tuple[str, ...]] = field(default_factory=dict, repr=False, compare=False)

    def swizzles_for(self, bits: int, major: str) -> tuple[str, ...]:
        """Table 52: the swizzle modes an operand of ``bits``-bit elements and ``major`` may use."""
        hit = self._swizzles.get((bits, major))
        if hit is None:
            hit = self._swizzles[bits, major] = tuple(
                s for row in self.major_swizzle if bits in row["bits"] and row["major"] == major
                for s in row["swizzles"])
        return hit

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




class Catalog(NamedTuple):
    """The catalog's files (:data:`FILES`) compiled: the rules, the constraint tables, the context
    names, the usage codes and the tile/layout codes."""

    rules: dict[str, Rule]
    constraints: Constraints
    contexts: dict[str, ContextName]
    usage: dict[str, Rule]
    layout: dict[str, Rule]
    #: ``[derive.<applies>]``: names every rule of the word may use, as expressions.
    derive: dict[str, dict[str, str]]


def catalog_tables() -> dict[str, Any]:
    """The sections of every file of :data:`FILES`, in one mapping (what :func:`parse_rules` takes,
    with :data:`SECTION_PATHS`). A file holding a section that is not its own raises
    :class:`TableError` naming it."""
    data: dict[str, Any] = {}
    for name, sections in FILES.items():
        table = read_table(name)
        check_keys(table, {"table", *sections}, f"tables/{name}", "file")
        data.update((k, v) for k, v in table.items() if k != "table")
    return data


@functools.cache
def _data() -> Catalog:
    return parse_rules(catalog_tables(), SECTION_PATHS)


def catalog() -> dict[str, Rule]:
    """Every ``[[rule]]`` of ``tables/rules.toml``, by code, in file order."""
    return _data().rules


def derived() -> dict[str, dict[str, str]]:
    """``[derive.<applies>]``: per word, the names every rule of it may use (expressions of the rule
    language, :mod:`descgen.rules.language`)."""
    return _data().derive


def constraints() -> Constraints:
    """The constraint tables of ``tables/constraints.toml``."""
    return _data().constraints


def contexts() -> dict[str, ContextName]:
    """The instruction context names (``[[context]]`` of ``tables/contexts.toml``), in file order."""
    return _data().contexts


def usage_table() -> dict[str, Rule]:
    """The ``[[usage]]`` codes of ``tables/codes.toml`` (calls wrong in themselves), by code."""
    return _data().usage


def usage_error(code: str, field: str, value: Any, allowed: str, detail: str = "", where: str = "",
                error: type[DescgenError] = UsageError) -> DescgenError:
    """The :class:`UsageError` (or ``error``, e.g. :class:`WordError`) of the ``[[usage]]`` code
    ``code``: its rule and source, with ``detail`` (what was found) after the rule sentence and
    ``where`` as the error's context."""
    return error((usage_table()[code].finding(field, value, allowed, detail),), where)


def layout_table() -> dict[str, Rule]:
    """The ``[[layout]]`` codes of ``tables/codes.toml``, by code: what the shared-memory tile model
    (:mod:`descgen.tiles`) reports or refuses (``LAYOUT-*``, ``SMEM-START-ADDRESS-CARRY``)."""
    return _data().layout


def layout_finding(code: str, field: str, value: Any, allowed: str, detail: str = "") -> Finding:
    """The finding of the ``[[layout]]`` code ``code``: its severity, rule and source from the
    table, with ``detail`` (what was found) after the rule sentence."""
    return _data().layout[code].finding(field, value, allowed, detail)


def _need(table: Mapping[str, Any], key: str, path: str, where: str) -> Any:
    if key not in table:
        raise TableError(path, where, f"missing key '{key}'")
    return table[key]


def _int_range(spec: Any, path: str, where: str) -> frozenset[int]:
    if isinstance(spec, dict):
        check_keys(spec, {"min", "max", "step"}, path, where)
        return frozenset(range(spec["min"], spec["max"] + 1, spec.get("step", 1)))
    if isinstance(spec, list) and all(isinstance(v, int) for v in spec):
        return frozenset(spec)
    raise TableError(path, where, f"expected a list of integers or {{ min, max, step }}, got {spec!r}")


def _code_table(data: Mapping[str, Any], name: str, keys: set[str], applies: tuple[str, ...], path: str,
                taken: Mapping[str, Rule]) -> dict[str, Rule]:
    """The ``[[usage]]`` or ``[[layout]]`` entries, by code: every key of ``keys`` required, no
    other; a ``[[usage]]`` entry is an error naming one ``field``, a ``[[layout]]`` entry has its
    ``severity`` and ``fields``. A code of ``taken`` or given twice is a duplicate."""
    out: dict[str, Rule] = {}
    for i, row in enumerate(_need(data, name, path, "file")):
        where = f"{name} #{i + 1}"
        check_keys(row, keys | _EXAMPLE_KEYS, path, where)
        for key in sorted(keys, key=_KEY_ORDER.index):
            _need(row, key, path, where)
        where = f"{name} {row['code']}"
        _check_examples(row, path, where)
        severity = row.get("severity", "error")
        if severity not in SEVERITIES:
            raise TableError(path, where, f"severity must be one of {', '.join(SEVERITIES)}")
        if row["applies"] not in applies:
            raise TableError(path, where, f"applies must be one of {', '.join(applies)}")
        fields = (row["field"],) if "field" in keys else row["fields"]
        if not fields or not all(isinstance(f, str) for f in fields):
            raise TableError(path, where, "fields must be a non-empty list of field names")
        if row["code"] in out or row["code"] in taken:
            raise TableError(path, where, "duplicate code")
        out[row["code"]] = Rule(row["code"], severity, row["applies"], tuple(fields), (), (), row["rule"],
                                row["source"], row.get("legal"), row.get("illegal"), (), row.get("unreachable", ""))
    return out


def _check_examples(row: Mapping[str, Any], path: str, where: str) -> None:
    """An entry's ``legal`` and ``illegal`` examples (both or neither; not with ``unreachable``),
    each of a form of :data:`EXAMPLE_FORMS` with what that form needs."""
    given = [key for key in ("legal", "illegal") if key in row]
    if len(given) == 1 or (given and "unreachable" in row):
        raise TableError(path, where, "give both a 'legal' and an 'illegal' example, or 'unreachable' (why no input "
                                      "produces the code), not both")
    if "unreachable" in row and not (isinstance(row["unreachable"], str) and row["unreachable"]):
        raise TableError(path, where, "'unreachable' is the reason no input produces the code, as text")
    needs = {"ptx": ("ptx", str), "call": ("call", str), "batch": ("lines", list)}
    for key in given:
        spec = row[key]
        if not isinstance(spec, Mapping) or spec.get("as") not in EXAMPLE_FORMS:
            raise TableError(path, where, f"'{key}' example needs as = one of {', '.join(EXAMPLE_FORMS)}")
        for form, (name, kind) in needs.items():
            if (spec["as"] == form) != isinstance(spec.get(name), kind):
                raise TableError(path, where,
                                 f"'{key}' example: {name} = ... goes with as = \"{form}\", and only there")


def parse_rules(data: Mapping[str, Any], paths: str | Mapping[str, str]) -> Catalog:
    """Validate and compile the catalog's sections (:func:`catalog_tables`). Raises
    :class:`TableError` naming the entry and the file of its section: ``paths`` maps each section
    to its file (:data:`SECTION_PATHS`); a plain path is every section's."""
    def at(section: str) -> str:
        if isinstance(paths, str):
            return paths
        return paths.get(section) or ", ".join(sorted(set(paths.values())))

    check_keys(data, _TOP_KEYS, at("file"), "file")
    swizzles = tuple(layout("smem_desc").field("swizzle").codes(None))

    # Table 52 and the element sizes: tables/smem_atoms.toml (one copy, beside Table 53)
    table52 = atoms()
    type_bits = {name: bits for name, (bits, _) in table52.elements.items()}
    major_swizzle = [{"bits": c.bits, "major": c.major, "swizzles": c.swizzles, "source": c.source}
                     for c in table52.combinations]

    path = at("transpose_b_8bit")
    t50 = {}
    for i, row in enumerate(_need(data, "transpose_b_8bit", path, "file")):
        where = f"transpose_b_8bit #{i + 1}"
        check_keys(row, {"cta_group", "n", "source"}, path, where)
        _need(row, "source", path, where)
        t50[int(_need(row, "cta_group", path, where))] = _int_range(_need(row, "n", path, where), path, where)

    path = at("scale_vec")
    scale_vec = []
    for i, row in enumerate(_need(data, "scale_vec", path, "file")):
        where = f"scale_vec #{i + 1}"
        keys = {"name", "kinds", "k", "scale_factors", "scale_types", "sf_ids", "source"}
        check_keys(row, keys, path, where)
        for key in keys:
            _need(row, key, path, where)
        if row["name"] not in SCALE_VECS:
            raise TableError(path, where, f"unknown scale vector size {row['name']!r}; known: {', '.join(SCALE_VECS)}")
        if any(k not in KINDS for k in row["kinds"]):
            raise TableError(path, where, f"unknown kind in {row['kinds']}")
        scale_vec.append(dict(row, kinds=tuple(row["kinds"]), k=tuple(row["k"]), scale_types=tuple(row["scale_types"]),
                              sf_ids=tuple(row["sf_ids"])))

    singles = {}
    for name, keys in (("a_tmem", {"a_major", "source"}),
                       ("absolute_lbo", {"swizzles", "major", "base_offset", "source"}),
                       ("zcm", {"ms", "max_column_shift", "source"}), ("targets", {"names", "aliases", "source"}),
                       ("cp_shapes", set(data.get("cp_shapes", {})) | {"source"})):
        table = _need(data, name, at(name), "file")
        check_keys(table, keys, at(name), name)
        for key in keys:
            _need(table, key, at(name), name)
        singles[name] = table
    bad = [sw for sw in singles["absolute_lbo"]["swizzles"] if sw not in swizzles]
    if bad:
        raise TableError(at("absolute_lbo"), "absolute_lbo",
                         f"unknown swizzle mode(s) {bad}; known: {', '.join(swizzles)}")
    zcm = dict(singles["zcm"], max_column_shift={int(m): v for m, v in singles["zcm"]["max_column_shift"].items()})
    cp_shapes = {shape: tuple(multicast) for shape, multicast in singles["cp_shapes"].items() if shape != "source"}
    targets = tuple(singles["targets"]["names"])
    for t in (*targets, *singles["targets"]["aliases"].values()):
        if not (t.startswith("sm_") and t[3:-1].isdigit() and t[-1] in "af"):
            raise TableError(at("targets"), "targets", f"target {t!r} is not sm_<NNN>a or sm_<NNN>f")

    path = at("requires")
    requires = {}
    for i, row in enumerate(_need(data, "requires", path, "file")):
        where = f"requires #{i + 1}"
        check_keys(row, {"feature", "targets", "source"}, path, where)
        for key in ("feature", "targets", "source"):
            _need(row, key, path, where)
        unknown = [t for t in row["targets"] if t not in targets]
        if unknown:
            raise TableError(path, where, f"unknown target(s) {unknown}; known: {', '.join(targets)}")
        requires[row["feature"]] = tuple(row["targets"])

    path = at("ptx_version")
    ptx_versions: dict[str, tuple[tuple[int, int], str]] = {}
    for i, row in enumerate(_need(data, "ptx_version", path, "file")):
        where = f"ptx_version #{i + 1}"
        check_keys(row, {"feature", "version", "source"}, path, where)
        for key in ("feature", "version", "source"):
            _need(row, key, path, where)
        major, _, minor = str(row["version"]).partition(".")
        if not (major.isdigit() and minor.isdigit()) or row["feature"] in ptx_versions:
            raise TableError(path, where, f"version must be MAJOR.MINOR and each feature listed once: {row!r}")
        ptx_versions[row["feature"]] = ((int(major), int(minor)), row["source"])

    path = at("context")
    names: dict[str, ContextName] = {}
    for i, row in enumerate(_need(data, "context", path, "file")):
        where = f"context #{i + 1}"
        check_keys(row, _CONTEXT_KEYS, path, where)
        for key in ("name", "meaning", "value", "words", "help", "source"):
            _need(row, key, path, where)
        if row["value"] not in CONTEXT_VALUES:
            raise TableError(path, where, f"value must be one of {', '.join(CONTEXT_VALUES)}")
        bad = [w for w in row["words"] if w not in _WORDS]
        if bad:
            raise TableError(path, where, f"unknown word(s) {bad}; known: {', '.join(_WORDS)}")
        if row["name"] in names:
            raise TableError(path, where, "duplicate context name")
        _check_examples({k: v for k, v in row.items() if k in ("legal", "illegal")}, path, where)
        names[row["name"]] = ContextName(row["name"], row["meaning"], row["value"], tuple(row["words"]), row["help"],
                                         row.get("metavar", ""), row["source"], row.get("legal"), row.get("illegal"))

    usage = _code_table(data, "usage", _USAGE_KEYS, USAGE_APPLIES, at("usage"), {})
    tiles = _code_table(data, "layout", _LAYOUT_KEYS, _LAYOUT_APPLIES, at("layout"), usage)

    path = at("rule")
    rules: dict[str, Rule] = {}
    for i, row in enumerate(_need(data, "rule", path, "file")):
        where = f"rule #{i + 1}"
        check_keys(row, _RULE_KEYS, path, where)
        for key in ("code", "severity", "applies", "fields", "rule", "source", "legal", "illegal"):
            _need(row, key, path, where)
        where = f"rule {row['code']}"
        if row["code"] in rules or row["code"] in usage or row["code"] in tiles:
            raise TableError(path, where, "duplicate code")
        if row["severity"] not in SEVERITIES:
            raise TableError(path, where, f"severity must be one of {', '.join(SEVERITIES)}")
        if row["applies"] not in APPLIES:
            raise TableError(path, where, f"applies must be one of {', '.join(APPLIES)}")
        for key in ("needs", "uses"):
            unknown = [c for c in row.get(key, []) if c not in names]
            if unknown:
                raise TableError(path, where, f"unknown context {unknown} in '{key}'; known: {', '.join(names)}")
        for key in ("legal", "illegal"):
            if row[key].get("as") not in APPLIES:
                raise TableError(path, where, f"'{key}' example needs as = one of {', '.join(APPLIES)}")
            if (row[key]["as"] == "ptx") != isinstance(row[key].get("ptx"), str):
                raise TableError(path, where, f"'{key}' example: a PTX snippet (ptx = \"...\") goes with "
                                              "as = \"ptx\", and only there")
        rules[row["code"]] = Rule(row["code"], row["severity"], row["applies"], tuple(row["fields"]),
                                  tuple(row.get("needs", ())), tuple(row.get("uses", ())), row["rule"], row["source"],
                                  row["legal"], row["illegal"], tuple(row.get("kinds", ())),
                                  declared={k: row[k] for k in ("let", "operands", "check", "on") if k in row} or None)
        if row["applies"] != "ptx" and "check" not in row:
            raise TableError(path, where, "a rule of a word or instruction declares its checks ([[rule.check]])")
        if row["applies"] == "ptx" and ("check" in row) != (row.get("on") in PTX_FACTS):
            raise TableError(path, where, f"a ptx rule with checks names the facts they read "
                                          f"(on = one of {', '.join(PTX_FACTS)}); the others are the scanner's")
        if any(k not in KINDS for k in rules[row["code"]].kinds):
            raise TableError(path, where, f"unknown kind in {row['kinds']}; known: {', '.join(KINDS)}")

    return Catalog(rules, Constraints(
        type_bits=type_bits,
        major_swizzle=tuple(major_swizzle),
        transpose_b_8bit=t50,
        scale_vec=tuple(scale_vec),
        a_tmem=singles["a_tmem"],
        absolute_lbo=singles["absolute_lbo"],
        zcm=zcm,
        targets=targets,
        aliases=dict(singles["targets"]["aliases"]),
        ptx_versions=ptx_versions,
        cp_shapes=cp_shapes,
        requires=requires,
    ), names, usage, tiles, {k: dict(v) for k, v in data.get("derive", {}).items()})

