"""descgen scan throughput on large real compiler output (timings live here, never in tests).

    python bench/bench_scan.py [FILE|DIR ...] [--runs N] [--linear] [--per-dir] [--jobs N]

The input is the files and directories given, else the benchmark input if it has been made:
bench/data/triton_20mb.ptx (under the repository, ignored by git: 20 MB is not committed), Triton
3.9 kernels for sm_100a (make_triton.py's variants and 126 more matmuls: 169 files) concatenated up
to 20 MB (113 kernels, each with tcgen05.mma), made by the corpus scripts from the repository's root:

    python tests/corpus/make_triton.py --out bench/data/triton-committed --big bench/data/triton   # ~7 min, no GPU
    python tests/corpus/make_big.py bench/data/triton -o bench/data/triton_20mb.ptx --max-bytes 20000000

else (said on the first line) tests/corpus/ concatenated: every compiler, every function with a
descriptor instruction, the slowest input there is (``--per-dir`` splits it). Reports MB/s of
``descgen.scan_ptx`` (the best of ``--runs``, as timeit reports: this machine's speed drifts by half
between runs, and the least disturbed run is the one that repeats) and of the streamed form the CLI uses
(``scan_stream``, with -v's text and --json's lines rendered and dropped), per MB and per
instruction, and the peak memory of the streamed pass (measured in a separate run). ``--linear``
also times ``scan_ptx`` on the input repeated 2 and 4 times (the cost per MB should not grow);
``--per-dir`` times each compiler's directory of tests/corpus on its own, and for reference the
floor any reader of every line pays here: the lines of the same text split and stripped in a bare
Python loop. Last, the input's files are scanned as ``descgen scan`` does
(``descgen.ptx.files.scan_files``): in this process and with ``--jobs`` forked workers (default:
one per core this process may use, at most 8; the count is printed: compare like with like).

Throughput depends on what the input holds: a function with no tcgen05/wgmma instruction is
skipped unread (a few substring tests), one with them is read statement by statement and its
descriptor operands followed through the dataflow.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from descgen.ptx.files import scan_files  # noqa: E402
from descgen.ptx.scan import ScanTally, ptx_files, scan_ptx, scan_stream  # noqa: E402
from descgen.core.workers import MAX_AUTO_JOBS, cores  # noqa: E402

#: The benchmark input, when made (see the docstring): under the repository, never a machine's path.
BIG = ROOT / "bench" / "data" / "triton_20mb.ptx"


def inputs(paths: list[str]) -> list[str]:
    """The files read: those given (directories expanded), else the default input's."""
    if not paths:
        paths = [str(BIG)] if BIG.exists() else [str(ROOT / "tests" / "corpus")]
    return list(ptx_files(paths))


def load(paths: list[str]) -> str:
    return "\n".join(Path(p).read_text(encoding="utf-8", errors="replace") for p in inputs(paths))


def files_rate(files: list[str], jobs: int, runs: int) -> float:
    """MB/s of scan_files over ``files`` with ``jobs`` workers, every chunk read (best of ``runs``)."""
    mb = sum(Path(f).stat().st_size for f in files) / 1e6
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        for scanned in scan_files(files, jobs=jobs):
            for _chunk in scanned.chunks:
                pass
        times.append(time.perf_counter() - t)
    return mb / min(times)


def streamed(text: str) -> ScanTally:
    tally = ScanTally()
    for chunk in scan_stream(text, filename="big.ptx"):
        tally.add(chunk.instructions, chunk.findings)
        for ins in chunk.instructions:
            ins.summary()
            json.dumps(ins.as_dict(), default=str)
    return tally


def per_dir(runs: int) -> None:
    """MB/s of scan_ptx on each compiler's directory of tests/corpus (best of ``runs``)."""
    for d in sorted(p for p in (ROOT / "tests" / "corpus").iterdir() if p.is_dir() and not p.name.startswith("_")):
        text = load([str(d)]) if any(d.glob("*.ptx")) else ""
        if not text:
            continue
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            scan_ptx(text)
            times.append(time.perf_counter() - t)
        dt = min(times)
        print(f"  {d.name:18s} {len(text) / 1e6:6.2f} MB  {len(text) / 1e6 / dt:5.1f} MB/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--linear", action="store_true", help="also time the input repeated 2 and 4 times")
    ap.add_argument("--per-dir", action="store_true", help="also time each directory of tests/corpus alone")
    ap.add_argument("--jobs", type=int, default=min(cores(), MAX_AUTO_JOBS),
                    help="workers for the files pass (default: one per core, at most 8)")
    args = ap.parse_args()
    if not args.paths and not BIG.exists():
        print(f"note: {BIG.relative_to(ROOT)} is missing (see this script's docstring to make it, or give FILE|DIR); "
              "timing tests/corpus instead")
    text = load(args.paths)
    mb = len(text.encode()) / 1e6
    times = []
    for _ in range(args.runs):
        t = time.perf_counter()
        result = scan_ptx(text)
        times.append(time.perf_counter() - t)
    dt = min(times)
    c = result.counts
    print(f"input: {mb:.2f} MB, {text.count(chr(10))} lines, {c['instructions']} instructions, "
          f"{c['known']} operands fully known, {c['partial']} partly, {c['unknown']} unknown")
    print(f"scan_ptx: best of {args.runs}: {dt:.2f} s = {mb / dt:.1f} MB/s "
          f"(median {mb / statistics.median(times):.1f}) ({dt / max(1, c['instructions']) * 1e6:.0f} us/instruction)")
    if args.linear:
        for times_n in (2, 4):
            big = "\n".join([text] * times_n)
            runs = []
            for _ in range(args.runs):
                t = time.perf_counter()
                scan_ptx(big)
                runs.append(time.perf_counter() - t)
            dn = min(runs)
            print(f"  input x{times_n}: {dn:.2f} s = {mb * times_n / dn:.1f} MB/s "
                  f"({dn / (times_n * dt):.2f} x the time per MB of x1)")
    if args.per_dir:
        per_dir(args.runs)
        t = time.perf_counter()
        for line in text.splitlines():
            line.strip()
        dl = time.perf_counter() - t
        print(f"  the floor: every line split and stripped in a bare loop: {dl:.2f} s = {mb / dl:.0f} MB/s")
    t = time.perf_counter()
    streamed(text)
    ds = time.perf_counter() - t
    print(f"scan_stream + -v text + JSON lines: {ds:.2f} s = {mb / ds:.1f} MB/s")
    tracemalloc.start()
    streamed(text)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"  peak Python memory of the streamed pass: {peak / 1e6:.0f} MB beyond the input text")
    files = inputs(args.paths)
    one = files_rate(files, 1, args.runs)
    print(f"descgen scan's files pass ({len(files)} files): one process {one:.1f} MB/s", end="")
    if args.jobs > 1 and len(files) > 1:
        many = files_rate(files, args.jobs, args.runs)
        print(f"; {args.jobs} workers on {cores()} cores {many:.1f} MB/s ({many / one:.2f}x)")
    else:
        print()


if __name__ == "__main__":
    main()
