"""The sanitizer's tcgen05 checks on a GPU: the blocks ``descgen instrument`` puts before tcgen05
instructions of the corpus, run unchanged (``--on-error report``) in a harness kernel over a million
words, against the Python engine.

A Hopper has no tcgen05, but the checks are ordinary integer PTX: each harness entry loads one
word per operand into the very registers the block reads (one word set per thread), sets the
guard, runs the block, and the block writes its record (site, code, operand, word, block, thread)
to the report buffer. The host turns the records into one result per word and compares them with
what ``check_mma`` / ``validate_smem`` say of the same words (tests/sanitizer_cases.py): the block
reports a finding exactly when the engine finds an error or warning among the (code, operand)
pairs the site checks at run time, and the one it reports is one of them.

    python3 harness.py build DIR            # harness.ptx, words.bin, sites.json (deterministic)
    python3 harness.py run DIR              # on the GPU: device.bin (one u32 per word), smem.txt
    python3 harness.py expected DIR [K]     # the engine's answer for every K-th word: expected.bin
    python3 harness.py compare DIR          # summary.txt

run.sh does all four on the GPU machine; tests/test_instrument.py checks the recorded files
against what the generator makes now (a sample of the words, recomputed).
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import random
import re
import struct
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from descgen.ptx.qualifiers import MmaQualifiers  # noqa: E402
from descgen.ptx.scan import scan_ptx  # noqa: E402
from descgen.sanitizer.instrument import ROLES, instrument_ptx  # noqa: E402
from sanitizer_cases import engine_findings, fill, layout_of  # noqa: E402

#: The corpus files whose tcgen05 sites the harness runs (idesc from a kernel parameter, tcgen05.cp,
#: .ws, 2-CTA, block-scaled; a compiler each).
FILES = ["cutlass/cute_tutorial_01_mma_sm100.ptx", "thunderkittens/tk_mxfp8_b200_gemm.ptx",
         "tilelang/tl_gemm_tcgen5mma_ws_bf16_128x256x64.ptx", "deepgemm/dg_sm100_fp8_gemm_1d1d_2cta.ptx",
         "cutedsl/prim_1cta_mma_f16_128x128x64.ptx", "tilelang/tl_mxfp8_blockscaled_1cta_128x256x128.ptx"]
WORDS = 1 << 20  # in all
THREADS = 256
DYNAMIC_SMEM = 200 * 1024  # each harness block's dynamic shared memory (so that %aggr_smem_size is large)
SEED = 30


def _sites() -> list[dict]:
    """Every tcgen05 site of FILES checked at run time, with its block, tables and operands."""
    out = []
    for fi, name in enumerate(FILES):
        text = (ROOT / "tests" / "corpus" / name).read_text()
        done = instrument_ptx(text, on_error="report", file=name)
        scanned = {i.line: i for i in scan_ptx(text, filename=name).instructions}
        body = done.ptx.split("\n")
        tables = {m.group(1): m.group(0) for m in re.finditer(r"\.const \.align 8 \.b64 (\w+)\[\d+\] = \{[^}]*\};",
                                                               done.ptx)}
        # (the function-scope registers the blocks read: special registers read once at the entry)
        head = list(dict.fromkeys(ln.strip() for ln in body
                                  if re.fullmatch(r"\s*(\.reg \.b32 %dgz\w+|[a-z]+\.[us]32 %dgz\w+, [^;]+);", ln)))
        seen = set()
        for site in done.sites:
            inst = scanned[site.line]
            if not site.checks or not isinstance(inst.qualifiers, MmaQualifiers) and inst.opcode != "tcgen05.cp":
                continue
            key = (site.checks, tuple(o.role for o in inst.operands if not o.resolved))
            if key in seen:  # (an unrolled loop: the same checks over the same operands)
                continue
            seen.add(key)
            start = next(i for i, ln in enumerate(body) if ln.strip().startswith(f"{{ // descgen: site {site.index},"))
            end = next(i for i in range(start + 1, len(body)) if body[i].strip() == "}")
            block = [ln.strip() for ln in body[start + 1:end]]
            out.append({"file": name, "fi": fi, "site": site.index, "line": site.line, "block": block, "head": head,
                        "tables": tables, "checks": [list(c) for c in site.checks], "codes": list(site.codes),
                        "operands": [(o.role, o.text, o.width) for o in inst.operands if not o.resolved]})
    return out


def _entry(k: int, s: dict) -> str:
    rename = {name: f"descgen_f{s['fi']}_{name[len('descgen_'):]}" for name in s["tables"]}
    block = []
    for ln in s["block"]:
        for old, new in rename.items():
            ln = re.sub(rf"\b{old}\b", new, ln)
        block.append(ln)
    text = "\n".join(block)
    regs = sorted(set(re.findall(r"%(?:rd|r|p)\d+\b", text)) | {t for _, t, _ in s["operands"]})
    decl = []
    for prefix, typ in (("%rd", ".b64"), ("%r", ".b32"), ("%p", ".pred")):
        names = [r for r in regs if re.fullmatch(re.escape(prefix) + r"\d+", r)]
        if names:
            decl.append(f"\t.reg {typ} {prefix}<{max(int(r[len(prefix):]) for r in names) + 1}>;")
    lines = [f".visible .entry site{k}(.param .u64 words, .param .u32 n)", "{", *decl,
             "\t.reg .b32 %hw<4>;", "\t.reg .b64 %hd<3>;", "\t.reg .pred %hp;", *(f"\t{ln}" for ln in s["head"]),
             "\tmov.u32 %hw0, %ctaid.x;", "\tmov.u32 %hw1, %ntid.x;", "\tmov.u32 %hw2, %tid.x;",
             "\tmad.lo.u32 %hw3, %hw0, %hw1, %hw2;", "\tld.param.u32 %hw0, [n];", "\tsetp.ge.u32 %hp, %hw3, %hw0;",
             "\t@%hp bra HDONE;", "\tld.param.u64 %hd0, [words];", "\tmul.wide.u32 %hd1, %hw3, 24;",
             "\tadd.u64 %hd0, %hd0, %hd1;"]
    for j, (_, reg, width) in enumerate(s["operands"]):
        lines.append(f"\tld.global.u64 %hd2, [%hd0+{8 * j}];")
        lines.append(f"\tmov.b64 {reg}, %hd2;" if width == 64 else f"\tcvt.u32.u64 {reg}, %hd2;")
    for ln in block:
        m = re.match(r"and\.pred (%dg\w+), \1, (!?)(%p\d+);", ln)
        if m:  # the instruction's guard: the instruction runs
            lines.append(f"\tsetp.{'ne' if m.group(2) else 'eq'}.u32 {m.group(3)}, %hw3, %hw3;")
    lines += [f"\t{ln}" if not ln.endswith(":") else ln for ln in block]
    lines += ["HDONE:", "\tret;", "}"]
    return "\n".join(lines)


def build(out: Path) -> None:
    """harness.ptx, words.bin (three 64-bit words per thread: the site's run-time operands in
    order), sites.json."""
    sites = _sites()
    per = WORDS // len(sites)
    rng = random.Random(SEED)
    tables = {}
    entries, words, meta = [], bytearray(), []
    for k, s in enumerate(sites):
        for name, decl in s["tables"].items():
            new = f"descgen_f{s['fi']}_{name[len('descgen_'):]}"
            tables[new] = decl.replace(name, new, 1)
        entries.append(_entry(k, s))
        text = (ROOT / "tests" / "corpus" / s["file"]).read_text()
        inst = {i.line: i for i in scan_ptx(text, filename=s["file"]).instructions}[s["line"]]
        q = inst.qualifiers
        kind = q.kind if isinstance(q, MmaQualifiers) else None
        by_role = {o.role: o for o in inst.operands}
        n = per if k < len(sites) - 1 else WORDS - per * (len(sites) - 1)
        for _ in range(n):
            ws = [fill(rng, by_role[role].bits, width, layout_of(q, role), kind if role == "idesc" else None)
                  for role, _, width in s["operands"]]
            words += struct.pack("<3Q", *(ws + [0] * (3 - len(ws))))
        meta.append({"entry": f"site{k}", "file": s["file"], "site": s["site"], "line": s["line"], "words": n,
                     "checks": s["checks"], "codes": s["codes"], "operands": [r for r, _, _ in s["operands"]]})
    ptx = "\n".join([".version 8.4", ".target sm_90a", ".address_size 64", "",
                     ".visible .global .align 8 .u64 descgen_report;", *tables.values(), "", *entries, ""])
    out.mkdir(parents=True, exist_ok=True)
    (out / "harness.ptx").write_text(ptx)
    (out / "words.bin").write_bytes(bytes(words))
    (out / "sites.json").write_text(json.dumps(meta, indent=1))


# -- the GPU run (ctypes on the driver API) ---------------------------------------------------------


def _cuda() -> ctypes.CDLL:
    cu = ctypes.CDLL("libcuda.so.1")

    def check(rc: int, what: str) -> None:
        if rc:
            msg = ctypes.c_char_p()
            cu.cuGetErrorString(rc, ctypes.byref(msg))
            raise RuntimeError(f"{what}: CUDA error {rc} {msg.value.decode() if msg.value else ''}")
    cu.check = check  # type: ignore[attr-defined]
    return cu


def run(out: Path) -> None:
    """Assemble harness.ptx, launch every entry over its words with DYNAMIC_SMEM bytes of dynamic
    shared memory, and write device.bin: per word 0 (no record) or 1 + the index of the record's
    (code, operand) in the site's checks; and smem.txt: the three shared memory sizes of a block."""
    meta = json.loads((out / "sites.json").read_text())
    subprocess.run(["ptxas", "-arch=sm_90a", str(out / "harness.ptx"), "-o", str(out / "harness.cubin")], check=True)
    cu = _cuda()
    c = cu.check
    c(cu.cuInit(0), "cuInit")
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    c(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    c(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "ctx")
    c(cu.cuCtxSetCurrent(ctx), "ctx current")
    mod = ctypes.c_void_p()
    c(cu.cuModuleLoadData(ctypes.byref(mod), (out / "harness.cubin").read_bytes()), "load")
    words = (out / "words.bin").read_bytes()
    dwords = ctypes.c_uint64()
    c(cu.cuMemAlloc_v2(ctypes.byref(dwords), len(words)), "alloc words")
    c(cu.cuMemcpyHtoD_v2(dwords, words, len(words)), "copy words")
    cap = max(m["words"] for m in meta)
    buf = ctypes.c_uint64()
    size = 64 + 64 * cap
    c(cu.cuMemAlloc_v2(ctypes.byref(buf), size), "alloc report")
    sym, symsize = ctypes.c_uint64(), ctypes.c_size_t()
    c(cu.cuModuleGetGlobal_v2(ctypes.byref(sym), ctypes.byref(symsize), mod, b"descgen_report"), "symbol")
    c(cu.cuMemcpyHtoD_v2(sym, ctypes.byref(buf), 8), "attach")
    device = bytearray()
    offset = 0
    for m in meta:
        header = struct.pack("<IIII", 0, cap, 0x44475352, 1) + bytes(48)
        c(cu.cuMemcpyHtoD_v2(buf, header, len(header)), "reset")
        fn = ctypes.c_void_p()
        c(cu.cuModuleGetFunction(ctypes.byref(fn), mod, m["entry"].encode()), "function")
        c(cu.cuFuncSetAttribute(fn, 8, DYNAMIC_SMEM), "max dynamic smem")  # MAX_DYNAMIC_SHARED_SIZE_BYTES
        p_words, p_n = ctypes.c_uint64(dwords.value + 24 * offset), ctypes.c_uint32(m["words"])
        args = (ctypes.c_void_p * 2)(ctypes.cast(ctypes.byref(p_words), ctypes.c_void_p),
                                      ctypes.cast(ctypes.byref(p_n), ctypes.c_void_p))
        blocks = (m["words"] + THREADS - 1) // THREADS
        c(cu.cuLaunchKernel(fn, blocks, 1, 1, THREADS, 1, 1, DYNAMIC_SMEM, None, args, None), m["entry"])
        c(cu.cuCtxSynchronize(), "sync " + m["entry"])
        raw = ctypes.create_string_buffer(size)
        c(cu.cuMemcpyDtoH_v2(raw, buf, size), "read report")
        count = struct.unpack_from("<I", raw, 0)[0]
        result = [0] * m["words"]
        checks = [tuple(x) for x in m["checks"]]
        roles = {v: k for k, v in ROLES.items() if k != "s_desc"}
        for i in range(min(count, cap)):
            site, code, operand, flags, _word = struct.unpack_from("<IIIIQ", raw, 64 + 64 * i)
            cx, _, _, tx = struct.unpack_from("<IIII", raw, 64 + 64 * i + 24)
            role = "s_desc" if "s_desc" in m["operands"] else roles[operand]
            result[cx * THREADS + tx] = 1 + checks.index((m["codes"][code], role)) if flags == 1 else 0xFFFFFFFF
        device += struct.pack(f"<{len(result)}I", *result)
        offset += m["words"]
    (out / "device.bin").write_bytes(bytes(device))
    (out / "smem.txt").write_text(f"dynamic_smem={DYNAMIC_SMEM}\n" + _probe(cu, out))


def _probe(cu: ctypes.CDLL, out: Path) -> str:
    """%aggr_smem_size, %total_smem_size, %dynamic_smem_size of a block with DYNAMIC_SMEM bytes."""
    ptx = (".version 8.4\n.target sm_90a\n.address_size 64\n.visible .entry probe(.param .u64 p)\n{\n"
           ".reg .b32 %r<4>;\n.reg .b64 %rd<2>;\nmov.u32 %r1, %aggr_smem_size;\nmov.u32 %r2, %total_smem_size;\n"
           "mov.u32 %r3, %dynamic_smem_size;\nld.param.u64 %rd1, [p];\nst.global.u32 [%rd1], %r1;\n"
           "st.global.u32 [%rd1+4], %r2;\nst.global.u32 [%rd1+8], %r3;\nret;\n}\n")
    c = cu.check
    mod, fn, mem = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_uint64()
    c(cu.cuModuleLoadData(ctypes.byref(mod), ptx.encode() + b"\0"), "probe load")
    c(cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"probe"), "probe fn")
    c(cu.cuFuncSetAttribute(fn, 8, DYNAMIC_SMEM), "probe smem")
    c(cu.cuMemAlloc_v2(ctypes.byref(mem), 16), "probe alloc")
    args = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(mem), ctypes.c_void_p))
    c(cu.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, DYNAMIC_SMEM, None, args, None), "probe")
    c(cu.cuCtxSynchronize(), "probe sync")
    raw = ctypes.create_string_buffer(12)
    c(cu.cuMemcpyDtoH_v2(raw, mem, 12), "probe read")
    aggr, total, dyn = struct.unpack("<III", raw.raw)
    return f"aggr_smem_size={aggr}\ntotal_smem_size={total}\ndynamic_smem_size={dyn}\n"


