"""Rich rendering of decoded words: field table, derived values, findings, bit diagram, zcm mask.

Imported only when a table is drawn (the commands import it inside their bodies), so ``rich``
never loads for piped or ``--json`` output.

The bit diagram writes each field's bits MSB first (PTX numbers bits from the LSB, 0), sliced
from the word's ``bitstring.Bits`` (:attr:`descgen.Decoded.bits`): bitstring loads when a
diagram is drawn, never for piped or ``--json`` output.
"""

from __future__ import annotations

import re
import sys
import textwrap
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group
from rich.text import Text

if TYPE_CHECKING:
    from rich.table import Table

import descgen
from descgen.model.loader import layout as _layout

from descgen.model.engine import hex_bits, hex_word, show_value as plain_value, unit_word

__all__ = ["new_console", "glyphs", "encoded", "decoded", "decoded_many", "validated", "checked", "explained",
           "rules_table", "bit_diagram", "field_styles", "findings_text", "not_checked_view", "error_block"]

#: Colours cycled over the value fields (red and yellow are kept for findings).
PALETTE = ("cyan", "magenta", "green", "blue", "bright_cyan", "bright_magenta", "bright_green", "bright_blue")
SEVERITY_STYLE = {"error": "bold red", "warning": "bold yellow", "info": "bold blue"}
_UNICODE = {"error": "✗", "warning": "!", "info": "i", "ok": "✓", "pipe": "│", "corner": "└", "dash": "─"}
_ASCII = {"error": "x", "warning": "!", "info": "i", "ok": "ok", "pipe": "|", "corner": "`", "dash": "-"}


def new_console() -> Console:
    return Console(highlight=False, file=_STDOUT)  # type: ignore[arg-type]  # (a text stream in all rich uses)


class _Stdout:
    """What rich writes to: whatever ``sys.stdout`` is at print time (click's test runner swaps
    it), with the blanks that end a line dropped (a table pads its last column to its width, and a
    copied block would carry them), before or inside the closing style codes."""

    _TRAILING = re.compile(r" +((?:\x1b\[[0-9;]*m)*)(?=\n)")

    def write(self, text: str) -> int:
        return sys.stdout.write(self._TRAILING.sub(r"\1", text))

    def flush(self) -> None:
        sys.stdout.flush()

    def isatty(self) -> bool:
        return sys.stdout.isatty()

    def fileno(self) -> int:
        return sys.stdout.fileno()

    @property
    def encoding(self) -> str:
        return getattr(sys.stdout, "encoding", None) or "utf-8"


_STDOUT = _Stdout()


def glyphs(console: Console) -> dict[str, str]:
    return _UNICODE if (console.encoding or "").lower().startswith("utf") else _ASCII


# --------------------------------------------------------------------------------------------
# Entry points (one per command shape).


def encoded(d: descgen.Decoded, *, defaults: dict[str, Any] | None = None, mask: dict[str, Any] | None = None) -> None:
    """The word an encoder produced, decoded back: everything :func:`decoded` shows."""
    console = new_console()
    _block(console, d, defaults=defaults or {}, mask=mask, verb="encoded")


def decoded(d: descgen.Decoded, *, mask: dict[str, Any] | None = None, not_checked: Any = None) -> None:
    """One decoded word (``not_checked``: the rules that did not run, shown with -v)."""
    console = new_console()
    _block(console, d, defaults={}, mask=mask, verb="decoded", not_checked=not_checked)


