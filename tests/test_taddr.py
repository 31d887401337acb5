"""Tensor memory addresses (PTX ISA 9.1 §9.7.16.1): the layout, the warp lane quarters
(§9.7.16.8.1), the allocation rules (§9.7.16.1.2, §9.7.16.7.1), the API and the CLI.

Expected values are the spec's own: §9.7.16.1.1's layout (lane in bits 31-16, column in bits
15-0), §9.7.16.1's 128 lanes x 512 columns, the access-restriction table of §9.7.16.8.1 and
tcgen05.alloc's nCols (unit 32, a power of 2, range [32, 512]).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import descgen
from descgen import EncodeError, UsageError, WordError, decode_taddr, encode_taddr, validate_taddr

from test_cli import run, run_json

# §9.7.16.8.1, the table "ID of the warp within the warpgroup | Accessible Lanes", as printed.
SPEC_QUARTERS = {0: (0, 31), 1: (32, 63), 2: (64, 95), 3: (96, 127)}
LANES, COLUMNS = 128, 512  # §9.7.16.1: 128 rows (lanes) x 512 columns per CTA
LEGAL_NCOLS = (32, 64, 128, 256, 512)
ILLEGAL_NCOLS = (0, 16, 48, 96, 1024, 31, 33, 384, 513)


# --------------------------------------------------------------------------------------------
# Concrete values.


@pytest.mark.parametrize("lane, column, word", [
    (0, 0, 0x00000000),
    (32, 0, 0x00200000),    # warp 1's first lane
    (64, 16, 0x00400010),
    (96, 256, 0x00600100),
    (127, 511, 0x007F01FF),  # the last cell
    (0, 511, 0x000001FF),
])
def test_encode_concrete(lane, column, word):
    assert encode_taddr(lane, column) == word
    d = decode_taddr(word)
    assert (d.value("lane"), d.value("column"), d.ok) == (lane, column, True)
    assert d["lane"].bits == "16-31" and d["column"].bits == "0-15"
    assert d["lane"].unit == "lanes" and d["column"].unit == "columns"


def test_e30_whole_valid_space_round_trips():
    """Every (lane, column) the tensor memory has: encode = lane << 16 | column, and back."""
    for lane in range(LANES):
        for column in range(COLUMNS):
            w = encode_taddr(lane, column)
            assert w == lane << 16 | column
            d = decode_taddr(w)
            assert d.values() == {"lane": lane, "column": column} and not d.findings


@settings(max_examples=500, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_decode_is_total_over_32_bit_words(word):
    d = decode_taddr(word)
    lane, column = word >> 16, word & 0xFFFF
    assert (d.value("lane"), d.value("column"), d.width) == (lane, column, 32)
    codes = {f.code for f in d.findings}
    assert ("TADDR-LANE-RANGE" in codes) == (lane >= LANES)
    assert ("TADDR-COLUMN-RANGE" in codes) == (column >= COLUMNS)
    assert codes <= {"TADDR-LANE-RANGE", "TADDR-COLUMN-RANGE"}
    assert d.ok == (lane < LANES and column < COLUMNS)
    # the derived warp is the spec's quarter, for a lane that exists
    if lane < LANES:
        warp = next(w for w, (lo, hi) in SPEC_QUARTERS.items() if lo <= lane <= hi)
        assert (d.value("warp") == warp
                and d.value("warp_lanes") == f"{SPEC_QUARTERS[warp][0]}..{SPEC_QUARTERS[warp][1]}")
    else:
        assert d.derived == ()


def test_e31_bits_30_31_set_are_a_lane_out_of_range():
    """E31: CUTLASS keeps a scale factor's byte in bits 30-31 of its TMEM addresses; as a PTX
    tensor memory address that is lane >= 16384, reported (with a note), not hidden."""
    d = decode_taddr(0x40000020)
    assert [f.code for f in d.findings] == ["TADDR-LANE-RANGE"]
    assert "E31" in d.findings[0].rule


@pytest.mark.parametrize("word", [-1, 2**32, True, 1.0, "0x0"])
def test_decode_rejects_non_words(word):
    with pytest.raises(WordError) as e:
        decode_taddr(word)
    assert e.value.code == "TADDR-WORD-RANGE"


@pytest.mark.parametrize("lane, column, code", [
    (128, 0, "TADDR-LANE-RANGE"),
    (0, 512, "TADDR-COLUMN-RANGE"),
    (-1, 0, "TADDR-LANE-RANGE"),
    (0, 2**16, "TADDR-COLUMN-RANGE"),
    (True, 0, "TADDR-LANE-TYPE"),
    (0, "1", "TADDR-COLUMN-TYPE"),
])
def test_encode_refuses(lane, column, code):
    with pytest.raises(EncodeError) as e:
        encode_taddr(lane, column)
    assert e.value.code == code
    assert e.value.field in ("lane", "column")


def test_encode_check_false_keeps_representable_words():
    w = encode_taddr(200, 600, check=False)
    assert w == 200 << 16 | 600
    assert [f.code for f in w.findings] == ["TADDR-COLUMN-RANGE", "TADDR-LANE-RANGE"]


# --------------------------------------------------------------------------------------------
# Warp lane quarters (§9.7.16.8.1).


@pytest.mark.parametrize("warp", range(4))
def test_e30_each_warps_quarter(warp):
    lo, hi = SPEC_QUARTERS[warp]
    assert descgen.warp_lanes(warp) == range(lo, hi + 1)
    for lane in range(LANES):
        ok = lo <= lane <= hi
        assert descgen.lane_warp(lane) == (warp if ok else descgen.lane_warp(lane))
        r = validate_taddr(encode_taddr(lane, 7, check=False), warp=warp)
        assert ("TADDR-WARP-LANES" in r.codes) == (not ok), (warp, lane)
        if ok:
            assert encode_taddr(lane, 7, warp=warp) == lane << 16 | 7
        else:
            with pytest.raises(EncodeError) as e:
                encode_taddr(lane, 7, warp=warp)
            assert e.value.code == "TADDR-WARP-LANES" and e.value.allowed == f"{lo}..{hi}"


def test_every_column_is_open_to_every_warp():
    for warp in range(4):
        lane = SPEC_QUARTERS[warp][0]
        assert all(validate_taddr(lane << 16 | c, warp=warp).ok for c in range(COLUMNS))


def test_lane_out_of_range_is_not_also_a_warp_finding():
    r = validate_taddr(200 << 16, warp=0)
    assert r.codes == ("TADDR-LANE-RANGE",)


@pytest.mark.parametrize("warp", [-1, 4, 5, True, "1", 1.0])
def test_bad_warp_is_a_usage_error(warp):
    with pytest.raises(UsageError) as e:
        validate_taddr(0, warp=warp)
    assert e.value.code == "CONTEXT-WARP"
    with pytest.raises(UsageError):
        descgen.warp_lanes(warp)


def test_lane_warp_of_missing_lanes():
    assert [descgen.lane_warp(x) for x in (0, 31, 32, 127, 128, -1)] == [0, 0, 1, 3, None, None]


# --------------------------------------------------------------------------------------------
# Allocation (§9.7.16.1.2, §9.7.16.7.1).


def test_alloc_sizes():
    assert descgen.alloc_sizes() == LEGAL_NCOLS


@pytest.mark.parametrize("ncols", LEGAL_NCOLS)
def test_legal_alloc_sizes(ncols):
    assert descgen.check_alloc(ncols) == ()
    assert validate_taddr(0, alloc_columns=ncols).ok


@pytest.mark.parametrize("ncols", ILLEGAL_NCOLS)
def test_illegal_alloc_sizes(ncols):
    (f,) = descgen.check_alloc(ncols)
    assert (f.code, f.field, f.value, f.allowed) == ("TADDR-ALLOC-COLUMNS", "alloc_columns", ncols,
                                                     "32, 64, 128, 256, 512")
    assert validate_taddr(0, alloc_columns=ncols).codes == ("TADDR-ALLOC-COLUMNS",)


@pytest.mark.parametrize("ncols", [-32, 1.5, "64", None])
def test_check_alloc_usage(ncols):
    with pytest.raises(UsageError):
        descgen.check_alloc(ncols)


@pytest.mark.parametrize("base, ncols, column, ok", [
    (0, 32, 0, True), (0, 32, 31, True), (0, 32, 32, False),
    (0x40, 64, 0x40, True), (0x40, 64, 0x7F, True), (0x40, 64, 0x3F, False), (0x40, 64, 0x80, False),
    (256, 256, 511, True), (256, 256, 255, False),
    (0, 512, 511, True),
])
def test_column_inside_the_allocation(base, ncols, column, ok):
    r = validate_taddr(column, alloc_columns=ncols, alloc_base=base)
    assert ("TADDR-COLUMN-ALLOC" in r.codes) == (not ok)
    if not ok:
        f = r.findings[0]
        assert (f.field, f.value, f.allowed) == ("column", column, f"{base}..{base + ncols - 1}")


def test_allocation_past_the_last_column():
    r = validate_taddr(0x1F0, alloc_columns=64, alloc_base=0x1E0)
    assert r.codes == ("TADDR-COLUMN-ALLOC",) and r.findings[0].field == "alloc_base"


def test_e30_allocation_check_needs_both_base_and_size():
    """E30: where the allocation starts is not guessed: without alloc_base the column rule is
    listed as not checked."""
    r = validate_taddr(0x80, alloc_columns=64)
    assert r.ok and "TADDR-COLUMN-ALLOC" in {n.code for n in r.not_checked}
    n = next(n for n in r.not_checked if n.code == "TADDR-COLUMN-ALLOC")
    assert n.missing == ("alloc_base",)
    assert not validate_taddr(0x80, alloc_columns=64, alloc_base=0).ok


@pytest.mark.parametrize("base", [0x10000, 512, -1, 2**32, True])
def test_alloc_base_must_be_lane_0_and_a_column(base):
    with pytest.raises(UsageError) as e:
        validate_taddr(0, alloc_columns=32, alloc_base=base)
    assert e.value.code == "CONTEXT-ALLOC-BASE"


def test_no_context_lists_every_taddr_rule_as_not_checked():
    r = validate_taddr(0x00200000)
    assert r.ok and r.codes == ()
    assert [n.code for n in r.not_checked] == ["TADDR-WARP-LANES", "TADDR-ALLOC-COLUMNS", "TADDR-COLUMN-ALLOC"]
    assert r.decoded["taddr"].value("lane") == 32


def test_generic_engine_serves_the_layout():
    assert descgen.encode("taddr", lane=3, column=5) == 0x00030005
    assert descgen.decode("taddr", 0x00030005).values() == {"column": 5, "lane": 3}


# --------------------------------------------------------------------------------------------
# CLI.


def test_cli_taddr_piped_prints_the_word():
    assert run("taddr", "--lane", "32", "--column", "0").stdout == "0x00200000\n"
    assert run("taddr", "--lane", "0x7f", "--column", "0x1ff").stdout == "0x007f01ff\n"


def test_cli_taddr_json_has_the_access_table():
    doc = run_json("taddr", "--lane", "64", "--column", "16", "--warp", "2", "--alloc-columns", "128",
                   "--alloc-base", "0")
    assert doc["result"]["word"] == "0x00400010" and doc["result"]["ok"] is True
    assert doc["input"] == {"lane": 64, "column": 16, "warp": 2, "alloc_columns": 128, "alloc_base": 0}
    assert doc["access"] == [{"warp": w, "lanes": list(SPEC_QUARTERS[w]), "may_access": w == 2} for w in range(4)]
    assert doc["result"]["derived"]["warp"]["value"] == 2


def test_cli_taddr_table_shows_the_warps():
    out = run("taddr", "--lane", "33", "--column", "1", "--table").stdout
    assert "0x00210001" in out and "lane = 33 lanes" in out
    assert "tcgen05.ld/st access to lane 33" in out
    rows = [line.split() for line in out.splitlines() if line.strip().startswith(("0 ", "1 ", "2 ", "3 "))]
    assert [(r[0], r[1], r[2]) for r in rows] == [("0", "0-31", "no"), ("1", "32-63", "yes"), ("2", "64-95", "no"),
                                                  ("3", "96-127", "no")]


@pytest.mark.parametrize("args, code", [
    (["--lane", "128", "--column", "0"], "TADDR-LANE-RANGE"),
    (["--lane", "0", "--column", "512"], "TADDR-COLUMN-RANGE"),
    (["--lane", "0", "--column", "0", "--warp", "1"], "TADDR-WARP-LANES"),
    (["--lane", "0", "--column", "0", "--alloc-columns", "48"], "TADDR-ALLOC-COLUMNS"),
    (["--lane", "0", "--column", "64", "--alloc-columns", "64", "--alloc-base", "0"], "TADDR-COLUMN-ALLOC"),
])
def test_cli_taddr_rule_violations_exit_1(args, code):
    result = run("taddr", *args, code=1)
    assert code in result.stderr and result.stdout == ""
    doc = json.loads(run("taddr", *args, "--json", code=1).stdout)
    assert [f["code"] for f in doc["error"]["findings"]] == [code]


@pytest.mark.parametrize("args", [
    ["--lane", "0"],
    ["--lane", "0", "--column", "0", "--warp", "4"],
    ["--lane", "0", "--column", "0", "--alloc-base", "0x10000"],
    ["--lane", "-1", "--column", "0"],
])
def test_cli_taddr_usage_errors_exit_2(args):
    run("taddr", *args, code=2)


def test_cli_decode_as_taddr():
    lines = run("decode", "0x00600100", "--as", "taddr").stdout.splitlines()
    assert lines[:4] == ["descriptor=taddr", "layout=taddr", "word=0x00600100", "ok=true"]
    assert "lane=96" in lines and "column=256" in lines and "derived.warp=3" in lines
    lines = run("decode", "0x00800000", "--as", "taddr", code=1).stdout.splitlines()
    assert any(line.startswith("finding=error TADDR-LANE-RANGE") for line in lines)
    run("decode", "0x100000000", "--as", "taddr", code=2)
    run("decode", "0x0", "--as", "taddr", "--m", "32", "--n", "64", code=2)
    run("decode", "0x0", "--as", "smem", "--warp", "1", code=2)  # warp is not smem context


def test_cli_validate_as_taddr_with_warp():
    assert run("validate", "0x00200000", "--as", "taddr", "--warp", "1").stdout == ""
    out = run("validate", "0x00200000", "--as", "taddr", "--warp", "0", code=1).stdout
    assert out.startswith("error TADDR-WARP-LANES lane=32:")
    out = run("validate", "0x00200000", "--as", "taddr", "-v").stdout.splitlines()
    assert [line.split()[1] for line in out] == ["TADDR-WARP-LANES", "TADDR-ALLOC-COLUMNS", "TADDR-COLUMN-ALLOC"]
    doc = run_json("validate", "0x00000040", "--as", "taddr", "--alloc-columns", "64", "--alloc-base", "0x40")
    assert doc["result"]["ok"] is True and doc["result"]["context"] == {"alloc_columns": 64, "alloc_base": 64}
    run("validate", "0x00200000", "--as", "taddr", "--cta-group", "1", code=2)  # not a taddr context


def test_cli_explain_taddr_rules():
    lines = run("explain", "TADDR-WARP-LANES").stdout.splitlines()
    assert "legal=descgen validate 0x00200000 --as taddr --warp 1" in lines
    assert "illegal.reports=error TADDR-WARP-LANES" in lines
    lines = run("explain", "taddr-lane-range").stdout.splitlines()
    assert "where=taddr bits 16-31: 0..127" in lines


def test_cli_validate_taddr_context_without_as_says_so():
    result = run("validate", "0x00200000", "--warp", "0", code=2)
    assert "add --as taddr" in result.stderr


def test_context_usage_errors_cite_where_the_value_is_defined():
    from descgen.codes import usage_codes

    codes = usage_codes()
    assert codes["CONTEXT-ALLOC-COLUMNS"].source.startswith("§9.7.16.1.2; §9.7.16.7.1")
    assert codes["CONTEXT-WARP"].source == "§9.7.16.8.1"
    assert codes["CONTEXT-CTA-GROUP"].source == "§9.7.16.10.9 (tcgen05.mma syntax)"
    with pytest.raises(descgen.UsageError) as e:
        descgen.validate_taddr(0, warp=4)
    assert e.value.code == "CONTEXT-WARP" and e.value.source == codes["CONTEXT-WARP"].source
