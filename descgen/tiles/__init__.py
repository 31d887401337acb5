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

The modules, by concern: :mod:`~descgen.tiles.atoms` (element types, storage, Table 53 atoms and
Table 52; the family a target selects), :mod:`~descgen.tiles.canonical` (the canonical layouts,
LBO/SBO roles, the address model and the atom findings), :mod:`~descgen.tiles.descriptor` (a tile
to its descriptor, with the reasoning) and :mod:`~descgen.tiles.addresses` (a descriptor to the
addresses read; advancing along K).
"""

from __future__ import annotations

from ..model.facts import MAJORS
from .addresses import SmemLayout, advance_smem, smem_layout
from .atoms import ADDRESS_LIMIT as ADDRESS_LIMIT, ATOM_ORDERS, CHUNK as CHUNK, SwizzleAtom, swizzle_atom
from .descriptor import TileDescriptor, smem_for_tile

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
