"""``descgen smem --tile`` and ``descgen layout``: values, output modes, the exit-status contract."""

from __future__ import annotations

import json

import pytest

import descgen

from test_cli import run, run_json, run_module_piped

BF16_K = ["--tile", "128x64", "--dtype", "bf16", "--major", "k", "--swizzle", "128B", "--addr", "0x400"]
BF16_K_WORD = "0x4000404000010040"  # LBO 16 (assumed 1), SBO 1024, start 0x400
BF16_MN = ["--tile", "64x16", "--dtype", "bf16", "--major", "mn", "--swizzle", "64B", "--start-address", "0x400"]
BF16_MN_WORD = "0x8000404000200040"  # LBO 512 (one 64B atom along MN), SBO 1024


# --------------------------------------------------------------------------------------------
# smem --tile


@pytest.mark.parametrize("args, word", [(BF16_K, BF16_K_WORD), (BF16_MN, BF16_MN_WORD)])
def test_smem_tile_prints_the_word(args, word):
    assert run("smem", *args).stdout == word + "\n"
    tile = [int(x) for x in args[1].split("x")]
    td = descgen.smem_for_tile(dtype=args[3], major=args[5], swizzle=args[7], mn=tile[0], k=tile[1],
                               start_address=int(args[9], 0))
    assert td.hex == word


def test_smem_tile_real_cutlass_words():
    assert run("smem", "--tile", "128x64", "--dtype", "e2m1", "--kind", "f8f6f4", "--major", "k", "--swizzle", "32B",
               "--addr", "0x8000").stdout == "0xc000401000010800\n"
    assert run("smem", "--tile", "128x64", "--dtype", "e4m3", "--major", "mn", "--swizzle", "128b",
               "--addr", "0x400").stdout == "0x4000404000000040\n"


def test_smem_tile_json():
    doc = run_json("smem", *BF16_K, "--pattern-start", "0x400", "--atom-order", "k_first")
    assert doc["command"] == "smem"
    assert doc["input"] == {"tile": [128, 64], "swizzle": "128B", "start_address": 0x400, "dtype": "bf16",
                            "major": "k", "pattern_start": 0x400, "atom_order": "k_first", "kind": None}
    assert doc["result"]["word"] == doc["tile"]["word"]
    tile = doc["tile"]
    assert tile["sbo"]["bytes"] == 1024 and tile["lbo"]["field"] == 1 and tile["base_offset"] == 0
    assert tile["cute"] == "Swizzle<3,4,3> o ((8,16),(8,8)):((64,512),(1,8))"
    assert any(s.startswith("SBO = 1024 bytes") for s in tile["reasoning"])


def test_smem_tile_table_shows_the_reasoning_and_the_word():
    out = run("smem", *BF16_K, "--table").stdout
    flat = " ".join(out.split())
    assert "smem for a 128x64 bf16 tile" in flat
    assert "SBO = 1024 bytes (field 64): K-major: the offset from one group of 8 rows to the next along MN" in flat
    assert "advance the start address by 32 bytes per MMA" in flat
    assert "Swizzle<3,4,3> o ((8,16),(8,8)):((64,512),(1,8))" in flat
    assert BF16_K_WORD in out and "sbo" in out and "1024 (0x400)" in out  # the decoded word follows


def test_smem_tile_base_offset_from_pattern_start():
    doc = run_json("smem", "--tile", "8x64", "--dtype", "bf16", "--major", "k", "--swizzle", "128B",
                   "--addr", "0x1180", "--pattern-start", "0x1180")
    assert doc["tile"]["base_offset"] == 3
    assert {f["name"]: f["value"] for f in doc["result"]["fields"]}["base_offset"] == 3


@pytest.mark.parametrize("args, words", [
    (["--tile", "128x64", "--swizzle", "128B", "--addr", "0"], ["--tile needs --dtype and --major"]),
    ([*BF16_K, "--lbo", "16"], ["--tile computes LBO, SBO and the base offset", "--lbo"]),
    ([*BF16_K, "--base-offset", "3"], ["--base-offset", "--pattern-start"]),
    (["--addr", "0", "--swizzle", "none", "--lbo", "16"], ["missing --sbo", "--tile MNxK"]),
    (["--addr", "0", "--swizzle", "none"], ["missing --lbo and --sbo"]),
    (["--addr", "0", "--swizzle", "none", "--lbo", "16", "--sbo", "16", "--dtype", "bf16"],
     ["--dtype only apply with --tile"]),
    (["--tile", "128", "--dtype", "bf16", "--major", "k", "--swizzle", "none", "--addr", "0"], ["is not MNxK"]),
    (["--tile", "0x64", "--dtype", "bf16", "--major", "k", "--swizzle", "none", "--addr", "0"], ["must be positive"]),
    (["--tile", "8x64x2", "--dtype", "bf16", "--major", "k", "--swizzle", "none", "--addr", "0"], ["is not MNxK"]),
    (["--tile", "128x0", "--dtype", "bf16", "--major", "k", "--swizzle", "none", "--addr", "0"], ["must be positive"]),
    (["--tile", "8x8", "--dtype", "f32", "--major", "k", "--swizzle", "none", "--addr", "0"], ["'f32' is not one of"]),
    (["--tile", "8x64", "--dtype", "e2m1", "--major", "k", "--swizzle", "none", "--addr", "0"],
     ["LAYOUT-KIND-REQUIRED"]),
])
def test_smem_tile_usage_errors_exit_2(args, words):
    result = run("smem", *args, code=2)
    assert result.stdout == ""
    for w in words:
        assert w in result.stderr, result.stderr


