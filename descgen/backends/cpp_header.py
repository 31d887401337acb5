"""``descgen header`` (``--lang cpp``): a self-contained C++17/CUDA header for the tcgen05 words.

The header (``descgen_tcgen05.hpp``, only ``<cstdint>``; ``__host__ __device__`` under nvcc) holds,
for the instruction descriptor (Tables 42-44, one layout per kind), the shared memory descriptor
(Tables 40, 41), the zero-column mask descriptor (Table 45) and the tensor memory address
(§9.7.16.1.1):

- the fields (bits, transform, unit) and each field's legal raw values, per kind;
- ``constexpr`` encoders named as the Python API's (``encode_idesc``, ``encode_smem``,
  ``encode_zcm``, ``encode_taddr``; logical values in the API's units), decoders to plain structs;
- validators (``validate_idesc``, ``validate_smem``, ``validate_zcm``, ``validate_taddr``,
  ``check_mma``) that report the same finding codes, in the same order, as the Python API for every
  rule that needs no text;
- the code -> rule sentence table, and ``DESCGEN_CHECK``.

Everything the header compares against is DATA written here from what the Python engine itself
reads: the layouts (:mod:`descgen.model.loader`), the context names and codes (:mod:`descgen.model.catalog`),
and the rules: each catalog rule's checks compiled from its declaration in ``tables/rules.toml``,
with the tables they read written out (:mod:`descgen.backends.cpp_rules`). The C++ beside it
(``cpp_header_eval.hpp``, shipped beside this module) is a small evaluator: field extraction by bit
ranges, table lookups, and the glue of the validators; tests/test_cpp_header.py drives it against
the Python API over a million words and contexts.
"""

from __future__ import annotations

import inspect
import re
from importlib import resources
from typing import Any, Callable, Iterable

from ..codes import field_codes
from .cpp_rules import HEADER_WORDS, rule_functions, scopes, table_data, tables_of
from ..model.catalog import SCALE_VECS, catalog, constraints, contexts
from ..model.context import ws_cta_groups
from .emitters import CHECK_MACRO
from ..model.engine import finding_code
from ..model.facts import (kind_facts)
from ..words.idesc import encode_idesc
from ..model.loader import IDESC_LAYOUTS, KINDS, Field, layout
from ..words.smem import encode_smem
from ..words.taddr import encode_taddr
from ..core.version import __version__
from ..words.zcm import encode_zcm

__all__ = ["header", "codes", "plans", "unreachable_codes", "FILE_NAME"]

#: The file name the header is written as (``descgen header --lang cpp -o``'s default).
FILE_NAME = "descgen_tcgen05.hpp"
#: The hand-written evaluator, appended to the generated data (package data beside this module).
_EVALUATOR = "cpp_header_eval.hpp"
#: The host side of the sanitizer's report buffer, appended to the header (with DESCGEN_SANITIZER).
_LOADER = "cpp_sanitizer_loader.hpp"

#: The [[requires]] features the evaluator's target rules read.
_FEATURES = ("kind_i8", "sparse_mxf4", "k96", "scale_vec_nx", "scale_vec_block", "lbo_absolute")
#: The words' non-idesc layouts, in the header's plan order (after the idesc kinds).
_WORDS = (("smem", "smem_desc", encode_smem), ("zcm", "zcm_desc", encode_zcm), ("taddr", "taddr", encode_taddr))
_TYPES = {"uint": 0, "flag": 1, "enum": 2, "reserved": 3, "constant": 4}
_SEVERITIES = {"error": 0, "warning": 1, "info": 2}
_CHECK = {"uint": "RANGE", "flag": "VALUE", "enum": "CODE", "reserved": "RESERVED", "constant": "CONST"}


def _ident(text: str) -> str:
    """A C++ identifier for a table name: ``64/128`` -> ``_64_128``, ``128B`` -> ``_128B``."""
    out = re.sub(r"\W", "_", text)
    return "_" + out if out[0].isdigit() else out


