"""The pictures (descgen/pictures/): a layout's SVG read back element by element against
``smem_layout``, findings marked, an instruction descriptor's shape, and ``--svg`` on the
command line giving the library's document exactly."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import descgen
from descgen.pictures import idesc_shape_svg, smem_layout_svg
from descgen.pictures.smem_layout import row_bytes
from descgen.pictures.svg import Svg

from test_cli import run

NS = "{http://www.w3.org/2000/svg}"

#: (dtype, major, swizzle, mn, k, arch, kind): real tiles, each made by smem_for_tile at 0x400.
TILES = [
    ("bf16", "k", "128B", 128, 64, None, None),
    ("bf16", "mn", "128B", 128, 16, None, None),
    ("e4m3", "k", "64B", 64, 64, None, None),
    ("e4m3", "k", "32B", 32, 32, None, None),
    ("f16", "k", "none", 64, 32, None, None),
    ("bf16", "mn", "64B", 64, 16, None, None),
    ("f16", "mn", "32B", 32, 16, None, None),
    ("e5m2", "mn", "none", 32, 32, None, None),
    ("tf32", "mn", "128B_base32B", 64, 16, None, None),
    ("e2m1", "k", "64B", 16, 128, None, "mxf4"),  # 4-bit, packed: two elements a byte
    ("e2m1", "k", "64B", 32, 64, None, "f8f6f4"),  # 4-bit, padded
    ("e3m2", "k", "32B", 16, 32, None, "f8f6f4"),  # 6-bit
    ("f16", "k", "128B", 64, 64, "sm_90a", None),  # Hopper wgmma descriptors
    ("bf16", "mn", "128B", 128, 16, "sm_90a", None),
    ("e4m3", "k", "none", 64, 64, "sm_90a", None),
]


def _layout(dtype, major, swizzle, mn, k, arch, kind, **extra):
    arch_arg = {"arch": arch} if arch else {}
    td = descgen.smem_for_tile(dtype=dtype, major=major, swizzle=swizzle, mn=mn, k=k, start_address=0x400, kind=kind,
                               **arch_arg)
    return descgen.smem_layout(td.word, dtype=dtype, major=major, mn=mn, k=k, kind=kind, **arch_arg, **extra)


def _parse(text: str) -> ET.Element:
    assert text.endswith("</svg>\n") and text.isascii()
    return ET.fromstring(text)


def _elements(root: ET.Element) -> dict[tuple[int, int], tuple[ET.Element, ET.Element]]:
    """(i, j) -> (its rect, its chunk's group), for every element drawn; no element drawn twice."""
    out = {}
    for g in root.iter(f"{NS}g"):
        if g.get("class") != "chunk":
            continue
        for rect in g.findall(f"{NS}rect"):
            if rect.get("class") == "element":
                ij = (int(rect.get("data-row")), int(rect.get("data-k")))
                assert ij not in out, ij
                out[ij] = (rect, g)
    return out


def _rows(root: ET.Element) -> dict[int, ET.Element]:
    return {int(r.get("data-addr"), 16): r for r in root.iter(f"{NS}rect") if r.get("class") == "row"}


def _phase(lay: descgen.SmemLayout, address: int) -> int:
    """The swizzle's XOR on the 16-byte chunk index at ``address``, from the mode's Swizzle<B,M,S>
    (errata E9: the pattern row is address bits 7 and up, less the base offset)."""
    b, m, s = lay.atom.functor
    return (((address >> (m + s)) - lay.base_offset) & ((1 << b) - 1)) << (m - 4)


@pytest.mark.parametrize("case", TILES, ids=lambda c: "-".join(str(x) for x in c if x))
def test_every_element_is_drawn_where_smem_layout_puts_it(case):
    lay = _layout(*case)
    assert lay.ok, lay.findings
    root = _parse(smem_layout_svg(lay))
    drawn = _elements(root)
    assert sorted(drawn) == [(i, j) for i in range(lay.mn) for j in range(lay.k)]
    assert root.get("data-word") == lay.hex
    assert root.get("data-elements") == root.get("data-drawn") == str(lay.mn * lay.k)
    rows = _rows(root)
    width = row_bytes(lay)
    t = lay.atom.per_chunk
    for i, j, address, bit in lay:
        rect, chunk = drawn[i, j]
        assert int(rect.get("data-addr"), 16) == address
        assert int(rect.get("data-bit", "0")) == bit
        assert ("data-bit" in rect.attrib) == (lay.atom.element_bits < 8)
        assert int(chunk.get("data-chunk"), 16) == address - address % 16
        assert int(chunk.get("data-phase")) == _phase(lay, address)
        # drawn at its address: in the row that holds it, (address % row, bit) across at 64 units a chunk
        row = rows[address - address % width]
        assert float(rect.get("y")) == float(row.get("y"))
        assert float(rect.get("x")) - float(row.get("x")) == ((address % width) * 8 + bit) * 64 / 128
        assert float(rect.get("width")) == lay.atom.element_bits * 64 / 128
        assert "data-finding" not in rect.attrib
        if lay.atom.swizzled:  # the XOR: the chunk the element sits in, ⊕ the phase, is its chunk before swizzling
            along = j if lay.major == "k" else i
            assert (address % width) // 16 ^ _phase(lay, address) == along // t % lay.atom.columns
    assert [f.get("data-code") for f in root.iter(f"{NS}g") if f.get("class") == "finding"] == []


def test_the_128B_phases_count_0_to_7_down_the_pattern():
    lay = _layout("bf16", "k", "128B", 16, 64, None, None)
    root = _parse(smem_layout_svg(lay))
    phases = [(t.get("data-addr"), t.text) for t in root.iter(f"{NS}text") if t.get("class") == "phase"]
    assert phases == [(f"{0x400 + 128 * r:#x}", f"⊕{r % 8}") for r in range(16)]
    starts = [line for line in root.iter(f"{NS}line") if line.get("class") == "pattern-start"]
    assert len(starts) == 2  # rows 0 and 8: where the 1024-byte pattern starts over
    # the first row's chunks in order, the second's swapped in pairs: c ^ 1
    elements = _elements(root)
    assert [elements[1, 8 * c][1].get("data-chunk") for c in range(8)] == \
        [f"{0x480 + 16 * (c ^ 1):#x}" for c in range(8)]


def test_tile_panel_and_core_matrices():
    lay = _layout("bf16", "k", "128B", 32, 64, None, None)
    root = _parse(smem_layout_svg(lay))
    cells = [r for r in root.iter(f"{NS}rect") if r.get("class") == "tile-chunk"]
    assert len(cells) == 32 * 8
    assert {(c.get("data-i"), c.get("data-j")) for c in cells} == \
        {(f"{i}-{i}", f"{8 * c}-{8 * c + 7}") for i in range(32) for c in range(8)}
    cores = sorted(r.get("data-core") for r in root.iter(f"{NS}rect") if r.get("class") == "core-matrix")
    assert cores == sorted(f"{a},{b}" for a in range(4) for b in range(8))  # 8 rows x 16 bytes each
    mn = _parse(smem_layout_svg(_layout("bf16", "mn", "64B", 64, 16, None, None)))
    cores = sorted(r.get("data-core") for r in mn.iter(f"{NS}rect") if r.get("class") == "core-matrix")
    assert cores == sorted(f"{a},{b}" for a in range(8) for b in range(2))  # MN-major: 16 bytes of MN x 8 of K


def test_overlaps_are_marked_element_by_element():
    """Figure 189's 16x16 tf32 tile through one K-major 32B descriptor (errata E25): the read
    runs past the atom row into the next rows, so elements share addresses."""
    lay = _layout("tf32", "k", "32B", 16, 8, None, None)
    word = lay.word
    lay = descgen.smem_layout(word, dtype="tf32", major="k", mn=16, k=16)
    codes = {f.code for f in lay.findings}
    assert {"LAYOUT-OVERLAP", "LAYOUT-ROW-SPAN"} <= codes
    root = _parse(smem_layout_svg(lay))
    drawn = _elements(root)
    assert len(drawn) == 16 * 16
    at: dict[int, list[tuple[int, int]]] = {}
    for i, j, _, _ in lay:
        at.setdefault(lay.bit_address(i, j), []).append((i, j))
    shared = {ij for elements in at.values() if len(elements) > 1 for ij in elements}
    assert len(shared) == 2 * 120  # the finding's 120 clashes, each a pair
    marked = {ij for ij, (rect, _) in drawn.items() if "LAYOUT-OVERLAP" in rect.get("data-finding", "")}
    assert marked == shared
    for elements in at.values():  # elements at one address share the row's height, one above the other
        ys = sorted(float(drawn[ij][0].get("y")) for ij in elements)
        heights = {float(drawn[ij][0].get("height")) for ij in elements}
        assert heights == {14 / len(elements)} and len(set(ys)) == len(elements)
    listed = [g.get("data-code") for g in root.iter(f"{NS}g") if g.get("class") == "finding"]
    assert listed == [f.code for f in lay.findings]


def test_reads_outside_the_buffer_are_marked():
    lay = descgen.smem_layout(0x4000404000010040, dtype="bf16", major="k", mn=16, k=64, buffer=(0x400, 1024))
    assert [f.code for f in lay.findings] == ["LAYOUT-OUTSIDE-BUFFER"]
    root = _parse(smem_layout_svg(lay))
    drawn = _elements(root)
    marked = {ij for ij, (rect, _) in drawn.items() if rect.get("data-finding") == "LAYOUT-OUTSIDE-BUFFER"}
    assert marked == {(i, j) for i, j, address, _ in lay if address >= 0x800} and len(marked) == 512
    cells = [c for c in root.iter(f"{NS}rect") if c.get("class") == "tile-chunk"]
    assert {c.get("data-i") for c in cells if c.get("data-finding")} == {f"{i}-{i}" for i in range(8, 16)}
    # the same tile inside its buffer: nothing marked
    clean = _parse(smem_layout_svg(descgen.smem_layout(0x4000404000010040, dtype="bf16", major="k", mn=16, k=64,
                                                       buffer=(0x400, 2048))))
    assert not [r for r in clean.iter(f"{NS}rect") if r.get("data-finding")]


def test_large_layouts_are_capped_with_a_note():
    lay = _layout("bf16", "k", "128B", 128, 64, None, None)
    root = _parse(smem_layout_svg(lay, max_rows=16))
    drawn = _elements(root)
    assert root.get("data-rows") == "128" and root.get("data-rows-drawn") == "16"
    assert sorted(drawn) == [(i, j) for i in range(16) for j in range(64)]
    assert root.get("data-drawn") == str(16 * 64) and root.get("data-elements") == str(128 * 64)
    notes = [t.text for t in root.iter(f"{NS}text") if t.get("class") == "note"]
    assert notes == ["… 112 more rows not drawn (first 16)", "… 112 more rows read, not drawn (first 16 of 128)"]
    with pytest.raises(ValueError):
        smem_layout_svg(lay, max_rows=0)


def test_wide_tiles_draw_64_columns_with_a_note():
    lay = _layout("f16", "k", "none", 8, 1024, None, None)
    root = _parse(smem_layout_svg(lay))
    cells = [c for c in root.iter(f"{NS}rect") if c.get("class") == "tile-chunk"]
    assert len(cells) == 8 * 64 and max(int(c.get("data-j").split("-")[1]) for c in cells) == 64 * 8 - 1
    assert "… 64 more 16-byte columns not drawn (first 64)" in [t.text for t in root.iter(f"{NS}text")]
    assert len(_elements(root)) == 8 * 1024  # shared memory: 128 rows of 128 bytes, all drawn


def test_rows_not_read_are_left_out_and_said():
    """No swizzle, K-major: the second K chunk's core matrices are LBO (2048 bytes) away."""
    word = descgen.encode_smem(start_address=0x400, lbo=2048, sbo=128, swizzle="none")
    lay = descgen.smem_layout(word, dtype="f16", major="k", mn=16, k=16)
    root = _parse(smem_layout_svg(lay))
    assert sorted(_rows(root)) == [0x400, 0x480, 0xc00, 0xc80]
    gaps = [t.text for t in root.iter(f"{NS}text") if t.get("class") == "gap"]
    assert gaps == ["… 0x700 bytes not read"]


def test_svg_writer_escapes():
    svg = Svg()
    svg.label(1, 2, 'a < b & "c"', title="x > y", data_q='say "hi" & <go>', class_="t")
    root = ET.fromstring(svg.text(10, 10, title="t & t"))
    text = next(root.iter(f"{NS}text"))
    assert text.get("data-q") == 'say "hi" & <go>' and text.get("class") == "t"
    assert "".join(text.itertext()) == 'x > ya < b & "c"' and text.find(f"{NS}title").text == "x > y"
    assert root.find(f"{NS}title").text == "t & t"


# --------------------------------------------------------------------------------------------
# The instruction descriptor.


def _operands(root: ET.Element) -> dict[str, dict[str, str]]:
    return {r.get("data-operand"): dict(r.attrib) for r in root.iter(f"{NS}rect") if r.get("class") == "operand"}


@pytest.mark.parametrize("word, kind, m, n, k, types", [
    (0x08400010, "f16", 128, 256, 16, ("f16", "f16", "f32")),
    (0x08400010, "f8f6f4", 128, 256, 32, ("e4m3", "e4m3", "f32")),
])
def test_idesc_picture_of_real_words(word, kind, m, n, k, types):
    d = descgen.decode_idesc(word, kind)
    root = _parse(idesc_shape_svg(d))
    assert (root.get("data-m"), root.get("data-n"), root.get("data-k")) == (str(m), str(n), str(k))
    assert root.get("data-kind") == kind and root.get("data-word") == f"{word:#010x}"
    ops = _operands(root)
    assert {name: (o["data-rows"], o["data-columns"], o["data-type"]) for name, o in ops.items()} == {
        "A": (str(m), str(k), types[0]), "B": (str(k), str(n), types[1]), "D": (str(m), str(n), types[2])}
    assert ops["A"]["data-major"] == ops["B"]["data-major"] == "k" and "data-major" not in ops["D"]
    dims = {t.get("data-dim"): t.text for t in root.iter(f"{NS}text") if t.get("class") == "dim"}
    assert dims == {"M": f"M = {m}", "N": f"N = {n}", "K": f"K = {k}"}
    captions = {t.get("data-operand"): t.text for t in root.iter(f"{NS}text") if t.get("class") == "caption"}
    assert captions["A"].startswith(f"A  M x K = {m} x {k}, {types[0]}, K-major (K contiguous; a_major: Table 42")
    # M and N to scale: D is M x N
    assert float(ops["D"]["width"]) / float(ops["D"]["height"]) == pytest.approx(n / m)


def test_idesc_picture_majors_and_arrows():
    word = descgen.encode_idesc("f16", m=64, n=128, a_major="mn", b_major="k")
    root = _parse(idesc_shape_svg(descgen.decode_idesc(word, "f16")))
    ops = _operands(root)
    assert (ops["A"]["data-major"], ops["B"]["data-major"]) == ("mn", "k")
    arrows = [line for line in root.iter(f"{NS}line") if line.get("class") == "major-arrow"]

    def inside(line: ET.Element, name: str) -> bool:
        o = ops[name]
        x, y, w, h = (float(o[a]) for a in ("x", "y", "width", "height"))
        return x <= float(line.get("x1")) <= x + w and y <= float(line.get("y1")) <= y + h

    # A MN-major: M contiguous, down A's columns; B K-major: K contiguous, down B's rows of K
    for name in ("A", "B"):
        mine = [line for line in arrows if inside(line, name)]
        assert mine and all(line.get("x1") == line.get("x2") and float(line.get("y2")) > float(line.get("y1"))
                            for line in mine)
    captions = {t.get("data-operand"): t.text for t in root.iter(f"{NS}text") if t.get("class") == "caption"}
    assert "MN-major (M contiguous" in captions["A"] and "K-major (K contiguous" in captions["B"]
    with pytest.raises(ValueError):
        idesc_shape_svg(descgen.decode_smem(0x4000404000010040))


def test_idesc_picture_mx_kind_and_findings():
    word = descgen.encode_idesc("mxf4nvf4", m=128, n=64, k=96)
    root = _parse(idesc_shape_svg(descgen.decode_idesc(word, "mxf4nvf4")))
    assert root.get("data-k") == "96" and _operands(root)["A"]["data-type"] == "e2m1"
    bad = descgen.decode_idesc(0x08400010 | 1 << 23, "f16")  # reserved bit 23 set
    assert bad.findings
    root = _parse(idesc_shape_svg(bad))
    assert [g.get("data-code") for g in root.iter(f"{NS}g") if g.get("class") == "finding"] == \
        [f.code for f in bad.findings]


# --------------------------------------------------------------------------------------------
# The command line.

LAYOUT = ["layout", "0x4000404000010040", "--dtype", "bf16", "--major", "k", "--tile", "16x64"]


def test_cli_layout_svg_stdout_is_the_library_document():
    lay = descgen.smem_layout(0x4000404000010040, dtype="bf16", major="k", mn=16, k=64)
    assert run(*LAYOUT, "--svg", "-").stdout == smem_layout_svg(lay)
    bad = run(*LAYOUT, "--buffer-start", "0x400", "--buffer-size", "1024", "--svg", "-", code=1)  # exit 1: an error
    assert bad.stdout == smem_layout_svg(descgen.smem_layout(0x4000404000010040, dtype="bf16", major="k", mn=16, k=64,
                                                             buffer=(0x400, 1024)))
    wgmma = run("layout", "0x4000004000010040", "--arch", "sm_90a", "--dtype", "f16", "--major", "k", "--tile",
                "64x16", "--svg", "-").stdout
    assert wgmma == smem_layout_svg(descgen.smem_layout(0x4000004000010040, dtype="f16", major="k", mn=64, k=16,
                                                        arch="sm_90a"))
    assert _parse(wgmma).get("data-descriptor") == "wgmma_smem"


def test_cli_layout_svg_file_keeps_the_usual_output(tmp_path):
    path = tmp_path / "layout.svg"
    result = run(*LAYOUT, "--svg", str(path))
    assert result.stdout == run(*LAYOUT).stdout and "ok=true" in result.stdout
    lay = descgen.smem_layout(0x4000404000010040, dtype="bf16", major="k", mn=16, k=64)
    assert path.read_text(encoding="utf-8") == smem_layout_svg(lay)
    assert run(*LAYOUT, "--svg", str(tmp_path / "no" / "such" / "dir.svg"), code=1).stderr.startswith("Error: Could")


def test_cli_idesc_svg():
    report = descgen.validate_idesc(0x08400010, "f16", cta_group=1)
    out = run("idesc", "--kind", "f16", "--m", "128", "--n", "256", "--cta-group", "1", "--svg", "-").stdout
    assert out == idesc_shape_svg(report.decoded["idesc"], report.findings)
    assert _parse(out).get("data-n") == "256"


@pytest.mark.parametrize("argv", [
    [*LAYOUT, "--svg", "-", "--json"],
    ["idesc", "--kind", "f16", "--m", "128", "--n", "256", "--svg", "-", "--format", "c"],
])
def test_cli_svg_stdout_takes_no_other_stdout_form(argv):
    assert "--svg - writes the picture to stdout" in run(*argv, code=2).stderr


def test_cli_svg_piped_loads_neither_rich_nor_bitstring():
    """The page runs ``descgen layout ... --svg -`` in the browser: standard library, click and
    descgen only."""
    code = ("import sys, runpy\n"
            f"sys.argv = ['descgen', *{LAYOUT + ['--svg', '-']!r}]\n"
            "try:\n    runpy.run_module('descgen.cli', run_name='__main__')\n"
            "except SystemExit as e:\n    assert e.code in (0, None), e.code\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('rich', 'bitstring', 'urllib', 'ssl')))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith("</svg>\n[]\n")


#: docs/pictures/: each SVG and the command line that draws it (the PNGs are these, rendered).
DOC_PICTURES = {
    "bf16-kmajor-128B.svg": LAYOUT,
    "bf16-mnmajor-64B.svg": ["layout", "0x8000404000200040", "--dtype", "bf16", "--major", "mn", "--tile", "64x16"],
    "tf32-kmajor-32B-overlap.svg": ["layout", "0xc000401000010000", "--dtype", "tf32", "--major", "k", "--tile",
                                    "16x16", "--buffer-start", "0", "--buffer-size", "256"],
    "idesc-f16-128x256.svg": ["idesc", "--kind", "f16", "--m", "128", "--n", "256", "--b-major", "mn"],
}


@pytest.mark.parametrize("name", sorted(DOC_PICTURES))
def test_the_pictures_in_docs_are_current(name):
    path = Path(__file__).parent.parent / "docs" / "pictures" / name
    assert path.read_text(encoding="utf-8") == run(*DOC_PICTURES[name], "--svg", "-", code=None).stdout, \
        f"redraw {path}: descgen {' '.join(DOC_PICTURES[name])} --svg {path} (and its PNG)"
    assert path.with_suffix(".png").is_file()
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    assert "(docs/pictures/bf16-kmajor-128B.png)" in readme