def decoded_many(word: int, label: str, results: dict[str, descgen.Decoded], consistent: list[str], full: list[str],
                 *, mask: dict[str, Any] | None = None, not_checked: dict[str, Any] | None = None,
                 show_all: bool = False) -> None:
    """One word tried under several layouts (every idesc kind, or smem and zcm): the short answer
    first, one line per reading worth showing (its key fields and findings), then the best reading
    in full; ``show_all`` shows every reading in full and the first error of every other one."""
    from descgen.words.identify import key_fields  # the key fields of a decoded word, as scan -v lists them

    console = new_console()
    g = glyphs(console)
    width = next(iter(results.values())).width
    what = "an instruction descriptor" if label == "kind" else (
        "a 64-bit word (smem, wgmma_smem, zcm, or CUTLASS's runtime idesc)" if "idesc" in results else
        "a 64-bit descriptor (smem, wgmma_smem or zcm)")
    names = [_name(label, n) for n in consistent]
    head = Text()
    head.append(hex_word(word, width), style="bold")
    head.append(f" as {what}: ")
    if consistent:
        head.append(f"{g['ok']} consistent with " + ", ".join(names), style="bold green")
    else:
        head.append(f"{g['error']} consistent with no {label}", style="bold red")
    console.print(head)
    if full:  # one line per reading: its name, its findings counted, its key fields (wrapped)
        indent = "  "
        lines, fixed = _columns([[Text(indent + _name(label, n), style="bold"), _count(results[n].findings)]
                                 for n in full], (False, False), indent)
        lines, _ = _wrapped(lines, [key_fields(results[n]) for n in full], [""] * len(full), fixed + len(indent),
                            console.width - fixed - len(indent))
        console.print(Text("\n").join(lines), soft_wrap=True)
    others = [n for n in results if n not in full]
    if others and (show_all or not full):
        from rich import box
        from rich.table import Table

        t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, title_justify="left",
                  title=f"{'Kinds' if label == 'kind' else 'Descriptors'} it is not consistent with (first error)")
        t.add_column(label)
        t.add_column("first error")
        t.add_column("errors", justify="right")
        for n in others:
            d = results[n]
            first = d.errors[0]
            t.add_row(_name(label, n), Text(f"{first.code}: {first.field} = {_show(first.value)}: {first.rule}",
                                            style="red"), str(len(d.errors)))
        console.print()
        console.print(t)
    elif others:
        console.print(Text(f"not consistent with {', '.join(_name(label, n) for n in others)} "
                           "(--all: the first error of each)", style="dim"))
    if not consistent and not full and label == "kind":
        console.print(Text("use --kind KIND to see the full decode under one kind", style="dim"))
    shown = full if show_all else full[:1]
    for n in shown:
        console.print()
        _block(console, results[n], defaults={}, mask=mask if n == "zcm" else None, verb="decoded",
               not_checked=not_checked.get(n) if not_checked is not None else None)
    if len(full) > len(shown):
        console.print()
        console.print(Text(f"the first reading in full; --all shows all {len(full)}", style="dim"))


def _count(findings: Any) -> Text:
    """``no findings``, ``1 warning``, ``2 errors, 1 warning``: a reading's findings, counted."""
    counts = [(sum(f.severity == s for f in findings), s) for s in ("error", "warning", "info")]
    words = [f"{n} {'note' if s == 'info' else s}{'s' * (n != 1)}" for n, s in counts if n]
    style = "red" if counts[0][0] else ("yellow" if counts[1][0] else "green")
    return Text(", ".join(words) or "no findings", style=style)


def _name(label: str, name: str) -> str:
    return f".kind::{name}" if label == "kind" else name


# --------------------------------------------------------------------------------------------
# One word.


def _block(console: Console, d: descgen.Decoded, *, defaults: dict[str, Any], mask: dict[str, Any] | None, verb: str,
           not_checked: Any = None) -> None:
    styles = field_styles(d)
    lay = _layout(d.layout)
    g = glyphs(console)
    lines, source = fields_table(d, styles, defaults, console.width, g)
    # Runs of lines go out as one Text each: a print costs more than the lines it draws.
    console.print(Text("\n").join([_title(d, f"{verb} with {lay.source.replace('PTX ISA 9.1 ', '')}"), *lines]),
                  soft_wrap=True)
    if source != "full":
        console.print(Text(f"source column {source} at {console.width} columns: --json or a wider terminal shows it",
                           style="dim"))
    derived = derived_line(d, defaults)
    if derived is not None:
        console.print(derived)
    console.print(findings_view(d, g))
    if not_checked is not None:
        console.print()
        console.print(not_checked_view(not_checked, g))
    console.print()
    console.print(Text("\n").join(bit_diagram(d, styles, console.width, g)), no_wrap=True, overflow="ellipsis")
    if mask:
        console.print()
        console.print(mask_view(mask))


