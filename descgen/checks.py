"""The checks: one function per catalog rule of ``tables/rules.toml``, and the runner.

A word is checked in two layers. Its fields are checked one by one by the generic engine (codes
generated from the layout tables). Then the rules of ``tables/rules.toml`` run, each a function
registered here under its catalog code: rules within one word (Table 39 shapes, Table 52 type
size x major-ness), rules that need the instruction's context (``cta_group``, ``.ws``, ``.sp``,
the scale vector size, A in tensor memory, the target) and the instruction rules that tie the
instruction descriptor to the shared memory descriptors (``applies = "mma"``). A rule whose
context is not given is listed as not checked, never guessed; a rule that finds no table row for
the combination it is asked about reports that, never passes.

What the rules read (Table 39, Tables 50-55, the target notes) is data in ``tables/``, through
:mod:`descgen.catalog` and :mod:`descgen.facts`.
"""

from __future__ import annotations

import functools
import operator
from typing import Any, Callable, Iterable, Mapping

from .catalog import SCALE_VECS, Constraints, Rule, catalog, constraints
from .context import context, no_context
from .engine import Word, plan
from .errors import EncodeError, Finding
from .facts import (alloc_sizes, chunk_bytes, describe_range, kind_facts, lane_warp, mma_k, off_pattern, pattern_boundary,
                    scale_rows, shape_case, skewed_stride, swizzle_period, swizzle_row,
                    shape_rows, shape_union, submask_counts, tmem_shape, warp_lanes)
from .loader import KINDS, atoms, shapes
from .report import NotChecked
from .wgmma_facts import WgmmaTypes, wgmma_table, wgmma_types

__all__ = ["Facts", "implemented", "rule_impl", "run_rules", "enforce", "idesc_findings", "smem_findings",
           "zcm_findings", "taddr_findings", "alloc_findings", "mma_findings", "describe_ints", "partial", "RunTimeValue",
           "smem_encode_findings", "zcm_encode_findings",
           "idesc_word_findings", "IDESC_READS", "wgmma_findings"]

#: What a rule reads: the word's logical values, the context, and derived facts.
Facts = dict[str, Any]
_Facts = Facts
_Impl = Callable[[Rule, Facts, Constraints], Iterable[Finding]]
_IMPLS: dict[str, _Impl] = {}
_MX = ("mxf8f6f4", "mxf4", "mxf4nvf4")


def _impl(code: str) -> Callable[[_Impl], _Impl]:
    def register(fn: _Impl) -> _Impl:
        _IMPLS[code] = fn
        return fn
    return register


def rule_impl(code: str) -> _Impl:
    """The function that checks catalog rule ``code``: ``fn(rule, facts, constraints)`` -> findings."""
    return _IMPLS[code]


def implemented() -> frozenset[str]:
    """Codes with an implementation (a test checks this equals the catalog's non-PTX rules)."""
    return frozenset(_IMPLS)


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
        runnable.append((rule, _IMPLS[rule.code]))  # (context it only ``uses`` and was not given: every case allowed)
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
            if len(_GIVEN) >= 1 << 12:
                _GIVEN.clear()
            _GIVEN[key] = hit
    return hit


_GIVEN: dict[tuple[tuple[str, ...], tuple[Any, ...]], frozenset[str]] = {}


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


def describe_ints(values: Iterable[int]) -> str:
    """``8..256 step 8``, or the values listed."""
    v = sorted(values)
    if len(v) > 3:
        step = v[1] - v[0]
        if all(b - a == step for a, b in zip(v, v[1:])):
            return f"{v[0]}..{v[-1]} step {step}"
    return ", ".join(map(str, v)) or "none"


# --------------------------------------------------------------------------------------------
# Instruction descriptor.


