"""The host side of the sanitizer's report buffer (docs/sanitizer.md, "The report buffer").

An instrumented module (:func:`descgen.sanitizer.instrument.instrument_ptx`) declares
``.visible .global .align 8 .u64 descgen_report``: the device address of a buffer of pinned,
host-mapped memory, 0 for none. A check that finds a descriptor breaking a rule writes one 64-byte
record there (``st.relaxed.sys.global``), sets the record's complete flag last (after
``membar.sys``) and, with ``on_error="trap"``, stops the kernel.

- :func:`decode_records` turns the buffer's bytes into :class:`RuntimeFinding` records, given the
  module's site table (:class:`Site`; ``OUT.ptx.sites.json`` from ``descgen instrument``, read by
  :func:`load_sites`). Pure Python: it runs anywhere, on bytes saved from any host.
- :class:`ReportBuffer` allocates the buffer through the CUDA driver API (``libcuda``, by
  :mod:`ctypes`), writes its device address into a loaded module's ``descgen_report`` and reads it
  back. The buffer is host memory: it can be read after a trap has killed the CUDA context.

Layout (little-endian; offsets in bytes): a 64-byte header (records written so far, u32 at 0,
which may exceed the capacity; the capacity in records, u32 at 4; the magic ``0x44475352`` at 8; the
layout version, 1, at 12), then record ``i`` at ``64 + 64 i``: see :data:`RECORD`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import struct
import sys
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Protocol, Sequence

from ..core.errors import DescgenError, Finding
from ..model.catalog import usage_table
from ..model.word import hex_word

__all__ = ["HEADER_SIZE", "RECORD_SIZE", "MAGIC", "VERSION", "HEADER", "RECORD", "OPERANDS", "FLAG_COMPLETE",
           "Site", "SiteLike", "RuntimeFinding", "RuntimeFindings", "DescriptorError", "SanitizerError",
           "decode_records", "load_sites", "empty_buffer", "grouped", "ReportBuffer", "SYMBOL"]

#: The module global holding the buffer's device address (as :data:`descgen.sanitizer.instrument.REPORT_SYMBOL`).
SYMBOL = "descgen_report"
#: Bytes of the header; records start here.
HEADER_SIZE = 64
#: Bytes of one record.
RECORD_SIZE = 64
#: The header's magic word (bytes ``RSGD`` little-endian).
MAGIC = 0x44475352
#: The layout version this module reads and writes.
VERSION = 1
#: The header: count (u32 @0), capacity (u32 @4), magic (u32 @8), version (u32 @12); 48 bytes reserved.
HEADER = struct.Struct("<IIII48x")
#: A record: site (u32 @0), code (u32 @4, an index into the site's ``codes``), operand (u32 @8,
#: :data:`OPERANDS`), flags (u32 @12, :data:`FLAG_COMPLETE`), the word (u64 @16), ``%ctaid.x/y/z``
#: (u32 x 3 @24), ``%tid.x/y/z`` (u32 x 3 @36), the field's value (64-bit @48, two's complement),
#: ``%smid`` (u32 @56), reserved (u32 @60).
RECORD = struct.Struct("<IIIIQ3I3IqII")
#: Flag bit 0: the record is complete (written last, after ``membar.sys``).
FLAG_COMPLETE = 1
#: A record's operand number -> descgen's operand role (number 1 is ``s_desc`` for ``tcgen05.cp``).
OPERANDS = {0: "idesc", 1: "a_desc", 2: "b_desc", 3: "zcm", 4: "scale_input_d"}
#: PTX's names of the operands (the instruction pages' syntax), by role.
_PTX_NAMES = {"idesc": "idesc", "a_desc": "a-desc", "b_desc": "b-desc", "zcm": "zero-column-mask-desc",
              "s_desc": "s-desc", "scale_input_d": "scale-input-d"}
_SOURCE = "docs/sanitizer.md (the report buffer)"

assert HEADER.size == HEADER_SIZE and RECORD.size == RECORD_SIZE


class SanitizerError(DescgenError, RuntimeError):
    """The sanitizer cannot be used here: no CUDA driver (``libcuda``) or a driver call failed
    (``SANITIZER-DRIVER``), a module that is not instrumented (``SANITIZER-MODULE``), bytes or a
    site table that are not this layout's (``SANITIZER-BUFFER``), no Triton with the stages hook
    (``SANITIZER-TRITON``, :mod:`descgen.triton`). A :class:`RuntimeError` and a
    :class:`descgen.DescgenError` (``code``, ``field``, ``value``, ``rule`` of its one finding)."""

    def __init__(self, code: str, field: str, value: Any, allowed: str, rule: str) -> None:
        # (the code's rule sentence and source from tables/codes.toml, what was found after it)
        super().__init__((usage_table()[code].finding(field, value, allowed, rule),))
        self.args_ = (code, field, value, allowed, rule)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), self.args_)


# --------------------------------------------------------------------------------------------
# The site table.


class SiteLike(Protocol):
    """What :func:`decode_records` reads of a site: :class:`Site`, or the instrumenter's
    :class:`descgen.sanitizer.instrument.CheckedSite` (which has no ``file``)."""

    @property
    def line(self) -> int: ...
    @property
    def text(self) -> str: ...
    @property
    def opcode(self) -> str: ...
    @property
    def operands(self) -> tuple[tuple[str, str], ...]: ...
    @property
    def codes(self) -> tuple[str, ...]: ...


@dataclass(frozen=True, slots=True)
class Site:
    """One checked instruction of an instrumented module: a record's ``site`` is its index in the
    module's table.

    Attributes:
        file: the PTX file (or kernel) name. line: the instruction's 1-based line in the PTX as it
            was before instrumenting. text: the instruction on one line. opcode: ``tcgen05.mma``,
            ``tcgen05.cp`` or ``wgmma.mma_async``.
        operands: (role, register) of each operand checked at run time (``("b_desc", "%rd7")``).
        codes: the codes the site's check can report; a record's ``code`` indexes this.
    """

    file: str
    line: int
    text: str
    opcode: str
    operands: tuple[tuple[str, str], ...] = ()
    codes: tuple[str, ...] = ()

    @classmethod
    def of(cls, site: SiteLike, file: str) -> Site:
        """A :class:`Site` from any site record (``CheckedSite``), with its file name."""
        return cls(getattr(site, "file", None) or file, site.line, site.text, site.opcode,
                   tuple((str(r), str(g)) for r, g in site.operands), tuple(site.codes))

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form: the keys of a site in ``OUT.ptx.sites.json`` plus ``file``."""
        return {"file": self.file, "line": self.line, "text": self.text, "opcode": self.opcode,
                "operands": [list(o) for o in self.operands], "codes": list(self.codes)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], file: str = "<ptx>") -> Site:
        """The inverse of :meth:`to_json`; reads a site of ``OUT.ptx.sites.json`` too (whose file
        is the table's, given as ``file``).

        Raises:
            SanitizerError: (``SANITIZER-BUFFER``) a key is missing or of the wrong type."""
        try:
            return cls(str(data.get("file") or file), int(data["line"]), str(data["text"]), str(data["opcode"]),
                       tuple((str(r), str(g)) for r, g in data.get("operands", ())),
                       tuple(str(c) for c in data.get("codes", ())))
        except (KeyError, TypeError, ValueError) as e:
            raise SanitizerError("SANITIZER-BUFFER", "site", repr(e), "a site of a sites.json table",
                                 "a site names its line, text, opcode, operands and codes") from None


