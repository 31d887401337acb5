"""descgen.emit and ``--format``: every emitter's output compiles or parses in its language
(gcc for C, g++ for C++, ptxas -arch=sm_100a for PTX, ast.parse for Python) and holds the word.

The words come from the spec: Table 42's f16 example (M = 128, N = 256 -> 0x08400010), the
§9.7.16.3.3 worked example tiles through smem_for_tile, the Table 45 worked example 1, a word with
reserved bits set (its findings go into the comment), and hypothesis' random 64-bit words.
"""

from __future__ import annotations

import ast
import json
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import descgen
import descgen.codes
from descgen.backends.emitters import FORMATS

from test_cli import run as _run


def run(argv: list[str]) -> tuple[int, str, str]:
    result = _run(*argv, code=None)
    return result.exit_code, result.stdout, result.stderr

F16 = 0x08400010  # Table 42: .kind::f16, M = 128, N = 256, f16 x f16 -> f32, K-major


def _words() -> dict[str, object]:
    """Named things to emit, covering every descriptor, findings, a multi-word check and a tile."""
    tile = descgen.smem_for_tile(mn=64, k=16, dtype="bf16", major="mn", swizzle="64B", start_address=0x400)
    return {
        "idesc_f16": descgen.decode_idesc(F16, "f16"),
        "idesc_mxf4nvf4": descgen.validate_idesc(
            descgen.encode_idesc("mxf4nvf4", m=128, n=256, scale_vec="4X"), "mxf4nvf4", scale_vec="4X"),
        "idesc_reserved": descgen.decode_idesc(F16 | 1 << 23 | 1 << 29, "f16"),  # two error findings
        "smem_32b": descgen.decode_smem(0xC000401000010800),  # bit 63 set: above the signed range
        "smem_tile": tile,
        "zcm_example1": descgen.validate_zcm(descgen.encode_zcm(start_count=(1, 3, 5, 7), skip_span=1, use_span=13),
                                             m=32, n=64),
        "taddr_w1": descgen.validate_taddr(descgen.encode_taddr(32, 16), warp=1),
        "bare64": 0xFFFF_FFFF_FFFF_FFFF,
    }


def _value(thing: object) -> int:
    return int(thing) if isinstance(thing, int) else \
        int(next(iter(thing.decoded.values())).word) if hasattr(thing, "decoded") else int(thing.word)


def _expected() -> dict[str, int]:
    return {name: _value(thing) for name, thing in _words().items()}


# ---------------------------------------------------------------------------------------------
# Concrete output.


def _last(text: str) -> str:
    """The text's last line; for C and C++, the last line inside the include guard."""
    lines = text.rstrip("\n").splitlines()
    return lines[-3] if lines[-1].startswith("#endif") else lines[-1]


def test_each_format_writes_the_word_under_its_default_name():
    d = descgen.decode_idesc(F16, "f16")
    assert descgen.emit(d) == "0x08400010"
    assert _last(descgen.emit(d, "c")) == "#define IDESC UINT32_C(0x08400010)"
    assert _last(descgen.emit(d, "cpp")) == "constexpr std::uint32_t idesc = 0x08400010u;"
    assert descgen.emit(d, "ptx").splitlines()[-1] == "mov.b32 %idesc, 0x08400010;"
    assert descgen.emit(d, "python").splitlines()[-1] == "IDESC = 0x08400010"
    assert json.loads(descgen.emit(d, "json")) == {"name": "idesc", **d.as_dict()}
    smem = descgen.decode_smem(0xC000401000010800)
    assert _last(descgen.emit(smem, "cpp")) == "constexpr std::uint64_t smem_desc = 0xc000401000010800ull;"
    assert descgen.emit(smem, "ptx", name="rd_b").splitlines()[-1] == "mov.b64 %rd_b, 0xc000401000010800;"


def test_comment_lists_fields_with_bits_and_units_derived_values_and_findings():
    text = descgen.emit(descgen.decode_idesc(F16, "f16"), "python")
    assert text.splitlines()[0] == ("# tcgen05 instruction descriptor .kind::f16, 0x08400010 (32-bit), "
                                    "PTX ISA 9.1 sec. 9.7.16.4.2, Table 42")
    assert "#   bits 17-22 n                 = 256 columns" in text
    assert "#   bits 24-28 m                 = 128 rows" in text
    assert "#   bits 7-9   atype             = f16" in text
    assert "#   derived    k                 = 16 elements" in text
    assert "# findings: none" in text
    bad = descgen.emit(descgen.decode_idesc(F16 | 1 << 23, "f16"), "c")
    assert " * error IDESC-RESERVED-23" in bad and "bit  23    reserved_23" in bad  # a set reserved bit is shown
    smem = descgen.emit(descgen.decode_smem(0xC000401000010800), "c")
    assert "bits 0-13  start_address    = 32768 bytes (0x8000)" in smem and "swizzle          = 32B" in smem


