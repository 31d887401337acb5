"""The rule language: a catalog rule's predicate, finding and message, written once as data.

Each ``[[rule]]`` of ``tables/rules.toml`` that a word or instruction is checked by carries its
checks (``[[rule.check]]``), each a few expressions in a small language with Python's syntax.
This module parses and checks them (the front end), says which facts each reads (the rules' read
sets, e.g. what the idesc memo keys on), and compiles them to Python (the reference back end: the
checks :mod:`descgen.rules.checks` runs). ``descgen.backends.cpp_rules`` compiles the same expressions
to C++ for the header; a PTX back end compiles them the same way.

A check::

    [[rule.check]]
    when = "m not in ZCM_MS"              # the finding is reported when this holds
    field = "m"                           # the field it names (a template: "{op}_desc.sbo")
    value = "m"                           # the value it reports (an expression)
    allowed = "{join(ZCM_MS)}"            # the allowed values, as text (a template; Python only)
    detail = "M = {m}"                    # what was found, after the rule sentence (a template)

A rule may also give ``let`` (names for sub-expressions, substituted where used) and ``operands =
["a", "b"]`` (the checks run once per operand that is there: :data:`OPERAND_NAMES`).

The expressions (Python syntax, a subset):

* a lower-case name is a fact: a field of the word (its logical value), a context name, a derived
  fact (``k``, the MMA's K) or a ``let`` name; ``desc.lbo`` and ``idesc.m`` read an operand's
  descriptor or the instruction descriptor;
* an upper-case name is a table (:mod:`descgen.rules.tables`): ``T[a, b]`` is its entry for the
  key (None when it has none), ``x in T[a, b]`` membership in a set-valued entry, ``(a, b) in T``
  whether it has the key, ``x in T`` membership in a set-valued table without a key;
* literals: integers, strings (enum members: ``"mn"``, ``"128B"``, ``"sm_100a"``), ``True``,
  ``False``, ``None``; a tuple of literals after ``in``;
* ``and``, ``or``, ``not``, ``x if c else y``; ``== != < <= > >=``, ``is None``, ``is not None``,
  ``in``, ``not in``; ``+ - * // % >> << & |``; ``min``, ``max``, ``ceil_div``, ``known(x)``.

Values are integers, booleans, enum members or None (absent: a field the kind's layout lacks, a
context name not given). Every back end keeps these semantics: ``not x`` and a bare ``x`` in
``and``/``or`` test truth (None, False and 0 are false); ``==`` and ``in`` with None are false
unless the other side is None; ordering and arithmetic need known operands (a rule guards them).
A fact known at run time only (a partly known word) stops the check where it is read: the rule is
then "not checked" (``known(x)`` reads it as None instead).

Templates (``field``, ``allowed``, ``detail``) are text with ``{expression}`` or
``{expression:format}`` parts; they may also call the text helpers of :data:`TEXT_FUNCTIONS`
(``join``, ``describe_ints``...). Only Python renders them.

Raises :class:`descgen.TableError` (through :func:`parse`) for anything outside the language.
"""

from __future__ import annotations

import ast
import copy
import functools
import string
from typing import Any, Callable, Iterable, Mapping, NamedTuple

from ..core.errors import TableError

__all__ = ["Check", "RuleChecks", "parse_expr", "parse_template", "parse_checks", "reads", "tables_read",
           "python_source", "python_expression", "compile_python", "FUNCTIONS", "TEXT_FUNCTIONS", "OPERAND_NAMES",
           "OPERAND_PRELUDE",
           "LANGUAGE_NODES"]

