"""Triton matmul kernels for the descriptor sanitizer's Hopper runs (sm_90a: Triton lowers their
tl.dot to wgmma.mma_async with shared memory descriptors it builds at run time).

Four kernels, each computing C[M, N] = A[M, K] @ B[N, K]^T (both operands K-major, as a linear
layer's weight is stored), fp32 accumulation:

- ``bf16``: pointer loads, one output tile per program, grouped tile order;
- ``fp8``: the same for float8 e4m3 inputs (Hopper's e4m3 wgmma reads both operands K-major);
- ``persistent``: bf16, one program per SM walking the tiles with a stride of the SM count;
- ``tma``: bf16 through host-built tensor descriptors (TMA loads and store).

Each ``build_*`` function returns a :class:`Gemm`: the kernel (a JITFunction: a fresh one with
``fresh=True``, so that a second build compiles again, e.g. with descgen's Triton hook on),
``make_inputs``, ``launch`` (runs the kernel, returns the output and Triton's CompiledKernel),
``reference`` (torch.matmul in fp32) and ``check`` (max abs error against it, and whether that is
within the kernel's tolerance). ``compile_spec`` holds what ``triton.compile`` needs to build the
kernel without a GPU (``python triton_gemms.py --ptx DIR`` writes the PTX: the corpus in ptx/).

Written for this project (own kernels, in the manner of Triton's tutorials).
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

import triton
import triton.language as tl

# --------------------------------------------------------------------------------------------
# Kernels


@triton.jit
def _tile_of(t, tiles_m, tiles_n, GROUP_M: tl.constexpr):
    """Tile number t -> (tile row, tile column), GROUP_M tile rows at a time (L2 reuse of B)."""
    per_group = GROUP_M * tiles_n
    first_m = (t // per_group) * GROUP_M
    rows = tl.minimum(tiles_m - first_m, GROUP_M)
    tm = first_m + (t % per_group) % rows
    tn = (t % per_group) // rows
    return tm, tn


@triton.jit
def _gemm_nt_tile(a_ptr, b_ptr, c_ptr, M, N, K, lda, ldb, ldc, tm, tn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Tile (tm, tn) of C = A @ B^T, through pointers (inlined into each kernel)."""
    rows = tm * BM + tl.arange(0, BM)
    cols = tn * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    a_tile = a_ptr + rows[:, None].to(tl.int64) * lda + ks[None, :]
    b_tile = b_ptr + cols[None, :].to(tl.int64) * ldb + ks[:, None]  # [BK, BN] view of B^T
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        k_left = K - k * BK
        a = tl.load(a_tile, mask=(rows[:, None] < M) & (ks[None, :] < k_left), other=0.0)
        b = tl.load(b_tile, mask=(cols[None, :] < N) & (ks[:, None] < k_left), other=0.0)
        acc = tl.dot(a, b, acc)
        a_tile += BK
        b_tile += BK
    c = c_ptr + rows[:, None].to(tl.int64) * ldc + cols[None, :]
    tl.store(c, acc.to(c_ptr.dtype.element_ty), mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def gemm_nt_kernel(a_ptr, b_ptr, c_ptr, M, N, K, lda, ldb, ldc,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    """C = A @ B^T, A [M, K], B [N, K], both K contiguous; C [M, N] in c_ptr's type."""
    tm, tn = _tile_of(tl.program_id(0), tl.cdiv(M, BM), tl.cdiv(N, BN), GROUP_M)
    _gemm_nt_tile(a_ptr, b_ptr, c_ptr, M, N, K, lda, ldb, ldc, tm, tn, BM, BN, BK)


@triton.jit
def gemm_nt_persistent_kernel(a_ptr, b_ptr, c_ptr, M, N, K, lda, ldb, ldc,
                              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr,
                              NUM_SMS: tl.constexpr):
    """The same product, one program per SM: program p does tiles p, p + NUM_SMS, ..."""
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    for t in tl.range(tl.program_id(0), tiles_m * tiles_n, NUM_SMS):
        tm, tn = _tile_of(t, tiles_m, tiles_n, GROUP_M)
        _gemm_nt_tile(a_ptr, b_ptr, c_ptr, M, N, K, lda, ldb, ldc, tm, tn, BM, BN, BK)


@triton.jit
def gemm_nt_tma_kernel(a_desc, b_desc, c_desc, M, N, K,
                       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    """The same product through tensor descriptors: a_desc blocks [BM, BK], b_desc [BN, BK],
    c_desc [BM, BN] (TMA loads into 128B-swizzled shared memory, TMA store)."""
    tm, tn = _tile_of(tl.program_id(0), tl.cdiv(M, BM), tl.cdiv(N, BN), GROUP_M)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([tm * BM, k * BK])
        b = b_desc.load([tn * BN, k * BK])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([tm * BM, tn * BN], acc.to(c_desc.dtype))


# --------------------------------------------------------------------------------------------
# What each variant is, and how to run and check it


@dataclass
class Gemm:
    """One kernel with its configuration. ``launch(a, b)`` -> (c, CompiledKernel)."""

    name: str
    what: str
    kernel: Any
    make_inputs: Callable[..., tuple]
    launch: Callable[..., tuple]
    tolerance: float  # max abs error allowed, relative to max |reference|
    compile_spec: dict = field(default_factory=dict)

    @staticmethod
    def reference(a, b):
        import torch

        return torch.matmul(a.float(), b.float().t())

    def check(self, c, a, b) -> dict:
        ref = self.reference(a, b)
        err = (c.float() - ref).abs().max().item()
        scale = ref.abs().max().item()
        return {"max_abs_err": err, "max_abs_ref": scale, "ok": err <= self.tolerance * max(scale, 1.0)}


def _fresh(kernel, fresh: bool):
    """The kernel, or a new JITFunction of the same Python function (its own in-memory cache)."""
    return triton.jit(kernel.fn) if fresh else kernel


def _inputs(dtype_name: str):
    def make(M=4096, N=4096, K=4096, seed=0):
        import torch

        g = torch.Generator(device="cuda").manual_seed(seed)
        a = torch.randn(M, K, device="cuda", generator=g)
        b = torch.randn(N, K, device="cuda", generator=g)
        dtype = getattr(torch, dtype_name)
        return a.to(dtype).contiguous(), b.to(dtype).contiguous()

    return make


def _pointer_sig(in_ty: str, out_ty: str) -> dict:
    return {"a_ptr": f"*{in_ty}", "b_ptr": f"*{in_ty}", "c_ptr": f"*{out_ty}", "M": "i32", "N": "i32", "K": "i32",
            "lda": "i32", "ldb": "i32", "ldc": "i32"}


def _build_pointer(name: str, in_ty: str, torch_dtype: str, what: str, fresh: bool, BM: int, BN: int, BK: int,
                   GROUP_M: int, num_warps: int, num_stages: int) -> Gemm:
    """gemm_nt_kernel over pointer loads of ``in_ty`` inputs (bf16 output, fp32 accumulate)."""
    kernel = _fresh(gemm_nt_kernel, fresh)
    cx = {"BM": BM, "BN": BN, "BK": BK, "GROUP_M": GROUP_M}

    def launch(a, b):
        import torch

        M, K = a.shape
        N = b.shape[0]
        c = torch.empty(M, N, device=a.device, dtype=torch.bfloat16)
        grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
        ck = kernel[grid](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0), **cx,
                          num_warps=num_warps, num_stages=num_stages)
        return c, ck

    sig = dict(_pointer_sig(in_ty, "bf16"), **{k: "constexpr" for k in cx})
    return Gemm(name, f"{what}, {BM}x{BN}x{BK}, {num_warps} warps, {num_stages} stages, pointer loads",
                kernel, _inputs(torch_dtype), launch, 2e-2,
                {"fn": kernel, "signature": sig, "constexprs": cx,
                 "options": {"num_warps": num_warps, "num_stages": num_stages}})


def build_bf16(fresh: bool = False, BM=128, BN=256, BK=64, GROUP_M=8, num_warps=8, num_stages=3) -> Gemm:
    return _build_pointer("bf16", "bf16", "bfloat16", "bf16 x bf16 -> bf16", fresh, BM, BN, BK, GROUP_M, num_warps,
                          num_stages)


def build_fp8(fresh: bool = False, BM=128, BN=256, BK=128, GROUP_M=8, num_warps=8, num_stages=3) -> Gemm:
    return _build_pointer("fp8", "fp8e4nv", "float8_e4m3fn", "e4m3 x e4m3 -> bf16 (fp32 accumulate)", fresh, BM, BN,
                          BK, GROUP_M, num_warps, num_stages)


def build_persistent(fresh: bool = False, BM=128, BN=256, BK=64, GROUP_M=8, num_warps=8, num_stages=3,
                     num_sms: int | None = None) -> Gemm:
    kernel = _fresh(gemm_nt_persistent_kernel, fresh)

    def sms():
        if num_sms is not None:
            return num_sms
        import torch

        return torch.cuda.get_device_properties(0).multi_processor_count

    def launch(a, b):
        import torch

        M, K = a.shape
        N = b.shape[0]
        c = torch.empty(M, N, device=a.device, dtype=torch.bfloat16)
        n = sms()
        grid = (min(n, triton.cdiv(M, BM) * triton.cdiv(N, BN)),)
        ck = kernel[grid](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0), BM=BM, BN=BN, BK=BK,
                          GROUP_M=GROUP_M, NUM_SMS=n, num_warps=num_warps, num_stages=num_stages)
        return c, ck

    cx = {"BM": BM, "BN": BN, "BK": BK, "GROUP_M": GROUP_M, "NUM_SMS": num_sms or 132}
    sig = dict(_pointer_sig("bf16", "bf16"), **{k: "constexpr" for k in cx})
    return Gemm("persistent", f"bf16 persistent (one program per SM), {BM}x{BN}x{BK}, {num_warps} warps, "
                f"{num_stages} stages, pointer loads",
                kernel, _inputs("bfloat16"), launch, 2e-2,
                {"fn": kernel, "signature": sig, "constexprs": cx,
                 "options": {"num_warps": num_warps, "num_stages": num_stages}})


def build_tma(fresh: bool = False, BM=128, BN=128, BK=64, GROUP_M=8, num_warps=4, num_stages=4) -> Gemm:
    # (8 warps, or 4 warps with BN = 256, make ptxas serialize this kernel's wgmma: C7515 / C7511 with
    # Triton 3.6 and ptxas 12.8 and 13.0; this configuration assembles without a C75xx message.)
    kernel = _fresh(gemm_nt_tma_kernel, fresh)
    cx = {"BM": BM, "BN": BN, "BK": BK, "GROUP_M": GROUP_M}

    def launch(a, b):
        import torch
        from triton.tools.tensor_descriptor import TensorDescriptor

        M, K = a.shape
        N = b.shape[0]
        c = torch.empty(M, N, device=a.device, dtype=torch.bfloat16)
        a_d = TensorDescriptor.from_tensor(a, [BM, BK])
        b_d = TensorDescriptor.from_tensor(b, [BN, BK])
        c_d = TensorDescriptor.from_tensor(c, [BM, BN])
        grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
        ck = kernel[grid](a_d, b_d, c_d, M, N, K, **cx, num_warps=num_warps, num_stages=num_stages)
        return c, ck

    sig = {"a_desc": f"tensordesc<bf16[{BM}, {BK}]>", "b_desc": f"tensordesc<bf16[{BN}, {BK}]>",
           "c_desc": f"tensordesc<bf16[{BM}, {BN}]>", "M": "i32", "N": "i32", "K": "i32"}
    sig.update({k: "constexpr" for k in cx})
    return Gemm("tma", f"bf16 through host tensor descriptors (TMA), {BM}x{BN}x{BK}, {num_warps} warps, "
                f"{num_stages} stages",
                kernel, _inputs("bfloat16"), launch, 2e-2,
                {"fn": kernel, "signature": sig, "constexprs": cx,
                 "options": {"num_warps": num_warps, "num_stages": num_stages}})


BUILDERS: dict[str, Callable[..., Gemm]] = {"bf16": build_bf16, "fp8": build_fp8, "persistent": build_persistent,
                                            "tma": build_tma}


# --------------------------------------------------------------------------------------------
# Without a GPU: the PTX for sm_90a (the instrumentation corpus in ptx/)


def compile_ptx(gemm: Gemm, capability: int = 90, ptx_version: int | None = None) -> str:
    """The kernel's PTX for GPUTarget("cuda", capability, 32), compiled without a GPU."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    spec = gemm.compile_spec
    options = dict(spec["options"])
    if ptx_version is not None:
        options["ptx_version"] = ptx_version  # (default: what Triton's own ptxas takes)
    src = ASTSource(spec["fn"], spec["signature"], spec["constexprs"])
    return triton.compile(src, target=GPUTarget("cuda", capability, 32), options=options).asm["ptx"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ptx", metavar="DIR", required=True, help="write NAME_sm90.ptx for every kernel into DIR")
    ap.add_argument("--only", help="one kernel (bf16, fp8, persistent, tma)")
    args = ap.parse_args(argv)
    os.makedirs(args.ptx, exist_ok=True)
    # .file directives and DWARF's compiling directory without this machine's paths (the corpus's own
    # helper, tests/corpus/trim.py).
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "corpus"))
    from trim import portable_paths

    for name, build in BUILDERS.items():
        if args.only and name != args.only:
            continue
        gemm = build(num_sms=132) if name == "persistent" else build()
        ptx = portable_paths(compile_ptx(gemm))
        path = os.path.join(args.ptx, f"triton_{name}_sm90.ptx")
        with open(path, "w") as fh:
            fh.write(ptx)
        print(f"{path}: {len(ptx)} bytes, {ptx.count('wgmma.mma_async')} wgmma.mma_async ({gemm.what})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
