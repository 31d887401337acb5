"""Custom click parameter types: integers in C notation, lists of four, lazy case-insensitive
choices, MMA kinds, scale vector sizes, tiles and targets.

Each type reads a value with :meth:`Value.read`: a bad value is ``ValueError(message)``, which
click reports as a usage error (exit 2), and a note (a type read under another framework's name,
hex without ``0x``) goes to stderr at once. Everything here is cheap to import (click and descgen
only). Choices backed by the tables (type names) are named (:data:`SOURCES`) and computed on
first use, so a command that is not given ``--atype`` never reads them.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable

import click

import descgen

__all__ = ["Value", "UInt", "UIntList", "LazyChoice", "TypeChoice", "KindType", "TileShape", "ScaleVecType", "ArchType",
           "SOURCES", "UINT", "WORD", "TILE"]

Note = Callable[[str], None]


def _element_types() -> tuple[str, ...]:
    from descgen.model.loader import atoms

    return tuple(atoms().elements)


def _descriptor_names() -> tuple[str, ...]:
    from descgen.words.identify import DESCRIPTORS

    return DESCRIPTORS


def _wgmma_types() -> tuple[str, ...]:
    from descgen.model.wgmma_facts import wgmma_types

    return wgmma_types()


def _wgmma_dtypes() -> tuple[str, ...]:
    from descgen.model.wgmma_facts import wgmma_table

    return tuple(dict.fromkeys(d for r in wgmma_table().rows for d in r.dtypes))


def _warps() -> tuple[str, ...]:
    from descgen.model.facts import warps_per_warpgroup

    return tuple(map(str, range(warps_per_warpgroup())))


#: Named choice lists, computed on first use (a :class:`LazyChoice` takes a name here, a tuple or
#: a function that returns one).
SOURCES: dict[str, Callable[[], Iterable[Any]]] = {
    "formats": lambda: descgen.FORMATS,
    "majors": lambda: descgen.MAJORS,
    "swizzles": lambda: descgen.SWIZZLES,
    "lbo_modes": lambda: descgen.LBO_MODES,
    "atom_orders": lambda: descgen.ATOM_ORDERS,
    "atype": lambda: descgen.type_names("atype"),
    "btype": lambda: descgen.type_names("btype"),
    "dtype": lambda: descgen.type_names("dtype"),
    "scale_type": lambda: descgen.type_names("scale_type"),
    "max_shift": lambda: descgen.type_names("max_shift"),
    "element_types": _element_types,
    "descriptors": _descriptor_names,
    "warps": _warps,
    "kinds": lambda: descgen.KINDS,
    "wgmma_types": _wgmma_types,
    "wgmma_dtypes": _wgmma_dtypes,
    "scale_vecs": lambda: descgen.SCALE_VECS,
}

#: The words descgen reads (``--as``): :data:`descgen.words.identify.DESCRIPTORS`, loaded when asked.
descriptor_names = "descriptors"


class Value(click.ParamType):  # type: ignore[type-arg]  # (generic in newer click stubs only)
    """A click parameter type whose value :meth:`read` converts: a bad value is a usage error
    (exit 2), a note goes to stderr at once."""

    def read(self, value: Any, param: str | None, note: Note) -> Any:
        """The value converted (``param``: the option's name, for notes); ``ValueError(message)``
        for a bad one, each note through ``note``."""
        raise NotImplementedError

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return self.read(value, param.name if param is not None else None, lambda text: click.echo(text, err=True))
        except ValueError as e:
            self.fail(str(e), param, ctx)


class UInt(Value):
    """An unsigned integer of at most ``bits`` bits, in decimal, ``0x`` hex or ``0b`` binary, with
    an optional C suffix (``u``, ``l``, ``ul``, ``ull``...): non-numbers, negative numbers and
    numbers wider than ``bits`` are usage errors (exit 2). Whether the value is legal for its
    descriptor field is the library's call (exit 1). With ``words`` (descriptor words, often
    pasted), hex without ``0x`` is read as :func:`descgen.core.numbers.parse_uint` says, with a note."""

    name = "integer"

    def __init__(self, bits: int = 64, metavar: str = "INT", *, words: bool = False) -> None:
        self.bits = bits
        self.metavar = metavar
        self.words = words

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:  # click 8.1 has no ctx
        return self.metavar

    def read(self, value: Any, param: str | None, note: Note) -> int:
        from descgen.core.numbers import parse_uint  # the one rule for pasted words

        if isinstance(value, bool):
            raise ValueError(f"{value!r} is not an integer")
        if isinstance(value, int):
            number = value
            if number < 0:
                raise ValueError(f"{number} is negative; descriptor values are unsigned")
        else:
            number, text = parse_uint(str(value), words=self.words)
            if text:
                note(f"note: {text}")
        if number.bit_length() > self.bits:
            raise ValueError(f"{str(value).strip()} has {number.bit_length()} bits; at most {self.bits} fit in a "
                             "descriptor word")
        return number


class UIntList(Value):
    """``a,b,c,d``: exactly ``length`` comma-separated :class:`UInt` values (one per sub-mask)."""

    name = "integer list"

    def __init__(self, length: int = 4, bits: int = 64) -> None:
        self.length = length
        self.item = UInt(bits)

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return ",".join(chr(ord("a") + i) for i in range(self.length))

    def read(self, value: Any, param: str | None, note: Note) -> tuple[int, ...]:
        items = list(value) if isinstance(value, (tuple, list)) else str(value).split(",")
        if len(items) != self.length:
            raise ValueError(f"{value!r} has {len(items)} item(s); give exactly {self.length} integers separated by "
                             f"commas (one per sub-mask, e.g. 0,0,0,0)")
        return tuple(self.item.read(item, param, note) for item in items)


class LazyChoice(Value):
    """A case-insensitive choice whose members are computed on first use: ``choices`` names a list
    of :data:`SOURCES` or is the tuple itself or a function that returns it; the value returned is
    the canonical spelling (``128b`` -> ``128B``) through ``cast`` (``str`` or ``int``). With
    ``as_typed`` (an encoder's field, whose names the library itself reads case-insensitively)
    the value is checked but returned as typed: the library is the one place that spells it."""

    name = "choice"

    def __init__(self, choices: str | tuple[str, ...] | Callable[[], Iterable[Any]], cast: Callable[[str], Any] = str,
                 *, as_typed: bool = False) -> None:
        if isinstance(choices, str) and choices not in SOURCES:
            raise ValueError(f"unknown choice source {choices!r}")
        self.source = choices
        self.cast = cast
        self.as_typed = as_typed
        self._choices: tuple[str, ...] | None = None

    @property
    def choices(self) -> tuple[str, ...]:
        if self._choices is None:
            src = SOURCES[self.source]() if isinstance(self.source, str) else self.source() if callable(self.source) \
                else self.source
            self._choices = tuple(str(c) for c in src)
        return self._choices

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "[" + "|".join(self.choices) + "]"

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
        from click.shell_completion import CompletionItem

        return [CompletionItem(c) for c in self.choices if c.lower().startswith(incomplete.lower())]

    def read(self, value: Any, param: str | None, note: Note) -> Any:
        if not isinstance(value, str):
            value = str(value)
        folded = {c.lower(): c for c in self.choices}
        hit = folded.get(value.strip().lower())
        if hit is None:
            raise ValueError(f"{value!r} is not one of {', '.join(self.choices)}")
        return self.cast(value.strip() if self.as_typed else hit)


class TypeChoice(LazyChoice):
    """An element, accumulator or scale type: PTX's name (case-insensitive), or another framework's
    (Triton ``fp8e4nv``, PyTorch ``float8_e4m3fn``/``bfloat16``, CUTLASS ``float_e2m1_t``, JAX...:
    :func:`descgen.core.types.ptx_type_name`), read as PTX's with a note on stderr naming it."""

    def read(self, value: Any, param: str | None, note: Note) -> Any:
        from descgen.core.types import ptx_type_name

        ptx = ptx_type_name(str(value))
        if ptx is not None and ptx.lower() != str(value).strip().lower() and ptx in self.choices:
            name = f"--{param.replace('_', '-')} " if param else ""
            note(f"note: {name}{str(value).strip()} read as PTX's {ptx}")
            value = ptx
        return super().read(value, param, note)


class KindType(LazyChoice):
    """An MMA kind: ``f16``, ``kind::f16`` or ``.kind::f16`` (``descgen.normalize_kind``)."""

    name = "kind"

    def __init__(self) -> None:
        super().__init__("kinds")

    def read(self, value: Any, param: str | None, note: Note) -> str:
        try:
            return descgen.normalize_kind(str(value))
        except descgen.UsageError:
            raise ValueError(f"{value!r} is not an MMA kind; one of {', '.join(self.choices)} "
                             "(optionally spelled kind::f16 or .kind::f16)") from None


class ScaleVecType(LazyChoice):
    """A scale vector size: ``1X``, ``2X``, ``4X``, ``block16``, ``block32``; PTX spellings such as
    ``scale_vec::2X``, ``.scale_vec::4X`` and ``.block16`` are accepted (``normalize_scale_vec``)."""

    name = "scale vector size"

    def __init__(self) -> None:
        super().__init__("scale_vecs")

    def read(self, value: Any, param: str | None, note: Note) -> str:
        from descgen.model.context import normalize_scale_vec

        try:
            name = normalize_scale_vec(str(value))
        except descgen.UsageError:
            name = None
        if name is None:
            raise ValueError(f"{value!r} is not a scale vector size; one of {', '.join(self.choices)} "
                             "(optionally spelled scale_vec::2X, .scale_vec::2X or .block16)")
        return name


_NUMBER = r"(0[xX][0-9a-fA-F_]+|0[bB][01_]+|[0-9_]+)"  # no C suffix: 128ux64 is not a tile
_TILE = rf"^\s*{_NUMBER}\s*[xX]\s*{_NUMBER}\s*$"  # compiled (and cached by re) on first use


class TileShape(Value):
    """``MNxK``: a tile of MN x K elements, two positive integers joined by ``x`` (``128x64``,
    ``0x80x64``)."""

    name = "tile"

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "MNxK"

    def read(self, value: Any, param: str | None, note: Note) -> tuple[int, int]:
        if isinstance(value, tuple):
            return value
        match = re.match(_TILE, str(value))
        if match is None:
            raise ValueError(f"{str(value).strip()!r} is not MNxK (two integers joined by 'x', e.g. 128x64)")
        mn, k = (UInt(32).read(part, param, note) for part in match.groups())
        if not mn or not k:
            raise ValueError(f"{str(value).strip()!r}: both extents must be positive")
        return mn, k


class ArchType(Value):
    """A target: ``sm_100a`` ... (``normalize_arch``; ``sm_101a``/``sm_101f`` are read as
    ``sm_110a``/``sm_110f``); with ``wgmma=True`` also ``sm_90a``, which selects the Hopper wgmma
    shared memory descriptor where a command reads one (``smem``, ``decode``, ``validate``,
    ``layout``, ``port``; an idesc rule given it says tcgen05 needs a Blackwell target); with
    ``bare=True`` (``scan``, where the target is a program's ``.target``) also a bare target such
    as ``sm_110``, which has no tcgen05 (:func:`descgen.model.context.bare_target`, E49). A target
    refused is named with why (no tcgen05; Hopper's) and the targets the command takes. The
    known targets come from the tables on first use."""

    name = "target"

    def __init__(self, wgmma: bool = False, bare: bool = False) -> None:
        self.wgmma = wgmma
        self.bare = bare

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:  # click 8.1 has no ctx
        return "TARGET"

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
        from click.shell_completion import CompletionItem

        return [CompletionItem(t) for t in self.targets() if t.startswith(incomplete.lower())]

    def targets(self) -> tuple[str, ...]:
        from descgen.model.catalog import constraints
        from descgen.model.facts import smem_targets

        own = smem_targets() if self.wgmma else constraints().targets
        return (*own, *dict.fromkeys(t[:-1] for t in constraints().targets)) if self.bare else own

    def read(self, value: Any, param: str | None, note: Note) -> str:
        from descgen.model.context import bare_target
        from descgen.model.facts import smem_target

        found = smem_target(str(value))
        if found is None or not (self.wgmma or found[0] == "smem_desc"):
            from descgen.model.catalog import constraints

            with_tcgen05 = [t for t in self.targets() if t in constraints().targets or smem_target(t) is not None]
            without = [t for t in self.targets() if t not in with_tcgen05]
            known = ", ".join(with_tcgen05) + (f", or a bare {', '.join(without)} (no tcgen05, E49)" if without else "")
            bare = str(value).strip().lower()
            own = bare_target(bare)  # sm_110: no tcgen05 (E49)
            if own and self.bare:
                return bare
            if own:
                raise ValueError(f"{value!r} has no tcgen05: ptxas refuses tcgen05.mma on .target {bare}; its "
                                 f"architecture-specific and family targets are {' and '.join(own)} (E49); "
                                 f"one of {known}")
            if found is not None:  # sm_90a where only tcgen05 words are read
                raise ValueError(f"{value!r} is Hopper's target (wgmma); --arch here takes a tcgen05 target: "
                                 f"one of {known}")
            raise ValueError(f"{value!r} is not a target descgen knows; one of {known}")
        return found[1]


#: Any unsigned integer up to 64 bits (addresses, sizes, counts).
UINT = UInt(64, "INT")
#: How a descriptor word is read (the WORD arguments and options of decode, validate, check,
#: diff, layout, port): up to 64 bits, hex without ``0x`` where exactly 8 or 16 digits
#: (:func:`descgen.core.numbers.parse_uint`).
WORD = UInt(64, "WORD", words=True)
#: A tile shape, MN x K elements.
TILE = TileShape()
