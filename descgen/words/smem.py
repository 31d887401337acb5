"""The 64-bit shared memory matrix descriptor (PTX ISA 9.1 §9.7.16.4.1, Tables 40-41)."""

from __future__ import annotations

import functools
from typing import Any, Mapping

from ..rules.checks import enforce, smem_encode_findings, smem_findings
from ..model.context import context, no_context
from ..model.engine import Decoded, FieldsRead, Plan, Word, WordInput, plan
from ..model.facts import swizzle_derived
from ..model.report import NotChecked, Report
from ..core.types import Arch, LboMode, Swizzle

__all__ = ["encode_smem", "decode_smem", "decode_fields", "validate_smem", "checked_smem"]


def encode_smem(
    *,
    start_address: int,
    lbo: int,
    sbo: int,
    swizzle: Swizzle,
    base_offset: int = 0,
    lbo_mode: LboMode = "relative",
    arch: Arch | None = None,
    pattern_start: int | None = None,
    check: bool = True,
) -> Word:
    """Encode a 64-bit shared memory descriptor (Table 40).

    Args:
        start_address: matrix start address in shared memory, in **bytes**; 16-byte aligned,
            below 256 KiB (stored as ``(x & 0x3FFFF) >> 4`` in bits 0-13).
        lbo: leading dimension byte offset, in **bytes** (16-byte aligned, bits 16-29), or with
            ``lbo_mode="absolute"`` the byte address of the second chunk (§9.7.16.3.1.2). For
            K-major swizzled layouts PTX ignores it ("assumed 1"): pass 16 (encodes 1) or 0.
        sbo: stride dimension byte offset, in **bytes** (16-byte aligned, bits 32-45).
        swizzle: ``"none"``, ``"128B_base32B"`` (128-byte swizzle with 32-byte atomicity),
            ``"128B"``, ``"64B"`` or ``"32B"`` (bits 61-63: codes 0, 1, 2, 4, 6).
        base_offset: 0-7 (bits 49-51): 0 when the swizzle pattern starts on its Table 41
            boundary (1024/512/256 bytes for 128B/64B/32B), else ``(pattern start >> 7) & 7``.
        lbo_mode: ``"relative"`` (byte offset) or ``"absolute"`` (byte address, sm_103a) (bit 52).
        arch: the target, optional (absolute LBO mode needs ``sm_103a``).
        pattern_start: byte address where the swizzle pattern starts, optional; with it the base
            offset must be the one Table 41 gives (see :func:`descgen.validate_smem`).
        check: when False, values that break a rule but still fit their bits are encoded anyway;
            the errors come back in the result's ``.findings``.

    Every rule :func:`descgen.validate_smem` checks runs; an error-severity finding raises.
    Bits 46-48 get the fixed constant 0b001; bits 14-15, 30-31 and 53-60 are 0.

    Returns:
        The descriptor, an unsigned 64-bit integer, as a :class:`descgen.Word`: ``.findings``
        holds what the rules warn or note (empty when clean), exactly as the validator reports it.

    Raises:
        EncodeError: a value is misaligned, out of range or not a known mode, or breaks a rule
            such as absolute LBO mode without 128B swizzling (all findings attached).
        UsageError: a context value that is not one.
    """
    p = _PLAN[0] if _PLAN else _plan()
    values = {
        "start_address": start_address,
        "lbo": lbo,
        "sbo": sbo,
        "swizzle": swizzle,
        "base_offset": base_offset,
        "lbo_mode": lbo_mode,
    }
    if check:
        try:
            word = p.pack(values)  # every value legal for its field (else encode says what is wrong)
        except (KeyError, TypeError):
            word = p.encode(values)
        found = smem_encode_findings(values, arch, pattern_start)  # the rules, run once per rule key
        return enforce(word, found, check, p.context) if found else word
    word = p.encode(values, check=check)
    return enforce(word, smem_findings(values, context(arch=arch, pattern_start=pattern_start))[0], check, p.context)


_PLAN: list[Plan] = []


def _plan() -> Plan:
    """Table 40's plan, looked up once per process (the encoder's hot path skips the cache call)."""
    _PLAN.append(plan("smem_desc"))
    return _PLAN[0]


def decode_smem(word: WordInput) -> Decoded:
    """Decode a 64-bit shared memory descriptor (Table 40). Total: any 64-bit word decodes.

    Addresses and offsets come back in bytes. Findings: non-zero bits 14-15/30-31 (not in
    Table 40), a wrong fixed constant in bits 46-48 (warning: some kernels leave bit 46 at 0)
    or 53-60, swizzle codes 3, 5, 7, and every rule that needs no context (absolute LBO mode
    restrictions, base offset warnings); :func:`descgen.validate_smem` adds the context rules. ``.derived`` holds the
    swizzle span and its Table 41
    pattern boundary, in bytes.

    ``word``: an unsigned 64-bit integer, a :class:`descgen.KnownBits`, its 8 bytes as they lie in
    memory (little-endian) or a ``bitstring.Bits`` of length 64 (MSB first).

    Raises:
        WordError: ``word`` is negative or wider than 64 bits, or bytes / Bits of another length
            (``SMEM-WORD-RANGE``).
    """
    return checked_smem(word, no_context())[0]


def decode_fields(word: WordInput) -> Decoded:
    """Decode with the field checks only, plus the derived swizzle span and pattern boundary."""
    p, read, derived = _read(word)
    return p.result(read, (), derived)


def _read(word: WordInput) -> tuple[Plan, FieldsRead, tuple[tuple[str, Any, str], ...]]:
    """Table 40's plan, the word's fields read with it, and the derived values
    :func:`decode_fields` adds to them."""
    p = _PLAN[0] if _PLAN else _plan()
    read = p.read(word)
    return p, read, swizzle_derived(read.fields[_swizzle_at(p)].value)


@functools.cache
def _swizzle_at(p: Plan) -> int:
    """The swizzle field's place among a decoded word's fields (the layout's field order)."""
    return [f.name for f in p.layout.fields].index("swizzle")


def validate_smem(word: WordInput, *, arch: Arch | None = None, pattern_start: int | None = None,
                  **more: Any) -> Report:
    """Check a 64-bit shared memory descriptor against every rule that applies to it.

    Args:
        word: the descriptor (unsigned 64-bit), or its 8 bytes (little-endian) or a Bits of
            length 64, as :func:`decode_smem` takes it.
        arch: the target (absolute LBO mode needs ``sm_103a``).
        pattern_start: byte address where the operand's swizzle pattern starts; with it the base
            offset is checked exactly against Table 41.
        more: other context names are accepted (``cta_group``...) and ignored: no smem rule uses them.

    Returns:
        A :class:`descgen.Report` (``report.decoded["smem"]``).

    Raises:
        UsageError: a context value that is not one. WordError: not an unsigned 64-bit integer
            (nor 8 bytes, nor a Bits of length 64).
    """
    ctx = context(arch=arch, pattern_start=pattern_start, **more)
    d, skipped = checked_smem(word, ctx)
    return Report(d.findings, skipped, {"smem": d}, ctx)


def checked_smem(word: WordInput, ctx: Mapping[str, Any]) -> tuple[Decoded, tuple[NotChecked, ...]]:
    """:func:`validate_smem`'s work under a normalized context (:func:`descgen.model.context.context`):
    the word decoded once with every finding, and the rules not checked."""
    p, read, derived = _read(word)
    found, skipped = smem_findings(read.values, ctx, read.unknown)
    return p.result(read, found, derived), tuple(skipped)
