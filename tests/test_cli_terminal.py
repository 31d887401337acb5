"""The terminal a kernel engineer lives in. Pasted integers, 80 columns, short first
answers and pagers, one spelling rule for CLI and API, one finding block, LICENSE (test_packaging)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import descgen
from descgen.cli import cli


def _runner() -> CliRunner:
    try:  # click < 8.2 mixes stderr into stdout unless told not to
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:
        return CliRunner()


def run(*args: str, code: int | None = 0, env: dict[str, str] | None = None):
    result = _runner().invoke(cli, list(args), env=env)
    assert "Traceback" not in result.stdout and "Traceback" not in result.stderr, (result.stdout, result.stderr)
    if code is not None:
        assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    return result


# --------------------------------------------------------------------------------------------
# 1. Integers as people paste them.


@pytest.mark.parametrize("text, value", [
    ("0x08400010u", 0x08400010), ("0x08400010U", 0x08400010), ("0x4000404000010040ull", 0x4000404000010040),
    ("0x4000404000010040ULL", 0x4000404000010040), ("138412048ul", 0x08400010), ("138412048lu", 0x08400010),
    ("138412048llu", 0x08400010), ("138412048L", 0x08400010), ("0b1000u", 8), ("0x0840_0010u", 0x08400010),
])
def test_c_suffixes_are_accepted_without_a_note(text: str, value: int) -> None:
    result = run("decode", text, "--as", "smem", "--json", code=None)
    assert json.loads(result.stdout)["input"]["word"] == f"{value:#018x}"
    assert result.stderr == ""


def test_c_suffix_on_an_encoder_option() -> None:
    assert run("smem", "--start-address", "0x400u", "--lbo", "16ul", "--sbo", "1024ULL", "--swizzle", "128B").stdout \
        == "0x4000404000010040\n"


def test_the_format_cpp_literal_decodes_back() -> None:
    """descgen's own --format cpp writes 0x...u / 0x...ull: pasting it back decodes it."""
    code = run("idesc", "--kind", "f16", "--m", "128", "--n", "256", "--format", "cpp").stdout
    literal = code.rsplit("= ", 1)[1].split(";")[0]  # (the include guard's #endif follows)
    assert literal == "0x08400010u"
    assert "n=256" in run("decode", literal, "--kind", "f16").stdout.splitlines()


@pytest.mark.parametrize("text, decimal", [("0400", 400), ("084000100", 84000100), ("0840001000", 840001000)])
def test_decimal_that_looks_like_pasted_hex_gets_a_note(text: str, decimal: int) -> None:
    result = run("decode", text, "--as", "smem", "--json", code=None)
    assert json.loads(result.stdout)["input"]["word"] == f"{decimal:#018x}"
    assert result.stderr.strip() == f"note: {text!r} read as decimal {decimal} ({decimal:#x}); did you mean 0x{text}?"


@pytest.mark.parametrize("text, value", [("08400010", 0x08400010), ("0840001000000000", 0x0840001000000000),
                                         ("00000000", 0), ("0840_0010", 0x08400010), ("08400010u", 0x08400010),
                                         ("10400010", 0x10400010), ("12345678", 0x12345678),
                                         ("4000404000010040", 0x4000404000010040)])
def test_8_or_16_digits_are_hex_with_a_note(text: str, value: int) -> None:
    """What cuda-gdb, printf("%08x") and %016llx print is hex, zero-padded or not: 10400010 (an M = 256
    idesc) is not the decimal 10400010, and 4000404000010040 (an smem word) not a 16-digit decimal."""
    result = run("decode", text, "--as", "smem", "--json", code=None)
    assert json.loads(result.stdout)["input"]["word"] == f"{value:#018x}"
    digits = text.lower().removesuffix("u").replace("_", "")
    assert result.stderr.strip() == (f"note: {text!r} read as hex 0x{digits} ({len(digits)} digits, a word as printf "
                                     f"and debuggers print it; for the decimal {int(digits)}, write {int(digits):#x})")


