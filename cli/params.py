"""Custom click parameter types: integers in C notation, lists of four, lazy case-insensitive choices.

Everything here is cheap to import (click and descgen only). Choices backed by the tables (type
names) are computed on first use, so a command that is not given ``--atype`` never reads them.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable

import click

import descgen
from descgen.catalog import SCALE_VECS, constraints
from descgen.context import normalize_scale_vec
from descgen.numbers import parse_uint  # the one rule for pasted words

__all__ = ["UInt", "UIntList", "LazyChoice", "TypeChoice", "KindType", "TileShape", "ScaleVecType", "ArchType", "UINT", "WORD", "TILE"]


def descriptor_names() -> tuple[str, ...]:
    """The words descgen reads (``--as``): :data:`descgen.identify.DESCRIPTORS`, loaded when asked."""
    from descgen.identify import DESCRIPTORS

    return DESCRIPTORS


class UInt(click.ParamType):
    """An unsigned integer of at most ``bits`` bits, in decimal, ``0x`` hex or ``0b`` binary, with
    an optional C suffix (``u``, ``l``, ``ul``, ``ull``...).

    Non-numbers, negative numbers and numbers wider than ``bits`` are usage errors (exit 2).
    Whether the value is legal for its descriptor field is the library's call (exit 1). With
    ``words`` (descriptor words, often pasted), hex without ``0x`` is read as
    :func:`descgen.numbers.parse_uint` says, with a note on stderr.
    """

    name = "integer"

    def __init__(self, bits: int = 64, metavar: str = "INT", *, words: bool = False) -> None:
        self.bits = bits
        self.metavar = metavar
        self.words = words

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:  # click 8.1 has no ctx
        return self.metavar

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, bool):
            self.fail(f"{value!r} is not an integer", param, ctx)
        if isinstance(value, int):
            number = value
            if number < 0:
                self.fail(f"{number} is negative; descriptor values are unsigned", param, ctx)
        else:
            try:
                number, note = parse_uint(str(value), words=self.words)
            except ValueError as e:
                self.fail(str(e), param, ctx)
            if note:
                click.echo(f"note: {note}", err=True)
        if number.bit_length() > self.bits:
            self.fail(
                f"{str(value).strip()} has {number.bit_length()} bits; at most {self.bits} fit in a descriptor word",
                param,
                ctx,
            )
        return number


class UIntList(click.ParamType):
    """``a,b,c,d``: exactly ``length`` comma-separated :class:`UInt` values (one per sub-mask)."""

    name = "integer list"

    def __init__(self, length: int = 4, bits: int = 64) -> None:
        self.length = length
        self.item = UInt(bits)

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return ",".join(chr(ord("a") + i) for i in range(self.length))

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> tuple[int, ...]:
        if isinstance(value, (tuple, list)):
            items = list(value)
        else:
            items = [part for part in str(value).split(",")]
        if len(items) != self.length:
            self.fail(
                f"{value!r} has {len(items)} item(s); give exactly {self.length} integers separated by commas "
                f"(one per sub-mask, e.g. 0,0,0,0)",
                param,
                ctx,
            )
        return tuple(self.item.convert(item, param, ctx) for item in items)


class LazyChoice(click.ParamType):
    """A case-insensitive choice whose members are computed on first use.

    ``choices`` is a callable returning the canonical spellings (e.g. ``descgen.type_names``);
    the value returned is the canonical spelling (``128b`` -> ``128B``), passed through ``cast``.
    With ``as_typed`` (an encoder's field, whose names the library itself reads case-insensitively)
    the value is checked but returned as typed: the library is the one place that spells it.
    """

    name = "choice"

    def __init__(self, choices: Callable[[], Iterable[str]] | Iterable[str], cast: Callable[[str], Any] = str,
                 *, as_typed: bool = False) -> None:
        self._source = choices
        self._choices: tuple[str, ...] | None = None
        self.cast = cast
        self.as_typed = as_typed

    @property
    def choices(self) -> tuple[str, ...]:
        if self._choices is None:
            src = self._source() if callable(self._source) else self._source
            self._choices = tuple(str(c) for c in src)
        return self._choices

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "[" + "|".join(self.choices) + "]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            value = str(value)
        folded = {c.lower(): c for c in self.choices}
        hit = folded.get(value.strip().lower())
        if hit is None:
            self.fail(f"{value!r} is not one of {', '.join(self.choices)}", param, ctx)
        return self.cast(value.strip() if self.as_typed else hit)

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
        from click.shell_completion import CompletionItem

        return [CompletionItem(c) for c in self.choices if c.lower().startswith(incomplete.lower())]


class TypeChoice(LazyChoice):
    """An element, accumulator or scale type: PTX's name (case-insensitive), or another framework's
    (Triton ``fp8e4nv``, PyTorch ``float8_e4m3fn``/``bfloat16``, CUTLASS ``float_e2m1_t``, JAX...:
    :func:`descgen.types.ptx_type_name`), read as PTX's with a note on stderr naming it."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from descgen.types import ptx_type_name

        ptx = ptx_type_name(str(value))
        if ptx is not None and ptx.lower() != str(value).strip().lower() and ptx in self.choices:
            name = f"--{param.name.replace('_', '-')} " if param is not None and param.name else ""
            click.echo(f"note: {name}{str(value).strip()} read as PTX's {ptx}", err=True)
            value = ptx
        return super().convert(value, param, ctx)


class KindType(LazyChoice):
    """An MMA kind: ``f16``, ``kind::f16`` or ``.kind::f16`` (``descgen.normalize_kind``)."""

    name = "kind"

    def __init__(self) -> None:
        super().__init__(descgen.KINDS)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        try:
            return descgen.normalize_kind(str(value))
        except descgen.UsageError:
            self.fail(f"{value!r} is not an MMA kind; one of {', '.join(self.choices)} "
                      "(optionally spelled kind::f16 or .kind::f16)", param, ctx)


_NUMBER = r"(0[xX][0-9a-fA-F_]+|0[bB][01_]+|[0-9_]+)"  # no C suffix: 128ux64 is not a tile
_TILE = rf"^\s*{_NUMBER}\s*[xX]\s*{_NUMBER}\s*$"  # compiled (and cached by re) on first use


class TileShape(click.ParamType):
    """``MNxK``: a tile of MN x K elements, two positive integers joined by ``x`` (``128x64``,
    ``0x80x64``)."""

    name = "tile"

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "MNxK"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> tuple[int, int]:
        if isinstance(value, tuple):
            return value
        match = re.match(_TILE, str(value))
        if match is None:
            self.fail(f"{str(value).strip()!r} is not MNxK (two integers joined by 'x', e.g. 128x64)", param, ctx)
        mn, k = (UInt(32).convert(part, param, ctx) for part in match.groups())
        if not mn or not k:
            self.fail(f"{str(value).strip()!r}: both extents must be positive", param, ctx)
        return mn, k


#: Any unsigned integer up to 64 bits (addresses, sizes, counts).
UINT = UInt(64, "INT")
#: A descriptor word (up to 64 bits).
WORD = UInt(64, "WORD", words=True)


class ScaleVecType(LazyChoice):
    """A scale vector size: ``1X``, ``2X``, ``4X``, ``block16``, ``block32``; PTX spellings such as
    ``scale_vec::2X``, ``.scale_vec::4X`` and ``.block16`` are accepted (``normalize_scale_vec``)."""

    name = "scale vector size"

    def __init__(self) -> None:
        super().__init__(SCALE_VECS)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        try:
            name = normalize_scale_vec(str(value))
        except descgen.UsageError:
            name = None
        if name is None:
            self.fail(f"{value!r} is not a scale vector size; one of {', '.join(self.choices)} "
                      "(optionally spelled scale_vec::2X, .scale_vec::2X or .block16)", param, ctx)
        return name


class ArchType(click.ParamType):
    """A target: ``sm_100a`` ... (``normalize_arch``; ``sm_101a``/``sm_101f`` are read as
    ``sm_110a``/``sm_110f``); with ``wgmma=True`` also ``sm_90a``, which selects the Hopper wgmma
    shared memory descriptor where a command reads one (``smem``, ``decode``, ``validate``,
    ``layout``, ``port``; an idesc rule given it says tcgen05 needs a Blackwell target). The known
    targets come from the tables on first use."""

    name = "target"

    def __init__(self, wgmma: bool = False) -> None:
        self.wgmma = wgmma

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:  # click 8.1 has no ctx
        return "TARGET"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from descgen.facts import smem_target

        found = smem_target(str(value))
        if found is None or not (self.wgmma or found[0] == "smem_desc"):
            self.fail(f"{value!r} is not a target descgen knows; one of {', '.join(self._targets())}", param, ctx)
        return found[1]

    def _targets(self) -> tuple[str, ...]:
        from descgen.facts import smem_targets

        return smem_targets() if self.wgmma else constraints().targets

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
        from click.shell_completion import CompletionItem

        return [CompletionItem(t) for t in self._targets() if t.startswith(incomplete.lower())]
#: A tile shape, MN x K elements.
TILE = TileShape()