@pytest.mark.parametrize("args, code", [
    (["--tile", "32x8", "--dtype", "tf32", "--major", "mn", "--swizzle", "128B", "--addr", "0"], "LAYOUT-TABLE52"),
    (["--tile", "8x64", "--dtype", "bf16", "--major", "k", "--swizzle", "128B_base32B", "--addr", "0"],
     "LAYOUT-SWIZZLE-MAJOR"),
    (["--tile", "12x64", "--dtype", "bf16", "--major", "k", "--swizzle", "128B", "--addr", "0"], "LAYOUT-MN-ATOM"),
    (["--tile", "8x64", "--dtype", "bf16", "--major", "k", "--swizzle", "128B", "--addr", "0x408"],
     "SMEM-START-ADDRESS-ALIGN"),
])
def test_smem_tile_rule_violations_exit_1(args, code):
    result = run("smem", *args, code=1)
    assert result.stdout == "" and code in result.stderr
    doc = run_json("smem", *args, code=1)
    assert doc["error"]["findings"][0]["code"] == code


def test_smem_classic_form_unchanged():
    doc = run_json("smem", "--start-address", "0x8000", "--lbo", "16", "--sbo", "256", "--swizzle", "32B")
    assert doc["input"] == {"start_address": 0x8000, "lbo": 16, "sbo": 256, "swizzle": "32B", "base_offset": 0,
                            "lbo_mode": "relative", "arch": None, "pattern_start": None}
    assert "tile" not in doc


# --------------------------------------------------------------------------------------------
# layout


def test_layout_plain_is_key_lines_then_the_grid():
    lines = run("layout", BF16_K_WORD, "--dtype", "bf16", "--major", "k", "--tile", "16x64").stdout.splitlines()
    assert lines[:11] == ["word=0x4000404000010040", "dtype=bf16", "kind=", "major=k", "tile=16x64", "swizzle=128B",
                          "start_address=0x400", "lbo=16", "sbo=1024", "base_offset=0", "ok=true"]
    grid = {line.split()[0]: line.split()[1:] for line in lines[11:]}
    assert grid["row"] == [f"+{c:#04x}" for c in range(0, 128, 16)]
    # 128B swizzle: row i's K chunk c sits at chunk c ^ (i % 8) (Swizzle<3,4,3>, README item 9)
    assert grid["0x00400"] == ["0,0-7", "0,8-15", "0,16-23", "0,24-31", "0,32-39", "0,40-47", "0,48-55", "0,56-63"]
    assert grid["0x00480"] == ["1,8-15", "1,0-7", "1,24-31", "1,16-23", "1,40-47", "1,32-39", "1,56-63", "1,48-55"]
    assert grid["0x00b80"][0] == "15,56-63"
    assert len(grid) == 1 + 16


def test_layout_plain_marks_chunks_not_read():
    lines = run("layout", BF16_K_WORD, "--dtype", "bf16", "--major", "k", "--tile", "8x16").stdout.splitlines()
    rows = {line.split()[0]: line.split()[1:] for line in lines if line.startswith("0x")}
    assert rows["0x00480"] == ["1,8-15", "1,0-7", ".", ".", ".", ".", ".", "."]
    assert rows["0x00780"] == [".", ".", ".", ".", ".", ".", "7,8-15", "7,0-7"]


def test_layout_json_is_the_full_map():
    doc = run_json("layout", BF16_MN_WORD, "--dtype", "bf16", "--major", "mn", "--tile", "64x16",
                   "--buffer-start", "0x400", "--buffer-size", "2048")
    assert doc["command"] == "layout"
    assert doc["input"] == {"word": BF16_MN_WORD, "dtype": "bf16", "major": "mn", "tile": [64, 16], "kind": None,
                            "buffer": [0x400, 2048]}
    result = doc["result"]
    lay = descgen.smem_layout(int(BF16_MN_WORD, 16), dtype="bf16", major="mn", mn=64, k=16)
    assert result["addresses"] == lay.addresses()
    assert result["ok"] is True and result["findings"] == []
    assert len(result["chunks"]) == 64 * 16 // 8
    assert result["chunks"][0] == {"address": 0x400, "elements": [[i, 0] for i in range(8)]}


def test_layout_table_draws_the_swizzle():
    out = run("layout", BF16_MN_WORD, "--dtype", "bf16", "--major", "mn", "--tile", "64x16", "--table").stdout
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line.startswith("0x0")}
    # 64B swizzle, MN-major: 64-byte rows (one per K row j), chunks permuted by (j // 2) & 3
    assert rows["0x00400"] == ["j=0", "0-7", "8-15", "16-23", "24-31"]
    assert rows["0x00480"] == ["j=2", "8-15", "0-7", "24-31", "16-23"]
    assert rows["0x005c0"] == ["j=7", "24-31", "16-23", "8-15", "0-7"]
    assert "no findings" in out


