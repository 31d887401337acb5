"""Every code descgen can emit is in the registry (:func:`descgen.codes.all_codes`) and
``descgen explain`` knows it.

Two collections, each checked against the registry:

- statically: every string literal of ``descgen/*.py`` and ``cli/*.py`` that looks like a code,
  and every f-string that builds one (a code template), expanded over the values it can take;
- dynamically: the codes of the findings and errors produced by running the catalog's examples,
  decoding every layout's words, and a fuzz of the public API with random and bad inputs.

A code seen anywhere that the registry does not hold fails; the collector itself is tested on a
planted sample so that it cannot pass by finding nothing. Codes of the tables (``[[layout]]``,
``[[usage]]``) must also carry the table's rule, source, severity and fields where raised.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
from typing import Any, Iterable

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import descgen
from descgen import batch
from descgen.model.catalog import catalog, layout_table, usage_table
from descgen.cli import cli
from descgen.codes import all_codes
from descgen.model.catalog import contexts as context_names
from descgen.model.context import context
from descgen.model.engine import check_value
from descgen.core.errors import DescgenError, Finding
from descgen.examples import Outcome, calls, example, examples_for, unreachable
from descgen.examples import _findings as findings_of
from descgen.model.facts import ABSENT_ARGS
from descgen.words.identify import identify
from descgen.model.loader import KINDS, LAYOUT_FILES, layout, layouts

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PREFIXES = ("IDESC", "SMEM", "ZCM", "MMA", "TADDR", "CONTEXT", "LAYOUT", "EMIT", "BATCH", "DIFF", "PTX", "IDENTIFY",
            "TABLE")
#: A code literal (the bare ``CONTEXT`` is left to the dynamic collection: ``"PTX"`` is not a code).
CODE = re.compile(rf"^({'|'.join(PREFIXES)})(-[A-Z0-9]+)+$")
#: A code template: an f-string rendered with ``{}`` for each placeholder.
TEMPLATE = re.compile(rf"^({'|'.join(PREFIXES)}|\{{\}})(-([A-Z0-9]+|\{{\}}))+$")
ALL = all_codes()
SEEN: set[str] = set()  # every code collected, statically or dynamically
PRODUCED: set[str] = set()  # the codes of findings and errors actually produced


# --------------------------------------------------------------------------------------------
# The static collector.


def _is_code_template(node: ast.JoinedStr) -> str | None:
    """``"LAYOUT-{}-RANGE"`` for ``f"LAYOUT-{name.upper()}-RANGE"``; None for an f-string that
    does not build a code (``f"{lo}-{hi}"``): one needs a literal code segment or a placeholder
    that upper-cases its value."""
    parts, upper = [], False
    for v in node.values:
        if isinstance(v, ast.Constant):
            parts.append(str(v.value))
        else:
            parts.append("{}")
            upper |= ".upper()" in ast.unparse(v)
    text = "".join(parts)
    if not TEMPLATE.match(text):
        return None
    literal = any(seg not in ("{}", "") for seg in text.split("-"))
    return text if literal or upper else None


def collect(source: str, filename: str = "<sample>") -> tuple[set[tuple[str, int]], set[tuple[str, int]]]:
    """(code literals, code templates) of one Python source, each with its line."""
    tree = ast.parse(source, filename)
    templates = {(t, n.lineno) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) and (t := _is_code_template(n))}
    inside = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    literals = {(n.value, n.lineno) for n in ast.walk(tree)
                if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in inside
                and CODE.match(n.value)}
    return literals, templates


def _sources() -> Iterable[tuple[str, str]]:
    for package in ("descgen", "cli"):
        for root, dirs, names in os.walk(os.path.join(REPO, package)):
            # (descgen/cli: the link to cli/)
            dirs[:] = sorted(d for d in dirs if d not in ("cli", "tables", "__pycache__"))
            for name in sorted(names):
                if name.endswith(".py"):
                    path = os.path.join(root, name)
                    with open(path, encoding="utf-8") as fh:
                        yield os.path.relpath(path, REPO), fh.read()


def _words() -> tuple[str, ...]:
    return tuple(dict.fromkeys(layout(n).word for n in LAYOUT_FILES))


def _dash(name: str) -> str:
    return name.upper().replace("_", "-")


#: The engine's own checks per field type (descgen/model/engine.py: check_value, check_raw).
_ENGINE_CHECKS = {"uint": ("TYPE", "ALIGN", "RANGE"), "flag": ("TYPE", "VALUE"), "enum": ("CODE",),
                  "reserved": ("RESERVED",), "constant": ("CONST",)}


def _field_codes() -> set[str]:
    out = set()
    for lay in layouts():
        for f in lay.fields:
            for check in _ENGINE_CHECKS[f.type]:
                if check == "ALIGN" and f.transform.align == 1:
                    continue
                out.add(f"{_dash(lay.word)}-RESERVED-{f.lo}" if f.type == "reserved" else
                        f"{_dash(lay.word)}-{_dash(f.name)}-{check}")
    return out


def _missing_codes() -> set[str]:
    """Plan.check's ``<WORD>-<FIELD>-MISSING``: a value field with neither a default nor a kind default."""
    return {f"{_dash(lay.word)}-{_dash(f.name)}-MISSING" for lay in layouts() for f in lay.fields
            if f.is_value and f.default is None and not any(f.name in d for d in lay.defaults.values())}


