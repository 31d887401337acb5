"""The C++/CUDA header (descgen.backends.cpp_header, ``descgen header``; ``--lang cpp`` the default).

- It compiles: g++ -std=c++17 -Wall -Wextra -Werror -pedantic (with and without DESCGEN_DEBUG), and
  nvcc for sm_90a and sm_100a (skipped without nvcc), included twice; C++17 is the standard its
  banner states and C++14 refuses it (tests/standards.py); its static_asserts are words of the spec's
  worked examples and the README (tests/cpp/static_checks.cpp), and its decoders and validators
  answer known words.
- DESCGEN_CHECK prints and aborts with DESCGEN_DEBUG, and evaluates nothing without it.
- The differential: the header's validators (tests/cpp/driver.cpp, built once per session) and the
  Python API (tests/cpp/differential.py) answer the same million records (the legal shape space
  exhaustively, then random words and contexts) with the same verdicts and codes, and between them
  report every code the header has.
- The recorded GPU run (tests/device/header_validators/recorded/, made by
  tests/device/header_validators/run.sh on an H100) was over the records the generator makes now, and agreed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from array import array
from pathlib import Path

import pytest

from descgen.backends import cpp_header

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "cpp"))
import differential  # noqa: E402

GXX = shutil.which("g++")
NVCC = shutil.which("nvcc")
STRICT = ["-std=c++17", "-Wall", "-Wextra", "-Werror", "-pedantic"]
RECORDED = HERE / "device" / "header_validators" / "recorded"

needs_gxx = pytest.mark.skipif(GXX is None, reason="g++ is not installed")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")


@pytest.fixture(scope="session")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with the header as the tables generate it now."""
    out = tmp_path_factory.mktemp("cpp_header")
    (out / cpp_header.FILE_NAME).write_text(cpp_header.header())
    return out


def _cc(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(args)}\n{done.stdout}{done.stderr}"
    return done


def test_header_is_deterministic_and_self_contained(build: Path) -> None:
    text = (build / cpp_header.FILE_NAME).read_text()
    assert text == cpp_header.header()
    # the same header in every process, whatever Python's string hash seed (no table is filled in a
    # set's order): the recorded GPU run names the header by its hash
    code = "import sys; from descgen.backends.cpp_header import header; sys.stdout.write(header())"
    for seed in ("1", "2"):
        other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                               env={**os.environ, "PYTHONHASHSEED": seed}).stdout
        assert other == text, f"PYTHONHASHSEED={seed} gives another header"
    assert text.isascii()
    includes = re.findall(r"^#include (.*)$", text, re.M)
    # (<cstdio>, <cstdlib> under DESCGEN_DEBUG only; the driver API's under DESCGEN_SANITIZER only)
    assert includes == ["<cstdint>", "<cstdio>", "<cstdlib>", "<cuda.h>", "<cstdio>", "<cstring>"]
    assert text.index("#if defined(DESCGEN_SANITIZER)") < text.index("#include <cuda.h>")
    assert "DESCGEN_CHECK(cond, code, field, value, allowed) ((void)0)" in text
    debug = text.index("#ifdef DESCGEN_DEBUG")
    assert text.index("#include <cstdio>") > debug and text.index("#include <cstdlib>") > debug
    assert "#ifndef DESCGEN_CHECK" in text  # shared with the run-time descriptor functions


def test_codes_are_the_python_api_codes() -> None:
    from descgen.model.catalog import catalog
    from descgen.codes import all_codes

    codes = cpp_header.codes()
    assert len(set(codes)) == len(codes) and set(codes) <= set(all_codes())
    rules = {r.code for r in catalog().values() if r.applies in ("idesc", "smem", "zcm", "mma", "taddr")}
    assert rules <= set(codes)


@needs_gxx
@pytest.mark.parametrize("debug", [False, True], ids=["plain", "DESCGEN_DEBUG"])
def test_gxx_strict_static_asserts_and_known_words(build: Path, debug: bool) -> None:
    exe = build / f"static_checks{'_debug' if debug else ''}"
    _cc([GXX, *STRICT, *(["-DDESCGEN_DEBUG"] if debug else []), f"-I{build}", str(HERE / "cpp" / "static_checks.cpp"),
         "-o", str(exe)], build)
    done = subprocess.run([str(exe)], capture_output=True, text=True)
    assert done.returncode == 0, f"{done.returncode} checks failed\n{done.stdout}{done.stderr}"


