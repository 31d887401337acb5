"""A kernel author's descriptor generator: every public export of ``descgen``, used as a user would.

``mypy --strict`` must pass on this file (tests/test_typing.py runs it, and runs the script too,
so it stays real). When an export is added to ``descgen.__all__``, use it here: the test checks
that every name in ``__all__`` appears as ``descgen.NAME``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping

import descgen

KIND: descgen.Kind = "f16"
ARCH: descgen.Arch = "sm_100a"
CTA_GROUP: descgen.CtaGroup = 1


def every_kind() -> dict[descgen.Kind, int]:
    """One 128x128 descriptor per kind, with the kind's first A/B and accumulator types."""
    out: dict[descgen.Kind, int] = {}
    accum: tuple[descgen.AccumType, ...] = descgen.type_names("dtype")
    scales: tuple[descgen.ScaleType, ...] = descgen.type_names("scale_type")
    for kind in descgen.KINDS:
        defaults = descgen.idesc_defaults(kind)
        assert defaults["dtype"] in accum
        out[kind] = descgen.encode_idesc(kind, 128, 128)
    assert scales == ("ue8m0", "ue4m3")
    return out


def instruction_descriptors() -> dict[str, int]:
    """The instruction descriptors of a bf16 GEMM, an mx fp8 GEMM and a dense i8 one."""
    kinds: tuple[descgen.Kind, ...] = descgen.KINDS
    layouts: dict[str, str] = descgen.KIND_LAYOUTS
    assert KIND in kinds and layouts[KIND] == "idesc_dense"
    word: int = descgen.encode_idesc(KIND, 128, 256, atype="bf16", btype="bf16", b_major="mn")
    mx: int = descgen.encode_idesc("mxf8f6f4", 256, 128, atype="e4m3", btype="e2m1", a_sf_id=0,
                                   cta_group=2, scale_vec="block32", arch="sm_100a")
    i8: int = descgen.encode_idesc("i8", 128, 128, dtype="s32", saturate=True)
    generic: int = descgen.encode("idesc_dense", "f16", m=128, n=256)
    assert generic == descgen.encode_idesc("f16", 128, 256)
    raw: descgen.Word = descgen.encode_idesc("i8", 128, 40, check=False)
    assert raw.findings and not descgen.encode_idesc(KIND, 128, 256).findings
    k: int = descgen.mma_k(descgen.normalize_kind("kind::f16"), sparse=False)
    assert k == 16
    atypes: tuple[descgen.ElementType, ...] = descgen.type_names("atype")
    a: descgen.ElementType = "bf16"
    major: descgen.Major = "mn"
    assert descgen.encode_idesc(KIND, 128, 256, atype=a, btype=a, b_major=major) == word
    defaults: dict[str, str] = descgen.idesc_defaults("mxf4")
    assert "e2m1" in atypes and defaults["dtype"] == "f32"
    return {"IDESC": word, "IDESC_MX": mx, "IDESC_I8": i8}


def decode_and_check(idesc: int) -> None:
    d: descgen.Decoded = descgen.decode_idesc(idesc, KIND)
    n_field: descgen.DecodedField = d["n"]
    assert n_field.value == 256 and n_field.unit == "columns"
    fields: list[descgen.DecodedField] = list(d)
    assert fields[0].lo == 0 and d.ok and d.hex.startswith("0x")
    generic: descgen.Decoded = descgen.decode("idesc_dense", idesc, "f16")
    assert generic.values() == d.values()
    every: dict[descgen.Kind, descgen.Decoded] = descgen.decode_idesc_all(idesc)
    kinds: list[descgen.Kind] = descgen.consistent_kinds(idesc)
    for kind in kinds:
        assert descgen.validate_idesc(idesc, kind).ok == every[kind].ok
    assert set(kinds) <= set(every)
    r: descgen.Report = descgen.validate_idesc(idesc, KIND, cta_group=CTA_GROUP, ws=False, arch=ARCH)
    skipped: tuple[descgen.NotChecked, ...] = r.not_checked
    codes: tuple[str, ...] = r.codes
    assert r.ok, codes
    for nc in skipped:
        missing: tuple[str, ...] = nc.missing
        assert missing
    scale_vecs: tuple[descgen.ScaleVec, ...] = descgen.SCALE_VECS
    assert "block32" in scale_vecs
    mx = descgen.encode_idesc("mxf4", 128, 128, a_sf_id=2)  # 2X allows IDs 0 and 2; 4X only 0
    for vec in scale_vecs:
        if vec == "4X":
            assert not descgen.validate_idesc(mx, "mxf4", scale_vec=vec).ok


