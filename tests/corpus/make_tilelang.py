#!/usr/bin/env python3
"""Compile TileLang's Blackwell examples to PTX for sm_100a (no GPU) and write the corpus files.

Regenerates tests/corpus/tilelang/*.ptx and tests/corpus/tilelang/MANIFEST.toml.

The kernels are those of TileLang's examples/ directory (github.com/tile-ai/tilelang at
TL_COMMIT; give its examples/ with --examples DIR).  Each example file is read, its module-level
code (which allocates CUDA tensors and runs the kernel) is dropped, and only its imports,
function definitions and constant assignments are kept (written to BUILD/examples/*_defs.py and
imported; pass-config keys this tilelang release lacks are dropped, and
tilelang.carver.arch.driver.get_num_sms() answers 148, a B200's SM count); the @tilelang.jit kernel named in
EXAMPLES is then turned into a PrimFunc with `get_tir(...)` (arguments as the example's main()
passes them; tensors are CPU tensors of the same shapes and dtypes, which only give shapes) and
lowered with

    with Target({"kind": "cuda", "arch": "sm_100a"}), PassContext(opt_level=3, config=<the kernel's pass_configs>):
        tilelang.lower(prim_func, target=...)        # .kernel_source: the CUDA C++ TileLang generates

The generated CUDA source is compiled the way TileLang's own nvcc adapter does it
(tilelang/jit/adapter/libgen.py), but to PTX and without -lineinfo (so the PTX holds no
temporary file names):

    nvcc -arch=sm_100a -ptx -std=c++20 -w -Xcudafe --diag_suppress=177 -O3
         -I<tilelang>/src -I<tilelang>/3rdparty/cutlass/include KERNEL.cu -o OUT.ptx

    pip install torch==2.13.0 tilelang==0.1.15       # a CPU torch is enough
    python tests/corpus/make_tilelang.py --examples TILELANG/examples [-j 2] [--keep DIR] [--only NAME]

Each PTX is assembled with `ptxas -arch=sm_100a`, trimmed by trim.py when over the size limit,
assembled again and written; no tcgen05.mma -> not kept; identical tcgen05 functions -> dropped.
"""
from __future__ import annotations

import argparse
import ast
import concurrent.futures as cf
import shutil
import sys
import tempfile
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import trim  # noqa: E402
import make_cuda_libs as common  # noqa: E402

TL_COMMIT = "a35008a42531c62b976ae4cec3855d4383db0f3c"  # tile-ai/tilelang main, 2026-08-21 (v0.1.13-82)

NVCC_FLAGS = ["-std=c++20", "-w", "-Xcudafe", "--diag_suppress=177", "-O3"]


def _t(*shape, dtype):
    import torch
    return torch.empty(*shape, dtype=dtype)


def _gemm_args():
    import torch
    import tilelang.language as T
    M, N, K = 4096, 4096, 8192
    return (_t(M, K, dtype=torch.bfloat16), _t(N, K, dtype=torch.bfloat16),
            128, 128, 128, False, True, T.bfloat16, T.bfloat16, T.float, 2, 256), {}


def _ws_args(num_stages, persistent=False):
    def f():
        import torch
        import tilelang.language as T
        M = N = K = 8192
        kw = dict(block_M=128, block_N=256, block_K=64, in_dtype=T.bfloat16, out_dtype=T.bfloat16,
                  accum_dtype=T.float, num_stages=num_stages, use_tma_store=True)
        if persistent:
            kw.update(store_block_N=64, group_size=8)
        return (_t(M, K, dtype=torch.bfloat16), _t(K, N, dtype=torch.bfloat16)), kw
    return f


def _fp8_args(fp8, acc):
    def f():
        import tilelang.language as T
        in_dtype, acc_dtype = getattr(T, fp8), getattr(T, acc)
        M, N, K = 4096, 4096, 8192
        return (_t(M, K, dtype=in_dtype.as_torch()), _t(N, K, dtype=in_dtype.as_torch()),
                64, 256, 32, False, True, in_dtype, acc_dtype, acc_dtype, 2, 256), {}
    return f


