"""Frozen records that are quick to define and to build: :func:`record` and :func:`field`.

descgen's records (``Finding``, ``Decoded``, ``Report``, ``Rule``, the tables' ``Field`` and
``Layout``...) are what ``@dataclass(frozen=True, slots=True)`` makes of a class, but defining a
dataclass costs a millisecond or more at import (its methods are written as source text and
compiled, its annotations parsed), and ``import descgen`` defines more than a dozen: a third of
the command line's start-up. :func:`record` builds the same class for a fraction of that:

- ``__init__`` (the dataclass's signature: names, order, defaults) is the one method compiled
  (once per user: :func:`descgen.usercache.define`); it stores each field through its slot's
  descriptor, twice as fast as the ``object.__setattr__`` of a frozen dataclass's own;
- ``__repr__``, ``__eq__``, ``__hash__`` (over the fields with ``compare=True``, as the dataclass
  compares), the frozen ``__setattr__``/``__delattr__`` (raising
  :class:`dataclasses.FrozenInstanceError`), ``__match_args__`` and pickling are shared functions;
- ``dataclasses.fields``, ``replace``, ``asdict`` and ``is_dataclass`` work: the class's
  ``__dataclass_fields__`` are made, on first use, by the dataclass of the same fields.

Type checkers read :func:`record` as a frozen dataclass (:func:`typing.dataclass_transform`).
"""

from __future__ import annotations

import operator
from typing import Any, Callable, TypeVar, dataclass_transform, overload

from .usercache import define

__all__ = ["record", "field"]

T = TypeVar("T")


class _Missing:
    """No default (shown as dataclasses shows a default factory in a signature)."""

    def __repr__(self) -> str:
        return "<factory>"


_MISSING: Any = _Missing()


class _Spec:
    """What :func:`field` says about one field."""

    __slots__ = ("default", "default_factory", "init", "repr", "compare")

    def __init__(self, default: Any, default_factory: Callable[[], Any] | None, init: bool, repr: bool, compare: bool):
        self.default, self.default_factory, self.init, self.repr, self.compare = default, default_factory, init, repr, compare


def field(*, default: Any = _MISSING, default_factory: Callable[[], Any] | None = None, init: bool = True,
          repr: bool = True, compare: bool = True) -> Any:
    """A record field's options, as :func:`dataclasses.field` takes them (``default`` or
    ``default_factory``; ``init``, ``repr``, ``compare``)."""
    if default is not _MISSING and default_factory is not None:
        raise ValueError("cannot specify both default and default_factory")
    return _Spec(default, default_factory, init, repr, compare)


class _Fields:
    """``__dataclass_fields__`` of a record, made on first use by the dataclass of its fields (so
    that the ``dataclasses`` functions see the record as that dataclass)."""

    def __init__(self, specs: tuple[tuple[str, Any, _Spec], ...]):
        self.specs = specs
        self.fields: dict[str, Any] | None = None

    def __get__(self, obj: object, owner: type | None = None) -> dict[str, Any]:
        if self.fields is None:
            import dataclasses

            ns: dict[str, Any] = {"__annotations__": {name: kind for name, kind, _ in self.specs}}
            for name, _, s in self.specs:
                kw: dict[str, Any] = {"init": s.init, "repr": s.repr, "compare": s.compare}
                if s.default is not _MISSING:
                    kw["default"] = s.default
                if s.default_factory is not None:
                    kw["default_factory"] = s.default_factory
                ns[name] = dataclasses.field(**kw)
            shadow: Any = dataclasses.dataclass(frozen=True)(type("shadow", (), ns))
            self.fields = dict(shadow.__dataclass_fields__)
        return self.fields


def _frozen(self: object, name: str, *args: Any) -> None:
    from dataclasses import FrozenInstanceError

    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _repr(self: Any) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__record_repr__)
    return f"{type(self).__qualname__}({shown})"


def _eq(self: Any, other: Any) -> bool:
    if other.__class__ is not self.__class__:
        return NotImplemented  # type: ignore[no-any-return]
    key = self.__record_key__
    return bool(key(self) == key(other))


def _hash(self: Any) -> int:
    return hash(self.__record_key__(self))


def _getstate(self: Any) -> tuple[Any, ...]:
    return tuple(getattr(self, name) for name in self.__record_names__)


