"""Issue 13: the terminal a kernel engineer lives in. Pasted integers, 80 columns, short first
answers and pagers, one spelling rule for CLI and API, one finding block, LICENSE (test_packaging)."""

from __future__ import annotations

import json

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
    literal = code.rsplit("= ", 1)[1].rstrip(";\n")
    assert literal == "0x08400010u"
    assert "n=256" in run("decode", literal, "--kind", "f16").stdout.splitlines()


@pytest.mark.parametrize("text, decimal", [("08400010", 8400010), ("12345678", 12345678),
                                            ("1234567812345678", 1234567812345678), ("0400", 400)])
def test_decimal_that_looks_like_pasted_hex_gets_a_note(text: str, decimal: int) -> None:
    result = run("decode", text, "--as", "smem", "--json", code=None)
    assert json.loads(result.stdout)["input"]["word"] == f"{decimal:#018x}"
    assert result.stderr.strip() == f"note: {text!r} read as decimal {decimal} ({decimal:#x}); did you mean 0x{text}?"


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
