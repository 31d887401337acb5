"""The host side of the sanitizer's report buffer (descgen.sanitizer.report, docs/sanitizer.md):
the layout the document states, records decoded from synthetic bytes built here with struct, from
bytes a check block wrote (run by tests/check_machine.py's interpreter), and the errors.

The part that talks to the CUDA driver (ReportBuffer) needs a GPU; here only its refusal without
a driver is checked.
"""

from __future__ import annotations

import json
import pickle
import re
import struct
from pathlib import Path

import pytest

from check_machine import REPORT, Machine, blocks, const_tables
from descgen.sanitizer import report
from descgen.sanitizer.instrument import instrument_ptx
from descgen.sanitizer.report import (FLAG_COMPLETE, HEADER_SIZE, MAGIC, RECORD_SIZE, DescriptorError, ReportBuffer,
                                      RuntimeFinding, SanitizerError, Site, decode_records, empty_buffer, load_sites)

CORPUS = Path(__file__).parent / "corpus"


def _record(site: int, code: int, operand: int, word: int, *, complete: bool = True, value: int = 0,
            block: tuple[int, int, int] = (0, 0, 0), thread: tuple[int, int, int] = (0, 0, 0), smid: int = 0) -> bytes:
    """One record laid out by hand, field by field at the offsets of docs/sanitizer.md's table."""
    out = bytearray(64)
    struct.pack_into("<I", out, 0, site)
    struct.pack_into("<I", out, 4, code)
    struct.pack_into("<I", out, 8, operand)
    struct.pack_into("<I", out, 12, FLAG_COMPLETE if complete else 0)
    struct.pack_into("<Q", out, 16, word)
    struct.pack_into("<3I", out, 24, *block)
    struct.pack_into("<3I", out, 36, *thread)
    struct.pack_into("<q", out, 48, value)
    struct.pack_into("<I", out, 56, smid)
    return bytes(out)


def _buffer(records: list[bytes], *, count: int | None = None, capacity: int | None = None, magic: int = MAGIC,
            version: int = 1) -> bytes:
    capacity = len(records) if capacity is None else capacity
    head = struct.pack("<IIII", len(records) if count is None else count, capacity, magic, version) + bytes(48)
    return head + b"".join(records) + bytes(64 * (capacity - len(records)))


SITES = [
    Site("gemm.ptx", 120, "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd5, %rd6, %r9, 1;", "tcgen05.mma",
         (("idesc", "%r9"), ("a_desc", "%rd5"), ("b_desc", "%rd6")), ("IDESC-N-SHAPE", "SMEM-RESERVED-14")),
    Site("gemm.ptx", 140, "tcgen05.cp.cta_group::1.128x256b [%r2], %rd8;", "tcgen05.cp", (("s_desc", "%rd8"),),
         ("SMEM-RESERVED-14",)),
]


def test_layout_is_the_documents():
    assert (HEADER_SIZE, RECORD_SIZE, MAGIC, report.VERSION) == (64, 64, 0x44475352, 1)
    assert struct.pack("<I", MAGIC) == b"RSGD"
    assert report.OPERANDS == {0: "idesc", 1: "a_desc", 2: "b_desc", 3: "zcm", 4: "scale_input_d"}
    # The module's struct agrees with the hand-made record at every offset.
    raw = _record(7, 2, 3, 0x1122334455667788, value=-5, block=(1, 2, 3), thread=(4, 5, 6), smid=77)
    assert report.RECORD.unpack(raw) == (7, 2, 3, 1, 0x1122334455667788, 1, 2, 3, 4, 5, 6, -5, 77, 0)
    head = empty_buffer(3)
    assert len(head) == 64 + 3 * 64 and report.HEADER.unpack_from(head) == (0, 3, MAGIC, 1)
    # The instrumenter writes the offsets decode_records reads (record i at 64 + 64 i).
    ptx = instrument_ptx((CORPUS / "cutlass/cute_tutorial_01_mma_sm100.ptx").read_text()).ptx
    offsets = {int(m) for m in re.findall(r"st\.relaxed\.sys\.global\.u(?:32|64) \[%\w+\+(\d+)\]", ptx)}
    assert offsets == {64 + o for o in (0, 4, 8, 12, 16, 24, 28, 32, 36, 40, 44, 48, 56)}