#: Functions every back end knows (name -> arity).
FUNCTIONS: dict[str, int] = {"min": 2, "max": 2, "ceil_div": 2, "known": 1}
#: Functions of templates only (Python renders messages; descgen.rules.tables.text_functions).
TEXT_FUNCTIONS = ("join", "describe_ints", "upper", "text", "shape_where", "shape_rows_text", "t50_text")
#: Per-operand rules (``operands = ["a", "b"]``): each check runs once per operand ``op`` whose
#: descriptor is there (``a_desc``/``b_desc``), with ``op`` and ``OP`` its letter, ``desc`` its
#: descriptor (``desc.sbo``), and the names here (expressions of the language, ``{op}`` and
#: ``{mn}``, M for A and N for B, filled in), per what the rule applies to.
OPERAND_NAMES: dict[str, dict[str, str]] = {
    "mma": {"type": "idesc.{op}type", "major": "idesc.{op}_major", "extent": "idesc.{mn}"},
    "wgmma": {"type": "{op}type", "trans": "trans_{op}", "major": "'mn' if trans_{op} == 1 else 'k'"},
}
#: What each operand's checks read first (the operand's type and major-ness, or transpose): a
#: value known at run time only there stops all of the operand's checks.
OPERAND_PRELUDE: dict[str, tuple[str, ...]] = {"mma": ("type", "major"), "wgmma": ("type", "trans")}
#: The syntax the language allows (anything else in an expression is a TableError).
LANGUAGE_NODES = (ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.BinOp, ast.Add,
                  ast.Sub,
                  ast.Mult, ast.FloorDiv, ast.Mod, ast.RShift, ast.LShift, ast.BitAnd, ast.BitOr, ast.Compare, ast.Eq,
                  ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.Is, ast.IsNot, ast.IfExp,
                  ast.Name, ast.Load, ast.Constant, ast.Tuple, ast.Subscript, ast.Attribute, ast.Call)


#: The names whose fields ``name.FIELD`` reads (an instruction's words).
_WORD_NAMES = ("desc", "idesc", "a_desc", "b_desc")


class Check(NamedTuple):
    """One ``[[rule.check]]``: when it fires, the field it names, the value it reports and the
    message's two templates (parsed; ``let`` names already substituted)."""

    operand: str | None
    prelude: tuple[ast.expr, ...]
    when: ast.expr
    field: tuple[tuple[str, ast.expr | None, str], ...]
    value: ast.expr
    allowed: tuple[tuple[str, ast.expr | None, str], ...]
    detail: tuple[tuple[str, ast.expr | None, str], ...]


class RuleChecks(NamedTuple):
    """A rule's checks, in order (a per-operand rule's expanded: A's, then B's)."""

    code: str
    applies: str
    checks: tuple[Check, ...]


def _fail(code: str, what: str, text: str, why: str) -> TableError:
    return TableError("tables/rules.toml", f"rule {code}, {what}", f"{text!r}: {why}")


def _why_not(tree: ast.AST, templates: bool) -> str | None:
    """Why ``tree`` is not an expression of the language, or None."""
    for node in ast.walk(tree):
        if not isinstance(node, LANGUAGE_NODES):
            return f"{type(node).__name__} is not part of the rule language"
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, str, bool, type(None))):
            return f"the literal {node.value!r} is not an integer, string, boolean or None"
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else None
            known = name in FUNCTIONS or (templates and name in TEXT_FUNCTIONS)
            if not known or node.keywords:
                return (f"{ast.unparse(node.func)}() is not a function of the rule language "
                        f"({', '.join(FUNCTIONS)}{'; in templates ' + ', '.join(TEXT_FUNCTIONS) if templates else ''})")
            if name in FUNCTIONS and len(node.args) != FUNCTIONS[name]:
                return f"{name}() takes {FUNCTIONS[name]} arguments"
        if isinstance(node, ast.Attribute) and not (isinstance(node.value, ast.Name) and node.value.id in _WORD_NAMES):
            return f"only {', '.join(n + '.FIELD' for n in _WORD_NAMES)} read a word's field"
        if isinstance(node, ast.Subscript) and not (isinstance(node.value, ast.Name) and node.value.id.isupper()):
            return "only a table (an upper-case name) is indexed"
        if isinstance(node, ast.Compare) and len(node.ops) != 1:
            return "one comparison at a time (write a < b and b < c)"
        if isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.Is, ast.IsNot)):
            if not (isinstance(node.comparators[0], ast.Constant) and node.comparators[0].value is None):
                return "'is' and 'is not' compare with None only"
    return None


def parse_expr(text: str, code: str, what: str, let: Mapping[str, ast.expr] | None = None,
               templates: bool = False) -> ast.expr:
    """One expression of rule ``code`` (``what``: where it is, for the error), parsed and checked,
    with the ``let`` names substituted.

    Raises:
        TableError: a syntax error, or syntax outside the language."""
    tree = _parsed(text, templates)
    if isinstance(tree, str):
        raise _fail(code, what, text, tree)
    return _substitute(tree, let) if let else tree


