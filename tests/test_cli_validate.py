"""The validation commands: ``descgen validate | check | explain | rules``, the context options
(also on ``decode`` and the encoders), their output modes and exit statuses."""

from __future__ import annotations

import json
import shlex

import pytest

from descgen.cli import cli

from test_cli import run, run_module_piped  # the in-process runner: exit status checked, no traceback leaks
from descgen.model.catalog import catalog, layout_table
from descgen.codes import all_codes, field_codes, usage_codes
from descgen.examples import example, rules_markdown

CATALOG = catalog()

# A word and its instruction, checked by hand against PTX (see the catalog examples of
# tables/rules.toml): f16, M = 128, N = 8, K-major, f32 <- f16 x f16.
F16_N8 = "0x08020010"  # N = 8: legal for cta_group::1, not for cta_group::2 (N steps by 16)
F16_OK = "0x08400010"  # M = 128, N = 256: legal in every context of .kind::f16
# Shared memory descriptors: K-major 128B swizzle at 0x400 / 0x4400, LBO 16, SBO 1024.
ADESC = "0x4000404000010040"
BDESC = "0x4000404000010440"
# The same B with SBO 1024 at 0x4400 but LBO 8192: ignored for K-major swizzled (warning).
ADESC_LBO = "0x4000404002000040"
# tf32 with B MN-major (b_major = mn) and a B descriptor with 128B (16B atomicity) swizzle.
TF32_BT = "0x08210910"
BDESC_128B = "0x4000404002000440"
ZCM_WORD = "0x0002018000000000"  # skip 2, use 3 columns

# The complete idesc context: with it no idesc rule is left unchecked for .kind::f16.
F16_FULL = ["--cta-group", "1", "--no-ws", "--no-sp", "--no-a-tmem", "--arch", "sm_100a"]


def run_json(*args: str, code: int = 0) -> dict:
    doc = json.loads(run(*args, "--json", code=code).stdout)
    assert doc["descgen"] == 1
    return doc


def codes(doc: dict) -> list[str]:
    return [f["code"] for f in doc["result"]["findings"]]


def not_checked(doc: dict) -> list[str]:
    return [n["code"] for n in doc["result"]["not_checked"]]


# --------------------------------------------------------------------------------------------
# Exit status.


def test_validate_clean_exits_0_and_prints_nothing_piped():
    result = run("validate", F16_N8, "--kind", "f16", "--cta-group", "1")
    assert result.stdout == ""


def test_validate_error_finding_exits_1_with_one_line_per_finding():
    result = run("validate", F16_N8, "--kind", "f16", "--cta-group", "2", code=1)
    lines = result.stdout.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error IDESC-N-SHAPE n=8: N must be one Table 39 lists")
    assert lines[0].endswith("[Table 39 (E11)]")


def test_exit_zero_keeps_the_output():
    failing = run("validate", F16_N8, "--kind", "f16", "--cta-group", "2", code=1).stdout
    result = run("validate", F16_N8, "--kind", "f16", "--cta-group", "2", "--exit-zero", code=0)
    assert result.stdout == failing != ""
    run("check", "--idesc", TF32_BT, "--adesc", ADESC, "--bdesc", BDESC_128B, "--kind", "tf32", code=1)
    run("check", "--idesc", TF32_BT, "--adesc", ADESC, "--bdesc", BDESC_128B, "--kind", "tf32", "--exit-zero", code=0)


def test_note_only_exits_0():
    # E43: a field the hardware ignores is a note, like an ignored base offset (E39)
    result = run("check", "--idesc", "0x08200010", "--adesc", ADESC_LBO, "--bdesc", BDESC, "--kind", "f16")
    assert result.stdout.startswith("info MMA-LBO-IGNORED a_desc.lbo=8192: ")


