"""From a shared memory descriptor to the address of every element the tensor core reads, with the
checks that explain wrong reads (:func:`smem_layout`, :class:`SmemLayout`), and a word's start
address advanced along K (:func:`advance_smem`) (:mod:`descgen.tiles`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

from ..core.errors import EncodeError, Finding, UsageError
from ..core.types import ElementType, Kind, Major, SmemArch
from ..model.catalog import layout_finding
from ..model.engine import check_rule, finding_code, hex_word
from ..model.loader import SMEM_LAYOUTS, layout
from ..words.smem import decode_smem
from ..words.wgmma_smem import decode_wgmma_smem
from .atoms import ADDRESS_LIMIT, CHUNK, SwizzleAtom, major_check, positive, raise_layout, swizzle_atom, tile_family
from .canonical import atom_findings, read_address, strides

__all__ = ["SmemLayout", "smem_layout", "advance_smem"]

_MAX_ELEMENTS = 1 << 20


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
            raise_layout(UsageError, "LAYOUT-INDEX", "(i, j)", (i, j), f"0 <= i < {self.mn}, 0 <= j < {self.k}",
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
        return hex_word(self.word, 64)

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
        dtype, major, kind: as for :func:`descgen.smem_for_tile`.
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
            :func:`descgen.smem_for_tile`. A transposed tile wgmma cannot read is the finding
            ``LAYOUT-MAJOR-ARCH``.
    """
    family = tile_family(arch, kind, dtype)
    d = decode_smem(word) if family == SMEM_LAYOUTS[0] else decode_wgmma_smem(word)
    swizzle = d.value("swizzle")
    if swizzle is None:
        raise EncodeError([f for f in d.findings if f.field == "swizzle"], d.descriptor)
    lbo_mode = d.values().get("lbo_mode", "relative")  # (the wgmma family has no LBO mode: relative)
    if lbo_mode != "relative":
        raise_layout(UsageError, "LAYOUT-LBO-MODE", "lbo_mode", lbo_mode, "relative",
                     f"the word's LBO mode is {lbo_mode}")
    atom = swizzle_atom(dtype=dtype, major=major, swizzle=swizzle, kind=kind)
    dtype, major, swizzle = atom.dtype, atom.major, atom.swizzle  # the tables' spelling
    mn, k = positive("mn", mn), positive("k", k)
    if mn * k > _MAX_ELEMENTS:
        raise_layout(UsageError, "LAYOUT-SIZE", "mn * k", mn * k, f"at most {_MAX_ELEMENTS}",
                     f"{mn} x {k} = {mn * k} elements")
    if buffer is not None:
        if not (isinstance(buffer, tuple) and len(buffer) == 2 and all(isinstance(x, int) and not isinstance(x, bool)
                                                                         and x >= 0 for x in buffer)):
            raise_layout(UsageError, "LAYOUT-BUFFER", "buffer", buffer, "(start, size) in bytes, non-negative integers",
                         f"got {buffer!r}")
    start, lbo, sbo, bo = (d.value(n) for n in ("start_address", "lbo", "sbo", "base_offset"))

    t, pitch = atom.per_chunk, atom.bit_pitch
    mn_stride, k_stride = strides(atom, lbo, sbo)
    w, rows, cols = atom.row_bytes, atom.rows, atom.columns
    if major == "k":  # MN rows of 16-byte K columns; K-major swizzled: columns run on in the row
        row_part = [(i % 8) * w + (i // 8) * mn_stride for i in range(mn)]
        col_part = [((j // t) * (CHUNK if atom.swizzled else k_stride), (j % t) * pitch) for j in range(k)]
        bits_of = [[(row_part[i] + c, e) for c, e in col_part] for i in range(mn)]
    else:  # 16-byte MN columns, rows along K
        col_part = [((i // t) % cols * CHUNK + (i // t) // cols * mn_stride, (i % t) * pitch) for i in range(mn)]
        row_part = [(j % rows) * w + (j // rows) * k_stride for j in range(k)]
        bits_of = [[(c + r, e) for r in row_part] for c, e in col_part]
    table = tuple(tuple(read_address(atom, start + off, bo) * 8 + e for off, e in row) for row in bits_of)

    findings = list(d.findings)
    problem = major_check(atom, family)
    if problem is not None:
        findings.append(problem)
    findings += _address_findings(table, atom, buffer)
    findings += atom_findings(atom, start, lbo, sbo, bo, mn, k)
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
        raise_layout(EncodeError, "SMEM-START-ADDRESS-CARRY", "start_address", new, f"0..{ADDRESS_LIMIT - CHUNK:#x}",
                     f"{start:#x} {'+' if nbytes >= 0 else '-'} {abs(nbytes)} bytes would "
                     f"{'carry' if new > 0 else 'borrow'}")
    mask = ((1 << (field.hi - field.lo + 1)) - 1) << field.lo
    return int((d.word & ~mask) | ((new >> 4) << field.lo))
