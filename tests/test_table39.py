"""Table 39 walked against every context, failing closed.

Every kind x cta_group (1, 2, not given) x .ws (yes, no, not given) x sparsity x K (the kind's
own and 96) x every M and N the field domain allows: a combination some Table 39 row lists
validates with no error and encodes; every other one is an error in ``validate_idesc`` and makes
``encode_idesc`` raise. The rows are the test suite's own model of Table 39 (``conftest.py``),
not ``tables/shapes.toml``.

Then the encoder's fast path (the sets ``descgen.model.facts.shape_keys``, ``major_keys`` and
``selector_keys``, plus the kind's type combinations) is checked equal to what the rules decide
over the whole space, factor by factor and on random points of the full product.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from descgen import EncodeError, decode_idesc, encode_idesc, validate_idesc
from descgen.model.catalog import catalog, constraints
from descgen.rules.checks import rule_impl
from descgen.model.context import no_context
from descgen.model.facts import kind_facts, major_keys, selector_keys, shape_keys, shape_rows

from conftest import AB_CODES, DENSE_KINDS, K_OF, KINDS, MXF4_KINDS, TABLE39, TRANSPOSE_OK, TYPE_BITS, VALID_M, VALID_N

CONTEXTS = tuple(itertools.product((1, 2, None), (True, False, None)))  # (cta_group, ws)
#: The codes that say a shape (or its context) has no Table 39 row.
SHAPE_CODES = {"IDESC-M-SHAPE", "IDESC-N-SHAPE", "IDESC-K-VALUE", "MMA-WS-CTA-GROUP", "MMA-WS-KIND"}
SPARSE_BIT = 1 << 2  # Tables 42-44, bit 2


def listed(kind: str, cta_group: int | None, ws: bool | None, sparse: bool, k: int, m: int, n: int) -> bool:
    """Some row of Table 39 lists the combination (a context not given matches every row)."""
    return any(r.kind == kind and cta_group in (None, r.cta_group) and ws in (None, r.ws) and r.sparse == sparse
               and r.k == k and m in r.m and n in r.n for r in TABLE39)


def k_cases(kind: str) -> tuple[tuple[bool, int], ...]:
    """(sparse, K): the kind's own K, dense and sparse, and K = 96 both ways."""
    return ((False, K_OF[kind][0]), (True, K_OF[kind][1]), (False, 96), (True, 96))


def k_dim(k: int) -> str:
    return "96" if k == 96 else "64/128"


def word_for(kind: str, m: int, n: int, sparse: bool, k: int, **kw: Any) -> int | None:
    """The word with these fields (rules not applied), or None when no bit can hold K (K = 96
    outside Table 44). Sparse K = 96 is bit 31 and bit 2 both set."""
    if k == 96 and kind not in MXF4_KINDS:
        return None
    if k == 96 and sparse:
        return int(encode_idesc(kind, m, n, k=96, check=False, **kw)) | SPARSE_BIT
    return int(encode_idesc(kind, m, n, sparse=sparse, k=96 if k == 96 else None, check=False, **kw))


# ---------------------------------------------------------------------------------------------
# The walk.


@pytest.mark.parametrize("kind", KINDS)
def test_table39_walk_every_context_fails_closed(kind):
    listed_count = 0
    for sparse, k in k_cases(kind):
        for m, n in itertools.product(VALID_M[kind], VALID_N[kind]):
            word = word_for(kind, m, n, sparse, k)
            for cta_group, ws in CONTEXTS:
                ctx = {"cta_group": cta_group, "ws": ws}
                legal = listed(kind, cta_group, ws, sparse, k, m, n)
                listed_count += legal
                where = (kind, m, n, sparse, k, ctx)
                # the fast path's set says the same as the table (K-major B: no Table 50 key)
                assert ((m, n, sparse, k_dim(k), False) in shape_keys(kind, cta_group, ws)) == legal, where
                if word is not None:
                    report = validate_idesc(word, kind, **ctx)
                    if legal:
                        assert report.ok and not report.findings, (where, report.findings)
                    else:
                        assert not report.ok, where
                        assert {f.code for f in report.errors} & SHAPE_CODES, (where, report.errors)
                if legal:
                    assert encode_idesc(kind, m, n, sparse=sparse, k=k, **ctx) == word
                else:
                    with pytest.raises(EncodeError) as err:
                        encode_idesc(kind, m, n, sparse=sparse, k=k, **ctx)
                    assert {f.code for f in err.value.findings} & SHAPE_CODES, (where, err.value.findings)
    assert listed_count > 0


