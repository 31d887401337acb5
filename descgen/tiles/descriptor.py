"""From an operand tile to its shared memory descriptor, with the reasoning behind every field
(:func:`smem_for_tile`, :class:`TileDescriptor`; PTX ISA 9.1 §9.7.16.3, wgmma's §9.7.15.5.1.2.1
with ``arch="sm_90a"``; :mod:`descgen.tiles`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.errors import EncodeError, Finding, UsageError
from ..core.types import AtomOrder, ElementType, Kind, Major, SmemArch, Swizzle
from ..model.facts import mma_k, pattern_boundary
from ..model.engine import hex_word
from ..model.loader import SMEM_LAYOUTS, layout
from ..words.smem import encode_smem
from ..words.wgmma_smem import encode_wgmma_smem
from .atoms import (ADDRESS_LIMIT, ATOM_ORDERS, CHUNK, SwizzleAtom, check_choice, kinds_taking, major_check, positive,
                    raise_layout, swizzle_atom, tile_family, wgmma_k)
from .canonical import atom_findings, canonical_layout, exact_layout, k_offset_bytes, stride_fields

__all__ = ["TileDescriptor", "smem_for_tile"]

#: Per family (its layout), where the text defines: the canonical layouts, LBO, SBO, and the K of
#: one MMA per type.
_SOURCES = {"smem_desc": ("§9.7.16.3.3", "§9.7.16.3.1.1", "§9.7.16.3.2", "Table 39"),
            "wgmma_smem_desc": ("§9.7.15.5.1.2.1.3", "§9.7.15.5.1.2.1.1", "§9.7.15.5.1.2.1.2", "§9.7.15.2")}


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
        return hex_word(self.word, 64)

    def k_offset(self, j: int) -> int:
        """Bytes to add to the start address (:func:`descgen.advance_smem`) for a descriptor whose first K
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
            raise_layout(UsageError, "LAYOUT-K-OFFSET", "j", j, f"0..{self.k - 1} step {unit}",
                         f"this {'K' if a.major == 'k' else 'MN'}-major tile's descriptors start every {unit} "
                         "elements of K")
        return k_offset_bytes(a, self.k_step, j)

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
        raise_layout(EncodeError, "LAYOUT-PATTERN-START-ALIGN", "pattern_start", pattern_start,
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
    kinds = (kind,) if kind else kinds_taking(dtype)
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
    first K column; :meth:`TileDescriptor.k_offset` and :func:`descgen.advance_smem` reach the others.

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
    family = tile_family(arch, kind, dtype)
    wgmma = family != SMEM_LAYOUTS[0]
    if wgmma:
        swizzle = check_choice("LAYOUT-SWIZZLE-CODE", "swizzle", swizzle,
                               tuple(layout(family).field("swizzle").codes(None)), "{!r} is not a wgmma swizzle mode")
    atom = swizzle_atom(dtype=dtype, major=major, swizzle=swizzle, kind=kind)
    dtype, major, swizzle = atom.dtype, atom.major, atom.swizzle  # the tables' spelling
    problem = major_check(atom, family)
    if problem is not None:
        raise EncodeError((problem,))
    mn, k = positive("mn", mn), positive("k", k)
    atom_order = check_choice("LAYOUT-ATOM-ORDER-CODE", "atom_order", atom_order, ATOM_ORDERS)
    for name, extent, unit in (("mn", mn, atom.mn), ("k", k, atom.k)):
        if extent % unit:
            raise_layout(EncodeError, f"LAYOUT-{name.upper()}-ATOM", name, extent, f"a multiple of {unit}",
                         f"the {atom.swizzle} {major.upper()}-major atom of {atom.dtype} is {atom.mn} x {atom.k} "
                         f"elements (MN x K; {atom.source})")
    if (atom.swizzled and isinstance(start_address, int) and start_address % CHUNK == 0
            and start_address % atom.row_bytes):
        raise_layout(EncodeError, "LAYOUT-START-ROW", "start_address", start_address, f"a multiple of {atom.row_bytes}",
                     f"a {atom.swizzle} tile is made of {atom.row_bytes}-byte swizzle rows; this one starts "
                     f"{start_address % atom.row_bytes} bytes into a row")
    n_mn, n_k = mn // atom.mn, k // atom.k
    mn_step, k_step = (atom.bytes, atom.bytes * n_mn) if atom_order == "mn_first" else (atom.bytes * n_k, atom.bytes)
    total = atom.bytes * n_mn * n_k
    if isinstance(start_address, int) and not isinstance(start_address, bool) and start_address + total > ADDRESS_LIMIT:
        raise_layout(EncodeError, "LAYOUT-TILE-RANGE", "start_address", start_address, f"0..{ADDRESS_LIMIT - total:#x}",
                     f"the {total}-byte tile would end at {start_address + total:#x}")
    bo, bo_why = _base_offset(atom, pattern_start)

    # A stride the tile never takes is 0.
    lbo, sbo = stride_fields(atom, mn_step if n_mn > 1 else 0, k_step if n_k > 1 else 0)
    if wgmma:
        word = encode_wgmma_smem(start_address=start_address, lbo=lbo, sbo=sbo, swizzle=swizzle,  # type: ignore[arg-type]
                                 base_offset=bo)  # (a wgmma mode: checked above)
    else:
        word = encode_smem(start_address=start_address, lbo=lbo, sbo=sbo, swizzle=swizzle, base_offset=bo)

    descriptor_k = atom.k if (major == "k" and atom.swizzled) else k
    cute = exact_layout(atom, mn, k, lbo, sbo)
    tile_cute = cute
    if descriptor_k < k:
        t, s = atom.per_chunk, atom.columns
        tile_cute = (f"{atom.cute_swizzle} o ((8,{n_mn * atom.mn // 8}),({t},{s},{n_k})):"
                     f"(({s * t},{sbo * t // CHUNK}),(1,{t},{k_step * t // CHUNK}))")
    lbo_meaning, sbo_meaning = _meanings(atom, n_mn, n_k, family)
    td_mma_k = wgmma_k()[atom.dtype] if wgmma else _mma_k(atom.dtype, atom.kind)
    reasoning = _reasoning(atom, mn, k, n_mn, n_k, atom_order, mn_step, k_step, lbo, sbo, lbo_meaning, sbo_meaning,
                           descriptor_k, td_mma_k, bo_why, cute, tile_cute, family)
    findings = tuple(atom_findings(atom, start_address, lbo, sbo, bo, mn, descriptor_k))
    return TileDescriptor(
        word=int(word), dtype=atom.dtype, kind=atom.kind, major=major, swizzle=swizzle, mn=mn, k=k,
        start_address=start_address, pattern_start=pattern_start, atom_order=atom_order, lbo=lbo, sbo=sbo,
        base_offset=bo, lbo_meaning=lbo_meaning, sbo_meaning=sbo_meaning, atom=atom, repeats=(n_mn, n_k),
        mn_step=mn_step, k_step=k_step, descriptor_k=descriptor_k, mma_k=td_mma_k,
        canonical=f"{atom.cute_swizzle} o {canonical_layout(atom)}", cute=cute, tile_cute=tile_cute,
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
        + (f"swizzled by {atom.cute_swizzle} on the byte address." if atom.swizzled
           else f"not swizzled ({atom.cute_swizzle})."),
        f"Tile {mn} x {k} = {n_mn} x {n_k} atoms (MN x K), {order}: {apart[0]}, {apart[1]}.",
        f"SBO = {sbo} bytes (field {sbo >> 4}): {sbo_meaning}.",
        f"LBO = {lbo} bytes (field {lbo >> 4}): {lbo_meaning}.",
    ]
    unit = t if atom.major == "k" else atom.k
    mma_text = f"A dense MMA reads K = {mma} elements ({src_k})"
    if descriptor_k < k:
        inside = (f"advance the start address by {k_offset_bytes(atom, k_step, mma)} bytes per MMA inside the atom, "
                  "and " if mma < descriptor_k else "each reads one atom row: advance the start address ")
        sentences.append(
            f"One K-major {atom.swizzle} descriptor reads K inside one {atom.row_bytes}-byte atom row: "
            f"{descriptor_k} elements. {mma_text}: {inside}by {k_step} bytes to the next atom along K (advance_smem).")
    elif k > mma and mma % unit == 0:
        sentences.append(f"The descriptor reaches all {k} elements of K. {mma_text}: advance the start address by "
                         f"{k_offset_bytes(atom, k_step, mma)} bytes per MMA (advance_smem).")
    sentences.append(bo_why)
    sentences.append(f"Canonical layout ({src_canon}): {atom.cute_swizzle} o {canonical_layout(atom)}; with T = {t}: "
                     f"{cute} (strides in elements).")
    if tile_cute != cute:
        sentences.append(f"That form runs past the atom row beyond K = {descriptor_k} (errata E25); the tile itself "
                         f"is {tile_cute}.")
    return tuple(sentences)
