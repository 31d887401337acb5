"""The C++/CUDA header's costs (descgen header --lang cpp). Timings live here, never in tests.

    python bench/bench_header.py            # everything
    python bench/bench_header.py --quick    # fewer records and repetitions

Measures, on this machine, each figure against a baseline timed in the same run:
1. Compile time of a translation unit that includes descgen_tcgen05.hpp and uses it (g++ -std=c++17
   -O2 -c), median CPU time of repeated runs (and wall time), against the same translation unit including only <cstdint>
   (target: under 1 s, absolute); and, for information, the same TU validating with a run-time kind.
2. The generated host validators (g++ -O2, one thread, CPU time), ns per word, over (a) the legal space of
   validate_idesc with its contexts (the differential's exhaustive part), (b) the differential's
   million records (idesc, smem, zcm, taddr and check_mma, legal and random words), against a
   hand-written shift-and-mask decode of the same records (target (a): <= 50 ns per word).

Ends with a table of every figure and its target; exits 1 when one misses its target.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "cpp"))

import differential  # noqa: E402

from descgen.backends import cpp_header  # noqa: E402

RESULTS: list[tuple[str, float, float, str]] = []

USE = """#include "descgen_tcgen05.hpp"
using namespace descgen::tcgen05;
bool check(unsigned w) { Report r; Context c; c.cta_group = 1; validate_idesc(w, Kind::f16, c, r); return r.ok(); }
unsigned word() { return encode_idesc(Kind::f16, 128, 256); }
"""
#: The same with the kind known only at run time: every kind's validate_idesc instance is compiled.
USE_ANY_KIND = USE.replace("unsigned w)", "unsigned w, Kind kind)").replace("Kind::f16, c", "kind, c")
BARE = ("#include <cstdint>\nbool check(unsigned w) { return w == 0x08400010u; }\n"
        "unsigned word() { return 0x08400010u; }\n")


def record(label: str, value: float, target: float, unit: str) -> str:
    RESULTS.append((label, value, target, unit))
    return f"{value:8.2f} {unit}   (target <= {target:g} {unit}){'' if value <= target else '  FAIL'}"


def compile_time(gxx: str, work: Path, source: str, repeats: int) -> tuple[float, float]:
    """Median CPU time (user + sys of the compiler) and wall time of compiling ``source``."""
    src = work / f"tu_{abs(hash(source))}.cpp"
    src.write_text(source)
    cpu, wall = [], []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run([gxx, "-std=c++17", "-O2", f"-I{work}", "-c", str(src), "-o", str(work / "tu.o")], check=True)
        wall.append(time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(cpu), statistics.median(wall)


def validators(driver: Path, records: Path, repeats: int) -> dict[str, float]:
    out = subprocess.run([str(driver), str(records), "--bench", str(repeats)], check=True, capture_output=True,
                         text=True).stdout
    return {k: float(v) for k, v in (line.split("=") for line in out.splitlines())}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    gxx = shutil.which("g++")
    if gxx is None:
        print("g++ is not installed")
        return 1
    repeats = 3 if args.quick else 7
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / cpp_header.FILE_NAME).write_text(cpp_header.header())
        size = (work / cpp_header.FILE_NAME).stat().st_size
        print(f"header: {size / 1024:.0f} KiB, {len(cpp_header.codes())} codes")
        bare, bare_wall = compile_time(gxx, work, BARE, repeats)
        full, full_wall = compile_time(gxx, work, USE, repeats)
        print(f"1. compile (g++ -O2 -c, median of {repeats}, CPU time): <cstdint> only {bare:.3f} s; with the header "
              f"{record('compile a TU with the header (CPU)', full, 1.0, 's')} ({full / bare:.1f}x the bare TU; "
              f"wall {full_wall:.3f} s vs {bare_wall:.3f} s)")
        any_kind, _ = compile_time(gxx, work, USE_ANY_KIND, repeats)
        print("1b. the same TU with the kind a run-time argument (every kind's validate_idesc compiled): "
              f"{any_kind:.2f} s")
        driver = work / "driver"
        subprocess.run([gxx, "-std=c++17", "-O2", f"-I{work}", f"-I{ROOT / 'tests' / 'cpp'}",
                        str(ROOT / "tests" / "cpp" / "driver.cpp"), "-o", str(driver)], check=True)
        legal = b"".join(r for r in differential._exhaustive() if r[0] == 0)
        (work / "legal.bin").write_bytes(legal)
        mix = differential.records(200_000 if args.quick else differential.SIZE)
        (work / "mix.bin").write_bytes(mix)
        a = validators(driver, work / "legal.bin", repeats)
        b = validators(driver, work / "mix.bin", repeats)
        print(f"2a. validate_idesc over the legal space with contexts ({int(a['records'])} words): "
              f"{record('validate_idesc, legal space', a['validators_ns'], 50, 'ns/word')}; "
              f"baseline {a['baseline_ns']:.2f} ns ({a['validators_ns'] / a['baseline_ns']:.0f}x)")
        print(f"2b. the differential's mix ({int(b['records'])} records, check_mma counts one): "
              f"{b['validators_ns']:.2f} ns/record; baseline {b['baseline_ns']:.2f} ns "
              f"({b['validators_ns'] / b['baseline_ns']:.0f}x)")
    print()
    print(f"{'figure':40} {'value':>10} {'target':>10}")
    for label, value, target, unit in RESULTS:
        print(f"{label:40} {value:10.3f} {target:10g} {unit}{'' if value <= target else '  FAIL'}")
    return 0 if all(v <= t for _, v, t, _ in RESULTS) else 1


if __name__ == "__main__":
    sys.exit(main())
