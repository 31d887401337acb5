"""What a new user trips over, tried from a fresh clone with the README's commands: each test goes
through click's runner or a subprocess, as a user would (the second round after
tests/test_first_hour.py)."""

from __future__ import annotations

import json

from conftest import cli_run as run


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
    assert aliased.stderr.splitlines() == ["note: --atype fp16 read as PTX's f16",
                                           "note: --btype half read as PTX's f16"]
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
    assert (big in run("decode", "-1073741824", code=2).stderr
            and big in run("decode", "--", "-1073741824", code=2).stderr)
    assert "'-5' is negative" in run("validate", "-5", "--kind", "f16", code=2).stderr
    assert "No such option '-x'" in run("decode", "-x", code=2).stderr  # an unknown option is still one
    as_json = json.loads(run("decode", "-1", "--json", code=2).stdout)
    assert as_json["error"]["message"] == expected


# --------------------------------------------------------------------------------------------
# One way to write allowed values and flags; blocks without trailing blanks; the option to give.


def test_allowed_values_and_flags_are_written_one_way() -> None:
    """A set is ``64, 128`` (never ``{64, 128}``), a flag ``false``/``true`` (never ``True``), in
    every field domain, every message and the allowed list beside it."""
    from descgen.model.loader import LAYOUT_FILES, layout

    described = [f.domain(kind).describe() for lay in map(layout, LAYOUT_FILES) for f in lay.fields
                 for kind in (lay.kinds or (None,))]
    assert described and not [d for d in described if "{" in d or "True" in d or "False" in d]
    negate = run("idesc", "--kind", "i8", "--m", "128", "--n", "128", "--negate-a", code=1).stderr
    assert "negate_a = true: not supported for .kind::i8; allowed: false [" in negate
    m = run("idesc", "--kind", "f16", "--m", "100", "--n", "256", code=1).stderr
    assert "allowed: 32, 64, 128, 256 [" in m


def test_terminal_blocks_have_no_trailing_blanks() -> None:
    """A finding block (a rich table) pads its last column; what is copied from the terminal must
    not carry the padding."""
    drawn = [run(*WGMMA[:5], "--atype", "f16", "--btype", "bf16", *WGMMA[5:], "--table", code=1).stdout,
             run("decode", "0x08400a10", "--kind", "f16", "--table", code=1).stdout,
             run("explain", "IDESC-N-SHAPE", "--table", "--no-pager").stdout]
    for text in drawn:
        assert "rule:" in text or "IDESC-N-SHAPE" in text
        assert [line for line in text.splitlines() if line != line.rstrip()] == []


def test_a_tile_of_a_kind_dependent_type_names_the_kind_option() -> None:
    result = run("smem", "--tile", "128x128", "--dtype", "e2m1", "--major", "k", "--swizzle", "128B", "--addr", "0x400",
                 code=2)
    assert result.stderr.splitlines()[-1] == "note: give --kind: one of f8f6f4, mxf8f6f4, mxf4, mxf4nvf4"


def test_a_hopper_word_in_a_tcgen05_check_or_scan_points_to_port() -> None:
    checked = run("check", "--idesc", "0x08400010", "--kind", "f16", "--adesc", "0x4000004000010040",
                  "--bdesc", "0x4000404000010440").stdout
    (line,) = checked.splitlines()
    assert line.startswith("warning SMEM-VERSION-CONST a_desc.version=0") and "descgen port WORD --to sm_100a" in line
    import descgen

    scanned = descgen.scan_ptx("mov.b32 %r1, 0x08400010; mov.b64 %rd2, 0x4000004000010440;\n"
                               "tcgen05.mma.cta_group::1.kind::f16 [%r0], [%r4], %rd2, %r1, 1;", arch="sm_100a")
    (finding,) = scanned.findings
    assert finding.code == "SMEM-VERSION-CONST" and "descgen port WORD --to sm_100a" in str(finding)


def test_dir_of_descgen_is_its_public_api() -> None:
    import descgen

    assert dir(descgen) == sorted(descgen.__all__)
    assert "annotations" not in dir(descgen) and "TYPE_CHECKING" not in dir(descgen) and "engine" not in dir(descgen)
    assert "encode_idesc" in dir(descgen) and "scan_ptx" in dir(descgen)  # lazy exports too


def test_rule_text_is_never_read_as_rich_markup() -> None:
    """CONTEXT-ARCH's rule says "(one of [targets])": on a terminal it is text, not a markup tag."""
    table = run("explain", "CONTEXT-ARCH", "--table", "--no-pager").stdout
    assert "(one of [targets])" in table


# --------------------------------------------------------------------------------------------
# port: a word already in the target family, and an idesc.


