"""The one generic field engine: encode, decode and check, for every descriptor layout.

Each layout (a PTX table, see :mod:`descgen.model.loader`) is compiled per kind into a :class:`Plan`:
fields become ``(name, shift, mask, transform, domain)`` and, where the domain is small, a
lookup table from logical value to the shifted raw bits, so encoding is one dictionary lookup and
one ``|`` per field. Encode is strict (any problem raises, with every finding); decode is total
(any word of the right width decodes, problems become findings on the result).

The records it gives are :mod:`descgen.model.decoded`'s (:class:`Decoded`) and
:mod:`descgen.model.word`'s (:class:`Word`, :class:`KnownBits`, the word forms); this module
re-exports them.
"""

from __future__ import annotations

import functools
import operator
from typing import Any, Callable, Iterable, Mapping, NamedTuple

from ..core.errors import EncodeError, Finding, UsageError
from ..core.transforms import Transform
from .decoded import Decoded, DecodedField
from .loader import VALUE_TYPES, Field, Layout, layout
from .word import (KnownBits, Word, WordInput, as_word, check_word, code_word, hex_bits, hex_word, show_value,
                   unit_word)

__all__ = ["Plan", "plan", "code_word", "Word", "KnownBits", "DecodedField", "Decoded", "decode", "encode",
           "check_value", "check_word", "finding_code", "check_rule", "unit_word", "show_value", "hex_word", "hex_bits",
           "WordInput", "as_word"]

#: Domains with at most this many members are compiled to lookup tables.
_LUT_LIMIT = 4096


def finding_code(word: str, f: Field, check: str) -> str:
    """Stable finding code: ``SMEM-RESERVED-14``, ``IDESC-N-RANGE``, ``SMEM-SWIZZLE-CODE``,
    ``WGMMA-SMEM-RESERVED-46``."""
    if f.type == "reserved":
        return f"{code_word(word)}-RESERVED-{f.lo}"
    return f"{code_word(word)}-{f.name.upper().replace('_', '-')}-{check}"


def check_rule(f: Field, check: str) -> str:
    """The rule sentence of one field's own check (``check`` = TYPE, ALIGN, RANGE, VALUE, CODE,
    RESERVED or CONST), as the code :func:`finding_code` names is catalogued
    (:func:`descgen.codes.field_codes`)."""
    rule = {
        "TYPE": "the value must have the field's type",
        "ALIGN": f"must be a multiple of {f.transform.align}" + (f" ({f.unit})" if f.unit else ""),
        "RANGE": "the value must lie in the field's domain",
        "VALUE": "the flag value must be one the kind supports",
        "CODE": "the code must be one the table defines",
        "RESERVED": f"reserved bits {f.bits} must be 0",
        "CONST": f"bits {f.bits} are a fixed constant {f.const:#0{f.width + 2}b}" if f.type == "constant" else "",
    }[check]
    return f"{f.description}: {rule}"


def _for_kind(kind: str | None) -> str:
    return f" for .kind::{kind}" if kind else ""


def _stored(f: Field) -> str:
    t = f.transform
    return "" if t.name == "identity" else f"; bits {f.bits} store {t.formula}"


def _finding(lay: Layout, f: Field, kind: str | None, check: str, value: Any, rule: str,
             allowed: str | None = None) -> Finding:
    if f.note:
        rule = f"{rule}; note: {f.note}"
    return Finding(
        code=finding_code(lay.word, f, check),
        severity=f.severity,
        field=f.name,
        value=value,
        allowed=allowed if allowed is not None else f.domain(kind).describe(),
        rule=rule,
        source=f.source,
    )