@pytest.mark.parametrize("args, words", [
    # sm_90a is a target (it selects the wgmma shared memory descriptor), but no tcgen05 one
    (["validate", F16_OK, "--kind", "f16", "--arch", "sm_90a"], ["'sm_90a'", "tcgen05 needs", "sm_100a", "sm_103a"]),
    (["validate", F16_OK, "--kind", "f16", "--scale-vec", "3X"], ["'3X' is not a scale vector size", "block16"]),
    (["validate", F16_OK, "--kind", "f16", "--cta-group", "3"], ["'3' is not one of 1, 2"]),
    (["validate", ADESC, "--as", "smem", "--kind", "f16"], ["--kind applies to instruction descriptors"]),
    (["validate", F16_OK, "--kind", "f16", "--pattern-start", "0x400"], ["--pattern-start does not apply", "--arch"]),
    (["validate", ADESC, "--as", "smem", "--cta-group", "2", "--ws"], ["--cta-group, --ws do not apply"]),
    (["validate", ZCM_WORD, "--as", "zcm", "--arch", "sm_100a"], ["--arch does not apply", "--m, --n"]),
    (["validate", "0x1" + "0" * 16, "--kind", "f16"], ["65 bits"]),  # wider than a runtime idesc
    (["explain", "IDESC-N-SHAP"], ["unknown code 'IDESC-N-SHAP'", "did you mean IDESC-N-SHAPE"]),
    (["explain", "NOPE"], ["unknown code 'NOPE'", "descgen rules lists every code"]),
    (["check", "--idesc", F16_OK, "--bdesc", BDESC, "--kind", "f16"], ["--adesc WORD", "--a-tmem"]),
    (["check", "--idesc", F16_OK, "--bdesc", BDESC, "--kind", "f16", "--no-a-tmem"], ["--adesc WORD", "--a-tmem"]),
    (["check", "--idesc", F16_OK, "--adesc", ADESC, "--bdesc", BDESC, "--kind", "f16", "--a-tmem"],
     ["exclude each other"]),
    (["check", "--idesc", F16_OK, "--adesc", ADESC, "--kind", "f16"], ["Missing option", "--bdesc"]),
    (["check", "--idesc", F16_OK, "--adesc", ADESC, "--bdesc", BDESC, "--kind", "f16", "--pattern-start", "0"],
     ["No such option"]),
    (["rules", "--applies", "tmem"], ["'tmem' is not one of"]),
    (["rules", "--markdown", "--json"], ["--markdown"]),
    (["rules", "--markdown", "--applies", "smem"], ["--applies"]),
    (["decode", F16_OK, "--pattern-start", "0x400"], ["--pattern-start does not apply", "--as smem"]),
    (["decode", ADESC, "--cta-group", "2"], ["--cta-group does not apply"]),
    (["idesc", "--kind", "f16", "--m", "128", "--n", "256", "--arch", "sm_8"], ["'sm_8' is not a target"]),
])
def test_usage_errors_exit_2(args, words):
    result = run(*args, code=2)
    assert "--json" in args or result.stdout == ""
    for w in words:
        assert w in result.stderr, result.stderr


def test_usage_error_json_envelope():
    result = run("check", "--idesc", F16_OK, "--bdesc", BDESC, "--kind", "f16", "--json", code=2)
    doc = json.loads(result.stdout)
    assert doc["command"] == "check" and doc["error"]["type"] == "UsageError"
    assert "--a-tmem" in doc["error"]["message"]


# --------------------------------------------------------------------------------------------
# Context options: spellings, tri-state flags, normalization.


@pytest.mark.parametrize("spelling", ["2X", "2x", "scale_vec::2X", ".scale_vec::2X"])
def test_scale_vec_spellings(spelling):
    doc = run_json("validate", "0x48a00480", "--kind", "mxf4", "--scale-vec", spelling)
    assert doc["input"]["scale_vec"] == "2X"
    assert doc["result"]["context"] == {"scale_vec": "2X"}


def test_block_spelling_and_arch_alias():
    doc = run_json("validate", "0x90a00480", "--kind", "mxf4", "--scale-vec", ".block32", "--arch", "SM_101A",
                   code=1)
    assert doc["result"]["context"] == {"scale_vec": "block32", "arch": "sm_110a"}
    assert codes(doc) == ["IDESC-K96-ARCH"]  # K = 96 only on sm_103a


def test_flags_are_not_given_by_default():
    doc = run_json("validate", F16_OK, "--kind", "f16")
    assert [doc["input"][k] for k in ("ws", "sp", "a_tmem", "cta_group", "arch", "scale_vec")] == [None] * 6
    assert doc["result"]["context"] == {}
    assert "IDESC-SPARSE-SP" in not_checked(doc)
    doc = run_json("validate", F16_OK, "--kind", "f16", "--no-sp", "--no-ws", "--no-a-tmem")
    assert doc["result"]["context"] == {"ws": False, "sp": False, "a_tmem": False}
    assert "IDESC-SPARSE-SP" not in not_checked(doc)
    doc = run_json("validate", F16_OK, "--kind", "f16", "--sp", code=1)
    assert codes(doc) == ["IDESC-SPARSE-SP"]


