"""Every code's examples made concrete, and the rules page (``docs/rules.md``).

Every code an input can produce has a legal and an illegal example (:func:`examples_for`); the
few no input can produce are listed with the reason (:func:`unreachable`). Where they come from:

- a ``[[rule]]`` of ``tables/rules.toml``: its ``legal``/``illegal`` (the fields of its words, a raw
  word or a PTX snippet, and the context);
- a ``[[layout]]`` or ``[[usage]]`` entry of ``tables/codes.toml`` or a ``[[context]]`` entry of
  ``tables/contexts.toml``: its ``legal``/``illegal``, mostly calls of the Python API (``as = "call"``) or batch
  requests
  (``as = "batch"``);
- a field's own check (``IDESC-N-RANGE``, ``SMEM-RESERVED-14``: :func:`descgen.codes.field_codes`)
  and the usage codes generated from the layouts (``<WORD>-WORD-RANGE``, ``-FIELD-UNKNOWN``,
  ``-<FIELD>-MISSING``, ``IDESC-<ARG>-ABSENT``): generated here from the layout tables, a raw word
  that ``descgen validate`` checks or a call of :func:`descgen.encode` or :func:`descgen.decode`,
  each next to its nearest fix.

:func:`example` builds an example, :meth:`Example.run` runs it, :meth:`Example.outcome` says what it
reported or raised, :meth:`Example.command` spells it as ``descgen explain`` shows it (a shell
command line, or a Python expression of the ``descgen`` package); :func:`rules_markdown` writes
the page every code is listed on.

An example spec is a mapping with ``as``:

- ``idesc``, ``smem``, ``zcm``, ``taddr``: one word (``fields``, by table field name, or ``word``,
  hex), with ``kind`` (idesc) and ``context``: ``descgen validate WORD --as ...``;
- ``mma``: the ``idesc``, ``a_desc``, ``b_desc`` (and ``zcm``) fields and ``kind``: ``descgen check``;
- ``ptx``: a PTX snippet (``ptx``), scanned by :func:`descgen.scan_ptx` (``descgen scan -``);
- ``call``: ``call`` (a name of ``descgen.__all__``, or a dotted ``descgen.module.name``; :func:`calls`), ``args``
  (positional), ``kwargs`` and ``then`` (a method called on the result, itself a call); an
  argument that is a table with ``call`` is a call too, an array is passed as a tuple;
- ``batch``: JSON request ``lines`` answered by :func:`descgen.batch.run` (``descgen batch``).
"""

from __future__ import annotations

import functools
import json
import shlex
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, cast

from .model.catalog import EXAMPLE_FORMS, catalog, contexts, layout_table, usage_table
from .codes import field_codes, usage_codes
from .model.engine import code_word, encode, finding_code
from .core.errors import DescgenError, Finding, HasFindings
from .model.facts import ABSENT_ARGS, KIND_LAYOUTS, idesc_defaults
from .words.idesc import validate_idesc
from .words.instruction import check_mma
from .model.loader import LAYOUT_FILES, Field, Layout, layout
from .ptx.scan import ScanResult, scan_ptx
from .model.report import Report
from .words.smem import validate_smem
from .words.taddr import validate_taddr
from .core.types import Kind
from .words.zcm import validate_zcm

__all__ = ["Example", "Outcome", "example", "examples_for", "unreachable", "calls", "rules_markdown", "FORMS"]

#: The forms an example takes (``as = ...``; :data:`descgen.model.catalog.EXAMPLE_FORMS`).
FORMS = EXAMPLE_FORMS


@dataclass(frozen=True, slots=True)
class Outcome(HasFindings):
    """What running an example gave: its findings (those of the result, or of the error raised),
    the rules it left not checked, and the error class when the call raised (``UsageError``)."""

    findings: tuple[Any, ...]
    not_checked: tuple[str, ...] = ()
    raised: str = ""

    @property
    def ok(self) -> bool:
        """True when nothing was raised and no finding is an error (warnings allowed)."""
        return not self.raised and not any(f.severity == "error" for f in self.findings)


