"""The 64-bit zero-column mask descriptor and the N-bit mask it generates (PTX ISA 9.1 §9.7.16.4.3).

Semantics follow the four worked examples after Table 45 (docs/spec-errata.md, E3 and E4): sub-mask
*i* is the periodic pattern that starts with value ``first_span[i]``, made of runs of
``use_span`` zeros (columns of B used) and ``skip_span`` ones (columns forced to zero), with its
first ``start_count[i]`` bits dropped; the sub-masks lie side by side over N. Non-Zero Mask = 0
gives an all-zero mask. Column Shift changes which B columns are read, not the mask.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..model.catalog import usage_error
from ..rules.checks import enforce, zcm_encode_findings, zcm_findings
from ..model.context import context, no_context
from ..model.engine import Decoded, Plan, Word, WordInput, hex_bits, plan
from ..model.facts import submask_counts
from ..model.report import NotChecked, Report

__all__ = ["encode_zcm", "decode_zcm", "validate_zcm", "checked_zcm", "zcm_mask", "zcm_submasks", "submask_counts",
           "mask_info", "binary_runs"]


def encode_zcm(
    *,
    start_count: Sequence[int] = (0, 0, 0, 0),
    first_span: Sequence[int] = (0, 0, 0, 0),
    nonzero_mask: bool = True,
    skip_span: int,
    use_span: int,
    column_shift: int = 0,
    m: int | None = None,
    n: int | None = None,
    ws: bool | None = None,
    check: bool = True,
) -> Word:
    """Encode a 64-bit zero-column mask descriptor (Table 45).

    Args:
        start_count: (sc0, sc1, sc2, sc3), 0-255 each: mask bits dropped from the start of each
            sub-mask (bits 0-31).
        first_span: (fs0, fs1, fs2, fs3), 0 or 1 each: the first value of each sub-mask; 0 starts
            with used columns, 1 with zeroed columns (bits 32-35).
        nonzero_mask: False makes the generated mask all zeros (bit 39).
        skip_span: run length of zeroed columns (mask bits 1), a **count** 1-256 (stored - 1,
            bits 40-47).
        use_span: run length of used columns (mask bits 0), a **count** 1-256 (stored - 1,
            bits 48-55).
        column_shift: columns of B to shift by, 0-32 (16 at most for M = 32; bits 56-61).
        m, n, ws: the MMA's M and N and whether it is ``.ws``, optional (see
            :func:`descgen.validate_zcm`): the column shift limit and sub-mask use depend on M.
        check: when False, values that break a rule but still fit their bits are encoded anyway;
            the errors come back in the result's ``.findings``.

    Returns:
        The descriptor, an unsigned 64-bit integer, as a :class:`descgen.Word`: ``.findings``
        holds what the rules warn or note (empty when clean), exactly as the validator reports it.

    Raises:
        EncodeError: a value is out of range, or breaks a rule for the given M (all findings attached).
        UsageError: start_count / first_span do not have four entries; a bad context value.
    """
    if ((start_count.__class__ is not tuple or len(start_count) != 4)
            or (first_span.__class__ is not tuple or len(first_span) != 4)):
        for name, seq in (("start_count", start_count), ("first_span", first_span)):
            if isinstance(seq, (str, bytes)) or not isinstance(seq, Sequence) or len(seq) != 4:
                raise usage_error(f"ZCM-{name.upper().replace('_', '-')}-LENGTH", name, seq,
                                  "four integers (sub-masks 0-3)", "Table 45 has one per sub-mask")
    values = {"nonzero_mask": nonzero_mask, "skip_span": skip_span, "use_span": use_span, "column_shift": column_shift,
              "start_count_0": start_count[0], "start_count_1": start_count[1], "start_count_2": start_count[2],
              "start_count_3": start_count[3], "first_span_0": first_span[0], "first_span_1": first_span[1],
              "first_span_2": first_span[2], "first_span_3": first_span[3]}
    p = _PLAN[0] if _PLAN else _plan()
    if check:
        try:
            word = p.pack(values)  # every value legal for its field (else encode says what is wrong)
        except (KeyError, TypeError):
            word = p.encode(values)
        found = zcm_encode_findings(values, m, n, ws)  # the rules, run once per rule key
        return enforce(word, found, check, p.context) if found else word
    word = p.encode(values, check=check)
    return enforce(word, zcm_findings(values, context(m=m, n=n, ws=ws))[0], check, p.context)


_PLAN: list[Plan] = []


def _plan() -> Plan:
    """Table 45's plan, looked up once per process (the encoder's hot path skips the cache call)."""
    _PLAN.append(plan("zcm_desc"))
    return _PLAN[0]


def decode_zcm(word: WordInput) -> Decoded:
    """Decode a 64-bit zero-column mask descriptor (Table 45). Total: any 64-bit word decodes.

    Spans come back as column counts (raw + 1). Findings: reserved bits 36-38 / 62-63 set,
    a column shift above 32.

    ``word``: an unsigned 64-bit integer, a :class:`descgen.KnownBits`, its 8 bytes as they lie in
    memory (little-endian) or a ``bitstring.Bits`` of length 64 (MSB first).

    Raises:
        WordError: ``word`` is negative or wider than 64 bits, or bytes / Bits of another length
            (``ZCM-WORD-RANGE``).
    """
    return checked_zcm(word, no_context())[0]


def validate_zcm(word: WordInput, *, m: int | None = None, n: int | None = None, ws: bool | None = None,
                 **more: Any) -> Report:
    """Check a 64-bit zero-column mask descriptor against every rule that applies to it.

    Args:
        word: the descriptor (unsigned 64-bit), or its 8 bytes (little-endian) or a Bits of
            length 64, as :func:`decode_zcm` takes it.
        m, n: the instruction descriptor's M and N (sub-mask break-up, column shift limit).
        ws: the instruction is ``tcgen05.mma.ws`` (the only one that takes this operand).
        more: other context names are accepted and ignored.

    Returns:
        A :class:`descgen.Report` (``report.decoded["zcm"]``).

    Raises:
        UsageError: a context value that is not one. WordError: not an unsigned 64-bit integer
            (nor 8 bytes, nor a Bits of length 64).
    """
    ctx = context(m=m, n=n, ws=ws, **more)
    d, skipped = checked_zcm(word, ctx)
    return Report(d.findings, skipped, {"zcm": d}, ctx)


def checked_zcm(word: WordInput, ctx: Mapping[str, Any]) -> tuple[Decoded, tuple[NotChecked, ...]]:
    """:func:`validate_zcm`'s work under a normalized context (:func:`descgen.model.context.context`):
    the word decoded once with every finding, and the rules not checked."""
    p = plan("zcm_desc")
    read = p.read(word)
    found, skipped = zcm_findings(read.values, ctx, read.unknown)
    return p.result(read, found), tuple(skipped)


def zcm_submasks(word: int, m: int, n: int) -> tuple[int, ...]:
    """The sub-masks the descriptor generates for an MMA of shape M x N (table after Table 45).

    Returns one ``n // count``-bit integer per sub-mask (4, 2 or 1 for M = 32, 64, 128); bit j
    is column j of that sub-mask's part of B, 1 = column forced to zero.

    Raises:
        WordError: ``word`` is not an unsigned 64-bit integer.
        UsageError: M is not 32, 64 or 128, or N is not a positive multiple of the sub-mask count
            (at most 256).
    """
    counts = submask_counts()
    count = counts.get(m) if isinstance(m, int) and not isinstance(m, bool) else None
    if count is None:
        raise usage_error("ZCM-M-RANGE", "m", m, ", ".join(map(str, sorted(counts))), f"M = {m!r}")
    if isinstance(n, bool) or not isinstance(n, int) or not 0 < n <= 256 or n % count:
        raise usage_error("ZCM-N-RANGE", "n", n, f"1..256, a multiple of {count}",
                          f"M = {m} splits the N-bit mask into {count} equal sub-masks")
    width = n // count
    v = plan("zcm_desc").read(word).values
    if not v["nonzero_mask"]:
        return (0,) * count
    use, skip = v["use_span"], v["skip_span"]
    period = use + skip
    out = []
    for i in range(count):
        start, ones_first = v[f"start_count_{i}"], v[f"first_span_{i}"]
        # one period of the pattern, column 0 first: runs of skip ones / use zeros
        pattern = "1" * skip + "0" * use if ones_first else "0" * use + "1" * skip
        start %= period
        columns = (pattern * ((start + width) // period + 1))[start:start + width]
        out.append(int(columns[::-1], 2) if width else 0)
    return tuple(out)


def zcm_mask(word: int, m: int, n: int) -> int:
    """The N-bit zero-column mask: bit j is column j of B, 1 = column forced to zero.

    Sub-mask *i* covers columns [i*N/c, (i+1)*N/c - 1] for c = 1, 2, 4 sub-masks at M = 128, 64, 32.

    Raises:
        WordError, UsageError: as :func:`zcm_submasks`.
    """
    parts = zcm_submasks(word, m, n)
    width = n // len(parts)
    mask = 0
    for i, part in enumerate(parts):
        mask |= part << (i * width)
    return mask


def binary_runs(value: int, nbits: int) -> str:
    """``value`` in binary, MSB left, runs of equal bits separated by spaces, like the PTX
    examples after Table 45: ``0b111 0000 111 0000``."""
    bits = f"{value:0{nbits}b}" if nbits else ""
    runs: list[str] = []
    for b in bits:
        if runs and runs[-1][-1] == b:
            runs[-1] += b
        else:
            runs.append(b)
    return "0b" + " ".join(runs)


def mask_info(word: int, m: int, n: int) -> dict[str, Any]:
    """The N-bit zero-column mask of a zcm word for an M x N MMA, JSON-ready (hex strings).

    ``submasks[i]`` covers B columns ``columns[0]..columns[1]``; bit j of a sub-mask is its j-th
    column, 1 = column forced to zero.

    Raises:
        UsageError: M is not 32/64/128 or N does not split into the sub-masks.
    """
    parts = zcm_submasks(word, m, n)
    mask = zcm_mask(word, m, n)
    width = n // len(parts)
    return {
        "m": m,
        "n": n,
        "mask": hex_bits(mask, n),
        "submask_bits": width,
        "submasks": [
            {
                "index": i,
                "columns": [i * width, (i + 1) * width - 1],
                "hex": hex_bits(part, width),
                "binary": binary_runs(part, width),
            }
            for i, part in enumerate(parts)
        ],
    }
