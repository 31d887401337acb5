#!/usr/bin/env python3
"""Compile CuTe / CUTLASS Hopper sources to PTX for sm_90a (wgmma) and write the corpus files.

Regenerates tests/corpus/cutlass_sm90/*.ptx and tests/corpus/cutlass_sm90/MANIFEST.toml, as
make_cutlass.py does for sm_100a (the same CUTLASS sources, from the `nvidia-cutlass` PyPI
package, and its helpers), with the Hopper target:

    nvcc -gencode=arch=compute_90a,code=sm_90a -ptx -std=c++17 --expt-relaxed-constexpr -DNDEBUG
         -ISRC/include -ISRC/tools/util/include -ISRC/examples/common -ISRC/examples [-ICURAND]
         SOURCE -o OUT.ptx

Each PTX is assembled with `ptxas -arch=sm_90a`, trimmed by trim.py when it is over the size
limit (only the functions with wgmma.mma_async and their callees kept), assembled again and
written.

    pip install nvidia-cutlass==4.2.0.0 nvidia-curand
    python tests/corpus/make_cutlass_sm90.py [-j 2] [--keep DIR [--reuse]] [--only NAME] [--all]
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import make_cutlass as mc  # noqa: E402
import trim  # noqa: E402

ARCH = ["-gencode=arch=compute_90a,code=sm_90a"]
# (corpus name, source relative to the CUTLASS source root, what it exercises)
SOURCES = [
    ("cute_tutorial_wgmma_sm90", "examples/cute/tutorial/hopper/wgmma_sm90.cu",
     "CuTe tutorial: SM90_64x64x16_F16F16F16_SS wgmma, cooperative copy into smem"),
    ("cute_tutorial_wgmma_tma_sm90", "examples/cute/tutorial/hopper/wgmma_tma_sm90.cu",
     "CuTe tutorial: wgmma with a TMA mainloop"),
    ("cutlass_48_hopper_ws_gemm", "examples/48_hopper_warp_specialized_gemm/48_hopper_warp_specialized_gemm.cu",
     "CUTLASS example 48: warp-specialized GEMM (tf32 inputs, 128B swizzle, KernelTmaWarpSpecialized)"),
    ("cutlass_49_collective_builder", "examples/49_hopper_gemm_with_collective_builder/49_collective_builder.cu",
     "CUTLASS example 49: CollectiveBuilder GEMMs (several schedules: cooperative, ping-pong, ...)"),
    ("cutlass_54_hopper_fp8_ws_gemm",
     "examples/54_hopper_fp8_warp_specialized_gemm/54_hopper_fp8_warp_specialized_gemm.cu",
     "CUTLASS example 54: fp8 e4m3 GEMM, warp-specialized"),
    ("cutlass_62_hopper_sparse_gemm", "examples/62_hopper_sparse_gemm/62_hopper_sparse_gemm.cu",
     "CUTLASS example 62: structured-sparse GEMM (wgmma.mma_async.sp)"),
    ("cutlass_55_hopper_mixed_dtype_gemm", "examples/55_hopper_mixed_dtype_gemm/55_hopper_mixed_dtype_gemm.cu",
     "CUTLASS example 55: mixed-input GEMM (A converted in registers: the register-A form)"),
    ("cutlass_57_hopper_grouped_gemm", "examples/57_hopper_grouped_gemm/57_hopper_grouped_gemm.cu",
     "CUTLASS example 57: grouped GEMM (pointer-array, descriptors per group)"),
    ("cutlass_67_hopper_fp8_blockwise",
     "examples/67_hopper_fp8_warp_specialized_gemm_with_blockwise_scaling/"
     "67_hopper_fp8_warp_specialized_gemm_with_blockwise_scaling.cu",
     "CUTLASS example 67: fp8 GEMM with blockwise scaling (promotion to f32 every few MMAs)"),
    ("cutlass_88_hopper_fmha", "examples/88_hopper_fmha/88_hopper_fmha.cu",
     "CUTLASS example 88: Hopper FMHA (two GEMMs; P from registers)"),
]

# Compiled and scanned but not written to the corpus: example 88's PTX is 7.6 MB (6.2 MB trimmed:
# 1308 wgmma.mma_async in its many FMHA kernels); descgen scan finds nothing in it (0 errors,
# 0 warnings; every descriptor field but the start address known). --all writes it.
NOT_COMMITTED = {"cutlass_88_hopper_fmha"}


def nvcc_cmd(src_root, curand, source, out):
    cmd = mc.nvcc_cmd(src_root, curand, source, out)
    return [cmd[0], *ARCH, *[c for c in cmd[1:] if not c.startswith("-arch=")]]


def ptxas_ok(path):
    r = subprocess.run(["ptxas", "-arch=sm_90a", str(path), "-o", os.devnull], capture_output=True, text=True)
    return r.returncode == 0, (r.stderr or r.stdout).strip()


def build_one(entry, src_root, curand, build_dir, reuse=False):
    name, rel, _ = entry
    raw = build_dir / f"{name}.ptx"
    if reuse and raw.exists():
        return name, 0, "", raw, 0.0
    t0 = time.time()
    r = subprocess.run(nvcc_cmd(src_root, curand, src_root / rel, raw), capture_output=True, text=True)
    return name, r.returncode, (r.stderr or r.stdout), raw, time.time() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(HERE / "cutlass_sm90"), help="output directory (default: %(default)s)")
    ap.add_argument("--keep", metavar="DIR", help="build directory for the untrimmed PTX (kept)")
    ap.add_argument("--only", help="only sources whose name contains this")
    ap.add_argument("--reuse", action="store_true", help="with --keep: reuse the PTX already there")
    ap.add_argument("--all", action="store_true", help="also write the NOT_COMMITTED sources to --out")
    ap.add_argument("-j", type=int, default=2, help="parallel nvcc jobs (default: %(default)s)")
    ap.add_argument("--limit", type=int, default=trim.DEFAULT_LIMIT, help="trim files over this many bytes")
    args = ap.parse_args()
    src_root, curand = mc.cutlass_source_root(), mc.curand_include()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    build = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="descgen-cutlass-sm90-"))
    build.mkdir(parents=True, exist_ok=True)
    entries = [e for e in SOURCES if not args.only or args.only in e[0]]
    flags = " ".join(nvcc_cmd("SRC", "CURAND" if curand else None, "SOURCE", "OUT")[1:-3])
    manifest = ["# Generated by tests/corpus/make_cutlass_sm90.py; do not edit.\n[generator]\n"
                f'nvidia_cutlass = "{mc.package_version("nvidia-cutlass")}"\n'
                f'nvidia_curand = "{mc.package_version("nvidia-curand")}"\n'
                f'nvcc = "{mc.tool_version("nvcc")}"\nptxas = "{mc.tool_version("ptxas")}"\nflags = "{flags}"\n']
    failed = 0
    with cf.ThreadPoolExecutor(max_workers=args.j) as pool:
        results = list(pool.map(lambda e: build_one(e, src_root, curand, build, args.reuse), entries))
    for (name, rel, what), (_, rc, err, raw, secs) in zip(entries, results):
        if rc:
            print(f"FAIL {name}: nvcc: {err.strip().splitlines()[-1] if err.strip() else rc}", file=sys.stderr)
            failed += 1
            continue
        ok, msg = ptxas_ok(raw)
        if not ok:
            print(f"FAIL {name}: ptxas: {msg}", file=sys.stderr)
            failed += 1
            continue
        text = raw.read_text()
        if "wgmma.mma_async" not in text:
            print(f"SKIP {name}: no wgmma.mma_async", file=sys.stderr)
            continue
        if name in NOT_COMMITTED and not args.all:
            print(f"{name}: compiled, not committed ({len(text)} bytes; see NOT_COMMITTED)")
            continue
        small, trimmed = trim.trim_text(text, args.limit)
        dest = out / f"{name}.ptx"
        dest.write_text(small)
        ok, msg = ptxas_ok(dest)
        if not ok:
            raise SystemExit(f"{dest}: the trimmed file does not assemble: {msg}")
        lines = trim.tc_lines(small)["wgmma.mma_async"]
        print(f"{name}: {len(text)} bytes{' -> trimmed ' + str(len(small)) if trimmed else ''}, "
              f"{len(lines)} wgmma.mma_async ({secs:.0f} s)")
        manifest.append(f"\n[[file]]\nname = {trim.toml_value(dest.name)}\nsource = {trim.toml_value(rel)}\n"
                        f"what = {trim.toml_value(what)}\nbytes = {len(small)}\nuntrimmed_bytes = {len(text)}\n"
                        f"trimmed = {trim.toml_value(trimmed)}\nwgmma_lines = {trim.toml_value(lines)}\n")
    if not args.only:
        (out / "MANIFEST.toml").write_text("".join(manifest))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