# --------------------------------------------------------------------------------------------
# JSON envelopes.


def test_validate_json_envelope():
    doc = run_json("validate", F16_N8, "--kind", "f16", "--cta-group", "2", code=1)
    assert doc["command"] == "validate"
    assert doc["input"]["word"] == F16_N8 and doc["input"]["as"] == "idesc" and doc["input"]["cta_group"] == 2
    result = doc["result"]
    assert result["ok"] is False
    assert codes(doc) == ["IDESC-N-SHAPE"]
    finding = result["findings"][0]
    assert (finding["field"], finding["value"], finding["allowed"]) == ("n", 8, "16..256 step 16")
    assert result["decoded"]["idesc"]["word"] == F16_N8
    assert {"code", "missing", "rule", "source"} <= set(result["not_checked"][0])


def test_validate_smem_and_zcm_json():
    doc = run_json("validate", "0x4000404000010058", "--as", "smem", "--pattern-start", "0x580", code=1)
    assert codes(doc) == ["SMEM-BASE-OFFSET-TABLE41"]
    assert doc["input"]["pattern_start"] == 0x580 and doc["input"]["word"] == "0x4000404000010058"
    assert list(doc["result"]["decoded"]) == ["smem"]
    doc = run_json("validate", "0x1802018000000000", "--as", "zcm", "--m", "32", "--n", "128", code=1)
    assert codes(doc) == ["ZCM-COLUMN-SHIFT-M"]
    assert list(doc["result"]["decoded"]) == ["zcm"]


def test_check_json_envelope_prefixes_fields():
    doc = run_json("check", "--idesc", TF32_BT, "--adesc", ADESC, "--bdesc", BDESC_128B, "--kind", "tf32", code=1)
    assert doc["command"] == "check"
    assert doc["input"]["bdesc"] == BDESC_128B and doc["input"]["kind"] == "tf32"
    assert [(f["code"], f["field"]) for f in doc["result"]["findings"]] == [("MMA-SWIZZLE-TABLE52", "b_desc.swizzle")]
    assert list(doc["result"]["decoded"]) == ["idesc", "a_desc", "b_desc"]


# --------------------------------------------------------------------------------------------
# -v: the rules not checked.


def test_verbose_lists_not_checked_rules():
    quiet = run("validate", F16_OK, "--kind", "f16").stdout
    loud = run("validate", F16_OK, "--kind", "f16", "-v").stdout.splitlines()
    assert quiet == ""
    assert "not-checked IDESC-SPARSE-SP needs=sp: the Sparsity bit must match the instruction: " \
           "1 for tcgen05.mma.sp, 0 otherwise [Table 42, bit 2; §9.7.16.10.8]" in loud
    assert any(line.startswith("not-checked IDESC-KIND-ARCH needs=arch") for line in
               run("validate", "0x08200020", "--kind", "i8", "-v").stdout.splitlines())
    assert all(line.startswith("not-checked ") for line in loud)


def test_verbose_lists_nothing_when_the_context_is_complete():
    assert run("validate", F16_OK, "--kind", "f16", *F16_FULL, "-v").stdout == ""
    assert run_json("validate", F16_OK, "--kind", "f16", *F16_FULL)["result"]["not_checked"] == []
    out = run("validate", F16_OK, "--kind", "f16", *F16_FULL, "-v", "--table").stdout
    assert "every rule was checked" in out
    out = run("validate", F16_OK, "--kind", "f16", "-v", "--table").stdout
    assert "Not checked" in out and "IDESC-SPARSE-SP" in out and "--sp" in out


def test_table_without_verbose_counts_the_rules_not_checked():
    out = run("validate", F16_N8, "--kind", "f16", "--cta-group", "2", "--table", code=1).stdout
    assert "IDESC-N-SHAPE" in out and "allowed: 16..256 step 16" in out and "Table 39 (E11)" in out
    assert "context: cta_group = 2" in out
    assert "1 error" in out and "not checked for missing context (-v lists them)" in out
    assert "IDESC-SPARSE-SP" not in out


