"""The table loader (descgen.model.loader): PTX Tables 39-45 as data, and its strictness."""

from __future__ import annotations

import copy
import itertools
import os

import pytest

import descgen
from descgen.model import loader
from descgen.model.loader import parse_layout, parse_shapes

from conftest import (
    AB_CODES,
    BITS_42,
    BITS_43,
    BITS_44,
    D_CODES,
    KINDS,
    N8,
    N16,
    N32,
    N_I8_CTA1,
    REPO,
    SCALE_CODES,
    TABLE39,
    VALID_M,
    VALID_N,
)

LAYOUT_NAMES = tuple(loader.LAYOUT_FILES)


# --------------------------------------------------------------------------------------------
# The shipped layouts.


def test_layout_files_are_the_seven_layout_tables():
    assert set(LAYOUT_NAMES) == {"idesc_dense", "idesc_mxf8f6f4", "idesc_mxf4", "smem_desc", "zcm_desc", "taddr",
                                 "wgmma_smem_desc"}
    assert loader.SMEM_LAYOUTS == ("smem_desc", "wgmma_smem_desc")
    assert loader.IDESC_LAYOUTS == ("idesc_dense", "idesc_mxf8f6f4", "idesc_mxf4")
    assert loader.KINDS == KINDS == descgen.KINDS


@pytest.mark.parametrize(
    "name, word, width",
    [
        ("idesc_dense", "idesc", 32),
        ("idesc_mxf8f6f4", "idesc", 32),
        ("idesc_mxf4", "idesc", 32),
        ("smem_desc", "smem", 64),
        ("zcm_desc", "zcm", 64),
        ("taddr", "taddr", 32),
        ("wgmma_smem_desc", "wgmma_smem", 64),
    ],
)
def test_layout_width_and_word(name, word, width):
    lay = loader.layout(name)
    assert (lay.word, lay.width, lay.name) == (word, width, name)
    assert lay.path == f"tables/{loader.LAYOUT_FILES[name]}"


@pytest.mark.parametrize("name", LAYOUT_NAMES)
def test_layout_tiles_word_exactly(name):
    lay = loader.layout(name)
    expected_lo = 0
    covered = 0
    for f in lay.fields:
        assert f.lo == expected_lo, f"{name}: field {f.name} starts at {f.lo}, expected {expected_lo}"
        assert f.hi >= f.lo
        field_bits = ((1 << f.width) - 1) << f.lo
        assert covered & field_bits == 0, f"{name}: field {f.name} overlaps"
        covered |= field_bits
        expected_lo = f.hi + 1
    assert expected_lo == lay.width
    assert covered == (1 << lay.width) - 1
    assert sum(f.width for f in lay.fields) == lay.width


@pytest.mark.parametrize("name", LAYOUT_NAMES)
def test_every_field_cites_a_source_and_has_unique_name(name):
    lay = loader.layout(name)
    names = [f.name for f in lay.fields]
    assert len(names) == len(set(names))
    for f in lay.fields:
        assert f.name.isidentifier()
        assert f.source.strip(), f.name
        assert f.description.strip(), f.name
        # every source names a PTX table or section
        assert "Table" in f.source or "§" in f.source, (f.name, f.source)
    assert lay.source.startswith(("PTX ISA 9.1 §9.7.16.4", "PTX ISA 9.1 §9.7.16.1.1", "PTX ISA 9.1 §9.7.15.5.1.2.2"))


@pytest.mark.parametrize("name", LAYOUT_NAMES)
def test_enum_codes_fit_their_width(name):
    lay = loader.layout(name)
    kinds = lay.kinds or (None,)
    for f in lay.fields:
        if f.type != "enum":
            continue
        for kind in kinds:
            codes = f.codes(kind)
            assert codes, (f.name, kind)
            assert len(set(codes.values())) == len(codes), (f.name, kind)  # no code used twice
            for member, code in codes.items():
                assert 0 <= code <= f.mask, (f.name, kind, member, code)


@pytest.mark.parametrize("name", LAYOUT_NAMES)
def test_uint_domains_fit_their_bits(name):
    lay = loader.layout(name)
    for kind in lay.kinds or (None,):
        for f in lay.fields:
            if f.type != "uint":
                continue
            for v in f.domain(kind).members():
                assert v % f.transform.align == 0
                assert 0 <= f.transform.encode(v) <= f.mask, (f.name, kind, v)
                assert f.transform.decode(f.transform.encode(v)) == v