@needs_gxx
def test_gxx_rejects_a_wrong_static_assert(build: Path) -> None:
    """The static_asserts can fail: a word one bit off does not compile."""
    src = build / "wrong.cpp"
    src.write_text('#include "descgen_tcgen05.hpp"\nusing namespace descgen::tcgen05;\n'
                   'static_assert(encode_idesc(Kind::f16, 128, 256) == 0x08400011u, "");\n')
    done = subprocess.run([GXX, *STRICT, f"-I{build}", "-fsyntax-only", str(src)], capture_output=True, text=True)
    assert done.returncode != 0 and "static assert" in done.stderr.lower()


@needs_gxx
def test_descgen_check(build: Path) -> None:
    """With DESCGEN_DEBUG a failed check prints code, field, value and allowed values and aborts; a
    constexpr encode of an illegal value does not compile; without it nothing is evaluated."""
    src = build / "check.cpp"
    src.write_text('#include "descgen_tcgen05.hpp"\nusing namespace descgen::tcgen05;\nstatic int evaluated = 0;\n'
                   'int one() { ++evaluated; return 1; }\nint main(int argc, char**) {\n    (void)argc;\n'
                   '    DESCGEN_CHECK(argc > 5, "DEMO-CODE", "demo", one(), "{1, 2}");\n'
                   '    Report r; Context c; c.cta_group = 1;\n'
                   '    validate_idesc(0x08400010u | (1u << 6), Kind::f16, c, r);\n'
                   '    require_ok(r);\n    return evaluated;\n}\n')
    _cc([GXX, *STRICT, f"-I{build}", str(src), "-o", str(build / "check_plain")], build)
    assert subprocess.run([str(build / "check_plain")]).returncode == 0  # nothing evaluated, nothing checked
    _cc([GXX, *STRICT, "-DDESCGEN_DEBUG", f"-I{build}", str(src), "-o", str(build / "check_debug")], build)
    done = subprocess.run([str(build / "check_debug")], capture_output=True, text=True)
    assert done.returncode != 0
    assert done.stderr == "descgen: DEMO-CODE: demo = 1 (0x1), allowed {1, 2}\n"
    bad = build / "bad_encode.cpp"
    bad.write_text('#include "descgen_tcgen05.hpp"\nusing namespace descgen::tcgen05;\n'
                   'constexpr auto w = encode_idesc(Kind::f16, 128, 250);\n')
    assert subprocess.run([GXX, *STRICT, f"-I{build}", "-fsyntax-only", str(bad)], capture_output=True).returncode == 0
    done = subprocess.run([GXX, *STRICT, "-DDESCGEN_DEBUG", f"-I{build}", "-fsyntax-only", str(bad)],
                          capture_output=True, text=True)
    assert done.returncode != 0  # N = 250 is no legal N: under DESCGEN_DEBUG the constant expression fails


@needs_gxx
def test_a_descgen_check_defined_first_is_kept(build: Path) -> None:
    """Another generated file's DESCGEN_CHECK (string literals pasted together) may come first: the
    header keeps it and compiles with it."""
    src = build / "first.cpp"
    src.write_text('#include <cstdio>\n#include <cstdlib>\n#define DESCGEN_CHECK(cond, code, field, value, allowed) '
                   '((cond) ? (void)0 : (std::fprintf(stderr, "first: " code ": " field " " allowed "\\n"), '
                   'std::abort()))\n'
                   '#include "descgen_tcgen05.hpp"\nusing namespace descgen::tcgen05;\n'
                   'int main() { DESCGEN_CHECK(1 > 2, "X", "f", 0, "a"); }\n')
    for debug in ([], ["-DDESCGEN_DEBUG"]):
        _cc([GXX, *STRICT, *debug, f"-I{build}", str(src), "-o", str(build / "first")], build)
        done = subprocess.run([str(build / "first")], capture_output=True, text=True)
        assert done.returncode != 0 and done.stderr == "first: X: f a\n"


@needs_gxx
def test_descgen_check_reports_a_rule(build: Path) -> None:
    src = build / "rule.cpp"
    src.write_text('#include "descgen_tcgen05.hpp"\nusing namespace descgen::tcgen05;\nint main() {\n'
                   '    Report r; Context c; c.cta_group = 1;\n'
                   '    validate_idesc(encode_idesc(Kind::f16, 256, 256), Kind::f16, c, r);\n    require_ok(r);\n}\n')
    _cc([GXX, *STRICT, "-DDESCGEN_DEBUG", f"-I{build}", str(src), "-o", str(build / "rule")], build)
    done = subprocess.run([str(build / "rule")], capture_output=True, text=True)
    assert done.returncode != 0 and done.stderr.startswith(
        "descgen: IDESC-M-SHAPE: m = 256 (0x100), allowed M must be one"), done.stderr


