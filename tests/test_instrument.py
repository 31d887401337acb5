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

from check_machine import Machine, blocks, const_tables, entry, function_statements
from descgen import UsageError
from descgen.ptx.qualifiers import CpQualifiers, MmaQualifiers
from descgen.ptx.scan import scan_ptx
from descgen.sanitizer.instrument import instrument_ptx
from descgen import check_wgmma
from sanitizer_cases import ROLE_OF, engine_findings as _python, fill as _fill, layout_of as _layout

CORPUS = Path(__file__).parent / "corpus"
#: One file of each compiler and family (sm_90a wgmma, sm_100a tcgen05; idesc from a parameter).
FILES = ["cutlass_sm90/cute_tutorial_wgmma_sm90.ptx", "cutlass_sm90/cutlass_62_hopper_sparse_gemm.ptx",
         "triton_sm90/matmul_fp8e4nv_128x128x128_w4_s3_bk_sm90.ptx", "handwritten_sm90/wgmma_forms.ptx",
         "cutlass/cute_tutorial_01_mma_sm100.ptx", "thunderkittens/tk_mxfp8_b200_gemm.ptx",
         "tilelang/tl_gemm_tcgen5mma_ws_bf16_128x256x64.ptx", "cutedsl/prim_1cta_mma_f16_128x128x64.ptx",
         "deepgemm/dg_sm100_fp8_gemm_1d1d_2cta.ptx"]
@pytest.mark.parametrize("name", FILES)
def test_checks_agree_with_the_engine(name):
    _agree(name, (CORPUS / name).read_text())


#: tcgen05.mma.ws with a zero-column mask from a kernel parameter (no corpus kernel has one at run
#: time): the idesc's M (64, 128: the mask's column shift is M's) and N as context.
ZCM_PTX = """.version 8.7
.target sm_100a
.address_size 64
.visible .entry k(.param .u64 z)
{
.reg .b32 %r<4>;
.reg .b64 %rd<4>;
ld.param.u64 %rd3, [z];
mov.b32 %r1, IDESC;
mov.b64 %rd1, 0x4000404000010040;
mov.b64 %rd2, 0x4000404000010440;
tcgen05.mma.ws.cta_group::1.kind::f16 [%r0], %rd1, %rd2, %r1, 1, %rd3;
ret;
}
"""


@pytest.mark.parametrize("idesc", ["0x04200010", "0x08200010", "0x04100010", "0x02100010", "run time"])
def test_zero_column_mask_checks_agree_with_the_engine(idesc):
    """A zero-column mask known at run time only: its own fields' checks and the ZCM-* rules the
    scan left open, against the engine; the rules read the idesc's M (128, 64, 32: its sub-masks
    and column shift) as a constant, or where the idesc is a run-time word too, from its register."""
    text = ZCM_PTX.replace("mov.b32 %r1, IDESC;", "ld.param.u32 %r1, [z];" if idesc == "run time"
                           else f"mov.b32 %r1, {idesc};")
    out = instrument_ptx(text)
    codes = set(out.sites[0].codes)
    assert {"ZCM-RESERVED-36", "ZCM-COLUMN-SHIFT-RANGE", "ZCM-COLUMN-SHIFT-M"} <= codes
    assert ("ZCM-SUBMASK-UNUSED" in codes) == (idesc != "0x02100010")  # (M = 32 uses all four sub-masks)
    assert ("ZCM-M" in codes) == (idesc == "run time") and not out.sites[0].not_compiled
    _agree(f"zcm {idesc}", text, trials=400)


def _agree(name: str, text: str, trials: int = 60) -> None:
    out = instrument_ptx(text, file=name)
    scanned = {i.line: i for i in scan_ptx(text, filename=name).instructions}
    code_blocks = blocks(out.ptx, out.sites)
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
        reads = dict(site.reads)
        for trial in range(trials):
            words, regs = {}, {}
            for o in inst.operands:
                if o.resolved:
                    words[o.role] = o.value
                    continue
                w = _fill(rng, o.bits, o.width, _layout(q, o.role), kind if o.role == "idesc" else None)
                words[o.role] = w
                regs[reads[o.role]] = w
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