#: Every f-string code template of the sources, expanded over the values its placeholders take.
#: A new template fails test_every_code_template_is_expanded until it is listed here.
EXPANSIONS: dict[str, Any] = {
    "LAYOUT-{}-RANGE": lambda: {"LAYOUT-MN-RANGE", "LAYOUT-K-RANGE"},  # tiles.atoms.positive("mn" | "k")
    "LAYOUT-{}-ATOM": lambda: {"LAYOUT-MN-ATOM", "LAYOUT-K-ATOM"},  # smem_for_tile: mn, k
    "ZCM-{}-LENGTH": lambda: {"ZCM-START-COUNT-LENGTH", "ZCM-FIRST-SPAN-LENGTH"},
    "IDESC-{}-ABSENT": lambda: {f"IDESC-{_dash(a)}-ABSENT" for a in ABSENT_ARGS},
    "CONTEXT-{}": lambda: {f"CONTEXT-{_dash(n)}" for n in context_names()},
    "{}-WORD-RANGE": lambda: {f"{_dash(w)}-WORD-RANGE" for w in _words()},
    "{}-FIELD-FIXED": lambda: {f"{_dash(w)}-FIELD-FIXED" for w in _words()},
    "{}-FIELD-UNKNOWN": lambda: {f"{_dash(w)}-FIELD-UNKNOWN" for w in _words()},
    "{}-KIND": lambda: {f"{_dash(lay.word)}-KIND" for lay in layouts() if lay.kinds},
    "{}-{}-MISSING": _missing_codes,
    "{}-RESERVED-{}": lambda: {c for c in _field_codes() if "-RESERVED-" in c},
    "{}-{}-{}": _field_codes,  # engine.finding_code
}


def _check(codes: Iterable[str], where: str = "", produced: bool = False) -> None:
    codes = set(codes)
    unknown = sorted(codes - set(ALL))
    assert not unknown, f"codes not in descgen.codes.all_codes(){where}: {unknown}"
    SEEN.update(codes)
    if produced:
        PRODUCED.update(codes)


def test_the_collector_finds_planted_codes():
    sample = '''
def f(name, x):
    raise Oops("LAYOUT-NOT-A-REAL-CODE")
    g(code="SMEM-PLANTED-9", text="not a code: Table 52", other="LAYOUT", bits=f"{x.lo}-{x.hi}")
    return f"LAYOUT-{name.upper()}-BOGUS", f"{name.upper()}-PLANTED", f"ZCM-{x}"
'''
    literals, templates = collect(sample)
    assert {c for c, _ in literals} == {"LAYOUT-NOT-A-REAL-CODE", "SMEM-PLANTED-9"}
    assert {t for t, _ in templates} == {"LAYOUT-{}-BOGUS", "{}-PLANTED", "ZCM-{}"}
    with pytest.raises(AssertionError, match="LAYOUT-NOT-A-REAL-CODE"):
        _check(c for c, _ in literals)
    assert not set(EXPANSIONS) & {t for t, _ in templates}  # unlisted: test_every_code_template_is_expanded fails
    _check(["LAYOUT-TABLE52"])


def test_every_code_literal_is_known():
    found = []
    for path, text in _sources():
        literals, _ = collect(text, path)
        found += [(c, f"{path}:{line}") for c, line in literals]
    # the collector reads the sources: codes raised by name in the library and the command line
    assert {"BATCH-KEY", "LAYOUT-OVERLAP", "TABLE-MALFORMED"} <= {c for c, _ in found}
    unknown = [(c, where) for c, where in found if c not in ALL]
    assert not unknown, f"code literals not in descgen.codes.all_codes(): {unknown}"
    _check(c for c, _ in found)


def test_every_code_template_is_expanded():
    found: dict[str, list[str]] = {}
    for path, text in _sources():
        for t, line in collect(text, path)[1]:
            found.setdefault(t, []).append(f"{path}:{line}")
    assert "LAYOUT-{}-RANGE" in found and "{}-{}-{}" in found
    unlisted = {t: where for t, where in found.items() if t not in EXPANSIONS}
    assert not unlisted, f"f-string code templates with no expansion in EXPANSIONS: {unlisted}"
    for template, where in found.items():
        codes = EXPANSIONS[template]()
        pattern = re.compile("^" + re.escape(template).replace(r"\{\}", "[A-Z0-9]+(?:-[A-Z0-9]+)*") + "$")
        assert codes and all(pattern.match(c) for c in codes), template
        _check(codes, f" (from {template} at {', '.join(where)})")


# --------------------------------------------------------------------------------------------
# The dynamic collector.


def codes_of(thing: Any, depth: int = 0) -> set[str]:
    """The codes in a result or an error: findings, not-checked rules, nested results."""
    if depth > 4 or thing is None or isinstance(thing, (str, bytes, int, float)):
        return set()
    if isinstance(thing, Finding):
        _check_text(thing)
        return {thing.code}
    out: set[str] = set()
    if isinstance(thing, DescgenError):
        return codes_of(thing.findings, depth + 1)
    if isinstance(thing, dict):
        return set().union(*(codes_of(v, depth + 1) for v in thing.values()))
    if isinstance(thing, (list, tuple)):
        return set().union(*(codes_of(v, depth + 1) for v in thing))
    for name in ("findings", "not_checked", "only_a", "only_b", "report", "readings", "results"):
        out |= codes_of(getattr(thing, name, None), depth + 1)
    code = getattr(thing, "code", None)
    if isinstance(code, str) and not isinstance(thing, Finding):
        out.add(code)
    return out


