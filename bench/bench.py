"""descgen benchmarks. Timings live here, never in tests.

    python bench/bench.py            # everything
    python bench/bench.py --quick    # fewer repetitions

Measures, on this machine and in this interpreter:
1. ``descgen idesc ...`` piped (hex output) and with the rich table (``--table``): median wall time
   over repeated runs, as a multiple of a bare ``python -c pass`` (targets: <= 5x and <= 8x).
2. ``descgen.encode_idesc`` over >= 10,000 distinct valid configurations against the hand-written
   shift-and-or encoder in bench/handwritten.py taking the same arguments (target: <= 3x).
3. ``descgen.validate_idesc`` with the full instruction context over the legal space (as
   tests/test_validate.py enumerates it) against ``encode_idesc(check=False)`` (target: <= 10x).
4. Per-call costs of the other entry points (decode, smem, zcm), for reference.
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
ROOT = str(HERE.parent)
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
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("  (PYTHONDONTWRITEBYTECODE is set: every run compiles descgen's modules from source; an installed\n"
              "   descgen has .pyc files. Unset it, run once, then measure, for the installed figure.)")
    print(f"  python -c pass              {base * 1e3:7.1f} ms")
    print(f"  descgen idesc ... (piped)   {piped * 1e3:7.1f} ms   {piped / base:4.1f}x   (target <= 5x)")
    print(f"  descgen idesc ... --table   {table * 1e3:7.1f} ms   {table / base:4.1f}x   (target <= 8x){' COLUMNS=' + env_cols if env_cols else ''}")


def legal_space():
    """The legal instruction-descriptor space as tests/test_validate.py enumerates it from the
    spec: (kind, M, N, encode_idesc arguments, full context) for every member."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from test_validate import legal_space as space  # noqa: E402

    for kind in descgen.KINDS:
        for m, n, kw, ctx in space(kind):
            yield kind, m, n, kw, ctx


def configurations(target: int = 12_000) -> list[tuple[str, int, int, dict]]:
    """About ``target`` distinct valid configurations, every kind, taken evenly from the legal space
    (Tables 39, 49, 50, 52, 54, 55)."""
    distinct = {(kind, m, n, tuple(sorted(kw.items()))): (kind, m, n, kw) for kind, m, n, kw, _ in legal_space()}
    members = list(distinct.values())  # one per configuration (a shape may fit several contexts)
    return members[:: max(1, len(members) // target)]


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


def validate_figures(repeat: int, target: int = 20_000) -> None:
    """validate_idesc with the full context over the legal space, against encode_idesc without checks."""
    members = list(legal_space())
    sample = members[:: max(1, len(members) // target)]
    words = [(descgen.encode_idesc(kind, m, n, **kw), kind, ctx) for kind, m, n, kw, ctx in sample]
    for word, kind, ctx in words:  # every member is clean before timing anything
        assert not descgen.validate_idesc(word, kind, **ctx).findings
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for word, kind, ctx in words:
            descgen.validate_idesc(word, kind, **ctx)
        best = min(best, (time.perf_counter() - t) / len(words))
    raw = per_call(lambda kind, m, n, **kw: descgen.encode_idesc(kind, m, n, **kw, check=False),
                   [(kind, m, n, kw) for kind, m, n, kw, _ in sample], repeat)
    print(f"validate_idesc with full context over {len(words)} of {len(members)} legal-space members (best of {repeat})")
    print(f"  encode_idesc(check=False)   {raw * 1e6:6.2f} us/call")
    print(f"  descgen.validate_idesc      {best * 1e6:6.2f} us/call   {best / raw:4.2f}x   (target <= 10x)")


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
    validate_figures(repeat)
    print()
    other_figures(repeat)


if __name__ == "__main__":
    main()
