"""Validation: every catalogued rule both ways, the legal instruction-descriptor space exhaustively,
the encoders' fast path against the validator, and properties over random words.

The legal space is built here from the spec's tables as the test suite models them
(``conftest.py``: Table 39, 42-44, 49, 50, 52; below: Tables 54/55 and §9.7.16.10.7.2-3), not from
``tables/constraints.toml``, so a wrong row in the data shows up as a rejected legal descriptor.
"""

from __future__ import annotations

import itertools
import os
from typing import Any, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import descgen
from descgen import EncodeError, UsageError, check_mma, encode_idesc, encode_smem, encode_zcm
from descgen import validate_idesc, validate_smem, validate_zcm
from descgen.model.catalog import catalog, contexts as _contexts, layout_table
from descgen.rules.checks import implemented
from descgen.codes import all_codes, field_codes, usage_codes
from descgen.examples import example, rules_markdown

CONTEXT_NAMES = _contexts()

from conftest import (
    AB_CODES,
    DENSE_KINDS,
    KINDS,
    MAX_SHIFT_CODES,
    NEGATE_OK,
    REPO,
    SELECTOR_VALUES,
    TRANSPOSE_OK,
    TYPE_BITS,
    TYPE_ROWS,
    VALID_M,
    VALID_N,
    rows_of,
    spec_bits,
    spec_encode_idesc,
)

CATALOG = catalog()


# ---------------------------------------------------------------------------------------------
# The catalog itself.


def test_every_catalogued_rule_is_implemented_and_every_implementation_catalogued():
    from descgen.ptx import scan

    assert not implemented() & scan.implemented()
    assert implemented() | scan.implemented() == set(CATALOG)
    assert {c for c, r in CATALOG.items() if r.applies == "ptx"} == scan.implemented()


def test_catalog_codes_are_unique_across_field_codes_and_well_formed():
    tables = (CATALOG, field_codes(), layout_table(), usage_codes())
    assert sum(map(len, tables)) == len(all_codes()), "a code is in two of the catalog, field, layout and usage codes"
    for code, rule in all_codes().items():
        assert code == code.upper() and code.split("-")[0] in ("IDESC", "SMEM", "WGMMA", "PORT", "ZCM", "MMA",
                                                               "CONTEXT", "TADDR", "DIFF", "EMIT", "PTX", "BATCH",
                                                               "IDENTIFY", "LAYOUT", "TABLE", "INSTRUMENT", "SANITIZER",
                                                               "CUTE"), code
        assert rule.severity in ("error", "warning", "info")
        assert rule.source and rule.rule, code
    for rule in CATALOG.values():
        assert set(rule.needs) | set(rule.uses) <= set(CONTEXT_NAMES)


@pytest.mark.parametrize("code", list(CATALOG))
def test_catalog_examples_both_ways(code):
    """The legal example reports no error and not this code; the illegal one reports this code,
    with the rule's severity."""
    rule = CATALOG[code]
    legal = example(rule.legal).run()
    assert code not in legal.codes, legal.findings
    assert legal.ok, legal.findings
    illegal = example(rule.illegal).run()
    hits = [f for f in illegal.findings if f.code == code]
    assert hits, (illegal.findings, example(rule.illegal).command())
    assert all(f.severity == rule.severity and f.source == rule.source for f in hits)


@pytest.mark.parametrize("code", [c for c, r in CATALOG.items() if r.needs])
def test_rules_with_missing_context_are_not_checked(code):
    """Drop the context an illegal example depends on: the rule is listed as not checked, never
    guessed."""
    rule = CATALOG[code]
    spec = dict(rule.illegal)
    spec["context"] = {k: v for k, v in spec.get("context", {}).items() if k not in rule.needs}
    report = example(spec).run()
    assert code not in report.codes
    assert code in {n.code for n in report.not_checked}


def test_rules_page_is_current():
    with open(os.path.join(REPO, "docs", "rules.md"), encoding="utf-8") as fh:
        assert fh.read() == rules_markdown(), "regenerate: descgen rules --markdown > docs/rules.md"


def test_rules_page_lists_every_code():
    page = rules_markdown()
    assert all(f"`{code}`" in page for code in all_codes())


# ---------------------------------------------------------------------------------------------
# Context.