@dataclass(frozen=True, slots=True)
class Example:
    """An example made concrete: the words, the kind and the context (or the call, or the lines).

    ``words`` maps a role to its word: ``idesc``/``smem``/``zcm``/``taddr`` for a one-word example,
    or ``idesc``, ``a_desc``, ``b_desc`` (and ``zcm``) for an instruction (``as_ == "mma"``); none for
    a PTX example (``as_ == "ptx"``), whose ``ptx`` snippet is scanned by :func:`descgen.scan_ptx`, a
    call (``as_ == "call"``: ``call`` is the spec) or batch requests (``as_ == "batch"``: ``lines``).
    """

    as_: str
    kind: str | None
    words: Mapping[str, int]
    context: Mapping[str, Any]
    ptx: str | None = None
    call: Mapping[str, Any] | None = None
    lines: tuple[str, ...] = ()

    @property
    def language(self) -> str:
        """``python`` for a call of the API (:meth:`command` is an expression), else ``shell``."""
        return "python" if self.as_ == "call" else "shell"

    def command(self) -> str:
        """What shows it: the CLI command (``descgen validate ...``, ``descgen check ...``, ``printf
        ... | descgen scan -``, ``printf ... | descgen batch``), or for a call the Python expression
        (``descgen.encode_smem(...)``, with ``import descgen``)."""
        if self.as_ == "call":
            assert self.call is not None
            return _call_text(self.call)
        if self.as_ == "batch":
            return f"printf '%s\\n' {' '.join(shlex.quote(line) for line in self.lines)} | descgen batch"
        ctx = " ".join(_option(k, v) for k, v in self.context.items())
        if self.as_ == "ptx":
            lines = " ".join(f"'{line.strip()}'" for line in (self.ptx or "").splitlines())
            return f"printf '%s\\n' {lines} | descgen scan -" + (f" {ctx}" if ctx else "")
        kind = f" --kind {self.kind}" if self.kind else ""
        if self.as_ == "mma":
            words = " ".join(f"--{role.replace('_', '')} {_hex(role, w)}" for role, w in self.words.items())
            return f"descgen check {words}{kind}" + (f" {ctx}" if ctx else "")
        (role, word), = self.words.items()
        return f"descgen validate {_hex(role, word)} --as {self.as_}{kind}" + (f" {ctx}" if ctx else "")

    def run(self) -> Report | ScanResult | Outcome:
        """Run the example (what ``command()`` prints): a :class:`Report`, for a PTX example a
        :class:`descgen.ptx.scan.ScanResult` (the same ``findings``, ``codes`` and ``ok``), for a
        call or batch requests an :class:`Outcome`. A word example whose context is wrong raises
        (:meth:`outcome` catches it)."""
        if self.as_ == "ptx":
            return scan_ptx(self.ptx or "", **self.context)
        if self.as_ == "call":
            assert self.call is not None
            try:
                result = _evaluate(self.call)
            except DescgenError as e:
                return Outcome(tuple(e.findings), (), type(e).__name__)
            return Outcome(tuple(_findings(result)), tuple(nc.code for nc in getattr(result, "not_checked", ())))
        if self.as_ == "batch":
            return _batch(self.lines)
        context: dict[str, Any] = dict(self.context)  # checked by the validators, as a caller's keywords are
        if self.as_ == "mma":
            words: dict[str, Any] = dict(self.words)
            return check_mma(kind=cast(Kind, self.kind), **words, **context)
        (_, word), = self.words.items()
        if self.as_ == "idesc":
            return validate_idesc(word, cast(Kind, self.kind), **context)
        if self.as_ == "taddr":
            return validate_taddr(word, **self.context)
        return (validate_smem if self.as_ == "smem" else validate_zcm)(word, **self.context)

    def outcome(self) -> Outcome:
        """:meth:`run`'s findings, not-checked codes and the error raised, for every form."""
        try:
            got = self.run()
        except DescgenError as e:
            return Outcome(tuple(e.findings), (), type(e).__name__)
        if isinstance(got, Outcome):
            return got
        return Outcome(tuple(got.findings), tuple(nc.code for nc in getattr(got, "not_checked", ())))


def _hex(role: str, word: int) -> str:
    return f"{word:#010x}" if role in ("idesc", "taddr") else f"{word:#018x}"


def _option(name: str, value: Any) -> str:
    flag = "--" + name.replace("_", "-")
    if isinstance(value, bool):
        return flag if value else f"--no-{name.replace('_', '-')}"
    return f"{flag} {value:#x}" if name in ("pattern_start", "alloc_base") else f"{flag} {value}"


