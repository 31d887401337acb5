"""The public API surface: imports, results, findings, errors, packaging."""

from __future__ import annotations

import importlib.resources
import json
import subprocess
import sys

import pytest

import descgen
from descgen import (
    DescgenError,
    EncodeError,
    Finding,
    TableError,
    UsageError,
    WordError,
    decode_idesc,
    decode_smem,
    decode_zcm,
    encode_idesc,
    encode_smem,
)


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_import_does_not_pull_cli_dependencies():
    code = (
        "import sys, descgen\n"
        "heavy = ('click', 'rich', 'bitstring')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
        # using the library (which loads the tables) must not import them either
        "descgen.decode_idesc(descgen.encode_idesc('f16', 128, 256), 'f16')\n"
        "descgen.decode_smem(descgen.encode_smem(start_address=0, lbo=0, sbo=0, swizzle='none'))\n"
        "descgen.zcm_mask(descgen.encode_zcm(skip_span=1, use_span=1), 128, 64)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    assert _run(code).splitlines() == ["[]", "[]"]


def test_import_check_can_fail():
    """The sys.modules probe above really sees those packages when they are imported."""
    assert _run("import sys, click; print('click' in sys.modules)") == "True"


def test_all_entries_exist():
    assert len(descgen.__all__) == len(set(descgen.__all__))
    for name in descgen.__all__:
        assert hasattr(descgen, name), name
    for must in ("encode_idesc", "decode_idesc", "encode_smem", "decode_smem", "encode_zcm", "decode_zcm",
                 "zcm_mask", "zcm_submasks", "consistent_kinds", "Decoded", "Finding", "DescgenError",
                 "EncodeError", "UsageError", "WordError", "TableError", "KINDS", "__version__"):
        assert must in descgen.__all__, must
    assert isinstance(descgen.__version__, str) and descgen.__version__.count(".") == 2


def test_exception_hierarchy():
    for cls in (EncodeError, UsageError, WordError, TableError):
        assert issubclass(cls, DescgenError)
    for cls in (EncodeError, UsageError, WordError):
        assert issubclass(cls, ValueError)
    assert issubclass(DescgenError, Exception)


def test_py_typed_is_shipped():
    assert importlib.resources.files("descgen").joinpath("py.typed").is_file()


def test_tables_are_package_resources():
    tables = importlib.resources.files("descgen.tables")
    for name in ("idesc_dense.toml", "idesc_mxf8f6f4.toml", "idesc_mxf4.toml", "smem_desc.toml", "zcm_desc.toml",
                 "shapes.toml"):
        assert tables.joinpath(name).is_file(), name


# --------------------------------------------------------------------------------------------
# Decoded.


def test_decoded_accessors():
    d = decode_idesc(0x08400010, "f16")
    assert d.descriptor == "idesc" and d.layout == "idesc_dense" and d.kind == "f16" and d.width == 32
    f = d["n"]
    assert isinstance(f, descgen.DecodedField)
    assert (f.name, f.bits, f.lo, f.hi, f.raw, f.value, f.unit, f.type) == ("n", "17-22", 17, 22, 32, 256, "columns",
                                                                            "uint")
    assert "Table 42" in f.source
    assert d.value("n") == 256
    assert d.value("k") == 16  # derived
    with pytest.raises(KeyError):
        d["nope"]
    with pytest.raises(KeyError):
        d.value("nope")
    assert [f.name for f in d] == [f.name for f in d.fields]
    values = d.values()
    assert "reserved_6" not in values and "reserved_23" not in values
    assert values["atype"] == "f16" and values["m"] == 128
    assert d.ok is True and d.errors == () and d.findings == ()


def test_decoded_hex_is_zero_padded():
    assert decode_idesc(0x10, "f16").hex == "0x00000010"
    assert decode_idesc(0x08200000, "f16").hex == "0x08200000"
    assert decode_smem(0x40).hex == "0x0000000000000040"
    assert decode_zcm(0).hex == "0x0000000000000000"


def test_decoded_ok_and_errors():
    d = decode_idesc(0x08400010 | 1 << 6, "f16")
    assert d.ok is False
    assert [f.code for f in d.errors] == ["IDESC-RESERVED-6"]
    w = decode_smem(0)  # only a warning (bit 46 = 0)
    assert w.ok is True and w.errors == () and len(w.findings) == 1


def test_decoded_as_dict_is_json():
    for d in (decode_idesc(0xFFFFFFFF, "mxf4"), decode_smem(2**64 - 1), decode_zcm(0x000C008007050301),
              decode_smem(0xC000401000010800)):
        data = d.as_dict()
        text = json.dumps(data)
        back = json.loads(text)
        assert back["word"] == d.hex
        assert isinstance(back["word"], str) and int(back["word"], 16) == d.word
        assert back["ok"] == d.ok
        assert [f["name"] for f in back["fields"]] == [f.name for f in d.fields]
        assert len(back["findings"]) == len(d.findings)
    data = decode_smem(0xC000401000010800).as_dict()
    assert data["derived"] == {"swizzle_bytes": {"value": 32, "unit": "bytes"},
                               "pattern_boundary": {"value": 256, "unit": "bytes"}}
    assert data["descriptor"] == "smem" and data["width"] == 64 and data["kind"] is None


def test_finding_as_dict_and_str():
    d = decode_smem((3 << 61) | (1 << 46))
    (f,) = d.findings
    assert isinstance(f, Finding)
    data = f.as_dict()
    assert data == {"code": "SMEM-SWIZZLE-CODE", "severity": "error", "field": "swizzle", "value": 3,
                    "allowed": f.allowed, "rule": f.rule, "source": f.source}
    assert "none = 0" in f.allowed and "32B = 6" in f.allowed
    json.dumps(data)
    text = str(f)
    assert text.startswith("error SMEM-SWIZZLE-CODE: swizzle = 3:")
    assert "Table 40" in text
    # a non-scalar value is shown as text in as_dict
    g = Finding("X-Y-Z", "error", "start_count", (1, 2, 3), "four", "rule", "Table 45")
    assert g.as_dict()["value"] == "(1, 2, 3)"
    with pytest.raises(Exception):
        f.code = "other"  # frozen


# --------------------------------------------------------------------------------------------
# Errors.


def test_error_attributes():
    with pytest.raises(EncodeError) as info:
        encode_idesc("i8", 128, 40, atype="bf16")
    e = info.value
    assert e.code == e.findings[0].code
    assert (e.field, e.value, e.allowed, e.rule, e.source) == (
        e.findings[0].field, e.findings[0].value, e.findings[0].allowed, e.findings[0].rule, e.findings[0].source)
    assert {f.code for f in e.findings} == {"IDESC-ATYPE-CODE", "IDESC-N-RANGE"}
    assert all(isinstance(f, Finding) for f in e.findings)
    assert isinstance(e.findings, tuple)


@pytest.mark.parametrize(
    "call",
    [
        lambda: encode_idesc("i8", 128, 40),
        lambda: encode_idesc("f16", 100, 44, atype="xx"),
        lambda: encode_idesc("nope", 128, 64),
        lambda: decode_idesc(-1, "f16"),
        lambda: encode_smem(start_address=8, lbo=0, sbo=0, swizzle="none"),
        lambda: descgen.zcm_mask(0, 48, 64),
        lambda: descgen.encode_zcm(skip_span=0, use_span=1),
    ],
)
def test_error_str_is_a_plain_message(call):
    with pytest.raises(DescgenError) as info:
        call()
    msg = str(info.value)
    assert msg and msg == msg.strip()
    for bad in ("Traceback", 'File "', ".py", "line ", "Error(", "Finding("):
        assert bad not in msg, (bad, msg)
    e = info.value
    assert e.field in msg
    assert e.code in msg
    assert e.source in msg


def test_word_error_attributes():
    with pytest.raises(WordError) as info:
        decode_smem(2**64)
    e = info.value
    assert (e.code, e.field, e.value) == ("SMEM-WORD-RANGE", "word", 2**64)
    assert e.allowed == "0..0xffffffffffffffff"
    assert "§9.7.16.4" in e.source


def test_usage_error_for_missing_generic_field():
    with pytest.raises(UsageError) as info:
        descgen.encode("smem_desc", start_address=0, lbo=0, sbo=0)  # swizzle has no default
    assert info.value.field == "swizzle"
    assert info.value.code == "SMEM-SWIZZLE-MISSING"


def test_table_error_attributes():
    from descgen.model.loader import parse_layout

    with pytest.raises(TableError) as info:
        parse_layout({"descriptor": {"word": "x", "layout": "x", "width": 32, "title": "t", "source": "s"},
                      "field": [{"name": "lbo", "bits": "0-31", "type": "uint", "description": "d"}]},
                     "tables/x.toml")
    e = info.value
    assert str(e) == "tables/x.toml: field 'lbo': missing 'source' (every field cites its PTX source)"
    assert (e.path, e.where, e.code) == ("tables/x.toml", "field 'lbo'", "TABLE-MALFORMED")


# --------------------------------------------------------------------------------------------
# The generic encode/decode.


def test_generic_encode_decode_agree_with_specific_api():
    assert descgen.encode("idesc_dense", "f16", m=128, n=256, atype="f16", btype="f16", dtype="f32") == 0x08400010
    assert descgen.decode("idesc_dense", 0x08400010, "f16").values() == decode_idesc(0x08400010, "f16").values()
    w = encode_smem(start_address=0x400, lbo=16, sbo=1024, swizzle="128B")
    assert descgen.encode("smem_desc", start_address=0x400, lbo=16, sbo=1024, swizzle="128B") == w
    assert descgen.decode("smem_desc", w).values() == decode_smem(w).values()
    z = descgen.encode_zcm(start_count=(1, 3, 5, 7), skip_span=1, use_span=13)
    assert descgen.encode("zcm_desc", start_count_0=1, start_count_1=3, start_count_2=5, start_count_3=7,
                          skip_span=1, use_span=13) == z == 0x000C008007050301
    with pytest.raises(KeyError):
        descgen.decode("nope", 0)
    with pytest.raises(UsageError):
        descgen.decode("idesc_dense", 0, "mxf4")


def test_results_are_immutable():
    d = decode_idesc(0x08400010, "f16")
    with pytest.raises(Exception):
        d.word = 1
    with pytest.raises(Exception):
        d["n"].value = 8


def test_source_checkout_imports_without_an_install():
    """From the repository root the checkout's descgen/ shadows any installed copy; its mapped
    subpackages (tables/ -> descgen.tables) must still resolve. -S: no site, no editable finder."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    code = ("import sys; sys.path.insert(0, '.'); import descgen, descgen.tables; "
            "print(hex(descgen.encode_idesc('f16', 128, 256)), descgen.tables.__path__[-1].endswith('tables'))")
    out = subprocess.run([sys.executable, "-S", "-c", code], cwd=root, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0x8400010", "True"]


def test_check_false_reports_an_unhashable_member_instead_of_crashing():
    with pytest.raises(descgen.EncodeError) as info:
        descgen.encode_idesc("f16", 128, 64, atype=[1], check=False)
    assert info.value.code == "IDESC-ATYPE-CODE"


def test_generic_encode_never_ignores_an_unknown_field_name():
    """descgen.encode(layout, **fields): a misspelt field is a usage error naming the fields."""
    assert descgen.encode("smem_desc", start_address=0x400, lbo=16, sbo=1024, swizzle="128B") == 0x4000404000010040
    with pytest.raises(descgen.UsageError) as e:
        descgen.encode("smem_desc", start_address=0x400, lbo=16, sbo=1024, swizzle="128B", swizle="none")
    assert e.value.code == "SMEM-FIELD-UNKNOWN" and e.value.field == "swizle" and "swizzle" in e.value.allowed
    with pytest.raises(descgen.UsageError) as e:  # a reserved field is not a value either
        descgen.encode("smem_desc", start_address=0x400, lbo=16, sbo=1024, swizzle="128B", reserved_14=0)
    assert e.value.code == "SMEM-FIELD-UNKNOWN"