@functools.lru_cache(maxsize=4096)
def _parsed(text: str, templates: bool) -> ast.expr | str:
    """An expression parsed and checked once per text (the trees are shared, never changed), or
    why it is not one of the language."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        return f"not an expression ({e.msg})"
    return _why_not(tree, templates) or tree.body


def _substitute(tree: ast.expr, names: Mapping[str, ast.expr]) -> ast.expr:
    """``tree`` with the names of ``names`` replaced by their expressions: new nodes only where
    something changed, the rest shared (the trees are never changed once parsed)."""
    if isinstance(tree, ast.Name):
        return names.get(tree.id, tree)
    out = _rebuilt(tree, names)
    assert isinstance(out, ast.expr)
    return out


def _rebuilt(node: ast.AST, names: Mapping[str, ast.expr]) -> ast.AST:
    changed: dict[str, Any] = {}
    for field, value in ast.iter_fields(node):
        if isinstance(value, ast.expr):
            new = _substitute(value, names)
            if new is not value:
                changed[field] = new
        elif isinstance(value, list) and any(isinstance(v, ast.expr) for v in value):
            items = [_substitute(v, names) if isinstance(v, ast.expr) else v for v in value]
            if any(a is not b for a, b in zip(items, value)):
                changed[field] = items
    if not changed:
        return node
    copied = copy.copy(node)
    for field, value in changed.items():
        setattr(copied, field, value)
    return copied


def parse_template(text: str, code: str, what: str,
                   let: Mapping[str, ast.expr]) -> tuple[tuple[str, ast.expr | None, str], ...]:
    """A template (``"M = {m} with {where}"``): (literal text, expression or None, format spec) parts.

    Raises:
        TableError: a bad ``{...}`` part or expression."""
    out = []
    try:
        parts = list(string.Formatter().parse(text))
    except ValueError as e:
        raise _fail(code, what, text, str(e)) from None
    for literal, expr, spec, conv in parts:
        if conv:
            raise _fail(code, what, text, "no !conversions in templates")
        tree = parse_expr(expr, code, what, let, templates=True) if expr is not None else None
        out.append((literal, tree, spec or ""))
    return tuple(out)


_CHECK_KEYS = {"when", "field", "value", "allowed", "detail"}


def parse_checks(row: Mapping[str, Any], derive: Mapping[str, str] = {}) -> RuleChecks:
    """A ``[[rule]]`` row's ``let``, ``operands`` and ``[[rule.check]]`` entries, parsed, with the
    names ``derive`` defines for every rule of its word (``[derive.<applies>]``) and the rule's own
    ``let`` substituted, and a per-operand rule's checks expanded per operand.

    Raises:
        TableError: a missing or unknown key, or an expression outside the language."""
    code, applies = row["code"], row["applies"]
    let: dict[str, ast.expr] = {}
    for name, text in (*derive.items(), *row.get("let", {}).items()):
        if not name.islower():
            raise _fail(code, "let name", name, "let names are lower case (upper case names tables)")
        let[name] = parse_expr(text, code, f"let {name}", let, templates=True)
    operands = tuple(row.get("operands", ()))
    if operands and applies not in OPERAND_NAMES:
        raise _fail(code, "operands", str(operands), f"only {', '.join(OPERAND_NAMES)} rules run per operand")
    entries = []
    for i, entry in enumerate(row.get("check", ())):
        where = f"check #{i + 1}"
        missing, extra = _CHECK_KEYS - set(entry), set(entry) - _CHECK_KEYS
        if missing or extra:
            raise _fail(code, where, str(sorted(entry)), f"a check has keys {', '.join(sorted(_CHECK_KEYS))}")
        entries.append((where, entry))
    checks = []
    for op in operands or (None,):
        names = dict(let)
        prelude: tuple[ast.expr, ...] = ()
        if op is not None:
            own = {"desc": ast.Name(f"{op}_desc", ast.Load()), "op": ast.Constant(op), "OP": ast.Constant(op.upper())}
            for name, spec in OPERAND_NAMES[applies].items():
                own[name] = parse_expr(spec.format(op=op, mn="m" if op == "a" else "n"), code, f"operand name {name}")
            names = {n: _substitute(t, own) for n, t in let.items()} | own
            prelude = tuple(own[n] for n in OPERAND_PRELUDE[applies])
        for where, entry in entries:
            checks.append(Check(op, prelude, parse_expr(entry["when"], code, f"{where} when", names),
                                parse_template(entry["field"], code, f"{where} field", names),
                                parse_expr(entry["value"], code, f"{where} value", names),
                                parse_template(entry["allowed"], code, f"{where} allowed", names),
                                parse_template(entry["detail"], code, f"{where} detail", names)))
    return RuleChecks(code, applies, tuple(checks))


def _names(trees: Iterable[ast.AST | None]) -> tuple[set[str], set[str], set[tuple[str, str]]]:
    """(facts, tables, (word, field) attributes) the trees read."""
    facts: set[str] = set()
    tables: set[str] = set()
    attrs: set[tuple[str, str]] = set()
    for tree in trees:
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                attrs.add((node.value.id, node.attr))
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                if node.id.isupper():
                    tables.add(node.id)
                elif node.id not in FUNCTIONS and node.id not in TEXT_FUNCTIONS and node.id not in _WORD_NAMES:
                    facts.add(node.id)
    return facts, tables, attrs


def _trees(checks: Iterable[Check], messages: bool) -> list[ast.AST | None]:
    out: list[ast.AST | None] = []
    for c in checks:
        out += [*c.prelude, c.when, c.value, *(t for _, t, _ in c.field)]
        if messages:
            out += [t for part in (c.allowed, c.detail) for _, t, _ in part]
    return out


def reads(rule: RuleChecks, operand: str | None = None,
          messages: bool = True) -> tuple[frozenset[str], frozenset[tuple[str, str]]]:
    """The facts a rule's checks read (its findings are a function of these, the tables and the
    catalog), and the word fields (``("a_desc", "sbo")``, ``("idesc", "m")``); ``operand``: only
    that operand's checks (and the rule's others). ``messages=False``: only what decides whether
    and what it reports (the C++ back end's view)."""
    checks = [c for c in rule.checks if operand is None or c.operand in (None, operand)]
    facts, _, attrs = _names(_trees(checks, messages))
    return frozenset(facts), frozenset(attrs)


def tables_read(rule: RuleChecks, messages: bool = True) -> frozenset[str]:
    """The tables a rule's checks read."""
    return frozenset(_names(_trees(rule.checks, messages))[1])


# -- the Python back end ------------------------------------------------------------------------


_PY_OPS: dict[type, str] = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%",
                            ast.RShift: ">>", ast.LShift: "<<", ast.BitAnd: "&", ast.BitOr: "|", ast.Eq: "==",
                            ast.NotEq: "!=", ast.Lt: "<",
                            ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.In: "in", ast.NotIn: "not in", ast.Is: "is",
                            ast.IsNot: "is not"}


