"""Operand tiles in shared memory and the descriptors that describe them (PTX ISA 9.1 §9.7.16.3,
§9.7.16.10.3-6, Tables 52 and 53).

Two directions, one model:

- :func:`smem_for_tile`: an ``mn`` x ``k`` tile of ``dtype`` stored as Table 53 swizzle atoms ->
  the descriptor word, LBO, SBO, base offset, and why (:class:`TileDescriptor`);
- :func:`smem_layout`: a descriptor word -> the shared-memory address of every element the
  tensor core reads, with the checks that explain wrong reads (:class:`SmemLayout`);
- :func:`advance_smem`: step a word's start address along K without wrapping.

Both shared memory descriptor families read these canonical layouts: tcgen05's (§9.7.16.3, the
default) and Hopper wgmma's (``arch="sm_90a"``: §9.7.15.5.1.2.1, the same layouts without 128B
with 32-byte atomicity, for wgmma's element types; the word is then a wgmma descriptor,
§9.7.15.5.1.2.2). The address model (errata E9, measured on Hopper tensor cores with these canonical
layouts): an element's byte address is ``a ^ ((((a >> (M+S)) - base_offset) & (2**B - 1)) << M)``
with ``a`` = start address + the §9.7.16.3.3 canonical-layout offset of its 16-byte chunk and
``Swizzle<B,M,S>`` the mode's functor (M + S = 7 for every mode: the pattern row is address bits
7 and up). Sub-byte elements also have a bit position inside their byte (:meth:`SmemLayout.bit`).
The data (Table 53 atoms, Table 52, storage rules) is ``tables/smem_atoms.toml``.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, NoReturn, get_args

from .model.catalog import layout_finding
from .model.engine import check_rule, finding_code
from .core.errors import EncodeError, Finding, UsageError
from .model.facts import (MAJORS, mma_k, normalize_kind, pattern_boundary, skewed_stride, smem_family, smem_target,
                    smem_targets, swizzle_period)
from .model.loader import SMEM_LAYOUTS, atoms, layout, shapes
from .words.smem import decode_smem, encode_smem
from .core.types import AtomOrder, ElementType, Kind, Major, SmemArch, Swizzle
from .model.wgmma_facts import wgmma_table
from .words.wgmma_smem import decode_wgmma_smem, encode_wgmma_smem

__all__ = [
    "ATOM_ORDERS",
    "MAJORS",
    "SwizzleAtom",
    "TileDescriptor",
    "SmemLayout",
    "swizzle_atom",
    "smem_for_tile",
    "smem_layout",
    "advance_smem",
]

#: How consecutive atoms follow each other in memory: neighbours along MN first (CuTe's
#: ``tile_to_shape`` with ``Step<_1,_2>``) or along K first.
ATOM_ORDERS: tuple[AtomOrder, ...] = get_args(AtomOrder)
CHUNK = 16  # bytes: the 128-bit element of §9.7.16.3
ADDRESS_LIMIT = 1 << 18  # Table 40: matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4
_MAX_ELEMENTS = 1 << 20
#: Per family (its layout), where the text defines: the canonical layouts, LBO, SBO, and the K of
#: one MMA per type.
_SOURCES = {"smem_desc": ("§9.7.16.3.3", "§9.7.16.3.1.1", "§9.7.16.3.2", "Table 39"),
            "wgmma_smem_desc": ("§9.7.15.5.1.2.1.3", "§9.7.15.5.1.2.1.1", "§9.7.15.5.1.2.1.2", "§9.7.15.2")}


def _family(arch: Any, kind: Any, dtype: Any) -> str:
    """The descriptor family ``arch`` selects (:func:`descgen.model.facts.smem_family`), with the
    family's own limits on the type: wgmma (``sm_90a``) has no MMA kinds and reads the types of
    the types of ``tables/wgmma_shapes.toml`` (§9.7.15.3)."""
    family = smem_family(arch)
    if arch is not None and smem_target(arch) is None:
        _raise(UsageError, "LAYOUT-ARCH", "arch", arch, ", ".join(smem_targets()))
    if family != SMEM_LAYOUTS[0]:
        if kind is not None:
            _raise(UsageError, "LAYOUT-KIND-ARCH", "kind", kind, "None",
                   f"{arch} reads a wgmma descriptor: wgmma.mma_async has no .kind")
        types = _wgmma_k()
        if dtype.__class__ is not str or dtype.lower() not in types:
            _raise(EncodeError, "LAYOUT-DTYPE-ARCH", "dtype", dtype, ", ".join(types),
                   f"wgmma.mma_async ({arch}) does not read {dtype!r} from shared memory")
    return family


def _wgmma_k() -> dict[str, int]:
    """wgmma's shared-memory element types and the K of one dense instruction (§9.7.15.2,
    §9.7.15.3: ``tables/wgmma_shapes.toml``), the types the tile model knows (b1, K = 256, is not
    modelled: errata E44)."""
    elements = atoms().elements
    return {t: row.k for row in wgmma_table().rows for t in row.atypes if t in elements}


def _major_check(atom: SwizzleAtom, family: str) -> Finding | None:
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
    return layout_finding("LAYOUT-MAJOR-ARCH", "major", atom.major, f"{', '.join(takes)} (MN-major); every type K-major",
                          f"wgmma.mma_async cannot transpose {atom.dtype} "
                          f"({row.source if row else table.source}: imm-trans-a/b exist for f16/bf16 only)")


def _raise(cls: type, code: str, field: str, value: Any, allowed: str, detail: str = "") -> NoReturn:
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


def _kinds_taking(dtype: str) -> tuple[Kind, ...]:
    """The MMA kinds whose A/B types include ``dtype`` (Table 39, ``tables/shapes.toml``)."""
    return tuple(dict.fromkeys(row["kind"] for row in shapes().types if dtype in row["ab"]))


def _storage(dtype: ElementType, kind: str | None) -> tuple[ElementType, Kind | None, int, Any]:
    """(dtype, kind, bits, storage rule), checked. Raises for an unknown type, a type the kind
    does not take, or a sub-byte type whose storage depends on a kind not given."""
    table = atoms()
    dtype = _check_choice("LAYOUT-DTYPE-CODE", "dtype", dtype, tuple(table.elements),
                          "{!r} is not an A/B element type of any MMA kind")
    bits = table.elements[dtype][0]
    if kind is not None:
        kind = normalize_kind(kind)
        if kind not in _kinds_taking(dtype):
            taken = sorted({t for row in shapes().types if row["kind"] == kind for t in row["ab"]})
            _raise(EncodeError, "LAYOUT-DTYPE-KIND", "dtype", dtype, ", ".join(taken),
                   f".kind::{kind} does not take {dtype} for A or B (Table 39, .kind::{kind})")
    kinds = (kind,) if kind is not None else _kinds_taking(dtype)
    rules = {s for s in table.storage if s.bits == bits and (not s.kinds or set(kinds) & set(s.kinds))}
    if len({(s.per_chunk, s.pitch) for s in rules}) != 1:
        _raise(UsageError, "LAYOUT-KIND-REQUIRED", "kind", kind, ", ".join(kinds),
               f"{dtype} is stored differently under {', '.join(f'.kind::{k}' for k in kinds)}: name the kind")
    return dtype, kind, bits, next(iter(rules))


def _check_choice(code: str, field: str, value: Any, choices: tuple[str, ...], detail: str = "{!r} is not one") -> Any:
    """The tables' spelling of ``value`` among ``choices``, matched case-insensitively as every
    name the API takes is (``"128b"`` -> ``"128B"``); raises the layout code otherwise."""
    if value.__class__ is str:
        if value in choices:
            return value
        for choice in choices:
            if choice.lower() == value.lower():
                return choice
    _raise(EncodeError, code, field, value, ", ".join(choices), detail.format(value))


def _check_swizzle(swizzle: Any) -> Any:
    return _check_choice("LAYOUT-SWIZZLE-CODE", "swizzle", swizzle, tuple(atoms().swizzles))


def swizzle_atom(*, dtype: ElementType, major: Major, swizzle: Swizzle, kind: Kind | None = None) -> SwizzleAtom:
    """The Table 53 swizzle atom of ``swizzle`` and ``major`` for elements of ``dtype``.

    Table 53 gives atoms in 128-bit elements; for ``dtype`` the leading (contiguous) dimension
    holds T = :attr:`SwizzleAtom.per_chunk` elements per 16-byte chunk (§9.7.16.3.3;
    §9.7.16.10.4 for 4- and 6-bit types, where ``kind`` decides). This is Table 53 alone: whether
    Table 52 allows the combination is :func:`smem_for_tile`'s check.

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
    major = _check_choice("LAYOUT-MAJOR-CODE", "major", major, MAJORS)
    swizzle = _check_swizzle(swizzle)
    table = atoms()
    shape = table.atoms.get((swizzle, major))
    if shape is None:
        ok = ", ".join(s for (s, m) in table.atoms if m == major)
        _raise(EncodeError, "LAYOUT-SWIZZLE-MAJOR", "swizzle", swizzle, ok,
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


# --------------------------------------------------------------------------------------------
# The canonical layouts of §9.7.16.3.3 and the read address.


def _strides(atom: SwizzleAtom, lbo: int, sbo: int) -> tuple[int, int]:
    """(MN-direction stride, K-direction stride) in bytes, as LBO and SBO mean them for this
    major-ness and swizzle (§9.7.16.3.1-2; MN-major without swizzle swaps the roles: errata E28).
    K-major swizzled layouts have no K-direction stride (LBO is not used): 0."""
    if atom.major == "k":
        return sbo, (lbo if not atom.swizzled else 0)
    return (sbo, lbo) if not atom.swizzled else (lbo, sbo)


def _fields(atom: SwizzleAtom, mn_stride: int, k_stride: int) -> tuple[int, int]:
    """(LBO, SBO) for strides along MN and K: the inverse of :func:`_strides`; K-major swizzled
    layouts get LBO 16 bytes, "assumed to be 1" (errata E8)."""
    if atom.major == "k":
        return (k_stride if not atom.swizzled else CHUNK), mn_stride
    return (k_stride, mn_stride) if not atom.swizzled else (mn_stride, k_stride)


def _canonical(atom: SwizzleAtom) -> str:
    """§9.7.16.3.3's canonical layout for the atom's mode, in its notation."""
    s, r = atom.columns, atom.rows
    if atom.major == "k":
        return f"((8,m),(T,2k)):(({s}T,SBO),(1,{'LBO' if not atom.swizzled else 'T'}))"
    if not atom.swizzled:
        return "((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))"
    return f"((T,{s},m),({r},k)):((1,T,LBO),({s}T,SBO))"


def _exact(atom: SwizzleAtom, mn: int, k: int, lbo: int, sbo: int) -> str:
    """The canonical layout with T, m, k and the strides filled in (strides in elements), as the
    §9.7.16.3.3 examples print their "Exact layout"."""
    t = atom.per_chunk
    el: Callable[[int], int] = lambda nbytes: nbytes * t // CHUNK  # noqa: E731 - bytes -> elements
    s, r = atom.columns, atom.rows
    if atom.major == "k":
        k_stride = el(lbo) if not atom.swizzled else t
        layout = f"((8,{_ceil(mn, 8)}),({t},{_ceil(k, t)})):(({s * t},{el(sbo)}),(1,{k_stride}))"
    elif not atom.swizzled:
        layout = f"(({t},1,{_ceil(mn, t)}),(8,{_ceil(k, 8)})):((1,{t},{el(sbo)}),({t},{el(lbo)}))"
    else:
        layout = f"(({t},{s},{_ceil(mn, s * t)}),({r},{_ceil(k, r)})):((1,{t},{el(lbo)}),({s * t},{el(sbo)}))"
    return f"{atom.cute_swizzle} o {layout}"


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _read_address(atom: SwizzleAtom, a: int, base_offset: int) -> int:
    """The address model of errata E9: ``a ^ ((((a >> (M+S)) - base_offset) & (2**B - 1)) << M)``."""
    b, m, s = atom.functor
    return a ^ ((((a >> (m + s)) - base_offset) & ((1 << b) - 1)) << m)


def _atom_findings(atom: SwizzleAtom, start: int, lbo: int, sbo: int, base_offset: int, mn: int, k: int) -> list[Finding]:
    """Swizzled atoms that do not line up with the swizzle pattern (warnings) and reads that run
    past the end of an atom row (error). No swizzle: core matrices need only 16-byte alignment."""
    if not atom.swizzled:
        return []
    found = []
    period, w = atom.period, atom.row_bytes
    origin = start - start % w
    if (origin - base_offset * 128) % period:
        row = (origin - base_offset * 128) % period // w
        found.append(layout_finding(
            "LAYOUT-ATOM-PHASE", "start_address", start,
            f"an address whose atom row is row 0 of the pattern: (start - 128 * base_offset) mod {period} < {w}",
            f"the first atom starts at row {row} of the {period}-byte {atom.swizzle} pattern (base offset {base_offset}); "
            "align the tile or set the base offset from where the pattern starts"))
    mn_stride, k_stride = _strides(atom, lbo, sbo)
    # (stride, groups it steps between, bytes of an atom row each group reads): E47's test
    if atom.major == "k":
        steps = [("sbo", mn_stride, _ceil(mn, 8), _ceil(k, atom.per_chunk) * CHUNK)]
    else:
        across = min(_ceil(min(mn, atom.mn), atom.per_chunk) * CHUNK, w)
        steps = [("lbo", mn_stride, _ceil(mn, atom.mn), across), ("sbo", k_stride, _ceil(k, atom.k), across)]
    for name, stride, groups, window in steps:
        if skewed_stride(stride, atom.swizzle, groups, window, start):
            found.append(layout_finding(
                "LAYOUT-ATOM-STRIDE", name, stride,
                f"a multiple of {period} bytes, or a step that keeps every group inside one {w}-byte atom row",
                f"{name.upper()} steps between {groups} groups of {window} bytes of an atom row from byte {start % w}; "
                f"{stride} bytes is neither a whole number of {period}-byte swizzle patterns (the next atom, on the same "
                f"rows' phase) nor a step inside one {w}-byte atom row (slice-K), so the groups read a layout no tile has "
                "(errata E47)"))
    contiguous = k if atom.major == "k" else min(mn, atom.mn)
    span = start % w + _ceil(contiguous, atom.per_chunk) * CHUNK
    if span > w:
        what = "K" if atom.major == "k" else "MN"
        hint = ("LBO is not used by K-major swizzled layouts, so one descriptor covers one atom along K; advance the "
                "start address to the next atom (advance_smem)" if atom.major == "k" else "start the descriptor at an "
                "atom row, or read fewer MN elements")
        found.append(layout_finding(
            "LAYOUT-ROW-SPAN", "k" if atom.major == "k" else "mn", contiguous,
            f"at most {(w - start % w) // CHUNK * atom.per_chunk} elements from this start",
            f"the read runs {span - w} bytes past the end of the {w}-byte {what} row of the {atom.swizzle} atom; {hint}"))
    return found


# --------------------------------------------------------------------------------------------
# From a tile to a descriptor.


@dataclass(frozen=True, slots=True)
class TileDescriptor:
    """A shared memory descriptor built from a tile, with the reasoning. Offsets in **bytes**.

    Attributes:
        word: the 64-bit descriptor (:func:`descgen.encode_smem`), for the tile's first descriptor
            span (:attr:`descriptor_k` columns of K from :attr:`start_address`).
        dtype, kind, major, swizzle, mn, k, start_address, pattern_start, atom_order: as asked.
        lbo, sbo: the encoded leading / stride dimension byte offsets; ``lbo_meaning``,
            ``sbo_meaning`` say what each is here.
        base_offset: the encoded base offset (0-7, Table 41).
        atom: the Table 53 atom (elements, rows x 16-byte columns, bytes).
        repeats: atoms along (MN, K).
        mn_step, k_step: bytes between neighbouring atoms along MN and along K.
        descriptor_k: K elements one descriptor reads: the whole tile, except K-major swizzled
            layouts, which reach one atom along K (step on with :meth:`k_offset`).
        mma_k: K of one dense MMA for this type (Table 39), elements.
        canonical: §9.7.16.3.3's canonical layout for the mode (``Swizzle<..> o ((8,m),(T,2k)):...``).
        cute: that layout with T, m, k and the strides filled in, strides in elements, over the
            whole tile, as §9.7.16.3.3's examples print "Exact layout".
        tile_cute: the tile as stored (differs from ``cute`` where the descriptor cannot reach the
            tile's second K atom: K-major swizzled).
        reasoning: sentences, in order: element storage, atom, tiling, SBO, LBO, K reach, base
            offset, layout.
        findings: warnings (e.g. ``LAYOUT-ATOM-PHASE``); errors raise instead.
        descriptor: which descriptor ``word`` is: ``"smem"`` (tcgen05, Table 40) or
            ``"wgmma_smem"`` (Hopper wgmma, §9.7.15.5.1.2.2; ``arch="sm_90a"``).
    """

    word: int
    dtype: str
    kind: str | None
    major: str
    swizzle: str
    mn: int
    k: int
    start_address: int
    pattern_start: int | None
    atom_order: str
    lbo: int
    sbo: int
    base_offset: int
    lbo_meaning: str
    sbo_meaning: str
    atom: SwizzleAtom
    repeats: tuple[int, int]
    mn_step: int
    k_step: int
    descriptor_k: int
    mma_k: int
    canonical: str
    cute: str
    tile_cute: str
    reasoning: tuple[str, ...]
    findings: tuple[Finding, ...]
    descriptor: str = "smem"

    @property
    def hex(self) -> str:
        return f"{self.word:#018x}"

    def k_offset(self, j: int) -> int:
        """Bytes to add to the start address (:func:`advance_smem`) for a descriptor whose first K
        column is tile column ``j``: atoms along K are ``k_step`` apart; inside a K-major atom
        row, 16-byte columns are 16 bytes apart (before the swizzle, which acts on the absolute
        address, so the base offset stays).

        Raises:
            UsageError: ``j`` outside the tile, or not where a descriptor can start (a 16-byte
                column for K-major, an atom's first row for MN-major).
        """
        a = self.atom
        unit = a.per_chunk if a.major == "k" else a.k
        if isinstance(j, bool) or not isinstance(j, int) or not 0 <= j < self.k or j % unit:
            _raise(UsageError, "LAYOUT-K-OFFSET", "j", j, f"0..{self.k - 1} step {unit}",
                   f"this {'K' if a.major == 'k' else 'MN'}-major tile's descriptors start every {unit} elements of K")
        return _k_offset(a, self.k_step, j)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (the word as a hex string)."""
        return {
            "word": self.hex, "dtype": self.dtype, "kind": self.kind, "major": self.major,
            "swizzle": self.swizzle, "tile": [self.mn, self.k], "start_address": self.start_address,
            "pattern_start": self.pattern_start, "atom_order": self.atom_order,
            "lbo": {"bytes": self.lbo, "field": self.lbo >> 4, "meaning": self.lbo_meaning},
            "sbo": {"bytes": self.sbo, "field": self.sbo >> 4, "meaning": self.sbo_meaning},
            "base_offset": self.base_offset, "atom": self.atom.as_dict(), "repeats": list(self.repeats),
            "mn_step": self.mn_step, "k_step": self.k_step, "descriptor_k": self.descriptor_k,
            "mma_k": self.mma_k, "canonical": self.canonical, "cute": self.cute, "tile_cute": self.tile_cute,
            "reasoning": list(self.reasoning), "findings": [f.as_dict() for f in self.findings],
            **({"descriptor": self.descriptor} if self.descriptor != "smem" else {}),
        }


def _k_offset(atom: SwizzleAtom, k_step: int, j: int) -> int:
    """Bytes from the tile's first K column to column ``j``: whole atoms are ``k_step`` apart; a
    K-major swizzled atom row holds its 16-byte columns 16 bytes apart."""
    within = (j % atom.k) // atom.per_chunk * CHUNK if atom.major == "k" and atom.swizzled else 0
    return j // atom.k * k_step + within


def _positive(name: str, value: Any) -> int:
    if isinstance(value, bool) or not hasattr(type(value), "__index__") or operator.index(value) <= 0:
        _raise(EncodeError, f"LAYOUT-{name.upper()}-RANGE", name, value, "a positive integer (elements)")
    return operator.index(value)


def _base_offset(atom: SwizzleAtom, pattern_start: Any) -> tuple[int, str]:
    """(base offset, the sentence that says why)."""
    if not atom.swizzled:
        extra = f" (pattern_start {pattern_start:#x} does not apply)" if isinstance(pattern_start, int) else ""
        return 0, f"Base offset 0: without swizzling the base offset is not used{extra} (errata E9)."
    if pattern_start is None:
        return 0, ("Base offset 0: no pattern_start given, so the swizzle pattern is on absolute address bits, as TMA "
                   "and CuTe write it (Table 41; errata E9).")
    if isinstance(pattern_start, bool) or not isinstance(pattern_start, int) or not 0 <= pattern_start < ADDRESS_LIMIT \
            or pattern_start % 128:
        _raise(EncodeError, "LAYOUT-PATTERN-START-ALIGN", "pattern_start", pattern_start,
               "0..0x3ff80, a multiple of 128")
    boundary = pattern_boundary(atom.swizzle)
    if pattern_start % boundary == 0:
        return 0, (f"Base offset 0: the pattern starts at {pattern_start:#x}, on a {boundary}-byte boundary "
                   "(Table 41).")
    bo = (pattern_start >> 7) & 7
    return bo, (f"Base offset {bo}: the pattern starts at {pattern_start:#x}, off its {boundary}-byte boundary: "
                f"({pattern_start:#x} >> 7) & 7 = {bo} (Table 41).")


def _mma_k(dtype: str, kind: str | None) -> int:
    """K of one dense MMA on ``dtype`` (Table 39); the same for every kind that stores it alike."""
    kinds = (kind,) if kind else _kinds_taking(dtype)
    return min(mma_k(k, False) for k in kinds)


def smem_for_tile(
    *,
    dtype: ElementType,
    major: Major,
    swizzle: Swizzle,
    mn: int,
    k: int,
    start_address: int,
    pattern_start: int | None = None,
    atom_order: AtomOrder = "mn_first",
    kind: Kind | None = None,
    arch: SmemArch | None = None,
) -> TileDescriptor:
    """The shared memory descriptor of an operand tile, and the reasoning behind every field.

    The tile is ``mn`` x ``k`` elements of ``dtype`` (A: M x K, B: N x K; under ``cta_group::2``
    each CTA's own half, see docs/layouts.md) stored as Table 53 swizzle atoms repeated along MN
    and K, starting at ``start_address``. ``atom_order="mn_first"``: consecutive atoms in memory
    are neighbours along MN (CuTe ``tile_to_shape`` with ``Step<_1,_2>``); ``"k_first"``:
    neighbours along K. LBO and SBO follow §9.7.16.3.1-2 for the major-ness and swizzle; a stride
    the tile never uses (one atom in that direction) is written 0, as CUTLASS does; the K-major
    swizzled LBO is 16 bytes ("assumed to be 1", errata E8). The word describes the tile from its
    first K column; :meth:`TileDescriptor.k_offset` and :func:`advance_smem` reach the others.

    Args:
        dtype: A/B element type (``f16``, ``bf16``, ``tf32``, ``e4m3``, ``e5m2``, ``e2m3``,
            ``e3m2``, ``e2m1``, ``s8``, ``u8``).
        major: ``"k"`` or ``"mn"``.
        swizzle: ``none``, ``128B_base32B``, ``128B``, ``64B`` or ``32B``.
        mn, k: the tile in **elements**; multiples of the atom's MN and K extents.
        start_address: the tile's first byte in shared memory (16-byte aligned, below 256 KiB;
            swizzled: a multiple of the atom row, 32/64/128 bytes).
        pattern_start: byte address where the repeating swizzle pattern starts (a multiple of
            128). None: the data is swizzled on absolute addresses (TMA, CuTe): base offset 0.
        atom_order: ``"mn_first"`` or ``"k_first"``.
        kind: MMA kind; required for ``e2m1`` (§9.7.16.10.4: f8f6f4/mxf8f6f4 pad 16 elements
            into a 16-byte chunk, mxf4/mxf4nvf4 pack two per byte).
        arch: the target, optional. ``"sm_90a"``: the word is a Hopper ``wgmma`` descriptor
            (:func:`descgen.encode_wgmma_smem`, §9.7.15.5.1.2.2) for the same canonical layouts
            (§9.7.15.5.1.2.1; types f16, bf16, tf32, e4m3, e5m2, s8, u8; no ``kind``; no
            ``128B_base32B``); a tcgen05 target or None: a tcgen05 descriptor.

    Returns:
        A :class:`TileDescriptor` (``.word``, ``.lbo``/``.sbo`` in bytes, ``.reasoning``, ...).

    Raises:
        EncodeError: ``LAYOUT-TABLE52`` (type size x major-ness x swizzle not in Table 52),
            ``LAYOUT-SWIZZLE-MAJOR`` (no Table 53 atom), ``LAYOUT-MN-ATOM``/``LAYOUT-K-ATOM``
            (tile not a whole number of atoms), ``LAYOUT-TILE-RANGE`` (tile past 256 KiB),
            ``LAYOUT-START-ROW`` (a swizzled tile starting inside an atom row),
            ``LAYOUT-PATTERN-START-ALIGN``, ``LAYOUT-ATOM-ORDER-CODE``, ``LAYOUT-DTYPE-*``,
            ``SMEM-*`` from :func:`descgen.encode_smem` (misaligned start, stride too large);
            with ``arch="sm_90a"``: ``LAYOUT-DTYPE-ARCH`` (not a wgmma type), ``WGMMA-SMEM-*``.
        UsageError: unknown kind; ``LAYOUT-KIND-REQUIRED``; ``LAYOUT-ARCH`` (unknown target);
            ``LAYOUT-KIND-ARCH`` (a kind with ``sm_90a``).
    """
    family = _family(arch, kind, dtype)
    wgmma = family != SMEM_LAYOUTS[0]
    if wgmma:
        swizzle = _check_choice("LAYOUT-SWIZZLE-CODE", "swizzle", swizzle,
                                tuple(layout(family).field("swizzle").codes(None)), "{!r} is not a wgmma swizzle mode")
    atom = swizzle_atom(dtype=dtype, major=major, swizzle=swizzle, kind=kind)
    dtype, major, swizzle = atom.dtype, atom.major, atom.swizzle  # the tables' spelling
    problem = _major_check(atom, family)
    if problem is not None:
        raise EncodeError((problem,))
    mn, k = _positive("mn", mn), _positive("k", k)
    atom_order = _check_choice("LAYOUT-ATOM-ORDER-CODE", "atom_order", atom_order, ATOM_ORDERS)
    for name, extent, unit in (("mn", mn, atom.mn), ("k", k, atom.k)):
        if extent % unit:
            _raise(EncodeError, f"LAYOUT-{name.upper()}-ATOM", name, extent, f"a multiple of {unit}",
                   f"the {atom.swizzle} {major.upper()}-major atom of {atom.dtype} is {atom.mn} x {atom.k} elements "
                   f"(MN x K; {atom.source})")
    if atom.swizzled and isinstance(start_address, int) and start_address % CHUNK == 0 and start_address % atom.row_bytes:
        _raise(EncodeError, "LAYOUT-START-ROW", "start_address", start_address, f"a multiple of {atom.row_bytes}",
               f"a {atom.swizzle} tile is made of {atom.row_bytes}-byte swizzle rows; this one starts "
               f"{start_address % atom.row_bytes} bytes into a row")
    n_mn, n_k = mn // atom.mn, k // atom.k
    mn_step, k_step = (atom.bytes, atom.bytes * n_mn) if atom_order == "mn_first" else (atom.bytes * n_k, atom.bytes)
    total = atom.bytes * n_mn * n_k
    if isinstance(start_address, int) and not isinstance(start_address, bool) and start_address + total > ADDRESS_LIMIT:
        _raise(EncodeError, "LAYOUT-TILE-RANGE", "start_address", start_address, f"0..{ADDRESS_LIMIT - total:#x}",
               f"the {total}-byte tile would end at {start_address + total:#x}")
    bo, bo_why = _base_offset(atom, pattern_start)

    # A stride the tile never takes is 0.
    lbo, sbo = _fields(atom, mn_step if n_mn > 1 else 0, k_step if n_k > 1 else 0)
    if wgmma:
        word = encode_wgmma_smem(start_address=start_address, lbo=lbo, sbo=sbo, swizzle=swizzle,  # type: ignore[arg-type]
                                 base_offset=bo)  # (a wgmma mode: checked above)
    else:
        word = encode_smem(start_address=start_address, lbo=lbo, sbo=sbo, swizzle=swizzle, base_offset=bo)

    descriptor_k = atom.k if (major == "k" and atom.swizzled) else k
    cute = _exact(atom, mn, k, lbo, sbo)
    tile_cute = cute
    if descriptor_k < k:
        t, s = atom.per_chunk, atom.columns
        tile_cute = (f"{atom.cute_swizzle} o ((8,{n_mn * atom.mn // 8}),({t},{s},{n_k})):"
                     f"(({s * t},{sbo * t // CHUNK}),(1,{t},{k_step * t // CHUNK}))")
    lbo_meaning, sbo_meaning = _meanings(atom, n_mn, n_k, family)
    td_mma_k = _wgmma_k()[atom.dtype] if wgmma else _mma_k(atom.dtype, atom.kind)
    reasoning = _reasoning(atom, mn, k, n_mn, n_k, atom_order, mn_step, k_step, lbo, sbo, lbo_meaning, sbo_meaning,
                           descriptor_k, td_mma_k, bo_why, cute, tile_cute, family)
    findings = tuple(_atom_findings(atom, start_address, lbo, sbo, bo, mn, descriptor_k))
    return TileDescriptor(
        word=int(word), dtype=atom.dtype, kind=atom.kind, major=major, swizzle=swizzle, mn=mn, k=k,
        start_address=start_address, pattern_start=pattern_start, atom_order=atom_order, lbo=lbo, sbo=sbo,
        base_offset=bo, lbo_meaning=lbo_meaning, sbo_meaning=sbo_meaning, atom=atom, repeats=(n_mn, n_k),
        mn_step=mn_step, k_step=k_step, descriptor_k=descriptor_k, mma_k=td_mma_k,
        canonical=f"{atom.cute_swizzle} o {_canonical(atom)}", cute=cute, tile_cute=tile_cute,
        reasoning=reasoning, findings=findings, descriptor=layout(family).word,
    )


def _meanings(atom: SwizzleAtom, n_mn: int, n_k: int, family: str = SMEM_LAYOUTS[0]) -> tuple[str, str]:
    """What LBO and SBO mean for this major-ness and swizzle, with their sources
    (§9.7.16.3.1.1, §9.7.16.3.2, or wgmma's §9.7.15.5.1.2.1.1-2; MN-major without swizzle:
    errata E28)."""
    unused = {True: "", False: "; one atom that way, so unused: 0"}
    src_l, src_s = _SOURCES[family][1:3]
    if atom.major == "k":
        lbo = (f"not used by K-major swizzled layouts, \"assumed to be 1\" ({src_l}; errata E8)" if atom.swizzled else
               "K-major: the stride from one 16-byte column of 8 rows (a core matrix) to the next along K"
               f"{unused[n_k > 1]} ({src_l})")
        return lbo, f"K-major: the offset from one group of 8 rows to the next along MN{unused[n_mn > 1]} ({src_s})"
    if not atom.swizzled:
        return (f"MN-major interleave: the stride from one group of 8 K rows to the next along K{unused[n_k > 1]} "
                f"({src_l}; errata E28)",
                f"MN-major interleave: the offset from one 16-byte column of MN to the next along MN{unused[n_mn > 1]} "
                f"({src_s}; errata E28)")
    return (f"MN-major swizzled: the stride from one {atom.swizzle} atom ({atom.mn} elements of MN) to the next along "
            f"MN{unused[n_mn > 1]} ({src_l})",
            f"MN-major swizzled: the offset from one group of {atom.rows} K rows to the next along K{unused[n_k > 1]} "
            f"({src_s})")


def _reasoning(atom: SwizzleAtom, mn: int, k: int, n_mn: int, n_k: int, order: str, mn_step: int, k_step: int,
               lbo: int, sbo: int, lbo_meaning: str, sbo_meaning: str, descriptor_k: int, mma: int, bo_why: str,
               cute: str, tile_cute: str, family: str = SMEM_LAYOUTS[0]) -> tuple[str, ...]:
    src_canon, _, _, src_k = _SOURCES[family]
    t = atom.per_chunk
    kind = f" under .kind::{atom.kind}" if atom.kind else ""
    if atom.bit_pitch * t < 128:
        storage = (f"Element: {atom.dtype}{kind}, {atom.element_bits} bits, stored {t} to a 16-byte chunk, "
                   f"{atom.bit_pitch} bits apart, the last {(128 - atom.bit_pitch * t) // 8} bytes padding "
                   f"({atom.storage_source}): T = {t}.")
    else:
        storage = (f"Element: {atom.dtype}{kind}, {atom.element_bits} bits: T = {t} elements per 16-byte chunk "
                   f"({atom.storage_source}).")
    apart = [f"{step} bytes apart along {name}" if n > 1 else f"one atom along {name}"
             for name, n, step in (("MN", n_mn, mn_step), ("K", n_k, k_step))]
    sentences = [
        storage,
        f"Atom ({atom.source}): {atom.rows} rows x {atom.columns} 16-byte columns = {atom.mn} x {atom.k} elements "
        f"(MN x K), {atom.bytes} bytes, "
        + (f"swizzled by {atom.cute_swizzle} on the byte address." if atom.swizzled else f"not swizzled ({atom.cute_swizzle})."),
        f"Tile {mn} x {k} = {n_mn} x {n_k} atoms (MN x K), {order}: {apart[0]}, {apart[1]}.",
        f"SBO = {sbo} bytes (field {sbo >> 4}): {sbo_meaning}.",
        f"LBO = {lbo} bytes (field {lbo >> 4}): {lbo_meaning}.",
    ]
    unit = t if atom.major == "k" else atom.k
    mma_text = f"A dense MMA reads K = {mma} elements ({src_k})"
    if descriptor_k < k:
        inside = (f"advance the start address by {_k_offset(atom, k_step, mma)} bytes per MMA inside the atom, and "
                  if mma < descriptor_k else "each reads one atom row: advance the start address ")
        sentences.append(
            f"One K-major {atom.swizzle} descriptor reads K inside one {atom.row_bytes}-byte atom row: "
            f"{descriptor_k} elements. {mma_text}: {inside}by {k_step} bytes to the next atom along K (advance_smem).")
    elif k > mma and mma % unit == 0:
        sentences.append(f"The descriptor reaches all {k} elements of K. {mma_text}: advance the start address by "
                         f"{_k_offset(atom, k_step, mma)} bytes per MMA (advance_smem).")
    sentences.append(bo_why)
    sentences.append(f"Canonical layout ({src_canon}): {atom.cute_swizzle} o {_canonical(atom)}; with T = {t}: "
                     f"{cute} (strides in elements).")
    if tile_cute != cute:
        sentences.append(f"That form runs past the atom row beyond K = {descriptor_k} (errata E25); the tile itself "
                         f"is {tile_cute}.")
    return tuple(sentences)


# --------------------------------------------------------------------------------------------
# From a descriptor to the addresses the tensor core reads.


@dataclass(frozen=True, slots=True)
class SmemLayout:
    """What a shared memory descriptor makes the tensor core read for an ``mn`` x ``k`` operand.

    Element ``(i, j)`` is row/column ``i`` along MN and ``j`` along K. Addresses are absolute
    shared-memory **byte** addresses with the swizzle applied; a sub-byte element also has a bit
    position inside that byte (:meth:`bit`; 6-bit elements may continue into the next byte).

    Attributes:
        word, dtype, kind, major, mn, k: as asked.
        swizzle, start_address, lbo, sbo, base_offset: decoded from the word (bytes).
        atom: the Table 53 atom for the word's swizzle and this type.
        buffer: ``(start, size)`` in bytes the caller declared, or None.
        findings: the word's own decode findings, then ``LAYOUT-TABLE52``, ``LAYOUT-OVERLAP``,
            ``LAYOUT-OUTSIDE-BUFFER``, ``LAYOUT-ROW-SPAN`` (errors), ``LAYOUT-ATOM-PHASE``,
            ``LAYOUT-ATOM-STRIDE`` (warnings).
        descriptor: how ``word`` was read: ``"smem"`` (tcgen05) or ``"wgmma_smem"`` (sm_90a).
    """

    word: int
    dtype: str
    kind: str | None
    major: str
    mn: int
    k: int
    swizzle: str
    start_address: int
    lbo: int
    sbo: int
    base_offset: int
    atom: SwizzleAtom
    buffer: tuple[int, int] | None
    findings: tuple[Finding, ...]
    _bits: tuple[tuple[int, ...], ...] = field(repr=False)
    descriptor: str = "smem"

    def _at(self, i: int, j: int) -> int:
        if not (isinstance(i, int) and isinstance(j, int) and 0 <= i < self.mn and 0 <= j < self.k):
            _raise(UsageError, "LAYOUT-INDEX", "(i, j)", (i, j), f"0 <= i < {self.mn}, 0 <= j < {self.k}",
                   f"the operand is {self.mn} x {self.k} (MN x K)")
        return self._bits[i][j]

    def address(self, i: int, j: int) -> int:
        """Byte address of element ``(i, j)`` (the byte holding its lowest bit)."""
        return self._at(i, j) >> 3

    def bit(self, i: int, j: int) -> int:
        """Bit position (0-7) of element ``(i, j)``'s lowest bit in :meth:`address`: 0 for 8-, 16-
        and 32-bit types; 4-bit: 0 or 4; 6-bit: 0, 2, 4 or 6."""
        return self._at(i, j) & 7

    def bit_address(self, i: int, j: int) -> int:
        """``address * 8 + bit``: one integer that orders sub-byte elements."""
        return self._at(i, j)

    def addresses(self) -> list[list[int]]:
        """Byte addresses of all elements, ``mn`` lists of ``k``."""
        return [[b >> 3 for b in row] for row in self._bits]

    def bits(self) -> list[list[int]]:
        """Bit positions of all elements (see :meth:`bit`), ``mn`` lists of ``k``."""
        return [[b & 7 for b in row] for row in self._bits]

    def atom_index(self, i: int, j: int) -> tuple[int, int]:
        """Which atom (along MN, along K) the canonical layout puts element ``(i, j)`` in."""
        self._at(i, j)
        return i // self.atom.mn, j // self.atom.k

    def chunks(self) -> dict[int, list[tuple[int, int]]]:
        """Every 16-byte chunk read (by address, ascending) and the elements in it, in bit order."""
        out: dict[int, list[tuple[int, int, int]]] = {}
        for i, row in enumerate(self._bits):
            for j, b in enumerate(row):
                out.setdefault(b >> 7 << 4, []).append((b, i, j))
        return {addr: [(i, j) for _, i, j in sorted(items)] for addr, items in sorted(out.items())}

    def __iter__(self) -> Iterator[tuple[int, int, int, int]]:
        """``(i, j, address, bit)`` for every element, row by row."""
        for i, row in enumerate(self._bits):
            for j, b in enumerate(row):
                yield i, j, b >> 3, b & 7

    @property
    def ok(self) -> bool:
        """True when no finding is an error."""
        return not any(f.severity == "error" for f in self.findings)

    @property
    def hex(self) -> str:
        return f"{self.word:#018x}"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: parameters, ``addresses`` (mn x k), ``bits`` (sub-byte types only), the
        chunk map and the findings."""
        out: dict[str, Any] = {
            "word": self.hex, "dtype": self.dtype, "kind": self.kind, "major": self.major,
            "tile": [self.mn, self.k], "swizzle": self.swizzle, "start_address": self.start_address,
            "lbo": self.lbo, "sbo": self.sbo, "base_offset": self.base_offset, "atom": self.atom.as_dict(),
            "buffer": list(self.buffer) if self.buffer else None, "ok": self.ok,
            "addresses": self.addresses(),
        }
        if self.atom.element_bits < 8:
            out["bits"] = self.bits()
        out["chunks"] = [{"address": a, "elements": [list(e) for e in els]} for a, els in self.chunks().items()]
        out["findings"] = [f.as_dict() for f in self.findings]
        if self.descriptor != "smem":
            out["descriptor"] = self.descriptor
        return out


def smem_layout(
    word: int,
    *,
    dtype: ElementType,
    major: Major,
    mn: int,
    k: int,
    kind: Kind | None = None,
    buffer: tuple[int, int] | None = None,
    arch: SmemArch | None = None,
) -> SmemLayout:
    """The shared-memory address of every element a descriptor makes the tensor core read.

    ``word`` is decoded (:func:`descgen.decode_smem`); each element ``(i, j)`` of the ``mn`` x
    ``k`` operand (i along MN, j along K) is placed by the §9.7.16.3.3 canonical layout of the
    word's swizzle mode and ``major`` (LBO/SBO roles per §9.7.16.3.1-2; 128B with 32B atomicity:
    errata E26), then swizzled on the absolute address with the word's base offset (errata
    E9). It reports what makes a read wrong rather than refusing: see
    :attr:`SmemLayout.findings`.

    Args:
        word: a 64-bit shared memory descriptor.
        dtype, major, kind: as for :func:`smem_for_tile`.
        mn, k: how many elements the MMA reads along MN and K (e.g. 128 x 16 for a bf16 A).
        buffer: ``(start, size)`` in bytes: the caller's buffer; elements outside it are errors.
        arch: the target, optional: ``"sm_90a"`` reads ``word`` as a Hopper ``wgmma`` descriptor
            (:func:`descgen.decode_wgmma_smem`; the canonical layouts of §9.7.15.5.1.2.1.3, the
            same address model); a tcgen05 target or None: as a tcgen05 descriptor.

    Raises:
        WordError: ``word`` is not an unsigned 64-bit integer.
        EncodeError: the word's swizzle code is invalid, no Table 53 atom for its swizzle and
            ``major`` (``LAYOUT-SWIZZLE-MAJOR``), a bad type, major-ness, ``mn`` or ``k``.
        UsageError: ``lbo_mode`` absolute (not modelled: ``LAYOUT-LBO-MODE``), a malformed
            ``buffer``, more than 2**20 elements, unknown kind, ``LAYOUT-KIND-REQUIRED``;
            ``LAYOUT-ARCH``, ``LAYOUT-KIND-ARCH`` (and EncodeError ``LAYOUT-DTYPE-ARCH``) as for
            :func:`smem_for_tile`. A transposed tile wgmma cannot read is the finding
            ``LAYOUT-MAJOR-ARCH``.
    """
    family = _family(arch, kind, dtype)
    d = decode_smem(word) if family == SMEM_LAYOUTS[0] else decode_wgmma_smem(word)
    swizzle = d.value("swizzle")
    if swizzle is None:
        raise EncodeError([f for f in d.findings if f.field == "swizzle"], d.descriptor)
    lbo_mode = d.values().get("lbo_mode", "relative")  # (the wgmma family has no LBO mode: relative)
    if lbo_mode != "relative":
        _raise(UsageError, "LAYOUT-LBO-MODE", "lbo_mode", lbo_mode, "relative", f"the word's LBO mode is {lbo_mode}")
    atom = swizzle_atom(dtype=dtype, major=major, swizzle=swizzle, kind=kind)
    dtype, major, swizzle = atom.dtype, atom.major, atom.swizzle  # the tables' spelling
    mn, k = _positive("mn", mn), _positive("k", k)
    if mn * k > _MAX_ELEMENTS:
        _raise(UsageError, "LAYOUT-SIZE", "mn * k", mn * k, f"at most {_MAX_ELEMENTS}",
               f"{mn} x {k} = {mn * k} elements")
    if buffer is not None:
        if not (isinstance(buffer, tuple) and len(buffer) == 2 and all(isinstance(x, int) and not isinstance(x, bool)
                                                                         and x >= 0 for x in buffer)):
            _raise(UsageError, "LAYOUT-BUFFER", "buffer", buffer, "(start, size) in bytes, non-negative integers",
                   f"got {buffer!r}")
    start, lbo, sbo, bo = (d.value(n) for n in ("start_address", "lbo", "sbo", "base_offset"))

    t, pitch = atom.per_chunk, atom.bit_pitch
    mn_stride, k_stride = _strides(atom, lbo, sbo)
    w, rows, cols = atom.row_bytes, atom.rows, atom.columns
    if major == "k":  # MN rows of 16-byte K columns; K-major swizzled: columns run on in the row
        row_part = [(i % 8) * w + (i // 8) * mn_stride for i in range(mn)]
        col_part = [((j // t) * (CHUNK if atom.swizzled else k_stride), (j % t) * pitch) for j in range(k)]
        bits_of = [[(row_part[i] + c, e) for c, e in col_part] for i in range(mn)]
    else:  # 16-byte MN columns, rows along K
        col_part = [((i // t) % cols * CHUNK + (i // t) // cols * mn_stride, (i % t) * pitch) for i in range(mn)]
        row_part = [(j % rows) * w + (j // rows) * k_stride for j in range(k)]
        bits_of = [[(c + r, e) for r in row_part] for c, e in col_part]
    table = tuple(tuple(_read_address(atom, start + off, bo) * 8 + e for off, e in row) for row in bits_of)

    findings = list(d.findings)
    problem = _major_check(atom, family)
    if problem is not None:
        findings.append(problem)
    findings += _address_findings(table, atom, buffer)
    findings += _atom_findings(atom, start, lbo, sbo, bo, mn, k)
    # (a base offset without swizzling is the word's own warning SMEM-BASE-OFFSET-IGNORED)
    return SmemLayout(int(d.word), atom.dtype, atom.kind, major, mn, k, swizzle, start, lbo, sbo, bo, atom, buffer,
                      tuple(findings), table, d.descriptor)


def _address_findings(table: tuple[tuple[int, ...], ...], atom: SwizzleAtom,
                      buffer: tuple[int, int] | None) -> list[Finding]:
    """Two elements at one address; elements outside the declared buffer."""
    found = []
    seen: dict[int, tuple[int, int]] = {}
    clashes: list[tuple[tuple[int, int], tuple[int, int], int]] = []
    outside: list[tuple[tuple[int, int], int]] = []
    lo, hi = (buffer[0] * 8, (buffer[0] + buffer[1]) * 8) if buffer else (0, 0)
    for i, row in enumerate(table):
        for j, b in enumerate(row):
            other = seen.setdefault(b, (i, j))
            if other != (i, j):
                clashes.append((other, (i, j), b))
            if buffer and not (lo <= b and b + atom.element_bits <= hi):
                outside.append(((i, j), b))
    if clashes:
        (a, other_ij, where) = clashes[0]
        found.append(layout_finding(
            "LAYOUT-OVERLAP", "(i, j)", other_ij, "every element at its own address",
            f"{len(clashes)} element(s) read from an address another element also uses, first {other_ij} and {a} at "
            f"{_where(where)}: the strides or the K/MN extent do not fit this layout"))
    if outside:
        (ij, where) = outside[0]
        assert buffer is not None
        found.append(layout_finding(
            "LAYOUT-OUTSIDE-BUFFER", "(i, j)", ij,
            f"{buffer[0]:#x}..{buffer[0] + buffer[1] - 1:#x} (the declared buffer)",
            f"{len(outside)} element(s) read outside the buffer, first {ij} at {_where(where)}"))
    return found


def _where(bit_address: int) -> str:
    byte, bit = bit_address >> 3, bit_address & 7
    return f"{byte:#x}" + (f" bit {bit}" if bit else "")


# --------------------------------------------------------------------------------------------
# Advancing along K.


def advance_smem(word: int, nbytes: int) -> int:
    """``word`` with its start address moved by ``nbytes`` (may be negative), as kernels step to
    the next K block (CUTLASS adds ``nbytes >> 4`` to the descriptor's low word).

    Unlike that raw add, this refuses when the 14-bit start address field would carry into
    reserved bits 14-15 and the LBO (or borrow below 0). Every other bit stays as it is; in
    particular the base offset: it says where the swizzle pattern starts, and the data does not
    move when the start address does (errata E9: stepping along K inside an atom keeps
    base offset 0).

    Args:
        word: a 64-bit shared memory descriptor.
        nbytes: bytes to add; a multiple of 16.

    Returns:
        The new word.

    Raises:
        WordError: ``word`` is not an unsigned 64-bit integer.
        EncodeError: ``SMEM-START-ADDRESS-ALIGN`` (``nbytes`` not a multiple of 16) or
            ``SMEM-START-ADDRESS-CARRY`` (the new address is outside 0..0x3fff0).
    """
    d = decode_smem(word)
    field = d["start_address"]
    start = d.value("start_address")
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes % CHUNK:
        # the start address field's own alignment check (a generated field code: one rule, the engine's)
        spec = layout("smem_desc").field("start_address")
        raise EncodeError((Finding(finding_code("smem", spec, "ALIGN"), "error", "start_address", nbytes,
                                   "a multiple of 16 bytes", f"{check_rule(spec, 'ALIGN')}: advancing by {nbytes!r} "
                                   "bytes; the start address is stored >> 4, so it moves in 16-byte steps",
                                   spec.source),))
    new = start + nbytes
    if not 0 <= new < ADDRESS_LIMIT:
        _raise(EncodeError, "SMEM-START-ADDRESS-CARRY", "start_address", new, f"0..{ADDRESS_LIMIT - CHUNK:#x}",
               f"{start:#x} {'+' if nbytes >= 0 else '-'} {abs(nbytes)} bytes would "
               f"{'carry' if new > 0 else 'borrow'}")
    mask = ((1 << (field.hi - field.lo + 1)) - 1) << field.lo
    return int((d.word & ~mask) | ((new >> 4) << field.lo))