def _check_text(f: Finding) -> None:
    """A code of a table carries the table's rule (then what was found), source, severity, fields.
    Two are raised below the catalog and cannot read it: the engine's ``IDESC-KIND`` for a kind
    one idesc layout does not serve (with the layout's title and source), and ``TABLE-MALFORMED``
    (descgen.core.errors.TableError: the file it names is the source, the problem the rule)."""
    rule = layout_table().get(f.code) or usage_table().get(f.code)
    if rule is None or f.code == "TABLE-MALFORMED" or (f.code == "IDESC-KIND" and f.source.startswith("PTX ISA")):
        return
    assert f.source == rule.source, (f.code, f.source, rule.source)
    assert f.rule == rule.rule or f.rule.startswith(rule.rule + ":") or f.rule.startswith(rule.rule + " ("), \
        (f.code, f.rule, rule.rule)
    assert f.severity == rule.severity, f.code
    if f.code in layout_table():
        assert f.field in rule.fields, (f.code, f.field, rule.fields)


def attempt(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Call ``fn``; every code of its result or of the DescgenError it raises must be known."""
    try:
        result = fn(*args, **kwargs)
    except DescgenError as e:
        _check(codes_of(e), f" ({fn.__name__})", produced=True)
        return None
    _check(codes_of(result), f" ({fn.__name__})", produced=True)
    return result


# --------------------------------------------------------------------------------------------
# Every code's examples (descgen.examples): the illegal one reports the code, the legal one, its
# nearest fix, runs clean; the codes no input produces are exactly UNREACHABLE.

#: The codes no input can produce (descgen.examples.unreachable gives each one's reason). A new
#: code without examples fails test_every_code_has_both_examples_or_is_unreachable.
UNREACHABLE = {
    # every kind of every layout takes both values of the flag: no value breaks it
    "IDESC-SPARSE-VALUE", "ZCM-NONZERO-MASK-VALUE",
    # encode refuses a reserved/constant field's name as <WORD>-FIELD-UNKNOWN first; only value
    # fields' values are ever checked
    "IDESC-FIELD-FIXED", "SMEM-FIELD-FIXED", "WGMMA-SMEM-FIELD-FIXED", "ZCM-FIELD-FIXED", "TADDR-FIELD-FIXED",
    # the machine's state, not an argument: no CUDA driver, a loaded CUDA module, the Triton installed
    "SANITIZER-DRIVER", "SANITIZER-MODULE", "SANITIZER-TRITON",
}
WITH_EXAMPLES = [code for code in ALL if examples_for(code) is not None]


def coverage_gaps(codes: Iterable[str], has_examples: Any, dead: Iterable[str]) -> tuple[set[str], set[str]]:
    """(codes with neither examples nor a reason, codes with both)."""
    codes, dead = set(codes), set(dead)
    return ({c for c in codes if not has_examples(c) and c not in dead},
            {c for c in codes if has_examples(c) and c in dead})


def test_every_code_has_both_examples_or_is_unreachable():
    assert set(unreachable()) == UNREACHABLE
    assert all(reason and len(reason) > 40 for reason in unreachable().values())
    missing, both = coverage_gaps(ALL, lambda c: examples_for(c) is not None, unreachable())
    assert not missing, f"codes with no legal/illegal example and no reason: {sorted(missing)}"
    assert not both, sorted(both)
    assert len(WITH_EXAMPLES) + len(UNREACHABLE) == len(ALL)
    assert len(WITH_EXAMPLES) > 250


def test_coverage_fails_for_a_code_without_examples():
    """A code added without examples is caught: the coverage check on a planted code, and on a
    [[usage]] entry whose examples are removed (the parser keeps the entry, the check flags it)."""
    from descgen.model.catalog import SECTION_PATHS, catalog_tables, parse_rules

    missing, _ = coverage_gaps([*ALL, "LAYOUT-PLANTED"], lambda c: examples_for(c) is not None, unreachable())
    assert missing == {"LAYOUT-PLANTED"}
    data = catalog_tables()
    usage = [{k: v for k, v in row.items() if k not in ("legal", "illegal")} if row["code"] == "EMIT-NAME" else row
             for row in data["usage"]]
    table = parse_rules(dict(data, usage=usage), SECTION_PATHS).usage
    missing, _ = coverage_gaps(table, lambda c: table[c].legal is not None, unreachable())
    assert missing == {"EMIT-NAME"}


def check_examples(code: str, legal: Any, illegal: Any) -> None:
    """The illegal example reports ``code`` (a finding, never only "not checked") with the code's
    severity; the legal one reports no error, raises nothing, and not ``code``."""
    bad = example(illegal).outcome()
    hits = [f for f in bad.findings if f.code == code]
    assert hits, (f"{code}: the illegal example does not report it", example(illegal).command(), bad)
    assert all(f.severity == ALL[code].severity for f in hits), (code, hits)
    good = example(legal).outcome()
    assert code not in good.codes, (f"{code}: the legal example reports it", example(legal).command(), good)
    assert good.ok, (f"{code}: the legal example is not clean", example(legal).command(), good)
    for which, got in (("legal", good), ("illegal", bad)):
        _check(codes_of(got), f" ({code} {which})", produced=True)


@pytest.mark.parametrize("code", WITH_EXAMPLES)
def test_examples_both_ways(code):
    check_examples(code, *examples_for(code))


def test_a_wrong_example_fails():
    """The check is not vacuous: swapped examples, an illegal example the rule does not run on
    (only "not checked"), and another code's illegal example all fail it."""
    legal, illegal = examples_for("IDESC-N-RANGE")
    with pytest.raises(AssertionError, match="does not report it"):
        check_examples("IDESC-N-RANGE", illegal, legal)
    rule = catalog()["IDESC-SPARSE-SP"]
    spec = dict(rule.illegal, context={})  # without sp: the rule is listed as not checked
    assert "IDESC-SPARSE-SP" in example(spec).outcome().not_checked
    with pytest.raises(AssertionError, match="does not report it"):
        check_examples("IDESC-SPARSE-SP", rule.legal, spec)
    with pytest.raises(AssertionError, match="does not report it"):
        check_examples("LAYOUT-K-ATOM", examples_for("LAYOUT-K-ATOM")[0], examples_for("LAYOUT-MN-ATOM")[1])
    with pytest.raises(AssertionError, match="legal example reports it"):
        check_examples("LAYOUT-K-ATOM", examples_for("LAYOUT-K-ATOM")[1], examples_for("LAYOUT-K-ATOM")[1])


def test_unreachable_codes_are_unreachable():
    """What UNREACHABLE claims: a reserved or constant field's name is FIELD-UNKNOWN, never
    FIELD-FIXED; both values of sparse and nonzero_mask encode for every kind."""
    for name in LAYOUT_FILES:
        lay = layout(name)
        fixed = [f.name for f in lay.fields if not f.is_value]
        for kind in lay.kinds or (None,):
            for f in fixed:
                with pytest.raises(DescgenError) as err:
                    descgen.encode(name, kind, **{f: 0})
                assert [x.code for x in err.value.findings] == [f"{_dash(lay.word)}-FIELD-UNKNOWN"]
            for flag in ("sparse", "nonzero_mask"):
                if flag in lay.by_name:
                    assert set(lay.field(flag).domain(kind).members()) == {False, True}


@pytest.mark.parametrize("code", [c for c in WITH_EXAMPLES if example(examples_for(c)[0]).language == "python"])
def test_a_python_example_runs_as_printed(code):
    """A call example's text is the call that runs: evaluated as printed (with ``import descgen``),
    it reports or raises what the example does."""
    for spec in examples_for(code):
        ex = example(spec)
        text = ex.command()
        assert text.startswith("descgen.")
        expected = ex.outcome()
        try:
            got = Outcome(tuple(findings_of(eval(text, {"descgen": descgen}))))
        except DescgenError as e:
            got = Outcome(tuple(e.findings), (), type(e).__name__)
        assert (got.codes, got.raised) == (expected.codes, expected.raised), text


def test_examples_call_the_public_api():
    """A call example names ``descgen.NAME`` of ``descgen.__all__`` (or a dotted module name): the
    function it runs is that one."""
    import importlib

    for name, fn in calls().items():
        if "." in name:
            module, _, attr = name.rpartition(".")
            assert getattr(importlib.import_module(module), attr) is fn, name
        else:
            assert name in descgen.__all__ and getattr(descgen, name) is fn, name
    used = {spec["call"] for code in WITH_EXAMPLES for spec in examples_for(code) if spec["as"] == "call"}
    assert used <= set(calls()) and len(used) > 15


SHELL = [c for c in WITH_EXAMPLES if c not in catalog() and example(examples_for(c)[0]).language == "shell"]


@pytest.mark.parametrize("code", SHELL)
def test_a_shell_example_runs_as_printed(runner, code):
    """A generated word example (``descgen validate ...``) and a batch example (``printf ... |
    descgen batch``) give the command line the codes the example reports (the catalog's are
    tests/test_cli_validate.py's)."""
    for which, spec in zip(("legal", "illegal"), examples_for(code)):
        ex = example(spec)
        text = ex.command()
        if ex.as_ == "batch":
            pipe, _, tail = text.partition(" | ")
            assert tail == "descgen batch" and shlex.split(pipe)[:2] == ["printf", "%s\\n"]
            result = runner.invoke(cli, ["batch"], input="\n".join(shlex.split(pipe)[2:]) + "\n")
            got = [f["code"] for line in result.stdout.splitlines() for answer in [json.loads(line)]
                   for f in (*answer.get("findings", ()), *answer.get("error", {}).get("findings", ()))]
        else:
            argv = shlex.split(text)
            assert argv[:2] == ["descgen", "validate"]
            result = runner.invoke(cli, [*argv[1:], "--json"])
            got = [f["code"] for f in json.loads(result.stdout)["result"]["findings"]]
        assert got == list(ex.outcome().codes), text
        assert (code in got) == (which == "illegal"), text


def test_decoded_words_of_every_layout():
    for name in LAYOUT_FILES:
        lay = layout(name)
        for kind in lay.kinds or (None,):
            for word in (0, (1 << lay.width) - 1, 0x5555555555555555 & ((1 << lay.width) - 1),
                         0xAAAAAAAAAAAAAAAA & ((1 << lay.width) - 1)):
                attempt(descgen.decode, name, word, kind)
            attempt(descgen.decode, name, 1 << lay.width, kind)
        attempt(descgen.decode, name, 0, "bogus")
        for f in lay.fields:
            if not f.is_value:
                with pytest.raises(DescgenError) as err:
                    check_value(lay, f, None, 0)
                _check(codes_of(err.value), produced=True)


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
FUZZ_CONTEXT = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))

