"""Hopper ``wgmma.mma_async{.sp}`` checked as a whole (:func:`descgen.check_wgmma`, PTX ISA 9.1
§9.7.15): the shapes of §9.7.15.2, the type combinations of §9.7.15.3, the immediates of
§9.7.15.5.2 / §9.7.15.6.3, and the descriptors against the major-ness the transpose gives;
``tables/wgmma_shapes.toml`` against the spec's values; the scanner's wgmma syntax and target
rules (E46).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from descgen import KnownBits, TableError, check_wgmma
from descgen.ptx.scan import scan_ptx
from descgen.model.wgmma_facts import parse_wgmma_shape, parse_wgmma_table, wgmma_table

#: Hopper descriptors (§9.7.15.5.1.2.2): 128B swizzle (bits 62-63 = 1), SBO 1024, LBO 16, start
#: 0x400 / 0x4400; the same with LBO 8192; 32B swizzle with SBO 256; no swizzle.
A = 0x4000004000010040
B = 0x4000004000010440
A_LBO_8K = 0x4000004002000040
B_32B = 0xC000001000010440
B_NONE = 0x0000001000080440

#: §9.7.15.2, the N of the .u8/.s8 and .b1 shapes as the table lists them.
N_INT = (8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256)
N_ALL = tuple(range(8, 257, 8))


def wg(**kw):
    args = dict(atype="f16", dtype="f32", n=128, a_desc=A, b_desc=B, trans_a=0, trans_b=0, scale_a=1, scale_b=1,
                scale_d=1)
    args.update(kw)
    return check_wgmma(**args)


def codes(report, *, severity=("error", "warning")):
    return [f.code for f in report.findings if f.severity in severity]


# ---------------------------------------------------------------------------------------------
# The table (§9.7.15.2, §9.7.15.3).


def test_table_rows_are_the_spec_values():
    t = wgmma_table()
    assert t.m == 64 and t.targets == ("sm_90a",)
    got = {r.name: (r.atypes, r.btypes, r.dtypes, r.k, r.sparse_k, r.n) for r in t.rows}
    assert got == {
        "f16": (("f16",), ("f16",), ("f16", "f32"), 16, 32, N_ALL),
        "bf16": (("bf16",), ("bf16",), ("f32",), 16, 32, N_ALL),
        "tf32": (("tf32",), ("tf32",), ("f32",), 8, 16, N_ALL),
        "fp8": (("e4m3", "e5m2"), ("e4m3", "e5m2"), ("f16", "f32"), 32, 64, N_ALL),
        "int8": (("s8", "u8"), ("s8", "u8"), ("s32",), 32, 64, N_INT),
        "b1": (("b1",), ("b1",), ("s32",), 256, None, N_INT),
    }
    assert [r.name for r in t.rows if r.transpose] == ["f16", "bf16"]
    assert [r.name for r in t.rows if r.floating] == ["f16", "bf16", "tf32", "fp8"]
    assert [r.name for r in t.rows if r.satfinite] == ["int8"]
    assert {r.name: r.sp_sel for r in t.rows} == {"f16": (0, 1), "bf16": (0, 1), "tf32": (0, 1), "fp8": (0,),
                                                  "int8": (0,), "b1": ()}


def test_table_is_strict():
    good = {"instruction": {"m": 64, "targets": ["sm_90a"], "source": "s"},
            "types": [{"name": "x", "atypes": ["f16"], "btypes": ["f16"], "dtypes": ["f32"], "k": 16,
                       "n": [8], "floating": True, "transpose": True, "satfinite": False, "sp_sel": [0],
                       "source": "s"}]}
    assert parse_wgmma_table(good, "t.toml").rows[0].sparse_k is None
    bad = {**good, "types": [dict(good["types"][0], colour="red")]}
    with pytest.raises(TableError, match="colour"):
        parse_wgmma_table(bad, "t.toml")
    with pytest.raises(TableError, match="already"):
        parse_wgmma_table({**good, "types": good["types"] * 2}, "t.toml")


def test_shape_names():
    assert parse_wgmma_shape("m64n128k16") == (64, 128, 16)
    assert parse_wgmma_shape(".m64n8k256") == (64, 8, 256)
    assert parse_wgmma_shape("m64n8") is None


# ---------------------------------------------------------------------------------------------
# check_wgmma: the spec's own examples and shapes are clean.


@pytest.mark.parametrize("kw", [
    # §9.7.15.5.2's examples
    dict(atype="f16", dtype="f32", n=8, a_desc=None, scale_d=1, scale_a=-1, scale_b=-1, trans_a=None, trans_b=1),
    dict(atype="f16", dtype="f16", n=72, scale_d=None, scale_a=-1, scale_b=1, trans_a=1, trans_b=0),
    dict(atype="bf16", dtype="f32", n=120, a_desc=None, scale_d=None, scale_a=-1, scale_b=-1, trans_a=None, trans_b=0),
    dict(atype="tf32", dtype="f32", n=16, scale_d=0, scale_a=-1, scale_b=-1, trans_a=None, trans_b=None),
    dict(atype="e4m3", btype="e5m2", dtype="f16", n=8, scale_d=None, scale_a=-1, scale_b=1, trans_a=None, trans_b=None),
    dict(atype="e5m2", btype="e4m3", dtype="f32", n=8, a_desc=None, scale_d=1, scale_a=-1, scale_b=-1, trans_a=None,
         trans_b=None),
    dict(atype="s8", dtype="s32", n=8, a_desc=None, satfinite=True, scale_a=None, scale_b=None, trans_a=None,
         trans_b=None),
    dict(atype="u8", dtype="s32", n=8, scale_d=None, scale_a=None, scale_b=None, trans_a=None, trans_b=None),
    dict(atype="s8", btype="u8", dtype="s32", n=8, a_desc=None, satfinite=True, scale_a=None, scale_b=None,
         trans_a=None, trans_b=None),
    dict(atype="b1", dtype="s32", n=8, a_desc=None, scale_d=None, scale_a=None, scale_b=None, trans_a=None,
         trans_b=None),
    # §9.7.15.6.3's examples (sparse)
    dict(atype="u8", dtype="s32", n=8, sp=True, sp_sel=0, scale_a=None, scale_b=None, trans_a=None, trans_b=None),
    dict(atype="s8", btype="u8", dtype="s32", n=8, sp=True, sp_sel=0, scale_a=None, scale_b=None, trans_a=None,
         trans_b=None),
])
def test_the_spec_examples_are_clean(kw):
    r = wg(**kw)
    assert r.ok and not r.findings, r.findings
    assert not [n for n in r.not_checked if n.code.startswith("WGMMA-") or n.why == "run-time"]


def test_k_defaults_to_the_types_and_sparsity():
    assert wg(atype="tf32").context["k"] == 8
    assert wg(atype="tf32", sp=True, sp_sel=1).context["k"] == 16
    assert wg(atype="e4m3", btype="e5m2", sp=True, sp_sel=0).context["k"] == 64
    assert wg(atype="b1", dtype="s32").context["k"] == 256


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_every_listed_shape_is_legal_and_no_other_n_is(data):
    row = data.draw(st.sampled_from(wgmma_table().rows))
    sp = data.draw(st.booleans()) and row.sparse_k is not None
    n = data.draw(st.integers(0, 300))
    kw = dict(atype=data.draw(st.sampled_from(row.atypes)), btype=data.draw(st.sampled_from(row.btypes)),
              dtype=data.draw(st.sampled_from(row.dtypes)), n=n, sp=sp, sp_sel=0 if sp else None,
              scale_a=1 if row.floating else None, scale_b=1 if row.floating else None,
              trans_a=0 if row.transpose else None, trans_b=0 if row.transpose else None)
    r = wg(**kw)
    assert (codes(r) == []) == (n in row.n), (kw, r.findings)
    if n not in row.n:
        assert codes(r) == ["WGMMA-SHAPE"] and r.findings[0].field == "n"


# ---------------------------------------------------------------------------------------------
# check_wgmma: each rule's illegal cases.


@pytest.mark.parametrize("kw, code, field, allowed", [
    (dict(atype="s8", dtype="s32", n=40, scale_a=None, scale_b=None, trans_a=None, trans_b=None), "WGMMA-SHAPE", "n",
     "8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256"),
    (dict(n=12), "WGMMA-SHAPE", "n", "8..256 step 8"),
    (dict(n=264), "WGMMA-SHAPE", "n", "8..256 step 8"),
    (dict(m=128), "WGMMA-SHAPE", "m", "64"),
    (dict(k=32), "WGMMA-SHAPE", "k", "16"),
    (dict(atype="tf32", k=16, trans_a=None, trans_b=None), "WGMMA-SHAPE", "k", "8"),
    (dict(atype="b1", dtype="s32", sp=True, sp_sel=0, scale_a=None, scale_b=None, trans_a=None, trans_b=None),
     "WGMMA-SHAPE", "sp", "false (dense only)"),
    (dict(atype="bf16", dtype="f16"), "WGMMA-TYPES", "dtype", "f32"),
    (dict(atype="s8", dtype="f32", scale_a=None, scale_b=None, trans_a=None, trans_b=None), "WGMMA-TYPES", "dtype",
     "s32"),
    (dict(atype="f16", btype="bf16"), "WGMMA-TYPES", "btype", "f16"),
    (dict(atype="e4m3", btype="s8", dtype="f32", trans_a=None, trans_b=None), "WGMMA-TYPES", "btype", "e4m3, e5m2"),
    (dict(atype="f64", dtype="f64"), "WGMMA-TYPES", "atype", "f16, bf16, tf32, e4m3, e5m2, s8, u8, b1"),
    (dict(atype="tf32", trans_a=None, trans_b=1), "WGMMA-TRANSPOSE", "trans_b", "0 (K-major)"),
    (dict(atype="e4m3", trans_a=1, trans_b=None), "WGMMA-TRANSPOSE", "trans_a", "0 (K-major)"),
    (dict(a_desc=None, trans_a=1), "WGMMA-TRANSPOSE", "trans_a", "0 (K-major)"),
    (dict(trans_b=2), "WGMMA-TRANSPOSE", "trans_b", "0, 1"),
    (dict(scale_a=2), "WGMMA-SCALE", "scale_a", "-1, 1"),
    (dict(atype="u8", dtype="s32", scale_a=None, scale_b=-1, trans_a=None, trans_b=None), "WGMMA-SCALE", "scale_b",
     "1 (no negation)"),
    (dict(scale_d=2), "WGMMA-SCALE", "scale_d", "0, 1, or a predicate"),
    (dict(sp=True, sp_sel=2), "WGMMA-SP-SEL", "sp_sel", "0, 1"),
    (dict(atype="s8", dtype="s32", sp=True, sp_sel=1, scale_a=None, scale_b=None, trans_a=None, trans_b=None),
     "WGMMA-SP-SEL", "sp_sel", "0"),
    (dict(sp_sel=0), "WGMMA-SP-SEL", "sp_sel", "none (not .sp)"),
    (dict(satfinite=True), "WGMMA-SATFINITE", "satfinite", "false"),
])
def test_each_rule_reports_the_field_and_the_allowed_values(kw, code, field, allowed):
    r = wg(**kw)
    assert codes(r) == [code], r.findings
    f = r.errors[0]
    assert (f.field, f.allowed) == (field, allowed)
    assert "§9.7.15" in f.source


def test_lbo_of_a_k_major_swizzled_operand_is_a_note_and_mn_major_uses_it():
    r = wg(a_desc=A_LBO_8K)
    assert r.ok and [(f.code, f.severity, f.field, f.value) for f in r.findings] == [
        ("WGMMA-LBO-IGNORED", "info", "a_desc.lbo", 8192)]
    assert not wg(a_desc=A_LBO_8K, trans_a=1).findings  # MN-major: LBO is the stride between atoms
    assert not wg(b_desc=B_NONE).findings  # no swizzle: LBO is used


def test_descriptor_findings_name_the_operand():
    r = wg(b_desc=B | 1 << 46)  # a tcgen05 word's version bit: not a Hopper field
    assert not r.ok and all(f.field.startswith("b_desc.") for f in r.errors)
    assert set(r.decoded) == {"a_desc", "b_desc"}
    assert set(wg(a_desc=None, trans_a=None).decoded) == {"b_desc"}


def test_a_partly_known_descriptor_checks_what_is_known():
    unknown_start = KnownBits(A_LBO_8K, ~0x3FFF & (2**64 - 1))
    r = wg(a_desc=unknown_start, b_desc=KnownBits(0, 0))
    # A's LBO is known: the note is found although B is known at run time only
    assert [(f.code, f.field) for f in r.findings] == [("WGMMA-LBO-IGNORED", "a_desc.lbo")]
    assert any(n.code == "WGMMA-LBO-IGNORED" and n.missing[0].startswith("b_desc.") for n in r.not_checked)
    # the instruction's own rules never wait for a descriptor
    assert codes(wg(n=12, a_desc=KnownBits(0, 0), b_desc=KnownBits(0, 0))) == ["WGMMA-SHAPE"]


# ---------------------------------------------------------------------------------------------
# The scanner: wgmma.mma_async in sm_90a PTX.

HEAD = ".version 8.4\n.target sm_90a\n.address_size 64\n"
DESCS = f"mov.b64 %rd1, {A:#x};\nmov.b64 %rd2, {B:#x};\n"
D4 = "{%f1, %f2, %f3, %f4}"


def scan(body, head=HEAD):
    return scan_ptx(head + DESCS + body)


def test_scan_checks_the_instruction_with_its_qualifiers():
    r = scan(f"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {D4}, %rd1, %rd2, 1, 1, 1, 0, 1;")
    assert r.ok and not r.findings
    (ins,) = r.instructions
    assert ins.opcode == "wgmma.mma_async"
    assert {k: ins.qualifiers[k] for k in ("n", "k", "dtype", "atype", "btype", "trans_b", "scale_d")} == dict(
        n=8, k=16, dtype="f32", atype="f16", btype="f16", trans_b=1, scale_d=1)
    assert [(o.role, o.value) for o in ins.operands] == [("a_desc", A), ("b_desc", B)]


@pytest.mark.parametrize("text, code", [
    ("wgmma.mma_async.sync.aligned.m64n12k16.f32.f16.f16 {D4}, %rd1, %rd2, 1, 1, 1, 0, 0;", "WGMMA-SHAPE"),
    ("wgmma.mma_async.sync.aligned.m64n8k16.f16.bf16.bf16 {%r1, %r2}, %rd1, %rd2, 1, 1, 1, 0, 0;", "WGMMA-TYPES"),
    ("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {D4}, %rd1, %rd2, 1, 1, 1, 0, 2;", "WGMMA-TRANSPOSE"),
    ("wgmma.mma_async.sp.sync.aligned.m64n8k64.s32.s8.s8 {D4}, %rd1, %rd2, %r9, 1, 1;", "WGMMA-SP-SEL"),
    ("wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {D4}, %rd1, %rd2, 1, 1, 1, 0, 0;", "PTX-MALFORMED"),
    ("wgmma.mma_async.m64n8k16.f32.f16.f16 {D4}, %rd1, %rd2, 1, 1, 1, 0, 0;", "PTX-MALFORMED"),
    ("wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1 {D4}, %rd1, %rd2, 1;", "PTX-MALFORMED"),
    ("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {D4}, %rd1, %rd2, 1, %r1, 1, 0, 0;", "PTX-MALFORMED"),
])
def test_scan_reports_instruction_errors(text, code):
    r = scan(text.replace("{D4}", D4))
    assert [f.code for f in r.errors] == [code], [f.message() for f in r.findings]


def test_scan_reads_a_from_registers_and_a_predicate_scale_d():
    r = scan(f"wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {D4}, {{%r1, %r2, %r3, %r4}}, %rd2, %p1, 1, -1, 0;")
    assert r.ok and [o.role for o in r.instructions[0].operands] == ["b_desc"]
    assert r.instructions[0].qualifiers["scale_d"] is None


def test_scan_target_without_wgmma_is_an_error_once():
    text = f"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {D4}, %rd1, %rd2, 1, 1, 1, 0, 0;\n"
    r = scan(text * 2, head=".version 8.4\n.target sm_90\n")
    assert [(f.code, f.finding.value, f.finding.allowed) for f in r.errors] == [("PTX-TARGET-WGMMA", "sm_90", "sm_90a")]
    assert scan(text, head=".version 8.7\n.target sm_100a\n").codes == ("PTX-TARGET-WGMMA",)


def test_scan_wgmma_versions():
    """PTX ISA notes: wgmma 8.0, .sp 8.2, mixed .s8.u8 8.4 (ptxas 13.0 agrees)."""
    sp = "wgmma.mma_async.sp.sync.aligned.m64n8k64.s32.s8.u8 {%r1, %r2, %r3, %r4}, %rd1, %rd2, %r9, 0, 1;"
    r = scan(sp, head=".version 8.1\n.target sm_90a\n")
    assert sorted(f.finding.allowed for f in r.errors) == ["8.2 or later", "8.4 or later"]
    assert scan(sp, head=".version 8.4\n.target sm_90a\n").ok


# ---------------------------------------------------------------------------------------------
# descgen check-wgmma


def test_cli_check_wgmma_exit_status_and_json():
    import json

    from click.testing import CliRunner

    from descgen.cli import cli

    base = ["check-wgmma", "--dtype", "f32", "--atype", "f16", "--adesc", f"{A:#x}", "--bdesc", f"{B:#x}"]
    ok = CliRunner().invoke(cli, [*base, "--shape", "m64n128k16", "--trans-b", "1"])
    assert ok.exit_code == 0 and ok.output == "", ok.output
    bad = CliRunner().invoke(cli, [*base, "--shape", "m64n12k16", "--json"])
    assert bad.exit_code == 1
    doc = json.loads(bad.output)
    assert [f["code"] for f in doc["result"]["findings"]] == ["WGMMA-SHAPE"]
    assert doc["result"]["context"]["n"] == 12
    usage = CliRunner().invoke(cli, [*base, "--shape", "m64n128"])
    assert usage.exit_code == 2 and "--shape" in usage.output
