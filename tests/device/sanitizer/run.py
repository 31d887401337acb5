#!/usr/bin/env python3
"""The descriptor sanitizer on a Hopper GPU (README.md beside this file says what and why).

    python3 run.py all OUT            # everything below, each GPU part in its own process
    python3 run.py build OUT          # nvcc -> gemm.ptx, descgen instrument -> gemm.inst.ptx, ptxas both
    python3 run.py clean OUT WORK     # (GPU) bug 0 on 4096^3: bit-identical outputs, interleaved timing
    python3 run.py bug OUT WORK N plain|inst   # (GPU) planted bug N in a process of its own
    python3 run.py triton OUT WORK NAME        # (GPU) one Triton kernel with and without the hook
    python3 run.py summary OUT        # recorded/summary.json and summary.txt from the parts' JSON

Everything lands under OUT/recorded/ (JSON per part, logs, the PTX built on the machine, the site
table); OUT/build/ holds the cubins. A trap kills the CUDA context of the process it happens in,
so each part that can trap runs in a subprocess with a timeout, and the parent only collects.

The CUDA GEMM is driven through the driver API with ctypes (libcuda: cuModuleLoadData,
cuModuleGetGlobal, cuMemHostAlloc(DEVICEMAP), cuLaunchKernel, ...); the report buffer is pinned,
host-mapped memory whose device address is written into the module global ``descgen_report``
(docs/sanitizer.md), and is read from the host after a trap. The ``build``, ``clean`` and ``bug`` parts need the
standard library and libcuda only (and nvcc/ptxas for ``build``); the ``triton`` parts need torch
and triton.
"""

from __future__ import annotations

import array
import ctypes
import gzip
import json
import os
import platform
import random
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]

# The CUDA GEMM (gemm_sm90.cu): 128 threads, 128 x 128 tiles, SMEM_BYTES of dynamic shared memory.
KERNEL = "gemm_bf16_tn"  # bug a kernel parameter: every field of A's descriptor a run-time value
FIXED = "gemm_bf16_tn_fixed"  # the same GEMM without the switch: fields constant but the start address
SMEM_BYTES = 132096
TILE = 128
THREADS = 128
CLEAN_SIZE = 4096  # (a) and (b): M = N = K
BUG_SIZE = 1024    # (c): M = N = K; small integer inputs, so that the right answer is exact
ROUNDS = 30        # (b): interleaved timed rounds (median), each INNER launches between two events
INNER = 5
CAPACITY = 256     # records the report buffer holds
SAMPLE = 2048      # (c): places where the exact product is computed (in Python) and compared
MAGIC = 0x44475352
OPERANDS = {0: "idesc", 1: "a_desc", 2: "b_desc", 3: "zcm", 4: "scale-input"}

# The planted bugs (gemm_sm90.cu's a_desc(); README.md). expected: the descgen code the instrumented
# kernel should record first (None: no rule covers it yet; `rule` says what the rule should say).
BUGS = {
    0: {"what": "none (control)", "expected": None},
    1: {"what": "A's start address +0x1E000 bytes: past the CTA's 0x20400 bytes of dynamic shared memory, "
                "inside the 256 KiB window",
        "expected": "SMEM-OUTSIDE-CTA"},
    2: {"what": "a carry out of the start address field: 0x3FC0 (-1 KiB as an unsigned 18-bit offset, >> 4) "
                "added to the 64-bit word: bits 0-13 wrap to 1 KiB below the tile, bit 14 set (an H200 refuses "
                "such a wgmma: CUDA_ERROR_ILLEGAL_INSTRUCTION, tests/device/triton_hook)",
        "expected": "WGMMA-SMEM-RESERVED-14"},
    3: {"what": "A's start address 2 x 128-byte rows past its 1024-byte 128B-swizzle boundary, base offset 0",
        "expected": "SMEM-BASE-OFFSET-BOUNDARY"},
    4: {"what": "A's SBO 512 bytes (8 rows x 64 B, the 64B swizzle's value) with the 128B swizzle",
        "expected": "WGMMA-SBO-ATOM",
        "rule": "WGMMA-SBO-ATOM: a swizzled K-major operand's SBO, the step between 8-row groups, must be a whole "
                "number of swizzle patterns (1024 bytes for 128B) when one wgmma reads more than one group "
                "(M = 64: 8 groups of A; N = 128: 16 of B)"},
    5: {"what": "the tile's generic address (not its shared-window address) encoded without the 0x3FFFF mask: "
                "its bits above bit 17 land in bits 14 and up",
        "expected": "WGMMA-SMEM-RESERVED-* or WGMMA-SBO-ATOM",
        "rule": "a start address computed from an address outside the 18-bit shared window: bits of the "
                "generic window base show up in reserved bits 14-15 / 30-31 / 46-48 / 52-61 (and in LBO, SBO, "
                "base offset); which reserved field is hit first depends on the window's base"},
    6: {"what": "a carry through bits 14-15 into the LBO: 0xFFC0 (-1 KiB as a 16-bit two's complement, >> 4) "
                "added to the 64-bit word: the start wraps to 1 KiB below the tile, bits 14-15 stay 0, the LBO "
                "(unused: K-major, swizzled) goes from 16 to 32 bytes",
        "expected": None,
        "rule": "none can see it in the word: every field is legal (LBO 32 is WGMMA-LBO-IGNORED, an info, not "
                "checked at run time); the start address is a legal one, only not the tile's (the case bug 2 "
                "is not: silently wrong on the GPU, where bug 2 faults)"},
}

PART_TIMEOUT = {"clean": 120, "bug": 30, "triton": 150}
DEADLINE_S = 330  # `all` starts no part after this many seconds, and cuts timeouts to what is left


# ------------------------------------------------------------------------------------------------
# Small helpers


def _now() -> float:
    return time.monotonic()


#: Directories of this machine that recorded text names (OUT, the scratch directory, the checkout,
#: the temporary directory, home), replaced by a name (recorded/ is committed: no machine's paths).
_PREFIXES: list[tuple[str, str]] = []


def _set_prefixes(out: Path, work: Path | None = None) -> None:
    pairs = [(str(out), "$OUT"), (str(ROOT), "$REPO"), (tempfile.gettempdir(), "$TMPDIR"), (str(Path.home()), "~")]
    if work is not None:
        pairs.append((str(work), "$WORK"))
    _PREFIXES[:] = sorted(((k, v) for k, v in pairs if len(k) > 1), key=lambda kv: -len(kv[0]))


def portable(text: str) -> str:
    for k, v in _PREFIXES:
        text = text.replace(k, v)
    return text


def _portable_ptx(text: str) -> str:
    """PTX with its .file paths and DWARF compiling directory made portable (tests/corpus/trim.py)."""
    try:
        sys.path.insert(0, str(ROOT / "tests" / "corpus"))
        from trim import portable_paths

        text = portable_paths(text)
    except Exception:  # noqa: BLE001
        pass
    return portable(text)


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(portable(text))


def _write_json(path: Path, obj) -> None:
    _write_text(path, json.dumps(obj, indent=1, default=str) + "\n")