# Strategies: good values mixed with bad ones.
junk = st.one_of(st.none(), st.booleans(), st.text(max_size=3), st.floats(allow_nan=False, width=16),
                 st.lists(st.integers(0, 3), max_size=5))
small = st.one_of(st.integers(-40, 300), st.sampled_from([0, 1, 8, 16, 32, 64, 96, 128, 256, 512, 1024]), junk)
word64 = st.one_of(st.integers(0, 2**64 - 1), st.sampled_from([0, 2**32 - 1, 2**64 - 1, 0x4000404000010040,
                                                               0x08400010, 0x0840001000000000, -1, 2**64]), junk)
kinds = st.one_of(st.sampled_from(KINDS), st.sampled_from(["bogus", ".kind::f16", "F16"]), junk)
types = st.sampled_from(["f16", "bf16", "tf32", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "s8", "u8", "f32", "s32",
                         "ue8m0", "ue4m3", "f64", None])
swizzles = st.sampled_from(["none", "128B_base32B", "128B", "64B", "32B", "16B", None, 3])
majors = st.sampled_from(["k", "mn", "row", None])
ctx_value = {"cta_group": st.sampled_from([None, 1, 2, 3, "1"]), "ws": st.sampled_from([None, True, False, 2]),
             "sp": st.sampled_from([None, True, False]),
             "scale_vec": st.sampled_from([None, "1X", "2X", "4X", "block16", "block32", "8X"]),
             "a_tmem": st.sampled_from([None, True, False]), "arch": st.sampled_from([None, "sm_100a", "sm_103a",
                                                                                     "sm_110a", "sm_90a", "x"]),
             "pattern_start": st.sampled_from([None, 0, 0x400, 0x480, 7]),
             "m": st.sampled_from([None, 32, 64, 128, 48]),
             "n": st.sampled_from([None, 64, 256, 30]), "warp": st.sampled_from([None, 0, 1, 3, 4, -1]),
             "alloc_columns": st.sampled_from([None, 32, 128, 48, 1024]),
             "alloc_base": st.sampled_from([None, 0, 32, 0x10000, 7])}