def load_sites(table: str | bytes | Mapping[str, Any] | Sequence[Mapping[str, Any]],
               file: str | None = None) -> list[Site]:
    """The sites of a site table: ``OUT.ptx.sites.json`` as text or parsed (``{"file", "sites":
    [...]}``), or a list of :meth:`Site.to_json` dicts. ``file`` overrides the table's file name.

    Raises:
        SanitizerError: (``SANITIZER-BUFFER``) not a site table."""
    data = json.loads(table) if isinstance(table, (str, bytes)) else table
    if isinstance(data, Mapping):
        name = file or str(data.get("file") or "<ptx>")
        entries = data.get("sites")
    else:
        name, entries = file or "<ptx>", data
    if not isinstance(entries, (list, tuple)):
        raise SanitizerError("SANITIZER-BUFFER", "sites", type(entries).__name__, "a list of sites",
                             "a site table holds a list of sites")
    return [Site.from_json(s, name) for s in entries]


# --------------------------------------------------------------------------------------------
# Records.


@dataclass(frozen=True, slots=True)
class RuntimeFinding:
    """A finding a check wrote at run time: one record of the report buffer, read with its site.

    Attributes:
        code: the finding's code (``SMEM-RESERVED-14``); ``?`` when the record names no code of
            its site (an incomplete record, or a site table that is not the module's).
        severity: the code's severity (``error``, ``warning``), from descgen's code registry.
        site: the record's site index. file, line, text, opcode: the site's (line 0 and text ``""``
            for a site index outside the table).
        operand: the operand's role (``idesc``, ``a_desc``, ``b_desc``, ``zcm``, ``s_desc``,
            ``scale_input_d``). register: the register the instruction reads it from, or None.
        word: the operand's word (a 32-bit word zero-extended). value: the value of the field the
            rule names, as the rule computes it (signed 64-bit).
        block: ``%ctaid`` (x, y, z). thread: ``%tid`` (x, y, z). smid: ``%smid``.
        complete: False when the record's complete flag is clear: the kernel stopped (or the
            buffer was read) while the record was being written, so any field may be wrong.
    """

    code: str
    severity: str
    site: int
    file: str
    line: int
    text: str
    opcode: str
    operand: str
    register: str | None
    word: int
    value: int
    block: tuple[int, int, int]
    thread: tuple[int, int, int]
    smid: int
    complete: bool = True

    @property
    def name(self) -> str:
        """PTX's name for the operand (``b-desc``)."""
        return _PTX_NAMES.get(self.operand, self.operand)

    @property
    def width(self) -> int:
        """The operand's width in bits: 32 for ``idesc``, else 64."""
        return 32 if self.operand == "idesc" else 64

    @property
    def field(self) -> str:
        """The field the code concerns (``start_address``), from descgen's code registry; ``value``
        when the registry does not say."""
        rule = _rules().get(self.code)
        return rule.fields[0] if rule is not None and rule.fields else "value"

    @property
    def finding(self) -> Finding:
        """The record as a :class:`descgen.Finding` (rule sentence and source from the registry)."""
        rule = _rules().get(self.code)
        return Finding(self.code, self.severity, f"{self.operand}.{self.field}", self.value, "",
                       rule.rule if rule is not None else "unknown code", rule.source if rule is not None else _SOURCE)

    def subject(self) -> str:
        """``b-desc %rd7 = 0x4000004000003000`` (the operand, its register and the word)."""
        register = f" {self.register}" if self.register else ""
        return f"{self.name}{register} = {hex_word(self.word & ((1 << self.width) - 1), self.width)}"

    def where(self) -> str:
        """``block (x,y,z), thread (x,y,z), SM n``."""
        return f"block ({','.join(map(str, self.block))}), thread ({','.join(map(str, self.thread))}), SM {self.smid}"

    def message(self, where: bool = True) -> str:
        """``FILE:LINE: CODE b-desc %rd7 = 0x...: field = value: rule [source] (block (x,y,z), thread
        (x,y,z), SM n)``: the form of a scan finding's line (``descgen scan``), with where it ran
        (``where=False``: without); ``(incomplete record)`` first for a record whose complete flag
        is clear."""
        f = self.finding
        head = "(incomplete record) " if not self.complete else ""
        text = (f"{self.file}:{self.line}: {head}{self.code} {self.subject()}: {self.field} = {_show(self.value)}: "
                f"{f.rule} [{f.source}]")
        return f"{text} ({self.where()})" if where else text

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "severity": self.severity, "site": self.site, "file": self.file, "line": self.line,
                "text": self.text, "opcode": self.opcode, "operand": self.operand, "name": self.name,
                "register": self.register, "word": hex_word(self.word & ((1 << self.width) - 1), self.width),
                "field": self.field, "value": self.value, "block": list(self.block), "thread": list(self.thread),
                "smid": self.smid, "complete": self.complete, "message": self.message(), "what": self.message(False)}