def _tool(name: str) -> str | None:
    """A CUDA tool: on PATH, beside nvcc, or in the usual install directories."""
    found = shutil.which(name)
    if found:
        return found
    nvcc = shutil.which("nvcc")
    candidates = [Path(nvcc).parent / name] if nvcc else []
    candidates += [Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "bin" / name,
                   Path("/usr/local/cuda/bin") / name]
    for c in candidates:
        if c.is_file():
            return str(c)
    return None


def _run(cmd: list[str], **kw) -> dict:
    t = _now()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, **kw)
        return {"cmd": cmd, "rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr, "s": round(_now() - t, 2)}
    except (OSError, subprocess.SubprocessError) as e:
        return {"cmd": cmd, "rc": None, "stdout": "", "stderr": repr(e), "s": round(_now() - t, 2)}


def ptxas_messages(stderr: str) -> dict:
    """ptxas's C75xx messages (wgmma pipeline: C7510 and the other 'Potential Performance Loss'
    serialisations; C7517/C7519 injected waits/arrives)."""
    lines = [ln.strip() for ln in stderr.splitlines() if re.search(r"\(C75\d\d\)", ln)]
    return {"c75xx": lines, "C7510": any("(C7510)" in ln for ln in lines),
            "serialized": any("serialized" in ln for ln in lines),
            "codes": sorted({re.search(r"\((C75\d\d)\)", ln).group(1) for ln in lines})}


def decode_wgmma_desc(word: int) -> dict:
    """The wgmma shared memory descriptor's fields (§9.7.15.5.1.2.2), decoded here independently."""
    return {"start_address": (word & 0x3FFF) << 4, "reserved_14": (word >> 14) & 3, "lbo": ((word >> 16) & 0x3FFF) << 4,
            "reserved_30": (word >> 30) & 3, "sbo": ((word >> 32) & 0x3FFF) << 4, "reserved_46": (word >> 46) & 7,
            "base_offset": (word >> 49) & 7, "reserved_52": (word >> 52) & 0x3FF,
            "swizzle": {0: "none", 1: "128B", 2: "64B", 3: "32B"}[(word >> 62) & 3]}


def parse_report(buf: bytes, sites: dict | None) -> dict:
    """The report buffer (docs/sanitizer.md): header and records, with the site table's names."""
    count, cap, magic, version = struct.unpack_from("<IIII", buf, 0)
    out = {"count": count, "capacity": cap, "magic_ok": magic == MAGIC, "version": version, "records": []}
    table = (sites or {}).get("sites", [])
    for i in range(min(count, cap)):
        off = 64 + 64 * i
        site, code, operand, flags = struct.unpack_from("<IIII", buf, off)
        (word,) = struct.unpack_from("<Q", buf, off + 16)
        cta = struct.unpack_from("<III", buf, off + 24)
        tid = struct.unpack_from("<III", buf, off + 36)
        (value,) = struct.unpack_from("<q", buf, off + 48)
        (smid,) = struct.unpack_from("<I", buf, off + 56)
        rec = {"site": site, "code_index": code, "operand": OPERANDS.get(operand, operand), "complete": flags & 1,
               "word": f"{word:#018x}", "block": list(cta), "thread": list(tid), "value": value, "smid": smid}
        if site < len(table):
            s = table[site]
            rec["line"] = s.get("line")
            codes = s.get("codes", [])
            rec["code"] = codes[code] if code < len(codes) else f"?{code}"
            rec["severity"] = (sites or {}).get("severity", {}).get(rec["code"])
        if operand in (1, 2):
            rec["fields"] = decode_wgmma_desc(word)
        out["records"].append(rec)
    return out


def record_line(r: dict) -> str:
    code = r.get("code", f"code#{r['code_index']}")
    where = f"site {r['site']}" + (f" (PTX line {r['line']})" if r.get("line") else "")
    return (f"{where}: {code} on {r['operand']} word {r['word']} value {r['value']:#x}, block {tuple(r['block'])} "
            f"thread {tuple(r['thread'])} sm {r['smid']}")


# ------------------------------------------------------------------------------------------------
# The CUDA driver API through ctypes


class CudaError(RuntimeError):
    def __init__(self, call: str, rc: int, name: str):
        super().__init__(f"{call}: {name} ({rc})")
        self.call, self.rc, self.name = call, rc, name


class Cuda:
    """Just enough of libcuda: the primary context of device 0, modules, memory, launches, events."""

    def __init__(self):
        self.lib = lib = ctypes.CDLL("libcuda.so.1")
        u64, u32, i32, p, sz = ctypes.c_uint64, ctypes.c_uint, ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t
        pp = ctypes.POINTER
        sig = {
            "cuInit": [u32], "cuDriverGetVersion": [pp(i32)], "cuDeviceGet": [pp(i32), i32],
            "cuDeviceGetName": [ctypes.c_char_p, i32, i32], "cuDeviceGetAttribute": [pp(i32), i32, i32],
            "cuDevicePrimaryCtxRetain": [pp(p), i32], "cuCtxSetCurrent": [p], "cuCtxSynchronize": [],
            "cuModuleLoadData": [pp(p), p], "cuModuleGetFunction": [pp(p), p, ctypes.c_char_p],
            "cuModuleGetGlobal_v2": [pp(u64), pp(sz), p, ctypes.c_char_p],
            "cuFuncSetAttribute": [p, i32, i32], "cuFuncGetAttribute": [pp(i32), i32, p],
            "cuMemAlloc_v2": [pp(u64), sz], "cuMemFree_v2": [u64], "cuMemsetD8_v2": [u64, ctypes.c_ubyte, sz],
            "cuMemcpyHtoD_v2": [u64, p, sz], "cuMemcpyDtoH_v2": [p, u64, sz],
            "cuMemHostAlloc": [pp(p), sz, u32], "cuMemHostGetDevicePointer_v2": [pp(u64), p, u32],
            "cuLaunchKernel": [p, u32, u32, u32, u32, u32, u32, u32, p, pp(p), pp(p)],
            "cuEventCreate": [pp(p), u32], "cuEventRecord": [p, p], "cuEventSynchronize": [p],
            "cuEventElapsedTime": [pp(ctypes.c_float), p, p], "cuGetErrorName": [i32, pp(ctypes.c_char_p)],
        }
        for name, args in sig.items():
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = args, ctypes.c_int
        self.check(lib.cuInit(0), "cuInit")
        self.dev = ctypes.c_int()
        self.check(lib.cuDeviceGet(ctypes.byref(self.dev), 0), "cuDeviceGet")
        self.ctx = ctypes.c_void_p()
        self.check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(self.ctx), self.dev), "cuDevicePrimaryCtxRetain")
        self.check(lib.cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")

    def error_name(self, rc: int) -> str:
        s = ctypes.c_char_p()
        return s.value.decode() if self.lib.cuGetErrorName(rc, ctypes.byref(s)) == 0 and s.value else f"CUresult {rc}"

    def check(self, rc: int, call: str) -> None:
        if rc != 0:
            raise CudaError(call, rc, self.error_name(rc))

    def device(self) -> dict:
        name = ctypes.create_string_buffer(256)
        self.lib.cuDeviceGetName(name, 256, self.dev)
        v, sms, cc0, cc1 = ctypes.c_int(), ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        self.lib.cuDriverGetVersion(ctypes.byref(v))
        self.lib.cuDeviceGetAttribute(ctypes.byref(sms), 16, self.dev)  # MULTIPROCESSOR_COUNT
        self.lib.cuDeviceGetAttribute(ctypes.byref(cc0), 75, self.dev)  # COMPUTE_CAPABILITY_MAJOR
        self.lib.cuDeviceGetAttribute(ctypes.byref(cc1), 76, self.dev)
        return {"name": name.value.decode(), "driver_api": v.value, "sms": sms.value, "cc": f"{cc0.value}.{cc1.value}"}

    def load(self, image: bytes):
        mod = ctypes.c_void_p()
        self.check(self.lib.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(image)), "cuModuleLoadData")
        return mod

    def function(self, mod, name: str, smem: int):
        fn = ctypes.c_void_p()
        self.check(self.lib.cuModuleGetFunction(ctypes.byref(fn), mod, name.encode()), "cuModuleGetFunction")
        self.check(self.lib.cuFuncSetAttribute(fn, 8, smem), "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)")
        return fn

    def registers(self, fn) -> int:
        n = ctypes.c_int()
        self.lib.cuFuncGetAttribute(ctypes.byref(n), 4, fn)  # NUM_REGS
        return n.value

    def global_symbol(self, mod, name: str) -> tuple[int, int] | None:
        d, n = ctypes.c_uint64(), ctypes.c_size_t()
        if self.lib.cuModuleGetGlobal_v2(ctypes.byref(d), ctypes.byref(n), mod, name.encode()) != 0:
            return None
        return d.value, n.value

    def alloc(self, n: int) -> int:
        d = ctypes.c_uint64()
        self.check(self.lib.cuMemAlloc_v2(ctypes.byref(d), n), "cuMemAlloc")
        return d.value

    def htod(self, dst: int, data: bytes) -> None:
        self.check(self.lib.cuMemcpyHtoD_v2(dst, ctypes.c_char_p(data), len(data)), "cuMemcpyHtoD")

    def dtoh(self, src: int, n: int) -> bytes:
        buf = ctypes.create_string_buffer(n)
        self.check(self.lib.cuMemcpyDtoH_v2(buf, src, n), "cuMemcpyDtoH")
        return buf.raw

    def memset(self, dst: int, byte: int, n: int) -> None:
        self.check(self.lib.cuMemsetD8_v2(dst, byte, n), "cuMemsetD8")

    def mapped(self, n: int) -> tuple[int, int]:
        """Pinned, host-mapped memory (CU_MEMHOSTALLOC_DEVICEMAP): (host address, device address)."""
        h, d = ctypes.c_void_p(), ctypes.c_uint64()
        self.check(self.lib.cuMemHostAlloc(ctypes.byref(h), n, 0x02), "cuMemHostAlloc")
        self.check(self.lib.cuMemHostGetDevicePointer_v2(ctypes.byref(d), h, 0), "cuMemHostGetDevicePointer")
        ctypes.memset(h, 0, n)
        return h.value, d.value

    def launch(self, fn, grid, block, smem: int, args: list) -> int:
        """Launch; returns the CUresult (not raised: a launch after a trap is part of what we record)."""
        ptrs = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])
        return self.lib.cuLaunchKernel(fn, *grid, *block, smem, None, ptrs, None)

    def sync(self) -> int:
        return self.lib.cuCtxSynchronize()

    def event(self):
        e = ctypes.c_void_p()
        self.check(self.lib.cuEventCreate(ctypes.byref(e), 0), "cuEventCreate")
        return e

    def record(self, e) -> None:
        self.check(self.lib.cuEventRecord(e, None), "cuEventRecord")

    def elapsed_ms(self, a, b) -> float:
        self.check(self.lib.cuEventSynchronize(b), "cuEventSynchronize")
        ms = ctypes.c_float()
        self.check(self.lib.cuEventElapsedTime(ctypes.byref(ms), a, b), "cuEventElapsedTime")
        return ms.value


