"""``descgen port WORD --to TARGET``: a shared memory descriptor moved between Hopper's wgmma
(sm_90a) and Blackwell's tcgen05 family, with the fields that change and why.

Registered on the group of :mod:`descgen.cli.app`; imports click and descgen only (rich when a
table is drawn).
"""

from __future__ import annotations

from typing import Any

import click

import descgen

from .options import output_options
from .output import Output, plain_value
from .params import WORD, ArchType

__all__ = ["port", "plain_port"]


def plain_port(p: Any) -> list[str]:
    """Greppable lines: ``word=``, ``from=``, ``to=``, ``flipped=`` (the bits that differ), then
    ``change.FIELD=A -> B (bits X -> Y): why`` per change, then the target's findings."""
    lines = [f"word={p.hex}", f"from={p.from_arch} {p.source.descriptor} {p.source.hex}",
             f"to={p.to_arch} {p.target.descriptor} {p.hex}", f"flipped={p.flipped:#018x}"]
    for c in p.changes:
        bits = f"bits {c.bits_from or '-'} -> {c.bits_to or '-'}"
        lines.append(f"change.{c.field}={plain_value(c.value_from)} -> {plain_value(c.value_to)} ({bits}): {c.why}")
    lines += [f"finding={f}" for f in p.findings]
    return lines


@click.command("port", short_help="Port a shared memory descriptor between wgmma (sm_90a) and tcgen05 (sm_100a).")
@click.argument("word", type=WORD)
@click.option("--to", "to", required=True, type=ArchType(wgmma=True), help="The target to port to: sm_90a (WORD is "
              "a tcgen05 descriptor, written as wgmma's) or a tcgen05 target such as sm_100a (WORD is a wgmma "
              "descriptor).")
@output_options(code=True)
def port(out: Output, word: int, to: str) -> None:
    """Port the 64-bit shared memory descriptor WORD to the family TARGET's MMA reads.

    The start address, LBO, SBO and base offset keep their bits; the swizzle keeps its mode and
    its bits (its code differs: wgmma 1 = 128B in bits 62-63, tcgen05 2 = 128B in bits 61-63);
    tcgen05's fixed bits 46-48 (0b001) are set or dropped. A WORD already in TARGET's family
    comes back unchanged with a note (exit 0). A word below 2**32 (an instruction descriptor, a
    tensor memory address) is refused (exit 2), and so are a WORD valid in neither family and a
    mode the other family lacks (tcgen05's 128B_base32B, its absolute LBO mode) (exit 1). See
    docs/spec-errata.md E44.

    \b
    Piped output (--plain): word=, from=, to=, flipped=, then
      change.FIELD=A -> B (bits X -> Y): why   per field that changes or moves

    \b
      descgen port 0x4000004000010040 --to sm_100a   -> 0x4000404000010040
      descgen port 0x4000404000010040 --to sm_90a    -> 0x4000004000010040
    """
    out.input = {"word": f"{word:#018x}", "to": to}
    ported = descgen.port_smem(word, to=to)  # type: ignore[arg-type]  # (a target: ArchType checked it)
    if ported.note and not out.json:
        click.echo(f"note: {ported.note}", err=True)
    if out.code:
        out.write_code(ported.target)
    elif out.json:
        out.emit_json(result=ported.as_dict())
    elif out.table:
        from rich.console import Console
        from rich.table import Table

        t = Table(title=f"{ported.source.hex} ({ported.from_arch}) -> {ported.hex} ({ported.to_arch})")
        for name in ("field", "bits", "value", "why"):
            t.add_column(name, overflow="fold")
        for c in ported.changes:
            t.add_row(c.field, f"{c.bits_from or '-'} -> {c.bits_to or '-'}",
                      f"{plain_value(c.value_from)} -> {plain_value(c.value_to)}", c.why)
        Console().print(t)
        for f in ported.findings:
            click.echo(f"{f.severity}: {f}")
    else:
        out.lines(plain_port(ported))