class RuntimeFindings(list[RuntimeFinding]):
    """The records of a report buffer, in the order written, with the header's counts.

    Attributes:
        written: the records the kernels tried to write (the header's count).
        capacity: how many the buffer holds. lost: ``written - capacity`` when positive, else 0.
    """

    def __init__(self, items: Iterable[RuntimeFinding] = (), written: int = 0, capacity: int = 0) -> None:
        super().__init__(items)
        self.written = written
        self.capacity = capacity

    @property
    def lost(self) -> int:
        return max(0, self.written - self.capacity)

    def summary(self) -> str:
        """``3 run-time findings`` (``, 5 more lost: the buffer holds 4``)."""
        lost = f", {self.lost} more lost: the buffer holds {self.capacity}" if self.lost else ""
        incomplete = sum(1 for f in self if not f.complete)
        partial = f" ({incomplete} incomplete)" if incomplete else ""
        return f"{len(self)} run-time finding{'' if len(self) == 1 else 's'}{partial}{lost}"


class DescriptorError(DescgenError, RuntimeError):
    """A kernel's descriptor operand broke a rule: raised by the Triton hook (:mod:`descgen.triton`)
    with the run-time records (:class:`RuntimeFinding`) or the static scan's findings
    (:class:`descgen.ptx.scan.ScanFinding`) of a kernel.

    Attributes:
        found: what was found, as given (each has ``message()``); ``findings`` holds them as
            :class:`descgen.Finding` records. lost: records lost to a full report buffer.
    """

    def __init__(self, found: Sequence[Any], context: str = "", lost: int = 0) -> None:
        self.found: tuple[Any, ...] = tuple(found)
        self.lost = lost
        super().__init__(tuple(f.finding for f in self.found), context)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.found, self.context, self.lost))

    def _message(self) -> str:
        head = f"{self.context}: " if self.context else ""
        lines = grouped(self.found)
        if self.lost:
            lines.append(f"{self.lost} more records lost: the report buffer was full")
        if len(lines) == 1:
            return head + lines[0]
        return head + f"{len(self.found)} descriptor findings:\n" + "\n".join("  - " + line for line in lines)


