"""records.record: the class that @dataclass(frozen=True, slots=True) makes, defined without it."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
import subprocess
import sys

import pytest

from descgen.catalog import Rule
from descgen.engine import Decoded, DecodedField
from descgen.errors import Finding
from descgen.loader import Layout
from descgen.records import field, record
from descgen.report import NotChecked, Report


@pytest.mark.parametrize("cls", [Finding, Decoded, DecodedField, NotChecked, Report, Rule])
def test_the_records_keep_the_dataclass_signature(cls):
    """The signature (names, order, defaults) is what dataclasses would write for the class."""
    plain = dataclasses.dataclass(frozen=True)(type(cls.__name__, (), {"__annotations__": {
        f.name: f.type for f in dataclasses.fields(cls)}, **{f.name: f for f in dataclasses.fields(cls)}}))
    assert str(inspect.signature(cls)) == str(inspect.signature(plain))


@dataclasses.dataclass(frozen=True, slots=True)
class Slow:
    a: int
    b: str = "x"
    c: list = dataclasses.field(default_factory=list)
    d: int = dataclasses.field(default=7, init=False)
    e: tuple = dataclasses.field(default=(), compare=False, repr=False)


@record
class Fast:
    a: int
    b: str = "x"
    c: list = field(default_factory=list)
    d: int = field(default=7, init=False)
    e: tuple = field(default=(), compare=False, repr=False)


@record(slots=False)
class Plain:
    a: int
    b: str = "x"


def test_record_builds_what_the_dataclass_builds():
    for args, kw in (((1,), {}), ((1, "y"), {}), ((1,), {"c": [2]}), ((), {"a": 3, "e": (4,)})):
        slow, fast = Slow(*args, **kw), Fast(*args, **kw)
        assert [getattr(fast, f.name) for f in dataclasses.fields(Fast)] == [getattr(slow, f.name) for f in dataclasses.fields(Slow)]
        assert repr(fast).replace("Fast", "Slow") == repr(slow)
    assert [f.name for f in dataclasses.fields(Fast)] == [f.name for f in dataclasses.fields(Slow)]
    assert Fast.__match_args__ == Slow.__match_args__ and Fast.__slots__ == Slow.__slots__
    assert Fast(1).c is not Fast(1).c  # a fresh default each time
    assert Fast(1) == Fast(1) and Fast(1) != Fast(2) and Fast(1, e=(1,)) == Fast(1, e=(2,))  # (e: compare=False)
    assert Fast(1) != Slow(1) and {Plain(1): 1}[Plain(1)] == 1 and hash(Plain(1)) != hash(Plain(2))
    with pytest.raises(dataclasses.FrozenInstanceError):
        Fast(1).a = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del Fast(1).a  # type: ignore[misc]
    with pytest.raises(TypeError):
        Fast()  # type: ignore[call-arg]
    assert dataclasses.is_dataclass(Fast(1)) and dataclasses.replace(Fast(1), b="z") == Fast(1, "z")
    assert dataclasses.asdict(Fast(1, c=[3])) == dataclasses.asdict(Slow(1, c=[3]))
    for obj in (Fast(1, "y", [2]), Plain(1)):  # pickled (batch's workers), copied
        assert pickle.loads(pickle.dumps(obj)) == obj and copy.deepcopy(obj) == obj and copy.copy(obj) == obj
    assert Plain(1).__dict__ == {"a": 1, "b": "x"} and Plain.b == "x"
    with pytest.raises(dataclasses.FrozenInstanceError):
        Plain(1).b = "y"  # type: ignore[misc]


def test_record_refuses_what_the_dataclass_refuses():
    with pytest.raises(TypeError, match="non-default argument 'b'"):
        @record
        class Order:
            a: int = 1
            b: int

    with pytest.raises(TypeError):
        @record
        class Sub(Fast):
            z: int = 0
    with pytest.raises(ValueError):
        field(default=1, default_factory=list)


def test_layout_keeps_its_cached_property():
    """A record without slots keeps an instance dict, so functools.cached_property works."""
    from descgen.loader import layout

    lay = layout("smem_desc")
    assert isinstance(lay, Layout) and lay.by_name is lay.by_name and lay.field("lbo").name == "lbo"


def test_import_descgen_defines_no_dataclass():
    """``import descgen`` loads neither dataclasses nor inspect (their import and each class's
    definition are a large share of start-up); dataclasses.fields still works on a result."""
    code = ("import sys, descgen; print('dataclasses' in sys.modules, 'inspect' in sys.modules); "
            "import dataclasses; print(len(dataclasses.fields(descgen.Finding)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False", "7"]
