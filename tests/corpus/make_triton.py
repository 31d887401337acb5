#!/usr/bin/env python3
"""Compile Triton kernels for sm_100a without a GPU and write their PTX.

Regenerates tests/corpus/triton/*.ptx and tests/corpus/triton/MANIFEST.toml.
Needs `pip install triton` (the corpus was made with the version recorded in
MANIFEST.toml); no GPU and no CUDA toolkit are needed: Triton ships its own
ptxas (used by triton.compile to make the cubin, which proves the PTX
assembles).

    python tests/corpus/make_triton.py                # the committed corpus (COMMITTED)
    python tests/corpus/make_triton.py --all --out D  # every variant into D
    python tests/corpus/make_triton.py --big DIR      # also every variant plus 126 more
                                                      # matmuls, untrimmed, into DIR (benchmark)
    python tests/corpus/make_triton.py --only NAME    # one entry (substring match)

Every kernel is compiled with triton.compile(ASTSource(fn, signature,
constexprs), target=GPUTarget("cuda", 100, 32), options=...).  An entry is kept
only if its PTX contains tcgen05.mma.  Each written file is checked with
ptxas -arch=sm_100a: the system ptxas if it takes the file's .version, else
the ptxas that Triton ships (Triton 3.9 writes ".version 9.4" for its bundled
CUDA 13.4 ptxas; ptxas 13.0 only takes up to 9.0, hence the *_ptx90 files,
compiled with options ptx_version=90).  Output is deterministic: a private,
empty Triton cache directory is used for each run, and the PTX is written as
Triton returns it (then trimmed by trim.py when it is over the size limit).
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import trim  # noqa: E402

# Determinism and quiet: set before triton is imported.
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
_CACHE = tempfile.mkdtemp(prefix="descgen-triton-cache-")
os.environ["TRITON_CACHE_DIR"] = _CACHE

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

TARGET = GPUTarget("cuda", 100, 32)


# --------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------
@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, PRECISION: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, c, mask=mask)


@triton.jit
def matmul_devdesc(a_ptr, b_ptr, c_ptr, M, N, K,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """TMA matmul with device-side tensor descriptors (A: MxK, B: NxK, both K-major)."""
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BLOCK_N, BLOCK_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([off_m, k * BLOCK_K])
        b = b_desc.load([off_n, k * BLOCK_K])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([off_m, off_n], acc.to(c_desc.dtype))


@triton.jit
def matmul_hostdesc(a_desc, b_desc, c_desc, K,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """TMA matmul with host-side tensor descriptors passed as kernel arguments."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([off_m, k * BLOCK_K])
        b = b_desc.load([off_n, k * BLOCK_K])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([off_m, off_n], acc.to(c_desc.dtype))


@triton.jit
def matmul_persistent_ws(a_desc, b_desc, c_desc, M, N, K,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                         NUM_SMS: tl.constexpr, WARP_SPECIALIZE: tl.constexpr):
    """Persistent TMA matmul, optionally warp-specialized (as in Triton's tutorial 09)."""
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = num_pid_m * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True, warp_specialize=WARP_SPECIALIZE):
        pid_m = tile_id // num_pid_n
        pid_n = tile_id % num_pid_n
        off_m = pid_m * BLOCK_M
        off_n = pid_n * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            off_k = ki * BLOCK_K
            a = a_desc.load([off_m, off_k])
            b = b_desc.load([off_n, off_k])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([off_m, off_n], acc.to(c_desc.dtype))


