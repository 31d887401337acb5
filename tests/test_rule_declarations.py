"""One declaration per rule: every back end's rules come from the ``[[rule.check]]`` entries.

- the Python checks and the C++ header's rule functions are the catalog's rules, in its order,
  compiled from their declarations; no back end holds a rule of its own;
- a rule added to ``tables/rules.toml`` alone (docs/architecture.md's example) reaches Python, the
  C++ header and the examples' tests;
- the two back ends give the language one meaning (None, truth, ``in``, arithmetic), over a grid;
- the tables the C++ header writes out hold every entry: a key outside a table's domains has
  none in Python either;
- an expression outside the language is refused, naming the rule.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import textwrap
import tomllib
from itertools import product
from pathlib import Path
from typing import Any

import pytest

from descgen.rules import checks
from descgen.backends import cpp_header, cpp_rules
from descgen.model.catalog import catalog
from descgen.core.errors import TableError
from descgen.rules import language
from descgen.rules.tables import OPEN_DOMAINS, TABLES, domain

REPO = Path(__file__).resolve().parent.parent
GXX = shutil.which("g++")
needs_gxx = pytest.mark.skipif(GXX is None, reason="g++ is not installed")


def _ident(code: str) -> str:
    return code.replace("-", "_")


def test_python_checks_are_the_catalogs_declared_rules() -> None:
    declared = {code for code, rule in catalog().items() if rule.applies != "ptx"}
    assert checks.implemented() == declared
    for code in declared:  # each compiled from its declaration, every check of it
        assert checks.declared(code).checks
        assert "def check(rule, v, c)" in language.python_source(checks.declared(code))
    source = Path(checks.__file__).read_text()
    # (alloc_findings names its rule)
    assert not [code for code in catalog() if f'"{code}"' in source and code != "TADDR-ALLOC-COLUMNS"]


def test_cpp_rule_functions_are_the_catalogs_rules_in_order() -> None:
    header = cpp_header.header()
    for word in cpp_rules.HEADER_WORDS:
        body = header.split(f" {word}_rules(", 1)[1].split("\n}\n", 1)[0]
        found = list(dict.fromkeys(re.findall(r"add_finding\(r, Code::(\w+),", body)))
        assert found == [_ident(c) for c, r in catalog().items() if r.applies == word], word
    evaluator = (REPO / "descgen" / "backends" / "cpp_header_eval.hpp").read_text()
    written = [code for code in catalog() if _ident(code) in evaluator]
    assert not written, f"hand-written rules in the evaluator: {written}"


def test_derived_read_sets_cover_what_each_rule_names() -> None:
    for code, names in checks.idesc_reads().items():
        facts, _ = language.reads(checks.declared(code))
        assert set(names) == facts and facts
    roles = checks.mma_reads()
    assert {"swizzle", "sbo", "lbo", "lbo_mode", "start_address"} == set(roles["a_desc"][1]) == set(roles["b_desc"][1])
    assert "m" in roles["a_desc"][0] and "n" in roles["b_desc"][0]


# -- a rule added by its declaration alone --------------------------------------------------------


def _example_rule() -> str:
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"```toml\n(.*?)```", text, flags=re.S) if "[[rule.check]]" in b]
    return block


def test_the_documented_example_rule_parses_and_compiles_for_both_back_ends() -> None:
    row = tomllib.loads(_example_rule())["rule"][0]
    parsed = language.parse_checks(row)
    assert [c.when for c in parsed.checks] and "IDESC-M256-CTA-GROUP" == parsed.code


def test_adding_a_rule_touches_only_its_declaration(tmp_path: Path) -> None:
    """A copy of the package whose tables/rules.toml has one more rule (the example of
    docs/architecture.md, after the other idesc rules): validate reports it, its examples hold
    both ways, the C++ header checks it (and compiles, and agrees)."""
    tree = tmp_path / "pkg"
    shutil.copytree(REPO / "descgen", tree / "descgen", symlinks=False,
                    ignore=shutil.ignore_patterns("__pycache__", "cli"))
    rules = tree / "descgen" / "tables" / "rules.toml"
    text = rules.read_text(encoding="utf-8")
    at = text.index("[[rule]]\ncode = \"SMEM-LBO-MODE-SWIZZLE\"")
    rules.write_text(text[:at] + _example_rule() + "\n" + text[at:], encoding="utf-8")
    script = textwrap.dedent("""
        import descgen
        from descgen.backends import cpp_header
        from descgen.examples import example, examples_for
        legal, illegal = examples_for("IDESC-M256-CTA-GROUP")
        assert "IDESC-M256-CTA-GROUP" in example(illegal).outcome().codes
        assert "IDESC-M256-CTA-GROUP" not in example(legal).outcome().codes and example(legal).outcome().ok
        bad = descgen.validate_idesc(descgen.encode_idesc("f16", 256, 128, check=False), "f16", cta_group=1)
        good = descgen.validate_idesc(descgen.encode_idesc("f16", 256, 128), "f16", cta_group=2)
        print("python", "IDESC-M256-CTA-GROUP" in bad.codes, "IDESC-M256-CTA-GROUP" in good.codes)
        h = cpp_header.header()
        print("cpp", "Code::IDESC_M256_CTA_GROUP, CODE_SEVERITY" in h.split(" idesc_rules(")[1].split("\\n}\\n")[0])
        open("descgen_tcgen05.hpp", "w").write(h)
    """)
    env = {"PYTHONPATH": str(tree), "DESCGEN_NO_CACHE": "1", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["python True False", "cpp True"]
    if GXX is not None:
        (tmp_path / "t.cpp").write_text(textwrap.dedent("""
            #include "descgen_tcgen05.hpp"
            using namespace descgen::tcgen05;
            int main() {
                Context ctx; ctx.cta_group = 1;
                Report r;
                validate_idesc(0x10400010u, Kind::f16, ctx, r);  // M = 256, N = 256 (f32 <- f16)
                for (int i = 0; i < r.count; ++i) if (r.item[i].code == Code::IDESC_M256_CTA_GROUP) return 0;
                return 1;
            }
        """))
        subprocess.run([GXX, "-std=c++17", "-I.", "t.cpp", "-o", "t"], cwd=tmp_path, check=True)
        assert subprocess.run([str(tmp_path / "t")]).returncode == 0


# -- one meaning in both back ends -----------------------------------------------------------------

_EXPRESSIONS = (
    "not x", "x and y", "x or not y", "x == 0", "x != y", "x == False", "x is None", "x is not None", "x in (0, 1)",
    "x not in (1, 5)", "s == 'mn'", "s != 'k'", "s in ('k', 'mn')", "(x if y else 3) == 3", "y if x is None else x",
    "x is not None and y is not None and min(x, 3) + ceil_div(y, 2) > 3",
    "x is not None and (x >> 1) & 1", "x is not None and y is not None and x * 2 - y // 2 >= 1",
    "x is not None and x % 4 == 1 or s == 'k'",
)
_GRID = {"x": (None, 0, 1, 5), "y": (None, 0, 1, 5), "s": (None, "k", "mn")}


def _python(tree: ast.expr, facts: dict[str, Any]) -> bool:
    scope = {"v": facts, "_f_min": min, "_f_max": max, "_f_ceil_div": lambda a, b: -(-a // b)}
    return bool(eval(language.python_expression(tree), scope))


@needs_gxx
def test_python_and_cpp_give_the_language_one_meaning(tmp_path: Path) -> None:
    names = {"k": 0, "mn": 1}
    scope = cpp_rules.Scope(lambda name, obj: (name, "name" if name == "s" else "int"), "", "0")
    trees = [language.parse_expr(e, "TEST", "expression") for e in _EXPRESSIONS]
    cases = list(product(*_GRID.values()))
    code = lambda v: -1 if v is None else names[v] if isinstance(v, str) else int(v)  # noqa: E731
    rows = ",\n".join("{" + ", ".join(str(code(v)) for v in case) + "}" for case in cases)
    body = "\n".join(f"        std::printf(\"%d\", ({cpp_rules.condition(t, scope, names)}) ? 1 : 0);" for t in trees)
    (tmp_path / "lang.cpp").write_text(textwrap.dedent(f"""
        #include <cstdio>
        static long long min_of(long long a, long long b) {{ return a < b ? a : b; }}
        static long long max_of(long long a, long long b) {{ return a > b ? a : b; }}
        static long long ceil_div(long long a, long long b) {{ return (a + b - 1) / b; }}
        static const long long NONE = -1;
        int main() {{
            static const long long grid[][3] = {{
        {rows}}};
            for (const auto& g : grid) {{
                const long long x = g[0], y = g[1], s = g[2];
                (void)NONE; (void)max_of;
        {body}
                std::printf("\\n");
            }}
        }}
    """))
    subprocess.run([GXX, "-std=c++17", "-w", "lang.cpp", "-o", "lang"], cwd=tmp_path, check=True)
    cpp = subprocess.run([str(tmp_path / "lang")], capture_output=True, text=True, check=True).stdout.split()
    for case, got in zip(cases, cpp, strict=True):
        facts = dict(zip(_GRID, case))
        want = "".join("1" if _python(t, facts) else "0" for t in trees)
        assert got == want, (facts, [e for e, a, b in zip(_EXPRESSIONS, got, want) if a != b])


# -- the tables as data ------------------------------------------------------------------------------

_FOREIGN = (None, -7, 3, 999, "not-a-name", "sm_0a")


@pytest.mark.parametrize("name", sorted(TABLES))
def test_a_key_outside_a_tables_domains_has_no_entry(name: str) -> None:
    """The C++ header writes a table's entries over the product of its key domains and finds no
    entry for any other key: so must Python's table be None there."""
    t = TABLES[name]
    if set(t.keys) & OPEN_DOMAINS:
        pytest.skip(f"{name} is keyed by an open domain (Python only)")
    domains = [domain(d) for d in t.keys]
    for i, values in enumerate(domains):
        base = [next((v for v in d if v is not None), None) for d in domains]
        for foreign in _FOREIGN:
            if foreign in values or (foreign is None and t.keys[i] in ("bool", "type_column")):
                continue
            key = base[:i] + [foreign] + base[i + 1:]
            assert t.fn(*key) is None, (name, key)


