"""The names the public API takes, as ``Literal`` types: what an editor offers and a type checker
checks where a user writes ``encode_idesc("f16", ...)`` or ``swizzle="128B"``.

Each type lists the canonical spellings, in the tables' order. The API also accepts other
spellings at run time (``"kind::f16"``, ``"F16"``, ``"scale_vec::2X"``), and normalizes them; a
type checker asks for the canonical one. Where the tables hold the enumeration (element types,
swizzles, LBO modes, majors, targets), ``tests/test_typing.py`` checks that these types list
exactly the tables' members; where it is Python's (kinds, scale vector sizes, formats, atom
orders, descriptors), the enumeration is derived from the type here (``KINDS = get_args(Kind)``),
so the two cannot differ.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["Kind", "ElementType", "AccumType", "ScaleType", "Swizzle", "Major", "LboMode", "ScaleVec", "Arch",
           "CtaGroup", "Descriptor", "Format", "AtomOrder"]

#: The MMA kinds, in PTX's order (Tables 42-44): ``descgen.KINDS``.
Kind = Literal["tf32", "f16", "f8f6f4", "i8", "mxf8f6f4", "mxf4", "mxf4nvf4"]

#: A and B element types of every kind (``atype``/``btype``, and ``dtype`` of the tile helpers):
#: ``descgen.type_names("atype")``.
ElementType = Literal["tf32", "f16", "bf16", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "u8", "s8"]

#: Accumulator (D) types: ``descgen.type_names("dtype")``.
AccumType = Literal["f32", "f16", "s32"]

#: Scale factor types of the mx kinds: ``descgen.type_names("scale_type")``.
ScaleType = Literal["ue8m0", "ue4m3"]

#: Swizzle modes of the shared memory descriptor (Table 40 bits 61-63, code order): ``descgen.SWIZZLES``.
Swizzle = Literal["none", "128B_base32B", "128B", "64B", "32B"]

#: K-major or MN-major (the idesc transpose bits; the tile helpers): ``descgen.MAJORS``.
Major = Literal["k", "mn"]

#: The shared memory descriptor's leading dimension stride mode (bit 52): ``descgen.LBO_MODES``.
LboMode = Literal["relative", "absolute"]

#: Scale vector sizes (``.scale_vec::1X/2X/4X``, ``.block16``/``.block32``): ``descgen.SCALE_VECS``.
ScaleVec = Literal["1X", "2X", "4X", "block16", "block32"]

#: Targets (``tables/rules.toml``: ``descgen.catalog.constraints().targets``), then the old names
#: descgen accepts for them (``sm_101a``/``sm_101f``, renamed ``sm_110a``/``sm_110f``).
Arch = Literal["sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f", "sm_101a", "sm_101f"]

#: ``.cta_group::1`` or ``::2``: the MMA runs on one CTA or on a pair (Table 39).
CtaGroup = Literal[1, 2]

#: The words descgen reads: instruction descriptor, shared memory descriptor, zero-column mask
#: descriptor, tensor memory address.
Descriptor = Literal["idesc", "smem", "zcm", "taddr"]

#: What :func:`descgen.emit` writes: ``descgen.FORMATS``.
Format = Literal["hex", "json", "c", "cpp", "ptx", "python"]

#: How a tile's swizzle atoms follow each other in memory: ``descgen.ATOM_ORDERS``.
AtomOrder = Literal["mn_first", "k_first"]
