"""The rule language's C++ back end: each catalog rule's checks, and the tables they read, as C++.

:mod:`descgen.rules.language` parses a rule's ``[[rule.check]]`` entries; this module compiles
what decides a finding (``when``, the field it names, the value) to C++ expressions over the
header's decoded values and context, and writes each table a check reads
(:mod:`descgen.rules.tables`) as data: its entries, found by evaluating the table's function
over the product of its key domains, as a sorted array of (key, value) searched by key. The
messages (``allowed``, ``detail``) are Python's: the header reports a code, a field and a value.

Values in C++ are ``long long``: an enum member is its name id (``name::``), a kind its ``Kind``,
a scale vector size its ``ScaleVec``, a target its ``Arch``, a flag 0 or 1, and None (a field the
layout lacks, a context name not given, no table entry) -1. The language's semantics hold: a
bare value is true when above 0 (None, false and 0 are false); ``x in T[key]`` and ``(key) in T``
are false where the table has no entry.
"""

from __future__ import annotations

import ast
import itertools
from typing import Any, Callable, Iterable, Mapping, NamedTuple

from ..model.catalog import SCALE_VECS, catalog, constraints, contexts
from ..rules.checks import declared
from .emitters import comment
from ..model.loader import KINDS, layout
from ..rules.language import TEXT_FUNCTIONS, Check, tables_read
from ..rules.tables import OPEN_DOMAINS, TABLES, Table, domain

__all__ = ["HEADER_WORDS", "Scope", "scopes", "condition", "rule_functions", "table_data", "tables_of"]

#: The words whose rules the header checks, and the instruction (``mma``), in the header's order.
HEADER_WORDS = ("idesc", "smem", "zcm", "mma", "taddr")


class Scope(NamedTuple):
    """How one word's rule function reads a fact: the C++ expression and the fact's domain (how a
    literal compared with it is written: ``name``, ``kind``, ``scale_vec``, ``arch``, ``int``)."""

    read: Callable[[str, str | None], tuple[str, str]]
    signature: str
    role: str


def _literal(value: Any, dom: str, names: Mapping[str, int]) -> str:
    """A Python literal as C++ in domain ``dom`` (a name with its text as a comment)."""
    if value is None:
        return "NONE"
    if not isinstance(value, str):
        return str(_code(value, dom, names))
    if _KEY_LITERAL_DOMAIN.get(dom, "name") == "name" and value not in names:
        raise ValueError(f"the literal {value!r} is no name of the header's tables (domain {dom})")
    return f"{_code(value, dom, names)} /* {value} */"


#: A key or entry domain's C++ code for a value (and the domain literals of it are written in).
_KEY_LITERAL_DOMAIN = {"kind": "kind", "scale_vec": "scale_vec", "arch": "arch", "feature": "feature", "type": "name",
                       "major": "name", "swizzle": "name", "wgmma_type": "name", "name": "name"}


def _code(value: Any, dom: str, names: Mapping[str, int]) -> int:
    """A table key or entry value's C++ integer (its domain says how a name is numbered)."""
    if value is None:
        return -1
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    text = str(value)
    lit = _KEY_LITERAL_DOMAIN.get(dom, "name")
    if lit == "kind":
        return KINDS.index(text)
    if lit == "scale_vec":
        return SCALE_VECS.index(text)
    if lit == "arch":
        return constraints().targets.index(text)
    if lit == "feature":
        return tuple(constraints().requires).index(text)
    if dom == "smem_layout":
        return 0
    return names[text]


def _entry_domain(t: Table) -> str:
    """The domain of a table's entries (a set's elements)."""
    dom = t.value.split(":", 1)[1] if t.value.startswith("set:") else t.value
    return _KEY_LITERAL_DOMAIN.get(dom, "int") if dom not in ("int", "bool") else "int"


