"""The tables the rule language reads: what ``tables/*.toml`` imply, keyed by facts.

A rule's checks (:mod:`descgen.rules.language`) compare facts with upper-case tables:
``m in SHAPE_M[kind, cta_group, ws, sparse, k]``. Each table here is a function of its key
(computed from :mod:`descgen.model.facts`, :mod:`descgen.model.catalog` and :mod:`descgen.model.wgmma_facts` on
first use and remembered), declared with the domain of each key part, so that a back end that
cannot call Python (the C++ header, PTX) can write the whole table out as data: it evaluates the
function over the product of the key domains (:func:`domain`). An entry is an integer, a
boolean, a name, a tuple (a set: read with ``in``), or None (no entry: ``(key) in T`` is false,
``x in T[key]`` is false). A table without a key is a constant.

Every table cites the PTX table or section it comes from.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple

from ..model.catalog import SCALE_VECS, constraints
from ..model.facts import (alloc_sizes, chunk_elements, describe_ints, kind_facts, mma_k, pattern_boundary, scale_rows,
                           shape_case, shape_rows,
                     shape_union, submask_counts, swizzle_period, swizzle_row, tmem_shape, warps_per_warpgroup)
from ..model.loader import KINDS, atoms, shapes
from ..model.wgmma_facts import WgmmaTypes, wgmma_table, wgmma_types

__all__ = ["Table", "TABLES", "table", "domain", "DOMAINS", "OPEN_DOMAINS", "text_functions"]


class Table(NamedTuple):
    """One table: its name, the domain of each key part (:data:`DOMAINS`), what an entry is
    (``int``, ``bool``, ``name``, ``set:<domain>``: a tuple of that domain's values; ``text``: a
    message's text, for Python only), its source, and the function of the key."""

    name: str
    keys: tuple[str, ...]
    value: str
    source: str
    fn: Callable[..., Any]


#: Every table, by name (what a rule may read).
TABLES: dict[str, Table] = {}


def table(name: str, keys: tuple[str, ...], value: str,
          source: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a table. Its function is remembered per key, and answers None (no entry) for a key
    with a part outside its domain (:data:`DOMAINS`), as a back end that writes the table out over
    those domains does; a domain of :data:`OPEN_DOMAINS` takes any value (Python only)."""
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        checked = [i for i, d in enumerate(keys) if d not in OPEN_DOMAINS]

        @functools.cache
        def entry(*key: Any) -> Any:
            if any(key[i] not in _members(keys[i]) for i in checked):
                return None
            return fn(*key)

        def lookup(*key: Any) -> Any:
            try:
                return entry(*key)
            except TypeError:  # (an unhashable key part: no entry)
                return None
        lookup.__doc__ = fn.__doc__
        TABLES[name] = Table(name, keys, value, source, lookup)
        return lookup
    return register


@functools.cache
def _members(name: str) -> frozenset[Any]:
    """A domain's values as a set. (True == 1 and False == 0: a flag's domain takes 0 and 1 too.)"""
    return frozenset(domain(name))


def _kinds() -> tuple[Any, ...]:
    return KINDS


def _idesc_enum(field: str) -> Callable[[], tuple[Any, ...]]:
    def members() -> tuple[Any, ...]:
        out: dict[Any, None] = {None: None}
        for kind in KINDS:
            f = kind_facts(kind).plan.layout.by_name.get(field)
            if f is not None:
                out.update(dict.fromkeys(str(n) for n in f.codes(kind)))
        return tuple(out)
    return members


#: The values each key part takes (None: absent or not given, where it can be).
DOMAINS: dict[str, Callable[[], tuple[Any, ...]]] = {
    "kind": _kinds,
    "cta_group": lambda: (None, *sorted({r.cta_group for r in shapes().rows})),
    "ws": lambda: (None, False, True),
    "bool": lambda: (False, True),
    "k": lambda: (None, *sorted({r.k for r in shapes().rows} | {k for sv in constraints().scale_vec for k in sv["k"]})),
    "m": lambda: tuple(sorted({m for r in shapes().rows for m in r.m})),
    "n": lambda: tuple(sorted({n for r in shapes().rows for n in r.n})),
    "type": lambda: tuple(dict.fromkeys((*_idesc_enum("atype")(), *_idesc_enum("btype")(), *_idesc_enum("dtype")(),
                                         *_idesc_enum("scale_type")()[1:], *constraints().type_bits))),
    "major": lambda: (None, "k", "mn"),
    "swizzle": lambda: (None, *atoms().swizzles),
    "smem_layout": lambda: (None, "wgmma_smem_desc"),
    "scale_vec": lambda: (None, *SCALE_VECS),
    "bits": lambda: (None, *sorted(set(constraints().type_bits.values()))),
    "feature": lambda: tuple(constraints().requires),
    "arch": lambda: (None, *constraints().targets),
    "zcm_m": lambda: tuple(int(m) for m in submask_counts()),
    "wgmma_type": lambda: (None, *wgmma_types()),
    "type_column": lambda: (0, 1, 2, 3),
}


#: Key domains whose values are not enumerated: the tables keyed by them are Python's only (the
#: wgmma rules: a PTX type name that is no wgmma type still selects its operand's row).
OPEN_DOMAINS = frozenset({"wgmma_type", "ptx_name"})


def domain(name: str) -> tuple[Any, ...]:
    """The values of key domain ``name``.

    Raises:
        KeyError: not a domain."""
    return DOMAINS[name]()


# -- Table 39 (tables/shapes.toml), Table 50 ----------------------------------------------------


@table("SHAPE_M", ("kind", "cta_group", "ws", "bool", "k"), "set:m", "Table 39")
def shape_m(kind: str, cta_group: int | None, ws: bool | None, sparse: bool, k: int | None) -> tuple[int, ...] | None:
    """Every M of Table 39's rows for the kind, context (None: any), sparsity and K; None: no row."""
    rows = shape_case(kind, cta_group, ws, sparse, k) if k is not None else None
    return tuple(sorted({m for r in rows for m in r.m})) if rows else None


@table("SHAPE_N", ("kind", "cta_group", "ws", "bool", "k", "m"), "set:n", "Table 39")
def shape_n(kind: str, cta_group: int | None, ws: bool | None, sparse: bool, k: int | None,
            m: int) -> tuple[int, ...] | None:
    """Every N of the rows of :func:`shape_m`'s case that have M; None: no such row."""
    rows = [r for r in (shape_case(kind, cta_group, ws, sparse, k) or ()) if m in r.m] if k is not None else []
    return tuple(sorted({n for r in rows for n in r.n})) if rows else None


@table("SHAPE_T50", ("kind", "cta_group", "ws", "bool", "k", "m"), "set:n", "Table 39; Table 50")
def shape_t50(kind: str, cta_group: int | None, ws: bool | None, sparse: bool, k: int | None,
              m: int) -> tuple[int, ...] | None:
    """Every N some row of :func:`shape_n`'s with M and N allows for a transposed 8-bit B: in its
    cta_group's Table 50 row (a cta_group with none allows no N); None: none."""
    t50 = constraints().transpose_b_8bit
    rows = [r for r in (shape_case(kind, cta_group, ws, sparse, k) or ()) if m in r.m] if k is not None else []
    return tuple(sorted({n for r in rows for n in r.n if n in t50.get(r.cta_group, ())})) or None


@table("SHAPE_CONTEXTS", ("kind", "cta_group", "ws"), "bool", "Table 39")
def shape_contexts(kind: str, cta_group: int | None, ws: bool | None) -> bool | None:
    """True when Table 39 has a row for the kind under the context (None: any); else no entry."""
    return True if shape_rows(kind, cta_group, ws) else None


@table("M_UNION", ("kind",), "set:m", "Table 39")
def m_union(kind: str) -> tuple[int, ...]:
    """Every M of any row of the kind (what the M field's own check allows)."""
    return tuple(sorted(shape_union(kind, "m")))


@table("N_UNION", ("kind",), "set:n", "Table 39")
def n_union(kind: str) -> tuple[int, ...]:
    """Every N of any row of the kind (what the N field's own check allows)."""
    return tuple(sorted(shape_union(kind, "n")))


@table("WS_KINDS", (), "set:kind", "Table 39 (.ws rows)")
def ws_kinds() -> tuple[str, ...]:
    """The kinds tcgen05.mma.ws exists with, in PTX's order."""
    return tuple(k for k in KINDS if shape_rows(k, None, True))


@table("MMA_K", ("kind", "bool"), "int", "Table 39")
def mma_k_table(kind: str, sparse: bool) -> int:
    """The MMA's K for the kind, dense or sparse."""
    return mma_k(kind, sparse)


# -- Table 39's types, Table 52, the element sizes (tables/smem_atoms.toml) -----------------------


@table("TYPE_COMBOS", ("kind", "type", "type", "type", "type"), "bool", "Table 39; Table 55")
def type_combos(kind: str, atype: Any, btype: Any, dtype: Any, scale_type: Any) -> bool | None:
    """True for a row of Table 39's type combinations of the kind (atype, btype, dtype, scale type)."""
    return True if (atype, btype, dtype, scale_type) in kind_facts(kind).combos else None


@table("TYPE_COLUMN", ("kind", "type_column"), "set:type", "Table 39; Table 55")
def type_column(kind: str, column: int) -> tuple[Any, ...]:
    """The values column ``column`` (0 atype, 1 btype, 2 dtype, 3 scale type; None where the kind has
    none) takes in the kind's combinations."""
    return tuple(dict.fromkeys(cmb[column] for cmb in kind_facts(kind).combos))


@table("TYPE_COMBOS_TEXT", ("kind",), "text", "Table 39")
def type_combos_text(kind: str) -> str:
    """The kind's combinations with A and B of one type, as a finding lists them."""
    combos = kind_facts(kind).combos
    return "; ".join(sorted({f"{cmb[2]} <- {cmb[0]}" + (f" x {cmb[3]}" if cmb[3] else "")
                             for cmb in combos if cmb[0] == cmb[1]}))


@table("TYPE_BITS", ("type",), "int", "tables/smem_atoms.toml (element sizes)")
def type_bits(t: Any) -> int | None:
    """An element type's size in bits; None for a name that is not an element type."""
    return constraints().type_bits.get(t)


@table("SWIZZLES_FOR", ("type", "major"), "set:swizzle", "Table 52")
def swizzles_for(t: Any, major: Any) -> tuple[str, ...] | None:
    """The swizzle modes an operand of the type and major-ness may use; None when the type has no
    size, the major-ness is not known, or Table 52 allows none (IDESC-MAJOR-TYPE-SIZE's case)."""
    bits = constraints().type_bits.get(t)
    if bits is None or major is None:
        return None
    return constraints().swizzles_for(bits, major) or None


@table("MN_MAJOR_NOT", (), "set:type", "Table 52")
def mn_major_not() -> tuple[str, ...]:
    """The element types Table 52 gives no MN-major swizzle mode."""
    c = constraints()
    return tuple(t for t, bits in c.type_bits.items() if not c.swizzles_for(bits, "mn"))


@table("MN_MAJOR_BITS", (), "set:bits", "Table 52")
def mn_major_bits() -> tuple[int, ...]:
    """The element sizes Table 52 lets be MN-major."""
    return tuple(sorted({b for row in constraints().major_swizzle if row["major"] == "mn" for b in row["bits"]}))


@table("A_TMEM_MAJOR", (), "major", "Table 51")
def a_tmem_major() -> str:
    """A's major-ness when A is in tensor memory."""
    return str(constraints().a_tmem["a_major"])


# -- Tables 54/55 (scale vectors), the targets ---------------------------------------------------


@table("SCALED_KINDS", (), "set:kind", "Table 54")
def scaled_kinds() -> tuple[str, ...]:
    """The block-scaled kinds (those with [[scale_vec]] rows)."""
    return tuple(k for k in KINDS if scale_rows(k))


@table("SV_NAMES", ("kind",), "set:scale_vec", "Table 54; §9.7.16.10.9.1")
def sv_names(kind: str) -> tuple[str, ...]:
    """The scale vector sizes the kind takes (any K)."""
    return tuple(n for n in SCALE_VECS if scale_rows(kind, None, n))


@table("SV_NAMES_K", ("kind", "k"), "set:scale_vec", "Table 54")
def sv_names_k(kind: str, k: int | None) -> tuple[str, ...]:
    """The scale vector sizes the kind takes with the MMA's K (none for an unknown K)."""
    return tuple(n for n in SCALE_VECS if k is not None and scale_rows(kind, k, n))


@table("SV_SCALE_TYPES", ("scale_vec", "kind", "k"), "set:type", "Table 55")
def sv_scale_types(scale_vec: Any, kind: str, k: int | None) -> tuple[str, ...] | None:
    """The scale types of the first Table 54 row of the size, kind and K; None: no such row."""
    row = next((r for r in scale_rows(kind, None, scale_vec) if k in r["k"]), None) if scale_vec is not None else None
    return tuple(row["scale_types"]) if row is not None else None


@table("SF_IDS", ("kind", "k", "scale_vec"), "set:int", "§9.7.16.10.7.2-3 (E7)")
def sf_ids(kind: str, k: int | None, scale_vec: Any) -> tuple[int, ...] | None:
    """The scale factor IDs the rows of the kind, K and size (None: any size) allow; None: no row."""
    rows = scale_rows(kind, k, scale_vec) if k is not None else ()
    return tuple(sorted({i for r in rows for i in r["sf_ids"]})) if rows else None


@table("SUPPORTS", ("feature",), "set:arch", "§9.7.16.10.9.1 Target ISA notes ([[requires]])")
def supports(feature: str) -> tuple[str, ...]:
    """The targets that meet a feature's requirement list."""
    c = constraints()
    return tuple(a for a in c.targets if c.supports(a, feature))


@table("REQUIRES", ("feature",), "text", "§9.7.16.10.9.1 Target ISA notes ([[requires]])")
def requires(feature: str) -> str:
    """A feature's requirement list, as a finding names it."""
    return ", ".join(constraints().requires[feature])


# -- shared memory descriptor: §9.7.16.3.1.2.1, Table 41, Table 53 --------------------------------


@table("ABS_LBO_SWIZZLES", (), "set:swizzle", "§9.7.16.3.1.2.1 (1)")
def abs_lbo_swizzles() -> tuple[str, ...]:
    """The swizzle modes the absolute-address LBO mode takes."""
    return tuple(constraints().absolute_lbo["swizzles"])


@table("ABS_LBO_BASE_OFFSET", (), "int", "§9.7.16.3.1.2.1 (3)")
def abs_lbo_base_offset() -> int:
    """The base offset the absolute-address LBO mode needs."""
    return int(constraints().absolute_lbo["base_offset"])


@table("ABS_LBO_MAJOR", (), "major", "§9.7.16.3.1.2.1 (2)")
def abs_lbo_major() -> str:
    """The major-ness the absolute-address LBO mode takes."""
    return str(constraints().absolute_lbo["major"])


@table("PATTERN_BOUNDARY", ("smem_layout", "swizzle"), "int", "Table 41; §9.7.15.5.1.2.2")
def pattern_boundary_table(family: Any, swizzle: Any) -> int:
    """Bytes between a swizzle mode's pattern starts in the descriptor family (None: tcgen05's);
    0 without swizzling."""
    return pattern_boundary(swizzle, family or "smem_desc") if swizzle is not None else 0


@table("SWIZZLE_PERIOD", ("swizzle",), "int", "§9.7.16.3.3 (Swizzle<B,M,S>)")
def swizzle_period_table(swizzle: Any) -> int:
    """Bytes after which the swizzle pattern repeats (0: none)."""
    return swizzle_period(swizzle)


@table("SWIZZLE_ROW", ("swizzle",), "int", "§9.7.16.3.3 (Swizzle<B,M,S>)")
def swizzle_row_table(swizzle: Any) -> int:
    """Bytes of one row of the swizzle's atom (0: none)."""
    return swizzle_row(swizzle)


@table("MN_ATOM_K", ("swizzle",), "int", "Table 53")
def mn_atom_k(swizzle: Any) -> int | None:
    """The K rows of the swizzle's MN-major atom; None: no such atom."""
    shape = atoms().atoms.get((swizzle, "mn"))
    return shape.k if shape is not None else None


@table("PER_CHUNK", ("kind", "bits"), "int", "§9.7.16.10.4 (tables/smem_atoms.toml [[storage]])")
def per_chunk(kind: Any, bits: Any) -> int:
    """Elements of the size one 16-byte chunk holds under the kind's storage (0: not stored)."""
    return chunk_elements(kind, bits)


# -- zero-column mask (Table 45), tensor memory (§9.7.16.1, §9.7.16.7.1, §9.7.16.8.1) --------------


@table("ZCM_MS", (), "set:zcm_m", "§9.7.16.4.3")
def zcm_ms() -> tuple[int, ...]:
    """The M a zero-column mask may be used with."""
    return tuple(constraints().zcm["ms"])


@table("ZCM_MAX_SHIFT", ("zcm_m",), "int", "Table 45 (bits 56-61)")
def zcm_max_shift(m: Any) -> int | None:
    """The maximum column shift at M; None for an M without a limit."""
    limit = constraints().zcm["max_column_shift"].get(m)
    return None if limit is None else int(limit)


@table("SUBMASKS", ("zcm_m",), "int", "the table after Table 45")
def submasks(m: Any) -> int | None:
    """How many sub-masks M uses; None for an M the table lacks."""
    return submask_counts().get(m)


@table("TMEM_LANES", (), "int", "§9.7.16.1")
def tmem_lanes() -> int:
    """A CTA's tensor memory lanes."""
    return tmem_shape()[0]


@table("TMEM_COLUMNS", (), "int", "§9.7.16.1")
def tmem_columns() -> int:
    """A CTA's tensor memory columns."""
    return tmem_shape()[1]


@table("LANES_PER_WARP", (), "int", "§9.7.16.8.1")
def lanes_per_warp() -> int:
    """The lanes each warp of a warpgroup may access."""
    return tmem_shape()[0] // warps_per_warpgroup()


@table("ALLOC_SIZES", (), "set:int", "§9.7.16.7.1")
def alloc_sizes_table() -> tuple[int, ...]:
    """Every legal tcgen05.alloc nCols."""
    return alloc_sizes()


# -- Hopper wgmma (§9.7.15.2, §9.7.15.3; tables/wgmma_shapes.toml) --------------------------------


def _row_of(atype: Any, btype: Any) -> WgmmaTypes | None:
    return wgmma_table().row_of(atype, btype)


@table("WG_DTYPES", ("wgmma_type", "wgmma_type"), "set:type", "§9.7.15.3")
def wg_dtypes(atype: Any, btype: Any) -> tuple[str, ...] | None:
    """The accumulator types of the pair; None: §9.7.15.3 has no such pair."""
    row = wgmma_table().row(atype, btype)
    return row.dtypes if row is not None else None


@table("WG_ROW_ATYPES", ("wgmma_type", "wgmma_type"), "set:wgmma_type", "§9.7.15.3")
def wg_row_atypes(atype: Any, btype: Any) -> tuple[str, ...] | None:
    """A's types of the row of A's type (else B's); None: neither has a row."""
    row = _row_of(atype, btype)
    return row.atypes if row is not None else None


@table("WG_ROW_BTYPES", ("wgmma_type", "wgmma_type"), "set:wgmma_type", "§9.7.15.3")
def wg_row_btypes(atype: Any, btype: Any) -> tuple[str, ...] | None:
    """B's types of the row of A's type (else B's); None: neither has a row."""
    row = _row_of(atype, btype)
    return row.btypes if row is not None else None


@table("WG_ROW_NAME", ("wgmma_type", "wgmma_type"), "text", "§9.7.15.3")
def wg_row_name(atype: Any, btype: Any) -> str | None:
    """The row's A types as a finding names them (``f16``, ``e4m3/e5m2``)."""
    row = _row_of(atype, btype)
    return "/".join(row.atypes) if row is not None else None


@table("WG_TYPES", (), "set:wgmma_type", "§9.7.15.3")
def wg_types() -> tuple[str, ...]:
    """Every .atype / .btype a wgmma takes."""
    return wgmma_types()


@table("WG_COMBOS_TEXT", (), "text", "§9.7.15.3")
def wg_combos_text() -> str:
    """§9.7.15.3's combinations, as a finding lists them."""
    return "; ".join(f"{'/'.join(r.atypes)} x {'/'.join(r.btypes)} -> {', '.join(r.dtypes)}"
                     for r in wgmma_table().rows)


@table("WG_M", (), "int", "§9.7.15.2")
def wg_m() -> int:
    """Every wgmma shape's M."""
    return wgmma_table().m


@table("WG_K", ("wgmma_type", "wgmma_type", "bool"), "int", "§9.7.15.2 (E46)")
def wg_k(atype: Any, btype: Any, sparse: bool) -> int | None:
    """K of the row's dense or sparse shapes; None: no row, or no sparse form."""
    row = _row_of(atype, btype)
    return row.k_for(sparse) if row is not None else None


@table("WG_N", ("wgmma_type", "wgmma_type"), "set:n", "§9.7.15.2")
def wg_n(atype: Any, btype: Any) -> tuple[int, ...] | None:
    """N of the row's shapes; None: no row."""
    row = _row_of(atype, btype)
    return row.n if row is not None else None


@table("WG_TRANSPOSE", ("wgmma_type", "wgmma_type"), "bool", "§9.7.15.5.1.2")
def wg_transpose(atype: Any, btype: Any) -> bool | None:
    """Whether the row's operands may be transposed; None: no row."""
    row = _row_of(atype, btype)
    return row.transpose if row is not None else None


@table("WG_FLOATING", ("wgmma_type", "wgmma_type"), "bool", "§9.7.15.5.2")
def wg_floating(atype: Any, btype: Any) -> bool | None:
    """Whether the row is floating-point (imm-scale-a/b exist); None: no row."""
    row = _row_of(atype, btype)
    return row.floating if row is not None else None


@table("WG_SATFINITE", ("wgmma_type", "wgmma_type"), "bool", "§9.7.15.5.2")
def wg_satfinite(atype: Any, btype: Any) -> bool | None:
    """Whether the row takes .satfinite; None: no row."""
    row = _row_of(atype, btype)
    return row.satfinite if row is not None else None


@table("WG_SP_SEL", ("wgmma_type", "wgmma_type"), "set:int", "§9.7.15.6.3")
def wg_sp_sel(atype: Any, btype: Any) -> tuple[int, ...] | None:
    """The sp-sel values of the row's sparse form; None: no row, or no sparse form."""
    row = _row_of(atype, btype)
    return row.sp_sel if row is not None and row.sparse_k is not None else None


# -- PTX syntax (the scanner's instruction rules, Python only) -----------------------------------


@table("CP_MULTICAST", ("ptx_name",), "set:ptx_name", "§9.7.16.9.2")
def cp_multicast(shape: Any) -> tuple[str, ...] | None:
    """The multicast qualifiers a tcgen05.cp shape takes (empty: none); None: not a shape."""
    return constraints().cp_shapes.get(shape)


@table("COLLECTOR_BUFFER", ("ptx_name",), "ptx_name", "§9.7.16.10.9.1 (.collector_usage)")
def collector_buffer(collector: Any) -> str | None:
    """The collector buffer a ``.collector::BUFFER::OP`` qualifier names (``a``, ``b0``..``b3``)."""
    return str(collector).split("::")[0] if collector is not None else None


@table("TARGETS", (), "set:arch", "§9.7.16.10.9.1 and §9.7.16.9.2 Target ISA notes (E34)")
def targets() -> tuple[str, ...]:
    """The targets descgen knows for tcgen05."""
    return tuple(constraints().targets)


@table("WG_TARGETS", (), "set:ptx_name", "§9.7.15.5.2 and §9.7.15.6.3 Target ISA notes")
def wg_targets() -> tuple[str, ...]:
    """The targets that have wgmma.mma_async."""
    return tuple(wgmma_table().targets)


@table("PTX_VERSION", ("ptx_name",), "int", "PTX ISA notes of §9.7.16.10.9 and §9.7.16.9.2 ([[ptx_version]], E40)")
def ptx_version(feature: Any) -> int | None:
    """The PTX ISA version a feature (``tcgen05.mma``, ``.kind::mxf4nvf4``) needs, as 100 x major +
    minor; None: a feature without an entry."""
    row = constraints().ptx_versions.get(feature)
    return None if row is None else 100 * row[0][0] + row[0][1]


@table("PTX_VERSION_SOURCE", ("ptx_name",), "text", "[[ptx_version]] (E40)")
def ptx_version_source(feature: Any) -> str | None:
    """Where the PTX ISA notes give a feature's version."""
    row = constraints().ptx_versions.get(feature)
    return None if row is None else row[1]


# -- the text helpers of templates (Python renders messages) -------------------------------------


def _join(values: Any, sep: str = ", ") -> str:
    return sep.join(map(str, values)) if values else ""


def _shape_where(kind: str, sparse: bool, k: Any, cta_group: Any, ws: Any, own: bool) -> str:
    parts = [f".kind::{kind}", "sparse" if sparse else "dense", f"K = {k}"]
    if own:
        parts.append(f"cta_group::{cta_group}" if cta_group else "any cta_group")
        parts.append("any .ws" if ws is None else (".ws" if ws else "no .ws"))
    else:
        parts.append("any context")
    return ", ".join(parts)


def _shape_rows_text(kind: str, sparse: bool, k: Any) -> str:
    rows = (shape_case(kind, None, None, sparse, k) or ()) if k is not None else ()
    return "; ".join(f"cta_group::{r.cta_group}, {'.ws' if r.ws else 'no .ws'}, "
                     f"M = {describe_ints(r.m)}, N = {describe_ints(r.n)}"
                     for r in rows) or "none"


def _t50_text(kind: str, cta_group: Any, ws: Any, sparse: bool, k: Any, m: int, n: int) -> str:
    t50 = constraints().transpose_b_8bit
    rows = [r for r in (shape_case(kind, cta_group, ws, sparse, k) or ()) if m in r.m and n in r.n]
    return "; ".join(f"cta_group::{g}: {describe_ints(t50.get(g, ()))}" for g in sorted({r.cta_group for r in rows}))


def text_functions() -> dict[str, Callable[..., str]]:
    """The functions templates may call, by name (:data:`descgen.rules.language.TEXT_FUNCTIONS`)."""
    return {"join": _join, "describe_ints": lambda v: describe_ints(v or ()), "upper": lambda s: str(s).upper(),
            "text": lambda x: format(x, ""),
            "shape_where": _shape_where, "shape_rows_text": _shape_rows_text, "t50_text": _t50_text}
