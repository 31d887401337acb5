"""descgen.cute: the PTX a CuTe DSL kernel keeps, scanned (scan only: docs/sanitizer.md).

Stand-ins for a compiled function (an object with ``__ptx__``, as ``cute.compile`` returns) over
CuTe DSL PTX of the corpus; with nvidia-cutlass-dsl installed, a real ``cute.compile(...,
options="--keep-ptx")`` too (no GPU needed: ``CUTE_DSL_ARCH=sm_100a``).
"""

from __future__ import annotations

import os
import types
from pathlib import Path

import pytest

from descgen.core.errors import UsageError
from descgen.cute import kept_ptx, scan_compiled

PTX = Path(__file__).parent / "corpus" / "cutedsl" / "prim_1cta_mma_f16_128x128x64.ptx"


def test_a_compiled_function_s_ptx_is_scanned():
    compiled = types.SimpleNamespace(__ptx__=PTX.read_text(), function_name="kernel_gemm")
    result = scan_compiled(compiled)
    assert result.instructions and {i.opcode for i in result.instructions} >= {"tcgen05.mma"}
    assert all(f.line > 0 for f in result.findings)
    assert scan_compiled(PTX).instructions == result.instructions  # a kept file, by path
    assert scan_compiled(str(PTX)).instructions == result.instructions
    assert scan_compiled(PTX.read_text()).instructions == result.instructions  # the text


def test_a_function_that_kept_no_ptx_is_refused_with_the_way_to_keep_it():
    with pytest.raises(UsageError) as e:
        scan_compiled(types.SimpleNamespace(__ptx__=None, function_name="k"))
    assert e.value.code == "CUTE-PTX" and "--keep-ptx" in str(e.value) and "CUTE_DSL_KEEP=ptx" in str(e.value)
    with pytest.raises(UsageError):
        scan_compiled(42)


def test_kept_ptx_lists_the_dump_directory(tmp_path, monkeypatch):
    (tmp_path / "a.sm_100a.ptx").write_text(PTX.read_text())
    (tmp_path / "notes.txt").write_text("")
    monkeypatch.setenv("CUTE_DSL_DUMP_DIR", str(tmp_path))
    assert kept_ptx() == [tmp_path / "a.sm_100a.ptx"] == kept_ptx(tmp_path)


try:  # (the DSL reads a kernel's annotations in its module's globals: defined here, not in a test)
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_compact_tensor
except ImportError:
    cute = None
else:
    @cute.kernel
    def twice(g_a: cute.Tensor, g_b: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        g_b[tidx] = g_a[tidx] + g_a[tidx]

    @cute.jit
    def launch(m_a: cute.Tensor, m_b: cute.Tensor):
        twice(m_a, m_b).launch(grid=(1, 1, 1), block=(32, 1, 1))


@pytest.mark.skipif(cute is None, reason="nvidia-cutlass-dsl is not installed")
def test_cute_compile_keeps_ptx_that_scans(tmp_path, monkeypatch):
    monkeypatch.setenv("CUTE_DSL_ARCH", os.environ.get("CUTE_DSL_ARCH", "sm_100a"))
    a = make_fake_compact_tensor(cutlass.Float32, (32,))
    b = make_fake_compact_tensor(cutlass.Float32, (32,))
    compiled = cute.compile(launch, a, b, options=f"--keep-ptx --dump-dir={tmp_path}")
    assert ".target sm_100a" in compiled.__ptx__
    assert scan_compiled(compiled).findings == ()
    (kept,) = kept_ptx(tmp_path)
    assert kept.name.endswith(".sm_100a.ptx") and kept.read_text() == compiled.__ptx__
    with pytest.raises(UsageError):
        scan_compiled(cute.compile(launch, a, b))