def ctx(*names: str) -> st.SearchStrategy[dict[str, Any]]:
    """A context: some of ``names`` given (an unknown name is a TypeError of the function's
    signature; descgen.model.context.context reports it as CONTEXT: test_context)."""
    return st.fixed_dictionaries({}, optional={n: ctx_value[n] for n in names})


@FUZZ_CONTEXT
@given(given_=ctx(*ctx_value), extra=st.booleans())
def test_context(given_, extra):
    given_.pop("pattern_start", None), given_.pop("m", None), given_.pop("n", None)
    attempt(context, **given_, **({"bogus_context": 1} if extra else {}))




@FUZZ
@given(kind=kinds, m=small, n=small, atype=types, btype=types, dtype=types,
       opts=st.fixed_dictionaries({}, optional={"a_major": majors, "b_major": majors, "sparse": st.booleans(),
                                                "sparsity_selector": small, "max_shift": small, "scale_type": types,
                                                "a_sf_id": small, "b_sf_id": small, "k": small, "saturate": junk,
                                                "negate_a": st.booleans()}),
       context=ctx("cta_group", "ws", "sp", "scale_vec", "a_tmem", "arch"))
def test_fuzz_idesc(kind, m, n, atype, btype, dtype, opts, context):
    word = attempt(descgen.encode_idesc, kind, m, n, atype=atype, btype=btype, dtype=dtype, **opts, **context)
    w = word if word is not None else (m if isinstance(m, int) else 0)
    attempt(descgen.encode_idesc, kind, m, n, atype=atype, btype=btype, dtype=dtype, **opts, check=False)
    attempt(descgen.decode_idesc, w, kind)
    attempt(descgen.validate_idesc, w, kind, **context)
    attempt(descgen.decode_idesc_all, w)


@FUZZ
@given(start=small, lbo=small, sbo=small, swizzle=swizzles, base_offset=small,
       lbo_mode=st.sampled_from(["relative", "absolute", "x"]), word=word64, context=ctx("arch", "pattern_start"))
def test_fuzz_smem(start, lbo, sbo, swizzle, base_offset, lbo_mode, word, context):
    attempt(descgen.encode_smem, start_address=start, lbo=lbo, sbo=sbo, swizzle=swizzle, base_offset=base_offset,
            lbo_mode=lbo_mode, **context)
    attempt(descgen.decode_smem, word)
    attempt(descgen.validate_smem, word, **context)


@FUZZ
@given(start_count=st.one_of(st.lists(small, min_size=3, max_size=5), junk),
       first_span=st.lists(small, min_size=4, max_size=4), skip=small, use=small, shift=small, word=word64, m=small,
       n=small, context=ctx("m", "n", "ws"))
def test_fuzz_zcm(start_count, first_span, skip, use, shift, word, m, n, context):
    attempt(descgen.encode_zcm, start_count=start_count, first_span=first_span, skip_span=skip, use_span=use,
            column_shift=shift, **context)
    attempt(descgen.decode_zcm, word)
    attempt(descgen.validate_zcm, word, **context)
    attempt(descgen.zcm_mask, word, m, n)


@FUZZ
@given(lane=small, column=small, word=word64, ncols=small, context=ctx("warp", "alloc_columns", "alloc_base"))
def test_fuzz_taddr(lane, column, word, ncols, context):
    attempt(descgen.encode_taddr, lane, column, **context)
    attempt(descgen.decode_taddr, word)
    attempt(descgen.validate_taddr, word, **context)
    attempt(descgen.check_alloc, ncols)


@FUZZ
@given(dtype=types, major=majors, swizzle=swizzles, mn=small, k=small, start=small,
       pattern_start=st.sampled_from([None, 0, 0x80, 0x400, 0x3ff80, 0x40000, 5]),
       atom_order=st.sampled_from(["mn_first", "k_first", "x"]),
       kind=st.sampled_from([None, "f8f6f4", "mxf4", "f16", "x"]), j=small)
