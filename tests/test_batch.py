"""Batch mode (descgen.batch, descgen batch): every op and descriptor with values from the spec,
results equal to the direct API calls, errors as data for every kind of bad line, order and ids,
and the command end to end. No timings here (bench/bench_batch.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import descgen
from descgen.batch import handle, request_keys, run
from descgen.model.catalog import usage_table

BATCH_CODES = {c for c in usage_table() if c.startswith("BATCH-")}

from conftest import REPO, spec_encode_idesc
from test_cli import run as cli_run
from test_validate import legal_space


def answers(*requests: object, cache: bool = True, full: bool = True) -> list[dict]:
    """Run request objects (or raw strings) through run(); parse every answer line strictly.
    ``full`` (the default here): the --json envelope's parts, compared with the CLI's."""
    lines = [r if isinstance(r, str) else json.dumps(r) for r in requests]
    out = list(run(lines, cache=cache, full=full))
    return [strict(line) for line in out]


def strict(line: str) -> dict:
    """Parse one answer line, refusing NaN/Infinity (not JSON)."""
    assert "\n" not in line

    def no_constant(name: str) -> None:
        raise AssertionError(f"{name} in an answer line")

    return json.loads(line, parse_constant=no_constant)


def plain(obj: object) -> object:
    """An API result as JSON would carry it (tuples become lists...)."""
    return json.loads(json.dumps(obj))


def one(request: object, full: bool = True) -> dict:
    (answer,) = answers(request, full=full)
    assert answer["line"] == 1
    # handle() gives the same answer, as a dict (line aside)
    assert plain(handle(json.loads(request) if isinstance(request, str) else request, full=full)) == {
        k: v for k, v in answer.items() if k != "line"} or isinstance(request, str)
    return answer


def error_codes(answer: dict) -> list[str]:
    assert answer["ok"] is False and set(answer["error"]) == {"type", "message", "findings"}, answer
    return [f["code"] for f in answer["error"]["findings"]]


# --------------------------------------------------------------------------------------------
# Every op and descriptor, with values from the spec.


@pytest.mark.parametrize("request_, word", [
    # Table 42: f16, M = 128 (M >> 4 = 8 at bits 24-28), N = 256 (N >> 3 = 32 at bits 17-22), D f32 (bit 4)
    ({"kind": "f16", "m": 128, "n": 256}, "0x08400010"),
    ({"kind": "kind::tf32", "m": 128, "n": 256}, "0x08400910"),
    ({"kind": "f8f6f4", "m": 128, "n": 128, "atype": "e2m1", "btype": "e2m1"}, "0x08201690"),
    ({"kind": "i8", "m": 128, "n": 128, "atype": "u8", "btype": "u8"}, "0x08200020"),
    ({"kind": "f16", "m": 256, "n": 128, "cta_group": 2}, "0x10200010"),
])
def test_encode_idesc(request_, word):
    a = one({"op": "encode", "descriptor": "idesc", **request_, "id": "x"})
    assert a["ok"] is True and a["id"] == "x"
    assert a["result"]["word"] == word and a["result"]["width"] == 32 and a["result"]["descriptor"] == "idesc"
    values = {f["name"]: f["value"] for f in a["result"]["fields"]}
    assert (values["m"], values["n"]) == (request_["m"], request_["n"])
    # the CLI's --json envelope holds the same result and defaults
    args = [f"--{k.replace('_', '-')}={v}" for k, v in request_.items()]
    doc = json.loads(cli_run("idesc", *args, "--json").stdout)
    assert a["result"] == doc["result"] and a["defaults"] == doc["defaults"]


def test_encode_idesc_defaults_name_what_was_filled_in():
    a = one({"op": "encode", "descriptor": "idesc", "kind": "mxf4nvf4", "m": 128, "n": 128})
    assert a["defaults"] == {"dtype": "f32", "atype": "e2m1", "btype": "e2m1", "scale_type": "ue4m3"}
    b = one({"op": "encode", "descriptor": "idesc", "kind": "mxf4nvf4", "m": 128, "n": 128, "scale_type": "ue8m0",
             "atype": "e2m1"})
    assert b["defaults"] == {"dtype": "f32", "btype": "e2m1"}


@pytest.mark.parametrize("fields, word", [
    # the CUTLASS e2m1 descriptor of the README: start 0x8000, LBO 16, SBO 256, 32B swizzle
    ({"start_address": 0x8000, "lbo": 16, "sbo": 256, "swizzle": "32B"}, "0xc000401000010800"),
    ({"start_address": 0x400, "lbo": 2048, "sbo": 128, "swizzle": "none"}, "0x0000400800800040"),
])
def test_encode_smem(fields, word):
    a = one({"op": "encode", "descriptor": "smem", **fields})
    assert a["ok"] and a["result"]["word"] == word and a["result"]["width"] == 64
    assert a["result"] == plain(descgen.decode_smem(int(word, 16)).as_dict())


def test_encode_smem_tile_form():
    # bf16 K-major 128B tile of 128 x 64 at 0x400: LBO 16 (ignored, encodes 1), SBO 1024 (8 rows x 128 B)
    a = one({"op": "encode", "descriptor": "smem", "dtype": "bf16", "major": "k", "swizzle": "128B", "mn": 128, "k": 64,
             "start_address": 0x400})
    assert a["ok"] and a["result"]["word"] == "0x4000404000010040"
    assert a["tile"]["lbo"]["bytes"] == 16 and a["tile"]["sbo"]["bytes"] == 1024 and a["tile"]["base_offset"] == 0
    b = one({"op": "encode", "descriptor": "smem", "dtype": "bf16", "major": "k", "swizzle": "128B", "mn": 128, "k": 64,
             "start_address": 0x400, "lbo": 16})
    assert error_codes(b) == ["BATCH-KEY"] and "lbo" in b["error"]["message"]


def test_encode_zcm_table45_example():
    # The first worked example after Table 45: sc = 1, 3, 5, 7, skip 1, use 13, M = 32, N = 64
    a = one({"op": "encode", "descriptor": "zcm", "start_count": [1, 3, 5, 7], "skip_span": 1, "use_span": 13,
             "m": 32, "n": 64})
    assert a["ok"] and a["result"]["word"] == "0x000c008007050301"
    assert a["mask"]["mask"] == "0x0040010004001000"
    assert [s["hex"] for s in a["mask"]["submasks"]] == ["0x1000", "0x0400", "0x0100", "0x0040"]
    doc = json.loads(cli_run("zcm", "--start-count", "1,3,5,7", "--skip-span", "1", "--use-span", "13", "--m", "32",
                             "--n", "64", "--json").stdout)
    assert a["result"] == doc["result"] and a["mask"] == doc["mask"]


def test_decode_with_and_without_kind():
    a = one({"op": "decode", "word": "0x08400010", "kind": "f16"})
    assert a["ok"] and a["result"]["kind"] == "f16" and a["result"]["derived"]["k"]["value"] == 16
    assert "not_checked" in a["result"]
    doc = json.loads(cli_run("decode", "0x08400010", "--kind", "f16", "--json").stdout)
    assert a["result"] == doc["result"]
    every = one({"op": "decode", "word": 0x08400010})  # no descriptor: below 2**32, every kind
    doc = json.loads(cli_run("decode", "0x08400010", "--json").stdout)
    assert every["consistent"] == doc["consistent"] and "f16" in every["consistent"]
    assert every["results"] == doc["results"]
    assert one({"op": "decode", "word": 0x08400010, "descriptor": "idesc"})["results"] == every["results"]


def test_decode_wide_word_as_smem_and_zcm():
    a = one({"op": "decode", "word": "0xc000401000010800"})
    doc = json.loads(cli_run("decode", "0xc000401000010800", "--json").stdout)
    assert a["consistent"] == doc["consistent"] == ["smem"] and a["results"] == doc["results"]
    z = one({"op": "decode", "word": "0x000c008007050301", "descriptor": "zcm", "m": 32, "n": 64})
    assert z["ok"] and z["mask"]["mask"] == "0x0040010004001000"


def test_decode_follows_the_cli_rules():
    assert error_codes(one({"op": "decode", "word": 1, "descriptor": "smem", "kind": "f16"})) == ["BATCH-KEY"]
    assert error_codes(one({"op": "decode", "word": 1, "pattern_start": 0})) == ["BATCH-KEY"]  # an idesc has none
    # a 64-bit idesc is CUTLASS's runtime form (E31), read as descgen decode --as idesc reads it
    runtime = one({"op": "decode", "word": "0x0840001000000000", "descriptor": "idesc"})
    assert runtime["consistent"] == ["f16", "f8f6f4"] and runtime["runtime"]["idesc"] == "0x08400010"
    assert runtime["runtime"]["kinds"] == ["f16", "f8f6f4"]
    wide = one({"op": "decode", "word": "0x0840001000000000"})  # smem, zcm, or the runtime form
    assert wide["consistent"] == ["idesc"] and wide["results"]["idesc"]["kind"] == "f16"
    assert error_codes(one({"op": "decode", "word": 1 << 64, "descriptor": "idesc"})) == ["IDESC-WORD-RANGE"]
    bad = one({"op": "decode", "word": 0x10400010, "kind": "f16", "cta_group": 1, "ws": False})
    assert (bad["ok"] is False and "error" not in bad
            and "IDESC-M-SHAPE" in [f["code"] for f in bad["result"]["findings"]])


def test_validate():
    a = one({"op": "validate", "word": 0x10400010, "kind": "f16", "cta_group": 1, "ws": False})
    assert a["ok"] is False and "error" not in a
    assert a["result"] == plain(descgen.validate_idesc(0x10400010, "f16", cta_group=1, ws=False).as_dict())
    assert [f["code"] for f in a["result"]["findings"]] == ["IDESC-M-SHAPE"]
    s = one({"op": "validate", "word": "0x4000404000010058", "descriptor": "smem", "pattern_start": 0x580})
    assert s["result"] == plain(descgen.validate_smem(0x4000404000010058, pattern_start=0x580).as_dict())
    z = one({"op": "validate", "word": "0x000c008007050301", "descriptor": "zcm", "m": 128, "ws": True})
    assert z["result"] == plain(descgen.validate_zcm(0x000c008007050301, m=128, ws=True).as_dict())
    assert error_codes(one({"op": "validate", "word": 1})) == ["BATCH-DESCRIPTOR"]  # an idesc needs a kind
    assert error_codes(one({"op": "validate", "word": 1 << 40})) == ["BATCH-DESCRIPTOR"]
    assert error_codes(one({"op": "validate", "word": 1, "descriptor": "smem", "cta_group": 1})) == ["BATCH-KEY"]


def test_check():
    req = {"op": "check", "idesc": "0x08400010", "kind": "f16", "a_desc": "0x4000404000010040",
           "b_desc": "0x4000404000010440", "cta_group": 1}
    a = one(req)
    assert a["ok"] is True
    assert a["result"] == plain(descgen.check_mma(idesc=0x08400010, kind="f16", a_desc=0x4000404000010040,
                                                  b_desc=0x4000404000010440, cta_group=1).as_dict())
    # tf32 with B MN-major needs 128B_base32B (Table 52)
    tf32 = descgen.encode_idesc("tf32", 128, 128, b_major="mn")
    b = one({"op": "check", "idesc": tf32, "kind": "tf32", "a_desc": 0x4000404000010040, "b_desc": 0x4000404000010440})
    assert b["ok"] is False and "MMA-SWIZZLE-TABLE52" in [f["code"] for f in b["result"]["findings"]]
    assert error_codes(one({**req, "a_tmem": True})) == ["MMA-A-OPERAND"]


def test_every_op_names_its_keys():
    keys = request_keys()
    assert keys["encode idesc"]["required"] == ["descriptor", "kind", "m", "n"]
    assert "atype" in keys["encode idesc"]["keys"] and "check" not in keys["encode idesc"]["keys"]
    assert keys["encode smem"]["required"] == ["descriptor", "start_address", "lbo", "sbo", "swizzle"]
    assert keys["check"]["required"] == ["idesc", "kind", "b_desc"]
    assert "a_pattern_start" in keys["check"]["keys"]


# --------------------------------------------------------------------------------------------
# The brief answers (the default): the word, values and findings, without the field tables.


def test_brief_encode_is_the_word_and_its_findings():
    assert one({"op": "encode", "descriptor": "idesc", "kind": "f16", "m": 128, "n": 256, "id": 3}, full=False) == {
        "line": 1, "id": 3, "ok": True, "word": "0x08400010", "findings": []}
    z = one({"op": "encode", "descriptor": "zcm", "start_count": [1, 3, 5, 7], "skip_span": 1, "use_span": 13,
             "m": 32, "n": 64}, full=False)
    assert (z["word"], z["mask"]) == ("0x000c008007050301", "0x0040010004001000")
    t = one({"op": "encode", "descriptor": "smem", "dtype": "bf16", "major": "k", "swizzle": "128B", "mn": 128, "k": 64,
             "start_address": 0x400}, full=False)
    assert t["word"] == "0x4000404000010040"
    # a warning comes with the word: base offset set without a swizzle is ignored (Table 41)
    w = one({"op": "encode", "descriptor": "smem", "start_address": 0x400, "lbo": 128, "sbo": 256, "swizzle": "none",
             "base_offset": 1}, full=False)
    assert w["ok"] and [f["code"] for f in w["findings"]] == ["SMEM-BASE-OFFSET-IGNORED"]


def test_brief_decode_is_the_values_derived_and_findings():
    a = one({"op": "decode", "word": "0x08400010", "kind": "f16"}, full=False)
    d = descgen.decode_idesc(0x08400010, "f16")
    assert a == {"line": 1, "ok": True, "descriptor": "idesc", "kind": "f16", "word": "0x08400010",
                 "fields": plain(d.values()), "derived": {"k": 16}, "findings": []}
    assert (a["fields"]["m"], a["fields"]["n"], a["fields"]["atype"]) == (128, 256, "f16")
    bad = one({"op": "decode", "word": 0x08400010 | 1 << 23, "kind": "f16"}, full=False)
    assert bad["ok"] is False and [f["code"] for f in bad["findings"]] == ["IDESC-RESERVED-23"]
    wide = one({"op": "decode", "word": "0xc000401000010800"}, full=False)
    assert wide["consistent"] == ["smem"] and wide["results"]["smem"]["fields"]["swizzle"] == "32B"


def test_brief_validate_and_check_are_the_findings_and_what_was_not_checked():
    v = one({"op": "validate", "word": 0x10400010, "kind": "f16", "cta_group": 1, "ws": False}, full=False)
    report = descgen.validate_idesc(0x10400010, "f16", cta_group=1, ws=False)
    assert v == {"line": 1, "ok": False, "findings": plain([f.as_dict() for f in report.findings]),
                 "not_checked": [n.code for n in report.not_checked]}
    assert [f["code"] for f in v["findings"]] == ["IDESC-M-SHAPE"]
    c = one({"op": "check", "idesc": "0x08400010", "kind": "f16", "a_desc": "0x4000404000010040",
             "b_desc": "0x4000404000010440", "cta_group": 1}, full=False)
    assert c["ok"] is True and c["findings"] == [] and "IDESC-N-TRANSPOSE-8BIT" not in c["not_checked"]


def test_format_adds_the_words_as_source_code():
    a = one({"op": "encode", "descriptor": "idesc", "kind": "f16", "m": 128, "n": 256, "format": "cpp", "name": "kF16"},
            full=False)
    assert a["word"] == "0x08400010" and "\nconstexpr std::uint32_t kF16 = 0x08400010u;\n\n#endif" in a["code"]
    assert "bits 17-22 n                 = 256 columns" in a["code"]
    c = one({"op": "check", "idesc": "0x08400010", "kind": "f16", "a_desc": "0x4000404000010040",
             "b_desc": "0x4000404000010440", "format": "python"}, full=False)
    scope: dict = {}
    exec(c["code"], scope)
    assert (scope["IDESC"], scope["A_DESC"], scope["B_DESC"]) == (0x08400010, 0x4000404000010040, 0x4000404000010440)
    d = one({"op": "decode", "word": "0x000c008007050301", "descriptor": "zcm", "format": "ptx"}, full=False)
    assert d["code"].splitlines()[-1] == "mov.b64 %zcm_desc, 0x000c008007050301;"
    # every kind
    assert error_codes(one({"op": "decode", "word": "0x08400010", "format": "c"}, full=False)) == ["BATCH-KEY"]
    assert error_codes(one({"op": "encode", "descriptor": "smem", "start_address": 0, "lbo": 16, "sbo": 16,
                            "swizzle": "none", "format": "rust"}, full=False)) == ["EMIT-FORMAT"]
    assert error_codes(one({"op": "validate", "word": 1, "kind": "f16", "name": "x"}, full=False)) == \
        ["BATCH-KEY-MISSING"]


def test_functions_ask_for_the_run_time_functions():
    """"functions": true: descgen.emit_functions' text (the fixed part and run-time functions) of the
    request's word, as descgen smem without --addr and idesc/zcm --functions write it."""
    tile = {"op": "encode", "descriptor": "smem", "dtype": "bf16", "major": "k", "swizzle": "128B", "mn": 128, "k": 64}
    a = one({**tile, "format": "cpp", "functions": True, "name": "a_desc", "stage_bytes": 32768}, full=False)
    td = descgen.smem_for_tile(dtype="bf16", major="k", swizzle="128B", mn=128, k=64, start_address=0)
    assert a["ok"] and a["word"] == "0x4000404000010000"  # (start_address left out: 0)
    assert a["code"] == descgen.emit_functions(td, "cpp", name="a_desc", stage_bytes=32768)
    ns: dict = {}
    exec(one({**tile, "start_address": 1024, "format": "python", "functions": True}, full=True)["code"], ns)
    assert ns["smem_desc_k"](ns["smem_desc"](0x400), 1) == 0x4000404000010042
    f = one({"op": "encode", "descriptor": "smem", "lbo": 16, "sbo": 1024, "swizzle": "128B", "format": "python",
             "functions": True}, full=False)
    ns = {}
    exec(f["code"], ns)
    assert ns["smem_desc_advance"](ns["smem_desc"](0x800), 32) == descgen.encode_smem(
        start_address=0x820, lbo=16, sbo=1024, swizzle="128B")
    mx = one({"op": "encode", "descriptor": "idesc", "kind": "mxf8f6f4", "m": 128, "n": 256, "format": "python",
              "functions": True}, full=False)
    ns = {}
    exec(mx["code"], ns)
    assert ns["idesc"](1, 2) == descgen.encode_idesc("mxf8f6f4", 128, 256, a_sf_id=1, b_sf_id=2)
    z = one({"op": "decode", "word": "0x000c008007050301", "descriptor": "zcm", "m": 32, "n": 64, "format": "c",
             "functions": True}, full=False)
    assert z["code"] == descgen.emit_functions(descgen.validate_zcm(0x000C008007050301, m=32, n=64), "c")
    off = one({"op": "encode", "descriptor": "idesc", "kind": "f16", "m": 128, "n": 256, "format": "cpp",
               "functions": False}, full=False)
    assert "\nconstexpr std::uint32_t idesc = 0x08400010u;\n\n#endif" in off["code"]
    bad = {"op": "encode", "descriptor": "idesc", "kind": "f16", "m": 128, "n": 256}
    assert error_codes(one({**bad, "functions": True}, full=False)) == ["BATCH-KEY-MISSING"]  # no format
    assert error_codes(one({**bad, "format": "c", "functions": "yes"}, full=False)) == ["BATCH-KEY"]
    assert error_codes(one({**bad, "format": "c", "stage_bytes": 1024}, full=False)) == ["BATCH-KEY"]
    assert error_codes(one({**bad, "format": "c", "functions": True, "stage_bytes": 1024}, full=False)) == \
        ["EMIT-STAGE-BYTES"]
    assert error_codes(one({**bad, "format": "hex", "functions": True}, full=False)) == ["EMIT-FORMAT"]
    assert error_codes(one({"op": "check", "idesc": "0x08400010", "kind": "f16", "a_desc": "0x4000404000010040",
                            "b_desc": "0x4000404000010440", "format": "c", "functions": True},
                           full=False)) == ["EMIT-INPUT"]