class _TableData(NamedTuple):
    """A table written out: its key domains' C++ codes, and its entries (key index -> C++ value; a
    set's value is a mask over ``elements``)."""

    keys: tuple[tuple[int, ...], ...]
    elements: tuple[int, ...]
    entries: tuple[tuple[int, int], ...]


def _written(t: Table, names: Mapping[str, int]) -> _TableData:
    if set(t.keys) & OPEN_DOMAINS:
        raise ValueError(f"table {t.name} is keyed by an open domain: it has no C++ form")
    doms = [domain(d) for d in t.keys]
    keys = tuple(tuple(_code(v, d, names) for v in values) for values, d in zip(doms, t.keys))
    found: list[tuple[int, Any]] = []
    for index, key in enumerate(itertools.product(*doms)):
        value = t.fn(*key)
        if value is not None:
            found.append((index, value))
    elements: tuple[int, ...] = ()
    if t.value.startswith("set:"):
        dom = _entry_domain(t)
        elements = tuple(sorted({_code(x, dom, names) for _, value in found for x in value}))
        if len(elements) > 64:
            raise ValueError(f"table {t.name}: more than 64 values in its sets")
        entries = tuple((i, sum(1 << elements.index(_code(x, dom, names)) for x in value)) for i, value in found)
    else:
        entries = tuple((i, _code(value, _entry_domain(t), names)) for i, value in found)
    return _TableData(keys, elements, entries)


def table_data(used: Iterable[str], names: Mapping[str, int]) -> str:
    """The tables ``used`` as C++: per table its key domains (``T_<NAME>_K<i>``: the C++ codes of
    the domain's values), its set elements (``T_<NAME>_E``) and its entries sorted by key index
    (``T_<NAME>``), and a ``t_<name>(...)`` lookup."""
    out = []
    for name in sorted(used):
        t = TABLES[name]
        data = _written(t, names)
        low = name.lower()
        doc = " ".join((t.fn.__doc__ or "").split())
        out.append("\n".join(comment([f"{name} ({t.source}): {doc}"], "cpp")) + "\n")
        for i, codes in enumerate(data.keys):
            out.append(f"DESCGEN_TABLE long long T_{name}_K{i}[{len(codes)}] = {{{', '.join(map(str, codes))}}};\n")
        if data.elements:
            out.append(f"DESCGEN_TABLE long long T_{name}_E[{len(data.elements)}] = "
                       f"{{{', '.join(map(str, data.elements))}}};\n")
        rows = [f"{{{i}u, {v}ll}}" for i, v in data.entries] or ["{0xffffffffu, 0ll}"]
        body = ",\n    ".join(", ".join(rows[j:j + 6]) for j in range(0, len(rows), 6))
        out.append(f"DESCGEN_TABLE TableEntry T_{name}[{len(rows)}] = {{\n    {body}}};\n")
        params = ", ".join(f"long long k{i}" for i in range(len(data.keys)))
        index = "0"
        for i, codes in enumerate(data.keys):
            index = f"index_in({index}, T_{name}_K{i}, {len(codes)}, k{i})"
        out.append(f"DESCGEN_HD inline const TableEntry* t_{low}({params}) {{ "
                   f"return find_entry(T_{name}, {len(data.entries)}, {index}); }}\n")
    return "".join(out)