def test_fuzz_smem_for_tile(dtype, major, swizzle, mn, k, start, pattern_start, atom_order, kind, j):
    td = attempt(descgen.smem_for_tile, dtype=dtype, major=major, swizzle=swizzle, mn=mn, k=k, start_address=start,
                 pattern_start=pattern_start, atom_order=atom_order, kind=kind)
    if td is not None:
        attempt(td.k_offset, j)
    attempt(descgen.swizzle_atom, dtype=dtype, major=major, swizzle=swizzle, kind=kind)


@FUZZ
@given(word=word64, dtype=types, major=majors, mn=st.one_of(st.integers(-2, 80), junk),
       k=st.one_of(st.integers(-2, 80), junk), kind=st.sampled_from([None, "f8f6f4", "mxf4", "x"]),
       buffer=st.sampled_from([None, (0x400, 0x1000), (0, 16), (0, -1), [0, 16], "x"]), ij=st.tuples(small, small),
       nbytes=small)
def test_fuzz_smem_layout_and_advance(word, dtype, major, mn, k, kind, buffer, ij, nbytes):
    lay = attempt(descgen.smem_layout, word, dtype=dtype, major=major, mn=mn, k=k, kind=kind, buffer=buffer)
    if lay is not None:
        attempt(lay.address, *ij)
    attempt(descgen.advance_smem, word, nbytes)


def _produce(fn: Any, *args: Any, **kwargs: Any) -> set[str]:
    before = set(PRODUCED)
    PRODUCED.clear()
    try:
        attempt(fn, *args, **kwargs)
        return set(PRODUCED)
    finally:
        PRODUCED.update(before)


def test_every_layout_code_is_produced_with_the_tables_text():
    """Each [[layout]] code, produced by its illegal example (a call of the tile model), carries
    its table's rule, source, severity and one of its fields (codes_of checks each finding it
    meets); so does each [[usage]] code its example produces."""
    for code in [*layout_table(), *usage_table()]:
        if code in UNREACHABLE:
            continue
        pair = examples_for(code)
        assert pair is not None, f"{code}: no examples in tables/codes.toml"
        assert code in _produce(example(pair[1]).outcome), code
        assert code not in _produce(example(pair[0]).outcome), code
    w = descgen.encode_smem(start_address=0x400, lbo=16, sbo=1024, swizzle="128B")
    assert "SMEM-START-ADDRESS-ALIGN" in _produce(descgen.advance_smem, w, 8)  # the field's own check


def test_usage_codes_the_fuzz_reaches_rarely():
    from descgen.model.catalog import SECTION_PATHS, catalog_tables, parse_rules

    assert "BATCH-WORD" in _produce(batch_answers, ['{"op": "decode", "word": "x"}'])
    assert "ZCM-FIRST-SPAN-LENGTH" in _produce(descgen.encode_zcm, first_span=(1,), skip_span=1, use_span=1)
    assert "IDENTIFY-WORD" in _produce(identify, -1)
    assert "DIFF-WORD" in _produce(descgen.diff, 1.5, 0)
    tile = descgen.smem_for_tile(dtype="bf16", major="k", swizzle="none", mn=8, k=8, start_address=0)
    assert "EMIT-TILE-K" in _produce(descgen.emit_functions, tile, "cpp")
    tile = descgen.smem_for_tile(dtype="bf16", major="k", swizzle="128B", mn=128, k=64, start_address=0)
    assert "EMIT-STAGE-BYTES" in _produce(descgen.emit_functions, tile, "cpp", stage_bytes=8)
    bad = dict(catalog_tables(), layout=[{"code": "LAYOUT-X"}])
    assert "TABLE-MALFORMED" in _produce(parse_rules, bad, SECTION_PATHS)
    for name in LAYOUT_FILES:
        attempt(descgen.encode, name, (layout(name).kinds or (None,))[0])  # required fields missing


@FUZZ
@given(what=st.one_of(word64, st.just("decoded"), st.just("report"), st.just("tile"), st.just("mapping")),
       fmt=st.sampled_from(["hex", "json", "c", "cpp", "ptx", "python", "rust", None]),
       name=st.sampled_from([None, "X", "int", "1bad", "a b", "%idesc", "class"]),
       descriptor=st.sampled_from([None, "idesc", "smem", "zcm", "taddr", "x"]),
       kind=st.sampled_from([None, "f16", "x"]))
def test_fuzz_emit(what, fmt, name, descriptor, kind):
    thing: Any = what
    if what == "decoded":
        thing = descgen.decode_idesc(0x08400010, "f16")
    elif what == "report":
        thing = descgen.validate_idesc(0x10400010, "f16", cta_group=1)
    elif what == "tile":
        thing = descgen.smem_for_tile(dtype="bf16", major="k", swizzle="128B", mn=128, k=64, start_address=0x400)
    elif what == "mapping":
        thing = {"A": 0x4000404000010040, "B": 0x4000404000010440}
    attempt(descgen.emit, thing, fmt, name=name, descriptor=descriptor, kind=kind)


@FUZZ
@given(a=word64, b=word64, descriptor=st.sampled_from([None, "idesc", "smem", "zcm", "taddr", "x"]),
       kind=st.sampled_from([None, "f16", "mxf4", "x"]), context=ctx("cta_group", "arch"))
def test_fuzz_diff_and_identify(a, b, descriptor, kind, context):
    attempt(descgen.diff, a, b, descriptor=descriptor, kind=kind)
    attempt(identify, a, descriptor=descriptor, kind=kind, **context)
    attempt(descgen.idesc_from_runtime, a)