@pytest.mark.parametrize("name", LAYOUT_NAMES)
def test_reserved_and_constant_fields(name):
    lay = loader.layout(name)
    for f in lay.fields:
        if f.type == "reserved":
            assert f.name == f"reserved_{f.lo}", f.name
            assert f.domain(None).members() == (0,)
        if f.type == "constant":
            assert 0 <= f.const <= f.mask


def test_smem_layout_rows_match_table_40():
    lay = loader.layout("smem_desc")
    rows = {f.name: (f.lo, f.hi, f.type) for f in lay.fields}
    assert rows == {
        "start_address": (0, 13, "uint"),
        "reserved_14": (14, 15, "reserved"),
        "lbo": (16, 29, "uint"),
        "reserved_30": (30, 31, "reserved"),
        "sbo": (32, 45, "uint"),
        "version": (46, 48, "constant"),
        "base_offset": (49, 51, "uint"),
        "lbo_mode": (52, 52, "enum"),
        "fixed_53": (53, 60, "constant"),
        "swizzle": (61, 63, "enum"),
    }
    assert lay.field("version").const == 0b001
    assert lay.field("fixed_53").const == 0  # "0xb00000000" is a typo for 0b00000000 (errata 1)
    assert dict(lay.field("swizzle").codes(None)) == {"none": 0, "128B_base32B": 1, "128B": 2, "64B": 4, "32B": 6}
    for name in ("start_address", "lbo", "sbo"):
        assert lay.field(name).transform.formula == "(x & 0x3FFFF) >> 4"


def test_zcm_layout_rows_match_table_45():
    lay = loader.layout("zcm_desc")
    rows = {f.name: (f.lo, f.hi) for f in lay.fields}
    expected = {f"start_count_{i}": (8 * i, 8 * i + 7) for i in range(4)}
    expected.update({f"first_span_{i}": (32 + i, 32 + i) for i in range(4)})
    expected.update(
        reserved_36=(36, 38), nonzero_mask=(39, 39), skip_span=(40, 47), use_span=(48, 55),
        column_shift=(56, 61), reserved_62=(62, 63),
    )
    assert rows == expected
    # the table after Table 45: M -> number of sub-masks
    assert descgen.submask_counts() == {128: 1, 64: 2, 32: 4}


@pytest.mark.parametrize(
    "name, bits",
    [("idesc_dense", BITS_42), ("idesc_mxf8f6f4", BITS_43), ("idesc_mxf4", BITS_44)],
)
def test_idesc_value_fields_sit_where_the_spec_puts_them(name, bits):
    lay = loader.layout(name)
    got = {f.name: (f.lo, f.hi) for f in lay.fields if f.is_value}
    assert got == bits


@pytest.mark.parametrize("name", loader.IDESC_LAYOUTS)
def test_idesc_enum_members_match_spec(name):
    lay = loader.layout(name)
    for kind in lay.kinds:
        assert dict(lay.field("atype").codes(kind)) == AB_CODES[kind]
        assert dict(lay.field("btype").codes(kind)) == AB_CODES[kind]
        if kind in D_CODES:
            assert dict(lay.field("dtype").codes(kind)) == D_CODES[kind]
        else:
            assert "dtype" not in lay.by_name
            assert lay.implied == {"dtype": "f32"}
        if kind in SCALE_CODES:
            assert dict(lay.field("scale_type").codes(kind)) == SCALE_CODES[kind]
        assert set(lay.field("m").domain(kind).members()) == set(VALID_M[kind])
        assert set(lay.field("n").domain(kind).members()) == set(VALID_N[kind])


# --------------------------------------------------------------------------------------------
# Shared rows of Tables 42, 43 and 44.


def _contributions(f, kind):
    """{logical value: bits it puts in the word} for one field under one kind."""
    if f.type == "enum":
        return {v: code << f.lo for v, code in f.codes(kind).items()}
    if f.type == "flag":
        return {v: int(v) << f.lo for v in f.domain(kind).members()}
    if f.type == "uint":
        return {v: f.transform.encode(v) << f.lo for v in f.domain(kind).members()}
    return {0: 0}


