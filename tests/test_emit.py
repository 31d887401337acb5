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
from descgen.emitters import FORMATS

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
        "zcm_example1": descgen.validate_zcm(descgen.encode_zcm(start_count=(1, 3, 5, 7), skip_span=1, use_span=13), m=32, n=64),
        "taddr_w1": descgen.validate_taddr(descgen.encode_taddr(32, 16), warp=1),
        "bare64": 0xFFFF_FFFF_FFFF_FFFF,
    }


def _value(thing: object) -> int:
    return int(thing) if isinstance(thing, int) else int(next(iter(thing.decoded.values())).word) if hasattr(thing, "decoded") else int(thing.word)


def _expected() -> dict[str, int]:
    return {name: _value(thing) for name, thing in _words().items()}


# ---------------------------------------------------------------------------------------------
# Concrete output.


def test_each_format_writes_the_word_under_its_default_name():
    d = descgen.decode_idesc(F16, "f16")
    assert descgen.emit(d) == "0x08400010"
    assert descgen.emit(d, "c").splitlines()[-1] == "#define IDESC UINT32_C(0x08400010)"
    assert descgen.emit(d, "cpp").splitlines()[-1] == "constexpr std::uint32_t idesc = 0x08400010u;"
    assert descgen.emit(d, "ptx").splitlines()[-1] == "mov.b32 %idesc, 0x08400010;"
    assert descgen.emit(d, "python").splitlines()[-1] == "IDESC = 0x08400010"
    assert json.loads(descgen.emit(d, "json")) == {"name": "idesc", **d.as_dict()}
    smem = descgen.decode_smem(0xC000401000010800)
    assert descgen.emit(smem, "cpp").splitlines()[-1] == "constexpr std::uint64_t smem_desc = 0xc000401000010800ull;"
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
    report = descgen.check_mma(idesc=0x08200010, kind="f16", a_desc=0x4000404000010040, b_desc=0x4000404000010440 | 1 << 14)
    text = descgen.emit(report, "python")
    names = [line.split(" = ")[0] for line in text.splitlines() if not line.startswith("#") and line]
    assert names == ["IDESC", "A_DESC", "B_DESC"]
    b_block = text.split("A_DESC = ")[1]
    assert "SMEM-RESERVED-14" in b_block and "SMEM-RESERVED-14" not in text.split("A_DESC = ")[0]


def test_tile_descriptor_comment_carries_the_reasoning():
    text = descgen.emit(descgen.smem_for_tile(mn=64, k=16, dtype="bf16", major="mn", swizzle="64B", start_address=0x400), "cpp")
    assert "// tile 64x16 bf16 MN-major, swizzle 64B, start address 0x400" in text
    assert "// LBO 512 B:" in text and "// SBO 1024 B:" in text
    assert text.splitlines()[-1] == "constexpr std::uint64_t smem_desc = 0x8000404000200040ull;"


def test_int_input_is_decoded_when_told_what_it_is():
    assert descgen.emit(F16, "python", descriptor="idesc", kind="f16") == descgen.emit(descgen.decode_idesc(F16, "f16"), "python")
    bare = descgen.emit(F16, "python")
    assert "32-bit word 0x08400010 (no descriptor given: fields not decoded)" in bare and bare.endswith("WORD = 0x08400010")
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
    _compile("gcc", f"{header}\n{asserts}\n", ".c", ["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fsyntax-only"], tmp_path)


def test_c_header_also_compiles_as_cpp(tmp_path):
    header = descgen.emit(_words(), "c")
    asserts = "\n".join(f'static_assert({name} == {value:#x}ULL, "{name}");' for name, value in _expected().items())
    _compile("g++", f"{header}\n{asserts}\n", ".cpp", ["-std=c++11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fsyntax-only"], tmp_path)


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
    things = {f"w{i}_{kind}": descgen.decode_idesc(rng.getrandbits(32), kind) for i in range(8) for kind in descgen.KINDS}
    header = descgen.emit(things, "c")
    asserts = "\n".join(f'_Static_assert({name} == {d.word:#x}u, "{name}");' for name, d in things.items())
    _compile("gcc", f"{header}\n{asserts}\n", ".c", ["-std=c11", "-Wall", "-Werror", "-fsyntax-only"], tmp_path)


