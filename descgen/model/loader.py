"""Strict loader for ``tables/*.toml``: PTX Tables 39-45 as data, compiled once into fields.

The loader proves each layout tiles its 32 or 64 bits exactly (no gap, no overlap, fields in the
spec's bit order), that enum codes fit their width, that every field cites a source, and rejects
unknown keys with ``tables/x.toml: field 'lbo': ...`` messages (:class:`~descgen.core.errors.TableError`).
Loading uses only the standard library (``tomllib``) and is cached.

The records it compiles to are :mod:`descgen.model.table_types`'s; the table files are read (and
their parsed form kept per user) by :mod:`descgen.model.table_cache`.
"""

from __future__ import annotations

import functools
from typing import Any, Iterable, Mapping, get_args

from ..core.errors import TableError
from ..core.transforms import TRANSFORMS
from ..core.types import Kind, Major
from .table_cache import read_table
from .table_types import (FIELD_TYPES, VALUE_TYPES, AtomShape, Atoms, Combination, Domain, Field, Layout, Shape, Shapes,
                          Storage, SwizzleFunctor)

__all__ = [
    "Domain",
    "Field",
    "Layout",
    "Shape",
    "Shapes",
    "Atoms",
    "AtomShape",
    "Combination",
    "Storage",
    "SwizzleFunctor",
    "atoms",
    "layout",
    "layouts",
    "parse_atoms",
    "shapes",
    "LAYOUT_FILES",
    "IDESC_LAYOUTS",
    "SMEM_LAYOUTS",
    "KINDS",
    "read_table",
    "FIELD_TYPES",
    "VALUE_TYPES",
]

#: Every descriptor layout, by table file. The idesc layouts are in kind order.
LAYOUT_FILES: dict[str, str] = {
    "idesc_dense": "idesc_dense.toml",  # Table 42
    "idesc_mxf8f6f4": "idesc_mxf8f6f4.toml",  # Table 43
    "idesc_mxf4": "idesc_mxf4.toml",  # Table 44
    "smem_desc": "smem_desc.toml",  # Tables 40, 41
    "wgmma_smem_desc": "wgmma_smem_desc.toml",  # §9.7.15.5.1.2.2 (Hopper wgmma, sm_90a)
    "zcm_desc": "zcm_desc.toml",  # Table 45
    "taddr": "taddr.toml",  # §9.7.16.1.1 tensor memory address
}
IDESC_LAYOUTS = ("idesc_dense", "idesc_mxf8f6f4", "idesc_mxf4")
#: The shared memory descriptor's families: tcgen05 (Table 40) first, the default; then Hopper's
#: wgmma (§9.7.15.5.1.2.2, its ``targets`` sm_90a).
SMEM_LAYOUTS = ("smem_desc", "wgmma_smem_desc")
SHAPES_FILE = "shapes.toml"  # Table 39
ATOMS_FILE = "smem_atoms.toml"  # Tables 52, 53; §9.7.16.3.3; §9.7.16.10.4
MAJORS: tuple[Major, ...] = get_args(Major)  # checked against the idesc layouts by tests/test_typing.py

#: The MMA kinds, in PTX's order (Tables 42-44).
KINDS: tuple[Kind, ...] = get_args(Kind)

_SEVERITIES = ("error", "warning", "info")
_FIELD_KEYS = {
    "name", "bits", "type", "description", "source", "transform", "unit", "min", "max",
    "values", "members", "value_type", "domain", "value", "severity", "note", "default",
}
_DESCRIPTOR_KEYS = {"word", "layout", "width", "title", "source", "kinds", "targets", "family"}
_LAYOUT_KEYS = {"descriptor", "defaults", "implied", "field", "submasks", "access", "alloc"}


# --------------------------------------------------------------------------------------------
# Table 39 (shapes).


@functools.cache
def shapes() -> Shapes:
    """Table 39, loaded once."""
    return parse_shapes(read_table(SHAPES_FILE), f"tables/{SHAPES_FILE}")