# --------------------------------------------------------------------------------------------
# Every catalog example, as its command line prints it.


EXAMPLES = [(code, which) for code in CATALOG for which in ("legal", "illegal")]


@pytest.mark.parametrize("code, which", EXAMPLES, ids=[f"{c}-{w}" for c, w in EXAMPLES])
def test_every_catalog_example_command_runs_as_printed(code, which):
    rule = CATALOG[code]
    ex = example(getattr(rule, which))
    if ex.as_ == "ptx":
        return _ptx_example_runs_as_printed(code, which, ex)
    argv = shlex.split(ex.command())
    assert argv[0] == "descgen" and argv[1] in ("validate", "check")
    expected = ex.run()
    result = run(*argv[1:], "--json", code=None)
    doc = json.loads(result.stdout)
    assert result.exit_code == (0 if expected.ok else 1), (ex.command(), result.stderr)
    got = codes(doc)
    assert got == list(expected.codes)
    if which == "illegal":
        assert code in got, ex.command()
    else:
        assert code not in got, ex.command()
    # The plain form carries the same codes, one line each.
    lines = run(*argv[1:], code=None).stdout.splitlines()
    assert [line.split()[1] for line in lines] == got


def _ptx_example_runs_as_printed(code, which, ex):
    """A PTX example prints ``printf '%s\\n' 'LINE' ... | descgen scan - [--arch T]``: feed the lines
    to ``descgen scan -`` (descgen/scan.py)."""
    from test_cli import _runner

    head, _, tail = ex.command().partition(" | ")
    printf = shlex.split(head)
    assert printf[:2] == ["printf", "%s\\n"]
    stdin = "".join(line + "\n" for line in printf[2:])
    argv = shlex.split(tail)
    assert argv[:3] == ["descgen", "scan", "-"]
    expected = ex.run()
    result = _runner().invoke(cli, [*argv[1:], "--json"], input=stdin)
    assert result.exit_code == (0 if expected.ok else 1), (ex.command(), result.stderr)
    docs = [json.loads(line) for line in result.stdout.splitlines()]  # JSON lines, streamed
    got = [f["code"] for d in docs if d["type"] in ("instruction", "finding")
           for f in (d["findings"] if d["type"] == "instruction" else [d])]
    assert sorted(got) == sorted(expected.codes)
    assert (code in got) == (which == "illegal"), ex.command()
    # The compiler-style form carries the errors and warnings, one line each: FILE:LINE: severity:
    # CODE ...; -v adds the notes (E38)
    lines = _runner().invoke(cli, argv[1:], input=stdin).stdout.splitlines()
    severe = [f.code for f in expected.findings if f.severity != "info"]
    assert [line.split()[2] for line in lines] == severe
    lines = _runner().invoke(cli, [*argv[1:], "-v"], input=stdin).stdout.splitlines()
    assert sorted(line.split()[2] for line in lines
                  if line.split()[1] in ("error:", "warning:", "note:")) == sorted(got)


# --------------------------------------------------------------------------------------------
# check: one instruction, findings grouped by word.


def test_check_plain_groups_findings_by_word():
    # .ws with cta_group::2 (idesc), A MN-major with an absolute-LBO A descriptor (a rule between
    # words, found last), B starting 0x580 past a 1024-byte boundary with base offset 0 (B's own
    # warning), a zcm with sub-mask 1's start count set for M = 128 (the zcm's own warning).
    args = ["check", "--idesc", "0x08208010", "--adesc", "0x4010404000800040", "--bdesc", "0x4000404000010458",
            "--zcm", "0x0002018000000400", "--kind", "f16", "--ws", "--cta-group", "2"]
    lines = run(*args, code=1).stdout.splitlines()
    found = [(line.split()[1], line.split()[2].split("=")[0]) for line in lines]
    assert found == [
        ("MMA-WS-CTA-GROUP", "cta_group"),
        ("MMA-LBO-MODE-MAJOR", "a_desc.lbo_mode"),
        ("SMEM-BASE-OFFSET-BOUNDARY", "b_desc.base_offset"),
        ("ZCM-SUBMASK-UNUSED", "zcm.start_count_1"),
    ]
    # JSON keeps the library's order (each word's own findings, then the rules between words).
    doc = run_json(*args, code=1)
    assert codes(doc) == ["MMA-WS-CTA-GROUP", "SMEM-BASE-OFFSET-BOUNDARY", "ZCM-SUBMASK-UNUSED", "MMA-LBO-MODE-MAJOR"]
    out = run(*args, "--table", code=1).stdout
    order = [out.index(s) for s in ("idesc ", "MMA-WS-CTA-GROUP", "a_desc ", "MMA-LBO-MODE-MAJOR", "b_desc ",
                                    "SMEM-BASE-OFFSET-BOUNDARY", "zcm ", "ZCM-SUBMASK-UNUSED")]
    assert order == sorted(order)
    assert "2 errors, 2 warnings" in out