@pytest.mark.parametrize("kwargs, code", [
    ({"cta_group": 3}, "CONTEXT-CTA-GROUP"),
    ({"cta_group": True}, "CONTEXT-CTA-GROUP"),
    ({"ws": "yes"}, "CONTEXT-WS"),
    ({"scale_vec": "8X"}, "CONTEXT-SCALE-VEC"),
    ({"arch": "sm_90a"}, "CONTEXT-ARCH"),
    ({"arch": "sm_100"}, "CONTEXT-ARCH"),
])
def test_bad_context_is_a_usage_error(kwargs, code):
    with pytest.raises(UsageError) as exc:
        validate_idesc(0x08400010, "f16", **kwargs)
    assert exc.value.code == code and code in all_codes()
    with pytest.raises(UsageError):
        encode_idesc("f16", 128, 256, **kwargs)


def test_context_spellings():
    r = validate_idesc(encode_idesc("mxf4nvf4", 128, 128), "mxf4nvf4", scale_vec="scale_vec::4X", arch="sm_101a")
    assert r.context["scale_vec"] == "4X" and r.context["arch"] == "sm_110a"
    assert validate_idesc(encode_idesc("mxf4nvf4", 128, 128), "mxf4nvf4",
                          scale_vec=".block16").context["scale_vec"] == "block16"


def test_targets_family_rule():
    """§9.7.16.10.9.1: ".block16, .block32 requires sm_100f or sm_110f" is met by every target of
    those families (an a target includes its family's features); .scale_vec::NX only by sm_100a."""
    w = encode_idesc("mxf4", 128, 128)
    for arch in ("sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f"):
        assert validate_idesc(w, "mxf4", scale_vec="block32", arch=arch).ok, arch
        assert validate_idesc(w, "mxf4", scale_vec="2X", arch=arch).ok == (arch == "sm_100a"), arch


def test_i8_targets():
    """E20: .kind::i8 on sm_100a and sm_110a only (sm_103a is not listed)."""
    w = encode_idesc("i8", 128, 128)
    ok = {a: validate_idesc(w, "i8", arch=a).ok
          for a in ("sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f")}
    assert ok == {"sm_100a": True, "sm_100f": False, "sm_103a": False, "sm_103f": False, "sm_110a": True,
                  "sm_110f": False}


# ---------------------------------------------------------------------------------------------
# The legal space, exhaustively.

#: Tables 54/55 and §9.7.16.10.7.2-3 as the tests model them: (kind, K) -> {scale vector size:
#: (scale types, legal scale factor IDs)}.
def scale_vecs(kind: str, k: int) -> dict[str, tuple[tuple[str, ...], tuple[int, ...]]]:
    out: dict[str, tuple[tuple[str, ...], tuple[int, ...]]] = {}
    if kind == "mxf8f6f4":
        out["1X"] = out["block32"] = (("ue8m0",), (0, 1, 2, 3))
    elif k == 96:
        out["block32"] = (("ue8m0",), (0, 1, 2, 3))
        if kind == "mxf4nvf4":
            out["block16"] = (("ue8m0", "ue4m3"), (0, 2))
    else:
        out["2X"] = out["block32"] = (("ue8m0",), (0, 2))
        if kind == "mxf4nvf4":
            out["4X"] = out["block16"] = (("ue8m0", "ue4m3"), (0,))
    return out


