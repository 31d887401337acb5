"""descgen.triton on a GPU (Hopper, sm_90a): the instrument mode end to end, through Triton 3.6.

    PYTHONPATH=src python3 tests/device/triton_hook/gpu_check.py CASE

Each case runs in its own process (a trap kills the CUDA context):

- ``clean``: ``enable("instrument")``, a wgmma matmul launched: the module was instrumented, its
  report buffer attached (cuMemHostAlloc / cuModuleGetGlobal / cuMemcpyHtoD), the result equals
  torch's, no finding; then the time of 20 launches, instrumented and plain (TRITON_CACHE_DIR apart).
- ``trap``: the same matmul with a planted run-time fault: a stages hook installed before descgen's
  ORs bit 14 of the kernel parameter M into the first wgmma's a-desc (reserved bits 14-15 of the
  wgmma descriptor, §9.7.15.5.1.2.2), so the scan cannot prove the bit; M = 256 runs clean, M =
  16384 + 256 traps, and the launch raises DescriptorError with the record read from pinned memory
  after the trap.
- ``report``: the same fault with ``on_error="report", action="warn"``: the checks record and let
  the kernel run on to the wgmma, which the H200 itself refuses (CUDA_ERROR_ILLEGAL_INSTRUCTION):
  the launch raises DescriptorError with the records read after the fault (one per CTA and K step,
  as many as the buffer holds; the rest counted as lost).
- ``trap_nowait``: the ``trap`` case with ``enable("instrument", wait=False)``: the faulty launch
  returns at once; the next launch raises DescriptorError with the record, before it launches.
- ``sanitized``: the ``trap`` case as ``descgen sanitize -- python3 gpu_check.py sanitized`` runs it
  (the planter installed, then ``enable`` with the command's settings).
- ``stage``, ``stage_plain``: a fault on one stage of a pipelined K loop, where the group's checks
  are a table (docs/sanitizer.md, "stage counter"): tests/device/sanitizer/triton_gemms.py's
  persistent matmul (3 stages, 1024^3) with a stages hook that moves A's tiles 16 KiB up in the
  words the wgmma read (``base + 96 KiB + s * 16 KiB`` becomes ``+ 112 KiB``), so that stage 2's
  lies past the CTA's 144 KiB of shared memory and stages 0 and 1 inside it. ``stage``: with
  ``enable("instrument")``, the launch raises DescriptorError, SMEM-OUTSIDE-CTA on a word of stage
  2; ``stage_plain``: without descgen, what the kernel does (its result against torch's).

recorded/ holds the output of each case on an NVIDIA H200 (driver 580.159.04, torch 2.11.0+cu130,
Triton 3.6.0).
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import time
import warnings

import torch
import triton

import descgen.triton as dt
from descgen.sanitizer.report import DescriptorError

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernels import matmul  # noqa: E402


def run(a, b, m_value):
    c = torch.empty((a.shape[0], b.shape[1]), device="cuda", dtype=torch.float16)
    grid = (a.shape[0] // 128, b.shape[1] // 128)
    k = matmul[grid](a, b, c, m_value, b.shape[1], a.shape[1], a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                     c.stride(0), c.stride(1), BM=128, BN=128, BK=64, num_warps=4, num_stages=3)
    return c, k


PLANT = """\t{{ // planted: bit 14 of M into the a-desc
\t.reg .b32 %pl_m;
\t.reg .b64 %pl_t;
\tld.param.u32 %pl_m, [{param}];
\tcvt.u64.u32 %pl_t, %pl_m;
\tand.b64 %pl_t, %pl_t, 16384;
\tor.b64 {reg}, {reg}, %pl_t;
\t}}
"""


def planter(*args):
    if not args:
        return "-planted", "planted"
    stages = args[1]
    make_ptx = stages["ptx"]

    def plant(src, metadata):
        ptx = make_ptx(src, metadata)
        first = re.search(r"^\s*wgmma\.mma_async[^;]*\},\s*(%rd\d+),", ptx, re.M)
        param = re.findall(r"\.param \.u32 (\w+_param_3)", ptx)[0]
        return ptx[:first.start()] + "\n" + PLANT.format(param=param, reg=first[1]) + ptx[first.start():]

    stages["ptx"] = plant


def stage_planter(*args):
    """The ``stage`` case's fault (module docstring): in the PTX, the ``add`` of 96 KiB whose sum
    the a-desc is computed from (``shr.u32 ..., 4`` a few lines below) adds 112 KiB."""
    if not args:
        return "-stage-planted", "stage-planted"
    stages = args[1]
    make_ptx = stages["ptx"]

    def plant(src, metadata):
        ptx, n = re.subn(r"(add\.s32\s+(%r\d+), %r\d+, )98304;(?=(?:[^\n]*\n){1,8}\s*shr\.u32\s+%r\d+, \2, 4;)",
                         r"\g<1>114688;", make_ptx(src, metadata))
        assert n == 1, f"{n} places to plant"
        return ptx

    stages["ptx"] = plant


def stage(instrumented: bool) -> None:
    """The ``stage`` and ``stage_plain`` cases (module docstring)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sanitizer"))
    import triton_gemms as tg

    triton.knobs.runtime.add_stages_inspection_hook = stage_planter
    if instrumented:
        dt.enable("instrument")
    g = tg.build_persistent(fresh=True)
    a, b = g.make_inputs(1024, 1024, 1024, seed=7)
    try:
        c, k = g.launch(a, b)
        torch.cuda.synchronize()
        print("ran to its end:", g.check(c, a, b), "shared memory", k.metadata.shared, "bytes")
    except DescriptorError as e:
        print("DescriptorError:\n" + str(e)[:1500])
        print("codes:", sorted({f.code for f in e.found}), "complete:", all(f.complete for f in e.found))
        starts = sorted({(f.word & 0x3FFF) << 4 for f in e.found})
        print("start addresses of the words found (bytes):", [hex(x) for x in starts])
    except RuntimeError as e:
        print(f"{type(e).__name__}: {str(e)[:500]}")


