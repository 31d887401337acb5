"""Three things a new user tripped over: ``descgen port`` of a word that needs no port or is no
shared memory descriptor; a bare 32-bit word that is a tensor memory address (decode, batch);
the bare target ``sm_110`` and the targets each ``--arch`` lists (errata E44, E32, E49)."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

import descgen
from descgen.batch import DESCRIPTORS, handle
from descgen.model.catalog import constraints
from descgen.model.context import bare_target
from descgen.words.identify import Reading, _rank, identify
from descgen.ptx.scan import scan_ptx

from conftest import cli_run as run

ROOT = Path(__file__).resolve().parents[1]
HOPPER = 0x4000004000010040  # wgmma (sm_90a): bit 46 clear
BLACKWELL = 0x4000404000010040  # tcgen05 (sm_100a): the same word with bit 46 set


def batch(*requests: dict) -> list[dict]:
    return [json.loads(line) for line in run("batch", input="\n".join(map(json.dumps, requests))).stdout.splitlines()]


# --------------------------------------------------------------------------------------------
# port: a word already in the target family; a word that is no shared memory descriptor.


def test_port_of_a_hopper_word_to_sm_90a_changes_nothing() -> None:
    """A word valid in both families with bit 46 clear is wgmma's (identify, E44): to sm_90a it is
    already there, not a tcgen05 word to port."""
    p = descgen.port_smem(HOPPER, to="sm_90a")
    assert (p.word, p.changes, p.flipped) == (HOPPER, (), 0)
    assert (p.source.descriptor, p.target.descriptor, p.from_arch, p.to_arch) == ("wgmma_smem", "wgmma_smem", "sm_90a",
                                                                                  "sm_90a")
    assert p.note == ("0x4000004000010040 is already a wgmma (sm_90a) descriptor "
                      "(as tcgen05 (sm_100a): SMEM-VERSION-CONST): nothing to port")
    piped = run("port", hex(HOPPER), "--to", "sm_90a")
    assert piped.stdout.splitlines() == ["word=0x4000004000010040", "from=sm_90a wgmma_smem 0x4000004000010040",
                                         "to=sm_90a wgmma_smem 0x4000004000010040", "flipped=0x0000000000000000"]
    assert piped.stderr == f"note: {p.note}\n"
    assert json.loads(run("port", hex(HOPPER), "--to", "sm_90a", "--json").stdout)["result"]["note"] == p.note
    # the other way round it is ported, and a tcgen05 word to a tcgen05 target is already there
    assert descgen.port_smem(HOPPER, to="sm_100a").word == BLACKWELL
    assert descgen.port_smem(BLACKWELL, to="sm_103a").note.startswith(
        "0x4000404000010040 is already a tcgen05 (sm_100a)")


@pytest.mark.parametrize("word, what", [
    (0x08400010, "an instruction descriptor (consistent with .kind::f16, .kind::f8f6f4)"),
    (0x00600100, "a tensor memory address (lane 96, column 256; §9.7.16.1.1)"),
    (0x00001234, "a 32-bit word that no .kind reads as an instruction descriptor without an error and that is no "
                 "valid tensor memory address"),
])
def test_port_refuses_a_word_below_2_32_naming_what_it_is(word: int, what: str) -> None:
    for to in ("sm_90a", "sm_100a"):
        with pytest.raises(descgen.WordError) as e:
            descgen.port_smem(word, to=to)  # type: ignore[arg-type]
        assert e.value.code == "PORT-WORD" and f"{word:#010x} is {what}" in str(e.value)
        assert "a shared memory descriptor is a 64-bit word (its SBO is in bits 32-45)" in str(e.value)
    refused = run("port", f"{word:#010x}", "--to", "sm_90a", code=2)
    assert refused.stdout == "" and what in refused.stderr and "PORT-WORD]" in refused.stderr


def test_port_refuses_a_word_of_neither_family_as_a_rule_error() -> None:
    with pytest.raises(descgen.EncodeError) as e:
        descgen.port_smem(0x6000404000010040, to="sm_90a")  # swizzle code 3 (tcgen05), bit 46 (wgmma)
    assert e.value.code == "PORT-WORD-INVALID"
    assert ("is neither: as tcgen05 (sm_100a), SMEM-SWIZZLE-CODE; as wgmma (sm_90a), WGMMA-SMEM-RESERVED-46"
            in str(e.value))
    with pytest.raises(descgen.EncodeError) as runtime:  # low half 0: CUTLASS's runtime idesc (E31)
        descgen.port_smem(0x0840001000000000, to="sm_100a")
    assert ("it reads as CUTLASS's 64-bit runtime instruction descriptor (its upper half 0x08400010"
            in str(runtime.value))
    assert "PORT-WORD-INVALID]" in run("port", "0xffffffffffffffff", "--to", "sm_100a", code=1).stderr


# --------------------------------------------------------------------------------------------
# A bare 32-bit word: an instruction descriptor, or a tensor memory address.


def test_consistent_kinds_rank_before_a_tensor_memory_address() -> None:
    """An idesc reading with no error comes first even when it has a warning and the tensor memory
    address reading has none (the two never both occur for one word: M sets bits 24-28)."""
    warned = descgen.encode_idesc("f16", 128, 128, max_shift=16)
    idesc = Reading("idesc", "f16", descgen.validate_idesc(warned, "f16", ws=False))
    taddr = Reading("taddr", None, descgen.validate_taddr(0x00600100))
    assert idesc.ok and [f.severity for f in idesc.findings] == ["warning"] and taddr.ok and not taddr.findings
    assert [r.descriptor for r in _rank([taddr, idesc])] == ["idesc", "taddr"]
    assert [r.name for r in identify(0x00600100).consistent] == ["taddr"]


def test_a_bare_word_with_tensor_memory_context_is_read_as_an_address() -> None:
    """--warp (--alloc-columns, --alloc-base) is a tensor memory address's context: with it a bare
    32-bit word is read as one, in every output form; an idesc's context keeps it an idesc."""
    assert [(r.name, r.ok) for r in identify(0x00600100, warp=1).readings] == [("taddr", False)]
    assert "taddr" not in [r.name for r in identify(0x00600100, cta_group=1).readings]
    piped = run("decode", "0x00600100", "--warp", "1", code=1)
    assert piped.stdout.splitlines()[:4] == ["descriptor=taddr", "layout=taddr", "word=0x00600100", "ok=false"]
    assert "finding=error TADDR-WARP-LANES" in piped.stdout and "its context (--warp)" in piped.stderr
    assert run("decode", "0x00600100", "--warp", "1", "--short", code=1).stdout == \
        "0x00600100  taddr: column 256, lane 96; error TADDR-WARP-LANES\n"
    assert run("decode", "0x00600100", "--warp", "3", "--short").stdout == \
        "0x00600100  taddr: column 256, lane 96; no findings\n"
    as_json = json.loads(run("decode", "0x00600100", "--alloc-columns", "64", "--alloc-base", "0x100", "--json").stdout)
    assert as_json["input"]["as"] == "taddr" and as_json["result"]["ok"] \
        and as_json["result"]["not_checked"][0]["code"] == "TADDR-WARP-LANES"
    table = run("decode", "0x00600100", "--warp", "1", "--table", code=1).stdout
    assert "taddr" in table and "TADDR-WARP-LANES" in table
    mixed = run("decode", "0x00600100", "--warp", "1", "--cta-group", "1", code=2).stderr
    assert "--cta-group is an instruction descriptor's context and --warp a tensor memory address's" in mixed
    assert "add --as smem or --as wgmma_smem" in run("decode", "0x00600100", "--pattern-start", "0", code=2).stderr
    (bare,) = batch({"op": "decode", "word": "0x00600100", "warp": 1})
    assert list(bare["results"]) == ["taddr"] and bare["results"]["taddr"]["findings"][0]["code"] == "TADDR-WARP-LANES"


