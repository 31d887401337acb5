"""Field-by-field difference of two words of the same kind (``descgen diff A B``).

Both words are decoded with one layout, chosen as ``descgen decode`` chooses (errata E32): an
explicit ``descriptor`` (and ``kind`` for an instruction descriptor) wins; otherwise two words
below 2**32 are instruction descriptors, and wider words are shared memory or zero-column mask
descriptors, or CUTLASS's 64-bit runtime instruction descriptor when the low halves are 0 (E31),
whichever decodes both words with the fewest findings (ties: smem, wgmma_smem, zcm, idesc). A tensor memory
address is never guessed: give ``descriptor="taddr"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..model.catalog import usage_error
from ..model.engine import Decoded, check_word, hex_word
from ..core.errors import Finding, UsageError
from ..model.loader import KINDS
from .identify import DESCRIPTORS, Reading, check_any_word, identify
from .runtime import RuntimeIdesc
from ..core.types import Descriptor, Kind

__all__ = ["DESCRIPTORS", "FieldDiff", "Diff", "diff"]

@dataclass(frozen=True, slots=True)
class FieldDiff:
    """One field of both words: bits, raw bits and logical values (``None``: unknown code), unit."""

    name: str
    bits: str
    a_raw: int
    b_raw: int
    a_value: Any
    b_value: Any
    unit: str

    @property
    def equal(self) -> bool:
        return self.a_raw == self.b_raw

    def as_dict(self) -> dict[str, Any]:
        return {"field": self.name, "bits": self.bits, "equal": self.equal, "unit": self.unit,
                "a": {"raw": self.a_raw, "value": self.a_value}, "b": {"raw": self.b_raw, "value": self.b_value}}


@dataclass(frozen=True)
class Diff:
    """Two decoded words and what differs.

    Attributes:
        descriptor: ``idesc``, ``smem``, ``zcm`` or ``taddr``; kind: the MMA kind (idesc).
        a, b: the decodes (for a CUTLASS runtime form, of its upper 32 bits).
        fields: every field in bit order, equal or not (``.changed`` has the differing ones).
        only_a, only_b: findings (by code and field) present in one decode and not the other.
        runtime_a, runtime_b: the split 64-bit runtime forms, when a word was one (E31).
        chosen: how the layout was chosen (``"given"``, or the rule that picked it).
    """

    descriptor: Descriptor
    kind: Kind | None
    a: Decoded
    b: Decoded
    fields: tuple[FieldDiff, ...]
    only_a: tuple[Finding, ...]
    only_b: tuple[Finding, ...]
    runtime_a: RuntimeIdesc | None = None
    runtime_b: RuntimeIdesc | None = None
    chosen: str = "given"

    @property
    def changed(self) -> tuple[FieldDiff, ...]:
        return tuple(f for f in self.fields if not f.equal)

    @property
    def equal(self) -> bool:
        """No field differs and no finding differs (a runtime form's low half is always 0, E31)."""
        return not self.changed and not self.only_a and not self.only_b

    def as_dict(self) -> dict[str, Any]:
        return {
            "descriptor": self.descriptor, "kind": self.kind, "chosen": self.chosen, "equal": self.equal,
            "a": self.a.hex, "b": self.b.hex,
            "changed": [f.name for f in self.changed],
            "fields": [f.as_dict() for f in self.fields],
            "only_a": [f.as_dict() for f in self.only_a], "only_b": [f.as_dict() for f in self.only_b],
            "runtime": {"a": self.runtime_a.as_dict() if self.runtime_a else None,
                        "b": self.runtime_b.as_dict() if self.runtime_b else None},
        }


def _key(f: Finding) -> tuple[str, str]:
    return (f.code, f.field)


def _readings(word: int, descriptor: Descriptor, kind: Kind | None = None) -> dict[str, Reading]:
    """``word`` read as ``descriptor`` (an idesc under every kind, or ``kind``; CUTLASS's runtime
    form split), by reading name: :func:`descgen.words.identify.identify`, the one reading of a word."""
    return {r.name: r for r in identify(word, descriptor=descriptor, kind=kind).readings}


def _idesc_pair(a: int, b: int, kind: Kind | None) -> tuple[Kind, Reading, Reading, str]:
    """The kind to compare two instruction descriptors under: the one given, else the first kind
    (PTX's order) both words are consistent with, else one is (E32)."""
    ra, rb = _readings(a, "idesc", kind), _readings(b, "idesc", kind)
    if kind is not None:
        (k, first), = ra.items()
        return first.kind, first, rb[k], "given"  # type: ignore[return-value]
    kinds_a, kinds_b = ([k for k in KINDS if r[k].ok] for r in (ra, rb))
    if kinds_a and kinds_b and not set(kinds_a) & set(kinds_b):
        shown = [f"{hex_word(w, 64 if w >> 32 else 32)} is consistent with .kind::{', .kind::'.join(ks)}"
                 for w, ks in ((a, kinds_a), (b, kinds_b))]
        raise usage_error("DIFF-DESCRIPTOR", "kind", f"{'/'.join(kinds_a)} and {'/'.join(kinds_b)}", ", ".join(KINDS),
                          f"{shown[0]}, {shown[1]}: no kind reads both; give --kind to compare them under one")
    tests: tuple[tuple[Callable[[Reading, Reading], bool], str], ...] = (
        (lambda x, y: x.ok and y.ok, "the first kind both words are consistent with"),
        (lambda x, y: x.ok or y.ok, "the first kind one word is consistent with (the other is consistent with none)"))
    for test, why in tests:
        for k in KINDS:
            if test(ra[k], rb[k]):
                return k, ra[k], rb[k], why
    raise usage_error("IDESC-KIND", "kind", None, ", ".join(KINDS),
                      "neither word is consistent with any kind: give the kind to compare them under")


def diff(a: int, b: int, *, descriptor: Descriptor | None = None, kind: Kind | None = None) -> Diff:
    """Compare two words of the same kind field by field (``descgen diff A B``).

    Args:
        a, b: the words: 32-bit (idesc, taddr) or 64-bit (smem, zcm, or CUTLASS's runtime idesc,
            read as its upper 32 bits).
        descriptor: ``"idesc"``, ``"smem"``, ``"zcm"`` or ``"taddr"``; None chooses as
            ``descgen decode`` does (errata E32).
        kind: the MMA kind for an instruction descriptor (implies ``descriptor="idesc"``); None:
            the first kind both words are consistent with.

    Returns:
        A :class:`Diff`: ``.equal``, ``.changed`` (fields with their bits, raw bits, values and
        units), ``.only_a`` / ``.only_b`` (findings in one decode only).

    Raises:
        UsageError: unknown descriptor or kind; words no kind explains. WordError: a word wider
            than its descriptor.
    """
    if descriptor is not None and descriptor not in DESCRIPTORS:
        raise usage_error("DIFF-DESCRIPTOR", "descriptor", descriptor, ", ".join(DESCRIPTORS))
    if kind is not None:
        if descriptor not in (None, "idesc"):
            raise usage_error("DIFF-DESCRIPTOR", "descriptor", descriptor, "idesc", "a kind was given")
        descriptor = "idesc"
    for w in (a, b):
        if descriptor is None:
            check_any_word(w, "DIFF-WORD")
        else:
            check_word(w, 64, descriptor)
    chosen = "given"
    if descriptor is None:
        wide = [w >> 32 != 0 for w in (a, b)]
        if any(wide) and not all(wide):
            _one_idesc_one_runtime(a, b)
        if not any(wide) or not all(wide) or all(w & 0xFFFFFFFF == 0 for w in (a, b)) and _runtime_best(a, b):
            descriptor = "idesc"
            chosen = ("both words are below 2**32: instruction descriptors" if not any(wide) else
                      "a 32-bit and a 64-bit word: an idesc and CUTLASS's runtime form" if not all(wide) else
                      "CUTLASS's runtime form decodes both with the fewest findings")
        else:
            descriptor = _best_wide(a, b)
            chosen = "the 64-bit descriptor that decodes both with the fewest findings (ties: smem, wgmma_smem, zcm)"
    if descriptor == "idesc":
        kind, ra, rb, why = _idesc_pair(a, b, kind)
        if chosen == "given" and why != "given":
            chosen = why
        elif why != "given":
            chosen = f"{chosen}; kind: {why}"
    else:
        ra, rb = _readings(a, descriptor)[descriptor], _readings(b, descriptor)[descriptor]
        kind = None
    da, db, runtime_a, runtime_b = ra.decoded, rb.decoded, ra.runtime, rb.runtime
    fields = tuple(FieldDiff(fa.name, fa.bits, fa.raw, fb.raw, fa.value, fb.value, fa.unit)
                   for fa, fb in zip(da.fields, db.fields))
    keys_a, keys_b = {_key(f) for f in da.findings}, {_key(f) for f in db.findings}
    return Diff(descriptor, kind, da, db, fields,
                tuple(f for f in da.findings if _key(f) not in keys_b),
                tuple(f for f in db.findings if _key(f) not in keys_a),
                runtime_a, runtime_b, chosen)


def _one_idesc_one_runtime(a: int, b: int) -> None:
    """A 32-bit and a 64-bit word compare only as an idesc and CUTLASS's runtime form of one (E31):
    the 64-bit word's low half 0 and its upper half consistent with a kind. Anything else (an
    idesc against an smem descriptor) is two descriptors: refused, naming what each word is."""
    narrow, wide = (a, b) if b >> 32 else (b, a)
    if not wide & 0xFFFFFFFF and any(r.ok for r in _readings(wide >> 32, "idesc").values()):
        return
    best = identify(wide).best
    what = f".kind::{best.kind} idesc" if best.kind else best.descriptor
    raise usage_error("DIFF-DESCRIPTOR", "descriptor", f"idesc and {best.name}", ", ".join(DESCRIPTORS),
                      f"{hex_word(narrow, 32)} is an instruction descriptor (32-bit) and {hex_word(wide, 64)} reads as "
                      f"{what}, not as CUTLASS's runtime form of one (low half 0): two descriptors; give --as to "
                      "compare both under one layout")


def _score(rs: tuple[Reading, Reading]) -> tuple[int, int]:
    return (sum(not r.ok for r in rs), sum(len(r.findings) for r in rs))


def _wide_scores(a: int, b: int) -> dict[Descriptor, tuple[int, int]]:
    return {name: _score((_readings(a, name)[name], _readings(b, name)[name]))
            for name in ("smem", "wgmma_smem", "zcm")}


def _best_wide(a: int, b: int) -> Descriptor:
    scores = _wide_scores(a, b)
    return min(scores, key=scores.__getitem__)


def _runtime_best(a: int, b: int) -> bool:
    """Both low halves are 0: is CUTLASS's runtime idesc strictly better than smem and zcm?"""
    try:
        _, ra, rb, _ = _idesc_pair(a >> 32, b >> 32, None)
    except UsageError:
        return False
    return _score((ra, rb)) < min(_wide_scores(a, b).values())