def parse_shapes(data: Mapping[str, Any], path: str) -> Shapes:
    """Validate and compile the Table 39 data (``tables/shapes.toml``)."""
    check_keys(data, {"table", "shape", "types"}, path, "file")
    rows = []
    for i, row in enumerate(data.get("shape", [])):
        where = f"shape #{i + 1}"
        check_keys(row, {"kind", "ws", "cta_group", "sparse", "m", "n", "k", "source", "note"}, path, where)
        for key in ("kind", "ws", "cta_group", "sparse", "m", "n", "k", "source"):
            if key not in row:
                raise TableError(path, where, f"missing key '{key}'")
        if row["kind"] not in KINDS:
            raise TableError(path, where, f"unknown kind {row['kind']!r}; known: {', '.join(KINDS)}")
        rows.append(
            Shape(
                kind=row["kind"],
                ws=bool(row["ws"]),
                cta_group=int(row["cta_group"]),
                sparse=bool(row["sparse"]),
                m=tuple(row["m"]),
                n=_expand_n(row["n"], path, where),
                k=int(row["k"]),
                source=row["source"],
                note=row.get("note", ""),
            )
        )
    types = []
    for i, row in enumerate(data.get("types", [])):
        where = f"types #{i + 1}"
        check_keys(row, {"kind", "dtype", "ab", "scale", "source"}, path, where)
        if row.get("kind") not in KINDS:
            raise TableError(path, where, f"unknown kind {row.get('kind')!r}")
        types.append(dict(row))
    source = data.get("table", {}).get("source", "")
    if not source:
        raise TableError(path, "table", "missing 'source'")
    return Shapes(rows=tuple(rows), types=tuple(types), source=source)


def _expand_n(spec: Any, path: str, where: str) -> tuple[int, ...]:
    items = spec if isinstance(spec, list) else [spec]
    out: set[int] = set()
    for item in items:
        if isinstance(item, int):
            out.add(item)
        elif isinstance(item, dict) and set(item) == {"min", "max", "step"}:
            out.update(range(item["min"], item["max"] + 1, item["step"]))
        else:
            raise TableError(path, where, f"'n' must be integers or {{min, max, step}} ranges, got {item!r}")
    return tuple(sorted(out))


# --------------------------------------------------------------------------------------------
# Tables 52 and 53, §9.7.16.3.3 swizzle functors, §9.7.16.10.4 storage (tables/smem_atoms.toml).


@functools.cache
def atoms() -> Atoms:
    """Tables 52 and 53 and the storage rules, loaded once."""
    return parse_atoms(read_table(ATOMS_FILE), f"tables/{ATOMS_FILE}")


def _row(raw: Any, required: Mapping[str, type], optional: Mapping[str, type], path: str, where: str) -> dict[str, Any]:
    """One ``[[section]]`` entry: known keys only, the required ones present, each of its type."""
    if not isinstance(raw, dict):
        raise TableError(path, where, "must be a table")
    check_keys(raw, set(required) | set(optional), path, where)
    for key, expected in {**optional, **required}.items():
        if key not in raw:
            if key in required:
                raise TableError(path, where, f"missing key '{key}'"
                                 + (" (every entry cites its PTX source)" if key == "source" else ""))
            continue
        value = raw[key]
        items = value if expected is list else [value]
        if expected is list and (not isinstance(value, list) or not value):
            raise TableError(path, where, f"'{key}' must be a non-empty list")
        for item in items:
            want = (int, str) if expected is list else expected
            if isinstance(item, bool) or not isinstance(item, want) or (isinstance(item, int) and item < 0):
                raise TableError(path, where, f"'{key}' has a bad value {item!r}")
    if not raw["source"].strip():
        raise TableError(path, where, "empty 'source'")
    return raw


