"""Facts the tables imply, per MMA kind and per word, computed once: which layout serves a kind,
the K of each kind (Table 39), Table 39 with Table 50 and Table 52 as sets of legal keys, the
zero-column mask's sub-mask break-up (the table after Table 45) and tensor memory's shape
(§9.7.16.1). The rules (:mod:`descgen.rules.checks`) and the encoders' fast paths both read these; the
sets are derived from the same table rows the rules read, and a test walks the whole legal space
to keep them equal.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable, Iterable, Literal, Mapping, NamedTuple, overload

from .catalog import constraints, usage_error
from .context import normalize_warp
from .engine import Plan, plan
from .loader import IDESC_LAYOUTS, KINDS, SMEM_LAYOUTS, Shape, atoms, layout, shapes
from ..core.types import AccumType, ElementType, Kind, LboMode, Major, ScaleType, Swizzle, WgmmaSwizzle

if TYPE_CHECKING:  # computed from the tables on first use (module __getattr__ below)
    KIND_LAYOUTS: dict[str, str]
    SWIZZLES: tuple[Swizzle, ...]
    WGMMA_SWIZZLES: tuple[WgmmaSwizzle, ...]
    LBO_MODES: tuple[LboMode, ...]
    MAJORS: tuple[Major, ...]

__all__ = ["KIND_LAYOUTS", "SWIZZLES", "WGMMA_SWIZZLES", "LBO_MODES", "MAJORS", "ABSENT_ARGS", "KindFacts",
           "kind_facts", "normalize_kind", "type_names", "idesc_defaults", "mma_k", "shape_rows", "shape_keys",
           "major_keys", "shape_case", "shape_union", "scale_rows", "selector_keys", "swizzle_attrs",
           "pattern_boundary", "smem_family", "smem_target", "smem_targets", "swizzle_derived", "smem_family_target",
           "swizzle_period", "swizzle_row", "off_pattern", "skewed_stride", "chunk_elements", "chunk_bytes",
           "submask_counts", "tmem_shape", "warps_per_warpgroup", "warp_lanes", "lane_warp", "describe_range",
           "alloc_sizes"]


def _kind_layouts() -> dict[str, str]:
    """Which PTX table lays out the instruction descriptor for each kind: each idesc layout's
    ``kinds`` (Table 42: tf32, f16, f8f6f4, i8; Table 43: mxf8f6f4; Table 44: mxf4, mxf4nvf4)."""
    out = {kind: name for name in IDESC_LAYOUTS for kind in layout(name).kinds}
    return {kind: out[kind] for kind in KINDS}


def __getattr__(name: str) -> Any:
    """The enumerations the tables hold, computed on first use so that ``import descgen`` reads
    no table: ``KIND_LAYOUTS``, ``SWIZZLES`` (Table 40 bits 61-63, code order), ``WGMMA_SWIZZLES``
    (§9.7.15.5.1.2.2 bits 62-63), ``LBO_MODES``
    (bit 52) and ``MAJORS`` (the Transpose A/B bits' members)."""
    smem: Callable[[str], tuple[Any, ...]] = lambda f: tuple(layout("smem_desc").field(f).codes(None))  # noqa: E731
    values: dict[str, Callable[[], Any]] = {"KIND_LAYOUTS": _kind_layouts, "SWIZZLES": lambda: smem("swizzle"),
              "LBO_MODES": lambda: smem("lbo_mode"),
              "WGMMA_SWIZZLES": lambda: tuple(layout("wgmma_smem_desc").field("swizzle").codes(None)),
              "MAJORS": lambda: tuple(layout("idesc_dense").field("a_major").codes(None))}
    if name in values:
        value = globals()[name] = values[name]()
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Arguments of :func:`descgen.encode_idesc` some layouts have no field for, with the value that
#: means "not asked for". A layout that lacks the field accepts only that value (or, for dtype,
#: the value the kind implies).
ABSENT_ARGS: dict[str, Any] = {
    "dtype": None,
    "saturate": False,
    "sparsity_selector": 0,
    "max_shift": 0,
    "scale_type": None,
    "a_sf_id": 0,
    "b_sf_id": 0,
}


class KindFacts(NamedTuple):
    """One kind's facts, computed once (:func:`kind_facts`).

    Attributes:
        plan: the engine plan of the kind's layout (Table 42, 43 or 44).
        absent: ``(argument, allowed values)`` for each :data:`ABSENT_ARGS` name the layout lacks.
        ks: the MMA's K, (dense, sparse) (Table 39).
        combos: Table 39's legal ``(atype, btype, dtype, scale type)`` combinations.
        implied_dtype: the dtype the kind implies when the word has no dtype field (f32), or None.
    """

    plan: Plan
    absent: tuple[tuple[str, tuple[Any, ...]], ...]
    ks: tuple[int, ...]
    combos: frozenset[tuple[Any, ...]]
    implied_dtype: Any


_KIND_FACTS: dict[str, KindFacts] = {}


def normalize_kind(kind: str) -> Kind:
    """Accept ``f16``, ``F16``, ``kind::f16`` or ``.kind::f16``.

    Raises:
        UsageError: an unknown kind (``IDESC-KIND``).
    """
    if isinstance(kind, str):
        k = kind.strip().lower().removeprefix(".").removeprefix("kind::")
        if k in KINDS:
            return k
    raise usage_error("IDESC-KIND", "kind", kind, ", ".join(KINDS), f"{kind!r} is not one")


def kind_facts(kind: str) -> KindFacts:
    """The facts of ``kind`` (any spelling :func:`normalize_kind` accepts), computed once.

    Raises:
        UsageError: an unknown kind.
    """
    hit = _KIND_FACTS.get(kind) if isinstance(kind, str) else None  # a list or dict is not a kind (IDESC-KIND)
    if hit is None:
        name = normalize_kind(kind)
        p = plan(next(lay for lay in IDESC_LAYOUTS if name in layout(lay).kinds), name)  # (only that one compiled)
        names = {f.name for f in p.layout.fields}
        absent = tuple(
            (arg, (neutral, p.layout.implied[arg]) if arg in p.layout.implied else (neutral,))
            for arg, neutral in ABSENT_ARGS.items()
            if arg not in names
        )
        table = shapes()
        ks = table.k_values(name, False)[:1] + table.k_values(name, True)[:1]
        combos = frozenset(
            (a, b, row["dtype"], scale)
            for row in table.types
            if row["kind"] == name
            for a in row["ab"]
            for b in row["ab"]
            for scale in row.get("scale", [None])
        )
        hit = _KIND_FACTS[kind] = KindFacts(p, absent, ks, combos, p.layout.implied.get("dtype"))
    return hit


@overload
def type_names(field: Literal["atype", "btype"]) -> tuple[ElementType, ...]: ...
@overload
def type_names(field: Literal["dtype"]) -> tuple[AccumType, ...]: ...
@overload
def type_names(field: Literal["scale_type"]) -> tuple[ScaleType, ...]: ...
@overload
def type_names(field: str) -> tuple[str, ...]: ...
def type_names(field: str) -> tuple[str, ...]:
    """Every member name of an idesc enum field (``atype``, ``btype``, ``dtype``, ``scale_type``)
    over all kinds, in kind order then code order, from the tables."""
    names: dict[str, None] = {}
    for kind in KINDS:
        f = kind_facts(kind).plan.layout.by_name.get(field)
        if f is not None:
            names.update(dict.fromkeys(f.domain(kind).members()))
    return tuple(names)


def idesc_defaults(kind: Kind) -> dict[str, str]:
    """The types descgen fills in for ``kind`` when the caller names none (``[defaults]`` in the
    tables), plus what the kind implies but the word does not hold (dtype f32 for the mx kinds).

    Raises:
        UsageError: unknown kind.
    """
    p = kind_facts(kind).plan
    return {**p.layout.implied, **p.defaults}


def mma_k(kind: Kind | str, sparse: bool, k96: bool = False) -> int:
    """The MMA's K for ``kind`` and sparsity (Table 39); ``k96`` is Table 44's K bit."""
    if k96:
        return 96
    return kind_facts(kind).ks[1 if sparse else 0]


@functools.cache
def shape_keys(kind: str, cta_group: int | None, ws: bool | None) -> frozenset[tuple[int, int, bool, str, bool]]:
    """Table 39 (with Table 50) as a set: every legal ``(M, N, sparse, k_dim, transposed 8-bit B)``
    for ``kind`` under the given ``cta_group`` / ``.ws`` (None: any). ``k_dim`` is Table 44's K
    member (``"64/128"`` for every kind's standard K, ``"96"`` for K1)."""
    t50 = constraints().transpose_b_8bit
    out: set[tuple[Any, ...]] = set()
    for r in shape_rows(kind, cta_group, ws):
        k_dim = "96" if r.k == 96 else "64/128"
        for m in r.m:
            for n in r.n:
                out.add((m, n, r.sparse, k_dim, False))
                if n in t50.get(r.cta_group, ()):
                    out.add((m, n, r.sparse, k_dim, True))
    return frozenset(out)


@functools.cache
def shape_rows(kind: str, cta_group: int | None, ws: bool | None) -> tuple[Shape, ...]:
    """Table 39's rows for ``kind`` under ``cta_group`` / ``.ws`` (None: any)."""
    return tuple(r for r in shapes().for_kind(kind)
                 if (cta_group is None or r.cta_group == cta_group) and (ws is None or r.ws == ws))


@functools.cache
def major_keys(kind: str, a_tmem: bool | None = None) -> dict[tuple[Any, str, Any, str], bool]:
    """Table 52's type size x major-ness (and Table 51 for A in tensor memory) as a map: every legal
    ``(atype, a_major, btype, b_major)`` for ``kind`` -> whether B is a transposed 8-bit type
    (the key Table 50 adds to :func:`shape_keys`)."""
    c = constraints()
    p = kind_facts(kind).plan
    by = p.layout.by_name
    types = {op: tuple(by[f"{op}type"].codes(kind)) for op in "ab"}
    majors = {op: tuple(by[f"{op}_major"].codes(kind)) for op in "ab"}
    if a_tmem:
        majors["a"] = tuple(m for m in majors["a"] if m == c.a_tmem["a_major"])

    def ok(t: str, major: str) -> bool:
        return major == "k" or bool(c.swizzles_for(c.type_bits[t], major))

    return {(a, am, b, bm): bm == "mn" and c.type_bits[b] == 8
            for a in types["a"] for am in majors["a"] for b in types["b"] for bm in majors["b"]
            if ok(a, am) and ok(b, bm)}


@functools.cache
def shape_case(kind: str, cta_group: int | None, ws: bool | None, sparse: bool, k: int) -> tuple[Shape, ...] | None:
    """The rows of Table 39 for ``kind``, context, sparsity and the MMA's K; None when there are none."""
    return tuple(r for r in shape_rows(kind, cta_group, ws) if r.sparse == sparse and r.k == k) or None


@functools.cache
def scale_rows(kind: str, k: int | None = None, scale_vec: str | None = None) -> tuple[Mapping[str, Any], ...]:
    """The ``[[scale_vec]]`` rows of ``tables/constraints.toml`` (Tables 54/55, §9.7.16.10.7.2-3) for
    ``kind``, the MMA's K and the scale vector size (None: any K, any size). Empty for a kind
    that is not block-scaled."""
    return tuple(r for r in constraints().scale_vec
                 if kind in r["kinds"] and (k is None or k in r["k"]) and (scale_vec is None or r["name"] == scale_vec))


@functools.cache
def selector_keys(kind: str, ws: bool | None = None) -> frozenset[tuple[bool, str, int, int, int, int]]:
    """The sub-column selectors and the maximum shift as a set: every ``(sparse, k_dim,
    sparsity_selector, max_shift, a_sf_id, b_sf_id)`` for ``kind`` under ``.ws`` = ``ws`` (None:
    not given) that no rule finds anything about (``k_dim`` as in :func:`shape_keys`). The
    sparsity selector takes its field's values when sparse and only 0 when dense (E37); the scale
    factor IDs are those some scale vector size allows for the kind and K (Tables 54/55,
    §9.7.16.10.7.2-3, E7); the maximum shift takes its field's values, and only 0 when the
    instruction is known not to be ``.ws`` (IDESC-MAX-SHIFT-WS warns). A field the kind's layout
    lacks holds 0 (what :data:`ABSENT_ARGS` gives the encoder)."""
    by = kind_facts(kind).plan.layout.by_name
    selectors = tuple(by["sparsity_selector"].domain(kind).members()) if "sparsity_selector" in by else (0,)
    shifts = tuple(by["max_shift"].domain(kind).members()) if "max_shift" in by and ws is not False else (0,)
    out: set[tuple[Any, ...]] = set()
    for sparse in (False, True):
        for k_dim in ("64/128", "96"):
            if k_dim == "96" and (sparse or "k_dim" not in by):
                continue
            k = mma_k(kind, sparse, k_dim == "96")
            ids = {i for r in scale_rows(kind, k) for i in r["sf_ids"]} if scale_rows(kind) else {0}
            out.update((sparse, k_dim, s, shift, a, b) for s in (selectors if sparse else (0,)) for shift in shifts
                       for a in ids for b in ids)
    return frozenset(out)


@functools.cache
def shape_union(kind: str, name: str) -> frozenset[int]:
    """Every M (or N) Table 39 has for the kind in some row: what the field check allows."""
    return shapes().m_values(kind) if name == "m" else shapes().n_values(kind)


def swizzle_attrs(swizzle: Any, layout: str = "smem_desc") -> Mapping[str, Any]:
    """A swizzle mode's attributes in its family's table (``tables/smem_desc.toml``, tcgen05;
    ``tables/wgmma_smem_desc.toml``, wgmma), in bytes: its span (``bytes``) and its Table 41
    pattern ``boundary`` (errata E9); empty for anything that is not a mode (None: an unknown
    code)."""
    return plan(layout).layout.field("swizzle").member_attrs.get(swizzle, {})


@functools.cache
def pattern_boundary(swizzle: Any, layout: str = "smem_desc") -> int:
    """Table 41's pattern boundary in bytes of a swizzle mode (1024, 512, 256 for 128B, 64B, 32B;
    1024 for 128B_base32B); 0 for none, or anything that is not a mode. ``layout``: the
    descriptor family's table (§9.7.15.5.1.2.2 prints the same boundaries for wgmma)."""
    return int(swizzle_attrs(swizzle, layout).get("boundary", 0))


@functools.cache
def swizzle_derived(swizzle: Any, layout: str = "smem_desc") -> tuple[tuple[str, Any, str], ...]:
    """What a decoded shared memory descriptor derives from its swizzle member: the span and the
    pattern boundary in bytes, as ``Decoded.derived`` holds them (none for an unknown code)."""
    attrs = swizzle_attrs(swizzle, layout)
    return tuple((name, attrs[key], "bytes")
                 for name, key in (("swizzle_bytes", "bytes"), ("pattern_boundary", "boundary")) if key in attrs)


def smem_family_target(layout: str) -> str:
    """The target a shared memory descriptor family is named by: its table's first ``targets``
    entry (wgmma: ``sm_90a``), else tcgen05's first target (``sm_100a``)."""
    return (plan(layout).layout.targets or constraints().targets)[0]


def smem_family(arch: Any) -> str:
    """The shared memory descriptor layout a target's MMA reads: the layout whose ``targets``
    (``[descriptor]`` of its table) name ``arch`` (``sm_90a``: ``wgmma_smem_desc``,
    §9.7.15.5.1.2.2); a tcgen05 target, None, or anything that is no target: tcgen05's
    ``smem_desc`` (Table 40). :func:`smem_target` tells a target from anything else."""
    found = smem_target(arch)
    return found[0] if found else SMEM_LAYOUTS[0]


def smem_target(arch: Any) -> tuple[str, str] | None:
    """``(layout, target)`` for a target that reads a shared memory descriptor (any spelling:
    ``"SM_90A"``, ``"sm_101a"`` = ``sm_110a``): the family's layout and the target's canonical
    name; None for anything else."""
    if arch.__class__ is not str:
        return None
    name = arch.strip().lower()
    for layout_name in SMEM_LAYOUTS[1:]:
        if name in plan(layout_name).layout.targets:
            return layout_name, name
    c = constraints()
    name = c.aliases.get(name, name)
    return (SMEM_LAYOUTS[0], name) if name in c.targets else None


@functools.cache
def smem_targets() -> tuple[str, ...]:
    """Every target that reads a shared memory descriptor: the second families' (``sm_90a``),
    then tcgen05's (``tables/constraints.toml`` ``[targets]``)."""
    return (*(t for name in SMEM_LAYOUTS[1:] for t in plan(name).layout.targets), *constraints().targets)


def swizzle_period(swizzle: Any) -> int:
    """Bytes after which a swizzle mode's pattern repeats: ``2**(B+M+S)`` for its CuTe functor
    ``Swizzle<B,M,S>`` (``tables/smem_atoms.toml``, §9.7.16.3.3): 1024, 512, 256 for 128B, 64B,
    32B, 512 for 128B_base32B (``Swizzle<2,5,2>``); 0 for none, or anything that is not a mode."""
    f = atoms().swizzles.get(swizzle)
    return 1 << (f.b + f.m + f.s) if f is not None and f.b else 0


def swizzle_row(swizzle: Any) -> int:
    """Bytes of one row of a swizzle mode's atom, the span its XOR permutes (bits below ``M+B`` of
    ``Swizzle<B,M,S>``; the row's phase comes from the bits above): 128, 64, 32 for 128B, 64B,
    32B, 128 for 128B_base32B; 0 for none, or anything that is not a mode."""
    f = atoms().swizzles.get(swizzle)
    return 1 << (f.b + f.m) if f is not None and f.b else 0


def off_pattern(stride: int, swizzle: Any) -> bool:
    """Whether a stride in bytes is not a whole number of :func:`swizzle_period` s (False without
    swizzle): the first half of :func:`skewed_stride`, which is the test the rules use."""
    period = swizzle_period(swizzle)
    return bool(period) and stride % period != 0


def skewed_stride(stride: int, swizzle: Any, groups: int, window: int, start: int = 0) -> bool:
    """Whether ``groups`` reads ``stride`` bytes apart (SBO between 8-row groups K-major, between
    K-row groups MN-major; LBO between MN atoms), each ``window`` bytes along one atom row from
    ``start`` (its byte address; only ``start`` modulo the row counts), read a layout no tile has
    (errata E47). The hardware swizzles absolute addresses (E9), so two layouts are canonical:

    * the stride is a whole number of swizzle patterns (:func:`swizzle_period`): each group starts
      at the same rows' phase in another atom, the tiling of §9.7.16.3.3's canonical layouts;
    * every group stays inside the first group's atom row, ``start % row + (groups - 1) * stride
      + window <= row`` (:func:`swizzle_row`): the groups re-read the same rows at other offsets
      along them, each read the canonical layout with its start moved along the row (slice-K:
      CUTLASS's SBO = 32 bytes under 128B swizzle).

    Any other stride moves the next group to another atom and along the row at once (SBO 1040 =
    1024 + 16 under 128B), to other rows of the same pattern (1152), or across the row's end.
    False without swizzle (core matrices need 16 bytes only) or with fewer than two groups."""
    if groups < 2 or not off_pattern(stride, swizzle):
        return False
    return start % swizzle_row(swizzle) + (groups - 1) * stride + window > swizzle_row(swizzle)


def chunk_elements(kind: Any, bits: Any) -> int:
    """Elements of ``bits``-bit type one 16-byte chunk holds under ``kind``'s storage (§9.7.16.10.4,
    ``tables/smem_atoms.toml`` [[storage]]); 0 for a size the kind does not store."""
    return next((s.per_chunk for s in atoms().storage if s.bits == bits and (not s.kinds or kind in s.kinds)), 0)


def chunk_bytes(kind: Any, bits: Any, elements: int) -> int | None:
    """Bytes that ``elements`` neighbouring elements of ``bits``-bit type take along an atom row
    under ``kind``'s storage: whole 16-byte chunks (:func:`chunk_elements`). None for a size the
    kind does not store."""
    per = chunk_elements(kind, bits)
    return -(-elements // per) * 16 if per else None


def submask_counts() -> dict[int, int]:
    """M -> number of sub-masks (the table after Table 45, from ``tables/zcm_desc.toml``)."""
    table = plan("zcm_desc").layout.extra["submasks"]
    return {int(m): count for m, count in table.items() if m != "source"}


@functools.cache
def tmem_shape() -> tuple[int, int]:
    """(lanes, columns) of a CTA's tensor memory: (128, 512), from the address layout's field
    domains (§9.7.16.1)."""
    lay = plan("taddr").layout
    return lay.field("lane").domain(None).hi + 1, lay.field("column").domain(None).hi + 1


def warps_per_warpgroup() -> int:
    """4: the warps of a warpgroup, each with its quarter of the lanes (§9.7.16.8.1)."""
    return int(plan("taddr").layout.extra["access"]["warps"])


def warp_lanes(warp: int) -> range:
    """The lanes warp ``warp`` of a warpgroup (its warp ID % 4, 0-3) may access with
    ``tcgen05.ld``/``tcgen05.st``: ``range(32 * warp, 32 * warp + 32)`` (§9.7.16.8.1). Every
    warp may access every column.

    Raises:
        UsageError: ``warp`` is not 0-3 (``CONTEXT-WARP``).
    """
    w = normalize_warp(warp if warp is not None else "None")  # None is no warp here: CONTEXT-WARP
    assert w is not None
    per = tmem_shape()[0] // warps_per_warpgroup()
    return range(per * w, per * (w + 1))


def lane_warp(lane: int) -> int | None:
    """The warp of a warpgroup (0-3) whose quarter holds ``lane``, or None for a lane that does
    not exist (128 or more) (§9.7.16.8.1)."""
    lanes = tmem_shape()[0]
    if isinstance(lane, bool) or not isinstance(lane, int) or not 0 <= lane < lanes:
        return None
    return lane // (lanes // warps_per_warpgroup())


def describe_ints(values: Iterable[int]) -> str:
    """``8..256 step 8`` (four or more evenly spaced values), or the values listed; ``none``."""
    v = sorted(values)
    if len(v) > 3:
        step = v[1] - v[0]
        if all(b - a == step for a, b in zip(v, v[1:])):
            return f"{v[0]}..{v[-1]} step {step}"
    return ", ".join(map(str, v)) or "none"


def describe_range(r: range) -> str:
    """``range(32, 64)`` -> ``"32..63"``: a warp's lanes as findings and decodes show them."""
    return f"{r.start}..{r.stop - 1}"


@functools.cache
def alloc_sizes() -> tuple[int, ...]:
    """Every legal ``tcgen05.alloc`` nCols: the powers of 2 from 32 to 512 (§9.7.16.7.1)."""
    spec = plan("taddr").layout.extra["alloc"]
    out, n = [], 1
    while n <= spec["max"]:
        if n >= spec["min"] and n % spec["unit"] == 0:
            out.append(n)
        n *= 2
    return tuple(out)