# -- the engine's answer ------------------------------------------------------------------------------


def _expected_chunk(args: tuple[str, int, int, int, int]) -> list[int]:
    """For words [lo, hi) of site k (every ``every``-th): a bitmask over the site's checks of the
    (code, operand) pairs the engine finds."""
    out_dir, k, lo, hi, every = args
    out = Path(out_dir)
    meta = json.loads((out / "sites.json").read_text())[k]
    smem = dict(ln.split("=") for ln in (out / "smem.txt").read_text().split())
    text = (ROOT / "tests" / "corpus" / meta["file"]).read_text()
    inst = {i.line: i for i in scan_ptx(text, filename=meta["file"]).instructions}[meta["line"]]
    arch = (re.search(r"\.target\s+(sm_\w+)", text) or [None, None])[1]
    checks = [tuple(x) for x in meta["checks"]]
    data = (out / "words.bin").read_bytes()
    base = sum(m["words"] for m in json.loads((out / "sites.json").read_text())[:k])
    result = []
    for i in range(lo, hi, every):
        ws = struct.unpack_from("<3Q", data, 24 * (base + i))
        words = {o.role: o.value for o in inst.operands if o.resolved}
        words.update(zip(meta["operands"], ws))
        found = engine_findings(inst, words, arch, int(smem["aggr_smem_size"]))
        result.append(sum(1 << j for j, pair in enumerate(checks) if pair in found))
    return result