# ---------------------------------------------------------------------------------------------
# The CLI: --format and --name on every command that produces a word.


@pytest.mark.parametrize("argv, last", [
    (["idesc", "--kind", "f16", "--m", "128", "--n", "256", "--format", "c"], "#define IDESC UINT32_C(0x08400010)"),
    (["idesc", "--kind", "f16", "--m", "128", "--n", "256", "--format", "ptx", "--name", "r_idesc"], "mov.b32 %r_idesc, 0x08400010;"),
    (["smem", "--start-address", "0x8000", "--lbo", "16", "--sbo", "256", "--swizzle", "32B", "--format", "cpp"],
     "constexpr std::uint64_t smem_desc = 0xc000401000010800ull;"),
    (["smem", "--tile", "64x16", "--dtype", "bf16", "--major", "mn", "--swizzle", "64B", "--addr", "0x400", "--format", "python"],
     "SMEM_DESC = 0x8000404000200040"),
    (["zcm", "--start-count", "1,3,5,7", "--skip-span", "1", "--use-span", "13", "--m", "32", "--n", "64", "--format", "python",
      "--name", "zcm1"], "zcm1 = 0x000c008007050301"),
    (["idesc", "--kind", "f16", "--m", "128", "--n", "256", "--format", "hex"], "0x08400010"),
    (["taddr", "--lane", "32", "--column", "16", "--warp", "1", "--format", "cpp"], "constexpr std::uint32_t taddr = 0x00200010u;"),
])
def test_cli_format_prints_the_emitted_code(argv, last):
    code, out, err = run(argv)
    assert code == 0, err
    assert out.rstrip("\n").splitlines()[-1] == last
    if "--format" in argv and argv[argv.index("--format") + 1] not in ("hex",):
        assert "generated by descgen" in out and " ".join(argv[:3]) in out  # the command line that made it


def test_taddr_comment_names_the_lane_column_and_the_warp_that_may_access_it():
    code, out, _ = run(["taddr", "--lane", "70", "--column", "8", "--format", "python"])
    assert code == 0 and out.rstrip().endswith("TADDR = 0x00460008")
    assert "lane " in out and "= 70" in out and "= 8 columns" in out
    assert "tcgen05.ld/st may access lane 70 from: warp 2 (lanes 64-95)" in out
    assert descgen.emit(0x00460008, "python", descriptor="taddr") == descgen.emit(descgen.decode_taddr(0x00460008), "python")


def test_cli_zcm_format_comment_holds_the_mask():
    code, out, _ = run(["zcm", "--start-count", "1,3,5,7", "--skip-span", "1", "--use-span", "13", "--m", "32", "--n", "64",
                        "--format", "c"])
    assert code == 0 and " * mask=0x0040010004001000" in out


def test_cli_format_json_is_the_json_envelope():
    argv = ["idesc", "--kind", "f16", "--m", "128", "--n", "256"]
    assert run([*argv, "--format", "json"])[1] == run([*argv, "--json"])[1]


def test_cli_format_output_compiles(tmp_path):
    code, out, _ = run(["idesc", "--kind", "mxf8f6f4", "--m", "128", "--n", "128", "--cta-group", "1", "--format", "cpp"])
    assert code == 0
    _compile("g++", out + 'static_assert(idesc != 0, "");\n', ".cpp", ["-std=c++17", "-Wall", "-Werror", "-fsyntax-only"], tmp_path)


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
    assert code == 0 and got[0] == "#include <stdint.h>"
    position = 0
    for line in sample:
        if line.strip() in ("*   ...", "..."):
            continue
        head = line[:-3] if line.endswith("...") else line
        matches = [i for i in range(position, len(got)) if got[i] == line or (line.endswith("...") and got[i].startswith(head))]
        assert matches, line
        position = matches[0] + 1


def test_one_word_report_findings_are_in_its_comment():
    report = descgen.validate_smem(0x4000404000010040 | 1 << 14, pattern_start=0x400)
    text = descgen.emit(report, "python")
    assert "SMEM-RESERVED-14" in text and "checked with pattern_start=1024" in text
    assert json.loads(descgen.emit(report, "json"))["ok"] is False
