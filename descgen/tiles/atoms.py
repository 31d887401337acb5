"""Element types, their storage and the Table 53 swizzle atoms (PTX ISA 9.1 §9.7.16.3,
§9.7.16.10.4, Tables 52 and 53; ``tables/smem_atoms.toml``), the descriptor family a target
selects with its own limits on the type (wgmma, ``sm_90a``: ``tables/wgmma_shapes.toml``), and the
checks of the names and extents the tile API takes (:mod:`descgen.tiles`)."""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, NoReturn, get_args

from ..core.errors import EncodeError, Finding, UsageError
from ..core.types import AtomOrder, ElementType, Kind, Major, Swizzle
from ..model.catalog import layout_finding
from ..model.facts import MAJORS, normalize_kind, smem_family, smem_target, smem_targets, swizzle_period
from ..model.loader import SMEM_LAYOUTS, atoms, shapes
from ..model.wgmma_facts import wgmma_table

__all__ = ["ATOM_ORDERS", "CHUNK", "ADDRESS_LIMIT", "SwizzleAtom", "swizzle_atom", "tile_family", "wgmma_k",
           "major_check", "raise_layout", "kinds_taking", "check_choice", "positive"]

#: How consecutive atoms follow each other in memory: neighbours along MN first (CuTe's
#: ``tile_to_shape`` with ``Step<_1,_2>``) or along K first.
ATOM_ORDERS: tuple[AtomOrder, ...] = get_args(AtomOrder)
CHUNK = 16  # bytes: the 128-bit element of §9.7.16.3
ADDRESS_LIMIT = 1 << 18  # Table 40: matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4


def tile_family(arch: Any, kind: Any, dtype: Any) -> str:
    """The descriptor family ``arch`` selects (:func:`descgen.model.facts.smem_family`), with the
    family's own limits on the type: wgmma (``sm_90a``) has no MMA kinds and reads the types of
    the types of ``tables/wgmma_shapes.toml`` (§9.7.15.3)."""
    family = smem_family(arch)
    if arch is not None and smem_target(arch) is None:
        raise_layout(UsageError, "LAYOUT-ARCH", "arch", arch, ", ".join(smem_targets()))
    if family != SMEM_LAYOUTS[0]:
        if kind is not None:
            raise_layout(UsageError, "LAYOUT-KIND-ARCH", "kind", kind, "None",
                         f"{arch} reads a wgmma descriptor: wgmma.mma_async has no .kind")
        types = wgmma_k()
        if dtype.__class__ is not str or dtype.lower() not in types:
            raise_layout(EncodeError, "LAYOUT-DTYPE-ARCH", "dtype", dtype, ", ".join(types),
                         f"wgmma.mma_async ({arch}) does not read {dtype!r} from shared memory")
    return family


def wgmma_k() -> dict[str, int]:
    """wgmma's shared-memory element types and the K of one dense instruction (§9.7.15.2,
    §9.7.15.3: ``tables/wgmma_shapes.toml``), the types the tile model knows (b1, K = 256, is not
    modelled: errata E44)."""
    elements = atoms().elements
    return {t: row.k for row in wgmma_table().rows for t in row.atypes if t in elements}


def major_check(atom: SwizzleAtom, family: str) -> Finding | None:
    """May the family read ``atom``'s type with its major-ness and swizzle? tcgen05: Table 52;
    wgmma: MN-major (imm-trans) only for the types with a transpose operand
    (``tables/wgmma_shapes.toml`` ``transpose``: f16/bf16), every swizzle."""
    if family == SMEM_LAYOUTS[0]:
        return _table52(atom)
    table = wgmma_table()
    row = table.row(atom.dtype)
    if atom.major == "k" or (row is not None and row.transpose):
        return None
    takes = sorted(t for r in table.rows if r.transpose for t in r.atypes)
    return layout_finding("LAYOUT-MAJOR-ARCH", "major", atom.major,
                          f"{', '.join(takes)} (MN-major); every type K-major",
                          f"wgmma.mma_async cannot transpose {atom.dtype} "
                          f"({row.source if row else table.source}: imm-trans-a/b exist for f16/bf16 only)")


def raise_layout(cls: type, code: str, field: str, value: Any, allowed: str, detail: str = "") -> NoReturn:
    """Raise the ``[[layout]]`` code ``code`` of ``tables/rules.toml`` (its rule and source), with
    ``detail`` saying what was found."""
    raise cls((layout_finding(code, field, value, allowed, detail),))


