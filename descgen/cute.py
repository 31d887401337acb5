"""descgen and the CuTe DSL (``nvidia-cutlass-dsl``, ``import cutlass.cute``): the PTX it keeps,
scanned. Scan only: a changed (instrumented) PTX cannot be loaded back (docs/sanitizer.md).

    compiled = cute.compile(kernel_fn, *args, options="--keep-ptx")    # or CUTE_DSL_KEEP=ptx
    result = descgen.cute.scan_compiled(compiled)                       # a descgen.ScanResult
    for f in result.errors: print(f.line, f.message())

What the CuTe DSL offers, read in nvidia-cutlass-dsl 4.8.1 (``nvidia-cutlass-dsl-libs-core``,
package ``cutlass``):

- Possible: the PTX. ``cute.compile(..., options="--keep-ptx")`` (the ``KeepPTX`` option,
  ``base_dsl/compiler.py``: MLIR option ``dump-ptx-path``) or ``CUTE_DSL_KEEP=ptx``
  (``base_dsl/env_manager.py``, ``_KEEP_ALL_TOKENS``; the older ``CUTE_DSL_KEEP_PTX=1`` is
  deprecated there) writes ``<CUTE_DSL_DUMP_DIR or cwd>/<function>.<arch>.ptx``
  (``CompileOptions._set_artifact_dump_paths``), and the compiled function's ``__ptx__``
  property (``base_dsl/jit_executor.py``, ``JitCompiledFunction.__ptx__``, reading
  ``JitFunctionArtifacts.PTX``) returns its text; without the option it is None. Either is what
  :func:`scan_compiled` reads (``descgen scan DIR`` reads a dump directory).
- Not possible: loading a changed PTX back, hence no ``instrument`` mode and no report buffer.
  Compilation is one MLIR pass pipeline run in-process (``base_dsl/compiler.py``,
  ``Compiler.compile``: ``PassManager.parse(pipeline).run``) whose PTX-to-cubin step is inside
  the pipeline; the PTX and cubin options are dumps (``KeepPTX``, ``KeepCUBIN``:
  ``BooleanBasedFileDumpOption``), ``--ptxas-options`` only passes flags, and no option or
  ``CUTE_DSL_*`` variable (``EnvironmentVarManager``) reads a PTX or cubin in. The cubin is
  embedded in the JIT engine's host code and loaded by native functions the lowering emits
  (``cutlass_dsl/cuda_jit_executor.py``: ``_get_cuda_init_and_load`` / ``_load_cuda_library``
  call the engine's ``cuda_init`` and ``cuda_load_to_device``; ``_deserializer`` does the same for
  binaries loaded AOT), so no Python function (``base_dsl/runtime/cuda.py``'s
  ``load_library_data`` is not on that path) can be replaced to swap it. Assembling the
  instrumented PTX yourself and launching it outside the DSL would mean rebuilding the kernel's
  arguments (TMA descriptors and all) as the DSL's host code does.

Only the standard library is imported here; nothing of the CuTe DSL is imported at all (a
compiled function is read through ``__ptx__``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .core.errors import DescgenError
from .model.catalog import usage_error

if TYPE_CHECKING:
    from .core.types import Arch
    from .ptx.results import ScanResult

__all__ = ["scan_compiled", "kept_ptx"]


def scan_compiled(compiled: Any, arch: Arch | None = None, *, filename: str | None = None) -> ScanResult:
    """Scan the PTX of a CuTe DSL kernel (:func:`descgen.ptx.scan.scan_ptx`).

    Args:
        compiled: what ``cute.compile`` returned (its ``__ptx__``: compile with
            ``options="--keep-ptx"`` or ``CUTE_DSL_KEEP=ptx``), or the path of a kept
            ``<function>.<arch>.ptx``, or PTX text.
        arch: the target, when the PTX's ``.target`` line does not say (CuTe DSL writes one).
        filename: the name findings carry (default: the function's name, or the file's path).

    Returns:
        The :class:`descgen.ScanResult` (``.findings``, ``.errors``, ``.instructions``...); lines
        are the PTX's.

    Raises:
        UsageError: (``CUTE-PTX``) the compiled function kept no PTX, or ``compiled`` is neither
            a compiled function, a path nor PTX text.
        OSError: the path cannot be read.
    """
    from .ptx.scan import scan_ptx

    text, name = _ptx_of(compiled)
    return scan_ptx(text, filename=filename or name, arch=arch)


def kept_ptx(directory: str | os.PathLike[str] | None = None) -> list[Path]:
    """The PTX files ``CUTE_DSL_KEEP=ptx`` wrote into ``directory`` (default: ``CUTE_DSL_DUMP_DIR``,
    else the working directory, as the CuTe DSL chooses), newest first."""
    where = Path(directory if directory is not None else os.environ.get("CUTE_DSL_DUMP_DIR") or os.getcwd())
    return sorted(where.glob("*.ptx"), key=lambda p: p.stat().st_mtime, reverse=True)


def _ptx_of(compiled: Any) -> tuple[str, str]:
    if isinstance(compiled, os.PathLike) or isinstance(compiled, str) and compiled.endswith(".ptx") \
            and "\n" not in compiled:
        path = Path(compiled)
        return path.read_text(encoding="utf-8"), str(path)
    if isinstance(compiled, str):
        return compiled, "<ptx>"
    if not hasattr(compiled, "__ptx__"):
        raise _error(type(compiled).__name__, "a CuTe DSL compiled function (cute.compile), a .ptx path or PTX text")
    ptx = compiled.__ptx__
    name = str(getattr(compiled, "function_name", None) or "<cute>")
    if ptx is None:
        raise _error(name, "a function compiled with options=\"--keep-ptx\" or CUTE_DSL_KEEP=ptx",
                     "the CuTe DSL keeps a kernel's PTX only when asked: cute.compile(..., options=\"--keep-ptx\") "
                     "or CUTE_DSL_KEEP=ptx")
    return (ptx.decode() if isinstance(ptx, bytes) else str(ptx)), name


def _error(value: str, allowed: str, rule: str = "descgen.cute scans the PTX a CuTe DSL kernel kept") -> DescgenError:
    return usage_error("CUTE-PTX", "compiled", value, allowed, rule)