def test_check_a_in_tensor_memory():
    doc = run_json("check", "--idesc", "0x08208010", "--a-tmem", "--bdesc", BDESC, "--kind", "f16", code=1)
    assert codes(doc) == ["IDESC-A-MAJOR-TMEM"]
    assert doc["input"]["adesc"] is None and doc["input"]["a_tmem"] is True
    out = run("check", "--idesc", "0x08200010", "--a-tmem", "--bdesc", BDESC, "--kind", "f16", "--table").stdout
    assert "A in tensor memory" in out


def test_check_verbose_points_pattern_start_elsewhere():
    lines = run("check", "--idesc", "0x08200010", "--adesc", ADESC, "--bdesc", BDESC, "--kind", "f16", "-v").stdout
    assert "not-checked SMEM-BASE-OFFSET-TABLE41 needs=pattern_start" in lines
    out = run("check", "--idesc", "0x08200010", "--adesc", ADESC, "--bdesc", BDESC, "--kind", "f16", "-v",
              "--table").stdout
    assert "--pattern-start*" in out and "--a-pattern-start / --b-pattern-start" in " ".join(out.split())


def test_check_zcm_takes_m_and_n_from_the_idesc():
    # M = 128 uses sub-mask 0 only: start count 1 set is ignored (warning) - known only from the idesc.
    doc = run_json("check", "--idesc", F16_OK, "--adesc", ADESC, "--bdesc", BDESC, "--zcm", "0x0002018000000400",
                   "--kind", "f16", "--ws")
    assert codes(doc) == ["ZCM-SUBMASK-UNUSED"]
    assert doc["result"]["findings"][0]["field"] == "zcm.start_count_1"


# --------------------------------------------------------------------------------------------
# explain.


def test_explain_catalog_code_plain():
    lines = run("explain", "idesc-n-shape").stdout.splitlines()
    rule = CATALOG["IDESC-N-SHAPE"]
    legal, illegal = example(rule.legal), example(rule.illegal)
    assert "code=IDESC-N-SHAPE" in lines and "severity=error" in lines and "applies=idesc" in lines
    assert "uses=cta_group,ws" in lines and "origin=catalog" in lines
    assert f"rule={rule.rule}" in lines and f"source={rule.source}" in lines
    assert f"legal={legal.command()}" in lines and "legal.reports=clean" in lines
    assert f"illegal={illegal.command()}" in lines and "illegal.reports=error IDESC-N-SHAPE" in lines


def test_explain_catalog_code_json_and_table():
    doc = run_json("explain", "SMEM-BASE-OFFSET-TABLE41")
    result = doc["result"]
    assert result["code"] == "SMEM-BASE-OFFSET-TABLE41" and result["needs"] == ["pattern_start"]
    assert result["examples"]["legal"]["shows"] is False and result["examples"]["legal"]["ok"] is True
    assert result["examples"]["illegal"]["shows"] is True
    assert "--pattern-start 0x580" in result["examples"]["illegal"]["command"]
    out = run("explain", "SMEM-BASE-OFFSET-TABLE41", "--table").stdout
    assert "Illegal example" in out and "Table 41 and the formula" in out
    assert f"$ {result['examples']['illegal']['command']}\n" in out  # whole, on one line
    assert "--pattern-start" in out.split("needs", 1)[1].splitlines()[0]
    out = run("explain", "MMA-LBO-MODE-MAJOR", "--table").stdout
    assert f"$ {example(CATALOG['MMA-LBO-MODE-MAJOR'].legal).command()}\n" in out