def python_expression(tree: ast.expr) -> str:
    """One expression of the language as Python source over ``v`` (the facts, ``v.get(name)``: a
    fact known at run time only raises there) and ``T`` (the tables, each a function of its key),
    with the language's semantics."""
    return _PythonWriter().expression(tree)


class _PythonWriter:
    """Writes expressions as Python, each table lookup once where it is sure to have been made:
    a lookup's first evaluation binds it (``(_t0 := T['X'](k))``), and a later one that runs only
    after it (further along an ``and``/``or`` chain, after an ``if``'s test, in the message of a
    check that fired, in a later check) reads the name. (A let or derived name is substituted
    into every check that reads it; this is what makes it cost one lookup.) What a branch binds
    is forgotten after the branch."""

    def __init__(self) -> None:
        self.bound: dict[str, str] = {}
        self.names = 0

    def expression(self, node: ast.expr) -> str:
        if isinstance(node, ast.Constant):
            return repr(node.value)
        if isinstance(node, ast.Name) and not node.id.isupper():
            return f"v.get({node.id!r})"
        if isinstance(node, ast.Attribute):
            assert isinstance(node.value, ast.Name)
            return f"v.get({node.value.id!r}).get({node.attr!r})"
        if isinstance(node, (ast.Name, ast.Subscript)):  # a table's entry
            return self._lookup(node)
        if isinstance(node, ast.Tuple):
            return "(" + "".join(self.expression(e) + ", " for e in node.elts) + ")"
        if isinstance(node, ast.BoolOp):
            first = self.expression(node.values[0])
            rest = self._branch(node.values[1:])
            return "(" + (" and " if isinstance(node.op, ast.And) else " or ").join([first, *rest]) + ")"
        if isinstance(node, ast.UnaryOp):
            return f"({'not ' if isinstance(node.op, ast.Not) else '-'}{self.expression(node.operand)})"
        if isinstance(node, ast.BinOp):
            return f"({self.expression(node.left)} {_PY_OPS[type(node.op)]} {self.expression(node.right)})"
        if isinstance(node, ast.IfExp):
            test = self.expression(node.test)
            (body,), (orelse,) = self._branch([node.body]), self._branch([node.orelse])
            return f"({body} if {test} else {orelse})"
        if isinstance(node, ast.Compare):
            op, right = node.ops[0], node.comparators[0]
            if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, ast.Name) and right.id.isupper() \
                    and isinstance(node.left, ast.Tuple):  # (a, b) in T: T has an entry for the key
                return f"(T[{right.id!r}]({self._key(node.left)}) {'is not' if isinstance(op, ast.In) else 'is'} None)"
            left = self.expression(node.left)
            rhs = self.expression(right)
            if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.Subscript, ast.Name)):
                rhs = f"({rhs} or ())"  # (no entry: the empty set)
            return f"({left} {_PY_OPS[type(op)]} {rhs})"
        if isinstance(node, ast.Call):
            assert isinstance(node.func, ast.Name)
            if node.func.id == "known":  # known(x): x, or None where it is known at run time only
                return f"_known(lambda: {_PythonWriter().expression(node.args[0])})"  # (a lambda binds its own)
            args = ", ".join(map(self.expression, node.args))
            return f"{node.func.id if node.func.id in TEXT_FUNCTIONS else '_f_' + node.func.id}({args})"
        raise TypeError(f"{ast.dump(node)} is not part of the rule language")

    def _lookup(self, node: ast.Name | ast.Subscript) -> str:
        key = ast.dump(node)
        if key in self.bound:
            return self.bound[key]
        if isinstance(node, ast.Name):
            text = f"T[{node.id!r}]()"
        else:
            assert isinstance(node.value, ast.Name)
            text = f"T[{node.value.id!r}]({self._key(node.slice)})"
        name = self.bound[key] = f"_t{self.names}"
        self.names += 1
        return f"({name} := {text})"

    def _branch(self, nodes: Iterable[ast.expr]) -> list[str]:
        """``nodes`` written in turn as code that may not run: each may read what the one before
        bound, and nothing they bind is read after them."""
        before = dict(self.bound)
        out = [self.expression(n) for n in nodes]
        self.bound = before
        return out

    def _key(self, node: ast.expr) -> str:
        return ", ".join(map(self.expression, node.elts if isinstance(node, ast.Tuple) else [node]))

    def template(self, parts: tuple[tuple[str, ast.expr | None, str], ...]) -> str:
        pieces = []
        for literal, tree, spec in parts:
            if literal:
                pieces.append(repr(literal))
            if tree is not None:
                pieces.append(f"format({self.expression(tree)}, {spec!r})")
        return " + ".join(pieces) if pieces else "''"


