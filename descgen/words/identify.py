"""Which descriptor, and which MMA kind, a bare word is: :func:`identify`.

A word from a debugger or a register dump carries no label. descgen reads it the one way every
command does (``descgen decode``, ``descgen validate``, ``descgen batch``, :func:`descgen.emit`):

- a kind given: an instruction descriptor under that kind; a 64-bit word is CUTLASS's runtime
  form, whose upper 32 bits are the instruction descriptor (errata E31);
- a descriptor given: that one (an instruction descriptor without a kind: under every kind);
- nothing given: a word below 2**32 is an instruction descriptor, tried under every kind, and a
  tensor memory address (§9.7.16.1.1) where it is a valid one (the two never both are: an
  idesc's M sets bits 24-28, a tensor memory address's lane is below 128, bits 16-22; were
  they, the consistent kinds would still come first). Context that only one of the two takes
  chooses it: ``warp``/``alloc_columns``/``alloc_base`` a tensor memory address (valid or not),
  an idesc's context (``cta_group``, ``arch``...) the instruction descriptor; a wider
  word is tried as a shared memory descriptor of both families (tcgen05's, Table 40, and Hopper
  wgmma's, §9.7.15.5.1.2.2) and as a zero-column mask descriptor, and, when its low half is 0, as
  CUTLASS's runtime instruction descriptor too (errata E31, E32). :attr:`Identified.why` says
  which shared memory family the word's bits point to, and whether it is valid in both (E44).

Every reading is validated with the context that applies to its word; the readings come back best
first: no error finding first, then (a bare 32-bit word) the kinds before the tensor memory
address, then the fewest findings, then the order tried (PTX's kind order;
smem before wgmma_smem before zcm before the runtime form). A Hopper word (bit 46 clear) reads as
wgmma with no finding and as tcgen05 with the version warning: wgmma first. A word that is a zero-column mask
descriptor also
passes as a shared memory descriptor with a warning on the fixed bits 46-48, so it ranks second.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, get_args

from ..model.catalog import usage_error
from ..model.context import context as normalize_context
from ..model.context import words_context
from ..model.engine import Decoded, check_word, show_value
from ..core.errors import Finding, WordError
from ..model.facts import normalize_kind, smem_family_target
from .idesc import decode_idesc, idesc_report
from ..model.loader import KINDS, layout
from ..model.report import Report
from .runtime import RuntimeIdesc, idesc_from_runtime
from .smem import decode_smem, validate_smem
from .taddr import decode_taddr, validate_taddr
from ..core.types import Descriptor, Kind
from .wgmma_smem import decode_wgmma_smem, validate_wgmma_smem
from .zcm import decode_zcm, validate_zcm

__all__ = ["DESCRIPTORS", "Reading", "Identified", "identify", "smem_families", "decode_as", "check_any_word",
           "key_fields"]

#: The words descgen reads, by name.
DESCRIPTORS: tuple[Descriptor, ...] = get_args(Descriptor)

_VALIDATORS: dict[str, Callable[..., Report]] = {"smem": validate_smem, "zcm": validate_zcm, "taddr": validate_taddr,
                                                 "wgmma_smem": validate_wgmma_smem}
_DECODERS: dict[str, Callable[[int], Decoded]] = {"smem": decode_smem, "zcm": decode_zcm, "taddr": decode_taddr,
                                                "wgmma_smem": decode_wgmma_smem}



def check_any_word(word: Any, code: str) -> None:
    """Raise :class:`WordError` (the ``[[usage]]`` code ``code``) unless ``word`` is an unsigned
    integer of at most 64 bits: a word whose descriptor is not known yet."""
    if isinstance(word, bool) or not isinstance(word, int) or not 0 <= word < 1 << 64:
        raise usage_error(code, "word", word, "0..0xffffffffffffffff",
                          "no descriptor given, so any width up to 64 bits", error=WordError)


def decode_as(word: int, descriptor: str, kind: str | None = None) -> Decoded:
    """Decode ``word`` as ``descriptor`` (``idesc`` needs ``kind``): the decode_* function of
    that word, with the findings that need no context.

    Raises:
        UsageError: an unknown descriptor (``IDENTIFY-DESCRIPTOR``), an idesc without a kind or
            with an unknown one (``IDESC-KIND``). WordError: as the decoder.
    """
    if descriptor == "idesc":
        return decode_idesc(word, kind)  # type: ignore[arg-type]  # None: IDESC-KIND names it
    if descriptor not in _DECODERS:
        raise usage_error("IDENTIFY-DESCRIPTOR", "descriptor", descriptor, ", ".join(DESCRIPTORS))
    return _DECODERS[descriptor](word)


@dataclass(frozen=True)
class Reading:
    """One way to read a word: a descriptor (and kind), validated.

    Attributes:
        descriptor: ``idesc``, ``smem``, ``zcm`` or ``taddr``.
        kind: the MMA kind of an instruction descriptor, else None.
        report: the validation (its ``decoded[role]`` is the decoded word).
        runtime: for CUTLASS's 64-bit runtime instruction descriptor, how it was split (E31).
    """

    descriptor: str
    kind: str | None
    report: Report
    runtime: RuntimeIdesc | None = None

    @property
    def name(self) -> str:
        """The reading's label: the kind for an instruction descriptor, else the descriptor."""
        return self.kind if self.kind is not None else self.descriptor

    @property
    def decoded(self) -> Decoded:
        return self.report.decoded[self.descriptor]

    @property
    def ok(self) -> bool:
        return self.report.ok

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.report.findings