def _c(text: str) -> str:
    """A C string literal (ASCII: non-ASCII characters are written as PTX's section sign is, ``sec.``)."""
    text = text.replace("§", "sec. ").replace("–", "-").replace("—", "-").replace("→", "->").replace("≤", "<=")
    text = text.encode("ascii", "replace").decode("ascii")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _runs(values: Iterable[int]) -> list[tuple[int, int, int]]:
    """Sorted integers as arithmetic runs ``(lo, hi, step)``."""
    v = sorted(set(values))
    out: list[tuple[int, int, int]] = []
    i = 0
    while i < len(v):
        j, step = i, (v[i + 1] - v[i]) if i + 1 < len(v) else 1
        while j + 1 < len(v) and v[j + 1] - v[j] == step:
            j += 1
        if j == i:
            step = 1
        out.append((v[i], v[j], step))
        i = j + 1
    return out


def _shift_add(f: Field) -> tuple[int, int]:
    """A uint field's transform as ``value = (raw << shift) + add`` (checked over its raw range)."""
    t = f.transform
    add = t.decode(0)
    scale = t.decode(1) - add
    shift = scale.bit_length() - 1
    if scale != 1 << shift or any(t.decode(r) != (r << shift) + add for r in (0, 1, f.mask)):
        raise ValueError(f"transform {t.name} of {f.name} is not a shift and an offset")
    return shift, add


def _legal_raw(f: Field, kind: str | None) -> list[int]:
    """The raw values of field ``f`` that its own check passes (engine.check_raw)."""
    if f.type == "reserved":
        return [0]
    if f.type == "constant":
        return [f.const]
    if f.type == "enum":
        return list(f.codes(kind).values())
    if f.type == "flag":
        return [int(v) for v in f.domain(kind).members()]
    return [r for r in (f.transform.encode(v) for v in f.domain(kind).members()) if 0 <= r <= f.mask]


def plans() -> list[tuple[str, str, str | None]]:
    """The header's plans, in order: (word, layout, kind): every idesc kind, then smem, zcm, taddr."""
    kind_layout = {k: name for name in IDESC_LAYOUTS for k in layout(name).kinds}
    return [("idesc", kind_layout[k], k) for k in KINDS] + [(w, lay, None) for w, lay, _ in _WORDS]


def _slots(word: str) -> list[str]:
    """A word's value fields in one order for every layout of it (the idesc: the union over
    Tables 42-44, first seen first)."""
    names: dict[str, None] = {}
    for w, lay, _ in plans():
        if w == word:
            names.update(dict.fromkeys(f.name for f in layout(lay).fields if f.is_value))
    return list(names)


def _names() -> list[str]:
    """Every enum member name of every layout, as text: the header's name ids."""
    out: dict[str, None] = {}
    for _, lay, kind in plans():
        for f in layout(lay).fields:
            if f.type == "enum":
                out.update(dict.fromkeys(str(n) for n in f.codes(kind)))
    return list(out)


def codes() -> list[str]:
    """Every finding code the header reports, in its ``Code`` order: the field checks of every
    plan (bit order, first seen first), then the catalog's rules of the five words."""
    out: dict[str, None] = {}
    for word, lay, _ in plans():
        for f in layout(lay).fields:
            out[finding_code(word, f, _CHECK[f.type])] = None
    for rule in catalog().values():
        if rule.applies in HEADER_WORDS:
            out[rule.code] = None
    return list(out)


def unreachable_codes() -> list[str]:
    """The field codes no word can report: every raw value of the field is legal in every plan
    (``IDESC-A-SF-ID-RANGE``: two bits, IDs 0-3)."""
    out: dict[str, bool] = {}
    for word, lay, kind in plans():
        for f in layout(lay).fields:
            code = finding_code(word, f, _CHECK[f.type])
            full = len(set(_legal_raw(f, kind))) == 1 << f.width
            out[code] = out.get(code, True) and full
    return [code for code, full in out.items() if full]


