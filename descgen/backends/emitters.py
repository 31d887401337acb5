"""Descriptor words as source code: a C ``#define``, a C++ ``constexpr``, a PTX ``mov``, a Python
literal, hex or JSON, each with the decoded configuration as a comment.

    >>> import descgen
    >>> print(descgen.emit(descgen.decode_idesc(0x08400010, "f16"), "python"))  # doctest: +ELLIPSIS
    # descgen 0.1.0: Instruction descriptor .kind::f16, 0x08400010 (32-bit), PTX ISA 9.1 §9.7.16.4.2, Table 42
    ...
    IDESC = 0x08400010

The value is always the word itself, written so that the language reads exactly those bits:
``UINT32_C``/``UINT64_C`` in C, ``std::uint32_t``/``std::uint64_t`` with a ``u``/``ull`` suffix in
C++, ``mov.b32``/``mov.b64`` with a hex immediate in PTX. C and C++ are files to include: their
first line says the standard they need, an include guard named after their content wraps the rest
(the same code included twice defines its words once). The comment lists every value field
with its bits and unit, the derived values, and every finding, so that a constant pasted into a
kernel carries its own explanation; nothing in the comment changes the value.
"""

from __future__ import annotations

import json
import keyword
import re
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence, Union, get_args

from ..model.catalog import usage_table
from ..model.engine import Decoded, hex_word, unit_word
from ..core.errors import Finding, UsageError
from ..words.identify import DESCRIPTORS, decode_as
from ..model.loader import VALUE_TYPES, layout
from ..model.report import Report
from ..core.types import Descriptor, Format, Kind
from ..core.version import __version__


if TYPE_CHECKING:  # descgen.tiles loads on first use (descgen's lazy exports): not imported here
    from ..tiles import TileDescriptor

__all__ = ["CHECK_MACRO", "FORMATS", "NEEDS", "Emittable", "comment", "emit", "guarded", "identifier", "word_comment"]

#: One thing :func:`emit` writes as a word (or, for ``check_mma``'s report, several).
Emittable = Union[Decoded, Report, "TileDescriptor", int]

#: The formats :func:`emit` writes.
FORMATS: tuple[Format, ...] = get_args(Format)

#: Default constant name per word (C and Python upper-case it, PTX prefixes ``%``).
_DEFAULT_NAMES = {"idesc": "idesc", "smem": "smem_desc", "zcm": "zcm_desc", "taddr": "taddr",
                  "wgmma_smem": "wgmma_desc"}

_C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if inline int long "
    "register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while "
    "_Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary _Noreturn _Static_assert _Thread_local".split())
_CPP_KEYWORDS = _C_KEYWORDS | frozenset(
    "alignas alignof and and_eq asm bitand bitor bool catch char8_t char16_t char32_t class compl concept consteval "
    "constexpr constinit const_cast co_await co_return co_yield decltype delete dynamic_cast explicit export false "
    "friend mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public "
    "reinterpret_cast requires static_assert static_cast template this thread_local throw true try typeid typename "
    "using virtual wchar_t xor xor_eq".split())
_C_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_PTX_IDENT = re.compile(r"%?(?:[A-Za-z][A-Za-z0-9_$]*|[_$%][A-Za-z0-9_$]+)\Z")


@dataclass(frozen=True)
class _Item:
    """One word to write: its value, width, name (``given``: by the caller, else a default that
    C and Python upper-case), comment lines and JSON form."""

    name: str
    given: bool
    word: int
    width: int
    comment: tuple[str, ...]
    data: Mapping[str, Any]


def _usage(code: str, field: str, value: Any, allowed: str, detail: str) -> UsageError:
    """The usage error ``code`` (a ``[[usage]]`` entry of ``tables/codes.toml``), with its rule and source."""
    rule = usage_table()[code]
    return UsageError((Finding(code, "error", field, value, allowed, f"{rule.rule} ({detail})", rule.source),))


