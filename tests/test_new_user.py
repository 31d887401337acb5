"""What a new user trips over, tried from a fresh clone with the README's commands: each test goes
through click's runner or a subprocess, as a user would (the second round after
tests/test_first_hour.py)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from descgen.cli import cli


def _runner() -> CliRunner:
    try:  # click < 8.2 mixes stderr into stdout unless told not to
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:
        return CliRunner()


def run(*args: str, code: int | None = 0, input: str | None = None):
    result = _runner().invoke(cli, list(args), input=input)
    assert "Traceback" not in result.stdout and "Traceback" not in result.stderr, (result.stdout, result.stderr)
    if code is not None:
        assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    return result


# --------------------------------------------------------------------------------------------
# Words from standard input: cuda-gdb's value history, and one bad line costs only itself.


def test_decode_reads_cuda_gdb_value_history_from_stdin() -> None:
    result = run("decode", "-", "--short", input="0x08400010\n$1 = 0x08400010\n$2 = {0x4000404000010040, 0x10400010}\n")
    assert [line.split()[0] for line in result.stdout.splitlines()] == [
        "0x08400010", "0x08400010", "0x4000404000010040", "0x10400010"]
    assert result.stderr == ""


def test_a_bad_stdin_line_is_reported_and_the_rest_decoded() -> None:
    result = run("decode", "-", "--short", input="0x08400010\nnot-a-word\n0x4000404000010040\n", code=2)
    assert [line.split()[0] for line in result.stdout.splitlines()] == ["0x08400010", "0x4000404000010040"]
    (error,) = result.stderr.splitlines()
    assert error.startswith("error: stdin line 2: 'not-a-word' is not an integer")
    as_json = run("decode", "-", "--json", input="zz\n0x08400010\n", code=2)
    assert json.loads(as_json.stdout)["input"]["word"] == "0x08400010"
    assert as_json.stderr.startswith("error: stdin line 1: 'zz'")


def test_a_bad_word_argument_is_still_a_usage_error() -> None:
    result = run("decode", "0x08400010", "nope", code=2)
    assert result.stdout == "" and "Invalid value for 'WORD...'" in result.stderr


# --------------------------------------------------------------------------------------------
# check-wgmma: a verdict on a terminal, and the type names idesc takes.

WGMMA = ("check-wgmma", "--shape", "m64n128k16", "--dtype", "f32", "--adesc", "0x4000004000010040",
         "--bdesc", "0x4000004000010440")


def test_check_wgmma_prints_a_verdict_on_a_terminal_when_clean() -> None:
    table = run(*WGMMA, "--atype", "f16", "--table").stdout
    lines = table.splitlines()
    assert lines[0] == "wgmma.mma_async.m64n128k16.f32.f16.f16"
    assert "a_desc 0x4000004000010040  A's shared memory descriptor" in lines
    assert lines[-1].startswith("✓ clean: no findings")
    assert run(*WGMMA, "--atype", "f16").stdout == ""  # piped: the findings' lines, none


def test_check_wgmma_takes_type_aliases_and_refuses_unknown_names_as_usage_errors() -> None:
    aliased = run(*WGMMA, "--atype", "fp16", "--btype", "half")
    assert aliased.stderr.splitlines() == ["note: --atype fp16 read as PTX's f16", "note: --btype half read as PTX's f16"]
    assert run(*WGMMA, "--atype", "torch.bfloat16").stderr == "note: --atype torch.bfloat16 read as PTX's bf16\n"
    unknown = run(*WGMMA, "--atype", "fp17", code=2)
    assert "Invalid value for '--atype': 'fp17' is not one of f16, bf16, tf32, e4m3, e5m2, s8, u8, b1" in unknown.stderr
    assert "is not one of" in run(*WGMMA[:4], "f64", *WGMMA[5:], "--atype", "f16", code=2).stderr


# --------------------------------------------------------------------------------------------
# decode --short --json; one message for one mistake.


def test_decode_short_json_is_one_json_object_per_word() -> None:
    result = run("decode", "0x08400010", "0x4000404000010040", "--short", "--json")
    first, second = (json.loads(line) for line in result.stdout.splitlines())
    assert first["reading"] == "f16" and first["consistent"] == ["f16", "f8f6f4"] and first["fields"]["n"] == 256
    assert first["descgen"] == 1 and first["command"] == "decode" and first["findings"] == [] and first["ok"]
    assert second["word"] == "0x4000404000010040" and second["reading"] == "smem" and second["fields"]["sbo"] == 1024
    bad = json.loads(run("decode", "0x00400010", "--kind", "f16", "--short", "--json", code=1).stdout)
    assert not bad["ok"] and [f["code"] for f in bad["findings"]] == ["IDESC-M-RANGE"]


def test_a_negative_word_gets_one_message_with_or_without_double_dash() -> None:
    expected = "Invalid value for 'WORD...': '-1' is negative; descriptor values are unsigned"
    assert expected in run("decode", "-1", code=2).stderr
    assert expected in run("decode", "--", "-1", code=2).stderr
    big = "Invalid value for 'WORD...': '-1073741824' is negative; descriptor values are unsigned"
    assert big in run("decode", "-1073741824", code=2).stderr and big in run("decode", "--", "-1073741824", code=2).stderr
    assert "'-5' is negative" in run("validate", "-5", "--kind", "f16", code=2).stderr
    assert "No such option '-x'" in run("decode", "-x", code=2).stderr  # an unknown option is still one
    as_json = json.loads(run("decode", "-1", "--json", code=2).stdout)
    assert as_json["error"]["message"] == expected