# Where the spec itself prints different rows for the same field (and nowhere else):
#  - Table 44 "E2M1 = 1" for atype/btype (Tables 42/43: "E2M1 = 5"), and btype is bits 10-11 (bit
#    12 reserved) in Table 44 but 10-12 in Tables 42/43;
#  - M: "M >> 4" in bits 24-28 (Table 42) vs "M >> 7" in bits 27-28 (Tables 43/44). The bits a
#    legal M puts on the wire still agree (checked below), but the field starts at another bit.
EXPECTED_DISAGREEMENTS = {
    ("atype", "idesc_dense", "idesc_mxf4", "code e2m1"),
    ("atype", "idesc_mxf8f6f4", "idesc_mxf4", "code e2m1"),
    ("btype", "idesc_dense", "idesc_mxf4", "code e2m1"),
    ("btype", "idesc_mxf8f6f4", "idesc_mxf4", "code e2m1"),
    ("btype", "idesc_dense", "idesc_mxf4", "bits"),
    ("btype", "idesc_mxf8f6f4", "idesc_mxf4", "bits"),
    ("m", "idesc_dense", "idesc_mxf8f6f4", "bits"),
    ("m", "idesc_dense", "idesc_mxf4", "bits"),
}


def test_idesc_layouts_agree_on_shared_rows():
    lays = [loader.layout(n) for n in loader.IDESC_LAYOUTS]
    names = {f.name for lay in lays for f in lay.fields}
    shared = sorted(n for n in names if sum(n in lay.by_name for lay in lays) > 1)
    # the rows the three tables print alike (sanity: the check below really covers them)
    for must in ("sparse", "atype", "btype", "negate_a", "negate_b", "a_major", "b_major", "n", "m", "reserved_6"):
        assert must in shared
    disagreements = set()
    for name in shared:
        for a, b in itertools.combinations([lay for lay in lays if name in lay.by_name], 2):
            fa, fb = a.field(name), b.field(name)
            assert fa.type == fb.type, name
            if (fa.lo, fa.hi) != (fb.lo, fb.hi):
                disagreements.add((name, a.name, b.name, "bits"))
            # same meaning: every value legal in both puts the same bits in the word
            for ka in a.kinds:
                for kb in b.kinds:
                    ca, cb = _contributions(fa, ka), _contributions(fb, kb)
                    for v in set(ca) & set(cb):
                        if ca[v] != cb[v]:
                            disagreements.add((name, a.name, b.name, f"code {v}"))
    assert disagreements == EXPECTED_DISAGREEMENTS


def test_m_bits_agree_across_tables_for_legal_m():
    """Errata 5: bits 27-28 = M >> 7 (Tables 43/44) and bits 24-28 = M >> 4 (Table 42) agree for 128/256."""
    dense = loader.layout("idesc_dense").field("m")
    for name in ("idesc_mxf8f6f4", "idesc_mxf4"):
        f = loader.layout(name).field("m")
        for m in (128, 256):
            assert f.transform.encode(m) << f.lo == dense.transform.encode(m) << dense.lo == m << 20


# --------------------------------------------------------------------------------------------
# Table 39.


def _rows(kind, *, ws=None, cta=None, sparse=None):
    return [
        r for r in loader.shapes().rows
        if r.kind == kind and (ws is None or r.ws == ws) and (cta is None or r.cta_group == cta)
        and (sparse is None or r.sparse == sparse)
    ]


def test_table39_matches_spec_model_row_for_row():
    got = sorted((r.kind, r.ws, r.cta_group, r.sparse, tuple(r.m), tuple(r.n), r.k) for r in loader.shapes().rows)
    want = sorted((r.kind, r.ws, r.cta_group, r.sparse, r.m, r.n, r.k) for r in TABLE39)
    assert got == want
    for r in loader.shapes().rows:
        assert r.source.startswith("Table 39")
        assert ("E41" in r.source) == (r.k == 96 and r.cta_group == 1)


def test_table39_f16_cta1_dense():
    (row,) = _rows("f16", ws=False, cta=1, sparse=False)
    assert row.m == (64, 128)
    assert row.n == tuple(range(8, 257, 8)) == N8
    assert row.k == 16


def test_table39_f16_cta2_steps_of_16():
    (row,) = _rows("f16", ws=False, cta=2, sparse=False)
    assert row.m == (128, 256) and row.n == N16 and row.k == 16
    (row,) = _rows("f16", ws=False, cta=2, sparse=True)
    assert row.k == 32