def test_layout_sub_byte_json_has_bits():
    word = descgen.smem_for_tile(dtype="e2m1", kind="mxf4", major="k", swizzle="none", mn=8, k=32,
                                 start_address=0x400).hex
    doc = run_json("layout", word, "--dtype", "e2m1", "--kind", "mxf4", "--major", "k", "--tile", "8x32")
    assert doc["result"]["addresses"][0][:3] == [0x400, 0x400, 0x401]
    assert doc["result"]["bits"][0][:3] == [0, 4, 0]


def test_layout_wrong_read_exits_1_after_printing():
    """Figure 189's whole 16x16 tile through one K-major 32B descriptor (errata E25)."""
    word = descgen.smem_for_tile(dtype="tf32", major="k", swizzle="32B", mn=16, k=16, start_address=0).hex
    result = run("layout", word, "--dtype", "tf32", "--major", "k", "--tile", "16x16", code=1)
    assert "ok=false" in result.stdout.splitlines()
    assert any(line.startswith("finding=error LAYOUT-OVERLAP") for line in result.stdout.splitlines())
    assert any(line.startswith("finding=error LAYOUT-ROW-SPAN") for line in result.stdout.splitlines())
    table = run("layout", word, "--dtype", "tf32", "--major", "k", "--tile", "16x16", "--table", code=1).stdout
    assert "LAYOUT-OVERLAP" in table and "0,8-11 1,0-3" in table  # both elements drawn in the chunk they share
    doc = run_json("layout", word, "--dtype", "tf32", "--major", "k", "--tile", "16x16", code=1)
    assert doc["result"]["ok"] is False


def test_layout_buffer_violation_exits_1():
    result = run("layout", BF16_K_WORD, "--dtype", "bf16", "--major", "k", "--tile", "16x64",
                 "--buffer-start", "0x400", "--buffer-size", "1024", code=1)
    assert any(line.startswith("finding=error LAYOUT-OUTSIDE-BUFFER") for line in result.stdout.splitlines())


@pytest.mark.parametrize("args, words", [
    ([BF16_K_WORD, "--dtype", "bf16", "--major", "k", "--tile", "8x8", "--buffer-start", "0"], ["go together"]),
    ([BF16_K_WORD, "--dtype", "bf16", "--major", "k"], ["Missing option", "--tile"]),
    ([BF16_K_WORD, "--dtype", "bf16", "--major", "row", "--tile", "8x8"], ["'row' is not one of"]),
    (["0x4000404000010040", "--dtype", "e2m1", "--major", "k", "--tile", "8x8"], ["LAYOUT-KIND-REQUIRED"]),
    ([hex(descgen.encode_smem(start_address=0, lbo=1024, sbo=1024, swizzle="128B", lbo_mode="absolute")),
      "--dtype", "bf16", "--major", "k", "--tile", "8x16"], ["LAYOUT-LBO-MODE"]),
])
def test_layout_usage_errors_exit_2(args, words):
    result = run("layout", *args, code=2)
    for w in words:
        assert w in result.stderr, result.stderr


def test_layout_rule_errors_exit_1():
    bad = hex(descgen.encode_smem(start_address=0, lbo=0, sbo=0, swizzle="none") | 5 << 61)
    result = run("layout", bad, "--dtype", "bf16", "--major", "k", "--tile", "8x8", code=1)
    assert "SMEM-SWIZZLE-CODE" in result.stderr and result.stdout == ""


def test_layout_piped_never_imports_rich():
    lines = run_module_piped("layout", BF16_K_WORD, "--dtype", "bf16", "--major", "k", "--tile", "8x64")
    assert lines[-1] == "heavy: []"
    assert "ok=true" in lines


def test_help_lists_layout():
    assert "layout" in run("--help").stdout
    assert "--tile" in run("smem", "--help").stdout
    assert json.loads(run("layout", BF16_K_WORD, "--dtype", "bf16", "--major", "k", "--tile", "8x8",
                          "--json").stdout)["descgen"] == 1


# --------------------------------------------------------------------------------------------
# Docs: the README sample, docs/layouts.md commands, errata E24-E29 pins.

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


def test_readme_layout_sample_is_current():
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = "descgen layout 0x4000404000010040 --dtype bf16 --major k --tile 8x16"
    sample = re.search(re.escape(command) + r"\n```\n\n```text\n(.*?)```", readme, flags=re.S).group(1)
    got = run(*command.split()[1:]).stdout
    assert [line.rstrip() for line in got.splitlines()] == [line.rstrip() for line in sample.splitlines()]


def test_docs_layouts_commands_run():
    import re
    import shlex

    text = (ROOT / "docs" / "layouts.md").read_text(encoding="utf-8")
    commands = [shlex.split(line.split("  #")[0])[1:] for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S)
                for line in block.splitlines() if line.startswith("descgen ")]
    assert len(commands) == 3
    for args in commands:
        run(*args)