def shared_memory() -> dict[str, int]:
    swizzles: tuple[descgen.Swizzle, ...] = descgen.SWIZZLES
    modes: tuple[descgen.LboMode, ...] = descgen.LBO_MODES
    majors: tuple[descgen.Major, ...] = descgen.MAJORS
    orders: tuple[descgen.AtomOrder, ...] = descgen.ATOM_ORDERS
    for swizzle in swizzles:
        if swizzle != "none":
            try:
                t = descgen.smem_for_tile(dtype="f16", major="k", swizzle=swizzle, mn=128, k=64, start_address=0)
            except descgen.EncodeError:  # 128B_base32B has no K-major atom
                continue
            assert t.swizzle == swizzle
    mode: descgen.LboMode = modes[0]
    assert "128B" in swizzles and "relative" in modes and "k" in majors and "mn_first" in orders
    adesc: int = descgen.encode_smem(start_address=0x400, lbo=16, sbo=1024, swizzle="128B")
    bdesc: int = descgen.encode_smem(start_address=0x4400, lbo=16, sbo=1024, swizzle="128B",
                                     lbo_mode=mode, arch=ARCH)
    d: descgen.Decoded = descgen.decode_smem(adesc)
    sbo: object = d.value("sbo")
    assert sbo == 1024
    r: descgen.Report = descgen.validate_smem(adesc, arch="sm_100a", pattern_start=0)
    assert r.ok
    order: descgen.AtomOrder = orders[0]
    td: descgen.TileDescriptor = descgen.smem_for_tile(dtype="bf16", major="k", swizzle="128B", mn=128, k=64,
                                                       start_address=0x400, atom_order=order)
    lbo: int = td.lbo
    offset: int = td.k_offset(16)
    reasons: tuple[str, ...] = td.reasoning
    assert lbo == 16 and offset == 32 and reasons and td.hex == "0x4000404000010040"
    atom: descgen.SwizzleAtom = descgen.swizzle_atom(dtype="bf16", major="k", swizzle="128B")
    assert atom.row_bytes == 128 and td.atom == atom
    lay: descgen.SmemLayout = descgen.smem_layout(td.word, dtype="bf16", major="k", mn=128, k=16)
    address: int = lay.address(1, 0)
    assert address == 0x490 and lay.ok
    stepped: int = descgen.advance_smem(td.word, 32)
    assert stepped == 0x4000404000010042
    return {"A_DESC": adesc, "B_DESC": bdesc, "A_DESC_K1": stepped}


def zero_column_mask() -> int:
    zcm: int = descgen.encode_zcm(start_count=(1, 3, 5, 7), skip_span=1, use_span=13, m=32, n=64)
    mask: int = descgen.zcm_mask(zcm, m=32, n=64)
    parts: tuple[int, ...] = descgen.zcm_submasks(zcm, m=32, n=64)
    counts: dict[int, int] = descgen.submask_counts()
    assert mask == 0x40010004001000 and len(parts) == counts[32]
    d: descgen.Decoded = descgen.decode_zcm(zcm)
    r: descgen.Report = descgen.validate_zcm(zcm, m=32, n=64, ws=True)
    assert d.ok and r.ok
    return zcm


