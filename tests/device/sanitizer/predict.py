#!/usr/bin/env python3
"""What the instrumented gemm_sm90.cu should record for each planted bug, without a GPU.

Builds gemm_sm90.cu to PTX (nvcc -arch=sm_90a -ptx), instruments it (the library's
instrument_ptx), and runs each site's check block in the tests' own PTX interpreter
(tests/check_machine.py) with the descriptor words the kernel computes for every stage, M-half and
K-step (a_desc() of gemm_sm90.cu, redone here in Python), on the shared memory layout the kernel
sets up: the ring at RING (the dynamic shared memory's start, after the 1 KiB reserved region,
rounded up to 1024), %aggr_smem_size = SMEM_BYTES + 1024 (docs/sanitizer.md: measured on an H200).
The first record's code (the block of the first wgmma of the first K block: site 0, stage 0) is the
code the GPU run should record (its word there is the last K block's that found it, recorded where
the warpgroup leaves the kernel); run.py's parse_report reads the interpreter's buffer, as it reads
the GPU's.

    python3 tests/device/sanitizer/predict.py [--ring 0x400] [--generic-base 0x7fff00000000]

Bug 5 depends on where the shared window sits in the generic address space (not known here): the
default is a guess; the GPU run's record shows the real word.
"""

from __future__ import annotations

import argparse
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(HERE)]

from check_machine import REPORT, Machine, blocks, const_tables  # noqa: E402
from run import BUGS, MAGIC, SMEM_BYTES, parse_report, record_line  # noqa: E402

from descgen.sanitizer.instrument import instrument_ptx  # noqa: E402

STAGES, STAGE_BYTES, TILE_B, HALF_A = 4, 0x8000, 0x4000, 0x2000


def encode(addr: int, sbo: int = 1024) -> int:
    return ((addr & 0x3FFFF) >> 4) | (1 << 16) | ((sbo >> 4) << 32) | (1 << 62)


def a_word(addr: int, bug: int, generic_base: int) -> int:
    """gemm_sm90.cu's a_desc(addr, generic, bug)."""
    if bug == 1:
        return encode(addr + 0x1E000)
    if bug == 2:
        return (encode(addr) + ((0x40000 - 1024) >> 4)) & (2**64 - 1)
    if bug == 3:
        return encode(addr + 2 * 128)
    if bug == 4:
        return encode(addr, 8 * 64)
    if bug == 5:
        return ((generic_base + addr) >> 4) | (1 << 16) | ((1024 >> 4) << 32) | (1 << 62)
    if bug == 6:
        return encode(addr) + 0x10000 - (1024 >> 4)
    return encode(addr)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ring", type=lambda s: int(s, 0), default=0x400)
    ap.add_argument("--generic-base", type=lambda s: int(s, 0), default=0x7FFF00000000)
    ap.add_argument("--ptx", help="use this PTX instead of building gemm_sm90.cu")
    args = ap.parse_args()
    if args.ptx:
        text = Path(args.ptx).read_text()
    else:
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "gemm.ptx"
            subprocess.run(["nvcc", "-arch=sm_90a", "-ptx", str(HERE / "gemm_sm90.cu"), "-o", str(out)], check=True)
            text = out.read_text()
    done = instrument_ptx(text, file="gemm.ptx")
    code_blocks, tables = blocks(done.ptx, done.sites), const_tables(done.ptx)
    sites = {"sites": [s.as_dict() for s in done.sites],
             "severity": __import__("json").loads(done.sites_json())["severity"]}
    wgmma = [i + 1 for i, ln in enumerate(text.split("\n")) if "wgmma.mma_async" in ln]
    print(f"gemm.ptx: wgmma.mma_async at lines {wgmma}; {done.summary()}")
    aggr = SMEM_BYTES + 1024
    fixed = next((i + 1 for i, ln in enumerate(text.split("\n")) if "gemm_bf16_tn_fixed(" in ln), len(text))
    ok = True
    for bug in sorted(BUGS):
        first, hits, checked = None, 0, 0
        for stage in range(STAGES):
            for site in done.sites:
                if not site.checks or site.line > fixed:  # (gemm_bf16_tn's sites: the switch is in it)
                    continue
                kk, h = divmod(site.index, 2)  # the sites' order: K-step 0 (M-half 0, 1), K-step 1, ...
                a_addr = args.ring + stage * STAGE_BYTES + TILE_B + h * HALF_A
                b_addr = args.ring + stage * STAGE_BYTES
                regs = {dict(site.reads)["a_desc"]: a_word(a_addr, bug, args.generic_base) + kk * 2,
                        dict(site.reads)["b_desc"]: encode(b_addr) + kk * 2}
                m = Machine(tables, regs, capacity=4, smem_size=aggr, tid=0)
                m.run(code_blocks[site.index])
                checked += 1
                buf = bytearray(64 + 64 * 4)
                for addr, byte in m.mem.items():
                    if REPORT <= addr < REPORT + len(buf):
                        buf[addr - REPORT] = byte
                struct.pack_into("<I", buf, 8, MAGIC)
                rep = parse_report(bytes(buf), sites)
                if rep["records"]:
                    hits += 1
                    if first is None:
                        first = rep["records"][0]
                if m.trapped != bool(rep["records"]):
                    print(f"  !! bug {bug} stage {stage} site {site.index}: trapped {m.trapped}, "
                          f"records {len(rep['records'])}")
                    ok = False
        expected = BUGS[bug]["expected"]
        got = first.get("code") if first else None
        match = got == expected or (expected and expected.endswith("*") and got and got.startswith(expected[:-1]))
        ok &= bool(match) or bug == 5
        print(f"bug {bug}: {BUGS[bug]['what']}")
        print(f"  {hits} of {checked} (stage, site) checks find it; first: "
              f"{record_line(first) if first else 'nothing'}; expected {expected}: {'yes' if match else 'NO'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
