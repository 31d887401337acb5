"""The 64-bit shared memory matrix descriptor of Hopper's ``wgmma.mma_async`` (``sm_90a``, PTX ISA
9.1 §9.7.15.5.1.2.2): the second family of the shared memory descriptor, beside tcgen05's
(Table 40, :mod:`descgen.words.smem`).

The same generic engine reads ``tables/wgmma_smem_desc.toml``; the rules are the shared memory
descriptor's own (``SMEM-BASE-OFFSET-*`` in ``tables/rules.toml``), those whose fields this family
has (it has no LBO mode), with its own swizzle members' pattern boundaries. The bits the section
does not list (14-15, 30-31, 46-48, 52-61) are reserved (errata E44): bit 46 set, tcgen05's
version bit, is an error here.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..rules.checks import enforce, smem_encode_findings, smem_findings
from ..model.context import context, no_context
from ..model.engine import Decoded, Plan, Word, WordInput, plan
from ..model.facts import swizzle_derived
from ..model.report import NotChecked, Report
from ..core.types import WgmmaSwizzle

__all__ = ["LAYOUT", "encode_wgmma_smem", "decode_wgmma_smem", "validate_wgmma_smem", "checked_wgmma_smem"]

#: The family's layout (``tables/wgmma_smem_desc.toml``).
LAYOUT = "wgmma_smem_desc"


def encode_wgmma_smem(
    *,
    start_address: int,
    lbo: int,
    sbo: int,
    swizzle: WgmmaSwizzle,
    base_offset: int = 0,
    pattern_start: int | None = None,
    check: bool = True,
) -> Word:
    """Encode a 64-bit wgmma shared memory matrix descriptor (§9.7.15.5.1.2.2, ``sm_90a``).

    Args:
        start_address: matrix start address in shared memory, in **bytes**; 16-byte aligned,
            below 256 KiB (stored as ``(x & 0x3FFFF) >> 4`` in bits 0-13).
        lbo: leading dimension byte offset, in **bytes** (16-byte aligned, bits 16-29;
            §9.7.15.5.1.2.1.1). K-major swizzled layouts do not use it ("assumed to be 1"): pass
            16 (encodes 1) or 0.
        sbo: stride dimension byte offset, in **bytes** (16-byte aligned, bits 32-45;
            §9.7.15.5.1.2.1.2).
        swizzle: ``"none"``, ``"128B"``, ``"64B"`` or ``"32B"`` (bits 62-63: codes 0, 1, 2, 3;
            tcgen05 writes the same bit pattern one bit lower in a 3-bit field: errata E44).
        base_offset: 0-7 (bits 49-51): 0 when the swizzle pattern starts on its boundary
            (1024/512/256 bytes for 128B/64B/32B), else ``(pattern start >> 7) & 7``; not used
            without swizzling.
        pattern_start: byte address where the swizzle pattern starts, optional; with it the base
            offset must be the one the section's table gives.
        check: when False, values that break a rule but still fit their bits are encoded anyway
            (a :class:`descgen.Word` with the findings).

    Bits 14-15, 30-31, 46-48 and 52-61 are 0 (errata E44).

    Returns:
        The descriptor, an unsigned 64-bit integer, as a :class:`descgen.Word` (``.findings``: what
        the rules warn or note, empty when clean).

    Raises:
        EncodeError: a value is misaligned, out of range or not a wgmma swizzle mode (codes
            ``WGMMA-SMEM-*``), or breaks a rule (``SMEM-BASE-OFFSET-TABLE41``...).
        UsageError: a context value that is not one.
    """
    p = _plan()
    values = {"start_address": start_address, "lbo": lbo, "sbo": sbo, "swizzle": swizzle, "base_offset": base_offset}
    if check:
        try:
            word = p.pack(values)
        except (KeyError, TypeError):
            word = p.encode(values)
        found = smem_encode_findings(values, None, pattern_start, LAYOUT)
        return enforce(word, found, check, p.context) if found else word
    word = p.encode(values, check=check)
    return enforce(word, smem_findings(values, context(pattern_start=pattern_start), (), LAYOUT)[0], check, p.context)


def _plan() -> Plan:
    return plan(LAYOUT)


def decode_wgmma_smem(word: WordInput) -> Decoded:
    """Decode a 64-bit wgmma shared memory matrix descriptor (§9.7.15.5.1.2.2). Total: any
    64-bit word decodes.

    Addresses and offsets come back in bytes. Findings: set bits among 14-15, 30-31, 46-48,
    52-61 (``WGMMA-SMEM-RESERVED-*``, errata E44; bit 46 set means a tcgen05 descriptor), and the
    rules that need no context (``SMEM-BASE-OFFSET-IGNORED``, ``SMEM-BASE-OFFSET-BOUNDARY``).
    ``.derived`` holds the swizzle span and its pattern boundary, in bytes.

    ``word``: an unsigned 64-bit integer, a :class:`descgen.KnownBits`, its 8 bytes as they lie in
    memory (little-endian) or a ``bitstring.Bits`` of length 64 (MSB first).

    Raises:
        WordError: ``word`` is negative or wider than 64 bits, or bytes / Bits of another length
            (``WGMMA-SMEM-WORD-RANGE``).
    """
    return checked_wgmma_smem(word, no_context())[0]


def validate_wgmma_smem(word: WordInput, *, pattern_start: int | None = None, **more: Any) -> Report:
    """Check a 64-bit wgmma shared memory matrix descriptor against every rule that applies to it.

    Args:
        word: the descriptor (unsigned 64-bit), or its 8 bytes (little-endian) or a Bits of
            length 64, as :func:`decode_wgmma_smem` takes it.
        pattern_start: byte address where the operand's swizzle pattern starts; with it the base
            offset is checked exactly (``SMEM-BASE-OFFSET-TABLE41``).
        more: other context names are accepted and ignored (no wgmma descriptor rule reads the
            target: ``arch`` may name any, ``sm_90a`` being the one that reads this word).

    Returns:
        A :class:`descgen.Report` (``report.decoded["wgmma_smem"]``).

    Raises:
        UsageError: a context value that is not one. WordError: not an unsigned 64-bit integer
            (nor 8 bytes, nor a Bits of length 64).
    """
    more.pop("arch", None)
    ctx = context(pattern_start=pattern_start, **more)
    d, skipped = checked_wgmma_smem(word, ctx)
    return Report(d.findings, skipped, {"wgmma_smem": d}, ctx)


def checked_wgmma_smem(word: WordInput, ctx: Mapping[str, Any]) -> tuple[Decoded, tuple[NotChecked, ...]]:
    """:func:`validate_wgmma_smem`'s work under a normalized context: the word decoded once with
    every finding, and the rules not checked."""
    p = _plan()
    read = p.read(word)
    derived = swizzle_derived(read.values["swizzle"], LAYOUT)
    found, skipped = smem_findings(read.values, ctx, read.unknown, LAYOUT)
    return p.result(read, found, derived), tuple(skipped)