def parse_atoms(data: Mapping[str, Any], path: str) -> Atoms:
    """Validate and compile ``tables/smem_atoms.toml``. Raises :class:`TableError` naming the entry."""
    check_keys(data, {"table", "swizzle", "atom", "combination", "element", "storage"}, path, "file")
    source = data.get("table", {}).get("source", "") if isinstance(data.get("table"), dict) else ""
    if not source:
        raise TableError(path, "table", "missing 'source'")
    known = tuple(layout("smem_desc").field("swizzle").codes(None))  # Table 40's swizzle modes

    swizzles: dict[str, SwizzleFunctor] = {}
    for i, raw in enumerate(data.get("swizzle", [])):
        row = _row(raw, {"name": str, "cute": list, "source": str}, {}, path, f"swizzle #{i + 1}")
        name, cute = row["name"], row["cute"]
        where = f"swizzle '{name}'"
        if name not in known or name in swizzles:
            raise TableError(path, where, f"not a Table 40 swizzle mode, or listed twice (modes: {', '.join(known)})")
        if len(cute) != 3 or not all(isinstance(x, int) for x in cute) or cute[1] + cute[2] != 7 or cute[0] > cute[2]:
            raise TableError(path, where, "'cute' must be [B, M, S] with B <= S and M + S = 7 (the pattern row is "
                                          "address bits 7 and up: Table 41's base offset is (addr >> 7) & 7)")
        swizzles[name] = SwizzleFunctor(name, cute[0], cute[1], cute[2], row["source"])
    missing = [name for name in known if name not in swizzles]
    if missing:
        raise TableError(path, "swizzle", f"no functor for {', '.join(missing)}")

    shapes_: dict[tuple[str, str], AtomShape] = {}
    for i, raw in enumerate(data.get("atom", [])):
        row = _row(raw, {"swizzle": str, "major": str, "shape": list, "source": str}, {}, path, f"atom #{i + 1}")
        key = (row["swizzle"], row["major"])
        where = f"atom {key[0]}/{key[1]}"
        if key[0] not in swizzles or key[1] not in MAJORS or key in shapes_:
            raise TableError(path, where, f"unknown swizzle or major-ness ({', '.join(MAJORS)}), or listed twice")
        shape = row["shape"]
        if len(shape) != 2 or not all(isinstance(x, int) and x > 0 for x in shape):
            raise TableError(path, where, "'shape' must be [MN, K], two positive integers")
        shapes_[key] = AtomShape(key[0], key[1], shape[0], shape[1], row["source"])

    elements: dict[str, tuple[int, str]] = {}
    for i, raw in enumerate(data.get("element", [])):
        row = _row(raw, {"bits": int, "types": list, "source": str}, {}, path, f"element #{i + 1}")
        for name in row["types"]:
            if not isinstance(name, str) or name in elements or not 0 < row["bits"] <= 32:
                raise TableError(path, f"element #{i + 1}", f"type {name!r} listed twice, or bits not 1-32")
            elements[name] = (row["bits"], row["source"])
    sizes = {bits for bits, _ in elements.values()}

    combinations = []
    for i, raw in enumerate(data.get("combination", [])):
        row = _row(raw, {"major": str, "bits": list, "swizzles": list, "source": str}, {}, path,
                   f"combination #{i + 1}")
        if row["major"] not in MAJORS or not set(row["bits"]) <= sizes or not set(row["swizzles"]) <= set(swizzles):
            raise TableError(path, f"combination #{i + 1}", "unknown major-ness, element size or swizzle mode")
        combinations.append(Combination(row["major"], tuple(row["bits"]), tuple(row["swizzles"]), row["source"]))

    storage = []
    seen: set[tuple[int, str]] = set()
    for i, raw in enumerate(data.get("storage", [])):
        row = _row(raw, {"bits": int, "per_chunk": int, "pitch": int, "source": str}, {"kinds": list}, path,
                   f"storage #{i + 1}")
        where = f"storage #{i + 1}"
        kinds = tuple(row.get("kinds", ()))
        if row["bits"] not in sizes or not set(kinds) <= set(KINDS):
            raise TableError(path, where, f"unknown element size or kind (kinds: {', '.join(KINDS)})")
        if (row["pitch"] < row["bits"] or row["per_chunk"] * row["pitch"] > 128
                or row["per_chunk"] & (row["per_chunk"] - 1)):
            raise TableError(path, where,
                             "per_chunk must be a power of two and per_chunk * pitch (>= bits) fit 128 bits")
        if any(b == row["bits"] and (not kinds or k is None or k in kinds) for b, k in seen):
            raise TableError(path, where, f"{row['bits']}-bit storage given twice for one kind")
        seen.update((row["bits"], kind) for kind in kinds or (None,))
        storage.append(Storage(row["bits"], kinds, row["per_chunk"], row["pitch"], row["source"]))
    unstored = sorted(sizes - {bits for bits, _ in seen})
    if unstored:
        raise TableError(path, "storage", f"no storage rule for {unstored}-bit elements")
    return Atoms(swizzles, shapes_, tuple(combinations), elements, tuple(storage), source)


