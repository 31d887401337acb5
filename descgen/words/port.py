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

from ..model.catalog import usage_error
from ..model.engine import Decoded, check_word, hex_word, plan
from ..core.errors import EncodeError, Finding, WordError
from ..model.facts import smem_family_target, smem_target, smem_targets
from .identify import Identified, identify
from ..model.loader import SMEM_LAYOUTS, Field, layout
from .smem import encode_smem, validate_smem
from ..core.types import SmemArch
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
        return {"field": self.field, "bits_from": self.bits_from, "bits_to": self.bits_to,
                "value_from": self.value_from, "value_to": self.value_to, "raw_from": self.raw_from,
                "raw_to": self.raw_to, "why": self.why}


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
        note: why nothing was ported, when the word is already the target family's (the family
            :func:`descgen.words.identify` reads it as: ``source`` is then ``target``, ``changes``
            empty); ``""`` otherwise.
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
        return hex_word(self.word, 64)

    @property
    def flipped(self) -> int:
        """The bits that differ between the source word and the ported one."""
        return self.source.word ^ self.word

    def as_dict(self) -> dict[str, Any]:
        return {"word": self.hex,
                "from": {"arch": self.from_arch, "descriptor": self.source.descriptor, "word": self.source.hex},
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

    Which family a word is in is what :func:`descgen.words.identify` says (E44): the family that reads it
    without an error, and with fewer findings where both do (a Hopper word, bit 46 clear, is
    wgmma's: as tcgen05 it has the version warning). A word already in the target family is
    returned unchanged, with ``.note`` saying so.

    Returns:
        A :class:`Ported`: ``.word``, ``.changes`` (what changed and why), both decodings.

    Raises:
        UsageError: ``to`` is not a target (``PORT-TARGET``).
        WordError: ``word`` is not an unsigned 64-bit integer, or it is below 2**32: an
            instruction descriptor, a tensor memory address or another 32-bit word, never a shared
            memory descriptor (``PORT-WORD``, naming what descgen reads it as).
        EncodeError: ``word`` breaks a rule of both families (``PORT-WORD-INVALID``, naming each
            family's first error and any other reading of the word); the source uses a mode the
            target family lacks (``PORT-MODE``: tcgen05's 128B with 32-byte atomicity, or its
            absolute-address LBO mode, to sm_90a).
    """
    found = smem_target(to)
    if found is None:
        raise usage_error("PORT-TARGET", "to", to, ", ".join(smem_targets()), where="port")
    target_layout, to_arch = found
    source_layout = next(name for name in SMEM_LAYOUTS if name != target_layout)
    check_word(word, 64, layout(source_layout).word)
    every = identify(word)
    if not word >> 32:
        raise usage_error("PORT-WORD", "word", word, "a 64-bit shared memory descriptor",
                          f"{word:#010x} is {_what(every)}", where="port", error=WordError)
    by_layout = {r.decoded.layout: r for r in every.readings if r.decoded.layout in SMEM_LAYOUTS}
    family = next(r for r in every.readings if r.decoded.layout in SMEM_LAYOUTS)  # identify's order (E44)
    if not family.ok:
        other = [r for r in every.consistent if r.decoded.layout not in SMEM_LAYOUTS]
        errors = "; ".join(f"as {_family(name)}, {r.report.errors[0].code}" for name, r in by_layout.items())
        raise usage_error("PORT-WORD-INVALID", "word", word, "a valid tcgen05 or wgmma shared memory descriptor",
                          f"{word:#018x} is neither: {errors}" + (f"; it reads as {_what(every)}" if other else "")
                          + f" (descgen decode {word:#018x})", where="port", error=EncodeError)
    if family.decoded.layout == target_layout:  # already the target family's word: nothing to port
        there, here = family, by_layout[source_layout]
        flaw = next((f for f in here.findings if f.severity != "info"), None)
        return Ported(word, there.decoded, there.decoded, smem_family_target(target_layout), to_arch, (),
                      there.findings, f"{word:#018x} is already a {_family(target_layout)} descriptor"
                      + (f" (as {_family(source_layout)}: {flaw.code})" if flaw else "") + ": nothing to port")
    source = family.decoded
    from_arch = smem_family_target(source_layout)
    values, changes = _carry(source, source_layout, target_layout)
    encode = _FAMILY[target_layout][1]
    new = encode(**values)
    target = _FAMILY[target_layout][0](new).decoded[layout(target_layout).word]
    changes += _constants(source, target)
    order = {f.name: i for i, f in enumerate(layout(target_layout).fields)}
    changes.sort(key=lambda c: order.get(c.field, -1))
    return Ported(int(new), source, target, from_arch, to_arch, tuple(changes), tuple(getattr(new, "findings", ())))


def _family(layout_name: str) -> str:
    """``tcgen05 (sm_100a)``, ``wgmma (sm_90a)``: a shared memory descriptor family and its target."""
    return f"{layout(layout_name).family} ({smem_family_target(layout_name)})"


def _what(found: Identified) -> str:
    """What :func:`descgen.words.identify` reads a word as, in words: its best consistent reading that is
    no shared memory descriptor (an instruction descriptor and its kinds, CUTLASS's runtime form, a
    tensor memory address, a zero-column mask descriptor), else what no reading fits."""
    consistent = [r for r in found.consistent if r.decoded.layout not in SMEM_LAYOUTS]
    if not consistent:
        if found.word >> 32:
            return "no descriptor descgen reads"
        return ("a 32-bit word that no .kind reads as an instruction descriptor without an error and that is no "
                "valid tensor memory address")
    best = consistent[0]
    if best.descriptor == "idesc":
        kinds = ", ".join(".kind::" + str(r.kind) for r in consistent if r.descriptor == "idesc")
        if best.runtime is not None:
            return f"CUTLASS's 64-bit runtime instruction descriptor (its upper half {best.runtime.idesc:#010x} is " \
                   f"consistent with {kinds}; errata E31)"
        return f"an instruction descriptor (consistent with {kinds})"
    if best.descriptor == "taddr":
        v = best.decoded.values()
        return f"a tensor memory address (lane {v['lane']}, column {v['column']}; §9.7.16.1.1)"
    title = layout(best.decoded.layout).title
    return f"a {title[:1].lower()}{title[1:]} ({best.descriptor})"


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
                              f"{src.family} {f.name} {value} ({f.source}) has no {dst.family} counterpart "
                              f"({g.source})",
                              where="port", error=EncodeError)
        values[f.name] = value
        if g.type == "enum":
            raw_from, raw_to = f.codes(None)[value], g.codes(None)[value]
            if (raw_from, f.lo) != (raw_to, g.lo):
                same = raw_from << f.lo == raw_to << g.lo
                changes.append(PortChange(f.name, f.bits, g.bits, value, value, raw_from, raw_to,
                                          f"{value}: {src.family} code {raw_from} in bits {f.bits}, {dst.family} "
                                          f"code {raw_to} in bits {g.bits}: "
                                          + ("the same 64-bit pattern, so the word's bits do not change"
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
            out.append(PortChange(f.name, "" if to_side else f.bits, f.bits if to_side else "",
                                  None if to_side else f.raw, f.raw if to_side else None,
                                  None if to_side else f.raw, f.raw if to_side else None, why))
    return out
