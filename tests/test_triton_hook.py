"""descgen.triton: the hook in Triton's compiler, on real Triton compiles without a GPU.

A small Triton matmul is compiled with ``triton.compile(ASTSource(...), target=GPUTarget("cuda",
capability, 32))`` for capability 90 (wgmma.mma_async, sm_90a) and 100 (tcgen05.mma, sm_100a):
Triton lowers to PTX and runs its own ptxas with no device. Each test has its own Triton cache.

- scan mode on the clean kernel reports nothing, and records what it did in the kernel's metadata;
- a planted descriptor error (a test hook installed before ``enable()`` sets a reserved bit of a
  descriptor constant in the PTX) is caught at compile time, as a warning or an error, with the
  test hook chained (called first, its change kept), and again when the kernel comes from the cache;
- instrument mode writes the checks and the site table, keys Triton's cache apart (no
  instrumented PTX under the plain kernel's key), and restores everything on ``disable()``;
- the run-time side (a launch's records read after the launch) with a stand-in report buffer.
"""

from __future__ import annotations

import re
import sys
import types
import warnings
from pathlib import Path

import pytest

from descgen.core.errors import UsageError
from descgen.sanitizer.report import DescriptorError, SanitizerError, Site, decode_records, empty_buffer

triton = pytest.importorskip("triton", reason="triton is not installed (pip install 'triton==3.6.*')")
knobs = getattr(triton, "knobs", None)
if knobs is None or not hasattr(knobs.runtime, "add_stages_inspection_hook"):
    pytest.skip(f"triton {triton.__version__} has no knobs.runtime.add_stages_inspection_hook (3.6+)",
                allow_module_level=True)

from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

import descgen.triton as dt  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent / "device" / "triton_hook"))
from kernels import matmul  # noqa: E402  (the kernel the GPU run uses too)


SIGNATURE = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", **dict.fromkeys(
    ("M", "N", "K", "sam", "sak", "sbk", "sbn", "scm", "scn"), "i32"), **dict.fromkeys(("BM", "BN", "BK"), "constexpr")}


def compile_matmul(capability: int, block: tuple[int, int, int] = (128, 128, 64)):
    src = ASTSource(matmul, SIGNATURE, constexprs=dict(zip(("BM", "BN", "BK"), block)))
    return triton.compile(src, target=GPUTarget("cuda", capability, 32), options={"num_warps": 4, "num_stages": 3})


@pytest.fixture(autouse=True)
def fresh_triton(tmp_path, monkeypatch):
    """Each test: its own Triton cache, no hook left behind."""
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delattr(knobs.cache, "dir", raising=False)
    saved = (knobs.runtime.add_stages_inspection_hook, knobs.compilation.listener)
    yield
    dt.disable()
    knobs.runtime.add_stages_inspection_hook, knobs.compilation.listener = saved


def _plant(ptx: str) -> str:
    """The PTX with one descriptor constant broken: the idesc of the first tcgen05.mma gets its
    reserved bit 23 (Table 42), or the constant OR-ed into the first wgmma.mma_async's a-desc its
    reserved bit 14 (§9.7.15.5.1.2.2)."""
    if "tcgen05.mma" in ptx:
        idesc = re.search(r"tcgen05\.mma\.[^;]*?,\s*%rd\d+,\s*(%r\d+),", ptx).group(1)
        return re.sub(rf"(mov\.b32\s+{idesc},\s*)(\d+);", lambda m: f"{m[1]}{int(m[2]) | 1 << 23};", ptx, count=1)
    a_desc = re.search(r"wgmma\.mma_async[^;]*\},\s*(%rd\d+),", ptx).group(1)
    return re.sub(rf"(or\.b64\s+{a_desc},\s*%rd\d+,\s*)(\d+);", lambda m: f"{m[1]}{int(m[2]) | 1 << 14};", ptx,
                  count=1)


