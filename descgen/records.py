"""Frozen records that are quick to build: :func:`fast_init`.

descgen's results (``Finding``, ``Decoded``, ``DecodedField``, ``NotChecked``, ``Report``) are frozen, slotted
dataclasses, and the hot paths build many of them. The ``__init__`` that ``dataclasses`` writes for
a frozen class stores each field through ``object.__setattr__`` (it must get past the class's own
``__setattr__``, which raises); storing through each slot's descriptor does the same in half the
time. Nothing else changes: the signature, the defaults, equality, hashing and immutability are
the dataclass's own.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

__all__ = ["fast_init"]

T = TypeVar("T")


class _Factory:
    """The default of a field with a default factory (shown as dataclasses shows it)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def fast_init(cls: type[T]) -> type[T]:
    """Give a frozen, slotted dataclass (``@dataclass(frozen=True, slots=True)``, applied first) an
    ``__init__`` that stores each field through its slot's descriptor.

    Raises:
        TypeError: not a frozen slotted dataclass, or one with keyword-only fields or
            ``__post_init__`` (not needed here, so not supported).
    """
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__}: fast_init takes a frozen, slotted dataclass")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: fast_init does not call __post_init__")
    env: dict[str, Any] = {"MISSING": _FACTORY}
    args: list[str] = []
    body: list[str] = []
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.kw_only:
            raise TypeError(f"{cls.__name__}.{f.name}: fast_init takes no keyword-only fields")
        env[f"S_{f.name}"] = cls.__dict__[f.name].__set__
        has_factory = f.default_factory is not dataclasses.MISSING
        if f.default is not dataclasses.MISSING:
            env[f"D_{f.name}"] = f.default
        if has_factory:
            env[f"F_{f.name}"] = f.default_factory
        if not f.init:
            value = f"F_{f.name}()" if has_factory else f"D_{f.name}"
        else:
            value = f.name
            args.append(f"{f.name}=MISSING" if has_factory else f"{f.name}=D_{f.name}" if f"D_{f.name}" in env else f.name)
            if has_factory:
                body.append(f"    if {f.name} is MISSING: {f.name} = F_{f.name}()")
        if f.init or f"D_{f.name}" in env or has_factory:
            body.append(f"    S_{f.name}(self, {value})")
    source = f"def __init__(self, {', '.join(args)}):\n" + "\n".join(body or ["    pass"]) + "\n"
    exec(compile(source, f"<descgen fast_init {cls.__name__}>", "exec"), env)
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__doc__ = cls.__init__.__doc__
    init.__annotations__ = {**{f.name: f.type for f in dataclasses.fields(cls) if f.init},  # type: ignore[arg-type]
                            "return": None}
    setattr(cls, "__init__", init)
    return cls
