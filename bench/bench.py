"""descgen benchmarks. Timings live here, never in tests.

    python bench/bench.py            # everything
    python bench/bench.py --quick    # fewer repetitions
    python bench/bench.py --startup  # only the start-up timings (part 1)

Measures, on this machine and in this interpreter, each figure as a ratio against a baseline
timed in the same run:
1. ``descgen idesc ...`` (hex output) and ``descgen decode WORD`` (key=value lines) piped, and
   both on a terminal (a pseudo-tty: the rich table), median wall time over repeated runs, as a
   multiple of ``python -c pass`` in a virtual environment with nothing installed
   (:func:`bare_python`; targets: <= 10x piped and <= 15x on a terminal, :data:`STARTUP_TARGETS`), all commands timed in
   turn in each round; for reference ``--table`` piped, this venv's own ``python -c pass``,
   ``import descgen``, ``import click`` (what every command loads) and ``import rich.console,
   rich.text`` (what a word's terminal table costs before it is drawn: the floor of the terminal
   figures; its columns are laid out without ``rich.table``).
   From a git worktree, ``PYTHONPATH=$PWD python bench/bench.py`` times that checkout.
2. ``descgen.encode_idesc``, ``encode_smem`` and ``encode_zcm``, all checks on, each over >= 10,000
   distinct valid configurations, against the hand-written shift-and-or encoders in
   bench/handwritten.py taking the same arguments (target: <= 3x each).
3. ``descgen.validate_idesc`` with the full instruction context over the legal space (as
   tests/test_validate.py enumerates it) against ``encode_idesc(check=False)`` (target: <= 10x).
4. Per-call costs of the other entry points (decode, check_mma, zcm_mask), for reference.

Ends with a table of every ratio and its target; exits 1 when a ratio misses its target.
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


#: A one-word command's start-up against a bare interpreter: about 100 ms piped and 150 ms on a
#: terminal here, which no user tells apart (batch and the API exist for loops).
STARTUP_TARGETS = {"piped": 10, "terminal": 15}
#: (figure, ratio, target): every ratio measured in this run, checked at the end.
RESULTS: list[tuple[str, float, float]] = []


def record(label: str, ratio: float, target: float) -> str:
    RESULTS.append((label, ratio, target))
    return f"{ratio:5.2f}x   (target <= {target:g}x){'' if ratio <= target else '  FAIL'}"


def wall(cmd: list[str], runs: int) -> float:
    """Median wall time of ``cmd`` in seconds (stdout to a pipe, as in ``X=$(cmd)``)."""
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def wall_tty(cmd: list[str], runs: int, columns: int = 120, rows: int = 40) -> float:
    """Median wall time of ``cmd`` with stdin/stdout/stderr on a pseudo-terminal (what a user at a
    terminal sees: the rich table), its output read as it comes."""
    import fcntl
    import pty
    import struct
    import termios

    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    times = []
    for _ in range(runs):
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
        os.close(slave)
        out = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the terminal's last writer is gone
                break
            if not chunk:
                break
            out += chunk
        code = proc.wait()
        times.append(time.perf_counter() - t)
        os.close(master)
        if code or b"0x08400010" not in out:
            raise SystemExit(f"{' '.join(cmd)} on a terminal: exit {code}, output {out[:200]!r}")
    return statistics.median(times)


def bare_python() -> str:
    """An interpreter with nothing else installed: a fresh virtual environment of this Python,
    without pip (its site-packages empty), made once under the system's temporary directory. The
    development venv's own ``python -c pass`` pays for the editable install's and the test tools'
    path hooks at every start (about twice a bare start-up): a user's ratio is against this one."""
    import tempfile
    import venv

    base = getattr(sys, "_base_executable", sys.executable)
    where = Path(tempfile.gettempdir()) / f"descgen-bench-bare-{sys.version_info[0]}.{sys.version_info[1]}"
    python = where / ("Scripts" if os.name == "nt" else "bin") / "python"
    if not python.exists():
        venv.EnvBuilder(with_pip=False, clear=True).create(where)
    probe = subprocess.run([str(python), "-c", "import sys, site; print(sys.prefix != sys.base_prefix)"],
                           capture_output=True, text=True, check=True)
    assert probe.stdout.strip() == "True", (base, probe.stdout)
    return str(python)


