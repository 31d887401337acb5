"""descgen scan: PTX fixtures written from the instruction syntax (§9.7.16.10.9.1-4, §9.7.16.9.2)
and assembled by ptxas, planted bad descriptors in every tcgen05.mma form and tcgen05.cp,
operand resolution over straight-line blocks (E33), the target (E34), the omitted scale vector
size (E35), what is reported when a word is missing (E36), and the CLI's output format.

Fixture lines say what the scan must report: ``// expect: CODE, CODE`` lists every finding on
that line (for ``tests/ptx/reject/``: every error and warning), ``// resolved: role=0x...`` the
words it must have resolved. A line with no marker must have no finding.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import descgen
from descgen.model.catalog import catalog
from descgen.examples import example
from descgen.ptx.scan import SCAN_CODES, parse_int, scan_file, scan_ptx

from conftest import REPO
from test_cli import _runner

PTX = Path(REPO) / "tests" / "ptx"
FIXTURES = sorted(PTX.glob("*.ptx"))
REJECTED = sorted((PTX / "reject").glob("*.ptx"))
PTXAS = shutil.which("ptxas") or ("/usr/local/bin/ptxas" if os.access("/usr/local/bin/ptxas", os.X_OK) else None)

A = 0x4000404000010040  # K-major, 128B swizzle, start 0x400, LBO 16, SBO 1024
B = 0x4000404000010440  # the same at 0x4400


def expectations(path: Path) -> tuple[dict[int, Counter[str]], dict[int, dict[str, int]]]:
    """The fixture's markers: line -> expected codes (a multiset), line -> expected resolved words."""
    codes: dict[int, Counter[str]] = {}
    words: dict[int, dict[str, int]] = {}
    for n, line in enumerate(path.read_text(encoding="ascii").splitlines(), 1):
        m = re.search(r"// expect: (.*?)(?:\s+resolved:.*)?$", line)
        if m:
            codes[n] = Counter(c.strip() for c in m.group(1).split(","))
        m = re.search(r"// resolved: (.*)$", line)
        if m:
            words[n] = {k: int(v, 16) for k, v in (kv.split("=") for kv in m.group(1).split())}
    return codes, words


def found(result: descgen.ScanResult, severities: tuple[str, ...]) -> dict[int, Counter[str]]:
    out: dict[int, Counter[str]] = {}
    for f in result.findings:
        if f.severity in severities:
            out.setdefault(f.line, Counter())[f.code] += 1
    return out


def target_of(path: Path) -> str:
    return re.search(r"^\.target\s+(\w+)", path.read_text(encoding="ascii"), flags=re.M).group(1)


# ---------------------------------------------------------------------------------------------
# The fixtures are real PTX.


