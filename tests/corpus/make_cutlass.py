#!/usr/bin/env python3
"""Compile CuTe / CUTLASS Blackwell sources to PTX for sm_100a and write the corpus files.

Regenerates tests/corpus/cutlass/*.ptx and tests/corpus/cutlass/MANIFEST.toml.
Needs nvcc (the corpus was made with CUDA 13.0) and the CUTLASS sources that the
`nvidia-cutlass` PyPI package ships under cutlass_library/source (include/,
tools/util/include/, examples/).  The CUTLASS examples 70 and 72 include
cutlass/util/reference/device/tensor_fill.h, which includes <curand_kernel.h>;
a CUDA install without cuRAND headers can take them from the `nvidia-curand`
PyPI package (nvidia/cu13/include), which this script finds on its own.

    pip install nvidia-cutlass nvidia-curand
    python tests/corpus/make_cutlass.py [-j 2] [--keep DIR [--reuse]] [--only NAME]

Command line of every compile (only the source differs):
    nvcc -arch=sm_100a -ptx -std=c++17 --expt-relaxed-constexpr -DNDEBUG
         -I<src>/include -I<src>/tools/util/include -I<src>/examples/common -I<src>/examples
         [-I<curand include>] SOURCE -o OUT.ptx
-DNDEBUG is what a CMake Release build of the examples passes; it drops the
device-side assert()s, which halve the size of the tutorials' PTX.

Each PTX is checked with `ptxas -arch=sm_100a`, trimmed by trim.py when it is
over the size limit (only entry functions with tcgen05.mma/tcgen05.cp kept),
checked again and written to the output directory.  The untrimmed PTX stays in
the build directory (--keep DIR to choose it; otherwise a temporary directory).
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
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

# (corpus name, source: relative to the CUTLASS source root, or src/... in tests/corpus/cutlass, what it is)
SOURCES = [
    ("cute_tutorial_01_mma_sm100", "examples/cute/tutorial/blackwell/01_mma_sm100.cu",
     "CuTe tutorial: SM100_MMA_F16BF16_SS 128x256x16, cooperative copy into smem, no TMA"),
    ("cute_tutorial_02_mma_tma_sm100", "examples/cute/tutorial/blackwell/02_mma_tma_sm100.cu",
     "CuTe tutorial: as 01 with a TMA mainloop"),
    ("cute_tutorial_03_mma_tma_multicast_sm100", "examples/cute/tutorial/blackwell/03_mma_tma_multicast_sm100.cu",
     "CuTe tutorial: TMA multicast across a cluster"),
    ("cute_tutorial_04_mma_tma_2sm_sm100", "examples/cute/tutorial/blackwell/04_mma_tma_2sm_sm100.cu",
     "CuTe tutorial: 2-SM tcgen05.mma (SM100_MMA_F16BF16_2x1SM_SS, cta_group::2)"),
    ("cute_tutorial_05_mma_tma_epi_sm100", "examples/cute/tutorial/blackwell/05_mma_tma_epi_sm100.cu",
     "CuTe tutorial: 2-SM MMA, 2-SM TMA mainloop and TMA epilogue"),
    ("cutlass_70_blackwell_fp16_gemm", "examples/70_blackwell_gemm/70_blackwell_fp16_gemm.cu",
     "CUTLASS example 70: fp16 GEMM, CollectiveBuilder, warp-specialized persistent kernel"),
    ("cutlass_70_blackwell_fp8_gemm", "examples/70_blackwell_gemm/70_blackwell_fp8_gemm.cu",
     "CUTLASS example 70: fp8 GEMM (kind::f8f6f4) with a fused epilogue"),
    ("cutlass_72a_blackwell_nvfp4_bf16_gemm",
     "examples/72_blackwell_narrow_precision_gemm/72a_blackwell_nvfp4_bf16_gemm.cu",
     "CUTLASS example 72a: block-scaled nvfp4 x nvfp4 -> bf16 (kind::mxf4nvf4, scale_vec::4X, "
     "tcgen05.cp of scale factors)"),
    ("cutlass_72b_blackwell_nvfp4_nvfp4_gemm",
     "examples/72_blackwell_narrow_precision_gemm/72b_blackwell_nvfp4_nvfp4_gemm.cu",
     "CUTLASS example 72b: block-scaled nvfp4 GEMM with nvfp4 output (scale factor generation in the epilogue)"),
    ("cutlass_72c_blackwell_mixed_mxfp8_bf16_gemm",
     "examples/72_blackwell_narrow_precision_gemm/72c_blackwell_mixed_mxfp8_bf16_gemm.cu",
     "CUTLASS example 72c: block-scaled mixed mxfp8 x mxfp6/mxfp4 (kind::mxf8f6f4)"),
]


# Compiled but not written to the corpus (size: the tutorials' in-kernel prints make each ~350 KB;
# their MMA code is that of 02 and 04); their PTX stays in the --keep directory.
NOT_COMMITTED = {"cute_tutorial_03_mma_tma_multicast_sm100", "cute_tutorial_05_mma_tma_epi_sm100"}


def cutlass_source_root():
    import cutlass_library  # from the nvidia-cutlass package
    root = Path(cutlass_library.__file__).resolve().parent / "source"
    if not (root / "include" / "cute").is_dir():
        raise SystemExit(f"no CUTLASS sources under {root}")
    return root


def curand_include():
    try:
        import nvidia  # namespace package of the nvidia-* wheels
    except ImportError:
        return None
    for base in getattr(nvidia, "__path__", []):
        for sub in ("cu13/include", "curand/include"):
            p = Path(base) / sub
            if (p / "curand_kernel.h").is_file():
                return p
    return None


def package_version(name):
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:
        return "unknown"


def tool_version(tool):
    out = subprocess.run([tool, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release ([\d.]+), V([\d.]+)", out)
    return m.group(2) if m else out.strip().splitlines()[-1]


def nvcc_cmd(src_root, curand, source, out):
    cmd = ["nvcc", "-arch=sm_100a", "-ptx", "-std=c++17", "--expt-relaxed-constexpr", "-DNDEBUG",
           f"-I{src_root}/include", f"-I{src_root}/tools/util/include",
           f"-I{src_root}/examples/common", f"-I{src_root}/examples"]
    if curand:
        cmd.append(f"-I{curand}")
    return cmd + [str(source), "-o", str(out)]


def ptxas_ok(path):
    r = subprocess.run(["ptxas", "-arch=sm_100a", str(path), "-o", os.devnull], capture_output=True, text=True)
    return r.returncode == 0, (r.stderr or r.stdout).strip()


def build_one(entry, src_root, curand, build_dir, reuse=False):
    name, rel, _ = entry
    # our own sources live in tests/corpus/cutlass/src/, the others in the CUTLASS source tree
    source = HERE / "cutlass" / rel if rel.startswith("src/") else src_root / rel
    raw = build_dir / f"{name}.ptx"
    t0 = time.time()
    if reuse and raw.exists():
        return name, 0, "", raw, 0.0
    r = subprocess.run(nvcc_cmd(src_root, curand, source, raw), capture_output=True, text=True)
    return name, r.returncode, (r.stderr or r.stdout), raw, time.time() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(HERE / "cutlass"), help="output directory (default: %(default)s)")
    ap.add_argument("--keep", metavar="DIR", help="build directory for the untrimmed PTX (kept)")
    ap.add_argument("--only", help="only sources whose name contains this")
    ap.add_argument("--reuse", action="store_true",
                    help="with --keep: use the PTX already in the build directory instead of running nvcc")
    ap.add_argument("--all", action="store_true", help="also write the NOT_COMMITTED sources to --out")
    ap.add_argument("-j", type=int, default=2, help="parallel nvcc jobs (default: %(default)s)")
    ap.add_argument("--limit", type=int, default=trim.DEFAULT_LIMIT, help="trim files over this many bytes")
    args = ap.parse_args()

    src_root = cutlass_source_root()
    curand = curand_include()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    build_dir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="descgen-cutlass-"))
    build_dir.mkdir(parents=True, exist_ok=True)
    todo = [e for e in SOURCES if not args.only or args.only in e[0]]

    results = {}
    with cf.ThreadPoolExecutor(max_workers=max(1, args.j)) as ex:
        futs = [ex.submit(build_one, e, src_root, curand, build_dir, args.reuse) for e in todo]
        for f in cf.as_completed(futs):
            name, rc, log, raw, secs = f.result()
            results[name] = (rc, log, raw, secs)
            print(f"{name}: nvcc rc={rc} in {secs:.0f} s", flush=True)

    manifest = ["# Generated by tests/corpus/make_cutlass.py; do not edit.\n",
                f"[generator]\nnvidia_cutlass = {trim.toml_value(package_version('nvidia-cutlass'))}\n"
                f"nvidia_curand = {trim.toml_value(package_version('nvidia-curand'))}\n"
                f"nvcc = {trim.toml_value(tool_version('nvcc'))}\nptxas = {trim.toml_value(tool_version('ptxas'))}\n"
                "flags = "
                f"{trim.toml_value(' '.join(nvcc_cmd('SRC', 'CURAND' if curand else None, 'SOURCE', 'OUT')[1:-3]))}\n"]
    failed = []
    not_committed = []
    for name, rel, what in todo:
        rc, log, raw, secs = results[name]
        if rc != 0:
            failed.append((name, log.strip().splitlines()[-1] if log.strip() else f"nvcc rc={rc}"))
            print(f"FAIL {name}:\n{log}", file=sys.stderr)
            continue
        text = raw.read_text()
        if "tcgen05.mma" not in text:
            failed.append((name, "no tcgen05.mma in the PTX"))
            continue
        ok, msg = ptxas_ok(raw)
        if not ok:
            failed.append((name, f"ptxas rejects the nvcc output: {msg}"))
            continue
        new, trimmed = trim.trim_text(text, args.limit)
        if name in NOT_COMMITTED and not args.all:
            not_committed.append((name, len(text), len(new)))
            continue
        dest = out / f"{name}.ptx"
        dest.write_text(new)
        ok, msg = ptxas_ok(dest)
        if not ok:
            dest.unlink()
            failed.append((name, f"ptxas rejects the trimmed file: {msg}"))
            continue
        lines = trim.tc_lines(new)
        print(f"{name}: {len(text)} bytes{' -> trimmed ' + str(len(new)) if trimmed else ''}, "
              f"{len(lines['tcgen05.mma'])} tcgen05.mma, {len(lines['tcgen05.cp'])} tcgen05.cp")
        manifest.append(f"\n[[file]]\nname = {trim.toml_value(dest.name)}\nsource = {trim.toml_value(rel)}\n"
                        f"what = {trim.toml_value(what)}\nbytes = {len(new)}\nuntrimmed_bytes = {len(text)}\n"
                        f"trimmed = {trim.toml_value(trimmed)}\n"
                        f"tcgen05_mma_lines = {trim.toml_value(lines['tcgen05.mma'])}\n"
                        f"tcgen05_cp_lines = {trim.toml_value(lines['tcgen05.cp'])}\n")
    if not_committed:
        manifest.append("\n# Compiled, assembled, not committed (size; same MMA code as 02/04); "
                        "make_cutlass.py --keep DIR writes them to DIR:\n")
        for name, n_raw, n_trim in not_committed:
            manifest.append(f"[[not_committed]]\nname = {trim.toml_value(name + '.ptx')}\nuntrimmed_bytes = {n_raw}\n"
                            f"trimmed_bytes = {n_trim}\n")
    if failed:
        manifest.append("\n# Sources not kept:\n")
        for name, why in failed:
            manifest.append(f"[[not_kept]]\nname = {trim.toml_value(name)}\nwhy = {trim.toml_value(why)}\n")
    if not args.only and not args.all:
        (out / "MANIFEST.toml").write_text("".join(manifest))
    if not args.keep:
        shutil.rmtree(build_dir, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
