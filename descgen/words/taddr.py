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

from typing import Any

from ..rules.checks import alloc_findings, enforce, taddr_findings
from ..model.context import context
from ..model.engine import Decoded, FieldsRead, Word, WordInput, plan
from ..core.errors import Finding
from ..model.facts import alloc_sizes, describe_range, lane_warp, tmem_shape, warp_lanes, warps_per_warpgroup
from ..model.report import Report

__all__ = ["encode_taddr", "decode_taddr", "validate_taddr", "warp_lanes", "lane_warp", "alloc_sizes", "check_alloc",
           "tmem_shape", "warps_per_warpgroup"]

_LAYOUT = "taddr"
#: E31: CUTLASS keeps a scale factor's byte in bits 30-31 of scale-factor tensor memory addresses.
#: Only a word with those bits set is such an address, so only its lane finding carries the note
#: (a lane of 128 is just out of range).
_SF_BYTE_LO = 30
_SF_BYTE_NOTE = ("CUTLASS keeps a scale factor's byte (its SF ID) in bits 30-31 of scale-factor tensor memory "
                 "addresses and moves it into the instruction descriptor's SF ID fields (E31)")


def check_alloc(ncols: int) -> tuple[Finding, ...]:
    """Check a ``tcgen05.alloc``/``dealloc`` column count: the ``TADDR-ALLOC-COLUMNS`` finding
    when ``ncols`` is not a power of 2 in [32, 512], else ``()`` (§9.7.16.1.2, §9.7.16.7.1).

    Raises:
        UsageError: ``ncols`` is not a non-negative integer (``CONTEXT-ALLOC-COLUMNS``).
    """
    n = context(alloc_columns=-1 if ncols is None else ncols)["alloc_columns"]  # None is no count: a usage error
    return alloc_findings(n)


# --------------------------------------------------------------------------------------------
# API.


def _derived(values: dict[str, Any]) -> tuple[tuple[str, Any, str], ...]:
    warp = lane_warp(values["lane"])
    if warp is None:
        return ()
    return (("warp", warp, "of the warpgroup (tcgen05.ld/st)"),
            ("warp_lanes", describe_range(warp_lanes(warp)), "lanes"))


def encode_taddr(lane: int, column: int, *, warp: int | None = None, alloc_columns: int | None = None,
                 alloc_base: int | None = None, check: bool = True) -> Word:
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
            the errors come back in the result's ``.findings``.

    Returns:
        The address, an unsigned 32-bit integer, as a :class:`descgen.Word` (``.findings``: what
        the rules warn or note, empty when clean); ``encode_taddr(32, 0) == 0x00200000``.

    Raises:
        EncodeError: a lane or column out of range, or a rule the context breaks (all findings).
        UsageError: a context value that is not one (``CONTEXT-WARP``, ``CONTEXT-ALLOC-BASE``...).
    """
    ctx = context(warp=warp, alloc_columns=alloc_columns, alloc_base=alloc_base)
    p = plan(_LAYOUT)
    values = {"lane": lane, "column": column}
    word = p.encode(values, check=check)
    return enforce(word, taddr_findings(values, ctx)[0], check, p.context)


def decode_taddr(word: WordInput) -> Decoded:
    """Decode a 32-bit tensor memory address (§9.7.16.1.1). Total: any 32-bit word decodes.

    ``value("lane")`` (lanes) and ``value("column")`` (columns); findings when the lane is 128 or
    more or the column 512 or more. ``.derived`` holds ``warp`` (the warp of a warpgroup whose
    lane quarter holds the lane, §9.7.16.8.1) and ``warp_lanes`` (that quarter, e.g. ``"32..63"``).

    ``word``: an unsigned 32-bit integer, its 4 bytes as they lie in memory (little-endian) or a
    ``bitstring.Bits`` of length 32 (MSB first).

    Raises:
        WordError: ``word`` is negative or wider than 32 bits, or bytes / Bits of another length
            (``TADDR-WORD-RANGE``).
    """
    read = _read(word)
    return plan(_LAYOUT).result(read, (), _derived(read.values))


def _read(word: WordInput) -> FieldsRead:
    """The address's fields read (:meth:`descgen.model.engine.Plan.read`), with CUTLASS's scale-factor
    form noted on the lane finding."""
    read = plan(_LAYOUT).read(word)
    if read.word >> _SF_BYTE_LO:  # CUTLASS's scale-factor address form: the lane finding says so (E31)
        read = read._replace(findings=tuple(
            Finding(f.code, f.severity, f.field, f.value, f.allowed, f"{f.rule}; note: {_SF_BYTE_NOTE}", f.source)
            if f.field == "lane" else f for f in read.findings))
    return read


def validate_taddr(word: WordInput, *, warp: int | None = None, alloc_columns: int | None = None,
                   alloc_base: int | None = None, **more: Any) -> Report:
    """Check a tensor memory address against every rule, with the context it is used in.

    Args:
        word: the address (unsigned 32-bit), or its 4 bytes (little-endian) or a Bits of length
            32, as :func:`decode_taddr` takes it.
        warp: the warp's ID within its warpgroup (0-3) for ``tcgen05.ld``/``st`` (§9.7.16.8.1).
        alloc_columns: nCols of its ``tcgen05.alloc`` (§9.7.16.7.1).
        alloc_base: the address ``tcgen05.alloc`` wrote (lane 0, the first column allocated).
        more: other context names are accepted and ignored: no taddr rule uses them.

    Context left as None is not guessed: rules that need it are listed in ``.not_checked``.

    Returns:
        A :class:`descgen.Report` (``report.decoded["taddr"]``).

    Raises:
        UsageError: a context value that is not one. WordError: not an unsigned 32-bit integer
            (nor 4 bytes, nor a Bits of length 32).
    """
    ctx = context(warp=warp, alloc_columns=alloc_columns, alloc_base=alloc_base, **more)
    read = _read(word)
    found, skipped = taddr_findings(read.values, ctx)
    d = plan(_LAYOUT).result(read, found, _derived(read.values))
    return Report(d.findings, tuple(skipped), {"taddr": d}, ctx)