def check_value(lay: Layout, f: Field, kind: str | None, value: Any) -> Finding | None:
    """Check one logical value against one field (the encode side). None when it is legal."""
    dom = f.domain(kind)
    if f.type == "enum":
        codes = f.codes(kind)
        int_named = all(type(name) is int for name in codes)  # max_shift: 0, 8, 16, 32
        right_type = (_is_int(value) and not isinstance(value, bool)) if int_named else value.__class__ is str
        if not right_type or value not in codes:
            return _finding(lay, f, kind, "CODE", value, f"no such {f.name}{_for_kind(kind)}", _codes_text(f, kind))
        return None
    if f.type == "flag":
        if not _is_int(value) or value not in (0, 1):
            return _finding(lay, f, kind, "TYPE", value, "must be true or false")
        if bool(value) not in dom:
            return _finding(lay, f, kind, "VALUE", value, f"not supported{_for_kind(kind)}")
        return None
    if f.type == "uint":
        if isinstance(value, bool) or not _is_int(value):
            return _finding(lay, f, kind, "TYPE", value, f"must be an integer{_unit(f)}")
        value = operator.index(value)
        align = f.transform.align
        if value % align:
            return _finding(
                lay, f, kind, "ALIGN", value,
                f"must be a multiple of {align}{_unit(f)}{_stored(f)}",
            )
        if value not in dom:
            return _finding(lay, f, kind, "RANGE", value, f"out of range{_for_kind(kind)}{_stored(f)}")
        return None
    raise UsageError((Finding(f"{code_word(lay.word)}-FIELD-FIXED", "error", f.name, value, "(not settable)",
                              f"bits {f.bits} are {f.type}, not a value", f.source),))


def _is_int(value: Any) -> bool:
    """Integers, bools and integer-likes (numpy integers): anything with ``__index__``."""
    return hasattr(type(value), "__index__")


def _unit(f: Field) -> str:
    return f" ({f.unit})" if f.unit else ""


def check_raw(lay: Layout, f: Field, kind: str | None, raw: int) -> tuple[Any, Finding | None, str]:
    """Decode one field's raw bits: (logical value, finding or None, note)."""
    if f.type == "reserved":
        if raw:
            return raw, _finding(lay, f, kind, "RESERVED", raw, f"reserved bits {f.bits} must be 0", "0"), ""
        return raw, None, ""
    if f.type == "constant":
        if raw != f.const:
            w = f.width
            return raw, _finding(
                lay, f, kind, "CONST", raw,
                f"bits {f.bits} are a fixed constant {f.const:#0{w + 2}b}, found {raw:#0{w + 2}b}",
                f"{f.const:#0{w + 2}b}",
            ), ""
        return raw, None, ""
    if f.type == "enum":
        for name, code in f.codes(kind).items():
            if code == raw:
                return name, None, ""
        note = f"unknown code {raw}"
        return None, _finding(lay, f, kind, "CODE", raw, f"code {raw} is not defined{_for_kind(kind)}",
                              _codes_text(f, kind)), note
    if f.type == "flag":
        value = bool(raw)
        if value not in f.domain(kind):
            return value, _finding(lay, f, kind, "VALUE", value, f"not supported{_for_kind(kind)}"), ""
        return value, None, ""
    number = f.transform.decode(raw)
    if number not in f.domain(kind):
        return number, _finding(lay, f, kind, "RANGE", number, f"out of range{_for_kind(kind)}{_stored(f)}"), ""
    return number, None, ""


def _codes_text(f: Field, kind: str | None) -> str:
    return ", ".join(f"{name} = {code}" for name, code in f.codes(kind).items())


# --------------------------------------------------------------------------------------------
# Plans: one per (layout, kind).


class FieldsRead(NamedTuple):
    """A word's fields as :meth:`Plan.read` reads them, before a descriptor module adds its rules'
    findings and derived values (:meth:`Plan.result` makes the :class:`Decoded`).

    Attributes:
        word: the word (unknown bits 0). fields: every field, in bit order. findings: the field
        checks' (reserved bits, constants, codes, ranges). values: the value fields' logical
        values by name (shared with the result: read, never changed). known, unknown: as
        :class:`Decoded`.
    """

    word: int
    fields: tuple["DecodedField", ...]
    findings: tuple[Finding, ...]
    values: dict[str, Any]
    known: int = -1
    unknown: tuple[str, ...] = ()


#: A decoded raw value of one field, remembered: (the field, its finding or None, its value).
_Hit = tuple["DecodedField", "Finding | None", Any]