def legal_space(kind: str) -> Iterator[tuple[int, int, dict[str, Any], dict[str, Any]]]:
    """Every legal (M, N, encode_idesc arguments, context) for ``kind``: each Table 39 row
    (.ws x cta_group x sparsity x K) x M x N x type combination x major-ness (Tables 49, 50, 52)
    x negate x saturate x sparsity selector x maximum shift x scale vector size x scale type x
    scale factor IDs."""
    for row in rows_of(kind):
        ctx = {"cta_group": row.cta_group, "ws": row.ws, "sp": row.sparse, "a_tmem": False,
               "arch": "sm_103a" if row.k == 96 else "sm_100a"}
        for dtype, ab in TYPE_ROWS[kind]:
            for a, b in itertools.product(ab, ab):
                if kind == "f16" and a != b and dtype == "f16":
                    continue
                for m, n in itertools.product(row.m, row.n):
                    a_majors = ("k", "mn") if TRANSPOSE_OK[kind] and TYPE_BITS[a] >= 8 else ("k",)
                    b_step = 16 if row.cta_group == 1 else 32
                    b_ok = TYPE_BITS[b] >= 16 or (TYPE_BITS[b] == 8 and n % b_step == 0)
                    b_majors = ("k", "mn") if TRANSPOSE_OK[kind] and b_ok else ("k",)
                    negs = (False, True) if NEGATE_OK[kind] else (False,)
                    base = {"atype": a, "btype": b, "sparse": row.sparse}
                    if dtype is not None:
                        base["dtype"] = dtype
                    if row.k == 96:
                        base["k"] = 96
                    if kind in DENSE_KINDS:
                        extra = [{"sparsity_selector": s, "max_shift": ms, "saturate": sat}
                                 for s in (SELECTOR_VALUES[kind] if row.sparse else (0,))
                                 for ms in (tuple(MAX_SHIFT_CODES) if row.ws else (0,))
                                 for sat in ((False, True) if kind == "i8" else (False,))]
                    else:
                        extra = []
                        for name, (types, ids) in scale_vecs(kind, row.k).items():
                            for st_, sa, sb in itertools.product(types, ids, ids):
                                extra.append({"scale_type": st_, "a_sf_id": sa, "b_sf_id": sb, "_scale_vec": name})
                    for am, bm, na, nb, x in itertools.product(a_majors, b_majors, negs, negs, extra):
                        kw = {**base, **x, "a_major": am, "b_major": bm, "negate_a": na, "negate_b": nb}
                        c = dict(ctx)
                        if "_scale_vec" in kw:
                            c["scale_vec"] = kw.pop("_scale_vec")
                        yield m, n, kw, c


#: Members of the legal space per kind (the validation figures quote these).
LEGAL_COUNTS = {"tf32": 9792, "f16": 48960, "f8f6f4": 88032, "i8": 5120, "mxf8f6f4": 602112, "mxf4": 5632,
                "mxf4nvf4": 8448}  # mxf4 kinds: E41 adds a one-CTA K = 96 row (16 N values)


@pytest.mark.parametrize("kind", KINDS)
def test_legal_space_encodes_validates_clean_and_round_trips(kind):
    count = 0
    for m, n, kw, ctx in legal_space(kind):
        # the encoder with the context its fast path takes; the validator with all of it
        w = encode_idesc(kind, m, n, **kw, cta_group=ctx["cta_group"], ws=ctx["ws"], a_tmem=ctx["a_tmem"])
        assert w == spec_encode_idesc(kind, m, n, **{k: v for k, v in kw.items()})
        report = validate_idesc(w, kind, **ctx)
        assert not report.findings, (m, n, kw, ctx, report.findings)
        assert not report.not_checked or all(not n.missing for n in report.not_checked)
        values = report.decoded["idesc"].values()
        assert (values["m"], values["n"]) == (m, n)
        for name in ("atype", "btype", "a_major", "b_major", "negate_a", "negate_b", "sparse"):
            assert values[name] == kw[name], name
        count += 1
    assert count == LEGAL_COUNTS[kind]


@pytest.mark.parametrize("kind", KINDS)
def test_shape_rule_exactly_matches_table39(kind):
    """For every context, M x N over the field's whole domain: the shape rules flag exactly the
    pairs Table 39 (and Table 50 for transposed 8-bit B) lacks."""
    for row in rows_of(kind):
        ctx = {"cta_group": row.cta_group, "ws": row.ws}
        kw = {"sparse": row.sparse, **({"k": 96} if row.k == 96 else {})}
        for m, n in itertools.product(VALID_M[kind], VALID_N[kind]):
            w = encode_idesc(kind, m, n, **kw, check=False)
            codes = set(validate_idesc(w, kind, **ctx).codes)
            legal = m in row.m and n in row.n
            assert ({"IDESC-M-SHAPE", "IDESC-N-SHAPE"} & codes == set()) == legal, (m, n, row, codes)


# ---------------------------------------------------------------------------------------------
# The encoder's fast path is the validator.