@needs_nvcc
@pytest.mark.parametrize("arch, debug", [("90a", True), ("100a", False)])
def test_nvcc_compiles(build: Path, arch: str, debug: bool) -> None:
    """The header in device code (the differential kernel; the static checks as CUDA), for sm_90a
    and sm_100a, with and without DESCGEN_DEBUG (compile only)."""
    flags = ["-std=c++17", *(["-DDESCGEN_DEBUG"] if debug else []), f"-gencode=arch=compute_{arch},code=sm_{arch}",
             f"-I{build}"]
    _cc([NVCC, *flags, f"-I{HERE / 'cpp'}", "-c", str(HERE / "device" / "header_validators" / "validators_kernel.cu"),
         "-o", str(build / f"kernel_{arch}.o")], build)
    _cc([NVCC, *flags, "-x", "cu", "-c", str(HERE / "cpp" / "static_checks.cpp"),
         "-o", str(build / f"static_{arch}.o")], build)


@needs_gxx
def test_header_is_guarded_and_needs_the_standard_it_states(build: Path) -> None:
    """The banner says C++17 (if constexpr). Included twice, beside run-time functions descgen
    emits (their own guard, DESCGEN_CHECK and DESCGEN_HOST_DEVICE, whichever comes first), it
    compiles at C++17 with and without DESCGEN_DEBUG; C++14 refuses it (g++ -pedantic -Werror)."""
    from standards import below, compile_at, stated

    import descgen
    from descgen.backends.descriptor_functions import emit_functions

    text = (build / cpp_header.FILE_NAME).read_text()
    std, _ = stated(text)
    assert std == "c++17"
    lines = text.rstrip("\n").splitlines()
    assert lines[lines.index("#ifndef DESCGEN_TCGEN05_HPP") + 1] == "#define DESCGEN_TCGEN05_HPP"
    assert lines[-1] == "#endif  // DESCGEN_TCGEN05_HPP"
    tile = descgen.smem_for_tile(dtype="bf16", major="k", swizzle="128B", mn=128, k=64, start_address=0)
    (build / "a_desc.hpp").write_text(emit_functions(tile, "cpp", name="a_desc"))
    h = cpp_header.FILE_NAME
    tu = (f'#include "a_desc.hpp"\n#include "{h}"\n#include "a_desc.hpp"\n#include "{h}"\n'
          "static_assert(descgen::tcgen05::encode_idesc(descgen::tcgen05::Kind::f16, 128, 256) == 0x08400010u, \"\");\n"
          "static_assert(a_desc(0x400u) == 0x4000404000010040ull, \"\");\n")
    for debug in ([], ["-DDESCGEN_DEBUG"]):
        done = compile_at(GXX, std, tu, "twice.cpp", build, f"-I{build}", *debug)
        assert done.returncode == 0, done.stderr
    done = compile_at(GXX, below(std), tu, "twice.cpp", build, f"-I{build}")
    assert done.returncode != 0 and "if constexpr" in done.stderr


@needs_nvcc
def test_nvcc_header_twice_at_the_standard_it_states_and_not_below(build: Path) -> None:
    """As CUDA (sm_90a and sm_100a, warnings as errors): the header included twice, used in a
    kernel, compiles at the standard its banner states (C++17); at C++14 nvcc warns (a C++17
    feature), an error here."""
    from standards import below, compile_at, stated

    std, _ = stated((build / cpp_header.FILE_NAME).read_text())
    h = cpp_header.FILE_NAME
    tu = (f'#include "{h}"\n#include "{h}"\nusing namespace descgen::tcgen05;\n'
          "__global__ void k(unsigned* out, int n) { out[0] = encode_idesc(Kind::f16, 128, n); }\n")
    gencode = ["-gencode=arch=compute_90a,code=sm_90a", "-gencode=arch=compute_100a,code=sm_100a"]
    done = compile_at("nvcc", std, tu, "twice.cu", build, f"-I{build}", *gencode)
    assert done.returncode == 0, done.stderr
    done = compile_at("nvcc", below(std), tu, "twice.cu", build, f"-I{build}", *gencode[1:])
    assert done.returncode != 0 and "C++17" in done.stdout + done.stderr