class Plan:
    """A layout compiled for one kind: the encoder and decoder loops.

    ``encode(values)`` takes logical values by field name and returns the word; ``decode(word)``
    returns a :class:`Decoded`. Both loop over the same compiled fields.
    """

    __slots__ = ("layout", "kind", "base", "luts", "typed_luts", "ranges", "value_fields", "decoders", "defaults",
                 "fill", "context", "spellings", "pack", "unpack")

    def __init__(self, lay: Layout, kind: str | None) -> None:
        if lay.kinds and kind not in lay.kinds:
            raise UsageError((Finding(f"{code_word(lay.word)}-KIND", "error", "kind", kind, ", ".join(lay.kinds),
                                      f"{lay.title} serves these kinds only", lay.source),))
        self.layout = lay
        self.kind = kind
        self.context = f"{lay.word}{_for_kind(kind).replace(' for', ',')}" if kind else lay.word
        base = 0
        luts: list[tuple[str, dict[Any, int], set[type]]] = []
        ranges: list[tuple[str, int, int, int, Transform, int]] = []
        for f in lay.fields:
            if f.type == "constant":
                base |= f.const << f.lo
            if not f.is_value:
                continue
            dom = f.domain(kind)
            # Dict lookups equate 128.0, True and 128: each lookup table also names the classes
            # its keys may have, and anything else takes the checked path.
            if f.type == "enum":
                codes = f.codes(kind)
                luts.append((f.name, {name: code << f.lo for name, code in codes.items()},
                             {type(name) for name in codes}))
            elif f.type == "flag":
                luts.append((f.name, {v: int(v) << f.lo for v in dom.members()}, {bool}))
            elif dom.values is not None or (dom.hi - dom.lo) // dom.step < _LUT_LIMIT:
                luts.append((f.name, {v: f.transform.encode(v) << f.lo for v in dom.members()}, {int}))
            else:  # a range domain: checked inline (encode), as Domain.__contains__ does
                assert dom.values is None
                ranges.append((f.name, dom.lo, dom.hi, dom.step, f.transform, f.lo))
        self.base = base
        # Lookup tables keyed by strings need no class check; those keyed by numbers or bools do.
        self.luts = tuple((name, lut) for name, lut, classes in luts if classes == {str})
        self.typed_luts = tuple((name, classes.pop(), lut) for name, lut, classes in luts if classes != {str})
        self.ranges = tuple(ranges)
        # Compiled on the first encode (a decoder never needs it): the first call compiles, keeps
        # the compiled function in this slot, and packs.
        self.pack: Callable[[Mapping[str, Any]], Word] = self._pack_first
        self.value_fields = tuple(f for f in lay.fields if f.is_value)
        # Per field: (shift, mask, field, memo raw -> (DecodedField, Finding | None, value)).
        # Decoded fields are immutable, so each raw value is decoded once (at most 2**width entries).
        self.decoders: tuple[tuple[int, int, Field, dict[int, _Hit]], ...] = tuple(
            (f.lo, f.mask, f, {}) for f in lay.fields)
        self.unpack: Callable[[int], tuple[tuple[DecodedField, ...], tuple[Finding, ...], dict[str, Any]]] | None = None
        self.defaults = dict(lay.defaults.get(kind, {})) if kind else {}
        # Values an encoder may leave out: the kind's defaults and the fields' own defaults.
        self.fill = {f.name: f.default for f in lay.fields if f.default is not None} | self.defaults
        # Enum names are case-insensitive ("128b", "K", "BF16"): per field, folded name -> the table's.
        self.spellings = {name: {str(v).lower(): v for v in lut} for name, lut in self.luts}

    # -- encode -----------------------------------------------------------------------------

    def encode(self, values: Mapping[str, Any], *, check: bool = True) -> "Word":
        """Build the word from logical values by field name (every value field must be given).

        Raises:
            EncodeError: a value breaks its field's rule (every finding is attached).
            UsageError: a value field is missing.
        """
        try:
            return self.pack(values)
        except (KeyError, TypeError):
            spelled = {name: self.spellings[name].get(v.lower(), v) for name, v in values.items()
                       if v.__class__ is str and name in self.spellings}
            if any(values[name] != v for name, v in spelled.items()):
                # Enum names in another case: the caller's values take the table's spelling, so
                # that the rules it runs on them next see the names they compare with.
                values.update(spelled)  # type: ignore[attr-defined]
                return self.encode(values, check=check)
            if self.fill and any(name not in values for name in self.fill):
                return self.encode({**self.fill, **values}, check=check)
            findings = self.check(values)
            if findings and check:
                raise EncodeError(findings, self.context) from None
            # Legal values the fast path does not take (0/1 for a flag, numpy integers), or
            # check=False: pack value by value.
            return self._encode_unchecked(values, findings)

    def _pack_first(self, values: Mapping[str, Any]) -> "Word":
        self.pack = self._compile_pack()
        return self.pack(values)

    def _compile_pack(self) -> "Callable[[Mapping[str, Any]], Word]":
        """The fast path of :meth:`encode` as one straight-line function over this plan's lookup
        tables and ranges (no loop): every value of the right class and in its domain is packed;
        anything else raises KeyError (or TypeError, unhashable), and :meth:`encode` checks it."""
        env: dict[str, Any] = {"BASE": self.base, "NEW": int.__new__, "WORD": Word}
        lines = ["def pack(values):", "    word = BASE"]
        for i, (name, lut) in enumerate(self.luts):
            env[f"L{i}"] = lut
            lines.append(f"    word |= L{i}[values[{name!r}]]")
        for i, (name, cls, lut) in enumerate(self.typed_luts):
            env[f"T{i}"], env[f"C{i}"] = lut, cls
            lines += [f"    v = values[{name!r}]", f"    if v.__class__ is not C{i}: raise KeyError({name!r})",
                      f"    word |= T{i}[v]"]
        for i, (name, lo, hi, step, transform, shift) in enumerate(self.ranges):
            env[f"E{i}"] = transform.encode
            aligned = "" if step == 1 else f" or x % {step}" if lo == 0 else f" or (x - {lo}) % {step}"
            lines += [f"    x = values[{name!r}]",  # Domain.__contains__, inlined
                      f"    if x.__class__ is not int or not {lo} <= x <= {hi}{aligned}: raise KeyError({name!r})",
                      f"    word |= ({transform.expr or f'E{i}(x)'}) << {shift}"]
        lines.append("    return NEW(WORD, word)")  # a clean Word: int's constructor, no Python frame
        pack: Callable[[Mapping[str, Any]], Word] = _define("pack", "\n".join(lines),
                                                            f"<descgen plan {self.layout.name}>", env)
        return pack

    def check(self, values: Mapping[str, Any]) -> list[Finding]:
        """Every finding for the given logical values (empty when all are legal)."""
        lay = self.layout
        missing = [f.name for f in self.value_fields if f.name not in values]
        if missing:
            raise UsageError([Finding(f"{code_word(lay.word)}-{m.upper().replace('_', '-')}-MISSING", "error", m, None,
                                      self.layout.field(m).domain(self.kind).describe(), "a value is required",
                                      self.layout.field(m).source) for m in missing], self.context)
        found = []
        for f in self.value_fields:
            problem = check_value(lay, f, self.kind, values[f.name])
            if problem is not None:
                found.append(problem)
        return found

    def _encode_unchecked(self, values: Mapping[str, Any], findings: list[Finding]) -> "Word":
        """``check=False``: pack values that break a rule but still fit their bits, and attach the
        findings. A value that cannot be represented (wrong type, unknown member, misaligned, too
        wide for its bits) still raises: that would be a silently wrong word."""
        word = self.base
        for f in self.value_fields:
            v = values[f.name]
            problem = check_value(self.layout, f, self.kind, v)
            raw = f.codes(self.kind).get(v) if f.type == "enum" and problem is None else None
            if f.type != "enum" and (problem is None or problem.code.endswith(("-RANGE", "-VALUE"))):
                v = operator.index(v)
                raw = f.transform.encode(v)
                if f.transform.decode(raw) != v:  # the transform would drop set bits
                    raw = None
            if raw is None or not 0 <= raw <= f.mask:
                raise EncodeError([problem or _finding(self.layout, f, self.kind, "RANGE", v,
                                                       f"does not fit bits {f.bits}")], self.context)
            word |= raw << f.lo
        return Word(word, findings)

    # -- decode -----------------------------------------------------------------------------

    def decode(self, word: "WordInput") -> "Decoded":
        """Decode any word of the layout's width (or a partly known one, :meth:`read`) with the
        field checks. Problems are findings, never exceptions.

        Raises:
            WordError: not an unsigned integer of the layout's width (nor its bytes or Bits:
                :func:`as_word`).
        """
        return self.result(self.read(word))

    def read(self, word: "WordInput") -> "FieldsRead":
        """The fields of ``word`` with their findings and values: what :meth:`decode` returns as a
        :class:`Decoded`, for a descriptor module to add its rules' findings and derived values
        to before it makes the one result (:meth:`result`).

        A :class:`KnownBits` word reads every field whose bits are all known as a full word does;
        a field with an unknown bit gets value None, a note saying how many of its bits are
        known, and its name in ``.unknown``; its reserved or constant bits that are known are
        still checked. The word's bytes or a ``bitstring.Bits`` are read as :func:`as_word` reads
        them.

        Raises:
            WordError: not an unsigned integer of the layout's width, nor its bytes or Bits.
        """
        lay = self.layout
        if word.__class__ is not int or word < 0 or word >> lay.width:
            if isinstance(word, KnownBits):
                return self._read_known(word)
            word = as_word(word, lay.width, lay.word)
        assert isinstance(word, int)
        unpack = self.unpack
        if unpack is None:  # compiled on the first full-word read (an encoder never needs it)
            unpack = self.unpack = self._compile_unpack()
        return FieldsRead(word, *unpack(word))

    def result(self, read: "FieldsRead", findings: Iterable[Finding] = (),
               derived: tuple[tuple[str, Any, str], ...] = ()) -> "Decoded":
        """The :class:`Decoded` of a word :meth:`read` read, with ``findings`` after the field
        checks' and ``derived`` values (name, value, unit)."""
        lay = self.layout
        found = read.findings + tuple(findings) if findings else read.findings
        return Decoded(read.word, lay.width, lay.word, lay.name, self.kind, read.fields, found, derived, read.known,
                       read.unknown, read.values)

    def _hit(self, i: int, raw: int) -> "_Hit":
        """Decode field ``i``'s raw bits and remember them (the memo miss of :meth:`unpack`)."""
        _, _, f, memo = self.decoders[i]
        value, problem, note = check_raw(self.layout, f, self.kind, raw)
        hit = memo[raw] = (_decoded_field(f, raw, value, note), problem, value)
        return hit

    def _compile_unpack(
            self) -> "Callable[[int], tuple[tuple[DecodedField, ...], tuple[Finding, ...], dict[str, Any]]]":
        """:meth:`read` of a full word as one straight-line function over the fields' memos (no
        loop; as :meth:`_compile_pack`): the fields, their findings and the value fields' values."""
        env: dict[str, Any] = {"MISS": self._hit}
        lines = ["def unpack(word):"]
        for i, (lo, mask, f, memo) in enumerate(self.decoders):
            env[f"M{i}"] = memo
            raw = f"(word >> {lo}) & {mask:#x}" if lo else f"word & {mask:#x}"
            lines += [f"    r = {raw}", f"    h{i} = M{i}.get(r) or MISS({i}, r)"]
        hits = range(len(self.decoders))
        lines.append(f"    if {' and '.join(f'h{i}[1] is None' for i in hits)}:")
        lines.append("        found = ()")
        lines.append("    else:")
        lines.append(f"        found = tuple([h[1] for h in ({', '.join(f'h{i}' for i in hits)}) if h[1] is not None])")
        values = ", ".join(f"{f.name!r}: h{i}[2]" for i, (_, _, f, _) in enumerate(self.decoders) if f.is_value)
        lines.append(f"    return ({', '.join(f'h{i}[0]' for i in hits)},), found, {{{values}}}")
        unpack: Callable[[int], tuple[tuple[DecodedField, ...], tuple[Finding, ...], dict[str, Any]]] = _define(
            "unpack", "\n".join(lines), f"<descgen unpack {self.layout.name}>", env)
        return unpack

    def _read_known(self, bits: KnownBits) -> "FieldsRead":
        """:meth:`read` of a partly known word."""
        lay = self.layout
        check_word(bits.value, lay.width, lay.word)
        check_word(bits.mask, lay.width, lay.word)
        if bits.full(lay.width):
            return self.read(bits.value)
        word, known = bits.value & bits.mask, bits.mask
        fields, findings, unknown = [], [], []
        for i, (lo, mask, f, memo) in enumerate(self.decoders):
            raw, fk = (word >> lo) & mask, (known >> lo) & mask
            if fk == mask:  # every bit known: as a full word reads it
                decoded, problem, _ = memo.get(raw) or self._hit(i, raw)
            else:
                problem = None
                decoded = _decoded_field(f, raw, None, f"run-time: {bin(fk).count('1')} of {f.width} bits known")
                unknown.append(f.name)
                if f.type == "reserved" and raw:
                    problem = _finding(lay, f, self.kind, "RESERVED", raw, f"reserved bits {f.bits} must be 0", "0")
                elif f.type == "constant" and (raw ^ f.const) & fk:
                    w = f.width
                    problem = _finding(lay, f, self.kind, "CONST", raw,
                                       f"bits {f.bits} are a fixed constant {f.const:#0{w + 2}b}; known bits differ",
                                       f"{f.const:#0{w + 2}b}")
            fields.append(decoded)
            if problem is not None:
                findings.append(problem)
        return FieldsRead(word, tuple(fields), tuple(findings),
                          {f.name: f.value for f in fields if f.type in VALUE_TYPES}, known, tuple(unknown))


