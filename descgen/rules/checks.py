"""The checks: each catalog rule of ``tables/rules.toml`` compiled from its declaration, and the runner.

A word is checked in two layers. Its fields are checked one by one by the generic engine (codes
generated from the layout tables). Then the rules of ``tables/rules.toml`` run: rules within one
word (Table 39 shapes, Table 52 type size x major-ness), rules that need the instruction's context
(``cta_group``, ``.ws``, ``.sp``, the scale vector size, A in tensor memory, the target) and the
instruction rules that tie the instruction descriptor to the shared memory descriptors
(``applies = "mma"``). Each rule's checks are declared once, in the rule language
(:mod:`descgen.rules.language`: ``[[rule.check]]``), over the tables of
:mod:`descgen.rules.tables`; this module compiles them to Python on first use (the C++ header
compiles the same declarations). A rule whose context is not given is listed as not checked,
never guessed; a rule that finds no table row for the combination it is asked about reports
that, never passes.
"""

from __future__ import annotations

import functools
import itertools
import operator
from typing import Any, Callable, Iterable, Mapping

from ..model.catalog import Constraints, Rule, catalog, constraints, derived
from ..model.context import context, no_context
from ..model.engine import Word, plan
from ..core.errors import EncodeError, Finding
from ..model.facts import kind_facts, mma_k
from ..core.memo import Memo
from ..model.report import NotChecked
from .language import RuleChecks, compile_python, parse_checks, reads
from .tables import TABLES, text_functions

__all__ = ["Facts", "implemented", "rule_impl", "run_rules", "enforce", "idesc_findings", "smem_findings",
           "zcm_findings", "taddr_findings", "alloc_findings", "mma_findings", "partial", "declared", "RunTimeValue",
           "smem_encode_findings", "zcm_encode_findings",
           "idesc_word_findings", "idesc_reads", "mma_reads", "wgmma_findings", "python_namespace"]

#: What a rule reads: the word's logical values, the context, and derived facts.
Facts = dict[str, Any]
_Facts = Facts
_Impl = Callable[[Rule, Facts, Constraints], Iterable[Finding]]


@functools.cache
def declared(code: str) -> RuleChecks:
    """Catalog rule ``code``'s checks, parsed (with its word's ``[derive]`` names).

    Raises:
        KeyError: ``code`` is not a rule of a word or an instruction (a ``ptx`` rule is the scanner's).
        TableError: its declaration is outside the rule language."""
    rule = catalog()[code]
    if rule.declared is None:
        raise KeyError(code)
    return parse_checks({"code": code, "applies": rule.applies, **rule.declared}, derived().get(rule.applies, {}))


def _known(read: Callable[[], Any]) -> Any:
    """The rule language's ``known(x)``: ``x``, or None where it is known at run time only."""
    try:
        return read()
    except RunTimeValue:
        return None


