"""An SVG document written element by element, as text (standard library only): the writer the
pictures share (:class:`Svg`), the colours they use (:func:`hsl`) and the findings block both
show (:func:`draw_findings`).

Coordinates are SVG user units (pixels at 100 %). Attribute names are given as Python keywords:
a trailing underscore is dropped and inner underscores become hyphens (``class_`` -> ``class``,
``data_row`` -> ``data-row``, ``font_size`` -> ``font-size``); a None value leaves the attribute out.
"""

from __future__ import annotations

import colorsys
import textwrap
from contextlib import contextmanager
from typing import Iterable, Iterator

from ..core.errors import Finding

__all__ = ["Svg", "Attr", "hsl", "number", "text_width", "draw_findings", "FONT", "CHAR", "SEVERITY_COLOURS"]

#: An attribute value: written with :func:`number` (numbers) or as text.
Attr = str | int | float | None

#: The font of every picture's text (a monospace font: labels line up like the CLI's grid).
FONT = "DejaVu Sans Mono, Menlo, Consolas, monospace"
#: Width of one character of :data:`FONT`, per unit of font size (0.6, and room for renderers that round
#: each advance up to a whole pixel).
CHAR = 0.66
#: A finding's colour, by severity.
SEVERITY_COLOURS = {"error": "#c00000", "warning": "#9a5b00", "note": "#555555"}


def number(value: float) -> str:
    """A coordinate as short text: at most two decimals, no trailing zeros (``12``, ``3.5``)."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


#: XML's escapes, for text and for a double-quoted attribute (xml.sax.saxutils would import urllib).
_TEXT = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
_ATTR = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})


def escape(text: str) -> str:
    """``text`` as XML character data."""
    return text.translate(_TEXT)


def quoteattr(text: str) -> str:
    """``text`` as a double-quoted XML attribute value."""
    return f'"{text.translate(_ATTR)}"'


def text_width(text: str, size: float) -> float:
    """About how wide ``text`` is in :data:`FONT` at ``size`` units."""
    return len(text) * CHAR * size


def hsl(hue: float, saturation: float, lightness: float) -> str:
    """``#rrggbb`` of a hue in degrees and saturation and lightness in 0..1."""
    r, g, b = colorsys.hls_to_rgb(hue % 360 / 360, lightness, saturation)
    return "#{:02x}{:02x}{:02x}".format(*(round(c * 255) for c in (r, g, b)))


def _attrs(attrs: dict[str, Attr]) -> str:
    out = []
    for name, value in attrs.items():
        if value is None:
            continue
        name = name.rstrip("_").replace("_", "-")
        text = number(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)
        out.append(f" {name}={quoteattr(text)}")
    return "".join(out)


def _title(title: Attr) -> str:
    return f"<title>{escape(str(title))}</title>" if title is not None else ""


class Svg:
    """An SVG document under construction: elements are appended in drawing order (later ones on
    top); :meth:`text` returns the document. An element's ``title`` attribute becomes its
    ``<title>`` child (hover text)."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._defs: list[str] = []

    def element(self, tag: str, content: str | None = None, /, **attrs: Attr) -> None:
        """One element: ``<tag attrs>`` with its ``<title>`` and text ``content`` (escaped)."""
        inner = _title(attrs.pop("title", None)) + (escape(content) if content else "")
        self._parts.append(f"<{tag}{_attrs(attrs)}>{inner}</{tag}>" if inner else f"<{tag}{_attrs(attrs)}/>")

    @contextmanager
    def group(self, **attrs: Attr) -> Iterator[None]:
        """``<g attrs>`` around the elements appended inside the ``with`` block."""
        self._parts.append(f"<g{_attrs({**attrs, 'title': None})}>" + _title(attrs.get("title")))
        yield
        self._parts.append("</g>")

    def rect(self, x: float, y: float, width: float, height: float, /, **attrs: Attr) -> None:
        self.element("rect", x=x, y=y, width=width, height=height, **attrs)

    def line(self, x1: float, y1: float, x2: float, y2: float, /, **attrs: Attr) -> None:
        self.element("line", x1=x1, y1=y1, x2=x2, y2=y2, **attrs)

    def label(self, x: float, y: float, content: str, /, **attrs: Attr) -> None:
        """Text whose baseline starts (or, with ``text_anchor``, is centred or ends) at ``(x, y)``."""
        self.element("text", content, x=x, y=y, **attrs)

    def define(self, tag: str, inner: str = "", **attrs: Attr) -> None:
        """An element of ``<defs>`` (a gradient, a pattern, a marker): ``inner`` is SVG text."""
        self._defs.append(f"<{tag}{_attrs(attrs)}>{inner}</{tag}>")

    def text(self, width: float, height: float, *, title: str, **attrs: Attr) -> str:
        """The document, ``width`` x ``height`` units, on a white background; ``title`` is its
        accessible name; ``attrs`` go on the root element (``data-*`` facts about the picture).
        ASCII throughout (other characters as XML character references: ``&#8853;`` for ⊕), so
        that any stream can carry it."""
        head = (f'<svg xmlns="http://www.w3.org/2000/svg"{_attrs(dict(width=width, height=height))} '
                f'viewBox="0 0 {number(width)} {number(height)}"{_attrs(attrs)} font-family={quoteattr(FONT)}>')
        defs = f"<defs>{''.join(self._defs)}</defs>" if self._defs else ""
        background = '<rect width="100%" height="100%" fill="#ffffff"/>'
        document = "\n".join([head, f"<title>{escape(title)}</title>", defs, background, *self._parts, "</svg>"])
        return document.encode("ascii", "xmlcharrefreplace").decode("ascii") + "\n"


def draw_findings(svg: Svg, findings: Iterable[Finding], x: float, y: float, width: float) -> float:
    """The findings as paragraphs (``error LAYOUT-OVERLAP: ...``, as ``str(finding)`` writes them)
    wrapped to ``width`` units from ``x``, coloured by severity; ``no findings`` when there are none.
    ``y`` is the first baseline; returns the next free ``y``."""
    size = 10.5
    chars = max(40, int((width - 2 * x) / (CHAR * size)) - 2)
    found = list(findings)
    if not found:
        svg.label(x, y + size, "✓ no findings", font_size=size, fill="#1a7f37", class_="finding")
        return y + size + 6
    for f in found:
        with svg.group(class_="finding", data_code=f.code, data_severity=f.severity):
            for n, line in enumerate(textwrap.wrap(str(f), chars, subsequent_indent="    ")):
                y += size + 3
                svg.label(x, y, line, font_size=size, fill=SEVERITY_COLOURS.get(f.severity, "#000000"),
                          font_weight="bold" if n == 0 else None)
        y += 3
    return y + 3