def test_functions_through_the_cli(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"op": "encode", "descriptor": "smem", "lbo": 16, "sbo": 1024, "swizzle": "128B",
                               "format": "cpp", "functions": True, "name": "a_desc"}) + "\n")
    answer = json.loads(cli_run("batch", str(src)).stdout.splitlines()[0])
    assert answer["ok"] and "a_desc_advance(std::uint64_t desc, std::uint32_t offset)" in answer["code"]


@settings(max_examples=40)
@given(st.sampled_from([(kind, m, n, kw, ctx) for kind in descgen.KINDS
                        for i, (m, n, kw, ctx) in enumerate(legal_space(kind)) if i % 89 == 0]))
def test_brief_answers_agree_with_the_api(member):
    kind, m, n, kw, ctx = member
    word = descgen.encode_idesc(kind, m, n, **kw)
    enc, dec, val = answers({"op": "encode", "descriptor": "idesc", "kind": kind, "m": m, "n": n, **kw},
                            {"op": "decode", "word": word, "kind": kind},
                            {"op": "validate", "word": word, "kind": kind, **ctx}, full=False)
    assert int(enc["word"], 16) == word and enc["findings"] == []
    assert dec["fields"] == plain(descgen.decode_idesc(word, kind).values())
    assert val["ok"] and val["findings"] == [] and val["not_checked"] == [
        n.code for n in descgen.validate_idesc(word, kind, **ctx).not_checked]