def test_an_m256_idesc_printed_with_08x_decodes_as_m256() -> None:
    """printf("%08x") of the f16 M = 256, N = 256 idesc has no leading zero: still the hex word."""
    assert run("idesc", "--kind", "f16", "--m", "256", "--n", "256").stdout.strip() == "0x10400010"
    decoded = run("decode", "10400010", "--kind", "f16").stdout.splitlines()
    assert "word=0x10400010" in decoded and "m=256" in decoded


def test_pasted_idesc_and_runtime_words_decode_as_meant() -> None:
    idesc = run("decode", "08400010", "--kind", "f16")
    assert "word=0x08400010" in idesc.stdout.splitlines() and "n=256" in idesc.stdout.splitlines()
    runtime = run("decode", "0840001000000000", "--as", "idesc", "--kind", "f16")
    assert "runtime.idesc=0x08400010" in runtime.stdout.splitlines() and "n=256" in runtime.stdout.splitlines()


def test_plain_decimal_words_get_no_note() -> None:
    result = run("decode", "138412048", "--kind", "f16")
    assert result.stderr == "" and "word=0x08400010" in result.stdout


@pytest.mark.parametrize("text, value", [("08400a10", 0x08400A10), ("c000401000010800", 0xC000401000010800),
                                         ("C000401000010800ull", 0xC000401000010800)])
def test_hex_digits_that_are_no_decimal_are_read_as_hex_with_a_note(text: str, value: int) -> None:
    result = run("decode", text, "--as", "smem", "--json", code=None)
    assert json.loads(result.stdout)["input"]["word"] == f"{value:#018x}"
    shown = text.lower().removesuffix("ull")
    assert result.stderr.strip() == f"note: {text!r} is not a decimal number: read as hex 0x{shown}"


def test_bare_hex_smem_word_decodes_as_the_0x_word() -> None:
    plain = run("decode", "c000401000010800", "--as", "smem").stdout.splitlines()
    assert "start_address=32768" in plain and "swizzle=32B" in plain


def test_hex_digits_for_a_non_word_integer_are_an_error_with_a_hint() -> None:
    result = run("idesc", "--kind", "f16", "--m", "128", "--n", "1a0", code=2)
    assert "'1a0' is not an integer" in result.stderr and "did you mean 0x1a0?" in result.stderr


@pytest.mark.parametrize("text", ["-5", "-0x10", "-08400a10", "-5u"])
def test_negative_words_are_rejected_naming_why(text: str) -> None:
    result = run("decode", "--as", "smem", "--", text, code=2)
    assert f"{text!r} is negative; descriptor values are unsigned" in result.stderr


@pytest.mark.parametrize("text", ["u", "0xu", "5uu", "0x12g", "+5", "12 34"])
def test_malformed_integers_stay_usage_errors(text: str) -> None:
    result = run("decode", "--as", "smem", "--", text, code=2)
    assert "not an" in result.stderr and result.stdout == ""


# --------------------------------------------------------------------------------------------
# 4. One spelling rule: names are case-insensitive in the API and the CLI alike.


def test_api_enum_names_are_case_insensitive() -> None:
    assert descgen.encode_smem(start_address=0x400, lbo=16, sbo=1024, swizzle="128b") == 0x4000404000010040
    assert descgen.encode_smem(start_address=0x400, lbo=16, sbo=1024, swizzle="NONE") == \
        descgen.encode_smem(start_address=0x400, lbo=16, sbo=1024, swizzle="none")
    same = descgen.encode_idesc("f16", 128, 256, atype="bf16", btype="bf16", dtype="f32", a_major="k", b_major="mn")
    assert descgen.encode_idesc("F16", 128, 256, atype="BF16", btype="Bf16", dtype="F32", a_major="K",
                                b_major="MN") == same
    assert descgen.encode_idesc("mxf4nvf4", 128, 256, scale_type="UE8M0", scale_vec="2X") == \
        descgen.encode_idesc("mxf4nvf4", 128, 256, scale_type="ue8m0", scale_vec="2X")
    assert descgen.encode_zcm(start_count=(0, 0, 0, 0), skip_span=1, use_span=1) >= 0  # no enum: unchanged


