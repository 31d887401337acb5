#!/usr/bin/env python3
"""Compile Triton kernels for Hopper (sm_90a, wgmma) without a GPU and write their PTX.

Regenerates tests/corpus/triton_sm90/*.ptx and tests/corpus/triton_sm90/MANIFEST.toml.
The kernels are make_triton.py's (imported from it: pointer-load and TMA matmuls, the
persistent matmul, attention), compiled with triton.compile(ASTSource(...),
target=GPUTarget("cuda", 90, 32), options={num_warps, num_stages, ptx_version: 90}):
Triton writes `.target sm_90a` and uses wgmma.mma_async (MMAv3) for these tiles.
ptx_version=90 makes it write `.version 9.0`, which the system ptxas 13.0 takes;
every file is assembled again with `ptxas -arch=sm_90a`. Only PTX containing
wgmma.mma_async is kept; files over trim.py's limit are trimmed.

    python tests/corpus/make_triton_sm90.py              # the committed corpus
    python tests/corpus/make_triton_sm90.py --only NAME  # one entry (substring match)
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import make_triton as mt  # noqa: E402  (sets the private Triton cache and imports triton)
import trim  # noqa: E402

from triton.backends.compiler import GPUTarget  # noqa: E402

TARGET = GPUTarget("cuda", 90, 32)
PTX_VERSION = 90
tl = mt.tl


@mt.triton.jit
def matmul_int8(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bn, stride_cm,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """int8 x int8 -> int32 matmul, A row-major (K contiguous), B given as NxK (K contiguous)."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rn[None, :] * stride_bn + rk[:, None]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc)


def int8_variant(name, bm, bn, bk, warps, stages):
    sig = {"a_ptr": "*i8", "b_ptr": "*i8", "c_ptr": "*i32", "M": "i32", "N": "i32", "K": "i32", "stride_am": "i32",
           "stride_bn": "i32", "stride_cm": "i32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr",
           "BLOCK_K": "constexpr"}
    cx = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}
    return dict(name=name, fn=matmul_int8, sig=sig, constexprs=cx, options={"num_warps": warps, "num_stages": stages},
                params=dict(dtype="i8", out="i32", BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps,
                            num_stages=stages))


def variants():
    """The sm_90 corpus: every MMA type wgmma has that Triton emits, pointer and TMA operands,
    A/B majorness, a persistent matmul, attention (second MMA with A from registers)."""
    v = [
        mt.matmul_variant("matmul_fp16_128x128x64_w4_s3", "fp16", "fp16", 128, 128, 64, 4, 3),
        mt.matmul_variant("matmul_fp16_64x64x64_w4_s3", "fp16", "fp16", 64, 64, 64, 4, 3),
        mt.matmul_variant("matmul_fp16_128x128x64_w4_s3_amn_bk", "fp16", "fp16", 128, 128, 64, 4, 3,
                          contiguous="am,bk"),
        mt.matmul_variant("matmul_bf16_128x256x64_w8_s4_amn", "bf16", "bf16", 128, 256, 64, 8, 4, contiguous="am,bn"),
        mt.matmul_variant("matmul_tf32_128x64x32_w4_s2_bk", "fp32", "fp32", 128, 64, 32, 4, 2, contiguous="ak,bk"),
        mt.matmul_variant("matmul_fp8e4nv_128x128x128_w4_s3_bk", "fp8e4nv", "fp16", 128, 128, 128, 4, 3,
                          contiguous="ak,bk"),
        mt.matmul_variant("matmul_fp8e5_128x256x64_w8_s3_bk", "fp8e5", "fp16", 128, 256, 64, 8, 3, contiguous="ak,bk"),
        int8_variant("matmul_int8_128x128x64_w4_s3", 128, 128, 64, 4, 3),
        mt.tma_variant("tma_devdesc_fp16_128x128x64_w4_s3", mt.matmul_devdesc, "fp16", 128, 128, 64, 4, 3),
        mt.tma_variant("tma_hostdesc_bf16_128x128x64_w4_s4", mt.matmul_hostdesc, "bf16", 128, 128, 64, 4, 4),
        mt.tma_variant("tma_hostdesc_fp8e4nv_128x256x128_w8_s3", mt.matmul_hostdesc, "fp8e4nv", 128, 256, 128, 8, 3),
        mt.tma_variant("tma_persistent_fp16_128x256x64_w8_s3", mt.matmul_persistent_ws, "fp16", 128, 256, 64, 8, 3,
                       extra={"NUM_SMS": 132, "WARP_SPECIALIZE": False}),
        mt.attention_variant("attention_fp16_128x64_d64_w4_s2", "fp16", 128, 64, 64, 4, 2),
        mt.attention_variant("attention_bf16_128x128_d128_w8_s2", "bf16", 128, 128, 128, 8, 2),
    ]
    return v


