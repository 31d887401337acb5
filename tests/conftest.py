"""Shared test data: an independent model of the PTX ISA 9.1 text (§9.7.16), typed from the spec.

Nothing here is read from ``tables/`` or from ``descgen``: the values are copied from PTX Tables
39-45 (the project's copy of the PTX ISA 9.1 text, cited by section and table, never by a path)
so that the tests can fail when the tables or the engine are wrong.
Test modules import what they need with ``from conftest import ...``.
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# Keep hypothesis deterministic and bounded: the suite runs in about two minutes on 2 cores (CI: well under ten).
settings.register_profile(
    "descgen",
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "descgen"))

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# descgen's per-user cache of the parsed tables (descgen.model.loader) goes to one directory
# under the system's temporary directory for every test process and the commands they start, not
# to the user's ~/.cache/descgen (the suite builds venvs and clones, each with its own tables
# file). Tests of the cache itself set their own.
os.environ["DESCGEN_CACHE_DIR"] = os.path.join(tempfile.gettempdir(),
                                               f"descgen-tests-cache-{getattr(os, 'getuid', lambda: 0)()}")

# --------------------------------------------------------------------------------------------
# Instruction descriptor (Tables 42-44) and Table 39.

KINDS = ("tf32", "f16", "f8f6f4", "i8", "mxf8f6f4", "mxf4", "mxf4nvf4")
DENSE_KINDS = ("tf32", "f16", "f8f6f4", "i8")  # Table 42
MX_KINDS = ("mxf8f6f4", "mxf4", "mxf4nvf4")  # Tables 43 and 44
MXF4_KINDS = ("mxf4", "mxf4nvf4")  # Table 44

# Table 42 / 43 "E4M3 = 0 E5M2 = 1 E2M3 = 3 E3M2 = 4 E2M1 = 5"
_F8F6F4 = {"e4m3": 0, "e5m2": 1, "e2m3": 3, "e3m2": 4, "e2m1": 5}
#: atype/btype codes per kind (Tables 42, 43, 44).
AB_CODES: dict[str, dict[str, int]] = {
    "tf32": {"tf32": 2},
    "f16": {"f16": 0, "bf16": 1},
    "f8f6f4": _F8F6F4,
    "i8": {"u8": 0, "s8": 1},
    "mxf8f6f4": _F8F6F4,
    "mxf4": {"e2m1": 1},  # Table 44: E2M1 = 1
    "mxf4nvf4": {"e2m1": 1},
}
#: dtype codes (Table 42 bits 4-5); the block-scaled kinds have no dtype field (D is f32).
D_CODES: dict[str, dict[str, int]] = {
    "tf32": {"f32": 1},
    "f16": {"f16": 0, "f32": 1},
    "f8f6f4": {"f16": 0, "f32": 1},
    "i8": {"s32": 2},
}
#: Scale matrix type (bit 23, Tables 43/44; Table 39 "X (Scale)").
SCALE_CODES: dict[str, dict[str, int]] = {
    "mxf8f6f4": {"ue8m0": 1},
    "mxf4": {"ue8m0": 1},
    "mxf4nvf4": {"ue8m0": 1, "ue4m3": 0},
}
#: Table 42 bits 0-1 "0-3", but §9.7.16.10.8.4.5-6: "must be 0 for .kind::i8 and .kind::f8f6f4".
SELECTOR_VALUES = {"tf32": (0, 1, 2, 3), "f16": (0, 1, 2, 3), "f8f6f4": (0,), "i8": (0,)}
#: Table 42 bits 30-31: "no shift = 0, maximum shift of 8 = 1, of 16 = 2, of 32 = 3".
MAX_SHIFT_CODES = {0: 0, 8: 1, 16: 2, 32: 3}
#: Table 49.
NEGATE_OK = {k: k != "i8" for k in KINDS}
TRANSPOSE_OK = {k: k not in MXF4_KINDS for k in KINDS}
#: Table 39: K (dense, sparse) for cta_group 1 / 2 without K1.
K_OF = {
    "tf32": (8, 16),
    "f16": (16, 32),
    "f8f6f4": (32, 64),
    "i8": (32, 64),
    "mxf8f6f4": (32, 64),
    "mxf4": (64, 128),
    "mxf4nvf4": (64, 128),
}
#: descgen's documented defaults (encode_idesc docstring): (atype, btype, dtype, scale_type).
DEFAULTS = {
    "tf32": ("tf32", "tf32", "f32", None),
    "f16": ("f16", "f16", "f32", None),
    "f8f6f4": ("e4m3", "e4m3", "f32", None),
    "i8": ("s8", "s8", "s32", None),
    "mxf8f6f4": ("e4m3", "e4m3", None, "ue8m0"),
    "mxf4": ("e2m1", "e2m1", None, "ue8m0"),
    "mxf4nvf4": ("e2m1", "e2m1", None, "ue4m3"),
}

#: Bit ranges (lo, hi) of every value field, per table, as PTX prints them.
BITS_42 = {
    "sparsity_selector": (0, 1), "sparse": (2, 2), "saturate": (3, 3), "dtype": (4, 5),
    "atype": (7, 9), "btype": (10, 12), "negate_a": (13, 13), "negate_b": (14, 14),
    "a_major": (15, 15), "b_major": (16, 16), "n": (17, 22), "m": (24, 28), "max_shift": (30, 31),
}
BITS_43 = {
    "sparse": (2, 2), "b_sf_id": (4, 5), "atype": (7, 9), "btype": (10, 12), "negate_a": (13, 13),
    "negate_b": (14, 14), "a_major": (15, 15), "b_major": (16, 16), "n": (17, 22),
    "scale_type": (23, 23), "m": (27, 28), "a_sf_id": (29, 30),
}
BITS_44 = {**BITS_43, "btype": (10, 11), "k_dim": (31, 31)}


def spec_bits(kind: str) -> dict[str, tuple[int, int]]:
    return BITS_42 if kind in DENSE_KINDS else BITS_43 if kind == "mxf8f6f4" else BITS_44


N8 = tuple(range(8, 257, 8))
N16 = tuple(range(16, 257, 16))
N32 = tuple(range(32, 257, 32))
N_I8_CTA1 = (8, 16, 24, 32) + tuple(range(48, 257, 16))  # "{8, 16, 24, 32, 48, ... 256} steps of 16 after N > 32"
N_WS_DENSE = (64, 128, 256)
N_WS_SPARSE = (64, 128)


@dataclass(frozen=True)
class Row:
    """One row of Table 39."""

    kind: str
    ws: bool
    cta_group: int
    sparse: bool
    m: tuple[int, ...]
    n: tuple[int, ...]
    k: int


def _table39() -> tuple[Row, ...]:
    rows: list[Row] = []
    for kind in ("f16", "tf32", "f8f6f4", "i8"):
        kd, ks = K_OF[kind]
        n1 = N_I8_CTA1 if kind == "i8" else N8
        n2 = N32 if kind == "i8" else N16
        for sparse, k in ((False, kd), (True, ks)):
            rows.append(Row(kind, False, 1, sparse, (64, 128), n1, k))
            rows.append(Row(kind, False, 2, sparse, (128, 256), n2, k))
            rows.append(Row(kind, True, 1, sparse, (32, 64, 128), N_WS_SPARSE if sparse else N_WS_DENSE, k))
    rows += [
        Row("mxf8f6f4", False, 1, False, (128,), N8, 32),
        Row("mxf8f6f4", False, 1, True, (128,), N8, 64),
        Row("mxf8f6f4", False, 2, False, (128, 256), N16, 32),
        Row("mxf8f6f4", False, 2, True, (256,), N16, 64),
    ]
    for kind in MXF4_KINDS:
        rows += [
            Row(kind, False, 1, False, (128,), N8, 64),
            Row(kind, False, 1, True, (128,), N8, 128),
            Row(kind, False, 2, False, (128, 256), N16, 64),
            Row(kind, False, 2, False, (256,), N16, 96),  # K1 = 96
            Row(kind, False, 1, False, (128,), N16, 96),  # K1 = 96 with one CTA: E41 (NVIDIA's SM103 atoms)
            Row(kind, False, 2, True, (256,), N16, 128),
        ]
    return tuple(rows)


TABLE39: tuple[Row, ...] = _table39()


def rows_of(kind: str) -> tuple[Row, ...]:
    return tuple(r for r in TABLE39 if r.kind == kind)


#: Every M / N Table 39 allows for a kind in some context (the word holds no cta_group / .ws).
VALID_M = {k: tuple(sorted({m for r in rows_of(k) for m in r.m})) for k in KINDS}
VALID_N = {k: tuple(sorted({n for r in rows_of(k) for n in r.n})) for k in KINDS}

#: Table 39 dtype x atype/btype columns: (dtype, allowed A/B types).
TYPE_ROWS: dict[str, tuple[tuple[str | None, tuple[str, ...]], ...]] = {
    "f16": (("f16", ("f16",)), ("f32", ("f16", "bf16"))),
    "tf32": (("f32", ("tf32",)),),
    "f8f6f4": (("f16", tuple(_F8F6F4)), ("f32", tuple(_F8F6F4))),
    "i8": (("s32", ("s8", "u8")),),
    "mxf8f6f4": ((None, tuple(_F8F6F4)),),
    "mxf4": ((None, ("e2m1",)),),
    "mxf4nvf4": ((None, ("e2m1",)),),
}
#: Element size in bits (Table 52 decides which sizes may be transposed).
TYPE_BITS = {"tf32": 32, "f16": 16, "bf16": 16, "e4m3": 8, "e5m2": 8, "e2m3": 6, "e3m2": 6, "e2m1": 4, "u8": 8, "s8": 8}


def spec_encode_idesc(kind: str, m: int, n: int, **kw: Any) -> int:
    """The instruction descriptor, typed from Tables 42-44 (an independent reference)."""
    da, db, dd, ds = DEFAULTS[kind]
    atype = kw.get("atype") or da
    btype = kw.get("btype") or db
    raw: dict[str, int] = {
        "sparse": int(bool(kw.get("sparse", False))),
        "atype": AB_CODES[kind][atype],
        "btype": AB_CODES[kind][btype],
        "negate_a": int(bool(kw.get("negate_a", False))),
        "negate_b": int(bool(kw.get("negate_b", False))),
        "a_major": {"k": 0, "mn": 1}[kw.get("a_major", "k")],
        "b_major": {"k": 0, "mn": 1}[kw.get("b_major", "k")],
        "n": n >> 3,
    }
    if kind in DENSE_KINDS:
        raw.update(
            sparsity_selector=kw.get("sparsity_selector", 0),
            saturate=int(bool(kw.get("saturate", False))),
            dtype=D_CODES[kind][kw.get("dtype") or dd],
            m=m >> 4,
            max_shift=MAX_SHIFT_CODES[kw.get("max_shift", 0)],
        )
    else:
        raw.update(
            b_sf_id=kw.get("b_sf_id", 0),
            a_sf_id=kw.get("a_sf_id", 0),
            scale_type=SCALE_CODES[kind][kw.get("scale_type") or ds],
            m=m >> 7,
        )
        if kind in MXF4_KINDS:
            raw["k_dim"] = int(kw.get("k") == 96)
    bits = spec_bits(kind)
    word = 0
    for name, value in raw.items():
        lo, hi = bits[name]
        assert 0 <= value < (1 << (hi - lo + 1)), (name, value)
        word |= value << lo
    return word


def spec_values(kind: str, m: int, n: int, **kw: Any) -> dict[str, Any]:
    """The logical values ``decode_idesc(...).values()`` should return for these arguments."""
    da, db, dd, ds = DEFAULTS[kind]
    v: dict[str, Any] = {
        "sparse": bool(kw.get("sparse", False)),
        "atype": kw.get("atype") or da,
        "btype": kw.get("btype") or db,
        "negate_a": bool(kw.get("negate_a", False)),
        "negate_b": bool(kw.get("negate_b", False)),
        "a_major": kw.get("a_major", "k"),
        "b_major": kw.get("b_major", "k"),
        "n": n,
        "m": m,
    }
    if kind in DENSE_KINDS:
        v.update(
            sparsity_selector=kw.get("sparsity_selector", 0),
            saturate=bool(kw.get("saturate", False)),
            dtype=kw.get("dtype") or dd,
            max_shift=kw.get("max_shift", 0),
        )
    else:
        v.update(b_sf_id=kw.get("b_sf_id", 0), a_sf_id=kw.get("a_sf_id", 0), scale_type=kw.get("scale_type") or ds)
        if kind in MXF4_KINDS:
            v["k_dim"] = "96" if kw.get("k") == 96 else "64/128"
    return v


def idesc_args_from_values(values: dict[str, Any]) -> tuple[int, int, dict[str, Any]]:
    """Map ``Decoded.values()`` of an instruction descriptor back to ``encode_idesc`` arguments."""
    args = dict(values)
    m = args.pop("m")
    n = args.pop("n")
    if "k_dim" in args:  # Table 44 bit 31: member "64/128" (K fixed by sparsity) or "96"
        args["k"] = None if args.pop("k_dim") == "64/128" else 96
    return m, n, args


@st.composite
def idesc_configs(draw: st.DrawFn, kind: str | None = None) -> tuple[str, int, int, dict[str, Any], Row]:
    """A valid instruction-descriptor configuration, drawn from the spec (Tables 39, 42-44, 49, 50, 52).

    Returns (kind, m, n, keyword arguments for encode_idesc, the Table 39 row used).
    """
    kind = kind or draw(st.sampled_from(KINDS))
    row = draw(st.sampled_from(rows_of(kind)))
    m = draw(st.sampled_from(row.m))
    n = draw(st.sampled_from(row.n))
    dtype, ab = draw(st.sampled_from(TYPE_ROWS[kind]))
    atype = draw(st.sampled_from(ab))
    btype = atype if kind == "f16" else draw(st.sampled_from(ab))  # mixing f16/bf16: not stated
    kw: dict[str, Any] = {"atype": atype, "btype": btype, "sparse": row.sparse}
    if dtype is not None:
        kw["dtype"] = dtype
    if TRANSPOSE_OK[kind]:
        # Table 52: only 8/16/32-bit types may be transposed; Table 50: 8-bit transposed B needs
        # N in steps of 16 (cta_group 1) / 32 (cta_group 2).
        if TYPE_BITS[atype] >= 8:
            kw["a_major"] = draw(st.sampled_from(("k", "mn")))
        b_step = 16 if row.cta_group == 1 else 32
        if TYPE_BITS[btype] >= 16 or (TYPE_BITS[btype] == 8 and n % b_step == 0):
            kw["b_major"] = draw(st.sampled_from(("k", "mn")))
    if NEGATE_OK[kind]:
        kw["negate_a"] = draw(st.booleans())
        kw["negate_b"] = draw(st.booleans())
    if kind == "i8":
        kw["saturate"] = draw(st.booleans())
    if kind in DENSE_KINDS:
        if row.sparse:
            kw["sparsity_selector"] = draw(st.sampled_from(SELECTOR_VALUES[kind]))
        if row.ws:
            kw["max_shift"] = draw(st.sampled_from(tuple(MAX_SHIFT_CODES)))
    else:
        kw["scale_type"] = draw(st.sampled_from(tuple(SCALE_CODES[kind])))
        ids = (0, 1, 2, 3) if kind == "mxf8f6f4" else (0, 2)  # Table 43 "0-3"; Table 44 "0 or 2"
        kw["a_sf_id"] = draw(st.sampled_from(ids))
        kw["b_sf_id"] = draw(st.sampled_from(ids))
    if row.k == 96:
        kw["k"] = 96
    elif draw(st.booleans()):
        kw["k"] = row.k
    return kind, m, n, kw, row


# --------------------------------------------------------------------------------------------
# Shared memory descriptor (Tables 40, 41).

#: Table 40 bits 61-63: "0. No swizzling 1. 128-Byte with 32B atomic swizzling 2. 128-Byte
#: swizzling 4. 64-Byte swizzling 6. 32-Byte swizzling".
SWIZZLE_CODES = {"none": 0, "128B_base32B": 1, "128B": 2, "64B": 4, "32B": 6}


def mde(x: int) -> int:
    """Table 40: matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4."""
    return (x & 0x3FFFF) >> 4


def spec_encode_smem(start_address: int, lbo: int, sbo: int, swizzle: str, base_offset: int = 0,
                     lbo_mode: str = "relative") -> int:
    return (
        mde(start_address)
        | mde(lbo) << 16
        | mde(sbo) << 32
        | 0b001 << 46  # bits 46-48: fixed constant 0b001
        | base_offset << 49
        | {"relative": 0, "absolute": 1}[lbo_mode] << 52
        | SWIZZLE_CODES[swizzle] << 61
    )


# --------------------------------------------------------------------------------------------
# Zero-column mask descriptor (Table 45).


def spec_encode_zcm(start_count=(0, 0, 0, 0), first_span=(0, 0, 0, 0), nonzero_mask=True, *,
                    skip_span: int, use_span: int, column_shift: int = 0) -> int:
    """Table 45 with the spans as column counts (the field holds count - 1, errata 3)."""
    word = 0
    for i in range(4):
        word |= start_count[i] << (8 * i)
        word |= first_span[i] << (32 + i)
    return word | int(nonzero_mask) << 39 | (skip_span - 1) << 40 | (use_span - 1) << 48 | column_shift << 56


def load_handwritten():
    """bench/handwritten.py, imported by path (it is not part of the package)."""
    import importlib.util

    path = os.path.join(REPO, "bench", "handwritten.py")
    spec = importlib.util.spec_from_file_location("descgen_bench_handwritten", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


def cli_run(*args: str, code: int | None = 0, input: str | None = None, env: dict[str, str] | None = None) -> Any:
    """``descgen ARGS`` through click's runner, as a user runs it: stdout and stderr apart, never a
    traceback, and the exit status ``code`` (None: any)."""
    from click.testing import CliRunner

    from descgen.cli import cli

    try:  # click < 8.2 mixes stderr into stdout unless told not to
        runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:
        runner = CliRunner()
    result = runner.invoke(cli, list(args), input=input, env=env)
    assert "Traceback" not in result.stdout and "Traceback" not in result.stderr, (result.stdout, result.stderr)
    if code is not None:
        assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    return result