@dataclass(frozen=True)
class Identified:
    """Every reading of one word, best first (see the module doc for the order).

    Attributes:
        word: the word as given (64-bit for CUTLASS's runtime form).
        readings: every reading tried, best first.
        asked: what the caller fixed: ``"kind"``, ``"descriptor"`` or ``None`` (chosen by width).
        why: for a 64-bit word read every way, which shared memory descriptor family its bits
            point to and why (bits one family reserves or fixes), and whether it is valid in both
            (errata E44); else empty.
    """

    word: int
    readings: tuple[Reading, ...]
    asked: str | None
    why: tuple[str, ...] = ()

    @property
    def consistent(self) -> tuple[Reading, ...]:
        """The readings with no error finding, best first."""
        return tuple(r for r in self.readings if r.ok)

    @property
    def best(self) -> Reading:
        """The first reading: the best consistent one, or the best of none."""
        return self.readings[0]


def _rank(readings: list[Reading]) -> tuple[Reading, ...]:
    """Best first: no error finding, then (of a bare 32-bit word) every instruction descriptor
    before the tensor memory address, then the fewest findings, then the order tried."""
    return tuple(sorted(readings, key=lambda r: (not r.ok, r.descriptor == "taddr", len(r.findings))))


def identify(word: int, *, descriptor: Descriptor | None = None, kind: Kind | None = None,
             **context: Any) -> Identified:
    """Read a bare word every way it can be read, validated with ``context``.

    Args:
        word: the word (unsigned, at most 64 bits).
        descriptor: ``idesc``, ``smem``, ``zcm`` or ``taddr``; None: chosen by width (module doc).
        kind: the MMA kind (implies ``descriptor="idesc"``).
        context: instruction context (:func:`descgen.validate_idesc` and siblings); each reading
            takes the names its word's rules use (``[[context]]`` ``words`` in tables/contexts.toml).

    Returns:
        An :class:`Identified`: ``.readings`` best first, ``.consistent``, ``.best``.

    Raises:
        UsageError: an unknown descriptor, or a kind with another descriptor
            (``IDENTIFY-DESCRIPTOR``); an unknown kind (``IDESC-KIND``); a bad context value.
        WordError: not an unsigned integer of at most 64 bits, or wider than the descriptor given.
    """
    if descriptor is not None and descriptor not in DESCRIPTORS:
        raise usage_error("IDENTIFY-DESCRIPTOR", "descriptor", descriptor, ", ".join(DESCRIPTORS))
    if kind is not None:
        if descriptor not in (None, "idesc"):
            raise usage_error("IDENTIFY-DESCRIPTOR", "descriptor", descriptor, "idesc", "a kind was given")
        descriptor, kind = "idesc", normalize_kind(kind)
    if descriptor is None:
        check_any_word(word, "IDENTIFY-WORD")
    else:
        check_word(word, 64, descriptor)
    asked = "kind" if kind is not None else "descriptor" if descriptor is not None else None

    def given(what: str) -> dict[str, Any]:
        names = words_context(what)
        return {k: v for k, v in context.items() if k in names}

    def idesc_readings(w: int, kinds: tuple[Kind, ...], runtime: RuntimeIdesc | None) -> list[Reading]:
        ctx = normalize_context(**given("idesc"))
        return [Reading("idesc", k, idesc_report(w, k, ctx), runtime) for k in kinds]

    if descriptor == "idesc" or (descriptor is None and word < 1 << 32):
        runtime = idesc_from_runtime(word) if word >> 32 else None
        kinds = (kind,) if kind is not None else KINDS
        if descriptor is not None:
            return Identified(word, _rank(idesc_readings(runtime.idesc if runtime else word, kinds, runtime)), asked)
        # a bare 32-bit word: an idesc under every kind and a tensor memory address, unless the
        # context names what only one of them takes (--warp: a tensor memory address; --cta-group:
        # an instruction descriptor); no reading taking every name given, each takes its own
        named = {name for name, value in context.items() if value is not None}
        as_idesc, as_taddr = named <= set(words_context("idesc")), named <= set(words_context("taddr"))
        if not (as_idesc or as_taddr):
            as_idesc = as_taddr = True
        readings = idesc_readings(word, kinds, None) if as_idesc else []
        if as_taddr:
            taddr = Reading("taddr", None, validate_taddr(word, **given("taddr")))
            readings += [taddr] if taddr.ok or not as_idesc else []  # (beside the kinds: only a valid one)
        return Identified(word, _rank(readings), asked)
    if descriptor is not None:
        return Identified(word, (Reading(descriptor, None, _VALIDATORS[descriptor](word, **given(descriptor))),), asked)
    readings = [Reading(d, None, _VALIDATORS[d](word, **given(d))) for d in ("smem", "wgmma_smem", "zcm")]
    why = smem_families(readings[0], readings[1])
    if not word & 0xFFFFFFFF:  # low half 0: perhaps CUTLASS's runtime instruction descriptor (E31)
        runtime = idesc_from_runtime(word)
        readings += [r for r in idesc_readings(runtime.idesc, KINDS, runtime) if r.ok]
    return Identified(word, _rank(readings), asked, why)