def _setstate(self: Any, state: tuple[Any, ...]) -> None:
    for name, value in zip(self.__record_names__, state):
        object.__setattr__(self, name, value)


def _key(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """A function of a record to the tuple of its ``names`` fields."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    if names:
        get = operator.attrgetter(names[0])
        return lambda obj: (get(obj),)
    return lambda obj: ()


@overload
def record(cls: type[T], /) -> type[T]: ...
@overload
def record(*, slots: bool = True) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(cls: type[T] | None = None, /, *, slots: bool = True) -> Any:
    """``@record`` or ``@record(slots=False)``: the class as ``@dataclass(frozen=True, slots=True)``
    (or ``frozen=True`` without slots) makes it, its fields its own annotations in order, each
    with its class attribute as default or a :func:`field`.

    Raises:
        TypeError: a field without a default after one with a default, or a base class that is a
            record or a dataclass (not needed here, so not supported).
    """
    if cls is None:
        return lambda c: _build(c, slots)
    return _build(cls, slots)


def _build(cls: type[T], slots: bool) -> type[T]:
    if any(hasattr(base, "__dataclass_fields__") for base in cls.__mro__[1:]):
        raise TypeError(f"{cls.__name__}: a record's base classes are not records or dataclasses")
    specs: list[tuple[str, Any, _Spec]] = []
    for name, kind in cls.__dict__.get("__annotations__", {}).items():
        given = cls.__dict__.get(name, _MISSING)
        spec = given if isinstance(given, _Spec) else _Spec(given, None, True, True, True)
        specs.append((name, kind, spec))
    names = tuple(name for name, _, _ in specs)
    ns = {k: v for k, v in cls.__dict__.items() if k not in names and k not in ("__dict__", "__weakref__")}
    if slots:
        ns["__slots__"] = names
    else:  # a plain default stays a class attribute, as the dataclass leaves it
        ns.update({name: s.default for name, _, s in specs if s.default is not _MISSING})
    ns.update(
        __setattr__=_frozen, __delattr__=_frozen, __repr__=_repr, __eq__=_eq, __hash__=_hash,
        __getstate__=_getstate, __setstate__=_setstate,
        __match_args__=tuple(name for name, _, s in specs if s.init),
        __record_names__=names,
        __record_repr__=tuple(name for name, _, s in specs if s.repr),
        __record_key__=staticmethod(_key(tuple(name for name, _, s in specs if s.compare))),
        __dataclass_fields__=_Fields(tuple(specs)),
    )
    meta: Any = type(cls)
    new: Any = meta(cls.__name__, cls.__bases__, ns)
    new.__qualname__ = cls.__qualname__
    new.__init__ = _init(new, specs, slots)
    return new  # type: ignore[no-any-return]


def _init(cls: type, specs: list[tuple[str, Any, _Spec]], slots: bool) -> Callable[..., None]:
    """The ``__init__`` of the dataclass's signature, storing each field through its slot's
    descriptor (or ``object.__setattr__`` without slots)."""
    env: dict[str, Any] = {"MISSING": _MISSING, "SET": object.__setattr__}
    args: list[str] = []
    body: list[str] = []
    seen_default = False
    for name, _, s in specs:
        store = f"S_{name}(self, {{}})" if slots else f"SET(self, {name!r}, {{}})"
        if slots:
            env[f"S_{name}"] = cls.__dict__[name].__set__
        if s.default is not _MISSING:
            env[f"D_{name}"] = s.default
        if s.default_factory is not None:
            env[f"F_{name}"] = s.default_factory
        if not s.init:
            if s.default_factory is not None:
                body.append("    " + store.format(f"F_{name}()"))
            elif s.default is not _MISSING:
                body.append("    " + store.format(f"D_{name}"))
            continue
        if s.default_factory is not None:
            args.append(f"{name}=MISSING")
            body.append(f"    if {name} is MISSING: {name} = F_{name}()")
            seen_default = True
        elif s.default is not _MISSING:
            args.append(f"{name}=D_{name}")
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {name!r} follows default argument")
        else:
            args.append(name)
        body.append("    " + store.format(name))
    source = f"def __init__(self, {', '.join(args)}):\n" + "\n".join(body or ["    pass"]) + "\n"
    init: Callable[..., None] = define("__init__", source, f"<descgen record {cls.__name__}>", env)
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__annotations__ = {**{name: kind for name, kind, s in specs if s.init}, "return": None}
    return init