def test_api_rules_see_the_tables_spelling() -> None:
    """The rules that run after the fields read the canonical name: absolute LBO mode with 128B
    swizzling passes whatever the case, with 64B it still breaks SMEM-LBO-MODE-SWIZZLE."""
    args = dict(start_address=0x400, lbo=0x400, sbo=1024, lbo_mode="ABSOLUTE", arch="sm_103a")
    assert descgen.encode_smem(swizzle="128b", **args) == descgen.encode_smem(swizzle="128B",
                                                                              **{**args, "lbo_mode": "absolute"})
    with pytest.raises(descgen.EncodeError) as err:
        descgen.encode_smem(swizzle="64b", **args)
    assert err.value.code == "SMEM-LBO-MODE-SWIZZLE"


def test_api_unknown_names_still_raise() -> None:
    with pytest.raises(descgen.EncodeError) as err:
        descgen.encode_idesc("f16", 128, 256, a_major="Kx")
    assert err.value.code == "IDESC-A-MAJOR-CODE"
    with pytest.raises(descgen.EncodeError) as err:
        descgen.encode_smem(start_address=0x400, lbo=16, sbo=1024, swizzle="128x")
    assert err.value.code == "SMEM-SWIZZLE-CODE"


def test_batch_takes_the_api_spelling_rule() -> None:
    line = json.dumps({"op": "encode", "descriptor": "smem", "start_address": 1024, "lbo": 16, "sbo": 1024,
                       "swizzle": "128b"})
    answer = json.loads(_runner().invoke(cli, ["batch", "-"], input=line).stdout)
    assert answer["ok"] and answer["word"] == "0x4000404000010040"


def test_cli_passes_encoder_names_through_to_the_api() -> None:
    """The CLI checks the name (exit 2 for an unknown one) and hands it on as typed: the API is
    the one place that folds case."""
    doc = json.loads(run("idesc", "--kind", "F16", "--m", "128", "--n", "256", "--atype", "BF16", "--btype", "bf16",
                         "--a-major", "K", "--b-major", "MN", "--json").stdout)
    assert doc["input"]["atype"] == "BF16" and doc["input"]["a_major"] == "K" and doc["input"]["b_major"] == "MN"
    assert doc["result"]["word"] == \
        f"{descgen.encode_idesc('f16', 128, 256, atype='bf16', btype='bf16', b_major='mn'):#010x}"
    assert run("smem", "--addr", "0x400", "--lbo", "16", "--sbo", "1024",
               "--swizzle", "128b").stdout == "0x4000404000010040\n"
    bad = run("idesc", "--kind", "f16", "--m", "128", "--n", "256", "--atype", "XF16", code=2)
    assert "'XF16' is not one of" in bad.stderr


# --------------------------------------------------------------------------------------------
# 5. One finding block, hex for every word, units that agree with their numbers.


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


def test_encode_error_on_a_terminal_is_the_validate_finding_block() -> None:
    """idesc --m 256 --cta-group 1 breaks IDESC-M-SHAPE: the encoder's error (stderr) shows the
    same block as validate of the word (stdout): rule, allowed and source on their own lines."""
    env = {"COLUMNS": "100", "NO_COLOR": "1"}
    refused = run("idesc", "--kind", "f16", "--m", "256", "--n", "128", "--cta-group", "1", "--table", code=1, env=env)
    assert refused.stdout == ""
    err = _lines(refused.stderr)
    assert err[0] == "Error: idesc, .kind::f16: 1 problem"
    validated = _lines(run("validate", "0x10200010", "--kind", "f16", "--cta-group", "1", "--table", code=1,
                           env=env).stdout)
    block = err[1:]
    assert any("error IDESC-M-SHAPE  m = 256" in line for line in block)
    start = next(i for i, line in enumerate(validated) if "IDESC-M-SHAPE" in line)
    # The same block (wrapped one indent further in): the same words, rule, allowed and source.
    assert (" ".join(block).split()
            == " ".join(validated[start:start + len(block) + 1]).split()[:len(" ".join(block).split())])
    assert any(line.strip() == "allowed: 32, 64, 128" for line in block)


