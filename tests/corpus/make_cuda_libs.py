#!/usr/bin/env python3
"""Compile ThunderKittens and DeepGEMM Blackwell kernels to PTX for sm_100a and write the corpus files.

Regenerates tests/corpus/thunderkittens/*.ptx, tests/corpus/deepgemm/*.ptx and their MANIFEST.toml.
No GPU is needed: every source is compiled with `nvcc -arch=sm_100a -ptx` and only the device
code is kept.

Sources (snapshots of the GitHub repositories; the commits below are the ones the corpus was made
from, checked out as plain trees, e.g. `git --git-dir=REPO archive COMMIT | tar -x -C DIR`):

  ThunderKittens  github.com/HazyResearch/ThunderKittens  TK_COMMIT
  DeepGEMM        github.com/deepseek-ai/DeepGEMM          DG_COMMIT

ThunderKittens' B200 kernels are standalone .cu files with a host main(); they are compiled as
they are, with the flags of kernels/common.mk for GPU=B200 (less the link flags).  Kernels written
as PyTorch extensions (the B300 attention kernels) include pyutils/torchutils.cuh; the stand-in in
drivers/thunderkittens/stub/ (first on the include path) replaces it, so PyTorch is not needed.

DeepGEMM's SM100 kernels are JIT templates (deep_gemm/include/deep_gemm/impls/sm100_*.cuh); each
driver in drivers/deepgemm/ instantiates one, as DeepGEMM's own JIT does
(csrc/jit_kernels/impls/*.hpp: generate_impl), with template arguments its heuristics pick for
the shape named in the driver.  They need CUTLASS/CuTe headers: the `nvidia-cutlass` PyPI package
(cutlass_library/source/include), found on its own, or --cutlass-include DIR.

    pip install nvidia-cutlass==4.2.0.0
    python tests/corpus/make_cuda_libs.py --tk TK_TREE --dg DG_TREE [-j 2] [--keep DIR] [--only NAME]

Each PTX is assembled with `ptxas -arch=sm_100a`, trimmed by trim.py when over the size limit,
assembled again and written.  Files without tcgen05.mma are not kept; a file whose tcgen05 functions
are identical (after renaming) to those of a file already kept is dropped as a duplicate.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import hashlib
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

TK_COMMIT = "0b55588d2769dde0c7a9a606ffc015b0ca7a9551"  # 2026-04-25 "Add bool dtype support"
DG_COMMIT = "54e22612409371d6364144b69086735beb54e98b"  # 2026-06-23 "Multiple updates and refactorings (#364)"

DRIVERS = HERE / "drivers"

# ThunderKittens: (corpus name, source relative to the ThunderKittens tree, what it exercises)
TK_SOURCES = [
    ("tk_educational_b200_level_06", "kernels/gemm/educational_b200/level_06.cu",
     "educational B200 GEMM level 06: tcgen05 MMA with TMA (bf16 kind::f16, 1 CTA)"),
    ("tk_educational_b200_level_07", "kernels/gemm/educational_b200/level_07.cu",
     "educational B200 GEMM level 07: pipelined warp specialization (TMA loader + MMA issuer), bf16"),
    ("tk_educational_b200_level_08", "kernels/gemm/educational_b200/level_08.cu",
     "educational B200 GEMM level 08: level 07 plus epilogue pipelining, bf16"),
    ("tk_educational_b200_level_09", "kernels/gemm/educational_b200/level_09.cu",
     "educational B200 GEMM level 09: 2-CTA cluster (cta_group::2) and warpgroup-level parallelism, bf16"),
    ("tk_bf16_b200_gemm", "kernels/gemm/bf16_b200/bf16_b200_gemm.cu",
     "bf16 GEMM (kind::f16), several tile configs (Mb 128/256, 2-CTA), persistent, overlapped epilogue"),
    ("tk_fp8_b200_gemm", "kernels/gemm/fp8_b200/fp8_b200_gemm.cu",
     "fp8 e4m3 GEMM (kind::f8f6f4), several tile configs, 2-CTA"),
    ("tk_mxfp8_b200_gemm", "kernels/gemm/mxfp8_b200/mxfp8_b200_gemm.cu",
     "mxfp8 block-scaled GEMM (kind::mxf8f6f4.block_scale, scales in TMEM via tcgen05.cp), 2-CTA"),
    ("tk_nvfp4_b200_gemm", "kernels/gemm/nvfp4_b200/nvfp4_b200_gemm.cu",
     "nvfp4 block-scaled GEMM (kind::mxf4nvf4.block_scale.block16, tcgen05.cp of scales), 2-CTA"),
    ("tk_bf16_b300_mha_noncausal", "kernels/attention/bf16_b300_mha_noncausal/bf16_b300_mha_noncausal.cu",
     "bf16 MHA forward (B300 kernel compiled for sm_100a; Dqk 192, Dvo 128), 2-CTA cluster, QK^T SS MMA and PV MMA"),
    ("tk_bf16_b300_mha_causal", "kernels/attention/bf16_b300_mha_causal/bf16_b300_mha_causal.cu",
     "bf16 MHA forward, causal (B300 kernel compiled for sm_100a)"),
]
# Compiled, but not in the corpus: no tcgen05 (levels 01-05 are the pre-tcgen05 steps) or host-only
TK_CHECKED_NO_TCGEN05 = [
    "kernels/gemm/educational_b200/level_01.cu", "kernels/gemm/educational_b200/level_02.cu",
    "kernels/gemm/educational_b200/level_03.cu", "kernels/gemm/educational_b200/level_04.cu",
    "kernels/gemm/educational_b200/level_05.cu",
]

# DeepGEMM: (corpus name, driver in drivers/deepgemm/, what it exercises)
DG_SOURCES = [
    ("dg_sm100_bf16_gemm_nt_2cta", "dg_sm100_bf16_gemm_nt_2cta.cu",
     "sm100_bf16_gemm_impl: bf16 kind::f16, A/B K-major, BLOCK 128x256x64, cluster 2 (cta_group::2), 6 stages"),
    ("dg_sm100_bf16_gemm_mn_major_acc", "dg_sm100_bf16_gemm_mn_major_acc.cu",
     "sm100_bf16_gemm_impl: A and B MN-major, fp32 accumulate into C, BLOCK 128x128x64, 1 CTA"),
    ("dg_sm100_bf16_m_grouped_contiguous_swapab", "dg_sm100_bf16_m_grouped_contiguous_swapab.cu",
     "sm100_bf16_gemm_impl: MoE m-grouped contiguous, swap AB, cluster 2 multicast on A"),
    ("dg_sm100_fp8_gemm_1d1d_2cta", "dg_sm100_fp8_gemm_1d1d_2cta.cu",
     "sm100_fp8_fp4_gemm_1d1d_impl: fp8 e4m3 x e4m3, UE8M0 scales per 128 (kind::mxf8f6f4.block_scale, tcgen05.cp), "
     "A/B K-major, BLOCK 128x192x128, cluster 2 (cta_group::2)"),
    ("dg_sm100_fp4_gemm_1d1d", "dg_sm100_fp4_gemm_1d1d.cu",
     "sm100_fp8_fp4_gemm_1d1d_impl: fp4 e2m1 x e2m1 (unpacked smem), scales per 32, 1 CTA"),
    ("dg_sm100_fp8xfp4_m_grouped_masked_swapab", "dg_sm100_fp8xfp4_m_grouped_masked_swapab.cu",
     "sm100_fp8_fp4_gemm_1d1d_impl: fp8 x fp4 (mixed kind::mxf8f6f4), MoE m-grouped masked, swap AB, cluster 2"),
    ("dg_sm100_fp8_k_grouped_mn_major", "dg_sm100_fp8_k_grouped_mn_major.cu",
     "sm100_fp8_fp4_gemm_1d1d_impl: k-grouped contiguous fp8 (MoE wgrad), A/B MN-major, fp32 accumulate"),
    ("dg_sm100_mqa_logits_fp8", "dg_sm100_mqa_logits_fp8.cu",
     "sm100_mqa_logits: fp8 Q/KV indexer logits, 64 heads, head dim 128 (kind::f8f6f4)"),
    ("dg_sm100_mqa_logits_fp4", "dg_sm100_mqa_logits_fp4.cu",
     "sm100_mqa_logits: fp4 Q/KV with UE8M0 scales (block-scaled kind::mxf4, tcgen05.cp)"),
    ("dg_sm100_paged_mqa_logits_fp8", "dg_sm100_paged_mqa_logits_fp8.cu",
     "sm100_paged_mqa_logits: fp8 paged KV cache (decode), page 64"),
    ("dg_sm100_tf32_hc_prenorm_gemm", "dg_sm100_tf32_hc_prenorm_gemm.cu",
     "sm100_tf32_hc_prenorm_gemm_impl: kind::tf32, BLOCK 64x32x64 (M=64 instruction), 12 stages"),
    ("dg_sm100_bmk_bnk_mn_einsum", "dg_sm100_bmk_bnk_mn_einsum.cu",
     "sm100_bmn_bnk_mn_gemm_impl: einsum bmk,bnk->mn, bf16, split-K over b and k, BLOCK 128x128x64"),
]

TK_FLAGS = ["-std=c++20", "-O3", "--use_fast_math", "--expt-extended-lambda", "--expt-relaxed-constexpr",
            "-DNDEBUG", "-DKITTENS_BLACKWELL"]
DG_FLAGS = ["-std=c++20", "-O3", "--expt-relaxed-constexpr", "--expt-extended-lambda",
            "--diag-suppress=39,161,174,177,186,940,550"]


# ----------------------------------------------------------------------------------------------
# shared helpers (also used by make_tilelang.py)

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


def ptxas_ok(path):
    r = subprocess.run(["ptxas", "-arch=sm_100a", str(path), "-o", os.devnull], capture_output=True, text=True)
    return r.returncode == 0, (r.stderr or r.stdout).strip()


def mma_forms(text):
    """The distinct tcgen05.mma / tcgen05.cp spellings (opcode with qualifiers) in the text."""
    code = "\n".join(line.split("//", 1)[0] for line in text.splitlines())
    mma = sorted(set(re.findall(r"\btcgen05\.mma[\w:.]*", code)))
    cp = sorted(set(re.findall(r"\btcgen05\.cp[\w:.]*", code)))
    return mma, cp


def tcgen05_fingerprint(text):
    """Hash of the function definitions that contain tcgen05.mma/cp, names and comments removed, sorted.
    Two files with the same fingerprint have identical tcgen05 code."""
    bodies = []
    for chunk in trim.split_top_level(text):
        kind, name = trim.classify(chunk)
        if kind != "def":
            continue
        body = trim._strip_comments(chunk)
        if not re.search(r"\btcgen05\.(mma|cp)\b", body):
            continue
        if name:
            body = body.replace(name, "F")
        bodies.append(re.sub(r"\s+", " ", body))
    return hashlib.sha256("\n".join(sorted(bodies)).encode()).hexdigest()


def finish(entries, results, out, limit, manifest_head, dedupe=True):
    """Check, trim, dedupe and write the PTX of ``entries`` [(name, source, what)]; returns
    (manifest text, failed).  ``results[name]`` = (rc, log, raw path)."""
    manifest = [manifest_head]
    failed, seen = [], {}
    for name, src, what in entries:
        rc, log, raw = results[name]
        if rc != 0:
            lines = [ln for ln in log.strip().splitlines() if "error" in ln] or log.strip().splitlines() or [f"rc={rc}"]
            failed.append((name, lines[0].strip()[:300]))
            print(f"FAIL {name}:\n{log[-3000:]}", file=sys.stderr)
            continue
        text = raw.read_text()
        if "tcgen05.mma" not in text:
            failed.append((name, "no tcgen05.mma in the PTX"))
            continue
        ok, msg = ptxas_ok(raw)
        if not ok:
            failed.append((name, f"ptxas rejects the nvcc output: {msg[:300]}"))
            continue
        fp = tcgen05_fingerprint(text)
        if dedupe and fp in seen:
            failed.append((name, f"tcgen05 functions identical to those of {seen[fp]}"))
            continue
        seen[fp] = name
        new, trimmed = trim.trim_text(text, limit)
        dest = out / f"{name}.ptx"
        dest.write_text(new)
        ok, msg = ptxas_ok(dest)
        if not ok:
            dest.unlink()
            failed.append((name, f"ptxas rejects the trimmed file: {msg[:300]}"))
            continue
        lines = trim.tc_lines(new)
        mma, cp = mma_forms(new)
        print(f"{name}: {len(text)} bytes{' -> trimmed ' + str(len(new)) if trimmed else ''}, "
              f"{len(lines['tcgen05.mma'])} tcgen05.mma, {len(lines['tcgen05.cp'])} tcgen05.cp")
        manifest.append(
            f"\n[[file]]\nname = {trim.toml_value(dest.name)}\nsource = {trim.toml_value(src)}\n"
            f"what = {trim.toml_value(what)}\n"
            f"mma_forms = {trim.toml_value(mma)}\ncp_forms = {trim.toml_value(cp)}\n"
            f"cta_group_2 = {trim.toml_value(any('cta_group::2' in f for f in mma))}\n"
            f"block_scale = {trim.toml_value(any('block_scale' in f for f in mma))}\n"
            f"bytes = {len(new.encode())}\nuntrimmed_bytes = {len(text.encode())}\n"
            f"trimmed = {trim.toml_value(trimmed)}\n"
            f"tcgen05_mma_lines = {trim.toml_value(lines['tcgen05.mma'])}\n"
            f"tcgen05_cp_lines = {trim.toml_value(lines['tcgen05.cp'])}\n"
            f"assembled_by = {trim.toml_value('ptxas ' + tool_version('ptxas') + ' -arch=sm_100a')}\n")
    if failed:
        manifest.append("\n# Sources not kept:\n")
        for name, why in failed:
            manifest.append(f"[[not_kept]]\nname = {trim.toml_value(name)}\nwhy = {trim.toml_value(why)}\n")
    return "".join(manifest), failed


def run_nvcc(cmd):
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode, (r.stderr or "") + (r.stdout or ""), time.time() - t0


# ----------------------------------------------------------------------------------------------

def cutlass_include(arg):
    if arg:
        return Path(arg)
    import cutlass_library  # from the nvidia-cutlass package
    p = Path(cutlass_library.__file__).resolve().parent / "source" / "include"
    if not (p / "cute").is_dir():
        raise SystemExit(f"no CuTe headers under {p}")
    return p


def tk_cmd(tk, source, out):
    return (["nvcc", "-arch=sm_100a", "-ptx"] + TK_FLAGS +
            [f"-I{DRIVERS / 'thunderkittens' / 'stub'}", f"-I{tk}/include", f"-I{tk}/prototype",
             f"-I{Path(source).parent}", str(source), "-o", str(out)])


def dg_cmd(dg, cut, source, out):
    return (["nvcc", "-arch=sm_100a", "-ptx"] + DG_FLAGS +
            [f"-I{dg}/deep_gemm/include", f"-I{cut}", str(source), "-o", str(out)])


def head_of(dg_commit=None, tk_commit=None, cut=None):
    h = "# Generated by tests/corpus/make_cuda_libs.py; do not edit.\n[generator]\n"
    if tk_commit:
        tk_flags = " ".join(["-arch=sm_100a", "-ptx"] + TK_FLAGS
                            + ["-Idrivers/thunderkittens/stub", "-ITK/include", "-ITK/prototype", "-I<source dir>"])
        h += (f"thunderkittens_repo = \"https://github.com/HazyResearch/ThunderKittens\"\n"
              f"thunderkittens_commit = {trim.toml_value(tk_commit)}\n"
              f"flags = {trim.toml_value(tk_flags)}\n")
    if dg_commit:
        dg_flags = " ".join(["-arch=sm_100a", "-ptx"] + DG_FLAGS + ["-IDG/deep_gemm/include", "-ICUTLASS/include"])
        h += (f"deepgemm_repo = \"https://github.com/deepseek-ai/DeepGEMM\"\n"
              f"deepgemm_commit = {trim.toml_value(dg_commit)}\n"
              f"nvidia_cutlass = {trim.toml_value(package_version('nvidia-cutlass'))}\n"
              f"flags = {trim.toml_value(dg_flags)}\n"
              f"drivers = \"tests/corpus/drivers/deepgemm\"\n")
    h += f"nvcc = {trim.toml_value(tool_version('nvcc'))}\nptxas = {trim.toml_value(tool_version('ptxas'))}\n"
    return h


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tk", help="ThunderKittens source tree (at TK_COMMIT)")
    ap.add_argument("--dg", help="DeepGEMM source tree (at DG_COMMIT)")
    ap.add_argument("--cutlass-include", help="CUTLASS include dir (default: from the nvidia-cutlass package)")
    ap.add_argument("--out", default=str(HERE), help="corpus directory (default: %(default)s)")
    ap.add_argument("--keep", metavar="DIR", help="build directory for the untrimmed PTX (kept)")
    ap.add_argument("--reuse", action="store_true", help="with --keep: reuse the PTX there instead of running nvcc")
    ap.add_argument("--only", help="only sources whose name contains this (no manifest written)")
    ap.add_argument("-j", type=int, default=2, help="parallel nvcc jobs (default: %(default)s)")
    ap.add_argument("--limit", type=int, default=trim.DEFAULT_LIMIT, help="trim files over this many bytes")
    args = ap.parse_args()
    if not args.tk and not args.dg:
        ap.error("give --tk and/or --dg")

    build = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="descgen-cudalibs-"))
    build.mkdir(parents=True, exist_ok=True)
    jobs = []  # (group, name, cmd, raw)
    groups = {}
    if args.tk:
        tk = Path(args.tk).resolve()
        ents = [e for e in TK_SOURCES if not args.only or args.only in e[0]]
        groups["thunderkittens"] = ents
        for name, rel, _ in ents:
            raw = build / f"{name}.ptx"
            jobs.append((name, tk_cmd(tk, tk / rel, raw), raw))
    if args.dg:
        dg = Path(args.dg).resolve()
        cut = cutlass_include(args.cutlass_include)
        ents = [e for e in DG_SOURCES if not args.only or args.only in e[0]]
        groups["deepgemm"] = [(n, f"drivers/deepgemm/{d}", w) for n, d, w in ents]
        for name, drv, _ in ents:
            raw = build / f"{name}.ptx"
            jobs.append((name, dg_cmd(dg, cut, DRIVERS / "deepgemm" / drv, raw), raw))

    results = {}
    with cf.ThreadPoolExecutor(max_workers=max(1, args.j)) as ex:
        futs = {}
        for name, cmd, raw in jobs:
            if args.reuse and raw.exists():
                results[name] = (0, "", raw)
                continue
            futs[ex.submit(run_nvcc, cmd)] = (name, raw)
        for f in cf.as_completed(futs):
            name, raw = futs[f]
            rc, log, secs = f.result()
            results[name] = (rc, log, raw)
            print(f"{name}: nvcc rc={rc} in {secs:.0f} s", flush=True)

    status = 0
    for group, ents in groups.items():
        out = Path(args.out) / group
        out.mkdir(parents=True, exist_ok=True)
        head = head_of(tk_commit=TK_COMMIT) if group == "thunderkittens" else head_of(dg_commit=DG_COMMIT)
        text, failed = finish(ents, results, out, args.limit, head)
        if group == "thunderkittens":
            text += ("\n# Compiled, no tcgen05.mma (pre-tcgen05 steps of the educational GEMM):\n"
                     f"checked_without_tcgen05 = {trim.toml_value(TK_CHECKED_NO_TCGEN05)}\n")
        if not args.only:
            (out / "MANIFEST.toml").write_text(text)
        status |= any(not why.startswith("tcgen05 functions identical") for _, why in failed)
    if not args.keep:
        shutil.rmtree(build, ignore_errors=True)
    return 1 if status else 0


if __name__ == "__main__":
    sys.exit(main())
