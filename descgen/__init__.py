"""descgen: tcgen05 descriptors (PTX ISA 9.1 §9.7.16.4) encoded, decoded and checked.

The descriptor words of tcgen05 and Hopper's wgmma, one generic engine driven by ``tables/``
(PTX Tables 39-45 as data):

- the 32-bit instruction descriptor: :func:`encode_idesc`, :func:`decode_idesc` (Tables 42-44);
- the 64-bit shared memory descriptor: :func:`encode_smem`, :func:`decode_smem` (Tables 40-41);
  Hopper's ``wgmma`` (sm_90a) descriptor: :func:`encode_wgmma_smem`, :func:`decode_wgmma_smem`,
  :func:`validate_wgmma_smem` (§9.7.15.5.1.2.2), and :func:`port_smem` between the two families;
- the 64-bit zero-column mask descriptor: :func:`encode_zcm`, :func:`decode_zcm`,
  :func:`zcm_mask` (Table 45);
- tensor memory addresses (§9.7.16.1): :func:`encode_taddr`, :func:`decode_taddr`,
  :func:`validate_taddr`, :func:`warp_lanes`, :func:`check_alloc`;
- validation against every PTX rule, with the instruction's context: :func:`validate_idesc`,
  :func:`validate_smem`, :func:`validate_zcm`, and :func:`check_mma` for one instruction (:func:`check_wgmma` for a
  Hopper ``wgmma.mma_async``).
- source code: :func:`emit` writes words as C, C++, PTX, Python, hex or JSON with the decoded
  fields as a comment.
- shared memory layouts (§9.7.16.3, Tables 52-53): :func:`smem_for_tile` (tile -> descriptor and
  why), :func:`smem_layout` (descriptor -> the address of every element read), :func:`advance_smem`.
- the names the API takes as ``Literal`` types (:mod:`descgen.core.types`): :data:`Kind`,
  :data:`ElementType`, :data:`Swizzle`, :data:`Major`, :data:`Arch`... for annotations and editors.

Encoders are strict and raise :class:`DescgenError` subclasses; decoders are total and report
problems as :class:`Finding` records on the result. ``import descgen`` loads the standard library
only; tables are read on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .model.catalog import SCALE_VECS, Rule
from .model.engine import Decoded, DecodedField, KnownBits, Word, decode, encode
from .core.errors import DescgenError, EncodeError, Finding, TableError, UsageError, WordError
from .model.facts import idesc_defaults, mma_k, normalize_kind, submask_counts, type_names
from .words.idesc import consistent_kinds, decode_idesc, decode_idesc_all, encode_idesc, validate_idesc
from .words.instruction import check_mma, check_wgmma
from .model.loader import KINDS
from .model.report import NotChecked, Report
from .words.smem import decode_smem, encode_smem, validate_smem
from .core.types import (AccumType, Arch, AtomOrder, CtaGroup, Descriptor, ElementType, Format, Kind, LboMode, Major,
                    ScaleType, ScaleVec, SmemArch, Swizzle, WgmmaSwizzle)
from .core.version import __version__
from .words.zcm import decode_zcm, encode_zcm, validate_zcm, zcm_mask, zcm_submasks

if TYPE_CHECKING:  # what the lazy exports below are, for type checkers and editors
    from .words.compare import Diff, diff
    from .backends.emitters import FORMATS, emit
    from .backends.descriptor_functions import emit_functions
    from .model.facts import KIND_LAYOUTS, LBO_MODES, MAJORS, SWIZZLES, WGMMA_SWIZZLES
    from .words.port import Ported, port_smem
    from .words.wgmma_smem import decode_wgmma_smem, encode_wgmma_smem, validate_wgmma_smem
    from .words.runtime import RuntimeIdesc, idesc_from_runtime
    from .ptx.scan import ScanFinding, ScanInstruction, ScanOperand, ScanResult, scan_file, scan_ptx
    from .ptx.files import FileScan, scan_files
    from .sanitizer.instrument import Instrumented, instrument_ptx
    from .words.taddr import alloc_sizes, check_alloc, decode_taddr, encode_taddr, lane_warp, validate_taddr, warp_lanes
    from .tiles import (ATOM_ORDERS, SmemLayout, SwizzleAtom, TileDescriptor, advance_smem, smem_for_tile, smem_layout,
                        swizzle_atom)

#: Modules loaded on first use, by the names they export (a deliberate start-up boundary: the CLI
#: imports ``descgen`` for every command): defining the tile helpers' result classes costs more at
#: ``import descgen`` than most callers ever need; tensor memory addresses, CUTLASS's runtime form,
#: diff, the emitters and the PTX scanner load on first use too, and so do the enumerations the
#: tables hold (``SWIZZLES``...), which need the tables read.
_LAZY = {
    **dict.fromkeys(("ATOM_ORDERS", "SmemLayout", "SwizzleAtom", "TileDescriptor", "advance_smem", "smem_for_tile",
                     "smem_layout", "swizzle_atom"), "tiles"),
    **dict.fromkeys(("KIND_LAYOUTS", "SWIZZLES", "LBO_MODES", "MAJORS", "WGMMA_SWIZZLES"), "model.facts"),
    **dict.fromkeys(("encode_wgmma_smem", "decode_wgmma_smem", "validate_wgmma_smem"), "words.wgmma_smem"),
    **dict.fromkeys(("port_smem", "Ported"), "words.port"),
    **dict.fromkeys(("encode_taddr", "decode_taddr", "validate_taddr", "warp_lanes", "lane_warp", "alloc_sizes",
                     "check_alloc"), "words.taddr"),
    **dict.fromkeys(("idesc_from_runtime", "RuntimeIdesc"), "words.runtime"),
    **dict.fromkeys(("diff", "Diff"), "words.compare"),
    **dict.fromkeys(("FORMATS", "emit"), "backends.emitters"),
    "emit_functions": "backends.descriptor_functions",
    **dict.fromkeys(("ScanFinding", "ScanInstruction", "ScanOperand", "ScanResult", "scan_file", "scan_ptx"),
                    "ptx.scan"),
    **dict.fromkeys(("scan_files", "FileScan"), "ptx.files"),
    **dict.fromkeys(("instrument_ptx", "Instrumented"), "sanitizer.instrument"),
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'descgen' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public API (``__all__``), lazy exports included; not the submodules or the names this
    file imports for itself (``annotations``, ``TYPE_CHECKING``)."""
    return sorted(__all__)


