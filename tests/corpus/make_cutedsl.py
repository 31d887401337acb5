#!/usr/bin/env python3
"""Compile CuTe DSL kernels (CUTLASS Python examples, quack, FlashAttention 4) for sm_100a without a GPU.

Regenerates tests/corpus/cutedsl/, tests/corpus/quack/ and tests/corpus/fa4/ (the .ptx files and
one MANIFEST.toml per directory).  Everything is compiled on a machine with no GPU and no CUDA
driver: the CuTe DSL (nvidia-cutlass-dsl) lowers to PTX through its bundled NVVM, and
CUTE_DSL_KEEP=ptx writes that PTX to CUTE_DSL_DUMP_DIR; nothing is ever launched.

Setup (a private venv; torch only as a CPU build, the examples and quack import it):

    python3 -m venv ~/.venvs/corpus-dsl
    V=~/.venvs/corpus-dsl/bin
    $V/pip install torch==2.13.0                                   # CPU build
    $V/pip install "nvidia-cutlass-dsl[cu13]==4.8.1" quack-kernels==0.6.5 flash-attn-4==4.0.0b36 \\
        triton==3.9.0 numpy                                        # quack imports triton
    $V/pip install --no-deps nvidia-cuda-nvcc==13.4.59             # ptxas 13.4 (the DSL writes .version 9.4)
    $V/pip install apache-tvm-ffi==0.1.15.post2    # the primitives compile with --enable-tvm-ffi (quack brings it too)

and the CUTLASS repository (for examples/python/CuTeDSL), as a git directory or a work tree:

    $V/python tests/corpus/make_cutedsl.py --cutlass-git /path/to/cutlass/.git [--cutlass-rev REV]
    $V/python tests/corpus/make_cutedsl.py --cutlass-examples /path/to/cutlass/examples/python/CuTeDSL
    options: --only SUBSTRING   --keep DIR (raw dumps and logs) [--reuse]   -j 2   --list
A full run takes about 10 minutes on 2 cores (10-60 s per entry).  `--only` compiles the entries whose
name contains SUBSTRING (the CUTLASS ones need only nvidia-cutlass-dsl, torch, apache-tvm-ffi and the
wheel's ptxas) and merges their records into the manifests: the other records, the [generator] block
and the other files stay as they are.

How each entry is compiled (a child process of this script, `--child`, per entry):
  * CUTLASS examples ("example"): the example's own `__main__` runs with the given argv, under a
    shim that makes torch's "cuda" device the CPU (CPU tensors whose DLPack capsules are marked as
    CUDA, so that the DSL sees global memory), fakes torch.cuda streams / capability 10.0 /
    HardwareInfo, turns `cute.testing.convert` (a kernel launch that fills fp8/fp4 test data) into
    a no-op, and stops the script right after the N-th `cute.compile` (N = `compiles`).
  * "call": imports an example module and evaluates an expression in it (the experimental
    tcgen05 primitives have `compile(...)` functions that use fake tensors).
  * quack: `quack.gemm._compile_gemm.__wrapped__(...)` (quack's own fake-tensor compile path,
    bypassing its disk cache), device_capacity (10, 0).
  * fa4: `flash_attn.cute.flash_attn_func` (forward) and `flash_attn.cute.interface._flash_attn_bwd`
    (backward, called directly: autograd would run it in another thread, outside the torch
    function mode of the shim) on small CPU tensors under the same shim; every `cute.compile` is done and returns a
    no-op instead of the launcher (an exception
    raised after the PTX was written, such as TVM-FFI's stream detection, is ignored).
Environment of every child: CUTE_DSL_ARCH=<arch> (sm_100a; sm_103a for the SM103 example),
CUTE_DSL_KEEP=ptx, CUTE_DSL_DUMP_DIR=<fresh dir>, QUACK_CACHE_ENABLED=0, PYTHONHASHSEED=0.

Only dumped PTX files that contain tcgen05.mma are kept; an entry that dumps several (FA4's
backward: preprocess, main kernel, postprocess) keeps the ones with tcgen05.mma.  A file whose
tcgen05.mma / tcgen05.cp lines are identical to those of a file already kept is dropped as a
duplicate.  Files over 300 KB are trimmed with trim.py.  Each file is assembled with
`ptxas -arch=sm_100a` (sm_103a for the SM103 one) before and after trimming: the system ptxas
(CUDA 13.0) rejects the DSL's `.version 9.4`, so the ptxas of the nvidia-cuda-nvcc wheel (13.4)
is used; which one assembled a file is recorded in the manifest.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import trim  # noqa: E402

# The CUTLASS commit whose examples/python/CuTeDSL made the committed files (NVIDIA/cutlass main,
# 2026-08, between v4.7.0 and the nvidia-cutlass-dsl 4.8.1 release that compiled them).
CUTLASS_REV = "7107b05535f8977f5ecb9d01ee203205b1fd9bc4"
BW = "cute/blackwell/kernel"
PRIM = "experimental/primitives/tcgen05"

# --------------------------------------------------------------------------
# The entries
# --------------------------------------------------------------------------
# dir, name, kind, arch, what, and per kind: script + argv (example), script + expr (call),
# kwargs (quack), code (fa4).
E = []


def ex(name, script, argv, what, arch="sm_100a", compiles=1):
    E.append(dict(dir="cutedsl", name=name, kind="example", script=script, argv=argv, what=what, arch=arch,
                  compiles=compiles))


def call(name, script, expr, what, arch="sm_100a"):
    E.append(dict(dir="cutedsl", name=name, kind="call", script=script, expr=expr, what=what, arch=arch))


def quack(name, what, **kw):
    E.append(dict(dir="quack", name=name, kind="quack", kwargs=kw, what=what, arch="sm_100a"))


def fa4(name, code, what):
    E.append(dict(dir="fa4", name=name, kind="fa4", code=code, what=what, arch="sm_100a"))


# CUTLASS CuTe DSL examples ------------------------------------------------
ex("dense_gemm_f16_256x128_2cta", f"{BW}/dense_gemm/dense_gemm.py",
   "--ab_dtype Float16 --c_dtype Float16 --mnkl 256,256,256,1 --mma_tiler_mn 256,128 --cluster_shape_mn 2,1 "
   "--use_2cta_instrs --use_tma_store", "dense GEMM, kind::f16, cta_group::2 (2-SM), K-major A/B")
ex("dense_gemm_persistent_bf16_256x256_2cta", f"{BW}/dense_gemm/dense_gemm_persistent.py",
   "--ab_dtype BFloat16 --c_dtype BFloat16 --mnkl 256,256,256,1 --mma_tiler_mn 256,256 --cluster_shape_mn 2,1 "
   "--use_2cta_instrs --use_tma_store", "persistent warp-specialized GEMM, kind::f16, 2-SM, M=256 N=256")
ex("dense_gemm_persistent_tf32_128x128_mn_major", f"{BW}/dense_gemm/dense_gemm_persistent.py",
   "--ab_dtype TFloat32 --c_dtype Float32 --mnkl 256,256,256,1 --mma_tiler_mn 128,128 --cluster_shape_mn 1,1 "
   "--a_major m --b_major n", "persistent GEMM, kind::tf32, A M-major and B N-major (MN-major descriptors)")
ex("dense_gemm_persistent_f16_64x128", f"{BW}/dense_gemm/dense_gemm_persistent.py",
   "--ab_dtype Float16 --c_dtype Float16 --mnkl 256,256,256,1 --mma_tiler_mn 64,128 --cluster_shape_mn 1,1",
   "persistent GEMM, kind::f16, M=64 instruction")
ex("dense_gemm_persistent_i8_128x256", f"{BW}/dense_gemm/dense_gemm_persistent.py",
   "--ab_dtype Int8 --c_dtype Int32 --acc_dtype Int32 --mnkl 256,256,256,1 --mma_tiler_mn 128,256 "
   "--cluster_shape_mn 1,1", "persistent GEMM, kind::i8 (int8 x int8 -> int32)")
ex("blockwise_gemm_fp8_128x128", f"{BW}/blockwise_gemm/blockwise_gemm.py", "--mnkl 256,256,512,1",
   "blockwise-scaled fp8 GEMM (scales applied in registers), kind::f8f6f4")
ex("blockscaled_nvf4_256x256_2cta", f"{BW}/blockscaled_gemm/dense_blockscaled_gemm_persistent.py",
   "--mnkl 512,512,512,1 --mma_tiler_mn 256,256 --cluster_shape_mn 2,1",
   "block-scaled nvfp4 (e2m1, e4m3 scales, vec 16), kind::mxf4nvf4.block16, 2-SM, tcgen05.cp of scale factors")
ex("blockscaled_mxf8_128x256", f"{BW}/blockscaled_gemm/dense_blockscaled_gemm_persistent.py",
   "--mnkl 512,512,512,1 --a_dtype Float8E4M3FN --b_dtype Float8E4M3FN --sf_dtype Float8E8M0FNU "
   "--sf_vec_size 32 --mma_tiler_mn 128,256",
   "block-scaled mxfp8 (e4m3, e8m0 scales), kind::mxf8f6f4.block32, cta_group::1, tcgen05.cp")
ex("blockscaled_mxf4_128x128", f"{BW}/blockscaled_gemm/dense_blockscaled_gemm_persistent.py",
   "--mnkl 512,512,512,1 --sf_dtype Float8E8M0FNU --sf_vec_size 32 --mma_tiler_mn 128,128",
   "block-scaled mxfp4 (e2m1, e8m0 scales, vec 32), kind::mxf4 family, tcgen05.cp")
ex("blockscaled_mxf6_e2m3_mn_major_128x128", f"{BW}/blockscaled_gemm/dense_blockscaled_gemm_persistent.py",
   "--mnkl 512,512,512,1 --a_dtype Float6E2M3FN --b_dtype Float6E2M3FN --sf_dtype Float8E8M0FNU "
   "--sf_vec_size 32 --mma_tiler_mn 128,128 --a_major m --b_major n",
   "block-scaled mxfp6 (e2m3), kind::mxf8f6f4, MN-major A and B")
ex("sm103_blockscaled_nvf4_256x256_2cta", f"{BW}/blockscaled_gemm/sm103_dense_blockscaled_gemm_persistent.py",
   "--mnkl 1024,1024,768,1", "SM103 block-scaled fp4 (K=96 'ultra' MMA tile), 2-SM, compiled for sm_103a",
   arch="sm_103a")
ex("fmha_fwd_f16_d128_persistent", f"{BW}/attention/fmha/fmha.py",
   "--q_shape 1,256,8,128 --k_shape 1,256,8,128 --is_persistent",
   "FMHA forward: S=QK^T (SS) and O=PV with P from tensor memory (TS), kind::f16")
ex("fmha_bwd_f16_d128", f"{BW}/attention/fmha/fmha_bwd.py", "--s_q 256 --s_k 256 --d 128",
   "FMHA backward: dQ, dK, dV, dP MMAs, kind::f16")
ex("mla_decode_fp16_persistent", f"{BW}/attention/mla/mla_decode_fp16.py", "--is_persistent",
   "MLA decode (latent 512 + rope 64), kind::f16, 2-SM")
ex("mla_decode_fp8_persistent", f"{BW}/attention/mla/mla_decode_fp8.py", "--is_persistent",
   "MLA decode with fp8 KV, kind::f8f6f4, 2-SM")

# experimental tcgen05 primitives (cutlass.experimental.primitives) -------------------------------
call("prim_1cta_mma_f16_128x128x64", f"{PRIM}/1cta_mma_basic.py", "compile()",
     "primitive tcgen05_mma, kind::f16, descriptors built by Tcgen05 helpers, 4 MMAs per K tile")
call("prim_1cta_mma_fp8_collector_wdmask", f"{PRIM}/1cta_mma_basic.py",
     "compile(AB_DTYPE=cutlass.Float8E4M3FN, COLLECTOR=2, WDMASK=1, SCALE_D=1)",
     "primitive MMA, kind::f8f6f4, collector::a::fill/lastuse, write-disable mask, scale_input_d")
call("prim_1cta_mma_a_from_tmem_ashift", f"{PRIM}/1cta_mma_a_from_tmem.py", "compile(ashift=True)",
     "A operand in tensor memory ([taddr]), .ashift")
call("prim_1cta_mma_mn_major", f"{PRIM}/1cta_mma_mn_major.py", "compile()", "MN-major smem descriptors")
call("prim_2cta_mma_blockscale_nvf4_m128", f"{PRIM}/2cta_mma_blockscale_m128.py", "compile()",
     "2-SM block-scaled nvfp4 MMA with M=128 (64 rows per CTA), tcgen05.cp of scale factors")
call("prim_cp_narrow_fp4_a_to_tmem", f"{PRIM}/cp_narrow_a_to_tmem_mma.py", "compile('fp4')",
     "tcgen05.cp of fp4 A into tensor memory (decompressing copy) then MMA with A in TMEM")
call("prim_cp_narrow_fp6_a_to_tmem", f"{PRIM}/cp_narrow_a_to_tmem_mma.py", "compile('fp6')",
     "as fp4, with fp6 A")
call("prim_slicek_n_group_a_tmem_shift_wdm", f"{PRIM}/slicek_m32n8k128.py",
     "compile('n_group_a_tmem_shift_wdm')", "four 128x8x32B MMAs, A in TMEM with .ashift, fixed write-disable mask")
call("prim_slicek_n_group_smem_a_reuse_wdm", f"{PRIM}/slicek_m32n8k128.py",
     "compile('n_group_smem_a_reuse_wdm')", "four N=8 MMAs, smem A collector reuse, per-group write-disable mask")
call("prim_slicek_expanded_async_s32_smem", f"{PRIM}/slicek_m32n8k128.py", "compile('async_s32_smem')",
     "one 128x32x32B MMA whose B descriptor (128B swizzle, SBO = 32 bytes) reads B's 8 rows four times, one 32-byte "
     "K stripe per 8-row N group (slice-K, errata E47); A 32B-swizzled (SBO 256) from cp.async")
call("prim_slicek_expanded_a_tmem_core_matrix", f"{PRIM}/slicek_m32n8k128.py", "compile('a_tmem_core_matrix')",
     "the same slice-K B descriptor (128B swizzle, SBO = 32 bytes, N = 32) with A in tensor memory (tcgen05.st)")

# quack ----------------------------------------------------------------------------------------
quack("gemm_bf16_256x256_2cta", "quack GemmDefaultSm100, bf16, tile 256x256, cluster 2x1 (2-SM)",
      a_dtype="BFloat16", d_dtype="BFloat16", tile_shape_mn=(256, 256), cluster_shape_mnk=(2, 1, 1))
quack("gemm_f16_128x128_mn_major", "quack GemmDefaultSm100, fp16, tile 128x128, A M-major, B N-major",
      a_dtype="Float16", d_dtype="Float16", tile_shape_mn=(128, 128), cluster_shape_mnk=(1, 1, 1),
      a_major="m", b_major="n")
quack("gemm_fp8e4m3_256x128_2cta", "quack GemmDefaultSm100, fp8 e4m3 -> bf16, 2-SM",
      a_dtype="Float8E4M3FN", d_dtype="BFloat16", tile_shape_mn=(256, 128), cluster_shape_mnk=(2, 1, 1))
quack("gemm_bf16_varlen_m_128x256", "quack GemmDefaultSm100, bf16, varlen_m (grouped by cu_seqlens)",
      a_dtype="BFloat16", d_dtype="BFloat16", tile_shape_mn=(128, 256), cluster_shape_mnk=(1, 1, 1), varlen_m=True)
quack("gemm_mxfp8_128x256", "quack block-scaled mxfp8 (e4m3, e8m0 scales, vec 32)",
      a_dtype="Float8E4M3FN", d_dtype="BFloat16", tile_shape_mn=(128, 256), cluster_shape_mnk=(1, 1, 1),
      sf_dtype="Float8E8M0FNU", sf_vec_size=32)
quack("gemm_nvfp4_256x256_2cta", "quack block-scaled nvfp4 (e2m1, e4m3 scales, vec 16), 2-SM",
      a_dtype="Float4E2M1FN", d_dtype="BFloat16", tile_shape_mn=(256, 256), cluster_shape_mnk=(2, 1, 1),
      sf_dtype="Float8E4M3FN", sf_vec_size=16)

# FlashAttention 4 --------------------------------------------------------------------------------
_FA_FWD = """
q = torch.randn(1, 256, {hq}, {d}, dtype=torch.{dt}); k = torch.randn(1, 256, {hk}, {d}, dtype=torch.{dt})
v = torch.randn(1, 256, {hk}, {dv}, dtype=torch.{dt})
flash_attn_func(q, k, v, causal={causal})
"""
_FA_BWD = """
q = torch.randn(1, 256, {hq}, {d}, dtype=torch.{dt}); k = torch.randn(1, 256, {hk}, {d}, dtype=torch.{dt})
v = torch.randn(1, 256, {hk}, {d}, dtype=torch.{dt}); out = torch.randn_like(q); dout = torch.randn_like(q)
lse = torch.randn(1, {hq}, 256, dtype=torch.float32)
_flash_attn_bwd(q, k, v, out, dout, lse, causal={causal})
"""
fa4("fwd_bf16_d128_causal", _FA_FWD.format(hq=8, hk=8, d=128, dv=128, dt="bfloat16", causal=True),
    "FlashAttentionForwardSm100, bf16, head dim 128, causal (flash_attn_func)")
fa4("fwd_f16_d64_gqa", _FA_FWD.format(hq=8, hk=2, d=64, dv=64, dt="float16", causal=False),
    "FlashAttentionForwardSm100, fp16, head dim 64, GQA 8/2 heads")
fa4("fwd_bf16_d192_dv128", _FA_FWD.format(hq=8, hk=8, d=192, dv=128, dt="bfloat16", causal=True),
    "FlashAttentionForwardSm100, bf16, head dims 192 (QK) / 128 (V), causal")
fa4("bwd_bf16_d128_causal", _FA_BWD.format(hq=8, hk=8, d=128, dt="bfloat16", causal=True),
    "FlashAttentionBackwardSm100, bf16, head dim 128, causal (interface._flash_attn_bwd)")
fa4("bwd_bf16_d256", _FA_BWD.format(hq=8, hk=8, d=256, dt="bfloat16", causal=False),
    "backward with head dim 256 (2-CTA hd256 kernels where FA4 selects them)")


# --------------------------------------------------------------------------
# Child side: the shim that lets the DSL compile without a GPU
# --------------------------------------------------------------------------
class StopAfterCompile(BaseException):
    pass


def install_shim(n_max):
    """Patch torch.cuda / cute.compile / DSL helpers so that code written for a GPU compiles on CPU.

    n_max > 0: stop (StopAfterCompile) after the n_max-th cute.compile.  n_max == 0: do every
    compile and return a no-op instead of the compiled function; a compile that raises after
    having written its PTX is reported and also answered with a no-op."""
    import ctypes

    import torch
    from torch.overrides import TorchFunctionMode

    def fix_dev(d):
        if isinstance(d, torch.device) and d.type == "cuda":
            return torch.device("cpu")
        if isinstance(d, str) and d.startswith("cuda"):
            return "cpu"
        if isinstance(d, int) and not isinstance(d, bool):
            return "cpu"
        return d

    class CpuMode(TorchFunctionMode):
        def __torch_function__(self, func, types_, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if "device" in kwargs:
                kwargs["device"] = fix_dev(kwargs["device"])
            name = getattr(func, "__name__", "")
            if name == "__get__" and getattr(getattr(func, "__self__", None), "__name__", "") == "is_cuda":
                return True
            if name in ("cuda", "pin_memory"):
                return args[0]
            if name == "record_stream":
                return None
            if name == "to" and len(args) > 1:
                args = (args[0],) + tuple(fix_dev(a) for a in args[1:])
            return func(*args, **kwargs)

    CpuMode().__enter__()

    class FakeStream:
        cuda_stream = 0

        def synchronize(self):
            pass

        def wait_stream(self, *a):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False

    class FakeEvent:
        def __init__(self, *a, **k):
            pass

        def record(self, *a, **k):
            pass

        def synchronize(self):
            pass

        def elapsed_time(self, other):
            return 1.0

    class FakeProps:
        name = "NVIDIA B200"
        major, minor = 10, 0
        multi_processor_count = 148
        total_memory = 180 << 30

    c = torch.cuda
    c.is_available = lambda: True
    c.current_stream = lambda *a, **k: FakeStream()
    c.default_stream = lambda *a, **k: FakeStream()
    c.Stream = lambda *a, **k: FakeStream()
    c.stream = lambda s=None: FakeStream()
    c.Event = FakeEvent
    c.synchronize = lambda *a, **k: None
    c.get_device_capability = lambda *a, **k: (10, 0)
    c.get_device_properties = lambda *a, **k: FakeProps()
    c.get_device_name = lambda *a, **k: "NVIDIA B200"
    c.current_device = lambda: 0
    c.device_count = lambda: 1
    c.set_device = lambda *a: None
    c.manual_seed = lambda *a: None
    c.empty_cache = lambda: None

    # CPU tensors would be 'generic' memory to the DSL: mark their DLPack capsules as CUDA (kDLCUDA = 2).
    import cutlass.cute.runtime as crt
    get_ptr = ctypes.pythonapi.PyCapsule_GetPointer
    get_ptr.restype = ctypes.c_void_p
    get_ptr.argtypes = [ctypes.py_object, ctypes.c_char_p]
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype = ctypes.c_char_p
    get_name.argtypes = [ctypes.py_object]
    real_init = crt._Tensor.__init__

    def tensor_init(self, tensor, *a, **k):
        real_init(self, tensor, *a, **k)
        cap = getattr(self, "_dlpack_data", None)
        if type(cap).__name__ == "PyCapsule":
            nm = get_name(cap)
            ptr = get_ptr(cap, nm)
            off = 8 if nm == b"dltensor" else 32  # DLManagedTensor / DLManagedTensorVersioned
            dev = ctypes.cast(ptr + off, ctypes.POINTER(ctypes.c_int))
            if dev[0] == 1:
                dev[0] = 2

    crt._Tensor.__init__ = tensor_init

    import cutlass.cute as cute
    real_compile = cute.compile
    state = {"n": 0}

    def after(result):
        state["n"] += 1
        print(f"[shim] cute.compile #{state['n']} done", file=sys.stderr, flush=True)
        if n_max == 0:
            return lambda *a, **k: None
        if state["n"] >= n_max:
            raise StopAfterCompile()
        return result

    def guarded(fn, *a, **k):
        try:
            r = fn(*a, **k)
        except Exception as e:  # noqa: BLE001
            if n_max != 0:
                raise
            print(f"[shim] cute.compile raised {type(e).__name__} (after dumping PTX?): "
                  f"{str(e).strip().splitlines()[-1] if str(e).strip() else ''}", file=sys.stderr)
            r = None
        return after(r)

    class Compile:
        def __call__(self, *a, **k):
            return guarded(real_compile, *a, **k)

        def __getitem__(self, opts):
            inner = real_compile[opts]
            return lambda *a, **k: guarded(inner, *a, **k)

        def __getattr__(self, n):
            return getattr(real_compile, n)

    cute.compile = Compile()
    import cutlass.cute.testing as ct
    ct.convert = lambda *a, **k: None  # fills fp8/fp4 test data with a kernel launch
    import cutlass.cuda as ccuda
    ccuda.initialize_cuda_context = lambda *a, **k: None  # needs the driver; compiling does not
    import cutlass.utils as cu
    cu.HardwareInfo.__init__ = lambda self, *a, **k: None
    cu.HardwareInfo.get_max_active_clusters = lambda self, n: 148 // n
    cu.HardwareInfo.get_l2_cache_size_in_bytes = lambda self: 126 << 20
    cu.HardwareInfo.get_device_multiprocessor_count = lambda self: 148


def child(spec):
    import importlib.util
    import runpy
    kind = spec["kind"]
    install_shim(spec.get("compiles", 1) if kind == "example" else 0)
    try:
        if kind == "example":
            path = spec["script_path"]
            sys.argv = [path] + spec["argv"].split()
            sys.path.insert(0, os.path.dirname(path))
            runpy.run_path(path, run_name="__main__")
            print("[shim] the script ended before its compile", file=sys.stderr)
            return 3
        if kind == "call":
            path = spec["script_path"]
            sys.path.insert(0, os.path.dirname(path))
            sp = importlib.util.spec_from_file_location("corpus_example", path)
            mod = importlib.util.module_from_spec(sp)
            sys.modules["corpus_example"] = mod
            sp.loader.exec_module(mod)
            eval(spec["expr"], vars(mod))
            return 0
        if kind == "quack":
            import cutlass
            from quack.gemm import _compile_gemm
            from quack.rounding import RoundingMode
            kw = dict(spec["kwargs"])
            dt = lambda n: getattr(cutlass, n) if n else None  # noqa: E731
            a = dt(kw.pop("a_dtype"))
            args = dict(a_dtype=a, b_dtype=a, d_dtype=dt(kw.pop("d_dtype")), c_dtype=None, a_major="k",
                        b_major="k", d_major="n", c_major="n", pingpong=False, persistent=True,
                        is_dynamic_persistent=False, rowvec_dtype=None, colvec_dtype=None, colvec_ndim=0,
                        alpha_mode=0, beta_mode=0, add_to_output=False, concat_layout=None, varlen_m=False,
                        varlen_k=False, gather_A=False, use_tma_gather=False, has_batch_idx_permute=False,
                        device_capacity=(10, 0), rounding_mode=RoundingMode.RN, sr_seed_mode=0, num_warps=None)
            if "sf_dtype" in kw:
                kw["sf_dtype"] = dt(kw["sf_dtype"])
            for key in ("tile_shape_mn", "cluster_shape_mnk"):
                kw[key] = tuple(kw[key])
            args.update(kw)
            _compile_gemm.__wrapped__(**args)
            return 0
        if kind == "fa4":
            import torch  # noqa: F401
            from flash_attn.cute import flash_attn_func
            from flash_attn.cute.interface import _flash_attn_bwd
            exec(spec["code"], {"torch": torch, "flash_attn_func": flash_attn_func, "_flash_attn_bwd": _flash_attn_bwd})
            return 0
    except StopAfterCompile:
        print("[shim] stopped after compile", file=sys.stderr)
        return 0
    raise SystemExit(f"unknown kind {kind}")


# --------------------------------------------------------------------------
# Parent side
# --------------------------------------------------------------------------
def package_version(name):
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:
        return "not installed"


def wheel_ptxas():
    try:
        import nvidia
        for base in getattr(nvidia, "__path__", []):
            p = Path(base) / "cu13" / "bin" / "ptxas"
            if p.exists():
                return p
    except ImportError:
        pass
    return None


def ptxas_version(exe):
    out = subprocess.run([str(exe), "--version"], capture_output=True, text=True).stdout
    m = re.search(r"V([\d.]+)", out)
    return m.group(1) if m else "?"


def ptxas_check(path, arch):
    """Assemble with the system ptxas, else the nvidia-cuda-nvcc wheel's; returns a description."""
    tried = []
    for exe in ("ptxas", wheel_ptxas()):
        if exe is None:
            continue
        try:
            r = subprocess.run([str(exe), f"-arch={arch}", str(path), "-o", os.devnull], capture_output=True,
                               text=True)
        except FileNotFoundError:
            continue
        if r.returncode == 0:
            label = "system" if exe == "ptxas" else "nvidia-cuda-nvcc wheel"
            return f"ptxas {ptxas_version(shutil.which(str(exe)) or exe)} ({label}) -arch={arch}"
        msg = (r.stderr or r.stdout).strip().splitlines()
        tried.append(f"{exe}: {msg[-2] if len(msg) > 1 else (msg[0] if msg else r.returncode)}")
    raise RuntimeError("no ptxas assembles it: " + "; ".join(tried))