# --------------------------------------------------------------------------------------------
# Element types, storage and atoms.


@dataclass(frozen=True, slots=True)
class SwizzleAtom:
    """One Table 53 swizzle atom for one element type.

    Attributes:
        swizzle, major: the swizzle mode (Table 40 name) and ``"k"`` or ``"mn"``.
        dtype, kind: the element type and the MMA kind it was resolved for (None: any kind).
        element_bits: the type's size (4, 6, 8, 16, 32).
        per_chunk: T of §9.7.16.3.3, elements per 16-byte chunk (§9.7.16.10.4 for sub-byte types).
        bit_pitch: bits from one element to the next inside a chunk (the rest is padding).
        mn, k: the atom in elements, along MN and along K.
        rows, columns: the atom as rows of 16-byte columns (K-major: MN rows; MN-major: K rows).
        row_bytes, bytes: one row, the whole atom, in bytes.
        functor: ``(B, M, S)`` of CuTe's ``Swizzle<B,M,S>`` on byte addresses.
        source: the Table 53 row; storage_source: the §9.7.16.10.4 rule.
    """

    swizzle: Swizzle
    major: Major
    dtype: ElementType
    kind: Kind | None
    element_bits: int
    per_chunk: int
    bit_pitch: int
    mn: int
    k: int
    rows: int
    columns: int
    row_bytes: int
    bytes: int
    functor: tuple[int, int, int]
    source: str
    storage_source: str

    @property
    def swizzled(self) -> bool:
        return self.functor[0] > 0

    @property
    def cute_swizzle(self) -> str:
        return "Swizzle<{},{},{}>".format(*self.functor)

    @property
    def period(self) -> int:
        """Bytes after which the swizzle pattern repeats (:func:`descgen.model.facts.swizzle_period`);
        0 without swizzle."""
        return swizzle_period(self.swizzle)

    def as_dict(self) -> dict[str, Any]:
        return {
            "swizzle": self.swizzle, "major": self.major, "dtype": self.dtype, "kind": self.kind,
            "element_bits": self.element_bits, "per_chunk": self.per_chunk, "bit_pitch": self.bit_pitch,
            "mn": self.mn, "k": self.k, "rows": self.rows, "columns": self.columns,
            "row_bytes": self.row_bytes, "bytes": self.bytes, "swizzle_functor": self.cute_swizzle,
            "source": self.source, "storage_source": self.storage_source,
        }


def kinds_taking(dtype: str) -> tuple[Kind, ...]:
    """The MMA kinds whose A/B types include ``dtype`` (Table 39, ``tables/shapes.toml``)."""
    return tuple(dict.fromkeys(row["kind"] for row in shapes().types if dtype in row["ab"]))


def _storage(dtype: ElementType, kind: str | None) -> tuple[ElementType, Kind | None, int, Any]:
    """(dtype, kind, bits, storage rule), checked. Raises for an unknown type, a type the kind
    does not take, or a sub-byte type whose storage depends on a kind not given."""
    table = atoms()
    dtype = check_choice("LAYOUT-DTYPE-CODE", "dtype", dtype, tuple(table.elements),
                         "{!r} is not an A/B element type of any MMA kind")
    bits = table.elements[dtype][0]
    if kind is not None:
        kind = normalize_kind(kind)
        if kind not in kinds_taking(dtype):
            taken = sorted({t for row in shapes().types if row["kind"] == kind for t in row["ab"]})
            raise_layout(EncodeError, "LAYOUT-DTYPE-KIND", "dtype", dtype, ", ".join(taken),
                         f".kind::{kind} does not take {dtype} for A or B (Table 39, .kind::{kind})")
    kinds = (kind,) if kind is not None else kinds_taking(dtype)
    rules = {s for s in table.storage if s.bits == bits and (not s.kinds or set(kinds) & set(s.kinds))}
    if len({(s.per_chunk, s.pitch) for s in rules}) != 1:
        raise_layout(UsageError, "LAYOUT-KIND-REQUIRED", "kind", kind, ", ".join(kinds),
                     f"{dtype} is stored differently under {', '.join(f'.kind::{k}' for k in kinds)}: name the kind")
    return dtype, kind, bits, next(iter(rules))


def check_choice(code: str, field: str, value: Any, choices: tuple[str, ...], detail: str = "{!r} is not one") -> Any:
    """The tables' spelling of ``value`` among ``choices``, matched case-insensitively as every
    name the API takes is (``"128b"`` -> ``"128B"``); raises the layout code otherwise."""
    if value.__class__ is str:
        if value in choices:
            return value
        for choice in choices:
            if choice.lower() == value.lower():
                return choice
    raise_layout(EncodeError, code, field, value, ", ".join(choices), detail.format(value))