__all__ = [
    "__version__",
    # any layout, by the tables' field names
    "encode",
    "decode",
    # instruction descriptor
    "KINDS",
    "KIND_LAYOUTS",
    "encode_idesc",
    "decode_idesc",
    "decode_idesc_all",
    "consistent_kinds",
    "normalize_kind",
    "mma_k",
    "type_names",
    "idesc_defaults",
    "idesc_from_runtime",
    "RuntimeIdesc",
    # shared memory descriptor
    "SWIZZLES",
    "LBO_MODES",
    "encode_smem",
    "decode_smem",
    # Hopper wgmma (sm_90a) shared memory descriptor, and porting between the two families
    "WGMMA_SWIZZLES",
    "encode_wgmma_smem",
    "decode_wgmma_smem",
    "validate_wgmma_smem",
    "port_smem",
    "Ported",
    # shared memory layouts
    "MAJORS",
    "ATOM_ORDERS",
    "smem_for_tile",
    "smem_layout",
    "advance_smem",
    "swizzle_atom",
    "TileDescriptor",
    "SmemLayout",
    "SwizzleAtom",
    # zero-column mask descriptor
    "encode_zcm",
    "decode_zcm",
    "zcm_mask",
    "zcm_submasks",
    "submask_counts",
    # tensor memory addresses (§9.7.16.1)
    "encode_taddr",
    "decode_taddr",
    "validate_taddr",
    "warp_lanes",
    "lane_warp",
    "alloc_sizes",
    "check_alloc",
    # validation: every PTX rule, with the instruction's context
    "validate_idesc",
    "validate_smem",
    "validate_zcm",
    "check_mma",
    "check_wgmma",
    "SCALE_VECS",
    "Report",
    "NotChecked",
    "Rule",
    # source code
    "FORMATS",
    "emit",
    "emit_functions",
    # two words compared field by field
    "diff",
    "Diff",
    # PTX scanning: every tcgen05.mma / tcgen05.cp of a file, its constant descriptor operands checked
    "scan_ptx",
    "instrument_ptx",
    "Instrumented",
    "scan_file",
    "scan_files",
    "FileScan",
    "ScanResult",
    "ScanInstruction",
    "ScanOperand",
    "ScanFinding",
    # results and errors
    "Decoded",
    "DecodedField",
    "Word",
    "KnownBits",
    "Finding",
    "DescgenError",
    "EncodeError",
    "UsageError",
    "WordError",
    "TableError",
    # the names the API takes, as Literal types (descgen.core.types), for annotations and editors
    "Kind",
    "ElementType",
    "AccumType",
    "ScaleType",
    "Swizzle",
    "Major",
    "LboMode",
    "ScaleVec",
    "Arch",
    "CtaGroup",
    "Descriptor",
    "Format",
    "AtomOrder",
    "WgmmaSwizzle",
    "SmemArch",
]