@FUZZ
@given(idesc=word64, kind=kinds, a_desc=st.one_of(st.none(), word64), b_desc=word64, zcm=st.one_of(st.none(), word64),
       a_tmem=st.sampled_from([None, True, False]), context=ctx("cta_group", "ws", "sp", "scale_vec", "arch", "m", "n"))
def test_fuzz_check_mma(idesc, kind, a_desc, b_desc, zcm, a_tmem, context):
    context.pop("m", None), context.pop("n", None)
    attempt(descgen.check_mma, idesc=idesc, kind=kind, a_desc=a_desc, b_desc=b_desc, zcm=zcm, a_tmem=a_tmem, **context)


requests = st.fixed_dictionaries(
    {"op": st.sampled_from(["encode", "decode", "validate", "check", "x", None])},
    optional={"descriptor": st.sampled_from(["idesc", "smem", "zcm", "x"]), "kind": kinds.filter(lambda k: k is None or
                                                                                             isinstance(k, str)),
              "word": st.one_of(st.integers(0, 2**64 - 1), st.sampled_from(["0x08400010", "x", -1, 1.5])),
              "m": st.integers(0, 300), "n": st.integers(0, 300), "bogus": st.just(1),
              "format": st.sampled_from(["c", "x"]),
              "cta_group": st.sampled_from([1, 2, 3]), "dtype": types, "major": majors, "swizzle": swizzles,
              "start_address": st.integers(0, 0x500), "lbo": st.integers(0, 64), "sbo": st.integers(0, 2048)})


@FUZZ
@given(lines=st.lists(st.one_of(requests.map(json.dumps),
                                st.sampled_from(["{", "[1]", "NaN", '{"op": 1, "op": 2}', "# c"])),
                      min_size=1, max_size=4))
def test_fuzz_batch(lines):
    batch_answers(lines)


def batch_answers(lines: list[str]) -> list[dict[str, Any]]:
    """``descgen batch``'s answers to ``lines``; every code in them (findings, errors, not
    checked) must be known, and the findings carry their table's text."""
    answers = [json.loads(out) for out in batch.run(lines, cache=False)]
    for answer in answers:
        findings = [*answer.get("findings", ()), *answer.get("error", {}).get("findings", ())]
        for f in findings:
            _check_text(Finding(f["code"], f["severity"], f["field"], f["value"], f["allowed"], f["rule"], f["source"]))
        _check({f["code"] for f in findings} | set(answer.get("not_checked", ())), f" (batch {answer})", produced=True)
    return answers


def test_scan_ptx():
    for rule in catalog().values():
        if rule.applies == "ptx":
            for which in ("legal", "illegal"):
                attempt(descgen.scan_ptx, getattr(rule, which)["ptx"])
    attempt(descgen.scan_ptx, "tcgen05.mma.cta_group::3.kind::bogus [%r0], %rd1, %rd2, %r3, 1;\n.target sm_1x\n")


# --------------------------------------------------------------------------------------------
# explain knows every code.


@pytest.fixture(scope="module")
def runner() -> CliRunner:
    return CliRunner()


@pytest.mark.parametrize("code", sorted(ALL))
def test_explain_knows_every_code(runner, code):
    result = runner.invoke(cli, ["explain", code.lower(), "--plain"], catch_exceptions=False)
    assert result.exit_code == 0, (code, result.output)
    lines = result.stdout.splitlines()
    rule = ALL[code]
    assert f"code={code}" in lines and f"rule={rule.rule}" in lines and f"source={rule.source}" in lines
    shown = dict(line.split("=", 1) for line in lines if line.startswith(("legal", "illegal", "unreachable")))
    if code in UNREACHABLE:
        assert set(shown) == {"unreachable"} and shown["unreachable"] == unreachable()[code]
        return
    legal, illegal = (example(spec) for spec in examples_for(code))
    assert (shown["legal"], shown["illegal"]) == (legal.command(), illegal.command())
    assert code in shown["illegal.reports"].replace(",", " ").split()
    assert code not in shown["legal.reports"] and not shown["legal.reports"].startswith("raises")


@pytest.mark.parametrize("code, prompt, outcome", [
    ("IDESC-N-SHAPE", "$ descgen validate 0x08020010", "error IDESC-N-SHAPE"),
    ("SMEM-RESERVED-14", "$ descgen validate 0x4000404000014040 --as smem", "error SMEM-RESERVED-14"),
    ("IDESC-M-RANGE", ">>> descgen.encode('idesc_dense', 'f16', m=272, n=64)", "raises EncodeError"),
    ("LAYOUT-ATOM-PHASE", ">>> descgen.smem_for_tile(", "warning LAYOUT-ATOM-PHASE"),
    ("BATCH-KEY", "$ printf '%s\\n' '{\"op\": \"decode\"", "raises UsageError"),
])
def test_explain_shows_both_examples_with_their_outcome(runner, code, prompt, outcome):
    result = runner.invoke(cli, ["explain", code, "--table"], catch_exceptions=False)
    out = result.stdout
    legal, illegal = out.index("Legal example"), out.index("Illegal example")
    assert legal < illegal and "clean: no findings" in out[legal:illegal]
    assert prompt in out[illegal:] and outcome in out[illegal:], out
    doc = json.loads(runner.invoke(cli, ["explain", code, "--json"]).stdout)["result"]["examples"]
    assert (doc["legal"]["ok"], doc["legal"]["shows"], doc["illegal"]["shows"]) == (True, False, True)
    assert doc["illegal"]["language"] == ("python" if prompt.startswith(">>>") else "shell")