@functools.cache
def python_namespace() -> dict[str, Any]:
    """What the compiled checks call: the tables, the language's functions and the text helpers
    (the free names of :func:`descgen.rules.language.python_source`)."""
    return {"T": {name: t.fn for name, t in TABLES.items()}, "_f_min": min, "_f_max": max,
            "_f_ceil_div": lambda a, b: -(-a // b), "_known": _known, **text_functions()}


@functools.cache
def rule_impl(code: str) -> _Impl:
    """The function that checks catalog rule ``code``: ``fn(rule, facts, constraints)`` -> findings,
    compiled from its declaration (:func:`declared`)."""
    return compile_python(declared(code), python_namespace())


def implemented() -> frozenset[str]:
    """The codes of every rule of a word or an instruction, whose checks run here (a test checks
    this equals the catalog's non-``ptx`` rules; the scanner runs the ``ptx`` rules declared over
    an instruction's qualifiers itself, descgen.ptx.syntax_rules)."""
    return frozenset(code for code, rule in catalog().items() if rule.declared is not None and rule.applies != "ptx")


@functools.cache
def _plan(applies: str, given: frozenset[str], kind: str | None,
          layout: str | None = None) -> tuple[tuple[tuple[Rule, _Impl], ...], tuple[NotChecked, ...]]:
    """For one kind of word, the context names given and the MMA kind: the rules that can run
    (catalog order) and those that cannot (their context is missing). A rule that runs is checked:
    one whose narrowing context (``uses``) is missing is checked against every case of it, and is
    not also listed as not checked. A rule of other kinds (``kinds``) is neither. ``layout``: a
    second family of the word (the wgmma shared memory descriptor for ``smem``): only the rules
    whose fields that layout has (or are context names) concern it; the others are neither."""
    runnable, skipped = [], []
    names = None if layout is None else {f.name for f in plan(layout).value_fields} | set(no_context())
    for rule in catalog().values():
        if rule.applies != applies or (names is not None and not names.issuperset(rule.fields)):
            continue
        missing = tuple(n for n in rule.needs if n not in given)
        if missing:
            if not rule.kinds or kind in rule.kinds:
                skipped.append(NotChecked(rule.code, missing, rule.rule, rule.source))
            continue
        # (context it only ``uses`` and was not given: every case allowed)
        runnable.append((rule, rule_impl(rule.code)))
    return tuple(runnable), tuple(skipped)


class RunTimeValue(Exception):
    """Raised inside a rule that reads a value known at run time only (see :func:`partial`)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


class _Partial(dict):  # type: ignore[type-arg]
    """Facts some of whose values are known at run time only: reading one raises RunTimeValue."""

    __slots__ = ("unknown",)

    def __init__(self, data: Mapping[str, Any], unknown: Iterable[str]) -> None:
        super().__init__(data)
        self.unknown = frozenset(unknown)

    def __getitem__(self, key: str) -> Any:
        if key in self.unknown:
            raise RunTimeValue(key)
        return dict.__getitem__(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        if key in self.unknown:
            raise RunTimeValue(key)
        return dict.get(self, key, default)


def partial(values: Mapping[str, Any], unknown: Iterable[str]) -> Facts:
    """``values`` with the names ``unknown`` known at run time only (a partly known word's fields,
    :attr:`descgen.Decoded.unknown`): a rule that reads one is not checked; a rule whose result
    the known values decide runs as usual. With nothing unknown, ``values`` itself."""
    unknown = tuple(unknown)
    return _Partial(values, unknown) if unknown else dict(values)


def given_names(ctx: Mapping[str, Any]) -> frozenset[str]:
    """The names a normalized context gives (not None), remembered per context (bounded)."""
    key: tuple[tuple[str, ...], tuple[Any, ...]] | None
    try:
        key = (tuple(ctx), tuple(ctx.values()))
        hit = _GIVEN.get(key)
    except TypeError:  # (an unhashable value: not a normalized context, but still answered)
        key = hit = None
    if hit is None:
        hit = frozenset([name for name, value in ctx.items() if value is not None])
        if key is not None:
            _GIVEN.remember(key, hit)
    return hit


_GIVEN: Memo[frozenset[str]] = Memo("context names given", 1 << 12)


def run_rules(applies: str, facts: _Facts, ctx: Mapping[str, Any],
              layout: str | None = None) -> tuple[list[Finding], tuple[NotChecked, ...]]:
    """Every rule of one kind of word (``applies``) over ``facts``: the findings, and the rules whose
    context (``ctx``, normalized: None = not given) was missing, or which read a value known at run
    time only (facts made by :func:`partial`: reported with ``why="run-time"``). ``layout``: the
    word's family when it is not the default one (see :func:`_plan`)."""
    c = constraints()
    runnable, skipped = _plan(applies, given_names(ctx), facts.get("kind"), layout)
    found: list[Finding] = []
    late: list[NotChecked] = []
    for rule, fn in runnable:
        try:
            found.extend(fn(rule, facts, c))
        except RunTimeValue as unknown:
            late.append(NotChecked(rule.code, (unknown.name,), rule.rule, rule.source, "run-time"))
    return found, (*skipped, *late) if late else skipped


# --------------------------------------------------------------------------------------------
# Instruction descriptor.


def _idesc_facts(kind: str, values: Mapping[str, Any], ctx: Mapping[str, Any], unknown: Iterable[str] = ()) -> _Facts:
    """Values and context for the rules, plus the MMA's K (None for K = 96 with sparsity; known at
    run time only when the Sparsity or K bit is)."""
    unknown = tuple(unknown)
    if unknown and {"sparse", "k_dim"} & set(unknown):
        k = None
        unknown += ("k",)
    else:
        k96, sparse = values.get("k_dim") == "96", values["sparse"]
        k = None if k96 and sparse else mma_k(kind, sparse, k96)
    facts = {**ctx, **values, "kind": kind, "implied_dtype": kind_facts(kind).implied_dtype, "k": k}
    return partial(facts, unknown) if unknown else facts


def idesc_findings(kind: str, values: Mapping[str, Any], ctx: Mapping[str, Any],
                   unknown: Iterable[str] = ()) -> tuple[list[Finding], tuple[NotChecked, ...]]:
    """The catalog's idesc rules over logical values (decoded, or an encoder's arguments); the
    fields ``unknown`` are known at run time only."""
    return run_rules("idesc", _idesc_facts(kind, values, ctx, unknown), ctx)


@functools.cache
def idesc_reads() -> dict[str, tuple[str, ...]]:
    """What each idesc rule reads: the facts (values, context, ``kind``, ``k``, ``implied_dtype``)
    its findings are a function of (with the catalog and the tables), derived from its declaration
    (:func:`descgen.rules.language.reads`). tests/test_speed_paths.py runs every rule over random
    words and contexts with facts that record what is read."""
    return {code: tuple(sorted(reads(declared(code))[0]))
            for code, rule in catalog().items() if rule.applies == "idesc"}


#: Each idesc rule group's findings, per the group and the facts its rules read (:func:`_compiled`).
_IDESC_FOUND: Memo[tuple[tuple[int, tuple[Finding, ...]], ...]] = Memo("idesc rule groups' findings")
#: Families of facts that take many values together: the rules are remembered in groups, a rule in
#: the group of the first family it reads a fact of (the rest together), so that each group's key
#: holds few values and is found again: Table 39's shapes (M, N), the scale vector and scale factor
#: IDs, the element types. (One group per rule costs more lookups; one group for all of them finds
#: its key again rarely.)
_FACT_FAMILIES: tuple[frozenset[str], ...] = (
    frozenset(("m", "n")),
    frozenset(("scale_vec", "a_sf_id", "b_sf_id")),
    frozenset(("atype", "btype")),
)
#: A group: its rules (with their catalog places), the getter of what they read, and its id in
#: :data:`_IDESC_FOUND`'s keys.
_Group = tuple[tuple[tuple[int, Rule, _Impl], ...], Callable[[Mapping[str, Any]], Any], int]
_COMPILED: Memo[tuple[tuple[_Group, ...], tuple[NotChecked, ...]]] = Memo("idesc rule groups", 1 << 10)


def _compiled(given: frozenset[str], kind: str) -> tuple[tuple[_Group, ...], tuple[NotChecked, ...]]:
    """:func:`_plan` for the idesc rules of a decoded word of ``kind``, in groups (a group per
    family of facts, :data:`_FACT_FAMILIES`), each with a getter of the facts its rules read
    (:func:`idesc_reads`; a name the kind's layout lacks is absent from every such word's facts,
    so it is left out of the key) and its memo."""
    runnable, skipped = _plan("idesc", given, kind)
    present = {f.name for f in kind_facts(kind).plan.value_fields} | set(no_context()) | {"kind", "k", "implied_dtype"}
    groups: list[_Group] = []

    def family(code: str) -> int:
        return next((i for i, names in enumerate(_FACT_FAMILIES) if names & set(idesc_reads()[code])),
                    len(_FACT_FAMILIES))

    for member in range(len(_FACT_FAMILIES) + 1):
        rules = tuple((i, rule, fn) for i, (rule, fn) in enumerate(runnable) if family(rule.code) == member)
        if not rules:
            continue
        names = sorted({n for _, rule, _ in rules for n in idesc_reads()[rule.code] if n in present})
        get: Callable[[Mapping[str, Any]], Any] = operator.itemgetter(*names) if names else (lambda v: None)
        groups.append((rules, get, next(_GROUP_IDS)))
    return _COMPILED.remember((given, kind), (tuple(groups), skipped))


_GROUP_IDS = itertools.count()


def idesc_word_findings(kind: str, values: Mapping[str, Any],
                        ctx: Mapping[str, Any]) -> tuple[list[Finding], tuple[NotChecked, ...]]:
    """:func:`idesc_findings` for the values of a word of ``kind`` decoded with every bit known
    (:meth:`descgen.model.engine.Plan.decode`) under a normalized context: the rules' findings
    remembered per the facts they read (:func:`idesc_reads`), so that a group of rules runs once
    per such key. A context value of another class than normalization gives (an int subclass as
    ``cta_group``) runs the rules as :func:`idesc_findings` does."""
    cg = ctx.get("cta_group")
    if cg is not None and cg.__class__ is not int:
        return idesc_findings(kind, values, ctx)
    facts = _idesc_facts(kind, values, ctx)
    given = given_names(ctx)
    groups, skipped = _COMPILED.get((given, kind)) or _compiled(given, kind)
    found: list[tuple[int, tuple[Finding, ...]]] = []
    for rules, get, group in groups:
        key = (group, get(facts))
        hit = _IDESC_FOUND.get(key)
        if hit is None:
            c = constraints()
            found_now = tuple((i, out) for i, rule, fn in rules if (out := tuple(fn(rule, facts, c))))
            hit = _IDESC_FOUND.remember(key, found_now)
        if hit:
            found += hit
    if not found:
        return [], skipped
    found.sort(key=operator.itemgetter(0))  # catalog order, as run_rules gives them
    return [f for _, out in found for f in out], skipped


# --------------------------------------------------------------------------------------------
# Shared memory descriptor.


#: The shared memory descriptor's default family (tcgen05, Table 40); a second family's layout
#: (``wgmma_smem_desc``) runs the smem rules whose fields it has (:func:`_plan`), its swizzle
#: members' pattern boundaries from its own table (rules read ``layout`` from the facts).
_SMEM = "smem_desc"


def smem_findings(values: Mapping[str, Any], ctx: Mapping[str, Any], unknown: Iterable[str] = (),
                  layout: str = _SMEM) -> tuple[list[Finding], tuple[NotChecked, ...]]:
    """The catalog's smem rules over logical values (``unknown``: fields known at run time only)
    under a normalized context; for a fully known word, skipped when its rule key (what the rules
    read, :func:`_smem_key`) was found clean before. ``layout``: the descriptor's family
    (``smem_desc``: tcgen05, Table 40; ``wgmma_smem_desc``: wgmma, §9.7.15.5.1.2.2)."""
    unknown = tuple(unknown)
    key = None if unknown or ctx.get("smem_size") is not None else \
        _smem_key(values, ctx.get("arch"), ctx.get("pattern_start"), layout)  # (smem_size reads the whole address)
    return _keyed_rules("smem", key, values, unknown, ctx, layout)


def _keyed_rules(applies: str, key: tuple[Any, ...] | None, values: Mapping[str, Any], unknown: tuple[str, ...],
                 ctx: Mapping[str, Any], layout: str | None = None) -> tuple[list[Finding], tuple[NotChecked, ...]]:
    """:func:`run_rules` over ``values`` and the normalized context (``unknown``: see
    :func:`partial`), skipped for a rule key found clean before (:func:`_is_clean`); ``layout``:
    a second family of the word (:func:`_plan`)."""
    family = None if layout in (None, _SMEM) else layout
    if _is_clean(applies, key):
        return [], _plan(applies, given_names(ctx), None, family)[1]
    facts = {**values, **ctx, "layout": family} if family else {**values, **ctx}
    found, skipped = run_rules(applies, partial(facts, unknown), ctx, family)
    if not found:
        _mark_clean(applies, key)
    return found, skipped


#: Rule keys whose rules found nothing, per word (:func:`_is_clean`).
_CLEAN: dict[str, Memo[bool]] = {"smem": Memo("smem rule keys found clean"), "zcm": Memo("zcm rule keys found clean")}


def _is_clean(word: str, key: tuple[Any, ...] | None) -> bool:
    """Whether the rules of ``word`` ran before for a value with this rule key and found nothing.
    A key is what the word's rules read, reduced to what decides whether they find anything (each
    ``_*_key`` says why it is enough; tests/test_speed_paths.py walks the fields against the
    rules), with each context value as given and its class where equal values of two classes
    could part (``True == 1`` must not find 1's entry): an encoder's raw context and a validator's
    normalized one share the set without meeting by accident. None (no key) or an unhashable key:
    never clean."""
    try:
        return key is not None and key in _CLEAN[word]
    except TypeError:  # an unhashable context value: the context check names it
        return False


def _mark_clean(word: str, key: tuple[Any, ...] | None) -> None:
    """Remember that the rules of ``word`` found nothing for this rule key (see :func:`_is_clean`)."""
    if key is None:
        return
    try:
        _CLEAN[word].remember(key, True)
    except TypeError:  # (unhashable: never looked up either)
        pass


def _smem_key(values: Mapping[str, Any], arch: Any, pattern_start: Any, layout: str = _SMEM) -> tuple[Any, ...] | None:
    """The smem rules read the swizzle, the base offset and the LBO mode (the wgmma family has
    none); the target (a name: only a string equals one, so its class need not be in the key); the
    start address only as ``(start % boundary) >> 7`` (boundaries 256, 512, 1024: bits 7-9); the
    pattern start only as ``ps % boundary`` and ``(ps >> 7) & 7`` (bits 0-9); and the family."""
    key = (values["swizzle"], values["base_offset"], values.get("lbo_mode"), (values["start_address"] >> 7) & 7, arch,
           layout)
    if pattern_start is None:
        return key
    if pattern_start.__class__ is not int or pattern_start < 0:
        return None
    return (*key, pattern_start & 1023)


def smem_encode_findings(values: Mapping[str, Any], arch: Any = None, pattern_start: Any = None,
                         layout: str = _SMEM) -> list[Finding]:
    """:func:`smem_findings` for an encoder's field-checked values and its context arguments
    (normalized here; a bad one raises :class:`descgen.UsageError`), the rules run once per key."""
    key = _smem_key(values, arch, pattern_start, layout)
    try:  # _is_clean("smem", key), inlined: one call less on the encoder's hot path (bench.py: encode_smem)
        if key in _CLEAN["smem"]:
            return []
    except TypeError:
        pass
    found = smem_findings(values, context(arch=arch, pattern_start=pattern_start), (), layout)[0]
    if not found:
        _mark_clean("smem", key)
    return found


# --------------------------------------------------------------------------------------------
# Zero-column mask descriptor.


def zcm_findings(values: Mapping[str, Any], ctx: Mapping[str, Any],
                 unknown: Iterable[str] = ()) -> tuple[list[Finding], tuple[NotChecked, ...]]:
    """The catalog's zcm rules over logical values (``unknown``: fields known at run time only)
    under a normalized context; for a fully known word, skipped when its rule key
    (:func:`_zcm_key`) was found clean before."""
    unknown = tuple(unknown)
    key = None if unknown else _zcm_key(values, ctx.get("m"), ctx.get("n"), ctx.get("ws"))
    return _keyed_rules("zcm", key, values, unknown, ctx)


def _zcm_key(values: Mapping[str, Any], m: Any, n: Any, ws: Any) -> tuple[Any, ...]:
    """The zcm rules read ``.ws``, M (and N is checked as context), the column shift, and whether
    the start count and first span of sub-masks 1-3 are 0 (sub-mask 0 is used at every M)."""
    v = values
    return (m, m.__class__, n, n.__class__, ws, ws.__class__, v["column_shift"],
            not v["start_count_1"], not v["start_count_2"], not v["start_count_3"],
            not v["first_span_1"], not v["first_span_2"], not v["first_span_3"])


def zcm_encode_findings(values: Mapping[str, Any], m: Any = None, n: Any = None, ws: Any = None) -> list[Finding]:
    """:func:`zcm_findings` for an encoder's field-checked values and its context arguments
    (normalized here; a bad one raises :class:`descgen.UsageError`), the rules run once per key."""
    key = _zcm_key(values, m, n, ws)
    if _is_clean("zcm", key):
        return []
    found = zcm_findings(values, context(m=m, n=n, ws=ws))[0]
    if not found:
        _mark_clean("zcm", key)
    return found


# --------------------------------------------------------------------------------------------
# One instruction: the rules that tie the words together.


def enforce(word: Word, found: Iterable[Finding], check: bool, where: str) -> Word:
    """What an encoder returns once the rules have run: raise :class:`EncodeError` on an error
    finding (unless ``check`` is False); else the word carrying its field findings and ``found``
    (errors with ``check=False``, warnings, notes)."""
    found = [*word.findings, *found]
    if check:
        errors = [f for f in found if f.severity == "error"]
        if errors:
            raise EncodeError(errors, where)
    return Word(word, found) if found else word


@functools.cache
def mma_reads() -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """What the instruction rules read, per operand (``a_desc``, ``b_desc``): of the idesc's values
    (that operand's type and major-ness, M or N, the kind...) and of its smem descriptor's values;
    an operand's findings are a function of them (with the catalog and the tables), derived from
    the rules' declarations. tests/test_speed_paths.py runs the rules with facts that record what
    is read."""
    out = {}
    for op in "ab":
        attrs = {a for code, rule in catalog().items() if rule.applies == "mma" for a in reads(declared(code), op)[1]}
        out[f"{op}_desc"] = (tuple(sorted(f for w, f in attrs if w == "idesc")),
                             tuple(sorted(f for w, f in attrs if w == f"{op}_desc")))
    return out


#: An operand's findings under the instruction rules, and the rules not checked, per key
#: (:func:`_operand_key`).
_MMA_MEMO: Memo[tuple[tuple[Finding, ...], tuple[NotChecked, ...]]] = Memo("instruction rules per operand")


def _operand_key(role: str, facts: Facts, ctx: Mapping[str, Any]) -> tuple[Any, ...]:
    """What the instruction rules read of operand ``role`` (:func:`mma_reads`) and the names the
    context gives."""
    of_idesc, of_desc = mma_reads()[role]
    idesc, desc = facts["idesc"], facts[role]
    return (given_names(ctx), role, *[idesc.get(name) for name in of_idesc], *[desc.get(name) for name in of_desc])


@functools.cache
def _catalog_order() -> dict[str, int]:
    """Each rule's place in the catalog (the order run_rules reports in)."""
    return {code: i for i, code in enumerate(catalog())}


def mma_findings(facts: Facts, ctx: Mapping[str, Any]) -> tuple[list[Finding], tuple[NotChecked, ...]]:
    """The catalog's instruction rules (``applies = "mma"``) over ``facts``: ``{"idesc": values
    with "kind", "a_desc": values, "b_desc": values}`` (an operand that is not there is left out).
    The rules are per operand. With every word fully known, each operand's findings (their field
    names it: ``a_desc.swizzle``) are remembered per what the rules read of it
    (:func:`_operand_key`): when both operands' keys are found, the rules do not run, and the
    findings come back in catalog order (A's before B's for one rule), as the rules give them.
    When an operand is partly known (:func:`partial`) each operand is checked on its own, so that
    an unknown field of one does not hide a finding of the other."""
    operands = [role for role in ("a_desc", "b_desc") if role in facts]
    if operands and not any(isinstance(facts[role], _Partial) for role in ("idesc", *operands)):
        keys = [_operand_key(role, facts, ctx) for role in operands]
        hits = [_MMA_MEMO.get(key) for key in keys]
        if None in hits:
            ran = run_rules("mma", facts, ctx)
            mine: dict[str, list[Finding]] = {role: [] for role in operands}
            for f in ran[0]:
                role = f.field.split(".", 1)[0]
                if role not in mine:  # (a finding that names no operand: nothing to remember)
                    return ran
                mine[role].append(f)
            for role, key in zip(operands, keys):
                _MMA_MEMO.remember(key, (tuple(mine[role]), ran[1]))
            return ran
        found: list[Finding] = []
        skipped: tuple[NotChecked, ...] = ()
        for hit in hits:
            assert hit is not None
            found += hit[0]
            skipped = hit[1]
        if len(found) > 1:
            order = _catalog_order()
            found.sort(key=lambda f: order[f.code])  # (stable: A's finding before B's)
        return found, skipped
    return _per_operand("mma", facts, ctx)


def _per_operand(applies: str, facts: Facts, ctx: Mapping[str, Any]) -> tuple[list[Finding], tuple[NotChecked, ...]]:
    """The instruction rules ``applies`` over ``facts``; when both operands' descriptors are there
    and one is partly known (:func:`partial`), the rules run once per operand, so that an unknown
    field of one does not hide a finding of the other (a finding about the instruction alone,
    found in both runs, is kept once). A rule not checked names the operand's field it missed."""
    operands = [role for role in ("a_desc", "b_desc") if role in facts]
    if len(operands) < 2 or not any(isinstance(facts[role], _Partial) for role in operands):
        return run_rules(applies, facts, ctx)
    more_found: list[Finding] = []
    late: list[NotChecked] = []
    for role in operands:
        more, nc = run_rules(applies, {**{k: v for k, v in facts.items() if k not in operands}, role: facts[role]}, ctx)
        more_found += [f for f in more if f not in more_found]
        late += [n if n.why == "context" else NotChecked(n.code, (f"{role}.{n.missing[0]}",), n.rule, n.source, n.why)
                 for n in nc if n not in late]
    return more_found, tuple(late)


# --------------------------------------------------------------------------------------------
# Hopper wgmma.mma_async (§9.7.15): the instruction's shape, types and immediates against
# tables/wgmma_shapes.toml, and its descriptors against the types. Facts: the instruction's
# values (``atype``, ``btype``, ``dtype``, ``m``, ``n``, ``k``, ``sp``, ``trans_a``, ``trans_b``,
# ``scale_a``, ``scale_b``, ``scale_d``, ``sp_sel``, ``satfinite``; None = operand not written)
# and, when read through descriptors, ``a_desc`` / ``b_desc`` (the words' values).


def wgmma_findings(facts: Facts) -> tuple[list[Finding], tuple[NotChecked, ...]]:
    """The catalog's wgmma rules (``applies = "wgmma"``) over ``facts``: the instruction's values
    and, for the operands read through descriptors, ``a_desc`` / ``b_desc`` (their values, made by
    :func:`partial` when partly known). The rules take no context."""
    return _per_operand("wgmma", facts, no_context())


# --------------------------------------------------------------------------------------------
# Tensor memory address.


def alloc_findings(ncols: int) -> tuple[Finding, ...]:
    """``TADDR-ALLOC-COLUMNS`` alone, for a ``tcgen05.alloc`` column count ``ncols``."""
    code = "TADDR-ALLOC-COLUMNS"
    return tuple(rule_impl(code)(catalog()[code], {"alloc_columns": ncols}, constraints()))


def taddr_findings(values: dict[str, Any], ctx: dict[str, Any]) -> tuple[list[Finding], tuple[Any, ...]]:
    """The catalog's taddr rules over logical values (decoded, or an encoder's arguments)."""
    return run_rules("taddr", {**values, **ctx}, ctx)
