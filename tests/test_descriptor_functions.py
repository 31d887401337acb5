"""Run-time descriptor functions (descgen.backends.descriptor_functions, errata E45): the emitted
C++, C, Python and PTX give what encode_smem gives for every 16-byte-aligned address of the
shared memory window and every K block of a grid of tiles; the debug checks catch a planted
carry, an unaligned address and one outside the window."""

from __future__ import annotations

import array
import random
import shutil
import signal
import subprocess

import pytest

import descgen
from descgen.backends.descriptor_functions import descriptor_functions, emit_functions

from soundness import Machine, parse

WINDOW = 1 << 18
ADDRS = range(0, WINDOW, 16)

#: (dtype, major, swizzle, mn, k, kind): every swizzle mode, both majors, 4/8/16/32-bit types.
TILES = [
    ("bf16", "k", "128B", 128, 64, None),
    ("bf16", "k", "128B", 128, 128, None),   # two atoms along K
    ("e4m3", "k", "64B", 128, 128, None),
    ("tf32", "k", "32B", 64, 32, None),
    ("f16", "k", "none", 64, 32, None),
    ("bf16", "mn", "128B", 128, 32, None),
    ("tf32", "mn", "128B_base32B", 64, 16, None),
    ("e2m1", "k", "128B", 128, 256, "mxf4"),
]
STAGE_BYTES = [None, 32768, None, 12288, None, None, 8192, None]
STAGES = (0, 1, 3)


def tile(i: int) -> descgen.TileDescriptor:
    dtype, major, swizzle, mn, k, kind = TILES[i]
    return descgen.smem_for_tile(dtype=dtype, major=major, swizzle=swizzle, mn=mn, k=k, start_address=0, kind=kind)


@pytest.fixture(scope="module")
def expected() -> list[list[int]]:
    """Per tile, the words encode_smem gives at every start address (start >> 4 -> word)."""
    out = []
    for i in range(len(TILES)):
        td = tile(i)
        out.append([int(descgen.encode_smem(start_address=a, lbo=td.lbo, sbo=td.sbo, swizzle=td.swizzle,
                                            base_offset=td.base_offset)) for a in ADDRS])
    return out


