"""records.fast_init: the same records as the dataclass's own __init__ builds, only faster."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from descgen.engine import Decoded, DecodedField
from descgen.errors import Finding
from descgen.records import fast_init
from descgen.report import NotChecked, Report


@pytest.mark.parametrize("cls", [Finding, Decoded, DecodedField, NotChecked, Report])
def test_the_hot_records_keep_the_dataclass_signature(cls):
    """The signature (names, order, defaults) is what dataclasses would write for the class."""
    plain = dataclasses.dataclass(frozen=True)(type(cls.__name__, (), {"__annotations__": {
        f.name: f.type for f in dataclasses.fields(cls)}, **{f.name: f for f in dataclasses.fields(cls)}}))
    assert str(inspect.signature(cls)) == str(inspect.signature(plain))


def test_fast_init_builds_what_the_dataclass_builds():
    @dataclasses.dataclass(frozen=True, slots=True)
    class Slow:
        a: int
        b: str = "x"
        c: list = dataclasses.field(default_factory=list)
        d: int = dataclasses.field(default=7, init=False)
        e: tuple = dataclasses.field(default=(), compare=False)

    @fast_init
    @dataclasses.dataclass(frozen=True, slots=True)
    class Fast:
        a: int
        b: str = "x"
        c: list = dataclasses.field(default_factory=list)
        d: int = dataclasses.field(default=7, init=False)
        e: tuple = dataclasses.field(default=(), compare=False)

    for args, kw in (((1,), {}), ((1, "y"), {}), ((1,), {"c": [2]}), ((), {"a": 3, "e": (4,)})):
        slow, fast = Slow(*args, **kw), Fast(*args, **kw)
        assert [getattr(fast, f.name) for f in dataclasses.fields(Fast)] == [getattr(slow, f.name) for f in dataclasses.fields(Slow)]
    assert Fast(1).c is not Fast(1).c  # a fresh default each time
    assert Fast(1) == Fast(1) and Fast(1) != Fast(2) and Fast(1, e=(1,)) == Fast(1, e=(2,))  # (e: compare=False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        Fast(1).a = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        Fast()  # type: ignore[call-arg]
    assert dataclasses.replace(Fast(1), b="z") == Fast(1, "z")


def test_fast_init_refuses_what_it_does_not_build():
    @dataclasses.dataclass
    class Mutable:
        a: int

    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class PostInit:
        a: int

        def __post_init__(self) -> None:
            pass

    for cls in (Mutable, NoSlots, PostInit):
        with pytest.raises(TypeError):
            fast_init(cls)
