"""descgen inside Triton: every kernel's PTX scanned, or instrumented, as Triton compiles it
(docs/sanitizer.md, "Ways in").

    import descgen.triton
    descgen.triton.enable("scan")                  # findings as DescgenWarning (action="error": raise)
    descgen.triton.enable("instrument")            # run-time checks; a finding raises DescriptorError

:func:`enable` installs a hook through ``triton.knobs.runtime.add_stages_inspection_hook`` (Triton
3.6 and later) that wraps the ``"ptx"`` stage of Triton's NVIDIA back end:

- ``mode="scan"``: the PTX Triton made is scanned (:func:`descgen.ptx.scan.scan_ptx`; the target is
  the PTX's ``.target``, which Triton writes from the compute capability: 90 -> ``sm_90a``, 100 ->
  ``sm_100a``, 103 -> ``sm_103a``, :data:`ARCHS`; for PTX without one, the capability's
  tcgen05 target is passed as ``arch``); findings
  of severity error and warning become one :class:`DescgenWarning` per kernel
  (``action="warn"``) or a :class:`DescriptorError` (``action="error"``, raised from the compile,
  so that the kernel never runs nor enters the cache), each naming the code, the PTX line and the
  word. The PTX is not changed.
- ``mode="instrument"``: the PTX is instrumented
  (:func:`descgen.sanitizer.instrument.instrument_ptx`); the scan's own findings are reported as
  above. The site table travels in the kernel's metadata (``metadata["descgen"]``, in Triton's
  cache beside the kernel). When Triton loads the module (``knobs.runtime.kernel_load_end_hook``,
  which is given the ``CUmodule``: ``CompiledKernel.module``), a :class:`ReportBuffer` is
  allocated and attached to its ``descgen_report``; after each launch of the kernel
  (``knobs.runtime.launch_exit_hook``) the launch's stream is synchronised and the buffer read:
  records raise :class:`DescriptorError` (with ``on_error="trap"`` always: the trap has killed the
  CUDA context; with ``on_error="report"`` as ``action`` says, unless the kernel failed anyway: an
  H200 refuses a wgmma whose descriptor has reserved bit 14 set, CUDA_ERROR_ILLEGAL_INSTRUCTION).
  Each launch of an instrumented kernel thus waits for the kernel: a sanitizer's cost (+27% to
  +48% in all on Triton's 4096^3 matmuls on an H200: the GPU idles while Python launches the next).
  With ``wait=False`` no launch waits: before and after every launch (``launch_enter_hook``,
  ``launch_exit_hook``) the buffers are read as they are, and the complete records not reported
  yet are raised or warned as above, naming the kernel that wrote them; :func:`check` waits and
  reads, and at the interpreter's exit what is left is logged and printed. A trapped kernel's
  records reach host memory before its context reports the trap, so the next launch raises the
  finding rather than CUDA's error; a CUDA call outside Triton (``torch.cuda.synchronize()``) may
  meet the error first.

Hooks already installed are kept: the stages hook in place when :func:`enable` runs is called
first (its changes to ``stages`` stay, and the PTX stage it leaves is the one wrapped); the launch
and load hooks are added to Triton's hook chains; a compilation listener in place is called first.

Triton's cache (facts of Triton 3.6's ``compiler/compiler.py`` and ``runtime/jit.py``): 3.6 calls
the hook as ``hook(backend, stages, options, language, capability)`` and its cache key is the
source, back end, options and a fixed list of environment variables: the hook is not part of it.
So a compile under the hook that finds its kernel in the cache runs no stage at all, and a PTX
changed by the hook would be cached under the plain kernel's key. Therefore:

- ``mode="instrument"`` on a Triton that does not key the hook (before 3.7) moves Triton's cache to
  a directory of its own for as long as it is on (``knobs.cache.dir`` =
  ``<cache dir>/descgen-instrument-<on_error>-<digest of the instrumenter>``, and Triton's
  ``FileCacheManager`` in place of a custom ``TRITON_CACHE_MANAGER``), restored by :func:`disable`.
  Triton 3.7 and later also call the hook with no arguments for its cache key (``(key, hash)``:
  the key is added to the cache key, the hash to the in-memory kernel cache's); the hook answers
  with the mode, ``on_error`` and the instrumenter's digest, so the cache needs no moving there.
- ``mode="scan"`` changes no PTX and keeps the cache; a kernel found in the cache is reported
  through ``knobs.compilation.listener`` (called on cache hits too): the findings stored in its
  metadata, or, for a kernel cached without descgen, its cached PTX scanned then.
- Kernels compiled in this process before :func:`enable` stay in Triton's in-memory cache as they
  were (Triton 3.6); call :func:`enable` before the first launch (``descgen sanitize`` does).

Older Triton (no ``add_stages_inspection_hook``): :func:`enable` raises :class:`SanitizerError`.
The way there is Triton's override directory: run once with ``TRITON_KERNEL_DUMP=1`` (PTX under
``TRITON_DUMP_DIR``), ``descgen scan`` the ``.ptx`` files or ``descgen instrument`` them into
``TRITON_OVERRIDE_DIR`` (same hash folder and file name), rerun with ``TRITON_KERNEL_OVERRIDE=1``
and attach a :class:`ReportBuffer` to ``CompiledKernel.module`` yourself.

Only the standard library is imported here; triton is imported by :func:`enable`.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib
import itertools
import json
import os
import re
import sys
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal, Mapping, Sequence

from .core.errors import Finding
from .model.catalog import usage_error
from .core.version import __version__
from .sanitizer.report import (DescriptorError, ReportBuffer, RuntimeFindings, SanitizerError, Site, grouped,
                               load_sites)

__all__ = ["enable", "disable", "enabled", "check", "arch_of", "ARCHS", "DescgenWarning", "DescriptorError",
           "CompileFinding", "SanitizerError"]

#: The target a compute capability's PTX is scanned for (Triton writes ``.target sm_XXa`` for these).
ARCHS = {90: "sm_90a", 100: "sm_100a", 101: "sm_101a", 103: "sm_103a", 110: "sm_110a"}
_STOPS = ("error", "warning")


class DescgenWarning(UserWarning):
    """A descriptor finding in a Triton kernel (``descgen.triton.enable(action="warn")``)."""


def arch_of(capability: int | None) -> str | None:
    """The target (``sm_90a``) for a CUDA compute capability as Triton gives it (``90``), or None
    for a capability without wgmma / tcgen05 (the PTX's ``.target`` decides)."""
    return ARCHS.get(capability) if capability is not None else None


@dataclass(frozen=True, slots=True)
class CompileFinding:
    """A finding of the static scan in a Triton kernel's PTX.

    Attributes:
        file: the kernel's name. line: the 1-based line in the PTX Triton made (``kernel.asm["ptx"]``).
        finding: the :class:`descgen.Finding`. text: the scan finding's message (code, operand,
            word, field, rule, source: :meth:`descgen.ptx.results.ScanFinding.message`).
    """

    file: str
    line: int
    finding: Finding
    text: str

    def message(self) -> str:
        """``KERNEL:LINE: severity: CODE b-desc %rd7 = 0x...: field = value: rule [source]``."""
        return f"{self.file}:{self.line}: {self.finding.severity}: {self.text}"

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "text": self.text, **self.finding.as_dict(),
                "message": self.message()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CompileFinding:
        f = Finding(str(d["code"]), str(d["severity"]), str(d["field"]), d["value"], str(d["allowed"]),
                    str(d["rule"]), str(d["source"]))
        return cls(str(d["file"]), int(d["line"]), f, str(d["text"]))


# --------------------------------------------------------------------------------------------
# The state of the hook.


@dataclass
class _Kernel:
    name: str
    sites: list[Site]
    buffer: ReportBuffer
    seen: int = 0  # (wait=False: the records reported already; the buffer is not reset)


class _Hook:
    """What :func:`enable` installed, and what it replaced (restored by :func:`disable`)."""

    def __init__(self, triton: Any, mode: str, on_error: str, action: str, capacity: int, log: str | None,
                 wait: bool = True) -> None:
        self.triton = triton
        self.mode, self.on_error, self.action, self.capacity, self.log = mode, on_error, action, capacity, log
        self.wait = wait
        self.knobs = triton.knobs
        self.keyed = _version(getattr(triton, "__version__", "0")) >= (3, 7)
        self.digest = _digest() if mode == "instrument" else ""
        self.previous_stages: Callable[..., Any] | None = None
        self.previous_listener: Callable[..., Any] | None = None
        self.saved_cache: dict[str, Any] | None = None
        self.kernels: dict[int, _Kernel] = {}  # by CUfunction handle
        self.lock = threading.Lock()

    # -- the stages hook ---------------------------------------------------------------------

    def key(self) -> str:
        """The part of Triton's cache key that is descgen's (3.7+)."""
        return f"-descgen-{self.mode}-{self.on_error}-{self.digest}" if self.mode == "instrument" else ""

    def stages_hook(self, *args: Any, **kwargs: Any) -> Any:
        """``hook(backend, stages, options, language, capability)`` (Triton 3.6+), or ``hook()``
        for the cache key (3.7+: returns ``(key, hash)``)."""
        if not args and not kwargs:
            key, digest = "", ""
            if self.previous_stages is not None:
                got = self.previous_stages()
                if isinstance(got, tuple) and len(got) == 2:
                    key, digest = str(got[0]), str(got[1])
            key += self.key()
            return key, hashlib.sha256(f"{digest}{self.key()}".encode()).hexdigest()[:16]
        if self.previous_stages is not None:
            self.previous_stages(*args, **kwargs)
        stages, capability = _stages_args(args, kwargs)
        if isinstance(stages, dict) and "ptx" in stages:
            make_ptx = stages["ptx"]

            def ptx_stage(src: Any, metadata: dict[str, Any]) -> Any:
                return self.process(make_ptx(src, metadata), metadata, capability)

            stages["ptx"] = ptx_stage
        return None

    def process(self, ptx: str, metadata: dict[str, Any], capability: int | None) -> str:
        """The PTX stage's output scanned or instrumented; what was found reported and recorded in
        ``metadata["descgen"]``."""
        name = str(metadata.get("name") or "<kernel>")
        arch = _scan_arch(ptx, capability)
        record: dict[str, Any] = {"mode": self.mode, "file": name, "arch": arch}
        if self.mode == "scan":
            from .ptx.scan import scan_ptx

            result = scan_ptx(ptx, filename=name, arch=arch)  # type: ignore[arg-type]
            found = [CompileFinding(name, f.line, f.finding, f.message()) for f in result.findings
                     if f.severity in _STOPS]
            out = ptx
        else:
            from .sanitizer.instrument import instrument_ptx

            done = instrument_ptx(ptx, arch=arch, on_error=self.on_error, file=name)  # type: ignore[arg-type]
            found = [CompileFinding(name, f.line, f.finding, f.message()) for f in done.findings
                     if f.severity in _STOPS]
            record["on_error"] = self.on_error
            record["sites"] = [Site.of(s, name).to_json() for s in done.sites]
            out = done.ptx
        record["findings"] = [f.as_dict() for f in found]
        metadata["descgen"] = record
        self.report(found, name, "compiled")
        return out

    def write_log(self, kind: str, found: Sequence[Any], name: str, **extra: Any) -> None:
        """One JSON line per finding appended to ``log`` (``descgen sanitize`` reads it), and for a
        launch (``kind="run"``) one ``run-summary`` line with the records lost."""
        if self.log is None:
            return
        head = {"kernel": name, "pid": os.getpid(), **extra}
        lines = [json.dumps({"kind": kind, **head, **f.as_dict()}, default=str) for f in found]
        if kind == "run":
            lines.append(json.dumps({"kind": "run-summary", **head, "written": getattr(found, "written", len(found)),
                                     "lost": getattr(found, "lost", 0)}, default=str))
        with open(self.log, "a", encoding="utf-8") as fh:
            fh.write("".join(line + "\n" for line in lines))

    def report(self, found: Sequence[CompileFinding], name: str, how: str) -> None:
        if not found:
            return
        self.write_log("compile", found, name, how=how)
        if self.action == "error":
            raise DescriptorError(found, f"Triton kernel {name} ({how} with descgen.triton)")
        lines = "\n".join("  " + f.message() for f in found)
        warnings.warn(DescgenWarning(f"Triton kernel {name}: {len(found)} descriptor finding"
                                     f"{'' if len(found) == 1 else 's'} ({how}):\n{lines}"), stacklevel=3)

    # -- cache hits ---------------------------------------------------------------------------

    def listener(self, **kw: Any) -> None:
        """``knobs.compilation.listener``: a kernel found in Triton's cache is reported too."""
        if self.previous_listener is not None:
            self.previous_listener(**kw)
        if not kw.get("cache_hit"):
            return
        metadata, group = kw.get("metadata") or {}, kw.get("metadata_group") or {}
        name = str(metadata.get("name") or "<kernel>")
        record = metadata.get("descgen")
        if isinstance(record, Mapping):
            found = [CompileFinding.from_dict(d) for d in record.get("findings", ())]
        elif self.mode == "scan":
            ptx = next((p for k, p in group.items() if k.endswith(".ptx")), None)
            if ptx is None:  # (TRITON_STORE_BINARY_ONLY: no PTX kept)
                return
            from .ptx.scan import scan_ptx

            target = metadata.get("target")
            capability = getattr(target, "arch", None) if not isinstance(target, Mapping) else target.get("arch")
            text = Path(ptx).read_text()
            result = scan_ptx(text, filename=name,
                              arch=_scan_arch(text, capability if isinstance(capability, int) else None))  # type: ignore[arg-type]
            found = [CompileFinding(name, f.line, f.finding, f.message()) for f in result.findings
                     if f.severity in _STOPS]
        else:
            return
        self.report(found, name, "found in Triton's cache")

    # -- run time -----------------------------------------------------------------------------

    def loaded(self, module: Any, function: Any, name: str, metadata_group: Mapping[str, str], hash: str) -> None:
        """``knobs.runtime.kernel_load_end_hook``: an instrumented module gets its report buffer."""
        if module is None or function is None:
            return
        path = next((p for k, p in metadata_group.items() if k.endswith(".json")), None)
        if path is None:
            return
        record = json.loads(Path(path).read_text()).get("descgen")
        if not isinstance(record, Mapping) or record.get("mode") != "instrument" or not record.get("sites"):
            return
        sites = load_sites(record["sites"], str(record.get("file") or name))
        if not any(s.codes for s in sites):
            return
        buffer = ReportBuffer(self.capacity)
        buffer.attach(int(module))
        with self.lock:
            self.kernels[int(function)] = _Kernel(name, sites, buffer)

    def launched(self, launch_metadata: Any) -> None:
        """``knobs.runtime.launch_exit_hook``: after a launch of an instrumented kernel, wait for it
        and read its report buffer (``wait=False``: read every buffer as it is, :meth:`poll`)."""
        data = getattr(launch_metadata, "data", launch_metadata)
        if not isinstance(data, Mapping):
            return
        kernel = self.kernels.get(data.get("function") or 0)
        if kernel is None:
            return
        if not self.wait:
            self.poll()
            return
        failed = kernel.buffer.synchronize(data.get("stream") or None)
        found = kernel.buffer.read(kernel.sites, file=kernel.name)
        kernel.buffer.reset()
        self.found(kernel, found, failed, "")

    def entering(self, launch_metadata: Any) -> None:
        """``knobs.runtime.launch_enter_hook`` (``wait=False``): before any launch, what earlier
        launches wrote (a trapped kernel's records are in host memory before its context reports
        the trap: the finding is raised here, not the next launch's CUDA error)."""
        self.poll()

    def poll(self, failed: str | None = None) -> None:
        """Every instrumented kernel's records not reported yet, read as they are (no waiting:
        only the complete records of the kernels that wrote them)."""
        for kernel in list(self.kernels.values()):
            found = kernel.buffer.read(kernel.sites, file=kernel.name)
            new = list(itertools.takewhile(lambda f: f.complete, found[kernel.seen:]))
            if not new:
                continue
            kernel.seen += len(new)
            self.found(kernel, RuntimeFindings(new, found.written, found.capacity), failed,
                       " (an earlier launch: launches do not wait, enable(wait=False))")

    def found(self, kernel: _Kernel, found: RuntimeFindings, failed: str | None, when: str) -> None:
        """A launch's records: logged, then raised (a trap, or ``action="error"``) or warned."""
        if not found and not found.lost:
            return
        self.write_log("run", found, kernel.name, failed=failed)
        context = f"Triton kernel {kernel.name}{when}" + (f" stopped ({failed})" if failed else "")
        if failed or self.on_error == "trap" or self.action == "error":
            raise DescriptorError(found, context, lost=found.lost)
        lines = "\n".join("  " + line for line in grouped(found))
        warnings.warn(DescgenWarning(f"{context}: {found.summary()}:\n{lines}"), stacklevel=3)

    def at_exit(self) -> None:
        """At the interpreter's exit (``wait=False``): what no launch reported yet, logged and
        printed (the context may be dead: the buffers are host memory)."""
        while True:  # (each raise reports one kernel's records: the next poll reads the others)
            try:
                self.poll()
                return
            except DescriptorError as e:
                print(f"descgen.triton: {e}", file=sys.stderr)

    # -- installing ---------------------------------------------------------------------------

    def install(self) -> None:
        runtime, compilation = self.knobs.runtime, self.knobs.compilation
        self.previous_stages = runtime.add_stages_inspection_hook
        runtime.add_stages_inspection_hook = self.stages_hook
        self.previous_listener = compilation.listener
        compilation.listener = self.listener
        if self.mode == "instrument":
            _add(runtime, "kernel_load_end_hook", self.loaded)
            _add(runtime, "launch_exit_hook", self.launched)
            if not self.wait:
                _add(runtime, "launch_enter_hook", self.entering)
                atexit.register(self.at_exit)
            if not self.keyed:
                self.move_cache()

    def uninstall(self) -> None:
        runtime, compilation = self.knobs.runtime, self.knobs.compilation
        if runtime.add_stages_inspection_hook == self.stages_hook:
            runtime.add_stages_inspection_hook = self.previous_stages
        if compilation.listener == self.listener:
            compilation.listener = self.previous_listener
        _remove(runtime, "kernel_load_end_hook", self.loaded)
        _remove(runtime, "launch_exit_hook", self.launched)
        _remove(runtime, "launch_enter_hook", self.entering)
        atexit.unregister(self.at_exit)
        if self.saved_cache is not None:
            cache = self.knobs.cache
            for name in ("dir", "manager_class"):
                if name in self.saved_cache:
                    cache.__dict__[name] = self.saved_cache[name]
                else:
                    cache.__dict__.pop(name, None)
            if self.saved_cache["env"] is None:
                os.environ.pop("TRITON_CACHE_DIR", None)
            else:
                os.environ["TRITON_CACHE_DIR"] = self.saved_cache["env"]
            self.saved_cache = None
        # (report buffers stay allocated: modules already loaded still point at them)

    def move_cache(self) -> None:
        cache = self.knobs.cache
        self.saved_cache = {k: cache.__dict__[k] for k in ("dir", "manager_class") if k in cache.__dict__}
        self.saved_cache["env"] = os.environ.get("TRITON_CACHE_DIR")
        if cache.manager_class is not None:
            warnings.warn(DescgenWarning(
                f"descgen.triton: instrument mode caches kernels with Triton's FileCacheManager in a directory of its "
                f"own, not with TRITON_CACHE_MANAGER={cache.manager_class.__name__} (this Triton does not key the "
                f"hook: instrumented PTX would be cached under the plain kernel's key)"), stacklevel=3)
            cache.manager_class = importlib.import_module("triton.runtime.cache").FileCacheManager
        cache.dir = os.path.join(cache.dir, f"descgen-instrument-{self.on_error}-{self.digest}")


_HOOK: _Hook | None = None


def enable(mode: Literal["scan", "instrument"] = "scan", *, on_error: Literal["trap", "report"] = "trap",
           action: Literal["warn", "error"] = "warn", capacity: int = 64, log: str | None = None,
           wait: bool = True) -> None:
    """Check every Triton kernel's descriptors from now on (see the module's documentation).

    Args:
        mode: ``"scan"`` (the PTX scanned at compile time) or ``"instrument"`` (run-time checks).
        on_error: for ``"instrument"``: ``"trap"`` (a finding stops the kernel) or ``"report"``
            (recorded; the kernel runs on).
        action: what a finding does: ``"warn"`` (a :class:`DescgenWarning`) or ``"error"`` (a
            :class:`DescriptorError`); a trapped kernel always raises.
        capacity: records each instrumented module's report buffer holds (64 bytes each).
        log: a file to which every finding is also appended, one JSON object a line
            (``{"kind": "compile" | "run", "kernel", "pid", ...}`` and the finding's ``as_dict()``);
            ``descgen sanitize`` reads it.
        wait: for ``"instrument"``: each launch of an instrumented kernel waits for it and raises
            with its findings (True), or launches do not wait (False: the findings of earlier
            launches are read, as the kernels left them in host memory, before and after every
            launch, by :func:`check`, and at the interpreter's exit: on a 4096^3 matmul waiting
            costs 27-47% more than the checks, not waiting nothing measurable, docs/sanitizer.md).

    Calling it again replaces the settings; the instrumented kernels loaded already are still read.
    The hook is process-wide (Triton's knobs).

    Raises:
        UsageError: (``SANITIZER-OPTION``) an argument outside the values above.
        SanitizerError: (``SANITIZER-TRITON``) triton is not installed, or is older than 3.6 (no
            ``knobs.runtime.add_stages_inspection_hook``): use ``TRITON_KERNEL_OVERRIDE`` (above).
    """
    global _HOOK
    for name, value, allowed in (("mode", mode, ("scan", "instrument")), ("on_error", on_error, ("trap", "report")),
                                 ("action", action, ("warn", "error"))):
        if value not in allowed:
            raise usage_error("SANITIZER-OPTION", name, value, ", ".join(allowed), f"{name} = {value!r}")
    if not isinstance(wait, bool):
        raise usage_error("SANITIZER-OPTION", "wait", wait, "True, False", f"wait = {wait!r}")
    if not isinstance(capacity, int) or capacity < 1:
        raise usage_error("SANITIZER-OPTION", "capacity", capacity, "an int >= 1", f"capacity = {capacity!r}")
    triton = _triton()
    previous = _HOOK
    disable()
    hook = _Hook(triton, mode, on_error, action, capacity, log, wait)
    if previous is not None and mode == "instrument":  # (kernels loaded already keep their buffers)
        hook.kernels = previous.kernels
    hook.install()
    _HOOK = hook


def disable() -> None:
    """Remove what :func:`enable` installed and put back what it replaced (the previous stages hook,
    compilation listener and cache directory). Kernels already compiled or loaded stay as they are
    (an instrumented module keeps its report buffer and its checks)."""
    global _HOOK
    if _HOOK is not None:
        _HOOK.uninstall()
        _HOOK = None


def check(synchronize: bool = True) -> None:
    """The findings of the instrumented kernels' launches not reported yet (with
    ``enable("instrument", wait=False)``), raised or warned as a launch's are: after waiting for the
    whole context (``synchronize``), or as the kernels left them.

    Raises:
        DescriptorError: a kernel trapped, or ``action="error"``."""
    hook = _HOOK
    if hook is None or not hook.kernels:
        return
    failed = next(iter(hook.kernels.values())).buffer.synchronize(None) if synchronize else None
    hook.poll(failed)


def enabled() -> str | None:
    """The mode :func:`enable` installed (``"scan"``, ``"instrument"``), or None."""
    return _HOOK.mode if _HOOK is not None else None


# --------------------------------------------------------------------------------------------
# Helpers.


def _triton() -> Any:
    try:
        triton = importlib.import_module("triton")
    except ImportError as e:
        raise SanitizerError("SANITIZER-TRITON", "triton", str(e), "triton 3.6 or later (pip install 'triton>=3.6')",
                             "descgen.triton hooks into Triton's compiler") from None
    runtime = getattr(getattr(triton, "knobs", None), "runtime", None)
    if runtime is None or not hasattr(runtime, "add_stages_inspection_hook"):
        raise SanitizerError(
            "SANITIZER-TRITON", "triton", getattr(triton, "__version__", "?"), "triton 3.6 or later",
            "descgen.triton needs triton.knobs.runtime.add_stages_inspection_hook (Triton 3.6+); with an older "
            "Triton, dump the PTX (TRITON_KERNEL_DUMP=1), run descgen scan / descgen instrument on it and load it "
            "back with TRITON_KERNEL_OVERRIDE=1 (see descgen.triton's documentation)")
    return triton


def _scan_arch(ptx: str, capability: int | None) -> str | None:
    """The ``arch`` to scan ``ptx`` with: None when its ``.target`` line says (Triton always writes
    one), else the capability's tcgen05 target (:func:`descgen.ptx.scan.scan_ptx`'s ``arch`` names a
    tcgen05 target; an ``sm_90a`` file is known by its ``.target``)."""
    if re.search(r"^\s*\.target\s", ptx, re.M):
        return None
    arch = arch_of(capability)
    return None if arch == "sm_90a" else arch


def _stages_args(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> tuple[Any, int | None]:
    """(stages, capability) from the hook's arguments: ``(backend, stages, options, language,
    capability)`` as Triton 3.6+ calls it, or ``(stages, options, language, capability)`` as its
    ``PipelineStagesHook`` protocol writes it."""
    if "stages" in kwargs:
        return kwargs["stages"], kwargs.get("capability")
    if len(args) >= 5:
        return args[1], args[4]
    if len(args) == 4:
        return args[0], args[3]
    return (args[1] if len(args) > 1 else None), None


def _add(runtime: Any, name: str, fn: Callable[..., None]) -> None:
    chain = getattr(runtime, name)
    if hasattr(chain, "add"):  # a HookChain (Triton 3.5+)
        chain.add(fn)
        return
    previous = chain

    def both(*args: Any) -> None:
        if previous is not None:
            previous(*args)
        fn(*args)

    setattr(runtime, name, both)
    both.__wrapped__ = previous  # type: ignore[attr-defined]
    both.__descgen__ = fn  # type: ignore[attr-defined]


def _remove(runtime: Any, name: str, fn: Callable[..., None]) -> None:
    chain = getattr(runtime, name, None)
    if chain is not None and hasattr(chain, "remove"):
        chain.remove(fn)
    elif getattr(chain, "__descgen__", None) == fn:
        setattr(runtime, name, chain.__wrapped__)  # type: ignore[union-attr]


def _version(text: str) -> tuple[int, int]:
    parts = (text.split("+")[0].split(".") + ["0", "0"])[:2]
    try:
        return int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)
    except ValueError:
        return (0, 0)


def _digest() -> str:
    """The instrumenter's fingerprint: descgen's version and the sanitizer's source (a changed
    check never reuses a cached instrumented kernel)."""
    h = hashlib.sha256(__version__.encode())
    here = Path(__file__).parent
    for part in ("sanitizer/instrument.py", "sanitizer/report.py", "backends/ptx_rules.py", "backends/ptx_code.py"):
        try:
            h.update((here / part).read_bytes())
        except OSError:
            pass
    return h.hexdigest()[:12]