def test_port_of_a_word_already_in_the_target_family_changes_nothing() -> None:
    result = run("port", "0x4000404000010040", "--to", "sm_100a")
    assert result.stdout.splitlines()[:4] == ["word=0x4000404000010040", "from=sm_100a smem 0x4000404000010040",
                                              "to=sm_100a smem 0x4000404000010040", "flipped=0x0000000000000000"]
    assert result.stderr.startswith("note: 0x4000404000010040 is already a tcgen05 (sm_100a) descriptor")
    import descgen

    ported = descgen.port_smem(0x4000404000010040, to="sm_100a")
    assert ported.word == 0x4000404000010040 and ported.changes == () and "nothing to port" in ported.note
    assert run("port", "0x4000004000010040", "--to", "sm_90a").stdout.splitlines()[0] == "word=0x4000004000010040"


def test_port_refuses_an_instruction_descriptor() -> None:
    refused = run("port", "0x08400010", "--to", "sm_90a", code=2)
    assert (refused.stdout == ""
            and "0x08400010 is an instruction descriptor (consistent with .kind::f16" in refused.stderr)
    assert "PORT-WORD" in refused.stderr
    # neither family's
    assert "PORT-WORD-INVALID" in run("port", "0xffffffffffffffff", "--to", "sm_100a", code=1).stderr


# --------------------------------------------------------------------------------------------
# Tensor memory addresses: tried by decode, taken by batch.


def test_decode_tries_a_tensor_memory_address() -> None:
    piped = run("decode", "0x00600100")
    assert piped.stdout.splitlines()[:6] == ["descriptor=taddr", "layout=taddr", "word=0x00600100", "ok=true",
                                             "column=256", "lane=96"]
    assert piped.stderr.startswith("note: 0x00600100 read as a tensor memory address")
    assert run("decode", "0x00600100", "--short").stdout == "0x00600100  taddr: column 256, lane 96; no findings\n"
    assert json.loads(run("decode", "0x00600100", "--json").stdout)["input"]["as"] == "taddr"
    # an instruction descriptor is never one (its M sets bits 24-28): 0x08400010 reads as before
    assert run("decode", "0x08400010").stdout.splitlines()[:2] == ["word=0x08400010", "consistent=f16,f8f6f4"]
    assert "consistent=" in run("decode", "0x00600100", "--as", "idesc", code=1).stdout


def test_batch_takes_tensor_memory_addresses() -> None:
    lines = ['{"op": "encode", "descriptor": "taddr", "lane": 32, "column": 0}',
             '{"op": "decode", "descriptor": "taddr", "word": "0x00600100"}',
             '{"op": "validate", "descriptor": "taddr", "word": "0x00200000", "warp": 0}',
             '{"op": "decode", "word": "0x00600100"}',
             '{"op": "decode", "descriptor": "matrix", "word": 1}']
    encoded, decoded, validated, bare, unknown = (json.loads(x)
                                                  for x in run("batch", input="\n".join(lines)).stdout.splitlines())
    assert encoded["ok"] and encoded["word"] == "0x00200000"
    assert decoded["fields"] == {"column": 256, "lane": 96}
    assert not validated["ok"] and [f["code"] for f in validated["findings"]] == ["TADDR-WARP-LANES"]
    assert bare["consistent"] == ["taddr"]
    assert unknown["error"]["findings"][0]["allowed"] == "idesc, smem, zcm, taddr, wgmma_smem"
    assert all(d in unknown["error"]["message"] for d in ("taddr", "wgmma_smem"))  # (its allowed list: identify's)


# --------------------------------------------------------------------------------------------
# Targets (E49).


def test_e49_a_bare_target_has_no_tcgen05() -> None:
    for args in (("idesc", "--kind", "f16", "--m", "128", "--n", "256"),
                 ("smem", "--start-address", "0x400", "--lbo", "16", "--sbo", "1024", "--swizzle", "128B")):
        refused = run(*args, "--arch", "sm_110", code=2).stderr
        assert "'sm_110' has no tcgen05" in refused and "sm_110a" in refused and "sm_110f" in refused
        assert run(*args, "--arch", "sm_110a").exit_code == 0 and run(*args, "--arch", "sm_110f").exit_code == 0


def test_e49_a_tcgen05_command_refuses_sm_90a_at_parse_time() -> None:
    refused = run("idesc", "--kind", "f16", "--m", "128", "--n", "256", "--arch", "sm_90a", code=2).stderr
    assert "'sm_90a' is Hopper's target (wgmma); --arch here takes a tcgen05 target" in refused
    assert refused.rstrip().endswith("one of sm_100a, sm_100f, sm_103a, sm_103f, sm_110a, sm_110f")
    assert run("smem", "--start-address", "0x400", "--lbo", "16", "--sbo", "1024", "--swizzle", "128B",
               "--arch", "sm_90a").stdout == "0x4000004000010040\n"
    short = run("decode", "0x4000004000010040", "--arch", "sm_90a", "--short").stdout
    assert short.startswith("0x4000004000010040  wgmma_smem: start 0x400")
