"""What one Hopper ``wgmma.mma_async{.sp}`` instruction (``sm_90a``) may name: PTX ISA 9.1
§9.7.15.2 (shapes) and §9.7.15.3 (data types), read from ``tables/wgmma_shapes.toml``.

One :class:`WgmmaTypes` row per family of multiplicand types (``f16``, ``bf16``, ``tf32``, ``fp8``,
``int8``, ``b1``): the ``.atype``/``.btype``/``.dtype`` it takes, K of its dense and sparse shapes,
its N, and which immediate operands its syntax forms have (``imm-scale-a/b``, ``imm-trans-a/b``,
``.satfinite``, ``sp-sel``). The rules over it are in :mod:`descgen.rules.checks` (``applies = "wgmma"``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Mapping

from ..core.errors import TableError
from .loader import check_keys, read_table

__all__ = ["WGMMA_FILE", "WgmmaTypes", "WgmmaTable", "wgmma_table", "wgmma_types", "parse_wgmma_table",
           "parse_wgmma_shape"]

WGMMA_FILE = "wgmma_shapes.toml"
_ROW_KEYS = {"name", "atypes", "btypes", "dtypes", "k", "sparse_k", "n", "floating", "transpose", "satfinite",
             "sp_sel", "source"}
_INSTRUCTION_KEYS = {"m", "targets", "source"}
_SHAPE = re.compile(r"m(\d+)n(\d+)k(\d+)")


@dataclass(frozen=True, slots=True)
class WgmmaTypes:
    """One family of multiplicand types (a row of §9.7.15.3) with its shapes (§9.7.15.2).

    Attributes:
        name: ``f16``, ``bf16``, ``tf32``, ``fp8``, ``int8`` or ``b1``.
        atypes, btypes: the ``.atype`` / ``.btype`` names it takes (any pairing of the two).
        dtypes: the accumulator ``.dtype`` names.
        k: K of the dense shapes, in elements. sparse_k: K of the ``.sp`` shapes, or None (no sparse form).
        n: the N of its shapes ``.m64nNkK``, in columns (sorted).
        floating: the floating-point forms: ``imm-scale-a``/``imm-scale-b`` exist.
        transpose: ``imm-trans-a`` (A from a descriptor) and ``imm-trans-b`` exist.
        satfinite: ``.satfinite`` may be given.
        sp_sel: the ``sp-sel`` values of its sparse form (§9.7.15.6.3).
        source: the PTX sections.
    """

    name: str
    atypes: tuple[str, ...]
    btypes: tuple[str, ...]
    dtypes: tuple[str, ...]
    k: int
    sparse_k: int | None
    n: tuple[int, ...]
    floating: bool
    transpose: bool
    satfinite: bool
    sp_sel: tuple[int, ...]
    source: str

    def k_for(self, sparse: bool) -> int | None:
        """K of the dense (``sparse=False``) or ``.sp`` shapes; None when there is no such form."""
        return self.sparse_k if sparse else self.k


@dataclass(frozen=True, slots=True)
class WgmmaTable:
    """``tables/wgmma_shapes.toml`` compiled: M, the targets, the type rows."""

    m: int
    targets: tuple[str, ...]
    source: str
    rows: tuple[WgmmaTypes, ...]

    def row(self, atype: str, btype: str | None = None) -> WgmmaTypes | None:
        """The row that takes ``atype`` (and ``btype``, when given) as A's (and B's) type, or None."""
        return next((r for r in self.rows if atype in r.atypes and (btype is None or btype in r.btypes)), None)

    def row_of(self, atype: str, btype: str) -> WgmmaTypes | None:
        """The row of A's type, else of B's (an instruction whose pair is no row still has the
        shapes and operands of one of its types), or None."""
        return self.row(atype) or self.row(btype)


def _n_values(spec: Any, path: str, where: str) -> tuple[int, ...]:
    if isinstance(spec, dict):
        check_keys(spec, {"min", "max", "step"}, path, where)
        return tuple(range(spec["min"], spec["max"] + 1, spec["step"]))
    if isinstance(spec, list) and spec and all(isinstance(v, int) for v in spec):
        return tuple(sorted(spec))
    raise TableError(path, where, f"n must be a list of integers or {{ min, max, step }}, got {spec!r}")


def parse_wgmma_table(data: Mapping[str, Any], path: str) -> WgmmaTable:
    """Validate and compile ``tables/wgmma_shapes.toml``. Raises :class:`TableError` naming the entry."""
    check_keys(data, {"instruction", "types"}, path, "file")
    head = data.get("instruction")
    if not isinstance(head, dict):
        raise TableError(path, "file", "missing [instruction]")
    check_keys(head, _INSTRUCTION_KEYS, path, "instruction")
    for key in _INSTRUCTION_KEYS:
        if key not in head:
            raise TableError(path, "instruction", f"missing key '{key}'")
    rows: list[WgmmaTypes] = []
    for i, raw in enumerate(data.get("types", ())):
        where = f"types #{i + 1}"
        check_keys(raw, _ROW_KEYS, path, where)
        missing = sorted(_ROW_KEYS - {"sparse_k"} - set(raw))
        if missing:
            raise TableError(path, where, f"missing key(s) {missing}")
        where = f"types {raw['name']}"
        taken = {t for r in rows for t in (*r.atypes, *r.btypes)}
        if taken & set(raw["atypes"]) or any(r.name == raw["name"] for r in rows):
            raise TableError(path, where, "a type or name already in another row")
        if not all(isinstance(raw[key], bool) for key in ("floating", "transpose", "satfinite")):
            raise TableError(path, where, "floating, transpose and satfinite are true or false")
        rows.append(WgmmaTypes(raw["name"], tuple(raw["atypes"]), tuple(raw["btypes"]), tuple(raw["dtypes"]),
                               int(raw["k"]), raw.get("sparse_k"), _n_values(raw["n"], path, where),
                               raw["floating"], raw["transpose"], raw["satfinite"], tuple(raw["sp_sel"]),
                               raw["source"]))
    if not rows:
        raise TableError(path, "file", "no [[types]] rows")
    return WgmmaTable(int(head["m"]), tuple(head["targets"]), head["source"], tuple(rows))


@functools.cache
def wgmma_table() -> WgmmaTable:
    """``tables/wgmma_shapes.toml``, compiled once."""
    return parse_wgmma_table(read_table(WGMMA_FILE), f"tables/{WGMMA_FILE}")


def wgmma_types() -> tuple[str, ...]:
    """Every ``.atype`` / ``.btype`` name a wgmma takes, in table order."""
    return tuple(dict.fromkeys(t for r in wgmma_table().rows for t in (*r.atypes, *r.btypes)))


def parse_wgmma_shape(text: str) -> tuple[int, int, int] | None:
    """``"m64n128k16"`` (or ``".m64n128k16"``) -> ``(64, 128, 16)``: M, N, K; None if not of that form."""
    m = _SHAPE.fullmatch(text.strip().lstrip(".").lower())
    return None if m is None else (int(m.group(1)), int(m.group(2)), int(m.group(3)))