def test_batch_descriptor_errors_list_every_descriptor_from_the_one_list() -> None:
    """BATCH-DESCRIPTOR names what batch takes from descgen.words.identify.DESCRIPTORS, never a list
    written out; its hints name the descriptors of the word's width."""
    codes = tomllib.loads((ROOT / "tables" / "codes.toml").read_text(encoding="utf-8"))
    (entry,) = [u for u in codes["usage"] if u["code"] == "BATCH-DESCRIPTOR"]
    assert not any(d in entry["rule"] for d in ("wgmma_smem", "taddr", "zcm"))
    unknown, narrow, wide = (handle({"op": "decode", "descriptor": "matrix", "word": 1}),
                             handle({"op": "validate", "word": "0x00600100"}),
                             handle({"op": "validate", "word": 1 << 40}))
    assert unknown["error"]["findings"][0]["allowed"] == ", ".join(DESCRIPTORS)
    for answer in (narrow, wide):
        allowed = answer["error"]["findings"][0]["allowed"]
        assert allowed.split(", ") == [d if d != "idesc" else "idesc (with kind)" for d in DESCRIPTORS]
    assert 'add "kind", or "descriptor": "taddr"' in narrow["error"]["message"]
    assert 'add "descriptor": "smem", "zcm" or "wgmma_smem"' in wide["error"]["message"]
    key = handle({"op": "decode", "word": 1, "pattern_start": 0})["error"]["message"]
    assert 'add "descriptor": "smem" or "wgmma_smem"' in key


