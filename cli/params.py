"""Custom click parameter types: integers in C notation, lists of four, lazy case-insensitive choices.

Each type is a click face over a reader of :mod:`descgen.cli.values` (click-free, shared with the
fast path). Everything here is cheap to import (click and descgen only). Choices backed by the
tables (type names) are computed on first use, so a command that is not given ``--atype`` never
reads them.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import click

from . import values

__all__ = ["Value", "UInt", "UIntList", "LazyChoice", "TypeChoice", "KindType", "TileShape", "ScaleVecType", "ArchType", "UINT", "WORD", "TILE"]


#: The words descgen reads (``--as``): :data:`descgen.identify.DESCRIPTORS`, loaded when asked.
descriptor_names = "descriptors"


class Value(click.ParamType):  # type: ignore[type-arg]  # (generic in newer click stubs only)
    """A click parameter type over a click-free reader of :mod:`descgen.cli.values` (the one
    definition of how a value is read, shared with the fast path): a bad value is a usage error
    (exit 2), a note goes to stderr at once."""

    def __init__(self, reader: values.Reader) -> None:
        self.reader = reader
        self.name = reader.name

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return self.reader.convert(value, param.name if param is not None else None,
                                       lambda text: click.echo(text, err=True))
        except ValueError as e:
            self.fail(str(e), param, ctx)


class UInt(Value):
    """An unsigned integer of at most ``bits`` bits (:class:`descgen.cli.values.UInt`): non-numbers,
    negative numbers and numbers wider than ``bits`` are usage errors (exit 2). Whether the value
    is legal for its descriptor field is the library's call (exit 1)."""

    def __init__(self, bits: int = 64, metavar: str = "INT", *, words: bool = False,
                 reader: values.UInt | None = None) -> None:
        super().__init__(reader or values.UInt(bits, metavar, words=words))

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:  # click 8.1 has no ctx
        return str(self.reader.metavar)  # type: ignore[attr-defined]


class UIntList(Value):
    """``a,b,c,d``: exactly ``length`` comma-separated :class:`UInt` values (one per sub-mask)."""

    def __init__(self, length: int = 4, bits: int = 64) -> None:
        super().__init__(values.UIntList(length, bits))
        self.length = length

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return ",".join(chr(ord("a") + i) for i in range(self.length))


class LazyChoice(Value):
    """A case-insensitive choice whose members are computed on first use
    (:class:`descgen.cli.values.Choice`: ``choices`` names a source of
    :data:`descgen.cli.values.SOURCES`, or is the tuple or a function that returns it); ``cast``
    is ``str`` or ``int``."""

    reader: values.Choice

    def __init__(self, choices: str | tuple[str, ...] | Callable[[], Iterable[Any]], cast: Callable[[str], Any] = str,
                 *, as_typed: bool = False) -> None:
        casts: dict[Callable[[str], Any], str] = {str: "str", int: "int"}
        super().__init__(self._reader(choices, casts[cast], as_typed))

    def _reader(self, choices: Any, cast: str, as_typed: bool) -> values.Choice:
        return values.Choice(choices, cast, as_typed=as_typed)

    @property
    def choices(self) -> tuple[str, ...]:
        return self.reader.choices

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "[" + "|".join(self.choices) + "]"

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
        from click.shell_completion import CompletionItem

        return [CompletionItem(c) for c in self.choices if c.lower().startswith(incomplete.lower())]


class TypeChoice(LazyChoice):
    """An element, accumulator or scale type, PTX's name or another framework's
    (:class:`descgen.cli.values.TypeChoice`), read as PTX's with a note on stderr naming it."""

    def _reader(self, choices: Any, cast: str, as_typed: bool) -> values.Choice:
        return values.TypeChoice(choices, cast, as_typed=as_typed)


class KindType(LazyChoice):
    """An MMA kind: ``f16``, ``kind::f16`` or ``.kind::f16`` (``descgen.normalize_kind``)."""

    def __init__(self) -> None:
        Value.__init__(self, values.Kind())


class TileShape(Value):
    """``MNxK``: a tile of MN x K elements, two positive integers joined by ``x`` (``128x64``,
    ``0x80x64``)."""

    def __init__(self) -> None:
        super().__init__(values.Tile())

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "MNxK"


#: Any unsigned integer up to 64 bits (addresses, sizes, counts).
UINT = UInt(64, "INT")
#: A descriptor word (:data:`descgen.cli.values.WORD`).
WORD = UInt(reader=values.WORD)


class ScaleVecType(LazyChoice):
    """A scale vector size: ``1X``, ``2X``, ``4X``, ``block16``, ``block32``; PTX spellings such as
    ``scale_vec::2X``, ``.scale_vec::4X`` and ``.block16`` are accepted (``normalize_scale_vec``)."""

    def __init__(self) -> None:
        Value.__init__(self, values.ScaleVec())


class ArchType(Value):
    """A target (:class:`descgen.cli.values.Arch`): ``sm_100a`` ...; with ``wgmma=True`` also
    ``sm_90a``, which selects the Hopper wgmma shared memory descriptor where a command reads one;
    with ``bare=True`` also a target without tcgen05 (``sm_110``: a program's ``.target``, E49)."""

    reader: values.Arch

    def __init__(self, wgmma: bool = False, bare: bool = False) -> None:
        super().__init__(values.Arch(wgmma, bare))

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:  # click 8.1 has no ctx
        return "TARGET"

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
        from click.shell_completion import CompletionItem

        return [CompletionItem(t) for t in self.reader.targets() if t.startswith(incomplete.lower())]


#: A tile shape, MN x K elements.
TILE = TileShape()
