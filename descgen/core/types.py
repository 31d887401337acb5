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
           "CtaGroup", "Descriptor", "WgmmaSwizzle", "SmemArch", "Format", "AtomOrder"]

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

#: Swizzle modes of the wgmma (sm_90a) shared memory descriptor (§9.7.15.5.1.2.2 bits 62-63, code
#: order): ``descgen.WGMMA_SWIZZLES``.
WgmmaSwizzle = Literal["none", "128B", "64B", "32B"]

#: K-major or MN-major (the idesc transpose bits; the tile helpers): ``descgen.MAJORS``.
Major = Literal["k", "mn"]

#: The shared memory descriptor's leading dimension stride mode (bit 52): ``descgen.LBO_MODES``.
LboMode = Literal["relative", "absolute"]

#: Scale vector sizes (``.scale_vec::1X/2X/4X``, ``.block16``/``.block32``): ``descgen.SCALE_VECS``.
ScaleVec = Literal["1X", "2X", "4X", "block16", "block32"]

#: Targets (``tables/constraints.toml``: ``descgen.model.catalog.constraints().targets``), then the old names
#: descgen accepts for them (``sm_101a``/``sm_101f``, renamed ``sm_110a``/``sm_110f``).
Arch = Literal["sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f", "sm_101a", "sm_101f"]

#: A target as the shared memory tools take it (``smem_for_tile``, ``smem_layout``, ``port_smem``):
#: a tcgen05 target, or ``sm_90a``, whose ``wgmma`` reads the Hopper descriptor.
SmemArch = Literal["sm_90a", "sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f", "sm_101a", "sm_101f"]

#: ``.cta_group::1`` or ``::2``: the MMA runs on one CTA or on a pair (Table 39).
CtaGroup = Literal[1, 2]

#: The words descgen reads: instruction descriptor, shared memory descriptor, zero-column mask
#: descriptor, tensor memory address; the wgmma (sm_90a) shared memory descriptor.
Descriptor = Literal["idesc", "smem", "zcm", "taddr", "wgmma_smem"]

#: What :func:`descgen.emit` writes: ``descgen.FORMATS``.
Format = Literal["hex", "json", "c", "cpp", "ptx", "python"]

#: How a tile's swizzle atoms follow each other in memory: ``descgen.ATOM_ORDERS``.
AtomOrder = Literal["mn_first", "k_first"]


#: Other frameworks' names of PTX's element types (Triton, PyTorch, CUTLASS/CuTe, JAX/ml_dtypes),
#: folded to lower case, a namespace prefix (``torch.``, ``tl.``, ``jnp.``, ``cutlass::``) dropped:
#: what :func:`ptx_type_name` reads. Each maps to the PTX name descgen takes (tests check that
#: every target is a name of the tables).
TYPE_ALIASES: dict[str, str] = {
    "half": "f16", "float16": "f16", "fp16": "f16", "half_t": "f16",
    "bfloat16": "bf16", "bfloat16_t": "bf16",
    "tfloat32": "tf32", "tfloat32_t": "tf32", "float_tf32_t": "tf32",
    "fp8e4nv": "e4m3", "float8_e4m3fn": "e4m3", "float8_e4m3": "e4m3", "float_e4m3_t": "e4m3", "e4m3fn": "e4m3",
    "fp8e5": "e5m2", "float8_e5m2": "e5m2", "float_e5m2_t": "e5m2",
    "float6_e2m3fn": "e2m3", "float_e2m3_t": "e2m3", "fp6e2m3": "e2m3",
    "float6_e3m2fn": "e3m2", "float_e3m2_t": "e3m2", "fp6e3m2": "e3m2",
    "float4_e2m1fn": "e2m1", "float4_e2m1fn_x2": "e2m1", "float_e2m1_t": "e2m1", "fp4e2m1": "e2m1",
    "int8": "s8", "int8_t": "s8", "uint8": "u8", "uint8_t": "u8",
    "float32": "f32", "float": "f32", "fp32": "f32", "int32": "s32", "int32_t": "s32",
    "float8_e8m0fnu": "ue8m0", "float_ue8m0_t": "ue8m0", "float_ue4m3_t": "ue4m3",
}

_TYPE_PREFIXES = ("torch.", "tl.", "triton.language.", "jnp.", "jax.numpy.", "np.", "numpy.", "ml_dtypes.",
                  "cutlass::", "cute::", "cutlass.")


def ptx_type_name(name: str) -> str | None:
    """PTX's name for another framework's element type name (``"float8_e4m3fn"`` -> ``"e4m3"``,
    ``"torch.bfloat16"`` -> ``"bf16"``, ``"cutlass::float_e2m1_t"`` -> ``"e2m1"``); None for a name
    that is none of :data:`TYPE_ALIASES`."""
    folded = name.strip().lower()
    for prefix in _TYPE_PREFIXES:
        if folded.startswith(prefix):
            folded = folded[len(prefix):]
            break
    return TYPE_ALIASES.get(folded)