# ---------------------------------------------------------------------------------------------
# One test per hole found in the rules before they failed closed.


@pytest.mark.parametrize("kind", MXF4_KINDS)
def test_e41_k96_with_cta_group_1_follows_nvidias_libraries(kind):
    # E41: CUTLASS's SM103_MXF4_ULTRA_SS_VS and CuTe DSL's SM103MmaMXF4NVF4Op issue K = 96 with one
    # CTA, M = 128, N a multiple of 16; Table 39 prints K1 only in its cta_group::2 rows.
    word = encode_idesc(kind, 128, 128, k=96, cta_group=1, ws=False, arch="sm_103a")
    assert validate_idesc(word, kind, cta_group=1, ws=False, arch="sm_103a").ok
    assert validate_idesc(word, kind, cta_group=1, ws=False, arch="sm_100a").codes == ("IDESC-K96-ARCH",)
    with pytest.raises(EncodeError) as err:  # N steps by 16
        encode_idesc(kind, 128, 136, k=96, cta_group=1, arch="sm_103a")
    assert {f.code for f in err.value.findings} == {"IDESC-N-SHAPE"}
    # M = 256 with K = 96 is the pair's M: legal under cta_group::2 only
    word = encode_idesc(kind, 256, 128, k=96)
    assert validate_idesc(word, kind, cta_group=2, ws=False, arch="sm_103a").ok
    report = validate_idesc(word, kind, cta_group=1, ws=False, arch="sm_103a")
    assert report.codes == ("IDESC-M-SHAPE",)
    (f,) = report.findings
    assert (f.field, f.value, f.allowed) == ("m", 256, "128")
    # sparse has no K = 96 row (bit 2 and bit 31 both set)
    assert validate_idesc(int(word) | 4, kind, cta_group=1, arch="sm_103a").codes == ("IDESC-K-VALUE",)


@pytest.mark.parametrize("kind", MXF4_KINDS)
def test_k96_n_not_a_multiple_of_16_is_an_error(kind):
    # Table 39's K = 96 rows step N by 16, in whatever context (none, its own, or the one-CTA row
    # of E41, whose M is 128)
    for ctx in ({}, {"cta_group": 2}, {"cta_group": 1}, {"cta_group": 1, "ws": False}):
        m = 128 if ctx.get("cta_group") == 1 else 256
        word = encode_idesc(kind, m, 136, k=96, check=False)
        report = validate_idesc(word, kind, **ctx)
        assert "IDESC-N-SHAPE" in report.codes, ctx
        assert next(f for f in report.findings if f.code == "IDESC-N-SHAPE").allowed == "16..256 step 16"
        with pytest.raises(EncodeError) as err:
            encode_idesc(kind, m, 136, k=96, **ctx)
        assert "IDESC-N-SHAPE" in {f.code for f in err.value.findings}, ctx
    assert "IDESC-N-SHAPE" in {f.code for f in decode_idesc(word, kind).findings}