def test_table39_i8_n_values():
    (row,) = _rows("i8", ws=False, cta=1, sparse=False)
    for n in (8, 16, 24, 32, 48, 64, 256):
        assert n in row.n
    for n in (40, 56, 72, 264):
        assert n not in row.n
    assert row.n == N_I8_CTA1
    (row2,) = _rows("i8", ws=False, cta=2, sparse=False)
    assert row2.n == N32
    assert 40 not in loader.shapes().n_values("i8")


def test_table39_mxf8f6f4_cta2_sparse_only_m256():
    (row,) = _rows("mxf8f6f4", ws=False, cta=2, sparse=True)
    assert row.m == (256,) and row.k == 64
    (dense,) = _rows("mxf8f6f4", ws=False, cta=2, sparse=False)
    assert dense.m == (128, 256)


def test_table39_ws_rows_only_cta_group_1_and_not_for_mx_kinds():
    ws_rows = [r for r in loader.shapes().rows if r.ws]
    assert ws_rows
    assert {r.cta_group for r in ws_rows} == {1}
    assert {r.kind for r in ws_rows} == {"f16", "tf32", "f8f6f4", "i8"}
    for r in ws_rows:
        assert r.m == (32, 64, 128)
        assert r.n == ((64, 128) if r.sparse else (64, 128, 256))


def test_table39_k96_only_mxf4_kinds_dense_m256_cta2_or_m128_cta1():
    k96 = [r for r in loader.shapes().rows if r.k == 96]
    assert sorted(r.kind for r in k96) == ["mxf4", "mxf4", "mxf4nvf4", "mxf4nvf4"]
    for r in k96:
        want = (False, 2, False, (256,), N16) if r.cta_group == 2 else (False, 1, False, (128,), N16)  # E41
        assert (r.ws, r.cta_group, r.sparse, r.m, r.n) == want
        assert "sm_103a" in r.note


@pytest.mark.parametrize(
    "kind, dense, sparse",
    [("tf32", 8, 16), ("f16", 16, 32), ("f8f6f4", 32, 64), ("i8", 32, 64), ("mxf8f6f4", 32, 64),
     ("mxf4", 64, 128), ("mxf4nvf4", 64, 128)],
)
def test_table39_k_values(kind, dense, sparse):
    t = loader.shapes()
    expect_dense = (dense, 96) if kind in ("mxf4", "mxf4nvf4") else (dense,)
    assert t.k_values(kind, False) == expect_dense
    assert t.k_values(kind, True) == (sparse,)


def test_table39_type_rows():
    rows = {(r["kind"], r["dtype"]): (tuple(r["ab"]), tuple(r.get("scale", ()))) for r in loader.shapes().types}
    assert rows[("f16", "f16")] == (("f16",), ())
    assert rows[("f16", "f32")] == (("f16", "bf16"), ())
    assert rows[("tf32", "f32")] == (("tf32",), ())
    assert rows[("i8", "s32")] == (("s8", "u8"), ())
    assert set(rows[("f8f6f4", "f16")][0]) == {"e4m3", "e5m2", "e2m3", "e3m2", "e2m1"}
    assert rows[("mxf4nvf4", "f32")] == (("e2m1",), ("ue8m0", "ue4m3"))
    assert rows[("mxf4", "f32")] == (("e2m1",), ("ue8m0",))
    assert ("mxf8f6f4", "f16") not in rows


# --------------------------------------------------------------------------------------------
# Loader strictness: malformed tables raise TableError naming the file and the field.

PATH = "tables/x.toml"


def _base():
    return {
        "descriptor": {"word": "smem", "layout": "x", "width": 32, "title": "t", "source": "Table 40",
                       "kinds": ["f16"]},
        "defaults": {"f16": {"mode": "a"}},
        "field": [
            {"name": "lbo", "bits": "0-13", "type": "uint", "description": "d", "source": "Table 40",
             "transform": "matrix_descriptor_encode", "unit": "bytes"},
            {"name": "mode", "bits": "14-15", "type": "enum", "description": "d", "source": "Table 40",
             "members": {"a": 0, "b": 3}},
            {"name": "reserved_16", "bits": "16-31", "type": "reserved", "description": "d", "source": "Table 40"},
        ],
    }


def test_parse_layout_accepts_the_base_fixture():
    lay = parse_layout(_base(), PATH)
    assert [(f.name, f.lo, f.hi) for f in lay.fields] == [("lbo", 0, 13), ("mode", 14, 15), ("reserved_16", 16, 31)]
    assert lay.path == PATH