def python_source(rule: RuleChecks) -> str:
    """The Python function (source) that runs ``rule``'s checks: ``check(rule, v, c)`` -> a list
    of findings, ``v`` the facts (values, context, derived facts; an instruction's words under
    ``idesc``/``a_desc``/``b_desc``), ``c`` the constraints (unused: the tables are ``T``). Its free
    names are the namespace :func:`compile_python` is given (``T``, ``_f_min``, ``_known``, the
    text functions). Each table lookup is made once where it is sure to run (:class:`_PythonWriter`)."""
    body: list[str] = []
    operand = None
    w = _PythonWriter()
    outer = w.bound
    for c in rule.checks:
        if c.operand != operand:
            operand = c.operand
            w.bound = dict(outer)  # (an operand's block may not run)
            if operand is not None:
                body.append(f"    if v.get({operand + '_desc'!r}) is not None:")
                body += [f"        {w.expression(p)}" for p in c.prelude]
        ind = "        " if operand is not None else "    "
        body.append(f"{ind}if {w.expression(c.when)}:")
        after_when = dict(w.bound)
        body.append(f"{ind}    out.append(rule.finding({w.template(c.field)}, {w.expression(c.value)}, "
                    f"{w.template(c.allowed)}, {w.template(c.detail)}))")
        w.bound = after_when  # (the message runs only when the check fires)
    return "def check(rule, v, c):\n    out = []\n" + "\n".join(body) + "\n    return out\n"


def compile_python(rule: RuleChecks, namespace: Mapping[str, Any]) -> Callable[..., list[Any]]:
    """:func:`python_source` compiled in ``namespace`` (the names it uses)."""
    scope = dict(namespace)
    exec(compile(python_source(rule), f"<rule {rule.code}>", "exec"), scope)
    fn: Callable[..., list[Any]] = scope["check"]
    return fn