def test_every_table_cites_its_source_and_says_what_it_holds() -> None:
    for name, t in TABLES.items():
        assert name.isupper() and t.source and (t.fn.__doc__ or "").strip(), name
        assert all(d in domain.__globals__["DOMAINS"] or d in OPEN_DOMAINS for d in t.keys), name


# -- outside the language ----------------------------------------------------------------------------


@pytest.mark.parametrize("when, why", [
    ("m.bits == 1", "only desc.FIELD"),
    ("m.bit_length()", "not a function of the rule language"),
    ("open('x')", "not a function of the rule language"),
    ("lambda: 1", "Lambda is not part"),
    ("m < n < 3", "one comparison at a time"),
    ("m is 3", "compare with None only"),
    ("m[0] == 1", "only a table"),
    ("1.5 > m", "not an integer"),
    ("m ==", "not an expression"),
])
def test_an_expression_outside_the_language_is_refused_naming_the_rule(when: str, why: str) -> None:
    row = {"code": "IDESC-TEST", "applies": "idesc",
           "check": [{"when": when, "field": "m", "value": "m", "allowed": "", "detail": ""}]}
    with pytest.raises(TableError, match=re.escape(why)) as e:
        language.parse_checks(row)
    assert "IDESC-TEST" in str(e.value)


def test_a_text_function_decides_nothing() -> None:
    """Text helpers render messages: refused in ``when``, and a ``let`` that uses one cannot reach C++."""
    row = {"code": "IDESC-TEST", "applies": "idesc",
           "check": [{"when": "join(m) == 'x'", "field": "m", "value": "m", "allowed": "", "detail": ""}]}
    with pytest.raises(TableError, match="not a function of the rule language"):
        language.parse_checks(row)
    parsed = language.parse_checks({**row, "let": {"w": "text(m)"},
                                    "check": [{**row["check"][0], "when": "w == 'x'"}]})
    with pytest.raises(ValueError, match="text function"):
        cpp_rules.condition(parsed.checks[0].when, cpp_rules.Scope(lambda n, o: (n, "int"), "", "0"), {"x": 0})