class _ToCpp:
    """One expression of a check, as C++ (``scope`` reads the facts)."""

    def __init__(self, scope: Scope, names: Mapping[str, int]) -> None:
        self.scope = scope
        self.names = names

    def truth(self, node: ast.expr) -> str:
        code, dom = self.value(node)
        return code if dom == "bool!" else f"({code} > 0)"

    def value(self, node: ast.expr, hint: str | None = None) -> tuple[str, str]:
        """(C++, domain); domain ``bool!`` for a 0/1 that needs no truth test."""
        if isinstance(node, ast.Constant):
            return _literal(node.value, hint or "name", self.names), hint or "int"
        if isinstance(node, ast.Name):
            if node.id.isupper():
                t = TABLES[node.id]
                if t.keys:
                    raise ValueError(f"table {node.id} is read without its key")
                return f"entry_value(t_{node.id.lower()}())", _entry_domain(t)
            return self.scope.read(node.id, None)
        if isinstance(node, ast.Attribute):
            assert isinstance(node.value, ast.Name)
            return self.scope.read(node.attr, node.value.id)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                return f"!{self.truth(node.operand)}", "bool!"
            code, dom = self.value(node.operand)
            return f"(-{code})", dom
        if isinstance(node, ast.BoolOp):
            op = " && " if isinstance(node.op, ast.And) else " || "
            return "(" + op.join(self.truth(v) for v in node.values) + ")", "bool!"
        if isinstance(node, ast.IfExp):
            a, dom = self.value(node.body, hint)
            b, dom_b = self.value(node.orelse, hint if dom == "int" else dom)
            return f"({self.truth(node.test)} ? {a} : {b})", dom if dom != "int" else dom_b
        if isinstance(node, ast.BinOp):
            ops = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "/", ast.Mod: "%", ast.RShift: ">>",
                   ast.LShift: "<<", ast.BitAnd: "&", ast.BitOr: "|"}
            return f"({self.value(node.left)[0]} {ops[type(node.op)]} {self.value(node.right)[0]})", "int"
        if isinstance(node, ast.Call):
            assert isinstance(node.func, ast.Name)
            fn = node.func.id
            if fn in TEXT_FUNCTIONS:
                raise ValueError(f"{fn}() is a text function: it decides nothing the header reports")
            args = [self.value(a)[0] for a in node.args]
            if fn == "known":
                return self.value(node.args[0], hint)
            if fn == "ceil_div":
                return f"ceil_div({args[0]}, {args[1]})", "int"
            return f"{fn}_of({args[0]}, {args[1]})", "int"
        if isinstance(node, ast.Subscript):
            assert isinstance(node.value, ast.Name)
            return f"entry_value({self.lookup(node)})", _entry_domain(TABLES[node.value.id])
        if isinstance(node, ast.Compare):
            return self.compare(node), "bool!"
        raise ValueError(f"{ast.unparse(node)} has no C++ form")

    def key(self, name: str, node: ast.expr) -> str:
        t = TABLES[name]
        parts = node.elts if isinstance(node, ast.Tuple) else [node]
        if len(parts) != len(t.keys):
            raise ValueError(f"table {name} takes {len(t.keys)} key parts, given {len(parts)}")
        return ", ".join(self.value(p, _KEY_LITERAL_DOMAIN.get(d, "int"))[0] for p, d in zip(parts, t.keys))

    def lookup(self, node: ast.Subscript) -> str:
        assert isinstance(node.value, ast.Name)
        return f"t_{node.value.id.lower()}({self.key(node.value.id, node.slice)})"

    def compare(self, node: ast.Compare) -> str:
        op, left, right = node.ops[0], node.left, node.comparators[0]
        if isinstance(op, (ast.Is, ast.IsNot)):
            code = self.value(left)[0]
            return f"({code} {'<' if isinstance(op, ast.Is) else '>='} 0)"
        if isinstance(op, (ast.In, ast.NotIn)):
            neg = "!" if isinstance(op, ast.NotIn) else ""
            if isinstance(right, ast.Name) and right.id.isupper() and isinstance(left, ast.Tuple):
                return f"{neg}(t_{right.id.lower()}({self.key(right.id, left)}) != nullptr)"
            if isinstance(right, ast.Tuple):
                x, dom = self.value(left)
                return f"{neg}(" + " || ".join(f"({x} == {self.value(e, dom)[0]})" for e in right.elts) + ")"
            if isinstance(right, ast.Subscript) or (isinstance(right, ast.Name) and right.id.isupper()):
                table = right.value if isinstance(right, ast.Subscript) else right
                assert isinstance(table, ast.Name)
                name = table.id
                t = TABLES[name]
                x = self.value(left, _KEY_LITERAL_DOMAIN.get(_entry_domain(t), "int"))[0]
                found = self.lookup(right) if isinstance(right, ast.Subscript) else f"t_{name.lower()}()"
                return f"{neg}set_has({found}, T_{name}_E, sizeof(T_{name}_E) / sizeof(long long), {x})"
            raise ValueError(f"{ast.unparse(node)}: 'in' takes a table or a tuple of literals")
        ops = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
        if isinstance(left, ast.Constant) and isinstance(right, ast.Constant):  # ('a' == 'b': an operand's letter)
            same = left.value == right.value
            return "1" if same == isinstance(op, ast.Eq) else "0" if isinstance(op, (ast.Eq, ast.NotEq)) else "?"
        a, dom_a = self.value(left)
        b, dom_b = self.value(right, dom_a if dom_a not in ("int", "bool!") else None)
        if isinstance(left, ast.Constant):
            a = self.value(left, dom_b)[0]
        return f"({a} {ops[type(op)]} {b})"