@pytest.mark.skipif(PTXAS is None, reason="ptxas not installed (CUDA toolkit): the fixtures cannot be assembled here")
@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_ptxas_assembles_the_fixture(path, tmp_path):
    proc = subprocess.run([PTXAS, f"-arch={target_of(path)}", str(path), "-o", str(tmp_path / "out.cubin")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.skipif(PTXAS is None, reason="ptxas not installed (CUDA toolkit): the fixtures cannot be assembled here")
@pytest.mark.parametrize("path", REJECTED, ids=lambda p: p.name)
def test_ptxas_rejects_what_scan_reports(path, tmp_path):
    """Each syntax or target rule of the scanner agrees with ptxas: the file it flags does not assemble."""
    proc = subprocess.run([PTXAS, f"-arch={target_of(path)}", str(path), "-o", str(tmp_path / "out.cubin")],
                          capture_output=True, text=True)
    # fatal: unknown target
    assert proc.returncode != 0 and ("error" in proc.stderr or "fatal" in proc.stderr), proc.stderr


def test_fixtures_are_ascii_and_present():
    assert {p.name for p in FIXTURES} == {"clean.ptx", "bad_descriptors.ptx", "operands.ptx"}
    assert len(REJECTED) >= 20
    for p in FIXTURES + REJECTED:
        p.read_text(encoding="ascii")  # ptxas rejects any other byte


# ---------------------------------------------------------------------------------------------
# What the scan reports, line by line.


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_fixture_findings_are_exactly_the_markers(path):
    codes, words = expectations(path)
    result = scan_file(str(path))
    assert found(result, ("error", "warning", "info")) == codes
    by_line = {i.line: i for i in result.instructions}
    for line, want in words.items():
        got = {o.role: o.value for o in by_line[line].operands if o.resolved}
        assert {k: got.get(k) for k in want} == want, line


@pytest.mark.parametrize("path", REJECTED, ids=lambda p: p.name)
def test_reject_fixture_reports_its_rule(path):
    codes, _ = expectations(path)
    assert len(codes) == 1
    result = scan_file(str(path))
    assert found(result, ("error", "warning")) == codes
    (line, want), = codes.items()
    rule = catalog()[next(iter(want))]
    assert all(f.severity == rule.severity for f in result.findings if f.line == line and f.code in want)


def test_every_tcgen05_statement_is_found():
    for path in FIXTURES:
        text = path.read_text(encoding="ascii")
        starts = [n for n, line in enumerate(text.splitlines(), 1) if re.match(r"\s*tcgen05\.(mma|cp)", line)]
        assert [i.line for i in scan_file(str(path)).instructions] == starts, path.name


def test_clean_file_counts():
    result = scan_file(str(PTX / "clean.ptx"))
    assert result.ok and not result.findings
    assert result.counts == {"instructions": 23, "operands": 59, "known": 59, "partial": 0, "unknown": 0,
                             "resolved": 59, "unresolved": 0, "errors": 0, "warnings": 0, "notes": 0}
    assert (result.arch, result.arch_from, result.target) == ("sm_100a", "target", (5, ".target sm_100a"))
    # every instruction was checked as a whole by check_mma (all its words known), or validate_smem (cp)
    assert all(i.report is not None and i.report.decoded for i in result.instructions)


def test_a_planted_bad_descriptor_in_each_variant():
    """The issue's 'done when': one planted bad word per instruction form, each at its line with its code."""
    result = scan_file(str(PTX / "bad_descriptors.ptx"))
    got = {(f.line, f.code, f.operand) for f in result.findings}
    assert got == {
        (23, "IDESC-M-SHAPE", "idesc"),                  # a-desc form, M = 256 with cta_group::1
        (26, "IDESC-A-MAJOR-TMEM", "idesc"),             # [a-tmem] form
        (30, "SMEM-SWIZZLE-CODE", "b_desc"),             # tf32 with scale-input-d
        (33, "MMA-SWIZZLE-TABLE52", "b_desc"),           # between words
        (35, "SMEM-VERSION-CONST", "a_desc"),            # immediate operands (a warning)
        (39, "IDESC-SPARSE-SP", "idesc"),                # .sp
        (43, "IDESC-SCALE-TYPE-CODE", "idesc"),          # .block_scale mxf8f6f4
        (46, "IDESC-A-SF-ID-SCALE-VEC", "idesc"),        # mxf4, no scale vector size (E35)
        (49, "IDESC-B-SF-ID-SCALE-VEC", "idesc"),        # mxf4 .scale_vec::2X
        (52, "IDESC-B-SF-ID-SCALE-VEC", "idesc"),        # mxf4nvf4 .scale_vec::4X
        (55, "IDESC-SCALE-VEC-TYPE", "idesc"),           # mxf4nvf4 .block32
        (60, "SMEM-LBO-MODE-ARCH", "a_desc"),            # .collector::a::fill
        (63, "PTX-ASHIFT-M", "idesc"),                   # .ashift
        (67, "IDESC-DTYPE-CODE", "idesc"),               # .kind::i8
        (71, "IDESC-M-SHAPE", "idesc"),                  # .ws
        (75, "ZCM-COLUMN-SHIFT-M", "zcm"),               # .ws with the zero-column mask
        (78, "IDESC-SPARSE-SP", "idesc"),                # .ws.sp
        (82, "SMEM-LBO-MODE-ARCH", "s_desc"),            # tcgen05.cp
        (83, "SMEM-SWIZZLE-CODE", "s_desc"),             # tcgen05.cp, immediate s-desc
        (99, "IDESC-M-SHAPE", "idesc"),                  # cta_group::2
    }
    assert not result.ok and len(result.errors) == 19
    line75 = next(f for f in result.findings if f.line == 75)
    assert line75.finding.field == "zcm.column_shift" and line75.finding.value == 24


def test_the_instructions_qualifiers_are_the_context():
    result = scan_file(str(PTX / "clean.ptx"))
    q = {i.line: dict(i.qualifiers) for i in result.instructions}
    assert q[25] == {"kind": "f16", "cta_group": 1, "ws": False, "sp": False, "block_scale": False, "scale_vec": None,
                     "scale_vec_used": None, "collector": None, "ashift": False, "a_tmem": True}
    assert q[49]["ashift"] and q[49]["collector"] == "a::lastuse"
    assert q[62]["ws"] and q[62]["sp"] and q[62]["a_tmem"]
    assert q[44]["scale_vec"] == "block16" and q[40]["scale_vec"] is None and q[40]["scale_vec_used"] == "block32"
    assert q[68] == {"cta_group": 1, "shape": "32x128b", "multicast": "warpx4", "dst_fmt": "b8x16",
                     "src_fmt": "b6x16_p32"}
    ctx = {i.line: i.report.context for i in result.instructions}
    assert ctx[62] == {"cta_group": 1, "ws": True, "sp": True, "scale_vec": None, "a_tmem": True, "arch": "sm_100a",
                       "pattern_start": None, "m": None, "n": None, "warp": None, "alloc_columns": None,
                       "alloc_base": None, "smem_size": None}


def test_the_qualifiers_are_typed_records_that_read_as_mappings():
    """descgen.ptx.qualifiers: an attribute per qualifier, and the mapping the JSON has always held
    (a wgmma's absent immediates are absent keys)."""
    from descgen.ptx.qualifiers import CpQualifiers, MmaQualifiers, WgmmaQualifiers

    result = scan_file(str(PTX / "clean.ptx"))
    q = {i.line: i.qualifiers for i in result.instructions}
    assert isinstance(q[25], MmaQualifiers) and q[25].kind == q[25]["kind"] == "f16" and q[25].a_tmem is True
    assert isinstance(q[68], CpQualifiers) and q[68].multicast == "warpx4" and len(q[68]) == 5
    assert q[25].as_dict() == dict(q[25]) and "scale_a" not in q[25]
    wg = scan_ptx(".target sm_90a\nwgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8 {%r1, %r2}, %rd1, %rd2, 1;")
    w = wg.instructions[0].qualifiers
    assert isinstance(w, WgmmaQualifiers) and w.scale_a is None and "scale_a" not in w and list(w)[-1] == "sp_sel"
    assert w.as_dict() == dict(w) and w.n == 8 and w.subject == "wgmma.mma_async.m64n8k32.s32.s8.s8"


def test_every_ptx_rule_runs_on_facts_the_scanner_reads():
    """Each PTX-* rule is declared over a record of facts the scanner reads (``on``, compiled from
    its [[rule.check]] entries) or is one registered function of the scanner's own observations
    (a statement no form of its syntax, an operand it cannot read), never both; every record a
    rule may be declared on is one the scanner hands over."""
    from descgen.model.catalog import PTX_FACTS, catalog
    from descgen.ptx import qualifiers, syntax_rules
    from descgen.ptx.results import ScanOperand

    assert syntax_rules.implemented() == set(SCAN_CODES)
    declared = {code for code in SCAN_CODES if (catalog()[code].declared or {}).get("on")}
    assert set(SCAN_CODES) - declared == {"PTX-MALFORMED", "PTX-OPERAND-UNRESOLVED"} == set(syntax_rules._RULES)
    assert sorted(on for on, _ in syntax_rules.ON.values()) == sorted(PTX_FACTS)
    kinds = (syntax_rules.MmaSyntax, qualifiers.CpQualifiers, syntax_rules.MmaDecoded, syntax_rules.FeatureUse,
             syntax_rules.TargetDirective, syntax_rules.FirstTcgen05, syntax_rules.FirstWgmma, syntax_rules.CtaGroupUse,
             syntax_rules.BadImmediate, qualifiers.Malformed, ScanOperand)
    read = [code for kind in kinds for code in syntax_rules._codes_for(kind)]
    assert set(read) == set(SCAN_CODES) and not declared & set(syntax_rules._RULES)


# ---------------------------------------------------------------------------------------------
# Operand resolution (E33).


def scan(text: str, **kw):
    return scan_ptx(".target sm_100a\n" + text, **kw)


MMA = "tcgen05.mma.cta_group::1.kind::f16 [%r0], %rd1, %rd2, %r1, 1;"
WORDS = f"mov.b32 %r1, 0x08400010; mov.b64 %rd1, {A:#x}; mov.b64 %rd2, {B:#x};"


def reasons(result) -> dict[str, str]:
    return {o.role: o.reason for i in result.instructions for o in i.operands if not o.resolved}


def test_words_set_by_mov_are_resolved():
    r = scan(WORDS + "\n" + MMA)
    (i,) = r.instructions
    assert [(o.role, o.value, o.origin, o.origin_line, o.status) for o in i.operands] == [
        ("idesc", 0x08400010, "mov.b32", 2, "known"), ("a_desc", A, "mov.b64", 2, "known"),
        ("b_desc", B, "mov.b64", 2, "known")]
    assert r.ok and not r.findings


@pytest.mark.parametrize("boundary", ["L1:", "bra L1;", "@%p1 bra.uni L1;", "ret;", "exit;", "call f, (%r3);", "{",
                                      "}"])
def test_e38_one_definition_holds_across_labels_branches_and_braces(boundary):
    """E38 (replacing E33's straight-line blocks): a register with one unpredicated definition in
    the function has its value at every use."""
    r = scan(WORDS + "\n" + boundary + "\n" + MMA)
    assert all(o.resolved for o in r.instructions[0].operands) and not r.findings


def test_e42_a_use_that_no_definition_reaches_on_the_first_pass_is_unknown():
    """E42: flow-sensitive. The loop's first pass reads the registers before any definition."""
    r = scan("L1:\n" + MMA + "\n" + WORDS + "\nbra L1;")
    assert [o.status for o in r.instructions[0].operands] == ["unknown"] * 3
    assert {o.reason for o in r.instructions[0].operands} == {"not defined on every path"}
    # defined before the loop: known in every pass
    r = scan(WORDS + "\nL1:\n" + MMA + "\nbra L1;")
    assert all(o.resolved for o in r.instructions[0].operands)


def test_e38_predicated_and_several_definitions_give_the_agreeing_bits():
    r = scan("\n".join([WORDS, "@%p1 mov.b32 %r1, 0x08400010;", "@%p1 mov.b64 %rd2, 0x4000404000010040;",
                        "@%p1 mov.b32 %r5, 7;", MMA, MMA.replace("%r1", "%r5")]))
    first, second = r.instructions
    assert first.operand("idesc").value == 0x08400010  # two definitions, equal
    b = first.operand("b_desc")  # A and B differ in bit 10 only
    assert b.status == "partial" and b.known == descgen.KnownBits(A & ~(1 << 10), ((1 << 64) - 1) & ~(1 << 10))
    assert b.reason == "several definitions" and b.unknown == ("start_address",)
    assert second.operand("idesc").status == "unknown" and second.operand("idesc").reason == "predicated definition"


def test_e38_run_time_leaves_say_why():
    r = scan("\n".join(["ld.param.u64 %rd1, [p];", "ld.shared.u64 %rd2, [%rd3];", "mov.u32 %r1, %clock;", MMA,
                        MMA.replace("%r1", "%r9")]))
    first, second = r.instructions
    assert {o.role: o.reason for o in first.operands} == {
        "idesc": "special register %clock", "a_desc": "kernel parameter", "b_desc": "loaded from memory"}
    assert second.operand("idesc").reason == "no definition in the function"
    assert [f.code for f in r.findings] == ["PTX-OPERAND-UNRESOLVED"] * 6
    assert r.findings[0].detail == "every field unknown: special register %clock"


def test_e42_special_registers_have_their_bounds():
    """%tid.x < 1024: an idesc taken from it has N = 0 on every execution (bits 10-31 known 0)."""
    r = scan("mov.u32 %r1, %tid.x;\n" + MMA.replace("%rd1, %rd2", f"{A:#x}, {B:#x}"))
    idesc = r.instructions[0].operand("idesc")
    assert idesc.status == "partial" and idesc.known.mask == 0xFFFFFC00 and idesc.known.value == 0
    assert "IDESC-N-RANGE" in {f.code for f in r.findings}


def test_e38_vectors_copies_and_arithmetic_are_followed():
    """Triton's packing, CuTe's unpack-add-repack and the block-scaled idesc halves."""
    r = scan("\n".join([
        "mov.u32 %r10, smem;",                               # a shared memory address (16-byte aligned)
        "bfe.u32 %r11, %r10, 4, 14;",                        # start address field, unknown
        "mov.b32 %r12, 1073758272;",                         # high half 0x40004040
        "or.b32 %r13, %r11, 65536;",                         # LBO 1 (16 bytes)
        "mov.b64 %rd1, {%r13, %r12};",
        "mov.b64 {%r14, %r15}, %rd1;", "add.s32 %r16, %r14, 2;", "mov.b64 %rd2, {%r16, %r15};",
        "mov.b16 %rs1, 0x0010; mov.b16 %rs2, 0x0840; mov.b32 %r1, {%rs1, %rs2};",
        MMA]).replace(".version", ".version"), arch="sm_100a")
    (i,) = r.instructions
    assert i.operand("idesc").value == 0x08400010
    a = i.operand("a_desc")
    assert a.unknown == ("start_address",) and a.known.mask == 0xFFFFFFFFFFFFC000
    assert a.known.value == 0x4000404000010000 and a.reason == "address of smem"
    b = i.operand("b_desc")  # + 2 may carry out of the 14-bit start address into bit 14 (reserved)
    assert b.known.mask == 0xFFFFFFFFFFFF8000 and b.unknown == ("start_address", "reserved_14")
    assert r.ok


def test_e38_shared_symbols_registers_without_percent_and_scopes():
    text = "\n".join([
        ".version 9.0", ".target sm_100a", ".shared .align 1024 .b8 smem[4096];",
        ".entry k()", "{", ".reg .b32 r<4>;", ".reg .b64 rd<4>;",
        "mov.u32 r1, smem;", "cvt.u64.u32 rd1, r1;", "shr.u64 rd2, rd1, 4;",
        "or.b64 rd3, rd2, 0x4000404000010000;",
        "mov.b32 r2, 0x08400010;",
        "{", ".reg .b32 r2;", "mov.b32 r2, 0;", "}",       # an inner r2 shadows the outer one
        "{", ".reg .pred p;", "setp.ne.b32 p, r2, 0;",
        "tcgen05.mma.cta_group::1.kind::f16 [r0], rd3, rd3, r2, p;", "}",
        "ret;", "}"])
    (i,) = scan_ptx(text).instructions
    assert i.operand("idesc").value == 0x08400010
    a = i.operand("a_desc")  # 1024-byte aligned, below 2**18: start address bits 0-5 and 14+ known
    assert a.known.mask == 0xFFFFFFFFFFFFC03F and a.known.value == 0x4000404000010000
    assert a.reason == "shared memory address"


def test_e33_immediate_forms_and_widths():
    assert [parse_int(t) for t in ("0x1F", "0X1fU", "0b101", "017", "42", "42U", "0", "-1", "0u")] == \
        [31, 31, 5, 15, 42, 42, 0, -1, 0]
    assert [parse_int(t) for t in ("08", "0x", "1.5", "%r1", "0f3F800000", "- 1", "")] == [None] * 7
    # negative immediates wrap to the register's width; a too-wide one is cut to its low bits, as
    # ptxas does, with a warning (E48, superseding E33's "not a word")
    r = scan("mov.b32 %r1, -1; mov.b64 %rd1, -1; mov.b32 %r2, 0x100000000;\n"
             "tcgen05.mma.cta_group::1.kind::f16 [%r0], %rd1, 0x10000000000000000, %r1, 1;\n"
             "tcgen05.mma.cta_group::1.kind::f16 [%r0], %rd1, %rd1, %r2, 1;")
    first, second = r.instructions
    assert first.operand("idesc").value == 0xFFFFFFFF and first.operand("a_desc").value == (1 << 64) - 1
    assert first.operand("b_desc").value == 0 and second.operand("idesc").value == 0
    assert [(f.line, f.code, f.subject) for f in r.findings if f.code == "PTX-IMMEDIATE-TRUNCATED"] == [
        (2, "PTX-IMMEDIATE-TRUNCATED", "mov.b32 0x100000000"),
        (3, "PTX-IMMEDIATE-TRUNCATED", "b-desc 0x10000000000000000")]


@given(st.integers(0, (1 << 64) - 1), st.sampled_from(["{:#x}", "0b{:b}", "0{:o}", "{:d}", "{:#X}U"]))
def test_parse_int_round_trips_every_literal_form(value, form):
    text = form.format(value)
    if text == "00":  # octal zero is written 0
        text = "0"
    assert parse_int(text) == value


def test_comments_strings_multi_statement_and_multi_line():
    text = "\n".join([
        '.file 1 "src//b.cu"',                    # a // inside a string is not a comment
        "mov.b32 %r1, 0x08400010; /* ; } { */ mov.b64 %rd1, " + f"{A:#x};",
        "mov.b64 %rd2, // the B descriptor",
        f"  {B:#x};",
        "tcgen05.mma.cta_group::1",
        "   .kind::f16 [%r0], %rd1, %rd2, %r1, 1; // trailing",
    ])
    r = scan(text)
    (i,) = r.instructions
    assert i.line == 6 and i.text == "tcgen05.mma.cta_group::1.kind::f16 [%r0], %rd1, %rd2, %r1, 1;"
    assert all(o.resolved for o in i.operands) and i.operand("b_desc").origin_line == 4


# ---------------------------------------------------------------------------------------------
# The target (E34).


def test_target_sets_arch_and_option_overrides():
    body = WORDS + "\ntcgen05.mma.cta_group::1.kind::i8 [%r0], %rd1, %rd2, 0x082004a0, 1;"
    r = scan_ptx(".version 9.0\n.target sm_103a\n" + body)
    assert (r.arch, r.arch_from) == ("sm_103a", "target") and r.codes == ("IDESC-KIND-ARCH",)
    r = scan_ptx(".target sm_103a\n" + body, arch="sm_100a")
    assert (r.arch, r.arch_from) == ("sm_100a", "option") and r.ok
    r = scan_ptx(".target sm_101a\n" + body)
    assert r.arch == "sm_110a" and r.ok


def test_e34_target_last_sm_entry_wins_options_ignored_first_directive_only():
    """E34: ptxas 13.0 compiles `.target sm_100a, sm_103a` for sm_103a (the last target)."""
    body = "\n" + WORDS + "\ntcgen05.mma.cta_group::1.kind::i8 [%r0], %rd1, %rd2, 0x082004a0, 1;"
    assert scan_ptx(".target sm_100a, sm_103a" + body).arch == "sm_103a"
    assert scan_ptx(".target sm_100a, debug, texmode_independent" + body).arch == "sm_100a"
    assert scan_ptx(".target sm_100a\n.target sm_103a" + body).arch == "sm_100a"


def test_e34_unknown_and_missing_target():
    r = scan_ptx(".target sm_130a\n" + WORDS + MMA)
    assert [(f.line, f.code, f.severity) for f in r.findings] == [(1, "PTX-TARGET-UNKNOWN", "warning")]
    assert r.arch is None and r.ok
    r = scan_ptx(WORDS + "\n" + MMA)
    assert [(f.line, f.code, f.severity) for f in r.findings] == [(2, "PTX-TARGET-MISSING", "info")]
    assert scan_ptx(WORDS + MMA, arch="sm_100a").findings == ()
    assert scan_ptx("// nothing here\n").findings == ()  # no instruction: nothing to say about the target
    # Hopper's target: taken as such a .target is (its wgmma checked; tcgen05 refused there)
    assert [f.code for f in scan_ptx(WORDS + MMA, arch="sm_90a").findings] == ["PTX-TARGET-TCGEN05"]
    with pytest.raises(descgen.UsageError):
        scan_ptx(WORDS + MMA, arch="sm_130a")


# ---------------------------------------------------------------------------------------------
# The scale vector size when omitted (E35) and missing words (E36).


def test_e35_omitted_scale_vector_size_is_block32_for_mxf4_and_mxf8f6f4():
    mx = {"mxf4": descgen.encode_idesc("mxf4", 128, 128, a_sf_id=1, check=False),
          "mxf8f6f4": descgen.encode_idesc("mxf8f6f4", 128, 128)}
    r = scan(WORDS + "\ntcgen05.mma.cta_group::1.kind::mxf4.block_scale "
             f"[%r0], %rd1, %rd2, {mx['mxf4']:#x}, [%r5], [%r6], 1;")
    assert r.codes == ("IDESC-A-SF-ID-SCALE-VEC",) and "block32 with K = 64" in r.findings[0].finding.rule
    # .block32 is a family feature (sm_100f): the omitted size is accepted there, an explicit 1X is not
    line = ("tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale{} "
            f"[%r0], %rd1, %rd2, {mx['mxf8f6f4']:#x}, [%r5], [%r6], 1;")
    assert scan_ptx(WORDS + line.format(""), arch="sm_100f").ok
    assert scan_ptx(WORDS + line.format(".scale_vec::1X"), arch="sm_100f").codes == ("IDESC-SCALE-VEC-ARCH",)
    # mxf4nvf4 has no default
    r = scan_ptx(WORDS + "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale "
                 "[%r0], %rd1, %rd2, 0x08200480, [%r5], [%r6], 1;", arch="sm_100a")
    assert r.codes == ("PTX-SCALE-VEC-REQUIRED",) and r.instructions[0].qualifiers["scale_vec_used"] is None


def test_e36_missing_words_check_what_is_known_and_say_what_is_not():
    # idesc known, b-desc not: the idesc is still validated with the instruction's context
    r = scan("mov.b32 %r1, 0x10200010;\n" + MMA.replace("%rd1", "0x4000404000010040"))
    assert r.codes == ("PTX-OPERAND-UNRESOLVED", "IDESC-M-SHAPE")
    (i,) = r.instructions
    assert set(i.report.decoded) == {"idesc", "a_desc", "b_desc"}
    assert i.report.decoded["b_desc"].known == 0 and i.report.decoded["a_desc"].complete
    # the one check_mma: an unresolved operand is a word known at run time only
    cross = {n.code: (n.missing, n.why) for n in i.report.not_checked if n.code.startswith("MMA-")}
    assert cross == {"MMA-SWIZZLE-TABLE52": (("b_desc.swizzle",), "run-time"),
                     "MMA-LBO-MODE-MAJOR": (("b_desc.lbo_mode",), "run-time"),
                     "MMA-LBO-IGNORED": (("b_desc.swizzle",), "run-time"),
                     "MMA-SBO-ATOM": (("b_desc.swizzle",), "run-time")}
    # idesc unknown: the rules that read only qualifiers and the target still run
    r = scan("tcgen05.mma.ws.cta_group::2.kind::f16 [%r0], %rd1, %rd2, %r1, 1;")
    assert Counter(r.codes) == Counter({"PTX-OPERAND-UNRESOLVED": 3, "MMA-WS-CTA-GROUP": 1})
    assert not r.instructions[0].report.decoded["idesc"].known


def test_zcm_with_unknown_idesc_is_checked_without_m():
    r = scan("mov.b64 %rd3, 0x180c008000000000;\n"
             "tcgen05.mma.ws.cta_group::1.kind::f16 [%r0], %rd1, %rd2, %r1, 1, %rd3;")
    (i,) = r.instructions
    assert i.operand("zcm").value == 0x180C008000000000 and "zcm" in i.report.decoded
    assert "ZCM-COLUMN-SHIFT-M" in {n.code for n in i.report.not_checked}


def test_malformed_statements_are_findings_not_exceptions():
    cases = {
        "tcgen05.mma.cta_group::1.kind::f32 [%r0], %rd1, %rd2, %r1, 1;": "unknown qualifier .kind::f32",
        "tcgen05.mma.kind::f16 [%r0], %rd1, %rd2, %r1, 1;": "no .cta_group qualifier",
        "tcgen05.mma.cta_group::1.cta_group::1.kind::f16 [%r0], %rd1, %rd2, %r1, 1;":
            "qualifier .cta_group given twice",
        "tcgen05.mma.cta_group::1.kind::f16 [%r0], %rd1;": "2 operands; expected at least 5",
        "tcgen05.mma.cta_group::1.kind::f16 %r0, %rd1, %rd2, %r1, 1;": "d-tmem %r0 is not a [tensor memory address]",
        "tcgen05.mma.ws.cta_group::1.kind::f16 [%r0], %rd1, %rd2, %r1, {%r3, %r3, %r3, %r3}, 1;": "after idesc",
        "tcgen05.cp.cta_group::1 [%r0], %rd1;": "no .shape",
        "tcgen05.cp.cta_group::1.128x256b %rd1;": "expected [taddr], s-desc",
    }
    for text, what in cases.items():
        r = scan(text)
        assert r.codes == ("PTX-MALFORMED",), (text, r.codes)
        assert what in r.findings[0].message() and not r.instructions


def test_cta_group_mixing_is_per_kernel():
    k = ".visible .entry {}()\n{{\n{}\n}}\n"
    one = k.format("a", "tcgen05.cp.cta_group::1.128x256b [%r0], %rd1;")
    two = k.format("b", "tcgen05.cp.cta_group::2.128x256b [%r0], %rd1;")
    assert "PTX-CTA-GROUP-MIXED" not in scan(one + two).codes
    both = k.format("c", "tcgen05.cp.cta_group::1.128x256b [%r0], %rd1;\n"
                         "tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%r1], 32;")
    r = scan(both)
    (f,) = [f for f in r.findings if f.code == "PTX-CTA-GROUP-MIXED"]
    assert f.line == 5 and "at line 4 in c" in f.message()


# ---------------------------------------------------------------------------------------------
# The catalog: every PTX-* code is catalogued, explained and shown both ways.


def test_scan_codes_are_the_catalogs_ptx_rules():
    ptx = {c for c, r in catalog().items() if r.applies == "ptx"}
    assert ptx == set(SCAN_CODES)
    for code in ptx:
        cmd = example(catalog()[code].illegal).command()
        assert cmd.startswith("printf '%s\\n' '") and " | descgen scan -" in cmd


@pytest.mark.skipif(shutil.which("sh") is None, reason="no POSIX shell")
def test_a_catalog_example_command_runs_in_a_shell(tmp_path):
    """The printed example is a real command: run it (with this interpreter's descgen)."""
    import sys

    cmd = example(catalog()["PTX-ASHIFT-M"].illegal).command()
    cmd = cmd.replace("descgen scan", f"{sys.executable} -m descgen scan")
    proc = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("<stdin>:1: error: PTX-ASHIFT-M idesc %r1 = 0x04200010: .ashift with M = 64")


# ---------------------------------------------------------------------------------------------
# The command line.


def invoke(*args: str, input: str | None = None):
    result = _runner().invoke(descgen_cli(), list(args), input=input, catch_exceptions=True)
    assert "Traceback" not in result.stdout + result.stderr
    return result


def descgen_cli():
    from descgen.cli import cli

    return cli


SNIPPET = "\n".join([
    ".version 9.0",
    ".target sm_100a",
    "mov.b32 %r1, 0x04200010;",
    f"mov.b64 %rd2, {B:#x};",
    "tcgen05.mma.cta_group::1.kind::f16.ashift [%r0], [%r4], %rd2, %r1, 1;",
    "tcgen05.cp.cta_group::1.128x256b [%r0], %rd7;",
    "",
])


def test_cli_compiler_style_lines_and_summary(tmp_path):
    """E38: errors and warnings at their lines; notes (PTX-OPERAND-UNRESOLVED) only with -v; one
    summary line per file on stderr, the run-time operands grouped with why."""
    path = tmp_path / "k.ptx"
    path.write_text(SNIPPET)
    r = invoke("scan", str(path))
    assert r.exit_code == 1
    assert r.stdout.splitlines() == [
        f"{path}:5: error: PTX-ASHIFT-M idesc %r1 = 0x04200010: .ashift with M = 64 (allowed: 128, 256) "
        "[§9.7.16.10.9.1 (.ashift)]",
    ]
    assert r.stderr == (f"{path}: 2 instructions; 3 descriptor operands: 2 fully known, 0 partly known "
                        "(fields checked), 1 unknown; run-time: 1 s-desc every field (no definition in the function); "
                        "1 error, 0 warnings, 1 note (-v)\n")
    assert invoke("scan", str(path), "--exit-zero").exit_code == 0


def test_cli_stdin_verbose_and_clean_exit():
    r = invoke("scan", "-", "-v", input=SNIPPET.replace("0x04200010", "0x08400010"))
    assert r.exit_code == 0
    assert r.stdout.splitlines() == [
        "<stdin>:5: instruction: tcgen05.mma.cta_group::1.kind::f16.ashift [%r0], [%r4], %rd2, %r1, 1;",
        "    idesc %r1 = 0x08400010 (mov.b32 at line 3): kind f16, M 128, N 256, K 16, atype f16, btype f16, "
        "dtype f32, A k-major, B k-major",
        "    b-desc %rd2 = 0x4000404000010440 (mov.b64 at line 4): start 0x4400, LBO 16, SBO 1024, swizzle 128B, "
        "base offset 0, LBO mode relative",
        "    rules not checked: SMEM-BASE-OFFSET-TABLE41, SMEM-OUTSIDE-CTA",
        "<stdin>:6: instruction: tcgen05.cp.cta_group::1.128x256b [%r0], %rd7;",
        "    s-desc %rd7: unknown: every field unknown: no definition in the function",
        "        bits " + "_".join(["????"] * 16),
        "        fields checked: none",
        "    rules not checked: SMEM-BASE-OFFSET-BOUNDARY, SMEM-BASE-OFFSET-IGNORED, SMEM-BASE-OFFSET-TABLE41, "
        "SMEM-LBO-MODE-ARCH, SMEM-LBO-MODE-BASE-OFFSET, SMEM-LBO-MODE-SWIZZLE, SMEM-OUTSIDE-CTA",
        "<stdin>:6: note: PTX-OPERAND-UNRESOLVED s-desc %rd7: every field unknown: no definition in the function "
        "[§9.7.16.10.9.1 (descriptor operands); E38]",
    ]


def test_cli_json_lines_are_streamed():
    r = invoke("scan", "-", "--json", input=SNIPPET)
    assert r.exit_code == 1
    docs = [json.loads(line) for line in r.stdout.splitlines()]
    assert [d["type"] for d in docs] == ["run", "instruction", "instruction", "file", "summary"]
    assert (docs[0]["descgen"] == 1 and docs[0]["command"] == "scan"
            and docs[0]["input"] == {"files": ["-"], "arch": None})
    mma, cp, file, summary = docs[1:]
    assert file["counts"] == summary["counts"] == {
        "instructions": 2, "operands": 3, "known": 2, "partial": 0, "unknown": 1, "resolved": 2, "unresolved": 1,
        "errors": 1, "warnings": 0, "notes": 1}
    assert file["run_time"] == [{"count": 1, "operands": ["s-desc"], "unknown": "every field",
                                 "why": "no definition in the function"}]
    assert [(f["line"], f["code"], f["severity"], f["operand"]) for f in mma["findings"] + cp["findings"]] == [
        (5, "PTX-ASHIFT-M", "error", "idesc"), (6, "PTX-OPERAND-UNRESOLVED", "info", "s_desc")]
    assert mma["qualifiers"]["ashift"] is True and mma["qualifiers"]["a_tmem"] is True
    assert mma["operands"][0] == {
        "role": "idesc", "name": "idesc", "text": "%r1", "resolved": True, "value": "0x04200010", "width": 32,
        "status": "known", "known_mask": "0xffffffff", "known_value": "0x04200010", "unknown_fields": [],
        "origin": "mov.b32", "origin_line": 3, "reason": None, "range": None}
    assert mma["decoded"]["idesc"]["kind"] == "f16" and "m" in mma["fields_checked"]["idesc"]
    op = cp["operands"][0]
    assert op["status"] == "unknown" and op["known_mask"] == "0x0000000000000000"
    assert op["reason"] == "no definition in the function"
    assert {n["code"] for n in cp["not_checked"]} >= {"SMEM-LBO-MODE-ARCH"}


def test_cli_several_files_directories_and_not_ptx(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.ptx").write_text(SNIPPET.replace("0x04200010", "0x08400010"))
    (tmp_path / "b.ptx").write_text(SNIPPET)
    (tmp_path / "empty.ptx").write_text("")
    (tmp_path / "notes.txt").write_text("not scanned")
    r = invoke("scan", str(tmp_path))
    assert r.exit_code == 2  # one exit status for the run: b.ptx has an error (1), empty.ptx is not PTX (2)
    assert [line.split(": ")[0] for line in r.stdout.splitlines()] == [f"{tmp_path / 'b.ptx'}:5"]
    err = r.stderr.splitlines()
    assert err[0].startswith(f"{tmp_path / 'b.ptx'}: 2 instructions")
    assert err[1] == f"{tmp_path / 'empty.ptx'}: error: not PTX (the file is empty); not scanned"
    assert err[2].startswith(f"{tmp_path / 'sub' / 'a.ptx'}: 2 instructions")
    assert err[3].startswith("2 files, 1 not PTX: 4 instructions; 6 descriptor operands: 4 fully known")
    (tmp_path / "empty.ptx").unlink()
    assert invoke("scan", str(tmp_path)).exit_code == 1
    r = invoke("scan", str(tmp_path / "sub"), "/nonexistent/k.ptx")
    assert r.exit_code == 2 and "cannot read /nonexistent/k.ptx" in r.stderr


def test_cli_usage_errors_exit_2():
    r = invoke("scan", "/nonexistent/k.ptx")
    assert r.exit_code == 2 and "cannot read /nonexistent/k.ptx: No such file or directory" in r.stderr
    r = invoke("scan", "-", "--arch", "sm_99a", input="")
    assert r.exit_code == 2 and "Invalid value for '--arch'" in r.stderr
    r = invoke("scan")
    assert r.exit_code == 2 and "Missing argument" in r.stderr


def test_cli_arch_option_overrides_the_target():
    text = SNIPPET.replace("0x04200010", "0x082004a0").replace("kind::f16.ashift", "kind::i8").replace("[%r4]", "[%r4]")
    assert invoke("scan", "-", input=text.replace("sm_100a", "sm_103a")).exit_code == 1
    assert invoke("scan", "-", "--arch", "sm_100a", input=text.replace("sm_100a", "sm_103a")).exit_code == 0


def test_cli_rules_and_explain_know_the_ptx_codes():
    r = invoke("rules", "--applies", "ptx", "--plain")
    assert r.exit_code == 0 and [line.split()[0] for line in r.stdout.splitlines()] == list(SCAN_CODES)
    r = invoke("explain", "PTX-SCALE-VEC-REQUIRED", "--plain")
    assert r.exit_code == 0
    assert "illegal=printf '%s\\n' 'tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale" in r.stdout
    assert "illegal.reports=" in r.stdout and "error PTX-SCALE-VEC-REQUIRED" in r.stdout


def test_functions_without_descriptor_instructions_are_skipped_as_if_read():
    """Text is read function by function; a function with nothing the scanner reads is skipped
    unread (skipping.unread). Reading every line (a line iterator is never skipped) gives the same."""
    from descgen.ptx import skipping
    from descgen.ptx.scan import scan_stream

    plain = ("\t// .globl plain\n.visible .entry plain(.param .u64 p)\n{\n\t.reg .b32 %r<9>;\n\t.reg .b64 %rd<3>;\n"
             "\tld.param.u64 %rd1, [p]; // a comment with ; and {\n\tmov.b64 {%r1, %r2}, %rd1;\n$L__BB9_1:\n"
             "\tadd.s32 %r3, %r1, 1;\n\tsetp.lt.u32 %p1, %r3, 8;\n\t@%p1 bra $L__BB9_1;\n\tret;\n\n}\n")
    unfinished = "\tmov.b64 %rd5, 1\n"  # no ';': the next header continues it, so it is read
    declared = ".extern .func (.param .b32 r) helper\n(\n\t.param .b32 a\n)\n;\n"
    mma = lambda name, sbo: (f".visible .entry {name}()\n{{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n"  # noqa: E731
                             f"\tmov.b32 %r1, 0x08400010;\n\tmov.b64 %rd1, {A:#x};\n"
                             f"\tmov.b64 %rd2, {B | sbo << 32:#x};\n"
                             f"\t{MMA}\n}}\n")
    text = (".version 8.7\n.target sm_100a\n.address_size 64\n" + mma("first", 0x48) + plain + declared
            + plain.replace("plain", "plain2") + mma("second", 0) + plain.replace("plain", "open").rstrip("}\n")
            + "\n" + mma("third", 0x49) + unfinished + plain.replace("plain", "last"))
    parts = list(skipping.functions(text))
    assert "".join(parts) == text
    assert [skipping.unread(p) for p in parts] == [False, False, True, True, True, False, True, False, True]
    # "open" (no closing brace) is skipped; "last" is not: the lexer is not clean after "unfinished"
    skipped, read = scan_ptx(text), scan_stream(iter(text.splitlines()))
    chunks = list(read)
    assert [i.as_dict() for c in chunks for i in c.instructions] == [i.as_dict() for i in skipped.instructions]
    assert [f.as_dict() for c in chunks for f in c.findings] == [f.as_dict() for f in skipped.findings]
    lines = text.splitlines()
    assert [(f.line, f.code) for f in skipped.findings if f.severity != "info"] == [
        (11, "MMA-SBO-ATOM"), (74, "MMA-SBO-ATOM")]
    assert MMA in lines[10] and MMA in lines[73] and "third" in lines[66]