def tensor_memory() -> int:
    taddr: int = descgen.encode_taddr(32, 0, warp=1, alloc_columns=128, alloc_base=0)
    d: descgen.Decoded = descgen.decode_taddr(taddr)
    r: descgen.Report = descgen.validate_taddr(taddr, warp=1)
    lanes: range = descgen.warp_lanes(1)
    warp: int | None = descgen.lane_warp(32)
    sizes: tuple[int, ...] = descgen.alloc_sizes()
    bad: tuple[descgen.Finding, ...] = descgen.check_alloc(48)
    assert d.value("lane") == 32 and r.ok and 32 in lanes and warp == 1 and 512 in sizes
    assert bad[0].code == "TADDR-ALLOC-COLUMNS"
    return taddr


def one_instruction(words: Mapping[str, int], zcm: int) -> descgen.Report:
    r: descgen.Report = descgen.check_mma(idesc=words["IDESC"], kind=KIND, a_desc=words["A_DESC"],
                                          b_desc=words["B_DESC"], cta_group=1, ws=False, arch="sm_100a")
    ws: descgen.Report = descgen.check_mma(idesc=descgen.encode_idesc(KIND, 64, 64), kind=KIND, a_tmem=True,
                                           b_desc=words["B_DESC"], zcm=zcm, cta_group=1, ws=True)
    assert "zcm" in ws.decoded
    # A's start address known at run time only (bits 0-13), as a compiler leaves it
    start = descgen.KnownBits(words["A_DESC"] & ~0x3FFF, ((1 << 64) - 1) & ~0x3FFF)
    partly: descgen.Report = descgen.check_mma(idesc=words["IDESC"], kind=KIND, a_desc=start, b_desc=words["B_DESC"])
    unknown: tuple[str, ...] = partly.decoded["a_desc"].unknown
    assert unknown == ("start_address",) and partly.ok
    first: descgen.Finding | None = r.findings[0] if r.findings else None
    if first is not None:
        severity: str = first.severity
        assert severity in ("error", "warning", "info")
    return r


def runtime_and_diff(idesc: int) -> None:
    rt: descgen.RuntimeIdesc = descgen.idesc_from_runtime(idesc << 32)
    assert rt.idesc == idesc
    delta: descgen.Diff = descgen.diff(idesc, descgen.encode_idesc(KIND, 128, 128), descriptor="idesc", kind=KIND)
    changed: list[str] = [f.name for f in delta.changed]
    assert changed == ["n"] and not delta.equal


def instrument() -> None:
    text = (".version 8.1\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
            ".reg .b64 %rd<3>;\n.reg .f32 %f<5>;\nld.param.u64 %rd1, [p];\nmov.b64 %rd2, 0x4000004000010440;\n"
            "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, 1, 1, 1, 0, 0;\n"
            "ret;\n}\n")
    out: descgen.Instrumented = descgen.instrument_ptx(text, on_error="report", file="k.ptx")
    checked = [(s.line, s.codes[0]) for s in out.sites if s.codes]
    assert checked and checked[0][0] == 10 and "descgen_report" in out.ptx


def scan() -> None:
    text = ("mov.b32 %r1, 0x10200010; mov.b64 %rd2, 0x4000404000010440;\n"
            "tcgen05.mma.cta_group::1.kind::f16 [%r0], [%r4], %rd2, %r1, 1;")
    s: descgen.ScanResult = descgen.scan_ptx(text, arch="sm_100a")
    found: list[tuple[int, str, str | None]] = [(f.line, f.code, f.operand) for f in s.findings]
    assert found == [(2, "IDESC-M-SHAPE", "idesc")]
    first: descgen.ScanFinding = s.findings[0]
    instruction: descgen.ScanInstruction = s.instructions[0]
    operand: descgen.ScanOperand | None = instruction.operand("idesc")
    assert operand is not None and operand.value == 0x10200010 and first.severity == "error"
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(text)
    again: descgen.ScanResult = descgen.scan_file(f.name, arch="sm_100a")
    assert again.codes == s.codes
    files: list[descgen.FileScan] = list(descgen.scan_files([f.name, f.name], arch="sm_100a", jobs=2))
    codes: list[str] = [x.code for scanned in files for chunk in scanned.chunks for x in chunk.findings]
    assert codes == ["IDESC-M-SHAPE"] * 2 and files[1].arch == "sm_100a" and files[0].error is None


