"""``descgen diff A B``: what differs, field by field, between two words of the same kind.

Registered on the group of :mod:`descgen.cli.app`; imports click and descgen only (rich when a
table is drawn). Exit status like ``diff``/``cmp``: 0 equal, 1 different, 2 usage error.
"""

from __future__ import annotations

from typing import Any

import click

import descgen

from .options import output_options
from .output import EXIT_RULE, Output, plain_value, unit_word
from .params import WORD, KindType, LazyChoice, descriptor_names

__all__ = ["diff", "plain_diff"]


def _value(value: Any, unit: str) -> str:
    return plain_value(value) + (f" {unit_word(value, unit)}" if unit and value is not None else "")


def plain_diff(d: Any, show_all: bool) -> list[str]:
    """Greppable lines: a header of ``key=value`` lines, then ``changed.FIELD=A -> B UNIT (bits
    LO-HI: RAWA -> RAWB)`` per differing field (``same.FIELD=...`` too with --all), then
    ``only_a=FINDING`` / ``only_b=FINDING``."""
    lines = [f"descriptor={d.descriptor}"]
    if d.kind:
        lines.append(f"kind={d.kind}")
    lines += [f"a={d.a.hex}", f"b={d.b.hex}", f"equal={plain_value(d.equal)}",
              f"changed={','.join(f.name for f in d.changed)}"]
    for side, r in (("a", d.runtime_a), ("b", d.runtime_b)):
        if r is not None:
            lines.append(f"{side}.runtime={r.note}")
    for f in d.fields:
        width = max(1, (int(f.bits.split("-")[-1]) - int(f.bits.split("-")[0]) + 4) // 4)
        where = f"bits {f.bits}" if "-" in f.bits else f"bit {f.bits}"
        if not f.equal:
            lines.append(f"changed.{f.name}={_value(f.a_value, f.unit)} -> {_value(f.b_value, f.unit)} "
                         f"({where}: {f.a_raw:#0{width + 2}x} -> {f.b_raw:#0{width + 2}x})")
        elif show_all:
            lines.append(f"same.{f.name}={_value(f.a_value, f.unit)} ({where}: {f.a_raw:#0{width + 2}x})")
    lines += [f"only_a={f}" for f in d.only_a] + [f"only_b={f}" for f in d.only_b]
    return lines


@click.command("diff", short_help="Show field by field what differs between two words of the same kind.")
@click.argument("a", type=WORD)
@click.argument("b", type=WORD)
@click.option("--as", "as_", type=LazyChoice(descriptor_names),
              help="Descriptor type of both words. Default: as descgen decode chooses.")
@click.option("--kind", type=KindType(), help="MMA kind for instruction descriptors (implies --as idesc). "
              "Default: the first kind both words are consistent with.")
@click.option("--all", "show_all", is_flag=True, help="Show the fields that are equal too.")
@output_options
def diff(out: Output, a: int, b: int, as_: descgen.Descriptor | None, kind: descgen.Kind | None,
         show_all: bool) -> None:
    """Compare words A and B field by field: for each field that differs, its bits, the raw bits
    and the logical value (with its unit) in each word; then the findings one decode has and the
    other has not.

    \b
    Which layout (as descgen decode chooses; both words use the same one):
      --as idesc [--kind K]   instruction descriptors (default kind: the first both words are
                              consistent with); a 64-bit word is read as CUTLASS's runtime
                              form, its upper 32 bits (E31)
      --as smem | zcm | taddr
      (no --as)               two words below 2**32: idesc; wider words: smem or zcm (or
                              CUTLASS's runtime idesc when both low halves are 0), whichever
                              decodes both with the fewest findings (E32)

    \b
    Piped output (--plain): descriptor=, kind=, a=, b=, equal=, changed=FIELD,...; then
      changed.FIELD=A UNIT -> B UNIT (bits LO-HI: RAWA -> RAWB)   each differing field
      same.FIELD=VALUE UNIT (bits LO-HI: RAW)                     with --all
      only_a=FINDING / only_b=FINDING                        findings in one word only

    \b
    Exit status: 0 the words are equal, 1 they differ, 2 usage error.

    \b
      descgen diff 0x08400010 0x08200010     -> changed.n=256 columns -> 128 columns (...)
      descgen diff 0x4000404000010040 0x4000404000010042 --as smem
    """
    out.input = {"a": a, "b": b, "as": as_, "kind": kind, "all": show_all}
    d = descgen.diff(a, b, descriptor=as_, kind=kind)
    out.input.update(a=f"{a:#x}", b=f"{b:#x}")
    if out.json:
        out.emit_json(result=d.as_dict())
    elif out.table:
        _table(d, show_all)
    else:
        out.lines(plain_diff(d, show_all))
    if not d.equal:
        click.get_current_context().exit(EXIT_RULE)


def _table(d: Any, show_all: bool) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(highlight=False)
    head = Text()
    head.append(f"{d.descriptor}" + (f" .kind::{d.kind}" if d.kind else ""), style="bold")
    head.append(f"  A {d.a.hex}  B {d.b.hex}  ", style="bold")
    head.append("equal" if d.equal else f"{len(d.changed)} field(s) differ",
                style="bold green" if d.equal else "bold yellow")
    console.print(head)
    if d.chosen != "given":
        console.print(Text(f"layout: {d.chosen}", style="dim"))
    for side, r in (("A", d.runtime_a), ("B", d.runtime_b)):
        if r is not None:
            console.print(Text(f"{side}: {r.note}", style="dim"))
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for name, justify in (("bits", "right"), ("field", "left"), ("A raw", "right"), ("A value", "left"),
                          ("B raw", "right"), ("B value", "left"), ("unit", "left")):
        t.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for f in d.fields:
        if f.equal and not show_all:
            continue
        style = "dim" if f.equal else "bold"
        t.add_row(f.bits, Text(f.name, style=style), hex(f.a_raw), plain_value(f.a_value), hex(f.b_raw),
                  Text(plain_value(f.b_value), style="" if f.equal else "bold yellow"), f.unit)
    if t.rows:
        console.print(t)
    for side, found in (("A", d.only_a), ("B", d.only_b)):
        for f in found:
            console.print(Text(f"only in {side}: {f}", style="red" if f.severity == "error" else "yellow"))
