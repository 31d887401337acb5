"""A shared memory descriptor's layout as a picture: :func:`smem_layout_svg` draws what
:func:`descgen.smem_layout` computed (the operand tile, and shared memory as the tensor core reads
it, swizzle applied); and the text the picture and the command line's grid both label it with
(:func:`row_bytes`, :func:`chunk_label`, :func:`summary`).

Nothing here computes an address: every element is drawn where :class:`~descgen.SmemLayout` puts
it (:meth:`~descgen.SmemLayout.bit_address`); the swizzle phase of a drawn row is the address
model's own XOR (:func:`descgen.tiles.canonical.read_address`, errata E9), read at that row.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..tiles.addresses import SmemLayout
from ..tiles.atoms import CHUNK
from ..tiles.canonical import read_address
from .svg import Attr, Svg, draw_findings, hsl, text_width

__all__ = ["smem_layout_svg", "row_bytes", "chunk_label", "summary", "ROW", "MAX_ROWS", "MAX_COLUMNS"]

#: Bytes per drawn row without swizzle (eight 16-byte chunks); swizzled layouts draw one atom row.
ROW = 128
#: Rows drawn at most, per panel, by default: a 256-row operand is drawn whole.
MAX_ROWS = 256
#: 16-byte chunk columns of the tile drawn at most (a K-major tile without swizzle may be wide).
MAX_COLUMNS = 64

_HUES = (210, 28, 130, 280, 48, 185, 330, 95)  # one per 16-byte chunk column (mod 8): neighbours contrast
_ROW_H = 14  # px per drawn row
_GAP_H = 14  # px for rows of memory not read
_CHUNK_W = 64  # px per 16-byte chunk in the shared memory panel
_TILE_W = 384  # px the tile panel's columns share at most
_MARGIN = 16
_LABEL_W = 44  # px left of the tile for its row labels
_ADDRESS_W = 64  # px left of shared memory for its addresses
_PHASE_W = 44  # px right of shared memory for its phases
_PANEL_GAP = 28
_OVERLAP = "#d40000"
_OVERLAP_CODE, _OUTSIDE_CODE = "LAYOUT-OVERLAP", "LAYOUT-OUTSIDE-BUFFER"
#: A legend entry: its swatch's attributes (None: text alone; a digit's: a hue), its text and colour.
_Entry = tuple[dict[str, Attr] | None, str, str | None]


def row_bytes(lay: SmemLayout) -> int:
    """Bytes per drawn row: one swizzle atom row (32, 64, 128), or :data:`ROW` (128) without
    swizzle."""
    return lay.atom.row_bytes if lay.atom.swizzled else ROW


def chunk_label(elements: list[tuple[int, int]]) -> str:
    """The elements of one chunk, in bit order, as runs: ``3,8-15`` (i = 3, j = 8..15), ``0-7,2``
    (i = 0..7, j = 2), ``5,1``. Several runs, separated by spaces, only when elements collide
    (``0,8-11 1,0-3``: two elements at each address) or a chunk mixes rows."""
    runs: list[list[tuple[int, int]]] = []
    for e in elements:
        for run in runs:
            (i0, j0), (i1, j1) = run[0], run[-1]
            along_k = i0 == i1 == e[0] and e[1] == j1 + 1
            along_mn = j0 == j1 == e[1] and e[0] == i1 + 1
            if along_k and (len(run) == 1 or j0 != j1) or along_mn and (len(run) == 1 or i0 != i1):
                run.append(e)
                break
        else:
            runs.append([e])
    return " ".join(_run_text(run) for run in runs)


def _run_text(run: list[tuple[int, int]]) -> str:
    (i0, j0), (i1, j1) = run[0], run[-1]
    if len(run) == 1:
        return f"{i0},{j0}"
    return f"{i0},{j0}-{j1}" if i0 == i1 else f"{i0}-{i1},{j0}"


def summary(lay: SmemLayout) -> str:
    """One line: type, major-ness, extent (MN x K elements), swizzle, start address, LBO and SBO
    (bytes) and base offset."""
    kind = f" (.kind::{lay.kind})" if lay.kind else ""
    return (f"{lay.dtype}{kind} {lay.major.upper()}-major {lay.mn}x{lay.k}, swizzle {lay.swizzle}, start "
            f"{lay.start_address:#x}, LBO {lay.lbo}, SBO {lay.sbo}, base offset {lay.base_offset}")


# --------------------------------------------------------------------------------------------
# The picture.


def smem_layout_svg(lay: SmemLayout, *, max_rows: int = MAX_ROWS) -> str:
    """The layout as an SVG document (text): what a shared memory descriptor makes the tensor core
    read (§9.7.16.3; wgmma's §9.7.15.5.1.2.1 for a layout read with ``arch="sm_90a"``).

    Two panels. Left, the operand tile: element ``(i, j)``, i along MN and j along K, drawn with
    its contiguous dimension across (K-major: a row per i; MN-major: a row per j), in 16-byte
    chunks (T = :attr:`SwizzleAtom.per_chunk` elements), the core matrices (8 rows x 16 bytes,
    §9.7.16.3.3) outlined. Right, shared memory: a row per :func:`row_bytes` bytes that holds an
    element read (one swizzle atom row, or 128 bytes without swizzle; rows not read are left out
    and the gap said), each element a rectangle at its bit address, each row's swizzle phase
    ``⊕p`` (chunk c of the row, counted before swizzling, is stored at chunk c XOR p; 16-byte
    units), and a line where the swizzle pattern starts over. An element's colour says where it
    sits in the tile: the hue its 16-byte chunk column along the contiguous dimension (mod 8),
    the shade its place in that chunk; the same colours in both panels, so the swizzle's XOR shows
    as each memory row's hues permuted. The layout's findings are listed at the top; elements at
    an address another element also uses (``LAYOUT-OVERLAP``) share their row's height, one
    above the other, in a chunk outlined in red; elements outside the declared buffer
    (``LAYOUT-OUTSIDE-BUFFER``) are hatched, in both panels.

    For a test or a page to read it back: every element drawn is a ``<rect class="element">``
    with ``data-row`` (i), ``data-k`` (j), ``data-addr`` (its byte address, hex), ``data-bit``
    (4- and 6-bit types: its first bit in that byte, 0-7) and, when marked, ``data-finding``
    (codes, space-separated), inside its 16-byte chunk's ``<g class="chunk">`` with
    ``data-chunk`` (the chunk's address, hex), ``data-phase`` (its row's phase p) and a
    ``<title>`` (hover text). The tile's cells are ``<rect class="tile-chunk">`` (``data-i``,
    ``data-j``: ranges), the core matrices ``<rect class="core-matrix">`` (``data-core``: along
    MN, along K). The root ``<svg>`` carries ``data-word``, ``data-elements`` (mn x k),
    ``data-drawn`` (elements drawn), ``data-rows`` and ``data-rows-drawn`` (shared memory rows
    read, drawn).

    Args:
        lay: :func:`descgen.smem_layout`'s result.
        max_rows: draw at most this many rows of each panel (a note says what is left out; the
            tile also draws at most :data:`MAX_COLUMNS` 16-byte columns).

    Returns:
        The SVG document, ending in a newline.

    Raises:
        ValueError: ``max_rows`` is not a positive integer.
    """
    if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1:
        raise ValueError(f"max_rows must be a positive integer, not {max_rows!r}")
    return _Picture(lay, max_rows).draw()


@dataclass(frozen=True, slots=True)
class _Marks:
    """Which elements the layout's findings are about: bit address -> elements there (overlaps),
    and the bit range of the buffer (outside-buffer reads); each only when the layout reports it."""

    occupants: Counter[int]
    overlap: bool
    buffer: tuple[int, int] | None

    def codes(self, bit_address: int, bits: int) -> list[str]:
        codes = []
        if self.overlap and self.occupants[bit_address] > 1:
            codes.append(_OVERLAP_CODE)
        if self.buffer is not None and not (self.buffer[0] <= bit_address and bit_address + bits <= self.buffer[1]):
            codes.append(_OUTSIDE_CODE)
        return codes


class _Picture:
    """One drawing of a layout: the geometry, then the parts in order (header, findings, legend,
    the tile, shared memory)."""

    def __init__(self, lay: SmemLayout, max_rows: int) -> None:
        self.lay, self.max_rows = lay, max_rows
        self.svg = Svg()
        self.t = lay.atom.per_chunk
        self.width = row_bytes(lay)
        codes = {f.code for f in lay.findings}
        self.chunks = lay.chunks()
        bits = {(i, j): lay.bit_address(i, j) for els in self.chunks.values() for i, j in els}
        self.bits = bits
        start, size = lay.buffer or (0, 0)
        self.marks = _Marks(Counter(bits.values()), _OVERLAP_CODE in codes,
                            (start * 8, (start + size) * 8) if lay.buffer and _OUTSIDE_CODE in codes else None)
        self.rows = sorted({address - address % self.width for address in self.chunks})
        self.phases = {row: (read_address(lay.atom, row, lay.base_offset) ^ row) // CHUNK for row in self.rows}

    # -- what an element is ------------------------------------------------------------------

    def along(self, i: int, j: int) -> tuple[int, int]:
        """(index along the contiguous dimension, index along the other): K-major (j, i)."""
        return (j, i) if self.lay.major == "k" else (i, j)

    def colour(self, i: int, j: int) -> str:
        """The hue of the element's 16-byte chunk column, the shade of its place in the chunk."""
        contiguous = self.along(i, j)[0]
        return _shade(contiguous // self.t % len(_HUES), contiguous % self.t, self.t)

    def core(self, i: int, j: int) -> tuple[int, int]:
        """The core matrix (along MN, along K) of element ``(i, j)``: 8 rows x one 16-byte chunk."""
        return (i // 8, j // self.t) if self.lay.major == "k" else (i // self.t, j // 8)

    # -- the drawing -------------------------------------------------------------------------

    def draw(self) -> str:
        lay, svg = self.lay, self.svg
        tile_rows, tile_cols = (lay.mn, lay.k) if lay.major == "k" else (lay.k, lay.mn)
        self.tile_rows, self.tile_cols, self.tile_chunks = tile_rows, tile_cols, -(-tile_cols // self.t)
        self.columns = min(self.tile_chunks, MAX_COLUMNS)
        self.cell_w = max(6, min(48, _TILE_W // self.columns))
        for n in range(len(_HUES)):
            svg.define("linearGradient", "".join(
                f'<stop offset="{o}" stop-color="{_shade(n, e, 2)}"/>' for o, e in (("0", 0), ("1", 1))), id=f"hue{n}")
        svg.define("pattern", '<path d="M0,8 L8,0" stroke="#000000" stroke-opacity="0.55" stroke-width="1.3"/>',
                   id="outside", width=8, height=8, patternUnits="userSpaceOnUse")
        tile_w = _LABEL_W + max(self.columns * self.cell_w, 210)
        memory_w = _ADDRESS_W + self.width // CHUNK * _CHUNK_W + _PHASE_W
        header = self.header()
        self.total = max(_MARGIN * 2 + tile_w + _PANEL_GAP + memory_w, 860,
                         *(_MARGIN * 2 + text_width(text, size) for text, size in header))
        y = _MARGIN + 14.0
        for n, (text, size) in enumerate(header):
            svg.label(_MARGIN, y, text, font_size=size, font_weight="bold" if n == 0 else None,
                      fill="#444444" if n == 2 else None)
            y += 17
        y = draw_findings(svg, lay.findings, _MARGIN, y - 10, self.total)
        y = self.legend(y + 8)
        memory_x = _MARGIN + tile_w + _PANEL_GAP + _ADDRESS_W
        bottom = max(self.tile(_MARGIN + _LABEL_W, y + 14), self.memory(memory_x, y + 14))
        drawn = sum(len(els) for row in self.rows[:self.max_rows]
                    for c in range(row, row + self.width, CHUNK) for els in [self.chunks.get(c, [])])
        return svg.text(self.total, bottom + _MARGIN, title=f"shared memory layout of {lay.hex}: {summary(lay)}",
                        data_word=lay.hex, data_descriptor=lay.descriptor, data_dtype=lay.dtype, data_major=lay.major,
                        data_mn=lay.mn, data_k=lay.k, data_swizzle=lay.swizzle, data_elements=lay.mn * lay.k,
                        data_drawn=drawn, data_rows=len(self.rows), data_rows_drawn=min(len(self.rows), self.max_rows))

    def header(self) -> list[tuple[str, float]]:
        """The header's lines and their font sizes: the word and its descriptor, the summary, the atom."""
        lay, atom = self.lay, self.lay.atom
        family = ("Hopper wgmma shared memory descriptor (sm_90a, §9.7.15.5.1.2.2)" if lay.descriptor != "smem"
                  else "tcgen05 shared memory descriptor (Table 40)")
        return [(f"{lay.hex}  {family}", 14), (summary(lay), 11),
                (f"atom ({atom.source}): {atom.rows} rows x {atom.row_bytes} bytes = {atom.mn}x{atom.k} elements "
                 f"(MN x K), {atom.cute_swizzle}; T = {self.t} elements per 16-byte chunk", 11)]

    def legend(self, y: float) -> float:
        """Swatches: the hues, a core matrix, the phase, and the marks of the findings present."""
        lay, svg = self.lay, self.svg
        along = "K" if lay.major == "k" else "MN"
        hues: list[_Entry] = [(None, f"colour: the element's 16-byte chunk along {along}, before swizzling (mod 8)",
                               None)]
        hues += [({"fill": f"url(#hue{n})"}, str(n), None) for n in range(min(len(_HUES), self.tile_chunks))]
        hues.append((None, "darker: earlier in the chunk", "#444444"))
        shapes: list[_Entry] = [({"fill": "none", "stroke": "#202020", "stroke_width": 1.5},
                                 "core matrix: 8 rows x 16 bytes", None)]
        if lay.atom.swizzled:
            shapes.append((None, "⊕p: the row's swizzle phase: chunk c of the row is stored at chunk c XOR p", None))
        entries = [hues, shapes]
        marks: list[_Entry] = []
        if self.marks.overlap:
            marks.append(({"fill": "#ffffff", "stroke": _OVERLAP, "stroke_width": 2},
                          "at an address another element also uses (LAYOUT-OVERLAP)", _OVERLAP))
        if self.marks.buffer is not None and lay.buffer is not None:
            start, size = lay.buffer
            marks.append(({"fill": "url(#outside)", "stroke": "#000000", "stroke_width": 0.5},
                          f"outside the buffer {start:#x}..{start + size - 1:#x} (LAYOUT-OUTSIDE-BUFFER)", None))
        for line in [*entries, *([marks] if marks else [])]:
            x = float(_MARGIN)
            for swatch, text, colour in line:
                if swatch is not None and text.isdigit():  # a hue: the number inside its swatch
                    svg.rect(x, y, 20, 13, **swatch)
                    svg.label(x + 10, y + 10, text, font_size=9, text_anchor="middle", font_weight="bold")
                    x += 22
                    continue
                if swatch is not None:
                    svg.rect(x, y, 20, 13, **swatch)
                    x += 26
                svg.label(x, y + 10, text, font_size=10, fill=colour)
                x += text_width(text, 10) + 14
            y += 19
        return y

    def tile(self, x0: float, y0: float) -> float:
        """The operand tile: a row per element along the other dimension, a cell per 16-byte chunk."""
        lay, svg, t = self.lay, self.svg, self.t
        across, down = ("j", "i") if lay.major == "k" else ("i", "j")
        svg.label(x0 - _LABEL_W, y0, f"the tile, {lay.mn}x{lay.k} (MN x K)", font_size=12, font_weight="bold")
        svg.label(x0 - _LABEL_W, y0 + 14, f"a row per {down}, {across} across in 16-byte chunks", font_size=10,
                  fill="#444444")
        y0 += 34
        rows = min(self.tile_rows, self.max_rows)
        if self.cell_w >= 36:
            for c in range(self.columns):
                last = min(self.tile_cols, (c + 1) * t) - 1
                svg.label(x0 + (c + 0.5) * self.cell_w, y0 - 3, f"{c * t}-{last}" if last > c * t else str(last),
                          font_size=9, text_anchor="middle", fill="#444444")
        for r in range(rows):
            y = y0 + r * _ROW_H
            if r % 8 == 0 or rows <= 32:
                svg.label(x0 - 4, y + 10, f"{down}={r}", font_size=9, text_anchor="end", fill="#444444")
            for c in range(self.columns):
                first = c * t
                count = min(t, self.tile_cols - first)
                elements = [(r, first + e) if lay.major == "k" else (first + e, r) for e in range(count)]
                codes = sorted({code for i, j in elements
                                for code in self.marks.codes(self.bits[i, j], lay.atom.element_bits)})
                (i0, j0), (i1, j1) = elements[0], elements[-1]
                what = f"i={i0}, j={j0}-{j1}" if i0 == i1 else f"i={i0}-{i1}, j={j0}"
                cx, cw = x0 + c * self.cell_w, self.cell_w * count / t
                svg.rect(cx, y, cw, _ROW_H, fill=f"url(#hue{c % len(_HUES)})", stroke="#ffffff", stroke_width=0.6,
                         class_="tile-chunk", data_i=f"{i0}-{i1}", data_j=f"{j0}-{j1}",
                         data_finding=" ".join(codes) or None, title=what + "".join(f"; {code}" for code in codes))
                if _OUTSIDE_CODE in codes:
                    svg.rect(cx, y, cw, _ROW_H, fill="url(#outside)")
                if _OVERLAP_CODE in codes:
                    svg.rect(cx + 0.75, y + 0.75, cw - 1.5, _ROW_H - 1.5, fill="none", stroke=_OVERLAP,
                             stroke_width=1.5)
        for r in range(0, rows, 8):
            for c in range(self.columns):
                count = min(8, rows - r)
                svg.rect(x0 + c * self.cell_w, y0 + r * _ROW_H, self.cell_w, count * _ROW_H, fill="none",
                         stroke="#202020", stroke_width=1.2, class_="core-matrix",
                         data_core="{},{}".format(*((r // 8, c) if lay.major == "k" else (c, r // 8))))
        y = y0 + rows * _ROW_H
        if rows < self.tile_rows:
            svg.label(x0, y + 14, f"… {self.tile_rows - rows} more rows not drawn (first {rows})", font_size=10,
                      fill="#444444", class_="note")
            y += 20
        if self.columns < self.tile_chunks:
            svg.label(x0, y + 14, f"… {self.tile_chunks - self.columns} more 16-byte columns not drawn (first "
                      f"{self.columns})", font_size=10, fill="#444444", class_="note")
            y += 20
        return y

    def memory(self, x0: float, y0: float) -> float:
        """Shared memory: a row per :func:`row_bytes` bytes read, each element at its address."""
        lay, svg, width = self.lay, self.svg, self.width
        what = f"one {lay.swizzle} atom row" if lay.atom.swizzled else "no swizzle"
        svg.label(x0 - _ADDRESS_W, y0, "shared memory, as the MMA reads it", font_size=12, font_weight="bold")
        svg.label(x0 - _ADDRESS_W, y0 + 14, f"a row per {width} bytes ({what}), by address", font_size=10,
                  fill="#444444")
        y0 += 34
        for c in range(0, width, CHUNK):
            svg.label(x0 + (c // CHUNK + 0.5) * _CHUNK_W, y0 - 3, f"+{c:#04x}", font_size=9, text_anchor="middle",
                      fill="#444444")
        if lay.atom.swizzled:
            svg.label(x0 + width // CHUNK * _CHUNK_W + 6, y0 - 3, "phase", font_size=9, fill="#444444")
        y, previous = y0, None
        slots: Counter[int] = Counter()
        px = _CHUNK_W / (CHUNK * 8)  # per bit
        rows = self.rows[:self.max_rows]
        for row in rows:
            if previous is not None and row != previous + width:
                svg.label(x0 + 4, y + 10, f"… {row - previous - width:#x} bytes not read", font_size=9,
                          fill="#666666", class_="gap")
                y += _GAP_H
            phase = self.phases[row]
            if lay.atom.swizzled and phase == 0 and (previous is None or self.phases[previous] != 0
                                                      or row != previous + width):
                svg.line(x0 - _ADDRESS_W, y, x0 + width // CHUNK * _CHUNK_W + _PHASE_W - 8, y, stroke="#202020",
                         stroke_width=1.5, class_="pattern-start")
            previous = row
            svg.label(x0 - 4, y + 10, f"{row:#07x}", font_size=9, text_anchor="end", fill="#444444")
            svg.rect(x0, y, width // CHUNK * _CHUNK_W, _ROW_H, fill="#eeeeee", class_="row", data_addr=f"{row:#x}",
                     data_phase=phase)
            if lay.atom.swizzled:
                svg.label(x0 + width // CHUNK * _CHUNK_W + 6, y + 10, f"⊕{phase}", font_size=10,
                          font_weight="bold", class_="phase", data_addr=f"{row:#x}", data_phase=phase)
            for chunk in range(row, row + width, CHUNK):
                elements = self.chunks.get(chunk)
                if elements:
                    self.chunk(x0 + (chunk - row) // CHUNK * _CHUNK_W, y, px, chunk, phase, elements, slots)
            y += _ROW_H
        if len(rows) < len(self.rows):
            svg.label(x0 - _ADDRESS_W, y + 14, f"… {len(self.rows) - len(rows)} more rows read, not drawn (first "
                      f"{len(rows)} of {len(self.rows)})", font_size=10, fill="#444444", class_="note")
            y += 20
        return y

    def chunk(self, x: float, y: float, px: float, chunk: int, phase: int, elements: list[tuple[int, int]],
              slots: Counter[int]) -> None:
        """One 16-byte chunk read: its elements (those at one address share the row's height),
        its outline and its label."""
        lay, svg = self.lay, self.svg
        bits = lay.atom.element_bits
        text = chunk_label(elements)
        marked: set[str] = set()
        cores = " ".join(sorted({"({},{})".format(*self.core(i, j)) for i, j in elements}))
        title = f"{chunk:#x}: (i,j) {text}; core matrix {cores}" + (f"; phase ⊕{phase}" if lay.atom.swizzled else "")
        with self.svg.group(class_="chunk", data_chunk=f"{chunk:#x}", data_phase=phase, title=title):
            for i, j in elements:
                b = self.bits[i, j]
                n, slot = self.marks.occupants[b], slots[b]
                slots[b] += 1
                codes = self.marks.codes(b, bits)
                marked.update(codes)
                svg.rect(x + (b - chunk * 8) * px, y + slot * _ROW_H / n, bits * px, _ROW_H / n,
                         fill=self.colour(i, j), class_="element", data_row=i, data_k=j, data_addr=f"{b >> 3:#x}",
                         data_bit=b & 7 if bits < 8 else None, data_finding=" ".join(codes) or None)
            if _OUTSIDE_CODE in marked:
                svg.rect(x, y, _CHUNK_W, _ROW_H, fill="url(#outside)")
            svg.rect(x, y, _CHUNK_W, _ROW_H, fill="none", stroke=_OVERLAP if _OVERLAP_CODE in marked else "#ffffff",
                     stroke_width=2 if _OVERLAP_CODE in marked else 1)
            if text_width(text, 9) > _CHUNK_W - 4:
                text = text.split(" ")[0] + " …" if " " in text else ""
            if text and _OVERLAP_CODE in marked:  # over elements stacked in halves: on a white band
                svg.rect(x + 3, y + 3, _CHUNK_W - 6, 9, fill="#ffffff", fill_opacity=0.65)
            if text:
                svg.label(x + _CHUNK_W / 2, y + 10, text, font_size=9, text_anchor="middle", fill="#111111")


def _shade(hue: int, place: int, per_chunk: int) -> str:
    """Colour ``hue`` (an index into the palette) at ``place`` of ``per_chunk`` places: darker
    first."""
    return hsl(_HUES[hue], 0.62, 0.58 + 0.28 * (place / (per_chunk - 1) if per_chunk > 1 else 0))