def _title(d: descgen.Decoded, note: str) -> Text:
    """``idesc .kind::f16  0x08400010  <note>``: the heading of one word."""
    title = Text()
    title.append(d.descriptor, style="bold")
    if d.kind:
        title.append(f" .kind::{d.kind}", style="bold")
    title.append("  ")
    title.append(d.hex, style="bold")
    title.append(f"  {note}", style="dim")
    return title


def field_styles(d: descgen.Decoded) -> dict[str, str]:
    """A style per field: the palette for value fields, dim for reserved/constant ones, the
    severity colour for any field with a finding."""
    worst: dict[str, str] = {}
    order = {s: i for i, s in enumerate(("error", "warning", "info"))}
    for f in d.findings:
        if f.field not in worst or order[f.severity] < order[worst[f.field]]:
            worst[f.field] = f.severity
    styles: dict[str, str] = {}
    i = 0
    for field in reversed(d.fields):  # MSB first, like the diagram
        if field.name in worst:
            styles[field.name] = SEVERITY_STYLE[worst[field.name]]
        elif field.type in ("reserved", "constant"):
            styles[field.name] = "dim"
        else:
            styles[field.name] = PALETTE[i % len(PALETTE)]
            i += 1
    return styles


#: The least room the PTX source column gets: full citations from 40 columns (wrapped), their
#: first clause (``Table 40, bits 0-13``) from 20; below that the column is dropped.
_SOURCE_ROOM = {"full": 40, "abbreviated": 20}
#: The field table's columns: heading and whether it is right-justified.
_FIELD_COLUMNS = (("bits", True), ("field", False), ("raw", True), ("value", False), ("unit", False))
#: Between two columns (a rich SIMPLE_HEAD table's padding and divider).
_GAP = "   "


def fields_table(d: descgen.Decoded, styles: dict[str, str], defaults: dict[str, Any], width: int,
                 g: dict[str, str] = _UNICODE) -> tuple[list[Text], str]:
    """The field table as lines, one row per field (bits, field, raw, value, unit, PTX source),
    the headings over a rule, and how the source column fits ``width`` columns: ``full``
    (wrapped), ``abbreviated`` (each citation's first clause) or ``dropped``. The values are never
    cut: the source column gives way first."""
    head = [Text(name, style="bold") for name, _ in _FIELD_COLUMNS]
    rows = [[Text(f.bits), Text(f.name, style=styles[f.name]), Text(_raw(f)), _value(f, defaults),
             Text(unit_word(f.value, f.unit))] for f in d.fields]
    lines, fixed = _columns([head, *rows], tuple(right for _, right in _FIELD_COLUMNS), _GAP)
    room = width - fixed - len(_GAP)
    source = next((mode for mode, least in _SOURCE_ROOM.items() if room >= least), "dropped")
    used = fixed
    if source != "dropped":
        cites = ["source"] + [f.source if source == "full" else f.source.split(";")[0] for f in d.fields]
        cite_styles = ["bold"] + ["dim"] * len(d.fields)
        lines, used = _wrapped(lines, cites, cite_styles, fixed + len(_GAP), room)
    return [lines[0], Text(g["dash"] * used), *lines[1:]], source


def _columns(rows: list[list[Text]], right: tuple[bool, ...], gap: str) -> tuple[list[Text], int]:
    """Rows of cells as lines, each column as wide as its widest cell (right-justified where
    ``right`` says), ``gap`` between columns; and the columns' width.

    The tables a word's terminal view draws are laid out here, in rich text, rather than by
    rich's ``Table``: they are on the start-up path of every terminal command, and
    measuring and rendering a rich table costs several times what these lines cost, and
    importing ``rich.table`` as much again."""
    widths = [max(row[i].cell_len for row in rows) for i in range(len(right))]
    lines = []
    for row in rows:
        line = Text()
        for i, (cell, r, w) in enumerate(zip(row, right, widths)):
            pad = " " * (w - cell.cell_len)
            line.append((gap if i else "") + (pad if r else ""))
            line.append_text(cell)
            line.append("" if r else pad)
        line.rstrip()
        lines.append(line)
    return lines, sum(widths) + len(gap) * (len(widths) - 1)


