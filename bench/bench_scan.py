"""descgen scan throughput (timings live here, never in tests).

    python bench/bench_scan.py [--copies N]

Builds a large PTX file from tests/ptx/clean.ptx (its first kernel repeated N times under new
names: every tcgen05.mma form and tcgen05.cp, all operands resolved) and reports the median wall
time of ``descgen.scan_ptx`` over it, per MB and per instruction.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import descgen  # noqa: E402


def big_ptx(copies: int) -> str:
    src = (ROOT / "tests" / "ptx" / "clean.ptx").read_text(encoding="ascii")
    head, rest = src.split(".visible .entry clean_cta1()", 1)
    body = ".visible .entry clean_cta1()" + rest.split("// Another kernel")[0]
    return head + "".join(body.replace("clean_cta1", f"k{i}") for i in range(copies))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=500)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    text = big_ptx(args.copies)
    times = []
    for _ in range(args.runs):
        t = time.perf_counter()
        result = descgen.scan_ptx(text)
        times.append(time.perf_counter() - t)
    dt = statistics.median(times)
    c = result.counts
    mb = len(text) / 1e6
    print(f"descgen.scan_ptx: {mb:.2f} MB, {text.count(chr(10))} lines, {c['instructions']} instructions, "
          f"{c['resolved']} operands resolved")
    print(f"  median of {args.runs}: {dt:.2f} s  ({dt / mb:.2f} s/MB, {dt / c['instructions'] * 1e6:.0f} us/instruction)")


if __name__ == "__main__":
    main()