def emit(what: Emittable | Sequence[Emittable] | Mapping[str, Emittable], fmt: Format = "hex", *,
         name: str | None = None, descriptor: Descriptor | None = None, kind: Kind | None = None,
         source: str | None = None, notes: Sequence[str] = ()) -> str:
    """Write descriptor words as source code in ``fmt``, with the decoded configuration as a comment.

    Args:
        what: one of
            - a :class:`~descgen.Decoded` (``decode_idesc``, ``decode_smem``, ``decode_zcm``);
            - a :class:`~descgen.Report` (``validate_*``: its findings go in the comment;
              ``check_mma``: one constant per word, named ``idesc``, ``a_desc``, ``b_desc``, ``zcm``);
            - a :class:`~descgen.TileDescriptor` (``smem_for_tile``: the tile and LBO/SBO reasoning
              go in the comment);
            - an ``int`` (an encoder's result): with ``descriptor`` (and ``kind`` for an idesc) it is
              decoded for the comment; without, it is written as a bare 32-bit word (below
              2**32) or 64-bit word;
            - a list of these, or a ``{name: thing}`` mapping to name each constant.
        fmt: ``hex`` (``0x08400010``; ``name=0x...`` lines for several words), ``json`` (the
            decode as :meth:`Decoded.as_dict` gives it, with ``name``), ``c`` (``#include
            <stdint.h>`` and ``#define NAME UINT32_C(0x...)``), ``cpp`` (``#include <cstdint>`` and
            ``constexpr std::uint32_t name = 0x...u;``), ``ptx`` (``mov.b32 %name, 0x...;``: the
            register must be declared ``.reg .b32``/``.b64`` by the kernel), ``python``
            (``NAME = 0x...``). ``c`` and ``cpp`` are files to include: a first line saying the
            standard they need (C99, C++11: :data:`NEEDS`), the rest inside an include guard named
            after their content (:func:`guarded`).
        name: the constant's (or register's) name for a single word; default ``idesc``,
            ``smem_desc``, ``zcm_desc``, ``taddr`` (upper-cased for C and Python, ``%``-prefixed for PTX).
        descriptor: ``idesc``, ``smem``, ``zcm`` or ``taddr`` when ``what`` is an ``int``.
        kind: the MMA kind, for an ``int`` idesc.
        source: where the word came from (the CLI passes its command line), for the comment.
        notes: more comment lines (e.g. the zero-column mask for an M and N).

    Returns:
        The text, ending without a newline.

    Raises:
        UsageError: unknown format or descriptor; ``name`` not an identifier of the language (or a
            keyword); ``name`` given for several words; an ``int`` idesc without ``kind``; a word
            that is not an unsigned 32/64-bit integer.
    """
    if fmt not in FORMATS:
        raise _usage("EMIT-FORMAT", "format", fmt, f"one of {', '.join(FORMATS)}",
                     "descgen writes hex, JSON, C, C++, PTX and Python")
    items = list(_items(what, descriptor, kind))
    if name is not None:
        if len(items) != 1:
            raise _usage("EMIT-NAME", "name", name, "one word; name several with a {name: word} mapping",
                         f"{len(items)} words to write")
        items = [_Item(name, True, items[0].word, items[0].width, items[0].comment, items[0].data)]
    header = f"generated by descgen {__version__}" + (f": {source}" if source else "")
    return _WRITERS[fmt](items, header, tuple(notes))


# --------------------------------------------------------------------------------------------
# What to write: words, widths, names and comment lines.


def _items(what: Any, descriptor: str | None, kind: str | None, name: str | None = None) -> Iterable[_Item]:
    tiles = sys.modules.get("descgen.tiles")  # a TileDescriptor exists only once descgen.tiles is loaded
    if isinstance(what, Mapping):
        for key, value in what.items():
            yield from _items(value, descriptor, kind, str(key))
    elif isinstance(what, (list, tuple)):
        for value in what:
            yield from _items(value, descriptor, kind, name)
    elif isinstance(what, Decoded):
        yield _decoded_item(name, what, what.findings)
    elif isinstance(what, Report):
        several = len(what.decoded) > 1
        skipped = sorted({n.code for n in what.not_checked})
        lines = [f"not checked (context not given): {', '.join(skipped)}"] if skipped and not several else []
        for role, d in what.decoded.items():
            yield _decoded_item(None if several else name, d, what.findings_for(role), lines, what.context,
                                role if several else None)
    elif tiles is not None and isinstance(what, tiles.TileDescriptor):
        lines = [f"tile {what.mn}x{what.k} {what.dtype} {what.major.upper()}-major, swizzle {what.swizzle}, "
                 f"start address {what.start_address:#x}",
                 f"LBO {what.lbo} B: {what.lbo_meaning}", f"SBO {what.sbo} B: {what.sbo_meaning}",
                 f"layout {what.cute}"]
        yield _decoded_item(name, decode_as(what.word, what.descriptor), what.findings, lines)
    elif isinstance(what, int) and not isinstance(what, bool):
        if what < 0 or what >= 1 << 64:
            raise _usage("EMIT-WORD", "word", what, "an unsigned integer below 2**64",
                         "descriptor words are 32 or 64 bits (§9.7.16.4)")
        findings = tuple(getattr(what, "findings", ()))
        if descriptor is None:
            width = 32 if what < 1 << 32 else 64
            comment = (f"{width}-bit word {hex_word(int(what), width)} (no descriptor given: fields not decoded)",
                       *map(str, findings))
            yield _Item(name or "word", name is not None, int(what), width, comment,
                        {"word": hex_word(int(what), width), "width": width})
        else:
            yield _decoded_item(name, _decode(int(what), descriptor, kind), findings)
    else:
        raise _usage("EMIT-INPUT", "what", type(what).__name__,
                     "an int, Decoded, Report, TileDescriptor, or a list or mapping of them",
                     "emit writes descriptor words")