def test_check_mma_report_writes_one_constant_per_word_with_its_own_findings():
    report = descgen.check_mma(idesc=0x08200010, kind="f16", a_desc=0x4000404000010040,
                               b_desc=0x4000404000010440 | 1 << 14)
    text = descgen.emit(report, "python")
    names = [line.split(" = ")[0] for line in text.splitlines() if not line.startswith("#") and line]
    assert names == ["IDESC", "A_DESC", "B_DESC"]
    b_block = text.split("A_DESC = ")[1]
    assert "SMEM-RESERVED-14" in b_block and "SMEM-RESERVED-14" not in text.split("A_DESC = ")[0]


def test_tile_descriptor_comment_carries_the_reasoning():
    text = descgen.emit(descgen.smem_for_tile(mn=64, k=16, dtype="bf16", major="mn", swizzle="64B",
                                              start_address=0x400), "cpp")
    assert "// tile 64x16 bf16 MN-major, swizzle 64B, start address 0x400" in text
    assert "// LBO 512 B:" in text and "// SBO 1024 B:" in text
    assert _last(text) == "constexpr std::uint64_t smem_desc = 0x8000404000200040ull;"


def test_int_input_is_decoded_when_told_what_it_is():
    assert (descgen.emit(F16, "python", descriptor="idesc", kind="f16")
            == descgen.emit(descgen.decode_idesc(F16, "f16"), "python"))
    bare = descgen.emit(F16, "python")
    assert ("32-bit word 0x08400010 (no descriptor given: fields not decoded)" in bare
            and bare.endswith("WORD = 0x08400010"))
    assert descgen.emit(1 << 40, "hex") == "0x0000010000000000"
    assert descgen.emit({"a": 1, "b": descgen.decode_zcm(0)}, "hex") == "a=0x00000001\nb=0x0000000000000000"


@pytest.mark.parametrize("call, code", [
    (lambda: descgen.emit(F16, "rust"), "EMIT-FORMAT"),
    (lambda: descgen.emit(F16, "c", name="int"), "EMIT-NAME"),
    (lambda: descgen.emit(F16, "cpp", name="class"), "EMIT-NAME"),
    (lambda: descgen.emit(F16, "python", name="def"), "EMIT-NAME"),
    (lambda: descgen.emit(F16, "ptx", name="a-b"), "EMIT-NAME"),
    (lambda: descgen.emit(F16, "c", name="has space"), "EMIT-NAME"),
    (lambda: descgen.emit([F16, F16], "c", name="x"), "EMIT-NAME"),
    (lambda: descgen.emit(F16, "c", descriptor="idesc"), "EMIT-KIND"),
    (lambda: descgen.emit(F16, "c", descriptor="tmem"), "EMIT-DESCRIPTOR"),
    (lambda: descgen.emit(-1, "c"), "EMIT-WORD"),
    (lambda: descgen.emit(1 << 64, "c"), "EMIT-WORD"),
    (lambda: descgen.emit("0x08400010", "c"), "EMIT-INPUT"),
    (lambda: descgen.emit(True, "c"), "EMIT-INPUT"),
])
def test_bad_calls_raise_usage_errors_naming_the_rule(call, code):
    with pytest.raises(descgen.UsageError) as e:
        call()
    assert e.value.code == code and code in descgen.codes.usage_codes()
    assert "allowed:" in str(e.value)


def test_comments_are_ascii_and_cannot_end_early():
    notes = ["a */ inside", "ends in a backslash \\", "§ × – ≤"]
    for fmt in ("c", "cpp", "ptx", "python"):
        text = descgen.emit(descgen.decode_idesc(F16, "f16"), fmt, notes=notes)
        text.encode("ascii")
        assert "sec. x - <=" in text
    assert "*/ inside" not in descgen.emit(F16, "c", notes=notes)


# ---------------------------------------------------------------------------------------------
# Each format in its own language.


def _need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.skip(f"{tool} is not on PATH: this test compiles the emitted code with it (CI has it)")
    return path