_LAYOUT_OF = {"smem": "smem_desc", "zcm": "zcm_desc", "a_desc": "smem_desc", "b_desc": "smem_desc", "taddr": "taddr"}


def example(spec: Mapping[str, Any]) -> Example:
    """Build an example from its spec (fields are encoded with the generic engine and
    ``check=False``, so an illegal example is the word a kernel would hold)."""
    as_ = spec["as"]
    kind = spec.get("kind")
    if as_ == "ptx":
        return Example(as_, None, {}, dict(spec.get("context", {})), spec["ptx"])
    if as_ == "call":
        return Example(as_, None, {}, {}, call=spec)
    if as_ == "batch":
        return Example(as_, None, {}, {}, lines=tuple(spec["lines"]))
    words = {}
    roles = ("idesc", "a_desc", "b_desc", "zcm") if as_ == "mma" else (as_,)
    for role in roles:
        fields = spec.get(role) if as_ == "mma" else spec.get("fields")
        if fields is None:
            if "word" in spec and as_ != "mma":
                words[role] = int(spec["word"], 16)
            continue
        if role == "idesc":
            kind = cast(Kind, kind)  # an idesc example names its kind (tables/rules.toml is checked)
            values = {**idesc_defaults(kind), **fields}
            values = {k: v for k, v in values.items() if k in layout(KIND_LAYOUTS[kind]).by_name}
            words[role] = int(encode(KIND_LAYOUTS[kind], kind, check=False, **values))
        else:
            words[role] = int(encode(_LAYOUT_OF[role], None, check=False, **fields))
    return Example(as_, kind, words, dict(spec.get("context", {})))


# --------------------------------------------------------------------------------------------
# Calls of the API and batch requests.


#: Arguments shown as words (hex, 8 or 16 digits) and as byte addresses (hex); any other integer of
#: 2**16 or more is shown in hex too.
_WORD_ARGS = frozenset({"word", "idesc", "a_desc", "b_desc", "zcm", "a", "b", "what"})
_ADDRESS_ARGS = frozenset({"start_address", "pattern_start", "alloc_base", "nbytes"})


@functools.cache
def calls() -> dict[str, Any]:
    """The functions an example may call, by the name it gives: the public API's (``encode_smem``:
    ``descgen.encode_smem``) and a few of its modules' (``descgen.model.loader.parse_shapes``)."""
    from .backends.descriptor_functions import emit_functions
    from .words.compare import diff
    from .backends.emitters import emit
    from .model.engine import decode
    from .words.identify import identify
    from .words.idesc import encode_idesc
    from .model.loader import parse_shapes, read_table
    from .words.port import port_smem
    from .words.runtime import idesc_from_runtime
    from .words.smem import encode_smem
    from .tiles.addresses import advance_smem, smem_layout
    from .tiles.descriptor import smem_for_tile
    from .words.wgmma_smem import validate_wgmma_smem
    from .words.zcm import encode_zcm, zcm_mask
    from .sanitizer.instrument import instrument_ptx

    public = (encode, decode, encode_idesc, validate_idesc, encode_smem, validate_smem, encode_zcm, validate_zcm,
              zcm_mask, validate_taddr, validate_wgmma_smem, idesc_from_runtime, check_mma, smem_for_tile, smem_layout,
              advance_smem, port_smem, diff, emit, emit_functions, instrument_ptx)
    from . import cute, triton
    from .sanitizer import report

    return {**{fn.__name__: fn for fn in public}, "descgen.words.identify.identify": identify,
            "descgen.triton.enable": triton.enable, "descgen.triton.enabled": triton.enabled,
            "descgen.cute.scan_compiled": cute.scan_compiled, "descgen.sanitizer.report.load_sites": report.load_sites,
            "descgen.model.loader.parse_shapes": parse_shapes, "descgen.model.loader.read_table": read_table}


def _callable(name: str) -> Any:
    """``encode_smem`` (``descgen.encode_smem``) or ``descgen.model.loader.parse_shapes``: :func:`calls`."""
    found = calls().get(name)
    if found is None:
        raise ValueError(f"an example calls one of {', '.join(calls())}, not {name!r}")
    return found


def _is_call(value: Any) -> bool:
    return isinstance(value, Mapping) and "call" in value