def expected(out: Path, every: int = 1, jobs: int | None = None) -> list[list[int]]:
    """The engine's answer for every ``every``-th word of each site, in parallel: per site a list."""
    meta = json.loads((out / "sites.json").read_text())
    chunks = []
    for k, m in enumerate(meta):
        step = 8192
        for lo in range(0, m["words"], step):
            start = lo + (-lo) % every
            chunks.append((str(out), k, start, min(lo + step, m["words"]), every))
    with ProcessPoolExecutor(jobs or os.cpu_count()) as pool:
        parts = list(pool.map(_expected_chunk, chunks))
    per_site: list[list[int]] = [[] for _ in meta]
    for (_, k, _, _, _), part in zip(chunks, parts):
        per_site[k] += part
    return per_site


def agreement(out: Path, per_site: list[list[int]], every: int = 1) -> tuple[int, int, list[str]]:
    """(words compared, words that agree, the first disagreements)."""
    meta = json.loads((out / "sites.json").read_text())
    device = struct.unpack(f"<{WORDS}I", (out / "device.bin").read_bytes())
    compared = agree = 0
    bad: list[str] = []
    base = 0
    for k, m in enumerate(meta):
        for j, want in enumerate(per_site[k]):
            i = j * every
            got = device[base + i]
            ok = (got == 0 and want == 0) or (got not in (0, 0xFFFFFFFF) and want >> (got - 1) & 1)
            compared += 1
            agree += bool(ok)
            if not ok and len(bad) < 10:
                bad.append(f"{m['entry']} word {i}: device {got}, engine mask {want:#x} over {m['checks']}")
        base += m["words"]
    return compared, agree, bad


def compare(out: Path) -> None:
    per_site = expected(out)
    compared, agree, bad = agreement(out, per_site)
    meta = json.loads((out / "sites.json").read_text())
    device = struct.unpack(f"<{WORDS}I", (out / "device.bin").read_bytes())
    sha = lambda p: hashlib.sha256((out / p).read_bytes()).hexdigest()  # noqa: E731
    found = sum(1 for d in device if d)
    lines = [f"words={WORDS}", f"sites={len(meta)}", f"device_findings={found}", f"compared={compared}",
             f"agree={agree}", f"harness_sha256={sha('harness.ptx')}", f"words_sha256={sha('words.bin')}",
             f"device_sha256={sha('device.bin')}", *(out / "smem.txt").read_text().split(),
             f"agreement={'yes' if agree == compared == WORDS else 'no'}", *[f"disagreement={b}" for b in bad]]
    (out / "summary.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    cmd, where = sys.argv[1], Path(sys.argv[2])
    {"build": build, "run": run, "compare": compare}[cmd](where)
