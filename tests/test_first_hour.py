"""What a kernel engineer trips over in the first hour. Each test goes through click's
runner or a subprocess, as a user would."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import cli_run as run


# --------------------------------------------------------------------------------------------
# 3. An encode's warnings and notes reach stderr when stdout is piped.


@pytest.mark.parametrize("args, word, code", [
    (["idesc", "--kind", "f16", "--m", "128", "--n", "256", "--max-shift", "8", "--no-ws"], "0x48400010",
     "IDESC-MAX-SHIFT-WS"),
    (["smem", "--start-address", "0x1080", "--lbo", "16", "--sbo", "1024", "--swizzle", "128B"], "0x4000404000010108",
     "SMEM-BASE-OFFSET-BOUNDARY"),
    (["smem", "--tile", "128x64", "--dtype", "bf16", "--major", "k", "--swizzle", "128B", "--addr", "0x1080"],
     "0x4000404000010108", "SMEM-BASE-OFFSET-BOUNDARY"),
    (["zcm", "--skip-span", "1", "--use-span", "13", "--start-count", "1,3,0,0", "--m", "128", "--n", "64"],
     "0x000c008000000301", "ZCM-SUBMASK-UNUSED"),
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


# --------------------------------------------------------------------------------------------
# 5. No silent wrong answers at the edges.


def test_diff_refuses_an_idesc_against_an_smem_descriptor() -> None:
    result = run("diff", "0x08400010", "0x4000404000010100", code=2)
    assert "DIFF-DESCRIPTOR" in result.stderr and "0x4000404000010100 reads as smem" in result.stderr
    assert result.stdout == ""
    assert "descriptor=smem" in run("diff", "0x08400010", "0x4000404000010100", "--as", "smem", code=1).stdout
    runtime = run("diff", "0x08400010", "0x0820001000000000", code=1).stdout.splitlines()  # CUTLASS's form: fine
    assert "changed.n=256 columns -> 128 columns (bits 17-22: 0x20 -> 0x10)" in runtime


def test_diff_refuses_words_of_different_kinds() -> None:
    mx = run("idesc", "--kind", "mxf8f6f4", "--m", "128", "--n", "128").stdout.strip()
    result = run("diff", "0x08400010", mx, code=2)
    assert f"{mx} is consistent with .kind::mxf8f6f4" in result.stderr and "no kind reads both" in result.stderr
    assert "kind=f16" in run("diff", "0x08400010", mx, "--kind", "f16", code=1).stdout.splitlines()


def test_check_takes_cutlass_runtime_idesc() -> None:
    args = ["--kind", "f16", "--adesc", "0x4000404000010040", "--bdesc", "0x4000404000010440", "--cta-group", "1"]
    runtime = run("check", "--idesc", "0x0841049000000000", *args)
    assert runtime.stdout == "" and "the idesc is the upper 32 bits, 0x08410490" in runtime.stderr
    as_json = json.loads(run("check", "--idesc", "0x0841049000000000", *args, "--json").stdout)
    plain = json.loads(run("check", "--idesc", "0x08410490", *args, "--json").stdout)
    assert as_json["runtime"]["idesc"] == "0x08410490" and as_json["result"] == plain["result"]


def test_scan_of_a_directory_without_ptx_is_a_usage_error(tmp_path) -> None:
    (tmp_path / "notes.txt").write_text("no PTX here\n")
    result = run("scan", str(tmp_path), code=2)
    assert f"no .ptx file under {tmp_path}" in result.stderr and result.stdout == ""


_MMA = ("mov.b32 %r1, 0x08400010; mov.b64 %rd1, 0x4000404000010040; mov.b64 %rd2, 0x4000404000010440;\n"
        "tcgen05.mma.cta_group::1.kind::f16 [%r0], %rd1, %rd2, {idesc}, 1;\n")


@pytest.mark.parametrize("target", ["sm_90a", "sm_100", "sm_120a", "compute_100"])
def test_a_target_without_tcgen05_is_an_error_naming_those_with_it(tmp_path, target: str) -> None:
    ptx = tmp_path / "k.ptx"
    ptx.write_text(f".version 8.8\n.target {target}\n" + _MMA.format(idesc="%r1"))
    result = run("scan", str(ptx), code=1)
    (line,) = [line for line in result.stdout.splitlines() if "PTX-TARGET" in line]
    assert line.startswith(f"{ptx}:4: error: PTX-TARGET-TCGEN05 .target: .target {target} (line 2) has no tcgen05")
    assert "(allowed: sm_100a, sm_100f, sm_103a, sm_103f, sm_110a, sm_110f)" in line


def test_a_later_unknown_target_is_still_only_unknown(tmp_path) -> None:
    ptx = tmp_path / "k.ptx"
    ptx.write_text(".version 8.8\n.target sm_130a\n" + _MMA.format(idesc="%r1"))
    result = run("scan", str(ptx))
    assert "warning: PTX-TARGET-UNKNOWN" in result.stdout


def test_an_idesc_immediate_wider_than_32_bits_is_read_as_ptxas_reads_it(tmp_path) -> None:
    # E48: ptxas 13.0 assembles it and keeps the low 32 bits (tests/corpus/wide_immediates.json)
    ptx = tmp_path / "k.ptx"
    ptx.write_text(".version 8.8\n.target sm_100a\n" + _MMA.format(idesc="0x108400010"))
    result = run("scan", str(ptx))
    assert result.stdout.startswith(f"{ptx}:4: warning: PTX-IMMEDIATE-TRUNCATED idesc 0x108400010: wider than its "
                                    "32-bit operand: ptxas keeps the low 32 bits, 0x08400010, and the scan reads that "
                                    "(allowed: -0x80000000..0xffffffff)")
    assert "3 descriptor operands: 3 fully known" in result.stderr  # the word ptxas keeps is checked
    assert "PTX-" not in run("scan", str(_write(tmp_path, "0x08400010"))).stdout


def _write(tmp_path, idesc: str):
    ptx = tmp_path / "ok.ptx"
    ptx.write_text(".version 8.8\n.target sm_100a\n" + _MMA.format(idesc=idesc))
    return ptx


# --------------------------------------------------------------------------------------------
# 6. Every citation resolves inside the installed package.


def test_explain_shows_an_erratum() -> None:
    text = run("explain", "E19").stdout
    assert text.startswith("E19: Table 39's dtype x atype/btype rows, and mixed A/B types")
    assert "**Decision**" in text
    doc = json.loads(run("explain", "e11", "--json").stdout)
    assert doc["result"]["code"] == "E11" and "cta_group::2" in doc["result"]["title"]
    assert "the errata are E1-E" in run("explain", "E999", code=2).stderr


def test_every_erratum_cited_by_a_code_resolves() -> None:
    import re

    from descgen.codes import all_codes
    from descgen.core.errata import errata

    cited = {m for rule in all_codes().values() for text in (rule.rule, rule.source)
             for m in re.findall(r"\bE[1-9][0-9]*\b", text)}
    assert cited and cited <= set(errata()), sorted(cited - set(errata()))
    assert {"E11", "E19", "E34"} <= cited


def test_no_message_cites_a_file_outside_the_project() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    for path in [*root.joinpath("descgen").glob("*.py"), *root.joinpath("cli").glob("*.py"),
                 *root.joinpath("tables").glob("*.toml"), root / "docs" / "spec-errata.md", root / "README.md"]:
        assert "spec README" not in path.read_text(encoding="utf-8"), path


# --------------------------------------------------------------------------------------------
# 7. Messages in "what, got, needs" form; help texts that say what the option does.


def test_table52_message_says_what_it_needs_and_got() -> None:
    result = run("check", "--idesc", "0x08210910", "--kind", "tf32", "--adesc", "0x4000404000010040",
                 "--bdesc", "0x4000404000010440", "--cta-group", "1", code=1)
    (line,) = [line for line in result.stdout.splitlines() if "MMA-SWIZZLE-TABLE52" in line]
    assert "B is tf32, MN-major: needs 128B_base32B, got 128B [Table 52" in line


def test_layout_outside_buffer_names_the_first_element() -> None:
    result = run("layout", "0x4000404000010040", "--dtype", "bf16", "--major", "k", "--tile", "128x16",
                 "--buffer-start", "0x400", "--buffer-size", "0x400", code=1)
    (line,) = [line for line in result.stdout.splitlines() if "LAYOUT-OUTSIDE-BUFFER" in line]
    assert line.startswith("finding=error LAYOUT-OUTSIDE-BUFFER: (i, j) = (8, 0): ")
    assert "1920 element(s) read outside the buffer, first (8, 0) at 0x800" in line


def test_a_missing_kind_is_not_given_not_none() -> None:
    result = run("layout", "0x4000404000010040", "--dtype", "e2m1", "--major", "k", "--tile", "8x32", code=2)
    assert result.stderr.startswith("Error: kind = (not given): ") and "None" not in result.stderr


def test_layout_grid_column_and_help_texts() -> None:
    grid = run("layout", "0x4000404000010040", "--dtype", "bf16", "--major", "k", "--tile", "8x16", "--table",
               env={"COLUMNS": "160", "NO_COLOR": "1"}).stdout
    assert "whole row" in grid and " shared " not in grid
    assert "(the piped default) even on a terminal" in " ".join(run("decode", "--help").stdout.split())
    smem_help = " ".join(run("smem", "--help").stdout.split())
    assert "std::uint64_t" in smem_help and "UINT64_C" in smem_help


# --------------------------------------------------------------------------------------------
# 9. Habits: several words, '-', other frameworks' type names, a one-line answer.


def test_decode_takes_a_debugger_dump_of_three_words() -> None:
    result = run("decode", "0x08400010", "0x4000404000010040", "0x4000404000010440", "--short")
    lines = result.stdout.splitlines()
    assert lines == [
        "0x08400010  f16 (also f8f6f4): kind f16, M 128, N 256, K 16, atype f16, btype f16, dtype f32, A k-major, "
        "B k-major; no findings",
        "0x4000404000010040  smem: start 0x400, LBO 16, SBO 1024, swizzle 128B, base offset 0, LBO mode relative; "
        "no findings",
        "0x4000404000010440  smem: start 0x4400, LBO 16, SBO 1024, swizzle 128B, base offset 0, LBO mode relative; "
        "no findings",
    ]
    full = run("decode", "0x08400010", "0x4000404000010040").stdout.split("\n\n")
    assert "f16.n=256" in full[0].splitlines() and "smem.start_address=1024" in full[1].splitlines()


def test_one_line_is_asked_for_never_the_default() -> None:
    """A bare word with one consistent reading is still decoded in full: on a terminal (--table)
    every field with its unit and source, piped the key=value lines scripts read; --short is the
    one line (README "Command line")."""
    word = "0x4000404000010040"
    short = run("decode", word, "--short").stdout
    assert short.count("\n") == 1 and short.startswith(f"{word}  smem: start 0x400, LBO 16")
    piped = run("decode", word).stdout.splitlines()
    assert piped[:2] == [f"word={word}", "consistent=smem"] and "smem.lbo=16" in piped
    table = run("decode", word, "--table").stdout
    assert "consistent with smem" in table and "lbo" in table and "bytes" in table and "Table 40, bits 16-29" in table


def test_decode_reads_words_from_stdin() -> None:
    dump = "0x7fffd0:\t0x08400010\t0x4000404000010040,\n08400010\n"
    result = run("decode", "-", "--short", input=dump)
    assert [line.split()[0] for line in result.stdout.splitlines()] == ["0x08400010", "0x4000404000010040",
                                                                        "0x08400010"]
    assert "read as hex 0x08400010" in result.stderr


def test_decode_exit_status_is_the_worst_word() -> None:
    result = run("decode", "0x08400010", "0x00400010", "--kind", "f16", "--short", code=1)
    first, second = result.stdout.splitlines()
    assert first.endswith("; no findings") and second.endswith("M 0, N 256, K 16, atype f16, btype f16, dtype f32, "
                                                               "A k-major, B k-major; error IDESC-M-RANGE")


@pytest.mark.parametrize("given, ptx", [("bfloat16", "bf16"), ("torch.bfloat16", "bf16"), ("half", "f16"),
                                        ("fp8e4nv", "e4m3"), ("float8_e4m3fn", "e4m3"), ("float_e2m1_t", "e2m1"),
                                        ("cutlass::float_e2m1_t", "e2m1"), ("jnp.float8_e5m2", "e5m2")])
def test_other_frameworks_type_names_map_to_ptx_names(given: str, ptx: str) -> None:
    result = run("idesc", "--kind", "f8f6f4" if ptx[0] == "e" else "f16", "--m", "128", "--n", "128",
                 "--atype", given, "--btype", ptx)
    expected = run("idesc", "--kind", "f8f6f4" if ptx[0] == "e" else "f16", "--m", "128", "--n", "128",
                   "--atype", ptx, "--btype", ptx).stdout
    assert result.stdout == expected and result.stderr == f"note: --atype {given} read as PTX's {ptx}\n"


def test_type_aliases_name_only_table_types() -> None:
    import descgen
    from descgen.core.types import TYPE_ALIASES

    names = {*descgen.type_names("atype"), *descgen.type_names("dtype"), *descgen.type_names("scale_type")}
    assert set(TYPE_ALIASES.values()) <= names
    assert run("smem", "--tile", "128x64", "--dtype", "half", "--major", "k", "--swizzle", "128B", "--addr", "0x400") \
        .stdout == "0x4000404000010040\n"


# --------------------------------------------------------------------------------------------
# 8. Ctrl-C: exit 130, no worker traceback, the answers so far written, in input order.


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_on_batch_writes_what_was_answered_and_exits_130(tmp_path, jobs: str) -> None:
    import signal
    import time

    requests = tmp_path / "big.jsonl"
    line = '{"op": "encode", "descriptor": "smem", "start_address": %d, "lbo": 16, "sbo": 1024, "swizzle": "128B"}\n'
    requests.write_text("".join(line % (16 * (i % 8192)) for i in range(400_000)))
    answers = tmp_path / "answers.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "descgen.cli", "batch", str(requests), "-o", str(answers), "--jobs",
                             jobs, "--no-cache"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # its own process group: Ctrl-C reaches the workers too
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not answers.exists() or answers.stat().st_size < 100_000):
        time.sleep(0.05)
    assert proc.poll() is None, "finished before it could be interrupted"  # output streamed before the end
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "Aborted!" not in err and err.startswith("descgen batch: interrupted after ")
    lines = answers.read_text().splitlines()
    assert 0 < len(lines) < 400_000
    assert [json.loads(a)["line"] for a in lines] == list(range(1, len(lines) + 1))  # in input order, none cut