def test_explain_field_code():
    lines = run("explain", "IDESC-N-RANGE").stdout.splitlines()
    rule = field_codes()["IDESC-N-RANGE"]
    assert "origin=field" in lines and f"rule={rule.rule}" in lines and f"source={rule.source}" in lines
    # generated from the layout table: the field's value one step out of its domain, and the nearest legal one
    assert "illegal=descgen.encode('idesc_dense', 'f16', m=128, n=264)" in lines
    assert "illegal.reports=raises EncodeError: error IDESC-N-RANGE" in lines and "legal.reports=clean" in lines
    # Table 42: bits 17-22, N >> 3; i8 N: 8..32 step 8 then 48..256 step 16 (Table 39).
    assert "where=idesc_dense bits 17-22: tf32, f16, f8f6f4: 8..256 step 8; i8: 8..32 step 8, 48..256 step 16" in lines
    doc = run_json("explain", "smem-reserved-14")
    assert doc["result"]["origin"] == "field" and doc["result"]["examples"]["illegal"]["shows"] is True
    assert doc["result"]["layouts"] == [{"layout": "smem_desc", "source": "§9.7.16.4.1, Table 40",
                                         "field": "reserved_14", "bits": "14-15", "domains": {"": "0"}}]
    out = run("explain", "IDESC-N-RANGE", "--table").stdout
    assert "the field's own check" in out and "bits 17-22" in out


def test_explain_usage_code():
    lines = run("explain", "context-arch").stdout.splitlines()
    assert "code=CONTEXT-ARCH" in lines and "origin=usage" in lines and "applies=context" in lines
    assert not any(line.startswith("where=") for line in lines)
    assert "illegal=descgen.validate_idesc(0x08100010, 'f16', arch='sm_80')" in lines
    assert "illegal.reports=raises UsageError: error CONTEXT-ARCH" in lines
    assert "usage error" in run("explain", "MMA-A-OPERAND", "--table").stdout


# --------------------------------------------------------------------------------------------
# rules.


def test_rules_lists_every_code():
    lines = run("rules").stdout.splitlines()
    assert [line.split()[0] for line in lines] == [*catalog(), *field_codes(), *layout_table(), *usage_codes()]
    assert set(all_codes()) == {line.split()[0] for line in lines}
    assert len(lines) == len(all_codes())
    doc = run_json("rules")
    assert [r["code"] for r in doc["result"]["rules"]] == [*catalog(), *field_codes(), *layout_table(), *usage_codes()]
    assert {r["origin"] for r in doc["result"]["rules"]} == {"catalog", "field", "layout", "usage"}


def test_rules_applies_filter():
    lines = run("rules", "--applies", "mma").stdout.splitlines()
    everything = {**catalog(), **field_codes(), **layout_table(), **usage_codes()}
    assert [line.split()[0] for line in lines] == [c for c, r in everything.items() if r.applies == "mma"]
    assert "MMA-SWIZZLE-TABLE52" in lines[0]
    smem = [line.split()[0] for line in run("rules", "--applies", "smem").stdout.splitlines()]
    assert "SMEM-RESERVED-14" in smem and "SMEM-LBO-MODE-ARCH" in smem and not any(c.startswith("IDESC") for c in smem)
    assert "SMEM-START-ADDRESS-CARRY" in smem  # advance_smem's, a [[layout]] code
    tiles = [line.split()[0] for line in run("rules", "--applies", "layout").stdout.splitlines()]
    assert tiles == [c for c, r in layout_table().items() if r.applies == "layout"]
    assert "LAYOUT-TABLE52" in tiles and "LAYOUT-MN-ATOM" in tiles and "LAYOUT-K-RANGE" in tiles


def test_rules_markdown_is_the_generated_page():
    assert run("rules", "--markdown").stdout == rules_markdown()


def test_rules_table_shows_every_code():
    out = run("rules", "--table").stdout
    for code in all_codes():
        assert code in out
    assert f"{len(all_codes())} codes" in out


# --------------------------------------------------------------------------------------------
# decode and the encoders take the context too.


def test_decode_validates_with_the_context():
    run("decode", F16_N8, "--kind", "f16")
    lines = run("decode", F16_N8, "--kind", "f16", "--cta-group", "2", code=1).stdout.splitlines()
    assert "ok=false" in lines and any(line.startswith("finding=error IDESC-N-SHAPE") for line in lines)
    doc = run_json("decode", F16_N8, "--kind", "f16", "--cta-group", "2", code=1)
    assert [f["code"] for f in doc["result"]["findings"]] == ["IDESC-N-SHAPE"]
    assert doc["input"]["cta_group"] == 2


