"""Tensor memory addresses (PTX ISA 9.1 §9.7.16.1): the fourth word of the generic engine.

A tensor memory address is 32 bits: the lane index in bits 31-16 and the column index in bits
15-0 (§9.7.16.1.1, ``tables/taddr.toml``). The tensor memory of a CTA is 128 lanes x 512 columns
of 32-bit cells (§9.7.16.1), so a lane above 127 or a column above 511 is a finding of the
field's own range check (``TADDR-LANE-RANGE``, ``TADDR-COLUMN-RANGE``). The rules that need
the context the address is used in are catalog rules (``tables/rules.toml``):

- ``TADDR-WARP-LANES``: with ``tcgen05.ld``/``tcgen05.st``, warp *w* of a warpgroup may access
  lanes ``32w .. 32w + 31`` only (§9.7.16.8.1); needs ``warp``.
- ``TADDR-ALLOC-COLUMNS``: ``tcgen05.alloc``'s nCols is a power of 2 in [32, 512]
  (§9.7.16.1.2, §9.7.16.7.1); needs ``alloc_columns``.
- ``TADDR-COLUMN-ALLOC``: the column lies inside the allocation; needs ``alloc_columns`` and
  ``alloc_base`` (the address ``tcgen05.alloc`` wrote; never guessed, errata E30).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Iterable

from .engine import Decoded, plan
from .errors import Finding
from .rules import Constraints, Report, Rule, _warp, catalog, context
from .validate import _impl, _run, enforce

__all__ = ["encode_taddr", "decode_taddr", "validate_taddr", "warp_lanes", "lane_warp", "alloc_sizes", "check_alloc",
           "tmem_shape", "warps_per_warpgroup"]

_LAYOUT = "taddr"
#: E31: CUTLASS keeps a scale factor's byte in bits 30-31 of scale-factor tensor memory addresses.
#: Only a word with those bits set is such an address, so only its lane finding carries the note
#: (a lane of 128 is just out of range).
_SF_BYTE_LO = 30
_SF_BYTE_NOTE = ("CUTLASS keeps a scale factor's byte (its SF ID) in bits 30-31 of scale-factor tensor memory addresses "
                 "and moves it into the instruction descriptor's SF ID fields (E31)")


@functools.cache
def tmem_shape() -> tuple[int, int]:
    """(lanes, columns) of a CTA's tensor memory: (128, 512), from the address layout's field
    domains (§9.7.16.1)."""
    lay = plan(_LAYOUT).layout
    return lay.field("lane").domain(None).hi + 1, lay.field("column").domain(None).hi + 1


def warps_per_warpgroup() -> int:
    """4: the warps of a warpgroup, each with its quarter of the lanes (§9.7.16.8.1)."""
    return int(plan(_LAYOUT).layout.extra["access"]["warps"])


_warps = warps_per_warpgroup


def warp_lanes(warp: int) -> range:
    """The lanes warp ``warp`` of a warpgroup (its warp ID % 4, 0-3) may access with
    ``tcgen05.ld``/``tcgen05.st``: ``range(32 * warp, 32 * warp + 32)`` (§9.7.16.8.1). Every
    warp may access every column.

    Raises:
        UsageError: ``warp`` is not 0-3 (``CONTEXT-WARP``).
    """
    w = _warp(warp if warp is not None else "None")  # None is no warp here: CONTEXT-WARP
    per = tmem_shape()[0] // _warps()
    return range(per * w, per * (w + 1))


def lane_warp(lane: int) -> int | None:
    """The warp of a warpgroup (0-3) whose quarter holds ``lane``, or None for a lane that does
    not exist (128 or more) (§9.7.16.8.1)."""
    lanes = tmem_shape()[0]
    if isinstance(lane, bool) or not isinstance(lane, int) or not 0 <= lane < lanes:
        return None
    return lane // (lanes // _warps())


@functools.cache
def alloc_sizes() -> tuple[int, ...]:
    """Every legal ``tcgen05.alloc`` nCols: the powers of 2 from 32 to 512 (§9.7.16.7.1)."""
    spec = plan(_LAYOUT).layout.extra["alloc"]
    out, n = [], 1
    while n <= spec["max"]:
        if n >= spec["min"] and n % spec["unit"] == 0:
            out.append(n)
        n *= 2
    return tuple(out)


def check_alloc(ncols: int) -> tuple[Finding, ...]:
    """Check a ``tcgen05.alloc``/``dealloc`` column count: the ``TADDR-ALLOC-COLUMNS`` finding
    when ``ncols`` is not a power of 2 in [32, 512], else ``()`` (§9.7.16.1.2, §9.7.16.7.1).

    Raises:
        UsageError: ``ncols`` is not a non-negative integer (``CONTEXT-ALLOC-COLUMNS``).
    """
    n = context(alloc_columns=-1 if ncols is None else ncols)["alloc_columns"]  # None is no count: a usage error
    rule = catalog()["TADDR-ALLOC-COLUMNS"]
    return tuple(_alloc_columns(rule, {"alloc_columns": n}, None))  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# The rules (registered with descgen.validate; catalogued in tables/rules.toml).


def _describe(r: range) -> str:
    return f"{r.start}..{r.stop - 1}"


@_impl("TADDR-WARP-LANES")
def _warp_lanes(rule: Rule, v: dict[str, Any], c: Constraints) -> Iterable[Finding]:
    lane, warp = v["lane"], v["warp"]
    if lane_warp(lane) is None or lane in warp_lanes(warp):
        return ()  # a lane that does not exist is the field check's TADDR-LANE-RANGE
    return (rule.finding("lane", lane, _describe(warp_lanes(warp)),
                         f"lane {lane} is in warp {lane_warp(lane)}'s quarter, the access is by warp {warp}"),)


@_impl("TADDR-ALLOC-COLUMNS")
def _alloc_columns(rule: Rule, v: dict[str, Any], c: Constraints) -> Iterable[Finding]:
    n = v["alloc_columns"]
    if n in alloc_sizes():
        return ()
    return (rule.finding("alloc_columns", n, ", ".join(map(str, alloc_sizes())), f"nCols = {n}"),)


@_impl("TADDR-COLUMN-ALLOC")
def _column_alloc(rule: Rule, v: dict[str, Any], c: Constraints) -> Iterable[Finding]:
    n, base, column = v["alloc_columns"], v["alloc_base"], v["column"]
    columns = tmem_shape()[1]
    if n not in alloc_sizes():
        return ()  # TADDR-ALLOC-COLUMNS reports it
    if base + n > columns:
        return (rule.finding("alloc_base", base, f"0..{columns - n} for nCols = {n}",
                             f"an allocation of {n} columns from column {base} ends past column {columns - 1}"),)
    if not 0 <= column < columns or base <= column < base + n:
        return ()  # a column that does not exist is the field check's TADDR-COLUMN-RANGE
    return (rule.finding("column", column, f"{base}..{base + n - 1}",
                         f"column {column} is outside the {n} columns allocated from column {base}"),)


def taddr_findings(values: dict[str, Any], ctx: dict[str, Any]) -> tuple[list[Finding], tuple[Any, ...]]:
    """The catalog's taddr rules over logical values (decoded, or an encoder's arguments)."""
    return _run("taddr", {**values, **ctx}, ctx)


# --------------------------------------------------------------------------------------------
# API.


def _derived(d: Decoded) -> tuple[tuple[str, Any, str], ...]:
    warp = lane_warp(d.value("lane"))
    if warp is None:
        return ()
    return (("warp", warp, "of the warpgroup (tcgen05.ld/st)"), ("warp_lanes", _describe(warp_lanes(warp)), "lanes"))


def encode_taddr(lane: int, column: int, *, warp: int | None = None, alloc_columns: int | None = None,
                 alloc_base: int | None = None, check: bool = True) -> int:
    """Encode a 32-bit tensor memory address (§9.7.16.1.1): ``lane << 16 | column``.

    Args:
        lane: lane index (row), 0-127 (bits 31-16).
        column: column index (32-bit cells), 0-511 (bits 15-0).
        warp: the warp (within its warpgroup, 0-3) that accesses it with ``tcgen05.ld``/``st``,
            optional: the lane must then be in ``warp_lanes(warp)`` (§9.7.16.8.1).
        alloc_columns: nCols of the ``tcgen05.alloc`` the address lies in, optional: a power of
            2 in [32, 512] (§9.7.16.7.1).
        alloc_base: the address that ``tcgen05.alloc`` wrote (lane 0, its first column),
            optional; with ``alloc_columns`` the column must lie inside the allocation.
        check: when False, values that break a rule but still fit their bits are encoded anyway;
            the result is a :class:`descgen.Word` (an int) with the findings in ``.findings``.

    Returns:
        The address as an unsigned 32-bit integer; ``encode_taddr(32, 0) == 0x00200000``.

    Raises:
        EncodeError: a lane or column out of range, or a rule the context breaks (all findings).
        UsageError: a context value that is not one (``CONTEXT-WARP``, ``CONTEXT-ALLOC-BASE``...).
    """
    ctx = context(warp=warp, alloc_columns=alloc_columns, alloc_base=alloc_base)
    p = plan(_LAYOUT)
    values = {"lane": lane, "column": column}
    word = p.encode(values, check=check)
    return enforce(word, taddr_findings(values, ctx)[0], check, p.context)


def decode_taddr(word: int) -> Decoded:
    """Decode a 32-bit tensor memory address (§9.7.16.1.1). Total: any 32-bit word decodes.

    ``value("lane")`` (lanes) and ``value("column")`` (columns); findings when the lane is 128 or
    more or the column 512 or more. ``.derived`` holds ``warp`` (the warp of a warpgroup whose
    lane quarter holds the lane, §9.7.16.8.1) and ``warp_lanes`` (that quarter, e.g. ``"32..63"``).

    Raises:
        WordError: ``word`` is negative or wider than 32 bits.
    """
    p = plan(_LAYOUT)
    d = p.decode(word)
    if word >> _SF_BYTE_LO:  # CUTLASS's scale-factor address form: the lane finding says so (E31)
        d = dataclasses.replace(d, findings=tuple(
            dataclasses.replace(f, rule=f"{f.rule}; note: {_SF_BYTE_NOTE}") if f.field == "lane" else f for f in d.findings))
    return d.extended((), _derived(d))


def validate_taddr(word: int, *, warp: int | None = None, alloc_columns: int | None = None,
                   alloc_base: int | None = None, **more: Any) -> Report:
    """Check a tensor memory address against every rule, with the context it is used in.

    Args:
        word: the address (unsigned 32-bit).
        warp: the warp's ID within its warpgroup (0-3) for ``tcgen05.ld``/``st`` (§9.7.16.8.1).
        alloc_columns: nCols of its ``tcgen05.alloc`` (§9.7.16.7.1).
        alloc_base: the address ``tcgen05.alloc`` wrote (lane 0, the first column allocated).
        more: other context names are accepted and ignored: no taddr rule uses them.

    Context left as None is not guessed: rules that need it are listed in ``.not_checked``.

    Returns:
        A :class:`descgen.Report` (``report.decoded["taddr"]``).

    Raises:
        UsageError: a context value that is not one. WordError: not an unsigned 32-bit integer.
    """
    ctx = context(warp=warp, alloc_columns=alloc_columns, alloc_base=alloc_base, **more)
    d = decode_taddr(word)
    found, skipped = taddr_findings(d.values(), ctx)
    d = d.extended(tuple(found), d.derived)
    return Report(d.findings, tuple(skipped), {"taddr": d}, ctx)
