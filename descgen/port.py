"""A shared memory descriptor ported between its two families: Hopper's ``wgmma`` (``sm_90a``,
§9.7.15.5.1.2.2) and Blackwell's ``tcgen05`` (``sm_100a`` and its family, Table 40):
:func:`port_smem`.

Both families describe the same canonical layouts (§9.7.15.5.1.2.1, §9.7.16.3) with the same start
address, LBO, SBO and base offset fields, bit for bit. What differs (errata E44): tcgen05 has
the fixed constant 0b001 in bits 46-48 (a Hopper word reused on Blackwell lacks bit 46), a 3-bit
swizzle field in bits 61-63 where wgmma has a 2-bit one in bits 62-63 (the same 64-bit pattern
names the same mode, so the *code* changes, 1 -> 2 for 128B, and the bits do not), and modes wgmma
lacks: 128-byte swizzling with 32-byte atomicity and the absolute-address LBO mode (``sm_103a``).
The port is generic over the two tables: a field both have keeps its value; a field only the
source has must hold its neutral value (its table ``default``); a constant only the target has is
set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .catalog import usage_error
from .engine import Decoded, check_word, plan
from .errors import EncodeError, Finding, WordError
from .facts import smem_family_target, smem_target, smem_targets
from .idesc import consistent_kinds
from .loader import SMEM_LAYOUTS, Field, layout
from .smem import encode_smem, validate_smem
from .types import SmemArch
from .wgmma_smem import encode_wgmma_smem, validate_wgmma_smem

__all__ = ["PortChange", "Ported", "port_smem"]


@dataclass(frozen=True)
class PortChange:
    """One field that the port changes or reads differently.

    Attributes:
        field: the field's name (in the target family, else the source's).
        bits_from, bits_to: its bits in the source and target layouts (``""``: the layout has none).
        value_from, value_to: its logical value in each (None: the layout has no such field).
        raw_from, raw_to: its raw bits in each.
        why: the sentence that says why, with its source.
    """

    field: str
    bits_from: str
    bits_to: str
    value_from: Any
    value_to: Any
    raw_from: int | None
    raw_to: int | None
    why: str

    def as_dict(self) -> dict[str, Any]:
        return {"field": self.field, "bits_from": self.bits_from, "bits_to": self.bits_to, "value_from": self.value_from,
                "value_to": self.value_to, "raw_from": self.raw_from, "raw_to": self.raw_to, "why": self.why}


@dataclass(frozen=True)
class Ported:
    """A descriptor ported to another family.

    Attributes:
        word: the ported 64-bit word (its target family's encoding).
        source, target: the word decoded in each family (:class:`descgen.Decoded`; ``descriptor``
            ``"wgmma_smem"`` or ``"smem"``).
        from_arch, to_arch: the source family's target (``sm_90a`` or ``sm_100a``) and the target
            the caller named.
        changes: the fields that change, or that mean the same with other bits (the swizzle).
        findings: the target word's warnings and notes (errors raise instead).
        note: why nothing was ported, when the word is already a valid descriptor of the target
            family and not one of the other (``source`` is then ``target``, ``changes`` empty);
            ``""`` otherwise.
    """

    word: int
    source: Decoded
    target: Decoded
    from_arch: str
    to_arch: str
    changes: tuple[PortChange, ...]
    findings: tuple[Finding, ...]
    note: str = ""

    @property
    def hex(self) -> str:
        return f"{self.word:#018x}"

    @property
    def flipped(self) -> int:
        """The bits that differ between the source word and the ported one."""
        return self.source.word ^ self.word

    def as_dict(self) -> dict[str, Any]:
        return {"word": self.hex, "from": {"arch": self.from_arch, "descriptor": self.source.descriptor, "word": self.source.hex},
                "to": {"arch": self.to_arch, "descriptor": self.target.descriptor, "word": self.hex},
                "flipped": f"{self.flipped:#018x}", "changes": [c.as_dict() for c in self.changes],
                "findings": [f.as_dict() for f in self.findings], **({"note": self.note} if self.note else {})}


#: Per family: its validator and its encoder.
_FAMILY = {"smem_desc": (validate_smem, encode_smem), "wgmma_smem_desc": (validate_wgmma_smem, encode_wgmma_smem)}


def port_smem(word: int, *, to: SmemArch) -> Ported:
    """Port a 64-bit shared memory descriptor to the family ``to``'s MMA reads.

    ``to="sm_90a"``: ``word`` is read as a tcgen05 descriptor (Table 40) and written as a wgmma
    one (§9.7.15.5.1.2.2); any tcgen05 target (``sm_100a``...): ``word`` is read as a wgmma
    descriptor and written as a tcgen05 one. The start address, LBO, SBO and base offset keep their
    values and bits; the swizzle keeps its mode (and its bits: the codes differ, errata E44);
    tcgen05's constant bits 46-48 are set or dropped.

    A word that is already a valid descriptor of the target family, and not one of the source
    family (bit 46 set, to a tcgen05 target), is returned unchanged, with ``.note`` saying so.

    Returns:
        A :class:`Ported`: ``.word``, ``.changes`` (what changed and why), both decodings.

    Raises:
        UsageError: ``to`` is not a target (``PORT-TARGET``).
        WordError: ``word`` is not an unsigned 64-bit integer, or it is an instruction descriptor
            (a 32-bit word consistent with an MMA kind), or a valid descriptor of neither family
            (``PORT-WORD``).
        EncodeError: the source uses a mode the target family lacks (``PORT-MODE``: tcgen05's
            128B with 32-byte atomicity, or its absolute-address LBO mode, to sm_90a).
    """
    found = smem_target(to)
    if found is None:
        raise usage_error("PORT-TARGET", "to", to, ", ".join(smem_targets()), where="port")
    target_layout, to_arch = found
    source_layout = next(name for name in SMEM_LAYOUTS if name != target_layout)
    check_word(word, 64, layout(source_layout).word)
    validate, _ = _FAMILY[source_layout]
    from_arch = smem_family_target(source_layout)
    if not word >> 32:
        kinds = consistent_kinds(word)
        if kinds:
            raise usage_error("PORT-WORD", "word", word, "a 64-bit shared memory descriptor", f"{word:#010x} is an "
                              f"instruction descriptor (consistent with {', '.join('.kind::' + k for k in kinds)}), not a "
                              "shared memory descriptor", where="port", error=WordError)
    report = validate(word)
    source = report.decoded[layout(source_layout).word]
    errors = [f for f in report.findings if f.severity == "error"]
    if errors:
        there = _FAMILY[target_layout][0](word)
        if there.ok:  # already the target family's word: nothing to port
            target = there.decoded[layout(target_layout).word]
            family = layout(target_layout).family
            return Ported(word, target, target, smem_family_target(target_layout), to_arch, (), there.findings,
                          f"{word:#018x} is already a {family} ({smem_family_target(target_layout)}) descriptor "
                          f"(as {layout(source_layout).family}: {errors[0].code}): nothing to port")
        first = errors[0]
        raise usage_error("PORT-WORD", first.field, word if first.field == "word" else first.value, "a valid word of the "
                          f"{layout(source_layout).family} family", f"read as {layout(source_layout).family} ({from_arch}), "
                          f"{first.code}: {first.rule}", where="port", error=WordError)
    values, changes = _carry(source, source_layout, target_layout)
    encode = _FAMILY[target_layout][1]
    new = encode(**values)
    target = _FAMILY[target_layout][0](new).decoded[layout(target_layout).word]
    changes += _constants(source, target)
    order = {f.name: i for i, f in enumerate(layout(target_layout).fields)}
    changes.sort(key=lambda c: order.get(c.field, -1))
    return Ported(int(new), source, target, from_arch, to_arch, tuple(changes), tuple(getattr(new, "findings", ())))


def _carry(source: Decoded, source_layout: str, target_layout: str) -> tuple[dict[str, Any], list[PortChange]]:
    """The target's values from the source's (same names), and the changes that says."""
    src, dst = layout(source_layout), layout(target_layout)
    values: dict[str, Any] = {}
    changes: list[PortChange] = []
    for f in src.fields:
        if not f.is_value:
            continue
        value = source.value(f.name)
        g = dst.by_name.get(f.name)
        if g is None or not g.is_value:
            if value != f.default:
                raise usage_error("PORT-MODE", f.name, value, f"{f.default} ({dst.family} has no {f.name} field)",
                                  f"{src.family} {f.name} = {value} ({f.source}) has no {dst.family} counterpart",
                                  where="port", error=EncodeError)
            changes.append(PortChange(f.name, f.bits, "", value, None, source[f.name].raw, None,
                                      f"{dst.family} has no {f.name} field: it always reads as {value} ({f.source})"))
            continue
        if g.type == "enum" and value not in g.codes(None):
            raise usage_error("PORT-MODE", f.name, value, ", ".join(map(str, g.codes(None))),
                              f"{src.family} {f.name} {value} ({f.source}) has no {dst.family} counterpart ({g.source})",
                              where="port", error=EncodeError)
        values[f.name] = value
        if g.type == "enum":
            raw_from, raw_to = f.codes(None)[value], g.codes(None)[value]
            if (raw_from, f.lo) != (raw_to, g.lo):
                same = raw_from << f.lo == raw_to << g.lo
                changes.append(PortChange(f.name, f.bits, g.bits, value, value, raw_from, raw_to,
                                          f"{value}: {src.family} code {raw_from} in bits {f.bits}, {dst.family} code {raw_to} "
                                          f"in bits {g.bits}: " + ("the same 64-bit pattern, so the word's bits do not change"
                                                                  if same else "other bits") + f" ({f.source}; {g.source}; E44)"))
    return values, changes


def _constants(source: Decoded, target: Decoded) -> list[PortChange]:
    """The target's constant fields whose bits the source word does not hold (tcgen05's version
    bits 46-48), and the source's constants the target drops."""
    out = []
    for d, other, to_side in ((target, source, True), (source, target, False)):
        for f in d.fields:
            if f.type != "constant" or f.raw == 0:
                continue
            spec: Field = plan(d.layout).layout.field(f.name)
            there = other.word >> spec.lo & spec.mask
            if there == f.raw:
                continue
            family = layout(target.layout).family
            why = (f"{family} requires bits {f.bits}: {f.description} ({f.source})" if to_side else
                   f"{family} does not have these bits: {f.description} ({f.source}) is dropped")
            if spec.note:
                why += f"; {spec.note}"
            out.append(PortChange(f.name, "" if to_side else f.bits, f.bits if to_side else "", None if to_side else f.raw,
                                  f.raw if to_side else None, None if to_side else f.raw, f.raw if to_side else None, why))
    return out
