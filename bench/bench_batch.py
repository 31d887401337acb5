"""Batch-mode throughput: requests per second on 100,000 mixed JSON lines. Timings live here, never in tests.

    python bench/bench_batch.py                # build the lines, time the CLI and in-process
    python bench/bench_batch.py --lines 20000  # a smaller run
    python bench/bench_batch.py --write FILE   # just write the request file

The lines (fixed seed) mix every op over every descriptor and kind, drawn from the legal space as
tests/test_validate.py enumerates it (Tables 39, 49, 50, 52, 54, 55) and from legal smem/zcm
fields, with about 6% bad lines (malformed JSON, an unknown op, a misspelt key, a wrong type, a
value that breaks a PTX rule, a huge integer). Shares:

    encode idesc 28%, smem 8% (tile form 2%), zcm 5%; decode idesc 12% (under every kind 2%),
    smem 4%, zcm 2%, a wide word as smem+zcm 1%; validate idesc 14%, smem 5%, zcm 3%;
    check 10%; bad 6%.

Two inputs: a repeated mix (100,000 lines drawn from a working set of 10,000 distinct requests, as
a kernel generator re-asking for its configurations would send) and an all-distinct one.
Measured for each (target >= 50,000 requests/second on this machine):
1. ``descgen batch FILE > /dev/null``, wall time including start-up: default (brief answers,
   ``--jobs auto``: a forked worker per core for a file of 1 MiB or more, the answer cache on),
   ``--jobs 1`` (in-process), both with ``--no-cache`` over the same lines (every request
   computed: caching defeated), and ``--full`` answers.
2. In-process ``descgen.batch.run`` over the lines, with and without the cache, in chunks of alike
   requests (as the CLI answers a file) and line by line (as it answers a terminal).
3. Scaling (``--scale``, default 10,000, 100,000 and 1,000,000 all-distinct lines): ``descgen batch
   --jobs 1 FILE`` cost per request (start-up, timed on an empty file, taken off), which must stay
   flat (the largest size at most 1.25x the smallest), and the peak memory (RSS) of ``descgen batch``
   (default and ``--jobs 1``; any process) for each size (target < 200 MB).

Ends with a table of every figure and its target; exits 1 when one misses it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import descgen  # noqa: E402
from bench import legal_space  # noqa: E402

SWIZZLES = ("none", "128B_base32B", "128B", "64B", "32B")
BOUNDARY = {"128B": 1024, "64B": 512, "32B": 256, "128B_base32B": 1024, "none": 0}
TILE_TYPES = (("bf16", None), ("f16", None), ("tf32", None), ("e4m3", None), ("s8", None))


def _ctx(ctx: dict) -> dict:
    return {k: v for k, v in ctx.items() if v is not None}


def build(n: int, seed: int = 5, working_set: int | None = None) -> list[str]:
    """``n`` request lines; with ``working_set``, drawn (with repeats) from that many distinct
    requests, as a generator re-asking for the configurations of its kernels would; else every
    request is drawn afresh (all distinct but for chance)."""
    rng = random.Random(seed)
    members = list(legal_space())
    rng.shuffle(members)
    members = members[: max(n, 20_000)]
    idesc = iter(members * (1 + n // len(members)))

    def one_idesc() -> tuple[str, int, int, dict, dict]:
        return next(idesc)

    def smem_fields() -> dict:
        swz = rng.choice(SWIZZLES)
        start = rng.randrange(0, 1 << 18, 16)
        base = 0
        if swz != "none" and rng.random() < 0.3:
            base = (start >> 7) & 7
        return {"start_address": start, "lbo": rng.choice((16, 128, 256, 2048, 8192)),
                "sbo": rng.choice((256, 512, 1024, 2048)), "swizzle": swz, "base_offset": base}

    def smem_word() -> int:
        f = smem_fields()
        return descgen.encode_smem(**f, check=False)

    def zcm_fields() -> dict:
        m = rng.choice((32, 64, 128))
        count = {32: 4, 64: 2, 128: 1}[m]
        sc = [rng.randrange(0, 256) if i < count else 0 for i in range(4)]
        fs = [rng.randrange(0, 2) if i < count else 0 for i in range(4)]
        return {"start_count": sc, "first_span": fs, "skip_span": rng.randrange(1, 257),
                "use_span": rng.randrange(1, 257), "column_shift": rng.randrange(0, 17 if m == 32 else 33), "m": m,
                "n": rng.choice((64, 128, 256)), "ws": True}

    def req(i: int) -> dict | str:
        r = rng.random()
        if r < 0.28:
            kind, m, n, kw, ctx = one_idesc()
            extra = {k: ctx[k] for k in ("cta_group", "ws") if rng.random() < 0.5}
            return {"op": "encode", "descriptor": "idesc", "kind": kind, "m": m, "n": n, **kw, **extra}
        r -= 0.28
        if r < 0.06:
            return {"op": "encode", "descriptor": "smem", **smem_fields()}
        r -= 0.06
        if r < 0.02:
            dtype, _ = rng.choice(TILE_TYPES)
            swz = rng.choice(("128B", "64B", "32B", "none"))
            start = rng.randrange(0, 1 << 16, BOUNDARY[swz] or 128)
            return {"op": "encode", "descriptor": "smem", "dtype": dtype, "major": "k", "swizzle": swz,
                    "mn": rng.choice((64, 128, 256)),
                    "k": rng.choice((16, 32, 64)) * (2 if dtype in ("e4m3", "s8") else 1), "start_address": start}
        r -= 0.02
        if r < 0.05:
            f = zcm_fields()
            return {"op": "encode", "descriptor": "zcm", **f}
        r -= 0.05
        if r < 0.10:
            kind, m, n, kw, ctx = one_idesc()
            return {"op": "decode", "word": hex(descgen.encode_idesc(kind, m, n, **kw)), "kind": kind}
        r -= 0.10
        if r < 0.02:
            kind, m, n, kw, ctx = one_idesc()
            return {"op": "decode", "word": descgen.encode_idesc(kind, m, n, **kw)}
        r -= 0.02
        if r < 0.04:
            return {"op": "decode", "word": hex(smem_word()), "descriptor": "smem"}
        r -= 0.04
        if r < 0.02:
            f = zcm_fields()
            w = descgen.encode_zcm(**f)
            return {"op": "decode", "word": hex(w), "descriptor": "zcm", "m": f["m"], "n": f["n"]}
        r -= 0.02
        if r < 0.01:
            return {"op": "decode", "word": hex(smem_word())}
        r -= 0.01
        if r < 0.14:
            kind, m, n, kw, ctx = one_idesc()
            return {"op": "validate", "word": hex(descgen.encode_idesc(kind, m, n, **kw)), "kind": kind, **_ctx(ctx)}
        r -= 0.14
        if r < 0.05:
            f = smem_fields()
            w = descgen.encode_smem(**f, check=False)
            return {"op": "validate", "word": hex(w), "descriptor": "smem", "pattern_start": f["start_address"] & ~1023,
                    "arch": "sm_100a"}
        r -= 0.05
        if r < 0.03:
            f = zcm_fields()
            w = descgen.encode_zcm(**f)
            return {"op": "validate", "word": w, "descriptor": "zcm", "m": f["m"], "n": f["n"], "ws": True}
        r -= 0.03
        if r < 0.10:
            kind, m, n, kw, ctx = one_idesc()
            return {"op": "check", "idesc": hex(descgen.encode_idesc(kind, m, n, **kw)), "kind": kind,
                    "a_desc": hex(smem_word()), "b_desc": hex(smem_word()),
                    **{k: v for k, v in _ctx(ctx).items() if k in ("cta_group", "ws", "sp", "scale_vec", "arch")}}
        bad = rng.randrange(6)
        if bad == 0:
            return '{"op": "encode", "descriptor": "idesc", "kind": "f16", "m": 128,'
        if bad == 1:
            return {"op": rng.choice(("encdoe", "verify", "")), "word": 1}
        if bad == 2:
            return {"op": "encode", "descriptor": "idesc", "kind": "f16", "m": 128, "n": 256, "atpye": "bf16"}
        if bad == 3:
            return {"op": "encode", "descriptor": "idesc", "kind": "f16", "m": rng.choice(("abc", True, 128.0)),
                    "n": 256}
        if bad == 4:
            kind, m, n, kw, ctx = one_idesc()
            return {"op": "encode", "descriptor": "idesc", "kind": kind, "m": m, "n": n + 4, **kw}
        return {"op": "decode", "word": 1 << rng.randrange(64, 200), "descriptor": "smem"}

    pool = [req(i) for i in range(working_set or n)]
    lines = []
    for i in range(n):
        r = pool[i] if working_set is None else rng.choice(pool)
        if isinstance(r, dict):
            r = json.dumps({**r, "id": i})
        lines.append(r)
    return lines


#: (figure, value, target, whether it meets it): every checked figure of this run.
RESULTS: list[tuple[str, str, str, bool]] = []


def rate_figure(label: str, rate: float, target: float = 50_000) -> str:
    ok = rate >= target
    RESULTS.append((label, f"{rate:,.0f} req/s", f">= {target:,.0f}", ok))
    return f"{rate:9,.0f} requests/s   (target >= {target:,.0f}){'' if ok else '  FAIL'}"


_PEAK = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
         "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True); t = time.perf_counter() - t; "
         "print(t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def wall_peak(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS in MB of the largest process ``cmd`` ran: itself or a worker)."""
    out = subprocess.run([sys.executable, "-c", _PEAK, *cmd], stdout=subprocess.PIPE, check=True,
                         text=True).stdout.split()
    return float(out[0]), int(out[1]) / 1024


