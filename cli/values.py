"""How the command line's option values are read, without click: the one definition behind the
click parameter types of :mod:`descgen.cli.params` and the click-free fast path
(:mod:`descgen.cli.fast`).

Each reader converts a value the way its click type does and reports a bad one as
``ValueError(message)`` (the click type turns it into a usage error, exit 2) and a note (a type
read under another framework's name, hex without ``0x``) through the ``note`` callback (the click
type prints it on stderr at once; the fast path keeps it until every value is read). A reader is
described as data by :meth:`Reader.describe` and rebuilt by :func:`reader`: the fast path's option
table (:mod:`descgen.cli.fast_spec`) stores the descriptions. Choices backed by the tables are
named (:data:`SOURCES`) and computed on first use.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable

import descgen

__all__ = ["Reader", "UInt", "WORD", "UIntList", "Choice", "TypeChoice", "Kind", "Tile", "ScaleVec", "Arch", "Text", "SOURCES", "reader"]

Note = Callable[[str], None]


def _element_types() -> tuple[str, ...]:
    from descgen.loader import atoms

    return tuple(atoms().elements)


def _descriptor_names() -> tuple[str, ...]:
    from descgen.identify import DESCRIPTORS

    return DESCRIPTORS


def _wgmma_types() -> tuple[str, ...]:
    from descgen.wgmma_facts import wgmma_types

    return wgmma_types()


def _wgmma_dtypes() -> tuple[str, ...]:
    from descgen.wgmma_facts import wgmma_table

    return tuple(dict.fromkeys(d for r in wgmma_table().rows for d in r.dtypes))


def _warps() -> tuple[str, ...]:
    from descgen.facts import warps_per_warpgroup

    return tuple(map(str, range(warps_per_warpgroup())))


#: Named choice lists, computed on first use (a source is a name here or a literal tuple).
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

_CASTS: dict[str, Callable[[str], Any]] = {"str": str, "int": int}


class Reader:
    """Reads one option's value: :meth:`convert` (``param``: the option's name, for notes)."""

    name = "value"

    def convert(self, value: Any, param: str | None, note: Note) -> Any:
        raise NotImplementedError

    def describe(self) -> tuple[Any, ...]:
        """The reader as data: ``reader(r.describe())`` reads as ``r`` does."""
        raise NotImplementedError


class UInt(Reader):
    """An unsigned integer of at most ``bits`` bits, in decimal, ``0x`` hex or ``0b`` binary, with
    an optional C suffix (``u``, ``l``, ``ul``, ``ull``...). With ``words`` (descriptor words, often
    pasted), hex without ``0x`` is read as :func:`descgen.numbers.parse_uint` says, with a note."""

    name = "integer"

    def __init__(self, bits: int = 64, metavar: str = "INT", *, words: bool = False) -> None:
        self.bits = bits
        self.metavar = metavar
        self.words = words

    def describe(self) -> tuple[Any, ...]:
        return ("uint", self.bits, self.metavar, self.words)

    def convert(self, value: Any, param: str | None, note: Note) -> int:
        from descgen.numbers import parse_uint  # the one rule for pasted words

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


#: How a descriptor word is read (the WORD arguments and options of decode, validate, check,
#: diff, layout, port): up to 64 bits, hex without ``0x`` where exactly 8 or 16 digits
#: (:func:`descgen.numbers.parse_uint`).
WORD = UInt(64, "WORD", words=True)


class UIntList(Reader):
    """``a,b,c,d``: exactly ``length`` comma-separated :class:`UInt` values (one per sub-mask)."""

    name = "integer list"

    def __init__(self, length: int = 4, bits: int = 64) -> None:
        self.length = length
        self.item = UInt(bits)

    def describe(self) -> tuple[Any, ...]:
        return ("uintlist", self.length, self.item.bits)

    def convert(self, value: Any, param: str | None, note: Note) -> tuple[int, ...]:
        items = list(value) if isinstance(value, (tuple, list)) else str(value).split(",")
        if len(items) != self.length:
            raise ValueError(f"{value!r} has {len(items)} item(s); give exactly {self.length} integers separated by "
                             f"commas (one per sub-mask, e.g. 0,0,0,0)")
        return tuple(self.item.convert(item, param, note) for item in items)


class Choice(Reader):
    """A case-insensitive choice whose members are computed on first use: ``source`` names a list
    of :data:`SOURCES` or is the tuple itself (or a function that returns it: not describable); the value returned is the canonical spelling
    (``128b`` -> ``128B``) through ``cast`` (``"str"`` or ``"int"``). With ``as_typed`` (an
    encoder's field, whose names the library itself reads case-insensitively) the value is checked
    but returned as typed: the library is the one place that spells it."""

    name = "choice"

    def __init__(self, source: str | tuple[str, ...] | Callable[[], Iterable[Any]], cast: str = "str", *,
                 as_typed: bool = False) -> None:
        if isinstance(source, str) and source not in SOURCES:
            raise ValueError(f"unknown choice source {source!r}")
        self.source = source
        self.cast = cast
        self.as_typed = as_typed
        self._choices: tuple[str, ...] | None = None

    def describe(self) -> tuple[Any, ...]:
        if callable(self.source):
            raise ValueError(f"a choice of {self.source!r} cannot be described as data: name its source in SOURCES")
        return (type(self).__name__.lower(), self.source, self.cast, self.as_typed)

    @property
    def choices(self) -> tuple[str, ...]:
        if self._choices is None:
            src = SOURCES[self.source]() if isinstance(self.source, str) else self.source() if callable(self.source) \
                else self.source
            self._choices = tuple(str(c) for c in src)
        return self._choices

    def convert(self, value: Any, param: str | None, note: Note) -> Any:
        if not isinstance(value, str):
            value = str(value)
        folded = {c.lower(): c for c in self.choices}
        hit = folded.get(value.strip().lower())
        if hit is None:
            raise ValueError(f"{value!r} is not one of {', '.join(self.choices)}")
        return _CASTS[self.cast](value.strip() if self.as_typed else hit)


class TypeChoice(Choice):
    """An element, accumulator or scale type: PTX's name (case-insensitive), or another framework's
    (Triton ``fp8e4nv``, PyTorch ``float8_e4m3fn``/``bfloat16``, CUTLASS ``float_e2m1_t``, JAX...:
    :func:`descgen.types.ptx_type_name`), read as PTX's with a note naming it."""

    def convert(self, value: Any, param: str | None, note: Note) -> Any:
        from descgen.types import ptx_type_name

        ptx = ptx_type_name(str(value))
        if ptx is not None and ptx.lower() != str(value).strip().lower() and ptx in self.choices:
            name = f"--{param.replace('_', '-')} " if param else ""
            note(f"note: {name}{str(value).strip()} read as PTX's {ptx}")
            value = ptx
        return super().convert(value, param, note)


class Kind(Choice):
    """An MMA kind: ``f16``, ``kind::f16`` or ``.kind::f16`` (``descgen.normalize_kind``)."""

    name = "kind"

    def __init__(self) -> None:
        super().__init__("kinds")

    def describe(self) -> tuple[Any, ...]:
        return ("kind",)

    def convert(self, value: Any, param: str | None, note: Note) -> str:
        try:
            return descgen.normalize_kind(str(value))
        except descgen.UsageError:
            raise ValueError(f"{value!r} is not an MMA kind; one of {', '.join(self.choices)} "
                             "(optionally spelled kind::f16 or .kind::f16)") from None


class ScaleVec(Choice):
    """A scale vector size: ``1X``, ``2X``, ``4X``, ``block16``, ``block32``; PTX spellings such as
    ``scale_vec::2X``, ``.scale_vec::4X`` and ``.block16`` are accepted (``normalize_scale_vec``)."""

    name = "scale vector size"

    def __init__(self) -> None:
        super().__init__("scale_vecs")

    def describe(self) -> tuple[Any, ...]:
        return ("scalevec",)

    def convert(self, value: Any, param: str | None, note: Note) -> str:
        from descgen.context import normalize_scale_vec

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


class Tile(Reader):
    """``MNxK``: a tile of MN x K elements, two positive integers joined by ``x`` (``128x64``,
    ``0x80x64``)."""

    name = "tile"

    def describe(self) -> tuple[Any, ...]:
        return ("tile",)

    def convert(self, value: Any, param: str | None, note: Note) -> tuple[int, int]:
        if isinstance(value, tuple):
            return value
        match = re.match(_TILE, str(value))
        if match is None:
            raise ValueError(f"{str(value).strip()!r} is not MNxK (two integers joined by 'x', e.g. 128x64)")
        mn, k = (UInt(32).convert(part, param, note) for part in match.groups())
        if not mn or not k:
            raise ValueError(f"{str(value).strip()!r}: both extents must be positive")
        return mn, k


class Arch(Reader):
    """A target: ``sm_100a`` ... (``normalize_arch``; ``sm_101a``/``sm_101f`` are read as
    ``sm_110a``/``sm_110f``); with ``wgmma=True`` also ``sm_90a``, which selects the Hopper wgmma
    shared memory descriptor where a command reads one (``smem``, ``decode``, ``validate``,
    ``layout``, ``port``; an idesc rule given it says tcgen05 needs a Blackwell target); with
    ``bare=True`` (``scan``, where the target is a program's ``.target``) also a bare target such
    as ``sm_110``, which has no tcgen05 (:func:`descgen.context.bare_target`, E49). A target
    refused is named with why (no tcgen05; Hopper's) and the targets the command takes. The
    known targets come from the tables on first use."""

    name = "target"

    def __init__(self, wgmma: bool = False, bare: bool = False) -> None:
        self.wgmma = wgmma
        self.bare = bare

    def describe(self) -> tuple[Any, ...]:
        return ("arch", self.wgmma, *((True,) if self.bare else ()))

    def targets(self) -> tuple[str, ...]:
        from descgen.catalog import constraints
        from descgen.facts import smem_targets

        own = smem_targets() if self.wgmma else constraints().targets
        return (*own, *dict.fromkeys(t[:-1] for t in constraints().targets)) if self.bare else own

    def convert(self, value: Any, param: str | None, note: Note) -> str:
        from descgen.context import bare_target
        from descgen.facts import smem_target

        found = smem_target(str(value))
        if found is None or not (self.wgmma or found[0] == "smem_desc"):
            from descgen.catalog import constraints

            with_tcgen05 = [t for t in self.targets() if t in constraints().targets or smem_target(t) is not None]
            without = [t for t in self.targets() if t not in with_tcgen05]
            known = ", ".join(with_tcgen05) + (f", or a bare {', '.join(without)} (no tcgen05, E49)" if without else "")
            bare = str(value).strip().lower()
            own = bare_target(bare)  # sm_110: no tcgen05 (E49)
            if own and self.bare:
                return bare
            if own:
                raise ValueError(f"{value!r} has no tcgen05: ptxas refuses tcgen05.mma on .target {bare}; its "
                                 f"architecture-specific and family targets are {' and '.join(own)} (E49); one of {known}")
            if found is not None:  # sm_90a where only tcgen05 words are read
                raise ValueError(f"{value!r} is Hopper's target (wgmma); --arch here takes a tcgen05 target: one of {known}")
            raise ValueError(f"{value!r} is not a target descgen knows; one of {known}")
        return found[1]


class Text(Reader):
    """Any text, as typed (click's ``STRING``)."""

    name = "text"

    def describe(self) -> tuple[Any, ...]:
        return ("str",)

    def convert(self, value: Any, param: str | None, note: Note) -> str:
        return str(value)


_READERS: dict[str, Callable[..., Reader]] = {
    "str": Text,
    "uint": lambda bits, metavar, words: UInt(bits, metavar, words=words),
    "uintlist": UIntList,
    "choice": lambda source, cast, as_typed: Choice(source, cast, as_typed=as_typed),
    "typechoice": lambda source, cast, as_typed: TypeChoice(source, cast, as_typed=as_typed),
    "kind": Kind,
    "scalevec": ScaleVec,
    "tile": Tile,
    "arch": Arch,
}


def reader(description: tuple[Any, ...]) -> Reader:
    """The reader :meth:`Reader.describe` described."""
    return _READERS[description[0]](*description[1:])