# --------------------------------------------------------------------------------------------
# Results equal the direct API calls.


_SPACE = [(kind, m, n, kw, ctx) for kind in descgen.KINDS for i, (m, n, kw, ctx) in enumerate(legal_space(kind))
          if i % 97 == 0]


@settings(max_examples=60)
@given(st.sampled_from(_SPACE), st.booleans())
def test_legal_configurations_agree_with_the_api(member, with_context):
    kind, m, n, kw, ctx = member
    context = {k: ctx[k] for k in ("cta_group", "ws", "a_tmem")} if with_context else {}
    word = descgen.encode_idesc(kind, m, n, **kw, **context)
    assert word == spec_encode_idesc(kind, m, n, **kw)
    enc, dec, val = answers(
        {"op": "encode", "descriptor": "idesc", "kind": kind, "m": m, "n": n, **kw, **context},
        {"op": "decode", "word": hex(word), "kind": kind},
        {"op": "validate", "word": word, "kind": kind, **ctx},
        cache=with_context,
    )
    assert enc["ok"] and int(enc["result"]["word"], 16) == word
    assert enc["result"] == plain(descgen.validate_idesc(word, kind, **context).decoded["idesc"].as_dict())
    report = descgen.validate_idesc(word, kind)
    assert dec["result"] == plain({**report.decoded["idesc"].as_dict(),
                                   "not_checked": [x.as_dict() for x in report.not_checked]})
    assert val["ok"] and val["result"] == plain(descgen.validate_idesc(word, kind, **ctx).as_dict())
    assert val["result"]["findings"] == []