def smem_families(*readings: Reading) -> tuple[str, ...]:
    """Why a 64-bit word is one shared memory descriptor family's or the other's (E44): per
    reading (``smem``: tcgen05, ``wgmma_smem``: wgmma), the fixed, reserved or undefined bits that
    reading finds wrong, then the verdict (valid in both, in one, in neither)."""
    def label(r: Reading) -> str:
        lay = layout(r.decoded.layout)
        return f"{lay.family} ({smem_family_target(lay.name)})"

    out = []
    for r in readings:
        d = r.decoded
        for f in r.findings:
            if f.code.rsplit("-", 1)[-1] in ("RESERVED", "CONST", "CODE") or "-RESERVED-" in f.code:
                spec = next((x for x in d.fields if x.name == f.field), None)
                if spec is not None:
                    out.append(f"as {label(r)}: bits {spec.bits} = {spec.raw:#b}: {f.rule} ({f.code}, {f.source})")
    ok = [r for r in readings if r.ok]
    names = [label(r) for r in ok]
    if len(ok) == len(readings):
        best = min(readings, key=lambda r: len(r.findings))
        out.append(f"valid in both families; {label(best)} reads it with the fewest findings"
                   + (" (as tcgen05 it lacks bit 46, the version: port it with descgen port to use it on Blackwell)"
                      if best.descriptor == "wgmma_smem" else ""))
    elif ok:
        out.append(f"a {names[0]} shared memory descriptor: the other family finds an error")
    else:
        out.append("neither shared memory descriptor family reads it without an error")
    return tuple(out)


def key_fields(d: Decoded) -> str:
    """The decoded fields a reader wants first, on one line: an idesc's kind, M, N, K, types and
    major-ness; an smem descriptor's start address, LBO, SBO (bytes), swizzle, base offset and LBO
    mode; every other word's fields. ``?`` marks a field known at run time only."""
    v = d.values()
    if d.descriptor == "idesc":
        k = next((value for name, value, _ in d.derived if name == "k"), None)
        parts = [f"kind {d.kind}", f"M {show_value(v.get('m'))}", f"N {show_value(v.get('n'))}", f"K {show_value(k)}",
                 f"atype {show_value(v.get('atype'))}", f"btype {show_value(v.get('btype'))}"]
        if "dtype" in v:
            parts.append(f"dtype {show_value(v['dtype'])}")
        if "scale_type" in v:
            parts.append(f"scale type {show_value(v['scale_type'])}")
        parts += [f"A {show_value(v.get('a_major'))}-major", f"B {show_value(v.get('b_major'))}-major"]
        if v.get("sparse"):
            parts.append("sparse")
        return ", ".join(parts)
    if d.descriptor in ("smem", "wgmma_smem"):
        return (f"start {show_value(v['start_address'], '#x')}, LBO {show_value(v['lbo'])}, "
                f"SBO {show_value(v['sbo'])}, swizzle {show_value(v['swizzle'])}, "
                f"base offset {show_value(v['base_offset'])}"
                + (f", LBO mode {show_value(v['lbo_mode'])}" if "lbo_mode" in v else ""))
    return ", ".join(f"{f.name} {show_value(f.value)}" for f in d.fields if not f.name.startswith("reserved"))