@pytest.fixture(scope="session")
def driver(build: Path) -> Path:
    if GXX is None:
        pytest.skip("g++ is not installed")
    exe = build / "driver"
    _cc([GXX, "-std=c++17", "-O2", f"-I{build}", f"-I{HERE / 'cpp'}", str(HERE / "cpp" / "driver.cpp"), "-o", str(exe)],
        build)
    return exe


@pytest.fixture(scope="session")
def differential_run(build: Path, driver: Path) -> dict[str, object]:
    """The million records, the header's digests and the Python API's digests."""
    data = differential.records()
    path = build / "records.bin"
    path.write_bytes(data)
    _cc([str(driver), str(path), str(build / "cpp_digests.bin")], build)
    cpp = array("I")
    cpp.frombytes((build / "cpp_digests.bin").read_bytes())
    python = differential.digests_parallel(data, min(2, len(os.sched_getaffinity(0))))
    return {"records": path, "data": data, "cpp": cpp, "python": python}


def test_differential_a_million(differential_run: dict[str, object], driver: Path) -> None:
    data, cpp, python = differential_run["data"], differential_run["cpp"], differential_run["python"]
    assert isinstance(data, bytes) and isinstance(cpp, array) and isinstance(python, array)
    n = len(data) // differential.RECORD.size
    assert n >= 1_000_000 and len(cpp) == len(python) == n
    bad = [i for i in range(n) if cpp[i] != python[i]]
    if bad:
        lines = []
        for i in bad[:5]:
            rec = differential.RECORD.unpack_from(data, i * differential.RECORD.size)
            report = differential.answer(rec)
            cxx = subprocess.run([str(driver), str(differential_run["records"]), "--explain", str(i)],
                                 capture_output=True, text=True)
            lines.append(f"record {i} {rec}:\n"
                         f"  python ok={int(report.ok)} {' '.join(f.code for f in report.findings)}\n"
                         f"  c++    {cxx.stdout}")
        pytest.fail(f"{len(bad)} of {n} records differ:\n" + "\n".join(lines))


def test_differential_reports_every_code(differential_run: dict[str, object], driver: Path) -> None:
    """The records make the header (and so the API, with which it agrees) report every code it has
    but those of fields whose every raw value is legal (no word can break them)."""
    seen = subprocess.run([str(driver), str(differential_run["records"]), "--coverage"], capture_output=True, text=True,
                          check=True).stdout.split()
    unreachable = cpp_header.unreachable_codes()
    assert "IDESC-A-SF-ID-RANGE" in unreachable and "IDESC-N-RANGE" not in unreachable
    assert sorted(set(cpp_header.codes()) - set(seen)) == sorted(unreachable)


def test_differential_e47_slice_k_and_skewed_strides(build: Path, driver: Path) -> None:
    """MMA-SBO-ATOM (E47) at its edges, where random words rarely go: SBOs inside one atom row and
    just past it, whole patterns and 16 bytes off them, starts along the row, every swizzle mode,
    K- and MN-major B, dense and sparse, N per CTA of one to sixteen groups. The header and the
    Python API agree record by record, and the records reach both answers."""
    from descgen import check_mma, encode_idesc, encode_smem
    from descgen.model.loader import KINDS

    data = bytearray()
    warns: dict[tuple[object, ...], bool] = {}
    for kind, n, b_major, sparse in [("f16", n, major, sp) for n in (16, 32, 64, 256) for major in ("k", "mn")
                                     for sp in (False, True)] + [("f8f6f4", 32, "k", False), ("tf32", 64, "k", False)]:
        idesc = int(encode_idesc(kind, 128, n, b_major=b_major, sparse=sparse, check=False))
        for swizzle in ("128B", "64B", "32B", "128B_base32B"):
            for sbo in (16, 32, 48, 64, 96, 112, 128, 256, 512, 1024, 1040, 1152):
                for start in (0x1400, 0x1410, 0x1420, 0x1460):
                    b = int(encode_smem(start_address=start, lbo=16 if b_major == "k" else 8192, sbo=sbo,
                                        swizzle=swizzle, check=False))
                    data += differential._pack(4, KINDS.index(kind), 1, -1, int(sparse), 1, -1, -1, -1, 0, 0, idesc, 0,
                                               b)
                    report = check_mma(idesc=idesc, kind=kind, b_desc=b, a_tmem=True, cta_group=1, sp=sparse)
                    warns[kind, n, b_major, sparse, swizzle, sbo, start] = \
                        "MMA-SBO-ATOM" in {f.code for f in report.findings}
    path = build / "e47_records.bin"
    path.write_bytes(bytes(data))
    _cc([str(driver), str(path), str(build / "e47_digests.bin")], build)
    cpp = array("I")
    cpp.frombytes((build / "e47_digests.bin").read_bytes())
    python = differential.digests(bytes(data), check_every=1)
    assert len(cpp) == len(python) == len(warns)
    assert [key for i, key in enumerate(warns) if cpp[i] != python[i]] == []
    # both answers, in every mode that has them: slice-K inside the row, past it, off the pattern
    assert (not warns["f8f6f4", 32, "k", False, "128B", 32, 0x1400]
            and warns["f8f6f4", 32, "k", False, "128B", 1040, 0x1400])
    assert not warns["f16", 64, "k", False, "128B", 32, 0x1400] and warns["f16", 64, "k", False, "128B", 32, 0x1420]
    assert not warns["f16", 32, "k", False, "64B", 32, 0x1400] and warns["f16", 32, "k", False, "64B", 48, 0x1400]
    assert not warns["f16", 32, "k", True, "128B", 64, 0x1400] and warns["f16", 32, "k", True, "128B", 64, 0x1410]
    assert not warns["f16", 16, "mn", False, "128B", 16, 0x1400] and warns["f16", 256, "mn", False, "128B", 16, 0x1400]
    assert warns["f16", 32, "k", False, "32B", 16, 0x1400] and not warns["tf32", 64, "k", False, "128B", 32, 0x1400]


