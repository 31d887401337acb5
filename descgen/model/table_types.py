"""The records the tables compile to (:mod:`descgen.model.loader` makes them): a field's legal
values (:class:`Domain`), a layout's fields (:class:`Field`, :class:`Layout`), Table 39
(:class:`Shape`, :class:`Shapes`) and ``tables/smem_atoms.toml`` (:class:`Atoms` and its rows)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field as dc_field
from typing import Any, Mapping, NamedTuple

from ..core.transforms import Transform

__all__ = ["FIELD_TYPES", "VALUE_TYPES", "Domain", "Field", "Layout", "Shape", "Shapes", "SwizzleFunctor", "AtomShape",
           "Combination", "Storage", "Atoms"]

FIELD_TYPES = ("uint", "flag", "enum", "reserved", "constant")
#: The field types that carry a caller-chosen value (the others are reserved or fixed bits).
VALUE_TYPES = FIELD_TYPES[:3]


# --------------------------------------------------------------------------------------------
# Domains: the legal logical values of a field, for one kind.


@dataclass(frozen=True, slots=True)
class Domain:
    """The legal logical values of a field (for one kind).

    Either a finite set (``values``) or an arithmetic range ``lo..hi step``.
    """

    values: frozenset[Any] | None
    lo: int = 0
    hi: int = 0
    step: int = 1
    ordered: tuple[Any, ...] = ()

    def __contains__(self, v: object) -> bool:
        if self.values is not None:
            # A bool is an int to Python; it only belongs to a domain of bools.
            return v in self.values and (v.__class__ is not bool or self.is_bool)
        if isinstance(v, bool) or not isinstance(v, int):
            return False
        return self.lo <= v <= self.hi and (v - self.lo) % self.step == 0

    #: :meth:`members` and :meth:`describe`, once computed (a domain is immutable; not compared).
    _members: tuple[Any, ...] | None = dc_field(default=None, init=False, repr=False, compare=False)
    _text: str | None = dc_field(default=None, init=False, repr=False, compare=False)

    @property
    def is_bool(self) -> bool:
        """True when this is a domain of bools (flags)."""
        return self.values is not None and all(isinstance(x, bool) for x in self.values)

    def members(self) -> tuple[Any, ...]:
        """All legal values in order (ranges are expanded; enums in code order)."""
        if self._members is None:
            if self.ordered:
                members = self.ordered
            elif self.values is not None:
                members = tuple(sorted(self.values, key=_order))
            else:
                members = tuple(range(self.lo, self.hi + 1, self.step))
            object.__setattr__(self, "_members", members)
        assert self._members is not None
        return self._members

    def describe(self) -> str:
        """Human form, as every ``allowed`` is written: ``8..256 step 8``, ``64, 128``, ``false``,
        ``8, 16, 24, 32, 48..256 step 16``."""
        if self._text is None:
            object.__setattr__(self, "_text", self._describe())
        assert self._text is not None
        return self._text

    def _describe(self) -> str:
        if self.values is None:
            return _describe_range(self.lo, self.hi, self.step)
        vals = self.members()
        if vals and all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
            return _describe_ints(vals)
        return ", ".join(_fmt(v) for v in vals)


def _order(v: Any) -> tuple[int, Any]:
    return (0, v) if isinstance(v, (int, bool)) else (1, str(v))


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _describe_range(lo: int, hi: int, step: int) -> str:
    if lo == hi:
        return str(lo)
    if step == 1:
        return f"{lo}..{hi}"
    return f"{lo}..{hi} step {step}"


def _describe_ints(vals: tuple[int, ...]) -> str:
    if len(vals) <= 4:
        return ", ".join(map(str, vals))
    parts: list[str] = []
    i = 0
    while i < len(vals):
        j = i + 1
        if j < len(vals):
            step = vals[j] - vals[i]
            while j + 1 < len(vals) and vals[j + 1] - vals[j] == step:
                j += 1
            if j - i >= 3:
                parts.append(_describe_range(vals[i], vals[j], step))
                i = j + 1
                continue
        parts.append(str(vals[i]))
        i += 1
    return ", ".join(parts)


# --------------------------------------------------------------------------------------------
# Fields and layouts.


@dataclass(frozen=True, slots=True)
class Field:
    """One row of a PTX descriptor table, compiled.

    Attributes:
        name: API-facing name (``n``, ``lbo``, ``skip_span``, ``reserved_6``...).
        lo, hi: bit range, inclusive, LSB = bit 0 (PTX numbering).
        type: ``uint``, ``flag``, ``enum``, ``reserved`` or ``constant``.
        description: the spec's wording for the row.
        source: PTX table / section.
        unit: unit of the logical value (``bytes``, ``columns``, ``rows``...), or ``""``.
        transform: how the logical value is stored (see :mod:`descgen.core.transforms`).
        members: enum members per kind (key ``None`` = every kind): name -> code.
        member_attrs: extra per-member attributes from the table (e.g. swizzle ``bytes``).
        domains: legal logical values per kind (key ``None`` = every kind).
        const: required raw value of a ``constant`` field.
        severity: severity of a violation of this field's rule.
        note: remark shown with findings (errata references, CUTLASS behaviour).
        default: logical value used when an encoder is not given one (``None``: required).
    """

    name: str
    lo: int
    hi: int
    type: str
    description: str
    source: str
    unit: str
    transform: Transform
    members: Mapping[str | None, Mapping[Any, int]]
    member_attrs: Mapping[Any, Mapping[str, Any]]
    domains: Mapping[str | None, Domain]
    const: int
    severity: str
    note: str
    default: Any = None

    @property
    def width(self) -> int:
        return self.hi - self.lo + 1

    @property
    def mask(self) -> int:
        """Mask of the field's raw value (not shifted)."""
        return (1 << self.width) - 1

    @property
    def bits(self) -> str:
        """The bit range as PTX prints it: ``"7-9"`` or ``"2"``."""
        return str(self.lo) if self.lo == self.hi else f"{self.lo}-{self.hi}"

    @property
    def is_value(self) -> bool:
        """True for fields that carry a caller-chosen value (not reserved / constant)."""
        return self.type in VALUE_TYPES

    def domain(self, kind: str | None) -> Domain:
        d = self.domains.get(kind)
        return d if d is not None else self.domains[None]

    def codes(self, kind: str | None) -> Mapping[Any, int]:
        """Enum members for ``kind``: logical name -> raw code."""
        m = self.members.get(kind)
        return m if m is not None else self.members.get(None, {})


