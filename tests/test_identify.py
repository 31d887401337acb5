"""descgen.words.identify: the one way a bare word is read (decode, validate, batch, emit)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import descgen
from descgen.cli import cli
from descgen.words.identify import DESCRIPTORS, decode_as, identify

F16 = 0x08400010  # Table 42: f16 x f16 -> f32, M = 128, N = 256
SMEM = 0x4000404000010040  # K-major 128B swizzle at 0x100 (16-byte units 0x10), LBO 16, SBO 1024
RUNTIME = 0x0840001000000000  # CUTLASS's runtime form of F16 (E31)


def test_a_32_bit_word_is_read_under_every_kind_best_first():
    found = identify(F16)
    assert found.asked is None
    assert sorted(r.kind for r in found.readings) == sorted(descgen.KINDS)
    assert [r.name for r in found.consistent] == ["f16", "f8f6f4"]
    assert found.best.kind == "f16" and found.best.decoded.value("n") == 256
    assert all(not r.ok for r in found.readings[2:])


def test_a_64_bit_word_is_smem_or_zcm_fewest_findings_first():
    found = identify(SMEM)
    # bit 46 set: reserved in the wgmma descriptor (an error there), so tcgen05's reading is first
    assert [r.name for r in found.readings] == ["smem", "wgmma_smem", "zcm"]
    assert [r.name for r in found.consistent] == ["smem"]
    assert found.best.decoded.value("sbo") == 1024
    zcm = descgen.encode_zcm(skip_span=1, use_span=13, start_count=(1, 3, 5, 7))
    # a zcm word also passes as smem, with warnings on Table 40's fixed bits, and as a wgmma
    # descriptor (its set bits are all fields there): zcm ranks first
    assert [r.name for r in identify(zcm).consistent] == ["zcm", "wgmma_smem", "smem"]


def test_cutlass_runtime_form_is_read_when_the_low_half_is_zero():
    found = identify(RUNTIME)
    assert [r.name for r in found.consistent] == ["f16", "f8f6f4"]
    assert found.best.runtime is not None and found.best.runtime.idesc == F16
    assert found.best.decoded.word == F16
    # with a kind it is read as the runtime form directly
    given = identify(RUNTIME, kind="kind::f16")
    assert given.asked == "kind" and [r.name for r in given.readings] == ["f16"] and given.best.runtime.low == 0


def test_context_narrows_every_reading():
    # M = 64 exists only with cta_group::1 (Table 39): under cta_group::2 no kind is consistent
    m64 = descgen.encode_idesc("f16", 64, 64)
    assert identify(m64).best.ok
    assert not identify(m64, cta_group=2).consistent
    assert identify(m64, cta_group=2).best.report.context["cta_group"] == 2


def test_descriptor_given_reads_only_that_one():
    found = identify(SMEM, descriptor="zcm")
    assert found.asked == "descriptor" and [r.name for r in found.readings] == ["zcm"]
    assert [r.name for r in identify(0x00200000, descriptor="taddr").readings] == ["taddr"]


@pytest.mark.parametrize("kwargs, code", [
    ({"descriptor": "desc"}, "IDENTIFY-DESCRIPTOR"),
    ({"descriptor": "smem", "kind": "f16"}, "IDENTIFY-DESCRIPTOR"),
    ({"kind": "f17"}, "IDESC-KIND"),
    ({"cta_group": 3}, "CONTEXT-CTA-GROUP"),
])
def test_bad_calls_name_the_rule(kwargs, code):
    with pytest.raises(descgen.UsageError) as e:
        identify(F16, **kwargs)
    assert e.value.code == code


def test_decode_as_is_the_decoder_of_each_descriptor():
    assert set(DESCRIPTORS) == {"idesc", "smem", "zcm", "taddr", "wgmma_smem"}
    assert decode_as(SMEM, "smem").hex == descgen.decode_smem(SMEM).hex
    assert decode_as(F16, "idesc", "f16").value("m") == 128
    assert decode_as(0x00200000, "taddr").value("lane") == 32
    with pytest.raises(descgen.UsageError) as e:
        decode_as(F16, "idesc")
    assert e.value.code == "IDESC-KIND"


def test_cli_validate_chooses_the_reading_decode_chooses():
    runner = CliRunner()
    r = runner.invoke(cli, ["validate", hex(F16), "--plain"])
    assert r.exit_code == 0, r.output
    assert "read as .kind::f16" in r.stderr and "also consistent: .kind::f8f6f4" in r.stderr
    doc = json.loads(runner.invoke(cli, ["validate", hex(SMEM), "--json"]).stdout)
    assert doc["identified"] == {"reading": "smem", "why": "the first reading with no error finding",
                                 "consistent": ["smem"]}
    assert doc["input"]["as"] == "smem"
    # a word no kind explains: the reading with the fewest findings, exit 1
    bad = runner.invoke(cli, ["validate", "0xffffffff", "--plain"])
    assert bad.exit_code == 1 and "no reading is free of errors" in bad.stderr
    # --kind still fixes the reading, with no note
    fixed = runner.invoke(cli, ["validate", hex(F16), "--kind", "f16", "--plain"])
    assert fixed.exit_code == 0 and "read as" not in fixed.stderr