def _summary() -> dict[str, str]:
    path = RECORDED / "summary.txt"
    if not path.exists():
        pytest.skip("no recorded GPU run yet "
                    "(tests/device/header_validators/run.sh tests/device/header_validators/recorded on a GPU)")
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def test_recorded_device_run_agreed_over_these_records(differential_run: dict[str, object]) -> None:
    """The recorded GPU run agreed with the host and the Python API over at least a million records,
    and they are the records the generator makes now (the words file's hash)."""
    s = _summary()
    data = differential_run["data"]
    assert isinstance(data, bytes)
    n = int(s["records"])
    assert n >= 1_000_000 and s["agreement"] == "yes" and s["kernel_rc"] == "0"
    assert int(s["device_host_agree"]) == int(s["device_python_agree"]) == int(s["host_python_agree"]) == n
    assert s["records_sha256"] == differential.sha256(data)


def test_recorded_device_digests_match_python_now(differential_run: dict[str, object]) -> None:
    """The recorded device digests equal the Python API's answers now, when the header is the one
    recorded (a table change that renumbers codes needs a new GPU run: skipped, saying so)."""
    s = _summary()
    if s["header_sha256"] != differential.sha256(cpp_header.header().encode()):
        pytest.skip("the recorded GPU run used another header: rerun tests/device/header_validators/run.sh")
    device = array("I")
    device.frombytes((RECORDED / "device_digests.bin").read_bytes())
    assert differential.sha256(device.tobytes()) == s["device_digests_sha256"]
    assert device == differential_run["python"]


@needs_gxx
def test_readme_example_compiles(build: Path) -> None:
    """The README's C++ example (the block that includes the header) compiles, strict, and its
    static_assert holds."""
    readme = (HERE.parent / "README.md").read_text(encoding="utf-8")
    examples = [b for b in re.findall(r"```cpp\n(.*?)```", readme, flags=re.S) if cpp_header.FILE_NAME in b]
    assert examples
    for i, code in enumerate(examples):
        src = build / f"readme_{i}.cpp"
        src.write_text(code)
        _cc([GXX, *STRICT, f"-I{build}", "-c", str(src), "-o", str(build / f"readme_{i}.o")], build)


def test_header_alone_writes_the_cpp_header() -> None:
    """``descgen header`` with no option: --lang has one choice, cpp, and it is the default."""
    from click.testing import CliRunner

    from descgen.cli import cli

    result = CliRunner().invoke(cli, ["header"])
    assert result.exit_code == 0, result.output
    assert result.output == cpp_header.header()
    assert "[default: cpp]" in CliRunner().invoke(cli, ["header", "--help"]).output


def test_cli_writes_the_header(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from descgen.cli import cli

    out = tmp_path / "h.hpp"
    result = CliRunner().invoke(cli, ["header", "--lang", "cpp", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text() == cpp_header.header()
    result = CliRunner().invoke(cli, ["header", "--lang", "cpp"])
    assert result.exit_code == 0 and result.output == cpp_header.header()
    assert CliRunner().invoke(cli, ["header", "--lang", "rust"]).exit_code == 2
