"""Descriptor functions: a word's fixed part as a checked constant, and its run-time part as
functions, in C++, C, PTX and Python.

No real kernel uses a fixed shared memory address: a descriptor is a compile-time part plus a
run-time address, advanced per K block inside a swizzle atom and per pipeline stage. What is
run-time, per word (errata E45):

- a tile's **shared memory descriptor** (from :func:`~descgen.smem_for_tile`): ``NAME(smem_addr)``
  puts the tile's address (bytes) in the start address field; ``NAME_k(desc, k_block)`` steps to
  the ``k_block``-th MMA along K (§9.7.16.3: 16-byte columns inside a K-major swizzle atom row,
  then whole atoms, as :meth:`TileDescriptor.k_offset`); ``NAME_stage(desc, stage)`` to the
  ``stage``-th pipeline stage, ``stage_bytes`` apart. Each works on the two 32-bit halves of the
  word, changes only bits 0-13 of the low half and masks the new start address to those 14 bits:
  nothing carries into reserved bits 14-15 or the LBO, and nothing is a 64-bit add.
- a **shared memory descriptor given by its fields** (``encode_smem``'s LBO, SBO, swizzle, base
  offset; no tile): ``NAME(smem_addr)`` as a tile's, and ``NAME_advance(desc, offset)``, the start
  address moved by a byte offset (a K block inside an atom row, a stage), the same way and under
  the checks that hold without a tile: 16-byte aligned, no carry, on row 0 of the swizzle pattern
  the base offset assumes. The tile form and this one share their code (``_at_address``, ``_moved``).
- the **instruction descriptor**: the scale factor IDs of the block-scaled kinds (CUTLASS sets
  them per MMA from the scale factors' tensor memory addresses) and the sparsity selector of a
  sparse MMA whose kind allows other values than 0 (tf32, f16; E15); any other word has no
  run-time part: the checked constant alone, and the comment says so.
- the **zero-column mask**: the column shift (Table 45: "allows MMA on non-0 starting column").

The debug checks are ``DESCGEN_CHECK(cond, code, field, value, allowed)`` (C and C++; defined
under ``#ifndef DESCGEN_CHECK``, so that a header defining the same macro can come first): with
``DESCGEN_DEBUG`` a failed check prints ``descgen: CODE: field = value (0xhex), allowed ...`` and
traps (``__trap()`` on the device, ``abort()`` on the host); without, nothing. Python raises
``ValueError`` with the same message. PTX has no checks: its masks keep every field in place.
Each code is a rule of ``tables/rules.toml`` (``descgen explain CODE``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable, Sequence, Union

from ..model.catalog import usage_error
from ..model.engine import Decoded
from .emitters import CHECK_MACRO, NEEDS, comment, guarded, identifier, word_comment
from ..core.errors import DescgenError
from ..model.facts import swizzle_period
from ..words.identify import decode_as
from ..words.idesc import validate_idesc
from ..model.report import Report
from ..tiles import ADDRESS_LIMIT, CHUNK, TileDescriptor, smem_for_tile
from ..core.types import Format
from ..core.version import __version__
from ..words.zcm import validate_zcm

__all__ = ["FUNCTION_FORMATS", "DescriptorFunctions", "Function", "descriptor_functions", "emit_functions"]

#: The formats :func:`emit_functions` writes.
FUNCTION_FORMATS: tuple[Format, ...] = ("c", "cpp", "ptx", "python")

_M32 = 0xFFFF_FFFF
_START_MASK = 0x3FFF  # Table 40 bits 0-13: the start address >> 4

#: An expression over unsigned 32-bit values: a variable name, a constant, or ``(op, a, b)`` with
#: op one of ``+ - * / % & | << >>`` (wrapping modulo 2**32, as C's ``uint32_t``) or ``< <= ==``.
Expr = Union[str, int, tuple[str, Any, Any]]


@dataclass(frozen=True)
class Check:
    """A debug check: ``cond`` must hold, else the finding ``code`` for ``field`` = ``value``."""

    cond: Expr
    code: str
    field: str
    value: Expr
    allowed: str


@dataclass(frozen=True)
class Let:
    """``name = expr`` (unsigned 32-bit)."""

    name: str
    expr: Expr


@dataclass(frozen=True)
class Split:
    """The 64-bit parameter ``desc`` as its two 32-bit halves ``lo`` (bits 0-31) and ``hi``."""

    desc: str
    lo: str
    hi: str


Statement = Union[Check, Let, Split]


@dataclass(frozen=True)
class Function:
    """One run-time function: ``params`` are ``(name, bits)`` (32 or 64); the result is the word
    ``hi << 32 | lo`` (64-bit words) or ``lo`` (32-bit)."""

    name: str
    doc: tuple[str, ...]
    params: tuple[tuple[str, int], ...]
    body: tuple[Statement, ...]
    lo: Expr
    hi: Expr | None
    #: arguments its checks pass and the word they give (C++ static_asserts it); None: all 0, the fixed part
    example: tuple[tuple[int, ...], int] | None = None


@dataclass(frozen=True)
class DescriptorFunctions:
    """A word as its fixed part and the functions that add the run-time part.

    Attributes:
        name: the base name (``a_desc``): the functions are ``name``, ``name_k``...; the constant
            ``name_fixed`` (C++), ``NAME_FIXED`` (C, Python).
        width: 32 or 64 (bits).
        fixed: the fixed part: the word with every run-time field 0.
        comment: the fixed part's decode (fields, findings, tile reasoning) and what is run-time.
        functions: the run-time functions; empty when the word has no run-time part.
    """

    name: str
    width: int
    fixed: int
    comment: tuple[str, ...]
    functions: tuple[Function, ...]


# --------------------------------------------------------------------------------------------
# What is run-time, per word.


def descriptor_functions(what: TileDescriptor | Decoded | Report, *, name: str | None = None,
                         stage_bytes: int | None = None) -> DescriptorFunctions:
    """The fixed part and run-time functions of one word.

    Args:
        what: a :class:`~descgen.TileDescriptor` (shared memory descriptor functions; its start
            address is not used: the fixed part has start address 0), a decoded or validated
            shared memory descriptor (``validate_smem``, ``decode_wgmma_smem``...: its fields as
            given, start address 0; ``NAME(smem_addr)`` and ``NAME_advance(desc, offset)``), or a
            decoded or validated instruction descriptor or zero-column mask (``decode_idesc``,
            ``validate_zcm``...: the report's context, e.g. ``scale_vec`` or ``m``, narrows the
            checks).
        name: the base name of the constant and functions; default ``smem_desc``, ``idesc``,
            ``zcm_desc``.
        stage_bytes: tiles only: bytes from one pipeline stage's tile to the next (default: the
            tile's size); a multiple of 16, of the swizzle pattern (1024/512/256 bytes) and at
            least the tile.

    Raises:
        UsageError: ``EMIT-INPUT`` (not one of these), ``EMIT-STAGE-BYTES``, ``EMIT-TILE-K`` (the
            tile's K is not a whole number of MMA K blocks).
    """
    if isinstance(what, TileDescriptor):
        return _smem(what, name or "smem_desc", stage_bytes)
    if stage_bytes is not None:
        raise usage_error("EMIT-STAGE-BYTES", "stage_bytes", stage_bytes, "a tile's descriptor",
                          "only a shared memory descriptor of a tile has stages")
    context: dict[str, Any] = {}
    if isinstance(what, Report) and len(what.decoded) == 1:
        context = {k: v for k, v in what.context.items() if v is not None}
        what = next(iter(what.decoded.values()))
    if isinstance(what, Decoded) and what.descriptor == "idesc":
        return _idesc(what, name or "idesc", context)
    if isinstance(what, Decoded) and what.descriptor == "zcm":
        return _zcm(what, name or "zcm_desc", context)
    if isinstance(what, Decoded) and what.descriptor in ("smem", "wgmma_smem"):
        return _smem_word(what, name or "smem_desc")
    raise usage_error("EMIT-INPUT", "what", type(what).__name__,
                      "a TileDescriptor, or a decoded or validated smem, wgmma_smem, idesc or zcm",
                      "run-time functions are written for a shared memory descriptor, an idesc or a zcm")


def _smem(td: TileDescriptor, name: str, stage_bytes: int | None) -> DescriptorFunctions:
    if td.start_address:
        td = smem_for_tile(dtype=td.dtype, major=td.major,  # type: ignore[arg-type]
                           swizzle=td.swizzle, mn=td.mn, k=td.k,  # type: ignore[arg-type]
                           start_address=0, pattern_start=td.pattern_start,
                           atom_order=td.atom_order,  # type: ignore[arg-type]
                           kind=td.kind)  # type: ignore[arg-type]
    atom = td.atom
    tile_bytes = atom.bytes * td.repeats[0] * td.repeats[1]
    last = ADDRESS_LIMIT - tile_bytes  # the last address the tile may start at
    period = atom.period

    # K blocks: one MMA's K each, td.k_offset bytes from the tile's first column.
    if td.k % td.mma_k:
        raise usage_error("EMIT-TILE-K", "k", td.k, f"a multiple of {td.mma_k} (one MMA's K)",
                          f"a {td.dtype} MMA reads K = {td.mma_k}; the tile's K is {td.k}")
    blocks = td.k // td.mma_k
    offsets = [td.k_offset(kb * td.mma_k) for kb in range(blocks)]
    per_atom = atom.k // td.mma_k if td.mma_k < atom.k else 1
    inner = offsets[1] if per_atom > 1 else 0
    outer = offsets[per_atom] if blocks > per_atom else (td.mma_k // atom.k) * td.k_step
    assert all(o == kb // per_atom * outer + kb % per_atom * inner for kb, o in enumerate(offsets)), (offsets, per_atom)

    stage = tile_bytes if stage_bytes is None else stage_bytes
    need = max(CHUNK, period)
    if isinstance(stage, bool) or not isinstance(stage, int) or stage < tile_bytes or stage % need:
        raise usage_error("EMIT-STAGE-BYTES", "stage_bytes", stage,
                          f"a multiple of {need} bytes, at least {tile_bytes} (the tile)",
                          "each stage holds a whole tile starting where the swizzle pattern does"
                          if period else "each stage holds a whole tile, 16-byte aligned")
    stages = (ADDRESS_LIMIT - tile_bytes) // stage + 1

    make = _at_address(name, td.word, "tile", td.swizzle, td.base_offset, (
        Check(("<=", "smem_addr", last), "LAYOUT-TILE-RANGE", "start_address", "smem_addr",
              f"0..{last:#x} (the {tile_bytes}-byte tile inside the window)"),))

    if per_atom > 1 and blocks > per_atom:  # columns inside an atom row, then whole atoms
        step: Expr = ("+", ("*", ("/", "k_block", per_atom), outer >> 4), ("*", ("%", "k_block", per_atom), inner >> 4))
        how = f"+{inner} bytes per block inside a {atom.row_bytes}-byte atom row, +{outer} bytes per atom"
    elif per_atom > 1:
        step, how = ("*", "k_block", inner >> 4), f"+{inner} bytes per block inside a {atom.row_bytes}-byte atom row"
    else:
        step, how = ("*", "k_block", outer >> 4), f"+{outer} bytes per block"
    k_doc = (f"{name}_k(desc, k_block): desc stepped to the k_block-th MMA along K (K = {td.mma_k} each, "
             f"{blocks} in the tile's K = {td.k}): {how}")
    advance_k = _moved(f"{name}_k", (k_doc,), ("k_block", 32), (
        Check(("<", "k_block", blocks), "LAYOUT-K-OFFSET", "k_block", "k_block",
              f"0..{blocks - 1} (K = {td.k} in MMA blocks of K = {td.mma_k})"),), step, (_NO_CARRY,))

    advance_stage = _moved(
        f"{name}_stage", (f"{name}_stage(desc, stage): desc moved to pipeline stage `stage`, {stage} bytes apart",),
        ("stage", 32), (Check(("<", "stage", stages), "LAYOUT-TILE-RANGE", "stage", "stage",
                              f"0..{stages - 1} ({stage}-byte stages of a {tile_bytes}-byte tile inside the window)"),),
        ("*", "stage", stage >> 4), (Check(("<=", "start", last >> 4), "LAYOUT-TILE-RANGE", "start_address",
                                           ("<<", "start", 4),
                                           f"0..{last:#x} (the {tile_bytes}-byte tile inside the window)"),))

    lines = (*word_comment(td),
             f"fixed part: start address 0; run-time: {name}(smem_addr), {name}_k(desc, k_block), "
             f"{name}_stage(desc, stage) ({stage}-byte stages)", _ONLY_START)
    return DescriptorFunctions(name, 64, td.word, lines, (make, advance_k, advance_stage))


#: What every shared memory descriptor function changes (errata E45).
_ONLY_START = ("each changes only the start address field (bits 0-13 of the low 32-bit half), masked to 14 bits: "
               "nothing carries into bits 14-15 or the LBO (E45)")
#: The moved start address (16-byte units) still fits its 14 bits: nothing carries out of the field.
_NO_CARRY = Check(("<=", "start", _START_MASK), "SMEM-START-ADDRESS-CARRY", "start_address", ("<<", "start", 4),
                  f"0..{ADDRESS_LIMIT - CHUNK:#x}")


def _phase(addr: Expr, swizzle: Any, base_offset: int, row: bool) -> Check | None:
    """The check that ``addr`` (bytes) is where the base offset puts row 0 of the swizzle pattern:
    ``(addr - 128 * base_offset) % period`` is 0 (``row``: below 128, any 16-byte column of the
    row); None without swizzling. (The allowed text says ``mod``: it is part of a printf format.)"""
    period = swizzle_period(swizzle)
    if not period:
        return None
    phase: Expr = ("-", addr, 128 * base_offset) if base_offset else addr
    what = addr if isinstance(addr, str) else "start"
    cond: Expr = ("<", ("%", phase, period), 128) if row else ("==", ("%", phase, period), 0)
    where = (f"a multiple of {period}" if not (row or base_offset) else
             f"{f'({what} - {128 * base_offset})' if base_offset else what} mod {period} {'< 128' if row else '== 0'}")
    return Check(cond, "LAYOUT-ATOM-PHASE", "start_address", addr,
                 f"{where} (row 0 of the {swizzle} pattern, base offset {base_offset})")


def _at_address(name: str, word: int, what: str, swizzle: Any, base_offset: int, more: Sequence[Check]) -> Function:
    """``name(smem_addr)``: ``word`` (start address 0) with the address in its start address field,
    checked: 16-byte aligned, inside the window, ``more``, on the pattern's row 0 (swizzled)."""
    phase = _phase("smem_addr", swizzle, base_offset, row=False)
    first = 128 * base_offset if phase else 0  # (the first address on the pattern's row 0)
    return Function(
        name, (f"{name}(smem_addr): the descriptor of the {what} at shared memory address smem_addr (bytes, as "
               "__cvta_generic_to_shared gives it)",),
        (("smem_addr", 32),), (
            Check(("==", ("%", "smem_addr", CHUNK), 0), "SMEM-START-ADDRESS-ALIGN", "start_address", "smem_addr",
                  "a multiple of 16"),
            Check(("<", "smem_addr", ADDRESS_LIMIT), "SMEM-START-ADDRESS-RANGE", "start_address", "smem_addr",
                  f"0..{ADDRESS_LIMIT - CHUNK:#x} (the 18-bit shared memory window)"),
            *more, *((phase,) if phase else ())),
        ("|", word & _M32, ("&", (">>", "smem_addr", 4), _START_MASK)), word >> 32, ((first,), word | first >> 4))


def _moved(name: str, doc: tuple[str, ...], param: tuple[str, int], before: Sequence[Check], step: Expr,
           after: Sequence[Check]) -> Function:
    """``name(desc, param)``: desc with ``step`` (16-byte units) added to its start address field
    ``start``, inside the low 32-bit half and masked to 14 bits; ``before`` checks the parameter,
    ``after`` the new ``start``."""
    return Function(name, doc, (("desc", 64), param), (
        *before, Split("desc", "lo", "hi"), Let("start", ("+", ("&", "lo", _START_MASK), step)), *after),
        ("|", ("&", "lo", _M32 ^ _START_MASK), ("&", "start", _START_MASK)), "hi")


def _smem_word(d: Decoded, name: str) -> DescriptorFunctions:
    """A shared memory descriptor given by its fields (no tile): the word with start address 0, and
    ``name(smem_addr)`` and ``name_advance(desc, offset)``, a byte offset added to the start address
    that keeps it 16-byte aligned, inside the window (no carry out of the field) and, swizzled, on
    row 0 of the pattern the base offset assumes."""
    start = d["start_address"]
    assert (start.lo, start.hi) == (0, 13), start  # (Table 40 and sec. 9.7.15.5.1.2.2: bits 0-13)
    word = d.word & ~_START_MASK
    swizzle, base_offset = d.value("swizzle"), d.value("base_offset") or 0
    phase = _phase(("<<", "start", 4), swizzle, base_offset, row=True)
    make = _at_address(name, word, "matrix", swizzle, base_offset, ())
    advance = _moved(
        f"{name}_advance", (f"{name}_advance(desc, offset): desc with its start address moved by offset bytes (a "
                            "multiple of 16: e.g. the next K block inside a swizzle atom row, or the next stage)",),
        ("offset", 32), (Check(("==", ("%", "offset", CHUNK), 0), "SMEM-START-ADDRESS-ALIGN", "offset", "offset",
                               "a multiple of 16"),),
        (">>", "offset", 4), (_NO_CARRY, *((phase,) if phase else ())))
    fixed = decode_as(word, d.descriptor)
    lines = (*word_comment(fixed),
             f"fixed part: start address 0; run-time: {name}(smem_addr), {name}_advance(desc, offset)", _ONLY_START)
    return DescriptorFunctions(name, 64, word, lines, (make, advance))


def _legal(field: str, values: range, try_value: Callable[[int], Sequence[Any]]) -> tuple[list[int], str]:
    """The values among ``values`` that ``try_value`` finds no error on ``field`` with, and the
    code of the first such error found for another (the rule the check reports)."""
    ok, code = [], ""
    for v in values:
        errors = [f for f in try_value(v) if f.severity == "error" and f.field == field]
        if errors:
            code = code or errors[0].code
        else:
            ok.append(v)
    return ok, code


def _field_setter(d: Decoded, fields: Sequence[str], check: Callable[[str, int], Sequence[Any]]) -> tuple[
        list[Statement], Expr]:
    """The checks of ``fields`` (each value a rule refuses: the code of the first such rule) and
    the OR of their values put in place, inside their 32-bit half of the word."""
    stmts: list[Statement] = []
    value: Expr = 0
    for fname in fields:
        f = d[fname]
        width = f.hi - f.lo + 1
        ok, code = _legal(fname, range(1 << width), functools.partial(check, fname))
        if code:  # a value the field holds but a rule refuses: a range 0..max, or a set as a bit mask
            cond: Expr
            if ok == list(range(len(ok))):
                cond, allowed = ("<=", fname, ok[-1]), f"0..{ok[-1]}"
            else:
                assert width <= 5, (fname, ok)
                mask = sum(1 << v for v in ok)
                cond = ("&", ("<", fname, 1 << width), ("==", ("&", (">>", mask, ("&", fname, 31)), 1), 1))
                allowed = ", ".join(map(str, ok))
            stmts.append(Check(cond, code, fname, fname, allowed))
        put: Expr = ("&", fname, (1 << width) - 1)
        shift = f.lo % 32
        placed: Expr = ("<<", put, shift) if shift else put
        value = placed if value == 0 else ("|", value, placed)
    return stmts, value


def _idesc(d: Decoded, name: str, context: dict[str, Any]) -> DescriptorFunctions:
    names = {f.name for f in d.fields}
    runtime: list[str] = [n for n in ("a_sf_id", "b_sf_id") if n in names]
    if not runtime and d.value("sparse") and "sparsity_selector" in names:
        runtime = ["sparsity_selector"]
    fixed = d.word
    for fname in runtime:
        f = d[fname]
        fixed &= ~(((1 << (f.hi - f.lo + 1)) - 1) << f.lo)

    def check(fname: str, v: int) -> Sequence[Any]:
        f = d[fname]
        try:
            return tuple(validate_idesc(fixed | v << f.lo, d.kind, **context))  # type: ignore[arg-type]
        except DescgenError as e:
            return e.findings

    if runtime == ["sparsity_selector"] and _legal("sparsity_selector", range(4), functools.partial(
            check, "sparsity_selector"))[0] == [0]:  # i8, f8f6f4: the selector must be 0 (E15)
        runtime, fixed = [], d.word
    lines = list(word_comment(decode_as(fixed, "idesc", d.kind)))
    if not runtime:
        why = " (its sparsity selector must be 0: E15)" if d.value("sparse") else ""
        lines.append(f"no run-time part: .kind::{d.kind} {'sparse' if d.value('sparse') else 'dense'}: every field "
                     f"is fixed by the MMA's kind, shape, types and majors{why} (E45)")
        return DescriptorFunctions(name, 32, fixed, tuple(lines), ())
    stmts, value = _field_setter(d, runtime, check)
    lines.append(f"fixed part: {', '.join(runtime)} 0; run-time: {name}({', '.join(runtime)}) "
                 + ("(CUTLASS: bits 30-31 of the scale factors' tensor memory addresses)" if "a_sf_id" in runtime
                    else "(the sparsity metadata's selector, sec. 9.7.16.10.8)") + " (E45)")
    fn = Function(name, (f"{name}({', '.join(runtime)}): the instruction descriptor with these fields set",),
                  tuple((n, 32) for n in runtime), tuple(stmts), ("|", fixed, value), None)
    return DescriptorFunctions(name, 32, fixed, tuple(lines), (fn,))


def _zcm(d: Decoded, name: str, context: dict[str, Any]) -> DescriptorFunctions:
    f = d["column_shift"]
    fixed = d.word & ~(((1 << (f.hi - f.lo + 1)) - 1) << f.lo)
    lines = list(word_comment(decode_as(fixed, "zcm")))

    def check(fname: str, v: int) -> Sequence[Any]:
        return tuple(validate_zcm(fixed | v << f.lo, **context))

    stmts, hi_value = _field_setter(d, ["column_shift"], check)  # bits 56-61: in the high half
    lines.append(f"fixed part: column shift 0; run-time: {name}(column_shift), the first column of B this MMA reads "
                 "(Table 45, bits 56-61) (E45)")
    fn = Function(name, (f"{name}(column_shift): the zero-column mask with B's columns shifted by column_shift",),
                  (("column_shift", 32),), tuple(stmts), fixed & _M32, ("|", fixed >> 32, hi_value))
    return DescriptorFunctions(name, 64, fixed, tuple(lines), (fn,))


# --------------------------------------------------------------------------------------------
# Serializers: one per language.


def emit_functions(what: TileDescriptor | Decoded | Report, fmt: Format, *, name: str | None = None,
                   stage_bytes: int | None = None, source: str | None = None, notes: Sequence[str] = ()) -> str:
    """Write a word's fixed part and run-time functions (:func:`descriptor_functions`) as source.

    Args:
        what, name, stage_bytes: as :func:`descriptor_functions`.
        fmt: ``cpp`` (``DESCGEN_HOST_DEVICE constexpr`` functions, C++14: C++11 when each is one
            return statement; a ``static_assert`` that the fixed part is what the functions build
            from), ``c`` (``static inline``, C99; C++11 compiled as C++); both inside an include
            guard named after their content, the standard on their first line (``emitters.NEEDS``),
            ``ptx`` (one commented ``{ ... }`` block per function, reading and writing the
            registers it names), ``python`` (functions over ints, for building words at trace
            time; the checks raise ``ValueError``).
        source, notes: more comment lines, as :func:`descgen.emit`.

    Raises:
        UsageError: ``EMIT-FORMAT`` (hex and json have no functions), ``EMIT-NAME``, and as
            :func:`descriptor_functions`.
    """
    if fmt not in FUNCTION_FORMATS:
        raise usage_error("EMIT-FORMAT", "format", fmt, ", ".join(FUNCTION_FORMATS),
                          "functions are written as C, C++, PTX or Python")
    fns = descriptor_functions(what, name=name, stage_bytes=stage_bytes)
    for n in (fns.name, *(f.name for f in fns.functions)):
        identifier(n, fmt)
    header = f"generated by descgen {__version__}" + (f": {source}" if source else "")
    return _WRITERS[fmt](fns, (*fns.comment, header, *notes))


_PY_OPS = {"/": "//"}


def _c_expr(e: Expr, py: bool = False) -> str:
    if isinstance(e, str):
        return e
    if isinstance(e, int):
        text = f"{e:#x}" if e > 9 else str(e)
        return text if py else text + "u"
    op, a, b = e
    text = f"({_c_expr(a, py)} {_PY_OPS.get(op, op) if py else op} {_c_expr(b, py)})"
    if py and op in ("+", "-", "*", "<<"):
        return f"({text} & 0xFFFFFFFF)"  # C's uint32_t arithmetic
    return text


def _c_string(text: str) -> str:
    return '"' + text.encode("ascii", "replace").decode().replace("\\", "\\\\").replace('"', '\\"') + '"'


_HOST_DEVICE = """#ifndef DESCGEN_HOST_DEVICE
#if defined(__CUDACC__)
#define DESCGEN_HOST_DEVICE __host__ __device__
#else
#define DESCGEN_HOST_DEVICE
#endif
#endif"""


def _c_like(fns: DescriptorFunctions, lines: Sequence[str], cpp: bool) -> str:
    fmt: Format = "cpp" if cpp else "c"
    u32, u64 = ("std::uint32_t", "std::uint64_t") if cpp else ("uint32_t", "uint64_t")
    word = u64 if fns.width == 64 else u32
    suffix = "ull" if fns.width == 64 else "u"
    fixed = f"{fns.name}_fixed" if cpp else f"{fns.name}_FIXED".upper()
    identifier(fixed, fmt)
    out = ["#include <cstdint>" if cpp else "#include <stdint.h>"]
    if fns.functions:  # the checks print and trap
        out[0] += "\n#include <cstdio>\n#include <cstdlib>" if cpp else "\n#include <stdio.h>\n#include <stdlib.h>"
        out += ["", CHECK_MACRO, *(["", _HOST_DEVICE] if cpp else [])]
    out += ["", *comment(lines, fmt)]
    value = f"0x{fns.fixed:0{fns.width // 4}x}"
    out.append(f"constexpr {word} {fixed} = {value}{suffix};" if cpp else f"#define {fixed} UINT{fns.width}_C({value})")

    def cast(t: str, e: str) -> str:
        return f"static_cast<{t}>({e})" if cpp else f"({t})({e})"

    for fn in fns.functions:
        params = ", ".join(f"{u64 if bits == 64 else u32} {p}" for p, bits in fn.params)
        head = f"DESCGEN_HOST_DEVICE constexpr {word}" if cpp else f"static inline {word}"
        out += ["", *comment(fn.doc, fmt), f"{head} {fn.name}({params}) {{"]
        for s in fn.body:
            if isinstance(s, Check):
                out.append(f"    DESCGEN_CHECK({_c_expr(s.cond)}, {_c_string(s.code)}, {_c_string(s.field)}, "
                           f"{_c_expr(s.value)}, {_c_string(s.allowed)});")
            elif isinstance(s, Split):
                out.append(f"    const {u32} {s.lo} = {cast(u32, s.desc)};")
                out.append(f"    const {u32} {s.hi} = {cast(u32, f'{s.desc} >> 32')};")
            else:
                out.append(f"    const {u32} {s.name} = {_c_expr(s.expr)};")
        lo = _c_expr(fn.lo)
        result = lo if fn.hi is None else f"({cast(u64, _c_expr(fn.hi))} << 32) | {lo}"
        out += [f"    return {result};", "}"]
    if cpp and fns.functions:
        first = fns.functions[0]
        args, want = first.example or ((0,) * len(first.params), fns.fixed)
        given = ", ".join(f"{a:#x}u" if a else "0u" for a in args)
        value = fixed if want == fns.fixed else f"0x{want:x}ull"
        out += ["", f"static_assert({first.name}({given}) == {value}, \"{first.name} builds on the fixed part\");"]
    needs = "c_functions" if not cpp else "cpp_functions" if any(fn.body for fn in fns.functions) else "cpp_return"
    return guarded("\n".join(out), fmt, [fns.name], NEEDS[needs if fns.functions else fmt])


def _python(fns: DescriptorFunctions, lines: Sequence[str]) -> str:
    fixed = identifier(f"{fns.name}_FIXED".upper(), "python")
    out = [*comment(lines, "python"), f"{fixed} = 0x{fns.fixed:0{fns.width // 4}x}"]
    if fns.functions:
        out += ["", "", "def _descgen_check(cond, code, field, value, allowed):",
                "    if not cond:",
                "        raise ValueError(f\"descgen: {code}: {field} = {value} ({value:#x}), allowed {allowed}\")"]
    for fn in fns.functions:
        out += ["", "", *comment(fn.doc, "python"), f"def {fn.name}({', '.join(p for p, _ in fn.params)}):"]
        for s in fn.body:
            if isinstance(s, Check):
                out.append(f"    _descgen_check({_c_expr(s.cond, True)}, {s.code!r}, {s.field!r}, "
                           f"{_c_expr(s.value, True)}, {s.allowed!r})")
            elif isinstance(s, Split):
                out += [f"    {s.lo} = {s.desc} & 0xFFFFFFFF", f"    {s.hi} = ({s.desc} >> 32) & 0xFFFFFFFF"]
            else:
                out.append(f"    {s.name} = {_c_expr(s.expr, True)}")
        lo = _c_expr(fn.lo, True)
        out.append(f"    return {lo}" if fn.hi is None else f"    return ({_c_expr(fn.hi, True)} << 32) | {lo}")
    return "\n".join(out)


_PTX_OPS = {"+": "add.u32", "-": "sub.u32", "*": "mul.lo.u32", "/": "div.u32", "%": "rem.u32", "&": "and.b32",
            "|": "or.b32", "<<": "shl.b32", ">>": "shr.b32"}


def _ptx(fns: DescriptorFunctions, lines: Sequence[str]) -> str:
    reg = identifier("%" + fns.name, "ptx")
    out = [*comment(lines, "ptx")]
    b = f"b{fns.width}"
    if not fns.functions:
        return "\n".join([*out, f"mov.{b} {reg}, 0x{fns.fixed:0{fns.width // 4}x};"])
    out.append("// no checks in PTX (ptxas has no preprocessor for a debug build): each block lists what it assumes; "
               "the masks keep every field in place")
    for fn in fns.functions:
        assumes = tuple(f"assumes {c.field}: {c.allowed} ({c.code})"
                        for c in fn.body if isinstance(c, Check))
        regs = {p: (reg if bits == 64 else identifier(f"{reg}_{p}", "ptx")) for p, bits in fn.params}
        ins = ", ".join(f"{regs[p]} (.b{bits})" for p, bits in fn.params)
        code: list[str] = []
        temps: list[str] = []

        def operand(e: Expr, to_reg: bool = False) -> str:
            if isinstance(e, str):
                return regs[e]
            if isinstance(e, int):
                text = f"{e:#x}"
                if not to_reg:
                    return text
                t = f"%dg_t{len(temps)}"
                temps.append(t)
                code.append(f"mov.b32 {t}, {text};")
                return t
            op, x, y = e
            if op not in _PTX_OPS:
                raise AssertionError(op)
            a = operand(x, to_reg=True)
            c = operand(y)
            t = f"%dg_t{len(temps)}"
            temps.append(t)
            code.append(f"{_PTX_OPS[op]} {t}, {a}, {c};")
            return t

        for s in fn.body:
            if isinstance(s, Split):
                regs[s.lo], regs[s.hi] = "%dg_lo", "%dg_hi"
                temps += ["%dg_lo", "%dg_hi"]
                code.append(f"mov.b64 {{%dg_lo, %dg_hi}}, {regs[s.desc]};")
            elif isinstance(s, Let):
                regs[s.name] = operand(s.expr, to_reg=True)
        lo = operand(fn.lo, to_reg=True)
        if fn.hi is None:
            code.append(f"mov.b32 {reg}, {lo};")
        else:
            code.append(f"mov.b64 {reg}, {{{lo}, {operand(fn.hi, to_reg=True)}}};")
        out += ["", *comment((*fn.doc, f"reads {ins}; writes {reg} (.{b}): declare them in the kernel", *assumes),
                             "ptx"),
                "{", f"    .reg .b32 {', '.join(dict.fromkeys(temps))};", *("    " + c for c in code), "}"]
    return "\n".join(out)


_WRITERS: dict[str, Callable[[DescriptorFunctions, Sequence[str]], str]] = {
    "c": lambda f, lines: _c_like(f, lines, False),
    "cpp": lambda f, lines: _c_like(f, lines, True),
    "ptx": _ptx,
    "python": _python,
}