def _decode(word: int, descriptor: str, kind: str | None) -> Decoded:
    if descriptor == "idesc" and kind is None:
        raise _usage("EMIT-KIND", "kind", None, "an MMA kind",
                     "an instruction descriptor decodes per kind (Tables 42-44)")
    if descriptor not in DESCRIPTORS:
        raise _usage("EMIT-DESCRIPTOR", "descriptor", descriptor, ", ".join(DESCRIPTORS),
                     "the descriptors of §9.7.16.4 and the tensor memory address of §9.7.16.1.1")
    return decode_as(word, descriptor, kind)


def _decoded_item(name: str | None, d: Decoded, findings: Iterable[Finding], extra: Sequence[str] = (),
                  context: Mapping[str, Any] | None = None, role: str | None = None) -> _Item:
    lay = layout(d.layout)
    title = f"{lay.family or 'tcgen05'} " + lay.title.split(" (")[0].lower() + (f" .kind::{d.kind}" if d.kind else "")
    lines = [f"{title}, {d.hex} ({d.width}-bit), {lay.source}"]
    if context:
        given = {k: v for k, v in context.items() if v is not None}
        if given:
            lines.append("checked with " + ", ".join(f"{k}={_show(v)}" for k, v in given.items()))
    width = max(len(name) for name in (*(f.name for f in d.fields), *(name for name, _, _ in d.derived)))
    for f in d.fields:
        if f.type in VALUE_TYPES or f.raw:
            bits = f"bit  {f.bits}" if "-" not in f.bits else f"bits {f.bits}"
            lines.append(f"  {bits:<10} {f.name:<{width}} = {_value(f.value, f.unit, f.note)}")
    for dname, dvalue, unit in d.derived:
        lines.append(f"  {'derived':<10} {dname:<{width}} = {_value(dvalue, unit, '')}")
    unique = list({str(f): f for f in (*d.findings, *findings)}.values())
    lines += [str(f) for f in unique] or ["findings: none"]
    lines += extra
    data = {**d.as_dict(), "ok": not any(f.severity == "error" for f in unique),
            "findings": [f.as_dict() for f in unique]}
    default = role or _DEFAULT_NAMES.get(d.descriptor, d.descriptor)
    return _Item(name or default, name is not None, d.word, d.width, tuple(lines), data)


def _value(value: Any, unit: str, note: str) -> str:
    if value is None:
        return f"? ({note})" if note else "?"
    text = _show(value)
    if unit == "bytes" and isinstance(value, int) and value >= 16:
        return f"{text} bytes ({value:#x})"
    return f"{text} {unit_word(value, unit)}" if unit else text


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# --------------------------------------------------------------------------------------------
# Writers: one per format; each takes the items, the header line and the extra notes.


#: Per language of the code formats: its name in messages, and whether a name is one of its
#: identifiers and not a keyword (descgen.backends writes functions under the same rules).
_IDENTIFIERS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "c": ("C", lambda n: _C_IDENT.match(n) and n not in _C_KEYWORDS),
    "cpp": ("C++", lambda n: _C_IDENT.match(n) and n not in _CPP_KEYWORDS),
    "ptx": ("PTX", _PTX_IDENT.match),
    "python": ("Python", lambda n: n.isidentifier() and not keyword.iskeyword(n)),
}


def identifier(name: str, fmt: Format, given: str | None = None) -> str:
    """``name`` if it is an identifier of ``fmt``'s language (``c``, ``cpp``, ``ptx``, ``python``)
    and not a keyword; else the usage error ``EMIT-NAME`` naming ``given`` (the name as the caller
    wrote it, default ``name``)."""
    lang, ok = _IDENTIFIERS[fmt]
    if not ok(name):
        raise _usage("EMIT-NAME", "name", given if given is not None else name,
                     f"an identifier of {lang} that is not a keyword", f"the constant is declared in {lang} source")
    return name