def _compile(tool: str, source: str, suffix: str, args: list[str], tmp_path: Path) -> None:
    path = tmp_path / f"emitted{suffix}"
    path.write_text(source)
    result = subprocess.run([_need(tool), *args, str(path)], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr + "\n" + source


def test_c_header_compiles_and_holds_each_word(tmp_path):
    header = descgen.emit(_words(), "c")
    asserts = "\n".join(f'_Static_assert({name} == {value:#x}ULL, "{name}");' for name, value in _expected().items())
    _compile("gcc", f"{header}\n{asserts}\n", ".c",
             ["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fsyntax-only"], tmp_path)


def test_c_header_also_compiles_as_cpp(tmp_path):
    header = descgen.emit(_words(), "c")
    asserts = "\n".join(f'static_assert({name} == {value:#x}ULL, "{name}");' for name, value in _expected().items())
    _compile("g++", f"{header}\n{asserts}\n", ".cpp",
             ["-std=c++11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fsyntax-only"], tmp_path)


@pytest.mark.parametrize("std", ["c++11", "c++17"])
def test_cpp_header_compiles_with_the_right_types_and_values(std, tmp_path):
    header = descgen.emit(_words(), "cpp")
    checks = []
    for name, thing in _words().items():
        width = 32 if _value(thing) < 1 << 32 and name != "bare64" else 64
        checks.append(f'static_assert({name} == {_value(thing):#x}ULL, "{name}");')
        checks.append(f'static_assert(sizeof({name}) == {width // 8}, "{name} width");')
    _compile("g++", header + "\n" + "\n".join(checks) + "\n", ".cpp",
             [f"-std={std}", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fsyntax-only"], tmp_path)


# ---------------------------------------------------------------------------------------------
# Include guards, and the standard each C and C++ form says it needs.


def _halves(words: dict[str, int]) -> str:
    """Lines that compile only if each word is defined with its value, in C89 and C++03 too (no
    64-bit literal, no static assertion): its two 32-bit halves as array sizes."""
    out = []
    for name, value in words.items():
        out.append(f"typedef char check_{name}[({name} >> 16 >> 16) == {value >> 32:#x}UL && "
                   f"({name} & 0xFFFFFFFFUL) == {value & 0xFFFF_FFFF:#x}UL ? 1 : -1];")
    return "\n".join(out) + "\n"


def test_c_and_cpp_forms_are_guarded_by_their_content():
    """A first line saying the standard, then a guard named after the names and a digest of the
    code: the same code (another command line in the comment) is the same guard, another word or
    the other language another guard."""
    from standards import stated

    d = descgen.decode_idesc(F16, "f16")
    for fmt, ext, std in (("c", "H", ("c99", "c++11")), ("cpp", "HPP", ("c++11", None))):
        text = descgen.emit(_words(), fmt)
        lines = text.splitlines()
        macro = lines[1].split()[1]
        assert stated(text) == std and lines[0].startswith(("/* needs ", "// needs "))
        assert lines[1:4] == [f"#ifndef {macro}", f"#define {macro}", ""]
        assert lines[-1] == (f"#endif /* {macro} */" if fmt == "c" else f"#endif  // {macro}")
        assert macro.startswith("DESCGEN_IDESC_F16_IDESC_MXF4NVF4_") and macro.endswith(f"_{ext}") and len(macro) <= 63
        one = descgen.emit(d, fmt).splitlines()[1]
        assert one == descgen.emit(d, fmt, source="descgen idesc ...", notes=("another comment",)).splitlines()[1]
        assert one != descgen.emit(descgen.decode_idesc(F16 | 1 << 31, "f16"), fmt).splitlines()[1]
        assert one != descgen.emit(d, fmt, name="other").splitlines()[1]
        assert one.split("_")[1] == "IDESC"
    assert descgen.emit(d, "c").splitlines()[1] != descgen.emit(d, "cpp").splitlines()[1]
    assert not descgen.emit(d, "python").startswith("#ifndef") and "#endif" not in descgen.emit(d, "ptx")


@pytest.mark.parametrize("fmt, tool, suffix", [("c", "gcc", ".c"), ("c", "g++", ".cpp"), ("cpp", "g++", ".cpp")])
def test_each_output_included_twice_compiles_at_the_standard_it_states(fmt, tool, suffix, tmp_path):
    """All the words, then one more under another name, each included twice, and a copy of the
    first file under another file name (the same guard): one translation unit, compiled at the
    standard the output states (C: C99; C compiled as C++: C++11; C++: C++11), each word its value."""
    from standards import compile_at, stated

    ext = ".h" if fmt == "c" else ".hpp"
    text = descgen.emit(_words(), fmt)
    (tmp_path / f"words{ext}").write_text(text)
    (tmp_path / f"copy{ext}").write_text(text)
    (tmp_path / f"other{ext}").write_text(descgen.emit(descgen.decode_smem(0x4000404000010040), fmt, name="OTHER"))
    c_std, as_cpp = stated(text)
    std = as_cpp if fmt == "c" and tool == "g++" else c_std
    tu = "".join(f'#include "{f}{ext}"\n' for f in ("words", "other", "words", "copy", "other"))
    words = {**_expected(), "OTHER": 0x4000404000010040}
    r = compile_at(tool, std, tu + _halves(words), f"tu{suffix}", tmp_path)
    assert r.returncode == 0, r.stderr


def test_c_form_needs_c99_and_cpp11(tmp_path):
    """The C form states C99 (C++11 compiled as C++): <stdint.h> and UINT64_C are C99's. On LP64
    glibc, gcc -std=c89 -pedantic takes it (its <stdint.h> serves every mode and UINT64_C writes
    an unsigned long literal); on a 32-bit target against gcc's own <stdint.h> (-m32
    -ffreestanding) a 64-bit word is an unsigned long long literal, which C89 and C++03 refuse and
    C99 and C++11 take (C++03's <stdint.h> has no UINT64_C either)."""
    from standards import below, compile_at, ilp32_freestanding, stated

    if not ilp32_freestanding():
        pytest.skip("gcc cannot compile for -m32 -ffreestanding here")
    text = descgen.emit(_words(), "c")
    (tmp_path / "words.h").write_text(text)
    c_std, cpp_std = stated(text)
    assert (c_std, cpp_std) == ("c99", "c++11")
    for tool, std, suffix in (("gcc", c_std, ".c"), ("g++", cpp_std, ".cpp")):
        tu = '#include "words.h"\n#include "words.h"\n' + _halves(_expected())
        ok = compile_at(tool, std, tu, f"tu{suffix}", tmp_path, "-m32", "-ffreestanding")
        assert ok.returncode == 0, ok.stderr
        refused = compile_at(tool, below(std), tu, f"tu{suffix}", tmp_path, "-m32", "-ffreestanding")
        # (C89: "use of C99 long long integer constant"; C++03: no UINT64_C, a 64-bit literal too large for long)
        assert refused.returncode != 0 and ("long long" in refused.stderr or "UINT64_C" in refused.stderr), \
            refused.stderr


def test_cpp_form_needs_cpp11(tmp_path):
    """The C++ form states C++11 (constexpr, <cstdint>): g++ takes it at C++11, refuses it at C++03."""
    from standards import below, compile_at, stated

    text = descgen.emit(_words(), "cpp")
    (tmp_path / "words.hpp").write_text(text)
    std, _ = stated(text)
    assert std == "c++11"
    tu = '#include "words.hpp"\n#include "words.hpp"\n' + _halves(_expected())
    assert compile_at("g++", std, tu, "tu.cpp", tmp_path).returncode == 0
    assert compile_at("g++", below(std), tu, "tu.cpp", tmp_path).returncode != 0


def test_cpp_form_in_cuda_needs_cpp11(tmp_path):
    """As CUDA (nvcc, sm_90a and sm_100a, warnings as errors), included twice and read in a kernel:
    compiled at C++11, refused at C++03."""
    from standards import below, compile_at, need, stated

    need("nvcc")
    text = descgen.emit(_words(), "cpp")
    (tmp_path / "words.hpp").write_text(text)
    std, _ = stated(text)
    stores = "".join(f"    out[{i}] = {name};\n" for i, name in enumerate(_expected()))
    tu = f'#include "words.hpp"\n#include "words.hpp"\n__global__ void k(unsigned long long* out) {{\n{stores}}}\n'
    gencode = ["-gencode=arch=compute_90a,code=sm_90a", "-gencode=arch=compute_100a,code=sm_100a"]
    r = compile_at("nvcc", std, tu, "k.cu", tmp_path, *gencode)
    assert r.returncode == 0, r.stderr
    assert compile_at("nvcc", below(std), tu, "k.cu", tmp_path, *gencode[1:]).returncode != 0


def _ptx_kernel(body: str, regs: dict[str, int]) -> str:
    decls = "\n".join(f"  .reg .b{width} %{name};" for name, width in regs.items())
    stores = "\n".join(f"  st.global.b{width} [%out+{8 * i}], %{name};" for i, (name, width) in enumerate(regs.items()))
    indented = "\n".join("  " + line if line else "" for line in body.splitlines())
    return (".version 8.7\n.target sm_100a\n.address_size 64\n\n.visible .entry emitted(.param .u64 out_param)\n{\n"
            f"  .reg .b64 %out;\n{decls}\n  ld.param.u64 %out, [out_param];\n{indented}\n{stores}\n  ret;\n}}\n")


def test_ptx_assembles_with_ptxas_sm_100a_and_carries_each_word(tmp_path):
    words = _expected()
    regs = {name: 32 if value < 1 << 32 and name != "bare64" else 64 for name, value in words.items()}
    body = descgen.emit(_words(), "ptx")
    path = tmp_path / "emitted.ptx"
    path.write_text(_ptx_kernel(body, regs))
    result = subprocess.run([_need("ptxas"), "-arch=sm_100a", str(path), "-o", str(tmp_path / "emitted.cubin")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr + "\n" + path.read_text()
    cubin = (tmp_path / "emitted.cubin").read_bytes()
    for name, value in words.items():  # ptxas read the literal as written: its 32-bit halves are in the code
        for half in (value & 0xFFFFFFFF, value >> 32):
            if half > 0xFF and half != 0xFFFFFFFF:  # small values and -1 have short encodings
                assert struct.pack("<I", half) in cubin, (name, hex(half))


def test_python_parses_and_binds_each_word():
    text = descgen.emit(_words(), "python")
    ast.parse(text)
    scope: dict[str, object] = {}
    exec(text, scope)
    assert {k: v for k, v in scope.items() if not k.startswith("__")} == _expected()  # names given: kept as written


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**64 - 1), st.sampled_from(["smem", "zcm"]))
def test_any_word_any_descriptor_parses_as_python_with_its_value(word, descriptor):
    text = descgen.emit(word, "python", descriptor=descriptor, name="W")
    ast.parse(text)
    scope: dict[str, object] = {}
    exec(text, scope)
    assert scope["W"] == word


def test_random_idesc_words_under_every_kind_compile_as_c(tmp_path):
    """Every kind's decode of arbitrary words (reserved bits, unknown codes: findings in the
    comment) still gives a header that compiles, each constant equal to its word."""
    import random

    rng = random.Random(5)
    things = {f"w{i}_{kind}": descgen.decode_idesc(rng.getrandbits(32), kind)
              for i in range(8) for kind in descgen.KINDS}
    header = descgen.emit(things, "c")
    asserts = "\n".join(f'_Static_assert({name} == {d.word:#x}u, "{name}");' for name, d in things.items())
    _compile("gcc", f"{header}\n{asserts}\n", ".c", ["-std=c11", "-Wall", "-Werror", "-fsyntax-only"], tmp_path)


# ---------------------------------------------------------------------------------------------
# The CLI: --format and --name on every command that produces a word.


@pytest.mark.parametrize("argv, last", [
    (["idesc", "--kind", "f16", "--m", "128", "--n", "256", "--format", "c"], "#define IDESC UINT32_C(0x08400010)"),
    (["idesc", "--kind", "f16", "--m", "128", "--n", "256", "--format", "ptx", "--name", "r_idesc"],
     "mov.b32 %r_idesc, 0x08400010;"),
    (["smem", "--start-address", "0x8000", "--lbo", "16", "--sbo", "256", "--swizzle", "32B", "--format", "cpp"],
     "constexpr std::uint64_t smem_desc = 0xc000401000010800ull;"),
    (["smem", "--tile", "64x16", "--dtype", "bf16", "--major", "mn", "--swizzle", "64B", "--addr", "0x400",
      "--format", "python"],
     "SMEM_DESC = 0x8000404000200040"),
    (["zcm", "--start-count", "1,3,5,7", "--skip-span", "1", "--use-span", "13", "--m", "32", "--n", "64",
      "--format", "python", "--name", "zcm1"], "zcm1 = 0x000c008007050301"),
    (["idesc", "--kind", "f16", "--m", "128", "--n", "256", "--format", "hex"], "0x08400010"),
    (["taddr", "--lane", "32", "--column", "16", "--warp", "1", "--format", "cpp"],
     "constexpr std::uint32_t taddr = 0x00200010u;"),
])
def test_cli_format_prints_the_emitted_code(argv, last):
    code, out, err = run(argv)
    assert code == 0, err
    assert _last(out) == last
    if "--format" in argv and argv[argv.index("--format") + 1] not in ("hex",):
        assert "generated by descgen" in out and " ".join(argv[:3]) in out  # the command line that made it


def test_taddr_comment_names_the_lane_column_and_the_warp_that_may_access_it():
    code, out, _ = run(["taddr", "--lane", "70", "--column", "8", "--format", "python"])
    assert code == 0 and out.rstrip().endswith("TADDR = 0x00460008")
    assert "lane " in out and "= 70" in out and "= 8 columns" in out
    assert "tcgen05.ld/st may access lane 70 from: warp 2 (lanes 64-95)" in out
    assert (descgen.emit(0x00460008, "python", descriptor="taddr")
            == descgen.emit(descgen.decode_taddr(0x00460008), "python"))


def test_cli_zcm_format_comment_holds_the_mask():
    code, out, _ = run(["zcm", "--start-count", "1,3,5,7", "--skip-span", "1", "--use-span", "13", "--m", "32",
                        "--n", "64", "--format", "c"])
    assert code == 0 and " * mask=0x0040010004001000" in out


def test_cli_format_json_is_the_json_envelope():
    argv = ["idesc", "--kind", "f16", "--m", "128", "--n", "256"]
    assert run([*argv, "--format", "json"])[1] == run([*argv, "--json"])[1]


def test_cli_format_output_compiles(tmp_path):
    code, out, _ = run(["idesc", "--kind", "mxf8f6f4", "--m", "128", "--n", "128", "--cta-group", "1",
                        "--format", "cpp"])
    assert code == 0
    _compile("g++", out + 'static_assert(idesc != 0, "");\n', ".cpp",
             ["-std=c++17", "-Wall", "-Werror", "-fsyntax-only"], tmp_path)


@pytest.mark.parametrize("argv, message", [
    (["--format", "c", "--json"], "mutually exclusive"),
    (["--format", "c", "--table"], "mutually exclusive"),
    (["--name", "x"], "--name names the constant"),
    (["--format", "hex", "--name", "x"], "--name names the constant"),
    (["--format", "c", "--name", "int"], "EMIT-NAME"),
    (["--format", "rust"], "'rust' is not one of"),
])
def test_cli_format_usage_errors_exit_2(argv, message):
    code, out, err = run(["idesc", "--kind", "f16", "--m", "128", "--n", "256", *argv])
    assert code == 2 and message in err
    assert out == "" if "--json" not in argv else json.loads(out)["error"]["type"] == "UsageError"


def test_cli_format_on_a_refused_encode_exits_1_and_prints_no_code():
    code, out, err = run(["idesc", "--kind", "f16", "--m", "128", "--n", "7", "--format", "c"])
    assert code == 1 and out == "" and "IDESC-N" in err


def test_every_format_is_offered():
    assert FORMATS == descgen.FORMATS == ("hex", "json", "c", "cpp", "ptx", "python")


def test_readme_c_sample_is_what_the_command_prints():
    """The README's C sample, line by line ('...' elides lines; a trailing '...' a line's tail)."""
    import re

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    sample = re.search(r"```c\n(.*?)```", readme, flags=re.S).group(1).splitlines()
    code, out, _ = run(["idesc", "--kind", "f16", "--m", "128", "--n", "256", "--cta-group", "1", "--format", "c",
                        "--name", "IDESC_F16_128x256"])
    got = out.splitlines()
    assert code == 0 and got[0].startswith("/* needs C99 or later")
    assert got[1].startswith("#ifndef DESCGEN_IDESC_F16_128X256_")
    assert got[-1] == "#endif /* " + got[1].split()[1] + " */"
    position = 0
    for line in sample:
        if line.strip() in ("*   ...", "..."):
            continue
        head = line[:-3] if line.endswith("...") else line
        matches = [i for i in range(position, len(got))
                   if got[i] == line or (line.endswith("...") and got[i].startswith(head))]
        assert matches, line
        position = matches[0] + 1


def test_one_word_report_findings_are_in_its_comment():
    report = descgen.validate_smem(0x4000404000010040 | 1 << 14, pattern_start=0x400)
    text = descgen.emit(report, "python")
    assert "SMEM-RESERVED-14" in text and "checked with pattern_start=1024" in text
    assert json.loads(descgen.emit(report, "json"))["ok"] is False
