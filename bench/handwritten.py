"""Independent, hand-written shift-and-or encoders (no checks): the instruction descriptor,
the shared memory descriptor and the zero-column mask descriptor.

It is the speed baseline for bench/bench.py and the differential reference for the tests: its
constants are typed from PTX Tables 40 and 42-45 directly, not read from tables/.
"""

from __future__ import annotations

_AB = {  # atype/btype codes, Tables 42-44
    "f16": 0, "bf16": 1, "tf32": 2,
    "e4m3": 0, "e5m2": 1, "e2m3": 3, "e3m2": 4, "e2m1": 5,
    "u8": 0, "s8": 1,
}
_D = {"f16": 0, "f32": 1, "s32": 2}
_MAJOR = {"k": 0, "mn": 1}
_SHIFT = {0: 0, 8: 1, 16: 2, 32: 3}
_SCALE = {"ue4m3": 0, "ue8m0": 1}
_DEFAULTS = {
    "tf32": ("tf32", "tf32", "f32", None), "f16": ("f16", "f16", "f32", None),
    "f8f6f4": ("e4m3", "e4m3", "f32", None), "i8": ("s8", "s8", "s32", None),
    "mxf8f6f4": ("e4m3", "e4m3", None, "ue8m0"), "mxf4": ("e2m1", "e2m1", None, "ue8m0"),
    "mxf4nvf4": ("e2m1", "e2m1", None, "ue4m3"),
}


def encode_idesc(kind, m, n, *, atype=None, btype=None, dtype=None, a_major="k", b_major="k",
                 negate_a=False, negate_b=False, saturate=False, sparse=False, sparsity_selector=0,
                 max_shift=0, scale_type=None, a_sf_id=0, b_sf_id=0, k=None):
    da, db, dd, ds = _DEFAULTS[kind]
    atype = atype or da
    btype = btype or db
    word = (int(sparse) << 2) | (int(negate_a) << 13) | (int(negate_b) << 14)
    word |= (_MAJOR[a_major] << 15) | (_MAJOR[b_major] << 16) | ((n >> 3) << 17)
    if kind in ("mxf4", "mxf4nvf4"):
        return (word | (1 << 7) | (1 << 10) | (_SCALE[scale_type or ds] << 23) | ((m >> 7) << 27)
                | (b_sf_id << 4) | (a_sf_id << 29) | (int(k == 96) << 31))
    if kind == "mxf8f6f4":
        return (word | (_AB[atype] << 7) | (_AB[btype] << 10) | (_SCALE[scale_type or ds] << 23)
                | ((m >> 7) << 27) | (b_sf_id << 4) | (a_sf_id << 29))
    return (word | sparsity_selector | (int(saturate) << 3) | (_D[dtype or dd] << 4) | (_AB[atype] << 7)
            | (_AB[btype] << 10) | ((m >> 4) << 24) | (_SHIFT[max_shift] << 30))


_SWIZZLE = {"none": 0, "128B_base32B": 1, "128B": 2, "64B": 4, "32B": 6}  # Table 40, bits 61-63
_LBO_MODE = {"relative": 0, "absolute": 1}  # Table 40, bit 52


def encode_smem(*, start_address, lbo, sbo, swizzle, base_offset=0, lbo_mode="relative"):
    """Table 40: 14-bit byte fields stored >> 4, the fixed 0b001 in bits 46-48 (no checks)."""
    return (((start_address & 0x3FFFF) >> 4) | ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | (1 << 46)
            | (base_offset << 49) | (_LBO_MODE[lbo_mode] << 52) | (_SWIZZLE[swizzle] << 61))


def encode_zcm(*, start_count=(0, 0, 0, 0), first_span=(0, 0, 0, 0), nonzero_mask=True, skip_span, use_span,
               column_shift=0):
    """Table 45: four 8-bit start counts, four first-span bits, spans stored - 1 (no checks)."""
    sc0, sc1, sc2, sc3 = start_count
    fs0, fs1, fs2, fs3 = first_span
    return (sc0 | (sc1 << 8) | (sc2 << 16) | (sc3 << 24) | (fs0 << 32) | (fs1 << 33) | (fs2 << 34) | (fs3 << 35)
            | (int(nonzero_mask) << 39) | ((skip_span - 1) << 40) | ((use_span - 1) << 48) | (column_shift << 56))