def _named(item: _Item, fmt: Format) -> str:
    """The item's name in ``fmt`` (defaults upper-cased for C and Python, ``%``-prefixed for
    PTX), checked by :func:`identifier`."""
    name = item.name if item.given or fmt in ("cpp", "ptx") else item.name.upper()
    name = "%" + name if fmt == "ptx" and not name.startswith("%") else name
    return identifier(name, fmt, item.name)


#: Comments are ASCII: ptxas rejects any other byte, even in a comment ("Unexpected non-ASCII
#: character"), and a C/C++ compiler may read the source in a narrow code page.
_ASCII = str.maketrans({"×": "x", "–": "-", "—": "-", "≤": "<=", "≥": ">=", "→": "->", "’": "'",
                        "“": '"', "”": '"'})


def comment(lines: Sequence[str], fmt: Format) -> list[str]:
    """``lines`` as a comment of ``fmt``'s language: ASCII (``§`` written ``sec.``), then ``/* ...
    */`` for C (a ``*/`` inside broken up), ``// `` for C++ and PTX (no trailing backslash that
    would continue the comment onto the next line), ``# `` for Python."""
    text = [re.sub(r"§\s*", "sec. ", line).translate(_ASCII).encode("ascii", "replace").decode() for line in lines]
    if fmt == "c":
        body = [line.replace("*/", "* /") for line in text]
        return ["/* " + body[0], *(" * " + line for line in body[1:]), " */"] if body else []
    if fmt == "python":
        return ["# " + line for line in text]
    return [("// " + line).rstrip("\\") for line in text]


def word_comment(what: Emittable, *, descriptor: Descriptor | None = None, kind: Kind | None = None) -> tuple[str, ...]:
    """The comment lines :func:`emit` writes above one word: its decode (fields with bits and units,
    derived values), its findings, and for a tile the LBO/SBO reasoning.

    Raises:
        UsageError: as :func:`emit`, or ``EMIT-NAME`` when ``what`` is several words.
    """
    items = list(_items(what, descriptor, kind))
    if len(items) != 1:
        raise _usage("EMIT-NAME", "what", len(items), "one word", "a function is written for one word")
    return items[0].comment


#: The oldest language standard each C and C++ form descgen writes compiles at, as its first line
#: says (tests/test_emit.py and tests/test_descriptor_functions.py compile each at it, and show the
#: standard below refuses it): ``c``, the constants (``descgen.emit``): ``<stdint.h>`` and
#: ``UINT32_C``/``UINT64_C`` are C99 (a 64-bit word is an ``unsigned long long`` literal where
#: ``uint64_t`` is one, which C89 and C++03 lack); ``cpp``: ``constexpr`` and ``<cstdint>`` are
#: C++11. The functions (``descgen.emit_functions``): ``c_functions``, ``static inline`` is C99;
#: ``cpp_functions``, a ``constexpr`` function of several statements (the checks, the halves) is
#: C++14 (C++11 allows one return statement, ``cpp_return``: a function that is one).
NEEDS: dict[str, str] = {
    "c": "C99 or later (C++11 or later compiled as C++): <stdint.h>, UINT32_C/UINT64_C",
    "cpp": "C++11 or later: <cstdint>, constexpr",
    "c_functions": "C99 or later: <stdint.h>, static inline",
    "cpp_functions": "C++14 or later (nvcc -std=c++14): constexpr functions of several statements",
    "cpp_return": "C++11 or later (nvcc -std=c++11): constexpr functions of one return statement",
}


def _code_lines(text: str, fmt: Format) -> list[str]:
    """``text``'s lines that are not blank and not comments :func:`comment` wrote."""
    out, inside = [], False
    for line in text.splitlines():
        if fmt == "c" and (inside or line.startswith("/*")):
            inside = not line.rstrip().endswith("*/")
        elif line.strip() and not (fmt == "cpp" and line.lstrip().startswith("//")):
            out.append(line)
    return out


def guarded(text: str, fmt: Format, names: Sequence[str], needs: str) -> str:
    """C (``fmt`` ``c``) or C++ (``cpp``) source ``text`` as a file to include: a first comment
    line saying the standard it ``needs``, then the text inside an include guard named after its
    content: ``DESCGEN_``, the names it defines (upper-cased, at most 36 characters), the first 12
    hex digits of the SHA-256 of its code (its lines less comments and blanks) and ``_H`` or
    ``_HPP`` (at most 63 characters, C99's significant length). The same code included twice is
    defined once (the comments, the command line and the version may differ); two different words,
    or one word written in C and in C++, never share a guard."""
    import hashlib  # (only when code is written: descgen's start-up does not pay for it)

    digest = hashlib.sha256("\n".join(_code_lines(text, fmt)).encode("ascii", "replace")).hexdigest()[:12].upper()
    label = re.sub(r"\W", "_", "_".join(names).upper())[:36].strip("_")
    macro = f"DESCGEN_{label + '_' if label else ''}{digest}_{'H' if fmt == 'c' else 'HPP'}"
    first, end = (f"/* needs {needs} */", f"#endif /* {macro} */") if fmt == "c" else (f"// needs {needs}",
                                                                                       f"#endif  // {macro}")
    return "\n".join([first, f"#ifndef {macro}", f"#define {macro}", "", text, "", end])