def emit_all(words: dict[str, int], report: descgen.Report) -> str:
    formats: tuple[descgen.Format, ...] = descgen.FORMATS
    assert all(descgen.emit(words["IDESC"], fmt, descriptor="idesc", kind=KIND) for fmt in formats)
    smem: descgen.Descriptor = "smem"
    td = descgen.smem_for_tile(dtype="bf16", major="k", swizzle="128B", mn=128, k=64, start_address=0x400)
    out: list[str] = [
        descgen.emit(descgen.decode_idesc(words["IDESC"], KIND), "cpp", name="idesc"),
        descgen.emit({"A_DESC": words["A_DESC"], "B_DESC": words["B_DESC"]}, "c", descriptor=smem),
        descgen.emit(report, "ptx"),
        descgen.emit(td, "python", name="A_TILE"),
        descgen.emit(words["IDESC"], "hex", descriptor="idesc", kind=KIND),
        descgen.emit_functions(td, "cpp", name="a_desc", stage_bytes=32768),
    ]
    return "\n\n".join(out)


def errors() -> None:
    try:
        descgen.encode_idesc("i8", 128, 40)
    except descgen.EncodeError as e:
        code: str = e.code
        findings: tuple[descgen.Finding, ...] = e.findings
        assert code == "IDESC-N-RANGE" and findings
    try:
        descgen.normalize_kind("f17")
    except descgen.UsageError as e:
        assert e.code == "IDESC-KIND"
    try:
        descgen.decode_smem(1 << 64)
    except descgen.WordError as e:
        assert isinstance(e, descgen.DescgenError)
    caught: type[descgen.DescgenError] = descgen.TableError
    assert issubclass(caught, descgen.DescgenError)


def rule_of(report: descgen.Report) -> None:
    from descgen.model.catalog import catalog

    for f in report.findings:
        rule: descgen.Rule = catalog()[f.code]
        assert rule.code == f.code


def hopper() -> int:
    """A Hopper wgmma (sm_90a) descriptor, validated, and ported to Blackwell and back."""
    swizzle: descgen.WgmmaSwizzle = "128B"
    assert swizzle in descgen.WGMMA_SWIZZLES
    word: int = descgen.encode_wgmma_smem(start_address=0x400, lbo=16, sbo=1024, swizzle=swizzle)
    d: descgen.Decoded = descgen.decode_wgmma_smem(word)
    assert d.value("swizzle") == "128B" and descgen.validate_wgmma_smem(word, pattern_start=0x400).ok
    to: descgen.SmemArch = "sm_100a"
    ported: descgen.Ported = descgen.port_smem(word, to=to)
    assert descgen.port_smem(ported.word, to="sm_90a").word == word
    mma: descgen.Report = descgen.check_wgmma(atype="f16", dtype="f32", n=128, a_desc=word, b_desc=word,
                                              trans_a=0, trans_b=1, scale_a=1, scale_b=-1, scale_d=None)
    assert mma.ok and set(mma.decoded) == {"a_desc", "b_desc"}
    return ported.word


def main() -> str:
    version: str = descgen.__version__
    every_kind()
    words = instruction_descriptors()
    decode_and_check(words["IDESC"])
    words.update(shared_memory())
    zcm = zero_column_mask()
    tensor_memory()
    report = one_instruction(words, zcm)
    rule_of(report)
    runtime_and_diff(descgen.encode_idesc(KIND, 128, 256))
    scan()
    instrument()
    errors()
    hopper()
    return f"// descgen {version}\n" + emit_all(words, report)


if __name__ == "__main__":
    print(main())