def _wrapped(lines: list[Text], texts: list[str], styles: list[str], start: int, room: int) -> tuple[list[Text], int]:
    """A last column: ``texts[i]`` (in ``styles[i]``) after ``lines[i]``, at column ``start``,
    wrapped at words to ``room`` columns, its continuation lines indented to ``start``; and the
    width of the widest line."""
    out: list[Text] = []
    used = 0
    for line, text, style in zip(lines, texts, styles):
        pieces = textwrap.wrap(text, max(room, 1), break_on_hyphens=False) or [""]
        used = max(used, start + max(map(len, pieces)))
        line.append(" " * (start - line.cell_len))
        line.append(pieces[0], style=style)
        out += [line, *(Text(" " * start + piece, style=style) for piece in pieces[1:])]
    return out, used


def _raw(f: descgen.DecodedField) -> str:
    width = f.hi - f.lo + 1
    if width <= 4:
        return f"0b{f.raw:0{width}b}"
    return hex_bits(f.raw, width)


def _value(f: descgen.DecodedField, defaults: dict[str, Any]) -> Text:
    if f.value is None:
        return Text(f"? ({f.note})" if f.note else "?", style="bold red")
    text = Text(plain_value(f.value))
    if f.unit == "bytes" and isinstance(f.value, int) and f.value >= 1024:
        text.append(f" ({f.value:#x})", style="dim")
    if f.name in defaults:
        text.append(" (kind default)", style="dim")
    if f.note:
        text.append(f" ({f.note})", style="dim")
    return text


def derived_line(d: descgen.Decoded, defaults: dict[str, Any]) -> Text | None:
    if not d.derived and not defaults:
        return None
    text = Text()
    parts = []
    for name, value, unit in d.derived:
        shown = "K" if name == "k" else name
        suffix = (f" {unit_word(value, unit)}" if unit
                  else (" (implied by the kind; not in the word)" if name != "k" else ""))
        parts.append(f"{shown} = {plain_value(value)}{suffix}")
    if parts:
        text.append("derived: ", style="bold")
        text.append("; ".join(parts))
    applied = {k: v for k, v in defaults.items() if k != "k"}
    if applied:
        if parts:
            text.append("\n")
        text.append(f"kind defaults applied (.kind::{d.kind}): ", style="bold")
        text.append(", ".join(f"{k} = {plain_value(v)}" for k, v in applied.items()))
    return text


def findings_view(d: descgen.Decoded, g: dict[str, str]) -> Text | Group:
    return findings_text(d.findings, g)


def findings_text(findings: Any, g: dict[str, str], *, indent: int = 0,
                  empty: str = "no findings: every field follows its PTX rule") -> Text | Group:
    """Each finding as a block: severity, code, field = value, then rule, allowed and source
    (wrapped lines stay indented)."""
    if not findings:
        return Text(f"{' ' * indent}{g['ok']} {empty}", style="green")
    from rich.padding import Padding
    from rich.table import Table

    parts: list[Any] = []
    for f in findings:
        head = Text(f"{' ' * indent}{g.get(f.severity, '?')} {f.severity} {f.code}",
                    style=SEVERITY_STYLE.get(f.severity, ""))
        head.append(f"  {f.field} = {_show(f.value)}", style="bold")
        body = Table.grid(padding=(0, 1))
        body.add_column(no_wrap=True)
        body.add_column()
        body.add_row("rule:", Text(f.rule))
        body.add_row("allowed:", Text(str(f.allowed)))
        body.add_row("source:", Text(f.source, style="dim"))
        parts += [head, Padding(body, (0, 0, 0, indent + 4))]
    return Group(*parts)