def main(case: str) -> None:
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp()
    print(f"torch {torch.__version__}, triton {triton.__version__}, {torch.cuda.get_device_name()}, case {case}")
    torch.manual_seed(0)
    if case in ("stage", "stage_plain"):
        stage(case == "stage")
        return
    a = torch.randn((512, 256), device="cuda", dtype=torch.float16)
    b = torch.randn((256, 512), device="cuda", dtype=torch.float16)
    if case == "clean":
        dt.enable("instrument")
        c, k = run(a, b, 512)
        torch.cuda.synchronize()
        print("instrumented:", "descgen_report" in k.asm["ptx"], "wgmma:", "wgmma.mma_async" in k.asm["ptx"],
              "sites:", len(k.metadata.descgen["sites"]), "buffers attached:", len(dt._HOOK.kernels))
        err = (c.float() - a.float() @ b.float()).abs().max().item()
        print(f"max |c - a@b| = {err:.4f}")
        big_a = torch.randn((8192, 8192), device="cuda", dtype=torch.float16)
        big_b = torch.randn((8192, 8192), device="cuda", dtype=torch.float16)
        for label in ("instrumented", "instrumented, enable(wait=False)", "plain"):
            if label.startswith("instrumented,"):
                dt.enable("instrument", wait=False)
            if label == "plain":
                dt.disable()
                os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp()
                matmul.device_caches.clear()
            _, k = run(big_a, big_b, 8192)
            torch.cuda.synchronize()
            t = time.perf_counter()
            for _ in range(20):
                run(big_a, big_b, 8192)
            torch.cuda.synchronize()
            ms = (time.perf_counter() - t) / 20 * 1e3
            print(f"{label}: 8192^3 fp16 matmul {ms:.3f} ms per launch ({2 * 8192**3 / ms / 1e9:.0f} TFLOP/s), "
                  f"descgen_report in PTX: {'descgen_report' in k.asm['ptx']}")
        return
    knobs = triton.knobs
    knobs.runtime.add_stages_inspection_hook = planter
    if case == "sanitized":  # under descgen sanitize: its settings, the planter first
        dt.enable(**json.loads(os.environ["DESCGEN_SANITIZE"]))
        c, _ = run(a, b, 256)
        torch.cuda.synchronize()
        print("M = 256: clean")
        try:
            run(a, b, 16384 + 256)
        except DescriptorError as e:
            print("M = 16640: DescriptorError:\n" + str(e))
            sys.exit(1)
    if case in ("trap", "trap_nowait"):  # trap_nowait: no launch waits; the next raises what the trapped one wrote
        wait = case == "trap"
        where = "M = 16640" if wait else "the next launch"
        dt.enable("instrument", wait=wait)
        c, k = run(a, b, 256)
        torch.cuda.synchronize()
        print("M = 256: clean, max err", (c.float() - a.float() @ b.float()).abs().max().item())
        try:
            run(a, b, 16384 + 256)
            if not wait:
                print("M = 16640: launched (no wait)")
                time.sleep(1.0)  # (the kernel traps meanwhile)
                run(a, b, 256)
            print(f"{where}: no error raised (unexpected)")
        except DescriptorError as e:
            print(f"{where}: DescriptorError:\n" + str(e))
            print("codes:", sorted({f.code for f in e.found}), "complete:", all(f.complete for f in e.found))
        except RuntimeError as e:
            if wait:
                raise
            print(f"{where}: {type(e).__name__} (not descgen's): {e}")
    elif case == "report":
        dt.enable("instrument", on_error="report", action="warn", capacity=8)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                c, _ = run(a, b, 16384 + 256)
                torch.cuda.synchronize()
                print("ran on; max err", (c.float() - a.float() @ b.float()).abs().max().item())
            except DescriptorError as e:
                print("M = 16640: DescriptorError:\n" + str(e))
        for w in caught:
            print(f"{w.category.__name__}: {str(w.message)[:1500]}")


if __name__ == "__main__":
    main(sys.argv[1])