class Planter:
    """A stages hook of someone else's, installed before descgen's: it wraps the PTX stage."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, *args):
        if not args:  # (Triton 3.7+: the cache key)
            return "-planter", "planter"
        self.calls += 1
        stages = args[1]
        make_ptx = stages["ptx"]
        stages["ptx"] = lambda src, metadata: _plant(make_ptx(src, metadata))


@pytest.mark.parametrize("capability, opcode", [(90, "wgmma.mma_async"), (100, "tcgen05.mma")])
def test_scan_of_a_clean_kernel_reports_nothing(capability, opcode):
    dt.enable("scan", action="error")
    assert dt.enabled() == "scan"
    with warnings.catch_warnings():
        warnings.simplefilter("error", dt.DescgenWarning)
        kernel = compile_matmul(capability)
    assert opcode in kernel.asm["ptx"] and "descgen_report" not in kernel.asm["ptx"]
    assert kernel.metadata.descgen == {"mode": "scan", "file": "matmul", "arch": None, "findings": []}


@pytest.mark.parametrize("capability, code", [(90, "WGMMA-SMEM-RESERVED-14"), (100, "IDESC-RESERVED-23")])
def test_a_planted_descriptor_error_is_caught_at_compile_time(capability, code):
    planter = Planter()
    knobs.runtime.add_stages_inspection_hook = planter
    dt.enable("scan")
    with pytest.warns(dt.DescgenWarning) as caught:
        kernel = compile_matmul(capability)
    assert planter.calls == 1 and _plant(kernel.asm["ptx"]) == kernel.asm["ptx"]  # the planter's PTX was kept
    (warning,) = [w for w in caught if issubclass(w.category, dt.DescgenWarning)]
    text = str(warning.message)
    line = kernel.metadata.descgen["findings"][0]["line"]
    assert text.startswith("Triton kernel matmul: ") and f"matmul:{line}: error: {code} " in text
    assert re.search(r"\b(wgmma\.mma_async|tcgen05\.mma)\.", kernel.asm["ptx"].split("\n")[line - 1])  # its line
    if capability == 100:  # the word is known whole: shown, its bit 23 set
        word = re.search(r"idesc %r\d+ = (0x[0-9a-f]{8}): ", text)
        assert word and int(word[1], 16) >> 23 & 1
    # From the cache: reported again (Triton runs no stage for a cached kernel).
    with pytest.warns(dt.DescgenWarning, match="found in Triton's cache"):
        compile_matmul(capability)
    # action="error": the compile raises, naming code, line and operand; nothing enters the cache.
    dt.enable("scan", action="error")
    with pytest.raises(DescriptorError) as e:
        compile_matmul(capability, block=(128, 64, 64))
    assert e.value.code == code and re.search(rf"matmul:\d+: error: {code} [ab]?-?desc|idesc", str(e.value))
    assert isinstance(e.value, RuntimeError)
    with pytest.raises(DescriptorError):
        compile_matmul(capability, block=(128, 64, 64))


def test_instrument_mode_keeps_triton_s_cache_apart():
    plain = compile_matmul(90)
    assert "descgen_report" not in plain.asm["ptx"]
    before = knobs.cache.dir
    dt.enable("instrument")
    if not dt._HOOK.keyed:  # Triton 3.6: the hook is not in the cache key: the cache moves
        assert knobs.cache.dir.startswith(before) and "descgen-instrument-trap-" in knobs.cache.dir
    checked = compile_matmul(90)
    assert ".visible .global .align 8 .u64 descgen_report;" in checked.asm["ptx"] and "trap;" in checked.asm["ptx"]
    record = checked.metadata.descgen
    assert record["mode"] == "instrument" and record["on_error"] == "trap" and record["findings"] == []
    sites = [Site.from_json(s) for s in record["sites"]]
    assert sites and all(s.opcode == "wgmma.mma_async" and s.file == "matmul" for s in sites)
    assert any("SMEM-OUTSIDE-CTA" in s.codes for s in sites)
    assert checked.hash == plain.hash or dt._HOOK.keyed  # (3.6: same key, another directory)
    dt.disable()
    assert knobs.cache.dir == before and dt.enabled() is None
    assert "descgen_report" not in compile_matmul(90).asm["ptx"]  # the plain kernel, from the plain cache
    dt.enable("instrument", on_error="report")
    assert "trap;" not in compile_matmul(90).asm["ptx"]  # on_error is part of the key


def test_the_hook_answers_triton_3_7_s_cache_key_call():
    previous = Planter()
    knobs.runtime.add_stages_inspection_hook = previous
    dt.enable("instrument")
    key, digest = knobs.runtime.add_stages_inspection_hook()
    assert key.startswith("-planter-descgen-instrument-trap-") and digest
    dt.enable("scan")
    assert knobs.runtime.add_stages_inspection_hook()[0] == "-planter"  # scan changes no PTX: no key of its own
    dt.disable()
    assert knobs.runtime.add_stages_inspection_hook is previous


def test_a_launch_s_records_raise_descriptor_error():
    """The run-time side without a GPU: a stand-in for the report buffer holds one record; the
    launch exit hook reads it after the launch and raises."""
    site = Site("matmul", 1422, "wgmma.mma_async ...", "wgmma.mma_async", (("a_desc", "%rd200"),),
                ("WGMMA-SMEM-RESERVED-14",))
    buf = empty_buffer(4)
    buf[0:4] = (1).to_bytes(4, "little")
    buf[64:80] = bytes(12) + (1).to_bytes(4, "little")  # site 0, code 0, operand 0 -> a_desc below
    buf[72:76] = (1).to_bytes(4, "little")
    buf[80:88] = (0x4000004000004040).to_bytes(8, "little")

    class StandIn:
        def __init__(self) -> None:
            self.data, self.waited = bytes(buf), []

        def synchronize(self, stream=None):
            self.waited.append(stream)
            return "CUDA_ERROR_ILLEGAL_INSTRUCTION (715)"

        def read(self, sites, *, file="<ptx>"):
            return decode_records(self.data, sites, file=file)

        def reset(self):
            self.data = bytes(empty_buffer(4))

    dt.enable("instrument")
    stand_in = StandIn()
    dt._HOOK.kernels[0x1234] = dt._Kernel("matmul", [site], stand_in)
    knobs.runtime.launch_exit_hook(types.SimpleNamespace(data={"name": "other", "function": 0x99, "stream": 7}))
    assert stand_in.waited == []  # another kernel: not waited for
    with pytest.raises(DescriptorError) as e:
        knobs.runtime.launch_exit_hook(types.SimpleNamespace(data={"name": "matmul", "function": 0x1234, "stream": 7}))
    assert stand_in.waited == [7]
    assert str(e.value).startswith("Triton kernel matmul stopped (CUDA_ERROR_ILLEGAL_INSTRUCTION (715)): matmul:1422: "
                                   "WGMMA-SMEM-RESERVED-14 a-desc %rd200 = 0x4000004000004040")
    # Read once: the buffer was reset, the next launch is clean.
    knobs.runtime.launch_exit_hook(types.SimpleNamespace(data={"name": "matmul", "function": 0x1234, "stream": 7}))
    dt.disable()
    assert dt.DescgenWarning and all(h != dt._Hook.launched for h in knobs.runtime.launch_exit_hook.calls)


def _one_record_buffer(complete: bool = True) -> bytearray:
    """A report buffer holding one record: site 0, code 0, a_desc 0x4000004000004040."""
    buf = empty_buffer(4)
    buf[0:4] = (1).to_bytes(4, "little")
    buf[64:80] = bytes(12) + (1 if complete else 0).to_bytes(4, "little")
    buf[72:76] = (1).to_bytes(4, "little")
    buf[80:88] = (0x4000004000004040).to_bytes(8, "little")
    return buf


def test_without_waiting_a_launch_raises_what_an_earlier_one_wrote(capsys):
    """enable(wait=False): no launch waits; before and after each launch the buffers are read as
    they are, each complete record reported once; check() waits and reads; at exit what is left is
    printed."""
    site = Site("matmul", 1422, "wgmma.mma_async ...", "wgmma.mma_async", (("a_desc", "%rd200"),),
                ("WGMMA-SMEM-RESERVED-14",))

    class StandIn:
        def __init__(self) -> None:
            self.data, self.waited = bytes(empty_buffer(4)), []

        def synchronize(self, stream=None):
            self.waited.append(stream)
            return None

        def read(self, sites, *, file="<ptx>"):
            return decode_records(self.data, sites, file=file)

    dt.enable("instrument", wait=False)
    stand_in = StandIn()
    dt._HOOK.kernels[0x1234] = dt._Kernel("matmul", [site], stand_in)
    launch = types.SimpleNamespace(data={"name": "matmul", "function": 0x1234, "stream": 7})
    knobs.runtime.launch_enter_hook(launch)
    knobs.runtime.launch_exit_hook(launch)  # (the kernel runs on: nothing written yet)
    stand_in.data = bytes(_one_record_buffer(complete=False))
    knobs.runtime.launch_enter_hook(launch)  # (a record being written: not read yet)
    stand_in.data = bytes(_one_record_buffer())
    with pytest.raises(DescriptorError) as e:
        knobs.runtime.launch_enter_hook(types.SimpleNamespace(data={"name": "other", "function": 0x99}))
    assert str(e.value).startswith("Triton kernel matmul (an earlier launch: launches do not wait, enable(wait=False)):"
                                   " matmul:1422: WGMMA-SMEM-RESERVED-14 a-desc %rd200 = 0x4000004000004040")
    knobs.runtime.launch_exit_hook(launch)  # (reported once)
    dt.check()
    assert stand_in.waited == [None]  # (only check() waited: the whole context)
    dt._HOOK.kernels[0x1234].seen = 0
    other = StandIn()
    other.data = bytes(_one_record_buffer())
    dt._HOOK.kernels[0x5678] = dt._Kernel("other", [site], other)
    dt._HOOK.at_exit()  # (every kernel's records: a trap raises for each, each printed)
    err = capsys.readouterr().err
    assert err.count("WGMMA-SMEM-RESERVED-14") == 2 and "Triton kernel other" in err
    with pytest.raises(UsageError, match="wait"):
        dt.enable("instrument", wait="no")  # type: ignore[arg-type]


def test_bad_options_and_an_old_triton_are_refused(monkeypatch):
    with pytest.raises(UsageError, match="mode"):
        dt.enable("sanitize")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="action"):
        dt.enable("scan", action="ignore")  # type: ignore[arg-type]
    old = types.ModuleType("triton")
    old.__version__ = "3.2.0"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "triton", old)
    with pytest.raises(SanitizerError) as e:
        dt.enable("scan")
    assert e.value.code == "SANITIZER-TRITON" and "TRITON_KERNEL_OVERRIDE" in str(e.value)


def test_arch_of_capabilities():
    assert [dt.arch_of(c) for c in (90, 100, 103, 80, None)] == ["sm_90a", "sm_100a", "sm_103a", None, None]


PROGRAM = """\
import json, os, sys
sys.path.insert(0, {tests!r})
import triton                      # (descgen sanitize's sitecustomize enables the hook here)
import descgen.triton as dt
import test_triton_hook as t
assert dt.enabled() == {mode!r}, dt.enabled()
if {plant!r}:                      # someone else's hook first, then descgen's with the command's settings
    triton.knobs.runtime.add_stages_inspection_hook = t.Planter()
    dt.enable(**json.loads(os.environ["DESCGEN_SANITIZE"]))
t.compile_matmul(100)
sys.exit({status})
"""


@pytest.mark.parametrize("plant, status, expected", [(True, 0, 1), (False, 0, 0), (False, 3, 3)])
def test_descgen_sanitize_runs_a_program_with_the_hook_on(tmp_path, plant, status, expected):
    from click.testing import CliRunner

    from descgen.cli.sanitize import sanitize

    program = tmp_path / "program.py"
    program.write_text(PROGRAM.format(tests=str(Path(__file__).parent), mode="scan", plant=plant, status=status))
    result = CliRunner().invoke(sanitize, ["--mode", "scan", "--", sys.executable, str(program)])
    assert result.exit_code == expected, result.output
    if plant:
        assert re.search(r"^matmul:\d+: error: IDESC-RESERVED-23 idesc %r\d+ = 0x", result.output, re.M)
        assert "descgen sanitize: 4 compile-time and 0 run-time findings in 1 kernel" in result.output
    else:
        assert f"no descriptor findings; the program exited with status {status}" in result.output
