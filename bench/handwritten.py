"""An independent, hand-written shift-and-or instruction-descriptor encoder (no checks).

It is the speed baseline for bench/bench.py and the differential reference for the tests: its
constants are typed from PTX Tables 42-44 directly, not read from tables/.
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