def _array(ctype: str, name: str, items: list[str], per_line: int = 16) -> str:
    body = ",\n    ".join(", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)) if items else "0"
    return f"DESCGEN_TABLE {ctype} {name}[{max(len(items), 1)}] = {{\n    {body}}};\n"


def _mask(bits: Iterable[int]) -> str:
    m = 0
    for b in bits:
        if not 0 <= b < 64:
            raise ValueError(f"bit {b} does not fit a 64-bit mask")
        m |= 1 << b
    return f"0x{m:x}ull"


def _rows(hits: Iterable[bool]) -> str:
    """The rows (by index) a per-row test holds for, as a mask (the ROWS_* / SV_ROWS_* indexes)."""
    return _mask(i for i, hit in enumerate(hits) if hit)


def _default(lay_name: str, kind: str | None, slot: str | None, nid: dict[str, int]) -> str:
    """The value an encoder takes for field ``slot`` of a plan when not given one, as C++."""
    lay = layout(lay_name)
    f = lay.by_name.get(slot) if slot else None
    if f is None:
        return "UNSET"
    value = lay.defaults.get(kind, {}).get(f.name, f.default) if kind else f.default
    if value is None:
        return "UNSET"
    return str(nid[str(value)]) if f.type == "enum" else str(int(value))


def _data() -> str:
    """The generated part: every table the evaluator reads."""
    c = constraints()
    names = _names()
    nid = {n: i for i, n in enumerate(names)}
    if len(names) > 64:
        raise ValueError("more than 64 enum names: the header's name masks are 64-bit")
    ctx = list(contexts())
    codes_ = codes()
    cid = {code: i for i, code in enumerate(codes_)}
    all_rules = catalog()
    out: list[str] = []
    w = out.append

    # -- names, kinds, context ------------------------------------------------------------------
    w(f"constexpr int NAME_COUNT = {len(names)};\n")
    w("/** Enum member names of the tables (types, major-ness, swizzle modes...), as name ids. */\nnamespace name {\n")
    w("".join(f"constexpr int {_ident(n)} = {i};\n" for i, n in enumerate(names)))
    w("}  // namespace name\n")
    w(_array("const char* const", "NAME_STR", [_c(n) for n in names], 6))
    w(_array("int", "NAME_INT", [n if n.isdigit() else "-1" for n in names]))
    w("/** The MMA kinds (PTX order): each selects Table 42, 43 or 44. */\n")
    w("enum class Kind : std::uint8_t { " + ", ".join(KINDS) + " };\n")
    w(f"constexpr int KIND_COUNT = {len(KINDS)};\n")
    w(_array("const char* const", "KIND_STR", [_c(k) for k in KINDS], 8))
    w("/** Scale vector sizes (.scale_vec::1X/2X/4X, .block16/.block32); none = not given. */\n")
    w("enum class ScaleVec : std::int8_t { none = -1, " + ", ".join(_ident(s) for s in SCALE_VECS) + " };\n")
    w("/** Targets ([targets] of tables/constraints.toml); none = not given. */\n")
    w("enum class Arch : std::int8_t { none = -1, " + ", ".join(c.targets) + " };\n")
    w("/** Context names, as bits of Context::given() (the [[context]] table). */\nnamespace ctx_bit {\n")
    w("".join(f"constexpr std::uint32_t {n} = 1u << {i};\n" for i, n in enumerate(ctx)))
    w("}  // namespace ctx_bit\n")
    kinds_of = {"flag": ("std::int8_t", "-1"), "cta_group": ("std::int8_t", "-1"), "uint": ("long long", "-1"),
                "scale_vec": ("ScaleVec", "ScaleVec::none"), "arch": ("Arch", "Arch::none"),
                "warp": ("std::int8_t", "-1"), "alloc_base": ("long long", "-1")}
    w("/** The instruction context (tables/contexts.toml [[context]]); each member's \"not given\" is -1 /\n"
      " *  none. Flags are 0 or 1. Values are taken as valid (the Python API checks them). */\nstruct Context {\n")
    for n, entry in contexts().items():
        ctype, none = kinds_of[entry.value]
        w(f"    {ctype} {n} = {none};  // {_c(entry.meaning)[1:-1]}\n")
    w("    DESCGEN_HD constexpr std::uint32_t given() const {\n        return 0u")
    for n, entry in contexts().items():
        none = kinds_of[entry.value][1]
        w(f"\n            | ({n} != {none} ? ctx_bit::{n} : 0u)")
    w(";\n    }\n};\n")

    # -- codes -------------------------------------------------------------------------------
    fcodes = field_codes()

    def rule_of(code: str) -> Any:
        return all_rules.get(code) or fcodes[code]

    w("/** Every finding code the validators report, as the Python API names it. */\n")
    w("enum class Code : std::uint16_t { " + ", ".join(_ident(x) for x in codes_) + " };\n")
    w(f"constexpr int CODE_COUNT = {len(codes_)};\n")
    w(_array("const char* const", "CODE_STR", [_c(x) for x in codes_], 4))
    w("/** Each code's rule sentence and PTX source (for printing). */\n")
    w(_array("const char* const", "CODE_RULE", [_c(f"{rule_of(x).rule} ({rule_of(x).source})") for x in codes_], 1))
    w("/** Each code's severity (0 error, 1 warning, 2 info). */\n")
    w(_array("std::uint8_t", "CODE_SEVERITY", [str(_SEVERITIES[rule_of(x).severity]) for x in codes_]))
    w("/** The context names each code's rule needs (ctx_bit masks; 0: a field's own check). */\n")
    w(_array("std::uint32_t", "RULE_NEEDS",
             [str(sum(1 << ctx.index(n) for n in all_rules[x].needs)) + "u" if x in all_rules else "0u"
              for x in codes_]))

    # -- layouts -----------------------------------------------------------------------------
    w("/** One field of a plan (a layout for one kind): bits, type, transform (value = (raw << shift) + add),\n"
      " *  the code of its own check, its legal raw values (runs) and, for an enum, raw -> name id. */\n")
    w("struct FieldSpec { std::uint8_t lo, width, type, severity, shift; std::int16_t add; std::int8_t slot;\n"
      "                   std::uint16_t code, runs, nruns; std::int16_t enums; std::uint64_t legal; const char* name;\n"
      "                   const char* unit; const char* allowed; };\n")
    w("struct Run { std::uint32_t lo, hi, step; };\n")
    w("struct PlanSpec { std::uint8_t width, first, count; };\n")
    fields: list[str] = []
    runs: list[str] = []
    enums: list[str] = []
    plan_rows: list[str] = []
    slots = {word: _slots(word) for word in ("idesc", "smem", "zcm", "taddr")}
    for word, lay_name, kind in plans():
        lay = layout(lay_name)
        plan_rows.append(f"{{{lay.width}, {len(fields)}, {len(lay.fields)}}}")
        for f in lay.fields:
            shift, add = _shift_add(f) if f.type == "uint" else (0, 0)
            legal = _runs(_legal_raw(f, kind))
            e = -1
            if f.type == "enum":
                e = len(enums)
                by_code = {code: nid[str(n)] for n, code in f.codes(kind).items()}
                enums += [str(by_code.get(r, -1)) for r in range(1 << f.width)]
            slot = slots[word].index(f.name) if f.is_value else -1
            # a field of at most 6 bits: its legal raw values as a mask too (one bit test)
            narrow = _mask(_legal_raw(f, kind)) if f.width <= 6 else "0"
            allowed = (f.domain(kind).describe() if f.is_value
                       else (f"{f.const:#0{f.width + 2}b}" if f.type == "constant" else "0"))
            fields.append(f"{{{f.lo}, {f.width}, {_TYPES[f.type]}, {_SEVERITIES[f.severity]}, {shift}, {add}, {slot}, "
                          f"{cid[finding_code(word, f, _CHECK[f.type])]}, {len(runs)}, {len(legal)}, {e}, {narrow}, "
                          f"{_c(f.name)}, {_c(f.unit)}, {_c(allowed)}}}")
            runs += [f"{{{lo}u, {hi}u, {step}u}}" for lo, hi, step in legal]
    w(_array("PlanSpec", "PLANS", plan_rows, 8))
    w(f"constexpr int PLAN_COUNT = {len(plan_rows)};\n")
    w(f"constexpr int MAX_SLOTS = {max(len(s) for s in slots.values())};\n")
    w("constexpr long long UNSET = -0x7fffffffffffffffll;\n")
    w("/** Per plan and slot: the value an encoder takes when not given one (the kind's types, the field's\n"
      " *  default; UNSET: required, or no such field). */\n")
    width = max(len(x) for x in slots.values())
    defaults = [_default(lay, kind, slots[word][i] if i < len(slots[word]) else None, nid)
                for word, lay, kind in plans() for i in range(width)]
    w(_array("long long", "PLAN_DEFAULTS", defaults, 8))
    w(_array("FieldSpec", "FIELDS", fields, 1))
    w(_array("Run", "RUNS", runs, 6))
    w(_array("std::int8_t", "ENUMS", enums, 32))
    w(f"constexpr int IDESC_PLAN0 = 0;\nconstexpr int SMEM_PLAN = {len(KINDS)};\n"
      f"constexpr int ZCM_PLAN = {len(KINDS) + 1};\nconstexpr int TADDR_PLAN = {len(KINDS) + 2};\n")
    for word, names_ in slots.items():
        w(f"/** The {word} word's value fields (slots of its decoded values). */\nnamespace {word}_slot {{\n")
        w("".join(f"constexpr int {n} = {i};\n" for i, n in enumerate(names_)))
        w(f"constexpr int count = {len(names_)};\n}}  // namespace {word}_slot\n")
        w(_array("const char* const", f"{word.upper()}_SLOT_STR", [_c(n) for n in names_], 6))

    # -- what the evaluator computes before the rules (the tables the rules read: cpp_rules) -------------
    w(f"/** The cta_groups tcgen05.mma.ws exists with (Table 39): ws not given is false under another. */\n"
      f"constexpr std::uint32_t WS_CTA_GROUPS = {sum(1 << g for g in ws_cta_groups())}u;\n")
    w("/** The MMA's K per kind: dense, sparse (Table 39). */\n")
    w(_array("std::int16_t", "KS", [str(x) for k in KINDS for x in kind_facts(k).ks]))
    w("/** The dtype each kind implies when its layout has no dtype field (name id, -1: none). */\n")
    w(_array("std::int8_t", "IMPLIED_DTYPE",
             [str(nid[d]) if (d := kind_facts(k).implied_dtype) else "-1" for k in KINDS]))
    return "".join(out)


def _encoders() -> str:
    """Argument structs and the named encoders: the Python encoders' required arguments (in their
    order) as parameters, every other value field as a fluent setter (unset: the plan's default)."""
    out: list[str] = []
    specs: list[tuple[str, Callable[..., Any], int]] = [("idesc", encode_idesc, layout(IDESC_LAYOUTS[0]).width)]
    specs += [(w, fn, layout(lay).width) for w, lay, fn in _WORDS]
    for word, fn, width in specs:
        slots = _slots(word)
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.default is inspect.Parameter.empty and p.name != "kind"]
        required = [p.name for p in params]
        struct = f"{word.capitalize()}Args"
        out.append(f"/** Values of the {word} fields encode_{word} does not take as parameters; each setter is\n"
                   f" *  named after the field (enum values are name ids: name::bf16). Unset: the table's default\n"
                   f" *  (idesc types: the kind's). */\nstruct {struct} {{\n    long long v[{word}_slot::count] = {{")
        out.append(", ".join("UNSET" for _ in slots) + "};\n")
        for s in slots:
            if s not in required:
                out.append(f"    DESCGEN_HD constexpr {struct} {s}(long long x) const {{ "
                           f"{struct} c = *this; c.v[{word}_slot::{s}] = x; return c; }}\n")
        out.append("};\n")
        ctype = "std::uint32_t" if width == 32 else "std::uint64_t"
        args = ", ".join(f"long long {r}" for r in required)
        kind_arg = "Kind kind, " if word == "idesc" else ""
        plan = "IDESC_PLAN0 + static_cast<int>(kind)" if word == "idesc" else f"{word.upper()}_PLAN"
        sets = "".join(f"    a.v[{word}_slot::{r}] = {r};\n" for r in required)
        out.append(f"/** Encode a {word} word from logical values in the Python API's units (encode_{word}); no\n"
                   f" *  rule is checked (validate_{word} does; under DESCGEN_DEBUG each field's own check runs). */\n"
                   f"DESCGEN_HD constexpr {ctype} encode_{word}({kind_arg}{args}, {struct} a = {struct}{{}}) {{\n{sets}"
                   f"    return static_cast<{ctype}>(detail::encode_plan({plan}, a.v));\n}}\n")
    return "".join(out)