def _value(value: Any) -> Any:
    """An argument: a nested call evaluated, tables element by element, an array as a tuple."""
    if _is_call(value):
        return _evaluate(value)
    if isinstance(value, Mapping):
        return {k: _value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return tuple(_value(v) for v in value)
    return value


def _evaluate(spec: Mapping[str, Any], on: Any = None) -> Any:
    """Call ``spec`` (on ``on``'s method of that name when given), then its ``then``."""
    fn = getattr(on, spec["call"]) if on is not None else _callable(spec["call"])
    result = fn(*(_value(v) for v in spec.get("args", ())), **{k: _value(v) for k, v in spec.get("kwargs", {}).items()})
    return _evaluate(spec["then"], result) if "then" in spec else result


def _py(value: Any, name: str = "") -> str:
    """``value`` as Python source: words and addresses in hex."""
    if _is_call(value):
        return _call_text(value)
    if isinstance(value, bool) or not isinstance(value, (int, list, tuple, Mapping)):
        return repr(value)
    if isinstance(value, int):
        if name in _WORD_ARGS and 0 <= value < 1 << 64:
            return f"{value:#0{10 if value < 1 << 32 else 18}x}"
        return f"{value:#x}" if value > 9 and (name in _ADDRESS_ARGS or value >= 1 << 16) else str(value)
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(_py(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return "{" + ", ".join(f"{k!r}: {_py(v, k)}" for k, v in value.items()) + "}"


def _call_text(spec: Mapping[str, Any], method: bool = False) -> str:
    names = [] if method else _parameters(spec["call"])  # a positional argument is shown as its parameter's value
    given = spec.get("args", ())
    args = [_py(v, names[i] if i < len(names) else "") for i, v in enumerate(given)]
    args += [f"{k}={_py(v, k)}" for k, v in spec.get("kwargs", {}).items()]
    name = spec["call"] if method or "." in spec["call"] else f"descgen.{spec['call']}"
    text = f"{'.' if method else ''}{name}({', '.join(args)})"
    return text + (_call_text(spec["then"], True) if "then" in spec else "")


def _parameters(name: str) -> list[str]:
    """The names of the positional parameters of the function ``name``."""
    import inspect

    return [p.name for p in inspect.signature(_callable(name)).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _findings(thing: Any, depth: int = 0) -> Iterable[Any]:
    """The findings a call's result carries (a Report, Word, TileDescriptor, SmemLayout, Decoded,
    or a tuple of findings)."""
    if depth > 3 or thing is None or isinstance(thing, (str, bytes, float)):
        return
    if isinstance(thing, Finding):
        yield thing
        return
    found = getattr(thing, "findings", None)
    if isinstance(found, (tuple, list)):
        yield from found
    elif isinstance(thing, Mapping):
        for v in thing.values():
            yield from _findings(v, depth + 1)
    elif isinstance(thing, (tuple, list)):
        for v in thing:
            yield from _findings(v, depth + 1)


def _batch(lines: tuple[str, ...]) -> Outcome:
    """``descgen batch``'s answers to ``lines``: their findings (those of an error too) and the
    rules not checked; ``raised`` names the first error's type."""
    from .batch.stream import run

    findings: list[Finding] = []
    not_checked: list[str] = []
    raised = ""
    for text in run(list(lines), cache=False):
        answer = json.loads(text)
        error = answer.get("error") or {}
        raised = raised or error.get("type", "")
        for f in (*answer.get("findings", ()), *error.get("findings", ())):
            findings.append(Finding(f["code"], f["severity"], f["field"], f["value"], f["allowed"], f["rule"],
                                    f["source"]))
        not_checked += answer.get("not_checked", ())
    return Outcome(tuple(findings), tuple(not_checked), raised)


# --------------------------------------------------------------------------------------------
# Examples generated from the layout tables.

#: A clean word of each layout (the kind's and the fields' defaults fill the rest): the value
#: fields every generated example starts from, and changes one of.
_BASE: dict[str, dict[str, Any]] = {
    "idesc_dense": {"m": 128, "n": 64},
    "idesc_mxf8f6f4": {"m": 128, "n": 64},
    "idesc_mxf4": {"m": 128, "n": 64},
    "smem_desc": {"start_address": 0x400, "lbo": 16, "sbo": 1024, "swizzle": "128B"},
    "wgmma_smem_desc": {"start_address": 0x400, "lbo": 16, "sbo": 1024, "swizzle": "128B"},
    "zcm_desc": {"skip_span": 1, "use_span": 1},
    "taddr": {"lane": 0, "column": 0},
}

#: The kind a layout's examples are shown under first (the others where it has no example).
_KIND = {"idesc_dense": "f16"}

#: The validator of a word (``descgen validate --as WORD``; the wgmma descriptor has only the call).
_VALIDATE = {"idesc": "validate_idesc", "smem": "validate_smem", "zcm": "validate_zcm", "taddr": "validate_taddr",
             "wgmma_smem": "validate_wgmma_smem"}

Spec = dict[str, Any]
Pair = tuple[Spec, Spec]


def _call(name: str, *args: Any, **kwargs: Any) -> Spec:
    return {"as": "call", "call": name, "args": list(args), "kwargs": kwargs}


def _encode(lay: Layout, kind: str | None, values: Mapping[str, Any]) -> Spec:
    """``descgen.encode(LAYOUT, KIND, **values)``: the generic encoder, field checks only."""
    return _call("encode", lay.name, *([kind] if kind else []), **values)


def _base_word(lay: Layout, kind: str | None) -> int:
    return int(encode(lay.name, kind, **_BASE[lay.name]))


def _word(lay: Layout, kind: str | None, word: int) -> Spec:
    """Validate a raw word: ``descgen validate WORD --as ...`` (the wgmma descriptor: the call)."""
    if lay.word not in ("idesc", "smem", "zcm", "taddr"):
        return _call(_VALIDATE[lay.word], word)
    return {"as": lay.word, "word": f"{word:#x}", **({"kind": kind} if kind else {})}


def _value_of(lay: Layout, kind: str | None, f: Field) -> Any:
    """The field's value in the base word."""
    if f.name in _BASE[lay.name]:
        return _BASE[lay.name][f.name]
    defaults = lay.defaults.get(kind, {}) if kind else {}
    return defaults.get(f.name, f.default)


def _with(lay: Layout, name: str, value: Any) -> dict[str, Any]:
    return {**_BASE[lay.name], name: value}


def _field_pair(lay: Layout, kind: str | None, f: Field, check: str) -> Pair | None:
    """The (legal, illegal) example of one field check for one layout and kind, or None when no
    input breaks it there."""
    dom = f.domain(kind)
    if check in ("RESERVED", "CONST", "CODE"):
        base = _base_word(lay, kind)
        if check == "RESERVED":
            return _word(lay, kind, base), _word(lay, kind, base | 1 << f.lo)
        if check == "CONST":
            return _word(lay, kind, base), _word(lay, kind, base ^ 1 << f.lo)
        undefined = sorted(set(range(1 << f.width)) - set(f.codes(kind).values()))
        if undefined:  # a code the table leaves undefined, found in a word
            return _word(lay, kind, base), _word(lay, kind, base & ~(f.mask << f.lo) | undefined[0] << f.lo)
        legal = _value_of(lay, kind, f)
        codes = f.codes(kind)
        foreign = [n for other in _layouts() for g in other.fields if g.name == f.name and g.type == "enum"
                   for k in other.kinds or (None,) for n in g.codes(k) if n not in codes]
        if foreign:  # a member of the same field elsewhere (another kind, the other descriptor family)
            bad: Any = foreign[0]
        elif all(isinstance(n, int) for n in codes):  # named by numbers (max_shift): one past the largest
            bad = 2 * max(codes)
        else:  # the raw code where the table's name is expected
            legal = list(codes)[-1]
            bad = codes[legal]
        return _encode(lay, kind, _with(lay, f.name, legal)), _encode(lay, kind, _with(lay, f.name, bad))
    if check == "TYPE":
        if f.type == "flag":
            legal = True in dom
            return (_encode(lay, kind, _with(lay, f.name, legal)),
                    _encode(lay, kind, _with(lay, f.name, str(legal).lower())))
        legal = _value_of(lay, kind, f)
        return _encode(lay, kind, _with(lay, f.name, legal)), _encode(lay, kind, _with(lay, f.name, str(legal)))
    if check == "VALUE":
        missing = [v for v in (True, False) if v not in dom]
        if not missing:
            return None
        return (_encode(lay, kind, _with(lay, f.name, not missing[0])),
                _encode(lay, kind, _with(lay, f.name, missing[0])))
    if check == "ALIGN":
        legal = _value_of(lay, kind, f) or max(dom.members())
        return (_encode(lay, kind, _with(lay, f.name, legal)),
                _encode(lay, kind, _with(lay, f.name, legal + f.transform.align // 2)))
    assert check == "RANGE"
    top = max(dom.members())
    return _encode(lay, kind, _with(lay, f.name, top)), _encode(lay, kind, _with(lay, f.name, top + f.transform.align))


def _layouts() -> tuple[Layout, ...]:
    return tuple(layout(name) for name in LAYOUT_FILES)


#: The checks the engine runs per field type (descgen.codes.field_codes).
_CHECKS = {"uint": ("TYPE", "ALIGN", "RANGE"), "flag": ("TYPE", "VALUE"), "enum": ("CODE",), "reserved": ("RESERVED",),
           "constant": ("CONST",)}


@functools.cache
def _generated() -> tuple[dict[str, Pair], dict[str, str]]:
    """The examples generated from the layout tables, and the generated codes no input produces
    (with the reason)."""
    pairs: dict[str, Pair] = {}
    dead: dict[str, str] = {}
    for lay in _layouts():
        for kind in sorted(lay.kinds or (None,), key=lambda k: k != _KIND.get(lay.name)):
            for f in lay.fields:
                for check in _CHECKS[f.type]:
                    if check == "ALIGN" and f.transform.align == 1:
                        continue
                    code = finding_code(lay.word, f, check)
                    if code not in pairs:
                        pair = _field_pair(lay, kind, f, check)
                        if pair is not None:
                            pairs[code] = pair
    for code, rule in field_codes().items():
        if code not in pairs and code.endswith("-VALUE"):
            dead[code] = (f"{rule.fields[0]} may be false or true for every kind of every layout that has it: no value "
                          "of the flag breaks it (the check is generated for every flag)")
    firsts: dict[str, Layout] = {}  # the first layout of each word
    for lay in _layouts():
        firsts.setdefault(lay.word, lay)
    for word, lay in firsts.items():
        kind = _KIND.get(lay.name, lay.kinds[0] if lay.kinds else None)
        w = code_word(word)
        pairs[f"{w}-WORD-RANGE"] = (_call("decode", lay.name, _base_word(lay, kind), *([kind] if kind else [])),
                                    _call("decode", lay.name, 1 << lay.width, *([kind] if kind else [])))
        fixed = next((f for f in lay.fields if not f.is_value), None)
        unknown = (_BASE[lay.name], {**_BASE[lay.name], fixed.name: 0}) if fixed else (
            _BASE[lay.name], {(k + "s" if i == 0 else k): v for i, (k, v) in enumerate(_BASE[lay.name].items())})
        pairs[f"{w}-FIELD-UNKNOWN"] = (_encode(lay, kind, unknown[0]), _encode(lay, kind, unknown[1]))
        dead[f"{w}-FIELD-FIXED"] = (f"descgen.encode refuses a reserved or constant field's name as {w}-FIELD-UNKNOWN "
                                    "before any value check, and the encoders and validators check only value fields' "
                                    f"values (a set reserved bit is {w}-RESERVED-N, a wrong constant "
                                    f"{w}-<FIELD>-CONST)")
    for lay in _layouts():
        kind = _KIND.get(lay.name, lay.kinds[0] if lay.kinds else None)
        for f in lay.fields:
            code = f"{code_word(lay.word)}-{f.name.upper().replace('_', '-')}-MISSING"
            if code in usage_codes() and code not in pairs:
                pairs[code] = (_encode(lay, kind, _BASE[lay.name]),
                               _encode(lay, kind, {k: v for k, v in _BASE[lay.name].items() if k != f.name}))
    for arg in ABSENT_ARGS:
        pairs[f"IDESC-{arg.upper().replace('_', '-')}-ABSENT"] = _absent_pair(arg)
    return pairs, dead


def _absent_pair(arg: str) -> Pair:
    """``encode_idesc`` of a kind whose layout has no field ``arg``, given a value another layout's
    field takes (legal: without it)."""
    idesc = [layout(name) for name in dict.fromkeys(KIND_LAYOUTS.values())]
    lacking = next(lay for lay in idesc if arg not in lay.by_name)
    having = next(lay for lay in idesc if arg in lay.by_name)
    kind = _KIND.get(lacking.name, lacking.kinds[0])
    allowed = (ABSENT_ARGS[arg], lacking.implied.get(arg))
    value = next(v for k in having.kinds for v in having.field(arg).domain(k).members() if v not in allowed)
    base = _BASE[lacking.name]
    return (_call("encode_idesc", kind, base["m"], base["n"]),
            _call("encode_idesc", kind, base["m"], base["n"], **{arg: value}))


def _context_pairs() -> dict[str, tuple[Mapping[str, Any], Mapping[str, Any]]]:
    """``CONTEXT-<NAME>``: the ``legal``/``illegal`` of its ``[[context]]`` entry."""
    out = {}
    for c in contexts().values():
        if c.legal is not None and c.illegal is not None:
            out[f"CONTEXT-{c.name.upper().replace('_', '-')}"] = (c.legal, c.illegal)
    return out


def examples_for(code: str) -> tuple[Mapping[str, Any], Mapping[str, Any]] | None:
    """The (legal, illegal) example specs of ``code``, or None (an unknown code, or one no input
    produces: :func:`unreachable`)."""
    for table in (catalog(), layout_table(), usage_table()):
        rule = table.get(code)
        if rule is not None and rule.legal is not None and rule.illegal is not None:
            return rule.legal, rule.illegal
    pair = _generated()[0].get(code) or _context_pairs().get(code)
    return pair


def unreachable() -> dict[str, str]:
    """The codes no input can produce, with the reason: declared ``unreachable`` in
    ``tables/codes.toml`` or generated checks no value breaks."""
    out = {code: rule.unreachable for table in (layout_table(), usage_table()) for code, rule in table.items()
           if rule.unreachable}
    return {**out, **_generated()[1]}


# --------------------------------------------------------------------------------------------
# The rules page.


def rules_markdown() -> str:
    """The rules page (``docs/rules.md``): every code, generated from the tables."""
    lines = [
        "# Rules descgen checks",
        "",
        "Generated from `tables/rules.toml`, `tables/codes.toml`, `tables/contexts.toml` and the layout",
        "tables by `descgen rules --markdown`; `tests/test_validate.py` checks that this page is current.",
        "`descgen explain CODE` prints one entry with a legal and an illegal example and what each",
        "reports (`tests/test_codes.py` runs every example).",
        "",
        "Severity: **error** breaks a PTX rule (encoders refuse it, `validate`/`check` exit 1);",
        "**warning** is legal but suspicious or ignored by the hardware. *Needs*: context the rule",
        "cannot run without (reported as not checked when missing); *uses*: context that narrows it.",
        "",
        "## Rules between fields, words and the instruction",
        "",
        "| code | severity | applies to | needs / uses | rule | source |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in catalog().values():
        ctx = ", ".join(r.needs) + (f" (uses {', '.join(r.uses)})" if r.uses else "")
        lines.append(f"| `{r.code}` | {r.severity} | {r.applies} | {ctx or '-'} | {_md(r.rule)} | {_md(r.source)} |")
    lines += _examples_md(catalog())
    for title, codes in (("Field checks (one per field, generated from the layout tables)", field_codes()),
                         ("Shared-memory tiles (descgen layout, smem --tile, advance_smem: raised or found in the "
                          "addresses a descriptor reads)", layout_table()),
                         ("Usage errors (the call itself is wrong; raised, never found in a word)", usage_codes())):
        lines += ["", f"## {title}", "", "| code | severity | rule | source |", "| --- | --- | --- | --- |"]
        lines += [f"| `{r.code}` | {r.severity} | {_md(r.rule)} | {_md(r.source)} |" for r in codes.values()]
        lines += _examples_md(codes)
    return "\n".join(lines) + "\n"


def _examples_md(codes: Mapping[str, Any]) -> list[str]:
    """The examples of ``codes`` (Python calls marked ``python:``), and the unreachable ones."""
    lines = ["", "### Examples", ""]
    dead = unreachable()
    for code in codes:
        pair = examples_for(code)
        if pair is None:
            lines += [f"- `{code}`: unreachable: {dead[code]}"]
            continue
        shown = [example(spec) for spec in pair]
        lines += [f"- `{code}`"] + [f"  - {which}: {'python: ' if ex.language == 'python' else ''}`{ex.command()}`"
                                    for which, ex in zip(("legal", "illegal"), shown)]
    return lines


def _md(text: str) -> str:
    return text.replace("|", "\\|")
