"""The closed registry of field transforms, referenced by name from ``tables/*.toml``.

A transform turns a field's logical value (bytes, M, N, a count) into the raw bits PTX stores,
and back. No arithmetic lives in the tables; a new transform is added here, once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

__all__ = ["Transform", "TRANSFORMS"]


@dataclass(frozen=True, slots=True)
class Transform:
    """How a logical value is stored in a field.

    Attributes:
        name: registry key used in the tables.
        formula: the encoding in PTX's notation (shown in docs and the CLI).
        encode: logical value -> raw field bits.
        decode: raw field bits -> logical value.
        align: the logical value must be a multiple of this (its dropped LSBs must be zero).
        limit: the largest logical value the formula keeps, if it masks (None: width decides).
        expr: ``encode`` as a Python expression in ``x``, for the engine's compiled packers.
    """

    name: str
    formula: str
    encode: Callable[[int], int]
    decode: Callable[[int], int]
    align: int = 1
    limit: int | None = None
    expr: str = ""


def _shift(name: str, what: str, bits: int) -> Transform:
    return Transform(
        name=name,
        formula=f"{what} >> {bits}",
        encode=lambda x: x >> bits,
        decode=lambda raw: raw << bits,
        align=1 << bits,
        expr=f"x >> {bits}",
    )


TRANSFORMS: dict[str, Transform] = {
    t.name: t
    for t in (
        Transform("identity", "x", lambda x: x, lambda raw: raw, expr="x"),
        # Table 40: matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4; addresses and offsets
        # must be 16-byte aligned (§9.7.16.4.1), so the mask never drops a set bit we accept.
        Transform(
            "matrix_descriptor_encode",
            "(x & 0x3FFFF) >> 4",
            lambda x: (x & 0x3FFFF) >> 4,
            lambda raw: raw << 4,
            align=16,
            limit=0x3FFFF,
            expr="(x & 0x3FFFF) >> 4",
        ),
        _shift("shr3", "N", 3),  # Tables 42-44: N >> 3
        _shift("shr4", "M", 4),  # Table 42: M >> 4
        _shift("shr7", "M", 7),  # Tables 43-44: M >> 7
        # Table 45: Skip Span / Use Span hold (count of columns) - 1.
        Transform("minus1", "count - 1", lambda x: x - 1, lambda raw: raw + 1, expr="x - 1"),
    )
}