def condition(tree: ast.expr, scope: Scope, names: Mapping[str, int]) -> str:
    """One expression of the language as a C++ condition (its truth: above 0), ``scope`` reading
    its facts and ``names`` numbering its enum literals."""
    return _ToCpp(scope, names).truth(tree)


def _field(check: Check) -> str:
    """The field a check names, as text (its template's parts are all constants)."""
    out = []
    for literal, tree, spec in check.field:
        out.append(literal)
        if tree is not None:
            if not isinstance(tree, ast.Constant):
                raise ValueError(f"a field name the header reports must be constant: {ast.unparse(tree)}")
            out.append(format(tree.value, spec))
    return "".join(out)


def rule_functions(word: str, scope: Scope, names: Mapping[str, int], code_id: Callable[[str], str]) -> str:
    """The C++ function that runs every catalog rule of ``word`` in catalog order: each check's
    finding when its rule's context is given (``RULE_NEEDS``) and its ``when`` holds."""
    body = []
    compiler = _ToCpp(scope, names)
    for rule in catalog().values():
        if rule.applies != word:
            continue
        checks = declared(rule.code).checks
        body.append("".join(f"    {line}\n" for line in comment([f"{rule.code} ({rule.source})"], "cpp")))
        needs = f"(RULE_NEEDS[static_cast<int>({code_id(rule.code)})] & ~given) == 0"
        body.append(f"    if ({needs}) {{\n")
        operand = None
        for check in checks:
            if check.operand != operand:
                if operand is not None:
                    body.append("        }\n")
                operand = check.operand
                if operand is not None:
                    body.append(f"        if (desc[{'ab'.index(operand)}]) {{\n")
            ind = "            " if operand is not None else "        "
            field = _field(check)
            role = scope.role
            if operand is not None and field.startswith(f"{operand}_desc."):
                field, role = field[len(operand) + 6:], str("ab".index(operand) + 1)
            hint = scope.read(field, None)[1] if field in _fact_names(word) else None
            value = compiler.value(check.value, hint)[0]
            body.append(f"{ind}if ({compiler.truth(check.when)})\n{ind}    add_finding(r, {code_id(rule.code)}, "
                        f"CODE_SEVERITY[static_cast<int>({code_id(rule.code)})], \"{field}\", {value}, {role});\n")
        if operand is not None:
            body.append("        }\n")
        body.append("    }\n")
    return f"{scope.signature} {{\n    const std::uint32_t given = ctx.given();\n" + "".join(body) + "}\n"


def _fact_names(word: str) -> set[str]:
    lay = {"idesc": None, "smem": "smem_desc", "zcm": "zcm_desc", "taddr": "taddr"}.get(word)
    out = set(contexts())
    if lay is not None:
        out |= {f.name for f in layout(lay).fields if f.is_value}
    return out


def tables_of(words: Iterable[str]) -> set[str]:
    """The tables the header's rules of ``words`` read (what decides a finding: not the messages)."""
    return {t for code, rule in catalog().items() if rule.applies in words
            for t in tables_read(declared(code), messages=False)}