@_impl("IDESC-TYPES-TABLE39")
def _types(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    combos = kind_facts(v["kind"]).combos
    given = (v["atype"], v["btype"], v.get("dtype") or v["implied_dtype"], v.get("scale_type"))
    # Reported only when each type is itself legal for the kind (the field checks report the others).
    if given in combos or any(x not in {cmb[i] for cmb in combos} for i, x in enumerate(given)):
        return ()
    legal = sorted({f"{cmb[2]} <- {cmb[0]}" + (f" x {cmb[3]}" if cmb[3] else "") for cmb in combos if cmb[0] == cmb[1]})
    field = "scale_type" if v["kind"] in _MX else "dtype"
    text = f"atype {given[0]}, btype {given[1]}, dtype {given[2]}" + (f", scale type {given[3]}" if given[3] else "")
    return (rule.finding(field, given[2] if field == "dtype" else given[3], "; ".join(legal),
                         f"Table 39 does not list {text} for .kind::{v['kind']}"),)


def _shape_scope(v: _Facts) -> tuple[tuple[Any, ...], bool] | None:
    """The rows of Table 39 that M and N are checked against, and whether they are the context's
    own: the rows for the kind, context, sparsity and K; when the context has none (IDESC-K-VALUE
    or MMA-WS-* report that combination), the rows for the kind, sparsity and K in any context, so
    that an M or N no context allows is still reported. None when K itself is illegal
    (IDESC-K-VALUE reports that)."""
    if v["k"] is None:
        return None
    rows = shape_case(v["kind"], v["cta_group"], v["ws"], v["sparse"], v["k"])
    if rows is not None:
        return rows, True
    rows = shape_case(v["kind"], None, None, v["sparse"], v["k"])
    return None if rows is None else (rows, False)


def _where(v: _Facts, own: bool = True) -> str:
    parts = [f".kind::{v['kind']}", "sparse" if v["sparse"] else "dense", f"K = {v['k']}"]
    if own:
        parts.append(f"cta_group::{v['cta_group']}" if v["cta_group"] else "any cta_group")
        parts.append("any .ws" if v["ws"] is None else (".ws" if v["ws"] else "no .ws"))
    else:
        parts.append("any context")
    return ", ".join(parts)


def _row_context(r: Any) -> str:
    """A Table 39 row's context and M, as a finding's allowed values show it."""
    return f"cta_group::{r.cta_group}, {'.ws' if r.ws else 'no .ws'}, M = {describe_ints(r.m)}, N = {describe_ints(r.n)}"


@_impl("IDESC-K-VALUE")
def _k_value(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    if v.get("k_dim") == "96" and v["sparse"]:
        return (rule.finding("k_dim", "96", "64/128 (sparse K = 128)", "K = 96 with Sparsity = 1"),)
    if v["k"] is None or not shape_rows(v["kind"], v["cta_group"], v["ws"]):
        return ()  # no row for the context at all: MMA-WS-CTA-GROUP / MMA-WS-KIND report it
    if shape_case(v["kind"], v["cta_group"], v["ws"], v["sparse"], v["k"]) is not None:
        return ()
    rows = shape_case(v["kind"], None, None, v["sparse"], v["k"]) or ()
    field, value = ("k_dim", v["k_dim"]) if v.get("k_dim") is not None else ("sparse", v["sparse"])
    return (rule.finding(field, value, "; ".join(_row_context(r) for r in rows) or "none",
                         f"Table 39 has no row for {_where(v)}"),)


@_impl("IDESC-M-SHAPE")
def _m_shape(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    scope = _shape_scope(v)
    if scope is None:
        return ()
    rows, own = scope
    if any(v["m"] in r.m for r in rows) or v["m"] not in shape_union(v["kind"], "m"):
        return ()  # (an M no row has at all is the field check's IDESC-M-RANGE)
    return (rule.finding("m", v["m"], describe_ints({m for r in rows for m in r.m}), f"M = {v['m']} with {_where(v, own)}"),)


@_impl("IDESC-N-SHAPE")
def _n_shape(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    scope = _shape_scope(v)
    if scope is None:
        return ()
    rows = tuple(r for r in scope[0] if v["m"] in r.m)
    if not rows or any(v["n"] in r.n for r in rows) or v["n"] not in shape_union(v["kind"], "n"):
        return ()  # (no row with this M: IDESC-M-SHAPE; an N no row has at all: IDESC-N-RANGE)
    return (rule.finding("n", v["n"], describe_ints({n for r in rows for n in r.n}),
                         f"N = {v['n']} with M = {v['m']}, {_where(v, scope[1])}"),)


@_impl("IDESC-N-TRANSPOSE-8BIT")
def _n_t50(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    if v["b_major"] != "mn" or c.type_bits.get(v["btype"]) != 8:
        return ()
    scope = _shape_scope(v)
    rows = tuple(r for r in (scope[0] if scope else ()) if v["m"] in r.m and v["n"] in r.n)
    t50 = c.transpose_b_8bit  # a cta_group with no Table 50 row allows no N: reported, never passed
    if not rows or any(v["n"] in t50.get(r.cta_group, ()) for r in rows):
        return ()
    allowed = "; ".join(f"cta_group::{g}: {describe_ints(t50.get(g, ()))}" for g in sorted({r.cta_group for r in rows}))
    return (rule.finding("n", v["n"], allowed, f"N = {v['n']} with B {v['btype']} MN-major"),)


@_impl("IDESC-MAJOR-TYPE-SIZE")
def _major_type(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    out = []
    for op in "ab":
        t, major = v[f"{op}type"], v[f"{op}_major"]
        if major == "mn" and t in c.type_bits and not c.swizzles_for(c.type_bits[t], "mn"):
            legal = sorted({b for row in c.major_swizzle if row["major"] == "mn" for b in row["bits"]})
            out.append(rule.finding(f"{op}_major", major, "k" , f"{op.upper()} is {t} ({c.type_bits[t]}-bit); "
                                    f"MN-major needs {', '.join(map(str, legal))}-bit elements"))
    return out


@_impl("IDESC-A-MAJOR-TMEM")
def _a_tmem(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    want = c.a_tmem["a_major"]
    if v["a_tmem"] and v["a_major"] not in (want, None):
        return (rule.finding("a_major", v["a_major"], want, "A is read from tensor memory"),)
    return ()


@_impl("IDESC-SPARSITY-SELECTOR-DENSE")
def _selector_dense(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    if v.get("sparsity_selector") and not v["sparse"]:
        return (rule.finding("sparsity_selector", v["sparsity_selector"], "0 when dense", "Sparsity = 0"),)
    return ()


@_impl("IDESC-MAX-SHIFT-WS")
def _max_shift(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    if v.get("max_shift") and v["ws"] is False:
        return (rule.finding("max_shift", v["max_shift"], "0 without .ws", "the instruction is not .ws"),)
    return ()


@_impl("IDESC-SPARSE-SP")
def _sparse_sp(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    if v["sp"] != v["sparse"]:
        want = "true (tcgen05.mma.sp)" if v["sp"] else "false (not .sp)"
        return (rule.finding("sparse", v["sparse"], want, "the instruction is " + ("" if v["sp"] else "not ") + ".sp"),)
    return ()


@_impl("MMA-WS-CTA-GROUP")
def _ws_cta(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    if v["ws"] and v["cta_group"] == 2:
        return (rule.finding("cta_group", 2, "1 with .ws", "tcgen05.mma.ws.cta_group::2"),)
    return ()


@_impl("MMA-WS-KIND")
def _ws_kind(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    if v["ws"] and not shape_rows(v["kind"], None, True):
        kinds = sorted({r.kind for r in shapes().rows if r.ws}, key=KINDS.index)
        return (rule.finding("ws", True, f".ws kinds: {', '.join(kinds)}", f"tcgen05.mma.ws.kind::{v['kind']}"),)
    return ()


@functools.cache
def _scale_case(scale_vec: str, kind: str, k: int | None) -> tuple[tuple[Mapping[str, Any], ...], Mapping[str, Any] | None]:
    """Table 54 rows for the scale vector size and kind, and the one that matches K (or None)."""
    rows = scale_rows(kind, None, scale_vec)
    return rows, next((r for r in rows if k in r["k"]), None)


@_impl("IDESC-SCALE-VEC-KIND")
def _sv_kind(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    # (reads no field of the word: checked even when the word is known at run time only)
    if any(r["name"] == v["scale_vec"] and v["kind"] in r["kinds"] for r in c.scale_vec):
        return ()
    names = [n for n in SCALE_VECS if scale_rows(v["kind"], None, n)]
    return (rule.finding("scale_vec", v["scale_vec"], ", ".join(names) or "none (not a block-scaled kind)",
                         f".kind::{v['kind']} with {v['scale_vec']}"),)


@_impl("IDESC-SCALE-VEC-K")
def _sv_k(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    rows, row = _scale_case(v["scale_vec"], v["kind"], v["k"])
    if not rows or row is not None:
        return ()
    k = v["k"]
    legal = [n for n in SCALE_VECS if scale_rows(v["kind"], k, n)]
    return (rule.finding("scale_vec", v["scale_vec"], ", ".join(legal), f"K = {k} with {v['scale_vec']}"),)


@_impl("IDESC-SCALE-VEC-TYPE")
def _sv_type(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    _, row = _scale_case(v["scale_vec"], v["kind"], v["k"])
    st = v.get("scale_type")
    if row is None or st is None or st in row["scale_types"]:
        return ()
    return (rule.finding("scale_type", st, ", ".join(row["scale_types"]), f"{v['scale_vec']} with scale type {st}"),)


def _sf_id(op: str) -> _Impl:
    def check(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
        kind, k, sv, sf = v["kind"], v["k"], v["scale_vec"], v.get(f"{op}_sf_id")
        if sf is None or k is None or not scale_rows(kind):
            return ()  # no scale factor ID field; an illegal K is IDESC-K-VALUE's
        rows = scale_rows(kind, k, sv) if sv is not None else ()
        where = f"{sv} with K = {k}"
        if not rows:  # no scale vector size given, or one the kind and K lack (IDESC-SCALE-VEC-KIND/-K)
            rows, where = scale_rows(kind, k), f".kind::{kind}, K = {k}, any scale vector size"
        allowed = sorted({i for r in rows for i in r["sf_ids"]})
        if sf in allowed:
            return ()
        return (rule.finding(f"{op}_sf_id", sf, ", ".join(map(str, allowed)) or "none (Table 54 has no row for the kind and K)",
                             where),)
    return check


_impl("IDESC-A-SF-ID-SCALE-VEC")(_sf_id("a"))
_impl("IDESC-B-SF-ID-SCALE-VEC")(_sf_id("b"))


def _arch(feature: str, applies: Callable[[_Facts], bool]) -> _Impl:
    """A Target ISA note: when ``applies``, the target must meet ``feature``'s [[requires]] row."""
    def check(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
        if not applies(v) or c.supports(v["arch"], feature):
            return ()
        return (rule.finding("arch", v["arch"], ", ".join(c.requires[feature]), f"the target is {v['arch']}"),)
    return check


_impl("IDESC-KIND-ARCH")(_arch("kind_i8", lambda v: v["kind"] == "i8"))
# (the instruction's .sp, when given, says whether the MMA is sparse: the word is then not read)
_impl("IDESC-SPARSE-ARCH")(_arch("sparse_mxf4", lambda v: v["kind"] in ("mxf4", "mxf4nvf4")
                                 and (v["sp"] if v["sp"] is not None else v["sparse"])))
_impl("IDESC-K96-ARCH")(_arch("k96", lambda v: v.get("k_dim") == "96"))
_scale_vec_nx = _arch("scale_vec_nx", lambda v: v["scale_vec"] in ("1X", "2X", "4X"))
_scale_vec_block = _arch("scale_vec_block", lambda v: v["scale_vec"] in ("block16", "block32"))
_impl("IDESC-SCALE-VEC-ARCH")(lambda rule, v, c: (*_scale_vec_nx(rule, v, c), *_scale_vec_block(rule, v, c)))

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


#: What each idesc rule reads: the facts (values, context, ``kind``, ``k``, ``implied_dtype``) its
#: findings are a function of (with the catalog and the tables). tests/test_speed_paths.py runs
#: every rule over random words and contexts with facts that record what is read.
IDESC_READS: dict[str, tuple[str, ...]] = {
    "IDESC-TYPES-TABLE39": ("kind", "atype", "btype", "dtype", "implied_dtype", "scale_type"),
    "IDESC-K-VALUE": ("kind", "k_dim", "sparse", "k", "cta_group", "ws"),
    "IDESC-M-SHAPE": ("kind", "k", "cta_group", "ws", "sparse", "m"),
    "IDESC-N-SHAPE": ("kind", "k", "cta_group", "ws", "sparse", "m", "n"),
    "IDESC-N-TRANSPOSE-8BIT": ("kind", "b_major", "btype", "k", "cta_group", "ws", "sparse", "m", "n"),
    "IDESC-MAJOR-TYPE-SIZE": ("atype", "btype", "a_major", "b_major"),
    "IDESC-A-MAJOR-TMEM": ("a_tmem", "a_major"),
    "IDESC-SPARSITY-SELECTOR-DENSE": ("sparsity_selector", "sparse"),
    "IDESC-MAX-SHIFT-WS": ("max_shift", "ws"),
    "IDESC-SPARSE-SP": ("sp", "sparse"),
    "MMA-WS-CTA-GROUP": ("ws", "cta_group"),
    "MMA-WS-KIND": ("ws", "kind"),
    "IDESC-SCALE-VEC-KIND": ("scale_vec", "kind"),
    "IDESC-SCALE-VEC-K": ("scale_vec", "kind", "k"),
    "IDESC-SCALE-VEC-TYPE": ("scale_vec", "kind", "k", "scale_type"),
    "IDESC-A-SF-ID-SCALE-VEC": ("kind", "k", "scale_vec", "a_sf_id"),
    "IDESC-B-SF-ID-SCALE-VEC": ("kind", "k", "scale_vec", "b_sf_id"),
    "IDESC-KIND-ARCH": ("kind", "arch"),
    "IDESC-SPARSE-ARCH": ("kind", "sp", "sparse", "arch"),
    "IDESC-K96-ARCH": ("k_dim", "arch"),
    "IDESC-SCALE-VEC-ARCH": ("scale_vec", "arch"),
}

#: Memo entries kept over every group of rules (each a tuple key and the group's findings): past
#: this many, every group's memo is emptied (bounded, whatever the contexts and kinds asked for).
_MEMO_LIMIT = 1 << 16
_MEMO_HELD = [0]
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
_Group = tuple[tuple[tuple[int, Rule, _Impl], ...], Callable[[Mapping[str, Any]], Any], dict[Any, tuple[tuple[int, tuple[Finding, ...]], ...]]]
_COMPILED: dict[tuple[frozenset[str], str], tuple[tuple[_Group, ...], tuple[NotChecked, ...]]] = {}


def _compiled(given: frozenset[str], kind: str) -> tuple[tuple[_Group, ...], tuple[NotChecked, ...]]:
    """:func:`_plan` for the idesc rules of a decoded word of ``kind``, in groups (a group per
    family of facts, :data:`_FACT_FAMILIES`), each with a getter of the facts its rules read
    (:data:`IDESC_READS`; a name the kind's layout lacks is absent from every such word's facts,
    so it is left out of the key) and its memo."""
    runnable, skipped = _plan("idesc", given, kind)
    present = {f.name for f in kind_facts(kind).plan.value_fields} | set(no_context()) | {"kind", "k", "implied_dtype"}
    groups: list[_Group] = []

    def family(code: str) -> int:
        return next((i for i, names in enumerate(_FACT_FAMILIES) if names & set(IDESC_READS[code])), len(_FACT_FAMILIES))

    for member in range(len(_FACT_FAMILIES) + 1):
        rules = tuple((i, rule, fn) for i, (rule, fn) in enumerate(runnable) if family(rule.code) == member)
        if not rules:
            continue
        names = sorted({n for _, rule, _ in rules for n in IDESC_READS[rule.code] if n in present})
        get: Callable[[Mapping[str, Any]], Any] = operator.itemgetter(*names) if names else (lambda v: None)
        groups.append((rules, get, {}))
    hit = _COMPILED[given, kind] = (tuple(groups), skipped)
    return hit


def idesc_word_findings(kind: str, values: Mapping[str, Any], ctx: Mapping[str, Any]) -> tuple[list[Finding], tuple[NotChecked, ...]]:
    """:func:`idesc_findings` for the values of a word of ``kind`` decoded with every bit known
    (:meth:`descgen.engine.Plan.decode`) under a normalized context: the rules' findings
    remembered per the facts they read (:data:`IDESC_READS`), so that a group of rules runs once
    per such key. A context value of another class than normalization gives (an int subclass as
    ``cta_group``) runs the rules as :func:`idesc_findings` does."""
    cg = ctx.get("cta_group")
    if cg is not None and cg.__class__ is not int:
        return idesc_findings(kind, values, ctx)
    facts = _idesc_facts(kind, values, ctx)
    given = given_names(ctx)
    groups, skipped = _COMPILED.get((given, kind)) or _compiled(given, kind)
    found: list[tuple[int, tuple[Finding, ...]]] = []
    for rules, get, memo in groups:
        key = get(facts)
        hit = memo.get(key)
        if hit is None:
            c = constraints()
            hit = tuple((i, out) for i, rule, fn in rules if (out := tuple(fn(rule, facts, c))))
            if _MEMO_HELD[0] >= _MEMO_LIMIT:
                for entry in _COMPILED.values():
                    for group in entry[0]:
                        group[2].clear()
                _MEMO_HELD[0] = 0
            _MEMO_HELD[0] += 1
            memo[key] = hit
        if hit:
            found += hit
    if not found:
        return [], skipped
    found.sort(key=operator.itemgetter(0))  # catalog order, as run_rules gives them
    return [f for _, out in found for f in out], skipped


# --------------------------------------------------------------------------------------------
# Shared memory descriptor.


@_impl("SMEM-LBO-MODE-SWIZZLE")
def _abs_swizzle(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    allowed = c.absolute_lbo["swizzles"]
    if v["lbo_mode"] == "absolute" and v["swizzle"] is not None and v["swizzle"] not in allowed:
        return (rule.finding("swizzle", v["swizzle"], ", ".join(allowed), "lbo_mode = absolute"),)
    return ()


@_impl("SMEM-LBO-MODE-BASE-OFFSET")
def _abs_base(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    want = c.absolute_lbo["base_offset"]
    if v["lbo_mode"] == "absolute" and v["base_offset"] != want:
        return (rule.finding("base_offset", v["base_offset"], str(want), "lbo_mode = absolute"),)
    return ()


_impl("SMEM-LBO-MODE-ARCH")(_arch("lbo_absolute", lambda v: v["lbo_mode"] == "absolute"))


@_impl("SMEM-BASE-OFFSET-IGNORED")
def _base_ignored(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    if v["swizzle"] == "none" and v["base_offset"]:
        return (rule.finding("base_offset", v["base_offset"], "0 without swizzling", "swizzle = none"),)
    return ()


@_impl("SMEM-BASE-OFFSET-BOUNDARY")
def _base_boundary(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    boundary = pattern_boundary(v["swizzle"], v.get("layout") or _SMEM)
    if not boundary or v["base_offset"] or v["pattern_start"] is not None:
        return ()
    rows = (v["start_address"] % boundary) >> 7
    if not rows:
        return ()
    return (rule.finding("base_offset", 0, f"0 (pattern on absolute addresses) or {(v['start_address'] >> 7) & 7} (pattern starts here)",
                         f"start address {v['start_address']:#x} is {rows} x 128 bytes past its {boundary}-byte boundary"),)


@_impl("SMEM-BASE-OFFSET-TABLE41")
def _base_table41(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    boundary = pattern_boundary(v["swizzle"], v.get("layout") or _SMEM)
    if not boundary:
        return ()
    ps = v["pattern_start"]
    want = 0 if ps % boundary == 0 else (ps >> 7) & 7
    if v["base_offset"] == want:
        return ()
    return (rule.finding("base_offset", v["base_offset"], str(want), f"pattern start {ps:#x}, {v['swizzle']} ({boundary}-byte boundary)"),)


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
    key = None if unknown else _smem_key(values, ctx.get("arch"), ctx.get("pattern_start"), layout)
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


#: Rule keys whose rules found nothing, per word (:func:`_is_clean`); bounded.
_CLEAN: dict[str, set[tuple[Any, ...]]] = {"smem": set(), "zcm": set()}
_CLEAN_LIMIT = 1 << 16


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
    clean = _CLEAN[word]
    if len(clean) >= _CLEAN_LIMIT:
        clean.clear()
    try:
        clean.add(key)
    except TypeError:  # (unhashable: never looked up either)
        pass


def _smem_key(values: Mapping[str, Any], arch: Any, pattern_start: Any, layout: str = _SMEM) -> tuple[Any, ...] | None:
    """The smem rules read the swizzle, the base offset and the LBO mode (the wgmma family has
    none); the target (a name: only a string equals one, so its class need not be in the key); the
    start address only as ``(start % boundary) >> 7`` (boundaries 256, 512, 1024: bits 7-9); the
    pattern start only as ``ps % boundary`` and ``(ps >> 7) & 7`` (bits 0-9); and the family."""
    key = (values["swizzle"], values["base_offset"], values.get("lbo_mode"), (values["start_address"] >> 7) & 7, arch, layout)
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


@_impl("ZCM-WS")
def _zcm_ws(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    if v["ws"] is False:
        return (rule.finding("ws", False, "true (tcgen05.mma.ws)", "the instruction is not .ws"),)
    return ()


@_impl("ZCM-M")
def _zcm_m(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    if v["m"] not in c.zcm["ms"]:
        return (rule.finding("m", v["m"], ", ".join(map(str, c.zcm["ms"])), f"M = {v['m']}"),)
    return ()


@_impl("ZCM-COLUMN-SHIFT-M")
def _zcm_shift(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    limit = c.zcm["max_column_shift"].get(v["m"])
    if limit is not None and v["column_shift"] > limit:
        return (rule.finding("column_shift", v["column_shift"], f"0..{limit}", f"M = {v['m']}"),)
    return ()


@_impl("ZCM-SUBMASK-UNUSED")
def _zcm_unused(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    count = submask_counts().get(v["m"])
    if count is None:
        return ()
    return tuple(rule.finding(f"{name}_{i}", v[f"{name}_{i}"], "0", f"M = {v['m']} uses {count} sub-mask(s)")
                 for i in range(count, 4) for name in ("start_count", "first_span") if v[f"{name}_{i}"])


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


def _operands(v: _Facts) -> Iterable[tuple[str, Mapping[str, Any], Any, Any]]:
    """(operand, its smem descriptor's values, its type, its major-ness), for A (unless in tensor
    memory) and B."""
    for op in "ab":
        desc = v.get(f"{op}_desc")
        if desc is not None:
            yield op, desc, v["idesc"][f"{op}type"], v["idesc"][f"{op}_major"]


@_impl("MMA-SWIZZLE-TABLE52")
def _swizzle_t52(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    out = []
    for op, desc, t, major in _operands(v):
        if t not in c.type_bits or major is None or desc["swizzle"] is None:
            continue
        allowed = c.swizzles_for(c.type_bits[t], major)
        if allowed and desc["swizzle"] not in allowed:  # none allowed: IDESC-MAJOR-TYPE-SIZE says so
            out.append(rule.finding(f"{op}_desc.swizzle", desc["swizzle"], ", ".join(allowed),
                                    f"{op.upper()} is {t}, {major.upper()}-major: needs {' or '.join(allowed)}, "
                                    f"got {desc['swizzle']}"))
    return out


@_impl("MMA-LBO-MODE-MAJOR")
def _abs_major(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    want = c.absolute_lbo["major"]
    return [rule.finding(f"{op}_desc.lbo_mode", "absolute", f"relative (or {want.upper()}-major)", f"{op.upper()} is {major.upper()}-major")
            for op, desc, _, major in _operands(v) if desc["lbo_mode"] == "absolute" and major not in (want, None)]


def _lbo_ignored_in(rule: Rule, operands: Iterable[tuple[str, Mapping[str, Any], Any, Any]]) -> list[Finding]:
    """E8/E43 for one instruction's operands (op, descriptor values, type, major-ness): a K-major
    swizzled operand's LBO is not used; one other than 0 or 16 bytes is a note. (A descriptor
    family without an LBO mode, wgmma's, is relative.)"""
    return [rule.finding(f"{op}_desc.lbo", desc["lbo"], "0 or 16 (encodes 0 or 1)", f"{op.upper()} is K-major, {desc['swizzle']}")
            for op, desc, _, major in operands
            if major == "k" and desc["swizzle"] not in ("none", None) and desc.get("lbo_mode", "relative") == "relative"
            and desc["lbo"] not in (0, 16)]


@_impl("MMA-LBO-IGNORED")
def _lbo_ignored(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    return _lbo_ignored_in(rule, _operands(v))


@_impl("MMA-SBO-ATOM")
def _sbo_atom(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    out = []
    for op, desc, t, major in _operands(v):
        swizzle, sbo = desc["swizzle"], desc["sbo"]
        if sbo is None or major is None or not off_pattern(sbo, swizzle):
            continue
        groups = _sbo_groups(op, major, swizzle, v["idesc"])
        if groups < 2:
            continue
        window = _sbo_window(op, major, swizzle, c.type_bits.get(t), v["idesc"])
        start = 0
        if not skewed_stride(sbo, swizzle, groups, window):  # inside one atom row from the row's start:
            start = _known(desc, "start_address")               # where in its row the word starts decides
            if start is None or not skewed_stride(sbo, swizzle, groups, window, start):
                continue
        period, row = swizzle_period(swizzle), swizzle_row(swizzle)
        at = start % row
        across = "8-row groups along " + ("M" if op == "a" else "N") if major == "k" else "groups of K rows"
        out.append(rule.finding(
            f"{op}_desc.sbo", sbo, f"a multiple of {period} bytes, or a step that keeps every group inside one {row}-byte atom row",
            f"{op.upper()} is {major.upper()}-major, {swizzle}: SBO steps between {across}; {sbo} bytes is neither a whole "
            f"number of {period}-byte swizzle patterns (the next atom, on the same rows' phase) nor a step inside one "
            f"{row}-byte atom row (slice-K: at least {groups} groups of {window} bytes from byte {at} of the row need "
            f"{at + (groups - 1) * sbo + window}), so the groups read a layout no tile has"))
    return out


def _known(values: Mapping[str, Any], name: str) -> Any:
    """``values[name]``, or None where it is known at run time only (:func:`partial`)."""
    try:
        return values.get(name)
    except RunTimeValue:
        return None


def _sbo_groups(op: str, major: str, swizzle: str, idesc: Mapping[str, Any]) -> int:
    """How many groups one MMA reads along SBO (§9.7.16.3.3), at least: K-major, 8-row groups of
    M (A) or N (B) per CTA, counted from half of M or N (cta_group::2 splits them); MN-major,
    groups of the atom's K rows (Table 53) in the kind's dense K (Table 39). Unknown M, N or kind:
    0 (the rule finds nothing it cannot show)."""
    if major == "k":
        extent = idesc.get("m" if op == "a" else "n")
        return -(-(extent // 2) // 8) if isinstance(extent, int) else 0
    shape = atoms().atoms.get((swizzle, "mn"))
    kind = idesc.get("kind")
    return -(-mma_k(kind, False) // shape.k) if shape is not None and kind is not None else 0


def _sbo_window(op: str, major: str, swizzle: str, bits: Any, idesc: Mapping[str, Any]) -> int:
    """Bytes of an atom row each group of :func:`_sbo_groups` reads, at least: K-major, the MMA's
    K of the operand in the kind's storage (A's dense K, also under .sp, where A is stored
    compressed; B's sparse K when the word says sparse); MN-major, half of M or N (per CTA), at
    most the row. A size the kind does not store, or a value known at run time only: one 16-byte
    chunk (the least any read covers)."""
    kind = idesc.get("kind")
    if major == "k":
        elements = mma_k(kind, op == "b" and _known(idesc, "sparse") is True) if kind is not None else 0
    else:
        extent = _known(idesc, "m" if op == "a" else "n")
        elements = extent // 2 if isinstance(extent, int) else 0
    return min(chunk_bytes(kind, bits, elements) or 16, swizzle_row(swizzle))


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


#: What the instruction rules read. They are rules about one operand each (A, B): of the idesc's
#: values, that operand's type and major-ness; of its smem descriptor's values, these. An
#: operand's findings are a function of them (with the catalog and the tables).
#: tests/test_speed_paths.py runs the rules with facts that record what is read.
MMA_READS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "a_desc": (("atype", "a_major", "m", "kind", "sparse"), ("swizzle", "lbo_mode", "lbo", "sbo", "start_address")),
    "b_desc": (("btype", "b_major", "n", "kind", "sparse"), ("swizzle", "lbo_mode", "lbo", "sbo", "start_address")),
}
#: An operand's findings under the instruction rules, and the rules not checked, per key
#: (:func:`_operand_key`); bounded.
_MMA_MEMO: dict[tuple[Any, ...], tuple[tuple[Finding, ...], tuple[NotChecked, ...]]] = {}


def _operand_key(role: str, facts: Facts, ctx: Mapping[str, Any]) -> tuple[Any, ...]:
    """What the instruction rules read of operand ``role`` (:data:`MMA_READS`) and the names the
    context gives."""
    of_idesc, of_desc = MMA_READS[role]
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
            if len(_MMA_MEMO) >= _MEMO_LIMIT:
                _MMA_MEMO.clear()
            for role, key in zip(operands, keys):
                _MMA_MEMO[key] = (tuple(mine[role]), ran[1])
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


def _wgmma_row(v: _Facts) -> WgmmaTypes | None:
    """The §9.7.15.3 row of A's type (B's when A's is none): the shapes and operands it has."""
    return wgmma_table().row_of(v["atype"], v["btype"])


def _type_combos() -> str:
    return "; ".join(f"{'/'.join(r.atypes)} x {'/'.join(r.btypes)} -> {', '.join(r.dtypes)}" for r in wgmma_table().rows)


@_impl("WGMMA-TYPES")
def _wgmma_types(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    a, b, d = v["atype"], v["btype"], v["dtype"]
    row = wgmma_table().row(a, b)
    if row is None:
        own = _wgmma_row(v)
        field, value = ("btype", b) if own is not None and a in own.atypes else ("atype", a)
        allowed = ", ".join(own.btypes if field == "btype" and own is not None else wgmma_types())
        return (rule.finding(field, value, allowed, f"atype {a}, btype {b}: §9.7.15.3 has no such pair ({_type_combos()})"),)
    if d not in row.dtypes:
        return (rule.finding("dtype", d, ", ".join(row.dtypes), f"{a} x {b} accumulates into {' or '.join(row.dtypes)}"),)
    return ()


@_impl("WGMMA-SHAPE")
def _wgmma_shape(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    row = _wgmma_row(v)
    if row is None:
        return ()  # no type row: WGMMA-TYPES reports it
    out = []
    m = wgmma_table().m
    if v["m"] != m:
        out.append(rule.finding("m", v["m"], str(m), f"M = {v['m']}"))
    form = "sparse" if v["sp"] else "dense"
    k = row.k_for(bool(v["sp"]))
    if k is None:
        out.append(rule.finding("sp", True, "false (dense only)", f"{'/'.join(row.atypes)} has no sparse shapes"))
    elif v["k"] != k:
        out.append(rule.finding("k", v["k"], str(k), f"{form} {'/'.join(row.atypes)}: .m64nNk{k}"))
    if v["n"] not in row.n:
        out.append(rule.finding("n", v["n"], describe_ints(row.n), f"N = {v['n']} with {'/'.join(row.atypes)}"))
    return out


@_impl("WGMMA-TRANSPOSE")
def _wgmma_transpose(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    row = _wgmma_row(v)
    out = []
    for op in "ab":
        t = v[f"trans_{op}"]
        if t is None or t == 0:
            continue
        if t != 1:
            out.append(rule.finding(f"trans_{op}", t, "0, 1", f"imm-trans-{op} = {t}"))
        elif row is not None and not row.transpose:
            out.append(rule.finding(f"trans_{op}", t, "0 (K-major)", f"{op.upper()} is {v[f'{op}type']}: only .f16/.bf16 transpose"))
        elif op == "a" and v["a_in_registers"]:
            out.append(rule.finding("trans_a", t, "0 (K-major)", "A is read from registers, not through a descriptor"))
    return out


@_impl("WGMMA-SCALE")
def _wgmma_scale(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    row = _wgmma_row(v)
    out = []
    for op in "ab":
        s = v[f"scale_{op}"]
        if s is None or s == 1:
            continue
        if s != -1:
            out.append(rule.finding(f"scale_{op}", s, "-1, 1", f"imm-scale-{op} = {s}"))
        elif row is not None and not row.floating:
            out.append(rule.finding(f"scale_{op}", s, "1 (no negation)", f"{v[f'{op}type']} is not a floating-point type"))
    d = v["scale_d"]
    if d is not None and d not in (0, 1):  # (None: a predicate, known at run time)
        out.append(rule.finding("scale_d", d, "0, 1, or a predicate", f"scale-d = {d}"))
    return out


@_impl("WGMMA-SP-SEL")
def _wgmma_sp_sel(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    sel = v["sp_sel"]
    if sel is None:
        return ()
    if not v["sp"]:
        return (rule.finding("sp_sel", sel, "none (not .sp)", "sp-sel without .sp"),)
    row = _wgmma_row(v)
    if row is None or row.sparse_k is None or sel in row.sp_sel:
        return ()  # (no sparse form at all: WGMMA-SHAPE reports .sp)
    return (rule.finding("sp_sel", sel, ", ".join(map(str, row.sp_sel)) or "none", f"sp-sel = {sel} with {v['atype']}"),)


@_impl("WGMMA-SATFINITE")
def _wgmma_satfinite(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    row = _wgmma_row(v)
    if not v["satfinite"] or row is None or row.satfinite:
        return ()
    return (rule.finding("satfinite", True, "false", f".satfinite with {v['atype']}"),)


def _wgmma_operands(v: _Facts) -> Iterable[tuple[str, Mapping[str, Any], Any, Any]]:
    """(operand, its descriptor's values, its type, its major-ness) for the operands read through
    descriptors: transposed (``imm-trans`` 1) is MN-major, else K-major (§9.7.15.5.1.2)."""
    for op in "ab":
        desc = v.get(f"{op}_desc")
        if desc is not None:
            yield op, desc, v[f"{op}type"], "mn" if v[f"trans_{op}"] == 1 else "k"


@_impl("WGMMA-LBO-IGNORED")
def _wgmma_lbo_ignored(rule: Rule, v: _Facts, c: Constraints) -> Iterable[Finding]:
    return _lbo_ignored_in(rule, _wgmma_operands(v))


def wgmma_findings(facts: Facts) -> tuple[list[Finding], tuple[NotChecked, ...]]:
    """The catalog's wgmma rules (``applies = "wgmma"``) over ``facts``: the instruction's values
    and, for the operands read through descriptors, ``a_desc`` / ``b_desc`` (their values, made by
    :func:`partial` when partly known). The rules take no context."""
    return _per_operand("wgmma", facts, no_context())


# --------------------------------------------------------------------------------------------
# Tensor memory address.


@_impl("TADDR-WARP-LANES")
def _warp_lanes(rule: Rule, v: dict[str, Any], c: Constraints) -> Iterable[Finding]:
    lane, warp = v["lane"], v["warp"]
    if lane_warp(lane) is None or lane in warp_lanes(warp):
        return ()  # a lane that does not exist is the field check's TADDR-LANE-RANGE
    return (rule.finding("lane", lane, describe_range(warp_lanes(warp)),
                         f"lane {lane} is in warp {lane_warp(lane)}'s quarter, the access is by warp {warp}"),)


@_impl("TADDR-ALLOC-COLUMNS")
def _alloc_columns(rule: Rule, v: dict[str, Any], c: Constraints) -> Iterable[Finding]:
    n = v["alloc_columns"]
    if n in alloc_sizes():
        return ()
    return (rule.finding("alloc_columns", n, ", ".join(map(str, alloc_sizes())), f"nCols = {n}"),)


@_impl("TADDR-COLUMN-ALLOC")
def _column_alloc(rule: Rule, v: dict[str, Any], c: Constraints) -> Iterable[Finding]:
    n, base, column = v["alloc_columns"], v["alloc_base"], v["column"]
    columns = tmem_shape()[1]
    if n not in alloc_sizes():
        return ()  # TADDR-ALLOC-COLUMNS reports it
    if base + n > columns:
        return (rule.finding("alloc_base", base, f"0..{columns - n} for nCols = {n}",
                             f"an allocation of {n} columns from column {base} ends past column {columns - 1}"),)
    if not 0 <= column < columns or base <= column < base + n:
        return ()  # a column that does not exist is the field check's TADDR-COLUMN-RANGE
    return (rule.finding("column", column, f"{base}..{base + n - 1}",
                         f"column {column} is outside the {n} columns allocated from column {base}"),)


def alloc_findings(ncols: int) -> tuple[Finding, ...]:
    """``TADDR-ALLOC-COLUMNS`` alone, for a ``tcgen05.alloc`` column count ``ncols``."""
    return tuple(_alloc_columns(catalog()["TADDR-ALLOC-COLUMNS"], {"alloc_columns": ncols}, constraints()))


def taddr_findings(values: dict[str, Any], ctx: dict[str, Any]) -> tuple[list[Finding], tuple[Any, ...]]:
    """The catalog's taddr rules over logical values (decoded, or an encoder's arguments)."""
    return run_rules("taddr", {**values, **ctx}, ctx)
