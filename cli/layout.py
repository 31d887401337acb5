"""``descgen layout``: what a shared memory descriptor makes the tensor core read, as an address map
or a picture (``--svg``); and the reasoning view of ``descgen smem --tile``.

Only click and descgen are imported here; rich is imported inside the functions that draw.
"""

from __future__ import annotations


import click

import descgen
from descgen.pictures.smem_layout import chunk_label, row_bytes, smem_layout_svg, summary

from .options import DTYPE, MAJOR, output_options
from .output import EXIT_RULE, Output, hex_word, usage_error
from .params import TILE, UINT, WORD, ArchType, KindType

__all__ = ["layout", "chunk_label", "plain_layout", "show_tile", "show_layout", "write_svg", "check_svg"]


def check_svg(out: Output, svg: str | None) -> None:
    """``--svg -`` puts the picture alone on stdout: refuse another stdout form given with it."""
    if svg == "-" and (out.json or out.code):
        raise usage_error("--svg - writes the picture to stdout: drop --json and --format (or give --svg FILE)")


def write_svg(target: str, picture: str) -> None:
    """Write an SVG document: to stdout for ``-`` (the document exactly, nothing else), else to
    the file ``target`` (replaced)."""
    if target == "-":
        click.echo(picture, nl=False)
        return
    try:
        with open(target, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(picture)
    except OSError as e:
        raise click.FileError(target, e.strerror) from None


@click.command(short_help="Map what a shared memory descriptor makes the tensor core read.")
@click.argument("word", type=WORD)
@click.option("--dtype", required=True, type=DTYPE, help="A/B element type.")
@click.option("--major", required=True, type=MAJOR, help="k (K-major) or mn (MN-major).")
@click.option("--tile", required=True, type=TILE, help="Elements read: MN x K (e.g. 128x16 for one bf16 MMA of A).")
@click.option("--kind", type=KindType(), help="MMA kind; needed for e2m1 (f8f6f4/mxf8f6f4 pad, mxf4/mxf4nvf4 pack).")
@click.option("--buffer-start", type=UINT, metavar="BYTES",
              help="With --buffer-size: the operand's buffer; reads outside it are errors.")
@click.option("--buffer-size", type=UINT, metavar="BYTES", help="With --buffer-start: the buffer's size in bytes.")
@click.option("--arch", type=ArchType(wgmma=True), help="sm_90a: WORD is a Hopper wgmma descriptor (§9.7.15.5.1.2.2); "
                                              "a tcgen05 target, or none: a tcgen05 one (Table 40).")
@click.option("--svg", type=click.Path(dir_okay=False, allow_dash=True), metavar="FILE",
              help="Also draw the layout as SVG into FILE: the tile, shared memory with each element at its address, "
                   "swizzle phases, core matrices, findings marked. - : the SVG alone on stdout.")
@output_options
def layout(out: Output, word: int, dtype: descgen.ElementType, major: descgen.Major, tile: tuple[int, int],
           kind: descgen.Kind | None, buffer_start: int | None, buffer_size: int | None,
           arch: descgen.SmemArch | None, svg: str | None) -> None:
    """Draw the shared-memory address of every element WORD makes the tensor core read.

    Element (i, j) is i along MN (rows of A, columns of B) and j along K. Each 16-byte chunk
    read shows the elements it holds ("3,8-15": i = 3, j = 8..15); colours mark the swizzle
    atoms; a row is one swizzle atom row (32, 64 or 128 bytes; 128 without swizzle). Findings:
    two elements at one address, reads outside the buffer, reads past an atom row (errors);
    atoms off the swizzle pattern (warnings). How it is computed: docs/layouts.md.

    \b
    Piped output (or --plain): key=value lines (word=, dtype=, ..., finding=, ok=), then the
    grid as text. --json: every element's address ("addresses", mn x k; "bits" for 4- and
    6-bit types) and the chunk map.

    --svg FILE: the same map as a picture (descgen.pictures.smem_layout_svg), coloured by each
    element's 16-byte chunk along the contiguous dimension, so that the swizzle's XOR shows as
    each row's colours permuted; --svg - prints the SVG alone.

    Exits 1 (after printing) when a finding is an error.

    \b
      descgen layout 0x4000404000010040 --dtype bf16 --major k --tile 128x64
      descgen layout 0x4000004000010040 --arch sm_90a --dtype f16 --major k --tile 64x16
      descgen layout 0x4000404000010040 --dtype bf16 --major k --tile 16x64 --svg layout.svg
    """
    if (buffer_start is None) != (buffer_size is None):
        raise click.UsageError("--buffer-start and --buffer-size go together")
    check_svg(out, svg)
    buffer = (buffer_start, buffer_size) if buffer_start is not None and buffer_size is not None else None
    out.input = {"word": hex_word(word, 64), "dtype": dtype, "major": major, "tile": list(tile), "kind": kind,
                 "buffer": list(buffer) if buffer else None, **({"arch": arch} if arch else {})}
    lay = descgen.smem_layout(word, dtype=dtype, major=major, mn=tile[0], k=tile[1], kind=kind, buffer=buffer,
                              arch=arch)
    if svg is not None:
        write_svg(svg, smem_layout_svg(lay))
    if svg == "-":
        pass  # the picture alone is stdout
    elif out.json:
        out.emit_json(result=lay.as_dict())
    elif out.table:
        show_layout(lay)
    else:
        out.lines(plain_layout(lay))
    if not lay.ok:
        click.get_current_context().exit(EXIT_RULE)


# --------------------------------------------------------------------------------------------
# Text forms.


def _factor(chunks: dict[int, list[tuple[int, int]]]) -> tuple[str, dict[int, str]]:
    """A row's labels with the part every cell shares taken out: ``("i=3", {0: "8-15", ...})``
    (K-major swizzled), ``("j=0-7", {0: "0", ...})`` (K-major core matrices); ``("", full
    labels)`` when no part is shared."""
    labels = {c: chunk_label(els) for c, els in chunks.items()}
    if len(labels) > 1 and not any(" " in text for text in labels.values()):
        parts = {c: text.split(",") for c, text in labels.items()}
        for axis, name in ((0, "i"), (1, "j")):
            if len({p[axis] for p in parts.values()}) == 1:
                shared = next(iter(parts.values()))[axis]
                return f"{name}={shared}", {c: p[1 - axis] for c, p in parts.items()}
    return "", labels


def _rows(lay: descgen.SmemLayout) -> list[tuple[int, dict[int, list[tuple[int, int]]]]]:
    """Drawn rows that hold a chunk read: (row address, {chunk offset in row: elements})."""
    width = row_bytes(lay)
    rows: dict[int, dict[int, list[tuple[int, int]]]] = {}
    for address, elements in lay.chunks().items():
        rows.setdefault(address - address % width, {})[address % width] = elements
    return sorted(rows.items())


def plain_layout(lay: descgen.SmemLayout) -> list[str]:
    """The piped form: ``key=value`` lines, then the grid as text (a line per swizzle atom row, or
    per 128 bytes without swizzle; a cell per 16-byte chunk; ``.`` for a chunk not read)."""
    lines = [f"word={lay.hex}", f"dtype={lay.dtype}", f"kind={lay.kind or ''}", f"major={lay.major}",
             f"tile={lay.mn}x{lay.k}", f"swizzle={lay.swizzle}", f"start_address={lay.start_address:#x}",
             f"lbo={lay.lbo}", f"sbo={lay.sbo}", f"base_offset={lay.base_offset}",
             f"ok={'true' if lay.ok else 'false'}"]
    if lay.descriptor != "smem":
        lines.insert(1, f"descriptor={lay.descriptor}")
    lines += [f"finding={f}" for f in lay.findings]
    width = row_bytes(lay)
    cells = [[f"{row:#07x}"] + [chunk_label(chunks[c]) if c in chunks else "." for c in range(0, width, 16)]
             for row, chunks in _rows(lay)]
    head = ["row"] + [f"+{c:#04x}" for c in range(0, width, 16)]
    widths = [max(len(r[n]) for r in [head, *cells]) for n in range(len(head))]
    for r in [head, *cells]:
        lines.append("  ".join(text.ljust(width) for text, width in zip(r, widths)).rstrip())
    return lines


# --------------------------------------------------------------------------------------------
# Rich forms.


def show_layout(lay: descgen.SmemLayout) -> None:
    """Header, findings, then the grid: one row per 128 bytes, a cell per 16-byte chunk,
    coloured by the swizzle atom its elements belong to."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from .render import PALETTE, findings_text, glyphs, new_console

    console = new_console()
    head = Text()
    head.append(f"layout  {lay.hex}  ", style="bold")
    head.append(summary(lay), style="dim")
    console.print(head)
    console.print(findings_text(lay.findings, glyphs(console)))
    clash = {f.code for f in lay.findings} & {"LAYOUT-OVERLAP"}
    atoms_mn = -(-lay.mn // lay.atom.mn)
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
              caption=f"row = {row_bytes(lay)} bytes; cell = a 16-byte chunk and its elements (i along MN, j along "
                      f"K); whole row = the i or j every element of the row has; colour = {lay.atom.mn}x{lay.atom.k} "
                      "atom", caption_justify="left")
    t.add_column("address", justify="right", no_wrap=True, style="dim", min_width=7)
    t.add_column("whole row", no_wrap=True, style="bold")
    width = row_bytes(lay)
    for c in range(0, width, 16):
        t.add_column(f"+{c:#04x}", overflow="fold")
    previous = None
    for row, chunks in _rows(lay):
        if previous is not None and row != previous + width:
            t.add_row("…", "", *[""] * (width // 16))
        previous = row
        shared, labels = _factor(chunks)
        cells = []
        for c in range(0, width, 16):
            elements = chunks.get(c)
            if elements is None:
                cells.append(Text(".", style="dim"))
                continue
            a_mn, a_k = lay.atom_index(*elements[0])
            bad = clash and " " in chunk_label(elements)
            cells.append(Text(labels[c], style="bold red" if bad else PALETTE[(a_mn + a_k * atoms_mn) % len(PALETTE)]))
        t.add_row(f"{row:#07x}", shared, *cells)
    console.print(t)


def show_tile(td: descgen.TileDescriptor, decoded: descgen.Decoded) -> None:
    """``descgen smem --tile``: the reasoning, numbered, then the word as ``smem`` shows it."""
    from rich.table import Table
    from rich.text import Text

    from .render import encoded, new_console

    console = new_console()
    head = Text()
    head.append(f"{td.descriptor} for a {td.mn}x{td.k} {td.dtype} tile", style="bold")
    head.append(f"  {td.major.upper()}-major, {td.swizzle}, at {td.start_address:#x}, {td.atom_order}", style="dim")
    console.print(head)
    steps = Table.grid(padding=(0, 1))
    steps.add_column(justify="right", style="dim")
    steps.add_column()
    for n, sentence in enumerate(td.reasoning, 1):
        steps.add_row(f"{n}.", sentence)
    console.print(steps)
    for f in td.findings:
        console.print(Text(f"{f.severity} {f.code}: {f.rule}", style="bold yellow"))
    console.print()
    encoded(decoded)