def grouped(found: Iterable[Any]) -> list[str]:
    """One line per distinct finding: run-time records that differ only in where they ran (block,
    thread, SM) are one line, ``... (in 16 records; the first: block (3,3,0), thread (0,0,0), SM 14)``;
    anything else with a ``message()`` is its own line."""
    groups: dict[str, list[Any]] = {}
    for f in found:
        key = f.message(False) if isinstance(f, RuntimeFinding) else str(f.message())
        groups.setdefault(key, []).append(f)
    out = []
    for key, fs in groups.items():
        if not isinstance(fs[0], RuntimeFinding):
            out.append(key)
        elif len(fs) == 1:
            out.append(fs[0].message())
        else:
            out.append(f"{key} (in {len(fs)} records; the first: {fs[0].where()})")
    return out


def decode_records(buf: bytes | bytearray | memoryview, sites: Sequence[SiteLike], *,
                   file: str = "<ptx>") -> RuntimeFindings:
    """The records of a report buffer, each read with its site.

    Args:
        buf: the buffer's bytes (at least the header, and the records the header counts, up to
            its capacity). sites: the module's site table (:class:`Site`, or the instrumenter's
            ``CheckedSite``), indexed by a record's ``site``. file: the file name of sites that
            carry none (``CheckedSite``).

    Returns:
        :class:`RuntimeFindings`: a list of :class:`RuntimeFinding`, one per record written (at
        most the capacity), incomplete ones included (``complete=False``); ``.lost`` says how many
        did not fit. A record whose site or code index is outside the table is kept, with code ``?``.

    Raises:
        SanitizerError: (``SANITIZER-BUFFER``) the bytes are shorter than the header or than the
            records it counts, or the magic or version is not this layout's (docs/sanitizer.md).
    """
    view = memoryview(buf).cast("B") if not isinstance(buf, memoryview) or buf.format != "B" else buf
    if len(view) < HEADER_SIZE:
        raise SanitizerError("SANITIZER-BUFFER", "size", len(view), f"at least {HEADER_SIZE} bytes",
                             "a report buffer starts with a 64-byte header")
    count, capacity, magic, version = HEADER.unpack_from(view, 0)
    if magic != MAGIC:
        raise SanitizerError("SANITIZER-BUFFER", "magic", magic, f"{MAGIC:#x}",
                             "a report buffer's header holds the magic 0x44475352 at byte 8 (the host writes it)")
    if version != VERSION:
        raise SanitizerError("SANITIZER-BUFFER", "version", version, str(VERSION),
                             f"this descgen reads report buffers of layout version {VERSION}")
    n = min(count, capacity)
    if len(view) < HEADER_SIZE + RECORD_SIZE * n:
        raise SanitizerError("SANITIZER-BUFFER", "size", len(view), f"at least {HEADER_SIZE + RECORD_SIZE * n} bytes",
                             f"the buffer holds the {n} records its header counts")
    rules = _rules()
    out = RuntimeFindings(written=count, capacity=capacity)
    for i in range(n):
        (site_i, code_i, operand_i, flags, word, bx, by, bz, tx, ty, tz, value, smid,
         _reserved) = RECORD.unpack_from(view, HEADER_SIZE + RECORD_SIZE * i)
        site = sites[site_i] if site_i < len(sites) else None
        codes = tuple(site.codes) if site is not None else ()
        code = codes[code_i] if code_i < len(codes) else "?"
        rule = rules.get(code)
        role = OPERANDS.get(operand_i, f"operand {operand_i}")
        if site is not None and site.opcode == "tcgen05.cp" and operand_i == 1:
            role = "s_desc"
        registers = dict(site.operands) if site is not None else {}
        out.append(RuntimeFinding(
            code=code, severity=rule.severity if rule is not None else "error", site=site_i,
            file=(getattr(site, "file", None) or file) if site is not None else file,
            line=site.line if site is not None else 0, text=site.text if site is not None else "",
            opcode=site.opcode if site is not None else "", operand=role, register=registers.get(role),
            word=word, value=value, block=(bx, by, bz), thread=(tx, ty, tz), smid=smid,
            complete=bool(flags & FLAG_COMPLETE)))
    return out