def test_decode_context_narrows_the_consistent_kinds():
    # 0x08200020: i8 (u8 x u8 -> s32), M = N = 128; .kind::i8 is not supported on sm_100f.
    assert "consistent=i8" in run("decode", "0x08200020").stdout.splitlines()
    result = run("decode", "0x08200020", "--arch", "sm_100f", code=1)
    assert "consistent=" in result.stdout.splitlines()
    assert "i8.first_error=error IDESC-KIND-ARCH" in result.stdout


def test_decode_verbose_lists_not_checked():
    lines = run("decode", F16_OK, "--kind", "f16").stdout.splitlines()
    assert not any(line.startswith("not_checked=") for line in lines)
    lines = run("decode", F16_OK, "--kind", "f16", "-v").stdout.splitlines()
    assert any(line.startswith("not_checked=IDESC-SPARSE-SP needs=sp: ") for line in lines)
    lines = run("decode", F16_OK, "--kind", "f16", "-v", *F16_FULL).stdout.splitlines()
    assert not any(line.startswith("not_checked=") for line in lines)
    doc = run_json("decode", F16_OK, "--kind", "f16")
    assert "IDESC-SPARSE-SP" in [n["code"] for n in doc["result"]["not_checked"]]
    out = run("decode", F16_OK, "--kind", "f16", "-v", "--table").stdout
    assert "Not checked" in out and "IDESC-SPARSE-SP" in out
    lines = run("decode", F16_OK, "-v").stdout.splitlines()
    assert any(line.startswith("f16.not_checked=IDESC-SPARSE-SP") for line in lines)


def test_decode_zcm_m_breaking_a_rule_is_a_finding():
    result = run("decode", ZCM_WORD, "--as", "zcm", "--m", "48", "--n", "64", code=1)
    assert any(line.startswith("finding=error ZCM-M: m = 48") for line in result.stdout.splitlines())
    assert not any(line.startswith("mask") for line in result.stdout.splitlines())
    doc = run_json("decode", ZCM_WORD, "--as", "zcm", "--m", "128", "--n", "64", "--no-ws", code=1)
    assert [f["code"] for f in doc["result"]["findings"]] == ["ZCM-WS"]
    assert doc["mask"]["m"] == 128


@pytest.mark.parametrize("args, word, code", [
    (["idesc", "--kind", "f16", "--m", "256", "--n", "128"], "0x10200010", None),
    (["idesc", "--kind", "f16", "--m", "256", "--n", "128", "--cta-group", "2"], "0x10200010", None),
    # (tf32, not f16: descgen.words.idesc's fast-path cache takes cta_group=1 for True, and an f16 entry
    # would hide tests/test_validate.py's cta_group=True usage error when it runs after this.)
    (["idesc", "--kind", "tf32", "--m", "256", "--n", "128", "--cta-group", "1"], None, "IDESC-M-SHAPE"),
    (["idesc", "--kind", "mxf4", "--m", "128", "--n", "128", "--a-sf-id", "1", "--scale-vec", "2X"], None,
     "IDESC-A-SF-ID-SCALE-VEC"),
    (["idesc", "--kind", "f16", "--m", "128", "--n", "128", "--ws", "--cta-group", "2"], None, "MMA-WS-CTA-GROUP"),
    (["smem", "--start-address", "0x580", "--lbo", "16", "--sbo", "1024", "--swizzle", "128B", "--base-offset", "3",
      "--pattern-start", "0x580"], "0x4006404000010058", None),
    (["smem", "--start-address", "0x580", "--lbo", "16", "--sbo", "1024", "--swizzle", "128B",
      "--pattern-start", "0x580"], None, "SMEM-BASE-OFFSET-TABLE41"),
    (["smem", "--start-address", "0x400", "--lbo", "0x800", "--sbo", "1024", "--swizzle", "128B",
      "--lbo-mode", "absolute", "--arch", "sm_100a"], None, "SMEM-LBO-MODE-ARCH"),
    (["zcm", "--skip-span", "2", "--use-span", "3", "--ws"], ZCM_WORD, None),
    (["zcm", "--skip-span", "2", "--use-span", "3", "--no-ws"], None, "ZCM-WS"),
    (["zcm", "--skip-span", "2", "--use-span", "3", "--column-shift", "24", "--m", "32", "--n", "128"], None,
     "ZCM-COLUMN-SHIFT-M"),
])
def test_encoders_take_the_context(args, word, code):
    if code is None:
        assert run(*args).stdout == word + "\n"
    else:
        result = run(*args, code=1)
        assert result.stdout == "" and code in result.stderr