@settings(max_examples=60)
@given(st.integers(0, (1 << 64) - 1), st.integers(0, 3))
def test_any_64_bit_word_decodes_as_the_api_does(word, how):
    desc = ("smem", "zcm", None, None)[how]
    a = one({"op": "decode", "word": word, **({"descriptor": desc} if desc else {})})
    if desc == "smem":
        r = descgen.validate_smem(word)
    elif desc == "zcm":
        r = descgen.validate_zcm(word)
    else:
        return
    assert a["result"] == plain({**r.decoded[desc].as_dict(), "not_checked": [x.as_dict() for x in r.not_checked]})
    assert a["ok"] == r.decoded[desc].ok


# --------------------------------------------------------------------------------------------
# Errors are data.


def test_each_kind_of_bad_line_is_an_answer():
    lines = [
        '{"op": "encode", "descriptor": "idesc", "kind": "f16", "m": 128,',  # malformed
        '{"op": "frobnicate"}',  # unknown op
        '{"descriptor": "idesc"}',  # no op
        '{"op": "encode", "descriptor": "idesc", "kind": "f16", "m": 128, "n": 256, "atpye": "bf16"}',  # typo
        '{"op": "encode", "descriptor": "idesc", "kind": "f16", "m": "abc", "n": 256}',  # wrong type
        '{"op": "encode", "descriptor": "idesc", "kind": "f16", "m": true, "n": 256}',  # a bool is not an int
        '{"op": "encode", "descriptor": "idesc", "kind": "i8", "m": 128, "n": 40}',  # Table 39 / 42 rule
        '{"op": "encode", "descriptor": "idesc", "kind": "f16", "m": 1' + "0" * 60 + ', "n": 256}',  # huge
        '{"op": "decode", "word": 1' + "0" * 60 + ', "descriptor": "smem"}',  # huge word
        '{"op": "decode", "word": 1' + "0" * 5000 + '}',  # beyond Python's int-from-text limit
        '{"op": "encode", "descriptor": "idesc", "kind": "f16", "m": NaN, "n": 256}',  # not JSON
        '{"op": "encode", "descriptor": "idesc", "kind": "f16", "m": 1e999, "n": 256}',  # Infinity
        '{"op": "encode", "descriptor": "idesc", "kind": "f16", "m": 128, "n": 256, "m": 64}',  # duplicate key
        '[1, 2, 3]',  # not an object
        '{"op": "encode", "descriptor": "idesc", "kind": "f16", "m": 128}',  # missing n
        '{"op": "encode", "descriptor": "tmem", "m": 1}',  # unknown descriptor
        '{"op": "decode", "word": "0xZZ"}',  # not a word
        '{"op": "decode", "word": -5, "descriptor": "smem"}',  # negative word
        '{"op": "encode", "descriptor": "idesc", "kind": "f16", "m": 128, "n": 256, "check": false}',  # batch is strict
        '{"op": "validate", "word": 1, "kind": "f16", "cta_group": 3}',  # a context value that is not one
        '{"op": "encode", "descriptor": "idesc", "kind": "f16", "m": 128, "n": 256}',  # fine, after all that
    ]
    got = answers(*lines)
    assert [a["line"] for a in got] == list(range(1, len(lines) + 1))
    codes = [error_codes(a) if not a["ok"] else "ok" for a in got]
    assert codes == [
        ["BATCH-JSON"], ["BATCH-OP"], ["BATCH-OP"], ["BATCH-KEY"], ["IDESC-M-TYPE"], ["IDESC-M-TYPE"],
        ["IDESC-N-RANGE"], ["IDESC-M-RANGE"], ["SMEM-WORD-RANGE"], ["BATCH-JSON"], ["BATCH-JSON"], ["BATCH-JSON"],
        ["BATCH-JSON"], ["BATCH-JSON"], ["BATCH-KEY-MISSING"], ["BATCH-DESCRIPTOR"], ["BATCH-WORD"], ["BATCH-WORD"],
        ["BATCH-KEY"], ["CONTEXT-CTA-GROUP"], "ok",
    ]
    typo = got[3]["error"]
    assert "'atpye'" in typo["message"] and "did you mean 'atype'" in typo["message"]
    assert "atype" in typo["findings"][0]["allowed"] and typo["findings"][0]["field"] == "atpye"
    assert got[6]["error"]["type"] == "EncodeError" and got[0]["error"]["type"] == "UsageError"
    assert got[8]["error"]["type"] == "WordError"
    assert set(c for a in got if not a["ok"] for c in error_codes(a) if c.startswith("BATCH")) <= set(BATCH_CODES)