def _rules() -> Mapping[str, Any]:
    from ..codes import all_codes

    return all_codes()


def _show(value: int) -> str:
    return str(value) if -1024 < value < 1024 else f"{value} ({value & (1 << 64) - 1:#x})"


def empty_buffer(capacity: int) -> bytearray:
    """A zeroed buffer of ``capacity`` records with its header written (what :meth:`ReportBuffer.reset`
    writes), for tests and for hosts that allocate the memory themselves."""
    out = bytearray(HEADER_SIZE + RECORD_SIZE * capacity)
    HEADER.pack_into(out, 0, 0, capacity, MAGIC, VERSION)
    return out


# --------------------------------------------------------------------------------------------
# The CUDA driver (libcuda), through ctypes.

CU_MEMHOSTALLOC_PORTABLE = 0x01
CU_MEMHOSTALLOC_DEVICEMAP = 0x02
_CUDA_ERROR_NOT_FOUND = 500


def _driver(path: str | None = None) -> ctypes.CDLL:
    """libcuda, its functions typed.

    Raises:
        SanitizerError: (``SANITIZER-DRIVER``) no CUDA driver library can be loaded."""
    names = [path] if path else (["nvcuda.dll"] if sys.platform == "win32" else
                                 ["libcuda.so.1", "libcuda.so", ctypes.util.find_library("cuda")])
    errors = []
    for name in names:
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError as e:
            errors.append(f"{name}: {e}")
    else:
        raise SanitizerError("SANITIZER-DRIVER", "libcuda", "; ".join(errors) or "not found",
                             "the CUDA driver library (libcuda.so.1) of a machine with an NVIDIA GPU",
                             "the report buffer is allocated and attached through the CUDA driver API")
    u64, vp, sz, ui = ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint
    for fn, args in (("cuMemHostAlloc", [ctypes.POINTER(vp), sz, ui]),
                     ("cuMemHostGetDevicePointer_v2", [ctypes.POINTER(u64), vp, ui]),
                     ("cuModuleGetGlobal_v2", [ctypes.POINTER(u64), ctypes.POINTER(sz), vp, ctypes.c_char_p]),
                     ("cuMemcpyHtoD_v2", [u64, vp, sz]),
                     ("cuMemFreeHost", [vp]),
                     ("cuStreamSynchronize", [vp]),
                     ("cuCtxSynchronize", []),
                     ("cuGetErrorName", [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)])):
        f = getattr(lib, fn)
        f.argtypes, f.restype = args, ctypes.c_int
    return lib