def _set(i, **kv):
    def mutate(d):
        d["field"][i].update(kv)
    return mutate


def _pop(i, key):
    def mutate(d):
        d["field"][i].pop(key)
    return mutate


def _members(i, **kv):
    def mutate(d):
        d["field"][i]["members"].update(kv)
    return mutate


def _dup(d):
    d["field"][1] = dict(d["field"][0], bits="14-15")


def _bad_default(d):
    d["defaults"]["f16"]["mode"] = "c"


@pytest.mark.parametrize(
    "mutate, field, words",
    [
        pytest.param(_set(0, bits="0-12"), "field 'mode'", ["gap", "13"], id="gap"),
        pytest.param(_set(2, bits="16-30"), "fields", ["gap", "31"], id="gap-at-end"),
        pytest.param(_set(0, bits="0-14"), "field 'mode'", ["overlap"], id="overlap"),
        pytest.param(_set(0, colour="red"), "field 'lbo'", ["unknown key", "colour"], id="unknown-key"),
        pytest.param(_members(1, c=4), "field 'mode'", ["code 4", "2 bit"], id="enum-code-too-wide"),
        pytest.param(_pop(0, "source"), "field 'lbo'", ["source"], id="missing-source"),
        pytest.param(_set(0, source=""), "field 'lbo'", ["source"], id="empty-source"),
        pytest.param(_set(0, transform="shr9"), "field 'lbo'", ["transform", "shr9"], id="unknown-transform"),
        pytest.param(_dup, "field 'lbo'", ["duplicate"], id="duplicate-name"),
        pytest.param(_set(0, bits="0..13"), "field 'lbo'", ["bits", "0..13"], id="bad-bits-string"),
        pytest.param(_set(0, bits="0-32"), "field 'lbo'", ["32-bit"], id="bits-beyond-width"),
        pytest.param(_bad_default, "defaults.f16", ["'mode'", "'c'", "not a legal value"], id="default-not-legal"),
        pytest.param(_set(1, default="c"), "field 'mode'", ["default", "'c'", "not a legal value"],
                     id="field-default-not-legal"),
        pytest.param(_set(2, default=0), "field 'reserved_16'", ["default"], id="default-on-reserved"),
        pytest.param(_set(1, type="bitfield"), "field 'mode'", ["bitfield"], id="unknown-type"),
        pytest.param(_set(2, members={"a": 0}), "field 'reserved_16'", ["do not apply"], id="key-for-wrong-type"),
        pytest.param(_set(1, members={"a": 0, "b": 0}), "field 'mode'", ["used twice"], id="code-used-twice"),
        pytest.param(_set(0, transform="identity", max=0x4000), "field 'lbo'", ["does not fit"],
                     id="uint-range-too-wide"),
        pytest.param(_set(0, min=32, max=16), "field 'lbo'", ["not an integer range"], id="uint-min-above-max"),
        pytest.param(_set(1, severity="fatal"), "field 'mode'", ["severity"], id="bad-severity"),
    ],
)
def test_parse_layout_rejects_malformed_field(mutate, field, words):
    data = _base()
    mutate(data)
    with pytest.raises(descgen.TableError) as info:
        parse_layout(data, PATH)
    err = info.value
    msg = str(err)
    assert msg.startswith(f"{PATH}: {field}: "), msg
    for w in words:
        assert w in msg, (w, msg)
    assert err.code == "TABLE-MALFORMED"
    assert err.path == PATH
    assert err.where == field
    assert isinstance(err, descgen.DescgenError)


@pytest.mark.parametrize(
    "mutate, where",
    [
        pytest.param(lambda d: d.update(extra=1), "file", id="unknown-top-level-key"),
        pytest.param(lambda d: d.pop("descriptor"), "descriptor", id="missing-descriptor"),
        pytest.param(lambda d: d["descriptor"].update(width=48), "descriptor", id="bad-width"),
        pytest.param(lambda d: d["descriptor"].pop("source"), "descriptor", id="descriptor-without-source"),
        pytest.param(lambda d: d["descriptor"].update(kinds=["f17"]), "descriptor", id="unknown-kind"),
        pytest.param(lambda d: d["defaults"].update(tf32={}), "defaults.tf32", id="defaults-for-foreign-kind"),
    ],
)
def test_parse_layout_rejects_malformed_descriptor(mutate, where):
    data = _base()
    mutate(data)
    with pytest.raises(descgen.TableError) as info:
        parse_layout(data, PATH)
    assert str(info.value).startswith(f"{PATH}: {where}: ")