@triton.jit
def dot_scaled_kernel(a_ptr, a_scale_ptr, b_ptr, b_scale_ptr, c_ptr, M, N, K,
                      stride_am, stride_bn, stride_cm,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      A_FMT: tl.constexpr, B_FMT: tl.constexpr, GROUP: tl.constexpr):
    """Block-scaled matmul: A is MxK, B is NxK (both K-major, as bytes); scales MxK/GROUP, NxK/GROUP.

    BLOCK_K counts elements; e2m1 operands hold two elements per byte."""
    A_DIV: tl.constexpr = 2 if A_FMT == "e2m1" else 1
    B_DIV: tl.constexpr = 2 if B_FMT == "e2m1" else 1
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rka = tl.arange(0, BLOCK_K // A_DIV)
    rkb = tl.arange(0, BLOCK_K // B_DIV)
    rks = tl.arange(0, BLOCK_K // GROUP)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rka[None, :]
    b_ptrs = b_ptr + rn[:, None] * stride_bn + rkb[None, :]
    as_ptrs = a_scale_ptr + rm[:, None] * (K // GROUP) + rks[None, :]
    bs_ptrs = b_scale_ptr + rn[:, None] * (K // GROUP) + rks[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        sa = tl.load(as_ptrs)
        sb = tl.load(bs_ptrs)
        acc = tl.dot_scaled(a, sa, A_FMT, b.T, sb, B_FMT, acc)
        a_ptrs += BLOCK_K // A_DIV
        b_ptrs += BLOCK_K // B_DIV
        as_ptrs += BLOCK_K // GROUP
        bs_ptrs += BLOCK_K // GROUP
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def dot_scaled_tma(a_desc, a_scale, b_desc, b_scale, c_desc, K, stride_s,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, VEC: tl.constexpr,
                   A_FMT: tl.constexpr, B_FMT: tl.constexpr, A_EPB: tl.constexpr, B_EPB: tl.constexpr):
    """Block-scaled matmul with TMA operands and scale factors stored pre-shuffled in the 5-D
    (MN/128, K/VEC/4, 32, 4, 4) layout of tcgen05's scale factor tiles (the layout of Triton's
    block-scaled tutorial), which lets Triton copy them to tensor memory with tcgen05.cp."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    SK: tl.constexpr = BLOCK_K // VEC // 4
    inner = tl.arange(0, SK * 512)
    sa_ptr = a_scale + (pid_m * (BLOCK_M // 128) + tl.arange(0, BLOCK_M // 128))[:, None] * stride_s + inner[None, :]
    sb_ptr = b_scale + (pid_n * (BLOCK_N // 128) + tl.arange(0, BLOCK_N // 128))[:, None] * stride_s + inner[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    ka = 0
    kb = 0
    for k in tl.range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([off_m, ka])
        b = b_desc.load([off_n, kb])
        sa = tl.load(sa_ptr).reshape(BLOCK_M // 128, SK, 32, 4, 4).trans(0, 3, 2, 1, 4).reshape(BLOCK_M, BLOCK_K // VEC)
        sb = tl.load(sb_ptr).reshape(BLOCK_N // 128, SK, 32, 4, 4).trans(0, 3, 2, 1, 4).reshape(BLOCK_N, BLOCK_K // VEC)
        acc = tl.dot_scaled(a, sa, A_FMT, b.T, sb, B_FMT, acc)
        ka += BLOCK_K // A_EPB
        kb += BLOCK_K // B_EPB
        sa_ptr += SK * 512
        sb_ptr += SK * 512
    c_desc.store([off_m, off_n], acc.to(tl.float16))


@triton.jit
def attention_fwd(q_ptr, k_ptr, v_ptr, o_ptr, sm_scale, N_CTX, stride_qm, stride_kn, stride_vn, stride_om,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
    """Single-head flash-attention forward (Q K^T, softmax, P V): two dots per step, P from registers."""
    pid = tl.program_id(0)
    rm = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rd = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + rm[:, None] * stride_qm + rd[None, :])
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, N_CTX, BLOCK_N):
        k = tl.load(k_ptr + (start_n + rn)[None, :] * stride_kn + rd[:, None])
        qk = tl.dot(q, k) * qk_scale
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_ptr + (start_n + rn)[:, None] * stride_vn + rd[None, :])
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(o_ptr + rm[:, None] * stride_om + rd[None, :], acc.to(o_ptr.dtype.element_ty))


# --------------------------------------------------------------------------
# The list of variants
# --------------------------------------------------------------------------
MATMUL_SIG = {"a_ptr": "*{a}", "b_ptr": "*{b}", "c_ptr": "*{c}", "M": "i32", "N": "i32", "K": "i32",
              "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32", "stride_bn": "i32",
              "stride_cm": "i32", "stride_cn": "i32",
              "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr", "PRECISION": "constexpr"}


def _fmt(sig, **types):
    return {k: v.format(**types) for k, v in sig.items()}


def matmul_variant(name, dtype, out, bm, bn, bk, warps, stages, precision="tf32", contiguous="ak,bn"):
    sig = _fmt(MATMUL_SIG, a=dtype, b=dtype, c=out)
    cx = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "PRECISION": precision}
    # Unit strides as constexpr so that the loads vectorise (A row-major, B row-major by default).
    for s in contiguous.split(","):
        cx[{"ak": "stride_ak", "am": "stride_am", "bn": "stride_bn", "bk": "stride_bk"}[s]] = 1
    cx["stride_cn"] = 1
    for k in cx:
        sig[k] = "constexpr"
    return dict(name=name, fn=matmul, sig=sig, constexprs=cx,
                options={"num_warps": warps, "num_stages": stages},
                params=dict(dtype=dtype, out=out, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps,
                            num_stages=stages, input_precision=precision, unit_strides=contiguous))


def tma_variant(name, fn, dtype, bm, bn, bk, warps, stages, extra=None):
    if fn is matmul_devdesc:
        sig = {"a_ptr": f"*{dtype}", "b_ptr": f"*{dtype}", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"}
    elif fn is matmul_hostdesc:
        sig = {"a_desc": f"tensordesc<{dtype}[{bm}, {bk}]>", "b_desc": f"tensordesc<{dtype}[{bn}, {bk}]>",
               "c_desc": f"tensordesc<fp16[{bm}, {bn}]>", "K": "i32"}
    else:
        sig = {"a_desc": f"tensordesc<{dtype}[{bm}, {bk}]>", "b_desc": f"tensordesc<{dtype}[{bn}, {bk}]>",
               "c_desc": f"tensordesc<fp16[{bm}, {bn}]>", "M": "i32", "N": "i32", "K": "i32"}
    cx = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}
    cx.update(extra or {})
    for k in cx:
        sig[k] = "constexpr"
    params = dict(dtype=dtype, out="fp16", BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps, num_stages=stages)
    params.update(extra or {})
    return dict(name=name, fn=fn, sig=sig, constexprs=cx, options={"num_warps": warps, "num_stages": stages},
                params=params)


def scaled_variant(name, afmt, bfmt, bm, bn, bk, warps, stages, group=32, scale_ty="u8"):
    ty = {"e2m1": "u8", "e4m3": "fp8e4nv", "e5m2": "fp8e5"}
    sig = {"a_ptr": f"*{ty[afmt]}", "a_scale_ptr": f"*{scale_ty}", "b_ptr": f"*{ty[bfmt]}",
           "b_scale_ptr": f"*{scale_ty}", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
           "stride_am": "i32", "stride_bn": "i32", "stride_cm": "i32"}
    cx = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "A_FMT": afmt, "B_FMT": bfmt, "GROUP": group}
    for k in cx:
        sig[k] = "constexpr"
    return dict(name=name, fn=dot_scaled_kernel, sig=sig, constexprs=cx,
                options={"num_warps": warps, "num_stages": stages},
                params=dict(lhs_format=afmt, rhs_format=bfmt, scale_type=scale_ty, group=group, BLOCK_M=bm,
                            BLOCK_N=bn, BLOCK_K=bk, num_warps=warps, num_stages=stages))


def attention_variant(name, dtype, bm, bn, d, warps, stages):
    sig = {"q_ptr": f"*{dtype}", "k_ptr": f"*{dtype}", "v_ptr": f"*{dtype}", "o_ptr": f"*{dtype}",
           "sm_scale": "fp32", "N_CTX": "i32", "stride_qm": "i32", "stride_kn": "i32", "stride_vn": "i32",
           "stride_om": "i32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "HEAD_DIM": "constexpr"}
    cx = {"BLOCK_M": bm, "BLOCK_N": bn, "HEAD_DIM": d}
    return dict(name=name, fn=attention_fwd, sig=sig, constexprs=cx,
                options={"num_warps": warps, "num_stages": stages},
                params=dict(dtype=dtype, BLOCK_M=bm, BLOCK_N=bn, HEAD_DIM=d, num_warps=warps, num_stages=stages))


def scaled_tma_variant(name, afmt, bfmt, bm, bn, bk, warps, stages, vec=32):
    epb = {"e2m1": 2, "e4m3": 1, "e5m2": 1}
    dty = {"e2m1": "u8", "e4m3": "fp8e4nv", "e5m2": "fp8e5"}
    scale_ty = "fp8e4nv" if vec == 16 else "u8"
    sig = {"a_desc": f"tensordesc<{dty[afmt]}[{bm}, {bk // epb[afmt]}]>", "a_scale": f"*{scale_ty}",
           "b_desc": f"tensordesc<{dty[bfmt]}[{bn}, {bk // epb[bfmt]}]>", "b_scale": f"*{scale_ty}",
           "c_desc": f"tensordesc<fp16[{bm}, {bn}]>", "K": "i32", "stride_s": "i32"}
    cx = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "VEC": vec, "A_FMT": afmt, "B_FMT": bfmt,
          "A_EPB": epb[afmt], "B_EPB": epb[bfmt]}
    for k in cx:
        sig[k] = "constexpr"
    return dict(name=name, fn=dot_scaled_tma, sig=sig, constexprs=cx,
                options={"num_warps": warps, "num_stages": stages},
                params=dict(lhs_format=afmt, rhs_format=bfmt, scale_type=scale_ty, group=vec, BLOCK_M=bm,
                            BLOCK_N=bn, BLOCK_K=bk, num_warps=warps, num_stages=stages))


# Variants written to tests/corpus/triton (the others only with --all, or to the --big directory).
COMMITTED = {
    "matmul_fp16_128x128x64_w4_s3", "matmul_fp16_64x64x64_w4_s3", "matmul_bf16_128x256x64_w8_s4_amn",
    "matmul_tf32_128x64x32_w4_s2_bk",
    "tma_devdesc_fp16_128x128x64_w4_s3", "tma_hostdesc_fp16_128x128x64_w4_s4",
    "tma_hostdesc_fp8e4nv_128x256x128_w8_s3", "tma_persistent_fp16_128x256x64_w8_s3",
    "tma_persistent_ws_fp16_128x256x64_w4_s3", "tma_persistent_ws_fp8e4nv_128x256x128_w4_s3",
    "scaled_mxfp4_e2m1_128x128x128_w4_s3",
    "scaled_tma_mxfp8_e4m3_128x256x128_w4_s4", "scaled_tma_mxfp4_e2m1_128x256x256_w4_s4",
    "scaled_tma_nvfp4_e2m1_128x256x256_w4_s4", "scaled_tma_mixed_e4m3_e2m1_128x256x128_w4_s4",
    "attention_fp16_128x64_d64_w4_s2",
    # the same kernels compiled with options ptx_version=90 (".version 9.0", which ptxas 13.0 takes)
    "tma_hostdesc_fp16_128x128x64_w4_s4_ptx90", "scaled_tma_mxfp4_e2m1_128x256x256_w4_s4_ptx90",
}
PTX90 = {"tma_hostdesc_fp16_128x128x64_w4_s4", "scaled_tma_mxfp4_e2m1_128x256x256_w4_s4"}


def variants(big=False):
    """Every corpus variant (big=False) or the extra matmuls for the benchmark directory (big=True)."""
    v = []
    if big:
        for dt in ("fp16", "bf16", "fp8e4nv"):
            for bm, bn, bk in [(128, 128, 64), (128, 256, 64), (128, 64, 128), (64, 128, 64), (128, 128, 128),
                               (256, 128, 64), (128, 256, 128)]:
                for w in (4, 8):
                    for s in (2, 3, 4):
                        out = "fp16" if dt.startswith("fp8") else dt
                        v.append(matmul_variant(f"big_matmul_{dt}_{bm}x{bn}x{bk}_w{w}_s{s}", dt, out, bm, bn, bk,
                                                w, s))
        return v
    # Plain tl.dot matmuls: fp16 and bf16, several tiles, warps and stages.
    tiles = [(128, 128, 64, 4, 3), (128, 256, 64, 8, 3), (128, 128, 32, 4, 2), (128, 64, 64, 4, 4),
             (64, 64, 64, 4, 3), (128, 128, 128, 8, 2), (256, 128, 64, 8, 3)]
    for dt in ("fp16", "bf16"):
        for bm, bn, bk, w, s in tiles:
            v.append(matmul_variant(f"matmul_{dt}_{bm}x{bn}x{bk}_w{w}_s{s}", dt, dt, bm, bn, bk, w, s))
    # A column-major (M contiguous) and B column-major (K contiguous): other majorness in the descriptors.
    v.append(matmul_variant("matmul_fp16_128x128x64_w4_s3_amn_bk", "fp16", "fp16", 128, 128, 64, 4, 3,
                            contiguous="am,bk"))
    v.append(matmul_variant("matmul_bf16_128x256x64_w8_s4_amn", "bf16", "bf16", 128, 256, 64, 8, 4,
                            contiguous="am,bn"))
    # fp8 (K-major and MN-major B) and tf32.
    for dt in ("fp8e4nv", "fp8e5"):
        v.append(matmul_variant(f"matmul_{dt}_128x128x128_w4_s3", dt, "fp16", 128, 128, 128, 4, 3))
        v.append(matmul_variant(f"matmul_{dt}_128x256x64_w8_s3_bk", dt, "fp16", 128, 256, 64, 8, 3,
                                contiguous="ak,bk"))
    v.append(matmul_variant("matmul_tf32_128x128x32_w4_s3", "fp32", "fp32", 128, 128, 32, 4, 3))
    v.append(matmul_variant("matmul_tf32_128x64x32_w4_s2_bk", "fp32", "fp32", 128, 64, 32, 4, 2,
                            contiguous="ak,bk"))
    # TMA matmuls: device-side and host-side tensor descriptors, persistent and warp-specialized.
    v.append(tma_variant("tma_devdesc_fp16_128x128x64_w4_s3", matmul_devdesc, "fp16", 128, 128, 64, 4, 3))
    v.append(tma_variant("tma_devdesc_bf16_128x256x64_w8_s3", matmul_devdesc, "bf16", 128, 256, 64, 8, 3))
    v.append(tma_variant("tma_hostdesc_fp16_128x128x64_w4_s4", matmul_hostdesc, "fp16", 128, 128, 64, 4, 4))
    v.append(tma_variant("tma_hostdesc_fp8e4nv_128x256x128_w8_s3", matmul_hostdesc, "fp8e4nv", 128, 256, 128, 8, 3))
    v.append(tma_variant("tma_persistent_fp16_128x256x64_w8_s3", matmul_persistent_ws, "fp16", 128, 256, 64, 8, 3,
                         extra={"NUM_SMS": 148, "WARP_SPECIALIZE": False}))
    v.append(tma_variant("tma_persistent_ws_fp16_128x256x64_w4_s3", matmul_persistent_ws, "fp16", 128, 256, 64,
                         4, 3, extra={"NUM_SMS": 148, "WARP_SPECIALIZE": True}))
    v.append(tma_variant("tma_persistent_ws_fp8e4nv_128x256x128_w4_s3", matmul_persistent_ws, "fp8e4nv", 128, 256,
                         128, 4, 3, extra={"NUM_SMS": 148, "WARP_SPECIALIZE": True}))
    # Block-scaled tl.dot_scaled, scales loaded as plain [MN, K/32] tiles: mxfp8, mxfp4, mixed, nvfp4.
    v.append(scaled_variant("scaled_mxfp8_e4m3_128x128x128_w4_s3", "e4m3", "e4m3", 128, 128, 128, 4, 3))
    v.append(scaled_variant("scaled_mxfp8_e5m2_128x256x128_w8_s3", "e5m2", "e5m2", 128, 256, 128, 8, 3))
    v.append(scaled_variant("scaled_mxfp4_e2m1_128x128x128_w4_s3", "e2m1", "e2m1", 128, 128, 128, 4, 3))
    v.append(scaled_variant("scaled_mxfp4_e2m1_128x256x256_w8_s2", "e2m1", "e2m1", 128, 256, 256, 8, 2))
    v.append(scaled_variant("scaled_mixed_e4m3_e2m1_128x128x128_w4_s3", "e4m3", "e2m1", 128, 128, 128, 4, 3))
    v.append(scaled_variant("scaled_nvfp4_e2m1_128x128x128_w4_s3", "e2m1", "e2m1", 128, 128, 128, 4, 3,
                            group=16, scale_ty="fp8e4nv"))
    # Block-scaled with TMA operands and pre-shuffled scales (tcgen05.cp of the scale factors).
    v.append(scaled_tma_variant("scaled_tma_mxfp8_e4m3_128x256x128_w4_s4", "e4m3", "e4m3", 128, 256, 128, 4, 4))
    v.append(scaled_tma_variant("scaled_tma_mxfp4_e2m1_128x256x256_w4_s4", "e2m1", "e2m1", 128, 256, 256, 4, 4))
    v.append(scaled_tma_variant("scaled_tma_nvfp4_e2m1_128x256x256_w4_s4", "e2m1", "e2m1", 128, 256, 256, 4, 4,
                                vec=16))
    v.append(scaled_tma_variant("scaled_tma_mixed_e4m3_e2m1_128x256x128_w4_s4", "e4m3", "e2m1", 128, 256, 128,
                                4, 4))
    # Attention: two dots per iteration, P V with P produced in registers.
    v.append(attention_variant("attention_fp16_128x64_d64_w4_s2", "fp16", 128, 64, 64, 4, 2))
    v.append(attention_variant("attention_bf16_128x128_d128_w8_s2", "bf16", 128, 128, 128, 8, 2))
    for var in list(v):
        if var["name"] in PTX90:
            v.append(dict(var, name=var["name"] + "_ptx90", ptx_version=90))
    return v


# --------------------------------------------------------------------------
def compile_variant(var, ptx_version=None):
    src = ASTSource(var["fn"], var["sig"], var["constexprs"])
    opts = dict(var["options"])
    if ptx_version is not None:
        opts["ptx_version"] = ptx_version
    k = triton.compile(src, target=TARGET, options=opts)
    return trim.portable_paths(k.asm["ptx"])  # .file paths without this machine's directories


def ptxas_check(path):
    """Assemble with the system ptxas, or Triton's own when the system one rejects the .version."""
    import subprocess
    bundled = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas-blackwell"
    tried = []
    for exe in ("ptxas", str(bundled)):
        if exe != "ptxas" and not Path(exe).exists():
            continue
        try:
            r = subprocess.run([exe, "-arch=sm_100a", str(path), "-o", os.devnull], capture_output=True, text=True)
        except FileNotFoundError:
            continue
        if r.returncode == 0:
            return exe if exe == "ptxas" else "triton ptxas-blackwell"
        tried.append(f"{exe}: {r.stderr.strip().splitlines()[0] if r.stderr.strip() else r.returncode}")
    raise RuntimeError(f"{path}: no ptxas assembles it: {'; '.join(tried)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(HERE / "triton"), help="output directory (default: %(default)s)")
    ap.add_argument("--only", help="only variants whose name contains this")
    ap.add_argument("--all", action="store_true",
                    help="write every variant, not only the committed ones (see COMMITTED)")
    ap.add_argument("--big", metavar="DIR", help="also compile the extra benchmark variants, untrimmed, into DIR")
    ap.add_argument("--limit", type=int, default=trim.DEFAULT_LIMIT, help="trim files over this many bytes")
    args = ap.parse_args()

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    manifest = [f"# Generated by tests/corpus/make_triton.py; do not edit.\n"
                f"[generator]\ntriton = {trim.toml_value(triton.__version__)}\n"
                f'target = "GPUTarget(\\"cuda\\", 100, 32)"\n'
                f"python = {trim.toml_value(sys.version.split()[0])}\n"
                f"TRITON_DEFAULT_FP_FUSION = {trim.toml_value(os.environ['TRITON_DEFAULT_FP_FUSION'])}\n"]
    failures = []
    for var in variants():
        if not args.all and var["name"] not in COMMITTED:
            continue
        if args.only and args.only not in var["name"]:
            continue
        try:
            ptx = compile_variant(var, var.get("ptx_version"))
        except Exception as e:  # a variant this Triton cannot compile for sm_100a
            msg = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
            failures.append((var["name"], f"{type(e).__name__}: {msg}"))
            print(f"FAIL {var['name']}: {type(e).__name__}: {msg}", file=sys.stderr)
            continue
        if "tcgen05.mma" not in ptx:
            failures.append((var["name"], "no tcgen05.mma in the PTX"))
            print(f"SKIP {var['name']}: no tcgen05.mma", file=sys.stderr)
            continue
        text, trimmed = trim.trim_text(ptx, args.limit)
        path = out / f"{var['name']}.ptx"
        path.write_text(text)
        assembler = ptxas_check(path)
        lines = trim.tc_lines(text)
        print(f"{var['name']}: {len(ptx)} bytes{' -> trimmed ' + str(len(text)) if trimmed else ''}, "
              f"{len(lines['tcgen05.mma'])} tcgen05.mma, {len(lines['tcgen05.cp'])} tcgen05.cp")
        params = dict(var["params"])
        if var.get("ptx_version"):
            params["ptx_version"] = var["ptx_version"]
        manifest.append(f"\n[[file]]\nname = {trim.toml_value(path.name)}\n"
                        f"kernel = {trim.toml_value(var['fn'].__name__)}\n"
                        + "".join(f"{k} = {trim.toml_value(val)}\n" for k, val in params.items())
                        + f"assembles_with = {trim.toml_value(assembler)}\n"
                        + f"bytes = {len(text)}\nuntrimmed_bytes = {len(ptx)}\ntrimmed = {trim.toml_value(trimmed)}\n"
                        f"tcgen05_mma_lines = {trim.toml_value(lines['tcgen05.mma'])}\n"
                        f"tcgen05_cp_lines = {trim.toml_value(lines['tcgen05.cp'])}\n")
    if failures:
        manifest.append("\n# Variants not kept (compile error or no tcgen05.mma):\n")
        for name, why in failures:
            manifest.append(f"[[not_kept]]\nname = {trim.toml_value(name)}\nwhy = {trim.toml_value(why)}\n")
    if not args.only and not args.all:
        (out / "MANIFEST.toml").write_text("".join(manifest))

    if args.big:
        big = Path(args.big)
        big.mkdir(parents=True, exist_ok=True)
        for var in variants() + variants(big=True):
            try:
                ptx = compile_variant(var, var.get("ptx_version"))
            except Exception as e:
                print(f"FAIL {var['name']}: {type(e).__name__}", file=sys.stderr)
                continue
            (big / f"{var['name']}.ptx").write_text(ptx)
            print(f"big {var['name']}: {len(ptx)} bytes")
    shutil.rmtree(_CACHE, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