def test_the_shared_memory_bound_is_exact_at_its_threshold():
    """SMEM-OUTSIDE-CTA compares a start address with a threshold computed from %aggr_smem_size at
    the function's entry (ceil(max(S - c, 0) / 16)): on every start address around it, for sizes
    below, at and past the first atom's extent, the checks fire exactly where the engine does."""
    name = "triton_sm90/matmul_fp16_128x128x64_w4_s3_sm90.ptx"
    text = (CORPUS / name).read_text()
    out = instrument_ptx(text, file=name)
    assert re.search(r"sub\.s32 %dgz_smem_size_t\d+_4, %dgz_smem_size, \d+;", out.ptx)  # (the entry's threshold)
    inst = {i.line: i for i in scan_ptx(text, filename=name).instructions}
    site = next(s for s in out.sites if ("SMEM-OUTSIDE-CTA", "a_desc") in s.checks)
    code, tables, reads = blocks(out.ptx, out.sites)[site.index], const_tables(out.ptx), dict(site.reads)
    legal = 0x4000004000010000  # (128B swizzle, SBO 1024, LBO 16: the start address alone varies)
    fired = set()
    for smem in (0, 15, 896, 910, 911, 912, 927, 928, 0x8000, 0x20400):
        for start in {*range(0, 80), *range(max(0, (smem - 911) // 16 - 20), (smem - 911) // 16 + 20)} - {-1}:
            words = {"a_desc": legal | start & 0x3FF8, "b_desc": legal | 0x40}
            m = Machine(tables, {reads[r]: w for r, w in words.items()}, smem_size=smem, tid=0)
            m.run(code)
            expected = {c for c, r in _python(inst[site.line], words, "sm_90a", smem) if c == "SMEM-OUTSIDE-CTA"}
            got = {site.codes[r["code"]] for r in m.records()} & {"SMEM-OUTSIDE-CTA"}
            assert got == expected, (smem, hex(start), got, expected)
            fired.add(bool(got))
    assert fired == {True, False}


def test_every_rule_left_open_is_checked_compiled_out_or_decided():
    """No rule the scan left open at run time passes by default: at every corpus site each one
    (error or warning) is checked at run time, listed as not compiled with why, or decided by the
    site's static facts (no check of it can fire there)."""
    from descgen.model.catalog import catalog

    rules = catalog()
    for path in sorted(CORPUS.glob("*/*.ptx")):
        text = path.read_text()
        if not re.search(r"tcgen05\.(mma|cp)|wgmma\.mma_async", text):
            continue
        out = instrument_ptx(text, file=path.name)
        scanned = {i.line: i for i in scan_ptx(text, filename=path.name).instructions}
        for site in out.sites:
            if site.proven:
                continue
            report = scanned[site.line].report
            open_rules = {n.code for n in report.not_checked
                          if n.why == "run-time" and rules[n.code].severity in ("error", "warning")}
            accounted = set(site.codes) | {c for c, _ in site.not_compiled} | set(site.decided)
            assert open_rules <= accounted, (path.name, site.line, open_rules - accounted)


def test_a_rule_decided_at_a_site_never_fires_there():
    """A rule the site's static facts decide has no check there: on random words for the site's
    run-time bits the engine never reports it."""
    rng = random.Random(1)
    tried = 0
    for path in sorted(CORPUS.glob("*/*.ptx")):
        text = path.read_text()
        if not re.search(r"tcgen05\.(mma|cp)|wgmma\.mma_async", text):
            continue
        out = instrument_ptx(text, file=path.name)
        if not any(s.decided for s in out.sites):
            continue
        arch = (re.search(r"\.target\s+(sm_\w+)", text) or [None, None])[1]
        scanned = {i.line: i for i in scan_ptx(text, filename=path.name).instructions}
        for site in (s for s in out.sites if s.decided):
            inst = scanned[site.line]
            q = inst.qualifiers
            kind = q.kind if isinstance(q, MmaQualifiers) else None
            for _ in range(12):
                words = {o.role: o.value if o.resolved else _fill(rng, o.bits, o.width, _layout(q, o.role),
                                                                  kind if o.role == "idesc" else None)
                         for o in inst.operands}
                found = {c for c, _ in _python(inst, words, arch, rng.choice((0x30000, 0x400 * rng.randrange(1, 200))))}
                assert not found & set(site.decided), (path.name, site.line, found & set(site.decided))
                tried += 1
    assert tried > 500


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
    """Every corpus file, instrumented, has one block per site checked at run time (a group's
    table: the same block for each of its counter's values) and, where this ptxas reads its
    .version, assembles for its target, with no performance message (C75xx: wgmma serialized,
    warpgroup.arrive or .wait inserted) the file itself does not get (the ones whose .version is
    newer are skipped and named)."""
    text = (CORPUS / name).read_text()
    target = re.search(r"\.target\s+(sm_\w+)", text)
    version = re.search(r"\.version\s+(\d+)\.(\d+)", text)
    out = instrument_ptx(text, file=name)
    header = r"\{ // descgen: site (\d+),[^\n]*?(?:, for sites ([\d, ]+) on [^\n]*)?\n"
    covered = [[int(k) for k in (m[2] or m[1]).split(", ")]  # (a block's site, or the sites it is shared by)
               for m in {m[0]: m for m in re.finditer(header, out.ptx)}.values()]
    assert sorted({k for c in covered for k in c}) == [s.index for s in out.sites if s.checks]
    assert all(covered.count(c) <= 2 for c in covered)  # (a shared block: once on each of two words)
    assert sum(f"{{ // descgen: again site {s.index}\n" in out.ptx for s in out.sites) == sum(
        1 for s in out.sites if s.checks and s.opcode == "wgmma.mma_async")
    assert not [n for s in out.sites for n in s.not_compiled], "a rule left open did not compile"
    newest = PTX_ISA.get(_ptxas_version(), (9, 0))
    if target is None or version and (int(version[1]), int(version[2])) > newest:
        pytest.skip(f"{name}: .version {version and version[0]} is newer than this ptxas reads")
    src = tmp_path / "in.ptx"
    src.write_text(out.ptx)
    run = subprocess.run(["ptxas", "-arch", target[1], str(src), "-o", str(tmp_path / "out.cubin")],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[:2000]
    if "wgmma" in text:
        plain = subprocess.run(["ptxas", "-arch", target[1], str(CORPUS / name), "-o", str(tmp_path / "p.cubin")],
                               capture_output=True, text=True)
        assert set(re.findall(r"\((C75\d\d)\)", run.stderr)) <= set(re.findall(r"\((C75\d\d)\)", plain.stderr))
    assert "C7510" not in run.stderr


def test_most_of_the_corpus_assembles():
    """The skips above are the exception: most corpus files are PTX this ptxas reads."""
    newest = PTX_ISA.get(_ptxas_version() or (13, 0), (9, 0))
    readable = [n for n in CORPUS_FILES
                if (v := re.search(r"\.version\s+(\d+)\.(\d+)", (CORPUS / n).read_text()))
                and (int(v[1]), int(v[2])) <= newest]
    assert len(readable) >= 60, len(readable)


def test_a_wgmma_group_is_checked_ahead_of_its_fence_and_recorded_out_of_line():
    """A wgmma group's checks run before its wgmma.fence, over its sites' words computed there (the
    kernel's own integer code replayed); each wgmma reads a stand-in (its word, or after a finding a
    legal one); a finding is noted there, and where the function ends it branches out of line,
    where the warpgroup's first thread writes the record and stops the kernel and the others exit
    (no trap ends the context before the record is in host memory)."""
    name = "triton_sm90/matmul_fp16_128x128x64_w4_s3_sm90.ptx"
    text = (CORPUS / name).read_text()
    out = instrument_ptx(text, file=name)
    checked = [s for s in out.sites if s.checks]
    site = checked[0]
    lines = text.split("\n")
    between = [ln.split("//")[0].strip() for ln in lines[site.checked_at - 1:site.line - 1]]
    fence = between.index("wgmma.fence.sync.aligned;")  # (the group's fence, and above it only integer code)
    assert not [ln for ln in between[:fence] if ln.startswith(("ld", "st", "cp", "wgmma", "@")) or ln.endswith(":")]
    assert {s.checked_at for s in checked if s.checked_at < checked[-1].line} == {site.checked_at}  # (one group)
    new = out.ptx.split("\n")
    # each wgmma reads stand-ins: its words, or where the group found something, a legal one
    wgmmas = [ln for ln in new if "wgmma.mma_async" in ln and "descgen" not in ln]
    selects = dict(re.findall(r"selp\.b64 (%dgs\d+_\d+), 0x4000010000, (%rd\d+), %dgf\d+;", out.ptx))
    selects.update((s, w) for w, s in re.findall(  # (a word whose high half is fixed: its low half selected)
        r"mov\.b64 \{%dgl, %dgh\}, (%rd\d+); selp\.b32 %dgl, 65536, %dgl, %dgf\d+; mov\.b64 (%dgs\d+_\d+),", out.ptx))
    assert len(wgmmas) == len(checked) and all(
        [selects[r] for r in re.findall(r"%dgs\d+_\d+", w)] == [dict(s.operands)["a_desc"], dict(s.operands)["b_desc"]]
        for w, s in zip(wgmmas, checked))
    # a finding is noted there (no branch: the group's sticky register, the registers its words come
    # from saved); the function leaves at one end, where the branch to the record is
    noted = [ln.strip() for ln in new if re.match(r"\s*(@%dgf0 mov\.b\d+ %dgv0_|or\.b32 %dgst0,)", ln)]
    assert noted[-1] == "or.b32 %dgst0, %dgst0, %dgfw0;" and len(noted) >= 2
    branches = [i for i, ln in enumerate(new) if re.search(r"\bbra\S* descgen_", ln)]
    assert [new[i].strip() for i in branches] == ["bra.uni descgen_end0;", "@%dgf0 bra descgen_fail0;"]
    assert new[branches[1] - 2:branches[1]] == ["descgen_end0:", "\tsetp.ne.b32 %dgf0, %dgst0, 0;"]
    assert [i for i, ln in enumerate(new) if re.match(r"\s*(@!?%\w+\s+)?ret;", ln)] == [branches[1] + 2]
    assert site.reads == site.operands  # (computed before the fence in this kernel: read as they are)
    regs = {reg: 0x40000040000100C0 | 0x4000 for _, reg in site.reads}  # reserved bit 14 set
    code = blocks(out.ptx, out.sites)[site.index]
    for tid, writes in ((0, True), (5, False), (40, False), (128, True), (160, False)):
        m = Machine(const_tables(out.ptx), dict(regs), tid=tid)
        m.run(code)
        assert m.trapped == writes and bool(m.records()) == writes, tid  # (the others exit)


def test_a_wgmma_group_replays_the_kernels_integer_code():
    """The words a group's checks read are what the kernel computes before each wgmma: the replay,
    run from the kernel's registers at the fence, gives each site's word."""
    text = (Path(__file__).parent / "device" / "sanitizer" / "ptx" / "triton_tma_sm90.ptx").read_text()
    out = instrument_ptx(text)
    replay = re.search(r"\{ // descgen: group 0's words\n(.*?)\n\s*\}", out.ptx, re.S)
    assert replay is not None
    sites = [s for s in out.sites if s.checks and s.checked_at == out.sites[0].checked_at]
    assert len(sites) == 8 and sum(r.startswith("%dgh") for s in sites for _, r in s.reads) == 16  # (every A and B)
    start = sites[0].checked_at
    stop = max(s.line for s in sites)
    body = [ln.split("//")[0].strip() for ln in text.split("\n")[start:stop]]
    roots = sorted({r for ln in replay.group(1).split("\n") for r in re.findall(r"%r[d]?\d+\b", ln)})
    rng = random.Random(0)
    values = {r: rng.getrandbits(64 if r.startswith("%rd") else 32) for r in roots}
    ahead = Machine({}, dict(values))
    ahead.run([ln.strip() for ln in replay.group(1).split("\n")])
    kernel = Machine({}, dict(values))
    integer = re.compile(r"(add|sub|or|and|shl|shr|cvt|mov|bfe)\.")
    for number, ln in enumerate(body, start + 1):
        for s in sites:
            if s.line == number:
                for (role, reg), (_, ours) in zip(s.operands, s.reads):
                    assert ahead.r.get(ours, values.get(ours)) == kernel.r.get(reg, values.get(reg)), (s.index, role)
        if integer.match(ln) and not ln.startswith("mov.pred"):
            kernel.run([ln])


SHARED_FILES = [p for p in sorted(CORPUS.glob("*/*.ptx")) + sorted((Path(__file__).parent / "device" / "sanitizer" /
                                                                     "ptx").glob("*.ptx"))
                if "wgmma.mma_async" in p.read_text()]


def _one_thread(statement: str) -> str:
    """A statement as the interpreter's one thread runs it: a warp shuffle from lane 0 reads the
    register itself (the thread stands for lane 0)."""
    return re.sub(r"^shfl\.sync\.idx\.b32 (%\S+), (%\S+), .*$", r"mov.b32 \1, \2;", statement)


def _group_code(ptx: str, group: int, first_only: bool = False) -> tuple[list[int], list[str], int, bool]:
    """A wgmma group's sites, its code at its check point (its words, each site's checks) as
    statements (``first_only``: each shared block on its first words only), how many blocks are
    shared blocks run on their second words, and whether it has one. A group whose checks are a
    table (descgen.sanitizer.stage_table): the table's code for one value of its counter, the
    counter read from its register (``%dgk<group>``)."""
    text = ptx.split("\n")
    first = next(i for i, ln in enumerate(text) if ln.strip().startswith(f"// descgen: group {group}: the checks"))
    sites = [int(k) for k in re.search(r"wgmma sites ([\d, ]+) \(", text[first])[1].split(", ")]
    table = next((i for i, ln in enumerate(text) if ln.strip().startswith(f"mov.b32 %dgk{group}, ")), None)
    end = f"setp.ne.b32 %dgf{group}, %dgfw{group}, 0;" if table is None else f"min.u32 %dgb{group}, %dgfw{group}, 1;"
    code = entry(text)
    seen, skip, second = set(), False, 0
    for ln in text[(first if table is None else table) + 1:]:
        ln = ln.strip()
        shared = re.search(r"\{ // descgen: site \d+,.*, for sites ([\d, ]+) on", ln)
        if shared:
            second += shared[1] in seen
            skip = first_only and shared[1] in seen
            seen.add(shared[1])
        elif ln == "}":
            skip = False
        if not skip and ln and ln[0] not in "{}/":
            code.append(_one_thread(ln))
        if ln == end:
            return sites, code, second, bool(seen)
    raise AssertionError(f"group {group} has no end")


def _defined_once(text: str, needed: set[str]) -> list[str]:
    """The integer instructions that compute the registers ``needed`` where each is written once in
    the file (a loop-invariant word: its definition and its sources', in order); a register written
    more than once, or by anything else, is left to the caller."""
    writes: dict[str, list[str]] = {}
    for ln in text.split("\n"):
        st = re.sub(r"\s+", " ", ln.split("//")[0].strip().rstrip(";"))
        m = re.match(r"([a-z][\w.]*)\s+(%[\w$]+)\s*,", st)
        if m:
            writes.setdefault(m.group(2), []).append(st + ";")
    out: list[str] = []
    todo, done = sorted(needed), set()
    while todo:
        reg = todo.pop()
        found = writes.get(reg, [])
        if reg in done or len(found) != 1 or not re.match(r"(add|sub|or|and|shl|shr|cvt|mov|bfe)\.", found[0]) \
                or re.search(r"[,\s][A-Za-z_]", found[0].split(None, 1)[1]):  # (a symbol's address: left)
            continue
        done.add(reg)
        out.insert(0, found[0])
        todo += re.findall(r"%[\w$]+", found[0].split(",", 1)[1])
    return out


def _root_value(rng: random.Random, reg: str) -> int:
    """A kernel register's value: any, or one like a shared memory address (1 KiB pages, 16-byte
    steps: the start addresses whose low bits carry) or a stage number."""
    if reg.startswith("%p"):
        return rng.randrange(2)
    if rng.random() < 0.1:
        return rng.getrandbits(64 if reg.startswith("%rd") else 32)
    return rng.choice((1024 * rng.randrange(64) + 16 * rng.randrange(64), rng.randrange(4), 0))


def _shared_runs(path: Path) -> tuple[set[bool], int, int]:
    """Each wgmma group of ``path`` with a shared block, run on words its replay computes from random
    kernel registers (those the scan's known bits allow): the group's flag must equal whether some
    site's own checks, on its own words, fire. Returns the outcomes seen, how often the group's code
    without its second words would have disagreed, and the runs."""
    text = path.read_text()
    out = instrument_ptx(text, file=path.name)
    known = {(i.line, o.role): o.known for i in scan_ptx(text).instructions for o in i.operands}
    own = blocks(out.ptx, out.sites)
    groups = [int(g) for g in re.findall(r"// descgen: group (\d+): the checks", out.ptx)]
    shared = [g for g in groups if _group_code(out.ptx, g)[3]]
    if not shared:
        pytest.skip(f"{path.name}: no site runs another's checks")
    rng = random.Random(path.name)
    tables = const_tables(out.ptx)
    outcomes, missed, runs = set(), 0, 0
    for g in shared:
        sites, code, _, _ = _group_code(out.ptx, g)
        facts = {reg: known[(out.sites[k].line, role)] for k in sites for role, reg in out.sites[k].reads}
        ahead = _defined_once(text, set(facts))  # (words computed ahead of the loop: as the kernel does)
        code, first_only = ahead + code, ahead + _group_code(out.ptx, g, first_only=True)[1]
        roots, written = set(), {"%aggr_smem_size"}
        for ln in (ln for ln in code if not ln.startswith(".")):  # (read before the group's code writes it)
            dest, _, srcs = re.sub(r"^@!?%\w+\s+", "", ln).partition(" ")[2].partition(",")
            roots |= set(re.findall(r"%[\w$]+", srcs + (ln.split()[0] if ln.startswith("@") else ""))) - written
            written |= set(re.findall(r"%[\w$]+", dest if "{" not in dest else ln[ln.index("{"):ln.index("}")]))
        for _ in range(400):
            regs = {r: _root_value(rng, r) for r in sorted(roots)}
            for r in set(regs) & set(facts):  # (a word read as it is: its known bits as the scan proved them)
                regs[r] = regs[r] >> 4 & ~facts[r].mask | facts[r].value
            smem = rng.choice((0x30000, 0x400 * rng.randrange(1, 240)))
            group = Machine(tables, dict(regs), smem_size=smem)
            group.run(code)
            words = {r: group.r.get(r, regs.get(r)) for r in facts}
            if any((w ^ facts[r].value) & facts[r].mask for r, w in words.items()):
                continue  # (registers no execution holds)
            fires = []
            for k in sites:
                m = Machine(tables, {**regs, **words}, smem_size=smem, tid=0)
                m.run(own[k])
                fires.append(m.trapped)
            assert bool(group.r[f"%dgfw{g}"]) == any(fires), (g, regs, smem)
            outcomes.add(any(fires))
            lone = Machine(tables, dict(regs), smem_size=smem)
            lone.run(first_only)
            missed += bool(lone.r[f"%dgfw{g}"]) != any(fires)
            runs += 1
    return outcomes, missed, runs


def _statements(block: str) -> list[str]:
    return [_one_thread(ln.strip()) for ln in block.split("\n") if ln.strip()]


@pytest.mark.parametrize("path", SHARED_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_groups_record_computes_its_words_again_from_the_registers_saved(path):
    """Where a group finds something, it saves the registers its words are computed from (one
    register and immediates at a time: ``X + 2``, ``X | C``); the record, where the function ends,
    computes the words again from those alone: each the word the checks read (random kernel
    registers, the group's replay run first); in the TMA kernel, its 16 words from fewer."""
    out = instrument_ptx(path.read_text(), file=path.name)
    rng = random.Random(path.name)
    again_total = 0
    for g, listed in re.findall(r"// descgen: group (\d+): the checks of wgmma sites ([\d, ]+) \(", out.ptx):
        words = sorted({reg for k in listed.split(", ") for _, reg in out.sites[int(k)].reads})
        replay = re.search(rf"\{{ // descgen: group {g}'s words\n(.*?)\n\s*\}}", out.ptx, re.S)
        again = re.search(rf"\{{ // descgen: group {g}'s words again, from the registers saved\n(.*?)\n\s*\}}",
                          out.ptx, re.S)
        saves = re.findall(rf"\n\s*@%dgf{g} mov\.\w+ (%dgv{g}_\d+), (%[\w$]+);", out.ptx)
        code = _statements(replay.group(1)) if replay else []
        written = {ln.split()[1].rstrip(",") for ln in code}
        roots = {r for ln in code for r in re.findall(r"%[\w$]+", ln.split(",", 1)[1])} - written
        roots |= {r for r in words if r not in written}
        symbols = {t: [] for ln in code + _statements(again.group(1) if again else "")  # (an address: the same)
                   for t in re.findall(r"(?<=[,\s])[A-Za-z_$][\w$]*(?=\s*[,;])", ln.partition(" ")[2])}
        for _ in range(50):
            regs = {r: _root_value(rng, r) for r in sorted(roots)}
            kernel = Machine(symbols, dict(regs))
            kernel.run(code)
            value = {r: kernel.r.get(r, regs.get(r)) for r in words}
            record = Machine(symbols, {reg: kernel.r.get(root, regs.get(root)) for reg, root in saves})
            record.run(_statements(again.group(1)) if again else [])
            saved = {root: reg for reg, root in saves}
            assert {r: record.r[saved.get(r, r)] for r in words} == value, (g, regs)
        again_total += len([r for r in words if r not in saved])
    assert again_total or "triton_tma" not in path.name  # (the TMA kernel's 16 words: computed again)


@pytest.mark.parametrize("path", SHARED_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_shared_checks_fire_exactly_where_each_sites_own_checks_do(path):
    """Sites with one check code run it on two words of each operand for all of them
    (descgen.sanitizer.shared_checks): the group's flag is set exactly when some site's own checks,
    on its own words, find something (:func:`_shared_runs`)."""
    outcomes, _, runs = _shared_runs(path)
    assert runs >= 100 and outcomes == {True, False}


@pytest.mark.parametrize("name", ["triton_tma_sm90.ptx", "triton_bf16_sm90.ptx"])
def test_shared_checks_need_their_second_word(name):
    """Without the second word (the greatest offset) a shared block misses findings: the start
    addresses whose low bits carry into the bits its checks read (the test above can fail)."""
    _, missed, _ = _shared_runs(Path(__file__).parent / "device" / "sanitizer" / "ptx" / name)
    assert missed > 0


def _looped_kernel(function: str = ".visible .entry", leave: str = "") -> str:
    """A K loop of ``%r1`` steps, two wgmma a step, A's start address 1 KiB further each step; on
    the steps in ``%r2``'s bits A's word gets reserved bit 14 set (``leave``: a line after the loop,
    before its ``ret``)."""
    mma = "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}"
    return (".version 8.0\n.target sm_90a\n.address_size 64\n"
            f"{function} k(.param .u64 a, .param .u32 n, .param .u32 bad)\n{{\n.reg .f32 %f<5>;\n"
            ".reg .b64 %rd<8>;\n.reg .b32 %r<8>;\n.reg .pred %p<4>;\nld.param.u64 %rd1, [a];\n"
            "ld.param.u32 %r1, [n];\nld.param.u32 %r2, [bad];\nmov.b32 %r3, 0;\n$L_loop:\n"
            "shr.u32 %r4, %r2, %r3;\nand.b32 %r4, %r4, 1;\ncvt.u64.u32 %rd2, %r4;\nshl.b64 %rd2, %rd2, 14;\n"
            "add.s64 %rd3, %rd1, %rd2;\nmul.wide.u32 %rd5, %r3, 64;\nadd.s64 %rd3, %rd3, %rd5;\n"
            "wgmma.fence.sync.aligned;\n"
            f"{mma}, %rd3, %rd1, 1, 1, 1, 0, 0;\nadd.s64 %rd4, %rd3, 2;\n{mma}, %rd4, %rd1, 1, 1, 1, 0, 0;\n"
            "wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\nadd.s32 %r3, %r3, 1;\n"
            f"setp.lt.u32 %p2, %r3, %r1;\n@%p2 bra $L_loop;\n{leave}ret;\n}}\n")


@pytest.mark.parametrize("on_error", ["trap", "report"])
def test_a_finding_in_a_loop_is_recorded_where_the_function_ends(on_error, tmp_path):
    """The whole instrumented function run: the loop's wgmma never reads a bad word (each reads its
    stand-in on a step that found something), the loop has no branch of the sanitizer's, and where
    the function ends the warpgroup's first thread records the last bad word (on step 3 of 4, not 1)
    and, with ``on_error="trap"``, stops; its other threads record nothing."""
    legal = 0x4000004000010040
    out = instrument_ptx(_looped_kernel(), on_error=on_error)
    loop = out.ptx[out.ptx.index("$L_loop:"):out.ptx.index("@%p2 bra $L_loop;")]
    assert not re.search(r"\b(bra\S*|trap|exit)\b", loop.replace("@%p2 bra $L_loop", ""))
    sites = [s for s in out.sites if s.checks]
    for tid in (0, 5):
        m = Machine(const_tables(out.ptx), {"%rd1": legal, "%r1": 4, "%r2": 0b1010}, tid=tid)
        m.run(function_statements(out.ptx))
        safe = 0x4000010000  # (a stand-in: start address 0, no swizzle)
        steps = [[(legal + 64 * k, legal), (legal + 64 * k + 2, legal)] for k in (0, 2)]
        assert m.wgmma == steps[0] + [(safe, safe)] * 2 + steps[1] + [(safe, safe)] * 2
        records = m.records()
        assert m.trapped == (on_error == "trap" and tid == 0) and m.left == (None if m.trapped else
                                                                            "exit" if on_error == "trap" else "ret")
        assert [(r["site"], sites[0].codes[r["code"]], r["word"]) for r in records] == (
            [(sites[0].index, "WGMMA-SMEM-RESERVED-14", (legal | 1 << 14) + 64 * 3)] if tid == 0 else [])
    clean = Machine(const_tables(out.ptx), {"%rd1": legal, "%r1": 4, "%r2": 0}, tid=0)
    clean.run(function_statements(out.ptx))
    assert not clean.records() and not clean.trapped and clean.left == "ret" and len(set(clean.wgmma)) == 8
    if shutil.which("ptxas"):
        (tmp_path / "k.ptx").write_text(out.ptx)
        run = subprocess.run(["ptxas", "-arch=sm_90a", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")],
                             capture_output=True, text=True)
        assert run.returncode == 0 and "C75" not in run.stderr, run.stderr[:2000]


def test_a_function_that_exits_records_then_exits():
    """In a ``.func``, an ``exit`` goes by the function's end too (the records), then exits; its
    ``ret`` returns."""
    legal = 0x4000004000010040
    text = _looped_kernel(".visible .func", "setp.eq.u32 %p3, %r2, 0;\n@!%p3 exit;\n")
    out = instrument_ptx(text, on_error="report")
    assert "@!%p3 bra descgen_quit0;" in out.ptx
    for bad, left in ((0b10, "exit"), (0, "ret")):
        m = Machine(const_tables(out.ptx), {"%rd1": legal, "%r1": 4, "%r2": bad}, tid=0)
        m.run(function_statements(out.ptx))
        assert m.left == left and len(m.records()) == (1 if bad else 0)


@pytest.mark.parametrize("guard", ["@%p1", "@!%p1"])
def test_a_guarded_wgmma_is_checked_only_where_it_runs(guard, tmp_path):
    """A predicated wgmma's checks count only where its guard lets it run: a word with reserved
    bit 14 set is recorded when the guard is true (``@!%p``: false), and not otherwise; the file
    assembles."""
    text = (".version 8.0\n.target sm_90a\n.address_size 64\n"
            ".visible .entry k(.param .u64 a, .param .u64 b, .param .u32 g)\n{\n.reg .f32 %f<5>;\n"
            ".reg .b64 %rd<3>;\n.reg .b32 %r<2>;\n.reg .pred %p<2>;\nld.param.u32 %r1, [g];\n"
            "setp.ne.u32 %p1, %r1, 0;\nld.param.u64 %rd1, [a];\nld.param.u64 %rd2, [b];\nwgmma.fence.sync.aligned;\n"
            f"{guard} wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {{%f1, %f2, %f3, %f4}}, %rd1, %rd2, "
            "1, 1, 1, 0, 0;\nwgmma.commit_group.sync.aligned;\nret;\n}\n")
    out = instrument_ptx(text)
    (site,) = [s for s in out.sites if s.checks]
    code, reads = blocks(out.ptx, out.sites)[site.index], dict(site.reads)
    legal = 0x4000004000010040
    for runs in (0, 1):
        m = Machine(const_tables(out.ptx), {reads["a_desc"]: legal | 1 << 14, reads["b_desc"]: legal,
                                            "%p1": runs if guard == "@%p1" else 1 - runs}, tid=0)
        m.run(code)
        assert bool(m.records()) == bool(runs), (guard, runs)
    if shutil.which("ptxas"):
        src = tmp_path / "guarded.ptx"
        src.write_text(out.ptx)
        run = subprocess.run(["ptxas", "-arch=sm_90a", str(src), "-o", str(tmp_path / "g.cubin")], capture_output=True,
                             text=True)
        assert run.returncode == 0, run.stderr[:2000]


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


RECORDED = Path(__file__).parent / "device" / "sanitizer_checks" / "recorded"


def test_recorded_gpu_run_of_the_tcgen05_checks(tmp_path):
    """The recorded H200 run (tests/device/sanitizer_checks/run.sh) ran the blocks the instrumenter
    writes now over the words the harness makes now (their hashes), agreed with the engine on every
    one of over a million, and a sample of its answers agrees with the engine here too."""
    import hashlib
    import sys

    sys.path.insert(0, str(Path(__file__).parent / "device" / "sanitizer_checks"))
    import harness

    s = dict(line.split("=", 1) for line in (RECORDED / "summary.txt").read_text().splitlines() if "=" in line)
    assert s["agreement"] == "yes" and int(s["words"]) == int(s["compared"]) == int(s["agree"]) >= 1_000_000
    assert 0 < int(s["device_findings"]) < int(s["words"])
    harness.build(tmp_path)
    sha = lambda p: hashlib.sha256(p.read_bytes()).hexdigest()  # noqa: E731
    assert sha(tmp_path / "harness.ptx") == s["harness_sha256"], "the checks changed: rerun run.sh on a GPU"
    assert sha(tmp_path / "words.bin") == s["words_sha256"]
    assert sha(RECORDED / "device.bin") == s["device_sha256"]
    assert (tmp_path / "sites.json").read_text() == (RECORDED / "sites.json").read_text()
    for name in ("device.bin", "smem.txt"):
        (tmp_path / name).write_bytes((RECORDED / name).read_bytes())
    # %aggr_smem_size is the block's dynamic shared memory and the 1 KiB reserved region (E50)
    assert int(s["aggr_smem_size"]) == int(s["dynamic_smem_size"]) + 1024 == int(s["total_smem_size"]) + 1024
    every = 97
    compared, agree, bad = harness.agreement(tmp_path, harness.expected(tmp_path, every, jobs=2), every)
    assert compared > 10_000 and agree == compared, bad


def test_recorded_gpu_run_of_the_planted_bugs():
    """The recorded H200 run (tests/device/sanitizer/run.sh) instrumented the GEMM with the
    instrumenter as it is now (its site table), gave bit-identical results on the clean runs, and
    stopped each planted bug with its code, PTX line and word, the engine agreeing on the word."""
    import gzip
    import json

    recorded = Path(__file__).parent / "device" / "sanitizer" / "recorded"
    ptx = (Path(__file__).parent / "device" / "sanitizer" / "ptx" / "gemm_sm90.ptx").read_text()
    assert (recorded / "gemm.ptx").read_text() == ptx
    table = json.loads((recorded / "gemm.inst.ptx.sites.json").read_text())
    now = json.loads(instrument_ptx(ptx, file=table["file"]).sites_json())
    assert now == table, "the instrumenter changed: rerun tests/device/sanitizer/run.sh on a GPU"
    for name in ("bf16", "fp8", "persistent", "tma"):  # (the Triton kernels timed: what it writes now)
        plain, inst = (gzip.decompress((recorded / "triton" / f"{name}.{k}.ptx.gz").read_bytes()).decode()
                       for k in ("plain", "inst"))
        assert instrument_ptx(plain).ptx == inst, f"{name}: the instrumenter changed: rerun run.sh on a GPU"
    s = json.loads((recorded / "summary.json").read_text())
    assert s["clean"]["bit_identical"] and all(t["bit_identical"] for t in s["triton"].values())
    fixed = s["clean"]["fixed"]  # (the GEMM without the planted-bug switch)
    assert fixed["bit_identical"] and fixed["bit_identical_to_plain"] and fixed["records"] == 0
    # (bug 5: the generic window's base decides which field its stray bits break first)
    expected = {1: {"SMEM-OUTSIDE-CTA"}, 2: {"WGMMA-SMEM-RESERVED-14"}, 3: {"SMEM-BASE-OFFSET-BOUNDARY"},
                4: {"WGMMA-SBO-ATOM"}, 5: {"WGMMA-SBO-ATOM", "WGMMA-SMEM-RESERVED-14", "WGMMA-SMEM-RESERVED-30"}}
    for bug, codes in expected.items():
        run = s["bugs"][str(bug)]
        first = run["inst"]["report"]["records"][0]
        code = first["code"]
        assert first["complete"] and code in codes and first["line"] == 1051, (bug, first)
        word = int(first["word"], 16)
        report = check_wgmma(atype="bf16", dtype="f32", n=128, a_desc=word, b_desc=0x4000004000010440, trans_a=0,
                             trans_b=0, smem_size=0x20400 + 1024)
        assert code in {f.code for f in report.findings}, (bug, word)
    assert {s["bugs"][str(b)]["plain"]["status"] for b in (2, 3, 4)} == {"wrong"}  # silently wrong
    assert s["bugs"]["6"]["inst"]["report"]["count"] == 0  # every field of its word is legal


def test_recorded_gpu_run_of_the_headers_loader():
    """The generated header's loader (DESCGEN_SANITIZER: attach, print) ran on the GPU over the
    harness's first 256 words of site0: it printed a record for each of the first 16 words the
    device found something in (the buffer's capacity), with that word, and how many were lost; its
    record layout is the one descgen.sanitizer.report reads."""
    import struct

    from descgen.backends.cpp_header import header
    from descgen.sanitizer.report import RECORD

    lines = (RECORDED / "loader.txt").read_text().splitlines()
    device = struct.unpack("<256I", (RECORDED / "device.bin").read_bytes()[:1024])
    found = [i for i, d in enumerate(device) if d]
    assert lines[-1] == f"written={len(found)}" and len(found) > 16
    printed = [ln for ln in lines if ln.startswith("descgen: site 0 ")]
    assert len(printed) == 16 and f"descgen: {len(found) - 16} more records lost (capacity 16)" in lines
    threads = sorted(int(re.search(r"thread \((\d+),", ln)[1]) for ln in printed)
    assert set(threads) <= set(found)
    text = header()
    assert "struct Record" in text and RECORD.size == 64 and "static_assert(sizeof(Record) == 64" in text


@pytest.mark.skipif(shutil.which("g++") is None or not Path("/usr/local/cuda/include/cuda.h").exists(),
                    reason="needs g++ and the CUDA toolkit's cuda.h")
def test_the_headers_record_is_the_layout_python_reads(tmp_path):
    """With DESCGEN_SANITIZER the header's Record has the offsets descgen.sanitizer.report.RECORD
    reads (word 16, block 24, thread 36, value 48, SM 56), and the header still compiles without it."""
    from descgen.backends.cpp_header import header

    (tmp_path / "descgen_tcgen05.hpp").write_text(header())
    src = tmp_path / "offsets.cpp"
    src.write_text('#define DESCGEN_SANITIZER\n#include "descgen_tcgen05.hpp"\n#include <cstddef>\nint main() {\n'
                   '    using R = descgen::sanitizer::Record;\n    std::printf("%zu %zu %zu %zu %zu\\n", '
                   'offsetof(R, word), offsetof(R, ctaid), offsetof(R, tid), offsetof(R, value), offsetof(R, smid));\n'
                   '    return 0;\n}\n')
    subprocess.run(["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-pedantic", f"-I{tmp_path}",
                    "-I/usr/local/cuda/include", str(src), "-o", str(tmp_path / "offsets")], check=True)
    out = subprocess.run([str(tmp_path / "offsets")], capture_output=True, text=True, check=True).stdout.split()
    assert [int(x) for x in out] == [16, 24, 36, 48, 56]


@pytest.mark.parametrize("text,writes", [
    ("bar.red.popc.u32 %r4, 0, %p1;", {"%r4"}), ("barrier.cta.red.or.pred %p2, 1, %p3;", {"%p2"}),
    ("mbarrier.try_wait.parity.shared::cta.b64 %p5, [%r1], %r2;", {"%p5"}),
    ("call.uni (%r1, %r2), f, (%r3);", {"%r1", "%r2"}), ("call.uni (retval0), f, (param0);", set()),
    ("bar.sync 0;", set()), ("red.global.add.u32 [%rd1], %r2;", set()), ("st.shared.b32 [%r1], %r2;", set()),
    ("@%p1 add.s32 %r1, %r2, 1;", {"%r1"}),
])
def test_what_a_statement_writes(text, writes):
    """What a replay and the stage table take a statement to write (descgen.sanitizer.hoist.written):
    a barrier's reduction, an mbarrier wait's predicate and a call's register results too; a
    store, a reduction to memory and a barrier nothing."""
    from descgen.sanitizer.hoist import written

    assert written(text) == writes