# --------------------------------------------------------------------------------------------
# Targets (E49): a bare sm_110 has no tcgen05.

PTX = (".version 9.0\n.target sm_100a\nmov.b32 %r1, 0x08400010; mov.b64 %rd1, 0x4000404000010040; "
       "mov.b64 %rd2, 0x4000404000010440; tcgen05.mma.cta_group::1.kind::f16 [%r0], %rd1, %rd2, %r1, 1;\n")


def test_e49_scan_takes_a_bare_target_as_its_target() -> None:
    """scan --arch overrides the file's .target: a bare target is taken as `.target sm_110` is,
    the first tcgen05 instruction PTX-TARGET-TCGEN05 (ptxas 13.0 rejects it there)."""
    assert scan_ptx(PTX).codes == ()
    as_target = scan_ptx(PTX.replace("sm_100a", "sm_110"))
    for bare in ("sm_110", "SM_103", "sm_101"):
        r = scan_ptx(PTX, arch=bare)  # type: ignore[arg-type]
        assert r.codes == as_target.codes == ("PTX-TARGET-TCGEN05",) and r.arch_from == "option"
        assert r.findings[0].finding.value == bare.lower() and "(--arch) has no tcgen05" in str(r.findings[0])
    scanned = run("scan", "-", "--arch", "sm_110", input=PTX, code=1)
    assert "error: PTX-TARGET-TCGEN05 .target: .target sm_110 (--arch) has no tcgen05" in scanned.stdout
    assert run("scan", "-", "--arch", "sm_110a", input=PTX).stdout == ""


def test_e49_the_library_names_a_bare_targets_tcgen05_targets() -> None:
    assert bare_target("sm_110") == bare_target("sm_101") == ("sm_110a", "sm_110f")
    assert bare_target("sm_103") == ("sm_103a", "sm_103f") and bare_target("sm_90") == bare_target("sm_110a") == ()
    with pytest.raises(descgen.UsageError) as e:
        descgen.validate_idesc(0x08400010, "f16", arch="sm_110")  # type: ignore[arg-type]
    assert e.value.code == "CONTEXT-ARCH" and "sm_110 has no tcgen05" in str(e.value)
    assert "its architecture-specific and family targets are sm_110a and sm_110f (E49)" in str(e.value)


def _listed(stderr: str) -> list[str]:
    tail = re.search(r"one of (.*?)\s*$", stderr.replace("\n", " ")).group(1)  # type: ignore[union-attr]
    return re.findall(r"sm_\d+[af]?", tail)


def test_e49_each_arch_error_lists_the_targets_its_command_takes() -> None:
    """Each --arch lists what that command takes, and takes what it lists."""
    tcgen05 = list(constraints().targets)
    bare = ["sm_100", "sm_103", "sm_110"]
    commands = {
        ("idesc", "--kind", "f16", "--m", "128", "--n", "256"): tcgen05,
        ("check", "--idesc", "0x08400010", "--kind", "f16", "--adesc", hex(BLACKWELL),
         "--bdesc", hex(BLACKWELL)): tcgen05,
        ("smem", "--start-address", "0x400", "--lbo", "16", "--sbo", "1024", "--swizzle", "128B"): ["sm_90a", *tcgen05],
        ("decode", hex(BLACKWELL)): ["sm_90a", *tcgen05],
        ("validate", hex(BLACKWELL)): ["sm_90a", *tcgen05],
        ("scan", "-"): ["sm_90a", *tcgen05, *bare],
    }
    for args, takes in commands.items():
        assert _listed(run(*args, "--arch", "sm_99", code=2, input=PTX).stderr) == takes, args
        for target in takes:
            result = run(*args, "--arch", target, code=None, input=PTX)
            assert result.exit_code != 2 and "Invalid value for '--arch'" not in result.stderr, (args, target)
        for other in {"sm_90a", *bare} - set(takes):
            refused = run(*args, "--arch", other, code=2).stderr
            assert ("Hopper's target" if other == "sm_90a" else f"'{other}' has no tcgen05") in refused, (args, other)