def scale_figures(sizes: list[int]) -> None:
    exe = shutil.which("descgen") or str(Path(sys.executable).with_name("descgen"))
    print("== scaling: descgen batch FILE over all-distinct lines; per request without start-up (empty file)")
    per: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        empty = os.path.join(tmp, "empty.jsonl")
        Path(empty).write_text("", encoding="utf-8")
        start = statistics.median(wall_peak([exe, "batch", empty])[0] for _ in range(5))
        print(f"  start-up (empty file)          {start * 1e3:6.0f} ms")
        for n in sizes:
            path = os.path.join(tmp, "requests.jsonl")
            Path(path).write_text("\n".join(build(n)) + "\n", encoding="utf-8")
            t1, peak1 = wall_peak([exe, "batch", "--jobs", "1", path])
            t, peak = wall_peak([exe, "batch", path])
            per[n] = (t1 - start) / n
            ok = max(peak, peak1) < 200
            RESULTS.append((f"peak memory, {n:,} lines", f"{max(peak, peak1):,.0f} MB", "< 200 MB", ok))
            print(f"  {n:>9,} lines  --jobs 1: {per[n] * 1e6:6.1f} us/request ({n / t1:8,.0f} req/s), "
                  f"peak {peak1:5.0f} MB;"
                  f"  default: {n / t:8,.0f} req/s, peak {peak:5.0f} MB{'' if ok else '  FAIL'}")
    lo, hi = min(sizes), max(sizes)
    ratio = per[hi] / per[lo]
    RESULTS.append((f"cost per request, {hi:,} / {lo:,} lines", f"{ratio:.2f}x", "<= 1.25x", ratio <= 1.25))
    print(f"  cost per request at {hi:,} lines / at {lo:,}: {ratio:.2f}x (target <= 1.25x: flat)"
          f"{'' if ratio <= 1.25 else '  FAIL'}")
    print()