def _error_name(lib: ctypes.CDLL, rc: int) -> str:
    name = ctypes.c_char_p()
    if lib.cuGetErrorName(rc, ctypes.byref(name)) == 0 and name.value:
        return f"{name.value.decode()} ({rc})"
    return f"CUresult {rc}"


class ReportBuffer:
    """A report buffer in pinned, host-mapped memory (``cuMemHostAlloc`` with
    ``CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE``), read directly from the host.

    Needs a current CUDA context when made and attached (Triton's, PyTorch's...). Reading needs
    none: after a trap has killed the context, :meth:`read` still returns what the kernel wrote.

    Args:
        capacity: records the buffer holds (64 bytes each); more are counted, not kept.
        library: the driver library's path (default: ``libcuda.so.1``).

    Raises:
        SanitizerError: (``SANITIZER-DRIVER``) no CUDA driver, or the allocation failed (no
            current context: ``CUDA_ERROR_INVALID_CONTEXT``).
    """

    def __init__(self, capacity: int = 64, *, library: str | None = None) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1 record")
        self._cuda = _driver(library)
        self.capacity = capacity
        self.size = HEADER_SIZE + RECORD_SIZE * capacity
        host = ctypes.c_void_p()
        self._call("cuMemHostAlloc", ctypes.byref(host), self.size,
                   CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE)
        self._host: int | None = host.value
        device = ctypes.c_uint64()
        self._call("cuMemHostGetDevicePointer_v2", ctypes.byref(device), host, 0)
        #: The buffer's device address (what ``descgen_report`` holds once attached).
        self.device_pointer = device.value
        self._view = (ctypes.c_char * self.size).from_address(host.value or 0)
        self.reset()

    def _call(self, name: str, *args: Any) -> None:
        rc = getattr(self._cuda, name)(*args)
        if rc != 0:
            raise SanitizerError("SANITIZER-DRIVER", name, _error_name(self._cuda, rc), "CUDA_SUCCESS",
                                 f"{name} failed")

    def attach(self, module: int) -> None:
        """Write the buffer's device address into ``module``'s ``descgen_report`` (a ``CUmodule``
        handle, as an int: Triton's ``CompiledKernel.module``), through ``cuModuleGetGlobal_v2``
        and ``cuMemcpyHtoD_v2``. Do it after loading the module and before the launch.

        Raises:
            SanitizerError: ``SANITIZER-MODULE`` when the module has no ``descgen_report`` (not
                instrumented), ``SANITIZER-DRIVER`` when a driver call fails."""
        address, size = ctypes.c_uint64(), ctypes.c_size_t()
        rc = self._cuda.cuModuleGetGlobal_v2(ctypes.byref(address), ctypes.byref(size), ctypes.c_void_p(module),
                                             SYMBOL.encode())
        if rc == _CUDA_ERROR_NOT_FOUND:
            raise SanitizerError("SANITIZER-MODULE", SYMBOL, module, "a module instrumented by descgen instrument",
                                 f"an instrumented module declares .global .u64 {SYMBOL}")
        if rc != 0:
            raise SanitizerError("SANITIZER-DRIVER", "cuModuleGetGlobal_v2", _error_name(self._cuda, rc),
                                 "CUDA_SUCCESS", "cuModuleGetGlobal_v2 failed")
        if size.value != 8:
            raise SanitizerError("SANITIZER-MODULE", SYMBOL, size.value, "8 bytes", f"{SYMBOL} is a .u64")
        pointer = ctypes.c_uint64(self.device_pointer)
        self._call("cuMemcpyHtoD_v2", address, ctypes.byref(pointer), 8)

    def raw(self) -> bytes:
        """The buffer's bytes as they are now (no synchronisation: :meth:`synchronize` first).

        Raises:
            SanitizerError: (``SANITIZER-BUFFER``) the buffer was closed."""
        if self._host is None:
            raise SanitizerError("SANITIZER-BUFFER", "buffer", "freed", "a live buffer", "the buffer was closed")
        return bytes(self._view)

    def read(self, sites: Sequence[SiteLike], *, file: str = "<ptx>") -> RuntimeFindings:
        """The records written so far (:func:`decode_records` over :meth:`raw`), read from host
        memory: no CUDA call, so it works after a trap killed the context.

        Raises:
            SanitizerError: (``SANITIZER-BUFFER``) the buffer was closed, or its header was
                overwritten (not this layout's magic or version)."""
        return decode_records(self.raw(), sites, file=file)

    def reset(self) -> None:
        """Forget every record: zero the buffer, write capacity, magic and version (host writes to
        host memory; do it while no kernel that writes the buffer runs).

        Raises:
            SanitizerError: (``SANITIZER-BUFFER``) the buffer was closed."""
        if self._host is None:
            raise SanitizerError("SANITIZER-BUFFER", "buffer", "freed", "a live buffer", "the buffer was closed")
        ctypes.memmove(self._host, bytes(empty_buffer(self.capacity)), self.size)

    def synchronize(self, stream: int | None = None) -> str | None:
        """Wait for ``stream`` (a ``CUstream`` handle; None: the whole context). Returns None, or
        the driver's error name when the work failed (a trap: ``CUDA_ERROR_LAUNCH_FAILED`` or
        ``CUDA_ERROR_ILLEGAL_INSTRUCTION``); the records are readable either way."""
        rc = (self._cuda.cuCtxSynchronize() if stream is None else
              self._cuda.cuStreamSynchronize(ctypes.c_void_p(stream)))
        return None if rc == 0 else _error_name(self._cuda, rc)

    def close(self) -> None:
        """Free the memory (``cuMemFreeHost``; a failure, as in a dead context, is ignored)."""
        if self._host is not None:
            self._cuda.cuMemFreeHost(ctypes.c_void_p(self._host))
            self._host = None

    def __enter__(self) -> ReportBuffer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
