"""``descgen instrument``: the run-time checks agree with the Python engine, and the PTX assembles.

The checks are run by an independent interpreter (tests/check_machine.py) on real compiler output
(the corpus), each site's run-time bits filled with random values weighted towards each field's
legal ones, and compared with what ``check_mma`` / ``check_wgmma`` / ``validate_smem`` say of the
same words: the block reports a finding exactly when the engine finds an error or warning among
the (code, operand) pairs the site checks at run time, and the one it reports is one of them.
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from check_machine import Machine, blocks, const_tables
from descgen import check_mma, check_wgmma, validate_smem
from descgen import UsageError
from descgen.model.engine import KnownBits, plan
from descgen.model.facts import kind_facts
from descgen.ptx.qualifiers import CpQualifiers, MmaQualifiers, WgmmaQualifiers
from descgen.ptx.scan import scan_ptx
from descgen.sanitizer.instrument import ROLES, instrument_ptx

CORPUS = Path(__file__).parent / "corpus"
#: One file of each compiler and family (sm_90a wgmma, sm_100a tcgen05; idesc from a parameter).
FILES = ["cutlass_sm90/cute_tutorial_wgmma_sm90.ptx", "cutlass_sm90/cutlass_62_hopper_sparse_gemm.ptx",
         "triton_sm90/matmul_fp8e4nv_128x128x128_w4_s3_bk_sm90.ptx", "handwritten_sm90/wgmma_forms.ptx",
         "cutlass/cute_tutorial_01_mma_sm100.ptx", "thunderkittens/tk_mxfp8_b200_gemm.ptx",
         "tilelang/tl_gemm_tcgen5mma_ws_bf16_128x256x64.ptx", "cutedsl/prim_1cta_mma_f16_128x128x64.ptx",
         "deepgemm/dg_sm100_fp8_gemm_1d1d_2cta.ptx"]
ROLE_OF = {v: k for k, v in ROLES.items() if k != "s_desc"}


def _layout(q, role: str) -> str:
    if isinstance(q, WgmmaQualifiers):
        return "wgmma_smem_desc"
    if role == "idesc":
        return kind_facts(q.kind).plan.layout.name
    return {"zcm": "zcm_desc"}.get(role, "smem_desc")


def _fill(rng: random.Random, known: KnownBits, width: int, lay: str, kind: str | None) -> int:
    """A word with ``known``'s bits and random unknown ones: each field with an unknown bit gets a
    legal raw value (0 for reserved bits, a defined code) three times in four, else any."""
    word = known.value & known.mask
    p = plan(lay, kind)
    for f in p.layout.fields:
        fmask = ((1 << f.width) - 1) << f.lo
        if fmask & ~known.mask & ((1 << width) - 1) == 0:
            continue
        if rng.random() < 0.75:
            if f.type == "reserved":
                raw = 0
            elif f.type == "constant":
                raw = f.const
            elif f.type == "enum":
                raw = rng.choice(list(f.codes(kind).values()))
            else:
                raw = rng.randrange(1 << f.width)
        else:
            raw = rng.randrange(1 << f.width)
        free = fmask & ~known.mask
        word = (word & ~free) | ((raw << f.lo) & free)
    return word


def _python(inst, words: dict[str, int], arch: str | None, smem_size: int) -> set[tuple[str, str]]:
    """The (code, operand) of each error or warning the engine finds for the instruction's words."""
    q, ctx = inst.qualifiers, dict(inst.report.context)
    if isinstance(q, WgmmaQualifiers):
        args = {k: ctx[k] for k in ("atype", "btype", "dtype", "m", "n", "k", "sp", "trans_a", "trans_b", "scale_a",
                                    "scale_b", "scale_d", "sp_sel", "satfinite")}
        report = check_wgmma(**args, a_desc=words.get("a_desc"), b_desc=words["b_desc"], smem_size=smem_size)
    elif isinstance(q, CpQualifiers):
        report = validate_smem(words["s_desc"], arch=arch, smem_size=smem_size)
        return {(f.code, "s_desc") for f in report.findings if f.severity in ("error", "warning")}
    else:
        report = check_mma(idesc=words["idesc"], kind=q.kind, a_desc=words.get("a_desc"), b_desc=words["b_desc"],
                           zcm=words.get("zcm"), smem_size=smem_size,
                           **{k: v for k, v in ctx.items() if v is not None and k != "smem_size"})
    out = set()
    for f in report.findings:
        if f.severity in ("error", "warning"):
            head = f.field.split(".")[0]
            out.add((f.code, head if head in ("a_desc", "b_desc", "zcm") else "idesc"))
    return out