@dataclass(frozen=True)
class Layout:
    """One descriptor layout (one PTX table), compiled.

    Attributes:
        word: ``idesc``, ``smem`` or ``zcm``.
        name: layout id (the table file's stem).
        width: 32 or 64 bits.
        title, source, path: for display and citations.
        kinds: the MMA kinds this layout serves (idesc only).
        targets: the targets whose instructions read this layout, when it is one target
            family's own (the wgmma descriptor: ``sm_90a``); empty: descgen's default family.
        family: the instruction family whose descriptor this is, where a word has two
            (``tcgen05``, ``wgmma``); else ``""``.
        fields: in bit order, tiling the word exactly.
        defaults: per kind, the values used when the caller names none.
        implied: values the kind fixes that the word does not hold (e.g. dtype f32).
        extra: other sections of the table (e.g. zcm ``submasks``).
    """

    word: str
    name: str
    width: int
    title: str
    source: str
    path: str
    kinds: tuple[str, ...]
    fields: tuple[Field, ...]
    defaults: Mapping[str, Mapping[str, Any]]
    implied: Mapping[str, Any]
    targets: tuple[str, ...] = ()
    family: str = ""
    extra: Mapping[str, Any] = dc_field(default_factory=dict)

    def field(self, name: str) -> Field:
        """The field called ``name`` (KeyError if none)."""
        return self.by_name[name]

    @functools.cached_property
    def by_name(self) -> dict[str, Field]:
        return {f.name: f for f in self.fields}


# --------------------------------------------------------------------------------------------
# Table 39 (shapes).


@dataclass(frozen=True, slots=True)
class Shape:
    """One row of Table 39: the shapes a kind supports with given .ws, cta_group, sparsity."""

    kind: str
    ws: bool
    cta_group: int
    sparse: bool
    m: tuple[int, ...]
    n: tuple[int, ...]
    k: int
    source: str
    note: str


@dataclass(frozen=True)
class Shapes:
    """Table 39 as data: shape rows and the dtype x atype/btype (x scale type) rows."""

    rows: tuple[Shape, ...]
    types: tuple[Mapping[str, Any], ...]
    source: str

    def for_kind(self, kind: str) -> tuple[Shape, ...]:
        return tuple(r for r in self.rows if r.kind == kind)

    def m_values(self, kind: str) -> frozenset[int]:
        """Every M Table 39 allows for ``kind`` in some context (.ws, cta_group, sparsity)."""
        return frozenset(m for r in self.for_kind(kind) for m in r.m)

    def n_values(self, kind: str) -> frozenset[int]:
        """Every N Table 39 allows for ``kind`` in some context."""
        return frozenset(n for r in self.for_kind(kind) for n in r.n)

    def k_values(self, kind: str, sparse: bool) -> tuple[int, ...]:
        """The K values Table 39 gives for ``kind`` and sparsity (smallest first)."""
        return tuple(sorted({r.k for r in self.for_kind(kind) if r.sparse == sparse}))


# --------------------------------------------------------------------------------------------
# Tables 52 and 53, §9.7.16.3.3 swizzle functors, §9.7.16.10.4 storage (tables/smem_atoms.toml).
# Named tuples, not dataclasses: they cost a tenth as much to define at import.


class SwizzleFunctor(NamedTuple):
    """CuTe's ``Swizzle<B,M,S>`` for one swizzle mode, acting on byte addresses:
    bits ``[M, M+B)`` ^= bits ``[M+S, M+S+B)``."""

    name: str
    b: int
    m: int
    s: int
    source: str


class AtomShape(NamedTuple):
    """One row of Table 53: MN x K, the leading dimension in 128-bit elements, the other in rows."""

    swizzle: str
    major: str
    mn: int
    k: int
    source: str


class Combination(NamedTuple):
    """One row of Table 52: these element sizes may use these swizzle modes with this major-ness."""

    major: str
    bits: tuple[int, ...]
    swizzles: tuple[str, ...]
    source: str


class Storage(NamedTuple):
    """§9.7.16.10.4 for one element size: ``per_chunk`` elements per 16-byte chunk, ``pitch``
    bits apart; ``kinds`` empty = every kind that takes the size."""

    bits: int
    kinds: tuple[str, ...]
    per_chunk: int
    pitch: int
    source: str


class Atoms(NamedTuple):
    """``tables/smem_atoms.toml``, checked: swizzle functors, Table 53 atoms, Table 52 rows,
    element sizes and storage rules."""

    swizzles: Mapping[str, SwizzleFunctor]
    atoms: Mapping[tuple[str, str], AtomShape]
    combinations: tuple[Combination, ...]
    elements: Mapping[str, tuple[int, str]]
    storage: tuple[Storage, ...]
    source: str