def test_encode_error_piped_stays_one_paragraph() -> None:
    err = run("idesc", "--kind", "f16", "--m", "128", "--n", "250", code=1).stderr
    assert err.startswith("Error: idesc, .kind::f16: n = 250: must be a multiple of 8") and err.count("\n") == 1


def test_encode_error_lists_every_problem_as_a_block() -> None:
    err = run("idesc", "--kind", "f16", "--m", "128", "--n", "250", "--atype", "e4m3", "--table", code=1,
              env={"COLUMNS": "80"}).stderr
    assert _lines(err)[0] == "Error: idesc, .kind::f16: 2 problems"
    assert "IDESC-ATYPE-CODE  atype = e4m3" in err and "IDESC-N-ALIGN  n = 250" in err
    assert sum(line.strip().startswith("allowed:") for line in _lines(err)) == 2


def test_taddr_lane_128_has_no_scale_factor_note() -> None:
    for args in (["taddr", "--lane", "128", "--column", "0"], ["taddr", "--lane", "128", "--column", "0", "--table"]):
        err = run(*args, code=1).stderr
        assert "TADDR-LANE-RANGE" in err and "scale factor" not in err and "E31" not in err
    assert "E31" not in descgen.decode_taddr(0x00800000).findings[0].rule
    with pytest.raises(descgen.EncodeError) as e:
        descgen.encode_taddr(0x4000, 0)
    assert "E31" not in str(e.value)


def test_taddr_with_bits_30_31_keeps_the_e31_note() -> None:
    plain = run("decode", "0x40000020", "--as", "taddr", code=1).stdout
    assert "TADDR-LANE-RANGE" in plain and "scale factor's byte (its SF ID) in bits 30-31" in plain
    assert "E31" in descgen.validate_taddr(0xC0000000).findings[0].rule


def test_scan_writes_an_immediate_idesc_in_hex(tmp_path) -> None:
    ptx = tmp_path / "imm.ptx"
    ptx.write_text(".version 8.7\n.target sm_100a\n.address_size 64\n"
                   "mov.b64 %rd2, 0x4000404000010440;\nmov.b64 %rd3, 0x4000404000010040;\n"
                   "tcgen05.mma.cta_group::1.kind::f16 [%r0], %rd3, %rd2, 272629776, 1;\n")
    out = run("scan", str(ptx), "-v", code=1).stdout
    assert "idesc 272629776 = 0x10400010 (immediate): kind f16, M 256" in out
    assert f"{ptx}:6: error: IDESC-M-SHAPE idesc 272629776 = 0x10400010: m = 256" in out
    assert "b-desc %rd2 = 0x4000404000010440 (mov.b64 at line 4)" in out


def test_units_agree_with_their_numbers() -> None:
    zcm = ["zcm", "--start-count", "1,3,5,7", "--skip-span", "1", "--use-span", "13"]
    table = run(*zcm, "--table", env={"COLUMNS": "120"}).stdout
    assert "skip_span = 1 column\n" in table and "use_span = 13 columns\n" in table  # the bit diagram
    row = next(line for line in table.splitlines() if line.strip().startswith("40-47"))
    assert row.split()[3:5] == ["1", "column"]  # the field table's unit column
    code = run(*zcm, "--format", "c").stdout
    assert "skip_span     = 1 column\n" in code and "use_span      = 13 columns\n" in code
    diff = run("diff", "0x000c008007050301", "0x000c018007050301", code=1).stdout
    assert "changed.skip_span=1 column -> 2 columns" in diff
    assert "lane = 1 lane" in run("taddr", "--lane", "1", "--column", "2", "--table", env={"COLUMNS": "120"}).stdout