# --------------------------------------------------------------------------------------------
# Layouts: one PTX table each (tables/idesc_*.toml, smem_desc.toml...).


#: Named domain providers referenced by ``domain = "..."`` in the layout tables.
def _domain_table39(which: str) -> Any:
    def provide(kind: str) -> frozenset[int]:
        table = shapes()
        return table.m_values(kind) if which == "m" else table.n_values(kind)

    return provide


DOMAINS = {"table39.m": _domain_table39("m"), "table39.n": _domain_table39("n")}


@functools.cache
def layout(name: str) -> Layout:
    """The compiled layout ``name`` (a key of :data:`LAYOUT_FILES`), loaded once."""
    if name not in LAYOUT_FILES:
        raise KeyError(name)
    file = LAYOUT_FILES[name]
    return parse_layout(read_table(file), f"tables/{file}")


def layouts() -> tuple[Layout, ...]:
    """Every descriptor layout."""
    return tuple(layout(name) for name in LAYOUT_FILES)


def check_keys(table: Mapping[str, Any], allowed: set[str], path: str, where: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise TableError(path, where,
                         f"unknown key(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(sorted(allowed))}")


def _parse_bits(spec: Any, width: int, path: str, where: str) -> tuple[int, int]:
    text = str(spec)
    try:
        lo_s, _, hi_s = text.partition("-")
        lo, hi = int(lo_s), int(hi_s or lo_s)
    except ValueError:
        raise TableError(path, where, f"'bits' must look like \"7-9\" or \"2\", got {spec!r}") from None
    if not 0 <= lo <= hi < width:
        raise TableError(path, where, f"bits {text} do not lie within a {width}-bit word")
    return lo, hi


def parse_layout(data: Mapping[str, Any], path: str) -> Layout:
    """Validate and compile one layout table. Raises :class:`TableError` naming file and field."""
    check_keys(data, _LAYOUT_KEYS, path, "file")
    desc = data.get("descriptor")
    if not isinstance(desc, dict):
        raise TableError(path, "descriptor", "missing [descriptor] section")
    check_keys(desc, _DESCRIPTOR_KEYS, path, "descriptor")
    for key in ("word", "layout", "width", "title", "source"):
        if key not in desc:
            raise TableError(path, "descriptor", f"missing key '{key}'")
    width = desc["width"]
    if width not in (32, 64):
        raise TableError(path, "descriptor", f"width must be 32 or 64, got {width!r}")
    kinds = tuple(desc.get("kinds", ()))
    targets = desc.get("targets", [])
    if not isinstance(targets, list) or not all(isinstance(t, str) and t for t in targets):
        raise TableError(path, "descriptor", f"'targets' must be a list of target names, got {targets!r}")
    for k in kinds:
        if k not in KINDS:
            raise TableError(path, "descriptor", f"unknown kind {k!r}; known: {', '.join(KINDS)}")

    fields = tuple(_parse_field(raw, i, width, kinds, path) for i, raw in enumerate(data.get("field", [])))
    _check_tiling(fields, width, path)

    defaults = data.get("defaults", {})
    by_name = {f.name: f for f in fields}
    for kind, values in defaults.items():
        if kind not in kinds:
            raise TableError(path, f"defaults.{kind}", f"kind {kind!r} is not one of this layout's kinds")
        for name, value in values.items():
            f = by_name.get(name)
            if f is None:
                raise TableError(path, f"defaults.{kind}", f"no field named '{name}'")
            if value not in f.domain(kind):
                raise TableError(path, f"defaults.{kind}",
                                 f"'{name}' default {value!r} is not a legal value for {kind}")
    extra = {k: v for k, v in data.items() if k not in ("descriptor", "defaults", "implied", "field")}
    return Layout(
        word=desc["word"],
        name=desc["layout"],
        width=width,
        title=desc["title"],
        source=desc["source"],
        path=path,
        kinds=kinds,
        fields=fields,
        defaults={k: dict(v) for k, v in defaults.items()},
        implied=dict(data.get("implied", {})),
        targets=tuple(targets),
        family=str(desc.get("family", "")),
        extra=extra,
    )


def _check_tiling(fields: tuple[Field, ...], width: int, path: str) -> None:
    names: set[str] = set()
    expected = 0
    for f in fields:
        if f.name in names:
            raise TableError(path, f"field '{f.name}'", "duplicate field name")
        names.add(f.name)
        if f.lo < expected:
            raise TableError(path, f"field '{f.name}'",
                             f"bits {f.bits} overlap the previous field (or are out of bit order)")
        if f.lo > expected:
            raise TableError(path, f"field '{f.name}'", f"gap: {_bits_text(expected, f.lo - 1)} not declared")
        expected = f.hi + 1
    if expected != width:
        raise TableError(path, "fields",
                         f"gap: {_bits_text(expected, width - 1)} not declared (the word has {width} bits)")


def _bits_text(lo: int, hi: int) -> str:
    return f"bit {lo} is" if lo == hi else f"bits {lo}-{hi} are"


def _per_kind(value: Any, kinds: tuple[str, ...], path: str, where: str, key: str) -> dict[str | None, Any]:
    """A table value that is either the same for every kind or a {kind: value} table."""
    if isinstance(value, dict) and value and set(value) <= set(KINDS):
        unknown = set(value) - set(kinds)
        if unknown:
            raise TableError(path, where, f"'{key}' names kinds this layout does not serve: {sorted(unknown)}")
        missing = set(kinds) - set(value)
        if missing:
            raise TableError(path, where, f"'{key}' is per kind but lacks {sorted(missing)}")
        return dict(value)
    return {None: value}


def _parse_field(raw: Mapping[str, Any], index: int, width: int, kinds: tuple[str, ...], path: str) -> Field:
    name = raw.get("name")
    where = f"field '{name}'" if name else f"field #{index + 1}"
    if not isinstance(name, str) or not name.isidentifier():
        raise TableError(path, where, f"'name' must be an identifier, got {name!r}")
    check_keys(raw, _FIELD_KEYS, path, where)
    for key in ("bits", "type", "description", "source"):
        if not raw.get(key) and raw.get(key) != 0:
            raise TableError(path, where, f"missing '{key}' (every field cites its PTX source)")
    ftype = raw["type"]
    if ftype not in FIELD_TYPES:
        raise TableError(path, where, f"type {ftype!r} is not one of {', '.join(FIELD_TYPES)}")
    lo, hi = _parse_bits(raw["bits"], width, path, where)
    fmask = (1 << (hi - lo + 1)) - 1
    tname = raw.get("transform", "identity")
    if tname not in TRANSFORMS:
        raise TableError(path, where, f"unknown transform {tname!r}; registry: {', '.join(TRANSFORMS)}")
    transform = TRANSFORMS[tname]
    severity = raw.get("severity", "error")
    if severity not in _SEVERITIES:
        raise TableError(path, where, f"severity {severity!r} is not one of {', '.join(_SEVERITIES)}")
    if ftype != "uint" and tname != "identity":
        raise TableError(path, where, "only 'uint' fields take a transform")
    allowed_by_type = {
        "uint": {"transform", "unit", "min", "max", "values", "domain"},
        "flag": {"values"},
        "enum": {"members", "value_type", "unit"},
        "reserved": set(),
        "constant": {"value"},
    }[ftype]
    extra = (set(raw) - {"name", "bits", "type", "description", "source", "severity", "note", "default"}
             - allowed_by_type)
    if extra:
        raise TableError(path, where, f"key(s) {sorted(extra)} do not apply to a '{ftype}' field")

    members: dict[str | None, dict[Any, int]] = {}
    attrs: dict[Any, dict[str, Any]] = {}
    domains: dict[str | None, Domain] = {}
    const = 0
    if ftype == "enum":
        if "members" not in raw:
            raise TableError(path, where, "an enum needs 'members'")
        as_int = raw.get("value_type") == "int"
        if raw.get("value_type") not in (None, "int"):
            raise TableError(path, where, "value_type must be \"int\" when given")
        for kind, table in _per_kind(raw["members"], kinds, path, where, "members").items():
            codes: dict[Any, int] = {}
            for mname, spec in table.items():
                code = spec.get("code") if isinstance(spec, dict) else spec
                if isinstance(spec, dict):
                    attrs[int(mname) if as_int else mname] = {k: v for k, v in spec.items() if k != "code"}
                if not isinstance(code, int) or isinstance(code, bool) or not 0 <= code <= fmask:
                    raise TableError(path, where, f"member {mname!r}: code {code!r} does not fit {hi - lo + 1} bit(s)")
                if code in codes.values():
                    raise TableError(path, where, f"member {mname!r}: code {code} is used twice")
                codes[int(mname) if as_int else mname] = code
            members[kind] = codes
            domains[kind] = Domain(frozenset(codes), ordered=tuple(sorted(codes, key=codes.__getitem__)))
    elif ftype == "flag":
        for kind, vals in _per_kind(raw.get("values", [False, True]), kinds, path, where, "values").items():
            if not vals or not all(isinstance(v, bool) for v in vals):
                raise TableError(path, where, "a flag's 'values' must be true/false")
            domains[kind] = Domain(frozenset(vals))
    elif ftype == "uint":
        top = transform.decode(fmask)
        if transform.limit is not None:
            top = min(top, transform.limit)
            top -= top % transform.align
        lo_v = raw.get("min", transform.decode(0))
        hi_v = raw.get("max", top)
        if not (isinstance(lo_v, int) and isinstance(hi_v, int)) or lo_v > hi_v:
            raise TableError(path, where, f"min/max {lo_v!r}/{hi_v!r} are not an integer range")
        if any(not 0 <= transform.encode(v) <= fmask or transform.decode(transform.encode(v)) != v
               for v in (lo_v, hi_v)):
            raise TableError(path, where,
                             f"range {lo_v}..{hi_v} does not fit {hi - lo + 1} bit(s) after {transform.formula}")
        base = Domain(None, lo_v, hi_v, transform.align)
        if "domain" in raw and "values" in raw:
            raise TableError(path, where, "give 'domain' or 'values', not both")
        if "domain" in raw:
            provider = DOMAINS.get(raw["domain"])
            if provider is None:
                raise TableError(path, where, f"unknown domain {raw['domain']!r}; registry: {', '.join(DOMAINS)}")
            if not kinds:
                raise TableError(path, where, "a named domain needs the layout's kinds")
            for kind in kinds:
                vals = provider(kind)
                _check_fits(vals, base, path, where)
                domains[kind] = Domain(frozenset(vals))
        elif "values" in raw:
            for kind, vals in _per_kind(raw["values"], kinds, path, where, "values").items():
                _check_fits(vals, base, path, where)
                domains[kind] = Domain(frozenset(vals))
        else:
            domains[None] = base
    elif ftype == "constant":
        given = raw.get("value")
        if not isinstance(given, int) or not 0 <= given <= fmask:
            raise TableError(path, where, f"constant value {given!r} does not fit {hi - lo + 1} bit(s)")
        const = given
        domains[None] = Domain(frozenset({const}))
    else:  # reserved
        domains[None] = Domain(frozenset({0}))
    return Field(
        name=name,
        lo=lo,
        hi=hi,
        type=ftype,
        description=raw["description"],
        source=raw["source"],
        unit=raw.get("unit", ""),
        transform=transform,
        members=members,
        member_attrs=attrs,
        domains=domains,
        const=const,
        severity=severity,
        note=raw.get("note", ""),
        default=_check_default(raw.get("default"), ftype, domains, path, where),
    )


def _check_default(value: Any, ftype: str, domains: Mapping[str | None, Domain], path: str, where: str) -> Any:
    if value is None:
        return None
    if ftype in ("reserved", "constant"):
        raise TableError(path, where, "a reserved or constant field takes no 'default'")
    bad = [kind for kind, dom in domains.items() if value not in dom]
    if bad:
        raise TableError(path, where, f"default {value!r} is not a legal value (for {bad})")
    return value


def _check_fits(vals: Iterable[Any], base: Domain, path: str, where: str) -> None:
    bad = sorted(v for v in vals if v not in base)
    if bad:
        raise TableError(path, where, f"values {bad} do not fit the field (allowed {base.describe()})")