def _mxfp8_args(num_stages, transpose_B=False):
    def f():
        import torch
        import tilelang.language as T
        M = N = K = 8192
        sf_k_groups = ((K + 127) // 128 + 3) // 4
        b = _t(N, K, dtype=torch.float8_e4m3fn) if transpose_B else _t(K, N, dtype=torch.float8_e4m3fn)
        return (_t(M, K, dtype=torch.float8_e4m3fn), b, _t(sf_k_groups * M, dtype=torch.uint32),
                _t(sf_k_groups * N, dtype=torch.uint32), 128, 256, 128, T.float8_e4m3fn, T.bfloat16, T.float,
                num_stages, 128, transpose_B), {}
    return f


def _dsv4_args():
    import tilelang.language as T
    return (256, 8192, 1024, T.bfloat16), {}


def _attn_args(**kw):
    def f():
        return (2, 4, 256, 128, False), dict(kw)
    return f


def _bwd_args():
    return (2, 4, 256, 128, False, 64, 32), {}


# (corpus name, example file, kernel function, argument builder, what it exercises)
EXAMPLES = [
    ("tl_gemm_tcgen5mma_bf16_128x128x128", "gemm_tcgen05/gemm_tcgen5mma.py", "matmul", _gemm_args,
     "T.tcgen05_gemm, bf16 A K-major x B K-major (trans_B), cp.async loads, 2-stage T.Pipelined, 1 CTA"),
    ("tl_gemm_tcgen5mma_ws_bf16_128x256x64", "gemm_tcgen05/gemm_tcgen5mma_ws.py", "gemm", _ws_args(4),
     "warp-specialized TMA GEMM, bf16, B MN-major ([K, N]), 4 stages, 1 CTA"),
    ("tl_gemm_tcgen5mma_ws_2cta_bf16_256x256x64", "gemm_tcgen05/gemm_tcgen5mma_ws.py", "gemm_2cta", _ws_args(6),
     "2-CTA variant (cta_group::2, each CTA loads half of B), 6 stages"),
    ("tl_gemm_tcgen5mma_ws_persistent_2cta_bf16", "gemm_tcgen05/gemm_tcgen5mma_ws_persistent.py",
     "gemm_persistent_2cta", _ws_args(6, persistent=True),
     "persistent 2-CTA warp-specialized GEMM, double-buffered TMEM accumulators, TMA store"),
    ("tl_gemm_tcgen5mma_ws_persistent_bf16", "gemm_tcgen05/gemm_tcgen5mma_ws_persistent.py",
     "gemm_persistent", _ws_args(4, persistent=True),
     "persistent 1-CTA warp-specialized GEMM"),
    ("tl_gemm_fp8_e4m3_f32acc_64x256x32", "gemm_fp8/example_tilelang_gemm_fp8_sm100.py", "matmul",
     _fp8_args("float8_e4m3fn", "float32"), "fp8 e4m3 GEMM (kind::f8f6f4), M=64 tile, fp32 accumulator"),
    ("tl_gemm_fp8_e5m2_f16acc_64x256x32", "gemm_fp8/example_tilelang_gemm_fp8_sm100.py", "matmul",
     _fp8_args("float8_e5m2", "float16"), "fp8 e5m2 GEMM (kind::f8f6f4), fp16 accumulator"),
    ("tl_mxfp8_blockscaled_1cta_128x256x128", "blockscaled_gemm_sm100/gemm_mxfp8_blockscaled_1d1d.py",
     "mxfp8_blockscaled_gemm", _mxfp8_args(4),
     "mxfp8 block-scaled GEMM (kind::mxf8f6f4.block_scale, UE8M0 scales copied to TMEM with tcgen05.cp), 1 CTA"),
    ("tl_mxfp8_blockscaled_2cta_128x256x128", "blockscaled_gemm_sm100/gemm_mxfp8_blockscaled_1d1d.py",
     "mxfp8_blockscaled_gemm_2cta", _mxfp8_args(6),
     "mxfp8 block-scaled GEMM, 2-CTA (cta_group::2 MMA and tcgen05.cp.cta_group::2)"),
    ("tl_mxfp8_blockscaled_2cta_persistent", "blockscaled_gemm_sm100/gemm_mxfp8_blockscaled_1d1d.py",
     "mxfp8_blockscaled_gemm_2cta_persistent", _mxfp8_args(6),
     "mxfp8 block-scaled GEMM, 2-CTA persistent, TMA store"),
    ("tl_deepseek_v4_fp8_fp4_gemm_1d1d", "deepseek_v4/fp8_fp4_gemm_1d1d_sm100.py",
     "fp8_fp4_gemm_1d1d_persistent", _dsv4_args,
     "DeepSeek-V4 mixed fp4 (A) x fp8 (B) block-scaled GEMM (kind::mxf8f6f4), 2-CTA persistent"),
    ("tl_flash_attention_fwd_ss_d128", "flash_attention_sm100/mha_fwd_bshd.py", "flashattn",
     _attn_args(block_M=128, block_N=128, variant="ss"),
     "flash attention forward, both GEMMs SS (P through shared memory), 128 threads"),
    ("tl_flash_attention_fwd_ts_d128", "flash_attention_sm100/mha_fwd_bshd.py", "flashattn",
     _attn_args(block_M=128, block_N=128, variant="ts"),
     "flash attention forward, second GEMM with P in tensor memory (A from TMEM)"),
    ("tl_flash_attention_fwd_wasp_d128", "flash_attention_sm100/mha_fwd_bshd.py", "flashattn_wasp",
     _attn_args(block_M=128, block_N=128),
     "warp-specialized flash attention forward (softmax / DMA / MMA warps), GEMM2 from TMEM"),
    ("tl_gqa_fwd_wasp_d128_g2", "flash_attention_sm100/gqa_fwd_bshd.py", "flashattn_wasp",
     _attn_args(groups=2, block_M=128, block_N=128),
     "GQA (2 KV groups) warp-specialized flash attention forward"),
    ("tl_flash_attention_bwd_d128", "flash_attention_sm100/mha_bwd_bshd.py", "flashattn_bwd", _bwd_args,
     "flash attention backward (dQ/dK/dV GEMMs with tcgen05)"),
]


NUM_SMS = 148  # B200; what driver.get_num_sms() would report (persistent kernels size their grid with it)


class _DropUnknownPassConfigs(ast.NodeTransformer):
    """Drop `tilelang.PassConfigKey.X: v` entries whose key this tilelang release does not have
    (the examples' main branch may be ahead of the PyPI release)."""

    def visit_Dict(self, node):
        import tilelang
        keys, values = [], []
        for k, v in zip(node.keys, node.values):
            if isinstance(k, ast.Attribute) and ast.unparse(k.value).endswith("PassConfigKey") \
                    and not hasattr(tilelang.PassConfigKey, k.attr):
                continue
            keys.append(k)
            values.append(v)
        node.keys, node.values = keys, values
        return self.generic_visit(node)


def load_example(path, build):
    """Import an example without running it: its imports, function/class definitions and call-free
    (or tilelang-only) module-level assignments are written to BUILD/<stem>_defs.py, which is
    imported (the TileLang frontend re-reads a kernel's source, so it must be a real file)."""
    import importlib.util
    import tilelang.carver.arch.driver as driver
    driver.get_num_sms = lambda device_id=0: NUM_SMS
    mod = ast.parse(Path(path).read_text())
    keep = []
    for node in mod.body:
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef)):
            keep.append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            calls = [n for n in ast.walk(node) if isinstance(n, ast.Call)]
            if all(ast.unparse(c.func).split(".")[0] in ("tilelang", "T", "dict") for c in calls):
                keep.append(node)
    mod.body = keep
    mod = ast.fix_missing_locations(_DropUnknownPassConfigs().visit(mod))
    dst = build / "examples" / (Path(path).parent.name + "__" + Path(path).stem + "_defs.py")
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(f"# {path}, module-level code removed by tests/corpus/make_tilelang.py\n" + ast.unparse(mod) + "\n")
    spec = importlib.util.spec_from_file_location(dst.stem, dst)
    m = importlib.util.module_from_spec(spec)
    sys.modules[dst.stem] = m
    spec.loader.exec_module(m)
    return vars(m)