def error_block(error: descgen.DescgenError) -> None:
    """A library error on a terminal, on stderr: what refused the value, then each finding as
    ``validate`` shows it (rule, allowed, source)."""
    console = Console(stderr=True, highlight=False)
    shown = [f for f in error.findings if f.severity == "error"] or list(error.findings)
    head = Text("Error: ", style="bold red")
    head.append(f"{error.context}: " if error.context else "")
    head.append(f"{len(shown)} problem{'s' * (len(shown) != 1)}", style="bold")
    console.print(head)
    console.print(findings_text(shown, glyphs(console), indent=2))


def _show(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1024:
        return f"{value} ({value:#x})"
    return plain_value(value)


# --------------------------------------------------------------------------------------------
# The bit diagram.


def bit_diagram(d: descgen.Decoded, styles: dict[str, str], max_width: int = 100,
                g: dict[str, str] = _UNICODE) -> list[Text]:
    """The word's bits MSB -> LSB, fields separated by a space and coloured, each field labelled
    by a leader line (bits, name, value). 64-bit words are drawn as two 32-bit rows.

    The digits are the word's ``bitstring.Bits`` (:attr:`descgen.Decoded.bits`), sliced per
    field: PTX bits ``lo..hi`` are ``bits[width - 1 - hi : width - lo]`` (bitstring indexes from
    the MSB, PTX numbers from the LSB)."""
    halves = [(63, 32), (31, 0)] if d.width == 64 else [(d.width - 1, 0)]
    by_name = {f.field: f for f in d.findings}
    bits, top = d.bits, d.width - 1
    lines: list[Text] = []
    for hi, lo in halves:
        segs = []
        for f in reversed(d.fields):
            s_hi, s_lo = min(f.hi, hi), max(f.lo, lo)
            if s_hi < s_lo:
                continue
            segs.append((f, s_hi, s_lo, bits[top - s_hi: top + 1 - s_lo].bin))
        lines += _half(segs, styles, by_name, max_width, g)
        lines.append(Text(""))
    return lines[:-1]


def _half(segs: list[tuple[Any, int, int, str]], styles: dict[str, str], findings: dict[str, Any], max_width: int,
          g: dict[str, str]) -> list[Text]:
    indent = 2
    spans = []
    row = Text(" " * indent)
    pos = indent
    for i, (f, _, _, txt) in enumerate(segs):
        if i:
            row.append(" ")
            pos += 1
        row.append(txt, style=styles[f.name])
        spans.append((pos, pos + len(txt) - 1))
        pos += len(txt)
    end = pos

    # Bit numbers: the half's MSB and LSB at the ends, then each field's MSB where it fits.
    ruler = [" "] * (end + 1)
    first, last_lsb = str(segs[0][1]), str(segs[-1][2])
    marks = [(spans[0][0], first), (end - len(last_lsb), last_lsb)]
    marks += [(start, str(s_hi)) for (start, _), (_, s_hi, _, _) in zip(spans[1:], segs[1:])]
    for col, label in marks:
        lo_col, hi_col = max(col - 1, 0), min(col + len(label) + 1, len(ruler))
        if all(c == " " for c in ruler[lo_col:hi_col]):
            ruler[col: col + len(label)] = list(label)
    header = Text("".join(ruler).rstrip(), style="dim")

    anchors = [(a + b) // 2 for a, b in spans]
    label_col = end + 2
    room = max_width - label_col - 1
    labels = []
    for f, s_hi, s_lo, _ in segs:  # the longest label that fits the console: the value is dropped last
        forms = _labels(f, s_hi, s_lo)
        labels.append(next((label for label in forms if len(label) <= room), forms[-1]))

    out = [header, row]
    for i in reversed(range(len(segs))):  # the LSB field's leader first: no crossings
        line = Text()
        col = 0
        for j in range(i):
            line.append(" " * (anchors[j] - col))
            line.append(g["pipe"], style=styles[segs[j][0].name])
            col = anchors[j] + 1
        f = segs[i][0]
        style = styles[f.name]
        line.append(" " * (anchors[i] - col))
        line.append(g["corner"] + g["dash"] * (label_col - anchors[i] - 1) + " ", style=style)
        line.append(labels[i], style=style)
        finding = findings.get(f.name)
        if finding is not None:
            line.append(f"  {g.get(finding.severity, '?')} {finding.code}",
                        style=SEVERITY_STYLE.get(finding.severity, ""))
        out.append(line)
    return out


def _labels(f: descgen.DecodedField, s_hi: int, s_lo: int) -> list[str]:
    """A field's diagram label, longest first: bits, name and value with its unit and hex
    (``0-13  start_address = 32768 bytes (0x8000)``), then without the hex, then without the
    unit, then the bits and name alone."""
    bits = str(s_lo) if s_hi == s_lo else f"{s_lo}-{s_hi}"
    part = "" if (s_hi, s_lo) == (f.hi, f.lo) else " (part)"
    name = f"{bits:>5}  {f.name}{part}"
    if f.value is None:
        return [f"{name} = ? raw {f.raw}", name]
    value = f"{name} = {plain_value(f.value)}"
    unit = f" {unit_word(f.value, f.unit)}" if f.unit else ""
    forms = [value + unit, value, name]
    if f.unit == "bytes" and isinstance(f.value, int) and f.value >= 1024:
        forms.insert(0, f"{value}{unit} ({f.value:#x})")
    return forms


# --------------------------------------------------------------------------------------------
# The zero-column mask.


def mask_view(info: dict[str, Any]) -> Group:
    from rich import box
    from rich.table import Table

    count = len(info["submasks"])
    head = Text()
    head.append(f"zero-column mask for M = {info['m']}, N = {info['n']}: ", style="bold")
    head.append(info["mask"], style="bold")
    head.append(f"  ({count} sub-mask{'s' if count > 1 else ''} of {info['submask_bits']} bits; "
                "bit j = column j of B, 1 = column zeroed)", style="dim")
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    t.add_column("sub-mask", justify="right")
    t.add_column("B columns", justify="right", no_wrap=True)
    t.add_column("binary (MSB left)", overflow="fold")
    t.add_column("hex", no_wrap=True)
    for s in info["submasks"]:
        lo, hi = s["columns"]
        t.add_row(f"mask{s['index']}", f"{lo}-{hi}", s["binary"], s["hex"])
    return Group(head, t)


# --------------------------------------------------------------------------------------------
# Validation: descgen validate, check, explain, rules.

_WORD_TITLE = {"idesc": "instruction descriptor", "smem": "shared memory descriptor",
               "zcm": "zero-column mask descriptor", "a_desc": "A's shared memory descriptor",
               "b_desc": "B's shared memory descriptor", "instruction": "the shape, types and immediates"}


def not_checked_view(items: Any, g: dict[str, str], elsewhere: dict[str, str] | None = None) -> Table | Text | Group:
    """The rules that did not run (or ran against every case) for want of context.

    ``elsewhere``: context names the command has no option for -> where to give them instead
    (marked ``*`` with a footnote)."""
    from rich import box
    from rich.table import Table

    if not items:
        return Text(f"{g['ok']} every rule was checked: no context missing", style="green")
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, title_justify="left",
              title=f"Not checked: context missing ({len(items)}; descgen explain CODE for the source)")
    t.add_column("code", no_wrap=True)
    t.add_column("needs", no_wrap=True)
    t.add_column("rule")
    elsewhere = elsewhere or {}
    notes: dict[str, str] = {}
    for n in items:
        needs = []
        for m in n.missing:
            needs.append("--" + m.replace("_", "-") + ("*" if m in elsewhere else ""))
            if m in elsewhere:
                notes[m] = elsewhere[m]
        t.add_row(n.code, ", ".join(needs), Text(n.rule))
    if not notes:
        return t
    return Group(t, *(Text(f"* --{m.replace('_', '-')}: {text}", style="dim") for m, text in notes.items()))


def _context_text(context: dict[str, Any]) -> str:
    given = {k: v for k, v in context.items() if v is not None}
    if not given:
        return "context: none given"
    return "context: " + ", ".join(f"{k} = {_ctx_value(k, v)}" for k, v in given.items())


def _ctx_value(name: str, value: Any) -> str:
    if name in ("pattern_start", "alloc_base") and isinstance(value, int):
        return f"{value:#x}"
    return plain_value(value)


def _summary(findings: Any, not_checked: Any, verbose: bool, g: dict[str, str]) -> Text:
    errors = sum(f.severity == "error" for f in findings)
    warnings = sum(f.severity == "warning" for f in findings)
    text = Text()
    if errors:
        text.append(f"{g['error']} {errors} error{'s' * (errors != 1)}", style="bold red")
        text.append(f", {warnings} warning{'s' * (warnings != 1)}")
    elif warnings:
        text.append(f"{g['ok']} no errors", style="bold green")
        text.append(f" ({warnings} warning{'s' * (warnings != 1)})", style="yellow")
    else:
        text.append(f"{g['ok']} clean: no findings", style="bold green")
    if not_checked and not verbose:
        count = len(not_checked)
        text.append(f"; {count} rule{'s' * (count != 1)} not checked for missing context (-v lists them)", style="dim")
    return text


def validated(report: descgen.Report, role: str, context: dict[str, Any], *, verbose: bool) -> None:
    """``descgen validate``: the word, its findings, and with ``verbose`` the rules not checked."""
    console = new_console()
    g = glyphs(console)
    d = report.decoded[role]
    console.print(_title(d, _context_text(context)))
    console.print(findings_text(report.findings, g, empty="no findings: the word follows every rule checked"))
    if verbose:
        console.print()
        console.print(not_checked_view(report.not_checked, g))
    console.print(_summary(report.findings, report.not_checked, verbose, g))


def checked(report: descgen.Report, instruction: str, context: dict[str, Any] | None, groups: dict[str, list[Any]],
            *, verbose: bool, elsewhere: dict[str, str] | None = None) -> None:
    """``descgen check`` (``tcgen05.mma .kind::f16``, its ``context``) and ``check-wgmma``
    (``wgmma.mma_async.m64n128k16.f32.f16.f16``, no context options): per word of the
    instruction, its findings, then the verdict."""
    console = new_console()
    g = glyphs(console)
    title = Text()
    title.append(instruction, style="bold")
    if context is not None:
        title.append(f"  {_context_text(context)}", style="dim")
    console.print(title)
    for role, findings in groups.items():
        d = report.decoded.get(role)
        head = Text()
        head.append(f"{role:<7}", style="bold")
        if d is None and role == "a_desc":
            head.append("A in tensor memory (--a-tmem): no descriptor", style="dim")
            console.print(head)
            continue
        if d is None:
            head.append("  " + _WORD_TITLE.get(role, role), style="dim")
        else:
            head.append(f"{d.hex}  ", style="bold")
            head.append(_WORD_TITLE.get(role, role), style="dim")
        console.print(head)
        console.print(findings_text(findings, g, indent=2, empty="no findings"))
    if verbose:
        console.print()
        console.print(not_checked_view(report.not_checked, g, elsewhere))
    console.print(_summary(report.findings, report.not_checked, verbose, g))


def explained(info: dict[str, Any]) -> None:
    """``descgen explain CODE``."""
    from rich.table import Table

    console = new_console()
    g = glyphs(console)
    head = Text()
    head.append(info["code"], style="bold")
    head.append(f"  {info['severity']}", style=SEVERITY_STYLE.get(info["severity"], ""))
    origin = {"catalog": "catalog rule (tables/rules.toml)",
              "field": "the field's own check, generated from its layout table",
              "layout": "the shared-memory tile model (descgen layout, smem --tile; [[layout]] of tables/codes.toml)",
              "usage": "a usage error: the call itself is wrong (raised, exit 2; "
                       "never found in a word)"}[info["origin"]]
    head.append(f"  applies to {info['applies']}; {origin}", style="dim")
    console.print(head)
    t = Table(box=None, show_header=False, pad_edge=False)
    t.add_column(style="bold", no_wrap=True)
    t.add_column()
    t.add_row("rule", Text(info["rule"]))
    t.add_row("source", Text(info["source"], style="dim"))
    t.add_row("fields", ", ".join(info["fields"]))
    if info["origin"] == "catalog":
        t.add_row("kinds", ", ".join(info.get("kinds") or ()) or "every kind")
        needs, uses = (", ".join("--" + n.replace("_", "-") for n in info[key]) for key in ("needs", "uses"))
        t.add_row("needs", f"{needs}: without it the rule is not checked (-v lists it)" if needs else
                  "no context: always checked" + (f" (without {uses}, against every case of them)" if uses else ""))
        if uses:
            t.add_row("uses", f"{uses}: narrow the rule when given")
    for where in info.get("layouts", ()):
        domains = "; ".join(f"{k}: {v}" if k else v for k, v in where["domains"].items())
        t.add_row("where", Text(f"{where['source']} ({where['layout']}), bits {where['bits']}: {domains}"))
    if "unreachable" in info:
        t.add_row("examples", Text(f"none: no input produces it ({info['unreachable']})"))
    console.print(t)
    for which in ("legal", "illegal"):
        ex = info.get("examples", {}).get(which)
        if ex is None:
            continue
        console.print()
        console.print(Text(f"{which.capitalize()} example", style="bold"))
        prompt = ">>>" if ex.get("language") == "python" else "$"  # a Python call (import descgen), or a command line
        console.print(Text(f"  {prompt} {ex['command']}"), soft_wrap=True)  # one line, to copy whole
        if ex.get("raised"):
            console.print(Text(f"  {g['error']} raises {ex['raised']}", style=SEVERITY_STYLE.get("error", "")))
        elif not ex["findings"]:
            console.print(Text(f"  {g['ok']} clean: no findings", style="green"))
        for f in ex["findings"]:
            style = SEVERITY_STYLE.get(f["severity"], "")
            line = Text(f"  {g.get(f['severity'], '?')} {f['severity']} {f['code']}", style=style)
            line.append(f"  {f['field']} = {plain_value(f['value'])}", style="bold")
            console.print(line)


def rules_table(rows: list[dict[str, Any]], *, width: int = 160) -> None:
    """``descgen rules``: every code, catalog rules first, then the generated field checks. Two
    columns, so that it reads on an 80-column terminal: the code with its severity, what it
    applies to and the context it needs / uses; the rule (shortened) with its source."""
    from rich import box
    from rich.table import Table

    console = new_console()
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, show_lines=True)
    t.add_column("code", no_wrap=True)
    t.add_column("rule / source")
    for r in rows:
        cell = Text(r["code"], style="bold")
        cell.append("\n")
        cell.append(r["severity"], style=SEVERITY_STYLE.get(r["severity"], ""))
        cell.append(f", {r['applies']}" + {"field": " (field check)", "layout": " (tile model)",
                                              "usage": " (usage error)"}.get(r["origin"], ""),
                    style="dim")
        if r["needs"]:
            cell.append("\nneeds " + ", ".join(r["needs"]), style="dim")
        if r["uses"]:
            cell.append("\nuses " + ", ".join(r["uses"]), style="dim")
        rule = Text(_shorten(r["rule"], width))
        rule.append("\n" + r["source"], style="dim")
        t.add_row(cell, rule)
    count = {o: sum(r["origin"] == o for r in rows) for o in ("catalog", "field", "layout", "usage")}
    console.print(Text(f"{len(rows)} codes: {count['catalog']} catalog rules, {count['field']} field checks, "
                       f"{count['layout']} tile model codes, {count['usage']} usage errors (descgen explain CODE for "
                       "one)", style="bold"))
    console.print(t)


def _shorten(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    cut = text[: width - 1].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "…"