class Gemm:
    """A GEMM kernel (``KERNEL`` or ``FIXED``) of one cubin, with its report buffer attached when the
    module has one."""

    def __init__(self, cuda: Cuda, cubin: Path, kernel: str = KERNEL):
        self.cuda = cuda
        self.mod = cuda.load(cubin.read_bytes())
        self.fn = cuda.function(self.mod, kernel, SMEM_BYTES)
        self.regs = cuda.registers(self.fn)
        self.report_host = None
        sym = cuda.global_symbol(self.mod, "descgen_report")
        self.instrumented = sym is not None
        if sym is not None:
            size = 64 + 64 * CAPACITY
            self.report_host, dev = cuda.mapped(size)
            self.report_size = size
            self.reset_report()
            cuda.htod(sym[0], struct.pack("<Q", dev))

    def reset_report(self) -> None:
        if self.report_host is not None:
            ctypes.memset(self.report_host, 0, self.report_size)
            ctypes.memmove(self.report_host, struct.pack("<IIII", 0, CAPACITY, MAGIC, 1), 16)

    def report(self) -> bytes | None:
        return None if self.report_host is None else ctypes.string_at(self.report_host, self.report_size)

    def launch(self, a: int, b: int, c: int, m: int, n: int, k: int, bug: int) -> int:
        args = [ctypes.c_uint64(a), ctypes.c_uint64(b), ctypes.c_uint64(c), ctypes.c_int32(m), ctypes.c_int32(n),
                ctypes.c_int32(k), ctypes.c_int32(bug)]
        return self.cuda.launch(self.fn, (n // TILE, m // TILE, 1), (THREADS, 1, 1), SMEM_BYTES, args)


# ------------------------------------------------------------------------------------------------
# build: nvcc, descgen instrument, ptxas (no GPU needed)


def _instrument(ptx: Path, out: Path) -> dict:
    """descgen instrument PTX -o OUT: ``python -m descgen`` of this checkout (PYTHONPATH), else a
    ``descgen`` command on PATH, else the library (no click needed)."""
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    tried = []
    exe = shutil.which("descgen")
    ways = (("python -m descgen", [sys.executable, "-m", "descgen"]), (f"descgen ({exe})", [exe] if exe else None))
    for how, cmd in ways:
        if cmd is None:
            continue
        r = _run(cmd + ["instrument", ptx.name, "-o", out.name], env=env, cwd=str(ptx.parent))
        tried.append({"how": how, "rc": r["rc"], "stderr": r["stderr"][-3000:], "stdout": r["stdout"][-3000:]})
        if r["rc"] in (0, 1) and out.is_file():
            return {"ok": True, "how": how, "tried": tried}
    try:
        sys.path.insert(0, str(ROOT))
        from descgen.sanitizer.instrument import instrument_ptx

        done = instrument_ptx(ptx.read_text(), file=ptx.name)
        out.write_text(done.ptx)
        Path(str(out) + ".sites.json").write_text(done.sites_json())
        return {"ok": True, "how": "library (descgen.sanitizer.instrument.instrument_ptx)", "tried": tried,
                "summary": done.summary()}
    except Exception as e:  # noqa: BLE001 (recorded, the run goes on)
        tried.append({"how": "library", "error": repr(e)})
        return {"ok": False, "how": None, "tried": tried}


def _scan(ptx: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    exe = shutil.which("descgen")
    for cmd in ([sys.executable, "-m", "descgen"], [exe] if exe else None):
        if cmd is None:
            continue
        r = _run(cmd + ["scan", ptx.name], env=env, cwd=str(ptx.parent))
        if r["rc"] in (0, 1):
            return {"rc": r["rc"], "out": (r["stdout"] + r["stderr"])[-4000:]}
    try:
        sys.path.insert(0, str(ROOT))
        from descgen.ptx.scan import scan_ptx

        res = scan_ptx(ptx.read_text(), filename=ptx.name)
        bad = [f for f in res.findings if f.severity in ("error", "warning")]
        return {"rc": 1 if bad else 0, "out": f"library scan: {len(res.instructions)} instructions, "
                                              f"{len(bad)} errors/warnings: {[f.message() for f in bad][:10]}"}
    except Exception as e:  # noqa: BLE001
        return {"rc": None, "out": f"scan unavailable: {e!r}"}


def build(out: Path) -> dict:
    rec = out / "recorded"
    bdir = out / "build"
    bdir.mkdir(parents=True, exist_ok=True)
    rec.mkdir(parents=True, exist_ok=True)
    res: dict = {"part": "build"}
    nvcc, ptxas = _tool("nvcc"), _tool("ptxas")
    res["nvcc"], res["ptxas"] = nvcc, ptxas
    res["nvcc_version"] = _run([nvcc, "--version"])["stdout"].strip().splitlines()[-1:] if nvcc else None
    res["ptxas_version"] = _run([ptxas, "--version"])["stdout"].strip().splitlines()[-1:] if ptxas else None
    ptx, inst = bdir / "gemm.ptx", bdir / "gemm.inst.ptx"
    if not nvcc:
        res["error"] = "nvcc not found"
        _write_json(rec / "build.json", res)
        return res
    r = _run([nvcc, "-arch=sm_90a", "-ptx", str(HERE / "gemm_sm90.cu"), "-o", str(ptx)])
    res["nvcc_ptx"] = {"rc": r["rc"], "stderr": r["stderr"][-2000:], "s": r["s"]}
    if r["rc"] != 0:
        _write_json(rec / "build.json", res)
        return res
    text = ptx.read_text()
    res["ptx_bytes"] = len(text)
    res["wgmma_lines"] = [i + 1 for i, ln in enumerate(text.split("\n")) if "wgmma.mma_async" in ln]
    _write_text(rec / "gemm.ptx", text)
    res["scan"] = _scan(ptx)
    res["instrument"] = _instrument(ptx, inst)
    sites = Path(str(inst) + ".sites.json")
    if sites.is_file():
        _write_text(rec / "gemm.inst.ptx.sites.json", sites.read_text())
    if inst.is_file():
        with gzip.open(rec / "gemm.inst.ptx.gz", "wt") as fh:
            fh.write(portable(inst.read_text()))
    for name, src in (("plain", ptx), ("inst", inst)):
        if not src.is_file() or not ptxas:
            res[f"ptxas_{name}"] = {"skipped": "no PTX" if not src.is_file() else "no ptxas"}
            continue
        r = _run([ptxas, "-arch=sm_90a", "-v", str(src), "-o", str(bdir / f"gemm.{name}.cubin")])
        m = re.search(r"Used (\d+) registers", r["stderr"])
        res[f"ptxas_{name}"] = {"rc": r["rc"], "registers": int(m.group(1)) if m else None,
                                **ptxas_messages(r["stderr"]), "stderr_tail": r["stderr"][-1500:]}
        _write_text(rec / f"ptxas_{name}.log", r["stderr"])
    _write_json(rec / "build.json", res)
    return res


# ------------------------------------------------------------------------------------------------
# clean (GPU): (a) bit-identical, (b) timing; and the bug parts' inputs (made by `all`)


def make_bug_inputs(work: Path) -> None:
    """The bug parts' inputs (no torch needed): A and B of BUG_SIZE^2 bf16 small integers, so that
    every product and sum is exact in fp32, and the exact product at SAMPLE random places."""
    rng = random.Random(30)
    n = BUG_SIZE
    table = {v: struct.pack("<f", float(v))[2:] for v in range(-4, 5)}  # bf16: the high half of the float
    a = [rng.randint(-4, 4) for _ in range(n * n)]
    b = [rng.randint(-4, 4) for _ in range(n * n)]
    (work / "A.bin").write_bytes(b"".join(table[x] for x in a))
    (work / "B.bin").write_bytes(b"".join(table[x] for x in b))
    picks = [(rng.randrange(n), rng.randrange(n)) for _ in range(SAMPLE)]
    sample = [[i, j, sum(x * y for x, y in zip(a[i * n:(i + 1) * n], b[j * n:(j + 1) * n]))] for i, j in picks]
    (work / "sample.json").write_text(json.dumps(sample))


def _bf16_matrix(rng: random.Random, n: int, period: int = 1 << 20) -> tuple[bytes, list[float]]:
    """An n x n bf16 matrix of N(0, 1) values (truncated to bf16), as bytes and as floats; the first
    `period` elements repeat (generating 16 M values in Python would take too long)."""
    base = array.array("f", (rng.gauss(0.0, 1.0) for _ in range(period)))
    bits = array.array("H", (x >> 16 for x in array.array("I", base.tobytes())))
    values = array.array("f", array.array("I", (x << 16 for x in bits)).tobytes()).tolist()
    reps = n * n // period
    return bits.tobytes() * reps, values


def clean(out: Path, work: Path) -> dict:
    """(a) bug = 0: the instrumented kernel's output bit for bit the plain one's, no record; (b) the
    interleaved timing. Standard library and libcuda only."""
    res: dict = {"part": "clean", "size": CLEAN_SIZE}
    path = out / "recorded" / "clean.json"
    _write_json(path, dict(res, status="started"))
    cuda = Cuda()
    res["device"] = cuda.device()
    bdir = out / "build"
    plain = Gemm(cuda, bdir / "gemm.plain.cubin")
    inst = Gemm(cuda, bdir / "gemm.inst.cubin") if (bdir / "gemm.inst.cubin").is_file() else None
    res["registers"] = {"plain": plain.regs, "inst": inst.regs if inst else None}
    res["inst_has_report_symbol"] = inst.instrumented if inst else None

    n = CLEAN_SIZE
    rng = random.Random(30)
    a_bytes, a_vals = _bf16_matrix(rng, n)
    b_bytes, b_vals = _bf16_matrix(rng, n)
    a, b = cuda.alloc(len(a_bytes)), cuda.alloc(len(b_bytes))
    cuda.htod(a, a_bytes)
    cuda.htod(b, b_bytes)
    outs = {k: cuda.alloc(n * n * 4) for k in ("plain", "plain2", "inst", "scratch")}
    for c in outs.values():
        cuda.memset(c, 0xFF, n * n * 4)

    def run(g_, c):
        rc = g_.launch(a, b, outs[c], n, n, n, 0)
        src = cuda.sync()
        return {"launch": cuda.error_name(rc) if rc else "ok", "sync": cuda.error_name(src) if src else "ok"}

    res["runs"] = {"plain": run(plain, "plain"), "plain2": run(plain, "plain2")}
    if res["runs"]["plain"] != {"launch": "ok", "sync": "ok"}:
        res["status"] = "plain kernel failed"
        _write_json(path, res)
        os._exit(0)
    got = {"plain": cuda.dtoh(outs["plain"], n * n * 4), "plain2": cuda.dtoh(outs["plain2"], n * n * 4)}
    # Against the product in double precision at SAMPLE places (the inputs' period: 256 rows).
    c_plain = array.array("f", got["plain"])
    period = len(a_vals) // n
    errs, scale = [], 0.0
    for _ in range(512):
        i, j = rng.randrange(n), rng.randrange(n)
        ra, rb = a_vals[(i % period) * n:(i % period + 1) * n], b_vals[(j % period) * n:(j % period + 1) * n]
        want = sum(x * y for x, y in zip(ra, rb))
        errs.append(abs(c_plain[i * n + j] - want))
        scale = max(scale, abs(want))
    res["plain_vs_reference"] = {"places": len(errs), "max_abs_err": max(errs), "max_abs_ref": scale,
                                 "nan": sum(1 for e in errs if e != e),
                                 "ok": all(e == e for e in errs) and max(errs) <= 1e-3 * scale}
    res["plain_deterministic"] = got["plain"] == got["plain2"]
    if inst is not None:
        res["runs"]["inst"] = run(inst, "inst")
        raw = inst.report()
        rep = parse_report(raw, _sites(out))
        res["inst_report"] = {"count": rep["count"], "magic_ok": rep["magic_ok"], "records": rep["records"][:8]}
        res["records_text"] = [record_line(r) for r in rep["records"][:8]]
        if rep["count"]:
            res["library_decode"] = _library_decode(raw, out)
        if res["runs"]["inst"] != {"launch": "ok", "sync": "ok"}:  # a false positive's trap: the context is gone
            res["status"] = "instrumented kernel stopped"
            _write_json(path, res)
            os._exit(0)
        got["inst"] = cuda.dtoh(outs["inst"], n * n * 4)
        res["bit_identical"] = got["plain"] == got["inst"]
        if not res["bit_identical"]:
            c_inst = array.array("f", got["inst"])
            res["differing_elements"] = sum(1 for x, y in zip(c_plain, c_inst) if x != y)
    _write_json(path, dict(res, status="compared"))

    # (b) interleaved timing: each round times INNER launches of each variant, order alternating.
    if inst is not None:
        res["timing"] = _interleaved(cuda, plain, inst, lambda g_: g_.launch(a, b, outs["scratch"], n, n, n, 0))
        _write_json(path, dict(res, status="timed"))
        # the same for the GEMM without the planted-bug switch: bit identity, then timing
        fixed = {tag: Gemm(cuda, bdir / f"gemm.{tag}.cubin", FIXED) for tag in ("plain", "inst")}
        f_res: dict = {"runs": {}}
        for tag, g_ in fixed.items():
            cuda.memset(outs["inst"], 0xFF, n * n * 4)
            f_res["runs"][tag] = run(g_, "inst")
            if f_res["runs"][tag] != {"launch": "ok", "sync": "ok"}:
                res["fixed"] = f_res
                res["status"] = f"fixed {tag} kernel failed"
                _write_json(path, res)
                os._exit(0)
            f_res[tag] = cuda.dtoh(outs["inst"], n * n * 4)
        f_res["bit_identical"] = f_res["inst"] == f_res["plain"]
        f_res["bit_identical_to_plain"] = f_res.pop("plain") == got["plain"]  # (the switch's kernel: the same sums)
        del f_res["inst"]
        f_res["records"] = parse_report(fixed["inst"].report(), _sites(out))["count"]
        f_res["registers"] = {k: g_.regs for k, g_ in fixed.items()}
        f_res["timing"] = _interleaved(cuda, fixed["plain"], fixed["inst"],
                                       lambda g_: g_.launch(a, b, outs["scratch"], n, n, n, 0))
        res["fixed"] = f_res
    res["status"] = "done"
    _write_json(path, res)
    return res


def _interleaved(cuda: Cuda, plain: Gemm, inst: Gemm, launch) -> dict:
    """ROUNDS interleaved rounds (order alternating), each timing INNER launches of each kernel
    between two events: medians, minima, TFLOP/s and the overhead in percent."""
    n = CLEAN_SIZE
    e0, e1 = cuda.event(), cuda.event()
    times: dict = {"plain": [], "inst": []}
    for variant in (plain, inst, plain, inst):  # warm-up
        launch(variant)
    cuda.check(cuda.sync(), "warm-up")
    for r in range(ROUNDS):
        order = [("plain", plain), ("inst", inst)] if r % 2 == 0 else [("inst", inst), ("plain", plain)]
        for tag, variant in order:
            cuda.record(e0)
            for _ in range(INNER):
                launch(variant)
            cuda.record(e1)
            times[tag].append(cuda.elapsed_ms(e0, e1) / INNER)
    med = {k: statistics.median(v) for k, v in times.items()}
    flops = 2.0 * n * n * n
    return {"rounds": ROUNDS, "launches_per_round": INNER,
            "median_ms": med, "min_ms": {k: min(v) for k, v in times.items()},
            "tflops": {k: flops / (m * 1e-3) / 1e12 for k, m in med.items()},
            "overhead_percent": (med["inst"] / med["plain"] - 1.0) * 100.0,
            "samples_ms": {k: [round(x, 4) for x in v] for k, v in times.items()}}


def _library_decode(raw: bytes, out: Path) -> dict:
    """The same buffer read by descgen's own reader (descgen.sanitizer.report), when there is one."""
    try:
        sys.path.insert(0, str(ROOT))
        from descgen.sanitizer.report import decode_records, load_sites

        table = out / "build" / "gemm.inst.ptx.sites.json"
        found = decode_records(raw, load_sites(table.read_text(), file="gemm.ptx"))
        return {"summary": found.summary(), "messages": [f.message() for f in list(found)[:4]]}
    except Exception as e:  # noqa: BLE001
        return {"unavailable": repr(e)}


def _sites(out: Path) -> dict | None:
    p = out / "build" / "gemm.inst.ptx.sites.json"
    return json.loads(p.read_text()) if p.is_file() else None


# ------------------------------------------------------------------------------------------------
# bug (GPU): one planted bug, one cubin, in this process only


def bug(out: Path, work: Path, n_bug: int, mode: str) -> dict:
    res: dict = {"part": "bug", "bug": n_bug, "mode": mode, "what": BUGS[n_bug]["what"], "size": BUG_SIZE}
    path = out / "recorded" / "bugs" / f"bug{n_bug}_{mode}.json"
    _write_json(path, dict(res, status="started"))  # (what a timeout leaves)
    cuda = Cuda()
    gemm = Gemm(cuda, out / "build" / ("gemm.plain.cubin" if mode == "plain" else "gemm.inst.cubin"))
    res["report_attached"] = gemm.instrumented
    s = BUG_SIZE
    a_bytes, b_bytes = (work / "A.bin").read_bytes(), (work / "B.bin").read_bytes()
    a, b, c = cuda.alloc(len(a_bytes)), cuda.alloc(len(b_bytes)), cuda.alloc(s * s * 4)
    cuda.htod(a, a_bytes)
    cuda.htod(b, b_bytes)
    cuda.memset(c, 0xFF, s * s * 4)  # NaN everywhere: an element the kernel never wrote shows
    t = _now()
    rc = gemm.launch(a, b, c, s, s, s, n_bug)
    src = cuda.sync()
    res["seconds"] = round(_now() - t, 3)
    res["launch"] = cuda.error_name(rc) if rc else "ok"
    res["sync"] = cuda.error_name(src) if src else "ok"
    if gemm.instrumented:
        raw = gemm.report()
        rep = parse_report(raw, _sites(out))
        res["report"] = {"count": rep["count"], "magic_ok": rep["magic_ok"], "records": rep["records"][:16]}
        res["records_text"] = [record_line(r) for r in rep["records"][:16]]
        res["library_decode"] = _library_decode(raw, out)
    if rc == 0 and src == 0:
        raw_c = cuda.dtoh(c, s * s * 4)
        got = array.array("f", raw_c)
        # The exact product at the sampled places, then every element against bug 0's output (the
        # plain kernel, bug 0, when its sample is exact: written by that part, which runs first).
        sample = json.loads((work / "sample.json").read_text())
        bad = [abs(got[i * s + j] - v) for i, j, v in sample if got[i * s + j] != v]
        res["sample"] = {"checked": len(sample), "wrong": len(bad), "nan": sum(1 for d in bad if d != d),
                         "max_abs_err": max((d for d in bad if d == d), default=0.0)}
        c0 = work / "c0.bin"
        if n_bug == 0 and mode == "plain" and not bad:
            c0.write_bytes(raw_c)
        elif c0.is_file():
            want = array.array("f", c0.read_bytes())
            wrong = nan = 0
            worst = 0.0
            for x, y in zip(got, want):
                if x != y:
                    wrong += 1
                    if x != x:
                        nan += 1
                    else:
                        worst = max(worst, abs(x - y))
            res["wrong_elements"], res["nan_elements"], res["max_abs_err"] = wrong, nan, worst
        res["status"] = "wrong" if bad or res.get("wrong_elements") else "correct"
    else:
        res["status"] = "cuda-error"
    _write_json(path, res)
    print(json.dumps({k: v for k, v in res.items() if k not in ("report",)}, default=str))
    sys.stdout.flush()
    os._exit(0)  # (no context teardown after a trap)


# ------------------------------------------------------------------------------------------------
# triton (GPU): one kernel, plain and with descgen's Triton hook


def triton_part(out: Path, work: Path, name: str) -> dict:
    res: dict = {"part": "triton", "name": name, "size": CLEAN_SIZE}
    path = out / "recorded" / "triton" / f"{name}.json"
    _write_json(path, dict(res, status="started"))
    # A cache of its own: Triton 3.6's key does not see a stages hook, so a kernel another program
    # compiled under one (variants.py) would come back as the plain kernel.
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix=f"triton-cache-{name}-", dir=work)
    import torch
    import triton

    sys.path.insert(0, str(HERE))
    import triton_gemms as tg

    res["triton"] = triton.__version__
    res["torch"] = torch.__version__
    res["device"] = torch.cuda.get_device_name(0)
    build_fn = tg.BUILDERS[name]
    g = build_fn()
    res["what"] = g.what
    a, b = g.make_inputs(CLEAN_SIZE, CLEAN_SIZE, CLEAN_SIZE, seed=7)
    t = _now()
    c_plain, ck_plain = g.launch(a, b)
    torch.cuda.synchronize()
    res["compile_plain_s"] = round(_now() - t, 2)
    res["check_plain"] = g.check(c_plain, a, b)
    ptx_plain = ck_plain.asm.get("ptx", "")
    tdir = out / "recorded" / "triton"
    with gzip.open(tdir / f"{name}.plain.ptx.gz", "wt") as fh:
        fh.write(_portable_ptx(ptx_plain))
    res["plain_wgmma"] = ptx_plain.count("wgmma.mma_async")
    res["ptxas_plain"] = _ptxas_check(ptx_plain, work / f"{name}.plain.ptx", triton)
    _write_json(path, dict(res, status="plain done"))

    try:
        sys.path.insert(0, str(ROOT))
        import descgen.triton as dgt  # type: ignore[import-not-found]
    except Exception as e:  # noqa: BLE001
        res["descgen_triton"] = f"missing: {e!r}"
        res["status"] = "plain only (descgen.triton missing)"
        _write_json(path, res)
        return res
    res["descgen_triton"] = "present"
    try:
        triton.knobs.compilation.always_compile = True  # (the disk cache's key does not see the hook)
    except Exception as e:  # noqa: BLE001
        res["knobs_note"] = repr(e)
    try:
        dgt.enable("instrument")
    except Exception as e:  # noqa: BLE001
        res["enable_error"] = repr(e)
        res["status"] = "descgen.triton.enable failed"
        _write_json(path, res)
        return res
    gi = build_fn(fresh=True)  # a JITFunction of its own: compiled now, under the hook
    t = _now()
    try:
        c_inst, ck_inst = gi.launch(a, b)
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001  (a finding: DescriptorError; after a trap the context is gone)
        res["inst_error"] = f"{type(e).__name__}: {e}"[:4000]
        res["status"] = "instrumented kernel reported or failed"
        _write_json(path, res)
        os._exit(0)
    res["compile_inst_s"] = round(_now() - t, 2)
    ptx_inst = ck_inst.asm.get("ptx", "")
    with gzip.open(tdir / f"{name}.inst.ptx.gz", "wt") as fh:
        fh.write(_portable_ptx(ptx_inst))
    res["inst_sites"] = len(re.findall(r"// descgen: again site \d+", ptx_inst))  # (the sites checked)
    res["inst_blocks"] = len(re.findall(r"\{ // descgen: site \d+", ptx_inst))  # (their check blocks: shared)
    res["inst_declares_report"] = "descgen_report" in ptx_inst
    md = getattr(ck_inst, "metadata", None)
    res["inst_metadata_descgen"] = bool(hasattr(md, "_asdict") and "descgen" in md._asdict())
    res["ptxas_inst"] = _ptxas_check(ptx_inst, work / f"{name}.inst.ptx", triton)
    res["check_inst"] = g.check(c_inst, a, b)
    bits = torch.int16 if c_plain.element_size() == 2 else torch.int32
    res["bit_identical"] = bool(torch.equal(c_plain.view(bits), c_inst.view(bits)))
    _write_json(path, dict(res, status="compared"))

    # Interleaved timing, 24 rounds of 5 launches each: first with the hook on (descgen.triton
    # synchronises and reads the buffer after each launch of an instrumented kernel), then with it
    # on but not waiting (enable(wait=False): the buffers read as they are before and after each
    # launch), then with the hook off (the same compiled kernels: the checks' cost in the kernel alone).
    flops = 2.0 * CLEAN_SIZE ** 3
    res["timing"] = {}
    for phase in ("hook_on", "hook_nowait", "hook_off"):
        if phase == "hook_nowait":
            try:
                dgt.enable("instrument", wait=False)
            except Exception as e:  # noqa: BLE001
                res["enable_nowait_error"] = repr(e)
                continue
        if phase == "hook_off":
            try:
                dgt.disable()
            except Exception as e:  # noqa: BLE001
                res["disable_error"] = repr(e)
                break
        try:
            res["timing"][phase] = _time_pair(torch, {"plain": lambda: g.launch(a, b), "inst": lambda: gi.launch(a, b)},
                                              flops)
        except Exception as e:  # noqa: BLE001
            res["timing"][phase] = {"error": f"{type(e).__name__}: {e}"[:2000]}
            res["status"] = f"timing failed ({phase})"
            _write_json(path, res)
            os._exit(0)
    res["status"] = "done"
    _write_json(path, res)
    return res


def _time_pair(torch, runs: dict, flops: float, rounds: int = 24, inner: int = 5) -> dict:
    times: dict = {k: [] for k in runs}
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(2):
        for f in runs.values():
            f()
    torch.cuda.synchronize()
    names = list(runs)
    for r in range(rounds):
        for tag in (names if r % 2 == 0 else names[::-1]):
            start.record()
            for _ in range(inner):
                runs[tag]()
            end.record()
            end.synchronize()
            times[tag].append(start.elapsed_time(end) / inner)
    med = {k: statistics.median(v) for k, v in times.items()}
    return {"rounds": rounds, "launches_per_round": inner, "median_ms": med,
            "tflops": {k: flops / (m * 1e-3) / 1e12 for k, m in med.items()},
            "overhead_percent": (med["inst"] / med["plain"] - 1.0) * 100.0}


def _ptxas_check(ptx: str, path: Path, triton) -> dict:
    """C75xx messages of ptxas (the machine's, and Triton's own) on the kernel's PTX."""
    path.write_text(ptx)
    out = {}
    tools = {"system": _tool("ptxas")}
    try:
        tools["triton"] = triton.knobs.nvidia.ptxas.path
    except Exception:  # noqa: BLE001
        pass
    for k, exe in tools.items():
        if not exe:
            continue
        r = _run([exe, "-arch=sm_90a", str(path), "-o", os.devnull])
        out[k] = {"rc": r["rc"], **ptxas_messages(r["stderr"]),
                  "error": r["stderr"][-500:] if r["rc"] else None}
    return out


# ------------------------------------------------------------------------------------------------
# all, summary


def _child(args: list[str], timeout: float, log: Path) -> dict:
    t = _now()
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    try:
        p = subprocess.run([sys.executable, str(Path(__file__).resolve()), *args], capture_output=True, text=True,
                           timeout=timeout, env=env)
        _write_text(log, p.stdout + "\n--- stderr ---\n" + p.stderr)
        return {"rc": p.returncode, "s": round(_now() - t, 1), "timeout": False}
    except subprocess.TimeoutExpired as e:
        def text(x):
            return x.decode(errors="replace") if isinstance(x, bytes) else (x or "")
        _write_text(log, text(e.stdout) + "\n--- stderr ---\n" + text(e.stderr) + f"\n--- timed out after {timeout} s")
        return {"rc": None, "s": round(_now() - t, 1), "timeout": True}


def run_all(out: Path) -> int:
    start = _now()
    rec = out / "recorded"
    (rec / "logs").mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="descgen-sanitizer-"))
    _set_prefixes(out, work)
    parts: dict = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "host": platform.node(),
                   "python": sys.version.split()[0], "children": {}}

    def left() -> float:
        return DEADLINE_S - (_now() - start)

    def child(key: str, args: list[str], kind: str) -> None:
        if left() < 10:
            parts["children"][key] = {"skipped": "deadline"}
            return
        r = _child(args, min(PART_TIMEOUT[kind], left()), rec / "logs" / f"{key}.log")
        parts["children"][key] = r
        print(f"[{_now() - start:6.1f} s] {key}: {r}", flush=True)

    b = build(out)
    print(f"[{_now() - start:6.1f} s] build: nvcc {b.get('nvcc_ptx', {}).get('rc')}, instrument "
          f"{b.get('instrument', {}).get('how')}, ptxas plain {b.get('ptxas_plain', {}).get('codes')}, "
          f"inst {b.get('ptxas_inst', {}).get('codes')}", flush=True)
    have_plain = (out / "build" / "gemm.plain.cubin").is_file()
    have_inst = (out / "build" / "gemm.inst.cubin").is_file()
    if have_plain:
        child("clean", ["clean", str(out), str(work)], "clean")
    make_bug_inputs(work)
    if have_plain:
        for n in sorted(BUGS):
            for mode in ("plain", "inst"):
                if mode == "inst" and not have_inst:
                    continue
                child(f"bug{n}_{mode}", ["bug", str(out), str(work), str(n), mode], "bug")
    for name in ("bf16", "fp8", "persistent", "tma"):
        child(f"triton_{name}", ["triton", str(out), str(work), name], "triton")
    parts["seconds"] = round(_now() - start, 1)
    _write_json(rec / "children.json", parts)
    summary(out)
    shutil.rmtree(work, ignore_errors=True)
    return 0