def _rules() -> str:
    """The tables the rules read and each header word's rule function, generated from the rules'
    declarations (:mod:`descgen.backends.cpp_rules`)."""
    nid = {n: i for i, n in enumerate(_names())}
    scope = scopes(layout_name for _, layout_name, kind in plans() if kind is not None)
    out = [table_data(tables_of(HEADER_WORDS), nid)]
    for word in HEADER_WORDS:
        out.append(rule_functions(word, scope[word], nid, lambda code: f"Code::{_ident(code)}"))
    return "".join(out)


def header() -> str:
    """The whole header, as text (deterministic: the same tables give the same bytes).

    Raises:
        ValueError: the evaluator's rules differ from the catalog's (a rule added or moved), or a
            table no longer fits the header's representation (a transform that is not a shift
            and an offset, more than 64 names).
    """
    evaluator = resources.files(__package__).joinpath(_EVALUATOR).read_text(encoding="utf-8")
    before, rules_mark, after = evaluator.partition("// @RULES@\n")
    if not rules_mark:
        raise ValueError(f"{_EVALUATOR} has no // @RULES@ line")
    evaluator = before + _rules() + after
    head, encoders_mark, tail = evaluator.partition("// @ENCODERS@\n")
    if not encoders_mark:
        raise ValueError(f"{_EVALUATOR} has no // @ENCODERS@ line")
    return "".join([
        f"// descgen_tcgen05.hpp: tcgen05 descriptor words for C++ and CUDA, generated by descgen {__version__}\n"
        "// (descgen header) from tables/ (PTX ISA 9.1 sec. 9.7.16.4, Tables 39-45, 50-55).\n"
        "// Do not edit: regenerate. Self-contained and header-only: only <cstdint> (and, with DESCGEN_DEBUG\n"
        "// defined, <cstdio>/<cstdlib> for DESCGEN_CHECK); every function is __host__ __device__ under nvcc.\n"
        "// Needs C++17 or later (if constexpr): g++/clang++ -std=c++17, nvcc -std=c++17 (C++14 refuses it).\n",
        "#ifndef DESCGEN_TCGEN05_HPP\n#define DESCGEN_TCGEN05_HPP\n\n#include <cstdint>\n\n",
        _PRELUDE,
        "namespace descgen {\nnamespace tcgen05 {\n\n// ---- data (generated from tables/) ----\n",
        _data(),
        "\n// ---- evaluator (descgen/backends/cpp_header_eval.hpp) ----\n",
        head, _encoders(), tail,
        "\n}  // namespace tcgen05\n}  // namespace descgen\n\n",
        resources.files(__package__).joinpath(_LOADER).read_text(encoding="utf-8"),
        "\n#endif  // DESCGEN_TCGEN05_HPP\n",
    ])