def test_records_decode_with_their_sites():
    buf = _buffer([_record(0, 1, 2, 0x4000404000014040, value=1, block=(3, 1, 0), thread=(32, 0, 0), smid=9),
                   _record(1, 0, 1, 0x0000000000004000, value=1, smid=2),
                   _record(0, 0, 0, 0x1234, complete=False)])
    found = decode_records(buf, SITES)
    assert [f.code for f in found] == ["SMEM-RESERVED-14", "SMEM-RESERVED-14", "IDESC-N-SHAPE"]
    first, cp, partial = found
    assert (first.operand, first.name, first.register, first.word) == ("b_desc", "b-desc", "%rd6", 0x4000404000014040)
    assert (first.block, first.thread, first.smid) == ((3, 1, 0), (32, 0, 0), 9)
    assert (first.line, first.file) == (120, "gemm.ptx")
    assert first.severity == "error" and first.complete and first.field == "reserved_14"
    assert first.message().startswith(
        "gemm.ptx:120: SMEM-RESERVED-14 b-desc %rd6 = 0x4000404000014040: reserved_14 = 1: ")
    assert first.message().endswith("(block (3,1,0), thread (32,0,0), SM 9)")
    # tcgen05.cp's operand 1 is its s-desc.
    assert (cp.operand, cp.name, cp.register, cp.line) == ("s_desc", "s-desc", "%rd8", 140)
    # An incomplete record is reported, marked; a 32-bit idesc is shown as 32 bits.
    assert not partial.complete and partial.subject() == "idesc %r9 = 0x00001234"
    assert partial.message().startswith("gemm.ptx:120: (incomplete record) IDESC-N-SHAPE idesc %r9 = 0x00001234")
    assert found.written == 3 and found.lost == 0 and found.summary() == "3 run-time findings (1 incomplete)"
    assert json.loads(json.dumps([f.as_dict() for f in found]))[0]["word"] == "0x4000404000014040"


def test_records_past_the_capacity_are_counted_as_lost():
    buf = _buffer([_record(0, 1, 1, 1 << 14), _record(0, 1, 2, 1 << 14)], count=7)
    found = decode_records(buf, SITES)
    assert len(found) == 2 and found.written == 7 and found.capacity == 2 and found.lost == 5
    assert found.summary() == "2 run-time findings, 5 more lost: the buffer holds 2"
    # An empty buffer (no finding) and a capacity larger than what was written.
    assert decode_records(empty_buffer(4), SITES) == [] and decode_records(empty_buffer(4), SITES).lost == 0
    assert len(decode_records(_buffer([_record(0, 0, 0, 0)], capacity=4), SITES)) == 1


def test_records_naming_no_site_or_code_are_kept():
    found = decode_records(_buffer([_record(9, 0, 0, 0), _record(1, 5, 1, 0)]), SITES, file="k.ptx")
    assert [(f.code, f.file, f.line, f.severity) for f in found] == [("?", "k.ptx", 0, "error"),
                                                                     ("?", "gemm.ptx", 140, "error")]
    assert "unknown code" in found[0].message()


@pytest.mark.parametrize("buf, field", [
    (b"\0" * 10, "size"),
    (_buffer([], magic=0), "magic"),
    (_buffer([], version=2), "version"),
    (_buffer([_record(0, 0, 0, 0)], capacity=1)[:100], "size"),
])
def test_bytes_that_are_no_report_buffer_are_refused(buf, field):
    with pytest.raises(SanitizerError) as e:
        decode_records(buf, SITES)
    assert e.value.code == "SANITIZER-BUFFER" and e.value.field == field
    assert isinstance(e.value, RuntimeError)
    assert pickle.loads(pickle.dumps(e.value)).args == e.value.args