def _load(p: Path):
    try:
        return json.loads(p.read_text())
    except (OSError, ValueError):
        return None


def _failure(child: dict | None, log: Path) -> str:
    """For a part whose process failed: how, and the last line of its log."""
    if not child or (child.get("rc") == 0 and not child.get("timeout")):
        return ""
    if child.get("skipped"):
        return f" (skipped: {child['skipped']})"
    tail = [ln for ln in (log.read_text().splitlines() if log.is_file() else []) if ln.strip()][-1:]
    how = "timed out" if child.get("timeout") else f"exit {child.get('rc')}"
    return f" (process {how}: {tail[0][:300] if tail else 'no log'})"


def _timing_line(tm: dict) -> str:
    return (f"median of {tm['rounds']} interleaved rounds: plain {tm['median_ms']['plain']:.4f} ms "
            f"({tm['tflops']['plain']:.0f} TFLOP/s), instrumented {tm['median_ms']['inst']:.4f} ms "
            f"({tm['tflops']['inst']:.0f} TFLOP/s): overhead {tm['overhead_percent']:+.2f} %")


def summary(out: Path) -> dict:
    rec = out / "recorded"
    s: dict = {"build": _load(rec / "build.json"), "clean": _load(rec / "clean.json"),
               "children": (_load(rec / "children.json") or {}).get("children", {}), "bugs": {}, "triton": {}}
    lines = ["descgen sanitizer on the GPU (tests/device/sanitizer)", ""]
    bld = s["build"] or {}
    lines.append(f"build: nvcc {bld.get('nvcc_version')}; wgmma at PTX lines {bld.get('wgmma_lines')}")
    lines.append(f"  descgen scan gemm.ptx: rc {(bld.get('scan') or {}).get('rc')}")
    lines.append(f"  descgen instrument: {(bld.get('instrument') or {}).get('how') or 'MISSING'}")
    for k in ("plain", "inst"):
        p = bld.get(f"ptxas_{k}") or {}
        lines.append(f"  ptxas sm_90a {k}: rc {p.get('rc')}, {p.get('registers')} registers, C7510: {p.get('C7510')}, "
                     f"serialized: {p.get('serialized')}, C75xx codes: {p.get('codes')}")
    cl = s["clean"] or {}
    lines.append("")
    lines.append(f"clean ({cl.get('size')}^3 bf16, bug = 0) on {cl.get('device')}: {cl.get('status')}"
                 + _failure(s["children"].get("clean"), rec / "logs" / "clean.log"))
    if cl:
        lines.append(f"  runs: {cl.get('runs')}")
        lines.append(f"  plain vs reference (double precision, sampled): {cl.get('plain_vs_reference')}")
        lines.append(f"  plain deterministic: {cl.get('plain_deterministic')}; (a) instrumented bit-identical: "
                     f"{cl.get('bit_identical')}; records written: {(cl.get('inst_report') or {}).get('count')}")
        tm = cl.get("timing")
        if tm:
            lines.append(f"  (b) {KERNEL} (bug a kernel parameter: every field of A's descriptor a run-time value): "
                         + _timing_line(tm))
        fx = cl.get("fixed")
        if fx:
            lines.append(f"  {FIXED} (the same GEMM without the switch): runs {fx.get('runs')}; bit-identical to "
                         f"{KERNEL}'s: {fx.get('bit_identical_to_plain')}; instrumented bit-identical: "
                         f"{fx.get('bit_identical')}; records written: {fx.get('records')}; "
                         f"registers {fx.get('registers')}")
            if fx.get("timing"):
                lines.append(f"  (b) {FIXED}: " + _timing_line(fx["timing"]))
    lines.append("")
    lines.append(f"(c) planted bugs ({BUG_SIZE}^3, exact integer inputs), each in its own process:")
    for n in sorted(BUGS):
        row = {}
        for mode in ("plain", "inst"):
            r = _load(rec / "bugs" / f"bug{n}_{mode}.json")
            ch = s["children"].get(f"bug{n}_{mode}", {})
            if r is None:
                row[mode] = {"status": "not run" if not ch else ("timeout" if ch.get("timeout") else "no result")}
                continue
            if ch.get("timeout"):
                r["status"] = "timeout"
            row[mode] = r
        s["bugs"][n] = row
        expected = BUGS[n]["expected"]
        p, i = row.get("plain", {}), row.get("inst", {})
        lines.append(f"  bug {n}: {BUGS[n]['what']}")
        pv = p.get("status")
        if pv == "wrong":
            pv = (f"SILENTLY WRONG ({p.get('wrong_elements')} of {BUG_SIZE * BUG_SIZE} elements differ from bug 0's "
                  f"output ({p.get('nan_elements')} NaN), max abs err {p.get('max_abs_err')}; exact sample: "
                  f"{(p.get('sample') or {}).get('wrong')} of {SAMPLE} wrong)")
        elif pv == "cuda-error":
            pv = f"CUDA error (launch {p.get('launch')}, sync {p.get('sync')})"
        lines.append(f"    uninstrumented: {pv}")
        if i:
            recs = (i.get("report") or {}).get("records", [])
            first = recs[0].get("code") if recs else None
            iv = i.get("status")
            if iv == "cuda-error":
                iv = f"stopped (sync {i.get('sync')})"
            lines.append(f"    instrumented: {iv}; {(i.get('report') or {}).get('count', 0)} records"
                         + (f"; first: {i['records_text'][0]}" if i.get("records_text") else ""))
            verdict = ("as expected" if (expected is None and not recs) or (first and expected and (
                first == expected or (expected.endswith("*") and first.startswith(expected[:-1])))) else
                f"EXPECTED {expected}")
            lines.append(f"    expected: {expected or 'no finding (no rule covers it)'} -> {verdict}")
            row["verdict"] = verdict
    lines.append("")
    lines.append(f"Triton ({CLEAN_SIZE}^3), each kernel with and without descgen.triton.enable('instrument'):")
    for name in ("bf16", "fp8", "persistent", "tma"):
        r = _load(rec / "triton" / f"{name}.json")
        ch = s["children"].get(f"triton_{name}", {})
        if r is None:
            lines.append(f"  {name}: {'timeout' if ch.get('timeout') else 'not run'}")
            continue
        r["status"] = f"{r.get('status')}{_failure(ch, rec / 'logs' / f'triton_{name}.log')}"
        if ch.get("timeout"):
            r["status"] = f"timeout after {r.get('status')}"
        s["triton"][name] = r
        lines.append(f"  {name}: {r.get('status')}; plain vs reference {r.get('check_plain')}; descgen.triton "
                     f"{r.get('descgen_triton')}; sites checked {r.get('inst_sites')} "
                     f"in {r.get('inst_blocks')} blocks; bit-identical {r.get('bit_identical')}"
                     + (f"; error {r.get('inst_error')[:300]}" if r.get("inst_error") else ""))
        for phase, tm in (r.get("timing") or {}).items():
            if "median_ms" in tm:
                lines.append(f"    timing ({phase}): median plain {tm['median_ms']['plain']:.4f} ms "
                             f"({tm['tflops']['plain']:.0f} TFLOP/s), inst {tm['median_ms']['inst']:.4f} ms "
                             f"({tm['tflops']['inst']:.0f} TFLOP/s), overhead {tm['overhead_percent']:+.2f} %")
            else:
                lines.append(f"    timing ({phase}): {tm}")
        for k in ("ptxas_plain", "ptxas_inst"):
            if r.get(k):
                lines.append(f"    {k}: " + "; ".join(f"{t}: {v.get('codes')}" for t, v in r[k].items()))
    _write_json(rec / "summary.json", s)
    _write_text(rec / "summary.txt", "\n".join(lines) + "\n")
    print("\n".join(lines))
    return s


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    out = Path(rest[0]).resolve()
    _set_prefixes(out, Path(rest[1]).resolve() if cmd in ("clean", "bug", "triton") else None)
    if cmd == "all":
        return run_all(out)
    if cmd == "build":
        build(out)
        return 0
    if cmd == "clean":
        clean(out, Path(rest[1]))
        return 0
    if cmd == "bug":
        bug(out, Path(rest[1]), int(rest[2]), rest[3])
        return 0
    if cmd == "triton":
        triton_part(out, Path(rest[1]), rest[2])
        return 0
    if cmd == "summary":
        summary(out)
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