_PRELUDE = (r"""#if defined(__CUDACC__)
#define DESCGEN_HD __host__ __device__
#else
#define DESCGEN_HD
#endif
// DESCGEN_INLINE: a function of the validators' hot path, inlined into its (one or two) callers.
#if defined(__CUDACC__)
#define DESCGEN_INLINE __forceinline__
#elif defined(__GNUC__)
#define DESCGEN_INLINE inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#define DESCGEN_INLINE __forceinline
#else
#define DESCGEN_INLINE inline
#endif
// DESCGEN_NOINLINE: a function off the hot path (adding a finding), kept out of line.
#if defined(__CUDACC__)
#define DESCGEN_NOINLINE __noinline__
#elif defined(__GNUC__)
#define DESCGEN_NOINLINE __attribute__((noinline, cold))
#elif defined(_MSC_VER)
#define DESCGEN_NOINLINE __declspec(noinline)
#else
#define DESCGEN_NOINLINE
#endif
// The tables are __device__ constexpr in the device pass, constexpr on the host.
#if defined(__CUDA_ARCH__)
#define DESCGEN_TABLE __device__ constexpr
#else
#define DESCGEN_TABLE constexpr
#endif

// DESCGEN_CHECK(cond, code, field, value, allowed): code, field and allowed are string literals,
// value converts to unsigned long long. With DESCGEN_DEBUG defined a failed check prints
//   descgen: <code>: <field> = <value> (0x<hex>), allowed <allowed>
// (printf on the device, stderr on the host) and traps (__trap() on the device, abort() on the
// host); without it, nothing is evaluated. The same definition as the run-time descriptor functions
// descgen emits (descgen.backends.descriptor_functions), under #ifndef: whichever comes first.
#ifdef DESCGEN_DEBUG
#include <cstdio>
#include <cstdlib>
#endif
""" + CHECK_MACRO + "\n\n")
