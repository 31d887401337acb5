"""The command-line interface: values, round trips, output modes and the exit-status contract."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

import descgen
from descgen.cli import cli

# The words PTX-derived values were checked against (see the brief / tests of the library).
IDESC_CASES = [
    (["--kind", "f16", "--m", "128", "--n", "256"], "0x08400010",
     {"m": 128, "n": 256, "atype": "f16", "btype": "f16", "dtype": "f32"}),
    (["--kind", "tf32", "--m", "128", "--n", "256"], "0x08400910",
     {"m": 128, "n": 256, "atype": "tf32", "btype": "tf32", "dtype": "f32"}),
    (["--kind", "f8f6f4", "--m", "128", "--n", "128", "--atype", "e2m1", "--btype", "e2m1"], "0x08201690",
     {"m": 128, "n": 128, "atype": "e2m1", "btype": "e2m1", "dtype": "f32"}),
    (["--kind", "i8", "--m", "128", "--n", "128", "--atype", "u8", "--btype", "u8"], "0x08200020",
     {"m": 128, "n": 128, "atype": "u8", "btype": "u8", "dtype": "s32"}),
]
SMEM_CASES = [
    (["--start-address", "0x8000", "--lbo", "16", "--sbo", "256", "--swizzle", "32B"], "0xc000401000010800",
     {"start_address": 0x8000, "lbo": 16, "sbo": 256, "swizzle": "32B", "base_offset": 0, "lbo_mode": "relative"}),
    (["--start-address", "0x400", "--lbo", "2048", "--sbo", "128", "--swizzle", "none"], "0x0000400800800040",
     {"start_address": 0x400, "lbo": 2048, "sbo": 128, "swizzle": "none", "base_offset": 0, "lbo_mode": "relative"}),
]
ZCM_ARGS = ["--start-count", "1,3,5,7", "--skip-span", "1", "--use-span", "13", "--m", "32", "--n", "64"]
ZCM_WORD = "0x000c008007050301"
ZCM_MASK = "0x0040010004001000"


def _runner() -> CliRunner:
    try:  # click < 8.2 mixes stderr into stdout unless told not to
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:
        return CliRunner()


def run(*args: str, code: int | None = 0):
    """Invoke the CLI in-process; check the exit status (None: any) and that no traceback leaks."""
    result = _runner().invoke(cli, list(args), catch_exceptions=True)
    out, err = result.stdout, result.stderr
    assert "Traceback" not in out and "Traceback" not in err, (out, err)
    if code is not None:
        assert result.exit_code == code, (result.exit_code, out, err, result.exception)
    return result


def run_json(*args: str, code: int = 0) -> dict:
    result = run(*args, "--json", code=code)
    doc = json.loads(result.stdout)
    assert doc["descgen"] == 1
    return doc


def fields(doc: dict) -> dict:
    return {f["name"]: f["value"] for f in doc["fields"]}


# --------------------------------------------------------------------------------------------
# Encoders: the word, piped (plain) form.


@pytest.mark.parametrize("args, word, _", IDESC_CASES)
def test_idesc_prints_the_hex_word(args, word, _):
    assert run("idesc", *args).stdout == word + "\n"


@pytest.mark.parametrize("args, word, _", SMEM_CASES)
def test_smem_prints_the_hex_word(args, word, _):
    assert run("smem", *args).stdout == word + "\n"


def test_zcm_json_word_and_mask():
    doc = run_json("zcm", *ZCM_ARGS)
    assert doc["command"] == "zcm"
    assert doc["result"]["word"] == ZCM_WORD
    assert doc["mask"]["mask"] == ZCM_MASK
    assert [s["hex"] for s in doc["mask"]["submasks"]] == ["0x1000", "0x0400", "0x0100", "0x0040"]
    assert [s["columns"] for s in doc["mask"]["submasks"]] == [[0, 15], [16, 31], [32, 47], [48, 63]]
    assert doc["mask"]["submasks"][0]["binary"] == "0b000 1 000000000000"
    assert doc["input"]["start_count"] == [1, 3, 5, 7]


def test_zcm_plain_prints_the_word_only():
    assert run("zcm", *ZCM_ARGS).stdout == ZCM_WORD + "\n"


def test_integer_notations_agree():
    words = {
        run("idesc", "--kind", "f16", "--m", m, "--n", n).stdout
        for m, n in [("128", "256"), ("0x80", "0x100"), ("0b1000_0000", "0b1_0000_0000"), ("0_128", "2_5_6")]
    }
    assert words == {"0x08400010\n"}


@pytest.mark.parametrize("spelling", ["f16", "F16", "kind::f16", ".kind::f16", ".KIND::F16"])
def test_kind_spellings(spelling):
    assert run("idesc", "--kind", spelling, "--m", "128", "--n", "256").stdout == "0x08400010\n"


def test_choices_are_case_insensitive():
    assert run("smem", "--start-address", "0x8000", "--lbo", "16", "--sbo", "256", "--swizzle", "32b").stdout \
        == "0xc000401000010800\n"
    assert run("idesc", "--kind", "f8f6f4", "--m", "128", "--n", "128", "--atype", "E2M1", "--btype", "e2M1").stdout \
        == "0x08201690\n"


def test_idesc_json_reports_the_kind_defaults():
    doc = run_json("idesc", "--kind", "f16", "--m", "128", "--n", "256")
    assert doc["defaults"] == {"atype": "f16", "btype": "f16", "dtype": "f32"}
    assert doc["input"]["atype"] is None and doc["input"]["m"] == 128
    assert doc["result"]["word"] == "0x08400010"
    assert doc["result"]["derived"]["k"] == {"value": 16, "unit": "elements"}


# --------------------------------------------------------------------------------------------
# Round trips: decode gives back the configuration.


@pytest.mark.parametrize("args, word, expect", IDESC_CASES)
def test_idesc_round_trip(args, word, expect):
    kind = args[1]
    doc = run_json("decode", word, "--kind", kind)
    assert doc["result"]["word"] == word
    assert doc["result"]["kind"] == kind
    assert doc["result"]["ok"] is True
    got = fields(doc["result"])
    assert {k: got[k] for k in ("m", "n", "atype", "btype", "dtype")} == expect
    context = dict.fromkeys(("cta_group", "ws", "sp", "scale_vec", "a_tmem", "arch", "pattern_start", "warp",
                             "alloc_columns", "alloc_base"))
    assert doc["input"] == {"word": word, "as": None, "kind": kind, "m": None, "n": None, **context}


@pytest.mark.parametrize("args, word, expect", SMEM_CASES)
def test_smem_round_trip(args, word, expect):
    doc = run_json("decode", word, "--as", "smem")
    got = fields(doc["result"])
    assert {k: got[k] for k in expect} == expect
    assert doc["result"]["findings"] == []


def test_zcm_round_trip_with_mask():
    doc = run_json("decode", ZCM_WORD, "--as", "zcm", "--m", "32", "--n", "64")
    got = fields(doc["result"])
    assert [got[f"start_count_{i}"] for i in range(4)] == [1, 3, 5, 7]
    assert [got[f"first_span_{i}"] for i in range(4)] == [0, 0, 0, 0]
    assert (got["skip_span"], got["use_span"], got["nonzero_mask"], got["column_shift"]) == (1, 13, True, 0)
    assert doc["mask"]["mask"] == ZCM_MASK


def test_encode_json_then_decode_json_agree():
    enc = run_json("smem", "--start-address", "0x1_0000", "--lbo", "0x80", "--sbo", "1024", "--swizzle", "128B",
                   "--lbo-mode", "absolute")
    dec = run_json("decode", enc["result"]["word"], "--as", "smem")
    assert fields(dec["result"]) == fields(enc["result"])
    assert fields(dec["result"])["start_address"] == 0x10000
    assert fields(dec["result"])["lbo_mode"] == "absolute"


# --------------------------------------------------------------------------------------------
# decode: kinds, auto-detection, plain form.


def test_decode_without_kind_lists_consistent_kinds():
    result = run("decode", "0x08400010")
    lines = result.stdout.splitlines()
    assert "consistent=f16,f8f6f4" in lines
    assert "f16.atype=f16" in lines and "f8f6f4.atype=e4m3" in lines
    assert "f16.derived.k=16" in lines and "f8f6f4.derived.k=32" in lines
    assert any(line.startswith("tf32.first_error=error IDESC-ATYPE-CODE") for line in lines)
    doc = run_json("decode", "0x08400010")
    assert doc["consistent"] == ["f16", "f8f6f4"]
    assert list(doc["results"]) == list(descgen.KINDS)
    assert doc["results"]["f16"]["ok"] is True and doc["results"]["tf32"]["ok"] is False


def test_decode_with_no_consistent_kind_exits_1_but_prints():
    result = run("decode", "0x08400050", code=1)  # reserved bit 6 set: wrong under every kind
    assert "consistent=" in result.stdout.splitlines()
    assert "f16.first_error=error IDESC-RESERVED-6" in result.stdout


def test_decode_reserved_bit_exits_1_and_still_prints():
    result = run("decode", "0x08400050", "--kind", "f16", code=1)
    lines = result.stdout.splitlines()
    assert "reserved_6=1" in lines and "ok=false" in lines and "m=128" in lines
    assert any(line.startswith("finding=error IDESC-RESERVED-6") for line in lines)
    doc = run_json("decode", "0x08400050", "--kind", "f16", code=1)
    assert doc["result"]["ok"] is False
    assert [f["code"] for f in doc["result"]["findings"]] == ["IDESC-RESERVED-6"]


def test_decode_64_bit_word_tries_smem_and_zcm():
    result = run("decode", "0xc000401000010800")  # bits 36-38 and 62-63 set: reserved in zcm
    lines = result.stdout.splitlines()
    assert "consistent=smem" in lines
    assert "smem.swizzle=32B" in lines and "smem.start_address=32768" in lines
    assert any(line.startswith("zcm.first_error=error ZCM-RESERVED-36") for line in lines)
    doc = run_json("decode", ZCM_WORD, "--m", "32", "--n", "64")
    # best first: smem passes too, but warns (bits 46-48); a wgmma descriptor has no fixed bits there
    assert doc["consistent"] == ["zcm", "wgmma_smem", "smem"]
    assert list(doc["results"]) == ["smem", "wgmma_smem", "zcm"]
    assert doc["mask"]["mask"] == ZCM_MASK


def test_decode_plain_mask_lines():
    lines = run("decode", ZCM_WORD, "--as", "zcm", "--m", "32", "--n", "64").stdout.splitlines()
    assert f"mask={ZCM_MASK}" in lines and "mask.submask_3=0x0040" in lines and "use_span=13" in lines


# --------------------------------------------------------------------------------------------
# Exit status 1: a value breaks a PTX rule.


@pytest.mark.parametrize("args, words", [
    (["idesc", "--kind", "f16", "--m", "48", "--n", "256"], ["m = 48", "IDESC-M-RANGE", "Table 39"]),
    (["smem", "--start-address", "0x401", "--lbo", "16", "--sbo", "256", "--swizzle", "32B"],
     ["start_address", "multiple of 16", "SMEM-START-ADDRESS-ALIGN"]),
    (["idesc", "--kind", "tf32", "--m", "128", "--n", "256", "--atype", "bf16"],
     ["atype", "bf16", "tf32", "IDESC-ATYPE-CODE"]),
    (["idesc", "--kind", "mxf4", "--m", "128", "--n", "256", "--max-shift", "8"],
     ["max_shift", "IDESC-MAX-SHIFT-ABSENT"]),
    (["zcm", "--skip-span", "0", "--use-span", "1"], ["skip_span", "ZCM-SKIP-SPAN-RANGE"]),
    # M is the instruction's context for the zcm rules (catalog rule ZCM-M), not a usage error.
    (["zcm", "--skip-span", "1", "--use-span", "1", "--m", "48", "--n", "64"],
     ["m = 48", "M = 32, 64 and 128", "ZCM-M"]),
])
def test_rule_violations_exit_1(args, words):
    result = run(*args, code=1)
    assert result.stdout == ""
    assert result.stderr.startswith("Error: ")
    for w in words:
        assert w in result.stderr


def test_rule_violation_json_envelope():
    doc = run_json("idesc", "--kind", "f16", "--m", "48", "--n", "256", code=1)
    assert doc["command"] == "idesc"
    assert doc["input"]["m"] == 48
    assert doc["error"]["type"] == "EncodeError"
    assert [f["code"] for f in doc["error"]["findings"]] == ["IDESC-M-RANGE"]
    assert "result" not in doc


# --------------------------------------------------------------------------------------------
# Exit status 2: usage errors.


@pytest.mark.parametrize("args, words", [
    (["decode", "0xZZ"], ["'0xZZ' is not an integer"]),
    (["decode", "0x1_0000_0000_0000_0000"], ["65 bits", "at most 64"]),
    (["decode", "12xyz"], ["not an integer"]),  # 12abc is hex digits: read as hex (descgen.core.numbers)
    (["decode", "--", "-5"], ["negative"]),
    (["idesc", "--kind", "f16", "--m", "-128", "--n", "256"], ["negative"]),
    (["idesc", "--kind", "f16", "--m", "128", "--n", "256", "--bogus"], ["No such option", "--bogus"]),
    (["idesc", "--kind", "foo", "--m", "128", "--n", "256"], ["'foo' is not an MMA kind", "f8f6f4"]),
    (["idesc", "--kind", "f16", "--m", "128", "--n", "256", "--atype", "f17"], ["'f17' is not one of"]),
    (["smem", "--start-address", "0", "--lbo", "16", "--sbo", "16", "--swizzle", "16B"], ["'16B' is not one of"]),
    (["idesc", "--kind", "f16", "--n", "256"], ["Missing option", "--m"]),
    (["zcm", "--skip-span", "1", "--use-span", "1", "--start-count", "1,2,3"], ["exactly 4"]),
    (["zcm", "--skip-span", "1", "--use-span", "1", "--m", "32", "--n", "30"], ["multiple of 4"]),
    (["zcm", "--skip-span", "1", "--use-span", "1", "--m", "32"], ["--m and --n go together"]),
    (["decode", "0x100000000", "--as", "taddr"], ["32-bit"]),  # (a 64-bit --as idesc is CUTLASS's runtime form: E31)
    (["decode", "0x08400010", "--as", "smem", "--kind", "f16"], ["--kind"]),
    (["decode", "0x08400010", "--m", "32", "--n", "64"], ["--as zcm"]),
    (["idesc", "--kind", "f16", "--m", "128", "--n", "256", "--json", "--table"], ["mutually exclusive"]),
    (["frobnicate"], ["No such command"]),
])
def test_usage_errors_exit_2(args, words):
    result = run(*args, code=2)
    assert "--json" in args or result.stdout == ""
    for w in words:
        assert w in result.stderr, result.stderr


def test_usage_error_json_envelope():
    result = run("decode", "0xZZ", "--json", code=2)
    doc = json.loads(result.stdout)
    assert doc == {"descgen": 1, "command": "decode",
                   "error": {"type": "BadParameter", "message": doc["error"]["message"], "findings": []}}
    assert "0xZZ" in doc["error"]["message"]


def test_library_usage_error_json_envelope():
    doc = run_json("zcm", "--skip-span", "1", "--use-span", "1", "--m", "32", "--n", "30", code=2)
    assert doc["error"]["type"] == "UsageError"
    assert doc["error"]["findings"][0]["code"] == "ZCM-N-RANGE"


# --------------------------------------------------------------------------------------------
# Errors: no traceback, except on request; internal errors.


def test_traceback_flag_reraises():
    result = _runner().invoke(cli, ["--traceback", "idesc", "--kind", "f16", "--m", "48", "--n", "256"])
    assert isinstance(result.exception, descgen.EncodeError)


def test_internal_error_exits_3_without_traceback(monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(descgen, "encode_idesc", boom)
    result = run("idesc", "--kind", "f16", "--m", "128", "--n", "256", code=3)
    assert "internal error: RuntimeError: kaboom" in result.stderr
    assert "--traceback" in result.stderr


# --------------------------------------------------------------------------------------------
# JSON envelope and table view.


@pytest.mark.parametrize("args", [
    ["idesc", "--kind", "mxf8f6f4", "--m", "128", "--n", "64"],
    ["smem", "--start-address", "0x400", "--lbo", "2048", "--sbo", "128", "--swizzle", "none"],
    ["zcm", "--skip-span", "2", "--use-span", "2"],
    ["decode", "0x08400010", "--kind", "f16"],
])
def test_json_envelope(args):
    doc = run_json(*args)
    assert doc["command"] == args[0]
    assert set(doc) >= {"descgen", "command", "input", "result"}
    word = doc["result"]["word"]
    assert isinstance(word, str) and word.startswith("0x") and len(word) == doc["result"]["width"] // 4 + 2


def _diagram_row(word: int, width: int, bounds: list[int]) -> str:
    """The bits MSB -> LSB with a space at each field boundary (bounds = each field's lo)."""
    bits = format(word, f"0{width}b")
    out = []
    for i, b in enumerate(bits):
        bit = width - 1 - i
        out.append(b)
        if bit in bounds and bit != 0:
            out.append(" ")
    return "".join(out)


def test_table_view_has_fields_findings_and_bit_diagram():
    result = run("decode", "0x08400050", "--kind", "f16", "--table", code=1)
    out = result.stdout
    for name in ("sparsity_selector", "dtype", "atype", "btype", "max_shift", "reserved_6"):
        assert name in out
    assert "bits" in out and "raw" in out and "source" in out
    assert "IDESC-RESERVED-6" in out and "Table 42, bit 6" in out
    assert "K = 16 elements" in out
    d = descgen.decode_idesc(0x08400050, "f16")
    row = _diagram_row(d.word, 32, [f.lo for f in d.fields])
    assert row == "00 0 01000 0 100000 0 0 0 0 000 000 1 01 0 0 00"
    assert row in out
    assert "17-22  n = 256 columns" in out


def test_table_view_64_bit_rows_and_mask():
    out = run("zcm", *ZCM_ARGS, "--table").stdout
    d = descgen.decode_zcm(int(ZCM_WORD, 16))
    lows = [f.lo for f in d.fields]
    high = _diagram_row(d.word >> 32, 32, [lo - 32 for lo in lows if lo >= 32])
    low = _diagram_row(d.word & 0xFFFF_FFFF, 32, [lo for lo in lows if lo < 32])
    assert high == "00 000000 00001100 00000000 1 000 0 0 0 0"  # bits 63-32
    assert low == "00000111 00000101 00000011 00000001"  # bits 31-0
    assert high in out and low in out
    assert out.index(high) < out.index(low)
    assert ZCM_MASK in out and "0b000 1 000000000000" in out and "mask3" in out


def test_table_view_lists_kind_defaults():
    out = run("idesc", "--kind", "f16", "--m", "128", "--n", "256", "--table").stdout
    assert "0x08400010" in out
    assert "kind defaults applied (.kind::f16): atype = f16, btype = f16, dtype = f32" in " ".join(out.split())


def test_table_view_decode_all_kinds():
    out = run("decode", "0x08400010", "--table", "--all").stdout  # --all: the first error of each other kind
    assert "consistent with .kind::f16, .kind::f8f6f4" in " ".join(out.split())
    assert ".kind::tf32" in out and "IDESC-ATYPE-CODE" in out


# --------------------------------------------------------------------------------------------
# Group-level surface.


def test_version():
    assert run("--version").stdout.strip() == f"descgen {descgen.__version__}"


def test_help_documents_exit_status():
    out = run("--help").stdout
    assert "Exit status:" in out
    for line in ("0  success", "1  a value breaks a PTX rule", "2  usage error"):
        assert line in out


# --------------------------------------------------------------------------------------------
# The installed program.


def _program() -> list[str] | None:
    exe = shutil.which("descgen") or shutil.which("descgen", path=os.path.dirname(sys.executable))
    return [exe] if exe else None


def test_console_script_subprocess():
    prog = _program()
    if prog is None:
        pytest.skip("the descgen console script is not installed (pip install -e .)")
    proc = subprocess.run([*prog, "idesc", "--kind", "f16", "--m", "128", "--n", "256"],
                          capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "0x08400010\n", "")
    proc = subprocess.run([*prog, "decode", "0xZZ"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == "" and "not an integer" in proc.stderr


def run_module_piped(*args: str) -> list[str]:
    """``python -m descgen.cli ARGS`` in a fresh interpreter, stdout piped: its lines, then
    ``heavy: [...]``, the rich/bitstring modules it imported."""
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['descgen', *{list(args)!r}]\n"
        "try:\n"
        "    runpy.run_module('descgen.cli', run_name='__main__')\n"
        "except SystemExit as e:\n"
        "    assert e.code in (0, None), e.code\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('rich', 'bitstring'))\n"
        "print('heavy:', bad)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_module_entry_point_and_lazy_imports():
    """``python -m descgen.cli`` works, and piped output never imports rich or bitstring."""
    assert run_module_piped("idesc", "--kind", "f16", "--m", "128", "--n", "256") == ["0x08400010", "heavy: []"]


def _loaded_at_exit(argv: list[str]) -> dict[str, bool]:
    """What the console script's process holds when it exits: the modules of interest, and
    whether it froze its objects out of the final collection's sight."""
    code = ("import atexit, gc, json, sys\n"
            "atexit.register(lambda: sys.__stderr__.write('\\nAT-EXIT=' + json.dumps({"
            "'rich.table': 'rich.table' in sys.modules, 'rich.console': 'rich.console' in sys.modules, "
            "'bitstring': 'bitstring' in sys.modules, 'frozen': gc.get_freeze_count() > 0})))\n"
            "from descgen.cli import main\nmain()\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": root, "COLUMNS": "110", "PYTHONIOENCODING": "utf-8"}
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, env=env, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stderr.rpartition(b"\nAT-EXIT=")[2])  # type: ignore[no-any-return]


def test_a_command_loads_only_what_it_draws() -> None:
    """A word's table on a terminal draws its lines with rich's console and text alone: rich's
    Table (and the fractions and decimal modules under it) loads only for a view that uses one,
    such as a finding's block. bitstring loads with the bit diagram a drawn word ends with (its
    digits are the word's Bits), never for piped or JSON output. Every command freezes its
    objects before exit: the interpreter's final collection would otherwise walk all of them."""
    idesc = ["idesc", "--kind", "f16", "--m", "128", "--n", "256"]
    drawn = {"rich.console": True, "bitstring": True, "frozen": True}
    assert _loaded_at_exit(idesc + ["--table"]) == {**drawn, "rich.table": False}
    assert _loaded_at_exit(["decode", "0x08400010", "0x4000404000010040", "--table"]) == {**drawn, "rich.table": False}
    warned = _loaded_at_exit(idesc + ["--max-shift", "8", "--no-ws", "--table"])  # a warning's block: a grid
    assert warned == {**drawn, "rich.table": True}
    piped = {"rich.table": False, "rich.console": False, "bitstring": False, "frozen": True}
    assert _loaded_at_exit(idesc) == piped
    assert _loaded_at_exit(["decode", "0x08400010", "0x4000404000010040"]) == piped
    assert _loaded_at_exit(["decode", "0x08400010", "--short"]) == piped
    for json_out in (["decode", "0x08400010", "--json"], idesc + ["--json"]):  # JSON: no diagram, no Bits
        assert _loaded_at_exit(json_out)["bitstring"] is False, json_out


TILE_ARGS = ["smem", "--tile", "128x64", "--dtype", "bf16", "--major", "k", "--swizzle", "128B"]


def test_smem_tile_without_addr_writes_the_run_time_functions() -> None:
    """Without --addr, --tile with a code format writes descgen.emit_functions' text (E45); the
    command line is in its comment."""
    args = [*TILE_ARGS, "--format", "cpp", "--name", "a_desc", "--stage-bytes", "32768"]
    out = run(*args).stdout
    td = descgen.smem_for_tile(dtype="bf16", major="k", swizzle="128B", mn=128, k=64, start_address=0)
    assert out == descgen.emit_functions(td, "cpp", name="a_desc", stage_bytes=32768,
                                         source="descgen " + " ".join(args)) + "\n"
    assert "constexpr std::uint64_t a_desc_fixed = 0x4000404000010000ull;" in out
    assert "a_desc_stage(std::uint64_t desc, std::uint32_t stage)" in out and "stage * 0x800u" in out
    ns: dict = {}
    exec(run(*TILE_ARGS, "--format", "python").stdout, ns)
    assert ns["smem_desc_k"](ns["smem_desc"](0x400), 1) == 0x4000404000010042


@pytest.mark.parametrize("args, message", [
    (TILE_ARGS, "missing --addr"),                                                  # no code format
    (["smem", "--lbo", "16", "--sbo", "1024", "--swizzle", "128B"], "missing --addr"),          # no code format
    (["smem", "--lbo", "16", "--sbo", "1024", "--swizzle", "128B", "--stage-bytes", "1024", "--format", "cpp"],
     "--stage-bytes"),                                                                   # stages are a tile's
    ([*TILE_ARGS, "--addr", "0x400", "--stage-bytes", "32768", "--format", "cpp"], "--stage-bytes"),
    (["idesc", "--kind", "f16", "--m", "128", "--n", "256", "--functions"], "--functions writes source code"),
])
def test_run_time_function_options_are_usage_errors_elsewhere(args, message) -> None:
    assert message in run(*args, code=2).stderr


def test_smem_fields_without_addr_write_the_run_time_functions() -> None:
    """Without --addr, --lbo/--sbo with a code format writes descgen.emit_functions' text of the
    word with start address 0: NAME(smem_addr) and NAME_advance(desc, offset)."""
    args = ["smem", "--lbo", "16", "--sbo", "512", "--swizzle", "64B", "--base-offset", "3", "--format", "cpp",
            "--name", "a_desc"]
    out = run(*args).stdout
    word = descgen.encode_smem(start_address=0, lbo=16, sbo=512, swizzle="64B", base_offset=3)
    assert out == descgen.emit_functions(descgen.validate_smem(word), "cpp", name="a_desc",
                                         source="descgen " + " ".join(args)) + "\n"
    assert "a_desc_advance(std::uint64_t desc, std::uint32_t offset)" in out
    ns: dict = {}
    exec(run("smem", "--lbo", "16", "--sbo", "512", "--swizzle", "64B", "--base-offset", "3",
             "--format", "python").stdout, ns)
    d = ns["smem_desc"](0x580)
    assert d == descgen.encode_smem(start_address=0x580, lbo=16, sbo=512, swizzle="64B", base_offset=3)
    assert ns["smem_desc_advance"](d, 32) == descgen.encode_smem(start_address=0x5a0, lbo=16, sbo=512, swizzle="64B",
                                                                 base_offset=3)
    ns = {}
    exec(run("smem", "--lbo", "16", "--sbo", "1024", "--swizzle", "128B", "--arch", "sm_90a",
             "--format", "python").stdout, ns)
    assert ns["smem_desc"](0x400) == descgen.encode_wgmma_smem(start_address=0x400, lbo=16, sbo=1024, swizzle="128B")


def test_stage_bytes_that_split_a_tile_exit_2() -> None:
    err = run(*TILE_ARGS, "--format", "c", "--stage-bytes", "8192", code=2).stderr
    assert "EMIT-STAGE-BYTES" in err and "at least 16384" in err


def test_idesc_and_zcm_functions_from_the_cli() -> None:
    dense = run("idesc", "--kind", "f16", "--m", "128", "--n", "256", "--format", "cpp", "--functions").stdout
    assert "no run-time part" in dense and "constexpr std::uint32_t idesc_fixed = 0x08400010u;" in dense
    mx = run("idesc", "--kind", "mxf8f6f4", "--m", "128", "--n", "256", "--format", "python", "--functions").stdout
    ns: dict = {}
    exec(mx, ns)
    assert ns["idesc"](1, 2) == descgen.encode_idesc("mxf8f6f4", 128, 256, a_sf_id=1, b_sf_id=2)
    z = run("zcm", *ZCM_ARGS, "--format", "python", "--functions").stdout
    exec(z, ns)
    assert hex(ns["zcm_desc"](0)) == ZCM_WORD.replace("0x000", "0x")