def test_explain_says_why_a_code_has_no_example(runner):
    out = runner.invoke(cli, ["explain", "SMEM-FIELD-FIXED", "--table"]).stdout
    assert "no input produces it" in out and "Illegal example" not in out
    doc = json.loads(runner.invoke(cli, ["explain", "SMEM-FIELD-FIXED", "--json"]).stdout)["result"]
    assert "examples" not in doc and "SMEM-FIELD-UNKNOWN" in doc["unreachable"]


def test_explain_refuses_an_unknown_code(runner):
    result = runner.invoke(cli, ["explain", "LAYOUT-NOT-A-REAL-CODE"])
    assert result.exit_code == 2 and "unknown code" in result.stderr


# --------------------------------------------------------------------------------------------
# The [[layout]] and [[usage]] tables are read strictly.


def _bad_tables() -> Iterable[tuple[dict[str, Any], str, str]]:
    """Malformed catalog data, the file its error names and the message."""
    from descgen.model.catalog import catalog_tables

    d = catalog_tables()
    first = d["layout"][0]
    codes, rules, contexts, constraints = "codes", "rules", "contexts", "constraints"
    yield dict(d, layout=[{"code": "LAYOUT-X"}]), codes, "layout #1: missing key 'severity'"
    yield dict(d, layout=[{k: v for k, v in first.items() if k != "fields"}]), codes, "missing key 'fields'"
    yield dict(d, layout=[dict(first, extra=1)]), codes, "unknown key(s) 'extra'"
    yield dict(d, layout=[dict(first, severity="fatal")]), codes, "severity must be one of"
    yield dict(d, layout=[dict(first, applies="idesc")]), codes, "applies must be one of"
    yield dict(d, layout=[dict(first, fields=[])]), codes, "fields must be a non-empty list"
    yield dict(d, layout=[first, first]), codes, "duplicate code"
    yield dict(d, layout=[dict(first, code="IDESC-KIND")]), codes, "duplicate code"  # a [[usage]] code
    yield dict(d, usage=[dict(d["usage"][0], severity="warning")]), codes, "unknown key(s) 'severity'"
    yield dict(d, usage=[{k: v for k, v in d["usage"][0].items() if k != "source"}]), codes, "missing key 'source'"
    # a [[rule]] with a [[layout]] code
    yield dict(d, rule=[dict(d["rule"][0], code=first["code"])]), rules, "duplicate code"
    yield {k: v for k, v in d.items() if k != "layout"}, codes, "missing key 'layout'"
    # the examples: both or neither, of a known form, or the reason none exists (not both)
    usage = d["usage"][0]
    yield (dict(d, usage=[{k: v for k, v in usage.items() if k != "illegal"}]), codes,
           "give both a 'legal' and an 'illegal'")
    yield dict(d, usage=[dict(usage, unreachable="no input reaches it")]), codes, "or 'unreachable'"
    yield dict(d, usage=[dict(usage, legal={"as": "shell"})]), codes, "'legal' example needs as = one of"
    yield (dict(d, layout=[dict(first, illegal={"as": "call", "lines": ["{}"]})]), codes,
           "call = ... goes with as = \"call\"")
    yield (dict(d, layout=[dict(first, illegal={"as": "batch", "lines": "{}"})]), codes,
           "lines = ... goes with as = \"batch\"")
    yield dict(d, context=[{k: v for k, v in d["context"][0].items() if k != "legal"}]), contexts, "context #1"
    # each section's error names its own file
    yield dict(d, rule=[dict(d["rule"][0], needs=["nope"])]), rules, "unknown context ['nope'] in 'needs'"
    yield dict(d, targets=dict(d["targets"], names=["sm_90"])), constraints, "targets: target 'sm_90' is not"
    yield dict(d, requires=[dict(d["requires"][0], extra=1)]), constraints, "requires #1: unknown key(s) 'extra'"
    yield {k: v for k, v in d.items() if k != "ptx_version"}, constraints, "missing key 'ptx_version'"


@pytest.mark.parametrize("data,file,message", list(_bad_tables()))
def test_the_code_tables_are_read_strictly(data, file, message):
    """A malformed entry raises TableError naming its section's file (SECTION_PATHS) and the entry;
    a plain path names that one file for every section."""
    from descgen.model.catalog import SECTION_PATHS, parse_rules
    from descgen.core.errors import TableError

    with pytest.raises(TableError, match=re.escape(message)) as info:
        parse_rules(data, SECTION_PATHS)
    assert str(info.value).startswith(f"tables/{file}.toml: ")
    with pytest.raises(TableError, match=re.escape(message)) as info:
        parse_rules(data, "tables/x.toml")
    assert str(info.value).startswith("tables/x.toml: ")


def test_each_catalog_file_holds_only_its_own_sections(monkeypatch):
    """The catalog's files split the sections by concern (FILES: one section, one file); a section
    in another file is refused, naming the file."""
    from descgen.model import catalog as module
    from descgen.core.errors import TableError
    from descgen.model.loader import read_table

    sections = [s for held in module.FILES.values() for s in held]
    assert len(sections) == len(set(sections)) == len(module.SECTION_PATHS)
    assert set(module.catalog_tables()) == set(sections)
    for name, held in module.FILES.items():
        assert set(read_table(name)) <= {"table", *held}, name
    moved = dict(read_table("rules.toml"), targets=read_table("constraints.toml")["targets"])
    monkeypatch.setattr(module, "read_table", lambda name: moved if name == "rules.toml" else read_table(name))
    with pytest.raises(TableError, match=re.escape("tables/rules.toml: file: unknown key(s) 'targets'")):
        module.catalog_tables()