def test_blank_and_comment_lines_are_skipped_but_counted():
    got = answers("", "# a comment", '  # indented comment',
                  '{"op": "decode", "word": 1, "kind": "f16", "id": [1, {"a": null}]}', "   ",
                  '{"op": "nope", "id": 2.5}')
    assert [(a["line"], a.get("id")) for a in got] == [(4, [1, {"a": None}]), (6, 2.5)]


def test_order_and_ids_are_kept_and_the_cache_is_invisible():
    reqs = []
    for i in range(40):
        n = 16 * (1 + i % 5)
        reqs.append({"op": "encode", "descriptor": "idesc", "kind": "f16", "m": 128, "n": n, "id": i})
        reqs.append({"op": "encode", "descriptor": "idesc", "kind": "f16", "m": 128, "n": n + 8 * (i % 2),
                     "id": f"s{i}"})
    cached, fresh = answers(*reqs), answers(*reqs, cache=False)
    assert cached == fresh
    assert [a["id"] for a in cached] == [r["id"] for r in reqs]
    assert [a["line"] for a in cached] == list(range(1, len(reqs) + 1))
    # 1 and true are equal in Python but not as requests: the cache keeps them apart
    flags = answers({"op": "validate", "word": 0x08400010, "kind": "f16", "cta_group": 1},
                    {"op": "validate", "word": 0x08400010, "kind": "f16", "cta_group": True},
                    {"op": "validate", "word": 0x08400010, "kind": "f16", "cta_group": 1.0})
    assert [a["ok"] for a in flags] == [True, False, False]


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                     | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=6)
_KEYS = sorted({k for shape in request_keys().values() for k in shape["keys"]} | {"atpye", "word", "x"})