@st.composite
def idesc_attempts(draw: st.DrawFn) -> tuple[str, int, int, dict[str, Any], dict[str, Any]]:
    kind = draw(st.sampled_from(KINDS))
    m = draw(st.sampled_from(VALID_M[kind]))
    n = draw(st.sampled_from(VALID_N[kind]))
    kw: dict[str, Any] = {"atype": draw(st.sampled_from(tuple(AB_CODES[kind]))),
                          "btype": draw(st.sampled_from(tuple(AB_CODES[kind]))),
                          "sparse": draw(st.booleans())}
    if TRANSPOSE_OK[kind]:
        kw["a_major"] = draw(st.sampled_from(("k", "mn")))
        kw["b_major"] = draw(st.sampled_from(("k", "mn")))
    if kind in DENSE_KINDS:
        kw["max_shift"] = draw(st.sampled_from(tuple(MAX_SHIFT_CODES)))
        if kw["sparse"]:
            kw["sparsity_selector"] = draw(st.sampled_from(SELECTOR_VALUES[kind]))
    ctx = {"cta_group": draw(st.sampled_from((None, 1, 2))), "ws": draw(st.sampled_from((None, False, True))),
           "a_tmem": draw(st.sampled_from((None, False, True)))}
    if draw(st.booleans()):  # the context the encoder's fast path does not take
        ctx |= {"sp": draw(st.sampled_from((None, False, True))),
                "scale_vec": draw(st.sampled_from((None, *descgen.SCALE_VECS))),
                "arch": draw(st.sampled_from((None, "sm_100a", "sm_103a", "sm_110f", "sm_101a")))}
    return kind, m, n, kw, ctx


@settings(max_examples=1500, deadline=None)
@given(idesc_attempts())
def test_encoder_accepts_exactly_what_validate_accepts(attempt):
    """Refused exactly when validate finds an error; else the word carries exactly the findings
    validate reports (warnings, notes), or none: a descgen.Word either way."""
    kind, m, n, kw, ctx = attempt
    word = encode_idesc(kind, m, n, **kw, **ctx, check=False)
    report = validate_idesc(word, kind, **ctx)
    assert word.findings == report.findings
    try:
        checked = encode_idesc(kind, m, n, **kw, **ctx)
    except EncodeError as e:
        assert not report.ok
        assert {f.code for f in e.findings} == {f.code for f in report.errors}
    else:
        assert report.ok, report.errors
        assert checked == word and checked.findings == report.findings
        assert checked.__class__ is descgen.Word


# ---------------------------------------------------------------------------------------------
# Random words.


_CONTEXTS = st.fixed_dictionaries({
    "cta_group": st.sampled_from((None, 1, 2)),
    "ws": st.sampled_from((None, False, True)),
    "sp": st.sampled_from((None, False, True)),
    "scale_vec": st.sampled_from((None, *descgen.SCALE_VECS)),
    "a_tmem": st.sampled_from((None, False, True)),
    "arch": st.sampled_from((None, "sm_100a", "sm_100f", "sm_103a", "sm_110a")),
})


@settings(max_examples=1500, deadline=None)
@given(word=st.integers(0, 2**32 - 1), kind=st.sampled_from(KINDS), ctx=_CONTEXTS)
def test_random_idesc_word_findings_name_what_the_word_holds(word, kind, ctx):
    """A random word validates clean, or every error names a field of the layout (or of the
    context) and carries the value the word (or the context) holds there."""
    report = validate_idesc(word, kind, **ctx)
    assert set(report.codes) <= set(all_codes())
    d = report.decoded["idesc"]
    values = {f.name: (f.value if f.type in ("uint", "flag", "enum") else f.raw) for f in d.fields}
    for f in report.errors:
        if f.field in values:
            if f.code.endswith("-CODE"):
                assert f.value == d[f.field].raw
            else:
                assert f.value == values[f.field], f
        elif f.field in ("k", "kind"):
            continue
        else:
            assert f.field in CONTEXT_NAMES, f
            assert f.value == report.context[f.field], f
    for name, (lo, hi) in spec_bits(kind).items():  # the decoded word is the word
        assert d[name].raw == (word >> lo) & ((1 << (hi - lo + 1)) - 1)


@settings(max_examples=800, deadline=None)
@given(word=st.integers(0, 2**64 - 1), arch=st.sampled_from((None, "sm_100a", "sm_103a")),
       pattern_start=st.sampled_from((None, 0, 0x80, 0x580, 0x400)))
def test_random_smem_word_validates_totally(word, arch, pattern_start):
    report = validate_smem(word, arch=arch, pattern_start=pattern_start)
    assert set(report.codes) <= set(all_codes())
    values = report.decoded["smem"].values()
    for f in report.errors:
        assert f.field in values or f.field.startswith("reserved") or f.field in ("version", "fixed_53", "arch"), f