def _field_domain(ftype: str) -> str:
    return "name" if ftype == "enum" else "int"


def _context_read(name: str) -> tuple[str, str]:
    kind = contexts()[name].value
    return f"static_cast<long long>(ctx.{name})", {"scale_vec": "scale_vec", "arch": "arch"}.get(kind, "int")


def _layout_fields(*names: str) -> dict[str, str]:
    """Each value field of the layouts and its domain: ``name`` (an enum member's name id),
    ``number`` (an enum whose members are numbers: read through NAME_INT) or ``int``."""
    out: dict[str, str] = {}
    for lay in names:
        for f in layout(lay).fields:
            if f.is_value and f.name not in out:
                members = [n for kind in (None, *KINDS) for n in _members(f, kind)]
                numbers = f.type == "enum" and members and all(isinstance(n, int) and not isinstance(n, bool)
                                                               for n in members)
                out[f.name] = "number" if numbers else _field_domain(f.type)
    return out


def _members(f: Any, kind: str | None) -> list[Any]:
    try:
        return list(f.codes(kind)) if f.type == "enum" else []
    except Exception:  # (a kind the layout is not of)
        return []


def scopes(idesc_layouts: Iterable[str]) -> dict[str, Scope]:
    """How each header word's rule function reads its facts (``idesc_layouts``: every kind's layout)."""
    idesc_fields = _layout_fields(*idesc_layouts)
    words = {"smem": _layout_fields("smem_desc"), "zcm": _layout_fields("zcm_desc"), "taddr": _layout_fields("taddr")}

    def reader(word: str, fields: Mapping[str, str],
               extra: Mapping[str, tuple[str, str]]) -> Callable[[str, str | None], tuple[str, str]]:
        def read(name: str, obj: str | None) -> tuple[str, str]:
            if obj is not None:
                if obj == "idesc":
                    if name == "kind":
                        return "kind", "kind"
                    if idesc_fields[name] == "number":
                        return f"name_int(idesc.get(idesc_slot::{name}))", "int"
                    return f"idesc.get(idesc_slot::{name})", idesc_fields[name]
                role = {"a_desc": 0, "b_desc": 1}[obj]
                return f"desc[{role}]->get(smem_slot::{name})", words["smem"][name]
            if name in extra:
                return extra[name]
            if name in fields:
                if fields[name] == "number":
                    return f"name_int(d.get({word}_slot::{name}))", "int"
                return f"d.get({word}_slot::{name})", fields[name]
            if name in contexts():
                return _context_read(name)
            raise ValueError(f"the {word} rules read {name!r}, which the header's {word} word does not have")
        return read

    idesc_extra = {"kind": ("kind", "kind"), "k": ("k", "int"), "implied_dtype": ("IMPLIED_DTYPE[kind]", "name")}
    head = "DESCGEN_HD DESCGEN_INLINE void"
    return {
        "idesc": Scope(reader("idesc", idesc_fields, idesc_extra),
                       f"{head} idesc_rules(const Values& d, int kind, long long k, const Context& ctx, Report& r)",
                       "0"),
        "smem": Scope(reader("smem", words["smem"], {"layout": ("NONE", "smem_layout")}),
                      f"{head} smem_rules(const Values& d, const Context& ctx, Report& r, int role)", "role"),
        "zcm": Scope(reader("zcm", words["zcm"], {}),
                     f"{head} zcm_rules(const Values& d, const Context& ctx, Report& r, int role)", "role"),
        "taddr": Scope(reader("taddr", words["taddr"], {}),
                       f"{head} taddr_rules(const Values& d, const Context& ctx, Report& r)", "0"),
        "mma": Scope(reader("mma", {}, {}),
                     f"{head} mma_rules(const Values& idesc, int kind, const Values* const desc[2], "
                     "const Context& ctx, Report& r)", "0"),
    }
