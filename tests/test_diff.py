"""descgen diff and CUTLASS's 64-bit runtime instruction descriptor (errata E31, E32).

Words: f16 M=128 N=256 is 0x08400010 and N=128 is 0x08200010 (Table 42: N >> 3 in bits 17-22,
M >> 4 in bits 24-28, dtype f32 = 1 in bits 4-5). CUTLASS's runtime form holds the idesc in the
upper 32 bits: 0x0840001000000000.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import descgen
from descgen import UsageError, WordError

from test_cli import run, run_json

F16_N256, F16_N128 = 0x08400010, 0x08200010


# --------------------------------------------------------------------------------------------
# The runtime form (E31).


def test_e31_runtime_form_is_the_upper_half():
    r = descgen.idesc_from_runtime(F16_N256 << 32)
    assert (r.idesc, r.low, r.word) == (F16_N256, 0, F16_N256 << 32)
    assert "upper 32 bits" in r.note and "0x00000000" in r.note and "E31" in r.note
    d = descgen.decode_idesc(r.idesc, "f16")
    assert (d.value("m"), d.value("n"), d.ok) == (128, 256, True)


def test_e31_a_nonzero_low_half_is_no_runtime_idesc():
    """CUTLASS writes 0 in the low half: any other 64-bit word given as an idesc (an smem word with
    --kind) is refused, never read as its upper half."""
    r = descgen.idesc_from_runtime(F16_N256 << 32)
    assert r.low == 0 and r.as_dict() == {"form": "cutlass_runtime", "word": "0x0840001000000000",
                                          "idesc": "0x08400010", "low": "0x00000000", "note": r.note}
    with pytest.raises(WordError) as e:
        descgen.idesc_from_runtime(F16_N256 << 32 | 0x00200010)
    assert e.value.findings[0].code == "IDESC-RUNTIME-LOW" and "its low 32 bits are 0x00200010" in str(e.value)
    for args in (("validate", "0x4000404000010040", "--kind", "f16"), ("decode", "0x4000404000010040", "--kind", "f16"),
                 ("check", "--idesc", "0x4000404000010040", "--kind", "f16", "--adesc", "0x4000404000010040",
                  "--bdesc", "0x4000404000010440")):
        refused = run(*args, code=2)
        assert "IDESC-RUNTIME-LOW" in refused.stderr and "descgen decode 0x4000404000010040" in refused.stderr


@pytest.mark.parametrize("word", [-1, 2**64, True])
def test_e31_runtime_form_word_range(word):
    with pytest.raises(WordError):
        descgen.idesc_from_runtime(word)


def test_e31_cli_decode_as_idesc_reads_the_upper_half_with_a_note():
    lines = run("decode", "0x0840001000000000", "--as", "idesc", "--kind", "f16").stdout.splitlines()
    assert lines[:3] == ["runtime.form=cutlass_runtime", "runtime.idesc=0x08400010", "runtime.low=0x00000000"]
    assert lines[3].startswith("runtime.note=read as CUTLASS's 64-bit runtime instruction descriptor")
    assert "word=0x08400010" in lines and "n=256" in lines and "m=128" in lines
    doc = run_json("decode", "0x0840001000000000", "--kind", "f16")
    assert doc["input"]["word"] == "0x0840001000000000"
    assert doc["result"]["word"] == "0x08400010" and doc["result"]["ok"] is True
    assert doc["runtime"]["idesc"] == "0x08400010" and doc["runtime"]["low"] == "0x00000000"
    out = run("decode", "0x0840001000000000", "--kind", "f16", "--table").stdout
    assert out.startswith("note: 0x0840001000000000 read as CUTLASS's 64-bit runtime instruction descriptor")
    # every kind (no --kind): the same note once, then the kinds
    lines = run("decode", "0x0840001000000000", "--as", "idesc").stdout.splitlines()
    assert "consistent=f16,f8f6f4" in lines and "runtime.idesc=0x08400010" in lines


def test_e31_plain_32_bit_decode_has_no_runtime_note():
    doc = run_json("decode", "0x08400010", "--kind", "f16")
    assert "runtime" not in doc
    assert not any(line.startswith("runtime.")
                   for line in run("decode", "0x08400010", "--kind", "f16").stdout.splitlines())


def test_e32_auto_detection_tries_the_runtime_form_when_the_low_half_is_0():
    """0x0840001000000000: as smem bits 53-60 = 0x42 (error), as zcm bit 36 set (error); the
    upper half is a clean f16/f8f6f4 idesc: the runtime form is the one consistent reading."""
    lines = run("decode", "0x0840001000000000").stdout.splitlines()
    assert "consistent=idesc" in lines
    assert "idesc.runtime.kinds=f16,f8f6f4" in lines and "idesc.kind=f16" in lines and "idesc.n=256" in lines
    assert any(line.startswith("smem.first_error=error SMEM-FIXED-53-CONST") for line in lines)
    doc = run_json("decode", "0x0840001000000000")
    assert doc["consistent"] == ["idesc"] and doc["runtime"]["kinds"] == ["f16", "f8f6f4"]


def test_e32_a_real_smem_word_stays_smem():
    # low half nonzero: never tried as a runtime idesc
    doc = run_json("decode", "0x4000404000010040")
    assert doc["consistent"] == ["smem"] and "idesc" not in doc["results"] and "runtime" not in doc
    # low half 0 but the upper half is no idesc of any kind (M = 0): not added
    doc = run_json("decode", "0x4000400000000000", code=None)
    assert "idesc" not in doc["results"]


def test_e32_ties_rank_smem_and_zcm_before_the_runtime_form():
    """0x0810000000000000 is a clean zcm (use span 17, skip span 1, column shift 8, Non-Zero Mask 0)
    and its upper half a clean f16 idesc (M = 128, N = 64, dtype f16): both have no finding, the
    zero-column mask is listed first; diff, which needs one layout, picks the zcm."""
    word = 0x0810000000000000
    assert descgen.decode_zcm(word).findings == () and descgen.decode_idesc(word >> 32, "f16").findings == ()
    doc = run_json("decode", hex(word))
    assert doc["consistent"] == ["zcm", "idesc"]
    assert descgen.diff(word, word).descriptor == "zcm"
    # one field off as an idesc (N), still zero findings as a zcm: the runtime form is never preferred on a tie
    other = descgen.encode_idesc("f16", 128, 128, dtype="f16") << 32
    assert descgen.diff(word, other).descriptor == "zcm"
    assert descgen.diff(word, other, descriptor="idesc").changed[0].name == "n"


def test_e32_taddr_only_where_no_kind_reads_the_word():
    doc = run_json("decode", "0x00200000", code=None)
    assert doc["input"]["as"] == "taddr" and doc["result"]["descriptor"] == "taddr"
    assert {f["name"]: f["value"] for f in doc["result"]["fields"]} == {"column": 0, "lane": 32}
    assert set(run_json("decode", "0x08400010")["results"]) == set(descgen.KINDS)  # an idesc: never an address
    invalid = run_json("decode", "0x00900000", code=None)  # lane 144: no address, so the kinds' errors
    assert set(invalid["results"]) == set(descgen.KINDS)


# --------------------------------------------------------------------------------------------
# descgen.diff


def test_diff_n_only():
    d = descgen.diff(F16_N256, F16_N128)
    assert (d.descriptor, d.kind, d.equal) == ("idesc", "f16", False)
    (f,) = d.changed
    assert (f.name, f.bits, f.a_raw, f.b_raw, f.a_value, f.b_value, f.unit) == ("n", "17-22", 32, 16, 256, 128,
                                                                                "columns")
    assert not d.only_a and not d.only_b
    assert len(d.fields) == len(descgen.decode_idesc(F16_N256, "f16").fields)


def test_diff_equal_words():
    d = descgen.diff(F16_N256, F16_N256)
    assert d.equal and d.changed == ()


def test_diff_kind_given_and_findings_in_one_word():
    # M = 64 with N = 256 is legal for f16 with cta_group::1; N = 264 is not a legal N at all
    bad = F16_N256 & ~(0x3F << 17) | (33 << 17)
    d = descgen.diff(F16_N256, bad, kind="f16")
    assert [f.name for f in d.changed] == ["n"] and d.changed[0].b_value == 264
    assert [f.code for f in d.only_b] == ["IDESC-N-RANGE"] and d.only_a == ()


def test_diff_runtime_form_against_32_bit():
    d = descgen.diff(F16_N256 << 32, F16_N128)
    assert d.descriptor == "idesc" and [f.name for f in d.changed] == ["n"]
    assert d.runtime_a is not None and d.runtime_a.idesc == F16_N256 and d.runtime_b is None
    # a nonzero low half is no runtime form (E31): refused as an idesc
    with pytest.raises(WordError):
        descgen.diff(F16_N256 << 32, F16_N256 << 32 | 0x10, descriptor="idesc")
    # without --as, 64-bit words whose low halves are not 0 are smem/zcm (E32)
    assert descgen.diff(F16_N256 << 32, F16_N256 << 32 | 0x10).descriptor in ("smem", "zcm", "wgmma_smem")


def test_diff_smem_start_address():
    a = descgen.encode_smem(start_address=0x400, lbo=16, sbo=1024, swizzle="128B")
    b = descgen.advance_smem(a, 32)
    d = descgen.diff(a, b)
    assert d.descriptor == "smem" and [(f.name, f.a_value, f.b_value, f.unit) for f in d.changed] == [
        ("start_address", 0x400, 0x420, "bytes")]


def test_diff_zcm_and_taddr():
    a = descgen.encode_zcm(skip_span=2, use_span=3)
    b = descgen.encode_zcm(skip_span=2, use_span=4)
    d = descgen.diff(a, b, descriptor="zcm")
    assert [(f.name, f.a_value, f.b_value, f.a_raw, f.b_raw) for f in d.changed] == [("use_span", 3, 4, 2, 3)]
    d = descgen.diff(0x00200000, 0x00200010, descriptor="taddr")
    assert [(f.name, f.a_value, f.b_value, f.unit) for f in d.changed] == [("column", 0, 16, "columns")]


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1))
def test_diff_changed_fields_are_exactly_the_differing_bits(a, b):
    d = descgen.diff(a, b, descriptor="taddr")
    x = a ^ b
    assert {f.name for f in d.changed} == ({"column"} if x & 0xFFFF else set()) | ({"lane"} if x >> 16 else set())
    d = descgen.diff(a, b, kind="f16")
    covered = 0
    for f in d.changed:
        lo, _, hi = f.bits.partition("-")
        field_mask = ((1 << (int(hi or lo) - int(lo) + 1)) - 1) << int(lo)
        assert x & field_mask, f.name  # each changed field has a differing bit
        covered |= field_mask
    assert x & ~covered == 0  # every differing bit is in a changed field
    assert d.equal == (a == b)


@pytest.mark.parametrize("kwargs", [{"descriptor": "bogus"}, {"descriptor": "smem", "kind": "f16"}, {"kind": "f17"}])
def test_diff_usage_errors(kwargs):
    with pytest.raises(UsageError):
        descgen.diff(F16_N256, F16_N128, **kwargs)


def test_diff_no_kind_explains_either_word():
    with pytest.raises(UsageError) as e:
        descgen.diff(0xFFFFFFFF, 0xFFFFFFFE)
    assert e.value.code == "IDESC-KIND"


def test_diff_word_too_wide_for_taddr():
    with pytest.raises(WordError):
        descgen.diff(1 << 32, 0, descriptor="taddr")


# --------------------------------------------------------------------------------------------
# CLI


def test_cli_diff_piped():
    result = run("diff", "0x08400010", "0x08200010", code=1)
    lines = result.stdout.splitlines()
    assert lines[:6] == ["descriptor=idesc", "kind=f16", "a=0x08400010", "b=0x08200010", "equal=false", "changed=n"]
    assert "changed.n=256 columns -> 128 columns (bits 17-22: 0x20 -> 0x10)" in lines
    assert not any(line.startswith("same.") for line in lines)
    lines = run("diff", "0x08400010", "0x08200010", "--all", code=1).stdout.splitlines()
    assert "same.m=128 rows (bits 24-28: 0x08)" in lines and "same.atype=f16 (bits 7-9: 0x0)" in lines


def test_cli_diff_equal_exits_0():
    lines = run("diff", "0x08400010", "0x08400010", code=0).stdout.splitlines()
    assert "equal=true" in lines and "changed=" in lines


def test_cli_diff_json_and_table():
    doc = run_json("diff", "0x08400010", "0x08200010", "--kind", "f16", code=1)
    r = doc["result"]
    assert r["changed"] == ["n"] and r["equal"] is False and r["kind"] == "f16" and r["chosen"] == "given"
    n = next(f for f in r["fields"] if f["field"] == "n")
    assert n == {"field": "n", "bits": "17-22", "equal": False, "unit": "columns", "a": {"raw": 32, "value": 256},
                 "b": {"raw": 16, "value": 128}}
    out = run("diff", "0x08400010", "0x08200010", "--table", code=1).stdout
    assert "A 0x08400010  B 0x08200010" in out and "1 field(s) differ" in out and "17-22" in out
    assert "24-28" not in out  # equal fields only with --all
    assert "24-28" in run("diff", "0x08400010", "0x08200010", "--table", "--all", code=1).stdout


def test_cli_diff_findings_only_in_one():
    lines = run("diff", "0x00200000", "0x00800000", "--as", "taddr", code=1).stdout.splitlines()
    assert "changed.lane=32 lanes -> 128 lanes (bits 16-31: 0x0020 -> 0x0080)" in lines
    assert any(line.startswith("only_b=error TADDR-LANE-RANGE") for line in lines)


def test_cli_diff_runtime_note():
    lines = run("diff", "0x0840001000000000", "0x08200010", code=1).stdout.splitlines()
    assert any(line.startswith("a.runtime=read as CUTLASS's 64-bit runtime") for line in lines)
    assert "changed=n" in lines


@pytest.mark.parametrize("args", [
    ["diff", "0x08400010"],
    ["diff", "0x08400010", "0x08200010", "--as", "smem", "--kind", "f16"],
    ["diff", "0x100000000", "0", "--as", "taddr"],
    ["diff", "0xffffffff", "0xfffffffe"],
    ["diff", "1", "2", "--as", "bogus"],
])
def test_cli_diff_usage_errors_exit_2(args):
    run(*args, code=2)
    doc = json.loads(run(*args, "--json", code=2).stdout)
    assert doc["command"] == "diff" and "error" in doc


# --------------------------------------------------------------------------------------------
# Documentation.


def test_readme_diff_sample_is_current():
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    sample = re.search(r"```text\n\$ descgen diff (\S+) (\S+)\n(.*?)```", readme, flags=re.S)
    assert sample, "README diff sample"
    got = run("diff", sample.group(1), sample.group(2), code=1).stdout
    assert got == sample.group(3)


def test_e31_validate_reads_a_64_bit_word_with_a_kind_as_the_runtime_form():
    r = run("validate", "0x1040001000000000", "--kind", "f16", "--cta-group", "1", code=1)
    assert r.stdout.startswith("error IDESC-M-SHAPE m=256")  # the upper half, M = 256, is what was checked
    assert "note: 0x1040001000000000 read as CUTLASS's 64-bit runtime instruction descriptor" in r.stderr
    doc = run_json("validate", "0x0840001000000000", "--kind", "f16")
    assert doc["runtime"]["idesc"] == "0x08400010" and doc["result"]["decoded"]["idesc"]["word"] == "0x08400010"
    assert doc["input"]["word"] == "0x0840001000000000"
