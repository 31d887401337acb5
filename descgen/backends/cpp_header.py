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

Everything the rules compare against is DATA written here from what the Python engine itself
reads: the layouts (:mod:`descgen.loader`), Table 39's rows, Table 50, Table 52, Tables 54/55, the
target requirements, the zero-column mask and tensor memory limits (:mod:`descgen.catalog`,
:mod:`descgen.facts`). The C++ that reads it (``cpp_header_eval.hpp``, shipped beside this module)
is a small evaluator: field extraction by bit ranges, set membership, and one short function per
catalog rule over those tables; tests/test_cpp_header.py drives it against the Python API over a
million words and contexts.
"""

from __future__ import annotations

import inspect
import re
from importlib import resources
from math import gcd
from typing import Any, Callable, Iterable

from ..codes import field_codes
from ..catalog import SCALE_VECS, catalog, constraints, contexts
from ..context import ws_cta_groups
from ..emitters import CHECK_MACRO
from ..engine import finding_code
from ..facts import (alloc_sizes, chunk_elements, kind_facts, mma_k, pattern_boundary, shape_union, submask_counts,
                     swizzle_period, swizzle_row,
                     tmem_shape, warps_per_warpgroup)
from ..idesc import encode_idesc
from ..loader import IDESC_LAYOUTS, KINDS, Field, atoms, layout, shapes
from ..smem import encode_smem
from ..taddr import encode_taddr
from ..version import __version__
from ..zcm import encode_zcm

__all__ = ["header", "codes", "plans", "unreachable_codes", "EVALUATOR_RULES", "FILE_NAME"]

#: The file name the header is written as (``descgen header --lang cpp -o``'s default).
FILE_NAME = "descgen_tcgen05.hpp"
#: The hand-written evaluator, appended to the generated data (package data beside this module).
_EVALUATOR = "cpp_header_eval.hpp"

#: The catalog rules the evaluator implements, per word, in the order it runs them: the catalog's
#: order (checked by :func:`header`: a rule added to or moved in tables/rules.toml fails generation
#: until the evaluator has it).
EVALUATOR_RULES: dict[str, tuple[str, ...]] = {
    "idesc": ("IDESC-TYPES-TABLE39", "IDESC-K-VALUE", "IDESC-M-SHAPE", "IDESC-N-SHAPE", "IDESC-N-TRANSPOSE-8BIT",
              "IDESC-MAJOR-TYPE-SIZE", "IDESC-A-MAJOR-TMEM", "IDESC-SPARSITY-SELECTOR-DENSE", "IDESC-MAX-SHIFT-WS",
              "IDESC-SPARSE-SP", "MMA-WS-CTA-GROUP", "MMA-WS-KIND", "IDESC-SCALE-VEC-KIND", "IDESC-SCALE-VEC-K",
              "IDESC-SCALE-VEC-TYPE", "IDESC-A-SF-ID-SCALE-VEC", "IDESC-B-SF-ID-SCALE-VEC", "IDESC-KIND-ARCH",
              "IDESC-SPARSE-ARCH", "IDESC-K96-ARCH", "IDESC-SCALE-VEC-ARCH"),
    "smem": ("SMEM-LBO-MODE-SWIZZLE", "SMEM-LBO-MODE-BASE-OFFSET", "SMEM-LBO-MODE-ARCH", "SMEM-BASE-OFFSET-IGNORED",
             "SMEM-BASE-OFFSET-BOUNDARY", "SMEM-BASE-OFFSET-TABLE41"),
    "zcm": ("ZCM-WS", "ZCM-M", "ZCM-COLUMN-SHIFT-M", "ZCM-SUBMASK-UNUSED"),
    "mma": ("MMA-SWIZZLE-TABLE52", "MMA-LBO-MODE-MAJOR", "MMA-LBO-IGNORED", "MMA-SBO-ATOM"),
    "taddr": ("TADDR-WARP-LANES", "TADDR-ALLOC-COLUMNS", "TADDR-COLUMN-ALLOC"),
}
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
        if rule.applies in EVALUATOR_RULES:
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


def _check_rules() -> None:
    for word, expected in EVALUATOR_RULES.items():
        have = tuple(r.code for r in catalog().values() if r.applies == word)
        if have != expected:
            raise ValueError(f"the C++ evaluator runs the {word} rules {expected}, the catalog has {have}: "
                             "update descgen/backends/cpp_header_eval.hpp and EVALUATOR_RULES")


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


#: The idesc fields IDESC-TYPES-TABLE39 reads (Table 39's type columns), in its combinations' order.
_TYPE_FIELDS = ("atype", "btype", "dtype", "scale_type")


def _bit_runs(mask: int) -> list[tuple[int, int]]:
    """The set bits of ``mask`` as runs ``(lo, width)``, low to high."""
    out: list[tuple[int, int]] = []
    lo = 0
    while mask >> lo:
        if (mask >> lo) & 1:
            width = 0
            while (mask >> (lo + width)) & 1:
                width += 1
            out.append((lo, width))
            lo += width
        else:
            lo += 1
    return out


def _types_bad(nid: dict[str, int]) -> str:
    """IDESC-TYPES-TABLE39 as data: ``types_key(word)`` gathers the raw bits the type fields occupy
    in any kind's layout; TYPES_BAD holds, per kind and key, whether the rule reports the word: each
    type decoded (an unknown code or a field the kind lacks: none; no dtype: the kind's implied one)
    is one of its column's in the kind's Table 39 combinations (else the field checks report it),
    and the four together are not a combination (``_types`` in descgen/checks.py)."""
    key_mask = 0
    for name in IDESC_LAYOUTS:
        for f in layout(name).fields:
            if f.name in _TYPE_FIELDS:
                key_mask |= f.mask << f.lo
    runs = _bit_runs(key_mask)
    bits = sum(w for _, w in runs)
    if bits > 12:
        raise ValueError(f"the idesc type fields span {bits} bits: TYPES_BAD would have {1 << bits} entries per kind")
    gather, at = [], 0
    for lo, width in runs:
        gather.append(f"((w >> {lo}) & 0x{(1 << width) - 1:x}u) << {at}" if at else f"((w >> {lo}) & 0x{(1 << width) - 1:x}u)")
        at += width
    words = max(1, (1 << bits) // 64)
    table: list[str] = []
    for _, lay_name, kind in plans()[:len(KINDS)]:  # (the idesc plans, in KINDS' order)
        assert kind is not None
        lay = layout(lay_name)
        combos = kind_facts(kind).combos
        columns = [{cmb[j] for cmb in combos} for j in range(len(_TYPE_FIELDS))]
        implied = kind_facts(kind).implied_dtype
        by_raw = {f.name: (f, {code: str(n) for n, code in f.codes(kind).items()}) for f in lay.fields if f.name in _TYPE_FIELDS}
        bad = 0
        for key in range(1 << bits):
            word, at = 0, 0
            for lo, width in runs:  # scatter the key back to the word's bits
                word |= ((key >> at) & ((1 << width) - 1)) << lo
                at += width
            given: list[str | None] = []
            for name in _TYPE_FIELDS:
                entry = by_raw.get(name)
                given.append(entry[1].get((word >> entry[0].lo) & entry[0].mask) if entry is not None else None)
            if given[2] is None:
                given[2] = implied
            if all(x in columns[j] for j, x in enumerate(given)) and tuple(given) not in combos:
                bad |= 1 << key
        table += [f"0x{(bad >> (64 * i)) & (2**64 - 1):x}ull" for i in range(words)]
    return ("/** IDESC-TYPES-TABLE39 (Table 39's type combinations; Table 55): types_key(word) gathers the raw bits\n"
            " *  of the type fields (atype, btype, dtype, scale type of every kind's layout); bit key of\n"
            " *  TYPES_BAD[kind * TYPES_KEY_WORDS ...]: the kind's types there are each legal, but not together. */\n"
            f"DESCGEN_HD constexpr std::uint32_t types_key(std::uint32_t w) {{ return {' | '.join(gather)}; }}\n"
            f"constexpr int TYPES_KEY_WORDS = {words};\n" + _array("std::uint64_t", "TYPES_BAD", table, 4))


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
    w("/** Targets ([targets] of tables/rules.toml); none = not given. */\n")
    w("enum class Arch : std::int8_t { none = -1, " + ", ".join(c.targets) + " };\n")
    w("/** Context names, as bits of Context::given() (the [[context]] table). */\nnamespace ctx_bit {\n")
    w("".join(f"constexpr std::uint32_t {n} = 1u << {i};\n" for i, n in enumerate(ctx)))
    w("}  // namespace ctx_bit\n")
    kinds_of = {"flag": ("std::int8_t", "-1"), "cta_group": ("std::int8_t", "-1"), "uint": ("long long", "-1"),
                "scale_vec": ("ScaleVec", "ScaleVec::none"), "arch": ("Arch", "Arch::none"), "warp": ("std::int8_t", "-1"),
                "alloc_base": ("long long", "-1")}
    w("/** The instruction context (tables/rules.toml [[context]]); each member's \"not given\" is -1 /\n"
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
    w("/** The context names any rule of a word needs (ctx_bit masks), per word (word_*). */\n")
    w("".join(f"constexpr int word_{word} = {i};\n" for i, word in enumerate(EVALUATOR_RULES)))
    w(_array("std::uint32_t", "RULE_NEEDS_OF", [f"{sum(1 << ctx.index(n) for n in {n for x in rules for n in all_rules[x].needs})}u"
                                                for rules in EVALUATOR_RULES.values()]))
    w(_array("std::uint32_t", "RULE_NEEDS",
             [str(sum(1 << ctx.index(n) for n in all_rules[x].needs)) + "u" if x in all_rules else "0u" for x in codes_]))

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
            allowed = f.domain(kind).describe() if f.is_value else (f"{f.const:#0{f.width + 2}b}" if f.type == "constant" else "0")
            fields.append(f"{{{f.lo}, {f.width}, {_TYPES[f.type]}, {_SEVERITIES[f.severity]}, {shift}, {add}, {slot}, "
                          f"{cid[finding_code(word, f, _CHECK[f.type])]}, {len(runs)}, {len(legal)}, {e}, {narrow}, {_c(f.name)}, "
                          f"{_c(f.unit)}, {_c(allowed)}}}")
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

    # -- Table 39, Table 50, Table 52, the types -------------------------------------------------
    rows = shapes().rows
    m_unit = gcd(*[m for r in rows for m in r.m])
    n_unit = gcd(*[n for r in rows for n in r.n])
    w("/** Table 39 (tables/shapes.toml): one row per kind, .ws, cta_group, sparsity and K; M and N as masks\n"
      " *  of value / M_UNIT, value / N_UNIT. */\n")
    w(f"constexpr long long M_UNIT = {m_unit};\nconstexpr long long N_UNIT = {n_unit};\n")
    w("struct ShapeRow { std::uint8_t kind, cta_group, ws, sparse; std::int16_t k; std::uint64_t m, n; };\n")
    rows = tuple(sorted(rows, key=lambda r: KINDS.index(r.kind)))  # (stable: Table 39's order within a kind)
    w(_array("ShapeRow", "SHAPES", [f"{{{KINDS.index(r.kind)}, {r.cta_group}, {int(r.ws)}, {int(r.sparse)}, {r.k}, "
                                     f"{_mask(m // m_unit for m in r.m)}, {_mask(n // n_unit for n in r.n)}}}" for r in rows], 1))
    w(f"constexpr int SHAPE_COUNT = {len(rows)};\n")
    t50 = c.transpose_b_8bit
    k_unit = gcd(*[r.k for r in rows], *[k for sv in c.scale_vec for k in sv["k"]])  # (ROWS_K's and SV_ROWS_K's)
    if max([r.k for r in rows] + [k for sv in c.scale_vec for k in sv["k"]]) >= 64 * k_unit:
        raise ValueError(f"a K of Table 39 or [[scale_vec]] is not below 64 * {k_unit}: ROWS_K cannot index it")
    if max(r.cta_group for r in rows) >= 4:
        raise ValueError("a cta_group of Table 39 is not below 4: ROWS_CONTEXT cannot index it")
    w("/** SHAPES indexed: per value the rows (a mask of SHAPES' indices) whose kind, context (ROWS_CONTEXT:\n"
      " *  (cta_group + 1) * 3 + (.ws + 1), cta_group -1..3, .ws -1..1; -1: not given, any), sparsity,\n"
      " *  K / K_UNIT, M / M_UNIT, N / N_UNIT has it, and per N / N_UNIT the rows whose cta_group's Table 50\n"
      " *  (N for a transposed 8-bit B) has it: walk_shapes' row sets in a few ANDs. */\n")
    w(f"constexpr long long K_UNIT = {k_unit};\n")
    w(_array("std::uint64_t", "ROWS_KIND", [_rows(r.kind == k for r in rows) for k in KINDS], 4))
    w(_array("std::uint64_t", "ROWS_CONTEXT", [_rows((g < 0 or r.cta_group == g) and (ws < 0 or int(r.ws) == ws) for r in rows)
                                               for g in range(-1, 4) for ws in range(-1, 2)], 3))
    w(_array("std::uint64_t", "ROWS_SPARSE", [_rows(int(r.sparse) == v for r in rows) for v in range(2)], 4))
    w(_array("std::uint64_t", "ROWS_K", [_rows(r.k == b * k_unit for r in rows) for b in range(64)], 4))
    w(_array("std::uint64_t", "ROWS_M", [_rows(b * m_unit in r.m for r in rows) for b in range(64)], 4))
    w(_array("std::uint64_t", "ROWS_N", [_rows(b * n_unit in r.n for r in rows) for b in range(64)], 4))
    w(_array("std::uint64_t", "ROWS_T50", [_rows(b * n_unit in t50.get(r.cta_group, ()) for r in rows) for b in range(64)], 4))
    w(_array("std::uint64_t", "M_UNION", [_mask(m // m_unit for m in shape_union(k, "m")) for k in KINDS], 4))
    w(_array("std::uint64_t", "N_UNION", [_mask(n // n_unit for n in shape_union(k, "n")) for k in KINDS], 4))
    w(f"/** The cta_groups tcgen05.mma.ws exists with (Table 39): ws not given is false under another. */\n"
      f"constexpr std::uint32_t WS_CTA_GROUPS = {sum(1 << g for g in ws_cta_groups())}u;\n")
    w("/** The MMA's K per kind: dense, sparse (Table 39). */\n")
    w(_array("std::int16_t", "KS", [str(x) for k in KINDS for x in kind_facts(k).ks]))
    w("/** The dtype each kind implies when its layout has no dtype field (name id, -1: none). */\n")
    w(_array("std::int8_t", "IMPLIED_DTYPE", [str(nid[d]) if (d := kind_facts(k).implied_dtype) else "-1" for k in KINDS]))
    w(_types_bad(nid))
    w("/** Element sizes in bits per name id (0: not an element type) (tables/smem_atoms.toml). */\n")
    w(_array("std::uint8_t", "TYPE_BITS", [str(c.type_bits.get(n, 0)) for n in names]))
    majors = list(dict.fromkeys(row["major"] for row in c.major_swizzle))
    w("/** Table 52: the swizzle modes (name-id mask) each major-ness (MAJOR_NAMES, name ids) may use with each\n"
      " *  element size: SWIZZLES_BY_BITS[major * 64 + bits]. */\n")
    w(f"constexpr int MAJOR_COUNT = {len(majors)};\n")
    w(_array("std::int8_t", "MAJOR_NAMES", [str(nid[m]) for m in majors]))
    by_bits = [[nid[sw] for row in c.major_swizzle if row["major"] == m and b in row["bits"] for sw in row["swizzles"]]
               for m in majors for b in range(64)]
    w(_array("std::uint64_t", "SWIZZLES_BY_BITS", [_mask(x) for x in by_bits], 4))
    mn = majors.index("mn") if "mn" in majors else None
    w("/** IDESC-MAJOR-TYPE-SIZE: the element types (name-id mask) Table 52 gives no MN-major swizzle mode. */\n")
    w(f"constexpr std::uint64_t MN_MAJOR_NOT = "
      f"{_mask(i for i, n in enumerate(names) if c.type_bits.get(n, 0) and (mn is None or not by_bits[mn * 64 + c.type_bits[n]]))};\n")

    # -- Tables 54/55, targets, smem, zcm, taddr --------------------------------------------------
    w(f"/** The block-scaled kinds (those with [[scale_vec]] rows), as a Kind mask. */\n"
      f"constexpr std::uint32_t SCALED_KINDS = {sum(1 << KINDS.index(k) for k in {k for r in c.scale_vec for k in r['kinds']})}u;\n")
    if len(c.scale_vec) > 64:
        raise ValueError("more than 64 [[scale_vec]] rows: the SV_ROWS_* masks are 64-bit")
    w("/** Tables 54/55 ([[scale_vec]]) indexed: per kind, scale_vec + 1 (0: not given, any), K / K_UNIT, SF ID and\n"
      " *  scale type (name id), the rows (a mask of their indices, in tables/rules.toml's order) that have it. */\n")
    w(f"constexpr int SCALE_VEC_COUNT = {len(SCALE_VECS)};\n")
    w(_array("std::uint64_t", "SV_ROWS_KIND", [_rows(k in r["kinds"] for r in c.scale_vec) for k in KINDS], 4))
    w(_array("std::uint64_t", "SV_ROWS_NAME", [_rows(v is None or r["name"] == v for r in c.scale_vec)
                                               for v in (None, *SCALE_VECS)], 4))  # (per scale_vec + 1: none given, any)
    w(_array("std::uint64_t", "SV_ROWS_K", [_rows(b * k_unit in r["k"] for r in c.scale_vec) for b in range(64)], 4))
    if max(i for r in c.scale_vec for i in r["sf_ids"]) >= 32:
        raise ValueError("an SF ID of [[scale_vec]] is not below 32: SV_ROWS_SF cannot index it")
    w(_array("std::uint64_t", "SV_ROWS_SF", [_rows(i in r["sf_ids"] for r in c.scale_vec) for i in range(32)], 4))
    w(_array("std::uint64_t", "SV_ROWS_SCALE_TYPE", [_rows(n in r["scale_types"] for r in c.scale_vec) for n in names], 4))
    w("/** [[requires]]: the targets (Arch mask) that meet each feature the rules ask about. */\nnamespace require {\n")
    for feat in _FEATURES:
        w(f"constexpr std::uint32_t {feat} = {sum(1 << i for i, a in enumerate(c.targets) if c.supports(a, feat))}u;\n")
    w("}  // namespace require\n")
    w(f"/** Table 51: A in tensor memory has this major-ness. */\nconstexpr int A_TMEM_MAJOR = {nid[c.a_tmem['a_major']]};\n")
    a = c.absolute_lbo
    w("/** sec. 9.7.16.3.1.2.1: the absolute LBO mode's swizzles, major-ness and base offset. */\n"
      f"constexpr std::uint64_t ABS_LBO_SWIZZLES = {_mask(nid[s] for s in a['swizzles'])};\n"
      f"constexpr int ABS_LBO_MAJOR = {nid[a['major']]};\nconstexpr long long ABS_LBO_BASE_OFFSET = {a['base_offset']};\n")
    w("/** Table 41: the pattern boundary in bytes per swizzle name id (0: none / not a mode). */\n")
    w(_array("std::int16_t", "PATTERN_BOUNDARY", [str(pattern_boundary(n)) for n in names]))
    w("/** MMA-SBO-ATOM (E47): the swizzle pattern's period and its atom row in bytes per swizzle name id\n"
      " *  (2**(B+M+S) and 2**(B+M) of its Swizzle<B,M,S>; 0: none / not a mode), the K rows of its MN-major\n"
      " *  atom (Table 53; 0: no atom), each kind's dense K (Table 39), and the elements one 16-byte chunk\n"
      " *  holds per kind and element size (sec. 9.7.16.10.4): PER_CHUNK_BY_BITS[kind * 64 + bits], 0: none. */\n")
    w(_array("std::int16_t", "SWIZZLE_PERIOD", [str(swizzle_period(n)) for n in names]))
    w(_array("std::int16_t", "SWIZZLE_ROW", [str(swizzle_row(n)) for n in names]))
    w(_array("std::int8_t", "PER_CHUNK_BY_BITS", [str(chunk_elements(k, b)) for k in KINDS for b in range(64)], 16))
    mn_atoms = atoms().atoms
    w(_array("std::int16_t", "MN_ATOM_K_ROWS", [str(mn_atoms[(n, "mn")].k) if (n, "mn") in mn_atoms else "0"
                                                for n in names]))
    w(_array("std::int16_t", "KIND_DENSE_K", [str(mma_k(k, False)) for k in KINDS]))
    z = c.zcm
    w("/** sec. 9.7.16.4.3: the zero-column mask's M values, column shift limit and sub-masks per M. */\n")
    w(_array("std::int16_t", "ZCM_MS", [str(m) for m in z["ms"]]))
    w(f"constexpr int ZCM_M_COUNT = {len(z['ms'])};\n")
    shifts = sorted((int(m), int(v)) for m, v in z["max_column_shift"].items())
    w(_array("std::int16_t", "ZCM_SHIFT_LIMIT", [str(x) for pair in shifts for x in pair], 8))
    w(f"constexpr int ZCM_SHIFT_LIMIT_COUNT = {len(shifts)};\n")
    subs = sorted(submask_counts().items())
    w(_array("std::int16_t", "ZCM_SUBMASKS", [str(x) for pair in subs for x in pair], 8))
    w(f"constexpr int ZCM_SUBMASKS_COUNT = {len(subs)};\n")
    lanes, tmem_columns = tmem_shape()
    w("/** sec. 9.7.16.1, 9.7.16.8.1, 9.7.16.7.1: tensor memory's shape, warps per warpgroup, tcgen05.alloc sizes. */\n"
      f"constexpr long long TMEM_LANES = {lanes};\nconstexpr long long TMEM_COLUMNS = {tmem_columns};\n"
      f"constexpr long long WARPS = {warps_per_warpgroup()};\n")
    w(_array("std::int16_t", "ALLOC_SIZES", [str(n) for n in alloc_sizes()]))
    w(f"constexpr int ALLOC_SIZE_COUNT = {len(alloc_sizes())};\n")
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
                out.append(f"    DESCGEN_HD constexpr {struct} {s}(long long x) const {{ {struct} c = *this; c.v[{word}_slot::{s}] = x; return c; }}\n")
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


def header() -> str:
    """The whole header, as text (deterministic: the same tables give the same bytes).

    Raises:
        ValueError: the evaluator's rules differ from the catalog's (a rule added or moved), or a
            table no longer fits the header's representation (a transform that is not a shift
            and an offset, more than 64 names).
    """
    _check_rules()
    evaluator = resources.files(__package__).joinpath(_EVALUATOR).read_text(encoding="utf-8")
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
        "\n}  // namespace tcgen05\n}  // namespace descgen\n\n#endif  // DESCGEN_TCGEN05_HPP\n",
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