def test_site_tables_round_trip():
    assert [Site.from_json(s.to_json()) for s in SITES] == SITES
    assert load_sites(json.dumps([s.to_json() for s in SITES])) == SITES
    # descgen instrument's OUT.ptx.sites.json, and its CheckedSite records as they are.
    name = "triton_sm90/matmul_fp8e4nv_128x128x128_w4_s3_bk_sm90.ptx"
    done = instrument_ptx((CORPUS / name).read_text(), file=name)
    table = load_sites(done.sites_json())
    assert [s.line for s in table] == [s.line for s in done.sites] and table[0].file == name
    assert table == [Site.of(s, name) for s in done.sites]
    assert load_sites(json.loads(done.sites_json()), file="other.ptx")[0].file == "other.ptx"
    with pytest.raises(SanitizerError):
        load_sites({"sites": [{"line": 1}]})
    with pytest.raises(SanitizerError):
        load_sites({"file": "x"})


def test_a_check_blocks_record_decodes_to_its_finding():
    """A wgmma site of Triton's PTX, run by the interpreter with a b-desc whose reserved bit 14 is
    set: the record the block writes decodes to WGMMA-SMEM-RESERVED-14 on that operand."""
    name = "triton_sm90/matmul_fp8e4nv_128x128x128_w4_s3_bk_sm90.ptx"
    done = instrument_ptx((CORPUS / name).read_text(), file=name)
    site = done.sites[0]
    assert ("WGMMA-SMEM-RESERVED-14", "b_desc") in site.checks
    regs, reads = dict(site.operands), dict(site.reads)
    legal = 0x4000004000000040  # 128B swizzle, SBO 1024 bytes, start address 0x400
    words = {reads["a_desc"]: legal, reads["b_desc"]: legal | 1 << 14}
    code = blocks(done.ptx, done.sites)[site.index]
    m = Machine(const_tables(done.ptx), words, capacity=2, tid=0)  # (thread 0 of the warpgroup writes)
    m.run(code)
    assert m.trapped
    buf = empty_buffer(2)  # (the host's header: the interpreter writes count, capacity and records)
    for address, byte in m.mem.items():
        buf[address - REPORT] = byte
    (found,) = decode_records(buf, done.sites, file=name)
    assert (found.code, found.operand, found.register, found.word) == (
        "WGMMA-SMEM-RESERVED-14", "b_desc", regs["b_desc"], legal | 1 << 14)
    assert found.complete and found.line == site.line and found.file == name and found.value == 1
    assert (found.block, found.thread, found.smid) == ((3, 0, 0), (0, 0, 0), 7)  # (the interpreter's)
    assert found.message().startswith(f"{name}:{site.line}: WGMMA-SMEM-RESERVED-14 b-desc {regs['b_desc']} = ")


def test_descriptor_error_carries_the_findings():
    found = decode_records(_buffer([_record(0, 1, 2, 1 << 14, value=1), _record(0, 0, 0, 0)], count=3), SITES)
    e = DescriptorError(found, "kernel matmul", lost=found.lost)
    assert isinstance(e, RuntimeError) and e.found == tuple(found) and e.code == "SMEM-RESERVED-14"
    text = str(e)
    assert text.startswith("kernel matmul: 2 descriptor findings:\n  - gemm.ptx:120: SMEM-RESERVED-14 b-desc")
    assert text.endswith("1 more records lost: the report buffer was full")
    again = pickle.loads(pickle.dumps(e))
    assert str(again) == text and isinstance(again.found[0], RuntimeFinding)


def test_report_buffer_without_a_driver_says_so():
    with pytest.raises(SanitizerError) as e:
        ReportBuffer(library="/nonexistent/libcuda.so.1")
    assert e.value.code == "SANITIZER-DRIVER" and "libcuda" in str(e.value)


def test_records_differing_only_in_where_they_ran_are_one_line():
    buf = _buffer([_record(0, 1, 2, 1 << 14, value=1, block=(b, 0, 0), smid=b + 10) for b in range(3)] +
                  [_record(0, 0, 0, 0x10)])
    found = decode_records(buf, SITES)
    lines = report.grouped(found)
    assert len(lines) == 2
    assert lines[0] == found[0].message(False) + " (in 3 records; the first: block (0,0,0), thread (0,0,0), SM 10)"
    assert lines[1] == found[3].message()
    assert str(DescriptorError(found)).count("\n  - ") == 2