def cli_figures(runs: int) -> None:
    exe = shutil.which("descgen") or str(Path(sys.executable).with_name("descgen"))
    job = [exe, "idesc", "--kind", "f16", "--m", "128", "--n", "256"]
    pasted = [exe, "decode", "0x08400010"]  # a word pasted from a debugger: every kind tried
    for cmd in (job, job + ["--table"], pasted):  # warm: the .pyc files and the tables' marshal cache
        subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True)
    bare = bare_python()
    py = sys.executable
    cases = {  # timed in turn in each round, so that a change in the machine's load hits them all
        "base": lambda: wall([bare, "-c", "pass"], 1),
        "dev": lambda: wall([py, "-c", "pass"], 1),
        # What a click command and a rich table pay before descgen runs (in this venv).
        "click": lambda: wall([py, "-c", "import click"], 1),
        "rich": lambda: wall([py, "-c", "import rich.console, rich.text"], 1),
        "lib": lambda: wall([py, "-c", "import descgen"], 1),
        "piped": lambda: wall(job, 1),
        "tty": lambda: wall_tty(job, 1),
        "table": lambda: wall(job + ["--table"], 1),
        "decode": lambda: wall(pasted, 1),
        "decode_tty": lambda: wall_tty(pasted, 1),
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, run in cases.items():
            times[name].append(run())
    t = {name: statistics.median(v) for name, v in times.items()}
    base = t["base"]
    env_cols = os.environ.get("COLUMNS", "")
    print("CLI wall time (median of %d runs, the commands timed in turn)" % runs)
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("  (PYTHONDONTWRITEBYTECODE is set: every run compiles descgen's modules from source; an installed\n"
              "   descgen has .pyc files. Unset it, run once, then measure, for the installed figure.)")
    print(f"  python -c pass (bare venv)  {base * 1e3:7.1f} ms   "
          "the baseline: an interpreter with nothing else installed")
    for name, label, note in (
            ("dev", "python -c pass (this venv)", "its installs' start-up hooks, for reference"),
            ("click", "python -c 'import click'", "this venv: the floor of every command"),
            ("rich", "python -c 'import rich...'",
             "this venv: the floor of a terminal table (rich.console, rich.text)"),
            ("lib", "python -c 'import descgen'", "this venv: the library's start-up")):
        print(f"  {label:27s} {t[name] * 1e3:7.1f} ms   {t[name] / base:5.2f}x   ({note})")
    print(f"  descgen idesc ... (piped)   {t['piped'] * 1e3:7.1f} ms   "
          f"{record('CLI idesc, piped', t['piped'] / base, STARTUP_TARGETS['piped'])}")
    print(f"  descgen idesc ... (tty)     {t['tty'] * 1e3:7.1f} ms   "
          f"{record('CLI idesc, on a terminal', t['tty'] / base, STARTUP_TARGETS['terminal'])}")
    print(f"  descgen idesc ... --table   {t['table'] * 1e3:7.1f} ms   {t['table'] / base:5.2f}x   "
          f"(piped, for reference){' COLUMNS=' + env_cols if env_cols else ''}")
    print(f"  descgen decode WORD (piped) {t['decode'] * 1e3:7.1f} ms   "
          f"{record('CLI decode, piped', t['decode'] / base, STARTUP_TARGETS['piped'])}")
    print(f"  descgen decode WORD (tty)   {t['decode_tty'] * 1e3:7.1f} ms   "
          f"{record('CLI decode, on a terminal', t['decode_tty'] / base, STARTUP_TARGETS['terminal'])}")


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


def smem_configurations(target: int = 12_000) -> list[tuple[dict, dict]]:
    """About ``target`` distinct valid smem encodes (fields, context): every swizzle and LBO mode,
    start addresses over shared memory, the base offset of a pattern that starts at the start
    address or on its boundary; a quarter without context, the rest with a target and half of
    those with the pattern start too."""
    import random

    rng = random.Random(11)
    boundary = {"none": 0, "128B_base32B": 1024, "128B": 1024, "64B": 512, "32B": 256}
    out: dict[tuple, tuple[dict, dict]] = {}
    while len(out) < target:
        swizzle = rng.choice(descgen.SWIZZLES)
        start = rng.randrange(0, 1 << 18, 16)
        mode = "absolute" if swizzle == "128B" and rng.random() < 0.1 else "relative"
        fields = {"start_address": start, "lbo": rng.randrange(0, 1 << 18, 16), "sbo": rng.randrange(0, 1 << 18, 16),
                  "swizzle": swizzle}
        ctx: dict = {}
        r = rng.random()
        if mode == "absolute":
            fields["lbo_mode"] = mode
            ctx = {"arch": "sm_103a"}
        elif r < 0.25:
            pass
        elif r < 0.6:
            ctx = {"arch": rng.choice(("sm_100a", "sm_103a", "sm_110a"))}
        elif boundary[swizzle]:
            pattern = start - start % 128 if rng.random() < 0.5 else start - start % boundary[swizzle]
            ctx = {"arch": "sm_100a", "pattern_start": pattern}
            fields["base_offset"] = 0 if pattern % boundary[swizzle] == 0 else (pattern >> 7) & 7
        if swizzle != "none" and mode == "relative" and "pattern_start" not in ctx and (start % boundary[swizzle]) >> 7:
            fields["base_offset"] = (start >> 7) & 7  # the pattern starts here (else a warning)
        key = (tuple(sorted(fields.items())), tuple(sorted(ctx.items())))
        out[key] = (fields, ctx)
    return list(out.values())


def zcm_configurations(target: int = 12_000) -> list[tuple[dict, dict]]:
    """About ``target`` distinct valid zcm encodes (fields, context): a third without context, the
    rest with the MMA's M, N and .ws (only the sub-masks M uses set)."""
    import random

    rng = random.Random(12)
    out: dict[tuple, tuple[dict, dict]] = {}
    while len(out) < target:
        m = rng.choice((32, 64, 128))
        count = {32: 4, 64: 2, 128: 1}[m]
        fields = {"start_count": tuple(rng.randrange(256) if i < count else 0 for i in range(4)),
                  "first_span": tuple(rng.randrange(2) if i < count else 0 for i in range(4)),
                  "skip_span": rng.randrange(1, 257), "use_span": rng.randrange(1, 257),
                  "column_shift": rng.randrange(0, 17 if m == 32 else 33)}
        if rng.random() < 0.2:
            fields["nonzero_mask"] = False
        ctx = {} if rng.random() < 1 / 3 else {"m": m, "n": rng.choice((64, 128, 256)), "ws": True}
        out[(tuple(sorted(fields.items())), tuple(sorted(ctx.items())))] = (fields, ctx)
    return list(out.values())


def per_call(fn, calls: list[tuple], repeat: int) -> float:
    """Best-of-``repeat`` mean seconds per call over ``calls``."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for kind, m, n, kw in calls:
            fn(kind, m, n, **kw)
        best = min(best, (time.perf_counter() - t) / len(calls))
    return best


def per_call_kw(fn, calls: list[dict], repeat: int) -> float:
    """Best-of-``repeat`` mean seconds per ``fn(**kw)`` over ``calls``."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for kw in calls:
            fn(**kw)
        best = min(best, (time.perf_counter() - t) / len(calls))
    return best


def paired(ours, ours_calls: list, hand, hand_calls: list, repeat: int, timer=per_call_kw) -> tuple[float, float]:
    """Best-of-``repeat`` seconds per call of ``ours`` and ``hand`` (``timer``: :func:`per_call_kw`
    or :func:`per_call`), the two timed in turn in each repetition (so that a change in the
    machine's load hits both)."""
    best_ours = best_hand = float("inf")
    for _ in range(repeat):
        best_hand = min(best_hand, timer(hand, hand_calls, 1))
        best_ours = min(best_ours, timer(ours, ours_calls, 1))
    return best_ours, best_hand


def encode_figures(repeat: int) -> None:
    calls = configurations()
    distinct = {(k, m, n, tuple(sorted(kw.items()))) for k, m, n, kw in calls}
    assert len(distinct) == len(calls) >= 10_000, len(calls)
    for kind, m, n, kw in calls:  # same answers before timing anything
        assert descgen.encode_idesc(kind, m, n, **kw) == handwritten.encode_idesc(kind, m, n, **kw), (kind, m, n, kw)
    ours, hand = paired(descgen.encode_idesc, calls, handwritten.encode_idesc, calls, repeat, per_call)
    print(f"encode_idesc over {len(calls)} distinct valid configurations (best of {repeat}, timed in turn)")
    print(f"  hand-written shift-and-or   {hand * 1e6:6.2f} us/call")
    print(f"  descgen.encode_idesc        {ours * 1e6:6.2f} us/call   "
          f"{record('encode_idesc / hand-written', ours / hand, 3)}")
    for name, configs in (("smem", smem_configurations()), ("zcm", zcm_configurations())):
        ours_fn, hand_fn = getattr(descgen, f"encode_{name}"), getattr(handwritten, f"encode_{name}")
        full = [{**fields, **ctx} for fields, ctx in configs]
        bare = [fields for fields, _ in configs]
        for kw, fields in zip(full, bare):  # same answers, no error, before timing anything
            assert ours_fn(**kw) == hand_fn(**fields), kw
        ours, hand = paired(ours_fn, full, hand_fn, bare, repeat)
        given = sum(1 for _, ctx in configs if ctx)
        print(f"encode_{name} over {len(configs)} distinct valid configurations, {given} with context "
              f"(best of {repeat}, timed in turn)")
        print(f"  hand-written shift-and-or   {hand * 1e6:6.2f} us/call")
        print(f"  descgen.encode_{name:12s}{ours * 1e6:6.2f} us/call   "
              f"{record(f'encode_{name} / hand-written', ours / hand, 3)}")


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
    print(f"validate_idesc with full context over {len(words)} of {len(members)} legal-space members "
          f"(best of {repeat})")
    print(f"  encode_idesc(check=False)   {raw * 1e6:6.2f} us/call")
    print(f"  descgen.validate_idesc      {best * 1e6:6.2f} us/call   "
          f"{record('validate_idesc / encode(check=False)', best / raw, 10)}")


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
    smem_words = [(descgen.encode_smem(start_address=a, lbo=l, sbo=s, swizzle=z),) for a, l, s, z in smem_args]
    timeit("decode_smem", descgen.decode_smem, smem_words)
    zcm_args = [(s, u) for s in range(1, 60) for u in range(1, 60)]
    timeit("decode_zcm", descgen.decode_zcm, [(descgen.encode_zcm(skip_span=s, use_span=u),) for s, u in zcm_args])
    timeit("zcm_mask (M=32, N=256)",
           lambda s, u: descgen.zcm_mask(descgen.encode_zcm(skip_span=s, use_span=u), 32, 256), zcm_args[:500])
    tf32 = [(w, k) for (k, m, n, kw), w in zip(configurations()[:2000], words)]
    mma = [(w, k, a[0], b[0]) for (w, k), a, b in zip(tf32, smem_words, reversed(smem_words))]
    timeit("check_mma (idesc, A, B)",
           lambda w, k, a, b: descgen.check_mma(idesc=w, kind=k, a_desc=a, b_desc=b, cta_group=1, arch="sm_100a"), mma)


def summary() -> int:
    print("\nfigure                                     ratio   target   verdict")
    for label, ratio, target in RESULTS:
        print(f"  {label:40s}{ratio:6.2f}x  <= {target:<4g}  {'ok' if ratio <= target else 'FAIL'}")
    missed = [label for label, ratio, target in RESULTS if ratio > target]
    print(f"{len(RESULTS) - len(missed)} of {len(RESULTS)} figures meet their target"
          + (f"; FAIL: {', '.join(missed)}" if missed else ""))
    return 1 if missed else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--no-cli", action="store_true", help="skip the subprocess timings")
    parser.add_argument("--startup", action="store_true", help="only the start-up timings (part 1)")
    args = parser.parse_args()
    runs, repeat = (7, 2) if args.quick else (21, 5)
    print(f"python {sys.version.split()[0]} on {os.cpu_count()} cores; descgen {descgen.__version__}\n")
    if not args.no_cli:
        cli_figures(runs)
        if args.startup:
            sys.exit(summary())
        print()
    encode_figures(repeat)
    print()
    validate_figures(repeat)
    print()
    other_figures(repeat)
    sys.exit(summary())


if __name__ == "__main__":
    main()