# --------------------------------------------------------------------------------------------
# 6. scan reports input that is not PTX, one way for every kind (tests/test_scan_files.py has them all).


@pytest.mark.parametrize("content, why", [
    (b"", "the file is empty"),
    (b"  \n\n", "the file is empty"),
    (b"\x7fELF\x02\x01\x01\x00\x00\x00\xff\xfe", "the file is binary"),
    (b"int main() { return 0; }\n", "no .version directive and no tcgen05 or wgmma instruction"),
])
def test_scan_warns_when_the_file_is_not_ptx(tmp_path, content: bytes, why: str) -> None:
    path = tmp_path / "kernel.ptx"
    path.write_bytes(content)
    result = run("scan", str(path), code=2)
    assert _lines(result.stderr) == [f"{path}: error: not PTX ({why}); not scanned"]


def test_scan_warns_for_stdin_too_and_not_for_ptx() -> None:
    result = _runner().invoke(cli, ["scan", "-"], input="")
    assert result.exit_code == 2 and result.stderr == "<stdin>: error: not PTX (the file is empty); not scanned\n"
    assert "not PTX" not in run("scan", str(Path(__file__).parent / "ptx" / "clean.ptx")).stderr


# --------------------------------------------------------------------------------------------
# 2. Rendering that fits the terminal: no line wider than it, no value dropped.

from descgen.cli.output import plain_value, unit_word  # noqa: E402

_RENDERED = [
    (["decode", "0xc000401000010800", "--as", "smem"], lambda: descgen.decode_smem(0xC000401000010800)),
    (["decode", "0xffffffffffffffff", "--as", "smem"], lambda: descgen.decode_smem(0xFFFFFFFFFFFFFFFF)),
    (["idesc", "--kind", "f16", "--m", "128", "--n", "256"], lambda: descgen.decode_idesc(0x08400010, "f16")),
    (["idesc", "--kind", "mxf4nvf4", "--m", "128", "--n", "256", "--scale-type", "ue8m0"],
     lambda: descgen.decode_idesc(descgen.encode_idesc("mxf4nvf4", 128, 256, scale_type="ue8m0"), "mxf4nvf4")),
    (["smem", "--start-address", "0x3fff0", "--lbo", "0x3fff0", "--sbo", "0x3fff0", "--swizzle", "128B_base32B"],
     lambda: descgen.decode_smem(descgen.encode_smem(start_address=0x3FFF0, lbo=0x3FFF0, sbo=0x3FFF0,
                                                     swizzle="128B_base32B"))),
    (["zcm", "--start-count", "1,3,5,7", "--skip-span", "1", "--use-span", "13", "--m", "32", "--n", "64"],
     lambda: descgen.decode_zcm(0x000C008007050301)),
    (["taddr", "--lane", "127", "--column", "511"], lambda: descgen.decode_taddr(0x007F01FF)),
]


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("args, decoded", _RENDERED,
                         ids=[" ".join(a[:2]) + f"-{i}" for i, (a, _) in enumerate(_RENDERED)])
def test_tables_and_diagrams_fit_the_terminal_and_keep_every_value(width: int, args: list[str], decoded) -> None:
    d = decoded()
    out = run(*args, "--table", code=None, env={"COLUMNS": str(width), "NO_COLOR": "1"}).stdout
    lines = out.splitlines()
    too_wide = [line for line in lines if len(line) > width]
    assert not too_wide, too_wide
    for f in d.fields:
        value = plain_value(f.value)
        # the table: the field's row holds its value (and its unit)
        row = next(line for line in lines if line.split()[:2] == [f.bits, f.name])
        assert f" {value} " in f"{row} ", (f.name, row)
        if f.unit:
            assert unit_word(f.value, f.unit) in row, (f.name, row)
        # the bit diagram: the field's label keeps its value
        assert any(line.rstrip().endswith(f"{f.name} = {value}") or f"{f.name} = {value} " in line
                   for line in lines), (f.name, value)


