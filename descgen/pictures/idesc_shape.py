"""An instruction descriptor's MMA as a picture: :func:`idesc_shape_svg` draws D (M x N) = A (M x K)
· B (K x N) from a decoded tcgen05 instruction descriptor (Tables 42-44), each operand with its
type and major-ness."""

from __future__ import annotations

import textwrap
from typing import Any, Iterable

from ..core.errors import Finding
from ..model.decoded import Decoded
from ..model.loader import layout
from ..model.word import show_value
from .svg import Svg, draw_findings, text_width

__all__ = ["idesc_shape_svg"]

#: The fields the picture draws; the others are listed under it.
_DRAWN = ("m", "n", "atype", "btype", "dtype", "a_major", "b_major")
#: (fill, stroke) of each operand.
_COLOURS = {"A": ("#dce8f5", "#3a6ea5"), "B": ("#ddf0d8", "#3f8f3a"), "D": ("#fde6cc", "#c26a12")}
_MARGIN = 16
_GAP = 18  # px between the operands
_MIN_K = 56  # px: K is drawn at least this wide


def idesc_shape_svg(decoded: Decoded, findings: Iterable[Finding] | None = None) -> str:
    """The MMA an instruction descriptor describes, as an SVG document (text): A, M x K, left; B,
    K x N, above; D, M x N, between them (D = A · B + D, §9.7.16.10.1), each labelled with its
    extent (elements), its element type, and for A and B the major-ness the word sets (``a_major``,
    ``b_major``: Table 42 bits 15-16, Tables 43-44 likewise; §9.7.16.10.6), as CuTe names it:
    K-major (K contiguous) or MN-major (M or N contiguous); arrows inside each operand run along
    its contiguous dimension. M and N are to scale; K is drawn at least 56 units wide (the note
    under the picture says when). The word's other fields and the findings are listed.

    The root ``<svg>`` carries ``data-word``, ``data-kind``, ``data-m``, ``data-n``, ``data-k``,
    ``data-a-major``, ``data-b-major``; each operand is a ``<rect class="operand">`` with
    ``data-operand`` (``A``, ``B``, ``D``), ``data-rows``, ``data-columns`` (elements),
    ``data-type`` and, for A and B, ``data-major``.

    Args:
        decoded: an instruction descriptor decoded under its kind (:func:`descgen.decode_idesc`,
            or a :func:`descgen.validate_idesc` report's ``decoded["idesc"]``).
        findings: the findings to list; None: ``decoded.findings`` (a report's findings add the
            instruction context's rules).

    Returns:
        The SVG document, ending in a newline.

    Raises:
        ValueError: ``decoded`` is not an instruction descriptor.
    """
    if decoded.descriptor != "idesc":
        raise ValueError(f"an instruction descriptor's decode is needed, not a {decoded.descriptor}'s")
    return _draw(decoded, tuple(decoded.findings if findings is None else findings))


def _value(decoded: Decoded, name: str) -> Any:
    """A field's or derived value; None where the kind's layout has no such field (or it is unknown)."""
    try:
        return decoded.value(name)
    except KeyError:
        return None


def _major(operand: str, major: Any) -> tuple[str, str]:
    """(CuTe's name, what is contiguous) of an operand's major-ness."""
    if major == "k":
        return "K-major", "K contiguous"
    if major == "mn":
        side = "M" if operand == "A" else "N"
        return "MN-major", f"{side} contiguous"
    return "major-ness unknown", "?"