def test_parse_layout_rejects_range_beyond_masking_transform():
    data = _base()
    data["field"][0]["max"] = 0x40000  # (0x40000 & 0x3FFFF) >> 4 == 0: would silently wrap to 0
    with pytest.raises(descgen.TableError) as info:
        parse_layout(data, PATH)
    assert str(info.value).startswith(f"{PATH}: field 'lbo': ")


def test_parse_layout_does_not_mutate_input():
    data = _base()
    snapshot = copy.deepcopy(data)
    parse_layout(data, PATH)
    assert data == snapshot


def _shapes_base():
    return {
        "table": {"source": "Table 39"},
        "shape": [{"kind": "f16", "ws": False, "cta_group": 1, "sparse": False, "m": [64, 128],
                   "n": {"min": 8, "max": 256, "step": 8}, "k": 16, "source": "Table 39"}],
    }


def test_parse_shapes_expands_ranges():
    t = parse_shapes(_shapes_base(), "tables/shapes.toml")
    assert t.rows[0].n == N8


@pytest.mark.parametrize(
    "mutate, where",
    [
        (lambda d: d["shape"][0].update(kind="f17"), "shape #1"),
        (lambda d: d["shape"][0].pop("k"), "shape #1"),
        (lambda d: d["shape"][0].update(colour=1), "shape #1"),
        (lambda d: d["shape"][0].update(n={"min": 8, "max": 256}), "shape #1"),
        (lambda d: d.update(table={}), "table"),
    ],
)
def test_parse_shapes_rejects_malformed(mutate, where):
    data = _shapes_base()
    mutate(data)
    with pytest.raises(descgen.TableError) as info:
        parse_shapes(data, "tables/shapes.toml")
    assert str(info.value).startswith(f"tables/shapes.toml: {where}: ")


def test_parsed_tables_cache_is_keyed_by_the_file(tmp_path, monkeypatch):
    """The per-user cache returns what tomllib parses, is rewritten when a file's stamp changes,
    and DESCGEN_NO_CACHE turns it off."""
    import marshal
    import tomllib

    from descgen.model import table_cache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("DESCGEN_CACHE_DIR", raising=False)
    monkeypatch.delenv("DESCGEN_NO_CACHE", raising=False)
    monkeypatch.setattr(table_cache, "_CACHE", None)
    fresh = table_cache.read_table("shapes.toml")
    with open(os.path.join(REPO, "tables", "shapes.toml"), "rb") as fh:
        assert fresh == tomllib.load(fh)
    cache_file = table_cache._cache_file()
    with open(cache_file, "rb") as fh:
        stored = marshal.load(fh)
    assert stored["shapes.toml"][1] == fresh
    # a stale stamp (the file changed) is parsed again, not served
    stored["shapes.toml"] = (("elsewhere", 0, 0), {"bogus": True})
    with open(cache_file, "wb") as fh:
        marshal.dump(stored, fh)
    monkeypatch.setattr(table_cache, "_CACHE", None)
    assert table_cache.read_table("shapes.toml") == fresh
    # a cache that cannot be read is ignored
    with open(cache_file, "wb") as fh:
        fh.write(b"not marshal")
    monkeypatch.setattr(table_cache, "_CACHE", None)
    assert table_cache.read_table("shapes.toml") == fresh
    monkeypatch.setenv("DESCGEN_NO_CACHE", "1")
    assert table_cache._cache_file() is None


def test_the_tables_cache_directory(monkeypatch, tmp_path):
    """``$XDG_CACHE_HOME/descgen`` (``~/.cache/descgen``), unless ``DESCGEN_CACHE_DIR`` names one;
    none with ``DESCGEN_NO_CACHE``."""
    from descgen.model import table_cache

    for name in ("DESCGEN_CACHE_DIR", "DESCGEN_NO_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert os.path.dirname(table_cache._cache_file()) == str(tmp_path / ".cache" / "descgen")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert os.path.dirname(table_cache._cache_file()) == str(tmp_path / "xdg" / "descgen")
    monkeypatch.setenv("DESCGEN_CACHE_DIR", str(tmp_path / "here"))
    assert os.path.dirname(table_cache._cache_file()) == str(tmp_path / "here")
    monkeypatch.setenv("DESCGEN_NO_CACHE", "1")
    assert table_cache._cache_file() is None