def test_narrow_terminal_gives_way_with_the_source_column_first() -> None:
    env = {"COLUMNS": "80", "NO_COLOR": "1"}
    smem = run("decode", "0xc000401000010800", "--as", "smem", "--table", env=env).stdout
    assert "source column abbreviated at 80 columns" in smem
    row = next(line for line in smem.splitlines() if line.split()[:2] == ["0-13", "start_address"])
    assert row.split()[2:] == ["0x0800", "32768", "(0x8000)", "bytes", "Table", "40,", "bits", "0-13"]
    assert "start_address = 32768 bytes" in smem  # the diagram keeps the value (the hex gives way)
    wide = run("decode", "0xc000401000010800", "--as", "smem", "--table",
               env={"COLUMNS": "120", "NO_COLOR": "1"}).stdout
    assert "source column" not in wide and "start_address = 32768 bytes (0x8000)" in wide
    assert "16-byte alignment: §9.7.16.4.1" in wide
    idesc = run("idesc", "--kind", "f16", "--m", "128", "--n", "256", "--table", env=env).stdout
    table = idesc.split("source column")[0].splitlines()[1:]  # below the title
    assert "source column dropped at 80 columns" in idesc and not any("Table 42" in line for line in table)


# --------------------------------------------------------------------------------------------
# 3. Short first answers, and a pager for long listings.

_WIDE = {"COLUMNS": "100", "NO_COLOR": "1"}


def test_decode_without_kind_is_one_line_per_reading_then_the_best_in_full() -> None:
    out = run("decode", "0x08400010", "--table", env=_WIDE).stdout
    lines = out.splitlines()
    assert lines[0].startswith("0x08400010 as an instruction descriptor") and ".kind::f16, .kind::f8f6f4" in lines[0]
    assert lines[1].split()[:3] == [".kind::f16", "no", "findings"] and "M 128, N 256, K 16" in lines[1]
    assert any(line.split()[:3] == [".kind::f8f6f4", "no", "findings"] and "K 32" in line for line in lines)
    titles = [line for line in lines if " 0x08400010  decoded with " in line]
    assert titles == ["idesc .kind::f16  0x08400010  decoded with §9.7.16.4.2, Table 42"]
    assert lines[-1] == "the first reading in full; --all shows all 2"
    assert "first error" not in out.split("\n\n")[1] and "not consistent with .kind::tf32" in out
    assert out.count("17-22  n = 256 columns") == 1  # one diagram
    assert len(lines) < 60


def test_decode_all_shows_every_reading_in_full() -> None:
    out = run("decode", "0x08400010", "--table", "--all", env=_WIDE).stdout
    titles = [line.split("  decoded")[0] for line in out.splitlines() if " 0x08400010  decoded with " in line]
    assert titles == ["idesc .kind::f16  0x08400010", "idesc .kind::f8f6f4  0x08400010"]
    assert "it is not consistent with (first error)" in out and "IDESC-" in out
    assert out.count("17-22  n = 256 columns") == 2 and "--all shows" not in out


def test_decode_64_bit_word_short_answer() -> None:
    out = run("decode", "0xc000401000010800", "--table", env=_WIDE).stdout
    lines = out.splitlines()
    assert (lines[1].split()[:3] == ["smem", "no", "findings"]
            and "start 0x8000, LBO 16, SBO 256, swizzle 32B" in lines[1])
    assert "not consistent with wgmma_smem, zcm" in out and out.count("decoded with") == 1


def test_decode_piped_is_unchanged_by_the_short_answer() -> None:
    plain = run("decode", "0x08400010").stdout.splitlines()
    assert "consistent=f16,f8f6f4" in plain and "f16.n=256" in plain and "f8f6f4.n=256" in plain


