"""descgen benchmarks. Timings live here, never in tests.

    python bench/bench.py            # everything
    python bench/bench.py --quick    # fewer repetitions

Measures, on this machine and in this interpreter:
1. ``descgen idesc ...`` piped (hex output) and with the rich table (``--table``): median wall time
   over repeated runs, as a multiple of a bare ``python -c pass`` (targets: <= 5x and <= 8x).
2. ``descgen.encode_idesc`` over >= 10,000 distinct valid configurations against the hand-written
   shift-and-or encoder in bench/handwritten.py taking the same arguments (target: <= 3x).
3. Per-call costs of the other entry points (decode, smem, zcm), for reference.
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import descgen  # noqa: E402
import handwritten  # noqa: E402


def wall(cmd: list[str], runs: int) -> float:
    """Median wall time of ``cmd`` in seconds (stdout to a pipe, as in ``X=$(cmd)``)."""
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def cli_figures(runs: int) -> None:
    exe = shutil.which("descgen") or str(Path(sys.executable).with_name("descgen"))
    job = [exe, "idesc", "--kind", "f16", "--m", "128", "--n", "256"]
    base = wall([sys.executable, "-c", "pass"], runs)
    piped = wall(job, runs)
    table = wall(job + ["--table"], runs)
    env_cols = os.environ.get("COLUMNS", "")
    print("CLI wall time (median of %d runs)" % runs)
    print(f"  python -c pass              {base * 1e3:7.1f} ms")
    print(f"  descgen idesc ... (piped)   {piped * 1e3:7.1f} ms   {piped / base:4.1f}x   (target <= 5x)")
    print(f"  descgen idesc ... --table   {table * 1e3:7.1f} ms   {table / base:4.1f}x   (target <= 8x){' COLUMNS=' + env_cols if env_cols else ''}")


def configurations() -> list[tuple[str, int, int, dict]]:
    """Distinct valid instruction-descriptor configurations, every kind."""
    out: list[tuple[str, int, int, dict]] = []
    majors = [("k", "k"), ("k", "mn"), ("mn", "k"), ("mn", "mn")]
    dense = {
        "f16": (["f16", "bf16"], ["f32"]),
        "tf32": (["tf32"], ["f32"]),
        "f8f6f4": (["e4m3", "e5m2", "e2m3", "e3m2", "e2m1"], ["f16", "f32"]),
        "i8": (["s8", "u8"], ["s32"]),
    }
    for kind, (types, dtypes) in dense.items():
        ns = [n for n in range(8, 257, 8) if kind != "i8" or n <= 32 or n % 16 == 0]
        for m, n, ab, dt, (am, bm), sparse in itertools.product((64, 128, 256), ns, types, dtypes, majors, (False, True)):
            out.append((kind, m, n, dict(atype=ab, btype=ab, dtype=dt, a_major=am, b_major=bm, sparse=sparse)))
    for m, n, a, b, sf in itertools.product((128, 256), range(8, 257, 8), ["e4m3", "e5m2", "e2m1"], ["e4m3", "e2m3"], (0, 1, 2, 3)):
        out.append(("mxf8f6f4", m, n, dict(atype=a, btype=b, a_sf_id=sf, b_sf_id=sf)))
    for kind, scale in (("mxf4", "ue8m0"), ("mxf4nvf4", "ue4m3"), ("mxf4nvf4", "ue8m0")):
        for m, n, sf in itertools.product((128, 256), range(8, 257, 8), (0, 2)):
            out.append((kind, m, n, dict(scale_type=scale, a_sf_id=sf, b_sf_id=sf)))
    return out


def per_call(fn, calls: list[tuple], repeat: int) -> float:
    """Best-of-``repeat`` mean seconds per call over ``calls``."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for kind, m, n, kw in calls:
            fn(kind, m, n, **kw)
        best = min(best, (time.perf_counter() - t) / len(calls))
    return best


def encode_figures(repeat: int) -> None:
    calls = configurations()
    distinct = {(k, m, n, tuple(sorted(kw.items()))) for k, m, n, kw in calls}
    assert len(distinct) == len(calls) >= 10_000, len(calls)
    for kind, m, n, kw in calls:  # same answers before timing anything
        assert descgen.encode_idesc(kind, m, n, **kw) == handwritten.encode_idesc(kind, m, n, **kw), (kind, m, n, kw)
    hand = per_call(handwritten.encode_idesc, calls, repeat)
    ours = per_call(descgen.encode_idesc, calls, repeat)
    print(f"encode_idesc over {len(calls)} distinct valid configurations (best of {repeat})")
    print(f"  hand-written shift-and-or   {hand * 1e6:6.2f} us/call")
    print(f"  descgen.encode_idesc        {ours * 1e6:6.2f} us/call   {ours / hand:4.2f}x   (target <= 3x)")


def other_figures(repeat: int) -> None:
    words = [descgen.encode_idesc(k, m, n, **kw) for k, m, n, kw in configurations()[:2000]]

    def timeit(label: str, fn, args: list) -> None:
        best = float("inf")
        for _ in range(repeat):
            t = time.perf_counter()
            for a in args:
                fn(*a)
            best = min(best, (time.perf_counter() - t) / len(args))
        print(f"  {label:28s}{best * 1e6:6.2f} us/call")

    print("other entry points (best of %d)" % repeat)
    timeit("decode_idesc", descgen.decode_idesc, [(w, "f16") for w in words])
    smem_args = [(a * 16, 16, 1024, s) for a, s in itertools.product(range(0, 4000, 7), descgen.SWIZZLES)]
    timeit("encode_smem", lambda a, l, s, z: descgen.encode_smem(start_address=a, lbo=l, sbo=s, swizzle=z), smem_args)
    smem_words = [(descgen.encode_smem(start_address=a, lbo=l, sbo=s, swizzle=z),) for a, l, s, z in smem_args]
    timeit("decode_smem", descgen.decode_smem, smem_words)
    zcm_args = [(s, u) for s in range(1, 60) for u in range(1, 60)]
    timeit("encode_zcm", lambda s, u: descgen.encode_zcm(skip_span=s, use_span=u), zcm_args)
    timeit("zcm_mask (M=32, N=256)", lambda s, u: descgen.zcm_mask(descgen.encode_zcm(skip_span=s, use_span=u), 32, 256), zcm_args[:500])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--no-cli", action="store_true", help="skip the subprocess timings")
    args = parser.parse_args()
    runs, repeat = (7, 2) if args.quick else (21, 5)
    print(f"python {sys.version.split()[0]} on {os.cpu_count()} cores; descgen {descgen.__version__}\n")
    if not args.no_cli:
        cli_figures(runs)
        print()
    encode_figures(repeat)
    print()
    other_figures(repeat)


if __name__ == "__main__":
    main()