@settings(max_examples=300)
@given(st.sampled_from(["encode", "decode", "validate", "check", "bogus"]),
       st.dictionaries(st.sampled_from(_KEYS),
                       _JSON | st.sampled_from(["f16", "mxf4", "smem", "zcm", "idesc", "0x10", "128B"])
                       | st.integers(0, 300), max_size=8))
def test_fuzzed_requests_never_crash(op, fields):
    got = answers({**fields, "op": op})
    (a,) = got
    assert isinstance(a["ok"], bool)
    if "error" in a:
        assert a["error"]["type"] != "InternalError", a
        assert a["ok"] is False


# --------------------------------------------------------------------------------------------
# The command.

REQUESTS = "\n".join([
    '{"op": "encode", "descriptor": "idesc", "kind": "f16", "m": 128, "n": 256, "id": "a"}',
    "# comment",
    '{"op": "encode", "descriptor": "idesc", "kind": "i8", "m": 128, "n": 40, "id": "b"}',
    '{"op": "decode", "word": "0xc000401000010800", "descriptor": "smem", "id": "c"}',
]) + "\n"


def test_cli_file_and_stdin_and_output(tmp_path):
    path = tmp_path / "requests.jsonl"
    path.write_text(REQUESTS, encoding="utf-8")
    from_file = cli_run("batch", str(path)).stdout.splitlines()
    from_stdin = cli_run_input(["batch"], REQUESTS).stdout.splitlines()
    from_dash = cli_run_input(["batch", "-"], REQUESTS).stdout.splitlines()
    assert from_file == from_stdin == from_dash
    got = [strict(x) for x in from_file]
    assert [(a["line"], a["id"], a["ok"]) for a in got] == [(1, "a", True), (3, "b", False), (4, "c", True)]
    assert got[0]["word"] == "0x08400010" and error_codes(got[1]) == ["IDESC-N-RANGE"]
    full = [strict(x) for x in cli_run("batch", str(path), "--full").stdout.splitlines()]
    assert full[0]["result"]["word"] == "0x08400010" and full[2]["result"]["fields"][0]["name"] == "start_address"
    out = tmp_path / "answers.jsonl"
    r = cli_run("batch", str(path), "-o", str(out), "-v")
    assert r.stdout == "" and out.read_text(encoding="utf-8").splitlines() == from_file
    assert "3 requests, 2 ok, 1 not ok (1 refused)" in r.stderr