def _draw(d: Decoded, findings: tuple[Finding, ...]) -> str:
    m, n, k = (_value(d, name) for name in ("m", "n", "k"))
    types = {"A": _value(d, "atype"), "B": _value(d, "btype"), "D": _value(d, "dtype")}
    majors = {"A": _value(d, "a_major"), "B": _value(d, "b_major")}
    known = [x for x in (m, n) if isinstance(x, int) and x > 0]
    scale = min(1.5, 360 / max(known)) if known else 1.0
    m_px, n_px = ((x if isinstance(x, int) and x > 0 else 64) * scale for x in (m, n))
    k_px = max(_MIN_K, (k if isinstance(k, int) and k > 0 else 16) * scale)
    show = {name: "?" if value is None else str(value) for name, value in (("M", m), ("N", n), ("K", k))}
    header = [(f"{d.hex}  tcgen05 instruction descriptor, .kind::{d.kind} ({layout(d.layout).source})", 14.0),
              (f"D (M x N) = A (M x K) · B (K x N) + D:  M = {show['M']}, N = {show['N']}, K = {show['K']}", 12.0)]
    captions = []
    for name, rows, columns in (("A", "M", "K"), ("B", "K", "N"), ("D", "M", "N")):
        line = f"{name}  {rows} x {columns} = {show[rows]} x {show[columns]}, {types[name] or '?'}"
        if name in majors:
            field = f"{name.lower()}_major"
            cute, contiguous = _major(name, majors[name])
            line += f", {cute} ({contiguous}; {field}: {d[field].source.split(';')[0]})"
        else:
            line += " (the accumulator, in tensor memory)"
        captions.append((name, line))
    width = max(720.0, _MARGIN * 2 + 90 + k_px + _GAP + n_px + 30,
                *(_MARGIN * 2 + text_width(text, size) for text, size in header),
                *(_MARGIN * 2 + text_width(text, 11) for _, text in captions))

    svg = Svg()
    svg.define("marker", '<path d="M0,0 L10,5 L0,10 z" fill="#333333"/>', id="arrow", viewBox="0 0 10 10", refX=9,
               refY=5, markerWidth=7, markerHeight=7, orient="auto")
    y = float(_MARGIN)
    for n_line, (text, size) in enumerate(header):
        y += size + 4
        svg.label(_MARGIN, y, text, font_size=size, font_weight="bold" if n_line == 0 else None)
    y = draw_findings(svg, findings, _MARGIN, y + 4, width)

    ox, oy = _MARGIN + 90.0, y + 44
    inner_x, inner_y = ox + k_px + _GAP, oy + k_px + _GAP
    boxes = {"B": (inner_x, oy, n_px, k_px, "K", "N"), "A": (ox, inner_y, k_px, m_px, "M", "K"),
             "D": (inner_x, inner_y, n_px, m_px, "M", "N")}
    for name, (x, top, w, h, rows, columns) in boxes.items():
        fill, stroke = _COLOURS[name]
        extent = f"{show[rows]} x {show[columns]}"
        type_ = types[name] or "?"
        cute, _ = _major(name, majors.get(name))
        svg.rect(x, top, w, h, fill=fill, stroke=stroke, stroke_width=2, class_="operand", data_operand=name,
                 data_rows=_value(d, rows.lower()), data_columns=_value(d, columns.lower()), data_type=type_,
                 data_major=majors.get(name),
                 title=f"{name}: {rows} x {columns} = {extent} elements, {type_}"
                       + (f", {cute}" if name in majors else ""))
        if name in majors:
            _arrows(svg, x, top, w, h, along_rows=(majors[name] == "k") == (name == "A"))
        label_w = max(24.0, text_width(extent, 11) + 8) if w >= text_width(extent, 11) + 12 else 24.0
        svg.rect(x + w / 2 - label_w / 2, top + h / 2 - 21, label_w, 42 if label_w > 24 else 26, rx=4,
                 fill="#ffffff", fill_opacity=0.85)
        svg.label(x + w / 2, top + h / 2 - 2, name, font_size=18, font_weight="bold", text_anchor="middle",
                  fill=stroke)
        if label_w > 24:
            svg.label(x + w / 2, top + h / 2 + 14, extent, font_size=11, text_anchor="middle", fill=stroke)
    # the extents along the edges: K above A and left of B, M left of A, N above B
    svg.label(ox + k_px / 2, inner_y - 5, f"K = {show['K']}", font_size=11, text_anchor="middle", class_="dim",
              data_dim="K")
    svg.label(inner_x + n_px / 2, oy - 6, f"N = {show['N']}", font_size=11, text_anchor="middle", class_="dim",
              data_dim="N")
    svg.label(ox - 8, inner_y + m_px / 2, f"M = {show['M']}", font_size=11, text_anchor="end", class_="dim",
              data_dim="M")
    svg.label(inner_x - 6, oy + k_px / 2 + 4, f"K = {show['K']}", font_size=11, text_anchor="end")

    y = inner_y + m_px + 28
    for name, line in captions:
        svg.label(_MARGIN, y, line, font_size=11, class_="caption", data_operand=name)
        y += 16
    notes = ["Arrows run along each operand's contiguous dimension in shared memory."]
    if isinstance(k, int) and k * scale < _MIN_K:
        notes.append(f"K is drawn wider than to scale (M and N: {scale:.3g} units per element).")
    others = [f"{name} = {show_value(value)}" for name, value in d.values().items() if name not in _DRAWN]
    others += [f"{name} = {show_value(value)}" for name, value, _ in d.derived if name not in ("k", "dtype")]
    if others:
        notes.append("Other fields: " + ", ".join(others) + ".")
    for line in textwrap.wrap(" ".join(notes), int((width - 2 * _MARGIN) / text_width("x", 10))):
        svg.label(_MARGIN, y, line, font_size=10, fill="#555555")
        y += 14
    return svg.text(width, y + _MARGIN, title=f"instruction descriptor {d.hex}: .kind::{d.kind}, M {show['M']}, "
                    f"N {show['N']}, K {show['K']}", data_word=d.hex, data_kind=d.kind, data_m=m, data_n=n, data_k=k,
                    data_a_major=majors["A"], data_b_major=majors["B"])


def _arrows(svg: Svg, x: float, y: float, w: float, h: float, *, along_rows: bool) -> None:
    """Arrows across the box along its rows (left to right) or down its columns: the contiguous
    dimension."""
    across, span = (h, w) if along_rows else (w, h)
    count = max(2, min(8, int(across // 28)))
    pad = min(10.0, span / 6)
    for c in range(count):
        t = (c + 0.5) / count * across
        x1, y1, x2, y2 = ((x + pad, y + t, x + w - pad, y + t) if along_rows else (x + t, y + pad, x + t, y + h - pad))
        svg.line(x1, y1, x2, y2, stroke="#333333", stroke_width=1, stroke_opacity=0.45, marker_end="url(#arrow)",
                 class_="major-arrow")