def _hex_writer(items: list[_Item], header: str, notes: tuple[str, ...]) -> str:
    if len(items) == 1:
        return hex_word(items[0].word, items[0].width)
    return "\n".join(f"{it.name}={hex_word(it.word, it.width)}" for it in items)


def _json_writer(items: list[_Item], header: str, notes: tuple[str, ...]) -> str:
    docs = [{"name": it.name, **it.data, **({"notes": list(notes)} if notes else {})} for it in items]
    return json.dumps(docs[0] if len(docs) == 1 else docs, indent=2)


def _c_writer(items: list[_Item], header: str, notes: tuple[str, ...]) -> str:
    out = ["#include <stdint.h>"]
    for it in items:
        out += ["", *comment((*it.comment, header, *notes), "c"),
                f"#define {_named(it, 'c')} UINT{it.width}_C({hex_word(it.word, it.width)})"]
    return guarded("\n".join(out), "c", [_named(it, "c") for it in items], NEEDS["c"])


def _cpp_writer(items: list[_Item], header: str, notes: tuple[str, ...]) -> str:
    out = ["#include <cstdint>"]
    for it in items:
        suffix = "u" if it.width == 32 else "ull"
        out += ["", *comment((*it.comment, header, *notes), "cpp"),
                f"constexpr std::uint{it.width}_t {_named(it, 'cpp')} = {hex_word(it.word, it.width)}{suffix};"]
    return guarded("\n".join(out), "cpp", [_named(it, "cpp") for it in items], NEEDS["cpp"])


def _ptx_writer(items: list[_Item], header: str, notes: tuple[str, ...]) -> str:
    out: list[str] = []
    for it in items:
        out += [*([""] if out else []), *comment((*it.comment, header, *notes), "ptx"),
                f"mov.b{it.width} {_named(it, 'ptx')}, {hex_word(it.word, it.width)};"]
    return "\n".join(out)


def _python_writer(items: list[_Item], header: str, notes: tuple[str, ...]) -> str:
    out: list[str] = []
    for it in items:
        out += [*([""] if out else []), *comment((*it.comment, header, *notes), "python"),
                f"{_named(it, 'python')} = {hex_word(it.word, it.width)}"]
    return "\n".join(out)


_WRITERS = {"hex": _hex_writer, "json": _json_writer, "c": _c_writer, "cpp": _cpp_writer, "ptx": _ptx_writer,
            "python": _python_writer}


#: ``DESCGEN_CHECK(cond, code, field, value, allowed)``, the one debug-check macro of the C and C++
#: descgen writes (the run-time descriptor functions, the C++/CUDA header): ``code``, ``field`` and
#: ``allowed`` string literals, ``value`` converted to unsigned long long; with ``DESCGEN_DEBUG`` a
#: failed check prints ``descgen: <code>: <field> = <value> (0x<hex>), allowed <allowed>`` and traps
#: (``__trap()`` on the device, ``abort()`` on the host); without it, nothing is evaluated. Under
#: ``#ifndef DESCGEN_CHECK``: whichever file comes first defines it.
CHECK_MACRO = r"""#ifndef DESCGEN_CHECK
#ifdef DESCGEN_DEBUG
#if defined(__CUDA_ARCH__)
#define DESCGEN_CHECK(cond, code, field, value, allowed) \
    ((cond) ? (void)0 : (printf("descgen: " code ": " field " = %llu (0x%llx), allowed " allowed "\n", \
                                (unsigned long long)(value), (unsigned long long)(value)), __trap()))
#else
#define DESCGEN_CHECK(cond, code, field, value, allowed) \
    ((cond) ? (void)0 : (fprintf(stderr, "descgen: " code ": " field " = %llu (0x%llx), allowed " allowed "\n", \
                                 (unsigned long long)(value), (unsigned long long)(value)), abort()))
#endif
#else
#define DESCGEN_CHECK(cond, code, field, value, allowed) ((void)0)
#endif
#endif"""