def cli_run_input(args: list[str], text: str, code: int = 0):
    from test_cli import _runner

    from descgen.cli import cli

    result = _runner().invoke(cli, args, input=text)
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    return result


def test_cli_exit_status(tmp_path):
    path = tmp_path / "requests.jsonl"
    path.write_text(REQUESTS, encoding="utf-8")
    cli_run("batch", str(path), "--fail-on-error", code=1)
    good = tmp_path / "good.jsonl"
    good.write_text(REQUESTS.splitlines()[0] + "\n", encoding="utf-8")
    cli_run("batch", str(good), "--fail-on-error", code=0)
    missing = cli_run("batch", str(tmp_path / "nope.jsonl"), code=2)
    assert "does not exist" in missing.stderr
    cli_run("batch", str(path), "--jobs", "zero", code=2)
    cli_run("batch", "--frobnicate", code=2)


def test_cli_help_documents_the_schema():
    text = cli_run("batch", "--help").stdout
    for word in ("encode", "decode", "validate", "check", "BATCH-KEY", "--fail-on-error", '"ok"', "smem_for_tile"):
        assert word in text, word


def test_cli_worker_processes_give_the_same_answers(tmp_path):
    lines = [json.dumps({"op": "encode", "descriptor": "idesc", "kind": "f16", "m": 128, "n": 16 * (1 + i % 16),
                         "id": i})
             if i % 7 else '{"bad' for i in range(2500)]
    path = tmp_path / "many.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": REPO}
    outs = []
    for jobs in ("1", "2"):
        proc = subprocess.run([sys.executable, "-m", "descgen.cli", "batch", str(path), "--jobs", jobs, "-v"],
                              capture_output=True, text=True, cwd=REPO, env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr
        outs.append(proc.stdout)
        assert "2500 requests" in proc.stderr
    assert outs[0] == outs[1]
    assert [strict(x)["line"] for x in outs[0].splitlines()] == list(range(1, 2501))


# The parallel path on small files: byte ranges of a few lines (SEGMENT_MIN/MAX lowered) answered
# by forked workers must give the bytes the in-process path gives, for every way a file can cut lines.

_ENC = b'{"op": "encode", "descriptor": "idesc", "kind": "f16", "m": 128, "n": %d, "id": %d}'
_TRICKY = [
    b"", b"   ", b"# a comment", b"  # indented comment", b"\t",
    _ENC % (256, 1), _ENC % (40, 2),  # ok, refused
    b'{"op": "decode", "word": "0xc000401000010800", "descriptor": "smem", "id": "caf\xc3\xa9"}',
    b'{"op": "validate", "word": "0x08400010", "kind": "f16", "id": "\xe2\x80\xa8 \xc2\x85"}',  # U+2028, NEL
    b'{"op": "\xff\xfe bad utf-8"}', b'{"op": "cut \xe2\x82', b"\xc3", b"\xc2\x85",  # invalid UTF-8; a lone NEL
    b'{"bad json', b'{"op": "check", "idesc": 1}', b"\xef\xbb\xbf# a BOM inside the file is no BOM",
]


def _tricky_file(path, ending: bytes, last: bytes = b"\n", bom: bool = True, lone_cr: bool = True) -> None:
    body = ending.join(_TRICKY * 3)
    if lone_cr:  # a lone \r ends a line in text mode too
        body += b"\r" + _ENC % (128, 3) + b"\r\r" + b"# c\r" + _ENC % (64, 4) + ending + ending.join(_TRICKY)
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + body + last)


@pytest.fixture
def small_ranges(monkeypatch):
    """Let --jobs auto fork for any file, on two cores at least, and return a setter of the
    byte-range sizes."""
    from descgen.cli import batch as cli_batch

    monkeypatch.setattr(cli_batch, "PARALLEL_BYTES", 1)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    if hasattr(os, "sched_getaffinity"):
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})

    def sizes(low: int, high: int) -> None:
        monkeypatch.setattr(cli_batch, "SEGMENT_MIN", low)
        monkeypatch.setattr(cli_batch, "SEGMENT_MAX", high)
    return sizes