def test_encoder_json_input_carries_the_context():
    doc = run_json("idesc", "--kind", "f16", "--m", "256", "--n", "128", "--cta-group", "2", "--arch", "sm_101a")
    assert doc["input"]["cta_group"] == 2 and doc["input"]["arch"] == "sm_110a" and doc["input"]["ws"] is None
    doc = run_json("smem", "--start-address", "0x580", "--lbo", "16", "--sbo", "1024", "--swizzle", "128B",
                   "--base-offset", "3", "--pattern-start", "0x580")
    assert doc["input"]["pattern_start"] == 0x580
    # With the pattern start given, the boundary warning (a guess without it) is not reported.
    assert doc["result"]["findings"] == []


# --------------------------------------------------------------------------------------------
# Help and startup.


def test_help_mentions_the_validation_commands():
    out = run("--help").stdout
    for name in ("validate", "check", "explain", "rules"):
        assert f"  {name} " in out
    assert "--exit-zero" in out and "--cta-group" in out
    out = run("validate", "--help").stdout
    for option in ("--cta-group", "--ws / --no-ws", "--sp / --no-sp", "--scale-vec", "--a-tmem / --no-a-tmem", "--arch",
                   "--pattern-start", "--exit-zero", "-v, --verbose"):
        assert option in out, option


@pytest.mark.parametrize("argv", [
    ["--help"],
    ["validate", F16_N8, "--kind", "f16", "--cta-group", "2", "--exit-zero"],
    ["check", "--idesc", TF32_BT, "--adesc", ADESC, "--bdesc", BDESC_128B, "--kind", "tf32", "--json", "--exit-zero"],
    ["explain", "IDESC-N-SHAPE"],
    ["rules", "--markdown"],
])
def test_startup_and_piped_output_do_not_import_rich(argv):
    assert run_module_piped(*argv)[-1] == "heavy: []"


def test_check_takes_a_pattern_start_per_operand():
    """Table 41 exactly, per operand: A's pattern starts at 0x580 (base offset 3 needed), B's on
    its boundary."""
    a0 = "0x4000404000010058"  # start 0x580, base offset 0, 128B
    b = "0x4000404000010440"
    args = ("check", "--idesc", "0x08400010", "--kind", "f16", "--adesc", a0, "--bdesc", b)
    doc = run_json(*args, "--a-pattern-start", "0x580", "--b-pattern-start", "0x4400", code=1)
    codes = [(f["code"], f["field"]) for f in doc["result"]["findings"]]
    assert ("SMEM-BASE-OFFSET-TABLE41", "a_desc.base_offset") in codes
    assert not any(field.startswith("b_desc") for _, field in codes)
    assert doc["input"]["a_pattern_start"] == 0x580
    clean = run_json(*args, "--b-pattern-start", "0x4400", code=0)
    assert "SMEM-BASE-OFFSET-TABLE41" not in {f["code"] for f in clean["result"]["findings"]}


@pytest.mark.parametrize("word, note", [
    (F16_OK, "note: 0x08400010 read as .kind::f16 (the first reading with no error finding; also consistent: "
             ".kind::f8f6f4); give --kind to choose"),
    (ADESC, "note: 0x4000404000010040 read as smem (the first reading with no error finding); give --as to choose"),
    # CUTLASS's runtime idesc: read as an idesc, but written as the 64-bit word that was given
    ("0x0841049000000000", "note: 0x0841049000000000 read as .kind::f16 (the first reading with no error finding; "
                           "also consistent: .kind::f8f6f4); give --kind to choose"),
])
def test_validate_of_a_bare_word_says_which_reading_it_checked(word: str, note: str) -> None:
    """Without --as/--kind, validate says on stderr which reading it checked, the word written at
    the width of what was given (8 hex digits for a 32-bit idesc, 16 otherwise)."""
    assert run("validate", word, "--plain").stderr.splitlines()[0] == note
    assert run_json("validate", word)["input"]["word"] == word