def summary() -> int:
    print("figure                                            value            target       verdict")
    for label, value, target, ok in RESULTS:
        print(f"  {label:46s}{value:>16s}  {target:>11s}  {'ok' if ok else 'FAIL'}")
    missed = [label for label, _, _, ok in RESULTS if not ok]
    print(f"{len(RESULTS) - len(missed)} of {len(RESULTS)} figures meet their target"
          + (f"; FAIL: {', '.join(missed)}" if missed else ""))
    return 1 if missed else 0


def wall(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        with open(os.devnull, "w") as null:
            subprocess.run(cmd, stdout=null, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def figures(lines: list[str], label: str, runs: int, cli: bool) -> None:
    from descgen.batch import BatchStats, run

    requests = [json.loads(x) if x.startswith("{") and x.endswith("}") else x for x in lines]
    distinct = len({json.dumps({k: v for k, v in r.items() if k != "id"}, sort_keys=True) if isinstance(r, dict) else r
                    for r in requests})
    stats = BatchStats()
    for _ in run(lines, stats=stats, cache=False):
        pass
    assert stats.internal == 0 and stats.requests == len(lines)
    print(f"== {label}: {len(lines)} lines, {distinct} distinct requests (without id); answers: {stats.ok} ok, "
          f"{stats.failed} not ok ({stats.errors} refused)")
    if cli:
        exe = shutil.which("descgen") or str(Path(sys.executable).with_name("descgen"))
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "requests.jsonl")
            Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
            size = os.path.getsize(path)
            out = os.path.join(tmp, "answers.jsonl")
            subprocess.run([exe, "batch", path, "-o", out], check=True)
            print(f"CLI: descgen batch FILE > /dev/null, wall time incl. start-up (median of {runs}); "
                  f"input {size / 1e6:.1f} MB, output {os.path.getsize(out) / 1e6:.0f} MB")
            for name, extra in (("default (brief, --jobs auto, cache)", []), ("--jobs 1", ["--jobs", "1"]),
                                ("--no-cache", ["--no-cache"]), ("--jobs 1 --no-cache", ["--jobs", "1", "--no-cache"]),
                                ("--full", ["--full"]), ("--full --no-cache", ["--full", "--no-cache"])):
                t = wall([exe, "batch", path, *extra], runs)
                if extra:
                    print(f"  {name:30s} {t:6.2f} s   {len(lines) / t:9,.0f} requests/s")
                else:
                    figure = rate_figure("descgen batch, " + label.split(" (")[0], len(lines) / t)
                    print(f"  {name:30s} {t:6.2f} s   {figure}")
    print("in-process: for line in descgen.batch.run(lines), one core (best of 2); chunk 4096: alike requests answered "
          "together, as descgen batch FILE does; chunk 1: line by line, as for a terminal")
    for name, cache, chunk in (("cache on, chunk 4096", True, 4096), ("cache off, chunk 4096", False, 4096),
                               ("cache off, chunk 1", False, 1)):
        best = float("inf")
        for _ in range(2):
            t = time.perf_counter()
            for _ in run(lines, cache=cache, chunk=chunk):
                pass
            best = min(best, time.perf_counter() - t)
        print(f"  {name:30s} {best:6.2f} s   {len(lines) / best:9,.0f} requests/s")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--working-set", type=int, default=10_000, help="distinct requests of the repeated mix")
    parser.add_argument("--runs", type=int, default=3, help="CLI runs per figure (median)")
    parser.add_argument("--write", metavar="FILE", help="write the all-distinct request lines to FILE and stop")
    parser.add_argument("--no-cli", action="store_true")
    parser.add_argument("--scale", default="10000,100000,1000000", metavar="N,N,...",
                        help="line counts of the scaling figure (cost per request, peak memory); 'none' skips it")
    args = parser.parse_args()
    if args.write:
        Path(args.write).write_text("\n".join(build(args.lines)) + "\n", encoding="utf-8")
        return
    print(f"python {sys.version.split()[0]} on {os.cpu_count()} cores; descgen {descgen.__version__}\n")
    figures(build(args.lines, working_set=args.working_set), f"repeated mix (working set {args.working_set:,})",
            args.runs, not args.no_cli)
    figures(build(args.lines), "all distinct", args.runs, not args.no_cli)
    if args.scale != "none" and not args.no_cli:
        scale_figures([int(x) for x in args.scale.split(",")])
    sys.exit(summary())


if __name__ == "__main__":
    main()