def _in_a_terminal(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    """Run ``python -m descgen.cli ARGS`` with stdin and stdout on a pseudo-terminal: a colour
    terminal (``TERM=xterm-256color``, no ``NO_COLOR``) whatever the test run's own, unless ``env``
    says otherwise (CI runners and Emacs shells have TERM=dumb)."""
    import os
    import select
    import subprocess
    import sys

    master, slave = os.openpty()
    base = {k: v for k, v in os.environ.items() if k not in ("TERM", "NO_COLOR", "FORCE_COLOR")}
    proc = subprocess.Popen([sys.executable, "-m", "descgen.cli", *args], stdin=slave, stdout=slave, stderr=slave,
                            env={**base, "TERM": "xterm-256color", "COLUMNS": "100", **env}, close_fds=True)
    os.close(slave)
    out = b""
    while select.select([master], [], [], 60)[0]:
        try:
            chunk = os.read(master, 1 << 16)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return proc.wait(), out.decode("utf-8", "replace")


def _capture_pager(path) -> str:
    import sys

    return f"{sys.executable} -c \"import sys; open({str(path)!r}, 'w').write(sys.stdin.read())\""


@pytest.mark.parametrize("variable", ["DESCGEN_PAGER", "PAGER"])
def test_rules_on_a_terminal_goes_through_the_pager(tmp_path, variable: str) -> None:
    paged = tmp_path / "paged.txt"
    env = {variable: _capture_pager(paged)}
    if variable == "PAGER":
        env["DESCGEN_PAGER"] = ""  # unset below: DESCGEN_PAGER wins over PAGER only when set
    code, shown = _in_a_terminal(["rules"], {k: v for k, v in env.items() if v})
    assert code == 0 and "IDESC-N-SHAPE" not in shown  # the listing went to the pager, not the terminal
    text = paged.read_text(encoding="utf-8")
    assert "codes:" in text and "IDESC-N-SHAPE" in text and "\x1b[" in text  # with colour


@pytest.mark.parametrize("env, escape", [({"TERM": "dumb"}, r"\x1b\["),  # no escape code at all
                                         ({"NO_COLOR": "1"}, r"\x1b\[[0-9;]*\b(3[0-8]|9[0-7])\b")])  # bold, no colour
def test_the_pager_gets_no_colour_where_the_terminal_has_none(tmp_path, env: dict[str, str], escape: str) -> None:
    import re

    paged = tmp_path / "paged.txt"
    code, _ = _in_a_terminal(["rules"], {"DESCGEN_PAGER": _capture_pager(paged), **env})
    text = paged.read_text(encoding="utf-8")
    assert code == 0 and "IDESC-N-SHAPE" in text and not re.search(escape, text)
    _in_a_terminal(["rules"], {"DESCGEN_PAGER": _capture_pager(paged)})
    assert "\x1b[" in paged.read_text(encoding="utf-8")  # on a colour terminal: styled


def test_descgen_pager_wins_over_pager(tmp_path) -> None:
    ours, theirs = tmp_path / "ours.txt", tmp_path / "theirs.txt"
    code, _ = _in_a_terminal(["explain", "IDESC-N-SHAPE"], {"DESCGEN_PAGER": _capture_pager(ours),
                                                             "PAGER": _capture_pager(theirs)})
    assert code == 0 and "IDESC-N-SHAPE" in ours.read_text(encoding="utf-8") and not theirs.exists()


@pytest.mark.parametrize("args, env", [(["rules", "--no-pager"], {}), (["rules"], {"DESCGEN_PAGER": "cat"})])
def test_no_pager(tmp_path, args: list[str], env: dict[str, str]) -> None:
    paged = tmp_path / "paged.txt"
    code, shown = _in_a_terminal(args, {"PAGER": _capture_pager(paged), **env})
    assert code == 0 and "IDESC-N-SHAPE" in shown and not paged.exists()


def test_rules_piped_never_pages(tmp_path) -> None:
    paged = tmp_path / "paged.txt"
    result = run("rules", env={"DESCGEN_PAGER": _capture_pager(paged)})
    assert "IDESC-N-SHAPE error idesc" in result.stdout and not paged.exists()