@settings(max_examples=800, deadline=None)
@given(word=st.integers(0, 2**64 - 1), m=st.sampled_from((None, 32, 64, 128, 256)),
       ws=st.sampled_from((None, False, True)))
def test_random_zcm_word_validates_totally(word, m, ws):
    report = validate_zcm(word, m=m, n=None if m is None else 128, ws=ws)
    assert ("ZCM-M" in report.codes) == (m == 256)
    assert ("ZCM-WS" in report.codes) == (ws is False)


# ---------------------------------------------------------------------------------------------
# One instruction.


A128 = dict(start_address=0x400, lbo=16, sbo=1024, swizzle="128B")
B128 = dict(start_address=0x4400, lbo=16, sbo=1024, swizzle="128B")


def test_check_mma_clean_instruction():
    r = check_mma(idesc=encode_idesc("f16", 128, 256), kind="f16", a_desc=encode_smem(**A128),
                  b_desc=encode_smem(**B128), cta_group=1, ws=False, sp=False, arch="sm_100a")
    assert not r.findings and set(r.decoded) == {"idesc", "a_desc", "b_desc"}


def test_check_mma_prefixes_fields_by_word():
    a = encode_smem(**{**A128, "lbo_mode": "absolute", "lbo": 0x800})
    r = check_mma(idesc=encode_idesc("f16", 128, 256), kind="f16", a_desc=a, b_desc=encode_smem(**B128), arch="sm_100a")
    assert ("SMEM-LBO-MODE-ARCH", "a_desc.arch") in {(f.code, f.field) for f in r.findings}


def test_check_mma_needs_exactly_one_a_operand():
    for kwargs in ({}, {"a_desc": encode_smem(**A128), "a_tmem": True}):
        with pytest.raises(UsageError) as exc:
            check_mma(idesc=encode_idesc("f16", 128, 256), kind="f16", b_desc=encode_smem(**B128), **kwargs)
        assert exc.value.code == "MMA-A-OPERAND"
    # A in tensor memory: Table 51 says K-major only
    r = check_mma(idesc=encode_idesc("f16", 128, 256, a_major="mn"), kind="f16", b_desc=encode_smem(**B128),
                  a_tmem=True)
    assert r.codes == ("IDESC-A-MAJOR-TMEM",)


def test_check_mma_zcm_limits_come_from_the_idesc_m():
    """Table 45: column shift at most 16 for M = 32; the zcm operand exists only on .ws."""
    zcm = encode_zcm(skip_span=2, use_span=3, column_shift=24)
    idesc32 = encode_idesc("f16", 32, 128, cta_group=1, ws=True)
    r = check_mma(idesc=idesc32, kind="f16", a_desc=encode_smem(**A128), b_desc=encode_smem(**B128), zcm=zcm, ws=True)
    assert [(f.code, f.field) for f in r.errors] == [("ZCM-COLUMN-SHIFT-M", "zcm.column_shift")]
    idesc64 = encode_idesc("f16", 64, 128)
    r = check_mma(idesc=idesc64, kind="f16", a_desc=encode_smem(**A128), b_desc=encode_smem(**B128), zcm=zcm, ws=True)
    assert r.ok


def test_encoders_take_context():
    with pytest.raises(EncodeError) as exc:
        encode_idesc("f16", 256, 128, cta_group=1)
    assert exc.value.code == "IDESC-M-SHAPE"
    assert encode_idesc("f16", 256, 128, cta_group=2) == encode_idesc("f16", 256, 128)
    with pytest.raises(EncodeError) as exc:
        encode_smem(**{**A128, "lbo_mode": "absolute", "lbo": 0x800}, arch="sm_100a")
    assert exc.value.code == "SMEM-LBO-MODE-ARCH"
    with pytest.raises(EncodeError) as exc:
        encode_zcm(skip_span=1, use_span=1, column_shift=20, m=32)
    assert exc.value.code == "ZCM-COLUMN-SHIFT-M"
    w = encode_zcm(skip_span=1, use_span=1, column_shift=20, m=32, check=False)
    assert [f.code for f in w.findings] == ["ZCM-COLUMN-SHIFT-M"]
    # warnings never stop an encoder
    assert encode_smem(start_address=0x580, lbo=16, sbo=1024, swizzle="128B") == encode_smem(
        start_address=0x580, lbo=16, sbo=1024, swizzle="128B", check=False)