def compile_variant(var):
    src = mt.ASTSource(var["fn"], var["sig"], var["constexprs"])
    opts = dict(var["options"], ptx_version=PTX_VERSION)
    return trim.portable_paths(mt.triton.compile(src, target=TARGET, options=opts).asm["ptx"])


def ptxas_check(path):
    r = subprocess.run(["ptxas", "-arch=sm_90a", str(path), "-o", os.devnull], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{path}: ptxas -arch=sm_90a: {(r.stderr or r.stdout).strip()}")
    return "ptxas " + mt_tool_version()


def mt_tool_version():
    out = subprocess.run(["ptxas", "--version"], capture_output=True, text=True).stdout
    return out.strip().splitlines()[-1].split()[-1] if out.strip() else "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(HERE / "triton_sm90"), help="output directory (default: %(default)s)")
    ap.add_argument("--only", help="only variants whose name contains this")
    ap.add_argument("--limit", type=int, default=trim.DEFAULT_LIMIT, help="trim files over this many bytes")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    manifest = [f"# Generated by tests/corpus/make_triton_sm90.py; do not edit.\n"
                f"[generator]\ntriton = {trim.toml_value(mt.triton.__version__)}\n"
                f'target = "GPUTarget(\\"cuda\\", 90, 32)"\n'
                f"ptx_version = {PTX_VERSION}\n"
                f"python = {trim.toml_value(sys.version.split()[0])}\n"
                f"TRITON_DEFAULT_FP_FUSION = {trim.toml_value(os.environ['TRITON_DEFAULT_FP_FUSION'])}\n"]
    failures = []
    for var in variants():
        if args.only and args.only not in var["name"]:
            continue
        try:
            ptx = compile_variant(var)
        except Exception as e:  # a variant this Triton cannot compile for sm_90
            msg = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
            failures.append((var["name"], f"{type(e).__name__}: {msg}"))
            print(f"FAIL {var['name']}: {type(e).__name__}: {msg}", file=sys.stderr)
            continue
        if "wgmma.mma_async" not in ptx:
            failures.append((var["name"], "no wgmma.mma_async in the PTX"))
            print(f"SKIP {var['name']}: no wgmma.mma_async", file=sys.stderr)
            continue
        text, trimmed = trim.trim_text(ptx, args.limit)
        path = out / f"{var['name']}_sm90.ptx"  # (names unique across the corpus: triton/ has the sm_100a ones)
        path.write_text(text)
        assembler = ptxas_check(path)
        lines = trim.tc_lines(text)["wgmma.mma_async"]
        print(f"{var['name']}: {len(ptx)} bytes{' -> trimmed ' + str(len(text)) if trimmed else ''}, "
              f"{len(lines)} wgmma.mma_async")
        manifest.append(f"\n[[file]]\nname = {trim.toml_value(path.name)}\n"
                        f"kernel = {trim.toml_value(var['fn'].__name__)}\n"
                        + "".join(f"{k} = {trim.toml_value(val)}\n" for k, val in var["params"].items())
                        + f"assembles_with = {trim.toml_value(assembler)}\n"
                        + f"bytes = {len(text)}\nuntrimmed_bytes = {len(ptx)}\ntrimmed = {trim.toml_value(trimmed)}\n"
                        f"wgmma_lines = {trim.toml_value(lines)}\n")
    if failures:
        manifest.append("\n# Variants not kept (compile error or no wgmma.mma_async):\n")
        for name, why in failures:
            manifest.append(f"[[not_kept]]\nname = {trim.toml_value(name)}\nwhy = {trim.toml_value(why)}\n")
    if not args.only:
        (out / "MANIFEST.toml").write_text("".join(manifest))
    return 0


if __name__ == "__main__":
    sys.exit(main())