def examples_root(args, build):
    if args.cutlass_examples:
        return Path(args.cutlass_examples).resolve()
    if not args.cutlass_git:
        raise SystemExit("give --cutlass-git or --cutlass-examples")
    dest = build / "cutlass-examples"
    if not (dest / "examples/python/CuTeDSL").is_dir():
        dest.mkdir(parents=True, exist_ok=True)
        arc = subprocess.run(["git", f"--git-dir={args.cutlass_git}", "archive", args.cutlass_rev,
                              "examples/python/CuTeDSL"], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=arc, check=True)
    return dest / "examples/python/CuTeDSL"


def run_entry(e, ex_root, build, reuse=False):
    dump = build / "dump" / e["name"]
    log = build / "dump" / f"{e['name']}.log"
    if reuse and dump.is_dir() and any(dump.glob("*.ptx")):
        return e, 0, log.read_text() if log.exists() else "", sorted(dump.glob("*.ptx")), 0.0
    shutil.rmtree(dump, ignore_errors=True)
    dump.mkdir(parents=True)
    spec = dict(e)
    if "script" in e:
        spec["script_path"] = str(ex_root / e["script"])
    env = dict(os.environ, CUTE_DSL_ARCH=e["arch"], CUTE_DSL_KEEP="ptx", CUTE_DSL_DUMP_DIR=str(dump),
               QUACK_CACHE_ENABLED="0", PYTHONHASHSEED="0", PYTHONWARNINGS="ignore")
    env.pop("CUTE_DSL_KEEP_PTX", None)
    t0 = time.time()
    # run in the dump directory so that nothing lands in the caller's directory
    r = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(spec)],
                       capture_output=True, text=True, env=env, cwd=str(dump), timeout=1800)
    (build / "dump" / f"{e['name']}.log").write_text(r.stdout + r.stderr)
    ptx = sorted(dump.glob("*.ptx"))
    return e, r.returncode, (r.stdout + r.stderr), ptx, time.time() - t0