@pytest.mark.parametrize("kind", MXF4_KINDS)
@pytest.mark.parametrize("op", ["a", "b"])
def test_sf_id_1_and_3_no_scale_vector_size_allows_are_errors(kind, op):
    code = f"IDESC-{op.upper()}-SF-ID-SCALE-VEC"
    for sparse, sf in itertools.product((False, True), (1, 3)):  # K = 64 dense, K = 128 sparse
        word = encode_idesc(kind, 128, 128, sparse=sparse, check=False, **{f"{op}_sf_id": sf})
        for report in (validate_idesc(word, kind), validate_idesc(word, kind, cta_group=1, ws=False)):
            assert report.codes == (code,)
            assert (report.findings[0].value, report.findings[0].allowed) == (sf, "0, 2")
        assert decode_idesc(word, kind).findings[0].code == code
        with pytest.raises(EncodeError) as err:
            encode_idesc(kind, 128, 128, sparse=sparse, **{f"{op}_sf_id": sf})
        assert err.value.code == code
    # the same IDs are legal with K = 96 (.block32, Figures 234-237) and for mxf8f6f4 (1X)
    for sf in (1, 3):
        assert validate_idesc(encode_idesc(kind, 256, 128, k=96, **{f"{op}_sf_id": sf}), kind).ok
        assert validate_idesc(encode_idesc("mxf8f6f4", 128, 128, **{f"{op}_sf_id": sf}), "mxf8f6f4").ok


def test_sf_id_rule_fails_closed_without_a_scale_vec_row():
    # no [[scale_vec]] row covers mxf4 with K = 32: even ID 0 is reported, never passed
    rule = catalog()["IDESC-A-SF-ID-SCALE-VEC"]
    facts = {**no_context(), "kind": "mxf4", "k": 32, "a_sf_id": 0}
    (f,) = rule_impl(rule.code)(rule, facts, constraints())
    assert (f.code, f.field, f.severity) == (rule.code, "a_sf_id", "error") and f.allowed.startswith("none")


# ---------------------------------------------------------------------------------------------
# The encoder's fast path equals the rules.


def _b8_type(kind: str) -> str | None:
    """An 8-bit B type of the kind that may be MN-major (Table 50's key), if any."""
    return next((t for t in AB_CODES[kind] if TYPE_BITS[t] == 8), None) if TRANSPOSE_OK[kind] else None


@pytest.mark.parametrize("kind", [k for k in KINDS if _b8_type(k)])
def test_fast_shape_keys_with_transposed_8bit_b_equal_the_rules(kind):
    """The Table 50 half of shape_keys (the K-major half is in the walk above)."""
    b = _b8_type(kind)
    for sparse, k in k_cases(kind):
        for m, n in itertools.product(VALID_M[kind], VALID_N[kind]):
            word = word_for(kind, m, n, sparse, k, atype=b, btype=b, b_major="mn")
            if word is None:
                continue
            for cta_group, ws in CONTEXTS:
                ok = validate_idesc(word, kind, cta_group=cta_group, ws=ws).ok
                assert ((m, n, sparse, k_dim(k), True) in shape_keys(kind, cta_group, ws)) == ok, \
                    (m, n, sparse, k, cta_group, ws)


def _domain(kind: str, field: str, absent: Any = None) -> tuple[Any, ...]:
    by = kind_facts(kind).plan.layout.by_name
    return tuple(by[field].domain(kind).members()) if field in by else (absent,)


@pytest.mark.parametrize("kind", KINDS)
def test_fast_selector_keys_equal_the_rules(kind):
    """Sparsity selector x maximum shift x scale factor IDs x sparsity x K x .ws, on a shape Table
    39 lists: a key is in the set exactly when the rules find nothing at all (no error, no warning)."""
    for sparse, k in k_cases(kind):
        for sel, shift, a, b in itertools.product(_domain(kind, "sparsity_selector", 0), _domain(kind, "max_shift", 0),
                                                  _domain(kind, "a_sf_id", 0), _domain(kind, "b_sf_id", 0)):
            kw = {"sparsity_selector": sel, "max_shift": shift} if kind in DENSE_KINDS else {"a_sf_id": a, "b_sf_id": b}
            word = word_for(kind, 256 if k == 96 else 128, 128, sparse, k, **kw)  # a listed shape
            if word is None:
                continue
            for ws in (None, False, True) if shape_rows(kind, None, True) else (None, False):  # (a .ws kind)
                clean = not validate_idesc(word, kind, ws=ws).findings
                assert ((sparse, k_dim(k), sel, shift, a, b) in selector_keys(kind, ws)) == clean, \
                    (sparse, k, sel, shift, a, b, ws)