@pytest.mark.parametrize("name", FILES)
def test_checks_agree_with_the_engine(name):
    text = (CORPUS / name).read_text()
    out = instrument_ptx(text, file=name)
    scanned = {i.line: i for i in scan_ptx(text, filename=name).instructions}
    code_blocks = blocks(out.ptx)
    tables = const_tables(out.ptx)
    arch = (re.search(r"\.target\s+(sm_\w+)", text) or [None, None])[1]
    rng = random.Random(name)
    checked = 0
    for site in out.sites:
        if not site.checks:
            continue
        inst = scanned[site.line]
        q = inst.qualifiers
        kind = q.kind if isinstance(q, MmaQualifiers) else None
        pairs = set(site.checks)
        for trial in range(60):
            words, regs = {}, {}
            for o in inst.operands:
                if o.resolved:
                    words[o.role] = o.value
                    continue
                w = _fill(rng, o.bits, o.width, _layout(q, o.role), kind if o.role == "idesc" else None)
                words[o.role] = w
                regs[o.text] = w
            regs.update({p: 1 for p in re.findall(r"%p\w*", code_blocks[site.index][0])})
            smem_size = rng.choice((0x30000, 0x30000, 0x400 * rng.randrange(1, 200)))
            m = Machine(tables, regs, smem_size=smem_size)
            m.run(code_blocks[site.index])
            expected = _python(inst, words, arch, smem_size) & pairs
            records = m.records()
            assert m.trapped == bool(expected), (name, site.line, words, expected, records)
            if expected:
                (rec,) = records
                role = "s_desc" if isinstance(q, CpQualifiers) else ROLE_OF[rec["operand"]]
                assert rec["site"] == site.index and rec["flags"] == 1
                assert (site.codes[rec["code"]], role) in expected, (name, site.line, words, expected, rec)
                assert rec["word"] == words[role if role in words else "idesc"]
            checked += 1
    assert checked, f"{name}: no site checked at run time"


def _ptxas_version() -> tuple[int, int] | None:
    if shutil.which("ptxas") is None:
        return None
    got = subprocess.run(["ptxas", "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release (\d+)\.(\d+)", got)
    return (int(m.group(1)), int(m.group(2))) if m else None


#: The newest PTX ISA version each ptxas release reads (CUDA 13.0: 9.0).
PTX_ISA = {(13, 0): (9, 0), (12, 9): (8, 8), (12, 8): (8, 7)}


CORPUS_FILES = sorted(str(p.relative_to(CORPUS)) for p in CORPUS.glob("*/*.ptx"))


@pytest.mark.skipif(_ptxas_version() is None, reason="needs ptxas (the CUDA toolkit) on PATH")
@pytest.mark.parametrize("name", CORPUS_FILES)
def test_every_corpus_file_assembles_instrumented(name, tmp_path):
    """Every corpus file, instrumented, has one block per site checked at run time and, where this
    ptxas reads its .version, assembles for its target without C7510 (the ones whose .version is
    newer are skipped and named)."""
    text = (CORPUS / name).read_text()
    target = re.search(r"\.target\s+(sm_\w+)", text)
    version = re.search(r"\.version\s+(\d+)\.(\d+)", text)
    out = instrument_ptx(text, file=name)
    assert out.ptx.count("{ // descgen: site") == sum(1 for s in out.sites if s.checks)
    assert not [n for s in out.sites for n in s.not_compiled], "a rule left open did not compile"
    newest = PTX_ISA.get(_ptxas_version(), (9, 0))
    if target is None or version and (int(version[1]), int(version[2])) > newest:
        pytest.skip(f"{name}: .version {version and version[0]} is newer than this ptxas reads")
    src = tmp_path / "in.ptx"
    src.write_text(out.ptx)
    run = subprocess.run(["ptxas", "-arch", target[1], str(src), "-o", str(tmp_path / "out.cubin")],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[:2000]
    assert "C7510" not in run.stderr


def test_most_of_the_corpus_assembles():
    """The skips above are the exception: most corpus files are PTX this ptxas reads."""
    newest = PTX_ISA.get(_ptxas_version() or (13, 0), (9, 0))
    readable = [n for n in CORPUS_FILES
                if (v := re.search(r"\.version\s+(\d+)\.(\d+)", (CORPUS / n).read_text()))
                and (int(v[1]), int(v[2])) <= newest]
    assert len(readable) >= 60, len(readable)


def test_a_proven_site_gets_no_check():
    text = (".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n.reg .f32 %f<5>;\n"
            "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, 0x4000004000010040, "
            "0x4000004000010440, 1, 1, 1, 0, 0;\nret;\n}\n")
    out = instrument_ptx(text)
    assert [s.proven for s in out.sites] == [True] and "{ // descgen" not in out.ptx


def test_bad_options_are_refused():
    with pytest.raises(UsageError, match="INSTRUMENT-OPTION"):
        instrument_ptx(".target sm_90a\n", on_error="ignore")
    once = instrument_ptx(".version 8.0\n.target sm_90a\n.address_size 64\n").ptx
    with pytest.raises(UsageError, match="already"):
        instrument_ptx(once)