def tc_signature(text):
    return hashlib.sha256("\n".join(l.strip() for l in text.splitlines()
                                    if re.search(r"\btcgen05\.(mma|cp)\b", l.split("//")[0])).encode()).hexdigest()


def write_manifest(path, generator, records, not_kept):
    """One directory's MANIFEST.toml: the generator block, a [[file]] per record, the entries not kept."""
    out = ["# Generated by tests/corpus/make_cutedsl.py; do not edit.\n[generator]\n"]
    out += [f"{k} = {trim.toml_value(v)}\n" for k, v in generator.items()]
    for rec in records:
        out.append("\n[[file]]\n" + "".join(f"{k} = {trim.toml_value(v)}\n" for k, v in rec.items()))
    if not_kept:
        out.append("\n# Entries not kept (compile failure, no tcgen05.mma, or duplicate):\n")
        for name, why in not_kept:
            out.append(f"[[not_kept]]\nname = {trim.toml_value(name)}\nwhy = {trim.toml_value(why)}\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(out))


def merge_manifest(path, entries, ran, records, not_kept, generator):
    """An --only run: the records (and entries not kept) of the entries ``ran`` replace theirs in the
    manifest at ``path``, in the order of ``entries`` (the directory's entries); the rest, and the
    [generator] block, stay. The versions must be the manifest's: a merge never mixes toolchains."""
    import tomllib

    old = tomllib.loads(path.read_text()) if path.exists() else {"generator": generator}
    differ = {k: (old["generator"].get(k), v) for k, v in generator.items()
              if k != "ptxas_system" and old["generator"].get(k) != v}
    if differ:
        raise SystemExit(f"{path}: the manifest was made with other versions, regenerate it whole: {differ}")

    def entry_of(name):
        stem = name.removesuffix(".ptx")
        return next((e["name"] for e in entries
                     if stem == e["name"] or re.fullmatch(re.escape(e["name"]) + r"_\d+", stem)), None)

    order = {e["name"]: i for i, e in enumerate(entries)}
    kept = [r for r in old.get("file", []) if entry_of(r["name"]) not in ran] + list(records)
    kept.sort(key=lambda r: order.get(entry_of(r["name"]), len(order)))  # (stable: an entry's files in order)
    dropped = [(x["name"], x["why"]) for x in old.get("not_kept", []) if entry_of(x["name"] + ".ptx") not in ran]
    write_manifest(path, old["generator"], kept, dropped + list(not_kept))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--cutlass-git", help="git directory of NVIDIA/cutlass (examples taken with git archive)")
    ap.add_argument("--cutlass-rev", default=CUTLASS_REV, help="commit of --cutlass-git (default: %(default)s)")
    ap.add_argument("--cutlass-examples", help="or: a checked-out examples/python/CuTeDSL directory")
    ap.add_argument("--out-root", default=str(HERE), help="writes OUT_ROOT/{cutedsl,quack,fa4} (default: %(default)s)")
    ap.add_argument("--keep", metavar="DIR", help="build directory (raw PTX dumps, logs); kept")
    ap.add_argument("--reuse", action="store_true",
                    help="with --keep: use the PTX already dumped in the build directory instead of compiling")
    ap.add_argument("--only",
                    help="only entries whose name contains this (their records are merged into the manifests)")
    ap.add_argument("--list", action="store_true", help="list the entries and exit")
    ap.add_argument("-j", type=int, default=2, help="parallel compiles (default: %(default)s)")
    ap.add_argument("--limit", type=int, default=trim.DEFAULT_LIMIT, help="trim files over this many bytes")
    args = ap.parse_args()
    if args.child:
        return child(json.loads(args.child))
    if args.list:
        for e in E:
            print(f"{e['dir']}/{e['name']}: {e['what']}")
        return 0

    build = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="descgen-cutedsl-"))
    build.mkdir(parents=True, exist_ok=True)
    todo = [e for e in E if not args.only or args.only in e["name"]]
    need_examples = any("script" in e for e in todo) and not args.reuse
    ex_root = examples_root(args, build) if need_examples else None

    results = {}
    with cf.ThreadPoolExecutor(max_workers=max(1, args.j)) as pool:
        futs = [pool.submit(run_entry, e, ex_root, build, args.reuse) for e in todo]
        for f in cf.as_completed(futs):
            e, rc, log, ptx, secs = f.result()
            results[e["name"]] = (rc, log, ptx)
            print(f"{e['dir']}/{e['name']}: rc={rc}, {len(ptx)} PTX file(s), {secs:.0f} s", flush=True)

    wptx = wheel_ptxas()
    gen = {
        "cutedsl": dict(nvidia_cutlass_dsl=package_version("nvidia-cutlass-dsl"),
                        cutlass_examples=f"NVIDIA/cutlass@{args.cutlass_rev} examples/python/CuTeDSL"),
        "quack": dict(quack_kernels=package_version("quack-kernels"),
                      nvidia_cutlass_dsl=package_version("nvidia-cutlass-dsl")),
        "fa4": dict(flash_attn_4=package_version("flash-attn-4"), quack_kernels=package_version("quack-kernels"),
                    nvidia_cutlass_dsl=package_version("nvidia-cutlass-dsl")),
    }
    common = dict(torch=package_version("torch"), python=sys.version.split()[0],
                  nvidia_cuda_nvcc=package_version("nvidia-cuda-nvcc"),
                  ptxas_wheel=ptxas_version(wptx) if wptx else "none", ptxas_system=ptxas_version("ptxas")
                  if shutil.which("ptxas") else "none",
                  env="CUTE_DSL_ARCH=<arch> CUTE_DSL_KEEP=ptx CUTE_DSL_DUMP_DIR=<dir> QUACK_CACHE_ENABLED=0")
    if not args.only:  # a full run replaces the directories' .ptx files
        for d in gen:
            for old in (Path(args.out_root) / d).glob("*.ptx"):
                old.unlink()
    manifests = {d: [] for d in gen}
    not_kept = {d: [] for d in gen}
    seen = {}
    failed = 0
    for e in todo:  # in list order: deterministic manifests and duplicate choice
        rc, log, ptx = results[e["name"]]
        texts = [(p, p.read_text()) for p in ptx]
        with_mma = [(p, t) for p, t in texts if "tcgen05.mma" in t]
        if not with_mma:
            last = [l for l in log.strip().splitlines() if l.strip() and not l.startswith("[shim]")]
            why = f"rc={rc}, no PTX with tcgen05.mma" + (f": {last[-1].strip()[:300]}" if last else "")
            not_kept[e["dir"]].append((e["name"], why))
            print(f"FAIL {e['name']}: {why}", file=sys.stderr)
            failed += 1
            continue
        out_dir = Path(args.out_root) / e["dir"]
        out_dir.mkdir(parents=True, exist_ok=True)
        for i, (src, text) in enumerate(with_mma):
            name = e["name"] if len(with_mma) == 1 else f"{e['name']}_{i}"
            sig = tc_signature(text)
            if sig in seen:
                not_kept[e["dir"]].append((name, f"duplicate: same tcgen05.mma/cp lines as {seen[sig]}"))
                continue
            try:
                ptxas_check(src, e["arch"])
                new, trimmed = trim.trim_text(text, args.limit)
                if trimmed and len(new) >= len(text):  # one kernel, nothing to drop: keep it whole
                    new, trimmed = text, False
                dest = out_dir / f"{name}.ptx"
                dest.write_text(new)
                assembler = ptxas_check(dest, e["arch"])
            except RuntimeError as err:
                not_kept[e["dir"]].append((name, str(err)[:300]))
                failed += 1
                continue
            seen[sig] = f"{e['dir']}/{name}.ptx"
            lines = trim.tc_lines(new)
            kinds = sorted(set(re.findall(r"tcgen05\.mma[\w:.]*", new)) | set(re.findall(r"tcgen05\.cp[\w:.]*", new)))
            ent = re.findall(r"\.entry\s+([\w$]+)", new)
            rec = dict(name=dest.name)
            if e["kind"] == "example":
                rec.update(source=f"examples/python/CuTeDSL/{e['script']}", args=e["argv"])
            elif e["kind"] == "call":
                rec.update(source=f"examples/python/CuTeDSL/{e['script']}", call=e["expr"])
            elif e["kind"] == "quack":
                rec.update(source="quack.gemm._compile_gemm", params=json.dumps(e["kwargs"], sort_keys=True))
            else:
                rec.update(source="flash_attn.cute (flash_attn_func / interface._flash_attn_bwd)",
                           code="; ".join(l.strip() for l in e["code"].strip().splitlines()))
            rec.update(dumped_as=src.name[:200], entries=[x[:160] for x in ent], what=e["what"], arch=e["arch"],
                       instructions=kinds, assembles_with=assembler, bytes=len(new.encode()),
                       untrimmed_bytes=len(text.encode()), trimmed=trimmed,
                       tcgen05_mma_lines=lines["tcgen05.mma"], tcgen05_cp_lines=lines["tcgen05.cp"])
            manifests[e["dir"]].append(rec)
            print(f"  {dest.relative_to(args.out_root)}: {len(text)} bytes"
                  f"{' -> trimmed ' + str(len(new)) if trimmed else ''}, {len(lines['tcgen05.mma'])} mma, "
                  f"{len(lines['tcgen05.cp'])} cp")

    for d in gen:
        path = Path(args.out_root) / d / "MANIFEST.toml"
        if not args.only:
            write_manifest(path, {**gen[d], **common}, manifests[d], not_kept[d])
        elif any(e["dir"] == d for e in todo):
            merge_manifest(path, [e for e in E if e["dir"] == d], [e["name"] for e in todo if e["dir"] == d],
                           manifests[d], not_kept[d], {**gen[d], **common})
    if not args.keep:
        shutil.rmtree(build, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