def lower_one(examples, name, rel, fn, argf, build):
    import tilelang
    import tvm
    ns = load_example(Path(examples) / rel, build)
    kernel = ns[fn]
    args, kw = argf()
    if hasattr(kernel, "get_tir"):
        tir = kernel.get_tir(*args, **kw)
        cfg = dict(kernel.pass_configs or {})
    else:  # a plain function returning a jit kernel's PrimFunc
        tir = kernel(*args, **kw)
        cfg = {}
    if not isinstance(tir, tvm.tirx.PrimFunc if hasattr(tvm, "tirx") else tvm.tir.PrimFunc) and hasattr(tir, "get_tir"):
        cfg = dict(tir.pass_configs or {})
        tir = tir.get_tir()
    tgt = tvm.target.Target({"kind": "cuda", "arch": "sm_100a"})
    with tgt, tvm.transform.PassContext(opt_level=3, config=cfg):
        art = tilelang.lower(tir, target=tgt)
    cu = build / f"{name}.cu"
    cu.write_text(art.kernel_source)
    return cu


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--examples", required=True, help="TileLang's examples/ directory (at TL_COMMIT)")
    ap.add_argument("--out", default=str(HERE / "tilelang"), help="output directory (default: %(default)s)")
    ap.add_argument("--keep", metavar="DIR", help="build directory for the generated .cu and untrimmed PTX (kept)")
    ap.add_argument("--reuse", action="store_true", help="with --keep: reuse the .cu/.ptx there")
    ap.add_argument("--only", help="only examples whose name contains this (no manifest written)")
    ap.add_argument("-j", type=int, default=2, help="parallel nvcc jobs (default: %(default)s)")
    ap.add_argument("--limit", type=int, default=trim.DEFAULT_LIMIT, help="trim files over this many bytes")
    args = ap.parse_args()

    import tilelang  # noqa: F401  (fails early, naming the package, when it is missing)
    from tilelang import env
    tl_src = Path(env.TILELANG_TEMPLATE_PATH).resolve()
    tl_cutlass = Path(env.CUTLASS_INCLUDE_DIR).resolve()
    build = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="descgen-tilelang-"))
    build.mkdir(parents=True, exist_ok=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    todo = [e for e in EXAMPLES if not args.only or args.only in e[0]]

    results, lowered = {}, {}
    for name, rel, fn, argf, _ in todo:  # lowering: one at a time (TVM is not thread-safe)
        cu = build / f"{name}.cu"
        if args.reuse and cu.exists():
            lowered[name] = cu
            continue
        try:
            lowered[name] = lower_one(args.examples, name, rel, fn, argf, build)
            print(f"{name}: lowered", flush=True)
        except Exception as e:  # noqa: BLE001
            tb = traceback.format_exc()
            print(f"FAIL lowering {name}:\n{tb[-3000:]}", file=sys.stderr, flush=True)
            results[name] = (1, f"tilelang.lower failed: error: {type(e).__name__}: "
                                f"{str(e).strip().splitlines()[-1] if str(e).strip() else ''}", build / f"{name}.ptx")

    def cmd(cu):
        return (["nvcc", "-arch=sm_100a", "-ptx"] + NVCC_FLAGS + [f"-I{tl_src}", f"-I{tl_cutlass}", str(cu),
                "-o", str(cu.with_suffix(".ptx"))])

    with cf.ThreadPoolExecutor(max_workers=max(1, args.j)) as ex:
        futs = {}
        for name, cu in lowered.items():
            raw = cu.with_suffix(".ptx")
            if args.reuse and raw.exists():
                results[name] = (0, "", raw)
                continue
            futs[ex.submit(common.run_nvcc, cmd(cu))] = (name, raw)
        for f in cf.as_completed(futs):
            name, raw = futs[f]
            rc, log, secs = f.result()
            results[name] = (rc, log, raw)
            print(f"{name}: nvcc rc={rc} in {secs:.0f} s", flush=True)

    flags = " ".join(["-arch=sm_100a", "-ptx"] + NVCC_FLAGS + ["-ITILELANG/src", "-ITILELANG/3rdparty/cutlass/include"])
    head = ("# Generated by tests/corpus/make_tilelang.py; do not edit.\n[generator]\n"
            f"tilelang = {trim.toml_value(common.package_version('tilelang'))}\n"
            f"torch = {trim.toml_value(common.package_version('torch'))}\n"
            f"examples_repo = \"https://github.com/tile-ai/tilelang\"\n"
            f"examples_commit = {trim.toml_value(TL_COMMIT)}\n"
            f"target = \"{{'kind': 'cuda', 'arch': 'sm_100a'}}\"\n"
            f"nvcc = {trim.toml_value(common.tool_version('nvcc'))}\n"
            f"ptxas = {trim.toml_value(common.tool_version('ptxas'))}\n"
            f"flags = {trim.toml_value(flags)}\n")
    ents = [(n, f"examples/{rel}::{fn}", what) for n, rel, fn, _, what in todo]
    text, failed = common.finish(ents, results, out, args.limit, head)
    if not args.only:
        (out / "MANIFEST.toml").write_text(text)
    if not args.keep:
        shutil.rmtree(build, ignore_errors=True)
    return 1 if any(not why.startswith("tcgen05 functions identical") for _, why in failed) else 0


if __name__ == "__main__":
    sys.exit(main())