def _check_swizzle(swizzle: Any) -> Any:
    return check_choice("LAYOUT-SWIZZLE-CODE", "swizzle", swizzle, tuple(atoms().swizzles))


def swizzle_atom(*, dtype: ElementType, major: Major, swizzle: Swizzle, kind: Kind | None = None) -> SwizzleAtom:
    """The Table 53 swizzle atom of ``swizzle`` and ``major`` for elements of ``dtype``.

    Table 53 gives atoms in 128-bit elements; for ``dtype`` the leading (contiguous) dimension
    holds T = :attr:`SwizzleAtom.per_chunk` elements per 16-byte chunk (§9.7.16.3.3;
    §9.7.16.10.4 for 4- and 6-bit types, where ``kind`` decides). This is Table 53 alone: whether
    Table 52 allows the combination is :func:`descgen.tiles.descriptor.smem_for_tile`'s check.

    Args:
        dtype: A/B element type (``f16``, ``bf16``, ``tf32``, ``e4m3``, ``e5m2``, ``e2m3``,
            ``e3m2``, ``e2m1``, ``s8``, ``u8``).
        major: ``"k"`` (K-major) or ``"mn"`` (MN-major).
        swizzle: ``none``, ``128B_base32B``, ``128B``, ``64B`` or ``32B``.
        kind: the MMA kind; required for ``e2m1`` (f8f6f4/mxf8f6f4 pad, mxf4/mxf4nvf4 pack).

    Raises:
        EncodeError: unknown type, major-ness or swizzle (``LAYOUT-*-CODE``), a type the kind does
            not take (``LAYOUT-DTYPE-KIND``), no Table 53 atom (``LAYOUT-SWIZZLE-MAJOR``: 128B with
            32B atomicity is MN-major only).
        UsageError: unknown kind; ``LAYOUT-KIND-REQUIRED`` for ``e2m1`` without a kind.
    """
    dtype, kind, bits, rule = _storage(dtype, kind)
    major = check_choice("LAYOUT-MAJOR-CODE", "major", major, MAJORS)
    swizzle = _check_swizzle(swizzle)
    table = atoms()
    shape = table.atoms.get((swizzle, major))
    if shape is None:
        ok = ", ".join(s for (s, m) in table.atoms if m == major)
        raise_layout(EncodeError, "LAYOUT-SWIZZLE-MAJOR", "swizzle", swizzle, ok,
                     f"Table 53 has no {'K' if major == 'k' else 'MN'}-major atom for {swizzle}")
    f = table.swizzles[swizzle]
    if major == "k":
        rows, columns, mn, k = shape.mn, shape.k, shape.mn, shape.k * rule.per_chunk
    else:
        rows, columns, mn, k = shape.k, shape.mn, shape.mn * rule.per_chunk, shape.k
    return SwizzleAtom(swizzle, major, dtype, kind, bits, rule.per_chunk, rule.pitch, mn, k, rows, columns,
                       columns * CHUNK, rows * columns * CHUNK, (f.b, f.m, f.s), shape.source, rule.source)


def _table52(atom: SwizzleAtom) -> Finding | None:
    """Table 52: may ``atom.element_bits`` use ``atom.swizzle`` with this major-ness?"""
    rows = [c for c in atoms().combinations if c.major == atom.major]
    if any(atom.element_bits in c.bits and atom.swizzle in c.swizzles for c in rows):
        return None
    allowed = "; ".join(f"{'/'.join(map(str, c.bits))}-bit: {', '.join(c.swizzles)}" for c in rows)
    what = "K-major" if atom.major == "k" else "MN-major (transposed)"
    note = " (errata E18)" if atom.major == "mn" and atom.element_bits < 8 else ""
    return layout_finding("LAYOUT-TABLE52", "swizzle", atom.swizzle, allowed,
                          f"{atom.element_bits}-bit {atom.dtype} {what} cannot use {atom.swizzle} swizzling{note}")


def positive(name: str, value: Any) -> int:
    """A tile extent (``mn``, ``k``) in elements, checked: a positive integer (``LAYOUT-MN-RANGE``...)."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__") or operator.index(value) <= 0:
        raise_layout(EncodeError, f"LAYOUT-{name.upper()}-RANGE", name, value, "a positive integer (elements)")
    return operator.index(value)