def _define(name: str, source: str, filename: str, env: dict[str, Any]) -> Any:
    """The function ``name`` that generated ``source`` defines, made in ``env`` (the names the
    source reads)."""
    exec(compile(source, filename, "exec"), env)
    return env[name]


def _decoded_field(f: Field, raw: int, value: Any, note: str) -> "DecodedField":
    """Field ``f`` decoded: its raw bits, logical value and note, with the table's row."""
    return DecodedField(f.name, f.bits, f.lo, f.hi, raw, value, f.unit, f.type, f.description, f.source, note)


@functools.cache
def plan(layout_name: str, kind: str | None = None) -> Plan:
    """The compiled plan for a layout and kind (cached)."""
    return Plan(layout(layout_name), kind)


def decode(layout_name: str, word: WordInput, kind: str | None = None) -> Decoded:
    """Decode ``word`` with any layout (a key of :data:`descgen.model.loader.LAYOUT_FILES`).

    The generic form of :func:`descgen.decode_idesc`, :func:`descgen.decode_smem`,
    :func:`descgen.decode_zcm`; it reaches every field the tables declare. ``word`` is an
    unsigned integer of the layout's width (32 or 64 bits), a :class:`KnownBits`, the word's
    bytes in memory order (little-endian, width / 8 bytes) or a ``bitstring.Bits`` of the
    layout's width (:func:`as_word`).

    Raises:
        KeyError: unknown layout. UsageError: a kind the layout does not serve.
        WordError: ``word`` is not an unsigned integer of the layout's width, nor bytes or Bits
            of its length (``<WORD>-WORD-RANGE``).
    """
    return plan(layout_name, kind).decode(word)


def encode(layout_name: str, kind: str | None = None, *, check: bool = True, **fields: Any) -> Word:
    """Encode a word of any layout from logical field values, by the tables' field names.

    The generic form of the ``encode_*`` functions: fields left out take the kind's defaults or
    the field's ``default`` from the table; a field the tables add is settable here at once.

    Raises:
        EncodeError: a value breaks its field's rule. UsageError: a required field is missing, or
            a name that is no value field of the layout (``WORD-FIELD-UNKNOWN``: never ignored).
    """
    p = plan(layout_name, kind)
    unknown = [name for name in fields if name not in p.layout.by_name or not p.layout.by_name[name].is_value]
    if unknown:
        lay = p.layout
        raise UsageError((Finding(f"{code_word(lay.word)}-FIELD-UNKNOWN", "error", unknown[0], fields[unknown[0]],
                                  ", ".join(f.name for f in p.value_fields),
                                  f"{lay.title} has no value field {unknown[0]!r}", lay.source),), p.context)
    return p.encode(fields, check=check)