def plan(i: int) -> tuple[list[int], list[int], int]:
    """(K-block byte offsets, stage byte offsets, stage bytes) of tile ``i``."""
    td = tile(i)
    fns = descriptor_functions(td, stage_bytes=STAGE_BYTES[i])
    size = td.atom.bytes * td.repeats[0] * td.repeats[1]
    stage = STAGE_BYTES[i] or size
    assert fns.fixed == td.word and fns.fixed & 0x3FFF == 0
    return [td.k_offset(kb * td.mma_k) for kb in range(td.k // td.mma_k)], [s * stage for s in STAGES], stage


def want(expected: list[list[int]], i: int) -> list[int]:
    """What the sweep prints for tile ``i``: per address, every K block, then every stage; the
    start address wraps inside its 14 bits (the functions mask it; the debug checks refuse it)."""
    koffs, soffs, _ = plan(i)
    table = expected[i]
    return [table[((a + off) % WINDOW) >> 4] for a in ADDRS for off in (*koffs, *soffs)]


def sweep_main(lang: str) -> str:
    """A main() printing, per tile, a_desc_k(a_desc(addr), kb) and a_desc_stage(a_desc(addr), s)
    for every address, as raw 64-bit words."""
    lines = ["int main(void) {", "    for (unsigned i = 0; i < (1u << 18); i += 16) {"]
    for i in range(len(TILES)):
        koffs, _, _ = plan(i)
        lines += [f"        {{ uint64_t w[{len(koffs) + len(STAGES)}]; unsigned n = 0;",
                  f"          for (unsigned kb = 0; kb < {len(koffs)}u; kb++) w[n++] = t{i}_k(t{i}(i), kb);",
                  *(f"          w[n++] = t{i}_stage(t{i}(i), {s}u);" for s in STAGES),
                  "          fwrite(w, sizeof w[0], n, stdout); }"]
    lines += ["    }", "    return 0;", "}"]
    text = "\n".join(lines)
    return text.replace("uint64_t", "std::uint64_t") if lang == "cpp" else text


def source(lang: str) -> str:
    return "\n\n".join(emit_functions(tile(i), lang, name=f"t{i}", stage_bytes=STAGE_BYTES[i])
                       for i in range(len(TILES)))


def compile_run(tmp_path, lang: str, text: str, *flags: str, args: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    compiler = {"cpp": ["g++", "-std=c++14"], "c": ["gcc", "-std=c99"]}[lang]
    src = tmp_path / f"main.{'cpp' if lang == 'cpp' else 'c'}"
    src.write_text(text)
    exe = tmp_path / f"main_{lang}"
    subprocess.run([*compiler, "-O1", "-Wall", "-Wextra", "-Werror", "-pedantic", *flags, str(src), "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    return subprocess.run([str(exe), *args], capture_output=True)


def words(raw: bytes) -> list[int]:
    a = array.array("Q")
    a.frombytes(raw)
    return a.tolist()


@pytest.mark.parametrize("lang", ["cpp", "c"])
def test_every_address_and_k_block_matches_encode_smem(tmp_path, expected, lang) -> None:
    if shutil.which("g++" if lang == "cpp" else "gcc") is None:
        pytest.skip("no compiler")
    result = compile_run(tmp_path, lang, source(lang) + "\n\n" + sweep_main(lang))
    assert result.returncode == 0, result.stderr
    got = words(result.stdout)
    per_addr = [len(plan(i)[0]) + len(STAGES) for i in range(len(TILES))]
    n = sum(per_addr)
    assert len(got) == len(ADDRS) * n
    for i in range(len(TILES)):
        start = sum(per_addr[:i])
        mine = [w for a in range(len(ADDRS)) for w in got[a * n + start: a * n + start + per_addr[i]]]
        assert mine == want(expected, i), TILES[i]


def test_python_functions_match_encode_smem(expected) -> None:
    for i in range(len(TILES)):
        ns: dict[str, object] = {}
        exec(emit_functions(tile(i), "python", name="t", stage_bytes=STAGE_BYTES[i]), ns)
        make, k, stage = ns["t"], ns["t_k"], ns["t_stage"]
        koffs, soffs, size = plan(i)
        td = tile(i)
        period = max(td.atom.period, 16)
        last = WINDOW - td.atom.bytes * td.repeats[0] * td.repeats[1]
        table = expected[i]
        for a in range(0, last + 1, period):  # every address the checks allow
            d = make(a)
            assert d == table[a >> 4]
            assert [k(d, kb) for kb in range(len(koffs))] == [table[(a + off) >> 4] for off in koffs]
            for s, off in zip(STAGES, soffs):
                if a + off <= last:
                    assert stage(d, s) == table[(a + off) >> 4]
        with pytest.raises(ValueError, match="descgen: SMEM-START-ADDRESS-ALIGN: start_address = 8 "):
            make(8)
        with pytest.raises(ValueError, match="descgen: LAYOUT-K-OFFSET: k_block"):
            k(make(0), len(koffs))


DEBUG_CASES = {  # name: (expression on tile 0 = bf16 K-major 128B 128x64, code, value)
    "carry": ("t0_k(t0_fixed | 0x3fffu, 1u)", "SMEM-START-ADDRESS-CARRY", 0x40010),
    "unaligned": ("t0(0x408u)", "SMEM-START-ADDRESS-ALIGN", 0x408),
    "window": ("t0(0x40000u)", "SMEM-START-ADDRESS-RANGE", 0x40000),
    "tile": ("t0(0x3c400u)", "LAYOUT-TILE-RANGE", 0x3c400),
    "phase": ("t0(0x480u)", "LAYOUT-ATOM-PHASE", 0x480),
    "k_block": ("t0_k(t0(0x400u), 4u)", "LAYOUT-K-OFFSET", 4),
    "stage": ("t0_stage(t0(0x3c000u), 1u)", "LAYOUT-TILE-RANGE", 0x40000),
}


def debug_main() -> str:
    cases = "\n".join(f'    if (!std::strcmp(argv[1], "{k}")) w = {e};' for k, (e, _, _) in DEBUG_CASES.items())
    return (f"#include <cstring>\n{emit_functions(tile(0), 'cpp', name='t0')}\n\n"
            "int main(int argc, char** argv) {\n    std::uint64_t w = 0;\n    if (argc < 2) return 2;\n"
            f"{cases}\n    std::printf(\"%016llx\\n\", (unsigned long long)w);\n    return 0;\n}}\n")


@pytest.mark.skipif(shutil.which("g++") is None, reason="no g++")
def test_debug_checks_trap_with_the_code(tmp_path) -> None:
    src = tmp_path / "dbg.cpp"
    src.write_text(debug_main())
    for flags, name in (([], "rel"), (["-DDESCGEN_DEBUG"], "dbg")):
        subprocess.run(["g++", "-std=c++14", "-Wall", "-Wextra", "-Werror", "-pedantic", *flags, str(src), "-o",
                        str(tmp_path / name)], check=True, capture_output=True)
    for case, (_, code, value) in DEBUG_CASES.items():
        r = subprocess.run([str(tmp_path / "dbg"), case], capture_output=True, text=True)
        assert r.returncode == -signal.SIGABRT, (case, r)
        assert f"descgen: {code}: " in r.stderr and f"= {value} ({value:#x}), allowed " in r.stderr, (case, r.stderr)
    # Without DESCGEN_DEBUG the planted carry stays inside the start address field: LBO and every
    # other bit as they were (a raw 64-bit add of the offset would have carried into bit 14).
    fixed = tile(0).word
    r = subprocess.run([str(tmp_path / "rel"), "carry"], capture_output=True, text=True)
    got = int(r.stdout, 16)
    assert got & ~0x3FFF == fixed and got & 0x3FFF == (0x3FFF + 2) & 0x3FFF
    assert (fixed | 0x3FFF) + 2 & ~0x3FFF != fixed  # what the raw add does


def test_idesc_and_zcm_functions() -> None:
    word = descgen.encode_idesc("mxf4nvf4", 128, 256)
    ns: dict[str, object] = {}
    exec(emit_functions(descgen.validate_idesc(word, "mxf4nvf4", scale_vec="2X"), "python"), ns)
    for a in (0, 2):
        for b in (0, 2):
            assert ns["idesc"](a, b) == descgen.encode_idesc("mxf4nvf4", 128, 256, a_sf_id=a, b_sf_id=b)
    with pytest.raises(ValueError, match="IDESC-A-SF-ID-SCALE-VEC: a_sf_id = 1 "):
        ns["idesc"](1, 0)
    dense = emit_functions(descgen.validate_idesc(0x08400010, "f16"), "cpp")
    assert "no run-time part" in dense and "constexpr std::uint32_t idesc_fixed = 0x08400010u;" in dense
    assert "DESCGEN_CHECK" not in dense
    sparse = descgen.encode_idesc("tf32", 128, 256, sparse=True)
    ns = {}
    exec(emit_functions(descgen.decode_idesc(sparse, "tf32"), "python"), ns)
    assert [ns["idesc"](s) for s in range(4)] == [descgen.encode_idesc("tf32", 128, 256, sparse=True,
                                                                        sparsity_selector=s) for s in range(4)]
    e15 = emit_functions(descgen.decode_idesc(descgen.encode_idesc("i8", 128, 256, sparse=True), "i8"), "python")
    assert "no run-time part" in e15 and "E15" in e15 and "def idesc" not in e15
    zcm = descgen.encode_zcm(start_count=(1, 3, 5, 7), skip_span=1, use_span=13)
    ns = {}
    exec(emit_functions(descgen.validate_zcm(zcm, m=32, n=64), "python"), ns)
    for s in range(17):
        assert ns["zcm_desc"](s) == descgen.encode_zcm(start_count=(1, 3, 5, 7), skip_span=1, use_span=13,
                                                       column_shift=s)
    with pytest.raises(ValueError, match="ZCM-COLUMN-SHIFT-M: column_shift = 17 "):
        ns["zcm_desc"](17)


def test_usage_errors() -> None:
    td = tile(0)
    for bad in (1000, 16384 + 512, 8192):
        with pytest.raises(descgen.UsageError) as e:
            emit_functions(td, "cpp", stage_bytes=bad)
        assert e.value.code == "EMIT-STAGE-BYTES"
    with pytest.raises(descgen.UsageError) as e:
        emit_functions(td, "json")
    assert e.value.code == "EMIT-FORMAT"
    with pytest.raises(descgen.UsageError) as e:
        emit_functions(td, "cpp", name="class")
    assert e.value.code == "EMIT-NAME"


PTX_KERNEL = """.version 8.7
.target sm_100a
.address_size 64

.visible .entry k(.param .u32 p_addr, .param .u32 p_kb, .param .u32 p_stage, .param .u64 p_out)
{{
    .reg .b32 %t_smem_addr, %t_k_block, %t_stage;
    .reg .b64 %t, %out;
    ld.param.u32 %t_smem_addr, [p_addr];
    ld.param.u32 %t_k_block, [p_kb];
    ld.param.u32 %t_stage, [p_stage];
    ld.param.u64 %out, [p_out];
{body}
    st.global.u64 [%out], %t;
    ret;
}}
"""


def ptx_kernel(i: int) -> str:
    blocks = emit_functions(tile(i), "ptx", name="t", stage_bytes=STAGE_BYTES[i]).split("\n\n")
    return PTX_KERNEL.format(body="\n".join(blocks[1:]))  # make, then stage, then K block (in place)


def test_ptx_sequence_interpreted(expected) -> None:
    """tests/soundness.py's concrete PTX interpreter runs the emitted sequence for a sample of
    addresses: t(addr), then t_stage(stage), then t_k(k_block), in place on %t."""
    rng = random.Random(20)
    for i in range(len(TILES)):
        text = "\n".join(line for line in ptx_kernel(i).splitlines() if "ld.param" not in line)
        (fn,) = parse(text)
        koffs, soffs, _ = plan(i)
        table = expected[i]
        for _ in range(40):
            a, kb, s = rng.randrange(0, WINDOW, 16), rng.randrange(len(koffs)), rng.randrange(len(STAGES))
            m = Machine(fn, {}, random.Random(0))
            m.regs.update({"%t_smem_addr": a, "%t_k_block": kb, "%t_stage": STAGES[s]})
            m.run(10_000, lambda *_: None)
            assert m.regs["%t"] == table[((a + soffs[s] + koffs[kb]) % WINDOW) >> 4], (TILES[i], a, kb, s)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="no ptxas")
def test_ptx_sequence_assembles(tmp_path) -> None:
    for i in (0, 5):
        src = tmp_path / f"k{i}.ptx"
        src.write_text(ptx_kernel(i))
        r = subprocess.run(["ptxas", "-arch=sm_100a", str(src), "-o", str(tmp_path / f"k{i}.cubin")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc")
def test_nvcc_compiles_for_sm_90a_and_sm_100a(tmp_path) -> None:
    text = (emit_functions(tile(0), "cpp", name="a_desc") + "\n\n"
            + emit_functions(descgen.validate_idesc(descgen.encode_idesc("mxf8f6f4", 128, 256), "mxf8f6f4"), "cpp")
            + "\n\n__global__ void k(unsigned long long* out, unsigned addr, unsigned kb, unsigned s) {\n"
              "    out[0] = a_desc_k(a_desc_stage(a_desc(addr), s), kb);\n    out[1] = idesc(kb & 3u, 0u);\n}\n")
    src = tmp_path / "k.cu"
    src.write_text(text)
    for flags in ([], ["-DDESCGEN_DEBUG"]):
        r = subprocess.run(["nvcc", "-std=c++14", "-gencode=arch=compute_90a,code=sm_90a",
                            "-gencode=arch=compute_100a,code=sm_100a", *flags, "-c", str(src), "-o",
                            str(tmp_path / "k.o")], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


def every_tile():
    """Every tile of 1x1, 2x2 and 1x4 atoms that Table 52/53 allow, for every A/B type (e2m1 under
    both storages), whose K is a whole number of MMA K blocks."""
    for dtype, kind in [("f16", None), ("bf16", None), ("tf32", None), ("e4m3", None), ("e5m2", None), ("s8", None),
                        ("u8", None), ("e2m3", None), ("e3m2", None), ("e2m1", "f8f6f4"), ("e2m1", "mxf4")]:
        for major in ("k", "mn"):
            for swizzle in ("none", "128B_base32B", "128B", "64B", "32B"):
                try:
                    atom = descgen.swizzle_atom(dtype=dtype, major=major, swizzle=swizzle, kind=kind)
                except descgen.DescgenError:
                    continue
                for rm, rk in ((1, 1), (2, 2), (1, 4)):
                    try:
                        td = descgen.smem_for_tile(dtype=dtype, major=major, swizzle=swizzle, mn=atom.mn * rm,
                                                   k=atom.k * rk, start_address=0, kind=kind)
                    except descgen.DescgenError:
                        continue
                    if td.k % td.mma_k == 0:
                        yield td


def test_python_functions_of_every_tile_kind() -> None:
    """Every tile descgen models: its Python functions at sampled pattern-aligned addresses equal
    encode_smem at the address plus TileDescriptor.k_offset of each K block."""
    rng = random.Random(44)
    tiles = list(every_tile())
    assert len(tiles) > 100
    for td in tiles:
        ns: dict[str, object] = {}
        exec(emit_functions(td, "python", name="t"), ns)
        size = td.atom.bytes * td.repeats[0] * td.repeats[1]
        step = max(16, td.atom.period)
        for a in rng.sample(range(0, WINDOW - size + 1, step), 8):
            d = ns["t"](a)
            for kb in range(td.k // td.mma_k):
                start = a + td.k_offset(kb * td.mma_k)
                assert ns["t_k"](d, kb) == descgen.encode_smem(start_address=start, lbo=td.lbo, sbo=td.sbo,
                                                               swizzle=td.swizzle, base_offset=td.base_offset), \
                    (td.dtype, td.major, td.swizzle, td.mn, td.k, a, kb)
            if a + size <= WINDOW - size:
                assert ns["t_stage"](d, 1) == descgen.encode_smem(start_address=a + size, lbo=td.lbo, sbo=td.sbo,
                                                                  swizzle=td.swizzle, base_offset=td.base_offset)


# -- a shared memory descriptor given by its fields (descgen smem --lbo/--sbo without --addr) ---------

#: (lbo, sbo, swizzle, base_offset, arch): each swizzle mode, a base offset, and the wgmma word.
WORDS = [
    (16, 1024, "128B", 0, None),
    (16, 512, "64B", 3, None),
    (128, 256, "none", 0, None),
    (16, 1024, "128B", 0, "sm_90a"),
]
#: Byte offsets given to NAME_advance: a K block inside an atom row, a whole pattern, a stage.
OFFSETS = (32, 96, 1024, 16384)


def fields_report(i: int) -> descgen.Report:
    lbo, sbo, swizzle, base, arch = WORDS[i]
    if arch:
        return descgen.validate_wgmma_smem(descgen.encode_wgmma_smem(start_address=0, lbo=lbo, sbo=sbo, swizzle=swizzle,
                                                                     base_offset=base))
    return descgen.validate_smem(descgen.encode_smem(start_address=0, lbo=lbo, sbo=sbo, swizzle=swizzle,
                                                     base_offset=base))


def fields_encode(i: int, a: int) -> int:
    lbo, sbo, swizzle, base, arch = WORDS[i]
    encode = descgen.encode_wgmma_smem if arch else descgen.encode_smem
    return int(encode(start_address=a, lbo=lbo, sbo=sbo, swizzle=swizzle, base_offset=base))


def test_fields_form_is_the_tile_forms_code() -> None:
    """One home: the fields' NAME(smem_addr) is the tile form's (the same checks and expression),
    and NAME_advance moves the start address as the tile's NAME_k does."""
    td = tile(0)
    fields = descriptor_functions(descgen.validate_smem(descgen.encode_smem(
        start_address=0, lbo=td.lbo, sbo=td.sbo, swizzle=td.swizzle, base_offset=td.base_offset)), name="t")
    tiled = descriptor_functions(td, name="t")
    assert fields.fixed == tiled.fixed == td.word
    make_f, make_t = fields.functions[0], tiled.functions[0]
    assert make_f.lo == make_t.lo and make_f.hi == make_t.hi
    assert set(make_f.body) < set(make_t.body)  # (the tile adds its own range)
    assert [f.name for f in fields.functions] == ["t", "t_advance"]
    assert fields.functions[1].lo == tiled.functions[1].lo and fields.functions[1].hi == "hi"


@pytest.mark.skipif(shutil.which("g++") is None, reason="no g++")
def test_fields_functions_match_encode_smem_at_every_address(tmp_path) -> None:
    """C++: NAME(addr) at every 16-byte-aligned address of the window, and NAME_advance by each
    offset, equal encode_smem / encode_wgmma_smem there (the advance wraps inside the field)."""
    text = "\n\n".join(emit_functions(fields_report(i), "cpp", name=f"w{i}") for i in range(len(WORDS)))
    lines = ["int main() {", "    for (std::uint32_t a = 0; a < (1u << 18); a += 16) {"]
    for i in range(len(WORDS)):
        lines.append(f"        {{ std::uint64_t w[{1 + len(OFFSETS)}] = {{w{i}(a)"
                     + "".join(f", w{i}_advance(w{i}(a), {o}u)" for o in OFFSETS) + "};"
                     " fwrite(w, sizeof w[0], sizeof w / sizeof w[0], stdout); }")
    lines += ["    }", "    return 0;", "}"]
    result = compile_run(tmp_path, "cpp", "#include <cstdio>\n" + text + "\n\n" + "\n".join(lines))
    assert result.returncode == 0, result.stderr
    got = words(result.stdout)
    per = 1 + len(OFFSETS)
    assert len(got) == len(ADDRS) * per * len(WORDS)
    for i in range(len(WORDS)):
        table = [fields_encode(i, a) for a in ADDRS]
        mine = [got[(n * len(WORDS) + i) * per: (n * len(WORDS) + i + 1) * per] for n in range(len(ADDRS))]
        assert mine == [[table[a >> 4], *(table[((a + o) % WINDOW) >> 4] for o in OFFSETS)] for a in ADDRS], WORDS[i]


def test_fields_functions_python_and_checks() -> None:
    for i in range(len(WORDS)):
        ns: dict[str, object] = {}
        exec(emit_functions(fields_report(i), "python", name="t"), ns)
        make, advance = ns["t"], ns["t_advance"]
        lbo, sbo, swizzle, base, _ = WORDS[i]
        period = max(16, descgen.swizzle_atom(dtype="bf16", major="k", swizzle=swizzle).period) \
            if swizzle != "none" else 16
        start = 128 * base
        for a in range(start, WINDOW - 16384, 4 * period):
            d = make(a)
            assert d == fields_encode(i, a)
            for o in OFFSETS:
                assert advance(d, o) == fields_encode(i, a + o)
        with pytest.raises(ValueError, match="SMEM-START-ADDRESS-ALIGN: offset = 8 "):
            advance(make(start), 8)
        with pytest.raises(ValueError, match="SMEM-START-ADDRESS-CARRY: start_address = 262160 "):
            advance(make(start) | 0x3FFF, 32)  # a planted carry out of the 14-bit field
        if swizzle != "none":
            with pytest.raises(ValueError, match="LAYOUT-ATOM-PHASE: start_address"):
                make(start + 128)  # row 1 of the pattern, not the row the base offset assumes
            with pytest.raises(ValueError, match="LAYOUT-ATOM-PHASE: start_address"):
                advance(make(start), 128)


@pytest.mark.skipif(shutil.which("g++") is None, reason="no g++")
def test_fields_debug_checks_trap_and_release_masks(tmp_path) -> None:
    cases = {"carry": ("w0_advance(w0_fixed | 0x3fffu, 32u)", "SMEM-START-ADDRESS-CARRY", 0x40010),
             "offset": ("w0_advance(w0(0x400u), 8u)", "SMEM-START-ADDRESS-ALIGN", 8),
             "phase": ("w0_advance(w0(0x400u), 128u)", "LAYOUT-ATOM-PHASE", 0x480),
             "window": ("w0(0x40000u)", "SMEM-START-ADDRESS-RANGE", 0x40000)}
    body = "\n".join(f'    if (!std::strcmp(argv[1], "{k}")) w = {e};' for k, (e, _, _) in cases.items())
    src = tmp_path / "dbg.cpp"
    src.write_text(f"#include <cstring>\n{emit_functions(fields_report(0), 'cpp', name='w0')}\n\n"
                   f"{emit_functions(fields_report(1), 'cpp', name='w1')}\n\n"  # (a base offset: its check's text)
                   "int main(int argc, char** argv) {\n    std::uint64_t w = 0;\n    if (argc < 2) return 2;\n"
                   f"{body}\n    std::printf(\"%016llx\\n\", (unsigned long long)w);\n    return 0;\n}}\n")
    for flags, name in (([], "rel"), (["-DDESCGEN_DEBUG"], "dbg")):
        subprocess.run(["g++", "-std=c++14", "-Wall", "-Wextra", "-Werror", "-pedantic", *flags, str(src), "-o",
                        str(tmp_path / name)], check=True, capture_output=True)
    for case, (_, code, value) in cases.items():
        r = subprocess.run([str(tmp_path / "dbg"), case], capture_output=True, text=True)
        assert r.returncode == -signal.SIGABRT, (case, r)
        assert f"descgen: {code}: " in r.stderr and f"= {value} ({value:#x}), allowed " in r.stderr, (case, r.stderr)
    fixed = fields_encode(0, 0)
    got = int(subprocess.run([str(tmp_path / "rel"), "carry"], capture_output=True, text=True).stdout, 16)
    assert got & ~0x3FFF == fixed and got & 0x3FFF == (0x3FFF + 2) & 0x3FFF  # nothing carried into the LBO


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="no ptxas")
def test_fields_ptx_interpreted_and_assembles(tmp_path) -> None:
    blocks = emit_functions(fields_report(1), "ptx", name="t").split("\n\n")
    kernel = PTX_KERNEL.replace("%t_k_block, %t_stage;", "%t_offset, %t_stage, %t_k_block;").replace(
        "ld.param.u32 %t_k_block, [p_kb];", "ld.param.u32 %t_offset, [p_kb];").format(body="\n".join(blocks[1:]))
    src = tmp_path / "w.ptx"
    src.write_text(kernel)
    r = subprocess.run(["ptxas", "-arch=sm_100a", str(src), "-o", str(tmp_path / "w.cubin")], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    (fn,) = parse("\n".join(line for line in kernel.splitlines() if "ld.param" not in line))
    for a in (0x180, 0x980, 0x3f980):
        for o in OFFSETS:
            m = Machine(fn, {}, random.Random(0))
            m.regs.update({"%t_smem_addr": a, "%t_offset": o, "%t_stage": 0})
            m.run(10_000, lambda *_: None)
            assert m.regs["%t"] == fields_encode(1, (a + o) % WINDOW), (a, o)


# ---------------------------------------------------------------------------------------------
# Include guards, and the standard each form says it needs.


def guard_forms() -> dict[str, object]:
    """One of each kind of function output, with its own name: a tile (several statements), a
    word given by its fields, a block-scaled idesc (one return statement), a sparse idesc, a
    zero-column mask (a check), an idesc with no run-time part (the constant alone)."""
    return {
        "a_desc": tile(0),
        "w_desc": fields_report(0),
        "mx_idesc": descgen.validate_idesc(descgen.encode_idesc("mxf8f6f4", 128, 256), "mxf8f6f4"),
        "sp_idesc": descgen.decode_idesc(descgen.encode_idesc("tf32", 128, 256, sparse=True), "tf32"),
        "zcm_desc": descgen.validate_zcm(descgen.encode_zcm(start_count=(1, 3, 5, 7), skip_span=1, use_span=13),
                                         m=32, n=64),
        "dense_idesc": descgen.validate_idesc(0x08400010, "f16"),
    }


def _fixed_check(name: str, fixed: int, lang: str) -> str:
    """A line that compiles only if the file defines ``name``'s fixed part as ``fixed`` (C89-safe:
    no 64-bit literal)."""
    hi, lo = fixed >> 32, fixed & 0xFFFF_FFFF
    if lang == "cpp":
        return (f"static_assert({name}_fixed >> 16 >> 16 == {hi:#x}UL && "
                f'({name}_fixed & 0xFFFFFFFFUL) == {lo:#x}UL, "{name}");')
    big = f"{name}_FIXED".upper()
    return (f"typedef char check_{name}[({big} >> 16 >> 16) == {hi:#x}UL && "
            f"({big} & 0xFFFFFFFFUL) == {lo:#x}UL ? 1 : -1];")


@pytest.mark.parametrize("lang", ["cpp", "c"])
def test_each_function_form_is_guarded_and_needs_the_standard_it_states(tmp_path, lang) -> None:
    """Each output starts with the standard it needs and an include guard named after its content.
    Included twice into one translation unit it compiles at that standard (with and without
    DESCGEN_DEBUG) and the standard below refuses it: C++14 for functions of several statements
    (C++11 allows one return statement), C++11 for one return statement or the constant alone
    (C++03 has no constexpr), C99 for C's static inline functions (C89 has no inline). (A C file of
    the constant alone, a 32-bit word here, is tests/test_emit.py's C form: gcc's <stdint.h> serves
    C89 too, so only a 64-bit word shows C89 refusing it.)"""
    from standards import C_STANDARDS, CPP_STANDARDS, below, compile_at, stated

    tool, ext = ("g++", "hpp") if lang == "cpp" else ("gcc", "h")
    stateds = {}
    for name, thing in guard_forms().items():
        text = emit_functions(thing, lang, name=name)
        lines = text.splitlines()
        macro = lines[1].split()[1]
        assert lines[1:3] == [f"#ifndef {macro}", f"#define {macro}"] and lines[-1].startswith("#endif ")
        assert macro.startswith(f"DESCGEN_{name.upper()}_") and macro.endswith(f"_{ext.upper()}")
        std, _ = stated(text)
        stateds[name] = std
        (tmp_path / f"{name}.{ext}").write_text(text)
        check = _fixed_check(name, descriptor_functions(thing, name=name).fixed, lang)
        tu = f'#include "{name}.{ext}"\n#include "{name}.{ext}"\n{check}\n'
        for flags in ([], ["-DDESCGEN_DEBUG"]):
            r = compile_at(tool, std, tu, f"tu_{name}.{lang}", tmp_path, *flags)
            assert r.returncode == 0, (name, std, r.stderr)
        if lang == "cpp" or "static inline" in text:
            r = compile_at(tool, below(std), tu, f"tu_{name}.{lang}", tmp_path)
            assert r.returncode != 0, (name, below(std), "compiles below the standard it states")
    assert stateds == ({"a_desc": "c++14", "w_desc": "c++14", "mx_idesc": "c++11", "sp_idesc": "c++11",
                        "zcm_desc": "c++14", "dense_idesc": "c++11"} if lang == "cpp"
                       else dict.fromkeys(stateds, "c99"))
    # Every form in one translation unit, each twice, and a copy of one under another file name
    # (the same content: the same guard): no name or macro collides, nothing is defined twice.
    (tmp_path / f"copy.{ext}").write_text((tmp_path / f"a_desc.{ext}").read_text())
    tu = "".join(f'#include "{name}.{ext}"\n' * 2 for name in guard_forms()) + f'#include "copy.{ext}"\n'
    top = max(stateds.values(), key=(CPP_STANDARDS if lang == "cpp" else C_STANDARDS).index)
    for flags in ([], ["-DDESCGEN_DEBUG"]):
        r = compile_at(tool, top, tu, f"all.{lang}", tmp_path, *flags)
        assert r.returncode == 0, r.stderr


def test_a_different_function_body_is_a_different_guard() -> None:
    """The guard follows the code, not the word: the same fixed part with other stages is another
    file (both included, their functions collide by name rather than one being dropped); the same
    code from another command line (other comment lines) is the same file."""
    guard = lambda text: text.splitlines()[1]  # noqa: E731
    one = emit_functions(tile(0), "cpp", name="a_desc")
    assert guard(one) != guard(emit_functions(tile(0), "cpp", name="a_desc", stage_bytes=32768))
    assert guard(one) == guard(emit_functions(tile(0), "cpp", name="a_desc", source="descgen smem ...", notes=("x",)))
    assert guard(one) != guard(emit_functions(tile(0), "c", name="a_desc"))


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc")
def test_nvcc_compiles_each_cpp_form_at_the_standard_it_states_and_not_below(tmp_path) -> None:
    """As CUDA (nvcc, sm_90a and sm_100a, warnings as errors), included twice, the functions used
    in a kernel: at the stated standard, and refused at the one below."""
    from standards import below, compile_at, stated

    for name in ("a_desc", "mx_idesc", "dense_idesc"):  # C++14, C++11 (one return), C++11 (the constant)
        thing = guard_forms()[name]
        text = emit_functions(thing, "cpp", name=name)
        (tmp_path / f"{name}.hpp").write_text(text)
        call = {"a_desc": "a_desc_k(a_desc(addr), kb)",
                "mx_idesc": "mx_idesc(kb & 3u, 0u)"}.get(name, f"{name}_fixed + addr")
        tu = (f'#include "{name}.hpp"\n#include "{name}.hpp"\n'
              f"__global__ void k(unsigned long long* out, unsigned addr, unsigned kb) {{ out[0] = {call}; }}\n")
        std, _ = stated(text)
        gencode = ["-gencode=arch=compute_90a,code=sm_90a", "-gencode=arch=compute_100a,code=sm_100a"]
        r = compile_at("nvcc", std, tu, f"{name}.cu", tmp_path, *gencode)
        assert r.returncode == 0, (name, std, r.stderr)
        r = compile_at("nvcc", below(std), tu, f"{name}.cu", tmp_path, *gencode[1:])
        assert r.returncode != 0, (name, below(std), "nvcc compiles it below the standard it states")