@pytest.mark.parametrize("kind", KINDS)
def test_fast_major_keys_and_type_combos_equal_the_rules(kind):
    """Every type x major-ness x dtype x scale type, with A in tensor memory or not: the fast path
    takes it exactly when the rules accept it at 128 x 128, and its Table 50 flag is exactly when
    the rules refuse N = 8 (cta_group::1)."""
    facts = kind_facts(kind)
    for a_tmem, a, b, am, bm, d, s in itertools.product(
            (None, False, True), _domain(kind, "atype"), _domain(kind, "btype"), _domain(kind, "a_major"),
            _domain(kind, "b_major"), _domain(kind, "dtype"), _domain(kind, "scale_type")):
        b8 = major_keys(kind, a_tmem).get((a, am, b, bm))
        fast = b8 is not None and (a, b, d or facts.implied_dtype, s) in facts.combos
        kw = {"atype": a, "btype": b, "a_major": am, "b_major": bm, "dtype": d, "scale_type": s, "check": False}
        assert validate_idesc(encode_idesc(kind, 128, 128, **kw), kind, a_tmem=a_tmem).ok == fast, kw
        n8 = validate_idesc(encode_idesc(kind, 128, 8, **kw), kind, cta_group=1, a_tmem=a_tmem).ok
        assert n8 == (fast and not b8), kw


@st.composite
def _points(draw: st.DrawFn) -> tuple[str, int, int, dict[str, Any], dict[str, Any]]:
    """A random point of the whole product: kind, context, M, N, sparsity, K, types, majors,
    selectors."""
    kind = draw(st.sampled_from(KINDS))
    sparse = draw(st.booleans())
    kw: dict[str, Any] = {"sparse": sparse}
    if kind in MXF4_KINDS and not sparse:
        kw["k"] = draw(st.sampled_from((None, 96)))
    for field in ("atype", "btype", "a_major", "b_major", "dtype", "scale_type", "a_sf_id", "b_sf_id"):
        kw[field] = draw(st.sampled_from(_domain(kind, field, 0 if field.endswith("sf_id") else None)))
    if kind in DENSE_KINDS:
        kw["sparsity_selector"] = draw(st.sampled_from(_domain(kind, "sparsity_selector")))
        kw["max_shift"] = draw(st.sampled_from(_domain(kind, "max_shift")))
    ctx = {"cta_group": draw(st.sampled_from((None, 1, 2))), "ws": draw(st.sampled_from((None, False, True))),
           "a_tmem": draw(st.sampled_from((None, False, True)))}
    return kind, draw(st.sampled_from(VALID_M[kind])), draw(st.sampled_from(VALID_N[kind])), kw, ctx


@settings(max_examples=300, deadline=None)
@given(_points())
def test_fast_path_sets_equal_the_rules_on_the_whole_product(point):
    kind, m, n, kw, ctx = point
    facts = kind_facts(kind)
    kd = "96" if kw.get("k") == 96 else "64/128"
    b8 = major_keys(kind, ctx["a_tmem"]).get((kw["atype"], kw["a_major"], kw["btype"], kw["b_major"]))
    fast = (b8 is not None and (m, n, kw["sparse"], kd, b8) in shape_keys(kind, ctx["cta_group"], ctx["ws"])
            and (kw["sparse"], kd, kw.get("sparsity_selector", 0), kw.get("max_shift", 0), kw["a_sf_id"], kw["b_sf_id"])
            in selector_keys(kind, ctx["ws"])
            and (kw["atype"], kw["btype"], kw["dtype"] or facts.implied_dtype, kw["scale_type"]) in facts.combos)
    report = validate_idesc(encode_idesc(kind, m, n, **kw, check=False), kind, **ctx)
    assert (not report.findings) == fast, (report.findings, point)  # the fast path: nothing at all to report
    if report.ok:
        word = encode_idesc(kind, m, n, **kw, **ctx)
        assert word.findings == report.findings  # the warnings come back with the word
    else:
        with pytest.raises(EncodeError):
            encode_idesc(kind, m, n, **kw, **ctx)
