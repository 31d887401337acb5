"""Issue 19: what a kernel engineer trips over in the first hour. Each test goes through click's
runner or a subprocess, as a user would."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from descgen.cli import cli


def _runner() -> CliRunner:
    try:  # click < 8.2 mixes stderr into stdout unless told not to
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:
        return CliRunner()


def run(*args: str, code: int | None = 0, env: dict[str, str] | None = None, input: str | None = None):
    result = _runner().invoke(cli, list(args), env=env, input=input)
    assert "Traceback" not in result.stdout and "Traceback" not in result.stderr, (result.stdout, result.stderr)
    if code is not None:
        assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    return result


# --------------------------------------------------------------------------------------------
# 3. An encode's warnings and notes reach stderr when stdout is piped.


@pytest.mark.parametrize("args, word, code", [
    (["idesc", "--kind", "f16", "--m", "128", "--n", "256", "--max-shift", "8", "--no-ws"], "0x48400010",
     "IDESC-MAX-SHIFT-WS"),
    (["smem", "--start-address", "0x1080", "--lbo", "16", "--sbo", "1024", "--swizzle", "128B"], "0x4000404000010108",
     "SMEM-BASE-OFFSET-BOUNDARY"),
    (["smem", "--tile", "128x64", "--dtype", "bf16", "--major", "k", "--swizzle", "128B", "--addr", "0x1080"],
     "0x4000404000010108", "SMEM-BASE-OFFSET-BOUNDARY"),
])
def test_piped_encode_prints_the_word_and_its_warnings_on_stderr(args: list[str], word: str, code: str) -> None:
    result = run(*args)
    assert result.stdout == word + "\n"  # IDESC=$(descgen idesc ...) still gets the word alone
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"warning: {code}: ") and line.endswith("]")
    quiet = run(*args, "--quiet")
    assert quiet.stdout == word + "\n" and quiet.stderr == ""


def test_a_clean_encode_prints_nothing_on_stderr() -> None:
    result = run("idesc", "--kind", "f16", "--m", "128", "--n", "256")
    assert result.stdout == "0x08400010\n" and result.stderr == ""


def test_piped_warning_through_a_real_pipe() -> None:
    proc = subprocess.run([sys.executable, "-m", "descgen.cli", "idesc", "--kind", "f16", "--m", "128", "--n", "256",
                           "--max-shift", "8", "--no-ws"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout == "0x48400010\n"
    assert proc.stderr.startswith("warning: IDESC-MAX-SHIFT-WS: max_shift = 8: ")


# --------------------------------------------------------------------------------------------
# 4. A rule is checked or not checked, never both; one that cannot apply is not listed.


def _plain_report(*args: str) -> tuple[list[str], list[str]]:
    lines = run("validate", *args, "-v", code=None).stdout.splitlines()
    checked = [line.split()[1] for line in lines if not line.startswith("not-checked")]
    not_checked = [line.split()[1] for line in lines if line.startswith("not-checked")]
    return checked, not_checked


def test_a_finding_is_never_also_not_checked() -> None:
    found, not_checked = _plain_report("0x10400010", "--kind", "f16", "--cta-group", "1")
    assert found == ["IDESC-M-SHAPE"] and "IDESC-M-SHAPE" not in not_checked and "IDESC-N-SHAPE" not in not_checked
    answer = json.loads(run("batch", input='{"op": "validate", "word": "0x10400010", "kind": "f16", "cta_group": 1}\n',
                            code=None).stdout)
    assert [f["code"] for f in answer["findings"]] == ["IDESC-M-SHAPE"]
    assert not set(answer["not_checked"]) & {"IDESC-M-SHAPE", "IDESC-N-SHAPE"}


def test_ws_rules_are_not_listed_under_cta_group_2() -> None:
    """.ws exists only with cta_group::1 (Table 39): under cta_group::2 the .ws rules check 'not .ws'."""
    found, not_checked = _plain_report("0x08400010", "--kind", "f16", "--cta-group", "2")
    assert found == [] and not_checked == ["IDESC-A-MAJOR-TMEM", "IDESC-SPARSE-SP"]
    warned = run("validate", "0x48400010", "--kind", "f16", "--cta-group", "2").stdout  # max shift 8, .ws impossible
    assert warned.split()[:2] == ["warning", "IDESC-MAX-SHIFT-WS"]
    refused = run("validate", "0x08400010", "--kind", "f16", "--cta-group", "2", "--ws", code=1).stdout
    assert "MMA-WS-CTA-GROUP" in refused


def test_a_rule_of_other_kinds_is_not_listed() -> None:
    _, f16 = _plain_report("0x08400010", "--kind", "f16")
    assert "MMA-WS-KIND" not in f16
    _, mx = _plain_report("0x08400010", "--kind", "mxf8f6f4")
    assert "MMA-WS-KIND" in mx


def test_explain_says_what_context_a_rule_needs_from_the_catalog() -> None:
    shape = run("explain", "IDESC-M-SHAPE", "--table", "--no-pager", env={"COLUMNS": "200"}).stdout
    assert "no context: always checked (without --cta-group, --ws, against every case of them)" in shape
    ws = run("explain", "MMA-WS-KIND", "--table", "--no-pager", env={"COLUMNS": "200"}).stdout
    assert "--ws: without it the rule is not checked" in ws and "mxf8f6f4, mxf4, mxf4nvf4" in ws
    plain = run("explain", "IDESC-M-SHAPE").stdout.splitlines()
    assert "needs=" in plain and "uses=cta_group,ws" in plain