def _same_as_serial(path, *args: str, code: int = 0) -> bytes:
    serial = cli_run("batch", str(path), "--jobs", "1", "-v", *args, code=code)
    for jobs in ("auto", "3"):
        forked = cli_run("batch", str(path), "--jobs", jobs, "-v", *args, code=code)
        assert forked.stdout_bytes == serial.stdout_bytes, jobs
        assert forked.stderr == serial.stderr
    return serial.stdout_bytes


@pytest.mark.skipif(not hasattr(os, "fork"), reason="workers are forked")
@pytest.mark.parametrize("ending,last", [(b"\n", b"\n"), (b"\r\n", b""), (b"\r\n", b"\r\n"), (b"\n", b"\r"),
                                         (b"\r", b"")])
def test_cli_forked_workers_answer_as_in_process(tmp_path, small_ranges, ending, last):
    """Blank and # lines counted, a BOM dropped, invalid UTF-8 replaced, CRLF and lone CR, a last
    line without newline: forked workers answer byte for byte as the in-process path, cut anywhere."""
    path = tmp_path / "tricky.jsonl"
    _tricky_file(path, ending, last)
    expected = [strict(x) for x in _same_as_serial(path).decode().splitlines()]
    with open(path, encoding="utf-8", errors="replace") as f:
        assert [a["line"] for a in expected] == [
            n for n, line in enumerate(f, 1)
            if line.strip().removeprefix("\ufeff") and not line.strip().startswith("#")]
    for low, high in ((1, 1), (7, 50), (300, 4096)):
        small_ranges(low, high)
        _same_as_serial(path, "--fail-on-error", code=1)
    _same_as_serial(path, "--full", "--no-cache", code=0)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="workers are forked")
def test_cli_forked_workers_edge_files(tmp_path, small_ranges, monkeypatch):
    """One line longer than any range, an empty file, -o FILE, and an internal error (exit 3)."""
    small_ranges(16, 64)
    huge = tmp_path / "huge.jsonl"
    huge.write_bytes(b'{"op": "encode", "descriptor": "zcm", "skip_span": 1, "use_span": 13, "id": "'
                     + b"x" * 5000 + b'"}')
    assert _same_as_serial(huge).count(b"\n") == 1
    huge.write_bytes(b"\n\n" + huge.read_bytes() + b"\n" + _ENC % (256, 1) + b"\n")
    assert _same_as_serial(huge).count(b"\n") == 2
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert _same_as_serial(empty) == b""
    path = tmp_path / "tricky.jsonl"
    _tricky_file(path, b"\r\n", b"")
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}.jsonl"
        r = cli_run("batch", str(path), "--jobs", jobs, "-o", str(out), "-v")
        assert r.stdout == "" and "requests" in r.stderr
    assert (tmp_path / "out1.jsonl").read_bytes() == (tmp_path / "out2.jsonl").read_bytes()
    import descgen.batch.handlers

    def broken(*args, **kwargs):
        raise RuntimeError("planted")
    monkeypatch.setattr(descgen.batch.handlers, "encode_zcm", broken)
    assert b"InternalError" in _same_as_serial(huge, code=3)


def test_a_word_pasted_without_0x_is_read_as_the_command_line_reads_it():
    """One rule (descgen.core.numbers) for the CLI and batch: "08400010" is the hex word, with a
    note naming the reading; "0x..." strings and JSON numbers carry no note."""
    pasted, prefixed, number, runtime = answers(
        {"op": "decode", "word": "08400010", "kind": "f16"},
        {"op": "decode", "word": "0x08400010", "kind": "f16"},
        {"op": "decode", "word": 0x08400010, "kind": "f16"},
        {"op": "decode", "word": "0840001000000000"}, full=False)
    assert pasted["ok"] and pasted["word"] == "0x08400010" and pasted["fields"]["n"] == 256
    assert pasted["notes"] == ["word: '08400010' read as hex 0x08400010 (8 digits, a word as printf and "
                               "debuggers print it; for the decimal 8400010, write 0x802c8a)"]
    assert "notes" not in prefixed and "notes" not in number and prefixed["fields"] == pasted["fields"]
    assert runtime["ok"] and runtime["runtime"]["idesc"] == "0x08400010"
    assert runtime["notes"][0].startswith("word: '0840001000000000' read as hex 0x0840001000000000")
    refused = one({"op": "decode", "word": "08400010", "descriptor": "taddr"}, full=False)
    assert not refused["ok"] and refused["notes"] and "TADDR-LANE-RANGE" in [f["code"] for f in refused["findings"]]
    cli = cli_run("decode", "08400010", "--kind", "f16")
    assert "word=0x08400010" in cli.stdout.splitlines()
    decimal = one({"op": "decode", "word": "012345678", "descriptor": "smem"}, full=False)
    assert decimal["word"] == f"{12345678:#018x}" and "read as decimal 12345678" in decimal["notes"][0]
    hex16 = one({"op": "decode", "word": "4000404000010040", "descriptor": "smem"}, full=False)
    assert hex16["word"] == "0x4000404000010040" and "read as hex" in hex16["notes"][0]
